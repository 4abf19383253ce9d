/* ---- fdtune export: the variant tables' row and the selection (plain C99 or C++11) -------
 * Every exported operator shares these: the row of its variant table and the run-time
 * selection. The rules they apply come just before this part, copied verbatim from fdtune's
 * portable/ folder (the array layout, the launch geometry and grid fit, architectures and
 * device models, the nearest tuned result), so the header and fdtune run the same code. All
 * are pure functions of their arguments, so that a build system or a test can ask "which
 * kernel would run, with which layout" on a machine without a GPU (define
 * FDTUNED_SELECT_ONLY). */
#ifndef FDTUNED_SELECT_V3
#define FDTUNED_SELECT_V3

/* What the selection and layout functions return when they have no variant: none of the
 * variants can run the grid (fdtuned_*_select, fdtuned_*_layout_for, and fdtuned_*_current
 * and fdtuned_*_layout on a device), or no GPU is visible or current, so there is no device
 * to select for (fdtuned_*_current, fdtuned_*_layout: the HIP/CUDA runtime's answer). */
enum {
    FDTUNED_NO_VARIANT = -1,
    FDTUNED_NO_DEVICE = -2
};

/* How a variant's kernel was specialised. */
enum {
    FDTUNED_FALLBACK = 0, /* fdtune's default config, grid as arguments: any device, any grid */
    FDTUNED_CONSTANT = 1, /* a tuned config with its tuned grid baked in: that grid only */
    FDTUNED_RUNTIME = 2   /* the same tuned config with the grid as arguments: any grid */
};

typedef struct fdtuned_variant {
    int kind;             /* FDTUNED_FALLBACK, FDTUNED_CONSTANT or FDTUNED_RUNTIME */
    const char *kernel;   /* name of its __global__ function */
    const char *config;   /* fdtune's canonical config text (the database key) */
    const char *device;   /* name of the device model it was tuned on ("" for the fallback) */
    const char *arch;     /* its architecture, "sm_90", "gfx90a" ("" for the fallback) */
    int cus;              /* its compute units (SMs or CUs; 0 for the fallback) */
    long long nx, ny, nz; /* the tuned grid, interior points (0 for the fallback) */
    int sibling;          /* RUNTIME: index of the CONSTANT variant of the same tuning; -1 */
    int R, esize;         /* stencil radius; bytes per element */
    int bx, by, bz, vec, tile, nw, split, align;
    const char *order;    /* axes walked by blockIdx.x, .y, .z, e.g. "xyz" */
    double median_ms, gbs, frac_copy; /* as measured on the tuned grid; -1 when unknown */
    long long run;        /* tuning database run id; 0 for the fallback */
    long long eval;       /* tuning database evaluation id; 0 for the fallback */
    int predicted;        /* 1: fdtune's model's top-ranked config for a device model nothing
                             was measured on (median_ms, gbs: the prediction); 0 measured */
} fdtuned_variant;

/* The launch shape of variant v (portable/fdtuned_geometry.h). */
static inline void fdtuned_variant_shape(const fdtuned_variant *v, fdtuned_shape *s)
{
    s->R = v->R;
    s->esize = v->esize;
    s->bx = v->bx;
    s->by = v->by;
    s->bz = v->bz;
    s->vec = v->vec;
    s->tile = v->tile;
    s->nw = v->nw;
    s->split = v->split;
    s->align = v->align;
    s->order = v->order;
}

/* The launches of variant v on grid nx x ny x nz: 0, or -1 when it cannot run that grid. */
static inline int fdtuned_variant_geometry(const fdtuned_variant *v, long long nx, long long ny,
                                           long long nz, fdtuned_geometry *g)
{
    fdtuned_shape s;
    fdtuned_variant_shape(v, &s);
    return fdtuned_geometry_make(&s, nx, ny, nz, g) == FDTUNED_FIT_OK ? 0 : -1;
}

/* Whether variant v can compute grid nx x ny x nz: a constant kernel only its own grid; any
 * kernel only grids its config fits (fdtuned_fit, the rule fdtune checks configs with). */
static inline int fdtuned_usable(const fdtuned_variant *v, long long nx, long long ny,
                                 long long nz)
{
    fdtuned_shape s;
    if (v->kind == FDTUNED_CONSTANT && (nx != v->nx || ny != v->ny || nz != v->nz))
        return 0;
    fdtuned_variant_shape(v, &s);
    return fdtuned_fit(&s, nx, ny, nz) == FDTUNED_FIT_OK;
}

/* The tuned result behind variant v, as the nearest ranking sees it. */
static inline void fdtuned_variant_result(const fdtuned_variant *v, fdtuned_result *r)
{
    r->name = v->device;
    r->arch = v->arch;
    r->cus = v->cus;
    r->nx = v->nx;
    r->ny = v->ny;
    r->nz = v->nz;
    r->ms = v->median_ms;
    r->id = v->eval;
    r->predicted = v->predicted;
}

/* The variant for a device (name, architecture, compute units: what the HIP/CUDA device
 * properties say) and a grid, or FDTUNED_NO_VARIANT when none can run it:
 *  1. among the runtime-dims variants (one per device model and tuned grid), those of the
 *     device's base architecture whose config can run this grid, the first by
 *     fdtuned_rank (portable/fdtuned_nearest.h: same model and grid, same model, other
 *     model, then the model's predictions; then the nearest grid, the nearest compute-unit
 *     count, the faster);
 *  2. when its tuned grid is this grid: its constant kernel (the grid baked in, as tuned);
 *     otherwise its runtime-dims kernel;
 *  3. nothing tuned for this architecture (or nothing that can run this grid): the
 *     fallback. */
static inline int fdtuned_select_in(const fdtuned_variant *v, int n, const char *name,
                                    const char *arch, int cus, long long nx, long long ny,
                                    long long nz)
{
    fdtuned_request q;
    fdtuned_result r, b;
    int best = -1, i;
    q.name = name;
    q.arch = arch;
    q.cus = cus;
    q.nx = nx;
    q.ny = ny;
    q.nz = nz;
    for (i = 0; i < n; i++) {
        if (v[i].kind != FDTUNED_RUNTIME)
            continue;
        fdtuned_variant_result(&v[i], &r);
        if (fdtuned_rung(&q, &r) == FDTUNED_RUNG_NONE || !fdtuned_usable(&v[i], nx, ny, nz))
            continue;
        if (best >= 0) {
            fdtuned_variant_result(&v[best], &b);
            if (fdtuned_rank(&q, &r, &b) >= 0)
                continue;
        }
        best = i;
    }
    if (best >= 0) {
        int c = v[best].sibling;
        if (c >= 0 && c < n && fdtuned_usable(&v[c], nx, ny, nz))
            return c;
        return best;
    }
    for (i = 0; i < n; i++)
        if (v[i].kind == FDTUNED_FALLBACK && fdtuned_usable(&v[i], nx, ny, nz))
            return i;
    return FDTUNED_NO_VARIANT;
}

/* The layout variant `index` of table v expects for a grid: 0; FDTUNED_NO_DEVICE when index
 * is that code (no device to select for); otherwise FDTUNED_NO_VARIANT (no variant, a bad
 * index, or a grid it cannot run). */
static inline int fdtuned_variant_layout(const fdtuned_variant *v, int n, int index,
                                         long long nx, long long ny, long long nz,
                                         fdtuned_layout *l)
{
    if (index == FDTUNED_NO_DEVICE)
        return FDTUNED_NO_DEVICE;
    if (index < 0 || index >= n || !fdtuned_usable(&v[index], nx, ny, nz))
        return FDTUNED_NO_VARIANT;
    return fdtuned_layout_make(v[index].R, v[index].esize, v[index].align, nx, ny, nz, l) ==
                   FDTUNED_LAYOUT_OK ? 0 : FDTUNED_NO_VARIANT;
}

#endif /* FDTUNED_SELECT_V3 */
