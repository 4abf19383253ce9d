/* fdtune bench --hybrid: N damped wave steps split between a GPU and the host CPU in the
 * modes asked (gpu-only, cpu-only, data-parallel at one or more fractions, task-parallel),
 * each compared with the single-device run from the same field (eval/hybrid.c's
 * fdt_hyrun_run); --reflection runs the energy check of the absorbing layer instead
 * (fdt_hyrun_reflection). This file parses the options, resolves the devices, and renders. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_hybrid_db.h"
#include "fdt_hyrun.h"
#include "fdt_session.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_RUNS 16
#define MAX_WIDTHS 8

static void hybrid_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune bench --hybrid MODE[,MODE...] --op dwave --R N --grid G --absorb W[:S]\n"
            "                    [--gpu auto|N|cpu] [--cpu auto] [--steps N] [--warmup N]\n"
            "                    [--fraction F[,F...]] [--config-gpu KEY] [--config-cpu KEY]\n"
            "                    [--config-layers KEY] [--share never|unified|always]\n"
            "                    [--seed S] [--timeout S] [--repeat N] [--db PATH] [--json]\n"
            "       fdtune bench --reflection --op dwave --R N --grid G --absorb W[:S]\n"
            "                    [--widths W,W,...] [--gpu auto|N|cpu] [--config-gpu KEY]\n"
            "                    [--json]\n\n"
            "Runs N time steps of the damped wave step (dwave) split between device A (the GPU;\n"
            "--gpu cpu: the host CPU stands in for it) and device B (the host CPU), in each MODE:\n"
            "  gpu-only       A alone, its config's deployment, its steps queued back to back\n"
            "  cpu-only       B alone, the same\n"
            "  data-parallel  the z planes split: a fraction F of them (--fraction, default 0.25;\n"
            "                 several give a run each) on B; the R planes at the cut (in a\n"
            "                 box the config can run) computed first and copied to the other\n"
            "                 device on copy streams while the rest computes\n"
            "  task-parallel  A the interior [W, n-W)^3 (the undamped kernel), B the six layers;\n"
            "                 the R-thick faces exchanged after each step\n"
            "With --share unified (the default) a GPU that reads host memory in place shares one\n"
            "allocation with the CPU and nothing is copied; always: host-mapped memory as its\n"
            "stand-in; never: always copy. Each run is compared with the single-device step on\n"
            "A over the grid from the same initial field: the largest difference after the\n"
            "steps, and whether the fields are equal bit for bit. Reported: the median time per\n"
            "step after --warmup steps, the halo exchange's own time per step and its bytes.\n"
            "The field: p, p_prev seeded in (-1, 1), c2 below 0.9 of the leapfrog's stability\n"
            "bound 4/rho (rho: the stencil's spectral radius), a source at the centre; a run\n"
            "agrees when every point is finite and max |diff| <= 16 x steps x eps x max |p|\n"
            "(both printed), or the fields are equal bit for bit. With one allocation\n"
            "(--share) the config of the smaller align runs with the larger (said).\n"
            "--reflection: a Ricker pulse from the grid's centre, for each W of --widths\n"
            "(default 0,4,8,16; 0 is the undamped wave): the sum of p^2 in the central sphere\n"
            "after a wave reflected at the boundary would be back, over the same before the pulse\n"
            "reaches a layer. It must stay below 1 and fall as W grows (exit status 1\n"
            "otherwise, with the reason: an energy that is not finite fails it too).\n\n"
            "  --config-gpu/--config-cpu KEY  the configs (default: each device's tuned best for\n"
            "                   the problem in the database, else its dialect's default)\n"
            "  --config-layers KEY  task-parallel: B's config on the six layers (default, without\n"
            "                   --config-cpu: the config whose sides deployment's slabs the\n"
            "                   database timed fastest, else B's config)\n"
            "  --db PATH        the tuning database (default: the default location): the\n"
            "                   tuned bests, and the hybrid planner's prediction of each\n"
            "                   mode's time per step shown beside the measured one ('fdtune\n"
            "                   hybrid plan' says what it needs when there is none;\n"
            "                   data-parallel: at each run's planes on the CPU)\n"
            "  --steps N        timed steps (default 10); --warmup N (default 2)\n"
            "  --timeout S      per run (default 600)\n"
            "  --repeat N       runs of each mode (default 1; at most 100), each in its own\n"
            "                   process (fresh allocations, kernels and threads): the run\n"
            "                   of the median time per step is reported, with the least\n"
            "                   and greatest of the runs (a shared host's spread between\n"
            "                   runs exceeds that of steps within one); every run must agree\n"
            "A run that does not agree with the single-device run to rounding: exit status 1.\n");
    print_exit_statuses(f);
}

typedef struct hybrid_args {
    problem_args pa;
    fdt_hyrun_request rq;
    int nmode, nfrac, json, reflection, nwidth, have_cfg[2];
    int layers_given;       /* --config-layers */
    fdt_hyrun_mode modes[FDT_HYRUN_MODES];
    double frac[MAX_RUNS];
    int widths[MAX_WIDTHS];
    const char *gpu, *cpu, *db;
    int planned;            /* plan holds the planner's prediction, from in */
    fdt_hybrid_in in;
    fdt_hybrid_plan plan;
    char no_plan[512];      /* why there is none */
} hybrid_args;

static int take_mode(void *ctx, const char *item)
{
    hybrid_args *a = ctx;
    fdt_err e;
    if (a->nmode == FDT_HYRUN_MODES)
        return print_error("--hybrid: at most %d modes", FDT_HYRUN_MODES), -1;
    if (fdt_hyrun_mode_parse(item, &a->modes[a->nmode], &e))
        return print_error("--hybrid: %s", e.msg), -1;
    a->nmode++;
    return 0;
}

static int take_fraction(void *ctx, const char *item)
{
    hybrid_args *a = ctx;
    char *end;
    double f = strtod(item, &end);
    if (*end || !(f > 0 && f < 1))
        return print_error("--fraction '%s': a number between 0 and 1 (the share of the "
                           "planes on the CPU)", item), -1;
    if (a->nfrac == MAX_RUNS)
        return print_error("--fraction: at most %d values", MAX_RUNS), -1;
    a->frac[a->nfrac++] = f;
    return 0;
}

static int take_width(void *ctx, const char *item)
{
    hybrid_args *a = ctx;
    long w;
    if (a->nwidth == MAX_WIDTHS)
        return print_error("--widths: at most %d values", MAX_WIDTHS), -1;
    if (parse_int_arg("--widths", item, 0, 4096, &w))
        return -1;
    a->widths[a->nwidth++] = (int)w;
    return 0;
}

enum { O_HYBRID = 1000, O_GPU, O_CPU, O_STEPS, O_WARMUP, O_FRACTION, O_CFG_GPU, O_CFG_CPU,
       O_CFG_LAYERS, O_SHARE, O_SEED, O_TIMEOUT, O_REPEAT, O_REFLECTION, O_WIDTHS, O_DB };

/* One option of the hybrid form (not a problem option); -1: refused (printed). */
static int take_option(hybrid_args *a, int c, const char *arg)
{
    long v;
    fdt_err e;
    static const char *const shares[] = {"never", "unified", "always"};
    switch (c) {
    case O_HYBRID: return list_each("--hybrid", arg, take_mode, a);
    case O_FRACTION: return list_each("--fraction", arg, take_fraction, a);
    case O_WIDTHS: return list_each("--widths", arg, take_width, a);
    case O_GPU: a->gpu = arg; return 0;
    case O_CPU: a->cpu = arg; return 0;
    case O_DB: a->db = arg; return 0;
    case O_REFLECTION: a->reflection = 1; return 0;
    case O_STEPS:
        return parse_int_arg("--steps", arg, 1, 1000000, &v) ? -1 : (a->rq.steps = (int)v, 0);
    case O_WARMUP:
        return parse_int_arg("--warmup", arg, 0, 1000000, &v) ? -1 : (a->rq.warmup = (int)v, 0);
    case O_SEED:
        return parse_int_arg("--seed", arg, 0, 0x7fffffffL, &v) ? -1
                                                                 : (a->rq.seed = (uint64_t)v, 0);
    case O_TIMEOUT:
        return parse_int_arg("--timeout", arg, 1, 86400, &v) ? -1 : (a->rq.timeout_s = (int)v, 0);
    case O_REPEAT:
        return parse_int_arg("--repeat", arg, 1, FDT_HYRUN_MAX_REPEAT, &v) ? -1
                                                                      : (a->rq.repeat = (int)v, 0);
    case O_CFG_GPU:
    case O_CFG_CPU:
        if (fdt_config_parse(arg, &a->rq.side[c == O_CFG_CPU].cfg, &e))
            return print_error("%s: %s", c == O_CFG_CPU ? "--config-cpu" : "--config-gpu",
                               e.msg), -1;
        a->have_cfg[c == O_CFG_CPU] = 1;
        return 0;
    case O_CFG_LAYERS:
        if (fdt_config_parse(arg, &a->rq.side[1].cfg_layers, &e))
            return print_error("--config-layers: %s", e.msg), -1;
        a->rq.side[1].has_layers = a->layers_given = 1;
        return 0;
    case O_SHARE:
        for (int i = 0; i < 3; i++)
            if (!strcmp(arg, shares[i]))
                return a->rq.share = (fdt_hyrun_share)i, 0;
        return print_error("--share '%s': never, unified or always", arg), -1;
    default: return -2;
    }
}

/* Returns -1 to go on, else the exit status. */
static int parse(int argc, char **argv, hybrid_args *a)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},        {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"absorb", required_argument, 0, OPT_ABSORB}, {"hybrid", required_argument, 0, O_HYBRID},
        {"gpu", required_argument, 0, O_GPU},     {"cpu", required_argument, 0, O_CPU},
        {"steps", required_argument, 0, O_STEPS}, {"warmup", required_argument, 0, O_WARMUP},
        {"fraction", required_argument, 0, O_FRACTION},
        {"config-gpu", required_argument, 0, O_CFG_GPU},
        {"config-cpu", required_argument, 0, O_CFG_CPU},
        {"config-layers", required_argument, 0, O_CFG_LAYERS},
        {"share", required_argument, 0, O_SHARE}, {"seed", required_argument, 0, O_SEED},
        {"timeout", required_argument, 0, O_TIMEOUT}, {"repeat", required_argument, 0, O_REPEAT},
        {"reflection", no_argument, 0, O_REFLECTION}, {"widths", required_argument, 0, O_WIDTHS},
        {"db", required_argument, 0, O_DB},
        {"json", no_argument, 0, 'j'},            {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    problem_args_init(&a->pa);
    fdt_hyrun_request_init(&a->rq);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int t = problem_args_take(&a->pa, c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (t)
            continue;
        if (c == 'j')
            a->json = 1;
        else if (c == 'h')
            return print_help("bench", hybrid_usage);
        else if ((t = take_option(a, c, optarg)) == -1)
            return EXIT_USAGE;
        else if (t == -2)
            return bad_option("bench", argv, "h", opts);
    }
    if (optind < argc)
        die_usage("bench", "unexpected argument '%s'", argv[optind]);
    if (problem_args_one(&a->pa, "bench") || problem_args_done(&a->pa))
        return EXIT_USAGE;
    if (!a->pa.have_grid)
        die_usage("bench", "--grid is required (N^3 or NXxNYxNZ)");
    if (!a->reflection && !a->nmode)
        die_usage("bench", "--hybrid needs modes: gpu-only, cpu-only, data-parallel, "
                           "task-parallel");
    fdt_err e;
    if (fdt_problem_check(&a->pa.p, &e))
        return print_error("%s", e.msg), EXIT_USAGE;
    if (a->pa.p.op != FDT_OP_DWAVE)
        die_usage("bench", "--hybrid and --reflection run the damped wave step: --op dwave "
                           "--absorb W[:S]");
    if (!a->nfrac)
        a->frac[a->nfrac++] = a->rq.fraction;
    if (!a->nwidth) {
        static const int def[] = {0, 4, 8, 16};
        memcpy(a->widths, def, sizeof def);
        a->nwidth = 4;
    }
    return -1;
}

/* Device A (--gpu auto: the first GPU; N: device N; cpu: the host) and B (the host CPU). */
static int resolve_devices(hybrid_args *a)
{
    fdt_probe p;
    fdt_err e;
    fdt_device host;
    fdt_status st = fdt_session_host_cpu(a->cpu ? a->cpu : "auto", NULL, &p, &host, &e);
    if (st != FDT_STATUS_OK)
        return print_error("%s", e.msg), exit_status(st);
    a->rq.side[1].dev = host;
    const char *gpu = a->gpu ? a->gpu : "auto";
    if (!strcmp(gpu, "cpu")) {
        a->rq.side[0].dev = host;
    } else {
        long idx = 0;
        if (strcmp(gpu, "auto") && parse_int_arg("--gpu", gpu, 0, FDT_MAX_DEVICES - 1, &idx))
            return EXIT_USAGE;
        if (fdt_probe_devices(&p, &e))
            return print_error("%s", e.msg), EXIT_ERROR;
        if (p.ndevices == 0) {
            print_no_gpu(&p, "the hybrid step has no device A", "Give --gpu cpu to let the "
                                                                 "host CPU stand in for it.");
            return EXIT_NO_GPU;
        }
        if (idx >= p.ndevices)
            return print_error("--gpu %ld: only %d device(s) visible", idx, p.ndevices),
                   EXIT_USAGE;
        a->rq.side[0].dev = p.device[idx];
    }
    return -1;
}

/* The configs neither given nor found tuned: each dialect's default. */
static int default_configs(hybrid_args *a)
{
    fdt_err e;
    for (int s = 0; s < 2; s++)
        if (!a->have_cfg[s]) {
            fdt_target t;
            if (fdt_target_resolve(&a->rq.side[s].dev, &t, &e))
                return print_error("%s", e.msg), EXIT_ERROR;
            fdt_config_default_for(&t.gen, &a->rq.side[s].cfg);
        }
    return -1;
}

/* The planner's prediction from the database (fdt_hybrid_gather, fdt_hybrid_plan_make) and
 * the tuned bests as the configs not given; without them, why not in a->no_plan. */
static void predict(hybrid_args *a)
{
    char def[4096];
    fdt_err e;
    const char *path = a->db;
    if (!path && (fdt_db_default_path(def, sizeof def, &e) || access(def, F_OK))) {
        snprintf(a->no_plan, sizeof a->no_plan, "no tuning database");
        return;
    }
    path = path ? path : def;
    fdt_db *db = NULL;
    fdt_hybrid_sources src;
    if (fdt_db_open(path, FDT_DB_READONLY, &db, &e) ||
        fdt_hybrid_gather(db, a->rq.side[0].dev.name, a->rq.side[1].dev.name, &a->rq.p, &a->in,
                          &src, &e) != FDT_STATUS_OK ||
        fdt_hybrid_plan_make(&a->in, &a->plan, &e)) {
        snprintf(a->no_plan, sizeof a->no_plan, "%s", e.msg);
        fdt_db_close(db);
        return;
    }
    fdt_db_close(db);
    a->planned = 1;
    const char *best[2] = {src.gpu_config, src.cpu_config};
    fdt_hyrun_side *b = &a->rq.side[1];
    if (!a->have_cfg[1] && !b->has_layers && src.cpu_layers_config[0] &&
        fdt_config_parse(src.cpu_layers_config, &b->cfg_layers, &e) == 0)
        b->has_layers = 1;
    for (int s = 0; s < 2; s++)
        if (!a->have_cfg[s] && best[s][0] && fdt_config_parse(best[s], &a->rq.side[s].cfg, &e) == 0)
            a->have_cfg[s] = 1;
}

/* The prediction of run r's mode (a run mode is the plan's strategy of the same index);
 * NaN when there is none. */
static double predicted_ms(const hybrid_args *a, const fdt_hyrun_result *r)
{
    _Static_assert((int)FDT_HYRUN_GPU == (int)FDT_HYB_GPU &&
                       (int)FDT_HYRUN_CPU == (int)FDT_HYB_CPU &&
                       (int)FDT_HYRUN_DATA == (int)FDT_HYB_DATA &&
                       (int)FDT_HYRUN_TASK == (int)FDT_HYB_TASK,
                   "run modes and plan strategies in the same order");
    return a->planned ? fdt_hybrid_predicted_ms(&a->in, &a->plan, (fdt_hybrid_strategy)r->mode,
                                                r->nz_b)
                      : NAN;
}

#define NCOLS(x) ((int)(sizeof x / sizeof x[0]))

static const fdt_col run_cols[] = {
    {"mode", "mode", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"cpu_planes", "CPU planes", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"step_ms", "ms/step", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, 0},
    {"runs", "runs", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"step_min_ms", "min", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, 0},
    {"step_max_ms", "max", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, 0},
    {"predicted_ms", "predicted", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, FDT_COL_DASH},
    {"exchange_ms", "exchange ms", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, 0},
    {"exchange_bytes", "exchange MB", FDT_COL_REAL, "%.2f", FDT_SHOW_TEXT, 0},
    {"exchange_bytes", "", FDT_COL_REAL, NULL, FDT_SHOW_DATA, 0},
    {"gpu_ms", "GPU ms", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, 0},
    {"cpu_ms", "CPU ms", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, 0},
    {"shared", "shared", FDT_COL_BOOL, NULL, FDT_SHOW_ALL, 0},
    {"single_ms", "single ms/step", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, 0},
    {"max_abs_diff", "max |diff|", FDT_COL_REAL_OPT, "%.3g", FDT_SHOW_ALL, 0},
    {"max_abs", "max |p|", FDT_COL_REAL_OPT, "%.3g", FDT_SHOW_ALL, 0},
    {"tolerance", "tolerance", FDT_COL_REAL_OPT, "%.3g", FDT_SHOW_ALL, 0},
    {"nonfinite", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"bitwise", "bitwise", FDT_COL_BOOL, NULL, FDT_SHOW_ALL, 0},
    {"agrees", "agrees", FDT_COL_BOOL, NULL, FDT_SHOW_ALL, 0},
    {"shared_align", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
};

static void run_row(fdt_emit *m, const hybrid_args *a, const fdt_hyrun_result *r, int steps)
{
    const fdt_problem *p = &a->rq.p;
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, fdt_hyrun_mode_name(r->mode));
    fdt_emit_cell_int(m, r->mode == FDT_HYRUN_DATA ? r->nz_b : -1);
    fdt_emit_cell_real(m, r->step_ms);
    fdt_emit_cell_int(m, r->runs);
    fdt_emit_cell_real(m, r->step_min_ms);
    fdt_emit_cell_real(m, r->step_max_ms);
    fdt_emit_cell_real(m, predicted_ms(a, r));
    fdt_emit_cell_real(m, r->exchange_ms);
    fdt_emit_cell_real(m, r->exchange_bytes / 1e6);
    fdt_emit_cell_real(m, r->exchange_bytes);
    fdt_emit_cell_real(m, r->gpu_ms);
    fdt_emit_cell_real(m, r->cpu_ms);
    fdt_emit_cell_bool(m, r->shared != 0);
    fdt_emit_cell_real(m, r->single_ms);
    fdt_emit_cell_real(m, r->max_abs_diff);
    fdt_emit_cell_real(m, r->max_abs);
    fdt_emit_cell_real(m, fdt_hyrun_tolerance(p, r, steps));
    fdt_emit_cell_int(m, r->nonfinite);
    fdt_emit_cell_bool(m, r->bitwise != 0);
    fdt_emit_cell_bool(m, fdt_hyrun_agrees(p, r, steps));
    fdt_emit_cell_int(m, r->shared_align ? r->shared_align : -1);
    fdt_emit_row_end(m);
}

/* What a row's table cannot say: a config realigned (one layout), points not finite. */
static void run_notes(fdt_emit *m, const fdt_hyrun_result *r, int steps)
{
    char what[64];
    snprintf(what, sizeof what, "%s%s", fdt_hyrun_mode_name(r->mode),
             r->mode == FDT_HYRUN_DATA ? " " : "");
    if (r->mode == FDT_HYRUN_DATA)
        snprintf(what + strlen(what), sizeof what - strlen(what), "(%lld CPU planes)",
                 (long long)r->nz_b);
    if (r->shared_align)
        fdt_emit_text(m, "%s: %s one layout: device %c's config ran with align=%d (the "
                         "other's; its kernels built again)\n", what,
                      r->shared ? "shared memory is" : "whole planes are exchanged in",
                      "AB"[r->realigned], r->shared_align);
    if (r->nonfinite)
        fdt_emit_text(m, "%s: %lld points not finite after %d steps (an unstable step): does "
                         "not agree\n", what, (long long)r->nonfinite, steps);
}

/* Every run asked is a valid request, before any runs (EXIT_USAGE, printed, if not). */
static int check_runs(hybrid_args *a)
{
    fdt_err e;
    for (int i = 0; i < a->nmode; i++)
        for (int f = 0; f < (a->modes[i] == FDT_HYRUN_DATA ? a->nfrac : 1); f++) {
            a->rq.mode = a->modes[i];
            a->rq.fraction = a->frac[f];
            if (fdt_hyrun_check(&a->rq, &e))
                return print_error("%s", e.msg), EXIT_USAGE;
        }
    return -1;
}

/* The widths of --reflection (EXIT_USAGE, printed, when the check cannot run them). */
static int check_widths(const hybrid_args *a)
{
    fdt_err e;
    if (fdt_hyrun_reflection_check(&a->rq.p, a->widths, a->nwidth, &e))
        return print_error("%s", e.msg), EXIT_USAGE;
    return -1;
}

/* Every mode (data-parallel once per fraction); stops at the first that cannot run. */
static int run_modes(hybrid_args *a, fdt_emit *m)
{
    fdt_hyrun_result done[FDT_HYRUN_MODES + MAX_RUNS];
    int ndone = 0, steps = a->rq.steps + a->rq.warmup;
    fdt_emit_array(m, "runs");
    fdt_emit_table(m, run_cols, NCOLS(run_cols));
    int rc = EXIT_OK;
    for (int i = 0; i < a->nmode && rc != EXIT_ERROR; i++)
        for (int f = 0; f < (a->modes[i] == FDT_HYRUN_DATA ? a->nfrac : 1); f++) {
            fdt_hyrun_result r;
            fdt_err e;
            a->rq.mode = a->modes[i];
            a->rq.fraction = a->frac[f];
            if (!a->json && a->rq.mode == FDT_HYRUN_DATA)
                fprintf(stderr, "running data-parallel, %.3g of the planes on B...\n",
                        a->rq.fraction);
            else if (!a->json)
                fprintf(stderr, "running %s...\n", fdt_hyrun_mode_name(a->rq.mode));
            if (fdt_hyrun_run(&a->rq, &r, &e)) {
                print_error("%s", e.msg);
                rc = EXIT_ERROR;
                break;
            }
            run_row(m, a, &r, steps);
            done[ndone++] = r;
            if (!fdt_hyrun_agrees(&a->rq.p, &r, steps))
                rc = EXIT_FAIL;
        }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    for (int i = 0; i < ndone; i++)
        run_notes(m, &done[i], steps);
    if (ndone) {
        fdt_emit_real(m, "c2_max", done[0].c2_max);
        fdt_emit_text(m, "the field: p, p_prev seeded in (-1, 1), c2 in (%.4g, %.4g] (%.0f%% of "
                         "the CFL bound), a source of 0.75 at the centre; agrees: every point "
                         "finite and max |diff| <= tolerance = 16 x %d steps x eps x max |p|\n",
                      done[0].c2_max / 2, done[0].c2_max, 100 * FDT_HYRUN_CFL_SAFETY, steps);
    }
    if (a->planned) {
        fdt_emit_int(m, "planned_cpu_planes", a->plan.cpu_planes);
        fdt_emit_str(m, "planned_choice", fdt_hybrid_strategy_name(a->plan.choice));
        fdt_emit_text(m, "planner: %s; its data-parallel split: %lld CPU planes (each "
                         "data-parallel run predicted at its own)\n",
                      a->plan.why, (long long)a->plan.cpu_planes);
    } else {
        fdt_emit_str(m, "no_prediction", a->no_plan);
        fdt_emit_text(m, "(no prediction: %s)\n", a->no_plan);
    }
    return rc;
}

static const fdt_col energy_cols[] = {
    {"W", "W", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"steps", "steps", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"before", "energy before", FDT_COL_REAL_OPT, "%.4g", FDT_SHOW_ALL, 0},
    {"after", "energy after", FDT_COL_REAL_OPT, "%.4g", FDT_SHOW_ALL, 0},
    {"ratio", "after/before", FDT_COL_REAL_OPT, "%.4g", FDT_SHOW_ALL, 0},
};

static int run_reflection(hybrid_args *a, fdt_emit *m)
{
    fdt_hyrun_energy en[MAX_WIDTHS];
    fdt_err e;
    if (!a->json)
        fprintf(stderr, "running the energy check (W = %d..%d)...\n", a->widths[0],
                a->widths[a->nwidth - 1]);
    if (fdt_hyrun_reflection(&a->rq.side[0], &a->rq.p, a->widths, a->nwidth, en,
                             a->rq.timeout_s, &e))
        return print_error("%s", e.msg), EXIT_ERROR;
    fdt_emit_array(m, "reflection");
    fdt_emit_table(m, energy_cols, NCOLS(energy_cols));
    for (int i = 0; i < a->nwidth; i++) {
        fdt_emit_row(m, NULL);
        fdt_emit_cell_int(m, en[i].W);
        fdt_emit_cell_int(m, en[i].steps);
        fdt_emit_cell_real(m, en[i].before);
        fdt_emit_cell_real(m, en[i].after);
        fdt_emit_cell_real(m, en[i].ratio);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_err why;
    int falls = fdt_hyrun_energy_falls(en, a->nwidth, &why);
    fdt_emit_bool(m, "falls", falls);
    if (!falls)
        fdt_emit_str(m, "why", why.msg);
    fdt_emit_text(m, "the energy coming back %s as W grows%s%s\n",
                  falls ? "falls" : "does NOT fall", falls ? "" : ": ", falls ? "" : why.msg);
    return falls ? EXIT_OK : EXIT_FAIL;
}

int cmd_bench_hybrid(int argc, char **argv)
{
    static hybrid_args a;
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    a.rq.p = a.pa.p;
    if ((rc = a.reflection ? check_widths(&a) : check_runs(&a)) >= 0 ||
        (rc = resolve_devices(&a)) >= 0)
        return rc;
    predict(&a);
    if ((rc = default_configs(&a)) >= 0)
        return rc;
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, a.json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
    emit_doc_begin(&m);
    fdt_emit_object(&m, "problem");
    emit_problem(&m, &a.rq.p);
    fdt_emit_end(&m);
    char ka[256], kb[256];
    fdt_config_format(&a.rq.side[0].cfg, ka, sizeof ka);
    fdt_config_format(&a.rq.side[1].cfg, kb, sizeof kb);
    fdt_emit_str(&m, "device_a", a.rq.side[0].dev.name);
    fdt_emit_str(&m, "config_a", ka);
    fdt_emit_str(&m, "device_b", a.rq.side[1].dev.name);
    fdt_emit_str(&m, "config_b", kb);
    fdt_emit_text(&m, "device A: %s (%s)\ndevice B: %s (%s)\n", a.rq.side[0].dev.name, ka,
                  a.rq.side[1].dev.name, kb);
    if (a.rq.side[1].has_layers) {
        fdt_config_format(&a.rq.side[1].cfg_layers, kb, sizeof kb);
        fdt_emit_str(&m, "config_b_layers", kb);
        fdt_emit_text(&m, "device B's layers in task-parallel: %s (%s)\n", kb,
                      a.layers_given ? "--config-layers"
                                     : "the config whose slabs the database timed fastest");
    }
    rc = a.reflection ? run_reflection(&a, &m) : run_modes(&a, &m);
    fdt_emit_end(&m);
    if (emit_done(&m))
        rc = EXIT_ERROR;
    return rc;
}
