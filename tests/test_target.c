/* Target tests (no GPU needed): a target resolved from a device (a live one, a simulated
 * GPU, one that names no backend) and from an architecture name carries the claiming
 * backend, the architecture's facts, the source dialect and the rules; every architecture of
 * the facts table resolves; what cannot resolve fails saying why; a source-only target
 * compiles nothing. The candidate builder, on a simulated GPU's target (its compiler answers
 * at once with placeholders): each state a candidate can end in, each place a build stops,
 * candidates not NEW left alone, nothing started without a compiler, a compiler's failure
 * (NVRTC, where this build has it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "fdt_target.h"

#define assert_contains(hay, needle)                                                       \
    do {                                                                                   \
        if (!strstr((hay), (needle)))                                                      \
            fail_msg("'%s' does not contain '%s'", (hay), (needle));                        \
    } while (0)

static fdt_device device(const char *backend, const char *name, const char *arch)
{
    fdt_device d;
    fdt_device_init(&d);
    snprintf(d.backend, sizeof d.backend, "%s", backend);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "%s", arch);
    d.compute_units = 132;
    d.max_threads_per_block = 1024;
    d.live = 1;
    return d;
}

static void test_for_arch(void **state)
{
    (void)state;
    fdt_target t;
    fdt_err e;
    assert_int_equal(fdt_target_for_arch("sm_90", &t, &e), 0);
    assert_string_equal(t.arch_name, "sm_90");
    assert_string_equal(t.device.backend, "cuda");
    assert_string_equal(t.device.vendor, "NVIDIA");
    assert_int_equal(t.device.live, 0);
    assert_string_equal(t.arch->name, "sm_90");
    assert_int_equal(t.arch->known, 1);
    assert_int_equal(t.gen.dialect, FDT_DIALECT_HIP);
    assert_string_equal(t.rules->name, "gpu");
    assert_ptr_equal(t.backend, fdt_rt_backend_find("cuda")); /* NULL when not built */
    /* the compiler targets the name as given, the facts are the base architecture's */
    assert_int_equal(fdt_target_for_arch("gfx90a:xnack-", &t, &e), 0);
    assert_string_equal(t.arch_name, "gfx90a:xnack-");
    assert_string_equal(t.arch->name, "gfx90a");
    assert_string_equal(t.device.vendor, "AMD");
    assert_ptr_equal(t.backend, fdt_rt_backend_find("hip"));
    /* an architecture the facts table does not know: its backend's, with the fallback */
    assert_int_equal(fdt_target_for_arch("gfx1201", &t, &e), 0);
    assert_int_equal(t.arch->known, 0);
    assert_string_equal(t.device.backend, "hip");
}

static void test_for_arch_fails(void **state)
{
    (void)state;
    fdt_target t;
    fdt_err e;
    assert_int_equal(fdt_target_for_arch("tpu_v5", &t, &e), -1);
    assert_contains(e.msg, "target 'tpu_v5': no backend in this build compiles for it (known: ");
    assert_int_equal(fdt_target_for_arch("", &t, &e), -1);
    assert_int_equal(fdt_target_for_arch("SM_90", &t, &e), -1);
    char longname[64];
    memset(longname, 'x', sizeof longname);
    memcpy(longname, "sm_", 3);
    longname[40] = 0;
    assert_int_equal(fdt_target_for_arch(longname, &t, &e), -1);
    assert_contains(e.msg, "longer than an architecture name (at most 31 characters)");
}

/* Every architecture fdtune has facts for is claimed by a backend whose targets have a
 * dialect and rules (the table of target kinds covers the claims). */
static void test_every_arch_resolves(void **state)
{
    (void)state;
    const fdt_arch *a;
    int n = 0;
    for (int i = 0; (a = fdt_arch_at(i)); i++, n++) {
        fdt_target t;
        fdt_err e;
        if (fdt_target_for_arch(a->name, &t, &e))
            fail_msg("%s: %s", a->name, e.msg);
        assert_ptr_equal(t.arch, a);
        assert_string_equal(t.device.vendor, a->vendor);
        assert_non_null(t.rules);
        assert_string_equal(fdt_device_claim_of(a->name)->backend, t.device.backend);
    }
    assert_true(n > 5);
}

static void test_resolve(void **state)
{
    (void)state;
    fdt_target t;
    fdt_err e;
    /* a live device: its own backend, its own limits kept for the rules */
    fdt_device h = device("cuda", "NVIDIA H100 80GB HBM3", "sm_90");
    assert_int_equal(fdt_target_resolve(&h, &t, &e), 0);
    assert_ptr_equal(t.backend, fdt_rt_backend_find("cuda"));
    assert_string_equal(t.device.name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(t.device.max_threads_per_block, 1024);
    assert_string_equal(t.arch->name, "sm_90");
    assert_int_equal(t.gen.dialect, FDT_DIALECT_HIP);
    /* a simulated GPU: the simulator's backend compiles, the recorded arch's rules judge */
    fdt_device s = device(FDT_SIM_BACKEND, "NVIDIA H100 80GB HBM3 (simulated)", "sm_90");
    assert_int_equal(fdt_target_resolve(&s, &t, &e), 0);
    assert_ptr_equal(t.backend, fdt_rt_backend_find(FDT_SIM_BACKEND));
    assert_non_null(t.backend);
    assert_string_equal(t.arch->name, "sm_90");
    assert_string_equal(t.rules->name, "gpu");
    assert_int_equal(fdt_target_compiles(&t, &e), 0);
    /* a device that names no backend gets its architecture's */
    fdt_device m = device("", "AMD Instinct MI250X", "gfx90a");
    assert_int_equal(fdt_target_resolve(&m, &t, &e), 0);
    assert_ptr_equal(t.backend, fdt_rt_backend_find("hip"));
    assert_string_equal(t.arch->name, "gfx90a");
    /* a backend this build does not have: the rules hold, it cannot compile */
    fdt_device x = device("foo", "Some GPU", "sm_90");
    assert_int_equal(fdt_target_resolve(&x, &t, &e), 0);
    assert_null(t.backend);
    assert_non_null(t.rules);
    if (fdt_rt_backend_find("cuda")) {
        assert_int_equal(fdt_target_compiles(&t, &e), -1);
        assert_string_equal(e.msg, "device Some GPU: backend 'foo' is not in this build");
    }
    /* an architecture no backend claims */
    fdt_device c = device("", "Some CPU", "x86_64");
    assert_int_equal(fdt_target_resolve(&c, &t, &e), -1);
    assert_string_equal(e.msg, "device Some CPU: no backend claims its architecture 'x86_64'");
}

static void test_source_only(void **state)
{
    (void)state;
    fdt_target t;
    fdt_err e;
    fdt_target_for_dialect(FDT_DIALECT_HIP, &t);
    assert_int_equal(t.gen.dialect, FDT_DIALECT_HIP);
    assert_null(t.backend);
    assert_null(t.arch);
    assert_null(t.rules);
    assert_int_equal(fdt_target_compiles(&t, &e), -1);
    assert_string_equal(e.msg, "a source-only target compiles nothing");
}

/* ------------------------------------------------------------------ the builder */

static fdt_config config(const char *text)
{
    fdt_config c;
    fdt_err e;
    if (fdt_config_parse(text, &c, &e))
        fail_msg("%s: %s", text, e.msg);
    return c;
}

typedef struct progress {
    size_t calls, last_done, last_n;
} progress;

static void on_done(void *ctx, size_t done, size_t n)
{
    progress *pr = ctx;
    pr->calls++;
    pr->last_done = done;
    pr->last_n = n;
}

static void test_build_states(void **state)
{
    (void)state;
    fdt_target t;
    fdt_err e;
    fdt_device s = device(FDT_SIM_BACKEND, "AMD Instinct MI250X (simulated)", "gfx90a");
    assert_int_equal(fdt_target_resolve(&s, &t, &e), 0);
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 256, 256, 256};
    /* ready; pruned (the ring's dynamic LDS over gfx90a's 64 KiB); no kernel family; the
     * verification kernels */
    fdt_config ok = config("bx=64,by=4,nw=16"), big = config(
        "bx=64,by=4,lds=2,nw=32,pf=4,tile=4,vec=2,align=64,lb=256"), none = config("lds=1");
    fdt_cand v[4];
    fdt_cand_init(&v[0], FDT_CAND_STENCIL, &ok, NULL);
    fdt_cand_init(&v[1], FDT_CAND_STENCIL, &big, NULL);
    fdt_cand_init(&v[2], FDT_CAND_STENCIL, &none, NULL);
    fdt_cand_init(&v[3], FDT_CAND_UTIL, NULL, "fdt_fill_f32");
    fdt_cand *pv[] = {&v[0], &v[1], &v[2], &v[3]};
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    progress pr = {0};
    o.on_done = on_done;
    o.ctx = &pr;
    o.parallel = 2;
    assert_int_equal(fdt_target_build(&t, &p, pv, 4, &o, &e), 0);
    char name[96];
    fdt_gen_kernel_name(&p, &ok, name, sizeof name);
    assert_int_equal(v[0].state, FDT_CAND_READY);
    assert_string_equal(v[0].kernel, name);
    assert_non_null(v[0].code.image);
    assert_null(v[0].src);
    assert_int_equal(v[1].state, FDT_CAND_PRUNED);
    assert_contains(v[1].err.msg,
                    "bytes of LDS, AMD Instinct MI250X (simulated) allows 65536 per workgroup");
    assert_non_null(v[1].code.image);
    assert_int_equal(v[2].state, FDT_CAND_GENERATE_FAILED);
    assert_true(fdt_cand_failed(&v[2]));
    assert_int_equal(v[3].state, FDT_CAND_READY); /* never pruned */
    assert_string_equal(v[3].kernel, "fdt_fill_f32");
    assert_true(pr.calls > 0); /* the compile's progress: three jobs */
    assert_int_equal(pr.last_done, 3);
    assert_int_equal(pr.last_n, 3);
    /* a second build leaves what is built alone */
    const char *image = v[0].code.image;
    pr.calls = 0;
    assert_int_equal(fdt_target_build(&t, &p, pv, 4, &o, &e), 0);
    assert_ptr_equal(v[0].code.image, image);
    assert_int_equal(v[2].state, FDT_CAND_GENERATE_FAILED);
    assert_int_equal(pr.calls, 0); /* nothing to compile */
    /* freed, a candidate is NEW and builds again; a build may stop at COMPILE (not judged) */
    fdt_cand_free(&v[1]);
    assert_int_equal(v[1].state, FDT_CAND_NEW);
    assert_null(v[1].code.image);
    o.stop_after = FDT_BUILD_COMPILE;
    assert_int_equal(fdt_target_build(&t, &p, pv, 4, &o, &e), 0);
    assert_int_equal(v[1].state, FDT_CAND_COMPILED);
    for (int i = 0; i < 4; i++)
        fdt_cand_free(&v[i]);
}

static void test_build_generate_only(void **state)
{
    (void)state;
    fdt_target t;
    fdt_err e;
    fdt_target_for_dialect(FDT_DIALECT_HIP, &t);
    fdt_problem p = {FDT_OP_D2Z, 2, FDT_F64, 64, 48, 40};
    fdt_config c = config("bx=32,by=4,nw=8");
    fdt_cand v, u;
    fdt_cand_init(&v, FDT_CAND_STENCIL, &c, "my_kernel_rt");
    fdt_cand_init(&u, FDT_CAND_UTIL, NULL, "fdt_fill_f64");
    fdt_cand *pv[] = {&v, &u};
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    o.stop_after = FDT_BUILD_GENERATE;
    o.gen.runtime_dims = 1;
    assert_int_equal(fdt_target_build(&t, &p, pv, 2, &o, &e), 0);
    assert_int_equal(v.state, FDT_CAND_GENERATED);
    assert_string_equal(v.kernel, "my_kernel_rt");
    assert_contains(v.src, "my_kernel_rt(");
    assert_null(v.code.image);
    assert_int_equal(u.state, FDT_CAND_GENERATED);
    assert_contains(u.src, "fdt_fill_f64");
    fdt_cand_free(&v);
    fdt_cand_free(&u);
    /* a name the generator refuses is the candidate's failure */
    fdt_cand_init(&v, FDT_CAND_STENCIL, &c, "1abc");
    fdt_cand *one = &v;
    assert_int_equal(fdt_target_build(&t, &p, &one, 1, &o, &e), 0);
    assert_int_equal(v.state, FDT_CAND_GENERATE_FAILED);
    assert_contains(v.err.msg, "kernel name '1abc': not a C identifier");
    /* compiling needs a backend: nothing starts, and what generated is NEW again */
    fdt_cand_init(&v, FDT_CAND_STENCIL, &c, NULL);
    fdt_cand_init(&u, FDT_CAND_STENCIL, &c, "1abc");
    o.stop_after = FDT_BUILD_PRUNE;
    assert_int_equal(fdt_target_build(&t, &p, pv, 2, &o, &e), -1);
    assert_string_equal(e.msg, "a source-only target compiles nothing");
    assert_int_equal(v.state, FDT_CAND_NEW);
    assert_null(v.src);
    assert_int_equal(u.state, FDT_CAND_GENERATE_FAILED);
}

/* A compiler's failure is the candidate's: NVRTC asked for an architecture it does not know. */
static void test_build_compile_failed(void **state)
{
    (void)state;
    fdt_target t;
    fdt_err e;
    const fdt_rt_backend *cuda = fdt_rt_backend_find("cuda");
    char ver[64];
    if (!cuda || cuda->compiler_version(ver, sizeof ver, &e))
        skip(); /* no NVRTC in this build or on this machine */
    assert_int_equal(fdt_target_for_arch("sm_1", &t, &e), 0);
    fdt_problem p = {FDT_OP_D2X, 1, FDT_F32, 32, 32, 32};
    fdt_cand v;
    fdt_cand_init(&v, FDT_CAND_STENCIL, NULL, NULL);
    fdt_cand *pv = &v;
    assert_int_equal(fdt_target_build(&t, &p, &pv, 1, NULL, &e), 0);
    assert_int_equal(v.state, FDT_CAND_COMPILE_FAILED);
    assert_true(fdt_cand_failed(&v));
    assert_true(v.err.msg[0] != 0);
    assert_null(v.code.image);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_for_arch),
        cmocka_unit_test(test_for_arch_fails),
        cmocka_unit_test(test_every_arch_resolves),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_source_only),
        cmocka_unit_test(test_build_states),
        cmocka_unit_test(test_build_generate_only),
        cmocka_unit_test(test_build_compile_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
