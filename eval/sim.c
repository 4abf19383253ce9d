/* Simulated GPUs: a recorded tuning database answers the evaluations instead of a GPU, so
 * that tune, plan tasks, merge and export run end to end on a machine without one (tests,
 * CI). A simulated node has n GPUs; simulated GPU i stands for the recording's device
 * i mod (real devices recorded), in id order, and is marked in every field a result carries:
 * backend FDT_SIM_BACKEND, its name the recorded one with " (simulated)", a UUID of its own
 * ("sim<i>-" and the recorded UUID), driver "simulated from <file name>", compiler "sim".
 * Its worker is a process like a real GPU's (fdt_sim_worker_main, forked by eval/worker.c),
 * so crashes, hangs and restarts take the real paths; FDTUNE_SIM_FAULT makes one misbehave
 * for tests. It answers each config with what the recorded device measured (fdt_eval.h). */
#include "fdt_db.h"
#include "fdt_eval.h"
#include "worker_proto.h"

#include <math.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the recording */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

typedef struct real_devices {
    fdt_device v[FDT_MAX_DEVICES];
    int n;
} real_devices;

static int take_real(void *ctx, const fdt_device *d)
{
    real_devices *r = ctx;
    if (!fdt_device_simulated(d) && r->n < FDT_MAX_DEVICES)
        r->v[r->n++] = *d;
    return 0;
}

/* The recorded (real) device simulated GPU `index` stands for. */
static int recorded_device(fdt_db *db, int index, fdt_device *out, fdt_err *e)
{
    real_devices r = {.n = 0};
    if (fdt_db_devices(db, NULL, take_real, &r, e))
        return -1;
    if (r.n == 0)
        return fdt_err_set(e, "%s records no real GPU to simulate", fdt_db_path(db));
    *out = r.v[index % r.n];
    return 0;
}

/* Simulated GPU `index` of a node simulated from db (opened from `recording`). */
static int describe(fdt_db *db, const char *recording, int index, fdt_device *d, fdt_err *e)
{
    fdt_device rec;
    if (recorded_device(db, index, &rec, e))
        return -1;
    fdt_device_init(d);
    snprintf(d->backend, sizeof d->backend, "%s", FDT_SIM_BACKEND);
    snprintf(d->vendor, sizeof d->vendor, "%s", rec.vendor);
    snprintf(d->name, sizeof d->name, "%.100s (simulated)", rec.name);
    snprintf(d->arch, sizeof d->arch, "%s", rec.arch);
    d->compute_units = rec.compute_units;
    d->warp_size = rec.warp_size;
    d->l2_bytes = rec.l2_bytes;
    d->mem_bytes = rec.mem_bytes;
    snprintf(d->uuid, sizeof d->uuid, "sim%d-%.40s", index, rec.uuid);
    snprintf(d->pci, sizeof d->pci, "sim:%d", index);
    snprintf(d->driver_version, sizeof d->driver_version, "simulated from %.45s",
             base_name(recording));
    snprintf(d->runtime_version, sizeof d->runtime_version, "sim");
    snprintf(d->compiler_version, sizeof d->compiler_version, "sim");
    d->index = index;
    d->live = 1;
    fdt_device_derive(d);
    return 0;
}

int fdt_sim_probe(const char *recording, int n, fdt_probe *p, fdt_err *e)
{
    memset(p, 0, sizeof *p);
    if (n < 1 || n > FDT_MAX_DEVICES)
        return fdt_err_set(e, "simulated GPUs: %d (1..%d)", n, FDT_MAX_DEVICES);
    fdt_db *db = NULL;
    if (fdt_db_open(recording, FDT_DB_READONLY, &db, e))
        return fdt_err_wrap(e, "--simulate-from");
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = describe(db, recording, i, &p->device[i], e);
    fdt_db_close(db);
    if (rc)
        return fdt_err_wrap(e, "--simulate-from");
    p->ndevices = n;
    p->nbackends = 1;
    fdt_backend_probe *b = &p->backend[0];
    snprintf(b->name, sizeof b->name, "%s", FDT_SIM_BACKEND);
    snprintf(b->compiler, sizeof b->compiler, "sim");
    b->available = 1;
    b->count = n;
    return 0;
}

typedef struct config_walk {
    fdt_sim_config_fn fn;
    void *ctx;
    size_t n;
} config_walk;

static int walk_config(void *ctx, const fdt_db_row *row)
{
    config_walk *w = ctx;
    w->n++;
    return w->fn ? w->fn(w->ctx, row->ev.config) : 0;
}

int fdt_sim_configs(const char *recording, const fdt_device *dev, const fdt_problem *p,
                    fdt_sim_config_fn fn, void *ctx, size_t *n, fdt_err *e)
{
    *n = 0;
    fdt_db *db = NULL;
    if (fdt_db_open(recording, FDT_DB_READONLY, &db, e))
        return fdt_err_wrap(e, "--simulate-from");
    fdt_device rec;
    int64_t pid = 0;
    config_walk w = {fn, ctx, 0};
    int rc = recorded_device(db, dev->index, &rec, e) || fdt_db_problem_find(db, p, &pid, e);
    if (rc == 0 && pid)
        rc = fdt_db_evals(db, rec.id, 0, pid, walk_config, &w, e);
    fdt_db_close(db);
    *n = w.n;
    return rc ? -1 : 0;
}

/* ---------------------------------------------------------------- faults (tests) */

typedef enum { FAULT_NONE, FAULT_CRASH, FAULT_HANG } fault_kind;

typedef struct fault {
    fault_kind kind;
    int at; /* requests (setups and evaluations) answered before it strikes */
} fault;

/* FDTUNE_SIM_FAULT="GPU:crash[@N],GPU:hang[@N]": the fault of simulated GPU `index`. */
static fault fault_of(int index)
{
    fault f = {FAULT_NONE, 0};
    const char *s = getenv("FDTUNE_SIM_FAULT");
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s ? s : "");
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int gpu = -1, at = 0;
        char kind[16] = "";
        if (sscanf(tok, "%d:%15[a-z]@%d", &gpu, kind, &at) < 2 || gpu != index)
            continue;
        f.kind = !strcmp(kind, "crash") ? FAULT_CRASH : !strcmp(kind, "hang") ? FAULT_HANG
                                                                               : FAULT_NONE;
        f.at = at;
    }
    return f;
}

/* The GPU fails for good: its worker dies, or stops answering until it is killed. */
static void strike(const fault *f)
{
    if (f->kind == FAULT_CRASH)
        raise(SIGKILL);
    for (;;)
        pause();
}

/* ---------------------------------------------------------------- the worker */

/* What the recording answers for one config: its probe and its full sample (NULL: none). */
typedef struct answer {
    char key[256];
    fdt_db_row *probe, *full;
} answer;

static struct {
    int fd;
    const char *recording;
    fdt_db *db;
    fdt_device dev, rec;
    fault fault;
    int requests, delay_ms;
    fdt_problem p;
    int have_problem;
    fdt_db_rows rows;   /* the problem's recorded evaluations */
    answer *answers;    /* by key */
    size_t nanswers;
    double copy_gbs;
} S;

static void send_error(const char *fmt, ...) FDT_PRINTF(1, 2);
static void send_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fdt_err e;
    fdt_frame_write(S.fd, MSG_ERROR, msg, strlen(msg), &e);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const answer *)a)->key, ((const answer *)b)->key);
}

/* The row to answer with: an ok one, the faster; else the latest recorded. */
static int better(const fdt_db_row *cand, const fdt_db_row *cur)
{
    if (!cur)
        return 1;
    int ok = cand->ev.status == FDT_DB_OK, cur_ok = cur->ev.status == FDT_DB_OK;
    if (ok != cur_ok)
        return ok;
    return !ok || cand->ev.time_ms < cur->ev.time_ms;
}

static void forget_problem(void)
{
    free(S.rows.v);
    free(S.answers);
    memset(&S.rows, 0, sizeof S.rows);
    S.answers = NULL;
    S.nanswers = 0;
    S.have_problem = 0;
}

/* Loads the recorded evaluations of p and indexes them by config. */
static int load_problem(const fdt_problem *p, fdt_err *e)
{
    forget_problem();
    int64_t pid = 0;
    if (fdt_db_problem_find(S.db, p, &pid, e))
        return -1;
    if (pid && fdt_db_evals(S.db, S.rec.id, 0, pid, fdt_db_collect_row, &S.rows, e))
        return -1;
    if (S.rows.oom)
        return fdt_err_set(e, "out of memory");
    char pk[128];
    fdt_problem_format(p, pk, sizeof pk);
    if (S.rows.n == 0)
        return fdt_err_set(e, "%s is not recorded in %s for %s: a simulated GPU answers only "
                           "what was recorded", pk, base_name(S.recording), S.rec.name);
    S.answers = calloc(S.rows.n, sizeof *S.answers);
    if (!S.answers)
        return fdt_err_set(e, "out of memory");
    for (size_t i = 0; i < S.rows.n; i++) {
        fdt_db_row *r = &S.rows.v[i];
        answer *a = NULL;
        for (size_t k = 0; k < S.nanswers && !a; k++) /* setup only: a few thousand rows */
            if (!strcmp(S.answers[k].key, r->ev.config))
                a = &S.answers[k];
        if (!a) {
            a = &S.answers[S.nanswers++];
            snprintf(a->key, sizeof a->key, "%s", r->ev.config);
        }
        fdt_db_row **slot = r->ev.stage == FDT_DB_FULL ? &a->full : &a->probe;
        if (better(r, *slot))
            *slot = r;
    }
    qsort(S.answers, S.nanswers, sizeof *S.answers, by_key);
    fdt_db_run run;
    S.copy_gbs = fdt_db_run_get(S.db, S.rows.v[0].ev.run_id, &run, e) == 0 && run.copy_gbs > 0
                     ? run.copy_gbs
                     : 0;
    S.p = *p;
    S.have_problem = 1;
    return 0;
}

static double num(double v) { return isnan(v) ? 0 : v; }

/* The recorded row as the result of an evaluation. */
static void answer_with(const fdt_db_row *row, fdt_eval_result *r)
{
    const fdt_db_eval *ev = &row->ev;
    memset(r, 0, sizeof *r);
    r->status = (fdt_eval_status)ev->status;
    if (ev->reps > 0 || ev->time_ms > 0) {
        r->timing.median_ms = num(ev->time_ms);
        r->timing.min_ms = num(ev->time_min_ms);
        r->timing.max_ms = num(ev->time_max_ms);
        r->timing.q1_ms = num(ev->time_q1_ms);
        r->timing.q3_ms = num(ev->time_q3_ms);
        r->timing.reps = ev->reps > 0 ? ev->reps : 1;
        r->timing.outliers = ev->outliers > 0 ? ev->outliers : 0;
    }
    r->gbs = num(ev->gbs);
    r->frac_copy = num(ev->frac_copy);
    r->layers_ms = num(ev->layers_ms);
    r->part_ms = num(ev->part_ms);
    if (!isnan(ev->max_err)) {
        r->verify.checked = 1;
        r->verify.max_err = ev->max_err;
        r->verify.rel_err = num(ev->rel_err);
        r->verify.tol = num(ev->tolerance);
    }
    r->res = (fdt_rt_resources){.registers = ev->registers,
                                .sgprs = ev->sgprs,
                                .agprs = -1,
                                .spill_bytes = ev->spill_bytes,
                                .scratch_bytes = ev->scratch_bytes,
                                .shared_bytes = ev->shared_bytes,
                                .max_threads = -1,
                                .sgpr_spills = -1};
    r->line = ev->layout_line > 0 ? ev->layout_line : 0;
    r->offset = ev->layout_offset > 0 ? ev->layout_offset : 0;
    snprintf(r->message, sizeof r->message, "simulated from %s (evaluation %lld)%s%s",
             base_name(S.recording), (long long)ev->id, ev->message[0] ? ": " : "",
             ev->message);
}

static void do_setup(const void *data, size_t n)
{
    setup_msg m;
    fdt_err e;
    if (n < sizeof m) {
        send_error("setup: malformed message");
        return;
    }
    memcpy(&m, data, sizeof m);
    if (load_problem(&m.p, &e)) {
        send_error("%s", e.msg);
        return;
    }
    fdt_setup_result r;
    memset(&r, 0, sizeof r);
    r.copy_gbs = S.copy_gbs;
    r.simulated = 1;
    fdt_frame_write(S.fd, MSG_SETUP_OK, &r, sizeof r, &e);
}

static void do_eval(const void *data, size_t n)
{
    eval_msg m;
    fdt_err e;
    if (n < sizeof m || !S.have_problem) {
        send_error(!S.have_problem ? "no problem set up" : "eval: malformed message");
        return;
    }
    memcpy(&m, data, sizeof m);
    answer key;
    fdt_config_format(&m.c, key.key, sizeof key.key);
    const answer *a = bsearch(&key, S.answers, S.nanswers, sizeof *S.answers, by_key);
    if (!a) {
        char pk[128];
        fdt_problem_format(&S.p, pk, sizeof pk);
        send_error("config %s of %s is not recorded in %s", key.key, pk,
                   base_name(S.recording));
        return;
    }
    fdt_timing_opts probe;
    fdt_timing_opts_probe(&probe);
    int want_probe = m.t.max_reps <= probe.max_reps;
    const fdt_db_row *row = want_probe ? (a->probe ? a->probe : a->full)
                                       : (a->full ? a->full : a->probe);
    fdt_eval_result r;
    answer_with(row, &r);
    if (S.delay_ms > 0)
        usleep((useconds_t)S.delay_ms * 1000);
    fdt_frame_write(S.fd, MSG_EVAL_OK, &r, sizeof r, &e);
    if (r.status == FDT_EVAL_CRASHED)
        _exit(3); /* as a real worker after a lost context: the parent starts a fresh one */
}

void fdt_sim_worker_main(int fd, const char *recording, int index, int life)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive fdtune */
    signal(SIGINT, SIG_IGN);          /* Ctrl-C is the parent's to handle */
    S.fd = fd;
    S.recording = recording;
    S.fault = fault_of(index);
    const char *delay = getenv("FDTUNE_SIM_DELAY_MS");
    S.delay_ms = delay ? atoi(delay) : 0;
    if (S.fault.kind && life > 0)
        strike(&S.fault); /* a GPU that failed does not come back */
    fdt_err e;
    if (!recording || fdt_db_open(recording, FDT_DB_READONLY, &S.db, &e) ||
        describe(S.db, recording, index, &S.dev, &e) ||
        recorded_device(S.db, index, &S.rec, &e)) {
        send_error("simulated GPU %d: %s", index, recording ? e.msg : "no recording given");
        _exit(2);
    }
    fdt_frame_write(fd, MSG_HELLO, &S.dev, sizeof S.dev, &e);
    for (;;) {
        uint32_t type;
        void *data = NULL;
        size_t n = 0;
        if (fdt_frame_read(fd, &type, &data, &n, -1, &e) != 0)
            _exit(0); /* parent gone */
        if (type == MSG_QUIT)
            _exit(0);
        if ((type == MSG_SETUP || type == MSG_EVAL) && S.fault.kind &&
            S.requests++ >= S.fault.at)
            strike(&S.fault);
        if (type == MSG_SETUP)
            do_setup(data, n);
        else if (type == MSG_EVAL)
            do_eval(data, n);
        else if (type == MSG_COPYBW)
            send_error("a simulated GPU measures no copy bandwidth");
        else
            send_error("unknown request");
        free(data);
    }
}
