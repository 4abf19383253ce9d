/* The hybrid step's runner (issue 29, item 3; no GPU needed): the host CPU stands in for both
 * devices, so that the two halves go through the same code path as a GPU and a CPU (their
 * own arrays, the cut's planes first, the halo exchange as box copies, the fields rotated),
 * and after N steps each split agrees with the single-device run from the same initial field
 * bit for bit (one dialect, one config: the same operations on every point): data-parallel at
 * two fractions (and with B's damping read from its array: different by rounding, found), task-parallel (the interior kernel on A, the six layers on B, the faces
 * exchanged; B's layers with a config of their own, to rounding), data-parallel on one shared allocation, and the CPU-only deployment. Bad
 * requests are refused with the reason. The energy check: a Ricker pulse in a small grid
 * comes back from the boundary weaker as the absorbing layer widens (W = 0, 3, 6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt_hyrun.h"

static fdt_hyrun_side host; /* the host CPU with its dialect's default config */

static int setup(void **state)
{
    (void)state;
    fdt_err e;
    fdt_target t;
    /* the host's allocations hold all bits set (NaN), as a GPU's hold anything: a run that
     * reads memory it never set does not agree */
    setenv("FDTUNE_TEST_CPU_POISON", "1", 1);
    if (fdt_probe_host(&host.dev, &e) || fdt_target_resolve(&host.dev, &t, &e)) {
        print_message("no usable host CPU backend: %s\n", e.msg);
        return -1;
    }
    fdt_config_default_for(&t.gen, &host.cfg);
    return 0;
}

/* dwave R=2 f32 24x20x32 with a layer of 4, the host on both sides, copies always. */
static void request(fdt_hyrun_request *rq, fdt_hyrun_mode mode, double fraction)
{
    fdt_hyrun_request_init(rq);
    rq->p = (fdt_problem){FDT_OP_DWAVE, 2, FDT_F32, 24, 20, 32};
    rq->p.absorb_w = 4;
    rq->p.absorb_s = 0.1;
    rq->side[0] = rq->side[1] = host;
    rq->mode = mode;
    rq->fraction = fraction;
    rq->steps = 4;
    rq->warmup = 2;
    rq->share = FDT_HYRUN_SHARE_NEVER;
    rq->timeout_s = 300;
}

static void expect_agrees(const fdt_hyrun_request *rq, int shared, double bytes)
{
    fdt_hyrun_result r;
    fdt_err e;
    if (fdt_hyrun_run(rq, &r, &e))
        fail_msg("%s: %s", fdt_hyrun_mode_name(rq->mode), e.msg);
    print_message("%s f=%.3g: max |diff| %g of max %g, bitwise %d, %.3f ms/step, exchange "
                  "%.3f ms, %.0f bytes\n", fdt_hyrun_mode_name(rq->mode), rq->fraction,
                  r.max_abs_diff, r.max_abs, r.bitwise, r.step_ms, r.exchange_ms,
                  r.exchange_bytes);
    assert_true(r.max_abs > 0.1); /* the field moved: a source of 0.75 every step */
    assert_true(r.bitwise);
    assert_true(r.max_abs_diff == 0);
    assert_true(fdt_hyrun_agrees(&rq->p, &r, rq->steps + rq->warmup));
    assert_int_equal(r.shared, shared);
    assert_true(r.exchange_bytes == bytes);
}

/* Data-parallel at 0.25 (8 planes on B) and 0.5: R planes of 24x20 each way per step; at
 * 1/32, B's one plane one way. */
static void test_data_parallel(void **state)
{
    (void)state;
    fdt_hyrun_request rq;
    double plane = 24 * 20 * 4;
    request(&rq, FDT_HYRUN_DATA, 0.25);
    expect_agrees(&rq, 0, 2 * 2 * plane);
    request(&rq, FDT_HYRUN_DATA, 0.5);
    expect_agrees(&rq, 0, 2 * 2 * plane);
    request(&rq, FDT_HYRUN_DATA, 1.0 / 32); /* one plane on B, fewer than R: the rest of A's
                                             * halo is the grid's boundary halo */
    expect_agrees(&rq, 0, (2 + 1) * plane);
    /* B's damping read from the profile array (eta=array) where A's single run computes it:
     * B's plane, the grid's last, differs by rounding, and in 6 steps of R=2 the difference
     * reaches the 12 planes below it and no further: the comparison (its planes split among
     * threads, the last plane's in the last thread's) finds and tolerates it */
    fdt_hyrun_result r;
    fdt_err e;
    request(&rq, FDT_HYRUN_DATA, 1.0 / 32);
    rq.side[1].cfg.eta = 1;
    if (fdt_hyrun_run(&rq, &r, &e))
        fail_msg("data-parallel, B with eta=array: %s", e.msg);
    print_message("B with eta=array: max |diff| %g, bitwise %d\n", r.max_abs_diff, r.bitwise);
    assert_true(!r.bitwise && r.max_abs_diff > 0 && r.nonfinite == 0);
    assert_true(fdt_hyrun_agrees(&rq.p, &r, rq.steps + rq.warmup));
}

/* Task-parallel: the interior 16x12x24 on A, the slabs on B; R-thick faces each way. */
static void test_task_parallel(void **state)
{
    (void)state;
    fdt_hyrun_request rq;
    request(&rq, FDT_HYRUN_TASK, 0);
    double faces = 2.0 * 2 * (12 * 24 + 16 * 24 + 16 * 12) * 4; /* R=2, both ways, f32 */
    expect_agrees(&rq, 0, 2 * faces);
    /* B's slabs with a config of their own (the blocked family), which B runs in
     * task-parallel alone: the run agrees to rounding; with one allocation its align is
     * the one B ran with (A, of align 1, took it) */
    fdt_err e;
    fdt_hyrun_result r;
    rq.side[1].has_layers = 1;
    if (fdt_config_parse("blk=1,ty=4", &rq.side[1].cfg_layers, &e))
        fail_msg("%s", e.msg);
    if (fdt_hyrun_run(&rq, &r, &e))
        fail_msg("task-parallel, the layers' config: %s", e.msg);
    assert_true(r.max_abs > 0.1 && fdt_hyrun_agrees(&rq.p, &r, rq.steps + rq.warmup));
    rq.share = FDT_HYRUN_SHARE_ALWAYS;
    rq.side[1].cfg_layers.align = 8;
    if (fdt_hyrun_run(&rq, &r, &e))
        fail_msg("task-parallel, the layers' config, shared: %s", e.msg);
    assert_true(r.shared && r.shared_align == 8 && r.realigned == 0);
    assert_true(fdt_hyrun_agrees(&rq.p, &r, rq.steps + rq.warmup));
    rq.mode = FDT_HYRUN_DATA; /* another mode: B's own config, align 1 both */
    rq.fraction = 0.25;
    if (fdt_hyrun_run(&rq, &r, &e))
        fail_msg("data-parallel beside a layers' config: %s", e.msg);
    assert_true(r.shared && r.shared_align == 0 && r.bitwise);
}

/* One shared allocation (the unified case's path): nothing copied; the CPU-only deployment.
 * Configs of two aligns share one layout: the smaller takes the larger, and says so; so do a
 * data-parallel pair's, which then exchange whole planes as contiguous copies. */
static void test_shared_and_one_device(void **state)
{
    (void)state;
    fdt_hyrun_request rq;
    fdt_hyrun_result r;
    fdt_err e;
    request(&rq, FDT_HYRUN_DATA, 0.25);
    rq.share = FDT_HYRUN_SHARE_ALWAYS;
    expect_agrees(&rq, 1, 0);
    rq.side[1].cfg.align = 8; /* A keeps its default, 1 */
    if (fdt_hyrun_run(&rq, &r, &e))
        fail_msg("shared memory, align 1 and 8: %s", e.msg);
    assert_true(r.shared && r.bitwise && r.shared_align == 8 && r.realigned == 0);
    request(&rq, FDT_HYRUN_DATA, 0.25);
    rq.side[1].cfg.align = 8; /* copies of whole planes: one layout too */
    if (fdt_hyrun_run(&rq, &r, &e))
        fail_msg("copies, align 1 and 8: %s", e.msg);
    assert_true(!r.shared && r.bitwise && r.shared_align == 8 && r.realigned == 0);
    request(&rq, FDT_HYRUN_CPU, 0);
    expect_agrees(&rq, 0, 0);
}

/* The runs are stable: at R=4 (the seeded c2 in (0.25, 0.5) with the scales 1, 0.5, 0.25 was
 * past the CFL bound: the field grew by orders of magnitude over a few tens of steps and a
 * difference of 24 passed as rounding) the field stays of the order of its start and the
 * source after 40 steps, and the two runs agree within the printed tolerance. The bound:
 * R=1 with unit scales is rho = 12. */
static void test_stable_field(void **state)
{
    (void)state;
    fdt_hyrun_request rq;
    fdt_hyrun_result r;
    fdt_err e;
    fdt_params q = {1, 1, 1, 0, 0, 0, 0};
    fdt_problem p1 = {FDT_OP_DWAVE, 1, FDT_F32, 16, 16, 16};
    assert_true(fabs(fdt_hyrun_spectral_radius(&p1, &q) - 12) < 1e-12);
    assert_true(fabs(fdt_hyrun_c2_max(&p1, &q) - FDT_HYRUN_CFL_SAFETY / 3) < 1e-12);
    request(&rq, FDT_HYRUN_DATA, 0.25);
    rq.p.R = 4;
    rq.steps = 38;
    if (fdt_hyrun_run(&rq, &r, &e))
        fail_msg("%s", e.msg);
    fdt_params_default(&rq.p, &q);
    print_message("R=4, 40 steps: max |p| %g, max |diff| %g, tolerance %g, c2_max %g\n",
                  r.max_abs, r.max_abs_diff, fdt_hyrun_tolerance(&rq.p, &r, 40), r.c2_max);
    assert_true(r.c2_max > 0 && r.c2_max * fdt_hyrun_spectral_radius(&rq.p, &q) < 4);
    assert_int_equal(r.nonfinite, 0);
    assert_true(r.max_abs > 0.1 && r.max_abs < 16);
    assert_true(r.bitwise && fdt_hyrun_agrees(&rq.p, &r, 40));
    r.bitwise = 0;
    r.max_abs_diff = 2 * fdt_hyrun_tolerance(&rq.p, &r, 40);
    assert_false(fdt_hyrun_agrees(&rq.p, &r, 40));
    r.max_abs_diff = 0;
    r.nonfinite = 1; /* a NaN point never agrees */
    assert_false(fdt_hyrun_agrees(&rq.p, &r, 40));
}

static void expect_refused(const fdt_hyrun_request *rq, const char *why)
{
    fdt_hyrun_result r;
    fdt_err e;
    assert_int_equal(fdt_hyrun_run(rq, &r, &e), -1);
    if (!strstr(e.msg, why))
        fail_msg("expected '%s' in: %s", why, e.msg);
}

static void test_refused(void **state)
{
    (void)state;
    fdt_hyrun_request rq;
    request(&rq, FDT_HYRUN_DATA, 0.01); /* no plane of 32 on B */
    expect_refused(&rq, "gives 0 of 32 planes to device B; each device needs at least one");
    request(&rq, FDT_HYRUN_TASK, 0);
    rq.p.R = 6; /* the layer is thinner than R */
    expect_refused(&rq, "the layer (W=4) must be at least R=6 points thick");
    request(&rq, FDT_HYRUN_TASK, 0);
    snprintf(rq.side[1].dev.backend, sizeof rq.side[1].dev.backend, "cuda");
    snprintf(rq.side[1].dev.arch, sizeof rq.side[1].dev.arch, "sm_90");
    expect_refused(&rq, "task-parallel: device B must be the host CPU");
    request(&rq, FDT_HYRUN_DATA, 0.5);
    rq.p.op = FDT_OP_WAVE;
    rq.p.absorb_w = 0;
    rq.p.absorb_s = 0;
    expect_refused(&rq, "the operator must be dwave");
}

/* The energy coming back falls as W grows (48^3, R=2 and R=4, W = 0, 3, 6: at R=4 the pulse's
 * old c2 = 0.25 with unit scales was past the CFL bound, 4.9 > 4, and the field went to inf);
 * a non-finite energy is a failed check that says so. */
static void test_reflection(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_DWAVE, 2, FDT_F32, 48, 48, 48};
    p.absorb_w = 3;
    p.absorb_s = 0.1;
    const int W[3] = {0, 3, 6};
    fdt_hyrun_energy en[3];
    fdt_err e;
    for (int R = 2; R <= 4; R += 2) {
        p.R = R;
        if (fdt_hyrun_reflection(&host, &p, W, 3, en, 300, &e))
            fail_msg("%s", e.msg);
        for (int i = 0; i < 3; i++) {
            print_message("R=%d W=%d: %d steps, energy %g -> %g, ratio %g\n", R, en[i].W,
                          en[i].steps, en[i].before, en[i].after, en[i].ratio);
            assert_true(en[i].before > 0 && isfinite(en[i].after));
        }
        if (!fdt_hyrun_energy_falls(en, 3, &e))
            fail_msg("R=%d: %s", R, e.msg);
    }
    en[2].ratio = 1.5; /* what the unstable step gave: every ratio above 1e63 */
    assert_false(fdt_hyrun_energy_falls(en, 3, &e));
    assert_non_null(strstr(e.msg, "W=6: after/before 1.5 is not below 1"));
    en[1].after = INFINITY;
    assert_false(fdt_hyrun_energy_falls(en, 3, &e));
    assert_non_null(strstr(e.msg, "W=3: the energy before"));
    assert_non_null(strstr(e.msg, "not a finite, positive measure"));
    const int too_wide[1] = {7}; /* more than an eighth of 48 */
    assert_int_equal(fdt_hyrun_reflection(&host, &p, too_wide, 1, en, 300, &e), -1);
    assert_non_null(strstr(e.msg, "W=7: a layer may take at most an eighth"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_data_parallel),
        cmocka_unit_test(test_task_parallel),
        cmocka_unit_test(test_shared_and_one_device),
        cmocka_unit_test(test_stable_field),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_reflection),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
