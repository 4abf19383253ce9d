/* fdtune tune --tasks FILE [--task N]: one task of a plan (tuner/fdt_tasks.h), as an element
 * of a job array runs it. The task index is --task, else $SLURM_ARRAY_TASK_ID. The task is
 * tuned on one GPU (--gpu, default the first the job was given) into a shard on node-local
 * storage, which is then copied atomically to the results directory as task-NNNN.db, also
 * when the run failed or was interrupted (a rerun of the task resumes from it: a published
 * shard is copied back first). */
#include "fdt_tasks.h"
#include "tune_cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The task's index: --task, else $SLURM_ARRAY_TASK_ID; -1 (printed) when neither says. */
static int task_index(const tune_args *a)
{
    if (a->task >= 0)
        return a->task;
    const char *env = getenv("SLURM_ARRAY_TASK_ID");
    long v;
    if (!env || !*env) {
        print_error("tune --tasks: which task? Give --task N, or run it as an element of a "
                    "SLURM job array ($SLURM_ARRAY_TASK_ID is not set)");
        return -1;
    }
    if (parse_int_arg("$SLURM_ARRAY_TASK_ID", env, 0, 1000000, &v))
        return -1;
    return (int)v;
}

/* The shard's local path: the job's (or this process's) own name in the local directory. */
static void local_path(int index, char *buf, size_t n)
{
    const char *job = getenv("SLURM_JOB_ID");
    char who[64];
    if (job && *job)
        snprintf(who, sizeof who, "job%s", job);
    else
        snprintf(who, sizeof who, "pid%ld", (long)getpid());
    snprintf(buf, n, "%s/fdtune-task-%04d-%s.db", fdt_shard_local_dir(), index, who);
}

/* The task's request and recipes in a. */
static int load_task(tune_args *a, int index, fdt_task *t)
{
    fdt_err e;
    if (fdt_task_read(a->tasks, index, t, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    int parallel = a->rq.parallel;
    fdt_task_request(t, &a->rq);
    a->rq.parallel = parallel;
    a->pa.p = t->p;
    a->recipe = t->recipe[0] ? t->recipe : NULL;
    size_t u = strlen(a->command);
    if (a->task < 0 && u < sizeof a->command)
        snprintf(a->command + u, sizeof a->command - u, " (task %d)", index);
    return EXIT_OK;
}

int tune_task(tune_args *a, const fdt_catalogue *cat)
{
    int index = task_index(a);
    fdt_task t;
    if (index < 0)
        return EXIT_USAGE;
    int rc = load_task(a, index, &t);
    fdt_recipe *rec[FDT_OP_COUNT];
    if (rc != EXIT_OK || (rc = tune_load_recipes(a, rec)) != EXIT_OK)
        return rc;
    char results[4096], shard[4200], local[4200];
    if (a->results)
        snprintf(results, sizeof results, "%s", a->results);
    else
        fdt_shard_results_default(a->tasks, results, sizeof results);
    fdt_shard_path(results, index, shard, sizeof shard);
    local_path(index, local, sizeof local);
    fdt_shard_remove(local);
    fdt_err e;
    struct stat sb;
    if (stat(shard, &sb) == 0 && fdt_shard_copy(shard, local, &e)) { /* resume from it */
        print_error("task %d: %s", index, e.msg);
        tune_free_recipes(rec);
        return EXIT_ERROR;
    }
    print_note("task %d of %d (%s R=%d %s %lldx%lldx%lld): shard %s, published to %s", index,
               t.count, fdt_op_name(t.p.op), t.p.R, fdt_prec_name(t.p.prec),
               (long long)t.p.nx, (long long)t.p.ny, (long long)t.p.nz, local, shard);
    int opened = 0;
    rc = tune_one_gpu(a, cat, rec, local, &opened);
    tune_free_recipes(rec);
    if (opened && fdt_shard_copy(local, shard, &e)) {
        print_error("task %d: %s (the shard stays at %s)", index, e.msg, local);
        return EXIT_ERROR;
    }
    fdt_shard_remove(local); /* published, or (nothing opened: no GPU) a copy of nothing new */
    if (opened)
        print_note("task %d: shard published to %s", index, shard);
    return rc;
}
