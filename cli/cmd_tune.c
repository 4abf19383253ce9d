/* fdtune [tune]: the main job. Resolves --gpu through the catalogue against the visible
 * devices, loads the recipe of each requested operator, and tunes each problem on one GPU
 * worker into the database; or, without a GPU, describes the space and the model's ranking
 * (--dry-run) or replays the strategies against a database (--replay). Ctrl-C stops after
 * the evaluation in flight; what was measured stays in the database and a rerun resumes. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "fdt_tune.h"
#include "tune_output.h"

#include <getopt.h>
#include <signal.h>
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

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    if (stop_flag) { /* a second Ctrl-C: the user means it */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    stop_flag = 1;
}

static int add_ops(const char *arg, int *want, fdt_err *e)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        fdt_op op;
        if (fdt_op_parse(tok, &op, e))
            return -1;
        want[op] = 1;
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
    int want[FDT_OP_COUNT];
    const char *gpu, *recipe, *db, *replay;
    int have_strategy, dry_run, json, force, top, help;
    fdt_search_kind strategy;
    long budget, jobs, seed, timeout;
    double time_s;
} tune_args;

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
    a->seed = 1;
    a->timeout = 30;
    a->top = 15;
    fdt_err e;
    int c, any_op = 0;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (add_ops(optarg, a->want, &e)) {
                print_error("--op: %s", e.msg);
                return EXIT_USAGE;
            }
            any_op = 1;
            continue;
        case 'G': a->gpu = optarg; continue;
        case 'r': a->recipe = optarg; continue;
        case 'D': a->db = optarg; continue;
        case 'Y': a->replay = optarg; continue;
        case 'n': a->dry_run = 1; continue;
        case 'f': a->force = 1; continue;
        case 'j': a->json = 1; continue;
        case 'S':
            if (fdt_search_kind_parse(optarg, &a->strategy, &e)) {
                print_error("--%s", e.msg);
                return EXIT_USAGE;
            }
            a->have_strategy = 1;
            continue;
        case 'b':
            if (parse_int_arg("--budget", optarg, 1, 100000000, &a->budget))
                return EXIT_USAGE;
            continue;
        case 'J':
            if (parse_int_arg("--jobs", optarg, 1, 256, &a->jobs))
                return EXIT_USAGE;
            continue;
        case 's':
            if (parse_int_arg("--seed", optarg, 0, 0x7fffffffL, &a->seed))
                return EXIT_USAGE;
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
            if (parse_duration(optarg, &a->time_s)) {
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
    if (!any_op)
        for (int i = 0; i < FDT_OP_COUNT; i++)
            a->want[i] = 1;
    return EXIT_OK;
}

/* Strategy and budget of one operator: options first, then the recipe, then defaults. */
static void plan(const tune_args *a, fdt_recipe *r, fdt_search_kind *k, int *budget)
{
    *k = FDT_SEARCH_MODEL;
    fdt_err e;
    if (a->have_strategy)
        *k = a->strategy;
    else if (fdt_recipe_strategy(r))
        fdt_search_kind_parse(fdt_recipe_strategy(r), k, &e);
    *budget = a->budget > 0 ? (int)a->budget : fdt_recipe_budget(r);
}

/* --dry-run and --replay: no GPU is touched. */
static int offline(const tune_args *a, const fdt_catalogue *cat)
{
    fdt_probe none;
    memset(&none, 0, sizeof none);
    fdt_device dev;
    int index;
    fdt_err e;
    if (select_gpu(cat, a->gpu, &none, 0, &dev, &index, &e)) {
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
        if (!a->want[op])
            continue;
        fdt_problem p = a->pa.p;
        p.op = (fdt_op)op;
        fdt_recipe *r = load_recipe(p.op, a->recipe);
        if (!r) {
            rc = EXIT_USAGE;
            break;
        }
        fdt_search_kind k;
        int budget;
        plan(a, r, &k, &budget);
        int orc = a->dry_run ? tune_out_dry_run(a->json, r, &p, &dev, k, budget, a->top)
                             : tune_out_replay(a->json, r, &p, &dev, db, a->gpu,
                                               a->have_strategy ? (int)a->strategy : -1,
                                               (uint64_t)a->seed);
        fdt_recipe_free(r);
        if (orc != EXIT_OK)
            rc = rc == EXIT_OK ? orc : rc;
    }
    tune_out_offline_end(a->json);
    fdt_db_close(db);
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
    if (load_catalogue(&cat, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    if (a.dry_run || a.replay) {
        rc = offline(&a, cat);
        fdt_catalogue_free(cat);
        return rc;
    }

    /* --- a real run: recipes first, so that a mistake costs no GPU setup --- */
    fdt_recipe *rec[FDT_OP_COUNT] = {0};
    for (int op = 0; op < FDT_OP_COUNT; op++)
        if (a.want[op] && !(rec[op] = load_recipe((fdt_op)op, a.recipe))) {
            rc = EXIT_USAGE;
            goto out;
        }
    fdt_probe pr;
    if (fdt_probe_devices(&pr, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
        goto out;
    }
    fdt_device dev;
    int index;
    if (pr.ndevices == 0) {
        fdt_sb why;
        fdt_sb_init(&why);
        for (int i = 0; i < pr.nbackends; i++)
            fdt_sb_printf(&why, "\n  %s: %s", pr.backend[i].name,
                          pr.backend[i].message[0] ? pr.backend[i].message : "no device");
        print_error("no GPU is visible, so nothing can be tuned here. Backends tried:%s\n"
                    "  Without a GPU: --dry-run shows the space, the pruning and the model's "
                    "ranking; --replay DB compares the strategies on stored results",
                    pr.nbackends ? fdt_sb_str(&why) : " none compiled in");
        fdt_sb_free(&why);
        rc = EXIT_NO_GPU;
        goto out;
    }
    if (select_gpu(cat, a.gpu, &pr, 1, &dev, &index, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    const fdt_device *info = &pr.device[index];

    fdt_db *db = NULL;
    if (fdt_db_open(a.db, FDT_DB_CREATE, &db, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
        goto out;
    }
    int stale = 0;
    fdt_tune_ctx ctx = {.db = db, .dev = &dev};
    fdt_db_env env;
    fdt_db_env_from_device(info, FDTUNE_VERSION, &env);
    if (fdt_db_run_mark_stale(db, &stale, &e) || fdt_db_device_id(db, info, &ctx.device_id, &e) ||
        fdt_db_env_id(db, &env, &ctx.env_id, &e)) {
        print_error("%s", e.msg);
        fdt_db_close(db);
        rc = EXIT_ERROR;
        goto out;
    }
    if (stale)
        print_note("%d earlier run(s) ended without finishing (killed?); marked interrupted, "
                   "their results are kept and resumed", stale);

    fdt_worker_opts wo;
    fdt_worker_opts_default(&wo);
    wo.seed = (uint64_t)a.seed;
    wo.eval_timeout_ms = (int)a.timeout * 1000;
    fdt_worker *w = NULL;
    if (fdt_worker_start(info->backend, info->index, &wo, &w, NULL, &e)) {
        print_error("%s", e.msg);
        fdt_db_close(db);
        rc = EXIT_ERROR;
        goto out;
    }
    ctx.w = w;

    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    char command[1024];
    join_argv(argc, argv, command, sizeof command);
    double deadline = a.time_s > 0 ? fdt_now() + a.time_s : 0;
    tune_progress prog;
    tune_progress_init(&prog, a.json);
    fdt_tune_summary sum[FDT_OP_COUNT];
    int nsum = 0, missing = 0;
    rc = EXIT_OK;
    for (int op = 0; op < FDT_OP_COUNT && !stop_flag; op++) {
        if (!a.want[op])
            continue;
        fdt_problem p = a.pa.p;
        p.op = (fdt_op)op;
        fdt_tune_opts o;
        fdt_tune_opts_default(&o);
        plan(&a, rec[op], &o.strategy, &o.budget);
        o.deadline = deadline;
        o.force = a.force;
        o.seed = (uint64_t)a.seed;
        if (a.jobs > 0)
            o.parallel = (int)a.jobs;
        o.command = command;
        o.stop = &stop_flag;
        if (fdt_tune_problem(&ctx, rec[op], &p, &o, tune_progress_event, &prog, &sum[nsum], &e)) {
            tune_progress_end(&prog);
            char pk[128];
            fdt_problem_format(&p, pk, sizeof pk);
            print_error("%s: %s", pk, e.msg);
            rc = EXIT_ERROR;
            break;
        }
        tune_progress_end(&prog);
        if (!sum[nsum].have_best)
            missing++;
        nsum++;
        if (deadline > 0 && fdt_now() > deadline)
            break;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    fdt_worker_stop(w);
    tune_out_summary(a.json, info, &dev, fdt_db_path(db), sum, nsum);
    fdt_db_close(db);
    if (rc == EXIT_OK && stop_flag)
        rc = 130;
    else if (rc == EXIT_OK && missing)
        rc = EXIT_FAIL;
out:
    for (int op = 0; op < FDT_OP_COUNT; op++)
        fdt_recipe_free(rec[op]);
    fdt_catalogue_free(cat);
    return rc;
}
