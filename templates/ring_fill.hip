// The ring's fill, shared by the families that march through a ring of shared tiles filled by
// asynchronous copies (ring.hip, lds=2; stream.hip, lds=3): which halo chunks each thread
// copies, and issue(m, rs, ws), the copies of march plane m into ring slot rs and, for wave,
// of the point-wise inputs into queue slot ws (WAVE_CENTRE: the centre value too, for the
// families that no longer hold the plane when its output is written), then land(), which
// completes the copies issued last where they do not land by themselves. The including
// template declares ring, rprev, rc2 (and rcen) and the thread's coordinates, and calls
// land() before each wait for a plane (async_wait).
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
#{if HAS_XY}
    constexpr int NOWN = TILE + YPT + XPT;  // chunks of a plane this thread copies
#{else}
    constexpr int NOWN = TILE;
#{endif}
    constexpr int NCH = NOWN + {{QUEUED}} * TILE;  // and of wave's queued inputs
#ifdef FDT_STAGED_COPY
    // AMD: issue loads all of a plane's chunks into registers (stage), so that they travel
    // together, through the step's arithmetic; land writes them into the ring before the
    // step's stores (the families call it where their step ends) and so before the barrier
    // of the next step. One plane is in flight at NCH x VEC registers; the PF - 1 planes
    // ahead of it wait in the ring.
    real stage[NCH][VEC];
    int sm = -1, srs = 0, sws = 0;  // the plane in stage (-1: none) and its slots
#endif
    // Chunk n (a constant once the loops are unrolled) from g to s: copied (how 0), or on AMD
    // loaded into stage (1) or stored from there (2).
    auto move = [&](int how, int n, real* s, const real* g) {
#ifdef FDT_STAGED_COPY
        if (how == 1)
            load(stage[n], g);
        else
            put(s, stage[n]);
#else
        (void)how, (void)n;
        copy_async(s, g);
#endif
    };
    // The chunks of march plane m (plane k0 - RZ + m) into ring slot rs, each moved as how
    // says: this thread's own chunks always; the halo only for planes that are computed (the
    // others serve as z neighbours alone); wave's p_prev and c2 of the plane whose window m
    // completes, into queue slot ws.
    auto chunks = [&](int m, int rs, int ws, int how) {
        const int p = k0 - RZ + m;
        const real* pl = in + (long long)p * slice;
        real* tl = &ring[rs][0][0];
#pragma unroll
        for (int t = 0; t < TILE; ++t)
            if (readx && t < nly)
                move(how, t, tl + (ty0 + t) * TX + tx0, pl + base + t * line);
#{if HAS_XY}
        if (p >= k0 && p < k1) {
#pragma unroll
            for (int q = 0; q < YPT; ++q)
                if (yoff[q] >= 0)
                    move(how, TILE + q, tl + ylds[q], pl + yoff[q]);
#pragma unroll
            for (int q = 0; q < XPT; ++q)
                if (xoff[q] >= 0)
                    move(how, TILE + YPT + q, tl + xlds[q], pl + xoff[q]);
        }
#{endif}
#{if WAVE}
        const int o = p - RZ;
        if (o >= k0 && o < k1 && nvx > 0) {
            const long long at = (long long)o * slice + base;
#pragma unroll
            for (int t = 0; t < TILE; ++t)
                if (t < nvy) {
                    const int row = (int)threadIdx.y * TILE + t, col = {{TX}} * VEC;
                    move(how, NOWN + t, &rprev[ws][row][col], prev + at + t * line);
                    move(how, NOWN + TILE + t, &rc2[ws][row][col], c2 + at + t * line);
#{if WAVE_CENTRE}
                    move(how, NOWN + 2 * TILE + t, &rcen[ws][row][col], in + at + t * line);
#{endif}
                }
        }
#{else}
        (void)ws;
#{endif}
    };
#ifdef FDT_STAGED_COPY
    auto issue = [&](int m, int rs, int ws) {
        staged_wait();  // the stage is free (the compiler's own waits may sit in branches)
        chunks(m, rs, ws, 1);
        sm = m, srs = rs, sws = ws;
    };
    auto land = [&]() {
        if (sm >= 0)
            chunks(sm, srs, sws, 2);
        sm = -1;
    };
#else
    auto issue = [&](int m, int rs, int ws) { chunks(m, rs, ws, 0); };
    auto land = [] {};  // the copies land by themselves
#endif
