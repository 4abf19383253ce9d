/* ---- fdtune export: the portable part (plain C99 or C++11, no GPU, no headers) ----------
 * Types and functions every exported operator shares: the variant table's row, the array
 * layout (the arithmetic of fdtune's generator/layout.c), the launch geometry (the
 * arithmetic of fdt_gen_geometry) and the selection rule. They are pure functions of their
 * arguments so that a build system or a test can ask "which kernel would run, with which
 * layout" on a machine without a GPU (define FDTUNED_SELECT_ONLY). */
#ifndef FDTUNED_COMMON_V1
#define FDTUNED_COMMON_V1

/* How a variant's kernel was specialised. */
enum {
    FDTUNED_FALLBACK = 0, /* fdtune's default config, grid as arguments: any device, any grid */
    FDTUNED_CONSTANT = 1, /* a tuned config with its tuned grid baked in: that grid only */
    FDTUNED_RUNTIME = 2   /* the same tuned config with the grid as arguments: any grid */
};

#define FDTUNED_SPLIT_MAX 64
/* Limits fdtune's generator applies (FDT_DIM_MAX, FDT_ALLOC_MAX). */
#define FDTUNED_DIM_MAX 1000000000LL
#define FDTUNED_ALLOC_BYTES_MAX (1LL << 40)

typedef struct fdtuned_variant {
    int kind;             /* FDTUNED_FALLBACK, FDTUNED_CONSTANT or FDTUNED_RUNTIME */
    const char *kernel;   /* name of its __global__ function */
    const char *config;   /* fdtune's canonical config text (the database key) */
    const char *device;   /* tuned on this device ("" for the fallback) */
    const char *arch;     /* its architecture, "sm_90", "gfx90a" ("" for the fallback) */
    int cus;              /* its compute units (SMs or CUs; 0 for the fallback) */
    long long nx, ny, nz; /* the tuned grid, interior points (0 for the fallback) */
    int sibling;          /* RUNTIME: index of the CONSTANT variant of the same tuning; -1 */
    int R, esize;         /* stencil radius; bytes per element */
    int bx, by, bz, vec, tile, nw, split, align;
    const char *order;    /* axes walked by blockIdx.x, .y, .z, e.g. "xyz" */
    double median_ms, gbs, frac_copy; /* as measured on the tuned grid; -1 when unknown */
    long long run;        /* tuning database run id; 0 for the fallback */
} fdtuned_variant;

/* Halo-padded array layout. Element (i, j, k) of the padded box, 0 <= i < nx + 2R (likewise
 * j, k; the interior starts at R on every axis), is at allocation[offset + i + line*j +
 * slice*k]. line is rounded up to `align` elements and offset puts x = R on an aligned
 * address (for an allocation aligned to align * esize bytes, which hipMalloc/cudaMalloc
 * give); one spare row at the end keeps whole-vector reads of the last halo row inside. */
typedef struct fdtuned_layout {
    int R, align, esize;
    long long nx, ny, nz; /* interior */
    long long mx, my, mz; /* padded box: nx + 2R, ny + 2R, nz + 2R */
    long long line, slice;
    long long offset;     /* elements from the allocation start to padded (0, 0, 0) */
    long long elems;      /* elements to allocate for one array */
} fdtuned_layout;

static inline int fdtuned_mul_ok_(long long a, long long b, long long limit, long long *out)
{
    if (a < 0 || b < 0 || (a && b > limit / a))
        return 0;
    *out = a * b;
    return *out <= limit;
}

/* 0 and *l filled, or -1 when the grid is empty, too large, or align not positive. */
static inline int fdtuned_layout_make(int R, int esize, int align, long long nx, long long ny,
                                      long long nz, fdtuned_layout *l)
{
    long long limit, box;
    if (R < 1 || esize < 1 || align < 1 || nx < 1 || ny < 1 || nz < 1 ||
        nx > FDTUNED_DIM_MAX || ny > FDTUNED_DIM_MAX || nz > FDTUNED_DIM_MAX)
        return -1;
    l->R = R;
    l->align = align;
    l->esize = esize;
    l->nx = nx;
    l->ny = ny;
    l->nz = nz;
    l->mx = nx + 2 * R;
    l->my = ny + 2 * R;
    l->mz = nz + 2 * R;
    l->line = (l->mx + align - 1) / align * align;
    l->offset = (align - R % align) % align;
    limit = FDTUNED_ALLOC_BYTES_MAX / esize;
    if (!fdtuned_mul_ok_(l->line, l->my, limit, &l->slice) ||
        !fdtuned_mul_ok_(l->slice, l->mz, limit, &box) || box + l->offset + l->line > limit)
        return -1;
    l->elems = l->offset + box + l->line;
    return 0;
}

/* Element index, from the allocation start, of padded coordinates (i, j, k). */
static inline long long fdtuned_index(const fdtuned_layout *l, long long i, long long j,
                                      long long k)
{
    return l->offset + i + l->line * j + l->slice * k;
}

typedef struct fdtuned_launch {
    unsigned grid[3], block[3];
    int jbeg, jend; /* padded y rows [jbeg, jend) this launch writes */
} fdtuned_launch;

typedef struct fdtuned_geometry {
    int nlaunch;
    fdtuned_launch launch[FDTUNED_SPLIT_MAX];
} fdtuned_geometry;

/* The launches of variant v on grid nx x ny x nz: blocks per axis in the variant's grid
 * index order, and `split` y subdomains launched one after another. -1 when the grid
 * exceeds a grid-dimension limit or leaves a subdomain empty (as fdtune refuses it). */
static inline int fdtuned_geometry_make(const fdtuned_variant *v, long long nx, long long ny,
                                        long long nz, fdtuned_geometry *g)
{
    static const long long limit[3] = {2147483647LL, 65535LL, 65535LL};
    long long rows = (long long)v->by * v->tile, chunk = ny, nb[3], zper;
    unsigned grid[3];
    int d, s;
    if (v->split < 1 || v->split > FDTUNED_SPLIT_MAX)
        return -1;
    if (v->split > 1) {
        chunk = (ny + v->split - 1) / v->split;
        chunk = (chunk + rows - 1) / rows * rows;
        if ((long long)(v->split - 1) * chunk >= ny)
            return -1;
    }
    nb[0] = (nx + (long long)v->bx * v->vec - 1) / ((long long)v->bx * v->vec);
    nb[1] = (chunk + rows - 1) / rows;
    zper = (long long)v->bz * (v->nw ? v->nw : 1);
    nb[2] = (nz + zper - 1) / zper;
    for (d = 0; d < 3; d++) {
        long long n = nb[v->order[d] - 'x'];
        if (n > limit[d])
            return -1;
        grid[d] = (unsigned)n;
    }
    g->nlaunch = v->split;
    for (s = 0; s < v->split; s++) {
        fdtuned_launch *L = &g->launch[s];
        long long j0 = (long long)s * chunk, j1 = j0 + chunk < ny ? j0 + chunk : ny;
        L->jbeg = (int)(v->R + j0);
        L->jend = (int)(v->R + j1);
        for (d = 0; d < 3; d++)
            L->grid[d] = grid[d];
        L->block[0] = (unsigned)v->bx;
        L->block[1] = (unsigned)v->by;
        L->block[2] = (unsigned)v->bz;
    }
    return 0;
}

/* Whether variant v can compute grid nx x ny x nz: a constant kernel only its own grid;
 * any kernel only grids fdtune would accept for its config (window no longer than nz, no
 * more subdomains than rows, launch limits, array size, strides that fit the int
 * arguments). */
static inline int fdtuned_usable(const fdtuned_variant *v, long long nx, long long ny,
                                 long long nz)
{
    fdtuned_layout l;
    fdtuned_geometry g;
    if (v->kind == FDTUNED_CONSTANT && (nx != v->nx || ny != v->ny || nz != v->nz))
        return 0;
    if (v->nw > nz || v->split > ny)
        return 0;
    if (fdtuned_layout_make(v->R, v->esize, v->align, nx, ny, nz, &l) ||
        l.line > 2147483647LL)
        return 0;
    return fdtuned_geometry_make(v, nx, ny, nz, &g) == 0;
}

/* A device's architecture name against a tuned one: "gfx90a:sramecc+:xnack-" (what HIP
 * reports) is gfx90a, since the features after ':' do not change what the kernels were
 * tuned for. */
static inline int fdtuned_same_arch(const char *device_arch, const char *arch)
{
    if (!device_arch || !arch || !*arch)
        return 0;
    while (*arch && *device_arch == *arch) {
        device_arch++;
        arch++;
    }
    return !*arch && (!*device_arch || *device_arch == ':');
}

/* max(a, b) / min(a, b): ordering by it is ordering by |log(a / b)|, without libm. */
static inline double fdtuned_ratio_(double a, double b)
{
    return a > b ? a / b : b / a;
}

/* The variant for a device (architecture name, compute units) and a grid, or -1 when none
 * can run it:
 *  1. the tuned results of this architecture with the same compute-unit count, else of any
 *     count: the one whose tuned grid is nearest (|log volume ratio|, then |log xy-plane
 *     ratio|, then table order), among those whose config can run this grid;
 *  2. when that tuned grid is this grid: its constant kernel (the grid baked in, as tuned);
 *     otherwise its runtime-dims kernel;
 *  3. nothing tuned for this architecture (or nothing that can run this grid): the
 *     fallback. */
static inline int fdtuned_select_in(const fdtuned_variant *v, int n, const char *arch, int cus,
                                    long long nx, long long ny, long long nz)
{
    int best = -1, pass, i;
    double bv = 0, bp = 0;
    for (pass = 0; pass < 2 && best < 0; pass++)
        for (i = 0; i < n; i++) {
            double dv, dp;
            if (v[i].kind != FDTUNED_RUNTIME || !fdtuned_same_arch(arch, v[i].arch))
                continue;
            if (pass == 0 && v[i].cus != cus)
                continue;
            if (!fdtuned_usable(&v[i], nx, ny, nz))
                continue;
            dv = fdtuned_ratio_((double)v[i].nx * (double)v[i].ny * (double)v[i].nz,
                                (double)nx * (double)ny * (double)nz);
            dp = fdtuned_ratio_((double)v[i].nx * (double)v[i].ny, (double)nx * (double)ny);
            if (best < 0 || dv < bv || (dv == bv && dp < bp)) {
                best = i;
                bv = dv;
                bp = dp;
            }
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
    return -1;
}

/* The layout variant `index` of table v expects for a grid: 0, or -1 (bad index or grid). */
static inline int fdtuned_variant_layout(const fdtuned_variant *v, int n, int index,
                                         long long nx, long long ny, long long nz,
                                         fdtuned_layout *l)
{
    if (index < 0 || index >= n || !fdtuned_usable(&v[index], nx, ny, nz))
        return -1;
    return fdtuned_layout_make(v[index].R, v[index].esize, v[index].align, nx, ny, nz, l);
}

#endif /* FDTUNED_COMMON_V1 */
