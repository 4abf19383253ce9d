/* Target tests (no GPU needed): a target resolved from a device (a live one, a simulated
 * GPU, one that names no backend) and from an architecture name carries the claiming
 * backend, the architecture's facts, the source dialect and the rules; every architecture of
 * the facts table resolves; what cannot resolve fails saying why; a source-only target
 * compiles nothing. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_for_arch),
        cmocka_unit_test(test_for_arch_fails),
        cmocka_unit_test(test_every_arch_resolves),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_source_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
