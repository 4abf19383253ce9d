/* Rendering an export plan as one self-contained header for users' HIP (hipcc) or CUDA
 * (nvcc, through fdtune's own mapping of the HIP dialect) code. Its parts, in order: the
 * provenance and usage comment; the portable selection part (fdtune's portable/ rules copied
 * verbatim: layout, geometry, grid fit, device models, nearest ranking; then variant tables
 * and selection; plain C/C++, alone under FDTUNED_SELECT_ONLY); the
 * platform prelude; the generated kernels, each once; and the host launchers and layout
 * helpers that ask the current device what it is. Under a runtime compiler (hiprtc, NVRTC)
 * only the kernels remain, with C names, so fdtune's tests can compile the header as is. The
 * GPU families only: a plan with CPU families gets the CPU part (cpu.c) after this one, or
 * alone when it has no GPU family. */
#include "exp_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ text helpers */

static void upper(const char *s, char *out, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = (char)toupper((unsigned char)s[i]);
    out[i] = 0;
}

static const char *real_name(fdt_prec p) { return p == FDT_F64 ? "double" : "float"; }

/* ------------------------------------------------------------------ comment block */

/* The launcher's parameters after the pointers and the grid, from the generator's argument
 * list, so the header follows the kernels when operators gain parameters. */
static void scalar_params(const fdt_exp_family *f, fdt_sb *decl, fdt_sb *names)
{
    fdt_arg a[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(f->op, 0, a);
    const char *T = real_name(f->prec);
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
        if (!nm)
            continue;
        fdt_sb_printf(decl, ", %s %s", type, nm);
        fdt_sb_printf(names, ", %s", nm);
    }
}

static int is_wave(const fdt_exp_family *f) { return fdt_op_is_step(f->op); }

static void pointer_params(const fdt_exp_family *f, fdt_sb *decl, fdt_sb *names)
{
    const char *T = real_name(f->prec);
    if (is_wave(f)) {
        fdt_sb_printf(decl, "%s *p_next, const %s *p, const %s *p_prev, const %s *c2", T, T, T,
                      T);
        fdt_sb_puts(names, "p_next, p, p_prev, c2");
        if (fdt_exp_is_dwave(f)) {
            fdt_sb_printf(decl, ", const %s *eta", T);
            fdt_sb_puts(names, ", eta");
        }
    } else {
        fdt_sb_printf(decl, "%s *out, const %s *in", T, T);
        fdt_sb_puts(names, "out, in");
    }
}

static void usage(const fdt_exp_plan *p, fdt_sb *b)
{
    fdt_sb_puts(b,
        " * Use\n"
        " *   #include \"this header\" in HIP code compiled by hipcc, or in CUDA code compiled "
        "by nvcc\n"
        " *   (-x cu): without HIP's headers, fdtune's mapping of the HIP dialect onto CUDA is "
        "used\n"
        " *   (FDTUNED_CUDA is then defined), with the HIP runtime calls a program around the\n"
        " *   launchers needs (hipMalloc, hipFree, hipMemcpy, hipMemset, hipStreamCreate,\n"
        " *   hipDeviceSynchronize, hipEvent*, hipGetErrorString, ...: fdtuned_host.h below lists "
        "them)\n"
        " *   mapped onto CUDA's. Kernels are static and launchers static inline, "
        "so\n"
        " *   any number of translation units may include it.\n"
        " *   Define FDTUNED_SELECT_ONLY before including it to get only the variant tables, "
        "the\n"
        " *   layout and selection functions (plain C99 or C++, no GPU, no includes): for "
        "build\n"
        " *   systems and tests. Under hiprtc or NVRTC only the kernels remain (extern \"C\").\n"
        " *\n"
        " *   Arrays are halo-padded boxes of (nx+2R) x (ny+2R) x (nz+2R) points, the interior "
        "from\n"
        " *   R to R+n-1 on each axis. Element (i, j, k) of the padded box is at\n"
        " *   base[offset + i + line*j + slice*k], where base is what hipMalloc/cudaMalloc "
        "returned.\n"
        " *   Every pointer a launcher takes is such an ALLOCATION BASE of at least `elems`\n"
        " *   elements; the launcher adds the offset of the variant it picks. Take line, "
        "slice,\n"
        " *   offset and elems from the layout helper for the same grid on the same device: "
        "the\n"
        " *   variants differ in alignment, so the layout depends on what is picked. The "
        "launcher\n"
        " *   writes the interior of the output only; halos are read, never written. Launches "
        "are\n"
        " *   asynchronous on `stream`; the result is hipGetLastError() (cudaGetLastError())\n"
        " *   after them, or hipErrorInvalidValue when no variant can run the grid.\n"
        " *   The layout helpers return 0, FDTUNED_NO_DEVICE (-2: no GPU is visible) or\n"
        " *   FDTUNED_NO_VARIANT (-1: no variant can run the grid); _current and _select return a\n"
        " *   variant index or the same codes.\n"
        " *\n"
        " *   Selection (fdtuned_select_in below; the rule of `fdtune query best --nearest`):\n"
        " *   among the tuned results of the current device's base architecture whose config "
        "can\n"
        " *   run the grid, this device model's (name, architecture, compute units) on this "
        "grid,\n"
        " *   else this model's, else another model's, else (PREDICTED, nothing measured) "
        "the model's\n"
        " *   answer for a model of the architecture; the nearest tuned grid (|log volume "
        "ratio|,\n"
        " *   then |log xy-plane ratio|), the nearest compute-unit count, the faster result. On "
        "that\n"
        " *   very grid its constant kernel (grid baked in, as tuned), otherwise its "
        "runtime-dims\n"
        " *   kernel; with nothing usable for the architecture, the fallback (fdtune's "
        "built-in\n"
        " *   default config).\n"
        " *\n"
        " *   Per operator (T float or double; wave: p_next = 2p - p_prev + c2 * "
        "lap(p) + src at the\n"
        " *   padded point (si, sj, sk); sx, sy, sz are 1/h^2 per axis):\n");
    for (size_t f = 0; f < p->nfam; f++) {
        const fdt_exp_family *fam = &p->fam[f];
        if (fam->cpu)
            continue;
        char up[32];
        upper(fam->name, up, sizeof up);
        fdt_sb decl, names;
        fdt_sb_init(&decl);
        fdt_sb_init(&names);
        pointer_params(fam, &decl, &names);
        fdt_sb_puts(&decl, ", int nx, int ny, int nz");
        scalar_params(fam, &decl, &names);
        fdt_sb_printf(b,
                      " *     hipError_t fdtuned_%s(%s, hipStream_t stream);\n"
                      " *     hipError_t fdtuned_%s_run(int variant, ...same...);  a given "
                      "variant\n"
                      " *     int fdtuned_%s_layout(int nx, int ny, int nz, fdtuned_layout *l);"
                      "  current device\n"
                      " *     int fdtuned_%s_current(int nx, int ny, int nz);  variant index\n"
                      " *     int fdtuned_%s_select(const char *name, const char *arch, int cus,\n"
                      " *                         long nx, long ny, long nz);\n"
                      " *     int fdtuned_%s_layout_for(const char *name, const char *arch, int "
                      "cus,\n"
                      " *                         long nx, long ny, long nz, fdtuned_layout "
                      "*l);\n"
                      " *     fdtuned_%s_variants[], FDTUNED_%s_NVARIANTS\n",
                      fam->name, fdt_sb_str(&decl), fam->name, fam->name, fam->name, fam->name,
                      fam->name, fam->name, up);
        if (fdt_exp_is_dwave(fam))
            fdt_sb_printf(b, FDT_EXP_DWAVE_USAGE, fam->name, fam->absorb_w, fam->absorb_s);
        fdt_sb_free(&decl);
        fdt_sb_free(&names);
    }
    fdt_sb_puts(b, " *   FDTUNED_OPERATORS(X) expands X(op, R, precision, type) once per "
                   "operator.\n");
}

/* ------------------------------------------------------------------ portable part */

static void family_tables(const fdt_exp_family *f, fdt_sb *b)
{
    char up[32];
    upper(f->name, up, sizeof up);
    fdt_sb_printf(b, "\n/* ---- %s R=%d %s: variant 0 is the fallback, then per tuned result its "
                     "constant and its\n * runtime-dims kernel. Fields as in fdtuned_variant. */\n",
                  fdt_op_name(f->op), f->R, fdt_prec_name(f->prec));
    fdt_sb_printf(b, "#define FDTUNED_%s_NVARIANTS %d\n", up, fdt_exp_family_nvariants(f));
    fdt_sb_printf(b, "static const fdtuned_variant fdtuned_%s_variants[FDTUNED_%s_NVARIANTS] = {\n",
                  f->name, up);
    fdt_exp_variant_rows(b, f, 0);
    fdt_sb_puts(b, "};\n\n");
    fdt_sb_printf(b,
                  "/* The variant for a device and grid (see fdtuned_select_in), "
                  "FDTUNED_NO_VARIANT when none\n * can run it. */\n"
                  "static inline int fdtuned_%s_select(const char *name, const char *arch, int "
                  "cus, long nx,\n"
                  "                                    long ny, long nz)\n{\n"
                  "    return fdtuned_select_in(fdtuned_%s_variants, FDTUNED_%s_NVARIANTS, name, "
                  "arch, cus, nx, ny,\n"
                  "                             nz);\n}\n\n",
                  f->name, f->name, up);
    fdt_sb_printf(b,
                  "/* The layout the selected variant expects: 0, or FDTUNED_NO_VARIANT when "
                  "none can run the\n * grid. */\n"
                  "static inline int fdtuned_%s_layout_for(const char *name, const char *arch, "
                  "int cus, long nx,\n"
                  "                                        long ny, long nz, fdtuned_layout *l)"
                  "\n{\n"
                  "    return fdtuned_variant_layout(fdtuned_%s_variants, FDTUNED_%s_NVARIANTS,\n"
                  "                                  fdtuned_%s_select(name, arch, cus, nx, ny, "
                  "nz), nx, ny, nz,\n"
                  "                                  l);\n}\n",
                  f->name, f->name, up, f->name);
    if (fdt_exp_is_dwave(f)) {
        fdt_exp_dwave_profile(b, f, real_name(f->prec));
        fdt_exp_dwave_boxes(b, f);
    }
}

/* ------------------------------------------------------------------ kernels */

/* A generated kernel made fit for the header: the runtime include goes (the prelude makes
 * it once, for both platforms), and the kernel's linkage becomes FDTUNED_GLOBAL (static for
 * hipcc/nvcc, extern "C" for the runtime compilers). The generator's output is used as is
 * otherwise, so the exported kernels are the tuned ones to the byte. */
static int adapt_kernel(const char *src, const char *name, fdt_sb *out, fdt_err *e)
{
    static const char inc[] = "#include <hip/hip_runtime.h>\n";
    static const char glob[] = "extern \"C\" __global__ void ";
    const char *a = strstr(src, inc), *g = strstr(src, glob);
    /* one kernel; a dwave source two, the damped and the interior one */
    const char *g2 = g ? strstr(g + 1, glob) : NULL;
    int want = strstr(src, "_int(") && g2 ? 2 : 1;
    if (!a || strstr(a + 1, inc) || !g || g < a || (want == 1 && g2) ||
        (want == 2 && strstr(g2 + 1, glob)))
        return fdt_err_set(e, "export: kernel %s: the generator's source does not have the "
                              "expected include and kernel declaration", name);
    fdt_sb_putn(out, src, (size_t)(a - src));
    const char *rest = a + strlen(inc);
    for (const char *k = g; k; rest = k + strlen(glob), k = strstr(rest, glob)) {
        fdt_sb_putn(out, rest, (size_t)(k - rest));
        fdt_sb_puts(out, "FDTUNED_GLOBAL void ");
    }
    fdt_sb_puts(out, rest);
    return 0;
}

static int kernels(const fdt_exp_plan *p, fdt_sb *b, fdt_err *e)
{
    return fdt_exp_write_kernels(p, 0, adapt_kernel, b, e);
}

/* ------------------------------------------------------------------ launchers */

static const char *call_arg(fdt_arg a)
{
    switch (a) {
    case FDT_ARG_OUT: return "o";
    case FDT_ARG_IN: return "x";
    case FDT_ARG_PREV: return "xp";
    case FDT_ARG_C2: return "xc";
    case FDT_ARG_NX: return "nx";
    case FDT_ARG_NY: return "ny";
    case FDT_ARG_NZ: return "nz";
    case FDT_ARG_LINE: return "(int)lay.line";
    case FDT_ARG_SLICE: return "lay.slice";
    case FDT_ARG_JBEG: return "L->jbeg";
    case FDT_ARG_JEND: return "L->jend";
    case FDT_ARG_SX: return "sx";
    case FDT_ARG_SY: return "sy";
    case FDT_ARG_SZ: return "sz";
    case FDT_ARG_SI: return "si";
    case FDT_ARG_SJ: return "sj";
    case FDT_ARG_SK: return "sk";
    case FDT_ARG_SRC: return "src";
    case FDT_ARG_ETA: return "eta";
    case FDT_ARG_BNX: return "bnx";
    case FDT_ARG_BNY: return "bny";
    case FDT_ARG_BNZ: return "bnz";
    case FDT_ARG_GX: return "gx";
    case FDT_ARG_GY: return "gy";
    case FDT_ARG_GZ: return "gz";
    case FDT_ARG_HX0: return "hx0";
    case FDT_ARG_HX1: return "hx1";
    case FDT_ARG_HY0: return "hy0";
    case FDT_ARG_HY1: return "hy1";
    case FDT_ARG_HZ0: return "hz0";
    case FDT_ARG_HZ1: return "hz1";
    default: return "?";
    }
}

/* Dynamic shared memory of a config's kernel (the ring of lds=2), 0 for none. */
static unsigned dynamic_shared(const fdt_exp_family *f, const fdt_config *c)
{
    fdt_problem p = {.op = f->op, .R = f->R, .prec = f->prec}; /* the grid plays no part */
    uint32_t bytes;
    int dynamic;
    fdt_err e;
    return fdt_gen_shared(&p, c, &bytes, &dynamic, &e) == 0 && dynamic ? bytes : 0;
}

/* Opens a block that makes a bulk=1 kernel's tensor map of its input x (its last argument,
 * `map`; fdt_gen_tmap's rule, fdtuned_tmap_make, on the variant's shape and the grid's
 * layout), which the launch closes. */
static void tensor_map(fdt_sb *b, const fdt_exp_family *f, const char *kernel)
{
    fdt_sb_printf(b, "            {\n"
                     "                fdtuned_shape sh;\n"
                     "                fdtuned_tmap tm;\n"
                     "                %s_k::fdt_tmap map;\n"
                     "                fdtuned_variant_shape(&fdtuned_%s_variants[variant], &sh);\n"
                     "                fdtuned_tmap_make(&sh, nx, ny, nz, lay.line, lay.slice, "
                     "(unsigned long long)x, &tm);\n"
                     "                if ((err = fdtuned_tensor_map(&tm, sh.esize, &map)) != "
                     "hipSuccess)\n                    return err;\n    ",
                  kernel, f->name);
}

static void launch_case(fdt_sb *b, const fdt_exp_family *f, int index, const char *kernel,
                        const fdt_config *c, int runtime_dims)
{
    fdt_arg a[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(f->op, runtime_dims, a);
    unsigned shared = dynamic_shared(f, c);
    char in[128];
    int dwave = fdt_exp_is_dwave(f);
    fdt_gen_dwave_interior_name(kernel, in, sizeof in);
    fdt_sb_printf(b, "        case %d:\n", index);
    for (int k = 0; k < 1 + dwave && shared; k++)
        fdt_sb_printf(b, "            if ((err = fdtuned_allow_shared((const void *)%s, %u)) != "
                         "hipSuccess)\n                return err;\n", k ? in : kernel, shared);
    for (int k = 0; k < 1 + dwave; k++) { /* dwave: the box's kernel, damped or interior */
        if (dwave)
            fdt_sb_puts(b, k ? "            else\n    " : "            if (B->damped)\n    ");
        if (c->bulk)
            tensor_map(b, f, kernel);
        fdt_sb_printf(b, "            %s<<<grid, block, %u, stream>>>(", k ? in : kernel,
                      shared);
        for (int i = 0; i < n; i++)
            fdt_sb_printf(b, "%s%s", i ? ", " : "", call_arg(a[i]));
        fdt_sb_puts(b, c->bulk ? ", map);\n            }\n" : ");\n");
    }
    fdt_sb_puts(b, "            break;\n");
}

/* The launches of geo (the grid's, or the current box's), each of the variant's kernel, every
 * line after `ind`. */
static void launches(fdt_sb *b, const fdt_exp_family *f, const char *ind)
{
    fdt_sb_printf(b, "%s    for (int s = 0; s < geo.nlaunch; ++s) {\n"
                     "%s        const fdtuned_launch *L = &geo.launch[s];\n"
                     "%s        const dim3 grid(L->grid[0], L->grid[1], L->grid[2]);\n"
                     "%s        const dim3 block(L->block[0], L->block[1], L->block[2]);\n"
                     "%s        switch (variant) {\n", ind, ind, ind, ind, ind);
    launch_case(b, f, 0, f->kfallback, &f->fallback, 1);
    for (size_t t = 0; t < f->ntuned; t++) {
        launch_case(b, f, f->tuned[t].vconst, f->tuned[t].kconst, &f->tuned[t].cfg, 0);
        launch_case(b, f, f->tuned[t].vruntime, f->tuned[t].kruntime, &f->tuned[t].cfg, 1);
    }
    fdt_sb_printf(b, "%s        default:\n%s            return hipErrorInvalidValue;\n"
                     "%s        }\n%s    }\n", ind, ind, ind, ind);
}

static void family_launchers(const fdt_exp_family *f, fdt_sb *b)
{
    char up[32];
    upper(f->name, up, sizeof up);
    const char *T = real_name(f->prec);
    fdt_sb decl, names;
    fdt_sb_init(&decl);
    fdt_sb_init(&names);
    pointer_params(f, &decl, &names);
    fdt_sb_puts(&decl, ", int nx, int ny, int nz");
    fdt_sb_puts(&names, ", nx, ny, nz");
    scalar_params(f, &decl, &names);

    fdt_sb_printf(b, "\n/* ---- %s R=%d %s on the current device */\n\n", fdt_op_name(f->op),
                  f->R, fdt_prec_name(f->prec));
    fdt_sb_printf(b,
                  "/* The variant the launcher picks for this grid on the current device; "
                  "FDTUNED_NO_DEVICE\n * when no GPU is visible, FDTUNED_NO_VARIANT when none "
                  "can run the grid. */\n"
                  "static inline int fdtuned_%s_current(int nx, int ny, int nz)\n{\n"
                  "    const char *name, *arch;\n    int cus;\n"
                  "    if (fdtuned_current_device(&name, &arch, &cus) != hipSuccess)\n"
                  "        return FDTUNED_NO_DEVICE;\n"
                  "    return fdtuned_%s_select(name, arch, cus, nx, ny, nz);\n}\n\n",
                  f->name, f->name);
    fdt_sb_printf(b,
                  "/* The layout to allocate for this grid on the current device: 0, "
                  "FDTUNED_NO_DEVICE or\n * FDTUNED_NO_VARIANT. */\n"
                  "static inline int fdtuned_%s_layout(int nx, int ny, int nz, fdtuned_layout *l)"
                  "\n{\n"
                  "    return fdtuned_variant_layout(fdtuned_%s_variants, FDTUNED_%s_NVARIANTS,\n"
                  "                                  fdtuned_%s_current(nx, ny, nz), nx, ny, nz, "
                  "l);\n}\n\n",
                  f->name, f->name, up, f->name);
    fdt_sb_printf(b,
                  "/* Runs one given variant (pointers: allocation bases, see the top). */\n"
                  "static inline hipError_t fdtuned_%s_run(int variant, %s, hipStream_t stream)"
                  "\n{\n"
                  "    fdtuned_layout lay;\n    fdtuned_geometry geo;\n"
                  "    if (fdtuned_variant_layout(fdtuned_%s_variants, FDTUNED_%s_NVARIANTS, "
                  "variant, nx, ny, nz,\n"
                  "                               &lay) != 0 ||\n"
                  "        fdtuned_variant_geometry(&fdtuned_%s_variants[variant], nx, ny, nz, &geo) "
                  "!= 0)\n"
                  "        return hipErrorInvalidValue;\n",
                  f->name, fdt_sb_str(&decl), f->name, up, f->name);
    const char *ind = "";
    if (fdt_exp_is_dwave(f)) { /* the deployment's boxes, each launched like a grid */
        fdt_sb_printf(b, "    fdtuned_box box[FDTUNED_DEPLOY_MAX];\n"
                         "    fdtuned_geometry bgeo[FDTUNED_DEPLOY_MAX];\n"
                         "    const int nbox = fdtuned_%s_boxes(variant, nx, ny, nz, box, bgeo);\n"
                         "    if (nbox < 0)\n        return hipErrorInvalidValue;\n"
                         "    for (int i = 0; i < nbox; ++i) {\n", f->name);
        fdt_exp_dwave_box_locals(b, T, "        ");
        fdt_sb_puts(b, "        geo = bgeo[i];\n");
        ind = "    ";
    } else if (is_wave(f)) {
        fdt_sb_printf(b, "    %s *o = p_next + lay.offset;\n    const %s *x = p + lay.offset, "
                         "*xp = p_prev + lay.offset, *xc = c2 + lay.offset;\n", T, T);
    } else {
        fdt_sb_printf(b, "    %s *o = out + lay.offset;\n    const %s *x = in + lay.offset;\n",
                      T, T);
    }
    int ring = dynamic_shared(f, &f->fallback) != 0;
    for (size_t t = 0; t < f->ntuned; t++)
        ring |= dynamic_shared(f, &f->tuned[t].cfg) != 0;
    if (ring) /* the opt-in for dynamic shared memory can fail */
        fdt_sb_printf(b, "%s    hipError_t err;\n", ind);
    launches(b, f, ind);
    if (*ind)
        fdt_sb_puts(b, "    }\n");
    fdt_sb_puts(b, "    return FDTUNED_LAST_ERROR();\n}\n\n");
    fdt_sb_printf(b,
                  "/* The launcher: picks the variant for this grid on the current device and "
                  "runs it. */\n"
                  "static inline hipError_t fdtuned_%s(%s, hipStream_t stream)\n{\n"
                  "    const char *name, *arch;\n    int cus, v;\n"
                  "    hipError_t err = fdtuned_current_device(&name, &arch, &cus);\n"
                  "    if (err != hipSuccess)\n        return err;\n"
                  "    v = fdtuned_%s_select(name, arch, cus, nx, ny, nz);\n"
                  "    if (v < 0)\n        return hipErrorInvalidValue;\n"
                  "    return fdtuned_%s_run(v, %s, stream);\n}\n",
                  f->name, fdt_sb_str(&decl), f->name, f->name, fdt_sb_str(&names));
    fdt_sb_free(&decl);
    fdt_sb_free(&names);
}

/* ------------------------------------------------------------------ the header */

/* fdtune's mapping header for NVRTC, minus `#pragma once` (it is inlined here). */
static void cuda_mapping(fdt_sb *b)
{
    const char *m = fdt_gen_nvrtc_hip_header();
    while (m && *m) {
        const char *nl = strchr(m, '\n');
        size_t len = nl ? (size_t)(nl - m + 1) : strlen(m);
        if (strncmp(m, "#pragma once", 12))
            fdt_sb_putn(b, m, len);
        m += len;
    }
}

int fdt_exp_render_header(const fdt_exp_plan *p, fdt_sb *b, fdt_err *e)
{
    /* The rules shared with fdtune (portable/, in dependency order), then the selection. */
    static const char *const portable[] = {"fdtuned_layout.h", "fdtuned_geometry.h",
                                           "fdtuned_deploy.h", "fdtuned_model.h", "fdtuned_nearest.h",
                                           "fdtuned_select.h"};
    size_t ncpu = 0;
    for (size_t f = 0; f < p->nfam; f++)
        ncpu += p->fam[f].cpu != 0;
    if (p->nfam && ncpu == p->nfam) /* CPU results only: the CPU part alone */
        return fdt_exp_render_cpu(p, b, e);
    const char *host = fdt_exp_snippet("fdtuned_host.h");
    for (size_t i = 0; i < sizeof portable / sizeof portable[0]; i++)
        if (!fdt_exp_snippet(portable[i]))
            host = NULL;
    if (!host)
        return fdt_err_set(e, "export: the header snippets are not embedded");
    fdt_sb_puts(b, "/* Finite-difference stencil kernels tuned by fdtune, with launchers that "
                   "pick the tuned\n * variant for the current GPU and grid. Generated by "
                   "`fdtune export`: do not edit,\n * export again after tuning.\n *\n");
    fdt_exp_provenance(p, b);
    fdt_sb_puts(b, " *\n");
    if (ncpu)
        fdt_sb_puts(b, " * Two parts: this GPU part for HIP or CUDA code, then a CPU part for C "
                       "code built with\n * cc -fopenmp (its own comment below). A C program "
                       "defines FDTUNED_CPU_ONLY before\n * including the header to get the "
                       "CPU part alone.\n *\n");
    usage(p, b);
    fdt_sb_puts(b, " */\n");
    if (ncpu)
        fdt_sb_puts(b, "#ifndef FDTUNED_CPU_ONLY\n");
    fdt_sb_puts(b, "#ifndef FDTUNED_EXPORT_H\n#define FDTUNED_EXPORT_H\n\n");
    fdt_sb_puts(b, "/* Runtime compilers (hiprtc, NVRTC) get the kernels only. */\n"
                   "#if defined(__HIPCC_RTC__) || defined(__CUDACC_RTC__)\n"
                   "#ifndef FDTUNED_DEVICE_ONLY\n#define FDTUNED_DEVICE_ONLY 1\n#endif\n#endif\n"
                   "#if defined(FDTUNED_DEVICE_ONLY) && defined(FDTUNED_SELECT_ONLY)\n"
                   "#error \"FDTUNED_SELECT_ONLY is for host compilers, not for a runtime "
                   "compiler\"\n#endif\n\n");
    fdt_sb_puts(b, "/* The exported operators: X(op, R, precision, element type). */\n"
                   "#define FDTUNED_OPERATORS(X)");
    for (size_t f = 0; f < p->nfam; f++)
        if (!p->fam[f].cpu)
            fdt_sb_printf(b, " \\\n    X(%s, %d, %s, %s)", fdt_op_name(p->fam[f].op),
                          p->fam[f].R, fdt_prec_name(p->fam[f].prec), real_name(p->fam[f].prec));
    fdt_sb_printf(b, "\n#define FDTUNED_GENERATOR \"%s\"\n\n", p->generator);

    fdt_sb_puts(b, "#ifndef FDTUNED_DEVICE_ONLY\n");
    for (size_t i = 0; i < sizeof portable / sizeof portable[0]; i++)
        fdt_sb_puts(b, fdt_exp_snippet(portable[i]));
    for (size_t f = 0; f < p->nfam; f++)
        if (!p->fam[f].cpu)
            family_tables(&p->fam[f], b);
    fdt_sb_puts(b, "#endif /* !FDTUNED_DEVICE_ONLY */\n\n");

    fdt_sb_puts(b, "#ifndef FDTUNED_SELECT_ONLY\n");
    fdt_sb_puts(b, "#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__) && "
                   "!defined(HIP_INCLUDE_HIP_HIP_RUNTIME_H)\n"
                   "/* CUDA without HIP's headers: fdtune's mapping of the HIP dialect the "
                   "kernels use (what\n * fdtune compiles them with through NVRTC). */\n"
                   "#define FDTUNED_CUDA 1\n");
    cuda_mapping(b);
    fdt_sb_puts(b, "#else\n#include <hip/hip_runtime.h>\n#endif\n\n");
    fdt_sb_puts(b, "/* hipcc/nvcc: one private copy per translation unit; runtime compilers look "
                   "kernels up by\n * their C names. */\n#ifndef FDTUNED_GLOBAL\n"
                   "#ifdef FDTUNED_DEVICE_ONLY\n#define FDTUNED_GLOBAL extern \"C\" __global__\n"
                   "#else\n#define FDTUNED_GLOBAL static __global__\n#endif\n#endif\n");
    /* The generated kernels keep constants and arguments an operator may not use (ny of
     * d2z); that is not the user's concern, so such warnings are off for them. */
    fdt_sb_puts(b, "#if defined(__clang__)\n#pragma clang diagnostic push\n"
                   "#pragma clang diagnostic ignored \"-Wunused-variable\"\n"
                   "#pragma clang diagnostic ignored \"-Wunused-parameter\"\n"
                   "#elif defined(__NVCC__) || defined(__CUDACC_RTC__)\n"
                   "#pragma nv_diagnostic push\n#pragma nv_diag_suppress 177\n#endif\n");
    if (kernels(p, b, e))
        return -1;
    fdt_sb_puts(b, "\n#if defined(__clang__)\n#pragma clang diagnostic pop\n"
                   "#elif defined(__NVCC__) || defined(__CUDACC_RTC__)\n"
                   "#pragma nv_diagnostic pop\n#endif\n");
    fdt_sb_puts(b, "\n#ifndef FDTUNED_DEVICE_ONLY\n");
    fdt_sb_puts(b, host);
    for (size_t f = 0; f < p->nfam; f++)
        if (!p->fam[f].cpu)
            family_launchers(&p->fam[f], b);
    fdt_sb_puts(b, "#endif /* !FDTUNED_DEVICE_ONLY */\n#endif /* !FDTUNED_SELECT_ONLY */\n"
                   "#endif /* FDTUNED_EXPORT_H */\n");
    if (ncpu) /* the CPU part follows, for C code */
        fdt_sb_puts(b, "#endif /* !FDTUNED_CPU_ONLY */\n\n");
    if (b->oom)
        return fdt_err_set(e, "export: out of memory");
    return ncpu ? fdt_exp_render_cpu(p, b, e) : 0;
}
