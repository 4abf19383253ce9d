/* fdtune gen: print the HIP source of one candidate; with --compile, build it for the
 * requested targets (fdt_target_build) and append the compiler's resource report (and with
 * --disasm the disassembly) as comments, so stdout stays a compilable source file. */
#include "cli.h"
#include "fdt_target.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void gen_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune gen --op OP --R N [--precision f32|f64] [--grid N^3|NXxNYxNZ]\n"
            "                  [--absorb W[:S]]\n"
            "                  [--config KEY=VAL,...] [--name KERNEL] [--compile]\n"
            "                  [--target ARCH]... [--disasm] [--runtime-dims]\n\n"
            "Prints the HIP source of one candidate kernel on stdout. The grid is baked into the\n"
            "kernel as constants (what fdtune tunes); with --runtime-dims the grid and strides\n"
            "are kernel arguments instead, so one kernel serves any grid.\n\n"
            "  --op OP          d2x, d2y, d2z, lap, wave, dwave (default lap)\n"
            ABSORB_HELP
            "  --R N            stencil radius 1..8, order of accuracy 2N (default 4)\n"
            "  --precision P    f32 or f64 (default f32)\n"
            "  --grid G         N^3 or NXxNYxNZ (default 512^3)\n"
            "  --config TEXT    e.g. bx=64,by=4,nw=32 (default: the reference config)\n"
            "  --compile        compile with the target's compiler and report its resources\n"
            "  --target ARCH    sm_90, gfx90a, gfx942, ... (repeatable; default: every\n"
            "                   backend's default target whose compiler is available); a\n"
            "                   target the compiler does not take (NVRTC 13: sm_70) is a\n"
            "                   usage error naming those it takes\n"
            "  --disasm         also append the disassembly of the compiled kernel\n"
            "                   (llvm-objdump for AMD, cuobjdump -sass or nvdisasm for NVIDIA)\n\n"
            "The banner shows the whole config (every parameter). A compiled kernel that spills\n"
            "registers to memory, or LDS over the target's limit, is a warning on stderr.\n\n"
            "AMD targets that hiprtc cannot compile here (the hiprtc of ROCm < 5.6 knows only\n"
            "gfx900, gfx906, gfx908, gfx90a, gfx1030) are compiled offline by clang with its lld:\n"
            "FDTUNE_CLANG, else per target the first that knows it of clang-19 (Debian: clang-19\n"
            "lld-19; gfx940, gfx941, gfx942), clang-16 (gfx940, no gfx942), ROCm's\n"
            "llvm/bin/clang.\n");
    print_exit_statuses(f);
}

/* The compiler's resource report and log, as comments. */
static void report(const fdt_target *t, fdt_rt_code *code, const fdt_problem *p,
                   const fdt_config *cfg)
{
    const fdt_rt_resources *r = &code->res;
    printf("\n// Compiled by %s for %s (%zu-byte code object%s", t->backend->name, t->arch_name,
           code->size, code->cached ? ", from the compile cache" : "");
    if (r->code_bytes > 0)
        printf(", %d bytes of machine code", r->code_bytes);
    printf("):\n");
    printf("//   registers %d%s", r->registers, r->sgprs >= 0 ? " VGPRs" : " per thread");
    if (r->sgprs >= 0)
        printf(", %d SGPRs", r->sgprs);
    if (r->agprs >= 0)
        printf(", %d AGPRs", r->agprs);
    printf(", spills %d bytes", r->spill_bytes);
    if (r->sgpr_spills >= 0)
        printf(" (VGPRs to scratch), %d SGPR spills (to VGPR lanes)", r->sgpr_spills);
    printf(", scratch/stack %d bytes, shared %d bytes", r->scratch_bytes, r->shared_bytes);
    fdt_geometry g = {0};
    fdt_err e;
    if (fdt_gen_geometry(p, cfg, &g, &e) == 0 && g.shared_dynamic)
        printf(" + %u bytes dynamic (at launch)", g.shared_bytes);
    printf("\n");
    char occ[256];
    fdt_target_occupancy(t, r, cfg, &g, occ, sizeof occ);
    printf("//   %s\n", occ);
    if (code->log && *code->log) {
        /* The compiler's own report, kept verbatim as comments. */
        for (char *line = strtok(code->log, "\n"); line; line = strtok(NULL, "\n"))
            printf("//   | %s\n", line);
    }
}

/* The disassembly of the compiled kernel, as comments; -1 (said on stderr) when it failed. */
static int print_disasm(const fdt_target *t, const fdt_rt_code *code)
{
    fdt_sb text;
    fdt_sb_init(&text);
    fdt_err e;
    int rc = fdt_rt_disassemble(t->backend, code, t->arch_name, 120000, &text, &e);
    if (rc)
        print_error("--disasm: %s", e.msg);
    else {
        printf("//\n// Disassembly for %s:\n", t->arch_name);
        const char *s = fdt_sb_str(&text);
        while (*s) {
            size_t len = strcspn(s, "\n");
            if (len)
                printf("//   %.*s\n", (int)len, s);
            s += len + (s[len] == '\n');
        }
    }
    fdt_sb_free(&text);
    return rc;
}

/* 1 when the n targets take sources of one dialect (one source serves them all); else 0,
 * having said which two do not. */
static int one_dialect(const char *const *names, const fdt_target *t, int n)
{
    for (int i = 1; i < n; i++)
        if (t[i].gen.dialect != t[0].gen.dialect) {
            print_error("--target %s and --target %s take sources of two dialects (%s, %s): "
                        "give targets of one", names[0], names[i],
                        fdt_dialect_name(t[0].gen.dialect), fdt_dialect_name(t[i].gen.dialect));
            return 0;
        }
    return 1;
}

/* Shared memory (LDS) over a target's limit per workgroup: a warning, gen goes on. With no
 * target, every backend's default one. */
static void warn_shared(const fdt_problem *p, const fdt_config *c, const fdt_target *targets,
                        int ntargets)
{
    for (int i = 0; i < (ntargets ? ntargets : fdt_rt_backend_count()); i++) {
        char why[256];
        fdt_target own;
        fdt_err e;
        const fdt_target *t = &targets[i];
        if (!ntargets) {
            if (fdt_target_for_arch(fdt_rt_backend_at(i)->example_arch, &own, &e))
                continue;
            t = &own;
        }
        if (fdt_target_shared_check(t, p, c, why, sizeof why))
            print_note("warning: %s: %s", t->arch_name, why);
    }
}

int cmd_gen(int argc, char **argv)
{
    static const struct option opts[] = {
        {"op", required_argument, 0, 'o'},     {"R", required_argument, 0, 'R'},
        {"precision", required_argument, 0, 'p'}, {"grid", required_argument, 0, 'g'},
        {"absorb", required_argument, 0, OPT_ABSORB},
        {"config", required_argument, 0, 'c'}, {"name", required_argument, 0, 'n'},
        {"compile", no_argument, 0, 'C'},      {"target", required_argument, 0, 't'},
        {"runtime-dims", no_argument, 0, 'D'}, {"disasm", no_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    problem_args pa;
    problem_args_init(&pa);
    const char *config = "", *name = NULL, *targets[8];
    int ntargets = 0, compile = 0, disasm = 0, c;
    fdt_gen_opts gopts = {0};
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
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
        case 'S': disasm = 1; break;
        case 't':
            if (ntargets == 8)
                die_usage("gen", "at most 8 --target options");
            targets[ntargets++] = optarg;
            break;
        case 'h': return print_help("gen", gen_usage);
        default: return bad_option("gen", argv, "h", opts);
        }
    }
    if (optind < argc)
        die_usage("gen", "unexpected argument '%s'", argv[optind]);
    if (problem_args_one(&pa, "gen") || problem_args_done(&pa))
        return EXIT_USAGE;
    if ((ntargets || disasm) && !compile)
        compile = 1; /* a target or a disassembly only makes sense when compiling */
    fdt_err e;
    fdt_target tgt[8];
    for (int i = 0; i < ntargets; i++)
        if (fdt_target_for_arch(targets[i], &tgt[i], &e) || fdt_target_compiles(&tgt[i], &e) ||
            !fdt_rt_backend_for_target(targets[i], &e)) {
            print_error("--%s", e.msg); /* a bad argument, not a failure */
            return EXIT_USAGE;
        }
    if (!one_dialect(targets, tgt, ntargets))
        return EXIT_USAGE;
    /* the source, in the dialect of the targets (without one: the GPUs') */
    fdt_target gpus;
    fdt_target_for_dialect(FDT_DIALECT_HIP, &gpus);
    const fdt_target *first = ntargets ? &tgt[0] : &gpus;
    fdt_config cfg;
    if (fdt_config_parse(config, &cfg, &e) || fdt_problem_check(&pa.p, &e) ||
        fdt_config_check_for(&first->gen, &pa.p, &cfg, &e)) {
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
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    o.gen = gopts;
    o.stop_after = FDT_BUILD_GENERATE;
    fdt_cand v, *pv = &v;
    fdt_cand_init(&v, FDT_CAND_STENCIL, &cfg, name);
    if (fdt_target_build(first, &pa.p, &pv, 1, &o, &e) ||
        fdt_cand_failed(&v)) {
        print_error("%s", fdt_cand_failed(&v) ? v.err.msg : e.msg);
        fdt_cand_free(&v);
        return EXIT_USAGE;
    }
    int status = stdout_write(v.src, strlen(v.src)) ? EXIT_ERROR : EXIT_OK;
    if (compile && !ntargets) {
        fdt_rt_unavailable skipped[8];
        int nskipped;
        ntargets = fdt_rt_default_targets(targets, 8, skipped, &nskipped);
        for (int i = 0; i < nskipped; i++)
            print_note("skipping %s: %s", skipped[i].b->example_arch, skipped[i].why.msg);
        for (int i = 0; i < ntargets; i++)
            FDT_REQUIRE(fdt_target_for_arch(targets[i], &tgt[i], &e) == 0,
                        "a backend's example arch is its own target");
        if (!ntargets) {
            print_error("--compile: no compiler is available (see 'fdtune --version')");
            status = EXIT_ERROR;
        }
    }
    warn_shared(&pa.p, &cfg, tgt, ntargets);
    o.stop_after = FDT_BUILD_COMPILE; /* pruned kernels are reported too */
    for (int i = 0; i < ntargets; i++) {
        fdt_cand_free(&v); /* built again, for this target */
        if (fdt_target_build(&tgt[i], &pa.p, &pv, 1, &o, &e) || fdt_cand_failed(&v)) {
            print_error("%s", fdt_cand_failed(&v) ? v.err.msg : e.msg);
            status = EXIT_ERROR;
            continue;
        }
        report(&tgt[i], &v.code, &pa.p, &cfg);
        char why[256];
        if (fdt_target_spill_check(&tgt[i], &v.code.res, why, sizeof why))
            print_note("warning: %s: %s; tune prunes such a kernel", targets[i], why);
        if (disasm && print_disasm(&tgt[i], &v.code))
            status = EXIT_ERROR;
    }
    fdt_cand_free(&v);
    return status;
}
