/* fdtune bench: run, verify and time candidates of one problem on one GPU. Every candidate
 * is verified before it is timed; the table reports the median time, the seeds' effective
 * bandwidth and its fraction of the copy bandwidth measured in the same run. Without a GPU
 * it still compiles the candidates for the known targets and says what it could not do.
 * Both are eval/bench.c's (fdt_bench_run, fdt_bench_compile); this file parses the options,
 * shows the progress and renders the results. */
#include "cli.h"
#include "fdt_eval.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CONFIGS 256

static void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune bench --op OP --R N --grid G [--precision f32|f64]\n"
            "                    --config KEY=VAL,... [--config ...] [--device N]\n"
            "                    [--seed S] [--probe] [--timeout SECONDS] [--json]\n\n"
            "Allocates the halo-padded arrays, fills the inputs from a seeded generator, checks\n"
            "the reference kernel against a double-precision CPU reference (every point up to\n"
            "128^3, sampled points above), then for each config: poisons the output, runs the\n"
            "candidate, compares every interior point with the reference, requires the halo,\n"
            "padding and inputs untouched, and times it (warm-up, device events, repetitions\n"
            "until the median is stable; median, min, max).\n\n"
            "  --grid G         N^3 or NXxNYxNZ (interior points)\n"
            "  --config TEXT    a candidate (repeatable); 'default' is the reference config\n"
            "  --device N       index in 'fdtune devices' (default 0)\n"
            "  --probe          a few launches per candidate instead of a full sample\n"
            "  --timeout S      per candidate, verification and timing included (default 60)\n"
            "  --json           results as JSON (schema %d) on stdout\n",
            FDT_JSON_SCHEMA_VERSION);
}

/* No GPU: every config compiled for each available compiler, with the resources. */
static int compile_only(const problem_args *pa, fdt_config *cfgs, int n, const fdt_probe *p)
{
    fdt_bench_compiled *rows = NULL;
    int nrows = 0;
    fdt_err e;
    int failures = fdt_bench_compile(&pa->p, cfgs, n, &rows, &nrows, &e);
    if (failures < 0) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    printf("No GPU is visible, so nothing was run, verified or timed. Backends tried:\n");
    for (int i = 0; i < p->nbackends; i++)
        printf("  %-5s %s\n", p->backend[i].name,
               p->backend[i].message[0] ? p->backend[i].message : "no device");
    printf("What could be done here: each config, the reference kernel and the verification\n"
           "kernels compiled for the default targets.\n\n");
    static const char *const hdr[] = {"config", "target", "status", "registers", "spills",
                                      "shared", "compile s"};
    table t;
    table_init(&t, 7, hdr);
    t.right[3] = t.right[4] = t.right[5] = t.right[6] = 1;
    for (int i = 0; i < nrows; i++) {
        const fdt_bench_compiled *r = &rows[i];
        table_add(&t, "%s", r->config);
        table_add(&t, "%s", r->target);
        if (!r->ok) {
            table_add(&t, "compile_error");
            table_add(&t, "-");
            table_add(&t, "-");
            table_add(&t, "-");
            table_add(&t, "-");
            print_error("%s for %s: %s", r->config, r->target, r->err.msg);
            continue;
        }
        table_add(&t, "compiled");
        table_add(&t, "%d", r->res.registers);
        table_add(&t, "%d B", r->res.spill_bytes);
        table_add(&t, "%d B", r->res.shared_bytes);
        table_add(&t, "%.2f", r->seconds);
    }
    table_print(&t, stdout);
    table_free(&t);
    free(rows);
    return failures ? EXIT_ERROR : EXIT_NO_GPU;
}

static void json_result(fdt_sb *b, const char *key, const fdt_eval_result *r)
{
    fdt_sb_puts(b, "{");
    json_kv_str(b, "config", key, 1);
    json_kv_str(b, "status", fdt_eval_status_name(r->status), 1);
    json_kv_str(b, "message", r->message, 1);
    json_kv_num(b, "median_ms", r->timing.reps ? r->timing.median_ms : NAN, 1);
    json_kv_num(b, "min_ms", r->timing.reps ? r->timing.min_ms : NAN, 1);
    json_kv_num(b, "max_ms", r->timing.reps ? r->timing.max_ms : NAN, 1);
    json_kv_num(b, "q1_ms", r->timing.reps ? r->timing.q1_ms : NAN, 1);
    json_kv_num(b, "q3_ms", r->timing.reps ? r->timing.q3_ms : NAN, 1);
    json_kv_int(b, "reps", r->timing.reps, 1);
    json_kv_int(b, "outliers", r->timing.outliers, 1);
    json_kv_int(b, "cache_flushed", r->timing.flushed, 1);
    json_kv_num(b, "gbs", r->status == FDT_EVAL_OK ? r->gbs : NAN, 1);
    json_kv_num(b, "frac_copy", r->status == FDT_EVAL_OK ? r->frac_copy : NAN, 1);
    json_kv_num(b, "max_err", r->verify.max_err, 1);
    json_kv_num(b, "rel_err", r->verify.rel_err, 1);
    json_kv_num(b, "tolerance", r->verify.tol, 1);
    json_kv_int(b, "points_checked", (long long)r->verify.checked, 1);
    json_kv_int(b, "registers", r->res.registers, 1);
    json_kv_int(b, "spill_bytes", r->res.spill_bytes, 1);
    json_kv_int(b, "shared_bytes", r->res.shared_bytes, 1);
    json_kv_int(b, "layout_line", r->line, 1);
    json_kv_int(b, "layout_offset", r->offset, 1);
    json_kv_num(b, "compile_s", r->compile_s, 0);
    fdt_sb_puts(b, "}");
}

typedef struct bench_args {
    problem_args pa;
    fdt_config cfgs[MAX_CONFIGS];
    int ncfg, json, probe;
    long device, timeout, seed;
} bench_args;

/* Returns -1 to go on, else the exit status (help printed, or a usage error). */
static int parse(int argc, char **argv, bench_args *a)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},      {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"config", required_argument, 0, 'c'},  {"device", required_argument, 0, 'd'},
        {"seed", required_argument, 0, 's'},    {"probe", no_argument, 0, 'P'},
        {"timeout", required_argument, 0, 'T'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    problem_args_init(&a->pa);
    a->timeout = 60;
    a->seed = -1;
    int c;
    fdt_err e;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
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
        case 'h': bench_usage(stdout); return EXIT_OK;
        default: bench_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc)
        die_usage("bench", "unexpected argument '%s'", argv[optind]);
    if (!a->pa.have_grid)
        die_usage("bench", "--grid is required (N^3 or NXxNYxNZ)");
    if (!a->ncfg)
        fdt_config_default(&a->cfgs[a->ncfg++]);
    if (fdt_problem_check(&a->pa.p, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    for (int i = 0; i < a->ncfg; i++)
        if (fdt_config_check(&a->pa.p, &a->cfgs[i], &e)) {
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

static void bench_json(const bench_args *a, const fdt_device *d, const fdt_bench_result *x)
{
    const fdt_setup_result setup = x->setup;
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_puts(&b, "{");
    json_kv_int(&b, "schema", FDT_JSON_SCHEMA_VERSION, 1);
    fdt_sb_puts(&b, "\"device\": {");
    json_kv_str(&b, "backend", d->backend, 1);
    json_kv_str(&b, "name", d->name, 1);
    json_kv_str(&b, "arch", d->arch, 1);
    json_kv_int(&b, "compute_units", d->compute_units, 1);
    json_kv_str(&b, "driver", d->driver_version, 1);
    json_kv_str(&b, "compiler", d->compiler_version, 0);
    fdt_sb_puts(&b, "}, \"problem\": {");
    json_kv_str(&b, "op", fdt_op_name(a->pa.p.op), 1);
    json_kv_int(&b, "R", a->pa.p.R, 1);
    json_kv_str(&b, "precision", fdt_prec_name(a->pa.p.prec), 1);
    json_kv_int(&b, "nx", a->pa.p.nx, 1);
    json_kv_int(&b, "ny", a->pa.p.ny, 1);
    json_kv_int(&b, "nz", a->pa.p.nz, 1);
    json_kv_num(&b, "effective_bytes", fdt_effective_bytes(&a->pa.p), 0);
    fdt_sb_puts(&b, "}, ");
    json_kv_num(&b, "copy_gbs", setup.copy_gbs, 1);
    fdt_sb_puts(&b, "\"reference\": {");
    json_kv_int(&b, "points_checked", (long long)setup.ref_points, 1);
    json_kv_int(&b, "all_points", setup.ref_all_points, 1);
    json_kv_num(&b, "max_err", setup.ref_max_err, 1);
    json_kv_num(&b, "tolerance", setup.ref_tol, 0);
    fdt_sb_puts(&b, "}, ");
    json_kv_num(&b, "candidate_tolerance", setup.tol.cand_vs_ref, 1);
    json_kv_int(&b, "seed", (long long)x->seed, 1);
    json_kv_int(&b, "worker_restarts", x->restarts, 1);
    fdt_sb_puts(&b, "\"results\": [");
    for (int i = 0; i < a->ncfg; i++) {
        char key[256];
        fdt_config_format(&a->cfgs[i], key, sizeof key);
        if (i)
            fdt_sb_puts(&b, ", ");
        json_result(&b, key, &x->res[i]);
    }
    fdt_sb_puts(&b, "]}\n");
    fputs(fdt_sb_str(&b), stdout);
    fdt_sb_free(&b);
}

static void bench_text(const bench_args *a, const fdt_device *d, const fdt_bench_result *x)
{
    const fdt_setup_result setup = x->setup;
    char pkey[128];
    fdt_problem_format(&a->pa.p, pkey, sizeof pkey);
    printf("device     %s (%s, %d CUs), driver %s, %s\n", d->name, d->arch, d->compute_units,
           d->driver_version, d->compiler_version);
    printf("problem    %s, %.3f GB moved at least once per launch\n", pkey,
           fdt_effective_bytes(&a->pa.p) / 1e9);
    printf("copy       %.0f GB/s device-to-device (bytes read + written, same worker)\n",
           setup.copy_gbs);
    printf("reference  checked against the CPU in double precision at %llu points%s: max |err| "
           "%.3g <= %.3g\n", (unsigned long long)setup.ref_points,
           setup.ref_all_points ? " (all)" : " (sampled)", setup.ref_max_err, setup.ref_tol);
    printf("tolerance  %.3g per point, candidate vs reference (%s, R=%d, %d terms of total "
           "magnitude <= %.3g)\n\n", setup.tol.cand_vs_ref, fdt_prec_name(a->pa.p.prec),
           a->pa.p.R, setup.tol.nterms, setup.tol.abs_terms);
    static const char *const hdr[] = {"config", "status", "median ms", "min ms", "max ms",
                                      "reps", "GB/s", "of copy", "regs", "max err"};
    table t;
    table_init(&t, 10, hdr);
    for (int i = 2; i < 10; i++)
        t.right[i] = 1;
    for (int i = 0; i < a->ncfg; i++) {
        const fdt_eval_result *r = &x->res[i];
        char key[256];
        fdt_config_format(&a->cfgs[i], key, sizeof key);
        table_add(&t, "%s", key);
        table_add(&t, "%s", fdt_eval_status_name(r->status));
        if (r->timing.reps) {
            table_add(&t, "%.4f", r->timing.median_ms);
            table_add(&t, "%.4f", r->timing.min_ms);
            table_add(&t, "%.4f", r->timing.max_ms);
            table_add(&t, "%d", r->timing.reps);
        } else {
            for (int k = 0; k < 4; k++)
                table_add(&t, "-");
        }
        if (r->status == FDT_EVAL_OK) {
            table_add(&t, "%.0f", r->gbs);
            table_add(&t, "%.3f", r->frac_copy);
        } else {
            table_add(&t, "-");
            table_add(&t, "-");
        }
        table_add(&t, "%d", r->res.registers);
        table_add(&t, r->verify.checked ? "%.2g" : "-", r->verify.max_err);
    }
    table_print(&t, stdout);
    table_free(&t);
    for (int i = 0; i < a->ncfg; i++)
        if (x->res[i].status != FDT_EVAL_OK) {
            char key[256];
            fdt_config_format(&a->cfgs[i], key, sizeof key);
            printf("%s: %s: %s\n", key, fdt_eval_status_name(x->res[i].status),
                   x->res[i].message);
        }
    if (x->restarts)
        printf("(the GPU worker was restarted %d time(s) after crashes or timeouts)\n",
               x->restarts);
}

int cmd_bench(int argc, char **argv)
{
    static bench_args a; /* MAX_CONFIGS configs: off the stack */
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    fdt_probe p;
    fdt_err e;
    if (fdt_probe_devices(&p, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    if (p.ndevices == 0)
        return compile_only(&a.pa, a.cfgs, a.ncfg, &p);
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
    } else if (a.json) {
        bench_json(&a, d, &x);
    } else {
        bench_text(&a, d, &x);
    }
    fdt_bench_result_free(&x);
    return exit_status(st);
}
