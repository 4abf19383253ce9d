/* ---- fdtune portable: deployments of the damped wave step (plain C99 or C++11, no includes) --
 * How the launches of one damped wave step (dwave) cover the grid: complete (one damped kernel
 * over the whole grid), inout (the damped kernel over the border shell, the interior kernel
 * over the block-aligned hole it leaves) and sides (the interior kernel over [W, n-W)^3, a
 * damped kernel per face). The boxes partition the grid exactly: every point is written by
 * exactly one launch. fdtune's generator (fdt_gen_deploy) and its workers use this function;
 * `fdtune export` copies this file verbatim into every tuned header, whose step drivers use it
 * too. */
#ifndef FDTUNED_DEPLOY_V1
#define FDTUNED_DEPLOY_V1

/* Most boxes of one deployment (sides: the interior and six faces). */
#define FDTUNED_DEPLOY_MAX 7

typedef struct fdtuned_box {
    long long g[3];    /* global interior coordinate of the box's first point */
    long long n[3];    /* extents */
    long long hole[6]; /* box-local [x0,x1),[y0,y1),[z0,z1) left to another launch; zeros: none */
    int damped;        /* 1: the damped kernel NAME; 0: the interior kernel NAME_int */
} fdtuned_box;

/* One box [g, g+n) (no hole) appended to b at *nb. */
static inline void fdtuned_deploy_box_(fdtuned_box *b, int *nb, int damped, long long gx,
                                       long long gy, long long gz, long long nx, long long ny,
                                       long long nz)
{
    fdtuned_box *x = &b[(*nb)++];
    int d;
    x->g[0] = gx;
    x->g[1] = gy;
    x->g[2] = gz;
    x->n[0] = nx;
    x->n[1] = ny;
    x->n[2] = nz;
    for (d = 0; d < 6; d++)
        x->hole[d] = 0;
    x->damped = damped;
}

/* The boxes of deployment `deploy` (0 complete, 1 inout, 2 sides) on an n[0]xn[1]xn[2] grid
 * with a layer of width W; ext[3]: the shell kernel's per-block output extents (1,1,1 for the
 * CPU). Returns how many boxes (<= FDTUNED_DEPLOY_MAX), -1 on bad arguments (an extent below
 * 1, W below 1 or 2W not below every extent, an ext below 1).
 * complete: 1 damped box = the grid.
 * inout: 1 damped box = the grid whose hole is the largest block-aligned (ext) box inside
 *   [W, n-W) on every axis, then 1 undamped box = exactly that hole (skipped when empty).
 * sides: 1 undamped box [W, n-W)^3, then 6 damped slabs: z faces (full x,y; z in [0,W) and
 *   [n-W,n)), y faces (full x; y in [0,W) and [n-W,n); z in [W,n-W)), x faces (x in [0,W) and
 *   [n-W,n); y, z in [W,n-W)). */
static inline int fdtuned_deploy_boxes(int deploy, const long long n[3], int W,
                                       const long long ext[3], fdtuned_box *b)
{
    long long lo[3], hi[3], m[3], w = W;
    int d, nb = 0, empty = 0;
    for (d = 0; d < 3; d++)
        if (n[d] < 1 || ext[d] < 1 || w < 1 || 2 * w >= n[d])
            return -1;
    for (d = 0; d < 3; d++)
        m[d] = n[d] - 2 * w; /* the interior's extent */
    if (deploy == 0) {
        fdtuned_deploy_box_(b, &nb, 1, 0, 0, 0, n[0], n[1], n[2]);
    } else if (deploy == 1) {
        fdtuned_deploy_box_(b, &nb, 1, 0, 0, 0, n[0], n[1], n[2]);
        for (d = 0; d < 3; d++) {
            lo[d] = (w + ext[d] - 1) / ext[d] * ext[d];
            hi[d] = (n[d] - w) / ext[d] * ext[d];
            empty |= hi[d] <= lo[d];
        }
        if (!empty) {
            for (d = 0; d < 3; d++) {
                b[0].hole[2 * d] = lo[d];
                b[0].hole[2 * d + 1] = hi[d];
            }
            fdtuned_deploy_box_(b, &nb, 0, lo[0], lo[1], lo[2], hi[0] - lo[0], hi[1] - lo[1],
                                hi[2] - lo[2]);
        }
    } else if (deploy == 2) {
        fdtuned_deploy_box_(b, &nb, 0, w, w, w, m[0], m[1], m[2]);
        fdtuned_deploy_box_(b, &nb, 1, 0, 0, 0, n[0], n[1], w);
        fdtuned_deploy_box_(b, &nb, 1, 0, 0, n[2] - w, n[0], n[1], w);
        fdtuned_deploy_box_(b, &nb, 1, 0, 0, w, n[0], w, m[2]);
        fdtuned_deploy_box_(b, &nb, 1, 0, n[1] - w, w, n[0], w, m[2]);
        fdtuned_deploy_box_(b, &nb, 1, 0, w, w, w, m[1], m[2]);
        fdtuned_deploy_box_(b, &nb, 1, n[0] - w, w, w, w, m[1], m[2]);
    } else {
        return -1;
    }
    return nb;
}

#endif /* FDTUNED_DEPLOY_V1 */
