{{BANNER}}
#{include header.hip}

namespace {{NS}} {

typedef {{REAL}} real;
#{if VECTOR}
typedef {{REALV}} realv;
#{endif}

constexpr int R = {{R}};           // stencil radius, order of accuracy {{ORDER}}
constexpr int RX = {{RX}}, RY = {{RY}}, RZ = {{RZ}};  // neighbours read along x, y, z
constexpr int VEC = {{VEC}};       // outputs per thread along x, one vector access
constexpr int TILE = {{TILE}};     // outputs per thread along y
constexpr int BX = {{BX}}, BY = {{BY}}, BZ = {{BZ}};
constexpr int HX = {{HX}};         // x halo per side, in whole vectors

{{STENCIL}}
// VEC consecutive values at p, as one aligned vector load when VEC > 1.
__device__ __forceinline__ void load(real* d, const real* p)
{
#{if VECTOR}
    const realv t = *reinterpret_cast<const realv*>(p);
    {{UNPACK}}
#{else}
    d[0] = p[0];
#{endif}
}

#{if SHARED}
// VEC consecutive values into shared memory (aligned vector store when VEC > 1).
__device__ __forceinline__ void put(real* p, const real* v)
{
#{if VECTOR}
    realv t;
    {{PACK}}
    *reinterpret_cast<realv*>(p) = t;
#{else}
    p[0] = v[0];
#{endif}
}

#{endif}
#{if ASYNC}
// VEC values from global into shared memory without holding registers while they travel:
// cp.async on NVIDIA from sm_80 on, so PF planes can be in flight at no register cost.
// Elsewhere the copy is an ordinary load and store, complete when it returns, and
// commit/wait do nothing. AMD's compilers here have no global-to-LDS copy that fits (clang's
// __builtin_amdgcn_global_load_lds is missing from hiprtc 5.2 and clang 16, and moves 4
// bytes a lane to consecutive LDS addresses): there the ring stages a whole plane's loads in
// registers instead (FDT_STAGED_COPY, ring_fill.hip), so that they travel together.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FDT_ASYNC_COPY 1
#elif defined(__AMDGCN__)
#define FDT_STAGED_COPY 1
#endif
#ifdef FDT_STAGED_COPY
enum { STAGED = 1 };  // copies staged in registers (an enumerator: no variable in the code)
#else
enum { STAGED = 0 };
#endif
__device__ __forceinline__ void copy_async(real* s, const real* g)
{
#ifdef FDT_ASYNC_COPY
    const unsigned sa = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.{{CP_CACHE}}.shared.global{{CP_L2}} [%0], [%1], %2;"
                 :: "r"(sa), "l"(g), "n"(VEC * (int)sizeof(real)) : "memory");
#else
    real v[VEC];
    load(v, g);
    put(s, v);
#endif
}

#ifdef FDT_STAGED_COPY
// Waits until this thread's loads from global memory have returned: on gfx9 (CDNA) an
// explicit s_waitcnt vmcnt(0) that the compiler's wait insertion counts, so that it knows the
// staging registers free again where its own waits sat in branches (without it, clang 16
// waits for each of the next plane's loads before issuing the one after).
__device__ __forceinline__ void staged_wait()
{
#if defined(__GFX9__)
    __builtin_amdgcn_s_waitcnt(0x0F70);  // vmcnt(0); expcnt(7), lgkmcnt(15): no wait
#endif
}
#endif

// Closes the group of copies issued since the last commit (one group per plane).
__device__ __forceinline__ void async_commit()
{
#ifdef FDT_ASYNC_COPY
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most N of this thread's groups are still in flight.
template <int N>
__device__ __forceinline__ void async_wait()
{
#ifdef FDT_ASYNC_COPY
    asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
#endif
}

#{endif}
// The first n of the VEC values at p; one vector store when all are inside the grid.
__device__ __forceinline__ void store(real* p, const real* v, int n)
{
#{if VECTOR}
    if (n >= VEC) {
        realv t;
        {{PACK}}
#{if NT}
#if defined(__AMDGCN__)  // HIP's vector types wrap a native vector in .data
        __builtin_nontemporal_store(t.data, &reinterpret_cast<realv*>(p)->data);
#else
        __builtin_nontemporal_store(t, reinterpret_cast<realv*>(p));
#endif
#{else}
        *reinterpret_cast<realv*>(p) = t;
#{endif}
        return;
    }
#pragma unroll
    for (int q = 0; q < VEC; ++q)
        if (q < n)
            p[q] = v[q];
#{else}
    (void)n;
#{if NT}
    __builtin_nontemporal_store(v[0], p);
#{else}
    p[0] = v[0];
#{endif}
#{endif}
}

#{if FAULT}
// Test only (config key fault): kernels broken on purpose, so that the tests can show that
// verification and crash recovery catch them (fault=coef is in d2 above). Every family calls
// fault_skip before each store of plane k and fault_after once its stores of plane k are done;
// at is the offset of its first output in plane k, first whether it holds the grid's first
// row (i0 = R, j0 = jbeg).
__device__ __forceinline__ bool fault_skip(int k, int nz)
{
#{if FAULT_PLANE}
    return k == R + nz / 2;  // fault=plane: this plane is never written
#{else}
    (void)k, (void)nz;
    return false;
#{endif}
}

__device__ __forceinline__ void fault_after(real* out, const real* in, long long at, bool first,
                                            int k)
{
    (void)out, (void)in, (void)at, (void)first, (void)k;
#{if FAULT_HALO}
    if (first && k == R)
        out[at - 1] = 0;  // fault=halo: writes x = R-1
#{endif}
#{if FAULT_OOB}
    if (first && k == R)
        out[-(1LL << 40)] = 1;  // fault=oob: far outside any allocation
#{endif}
#{if FAULT_HANG}
    if (first)  // fault=hang: inputs lie in (-1, 1), so this never ends
        while (*(volatile const real*)in != (real)2) {
        }
#{endif}
}

#{endif}
