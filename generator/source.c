/* Turns (problem, config) into source in the target's dialect. HIP (the GPUs'): picks the
 * kernel family from one table (fdt_gen_families: direct, window, tile, ring, stream, each its
 * own template that includes templates/prelude.hip), decides the template variables (the
 * shared ones: radii per axis, vector types, the block-index order, the kernel parameters;
 * then the family's own), emits the stencil as one expression with literal coefficients and
 * symmetric pairs folded, and renders the family's template. C (the CPU's): the family of
 * blk (templates/cpu_loops.c, cpu_blocked.c, which include cpu_prelude.c and end with the
 * entry point of cpu_entry.c), its variables from the config (tiles, clauses, strips) and the
 * same folded stencil. Also renders the verification utilities of templates/util.hip and
 * templates/cpu_util.c. */
#include "fdt_gen.h"
#include "gen_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTUNE_VERSION
#define FDTUNE_VERSION "0.0.0"
#endif

const char *fdt_gen_fingerprint(void) { return fdt_gen_fingerprint_text; }
const char *fdt_gen_nvrtc_hip_header(void) { return fdt_tpl_text("nvrtc_hip_runtime.h"); }
const char *fdt_gen_amd_hip_header(void) { return fdt_tpl_text("amd_device.h"); }

void fdt_gen_dwave_interior_name(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s_int", name);
}

void fdt_gen_kernel_name(const fdt_problem *p, const fdt_config *c, char *buf, size_t n)
{
    char key[256], text[320];
    fdt_config_format(c, key, sizeof key);
    /* the grid is part of the name: kernels are specialised for it */
    snprintf(text, sizeof text, "%s|%lldx%lldx%lld", key, (long long)p->nx, (long long)p->ny,
             (long long)p->nz);
    snprintf(buf, n, "fdt_%s_r%d_%s_%08x", fdt_op_name(p->op), p->R, fdt_prec_name(p->prec),
             (unsigned)(fdt_hash64_str(text, FDT_HASH_SEED) & 0xffffffffu));
}

/* A literal that reads back as exactly the precision's value of x. */
static void literal(fdt_sb *b, long double x, fdt_prec prec)
{
    char num[48];
    if (prec == FDT_F32)
        snprintf(num, sizeof num, "%.9g", (double)(float)x);
    else
        snprintf(num, sizeof num, "%.17g", (double)x);
    /* "-2" is an integer literal: make it a floating one. */
    fdt_sb_printf(b, "%s%s%s", num, strpbrk(num, ".eEn") ? "" : ".0", prec == FDT_F32 ? "f" : "");
}

/* d2(w): the second-derivative weights applied to w[0..2R], w[R] the centre. */
static int emit_stencil(const fdt_problem *p, const fdt_config *c, fdt_sb *b, fdt_err *e)
{
    long double coef[FDT_R_MAX + 1];
    if (fdt_fd_coeffs(p->R, coef, e))
        return -1;
    const int R = p->R;
    fdt_sb_printf(b, "// Second derivative of order %d (radius %d, unit spacing): w[R + r] is "
                     "the value at offset r.\n", 2 * R, R);
    fdt_sb_puts(b, "// Symmetric pairs are folded, so each pair costs one add and one FMA.\n");
    if (c->fault == FDT_FAULT_COEF)
        fdt_sb_puts(b, "// fault=coef: the weight of offset +1 has the wrong sign (test only).\n");
    fdt_sb_puts(b, "__device__ __forceinline__ real d2(const real* w)\n{\n    return ");
    literal(b, coef[0], p->prec);
    fdt_sb_printf(b, " * w[%d]", R);
    for (int r = 1; r <= R; r++) {
        fdt_sb_puts(b, "\n         + ");
        literal(b, coef[r], p->prec);
        if (r == 1 && c->fault == FDT_FAULT_COEF)
            fdt_sb_printf(b, " * (w[%d] - w[%d])", R - r, R + r);
        else
            fdt_sb_printf(b, " * (w[%d] + w[%d])", R - r, R + r);
    }
    fdt_sb_puts(b, ";\n}\n");
    return 0;
}

/* weight(r): the weight of the neighbour at signed offset r (-R..R) of the stencil d2 applies
 * (with its fault=coef), for the families that stream each value into the sums it belongs to
 * instead of gathering a window: a constant once r is (after unrolling). */
static int emit_weights(const fdt_problem *p, const fdt_config *c, fdt_sb *b, fdt_err *e)
{
    long double coef[FDT_R_MAX + 1];
    if (fdt_fd_coeffs(p->R, coef, e))
        return -1;
    fdt_sb_puts(b, "// The same weights one offset at a time: weight(r) is that of the value at "
                   "offset r.\n__device__ __forceinline__ real weight(int r)\n{\n    return ");
    for (int r = p->R; r >= 1; r--) {
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            long double w = coef[r];
            if (r == 1 && sgn > 0 && c->fault == FDT_FAULT_COEF)
                w = -w; /* as d2's (w[R-1] - w[R+1]) */
            fdt_sb_printf(b, "r == %d ? ", sgn * r);
            literal(b, w, p->prec);
            fdt_sb_puts(b, "\n         : ");
        }
    }
    literal(b, coef[0], p->prec);
    fdt_sb_puts(b, ";\n}\n");
    return 0;
}

static const char *real_name(fdt_prec p) { return p == FDT_F64 ? "double" : "float"; }

/* The C dialect's unsigned integer of an element's size (UBITS of cpu_prelude.c and
 * cpu_util.c). */
static const char *c_ubits_name(fdt_prec p) { return p == FDT_F64 ? "uint64_t" : "uint32_t"; }

/* dwave's box arguments (ints): their names in both dialects. */
static const char *box_arg_name(fdt_arg a)
{
    static const char *const names[] = {"bnx", "bny", "bnz", "gx", "gy", "gz",
                                        "hx0", "hx1", "hy0", "hy1", "hz0", "hz1"};
    FDT_ASSERT(a >= FDT_ARG_BNX && a <= FDT_ARG_HZ1, "a box argument");
    return names[a - FDT_ARG_BNX];
}

static void emit_args(const fdt_problem *p, int runtime_dims, fdt_sb *b);

/* The kernel's parameters (fdt_gen_kernel_args), and with bulk=1 its tensor map last
 * (fdt_gen_tmap; the type is the prelude's, in the kernel's namespace NAME_k). */
static void emit_params(const fdt_problem *p, const fdt_config *c, const char *name,
                        int runtime_dims, fdt_sb *b)
{
    emit_args(p, runtime_dims, b);
    if (c->bulk)
        fdt_sb_printf(b, ",\n    const FDT_GRID_CONST %s_k::fdt_tmap tmap", name);
}

/* The parameters of fdt_gen_kernel_args in the HIP dialect. */
static void emit_args(const fdt_problem *p, int runtime_dims, fdt_sb *b)
{
    fdt_arg args[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(p->op, runtime_dims, args);
    const char *real = real_name(p->prec);
    /* dwave: the grid's extents are the global ones (nx, ny, nz are the box's in the kernel) */
    const char *g = p->op == FDT_OP_DWAVE ? "g" : "";
    for (int i = 0; i < n; i++) {
        /* pointers on the first line, the dimensions on the next, then the rest */
        if (i)
            fdt_sb_puts(b, args[i] == FDT_ARG_NX || args[i] == FDT_ARG_JBEG ||
                                   args[i] == FDT_ARG_BNX ? ",\n    " : ", ");
        if (args[i] >= FDT_ARG_BNX && args[i] <= FDT_ARG_HZ1) {
            fdt_sb_printf(b, "int %s", box_arg_name(args[i]));
            continue;
        }
        switch (args[i]) {
        case FDT_ARG_OUT: fdt_sb_printf(b, "%s* __restrict__ out", real); break;
        case FDT_ARG_IN: fdt_sb_printf(b, "const %s* __restrict__ in", real); break;
        case FDT_ARG_PREV: fdt_sb_printf(b, "const %s* __restrict__ prev", real); break;
        case FDT_ARG_C2: fdt_sb_printf(b, "const %s* __restrict__ c2", real); break;
        case FDT_ARG_NX: fdt_sb_printf(b, "int %snx", g); break;
        case FDT_ARG_NY: fdt_sb_printf(b, "int %sny", g); break;
        case FDT_ARG_NZ: fdt_sb_printf(b, "int %snz", g); break;
        case FDT_ARG_LINE: fdt_sb_puts(b, "int line"); break;
        case FDT_ARG_SLICE: fdt_sb_puts(b, "long long slice"); break;
        case FDT_ARG_JBEG: fdt_sb_puts(b, "int jbeg"); break;
        case FDT_ARG_JEND: fdt_sb_puts(b, "int jend"); break;
        case FDT_ARG_SX: fdt_sb_printf(b, "%s sx", real); break;
        case FDT_ARG_SY: fdt_sb_printf(b, "%s sy", real); break;
        case FDT_ARG_SZ: fdt_sb_printf(b, "%s sz", real); break;
        case FDT_ARG_SI: fdt_sb_puts(b, "int si"); break;
        case FDT_ARG_SJ: fdt_sb_puts(b, "int sj"); break;
        case FDT_ARG_SK: fdt_sb_puts(b, "int sk"); break;
        case FDT_ARG_SRC: fdt_sb_printf(b, "%s src", real); break;
        case FDT_ARG_ETA: fdt_sb_printf(b, "const %s* __restrict__ eta", real); break;
        default: break; /* the box's, above */
        }
    }
}

/* The HIP families' names of an output's global interior coordinates (dwave's layer). */
#define HIP_X "i0 + v + gx - R"
static const char *const hip_y = "j0 + t + gy - R", *const hip_z = "k + gz - R";

/* dwave's update of output res[v], in every family's loop over an output row's VEC points:
 * the wave expression 2 c - pv + cv * lap, the same bits in the damped and the interior
 * kernel; the layer and the point source follow once per row (emit_dwave_row). */
static void emit_dwave_point(const char *centre, const char *lap, fdt_sb *b)
{
    fdt_sb_printf(b, "res[v] = (real)2 * %s - pv[v] + cv[v] * %s;", centre, lap);
}

/* dwave's per-thread part of the layer (DWAVE_THREAD, after every HIP family's i0 and j0, in
 * the damped kernel): the damping along x of the thread's VEC outputs and (layer=branch)
 * whether they touch the layer, the same at every row and plane it computes. A thread's
 * outputs past the grid's x extent are computed, never stored: their eta reads stay in the x
 * part of the array. */
static void emit_dwave_thread(const fdt_config *c, fdt_sb *b)
{
    int branch = c->layer == FDT_LAYER_BRANCH;
    fdt_sb_printf(b, "// dwave: this thread's x damping%s\n"
                     "    real gxv[VEC];\n#pragma unroll\n    for (int v = 0; v < VEC; ++v)\n"
                     "        gxv[v] = %s;%s",
                  branch ? " and whether its x run touches the layer" : "",
                  c->eta == FDT_ETA_ARRAY ? "eta[min(" HIP_X ", gnx - 1)]"
                                          : "damping1(" HIP_X ", gnx)",
                  branch ? "\n    const int lay_x = in_layer_run(i0 + gx - R, VEC, gnx);" : "");
}

/* dwave's end of an output row (DWAVE_ROW, after every HIP family's loop over the row's VEC
 * points): in the damped kernel each point where g > 0 becomes (res + g pv) / (1 + g), which
 * is (2 p - (1 - g) p_prev + c2 L) / (1 + g); where g = 0 it keeps the interior kernel's bits.
 * g = gx + (gy + gz), as the C dialect sums it. layer=branch does it only where the thread's
 * row touches the layer (a test of the row, not of each point: x's part once per thread,
 * DWAVE_THREAD; y's and z's per row); layer=select in every row, with no branch, which keeps
 * a plane's rows one block of code for the compiler to schedule (an H200 ran the damped step
 * 3-7% faster so, bench/hybrid_h200/run7). Then the point source at global padded (si, sj,
 * sk), also tested by row first. ind: the indentation of the lines after the first. */
static void emit_dwave_row(const fdt_config *c, int interior, int ind, fdt_sb *b)
{
    fdt_sb_puts(b, "// dwave: the absorbing layer and the point source, once per row\n");
    if (!interior) {
        if (c->layer == FDT_LAYER_SELECT)
            fdt_sb_printf(b, "%*s{  // layer=select: every row\n", ind, "");
        else
            fdt_sb_printf(b, "%*sif (lay_x | in_layer1(%s, gny) | in_layer1(%s, gnz)) {\n", ind,
                          "", hip_y, hip_z);
        if (c->eta == FDT_ETA_ARRAY)
            fdt_sb_printf(b, "%*s    const real gyz = eta[gnx + %s] + eta[gnx + gny + %s];  "
                             "// eta=array\n", ind, "", hip_y, hip_z);
        else
            fdt_sb_printf(b, "%*s    const real gyz = damping1(%s, gny) + damping1(%s, gnz);\n",
                          ind, "", hip_y, hip_z);
        fdt_sb_printf(b, "#pragma unroll\n%*s    for (int v = 0; v < VEC; ++v) {\n"
                         "%*s        const real g = gxv[v] + gyz;\n"
                         "%*s        const real d = layer_div(res[v] + g * pv[v], (real)1 + g);\n"
                         "%*s        res[v] = g > (real)0 ? d : res[v];  // the layer\n"
                         "%*s    }\n%*s}\n", ind, "", ind, "", ind, "", ind, "", ind, "", ind, "");
    }
    fdt_sb_printf(b, "%*sif (k + gz == sk && j0 + t + gy == sj)\n#pragma unroll\n"
                     "%*s    for (int v = 0; v < VEC; ++v)\n"
                     "%*s        if (i0 + v + gx == si)\n"
                     "%*s            res[v] += src;  // point source", ind, "", ind, "", ind, "",
                  ind, "");
}

static void emit_combine(const fdt_problem *p, fdt_sb *b)
{
    if (p->op == FDT_OP_DWAVE) {
        emit_dwave_point("c", "(sx * dx + sy * dy + sz * dz)", b);
        return;
    }
    switch (p->op) {
    case FDT_OP_D2X: fdt_sb_puts(b, "res[v] = sx * dx;"); break;
    case FDT_OP_D2Y: fdt_sb_puts(b, "res[v] = sy * dy;"); break;
    case FDT_OP_D2Z: fdt_sb_puts(b, "res[v] = sz * dz;"); break;
    case FDT_OP_LAP: fdt_sb_puts(b, "res[v] = sx * dx + sy * dy + sz * dz;"); break;
    default:
        fdt_sb_puts(b, "res[v] = (real)2 * c - pv[v] + cv[v] * (sx * dx + sy * dy + sz * dz);\n"
                       "                if (k == sk && j0 + t == sj && i0 + v == si)\n"
                       "                    res[v] += src;  // point source");
    }
}

static void emit_banner(const fdt_problem *p, const fdt_config *c, const fdt_layout *l,
                        int runtime_dims, fdt_sb *b)
{
    char shown[FDT_CONFIG_DISPLAY_MAX];
    fdt_config_display(c, shown, sizeof shown);
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    static const char *what[FDT_OP_COUNT] = {
        "out = sx * d2(in)/dx2",
        "out = sy * d2(in)/dy2",
        "out = sz * d2(in)/dz2",
        "out = sx d2/dx2 + sy d2/dy2 + sz d2/dz2 of in (one pass)",
        "p_next = 2 p - p_prev + c2 * (sx d2/dx2 + sy d2/dy2 + sz d2/dz2)(p) + src at (si,sj,sk)",
        "p_next = (2 p - (1 - g) p_prev + c2 * (sx d2/dx2 + sy d2/dy2 + sz d2/dz2)(p)) / (1 + g) "
        "+ src, g the absorbing layer's damping",
    };
    fdt_sb_printf(b, "// Generated by fdtune %s (generator %s). Do not edit: regenerate.\n",
                  FDTUNE_VERSION, fdt_gen_fingerprint());
    fdt_sb_printf(b, "// Operator %s, radius %d (order %d), %s: %s\n", fdt_op_name(p->op), p->R,
                  2 * p->R, fdt_prec_name(p->prec), what[p->op]);
    fdt_sb_printf(b, "// Config: %s\n", shown); /* every parameter: what a person reads */
    fdt_sb_puts(b, "// Layout: halo-padded arrays, pos = i + line*j + slice*k over padded "
                   "coordinates (interior\n// starts at R on every axis); pointers point at "
                   "padded (0,0,0). Writes rows [jbeg, jend).\n");
    if (runtime_dims)
        fdt_sb_puts(b, "// The grid and the strides are arguments: one kernel serves any grid.\n");
    else
        fdt_sb_printf(b, "// Grid %lldx%lldx%lld baked in (align %d: line %lld, slice %lld): "
                         "this kernel serves that grid only.\n", (long long)p->nx,
                      (long long)p->ny, (long long)p->nz, l->align, (long long)l->line,
                      (long long)l->slice);
    fdt_sb_printf(b, "// Block (%d, %d, %d); each thread computes %d x %d points (x, y)", c->bx,
                  c->by, c->bz, c->vec, c->tile);
    if (c->nw)
        fdt_sb_printf(b, " in each of %d z planes", c->nw);
    fdt_sb_puts(b, ".\n");
}

struct fdt_tpl_vars {
    fdt_tpl_var v[64];
    size_t n;
    int full; /* a variable did not fit: rendering fails rather than miss it */
    int oom;  /* a value could not be allocated: likewise */
};
typedef fdt_tpl_vars vars;

/* Adds a variable that owns value (NULL: out of memory). */
static void add_var(vars *vs, const char *name, char *value)
{
    if (!value)
        vs->oom = 1;
    if (!value || vs->n == sizeof vs->v / sizeof vs->v[0]) {
        vs->full |= value != NULL;
        free(value);
        return;
    }
    vs->v[vs->n].name = name;
    vs->v[vs->n].value = value;
    vs->n++;
}

static void setv(vars *vs, const char *name, const char *fmt, ...) FDT_PRINTF(3, 4);
static void setv(vars *vs, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *value = fdt_sb_vformat(fmt, ap);
    va_end(ap);
    add_var(vs, name, value);
}

static void setb(vars *vs, const char *name, int cond) { setv(vs, name, "%d", cond ? 1 : 0); }

static void free_vars(vars *vs)
{
    for (size_t i = 0; i < vs->n; i++)
        free(vs->v[i].value);
}

static void setsb(vars *vs, const char *name, fdt_sb *b)
{
    if (b->oom) {
        fdt_sb_free(b);
        add_var(vs, name, NULL);
        return;
    }
    add_var(vs, name, fdt_sb_take(b));
}

static int valid_name(const char *s)
{
    if (!s || !*s || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

/* dwave's absorbing layer in both dialects' templates: its width (ABS_W), strength (ABS_S)
 * and 1 / W (ABS_INV_W) as literals of the precision, and how the damping is had (ETA_FORM,
 * for a comment). */
static void layer_vars(const fdt_problem *p, const fdt_config *c, vars *vs)
{
    setv(vs, "ABS_W", "%d", p->absorb_w);
    fdt_sb b;
    fdt_sb_init(&b);
    literal(&b, p->absorb_s, p->prec);
    setsb(vs, "ABS_S", &b);
    fdt_sb_init(&b);
    literal(&b, 1.0L / p->absorb_w, p->prec);
    setsb(vs, "ABS_INV_W", &b);
    setv(vs, "ETA_FORM", "%s", c->eta == FDT_ETA_ARRAY ? "read from the eta array"
                                                       : "computed from the distance");
}

/* dwave's variables (DWAVE set): the grid's global extents and the box's in DIMS (nx, ny, nz
 * are the box's), the absorbing layer's constants, and in the damped kernel (interior 0) the
 * block skip of the hole after BLOCK_INDEX; the interior kernel (NAME_int) is rendered after
 * the damped one in the same source, without the banner and the runtime include. */
static void dwave_vars(const fdt_problem *p, const fdt_config *c, const fdt_layout *lay,
                       int runtime_dims, int interior, vars *vs)
{
    int dwave = p->op == FDT_OP_DWAVE;
    setb(vs, "DWAVE", dwave);
    setb(vs, "DAMPED", dwave && !interior);
    setb(vs, "INT_KERNEL", interior);
    /* the thread's x slot (TX an int expression, TXU where the template indexes with
     * threadIdx.x's own type): the damped kernel's turns with its block row (prelude.hip
     * layer_slot_x); every other kernel's text stays what it was */
    setv(vs, "TX", "%s", dwave && !interior ? "txl" : "(int)threadIdx.x");
    setv(vs, "TXU", "%s", dwave && !interior ? "txl" : "threadIdx.x");
    if (!dwave)
        return;
    const char *box = "    const int nx = bnx, ny = bny, nz = bnz;  // this launch's box\n";
    if (runtime_dims)
        setv(vs, "DIMS", "%s", box);
    else
        setv(vs, "DIMS",
             "    // the grid this kernel was generated for (gnx, gny, gnz) and its strides\n"
             "    constexpr int gnx = %lld, gny = %lld, gnz = %lld, line = %lld;\n"
             "    constexpr long long slice = %lldLL;\n%s",
             (long long)p->nx, (long long)p->ny, (long long)p->nz, (long long)lay->line,
             (long long)lay->slice, box);
    layer_vars(p, c, vs);
    fdt_sb b;
    fdt_sb_init(&b);
    emit_dwave_point("cc[v]", "acc[(u + Q - RZ) % Q][t][v]", &b);
    setsb(vs, "STEP_Q", &b);
    fdt_sb_init(&b);
    emit_dwave_row(c, interior, 12, &b);
    setsb(vs, "DWAVE_ROW", &b);
    fdt_sb_init(&b);
    emit_dwave_thread(c, &b);
    setsb(vs, "DWAVE_THREAD", &b);
}

/* The hole's block skip of the damped dwave kernel: a block whose whole output tile (bx*vec x
 * by*tile x bz*max(nw, 1), box-local interior coordinates) lies in the hole returns. */
static void hole_skip(const fdt_config *c, fdt_sb *b)
{
    long long ext[3];
    static const fdt_gen_target hip = {FDT_DIALECT_HIP};
    fdt_gen_deploy_ext(&hip, c, ext);
    fdt_sb_printf(b, "\n    // the hole (box-local [hx0,hx1) x [hy0,hy1) x [hz0,hz1)) is another "
                     "launch's: a block whose\n    // outputs all lie in it returns (the host "
                     "aligns the hole to the blocks)\n"
                     "    if (bi * %lld >= hx0 && (bi + 1) * %lld <= hx1 && jbeg - R + bj * %lld "
                     ">= hy0 &&\n        jbeg - R + (bj + 1) * %lld <= hy1 && bk * %lld >= hz0 "
                     "&& (bk + 1) * %lld <= hz1)\n        return;",
                  ext[0], ext[0], ext[1], ext[1], ext[2], ext[2]);
}

/* The variables of the prelude and of every family's template: the banner, names, types,
 * radii and block constants, the helpers' code (d2, load/put/store packing) and which of the
 * optional helpers family f uses, the faults, the operator's axes, the kernel's parameters and
 * its output. */
static int shared_vars(const fdt_gen_family *f, const fdt_problem *p, const fdt_config *c,
                       const fdt_layout *lay, const char *name, const fdt_gen_opts *opts,
                       int interior, vars *vs, fdt_err *e)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    const int V = c->vec;
    fdt_sb b;
    fdt_sb_init(&b);
    emit_banner(p, c, lay, opts->runtime_dims, &b);
    setsb(vs, "BANNER", &b);
    dwave_vars(p, c, lay, opts->runtime_dims, interior, vs); /* dwave's DIMS too */
    if (p->op != FDT_OP_DWAVE && opts->runtime_dims)
        setv(vs, "DIMS", "%s", "");
    else if (p->op != FDT_OP_DWAVE)
        setv(vs, "DIMS",
             "    // the grid this kernel was generated for\n"
             "    constexpr int nx = %lld, ny = %lld, nz = %lld, line = %lld;\n"
             "    constexpr long long slice = %lldLL;\n",
             (long long)p->nx, (long long)p->ny, (long long)p->nz, (long long)lay->line,
             (long long)lay->slice);
    setv(vs, "NAME", "%s", name);
    setv(vs, "NS", "%s_k", name);
    setv(vs, "REAL", "%s", real_name(p->prec));
    setv(vs, "REALV", "%s%d", real_name(p->prec), V);
    setv(vs, "R", "%d", p->R);
    setv(vs, "ORDER", "%d", 2 * p->R);
    setv(vs, "RX", "%d", r[0]);
    setv(vs, "RY", "%d", r[1]);
    setv(vs, "RZ", "%d", r[2]);
    setv(vs, "VEC", "%d", V);
    setv(vs, "TILE", "%d", c->tile);
    setv(vs, "BX", "%d", c->bx);
    setv(vs, "BY", "%d", c->by);
    setv(vs, "BZ", "%d", c->bz);
    setv(vs, "HX", "%d", (r[0] + V - 1) / V * V);
    setb(vs, "VECTOR", V > 1);
    setb(vs, "SHARED", f->shared);
    setb(vs, "ASYNC", f->async);
    setb(vs, "NT", c->nt);
    setb(vs, "HAS_X", r[0] > 0);
    setb(vs, "HAS_Y", r[1] > 0);
    setb(vs, "HAS_Z", r[2] > 0);
    setb(vs, "HAS_XY", r[0] > 0 || r[1] > 0);
    setb(vs, "MBAR", c->mbar);
    setb(vs, "BULK", c->bulk);
    /* a kernel of runtime dims (an export's, for any grid) keeps its guards */
    setb(vs, "GUARD", !c->guard || opts->runtime_dims);
    setb(vs, "WAVE", fdt_op_is_step(p->op));
    setb(vs, "FAULT", c->fault >= FDT_FAULT_PLANE); /* coef is d2's */
    setb(vs, "FAULT_PLANE", c->fault == FDT_FAULT_PLANE);
    setb(vs, "FAULT_HALO", c->fault == FDT_FAULT_HALO);
    setb(vs, "FAULT_OOB", c->fault == FDT_FAULT_OOB);
    setb(vs, "FAULT_HANG", c->fault == FDT_FAULT_HANG);
    static const char comp[] = "xyzw";
    fdt_sb_init(&b);
    for (int q = 0; q < V; q++)
        fdt_sb_printf(&b, "%sd[%d] = t.%c;", q ? " " : "", q, comp[q]);
    setsb(vs, "UNPACK", &b);
    fdt_sb_init(&b);
    for (int q = 0; q < V; q++)
        fdt_sb_printf(&b, "%st.%c = v[%d];", q ? " " : "", comp[q], q);
    setsb(vs, "PACK", &b);
    if (c->lb)
        setv(vs, "LAUNCH_BOUNDS", "__launch_bounds__(%d)\n", c->lb);
    else
        setv(vs, "LAUNCH_BOUNDS", "%s", "");
    const char *o = fdt_orders[c->order];
    static const char *axis_var[3] = {"bi", "bj", "bk"};
    fdt_sb_init(&b);
    fdt_sb_printf(&b,
                  "// grid index order %s: blockIdx.x walks %c, .y walks %c, .z walks %c\n"
                  "    const int %s = (int)blockIdx.x, %s = (int)blockIdx.y, %s = "
                  "(int)blockIdx.z;", o, o[0], o[1], o[2], axis_var[o[0] - 'x'],
                  axis_var[o[1] - 'x'], axis_var[o[2] - 'x']);
    if (p->op == FDT_OP_DWAVE && !interior)
        hole_skip(c, &b);
    setsb(vs, "BLOCK_INDEX", &b);
    fdt_sb_init(&b);
    emit_params(p, c, name, opts->runtime_dims, &b);
    setsb(vs, "PARAMS", &b);
    fdt_sb_init(&b);
    emit_combine(p, &b);
    setsb(vs, "COMBINE", &b);
    fdt_sb_init(&b);
    int rc = emit_stencil(p, c, &b, e);
    if (rc == 0 && f->weights)
        rc = emit_weights(p, c, &b, e);
    setsb(vs, "STENCIL", &b);
    return rc;
}

/* direct: the centre value c is read by wave's update and by the z stencil (from the row
 * loads; the windowed families take it from the window). */
static void direct_vars(const fdt_problem *p, const fdt_config *c, vars *vs)
{
    (void)c;
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    setb(vs, "NEED_C", fdt_op_is_step(p->op) || r[2] > 0);
}

/* window, tile and ring: the register window's length and how far it loads ahead. */
static void window_vars(const fdt_problem *p, const fdt_config *c, vars *vs)
{
    (void)p;
    setv(vs, "NW", "%d", c->nw);
    setv(vs, "PF", "%d", c->pf);
}

/* The ring families' (ring, stream): the window's, the cache operator and L2 prefetch hint of
 * their copies, and whether their fill (ring_fill.hip) also queues wave's centre values (and
 * how many inputs it queues per output row). */
static void ring_fill_vars(const fdt_problem *p, const fdt_config *c, int wave_centre, vars *vs)
{
    window_vars(p, c, vs);
    /* 16-byte copies may bypass L1 (the ring is read from shared memory only) */
    setv(vs, "CP_CACHE", "%s", c->vec * fdt_prec_size(p->prec) == 16 ? "cg" : "ca");
    if (c->l2pf)
        setv(vs, "CP_L2", ".L2::%dB", c->l2pf);
    else
        setv(vs, "CP_L2", "%s", "");
    setb(vs, "WAVE_CENTRE", wave_centre);
    /* wave's point-wise inputs queued per output row: p_prev and c2, and the centre */
    setv(vs, "QUEUED", "%d", !fdt_op_is_step(p->op) ? 0 : wave_centre ? 3 : 2);
}

/* ring: wave reads the centre from the ring's tiles, which still hold plane k. */
static void ring_vars(const fdt_problem *p, const fdt_config *c, vars *vs)
{
    ring_fill_vars(p, c, 0, vs);
}

/* stream: wave's centre values are queued (no tile holds plane k when its output is
 * written); the centre weight's scale is the sum of the operator's scales. */
static void stream_vars(const fdt_problem *p, const fdt_config *c, vars *vs)
{
    ring_fill_vars(p, c, fdt_op_is_step(p->op), vs);
    if (c->mbar) /* the slot barriers' offset, where the geometry counts them (layout.c) */
        setv(vs, "BARS_AT", "%lld", (long long)fdt_gen_barriers_at(p, c));
    if (c->bulk) /* the ring's slot rows, where the geometry counts them (layout.c) */
        setv(vs, "TYS", "%lld", (long long)fdt_gen_slot_rows(p, c));
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    fdt_sb b;
    fdt_sb_init(&b);
    for (int d = 0; d < 3; d++)
        if (r[d] > 0)
            fdt_sb_printf(&b, "%ss%c", *fdt_sb_str(&b) ? " + " : "", "xyz"[d]);
    setsb(vs, "CENTRE_SCALE", &b);
}

const fdt_gen_family fdt_gen_families[] = {
    /* name, template, lds, window, shared (put), async (copy_async), weights, variables */
    {"direct", "direct.hip", 0, 0, 0, 0, 0, direct_vars},
    {"window", "window.hip", 0, 1, 0, 0, 0, window_vars},
    {"tile", "tile.hip", 1, 1, 1, 0, 0, window_vars},
    {"ring", "ring.hip", 2, 1, 1, 1, 0, ring_vars},
    {"stream", "stream.hip", 3, 1, 1, 1, 1, stream_vars},
};
const size_t fdt_gen_family_count = sizeof fdt_gen_families / sizeof fdt_gen_families[0];

static int family_takes(const fdt_gen_family *f, const fdt_config *c)
{
    return c->lds == f->lds && (c->nw > 0) == f->window;
}

const fdt_gen_family *fdt_gen_family_of(const fdt_config *c, fdt_err *e)
{
    for (size_t i = 0; i < fdt_gen_family_count; i++)
        if (family_takes(&fdt_gen_families[i], c))
            return &fdt_gen_families[i];
    fdt_err_set(e, "generator: no kernel family generates lds=%d with nw=%d", c->lds, c->nw);
    return NULL;
}

/* Renders family f's template tpl for kernel `name` (interior: dwave's NAME_int) into out. */
static int render_family(const fdt_gen_family *f, const char *tpl, const fdt_problem *p,
                         const fdt_config *c, const fdt_layout *lay, const char *name,
                         const fdt_gen_opts *opts, int interior, fdt_sb *out, fdt_err *e)
{
    vars vs = {.n = 0};
    int rc = shared_vars(f, p, c, lay, name, opts, interior, &vs, e);
    f->vars(p, c, &vs);
    if (rc == 0 && vs.full)
        rc = fdt_err_set(e, "generator: more template variables than the table holds (%zu)",
                         sizeof vs.v / sizeof vs.v[0]);
    if (rc == 0 && vs.oom)
        rc = fdt_err_set(e, "generator: out of memory");
    if (rc == 0)
        rc = fdt_tpl_render(tpl, f->tpl, vs.v, vs.n, out, e);
    free_vars(&vs);
    return rc;
}

int fdt_gen_family_source(const fdt_gen_family *f, const fdt_problem *p, const fdt_config *c,
                          const char *name, const fdt_gen_opts *opts, fdt_sb *out, fdt_err *e)
{
    fdt_gen_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    fdt_layout lay;
    if (fdt_problem_check(p, e) || fdt_config_check(p, c, e) ||
        fdt_layout_make(p, c->align, &lay, e))
        return -1;
    if (!family_takes(f, c))
        return fdt_err_set(e, "generator: kernel family %s (lds=%d, nw %s) does not generate "
                              "lds=%d with nw=%d", f->name, f->lds, f->window ? ">= 1" : "= 0",
                           c->lds, c->nw);
    char defname[96];
    if (!name) {
        fdt_gen_kernel_name(p, c, defname, sizeof defname);
        name = defname;
    }
    if (!valid_name(name) || strlen(name) > 80)
        return fdt_err_set(e, "kernel name '%s': not a C identifier of at most 80 characters",
                           name);
    const char *tpl = fdt_tpl_text(f->tpl);
    if (!tpl)
        return fdt_err_set(e, "generator: template %s of kernel family %s is not embedded",
                           f->tpl, f->name);
    /* dwave: the damped kernel, then the interior kernel NAME_int in the same source */
    int rc = render_family(f, tpl, p, c, &lay, name, opts, 0, out, e);
    if (rc == 0 && p->op == FDT_OP_DWAVE) {
        char iname[96];
        fdt_gen_dwave_interior_name(name, iname, sizeof iname);
        fdt_sb_puts(out, "\n");
        rc = render_family(f, tpl, p, c, &lay, iname, opts, 1, out, e);
    }
    return rc;
}

/* ------------------------------------------------------------------ the C dialect */

/* The C dialect's kernel families (templates/cpu_<name>.c), by the config's blk. */
static const char *const c_families[] = {"loops", "blocked"};

/* d2 of cpu_prelude.c: the second derivative at p along stride s, weights folded by pairs
 * (fault=coef: the weight of offset +1 has the wrong sign). */
static int c_emit_d2(const fdt_problem *p, const fdt_config *c, fdt_sb *b, fdt_err *e)
{
    long double coef[FDT_R_MAX + 1];
    if (fdt_fd_coeffs(p->R, coef, e))
        return -1;
    literal(b, coef[0], p->prec);
    fdt_sb_puts(b, " * p[0]");
    for (int r = 1; r <= p->R; r++) {
        fdt_sb_puts(b, " + ");
        literal(b, coef[r], p->prec);
        fdt_sb_printf(b, " * (p[-%d * s] %c p[%d * s])", r,
                      r == 1 && c->fault == FDT_FAULT_COEF ? '-' : '+', r);
    }
    return 0;
}

/* An argument's name and its type in the typed kernel (the grid's strides are dim_line and
 * dim_slice there: the kernels' own line and slice are ptrdiff_t copies of them). */
static void c_arg(fdt_arg a, int dwave, const char *real, const char **name, char *type,
                  size_t n)
{
    static const char *const names[FDT_ARG_ETA + 1] = {
        "out", "in", "prev", "c2", "nx", "ny", "nz", "dim_line", "dim_slice", "jbeg", "jend",
        "sx", "sy", "sz", "si", "sj", "sk", "src", "eta"};
    static const char *const global[3] = {"gnx", "gny", "gnz"}; /* dwave: nx is the box's */
    if (a >= FDT_ARG_BNX)
        *name = box_arg_name(a);
    else if (dwave && a >= FDT_ARG_NX && a <= FDT_ARG_NZ)
        *name = global[a - FDT_ARG_NX];
    else
        *name = names[a];
    if (a == FDT_ARG_OUT)
        snprintf(type, n, "%s *", real);
    else if (a <= FDT_ARG_C2 || a == FDT_ARG_ETA)
        snprintf(type, n, "const %s *", real);
    else if (a == FDT_ARG_SLICE)
        snprintf(type, n, "long long ");
    else if (a == FDT_ARG_SX || a == FDT_ARG_SY || a == FDT_ARG_SZ || a == FDT_ARG_SRC)
        snprintf(type, n, "%s ", real);
    else
        snprintf(type, n, "int ");
}

/* PARAMS (the typed kernel's parameters), UNPACK (the entry point's copies of its arguments)
 * and ARGS (the typed kernel's call), all in fdt_gen_kernel_args' order. */
static void c_args_vars(const fdt_problem *p, int runtime_dims, vars *vs)
{
    fdt_arg args[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(p->op, runtime_dims, args);
    const char *real = real_name(p->prec);
    fdt_sb params, unpack, call;
    fdt_sb_init(&params);
    fdt_sb_init(&unpack);
    fdt_sb_init(&call);
    for (int i = 0; i < n; i++) {
        const char *name;
        char type[32];
        c_arg(args[i], p->op == FDT_OP_DWAVE, real, &name, type, sizeof type);
        int ptr = args[i] <= FDT_ARG_C2 || args[i] == FDT_ARG_ETA;
        if (i)
            fdt_sb_puts(&params, args[i] == FDT_ARG_NX || args[i] == FDT_ARG_JBEG ||
                                         args[i] == FDT_ARG_BNX ? ",\n    " : ", ");
        fdt_sb_printf(&params, "%s%s%s", type, ptr ? "restrict " : "", name);
        fdt_sb_printf(&unpack, "%s    %s%s;\n    __builtin_memcpy(&%s, args[%d], sizeof %s);",
                      i ? "\n" : "", type, name, name, i, name);
        fdt_sb_printf(&call, "%s%s", i ? ", " : "", name);
    }
    setsb(vs, "PARAMS", &params);
    setsb(vs, "UNPACK", &unpack);
    setsb(vs, "ARGS", &call);
}

/* COMBINE, SCALARS and SCALAR_DECLS of cpu_prelude.c: the operator's scaled terms. */
static void c_scalar_vars(const fdt_problem *p, vars *vs)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    fdt_sb combine, scalars, decls;
    fdt_sb_init(&combine);
    fdt_sb_init(&scalars);
    fdt_sb_init(&decls);
    for (int d = 0; d < 3; d++) {
        if (!r[d])
            continue;
        const char *sep = *fdt_sb_str(&scalars) ? ", " : "";
        fdt_sb_printf(&combine, "%ss%c * d%c", *sep ? " + " : "", "xyz"[d], "xyz"[d]);
        fdt_sb_printf(&scalars, "%ss%c", sep, "xyz"[d]);
        fdt_sb_printf(&decls, "%s%s s%c", sep, real_name(p->prec), "xyz"[d]);
    }
    setsb(vs, "COMBINE", &combine);
    setsb(vs, "SCALARS", &scalars);
    setsb(vs, "SCALAR_DECLS", &decls);
}

static void c_banner(const fdt_problem *p, const fdt_config *c, const fdt_layout *l,
                     int runtime_dims, vars *vs)
{
    static const fdt_gen_target cpu = {FDT_DIALECT_C};
    char shown[FDT_CONFIG_DISPLAY_MAX];
    fdt_config_display_for(&cpu, c, shown, sizeof shown);
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_printf(&b, "// Generated by fdtune %s (generator %s). Do not edit: regenerate.\n",
                  FDTUNE_VERSION, fdt_gen_fingerprint());
    fdt_sb_printf(&b, "// Operator %s, radius %d (order %d), %s; C11 with OpenMP 4.5, kernel "
                      "family %s.\n// Config: %s\n", fdt_op_name(p->op), p->R, 2 * p->R,
                  fdt_prec_name(p->prec), c_families[c->blk], shown);
    if (runtime_dims)
        fdt_sb_puts(&b, "// The grid and the strides are arguments: one kernel serves any grid.");
    else
        fdt_sb_printf(&b, "// Grid %lldx%lldx%lld baked in (align %d: line %lld, slice %lld): "
                          "this kernel serves that grid only.", (long long)p->nx,
                      (long long)p->ny, (long long)p->nz, l->align, (long long)l->line,
                      (long long)l->slice);
    setsb(vs, "BANNER", &b);
}

/* The grid's variables: constants, or with runtime_dims the typed kernel's arguments. */
static void c_grid_vars(const fdt_problem *p, const fdt_config *c, const fdt_layout *l,
                        int rt, vars *vs)
{
    /* dwave: the loops run over the launch's box, whose extents are arguments */
    const int box = p->op == FDT_OP_DWAVE, var = rt || box;
    if (box) {
        setv(vs, "NX", "bnx");
        setv(vs, "NZ", "bnz");
    }
    if (rt) {
        if (!box) {
            setv(vs, "NX", "nx");
            setv(vs, "NZ", "nz");
        }
        setv(vs, "LINE", "dim_line");
        setv(vs, "SLICE", "dim_slice");
    } else {
        if (!box) {
            setv(vs, "NX", "%lld", (long long)p->nx);
            setv(vs, "NZ", "%lld", (long long)p->nz);
        }
        setv(vs, "LINE", "%lld", (long long)l->line);
        setv(vs, "SLICE", "%lld", (long long)l->slice);
    }
    /* blocked tiles: 0 is the whole extent */
    static const char *const grid_axis[3] = {"nx", "ny", "nz"}, *const box_axis[3] = {
        "bnx", "bny", "bnz"};
    const char *const *axis = box ? box_axis : grid_axis;
    const int64_t ext[3] = {p->nx, p->ny, p->nz};
    const int tile[3] = {c->tx, c->ty, c->tz};
    static const char *const tname[3] = {"TX", "TY", "TZ"};
    for (int d = 0; d < 3; d++) {
        if (tile[d] && (var || tile[d] < ext[d]))
            setv(vs, tname[d], "%d", tile[d]);
        else if (var)
            setv(vs, tname[d], "%s", axis[d]);
        else
            setv(vs, tname[d], "%lld", (long long)ext[d]);
    }
    /* the strip buffers: xs values, or whole rows of at most FDT_XS_WHOLE_MAX */
    int64_t xs = c->xs;
    if (!xs)
        xs = var || p->nx > FDT_XS_WHOLE_MAX ? FDT_XS_WHOLE_MAX : (p->nx + 15) / 16 * 16;
    setv(vs, "XS", "%lld", (long long)xs);
    if (rt)
        setv(vs, "HALO_AT", "%d * (ptrdiff_t)dim_slice + %d * (ptrdiff_t)dim_line + %d",
             p->R - 1, p->R, p->R);
    else
        setv(vs, "HALO_AT", "%d * (ptrdiff_t)%lld + %d * (ptrdiff_t)%lld + %d", p->R - 1,
             (long long)l->slice, p->R, (long long)l->line, p->R);
}

/* dwave's variables of the C dialect (DWAVE set): the box's extents as the loops' bounds, the
 * box (BOX: its origin, the grid's extents, the eta array, the hole; the source point made
 * box-local), and in the damped kernel (interior 0) the absorbing layer's damping along x
 * (EX) and along y and z (EYZ), from the distance or the eta array. */
static void c_dwave_vars(const fdt_problem *p, const fdt_config *c, const char *name, int rt,
                         int interior, vars *vs)
{
    int dwave = p->op == FDT_OP_DWAVE;
    setb(vs, "DWAVE", dwave);
    setb(vs, "DAMPED", dwave && !interior);
    setb(vs, "INT_KERNEL", interior);
    if (!dwave)
        return;
    char g[3][24];
    const int64_t n[3] = {p->nx, p->ny, p->nz};
    for (int d = 0; d < 3; d++) {
        if (rt)
            snprintf(g[d], sizeof g[d], "gn%c", "xyz"[d]);
        else
            snprintf(g[d], sizeof g[d], "%lld", (long long)n[d]);
    }
    setv(vs, "BOX", "const %s_k_box b = {eta, gx, gy, gz, %s, %s, %s, hx0, hx1, hy0, hy1, hz0, "
                    "hz1};\n    si -= gx, sj -= gy, sk -= gz;  // the source, box-local",
         name, g[0], g[1], g[2]);
    layer_vars(p, c, vs);
    if (c->eta == FDT_ETA_ARRAY) {
        setv(vs, "EX", "b.eta[i - %d + b.gx]", p->R);
        setv(vs, "EYZ", "b.eta[b.gnx + j - %d + b.gy] + b.eta[b.gnx + b.gny + k - %d + b.gz]",
             p->R, p->R);
    } else {
        setv(vs, "EX", "%s_k_damping1(i - %d + b.gx, b.gnx)", name, p->R);
        setv(vs, "EYZ", "%s_k_damping1(j - %d + b.gy, b.gny) + %s_k_damping1(k - %d + b.gz, "
                        "b.gnz)", name, p->R, name, p->R);
    }
}

/* Every variable of cpu_prelude.c, the family's template and cpu_entry.c. */
static int c_vars(const fdt_problem *p, const fdt_config *c, const fdt_layout *l,
                  const char *name, int rt, int interior, vars *vs, fdt_err *e)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    static const char *const binds[] = {"close", "spread"}, *const scheds[] = {"static", "dynamic"};
    c_banner(p, c, l, rt, vs);
    setv(vs, "NAME", "%s", name);
    setv(vs, "NS", "%s_k", name);
    setv(vs, "REAL", "%s", real_name(p->prec));
    setv(vs, "UBITS", "%s", c_ubits_name(p->prec));
    setv(vs, "R", "%d", p->R);
    setv(vs, "RX", "%d", r[0]);
    setv(vs, "RY", "%d", r[1]);
    setv(vs, "RZ", "%d", r[2]);
    setb(vs, "HAS_X", r[0] > 0);
    setb(vs, "HAS_Y", r[1] > 0);
    setb(vs, "HAS_Z", r[2] > 0);
    setb(vs, "WAVE", fdt_op_is_step(p->op));
    setv(vs, "SIMD", c->simd ? " simdlen(%d)" : "%.0d", c->simd);
    setv(vs, "UJ", "%d", c->uj);
    setv(vs, "UK", "%d", c->uk);
    setb(vs, "NT", c->nt);
    setb(vs, "SPLIT", c->twopass);
    setv(vs, "THREADS", c->thr ? " num_threads(%d)" : "%.0d", c->thr);
    setv(vs, "BIND", "%s", binds[c->bind]);
    setv(vs, "SCHED", c->chunk ? "%s, %d" : "%s%.0d", scheds[c->sched], c->chunk);
    setb(vs, "ORDER_KJ", c->loop == 0);
    setb(vs, "ORDER_ZY", c->loop == 0);
    setb(vs, "PF", c->pfd > 0);
    setv(vs, "PFD", "%d", c->pfd);
    setb(vs, "FAULT_PLANE", c->fault == FDT_FAULT_PLANE);
    setb(vs, "FAULT_HALO", c->fault == FDT_FAULT_HALO);
    setb(vs, "FAULT_OOB", c->fault == FDT_FAULT_OOB);
    setb(vs, "FAULT_HANG", c->fault == FDT_FAULT_HANG);
    c_grid_vars(p, c, l, rt, vs);
    c_dwave_vars(p, c, name, rt, interior, vs);
    c_args_vars(p, rt, vs);
    c_scalar_vars(p, vs);
    fdt_sb b;
    fdt_sb_init(&b);
    int rc = c_emit_d2(p, c, &b, e);
    setsb(vs, "D2", &b);
    return rc;
}

/* Renders the embedded template tpl with vs (then frees them). */
static int render_vars(const char *tpl_name, vars *vs, fdt_sb *out, fdt_err *e)
{
    const char *tpl = fdt_tpl_text(tpl_name);
    int rc = 0;
    if (!tpl)
        rc = fdt_err_set(e, "generator: template %s is not embedded", tpl_name);
    else if (vs->full)
        rc = fdt_err_set(e, "generator: more template variables than the table holds (%zu)",
                         sizeof vs->v / sizeof vs->v[0]);
    else if (vs->oom)
        rc = fdt_err_set(e, "generator: out of memory");
    else
        rc = fdt_tpl_render(tpl, tpl_name, vs->v, vs->n, out, e);
    free_vars(vs);
    return rc;
}

/* fdt_gen_source in the C dialect: the family of blk (cpu_loops.c, cpu_blocked.c). */
static int c_source(const fdt_problem *p, const fdt_config *c, const char *name,
                    const fdt_gen_opts *opts, fdt_sb *out, fdt_err *e)
{
    static const fdt_gen_target cpu = {FDT_DIALECT_C};
    fdt_layout lay;
    if (fdt_config_check_for(&cpu, p, c, e) || fdt_layout_make(p, c->align, &lay, e))
        return -1;
    char defname[96];
    if (!name) {
        fdt_gen_kernel_name(p, c, defname, sizeof defname);
        name = defname;
    }
    if (!valid_name(name) || strlen(name) > 80)
        return fdt_err_set(e, "kernel name '%s': not a C identifier of at most 80 characters",
                           name);
    char tpl[32];
    snprintf(tpl, sizeof tpl, "cpu_%s.c", c_families[c->blk]);
    /* dwave: the damped kernel, then the interior kernel NAME_int in the same source */
    char iname[96];
    fdt_gen_dwave_interior_name(name, iname, sizeof iname);
    int rc = 0;
    for (int interior = 0; rc == 0 && interior <= (p->op == FDT_OP_DWAVE); interior++) {
        vars vs = {.n = 0};
        if (interior)
            fdt_sb_puts(out, "\n");
        if (c_vars(p, c, &lay, interior ? iname : name, opts && opts->runtime_dims, interior,
                   &vs, e)) {
            free_vars(&vs);
            return -1;
        }
        rc = render_vars(tpl, &vs, out, e);
    }
    return rc;
}

/* fdt_gen_util_source in the C dialect (templates/cpu_util.c). */
static int c_util_source(fdt_prec prec, fdt_sb *out, fdt_err *e)
{
    vars vs = {.n = 0};
    setv(&vs, "BANNER", "// fdtune %s CPU verification and timing helpers (%s): fill, poison, "
                        "compare, check_fill, gather, copy, flush.", FDTUNE_VERSION,
         fdt_prec_name(prec));
    setv(&vs, "NS", "fdt_util_%s", fdt_prec_name(prec));
    setv(&vs, "PREC", "%s", fdt_prec_name(prec));
    setv(&vs, "REAL", "%s", real_name(prec));
    setv(&vs, "UBITS", "%s", c_ubits_name(prec));
    return render_vars("cpu_util.c", &vs, out, e);
}

/* 0 when the generator emits t's dialect (its kernel families and verification kernels). */
static int dialect_check(const fdt_gen_target *t, fdt_err *e)
{
    FDT_ASSERT(t, "a source is generated for a target");
    switch (t->dialect) {
    case FDT_DIALECT_HIP: return 0;
    case FDT_DIALECT_C: return 0;
    case FDT_DIALECT_COUNT: break;
    }
    return fdt_err_set(e, "generator: source dialect %d is not one this generator emits",
                       (int)t->dialect);
}

int fdt_gen_source(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                   const char *name, const fdt_gen_opts *opts, fdt_sb *out, fdt_err *e)
{
    /* the problem's and config's own errors come first (e.g. lds without nw) */
    if (dialect_check(t, e) || fdt_problem_check(p, e) || fdt_config_check_for(t, p, c, e))
        return -1;
    /* dwave: a config that cannot run one of its deployment's boxes (a window deeper than a
     * W-thick slab, a face off the vectors) is refused here, before anything is compiled */
    fdt_deploy d;
    if (p->op == FDT_OP_DWAVE && fdt_gen_deploy(t, p, c, &d, e))
        return -1;
    if (t->dialect == FDT_DIALECT_C)
        return c_source(p, c, name, opts, out, e);
    const fdt_gen_family *f = fdt_gen_family_of(c, e);
    return f ? fdt_gen_family_source(f, p, c, name, opts, out, e) : -1;
}

int fdt_gen_util_source(const fdt_gen_target *t, fdt_prec prec, fdt_sb *out, fdt_err *e)
{
    if (dialect_check(t, e))
        return -1;
    if (t->dialect == FDT_DIALECT_C)
        return c_util_source(prec, out, e);
    const char *tpl = fdt_tpl_text("util.hip");
    if (!tpl)
        return fdt_err_set(e, "generator: template util.hip is not embedded");
    vars vs = {.n = 0};
    setv(&vs, "BANNER", "// fdtune %s verification kernels (%s): fill, poison, compare, gather.",
         FDTUNE_VERSION, fdt_prec_name(prec));
    setv(&vs, "PREC", "%s", fdt_prec_name(prec));
    setv(&vs, "REAL", "%s", real_name(prec));
    setv(&vs, "UBITS", "%s", prec == FDT_F64 ? "unsigned long long" : "unsigned int");
    int rc = fdt_tpl_render(tpl, "util.hip", vs.v, vs.n, out, e);
    free_vars(&vs);
    return rc;
}

/* Appends text to h's FNV-1a state normalised: per line, everything from "//" on dropped,
 * runs of white space made one space, the ends trimmed; empty lines dropped; each kept line
 * ends in a newline. The same normalisation as bench/sources_compare.py's. */
static uint64_t hash_normalised(uint64_t h, const char *text)
{
    while (*text) {
        const char *end = strchr(text, '\n');
        size_t len = end ? (size_t)(end - text) : strlen(text);
        const char *cut = text;
        while (cut < text + len && !(cut[0] == '/' && cut + 1 < text + len && cut[1] == '/'))
            cut++;
        int pending = 0, any = 0;
        for (const char *s = text; s < cut; s++) {
            unsigned char ch = (unsigned char)*s;
            if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f') {
                pending = any;
                continue;
            }
            if (pending)
                h = fdt_hash64(" ", 1, h);
            h = fdt_hash64(s, 1, h);
            pending = 0;
            any = 1;
        }
        if (any)
            h = fdt_hash64("\n", 1, h);
        text += len + (end != NULL);
    }
    return h;
}

int fdt_gen_source_hash(const fdt_problem *p, const fdt_config *c, const char *backend,
                        char *out, size_t n, fdt_err *e)
{
    /* the dialect of the backend's compiler: C for the CPU's, HIP for the GPUs' */
    const fdt_gen_target t = {!strcmp(backend, "cpu") ? FDT_DIALECT_C : FDT_DIALECT_HIP};
    fdt_sb src;
    fdt_sb_init(&src);
    if (fdt_gen_source(&t, p, c, NULL, NULL, &src, e)) {
        fdt_sb_free(&src);
        return -1;
    }
    uint64_t h = hash_normalised(FDT_HASH_SEED, fdt_sb_str(&src));
    int oom = src.oom;
    fdt_sb_free(&src);
    if (oom)
        return fdt_err_set(e, "generator: out of memory");
    const char *header = !strcmp(backend, "cuda")  ? fdt_gen_nvrtc_hip_header()
                         : !strcmp(backend, "hip") ? fdt_gen_amd_hip_header()
                                                   : NULL;
    if (header)
        h = hash_normalised(h, header);
    snprintf(out, n, "%016llx", (unsigned long long)h);
    return 0;
}
