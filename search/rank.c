/* The model's ranking of a recipe's space (fdt_search.h): the space enumerated and pruned by
 * the recipe on one device and problem, every survivor predicted by the analytic model, the
 * best `top` of the ranking kept, with configs the model saw alike collapsed into the row
 * above them. `fdtune --dry-run` shows it (tuner/offline.c); its first row is the model's
 * answer for a device model nothing was measured on (export/model.c). */
#include "fdt_search.h"

#include <stdlib.h>
#include <string.h>

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
           a->t_l1_ms == b->t_l1_ms && a->t_copy_ms == b->t_copy_ms &&
           a->llc_hit == b->llc_hit && a->regs == b->regs &&
           a->regs_estimated == b->regs_estimated && a->threads_per_cu == b->threads_per_cu &&
           a->occupancy == b->occupancy && a->latency_eff == b->latency_eff &&
           a->tail_eff == b->tail_eff && a->t_wave_ms == b->t_wave_ms &&
           a->t_halo_ms == b->t_halo_ms && a->t_llc_ms == b->t_llc_ms &&
           a->t_core_ms == b->t_core_ms &&
           a->threads == b->threads && a->boxes == b->boxes && a->time_ms == b->time_ms;
}

/* Whether config x (the model's terms tx) collapses into one of the kept rows of out (their
 * configs kept[]): every term of the prediction equal and one parameter different. Counted
 * in that row and in out. */
static int collapse(const fdt_config *x, const fdt_model_terms *tx,
                    const fdt_config *const *kept, size_t nkept, fdt_model_ranking *out)
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

/* Predicts every config of sp and keeps the best `top` of the model's ranking in out. */
static int rank(const fdt_problem *p, const fdt_device *dev, const space *sp, int top,
                fdt_model_ranking *out, fdt_err *e)
{
    size_t n = sp->n;
    double *pred = malloc((n ? n : 1) * sizeof *pred);
    fdt_model_terms *terms = malloc((n ? n : 1) * sizeof *terms);
    size_t shown = n < (size_t)top ? n : (size_t)top;
    out->top = calloc(shown ? shown : 1, sizeof *out->top);
    const fdt_config **kept = calloc(shown ? shown : 1, sizeof *kept);
    fdt_search *s = NULL;
    int rc = -1;
    if (!pred || !terms || !out->top || !kept) {
        fdt_err_set(e, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        pred[i] = fdt_model_time(p, &sp->v[i], dev, NULL, &terms[i]);
    if (n && fdt_search_new_predicted(FDT_SEARCH_MODEL, sp->v, n, pred, 1, &s, e))
        goto done;
    const size_t *ranking = s ? fdt_search_ranking(s) : NULL;
    double eff = fdt_effective_bytes(p);
    size_t nkept = 0;
    for (size_t i = 0; i < n && nkept < shown; i++) {
        size_t x = ranking[i];
        if (collapse(&sp->v[x], &terms[x], kept, nkept, out))
            continue;
        fdt_ranked *row = &out->top[nkept];
        fdt_config_format(&sp->v[x], row->config, sizeof row->config);
        row->cfg = sp->v[x];
        row->pred_ms = pred[x];
        row->pred_gbs = eff / (pred[x] * 1e-3) / 1e9;
        row->terms = terms[x];
        kept[nkept++] = &sp->v[x];
    }
    out->n = n;
    out->ntop = nkept;
    rc = 0;
done:
    free(kept);
    fdt_search_free(s);
    free(pred);
    free(terms);
    return rc;
}

int fdt_model_rank(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev, int top,
                   fdt_model_ranking *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    space sp = {0};
    int rc;
    if (fdt_recipe_enumerate(r, p, dev, push, &sp, &out->stats, e))
        rc = FDT_RANK_RECIPE;
    else if (out->stats.stopped)
        rc = fdt_err_set(e, "out of memory listing the space");
    else
        rc = rank(p, dev, &sp, top, out, e);
    free(sp.v);
    if (rc)
        fdt_model_ranking_free(out);
    return rc;
}

void fdt_model_ranking_free(fdt_model_ranking *k)
{
    free(k->top);
    k->top = NULL;
    k->ntop = 0;
}
