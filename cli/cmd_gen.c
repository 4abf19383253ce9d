/* fdtune gen: print the HIP source of one candidate; with --compile, compile it for the
 * requested targets and append the compiler's resource report as comments, so stdout
 * stays a compilable source file. */
#include "cli.h"
#include "fdt_eval.h"
#include "fdt_rt.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void gen_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune gen --op OP --R N [--precision f32|f64] [--grid N^3|NXxNYxNZ]\n"
            "                  [--config KEY=VAL,...] [--name KERNEL] [--compile]\n"
            "                  [--target ARCH]... [--runtime-dims]\n\n"
            "Prints the HIP source of one candidate kernel on stdout. The grid is baked into the\n"
            "kernel as constants (what fdtune tunes); with --runtime-dims the grid and strides\n"
            "are kernel arguments instead, so one kernel serves any grid.\n\n"
            "  --op OP          d2x, d2y, d2z, lap, wave (default lap)\n"
            "  --R N            stencil radius 1..8, order of accuracy 2N (default 4)\n"
            "  --precision P    f32 or f64 (default f32)\n"
            "  --grid G         N^3 or NXxNYxNZ (default 512^3)\n"
            "  --config TEXT    e.g. bx=64,by=4,nw=32 (default: the reference config)\n"
            "  --compile        compile with the target's compiler and report its resources\n"
            "  --target ARCH    sm_90, gfx90a, ... (repeatable; default: every backend's\n"
            "                   default target whose compiler is available)\n");
}

/* Compiles src for target and appends the compiler's resource report as comments. */
static int compile_and_report(const char *src, const char *name, const char *target,
                              const problem_args *pa, const fdt_config *cfg)
{
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(target, &e);
    fdt_rt_code code;
    if (!b || fdt_rt_compile(b, src, name, target, 300000, &code, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    const fdt_rt_resources *r = &code.res;
    printf("\n// Compiled by %s for %s (%zu-byte code object%s):\n", b->name, target,
           code.size, code.cached ? ", from the compile cache" : "");
    printf("//   registers %d%s", r->registers, r->sgprs >= 0 ? " VGPRs" : " per thread");
    if (r->sgprs >= 0)
        printf(", %d SGPRs, %d AGPRs", r->sgprs, r->agprs);
    printf(", spills %d bytes, scratch/stack %d bytes, shared %d bytes", r->spill_bytes,
           r->scratch_bytes, r->shared_bytes);
    fdt_geometry g = {0};
    if (fdt_gen_geometry(&pa->p, cfg, &g, &e) == 0 && g.shared_dynamic)
        printf(" + %u bytes dynamic (at launch)", g.shared_bytes);
    printf("\n");
    char occ[256];
    fdt_eval_occupancy(target, r, cfg, &g, occ, sizeof occ);
    printf("//   %s\n", occ);
    if (code.log && *code.log) {
        /* The compiler's own report, kept verbatim as comments. */
        for (char *line = strtok(code.log, "\n"); line; line = strtok(NULL, "\n"))
            printf("//   | %s\n", line);
    }
    fdt_rt_code_free(&code);
    return 0;
}

/* Shared memory (LDS) over a target's limit per workgroup: a warning, gen goes on. With no
 * target, every backend's default one. */
static void warn_shared(const fdt_problem *p, const fdt_config *c, const char *const *targets,
                        int ntargets)
{
    for (int i = 0; i < (ntargets ? ntargets : fdt_rt_backend_count()); i++) {
        char why[256];
        const char *arch = ntargets ? targets[i] : fdt_rt_backend_at(i)->example_arch;
        if (fdt_eval_shared_check(arch, p, c, why, sizeof why))
            print_note("warning: %s: %s", arch, why);
    }
}

int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},     {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"config", required_argument, 0, 'c'}, {"name", required_argument, 0, 'n'},
        {"compile", no_argument, 0, 'C'},      {"target", required_argument, 0, 't'},
        {"runtime-dims", no_argument, 0, 'D'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    problem_args pa;
    problem_args_init(&pa);
    const char *config = "", *name = NULL, *targets[8];
    int ntargets = 0, compile = 0, c;
    fdt_gen_opts gopts = {0};
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int t = problem_args_take(&pa, c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (t)
            continue;
        switch (c) {
        case 'c': config = optarg; break;
        case 'n': name = optarg; break;
        case 'C': compile = 1; break;
        case 'D': gopts.runtime_dims = 1; break;
        case 't':
            if (ntargets == 8)
                die_usage("gen", "at most 8 --target options");
            targets[ntargets++] = optarg;
            break;
        case 'h': gen_usage(stdout); return EXIT_OK;
        default: gen_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc)
        die_usage("gen", "unexpected argument '%s'", argv[optind]);
    if (ntargets && !compile)
        compile = 1; /* a target only makes sense when compiling */
    fdt_err e;
    fdt_config cfg;
    if (fdt_config_parse(config, &cfg, &e) || fdt_problem_check(&pa.p, &e) ||
        fdt_config_check(&pa.p, &cfg, &e)) {
        print_error("%s", e.msg);
        return EXIT_USAGE;
    }
    char kname[96];
    if (!name) {
        fdt_gen_kernel_name(&pa.p, &cfg, kname, sizeof kname);
        if (gopts.runtime_dims)
            strcat(kname, "_rt");
        name = kname;
    }
    fdt_sb src;
    fdt_sb_init(&src);
    if (fdt_gen_source(&pa.p, &cfg, name, &gopts, &src, &e)) {
        print_error("%s", e.msg);
        fdt_sb_free(&src);
        return EXIT_USAGE;
    }
    fputs(fdt_sb_str(&src), stdout);
    int status = EXIT_OK;
    if (compile && !ntargets) {
        fdt_rt_unavailable skipped[8];
        int nskipped;
        ntargets = fdt_rt_default_targets(targets, 8, skipped, &nskipped);
        for (int i = 0; i < nskipped; i++)
            print_note("skipping %s: %s", skipped[i].b->example_arch, skipped[i].why.msg);
        if (!ntargets) {
            print_error("--compile: no compiler is available (see 'fdtune --version')");
            status = EXIT_ERROR;
        }
    }
    warn_shared(&pa.p, &cfg, targets, ntargets);
    for (int i = 0; i < ntargets; i++)
        if (compile_and_report(fdt_sb_str(&src), name, targets[i], &pa, &cfg))
            status = EXIT_ERROR;
    fdt_sb_free(&src);
    return status;
}
