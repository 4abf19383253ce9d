/* Tuning without a GPU (fdt_offline.h): the dry run (the plan, and the recipe's space with
 * the model's ranking of it, fdt_model_rank) and the replay of the strategies against a
 * database's record. */
#include "fdt_offline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ dry run */

fdt_status fdt_tune_dry_run(const fdt_tune_request *rq, fdt_op op, fdt_recipe *r,
                            const fdt_device *dev, int top, fdt_dry_run *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    fdt_tune_request_problem(rq, op, &out->p);
    fdt_tune_plan(rq, r, &out->strategy, &out->budget);
    fdt_model_ranking k;
    int rc = fdt_model_rank(r, &out->p, dev, top, &k, e);
    out->stats = k.stats;
    if (rc)
        return rc == FDT_RANK_RECIPE ? FDT_STATUS_USAGE : FDT_STATUS_ERROR;
    out->n = k.n;
    out->ntop = k.ntop;
    out->top = k.top;
    out->collapsed = k.collapsed;
    out->collapsed_params = k.collapsed_params;
    return FDT_STATUS_OK;
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
    fdt_decide_timing *t; /* that evaluation's timing (NaN median: failed only) */
    int64_t *run;         /* its run (0: failed only) */
    size_t n, cap;
    char device[128];
} recorded;

static void recorded_free(recorded *r)
{
    free(r->v);
    free(r->key);
    free(r->ms);
    free(r->full);
    free(r->t);
    free(r->run);
}

/* Room for one more config in r. 0, or -1 when memory runs out. */
static int recorded_grow(recorded *r)
{
    if (r->n < r->cap)
        return 0;
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
    fdt_decide_timing *t = realloc(r->t, cap * sizeof *t);
    if (t)
        r->t = t;
    int64_t *run = realloc(r->run, cap * sizeof *run);
    if (run)
        r->run = run;
    if (!v || !k || !m || !f || !t || !run)
        return -1;
    r->cap = cap;
    return 0;
}

static int record_row(void *ctx, const fdt_db_row *row)
{
    recorded *r = ctx;
    size_t i;
    for (i = 0; i < r->n; i++)
        if (!strcmp(r->key[i], row->ev.config))
            break;
    if (i == r->n) {
        if (recorded_grow(r))
            return 1;
        fdt_err e;
        if (fdt_config_parse(row->ev.config, &r->v[i], &e))
            return 0; /* a config of a newer generator: not replayable here */
        snprintf(r->key[i], sizeof r->key[i], "%s", row->ev.config);
        r->ms[i] = -1;
        r->full[i] = 0;
        r->t[i] = (fdt_decide_timing){NAN, NAN, NAN, NAN, NAN};
        r->run[i] = 0;
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
        fdt_decide_timing_of(&row->ev, &r->t[i]);
        r->run[i] = row->ev.run_id;
    }
    return 0;
}

/* The search's limits as every recorded config reports them (fdt_stop_limit_of): the floor
 * over the recorded configs, with the copy bandwidth each config's run measured. */
static int record_limits(fdt_db *db, const recorded *rec, const fdt_problem *p,
                         const fdt_device *dev, fdt_stop_limit *lim, fdt_err *e)
{
    int64_t run = 0;
    double copy = 0;
    fdt_stop_floor floor;
    fdt_stop_floor_of(p, rec->v, rec->n, dev, &floor);
    for (size_t i = 0; i < rec->n; i++) {
        if (rec->run[i] > 0 && rec->run[i] != run) {
            fdt_db_run r;
            if (fdt_db_run_get(db, rec->run[i], &r, e))
                return -1;
            run = rec->run[i];
            copy = isfinite(r.copy_gbs) ? r.copy_gbs : 0;
        }
        fdt_stop_limit_of(p, &floor, rec->run[i] > 0 ? copy : 0, &lim[i]);
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
    fdt_tune_request_problem(rq, op, &out->p);
    char pk[128];
    fdt_problem_format(&out->p, pk, sizeof pk);
    recorded rec = {0};
    fdt_stop_limit *lim = NULL;
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
    lim = malloc(rec.n * sizeof *lim);
    if (!lim) {
        fdt_err_set(e, "replay: out of memory");
        st = FDT_STATUS_ERROR;
        goto out;
    }
    if (record_limits(db, &rec, &out->p, dev, lim, e)) {
        st = FDT_STATUS_ERROR;
        goto out;
    }
    static const fdt_search_kind kinds[FDT_REPLAY_KINDS] = {
        FDT_SEARCH_EXHAUSTIVE, FDT_SEARCH_RANDOM, FDT_SEARCH_MODEL};
    for (int k = 0; k < FDT_REPLAY_KINDS; k++) {
        if (rq->have_strategy && kinds[k] != rq->strategy)
            continue;
        if (fdt_search_replay(kinds[k], rec.v, rec.n, rec.ms, NULL, &out->p, dev, rq->seed,
                              &out->res[out->n], e) ||
            fdt_stop_replay(kinds[k], rec.v, rec.n, rec.t, lim, NULL, &out->p, dev, rq->seed,
                            &rq->stop_rules, rq->budget, rq->parallel, &out->stop[out->n],
                            e)) {
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
    free(lim);
    recorded_free(&rec);
    return st;
}
