#{include prelude.hip}
// Kernel family "stream" (lds=3, nw >= 1): the ring's march (a ring of shared tiles filled by
// asynchronous copies PF planes ahead, as in ring.hip) with every plane read from its tile
// once, on the step it lands. The plane's x and y neighbours stream from the tile straight
// into the sum of that plane's outputs, one row at a time (no neighbour arrays), and its
// centre values go, weighted, into the sums of the 2 RZ + 1 output planes around it: a queue
// of accumulators in registers (rotated by unrolling the march by its length), where the
// other families keep a window of input planes. So registers hold the queue, the plane's
// centre values and one row of x neighbours, which leaves room for TILE x VEC register
// blocking (each shared row or vector serves TILE x VEC outputs) at every radius; and the
// ring needs PF + 1 slots instead of RZ + 1 + PF, as no plane waits for its z neighbours.
constexpr int NW = {{NW}};         // z planes per thread
constexpr int PF = {{PF}};         // planes copied ahead of the one read
constexpr int TX = HX + BX * VEC + HX, TY = RY + BY * TILE + RY;
constexpr int NT = BX * BY;                         // threads per block
constexpr int S = PF + 1;                           // ring slots: plane m is read at step m
constexpr int Q = 2 * RZ + 1;                       // accumulators: output planes p-RZ..p+RZ
constexpr int HC = HX / VEC;                        // x-halo chunks per side of a row
constexpr int NYH = 2 * RY * BX;                    // y-halo chunks per plane
constexpr int NXH = BY * TILE * 2 * HC;             // x-halo chunks per plane
constexpr int YPT = (NYH + NT - 1) / NT, XPT = (NXH + NT - 1) / NT;  // per thread
#{if BULK}
constexpr int TYS = {{TYS}};  // rows of a ring slot: TY, and the padding that puts each on 128 bytes
static_assert(TYS >= TY && TYS * TX * (int)sizeof(real) % 128 == 0, "slots on 128 bytes");
#{endif}
#{if MBAR}
// The slots' barriers (NVIDIA, below) follow the ring and wave's queues in shared memory, at
// the 8-byte aligned offset the geometry gives (fdt_gen_barriers_at), two per slot, as
// fdt_geometry.shared_bytes counts them.
constexpr int BARS_AT = {{BARS_AT}};
constexpr int NQ = {{QUEUED}} * (PF + 1) * BY * TILE * BX * VEC;  // wave's queued values
static_assert(BARS_AT % 8 == 0 && BARS_AT >= (S * TY * TX + NQ) * (int)sizeof(real),
              "the slot barriers lie after the ring and the queues, 8-byte aligned");
#{endif}

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
    // (fdt_geometry.shared_bytes).
#{if BULK}
    // bulk=1: slots of TYS rows, each slot on 128 bytes (where a tensor copy lands)
    extern __shared__ __attribute__((aligned(128))) unsigned char fdt_dyn_shared[];
    real (*const ring)[TYS][TX] = reinterpret_cast<real (*)[TYS][TX]>(fdt_dyn_shared);
#{else}
    extern __shared__ __attribute__((aligned(16))) unsigned char fdt_dyn_shared[];
    real (*const ring)[TY][TX] = reinterpret_cast<real (*)[TY][TX]>(fdt_dyn_shared);
#{endif}
#{if WAVE}
    // p_prev, c2 and p itself at the block's outputs of plane k, copied with plane k + RZ
    // (the plane that completes the sums of k), read PF steps later: PF + 1 slots of each.
    // The centre comes from global memory (L2) again: the ring no longer holds plane k then.
    real (*const rprev)[BY * TILE][BX * VEC] =
        reinterpret_cast<real (*)[BY * TILE][BX * VEC]>(&ring[S][0][0]);
    real (*const rc2)[BY * TILE][BX * VEC] = rprev + (PF + 1);
    real (*const rcen)[BY * TILE][BX * VEC] = rc2 + (PF + 1);
#{endif}
#{if BULK}
#{include ring_bulk.hip}
#{else}
#{include ring_fill.hip}
#{endif}
#{if MBAR}
#ifdef FDT_ASYNC_COPY
    // Plane m of the march is read at step m from ring slot m % S. With mbar=1 and cp.async
    // (NVIDIA, sm_80 on) each slot has two barriers instead of a block-wide barrier per step:
    // full[s] completes when every thread's copies of its plane have landed, freed[s] when
    // every thread is done with it (and with wave's queue slot of the same index). A warp
    // waits for the plane it reads and, as step m begins, before it copies plane m - 1 + PF
    // into the slot plane m - 2 leaves, for step m - 2 to be done everywhere: warps drift up
    // to a step apart instead of meeting every step, and PF - 1 planes fly ahead of the one
    // read. Otherwise (mbar=0, and AMD's staged copies) one barrier per step, and plane
    // m + PF is copied as step m begins, into the slot plane m - 1 leaves.
    static_assert(S == PF + 1 && S >= 2, "wave's queue slots share the ring slots' barriers; "
                                         "plane m - 2's parity follows from plane m's");
    const unsigned full = (unsigned)__cvta_generic_to_shared(fdt_dyn_shared + BARS_AT);
    const unsigned freed = full + 8 * S;  // shared addresses of slot 0's barriers, 8 bytes each
#{if BULK}
    // bulk=1 (ring_bulk.hip): full[s] completes when thread 0 has arrived and the bytes it
    // announced have landed.
    if (tid == 0) {
        for (int s = 0; s < S; ++s) {
            slot_bar_init(full + 8 * s, FULL_ARRIVALS);
            slot_bar_init(freed + 8 * s, NT);
        }
        slot_bar_init_fence();
    }
#{else}
    if (tid == 0)
        for (int s = 0; s < S; ++s) {
            slot_bar_init(full + 8 * s, NT);
            slot_bar_init(freed + 8 * s, NT);
        }
#{endif}
    __syncthreads();
    int rph = 0;  // parity of plane m's use of its slot: (m / S) % 2
#endif
#{endif}
    const real wc = weight(0) * ({{CENTRE_SCALE}});  // the centre's, times every axis' scale
    // acc[p % Q] sums the outputs of march plane p. Plane p's centre values are added to the
    // sums of planes p - RZ .. p + RZ as it lands (the sum of p + RZ starts there, that of
    // p - RZ is complete), its x and y neighbours to its own. Unrolled by Q, every slot index
    // is a constant: the sums stay in their registers.
    real acc[Q][TILE][VEC] = {};
    const int steps = k1 - k0 + 2 * RZ;
#pragma unroll
    for (int m = 0; m < PF; ++m) {
#{if BULK}
#ifdef FDT_BULK_COPY
        if (m < steps)
            fill(m, m % S, m % (PF + 1), full + 8 * (m % S));
#else  // AMD's loads into LDS: a block barrier per step
        if (m < steps)
            issue(m, m % S, m % (PF + 1));
        async_commit();
#endif
#{else}
        if (m < steps)
            issue(m, m % S, m % (PF + 1));
        land();
        async_commit();  // empty groups too: the wait below counts groups
#{if MBAR}
#ifdef FDT_ASYNC_COPY
        if (m < steps)
            slot_bar_arrive_copies(full + 8 * (m % S));
#endif
#{endif}
#{endif}
    }
    int rs = 0, ris = PF % S;      // ring slots of planes m and m + PF
    int wr = 0, wis = PF;          // queue slots read at step m and written for m + PF
    for (int m0 = 0; m0 < steps; m0 += Q) {
#pragma unroll
        for (int u = 0; u < Q; ++u) {
            const int m = m0 + u;
            if (m >= steps)
                break;
#if defined(FDT_ASYNC_COPY) && {{MBAR}}
            if (m > 0) {
                slot_bar_arrive(freed + 8 * (rs == 0 ? S - 1 : rs - 1));  // done with plane m - 1
                if (m - 1 + PF < steps) {
                    const int s2 = rs >= 2 ? rs - 2 : rs + S - 2;  // the slot of plane m - 2
                    if (m > 1)
                        slot_bar_wait(freed + 8 * s2, rph ^ (rs < 2));
#{if BULK}
                    fill(m - 1 + PF, s2, s2, full + 8 * s2);
#{else}
                    issue(m - 1 + PF, s2, s2);
                    slot_bar_arrive_copies(full + 8 * s2);
#{endif}
                }
            }
            slot_bar_wait(full + 8 * rs, rph);  // every thread's copies of plane m have landed
            rph ^= rs == S - 1;
#else  // mbar=0, or no cp.async (AMD, NVIDIA before sm_80)
            async_wait<PF - 1>();  // this thread's copies of plane m have landed
#{if HAS_XY}
            __syncthreads();       // everyone's have, and step m - 1 is done with the slot reused now
#{endif}
            if (m + PF < steps)
                issue(m + PF, ris, wis);
            async_commit();
#endif
            const real* tl = &ring[rs][0][0];  // plane p with its halo
            const int p = k0 - RZ + m;
            real ctr[TILE][VEC];               // this thread's columns of plane p
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                load(ctr[t], tl + (ty0 + t) * TX + tx0);
#{if WAVE}
            const int wq = wr;
            wr = wr == PF ? 0 : wr + 1;
#{endif}
            rs = rs + 1 == S ? 0 : rs + 1;
            ris = ris + 1 == S ? 0 : ris + 1;
            wis = wis == PF ? 0 : wis + 1;
#{if HAS_Z}
            // plane p is the z neighbour at offset r of output plane p - r (slot (u - r) mod Q);
            // scaled by sz once, so that the weights stay literal operands
#pragma unroll
            for (int t = 0; t < TILE; ++t)
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
                    const real cz = sz * ctr[t][v];
#pragma unroll
                    for (int r = -RZ; r <= RZ; ++r) {
                        if (r == 0)
                            continue;
                        real& a = acc[(u - r + Q) % Q][t][v];
                        a = r == -RZ ? weight(r) * cz : a + weight(r) * cz;
                    }
                }
#{endif}
            if (p >= k0 && p < k1) {  // uniform: the block's own planes take their x, y, centre
#{if HAS_Y}
                // y: rows j0 - RY .. j0 + TILE - 1 + RY stream in (the centre rows from ctr);
                // each goes into the sums of the rows within RY of it
                real dy[TILE][VEC];
#pragma unroll
                for (int s = -RY; s < TILE + RY; ++s) {
                    real row[VEC];
                    if (s >= 0 && s < TILE) {
#pragma unroll
                        for (int v = 0; v < VEC; ++v)
                            row[v] = ctr[s][v];
                    } else {
                        load(row, tl + (ty0 + s) * TX + tx0);
                    }
#pragma unroll
                    for (int t = 0; t < TILE; ++t) {
                        const int r = s - t;
                        if (r == 0 || r < -RY || r > RY)
                            continue;
#pragma unroll
                        for (int v = 0; v < VEC; ++v)
                            dy[t][v] = r == -RY ? weight(r) * row[v] : dy[t][v] + weight(r) * row[v];
                    }
                }
#{endif}
#pragma unroll
                for (int t = 0; t < TILE; ++t) {
#{if HAS_X}
                    // x: the row's HX neighbours on each side, whole vectors
                    real xl[HX], xr[HX];
#pragma unroll
                    for (int q = 0; q < HX; q += VEC) {
                        load(&xl[q], tl + (ty0 + t) * TX + tx0 - HX + q);
                        load(&xr[q], tl + (ty0 + t) * TX + tx0 + VEC + q);
                    }
#{endif}
#pragma unroll
                    for (int v = 0; v < VEC; ++v) {
                        real a = RZ == 0 ? wc * ctr[t][v] : acc[u][t][v] + wc * ctr[t][v];
#{if HAS_X}
                        // symmetric pairs folded (chains of RX dependent FMAs, not 2 RX)
                        real dx = 0;
#pragma unroll
                        for (int r = 1; r <= RX; ++r) {
                            const int ql = v - r, qr = v + r;
                            const real xm = ql < 0 ? xl[HX + ql] : ctr[t][ql];
                            const real xp = qr >= VEC ? xr[qr - VEC] : ctr[t][qr];
                            const real d = weight(-r) == weight(r) ? weight(r) * (xm + xp)
                                                                  : weight(-r) * xm + weight(r) * xp;
                            dx = r == 1 ? d : dx + d;
                        }
                        a += sx * dx;
#{endif}
#{if HAS_Y}
                        a += sy * dy[t][v];
#{endif}
                        acc[u][t][v] = a;
                    }
                }
            }
            // Before the stores: AMD's one counter of memory operations would make the wait
            // for the staged loads wait for them too.
            land();
            if (m < 2 * RZ)
                continue;  // no output plane is complete yet
            const int k = k0 + m - 2 * RZ;                      // = p - RZ, complete now
            const real* pk = in + (long long)k * slice + base;  // centre of row j0, plane k
#pragma unroll
            for (int t = 0; t < TILE; ++t) {
                real res[VEC];
#{if WAVE}
                real pv[VEC], cv[VEC], cc[VEC];
                load(pv, &rprev[wq][threadIdx.y * TILE + t][{{TXU}} * VEC]);
                load(cv, &rc2[wq][threadIdx.y * TILE + t][{{TXU}} * VEC]);
                load(cc, &rcen[wq][threadIdx.y * TILE + t][{{TXU}} * VEC]);
#{endif}
#pragma unroll
                for (int v = 0; v < VEC; ++v) {
#{if WAVE}
#{if DWAVE}
                    {{STEP_Q}}
#{else}
                    res[v] = (real)2 * cc[v] - pv[v] + cv[v] * acc[(u + Q - RZ) % Q][t][v];
                    if (k == sk && j0 + t == sj && i0 + v == si)
                        res[v] += src;  // point source
#{endif}
#{else}
                    res[v] = acc[(u + Q - RZ) % Q][t][v];
#{endif}
                }
#{if DWAVE}
            {{DWAVE_ROW}}
#{endif}
#{if FAULT}
                if (fault_skip(k, nz))
                    continue;
#{endif}
#{if GUARD}
                if (t < nvy && nvx > 0)
                    store(out + (pk - in) + t * line, res, nvx);
#{else}
                // guard=none: whole blocks cover the grid (checked by the generator), so
                // every row of every thread is inside and every store a full vector
                store(out + (pk - in) + t * line, res, VEC);
#{endif}
            }
#{if FAULT}
            fault_after(out, in, pk - in, i0 == R && j0 == jbeg, k);
#{endif}
        }
    }
}
