/* The search strategies over a list of configs, and their offline replay. Neighbourhoods
 * (configs that differ from one another in exactly one parameter) are found through one
 * grouping per parameter: configs equal in every other parameter share a group key, and
 * sorting by that key puts each group side by side, so a neighbourhood costs its own size
 * rather than a scan of the space. */
#include "fdt_search.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const double fdt_replay_within[FDT_REPLAY_NWITHIN] = {0.01, 0.03, 0.10};

static const char *const kind_names[] = {"exhaustive", "random", "model"};

const char *fdt_search_kind_name(fdt_search_kind k)
{
    return (unsigned)k < 3 ? kind_names[k] : "?";
}

int fdt_search_kind_parse(const char *s, fdt_search_kind *k, fdt_err *e)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, kind_names[i])) {
            *k = (fdt_search_kind)i;
            return 0;
        }
    return fdt_err_set(e, "strategy: '%s' is not one of exhaustive, random, model", s);
}

/* ------------------------------------------------------------------ state */

enum { FRESH, ISSUED, DONE };

typedef struct gentry {
    uint64_t key;
    size_t idx;
} gentry;

struct fdt_search {
    fdt_search_kind kind;
    size_t n;
    unsigned char *state;
    double *ms;          /* reported: > 0 ok, <= 0 failed */
    double *pred;        /* model only */
    size_t *order;       /* proposal order: recipe order, permutation or ranking */
    size_t pos;          /* next position in order */
    size_t issued;
    size_t ntop;         /* model: measured straight from the ranking before anything else */
    struct seed_value *seeds; /* model: every value of every parameter, in ranking order */
    size_t nseed, seed_pos;
    int seed_pass;       /* passes over the seeds: a value tried only by failures is tried
                            again, up to SEED_PASSES times in all (next_seed) */
    struct resid *res;   /* model: per parameter and value, log(measured / predicted) */
    unsigned char *vidx; /* model: value index of config i, parameter j at [i * nparams + j] */
    double rsum;
    int rcnt;
    int nparams;
    gentry **group;      /* per parameter: entries sorted by key */
    size_t **where;      /* per parameter: position of config i in group */
};

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_gentry(const void *a, const void *b)
{
    const gentry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static const double *sort_pred; /* qsort has no context; set only inside rank_by() */

static int cmp_pred(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (sort_pred[i] != sort_pred[j])
        return sort_pred[i] < sort_pred[j] ? -1 : 1;
    return i < j ? -1 : i > j; /* stable: recipe order breaks ties */
}

static void rank_by(size_t *order, size_t n, const double *pred)
{
    sort_pred = pred;
    qsort(order, n, sizeof *order, cmp_pred);
    sort_pred = NULL;
}

/* Sorts config indices by their values with the parameters in `skip` left out. */
static void group_by(fdt_search *s, const fdt_config *space, const fdt_param_info *pi, size_t np,
                     const unsigned char *skip, gentry *g)
{
    for (size_t i = 0; i < s->n; i++) {
        int v[64] = {0};
        for (size_t q = 0; q < np && q < 64; q++)
            if (!skip[q])
                v[q] = *(const int *)((const char *)&space[i] + pi[q].offset);
        g[i] = (gentry){fdt_hash64(v, np * sizeof *v, FDT_HASH_SEED), i};
    }
    qsort(g, s->n, sizeof *g, cmp_gentry);
}

/* A parameter that never differs alone between two configs of the space is a function of the
 * others (launch bounds derived from the block, a constant): it is left out of every
 * neighbourhood key, otherwise changing `by` would never have a neighbour because `lb`
 * changes with it. */
static int build_groups(fdt_search *s, const fdt_config *space)
{
    size_t np;
    const fdt_param_info *pi = fdt_config_params(&np);
    if (np > 64)
        np = 64;
    s->nparams = (int)np;
    s->group = calloc(np, sizeof *s->group);
    s->where = calloc(np, sizeof *s->where);
    unsigned char dep[64] = {0}, skip[64];
    if (!s->group || !s->where)
        return -1;
    for (size_t j = 0; j < np; j++) {
        s->group[j] = malloc(s->n * sizeof **s->group);
        s->where[j] = malloc(s->n * sizeof **s->where);
        if (!s->group[j] || !s->where[j])
            return -1;
        memset(skip, 0, sizeof skip);
        skip[j] = 1;
        group_by(s, space, pi, np, skip, s->group[j]);
        dep[j] = 1;
        for (size_t k = 1; k < s->n && dep[j]; k++)
            if (s->group[j][k].key == s->group[j][k - 1].key)
                dep[j] = 0;
    }
    for (size_t j = 0; j < np; j++) {
        memcpy(skip, dep, sizeof skip);
        skip[j] = 1;
        if (!dep[j])
            group_by(s, space, pi, np, skip, s->group[j]);
        else /* no neighbours along j: every config its own group */
            for (size_t k = 0; k < s->n; k++)
                s->group[j][k] = (gentry){k, k};
        for (size_t k = 0; k < s->n; k++)
            s->where[j][s->group[j][k].idx] = k;
    }
    return 0;
}

/* The model strategy's memory of how wrong the model is: the log of measured over predicted
 * time, averaged per value of every parameter. Added up (an additive model in log space,
 * shrunk towards zero while a value has few measurements), it corrects the predictions of
 * configs not measured yet, so that a structural choice the model misjudges (a shared tile,
 * the window length, small blocks) is learnt from the first few measurements instead of
 * steering the whole search. */
#define MAXV 64

typedef struct resid {
    double sum[MAXV];
    int cnt[MAXV];
    int ok[MAXV];   /* of cnt, measured (not failed) */
    int pend[MAXV]; /* proposed, not reported yet */
    int val[MAXV], nval;
} resid;

/* Parameter j's value q (index into resid.val), to be measured early. */
typedef struct seed_value {
    int j, q;
} seed_value;

#define SEED_PASSES 3

static int value_index(resid *r, int v)
{
    for (int q = 0; q < r->nval; q++)
        if (r->val[q] == v)
            return q;
    if (r->nval == MAXV)
        return MAXV - 1; /* more distinct values than tracked: share the last slot */
    r->val[r->nval] = v;
    return r->nval++;
}

/* Contrast for the correction: it can only learn about a parameter value once something
 * with that value was measured, so the best-ranked config of every value is measured early
 * (the seeds, in the ranking order of those configs). A value whose config failed (pruned
 * for spills or code size, which other parameters may cause) is tried again with its
 * next-ranked config (next_seed): otherwise the failure alone would rank the whole value
 * FAIL_FACTOR times slower. */
static int pick_seeds(fdt_search *s)
{
    size_t cap = (size_t)s->nparams * MAXV;
    s->seeds = malloc(cap * sizeof *s->seeds);
    unsigned char *seen = calloc(cap, 1); /* [j * MAXV + q] */
    if (!s->seeds || !seen) {
        free(seen);
        return -1;
    }
    for (size_t k = 0; k < s->n; k++) {
        size_t i = s->order[k];
        for (int j = 0; j < s->nparams; j++) {
            int q = s->vidx[i * s->nparams + j];
            if (!seen[(size_t)j * MAXV + q]) {
                seen[(size_t)j * MAXV + q] = 1;
                s->seeds[s->nseed++] = (seed_value){j, q};
            }
        }
    }
    free(seen);
    return 0;
}

static double corrected(const fdt_search *s, size_t i);

/* The fresh config whose parameter j has value q that ranks best, by prediction in the first
 * pass (nothing is measured yet) and by corrected prediction after it: a retry then avoids
 * what made the failed seeds fail, as far as the correction has learnt it (their other
 * values, e.g. a tile whose code outgrew the instruction cache), instead of taking their
 * twins. n when there is none. */
static size_t fresh_with(const fdt_search *s, int j, int q)
{
    size_t best = s->n;
    double bc = 0;
    for (size_t k = 0; k < s->n; k++) {
        size_t i = s->order[k];
        if (s->state[i] != FRESH || s->vidx[i * s->nparams + j] != q)
            continue;
        if (s->seed_pass == 0)
            return i;
        double c = corrected(s, i);
        if (best == s->n || c < bc) {
            best = i;
            bc = c;
        }
    }
    return best;
}

/* The next seed's config, or n when no seed is left: a pass proposes one config for each
 * value not yet measured (the first pass every value; later ones, up to SEED_PASSES, the
 * values whose configs all failed so far). */
static size_t next_seed(fdt_search *s)
{
    for (;;) {
        if (s->seed_pos == s->nseed) {
            if (++s->seed_pass >= SEED_PASSES)
                return s->n;
            s->seed_pos = 0;
        }
        const seed_value *sd = &s->seeds[s->seed_pos++];
        const resid *r = &s->res[sd->j];
        /* measured, or on its way: the correction knows the value or will (the first pass
         * skips a value tried at all, as its best-ranked config has been) */
        if (r->ok[sd->q] > 0 || r->pend[sd->q] > 0 || (s->seed_pass == 0 && r->cnt[sd->q] > 0))
            continue;
        size_t i = fresh_with(s, sd->j, sd->q);
        if (i < s->n)
            return i;
    }
}

static int init_correction(fdt_search *s, const fdt_config *space)
{
    size_t np;
    const fdt_param_info *pi = fdt_config_params(&np);
    s->res = calloc((size_t)s->nparams, sizeof *s->res);
    s->vidx = malloc(s->n * (size_t)s->nparams);
    if (!s->res || !s->vidx)
        return -1;
    for (size_t i = 0; i < s->n; i++)
        for (int j = 0; j < s->nparams; j++)
            s->vidx[i * s->nparams + j] = (unsigned char)value_index(
                &s->res[j], *(const int *)((const char *)&space[i] + pi[j].offset));
    return 0;
}

/* A config that failed (pruned for spills, refused at launch) says its region is worse than
 * predicted: it counts as a measurement FAIL_FACTOR times slower than the prediction. */
#define FAIL_FACTOR 4.0

static void learn(fdt_search *s, size_t i, double ms)
{
    double r = ms > 0 ? log(ms / s->pred[i]) : log(FAIL_FACTOR);
    s->rsum += r;
    s->rcnt++;
    for (int j = 0; j < s->nparams; j++) {
        int q = s->vidx[i * s->nparams + j];
        s->res[j].sum[q] += r;
        s->res[j].cnt[q]++;
        s->res[j].ok[q] += ms > 0;
    }
}

static double corrected(const fdt_search *s, size_t i)
{
    if (s->rcnt == 0)
        return s->pred[i];
    double mean = s->rsum / s->rcnt, c = mean;
    for (int j = 0; j < s->nparams; j++) {
        int q = s->vidx[i * s->nparams + j], n = s->res[j].cnt[q];
        if (n)
            c += (s->res[j].sum[q] / n - mean) * n / (n + 2.0);
    }
    return s->pred[i] * exp(c);
}

int fdt_search_new_predicted(fdt_search_kind kind, const fdt_config *space, size_t n,
                             const double *predicted, uint64_t seed, fdt_search **out, fdt_err *e)
{
    *out = NULL;
    if (n == 0)
        return fdt_err_set(e, "search: the space is empty");
    if (kind == FDT_SEARCH_MODEL && !predicted)
        return fdt_err_set(e, "search: the model strategy needs predictions");
    fdt_search *s = calloc(1, sizeof *s);
    if (!s)
        return fdt_err_set(e, "search: out of memory");
    s->kind = kind;
    s->n = n;
    s->state = calloc(n, 1);
    s->ms = calloc(n, sizeof *s->ms);
    s->order = malloc(n * sizeof *s->order);
    if (!s->state || !s->ms || !s->order)
        goto oom;
    for (size_t i = 0; i < n; i++)
        s->order[i] = i;
    if (kind == FDT_SEARCH_RANDOM) {
        uint64_t x = seed;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)(splitmix(&x) % (i + 1));
            size_t t = s->order[i];
            s->order[i] = s->order[j];
            s->order[j] = t;
        }
    } else if (kind == FDT_SEARCH_MODEL) {
        s->pred = malloc(n * sizeof *s->pred);
        if (!s->pred)
            goto oom;
        memcpy(s->pred, predicted, n * sizeof *s->pred);
        rank_by(s->order, n, s->pred);
        s->ntop = n / 32 < 4 ? 4 : n / 32 > 16 ? 16 : n / 32;
        if (build_groups(s, space) || init_correction(s, space) || pick_seeds(s))
            goto oom;
    }
    *out = s;
    return 0;
oom:
    fdt_search_free(s);
    return fdt_err_set(e, "search: out of memory");
}

int fdt_search_new(fdt_search_kind kind, const fdt_config *space, size_t n, const fdt_problem *p,
                   const fdt_device *dev, uint64_t seed, fdt_search **s, fdt_err *e)
{
    double *pred = NULL;
    if (kind == FDT_SEARCH_MODEL) {
        pred = malloc((n ? n : 1) * sizeof *pred);
        if (!pred)
            return fdt_err_set(e, "search: out of memory");
        for (size_t i = 0; i < n; i++)
            pred[i] = fdt_model_time(p, &space[i], dev, NULL, NULL);
    }
    int rc = fdt_search_new_predicted(kind, space, n, pred, seed, s, e);
    free(pred);
    return rc;
}

void fdt_search_free(fdt_search *s)
{
    if (!s)
        return;
    for (int j = 0; s->group && j < s->nparams; j++)
        free(s->group[j]);
    for (int j = 0; s->where && j < s->nparams; j++)
        free(s->where[j]);
    free(s->group);
    free(s->where);
    free(s->state);
    free(s->ms);
    free(s->pred);
    free(s->order);
    free(s->res);
    free(s->vidx);
    free(s->seeds);
    free(s);
}

/* The invariants of a search (SQLite's assert_pager_state() in spirit): the proposal
 * cursor inside the space; every proposal left a config that is no longer fresh; and for the
 * model strategy, per parameter, as many configs on their way (pend) as are issued and not
 * reported, and as many measurements as it has learnt from. The O(n) sums run only in
 * builds that check invariants (FDTUNE_ASSERTS), at each proposal and report. */
static void assert_search_state(const fdt_search *s)
{
#ifdef FDTUNE_ASSERTS
    FDT_ASSERT((unsigned)s->kind <= FDT_SEARCH_MODEL && s->pos <= s->n && s->issued <= s->n,
               "a known strategy, its cursor in the space");
    size_t issued = 0, used = 0;
    for (size_t i = 0; i < s->n; i++) {
        FDT_ASSERT(s->state[i] <= DONE, "a config is fresh, issued or done");
        issued += s->state[i] == ISSUED;
        used += s->state[i] != FRESH;
    }
    FDT_ASSERT(used >= s->issued, "each proposal took a fresh config");
    if (s->kind != FDT_SEARCH_MODEL)
        return;
    FDT_ASSERT(s->seed_pos <= s->nseed && s->seed_pass >= 0 && s->seed_pass <= SEED_PASSES,
               "the seeds' cursor in its passes");
    for (int j = 0; j < s->nparams; j++) {
        const resid *r = &s->res[j];
        long pend = 0, cnt = 0;
        FDT_ASSERT(r->nval >= 1 && r->nval <= MAXV, "a parameter's values tracked");
        for (int q = 0; q < r->nval; q++) {
            FDT_ASSERT(r->pend[q] >= 0 && r->ok[q] >= 0 && r->ok[q] <= r->cnt[q],
                       "a value's counts: measured ones among those learnt from");
            pend += r->pend[q];
            cnt += r->cnt[q];
        }
        FDT_ASSERT(pend == (long)issued, "configs on their way: issued, not yet reported");
        FDT_ASSERT(cnt == s->rcnt, "each parameter learnt from every report");
    }
#else
    (void)s;
#endif
}

/* ------------------------------------------------------------------ proposing */

static int next_in_order(fdt_search *s, size_t *idx)
{
    while (s->pos < s->n && s->state[s->order[s->pos]] != FRESH)
        s->pos++;
    if (s->pos == s->n)
        return 1;
    *idx = s->order[s->pos++];
    return 0;
}

/* The fresh neighbour of config c with the best prediction, or n. */
static size_t best_neighbour(const fdt_search *s, size_t c)
{
    size_t best = s->n;
    for (int j = 0; j < s->nparams; j++) {
        const gentry *g = s->group[j];
        size_t at = s->where[j][c];
        for (size_t k = at; k-- > 0 && g[k].key == g[at].key;)
            if (s->state[g[k].idx] == FRESH &&
                (best == s->n || corrected(s, g[k].idx) < corrected(s, best)))
                best = g[k].idx;
        for (size_t k = at + 1; k < s->n && g[k].key == g[at].key; k++)
            if (s->state[g[k].idx] == FRESH &&
                (best == s->n || corrected(s, g[k].idx) < corrected(s, best)))
                best = g[k].idx;
    }
    return best;
}

#define NEIGHBOURHOODS 3 /* best measured configs whose neighbourhoods are searched */

static int next_model(fdt_search *s, size_t *idx)
{
    /* the top of the ranking first; then steps into the neighbourhoods of the best measured
     * configs alternate with the best of the whole space by corrected prediction */
    if (s->issued < s->ntop || s->rcnt == 0)
        return next_in_order(s, idx);
    if (s->issued % 3 == 0 && s->seed_pass < SEED_PASSES) {
        size_t i = next_seed(s);
        if (i < s->n) {
            *idx = i;
            return 0;
        }
    }
    if (s->issued % 3 == 1) {
        size_t b = s->n;
        double bc = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (s->state[i] != FRESH)
                continue;
            double c = corrected(s, i);
            if (b == s->n || c < bc) {
                b = i;
                bc = c;
            }
        }
        if (b < s->n) {
            *idx = b;
            return 0;
        }
    }
    size_t top[NEIGHBOURHOODS];
    int ntop = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->state[i] != DONE || s->ms[i] <= 0)
            continue;
        int at = ntop < NEIGHBOURHOODS ? ntop++ : NEIGHBOURHOODS;
        if (at == NEIGHBOURHOODS && s->ms[i] >= s->ms[top[NEIGHBOURHOODS - 1]])
            continue;
        if (at == NEIGHBOURHOODS)
            at = NEIGHBOURHOODS - 1;
        while (at > 0 && s->ms[top[at - 1]] > s->ms[i]) {
            top[at] = top[at - 1];
            at--;
        }
        top[at] = i;
    }
    for (int t = 0; t < ntop; t++) {
        size_t nb = best_neighbour(s, top[t]);
        if (nb < s->n) {
            *idx = nb;
            return 0;
        }
    }
    return next_in_order(s, idx);
}

int fdt_search_next(fdt_search *s, size_t *idx)
{
    assert_search_state(s);
    int rc = s->kind == FDT_SEARCH_MODEL ? next_model(s, idx) : next_in_order(s, idx);
    FDT_ASSERT(rc != 0 || (*idx < s->n && s->state[*idx] != ISSUED && s->state[*idx] != DONE),
               "a strategy proposes each config of the space once");
    if (rc == 0) {
        s->state[*idx] = ISSUED;
        s->issued++;
        if (s->kind == FDT_SEARCH_MODEL)
            for (int j = 0; j < s->nparams; j++)
                s->res[j].pend[s->vidx[*idx * s->nparams + j]]++;
    }
    return rc;
}

void fdt_search_report(fdt_search *s, size_t idx, int ok, double ms)
{
    if (idx >= s->n) /* documented: a report out of the space is ignored */
        return;
    int was_issued = s->state[idx] == ISSUED;
    s->state[idx] = DONE;
    s->ms[idx] = ok && ms > 0 ? ms : -1;
    if (s->kind == FDT_SEARCH_MODEL) {
        if (was_issued)
            for (int j = 0; j < s->nparams; j++)
                s->res[j].pend[s->vidx[idx * s->nparams + j]]--;
        learn(s, idx, s->ms[idx]);
    }
    assert_search_state(s);
}

int fdt_search_best(const fdt_search *s, size_t *idx, double *ms)
{
    size_t b = s->n;
    for (size_t i = 0; i < s->n; i++)
        if (s->state[i] == DONE && s->ms[i] > 0 && (b == s->n || s->ms[i] < s->ms[b]))
            b = i;
    if (b == s->n)
        return -1;
    *idx = b;
    *ms = s->ms[b];
    return 0;
}

const size_t *fdt_search_ranking(const fdt_search *s)
{
    return s->kind == FDT_SEARCH_MODEL ? s->order : NULL;
}

double fdt_search_predicted(const fdt_search *s, size_t idx)
{
    return s->pred && idx < s->n ? s->pred[idx] : 0;
}

/* ------------------------------------------------------------------ replay */

int fdt_search_replay(fdt_search_kind kind, const fdt_config *space, size_t n,
                      const double *time_ms, const double *predicted, const fdt_problem *p,
                      const fdt_device *dev, uint64_t seed, fdt_replay *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->best_idx = n;
    for (size_t i = 0; i < n; i++)
        if (time_ms[i] > 0 && (out->best_idx == n || time_ms[i] < time_ms[out->best_idx]))
            out->best_idx = i;
    if (out->best_idx == n)
        return fdt_err_set(e, "replay: no recorded config succeeded");
    out->best_ms = time_ms[out->best_idx];
    fdt_search *s;
    int rc = predicted || kind != FDT_SEARCH_MODEL
                 ? fdt_search_new_predicted(kind, space, n, predicted, seed, &s, e)
                 : fdt_search_new(kind, space, n, p, dev, seed, &s, e);
    if (rc)
        return -1;
    size_t evals = 0, idx;
    int open = FDT_REPLAY_NWITHIN + 1;
    while (open > 0 && fdt_search_next(s, &idx) == 0) {
        evals++;
        double t = time_ms[idx];
        fdt_search_report(s, idx, t > 0, t);
        if (t <= 0)
            continue;
        for (int k = 0; k < FDT_REPLAY_NWITHIN; k++)
            if (!out->evals_within[k] && t <= out->best_ms * (1 + fdt_replay_within[k])) {
                out->evals_within[k] = evals;
                open--;
            }
        if (idx == out->best_idx) {
            out->evals_to_best = evals;
            open--;
        }
    }
    fdt_search_free(s);
    return 0;
}
