/* A plain C program that steps a wave field with fdtune's exported time-step driver, as a
 * user's code would: it includes the header `fdtune export --cpu auto --driver` wrote (the
 * CPU's tuned kernels and deployment of one time-step operator, dwave or wave, with the
 * fdtd_* API after them), fills the velocity, runs N steps with a point source at the centre
 * through fdtd_step, and runs the same N steps in double precision here, from the textbook
 * weights and the damped form of the step (g = S (d/W)^2 summed over the axes, d the distance
 * into the layer; g = 0 for wave):
 *   p_next = (2p - (1 - g) p_prev + c2 (d2x + d2y + d2z)(p)) / (1 + g) + src at the source.
 *
 *   fdtune --cpu auto --op dwave --absorb 8 --R 4 --precision f32 --grid 64^3   # tune
 *   fdtune export --cpu auto --op dwave --absorb 8 --R 4 --precision f32 --driver -o fdtd.h
 *   cc -O3 -march=native -fopenmp -I. examples/dwave_driver.c -o dwave_driver -lm
 *   ./dwave_driver 64 64 64 200                          # NX NY NZ STEPS, any grid
 *
 * On a GPU: `fdtune export --gpu auto ... --driver -o fdtd.h`, then build this same file as
 * CUDA (or HIP) code with DWAVE_DRIVER_GPU defined, e.g.
 *   nvcc -O3 -arch=sm_90 -x cu -DDWAVE_DRIVER_GPU -I. examples/dwave_driver.c -o dwave_driver
 * (hipcc -DDWAVE_DRIVER_GPU -x hip on AMD): the fields are then device memory, filled and
 * read back with hipMemcpy (cudaMemcpy under nvcc).
 *
 * It prints the variant the driver runs, the largest field value and the largest difference
 * from the double-precision steps; exit status 0 when that difference is within the
 * tolerance (f32: 1e-4, f64: 1e-10, of the largest value) and nothing outside the interior
 * was written, 1 otherwise, 2 for bad arguments or no memory. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTD_HEADER
#define FDTD_HEADER "fdtd.h"
#endif
#ifndef DWAVE_DRIVER_GPU
#define FDTUNED_CPU_ONLY 1 /* a header with a GPU part too: the CPU part alone */
#endif
#include FDTD_HEADER

/* A field of the driver's layout in host memory: on the CPU the driver's own array f, on a
 * GPU a zeroed host copy of its layout (fdtd_layout()->elems values), or NULL (no memory). */
static fdtd_real *host_field(fdtd_real *f)
{
#ifdef DWAVE_DRIVER_GPU
    (void)f;
    return (fdtd_real *)calloc((size_t)fdtd_layout()->elems, sizeof(fdtd_real));
#else
    return f;
#endif
}

/* Host field h into the driver's field f (a GPU: copied, h freed): 0, or -1. */
static int put_field(fdtd_real *f, fdtd_real *h)
{
#ifdef DWAVE_DRIVER_GPU
    int rc = hipMemcpy(f, h, sizeof(fdtd_real) * (size_t)fdtd_layout()->elems,
                       hipMemcpyHostToDevice) == hipSuccess ? 0 : -1;
    free(h);
    return rc;
#else
    return f == h ? 0 : -1;
#endif
}

/* The driver's field f readable on the host (a GPU: a copy, NULL when it fails). */
static fdtd_real *get_field(fdtd_real *f)
{
#ifdef DWAVE_DRIVER_GPU
    fdtd_real *h = host_field(f);
    if (h && hipMemcpy(h, f, sizeof(fdtd_real) * (size_t)fdtd_layout()->elems,
                       hipMemcpyDeviceToHost) != hipSuccess) {
        free(h);
        h = NULL;
    }
    return h;
#else
    return f;
#endif
}

#define C2 0.1 /* (v dt / h)^2: stable for every radius in 3D */

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

/* The damping at interior coordinate x of an axis of n points. */
static double damping(long long x, long long n)
{
    const long long W = FDTD_ABSORB_W;
    long long d = x < W ? W - x : x > n - 1 - W ? x - (n - 1 - W) : 0;
    return W ? FDTD_ABSORB_S * ((double)d / W) * ((double)d / W) : 0;
}

/* The source amplitude at step n: a short burst. */
static double source(int n) { return n < 24 ? sin(0.26 * n) : 0; }

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: dwave_driver NX NY NZ STEPS\n");
        return 2;
    }
    const int nx = atoi(argv[1]), ny = atoi(argv[2]), nz = atoi(argv[3]), steps = atoi(argv[4]);
    const int R = FDTD_R;
    if (nx < 1 || ny < 1 || nz < 1 || steps < 1) {
        fprintf(stderr, "dwave_driver: NX NY NZ STEPS must be positive\n");
        return 2;
    }
    if (fdtd_init(nx, ny, nz, 1, 1, 1)) {
        fprintf(stderr, "dwave_driver: fdtd_init %dx%dx%d failed (no variant, or no memory)\n",
                nx, ny, nz);
        return 2;
    }
    fdtd_real *c2 = host_field(fdtd_c2());
    if (!c2) {
        fprintf(stderr, "dwave_driver: no memory\n");
        return 2;
    }
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++)
                c2[fdtd_index(i, j, k)] = (fdtd_real)C2;
    if (put_field(fdtd_c2(), c2)) {
        fprintf(stderr, "dwave_driver: c2 could not be copied to the device\n");
        return 2;
    }
    /* the reference: padded double boxes (nx+2R) x (ny+2R) x (nz+2R), zeros beyond */
    const long long mx = nx + 2 * R, my = ny + 2 * R, mz = nz + 2 * R, n = mx * my * mz;
    double *q[3], w[FDTD_R + 1];
    for (int f = 0; f < 3; f++)
        q[f] = (double *)calloc((size_t)n, sizeof(double));
    if (!q[0] || !q[1] || !q[2]) {
        fprintf(stderr, "dwave_driver: no memory\n");
        return 2;
    }
    weights(R, w);
    const long long at = (R + nx / 2) + mx * (R + ny / 2) + mx * my * (R + nz / 2);
    for (int s = 0; s < steps; s++) {
        if (fdtd_step((fdtd_real)source(s)) != 0) {
            fprintf(stderr, "dwave_driver: fdtd_step failed at step %d\n", s);
            return 1;
        }
        double *p = q[0], *prev = q[1], *next = q[2];
        for (long long k = R; k < nz + R; k++)
            for (long long j = R; j < ny + R; j++)
                for (long long i = R; i < nx + R; i++) {
                    long long o = i + mx * j + mx * my * k;
                    double lap = 3 * w[0] * p[o];
                    for (int m = 1; m <= R; m++)
                        lap += w[m] * (p[o - m] + p[o + m] + p[o - m * mx] + p[o + m * mx] +
                                       p[o - m * mx * my] + p[o + m * mx * my]);
                    double g = damping(i - R, nx) + damping(j - R, ny) + damping(k - R, nz);
                    next[o] = (2 * p[o] - (1 - g) * prev[o] + C2 * lap) / (1 + g) +
                              (o == at ? source(s) : 0);
                }
        q[0] = next, q[1] = p, q[2] = prev;
    }
    double maxv = 0, maxd = 0;
    long long halo = 0;
    const fdtd_real *pf = get_field(fdtd_p());
    if (!pf) {
        fprintf(stderr, "dwave_driver: p could not be read back from the device\n");
        return 1;
    }
    for (long long k = 0; k < mz; k++)
        for (long long j = 0; j < my; j++)
            for (long long i = 0; i < mx; i++) {
                double got = pf[fdtd_index((int)i - R, (int)j - R, (int)k - R)];
                double want = q[0][i + mx * j + mx * my * k];
                if (i < R || i >= nx + R || j < R || j >= ny + R || k < R || k >= nz + R) {
                    halo += got != 0;
                    continue;
                }
                if (fabs(want) > maxv)
                    maxv = fabs(want);
                if (!(fabs(got - want) <= maxd))
                    maxd = isnan(got) ? INFINITY : fabs(got - want);
            }
    const double tol = (sizeof(fdtd_real) == 4 ? 1e-4 : 1e-10) * (maxv > 1 ? maxv : 1);
    printf("%s R=%d W=%d S=%g on %dx%dx%d, variant %d (%s): %d steps, max |p| %.6g, max "
           "difference %.3g (tolerance %.3g), %lld halo values written: %s\n",
           FDTD_OP, R, FDTD_ABSORB_W, FDTD_ABSORB_S, nx, ny, nz, fdtd_s.variant,
           FDTD_VARIANT_CONFIG(fdtd_s.variant), steps, maxv, maxd, tol, halo,
           maxd <= tol && !halo ? "ok" : "WRONG");
    for (int f = 0; f < 3; f++)
        free(q[f]);
#ifdef DWAVE_DRIVER_GPU
    free((void *)pf);
#endif
    fdtd_finalize();
    return maxd <= tol && !halo ? 0 : 1;
}
