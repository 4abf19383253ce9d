/* ---- fdtune portable: launch geometry and grid fit (plain C99 or C++11, no includes) -----
 * How a config is launched on a grid (blocks per axis, the grid-index order, the y split)
 * and whether it can run that grid at all, with the reason when it cannot. fdtune's
 * generator (fdt_gen_geometry, fdt_config_check), its search model and the recipe helper
 * blocks(c) use these functions; `fdtune export` copies this file verbatim into every tuned
 * header, whose launchers use them too. Needs fdtuned_layout.h before it. */
#ifndef FDTUNED_GEOMETRY_V1
#define FDTUNED_GEOMETRY_V1

#ifndef FDTUNED_LAYOUT_V1
#error "fdtuned_geometry.h needs fdtuned_layout.h before it"
#endif

/* Most y subdomains of one config; blocks along grid dimension x, and along y and z. */
#define FDTUNED_SPLIT_MAX 64
#define FDTUNED_GRID_X_MAX 2147483647LL
#define FDTUNED_GRID_YZ_MAX 65535LL

/* What the launch geometry and the grid fit need of a config. */
typedef struct fdtuned_shape {
    int R;             /* stencil radius: the halo of every axis */
    int esize;         /* bytes per element */
    int bx, by, bz;    /* thread block */
    int vec, tile;     /* outputs per thread along x (one vector) and along y */
    int nw;            /* z planes per thread (sliding window); 0: one */
    int split;         /* y subdomains launched one after another, 1..FDTUNED_SPLIT_MAX */
    int align;         /* leading-dimension alignment in elements */
    const char *order; /* axes walked by blockIdx.x, .y, .z: a permutation of "xyz" */
} fdtuned_shape;

typedef struct fdtuned_launch {
    unsigned grid[3], block[3];
    int jbeg, jend; /* padded y rows [jbeg, jend) this launch writes */
} fdtuned_launch;

typedef struct fdtuned_geometry {
    long long blocks[3]; /* blocks of one launch along the axes x, y, z (not grid dimensions) */
    long long chunk;     /* interior y rows of one subdomain (ny when split = 1) */
    int nlaunch;         /* split */
    fdtuned_launch launch[FDTUNED_SPLIT_MAX];
} fdtuned_geometry;

/* Why a config cannot run a grid (fdtuned_geometry_make, fdtuned_fit). */
enum {
    FDTUNED_FIT_OK = 0,
    FDTUNED_FIT_SHAPE = 1,       /* the shape itself is malformed (a block, vec or tile below
                                    1, nw negative, split outside 1..SPLIT_MAX, bad order, R
                                    outside 0..DIM_MAX) */
    FDTUNED_FIT_WINDOW = 2,      /* the window is longer than nz */
    FDTUNED_FIT_SPLIT_ROWS = 3,  /* more y subdomains than ny rows */
    FDTUNED_FIT_SPLIT_EMPTY = 4, /* with by*tile rows per block, some subdomain is empty */
    FDTUNED_FIT_BLOCKS = 5,      /* the blocks along a grid dimension exceed its limit */
    FDTUNED_FIT_GRID = 6         /* the grid is empty or too large (an extent outside
                                    1..DIM_MAX), or its arrays are */
};

/* Blocks the hardware allows along grid dimension d (0: x, 1: y, 2: z). */
static inline long long fdtuned_grid_limit(int d)
{
    return d == 0 ? FDTUNED_GRID_X_MAX : FDTUNED_GRID_YZ_MAX;
}

static inline int fdtuned_order_ok_(const char *o)
{
    int seen = 0, d;
    if (!o)
        return 0;
    for (d = 0; d < 3; d++) {
        if (o[d] < 'x' || o[d] > 'z' || (seen & (1 << (o[d] - 'x'))))
            return 0;
        seen |= 1 << (o[d] - 'x');
    }
    return o[3] == 0;
}

static inline int fdtuned_shape_ok_(const fdtuned_shape *s)
{
    return s->bx >= 1 && s->by >= 1 && s->bz >= 1 && s->vec >= 1 && s->tile >= 1 &&
           s->nw >= 0 && s->split >= 1 && s->split <= FDTUNED_SPLIT_MAX && s->R >= 0 &&
           s->R <= FDTUNED_DIM_MAX && fdtuned_order_ok_(s->order);
}

/* Every extent in 1..FDTUNED_DIM_MAX. */
static inline int fdtuned_extents_ok_(long long nx, long long ny, long long nz)
{
    return nx >= 1 && ny >= 1 && nz >= 1 && nx <= FDTUNED_DIM_MAX && ny <= FDTUNED_DIM_MAX &&
           nz <= FDTUNED_DIM_MAX;
}

/* The launches of shape s on an nx x ny x nz grid: blocks per axis in the shape's grid-index
 * order, and `split` y subdomains of whole blocks launched one after another. Returns
 * FDTUNED_FIT_OK with g filled; FDTUNED_FIT_SPLIT_EMPTY or FDTUNED_FIT_BLOCKS with g->blocks
 * and g->chunk filled (what the config would need); FDTUNED_FIT_SHAPE or FDTUNED_FIT_GRID
 * (an extent outside 1..DIM_MAX) with nothing. No arithmetic can overflow: the extents are
 * at most DIM_MAX, a block's extent (an int times an int) at most 2^62, and a chunk is
 * compared with ny before it is multiplied. */
static inline int fdtuned_geometry_make(const fdtuned_shape *s, long long nx, long long ny,
                                        long long nz, fdtuned_geometry *g)
{
    long long rows, zper;
    unsigned grid[3];
    int d, k, bad = FDTUNED_FIT_OK;
    g->nlaunch = 0;
    if (!fdtuned_shape_ok_(s))
        return FDTUNED_FIT_SHAPE;
    if (!fdtuned_extents_ok_(nx, ny, nz))
        return FDTUNED_FIT_GRID;
    rows = (long long)s->by * s->tile;
    g->chunk = ny;
    if (s->split > 1) {
        g->chunk = (ny + s->split - 1) / s->split;
        g->chunk = (g->chunk + rows - 1) / rows * rows;
        if (g->chunk > ny || (long long)(s->split - 1) * g->chunk >= ny)
            bad = FDTUNED_FIT_SPLIT_EMPTY;
    }
    g->blocks[0] = (nx + (long long)s->bx * s->vec - 1) / ((long long)s->bx * s->vec);
    g->blocks[1] = (g->chunk + rows - 1) / rows;
    zper = (long long)s->bz * (s->nw ? s->nw : 1);
    g->blocks[2] = (nz + zper - 1) / zper;
    if (bad)
        return bad;
    for (d = 0; d < 3; d++) {
        long long n = g->blocks[s->order[d] - 'x'];
        if (n > fdtuned_grid_limit(d))
            return FDTUNED_FIT_BLOCKS;
        grid[d] = (unsigned)n;
    }
    g->nlaunch = s->split;
    for (k = 0; k < s->split; k++) {
        fdtuned_launch *L = &g->launch[k];
        long long j0 = (long long)k * g->chunk, j1 = j0 + g->chunk < ny ? j0 + g->chunk : ny;
        L->jbeg = (int)(s->R + j0);
        L->jend = (int)(s->R + j1);
        for (d = 0; d < 3; d++)
            L->grid[d] = grid[d];
        L->block[0] = (unsigned)s->bx;
        L->block[1] = (unsigned)s->by;
        L->block[2] = (unsigned)s->bz;
    }
    return FDTUNED_FIT_OK;
}

/* Whether shape s can compute an nx x ny x nz grid: FDTUNED_FIT_OK, or the first reason it
 * cannot, checked in this order: the shape, the window against nz, the split against ny, the
 * launch geometry, then the grid and its arrays (extents, size, strides that fit the int
 * arguments of the kernels). A kernel with the grid baked in also needs its own grid; that
 * is the caller's check. */
static inline int fdtuned_fit(const fdtuned_shape *s, long long nx, long long ny, long long nz)
{
    fdtuned_geometry g;
    fdtuned_layout l;
    int rc;
    if (!fdtuned_shape_ok_(s))
        return FDTUNED_FIT_SHAPE;
    if (s->nw > nz)
        return FDTUNED_FIT_WINDOW;
    if (s->split > ny)
        return FDTUNED_FIT_SPLIT_ROWS;
    if ((rc = fdtuned_geometry_make(s, nx, ny, nz, &g)) != FDTUNED_FIT_OK)
        return rc;
    if (fdtuned_layout_make(s->R, s->esize, s->align, nx, ny, nz, &l) != FDTUNED_LAYOUT_OK ||
        l.line > 2147483647LL)
        return FDTUNED_FIT_GRID;
    return FDTUNED_FIT_OK;
}

/* The tensor map of the stream's bulk form (bulk=1 on NVIDIA sm_90 on, fdtune's
 * templates/ring_bulk.hip): each ring slot is filled by one copy of a box of tx x ty values
 * (the block's tile with its x and y halos) from the input array at pointer `in` (the padded
 * origin of a layout with rows of `line` values and planes of `slice`). A map starts on 16
 * bytes: at `in` less its shift, the values between the last 16-byte boundary and `in`, which
 * the kernel adds to its x coordinates. Values outside the map's extents (the grid's padded
 * extents) read as zero. */
typedef struct fdtuned_tmap {
    unsigned long long base;      /* address of the map's first value (16-byte aligned) */
    unsigned long long dim[3];    /* values along x from base, rows, planes */
    unsigned long long stride[2]; /* bytes between rows, between planes */
    unsigned box[2];              /* values of one copy along x and y */
    int shift;                    /* values from base to in */
} fdtuned_tmap;

/* The tensor map of shape s (its radius its x and y halos, as the stream's) over an nx x ny x
 * nz grid of the given line and slice, for input pointer in. */
static inline void fdtuned_tmap_make(const fdtuned_shape *s, long long nx, long long ny,
                                     long long nz, long long line, long long slice,
                                     unsigned long long in, fdtuned_tmap *m)
{
    int hx = (s->R + s->vec - 1) / s->vec * s->vec;
    m->shift = (int)(in % 16 / (unsigned)s->esize);
    m->base = in - (unsigned long long)m->shift * (unsigned)s->esize;
    m->dim[0] = (unsigned long long)(nx + 2 * s->R + m->shift);
    m->dim[1] = (unsigned long long)(ny + 2 * s->R);
    m->dim[2] = (unsigned long long)(nz + 2 * s->R);
    m->stride[0] = (unsigned long long)line * (unsigned)s->esize;
    m->stride[1] = (unsigned long long)slice * (unsigned)s->esize;
    m->box[0] = (unsigned)(2 * hx + s->bx * s->vec);
    m->box[1] = (unsigned)(2 * s->R + s->by * s->tile);
}

#endif /* FDTUNED_GEOMETRY_V1 */
