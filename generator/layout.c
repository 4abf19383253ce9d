/* Whether a problem is valid (radius, grid, and that its arrays can be laid out), the array
 * layout (padding, base offset, allocation size), the seeds' effective-bandwidth byte count,
 * launch geometry (blocks per axis, grid-index order, y split), whether a config fits a grid,
 * and the kernel argument order. The layout, geometry and fit arithmetic is portable/ (shared
 * verbatim with exported headers); this file wraps it with fdtune's messages. Every size is
 * computed with overflow checks: grids come from users. The config checks (config.c) stand
 * on this file, which calls nothing of theirs. */
#include "fdt_gen.h"

#include <stdio.h>
#include <string.h>

/* dwave takes an absorbing layer that leaves an interior on every axis; the others none. */
static int fdt_absorb_check(const fdt_problem *p, fdt_err *e)
{
    if (p->op != FDT_OP_DWAVE) {
        if (p->absorb_w || p->absorb_s)
            return fdt_err_set(e, "problem: an absorbing layer is dwave's; %s takes none",
                               fdt_op_name(p->op));
        return 0;
    }
    if (p->absorb_w < 1)
        return fdt_err_set(e, "problem: dwave needs an absorbing layer (--absorb W or W:S)");
    if (!(p->absorb_s > 0) || p->absorb_s > FDT_ABSORB_S_MAX)
        return fdt_err_set(e, "absorbing layer: strength S=%g is out of range (0, %g]",
                           p->absorb_s, FDT_ABSORB_S_MAX);
    int64_t d[3] = {p->nx, p->ny, p->nz};
    for (int i = 0; i < 3; i++)
        if (2 * (int64_t)p->absorb_w >= d[i])
            return fdt_err_set(e, "absorbing layer: W=%d leaves no interior along %c (n%c=%lld "
                                  "needs W < %lld)", p->absorb_w, "xyz"[i], "xyz"[i],
                               (long long)d[i], (long long)((d[i] + 1) / 2));
    return 0;
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
    if (fdt_absorb_check(p, e))
        return -1;
    fdt_layout l;
    return fdt_layout_make(p, 1, &l, e);
}

int fdt_layout_make(const fdt_problem *p, int align, fdt_layout *l, fdt_err *e)
{
    memset(l, 0, sizeof *l);
    if (align < 1)
        return fdt_err_set(e, "layout: align=%d must be at least 1", align);
    fdtuned_layout pl;
    int rc = fdtuned_layout_make(p->R, (int)fdt_prec_size(p->prec), align, p->nx, p->ny, p->nz,
                                 &pl);
    if (rc == FDTUNED_LAYOUT_ARGS)
        return fdt_err_set(e, "layout: R=%d or grid %lldx%lldx%lld out of range", p->R,
                           (long long)p->nx, (long long)p->ny, (long long)p->nz);
    if (rc != FDTUNED_LAYOUT_OK) {
        char key[128];
        fdt_problem_format(p, key, sizeof key);
        return fdt_err_set(e, "grid %lldx%lldx%lld: one array would need more than %lld GiB "
                              "(%s)", (long long)p->nx, (long long)p->ny, (long long)p->nz,
                           (long long)(FDT_ALLOC_MAX >> 30), key);
    }
    l->R = pl.R;
    l->align = pl.align;
    l->esize = (size_t)pl.esize;
    l->nx = pl.nx;
    l->ny = pl.ny;
    l->nz = pl.nz;
    l->mx = pl.mx;
    l->my = pl.my;
    l->mz = pl.mz;
    l->line = pl.line;
    l->slice = pl.slice;
    l->offset = pl.offset;
    l->elems = pl.elems; /* with one spare row after the box (portable/fdtuned_layout.h) */
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
    if (fdt_op_is_step(p->op))
        reads += 2 * n; /* p_prev and c2, read at the point only */
    return (reads + n) * (double)fdt_prec_size(p->prec);
}

int64_t fdt_gen_part_planes(const fdt_problem *p)
{
    int64_t m = 2 * (int64_t)p->R;
    return p->nz >= 2 * m ? m : 0;
}

/* The config's order values (config.c's catalogue takes them as its choices): the axes that
 * blockIdx.x, .y and .z walk, as fdtuned_shape names them. */
const char *const fdt_orders[] = {"xyz", "xzy", "yxz", "yzx", "zxy", "zyx", NULL};

void fdt_gen_shape(const fdt_problem *p, const fdt_config *c, fdtuned_shape *s)
{
    s->R = p->R;
    s->esize = (int)fdt_prec_size(p->prec);
    s->bx = c->bx;
    s->by = c->by;
    s->bz = c->bz;
    s->vec = c->vec;
    s->tile = c->tile;
    s->nw = c->nw;
    s->split = c->split;
    s->align = c->align;
    s->order = NULL;
    for (int i = 0; fdt_orders[i]; i++)
        if (i == c->order)
            s->order = fdt_orders[i];
}

void fdt_gen_blocks(const fdt_problem *p, const fdt_config *c, int64_t blocks[3])
{
    fdtuned_shape s;
    fdtuned_geometry g;
    fdt_gen_shape(p, c, &s);
    int rc = fdtuned_geometry_make(&s, p->nx, p->ny, p->nz, &g);
    if (rc == FDTUNED_FIT_SHAPE || rc == FDTUNED_FIT_GRID) /* nothing computed */
        g.blocks[0] = g.blocks[1] = g.blocks[2] = 0;
    for (int d = 0; d < 3; d++)
        blocks[d] = g.blocks[d];
}

/* The message for a reason of fdtuned_fit (g: the geometry as far as it was computed). */
static int fit_error(const fdt_problem *p, const fdt_config *c, const fdtuned_shape *s,
                     const fdtuned_geometry *g, int why, fdt_err *e)
{
    switch (why) {
    case FDTUNED_FIT_WINDOW:
        return fdt_err_set(e, "config nw=%d: window longer than nz=%lld", c->nw,
                           (long long)p->nz);
    case FDTUNED_FIT_SPLIT_ROWS:
        return fdt_err_set(e, "config split=%d: more subdomains than ny=%lld rows", c->split,
                           (long long)p->ny);
    case FDTUNED_FIT_SPLIT_EMPTY:
        return fdt_err_set(e, "config split=%d: with by*tile=%lld rows per block, ny=%lld "
                              "leaves some subdomains empty", c->split,
                           (long long)c->by * c->tile, (long long)p->ny);
    case FDTUNED_FIT_BLOCKS:
        for (int d = 0; d < 3; d++) {
            long long n = g->blocks[s->order[d] - 'x'];
            if (n > fdtuned_grid_limit(d))
                return fdt_err_set(e, "config order=%s: %lld blocks along %c exceed the limit "
                                      "%lld of grid dimension %c", s->order, n, s->order[d],
                                   fdtuned_grid_limit(d), "xyz"[d]);
        }
        break;
    case FDTUNED_FIT_GRID: {
        fdt_layout l;
        if (fdt_layout_make(p, c->align, &l, e))
            return -1;
        return fdt_err_set(e, "grid %lldx%lldx%lld: lines of %lld elements do not fit the "
                              "kernels' int arguments", (long long)p->nx, (long long)p->ny,
                           (long long)p->nz, (long long)l.line);
    }
    default:
        break;
    }
    return fdt_err_set(e, "config: bx, by, bz, vec, tile, nw, split or order out of range");
}

int fdt_config_fit(const fdt_problem *p, const fdt_config *c, int *why, fdt_err *e)
{
    fdtuned_shape s;
    fdtuned_geometry g;
    fdt_gen_shape(p, c, &s);
    int rc = fdtuned_fit(&s, p->nx, p->ny, p->nz);
    if (why)
        *why = rc;
    if (rc == FDTUNED_FIT_OK)
        return 0;
    fdtuned_geometry_make(&s, p->nx, p->ny, p->nz, &g); /* the blocks, for the message */
    return fit_error(p, c, &s, &g, rc, e);
}

int fdt_gen_geometry(const fdt_problem *p, const fdt_config *c, fdt_geometry *g, fdt_err *e)
{
    memset(g, 0, sizeof *g);
    fdtuned_shape s;
    fdtuned_geometry pg;
    fdt_gen_shape(p, c, &s);
    int rc = fdtuned_geometry_make(&s, p->nx, p->ny, p->nz, &pg);
    if (rc != FDTUNED_FIT_OK)
        return fit_error(p, c, &s, &pg, rc, e);
    FDT_ASSERT(pg.nlaunch == c->split && pg.nlaunch <= FDT_SPLIT_MAX,
               "one launch per y subdomain");
    g->nlaunch = pg.nlaunch;
    memcpy(g->launch, pg.launch, (size_t)pg.nlaunch * sizeof pg.launch[0]);
    for (int i = 0; i < g->nlaunch; i++)
        FDT_ASSERT(g->launch[i].jbeg < g->launch[i].jend &&
                       (i == 0 ? g->launch[i].jbeg == p->R
                               : g->launch[i].jbeg == g->launch[i - 1].jend) &&
                       (i + 1 < g->nlaunch || g->launch[i].jend == p->R + p->ny),
                   "the launches write every interior row once, in order");
    return fdt_gen_shared(p, c, &g->shared_bytes, &g->shared_dynamic, e);
}

void fdt_gen_tile(const fdt_problem *p, const fdt_config *c, int64_t *tx, int64_t *ty)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    *tx = (int64_t)c->bx * c->vec + 2 * ((r[0] + c->vec - 1) / c->vec * c->vec);
    *ty = (int64_t)c->by * c->tile + 2 * r[1];
}

int64_t fdt_gen_slot_rows(const fdt_problem *p, const fdt_config *c)
{
    int64_t tx, ty, es = fdt_prec_size(p->prec);
    fdt_gen_tile(p, c, &tx, &ty);
    if (c->bulk) /* a tensor copy's destination starts on 128 bytes */
        while (tx * ty * es % 128)
            ty++;
    return ty;
}

int fdt_gen_tmap(const fdt_problem *p, const fdt_config *c, const fdt_layout *l, uint64_t in,
                 fdtuned_tmap *m)
{
    if (!c->bulk)
        return 0;
    fdtuned_shape s;
    fdt_gen_shape(p, c, &s);
    fdtuned_tmap_make(&s, p->nx, p->ny, p->nz, l->line, l->slice, in, m);
    FDT_ASSERT(m->base % 16 == 0 && m->stride[0] % 16 == 0 && m->stride[1] % 16 == 0,
               "a tensor map starts on 16 bytes and its strides are multiples of 16");
    FDT_ASSERT(m->box[0] <= 256 && m->box[1] <= 256 && m->box[0] * (unsigned)s.esize % 16 == 0,
               "check_bulk keeps the box within the copy's limits");
    return 1;
}

/* Bytes of a config's shared tiles (and wave's queues) without the stream's slot barriers. */
static int64_t tile_bytes(const fdt_problem *p, const fdt_config *c)
{
    /* as in templates/tile.hip, ring.hip and stream.hip: x halo rounded up to whole vectors;
     * lds=1 has two buffers, lds=2 a ring of R_z + 1 + pf planes (plus wave's p_prev and c2
     * of the block's outputs, pf + 1 planes of each), lds=3 a ring of pf + 1 planes (plus
     * wave's p_prev, c2 and centre, pf + 1 planes of each) */
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    int64_t rows = (int64_t)c->by * c->tile, w = (int64_t)c->bx * c->vec, tx, ty;
    fdt_gen_tile(p, c, &tx, &ty);
    int64_t elems = 2 * tx * ty;
    if (c->lds == 2) {
        elems = (r[2] + 1 + c->pf) * tx * ty;
        if (fdt_op_is_step(p->op))
            elems += 2 * (c->pf + 1) * w * rows;
    } else if (c->lds == 3) {
        elems = (1 + c->pf) * tx * fdt_gen_slot_rows(p, c);
        if (fdt_op_is_step(p->op))
            elems += 3 * (c->pf + 1) * w * rows;
    }
    return elems * (int64_t)fdt_prec_size(p->prec);
}

int64_t fdt_gen_barriers_at(const fdt_problem *p, const fdt_config *c)
{
    return (tile_bytes(p, c) + 7) / 8 * 8;
}

int fdt_gen_shared(const fdt_problem *p, const fdt_config *c, uint32_t *bytes, int *dynamic,
                   fdt_err *e)
{
    *bytes = 0;
    *dynamic = 0;
    if (!c->lds)
        return 0;
    /* with mbar=1, after the tiles two 8-byte barriers per ring slot, stream.hip's full and
     * freed, which NVIDIA's cp.async kernels use and AMD's leave unused */
    int64_t n = c->mbar ? fdt_gen_barriers_at(p, c) + 2 * (c->pf + 1) * 8 : tile_bytes(p, c);
    if (n > UINT32_MAX)
        return fdt_err_set(e, "config lds=%d: the shared tiles would need %lld bytes", c->lds,
                           (long long)n);
    *bytes = (uint32_t)n;
    *dynamic = c->lds >= 2; /* the rings */
    return 0;
}

int fdt_gen_kernel_args(fdt_op op, int runtime_dims, fdt_arg *a)
{
    int n = 0;
    a[n++] = FDT_ARG_OUT;
    a[n++] = FDT_ARG_IN;
    if (fdt_op_is_step(op)) {
        a[n++] = FDT_ARG_PREV;
        a[n++] = FDT_ARG_C2;
    }
    if (op == FDT_OP_DWAVE)
        a[n++] = FDT_ARG_ETA;
    if (runtime_dims) {
        static const fdt_arg dims[] = {FDT_ARG_NX, FDT_ARG_NY, FDT_ARG_NZ, FDT_ARG_LINE,
                                       FDT_ARG_SLICE};
        for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
            a[n++] = dims[i];
    }
    if (op == FDT_OP_DWAVE) { /* the box: extents, global origin, hole */
        for (int b = FDT_ARG_BNX; b <= FDT_ARG_HZ1; b++)
            a[n++] = (fdt_arg)b;
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
        if (fdt_op_is_step(op)) {
            a[n++] = FDT_ARG_SI;
            a[n++] = FDT_ARG_SJ;
            a[n++] = FDT_ARG_SK;
            a[n++] = FDT_ARG_SRC;
        }
    }
    return n;
}

static void set_real(fdt_argval *v, fdt_prec prec, double x)
{
    if (prec == FDT_F32)
        v->f = (float)x;
    else
        v->d = x;
}

void fdt_gen_argvals(const fdt_problem *p, const fdt_params *q, const fdt_launch_arrays *arr,
                     const fdtuned_box *b, const fdt_arg *a, int n, fdt_argval *v)
{
    static const fdtuned_box whole = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0, 0, 0, 0}, 1};
    if (!b)
        b = &whole;
    const fdt_layout *l = arr->lay;
    FDT_ASSERT(b->g[2] >= arr->z0, "a box lies in the planes its arrays hold");
    uint64_t off = (uint64_t)fdt_layout_index(l, b->g[0], b->g[1], b->g[2] - arr->z0) *
                   (uint64_t)l->esize;
    for (int i = 0; i < n; i++) {
        fdt_argval *x = &v[i];
        x->ll = 0;
        switch (a[i]) {
        case FDT_ARG_OUT: x->ptr = arr->out + off; break;
        case FDT_ARG_IN: x->ptr = arr->in + off; break;
        case FDT_ARG_PREV: x->ptr = arr->prev + off; break;
        case FDT_ARG_C2: x->ptr = arr->c2 + off; break;
        case FDT_ARG_ETA: x->ptr = arr->eta; break;
        case FDT_ARG_NX: x->i = (int)p->nx; break;
        case FDT_ARG_NY: x->i = (int)p->ny; break;
        case FDT_ARG_NZ: x->i = (int)p->nz; break;
        case FDT_ARG_LINE: x->i = (int)l->line; break;
        case FDT_ARG_SLICE: x->ll = l->slice; break;
        case FDT_ARG_BNX: case FDT_ARG_BNY: case FDT_ARG_BNZ:
            x->i = (int)b->n[a[i] - FDT_ARG_BNX];
            break;
        case FDT_ARG_GX: case FDT_ARG_GY: case FDT_ARG_GZ:
            x->i = (int)b->g[a[i] - FDT_ARG_GX];
            break;
        case FDT_ARG_HX0: case FDT_ARG_HX1: case FDT_ARG_HY0: case FDT_ARG_HY1:
        case FDT_ARG_HZ0: case FDT_ARG_HZ1:
            x->i = (int)b->hole[a[i] - FDT_ARG_HX0];
            break;
        case FDT_ARG_SX: set_real(x, p->prec, q->sx); break;
        case FDT_ARG_SY: set_real(x, p->prec, q->sy); break;
        case FDT_ARG_SZ: set_real(x, p->prec, q->sz); break;
        case FDT_ARG_SI: x->i = (int)q->si; break;
        case FDT_ARG_SJ: x->i = (int)q->sj; break;
        case FDT_ARG_SK: x->i = (int)q->sk; break;
        case FDT_ARG_SRC: set_real(x, p->prec, q->src); break;
        case FDT_ARG_JBEG: case FDT_ARG_JEND: case FDT_ARG_COUNT: break;
        }
    }
}
