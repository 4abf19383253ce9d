/* Re-tuning: the nightly check that what the tuning database calls best is still best. For
 * every (device, problem) whose device is visible now, the stored best and its runners-up
 * are measured again (a run of kind retune); a changed software environment (driver,
 * runtime, compiler, fdtune version, generator) or a best that got slower than its stored
 * median beyond a threshold triggers a budgeted re-search of that problem; and a new best
 * is recorded (fdt_db_best_decide) only when it is faster than the old one beyond the
 * measurement noise of both. The decision rules are pure functions over timings and rows
 * (tested without a GPU); fdt_retune_problem strings them together with the GPU worker, and
 * fdt_retune_run is a whole retune over a tuning session. A lock file keeps two retunes off
 * one database. This module never prints. */
#ifndef FDT_RETUNE_H
#define FDT_RETUNE_H

#include <stddef.h>
#include <time.h>

#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "fdt_decide.h"
#include "fdt_session.h"
#include "fdt_tune.h"

#define FDT_RETUNE_TOP 3            /* configs measured again per problem: best + runners-up */
#define FDT_RETUNE_THRESHOLD 0.05   /* default regression threshold (fraction of the median) */
#define FDT_RETUNE_BUDGET 100       /* default evaluations of a re-search */
/* The --since cutoff: `now` minus seconds as ISO-8601 UTC ("2025-01-02T03:04:05.000Z"),
 * the format of the database's timestamps, which compare as text. */
void fdt_retune_cutoff(time_t now, double seconds, char *buf, size_t n);

/* ------------------------------------------------------------------ plan */

typedef struct fdt_retune_filter {
    const char *gpu;   /* substring of the stored device's name or arch, any case; NULL: any */
    unsigned ops;      /* bits 1u << fdt_op; 0: every operator */
    int absorb_w;      /* > 0: dwave's pairs of this absorbing layer only (fdt_db_filter) */
    double absorb_s;
    const char *since; /* ISO-8601 UTC: only pairs with a run started at or after it; NULL: any */
    int top;           /* configs per problem, 1..FDT_RETUNE_TOP; 0: FDT_RETUNE_TOP */
} fdt_retune_filter;

void fdt_retune_filter_init(fdt_retune_filter *f);

/* One (device, problem) to revisit, with what the database holds for it. */
typedef struct fdt_retune_item {
    int live;                 /* index of the visible device that measures it */
    int same_gpu;             /* 1: that very GPU (UUID); 0: another GPU of the same model */
    fdt_device device;     /* where the stored results were measured */
    fdt_problem problem;
    int64_t problem_id;
    int decided;              /* the best is a recorded decision (else the smallest median) */
    char last_run[32];        /* start of the newest run with results for the pair */
    int ncand;
    fdt_db_row cand[FDT_RETUNE_TOP]; /* [0]: the stored best, then the runners-up */
} fdt_retune_item;

typedef struct fdt_retune_plan {
    fdt_retune_item *items;   /* by visible device, then operator, radius, precision, grid */
    size_t n;
    size_t absent;            /* pairs skipped: their device is not visible */
    size_t older;             /* pairs skipped: no run since the cutoff */
    size_t duplicate;         /* pairs skipped: another stored device maps to the same GPU */
} fdt_retune_plan;

/* Which stored device a visible one stands for: the same model (fdt_device_same_model:
 * name, base arch, compute units); *same_gpu when it is that very GPU (fdt_device_same_gpu:
 * the same UUID, or an AMD UUID stored in fdtune 0.1.0's cut form). Returns the index into live,
 * preferring the GPU with the same UUID, else the first of the same model; -1: none. */
int fdt_retune_match(const fdt_device *stored, const fdt_device *live, int nlive,
                     int *same_gpu);

/* Lists what a retune revisits: every (device, problem) with an ok full result whose device
 * matches a visible GPU, narrowed by f. When several stored devices map to one visible GPU
 * for a problem, the one that is that GPU wins, then the one with the newer run. */
int fdt_retune_plan_build(fdt_db *db, const fdt_device *live, int nlive,
                          const fdt_retune_filter *f, fdt_retune_plan *plan, fdt_err *e);
void fdt_retune_plan_free(fdt_retune_plan *plan);

/* ------------------------------------------------------------------ assessment */

/* One config measured again. */
typedef struct fdt_retune_check {
    char config[256];
    int64_t stored_eval_id, eval_id;  /* eval_id: the new measurement (0: none stored) */
    fdt_db_status status;             /* of the new measurement */
    fdt_decide_timing stored, now;
    fdt_decide_verdict verdict;
    double change;                    /* now / stored - 1; NaN when it failed */
    char message[256];                /* why it failed */
} fdt_retune_check;

typedef enum {
    FDT_RETUNE_KEPT,      /* the decided best stays */
    FDT_RETUNE_ADOPTED,   /* no decision existed: the stored best is now recorded as one */
    FDT_RETUNE_REFRESHED, /* same config; the decision moves to its measurement of today */
    FDT_RETUNE_REPLACED,  /* another result is the best now */
    FDT_RETUNE_LOST,      /* nothing measured today is ok; the old decision stays */
} fdt_retune_action;

const char *fdt_retune_action_name(fdt_retune_action a); /* "kept", "adopted", ... */

typedef struct fdt_retune_outcome {
    int ncheck;
    fdt_retune_check check[FDT_RETUNE_TOP]; /* [0]: the stored best */
    unsigned env_changed;      /* FDT_DECIDE_ENV_* against the stored best's environment */
    char env_diff[512];
    int forced;                /* --force-env-change: treated as an environment change */
    int regressed;             /* the best is slower beyond the threshold, or fails now */
    int research;              /* a re-search is due (environment, regression or forced) */
    int researched;            /* it ran */
    int64_t run_id;            /* the retune run holding the re-measurements */
    int64_t research_run_id;   /* 0: none */
    int research_tried;        /* candidates the re-search measured */
    char research_best[256];   /* its fastest verified config, "" when none */
    double research_best_ms;
    fdt_retune_action action;
    char reason[128];          /* recorded with the decision */
    int64_t best_eval_id;      /* the best after this retune */
    char best_config[256];
    fdt_decide_timing best;
    double fastest_ms;         /* fastest verified today (re-measure or re-search); NaN: none */
    int recovered;             /* regressed, and a config within the threshold of the stored
                                  median was found today */
    double wall_s;
    char error[512];           /* set when this problem could not be completed */
} fdt_retune_outcome;

/* The stored best's verdict in out (after fdt_retune_assess) in the light of the GPU's
 * clocks: of the stored best's run and of today's ([0] at the start, [1] at the end of the
 * run's measurements). A regression measured where either GPU was throttled
 * (fdt_decide_judge_clocks) becomes FDT_DECIDE_THROTTLED with the message "throttled: not a
 * regression (...)", and no longer counts as a regression nor calls for a re-search (an
 * environment change or force still does). */
void fdt_retune_apply_clocks(fdt_retune_outcome *out, const fdt_clocks stored[2],
                             const fdt_clocks now[2]);

/* Fills the checks from the new measurements (measured[i] is cand[i] measured again; an
 * eval with status not ok is a failure) and decides whether to re-search: the environment
 * `now` differs from the stored best's, or the best regressed or failed, or force_env. */
void fdt_retune_assess(const fdt_retune_item *it, const fdt_db_eval *measured, int nmeasured,
                       const fdt_db_env *now, double threshold, int force_env,
                       fdt_retune_outcome *out);

/* After the measurements (and the re-search, if any) are stored: the fastest verified result
 * of today's runs (run_ids) is compared with the stored best's re-measurement, and the
 * decision for (device_id, problem) is recorded when it changes:
 *   - the best failed today: the fastest ok result replaces it;
 *   - another config beats its re-measurement beyond noise (fdt_decide_beats): replaced;
 *   - environment changed, regression, forced, or measured on another GPU: the decision
 *     moves to today's measurement of the same config (so tomorrow compares with today);
 *   - no decision yet: the stored best is recorded as it is (adopted);
 *   - otherwise the decision is kept.
 * device_id is the visible GPU's id (where today's results are). */
int fdt_retune_conclude(fdt_db *db, const fdt_retune_item *it, int64_t device_id,
                        const int64_t *run_ids, int nruns, double threshold,
                        fdt_retune_outcome *out, fdt_err *e);

/* ------------------------------------------------------------------ on the GPU */

typedef struct fdt_retune_ctx {
    fdt_worker *w;
    fdt_db *db;
    int64_t device_id, env_id;     /* the visible GPU and its environment now */
    const fdt_device *dev;
    fdt_db_env env;                /* the environment now */
    int64_t run_id;                /* the running retune run of this GPU */
    int copy_set;                  /* the run's copy bandwidth has been recorded */
    int clocks_set;                /* the run's clocks at its start have been recorded */
} fdt_retune_ctx;

typedef struct fdt_retune_opts {
    double threshold;          /* regression threshold, fraction */
    int force_env;             /* treat every problem as if the environment changed */
    fdt_search_kind strategy;  /* of a re-search */
    int budget;                /* evaluations of a re-search */
    uint64_t seed;
    int parallel;              /* compile processes */
    const char *command;       /* recorded with a re-search run */
    const volatile sig_atomic_t *stop;
} fdt_retune_opts;

void fdt_retune_opts_default(fdt_retune_opts *o);

/* Measures it->cand again with a full sample on the worker, stores the results in
 * ctx->run_id, assesses them, re-searches when due (fdt_tune_problem with rec, as a retune
 * run, without its own decision) and concludes. cb gets the re-search's progress. Returns -1
 * only when the problem could not be completed (out->error says why, and so does e). */
int fdt_retune_problem(fdt_retune_ctx *ctx, const fdt_retune_item *it, fdt_recipe *rec,
                       const fdt_retune_opts *o, fdt_tune_progress cb, void *cbctx,
                       fdt_retune_outcome *out, fdt_err *e);

/* ------------------------------------------------------------------ a whole retune */

/* What `fdtune retune` asks for. */
typedef struct fdt_retune_request {
    const char *db_path;       /* the database to retune (it must exist); NULL: the default */
    const char *gpu;           /* fdt_retune_filter's gpu ("auto": the visible GPU's model,
                                  fdt_session_auto_device), ops and (as seconds back) since */
    const char *cpu;           /* instead of the GPUs, the host CPU (--cpu: "auto", or a part
                                  of its name or arch, fdt_session_select_cpu); NULL: GPUs */
    unsigned ops;
    int absorb_w;              /* fdt_retune_filter's absorbing layer (dwave); 0: any */
    double absorb_s;
    double since_s;            /* 0: no cutoff */
    fdt_retune_opts o;         /* of each problem (its stop is the session's) */
    int timeout_s;             /* per candidate, verification and timing */
    const char *fdtune_version; /* recorded in the environment */
    fdt_probe_fn probe;        /* NULL: fdt_probe_devices (tests give a fake) */
    fdt_host_fn probe_host;    /* with cpu, instead: NULL: fdt_probe_host */
} fdt_retune_request;

/* fdt_retune_opts_default's options, 30 s per candidate, the default database. */
void fdt_retune_request_init(fdt_retune_request *rq);

/* One visible GPU that had work. */
typedef struct fdt_retune_gpu {
    int live;                  /* its index in the report's probe */
    int64_t run_id;            /* its retune run; 0: none began */
    fdt_db_env env;            /* its environment now */
    int started;               /* a worker ran on it */
    char error[512];           /* why it could not be used */
} fdt_retune_gpu;

/* What a retune did. */
typedef struct fdt_retune_report {
    char db_path[4096];
    char since[32];            /* the cutoff as the database writes times; "" when none */
    fdt_probe probe;           /* the visible GPUs (or, with none, why) */
    fdt_retune_plan plan;
    fdt_retune_outcome *out;   /* one per plan item, */
    int *done;                 /* filled where done[i] */
    int ngpus;
    fdt_retune_gpu gpus[FDT_MAX_DEVICES];
    int ran;                   /* it got to the GPUs: the report is complete */
    int interrupted;           /* the stop flag ended it */
    int errors;                /* GPUs, problems or runs that failed operationally */
} fdt_retune_report;

typedef enum {
    FDT_RETUNE_EV_LOCK_TAKEN,  /* text: the holder the lock file still named (gone) */
    FDT_RETUNE_EV_STALE,       /* n: earlier runs marked interrupted */
    FDT_RETUNE_EV_NOTHING,     /* the plan is empty; rep->plan says what was skipped */
    FDT_RETUNE_EV_GPU_ERROR,   /* gpu cannot be used; text says why */
    FDT_RETUNE_EV_BEGIN,       /* item, the k-th of the gpu's count, begins */
    FDT_RETUNE_EV_END,         /* item is done: out; text: why it failed, NULL when it did not */
    FDT_RETUNE_EV_ERROR,       /* text: an error that does not stop the retune */
} fdt_retune_event_kind;

typedef struct fdt_retune_event {
    fdt_retune_event_kind kind;
    const fdt_retune_report *rep;
    const fdt_device *gpu;          /* GPU_ERROR, BEGIN, END: the visible device */
    const fdt_retune_item *item;    /* BEGIN, END */
    const fdt_retune_outcome *out;  /* END */
    size_t k, count;                /* BEGIN, END: from 1 */
    int n;                          /* STALE */
    const char *text;
} fdt_retune_event;

typedef void (*fdt_retune_event_fn)(void *ctx, const fdt_retune_event *ev);

/* A whole retune: probes the GPUs first (none visible: FDT_STATUS_NO_GPU, rep->probe says
 * why, and the database is neither opened, migrated nor locked: only a missing one is said
 * before, FDT_STATUS_ERROR), then opens the database and takes its retune lock
 * (FDT_STATUS_BUSY when another retune holds it), opens a session on it (stale runs), loads the catalogue, builds the plan for the visible GPUs and loads
 * the recipes it needs (FDT_STATUS_USAGE when one cannot be), then GPU by GPU, a worker and
 * a retune run each, revisits every item (fdt_retune_problem) until done or stopped. Events
 * go to on_event as they happen, a re-search's progress to on_progress, both with ctx. The
 * report is complete (rep->ran) when it got to the GPUs; the status is then
 * fdt_retune_status's. Free rep with fdt_retune_report_free whatever it returns. */
fdt_status fdt_retune_run(const fdt_retune_request *rq, fdt_retune_event_fn on_event,
                          fdt_tune_progress on_progress, void *ctx, fdt_retune_report *rep,
                          fdt_err *e);
void fdt_retune_report_free(fdt_retune_report *rep);

/* The best regressed and nothing within the threshold was found, or nothing is verified any
 * more: the retune failed for this problem. */
int fdt_retune_unrecovered(const fdt_retune_outcome *o);

/* The status of a completed retune: interrupted, else an operational error, else a problem
 * unrecovered (FDT_STATUS_FAILED), else FDT_STATUS_OK. */
fdt_status fdt_retune_status(const fdt_retune_report *rep);

/* ------------------------------------------------------------------ lock */

/* An advisory lock (fcntl, whole file) on "<db>.retune.lock", holding the holder's pid, host
 * and start time. The kernel drops it when the holder exits, however it exits, so a lock
 * left by a killed retune is simply taken over; children (GPU worker, compilers) do not
 * inherit it. As with every fcntl lock, the holder must not open and close the lock file
 * elsewhere: closing any descriptor of it drops the process's lock. */
typedef struct fdt_retune_lock {
    int fd;                   /* -1: not held */
    char path[4200];
    int took_over;            /* the file named a holder that is gone (killed, crashed) */
    char previous[256];       /* that holder, as written in the file */
} fdt_retune_lock;

/* 0: acquired. 1: another process holds it; e says who ("pid 1234 on node7 since ..."). -1:
 * the lock file cannot be used (e). */
int fdt_retune_lock_acquire(const char *db_path, fdt_retune_lock *l, fdt_err *e);
/* Empties the file and drops the lock; harmless when not held. */
void fdt_retune_lock_release(fdt_retune_lock *l);

#endif
