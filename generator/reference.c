/* The meaning of every operator, in double precision on the CPU: input fields as a pure
 * function of coordinates (the GPU fill kernel computes the same values bit for bit), the
 * reference value at one point, and the tolerances derived from precision and radius. */
#include "fdt_gen.h"

#include <math.h>
#include <string.h>

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Keep in sync with fdt_value() in templates/util.hip: the GPU fill must agree bit for bit. */
double fdt_input_value(uint64_t seed, int field, int64_t i, int64_t j, int64_t k, fdt_prec prec)
{
    uint64_t h = mix64(seed + 0x632be59bd9b4e019ULL * (uint64_t)(field + 1));
    h = mix64(h + (uint64_t)i);
    h = mix64(h + (uint64_t)j);
    h = mix64(h + (uint64_t)k);
    /* An odd integer in (-2^24, 2^24) scaled by 2^-24: never zero, exact in f32 and f64. */
    int64_t n = 2 * (int64_t)(h >> 40) + 1 - (1LL << 24);
    double v = (double)n * 0x1p-24;
    if (field == FDT_FIELD_C2)
        v = 0.25 + 0.125 * (v + 1.0); /* (c dt / h)^2 in (0.25, 0.5): positive, stable */
    return prec == FDT_F32 ? (double)(float)v : v;
}

void fdt_params_default(const fdt_problem *p, fdt_params *q)
{
    q->sx = 1.0;
    q->sy = 0.5;
    q->sz = 0.25;
    q->si = p->R + p->nx / 2;
    q->sj = p->R + p->ny / 2;
    q->sk = p->R + p->nz / 2;
    q->src = 0.75;
}

static double d2(const long double *coef, int R, fdt_input_fn fn, void *ctx, int field,
                 int64_t i, int64_t j, int64_t k, int axis)
{
    int64_t d[3] = {0, 0, 0};
    long double s = coef[0] * fn(ctx, field, i, j, k);
    for (int r = 1; r <= R; r++) {
        d[axis] = r;
        s += coef[r] * ((long double)fn(ctx, field, i + d[0], j + d[1], k + d[2]) +
                        fn(ctx, field, i - d[0], j - d[1], k - d[2]));
    }
    return (double)s;
}

double fdt_absorb_damping(const fdt_problem *p, int axis, int64_t x)
{
    FDT_ASSERT(axis >= 0 && axis < 3, "an axis");
    const int64_t n = axis == 0 ? p->nx : axis == 1 ? p->ny : p->nz, W = p->absorb_w;
    int64_t d = 0;
    if (x < W)
        d = W - x;
    else if (x > n - 1 - W)
        d = x - (n - 1 - W);
    if (!d || W < 1)
        return 0.0;
    double r = (double)d / (double)W;
    return p->absorb_s * r * r;
}

size_t fdt_absorb_profile_bytes(const fdt_problem *p)
{
    return (size_t)(p->nx + p->ny + p->nz) * fdt_prec_size(p->prec);
}

int fdt_absorb_profile(const fdt_problem *p, void *buf, fdt_err *e)
{
    if (fdt_problem_check(p, e))
        return -1;
    if (p->op != FDT_OP_DWAVE)
        return fdt_err_set(e, "absorbing profile: only dwave has an absorbing layer, not %s",
                           fdt_op_name(p->op));
    const int64_t n[3] = {p->nx, p->ny, p->nz};
    size_t at = 0;
    for (int axis = 0; axis < 3; axis++)
        for (int64_t x = 0; x < n[axis]; x++, at++) {
            double v = fdt_absorb_damping(p, axis, x);
            if (p->prec == FDT_F32) {
                float f = (float)v;
                memcpy((float *)buf + at, &f, sizeof f);
            } else {
                memcpy((double *)buf + at, &v, sizeof v);
            }
        }
    return 0;
}

/* dwave: the damping g at padded point (i, j, k), the sum of the three axes'. */
static double damping_at(const fdt_problem *p, int64_t i, int64_t j, int64_t k)
{
    return fdt_absorb_damping(p, 0, i - p->R) + fdt_absorb_damping(p, 1, j - p->R) +
           fdt_absorb_damping(p, 2, k - p->R);
}

double fdt_reference_point(const fdt_problem *p, const fdt_params *q, const long double *coef,
                           fdt_input_fn fn, void *ctx, int64_t i, int64_t j, int64_t k)
{
    const int R = p->R, F = FDT_FIELD_IN;
    switch (p->op) {
    case FDT_OP_D2X: return q->sx * d2(coef, R, fn, ctx, F, i, j, k, 0);
    case FDT_OP_D2Y: return q->sy * d2(coef, R, fn, ctx, F, i, j, k, 1);
    case FDT_OP_D2Z: return q->sz * d2(coef, R, fn, ctx, F, i, j, k, 2);
    default: break;
    }
    double lap = q->sx * d2(coef, R, fn, ctx, F, i, j, k, 0) +
                 q->sy * d2(coef, R, fn, ctx, F, i, j, k, 1) +
                 q->sz * d2(coef, R, fn, ctx, F, i, j, k, 2);
    if (p->op == FDT_OP_LAP)
        return lap;
    double g = p->op == FDT_OP_DWAVE ? damping_at(p, i, j, k) : 0.0;
    double v = 2.0 * fn(ctx, F, i, j, k) - (1.0 - g) * fn(ctx, FDT_FIELD_PREV, i, j, k) +
               fn(ctx, FDT_FIELD_C2, i, j, k) * lap;
    if (g != 0.0)
        v /= 1.0 + g;
    if (i == q->si && j == q->sj && k == q->sk)
        v += q->src;
    return v;
}

void fdt_tolerance_make(const fdt_problem *p, const fdt_params *q, fdt_tolerance *t)
{
    long double coef[FDT_R_MAX + 1];
    fdt_err e;
    fdt_fd_coeffs(p->R, coef, &e);
    double sum = fabs((double)coef[0]);
    for (int r = 1; r <= p->R; r++)
        sum += 2.0 * fabs((double)coef[r]);
    int n1 = 2 * p->R + 1;
    switch (p->op) {
    case FDT_OP_D2X: t->abs_terms = q->sx * sum; t->nterms = n1; break;
    case FDT_OP_D2Y: t->abs_terms = q->sy * sum; t->nterms = n1; break;
    case FDT_OP_D2Z: t->abs_terms = q->sz * sum; t->nterms = n1; break;
    case FDT_OP_LAP: t->abs_terms = (q->sx + q->sy + q->sz) * sum; t->nterms = 3 * n1; break;
    default:
        /* 2 p - p_prev + c2 lap + src, with |p|, |p_prev| < 1 and c2 < 0.5 */
        t->abs_terms = 3.0 + 0.5 * (q->sx + q->sy + q->sz) * sum + fabs(q->src);
        t->nterms = 3 * n1 + 4;
    }
    if (p->op == FDT_OP_DWAVE) {
        /* (2 p - (1 - g) p_prev + c2 L(p)) / (1 + g) with 0 <= g <= 3 S: the numerator's
         * terms grow by g |p_prev| <= g; g's own rounding (distance, square, scale, the sum
         * of three; or three rounded array values and their sum) moves the result by at most
         * |dg| (|p_prev| + |result|), so a relative error of g counts as g times the terms;
         * the division and the extra product and sum are three more roundings */
        double gmax = 3.0 * p->absorb_s;
        t->abs_terms = t->abs_terms * (1.0 + gmax) + gmax;
        t->nterms += 10;
    }
    double u = p->prec == FDT_F32 ? 0x1p-24 : 0x1p-53;
    /* |fl(sum) - sum| <= n u sum|terms| for any summation order (FMA included); two more
     * roundings for the coefficients and the scale; a factor 2 of margin. */
    t->ref_vs_exact = 2.0 * (t->nterms + 2) * u * t->abs_terms;
    t->cand_vs_ref = 2.0 * t->ref_vs_exact;
}
