/* Private to the tune command's files: its options (cmd_tune.c parses them and picks the
 * way), what the ways share (tune_gpu.c, the run on one GPU among it), the run on several
 * GPUs of the node (tune_many.c), and one task of a plan into a database shard
 * (tune_task.c). */
#ifndef FDT_TUNE_CLI_H
#define FDT_TUNE_CLI_H

#include "cli.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "fdt_session.h"
#include "fdt_tune.h"

typedef struct tune_args {
    problem_args pa;
    fdt_tune_request rq;  /* the problems, operators, strategy, budget, limits */
    const char *gpu, *recipe, *db, *replay;
    const char *cpu;      /* --cpu auto|NAME: the host CPU instead of a GPU */
    int gpu_all;          /* --gpu all */
    int ndevices;         /* --devices */
    int devices[FDT_MAX_DEVICES];
    const char *simulate; /* --simulate-from DB */
    int sim_gpus;         /* --simulate-gpus N; 0: as many as --devices needs, else 1 */
    const char *tasks, *results; /* --tasks FILE, --results DIR */
    int task;             /* --task N; -1: $SLURM_ARRAY_TASK_ID */
    int dry_run, json, top, help;
    int have_stop;        /* --search-all, --stop-within or --stop-after given */
    long timeout;
    char command[1024];   /* the command line, for the record */
} tune_args;

/* The session options of a run: database, catalogue, worker (seed, timeout, recording). */
void tune_session_opts(const tune_args *a, const fdt_catalogue *cat, fdt_session_opts *so);

/* The devices a run may use: the simulated node of --simulate-from (fdt_sim_probe), or NULL
 * for the visible GPUs (the session probes). -1 (printed) when the recording is unusable. */
int tune_sim_probe(const tune_args *a, fdt_probe *p, const fdt_probe **probed);

/* The source dialect of the run's target: C for the host CPU (--cpu), else the GPUs'. */
fdt_dialect tune_dialect(const tune_args *a);

/* Loads the recipe of each requested operator into rec (NULL elsewhere); EXIT_OK or the exit
 * status (printed). */
int tune_load_recipes(const tune_args *a, fdt_recipe **rec);
void tune_free_recipes(fdt_recipe **rec);

/* Tunes on one GPU (--gpu, default the first) or the host CPU (--cpu) into db_path (NULL: a->db, else the default);
 * prints progress and the summary; returns the exit status. *opened: the database was
 * opened (something may have been written to it). */
int tune_one_gpu(tune_args *a, const fdt_catalogue *cat, fdt_recipe **rec, const char *db_path,
                 int *opened);

/* --gpu all, --devices, or problems of several radii, precisions or grids. */
int tune_many(tune_args *a, const fdt_catalogue *cat);

/* --tasks FILE [--task N]: one task of a plan, into its shard. */
int tune_task(tune_args *a, const fdt_catalogue *cat);

#endif
