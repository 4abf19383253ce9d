#{include prelude.hip}
// Kernel family "direct" (lds=0, nw=0): each thread computes its TILE x VEC outputs of one z
// plane, reading every neighbour straight from global memory (no shared memory, no window).

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
    const int k0 = R + bk * BZ + (int)threadIdx.z;
    const int k1 = min(k0 + 1, R + nz);
    if (nvx <= 0 || nvy <= 0 || k0 >= k1)
        return;
    const long long base = (long long)j0 * line + i0;

    {
        const int k = k0;
        const real* pk = in + (long long)k * slice + base;
#{if HAS_Y}
        // rows j0-RY .. j0+TILE-1+RY of plane k, ascending addresses
        real cy[TILE + 2 * RY][VEC];
#{endif}
#{if HAS_X}
        real xl[TILE][HX], xr[TILE][HX];
#{endif}
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
            if (t < nly)
                load(cy[t + RY], pr);
#{else}
            if (t < nvy)
                load(ctr[t], pr);
#{endif}
#{if HAS_X}
            if (t >= 0 && t < TILE && t < nvy) {
#pragma unroll
                for (int q = 0; q < HX; q += VEC)
                    load(&xr[t][q], pr + VEC + q);
            }
#{endif}
        }
#{if HAS_Z}
        real zhi[RZ][TILE][VEC];
#pragma unroll
        for (int r = 1; r <= RZ; ++r)
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (t < nvy)
                    load(zhi[r - 1][t], pk + r * slice + t * line);
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
#{if HAS_Y}
                const real c = cy[t + RY][v];
#{else}
                const real c = ctr[t][v];
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
                    wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : ctr[t][q];
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
                    wz[r + R] = r < 0 ? zlo[-r - 1][t][v] : r > 0 ? zhi[r - 1][t][v] : c;
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
    }
}
