#{include prelude.hip}
// Kernel family "ring" (lds=2, nw >= 1): the block marches its NW planes through a ring of
// shared tiles, each filled by asynchronous copies (copy_async) PF planes ahead of use; every
// thread keeps its own columns of the 2 RZ + 1 planes of the z stencil in registers and reads
// its x and y neighbours from the ring. Also serves d2z, whose ring is then a queue of each
// thread's own planes (no halo, no barrier).
constexpr int NW = {{NW}};         // z planes per thread, register sliding window
constexpr int PF = {{PF}};         // planes loaded ahead of the window
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
    // Every thread takes part in the copies and barriers, also those whose outputs fall outside.
    const bool readx = i0 < nx + 2 * R;
    const int tx0 = HX + {{TX}} * VEC, ty0 = RY + (int)threadIdx.y * TILE;
#{if HAS_XY}
    const int iblk = R + bi * BX * VEC, jblk = jbeg + bj * BY * TILE;
    const int tid = (int)(threadIdx.x + BX * threadIdx.y);
#{endif}
    const long long base = (long long)j0 * line + i0;

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
#{include ring_fill.hip}
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
        land();
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
#{if HAS_XY}
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
            if (m < 2 * RZ) {
                land();
                continue;  // still filling the window
            }
            const int k = k0 + m - 2 * RZ;
            const real* pk = in + (long long)k * slice + base;  // centre of row j0, plane k
            const real* tl = &ring[cs][0][0];                  // plane k with its halo
#{if HAS_Y}
            // rows j0-RY .. j0+TILE-1+RY of this thread's columns, from the tile (centre rows
            // from registers)
            real cy[TILE + 2 * RY][VEC];
#pragma unroll
            for (int t = -RY; t < TILE + RY; ++t) {
                if (t >= 0 && t < TILE) {
#pragma unroll
                    for (int v = 0; v < VEC; ++v)
                        cy[t + RY][v] = win[(u + U - RZ) % U][t][v];
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

            real rows[TILE][VEC];  // the step's outputs (STAGED: stored once the plane has landed)
#pragma unroll
            for (int t = 0; t < TILE; ++t) {
#{if WAVE}
                real pv[VEC], cv[VEC];
                load(pv, &rprev[wq][threadIdx.y * TILE + t][{{TXU}} * VEC]);
                load(cv, &rc2[wq][threadIdx.y * TILE + t][{{TXU}} * VEC]);
#{endif}
                real (&res)[VEC] = rows[t];
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
#{if WAVE}
#{if HAS_Y}
                    const real c = cy[t + RY][v];
#{else}
                    const real c = win[(u + U - RZ) % U][t][v];
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
                        wx[r + R] = q < 0 ? xl[t][HX + q] : q >= VEC ? xr[t][q - VEC] : win[(u + U - RZ) % U][t][q];
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
                        wz[r + R] = win[(u + U - RZ + r) % U][t][v];
                    const real dz = d2(wz);
#{endif}
                    {{COMBINE}}
                }
#{if DWAVE}
            {{DWAVE_ROW}}
#{endif}
                if (STAGED)
                    continue;  // stored below
#{if FAULT}
                if (fault_skip(k, nz))
                    continue;
#{endif}
                if (t < nvy && nvx > 0)
                    store(out + (pk - in) + t * line, res, nvx);
            }
            if (STAGED) {
                // The staged plane lands before the stores: AMD's one counter of memory
                // operations would make the wait for its loads wait for them too.
                land();
#pragma unroll
                for (int t = 0; t < TILE; ++t) {
#{if FAULT}
                    if (fault_skip(k, nz))
                        continue;
#{endif}
                    if (t < nvy && nvx > 0)
                        store(out + (pk - in) + t * line, rows[t], nvx);
                }
            }
#{if FAULT}
            fault_after(out, in, pk - in, i0 == R && j0 == jbeg, k);
#{endif}
        }
    }
}
