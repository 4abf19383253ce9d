/* The exported time-step driver (`fdtune export --driver`): after the header, a plain C API
 * that owns the fields of one grid and steps them with the tuned launcher of the plan's one
 * time-step operator (wave, or dwave with its deployment and eta profile):
 *   fdtd_init(nx, ny, nz, sx, sy, sz)   allocate p, p_prev, p_next, c2 (zeros, halos
 *                                       included) and the eta profile, pick the variant;
 *   fdtd_p(), fdtd_p_prev(), fdtd_c2(), fdtd_index(i, j, k), fdtd_layout()
 *                                       where to fill the fields (allocation bases);
 *   fdtd_source(i, j, k)                the point source (default: the centre);
 *   fdtd_step(src)                      one step, then p_prev <- p <- p_next;
 *   fdtd_finalize()                     free everything.
 * On the CPU (a plan of CPU results) the fields are host memory and the CPU part's launcher
 * runs; on a GPU (HIP or CUDA code) they are device memory (hipMalloc; fill them with
 * hipMemcpy at fdtd_index) and the GPU part's launcher runs on the default stream. A plan
 * with results for both (a hybrid step) is refused: this build exports no hybrid driver. */
#include "exp_internal.h"

#include <stdio.h>
#include <string.h>

/* The plan's one time-step family, or a refusal saying what to narrow. */
static int step_family(const fdt_exp_plan *p, const fdt_exp_family **out, fdt_err *e)
{
    size_t n = 0, ncpu = 0;
    fdt_sb which;
    fdt_sb_init(&which);
    for (size_t f = 0; f < p->nfam; f++) {
        const fdt_exp_family *fam = &p->fam[f];
        if (!fdt_op_is_step(fam->op))
            continue;
        fdt_sb_printf(&which, "%s%s%s R=%d %s", n ? ", " : "", fam->cpu ? "CPU " : "",
                      fdt_op_name(fam->op), fam->R, fdt_prec_name(fam->prec));
        *out = fam;
        n++;
        ncpu += fam->cpu != 0;
    }
    int rc = 0;
    if (n == 0)
        rc = fdt_err_set(e, "export --driver: nothing to step: the database has no time-step "
                            "operator (wave or dwave) tuned for what was asked");
    else if (ncpu && ncpu < n)
        rc = fdt_err_set(e, "export --driver: results for a GPU and a CPU (%s): a driver that "
                            "splits the step between them (a hybrid plan) is not exported by "
                            "this build; export with --gpu or with --cpu alone",
                         fdt_sb_str(&which));
    else if (n > 1)
        rc = fdt_err_set(e, "export --driver: %zu time-step operators (%s): a driver steps "
                            "one; name it with --op, --R and --precision", n, fdt_sb_str(&which));
    fdt_sb_free(&which);
    return !rc ? 0 : n ? FDT_EXP_REFUSED : FDT_EXP_NOTHING;
}

/* The driver's banner, its constants and its state. */
static void driver_head(fdt_sb *b, const fdt_exp_family *f, int gpu)
{
    const char *T = f->prec == FDT_F64 ? "double" : "float";
    const int dwave = f->op == FDT_OP_DWAVE;
    char eta[96] = "";
    if (dwave)
        snprintf(eta, sizeof eta, " and the eta array\n *     (fdtuned_%s_profile)", f->name);
    fdt_sb_printf(b,
        "\n/* ---- fdtd: the time-step driver (fdtune export --driver) over fdtuned_%s ----\n"
        " * fdtd_init(nx, ny, nz, sx, sy, sz)  allocates p, p_prev, p_next and c2 (zeros, halos "
        "included:\n"
        " *     p = 0 beyond the grid)%s, picks the variant for this %s and grid;\n"
        " *     sx, sy, sz are 1/h^2 per axis (dt^2 and the velocity go in c2 = (v dt)^2). 0, or "
        "-1\n"
        " *     (no variant can run the grid, or no memory).\n"
        " * fdtd_p(), fdtd_p_prev(), fdtd_c2()  the fields' allocation bases (%s memory), "
        "element\n"
        " *     (i, j, k) of the interior (halo: -R..n+R-1) at fdtd_index(i, j, k); "
        "fdtd_layout().\n"
        " * fdtd_source(i, j, k)  the point source, interior coordinates (default the "
        "centre).\n"
        " * fdtd_step(src)  one step with source amplitude src, then p_prev <- p <- p_next: "
        "0, or the\n"
        " *     launcher's error.\n"
        " * fdtd_finalize()  frees everything. One grid per program (the state is static). */\n",
        f->name, eta, gpu ? "GPU" : "CPU", gpu ? "device: hipMemcpy" : "host");
    fdt_sb_printf(b,
        "#ifndef FDTD_DRIVER_H\n#define FDTD_DRIVER_H\n"
        "/* The stepped operator: its radius, and the absorbing layer its kernels have built "
        "in\n * (width W in points, strength S; 0 and 0: wave, undamped). */\n"
        "#define FDTD_OP \"%s\"\n#define FDTD_R %d\n#define FDTD_ABSORB_W %d\n"
        "#define FDTD_ABSORB_S ((double)%.17g)\n"
        "/* The config text of variant v (fdtd_s.variant is the one fdtd_step runs). */\n"
        "#define FDTD_VARIANT_CONFIG(v) (fdtuned_%s_variants[(v)].config)\n"
        "typedef %s fdtd_real;\n"
        "static struct {\n"
        "    int nx, ny, nz, si, sj, sk, variant;\n"
        "    fdtd_real sx, sy, sz, *p, *p_prev, *p_next, *c2, *eta;\n"
        "    fdtuned_layout lay;\n"
        "} fdtd_s;\n\n", fdt_op_name(f->op), f->R, f->absorb_w, f->absorb_s, f->name, T);
}

/* fdtd_alloc_, fdtd_free_ (device memory on a GPU, host memory on the CPU) and
 * fdtd_finalize. */
static void driver_memory(fdt_sb *b, int gpu)
{
    if (gpu)
        fdt_sb_puts(b,
            "static inline void fdtd_free_(fdtd_real **a)\n{\n"
            "    if (*a)\n        (void)hipFree(*a);\n    *a = 0;\n}\n\n"
            "static inline int fdtd_alloc_(fdtd_real **a, size_t n)\n{\n"
            "    return hipMalloc((void **)a, n * sizeof(fdtd_real)) == hipSuccess &&\n"
            "                   hipMemset(*a, 0, n * sizeof(fdtd_real)) == hipSuccess\n"
            "               ? 0\n               : -1;\n}\n\n");
    else
        fdt_sb_puts(b,
            "static inline void fdtd_free_(fdtd_real **a)\n{\n    free(*a);\n    *a = 0;\n}\n\n"
            "static inline int fdtd_alloc_(fdtd_real **a, size_t n)\n{\n"
            "    *a = (fdtd_real *)calloc(n, sizeof(fdtd_real));\n    return *a ? 0 : -1;\n}\n\n");
    fdt_sb_puts(b,
        "/* Frees the fields; the driver can be initialised again. */\n"
        "static inline void fdtd_finalize(void)\n{\n"
        "    fdtd_free_(&fdtd_s.p);\n    fdtd_free_(&fdtd_s.p_prev);\n"
        "    fdtd_free_(&fdtd_s.p_next);\n    fdtd_free_(&fdtd_s.c2);\n"
        "    fdtd_free_(&fdtd_s.eta);\n    memset(&fdtd_s, 0, sizeof fdtd_s);\n}\n\n");
}

/* fdtd_init: the variant, the layout, the fields and (dwave) the eta profile. */
static void driver_init(fdt_sb *b, const fdt_exp_family *f, int gpu)
{
    const int dwave = f->op == FDT_OP_DWAVE;
    fdt_sb_printf(b,
        "/* Allocates the fields of an nx x ny x nz grid: 0, or -1 (see the top). */\n"
        "static inline int fdtd_init(int nx, int ny, int nz, fdtd_real sx, fdtd_real sy, "
        "fdtd_real sz)\n{\n"
        "    size_t n;\n"
        "    fdtd_finalize();\n"
        "    fdtd_s.variant = fdtuned_%s_current(nx, ny, nz);\n"
        "    if (fdtd_s.variant < 0 || fdtuned_%s_layout(nx, ny, nz, &fdtd_s.lay) != 0)\n"
        "        return -1;\n"
        "    n = (size_t)fdtd_s.lay.elems;\n"
        "    if (fdtd_alloc_(&fdtd_s.p, n) || fdtd_alloc_(&fdtd_s.p_prev, n) ||\n"
        "        fdtd_alloc_(&fdtd_s.p_next, n) || fdtd_alloc_(&fdtd_s.c2, n) ||\n"
        "        fdtd_alloc_(&fdtd_s.eta, (size_t)nx + ny + nz)) {\n"
        "        fdtd_finalize();\n        return -1;\n    }\n",
        f->name, f->name);
    if (dwave && gpu)
        fdt_sb_printf(b,
            "    {\n"
            "        fdtd_real *h = (fdtd_real *)malloc(sizeof(fdtd_real) * ((size_t)nx + ny + "
            "nz));\n"
            "        int bad = !h;\n"
            "        if (h) {\n"
            "            fdtuned_%s_profile(nx, ny, nz, h);\n"
            "            bad = hipMemcpy(fdtd_s.eta, h, sizeof(fdtd_real) * ((size_t)nx + ny + "
            "nz),\n"
            "                            hipMemcpyHostToDevice) != hipSuccess;\n"
            "            free(h);\n"
            "        }\n"
            "        if (bad) {\n            fdtd_finalize();\n            return -1;\n"
            "        }\n    }\n", f->name);
    else if (dwave)
        fdt_sb_printf(b, "    fdtuned_%s_profile(nx, ny, nz, fdtd_s.eta);\n", f->name);
    fdt_sb_printf(b,
        "    fdtd_s.nx = nx;\n    fdtd_s.ny = ny;\n    fdtd_s.nz = nz;\n"
        "    fdtd_s.sx = sx;\n    fdtd_s.sy = sy;\n    fdtd_s.sz = sz;\n"
        "    fdtd_s.si = %d + nx / 2;\n    fdtd_s.sj = %d + ny / 2;\n    fdtd_s.sk = %d + nz / 2;\n"
        "    return 0;\n}\n\n", f->R, f->R, f->R);
}

/* The accessors, fdtd_source and fdtd_step. */
static void driver_api(fdt_sb *b, const fdt_exp_family *f, int gpu)
{
    const int dwave = f->op == FDT_OP_DWAVE;
    fdt_sb_printf(b,
        "/* The fields (allocation bases) and their layout. */\n"
        "static inline fdtd_real *fdtd_p(void) { return fdtd_s.p; }\n"
        "static inline fdtd_real *fdtd_p_prev(void) { return fdtd_s.p_prev; }\n"
        "static inline fdtd_real *fdtd_c2(void) { return fdtd_s.c2; }\n"
        "static inline const fdtuned_layout *fdtd_layout(void) { return &fdtd_s.lay; }\n\n"
        "/* The element of interior point (i, j, k) (-R .. n+R-1 reach the halo). */\n"
        "static inline long long fdtd_index(int i, int j, int k)\n{\n"
        "    return fdtd_s.lay.offset + (i + %d) + fdtd_s.lay.line * (j + %d) +\n"
        "           fdtd_s.lay.slice * (k + %d);\n}\n\n"
        "/* Puts the point source at interior point (i, j, k). */\n"
        "static inline void fdtd_source(int i, int j, int k)\n{\n"
        "    fdtd_s.si = i + %d;\n    fdtd_s.sj = j + %d;\n    fdtd_s.sk = k + %d;\n}\n\n",
        f->R, f->R, f->R, f->R, f->R, f->R);
    fdt_sb_printf(b,
        "/* One time step (source amplitude src), then the fields rotate: 0, or the launcher's "
        "error. */\n"
        "static inline int fdtd_step(fdtd_real src)\n{\n"
        "    fdtd_real *t;\n"
        "    int rc = (int)fdtuned_%s_run(fdtd_s.variant, fdtd_s.p_next, fdtd_s.p, "
        "fdtd_s.p_prev, fdtd_s.c2,%s\n"
        "                                 fdtd_s.nx, fdtd_s.ny, fdtd_s.nz, fdtd_s.sx, "
        "fdtd_s.sy, fdtd_s.sz,\n"
        "                                 fdtd_s.si, fdtd_s.sj, fdtd_s.sk, src%s);\n"
        "    if (rc != 0)\n        return rc;\n"
        "    t = fdtd_s.p_prev;\n    fdtd_s.p_prev = fdtd_s.p;\n    fdtd_s.p = fdtd_s.p_next;\n"
        "    fdtd_s.p_next = t;\n    return 0;\n}\n#endif /* FDTD_DRIVER_H */\n",
        f->name, dwave ? " fdtd_s.eta," : "", gpu ? ", 0" : "");
}

/* The driver's text; gpu: device memory and the GPU part's launcher. */
static void driver(fdt_sb *b, const fdt_exp_family *f, int gpu)
{
    driver_head(b, f, gpu);
    driver_memory(b, gpu);
    driver_init(b, f, gpu);
    driver_api(b, f, gpu);
}

int fdt_exp_render_driver(const fdt_exp_plan *p, fdt_sb *b, fdt_err *e)
{
    const fdt_exp_family *f = NULL;
    int rc = step_family(p, &f, e);
    if (rc)
        return rc;
    if (fdt_exp_render_header(p, b, e))
        return FDT_EXP_ERROR;
    if (f->cpu)
        fdt_sb_puts(b, "\n#if !defined(__cplusplus) && !defined(__HIPCC_RTC__) && "
                       "!defined(__CUDACC_RTC__)\n#include <stdlib.h>\n#include <string.h>\n");
    else
        fdt_sb_puts(b, "\n#if !defined(FDTUNED_SELECT_ONLY) && !defined(FDTUNED_DEVICE_ONLY) && "
                       "!defined(FDTUNED_CPU_ONLY)\n#include <stdlib.h>\n#include <string.h>\n");
    driver(b, f, !f->cpu);
    fdt_sb_puts(b, "#endif\n");
    if (b->oom)
        return fdt_err_set(e, "export: out of memory");
    return 0;
}
