/* The process of one GPU in a run over several (fdt_many.h): forked by fdtune with its copy
 * of the recipes, it opens a session of its own (its own connection to the database, the
 * GPU's worker), then tunes each problem fdtune sends and reports the tuning events and each
 * outcome back. It is put in a process group of its own, so that Ctrl-C reaches fdtune alone,
 * which passes the stop on (SIGTERM); it dies with fdtune. */
#include "many_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

void many_flatten(const fdt_tune_event *ev, flat_event *f)
{
    memset(f, 0, sizeof *f);
    f->kind = ev->kind;
    if (ev->p)
        f->p = *ev->p;
    snprintf(f->config, sizeof f->config, "%s", ev->config ? ev->config : "");
    snprintf(f->stage, sizeof f->stage, "%s", ev->stage ? ev->stage : "");
    if (ev->r) {
        f->has_r = 1;
        f->r = *ev->r;
    }
    if (ev->setup) {
        f->has_setup = 1;
        f->setup = *ev->setup;
    }
    f->done = ev->done;
    f->total = ev->total;
    f->best_gbs = ev->best_gbs;
    f->best_frac = ev->best_frac;
    f->copy_gbs = ev->copy_gbs;
    f->elapsed_s = ev->elapsed_s;
    f->eta_s = ev->eta_s;
    f->compile_s = ev->compile_s;
    f->survivors = ev->survivors;
    f->resumed = ev->resumed;
    f->compile_failed = ev->compile_failed;
    f->cached = ev->cached;
    f->compiled = ev->compiled;
}

void many_unflatten(const flat_event *f, fdt_tune_event *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->kind = f->kind;
    ev->p = &f->p;
    ev->config = f->config;
    ev->stage = f->stage;
    ev->r = f->has_r ? &f->r : NULL;
    ev->setup = f->has_setup ? &f->setup : NULL;
    ev->done = f->done;
    ev->total = f->total;
    ev->best_gbs = f->best_gbs;
    ev->best_frac = f->best_frac;
    ev->copy_gbs = f->copy_gbs;
    ev->elapsed_s = f->elapsed_s;
    ev->eta_s = f->eta_s;
    ev->compile_s = f->compile_s;
    ev->survivors = f->survivors;
    ev->resumed = f->resumed;
    ev->compile_failed = f->compile_failed;
    ev->cached = f->cached;
    ev->compiled = f->compiled;
}

/* fdt_tune_progress: each event goes to fdtune as it happens. */
static void send_event(void *ctx, const fdt_tune_event *ev)
{
    const runner_args *a = ctx;
    flat_event f;
    many_flatten(ev, &f);
    fdt_err e;
    fdt_frame_write(a->fd, RN_EVENT, &f, sizeof f, &e);
}

/* Tunes problem k and reports its outcome. */
static void tune_one(const runner_args *a, const fdt_session *s, const fdt_tune_ctx *ctx,
                     const tune_msg *m)
{
    int k = m->k;
    done_msg *d = calloc(1, sizeof *d);
    fdt_err e;
    if (!d)
        _exit(4); /* fdtune sees the process end: the GPU failed, the problem goes on */
    fdt_problem p = a->v[k].p;
    fdt_tune_opts o;
    fdt_tune_opts_for(a->rq, a->rec[p.op], m->deadline, s->stop, &o);
    o.share = m->share;
    d->problem = k;
    d->rc = fdt_tune_problem(ctx, a->rec[p.op], &p, &o, send_event, (void *)a, &d->sum, &e);
    if (d->rc)
        snprintf(d->error, sizeof d->error, "%s", e.msg);
    fdt_frame_write(a->fd, RN_DONE, d, sizeof *d, &e);
    free(d);
}

void many_runner_main(const runner_args *a)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive fdtune */
    if (getppid() != a->parent)
        _exit(1); /* fdtune died before the line above */
    setpgid(0, 0);
    signal(SIGPIPE, SIG_IGN); /* a worker that died is an error to handle, not a signal */
    fdt_session_opts so = *a->so;
    so.select = 0;
    so.db = NULL;
    fdt_session s;
    fdt_session_gpu *g = NULL;
    fdt_err e;
    if (fdt_session_open(&so, &s, &e) != FDT_STATUS_OK || fdt_session_add_gpu(&s, a->live, &g, &e)) {
        fdt_frame_write(a->fd, RN_FAILED, e.msg, strlen(e.msg) + 1, &e);
        fdt_session_close(&s);
        _exit(2);
    }
    fdt_frame_write(a->fd, RN_READY, &g->dev, sizeof g->dev, &e);
    fdt_tune_ctx ctx;
    fdt_tune_ctx_of(&s, g, &ctx);
    for (;;) {
        uint32_t type;
        void *data = NULL;
        size_t n = 0;
        if (fdt_frame_read(a->fd, &type, &data, &n, -1, &e) != 0)
            break; /* fdtune is gone */
        tune_msg m = {.k = -1};
        if (type == RN_TUNE && n == sizeof m)
            memcpy(&m, data, sizeof m);
        free(data);
        if (type != RN_TUNE || m.k < 0)
            break;
        tune_one(a, &s, &ctx, &m);
    }
    fdt_session_close(&s);
    _exit(0);
}
