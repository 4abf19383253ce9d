// The stream's bulk fill (bulk=1, with mbar=1; NVIDIA sm_90 on, FDT_BULK_COPY), in place of
// ring_fill.hip: fill(m, rs, ws, bar) copies march plane m into ring slot rs, and for wave the
// point-wise inputs of the plane whose sums m completes into queue slot ws, as whole rows by
// cp.async.bulk, issued by lane 0 of each warp (the rows split over the warps), whose bytes
// complete on barrier bar (the slot's full[rs]). No thread moves a value or computes a chunk's
// address: the instructions the per-thread copies took go to the arithmetic.
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
constexpr int WARPS = (NT + 31) / 32;  // full[s] waits for one arrival per warp, and bytes
constexpr int FULL_ARRIVALS = WARPS;
constexpr int EB = 16 / (int)sizeof(real);  // values in 16 bytes
static_assert(HX % EB == 0 && (BX * VEC) % EB == 0, "bulk rows start on 16 bytes (check_bulk)");
    const int warp = tid / 32;
    const bool lead = tid % 32 == 0;
    // Bytes of a run of n values, rounded up to 16.
    auto run = [](int n) { return (unsigned)((n + EB - 1) / EB * EB) * (unsigned)sizeof(real); };
    const unsigned xall = run(min(TX, nx + 2 * R - (iblk - HX)));  // a tile row, x halos too
    const unsigned xmid = run(min(BX * VEC, nx + 2 * R - iblk));   // its centre columns
    const unsigned xout = run(min(BX * VEC, R + nx - iblk));       // the block's outputs
    const int ylim = jend + RY - (jblk - RY);  // tile rows inside the grid's rows
    const int yout = min(BY * TILE, jend - jblk);  // output rows inside the grid
    // Row q of plane m's copies: its bytes, and (issue) its copy. Rows 0 .. nr - 1 are tile
    // rows, then wave's queued arrays of yout rows each.
    auto row = [&](int m, int rs, int ws, unsigned bar, int q, bool issue) -> unsigned {
        const int p = k0 - RZ + m;
        const bool own = p >= k0 && p < k1;
        const int r0 = own ? 0 : RY, nr = min(own ? TY : BY * TILE, ylim - r0);
        if (q < nr) {
            const int ly = r0 + q, x0 = own ? 0 : HX;
            if (issue)
                bulk_copy(&ring[rs][ly][x0],
                          in + (long long)p * slice + (long long)(jblk - RY + ly) * line + iblk - HX + x0,
                          own ? xall : xmid, bar);
            return own ? xall : xmid;
        }
#{if WAVE}
        const int o = p - RZ, a = (q - nr) / yout, t = (q - nr) % yout;
        if (o >= k0 && o < k1 && a < {{QUEUED}}) {
            if (issue) {
                const long long at = (long long)o * slice + (long long)(jblk + t) * line + iblk;
                real* s = a == 0 ? &rprev[ws][t][0] : a == 1 ? &rc2[ws][t][0] : &rcen[ws][t][0];
                bulk_copy(s, (a == 0 ? prev : a == 1 ? c2 : in) + at, xout, bar);
            }
            return xout;
        }
#{else}
        (void)ws;
#{endif}
        return 0;
    };
    // Rows of plane m: the tile's, and wave's queued ones when plane m completes a plane's sums.
    auto rows = [&](int m) {
        const int p = k0 - RZ + m;
        const bool own = p >= k0 && p < k1;
        int n = min(own ? TY : BY * TILE, ylim - (own ? 0 : RY));
#{if WAVE}
        if (p - RZ >= k0 && p - RZ < k1)
            n += {{QUEUED}} * yout;
#{endif}
        return n;
    };
    // Plane m into slot rs: each warp's lane 0 announces the bytes of its rows on bar (with
    // its arrival: the phase cannot complete before they land), then copies them.
    auto fill = [&](int m, int rs, int ws, unsigned bar) {
        if (!lead)
            return;
        const int n = rows(m);
        unsigned bytes = 0;
        for (int q = warp; q < n; q += WARPS)
            bytes += row(m, rs, ws, bar, q, false);
        slot_bar_arrive_tx(bar, bytes);
        for (int q = warp; q < n; q += WARPS)
            row(m, rs, ws, bar, q, true);
    };
    auto land = [] {};  // the copies land by themselves
