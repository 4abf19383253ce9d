/* fdtune bench: run, verify and time candidates of one problem on one GPU. Every candidate
 * is verified before it is timed; the table reports the median time, the seeds' effective
 * bandwidth and its fraction of the copy bandwidth measured in the same run. Without a GPU
 * it still compiles the candidates for the known targets and says what it could not do. */
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

/* No GPU: compile every config for each available compiler and report the resources. */
static int compile_only(const problem_args *pa, fdt_config *cfgs, int n, const fdt_probe *p)
{
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
    int failures = 0;
    /* Rows 0 and 1 are what a GPU run would compile first: the verification kernels and the
     * reference (the default config under the name the worker gives it). */
    for (int c = -2; c < n; c++) {
        char key[256], kernel[96];
        fdt_sb src;
        fdt_sb_init(&src);
        fdt_err e;
        if (c == -2) {
            snprintf(key, sizeof key, "(verification kernels)");
            snprintf(kernel, sizeof kernel, "fdt_fill_%s", fdt_prec_name(pa->p.prec));
            fdt_gen_util_source(pa->p.prec, &src, &e);
        } else if (c == -1) {
            fdt_config rc;
            fdt_config_default(&rc);
            snprintf(key, sizeof key, "(reference)");
            fdt_eval_reference_name(&pa->p, kernel, sizeof kernel);
            fdt_gen_source(&pa->p, &rc, kernel, NULL, &src, &e);
        } else {
            fdt_config_format(&cfgs[c], key, sizeof key);
            fdt_gen_kernel_name(&pa->p, &cfgs[c], kernel, sizeof kernel);
            fdt_gen_source(&pa->p, &cfgs[c], kernel, NULL, &src, &e);
        }
        for (int b = 0; b < fdt_rt_backend_count(); b++) {
            const fdt_rt_backend *be = fdt_rt_backend_at(b);
            fdt_rt_code code;
            double t0 = fdt_now();
            int rc = fdt_rt_compile(be, fdt_sb_str(&src), kernel, be->example_arch, 300000,
                                    &code, &e);
            table_add(&t, "%s", key);
            table_add(&t, "%s", be->example_arch);
            if (rc) {
                failures++;
                table_add(&t, "compile_error");
                table_add(&t, "-");
                table_add(&t, "-");
                table_add(&t, "-");
                table_add(&t, "-");
                print_error("%s for %s: %s", key, be->example_arch, e.msg);
                continue;
            }
            table_add(&t, "compiled");
            table_add(&t, "%d", code.res.registers);
            table_add(&t, "%d B", code.res.spill_bytes);
            table_add(&t, "%d B", code.res.shared_bytes);
            table_add(&t, "%.2f", fdt_now() - t0);
            fdt_rt_code_free(&code);
        }
        fdt_sb_free(&src);
    }
    table_print(&t, stdout);
    table_free(&t);
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

int cmd_bench(int argc, char **argv)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},      {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"config", required_argument, 0, 'c'},  {"device", required_argument, 0, 'd'},
        {"seed", required_argument, 0, 's'},    {"probe", no_argument, 0, 'P'},
        {"timeout", required_argument, 0, 'T'}, {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    problem_args pa;
    problem_args_init(&pa);
    static fdt_config cfgs[MAX_CONFIGS];
    int ncfg = 0, json = 0, probe = 0, c;
    long device = 0, timeout = 60, seed = -1;
    fdt_err e;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int t = problem_args_take(&pa, c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (t)
            continue;
        switch (c) {
        case 'c':
            if (ncfg == MAX_CONFIGS)
                die_usage("bench", "at most %d --config options", MAX_CONFIGS);
            if (fdt_config_parse(optarg, &cfgs[ncfg], &e)) {
                print_error("%s", e.msg);
                return EXIT_USAGE;
            }
            ncfg++;
            break;
        case 'd':
            if (parse_int_arg("--device", optarg, 0, FDT_MAX_DEVICES - 1, &device))
                return EXIT_USAGE;
            break;
        case 's':
            if (parse_int_arg("--seed", optarg, 0, 0x7fffffffL, &seed))
                return EXIT_USAGE;
            break;
        case 'T':
            if (parse_int_arg("--timeout", optarg, 1, 86400, &timeout))
                return EXIT_USAGE;
            break;
        case 'P': probe = 1; break;
        case 'j': json = 1; break;
        case 'h': bench_usage(stdout); return EXIT_OK;
        default: bench_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc)
        die_usage("bench", "unexpected argument '%s'", argv[optind]);
    if (!pa.have_grid)
        die_usage("bench", "--grid is required (N^3 or NXxNYxNZ)");
    if (!ncfg)
        fdt_config_default(&cfgs[ncfg++]);
    if (fdt_problem_check(&pa.p, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    for (int i = 0; i < ncfg; i++)
        if (fdt_config_check(&pa.p, &cfgs[i], &e)) {
            char key[256];
            fdt_config_format(&cfgs[i], key, sizeof key);
            print_error("config '%s' does not fit the problem: %s", key, e.msg);
            return EXIT_USAGE;
        }

    fdt_probe p;
    if (fdt_probe_devices(&p, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    if (p.ndevices == 0)
        return compile_only(&pa, cfgs, ncfg, &p);
    if (device >= p.ndevices) {
        print_error("--device %ld: only %d device(s) visible (see 'fdtune devices')", device,
                    p.ndevices);
        return EXIT_USAGE;
    }
    const fdt_device *d = &p.device[device];
    fdt_worker_opts wo;
    fdt_worker_opts_default(&wo);
    wo.eval_timeout_ms = (int)timeout * 1000;
    if (seed >= 0)
        wo.seed = (uint64_t)seed;
    fdt_worker *w;
    fdt_setup_result setup;
    char pkey[128];
    fdt_problem_format(&pa.p, pkey, sizeof pkey);
    fprintf(stderr, "setting up %s on %s (%s)...\n", pkey, d->name, d->arch);
    if (fdt_worker_start(d->backend, d->index, &wo, &w, NULL, &e) ||
        fdt_worker_setup(w, &pa.p, &setup, &e)) {
        print_error("%s", e.msg);
        if (w)
            fdt_worker_stop(w);
        return EXIT_ERROR;
    }
    fdt_timing_opts to;
    if (probe)
        fdt_timing_opts_probe(&to);
    else
        fdt_timing_opts_default(&to);

    static fdt_eval_result res[MAX_CONFIGS];
    int failures = 0;
    for (int i = 0; i < ncfg; i++) {
        char key[256];
        fdt_config_format(&cfgs[i], key, sizeof key);
        fprintf(stderr, "[%d/%d] %s ... ", i + 1, ncfg, key);
        if (fdt_evaluate(w, &pa.p, &cfgs[i], &to, &res[i], &e)) {
            fprintf(stderr, "\n");
            print_error("%s", e.msg);
            fdt_worker_stop(w);
            return EXIT_ERROR;
        }
        const fdt_eval_result *r = &res[i];
        if (r->status == FDT_EVAL_OK)
            fprintf(stderr, "%sok%s %.4f ms, %.0f GB/s (%.1f%% of copy)\n",
                    col(stderr, "\033[32m"), col(stderr, "\033[0m"), r->timing.median_ms, r->gbs,
                    100 * r->frac_copy);
        else {
            failures++;
            fprintf(stderr, "%s%s%s: %s\n", col(stderr, "\033[31m"),
                    fdt_eval_status_name(r->status), col(stderr, "\033[0m"), r->message);
        }
    }
    int restarts = fdt_worker_restarts(w);
    fdt_worker_stop(w);

    if (json) {
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
        json_kv_str(&b, "op", fdt_op_name(pa.p.op), 1);
        json_kv_int(&b, "R", pa.p.R, 1);
        json_kv_str(&b, "precision", fdt_prec_name(pa.p.prec), 1);
        json_kv_int(&b, "nx", pa.p.nx, 1);
        json_kv_int(&b, "ny", pa.p.ny, 1);
        json_kv_int(&b, "nz", pa.p.nz, 1);
        json_kv_num(&b, "effective_bytes", fdt_effective_bytes(&pa.p), 0);
        fdt_sb_puts(&b, "}, ");
        json_kv_num(&b, "copy_gbs", setup.copy_gbs, 1);
        fdt_sb_puts(&b, "\"reference\": {");
        json_kv_int(&b, "points_checked", (long long)setup.ref_points, 1);
        json_kv_int(&b, "all_points", setup.ref_all_points, 1);
        json_kv_num(&b, "max_err", setup.ref_max_err, 1);
        json_kv_num(&b, "tolerance", setup.ref_tol, 0);
        fdt_sb_puts(&b, "}, ");
        json_kv_num(&b, "candidate_tolerance", setup.tol.cand_vs_ref, 1);
        json_kv_int(&b, "seed", (long long)wo.seed, 1);
        json_kv_int(&b, "worker_restarts", restarts, 1);
        fdt_sb_puts(&b, "\"results\": [");
        for (int i = 0; i < ncfg; i++) {
            char key[256];
            fdt_config_format(&cfgs[i], key, sizeof key);
            if (i)
                fdt_sb_puts(&b, ", ");
            json_result(&b, key, &res[i]);
        }
        fdt_sb_puts(&b, "]}\n");
        fputs(fdt_sb_str(&b), stdout);
        fdt_sb_free(&b);
        return failures ? EXIT_FAIL : EXIT_OK;
    }

    printf("device     %s (%s, %d CUs), driver %s, %s\n", d->name, d->arch, d->compute_units,
           d->driver_version, d->compiler_version);
    printf("problem    %s, %.3f GB moved at least once per launch\n", pkey,
           fdt_effective_bytes(&pa.p) / 1e9);
    printf("copy       %.0f GB/s device-to-device (bytes read + written, same worker)\n",
           setup.copy_gbs);
    printf("reference  checked against the CPU in double precision at %llu points%s: max |err| "
           "%.3g <= %.3g\n", (unsigned long long)setup.ref_points,
           setup.ref_all_points ? " (all)" : " (sampled)", setup.ref_max_err, setup.ref_tol);
    printf("tolerance  %.3g per point, candidate vs reference (%s, R=%d, %d terms of total "
           "magnitude <= %.3g)\n\n", setup.tol.cand_vs_ref, fdt_prec_name(pa.p.prec), pa.p.R,
           setup.tol.nterms, setup.tol.abs_terms);
    static const char *const hdr[] = {"config", "status", "median ms", "min ms", "max ms",
                                      "reps", "GB/s", "of copy", "regs", "max err"};
    table t;
    table_init(&t, 10, hdr);
    for (int i = 2; i < 10; i++)
        t.right[i] = 1;
    for (int i = 0; i < ncfg; i++) {
        const fdt_eval_result *r = &res[i];
        char key[256];
        fdt_config_format(&cfgs[i], key, sizeof key);
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
    for (int i = 0; i < ncfg; i++)
        if (res[i].status != FDT_EVAL_OK) {
            char key[256];
            fdt_config_format(&cfgs[i], key, sizeof key);
            printf("%s: %s: %s\n", key, fdt_eval_status_name(res[i].status), res[i].message);
        }
    if (restarts)
        printf("(the GPU worker was restarted %d time(s) after crashes or timeouts)\n", restarts);
    return failures ? EXIT_FAIL : EXIT_OK;
}
