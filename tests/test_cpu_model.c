/* Tests of the CPU form of the model (search/cpu_model.c), with CPU devices described by hand:
 * the measured fractions of copy it was fitted to (the 2-core Zen 3 development machine at
 * 256^3 and the H200 machines' 32-core Xeon host at 512^3, lap, d2x, d2y, d2z and wave at R=4
 * f32) within a stated tolerance, the rms printed; the blocked family above the plain loop
 * nest for lap R=4 at 512^3 on a 16-core fact set; the binding limit named (dram for d2x's
 * loop nest, core or fp for lap R=8); the form chosen by the device's target (a CPU
 * architecture takes the CPU form, a GPU's the GPUs'); and a dry run on this machine's CPU
 * (the cpu backend's device) that ranks the configs of recipes/cpu.lua (or, where the
 * repository has none, a small space of both families whose constraints read the recipe's
 * CPU facts, dev.cores and dev.l2) and names their bounds; and dwave's terms on the CPU (the
 * damping's instructions, a dry run of its deployments and etas). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fdt_recipe.h"
#include "fdt_rt.h"
#include "fdt_search.h"

/* Every measured fraction within this of the model's, and their rms within RMS_MAX. */
#define TOLERANCE 0.10
#define RMS_MAX 0.05

/* ------------------------------------------------------------------ devices and configs */

static fdt_device cpu_device(const char *name, const char *arch, int cores, int vector,
                             int64_t l2, int64_t llc, double copy_gbs)
{
    fdt_device d;
    fdt_device_init(&d);
    snprintf(d.backend, sizeof d.backend, "cpu");
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "%s", arch);
    d.compute_units = cores;
    d.sockets = 1;
    d.threads = cores;
    d.vector_bytes = vector;
    d.l1d_bytes = 32768;
    d.l2_bytes = l2;
    d.llc_bytes = llc;
    d.achievable_bw_gbs = copy_gbs;
    return d;
}

/* The development machine: 2 Zen 3 cores, AVX2, 512 KiB L2 each, 32 MiB L3, a streaming
 * copy of 30 GB/s. */
static fdt_device zen3_2core(void)
{
    return cpu_device("AMD EPYC", "x86-64-v3", 2, 32, 512 << 10, 32 << 20, 30);
}

/* The H200 machines' host: 32 Xeon cores, AVX-512, 2 MiB L2 each, 300 MiB L3, 105 GB/s. */
static fdt_device xeon_32core(void)
{
    return cpu_device("Intel(R) Xeon(R)", "x86-64-v4", 32, 64, 2 << 20, 300LL << 20, 105);
}

/* A 16-core fact set: AVX-512, 1 MiB L2 each, 32 MiB L3, no measured copy (estimated). */
static fdt_device server_16core(void)
{
    return cpu_device("16-core server", "x86-64-v4", 16, 64, 1 << 20, 32 << 20, 0);
}

static fdt_problem problem(fdt_op op, int R, int n)
{
    fdt_problem p = {op, R, FDT_F32, n, n, n};
    return p;
}

static fdt_config loops(void)
{
    fdt_config c;
    fdt_config_default(&c);
    return c;
}

/* The model's fraction of the device's copy bandwidth for c. */
static double fraction(const fdt_problem *p, const fdt_config *c, const fdt_device *d,
                       fdt_model_terms *t)
{
    double ms = fdt_cpu_model_time(p, c, d, t);
    assert_true(ms > 0);
    assert_int_equal(t->cpu, 1);
    return fdt_effective_bytes(p) / (ms * 1e-3) / 1e9 / t->copy_gbs;
}

/* The model's best blocked config over the space of recipes/cpu.lua (ty 16-128, pfd, nt; uk
 * for d2x and d2z, twopass for lap and wave), and its fraction of copy. */
static double best_blocked(const fdt_problem *p, const fdt_device *d, fdt_config *best,
                           fdt_model_terms *bt)
{
    static const int tys[] = {16, 32, 64, 128};
    int one_axis = p->op == FDT_OP_D2X || p->op == FDT_OP_D2Z;
    double top = 0;
    for (int a = 0; a < 4; a++)
        for (int pfd = 0; pfd < 2; pfd++)
            for (int nt = 0; nt < 2; nt++)
                for (int uk = 1; uk <= (one_axis ? 4 : 1); uk *= 2)
                    for (int tp = 0; tp < (one_axis ? 1 : 2); tp++) {
                        fdt_config c = loops();
                        c.blk = 1;
                        c.ty = tys[a];
                        c.pfd = pfd;
                        c.nt = nt;
                        c.uk = uk;
                        c.twopass = tp;
                        fdt_model_terms t;
                        double f = fraction(p, &c, d, &t);
                        if (f > top) {
                            top = f;
                            *best = c;
                            *bt = t;
                        }
                    }
    return top;
}

/* ------------------------------------------------------------------ tests */

/* The measured fractions of copy (tests' brief: the development machine's loop nest and best
 * blocked config, the H200 host's loop nest for lap at 512^3), each within TOLERANCE, their
 * rms within RMS_MAX. */
static void test_measured_fractions(void **state)
{
    (void)state;
    static const fdt_op ops[] = {FDT_OP_D2X, FDT_OP_D2Y, FDT_OP_D2Z, FDT_OP_LAP, FDT_OP_WAVE};
    static const double loops_measured[] = {0.62, 0.47, 0.43, 0.25, 0.32};
    static const double blocked_measured[] = {0.84, 0.66, 0.69, 0.31, 0.38};
    fdt_device zen = zen3_2core();
    double ss = 0, worst = 0;
    int n = 0;
    for (int i = 0; i < 5; i++) {
        fdt_problem p = problem(ops[i], 4, 256);
        fdt_config c = loops(), b;
        fdt_model_terms t, bt;
        double fl = fraction(&p, &c, &zen, &t);
        double fb = best_blocked(&p, &zen, &b, &bt);
        printf("zen3 2 cores %-4s loops   %.3f (measured %.2f) bound %s\n", fdt_op_name(ops[i]),
               fl, loops_measured[i], fdt_bound_name(t.bound));
        printf("zen3 2 cores %-4s blocked %.3f (measured %.2f) bound %s, ty=%d pfd=%d nt=%d "
               "uk=%d twopass=%d\n", fdt_op_name(ops[i]), fb, blocked_measured[i],
               fdt_bound_name(bt.bound), b.ty, b.pfd, b.nt, b.uk, b.twopass);
        double d[2] = {fl - loops_measured[i], fb - blocked_measured[i]};
        for (int k = 0; k < 2; k++) {
            ss += d[k] * d[k];
            worst = fmax(worst, fabs(d[k]));
            n++;
        }
    }
    fdt_device xeon = xeon_32core();
    fdt_problem p = problem(FDT_OP_LAP, 4, 512);
    fdt_config c = loops();
    fdt_model_terms t;
    double fx = fraction(&p, &c, &xeon, &t);
    printf("xeon 32 cores lap  loops   %.3f (measured 0.38) bound %s, llc hit %.2f\n", fx,
           fdt_bound_name(t.bound), t.llc_hit);
    ss += (fx - 0.38) * (fx - 0.38);
    worst = fmax(worst, fabs(fx - 0.38));
    n++;
    double rms = sqrt(ss / n);
    printf("%d measured fractions: rms %.3f, largest error %.3f (tolerance %.2f each, rms "
           "%.2f)\n", n, rms, worst, TOLERANCE, RMS_MAX);
    assert_true(worst <= TOLERANCE);
    assert_true(rms <= RMS_MAX);
}

/* Lap R=4 at 512^3 on 16 cores: 9 planes of 1 MiB per thread outgrow the 32 MiB LLC, so the
 * loop nest re-reads its z neighbours from memory; the blocked family keeps a tile's planes
 * in L2 and ranks above it, by a wide margin. */
static void test_blocked_above_loops(void **state)
{
    (void)state;
    fdt_device d = server_16core();
    fdt_problem p = problem(FDT_OP_LAP, 4, 512);
    fdt_config c = loops(), b;
    fdt_model_terms t, bt;
    double fl = fraction(&p, &c, &d, &t);
    double fb = best_blocked(&p, &d, &b, &bt);
    printf("16 cores lap R=4 512^3: loops %.3f bound %s, llc hit %.2f; blocked ty=%d %.3f "
           "bound %s\n", fl, fdt_bound_name(t.bound), t.llc_hit, b.ty, fb,
           fdt_bound_name(bt.bound));
    assert_int_equal(t.copy_measured, 0); /* no measured copy: the per-core estimate */
    assert_true(fb > 1.5 * fl);
    assert_int_equal(t.bound, FDT_BOUND_DRAM);
    assert_true(t.llc_hit < 0.5);
    /* every blocked config of the space above the loop nest */
    static const int tys[] = {16, 32, 64, 128};
    for (int a = 0; a < 4; a++) {
        fdt_config k = loops();
        k.blk = 1;
        k.ty = tys[a];
        fdt_model_terms kt;
        assert_true(fraction(&p, &k, &d, &kt) > fl);
    }
}

/* Where a tile's z neighbours come from, on the 16-core fact set at 512^3 lap R=4 f32: ty=16
 * (24 rows x 520 x 9 planes, 449 KiB) fits half the 1 MiB L2, so its 8 z re-reads a point are
 * L2 bytes; ty=128 (2.5 MiB) does not, and 16 such tiles outgrow the 32 MiB LLC, so they come
 * from the LLC and memory, and the smaller tile ranks first. */
static void test_tile_in_l2(void **state)
{
    (void)state;
    fdt_device d = server_16core();
    fdt_problem p = problem(FDT_OP_LAP, 4, 512);
    double npts = 512.0 * 512 * 512, zbytes = npts * 8 * 4;
    fdt_config small = loops(), big = loops();
    small.blk = big.blk = 1;
    small.ty = 16;
    big.ty = 128;
    fdt_model_terms ts, tb;
    double fs = fraction(&p, &small, &d, &ts), fb = fraction(&p, &big, &d, &tb);
    printf("16 cores lap 512^3: ty=16 %.3f (l2 %.0f MB, llc %.0f MB, dram %.0f MB), ty=128 "
           "%.3f (l2 %.0f MB, llc %.0f MB, dram %.0f MB)\n", fs, ts.l2_bytes / 1e6,
           ts.llc_bytes / 1e6, ts.dram_bytes / 1e6, fb, tb.l2_bytes / 1e6, tb.llc_bytes / 1e6,
           tb.dram_bytes / 1e6);
    assert_true(ts.l2_bytes >= zbytes);
    assert_true(ts.llc_bytes < 0.5 * zbytes);
    assert_true(tb.llc_bytes + tb.dram_bytes - ts.dram_bytes >= 0.9 * zbytes);
    assert_true(fs > fb);
}

/* The binding limit: d2x's loop nest is memory-bound (dram) on every device; lap R=8, 17
 * points an axis, is bound by the cores (core or fp) in both families. */
static void test_bounds(void **state)
{
    (void)state;
    fdt_device devs[3] = {zen3_2core(), xeon_32core(), server_16core()};
    for (int i = 0; i < 3; i++) {
        fdt_problem p = problem(FDT_OP_D2X, 4, i == 0 ? 256 : 512);
        fdt_config c = loops();
        fdt_model_terms t;
        fraction(&p, &c, &devs[i], &t);
        assert_string_equal(fdt_bound_name(t.bound), "dram");
    }
    fdt_problem p = problem(FDT_OP_LAP, 8, 256);
    fdt_device zen = zen3_2core();
    fdt_config c = loops(), b;
    fdt_model_terms t, bt;
    fraction(&p, &c, &zen, &t);
    best_blocked(&p, &zen, &b, &bt);
    printf("zen3 lap R=8: loops bound %s, blocked bound %s\n", fdt_bound_name(t.bound),
           fdt_bound_name(bt.bound));
    assert_true(t.bound == FDT_BOUND_CORE || t.bound == FDT_BOUND_FP);
    assert_true(bt.bound == FDT_BOUND_CORE || bt.bound == FDT_BOUND_FP);
    /* the line names the terms, the assumptions and the bound */
    fdt_sb s;
    fdt_sb_init(&s);
    fdt_model_describe(&bt, &s);
    const char *line = fdt_sb_str(&s);
    assert_non_null(strstr(line, "core "));
    assert_non_null(strstr(line, "llc "));
    assert_non_null(strstr(line, "clock 2.5 GHz (assumed)"));
    assert_non_null(strstr(line, "copy 30 GB/s (the device's)"));
    assert_non_null(strstr(line, "bound core") ? "" : strstr(line, "bound fp"));
    fdt_sb_free(&s);
}

/* The form follows the device's target: an x86-64 or AArch64 ISA level (claimed by the cpu
 * backend, dialect C) takes the CPU form, an sm_90 or gfx90a GPU the GPUs' form. */
static void test_form_by_target(void **state)
{
    (void)state;
    fdt_problem p = problem(FDT_OP_LAP, 4, 256);
    fdt_config c = loops();
    static const char *const cpus[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4", "aarch64",
                                       "aarch64-sve"};
    for (int i = 0; i < 5; i++) {
        fdt_device d = cpu_device("some CPU", cpus[i], 8, 16, 1 << 20, 16 << 20, 0);
        fdt_model_terms t;
        assert_int_equal(fdt_model_cpu_form(&d), 1);
        double ms = fdt_model_time(&p, &c, &d, NULL, &t);
        assert_int_equal(t.cpu, 1);
        assert_true(ms == fdt_cpu_model_time(&p, &c, &d, NULL));
    }
    static const char *const gpus[] = {"sm_90", "gfx90a"};
    for (int i = 0; i < 2; i++) {
        fdt_device d;
        fdt_device_init(&d);
        snprintf(d.name, sizeof d.name, "a GPU");
        snprintf(d.arch, sizeof d.arch, "%s", gpus[i]);
        d.compute_units = 100;
        d.l2_bytes = d.llc_bytes = 40 << 20;
        d.peak_bw_gbs = 2000;
        fdt_model_terms t;
        assert_int_equal(fdt_model_cpu_form(&d), 0);
        fdt_config g;
        fdt_config_default(&g);
        assert_true(fdt_model_time(&p, &g, &d, NULL, &t) > 0);
        assert_int_equal(t.cpu, 0);
    }
    /* an architecture no backend claims is no CPU */
    fdt_device d = cpu_device("nothing", "pdp11", 1, 16, 1 << 20, 1 << 20, 0);
    assert_int_equal(fdt_model_cpu_form(&d), 0);
}

/* The space a dry run on this machine ranks when the repository has no recipes/cpu.lua: both
 * families, tiles whose planes fit half the device's L2 (dev.l2, dev.cores: the recipe's
 * CPU facts), prefetch and streaming stores. */
static const char small_space[] =
    "ops { \"lap\" }\n"
    "param(\"blk\", { 0, 1 })\n"
    "param(\"ty\", { 0, 16, 32, 64, 128 })\n"
    "param(\"pfd\", { 0, 1 })\n"
    "param(\"nt\", { 0, 1 })\n"
    "constrain(\"loops take no tile options\", function(c, dev, prob)\n"
    "  return c.blk == 1 or (c.ty == 0 and c.pfd == 0 and c.nt == 0)\n"
    "end)\n"
    "constrain(\"a tile of ty rows\", function(c, dev, prob)\n"
    "  return c.blk == 0 or c.ty > 0\n"
    "end)\n"
    "constrain(\"a tile's planes fit in L2\", function(c, dev, prob)\n"
    "  assert(dev.cores > 0 and dev.l2 > 0 and dev.vector_bytes > 0, \"no CPU facts in dev\")\n"
    "  local R = prob.R\n"
    "  return c.blk == 0 or (c.ty + 2 * R) * (prob.nx + 2 * R) * (2 * R + 1) * prob.esize <= dev.l2 / 2\n"
    "end)\n"
    "strategy \"model\"\n"
    "budget(20)\n";

/* A dry run on this machine's CPU: the cpu backend describes it, the model ranks the space of
 * recipes/cpu.lua (or, without it, the small space above) for lap R=4 f32 at 256^3, every row
 * in the CPU form with one of its bounds; the ranking is printed. */
static void test_dry_run_here(void **state)
{
    (void)state;
    const fdt_rt_backend *b = fdt_rt_backend_find("cpu");
    assert_non_null(b);
    fdt_device host;
    fdt_err e;
    fdt_device_init(&host);
    if (b->device_info(0, &host, &e))
        fail_msg("the cpu backend describes no CPU here: %s", e.msg);
    printf("this CPU: %s (%s, %d cores, %s, L2 %lld KiB, LLC %lld MiB)\n", host.name, host.arch,
           host.compute_units, host.simd, (long long)host.l2_bytes >> 10,
           (long long)host.llc_bytes >> 20);
    char path[4096];
    snprintf(path, sizeof path, "%s/recipes/cpu.lua", FDT_SOURCE_DIR);
    fdt_recipe *r = NULL;
    FILE *f = fopen(path, "r");
    int rc;
    if (f) {
        fclose(f);
        rc = fdt_recipe_load(path, NULL, &r, &e);
    } else {
        rc = fdt_recipe_load_text("cpu_small.lua", small_space, strlen(small_space), NULL, &r,
                                  &e);
    }
    if (rc)
        fail_msg("recipe: %s", e.msg);
    printf("recipe: %s\n", f ? path : "the test's small space (no recipes/cpu.lua)");
    fdt_problem p = problem(FDT_OP_LAP, 4, 256);
    fdt_model_ranking k;
    if (fdt_model_rank(r, &p, &host, 10, &k, &e))
        fail_msg("ranking: %s", e.msg);
    for (int i = 0; i < k.stats.nprune; i++)
        printf("pruned %llu by %s: %s\n", (unsigned long long)k.stats.prune[i].count,
               k.stats.prune[i].name, k.stats.prune[i].example);
    assert_true(k.ntop >= 2);
    int loops_rank = -1, blocked_rank = -1;
    for (size_t i = 0; i < k.ntop; i++) {
        const fdt_ranked *x = &k.top[i];
        fdt_sb s;
        fdt_sb_init(&s);
        fdt_model_describe(&x->terms, &s);
        printf("%2zu %-28s %6.1f GB/s  %s\n", i + 1, x->config, x->pred_gbs, fdt_sb_str(&s));
        fdt_sb_free(&s);
        assert_int_equal(x->terms.cpu, 1);
        const char *bound = fdt_bound_name(x->terms.bound);
        assert_true(!strcmp(bound, "dram") || !strcmp(bound, "llc") || !strcmp(bound, "l2") ||
                    !strcmp(bound, "core") || !strcmp(bound, "fp"));
        assert_true(i == 0 || x->pred_ms >= k.top[i - 1].pred_ms);
        if (x->cfg.blk == 0 && loops_rank < 0)
            loops_rank = (int)i;
        if (x->cfg.blk == 1 && blocked_rank < 0)
            blocked_rank = (int)i;
    }
    /* both families ranked, blocked first (its planes stay in L2) */
    assert_true(blocked_rank == 0);
    assert_true(loops_rank > 0 || k.n > k.ntop);
    fdt_model_ranking_free(&k);
    fdt_recipe_free(r);
}

/* dwave on the CPU (issue 29): the damped kernel's further work (the division, g from the
 * distances or the eta array) in the core and FP terms above the undamped wave's; a dry run
 * of a space with the three deployments and both etas ranks every one in the CPU form, each
 * deployment's launches summed (complete 1, inout 2, sides 7: fdt_model_terms.boxes). */
static const char dwave_space[] =
    "ops { \"dwave\" }\n"
    "param(\"blk\", { 0, 1 })\n"
    "param(\"ty\", { 0, 32 })\n"
    "param(\"deploy\", { \"complete\", \"inout\", \"sides\" })\n"
    "param(\"eta\", { \"dist\", \"array\" })\n"
    "constrain(\"loops take no tile\", function(c, dev, prob)\n"
    "  return (c.blk == 1) == (c.ty > 0)\n"
    "end)\n"
    "strategy \"model\"\n"
    "budget(12)\n";

static void test_dwave(void **state)
{
    (void)state;
    fdt_device d = xeon_32core();
    fdt_problem p = problem(FDT_OP_DWAVE, 4, 256);
    p.absorb_w = 16;
    p.absorb_s = 0.1;
    fdt_problem w = problem(FDT_OP_WAVE, 4, 256);
    fdt_problem box = p; /* one kernel of its own: no layer to deploy */
    box.absorb_w = 0;
    fdt_config c = loops();
    fdt_model_terms tw, td, ta;
    fdt_cpu_model_time(&w, &c, &d, &tw);
    fdt_cpu_model_time(&box, &c, &d, &td);
    c.eta = FDT_ETA_ARRAY;
    fdt_cpu_model_time(&box, &c, &d, &ta);
    assert_true(td.onchip.fp > tw.onchip.fp && td.onchip.inst > tw.onchip.inst);
    assert_true(ta.onchip.fp > tw.onchip.fp && ta.onchip.fp < td.onchip.fp);
    assert_true(td.dram_bytes == tw.dram_bytes);

    fdt_recipe *r = NULL;
    fdt_err e;
    if (fdt_recipe_load_text("dwave.lua", dwave_space, strlen(dwave_space), NULL, &r, &e))
        fail_msg("recipe: %s", e.msg);
    fdt_model_ranking k;
    if (fdt_model_rank(r, &p, &d, 12, &k, &e))
        fail_msg("ranking: %s", e.msg);
    assert_int_equal(k.n, 12);
    int seen[3] = {0, 0, 0};
    for (size_t i = 0; i < k.ntop; i++) {
        const fdt_ranked *x = &k.top[i];
        fdt_sb s;
        fdt_sb_init(&s);
        fdt_model_describe(&x->terms, &s);
        printf("%2zu %-36s %6.1f GB/s  %s\n", i + 1, x->config, x->pred_gbs, fdt_sb_str(&s));
        fdt_sb_free(&s);
        assert_int_equal(x->terms.cpu, 1);
        assert_int_equal(x->terms.boxes, x->cfg.deploy == FDT_DEPLOY_SIDES   ? 7
                                         : x->cfg.deploy == FDT_DEPLOY_INOUT ? 2
                                                                             : 1);
        assert_true(x->pred_ms > 0 && x->pred_ms < 1e9);
        assert_true(i == 0 || x->pred_ms >= k.top[i - 1].pred_ms);
        seen[x->cfg.deploy] = 1;
    }
    assert_true(seen[0] && seen[1] && seen[2]);
    fdt_model_ranking_free(&k);
    fdt_recipe_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured_fractions),
        cmocka_unit_test(test_blocked_above_loops),
        cmocka_unit_test(test_tile_in_l2),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_form_by_target),
        cmocka_unit_test(test_dry_run_here),
        cmocka_unit_test(test_dwave),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
