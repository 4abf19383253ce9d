/* Tuning without a GPU (fdt_offline.h): the dry run (the plan, the recipe's space and the
 * model's ranking of it) and the replay of the strategies against a database's record. */
#include "fdt_offline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ dry run */

typedef struct space {
    fdt_config *v;
    size_t n, cap;
} space;

static int push(void *ctx, const fdt_config *c, uint64_t index)
{
    (void)index;
    space *s = ctx;
    fdt_config *v = fdt_grow(s->v, &s->cap, s->n, sizeof *v, 256);
    if (!v)
        return 1;
    s->v = v;
    s->v[s->n++] = *c;
    return 0;
}

/* The index in fdt_config_params of the one parameter a and b differ in; -1 when they are
 * equal or differ in more. */
static int one_difference(const fdt_config *a, const fdt_config *b)
{
    size_t np;
    const fdt_param_info *pi = fdt_config_params(&np);
    int at = -1;
    for (size_t k = 0; k < np; k++) {
        int va = *(const int *)((const char *)a + pi[k].offset);
        int vb = *(const int *)((const char *)b + pi[k].offset);
        if (va != vb && at >= 0)
            return -1;
        if (va != vb)
            at = (int)k;
    }
    return at;
}

/* Whether the model saw two configs alike: every term of the prediction equal. */
static int same_terms(const fdt_model_terms *a, const fdt_model_terms *b)
{
    return a->dram_bytes == b->dram_bytes && a->l2_bytes == b->l2_bytes &&
           a->t_dram_ms == b->t_dram_ms && a->t_l2_ms == b->t_l2_ms &&
           a->t_l1_ms == b->t_l1_ms && a->llc_hit == b->llc_hit && a->regs == b->regs &&
           a->regs_estimated == b->regs_estimated && a->threads_per_cu == b->threads_per_cu &&
           a->occupancy == b->occupancy && a->latency_eff == b->latency_eff &&
           a->tail_eff == b->tail_eff && a->t_wave_ms == b->t_wave_ms &&
           a->t_halo_ms == b->t_halo_ms &&
           a->time_ms == b->time_ms;
}

/* Whether config x (the model's terms tx) collapses into one of the kept rows of out (their
 * configs kept[]): every term of the prediction equal and one parameter different. Counted
 * in that row and in out. */
static int collapse(const fdt_config *x, const fdt_model_terms *tx,
                    const fdt_config *const *kept, size_t nkept, fdt_dry_run *out)
{
    for (size_t j = 0; j < nkept; j++) {
        int k;
        if (!same_terms(&out->top[j].terms, tx) || (k = one_difference(x, kept[j])) < 0)
            continue;
        out->top[j].merged++;
        out->collapsed++;
        out->collapsed_params |= 1u << k;
        return 1;
    }
    return 0;
}

/* Predicts every config of sp and keeps the best `top` of the model's ranking in out, with
 * the configs that differ from a row above only in what the model ignored collapsed. */
static fdt_status rank(const fdt_problem *p, const fdt_device *dev, const space *sp, int top,
                       fdt_dry_run *out, fdt_err *e)
{
    size_t n = sp->n;
    double *pred = malloc((n ? n : 1) * sizeof *pred);
    fdt_model_terms *terms = malloc((n ? n : 1) * sizeof *terms);
    size_t shown = n < (size_t)top ? n : (size_t)top;
    out->top = calloc(shown ? shown : 1, sizeof *out->top);
    fdt_search *s = NULL;
    fdt_status st = FDT_STATUS_OK;
    if (!pred || !terms || !out->top) {
        fdt_err_set(e, "out of memory");
        st = FDT_STATUS_ERROR;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        pred[i] = fdt_model_time(p, &sp->v[i], dev, NULL, &terms[i]);
    if (n && fdt_search_new_predicted(FDT_SEARCH_MODEL, sp->v, n, pred, 1, &s, e)) {
        st = FDT_STATUS_ERROR;
        goto done;
    }
    const size_t *ranking = s ? fdt_search_ranking(s) : NULL;
    double eff = fdt_effective_bytes(p);
    const fdt_config **kept = calloc(shown ? shown : 1, sizeof *kept);
    if (!kept) {
        fdt_err_set(e, "out of memory");
        st = FDT_STATUS_ERROR;
        goto done;
    }
    size_t nkept = 0;
    for (size_t i = 0; i < n && nkept < shown; i++) {
        size_t x = ranking[i];
        if (collapse(&sp->v[x], &terms[x], kept, nkept, out))
            continue;
        fdt_dry_run_row *row = &out->top[nkept];
        fdt_config_format(&sp->v[x], row->config, sizeof row->config);
        row->pred_ms = pred[x];
        row->pred_gbs = eff / (pred[x] * 1e-3) / 1e9;
        row->terms = terms[x];
        kept[nkept++] = &sp->v[x];
    }
    free(kept);
    out->n = n;
    out->ntop = nkept;
done:
    fdt_search_free(s);
    free(pred);
    free(terms);
    return st;
}

fdt_status fdt_tune_dry_run(const fdt_tune_request *rq, fdt_op op, fdt_recipe *r,
                            const fdt_device *dev, int top, fdt_dry_run *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    out->p = rq->p;
    out->p.op = op;
    fdt_tune_plan(rq, r, &out->strategy, &out->budget);
    space sp = {0};
    fdt_status st = FDT_STATUS_OK;
    if (fdt_recipe_enumerate(r, &out->p, dev, push, &sp, &out->stats, e)) {
        st = FDT_STATUS_USAGE;
    } else if (out->stats.stopped) {
        fdt_err_set(e, "out of memory listing the space");
        st = FDT_STATUS_ERROR;
    } else {
        st = rank(&out->p, dev, &sp, top, out, e);
    }
    free(sp.v);
    return st;
}

void fdt_dry_run_free(fdt_dry_run *d)
{
    free(d->top);
    d->top = NULL;
    d->ntop = 0;
}

/* ------------------------------------------------------------------ replay */

typedef struct recorded {
    fdt_config *v;
    char (*key)[256];
    double *ms; /* best full (else probe) time of ok evaluations; -1 failed only */
    int *full;
    size_t n, cap;
    char device[128];
} recorded;

static void recorded_free(recorded *r)
{
    free(r->v);
    free(r->key);
    free(r->ms);
    free(r->full);
}

static int record_row(void *ctx, const fdt_db_row *row)
{
    recorded *r = ctx;
    size_t i;
    for (i = 0; i < r->n; i++)
        if (!strcmp(r->key[i], row->ev.config))
            break;
    if (i == r->n) {
        if (r->n == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 256;
            fdt_config *v = realloc(r->v, cap * sizeof *v);
            if (v)
                r->v = v;
            char(*k)[256] = realloc(r->key, cap * sizeof *k);
            if (k)
                r->key = k;
            double *m = realloc(r->ms, cap * sizeof *m);
            if (m)
                r->ms = m;
            int *f = realloc(r->full, cap * sizeof *f);
            if (f)
                r->full = f;
            if (!v || !k || !m || !f)
                return 1;
            r->cap = cap;
        }
        fdt_err e;
        if (fdt_config_parse(row->ev.config, &r->v[i], &e))
            return 0; /* a config of a newer generator: not replayable here */
        snprintf(r->key[i], sizeof r->key[i], "%s", row->ev.config);
        r->ms[i] = -1;
        r->full[i] = 0;
        r->n++;
    }
    if (row->ev.status != FDT_DB_OK || !(row->ev.time_ms > 0))
        return 0;
    int full = row->ev.stage == FDT_DB_FULL;
    /* a full sample beats a probe; among equals, the faster */
    if (r->ms[i] <= 0 || (full && !r->full[i]) ||
        (full == r->full[i] && row->ev.time_ms < r->ms[i])) {
        r->ms[i] = row->ev.time_ms;
        r->full[i] = full;
    }
    return 0;
}

typedef struct dev_pick {
    fdt_db *db;
    int64_t problem_id;
    recorded *rec;
    fdt_err *e;
    int failed;
} dev_pick;

static int pick_device(void *ctx, const fdt_device *d)
{
    dev_pick *pk = ctx;
    recorded tmp = {0};
    if (fdt_db_evals(pk->db, d->id, 0, pk->problem_id, record_row, &tmp, pk->e)) {
        pk->failed = 1;
        return 1;
    }
    if (tmp.n > pk->rec->n) { /* the device with the most recorded configs */
        recorded_free(pk->rec);
        *pk->rec = tmp;
        snprintf(pk->rec->device, sizeof pk->rec->device, "%s", d->name);
    } else {
        recorded_free(&tmp);
    }
    return 0;
}

/* The record of problem p: the device with the most recorded configs among those of arch
 * (NULL: any). */
static int load_record(fdt_db *db, const fdt_problem *p, const char *arch, recorded *rec,
                       fdt_err *e)
{
    int64_t pid = 0;
    if (fdt_db_problem_find(db, p, &pid, e))
        return -1;
    dev_pick pick = {db, pid, rec, e, 0};
    if (pid && fdt_db_devices(db, arch, pick_device, &pick, e))
        return -1;
    return pick.failed ? -1 : 0;
}

fdt_status fdt_tune_replay(fdt_db *db, const fdt_tune_request *rq, fdt_op op,
                           const fdt_device *dev, fdt_replay_report *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    out->p = rq->p;
    out->p.op = op;
    char pk[128];
    fdt_problem_format(&out->p, pk, sizeof pk);
    recorded rec = {0};
    const char *arch = dev->arch[0] ? dev->arch : NULL;
    fdt_status st = FDT_STATUS_OK;
    if (load_record(db, &out->p, arch, &rec, e)) {
        st = FDT_STATUS_ERROR;
        goto out;
    }
    if (rec.n == 0) {
        fdt_err_set(e, "replay: %s: the database has no evaluations for %s on %s",
                    fdt_db_path(db), pk, dev->name);
        st = FDT_STATUS_FAILED;
        goto out;
    }
    static const fdt_search_kind kinds[FDT_REPLAY_KINDS] = {
        FDT_SEARCH_EXHAUSTIVE, FDT_SEARCH_RANDOM, FDT_SEARCH_MODEL};
    for (int k = 0; k < FDT_REPLAY_KINDS; k++) {
        if (rq->have_strategy && kinds[k] != rq->strategy)
            continue;
        if (fdt_search_replay(kinds[k], rec.v, rec.n, rec.ms, NULL, &out->p, dev, rq->seed,
                              &out->res[out->n], e)) {
            fdt_err_wrap(e, "replay: %s", pk);
            st = FDT_STATUS_FAILED;
            goto out;
        }
        out->kind[out->n++] = kinds[k];
    }
    snprintf(out->device, sizeof out->device, "%s", rec.device);
    out->configs = rec.n;
    if (out->n > 0) {
        const fdt_replay *x0 = &out->res[0];
        snprintf(out->best_config, sizeof out->best_config, "%s", rec.key[x0->best_idx]);
        out->best_ms = x0->best_ms;
        out->best_gbs = fdt_effective_bytes(&out->p) / (x0->best_ms * 1e-3) / 1e9;
    }
out:
    recorded_free(&rec);
    return st;
}
