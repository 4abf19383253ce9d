{{BANNER}}
// What a CPU worker needs besides the kernels (templates/cpu_util.c), in one precision: fill
// the inputs with fdt_input_value's exact values, poison the output, compare a candidate's
// output with a reference output, check that an input came back untouched, gather values at
// chosen elements, copy an array (the copy bandwidth every fraction is taken of) and flush the
// caches between samples. Plain C11 with OpenMP 4.5.
//
// Every entry point is `void NAME(void **args)`: the arguments of the GPU utility kernel of
// the same name (templates/util.hip), each passed by address in the same order and types, as
// eval/worker_main.c passes them to a launch (pointers as their 8 bytes); copy and flush, which
// the GPUs do not have, say theirs. Each runs on the OpenMP runtime's default team (the
// backend sets OMP_NUM_THREADS and OMP_PROC_BIND=close, as for a kernel with thr=0) and splits
// its array into one contiguous share per thread, in thread order: the same threads and order
// as the kernels' static schedules, so that the pages an array's fill touches first (Linux
// places a page on the NUMA node of the thread that first writes it) are those the kernels'
// threads use, and the copy is timed with the kernels' threads and placement.
//
// Template variables (examples for f32):
//   BANNER  a comment line ("// fdtune 1.0 CPU verification and timing helpers (f32)")
//   NS      prefix of the file-scope helpers ("fdt_util_f32")
//   PREC    f32 | f64, the suffix of the entry points ("f32")
//   REAL    float | double ("float")
//   UBITS   the unsigned integer of REAL's size: "uint32_t" | "uint64_t" ("uint32_t")
#include <omp.h>
#include <stddef.h>
#include <stdint.h>

#{include cpu_nt.c}

typedef {{REAL}} {{NS}}_real;
typedef {{UBITS}} {{NS}}_ubits;

// Keep in sync with fdt_input_value() in generator/reference.c: bit-identical values.
static inline uint64_t {{NS}}_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline {{REAL}} {{NS}}_value(uint64_t seed, int field, long long i, long long j,
                                    long long k)
{
    uint64_t h = {{NS}}_mix64(seed + 0x632be59bd9b4e019ULL * (uint64_t)(field + 1));
    h = {{NS}}_mix64(h + (uint64_t)i);
    h = {{NS}}_mix64(h + (uint64_t)j);
    h = {{NS}}_mix64(h + (uint64_t)k);
    // An odd integer in (-2^24, 2^24) scaled by 2^-24: never zero, exact in f32 and f64.
    const long long n = 2 * (long long)(h >> 40) + 1 - (1LL << 24);
    double v = (double)n * 0x1p-24;
    if (field == 2)
        v = 0.25 + 0.125 * (v + 1.0);  // c2 = (c dt / h)^2 in (0.25, 0.5)
    return ({{REAL}})v;
}

// Argument i of an entry point, copied out of args into *v (size bytes).
static inline void {{NS}}_arg(void **args, int i, void *v, size_t size)
{
    __builtin_memcpy(v, args[i], size);
}

static inline {{UBITS}} {{NS}}_bits({{REAL}} x)
{
    {{UBITS}} u;
    __builtin_memcpy(&u, &x, sizeof u);
    return u;
}

// Thread t's share [*e0, *e1) of n elements, in thread order.
static inline void {{NS}}_share(long long n, int t, int nt, long long *e0, long long *e1)
{
    *e0 = n / nt * t + (t < n % nt ? t : n % nt);
    *e1 = *e0 + n / nt + (t < n % nt);
}

// Walks the padded coordinates of consecutive allocation elements (no division per element).
typedef struct {
    long long pos, box;     // element - offset; elements in the padded box (slice * mz)
    long long i, j, k;      // padded coordinates of pos (valid when 0 <= pos < box)
    long long line, my, mx;
} {{NS}}_walk;

static inline void {{NS}}_walk_start({{NS}}_walk *w, long long e, long long offset,
                                     long long line, long long slice, int mx, int my, int mz)
{
    w->pos = e - offset;
    w->box = slice * mz;
    w->line = line;
    w->my = my;
    w->mx = mx;
    const long long p = w->pos < 0 ? 0 : w->pos;
    w->k = p / slice;
    w->j = (p - w->k * slice) / line;
    w->i = p - w->k * slice - w->j * line;
}

// Whether the current element is inside the padded box (and not row padding).
static inline int {{NS}}_walk_in({{NS}}_walk *w)
{
    return w->pos >= 0 && w->pos < w->box && w->i < w->mx;
}

static inline void {{NS}}_walk_next({{NS}}_walk *w)
{
    if (w->pos++ < 0)
        return;  // still in the base offset: (0, 0, 0) comes next
    if (++w->i == w->line) {
        w->i = 0;
        if (++w->j == w->my) {
            w->j = 0;
            w->k++;
        }
    }
}

// Matches the GPU's check record (templates/util.hip): 80 bytes, all 8-byte fields.
typedef struct {
    unsigned long long bad, nonfinite, touched, checked;
    unsigned long long first_bad, first_touched;
    unsigned long long max_err_bits;  // max |err| as the bits of a non-negative double
    double sum_sq_err, sum_sq_ref, unused;
} fdt_cpu_check_{{PREC}};

// The whole allocation: the padded box gets the field's values, everything else (the base
// offset, row padding, the spare row) the pattern pad, so that a kernel reading there
// produces NaN.
static void {{NS}}_fill_share({{REAL}} *a, long long elems, long long offset, long long line,
                              long long slice, int mx, int my, int mz, uint64_t seed,
                              int field, {{UBITS}} pad, int t, int nt)
{
    long long e0, e1;
    {{NS}}_share(elems, t, nt, &e0, &e1);
    {{NS}}_walk w;
    {{NS}}_walk_start(&w, e0, offset, line, slice, mx, my, mz);
    for (long long e = e0; e < e1; ++e, {{NS}}_walk_next(&w)) {
        if ({{NS}}_walk_in(&w))
            a[e] = {{NS}}_value(seed, field, w.i, w.j, w.k);
        else
            __builtin_memcpy(a + e, &pad, sizeof pad);
    }
}

// The arguments fdt_fill and fdt_check_fill share, in their order: the array, its elements,
// the offset of element (0, 0, 0), the strides, the interior extents, the seed, the field
// and the halo's pad bits.
typedef struct {
    {{REAL}} *a;
    long long elems, offset, line, slice;
    int mx, my, mz;
    unsigned long long seed;
    int field;
    {{UBITS}} pad;
} {{NS}}_fill_args;

static void {{NS}}_fill_unpack(void **args, {{NS}}_fill_args *f)
{
    {{NS}}_arg(args, 0, &f->a, sizeof f->a);
    {{NS}}_arg(args, 1, &f->elems, sizeof f->elems);
    {{NS}}_arg(args, 2, &f->offset, sizeof f->offset);
    {{NS}}_arg(args, 3, &f->line, sizeof f->line);
    {{NS}}_arg(args, 4, &f->slice, sizeof f->slice);
    {{NS}}_arg(args, 5, &f->mx, sizeof f->mx);
    {{NS}}_arg(args, 6, &f->my, sizeof f->my);
    {{NS}}_arg(args, 7, &f->mz, sizeof f->mz);
    {{NS}}_arg(args, 8, &f->seed, sizeof f->seed);
    {{NS}}_arg(args, 9, &f->field, sizeof f->field);
    {{NS}}_arg(args, 10, &f->pad, sizeof f->pad);
}

// fdt_fill_PREC(real *a, long long elems, long long offset, long long line, long long slice,
// int mx, int my, int mz, unsigned long long seed, int field, ubits pad)
void fdt_fill_{{PREC}}(void **args);
void fdt_fill_{{PREC}}(void **args)
{
    {{NS}}_fill_args f;
    {{NS}}_fill_unpack(args, &f);
#pragma omp parallel
    {{NS}}_fill_share(f.a, f.elems, f.offset, f.line, f.slice, f.mx, f.my, f.mz, f.seed,
                      f.field, f.pad, omp_get_thread_num(), omp_get_num_threads());
}

static void {{NS}}_poison_share({{UBITS}} *a, long long elems, {{UBITS}} pattern, int t,
                                int nt)
{
    long long e0, e1;
    {{NS}}_share(elems, t, nt, &e0, &e1);
#pragma omp simd
    for (long long e = e0; e < e1; ++e)
        a[e] = pattern;
}

// Every element of a (also the output before a kernel runs: the kernel must overwrite the
// interior and leave the rest as it is) to the bit pattern `pattern`.
// fdt_poison_PREC(ubits *a, long long elems, ubits pattern)
void fdt_poison_{{PREC}}(void **args);
void fdt_poison_{{PREC}}(void **args)
{
    {{UBITS}} *a, pattern;
    long long elems;
    {{NS}}_arg(args, 0, &a, sizeof a);
    {{NS}}_arg(args, 1, &elems, sizeof elems);
    {{NS}}_arg(args, 2, &pattern, sizeof pattern);
#pragma omp parallel
    {{NS}}_poison_share(a, elems, pattern, omp_get_thread_num(), omp_get_num_threads());
}

// One thread's share of a comparison, merged into *out under a critical section.
static void {{NS}}_compare_share(const {{REAL}} *cand, long long elems, long long offset,
                                 long long line, long long slice, int R, int nx, int ny,
                                 int nz, const {{REAL}} *ref, long long ref_offset,
                                 long long ref_line, long long ref_slice, double tol,
                                 {{UBITS}} poison, fdt_cpu_check_{{PREC}} *out, int t, int nt)
{
    long long e0, e1;
    {{NS}}_share(elems, t, nt, &e0, &e1);
    unsigned long long bad = 0, nonfinite = 0, touched = 0, checked = 0;
    unsigned long long first_bad = ~0ULL, first_touched = ~0ULL;
    double max_err = 0, sse = 0, ssr = 0;
    {{NS}}_walk w;
    {{NS}}_walk_start(&w, e0, offset, line, slice, nx + 2 * R, ny + 2 * R, nz + 2 * R);
    for (long long e = e0; e < e1; ++e, {{NS}}_walk_next(&w)) {
        const int interior = {{NS}}_walk_in(&w) && w.i >= R && w.i < R + nx && w.j >= R &&
                             w.j < R + ny && w.k >= R && w.k < R + nz;
        const {{REAL}} c = cand[e];
        if (!interior) {
            if ({{NS}}_bits(c) != poison) {
                touched++;
                if ((unsigned long long)e < first_touched)
                    first_touched = (unsigned long long)e;
            }
            continue;
        }
        checked++;
        const double r = (double)ref[ref_offset + w.i + w.j * ref_line + w.k * ref_slice];
        const double d = (double)c - r;
        if (!(d - d == 0)) {  // NaN or infinite
            nonfinite++;
            if ((unsigned long long)e < first_bad)
                first_bad = (unsigned long long)e;
            continue;
        }
        const double err = d < 0 ? -d : d;
        if (err > tol) {
            bad++;
            if ((unsigned long long)e < first_bad)
                first_bad = (unsigned long long)e;
        }
        max_err = err > max_err ? err : max_err;
        sse += d * d;
        ssr += r * r;
    }
#pragma omp critical(fdt_compare_{{PREC}})
    {
        out->bad += bad;
        out->nonfinite += nonfinite;
        out->touched += touched;
        out->checked += checked;
        if (first_bad < out->first_bad)
            out->first_bad = first_bad;
        if (first_touched < out->first_touched)
            out->first_touched = first_touched;
        double cur;
        __builtin_memcpy(&cur, &out->max_err_bits, sizeof cur);
        if (max_err > cur)
            __builtin_memcpy(&out->max_err_bits, &max_err, sizeof max_err);
        out->sum_sq_err += sse;
        out->sum_sq_ref += ssr;
    }
}

// A candidate's output against a reference output, over the candidate's whole allocation:
// interior points within tol (absolute), everything else still bit-equal to the poison
// pattern. *out starts cleared here (first_bad and first_touched at ~0: none).
// fdt_compare_PREC(const real *cand, long long elems, long long offset, long long line,
// long long slice, int R, int nx, int ny, int nz, const real *ref, long long ref_offset,
// long long ref_line, long long ref_slice, double tol, ubits poison, check *out)
void fdt_compare_{{PREC}}(void **args);
void fdt_compare_{{PREC}}(void **args)
{
    const {{REAL}} *cand, *ref;
    long long elems, offset, line, slice, ref_offset, ref_line, ref_slice;
    int R, nx, ny, nz;
    double tol;
    {{UBITS}} poison;
    fdt_cpu_check_{{PREC}} *out;
    {{NS}}_arg(args, 0, &cand, sizeof cand);
    {{NS}}_arg(args, 1, &elems, sizeof elems);
    {{NS}}_arg(args, 2, &offset, sizeof offset);
    {{NS}}_arg(args, 3, &line, sizeof line);
    {{NS}}_arg(args, 4, &slice, sizeof slice);
    {{NS}}_arg(args, 5, &R, sizeof R);
    {{NS}}_arg(args, 6, &nx, sizeof nx);
    {{NS}}_arg(args, 7, &ny, sizeof ny);
    {{NS}}_arg(args, 8, &nz, sizeof nz);
    {{NS}}_arg(args, 9, &ref, sizeof ref);
    {{NS}}_arg(args, 10, &ref_offset, sizeof ref_offset);
    {{NS}}_arg(args, 11, &ref_line, sizeof ref_line);
    {{NS}}_arg(args, 12, &ref_slice, sizeof ref_slice);
    {{NS}}_arg(args, 13, &tol, sizeof tol);
    {{NS}}_arg(args, 14, &poison, sizeof poison);
    {{NS}}_arg(args, 15, &out, sizeof out);
    const fdt_cpu_check_{{PREC}} zero = {0, 0, 0, 0, ~0ULL, ~0ULL, 0, 0, 0, 0};
    *out = zero;
#pragma omp parallel
    {{NS}}_compare_share(cand, elems, offset, line, slice, R, nx, ny, nz, ref, ref_offset,
                         ref_line, ref_slice, tol, poison, out, omp_get_thread_num(),
                         omp_get_num_threads());
}

static void {{NS}}_check_fill_share(const {{REAL}} *a, long long elems, long long offset,
                                    long long line, long long slice, int mx, int my, int mz,
                                    uint64_t seed, int field, {{UBITS}} pad,
                                    fdt_cpu_check_{{PREC}} *out, int t, int nt)
{
    long long e0, e1;
    {{NS}}_share(elems, t, nt, &e0, &e1);
    unsigned long long wrong = 0, first = ~0ULL;
    {{NS}}_walk w;
    {{NS}}_walk_start(&w, e0, offset, line, slice, mx, my, mz);
    for (long long e = e0; e < e1; ++e, {{NS}}_walk_next(&w)) {
        const {{UBITS}} want = {{NS}}_walk_in(&w)
                                   ? {{NS}}_bits({{NS}}_value(seed, field, w.i, w.j, w.k))
                                   : pad;
        if ({{NS}}_bits(a[e]) != want) {
            wrong++;
            if ((unsigned long long)e < first)
                first = (unsigned long long)e;
        }
    }
#pragma omp critical(fdt_check_fill_{{PREC}})
    {
        out->touched += wrong;
        if (first < out->first_touched)
            out->first_touched = first;
    }
}

// An input array must come back exactly as fdt_fill left it: out->touched counts the
// elements that differ, out->first_touched is the first of them (~0: none). Unlike the GPU's,
// which adds to a record the worker clears once for all inputs, it adds to *out as it is.
// fdt_check_fill_PREC(const real *a, long long elems, long long offset, long long line,
// long long slice, int mx, int my, int mz, unsigned long long seed, int field, ubits pad,
// check *out)
void fdt_check_fill_{{PREC}}(void **args);
void fdt_check_fill_{{PREC}}(void **args)
{
    {{NS}}_fill_args f;
    fdt_cpu_check_{{PREC}} *out;
    {{NS}}_fill_unpack(args, &f);
    {{NS}}_arg(args, 11, &out, sizeof out);
#pragma omp parallel
    {{NS}}_check_fill_share(f.a, f.elems, f.offset, f.line, f.slice, f.mx, f.my, f.mz, f.seed,
                            f.field, f.pad, out,
                            omp_get_thread_num(), omp_get_num_threads());
}

// out[q] = a[idx[q]] as a double, for q < n (the points a check reports).
// fdt_gather_PREC(const real *a, const long long *idx, double *out, int n)
void fdt_gather_{{PREC}}(void **args);
void fdt_gather_{{PREC}}(void **args)
{
    const {{REAL}} *a;
    const long long *idx;
    double *out;
    int n;
    {{NS}}_arg(args, 0, &a, sizeof a);
    {{NS}}_arg(args, 1, &idx, sizeof idx);
    {{NS}}_arg(args, 2, &out, sizeof out);
    {{NS}}_arg(args, 3, &n, sizeof n);
    for (int q = 0; q < n; ++q)
        out[q] = (double)a[idx[q]];
}

static void {{NS}}_copy_share({{REAL}} *restrict dst, const {{REAL}} *restrict src,
                              long long n, int nt_stores, int t, int nt)
{
    long long e0, e1;
    {{NS}}_share(n, t, nt, &e0, &e1);
    if (nt_stores) {
        {{NS}}_stream(dst + e0, src + e0, e1 - e0);
        {{NS}}_nt_fence();
        return;
    }
#pragma omp simd
    for (long long e = e0; e < e1; ++e)
        dst[e] = src[e];
}

// dst[0..n) = src[0..n), one contiguous share per thread: the copy bandwidth is 2 n
// sizeof(real) bytes over its time. nt_stores: 1 writes with streaming stores (no
// read-for-ownership of dst), 0 with ordinary ones; a worker times both and takes the
// faster as the copy bandwidth, the one a kernel is measured against.
// fdt_copy_PREC(real *dst, const real *src, long long n, int nt_stores)
void fdt_copy_{{PREC}}(void **args);
void fdt_copy_{{PREC}}(void **args)
{
    {{REAL}} *dst;
    const {{REAL}} *src;
    long long n;
    int nt_stores;
    {{NS}}_arg(args, 0, &dst, sizeof dst);
    {{NS}}_arg(args, 1, &src, sizeof src);
    {{NS}}_arg(args, 2, &n, sizeof n);
    {{NS}}_arg(args, 3, &nt_stores, sizeof nt_stores);
#pragma omp parallel
    {{NS}}_copy_share(dst, src, n, nt_stores, omp_get_thread_num(), omp_get_num_threads());
}

static double {{NS}}_flush_share(const uint64_t *buf, long long n, int t, int nt)
{
    long long e0, e1;
    {{NS}}_share(n, t, nt, &e0, &e1);
    uint64_t x = 0;
#pragma omp simd reduction(^ : x)
    for (long long e = e0; e < e1; ++e)
        x ^= buf[e];
    return (double)(x & 1);
}

// Evicts the kernel's arrays from every cache level before a timed sample: each thread
// reads its share of buf, n 8-byte words, which the caller allocates larger than the
// last-level cache (twice its size: the LLC's replacement is not strict LRU) and writes
// once (fdt_poison) before the first flush. Reading, not writing, in each flush: writing
// would leave up to an LLC's worth of dirty lines whose write-back the next kernel would
// pay for. *sum gets a value that depends on every word read (so the reads are not dropped).
// fdt_flush_PREC(const unsigned long long *buf, long long n, double *sum)
void fdt_flush_{{PREC}}(void **args);
void fdt_flush_{{PREC}}(void **args)
{
    const uint64_t *buf;
    long long n;
    double *sum, total = 0;
    {{NS}}_arg(args, 0, &buf, sizeof buf);
    {{NS}}_arg(args, 1, &n, sizeof n);
    {{NS}}_arg(args, 2, &sum, sizeof sum);
#pragma omp parallel reduction(+ : total)
    total += {{NS}}_flush_share(buf, n, omp_get_thread_num(), omp_get_num_threads());
    *sum = total;
}
