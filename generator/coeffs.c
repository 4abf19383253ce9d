/* Finite-difference weights by Fornberg's algorithm ("Generation of finite difference
 * formulas on arbitrarily spaced grids", Math. Comp. 1988), in long double so that the
 * weights are exact to well below double precision for every R up to 8. */
#include "fdt_gen.h"

#include <string.h>

#define FORNBERG_NMAX 64
#define FORNBERG_MMAX 8

int fdt_fornberg(int m, long double x0, const long double *x, int n, long double *w, fdt_err *e)
{
    if (m < 0 || m > FORNBERG_MMAX || n < m + 1 || n > FORNBERG_NMAX)
        return fdt_err_set(e, "fornberg: derivative order %d with %d nodes is not supported", m, n);
    long double C[FORNBERG_NMAX][FORNBERG_MMAX + 1];
    memset(C, 0, sizeof C);
    long double c1 = 1.0L, c4 = x[0] - x0;
    C[0][0] = 1.0L;
    for (int i = 1; i < n; i++) {
        int mn = i < m ? i : m;
        long double c2 = 1.0L, c5 = c4;
        c4 = x[i] - x0;
        for (int j = 0; j < i; j++) {
            long double c3 = x[i] - x[j];
            if (c3 == 0.0L)
                return fdt_err_set(e, "fornberg: nodes %d and %d coincide", i, j);
            c2 *= c3;
            if (j == i - 1) {
                for (int k = mn; k >= 1; k--)
                    C[i][k] = c1 * (k * C[i - 1][k - 1] - c5 * C[i - 1][k]) / c2;
                C[i][0] = -c1 * c5 * C[i - 1][0] / c2;
            }
            for (int k = mn; k >= 1; k--)
                C[j][k] = (c4 * C[j][k] - k * C[j][k - 1]) / c3;
            C[j][0] = c4 * C[j][0] / c3;
        }
        c1 = c2;
    }
    for (int i = 0; i < n; i++)
        w[i] = C[i][m];
    return 0;
}

int fdt_fd_coeffs(int R, long double *coef, fdt_err *e)
{
    if (R < FDT_R_MIN || R > FDT_R_MAX)
        return fdt_err_set(e, "R=%d is out of range (%d..%d)", R, FDT_R_MIN, FDT_R_MAX);
    long double x[2 * FDT_R_MAX + 1], w[2 * FDT_R_MAX + 1];
    for (int i = 0; i < 2 * R + 1; i++)
        x[i] = (long double)(i - R);
    if (fdt_fornberg(2, 0.0L, x, 2 * R + 1, w, e))
        return -1;
    /* The exact weights are symmetric; average the pair so the folded form is exact too. */
    coef[0] = w[R];
    for (int r = 1; r <= R; r++)
        coef[r] = 0.5L * (w[R + r] + w[R - r]);
    return 0;
}
