/* Generator tests (CPU only): FD coefficients against the known tables, the closed form and
 * a convergence study; grid and config parsing with their error messages; layout, geometry
 * and split arithmetic; the template engine; rendered sources; the kernel families (the
 * table, each family's own code, faults, every operator and radius); the CPU reference on inputs
 * for which the stencil is exact; input values and tolerances. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt_gen.h"
#include "gen_internal.h"

static const fdt_gen_target hip = {FDT_DIALECT_HIP}; /* the GPUs' dialect */

#define assert_contains(hay, needle)                                                       \
    do {                                                                                   \
        if (!strstr((hay), (needle)))                                                      \
            fail_msg("'%s' does not contain '%s'", (hay), (needle));                        \
    } while (0)

/* ------------------------------------------------------------------ coefficients */

static void test_coeffs_known_tables(void **state)
{
    (void)state;
    static const struct {
        int R;
        double c[5];
    } known[] = {
        {1, {-2.0, 1.0}},
        {2, {-5.0 / 2, 4.0 / 3, -1.0 / 12}},
        {3, {-49.0 / 18, 3.0 / 2, -3.0 / 20, 1.0 / 90}},
        {4, {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560}},
    };
    for (size_t t = 0; t < sizeof known / sizeof known[0]; t++) {
        long double c[FDT_R_MAX + 1];
        fdt_err e;
        assert_int_equal(fdt_fd_coeffs(known[t].R, c, &e), 0);
        for (int r = 0; r <= known[t].R; r++)
            assert_true(fabsl(c[r] - known[t].c[r]) <= 1e-15 * fabs(known[t].c[r]));
    }
}

/* c_k = 2 (-1)^(k+1) (R!)^2 / (k^2 (R-k)! (R+k)!), c_0 = -2 sum 1/k^2: every R up to 8. */
static void test_coeffs_closed_form(void **state)
{
    (void)state;
    for (int R = 1; R <= FDT_R_MAX; R++) {
        long double c[FDT_R_MAX + 1];
        fdt_err e;
        assert_int_equal(fdt_fd_coeffs(R, c, &e), 0);
        long double fact[2 * FDT_R_MAX + 1];
        fact[0] = 1;
        for (int i = 1; i <= 2 * FDT_R_MAX; i++)
            fact[i] = fact[i - 1] * i;
        long double c0 = 0;
        for (int k = 1; k <= R; k++) {
            long double want = 2.0L * (k % 2 ? 1 : -1) * fact[R] * fact[R] /
                               ((long double)k * k * fact[R - k] * fact[R + k]);
            assert_true(fabsl(c[k] - want) <= 1e-16L * fabsl(want));
            c0 += 1.0L / ((long double)k * k);
        }
        assert_true(fabsl(c[0] + 2 * c0) <= 1e-16L * 2 * c0);
        /* moments: sum of weights 0, second moment 2 */
        long double m0 = c[0], m2 = 0;
        for (int r = 1; r <= R; r++) {
            m0 += 2 * c[r];
            m2 += 2 * c[r] * r * r;
        }
        assert_true(fabsl(m0) < 1e-15L);
        assert_true(fabsl(m2 - 2) < 1e-15L);
    }
}

/* The error on a smooth function falls as h^(2R). */
static void test_coeffs_convergence(void **state)
{
    (void)state;
    for (int R = 1; R <= FDT_R_MAX; R++) {
        long double c[FDT_R_MAX + 1];
        fdt_err e;
        fdt_fd_coeffs(R, c, &e);
        /* Step sizes large enough that the truncation error stays above long double
         * rounding at the smaller step. */
        long double h = R <= 2 ? 0.05L : R <= 4 ? 0.2L : R <= 6 ? 0.4L : 0.5L;
        long double x0 = 0.3L, err[2];
        for (int s = 0; s < 2; s++, h /= 2) {
            long double d = c[0] * sinl(x0);
            for (int r = 1; r <= R; r++)
                d += c[r] * (sinl(x0 + r * h) + sinl(x0 - r * h));
            err[s] = fabsl(d / (h * h) + sinl(x0));
        }
        double order = (double)log2l(err[0] / err[1]);
        if (fabs(order - 2 * R) > 0.3)
            fail_msg("R=%d: observed order %.3f, expected %d (errors %Lg, %Lg)", R, order, 2 * R,
                     err[0], err[1]);
    }
}

static void test_coeffs_bad_radius(void **state)
{
    (void)state;
    long double c[FDT_R_MAX + 2];
    fdt_err e;
    assert_int_equal(fdt_fd_coeffs(0, c, &e), -1);
    assert_contains(e.msg, "R=0");
    assert_int_equal(fdt_fd_coeffs(9, c, &e), -1);
    long double x[3] = {0, 1, 1}, w[3];
    assert_int_equal(fdt_fornberg(2, 0, x, 3, w, &e), -1);
    assert_contains(e.msg, "coincide");
}

/* ------------------------------------------------------------------ grid and problem */

static void test_grid_parse_valid(void **state)
{
    (void)state;
    int64_t d[3];
    fdt_err e;
    assert_int_equal(fdt_grid_parse("512^3", d, &e), 0);
    assert_true(d[0] == 512 && d[1] == 512 && d[2] == 512);
    assert_int_equal(fdt_grid_parse("301x203x157", d, &e), 0);
    assert_true(d[0] == 301 && d[1] == 203 && d[2] == 157);
    assert_int_equal(fdt_grid_parse("1X2X3", d, &e), 0);
    assert_true(d[0] == 1 && d[1] == 2 && d[2] == 3);
}

static void test_grid_parse_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"", "empty"},
        {"0^3", "at least 1"},
        {"-5^3", "positive"},
        {"+3^3", "positive"},
        {"512^2", "only the cube form"},
        {"512", "expected 'x'"},
        {"512x512", "expected 'x'"},
        {"512x512x", "expected a number"},
        {"512x512x512x2", "unexpected text"},
        {"abc", "expected a number"},
        {"5.5^3", "expected 'x'"},
        {"512x0x3", "at least 1"},
        {"99999999999^3", "too large"},
        {"18446744073709551616x1x1", "too large"},
        {" 512^3", "expected a number"},
        {"512^3 ", "only the cube form"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t d[3];
        fdt_err e = {{0}};
        if (fdt_grid_parse(bad[i].text, d, &e) != -1)
            fail_msg("'%s' was accepted", bad[i].text);
        assert_contains(e.msg, bad[i].msg);
    }
}

static void test_problem_check(void **state)
{
    (void)state;
    fdt_err e;
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    assert_int_equal(fdt_problem_check(&p, &e), 0);
    p.R = 0;
    assert_int_equal(fdt_problem_check(&p, &e), -1);
    assert_contains(e.msg, "R=0 is out of range");
    p.R = 9;
    assert_int_equal(fdt_problem_check(&p, &e), -1);
    p.R = 4;
    p.nx = p.ny = p.nz = 1000000000;
    assert_int_equal(fdt_problem_check(&p, &e), -1);
    assert_contains(e.msg, "would need more than");
    fdt_op op;
    assert_int_equal(fdt_op_parse("laplace", &op, &e), -1);
    assert_contains(e.msg, "unknown operator 'laplace'");
    char key[128];
    p = (fdt_problem){FDT_OP_WAVE, 2, FDT_F64, 3, 4, 5};
    fdt_problem_format(&p, key, sizeof key);
    assert_string_equal(key, "wave R=2 f64 3x4x5");
}

/* ------------------------------------------------------------------ config */

static void test_config_canonical(void **state)
{
    (void)state;
    fdt_config c;
    fdt_err e;
    char buf[256];
    assert_int_equal(fdt_config_parse("vec=4,nw=32,bx=64,align=64,order=yzx", &c, &e), 0);
    fdt_config_format(&c, buf, sizeof buf);
    /* sorted keys, bx=64 is the default and is omitted */
    assert_string_equal(buf, "align=64,nw=32,order=yzx,vec=4");
    fdt_config d;
    assert_int_equal(fdt_config_parse(buf, &d, &e), 0);
    assert_memory_equal(&c, &d, sizeof c);
    assert_int_equal(fdt_config_parse("", &c, &e), 0);
    fdt_config_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "default");
    assert_int_equal(fdt_config_parse("default", &d, &e), 0);
    assert_memory_equal(&c, &d, sizeof c);
}

static void test_config_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"bxx=4", "unknown config parameter 'bxx'"},
        {"bx", "expected key=value"},
        {"=4", "expected key=value"},
        {"bx=abc", "config bx='abc': expected an integer"},
        {"bx=0", "config bx=0: out of range"},
        {"bx=4,bx=8", "'bx' given twice"},
        {"order=abc", "config order='abc': expected one of xyz"},
        {"vec=8", "config vec=8: out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fdt_config c;
        fdt_err e = {{0}};
        if (fdt_config_parse(bad[i].text, &c, &e) != -1)
            fail_msg("'%s' was accepted", bad[i].text);
        assert_contains(e.msg, bad[i].msg);
    }
}

static void test_config_check_names_parameter(void **state)
{
    (void)state;
    static const struct {
        fdt_op op;
        fdt_prec prec;
        int nz;
        const char *text, *msg;
    } bad[] = {
        {FDT_OP_LAP, FDT_F64, 64, "vec=4,align=4", "config vec=4: f64"},
        {FDT_OP_LAP, FDT_F32, 64, "vec=4", "config vec=4: needs align"},
        {FDT_OP_LAP, FDT_F32, 64, "align=3", "config align=3: must be a power of two"},
        {FDT_OP_D2Z, FDT_F32, 64, "lds=1,nw=4", "config lds=1: d2z has no x or y"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=1", "config lds=1: needs nw >= 1"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=1,nw=4,bz=2", "config lds=1: needs bz=1"},
        {FDT_OP_WAVE, FDT_F32, 64, "lds=2", "config lds=2: needs nw >= 1"},
        {FDT_OP_D2Z, FDT_F32, 64, "lds=2,nw=4,bz=2", "config lds=2: needs bz=1"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=4,nw=4", "config lds=4: out of range (0..3)"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=2,nw=4,l2pf=100", "config l2pf=100: expected 0, 64"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=1,nw=4,l2pf=256", "config l2pf=256: only the ring"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=2,nw=4,mbar=1", "config mbar=1: only the stream (lds=3)"},
        {FDT_OP_D2Z, FDT_F32, 64, "lds=3,nw=4,mbar=1", "config mbar=1: d2z reads only its own"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=3,nw=4,mbar=2", "config mbar=2: out of range (0..1)"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=3,nw=4,bulk=1",
         "config bulk=1: the bulk copies complete on the stream's slot barriers: needs lds=3 "
         "and mbar=1, got lds=3 mbar=0"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=3,nw=4,mbar=1,vec=2,align=2,bulk=1",
         "config bulk=1: bulk copies start on 16 bytes: needs lines aligned to 16 bytes "
         "(align >= 4), got align=2"},
        {FDT_OP_LAP, FDT_F64, 64, "lds=3,nw=4,mbar=1,vec=1,align=1,bulk=1",
         "(align >= 2), got align=1"},
        {FDT_OP_LAP, FDT_F32, 64, "lds=3,nw=4,mbar=1,bx=33,vec=2,align=32,bulk=1",
         "config bulk=1: bulk copies move multiples of 16 bytes: a block row of bx*vec=66 "
         "values is 264 bytes"},
        {FDT_OP_LAP, FDT_F32, 64, "pf=2", "config pf=2: prefetching planes needs a window"},
        {FDT_OP_LAP, FDT_F32, 64, "nw=65", "config nw=65: window longer than nz=64"},
        {FDT_OP_LAP, FDT_F32, 64, "bx=64,by=4,lb=128", "config lb=128: below the block size"},
        {FDT_OP_LAP, FDT_F32, 64, "bx=512,by=4", "config bx*by*bz=2048"},
        {FDT_OP_LAP, FDT_F32, 64, "split=65", "config split=65: out of range"},
        {FDT_OP_LAP, FDT_F32, 64, "by=16,tile=4,split=2", "config split=2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fdt_problem p = {bad[i].op, 4, bad[i].prec, 64, 64, bad[i].nz};
        fdt_config c;
        fdt_err e = {{0}};
        if (fdt_config_parse(bad[i].text, &c, &e) == 0 && fdt_config_check(&p, &c, &e) != -1)
            fail_msg("'%s' was accepted", bad[i].text);
        assert_contains(e.msg, bad[i].msg);
    }
    /* bulk=1: R=5's x halo in vectors of 2 floats is 24 bytes, so tile rows cannot start on
     * 16 bytes; vectors of 4 make it 32; doubles in vectors of 2 are 48 */
    fdt_problem p = {FDT_OP_LAP, 5, FDT_F32, 64, 64, 64};
    fdt_config c;
    fdt_err e;
    fdt_config_parse("bx=32,by=8,lds=3,nw=32,mbar=1,vec=2,tile=2,align=32,bulk=1", &c, &e);
    assert_int_equal(fdt_config_check(&p, &c, &e), -1);
    assert_contains(e.msg, "config bulk=1: bulk copies start on 16 bytes: the x halo of R=5 in "
                           "whole vectors of vec=2 is 6 values, 24 bytes");
    fdt_config_parse("bx=32,by=8,lds=3,nw=32,mbar=1,vec=4,align=32,bulk=1", &c, &e);
    assert_int_equal(fdt_config_check(&p, &c, &e), 0);
    /* a tensor copy's box has at most 256 values a side: 2 x 8 + 64 x 4 = 272 */
    fdt_config_parse("bx=64,by=2,lds=3,nw=32,mbar=1,vec=4,align=32,bulk=1", &c, &e);
    assert_int_equal(fdt_config_check(&p, &c, &e), -1);
    assert_contains(e.msg, "config bulk=1: a tensor copy moves at most 256 values a side: the "
                           "tile is 272 x 12");
    /* dwave's launches (boxes, the hybrid step's parts) take no tensor map */
    fdt_config_parse("bx=32,by=8,lds=3,nw=32,mbar=1,vec=4,align=32,bulk=1", &c, &e);
    fdt_problem dw = {FDT_OP_DWAVE, 5, FDT_F32, 64, 64, 64};
    dw.absorb_w = 8, dw.absorb_s = 0.1;
    assert_int_equal(fdt_config_check(&dw, &c, &e), -1);
    assert_contains(e.msg, "config bulk=1: dwave's launches take no tensor map");
    p.prec = FDT_F64;
    fdt_config_parse("bx=32,by=8,lds=3,nw=32,mbar=1,vec=2,tile=2,align=32,bulk=1", &c, &e);
    assert_int_equal(fdt_config_check(&p, &c, &e), 0);
    /* ny=10 cannot be split in 3 parts of whole blocks of 8 rows */
    p = (fdt_problem){FDT_OP_LAP, 4, FDT_F32, 64, 10, 64};
    fdt_config_parse("by=8,split=3", &c, &e);
    assert_int_equal(fdt_config_check(&p, &c, &e), -1);
    assert_contains(e.msg, "leaves some subdomains empty");
    /* more blocks along z than grid dimension y allows */
    p = (fdt_problem){FDT_OP_LAP, 1, FDT_F32, 8, 8, 100000};
    fdt_config_parse("bx=8,by=8,order=xzy", &c, &e);
    assert_int_equal(fdt_config_check(&p, &c, &e), -1);
    assert_contains(e.msg, "exceed the limit 65535");
}

/* The C dialect's parameters: canonical keys, the dialect check both ways, its own rules, its
 * defaults and fallback, its one-launch geometry; the HIP check and display are unchanged. */
static void test_config_c_dialect(void **state)
{
    (void)state;
    const fdt_gen_target cpu = {FDT_DIALECT_C}, gpu = {FDT_DIALECT_HIP};
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 37, 29, 23};
    fdt_config c, d;
    fdt_err e = {{0}};
    char buf[256];
    assert_int_equal(fdt_config_parse("ty=64,blk=1,bind=spread,uk=2,sched=static", &c, &e), 0);
    fdt_config_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "bind=spread,blk=1,ty=64,uk=2"); /* defaults omitted, sorted */
    assert_int_equal(fdt_config_check_for(&cpu, &p, &c, &e), 0);
    /* the other dialect's parameters are refused by name, either way */
    assert_int_equal(fdt_config_check_for(&gpu, &p, &c, &e), -1);
    assert_contains(e.msg, "config: bind is a CPU parameter; the HIP dialect takes align, bulk, bx");
    assert_int_equal(fdt_config_check(&p, &c, &e), -1);
    assert_int_equal(fdt_config_parse("bx=32", &d, &e), 0);
    assert_int_equal(fdt_config_check_for(&cpu, &p, &d, &e), -1);
    assert_string_equal(e.msg, "config: bx is a GPU parameter; the C dialect takes align, bind, "
                               "blk, chunk, deploy, eta, fault, loop, nt, pfd, sched, simd, thr, "
                               "twopass, tx, ty, tz, uj, uk, xs");
    assert_int_equal(fdt_config_check_for(&gpu, &p, &d, &e), 0);
    /* the C dialect's own rules */
    static const struct {
        fdt_op op;
        const char *text, *msg;
    } bad[] = {
        {FDT_OP_LAP, "blk=0,ty=16", "config ty=16: only the blocked family (blk=1) takes it"},
        {FDT_OP_LAP, "nt=1", "config nt=1: only the blocked family"},
        {FDT_OP_D2X, "blk=1,twopass=1", "config twopass=1: only lap and wave"},
        {FDT_OP_LAP, "blk=1,uj=3", "config uj=3: expected 1, 2 or 4"},
        {FDT_OP_LAP, "simd=6", "config simd=6: expected 0"},
        {FDT_OP_LAP, "blk=1,xs=24", "config xs=24: expected 0 (whole rows) or a multiple of 16"},
        {FDT_OP_LAP, "align=3", "config align=3: must be a power of two"},
        {FDT_OP_LAP, "lds=1", "config: lds is a GPU parameter"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fdt_problem q = p;
        q.op = bad[i].op;
        if (fdt_config_parse(bad[i].text, &c, &e) == 0 && fdt_config_check_for(&cpu, &q, &c, &e) != -1)
            fail_msg("'%s' was accepted", bad[i].text);
        assert_contains(e.msg, bad[i].msg);
    }
    /* defaults and fallback: the plain loop nest, key "default" */
    fdt_config_default_for(&cpu, &c);
    fdt_config_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "default");
    assert_int_equal(c.blk, 0);
    fdt_config_fallback_for(&cpu, &p, &c);
    assert_int_equal(fdt_config_check_for(&cpu, &p, &c, &e), 0);
    /* display: the dialect's parameters only */
    fdt_config_display_for(&cpu, &c, buf, sizeof buf);
    assert_string_equal(buf, "align=1,bind=close,blk=0,chunk=0,loop=kj,nt=0,pfd=0,sched=static,"
                             "simd=0,thr=0,twopass=0,tx=0,ty=0,tz=0,uj=1,uk=1,xs=0");
    fdt_config_display(&c, buf, sizeof buf);
    assert_false(strstr(buf, "blk") != NULL);
    fdt_config_parse("blk=1,ty=8", &c, &e);
    fdt_config_display(&c, buf, sizeof buf);
    assert_contains(buf, "blk=1");
    assert_false(strstr(buf, "bx=") != NULL);
    /* the stream's bulk form shows only when set: displays of every other config unchanged */
    fdt_config_parse("bx=32", &d, &e);
    fdt_config_display(&d, buf, sizeof buf);
    assert_string_equal(buf, "align=1,bx=32,by=4,bz=1,l2pf=0,lb=0,lds=0,mbar=0,nt=0,nw=0,"
                             "order=xyz,pf=1,split=1,tile=1,vec=1");
    fdt_config_parse("lds=3,nw=32,mbar=1,bulk=1", &d, &e);
    fdt_config_display(&d, buf, sizeof buf);
    assert_contains(buf, "align=1,bulk=1,bx=64,");
    /* geometry: one launch over every interior row */
    fdt_geometry g;
    assert_int_equal(fdt_gen_geometry_for(&cpu, &p, &c, &g, &e), 0);
    assert_int_equal(g.nlaunch, 1);
    assert_int_equal(g.launch[0].jbeg, 4);
    assert_int_equal(g.launch[0].jend, 4 + 29);
    assert_int_equal(g.launch[0].grid[0] * g.launch[0].block[0], 1);
    assert_int_equal(g.shared_bytes, 0);
    assert_int_equal(fdt_gen_geometry_for(&gpu, &p, &c, &g, &e), -1);
    fdt_config_parse("bx=32", &c, &e);
    assert_int_equal(fdt_gen_geometry_for(&cpu, &p, &c, &g, &e), -1);
}

/* ------------------------------------------------------------------ layout and geometry */

static void test_layout_arithmetic(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    fdt_layout l;
    fdt_err e;
    assert_int_equal(fdt_layout_make(&p, 64, &l, &e), 0);
    assert_int_equal(l.mx, 520);
    assert_int_equal(l.line, 576);
    assert_int_equal(l.offset, 60); /* the seeds' align - R */
    assert_int_equal(l.slice, 576 * 520);
    assert_int_equal(l.elems, 60 + 576LL * 520 * 520 + 576);
    assert_int_equal(fdt_layout_index(&l, 4, 0, 0) % 64, 0);
    assert_int_equal(fdt_layout_make(&p, 1, &l, &e), 0);
    assert_int_equal(l.line, 520);
    assert_int_equal(l.offset, 0);
    /* every radius and alignment: interior x = R aligned, rows aligned, box inside */
    srand(7);
    for (int t = 0; t < 2000; t++) {
        p.R = 1 + rand() % 8;
        p.nx = 1 + rand() % 700;
        p.ny = 1 + rand() % 50;
        p.nz = 1 + rand() % 50;
        int align = 1 << (rand() % 9);
        assert_int_equal(fdt_layout_make(&p, align, &l, &e), 0);
        assert_int_equal(fdt_layout_index(&l, p.R, 0, 0) % align, 0);
        assert_int_equal(l.line % align, 0);
        assert_true(l.line >= l.mx && l.line < l.mx + align);
        assert_true(l.offset >= 0 && l.offset < align);
        /* last box element, the row padding after it, then the spare row */
        assert_int_equal(fdt_layout_index(&l, l.mx - 1, l.my - 1, l.mz - 1) + 1 +
                             (l.line - l.mx) + l.line,
                         l.elems);
    }
}

static void test_effective_bytes(void **state)
{
    (void)state;
    double N = 512.0 * 512 * 512, plane = 512.0 * 512;
    fdt_problem p = {FDT_OP_D2X, 4, FDT_F32, 512, 512, 512};
    assert_true(fdt_effective_bytes(&p) == (N + 8 * plane + N) * 4);
    p.op = FDT_OP_LAP;
    assert_true(fdt_effective_bytes(&p) == (N + 3 * 8 * plane + N) * 4);
    p.op = FDT_OP_WAVE;
    p.prec = FDT_F64;
    assert_true(fdt_effective_bytes(&p) == (3 * N + 3 * 8 * plane + N) * 8);
    p = (fdt_problem){FDT_OP_D2Y, 2, FDT_F32, 10, 20, 30};
    assert_true(fdt_effective_bytes(&p) == (6000.0 + 4 * 10 * 30 + 6000) * 4);
}

static void test_geometry_split_and_order(void **state)
{
    (void)state;
    fdt_err e;
    for (int split = 1; split <= 8; split++)
        for (int by = 1; by <= 8; by *= 2)
            for (int tile = 1; tile <= 3; tile++) {
                fdt_problem p = {FDT_OP_LAP, 3, FDT_F32, 100, 203, 57};
                char text[96];
                snprintf(text, sizeof text, "bx=32,by=%d,tile=%d,split=%d", by, tile, split);
                fdt_config c;
                fdt_geometry g;
                fdt_config_parse(text, &c, &e);
                if (fdt_gen_geometry(&p, &c, &g, &e)) {
                    assert_contains(e.msg, "leaves some subdomains empty");
                    continue;
                }
                assert_int_equal(g.nlaunch, split);
                int next = p.R;
                for (int s = 0; s < g.nlaunch; s++) {
                    assert_int_equal(g.launch[s].jbeg, next); /* contiguous */
                    assert_true(g.launch[s].jend > g.launch[s].jbeg);
                    if (s < g.nlaunch - 1) /* whole blocks except the last */
                        assert_int_equal((g.launch[s].jend - g.launch[s].jbeg) % (by * tile), 0);
                    assert_true((int64_t)g.launch[s].grid[1] * by * tile >=
                                g.launch[s].jend - g.launch[s].jbeg);
                    next = g.launch[s].jend;
                }
                assert_int_equal(next, p.R + p.ny); /* covers every row once */
            }
    /* order: blockIdx.x/.y/.z walk the axes named */
    fdt_problem p = {FDT_OP_D2Z, 4, FDT_F32, 256, 96, 80};
    fdt_config c;
    fdt_geometry g;
    fdt_config_parse("bx=32,by=4,vec=2,align=2,nw=16,order=yzx", &c, &e);
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.launch[0].grid[0], 96 / 4);    /* y */
    assert_int_equal(g.launch[0].grid[1], 80 / 16);   /* z */
    assert_int_equal(g.launch[0].grid[2], 256 / 64);  /* x */
    assert_int_equal(g.launch[0].block[0], 32);
    /* LDS: double-buffered tile with halo */
    p.op = FDT_OP_LAP;
    fdt_config_parse("bx=32,by=8,tile=2,vec=4,align=64,nw=16,lds=1", &c, &e);
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, 2 * (32 * 4 + 8) * (8 * 2 + 8) * 4);
    assert_int_equal(g.shared_dynamic, 0);
    /* ring: R + 1 + pf tiles, dynamic (passed at launch) */
    fdt_config_parse("bx=32,by=8,tile=2,vec=4,align=64,nw=16,lds=2,pf=3", &c, &e);
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, (4 + 1 + 3) * (32 * 4 + 8) * (8 * 2 + 8) * 4);
    assert_int_equal(g.shared_dynamic, 1);
    /* wave adds pf + 1 planes of p_prev and of c2 at the block's outputs */
    p.op = FDT_OP_WAVE;
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, ((4 + 1 + 3) * (32 * 4 + 8) * (8 * 2 + 8) +
                                      2 * (3 + 1) * (32 * 4) * (8 * 2)) * 4);
    /* d2z: no halo, the ring holds the block's own columns; f64 doubles the bytes */
    p.op = FDT_OP_D2Z;
    p.prec = FDT_F64;
    fdt_config_parse("bx=32,by=8,vec=2,align=64,nw=16,lds=2,pf=2", &c, &e);
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, (4 + 1 + 2) * (32 * 2) * 8 * 8);
    /* the same without a grid: exports size the ring of variants that run any grid */
    fdt_problem nogrid = {FDT_OP_D2Z, 4, FDT_F64, 0, 0, 0};
    uint32_t bytes;
    int dynamic;
    assert_int_equal(fdt_gen_shared(&nogrid, &c, &bytes, &dynamic, &e), 0);
    assert_int_equal(bytes, g.shared_bytes);
    assert_int_equal(dynamic, 1);
    /* stream: pf + 1 tiles whatever the radius (no plane waits for its z neighbours),
     * dynamic; wave adds pf + 1 planes of p_prev, c2 and the centre */
    p.op = FDT_OP_LAP;
    p.prec = FDT_F32;
    fdt_config_parse("bx=32,by=8,tile=2,vec=4,align=64,nw=16,lds=3,pf=3", &c, &e);
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, (3 + 1) * (32 * 4 + 8) * (8 * 2 + 8) * 4);
    assert_int_equal(g.shared_dynamic, 1);
    p.op = FDT_OP_WAVE;
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, ((3 + 1) * (32 * 4 + 8) * (8 * 2 + 8) +
                                      3 * (3 + 1) * (32 * 4) * (8 * 2)) * 4);
    /* mbar=1: two 8-byte barriers per slot after the tiles and queues, 8-byte aligned (an
     * f32 tile of odd size rounds up) */
    fdt_config_parse("bx=32,by=8,tile=2,vec=4,align=64,nw=16,lds=3,pf=3,mbar=1", &c, &e);
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, ((3 + 1) * (32 * 4 + 8) * (8 * 2 + 8) +
                                      3 * (3 + 1) * (32 * 4) * (8 * 2)) * 4 + 2 * (3 + 1) * 8);
    p.op = FDT_OP_LAP;
    fdt_config_parse("bx=33,by=3,vec=1,align=1,nw=16,lds=3,pf=2,mbar=1", &c, &e);
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    assert_int_equal(g.shared_bytes, (3 * (33 + 8) * (3 + 8) * 4 + 7) / 8 * 8 + 2 * 3 * 8);
    assert_int_equal(3 * (33 + 8) * (3 + 8) * 4 % 8, 4); /* the case that rounds */
    /* the barriers' offset, which the template takes as BARS_AT: the rounded tiles */
    assert_int_equal(fdt_gen_barriers_at(&p, &c), (3 * (33 + 8) * (3 + 8) * 4 + 7) / 8 * 8);
    assert_int_equal(fdt_gen_barriers_at(&p, &c) + 2 * 3 * 8, g.shared_bytes);
}

/* The portable rules (portable/fdtuned_*.h, what exported headers carry verbatim) give pinned
 * numbers, and the generator's wrappers give the same numbers and fdtune's messages. */
typedef struct geo_case {
    fdt_op op;
    int64_t nx, ny, nz;
    const char *config;
    int why;                  /* FDTUNED_FIT_* */
    int nlaunch;
    unsigned grid[3];         /* of every launch */
    int jbeg_last, jend_last; /* rows of the last launch */
    int64_t blocks[3];        /* per axis, filled even when the geometry does not fit */
    const char *message;      /* fdt_config_check's, when it does not fit */
} geo_case;

static void check_geo_case(const geo_case *k)
{
    fdt_problem p = {k->op, 4, FDT_F32, k->nx, k->ny, k->nz};
    fdt_config c;
    fdt_err e;
    if (fdt_config_parse(k->config, &c, &e))
        fail_msg("%s: %s", k->config, e.msg);
    fdtuned_shape s;
    fdt_gen_shape(&p, &c, &s);
    fdtuned_geometry pg;
    int why = -1, geo = fdtuned_geometry_make(&s, k->nx, k->ny, k->nz, &pg);
    assert_int_equal(fdtuned_fit(&s, k->nx, k->ny, k->nz), k->why);
    int64_t b[3];
    fdt_gen_blocks(&p, &c, b);
    for (int d = 0; d < 3; d++) {
        assert_int_equal(b[d], k->blocks[d]);
        assert_int_equal(pg.blocks[d], k->blocks[d]);
    }
    if (k->why != FDTUNED_FIT_OK) {
        assert_int_equal(fdt_config_fit(&p, &c, &why, &e), -1);
        assert_int_equal(why, k->why);
        assert_int_equal(fdt_config_check(&p, &c, &e), -1);
        assert_string_equal(e.msg, k->message);
        return;
    }
    assert_int_equal(fdt_config_fit(&p, &c, &why, &e), 0);
    assert_int_equal(why, FDTUNED_FIT_OK);
    assert_int_equal(geo, FDTUNED_FIT_OK);
    fdt_geometry g;
    if (fdt_gen_geometry(&p, &c, &g, &e))
        fail_msg("%s: %s", k->config, e.msg);
    assert_int_equal(g.nlaunch, k->nlaunch);
    assert_int_equal(pg.nlaunch, k->nlaunch);
    for (int l = 0; l < g.nlaunch; l++)
        for (int d = 0; d < 3; d++) {
            assert_int_equal(g.launch[l].grid[d], k->grid[d]);
            assert_int_equal(pg.launch[l].grid[d], k->grid[d]);
        }
    assert_int_equal(g.launch[g.nlaunch - 1].jbeg, k->jbeg_last);
    assert_int_equal(g.launch[g.nlaunch - 1].jend, k->jend_last);
    assert_memory_equal(g.launch, pg.launch, (size_t)g.nlaunch * sizeof g.launch[0]);
}

static void test_portable_geometry_fit(void **state)
{
    (void)state;
    static const geo_case cases[] = {
        /* 512^3, 128 x 8 outputs per block, 32-plane windows */
        {FDT_OP_LAP, 512, 512, 512, "bx=64,by=4,tile=2,vec=2,nw=32,align=2", FDTUNED_FIT_OK, 1,
         {4, 64, 16}, 4, 516, {4, 64, 16}, NULL},
        /* order yzx: blockIdx.x walks y, .y walks z, .z walks x */
        {FDT_OP_LAP, 512, 512, 512, "bx=64,by=4,tile=2,vec=2,nw=32,align=2,order=yzx",
         FDTUNED_FIT_OK, 1, {64, 16, 4}, 4, 516, {4, 64, 16}, NULL},
        {FDT_OP_D2Z, 300, 200, 100, "bx=32,by=2,order=zxy", FDTUNED_FIT_OK, 1, {100, 10, 100},
         4, 204, {10, 100, 100}, NULL},
        /* split 3 of ny=100 with 8 rows per block: subdomains of 40 rows, the last 20 */
        {FDT_OP_LAP, 256, 100, 64, "bx=64,by=4,tile=2,nw=16,split=3", FDTUNED_FIT_OK, 3,
         {4, 5, 4}, 84, 104, {4, 5, 4}, NULL},
        /* split 4 of ny=20: subdomains of 8 rows leave the fourth empty */
        {FDT_OP_LAP, 256, 20, 64, "bx=64,by=4,tile=2,split=4", FDTUNED_FIT_SPLIT_EMPTY, 0,
         {0, 0, 0}, 0, 0, {4, 1, 64},
         "config split=4: with by*tile=8 rows per block, ny=20 leaves some subdomains empty"},
        /* 70000 z blocks on grid dimension y (order xzy): above 65535 */
        {FDT_OP_D2X, 64, 8, 70000, "bx=64,by=8,order=xzy", FDTUNED_FIT_BLOCKS, 0, {0, 0, 0}, 0,
         0, {1, 1, 70000},
         "config order=xzy: 70000 blocks along z exceed the limit 65535 of grid dimension y"},
        /* the same blocks on grid dimension x are fine */
        {FDT_OP_D2X, 64, 8, 70000, "bx=64,by=8,order=zxy", FDTUNED_FIT_OK, 1, {70000, 1, 1},
         4, 12, {1, 1, 70000}, NULL},
        {FDT_OP_LAP, 64, 64, 20, "bx=64,by=4,nw=32", FDTUNED_FIT_WINDOW, 0, {0, 0, 0}, 0, 0,
         {1, 16, 1}, "config nw=32: window longer than nz=20"},
        {FDT_OP_LAP, 64, 5, 64, "bx=64,by=1,split=8", FDTUNED_FIT_SPLIT_ROWS, 0, {0, 0, 0}, 0,
         0, {1, 1, 64}, "config split=8: more subdomains than ny=5 rows"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_geo_case(&cases[i]);

    /* layout: line rounded up to align, x = R aligned, one spare row */
    fdtuned_layout pl;
    fdt_layout l;
    fdt_err e;
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 100, 50, 30};
    assert_int_equal(fdtuned_layout_make(4, 4, 16, 100, 50, 30, &pl), FDTUNED_LAYOUT_OK);
    assert_int_equal(pl.line, 112);
    assert_int_equal(pl.offset, 12);
    assert_int_equal(pl.slice, 112 * 58);
    assert_int_equal(pl.elems, 12 + 112 * 58 * 38 + 112);
    assert_int_equal(fdtuned_index(&pl, 4, 4, 4), 12 + 4 + 112 * 4 + 112 * 58 * 4);
    assert_int_equal(fdt_layout_make(&p, 16, &l, &e), 0);
    assert_int_equal(l.line, pl.line);
    assert_int_equal(l.offset, pl.offset);
    assert_int_equal(l.slice, pl.slice);
    assert_int_equal(l.elems, pl.elems);
    assert_int_equal(fdt_layout_index(&l, 4, 4, 4), fdtuned_index(&pl, 4, 4, 4));
    /* too large for one array: the reason and fdtune's message */
    assert_int_equal(fdtuned_layout_make(4, 8, 1, 1000000, 1000000, 1000, &pl),
                     FDTUNED_LAYOUT_TOO_LARGE);
    fdt_problem big = {FDT_OP_LAP, 4, FDT_F64, 1000000, 1000000, 1000};
    assert_int_equal(fdt_layout_make(&big, 1, &l, &e), -1);
    assert_non_null(strstr(e.msg, "one array would need more than 1024 GiB"));
    fdt_config c;
    int why;
    if (fdt_config_parse("bx=64,by=16,tile=64", &c, &e)) /* launchable: 977 y blocks */
        fail_msg("%s", e.msg);
    assert_int_equal(fdt_config_fit(&big, &c, &why, &e), -1);
    assert_int_equal(why, FDTUNED_FIT_GRID);
    assert_non_null(strstr(e.msg, "one array would need more than 1024 GiB"));
    assert_int_equal(fdtuned_layout_make(4, 4, 1, 0, 10, 10, &pl), FDTUNED_LAYOUT_ARGS);
    /* the fallback config fits any valid grid */
    fdt_problem tiny = {FDT_OP_WAVE, 8, FDT_F64, 1, 1, 1};
    fdt_config_fallback(&tiny, &c);
    assert_int_equal(fdt_config_check(&tiny, &c, &e), 0);
    char key[64];
    fdt_config_format(&c, key, sizeof key);
    assert_string_equal(key, "default");
}

/* Sizes come from databases, which may hold anything (an older file, a damaged one): the
 * portable geometry refuses an extent outside 1..FDTUNED_DIM_MAX before any arithmetic, and
 * the largest blocks and tiles an int holds overflow nothing (the asan preset's UBSan would
 * stop here; an ny of 2^63 - 1 overflowed fdtuned_geometry_make in an export). */
static void test_geometry_extremes(void **state)
{
    (void)state;
    fdtuned_shape s = {.R = 4, .esize = 4, .bx = 64, .by = 4, .bz = 1, .vec = 1, .tile = 1,
                       .nw = 0, .split = 64, .align = 32, .order = "xyz"};
    fdtuned_geometry g;
    const long long bad[] = {LLONG_MAX, FDTUNED_DIM_MAX + 1, 0, -1, LLONG_MIN};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(fdtuned_geometry_make(&s, 512, bad[i], 512, &g), FDTUNED_FIT_GRID);
        assert_int_equal(fdtuned_geometry_make(&s, bad[i], 512, 512, &g), FDTUNED_FIT_GRID);
        assert_int_equal(fdtuned_geometry_make(&s, 512, 512, bad[i], &g), FDTUNED_FIT_GRID);
        assert_int_not_equal(fdtuned_fit(&s, 512, bad[i], 512), FDTUNED_FIT_OK);
        assert_int_not_equal(fdtuned_fit(&s, bad[i], 512, 512), FDTUNED_FIT_OK);
    }
    /* the largest extent is a grid (too many y blocks for this shape, not a bad grid) */
    assert_int_equal(fdtuned_geometry_make(&s, 1, FDTUNED_DIM_MAX, 1, &g), FDTUNED_FIT_BLOCKS);
    /* every int of the shape at its largest, on the largest grid */
    fdtuned_shape big = {.R = 8, .esize = 8, .bx = INT_MAX, .by = INT_MAX, .bz = INT_MAX,
                         .vec = INT_MAX, .tile = INT_MAX, .nw = INT_MAX, .split = 64,
                         .align = INT_MAX, .order = "zyx"};
    long long M = FDTUNED_DIM_MAX;
    assert_int_equal(fdtuned_geometry_make(&big, M, M, M, &g), FDTUNED_FIT_SPLIT_EMPTY);
    big.split = 1;
    assert_int_equal(fdtuned_geometry_make(&big, M, M, M, &g), FDTUNED_FIT_OK);
    assert_int_equal(g.launch[0].jend, 8 + M);
    assert_int_not_equal(fdtuned_fit(&big, M, M, M), FDTUNED_FIT_OK);
    big.R = INT_MAX; /* jbeg = R + j0 must stay an int */
    assert_int_equal(fdtuned_geometry_make(&big, M, M, M, &g), FDTUNED_FIT_SHAPE);
    /* fdtune's own check says why */
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 512, LLONG_MAX, 512};
    fdt_config c;
    fdt_err e;
    int why;
    int64_t blocks[3];
    fdt_config_default(&c);
    assert_int_equal(fdt_config_fit(&p, &c, &why, &e), -1);
    assert_int_equal(why, FDTUNED_FIT_GRID);
    fdt_gen_blocks(&p, &c, blocks);
    assert_true(blocks[0] == 0 && blocks[1] == 0 && blocks[2] == 0);
}

static void test_kernel_args(void **state)
{
    (void)state;
    fdt_arg a[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(FDT_OP_D2Y, 1, a);
    assert_int_equal(n, 10);
    assert_int_equal(a[0], FDT_ARG_OUT);
    assert_int_equal(a[n - 1], FDT_ARG_SY);
    n = fdt_gen_kernel_args(FDT_OP_WAVE, 1, a);
    assert_int_equal(n, 18);
    assert_int_equal(a[2], FDT_ARG_PREV);
    assert_int_equal(a[n - 1], FDT_ARG_SRC);
    /* grid baked in: no dimensions among the arguments */
    n = fdt_gen_kernel_args(FDT_OP_LAP, 0, a);
    assert_int_equal(n, 7);
    assert_int_equal(a[2], FDT_ARG_JBEG);
    /* dwave: the eta array, the global grid, then the box (extents, origin, hole) */
    static const fdt_arg dw[] = {FDT_ARG_OUT, FDT_ARG_IN, FDT_ARG_PREV, FDT_ARG_C2, FDT_ARG_ETA,
                                 FDT_ARG_NX, FDT_ARG_NY, FDT_ARG_NZ, FDT_ARG_LINE, FDT_ARG_SLICE,
                                 FDT_ARG_BNX, FDT_ARG_BNY, FDT_ARG_BNZ, FDT_ARG_GX, FDT_ARG_GY,
                                 FDT_ARG_GZ, FDT_ARG_HX0, FDT_ARG_HX1, FDT_ARG_HY0, FDT_ARG_HY1,
                                 FDT_ARG_HZ0, FDT_ARG_HZ1, FDT_ARG_JBEG, FDT_ARG_JEND, FDT_ARG_SX,
                                 FDT_ARG_SY, FDT_ARG_SZ, FDT_ARG_SI, FDT_ARG_SJ, FDT_ARG_SK,
                                 FDT_ARG_SRC};
    n = fdt_gen_kernel_args(FDT_OP_DWAVE, 1, a);
    assert_int_equal(n, (int)(sizeof dw / sizeof dw[0]));
    for (int i = 0; i < n; i++)
        assert_int_equal(a[i], dw[i]);
    n = fdt_gen_kernel_args(FDT_OP_DWAVE, 0, a);
    assert_int_equal(n, (int)(sizeof dw / sizeof dw[0]) - 5);
    assert_int_equal(a[5], FDT_ARG_BNX);
}

/* bulk=1: the kernel's tensor map of its input, the last argument, and the ring's slots on
 * 128 bytes (lap R=5 f64 512^3, align=32: the interior starts 27 values into a 256-byte
 * aligned allocation, so `in` is 8 bytes past a 16-byte boundary) */
static void test_tensor_map(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_LAP, 5, FDT_F64, 512, 512, 512};
    fdt_config c;
    fdt_err e;
    assert_int_equal(fdt_config_parse("bx=32,by=8,tile=2,vec=2,lds=3,nw=64,mbar=1,align=32", &c,
                                      &e), 0);
    fdt_layout l;
    assert_int_equal(fdt_layout_make(&p, c.align, &l, &e), 0);
    fdtuned_tmap m;
    const uint64_t base = 0x7f0000000000ULL, in = base + (uint64_t)l.offset * 8;
    assert_int_equal(fdt_gen_tmap(&p, &c, &l, in, &m), 0); /* bulk=0: no map */
    assert_int_equal(fdt_gen_slot_rows(&p, &c), 26);       /* by tile + 2 R */
    c.bulk = 1;
    assert_int_equal(fdt_config_check(&p, &c, &e), 0);
    assert_int_equal(fdt_gen_tmap(&p, &c, &l, in, &m), 1);
    assert_int_equal(l.offset, 27);
    assert_int_equal(m.shift, 1);
    assert_true(m.base == in - 8 && m.base % 16 == 0);
    assert_true(m.dim[0] == 512 + 10 + 1 && m.dim[1] == 522 && m.dim[2] == 522);
    assert_true(m.stride[0] == (uint64_t)l.line * 8 && m.stride[1] == (uint64_t)l.slice * 8);
    assert_int_equal(m.box[0], 2 * 6 + 64); /* the x halo in whole vectors, the block's row */
    assert_int_equal(m.box[1], 26);
    /* 76 x 26 doubles are 15808 bytes; 28 rows make 17024, 133 x 128 */
    assert_int_equal(fdt_gen_slot_rows(&p, &c), 28);
    uint32_t bytes;
    int dyn;
    assert_int_equal(fdt_gen_shared(&p, &c, &bytes, &dyn, &e), 0);
    assert_int_equal(bytes, (c.pf + 1) * 17024 + 2 * (c.pf + 1) * 8);
}

/* ------------------------------------------------------------------ templates and source */

static void test_template_engine(void **state)
{
    (void)state;
    fdt_tpl_var v[] = {{"A", "alpha"}, {"T", "1"}, {"F", "0"}, {"E", ""}};
    fdt_sb b;
    fdt_err e;
    fdt_sb_init(&b);
    const char *t = "x {{A}} y\n#{if T}\nt1\n#{if F}\nno\n#{else}\nt2\n#{endif}\n#{endif}\n"
                    "  #{if !E}\nnotE\n  #{endif}\n#{if F}\nhidden {{UNKNOWN_BUT_INACTIVE}}\n"
                    "#{endif}\nend";
    assert_int_equal(fdt_tpl_render(t, "t", v, 4, &b, &e), 0);
    assert_string_equal(fdt_sb_str(&b), "x alpha y\nt1\nt2\nnotE\nend");
    fdt_sb_free(&b);
    /* #{include} renders an embedded template in place; in a dropped block it is skipped,
     * even when it names no template */
    fdt_sb_init(&b);
    const char *inc = "a\n#{include header.hip}\n#{if F}\n#{include nope.hip}\n#{endif}\nb\n";
    assert_int_equal(fdt_tpl_render(inc, "t", v, 4, &b, &e), 0);
    assert_string_equal(fdt_sb_str(&b), "a\n// The HIP runtime API: hiprtc's own header on AMD, fdtune's "
                                        "shim for NVRTC on NVIDIA.\n#include <hip/hip_runtime.h>\nb\n");
    fdt_sb_free(&b);
    /* an included template's errors name it and its line (prelude.hip needs its conditions) */
    fdt_sb_init(&b);
    assert_int_equal(fdt_tpl_render("#{include prelude.hip}\n", "t", v, 4, &b, &e), -1);
    assert_contains(e.msg, "template prelude.hip:1: unknown condition 'INT_KERNEL'");
    fdt_sb_free(&b);
    static const struct {
        const char *tpl, *msg;
    } bad[] = {
        {"a\n{{NOPE}}\n", "template t:2: unknown variable 'NOPE'"},
        {"#{if NOPE}\n#{endif}\n", "template t:1: unknown condition 'NOPE'"},
        {"#{if T}\n", "not closed"},
        {"#{endif}\n", "t:1: #{endif} without #{if}"},
        {"#{else}\n", "#{else} without #{if}"},
        {"#{loop T}\n", "unknown directive 'loop'"},
        {"{{A\n", "unterminated {{"},
        {"x\n#{include nope.hip}\n", "template t:2: unknown template 'nope.hip'"},
        {"#{include}\n", "template t:1: #{include} needs a template name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fdt_sb_init(&b);
        assert_int_equal(fdt_tpl_render(bad[i].tpl, "t", v, 4, &b, &e), -1);
        assert_contains(e.msg, bad[i].msg);
        fdt_sb_free(&b);
    }
}

static void test_source_rendering(void **state)
{
    (void)state;
    static const char *const cfgs[] = {
        "default", "bx=32,by=8,tile=4", "bx=16,by=16,vec=4,align=64,nt=1", "bx=64,by=4,nw=16",
        "bx=32,by=8,nw=32,lds=1,vec=4,align=64", "bx=24,by=5,bz=3,tile=3,vec=2,align=2,order=yzx,split=3",
        "bx=32,by=4,nw=16,lds=2,vec=4,align=64,pf=2,tile=2", "bx=24,by=5,nw=7,lds=2,pf=3,split=2",
        "bx=32,by=4,nw=16,lds=3,vec=4,align=64,pf=2,tile=2", "bx=24,by=5,nw=7,lds=3,pf=3,split=2"};
    for (int op = 0; op < FDT_OP_DWAVE; op++)
        for (int R = 1; R <= FDT_R_MAX; R++)
            for (size_t ci = 0; ci < sizeof cfgs / sizeof cfgs[0]; ci++) {
                fdt_problem p = {(fdt_op)op, R, FDT_F32, 128, 96, 80};
                fdt_config c;
                fdt_err e;
                assert_int_equal(fdt_config_parse(cfgs[ci], &c, &e), 0);
                if (fdt_config_check(&p, &c, &e))
                    continue; /* e.g. lds for d2z */
                fdt_sb b;
                fdt_sb_init(&b);
                if (fdt_gen_source(&hip, &p, &c, "k_test", NULL, &b, &e))
                    fail_msg("%s R=%d %s: %s", fdt_op_name(p.op), R, cfgs[ci], e.msg);
                const char *s = fdt_sb_str(&b);
                assert_contains(s, "extern \"C\" __global__ void ");
                assert_contains(s, "k_test(");
                assert_null(strstr(s, "{{"));
                assert_null(strstr(s, "#{"));
                fdt_sb_free(&b);
            }
    /* the literal coefficients are the precision's exact values */
    fdt_problem p = {FDT_OP_D2X, 1, FDT_F32, 8, 8, 8};
    fdt_config c;
    fdt_err e;
    fdt_config_default(&c);
    fdt_sb b;
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, "k", NULL, &b, &e), 0);
    assert_contains(fdt_sb_str(&b), "-2.0f * w[1]");
    assert_contains(fdt_sb_str(&b), "1.0f * (w[0] + w[2])");
    fdt_sb_free(&b);
    /* fault=coef differs only in the sign of one pair */
    c.fault = FDT_FAULT_COEF;
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, "k", NULL, &b, &e), 0);
    assert_contains(fdt_sb_str(&b), "1.0f * (w[0] - w[2])");
    fdt_sb_free(&b);
    /* the ring's copies carry the L2 prefetch hint only when asked */
    p.op = FDT_OP_LAP;
    p.R = 4;
    p.nx = p.ny = p.nz = 64;
    assert_int_equal(fdt_config_parse("lds=2,nw=16,vec=2,align=32", &c, &e), 0);
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, "k", NULL, &b, &e), 0);
    assert_contains(fdt_sb_str(&b), "cp.async.ca.shared.global [%0]");
    fdt_sb_free(&b);
    c.l2pf = 256;
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, "k", NULL, &b, &e), 0);
    assert_contains(fdt_sb_str(&b), "cp.async.ca.shared.global.L2::256B [%0]");
    fdt_sb_free(&b);
    p = (fdt_problem){FDT_OP_D2X, 1, FDT_F32, 8, 8, 8};
    fdt_config_default(&c);
    /* names must be identifiers */
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, "1abc", NULL, &b, &e), -1);
    assert_contains(e.msg, "not a C identifier");
    fdt_sb_free(&b);
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_util_source(&hip, FDT_F64, &b, &e), 0);
    assert_contains(fdt_sb_str(&b), "fdt_compare_f64");
    fdt_sb_free(&b);
    /* a dialect the generator does not emit is refused, naming it */
    const fdt_gen_target other = {(fdt_dialect)7};
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&other, &p, &c, "k", NULL, &b, &e), -1);
    assert_string_equal(e.msg, "generator: source dialect 7 is not one this generator emits");
    assert_int_equal(fdt_gen_util_source(&other, FDT_F64, &b, &e), -1);
    assert_string_equal(e.msg, "generator: source dialect 7 is not one this generator emits");
    assert_int_equal(b.len, 0);
    fdt_sb_free(&b);
    assert_true(strlen(fdt_gen_fingerprint()) == 16);
    assert_non_null(strstr(fdt_gen_nvrtc_hip_header(), "__stcs"));
}

/* The banner shows the whole config (every parameter, defaults included: what a person
 * reads), not the canonical key that leaves the defaults out. */
static void test_banner_config(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    fdt_config c;
    fdt_err e;
    assert_int_equal(fdt_config_parse("bx=64,by=4,nw=32,vec=4,align=32", &c, &e), 0);
    char key[256], shown[FDT_CONFIG_DISPLAY_MAX], line[FDT_CONFIG_DISPLAY_MAX + 16];
    fdt_config_format(&c, key, sizeof key);
    assert_string_equal(key, "align=32,nw=32,vec=4");
    fdt_config_display(&c, shown, sizeof shown);
    fdt_sb b;
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, "k", NULL, &b, &e), 0);
    snprintf(line, sizeof line, "\n// Config: %s\n", shown);
    assert_contains(fdt_sb_str(&b), line);
    assert_contains(line, "bx=64,by=4,bz=1,");
    assert_null(strstr(fdt_sb_str(&b), "// Config: align=32,nw=32,vec=4\n"));
    fdt_sb_free(&b);
}

/* ------------------------------------------------------------------ kernel families */

/* The family table: every lds value is generated by a family with its own embedded template,
 * with nw = 0 (lds=0 only) and with nw >= 1; configs of no family are refused by name. */
static void test_family_table(void **state)
{
    (void)state;
    static const struct {
        int lds, nw;
        const char *family, *tpl;
    } want[] = {
        {0, 0, "direct", "direct.hip"}, {0, 8, "window", "window.hip"},
        {1, 8, "tile", "tile.hip"},     {2, 8, "ring", "ring.hip"},
        {2, 1, "ring", "ring.hip"},     {3, 8, "stream", "stream.hip"},
        {3, 1, "stream", "stream.hip"}, {1, 0, NULL, NULL},
        {2, 0, NULL, NULL},             {3, 0, NULL, NULL},
        {4, 8, NULL, NULL},
    };
    fdt_err e;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fdt_config c;
        fdt_config_default(&c);
        c.lds = want[i].lds;
        c.nw = want[i].nw;
        const fdt_gen_family *f = fdt_gen_family_of(&c, &e);
        if (!want[i].family) {
            assert_null(f);
            char msg[96];
            snprintf(msg, sizeof msg, "no kernel family generates lds=%d with nw=%d",
                     want[i].lds, want[i].nw);
            assert_contains(e.msg, msg);
            continue;
        }
        assert_non_null(f);
        assert_string_equal(f->name, want[i].family);
        assert_string_equal(f->tpl, want[i].tpl);
    }
    /* every lds value the config accepts has a family; every family's template is embedded,
     * and no two families claim the same configs */
    const fdt_param_info *lds = fdt_config_param("lds");
    assert_non_null(lds);
    for (int v = lds->min; v <= lds->max; v++) {
        int found = 0;
        for (size_t i = 0; i < fdt_gen_family_count; i++)
            found += fdt_gen_families[i].lds == v;
        assert_true(found >= 1);
    }
    for (size_t i = 0; i < fdt_gen_family_count; i++) {
        const fdt_gen_family *f = &fdt_gen_families[i];
        assert_non_null(fdt_tpl_text(f->tpl));
        assert_non_null(f->vars);
        for (size_t j = 0; j < i; j++)
            assert_false(fdt_gen_families[j].lds == f->lds &&
                         fdt_gen_families[j].window == f->window);
    }
}

/* Renders op/R/precision with config text through the family fdt_gen_source picks, which
 * must be `family`; returns the source (caller frees). */
static char *family_source(fdt_op op, int R, fdt_prec prec, const char *cfg, const char *family)
{
    fdt_problem p = {op, R, prec, 96, 80, 72};
    fdt_config c;
    fdt_err e;
    assert_int_equal(fdt_config_parse(cfg, &c, &e), 0);
    const fdt_gen_family *f = fdt_gen_family_of(&c, &e);
    assert_non_null(f);
    assert_string_equal(f->name, family);
    fdt_sb b;
    fdt_sb_init(&b);
    if (fdt_gen_source(&hip, &p, &c, "k_fam", NULL, &b, &e))
        fail_msg("%s R=%d %s %s: %s", fdt_op_name(op), R, fdt_prec_name(prec), cfg, e.msg);
    return fdt_sb_take(&b);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

/* Each family's source carries its own mechanism and none of the others': the prelude once,
 * shared memory only in tile and ring, barriers where threads share, asynchronous copies
 * only in the ring families (ring, stream). */
static void test_family_sources(void **state)
{
    (void)state;
    char *s = family_source(FDT_OP_LAP, 4, FDT_F32, "bx=32,by=8,tile=2", "direct");
    assert_int_equal(count(s, "#include <hip/hip_runtime.h>"), 1);
    assert_int_equal(count(s, "namespace k_fam_k {"), 1);
    assert_contains(s, "load(zlo[r - 1][t], pk - r * slice + t * line);"); /* z from global */
    assert_null(strstr(s, "__shared__"));
    assert_null(strstr(s, "win["));
    assert_null(strstr(s, "put("));
    assert_null(strstr(s, "copy_async"));
    assert_null(strstr(s, "fault_"));
    free(s);
    s = family_source(FDT_OP_LAP, 4, FDT_F64, "bx=64,by=4,nw=16,pf=2", "window");
    assert_contains(s, "constexpr int NW = 16;");
    assert_contains(s, "load(nxt[PF - 1][t], lead + PF * slice + t * line);");
    assert_contains(s, "wz[r + R] = win[RZ + r][t][v];");
    assert_null(strstr(s, "__shared__"));
    assert_null(strstr(s, "__syncthreads"));
    assert_null(strstr(s, "zlo"));
    free(s);
    s = family_source(FDT_OP_WAVE, 2, FDT_F32, "bx=32,by=8,nw=32,lds=1,vec=4,align=64", "tile");
    assert_int_equal(count(s, "#include <hip/hip_runtime.h>"), 1);
    assert_contains(s, "alignas(16) __shared__ real tile[2][TY][TX];");
    assert_contains(s, "put(&tile[buf][ty0 + t][tx0], win[RZ][t]);");
    assert_int_equal(count(s, "__syncthreads();"), 1);
    assert_contains(s, "buf ^= 1;");
    assert_null(strstr(s, "copy_async"));
    free(s);
    s = family_source(FDT_OP_LAP, 8, FDT_F64, "bx=32,by=8,nw=32,lds=2,vec=2,align=64,pf=2",
                      "ring");
    assert_contains(s, "constexpr int S = RZ + 1 + PF;");
    assert_contains(s, "move(how, t, tl + (ty0 + t) * TX + tx0, pl + base + t * line);");
    assert_contains(s, "copy_async(s, g);"); /* each chunk moved by one copy */
    assert_contains(s, "move(how, TILE + q, tl + ylds[q], pl + yoff[q]);"); /* the halo is shared */
    assert_contains(s, "load(win[u][t], &ring[rs][ty0 + t][tx0]);");
    assert_contains(s, "async_wait<PF - 1>();");
    assert_contains(s, "extern __shared__");
    assert_int_equal(count(s, "__syncthreads();"), 1);
    free(s);
    /* d2z's ring is a queue of each thread's own planes: no halo copies, no barrier */
    s = family_source(FDT_OP_D2Z, 4, FDT_F32, "bx=16,by=4,nw=16,lds=2,vec=2,align=2", "ring");
    assert_contains(s, "move(how, t, tl + (ty0 + t) * TX + tx0, pl + base + t * line);");
    assert_contains(s, "copy_async(s, g);"); /* each chunk moved by one copy */
    assert_null(strstr(s, "ylds"));
    assert_null(strstr(s, "__syncthreads"));
    assert_null(strstr(s, "weight("));
    free(s);
    /* stream: the ring's fill into pf + 1 slots, each plane read once into a queue of sums
     * (no window of planes, no neighbour arrays), weights one offset at a time */
    s = family_source(FDT_OP_LAP, 8, FDT_F64, "bx=32,by=8,nw=32,lds=3,vec=2,align=64,pf=2",
                      "stream");
    assert_contains(s, "constexpr int S = PF + 1;");
    assert_contains(s, "constexpr int Q = 2 * RZ + 1;");
    assert_contains(s, "move(how, TILE + q, tl + ylds[q], pl + yoff[q]);"); /* the ring's fill */
    assert_contains(s, "load(ctr[t], tl + (ty0 + t) * TX + tx0);");
    assert_contains(s, "real acc[Q][TILE][VEC] = {};");
    assert_contains(s, "real& a = acc[(u - r + Q) % Q][t][v];");   /* z into the sums */
    assert_contains(s, "load(row, tl + (ty0 + s) * TX + tx0);");   /* y rows stream in */
    assert_contains(s, "a = r == -RZ ? weight(r) * cz : a + weight(r) * cz;");
    assert_contains(s, "const real wc = weight(0) * (sx + sy + sz);  //");
    assert_contains(s, "__device__ __forceinline__ real weight(int r)");
    assert_int_equal(count(s, "__syncthreads();"), 1);
    assert_null(strstr(s, "win["));
    assert_null(strstr(s, "cy["));
    assert_null(strstr(s, "&rcen[ws]"));
    assert_null(strstr(s, "slot_bar_init(full")); /* mbar=0: a block barrier per step */
    free(s);
    /* mbar=1: two barriers per slot where cp.async exists; a plane is waited for, then the
     * slot of plane m - 2 refilled once every thread is done with it; the block barrier per
     * step stays in the other branch, for AMD */
    s = family_source(FDT_OP_LAP, 8, FDT_F64, "bx=32,by=8,nw=32,lds=3,vec=2,align=64,pf=2,mbar=1",
                      "stream");
    assert_contains(s, "#if defined(FDT_ASYNC_COPY) && 1");
    assert_contains(s, "slot_bar_init(full + 8 * s, NT);");
    assert_contains(s, "slot_bar_wait(freed + 8 * s2, rph ^ (rs < 2));");
    assert_contains(s, "issue(m - 1 + PF, s2, s2);");
    assert_contains(s, "slot_bar_arrive_copies(full + 8 * s2);");
    assert_contains(s, "slot_bar_wait(full + 8 * rs, rph);");
    /* the barriers' offset from the geometry (fdt_gen_barriers_at: 3 slots of 80 x 24
     * doubles), which the template checks against its ring and queues */
    assert_contains(s, "constexpr int BARS_AT = 46080;");
    assert_contains(s, "static_assert(BARS_AT % 8 == 0 && BARS_AT >= (S * TY * TX + NQ)");
    assert_int_equal(count(s, "__syncthreads();"), 2); /* after the init; AMD's per step */
    free(s);
    /* wave queues its centre values too (the ring no longer holds the plane) */
    s = family_source(FDT_OP_WAVE, 2, FDT_F32, "bx=32,by=8,nw=32,lds=3,vec=4,align=64,pf=2",
                      "stream");
    assert_contains(s, "move(how, NOWN + 2 * TILE + t, &rcen[ws][row][col], in + at + t * line);");
    assert_contains(s, "res[v] = (real)2 * cc[v] - pv[v] + cv[v] * acc[(u + Q - RZ) % Q][t][v];");
    free(s);
    /* d2z: a queue of own planes as in the ring; d2x: no z sums, the centre scaled by sx */
    s = family_source(FDT_OP_D2Z, 4, FDT_F32, "bx=16,by=4,nw=16,lds=3,vec=2,align=2", "stream");
    assert_null(strstr(s, "ylds"));
    assert_null(strstr(s, "__syncthreads"));
    assert_contains(s, "const real wc = weight(0) * (sz);");
    free(s);
    s = family_source(FDT_OP_D2X, 4, FDT_F32, "bx=16,by=4,nw=16,lds=3,vec=2,align=2", "stream");
    assert_null(strstr(s, "cz ="));
    assert_contains(s, "const real wc = weight(0) * (sx);");
    free(s);
}

/* weight(r) gives the weights d2 applies, by signed offset, in the problem's precision; the
 * fault=coef of d2 (the weight of offset +1 negated) reaches it too. */
static void test_stream_weights(void **state)
{
    (void)state;
    char *s = family_source(FDT_OP_LAP, 1, FDT_F32, "bx=32,by=4,nw=8,lds=3", "stream");
    assert_contains(s, "return r == -1 ? 1.0f\n         : r == 1 ? 1.0f\n         : -2.0f;");
    free(s);
    s = family_source(FDT_OP_LAP, 2, FDT_F64, "bx=32,by=4,nw=8,lds=3,fault=coef", "stream");
    assert_contains(s, "r == -2 ? -0.083333333333333329\n         : r == 2 ? "
                       "-0.083333333333333329\n         : r == -1 ? 1.3333333333333333\n"
                       "         : r == 1 ? -1.3333333333333333\n         : -2.5;");
    free(s);
}

/* guard=none: the stream's stores without the row's test, accepted only where whole blocks
 * cover the grid (rows of bx*vec, every y subdomain of by*tile rows), refused elsewhere by
 * name; its source stores full vectors unguarded, while a kernel of runtime dims (an
 * export's, for any grid) keeps the guard, and guard=rows is the default (not in the key). */
static void test_stream_guard(void **state)
{
    (void)state;
    static const struct {
        fdt_op op;
        long long nx, ny;
        const char *text, *msg;
    } cases[] = {
        {FDT_OP_LAP, 64, 64, "bx=32,by=8,vec=2,tile=2,align=2,lds=3,nw=32,guard=none", NULL},
        {FDT_OP_WAVE, 64, 64, "bx=32,by=8,vec=2,tile=2,align=2,lds=3,nw=32,guard=none", NULL},
        {FDT_OP_LAP, 64, 64, "bx=32,by=8,vec=2,tile=2,align=2,lds=3,nw=32,split=4,guard=none",
         NULL},
        {FDT_OP_LAP, 64, 64, "bx=32,by=8,vec=2,tile=2,align=2,lds=2,nw=32,pf=2,guard=none",
         "config guard=none: only the stream (lds=3) stores without guards, got lds=2"},
        {FDT_OP_LAP, 60, 64, "bx=32,by=8,vec=2,tile=2,align=2,lds=3,nw=32,guard=none",
         "config guard=none: rows of nx=60 values are not whole blocks of bx*vec=64"},
        {FDT_OP_LAP, 64, 40, "bx=32,by=8,vec=2,tile=2,align=2,lds=3,nw=32,guard=none",
         "config guard=none: y subdomain 1 of 1 has 40 rows, not whole blocks of by*tile=16"},
        {FDT_OP_LAP, 64, 40, "bx=32,by=8,vec=2,tile=2,align=2,lds=3,nw=32,split=2,guard=none",
         "config guard=none: y subdomain 2 of 2 has 8 rows, not whole blocks of by*tile=16"},
        {FDT_OP_DWAVE, 64, 64, "bx=32,by=8,vec=2,tile=2,align=2,lds=3,nw=32,guard=none",
         "config guard=none: dwave's launches are boxes given at run time: needs guard=rows"},
        {FDT_OP_LAP, 64, 64, "lds=3,nw=32,guard=some", "guard"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fdt_problem p = {cases[i].op, 4, FDT_F32, cases[i].nx, cases[i].ny, 64};
        if (p.op == FDT_OP_DWAVE)
            p.absorb_w = 8, p.absorb_s = 0.1;
        fdt_config c;
        fdt_err e = {{0}};
        int rc = fdt_config_parse(cases[i].text, &c, &e);
        if (rc == 0)
            rc = fdt_config_check(&p, &c, &e);
        if (!cases[i].msg && rc)
            fail_msg("'%s' refused: %s", cases[i].text, e.msg);
        if (cases[i].msg && !rc)
            fail_msg("'%s' was accepted", cases[i].text);
        if (cases[i].msg)
            assert_contains(e.msg, cases[i].msg);
    }
    fdt_config c, d;
    fdt_err e;
    char buf[256];
    assert_int_equal(fdt_config_parse("lds=3,nw=32,guard=rows", &c, &e), 0);
    fdt_config_format(&c, buf, sizeof buf);
    assert_string_equal(buf, "lds=3,nw=32");
    fdt_config_display(&c, buf, sizeof buf);
    assert_null(strstr(buf, "guard"));
    assert_int_equal(fdt_config_parse("lds=3,nw=32,guard=none", &d, &e), 0);
    fdt_config_format(&d, buf, sizeof buf);
    assert_string_equal(buf, "guard=none,lds=3,nw=32");
    fdt_config_display(&d, buf, sizeof buf);
    assert_contains(buf, "guard=none");
    /* the sources: rows guarded by default and with runtime dims, full vectors without */
    const char *cfg = "bx=48,by=8,vec=2,tile=2,align=2,lds=3,nw=32"; /* 96 x 80: whole */
    char *rows = family_source(FDT_OP_LAP, 4, FDT_F32, cfg, "stream");
    char with[128];
    snprintf(with, sizeof with, "%s,guard=none", cfg);
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 96, 80, 72}; /* family_source's grid */
    assert_int_equal(fdt_config_parse(with, &c, &e), 0);
    assert_int_equal(fdt_config_check(&p, &c, &e), 0);
    char *none = family_source(FDT_OP_LAP, 4, FDT_F32, with, "stream");
    assert_int_equal(count(rows, "if (t < nvy && nvx > 0)"), 1);
    assert_int_equal(count(rows, "store(out + (pk - in) + t * line, res, nvx);"), 1);
    assert_int_equal(count(none, "if (t < nvy && nvx > 0)"), 0);
    assert_int_equal(count(none, "store(out + (pk - in) + t * line, res, VEC);"), 1);
    fdt_gen_opts o = {1};
    fdt_sb b;
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, "k_fam", &o, &b, &e), 0);
    char *rt = fdt_sb_take(&b);
    assert_int_equal(count(rt, "if (t < nvy && nvx > 0)"), 1);
    free(rows);
    free(none);
    free(rt);
}

/* The test-only faults reach every family: a config of each family with each of fault=plane,
 * halo, oob and hang carries that injection alone (from the prelude) and calls it. */
static void test_family_faults(void **state)
{
    (void)state;
    static const struct {
        const char *cfg, *family;
    } fams[] = {{"bx=64,by=4", "direct"},
                {"bx=64,by=4,nw=8", "window"},
                {"bx=32,by=4,nw=8,lds=1", "tile"},
                {"bx=32,by=4,nw=8,lds=2", "ring"},
                {"bx=32,by=4,nw=8,lds=3", "stream"}};
    static const struct {
        const char *key, *code;
    } faults[] = {{"fault=plane", "return k == R + nz / 2;"},
                  {"fault=halo", "out[at - 1] = 0;"},
                  {"fault=oob", "out[-(1LL << 40)] = 1;"},
                  {"fault=hang", "while (*(volatile const real*)in != (real)2)"}};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++)
        for (size_t j = 0; j < sizeof faults / sizeof faults[0]; j++) {
            char cfg[96];
            snprintf(cfg, sizeof cfg, "%s,%s", fams[i].cfg, faults[j].key);
            char *s = family_source(FDT_OP_LAP, 2, FDT_F32, cfg, fams[i].family);
            assert_contains(s, faults[j].code);
            assert_contains(s, "if (fault_skip(k, nz))");
            assert_contains(s, "fault_after(out, in, pk - in, i0 == R && j0 == jbeg, k);");
            for (size_t o = 0; o < sizeof faults / sizeof faults[0]; o++)
                if (o != j)
                    assert_null(strstr(s, faults[o].code));
            free(s);
        }
}

/* Every family renders every operator it serves, R 1..8, f32 and f64, with nothing of the
 * template language left; a family asked for a config it does not generate, or one whose
 * template is not embedded, fails with an error that names it. */
static void test_family_render_all(void **state)
{
    (void)state;
    static const char *const cfgs[] = {
        "bx=32,by=4,tile=2,vec=2,align=2", "bx=16,by=4,bz=2,nw=9,pf=3,vec=2,align=2",
        "bx=32,by=4,nw=8,lds=1,tile=2,vec=2,align=2", "bx=32,by=4,nw=7,lds=2,pf=2,vec=2,align=2",
        "bx=32,by=4,nw=7,lds=3,pf=2,tile=2,vec=2,align=2"};
    enum { NCFG = sizeof cfgs / sizeof cfgs[0] };
    int rendered[NCFG] = {0};
    assert_int_equal(NCFG, fdt_gen_family_count);
    for (size_t ci = 0; ci < NCFG; ci++)
        for (int op = 0; op < FDT_OP_COUNT; op++)
            for (int R = 1; R <= FDT_R_MAX; R++)
                for (int prec = 0; prec < 2; prec++) {
                    fdt_problem p = {(fdt_op)op, R, prec ? FDT_F64 : FDT_F32, 64, 40, 33};
                    if (op == FDT_OP_DWAVE)
                        p.absorb_w = 4, p.absorb_s = 0.1;
                    fdt_config c;
                    fdt_err e;
                    assert_int_equal(fdt_config_parse(cfgs[ci], &c, &e), 0);
                    if (fdt_config_check(&p, &c, &e)) {
                        assert_true(ci == 2 && op == FDT_OP_D2Z); /* the tile needs x or y */
                        continue;
                    }
                    const fdt_gen_family *f = fdt_gen_family_of(&c, &e);
                    assert_ptr_equal(f, &fdt_gen_families[ci]);
                    fdt_sb b;
                    fdt_sb_init(&b);
                    if (fdt_gen_family_source(f, &p, &c, NULL, NULL, &b, &e))
                        fail_msg("%s: %s", cfgs[ci], e.msg);
                    assert_null(strstr(fdt_sb_str(&b), "{{"));
                    assert_null(strstr(fdt_sb_str(&b), "#{"));
                    fdt_sb_free(&b);
                    rendered[ci]++;
                }
    for (size_t ci = 0; ci < NCFG; ci++)
        assert_true(rendered[ci] >= 5 * FDT_R_MAX * 2);
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 64, 64, 64};
    fdt_config c;
    fdt_err e;
    fdt_config_default(&c);
    fdt_sb b;
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_family_source(&fdt_gen_families[2], &p, &c, NULL, NULL, &b, &e), -1);
    assert_contains(e.msg, "kernel family tile (lds=1, nw >= 1) does not generate lds=0 with nw=0");
    fdt_gen_family bogus = fdt_gen_families[0];
    bogus.name = "bogus";
    bogus.tpl = "nope.hip";
    assert_int_equal(fdt_gen_family_source(&bogus, &p, &c, NULL, NULL, &b, &e), -1);
    assert_contains(e.msg, "template nope.hip of kernel family bogus is not embedded");
    fdt_sb_free(&b);
}

/* How often needle occurs in hay. */
static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

/* One config of each HIP family (direct, window, tile, ring, stream) for dwave's tests. */
static const char *const dwave_cfgs[] = {
    "bx=32,by=4,tile=2", "bx=16,by=4,bz=2,nw=8,pf=3,vec=2,align=2",
    "bx=32,by=4,nw=8,lds=1,tile=2,vec=2,align=2", "bx=32,by=4,nw=8,lds=2,pf=2,vec=2,align=2",
    "bx=32,by=4,nw=8,lds=3,pf=2,tile=2,vec=2,align=2"};
enum { NDWAVE_CFGS = sizeof dwave_cfgs / sizeof dwave_cfgs[0] };

/* dwave's rows with layer=select in every HIP family: the damping in every row of the damped
 * kernel, no row test (no lay_x), the same update as branch's; the interior kernel is the same
 * text as branch's; the config shows layer only when set, and only dwave takes it. */
static void test_dwave_layer_select(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_DWAVE, 4, FDT_F32, 128, 96, 64, 16, 0.1};
    for (size_t ci = 0; ci < NDWAVE_CFGS; ci++) {
        char text[160];
        fdt_config c, cb;
        fdt_err e;
        snprintf(text, sizeof text, "%s,layer=select", dwave_cfgs[ci]);
        assert_int_equal(fdt_config_parse(text, &c, &e), 0);
        assert_int_equal(fdt_config_parse(dwave_cfgs[ci], &cb, &e), 0);
        assert_int_equal(c.layer, FDT_LAYER_SELECT);
        assert_int_equal(cb.layer, FDT_LAYER_BRANCH);
        fdt_sb b, bb;
        fdt_sb_init(&b);
        fdt_sb_init(&bb);
        if (fdt_gen_source(&hip, &p, &c, "kd", NULL, &b, &e) ||
            fdt_gen_source(&hip, &p, &cb, "kd", NULL, &bb, &e))
            fail_msg("%s: %s", text, e.msg);
        const char *s = fdt_sb_str(&b), *sb = fdt_sb_str(&bb);
        assert_int_equal(occurrences(s, "{  // layer=select: every row"), 1);
        assert_null(strstr(s, "lay_x"));
        assert_int_equal(occurrences(sb, "if (lay_x | "), 1);
        assert_int_equal(occurrences(s, "const real gyz = damping1(j0 + t + gy - R, gny) + "
                                        "damping1(k + gz - R, gnz);"), 1);
        assert_int_equal(occurrences(s, "res[v] = g > (real)0 ? d : res[v];"), 1);
        assert_true(strstr(s, "{  // layer=select: every row") < strstr(s, " kd_int("));
        /* the interior kernel: the same text in both forms */
        assert_string_equal(strstr(s, "extern \"C\" __global__ void kd_int("),
                            strstr(sb, "extern \"C\" __global__ void kd_int("));
        char key[256];
        fdt_config_format(&c, key, sizeof key);
        assert_contains(key, "layer=select");
        fdt_config_format(&cb, key, sizeof key);
        assert_null(strstr(key, "layer="));
        fdt_sb_free(&b);
        fdt_sb_free(&bb);
    }
    /* only dwave has an absorbing layer */
    fdt_problem lap = {FDT_OP_LAP, 4, FDT_F32, 64, 64, 64, 0, 0};
    fdt_config c;
    fdt_err e;
    assert_int_equal(fdt_config_parse("layer=select", &c, &e), 0);
    assert_int_equal(fdt_config_check(&lap, &c, &e), -1);
    assert_contains(e.msg, "config layer=select: only dwave has an absorbing layer");
}

/* dwave in every HIP family x deploy x eta, grid baked in and as arguments: one source with
 * the damped kernel NAME and the interior kernel NAME_int (one runtime include, one banner),
 * the box's parameters, nx, ny, nz the box's and the global extents apart, the hole's block
 * skip in the damped kernel only (aligned to the block's outputs), the damping from the
 * distance or the eta array, the source at global coordinates; NVRTC and hiprtc compile these
 * sources in test_runtime's matrix. */
static void test_dwave_sources(void **state)
{
    (void)state;
    static const char *const deploys[] = {"complete", "inout", "sides"};
    static const char *const etas[] = {"dist", "array"};
    static const char *const skips[] = {"bi * 32 >= hx0", "bi * 32 >= hx0", "bi * 64 >= hx0",
                                        "bi * 64 >= hx0", "bi * 64 >= hx0"};
    static const char *const zskips[] = {"bk * 1 >= hz0", "bk * 16 >= hz0", "bk * 8 >= hz0",
                                         "bk * 8 >= hz0", "bk * 8 >= hz0"};
    int n = 0;
    for (size_t ci = 0; ci < NDWAVE_CFGS; ci++)
        for (int dep = 0; dep < 3; dep++)
            for (int eta = 0; eta < 2; eta++)
                for (int rt = 0; rt < 2; rt++) {
                    fdt_problem p = {FDT_OP_DWAVE, 4, FDT_F32, 128, 96, 64, 16, 0.1};
                    char text[160];
                    snprintf(text, sizeof text, "%s,deploy=%s,eta=%s", dwave_cfgs[ci], deploys[dep],
                             etas[eta]);
                    fdt_config c;
                    fdt_err e;
                    assert_int_equal(fdt_config_parse(text, &c, &e), 0);
                    fdt_gen_opts o = {rt};
                    fdt_sb b;
                    fdt_sb_init(&b);
                    if (fdt_gen_source(&hip, &p, &c, "kd", &o, &b, &e))
                        fail_msg("%s: %s", text, e.msg);
                    const char *s = fdt_sb_str(&b);
                    assert_int_equal(occurrences(s, "extern \"C\" __global__ void "), 2);
                    assert_int_equal(occurrences(s, " kd("), 1);
                    assert_int_equal(occurrences(s, " kd_int("), 1);
                    assert_int_equal(occurrences(s, "#include <hip/hip_runtime.h>"), 1);
                    assert_int_equal(occurrences(s, "// Generated by fdtune"), 1);
                    assert_int_equal(occurrences(s, "const float* __restrict__ eta,\n    "
                                                    "int bnx, int bny, int bnz, int gx, int gy, "
                                                    "int gz, int hx0, int hx1, int hy0, int hy1, "
                                                    "int hz0, int hz1,\n    int jbeg, int jend"),
                                     rt ? 0 : 2);
                    assert_int_equal(occurrences(s, "const float* __restrict__ eta,\n    int gnx, "
                                                    "int gny, int gnz, int line, long long slice,"
                                                    "\n    int bnx, int bny"), rt ? 2 : 0);
                    assert_int_equal(occurrences(s, "constexpr int gnx = 128, gny = 96, gnz = 64"),
                                     rt ? 0 : 2);
                    assert_int_equal(occurrences(s, "const int nx = bnx, ny = bny, nz = bnz;"), 2);
                    /* the hole's skip, in the damped kernel, on the family's block outputs */
                    const char *inner = strstr(s, " kd_int(");
                    assert_int_equal(occurrences(s, skips[ci]), 1);
                    assert_int_equal(occurrences(s, zskips[ci]), 1);
                    assert_true(strstr(s, skips[ci]) < inner);
                    assert_contains(s, ci == 1 || ci == 3 ? "jbeg - R + bj * 4 >= hy0"
                                                          : "jbeg - R + bj * 8 >= hy0");
                    /* the damping, once, in the damped kernel: y and z once per row */
                    const char *gyz = eta ? "const real gyz = eta[gnx + j0 + t + gy - R] + "
                                            "eta[gnx + gny + k + gz - R];"
                                          : "const real gyz = damping1(j0 + t + gy - R, gny) + "
                                            "damping1(k + gz - R, gnz);";
                    const char *g = eta ? "gxv[v] = eta[min(i0 + v + gx - R, gnx - 1)];"
                                        : "gxv[v] = damping1(i0 + v + gx - R, gnx);";
                    assert_int_equal(occurrences(s, gyz), 1);
                    assert_int_equal(occurrences(s, g), 1);
                    assert_true(strstr(s, g) < inner);
                    assert_int_equal(occurrences(s, "const real g = gxv[v] + gyz;"), 1);
                    assert_true(strstr(s, "const int lay_x = in_layer_run(i0 + gx - R, VEC, "
                                          "gnx);") < strstr(s, "if (lay_x | "));
                    assert_int_equal(occurrences(s, "const real d = layer_div(res[v] + g * pv[v], "
                                                    "(real)1 + g);"), 1);
                    assert_int_equal(occurrences(s, "res[v] = g > (real)0 ? d : res[v];"), 1);
                    /* only a row that touches the layer computes its damping */
                    assert_int_equal(occurrences(s, "if (lay_x | "
                                                    "in_layer1(j0 + t + gy - R, gny) | "
                                                    "in_layer1(k + gz - R, gnz)) {"), 1);
                    assert_true(strstr(s, "if (lay_x | ") < strstr(s, gyz));
                    assert_int_equal(occurrences(s, "__device__ __forceinline__ real damping1("),
                                     1);
                    assert_int_equal(occurrences(s, "constexpr real ABS_S = 0.100000001f, "
                                                    "ABS_INV_W = 0.0625f;"), 1);
                    /* both kernels: the wave expression and the source at global coordinates,
                     * tested by row, then by point */
                    assert_int_equal(occurrences(s, "if (k + gz == sk && j0 + t + gy == sj)"), 2);
                    assert_int_equal(occurrences(s, "if (i0 + v + gx == si)"), 2);
                    assert_int_equal(occurrences(s, "res[v] = (real)2 * "), 2);
                    assert_null(strstr(s, "{{"));
                    assert_null(strstr(s, "#{"));
                    fdt_sb_free(&b);
                    n++;
                }
    assert_int_equal(n, 5 * 3 * 2 * 2);
    /* the interior kernel's name */
    char buf[96];
    fdt_gen_dwave_interior_name("fdt_dwave_r4_f32_1234abcd", buf, sizeof buf);
    assert_string_equal(buf, "fdt_dwave_r4_f32_1234abcd_int");
    /* the undamped operators have neither the box nor the second kernel */
    fdt_problem w = {FDT_OP_WAVE, 4, FDT_F32, 128, 96, 64};
    fdt_config c;
    fdt_err e;
    fdt_config_default(&c);
    fdt_sb b;
    fdt_sb_init(&b);
    assert_int_equal(fdt_gen_source(&hip, &w, &c, "kw", NULL, &b, &e), 0);
    assert_int_equal(occurrences(fdt_sb_str(&b), "extern \"C\" __global__ void "), 1);
    assert_null(strstr(fdt_sb_str(&b), "bnx"));
    assert_null(strstr(fdt_sb_str(&b), "gnx"));
    fdt_sb_free(&b);
}

/* ------------------------------------------------------------------ reference */

/* f = i^2 + 2 j^2 + 3 k^3 (k cubed: still exact for R >= 1, the stencil is symmetric). */
static double poly(void *ctx, int field, int64_t i, int64_t j, int64_t k)
{
    (void)ctx;
    double x = (double)i, y = (double)j, z = (double)k;
    switch (field) {
    case FDT_FIELD_IN: return x * x + 2 * y * y + 3 * z * z * z;
    case FDT_FIELD_PREV: return 0.5 * x;
    default: return 0.25;
    }
}

static void test_reference_exact_on_polynomials(void **state)
{
    (void)state;
    for (int R = 1; R <= FDT_R_MAX; R++) {
        long double coef[FDT_R_MAX + 1];
        fdt_err e;
        fdt_fd_coeffs(R, coef, &e);
        fdt_problem p = {FDT_OP_D2X, R, FDT_F64, 20, 20, 20};
        fdt_params q;
        fdt_params_default(&p, &q);
        int64_t i = R + 3, j = R + 5, k = R + 7;
        double d2[3] = {2.0, 4.0, 18.0 * k}; /* second derivatives along x, y, z */
        double scale[3] = {q.sx, q.sy, q.sz};
        for (int op = FDT_OP_D2X; op <= FDT_OP_D2Z; op++) {
            p.op = (fdt_op)op;
            double got = fdt_reference_point(&p, &q, coef, poly, NULL, i, j, k);
            assert_float_equal(got, scale[op] * d2[op], 1e-8 * (1 + fabs(d2[op])));
        }
        double lap = q.sx * 2 + q.sy * 4 + q.sz * 18.0 * k;
        p.op = FDT_OP_LAP;
        assert_float_equal(fdt_reference_point(&p, &q, coef, poly, NULL, i, j, k), lap, 1e-7);
        p.op = FDT_OP_WAVE;
        double u = poly(NULL, 0, i, j, k);
        double wave = 2 * u - 0.5 * (double)i + 0.25 * lap;
        assert_float_equal(fdt_reference_point(&p, &q, coef, poly, NULL, i, j, k), wave,
                           1e-9 * fabs(wave));
        /* the point source adds at its point only */
        assert_float_equal(fdt_reference_point(&p, &q, coef, poly, NULL, q.si, q.sj, q.sk) -
                               (2 * poly(NULL, 0, q.si, q.sj, q.sk) - 0.5 * (double)q.si +
                                0.25 * (q.sx * 2 + q.sy * 4 + q.sz * 18.0 * q.sk)),
                           q.src, 1e-7);
    }
}

/* ------------------------------------------------------------------ dwave: layer, deployments */

/* fdtuned_deploy_boxes partitions the grid exactly: every point written by exactly one launch
 * (a damped box's hole is left to another), the undamped boxes inside [W, n-W) on every axis
 * (where the damping is 0), inout's hole aligned to ext from the box's origin, for many grids,
 * widths and block extents, all three deployments. */
static void test_deploy_partition(void **state)
{
    (void)state;
    static const long long grids[][3] = {{3, 3, 3}, {5, 7, 9}, {16, 16, 16}, {17, 23, 31},
                                         {40, 9, 13}, {64, 33, 20}};
    static const long long exts[][3] = {{1, 1, 1}, {4, 2, 1}, {8, 4, 2}, {64, 4, 16},
                                        {3, 5, 7}, {32, 1, 8}};
    int cases = 0, holes = 0;
    for (size_t gi = 0; gi < sizeof grids / sizeof grids[0]; gi++) {
        const long long *n = grids[gi];
        long long nmin = n[0] < n[1] ? n[0] : n[1];
        nmin = nmin < n[2] ? nmin : n[2];
        unsigned char *seen = malloc((size_t)(n[0] * n[1] * n[2]));
        assert_non_null(seen);
        for (int W = 1; 2 * W < nmin; W++)
            for (size_t xi = 0; xi < sizeof exts / sizeof exts[0]; xi++)
                for (int dep = 0; dep < 3; dep++) {
                    fdtuned_box b[FDTUNED_DEPLOY_MAX];
                    int nb = fdtuned_deploy_boxes(dep, n, W, exts[xi], b);
                    assert_true(nb >= 1 && nb <= FDTUNED_DEPLOY_MAX);
                    assert_int_equal(nb, dep == 0 ? 1 : dep == 2 ? 7 : nb);
                    memset(seen, 0, (size_t)(n[0] * n[1] * n[2]));
                    for (int q = 0; q < nb; q++) {
                        const fdtuned_box *x = &b[q];
                        for (int d = 0; d < 3; d++) {
                            assert_true(x->n[d] >= 1 && x->g[d] >= 0 && x->g[d] + x->n[d] <= n[d]);
                            if (!x->damped) /* the interior kernel computes g = 0 only */
                                assert_true(x->g[d] >= W && x->g[d] + x->n[d] <= n[d] - W);
                            if (x->hole[2 * d + 1] > x->hole[2 * d]) {
                                assert_int_equal(x->hole[2 * d] % exts[xi][d], 0);
                                assert_int_equal(x->hole[2 * d + 1] % exts[xi][d], 0);
                            }
                        }
                        holes += x->hole[1] > 0;
                        for (long long z = 0; z < x->n[2]; z++)
                            for (long long y = 0; y < x->n[1]; y++)
                                for (long long xx = 0; xx < x->n[0]; xx++) {
                                    const long long *h = x->hole;
                                    if (xx >= h[0] && xx < h[1] && y >= h[2] && y < h[3] &&
                                        z >= h[4] && z < h[5])
                                        continue;
                                    long long at = (x->g[0] + xx) +
                                                   n[0] * ((x->g[1] + y) + n[1] * (x->g[2] + z));
                                    seen[at]++;
                                }
                    }
                    for (long long a = 0; a < n[0] * n[1] * n[2]; a++)
                        if (seen[a] != 1)
                            fail_msg("deploy %d on %lldx%lldx%lld W=%d ext %lld,%lld,%lld: point "
                                     "%lld written %d times", dep, n[0], n[1], n[2], W,
                                     exts[xi][0], exts[xi][1], exts[xi][2], a, seen[a]);
                    cases++;
                }
        free(seen);
    }
    assert_true(cases > 300);
    assert_true(holes > 20); /* inout did leave holes to its interior kernel */
    /* bad arguments */
    fdtuned_box b[FDTUNED_DEPLOY_MAX];
    const long long n[3] = {8, 8, 8}, one[3] = {1, 1, 1}, zero[3] = {1, 0, 1};
    assert_int_equal(fdtuned_deploy_boxes(0, n, 4, one, b), -1); /* 2W = n */
    assert_int_equal(fdtuned_deploy_boxes(0, n, 0, one, b), -1);
    assert_int_equal(fdtuned_deploy_boxes(3, n, 2, one, b), -1);
    assert_int_equal(fdtuned_deploy_boxes(1, n, 2, zero, b), -1);
}

/* fdt_gen_deploy: the boxes with each one's geometry; a config that cannot run some box is
 * refused with the box named; the catalogue's deploy and eta belong to dwave only. */
static void test_deploy_configs(void **state)
{
    (void)state;
    static const fdt_gen_target cpu = {FDT_DIALECT_C};
    fdt_problem p = {FDT_OP_DWAVE, 4, FDT_F32, 128, 96, 64, 16, 0.1};
    fdt_config c;
    fdt_err e;
    fdt_deploy d;
    assert_int_equal(fdt_config_parse("deploy=inout,eta=array,bx=32,by=4,tile=2", &c, &e), 0);
    assert_int_equal(fdt_gen_deploy(&hip, &p, &c, &d, &e), 0);
    assert_int_equal(d.nbox, 2);
    /* the hole: [16, 112) x [16, 80) x [16, 48), multiples of 32, 8 and 1 */
    assert_int_equal(d.box[0].hole[0], 32);
    assert_int_equal(d.box[0].hole[1], 96);
    assert_int_equal(d.box[0].hole[2], 16);
    assert_int_equal(d.box[0].hole[3], 80);
    assert_int_equal(d.box[1].n[2], 32);
    assert_int_equal(d.box[1].damped, 0);
    assert_int_equal(d.geo[1].launch[0].jend - d.geo[1].launch[0].jbeg, 64);
    char key[256];
    fdt_config_format(&c, key, sizeof key);
    assert_string_equal(key, "bx=32,deploy=inout,eta=array,tile=2");
    /* sides: seven boxes; a window longer than the W-thick z faces is refused */
    assert_int_equal(fdt_config_parse("deploy=sides,nw=32", &c, &e), 0);
    assert_int_equal(fdt_gen_deploy(&hip, &p, &c, &d, &e), -1);
    assert_contains(e.msg, "config deploy=sides: box 1 (128x96x16 at 0,0,0): config nw=32: "
                           "window longer than nz=16");
    /* and its source is not generated: nothing is compiled for a config that cannot run */
    fdt_sb src;
    fdt_sb_init(&src);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, NULL, NULL, &src, &e), -1);
    assert_contains(e.msg, "window longer than nz=16");
    fdt_sb_free(&src);
    assert_int_equal(fdt_config_parse("deploy=sides,nw=16", &c, &e), 0);
    assert_int_equal(fdt_gen_deploy(&hip, &p, &c, &d, &e), 0);
    assert_int_equal(d.nbox, 7);
    /* a box's x origin off a whole vector: W = 6 with vec = 4 */
    p.absorb_w = 6;
    assert_int_equal(fdt_config_parse("deploy=sides,vec=4,align=4", &c, &e), 0);
    assert_int_equal(fdt_gen_deploy(&hip, &p, &c, &d, &e), -1);
    assert_contains(e.msg, "box 0 (116x84x52 at 6,6,6): its x origin 6 is not on a whole vector");
    assert_int_equal(fdt_gen_deploy(&cpu, &p, &(fdt_config){0}, &d, &e), -1); /* ranges */
    assert_int_equal(fdt_config_parse("deploy=sides,eta=array", &c, &e), 0);
    assert_int_equal(fdt_gen_deploy(&cpu, &p, &c, &d, &e), 0);
    assert_int_equal(d.nbox, 7);
    assert_int_equal(d.geo[3].launch[0].jend, 4 + 6); /* a y face: 6 rows */
    /* inout refuses a split; other operators refuse deploy and eta */
    assert_int_equal(fdt_config_parse("deploy=inout,split=2", &c, &e), 0);
    assert_int_equal(fdt_config_check(&p, &c, &e), -1);
    assert_contains(e.msg, "config deploy=inout: needs split=1");
    fdt_problem w = {FDT_OP_WAVE, 4, FDT_F32, 64, 64, 64};
    assert_int_equal(fdt_config_parse("deploy=inout", &c, &e), 0);
    assert_int_equal(fdt_config_check(&w, &c, &e), -1);
    assert_string_equal(e.msg, "config deploy=inout: only dwave has an absorbing layer");
    assert_int_equal(fdt_config_check_for(&cpu, &w, &c, &e), -1);
    assert_int_equal(fdt_config_parse("eta=array", &c, &e), 0);
    assert_int_equal(fdt_config_check(&w, &c, &e), -1);
    assert_string_equal(e.msg, "config eta=array: only dwave has an absorbing layer");
    assert_int_equal(fdt_config_parse("deploy=all", &c, &e), -1);
    assert_contains(e.msg, "expected one of complete, inout, sides");
    /* any other operator: one box, the grid */
    fdt_config_default(&c);
    assert_int_equal(fdt_gen_deploy(&hip, &w, &c, &d, &e), 0);
    assert_int_equal(d.nbox, 1);
    assert_int_equal(d.box[0].n[1], 64);
}

/* The damping profile: d runs W..1 over the layer, 0 inside; the eta array is its rounding. */
static void test_absorb_profile(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_DWAVE, 2, FDT_F32, 10, 12, 14, 3, 0.5};
    assert_true(fdt_absorb_damping(&p, 0, 0) == 0.5);
    assert_true(fdt_absorb_damping(&p, 0, 1) == 0.5 * 4.0 / 9.0);
    assert_true(fdt_absorb_damping(&p, 0, 2) == 0.5 / 9.0);
    assert_true(fdt_absorb_damping(&p, 0, 3) == 0.0);
    assert_true(fdt_absorb_damping(&p, 0, 6) == 0.0);
    assert_true(fdt_absorb_damping(&p, 0, 7) == 0.5 / 9.0);
    assert_true(fdt_absorb_damping(&p, 0, 9) == 0.5);
    assert_true(fdt_absorb_damping(&p, 2, 13) == 0.5);
    assert_true(fdt_absorb_damping(&p, 2, 10) == 0.0);
    assert_true(fdt_absorb_damping(&p, 2, 11) == 0.5 / 9.0);
    assert_int_equal(fdt_absorb_profile_bytes(&p), 36 * sizeof(float));
    float f[36];
    fdt_err e;
    assert_int_equal(fdt_absorb_profile(&p, f, &e), 0);
    for (int i = 0; i < 36; i++) {
        int axis = i < 10 ? 0 : i < 22 ? 1 : 2, x = i - (axis == 0 ? 0 : axis == 1 ? 10 : 22);
        assert_true(f[i] == (float)fdt_absorb_damping(&p, axis, x));
    }
    p.prec = FDT_F64;
    double dd[36];
    assert_int_equal(fdt_absorb_profile(&p, dd, &e), 0);
    assert_true(dd[10 + 11] == 0.5 && dd[22] == 0.5 && dd[10 + 5] == 0.0);
    fdt_problem w = {FDT_OP_WAVE, 2, FDT_F32, 10, 12, 14};
    assert_int_equal(fdt_absorb_profile(&w, f, &e), -1);
    assert_contains(e.msg, "only dwave has an absorbing layer");
}

/* The dwave reference: where g = 0 (the interior) exactly wave's; at a layer point the damped
 * form, against a hand computation. */
static void test_reference_dwave(void **state)
{
    (void)state;
    for (int R = 1; R <= FDT_R_MAX; R += 3) {
        long double coef[FDT_R_MAX + 1];
        fdt_err e;
        fdt_fd_coeffs(R, coef, &e);
        fdt_problem d = {FDT_OP_DWAVE, R, FDT_F64, 20, 20, 20, 4, 0.5};
        fdt_problem w = {FDT_OP_WAVE, R, FDT_F64, 20, 20, 20};
        fdt_params q;
        fdt_params_default(&d, &q);
        int same = 0, damped = 0;
        for (int64_t k = R; k < R + 20; k += 3)
            for (int64_t j = R; j < R + 20; j += 2)
                for (int64_t i = R; i < R + 20; i++) {
                    double a = fdt_reference_point(&d, &q, coef, poly, NULL, i, j, k);
                    double b = fdt_reference_point(&w, &q, coef, poly, NULL, i, j, k);
                    int inside = i - R >= 4 && i - R < 16 && j - R >= 4 && j - R < 16 &&
                                 k - R >= 4 && k - R < 16;
                    if (inside) {
                        assert_true(a == b);
                        same++;
                    } else {
                        assert_true(a != b);
                        damped++;
                    }
                }
        assert_true(same > 50 && damped > 50);
    }
    /* R = 1 (weights -2, 1, 1), 8^3, W = 2, S = 0.5; padded point (1, 2, 4): x = 0 (d = 2,
     * e = 0.5), y = 1 (d = 1, e = 0.125), z = 3 (inside, 0): g = 0.625. poly there: p = 1 +
     * 8 + 192 = 201, d2x = 2, d2y = 4, d2z = 18 k = 72; lap = 1*2 + 0.5*4 + 0.25*72 = 22;
     * p_prev = 0.5 i = 0.5, c2 = 0.25: (402 - 0.375*0.5 + 5.5) / 1.625 */
    long double coef[2];
    fdt_err e;
    fdt_fd_coeffs(1, coef, &e);
    fdt_problem d = {FDT_OP_DWAVE, 1, FDT_F64, 8, 8, 8, 2, 0.5};
    fdt_params q;
    fdt_params_default(&d, &q);
    double want = (402.0 - 0.375 * 0.5 + 5.5) / 1.625;
    assert_float_equal(fdt_reference_point(&d, &q, coef, poly, NULL, 1, 2, 4), want,
                       1e-12 * want);
    /* the source adds after the division */
    q.si = 1, q.sj = 2, q.sk = 4;
    assert_float_equal(fdt_reference_point(&d, &q, coef, poly, NULL, 1, 2, 4), want + q.src,
                       1e-12 * want);
    /* the tolerance counts the damped form's terms */
    fdt_tolerance tw, td;
    fdt_problem w = {FDT_OP_WAVE, 1, FDT_F32, 8, 8, 8};
    d.prec = FDT_F32;
    fdt_tolerance_make(&w, &q, &tw);
    fdt_tolerance_make(&d, &q, &td);
    assert_true(td.abs_terms >= tw.abs_terms * (1 + 1.5) && td.nterms > tw.nterms);
    assert_true(td.ref_vs_exact > 2.5 * tw.ref_vs_exact);
}

static void test_input_values(void **state)
{
    (void)state;
    uint64_t seed = 12345;
    double sum = 0;
    for (int64_t n = 0; n < 200000; n++) {
        int64_t i = n % 97, j = n / 97 % 89, k = n / (97 * 89);
        double v = fdt_input_value(seed, FDT_FIELD_IN, i, j, k, FDT_F32);
        assert_true(v != 0.0 && v > -1.0 && v < 1.0);
        assert_true(v == (double)(float)v); /* exact in f32 */
        assert_true(v == fdt_input_value(seed, FDT_FIELD_IN, i, j, k, FDT_F64));
        double c2 = fdt_input_value(seed, FDT_FIELD_C2, i, j, k, FDT_F32);
        assert_true(c2 > 0.25 && c2 < 0.5);
        sum += v;
    }
    assert_true(fabs(sum / 200000) < 0.01); /* centred */
    assert_true(fdt_input_value(1, 0, 1, 2, 3, FDT_F64) != fdt_input_value(2, 0, 1, 2, 3, FDT_F64));
    assert_true(fdt_input_value(1, 0, 1, 2, 3, FDT_F64) != fdt_input_value(1, 1, 1, 2, 3, FDT_F64));
    assert_true(fdt_input_value(1, 0, 1, 2, 3, FDT_F64) != fdt_input_value(1, 0, 2, 1, 3, FDT_F64));
}

static void test_tolerance(void **state)
{
    (void)state;
    double prev = 0;
    for (int R = 1; R <= FDT_R_MAX; R++) {
        fdt_problem p = {FDT_OP_LAP, R, FDT_F32, 64, 64, 64};
        fdt_params q;
        fdt_params_default(&p, &q);
        fdt_tolerance t32, t64;
        fdt_tolerance_make(&p, &q, &t32);
        p.prec = FDT_F64;
        fdt_tolerance_make(&p, &q, &t64);
        assert_true(t32.cand_vs_ref > t32.ref_vs_exact && t32.ref_vs_exact > 0);
        assert_true(t64.cand_vs_ref < 1e-10 * t32.cand_vs_ref * 1e4);
        assert_true(t32.cand_vs_ref > prev);
        assert_int_equal(t32.nterms, 3 * (2 * R + 1));
        prev = t32.cand_vs_ref;
        /* a sign flip of the nearest neighbour weight (the fault=coef test) stays detectable */
        long double c[FDT_R_MAX + 1];
        fdt_err e;
        fdt_fd_coeffs(R, c, &e);
        assert_true(2.0 * (double)c[1] * 0.5 * q.sz > 100 * t32.cand_vs_ref);
    }
}

/* The hash of a kernel's code (fdt_gen_source_hash) is what tells a result of an older
 * generator whose kernel is unchanged from one whose kernel changed: the same for the same
 * code whatever the comments (the banner names the generator) and white space, different for
 * another config, grid or backend (the mapping header is part of the code). */
static void test_source_hash(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 256, 256, 256};
    fdt_config c, d;
    fdt_err e;
    assert_int_equal(fdt_config_parse("bx=64,by=4,nw=16", &c, &e), 0);
    assert_int_equal(fdt_config_parse("bx=64,by=4,nw=32", &d, &e), 0);
    char a[40], b[40], x[40], y[40], z[40];
    assert_int_equal(fdt_gen_source_hash(&p, &c, "cuda", a, sizeof a, &e), 0);
    assert_int_equal(fdt_gen_source_hash(&p, &c, "cuda", b, sizeof b, &e), 0);
    assert_int_equal(strlen(a), 16);
    assert_string_equal(a, b);
    assert_int_equal(fdt_gen_source_hash(&p, &d, "cuda", x, sizeof x, &e), 0);
    assert_string_not_equal(a, x);
    assert_int_equal(fdt_gen_source_hash(&p, &c, "hip", y, sizeof y, &e), 0);
    assert_string_not_equal(a, y);
    fdt_problem q = p;
    q.nz = 512;
    assert_int_equal(fdt_gen_source_hash(&q, &c, "cuda", z, sizeof z, &e), 0);
    assert_string_not_equal(a, z);
    /* By hand: the kernel's lines without comments and with single spaces, then the header's,
     * each ending in a newline, FNV-1a. */
    fdt_sb src;
    fdt_sb_init(&src);
    assert_int_equal(fdt_gen_source(&hip, &p, &c, NULL, NULL, &src, &e), 0);
    const char *texts[2] = {fdt_sb_str(&src), fdt_gen_nvrtc_hip_header()};
    uint64_t h = FDT_HASH_SEED;
    for (int t = 0; t < 2; t++) {
        char *copy = strdup(texts[t]), *save = NULL;
        assert_non_null(copy);
        for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char *cut = strstr(line, "//");
            if (cut)
                *cut = 0;
            char out[4096];
            size_t n = 0;
            int pending = 0;
            for (char *ch = line; *ch && n + 2 < sizeof out; ch++) {
                if (strchr(" \t\r\v\f", *ch)) {
                    pending = n > 0;
                    continue;
                }
                if (pending)
                    out[n++] = ' ';
                out[n++] = *ch;
                pending = 0;
            }
            if (n) {
                out[n++] = '\n';
                h = fdt_hash64(out, n, h);
            }
        }
        free(copy);
    }
    char want[40];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)h);
    assert_string_equal(a, want);
    fdt_sb_free(&src);
    /* a config the generator refuses has no code */
    assert_int_equal(fdt_config_parse("lds=1", &d, &e), 0);
    assert_int_not_equal(fdt_gen_source_hash(&p, &d, "cuda", x, sizeof x, &e), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_coeffs_known_tables),
        cmocka_unit_test(test_source_hash),
        cmocka_unit_test(test_coeffs_closed_form),
        cmocka_unit_test(test_coeffs_convergence),
        cmocka_unit_test(test_coeffs_bad_radius),
        cmocka_unit_test(test_grid_parse_valid),
        cmocka_unit_test(test_grid_parse_invalid),
        cmocka_unit_test(test_problem_check),
        cmocka_unit_test(test_config_canonical),
        cmocka_unit_test(test_config_parse_errors),
        cmocka_unit_test(test_config_check_names_parameter),
        cmocka_unit_test(test_config_c_dialect),
        cmocka_unit_test(test_layout_arithmetic),
        cmocka_unit_test(test_geometry_extremes),
        cmocka_unit_test(test_effective_bytes),
        cmocka_unit_test(test_geometry_split_and_order),
        cmocka_unit_test(test_portable_geometry_fit),
        cmocka_unit_test(test_kernel_args),
        cmocka_unit_test(test_tensor_map),
        cmocka_unit_test(test_template_engine),
        cmocka_unit_test(test_source_rendering),
        cmocka_unit_test(test_banner_config),
        cmocka_unit_test(test_family_table),
        cmocka_unit_test(test_family_sources),
        cmocka_unit_test(test_stream_weights),
        cmocka_unit_test(test_stream_guard),
        cmocka_unit_test(test_family_faults),
        cmocka_unit_test(test_family_render_all),
        cmocka_unit_test(test_dwave_sources),
        cmocka_unit_test(test_dwave_layer_select),
        cmocka_unit_test(test_reference_exact_on_polynomials),
        cmocka_unit_test(test_deploy_partition),
        cmocka_unit_test(test_deploy_configs),
        cmocka_unit_test(test_absorb_profile),
        cmocka_unit_test(test_reference_dwave),
        cmocka_unit_test(test_input_values),
        cmocka_unit_test(test_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
