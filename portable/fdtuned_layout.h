/* ---- fdtune portable: the halo-padded array layout (plain C99 or C++11, no includes) -----
 * One of the rules fdtune shares with the headers it exports: fdtune's generator
 * (generator/layout.c) wraps these functions with its error messages, and `fdtune export`
 * copies this file verbatim into every tuned header, so a kernel and the program that
 * allocates its arrays compute the same layout. Everything here is a pure function of its
 * arguments. */
#ifndef FDTUNED_LAYOUT_V1
#define FDTUNED_LAYOUT_V1

/* Largest interior extent along one axis (every index of an axis then fits an int), and the
 * largest allocation of one array in bytes (1 TiB: beyond any GPU, far from overflow). */
#define FDTUNED_DIM_MAX 1000000000LL
#define FDTUNED_ALLOC_BYTES_MAX (1LL << 40)

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

/* Why fdtuned_layout_make refused. */
enum {
    FDTUNED_LAYOUT_OK = 0,
    FDTUNED_LAYOUT_ARGS = 1,     /* R, esize or align below 1, or an extent outside 1..DIM_MAX */
    FDTUNED_LAYOUT_TOO_LARGE = 2 /* one array would exceed FDTUNED_ALLOC_BYTES_MAX */
};

/* *out = a * b when both are non-negative and the product is at most limit; 0 otherwise. */
static inline int fdtuned_mul_ok_(long long a, long long b, long long limit, long long *out)
{
    if (a < 0 || b < 0 || (a && b > limit / a))
        return 0;
    *out = a * b;
    return *out <= limit;
}

/* The layout of an nx x ny x nz interior with halo R, esize-byte elements and lines aligned
 * to `align` elements: FDTUNED_LAYOUT_OK with *l filled, else the reason (*l then holds the
 * fields computed so far). */
static inline int fdtuned_layout_make(int R, int esize, int align, long long nx, long long ny,
                                      long long nz, fdtuned_layout *l)
{
    long long limit, box;
    l->R = R;
    l->align = align;
    l->esize = esize;
    l->nx = nx;
    l->ny = ny;
    l->nz = nz;
    l->mx = l->my = l->mz = l->line = l->slice = l->offset = l->elems = 0;
    if (R < 1 || esize < 1 || align < 1 || nx < 1 || ny < 1 || nz < 1 ||
        nx > FDTUNED_DIM_MAX || ny > FDTUNED_DIM_MAX || nz > FDTUNED_DIM_MAX)
        return FDTUNED_LAYOUT_ARGS;
    l->mx = nx + 2 * R;
    l->my = ny + 2 * R;
    l->mz = nz + 2 * R;
    l->line = (l->mx + align - 1) / align * align;
    l->offset = (align - R % align) % align;
    limit = FDTUNED_ALLOC_BYTES_MAX / esize;
    if (!fdtuned_mul_ok_(l->line, l->my, limit, &l->slice) ||
        !fdtuned_mul_ok_(l->slice, l->mz, limit, &box) || box + l->offset + l->line > limit)
        return FDTUNED_LAYOUT_TOO_LARGE;
    l->elems = l->offset + box + l->line;
    return FDTUNED_LAYOUT_OK;
}

/* Element index, from the allocation start, of padded coordinates (i, j, k). */
static inline long long fdtuned_index(const fdtuned_layout *l, long long i, long long j,
                                      long long k)
{
    return l->offset + i + l->line * j + l->slice * k;
}

#endif /* FDTUNED_LAYOUT_V1 */
