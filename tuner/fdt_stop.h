/* When a search stops (issue 30): before its budget when its best is within a stated distance
 * of the limit that binds it (the copy bandwidth measured in the run for a config the model
 * calls DRAM-bound, the model's bound of its binding unit otherwise, where the measurement
 * does not beat it),
 * or when the last K evaluations found nothing faster beyond the noise of the tuner's
 * decisions (fdt_decide_beats); the budget and the space are the upper bounds, as are the
 * time limit and the user. Why a search stopped and the headroom left is one line of text
 * ("within 0.8% of copy", "converged: 60 evaluations without gain", "budget: 372 of 372"),
 * stored with the best decision and shown by every output. Target-neutral: the limit is the
 * run's copy bandwidth and the model's bound, whatever the device. The same rules replay
 * offline against recorded outcomes (fdt_stop_replay), which is how their defaults were
 * chosen (bench/stop_replay.py). Nothing here prints. */
#ifndef FDT_STOP_H
#define FDT_STOP_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_decide.h"
#include "fdt_search.h"

/* The defaults, chosen by replay (bench/stop_replay.py, bench/stop_replay_h200.txt): each
 * recorded problem replayed with its recipe's strategy (exhaustive for d2x and d2y, model for
 * d2z, lap and wave), the rules that stop every one within 1% of the best of its whole record,
 * the cheapest, one distance for all. On the H200 recordings (tests/data/h200-record.db, 40
 * problems of 61-718 configs, 2026-11-28 and 29) that is 2% with K 60 exhaustive and 160
 * model; random, no recipe's strategy, keeps its K of every problem (250: no lower K keeps it
 * within 1%). The model needs K 160 for lap R=8 f32 256^3, whose best it proposes 266th of
 * 400 (K 80 stopped it 10.5% above, K 130 another problem 5.8% above). The former 1% with K
 * 80 model missed on those two; the limit rule then took one config's own on-chip bound for
 * the search's (d2y R=8 f64 512^3 stopped "within 0.8% of the model's l2 bound", 33.6% above
 * its record's best): the limit is now the floor over the space (fdt_stop_floor). The H100
 * recording (h100-replay.db, 40 configs a problem) is too short to tell these apart. */
#define FDT_STOP_WITHIN_DEFAULT 0.02
#define FDT_STOP_AFTER_MODEL 160
#define FDT_STOP_AFTER_RANDOM 250
#define FDT_STOP_AFTER_EXHAUSTIVE 60

/* The convergence rule's default K for strategy k. */
int fdt_stop_after_default(fdt_search_kind k);

typedef struct fdt_stop_opts {
    int all;       /* --search-all: neither rule stops the search; the budget does */
    double within; /* the limit rule: stop when best <= limit * (1 + within); 0: off */
    int after;     /* the convergence rule: stop after this many evaluations without a gain
                      beyond noise; 0: off; < 0: the strategy's default */
} fdt_stop_opts;

/* Both rules on, with the defaults. */
void fdt_stop_opts_default(fdt_stop_opts *o);

typedef enum {
    FDT_STOP_NOT,         /* still searching */
    FDT_STOP_LIMIT,       /* the best is within the distance of its limit */
    FDT_STOP_CONVERGED,   /* the last `after` evaluations gained nothing beyond noise */
    FDT_STOP_BUDGET,      /* the budget is spent */
    FDT_STOP_SPACE,       /* every config of the space is measured */
    FDT_STOP_TIME,        /* the time limit */
    FDT_STOP_INTERRUPTED, /* the user */
} fdt_stop_why;

/* The limits of a search. */
typedef struct fdt_stop_limit {
    double copy_ms;  /* the problem's effective bytes at the run's copy bandwidth; 0: unknown */
    double chip_ms;  /* the problem's floor on chip (fdt_stop_floor) when it is slower than
                        the copy; 0 otherwise */
    fdt_bound bound; /* the unit of that floor (DRAM when there is none) */
} fdt_stop_limit;

/* What the model says no config of a space can beat on chip. */
typedef struct fdt_stop_floor {
    double chip_ms;  /* the lowest, over the space, of each config's time on the unit the model
                        says binds it (L2, L1, shared, issue, fp) at its full rate; 0 when the
                        model calls any config of the space bound by DRAM or latency: then
                        only the copy limits the problem */
    fdt_bound bound; /* that lowest config's bound */
} fdt_stop_floor;

/* The floor of problem p's search over the n configs of space on dev. One config's own
 * on-chip bound is no limit of the search: another config, bound elsewhere, may be faster
 * (a d2y R=8 f64 search stopped "within 0.8% of the model's l2 bound" 33.6% above the best
 * of its record). */
void fdt_stop_floor_of(const fdt_problem *p, const fdt_config *space, size_t n,
                       const fdt_device *dev, fdt_stop_floor *f);

/* The limits of a search of problem p with floor f and the run's copy bandwidth copy_gbs
 * (GB/s; <= 0: unknown). */
void fdt_stop_limit_of(const fdt_problem *p, const fdt_stop_floor *f, double copy_gbs,
                       fdt_stop_limit *l);

/* The limit that binds a measured time ms of a config with limits l: the model's on-chip
 * bound when there is one and ms does not beat it (a bound the measurement beats is no
 * limit), else the copy. Returns it (ms; 0: none known) and names it in name ("copy", "the
 * model's shared bound"). */
double fdt_stop_binding(const fdt_stop_limit *l, double ms, char *name, size_t n);

/* A search's stop state. */
typedef struct fdt_stop {
    fdt_stop_opts o;
    fdt_decide_timing best; /* the best so far beyond noise (resumed or measured): what a
                               gain must beat; NaN median: none */
    fdt_decide_timing fastest; /* the lowest median so far (a result faster than best but
                                  within its noise too): the headroom's; NaN: none */
    fdt_stop_limit limit;   /* the limits the fastest was reported with */
    int evals;              /* evaluations reported in this search */
    int since_gain;         /* of them, since the last gain beyond noise */
    fdt_stop_why why;
    int planned;            /* the most evaluations the search may spend (budget or space) */
} fdt_stop;

/* A fresh state for a search with strategy k: nothing best yet (o->after < 0 becomes k's
 * default). planned: the budget of this search, or the space left when that is smaller. */
void fdt_stop_init(fdt_stop *s, const fdt_stop_opts *o, fdt_search_kind k, int planned);

/* A result the database already had (a rerun resumes): it sets the best to beat, without
 * counting as an evaluation of this search, so a rerun always gets evaluations of its own. */
void fdt_stop_resumed(fdt_stop *s, const fdt_decide_timing *t, const fdt_stop_limit *l);

/* One evaluation of this search: t its timing (a failure: NaN median), l its config's limits
 * (fdt_stop_limit_of). Returns 1 when a rule stops the search now (s->why says which), else
 * 0. A gain that reaches the limit stops at once; a result that gains nothing counts towards
 * convergence. */
int fdt_stop_report(fdt_stop *s, const fdt_decide_timing *t, const fdt_stop_limit *l);

/* Ends the state for a reason found outside the rules (budget, space, time, interrupted),
 * unless a rule already stopped it. */
void fdt_stop_end(fdt_stop *s, fdt_stop_why why);

/* The best's headroom to its limit: best / limit - 1, never below 0; -1 when unknown. */
double fdt_stop_headroom(const fdt_stop *s);

/* Why the search stopped, in one line: "within 0.8% of copy", "converged: 60 evaluations
 * without gain (12.0% above copy)", "budget: 372 of 372 (3.1% above the model's shared
 * bound)", "space: 40 of 40", "space: nothing left to measure", "time limit: 12 of 40",
 * "interrupted: 3 of 40". */
void fdt_stop_describe(const fdt_stop *s, char *buf, size_t n);

/* ------------------------------------------------------------------ replay */

/* What a strategy with the stopping rules does against recorded outcomes. */
typedef struct fdt_stop_replay_result {
    int evals;           /* evaluations spent when it stopped */
    fdt_stop_why why;
    char stopped[160];   /* fdt_stop_describe */
    double best_ms;      /* the best it found */
    double gap;          /* best_ms over the record's best, minus 1 */
    int within[2];       /* evaluations to reach within 1% and 3% of the record's best before
                            stopping; 0: not reached */
} fdt_stop_replay_result;

/* Runs strategy kind over the space (n configs) against the record: timing[i] config i's
 * recorded timing (NaN median: failed), limit[i] its limits. budget <= 0: the space.
 * predicted: as fdt_search_new_predicted (NULL: the model with p and dev). batch <= 0: each
 * proposal reported before the next is taken (the strategy's own order); batch >= 1: as a
 * tune proposes (tuner/tune.c), batches of that many, each taken before the one ahead of it
 * is reported. Fails when nothing recorded succeeded. */
int fdt_stop_replay(fdt_search_kind kind, const fdt_config *space, size_t n,
                    const fdt_decide_timing *timing, const fdt_stop_limit *limit,
                    const double *predicted, const fdt_problem *p,
                    const fdt_device *dev, uint64_t seed, const fdt_stop_opts *o, int budget,
                    int batch, fdt_stop_replay_result *out, fdt_err *e);

#endif
