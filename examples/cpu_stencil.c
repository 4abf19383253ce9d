/* A plain C program that uses fdtune's tuned CPU kernels, as a user's code would: it includes
 * the header `fdtune export --cpu auto -o fdtuned_cpu.h` wrote and runs every operator the
 * header exports (FDTUNED_CPU_OPERATORS) on one grid through its launcher, then checks the
 * result point by point against a double-precision reference computed here from the
 * textbook weights, and that the launcher wrote nothing outside the interior.
 *
 *   fdtune --cpu auto --R 4 --grid 64^3                  # tune (or scripts/run.sh)
 *   fdtune export --cpu auto --R 4 -o fdtuned_cpu.h
 *   cc -O3 -march=native -fopenmp -I. examples/cpu_stencil.c -o cpu_stencil -lm
 *   ./cpu_stencil 64 64 64                               # or any other grid: NX NY NZ
 *
 * It prints per operator the variant the header picked for this CPU and grid (and the CPU as
 * the header sees it), the largest error relative to the largest reference value, and
 * "ok"; exit status 0 when every operator is within its tolerance (f32: 1e-4, f64: 1e-10)
 * and left the halo alone, 1 otherwise, 2 for bad arguments or no memory. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTUNED_HEADER
#define FDTUNED_HEADER "fdtuned_cpu.h"
#endif
#define FDTUNED_CPU_ONLY 1 /* a header with a GPU part too: the CPU part alone */
#include FDTUNED_HEADER

/* The run-time scales (1/h^2 per axis) and the wave's source, distinct so that a launcher
 * that mixes them up is caught. */
static const double SX = 1.0, SY = 0.5, SZ = 0.25, SRC = 3.0;

/* Central second-derivative weights of radius R (order 2R): w[0] the centre, w[m] the pair
 * at distance m. */
static void weights(int R, double *w)
{
    double sum = 0;
    for (int m = 1; m <= R; m++) {
        double v = 2.0 * (m % 2 ? 1 : -1) / ((double)m * m);
        for (int k = 1; k <= m; k++) /* (R!)^2 / ((R-m)! (R+m)!) as a product */
            v *= (double)(R - m + k) / (R + k);
        w[m] = v;
        sum += v;
    }
    w[0] = -2 * sum;
}

/* The second derivative at element o of a double box along stride s. */
static double d2(const double *p, long long o, long long s, int R, const double *w)
{
    double v = w[0] * p[o];
    for (int m = 1; m <= R; m++)
        v += w[m] * (p[o - m * s] + p[o + m * s]);
    return v;
}

/* The reference of one operator at element o of the padded box (lay: its layout). */
static double reference(const char *op, const double *in, const double *prev, const double *c2,
                        long long o, const fdtuned_layout *lay, const double *w, long long src_at)
{
    int R = lay->R;
    double dx = d2(in, o, 1, R, w), dy = d2(in, o, lay->line, R, w);
    double dz = d2(in, o, lay->slice, R, w);
    if (!strcmp(op, "d2x"))
        return SX * dx;
    if (!strcmp(op, "d2y"))
        return SY * dy;
    if (!strcmp(op, "d2z"))
        return SZ * dz;
    double lap = SX * dx + SY * dy + SZ * dz;
    if (!strcmp(op, "lap"))
        return lap;
    return 2 * in[o] - prev[o] + c2[o] * lap + (o == src_at ? SRC : 0); /* wave */
}

/* Deterministic values in [-1, 1]. */
static double value(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / (double)(1ULL << 52) - 1.0;
}

/* The call of each operator's launcher (wave: p_next, p, p_prev, c2 and the source at the
 * padded point (si, sj, sk)). */
#define CALL_d2x(f, T) f(out, in, nx, ny, nz, (T)SX)
#define CALL_d2y(f, T) f(out, in, nx, ny, nz, (T)SY)
#define CALL_d2z(f, T) f(out, in, nx, ny, nz, (T)SZ)
#define CALL_lap(f, T) f(out, in, nx, ny, nz, (T)SX, (T)SY, (T)SZ)
#define CALL_wave(f, T) f(out, in, prev, c2, nx, ny, nz, (T)SX, (T)SY, (T)SZ, si, sj, sk, (T)SRC)

/* One operator of the header on an nx x ny x nz grid: 0 when it passes, 1 when it does not,
 * 2 when it could not be run. */
#define CHECK(op, R, prec, T)                                                                  \
    static int check_##op##_r##R##_##prec(int nx, int ny, int nz)                              \
    {                                                                                          \
        fdtuned_layout lay;                                                                    \
        const char *name, *arch;                                                               \
        int cores, v = fdtuned_cpu_##op##_r##R##_##prec##_current(nx, ny, nz);                  \
        fdtuned_cpu_current_device(&name, &arch, &cores);                                     \
        if (v < 0 || fdtuned_cpu_##op##_r##R##_##prec##_layout(nx, ny, nz, &lay)) {             \
            printf("%s R=%d %s: no variant runs %dx%dx%d\n", #op, R, #prec, nx, ny, nz);       \
            return 2;                                                                          \
        }                                                                                      \
        printf("%s R=%d %s on %s (%s, %d cores): variant %d %s [%s]\n", #op, R, #prec, name,   \
               arch, cores, v, fdtuned_cpu_##op##_r##R##_##prec##_variants[v].kernel,          \
               fdtuned_cpu_##op##_r##R##_##prec##_variants[v].config);                         \
        size_t n = (size_t)lay.elems, bytes = (n * sizeof(T) + 63) / 64 * 64;                  \
        T *out = aligned_alloc(64, bytes), *in = aligned_alloc(64, bytes);                     \
        T *prev = aligned_alloc(64, bytes), *c2 = aligned_alloc(64, bytes);                    \
        double *din = malloc(n * 3 * sizeof(double));                                          \
        if (!out || !in || !prev || !c2 || !din)                                               \
            return 2;                                                                          \
        uint64_t seed = 12345;                                                                 \
        for (size_t i = 0; i < n; i++) {                                                       \
            in[i] = (T)value(&seed);                                                           \
            prev[i] = (T)value(&seed);                                                         \
            c2[i] = (T)(0.5 + 0.25 * value(&seed));                                            \
            out[i] = (T)NAN; /* poison: what stays NaN was not written */                     \
            din[i] = in[i];                                                                    \
            din[n + i] = prev[i];                                                              \
            din[2 * n + i] = c2[i];                                                            \
        }                                                                                      \
        int si = R + nx / 2, sj = R + ny / 3, sk = R + nz / 4;                                 \
        (void)si;                                                                              \
        (void)sj;                                                                              \
        (void)sk;                                                                              \
        if (CALL_##op(fdtuned_cpu_##op##_r##R##_##prec, T) != 0) {                             \
            printf("  the launcher refused the grid\n");                                       \
            return 2;                                                                          \
        }                                                                                      \
        double w[R + 1], worst = 0, big = 0;                                                   \
        weights(R, w);                                                                         \
        long long src_at = lay.offset + si + lay.line * sj + lay.slice * sk, bad = 0;         \
        long long halo = 0;                                                                    \
        for (long long k = 0; k < lay.mz; k++)                                                 \
            for (long long j = 0; j < lay.my; j++)                                             \
                for (long long i = 0; i < lay.mx; i++) {                                       \
                    long long o = i + lay.line * j + lay.slice * k;                            \
                    int inside = i >= R && i < R + nx && j >= R && j < R + ny && k >= R &&     \
                                 k < R + nz;                                                   \
                    if (!inside) {                                                             \
                        halo += !isnan((double)out[lay.offset + o]);                           \
                        continue;                                                              \
                    }                                                                          \
                    double ref = reference(#op, din + lay.offset, din + n + lay.offset,        \
                                           din + 2 * n + lay.offset, o, &lay, w,               \
                                           src_at - lay.offset);                               \
                    double err = fabs((double)out[lay.offset + o] - ref);                      \
                    if (!(err <= worst))                                                       \
                        worst = isnan(err) ? INFINITY : err;                                   \
                    big = fabs(ref) > big ? fabs(ref) : big;                                   \
                    bad += isnan(err);                                                         \
                }                                                                              \
        double rel = worst / (big > 0 ? big : 1), tol = sizeof(T) == 4 ? 1e-4 : 1e-10;         \
        int ok = rel <= tol && !halo && !bad;                                                  \
        printf("  max error %.3g of the largest value %.3g (tolerance %.0e), %lld halo "       \
               "points written: %s\n", rel, big, tol, halo, ok ? "ok" : "WRONG");              \
        free(out);                                                                             \
        free(in);                                                                              \
        free(prev);                                                                            \
        free(c2);                                                                              \
        free(din);                                                                             \
        return !ok;                                                                            \
    }
FDTUNED_CPU_OPERATORS(CHECK)

#define RUN(op, R, prec, T)                                                                    \
    {                                                                                          \
        int r = check_##op##_r##R##_##prec(nx, ny, nz);                                        \
        rc = r > rc ? r : rc;                                                                  \
    }

int main(int argc, char **argv)
{
    int nx = 64, ny = 64, nz = 64;
    if (argc == 4) {
        nx = atoi(argv[1]);
        ny = atoi(argv[2]);
        nz = atoi(argv[3]);
    }
    if ((argc != 1 && argc != 4) || nx < 1 || ny < 1 || nz < 1) {
        fprintf(stderr, "usage: %s [NX NY NZ]  (default 64 64 64)\n", argv[0]);
        return 2;
    }
    int rc = 0;
    FDTUNED_CPU_OPERATORS(RUN)
    return rc;
}
