// The ring's fill, shared by the families that march through a ring of shared tiles filled by
// asynchronous copies (ring.hip, lds=2; stream.hip, lds=3): which halo chunks each thread
// copies, and issue(m, rs, ws), the copies of march plane m into ring slot rs and, for wave,
// of the point-wise inputs into queue slot ws (WAVE_CENTRE: the centre value too, for the
// families that no longer hold the plane when its output is written). The including template
// declares ring, rprev, rc2 (and rcen) and the thread's coordinates.
#{if HAS_XY}
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
            if (readx && t < nly)
                copy_async(tl + (ty0 + t) * TX + tx0, pl + base + t * line);
#{if HAS_XY}
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
#{if WAVE_CENTRE}
                    copy_async(&rcen[ws][row][col], in + at + t * line);
#{endif}
                }
        }
#{else}
        (void)ws;
#{endif}
    };
