#{include prelude.hip}
// Kernel family "tile" (lds=1, nw >= 1): the register sliding window of family "window", and
// each plane's x and y neighbours shared through a tile in shared memory: every thread puts
// its own values (from the window) and a share of the halo (loaded one plane ahead into
// registers) into the tile, then reads its neighbours from it. Two buffers, one barrier a
// plane.
constexpr int NW = {{NW}};         // z planes per thread, register sliding window
constexpr int PF = {{PF}};         // planes loaded ahead of the window
// Shared tile of one z plane: interior columns start at HX so vector accesses are aligned.
constexpr int TX = HX + BX * VEC + HX, TY = RY + BY * TILE + RY;
constexpr int NT = BX * BY;                         // threads per block
constexpr int NYH = 2 * RY * BX;                    // y-halo cells (vectors) per plane
constexpr int NXH = 2 * RX * BY * TILE;             // x-halo cells (values) per plane
constexpr int YPT = (NYH + NT - 1) / NT, XPT = (NXH + NT - 1) / NT;  // per thread

} // namespace {{NS}}

extern "C" __global__ void {{LAUNCH_BOUNDS}}{{NAME}}({{PARAMS}})
{
    using namespace {{NS}};
{{DIMS}}    {{BLOCK_INDEX}}
#{if DAMPED}
    const int txl = layer_slot_x();  // this thread's x slot in the block (prelude)
#{endif}
    const int i0 = R + (bi * BX + {{TX}}) * VEC;
    const int j0 = jbeg + (bj * BY + (int)threadIdx.y) * TILE;
#{if DAMPED}
    {{DWAVE_THREAD}}
#{endif}
    const int nvx = min(VEC, R + nx - i0);   // outputs of this thread inside the grid, x
    const int nvy = min(TILE, jend - j0);    // and y
    const int nly = jend + RY - j0;          // rows this thread may read (y halo included)
    const int k0 = R + (bk * BZ + (int)threadIdx.z) * NW;
    const int k1 = min(k0 + NW, R + nz);
    if (k0 >= k1)
        return;  // uniform across the block (bz = 1)
    // Every thread takes part in filling the tile, also those whose outputs fall outside.
    const bool readx = i0 < nx + 2 * R;
    const int tx0 = HX + {{TX}} * VEC, ty0 = RY + (int)threadIdx.y * TILE;
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
    const long long base = (long long)j0 * line + i0;

    // win[s] holds plane k - RZ + s of this thread's TILE x VEC columns; nxt[p] holds plane
    // k + RZ + p, loaded PF iterations ahead so that their latency hides behind the work.
    real win[2 * RZ + 1][TILE][VEC], nxt[PF][TILE][VEC];
    const real* lead = in + (long long)(k0 - RZ) * slice + base;
#pragma unroll
    for (int s = 0; s < 2 * RZ; ++s) {
#pragma unroll
        for (int t = 0; t < TILE; ++t)
            if (readx && t < nly)
                load(win[s][t], lead + t * line);
        lead += slice;
    }
    // lead: plane k + RZ from here on
#pragma unroll
    for (int p = 0; p < PF; ++p)
        if (k0 + p < k1) {
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (readx && t < nly)
                    load(nxt[p][t], lead + p * slice + t * line);
        }
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
        // PF planes ahead: the leading plane enters the queue while this one is computed
        if (k + PF < k1) {
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (readx && t < nly)
                    load(nxt[PF - 1][t], lead + PF * slice + t * line);
        }
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
        const real* tl = &tile[buf][0][0];
#{if HAS_Y}
        // rows j0-RY .. j0+TILE-1+RY of this thread's columns, from the tile (centre rows
        // from registers)
        real cy[TILE + 2 * RY][VEC];
#pragma unroll
        for (int t = -RY; t < TILE + RY; ++t) {
            if (t >= 0 && t < TILE) {
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    cy[t + RY][v] = win[RZ][t][v];
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
#{if WAVE}
#{if HAS_Y}
                const real c = cy[t + RY][v];
#{else}
                const real c = win[RZ][t][v];
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
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : win[RZ][t][q];
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
                    wz[r + R] = win[RZ + r][t][v];
                const real dz = d2(wz);
#{endif}
                {{COMBINE}}
            }
#{if DWAVE}
            {{DWAVE_ROW}}
#{endif}
#{if FAULT}
            if (fault_skip(k, nz))
                continue;
#{endif}
            if (t < nvy && nvx > 0)
                store(out + (pk - in) + t * line, res, nvx);
        }
#{if FAULT}
        fault_after(out, in, pk - in, i0 == R && j0 == jbeg, k);
#{endif}
        // the window moves one plane on, the tile to its other buffer
#pragma unroll
        for (int s = 0; s < 2 * RZ; ++s)
#pragma unroll
            for (int t = 0; t < TILE; ++t)
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    win[s][t][v] = win[s + 1][t][v];
        lead += slice;
        buf ^= 1;
    }
}
