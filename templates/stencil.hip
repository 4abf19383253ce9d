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
#{endif}
constexpr int BX = {{BX}}, BY = {{BY}}, BZ = {{BZ}};
constexpr int HX = {{HX}};         // x halo per side, in whole vectors
#{if LDS}
constexpr int TX = BX * VEC + 2 * RX;    // shared tile: x extent with halo
constexpr int TY = BY * TILE + 2 * RY;   // shared tile: y extent with halo
constexpr int NHALO = 2 * RY * BX * VEC + 2 * RX * BY * TILE;  // halo cells per plane
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
    {{BLOCK_INDEX}}
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
    const bool readx = i0 < nx + 2 * R;      // this thread's columns exist in the array
    const int tx0 = RX + (int)threadIdx.x * VEC, ty0 = RY + (int)threadIdx.y * TILE;
    const int iblk = R + bi * BX * VEC, jblk = jbeg + bj * BY * TILE;
    const int tid = (int)(threadIdx.x + BX * threadIdx.y);
    __shared__ real tile[2][TY][TX];
    int buf = 0;
#{else}
    if (nvx <= 0 || nvy <= 0 || k0 >= k1)
        return;
#{endif}
    const long long base = (long long)j0 * line + i0;

#{if WINDOW}
    // win[s] holds plane k - RZ + s of this thread's TILE x VEC columns.
    real win[2 * RZ + 1][TILE][VEC];
    const real* lead = in + (long long)(k0 - RZ) * slice + base;
#pragma unroll
    for (int s = 0; s < 2 * RZ; ++s) {
#pragma unroll
        for (int t = 0; t < TILE; ++t)
#{if LDS}
            if (readx && t < nly)
#{else}
            if (t < nly)
#{endif}
                load(win[s][t], lead + t * line);
        lead += slice;
    }

    for (int k = k0; k < k1; ++k) {
        // the leading plane k + RZ enters the window
#pragma unroll
        for (int t = 0; t < TILE; ++t)
#{if LDS}
            if (readx && t < nly)
#{else}
            if (t < nly)
#{endif}
                load(win[2 * RZ][t], lead + t * line);
        const real* pk = lead - (long long)RZ * slice;  // centre of row j0, plane k
#{else}
    {
        const int k = k0;
        const real* pk = in + (long long)k * slice + base;
#{endif}
#{if LDS}
        // plane k into the shared tile: own values from registers, halo from memory
#pragma unroll
        for (int t = 0; t < TILE; ++t)
#pragma unroll
            for (int v = 0; v < VEC; ++v)
                tile[buf][ty0 + t][tx0 + v] = win[RZ][t][v];
        {
            const real* pl = in + (long long)k * slice;
            for (int c = tid; c < NHALO; c += BX * BY) {
                int ly, lx;
                if (c < 2 * RY * BX * VEC) {         // rows below and above the block
                    const int row = c / (BX * VEC);
                    ly = row < RY ? row : row + BY * TILE;
                    lx = RX + c % (BX * VEC);
                } else {                             // columns left and right
                    const int d = c - 2 * RY * BX * VEC;
                    const int col = d % (2 * RX);
                    ly = RY + d / (2 * RX);
                    lx = col < RX ? col : col + BX * VEC;
                }
                const int jj = jblk - RY + ly, ii = iblk - RX + lx;
                if (jj < jend + RY && ii < nx + 2 * R)
                    tile[buf][ly][lx] = pl[(long long)jj * line + ii];
            }
        }
        __syncthreads();
#{else}
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
                    cy[t + RY][v] = win[RZ][t][v];
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

#pragma unroll
        for (int t = 0; t < TILE; ++t) {
#{if WAVE}
            real pv[VEC], cv[VEC];
            if (t < nvy && nvx > 0) {
                load(pv, prev + (pk - in) + t * line);
                load(cv, c2 + (pk - in) + t * line);
            }
#{endif}
            real res[VEC];
#pragma unroll
            for (int v = 0; v < VEC; ++v) {
#{if NEED_C}
#{if LDS}
                const real c = tile[buf][ty0 + t][tx0 + v];
#{else}
#{if HAS_Y}
                const real c = cy[t + RY][v];
#{else}
#{if WINDOW}
                const real c = win[RZ][t][v];
#{else}
                const real c = ctr[t][v];
#{endif}
#{endif}
#{endif}
#{endif}
#{if HAS_X}
                real wx[2 * R + 1];
#pragma unroll
                for (int r = -R; r <= R; ++r) {
#{if LDS}
                    wx[r + R] = tile[buf][ty0 + t][tx0 + v + r];
#{else}
                    const int q = v + r;
#{if HAS_Y}
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : cy[t + RY][q];
#{else}
#{if WINDOW}
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : win[RZ][t][q];
#{else}
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : ctr[t][q];
#{endif}
#{endif}
#{endif}
                }
                const real dx = d2(wx);
#{endif}
#{if HAS_Y}
                real wy[2 * R + 1];
#pragma unroll
                for (int r = -R; r <= R; ++r)
#{if LDS}
                    wy[r + R] = tile[buf][ty0 + t + r][tx0 + v];
#{else}
                    wy[r + R] = cy[t + RY + r][v];
#{endif}
                const real dy = d2(wy);
#{endif}
#{if HAS_Z}
                real wz[2 * R + 1];
#pragma unroll
                for (int r = -R; r <= R; ++r)
#{if WINDOW}
                    wz[r + R] = win[RZ + r][t][v];
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
#{if WINDOW}
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
}
