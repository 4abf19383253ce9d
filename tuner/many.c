/* A tuning run over several GPUs (fdt_many.h): fdtune's side. It checks the database and the
 * request, forks one process per GPU (many_runner.c) sharing one compile pool, then hands out
 * the problems of each device model to that model's idle GPUs, relays their events, retries
 * the problem of a GPU that failed on another GPU of the model, and gathers the outcomes. */
#include "many_internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef enum { R_STARTING, R_IDLE, R_BUSY, R_SUSPECT, R_QUITTING, R_GONE } rstate;

/* fdtune's view of one GPU's process. */
typedef struct runner {
    pid_t pid;
    int fd;
    rstate st;
    int cur;        /* BUSY: the problem it tunes */
    int waits_for;  /* SUSPECT: the problem whose retry decides whether it failed */
    int termed;     /* SIGTERM sent */
} runner;

typedef struct run {
    fdt_many_report *out;
    runner r[FDT_MAX_DEVICES];
    fdt_many_progress cb;
    void *cbctx;
    const volatile sig_atomic_t *stop;
    double deadline;
} run;

static void emit(run *x, fdt_many_event ev)
{
    ev.report = x->out;
    if (x->cb)
        x->cb(x->cbctx, &ev);
}

static void to_gpu(runner *r, uint32_t type, const void *data, size_t n)
{
    fdt_err e;
    if (r->fd >= 0)
        fdt_frame_write(r->fd, type, data, n, &e); /* a dead one is noticed by its EOF */
}

static void quit(runner *r)
{
    to_gpu(r, RN_QUIT, NULL, 0);
    r->st = R_QUITTING;
}

/* ------------------------------------------------------------------ scheduling */

/* 1 while GPU h can still take problems. */
static int in_run(const run *x, int h)
{
    return h >= 0 && !x->out->gpu[h].failed && x->r[h].st != R_GONE &&
           x->r[h].st != R_QUITTING;
}

/* The next problem for GPU g, -1: none. First a retry (never on the GPU it failed on), then
 * a problem this GPU measured before (a rerun resumes it), then one no GPU in the run did,
 * then the last problem of the GPU that has the most of its own left (at least two), so that
 * a rerun resumes where it can and no GPU idles long. */
static int next_problem(const run *x, int g)
{
    const fdt_many_report *o = x->out;
    int own = -1, free_ = -1, left[FDT_MAX_DEVICES] = {0}, last[FDT_MAX_DEVICES];
    for (int i = 0; i < o->n; i++) {
        const fdt_many_problem *p = &o->v[i];
        if (p->model != o->gpu[g].model || p->state != FDT_MANY_PENDING || p->failed_on == g)
            continue;
        if (p->tries > 0)
            return i;
        if (p->home == g && own < 0)
            own = i;
        else if (!in_run(x, p->home) && free_ < 0)
            free_ = i;
        else if (p->home != g && in_run(x, p->home)) {
            left[p->home]++;
            last[p->home] = i;
        }
    }
    if (own >= 0 || free_ >= 0)
        return own >= 0 ? own : free_;
    int h = -1;
    for (int k = 0; k < o->ngpus; k++)
        if (left[k] >= 2 && (h < 0 || left[k] > left[h]))
            h = k;
    return h >= 0 ? last[h] : -1;
}

/* 1 while problems of model m may still need a GPU (pending, or running and retryable). */
static int model_busy(const fdt_many_report *o, int m)
{
    for (int i = 0; i < o->n; i++)
        if (o->v[i].model == m &&
            (o->v[i].state == FDT_MANY_PENDING || o->v[i].state == FDT_MANY_RUNNING))
            return 1;
    return 0;
}

static int stopping(const run *x)
{
    return *x->stop || (x->deadline > 0 && fdt_now() > x->deadline);
}

/* The share of the problem GPU g begins now (fdt_tune_opts.share): its model's GPUs share
 * what remains of the time limit among the rounds of that model's problems still to tune
 * (pending or just given out), one problem per GPU a round. */
static int share(const run *x, int g)
{
    const fdt_many_report *o = x->out;
    int m = o->gpu[g].model, left = 0, gpus = 0;
    for (int i = 0; i < o->n; i++)
        left += o->v[i].model == m && (o->v[i].state == FDT_MANY_PENDING ||
                                       (o->v[i].state == FDT_MANY_RUNNING && o->v[i].gpu == g));
    for (int h = 0; h < o->ngpus; h++)
        gpus += o->gpu[h].model == m && in_run(x, h);
    gpus = gpus > 0 ? gpus : 1;
    return (left + gpus - 1) / gpus;
}

/* Gives every idle GPU its next problem; one with nothing left to do quits. */
static void schedule(run *x)
{
    fdt_many_report *o = x->out;
    for (int g = 0; g < o->ngpus; g++) {
        runner *r = &x->r[g];
        if (r->st != R_IDLE)
            continue;
        int k = stopping(x) ? -1 : next_problem(x, g);
        if (k < 0) {
            if (stopping(x) || !model_busy(o, o->gpu[g].model))
                quit(r);
            continue;
        }
        fdt_many_problem *p = &o->v[k];
        if (p->tries > 0) {
            for (int i = 0; i < o->nretries; i++)
                if (o->retries[i].problem == k && o->retries[i].to < 0)
                    o->retries[i].to = g;
            emit(x, (fdt_many_event){.kind = FDT_MANY_RETRY, .gpu = g, .problem = k,
                                     .from = p->failed_on});
        }
        p->state = FDT_MANY_RUNNING;
        p->gpu = g;
        r->st = R_BUSY;
        r->cur = k;
        tune_msg m = {.k = k, .share = share(x, g), .deadline = x->deadline};
        to_gpu(r, RN_TUNE, &m, sizeof m);
    }
}

/* GPU g is out of the run for good. */
static void take_out(run *x, int g, const char *why)
{
    fdt_many_gpu *gpu = &x->out->gpu[g];
    if (gpu->failed)
        return;
    gpu->failed = 1;
    if (why != gpu->why)
        snprintf(gpu->why, sizeof gpu->why, "%s", why);
    if (x->r[g].st == R_IDLE || x->r[g].st == R_SUSPECT)
        quit(&x->r[g]);
    emit(x, (fdt_many_event){.kind = FDT_MANY_GPU_FAILED, .gpu = g, .why = gpu->why});
}

/* Problem k has an outcome: a GPU that waited for it is decided (the retry worked: that GPU
 * failed; it did not: the problem was to blame, the GPU goes on). */
static void settle(run *x, int k, int worked)
{
    for (int g = 0; g < x->out->ngpus; g++) {
        runner *r = &x->r[g];
        if (r->st != R_SUSPECT || r->waits_for != k)
            continue;
        if (worked) {
            take_out(x, g, x->out->gpu[g].why);
        } else {
            r->st = R_IDLE;
            x->out->gpu[g].why[0] = 0;
        }
    }
}

static void finish_problem(run *x, int k, fdt_many_state st, const char *error)
{
    fdt_many_problem *p = &x->out->v[k];
    p->state = st;
    if (error)
        snprintf(p->error, sizeof p->error, "%s", error);
    emit(x, (fdt_many_event){.kind = FDT_MANY_FINISHED, .gpu = p->gpu, .problem = k});
    settle(x, k, st == FDT_MANY_DONE);
}

/* 1 when another GPU of g's model can still take a retry. */
static int other_gpu(const run *x, int g)
{
    const fdt_many_report *o = x->out;
    for (int i = 0; i < o->ngpus; i++)
        if (i != g && o->gpu[i].model == o->gpu[g].model && !o->gpu[i].failed &&
            x->r[i].st != R_GONE && x->r[i].st != R_QUITTING && x->r[i].st != R_SUSPECT)
            return 1;
    return 0;
}

/* Problem k failed on GPU g because the GPU did (dead: its process ended). */
static void gpu_failed(run *x, int g, int k, const char *why, int dead)
{
    fdt_many_report *o = x->out;
    fdt_many_problem *p = &o->v[k];
    runner *r = &x->r[g];
    snprintf(o->gpu[g].why, sizeof o->gpu[g].why, "%s", why);
    if (p->tries >= 2 || !other_gpu(x, g) || stopping(x)) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s%s", why,
                 p->tries >= 2 ? " (it failed on two GPUs: the problem is blamed)"
                 : stopping(x) ? "" : " (no other GPU of this model to retry on)");
        if (dead) {
            take_out(x, g, why);
        } else {
            r->st = R_IDLE; /* the problem is to blame, or nothing else can run it */
            o->gpu[g].why[0] = 0;
        }
        finish_problem(x, k, FDT_MANY_FAILED, msg);
        return;
    }
    fdt_many_retry *v = realloc(o->retries, (size_t)(o->nretries + 1) * sizeof *v);
    if (v) {
        o->retries = v;
        v[o->nretries++] = (fdt_many_retry){.problem = k, .from = g, .to = -1};
        snprintf(v[o->nretries - 1].why, sizeof v->why, "%s", why);
    }
    p->state = FDT_MANY_PENDING;
    p->failed_on = g;
    emit(x, (fdt_many_event){.kind = FDT_MANY_SUSPECT, .gpu = g, .problem = k, .why = why});
    if (dead) {
        take_out(x, g, why);
    } else {
        r->st = R_SUSPECT;
        r->waits_for = k;
    }
}

/* ------------------------------------------------------------------ messages */

static void on_done(run *x, int g, const done_msg *d)
{
    fdt_many_report *o = x->out;
    runner *r = &x->r[g];
    if (r->st != R_BUSY || d->problem != r->cur)
        return;
    fdt_many_problem *p = &o->v[d->problem];
    p->sum = d->sum;
    p->tries++;
    r->st = R_IDLE;
    if (d->rc == 0) {
        o->gpu[g].tuned++;
        finish_problem(x, d->problem, FDT_MANY_DONE, NULL);
    } else if (d->sum.gpu_failed) {
        gpu_failed(x, g, d->problem, d->error, 0);
    } else {
        finish_problem(x, d->problem, FDT_MANY_FAILED, d->error);
    }
}

/* The process of GPU g ended: reaped, and its problem (if any) handed on. */
static void on_gone(run *x, int g)
{
    runner *r = &x->r[g];
    rstate was = r->st;
    close(r->fd);
    r->fd = -1;
    int status = 0;
    while (waitpid(r->pid, &status, 0) < 0 && errno == EINTR)
        ;
    r->st = R_GONE;
    if (was == R_QUITTING && WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return;
    char why[256];
    if (WIFSIGNALED(status))
        snprintf(why, sizeof why, "the GPU's process was killed by signal %d (%s)",
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(why, sizeof why, "the GPU's process exited with status %d",
                 WEXITSTATUS(status));
    if (was == R_BUSY) {
        x->out->v[r->cur].tries++;
        gpu_failed(x, g, r->cur, why, 1);
    } else if (!x->out->gpu[g].failed && was != R_QUITTING) {
        take_out(x, g, why);
    }
    if (was == R_SUSPECT) /* it cannot come back: the retry decides nothing more */
        take_out(x, g, x->out->gpu[g].why[0] ? x->out->gpu[g].why : why);
}

/* One message from GPU g; -1 when its process has ended. */
static int on_message(run *x, int g)
{
    runner *r = &x->r[g];
    fdt_many_report *o = x->out;
    uint32_t type;
    void *data = NULL;
    size_t n = 0;
    fdt_err e;
    if (fdt_frame_read(r->fd, &type, &data, &n, -1, &e) != 0)
        return -1;
    if (type == RN_READY && n == sizeof(fdt_device) && r->st == R_STARTING) {
        memcpy(&o->gpu[g].dev, data, n);
        o->gpu[g].started = 1;
        r->st = R_IDLE;
        emit(x, (fdt_many_event){.kind = FDT_MANY_STARTED, .gpu = g});
    } else if (type == RN_FAILED) {
        take_out(x, g, data ? (char *)data : "its worker did not start");
        r->st = R_QUITTING;
    } else if (type == RN_EVENT && n == sizeof(flat_event)) {
        fdt_tune_event ev;
        many_unflatten(data, &ev);
        emit(x, (fdt_many_event){.kind = FDT_MANY_TUNE, .gpu = g, .ev = &ev});
    } else if (type == RN_DONE && n == sizeof(done_msg)) {
        on_done(x, g, data);
    }
    free(data);
    return 0;
}

/* ------------------------------------------------------------------ the run */

/* Device models of the GPUs and the problems of each model, into out. */
static int plan_run(const fdt_probe *pr, const int *live, int nlive, const fdt_tune_request *rq,
                    fdt_many_report *out, fdt_err *e)
{
    for (int i = 0; i < nlive; i++) {
        if (live[i] < 0 || live[i] >= pr->ndevices)
            return fdt_err_set(e, "--devices: no visible device %d (visible: 0..%d)", live[i],
                               pr->ndevices - 1);
        for (int j = 0; j < i; j++)
            if (live[j] == live[i])
                return fdt_err_set(e, "--devices: device %d is listed twice", live[i]);
        fdt_many_gpu *g = &out->gpu[out->ngpus++];
        g->live = live[i];
        g->dev = pr->device[live[i]];
        g->model = out->nmodels;
        for (int j = 0; j < i; j++)
            if (fdt_device_same_model(&out->gpu[j].dev, &g->dev)) {
                g->model = out->gpu[j].model;
                break;
            }
        if (g->model == out->nmodels)
            out->nmodels++;
        out->simulated |= fdt_device_simulated(&g->dev);
    }
    fdt_problem *ps = NULL;
    int np = 0;
    if (fdt_tune_problems(rq, &ps, &np, e))
        return -1;
    out->v = calloc((size_t)(np * out->nmodels) + 1, sizeof *out->v);
    if (!out->v) {
        free(ps);
        return fdt_err_set(e, "out of memory");
    }
    for (int m = 0; m < out->nmodels; m++)
        for (int i = 0; i < np; i++) {
            fdt_many_problem *p = &out->v[out->n++];
            p->p = ps[i];
            p->model = m;
            p->gpu = -1;
            p->failed_on = -1;
            p->home = -1;
        }
    free(ps);
    return 0;
}

/* The GPU of the run whose device has measured problem p before, by the devices stored in db
 * (identity: backend, name, arch, UUID); -1: none. A hint only: errors count as none. */
static int home_of(fdt_db *db, const fdt_many_report *o, const fdt_db_device_list *stored,
                   const fdt_problem *p, int model)
{
    int64_t pid = 0;
    fdt_err e;
    if (fdt_db_problem_find(db, p, &pid, &e) || !pid)
        return -1;
    for (int g = 0; g < o->ngpus; g++) {
        const fdt_device *d = &o->gpu[g].dev;
        if (o->gpu[g].model != model || !d->uuid[0])
            continue;
        for (size_t k = 0; k < stored->n; k++) {
            const fdt_device *s = &stored->v[k];
            char started[32];
            if (!strcmp(s->uuid, d->uuid) && !strcmp(s->name, d->name) &&
                !strcmp(s->arch, d->arch) && !strcmp(s->backend, d->backend) &&
                fdt_db_last_run(db, s->id, pid, started, sizeof started, &e) == 0 && started[0])
                return g;
        }
    }
    return -1;
}

static void find_homes(fdt_db *db, fdt_many_report *o)
{
    fdt_db_device_list stored = {0};
    fdt_err e;
    if (fdt_db_devices(db, NULL, fdt_db_collect_device, &stored, &e) == 0 && !stored.oom)
        for (int i = 0; i < o->n; i++)
            o->v[i].home = home_of(db, o, &stored, &o->v[i].p, o->v[i].model);
    free(stored.v);
}

/* A simulated GPU answers only what its recording has: every problem must be recorded. */
static int check_recorded(const fdt_many_report *o, const char *recording, fdt_err *e)
{
    for (int i = 0; i < o->n; i++) {
        const fdt_many_problem *p = &o->v[i];
        const fdt_device *dev = NULL;
        for (int g = 0; g < o->ngpus && !dev; g++)
            if (o->gpu[g].model == p->model)
                dev = &o->gpu[g].dev;
        size_t rows = 0;
        if (!dev || !fdt_device_simulated(dev))
            continue;
        if (fdt_sim_configs(recording, dev, &p->p, NULL, NULL, &rows, e))
            return -1;
        if (rows == 0) {
            char pk[128];
            fdt_problem_format(&p->p, pk, sizeof pk);
            return fdt_err_set(e, "%s is not recorded in %s: a simulated GPU answers only what "
                               "was recorded", pk, recording);
        }
    }
    return 0;
}

static int start_runners(run *x, const runner_args *tmpl, fdt_err *e)
{
    fdt_many_report *o = x->out;
    for (int g = 0; g < o->ngpus; g++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            return fdt_err_set(e, "socketpair: %s", strerror(errno));
        pid_t pid = fork();
        if (pid < 0) {
            close(sv[0]);
            close(sv[1]);
            return fdt_err_set(e, "fork: %s", strerror(errno));
        }
        if (pid == 0) {
            close(sv[0]);
            for (int i = 0; i < g; i++) /* the other GPUs' sockets are not this one's */
                if (x->r[i].fd >= 0)
                    close(x->r[i].fd);
            runner_args a = *tmpl;
            a.fd = sv[1];
            a.live = o->gpu[g].live;
            many_runner_main(&a);
        }
        close(sv[1]);
        x->r[g] = (runner){.pid = pid, .fd = sv[0], .st = R_STARTING, .cur = -1,
                           .waits_for = -1};
    }
    return 0;
}

/* Stopping: busy GPUs finish the evaluation in flight (SIGTERM, once), idle ones quit. */
static void pass_stop(run *x)
{
    for (int g = 0; g < x->out->ngpus; g++) {
        runner *r = &x->r[g];
        if (r->st == R_BUSY && *x->stop && !r->termed) {
            kill(r->pid, SIGTERM);
            r->termed = 1;
        } else if (r->st == R_IDLE || r->st == R_SUSPECT) {
            quit(r);
        }
    }
}

/* Until every GPU's process has ended. */
static void loop(run *x)
{
    fdt_many_report *o = x->out;
    for (;;) {
        if (stopping(x))
            pass_stop(x);
        schedule(x);
        struct pollfd pfd[FDT_MAX_DEVICES];
        int idx[FDT_MAX_DEVICES], np = 0;
        for (int g = 0; g < o->ngpus; g++)
            if (x->r[g].st != R_GONE) {
                pfd[np] = (struct pollfd){.fd = x->r[g].fd, .events = POLLIN};
                idx[np++] = g;
            }
        if (np == 0)
            return;
        int rc = poll(pfd, (nfds_t)np, 200);
        if (rc < 0 && errno != EINTR)
            return; /* cannot happen with valid descriptors; the processes die with fdtune */
        for (int k = 0; rc > 0 && k < np; k++)
            if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
                if (on_message(x, idx[k]))
                    on_gone(x, idx[k]);
    }
}

/* Counts and the status once every process has ended. */
static fdt_status conclude(run *x, fdt_err *e)
{
    fdt_many_report *o = x->out;
    o->stopped = *x->stop != 0;
    int started = 0;
    for (int g = 0; g < o->ngpus; g++)
        started += o->gpu[g].started;
    for (int i = 0; i < o->n; i++) {
        fdt_many_problem *p = &o->v[i];
        if (p->state == FDT_MANY_PENDING && !stopping(x)) {
            p->state = FDT_MANY_FAILED; /* every GPU of its model failed */
            snprintf(p->error, sizeof p->error, "no GPU of this model was left to tune it");
        }
        o->pending += p->state == FDT_MANY_PENDING;
        o->failed += p->state == FDT_MANY_FAILED;
        o->missing += p->state == FDT_MANY_DONE && !p->sum.have_best;
    }
    if (!started) {
        fdt_err_set(e, "no GPU could be used: %s", o->ngpus ? o->gpu[0].why : "none given");
        return FDT_STATUS_ERROR;
    }
    if (o->stopped)
        return FDT_STATUS_INTERRUPTED;
    if (o->failed) {
        fdt_err_set(e, "%d problem(s) could not be tuned", o->failed);
        return FDT_STATUS_ERROR;
    }
    return o->missing ? FDT_STATUS_FAILED : FDT_STATUS_OK;
}

fdt_status fdt_tune_many(const fdt_session_opts *so, const int *live, int nlive,
                         fdt_recipe *const *rec, const fdt_tune_request *rq,
                         fdt_many_progress cb, void *cbctx, fdt_many_report *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    fdt_session_opts po = *so;
    po.select = 0;
    fdt_session s;
    fdt_status st = fdt_session_open(&po, &s, e);
    if (st == FDT_STATUS_OK && plan_run(&s.probe, live, nlive, rq, out, e))
        st = FDT_STATUS_USAGE;
    if (st == FDT_STATUS_OK && out->simulated &&
        check_recorded(out, so->worker.simulate_from, e))
        st = FDT_STATUS_USAGE;
    if (st != FDT_STATUS_OK) {
        fdt_session_close(&s);
        return st;
    }
    find_homes(s.db, out);
    fdt_session_detach_db(&s); /* each GPU's process opens its own connection */
    fdt_session_arm(&s);
    fdt_err pe;
    /* the GPUs' compile pools share the cores, less one per GPU: its worker measures while
     * the next batch compiles (fdt_tune_opts.overlap) */
    int slots = fdt_rt_cpu_count() - out->ngpus;
    int pooled = fdt_child_pool_share(rq->parallel > 0 ? rq->parallel : slots > 1 ? slots : 1,
                                      &pe) == 0;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
    sigaction(SIGPIPE, &ign, &old_pipe); /* a GPU's process that died is noticed by its EOF */
    run x = {.out = out, .cb = cb, .cbctx = cbctx, .stop = s.stop,
             .deadline = rq->time_s > 0 ? fdt_now() + rq->time_s : 0};
    for (int g = 0; g < FDT_MAX_DEVICES; g++)
        x.r[g] = (runner){.pid = -1, .fd = -1, .st = R_GONE};
    po.probed = &s.probe;
    runner_args tmpl = {.parent = getpid(), .so = &po, .rec = rec, .rq = rq, .v = out->v};
    if (start_runners(&x, &tmpl, e) == 0) {
        loop(&x);
        st = conclude(&x, e);
    } else {
        for (int g = 0; g < out->ngpus; g++) /* the ones started: stop and reap them */
            if (x.r[g].st != R_GONE) {
                kill(x.r[g].pid, SIGKILL);
                on_gone(&x, g);
            }
        st = FDT_STATUS_ERROR;
    }
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (pooled)
        fdt_child_pool_leave();
    fdt_session_close(&s);
    return st;
}

void fdt_many_report_free(fdt_many_report *r)
{
    free(r->v);
    free(r->retries);
    r->v = NULL;
    r->retries = NULL;
}
