/* Tuning on several GPUs of a node at once (`fdtune --gpu all`, `--devices 0,2,3`). Each GPU
 * gets a process of its own, forked from fdtune, that holds its worker and its own
 * connection to the one tuning database (WAL, BEGIN IMMEDIATE: every process writes in short
 * transactions); fdtune itself only schedules and reports. Processes rather than threads:
 * a database handle, a recipe's Lua state and a worker belong to one thread of control each
 * (db/fdt_db.h), and a GPU whose process dies or wedges is killed and costs nothing else.
 *
 * The problems of the request (fdt_tune_problems) are tuned once per device model (name,
 * arch, compute units): GPUs of one model share them, a problem at a time each, so that the
 * measurements of a problem come from one GPU and no median mixes GPUs; GPUs of another
 * model tune every problem for their own model. A problem goes back to the GPU that measured
 * it before when it can (a rerun resumes, as on one GPU). The processes share one compile pool,
 * bounded by the CPU cores less one per GPU (its worker measures while the next batch
 * compiles) in all (fdt_child_pool_share; --jobs N bounds it instead), and the compile cache.
 *
 * A GPU fails when its worker cannot be started, set up or brought back (fdt_tune_summary's
 * gpu_failed), or when its process ends: its problem is retried once, on another GPU of the
 * model. The GPU waits meanwhile; when the retry succeeds it is taken out of the run, when
 * the retry fails too the problem is blamed and reported failed, and the GPU goes on. A
 * problem that fails for another reason (its recipe, the database) is reported failed
 * without a retry. SIGINT and SIGTERM stop after the evaluations in flight, as on one GPU.
 * This module never prints: progress and the outcome go to the caller. */
#ifndef FDT_MANY_H
#define FDT_MANY_H

#include "fdt_tune.h"

typedef enum {
    FDT_MANY_PENDING, /* not started (stopped, or past the time limit) */
    FDT_MANY_RUNNING,
    FDT_MANY_DONE,    /* tuned: sum says what was found (a verified best, or none) */
    FDT_MANY_FAILED,  /* could not be tuned: error says why */
} fdt_many_state;

/* One GPU of the run. */
typedef struct fdt_many_gpu {
    int live;          /* its index among the visible devices (what --devices names) */
    fdt_device dev;    /* as its worker describes it (the probe's until it started) */
    int model;         /* GPUs of one model share the problems */
    int started;       /* its worker started */
    int failed;        /* taken out of the run; why says how it failed */
    char why[1024];
    int tuned;         /* problems it tuned */
} fdt_many_gpu;

/* One problem for one device model. */
typedef struct fdt_many_problem {
    fdt_problem p;
    int model;
    fdt_many_state state;
    int gpu;           /* the GPU (index in the report) that tuned it or tried last; -1 */
    int tries;
    int failed_on;     /* the GPU its first try failed on, -1 */
    int home;          /* a GPU of the run that measured it before (where a rerun resumes
                          it: results are per GPU), -1 */
    fdt_tune_summary sum; /* DONE (and FAILED once a try got that far) */
    char error[2048];  /* FAILED */
} fdt_many_problem;

/* A problem that a failing GPU handed to another. */
typedef struct fdt_many_retry {
    int problem;       /* index in the report's problems */
    int from, to;      /* GPUs (indexes in the report); to -1: not (yet) retried */
    char why[1024];    /* how it failed on `from` */
} fdt_many_retry;

typedef struct fdt_many_report {
    int ngpus;
    fdt_many_gpu gpu[FDT_MAX_DEVICES];
    int nmodels;
    int n;             /* problems: every problem of the request for every model, by model */
    fdt_many_problem *v;
    int nretries;
    fdt_many_retry *retries;
    int missing;       /* DONE without a verified config */
    int failed;        /* FAILED */
    int pending;       /* never started */
    int stopped;       /* the stop flag was set */
    int simulated;     /* the GPUs are simulated */
} fdt_many_report;

typedef enum {
    FDT_MANY_TUNE,       /* a tuning event of GPU gpu (ev) */
    FDT_MANY_STARTED,    /* GPU gpu's worker started */
    FDT_MANY_GPU_FAILED, /* GPU gpu is taken out of the run (why) */
    FDT_MANY_SUSPECT,    /* GPU gpu failed on problem `problem` (why): retried elsewhere */
    FDT_MANY_RETRY,      /* problem `problem` starts again on GPU gpu after `from` failed */
    FDT_MANY_FINISHED,   /* problem `problem` ended (its state) on GPU gpu */
} fdt_many_event_kind;

typedef struct fdt_many_event {
    fdt_many_event_kind kind;
    int gpu;                  /* index in the report's GPUs */
    const fdt_tune_event *ev; /* TUNE */
    int problem, from;        /* SUSPECT, RETRY, FINISHED; RETRY */
    const char *why;          /* GPU_FAILED, SUSPECT */
    const fdt_many_report *report;
} fdt_many_event;

typedef void (*fdt_many_progress)(void *ctx, const fdt_many_event *ev);

/* Tunes the problems of request rq (recipes rec[op] loaded for every requested operator) on
 * the visible devices live[0..nlive) of the probe so->probed (which must be set), into the
 * database so->db_path, each GPU's worker with so->worker. The database is created and
 * checked (stale runs, its kind: fdt_session_open) before any GPU starts. Returns
 * FDT_STATUS_USAGE for a request the GPUs cannot serve (a simulated GPU whose recording lacks
 * a problem), FDT_STATUS_INTERRUPTED when stopped, FDT_STATUS_ERROR when a problem could not
 * be tuned on any GPU of its model (or no GPU started), FDT_STATUS_FAILED when a problem has
 * no verified config, else FDT_STATUS_OK. out holds every problem's outcome in every case;
 * free it with fdt_many_report_free. */
fdt_status fdt_tune_many(const fdt_session_opts *so, const int *live, int nlive,
                         fdt_recipe *const *rec, const fdt_tune_request *rq,
                         fdt_many_progress cb, void *cbctx, fdt_many_report *out, fdt_err *e);
void fdt_many_report_free(fdt_many_report *r);

#endif
