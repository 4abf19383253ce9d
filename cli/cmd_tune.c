/* fdtune [tune]: the main job. Parses the options, loads the recipe of each requested
 * operator, opens a tuning session on the GPU --gpu names (tuner/session.c) and tunes each
 * problem into the database (fdt_tune_run); or, without a GPU, shows the plan, the space and
 * the model's ranking (--dry-run) or replays the strategies against a database (--replay,
 * both in tuner/offline.c). Ctrl-C stops after the evaluation in flight; what was measured
 * stays in the database and a rerun resumes. The output is tune_output.c's. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_offline.h"
#include "fdt_recipe.h"
#include "fdt_session.h"
#include "fdt_tune.h"
#include "tune_output.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTUNE_VERSION
#define FDTUNE_VERSION "0.0.0"
#endif

static void tune_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune [tune] --gpu NAME --R N --grid G [--op OP[,OP...]] [options]\n\n"
            "Searches the fastest verified kernel configuration of each operator (default: d2x,\n"
            "d2y, d2z, lap, wave) for one GPU and grid, stores every evaluation in the tuning\n"
            "database and prints the best per operator against the recipe's default (the\n"
            "seeds' baseline) measured in the same run. A rerun resumes: configs the database\n"
            "already holds for this device and software environment are not measured again.\n\n"
            "  --gpu NAME       catalogue name or alias (H100, MI250X, mi250x), arch (sm_90,\n"
            "                   gfx90a) or 'auto' (the first visible GPU)\n"
            "  --R N            stencil radius 1..8 (order 2N)\n"
            "  --grid G         N^3 or NXxNYxNZ interior points\n"
            "  --op OPS         operators, comma-separated or repeated\n"
            "  --precision P    f32 (default) or f64\n"
            "  --recipe FILE    a recipe of your own instead of the shipped ones\n"
            "  --strategy S     exhaustive, random or model (default: the recipe's, else model)\n"
            "  --budget N       at most N evaluations per operator (default: the recipe's)\n"
            "  --time T         stop starting evaluations after T (90s, 10m, 2h) in total\n"
            "  --force          measure again what the database already holds\n"
            "  --seed S         random strategy and input data (default 1)\n"
            "  --jobs N         parallel compilations (default: CPU cores)\n"
            "  --timeout S      per candidate, verification and timing (default 30)\n"
            "  --db PATH        tuning database (default $FDTUNE_DB, else\n"
            "                   $XDG_DATA_HOME/fdtune/fdtune.db)\n"
            "  --dry-run        no GPU: space size, pruning and the model's ranking\n"
            "  --replay DB      no GPU: replay the strategies against the evaluations stored in\n"
            "                   DB for this GPU and problem; how many each needs to the best\n"
            "  --top N          rows of the model's ranking in --dry-run (default 15)\n"
            "  --json           the summary as JSON (schema %d) on stdout\n\n"
            "A progress line on a terminal, one log line per evaluation otherwise (stderr).\n"
            "Exit status: 0 done, 1 some operator has no verified config, 2 usage, 3 no GPU,\n"
            "4 operational error, 130 interrupted (the database keeps what was measured).\n",
            FDT_JSON_SCHEMA_VERSION);
}

static int add_ops(const char *arg, unsigned *ops, fdt_err *e)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        fdt_op op;
        if (fdt_op_parse(tok, &op, e))
            return -1;
        *ops |= 1u << op;
    }
    return 0;
}

/* The command line for the record: argv[0] is the program, or "tune" when given. */
static void join_argv(int argc, char **argv, char *buf, size_t n)
{
    size_t used = snprintf(buf, n, strcmp(argv[0], "tune") ? "fdtune" : "fdtune tune");
    for (int i = 1; i < argc && used < n; i++)
        used += snprintf(buf + used, n - used, " %s", argv[i]);
}

typedef struct tune_args {
    problem_args pa;
    fdt_tune_request rq;  /* the problem, operators, strategy, budget, limits */
    const char *gpu, *recipe, *db, *replay;
    int dry_run, json, top, help;
    long timeout;
} tune_args;

/* What the options say together, once all are read. */
static int check(tune_args *a)
{
    fdt_err e;
    if (!a->pa.have_R || !a->pa.have_grid) {
        print_error("tune: --R and --grid are required, e.g. fdtune --gpu H100 --R 4 "
                    "--grid 512^3 (see 'fdtune tune --help')");
        return EXIT_USAGE;
    }
    if (a->dry_run && a->replay) {
        print_error("tune: --dry-run and --replay are separate modes; give one");
        return EXIT_USAGE;
    }
    if (fdt_problem_check(&a->pa.p, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    if (!a->rq.ops)
        a->rq.ops = (1u << FDT_OP_COUNT) - 1;
    a->rq.p = a->pa.p;
    return EXIT_OK;
}

static int parse(int argc, char **argv, tune_args *a)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},        {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"gpu", required_argument, 0, 'G'},       {"recipe", required_argument, 0, 'r'},
        {"strategy", required_argument, 0, 'S'},  {"budget", required_argument, 0, 'b'},
        {"time", required_argument, 0, 't'},      {"force", no_argument, 0, 'f'},
        {"seed", required_argument, 0, 's'},      {"jobs", required_argument, 0, 'J'},
        {"timeout", required_argument, 0, 'T'},   {"db", required_argument, 0, 'D'},
        {"dry-run", no_argument, 0, 'n'},         {"replay", required_argument, 0, 'Y'},
        {"top", required_argument, 0, 'N'},       {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    problem_args_init(&a->pa);
    fdt_tune_request_init(&a->rq);
    a->timeout = 30;
    a->top = 15;
    fdt_err e;
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (add_ops(optarg, &a->rq.ops, &e)) {
                print_error("--op: %s", e.msg);
                return EXIT_USAGE;
            }
            continue;
        case 'G': a->gpu = optarg; continue;
        case 'r': a->recipe = optarg; continue;
        case 'D': a->db = optarg; continue;
        case 'Y': a->replay = optarg; continue;
        case 'n': a->dry_run = 1; continue;
        case 'f': a->rq.force = 1; continue;
        case 'j': a->json = 1; continue;
        case 'S':
            if (fdt_search_kind_parse(optarg, &a->rq.strategy, &e)) {
                print_error("--%s", e.msg);
                return EXIT_USAGE;
            }
            a->rq.have_strategy = 1;
            continue;
        case 'b':
            if (parse_int_arg("--budget", optarg, 1, 100000000, &v))
                return EXIT_USAGE;
            a->rq.budget = (int)v;
            continue;
        case 'J':
            if (parse_int_arg("--jobs", optarg, 1, 256, &v))
                return EXIT_USAGE;
            a->rq.parallel = (int)v;
            continue;
        case 's':
            if (parse_int_arg("--seed", optarg, 0, 0x7fffffffL, &v))
                return EXIT_USAGE;
            a->rq.seed = (uint64_t)v;
            continue;
        case 'T':
            if (parse_int_arg("--timeout", optarg, 1, 86400, &a->timeout))
                return EXIT_USAGE;
            continue;
        case 'N':
            if (parse_int_arg("--top", optarg, 0, 100000, &v))
                return EXIT_USAGE;
            a->top = (int)v;
            continue;
        case 't':
            if (parse_duration(optarg, &a->rq.time_s)) {
                print_error("--time '%s': expected a duration such as 90s, 10m or 2h", optarg);
                return EXIT_USAGE;
            }
            continue;
        case 'h': a->help = 1; return EXIT_OK;
        default: break;
        }
        int t = problem_args_take(&a->pa, c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (!t) {
            tune_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        print_error("tune: unexpected argument '%s' (see 'fdtune tune --help')", argv[optind]);
        return EXIT_USAGE;
    }
    return check(a);
}

/* --dry-run and --replay: no GPU is touched. */
static int offline(const tune_args *a, const fdt_catalogue *cat)
{
    fdt_probe none;
    memset(&none, 0, sizeof none);
    fdt_device dev;
    int index;
    fdt_err e;
    if (fdt_session_select_gpu(cat, a->gpu, &none, 0, &dev, &index, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    fdt_db *db = NULL;
    if (a->replay && fdt_db_open(a->replay, FDT_DB_READONLY, &db, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    tune_out_offline_begin(a->json, &dev, a->dry_run ? "dry-run" : "replay");
    int rc = EXIT_OK;
    for (int op = 0; op < FDT_OP_COUNT; op++) {
        if (!(a->rq.ops & (1u << op)))
            continue;
        fdt_recipe *r = NULL;
        if (fdt_recipe_load_for_op((fdt_op)op, a->recipe, &r, &e)) {
            print_error("%s", e.msg);
            rc = EXIT_USAGE;
            break;
        }
        fdt_status st;
        if (a->dry_run) {
            fdt_dry_run d;
            st = fdt_tune_dry_run(&a->rq, (fdt_op)op, r, &dev, a->top, &d, &e);
            if (st == FDT_STATUS_OK)
                tune_out_dry_run(a->json, r, &dev, &d);
            fdt_dry_run_free(&d);
        } else {
            fdt_replay_report x;
            st = fdt_tune_replay(db, &a->rq, (fdt_op)op, &dev, a->gpu, &x, &e);
            if (st == FDT_STATUS_OK)
                tune_out_replay(a->json, r, &x);
        }
        fdt_recipe_free(r);
        if (st != FDT_STATUS_OK) {
            print_error("%s", e.msg);
            rc = rc == EXIT_OK ? exit_status(st) : rc;
        }
    }
    tune_out_offline_end(a->json);
    fdt_db_close(db);
    return rc;
}

/* A real run: recipes first, so that a mistake costs no GPU setup. */
static int tune_on_gpu(tune_args *a, const fdt_catalogue *cat, int argc, char **argv)
{
    fdt_recipe *rec[FDT_OP_COUNT] = {0};
    fdt_err e;
    int rc = EXIT_OK;
    for (int op = 0; op < FDT_OP_COUNT; op++)
        if ((a->rq.ops & (1u << op)) &&
            fdt_recipe_load_for_op((fdt_op)op, a->recipe, &rec[op], &e)) {
            print_error("%s", e.msg);
            rc = EXIT_USAGE;
            goto out;
        }
    fdt_session_opts so;
    fdt_session_opts_init(&so);
    so.db_path = a->db;
    so.cat = cat;
    so.select = 1;
    so.gpu = a->gpu;
    so.fdtune_version = FDTUNE_VERSION;
    so.worker.seed = a->rq.seed;
    so.worker.eval_timeout_ms = (int)a->timeout * 1000;
    fdt_session s;
    fdt_status st = fdt_session_open(&so, &s, &e);
    if (s.stale)
        print_note("%d earlier run(s) ended without finishing (killed?); marked interrupted, "
                   "their results are kept and resumed", s.stale);
    if (st == FDT_STATUS_NO_GPU)
        print_no_gpu(&s.probe, "nothing can be tuned here",
                     "Without a GPU: --dry-run shows the space, the pruning and the model's "
                     "ranking; --replay DB compares the strategies on stored results");
    else if (st != FDT_STATUS_OK)
        print_error("%s", e.msg);
    if (st != FDT_STATUS_OK) {
        fdt_session_close(&s);
        rc = exit_status(st);
        goto out;
    }
    char command[1024];
    join_argv(argc, argv, command, sizeof command);
    a->rq.command = command;
    const fdt_session_gpu *g = &s.gpu[0];
    tune_progress prog;
    tune_progress_init(&prog, a->json);
    fdt_tune_report rep;
    st = fdt_tune_run(&s, g, rec, &a->rq, tune_progress_event, &prog, &rep, &e);
    tune_progress_end(&prog);
    if (st == FDT_STATUS_ERROR)
        print_error("%s", e.msg);
    tune_out_summary(a->json, &s.probe.device[g->live], &g->dev, fdt_db_path(s.db), rep.sum,
                     rep.n);
    fdt_session_close(&s);
    rc = exit_status(st);
out:
    for (int op = 0; op < FDT_OP_COUNT; op++)
        fdt_recipe_free(rec[op]);
    return rc;
}

int cmd_tune(int argc, char **argv)
{
    tune_args a;
    int rc = parse(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    if (a.help) {
        tune_usage(stdout);
        return EXIT_OK;
    }
    fdt_err e;
    fdt_catalogue *cat = NULL;
    if (fdt_catalogue_load_default(&cat, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    rc = a.dry_run || a.replay ? offline(&a, cat) : tune_on_gpu(&a, cat, argc, argv);
    fdt_catalogue_free(cat);
    return rc;
}
