/* Tests of the CPU form of the model (search/cpu_model.c), with CPU devices described by hand:
 * the measured fractions of copy it was fitted to (the 2-core Zen 3 development machine at
 * 256^3 and the H200 machines' 32-core Xeon host at 512^3, lap, d2x, d2y, d2z and wave at R=4
 * f32) within a stated tolerance, the rms printed; the blocked family above the plain loop
 * nest for lap R=4 at 512^3 on a 16-core fact set; the binding limit named (dram for d2x's
 * loop nest, core or fp for lap R=8); the form chosen by the device's target (a CPU
 * architecture takes the CPU form, a GPU's the GPUs'); and a dry run on this machine's CPU
 * (the cpu backend's device) that ranks the configs of recipes/cpu.lua and names their
 * bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_measured_fractions),
        cmocka_unit_test(test_blocked_above_loops),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
