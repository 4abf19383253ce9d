#{if INT_KERNEL}
// dwave's interior kernel {{NAME}}: the undamped wave expression where the damping is 0 (the
// deployments inout and sides launch it there); the same arguments (eta and the hole unused).
#{else}
{{BANNER}}
#{endif}
// What every CPU kernel family shares (templates/cpu_prelude.c): the second derivative with
// its weights as literal constants, the operator at one point, and a group of output rows
// computed with a SIMD loop over x (the one place the operator is written; SPLIT = 1 writes
// it as its two parts, x and y terms, then z terms). Plain C11 with
// OpenMP 4.5 pragmas; it includes <stddef.h> and <stdint.h>, and <immintrin.h> on x86 for
// the streaming stores.
//
// Layout: the halo-padded arrays of the GPU kernels; element (i, j, k) of the padded box
// (nx + 2R) x (ny + 2R) x (nz + 2R) is at p[i + line * j + slice * k], p the pointer the
// kernel gets (already offset to padded (0, 0, 0)); the interior starts at R on every axis.
//
// Template variables of the prelude (generator/source.c fills them; the examples are those
// of lap, R=4, f32 on a 256^3 grid):
//   BANNER     comment lines: generator version, operator, config, layout ("// Generated...")
//   NS         prefix of the file-scope helpers, unique to the kernel, so that several
//              kernels can share one translation unit ("fdt_lap_r4_f32_1a2b3c4d_k")
//   REAL       the element type: float | double ("float")
//   UBITS      the unsigned integer type of REAL's size: uint32_t | uint64_t ("uint32_t")
//   D2         the second derivative at p along stride s, weights folded by symmetric pairs,
//              literals exact in REAL ("-2.84722222f * p[0] + 1.60000002f * (p[-1 * s] +
//              p[1 * s]) + ... + -0.00178571429f * (p[-4 * s] + p[4 * s])")
//   HAS_X, HAS_Y, HAS_Z  1 when the operator differentiates along that axis (lap: 1, 1, 1;
//              d2y: 0, 1, 0)
//   WAVE       1 for wave (p_next = 2 p - p_prev + c2 * lap(p) + src at (si, sj, sk)), else 0
//   COMBINE    the scaled derivatives' sum, of dx, dy, dz and sx, sy, sz: "sx * dx + sy *
//              dy + sz * dz" (lap, wave), "sx * dx" (d2x), "sy * dy", "sz * dz"
//   SCALARS    the operator's run-time scales as arguments: "sx, sy, sz" (lap, wave), "sx"
//   SCALAR_DECLS  the same as parameters: "float sx, float sy, float sz"
//   SIMD       extra clauses of every `omp simd` (vector width): "" or " simdlen(8)"
//   UJ         output rows computed together, sharing their y neighbours' loads (unroll and
//              jam along y): 1, 2, 4 ("2")
//   UK         output planes computed together, sharing their z neighbours' loads: 1, 2, 4
//              ("1")
//   NT         1: outputs written by streaming stores (cpu_nt.c) from a strip buffer; 0:
//              ordinary stores ("1")
//   XS         width of the strip buffers in elements (NT = 1 or SPLIT = 1), a multiple of 16
//              ("256")
//   SPLIT      1: each row's x and y terms in one SIMD pass over a strip, its z terms in a
//              second (lap and wave only: the generator sets 0 for d2x, d2y, d2z); 0: one
//              pass
//   FAULT_PLANE  1: the first interior plane (k = R) and those computed with it are never
//              written (test only, fault=plane); else 0
//   R          the radius ("4")
#include <stddef.h>
#include <stdint.h>

#{if NT}
#{include cpu_nt.c}

#{endif}
// The second derivative at p along stride s (1: x, line: y, slice: z), unit spacing.
static inline {{REAL}} {{NS}}_d2(const {{REAL}} *restrict p, ptrdiff_t s)
{
    return {{D2}};
}

#{if DWAVE}
// dwave: the launch's box in the grid (the global interior coordinate of its first point gx,
// gy, gz; the grid's extents gnx, gny, gnz; the eta array) and the hole it leaves to another
// launch (box-local interior [hx0, hx1) x [hy0, hy1) x [hz0, hz1); zeros: none).
typedef struct {{NS}}_box {
    const {{REAL}} *eta;
    int gx, gy, gz, gnx, gny, gnz;
    int hx0, hx1, hy0, hy1, hz0, hz1;
} {{NS}}_box;

#{endif}
#{if DAMPED}
// The absorbing layer: {{ABS_W}} points on every face; at distance d into it the damping along
// one axis is S (d / W)^2, and g at a point the sum over the axes ({{ETA_FORM}}).
// The distance into the layer is the sum of the two faces' (at most one is positive: 2W < n),
// not a chain of conditionals, which GCC does not turn into selects inside the SIMD loop.
static inline {{REAL}} {{NS}}_damping1(int x, int n)
{
    const int w = {{ABS_W}};
    const int lo = w - x, hi = x - (n - 1 - w);  // past the low face, past the high face
    const int d = (lo > 0 ? lo : 0) + (hi > 0 ? hi : 0);
    const {{REAL}} r = ({{REAL}})d * {{ABS_INV_W}};
    return {{ABS_S}} * r * r;
}

// The absorbing layer's update of the undamped value w at a point of damping g and previous
// value pv: (2 p - (1 - g) p_prev + c2 L) / (1 + g) as (w + g pv) / (1 + g), and where g = 0
// w itself, the interior kernel's value bit for bit. Divided at every point, then picked in
// bit operations: written as a conditional, GCC moves the division under the branch it makes
// (a division may trap, -ftrapping-math), and a loop with a branch is not vectorized.
static inline {{REAL}} {{NS}}_layer({{REAL}} w, {{REAL}} g, {{REAL}} pv)
{
    {{REAL}} d = (w + g * pv) / (({{REAL}})1 + g);
    {{UBITS}} a, b;
    const {{UBITS}} m = -({{UBITS}})(g != ({{REAL}})0);
    __builtin_memcpy(&a, &d, sizeof a);
    __builtin_memcpy(&b, &w, sizeof b);
    a = (a & m) | (b & ~m);
    __builtin_memcpy(&d, &a, sizeof d);
    return d;
}

// The damping along x at padded box coordinate i; along y and z of row j, plane k.
static inline {{REAL}} {{NS}}_ex({{NS}}_box b, int i)
{
    return {{EX}};
}

static inline {{REAL}} {{NS}}_eyz({{NS}}_box b, int j, int k)
{
    return {{EYZ}};
}

#{endif}
#{if !SPLIT}
// The operator at element o.
static inline {{REAL}} {{NS}}_point(const {{REAL}} *restrict in,
#{if WAVE}
                                  const {{REAL}} *restrict prev, const {{REAL}} *restrict c2,
#{endif}
#{if DAMPED}
                                  {{REAL}} g,
#{endif}
                                  ptrdiff_t o, ptrdiff_t line, ptrdiff_t slice,
                                  {{SCALAR_DECLS}})
{
    const {{REAL}} *restrict p = in + o;
    (void)line;
    (void)slice;
#{if HAS_X}
    const {{REAL}} dx = {{NS}}_d2(p, 1);
#{endif}
#{if HAS_Y}
    const {{REAL}} dy = {{NS}}_d2(p, line);
#{endif}
#{if HAS_Z}
    const {{REAL}} dz = {{NS}}_d2(p, slice);
#{endif}
#{if DAMPED}
    const {{REAL}} w = ({{REAL}})2 * p[0] - prev[o] + c2[o] * ({{COMBINE}});
    return {{NS}}_layer(w, g, prev[o]);
#{else}
#{if WAVE}
    return ({{REAL}})2 * p[0] - prev[o] + c2[o] * ({{COMBINE}});
#{else}
    return {{COMBINE}};
#{endif}
#{endif}
}
#{endif}

// Outputs of rows j .. j + nu - 1 of planes k .. k + nw - 1, x from i0 to i1 (padded
// coordinates): a SIMD loop over x, the nu x nw outputs of one x unrolled inside it, all
// computed before any is stored, so that the compiler loads the neighbours they share
// (their common y and z neighbours) once without having to prove that the stores do not
// overwrite them. nu and nw are constants where this is inlined (UJ or 1, UK or 1).
static inline __attribute__((always_inline)) void {{NS}}_rows(
    {{REAL}} *restrict out, const {{REAL}} *restrict in,
#{if WAVE}
    const {{REAL}} *restrict prev, const {{REAL}} *restrict c2, int si, int sj, int sk,
    {{REAL}} src,
#{endif}
#{if DWAVE}
    {{NS}}_box b,
#{endif}
    ptrdiff_t line, ptrdiff_t slice, int j, int k, int i0, int i1, int nu, int nw,
    {{SCALAR_DECLS}})
{
    enum { UJ = {{UJ}}, UK = {{UK}} };
    const ptrdiff_t at = (ptrdiff_t)k * slice + (ptrdiff_t)j * line;  // element (0, j, k)
#{if DAMPED}
    {{REAL}} gyz[UK][UJ];  // the damping along y and z of each row
    for (int w = 0; w < nw; ++w)
        for (int u = 0; u < nu; ++u)
            gyz[w][u] = {{NS}}_eyz(b, j + u, k + w);
#{else}
#{if DWAVE}
    (void)b;
#{endif}
#{endif}
#{if FAULT_PLANE}
    if (k <= {{R}} && {{R}} < k + nw)
        return;  // fault=plane: plane R is never written (test only)
#{endif}
#{if SPLIT}
    // Each output row in two SIMD passes over a strip of XS values: its x and y terms into
    // acc (in L1), then its z terms added. Two shorter loops, each with fewer streams and
    // registers, for one more store and load of acc a point. (UJ and UK rows and planes go
    // one after the other here.)
    enum { XS = {{XS}} };
    (void)UJ;
    (void)UK;
    for (int s = i0; s < i1; s += XS) {
        const int n = i1 - s < XS ? i1 - s : XS;
        for (int w = 0; w < nw; ++w)
            for (int u = 0; u < nu; ++u) {
                const ptrdiff_t o0 = at + w * slice + u * line + s;  // element (s, j + u, k + w)
                const {{REAL}} *restrict p0 = in + o0;
                {{REAL}} acc[XS] __attribute__((aligned(64)));
#pragma omp simd{{SIMD}}
                for (int i = 0; i < n; ++i)
                    acc[i] = sx * {{NS}}_d2(p0 + i, 1) + sy * {{NS}}_d2(p0 + i, line);
#{if NT}
                {{REAL}} dst[XS] __attribute__((aligned(64)));
#{else}
                {{REAL}} *restrict dst = out + o0;
#{endif}
#pragma omp simd{{SIMD}}
                for (int i = 0; i < n; ++i) {
#{if DAMPED}
                    const {{REAL}} wv = ({{REAL}})2 * p0[i] - prev[o0 + i] +
                                        c2[o0 + i] * (acc[i] + sz * {{NS}}_d2(p0 + i, slice));
                    const {{REAL}} g = {{NS}}_ex(b, s + i) + gyz[w][u];
                    dst[i] = {{NS}}_layer(wv, g, prev[o0 + i]);
#{else}
#{if WAVE}
                    dst[i] = ({{REAL}})2 * p0[i] - prev[o0 + i] +
                             c2[o0 + i] * (acc[i] + sz * {{NS}}_d2(p0 + i, slice));
#{else}
                    dst[i] = acc[i] + sz * {{NS}}_d2(p0 + i, slice);
#{endif}
#{endif}
                }
#{if WAVE}
                if (k + w == sk && j + u == sj && si >= s && si < s + n)
                    dst[si - s] += src;  // point source
#{endif}
#{if NT}
                {{NS}}_stream(out + o0, dst, n);
#{endif}
            }
    }
#{else}
#{if NT}
    // Strips of XS values are computed into a buffer that stays in L1, then streamed out.
    enum { XS = {{XS}} };
    for (int s = i0; s < i1; s += XS) {
        const int n = i1 - s < XS ? i1 - s : XS;
        {{REAL}} buf[UK][UJ][XS] __attribute__((aligned(64)));
#pragma omp simd{{SIMD}}
        for (int i = 0; i < n; ++i) {
            {{REAL}} v[UK][UJ];
#pragma GCC unroll {{UK}}
            for (int w = 0; w < nw; ++w)
#pragma GCC unroll {{UJ}}
                for (int u = 0; u < nu; ++u)
                    v[w][u] = {{NS}}_point(in,
#{if WAVE}
                                           prev, c2,
#{endif}
#{if DAMPED}
                                           {{NS}}_ex(b, s + i) + gyz[w][u],
#{endif}
                                           at + w * slice + u * line + s + i, line, slice,
                                           {{SCALARS}});
#pragma GCC unroll {{UK}}
            for (int w = 0; w < nw; ++w)
#pragma GCC unroll {{UJ}}
                for (int u = 0; u < nu; ++u)
                    buf[w][u][i] = v[w][u];
        }
        for (int w = 0; w < nw; ++w)
            for (int u = 0; u < nu; ++u) {
#{if WAVE}
                if (k + w == sk && j + u == sj && si >= s && si < s + n)
                    buf[w][u][si - s] += src;  // point source
#{endif}
                {{NS}}_stream(out + at + w * slice + u * line + s, buf[w][u], n);
            }
    }
#{else}
#pragma omp simd{{SIMD}}
    for (int i = i0; i < i1; ++i) {
        {{REAL}} v[UK][UJ];
#pragma GCC unroll {{UK}}
        for (int w = 0; w < nw; ++w)
#pragma GCC unroll {{UJ}}
            for (int u = 0; u < nu; ++u)
                v[w][u] = {{NS}}_point(in,
#{if WAVE}
                                       prev, c2,
#{endif}
#{if DAMPED}
                                       {{NS}}_ex(b, i) + gyz[w][u],
#{endif}
                                       at + w * slice + u * line + i, line, slice, {{SCALARS}});
#pragma GCC unroll {{UK}}
        for (int w = 0; w < nw; ++w)
#pragma GCC unroll {{UJ}}
            for (int u = 0; u < nu; ++u)
                out[at + w * slice + u * line + i] = v[w][u];
    }
#{if WAVE}
    if (sk >= k && sk < k + nw && sj >= j && sj < j + nu && si >= i0 && si < i1)
        out[at + (sk - k) * slice + (sj - j) * line + si] += src;  // point source
#{endif}
#{endif}
#{endif}
}
#{if DWAVE}

// dwave: rows j .. j + nu - 1 of planes k .. k + nw - 1 as {{NS}}_rows computes them, but
// where a row lies in the hole's y and z range (damped kernel), only its x outside the hole:
// such groups go one row at a time.
static inline __attribute__((always_inline)) void {{NS}}_span(
    {{REAL}} *restrict out, const {{REAL}} *restrict in, const {{REAL}} *restrict prev,
    const {{REAL}} *restrict c2, int si, int sj, int sk, {{REAL}} src, {{NS}}_box b,
    ptrdiff_t line, ptrdiff_t slice, int j, int k, int i0, int i1, int nu, int nw,
    {{SCALAR_DECLS}})
{
#{if DAMPED}
    const int y0 = b.hy0 + {{R}}, y1 = b.hy1 + {{R}}, z0 = b.hz0 + {{R}}, z1 = b.hz1 + {{R}};
    const int x0 = b.hx0 + {{R}}, x1 = b.hx1 + {{R}};  // padded
    if (b.hx1 > b.hx0 && j + nu > y0 && j < y1 && k + nw > z0 && k < z1) {
        for (int w = 0; w < nw; ++w)
            for (int u = 0; u < nu; ++u) {
                const int jj = j + u, kk = k + w;
                const int in_hole = jj >= y0 && jj < y1 && kk >= z0 && kk < z1;
                // [i0, a) and [c, i1): the row's x outside the hole (a = c = i1: all of it)
                const int a = !in_hole ? i1 : x0 < i0 ? i0 : x0 > i1 ? i1 : x0;
                const int c = !in_hole ? i1 : x1 < i0 ? i0 : x1 > i1 ? i1 : x1;
                if (i0 < a)
                    {{NS}}_rows(out, in, prev, c2, si, sj, sk, src, b, line, slice, jj, kk, i0,
                                a, 1, 1, {{SCALARS}});
                if (c < i1)
                    {{NS}}_rows(out, in, prev, c2, si, sj, sk, src, b, line, slice, jj, kk, c,
                                i1, 1, 1, {{SCALARS}});
            }
        return;
    }
#{endif}
    {{NS}}_rows(out, in, prev, c2, si, sj, sk, src, b, line, slice, j, k, i0, i1, nu, nw,
                {{SCALARS}});
}
#{endif}
