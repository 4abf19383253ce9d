/* Re-tuning what the database holds: the plan of (device, problem) pairs to revisit, the
 * verdict after measuring again and the decision that follows (by the rules of decide.c), the
 * GPU part that measures and re-searches, and the lock that keeps two retunes off one
 * database. The plan and the conclusion talk only to the database, so all of it but
 * fdt_retune_problem is tested without a GPU. */
#include "fdt_retune.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fdt_retune_cutoff(time_t now, double seconds, char *buf, size_t n)
{
    time_t t = now - (time_t)seconds;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
}

/* ---------------------------------------------------------------- plan */

void fdt_retune_filter_init(fdt_retune_filter *f)
{
    memset(f, 0, sizeof *f);
}

int fdt_retune_match(const fdt_device *stored, const fdt_device *live, int nlive,
                     int *same_gpu)
{
    int first = -1;
    *same_gpu = 0;
    for (int i = 0; i < nlive; i++) {
        const fdt_device *v = &live[i];
        if (!fdt_device_same_model(stored, v))
            continue;
        if (fdt_device_same_gpu(stored, v)) {
            *same_gpu = 1;
            return i;
        }
        if (first < 0)
            first = i;
    }
    return first;
}

typedef struct cand_fill {
    fdt_retune_item *it;
    int max;
} cand_fill;

static int push_cand(void *ctx, const fdt_db_row *row)
{
    cand_fill *c = ctx;
    if (c->it->ncand >= c->max)
        return 1;
    c->it->cand[c->it->ncand++] = *row;
    return 0;
}

#define CMP(a, b)                      \
    do {                               \
        if ((a) != (b))                \
            return (a) < (b) ? -1 : 1; \
    } while (0)

/* Plan order; within one (GPU, problem) the item to keep comes first. */
static int item_cmp(const void *pa, const void *pb)
{
    const fdt_retune_item *a = pa, *b = pb;
    CMP(a->live, b->live);
    int op = strcmp(fdt_op_name(a->problem.op), fdt_op_name(b->problem.op));
    if (op)
        return op;
    CMP(a->problem.R, b->problem.R);
    CMP((int)a->problem.prec, (int)b->problem.prec);
    CMP(a->problem.nx, b->problem.nx);
    CMP(a->problem.ny, b->problem.ny);
    CMP(a->problem.nz, b->problem.nz);
    CMP(b->same_gpu, a->same_gpu);
    int t = strcmp(b->last_run, a->last_run); /* newer first */
    if (t)
        return t;
    CMP(a->device.id, b->device.id);
    return 0;
}

int fdt_retune_plan_build(fdt_db *db, const fdt_device *live, int nlive,
                          const fdt_retune_filter *f, fdt_retune_plan *plan, fdt_err *e)
{
    memset(plan, 0, sizeof *plan);
    fdt_retune_filter none;
    if (!f) {
        fdt_retune_filter_init(&none);
        f = &none;
    }
    int top = f->top > 0 && f->top < FDT_RETUNE_TOP ? f->top : FDT_RETUNE_TOP;
    fdt_db_filter q;
    fdt_db_filter_init(&q);
    q.gpu = f->gpu;
    q.absorb_w = f->absorb_w;
    q.absorb_s = f->absorb_s;
    fdt_db_rows bests = {0};
    /* The pairs first, the per-pair queries after: one statement at a time. */
    if (fdt_db_best(db, &q, fdt_db_collect_row, &bests, e)) {
        free(bests.v);
        return fdt_err_wrap(e, "retune plan");
    }
    if (bests.oom) {
        free(bests.v);
        return fdt_err_set(e, "retune plan: out of memory");
    }
    plan->items = calloc(bests.n ? bests.n : 1, sizeof *plan->items);
    if (!plan->items) {
        free(bests.v);
        return fdt_err_set(e, "retune plan: out of memory");
    }
    for (size_t i = 0; i < bests.n; i++) {
        const fdt_db_row *b = &bests.v[i];
        if (f->ops && !(f->ops & (1u << b->problem.op)))
            continue;
        int same = 0, li = fdt_retune_match(&b->device, live, nlive, &same);
        if (li < 0) {
            plan->absent++;
            continue;
        }
        fdt_retune_item *it = &plan->items[plan->n];
        memset(it, 0, sizeof *it);
        if (fdt_db_last_run(db, b->device.id, b->ev.problem_id, it->last_run,
                            sizeof it->last_run, e))
            goto fail;
        if (f->since && *f->since && strcmp(it->last_run, f->since) < 0) {
            plan->older++;
            continue;
        }
        it->live = li;
        it->same_gpu = same;
        it->device = b->device;
        it->problem = b->problem;
        it->problem_id = b->ev.problem_id;
        fdt_db_decision d;
        cand_fill cf = {it, top};
        if (fdt_db_best_decision(db, b->device.id, b->ev.problem_id, &d, &it->decided, e) ||
            fdt_db_top(db, b->device.id, b->ev.problem_id, 0, top, push_cand, &cf, e))
            goto fail;
        FDT_ASSERT(it->ncand > 0, "a (device, problem) with a best has a top-1 row");
        if (it->ncand == 0)
            continue;
        plan->n++;
    }
    free(bests.v);
    bests.v = NULL;
    qsort(plan->items, plan->n, sizeof *plan->items, item_cmp);
    size_t kept = 0;
    for (size_t i = 0; i < plan->n; i++) {
        if (kept && plan->items[kept - 1].live == plan->items[i].live &&
            plan->items[kept - 1].problem_id == plan->items[i].problem_id) {
            plan->duplicate++;
            continue;
        }
        if (kept != i)
            plan->items[kept] = plan->items[i];
        kept++;
    }
    plan->n = kept;
    return 0;
fail:
    free(bests.v);
    fdt_retune_plan_free(plan);
    return fdt_err_wrap(e, "retune plan");
}

void fdt_retune_plan_free(fdt_retune_plan *plan)
{
    free(plan->items);
    memset(plan, 0, sizeof *plan);
}

/* ---------------------------------------------------------------- assessment */

const char *fdt_retune_action_name(fdt_retune_action a)
{
    static const char *const names[] = {"kept", "adopted", "refreshed", "replaced", "lost"};
    return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "?";
}

void fdt_retune_assess(const fdt_retune_item *it, const fdt_db_eval *measured, int nmeasured,
                       const fdt_db_env *now, double threshold, int force_env,
                       fdt_retune_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->fastest_ms = NAN;
    out->research_best_ms = NAN;
    int n = nmeasured < it->ncand ? nmeasured : it->ncand;
    for (int i = 0; i < n; i++) {
        fdt_retune_check *c = &out->check[i];
        const fdt_db_eval *m = &measured[i];
        snprintf(c->config, sizeof c->config, "%s", it->cand[i].ev.config);
        c->stored_eval_id = it->cand[i].ev.id;
        c->eval_id = m->id;
        c->status = m->status;
        fdt_decide_timing_of(&it->cand[i].ev, &c->stored);
        fdt_decide_timing_of(m, &c->now);
        c->verdict = fdt_decide_judge(&c->stored, &c->now, threshold);
        c->change = c->verdict == FDT_DECIDE_FAILED ? NAN
                                                    : c->now.median_ms / c->stored.median_ms - 1;
        if (m->status != FDT_DB_OK)
            snprintf(c->message, sizeof c->message, "%s%s%s", fdt_db_status_name(m->status),
                     m->message[0] ? ": " : "", m->message);
    }
    out->ncheck = n;
    if (it->ncand > 0)
        out->env_changed = fdt_decide_env_diff(&it->cand[0].env, now, out->env_diff,
                                               sizeof out->env_diff);
    out->forced = force_env != 0;
    /* A best that was not measured at all counts as failed: nothing vouches for it today. */
    out->regressed = n == 0 || out->check[0].verdict == FDT_DECIDE_REGRESSED ||
                     out->check[0].verdict == FDT_DECIDE_FAILED;
    out->research = out->env_changed || out->forced || out->regressed;
    if (it->ncand > 0) {
        out->best_eval_id = it->cand[0].ev.id;
        snprintf(out->best_config, sizeof out->best_config, "%s", it->cand[0].ev.config);
        fdt_decide_timing_of(&it->cand[0].ev, &out->best);
    }
}

int fdt_retune_conclude(fdt_db *db, const fdt_retune_item *it, int64_t device_id,
                        const int64_t *run_ids, int nruns, double threshold,
                        fdt_retune_outcome *out, fdt_err *e)
{
    if (it->ncand == 0)
        return fdt_err_set(e, "retune: nothing stored for problem %lld",
                           (long long)it->problem_id);
    /* rows are large; keep them off the stack */
    fdt_db_row *x = malloc(2 * sizeof *x), *r = x + 1;
    if (!x)
        return fdt_err_set(e, "retune: out of memory");
    int have_x = 0;
    for (int i = 0; i < nruns; i++) {
        int found = 0;
        if (run_ids[i] <= 0)
            continue;
        if (fdt_db_run_best(db, run_ids[i], it->problem_id, r, &found, e)) {
            free(x);
            return fdt_err_wrap(e, "retune");
        }
        if (found && (!have_x || r->ev.time_ms < x->ev.time_ms)) {
            *x = *r;
            have_x = 1;
        }
    }
    const fdt_db_row *stored = &it->cand[0];
    fdt_decide_timing ts, tx;
    fdt_decide_timing_of(&stored->ev, &ts);
    if (have_x) {
        fdt_decide_timing_of(&x->ev, &tx);
        out->fastest_ms = x->ev.time_ms;
    }
    out->recovered = out->regressed && have_x && fdt_decide_ok(&ts) &&
                     x->ev.time_ms <= ts.median_ms * (1 + threshold);

    /* Is there a decision for the GPU that measured today, and which? */
    int decided = 0;
    int64_t decided_eval = 0;
    if (device_id == it->device.id) {
        decided = it->decided;
        decided_eval = stored->ev.id;
    } else {
        fdt_db_decision d;
        if (fdt_db_best_decision(db, device_id, it->problem_id, &d, &decided, e)) {
            free(x);
            return fdt_err_wrap(e, "retune");
        }
        decided_eval = d.eval_id;
    }

    const fdt_retune_check *m = out->ncheck > 0 ? &out->check[0] : NULL;
    int m_ok = m && m->status == FDT_DB_OK && m->eval_id > 0;
    int64_t pick = 0;
    const char *cfg = stored->ev.config;
    fdt_decide_timing tp = ts;
    if (!have_x) {
        out->action = FDT_RETUNE_LOST;
        snprintf(out->reason, sizeof out->reason, "no verified config today");
    } else if (!m_ok) {
        pick = x->ev.id;
        out->action = FDT_RETUNE_REPLACED;
        snprintf(out->reason, sizeof out->reason, "retune: the best %s today",
                 m ? fdt_db_status_name(m->status) : "was not measured");
    } else if (strcmp(x->ev.config, stored->ev.config) != 0 && fdt_decide_beats(&m->now, &tx)) {
        pick = x->ev.id;
        out->action = FDT_RETUNE_REPLACED;
        snprintf(out->reason, sizeof out->reason, "retune: faster beyond noise");
    } else if (out->env_changed || out->forced || out->regressed ||
               device_id != it->device.id) {
        /* Same config, measured today: tomorrow compares with today's environment. */
        pick = m->eval_id;
        out->action = FDT_RETUNE_REFRESHED;
        snprintf(out->reason, sizeof out->reason, "retune: re-measured (%s)",
                 out->env_changed ? "environment changed"
                 : out->forced    ? "forced environment change"
                 : out->regressed ? "regression"
                                  : "another GPU of this model");
    } else if (!decided) {
        pick = stored->ev.id;
        out->action = FDT_RETUNE_ADOPTED;
        snprintf(out->reason, sizeof out->reason, "retune: adopted the stored best");
    } else {
        out->action = FDT_RETUNE_KEPT;
    }
    if (out->action == FDT_RETUNE_REPLACED) {
        cfg = x->ev.config;
        tp = tx;
    } else if (out->action == FDT_RETUNE_REFRESHED) {
        tp = m->now;
    }
    out->best_eval_id = pick ? pick : stored->ev.id;
    snprintf(out->best_config, sizeof out->best_config, "%s", cfg);
    out->best = tp;
    int rc = 0;
    if (pick && !(decided && decided_eval == pick))
        rc = fdt_db_best_decide(db, device_id, it->problem_id, pick,
                                /* a re-search has no time limit; else the stored mark */
                                out->researched ? 0 : stored->cut_short, out->reason,
                                e);
    free(x);
    return rc ? fdt_err_wrap(e, "retune") : 0;
}

/* ---------------------------------------------------------------- on the GPU */

void fdt_retune_opts_default(fdt_retune_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threshold = FDT_RETUNE_THRESHOLD;
    o->strategy = FDT_SEARCH_MODEL;
    o->budget = FDT_RETUNE_BUDGET;
    o->seed = 1;
    o->parallel = fdt_rt_cpu_count();
    o->command = "fdtune retune";
}

/* Builds the stored configs for the worker's target in one batch (the process pool), then
 * verifies and times each with a full sample; every outcome becomes a row of the retune run.
 * rows[i] is cand[i]; a config that no longer parses, generates or compiles is a
 * compile_error row, not an error of the retune. */
static int measure(fdt_retune_ctx *ctx, const fdt_retune_item *it, int parallel,
                   fdt_db_eval *rows, fdt_err *e)
{
    const fdt_device *d = fdt_worker_device(ctx->w);
    const fdt_target *t = fdt_worker_target(ctx->w);
    if (!t->backend)
        return fdt_err_set(e, "backend %s: not in this build", d->backend);
    fdt_setup_result setup;
    if (fdt_worker_setup(ctx->w, &it->problem, &setup, e))
        return -1;
    if (!ctx->copy_set && setup.copy_gbs > 0) {
        if (fdt_db_run_set_copy(ctx->db, ctx->run_id, setup.copy_gbs, e))
            return -1;
        ctx->copy_set = 1;
    }
    if (!ctx->clocks_set && setup.clocks.known) { /* the run's start: its first setup */
        if (fdt_db_run_set_clocks(ctx->db, ctx->run_id, FDT_DB_CLOCKS_START,
                                  d->driver_source, &setup.clocks, e))
            return -1;
        ctx->clocks_set = 1;
    }
    int n = it->ncand;
    fdt_cand v[FDT_RETUNE_TOP], *pv[FDT_RETUNE_TOP];
    for (int i = 0; i < n; i++) {
        fdt_cand_init(&v[i], FDT_CAND_STENCIL, NULL, NULL);
        if (fdt_config_parse(it->cand[i].ev.config, &v[i].cfg, &v[i].err))
            v[i].state = FDT_CAND_GENERATE_FAILED; /* not built: a compile_error row */
        pv[i] = &v[i];
    }
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    o.parallel = parallel;
    int rc = fdt_target_build(t, &it->problem, pv, (size_t)n, &o, e);
    fdt_timing_opts full;
    fdt_timing_opts_default(&full);
    fdt_eval_result r;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (fdt_evaluate_cand(ctx->w, &it->problem, &v[i], &full, &r, e)) {
            rc = -1;
            break;
        }
        fdt_tune_result_to_row(&r, it->cand[i].ev.config, ctx->run_id, it->problem_id,
                               FDT_DB_FULL, &rows[i]);
        int64_t id = 0;
        if (fdt_db_eval_insert(ctx->db, &rows[i], &id, e))
            rc = -1;
        rows[i].id = id;
    }
    for (int i = 0; i < n; i++)
        fdt_cand_free(&v[i]);
    return rc;
}

/* The budgeted re-search: the tuner's own loop in today's environment, recorded as a retune
 * run; it resumes what this environment already measured, so it spends its budget on
 * configs not tried here yet. The decision is left to fdt_retune_conclude. */
static int research(fdt_retune_ctx *ctx, const fdt_retune_item *it, fdt_recipe *rec,
                    const fdt_retune_opts *o, fdt_tune_progress cb, void *cbctx,
                    fdt_retune_outcome *out, fdt_err *e)
{
    if (!rec)
        return fdt_err_set(e, "re-search: no recipe for %s", fdt_op_name(it->problem.op));
    fdt_tune_ctx tc = {.w = ctx->w, .db = ctx->db, .device_id = ctx->device_id,
                       .env_id = ctx->env_id, .dev = ctx->dev};
    fdt_tune_opts to;
    fdt_tune_opts_default(&to);
    to.strategy = o->strategy;
    to.budget = o->budget;
    to.seed = o->seed;
    if (o->parallel > 0)
        to.parallel = o->parallel;
    to.command = o->command;
    to.stop = o->stop;
    to.kind = FDT_DB_RETUNE;
    to.decide = 0;
    to.stop_rules.all = 1; /* a re-search spends the budget asked for (fdt_stop.h) */
    fdt_tune_summary *sum = calloc(1, sizeof *sum);
    if (!sum)
        return fdt_err_set(e, "re-search: out of memory");
    int rc = fdt_tune_problem(&tc, rec, &it->problem, &to, cb, cbctx, sum, e);
    out->researched = 1;
    out->research_run_id = sum->run_id;
    out->research_tried = sum->tried;
    free(sum);
    if (out->research_run_id > 0) {
        fdt_db_row *row = malloc(sizeof *row);
        int found = 0;
        fdt_err qe;
        if (row && fdt_db_run_best(ctx->db, out->research_run_id, it->problem_id, row, &found,
                                   &qe) == 0 && found) {
            snprintf(out->research_best, sizeof out->research_best, "%s", row->ev.config);
            out->research_best_ms = row->ev.time_ms;
        }
        free(row);
    }
    return rc ? fdt_err_wrap(e, "re-search") : 0;
}

void fdt_retune_apply_clocks(fdt_retune_outcome *out, const fdt_clocks stored[2],
                             const fdt_clocks now[2])
{
    if (out->ncheck == 0)
        return;
    fdt_retune_check *c = &out->check[0];
    char why[sizeof c->message];
    c->verdict = fdt_decide_judge_clocks(c->verdict, stored, now, why, sizeof why);
    if (c->verdict != FDT_DECIDE_THROTTLED)
        return;
    snprintf(c->message, sizeof c->message, "%s", why);
    out->regressed = 0;
    out->research = out->env_changed || out->forced;
}

/* The end of today's measurements (so far) on the run, then the stored best's verdict in
 * the light of both runs' clocks (fdt_retune_apply_clocks). */
static int judge_clocks(fdt_retune_ctx *ctx, const fdt_retune_item *it, fdt_retune_outcome *out,
                        fdt_err *e)
{
    if (fdt_db_run_set_clocks(ctx->db, ctx->run_id, FDT_DB_CLOCKS_END, NULL,
                              fdt_worker_clocks(ctx->w), e))
        return -1;
    if (out->ncheck == 0 || it->ncand == 0)
        return 0;
    fdt_clocks stored[2], now[2];
    char src[8];
    fdt_clocks_init(&stored[0]);
    fdt_clocks_init(&stored[1]);
    if ((it->cand[0].source == FDT_DB_USER &&
         fdt_db_run_clocks(ctx->db, it->cand[0].ev.run_id, &stored[0], &stored[1], src,
                           sizeof src, e)) ||
        fdt_db_run_clocks(ctx->db, ctx->run_id, &now[0], &now[1], src, sizeof src, e))
        return -1;
    fdt_retune_apply_clocks(out, stored, now);
    return 0;
}

int fdt_retune_problem(fdt_retune_ctx *ctx, const fdt_retune_item *it, fdt_recipe *rec,
                       const fdt_retune_opts *o, fdt_tune_progress cb, void *cbctx,
                       fdt_retune_outcome *out, fdt_err *e)
{
    double t0 = fdt_now();
    fdt_db_eval *rows = calloc(FDT_RETUNE_TOP, sizeof *rows);
    if (!rows) {
        memset(out, 0, sizeof *out);
        out->fastest_ms = out->research_best_ms = NAN;
        snprintf(out->error, sizeof out->error, "out of memory");
        return fdt_err_set(e, "retune: out of memory");
    }
    int rc = measure(ctx, it, o->parallel, rows, e);
    if (rc) {
        /* Nothing judged: the report shows the stored best, untouched. */
        fdt_retune_assess(it, rows, 0, &ctx->env, o->threshold, o->force_env, out);
        out->ncheck = 0;
        out->regressed = out->research = 0;
        out->action = FDT_RETUNE_KEPT;
        snprintf(out->reason, sizeof out->reason, "not checked");
        out->run_id = ctx->run_id;
        snprintf(out->error, sizeof out->error, "re-measure: %s", e->msg);
        free(rows);
        out->wall_s = fdt_now() - t0;
        return -1;
    }
    fdt_retune_assess(it, rows, it->ncand, &ctx->env, o->threshold, o->force_env, out);
    free(rows);
    out->run_id = ctx->run_id;
    if (judge_clocks(ctx, it, out, e)) {
        snprintf(out->error, sizeof out->error, "%s", e->msg);
        out->wall_s = fdt_now() - t0;
        return -1;
    }
    int search_failed = 0;
    if (out->research && !(o->stop && *o->stop)) {
        if (research(ctx, it, rec, o, cb, cbctx, out, e)) {
            search_failed = 1;
            snprintf(out->error, sizeof out->error, "%s", e->msg);
        }
    }
    /* Conclude even after a failed re-search: what it measured is stored and counts. */
    int64_t runs[2] = {ctx->run_id, out->research_run_id};
    fdt_err ce;
    if (fdt_retune_conclude(ctx->db, it, ctx->device_id, runs, 2, o->threshold, out, &ce)) {
        snprintf(out->error, sizeof out->error, "%s", ce.msg);
        *e = ce;
        rc = -1;
    }
    out->wall_s = fdt_now() - t0;
    return search_failed ? -1 : rc;
}

/* ---------------------------------------------------------------- lock */

/* fcntl locks belong to the process, so a second acquire from the same process would
 * succeed and its release would drop the first; this refuses it instead. */
static pid_t held_by;

static void read_holder(int fd, char *buf, size_t n)
{
    ssize_t got = pread(fd, buf, n - 1, 0);
    buf[got > 0 ? got : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
}

int fdt_retune_lock_acquire(const char *db_path, fdt_retune_lock *l, fdt_err *e)
{
    memset(l, 0, sizeof *l);
    l->fd = -1;
    int w = snprintf(l->path, sizeof l->path, "%s.retune.lock", db_path);
    if (w < 0 || (size_t)w >= sizeof l->path)
        return fdt_err_set(e, "retune lock: path too long");
    if (held_by == getpid()) {
        fdt_err_set(e, "retune lock %s: already held by this process (pid %ld)", l->path,
                    (long)held_by);
        return 1;
    }
    int fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return fdt_err_set(e, "retune lock %s: %s", l->path, strerror(errno));
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        int err = errno;
        if (err != EACCES && err != EAGAIN) {
            close(fd);
            return fdt_err_set(e, "retune lock %s: %s", l->path, strerror(err));
        }
        char holder[256];
        read_holder(fd, holder, sizeof holder);
        struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        if (!holder[0] && fcntl(fd, F_GETLK, &q) == 0 && q.l_type != F_UNLCK)
            snprintf(holder, sizeof holder, "pid %ld", (long)q.l_pid);
        close(fd);
        fdt_err_set(e, "another retune is running on this database (%s; lock file %s)",
                    holder[0] ? holder : "holder unknown", l->path);
        return 1;
    }
    /* Ours. A holder still named in the file died without releasing (killed, power loss). */
    read_holder(fd, l->previous, sizeof l->previous);
    l->took_over = l->previous[0] != 0;
    char host[256] = "unknown", when[32];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = 0;
    fdt_retune_cutoff(time(NULL), 0, when, sizeof when);
    char line[600];
    int len = snprintf(line, sizeof line, "pid %ld on %s since %s\n", (long)getpid(), host, when);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {
        int err = errno;
        close(fd);
        return fdt_err_set(e, "retune lock %s: write: %s", l->path, strerror(err));
    }
    l->fd = fd;
    held_by = getpid();
    return 0;
}

void fdt_retune_lock_release(fdt_retune_lock *l)
{
    if (l->fd < 0)
        return;
    /* Emptied rather than removed: removing would let a waiter lock the old inode while a
     * newcomer creates and locks a new file, two holders at once. */
    if (ftruncate(l->fd, 0) != 0) {
        /* the lock still goes with the close; the next holder reports a take-over */
    }
    close(l->fd);
    l->fd = -1;
    held_by = 0;
}
