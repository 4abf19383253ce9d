/* Runs the dwave launchers of an exported CPU header (fd_tuned.h, written by
 * tests/test_export.c: family cpu_dwave_r2_f32) on one grid, every variant that can run it, and
 * checks each output point by point against a double-precision damped step of the same fields
 * (p_next = (2p - (1 - g) p_prev + c2 L(p)) / (1 + g) + src, g the damping S (d/W)^2 summed
 * over the axes), the eta array the header's profile function fills against S (d/W)^2, and
 * that nothing outside the interior was written. Prints one line per variant and the variant
 * the launcher picks here; exits 0 when every check holds, 1 otherwise.
 * Usage: dwave_header NX NY NZ W S */
#include "fd_tuned.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define R 2
static const double C[R + 1] = {-2.5, 4.0 / 3.0, -1.0 / 12.0}; /* d2/dx2, order 4 */

/* Field f (0 p, 1 p_prev, 2 c2) at padded point (i, j, k): smooth, never zero. */
static double val(int f, long long i, long long j, long long k)
{
    return (f == 2 ? 0.1 : 1.0) * (0.5 + 0.4 * sin(0.37 * i + 0.53 * (f + 1) * j + 0.71 * k + f));
}

/* The damping at interior coordinate x of an axis of n points. */
static double damping(int x, int n, int W, double S)
{
    int d = x < W ? W - x : x > n - 1 - W ? x - (n - 1 - W) : 0;
    return S * ((double)d / W) * ((double)d / W);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: dwave_header NX NY NZ W S\n");
        return 2;
    }
    const int nx = atoi(argv[1]), ny = atoi(argv[2]), nz = atoi(argv[3]), W = atoi(argv[4]);
    const double S = atof(argv[5]), sx = 1.1, sy = 0.9, sz = 1.3, src = 0.5;
    const int si = R + nx / 2, sj = R + ny / 3, sk = R + nz / 4, n[3] = {nx, ny, nz};
    const int nv = (int)(sizeof fdtuned_cpu_dwave_r2_f32_variants /
                         sizeof fdtuned_cpu_dwave_r2_f32_variants[0]);
    float *eta = malloc(sizeof *eta * (size_t)(nx + ny + nz));
    int failed = 0, ran = 0;
    fdtuned_cpu_dwave_r2_f32_profile(nx, ny, nz, eta);
    for (int a = 0, at = 0; a < 3; at += n[a], a++)
        for (int x = 0; x < n[a]; x++)
            if (fabs(eta[at + x] - damping(x, n[a], W, S)) > 1e-7) {
                printf("eta[%d] = %.9g, want %.9g\n", at + x, eta[at + x],
                       damping(x, n[a], W, S));
                failed = 1;
            }
    for (int v = 0; v < nv; v++) {
        fdtuned_layout l;
        if (fdtuned_variant_layout(fdtuned_cpu_dwave_r2_f32_variants, nv, v, nx, ny, nz, &l)) {
            printf("variant %d: cannot run %dx%dx%d\n", v, nx, ny, nz);
            continue;
        }
        float *f[4];
        for (int q = 0; q < 4; q++)
            f[q] = malloc(sizeof(float) * (size_t)l.elems);
        for (long long e = 0; e < l.elems; e++)
            f[3][e] = NAN; /* the output: what is never written stays NaN */
        for (long long k = 0; k < nz + 2 * R; k++)
            for (long long j = 0; j < ny + 2 * R; j++)
                for (long long i = 0; i < nx + 2 * R; i++)
                    for (int q = 0; q < 3; q++)
                        f[q][l.offset + i + l.line * j + l.slice * k] = (float)val(q, i, j, k);
        int rc = fdtuned_cpu_dwave_r2_f32_run(v, f[3], f[0], f[1], f[2], eta, nx, ny, nz,
                                              (float)sx, (float)sy, (float)sz, si, sj, sk,
                                              (float)src);
        double max = 0;
        long long bad = 0, halo = 0;
        for (long long k = 0; k < nz + 2 * R; k++)
            for (long long j = 0; j < ny + 2 * R; j++)
                for (long long i = 0; i < nx + 2 * R; i++) {
                    float got = f[3][l.offset + i + l.line * j + l.slice * k];
                    int inside = i >= R && i < nx + R && j >= R && j < ny + R && k >= R &&
                                 k < nz + R;
                    if (!inside) {
                        halo += !isnan(got);
                        continue;
                    }
                    double g = damping((int)i - R, nx, W, S) + damping((int)j - R, ny, W, S) +
                               damping((int)k - R, nz, W, S);
                    double lap = 0;
                    for (int r = 0; r <= R; r++) {
                        double w = r ? 1 : 0.5; /* the centre once per axis */
                        lap += C[r] * w * sx * (val(0, i + r, j, k) + val(0, i - r, j, k));
                        lap += C[r] * w * sy * (val(0, i, j + r, k) + val(0, i, j - r, k));
                        lap += C[r] * w * sz * (val(0, i, j, k + r) + val(0, i, j, k - r));
                    }
                    double want = (2 * val(0, i, j, k) - (1 - g) * val(1, i, j, k) +
                                   val(2, i, j, k) * lap) / (1 + g) +
                                  (i == si && j == sj && k == sk ? src : 0);
                    double d = fabs(got - want);
                    if (!(d <= 1e-4))
                        bad++;
                    if (!(d <= max))
                        max = isnan(d) ? INFINITY : d;
                }
        printf("variant %d (%s): rc %d, max |diff| %.3g, %lld points off, %lld halo written\n",
               v, fdtuned_cpu_dwave_r2_f32_variants[v].config, rc, max, bad, halo);
        failed |= rc != 0 || bad != 0 || halo != 0;
        ran++;
        for (int q = 0; q < 4; q++)
            free(f[q]);
    }
    printf("picked %d\n", fdtuned_cpu_dwave_r2_f32_current(nx, ny, nz));
    free(eta);
    return failed || !ran;
}
