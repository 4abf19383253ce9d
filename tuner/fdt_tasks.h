/* Tuning as a batch of independent tasks, for job arrays (SLURM) and plain multi-GPU nodes:
 * a plan expands a request into one task per problem, written as JSON lines (one object per
 * task, schema FDT_TASKS_SCHEMA); a task is run by index, on one GPU, into a database shard
 * of its own, written on node-local storage while it runs and then published into a results
 * directory atomically, where a merge (`fdtune db merge`) gathers the shards. One problem per
 * task: the finest grain a batch system can spread, retry and cap, and a task that fails
 * costs one problem. This module never prints. */
#ifndef FDT_TASKS_H
#define FDT_TASKS_H

#include "fdt_tune.h"

#define FDT_TASKS_SCHEMA 1

/* One task of a plan. */
typedef struct fdt_task {
    int index, count;        /* this task, of count in its plan */
    fdt_problem p;
    int have_strategy;       /* strategy given to the plan; else the recipe's */
    fdt_search_kind strategy;
    int budget;              /* 0: the recipe's */
    double time_s;           /* 0: none */
    uint64_t seed;
    char recipe[1024];       /* a recipe of the plan's own (absolute path), or "" */
} fdt_task;

/* Writes the plan of request rq (its problems, fdt_tune_problems, with its strategy, budget,
 * time limit and seed; recipe: the --recipe file or NULL) to path, atomically, one JSON line
 * per task:
 *   {"schema": 1, "task": 0, "tasks": 4, "op": "d2x", "R": 4, "precision": "f32", "nx": 512,
 *    "ny": 512, "nz": 512, "strategy": null, "budget": 0, "time_s": 0, "seed": 1,
 *    "recipe": null}
 * *ntasks: how many. -2 when the recipe is not found (the request's fault), -1 for any other
 * failure (writing path: the output rule of fdt_write_file_atomic). */
int fdt_tasks_write(const char *path, const fdt_tune_request *rq, const char *recipe,
                    int *ntasks, fdt_err *e);

/* Reads task `index` of the plan at path. Errors name the file and line: a missing file, a
 * line that is not a task of this schema, an index out of range ("task 7 of 4: the plan has
 * tasks 0..3"). */
int fdt_task_read(const char *path, int index, fdt_task *t, fdt_err *e);

/* The request that runs task t: its problem and plan (ops: its operator alone). */
void fdt_task_request(const fdt_task *t, fdt_tune_request *rq);

/* ------------------------------------------------------------------ shards */

/* Node-local storage for the shard of a running task: $SLURM_TMPDIR (set per job by many
 * sites' SLURM prologs), else $TMPDIR, else /tmp; SLURM itself sets neither. */
const char *fdt_shard_local_dir(void);

/* The results directory of a plan: `results` beside the plan file. */
void fdt_shard_results_default(const char *tasks_path, char *buf, size_t n);

/* The shard of task `index` in a results directory: DIR/task-0003.db. */
void fdt_shard_path(const char *dir, int index, char *buf, size_t n);

/* Copies the SQLite database src to dst atomically (VACUUM INTO a temporary file beside
 * dst, synced, then renamed over dst): the copy is one consistent file (a snapshot, also
 * while a writer is connected to src) with no WAL beside it, and readers of dst never see
 * half of one; dst follows the output rule of a database (fdt_output_db_path: a link's
 * target is written, a device refused). On failure dst is untouched and no temporary file
 * is left. */
int fdt_shard_copy(const char *src, const char *dst, fdt_err *e);

/* Removes a database file with its -wal and -shm files (missing ones are fine). */
void fdt_shard_remove(const char *path);

#endif
