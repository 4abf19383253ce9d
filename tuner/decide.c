/* The decision rules that tune, retune and merge share: the noise of a median, whether one
 * result beats another beyond the noise of both, whether a re-measurement regressed against
 * its stored median, and which fields of the software environment changed. Pure functions
 * over timings and rows, tested without a GPU. */
#include "fdt_decide.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- timing rules */

int fdt_decide_ok(const fdt_decide_timing *t) { return isfinite(t->median_ms) && t->median_ms > 0; }

static int ok_median(double ms) { return isfinite(ms) && ms > 0; }

void fdt_decide_timing_of(const fdt_db_eval *ev, fdt_decide_timing *t)
{
    int ok = ev->status == FDT_DB_OK;
    t->median_ms = ok ? ev->time_ms : NAN;
    t->q1_ms = ok ? ev->time_q1_ms : NAN;
    t->q3_ms = ok ? ev->time_q3_ms : NAN;
    t->min_ms = ok ? ev->time_min_ms : NAN;
    t->max_ms = ok ? ev->time_max_ms : NAN;
}

double fdt_decide_noise(const fdt_decide_timing *t)
{
    if (!ok_median(t->median_ms))
        return 0;
    double floor = FDT_DECIDE_NOISE_FLOOR * t->median_ms, spread = 0;
    /* The quartiles describe the bulk of the samples; min and max only when there are no
     * quartiles (older rows), since one stray launch stretches them. */
    if (isfinite(t->q1_ms) && isfinite(t->q3_ms) && t->q3_ms >= t->q1_ms)
        spread = t->q3_ms - t->q1_ms;
    else if (isfinite(t->min_ms) && isfinite(t->max_ms) && t->max_ms >= t->min_ms)
        spread = t->max_ms - t->min_ms;
    return spread > floor ? spread : floor;
}

int fdt_decide_beats(const fdt_decide_timing *old, const fdt_decide_timing *cand)
{
    if (!ok_median(cand->median_ms))
        return 0;
    if (!ok_median(old->median_ms))
        return 1;
    double a = fdt_decide_noise(old), b = fdt_decide_noise(cand);
    return cand->median_ms < old->median_ms - (a > b ? a : b);
}

const char *fdt_decide_verdict_name(fdt_decide_verdict v)
{
    static const char *const names[] = {"unchanged", "regressed", "improved", "failed",
                                        "throttled"};
    return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "?";
}

fdt_decide_verdict fdt_decide_judge(const fdt_decide_timing *stored,
                                    const fdt_decide_timing *now, double threshold)
{
    if (!ok_median(now->median_ms))
        return FDT_DECIDE_FAILED;
    if (!ok_median(stored->median_ms))
        return FDT_DECIDE_UNCHANGED; /* nothing to compare with: not a regression */
    if (now->median_ms > stored->median_ms * (1 + threshold))
        return FDT_DECIDE_REGRESSED;
    if (now->median_ms < stored->median_ms * (1 - threshold))
        return FDT_DECIDE_IMPROVED;
    return FDT_DECIDE_UNCHANGED;
}

/* ---------------------------------------------------------------- clocks */

int fdt_decide_throttled(const fdt_clocks *c, char *why, size_t n)
{
    if (n)
        why[0] = 0;
    if (!c->known)
        return 0;
    uint64_t caps = c->reasons_known ? c->reasons & FDT_THROTTLE_CAPS : 0;
    if (caps) {
        fdt_throttle_names(caps, why, n);
        return 1;
    }
    int idle = c->reasons_known && (c->reasons & FDT_THROTTLE_GPU_IDLE);
    if (!idle && c->sm_mhz >= 0 && c->sm_max_mhz > 0 &&
        c->sm_mhz < FDT_DECIDE_CLOCK_FLOOR * c->sm_max_mhz) {
        snprintf(why, n, "SM clock %d of %d MHz", c->sm_mhz, c->sm_max_mhz);
        return 1;
    }
    return 0;
}

fdt_decide_verdict fdt_decide_judge_clocks(fdt_decide_verdict v, const fdt_clocks stored[2],
                                           const fdt_clocks now[2], char *why, size_t n)
{
    if (n)
        why[0] = 0;
    if (v != FDT_DECIDE_REGRESSED)
        return v;
    static const char *const whose[] = {"the stored best's run at its start",
                                        "the stored best's run at its end",
                                        "today's run at its start", "today's run at its end"};
    const fdt_clocks *all[] = {&stored[0], &stored[1], &now[0], &now[1]};
    for (int i = 0; i < 4; i++) {
        char r[160];
        if (fdt_decide_throttled(all[i], r, sizeof r)) {
            snprintf(why, n, "throttled: not a regression (%s: %s)", whose[i], r);
            return FDT_DECIDE_THROTTLED;
        }
    }
    return v;
}

/* ---------------------------------------------------------------- environment */

const char *fdt_decide_env_field(unsigned bit)
{
    switch (bit) {
    case FDT_DECIDE_ENV_DRIVER: return "driver";
    case FDT_DECIDE_ENV_RUNTIME: return "runtime";
    case FDT_DECIDE_ENV_COMPILER: return "compiler";
    case FDT_DECIDE_ENV_FDTUNE: return "fdtune";
    case FDT_DECIDE_ENV_GENERATOR: return "generator";
    default: return "?";
    }
}

unsigned fdt_decide_env_diff(const fdt_db_env *stored, const fdt_db_env *now, char *buf,
                             size_t n)
{
    const char *was[] = {stored->driver, stored->runtime, stored->compiler,
                         stored->fdtune_version, stored->generator};
    const char *is[] = {now->driver, now->runtime, now->compiler, now->fdtune_version,
                        now->generator};
    unsigned mask = 0;
    fdt_sb b;
    fdt_sb_init(&b);
    for (int i = 0; i < 5; i++) {
        if (!strcmp(was[i], is[i]))
            continue;
        mask |= 1u << i;
        fdt_sb_printf(&b, "%s%s %s -> %s", b.len ? ", " : "", fdt_decide_env_field(1u << i),
                      *was[i] ? was[i] : "(none)", *is[i] ? is[i] : "(none)");
    }
    if (buf && n)
        snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
    return mask;
}

