#{include cpu_prelude.c}
// Kernel family "blocked": tiles in y and z (and x) that march along z, the CPU form of the
// GPU kernels' sliding window.
//
// Why tiles. Each output of a z stencil reads 2 RZ + 1 planes. The plain loop nest walks
// whole planes, so plane k + RZ is read again as plane k - RZ only after 2 RZ + 1 whole
// planes have passed through the caches: 2.5 MB per thread at 256^3 f32, R=4, five times a
// Zen 3 core's L2. Those re-reads come from the last-level cache while threads x (2 RZ + 1)
// planes fit in it, and from memory when they do not (512^3 on 32 cores: 32 x 9 MB), which
// multiplies the memory traffic by up to 2 RZ + 1. A tile of TY rows x TX columns marching
// along z touches (TY + 2 RY) x (TX + 2 RX) x (2 RZ + 1) values at a time: every input value
// comes from memory once, when the march's leading plane k + RZ first reads it, and is then
// re-read 2 RZ times from a near cache (the x and y neighbours of the rows just read from
// L1, the z neighbours from L2 while the tile fits it, else from the LLC). The rules:
//   L2:  (TY + 2 RY) * (TX + 2 RX) * (2 RZ + 1) * sizeof(real)  <=  L2 / 2
//        for the z re-reads to hit L2 (the other half: lines in flight, wave's point-wise
//        inputs and the output);
//   LLC: threads * that  <<  LLC, always (the tiles of all threads, and the halo rows that
//        neighbouring tiles share through the LLC: threads take consecutive tiles, ORDER_ZY
//        picks which of z and y varies slowest);
//   halo: each tile reads 2 RY rows per TY and 2 RZ planes per TZ more than it writes (from
//        the LLC when the neighbouring tile ran recently, else from memory), so TY and TZ as
//        large as the L2 rule and an even share of tiles per thread allow; x tiles (TX < NX)
//        only for rows so long that TY would otherwise fall below ~8.
//
// What else a tile does. The march's leading plane is the only data that comes from memory,
// so it is prefetched (PF = 1) a row group at a time, PFD planes ahead: the hardware
// prefetchers lose every 4 KB page's stream and the march alone does not keep enough
// misses in flight (on a 2-core Zen 3 this is worth 20-25% on lap). The outputs, never
// re-read, can go out by streaming stores (NT = 1), which save the read-for-ownership of
// the output line: a third of a copy's memory traffic. UK planes computed together share
// their z neighbours' loads (d2x and d2z gain on Zen 3); UJ rows computed together share
// their y neighbours' loads (fewer instructions, yet slower in every measurement on Zen 3:
// a recipe should try UJ = 1 first). lap and wave can take each row in two passes
// (SPLIT = 1, cpu_prelude.c).
//
// Template variables besides the prelude's and cpu_entry.c's:
//   PARAMS, R, NX, NZ, LINE, SLICE, THREADS, BIND, SCHED  as in cpu_loops.c
//   RX, RY, RZ the operator's radii along x, y, z (lap: "4", "4", "4"; d2x: "4", "0", "0")
//   TX         tile width in x (elements; NX: whole rows) ("256")
//   TY         tile height in y (rows; NY, "256" or "ny": the whole extent) ("16")
//   TZ         tile depth in z (planes marched; NZ: the whole column) ("256")
//   ORDER_ZY   1: tiles ordered z slowest, then y, then x; 0: y slowest, then z, then x
//   PF         1: software prefetch on (each row group's rows PFD planes ahead of the
//              march's leading plane, just before the group is computed); 0: off
//   PFD        that distance in planes ("2")
#{if PF}
// Software prefetch of rows j .. j + nu - 1, x from i0 - RX to i1 + RX, of planes kp .. kp +
// nw - 1 (those below kmax): the march's leading planes PFD steps ahead, a row group at a
// time, so that the prefetches spread over the work instead of arriving in one burst (and
// wave's p_prev and c2 of the planes PFD steps ahead of those computed).
static inline __attribute__((always_inline)) void {{NS}}_prefetch(
    const {{REAL}} *in,
#{if WAVE}
    const {{REAL}} *prev, const {{REAL}} *c2,
#{endif}
    ptrdiff_t line, ptrdiff_t slice, int j, int nu, int kp, int nw, int i0, int i1, int kmax)
{
    enum { LINE_VALUES = 64 / (int)sizeof({{REAL}}), RX = {{RX}}, RZ = {{RZ}} };
    for (int w = 0; w < nw && kp + w < kmax; ++w)
        for (int u = 0; u < nu; ++u) {
            const ptrdiff_t at = (ptrdiff_t)(kp + w) * slice + (ptrdiff_t)(j + u) * line;
            for (int i = i0 - RX; i < i1 + RX; i += LINE_VALUES)
                __builtin_prefetch(in + at + i, 0, 3);
#{if WAVE}
            // p_prev and c2 are read at the point only: PFD planes ahead of plane k
            for (int i = i0; i < i1; i += LINE_VALUES) {
                __builtin_prefetch(prev + at - RZ * slice + i, 0, 3);
                __builtin_prefetch(c2 + at - RZ * slice + i, 0, 3);
            }
#{endif}
        }
}

#{endif}
// Rows j0 .. j1 - 1 of planes k .. k + nw - 1 of a tile, UJ rows at a time (nw: UK or 1).
static inline __attribute__((always_inline)) void {{NS}}_planes(
    {{REAL}} *restrict out, const {{REAL}} *restrict in,
#{if WAVE}
    const {{REAL}} *restrict prev, const {{REAL}} *restrict c2, int si, int sj, int sk,
    {{REAL}} src,
#{endif}
#{if DWAVE}
    {{NS}}_box b,
#{endif}
    ptrdiff_t line, ptrdiff_t slice, int j0, int j1, int k, int i0, int i1, int nw, int kmax,
    {{SCALAR_DECLS}})
{
    enum { UJ = {{UJ}}, RZ = {{RZ}} };
    (void)RZ;
    (void)kmax;
    int j = j0;
    for (; j + UJ <= j1; j += UJ) {
#{if PF}
        {{NS}}_prefetch(in,
#{if WAVE}
                          prev, c2,
#{endif}
                          line, slice, j, UJ, k + RZ + {{PFD}}, nw, i0, i1, kmax);
#{endif}
#{if DWAVE}
        {{NS}}_span(out, in, prev, c2, si, sj, sk, src, b, line, slice, j, k, i0, i1, UJ, nw,
                    {{SCALARS}});
#{else}
        {{NS}}_rows(out, in,
#{if WAVE}
                    prev, c2, si, sj, sk, src,
#{endif}
                    line, slice, j, k, i0, i1, UJ, nw, {{SCALARS}});
#{endif}
    }
    for (; j < j1; ++j) {  // the tile's last rows, when UJ does not divide TY
#{if PF}
        {{NS}}_prefetch(in,
#{if WAVE}
                          prev, c2,
#{endif}
                          line, slice, j, 1, k + RZ + {{PFD}}, nw, i0, i1, kmax);
#{endif}
#{if DWAVE}
        {{NS}}_span(out, in, prev, c2, si, sj, sk, src, b, line, slice, j, k, i0, i1, 1, nw,
                    {{SCALARS}});
#{else}
        {{NS}}_rows(out, in,
#{if WAVE}
                    prev, c2, si, sj, sk, src,
#{endif}
                    line, slice, j, k, i0, i1, 1, nw, {{SCALARS}});
#{endif}
    }
}

static void {{NS}}_kernel({{PARAMS}})
{
    enum { R = {{R}}, RX = {{RX}}, RY = {{RY}}, RZ = {{RZ}}, UK = {{UK}} };
    const int NX = {{NX}}, NZ = {{NZ}}, TX = {{TX}}, TY = {{TY}}, TZ = {{TZ}};
    const ptrdiff_t line = {{LINE}}, slice = {{SLICE}};
#{if DWAVE}
    {{BOX}}
#{endif}
    const int ntx = (NX + TX - 1) / TX, nty = (jend - jbeg + TY - 1) / TY;
    const int ntz = (NZ + TZ - 1) / TZ;
    (void)RX;
    (void)RY;
#pragma omp parallel{{THREADS}} proc_bind({{BIND}})
    {
#pragma omp for collapse(3) schedule({{SCHED}}) nowait
#{if ORDER_ZY}
        for (int kt = 0; kt < ntz; ++kt)
            for (int jt = 0; jt < nty; ++jt)
#{else}
        for (int jt = 0; jt < nty; ++jt)
            for (int kt = 0; kt < ntz; ++kt)
#{endif}
                for (int xt = 0; xt < ntx; ++xt) {
                    const int i0 = R + xt * TX, i1 = i0 + TX < R + NX ? i0 + TX : R + NX;
                    const int j0 = jbeg + jt * TY, j1 = j0 + TY < jend ? j0 + TY : jend;
                    const int k0 = R + kt * TZ, k1 = k0 + TZ < R + NZ ? k0 + TZ : R + NZ;
                    // The march: planes k - RZ .. k + RZ of the tile's rows stay in cache;
                    // each step reads one new plane, k + RZ, from further out.
                    for (int k = k0; k < k1; k += UK) {
                        if (k + UK <= k1)
                            {{NS}}_planes(out, in,
#{if WAVE}
                                          prev, c2, si, sj, sk, src,
#{endif}
#{if DWAVE}
                                          b,
#{endif}
                                          line, slice, j0, j1, k, i0, i1, UK, NZ + 2 * R, {{SCALARS}});
                        else  // the tile's last planes, when UK does not divide TZ
                            for (int kk = k; kk < k1; ++kk)
                                {{NS}}_planes(out, in,
#{if WAVE}
                                              prev, c2, si, sj, sk, src,
#{endif}
#{if DWAVE}
                                              b,
#{endif}
                                              line, slice, j0, j1, kk, i0, i1, 1, NZ + 2 * R, {{SCALARS}});
                    }
                }
#{if NT}
        {{NS}}_nt_fence();
#{endif}
    }
}

#{include cpu_entry.c}
