#{include prelude.hip}
// Kernel family "window" (lds=0, nw >= 1): each thread marches NW z planes of its TILE x VEC
// columns, keeping the 2 RZ + 1 planes of the z stencil in a register sliding window with PF
// planes loaded ahead; x and y neighbours come straight from global memory.
constexpr int NW = {{NW}};         // z planes per thread, register sliding window
constexpr int PF = {{PF}};         // planes loaded ahead of the window

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
    if (nvx <= 0 || nvy <= 0 || k0 >= k1)
        return;
    const long long base = (long long)j0 * line + i0;

    // win[s] holds plane k - RZ + s of this thread's TILE x VEC columns; nxt[p] holds plane
    // k + RZ + p, loaded PF iterations ahead so that their latency hides behind the work.
    real win[2 * RZ + 1][TILE][VEC], nxt[PF][TILE][VEC];
    const real* lead = in + (long long)(k0 - RZ) * slice + base;
#pragma unroll
    for (int s = 0; s < 2 * RZ; ++s) {
#pragma unroll
        for (int t = 0; t < TILE; ++t)
            if (t < nly)
                load(win[s][t], lead + t * line);
        lead += slice;
    }
    // lead: plane k + RZ from here on
#pragma unroll
    for (int p = 0; p < PF; ++p)
        if (k0 + p < k1) {
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (t < nly)
                    load(nxt[p][t], lead + p * slice + t * line);
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
        // PF planes ahead: the leading plane enters the queue while this one is computed
        if (k + PF < k1) {
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (t < nly)
                    load(nxt[PF - 1][t], lead + PF * slice + t * line);
        }
#{if HAS_Y}
        // rows j0-RY .. j0+TILE-1+RY of plane k, ascending addresses
        real cy[TILE + 2 * RY][VEC];
#{endif}
#{if HAS_X}
        real xl[TILE][HX], xr[TILE][HX];
#{endif}
#{if HAS_XY}
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
            if (t >= 0 && t < TILE) {
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    cy[t + RY][v] = win[RZ][t][v];
            } else if (t < nly) {
                load(cy[t + RY], pr);
            }
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
        // the window moves one plane on
#pragma unroll
        for (int s = 0; s < 2 * RZ; ++s)
#pragma unroll
            for (int t = 0; t < TILE; ++t)
#pragma unroll
                for (int v = 0; v < VEC; ++v)
                    win[s][t][v] = win[s + 1][t][v];
        lead += slice;
    }
}
