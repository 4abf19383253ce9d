// The stream's bulk fill (bulk=1, with mbar=1; NVIDIA sm_90 on, FDT_BULK_COPY), in place of
// ring_fill.hip: fill(m, rs, ws, bar) copies march plane m into ring slot rs, and for wave the
// point-wise inputs of the plane whose sums m completes into queue slot ws, completing on
// barrier bar (the slot's full[rs]). The plane is one tensor copy (cp.async.bulk.tensor) from
// thread 0: the tile's TX x TY box, halos and corners included, from the kernel's tensor map
// of `in` (fdtuned_tmap_make: it starts tsh values before `in`, on 16 bytes; values outside
// the grid's padded extents land as zeros, in tile columns and rows no output reads). Thread 0
// arrives on bar with the bytes of the box and of the plane's queued rows
// (mbarrier.arrive.expect_tx), the one arrival the phase expects: until it has, the phase
// cannot complete, and the bytes of rows that land before it count against it (the
// transaction count may go below zero meanwhile, as the PTX ISA allows). wave's queued rows
// move by cp.async.bulk, one row per thread. No thread moves a value or keeps a chunk's
// address: the instructions the per-thread copies took go to the arithmetic, and a plane is
// one request to the copy engine (rows, one request each, cost it 4-5 times the clocks:
// bench/notes/tensor_map). Each slot starts on 128 bytes (TYS rows, fdt_gen_slot_rows), as a
// tensor copy's destination must. The including template declares ring (and wave's rprev,
// rc2, rcen), the block's coordinates (iblk, jblk, tid), and initialises the barriers with
// FULL_ARRIVALS arrivals on full[s].
//
// On AMD gfx9 (gfx90a, gfx94x; FDT_LDS_DIRECT) the same rows move by loads that write LDS
// directly (buffer_load_dword ... lds: 4 bytes a lane, 64 lanes a wave, so a row goes in runs
// of 256 bytes, the runs of a plane split over the block's whole waves), issue(m, rs, ws) in
// place of ring_fill.hip's, with no VGPR between memory and LDS; the stream's block barrier
// hands the plane over (mbar=1 is mbar=0 there) once each wave's vmcnt has come to 0
// (async_wait); the tensor map is not used. The recipes prune the form on AMD: no AMD GPU has
// measured it.
#ifdef FDT_BULK_COPY
constexpr int FULL_ARRIVALS = 1;  // full[s]: thread 0's arrival, with the plane's bytes
static_assert(TX <= 256 && TY <= 256 && TX * (int)sizeof(real) % 16 == 0,
              "a tensor copy's box: at most 256 values a side, rows of 16-byte multiples "
              "(check_bulk)");
    const int tsh = (int)((unsigned long long)in % 16 / sizeof(real));  // the map's start
    constexpr unsigned BOX = TX * TY * (unsigned)sizeof(real);         // bytes of a plane
#{if WAVE}
    constexpr int EB = 16 / (int)sizeof(real);  // values in 16 bytes
    static_assert((BX * VEC) % EB == 0, "queued rows start on 16 bytes (check_bulk)");
    // Bytes of a run of n values, rounded up to 16.
    auto run = [](int n) { return (unsigned)((n + EB - 1) / EB * EB) * (unsigned)sizeof(real); };
    const unsigned xout = run(min(BX * VEC, R + nx - iblk));       // the block's outputs
    const int yout = min(BY * TILE, jend - jblk);                  // output rows in the grid
#{endif}
    // Plane m into slot rs (wave: and its queued rows into queue slot ws), on barrier bar.
    auto fill = [&](int m, int rs, int ws, unsigned bar) {
        const int p = k0 - RZ + m;
#{if WAVE}
        const int o = p - RZ;
        const int nq = o >= k0 && o < k1 ? yout : 0;  // rows of each queued array
        const unsigned queued = {{QUEUED}} * nq * xout;
#{else}
        (void)ws;
        constexpr unsigned queued = 0;
#{endif}
        if (tid == 0) {
            slot_bar_arrive_tx(bar, BOX + queued);
            bulk_tensor_copy(&ring[rs][0][0], &tmap, iblk - HX + tsh, jblk - RY, p, bar);
        }
#{if WAVE}
        // one row per thread as a rule (more where the rows outnumber the threads); not
        // unrolled: the march's unrolled steps each carry this loop
#pragma unroll 1
        for (int q = tid; q < {{QUEUED}} * nq; q += NT) {
            const int a = q / nq, t = q - a * nq;
            const long long at = (long long)o * slice + (long long)(jblk + t) * line + iblk;
            real* s = a == 0 ? &rprev[ws][t][0] : a == 1 ? &rc2[ws][t][0] : &rcen[ws][t][0];
            bulk_copy(s, (a == 0 ? prev : a == 1 ? c2 : in) + at, xout, bar);
        }
#{endif}
    };
#endif
#ifdef FDT_LDS_DIRECT
    constexpr int LANES = 64, WAVES = NT / LANES;  // whole waves copy; the rest of one waits
    static_assert(WAVES >= 1, "the LDS-direct fill needs a whole wave of 64 threads");
    const int wv = tid / LANES, lane = tid % LANES;
    const int xall = min(TX, nx + 2 * R - (iblk - HX));  // a tile row, x halos too (values)
    const int xmid = min(BX * VEC, nx + 2 * R - iblk);   // its centre columns
    const int ylim = jend + RY - (jblk - RY);            // tile rows inside the grid's rows
#{if WAVE}
    const int xout = min(BX * VEC, R + nx - iblk);       // the block's outputs
    const int yout = min(BY * TILE, jend - jblk);        // output rows in the grid
#{endif}
    constexpr int DW = (int)sizeof(real) / 4;            // dwords a value
    // rows rows (of at most maxr) of n values (at most ts) from plane g (row r at value
    // off + r line of the plane, a buffer of its own: 32-bit offsets) into the tile rows at s
    // (ts values apart), in runs of 64 dwords split over the waves: run k by wave k mod WAVES.
    // Unrolled to the bounds (constants once inlined): a wave's loads of a plane issue
    // together, and wait together in the next step's async_wait.
    auto rows_in = [&](const real* g, long long off, real* s, int ts, int rows, int n,
                       int maxr) {
        const fdt_rsrc rsrc = lds_rsrc(g);
        const int runs = (ts * DW + LANES - 1) / LANES;
#pragma unroll
        for (int i = 0; i < (maxr * runs + WAVES - 1) / WAVES; ++i) {
            const int k = wv + i * WAVES, r = k / runs, u = k - r * runs;
            if (wv < WAVES && r < rows && u * LANES + lane < n * DW)
                lds_load(rsrc, reinterpret_cast<int*>(s + r * ts) + u * LANES,
                         (int)((off + (long long)r * line) * (int)sizeof(real)) +
                             4 * (u * LANES + lane));
        }
    };
    auto issue = [&](int m, int rs, int ws) {
        const int p = k0 - RZ + m;
        const bool own = p >= k0 && p < k1;  // computed: whole rows; z halo: the centre
        const int r0 = own ? 0 : RY, x0 = own ? 0 : HX;
        const int nr = min(own ? TY : BY * TILE, ylim - r0);
        rows_in(in + (long long)p * slice, (long long)(jblk - RY + r0) * line + iblk - HX + x0,
                &ring[rs][r0][x0], TX, nr, own ? xall : xmid, TY);
#{if WAVE}
        const int o = p - RZ;
        if (o >= k0 && o < k1) {
            const long long at = (long long)jblk * line + iblk;
            rows_in(prev + (long long)o * slice, at, &rprev[ws][0][0], BX * VEC, yout, xout,
                    BY * TILE);
            rows_in(c2 + (long long)o * slice, at, &rc2[ws][0][0], BX * VEC, yout, xout,
                    BY * TILE);
            rows_in(in + (long long)o * slice, at, &rcen[ws][0][0], BX * VEC, yout, xout,
                    BY * TILE);
        }
#{else}
        (void)ws;
#{endif}
    };
#endif
#if !defined(FDT_BULK_COPY) && !defined(FDT_LDS_DIRECT)
    auto issue = [](int, int, int) {};  // a host compilation pass: nothing runs
#endif
    auto land = [] {};  // the copies land by themselves
