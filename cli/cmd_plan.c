/* fdtune plan: a request expanded into tasks, one per problem (operator x radius x precision
 * x grid), as JSON lines for a job array (tuner/fdt_tasks.h); `fdtune tune --tasks FILE
 * --task N` runs task N. Needs no GPU and no database. */
#include "cli.h"
#include "fdt_tasks.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void plan_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune plan --R N[,N...] --grid G [--grid G2...] [--op OP[,OP...]]\n"
            "                   [--precision f32[,f64]] [options] -o tasks.jsonl\n\n"
            "Expands a tuning request into tasks, one per problem (operator x radius x\n"
            "precision x grid), written as JSON lines (schema %d) for a job array: task N is\n"
            "run by 'fdtune tune --tasks tasks.jsonl --task N' (N defaults to\n"
            "$SLURM_ARRAY_TASK_ID) on one GPU, into a database shard of its own that is\n"
            "copied to results/ beside the plan; 'fdtune db merge' gathers the shards.\n"
            "contrib/slurm/submit.sh writes a plan, submits the array and the merge job.\n\n"
            "  --op OPS         operators (default: d2x, d2y, d2z, lap, wave; dwave when named)\n"
            ABSORB_HELP
            "  --R N            radii 1..8, a list or repeated\n"
            "  --precision P    f32 (default), f64, or both\n"
            "  --grid G         N^3 or NXxNYxNZ; repeat for several grids\n"
            "  --strategy S     exhaustive, random or model (default: each recipe's)\n"
            "  --budget N       evaluations per task (default: the recipe's)\n"
            "  --time T         time limit per task (90s, 10m, 2h; at most 365d)\n"
            "  --seed S         random strategy and input data (default 1)\n"
            "  --recipe FILE    a recipe of your own (stored as an absolute path)\n"
            "  -o FILE          where to write the plan (a file is replaced atomically, a\n"
            "                   device, FIFO or /dev/stdout written in place); required\n\n"
            "Prints the number of tasks on stdout. Exit status: 0 written, 2 usage, 4 the file\n"
            "cannot be written.\n",
            FDT_TASKS_SCHEMA);
    print_exit_statuses(f);
}

enum { OPT_OP = 1000 }; /* -o is the output */

typedef struct plan_args {
    problem_args pa;
    fdt_tune_request rq;
    const char *recipe, *out;
} plan_args;

static int parse(int argc, char **argv, plan_args *a)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, OPT_OP},     {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"absorb", required_argument, 0, OPT_ABSORB},
        {"recipe", required_argument, 0, 'r'},    {"strategy", required_argument, 0, 'S'},
        {"budget", required_argument, 0, 'b'},    {"time", required_argument, 0, 't'},
        {"seed", required_argument, 0, 's'},      {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    problem_args_init(&a->pa);
    fdt_tune_request_init(&a->rq);
    fdt_err e;
    long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case OPT_OP: case 'R': case 'p': case 'g': case OPT_ABSORB:
            if (problem_args_take(&a->pa, c == OPT_OP ? 'o' : c, optarg) < 0)
                return EXIT_USAGE;
            break;
        case 'r': a->recipe = optarg; break;
        case 'o': a->out = optarg; break;
        case 'S':
            if (fdt_search_kind_parse(optarg, &a->rq.strategy, &e))
                die_usage("plan", "--%s", e.msg);
            a->rq.have_strategy = 1;
            break;
        case 'b':
            if (parse_int_arg("--budget", optarg, 1, 100000000, &v))
                return EXIT_USAGE;
            a->rq.budget = (int)v;
            break;
        case 's':
            if (parse_int_arg("--seed", optarg, 0, 0x7fffffffL, &v))
                return EXIT_USAGE;
            a->rq.seed = (uint64_t)v;
            break;
        case 't':
            if (parse_duration("--time", optarg, &a->rq.time_s))
                return EXIT_USAGE;
            break;
        case 'h': exit(print_help("plan", plan_usage));
        default: return bad_option("plan", argv, "o:h", opts);
        }
    }
    if (optind < argc)
        die_usage("plan", "unexpected argument '%s'", argv[optind]);
    if (problem_args_done(&a->pa))
        return EXIT_USAGE;
    problem_args_request(&a->pa, &a->rq);
    if (!a->rq.Rs || !a->rq.ngrids)
        die_usage("plan", "--R and --grid are required, e.g. fdtune plan --R 4 --grid 512^3 "
                          "-o tasks.jsonl");
    if (!a->out)
        die_usage("plan", "-o FILE is required: where to write the plan");
    if (!a->rq.ops)
        a->rq.ops = FDT_OPS_DEFAULT;
    return EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
    plan_args a;
    int rc = parse(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    int n = 0;
    fdt_err e;
    if ((rc = fdt_tasks_write(a.out, &a.rq, a.recipe, &n, &e))) {
        print_error("%s", e.msg);
        return rc == -2 ? EXIT_USAGE : EXIT_ERROR;
    }
    printf("%d\n", n);
    print_note("wrote %d task(s) to %s: run task N with 'fdtune tune --tasks %s --task N', or "
               "all of them with contrib/slurm/submit.sh or contrib/node/run-tasks.sh", n,
               a.out, a.out);
    return EXIT_OK;
}
