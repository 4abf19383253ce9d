{{BANNER}}
#include <hip/hip_runtime.h>

namespace {{NS}} {

typedef {{REAL}} real;
#{if VECTOR}
typedef {{REALV}} realv;
#{endif}

constexpr int R = {{R}};           // stencil radius, order of accuracy {{ORDER}}
constexpr int RX = {{RX}}, RY = {{RY}}, RZ = {{RZ}};  // neighbours read along x, y, z
constexpr int VEC = {{VEC}};       // outputs per thread along x, one vector access
constexpr int TILE = {{TILE}};     // outputs per thread along y
#{if WINDOW}
constexpr int NW = {{NW}};         // z planes per thread, register sliding window
constexpr int PF = {{PF}};         // planes loaded ahead of the window
#{endif}
constexpr int BX = {{BX}}, BY = {{BY}}, BZ = {{BZ}};
constexpr int HX = {{HX}};         // x halo per side, in whole vectors
#{if LDS}
// Shared tile of one z plane: interior columns start at HX so vector accesses are aligned.
constexpr int TX = HX + BX * VEC + HX, TY = RY + BY * TILE + RY;
constexpr int NT = BX * BY;                         // threads per block
constexpr int NYH = 2 * RY * BX;                    // y-halo cells (vectors) per plane
constexpr int NXH = 2 * RX * BY * TILE;             // x-halo cells (values) per plane
constexpr int YPT = (NYH + NT - 1) / NT, XPT = (NXH + NT - 1) / NT;  // per thread
#{endif}
#{if RING}
// Ring of shared tiles: plane p of the block's march (p = 0 is plane k0 - RZ) lives in slot
// p % S from the moment its copy is issued, PF planes ahead, until it has served as the
// centre plane RZ steps after it entered the window. Copies move whole vectors (chunks).
constexpr int TX = HX + BX * VEC + HX, TY = RY + BY * TILE + RY;
constexpr int NT = BX * BY;                         // threads per block
constexpr int S = RZ + 1 + PF;                      // ring slots
constexpr int HC = HX / VEC;                        // x-halo chunks per side of a row
constexpr int NYH = 2 * RY * BX;                    // y-halo chunks per plane
constexpr int NXH = BY * TILE * 2 * HC;             // x-halo chunks per plane
constexpr int YPT = (NYH + NT - 1) / NT, XPT = (NXH + NT - 1) / NT;  // per thread
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
#{if RING}
// VEC values from global into shared memory without holding registers while they travel:
// cp.async on NVIDIA from sm_80 on, so PF planes can be in flight at no register cost. HIP on
// AMD has no asynchronous global-to-LDS copy in source form: there the copy is an ordinary
// load and store, complete when it returns, and commit/wait do nothing.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FDT_ASYNC_COPY 1
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

} // namespace {{NS}}

extern "C" __global__ void {{LAUNCH_BOUNDS}}{{NAME}}({{PARAMS}})
{
    using namespace {{NS}};
{{DIMS}}    {{BLOCK_INDEX}}
    const int i0 = R + (bi * BX + (int)threadIdx.x) * VEC;
    const int j0 = jbeg + (bj * BY + (int)threadIdx.y) * TILE;
    const int nvx = min(VEC, R + nx - i0);   // outputs of this thread inside the grid, x
    const int nvy = min(TILE, jend - j0);    // and y
    const int nly = jend + RY - j0;          // rows this thread may read (y halo included)
#{if WINDOW}
    const int k0 = R + (bk * BZ + (int)threadIdx.z) * NW;
    const int k1 = min(k0 + NW, R + nz);
#{else}
    const int k0 = R + bk * BZ + (int)threadIdx.z;
    const int k1 = min(k0 + 1, R + nz);
#{endif}
#{if LDS}
    if (k0 >= k1)
        return;  // uniform across the block (bz = 1)
    // Every thread takes part in filling the tile, also those whose outputs fall outside.
    const bool readx = i0 < nx + 2 * R;
    const int tx0 = HX + (int)threadIdx.x * VEC, ty0 = RY + (int)threadIdx.y * TILE;
    const int iblk = R + bi * BX * VEC, jblk = jbeg + bj * BY * TILE;
    const int tid = (int)(threadIdx.x + BX * threadIdx.y);
    alignas(16) __shared__ real tile[2][TY][TX];
    int buf = 0;
    // This thread's halo cells, fixed for the whole march: plane offset and tile position
    // (-1: no cell, or outside what the array holds).
    long long yoff[YPT > 0 ? YPT : 1], xoff[XPT > 0 ? XPT : 1];
    int ylds[YPT > 0 ? YPT : 1], xlds[XPT > 0 ? XPT : 1];
#pragma unroll
    for (int q = 0; q < YPT; ++q) {
        const int c = tid + q * NT, row = c / BX, col = c % BX;
        const int ly = row < RY ? row : row + BY * TILE, jj = jblk - RY + ly;
        const int ii = iblk + col * VEC;
        ylds[q] = c < NYH ? ly * TX + HX + col * VEC : -1;
        yoff[q] = c < NYH && jj < jend + RY && ii < nx + 2 * R ? (long long)jj * line + ii : -1;
    }
#pragma unroll
    for (int q = 0; q < XPT; ++q) {
        const int c = tid + q * NT, row = c / (2 * RX > 0 ? 2 * RX : 1);
        const int col = c - row * 2 * RX, jj = jblk + row;
        const int lx = col < RX ? HX - RX + col : HX + BX * VEC + col - RX;
        const int ii = iblk - HX + lx;
        xlds[q] = c < NXH ? (RY + row) * TX + lx : -1;
        xoff[q] = c < NXH && jj < jend + RY && ii < nx + 2 * R ? (long long)jj * line + ii : -1;
    }
    real yv[YPT > 0 ? YPT : 1][VEC], xv[XPT > 0 ? XPT : 1];
#{else}
#{if RING}
    if (k0 >= k1)
        return;  // uniform across the block (bz = 1)
    // Every thread takes part in the copies and barriers, also those whose outputs fall outside.
    const bool readx = i0 < nx + 2 * R;
    const int tx0 = HX + (int)threadIdx.x * VEC, ty0 = RY + (int)threadIdx.y * TILE;
#{if SHARE}
    const int iblk = R + bi * BX * VEC, jblk = jbeg + bj * BY * TILE;
    const int tid = (int)(threadIdx.x + BX * threadIdx.y);
#{endif}
#{else}
    if (nvx <= 0 || nvy <= 0 || k0 >= k1)
        return;
#{endif}
#{endif}
    const long long base = (long long)j0 * line + i0;

#{if RING}
    // The ring (and wave's queues) in dynamic shared memory, sized at launch
    // (fdt_geometry.shared_bytes): deep rings of large tiles outgrow the 48 KB of static
    // shared memory that NVIDIA allows without the opt-in.
    extern __shared__ __attribute__((aligned(16))) unsigned char fdt_dyn_shared[];
    real (*const ring)[TY][TX] = reinterpret_cast<real (*)[TY][TX]>(fdt_dyn_shared);
#{if WAVE}
    // p_prev and c2 at the block's outputs of plane k, copied with plane k + RZ (the plane that
    // completes the window of k), read PF steps later: PF + 1 slots of each.
    real (*const rprev)[BY * TILE][BX * VEC] =
        reinterpret_cast<real (*)[BY * TILE][BX * VEC]>(&ring[S][0][0]);
    real (*const rc2)[BY * TILE][BX * VEC] = rprev + (PF + 1);
#{endif}
#{if SHARE}
    // The halo chunks this thread copies, the same in every plane: offset in the plane and
    // position in the tile (-1: no chunk, or outside what the array holds).
    long long yoff[YPT > 0 ? YPT : 1], xoff[XPT > 0 ? XPT : 1];
    int ylds[YPT > 0 ? YPT : 1], xlds[XPT > 0 ? XPT : 1];
#pragma unroll
    for (int q = 0; q < YPT; ++q) {
        const int c = tid + q * NT, row = c / BX, col = c % BX;
        const int ly = row < RY ? row : row + BY * TILE, jj = jblk - RY + ly;
        const int ii = iblk + col * VEC;
        ylds[q] = c < NYH ? ly * TX + HX + col * VEC : -1;
        yoff[q] = c < NYH && jj < jend + RY && ii < nx + 2 * R ? (long long)jj * line + ii : -1;
    }
#pragma unroll
    for (int q = 0; q < XPT; ++q) {
        const int c = tid + q * NT, row = c / (2 * HC > 0 ? 2 * HC : 1);
        const int col = c - row * 2 * HC, jj = jblk + row;
        const int lx = col < HC ? col * VEC : BX * VEC + col * VEC;
        const int ii = iblk - HX + lx;
        xlds[q] = c < NXH ? (RY + row) * TX + lx : -1;
        xoff[q] = c < NXH && jj < jend + RY && ii < nx + 2 * R ? (long long)jj * line + ii : -1;
    }
#{endif}
    // Issues the copies of march plane m (plane k0 - RZ + m) into ring slot rs: this thread's
    // own chunks always; the halo only for planes that are computed (the others serve as z
    // neighbours alone); wave's p_prev and c2 of the plane whose window m completes, into
    // queue slot ws.
    auto issue = [&](int m, int rs, int ws) {
        const int p = k0 - RZ + m;
        const real* pl = in + (long long)p * slice;
        real* tl = &ring[rs][0][0];
#pragma unroll
        for (int t = 0; t < TILE; ++t)
            if ({{READ_GUARD}})
                copy_async(tl + (ty0 + t) * TX + tx0, pl + base + t * line);
#{if SHARE}
        if (p >= k0 && p < k1) {
#pragma unroll
            for (int q = 0; q < YPT; ++q)
                if (yoff[q] >= 0)
                    copy_async(tl + ylds[q], pl + yoff[q]);
#pragma unroll
            for (int q = 0; q < XPT; ++q)
                if (xoff[q] >= 0)
                    copy_async(tl + xlds[q], pl + xoff[q]);
        }
#{endif}
#{if WAVE}
        const int o = p - RZ;
        if (o >= k0 && o < k1 && nvx > 0) {
            const long long at = (long long)o * slice + base;
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (t < nvy) {
                    const int row = (int)threadIdx.y * TILE + t, col = (int)threadIdx.x * VEC;
                    copy_async(&rprev[ws][row][col], prev + at + t * line);
                    copy_async(&rc2[ws][row][col], c2 + at + t * line);
                }
        }
#{else}
        (void)ws;
#{endif}
    };
    // win[p % U] holds march plane p of this thread's TILE x VEC columns, read from the ring
    // as the plane lands. The march is unrolled by the window's period U, so the planes stay
    // in their registers while the window moves (no copies from register to register).
    constexpr int U = 2 * RZ + 1;
    real win[U][TILE][VEC];
    const int steps = k1 - k0 + 2 * RZ;
#pragma unroll
    for (int m = 0; m < PF; ++m) {
        if (m < steps)
            issue(m, m % S, m % (PF + 1));
        async_commit();  // empty groups too: the wait below counts groups
    }
    int rs = 0, ris = PF % S;      // ring slots of planes m and m + PF
    int wr = 0, wis = PF;          // queue slots read at step m and written for m + PF
    for (int m0 = 0; m0 < steps; m0 += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int m = m0 + u;
        if (m >= steps)
            break;
        async_wait<PF - 1>();  // this thread's copies of plane m have landed
#{if SHARE}
        __syncthreads();       // everyone's have, and step m - 1 is done with the slot reused now
#{endif}
        if (m + PF < steps)
            issue(m + PF, ris, wis);
        async_commit();
#pragma unroll
        for (int t = 0; t < TILE; ++t)
            load(win[u][t], &ring[rs][ty0 + t][tx0]);
        const int cs = rs < RZ ? rs + S - RZ : rs - RZ;  // slot of plane m - RZ
#{if WAVE}
        const int wq = wr;
        wr = wr == PF ? 0 : wr + 1;
#{endif}
        rs = rs + 1 == S ? 0 : rs + 1;
        ris = ris + 1 == S ? 0 : ris + 1;
        wis = wis == PF ? 0 : wis + 1;
        if (m < 2 * RZ)
            continue;  // still filling the window
        const int k = k0 + m - 2 * RZ;
        const real* pk = in + (long long)k * slice + base;  // centre of row j0, plane k
        const real* tl = &ring[cs][0][0];                  // plane k with its halo
#{else}
#{if WINDOW}
    // win[s] holds plane k - RZ + s of this thread's TILE x VEC columns; nxt[p] holds plane
    // k + RZ + p, loaded PF iterations ahead so that their latency hides behind the work.
    real win[2 * RZ + 1][TILE][VEC], nxt[PF][TILE][VEC];
    const real* lead = in + (long long)(k0 - RZ) * slice + base;
#pragma unroll
    for (int s = 0; s < 2 * RZ; ++s) {
#pragma unroll
        for (int t = 0; t < TILE; ++t)
            if ({{READ_GUARD}})
                load(win[s][t], lead + t * line);
        lead += slice;
    }
    // lead: plane k + RZ from here on
#pragma unroll
    for (int p = 0; p < PF; ++p)
        if (k0 + p < k1) {
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if ({{READ_GUARD}})
                    load(nxt[p][t], lead + p * slice + t * line);
        }
#{if LDS}
    {
        const real* pl = in + (long long)k0 * slice;
#pragma unroll
        for (int q = 0; q < YPT; ++q)
            if (yoff[q] >= 0)
                load(yv[q], pl + yoff[q]);
#pragma unroll
        for (int q = 0; q < XPT; ++q)
            if (xoff[q] >= 0)
                xv[q] = pl[xoff[q]];
    }
#{endif}

    for (int k = k0; k < k1; ++k) {
#pragma unroll
        for (int t = 0; t < TILE; ++t)
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
                win[2 * RZ][t][v] = nxt[0][t][v];
#pragma unroll
                for (int p = 0; p + 1 < PF; ++p)
                    nxt[p][t][v] = nxt[p + 1][t][v];
            }
        const real* pk = lead - (long long)RZ * slice;  // centre of row j0, plane k
#{if LDS}
        // plane k into the shared tile: own values from registers, halo from the prefetch
#pragma unroll
        for (int t = 0; t < TILE; ++t)
            put(&tile[buf][ty0 + t][tx0], win[RZ][t]);
#pragma unroll
        for (int q = 0; q < YPT; ++q)
            if (ylds[q] >= 0)
                put(&tile[buf][0][0] + ylds[q], yv[q]);
#pragma unroll
        for (int q = 0; q < XPT; ++q)
            if (xlds[q] >= 0)
                (&tile[buf][0][0])[xlds[q]] = xv[q];
        __syncthreads();
#{endif}
        // PF planes ahead: the leading plane enters the queue while this one is computed
        if (k + PF < k1) {
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if ({{READ_GUARD}})
                    load(nxt[PF - 1][t], lead + PF * slice + t * line);
        }
#{if LDS}
        // and the halo of the next plane goes to registers before the tile is read
        if (k + 1 < k1) {
            const real* pl = pk + slice - base;
#pragma unroll
            for (int q = 0; q < YPT; ++q)
                if (yoff[q] >= 0)
                    load(yv[q], pl + yoff[q]);
#pragma unroll
            for (int q = 0; q < XPT; ++q)
                if (xoff[q] >= 0)
                    xv[q] = pl[xoff[q]];
        }
#{endif}
#{else}
    {
        const int k = k0;
        const real* pk = in + (long long)k * slice + base;
#{endif}
#{endif}
#{if !SHARED}
#{if HAS_Y}
        // rows j0-RY .. j0+TILE-1+RY of plane k, ascending addresses
        real cy[TILE + 2 * RY][VEC];
#{endif}
#{if HAS_X}
        real xl[TILE][HX], xr[TILE][HX];
#{endif}
#{if !WINDOW}
#{if HAS_Z}
        real zlo[RZ][TILE][VEC];
#pragma unroll
        for (int r = RZ; r >= 1; --r)
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (t < nvy)
                    load(zlo[r - 1][t], pk - r * slice + t * line);
#{endif}
#{if !HAS_Y}
        real ctr[TILE][VEC];
#{endif}
#{endif}
#{if ROWLOOP}
#pragma unroll
        for (int t = -RY; t < TILE + RY; ++t) {
            const real* pr = pk + t * line;
#{if HAS_X}
            if (t >= 0 && t < TILE && t < nvy) {
#pragma unroll
                for (int q = 0; q < HX; q += VEC)
                    load(&xl[t][q], pr - HX + q);
            }
#{endif}
#{if HAS_Y}
#{if WINDOW}
            if (t >= 0 && t < TILE) {
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    cy[t + RY][v] = win[{{WC}}][t][v];
            } else if (t < nly) {
                load(cy[t + RY], pr);
            }
#{else}
            if (t < nly)
                load(cy[t + RY], pr);
#{endif}
#{else}
#{if !WINDOW}
            if (t < nvy)
                load(ctr[t], pr);
#{endif}
#{endif}
#{if HAS_X}
            if (t >= 0 && t < TILE && t < nvy) {
#pragma unroll
                for (int q = 0; q < HX; q += VEC)
                    load(&xr[t][q], pr + VEC + q);
            }
#{endif}
        }
#{endif}
#{if !WINDOW}
#{if HAS_Z}
        real zhi[RZ][TILE][VEC];
#pragma unroll
        for (int r = 1; r <= RZ; ++r)
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (t < nvy)
                    load(zhi[r - 1][t], pk + r * slice + t * line);
#{endif}
#{endif}
#{endif}
#{if SHARED}
#{if LDS}
        const real* tl = &tile[buf][0][0];
#{endif}
#{if HAS_Y}
        // rows j0-RY .. j0+TILE-1+RY of this thread's columns, from the tile (centre rows
        // from registers)
        real cy[TILE + 2 * RY][VEC];
#pragma unroll
        for (int t = -RY; t < TILE + RY; ++t) {
            if (t >= 0 && t < TILE) {
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    cy[t + RY][v] = win[{{WC}}][t][v];
            } else {
                load(cy[t + RY], tl + (ty0 + t) * TX + tx0);
            }
        }
#{endif}
#{if HAS_X}
        real xl[TILE][HX], xr[TILE][HX];
#pragma unroll
        for (int t = 0; t < TILE; ++t)
#pragma unroll
            for (int q = 0; q < HX; q += VEC) {
                load(&xl[t][q], tl + (ty0 + t) * TX + tx0 - HX + q);
                load(&xr[t][q], tl + (ty0 + t) * TX + tx0 + VEC + q);
            }
#{endif}
#{endif}

#pragma unroll
        for (int t = 0; t < TILE; ++t) {
#{if WAVE}
            real pv[VEC], cv[VEC];
#{if RING}
            load(pv, &rprev[wq][threadIdx.y * TILE + t][threadIdx.x * VEC]);
            load(cv, &rc2[wq][threadIdx.y * TILE + t][threadIdx.x * VEC]);
#{else}
            if (t < nvy && nvx > 0) {
                load(pv, prev + (pk - in) + t * line);
                load(cv, c2 + (pk - in) + t * line);
            }
#{endif}
#{endif}
            real res[VEC];
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
#{if NEED_C}
#{if HAS_Y}
                const real c = cy[t + RY][v];
#{else}
#{if WINDOW}
                const real c = win[{{WC}}][t][v];
#{else}
                const real c = ctr[t][v];
#{endif}
#{endif}
#{endif}
#{if HAS_X}
                real wx[2 * R + 1];
#pragma unroll
                for (int r = -R; r <= R; ++r) {
                    const int q = v + r;
#{if HAS_Y}
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : cy[t + RY][q];
#{else}
#{if WINDOW}
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : win[{{WC}}][t][q];
#{else}
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : ctr[t][q];
#{endif}
#{endif}
                }
                const real dx = d2(wx);
#{endif}
#{if HAS_Y}
                real wy[2 * R + 1];
#pragma unroll
                for (int r = -R; r <= R; ++r)
                    wy[r + R] = cy[t + RY + r][v];
                const real dy = d2(wy);
#{endif}
#{if HAS_Z}
                real wz[2 * R + 1];
#pragma unroll
                for (int r = -R; r <= R; ++r)
#{if WINDOW}
                    wz[r + R] = win[{{WZ}}][t][v];
#{else}
                    wz[r + R] = r < 0 ? zlo[-r - 1][t][v] : r > 0 ? zhi[r - 1][t][v] : c;
#{endif}
                const real dz = d2(wz);
#{endif}
                {{COMBINE}}
            }
#{if FAULT_PLANE}
            if (k == R + nz / 2)
                continue;  // fault=plane: this plane is never written
#{endif}
            if (t < nvy && nvx > 0)
                store(out + (pk - in) + t * line, res, nvx);
        }
#{if FAULT_HALO}
        if (i0 == R && j0 == jbeg && k == R)
            out[base + (long long)k * slice - 1] = 0;  // fault=halo: writes x = R-1
#{endif}
#{if FAULT_OOB}
        if (i0 == R && j0 == jbeg && k == R)
            out[-(1LL << 40)] = 1;  // fault=oob: far outside any allocation
#{endif}
#{if FAULT_HANG}
        if (i0 == R && j0 == jbeg)  // fault=hang: inputs lie in (-1, 1), so this never ends
            while (*(volatile const real*)in != (real)2) {
            }
#{endif}
#{if REGWIN}
#pragma unroll
        for (int s = 0; s < 2 * RZ; ++s)
#pragma unroll
            for (int t = 0; t < TILE; ++t)
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    win[s][t][v] = win[s + 1][t][v];
        lead += slice;
#{if LDS}
        buf ^= 1;
#{endif}
#{endif}
    }
#{if RING}
    }
#{endif}
}
