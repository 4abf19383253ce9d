/* Tuning without a GPU: what `fdtune tune --dry-run` and `--replay` compute. The dry run is
 * what a tuning run would search: the operator's plan (strategy, budget), the recipe's space
 * on the device with what pruned it, and the model's ranking of the survivors, which is the
 * order the model strategy measures them in. The replay runs the strategies against the
 * outcomes a database recorded for a problem and counts the evaluations each needs to reach
 * the best. Both live here, beside the tuning run they describe, rather than in search/:
 * they join the recipe, the plan, the model and (the replay) the database, and search/ stays
 * free of the database. Nothing here prints. */
#ifndef FDT_OFFLINE_H
#define FDT_OFFLINE_H

#include "fdt_db.h"
#include "fdt_recipe.h"
#include "fdt_search.h"
#include "fdt_stop.h"
#include "fdt_tune.h"

/* ------------------------------------------------------------------ dry run */

typedef fdt_ranked fdt_dry_run_row;

/* The plan and the model's ranking (fdt_model_ranking's fields, whose meaning they keep). */
typedef struct fdt_dry_run {
    fdt_problem p;
    fdt_search_kind strategy; /* the plan (fdt_tune_plan) */
    int budget;
    fdt_recipe_stats stats;   /* space, survivors, what each rule pruned */
    size_t n;                 /* configs ranked: every survivor */
    size_t ntop;              /* rows of top: the smaller of n and the top asked for */
    fdt_dry_run_row *top;     /* the model's ranking, best first */
    size_t collapsed;         /* configs collapsed into the rows of top */
    unsigned collapsed_params; /* bit i: fdt_config_params()[i] was what differed */
} fdt_dry_run;

/* The dry run of operator op of request rq with recipe r on dev (a visible device, or one
 * described from the catalogue): the plan, then fdt_model_rank (the space, every survivor
 * predicted, the best `top` of the ranking). FDT_STATUS_USAGE when the recipe fails on this problem (a
 * constraint raising, say), FDT_STATUS_ERROR when memory runs out. */
fdt_status fdt_tune_dry_run(const fdt_tune_request *rq, fdt_op op, fdt_recipe *r,
                            const fdt_device *dev, int top, fdt_dry_run *out, fdt_err *e);
void fdt_dry_run_free(fdt_dry_run *d);

/* ------------------------------------------------------------------ replay */

#define FDT_REPLAY_KINDS 3

typedef struct fdt_replay_report {
    fdt_problem p;
    char device[128];         /* the stored device the record is from */
    size_t configs;           /* configs recorded for the problem on it */
    char best_config[256];    /* the recorded best */
    double best_ms, best_gbs;
    int n;                    /* strategies replayed */
    fdt_search_kind kind[FDT_REPLAY_KINDS];
    fdt_replay res[FDT_REPLAY_KINDS];         /* each strategy over the whole record */
    fdt_stop_replay_result stop[FDT_REPLAY_KINDS]; /* the same with the stopping rules */
} fdt_replay_report;

/* Replays the strategies against what db recorded for operator op of request rq: on the
 * stored device with the most recorded configs, among those of dev's arch (of any arch when
 * dev has none), each config's best time (a full sample over a probe, then the
 * faster) or its failure. The request's strategy when it names one, else exhaustive, random
 * and model; seeded with rq->seed. Each strategy runs twice: over the whole record, and
 * with the request's stopping rules (rq->stop_rules; the limits from the copy bandwidth of
 * each config's recorded run and the model on dev) within rq->budget (0: the record). FDT_STATUS_FAILED when nothing is recorded or nothing
 * recorded succeeded, FDT_STATUS_ERROR when the database fails. */
fdt_status fdt_tune_replay(fdt_db *db, const fdt_tune_request *rq, fdt_op op,
                           const fdt_device *dev, fdt_replay_report *out, fdt_err *e);

#endif
