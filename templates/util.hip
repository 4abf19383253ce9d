{{BANNER}}
#{include header.hip}

namespace fdt_util_{{PREC}} {

typedef {{REAL}} real;
typedef {{UBITS}} ubits;  // same size as real, for bitwise poison checks

// Keep in sync with fdt_input_value() in generator/reference.c: bit-identical values.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

__device__ __forceinline__ real value(unsigned long long seed, int field, long long i,
                                      long long j, long long k)
{
    unsigned long long h = mix64(seed + 0x632be59bd9b4e019ULL * (unsigned long long)(field + 1));
    h = mix64(h + (unsigned long long)i);
    h = mix64(h + (unsigned long long)j);
    h = mix64(h + (unsigned long long)k);
    const long long n = 2 * (long long)(h >> 40) + 1 - (1LL << 24);
    double v = (double)n * 5.9604644775390625e-08;  // 2^-24
    if (field == 2)
        v = 0.25 + 0.125 * (v + 1.0);
    return (real)v;
}

__device__ __forceinline__ ubits bits(real x) { return *reinterpret_cast<ubits*>(&x); }

// Padded coordinates of allocation element e; false outside the padded box.
__device__ __forceinline__ bool decode(long long e, long long offset, long long line,
                                      long long slice, int mx, int my, int mz, int& i, int& j,
                                      int& k)
{
    const long long pos = e - offset;
    if (pos < 0)
        return false;
    const long long kk = pos / slice, rem = pos - kk * slice, jj = rem / line;
    const long long ii = rem - jj * line;
    i = (int)ii;
    j = (int)jj;
    k = (int)kk;
    return kk < mz && jj < my && ii < mx;
}

// Matches fdt_check in runtime/worker code: 80 bytes, all 8-byte fields.
struct check {
    unsigned long long bad, nonfinite, touched, checked;
    unsigned long long first_bad, first_touched;
    unsigned long long max_err_bits;  // max |err| as the bits of a non-negative double
    double sum_sq_err, sum_sq_ref, unused;
};

constexpr int NT = 256;  // threads per block of the reducing kernels

template <typename T>
__device__ __forceinline__ T block_sum(T v, T* sh)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    const T r = sh[0];
    __syncthreads();
    return r;
}

template <typename T>
__device__ __forceinline__ T block_extreme(T v, T* sh, bool take_max)
{
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            const T o = sh[threadIdx.x + s];
            if (take_max ? o > sh[threadIdx.x] : o < sh[threadIdx.x])
                sh[threadIdx.x] = o;
        }
        __syncthreads();
    }
    const T r = sh[0];
    __syncthreads();
    return r;
}

} // namespace fdt_util_{{PREC}}

using namespace fdt_util_{{PREC}};

// Whole allocation: the padded box gets the field's values, everything else (base offset,
// row padding, spare row) a NaN pattern, so a kernel that reads there produces NaN.
extern "C" __global__ void fdt_fill_{{PREC}}(real* a, long long elems, long long offset,
                                          long long line, long long slice, int mx, int my,
                                          int mz, unsigned long long seed, int field, ubits pad)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < elems;
         e += (long long)gridDim.x * blockDim.x) {
        int i, j, k;
        if (decode(e, offset, line, slice, mx, my, mz, i, j, k))
            a[e] = value(seed, field, i, j, k);
        else
            reinterpret_cast<ubits*>(a)[e] = pad;
    }
}

extern "C" __global__ void fdt_poison_{{PREC}}(ubits* a, long long elems, ubits pattern)
{
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < elems;
         e += (long long)gridDim.x * blockDim.x)
        a[e] = pattern;
}

// Candidate against reference over the candidate's whole allocation: interior points
// within tol (absolute), everything else still bit-equal to the poison pattern.
extern "C" __global__ void __launch_bounds__(256)
fdt_compare_{{PREC}}(const real* cand, long long elems, long long offset, long long line,
                  long long slice, int R, int nx, int ny, int nz, const real* ref,
                  long long ref_offset, long long ref_line, long long ref_slice, double tol,
                  ubits poison, check* out)
{
    __shared__ double shd[NT];
    __shared__ unsigned long long shu[NT];
    unsigned long long bad = 0, nonfinite = 0, touched = 0, checked = 0;
    unsigned long long first_bad = ~0ULL, first_touched = ~0ULL;
    double max_err = 0, sse = 0, ssr = 0;
    const int mx = nx + 2 * R, my = ny + 2 * R, mz = nz + 2 * R;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < elems;
         e += (long long)gridDim.x * blockDim.x) {
        int i, j, k;
        const bool box = decode(e, offset, line, slice, mx, my, mz, i, j, k);
        const bool interior = box && i >= R && i < R + nx && j >= R && j < R + ny && k >= R &&
                              k < R + nz;
        const real c = cand[e];
        if (interior) {
            checked++;
            const double r = (double)ref[ref_offset + i + j * ref_line + k * ref_slice];
            const double d = (double)c - r;
            if (!(d - d == 0)) {  // NaN or infinite
                nonfinite++;
                if ((unsigned long long)e < first_bad)
                    first_bad = (unsigned long long)e;
                continue;
            }
            const double err = fabs(d);
            if (err > tol) {
                bad++;
                if ((unsigned long long)e < first_bad)
                    first_bad = (unsigned long long)e;
            }
            max_err = err > max_err ? err : max_err;
            sse += d * d;
            ssr += r * r;
        } else if (bits(c) != poison) {
            touched++;
            if ((unsigned long long)e < first_touched)
                first_touched = (unsigned long long)e;
        }
    }
    bad = block_sum(bad, shu);
    nonfinite = block_sum(nonfinite, shu);
    touched = block_sum(touched, shu);
    checked = block_sum(checked, shu);
    first_bad = block_extreme(first_bad, shu, false);
    first_touched = block_extreme(first_touched, shu, false);
    max_err = block_extreme(max_err, shd, true);
    sse = block_sum(sse, shd);
    ssr = block_sum(ssr, shd);
    if (threadIdx.x == 0) {
        atomicAdd(&out->bad, bad);
        atomicAdd(&out->nonfinite, nonfinite);
        atomicAdd(&out->touched, touched);
        atomicAdd(&out->checked, checked);
        atomicMin(&out->first_bad, first_bad);
        atomicMin(&out->first_touched, first_touched);
        atomicMax(&out->max_err_bits, (unsigned long long)__double_as_longlong(max_err));
        atomicAdd(&out->sum_sq_err, sse);
        atomicAdd(&out->sum_sq_ref, ssr);
    }
}

// An input array must come back exactly as fdt_fill left it.
extern "C" __global__ void __launch_bounds__(256)
fdt_check_fill_{{PREC}}(const real* a, long long elems, long long offset, long long line,
                     long long slice, int mx, int my, int mz, unsigned long long seed, int field,
                     ubits pad, check* out)
{
    __shared__ unsigned long long shu[NT];
    unsigned long long wrong = 0, first = ~0ULL;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < elems;
         e += (long long)gridDim.x * blockDim.x) {
        int i, j, k;
        const ubits want = decode(e, offset, line, slice, mx, my, mz, i, j, k)
                               ? bits(value(seed, field, i, j, k))
                               : pad;
        if (bits(a[e]) != want) {
            wrong++;
            if ((unsigned long long)e < first)
                first = (unsigned long long)e;
        }
    }
    wrong = block_sum(wrong, shu);
    first = block_extreme(first, shu, false);
    if (threadIdx.x == 0) {
        atomicAdd(&out->touched, wrong);
        atomicMin(&out->first_touched, first);
    }
}

extern "C" __global__ void fdt_gather_{{PREC}}(const real* a, const long long* idx, double* out,
                                            int n)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q < n)
        out[q] = (double)a[idx[q]];
}
