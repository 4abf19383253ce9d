/* The stopping rules of a search (fdt_stop.h): the limit of a search from the run's copy
 * bandwidth and the model's floor over its space, the state a search reports each evaluation
 * to, the line that says why it stopped, and the replay of a strategy with the rules against
 * a record.
 * Whether a result is a gain is the tuner's one noise rule, fdt_decide_beats. */
#include "fdt_stop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fdt_stop_opts_default(fdt_stop_opts *o)
{
    o->all = 0;
    o->within = FDT_STOP_WITHIN_DEFAULT;
    o->after = -1;
}

int fdt_stop_after_default(fdt_search_kind k)
{
    return k == FDT_SEARCH_MODEL    ? FDT_STOP_AFTER_MODEL
           : k == FDT_SEARCH_RANDOM ? FDT_STOP_AFTER_RANDOM
                                    : FDT_STOP_AFTER_EXHAUSTIVE;
}

static double unit_ms(const fdt_model_terms *t)
{
    switch (t->bound) {
    case FDT_BOUND_L2: return t->t_l2_ms;
    case FDT_BOUND_L1: return fmax(t->t_l1_ms, t->t_copy_ms); /* or the copy engine */
    case FDT_BOUND_SHARED: return t->t_shared_ms;
    case FDT_BOUND_ISSUE: return t->t_issue_ms;
    case FDT_BOUND_FP: return t->t_fp_ms;
    default: return 0; /* DRAM, latency: the copy binds */
    }
}

void fdt_stop_floor_of(const fdt_problem *p, const fdt_config *space, size_t n,
                       const fdt_device *dev, fdt_stop_floor *f)
{
    f->chip_ms = 0;
    f->bound = FDT_BOUND_DRAM;
    for (size_t i = 0; i < n; i++) {
        fdt_model_terms t;
        fdt_model_time(p, &space[i], dev, NULL, &t);
        double ms = unit_ms(&t);
        if (ms <= 0) { /* bound by DRAM or latency: the copy is the problem's limit */
            f->chip_ms = 0;
            f->bound = FDT_BOUND_DRAM;
            return;
        }
        if (f->chip_ms <= 0 || ms < f->chip_ms) {
            f->chip_ms = ms;
            f->bound = t.bound;
        }
    }
}

void fdt_stop_limit_of(const fdt_problem *p, const fdt_stop_floor *f, double copy_gbs,
                       fdt_stop_limit *l)
{
    l->copy_ms = copy_gbs > 0 ? fdt_effective_bytes(p) / (copy_gbs * 1e9) * 1e3 : 0;
    l->chip_ms = f->chip_ms > l->copy_ms ? f->chip_ms : 0;
    l->bound = l->chip_ms > 0 ? f->bound : FDT_BOUND_DRAM;
    FDT_ASSERT(l->chip_ms == 0 || l->bound != FDT_BOUND_DRAM, "an on-chip floor names its unit");
}

double fdt_stop_binding(const fdt_stop_limit *l, double ms, char *name, size_t n)
{
    if (l->chip_ms > 0 && ms >= l->chip_ms) {
        snprintf(name, n, "the model's %s bound", fdt_bound_name(l->bound));
        return l->chip_ms;
    }
    snprintf(name, n, "%s", l->copy_ms > 0 ? "copy" : "");
    return l->copy_ms;
}

void fdt_stop_init(fdt_stop *s, const fdt_stop_opts *o, fdt_search_kind k, int planned)
{
    memset(s, 0, sizeof *s);
    s->o = *o;
    if (s->o.after < 0)
        s->o.after = fdt_stop_after_default(k);
    s->best.median_ms = s->best.q1_ms = s->best.q3_ms = NAN;
    s->best.min_ms = s->best.max_ms = NAN;
    s->fastest = s->best;
    s->planned = planned;
}

/* The invariants of a search's stopping state (SQLite's assert_pager_state() in spirit):
 * counts within what was reported, a fastest never slower than the best, a stopped state
 * that stays stopped for a reason the enum has. */
static void assert_stop_state(const fdt_stop *s)
{
    FDT_ASSERT(s->evals >= 0 && s->since_gain >= 0 && s->since_gain <= s->evals,
               "evaluations since the last gain are among those reported");
    FDT_ASSERT(s->why >= FDT_STOP_NOT && s->why <= FDT_STOP_INTERRUPTED,
               "a stopping reason the rules know");
    FDT_ASSERT(!(s->fastest.median_ms > s->best.median_ms),
               "the fastest result is never slower than the best");
    FDT_ASSERT(s->o.all || s->o.after != 0 || s->o.within >= 0, "rules as parsed");
    (void)s;
}

/* t beats the best beyond noise: it becomes the best (1). A lower median than any so far
 * becomes the fastest, with its limits, whether or not it is beyond noise: the headroom is
 * that of the fastest result, as the summary's best is. */
static int gain(fdt_stop *s, const fdt_decide_timing *t, const fdt_stop_limit *l)
{
    if (fdt_decide_ok(t) && !(s->fastest.median_ms <= t->median_ms)) {
        s->fastest = *t;
        s->limit = *l;
    }
    if (!fdt_decide_beats(&s->best, t))
        return 0;
    s->best = *t;
    return 1;
}

void fdt_stop_resumed(fdt_stop *s, const fdt_decide_timing *t, const fdt_stop_limit *l)
{
    gain(s, t, l);
}

int fdt_stop_report(fdt_stop *s, const fdt_decide_timing *t, const fdt_stop_limit *l)
{
    assert_stop_state(s);
    if (s->why != FDT_STOP_NOT)
        return 1;
    s->evals++;
    if (gain(s, t, l))
        s->since_gain = 0;
    else
        s->since_gain++;
    if (s->o.all)
        return 0;
    double h = fdt_stop_headroom(s);
    if (s->since_gain == 0 && s->o.within > 0 && h >= 0 && h <= s->o.within)
        s->why = FDT_STOP_LIMIT;
    else if (s->o.after > 0 && s->since_gain >= s->o.after)
        s->why = FDT_STOP_CONVERGED;
    return s->why != FDT_STOP_NOT;
}

void fdt_stop_end(fdt_stop *s, fdt_stop_why why)
{
    assert_stop_state(s);
    FDT_ASSERT(why != FDT_STOP_NOT, "a search ends for a reason");
    if (s->why == FDT_STOP_NOT)
        s->why = why;
}

/* The headroom of the best to the limit that binds it, named in name. */
static double headroom(const fdt_stop *s, char *name, size_t n)
{
    if (!fdt_decide_ok(&s->fastest))
        return -1;
    double lim = fdt_stop_binding(&s->limit, s->fastest.median_ms, name, n);
    if (!(lim > 0))
        return -1;
    double h = s->fastest.median_ms / lim - 1;
    return h > 0 ? h : 0;
}

double fdt_stop_headroom(const fdt_stop *s)
{
    char name[48];
    return headroom(s, name, sizeof name);
}

void fdt_stop_describe(const fdt_stop *s, char *buf, size_t n)
{
    char name[48], room[80] = "";
    double h = headroom(s, name, sizeof name);
    if (h >= 0)
        snprintf(room, sizeof room, " (%.1f%% above %s)", 100 * h, name);
    switch (s->why) {
    case FDT_STOP_LIMIT:
        snprintf(buf, n, "within %.1f%% of %s", 100 * h, name);
        return;
    case FDT_STOP_CONVERGED:
        snprintf(buf, n, "converged: %d evaluations without gain%s", s->since_gain, room);
        return;
    case FDT_STOP_BUDGET:
        snprintf(buf, n, "budget: %d of %d%s", s->evals, s->planned, room);
        return;
    case FDT_STOP_SPACE:
        if (s->planned > 0)
            snprintf(buf, n, "space: %d of %d%s", s->evals, s->planned, room);
        else /* a rerun after the whole space was measured */
            snprintf(buf, n, "space: nothing left to measure%s", room);
        return;
    case FDT_STOP_TIME:
        snprintf(buf, n, "time limit: %d of %d%s", s->evals, s->planned, room);
        return;
    case FDT_STOP_INTERRUPTED:
        snprintf(buf, n, "interrupted: %d of %d%s", s->evals, s->planned, room);
        return;
    case FDT_STOP_NOT: break;
    }
    snprintf(buf, n, "searching: %d of %d%s", s->evals, s->planned, room);
}

/* ------------------------------------------------------------------ replay */

/* Up to want proposals of s into v; how many (fewer when it has none left). */
static size_t take(fdt_search *s, size_t *v, size_t want)
{
    size_t k = 0;
    while (k < want && fdt_search_next(s, &v[k]) == 0)
        k++;
    return k;
}

/* The replay's record: what a strategy's reported evaluation does to st and out; 1 when the
 * rules stop. */
static int replay_report(fdt_search *s, fdt_stop *st, size_t idx,
                         const fdt_decide_timing *timing, const fdt_stop_limit *limit,
                         double rec_best, fdt_stop_replay_result *out)
{
    const fdt_decide_timing *t = &timing[idx];
    int ok = fdt_decide_ok(t);
    fdt_search_report(s, idx, ok, ok ? t->median_ms : 0);
    int stopped = fdt_stop_report(st, t, &limit[idx]);
    if (ok && (out->best_ms <= 0 || t->median_ms < out->best_ms))
        out->best_ms = t->median_ms;
    static const double within[2] = {0.01, 0.03};
    for (int k = 0; k < 2; k++)
        if (ok && !out->within[k] && t->median_ms <= rec_best * (1 + within[k]))
            out->within[k] = st->evals;
    return stopped;
}

int fdt_stop_replay(fdt_search_kind kind, const fdt_config *space, size_t n,
                    const fdt_decide_timing *timing, const fdt_stop_limit *limit,
                    const double *predicted, const fdt_problem *p,
                    const fdt_device *dev, uint64_t seed, const fdt_stop_opts *o, int budget,
                    int batch, fdt_stop_replay_result *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    double rec_best = 0;
    for (size_t i = 0; i < n; i++)
        if (fdt_decide_ok(&timing[i]) && (rec_best <= 0 || timing[i].median_ms < rec_best))
            rec_best = timing[i].median_ms;
    if (rec_best <= 0)
        return fdt_err_set(e, "replay: no recorded config succeeded");
    size_t w = batch > 0 ? (size_t)batch : 1;
    size_t *block = malloc(2 * w * sizeof *block), *cur = block, *next = block + w;
    if (!block)
        return fdt_err_set(e, "replay: out of memory");
    fdt_search *s;
    int rc = predicted || kind != FDT_SEARCH_MODEL
                 ? fdt_search_new_predicted(kind, space, n, predicted, seed, &s, e)
                 : fdt_search_new(kind, space, n, p, dev, seed, &s, e);
    if (rc) {
        free(block);
        return -1;
    }
    size_t planned = budget > 0 && (size_t)budget < n ? (size_t)budget : n;
    fdt_stop st;
    fdt_stop_init(&st, o, kind, (int)planned);
    int stopped = 0;
    size_t nc = take(s, cur, w < planned ? w : planned);
    while (!stopped && nc > 0) {
        /* batch >= 1: the next batch taken before this one is reported, within the budget */
        size_t left = planned > (size_t)st.evals + nc ? planned - (size_t)st.evals - nc : 0;
        size_t nn = batch > 0 ? take(s, next, w < left ? w : left) : 0;
        for (size_t k = 0; k < nc && !stopped; k++)
            stopped = replay_report(s, &st, cur[k], timing, limit, rec_best, out);
        if (batch <= 0 && !stopped && (size_t)st.evals < planned)
            nn = take(s, next, 1);
        size_t *t = cur;
        cur = next;
        next = t;
        nc = nn;
    }
    FDT_ASSERT((size_t)st.evals <= planned, "a replay never spends more than its budget");
    free(block);
    fdt_stop_end(&st, (size_t)st.evals >= planned && planned < n ? FDT_STOP_BUDGET
                                                                 : FDT_STOP_SPACE);
    fdt_search_free(s);
    out->evals = st.evals;
    out->why = st.why;
    fdt_stop_describe(&st, out->stopped, sizeof out->stopped);
    out->gap = out->best_ms > 0 ? out->best_ms / rec_best - 1 : -1;
    return 0;
}
