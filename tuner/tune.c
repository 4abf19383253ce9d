/* Tuning one problem: enumerate the recipe's space (of a simulated GPU: what its recording
 * has), measure the recipe's default config (the seeds' baseline, for the speedup quoted in
 * the same run), resume what the database already holds for this device and software
 * environment, measure what fdtune already answers for the device and problem (known_first:
 * this database's or the system database's nearest result), compile the rest in a process
 * pool, batch by batch (on a GPU the next batch compiles while this one is measured:
 * fdt_ahead.h), then let the strategy pick candidates
 * until it, the stopping rules (fdt_stop.h: the limit, convergence), the budget, the time
 * limit or the user stops.
 * Each candidate gets a cheap probe; one within `full_within` of the best so far gets a full
 * sample. Every outcome is a database row written as soon as it exists. */
#include "fdt_tune.h"
#include "fdt_ahead.h"
#include "fdt_decide.h"
#include "fdt_stop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)FDT_EVAL_OK == (int)FDT_DB_OK && (int)FDT_EVAL_TIMEOUT == (int)FDT_DB_TIMEOUT &&
                   (int)FDT_EVAL_STATUS_COUNT == (int)FDT_DB_STATUS_COUNT,
               "evaluation and database statuses must match");

void fdt_tune_opts_default(fdt_tune_opts *o)
{
    memset(o, 0, sizeof *o);
    o->strategy = FDT_SEARCH_MODEL;
    o->seed = 1;
    o->parallel = fdt_rt_cpu_count();
    o->full_within = 0.10;
    o->command = "";
    o->kind = FDT_DB_TUNE;
    o->decide = 1;
    o->overlap = 1;
    fdt_stop_opts_default(&o->stop_rules);
}

typedef struct cand {
    fdt_cand b;        /* its config, and how far it is built (fdt_target_build) */
    char key[256];
    int measured;      /* already known (resumed or measured in this run) */
} cand;

typedef struct cand_list {
    cand *v;
    size_t n, cap;
    /* open addressing: key hash -> index + 1 */
    size_t *slots, nslots;
} cand_list;

static int push_config(void *ctx, const fdt_config *c, uint64_t index)
{
    (void)index;
    cand_list *l = ctx;
    cand *v = fdt_grow(l->v, &l->cap, l->n, sizeof *v, 256);
    if (!v)
        return 1; /* stops the enumeration; reported by the caller */
    l->v = v;
    cand *x = &l->v[l->n++];
    memset(x, 0, sizeof *x);
    fdt_cand_init(&x->b, FDT_CAND_STENCIL, c, NULL);
    fdt_config_format(c, x->key, sizeof x->key);
    return 0;
}

static int index_build(cand_list *l)
{
    l->nslots = 1;
    while (l->nslots < 2 * l->n + 1)
        l->nslots *= 2;
    l->slots = calloc(l->nslots, sizeof *l->slots);
    if (!l->slots)
        return -1;
    for (size_t i = 0; i < l->n; i++) {
        size_t h = fdt_hash64_str(l->v[i].key, FDT_HASH_SEED) & (l->nslots - 1);
        while (l->slots[h])
            h = (h + 1) & (l->nslots - 1);
        l->slots[h] = i + 1;
    }
    return 0;
}

static long index_find(const cand_list *l, const char *key)
{
    size_t h = fdt_hash64_str(key, FDT_HASH_SEED) & (l->nslots - 1);
    while (l->slots[h]) {
        if (!strcmp(l->v[l->slots[h] - 1].key, key))
            return (long)(l->slots[h] - 1);
        h = (h + 1) & (l->nslots - 1);
    }
    return -1;
}

static void free_list(cand_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        fdt_cand_free(&l->v[i].b);
    free(l->v);
    free(l->slots);
    memset(l, 0, sizeof *l);
}

void fdt_tune_result_to_row(const fdt_eval_result *r, const char *config, int64_t run_id,
                            int64_t problem_id, fdt_db_stage stage, fdt_db_eval *row)
{
    fdt_db_eval_init(row);
    row->run_id = run_id;
    row->problem_id = problem_id;
    snprintf(row->config, sizeof row->config, "%s", config);
    row->status = (fdt_db_status)r->status;
    row->stage = stage;
    if (r->timing.reps > 0) {
        row->time_ms = r->timing.median_ms;
        row->time_min_ms = r->timing.min_ms;
        row->time_max_ms = r->timing.max_ms;
        row->time_q1_ms = r->timing.q1_ms;
        row->time_q3_ms = r->timing.q3_ms;
        row->reps = r->timing.reps;
        row->outliers = r->timing.outliers;
    }
    if (r->status == FDT_EVAL_OK) {
        row->gbs = r->gbs;
        row->frac_copy = r->frac_copy;
    }
    if (r->verify.checked) {
        row->max_err = r->verify.max_err;
        row->rel_err = r->verify.rel_err;
        row->tolerance = r->verify.tol;
    }
    if (r->line > 0) {
        row->layout_line = r->line;
        row->layout_offset = r->offset;
    }
    row->registers = r->res.registers;
    row->sgprs = r->res.sgprs;
    row->spill_bytes = r->res.spill_bytes;
    row->scratch_bytes = r->res.scratch_bytes;
    row->shared_bytes = r->res.shared_bytes;
    row->compile_s = r->compile_s;
    if (r->status == FDT_EVAL_OK && r->layers_ms > 0)
        row->layers_ms = r->layers_ms;
    if (r->status == FDT_EVAL_OK && r->part_ms > 0)
        row->part_ms = r->part_ms;
    snprintf(row->message, sizeof row->message, "%s", r->message);
}

/* ---------------------------------------------------------------- resume */

typedef struct resume_ctx {
    cand_list *l;
    double *full_ms, *probe_ms;
    int *failed;
} resume_ctx;

static int resume_row(void *vctx, const fdt_db_row *row)
{
    resume_ctx *r = vctx;
    long i = index_find(r->l, row->ev.config);
    if (i < 0)
        return 0; /* outside this recipe's space (another recipe, another run) */
    unsigned retry = FDT_DB_RETRY_DEFAULT;
    if (retry & (1u << row->ev.status))
        return 0; /* crashes and timeouts may come from a busy GPU: measure again */
    if (row->ev.status != FDT_DB_OK)
        r->failed[i] = 1;
    else if (row->ev.stage == FDT_DB_FULL) {
        if (r->full_ms[i] <= 0 || row->ev.time_ms < r->full_ms[i])
            r->full_ms[i] = row->ev.time_ms;
    } else if (r->probe_ms[i] <= 0 || row->ev.time_ms < r->probe_ms[i]) {
        r->probe_ms[i] = row->ev.time_ms;
    }
    return 0;
}

typedef struct best_row {
    fdt_db_row row;
    int have;
} best_row;

static int take_best(void *ctx, const fdt_db_row *row)
{
    best_row *b = ctx;
    b->row = *row;
    b->have = 1;
    return 1;
}

/* Records the best decision of (device, problem) at the end of a problem. This run's fastest
 * verified result replaces the current best only when it is faster beyond the noise of both
 * (fdt_decide_beats), so a rerun that is faster by noise alone never moves the best. With no
 * decision yet, the current best (the smallest median: what queries answered so far) is
 * recorded unless this run beat it. The decision carries whether this search was cut short
 * by its time limit (the latest search of the problem says): a decision that keeps the best
 * is recorded when only that changed. */
static int decide_best(const fdt_tune_ctx *ctx, int64_t problem_id, int64_t run_id,
                       int cut_short, const char *stopped, fdt_err *e)
{
    best_row cur = {.have = 0}, run = {.have = 0};
    fdt_db_decision d;
    int decided = 0;
    if (fdt_db_top(ctx->db, ctx->device_id, problem_id, 0, 1, take_best, &cur, e) ||
        fdt_db_best_decision(ctx->db, ctx->device_id, problem_id, &d, &decided, e) ||
        fdt_db_run_best(ctx->db, run_id, problem_id, &run.row, &run.have, e))
        return -1;
    int64_t pick = 0;
    const char *why = "tune: first decision";
    if (run.have && cur.have && run.row.ev.id != cur.row.ev.id) {
        fdt_decide_timing tc, tr;
        fdt_decide_timing_of(&cur.row.ev, &tc);
        fdt_decide_timing_of(&run.row.ev, &tr);
        if (fdt_decide_beats(&tc, &tr)) {
            pick = run.row.ev.id;
            why = "tune: faster beyond noise";
        }
    }
    if (!pick && !decided)
        pick = cur.have ? cur.row.ev.id : run.have ? run.row.ev.id : 0;
    if (!pick && decided) { /* the best stays; whether its search was cut short may not */
        pick = d.eval_id;
        why = cut_short ? "tune: search cut short by its time limit" : "tune: search completed";
    }
    if (!pick || (decided && d.eval_id == pick && d.cut_short == cut_short &&
                  !strcmp(d.stopped, stopped)))
        return 0;
    return fdt_db_best_decide_stopped(ctx->db, ctx->device_id, problem_id, pick, cut_short,
                                      stopped, why, e);
}

/* ---------------------------------------------------------------- the loop */

typedef struct state {
    const fdt_tune_ctx *ctx;
    const fdt_problem *p;
    const fdt_tune_opts *o;
    fdt_tune_progress cb;
    void *cbctx;
    fdt_tune_summary *out;
    int64_t problem_id, run_id;
    double best_ms, copy_gbs, t0;
    int done, planned;
    double deadline;    /* this search's: o->deadline, or its share of it (o->share) */
    cand_list l;        /* the recipe's space */
    cand base;          /* the recipe's default config, when not in the space */
    fdt_search *s;
    int run_open;       /* the run is begun and not finished yet */
    fdt_stop stop;      /* the stopping rules (fdt_stop.h) */
    fdt_decide_timing last; /* the timing measure() last reported (NaN median: failed) */
    fdt_stop_floor floor; /* what no config of the space can beat on chip (the limit rule's) */
    char known[256];    /* o->known_first: the config fdtune answers today ("" none) */
    char known_from[160]; /* ... and where it came from (fdt_tune_summary.start_source) */
} state;

static void emit(state *st, fdt_tune_event *ev)
{
    if (!st->cb)
        return;
    ev->p = st->p;
    ev->done = st->done;
    ev->total = st->planned;
    ev->copy_gbs = st->copy_gbs;
    if (st->best_ms > 0) {
        ev->best_gbs = fdt_effective_bytes(st->p) / (st->best_ms * 1e-3) / 1e9;
        ev->best_frac = st->copy_gbs > 0 ? ev->best_gbs / st->copy_gbs : 0;
    }
    ev->elapsed_s = fdt_now() - st->t0;
    ev->eta_s = st->done > 0 && st->planned > 0
                    ? ev->elapsed_s / st->done * (st->planned - st->done)
                    : -1;
    st->cb(st->cbctx, ev);
}

static int store(state *st, const fdt_eval_result *r, const char *key, fdt_db_stage stage,
                 fdt_err *e)
{
    fdt_db_eval row;
    fdt_tune_result_to_row(r, key, st->run_id, st->problem_id, stage, &row);
    return fdt_db_eval_insert(st->ctx->db, &row, NULL, e);
}

/* The worker could not be kept going (fdt_evaluate_cand failed): the GPU failed. Returns -1. */
static int gpu_failed(state *st)
{
    st->out->gpu_failed = 1;
    return -1;
}

/* The timing of r, the result measure() reports, for the stopping rules. */
static void last_timing(state *st, const fdt_eval_result *r)
{
    st->last = (fdt_decide_timing){r->timing.median_ms, r->timing.q1_ms, r->timing.q3_ms,
                                   r->timing.min_ms, r->timing.max_ms};
}

/* Probe, then a full sample when the probe is close to the best. Returns the time to report
 * (<= 0: not ok), or -1 with e set when the worker cannot go on. */
static int measure(state *st, cand *c, const char *stage_name, int full_only, double *reported,
                   fdt_err *e)
{
    fdt_timing_opts probe, full;
    fdt_timing_opts_probe(&probe);
    fdt_timing_opts_default(&full);
    fdt_eval_result r;
    *reported = 0;
    st->last = (fdt_decide_timing){NAN, NAN, NAN, NAN, NAN};
    fdt_tune_event ev = {.kind = FDT_TUNE_EVAL, .config = c->key, .r = &r};
    if (fdt_cand_failed(&c->b)) {
        if (fdt_evaluate_cand(st->ctx->w, st->p, &c->b, &probe, &r, e)) /* compile_error */
            return gpu_failed(st);
        ev.stage = "probe";
        st->out->failed++;
        emit(st, &ev);
        return store(st, &r, c->key, FDT_DB_PROBE, e);
    }
    if (!full_only) {
        if (fdt_evaluate_cand(st->ctx->w, st->p, &c->b, &probe, &r, e))
            return gpu_failed(st);
        if (store(st, &r, c->key, FDT_DB_PROBE, e))
            return -1;
        ev.stage = "probe";
        if (r.status != FDT_EVAL_OK) {
            if (r.status == FDT_EVAL_PRUNED)
                st->out->pruned++;
            else
                st->out->failed++;
            emit(st, &ev);
            return 0;
        }
        *reported = r.timing.median_ms;
        last_timing(st, &r);
        if (st->best_ms > 0 && r.timing.median_ms > st->best_ms * (1 + st->o->full_within)) {
            st->out->ok++;
            emit(st, &ev);
            return 0;
        }
        emit(st, &ev);
    }
    if (fdt_evaluate_cand(st->ctx->w, st->p, &c->b, &full, &r, e))
        return gpu_failed(st);
    if (store(st, &r, c->key, FDT_DB_FULL, e))
        return -1;
    ev.stage = stage_name;
    if (r.status == FDT_EVAL_OK) {
        st->out->ok++;
        *reported = r.timing.median_ms;
        last_timing(st, &r);
        if (st->best_ms <= 0 || r.timing.median_ms < st->best_ms)
            st->best_ms = r.timing.median_ms;
    } else {
        st->out->failed++;
        *reported = 0;
        st->last.median_ms = NAN;
    }
    emit(st, &ev);
    return 0;
}

/* fdt_done_fn of a batch: how far its compilation is (FDT_TUNE_COMPILING). */
static void compiling(void *ctx, size_t done, size_t n)
{
    fdt_tune_event ev = {.kind = FDT_TUNE_COMPILING, .compiled = done, .survivors = n};
    emit(ctx, &ev);
}

/* The compile pool's width (*overlap: whether the next batch compiles while this one is
 * measured). The worker takes a core while it measures, so with the overlap the pool gets at
 * most the cores this process may use (its affinity mask, fdt_rt_cpu_count) less one: the
 * pool and the worker never ask for more cores than there are. With one core, or on a CPU
 * target (whose measurements take every core of the mask), nothing overlaps. */
static int pool_width(const state *st, int *overlap)
{
    int width = st->o->parallel > 0 ? st->o->parallel : 1, cores = fdt_rt_cpu_count();
    *overlap = st->o->overlap && cores > 1 && !fdt_target_device_is_cpu(st->ctx->dev);
    if (*overlap && width > cores - 1)
        width = cores - 1;
    return width;
}

/* The NEW candidates among v[0..n) into b (room for n): those a build takes. */
static size_t new_cands(cand *const *v, size_t n, fdt_cand **b)
{
    size_t nb = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i]->b.state == FDT_CAND_NEW)
            b[nb++] = &v[i]->b;
    return nb;
}

/* What stops the search before its next evaluation: FDT_STOP_INTERRUPTED (the user),
 * FDT_STOP_TIME (the time limit), or FDT_STOP_NOT. The time limit lets every search measure
 * one config at least. */
static fdt_stop_why stop_cause(const state *st)
{
    if (st->o->stop && *st->o->stop)
        return FDT_STOP_INTERRUPTED;
    if (st->deadline > 0 && st->out->tried > 0 && fdt_now() > st->deadline)
        return FDT_STOP_TIME;
    return FDT_STOP_NOT;
}

/* fdt_cancel_fn of a batch compiling on this thread: the user's interrupt or the time limit
 * gives its compile up. */
static int given_up(void *ctx)
{
    return stop_cause(ctx) != FDT_STOP_NOT;
}

/* The build's options for a batch: the pool's width, the progress to st, the interrupt. */
static void batch_opts(state *st, fdt_build_opts *o)
{
    int overlap;
    fdt_build_opts_init(o);
    o->parallel = pool_width(st, &overlap);
    o->on_done = compiling;
    o->cancelled = given_up;
    o->ctx = st;
}

/* A batch's build ended (b[0..nb), wall seconds, hidden of them behind measurements): its
 * time in the summary, and FDT_TUNE_COMPILED. */
static void compiled(state *st, fdt_cand *const *b, size_t nb, double wall, double hidden)
{
    st->out->compile_s += wall;
    st->out->compile_overlapped_s += hidden;
    size_t generated = 0, failed = 0, cached = 0;
    for (size_t k = 0; k < nb; k++) {
        generated += b[k]->state != FDT_CAND_GENERATE_FAILED;
        failed += b[k]->state == FDT_CAND_COMPILE_FAILED;
        cached += b[k]->code.image && b[k]->code.cached;
    }
    fdt_tune_event ev = {.kind = FDT_TUNE_COMPILED, .compile_failed = failed,
                         .compile_s = wall, .survivors = generated, .cached = cached};
    emit(st, &ev);
}

/* Builds the candidates among v[0..n) not built yet for the worker's target (generated,
 * compiled in the process pool, pruned), here and now. The space is built batch by batch as
 * the strategy proposes it, not all at once: a recipe's space can be far larger than what a
 * budget will ever measure. */
static int compile_batch(state *st, cand **v, size_t n, fdt_err *e)
{
    fdt_cand **b = calloc(n ? n : 1, sizeof *b);
    if (!b)
        return fdt_err_set(e, "compile: out of memory");
    size_t nb = new_cands(v, n, b);
    fdt_build_opts o;
    batch_opts(st, &o);
    double t0 = fdt_now();
    int r = fdt_target_build(fdt_worker_target(st->ctx->w), st->p, b, nb, &o, e);
    double dt = fdt_now() - t0;
    if (r == 0)
        compiled(st, b, nb, dt, 0);
    else
        st->out->compile_s += dt;
    free(b);
    if (r < 0 && given_up(st))
        return 0; /* given up: stopping() stops the search before anything is measured */
    return r < 0 ? -1 : 0;
}

/* Frees a measured candidate's code object: a long search must not hold them all. */
static void release(cand *c)
{
    fdt_cand_free(&c->b);
}

/* ---------------------------------------------------------------- a simulated GPU's space */

/* The configs a recording has for the problem, sorted, once each. */
typedef struct keyset {
    char **v;
    size_t n, cap;
    int oom;
} keyset;

static int take_key(void *ctx, const char *config)
{
    keyset *k = ctx;
    char **v = fdt_grow(k->v, &k->cap, k->n, sizeof *v, 256);
    char *dup = v ? strdup(config) : NULL;
    if (!dup) {
        k->oom = 1;
        if (v)
            k->v = v;
        return 1;
    }
    k->v = v;
    k->v[k->n++] = dup;
    return 0;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int keyset_has(const keyset *k, const char *key)
{
    return bsearch(&key, k->v, k->n, sizeof *k->v, cmp_key) != NULL;
}

static void keyset_free(keyset *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->v[i]);
    free(k->v);
    memset(k, 0, sizeof *k);
}

/* A simulated GPU answers only what its recording has: the space is cut to the recorded
 * configs (out->not_recorded says how many went); k keeps them for the baseline. */
static int restrict_to_recording(state *st, keyset *k, fdt_err *e)
{
    const fdt_tune_ctx *ctx = st->ctx;
    size_t rows = 0;
    if (fdt_sim_configs(ctx->simulate_from, ctx->dev, st->p, take_key, k, &rows, e))
        return -1;
    if (k->oom)
        return fdt_err_set(e, "out of memory");
    if (rows == 0)
        return fdt_err_set(e, "not recorded in %s: a simulated GPU answers only what was "
                           "recorded", ctx->simulate_from);
    qsort(k->v, k->n, sizeof *k->v, cmp_key);
    size_t u = 0;
    for (size_t i = 0; i < k->n; i++) {
        if (u && !strcmp(k->v[u - 1], k->v[i]))
            free(k->v[i]);
        else
            k->v[u++] = k->v[i];
    }
    k->n = u;
    size_t kept = 0;
    for (size_t i = 0; i < st->l.n; i++)
        if (keyset_has(k, st->l.v[i].key))
            st->l.v[kept++] = st->l.v[i];
    st->out->not_recorded = st->l.n - kept;
    st->l.n = kept;
    if (kept == 0)
        return fdt_err_set(e, "%s has none of the space's configs recorded",
                           ctx->simulate_from);
    return 0;
}

/* The rest of prepare: the space indexed, the baseline (of a simulated GPU: when recorded). */
static int prepare_base(state *st, fdt_recipe *rec, const keyset *recorded, fdt_err *e)
{
    const fdt_tune_ctx *ctx = st->ctx;
    fdt_tune_summary *out = st->out;
    if (st->l.n == 0)
        return fdt_err_set(e, "recipe %s leaves no config for %s on %s (space %llu, all pruned)",
                           fdt_recipe_name(rec), fdt_op_name(st->p->op), ctx->dev->name,
                           (unsigned long long)out->stats.space);
    if (index_build(&st->l))
        return fdt_err_set(e, "out of memory");
    /* the baseline: the recipe's default config, measured in this run */
    cand *base = &st->base;
    if (fdt_recipe_default_config(rec, st->p, ctx->dev, &base->b.cfg, e))
        return -1;
    const fdt_gen_target dialect = {fdt_recipe_dialect(rec)};
    if (fdt_config_check_for(&dialect, st->p, &base->b.cfg, e) == 0) {
        out->have_base = 1;
        fdt_config_format(&base->b.cfg, base->key, sizeof base->key);
        snprintf(out->base_config, sizeof out->base_config, "%s", base->key);
        if (ctx->simulate_from && !keyset_has(recorded, base->key)) {
            out->have_base = 0;
            snprintf(out->base_config, sizeof out->base_config,
                     "(default %s not recorded for the simulation)", base->key);
        }
    } else {
        snprintf(out->base_config, sizeof out->base_config, "(default not valid here: %s)",
                 e->msg);
    }
    return 0;
}

/* The space (in st->l, indexed) and the baseline (out->base_config; st->base when valid). */
static int prepare(state *st, fdt_recipe *rec, fdt_err *e)
{
    const fdt_tune_ctx *ctx = st->ctx;
    fdt_tune_summary *out = st->out;
    keyset rec_keys = {0};
    if (fdt_recipe_enumerate(rec, st->p, ctx->dev, push_config, &st->l, &out->stats, e))
        return -1;
    if (out->stats.stopped)
        return fdt_err_set(e, "out of memory listing the space");
    out->simulated = ctx->simulate_from != NULL;
    if (ctx->simulate_from && st->l.n > 0 && restrict_to_recording(st, &rec_keys, e)) {
        keyset_free(&rec_keys);
        return -1;
    }
    int rc = prepare_base(st, rec, &rec_keys, e);
    keyset_free(&rec_keys);
    return rc;
}

/* The worker set up for the problem (copy bandwidth, verified reference), then the run. */
static int begin_run(state *st, fdt_recipe *rec, fdt_err *e)
{
    const fdt_tune_ctx *ctx = st->ctx;
    const fdt_tune_opts *o = st->o;
    fdt_setup_result setup;
    double ts = fdt_now();
    if (fdt_worker_setup(ctx->w, st->p, &setup, e)) {
        st->out->gpu_failed = 1;
        return -1;
    }
    st->out->setup_s = fdt_now() - ts;
    st->copy_gbs = st->out->copy_gbs = setup.copy_gbs;
    fdt_tune_event sev = {.kind = FDT_TUNE_SETUP, .setup = &setup};
    emit(st, &sev);

    if (fdt_db_problem_id(ctx->db, st->p, &st->problem_id, e))
        return -1;
    fdt_db_run run;
    fdt_db_run_init(&run);
    run.kind = o->kind;
    snprintf(run.command, sizeof run.command, "%s", o->command);
    run.device_id = ctx->device_id;
    run.env_id = ctx->env_id;
    snprintf(run.recipe, sizeof run.recipe, "%s", fdt_recipe_name(rec));
    snprintf(run.recipe_hash, sizeof run.recipe_hash, "%s", fdt_recipe_hash(rec));
    snprintf(run.strategy, sizeof run.strategy, "%s", fdt_search_kind_name(o->strategy));
    run.budget = o->budget;
    run.seed = o->seed;
    run.copy_gbs = setup.copy_gbs;
    if (ctx->simulate_from)
        snprintf(run.notes, sizeof run.notes, "simulated from %s", ctx->simulate_from);
    if (fdt_db_run_begin(ctx->db, &run, &st->run_id, e))
        return -1;
    st->run_open = 1;
    st->out->run_id = st->run_id;
    /* the clocks of the run's start: right after the setup, before the first candidate */
    return fdt_db_run_set_clocks(ctx->db, st->run_id, FDT_DB_CLOCKS_START,
                                 fdt_worker_device(ctx->w)->driver_source, &setup.clocks, e);
}

/* A result this search did not measure (resumed, or the baseline outside the space): the
 * best for the stopping rules to beat. */
static void stop_resumed(state *st, const fdt_decide_timing *t)
{
    fdt_stop_limit l;
    fdt_stop_limit_of(st->p, &st->floor, st->copy_gbs, &l);
    fdt_stop_resumed(&st->stop, t, &l);
}

/* One evaluation of this search (st->last) reported to the stopping rules: 1 when they stop
 * it. */
static int stop_report(state *st)
{
    fdt_stop_limit l;
    fdt_stop_limit_of(st->p, &st->floor, st->copy_gbs, &l);
    return fdt_stop_report(&st->stop, &st->last, &l);
}

/* The strategy over the space; unless forced, what the database holds for this device and
 * environment is reported to it as measured (never proposed again). */
static int start_search(state *st, fdt_err *e)
{
    const fdt_tune_ctx *ctx = st->ctx;
    cand_list *l = &st->l;
    fdt_config *space = malloc(l->n * sizeof *space);
    if (!space)
        return fdt_err_set(e, "out of memory");
    for (size_t i = 0; i < l->n; i++)
        space[i] = l->v[i].b.cfg;
    /* a CPU's model takes the copy this run measured (a GPU's, its catalogue's figures) */
    fdt_device dev = *ctx->dev;
    if (st->copy_gbs > 0 && fdt_model_cpu_form(&dev))
        dev.achievable_bw_gbs = st->copy_gbs;
    int sr = fdt_search_new(st->o->strategy, space, l->n, st->p, &dev, st->o->seed, &st->s, e);
    fdt_stop_floor_of(st->p, space, l->n, ctx->dev, &st->floor);
    free(space);
    if (sr)
        return -1;
    fdt_stop_init(&st->stop, &st->o->stop_rules, st->o->strategy, 0);

    double *full_ms = calloc(l->n, sizeof *full_ms);
    double *probe_ms = calloc(l->n, sizeof *probe_ms);
    int *failed = calloc(l->n, sizeof *failed);
    int rc = 0;
    if (!full_ms || !probe_ms || !failed) {
        rc = fdt_err_set(e, "out of memory");
    } else if (!st->o->force) {
        resume_ctx rc2 = {l, full_ms, probe_ms, failed};
        rc = fdt_db_evals(ctx->db, ctx->device_id, ctx->env_id, st->problem_id, resume_row, &rc2,
                          e);
        for (size_t i = 0; rc == 0 && i < l->n; i++) {
            double t = full_ms[i] > 0 ? full_ms[i] : probe_ms[i];
            if (!failed[i] && t <= 0)
                continue;
            l->v[i].measured = 1;
            st->out->resumed++;
            fdt_search_report(st->s, i, !failed[i] && t > 0, t);
            if (!failed[i] && t > 0)
                stop_resumed(st, &(fdt_decide_timing){t, NAN, NAN, NAN, NAN});
            if (full_ms[i] > 0 && (st->best_ms <= 0 || full_ms[i] < st->best_ms))
                st->best_ms = full_ms[i];
        }
    }
    free(full_ms);
    free(probe_ms);
    free(failed);
    if (rc)
        return -1;
    fdt_tune_event pev = {.kind = FDT_TUNE_SPACE, .survivors = l->n, .resumed = st->out->resumed};
    emit(st, &pev);
    return 0;
}

/* 1 when the user or the time limit stops the search before the next evaluation. */
static int stopping(state *st)
{
    fdt_stop_why why = stop_cause(st);
    if (why == FDT_STOP_NOT)
        return 0;
    st->out->interrupted = 1;
    st->out->cut_short = why == FDT_STOP_TIME; /* with work left */
    snprintf(st->out->stop_reason, sizeof st->out->stop_reason, "%s",
             why == FDT_STOP_TIME ? "time limit" : "interrupted");
    return 1;
}

/* The baseline, always measured in this run: the speedup compares like with like. */
static int measure_baseline(state *st, fdt_err *e)
{
    fdt_tune_summary *out = st->out;
    long bi = index_find(&st->l, st->base.key);
    cand *bc = bi >= 0 && !st->l.v[bi].measured ? &st->l.v[bi] : &st->base;
    double t = 0;
    if (compile_batch(st, &bc, 1, e))
        return -1;
    if (stopping(st))
        return 0; /* the user's interrupt, maybe while it compiled */
    if (measure(st, bc, "baseline", 1, &t, e))
        return -1;
    release(bc);
    out->tried++;
    if (t > 0) {
        out->base_ms = t;
        out->base_gbs = fdt_effective_bytes(st->p) / (t * 1e-3) / 1e9;
    }
    if (bi >= 0 && bc == &st->l.v[bi]) {
        st->l.v[bi].measured = 1;
        fdt_search_report(st->s, (size_t)bi, t > 0, t);
        st->done++;
        stop_report(st);
    } else if (t > 0) {
        stop_resumed(st, &st->last);
    }
    return 0;
}

/* o->known_first: the answer fdtune gives today for this device and problem, the rule that
 * `query best --nearest` and exported headers apply (fdt_db_nearest_in over this database,
 * then the system database), into st->known and st->known_from; "" when nothing answers.
 * Read before the run begins, so that a system database that cannot be read changes
 * nothing. */
static int known_answer(state *st, fdt_err *e)
{
    fdt_db *sys = NULL, *dbs[2] = {st->ctx->db, NULL};
    size_t n = 1;
    st->known[0] = st->known_from[0] = 0;
    if (!st->o->known_first)
        return 0;
    if (fdt_db_open_system(&sys, e))
        return -1;
    if (sys)
        dbs[n++] = sys;
    fdt_db_row row;
    fdt_db_fallback which = FDT_DB_NEAREST_NONE;
    int rc = fdt_db_nearest_in(dbs, n, st->ctx->dev, st->p, NULL, &row, &which, e);
    fdt_db_close(sys);
    if (rc || which == FDT_DB_NEAREST_NONE)
        return rc ? -1 : 0;
    snprintf(st->known, sizeof st->known, "%s", row.ev.config);
    snprintf(st->known_from, sizeof st->known_from, "%s database, %s: %s %lldx%lldx%lld",
             fdt_db_source_name(row.source), fdt_db_fallback_name(which), row.device.name,
             (long long)row.problem.nx, (long long)row.problem.ny, (long long)row.problem.nz);
    return 0;
}

/* What the strategy proposed: candidates, and their indices in the space. */
typedef struct batch {
    cand **v;
    size_t *idx, n;
} batch;

/* The strategy's next proposals into b: at most bmax, and no more than the budget leaves once
 * the `pending` proposals before them are measured. Returns how many. */
static size_t propose(state *st, batch *b, size_t bmax, size_t pending)
{
    size_t used = (size_t)st->done + pending, i;
    size_t left = (size_t)(st->planned > 0 ? st->planned : 0) > used
                      ? (size_t)st->planned - used
                      : 0;
    size_t want = bmax < left ? bmax : left;
    b->n = 0;
    while (b->n < want && fdt_search_next(st->s, &i) == 0) {
        if (st->l.v[i].measured)
            continue; /* the baseline, already done */
        b->idx[b->n] = i;
        b->v[b->n++] = &st->l.v[i];
    }
    return b->n;
}

/* Measures b's candidates one by one, in the strategy's order, until the user, the time
 * limit or a stopping rule (*stop) ends the search; then frees their code. stage: the full
 * samples' name in the progress events ("full"; "known" for the known answer). */
static int measure_batch(state *st, batch *b, const char *stage, int *stop, fdt_err *e)
{
    int failed = 0;
    for (size_t k = 0; k < b->n && !stopping(st); k++) {
        double t = 0;
        if (measure(st, b->v[k], stage, 0, &t, e)) {
            failed = -1;
            break;
        }
        release(b->v[k]);
        b->v[k]->measured = 1;
        st->out->tried++;
        st->done++;
        FDT_ASSERT(st->planned <= 0 || st->done <= st->planned,
                   "a search never measures more than its budget");
        fdt_search_report(st->s, b->idx[k], t > 0, t);
        if (stop_report(st)) {
            *stop = 1; /* a stopping rule: the rest of the batch is not measured */
            break;
        }
    }
    for (size_t k = 0; k < b->n; k++)
        release(b->v[k]);
    return failed;
}

/* The known answer (known_answer) measured right after the baseline, as a batch of one of
 * the strategy's proposals (probe, then a full sample when close to the best; counted in the
 * budget; reported to the strategy and the rules), when it lies in the space and nothing
 * measured it yet. */
static int measure_known(state *st, fdt_err *e)
{
    long i = st->known[0] ? index_find(&st->l, st->known) : -1;
    if (i < 0 || st->l.v[i].measured || st->done >= st->planned ||
        st->stop.why != FDT_STOP_NOT || stopping(st))
        return 0;
    cand *c = &st->l.v[i];
    size_t idx = (size_t)i;
    batch b = {&c, &idx, 1};
    int stop = 0;
    if (compile_batch(st, &c, 1, e) || measure_batch(st, &b, "known", &stop, e))
        return -1;
    if (c->measured) {
        snprintf(st->out->start_config, sizeof st->out->start_config, "%s", st->known);
        snprintf(st->out->start_source, sizeof st->out->start_source, "%s", st->known_from);
    }
    return 0;
}

/* A batch compiling on a thread of its own while the one before is measured. */
typedef struct ahead {
    fdt_ahead a;
    fdt_target t;  /* the worker's, for the thread */
    fdt_cand **b;  /* the batch's NEW candidates, nb of them */
    size_t nb;
} ahead;

/* Starts compiling b's candidates ahead. -1 (e): no thread; nothing was built. */
static int ahead_start(state *st, const batch *b, ahead *x, fdt_err *e)
{
    x->t = *fdt_worker_target(st->ctx->w);
    x->b = calloc(b->n ? b->n : 1, sizeof *x->b);
    if (!x->b)
        return fdt_err_set(e, "compile: out of memory");
    x->nb = new_cands(b->v, b->n, x->b);
    fdt_build_opts o;
    batch_opts(st, &o);
    if (fdt_ahead_start(&x->a, &x->t, st->p, x->b, x->nb, &o, st->o->stop, e) == 0)
        return 0;
    free(x->b);
    return -1;
}

/* Ends the batch compiling ahead: waited for (its progress told while this thread waits),
 * or, with abandon, given up (the compilations running drained). The time this thread did
 * not wait was hidden behind the measurements. A build the stop flag gave up leaves the batch
 * built only in part: the search is interrupted, and the batch is never measured. */
static int ahead_end(state *st, ahead *x, int abandon, fdt_err *e)
{
    double wall = 0, waited = 0;
    int rc = 0;
    if (abandon)
        fdt_ahead_cancel(&x->a, &wall, &waited);
    else
        rc = fdt_ahead_wait(&x->a, compiling, st, &wall, &waited, e);
    double hidden = wall > waited ? wall - waited : 0;
    if (abandon || rc) {
        st->out->compile_s += wall;
        st->out->compile_overlapped_s += hidden;
    } else {
        compiled(st, x->b, x->nb, wall, hidden);
    }
    free(x->b);
    x->b = NULL;
    if (rc && given_up(st))
        return 0; /* given up for the interrupt or the time: stopping() says so next */
    return rc ? -1 : 0;
}

/* Batch by batch, what the strategy proposes: compiled together, then measured one by one,
 * until the strategy, the plan, the user or the time limit stops it. Each batch is proposed
 * before the one ahead of it is measured, with the results reported before that one: with
 * the overlap (pool_width) it compiles on a thread meanwhile; without, it compiles once that
 * one is measured. So what is proposed and measured is the same either way. The exhaustive
 * and random orders are fixed; the model strategy, which adapts to every result once past
 * the top of its ranking, proposes each batch one batch behind the results (on the H200 its
 * batches compiled after the batch before was measured took 37 of wave 1024^3's 74 s). When
 * the search stops, the batch proposed ahead is given up: nothing compiled after the stop
 * is measured or stored. */
static int search_loop(state *st, fdt_err *e)
{
    const fdt_tune_opts *o = st->o;
    int overlap;
    /* the model strategy adapts between batches, so its batches are small */
    size_t bmax = (size_t)pool_width(st, &overlap) * (o->strategy == FDT_SEARCH_MODEL ? 1 : 4);
    if (bmax > 256)
        bmax = 256;
    batch cur = {calloc(bmax, sizeof *cur.v), calloc(bmax, sizeof *cur.idx), 0};
    batch next = {calloc(bmax, sizeof *next.v), calloc(bmax, sizeof *next.idx), 0};
    int failed = 0, stop = st->stop.why != FDT_STOP_NOT;
    if (!cur.v || !cur.idx || !next.v || !next.idx)
        failed = fdt_err_set(e, "out of memory");
    else if (!stop && propose(st, &cur, bmax, 0) && !stopping(st))
        failed = compile_batch(st, cur.v, cur.n, e);
    else
        cur.n = 0; /* nothing left, or no time: no batch is compiled that would not run */
    while (!failed && !stop && cur.n > 0) {
        ahead x;
        int ahead_of = stop_cause(st) == FDT_STOP_NOT && propose(st, &next, bmax, cur.n) > 0;
        int on = overlap && ahead_of;
        if (on && ahead_start(st, &next, &x, e))
            on = 0; /* no thread: the batch proposed compiles after this one is measured */
        failed = measure_batch(st, &cur, "full", &stop, e);
        int over = failed || stop || st->out->interrupted || stopping(st);
        if (on && ahead_end(st, &x, over, e))
            failed = -1;
        if (over || failed || stopping(st))
            break;
        batch t = cur;
        cur = next;
        next = t;
        next.n = 0;
        if (!on && (cur.n > 0 || propose(st, &cur, bmax, 0) > 0))
            failed = compile_batch(st, cur.v, cur.n, e);
    }
    for (size_t k = 0; k < next.n; k++)
        release(next.v[k]); /* proposed, and maybe compiled, after the search stopped */
    free(cur.v);
    free(cur.idx);
    free(next.v);
    free(next.idx);
    return failed ? -1 : 0;
}

/* Why the search ended when no stopping rule ended it (fdt_stop_end), in the summary. */
static void stop_why(state *st, size_t remaining)
{
    fdt_tune_summary *out = st->out;
    fdt_stop_why why = FDT_STOP_SPACE;
    if (out->interrupted)
        why = out->cut_short ? FDT_STOP_TIME : FDT_STOP_INTERRUPTED;
    else if ((size_t)st->planned < remaining)
        why = FDT_STOP_BUDGET;
    fdt_stop_end(&st->stop, why);
    fdt_stop_describe(&st->stop, out->stopped, sizeof out->stopped);
    out->stop_why = st->stop.why;
    out->headroom = fdt_stop_headroom(&st->stop);
}

/* The run's end status, the decision (o->decide) and the summary's best. rc: so far. */
static int finish(state *st, int rc, fdt_err *e)
{
    const fdt_tune_ctx *ctx = st->ctx;
    fdt_tune_summary *out = st->out;
    if (st->run_open) {
        fdt_err fe;
        fdt_db_run_status rs = rc ? FDT_DB_FAILED
                               : out->interrupted ? FDT_DB_INTERRUPTED
                                                  : FDT_DB_DONE;
        /* the clocks of the run's end (after its last measurement), then the end itself,
         * whatever became of the clocks */
        fdt_err ce;
        int clocks_bad = fdt_db_run_set_clocks(ctx->db, st->run_id, FDT_DB_CLOCKS_END, NULL,
                                               fdt_worker_clocks(ctx->w), &ce) != 0;
        int finish_bad = fdt_db_run_finish(ctx->db, st->run_id, rs, &fe) != 0;
        if ((clocks_bad || finish_bad) && rc == 0) {
            *e = finish_bad ? fe : ce;
            rc = -1;
        }
    }
    if (rc == 0 && st->o->decide &&
        decide_best(ctx, st->problem_id, st->run_id, out->cut_short, out->stopped, e))
        rc = -1;
    if (rc == 0) {
        /* the best this device and environment has for the problem, resumed or new */
        best_row b = {.have = 0};
        if (fdt_db_top(ctx->db, ctx->device_id, st->problem_id, ctx->env_id, 1, take_best, &b, e))
            rc = -1;
        else if (b.have) {
            out->have_best = 1;
            snprintf(out->best_config, sizeof out->best_config, "%s", b.row.ev.config);
            out->best_ms = b.row.ev.time_ms;
            out->best_gbs = fdt_effective_bytes(st->p) / (b.row.ev.time_ms * 1e-3) / 1e9;
            out->best_frac = out->copy_gbs > 0 ? out->best_gbs / out->copy_gbs : 0;
            out->best_from_run = b.row.ev.run_id == st->run_id;
            if (out->base_ms > 0)
                out->speedup = out->base_ms / out->best_ms;
        }
    }
    out->wall_s = fdt_now() - st->t0;
    out->worker_restarts = fdt_worker_restarts(ctx->w);
    return rc;
}

double fdt_tune_share_deadline(double end, int left)
{
    if (end <= 0)
        return 0;
    double now = fdt_now();
    if (left <= 1 || now >= end)
        return end;
    return now + (end - now) / left;
}

int fdt_tune_problem(const fdt_tune_ctx *ctx, fdt_recipe *rec, const fdt_problem *p,
                     const fdt_tune_opts *o, fdt_tune_progress cb, void *cbctx,
                     fdt_tune_summary *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    out->p = *p;
    out->headroom = -1;
    snprintf(out->recipe, sizeof out->recipe, "%s", fdt_recipe_name(rec));
    snprintf(out->recipe_path, sizeof out->recipe_path, "%s", fdt_recipe_path(rec));
    snprintf(out->strategy, sizeof out->strategy, "%s", fdt_search_kind_name(o->strategy));
    state st = {.ctx = ctx, .p = p, .o = o, .cb = cb, .cbctx = cbctx, .out = out,
                .t0 = fdt_now()};
    int rc = -1;
    /* The share is taken as the problem begins, so that its preparation (the recipe's walk
     * of the space, the reference, the copy bandwidth) is paid from it, not from the shares
     * of the problems after it. */
    st.deadline = o->share > 1 ? fdt_tune_share_deadline(o->deadline, o->share) : o->deadline;
    if (prepare(&st, rec, e) == 0 && known_answer(&st, e) == 0 && begin_run(&st, rec, e) == 0 &&
        start_search(&st, e) == 0) {
        size_t remaining = st.l.n - out->resumed;
        st.planned = (int)(o->budget > 0 && (size_t)o->budget < remaining ? (size_t)o->budget
                                                                           : remaining);
        st.stop.planned = st.planned;
        if ((!out->have_base || measure_baseline(&st, e) == 0) && measure_known(&st, e) == 0 &&
            search_loop(&st, e) == 0)
            rc = 0;
        stop_why(&st, remaining);
    }
    rc = finish(&st, rc, e);
    fdt_search_free(st.s);
    fdt_cand_free(&st.base.b);
    free_list(&st.l);
    return rc;
}
