/* Rendering the CPU part of an export: the host CPU's tuned kernels as plain C11 with OpenMP
 * for a user's program built by `cc -fopenmp` (fdt_export.h: fdt_exp_render_cpu). Its parts,
 * in order: the provenance and usage comment; the portable selection part (fdtune's
 * portable/ rules and the variant row, as in the GPU part); the CPU families' variant tables
 * and selection; the generated kernels, each once, made static; the current CPU's identity
 * (snippets/fdtuned_cpu_host.h); and per family the layout helpers and the launcher. The
 * kernels are the generator's C dialect output used as is, so the exported kernels are the
 * tuned ones to the byte. A CPU kernel runs the whole grid in one call (one "launch": rows
 * jbeg R to jend R + ny), so the shape fields of a CPU variant describe that one launch and
 * fit every grid the layout takes. */
#include "exp_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *real_of(fdt_prec p) { return p == FDT_F64 ? "double" : "float"; }

/* ------------------------------------------------------------------ comment */

static void usage(const fdt_exp_plan *p, fdt_sb *b)
{
    fdt_sb_puts(b,
        " * Use (the CPU part)\n"
        " *   #include \"this header\" in C code built with OpenMP, e.g.\n"
        " *     cc -O3 -march=native -fopenmp prog.c -o prog\n"
        " *   (-march=native as fdtune compiled the kernels it timed; gcc or clang with "
        "libomp).\n"
        " *   Kernels are static and functions static inline, so any number of translation "
        "units\n"
        " *   may include it. C only (the kernels use restrict); in a file that also has the "
        "GPU\n"
        " *   part, define FDTUNED_CPU_ONLY before including it to get the CPU part alone.\n"
        " *\n"
        " *   Arrays are the halo-padded boxes of the GPU part: (nx+2R) x (ny+2R) x (nz+2R) "
        "points,\n"
        " *   element (i, j, k) at base[offset + i + line*j + slice*k], base what malloc (or\n"
        " *   aligned_alloc) returned, of at least `elems` elements: take line, slice, offset "
        "and\n"
        " *   elems from the layout helper for the same grid (the variants differ in "
        "alignment).\n"
        " *   Launchers take allocation bases, write the interior of the output only, run on "
        "the\n"
        " *   OpenMP threads of the calling thread and return 0, or FDTUNED_NO_VARIANT (-1) "
        "when no\n"
        " *   variant can run the grid. For the timings fdtune measured, run with "
        "OMP_PLACES=cores\n"
        " *   OMP_PROC_BIND=close (fdtune's setting) and first touch the arrays in parallel.\n"
        " *\n"
        " *   Selection (fdtuned_select_in; the rule of `fdtune query best --nearest` and of "
        "the GPU\n"
        " *   part): among the tuned results of the current CPU's arch (x86-64-v3, ...) whose "
        "config\n"
        " *   can run the grid, this CPU model's (name, arch, cores) on this grid, else this "
        "model's,\n"
        " *   else another model's of the arch; the nearest tuned grid, the nearest core "
        "count, the\n"
        " *   faster result; on that very grid its constant kernel, else its runtime-dims "
        "kernel;\n"
        " *   with nothing for the arch, the fallback (the plain OpenMP loop nest).\n"
        " *\n"
        " *   Per operator (T float or double; wave: p_next = 2p - p_prev + c2 * lap(p) + "
        "src at the\n"
        " *   padded point (si, sj, sk); sx, sy, sz are 1/h^2 per axis):\n");
    for (size_t f = 0; f < p->nfam; f++) {
        const fdt_exp_family *fam = &p->fam[f];
        if (!fam->cpu)
            continue;
        fdt_sb_printf(b,
                      " *     int fdtuned_%s(pointers, int nx, int ny, int nz, scalars);\n"
                      " *     int fdtuned_%s_run(int variant, ...same...);  a given variant\n"
                      " *     int fdtuned_%s_layout(int nx, int ny, int nz, fdtuned_layout *l);"
                      "  current CPU\n"
                      " *     int fdtuned_%s_current(int nx, int ny, int nz);  variant index\n"
                      " *     int fdtuned_%s_select(const char *name, const char *arch, int "
                      "cores,\n *                         long nx, long ny, long nz);\n",
                      fam->name, fam->name, fam->name, fam->name, fam->name);
    }
    fdt_sb_puts(b, " *   FDTUNED_CPU_OPERATORS(X) expands X(op, R, precision, type) once per "
                   "operator;\n *   fdtuned_cpu_current_device(&name, &arch, &cores) says what "
                   "the selection sees.\n");
}

/* ------------------------------------------------------------------ variant tables */

static void family_tables(const fdt_exp_family *f, fdt_sb *b)
{
    fdt_sb_printf(b, "\n/* ---- %s R=%d %s on CPUs: variant 0 is the fallback, then per tuned "
                     "result its constant\n * and its runtime-dims kernel. */\n",
                  fdt_op_name(f->op), f->R, fdt_prec_name(f->prec));
    fdt_sb_printf(b, "static const fdtuned_variant fdtuned_%s_variants[%d] = {\n", f->name,
                  fdt_exp_family_nvariants(f));
    fdt_exp_variant_rows(b, f, 1);
    fdt_sb_puts(b, "};\n\n");
    fdt_sb_printf(b,
                  "/* The variant for a CPU and grid (fdtuned_select_in), FDTUNED_NO_VARIANT when "
                  "none can run it. */\n"
                  "static inline int fdtuned_%s_select(const char *name, const char *arch, int "
                  "cores, long nx,\n                                    long ny, long nz)\n{\n"
                  "    return fdtuned_select_in(fdtuned_%s_variants, %d, name, arch, cores, nx, "
                  "ny, nz);\n}\n",
                  f->name, f->name, fdt_exp_family_nvariants(f));
}

/* ------------------------------------------------------------------ kernels */

/* A generated CPU kernel made fit for a header: its entry point `void NAME(void **args)`
 * (declared, then defined) becomes static; the rest is the generator's output as is. */
static int adapt_kernel(const char *src, const char *name, fdt_sb *out, fdt_err *e)
{
    char entry[160];
    snprintf(entry, sizeof entry, "void %s(void **args)", name);
    size_t len = strlen(entry);
    const char *s = src;
    int n = 0;
    for (const char *hit; (hit = strstr(s, entry)); s = hit + len, n++) {
        fdt_sb_putn(out, s, (size_t)(hit - s));
        fdt_sb_puts(out, "static ");
        fdt_sb_puts(out, entry);
    }
    fdt_sb_puts(out, s);
    if (!n)
        return fdt_err_set(e, "export: CPU kernel %s: the generator's source has no entry point "
                              "'%s'", name, entry);
    return 0;
}

static int kernels(const fdt_exp_plan *p, fdt_sb *b, fdt_err *e)
{
    return fdt_exp_write_kernels(p, 1, adapt_kernel, b, e);
}

/* ------------------------------------------------------------------ launchers */

/* The launcher's parameters: pointers, the grid, then the operator's scalars (from the
 * generator's argument list). */
static void params(const fdt_exp_family *f, fdt_sb *decl, fdt_sb *names)
{
    const char *T = real_of(f->prec);
    if (fdt_op_is_step(f->op)) {
        fdt_sb_printf(decl, "%s *p_next, const %s *p, const %s *p_prev, const %s *c2", T, T, T,
                      T);
        fdt_sb_puts(names, "p_next, p, p_prev, c2");
    } else {
        fdt_sb_printf(decl, "%s *out, const %s *in", T, T);
        fdt_sb_puts(names, "out, in");
    }
    fdt_sb_puts(decl, ", int nx, int ny, int nz");
    fdt_sb_puts(names, ", nx, ny, nz");
    fdt_arg a[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(f->op, 0, a);
    for (int i = 0; i < n; i++) {
        const char *nm = NULL, *type = T;
        switch (a[i]) {
        case FDT_ARG_SX: nm = "sx"; break;
        case FDT_ARG_SY: nm = "sy"; break;
        case FDT_ARG_SZ: nm = "sz"; break;
        case FDT_ARG_SI: nm = "si"; type = "int"; break;
        case FDT_ARG_SJ: nm = "sj"; type = "int"; break;
        case FDT_ARG_SK: nm = "sk"; type = "int"; break;
        case FDT_ARG_SRC: nm = "src"; break;
        default: break;
        }
        if (nm) {
            fdt_sb_printf(decl, ", %s %s", type, nm);
            fdt_sb_printf(names, ", %s", nm);
        }
    }
}

/* The address of a kernel argument, by the name the launcher holds it under. */
static const char *arg_addr(fdt_arg a)
{
    switch (a) {
    case FDT_ARG_OUT: return "&o";
    case FDT_ARG_IN: return "&x";
    case FDT_ARG_PREV: return "&xp";
    case FDT_ARG_C2: return "&xc";
    case FDT_ARG_NX: return "&nx";
    case FDT_ARG_NY: return "&ny";
    case FDT_ARG_NZ: return "&nz";
    case FDT_ARG_LINE: return "&line";
    case FDT_ARG_SLICE: return "&slice";
    case FDT_ARG_JBEG: return "&jbeg";
    case FDT_ARG_JEND: return "&jend";
    case FDT_ARG_SX: return "&sx";
    case FDT_ARG_SY: return "&sy";
    case FDT_ARG_SZ: return "&sz";
    case FDT_ARG_SI: return "&si";
    case FDT_ARG_SJ: return "&sj";
    case FDT_ARG_SK: return "&sk";
    case FDT_ARG_SRC: return "&src";
    default: return "0";
    }
}

static void call_case(fdt_sb *b, const fdt_exp_family *f, int index, const char *kernel,
                      int runtime_dims)
{
    fdt_arg a[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(f->op, runtime_dims, a);
    fdt_sb_printf(b, "    case %d: {\n        void *args[] = {", index);
    for (int i = 0; i < n; i++)
        fdt_sb_printf(b, "%s(void *)%s", i ? ", " : "", arg_addr(a[i]));
    fdt_sb_printf(b, "};\n        %s(args);\n        return 0;\n    }\n", kernel);
}

static void family_launchers(const fdt_exp_family *f, fdt_sb *b)
{
    const char *T = real_of(f->prec);
    int nv = fdt_exp_family_nvariants(f);
    fdt_sb decl, names;
    fdt_sb_init(&decl);
    fdt_sb_init(&names);
    params(f, &decl, &names);
    fdt_sb_printf(b, "\n/* ---- %s R=%d %s on the current CPU */\n\n", fdt_op_name(f->op), f->R,
                  fdt_prec_name(f->prec));
    fdt_sb_printf(b,
                  "/* The variant the launcher picks for this grid on the current CPU; "
                  "FDTUNED_NO_VARIANT when none\n * can run it. */\n"
                  "static inline int fdtuned_%s_current(int nx, int ny, int nz)\n{\n"
                  "    const char *name, *arch;\n    int cores;\n"
                  "    fdtuned_cpu_current_device(&name, &arch, &cores);\n"
                  "    return fdtuned_%s_select(name, arch, cores, nx, ny, nz);\n}\n\n"
                  "/* The layout to allocate for this grid on the current CPU: 0 or "
                  "FDTUNED_NO_VARIANT. */\n"
                  "static inline int fdtuned_%s_layout(int nx, int ny, int nz, fdtuned_layout *l)"
                  "\n{\n    return fdtuned_variant_layout(fdtuned_%s_variants, %d, "
                  "fdtuned_%s_current(nx, ny, nz), nx, ny,\n"
                  "                                  nz, l);\n}\n\n",
                  f->name, f->name, f->name, f->name, nv, f->name);
    fdt_sb_printf(b,
                  "/* Runs one given variant (pointers: allocation bases, see the top): 0, or "
                  "FDTUNED_NO_VARIANT. */\n"
                  "static inline int fdtuned_%s_run(int variant, %s)\n{\n"
                  "    fdtuned_layout lay;\n    fdtuned_geometry geo;\n"
                  "    if (fdtuned_variant_layout(fdtuned_%s_variants, %d, variant, nx, ny, nz, "
                  "&lay) != 0 ||\n"
                  "        fdtuned_variant_geometry(&fdtuned_%s_variants[variant], nx, ny, nz, "
                  "&geo) != 0)\n"
                  "        return FDTUNED_NO_VARIANT;\n",
                  f->name, fdt_sb_str(&decl), f->name, nv, f->name);
    if (fdt_op_is_step(f->op))
        fdt_sb_printf(b, "    %s *o = p_next + lay.offset;\n    const %s *x = p + lay.offset, "
                         "*xp = p_prev + lay.offset, *xc = c2 + lay.offset;\n", T, T);
    else
        fdt_sb_printf(b, "    %s *o = out + lay.offset;\n    const %s *x = in + lay.offset;\n",
                      T, T);
    fdt_sb_puts(b, "    int line = (int)lay.line, jbeg = geo.launch[0].jbeg, "
                   "jend = geo.launch[0].jend;\n    long long slice = lay.slice;\n"
                   "    (void)line;\n    (void)slice;\n    (void)jbeg;\n    (void)jend;\n"
                   "    switch (variant) {\n");
    call_case(b, f, 0, f->kfallback, 1);
    for (size_t t = 0; t < f->ntuned; t++) {
        call_case(b, f, f->tuned[t].vconst, f->tuned[t].kconst, 0);
        call_case(b, f, f->tuned[t].vruntime, f->tuned[t].kruntime, 1);
    }
    fdt_sb_puts(b, "    default:\n        return FDTUNED_NO_VARIANT;\n    }\n}\n\n");
    fdt_sb_printf(b,
                  "/* The launcher: picks the variant for this grid on the current CPU and runs "
                  "it. */\n"
                  "static inline int fdtuned_%s(%s)\n{\n"
                  "    int v = fdtuned_%s_current(nx, ny, nz);\n"
                  "    return v < 0 ? FDTUNED_NO_VARIANT : fdtuned_%s_run(v, %s);\n}\n",
                  f->name, fdt_sb_str(&decl), f->name, f->name, fdt_sb_str(&names));
    fdt_sb_free(&decl);
    fdt_sb_free(&names);
}

/* ------------------------------------------------------------------ the CPU part */

int fdt_exp_render_cpu(const fdt_exp_plan *p, fdt_sb *b, fdt_err *e)
{
    static const char *const portable[] = {"fdtuned_layout.h", "fdtuned_geometry.h",
                                           "fdtuned_deploy.h", "fdtuned_model.h", "fdtuned_nearest.h",
                                           "fdtuned_select.h"};
    const char *host = fdt_exp_snippet("fdtuned_cpu_host.h");
    for (size_t i = 0; i < sizeof portable / sizeof portable[0]; i++)
        if (!fdt_exp_snippet(portable[i]))
            host = NULL;
    if (!host)
        return fdt_err_set(e, "export: the header snippets are not embedded");
    fdt_sb_puts(b, "/* Finite-difference stencil kernels tuned by fdtune for CPUs (C11 + OpenMP), "
                   "with launchers\n * that pick the tuned variant for the current CPU and grid. "
                   "Generated by `fdtune export`:\n * do not edit, export again after tuning.\n"
                   " *\n");
    fdt_exp_provenance(p, b);
    fdt_sb_puts(b, " *\n");
    usage(p, b);
    fdt_sb_puts(b, " */\n#ifndef FDTUNED_CPU_EXPORT_H\n#define FDTUNED_CPU_EXPORT_H\n"
                   "#if !defined(__cplusplus) && !defined(__HIPCC_RTC__) && "
                   "!defined(__CUDACC_RTC__)\n\n");
    fdt_sb_puts(b, "/* The exported CPU operators: X(op, R, precision, element type). */\n"
                   "#define FDTUNED_CPU_OPERATORS(X)");
    for (size_t f = 0; f < p->nfam; f++)
        if (p->fam[f].cpu)
            fdt_sb_printf(b, " \\\n    X(%s, %d, %s, %s)", fdt_op_name(p->fam[f].op),
                          p->fam[f].R, fdt_prec_name(p->fam[f].prec), real_of(p->fam[f].prec));
    fdt_sb_printf(b, "\n#define FDTUNED_CPU_GENERATOR \"%s\"\n\n", p->generator);
    for (size_t i = 0; i < sizeof portable / sizeof portable[0]; i++)
        fdt_sb_puts(b, fdt_exp_snippet(portable[i]));
    for (size_t f = 0; f < p->nfam; f++)
        if (p->fam[f].cpu)
            family_tables(&p->fam[f], b);
    /* The generated kernels keep arguments an operator may not use (ny of d2z). */
    fdt_sb_puts(b, "\n#if defined(__GNUC__)\n#pragma GCC diagnostic push\n"
                   "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n"
                   "#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
                   "#pragma GCC diagnostic ignored \"-Wunused-function\"\n#endif\n");
    if (kernels(p, b, e))
        return -1;
    fdt_sb_puts(b, "\n#if defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n\n");
    fdt_sb_puts(b, host);
    for (size_t f = 0; f < p->nfam; f++)
        if (p->fam[f].cpu)
            family_launchers(&p->fam[f], b);
    fdt_sb_puts(b, "\n#endif /* C */\n#endif /* FDTUNED_CPU_EXPORT_H */\n");
    if (b->oom)
        return fdt_err_set(e, "export: out of memory");
    return 0;
}
