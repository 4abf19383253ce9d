/* Tests of the hybrid planner's gathering (tuner/hybrid.c) and of `fdtune hybrid plan`, on a
 * tuning database written here: an H200 with dwave and wave results and a measured link, a
 * Xeon host CPU with a dwave result. The rates gathered are the stored ones (the best, the
 * run's copy bandwidth, the interior's wave, the link); a missing CPU result, a missing link,
 * a GPU without results and a name matching two devices are refused naming the command to run;
 * the command prints each strategy with its arithmetic, chooses GPU only there (issue 29's H200
 * numbers), writes JSON, refuses bad input with exit 2, and --predict labels its figures and
 * takes the measured fractions from the database when --gpu and --cpu name stored devices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt_db.h"
#include "fdt_hybrid_db.h"
#include "testutil.h"

static char g_dir[256], g_db[512], g_nolink[512];

static fdt_device device(const char *backend, const char *vendor, const char *name,
                         const char *arch, int cu, const char *uuid)
{
    fdt_device d;
    fdt_device_init(&d);
    snprintf(d.backend, sizeof d.backend, "%s", backend);
    snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "%s", arch);
    d.compute_units = cu;
    d.warp_size = strcmp(backend, "cpu") ? 32 : 1;
    d.mem_bytes = 141LL << 30;
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    return d;
}

static fdt_problem dwave(void)
{
    fdt_problem p = {FDT_OP_DWAVE, 4, FDT_F32, 512, 512, 512};
    p.absorb_w = 16;
    p.absorb_s = 0.1;
    return p;
}

/* A run of d with copy bandwidth copy, and its device id. */
static int64_t begin(fdt_db *db, const fdt_device *d, double copy, int64_t *dev)
{
    fdt_err e;
    int64_t env, id;
    fdt_db_env v;
    fdt_db_env_from_device(d, "0.1.0", &v);
    fdt_db_run r;
    fdt_db_run_init(&r);
    if (fdt_db_device_id(db, d, dev, &e) || fdt_db_env_id(db, &v, &env, &e))
        fail_msg("%s", e.msg);
    r.kind = FDT_DB_TUNE;
    r.device_id = *dev;
    r.env_id = env;
    r.copy_gbs = copy;
    snprintf(r.command, sizeof r.command, "fdtune tune");
    snprintf(r.recipe, sizeof r.recipe, "test");
    snprintf(r.strategy, sizeof r.strategy, "model");
    if (fdt_db_run_begin(db, &r, &id, &e))
        fail_msg("%s", e.msg);
    return id;
}

/* An ok evaluation of p at gbs in stage, its layers timed alone in layers_ms and its first
 * planes in part_ms (NaN: none). */
static void add_timed(fdt_db *db, int64_t run, fdt_problem p, const char *config, double gbs,
                      fdt_db_stage stage, double layers_ms, double part_ms)
{
    fdt_err e;
    fdt_db_eval ev;
    fdt_db_eval_init(&ev);
    ev.run_id = run;
    ev.stage = stage;
    if (fdt_db_problem_id(db, &p, &ev.problem_id, &e))
        fail_msg("%s", e.msg);
    snprintf(ev.config, sizeof ev.config, "%s", config);
    ev.gbs = gbs;
    ev.time_ms = fdt_effective_bytes(&p) / gbs * 1e-6;
    ev.layout_line = 520;
    ev.layout_offset = 0;
    ev.layers_ms = layers_ms;
    ev.part_ms = part_ms;
    if (fdt_db_eval_insert(db, &ev, NULL, &e))
        fail_msg("%s", e.msg);
}

static void add_layers(fdt_db *db, int64_t run, fdt_problem p, const char *config, double gbs,
                       fdt_db_stage stage, double layers_ms)
{
    add_timed(db, run, p, config, gbs, stage, layers_ms, NAN);
}

static void add_stage(fdt_db *db, int64_t run, fdt_problem p, const char *config, double gbs,
                      fdt_db_stage stage)
{
    add_layers(db, run, p, config, gbs, stage, NAN);
}

static void add(fdt_db *db, int64_t run, fdt_problem p, const char *config, double gbs)
{
    add_stage(db, run, p, config, gbs, FDT_DB_FULL);
}

/* The database: H200 (dwave 3825 and 3500 GB/s, wave 3900, copy 4250, link 55 GB/s each
 * way), Xeon (dwave 64 GB/s, copy 72); with_link 0 leaves the link out. */
static void make_db(const char *path, int with_link)
{
    fdt_db *db;
    fdt_err e;
    if (fdt_db_open(path, FDT_DB_CREATE, &db, &e))
        fail_msg("%s", e.msg);
    fdt_device g = device("cuda", "NVIDIA", "NVIDIA H200", "sm_90", 132, "GPU-1");
    fdt_device c = device("cpu", "Intel", "Intel Xeon Platinum 8480", "x86-64-v4", 16,
                          "cpu-0123456789abcdef");
    int64_t gid, cid;
    int64_t run = begin(db, &g, 4250, &gid);
    add(db, run, dwave(), "bx=128", 3500);
    add(db, run, dwave(), "bx=256", 3825);
    add(db, run, dwave(), "deploy=inout", 3700);
    add(db, run, dwave(), "deploy=sides", 3300);
    add(db, run, dwave(), "bx=128,deploy=sides", 3350);
    fdt_problem w = dwave();
    w.op = FDT_OP_WAVE;
    w.absorb_w = 0;
    w.absorb_s = 0;
    add(db, run, w, "bx=256", 3900);
    int64_t crun = begin(db, &c, 72, &cid);
    add(db, crun, dwave(), "default", 64);
    /* probes: the CPU's sides only probed (taken, marked), the GPU's sides probed faster
     * than its full evaluations (a full one stands) */
    add_layers(db, crun, dwave(), "deploy=sides", 30, FDT_DB_PROBE, 9.0);
    /* the slabs of a slower sides step timed fastest (taken with its config); an inout's and
     * a GPU's layer times are not the CPU's slabs */
    add_layers(db, crun, dwave(), "blk=1,deploy=sides,ty=16", 25, FDT_DB_PROBE, 4.5);
    add_layers(db, crun, dwave(), "deploy=inout", 20, FDT_DB_PROBE, 1.0);
    add_layers(db, run, dwave(), "bx=32,deploy=sides", 3000, FDT_DB_PROBE, 0.1);
    add_stage(db, run, dwave(), "bx=256,deploy=sides", 3600, FDT_DB_PROBE);
    fdt_db_link l = {55, 55, 0, 10, 2.9, 0, "2026-11-28T10:00:00.000Z"};
    if (with_link && fdt_db_link_put(db, gid, &l, &e))
        fail_msg("%s", e.msg);
    fdt_db_close(db);
}

static int setup(void **state)
{
    (void)state;
    if (tu_mkdtemp(g_dir, sizeof g_dir, "fdt_hybrid"))
        return -1;
    snprintf(g_db, sizeof g_db, "%s/tune.db", g_dir);
    snprintf(g_nolink, sizeof g_nolink, "%s/nolink.db", g_dir);
    make_db(g_db, 1);
    make_db(g_nolink, 0);
    setenv("FDTUNE_SYSTEM_DB", "", 1);
    setenv("NO_COLOR", "1", 1);
    unsetenv("FDTUNE_DB");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tu_rmtree(g_dir);
}

static fdt_status gather(const char *path, const char *gpu, const char *cpu, fdt_problem p,
                         fdt_hybrid_in *in, fdt_hybrid_sources *src, fdt_err *e)
{
    fdt_db *db;
    if (fdt_db_open(path, FDT_DB_READONLY, &db, e))
        fail_msg("%s", e->msg);
    fdt_status st = fdt_hybrid_gather(db, gpu, cpu, &p, in, src, e);
    fdt_db_close(db);
    return st;
}

static void gathers_the_stored_rates(void **state)
{
    (void)state;
    fdt_hybrid_in in;
    fdt_hybrid_sources src;
    fdt_err e = {""};
    assert_int_equal(gather(g_db, "H200", "Xeon", dwave(), &in, &src, &e), FDT_STATUS_OK);
    assert_true(fabs(in.gpu.gbs - 3825) < 1e-9);
    assert_string_equal(src.gpu_config, "bx=256");
    assert_true(fabs(in.gpu.copy_gbs - 4250) < 1e-6);
    assert_true(fabs(in.gpu.deploy_gbs[FDT_HYB_COMPLETE] - 3825) < 1e-9);
    assert_true(fabs(in.gpu.deploy_gbs[FDT_HYB_INOUT] - 3700) < 1e-9);
    assert_true(fabs(in.gpu.deploy_gbs[FDT_HYB_SIDES] - 3350) < 1e-9);
    assert_string_equal(src.deploy_config[FDT_HYB_SIDES], "bx=128,deploy=sides");
    assert_int_equal(in.gpu.deploy_probe[FDT_HYB_SIDES], 0);
    assert_true(fabs(in.cpu.deploy_gbs[FDT_HYB_SIDES] - 30) < 1e-9);
    assert_int_equal(in.cpu.deploy_probe[FDT_HYB_SIDES], 1);
    assert_true(in.cpu.layers_ms == 4.5 && in.cpu.layers_probe == 1);
    assert_string_equal(src.cpu_layers_config, "blk=1,deploy=sides,ty=16");
    assert_int_equal(in.cpu.deploy_probe[FDT_HYB_COMPLETE], 0);
    assert_true(fabs(in.gpu.interior_gbs - 3900) < 1e-9);
    assert_true(in.gpu.flops_gfs > 10000); /* sm_90's facts x 132 SMs */
    assert_true(fabs(in.cpu.gbs - 64) < 1e-9 && fabs(in.cpu.copy_gbs - 72) < 1e-6);
    assert_true(in.link.h2d_gbs == 55 && in.link.d2h_gbs == 55 && in.link.latency_us == 10);
    assert_true(in.link.row_ns == 2.9);
    assert_string_equal(src.link_measured, "2026-11-28T10:00:00.000Z");
    assert_string_equal(in.gpu.name, "NVIDIA H200");
}

/* fdtune ARGS... with the database given; the result in r (below). */
static void run_cli(tu_result *r, const char *db, const char *a1, const char *a2,
                    const char *a3, const char *a4, const char *a5, const char *a6);

/* The winner's curse: re-measurements of the best's config (other ok full evaluations) stand
 * in for the one that chose it, their median; a probe is no re-measurement of a rate. The
 * layer time likewise from other evaluations of its config, probes included. The part time:
 * the median of every evaluation of the best's config that has one (no choice was made by
 * it), another config's left out. */
static void remeasurements_stand_in_for_the_choice(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/remeasured.db", g_dir);
    make_db(path, 1);
    fdt_db *db;
    fdt_err e = {""};
    if (fdt_db_open(path, FDT_DB_READWRITE, &db, &e))
        fail_msg("%s", e.msg);
    fdt_device c = device("cpu", "Intel", "Intel Xeon Platinum 8480", "x86-64-v4", 16,
                          "cpu-0123456789abcdef");
    int64_t cid;
    int64_t run = begin(db, &c, 72, &cid);
    add(db, run, dwave(), "default", 50);
    add_timed(db, run, dwave(), "default", 10, FDT_DB_PROBE, NAN, 0.020);
    add_timed(db, run, dwave(), "blk=1,deploy=sides,ty=16", 25, FDT_DB_FULL, 6.5, 0.001);
    fdt_db_close(db);
    if (fdt_db_open(path, FDT_DB_READWRITE, &db, &e))
        fail_msg("%s", e.msg);
    run = begin(db, &c, 72, &cid);
    add_timed(db, run, dwave(), "default", 56, FDT_DB_FULL, NAN, 0.030);
    add_layers(db, run, dwave(), "blk=1,deploy=sides,ty=16", 25, FDT_DB_PROBE, 5.5);
    fdt_db_close(db);
    fdt_hybrid_in in;
    fdt_hybrid_sources src;
    assert_int_equal(gather(path, "H200", "Xeon", dwave(), &in, &src, &e), FDT_STATUS_OK);
    assert_string_equal(src.cpu_config, "default");
    assert_true(in.cpu.gbs == 53 && in.cpu.own_gbs == 64 && in.cpu.remeasured == 2);
    assert_true(in.cpu.deploy_gbs[FDT_HYB_COMPLETE] == 53);
    /* the layers: the full one (6.5) chose the config; the probe and the first (4.5) are
     * its other measurements */
    assert_string_equal(src.cpu_layers_config, "blk=1,deploy=sides,ty=16");
    assert_true(in.cpu.layers_ms == 5 && in.cpu.layers_remeasured == 2);
    assert_true(in.gpu.gbs == 3825 && in.gpu.remeasured == 0); /* none: its own */
    assert_true(fabs(in.cpu.part_ms - 0.025) < 1e-15 && in.cpu.part_n == 2);
    assert_int_equal(in.cpu.part_planes, 2 * dwave().R);
    assert_true(in.gpu.part_ms == 0 && in.gpu.part_n == 0 && in.gpu.part_planes == 0);
    /* the plan says it and prices the CPU's data-parallel part by it */
    tu_result r;
    run_cli(&r, path, "--gpu", "H200", "--cpu", "Xeon", NULL, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "its first 8 planes alone 0.0250 ms, back to back (the median of 2; a "
                      "data-parallel part's rate)");
    assert_has(r.out, "(the first 8 planes' rate, timed alone, its launch out)");
    tu_result_free(&r);
}

static void refuses_what_is_missing(void **state)
{
    (void)state;
    fdt_hybrid_in in;
    fdt_hybrid_sources src;
    fdt_err e = {""};
    fdt_problem other = dwave();
    other.absorb_w = 8; /* another layer is another problem */
    assert_int_equal(gather(g_db, "H200", "Xeon", other, &in, &src, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "no tuned result for dwave R=4 f32 512x512x512 W=8 S=0.1 on a GPU "
                      "matching 'H200'; run: fdtune tune --gpu 'H200' --op dwave --R 4 "
                      "--precision f32 --grid 512x512x512 --absorb 8:0.1");
    assert_int_equal(gather(g_db, "H200", "EPYC", dwave(), &in, &src, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "on a CPU matching 'EPYC'; run: fdtune tune --cpu 'EPYC'");
    assert_int_equal(gather(g_nolink, "H200", "Xeon", dwave(), &in, &src, &e),
                     FDT_STATUS_USAGE);
    assert_has(e.msg, "the host<->device link of NVIDIA H200 is not measured; run 'fdtune "
                      "devices'");
    /* the CPU is no GPU: --gpu Xeon finds no GPU result */
    assert_int_equal(gather(g_db, "Xeon", "Xeon", dwave(), &in, &src, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "on a GPU matching 'Xeon'");
}

/* fdtune ARGS... with the database given; the result in r. */
static void run_cli(tu_result *r, const char *db, const char *a1, const char *a2,
                    const char *a3, const char *a4, const char *a5, const char *a6)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)FDTUNE_BIN;
    argv[n++] = (char *)"hybrid";
    argv[n++] = (char *)"plan";
    if (db) {
        argv[n++] = (char *)"--db";
        argv[n++] = (char *)db;
    }
    const char *more[] = {a1, a2, a3, a4, a5, a6};
    for (int k = 0; k < 6 && more[k]; k++)
        argv[n++] = (char *)more[k];
    argv[n] = NULL;
    tu_run(r, g_dir, argv);
}

static void command_plans_gpu_only_on_h200(void **state)
{
    (void)state;
    tu_result r;
    run_cli(&r, g_db, "--gpu", "H200", "--cpu", "Xeon", NULL, NULL);
    expect_status(&r, 0);
    printf("%s", r.out);
    assert_has(r.out, "hybrid plan: dwave R=4 f32 512x512x512 W=16 S=0.1 (from measured rates)");
    assert_has(r.out, "gpu  NVIDIA H200: best 3825 GB/s (bx=256), copy 4250 GB/s (90% of it)");
    assert_has(r.out, "link h2d 55, d2h 55");
    assert_has(r.out, "  gpu   0.5680 ms per step, bound by gpu");
    assert_has(r.out, "gpu 0.5680 ms = 2.173 GB / 3825 GB/s (the measured step)");
    /* the best split: one CPU plane; the GPU's copies (4 MiB out, 1 MiB in, one after the
     * other) beside its kernels at 20% of their rate leave 0.0033 ms */
    assert_has(r.out, "gpu 0.5709 ms = 2.168 GB / 3852 GB/s (3825 measured, its launches out) + "
                      "2 launches x 4 us");
    assert_has(r.out, "gpu+copies 0.5742 ms = the GPU's 0.5709 + what its copies (0.1153) have "
                      "left when its kernels end (20% of their rate beside them after its "
                      "first 0.0106)");
    assert_has(r.out, "assumed: a launch 4 us (GPU), 2 us (CPU); the per-step sync 10 us; a "
                      "discrete GPU's copies beside its kernels at 20% of their rate");
    assert_has(r.out, "  data  ");
    assert_has(r.out, "exchange ");
    assert_has(r.out, "Choice: gpu only: 0.5680 ms; the best split, data-parallel");
    assert_has(r.out, "memory-bound");
    /* the best deployment's 0.568 ms against the interior (480^3) at wave's 3900 GB/s */
    assert_has(r.out, "a layer point costs the GPU 1.11x an interior point: not divergent "
                      "(from 1.5x; by deployment: complete 1.11x inout 1.30x sides 1.93x)");
    assert_lacks(r.out, "PREDICTION");
    /* the CPU's slabs timed alone: task-parallel's CPU part, with the config that ran them */
    assert_has(r.out, "the sides' six slabs alone 4.5000 ms (a probe) with "
                      "blk=1,deploy=sides,ty=16 (task-parallel runs it)");
    assert_has(r.out, "cpu 4.5000 ms = ");
    tu_result_free(&r);
    run_cli(&r, g_db, "--gpu", "H200", "--cpu", "Xeon", "--json", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"hybrid_plan\": {");
    assert_has(r.out, "\"choice\": \"gpu\"");
    assert_has(r.out, "\"prediction\": false");
    assert_has(r.out, "\"interior_gbs\": 3900");
    assert_has(r.out, "\"sides_gbs\": 3350");
    assert_has(r.out, "\"layers_ms\": 4.5");
    assert_has(r.out, "\"layers_config\": \"blk=1,deploy=sides,ty=16\"");
    tu_result_free(&r);
}

static void command_refusals(void **state)
{
    (void)state;
    tu_result r;
    run_cli(&r, g_nolink, "--gpu", "H200", "--cpu", "Xeon", NULL, NULL);
    expect_status(&r, 2);
    assert_has(r.err, "is not measured; run 'fdtune devices'");
    assert_string_equal(r.out, "");
    tu_result_free(&r);
    run_cli(&r, g_db, "--gpu", "H200", "--cpu", "Xeon", "--absorb", "8");
    expect_status(&r, 2);
    assert_has(r.err, "run: fdtune tune --gpu 'H200' --op dwave");
    tu_result_free(&r);
    run_cli(&r, g_db, "--op", "lap", "--absorb", "4", NULL, NULL);
    expect_status(&r, 2);
    assert_has(r.err, "--absorb: only dwave has an absorbing layer; give --op dwave");
    tu_result_free(&r);
    run_cli(&r, NULL, "--predict", "MI250X", NULL, NULL, NULL, NULL);
    expect_status(&r, 2);
    assert_has(r.err, "--predict MI250X: not a machine fdtune describes (MI300A, GH200)");
    tu_result_free(&r);
}

static void command_predicts(void **state)
{
    (void)state;
    tu_result r;
    run_cli(&r, NULL, "--predict", "MI300A", NULL, NULL, NULL, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "PREDICTION (not measured) hybrid plan: dwave R=4 f32 512x512x512");
    assert_has(r.out, "published: AMD Instinct MI300A APU");
    assert_has(r.out, "5.3 TB/s");
    assert_has(r.out, "its step: 90% of its copy (assumed)");
    assert_has(r.out, "link unified: nothing copied");
    assert_has(r.out, "Choice (predicted): ");
    tu_result_free(&r);
    /* the fractions of our measured H200 and Xeon: 3825/4250 = 90%, 64/72 = 89% */
    run_cli(&r, g_db, "--predict", "gh200", "--gpu", "H200", "--cpu", "Xeon");
    expect_status(&r, 0);
    assert_has(r.out, "published: NVIDIA GH200 Grace Hopper Superchip");
    assert_has(r.out, "its step: 90% of its copy (measured on the GPU we tuned)");
    assert_has(r.out, "the CPU's step: 89% of its copy (measured on the CPU we tuned)");
    assert_has(r.out, "link h2d 450, d2h 450");
    tu_result_free(&r);
    run_cli(&r, NULL, "--predict", "GH200", "--json", NULL, NULL, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"prediction\": true");
    assert_has(r.out, "\"machine\": \"GH200\"");
    tu_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gathers_the_stored_rates),
        cmocka_unit_test(remeasurements_stand_in_for_the_choice),
        cmocka_unit_test(refuses_what_is_missing),
        cmocka_unit_test(command_plans_gpu_only_on_h200),
        cmocka_unit_test(command_refusals),
        cmocka_unit_test(command_predicts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
