/* Tests of the hybrid planner (search/hybrid.c) on recorded rates: the H200 machines of issue
 * 29 (GPU copy 4250 GB/s, host 72-105 GB/s, pinned link 55 GB/s each way), where GPU only must
 * win and no split may gain 3%; an APU-like machine (comparable rates, one shared memory),
 * where data-parallel wins at the rates' balance; a GPU whose absorbing layers cost several
 * times an interior point (divergence) on a fast link, where task-parallel wins; and the edge
 * cases: no CPU rate (GPU only, saying why), no GPU rate (refused), an unmeasured link
 * (refused), a CPU share that rounds to no plane, an operator without a layer (no
 * task-parallel), and the device model's identity (the whole grid gives the measured time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fdt_hybrid.h"

static fdt_problem dwave512(void)
{
    fdt_problem p = {FDT_OP_DWAVE, 4, FDT_F32, 512, 512, 512};
    p.absorb_w = 16;
    p.absorb_s = 0.1;
    return p;
}

/* The H200 machines: the GPU's dwave at 90% of its copy, the 16-core host at 72 GB/s of
 * copy running the step at 64, pinned copies at 55 GB/s one direction at a time. */
static fdt_hybrid_in h200(void)
{
    fdt_hybrid_in in;
    memset(&in, 0, sizeof in);
    in.p = dwave512();
    snprintf(in.gpu.name, sizeof in.gpu.name, "NVIDIA H200");
    in.gpu.gbs = 3825;
    in.gpu.deploy_gbs[FDT_HYB_COMPLETE] = 3825;
    in.gpu.copy_gbs = 4250;
    in.gpu.launch_us = 5;
    in.gpu.flops_gfs = 67000;
    snprintf(in.cpu.name, sizeof in.cpu.name, "Intel Xeon");
    in.cpu.gbs = 64;
    in.cpu.copy_gbs = 72;
    in.cpu.launch_us = 3;
    in.link = (fdt_hybrid_link){.h2d_gbs = 55, .d2h_gbs = 55, .latency_us = 10};
    in.sync_us = 10;
    return in;
}

static void gpu_only_on_h200(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_int_equal(pl.choice, FDT_HYB_GPU);
    assert_true(pl.s[FDT_HYB_DATA].ok && pl.s[FDT_HYB_TASK].ok);
    /* the "a naive split can win at most about 2.5%" */
    assert_true(pl.split_gain < 0.03);
    /* the balance: 64 / (64 + 3825) of 512 planes is 8.4; the best split gives the CPU
     * fewer, since the CPU must compute its R planes before the copies can start */
    assert_true(fabs(pl.f_balance - 64.0 / 3889) < 1e-9);
    assert_in_range(pl.cpu_planes, 1, 8);
    const fdt_hybrid_pred *d = &pl.s[FDT_HYB_DATA];
    assert_true(d->exch_ms == fmax(d->gpu.first_ms, d->cpu.first_ms) + d->copy_ms);
    assert_true(d->t_ms >= d->exch_ms && d->t_ms >= d->gpu.t_ms && d->t_ms >= d->cpu.t_ms);
    /* copies that make nothing beside the GPU's kernels (beside = 0 here) wait for them: its
     * step and then the copies */
    assert_true(d->serial_ms == d->gpu.t_ms + d->copy_ms && d->t_ms >= d->serial_ms);
    /* to the CPU R planes of 512^2 f32: 4 MiB, at 55 GB/s 76 us; to the GPU the CPU's planes,
     * R at most; one direction after the other */
    assert_true(fabs(pl.s[FDT_HYB_DATA].copy_bytes - 4194304.0) < 0.5);
    double h2d = (double)(pl.cpu_planes < 4 ? pl.cpu_planes : 4) * 1048576.0;
    assert_true(fabs(pl.s[FDT_HYB_DATA].copy_bytes_h2d - h2d) < 0.5);
    double copy = 2 * 0.010 + (4194304.0 + h2d) / 55e6;
    assert_true(fabs(pl.s[FDT_HYB_DATA].copy_ms - copy) < 1e-9);
    /* task-parallel: the CPU's 17.6% of the points at 64 GB/s is far slower than the GPU,
     * and each part is computed whole before its copies, which follow (the runner's order) */
    const fdt_hybrid_pred *t = &pl.s[FDT_HYB_TASK];
    assert_string_equal(t->bound, "exchange");
    assert_true(t->cpu.first_ms == t->cpu.t_ms && t->gpu.first_ms == t->gpu.t_ms);
    assert_true(t->exch_ms == t->cpu.t_ms + t->copy_ms);
    assert_true(pl.s[FDT_HYB_TASK].t_ms > 5 * pl.s[FDT_HYB_GPU].t_ms);
    /* the paper's decision: memory-bound (intensity ~3 flop/B against ~16) */
    assert_int_equal(pl.d.compute_bound, 0);
    assert_true(pl.d.intensity > 1 && pl.d.intensity < 5);
    assert_true(fabs(pl.d.gpu_balance - 67000.0 / 4250) < 1e-9);
    assert_int_equal(pl.d.divergent, -1); /* no deployments nor interior rate recorded */
    assert_non_null(strstr(pl.why, "gpu only"));
    /* the 32-core host (105 GB/s of copy, the step at 95), lap and dwave, both directions at
     * once or not: still GPU only, no split gaining 3% */
    for (int k = 0; k < 4; k++) {
        in = h200();
        in.cpu.gbs = 95;
        in.cpu.copy_gbs = 105;
        in.link.both_gbs = k & 1 ? 50 : 0;
        if (k & 2) {
            in.p.op = FDT_OP_LAP;
            in.p.absorb_w = 0;
            in.p.absorb_s = 0;
        }
        assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
        assert_int_equal(pl.choice, FDT_HYB_GPU);
        assert_true(pl.split_gain < 0.03);
    }
}

/* An APU: GPU 3000, CPU 1000 GB/s from one 4000 GB/s memory, nothing copied. */
static void data_parallel_on_an_apu(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.gpu.gbs = in.gpu.deploy_gbs[FDT_HYB_COMPLETE] = 3000;
    in.gpu.interior_gbs = 3000;
    in.gpu.copy_gbs = 4000;
    in.cpu.gbs = 1000;
    in.cpu.copy_gbs = 1200;
    in.link = (fdt_hybrid_link){.unified = 1, .shared_gbs = 4000};
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_int_equal(pl.choice, FDT_HYB_DATA);
    assert_in_range(pl.cpu_planes, 120, 136); /* 1/4 of 512 */
    assert_true(pl.gain > 0.15 && pl.gain < 0.26);
    assert_true(pl.s[FDT_HYB_DATA].copy_ms == 0 && pl.s[FDT_HYB_DATA].serial_ms == 0);
    /* both parts' bytes from the one memory: a floor, which the best split reaches within 2%
     * (the split where the faster part meets it) */
    const fdt_hybrid_pred *d = &pl.s[FDT_HYB_DATA];
    assert_true(fabs(d->floor_ms - (d->gpu.bytes + d->cpu.bytes) / 4000 * 1e-6) < 1e-12);
    assert_true(d->t_ms >= d->floor_ms + 0.010 && d->t_ms < 1.02 * (d->floor_ms + 0.010));
    assert_true(pl.s[FDT_HYB_DATA].t_ms < pl.s[FDT_HYB_TASK].t_ms);
    /* not divergent: the layers cost the interior's rate */
    assert_int_equal(pl.d.divergent, 0);
    assert_int_equal(pl.d.paper, FDT_HYB_DATA);
}

/* The same APU with a CPU at 150 GB/s: the best split gains about 2%, below FDT_HYB_MARGIN,
 * so GPU only stays the choice and the text says what the split would gain. */
static void small_gain_keeps_gpu_only(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.gpu.gbs = in.gpu.deploy_gbs[FDT_HYB_COMPLETE] = 3000;
    in.cpu.gbs = 150;
    in.cpu.copy_gbs = 180;
    in.link = (fdt_hybrid_link){.unified = 1, .shared_gbs = 4000};
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_true(pl.split_gain > 0.01 && pl.split_gain < FDT_HYB_MARGIN);
    assert_int_equal(pl.choice, FDT_HYB_GPU);
    assert_true(pl.gain == 0);
    assert_non_null(strstr(pl.why, "the best split, data-parallel"));
    assert_non_null(strstr(pl.why, "a split needs at least 3%"));
}

/* A GPU whose layers diverge (complete 2000 GB/s, its interior kernel 3600) beside a fast
 * CPU on a fast link (200 GB/s both ways at once). */
static void task_parallel_when_layers_diverge(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.gpu.deploy_gbs[FDT_HYB_COMPLETE] = 2000;
    in.gpu.deploy_gbs[FDT_HYB_INOUT] = 2200;
    in.gpu.deploy_gbs[FDT_HYB_SIDES] = 2400;
    in.gpu.gbs = 2400;
    in.gpu.interior_gbs = 3600;
    in.cpu.gbs = in.cpu.deploy_gbs[FDT_HYB_SIDES] = 700;
    fdt_problem p512 = dwave512(), p480 = p512;
    p480.nx = p480.ny = p480.nz = 480;
    /* the slabs timed alone at the grid's rate */
    in.cpu.layers_ms = (fdt_effective_bytes(&p512) - fdt_effective_bytes(&p480)) / 700e6;
    in.cpu.copy_gbs = 900;
    in.link = (fdt_hybrid_link){.h2d_gbs = 200, .d2h_gbs = 200, .both_gbs = 200,
                                 .latency_us = 2};
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_int_equal(pl.choice, FDT_HYB_TASK);
    assert_true(pl.s[FDT_HYB_TASK].t_ms < pl.s[FDT_HYB_DATA].t_ms);
    assert_true(pl.gain > 0.2);
    assert_int_equal(pl.interior[0], 480);
    /* the interior's six faces, R deep, each way */
    const fdt_hybrid_pred *t = &pl.s[FDT_HYB_TASK];
    assert_true(fabs(t->copy_bytes - 2.0 * 4 * 3 * 480 * 480 * 4) < 0.5);
    /* six faces each way, both directions at once at 200 GB/s */
    assert_true(fabs(t->copy_ms - (6 * 0.002 + t->copy_bytes / 200e6)) < 1e-12);
    assert_true(pl.s[FDT_HYB_TASK].why[0] == 0); /* every rate measured */
    assert_int_equal(pl.d.divergent, 1);
    assert_true(pl.d.layer_cost > 3);
    /* complete's own: (t_complete - t_interior) per layer point, over the interior's */
    fdt_problem p = dwave512();
    double n = 512.0 * 512 * 512, ni = 480.0 * 480 * 480;
    fdt_problem q = p;
    q.nx = q.ny = q.nz = 480;
    double t_c = fdt_effective_bytes(&p) / 2000, t_i = fdt_effective_bytes(&q) / 3600;
    double want = (t_c - t_i) / (n - ni) / (t_i / ni);
    assert_true(fabs(pl.d.layer_cost_by[FDT_HYB_COMPLETE] - want) < 1e-9 * want);
    assert_true(pl.d.layer_cost_by[FDT_HYB_COMPLETE] > pl.d.layer_cost); /* sides is best */
    assert_int_equal(pl.d.paper, FDT_HYB_TASK);
}

static void no_cpu_rate_plans_gpu_only(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.cpu.gbs = 0;
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_int_equal(pl.choice, FDT_HYB_GPU);
    for (int k = FDT_HYB_CPU; k < FDT_HYB_COUNT; k++) {
        assert_int_equal(pl.s[k].ok, 0);
        assert_non_null(strstr(pl.s[k].why, "no tuned rate for the CPU (Intel Xeon)"));
    }
    assert_true(pl.gain == 0);
}

static void refusals(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    in.gpu.gbs = 0;
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), -1);
    assert_string_equal(e.msg, "hybrid plan: no tuned rate for the GPU (NVIDIA H200) on this "
                               "problem");
    in = h200();
    in.link.d2h_gbs = 0;
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), -1);
    assert_non_null(strstr(e.msg, "link of NVIDIA H200 is not measured"));
    in = h200();
    in.p.absorb_w = 300; /* 2W above the extent */
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), -1);
    assert_non_null(strstr(e.msg, "hybrid plan: "));
}

/* A CPU at 1 GB/s beside a GPU at 4000 on 64 planes: its share is 0.016 of a plane. */
static void share_rounding_to_no_plane(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.p.nx = in.p.ny = in.p.nz = 64;
    in.gpu.gbs = in.gpu.deploy_gbs[FDT_HYB_COMPLETE] = 4000;
    in.cpu.gbs = 1;
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_int_equal(pl.choice, FDT_HYB_GPU);
    assert_int_equal(pl.cpu_planes, 1);
    assert_non_null(strstr(pl.s[FDT_HYB_DATA].why, "rounds to 0 of 64 z planes"));
    assert_non_null(strstr(pl.s[FDT_HYB_DATA].why, "the best split found, 1 plane, is shown"));
    assert_true(pl.split_gain < 0);
}

static void no_layer_no_task(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.p.op = FDT_OP_LAP;
    in.p.absorb_w = 0;
    in.p.absorb_s = 0;
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_int_equal(pl.s[FDT_HYB_TASK].ok, 0);
    assert_string_equal(pl.s[FDT_HYB_TASK].why,
                        "task-parallel: lap has no absorbing layer for the CPU (dwave only)");
    /* the halo: 4 planes of a 512^2 lap, 4.3 MB each way */
    assert_true(fabs(pl.s[FDT_HYB_DATA].copy_bytes - 4194304.0) < 0.5);
    assert_int_equal(pl.choice, FDT_HYB_GPU);
}

/* The prediction at a given split: the plan's best is it at the best planes; the neighbours
 * are no faster; a split outside [1, nz - 1] or without a CPU rate is refused. */
static void prediction_at_a_split(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.gpu.gbs = in.gpu.deploy_gbs[FDT_HYB_COMPLETE] = 3000;
    in.cpu.gbs = 1000;
    in.cpu.copy_gbs = 1200;
    in.link = (fdt_hybrid_link){.unified = 1, .shared_gbs = 4000};
    fdt_hybrid_plan pl;
    fdt_hybrid_pred at, lo, hi;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_int_equal(fdt_hybrid_predict_data(&in, pl.cpu_planes, &at, &e), 0);
    assert_true(at.t_ms == pl.s[FDT_HYB_DATA].t_ms);
    assert_int_equal(fdt_hybrid_predict_data(&in, pl.cpu_planes - 8, &lo, &e), 0);
    assert_int_equal(fdt_hybrid_predict_data(&in, pl.cpu_planes + 8, &hi, &e), 0);
    assert_true(lo.t_ms >= at.t_ms && hi.t_ms >= at.t_ms);
    assert_int_equal(fdt_hybrid_predict_data(&in, 0, &at, &e), -1);
    assert_string_equal(e.msg, "hybrid plan: 0 CPU planes: a split of 512 z planes gives each "
                               "device 1 to 511");
    assert_int_equal(fdt_hybrid_predict_data(&in, 512, &at, &e), -1);
    in.cpu.gbs = 0;
    assert_int_equal(fdt_hybrid_predict_data(&in, 100, &at, &e), -1);
    assert_non_null(strstr(e.msg, "no tuned rate for the CPU"));
}

/* A grid of many planes (16 x 16 x 300000) is searched every 74th plane, then around the
 * best: the split found is the best of every plane's (fdt_hybrid_predict_data). */
static void many_planes(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.p = (fdt_problem){FDT_OP_LAP, 4, FDT_F32, 16, 16, 300000};
    in.gpu.deploy_gbs[FDT_HYB_COMPLETE] = 0;
    in.cpu.gbs = 900;
    in.cpu.copy_gbs = 1000;
    in.link = (fdt_hybrid_link){.unified = 1};
    fdt_hybrid_plan pl;
    fdt_hybrid_pred t;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    double best = INFINITY;
    int64_t at = 0;
    for (int64_t k = 1; k < in.p.nz; k++) {
        assert_int_equal(fdt_hybrid_predict_data(&in, k, &t, &e), 0);
        if (t.t_ms < best) {
            best = t.t_ms;
            at = k;
        }
    }
    print_message("best of every plane: %lld (%.6f ms); found %lld (%.6f ms)\n", (long long)at,
                  best, (long long)pl.cpu_planes, pl.s[FDT_HYB_DATA].t_ms);
    assert_true(pl.s[FDT_HYB_DATA].t_ms <= best * (1 + 1e-12));
}

static void box_model_identity(void **state)
{
    (void)state;
    fdt_problem p = dwave512();
    int64_t n[3] = {512, 512, 512}, half[3] = {512, 512, 256};
    double t = fdt_effective_bytes(&p) / 3000 * 1e-6;
    assert_true(fabs(fdt_hybrid_box_ms(&p, n, 3000, 1, 1, 5) - t) < 1e-12);
    /* half the planes: the work without the launch in the ratio of the bytes, plus its
     * launch (and two launches cost two) */
    fdt_problem q = p;
    q.nz = 256;
    double share = fdt_effective_bytes(&q) / fdt_effective_bytes(&p);
    double h = fdt_hybrid_box_ms(&p, half, 3000, 1, 1, 5);
    assert_true(fabs(h - ((t - 0.005) * share + 0.005)) < 1e-12);
    assert_true(fabs(fdt_hybrid_box_ms(&p, half, 3000, 1, 2, 5) - h - 0.005) < 1e-12);
}

/* The CPU's slabs from its measured sides deployment (the H200 machine's host, 512^3 R=4 f32,
 * W=16, bench/hybrid.sh of 2026-11-28): the tuned whole grid 51.55 ms (42.15 GB/s), the best
 * sides deployment 100.05 ms (21.72 GB/s). The slabs are what sides adds to its interior box at
 * the whole-grid rate, 57.6 ms; the runner measured the task-parallel step at 50.5 ms. The
 * sides deployment's rate over the slab bytes alone would say 19.7 ms. */
/* The CPU's slabs timed alone (layers_ms): task-parallel's CPU part is that time with its
 * six launches, whatever the grid's rates say (H200 host at 256^3: the loop nest's slabs 3.0
 * ms while its sides step ran at 25 GB/s and the blocked best's at 71 GB/s). */
static void task_parallel_slabs_timed(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.gpu.interior_gbs = 4148;
    in.cpu.gbs = in.cpu.deploy_gbs[FDT_HYB_COMPLETE] = 42.15;
    in.cpu.deploy_gbs[FDT_HYB_SIDES] = 21.72;
    in.cpu.layers_ms = 20;
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    const fdt_hybrid_pred *t = &pl.s[FDT_HYB_TASK];
    assert_true(t->ok);
    assert_true(t->why[0] == 0); /* both rates measured */
    assert_true(fabs(t->cpu.t_ms - 20) < 1e-9 * 20); /* its launches counted once */
    in.cpu.layers_ms = 10; /* half the time, half the prediction */
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_true(fabs(pl.s[FDT_HYB_TASK].cpu.t_ms - 10) < 1e-9 * 10);
}

/* The faces' copies priced by their rows: the x faces are a row of R values per (y, z), each
 * costing the copy engines a row's time whatever its bytes (H200, bench/hybrid_h200/run10/
 * copy_rows.txt: 2.9 ns a row, 50 GB/s each way at once; its host's task-parallel step at
 * 512^3: the slabs 12.82 ms, the step 14.78 ms). Without a row time, the bytes alone. */
static void task_parallel_face_rows(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.gpu.interior_gbs = 4148;
    in.cpu.layers_ms = 12.87;
    in.link = (fdt_hybrid_link){.h2d_gbs = 55, .d2h_gbs = 55, .both_gbs = 50,
                                .latency_us = 3.5, .row_ns = 2.9};
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    const fdt_hybrid_pred *t = &pl.s[FDT_HYB_TASK];
    double face = 480.0 * 480 * 4 * 4, x_rows = 480.0 * 480, yz_rows = 4.0 * 480;
    assert_true(t->copy_bytes == 6 * face);
    assert_true(t->copy_rows == 2 * x_rows + 4 * yz_rows);
    double x_ms = x_rows * 2.9e-6, yz_ms = face / 50e6, lat = 6 * 3.5e-3;
    assert_true(x_ms > 9 * face / 50e6); /* the rows, not the bytes, price the x faces */
    assert_true(fabs(t->copy_ms - (2 * x_ms + 4 * yz_ms + lat)) < 1e-9);
    assert_true(fabs(t->t_ms - 14.78) < 0.05 * 14.78);
    in.link.row_ns = 0; /* not measured */
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    assert_true(fabs(pl.s[FDT_HYB_TASK].copy_ms - (6 * yz_ms + lat)) < 1e-9);
}

/* Data-parallel with a CPU part thinner than R (run13 at 256^3: 2 planes of R=4): the GPU
 * sends R planes, the CPU its 2 (the runner's exchange, 1.05 + 0.52 MB); with both
 * directions measured at once (44 GB/s) the two run together until the shorter is done and
 * the rest of the longer at its own 55 GB/s. With k >= R both send R planes, as before. */
static void data_parallel_thin_cpu_part(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.p.nx = in.p.ny = in.p.nz = 256;
    in.link = (fdt_hybrid_link){.h2d_gbs = 55, .d2h_gbs = 55, .both_gbs = 44,
                                .latency_us = 4.5};
    fdt_hybrid_pred s;
    fdt_err e = {0};
    const double plane = 256.0 * 256 * 4, lat = 0.0045;
    assert_int_equal(fdt_hybrid_predict_data(&in, 2, &s, &e), 0);
    assert_true(s.copy_bytes == 4 * plane && s.copy_bytes_h2d == 2 * plane);
    assert_true(s.copy_rows == 4 * 256 && s.copy_rows_h2d == 2 * 256);
    double lo = lat + 2 * plane / 44e6, hi = lat + 4 * plane / 44e6;
    assert_true(fabs(s.copy_ms - (lo + (hi - lo) * 44.0 / 55)) < 1e-12);
    assert_true(s.copy_ms < hi); /* faster than R planes each way at once */
    assert_int_equal(fdt_hybrid_predict_data(&in, 6, &s, &e), 0);
    assert_true(s.copy_bytes == 4 * plane && s.copy_bytes_h2d == 4 * plane);
    assert_true(fabs(s.copy_ms - (lat + 4 * plane / 44e6)) < 1e-12);
    /* beside the GPU's kernels (after its first planes) its copies make `beside` of their
     * rate: what they have left when the kernels end follows them; with none left the GPU's
     * part alone */
    in.beside = 0.2;
    assert_int_equal(fdt_hybrid_predict_data(&in, 2, &s, &e), 0);
    double left = s.copy_ms - 0.2 * (s.gpu.t_ms - s.gpu.first_ms);
    assert_true(left > 0 && fabs(s.serial_ms - (s.gpu.t_ms + left)) < 1e-12);
    in.beside = 1;
    assert_int_equal(fdt_hybrid_predict_data(&in, 2, &s, &e), 0);
    assert_true(s.serial_ms == s.gpu.t_ms);
    in.beside = 0;
    assert_int_equal(fdt_hybrid_predict_data(&in, 2, &s, &e), 0);
    assert_true(s.serial_ms == s.gpu.t_ms + s.copy_ms);
    /* one direction after the other where both at once was not measured */
    in.link.both_gbs = 0;
    assert_int_equal(fdt_hybrid_predict_data(&in, 1, &s, &e), 0);
    assert_true(fabs(s.copy_ms - (2 * lat + 5 * plane / 55e6)) < 1e-12);
}

/* The CPU's thin part timed alone (part_ms of its first 8 planes, R=4): a part of up to 8
 * planes goes at that rate (its launch taken out), a deeper one its first 8 at that rate and
 * the rest at the grid's; the first planes the GPU needs likewise. Without it, the grid's. */
static void data_parallel_thin_rate(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.p.nx = in.p.ny = in.p.nz = 256;
    fdt_hybrid_pred s, grid;
    fdt_err e = {0};
    fdt_problem b = in.p;
    b.nz = 8;
    const double b8 = fdt_effective_bytes(&b), launch = 0.003;
    assert_int_equal(fdt_hybrid_predict_data(&in, 3, &grid, &e), 0);
    assert_true(grid.cpu.thin_bytes == 0 && grid.cpu.thin_planes == 0);
    in.cpu.part_ms = b8 / 120e6 + launch; /* 120 GB/s with its launch out */
    in.cpu.part_planes = 8;
    in.cpu.part_n = 3;
    assert_int_equal(fdt_hybrid_predict_data(&in, 3, &s, &e), 0);
    b.nz = 3;
    double b3 = fdt_effective_bytes(&b);
    assert_true(fabs(s.cpu.thin_gbs - 120) < 1e-9 && s.cpu.thin_planes == 8);
    assert_true(s.cpu.thin_bytes == b3 && s.cpu.bytes == b3);
    assert_true(fabs(s.cpu.t_ms - (b3 / 120e6 + 2 * launch)) < 1e-12);
    assert_true(fabs(s.cpu.first_ms - (b3 / 120e6 + launch)) < 1e-12); /* min(R, 3) = 3 */
    assert_true(s.cpu.t_ms < grid.cpu.t_ms); /* 120 against 64 GB/s */
    assert_int_equal(fdt_hybrid_predict_data(&in, 20, &s, &e), 0);
    b.nz = 20;
    double b20 = fdt_effective_bytes(&b);
    assert_true(s.cpu.thin_bytes == b8 && s.cpu.bytes == b20);
    double rest = (b20 - b8) / (s.cpu.net_gbs * 1e6);
    assert_true(fabs(s.cpu.t_ms - (b8 / 120e6 + rest + 2 * launch)) < 1e-12);
    b.nz = 4;
    assert_true(fabs(s.cpu.first_ms - (fdt_effective_bytes(&b) / 120e6 + launch)) < 1e-12);
    /* the GPU's part never takes it */
    assert_true(s.gpu.thin_bytes == 0 && s.gpu.thin_gbs == 0);
}

/* Without a layer time (rows before schema v9): the sides step less its interior at the
 * whole-grid rate, said in why. */
static void task_parallel_slabs_from_sides(void **state)
{
    (void)state;
    fdt_hybrid_in in = h200();
    in.gpu.interior_gbs = 4148;
    in.cpu.gbs = in.cpu.deploy_gbs[FDT_HYB_COMPLETE] = 42.15;
    in.cpu.deploy_gbs[FDT_HYB_SIDES] = 21.72;
    fdt_hybrid_plan pl;
    fdt_err e = {0};
    assert_int_equal(fdt_hybrid_plan_make(&in, &pl, &e), 0);
    const fdt_hybrid_pred *t = &pl.s[FDT_HYB_TASK];
    assert_true(t->ok);
    assert_non_null(strstr(t->why, "not timed alone"));
    fdt_problem p = dwave512(), q = p;
    q.nx = q.ny = q.nz = 480;
    double want = fdt_effective_bytes(&p) / 21.72e6 - fdt_effective_bytes(&q) / 42.15e6;
    assert_true(fabs(t->cpu.t_ms - want) < 0.01 * want);
    assert_true(fabs(t->cpu.t_ms - 50.5) < 0.15 * 50.5);
    assert_int_equal(pl.choice, FDT_HYB_GPU);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gpu_only_on_h200),
        cmocka_unit_test(data_parallel_on_an_apu),
        cmocka_unit_test(small_gain_keeps_gpu_only),
        cmocka_unit_test(task_parallel_when_layers_diverge),
        cmocka_unit_test(task_parallel_slabs_timed),
        cmocka_unit_test(task_parallel_face_rows),
        cmocka_unit_test(task_parallel_slabs_from_sides),
        cmocka_unit_test(data_parallel_thin_cpu_part),
        cmocka_unit_test(data_parallel_thin_rate),
        cmocka_unit_test(no_cpu_rate_plans_gpu_only),
        cmocka_unit_test(refusals),
        cmocka_unit_test(share_rounding_to_no_plane),
        cmocka_unit_test(no_layer_no_task),
        cmocka_unit_test(prediction_at_a_split),
        cmocka_unit_test(many_planes),
        cmocka_unit_test(box_model_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
