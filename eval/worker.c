/* The parent's side of a GPU worker: starts it (fork + socketpair; a simulated GPU's worker
 * is the simulator's, eval/sim.c), resolves its device's target, builds the verification and
 * reference kernels for it, sends candidates, and turns a dead or silent worker into a
 * `crashed` or `timeout` result. A worker that died is started again
 * and the problem set up again before the next candidate, so one bad kernel costs one
 * result, not the run. */
#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "worker_proto.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct fdt_worker {
    char backend[8];
    int index;
    fdt_worker_opts o;
    pid_t pid;
    int fd;
    fdt_device info;
    fdt_target target; /* of info, resolved as the worker says hello */
    int have_problem;
    fdt_problem prob;
    fdt_setup_result setup;
    fdt_clocks clocks; /* the latest read: after a setup or an evaluation */
    int restarts;
};

/* The invariants of the parent's view of its worker (SQLite's assert_pager_state() in
 * spirit): a running worker has both its process and its socket, a reaped one neither; a
 * running one said hello, so its device and target are known; a problem set up is one the
 * generator accepts. Checked as each public call starts and ends. */
static void assert_worker_state(const fdt_worker *w)
{
    FDT_ASSERT(w && w->backend[0] && w->index >= 0, "a worker of a named backend's device");
    FDT_ASSERT((w->pid > 0) == (w->fd >= 0), "running: a process and its socket; reaped: "
                                             "neither");
    FDT_ASSERT(w->pid <= 0 || !strcmp(w->info.backend, w->backend),
               "a running worker said hello for its own backend");
    FDT_ASSERT(w->pid <= 0 || !w->target.backend || w->target.backend ==
                                                          fdt_rt_backend_find(w->backend),
               "a running worker's target compiles with its backend");
    FDT_ASSERT(!w->have_problem || w->prob.nx >= 1, "a problem set up has a grid");
    FDT_ASSERT(w->restarts >= 0, "restarts counted from 0");
    (void)w;
}

void fdt_worker_opts_default(fdt_worker_opts *o)
{
    o->seed = 20241122;
    o->eval_timeout_ms = 60000;
    o->setup_timeout_ms = 900000;
    o->compile_timeout_ms = 300000;
    o->simulate_from = NULL;
}

void fdt_eval_reference_name(const fdt_problem *p, char *buf, size_t n)
{
    snprintf(buf, n, "fdt_ref_%s_r%d_%s", fdt_op_name(p->op), p->R, fdt_prec_name(p->prec));
}

const fdt_device *fdt_worker_device(const fdt_worker *w) { return &w->info; }
const fdt_target *fdt_worker_target(const fdt_worker *w) { return &w->target; }
const fdt_clocks *fdt_worker_clocks(const fdt_worker *w) { return &w->clocks; }
int fdt_worker_restarts(const fdt_worker *w) { return w->restarts; }

/* Reaps the worker; describes how it ended in buf. */
static void reap(fdt_worker *w, int kill_it, char *buf, size_t n)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->pid <= 0) {
        snprintf(buf, n, "worker not running");
        return;
    }
    if (kill_it)
        kill(w->pid, SIGKILL);
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFSIGNALED(status))
        snprintf(buf, n, "worker killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "worker exited with status %d", WEXITSTATUS(status));
    w->pid = -1;
}

/* What the driver does not say of a live device (AMD's Infinity Cache, a peak bandwidth it
 * misreports), from the installed GPU catalogue (recipes/gpus.lua); without a catalogue, or
 * for a GPU it does not know, the driver's description alone (d->catalogue stays ""). */
static void complete_info(fdt_device *d)
{
    fdt_catalogue *cat = NULL;
    fdt_err e;
    if (fdt_catalogue_load_default(&cat, &e))
        cat = NULL;
    fdt_catalogue_complete(cat, d);
    fdt_catalogue_free(cat);
}

uint64_t fdt_eval_flush_bytes(const fdt_device *d, const fdt_problem *p)
{
    int64_t llc = d->l2_bytes;
    if (d->infinity_cache_bytes > llc)
        llc = d->infinity_cache_bytes;
    if (d->llc_bytes > llc)
        llc = d->llc_bytes;
    if (llc <= 0 || fdt_effective_bytes(p) >= 4.0 * (double)llc)
        return 0;
    return (uint64_t)llc * 2;
}

static int spawn(fdt_worker *w, fdt_err *e)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return fdt_err_set(e, "worker: socketpair: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return fdt_err_set(e, "worker: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(sv[0]);
        if (!strcmp(w->backend, FDT_SIM_BACKEND))
            fdt_sim_worker_main(sv[1], w->o.simulate_from, w->index, w->restarts);
        fdt_worker_main(sv[1], w->backend, w->index);
    }
    close(sv[1]);
    w->pid = pid;
    w->fd = sv[0];
    uint32_t type;
    void *data = NULL;
    size_t n = 0;
    int r = fdt_frame_read(w->fd, &type, &data, &n, w->o.setup_timeout_ms, e);
    char how[160];
    if (r == 0 && type == MSG_HELLO && n == sizeof w->info) {
        memcpy(&w->info, data, n);
        free(data);
        complete_info(&w->info);
        if (fdt_target_resolve(&w->info, &w->target, e) == 0)
            return 0;
        reap(w, 1, how, sizeof how);
        return -1;
    }
    if (r == 0 && type == MSG_ERROR)
        fdt_err_set(e, "%s device %d: %s", w->backend, w->index, (char *)data);
    else if (r == 1)
        fdt_err_set(e, "%s device %d: no answer within %d s", w->backend, w->index,
                    w->o.setup_timeout_ms / 1000);
    free(data);
    reap(w, 1, how, sizeof how);
    if (r < 0)
        fdt_err_set(e, "%s device %d: worker failed to start (%s)", w->backend, w->index, how);
    return -1;
}

int fdt_worker_start(const char *backend, int index, const fdt_worker_opts *o, fdt_worker **out,
                     fdt_device *info, fdt_err *e)
{
    *out = NULL;
    if (!fdt_rt_backend_find(backend))
        return fdt_err_set(e, "backend '%s' is not in this build", backend);
    fdt_worker *w = calloc(1, sizeof *w);
    if (!w)
        return fdt_err_set(e, "worker: out of memory");
    snprintf(w->backend, sizeof w->backend, "%s", backend);
    w->index = index;
    fdt_clocks_init(&w->clocks);
    w->fd = -1;
    w->pid = -1;
    if (o)
        w->o = *o;
    else
        fdt_worker_opts_default(&w->o);
    if (spawn(w, e)) {
        free(w);
        return -1;
    }
    assert_worker_state(w);
    if (info)
        *info = w->info;
    *out = w;
    return 0;
}

void fdt_worker_stop(fdt_worker *w)
{
    if (!w)
        return;
    assert_worker_state(w);
    if (w->fd >= 0) {
        fdt_err e;
        fdt_frame_write(w->fd, MSG_QUIT, NULL, 0, &e);
    }
    char how[160];
    if (w->pid > 0) {
        /* Give it a moment to free the device, then insist. */
        for (int i = 0; i < 50; i++) {
            if (waitpid(w->pid, NULL, WNOHANG) == w->pid) {
                w->pid = -1;
                break;
            }
            usleep(20000);
        }
    }
    reap(w, 1, how, sizeof how);
    free(w);
}

/* Sends a request and waits for the answer of the expected type. Returns 0, 1 on timeout
 * (worker killed), -1 on a dead worker or an error message (in e). */
static int request(fdt_worker *w, uint32_t type, const void *a, size_t an, const void *b,
                   size_t bn, uint32_t want, void **reply, size_t *rn, int timeout_ms, fdt_err *e)
{
    *reply = NULL;
    if (w->fd < 0)
        return fdt_err_set(e, "worker not running");
    fdt_sb msg;
    fdt_sb_init(&msg);
    fdt_sb_putn(&msg, a, an);
    if (bn)
        fdt_sb_putn(&msg, b, bn);
    if (msg.oom) {
        fdt_sb_free(&msg);
        return fdt_err_set(e, "worker request: out of memory");
    }
    int rc = fdt_frame_write(w->fd, type, msg.s, msg.len, e);
    fdt_sb_free(&msg);
    char how[160];
    if (rc) {
        reap(w, 1, how, sizeof how);
        return fdt_err_set(e, "%s", how);
    }
    uint32_t got;
    rc = fdt_frame_read(w->fd, &got, reply, rn, timeout_ms, e);
    if (rc == 1) {
        reap(w, 1, how, sizeof how);
        return 1;
    }
    if (rc < 0) {
        reap(w, 0, how, sizeof how);
        return fdt_err_set(e, "%s", how);
    }
    if (got == MSG_ERROR) {
        fdt_err_set(e, "%s", *reply ? (char *)*reply : "worker error");
        free(*reply);
        *reply = NULL;
        return -1;
    }
    if (got != want) {
        free(*reply);
        *reply = NULL;
        return fdt_err_set(e, "worker: unexpected answer %u", got);
    }
    return 0;
}

int fdt_worker_copy_bandwidth(fdt_worker *w, size_t bytes, double *gbs, fdt_err *e)
{
    assert_worker_state(w);
    uint64_t b = bytes;
    void *reply;
    size_t n;
    int rc = request(w, MSG_COPYBW, &b, sizeof b, NULL, 0, MSG_COPYBW_OK, &reply, &n,
                     w->o.setup_timeout_ms, e);
    if (rc == 1)
        return fdt_err_set(e, "copy bandwidth: worker timed out");
    if (rc)
        return -1;
    memcpy(gbs, reply, sizeof *gbs);
    free(reply);
    assert_worker_state(w);
    return 0;
}

int fdt_device_copy_bandwidth(const fdt_device *d, size_t bytes, double *gbs, fdt_err *e)
{
    fdt_worker *w = NULL;
    int rc = fdt_worker_start(d->backend, d->index, NULL, &w, NULL, e) ||
             fdt_worker_copy_bandwidth(w, bytes, gbs, e);
    fdt_worker_stop(w);
    return rc ? -1 : 0;
}

int fdt_worker_link(fdt_worker *w, fdt_link *l, fdt_err *e)
{
    assert_worker_state(w);
    void *reply;
    size_t n;
    int rc = request(w, MSG_LINK, "", 0, NULL, 0, MSG_LINK_OK, &reply, &n,
                     w->o.setup_timeout_ms, e);
    if (rc == 1)
        return fdt_err_set(e, "host link: worker timed out");
    if (rc)
        return -1;
    if (n != sizeof *l) {
        free(reply);
        return fdt_err_set(e, "host link: malformed answer");
    }
    memcpy(l, reply, sizeof *l);
    free(reply);
    assert_worker_state(w);
    return 0;
}

int fdt_device_link(const fdt_device *d, fdt_link *l, fdt_err *e)
{
    fdt_worker *w = NULL;
    int rc = fdt_worker_start(d->backend, d->index, NULL, &w, NULL, e) ||
             fdt_worker_link(w, l, e);
    fdt_worker_stop(w);
    return rc ? -1 : 0;
}

int fdt_device_link_put(fdt_db *db, const fdt_device *d, const fdt_link *l, fdt_err *e)
{
    int64_t id;
    fdt_db_link v;
    memset(&v, 0, sizeof v);
    v.h2d_gbs = l->h2d_gbs;
    v.d2h_gbs = l->d2h_gbs;
    v.both_gbs = l->both_gbs;
    v.latency_us = l->latency_us;
    v.row_ns = l->row_ns;
    v.unified = l->unified;
    return fdt_db_device_id(db, d, &id, e) || fdt_db_link_put(db, id, &v, e) ? -1 : 0;
}

static int send_setup(fdt_worker *w, const fdt_problem *p, fdt_setup_result *r, fdt_err *e)
{
    setup_msg m;
    memset(&m, 0, sizeof m);
    m.p = *p;
    m.seed = w->o.seed;
    m.gen = w->target.gen;
    fdt_eval_reference_name(p, m.ref_kernel, sizeof m.ref_kernel);
    int status = -1;
    char fill_name[64];
    UTIL_KERNEL(fill_name, "fill", p->prec);
    /* the verification kernels, and the reference: the default config under its own name */
    fdt_cand util, ref, *pv[] = {&util, &ref};
    fdt_cand_init(&util, FDT_CAND_UTIL, NULL, fill_name);
    fdt_cand_init(&ref, FDT_CAND_STENCIL, NULL, m.ref_kernel);
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    o.stop_after = FDT_BUILD_COMPILE;
    o.timeout_ms = w->o.compile_timeout_ms;
    if (fdt_target_build(&w->target, p, pv, 2, &o, e) || fdt_cand_failed(&util)) {
        if (fdt_cand_failed(&util))
            *e = util.err;
        fdt_err_wrap(e, "verification kernels");
        goto done;
    }
    if (fdt_cand_failed(&ref)) {
        *e = ref.err;
        fdt_err_wrap(e, "reference kernel");
        goto done;
    }
    m.util_len = util.code.size;
    m.ref_len = ref.code.size;
    m.flush_bytes = fdt_eval_flush_bytes(&w->info, p);
    fdt_sb payload;
    fdt_sb_init(&payload);
    fdt_sb_putn(&payload, (const char *)&m, sizeof m);
    fdt_sb_putn(&payload, util.code.image, util.code.size);
    void *reply;
    size_t n;
    int rq = request(w, MSG_SETUP, payload.s, payload.len, ref.code.image, ref.code.size,
                     MSG_SETUP_OK, &reply, &n, w->o.setup_timeout_ms, e);
    fdt_sb_free(&payload);
    if (rq == 1) {
        fdt_err_set(e, "setting up %s: no answer within %d s", fdt_op_name(p->op),
                    w->o.setup_timeout_ms / 1000);
        goto done;
    }
    if (rq)
        goto done;
    memcpy(r, reply, sizeof *r);
    free(reply);
    status = 0;
done:
    fdt_cand_free(&util);
    fdt_cand_free(&ref);
    return status;
}

int fdt_worker_setup(fdt_worker *w, const fdt_problem *p, fdt_setup_result *r, fdt_err *e)
{
    assert_worker_state(w);
    if (fdt_problem_check(p, e))
        return -1;
    w->have_problem = 0;
    if (w->pid <= 0 && spawn(w, e))
        return -1;
    if (send_setup(w, p, r, e))
        return -1;
    w->prob = *p;
    w->setup = *r;
    if (r->clocks.known)
        w->clocks = r->clocks;
    w->have_problem = 1;
    assert_worker_state(w);
    return 0;
}

/* Brings a dead worker back with the same problem. */
static int revive(fdt_worker *w, fdt_err *e)
{
    if (w->pid > 0)
        return 0;
    w->restarts++;
    if (spawn(w, e))
        return fdt_err_wrap(e, "restarting the worker");
    if (w->have_problem) {
        fdt_setup_result r;
        if (send_setup(w, &w->prob, &r, e))
            return fdt_err_wrap(e, "setting the problem up again after a restart");
    }
    return 0;
}

int fdt_worker_eval(fdt_worker *w, const fdt_config *c, const fdt_rt_code *code,
                    const char *kernel, const fdt_timing_opts *t, fdt_eval_result *r, fdt_err *e)
{
    assert_worker_state(w);
    memset(r, 0, sizeof *r);
    if (!w->have_problem)
        return fdt_err_set(e, "worker: no problem set up");
    if (revive(w, e))
        return -1;
    eval_msg m;
    memset(&m, 0, sizeof m);
    m.c = *c;
    m.t = *t;
    snprintf(m.kernel, sizeof m.kernel, "%s", kernel);
    m.image_len = code->size;
    void *reply = NULL;
    size_t n = 0;
    int rq = request(w, MSG_EVAL, &m, sizeof m, code->image, code->size, MSG_EVAL_OK, &reply, &n,
                     w->o.eval_timeout_ms, e);
    if (rq == 1) {
        r->status = FDT_EVAL_TIMEOUT;
        snprintf(r->message, sizeof r->message,
                 "no result within %d s: the worker was killed and will be restarted",
                 w->o.eval_timeout_ms / 1000);
        return 0;
    }
    if (rq < 0 && w->pid <= 0) {
        r->status = FDT_EVAL_CRASHED;
        snprintf(r->message, sizeof r->message, "%s", e->msg);
        return 0;
    }
    if (rq < 0)
        return -1;
    if (n != sizeof *r) {
        free(reply);
        return fdt_err_set(e, "worker: malformed result");
    }
    memcpy(r, reply, sizeof *r);
    free(reply);
    if (r->clocks.known)
        w->clocks = r->clocks;
    if (r->status == FDT_EVAL_CRASHED) {
        /* The worker ends itself after a lost context; collect it now. */
        char how[160];
        reap(w, 0, how, sizeof how);
    }
    assert_worker_state(w);
    return 0;
}
