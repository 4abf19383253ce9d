/* Timing policy and statistics: how many launches a candidate gets, and the median,
 * quartiles and outliers of what they took. The median is what fdtune stores and compares. */
#include "fdt_eval.h"

#include <stdlib.h>

void fdt_timing_opts_default(fdt_timing_opts *o)
{
    o->warmup = 3;
    o->min_reps = 20;
    o->max_reps = 400;
    o->max_seconds = 2.0;
    o->stable = 0.005;
}

void fdt_timing_opts_probe(fdt_timing_opts *o)
{
    o->warmup = 1;
    o->min_reps = 3;
    o->max_reps = 3;
    o->max_seconds = 0.5;
    o->stable = 1.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile with linear interpolation between order statistics (sorted input). */
static double quantile(const double *s, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1)
        return s[n - 1];
    return s[lo] + (pos - lo) * (s[lo + 1] - s[lo]);
}

void fdt_timing_stats(double *ms, int n, fdt_timing *t)
{
    int flushed = t->flushed;
    *t = (fdt_timing){0};
    t->flushed = flushed;
    if (n <= 0)
        return;
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    t->reps = n;
    t->min_ms = ms[0];
    t->max_ms = ms[n - 1];
    t->median_ms = quantile(ms, n, 0.5);
    t->q1_ms = quantile(ms, n, 0.25);
    t->q3_ms = quantile(ms, n, 0.75);
    double iqr = t->q3_ms - t->q1_ms;
    for (int i = 0; i < n; i++)
        if (ms[i] > t->q3_ms + 1.5 * iqr || ms[i] < t->q1_ms - 1.5 * iqr)
            t->outliers++;
}

const char *fdt_eval_status_name(fdt_eval_status s)
{
    static const char *const names[FDT_EVAL_STATUS_COUNT] = {
        "ok", "wrong", "compile_error", "pruned", "launch_error", "crashed", "timeout"};
    return (unsigned)s < FDT_EVAL_STATUS_COUNT ? names[s] : "?";
}
