/* A whole retune (fdt_retune_run): the database and its retune lock, a session over it, the
 * plan for the GPUs visible here, and GPU by GPU a worker and a retune run in which every
 * item of the plan is re-measured, re-searched when due and concluded (retune.c); then the
 * status that follows from the outcomes. What happens is told through events, as it happens;
 * what it found is in the report. */
#include "fdt_retune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void fdt_retune_request_init(fdt_retune_request *rq)
{
    memset(rq, 0, sizeof *rq);
    fdt_retune_opts_default(&rq->o);
    rq->timeout_s = 30;
    rq->fdtune_version = "";
}

int fdt_retune_unrecovered(const fdt_retune_outcome *o)
{
    return (o->regressed && !o->recovered) || o->action == FDT_RETUNE_LOST;
}

fdt_status fdt_retune_status(const fdt_retune_report *rep)
{
    int fail = 0;
    for (size_t i = 0; i < rep->plan.n; i++)
        if (rep->done[i] && fdt_retune_unrecovered(&rep->out[i]))
            fail = 1;
    return rep->interrupted ? FDT_STATUS_INTERRUPTED
           : rep->errors    ? FDT_STATUS_ERROR
           : fail           ? FDT_STATUS_FAILED
                            : FDT_STATUS_OK;
}

void fdt_retune_report_free(fdt_retune_report *rep)
{
    fdt_retune_plan_free(&rep->plan);
    free(rep->out);
    free(rep->done);
    rep->out = NULL;
    rep->done = NULL;
}

/* What the GPU part shares. */
typedef struct job {
    const fdt_retune_request *rq;
    fdt_retune_event_fn on_event;
    fdt_tune_progress on_progress;
    void *ctx;
    fdt_retune_report *rep;
    fdt_session *s;
    fdt_recipe *rec[FDT_OP_COUNT];
    fdt_retune_opts o;
} job;

static void tell(const job *j, fdt_retune_event *ev)
{
    ev->rep = j->rep;
    if (j->on_event)
        j->on_event(j->ctx, ev);
}

static void gpu_failed(job *j, fdt_retune_gpu *gd, const fdt_device *info, const fdt_err *e)
{
    snprintf(gd->error, sizeof gd->error, "%s", e->msg);
    fdt_retune_event ev = {.kind = FDT_RETUNE_EV_GPU_ERROR, .gpu = info, .text = e->msg};
    tell(j, &ev);
    j->rep->errors++;
}

/* The items of visible device li, in plan order, in one retune run on its own worker. */
static void retune_gpu(job *j, int li)
{
    fdt_retune_report *rep = j->rep;
    const fdt_retune_plan *plan = &rep->plan;
    size_t first = plan->n, count = 0;
    for (size_t i = 0; i < plan->n; i++)
        if (plan->items[i].live == li) {
            first = first < i ? first : i;
            count++;
        }
    if (!count)
        return;
    const fdt_device *info = &j->s->probe.device[li];
    fdt_retune_gpu *gd = &rep->gpus[rep->ngpus++];
    memset(gd, 0, sizeof *gd);
    gd->live = li;
    fdt_db_env_from_device(info, j->rq->fdtune_version, &gd->env);
    fdt_session_gpu *g;
    fdt_err e;
    if (fdt_session_add_gpu(j->s, li, &g, &e)) {
        gpu_failed(j, gd, info, &e);
        return;
    }
    fdt_retune_ctx ctx = {.w = g->w, .db = j->s->db, .device_id = g->device_id,
                          .env_id = g->env_id, .dev = &g->dev, .env = g->env};
    fdt_db_run run;
    fdt_db_run_init(&run);
    run.kind = FDT_DB_RETUNE;
    snprintf(run.command, sizeof run.command, "%s", j->o.command);
    snprintf(run.strategy, sizeof run.strategy, "re-measure");
    run.device_id = ctx.device_id;
    run.env_id = ctx.env_id;
    if (fdt_db_run_begin(j->s->db, &run, &ctx.run_id, &e)) {
        gpu_failed(j, gd, info, &e);
        fdt_session_stop_gpu(g);
        return;
    }
    gd->run_id = ctx.run_id;
    gd->started = 1;
    size_t k = 0;
    for (size_t i = first; i < plan->n && !*j->s->stop; i++) {
        const fdt_retune_item *it = &plan->items[i];
        if (it->live != li)
            continue;
        fdt_retune_event ev = {.kind = FDT_RETUNE_EV_BEGIN, .gpu = info, .item = it,
                               .k = ++k, .count = count};
        tell(j, &ev);
        fdt_retune_outcome *oc = &rep->out[i];
        int prc = fdt_retune_problem(&ctx, it, j->rec[it->problem.op], &j->o, j->on_progress,
                                     j->ctx, oc, &e);
        rep->done[i] = 1;
        rep->errors += prc != 0;
        ev.kind = FDT_RETUNE_EV_END;
        ev.out = oc;
        ev.text = prc ? (oc->error[0] ? oc->error : e.msg) : NULL;
        tell(j, &ev);
    }
    fdt_db_run_status rs = *j->s->stop ? FDT_DB_INTERRUPTED : FDT_DB_DONE;
    if (fdt_db_run_finish(j->s->db, ctx.run_id, rs, &e)) {
        fdt_retune_event ev = {.kind = FDT_RETUNE_EV_ERROR, .text = e.msg};
        tell(j, &ev);
        rep->errors++;
    }
    fdt_session_stop_gpu(g);
}

/* After the session: the catalogue, the plan, its recipes; then the GPUs. */
static fdt_status plan_and_run(job *j, fdt_err *e)
{
    fdt_retune_report *rep = j->rep;
    const fdt_retune_request *rq = j->rq;
    fdt_catalogue *cat = NULL;
    fdt_status st = FDT_STATUS_ERROR;
    if (fdt_catalogue_load_default(&cat, e))
        return st;
    j->s->cat = cat;
    fdt_retune_filter flt;
    fdt_retune_filter_init(&flt);
    flt.gpu = rq->gpu;
    fdt_device visible; /* --gpu auto: the stored devices of the visible GPU's model */
    int host;           /* --cpu: the host CPU's */
    if (rq->cpu) {
        if (fdt_session_select_cpu(rq->cpu, &rep->probe, &visible, &host, e))
            goto out;
        flt.gpu = fdt_session_gpu_text(&visible, NULL);
    } else if (fdt_session_gpu_auto(rq->gpu)) {
        if (fdt_session_auto_device(NULL, &rep->probe, &visible, e))
            goto out;
        flt.gpu = fdt_session_gpu_text(&visible, NULL);
    }
    flt.ops = rq->ops;
    flt.absorb_w = rq->absorb_w;
    flt.absorb_s = rq->absorb_s;
    if (rq->since_s > 0) {
        fdt_retune_cutoff(time(NULL), rq->since_s, rep->since, sizeof rep->since);
        flt.since = rep->since;
    }
    if (fdt_retune_plan_build(j->s->db, rep->probe.device, rep->probe.ndevices, &flt,
                              &rep->plan, e))
        goto out;
    size_t n = rep->plan.n ? rep->plan.n : 1;
    rep->out = calloc(n, sizeof *rep->out);
    rep->done = calloc(n, sizeof *rep->done);
    if (!rep->out || !rep->done) {
        fdt_err_set(e, "out of memory");
        goto out;
    }
    if (rep->plan.n == 0) {
        fdt_retune_event ev = {.kind = FDT_RETUNE_EV_NOTHING};
        tell(j, &ev);
    }
    /* Recipes first: a missing one should cost no GPU time. */
    for (size_t i = 0; i < rep->plan.n; i++) {
        fdt_op op = rep->plan.items[i].problem.op;
        fdt_dialect d = rq->cpu ? FDT_DIALECT_C : FDT_DIALECT_HIP;
        if (!j->rec[op] && fdt_recipe_load_for_dialect(op, d, NULL, &j->rec[op], e)) {
            st = FDT_STATUS_USAGE;
            goto out;
        }
    }
    rep->ran = 1;
    for (int li = 0; li < rep->probe.ndevices && !*j->s->stop; li++)
        if (fdt_target_device_is_cpu(&rep->probe.device[li]) == (rq->cpu != NULL))
            retune_gpu(j, li); /* the GPUs, or with --cpu the host CPU */
    rep->interrupted = *j->s->stop != 0;
    st = fdt_retune_status(rep);
out:
    for (int op = 0; op < FDT_OP_COUNT; op++)
        fdt_recipe_free(j->rec[op]);
    j->s->cat = NULL;
    fdt_catalogue_free(cat);
    return st;
}

fdt_status fdt_retune_run(const fdt_retune_request *rq, fdt_retune_event_fn on_event,
                          fdt_tune_progress on_progress, void *ctx, fdt_retune_report *rep,
                          fdt_err *e)
{
    memset(rep, 0, sizeof *rep);
    if (rq->db_path)
        snprintf(rep->db_path, sizeof rep->db_path, "%s", rq->db_path);
    else if (fdt_db_default_path(rep->db_path, sizeof rep->db_path, e))
        return FDT_STATUS_ERROR;
    /* Do no harm: nothing is opened, migrated or locked before a GPU is known to be there.
     * A missing database is said first, as it costs only a look. */
    struct stat sb;
    if (stat(rep->db_path, &sb) != 0 && errno == ENOENT) {
        fdt_err_set(e, "%s: no tuning database here", rep->db_path);
        return FDT_STATUS_ERROR;
    }
    if (rq->cpu ? fdt_session_probe_cpu(rq->probe_host, &rep->probe, e)
                : (rq->probe ? rq->probe : fdt_probe_devices)(&rep->probe, e))
        return FDT_STATUS_ERROR;
    if (!rq->cpu && fdt_session_gpu_count(&rep->probe) == 0) {
        fdt_err_set(e, "no GPU is visible");
        return FDT_STATUS_NO_GPU;
    }
    fdt_db *db = NULL;
    fdt_status opened = fdt_session_open_db(rep->db_path, FDT_DB_READWRITE, &rep->probe, &db, e);
    if (opened != FDT_STATUS_OK)
        return opened;
    job j = {.rq = rq, .on_event = on_event, .on_progress = on_progress, .ctx = ctx,
             .rep = rep};
    fdt_retune_lock lock;
    int lr = fdt_retune_lock_acquire(rep->db_path, &lock, e);
    if (lr) {
        fdt_db_close(db);
        return lr > 0 ? FDT_STATUS_BUSY : FDT_STATUS_ERROR;
    }
    if (lock.took_over) {
        fdt_retune_event ev = {.kind = FDT_RETUNE_EV_LOCK_TAKEN, .text = lock.previous};
        tell(&j, &ev);
    }
    fdt_session_opts so;
    fdt_session_opts_init(&so);
    so.db = db;
    so.fdtune_version = rq->fdtune_version;
    so.probed = &rep->probe;
    so.cpu = rq->cpu;
    so.worker.eval_timeout_ms = rq->timeout_s * 1000;
    fdt_session *s = malloc(sizeof *s);
    fdt_status st = FDT_STATUS_ERROR;
    if (!s) {
        fdt_err_set(e, "out of memory");
        goto out;
    }
    j.s = s;
    st = fdt_session_open(&so, s, e);
    if (s->stale) {
        fdt_retune_event ev = {.kind = FDT_RETUNE_EV_STALE, .n = s->stale};
        tell(&j, &ev);
    }
    rep->probe = s->probe;
    if (st == FDT_STATUS_OK) {
        j.o = rq->o;
        j.o.stop = s->stop;
        st = plan_and_run(&j, e);
    }
    fdt_session_close(s);
out:
    free(s);
    fdt_retune_lock_release(&lock);
    fdt_db_close(db);
    return st;
}
