// The stream's bulk fill (bulk=1, with mbar=1; NVIDIA sm_90 on, FDT_BULK_COPY), in place of
// ring_fill.hip: fill(m, rs, ws, bar) copies march plane m into ring slot rs, and for wave the
// point-wise inputs of the plane whose sums m completes into queue slot ws, as whole rows by
// cp.async.bulk, one row per thread (thread q copies row q: a warp's 32 rows issue as one
// instruction), whose bytes complete on barrier bar (the slot's full[rs]). Thread 0 arrives
// on bar with the bytes of all the plane's rows (mbarrier.arrive.expect_tx), the one arrival
// the phase expects: until it has, the phase cannot complete, and the bytes of rows that land
// before it count against it (the transaction count may go below zero meanwhile, as the PTX
// ISA allows). No thread moves a value or keeps a chunk's address: the instructions the
// per-thread copies took go to the arithmetic.
//
// What a row copies (the generator's check_bulk makes every run start on 16 bytes and the
// tile's rows 16-byte multiples): a plane the block computes, its tile rows whole (the y halo
// rows, the x halos and the corners, which no output reads); a plane of z halo only, the
// centre columns of the centre rows (its values serve as z neighbours alone). Rows beyond the
// grid's rows (jend + RY) are not copied; a row's run stops at the grid's last column
// (nx + 2 R) rounded up to 16 bytes: the rounding, and a left x halo wider than R, read the
// layout's row padding, base offset or the spare row after the box, inside the allocation,
// into tile columns no output reads. The including template declares ring (and wave's rprev,
// rc2, rcen), the block's coordinates (iblk, jblk, tid), and initialises the barriers with
// FULL_ARRIVALS arrivals on full[s].
constexpr int FULL_ARRIVALS = 1;  // full[s]: thread 0's arrival, with the plane's bytes
constexpr int EB = 16 / (int)sizeof(real);  // values in 16 bytes
static_assert(HX % EB == 0 && (BX * VEC) % EB == 0, "bulk rows start on 16 bytes (check_bulk)");
    // Bytes of a run of n values, rounded up to 16.
    auto run = [](int n) { return (unsigned)((n + EB - 1) / EB * EB) * (unsigned)sizeof(real); };
    const unsigned xall = run(min(TX, nx + 2 * R - (iblk - HX)));  // a tile row, x halos too
    const unsigned xmid = run(min(BX * VEC, nx + 2 * R - iblk));   // its centre columns
    const int ylim = jend + RY - (jblk - RY);  // tile rows inside the grid's rows
#{if WAVE}
    const unsigned xout = run(min(BX * VEC, R + nx - iblk));       // the block's outputs
    const int yout = min(BY * TILE, jend - jblk);                  // output rows in the grid
#{endif}
    // Plane m into slot rs (wave: and its queued rows into queue slot ws), on barrier bar.
    auto fill = [&](int m, int rs, int ws, unsigned bar) {
        const int p = k0 - RZ + m;
        const bool own = p >= k0 && p < k1;  // computed: whole rows; z halo: the centre
        const int r0 = own ? 0 : RY, x0 = own ? 0 : HX;
        const int nr = min(own ? TY : BY * TILE, ylim - r0);
        const unsigned rb = own ? xall : xmid;
#{if WAVE}
        const int o = p - RZ;
        const int nq = o >= k0 && o < k1 ? yout : 0;  // rows of each queued array
        if (tid == 0)
            slot_bar_arrive_tx(bar, nr * rb + {{QUEUED}} * nq * xout);
#{else}
        (void)ws;
        constexpr int nq = 0;
        if (tid == 0)
            slot_bar_arrive_tx(bar, nr * rb);
#{endif}
        // one row per thread as a rule (more where the rows outnumber the threads); not
        // unrolled: the march's unrolled steps each carry this loop
#pragma unroll 1
        for (int q = tid; q < nr + {{QUEUED}} * nq; q += NT) {
            if (q < nr) {
                const int ly = r0 + q;
                bulk_copy(&ring[rs][ly][x0],
                          in + (long long)p * slice + (long long)(jblk - RY + ly) * line + iblk - HX + x0,
                          rb, bar);
                continue;
            }
#{if WAVE}
            const int a = (q - nr) / nq, t = (q - nr) - a * nq;
            const long long at = (long long)o * slice + (long long)(jblk + t) * line + iblk;
            real* s = a == 0 ? &rprev[ws][t][0] : a == 1 ? &rc2[ws][t][0] : &rcen[ws][t][0];
            bulk_copy(s, (a == 0 ? prev : a == 1 ? c2 : in) + at, xout, bar);
#{endif}
        }
    };
    auto land = [] {};  // the copies land by themselves
