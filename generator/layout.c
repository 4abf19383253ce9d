/* Whether a problem is valid (radius, grid, and that its arrays can be laid out), the array
 * layout (padding, base offset, allocation size), the seeds' effective-bandwidth byte count,
 * launch geometry (blocks per axis, grid-index order, y split) and the kernel argument order. Every size is computed with overflow checks: grids come from users. */
#include "fdt_gen.h"

#include <stdio.h>
#include <string.h>

static int mul_ok(int64_t a, int64_t b, int64_t limit, int64_t *out)
{
    if (a < 0 || b < 0 || (a && b > limit / a))
        return 0;
    *out = a * b;
    return *out <= limit;
}

int fdt_problem_check(const fdt_problem *p, fdt_err *e)
{
    if ((unsigned)p->op >= FDT_OP_COUNT)
        return fdt_err_set(e, "problem: invalid operator");
    if (p->R < FDT_R_MIN || p->R > FDT_R_MAX)
        return fdt_err_set(e, "R=%d is out of range (%d..%d, order of accuracy 2R)", p->R,
                           FDT_R_MIN, FDT_R_MAX);
    if (p->prec != FDT_F32 && p->prec != FDT_F64)
        return fdt_err_set(e, "problem: invalid precision");
    int64_t d[3] = {p->nx, p->ny, p->nz};
    for (int i = 0; i < 3; i++)
        if (d[i] < 1 || d[i] > FDT_DIM_MAX)
            return fdt_err_set(e, "grid: n%c=%lld is out of range (1..%lld)", "xyz"[i],
                               (long long)d[i], (long long)FDT_DIM_MAX);
    fdt_layout l;
    return fdt_layout_make(p, 1, &l, e);
}

int fdt_layout_make(const fdt_problem *p, int align, fdt_layout *l, fdt_err *e)
{
    memset(l, 0, sizeof *l);
    if (align < 1)
        return fdt_err_set(e, "layout: align=%d must be at least 1", align);
    l->R = p->R;
    l->align = align;
    l->nx = p->nx;
    l->ny = p->ny;
    l->nz = p->nz;
    l->esize = fdt_prec_size(p->prec);
    l->mx = p->nx + 2 * p->R;
    l->my = p->ny + 2 * p->R;
    l->mz = p->nz + 2 * p->R;
    l->line = (l->mx + align - 1) / align * align;
    l->offset = (align - p->R % align) % align;
    int64_t limit = FDT_ALLOC_MAX / (int64_t)l->esize, box;
    if (!mul_ok(l->line, l->my, limit, &l->slice) || !mul_ok(l->slice, l->mz, limit, &box) ||
        box + l->offset + l->line > limit) {
        char key[128];
        fdt_problem_format(p, key, sizeof key);
        return fdt_err_set(e, "grid %lldx%lldx%lld: one array would need more than %lld GiB "
                              "(%s)", (long long)p->nx, (long long)p->ny, (long long)p->nz,
                           (long long)(FDT_ALLOC_MAX >> 30), key);
    }
    /* One spare row after the box: whole-vector x reads of the last halo row stay inside. */
    l->elems = l->offset + box + l->line;
    return 0;
}

double fdt_effective_bytes(const fdt_problem *p)
{
    double nx = (double)p->nx, ny = (double)p->ny, nz = (double)p->nz, R = p->R;
    double n = nx * ny * nz, halo;
    switch (p->op) {
    case FDT_OP_D2X: halo = 2 * R * ny * nz; break;
    case FDT_OP_D2Y: halo = 2 * R * nx * nz; break;
    case FDT_OP_D2Z: halo = 2 * R * nx * ny; break;
    default: halo = 2 * R * (ny * nz + nx * nz + nx * ny); break;
    }
    double reads = n + halo;
    if (p->op == FDT_OP_WAVE)
        reads += 2 * n; /* p_prev and c2, read at the point only */
    return (reads + n) * (double)fdt_prec_size(p->prec);
}

int fdt_gen_geometry(const fdt_problem *p, const fdt_config *c, fdt_geometry *g, fdt_err *e)
{
    memset(g, 0, sizeof *g);
    int64_t rows_per_block = (int64_t)c->by * c->tile;
    int64_t chunk = p->ny;
    if (c->split > 1) {
        chunk = (p->ny + c->split - 1) / c->split;
        chunk = (chunk + rows_per_block - 1) / rows_per_block * rows_per_block;
        if ((int64_t)(c->split - 1) * chunk >= p->ny)
            return fdt_err_set(e, "config split=%d: with by*tile=%lld rows per block, ny=%lld "
                                  "leaves some subdomains empty", c->split,
                               (long long)rows_per_block, (long long)p->ny);
    }
    int64_t nb[3];
    nb[0] = (p->nx + (int64_t)c->bx * c->vec - 1) / ((int64_t)c->bx * c->vec);
    nb[1] = (chunk + rows_per_block - 1) / rows_per_block;
    int64_t zper = (int64_t)c->bz * (c->nw ? c->nw : 1);
    nb[2] = (p->nz + zper - 1) / zper;
    const char *o = fdt_orders[c->order];
    static const int64_t limit[3] = {2147483647LL, 65535, 65535};
    uint32_t grid[3];
    for (int d = 0; d < 3; d++) {
        int64_t n = nb[o[d] - 'x'];
        if (n > limit[d])
            return fdt_err_set(e, "config order=%s: %lld blocks along %c exceed the limit %lld "
                                  "of grid dimension %c", o, (long long)n, o[d],
                               (long long)limit[d], "xyz"[d]);
        grid[d] = (uint32_t)n;
    }
    g->nlaunch = c->split;
    for (int s = 0; s < c->split; s++) {
        fdt_launch *L = &g->launch[s];
        int64_t j0 = (int64_t)s * chunk, j1 = j0 + chunk < p->ny ? j0 + chunk : p->ny;
        L->jbeg = (int)(p->R + j0);
        L->jend = (int)(p->R + j1);
        memcpy(L->grid, grid, sizeof grid);
        L->block[0] = (uint32_t)c->bx;
        L->block[1] = (uint32_t)c->by;
        L->block[2] = (uint32_t)c->bz;
    }
    return fdt_gen_shared(p, c, &g->shared_bytes, &g->shared_dynamic, e);
}

int fdt_gen_shared(const fdt_problem *p, const fdt_config *c, uint32_t *bytes, int *dynamic,
                   fdt_err *e)
{
    *bytes = 0;
    *dynamic = 0;
    if (!c->lds)
        return 0;
    /* as in templates/stencil.hip: x halo rounded up to whole vectors; lds=1 has two
     * buffers, lds=2 a ring of R_z + 1 + pf planes (plus wave's p_prev and c2 of the
     * block's outputs, pf + 1 planes of each) */
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    int64_t rows = (int64_t)c->by * c->tile;
    int64_t hx = (r[0] + c->vec - 1) / c->vec * c->vec;
    int64_t w = (int64_t)c->bx * c->vec;
    int64_t tx = w + 2 * hx, ty = rows + 2 * r[1];
    int64_t elems = 2 * tx * ty;
    if (c->lds == 2) {
        elems = (r[2] + 1 + c->pf) * tx * ty;
        if (p->op == FDT_OP_WAVE)
            elems += 2 * (c->pf + 1) * w * rows;
    }
    int64_t n = elems * (int64_t)fdt_prec_size(p->prec);
    if (n > UINT32_MAX)
        return fdt_err_set(e, "config lds=%d: the shared tiles would need %lld bytes", c->lds,
                           (long long)n);
    *bytes = (uint32_t)n;
    *dynamic = c->lds == 2;
    return 0;
}

int fdt_gen_kernel_args(fdt_op op, int runtime_dims, fdt_arg *a)
{
    int n = 0;
    a[n++] = FDT_ARG_OUT;
    a[n++] = FDT_ARG_IN;
    if (op == FDT_OP_WAVE) {
        a[n++] = FDT_ARG_PREV;
        a[n++] = FDT_ARG_C2;
    }
    if (runtime_dims) {
        static const fdt_arg dims[] = {FDT_ARG_NX, FDT_ARG_NY, FDT_ARG_NZ, FDT_ARG_LINE,
                                       FDT_ARG_SLICE};
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
            a[n++] = dims[i];
    }
    a[n++] = FDT_ARG_JBEG;
    a[n++] = FDT_ARG_JEND;
    switch (op) {
    case FDT_OP_D2X: a[n++] = FDT_ARG_SX; break;
    case FDT_OP_D2Y: a[n++] = FDT_ARG_SY; break;
    case FDT_OP_D2Z: a[n++] = FDT_ARG_SZ; break;
    default:
        a[n++] = FDT_ARG_SX;
        a[n++] = FDT_ARG_SY;
        a[n++] = FDT_ARG_SZ;
        if (op == FDT_OP_WAVE) {
            a[n++] = FDT_ARG_SI;
            a[n++] = FDT_ARG_SJ;
            a[n++] = FDT_ARG_SK;
            a[n++] = FDT_ARG_SRC;
        }
    }
    return n;
}
