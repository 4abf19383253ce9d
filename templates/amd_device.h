// fdtune's hip/hip_runtime.h on AMD: the part of the HIP device API that fdtune's kernels
// use (templates/*.hip), so that the source compiles with no ROCm header installed.
//
// hiprtc gets this file in memory (hiprtcCreateProgram's headers) and defines __HIPCC_RTC__:
// it pre-includes its own runtime header (-include hiprtc_runtime.h, built into hiprtc), which
// declares all of this already, so nothing is added here. The offline compiler (clang with
// -nogpuinc -nostdinc, runtime/amd_clang.c) gets no HIP header at all and takes everything
// from below. Each definition follows HIP's own (hip/amd_detail/*.h), built on the compiler's
// AMDGPU builtins only: no device library is linked (-nogpulib), so nothing here may call
// one (ocml, ockl).
#pragma once

#if !defined(__HIPCC_RTC__)

#define __HIP_PLATFORM_AMD__ 1

// Function and variable qualifiers, as HIP defines them for clang.
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
// __launch_bounds__(threads) caps the block size the code is compiled for; a second argument
// (CUDA's minimum blocks per multiprocessor) becomes the minimum waves per EU, as in HIP.
#define __fdt_lb1(t) __attribute__((amdgpu_flat_work_group_size(1, t)))
#define __fdt_lb2(t, w) __attribute__((amdgpu_flat_work_group_size(1, t), amdgpu_waves_per_eu(w)))
#define __fdt_lb_pick(_1, _2, m, ...) m
#define __launch_bounds__(...) __fdt_lb_pick(__VA_ARGS__, __fdt_lb2, __fdt_lb1)(__VA_ARGS__)

// threadIdx, blockIdx, blockDim, gridDim: read-only properties, as in clang's and HIP's
// headers, so that `threadIdx.x` is one builtin call. blockDim is the launch's block size and
// gridDim the number of blocks (the grid in work-items over the block, rounded up as ockl's
// __ockl_get_num_groups does); both read the dispatch packet or, with code object v5, the
// implicit kernel arguments, whichever the target uses.
#define __FDT_BUILTIN_DIM(type, fx, fy, fz)                                                     \
    struct type {                                                                             \
        static __device__ __forceinline__ unsigned int get_x() { return fx; }                 \
        static __device__ __forceinline__ unsigned int get_y() { return fy; }                 \
        static __device__ __forceinline__ unsigned int get_z() { return fz; }                 \
        __declspec(property(get = get_x)) unsigned int x;                                     \
        __declspec(property(get = get_y)) unsigned int y;                                     \
        __declspec(property(get = get_z)) unsigned int z;                                     \
        type() = delete;                                                                      \
        type(const type&) = delete;                                                           \
        void operator=(const type&) const = delete;                                           \
    }

static __device__ __forceinline__ unsigned int __fdt_blocks(unsigned int n, unsigned int d)
{
    const unsigned int q = n / d;
    return q + (n > q * d);
}

__FDT_BUILTIN_DIM(__fdt_thread_idx, __builtin_amdgcn_workitem_id_x(),
                  __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z());
__FDT_BUILTIN_DIM(__fdt_block_idx, __builtin_amdgcn_workgroup_id_x(),
                  __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z());
__FDT_BUILTIN_DIM(__fdt_block_dim, __builtin_amdgcn_workgroup_size_x(),
                  __builtin_amdgcn_workgroup_size_y(), __builtin_amdgcn_workgroup_size_z());
__FDT_BUILTIN_DIM(__fdt_grid_dim,
                  __fdt_blocks(__builtin_amdgcn_grid_size_x(), __builtin_amdgcn_workgroup_size_x()),
                  __fdt_blocks(__builtin_amdgcn_grid_size_y(), __builtin_amdgcn_workgroup_size_y()),
                  __fdt_blocks(__builtin_amdgcn_grid_size_z(), __builtin_amdgcn_workgroup_size_z()));
#undef __FDT_BUILTIN_DIM

// Never defined: only their properties are read, and those are static functions.
extern const __device__ __attribute__((weak)) __fdt_thread_idx threadIdx;
extern const __device__ __attribute__((weak)) __fdt_block_idx blockIdx;
extern const __device__ __attribute__((weak)) __fdt_block_dim blockDim;
extern const __device__ __attribute__((weak)) __fdt_grid_dim gridDim;

// Block-wide barrier that also orders the block's shared-memory (LDS) accesses, as HIP's
// __syncthreads: release fence, s_barrier, acquire fence, all at work-group scope.
static __device__ __forceinline__ __attribute__((convergent)) void __syncthreads()
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// HIP's vector types: the native vector in .data (what nontemporal stores take), and the
// components x, y, z, w over the same storage; aligned to their size like HIP's.
#define __FDT_VECTOR2(name, T)                                                                \
    struct name {                                                                             \
        typedef T native __attribute__((ext_vector_type(2)));                                 \
        union {                                                                               \
            native data;                                                                      \
            struct {                                                                          \
                T x, y;                                                                       \
            };                                                                                \
        };                                                                                    \
    }
#define __FDT_VECTOR4(name, T)                                                                \
    struct name {                                                                             \
        typedef T native __attribute__((ext_vector_type(4)));                                 \
        union {                                                                               \
            native data;                                                                      \
            struct {                                                                          \
                T x, y, z, w;                                                                 \
            };                                                                                \
        };                                                                                    \
    }
__FDT_VECTOR2(float2, float);
__FDT_VECTOR4(float4, float);
__FDT_VECTOR2(double2, double);
#undef __FDT_VECTOR2
#undef __FDT_VECTOR4
static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 is HIP's");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2 is HIP's");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 is HIP's");

// Integer min and max (HIP's device overloads for int).
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }

// Device-wide (agent scope) relaxed atomics, as HIP's atomicAdd/Min/Max; a double add is
// the compiler's own (a compare-and-swap loop unless -munsafe-fp-atomics allows the
// hardware's).
static __device__ __forceinline__ unsigned long long atomicAdd(unsigned long long* p,
                                                               unsigned long long v)
{
    return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
static __device__ __forceinline__ double atomicAdd(double* p, double v)
{
    return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
static __device__ __forceinline__ unsigned long long atomicMin(unsigned long long* p,
                                                               unsigned long long v)
{
    return __hip_atomic_fetch_min(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
static __device__ __forceinline__ unsigned long long atomicMax(unsigned long long* p,
                                                               unsigned long long v)
{
    return __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}

// Bits and math the verification kernels use.
static __device__ __forceinline__ long long __double_as_longlong(double x)
{
    return __builtin_bit_cast(long long, x);
}
static __device__ __forceinline__ double fabs(double x) { return __builtin_fabs(x); }

#endif // !__HIPCC_RTC__
