/* The decision rules shared by tune, retune and merge: the noise of a median (its
 * interquartile range, never below a floor), "beats beyond noise", the regression verdict of a
 * re-measurement against its stored median, and the fields of the software environment that
 * changed. Pure functions; the orchestration (tune.c, retune.c) applies them. */
#ifndef FDT_DECIDE_H
#define FDT_DECIDE_H

#include <stddef.h>

#include "fdt_db.h"

/* The smallest noise credited to a median, as a fraction of it: the timing loop stops when
 * the median moves less than 0.5% (fdt_timing_opts_default), so no median is known better. */
#define FDT_DECIDE_NOISE_FLOOR 0.005

/* ------------------------------------------------------------------ timing rules (pure) */

/* The part of an evaluation the rules look at. Unknown values are NaN. */
typedef struct fdt_decide_timing {
    double median_ms;          /* NaN or <= 0: the measurement failed */
    double q1_ms, q3_ms;
    double min_ms, max_ms;
} fdt_decide_timing;

/* 1 when t is a successful measurement (a finite, positive median). */
int fdt_decide_ok(const fdt_decide_timing *t);

/* From a database row; an evaluation that is not ok gets a NaN median. */
void fdt_decide_timing_of(const fdt_db_eval *ev, fdt_decide_timing *t);

/* The noise of a median: the interquartile range when both quartiles are known, else the
 * min-max range, never below FDT_DECIDE_NOISE_FLOOR of the median. */
double fdt_decide_noise(const fdt_decide_timing *t);

/* 1 when cand is faster than old beyond the noise of both:
 * cand.median < old.median - max(noise(old), noise(cand)). A failed cand never beats; any ok
 * cand beats a failed old. */
int fdt_decide_beats(const fdt_decide_timing *old, const fdt_decide_timing *cand);

typedef enum {
    FDT_DECIDE_UNCHANGED, /* within the threshold of the stored median */
    FDT_DECIDE_REGRESSED, /* slower than stored by more than the threshold */
    FDT_DECIDE_IMPROVED,  /* faster than stored by more than the threshold */
    FDT_DECIDE_FAILED,    /* the measurement now is not ok (wrong, crashed, ...) */
    FDT_DECIDE_THROTTLED, /* slower beyond the threshold, but a run's GPU was throttled
                             (fdt_decide_judge_clocks): not a regression */
} fdt_decide_verdict;

const char *fdt_decide_verdict_name(fdt_decide_verdict v); /* "unchanged", ... */

/* stored: the median in the database; now: the one just measured; threshold: a fraction
 * (0.05 = 5%). Regressed when now > stored * (1 + threshold), improved when
 * now < stored * (1 - threshold). */
fdt_decide_verdict fdt_decide_judge(const fdt_decide_timing *stored,
                                    const fdt_decide_timing *now, double threshold);

/* ------------------------------------------------------------------ clocks (pure) */

/* Below this fraction of its maximum, a busy GPU's SM clock is held down. */
#define FDT_DECIDE_CLOCK_FLOOR 0.9

/* 1 when a run measured under clocks c is no yardstick: a thermal or power cap among the
 * throttle reasons (FDT_THROTTLE_CAPS: sw_power_cap, hw_slowdown, sw_thermal, hw_thermal,
 * hw_power_brake), or an SM clock below FDT_DECIDE_CLOCK_FLOOR of its maximum while the GPU
 * was not idle (gpu_idle: an idle GPU lowers its clocks by design, which says nothing of the
 * measurements). why gets the cause ("sw_thermal", "SM clock 1200 of 1980 MHz"). 0 when the
 * clocks are unknown (AMD, simulated GPUs, runs recorded before schema v4, no NVML). */
int fdt_decide_throttled(const fdt_clocks *c, char *why, size_t n);

/* The verdict v of a re-measurement in the light of the clocks of the stored best's run and
 * of today's run ([0] at the start, [1] at the end of the run's measurements):
 * FDT_DECIDE_THROTTLED when v is FDT_DECIDE_REGRESSED and any of the four was throttled
 * (fdt_decide_throttled), why saying "throttled: not a regression (today's run at its end:
 * sw_thermal)"; else v, why "". */
fdt_decide_verdict fdt_decide_judge_clocks(fdt_decide_verdict v, const fdt_clocks stored[2],
                                           const fdt_clocks now[2], char *why, size_t n);

/* ------------------------------------------------------------------ environment (pure) */

enum {
    FDT_DECIDE_ENV_DRIVER = 1u << 0,
    FDT_DECIDE_ENV_RUNTIME = 1u << 1,
    FDT_DECIDE_ENV_COMPILER = 1u << 2,
    FDT_DECIDE_ENV_FDTUNE = 1u << 3,
    FDT_DECIDE_ENV_GENERATOR = 1u << 4,
};

/* The fields of `now` that differ from `stored`, as FDT_DECIDE_ENV_* bits; buf (may be NULL)
 * gets "driver 580.65.06 -> 590.10, compiler 13.0.48 -> 13.1.80", "" when none differ. */
unsigned fdt_decide_env_diff(const fdt_db_env *stored, const fdt_db_env *now, char *buf,
                             size_t n);
/* "driver", "runtime", "compiler", "fdtune", "generator" for one bit; "?" otherwise. */
const char *fdt_decide_env_field(unsigned bit);

#endif
