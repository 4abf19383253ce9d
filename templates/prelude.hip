#{if INT_KERNEL}
// dwave's interior kernel {{NAME}}: the undamped wave expression where the damping is 0 (the
// deployments inout and sides launch it there); the same arguments (eta and the hole unused).
#{else}
{{BANNER}}
#{include header.hip}
#{endif}

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
#{if DAMPED}
// dwave's absorbing layer: ABS_W points on every face; at distance d into it the damping along
// one axis is ABS_S (d / ABS_W)^2, and g at a point the sum over the axes
// ({{ETA_FORM}}).
constexpr int ABS_W = {{ABS_W}};
constexpr real ABS_S = {{ABS_S}}, ABS_INV_W = {{ABS_INV_W}};
// The damping along an axis of n points at interior coordinate x.
__device__ __forceinline__ real damping1(int x, int n)
{
    const int d = x < ABS_W ? ABS_W - x : x > n - 1 - ABS_W ? x - (n - 1 - ABS_W) : 0;
    const real r = (real)d * ABS_INV_W;
    return ABS_S * r * r;
}
// Whether interior coordinate x of an axis of n points lies in the layer (x < W or x >= n - W):
// two integer operations, where the damping takes a conversion and three multiplies.
__device__ __forceinline__ int in_layer1(int x, int n)  // int: combined with |, not ||
{
    return (unsigned)(x - ABS_W) >= (unsigned)(n - 2 * ABS_W);
}
// Whether any of the m points x .. x + m - 1 of an axis of n points lies in the layer. The
// damped update tests a thread's output row with it first (with in_layer1 for its y and z), so
// a row inside costs the wave step's work alone, and the test of x is the same at every plane.
__device__ __forceinline__ int in_layer_run(int x, int m, int n)
{
    return (x < ABS_W) | (x + m > n - ABS_W);
}
// The layer's division a / (1 + g). On NVIDIA in f32, __fdividef (within 2 ulp for these
// denominators, 1 .. 1 + 3 S): the correctly rounded division is a subroutine call there, which
// cost the H200's ring family at 512^3 R=4 a seventh of its bandwidth (0.704 -> 0.804 of copy
// with __fdividef; 0.965 with no damping at all). f64, and AMD, divide as written.
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float layer_div(float a, float b) { return __fdividef(a, b); }
__device__ __forceinline__ double layer_div(double a, double b) { return a / b; }
#else
__device__ __forceinline__ real layer_div(real a, real b) { return a / b; }
#endif
// The thread's x slot in its block (its outputs' columns: i0, the tile's tx0). A warp issues
// on one of the SM's four sub-partitions, warp w on w % 4 (NVIDIA; an AMD CU spreads a
// workgroup's wavefronts over its four SIMDs alike, not measured here). With S = 2, 4, 8
// warps across a block row, a row's first slot (the x layer's in the grid's first block
// column, its last slot in the last) would sit on the same one or two of them in every row,
// which then issue the layer's work for the whole block while the others wait at the
// planes' barrier: the slot turns with the block row so that they spread over all four (an
// H200 ran the damped step 0.6-3% faster, bench/hybrid_h200/run6).
__device__ __forceinline__ int layer_slot_x()
{
#if defined(__AMDGCN__)
    constexpr int W = 64;
#else
    constexpr int W = 32;
#endif
    constexpr int S = BX % W == 0 ? BX / W : 1;  // warps across a block row
    const int tx = (int)threadIdx.x;
    if (S < 2 || (S & (S - 1)) != 0)
        return tx;
    const int turn = S == 2 ? ((int)threadIdx.y >> 1) & 1 : (int)threadIdx.y;
    return (tx / W + turn) % S * W + tx % W;
}
#{endif}

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
#{if BULK}
// The stream's bulk form, bulk=1, reaches buffer_load_dword ... lds on gfx9 through LLVM's
// intrinsic by name: FDT_LDS_DIRECT below, ring_bulk.hip. (In bulk=1 sources alone, as is
// the wait's branch below: a bulk=0 source stays what the system database measured.)
#{endif}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FDT_ASYNC_COPY 1
#elif defined(__AMDGCN__)
#define FDT_STAGED_COPY 1
#elif defined(FDT_HOST_ASYNC)  // tests/ring_host: cp.async and mbarriers emulated on CPU threads
#define FDT_ASYNC_COPY 1
#endif
#{if BULK}
// bulk=1 (ring_bulk.hip): cp.async.bulk, NVIDIA from sm_90 on (and tests/ring_host's
// emulation); on AMD's gfx9 (gfx90a, gfx94x) loads that write LDS directly.
// A host compilation pass (nvcc's, hipcc's: they parse every kernel and compile none; clang
// defines the device's __AMDGCN__ there too) takes neither: ring_bulk.hip gives it a fill
// that does nothing.
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900) || defined(FDT_HOST_ASYNC)
#define FDT_BULK_COPY 1
#elif defined(__AMDGCN__) && (defined(__GFX9__) || defined(__gfx90a__) || defined(__gfx942__))
#define FDT_LDS_DIRECT 1  // (clang before 17 defines no __GFX9__: its gfx90a and gfx942 by name)
#elif defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#error "config bulk=1: needs NVIDIA sm_90 or later (cp.async.bulk) or AMD gfx9 (loads into LDS)"
#endif
// The kernel's last parameter with bulk=1: the tensor map of `in` (fdtuned_tmap_make; made on
// the host by the CUDA driver's cuTensorMapEncodeTiled, 128 opaque bytes), passed by value and
// read in place (__grid_constant__: the copy names its parameter address); unused on AMD.
struct alignas(128) fdt_tmap {
    unsigned long long v[16];
};
#ifndef FDT_GRID_CONST
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FDT_GRID_CONST __grid_constant__
#else
#define FDT_GRID_CONST
#endif
#endif
#{endif}
#ifdef FDT_STAGED_COPY
enum { STAGED = 1 };  // copies staged in registers (an enumerator: no variable in the code)
#else
enum { STAGED = 0 };
#endif
__device__ __forceinline__ void copy_async(real* s, const real* g)
{
#if defined(FDT_HOST_ASYNC)
    fdt_host_copy_async(s, g, VEC * sizeof(real));
#elif defined(FDT_ASYNC_COPY)
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
#if defined(FDT_HOST_ASYNC)
    fdt_host_async_commit();
#elif defined(FDT_ASYNC_COPY)
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most N of this thread's groups are still in flight.
template <int N>
__device__ __forceinline__ void async_wait()
{
#if defined(FDT_HOST_ASYNC)
    fdt_host_async_wait(N);
#elif defined(FDT_ASYNC_COPY)
    asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
#{if BULK}
#elif defined(FDT_LDS_DIRECT)
    __builtin_amdgcn_s_waitcnt(0x0F70);  // vmcnt(0): this wave's loads into LDS have landed
#{endif}
#endif
}

#{if MBAR}
#ifdef FDT_ASYNC_COPY
// Barriers in shared memory (mbarrier, sm_80 on) that the stream's ring slots use instead of
// a block-wide barrier per step (stream.hip), named by their shared-memory address: a phase
// completes when its expected number of arrivals has come; waiters name its parity. (On the
// host, tests/ring_host emulates them: FDT_HOST_ASYNC.)

// Before first use, by one thread (and a block barrier after it): n arrivals per phase.
__device__ __forceinline__ void slot_bar_init(unsigned b, int n)
{
#ifdef FDT_HOST_ASYNC
    fdt_host_bar_init(b, n);
#else
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(b), "r"(n) : "memory");
#endif
}

// This thread's arrival, once every cp.async it issued so far has landed (the arrival the
// init's count expects: .noinc).
__device__ __forceinline__ void slot_bar_arrive_copies(unsigned b)
{
#ifdef FDT_HOST_ASYNC
    fdt_host_bar_arrive_copies(b);
#else
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(b) : "memory");
#endif
}

// This thread's arrival now (its reads of what the barrier guards are done: release).
__device__ __forceinline__ void slot_bar_arrive(unsigned b)
{
#ifdef FDT_HOST_ASYNC
    fdt_host_bar_arrive(b);
#else
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.shared.b64 st, [%0];\n\t}" :: "r"(b)
                 : "memory");
#endif
}

// Waits until the phase of the given parity has completed (acquire).
__device__ __forceinline__ void slot_bar_wait(unsigned b, int parity)
{
#ifdef FDT_HOST_ASYNC
    fdt_host_bar_wait(b, parity);
#else
    unsigned done;
    do {
// try_wait may suspend the thread until the phase completes instead of polling: on an H100
// lap R=8 f64 ran 0.805 of copy with it and 0.781 polling with test_wait (bench/notes/ab43.txt)
#if __CUDA_ARCH__ >= 900
#define FDT_MBAR_WAIT "try_wait"
#else
#define FDT_MBAR_WAIT "test_wait"
#endif
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier." FDT_MBAR_WAIT ".parity.shared.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(b), "r"(parity) : "memory");
#undef FDT_MBAR_WAIT
    } while (!done);
#endif
}
#{if BULK}

// Before the barriers' first use by bulk copies (the async proxy), by the thread that
// initialised them.
__device__ __forceinline__ void slot_bar_init_fence()
{
#ifndef FDT_HOST_ASYNC
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

// This thread's arrival, and bytes more that the phase waits for (the bulk copies this thread
// issues next, which complete them on the barrier).
__device__ __forceinline__ void slot_bar_arrive_tx(unsigned b, unsigned bytes)
{
#ifdef FDT_HOST_ASYNC
    fdt_host_bar_arrive_tx(b, bytes);
#else
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(bytes)
                 : "memory");
#endif
}

// bytes (a multiple of 16) from g to s, both 16-byte aligned, by the copy engine: no
// registers, no per-thread instructions; its bytes complete on barrier b.
__device__ __forceinline__ void bulk_copy(real* s, const real* g, unsigned bytes, unsigned b)
{
#ifdef FDT_HOST_ASYNC
    fdt_host_bulk_copy(s, g, bytes, b);
#else
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];"
                 :: "r"((unsigned)__cvta_generic_to_shared(s)), "l"(g), "r"(bytes), "r"(b)
                 : "memory");
#endif
}

// The box of tensor map m (a kernel parameter) at x, y, z (its first value's coordinates in
// the map, the box's extents the map's) into s (128-byte aligned), by the copy engine from
// one thread: its bytes, the whole box's (values outside the map's extents land as zeros),
// complete on barrier b.
__device__ __forceinline__ void bulk_tensor_copy(real* s, const fdt_tmap* m, int x, int y,
                                                 int z, unsigned b)
{
#ifdef FDT_HOST_ASYNC
    fdt_host_tensor_copy(s, m, x, y, z, b);
#else
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::"
                 "bytes [%0], [%1, {%2, %3, %4}], [%5];"
                 :: "r"((unsigned)__cvta_generic_to_shared(s)), "l"((unsigned long long)m),
                    "r"(x), "r"(y), "r"(z), "r"(b)
                 : "memory");
#endif
}
#{endif}
#endif
#{endif}

#{endif}
#{if BULK}
#ifdef FDT_LDS_DIRECT
// bulk=1 on AMD gfx9: buffer_load_dword with the lds bit, which writes the 4 bytes of each
// lane straight into LDS at M0 + 4 x lane (no VGPR holds them), through LLVM's intrinsic
// llvm.amdgcn.raw.buffer.load.lds, which hiprtc and clang take by this name (there is no
// builtin for it in clang 16 or 19, and __builtin_amdgcn_global_load_lds is gfx94x-only).
// Completes when the wave's vmcnt says so (async_wait).
typedef int fdt_rsrc __attribute__((ext_vector_type(4)));
__device__ void fdt_buffer_load_lds(fdt_rsrc rsrc, __attribute__((address_space(3))) void* lds,
                                    int size, int voffset, int soffset, int offset, int aux)
    __asm("llvm.amdgcn.raw.buffer.load.lds");

// A buffer resource over the 4 GB from base (raw: no stride, no format conversion; the
// third word composable_kernel uses for gfx90a and gfx94x). base must be the same across the
// wave (the ring's planes are: bz=1): read from its first lane, so that the resource sits in
// scalar registers (a varying one makes the compiler loop over the lanes' values).
__device__ __forceinline__ fdt_rsrc lds_rsrc(const void* base)
{
    const unsigned long long a = (unsigned long long)base;
    fdt_rsrc r = {__builtin_amdgcn_readfirstlane((int)(unsigned)a),
                  __builtin_amdgcn_readfirstlane((int)(unsigned)(a >> 32)), -1, 0x00020000};
    return r;
}

// 4 bytes per active lane, the lane's at byte voff of the buffer, into lds + 4 x lane (lds:
// the same for the whole wave).
__device__ __forceinline__ void lds_load(fdt_rsrc r, void* lds, int voff)
{
    fdt_buffer_load_lds(r, (__attribute__((address_space(3))) void*)lds, 4, voff, 0, 0, 0);
}
#endif
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
