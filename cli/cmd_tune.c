/* fdtune [tune]: the main job. Parses the options, loads the recipe of each requested
 * operator, opens a tuning session on the GPU --gpu names, or on the host CPU with --cpu
 * (tuner/session.c), and tunes each problem into the database (fdt_tune_run, through
 * tune_gpu.c); or, without a GPU, shows the plan, the space and the model's ranking
 * (--dry-run) or replays the strategies against a database (--replay, both in
 * tuner/offline.c). Several GPUs (--gpu all, --devices) or problems of several radii,
 * precisions or grids run as in tune_many.c, a task of a plan (--tasks) as in tune_task.c;
 * --simulate-from answers from a recorded database instead of a GPU. Ctrl-C stops after the
 * evaluation in flight; what was measured stays in the database and a rerun resumes. The
 * output is tune_output.c's. */
#include "fdt_db.h"
#include "fdt_offline.h"
#include "tune_cli.h"
#include "tune_output.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void tune_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune [tune] --gpu NAME --R N --grid G [--op OP[,OP...]] [options]\n"
            "       fdtune [tune] --cpu auto --R N --grid G [--op OP[,OP...]] [options]\n"
            "       fdtune [tune] --gpu all | --devices 0,2,3  --R N[,N...] --grid G [--grid G2...]\n"
            "       fdtune tune --tasks tasks.jsonl [--task N] [--results DIR]\n\n"
            "Searches the fastest verified kernel configuration of each operator (default: d2x,\n"
            "d2y, d2z, lap, wave; dwave, the damped wave step, when asked for) for one GPU (or\n"
            "the host CPU) and grid, stores every evaluation in the tuning database and prints\n"
            "the best per operator against the recipe's default (the seeds' baseline) measured\n"
            "in the same run. A rerun resumes: configs the database already holds for this\n"
            "device and software environment are not measured again.\n\n"
            "  --gpu NAME       catalogue name or alias (H100, MI250X, mi250x), arch (sm_90,\n"
            "                   gfx90a), 'auto' (the first visible GPU, the default; a dry\n"
            "                   run describes it) or 'all' (every one)\n"
            "  --cpu auto|NAME  the host CPU instead of a GPU (backend cpu, C with OpenMP\n"
            "                   built by $CC, else cc; recipe cpu.lua); NAME must be part of\n"
            "                   its model name or arch. Not with --gpu: tune the GPUs and the\n"
            "                   CPU one after the other, so the CPU's threads never disturb a\n"
            "                   GPU's timings\n"
            "  --devices LIST   these visible GPUs (indexes of 'fdtune devices'), one process\n"
            "                   each: the problems are spread over the GPUs of each model\n"
            "  --R N            stencil radius 1..8 (order 2N); a list tunes each\n"
            "  --grid G         N^3 or NXxNYxNZ interior points; repeat for several grids\n"
            "  --op OPS         operators, comma-separated or repeated\n"
            ABSORB_HELP
            "  --precision P    f32 (default) or f64; f32,f64 tunes both\n"
            "  --recipe FILE    a recipe of your own instead of the shipped ones\n"
            "  --strategy S     exhaustive, random or model (default: the recipe's, else model)\n"
            "  --budget N       at most N evaluations per operator (default: the recipe's)\n"
            "  --time T         stop starting evaluations after T (90s, 10m, 2h; at most\n"
            "                   365d) in total, shared among the problems: each search gets\n"
            "                   an equal share of what remains when it begins (one\n"
            "                   evaluation at least); one stopped by its share is marked cut\n"
            "                   short (summary, query best, export)\n"
            "  --force          measure again what the database already holds\n"
            "  --cold           measure nothing known first: by default, right after the\n"
            "                   baseline, each search measures the config fdtune answers\n"
            "                   today for the device and problem (your database, then the\n"
            "                   system database: this grid, else the nearest tuned grid),\n"
            "                   so that it never ends slower than that answer\n"
            "  --search-all     spend the whole budget: no early stop at the limit or on\n"
            "                   convergence (the budget, the space and --time still stop)\n"
            "  --stop-within P  stop when the best is within P%% of the limit that binds it:\n"
            "                   the run's copy bandwidth, or the model's floor over the\n"
            "                   space (default %g%%)\n"
            "  --stop-after K   stop after K evaluations without a gain beyond noise (default\n"
            "                   %d for model, %d random, %d exhaustive); a rerun resumes and\n"
            "                   searches on\n"
            "  --seed S         random strategy and input data (default 1)\n"
            "  --jobs N         parallel compilations (default: CPU cores; on a GPU, at\n"
            "                   most the cores less one: the next batch compiles while it\n"
            "                   measures)\n"
            "  --timeout S      per candidate, verification and timing (default 30)\n"
            "  --db PATH        tuning database (default $FDTUNE_DB, else\n"
            "                   $XDG_DATA_HOME/fdtune/fdtune.db)\n"
            "  --dry-run        no GPU: space size, pruning and the model's ranking (with\n"
            "                   --cpu auto: of the host CPU)\n"
            "  --replay DB      no GPU: replay the strategies against the evaluations stored in\n"
            "                   DB for this GPU and problem; how many each needs to the best,\n"
            "                   and where the stopping rules stop each; with --jobs N,\n"
            "                   as a tune of N compile processes proposes (batches of N,\n"
            "                   each taken before the one ahead of it is reported)\n"
            "  --top N          rows of the model's ranking in --dry-run (default 15)\n"
            "  --json           the summary as JSON (schema %d) on stdout\n"
            EXPORT_HELP
            "  --tasks FILE     run one task of a plan ('fdtune plan') into its own database\n"
            "                   shard, written on node-local storage ($SLURM_TMPDIR, else\n"
            "                   $TMPDIR, else /tmp) and then copied to the results atomically\n"
            "  --task N         the task (default: $SLURM_ARRAY_TASK_ID)\n"
            "  --results DIR    where shards go (default: results/ beside the plan file)\n"
            "  --simulate-from DB  no GPU: simulated GPUs answer from the evaluations DB\n"
            "                   recorded (marked \"(simulated)\", backend sim, in every row)\n"
            "  --simulate-gpus N   GPUs of the simulated node (default: what --devices needs)\n\n"
            "A progress line on a terminal (a line per GPU with several), one log line per\n"
            "evaluation otherwise (stderr, prefixed by the GPU with several).\n"
            "Exit status: 0 done, 1 some operator has no verified config, 2 usage, 3 no GPU,\n"
            "4 operational error, 130 interrupted (the database keeps what was measured).\n",
            100 * FDT_STOP_WITHIN_DEFAULT, FDT_STOP_AFTER_MODEL, FDT_STOP_AFTER_RANDOM,
            FDT_STOP_AFTER_EXHAUSTIVE, FDT_JSON_SCHEMA_VERSION);
    print_exit_statuses(f);
}

/* The command line for the record: argv[0] is the program, or "tune" when given. */
static void join_argv(int argc, char **argv, char *buf, size_t n)
{
    size_t used = snprintf(buf, n, strcmp(argv[0], "tune") ? "fdtune" : "fdtune tune");
    for (int i = 1; i < argc && used < n; i++)
        used += snprintf(buf + used, n - used, " %s", argv[i]);
}

/* --devices 0,2,3: one item. */
static int take_device(void *ctx, const char *item)
{
    tune_args *a = ctx;
    long v;
    if (parse_int_arg("--devices", item, 0, FDT_MAX_DEVICES - 1, &v))
        return -1;
    if (a->ndevices == FDT_MAX_DEVICES) {
        print_error("--devices: at most %d", FDT_MAX_DEVICES);
        return -1;
    }
    a->devices[a->ndevices++] = (int)v;
    return 0;
}

/* 1 when the request spans several GPUs or problems of more than one radius, precision or
 * grid (the run over several GPUs, with one GPU or more). */
static int tune_is_many(const tune_args *a)
{
    return a->gpu_all || a->ndevices > 0 || __builtin_popcount(a->rq.Rs) > 1 ||
           __builtin_popcount(a->rq.precs) > 1 || a->rq.ngrids > 1;
}

/* Options that do not go together, once all are read; EXIT_OK or EXIT_USAGE (printed). */
static int check_modes(const tune_args *a)
{
    const char *bad = NULL;
    if (a->tasks && (a->pa.have_R || a->pa.have_grid || a->pa.have_op || a->pa.have_absorb ||
                     a->rq.have_strategy ||
                     a->rq.budget || a->rq.time_s > 0 || a->recipe || a->db || a->ndevices ||
                     a->gpu_all || a->dry_run || a->replay || a->have_stop || a->rq.cold))
        bad = "--tasks: the plan says what to tune (--op, --absorb, --R, --grid, --precision, "
              "strategy, "
              "budget, time, stopping rules, --cold, recipe) and the task writes its own shard "
              "(no --db); give "
              "--gpu NAME, --simulate-from, --results, --timeout, --jobs or --json only";
    else if (!a->tasks && (a->task >= 0 || a->results))
        bad = "--task and --results go with --tasks FILE";
    else if (a->rq.cold && (a->dry_run || a->replay))
        bad = "--cold changes what a tune measures first: --dry-run and --replay measure "
              "nothing";
    else if ((a->dry_run || a->replay) && (tune_is_many(a) || a->simulate))
        bad = "--dry-run and --replay tune one GPU model, one radius, precision and grid, "
              "without --simulate-from";
    else if (a->ndevices && (a->gpu || a->gpu_all))
        bad = "--devices names the GPUs: give it without --gpu";
    else if (a->cpu && (a->gpu || a->gpu_all || a->ndevices))
        bad = "--cpu and --gpu (or --devices) together: tune them one after the other (fdtune "
              "--gpu ..., then fdtune --cpu auto ...), so that the CPU's threads never share "
              "the cores the GPU workers time on";
    else if (a->cpu && (a->simulate || a->tasks))
        bad = "--cpu tunes the host CPU itself: give it without --simulate-from and --tasks";
    else if (a->sim_gpus && !a->simulate)
        bad = "--simulate-gpus goes with --simulate-from DB";
    else if (a->dry_run && a->replay)
        bad = "--dry-run and --replay are separate modes; give one";
    if (bad) {
        print_error("tune: %s", bad);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* What the options say together, once all are read. */
static int check(tune_args *a)
{
    fdt_err e;
    if (check_modes(a))
        return EXIT_USAGE;
    if (a->tasks)
        return EXIT_OK;
    if (!a->pa.have_R || !a->pa.have_grid) {
        print_error("tune: --R and --grid are required, e.g. fdtune --gpu H100 --R 4 "
                    "--grid 512^3 (see 'fdtune tune --help')");
        return EXIT_USAGE;
    }
    if (fdt_problem_check(&a->pa.p, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    if (!a->rq.ops)
        a->rq.ops = FDT_OPS_DEFAULT;
    return EXIT_OK;
}

/* The options of several GPUs, tasks and simulation: 1 taken, 0 not
 * one of them, -1 bad (printed). */
static int take_more(tune_args *a, int c, const char *arg)
{
    long v;
    switch (c) {
    case 'A': return list_each("--devices", arg, take_device, a) ? -1 : 1;
    case 'M': a->simulate = arg; return 1;
    case 'k': a->tasks = arg; return 1;
    case 'X': a->results = arg; return 1;
    case 'L': a->rq.stop_rules.all = a->have_stop = 1; return 1;
    case 'W':
        a->have_stop = 1;
        return parse_percent_arg("--stop-within", arg, &a->rq.stop_rules.within) ? -1 : 1;
    case 'C':
        if (parse_int_arg("--stop-after", arg, 1, 100000000, &v))
            return -1;
        a->rq.stop_rules.after = (int)v;
        a->have_stop = 1;
        return 1;
    case 'K':
        if (parse_int_arg("--simulate-gpus", arg, 1, FDT_MAX_DEVICES, &v))
            return -1;
        a->sim_gpus = (int)v;
        return 1;
    case 'x':
        if (parse_int_arg("--task", arg, 0, 1000000, &v))
            return -1;
        a->task = (int)v;
        return 1;
    default: return 0;
    }
}

/* The getopt code of --cold (clear of every letter and of the shared options' codes). */
enum { OPT_COLD = 1100 };

static int parse(int argc, char **argv, tune_args *a)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},        {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"absorb", required_argument, 0, OPT_ABSORB},
        {"gpu", required_argument, 0, 'G'},       {"recipe", required_argument, 0, 'r'},
        {"cpu", required_argument, 0, 'c'},
        {"strategy", required_argument, 0, 'S'},  {"budget", required_argument, 0, 'b'},
        {"time", required_argument, 0, 't'},      {"force", no_argument, 0, 'f'},
        {"seed", required_argument, 0, 's'},      {"jobs", required_argument, 0, 'J'},
        {"timeout", required_argument, 0, 'T'},   {"db", required_argument, 0, 'D'},
        {"dry-run", no_argument, 0, 'n'},         {"replay", required_argument, 0, 'Y'},
        {"top", required_argument, 0, 'N'},       {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},            {"devices", required_argument, 0, 'A'},
        {"simulate-from", required_argument, 0, 'M'},
        {"simulate-gpus", required_argument, 0, 'K'},
        {"tasks", required_argument, 0, 'k'},     {"task", required_argument, 0, 'x'},
        {"results", required_argument, 0, 'X'},   {"search-all", no_argument, 0, 'L'},
        {"stop-within", required_argument, 0, 'W'},
        {"stop-after", required_argument, 0, 'C'}, {"cold", no_argument, 0, OPT_COLD},
        EXPORT_OPTIONS, {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    problem_args_init(&a->pa);
    fdt_tune_request_init(&a->rq);
    a->timeout = 30;
    a->top = 15;
    a->task = -1;
    fdt_err e;
    int c;
    long v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'G': a->gpu = optarg; continue;
        case 'c':
            if (!*optarg) {
                print_error("tune: --cpu needs auto or a part of the CPU's name or arch");
                return EXIT_USAGE;
            }
            a->cpu = optarg;
            continue;
        case 'r': a->recipe = optarg; continue;
        case 'D': a->db = optarg; continue;
        case 'Y': a->replay = optarg; continue;
        case 'n': a->dry_run = 1; continue;
        case 'f': a->rq.force = 1; continue;
        case OPT_COLD: a->rq.cold = 1; continue;
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
            if (parse_duration("--time", optarg, &a->rq.time_s))
                return EXIT_USAGE;
            continue;
        case 'h': a->help = 1; return EXIT_OK;
        case OPT_EXPORT_JSON:
        case OPT_EXPORT_CSV: export_option(c, optarg); continue;
        default: break;
        }
        int t = problem_args_take(&a->pa, c, optarg);
        if (!t)
            t = take_more(a, c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (!t)
            return bad_option("tune", argv, "h", opts);
    }
    if (optind < argc) {
        print_error("tune: unexpected argument '%s' (see 'fdtune tune --help')", argv[optind]);
        return EXIT_USAGE;
    }
    if (problem_args_done(&a->pa))
        return EXIT_USAGE;
    problem_args_request(&a->pa, &a->rq);
    if (a->gpu && !strcmp(a->gpu, "all")) {
        a->gpu_all = 1;
        a->gpu = NULL;
    }
    return check(a);
}

/* The device of --dry-run and --replay: --cpu is the host CPU, --gpu auto (the default) the
 * visible GPU, anything else is described from the catalogue. EXIT_OK, or the exit status
 * (printed). */
static int offline_device(const tune_args *a, const fdt_catalogue *cat, fdt_device *dev)
{
    if (a->cpu)
        return host_cpu(a->cpu, dev);
    const char *gpu = a->gpu ? a->gpu : "auto";
    if (fdt_session_gpu_auto(gpu))
        return resolve_gpu_auto(&gpu, cat, dev);
    fdt_probe none;
    memset(&none, 0, sizeof none);
    int index;
    fdt_err e;
    if (fdt_session_select_gpu(cat, gpu, &none, 0, dev, &index, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* --dry-run and --replay: no GPU is touched. */
static int offline(const tune_args *a, const fdt_catalogue *cat)
{
    fdt_device dev;
    fdt_err e;
    int rc = offline_device(a, cat, &dev);
    if (rc != EXIT_OK)
        return rc;
    fdt_db *db = NULL;
    if (a->replay && fdt_db_open(a->replay, FDT_DB_READONLY, &db, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    tune_out_offline_begin(a->json, &dev, a->dry_run ? "dry-run" : "replay");
    for (int op = 0; op < FDT_OP_COUNT; op++) {
        if (!(a->rq.ops & (1u << op)))
            continue;
        fdt_recipe *r = NULL;
        if (fdt_recipe_load_for_dialect((fdt_op)op, tune_dialect(a), a->recipe, &r, &e)) {
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
            st = fdt_tune_replay(db, &a->rq, (fdt_op)op, &dev, &x, &e);
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

int cmd_tune(int argc, char **argv)
{
    tune_args a;
    int rc = parse(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    if (a.help)
        return print_help("tune", tune_usage);
    join_argv(argc, argv, a.command, sizeof a.command);
    fdt_err e;
    fdt_catalogue *cat = NULL;
    if (fdt_catalogue_load_default(&cat, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    if (a.dry_run || a.replay) {
        rc = offline(&a, cat);
    } else if (fdt_tune_known_check(&a.rq, &e)) {
        print_error("%s (--cold reads no database but yours)", e.msg);
        rc = EXIT_ERROR;
    } else if (a.tasks) {
        rc = tune_task(&a, cat);
    } else if (tune_is_many(&a)) {
        rc = tune_many(&a, cat);
    } else {
        fdt_recipe *rec[FDT_OP_COUNT];
        int opened;
        rc = tune_load_recipes(&a, rec);
        if (rc == EXIT_OK)
            rc = tune_one_gpu(&a, cat, rec, NULL, &opened);
        tune_free_recipes(rec);
    }
    fdt_catalogue_free(cat);
    return rc;
}
