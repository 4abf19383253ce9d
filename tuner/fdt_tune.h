/* Tuning one problem on one GPU: the recipe's space, the strategy's choices, compilation in
 * a process pool, measurement in two stages (a cheap probe for every candidate, a full sample
 * for those within a margin of the best so far) on the GPU worker, and every outcome stored
 * as it happens, so an interrupted run loses nothing and a rerun resumes. A tuning run
 * (fdt_tune_run) tunes the problem of each requested operator in turn on one GPU of a
 * session, each with its plan of strategy and budget. Progress goes to a callback; this
 * module never prints. */
#ifndef FDT_TUNE_H
#define FDT_TUNE_H

#include <signal.h>

#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "fdt_search.h"
#include "fdt_session.h"
#include "fdt_stop.h"

typedef struct fdt_tune_opts {
    fdt_search_kind strategy;
    int budget;           /* evaluations for this problem; 0: unlimited */
    double deadline;      /* fdt_now() after which no new evaluation starts; 0: none */
    int share;            /* > 1: deadline ends a time limit that this problem shares with
                             share - 1 more still to tune: its search gets an equal share of
                             what remains when it begins (fdt_tune_share_deadline), its
                             preparation included */
    int force;            /* measure again what the database already holds */
    uint64_t seed;        /* random strategy */
    int parallel;         /* compile processes (with the overlap, at most the cores less
                             one: the worker's) */
    double full_within;   /* a probe within this fraction of the best gets a full sample */
    const char *command;  /* recorded with the run */
    const volatile sig_atomic_t *stop; /* set asynchronously: stop after this evaluation */
    fdt_db_run_kind kind; /* recorded with the run: tune, or retune for a retune's re-search */
    int decide;           /* record the best decision at the end (default 1; retune judges
                             its re-search itself, so it passes 0) */
    fdt_stop_opts stop_rules; /* the stopping rules (default fdt_stop_opts_default) */
    int overlap;          /* compile the next batch while this one is measured (default 1;
                             never on a CPU target, whose measurements take every core, nor
                             with one core) */
    int known_first;      /* measure first, right after the baseline, the config fdtune
                             answers today for this device and problem (fdt_db_nearest_in over
                             this database and the system database: this grid's result, else
                             the nearest tuned grid's, else another model of the base arch),
                             when it lies in the space and this environment has not measured
                             it: the search then never ends slower than that answer, and the
                             strategy learns from it (default 0; a tune request's unless cold) */
} fdt_tune_opts;

void fdt_tune_opts_default(fdt_tune_opts *o);

typedef enum {
    FDT_TUNE_SETUP,    /* reference checked, copy bandwidth measured */
    FDT_TUNE_SPACE,    /* space enumerated; resumed configs counted */
    FDT_TUNE_COMPILING, /* a batch is compiling: compiled of survivors through so far */
    FDT_TUNE_COMPILED, /* candidates compiled */
    FDT_TUNE_EVAL,     /* one evaluation finished (probe or full) */
} fdt_tune_event_kind;

typedef struct fdt_tune_event {
    fdt_tune_event_kind kind;
    const fdt_problem *p;
    const char *config;       /* EVAL */
    const char *stage;        /* EVAL: "probe", "full", "baseline" */
    const fdt_eval_result *r; /* EVAL */
    int done, total;          /* evaluations done / planned (budget or space) */
    double best_gbs, best_frac, copy_gbs;
    double elapsed_s, eta_s;  /* eta < 0: unknown */
    size_t survivors, resumed, compile_failed, cached;
    size_t compiled;          /* COMPILING: of survivors (the batch), through so far */
    double compile_s;
    const fdt_setup_result *setup; /* SETUP */
} fdt_tune_event;

typedef void (*fdt_tune_progress)(void *ctx, const fdt_tune_event *ev);

typedef struct fdt_tune_summary {
    fdt_problem p;
    char recipe[128], recipe_path[512], strategy[16];
    int64_t run_id;
    fdt_recipe_stats stats; /* space, survivors, pruned per constraint */
    size_t resumed;         /* configs the database already had (skipped) */
    int tried, ok, failed, pruned; /* in this run: candidates measured / ok / failed / pruned */
    int have_best;
    char best_config[256];  /* best in the database for this device, environment, problem */
    double best_ms, best_gbs, best_frac;
    int best_from_run;      /* 1 when this run measured the best, 0 when it was resumed */
    char base_config[256];  /* the recipe's default config (the seeds' baseline) */
    int have_base;
    double base_ms, base_gbs, speedup;
    double copy_gbs;
    double wall_s, compile_s, setup_s;
    double compile_overlapped_s; /* of compile_s, the part hidden behind measurements (the
                                    next batch compiled while this one was measured) */
    int interrupted;        /* stopped by the user or the time limit */
    char stop_reason[64];
    char stopped[160];      /* why the search stopped, with the headroom (fdt_stop_describe):
                               "within 0.8% of copy", "budget: 40 of 40 (3.1% above copy)" */
    int stop_why;           /* fdt_stop_why */
    double headroom;        /* the best's distance above its limit (fdt_stop_headroom); -1:
                               unknown */
    char start_config[256]; /* known_first: the known answer measured first ("" when none
                               was: nothing answers, it lies outside the space, or it was
                               measured already) */
    char start_source[160]; /* where it came from: "system database, exact: NVIDIA H200
                               1024x1024x1024" (fdt_db_source_name, fdt_db_fallback_name, the
                               device and grid of the result) */
    int cut_short;          /* the time limit (this problem's share of it) stopped the search
                               before its budget or space was spent: recorded with the best
                               decision (fdt_db_decision.cut_short) */
    int worker_restarts;
    int gpu_failed;         /* the problem failed because the GPU's worker did: it could not
                               be started, set up or brought back (another GPU may do) */
    int simulated;          /* a simulated GPU answered (fdt_sim_probe) */
    size_t not_recorded;    /* simulated: configs of the space the recording does not have,
                               left out of the search */
} fdt_tune_summary;

/* Context shared by the problems of one invocation. */
typedef struct fdt_tune_ctx {
    fdt_worker *w;
    fdt_db *db;
    int64_t device_id, env_id;
    const fdt_device *dev;
    const char *simulate_from; /* the recording of a simulated GPU (dev): its space is what
                                  the recording has, recorded with the run's notes */
} fdt_tune_ctx;

/* The context of GPU g of session s (simulate_from: its recording when it is simulated). */
void fdt_tune_ctx_of(const fdt_session *s, const fdt_session_gpu *g, fdt_tune_ctx *ctx);

/* With o->decide, the end of a problem records the best decision of (device, problem): this
 * run's fastest verified result when it beats the decided best beyond the noise of both, or,
 * when none was decided yet, the better of the two (fdt_db_best_decide). */
int fdt_tune_problem(const fdt_tune_ctx *ctx, fdt_recipe *r, const fdt_problem *p,
                     const fdt_tune_opts *o, fdt_tune_progress cb, void *cbctx,
                     fdt_tune_summary *out, fdt_err *e);

/* ------------------------------------------------------------------ a tuning run */

#define FDT_TUNE_MAX_GRIDS 16

/* What `fdtune tune` asks for: one problem per operator, and how to search them. */
typedef struct fdt_tune_request {
    fdt_problem p;            /* the problem of every operator (its op is set per operator;
                                 its absorbing layer goes to dwave alone:
                                 fdt_tune_request_problem) */
    unsigned ops;             /* the operators, bits 1u << fdt_op, tuned in operator order */
    /* Several radii, precisions or grids: a problem per combination and operator
     * (fdt_tune_problems); 0 (none listed): p's alone. */
    unsigned Rs;              /* bits 1u << R */
    unsigned precs;           /* bits 1u << fdt_prec */
    int ngrids;
    int64_t grid[FDT_TUNE_MAX_GRIDS][3];
    int have_strategy;        /* strategy was given: it wins over the recipe's */
    fdt_search_kind strategy;
    int budget;               /* evaluations per operator; 0: the recipe's */
    double time_s;            /* no evaluation starts after this many seconds in all; 0: none */
    int force;                /* measure again what the database already holds */
    uint64_t seed;            /* random strategy */
    int parallel;             /* compile processes; 0: the default (CPU cores) */
    const char *command;      /* recorded with each run */
    fdt_stop_opts stop_rules; /* the stopping rules (--search-all, --stop-within,
                                 --stop-after; default fdt_stop_opts_default) */
    int cold;                 /* --cold: nothing known is measured first (fdt_tune_opts.
                                 known_first off), the search as on a machine with no results */
} fdt_tune_request;

/* No operator, the default problem options (seed 1), everything else from the recipes. */
void fdt_tune_request_init(fdt_tune_request *rq);

/* The request's problem of operator op: rq->p with that op, and rq->p's absorbing layer
 * when op is dwave (none for every other operator). */
void fdt_tune_request_problem(const fdt_tune_request *rq, fdt_op op, fdt_problem *p);
/* The problems of a request, each once: every grid, precision, radius and operator listed
 * (or p's own), in that nesting (operators innermost, in operator order), into *out
 * (malloc'ed, *n of them). -1 when memory runs out. */
int fdt_tune_problems(const fdt_tune_request *rq, fdt_problem **out, int *n, fdt_err *e);

/* Strategy and budget of one operator: the request's, then the recipe's, then the model
 * strategy with no budget. */
void fdt_tune_plan(const fdt_tune_request *rq, const fdt_recipe *r, fdt_search_kind *k,
                   int *budget);

/* The options of one problem of request rq tuned with recipe r: its plan, the request's
 * force, seed, compile processes and command, the run's deadline (0: none) and stop flag. */
void fdt_tune_opts_for(const fdt_tune_request *rq, const fdt_recipe *r, double deadline,
                       const volatile sig_atomic_t *stop, fdt_tune_opts *o);
/* Unless rq is cold, that the system database the searches read their known answers from
 * (fdt_tune_opts.known_first) can be found: $FDTUNE_SYSTEM_DB naming a missing file fails
 * here (fdt_db_system_path), before anything is opened, so that a tune that cannot read it
 * changes nothing on disk. 0 or -1. */
int fdt_tune_known_check(const fdt_tune_request *rq, fdt_err *e);
/* With a time limit, a search stops at its deadline, after one evaluation at least: every
 * problem begun gets a result (the baseline, or the strategy's first config). */

/* The deadline of the next problem of a run whose time limit ends at `end` (fdt_now()
 * clock; 0: none), with `left` problems still to tune, this one included: an equal share of
 * the time that remains, now + (end - now) / left, so that a problem that finishes early
 * leaves its time to the ones after it and the last one gets whatever remains. 0 when end
 * is 0; never later than end. */
double fdt_tune_share_deadline(double end, int left);

/* The outcome of a tuning run. */
typedef struct fdt_tune_report {
    int n;                           /* problems tuned, in operator order */
    fdt_tune_summary sum[FDT_OP_COUNT];
    int missing;                     /* of them, with no verified config */
    int stopped;                     /* the session's stop flag was set */
} fdt_tune_report;

/* Tunes the problem of each requested operator on GPU g of session s with rec[op] (loaded
 * for every requested operator) and the operator's plan (fdt_tune_plan), in operator order,
 * until all are done or the stop flag is set; a time limit is shared among the problems
 * still to tune (fdt_tune_share_deadline), so every problem gets its turn. Returns
 * FDT_STATUS_ERROR when a problem could not be tuned (e: "problem: why"), else
 * FDT_STATUS_INTERRUPTED when stopped, FDT_STATUS_FAILED when a problem has no verified
 * config, FDT_STATUS_OK. out holds the summaries of the problems done in every case. */
fdt_status fdt_tune_run(const fdt_session *s, const fdt_session_gpu *g, fdt_recipe *const *rec,
                        const fdt_tune_request *rq, fdt_tune_progress cb, void *cbctx,
                        fdt_tune_report *out, fdt_err *e);

/* Copies an evaluation result into a database row (status, stage, timings, resources). */
void fdt_tune_result_to_row(const fdt_eval_result *r, const char *config, int64_t run_id,
                            int64_t problem_id, fdt_db_stage stage, fdt_db_eval *row);

#endif
