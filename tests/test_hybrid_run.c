/* The hybrid step's runner (issue 29, item 3; no GPU needed): the host CPU stands in for both
 * devices, so that the two halves go through the same code path as a GPU and a CPU (their
 * own arrays, the cut's planes first, the halo exchange as box copies, the fields rotated),
 * and after N steps each split agrees with the single-device run from the same initial field
 * bit for bit (one dialect, one config: the same operations on every point): data-parallel at
 * two fractions, task-parallel (the interior kernel on A, the six layers on B, the faces
 * exchanged), data-parallel on one shared allocation, and the CPU-only deployment. Bad
 * requests are refused with the reason. The energy check: a Ricker pulse in a small grid
 * comes back from the boundary weaker as the absorbing layer widens (W = 0, 3, 6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "fdt_hyrun.h"

static fdt_hyrun_side host; /* the host CPU with its dialect's default config */

static int setup(void **state)
{
    (void)state;
    fdt_err e;
    fdt_target t;
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
}

/* Task-parallel: the interior 16x12x24 on A, the slabs on B; R-thick faces each way. */
static void test_task_parallel(void **state)
{
    (void)state;
    fdt_hyrun_request rq;
    request(&rq, FDT_HYRUN_TASK, 0);
    double faces = 2.0 * 2 * (12 * 24 + 16 * 24 + 16 * 12) * 4; /* R=2, both ways, f32 */
    expect_agrees(&rq, 0, 2 * faces);
}

/* One shared allocation (the unified case's path): nothing copied; the CPU-only deployment. */
static void test_shared_and_one_device(void **state)
{
    (void)state;
    fdt_hyrun_request rq;
    request(&rq, FDT_HYRUN_DATA, 0.25);
    rq.share = FDT_HYRUN_SHARE_ALWAYS;
    expect_agrees(&rq, 1, 0);
    request(&rq, FDT_HYRUN_CPU, 0);
    expect_agrees(&rq, 0, 0);
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

/* The energy coming back falls as W grows (48^3, R=2, W = 0, 3, 6). */
static void test_reflection(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_DWAVE, 2, FDT_F32, 48, 48, 48};
    p.absorb_w = 3;
    p.absorb_s = 0.1;
    const int W[3] = {0, 3, 6};
    fdt_hyrun_energy en[3];
    fdt_err e;
    if (fdt_hyrun_reflection(&host, &p, W, 3, en, 300, &e))
        fail_msg("%s", e.msg);
    for (int i = 0; i < 3; i++) {
        print_message("W=%d: %d steps, energy %g -> %g, ratio %g\n", en[i].W, en[i].steps,
                      en[i].before, en[i].after, en[i].ratio);
        assert_true(en[i].before > 0);
    }
    assert_true(fdt_hyrun_energy_falls(en, 3));
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
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_reflection),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
