/* fdtune bench: run, verify and time candidates of one problem on one GPU (or on the host
 * CPU with --cpu). Every candidate
 * is verified before it is timed; the table reports the median time, the seeds' effective
 * bandwidth and its fraction of the copy bandwidth measured in the same run. Without a GPU
 * it still compiles the candidates for the known targets and says what it could not do.
 * Both are eval/bench.c's (fdt_bench_run, fdt_bench_compile); this file parses the options,
 * shows the progress and renders the results. */
#include "cli.h"
#include "fdt_eval.h"
#include "fdt_session.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONFIGS 256

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune bench --op OP --R N --grid G [--precision f32|f64]\n"
            "                    --config KEY=VAL,... [--config ...] [--device N | --cpu auto]\n"
            "                    [--seed S] [--probe] [--timeout SECONDS] [--json]\n\n"
            "Allocates the halo-padded arrays, fills the inputs from a seeded generator, checks\n"
            "the reference kernel against a double-precision CPU reference (every point up to\n"
            "128^3, sampled points above), then for each config: poisons the output, runs the\n"
            "candidate, compares every interior point with the reference, requires the halo,\n"
            "padding and inputs untouched, and times it (warm-up, device events, repetitions\n"
            "until the median is stable; median, min, max).\n\n"
            "  --grid G         N^3 or NXxNYxNZ (interior points)\n"
            ABSORB_HELP
            "  --config TEXT    a candidate (repeatable); 'default' is the reference config\n"
            "  --device N       index in 'fdtune devices' (default 0)\n"
            "  --cpu auto|NAME  the host CPU instead of a GPU (configs in the C dialect's\n"
            "                   parameters: blk, ty, ...; 'default' is its plain loop nest)\n"
            "  --probe          a few launches per candidate instead of a full sample\n"
            "  --timeout S      per candidate, verification and timing included (default 60)\n"
            "  --json           results as JSON (schema %d) on stdout\n" EXPORT_HELP,
            FDT_JSON_SCHEMA_VERSION);
    print_exit_statuses(f);
}

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

/* What compiling one config for one target gave, without a GPU. */
static const fdt_col compiled_cols[] = {
    CONFIG_COLS(0),
    {"target", "target", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"status", "status", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"registers", "registers", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"spill_bytes", "spills", FDT_COL_INT_OPT, "%lld B", FDT_SHOW_ALL, 0},
    {"shared_bytes", "shared", FDT_COL_INT_OPT, "%lld B", FDT_SHOW_ALL, 0},
    {"compile_s", "compile s", FDT_COL_REAL_OPT, "%.2f", FDT_SHOW_ALL, 0},
};

/* res NULL: the compilation failed. */
static void compiled_row(fdt_emit *m, const char *key, const char *arch,
                         const fdt_rt_resources *res, double secs)
{
    fdt_emit_row(m, NULL);
    emit_config_cells(m, key, NULL);
    fdt_emit_cell_str(m, arch);
    fdt_emit_cell_str(m, res ? "compiled" : "compile_error");
    fdt_emit_cell_int(m, res ? res->registers : -1);
    fdt_emit_cell_int(m, res ? res->spill_bytes : -1);
    fdt_emit_cell_int(m, res ? res->shared_bytes : -1);
    fdt_emit_cell_real(m, res ? secs : NAN);
    fdt_emit_row_end(m);
}

/* No GPU: compile every config for each available compiler and report the resources: the
 * notice on stderr, the table (or with --json the document {"schema", "device": null, "problem",
 * "compiled": [rows]}) on stdout. */
static int compile_only(const problem_args *pa, fdt_config *cfgs, int n, const fdt_probe *p,
                        int json)
{
    fprintf(stderr, "No GPU is visible, so nothing was run, verified or timed. Backends "
                    "tried:\n");
    for (int i = 0; i < p->nbackends; i++)
        fprintf(stderr, "  %-5s %s\n", p->backend[i].name,
                p->backend[i].message[0] ? p->backend[i].message : "no device");
    fprintf(stderr, "What could be done here: each config, the reference kernel and the "
                    "verification\nkernels compiled for the default targets.\n\n");
    fdt_sb out;
    fdt_emit m;
    emit_init(&m, json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &out);
    emit_doc_begin(&m);
    fdt_emit_null(&m, "device");
    fdt_emit_object(&m, "problem");
    emit_problem(&m, &pa->p);
    fdt_emit_end(&m);
    fdt_emit_array_lined(&m, "compiled");
    fdt_bench_compiled *rows = NULL;
    int nrows = 0;
    fdt_err e;
    int failures = fdt_bench_compile(&pa->p, cfgs, n, &rows, &nrows, &e);
    if (failures < 0) {
        fdt_emit_free(&m);
        fdt_sb_free(&out);
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    fdt_emit_table(&m, compiled_cols, NCOLS(compiled_cols));
    for (int i = 0; i < nrows; i++) {
        const fdt_bench_compiled *r = &rows[i];
        compiled_row(&m, r->config, r->target, r->ok ? &r->res : NULL, r->seconds);
        if (!r->ok)
            print_error("%s for %s: %s", r->config, r->target, r->err.msg);
    }
    free(rows);
    fdt_emit_table_end(&m);
    fdt_emit_end(&m);
    fdt_emit_end(&m);
    if (emit_done(&m))
        return EXIT_ERROR;
    return failures ? EXIT_ERROR : EXIT_NO_GPU;
}

/* One candidate's result: the table shows the timing and resources at a glance, the JSON
 * every field; unknown values (no timing, not ok) read "-" and null. */
static const fdt_col result_cols[] = {
    CONFIG_COLS(0),
    {"status", "status", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"message", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"median_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"min_ms", "min ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"max_ms", "max ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"q1_ms", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"q3_ms", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"reps", "reps", FDT_COL_INT_OPT, NULL, FDT_SHOW_TEXT, 0},
    {"reps", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"outliers", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"cache_flushed", "", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
    {"gbs", "GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"frac_copy", "of copy", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"max_err", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"rel_err", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"tolerance", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"points_checked", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"registers", "regs", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"max_err", "max err", FDT_COL_REAL_OPT, "%.2g", FDT_SHOW_TEXT, 0},
    {"spill_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"shared_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"layout_line", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"layout_offset", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"compile_s", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
};

static void result_row(fdt_emit *m, const char *key, const fdt_device *d,
                       const fdt_eval_result *r)
{
    int timed = r->timing.reps > 0, ok = r->status == FDT_EVAL_OK;
    fdt_emit_row(m, NULL);
    emit_config_cells(m, key, d);
    fdt_emit_cell_str(m, fdt_eval_status_name(r->status));
    fdt_emit_cell_str(m, r->message);
    fdt_emit_cell_real(m, timed ? r->timing.median_ms : NAN);
    fdt_emit_cell_real(m, timed ? r->timing.min_ms : NAN);
    fdt_emit_cell_real(m, timed ? r->timing.max_ms : NAN);
    fdt_emit_cell_real(m, timed ? r->timing.q1_ms : NAN);
    fdt_emit_cell_real(m, timed ? r->timing.q3_ms : NAN);
    fdt_emit_cell_int(m, timed ? r->timing.reps : -1);
    fdt_emit_cell_int(m, r->timing.reps);
    fdt_emit_cell_int(m, r->timing.outliers);
    fdt_emit_cell_bool(m, r->timing.flushed != 0);
    fdt_emit_cell_real(m, ok ? r->gbs : NAN);
    fdt_emit_cell_real(m, ok ? r->frac_copy : NAN);
    fdt_emit_cell_real(m, r->verify.max_err);
    fdt_emit_cell_real(m, r->verify.rel_err);
    fdt_emit_cell_real(m, r->verify.tol);
    fdt_emit_cell_int(m, (long long)r->verify.checked);
    fdt_emit_cell_int(m, r->res.registers);
    fdt_emit_cell_real(m, r->verify.checked ? r->verify.max_err : NAN);
    fdt_emit_cell_int(m, r->res.spill_bytes);
    fdt_emit_cell_int(m, r->res.shared_bytes);
    fdt_emit_cell_int(m, r->line);
    fdt_emit_cell_int(m, r->offset);
    fdt_emit_cell_real(m, r->compile_s);
    fdt_emit_row_end(m);
}

/* What a bench run on a GPU established, for rendering. */
typedef struct bench_report {
    const fdt_device *d;
    const fdt_problem *p;
    const fdt_setup_result *setup;
    uint64_t seed;
    int restarts;
    const fdt_config *cfgs;
    const fdt_eval_result *res;
    int n;
} bench_report;

/* The head of the report: device, problem, copy bandwidth, the reference's check. */
static void bench_head(fdt_emit *m, const bench_report *br)
{
    const fdt_device *d = br->d;
    const fdt_problem *p = br->p;
    const fdt_setup_result *s = br->setup;
    char pkey[128];
    fdt_problem_format(p, pkey, sizeof pkey);
    emit_doc_begin(m);
    fdt_emit_object(m, "device");
    fdt_emit_str(m, "backend", d->backend);
    fdt_emit_str(m, "name", d->name);
    fdt_emit_str(m, "arch", d->arch);
    fdt_emit_int(m, "compute_units", d->compute_units);
    fdt_emit_str(m, "driver", d->driver_version);
    fdt_emit_str(m, "compiler", d->compiler_version);
    fdt_emit_end(m);
    fdt_emit_object(m, "problem");
    emit_problem(m, p);
    fdt_emit_real_opt(m, "effective_bytes", fdt_effective_bytes(p));
    fdt_emit_end(m);
    fdt_emit_real_opt(m, "copy_gbs", s->copy_gbs);
    fdt_emit_object(m, "reference");
    fdt_emit_int(m, "points_checked", (long long)s->ref_points);
    fdt_emit_bool(m, "all_points", s->ref_all_points);
    fdt_emit_real_opt(m, "max_err", s->ref_max_err);
    fdt_emit_real_opt(m, "tolerance", s->ref_tol);
    fdt_emit_end(m);
    fdt_emit_real_opt(m, "candidate_tolerance", s->tol.cand_vs_ref);
    fdt_emit_int(m, "seed", (long long)br->seed);
    fdt_emit_int(m, "worker_restarts", br->restarts);
    fdt_emit_text(m, "device     %s (%s, %d CUs), driver %s, %s\n", d->name, d->arch,
                  d->compute_units, d->driver_version, d->compiler_version);
    fdt_emit_text(m, "problem    %s, %.3f GB moved at least once per launch\n", pkey,
                  fdt_effective_bytes(p) / 1e9);
    fdt_emit_text(m, "copy       %.0f GB/s device-to-device (bytes read + written, same "
                     "worker)\n", s->copy_gbs);
    fdt_emit_text(m, "reference  checked against the CPU in double precision at %llu points%s: "
                     "max |err| %.3g <= %.3g\n", (unsigned long long)s->ref_points,
                  s->ref_all_points ? " (all)" : " (sampled)", s->ref_max_err, s->ref_tol);
    fdt_emit_text(m, "tolerance  %.3g per point, candidate vs reference (%s, R=%d, %d terms of "
                     "total magnitude <= %.3g)\n\n", s->tol.cand_vs_ref, fdt_prec_name(p->prec),
                  p->R, s->tol.nterms, s->tol.abs_terms);
}

/* The whole report: head, one row per candidate, then why the failed ones failed. */
static void bench_render(fdt_emit *m, const bench_report *br)
{
    bench_head(m, br);
    fdt_emit_array(m, "results");
    fdt_emit_table(m, result_cols, NCOLS(result_cols));
    for (int i = 0; i < br->n; i++) {
        char key[256];
        fdt_config_format(&br->cfgs[i], key, sizeof key);
        result_row(m, key, br->d, &br->res[i]);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_end(m);
    for (int i = 0; i < br->n; i++)
        if (br->res[i].status != FDT_EVAL_OK) {
            char key[256];
            fdt_config_format(&br->cfgs[i], key, sizeof key);
            fdt_emit_text(m, "%s: %s: %s\n", key, fdt_eval_status_name(br->res[i].status),
                          br->res[i].message);
        }
    if (br->restarts)
        fdt_emit_text(m, "(the worker process was restarted %d time(s) after crashes or "
                         "timeouts)\n", br->restarts);
}

typedef struct bench_args {
    problem_args pa;
    fdt_config cfgs[MAX_CONFIGS];
    int ncfg, json, probe, have_device;
    long device, timeout, seed;
    const char *cpu; /* --cpu: the host CPU */
} bench_args;

/* Returns -1 to go on, else the exit status (help printed, or a usage error). */
static int parse(int argc, char **argv, bench_args *a)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},      {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"absorb", required_argument, 0, OPT_ABSORB},
        {"config", required_argument, 0, 'c'},  {"device", required_argument, 0, 'd'},
        {"seed", required_argument, 0, 's'},    {"probe", no_argument, 0, 'P'},
        {"timeout", required_argument, 0, 'T'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},          {"cpu", required_argument, 0, 'U'},
        EXPORT_OPTIONS, {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    problem_args_init(&a->pa);
    a->timeout = 60;
    a->seed = -1;
    int c;
    fdt_err e;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int t = problem_args_take(&a->pa, c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (t)
            continue;
        switch (c) {
        case 'c':
            if (a->ncfg == MAX_CONFIGS)
                die_usage("bench", "at most %d --config options", MAX_CONFIGS);
            if (fdt_config_parse(optarg, &a->cfgs[a->ncfg], &e)) {
                print_error("%s", e.msg);
                return EXIT_USAGE;
            }
            a->ncfg++;
            break;
        case 'd':
            if (parse_int_arg("--device", optarg, 0, FDT_MAX_DEVICES - 1, &a->device))
                return EXIT_USAGE;
            a->have_device = 1;
            break;
        case 'U':
            if (!*optarg)
                die_usage("bench", "--cpu needs auto or a part of the CPU's name or arch");
            a->cpu = optarg;
            break;
        case 's':
            if (parse_int_arg("--seed", optarg, 0, 0x7fffffffL, &a->seed))
                return EXIT_USAGE;
            break;
        case 'T':
            if (parse_int_arg("--timeout", optarg, 1, 86400, &a->timeout))
                return EXIT_USAGE;
            break;
        case 'P': a->probe = 1; break;
        case 'j': a->json = 1; break;
        case 'h': return print_help("bench", bench_usage);
        case OPT_EXPORT_JSON:
        case OPT_EXPORT_CSV: export_option(c, optarg); break;
        default: return bad_option("bench", argv, "h", opts);
        }
    }
    if (optind < argc)
        die_usage("bench", "unexpected argument '%s'", argv[optind]);
    if (problem_args_one(&a->pa, "bench") || problem_args_done(&a->pa))
        return EXIT_USAGE;
    if (!a->pa.have_grid)
        die_usage("bench", "--grid is required (N^3 or NXxNYxNZ)");
    if (a->cpu && a->have_device)
        die_usage("bench", "--device names a GPU: give it without --cpu");
    fdt_gen_target dialect = {a->cpu ? FDT_DIALECT_C : FDT_DIALECT_HIP};
    if (!a->ncfg)
        fdt_config_default_for(&dialect, &a->cfgs[a->ncfg++]);
    if (fdt_problem_check(&a->pa.p, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    for (int i = 0; i < a->ncfg; i++)
        if (fdt_config_check_for(&dialect, &a->pa.p, &a->cfgs[i], &e)) {
            char key[256];
            fdt_config_format(&a->cfgs[i], key, sizeof key);
            print_error("config '%s' does not fit the problem: %s", key, e.msg);
            return EXIT_USAGE;
        }
    return -1;
}

/* Progress on stderr: the setup, then a line per candidate. */
static void show_progress(void *ctx, const fdt_bench_event *ev)
{
    int *line_open = ctx;
    char pkey[128];
    switch (ev->kind) {
    case FDT_BENCH_SETUP:
        fdt_problem_format(ev->p, pkey, sizeof pkey);
        fprintf(stderr, "setting up %s on %s (%s)...\n", pkey, ev->dev->name, ev->dev->arch);
        return;
    case FDT_BENCH_BEGIN:
        fprintf(stderr, "[%d/%d] %s ... ", ev->i + 1, ev->n, ev->config);
        *line_open = 1;
        return;
    case FDT_BENCH_DONE:
        break;
    }
    const fdt_eval_result *r = ev->r;
    *line_open = 0;
    if (r->status == FDT_EVAL_OK)
        fprintf(stderr, "%sok%s %.4f ms, %.0f GB/s (%.1f%% of copy)\n",
                col(stderr, "\033[32m"), col(stderr, "\033[0m"), r->timing.median_ms, r->gbs,
                100 * r->frac_copy);
    else
        fprintf(stderr, "%s%s%s: %s\n", col(stderr, "\033[31m"),
                fdt_eval_status_name(r->status), col(stderr, "\033[0m"), r->message);
}

int cmd_bench(int argc, char **argv)
{
    static bench_args a; /* MAX_CONFIGS configs: off the stack */
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    fdt_probe p;
    fdt_err e;
    if (a.cpu) {
        fdt_device host;
        fdt_status hs = fdt_session_host_cpu(a.cpu, NULL, &p, &host, &e);
        if (hs != FDT_STATUS_OK) {
            print_error("%s", e.msg);
            return exit_status(hs);
        }
    } else if (fdt_probe_devices(&p, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    if (p.ndevices == 0)
        return compile_only(&a.pa, a.cfgs, a.ncfg, &p, a.json);
    if (a.device >= p.ndevices) {
        print_error("--device %ld: only %d device(s) visible (see 'fdtune devices')", a.device,
                    p.ndevices);
        return EXIT_USAGE;
    }
    const fdt_device *d = &p.device[a.device];
    fdt_bench_request rq = {.p = a.pa.p, .cfgs = a.cfgs, .n = a.ncfg,
                            .timeout_s = (int)a.timeout, .seed = a.seed, .probe = a.probe};
    fdt_bench_result x;
    int line_open = 0;
    fdt_status st = fdt_bench_run(&rq, d, show_progress, &line_open, &x, &e);
    if (st == FDT_STATUS_ERROR) {
        if (line_open)
            fprintf(stderr, "\n");
        print_error("%s", e.msg);
    } else {
        bench_report br = {d, &a.pa.p, &x.setup, x.seed, x.restarts, a.cfgs, x.res, x.n};
        fdt_sb b;
        fdt_emit m;
        emit_init(&m, a.json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
        bench_render(&m, &br);
        if (emit_done(&m))
            st = FDT_STATUS_ERROR;
    }
    fdt_bench_result_free(&x);
    return exit_status(st);
}
