/* Tests of the NVIDIA driver identity and clocks (runtime/nvml.c) without a GPU, against a
 * stand-in NVML (tests/fake_nvml.c) that the dynamic loader finds through LD_LIBRARY_PATH,
 * as it would find the driver's: run as "test_nvml fake" with the stand-in on the path, the
 * driver version is NVML's ("999.88.77", a number no /proc holds), the clocks and throttle
 * reasons are read for the GPU at the device's PCI address and nowhere else, and NVML is
 * initialised once; run as "test_nvml absent" without it, the version falls back to
 * cuDriverGetVersion's "CUDA driver API 13.0" form (not "unknown (CUDA 13.0)", nor a /proc
 * token such as "for") and the clocks fail saying why. Also the throttle reasons' names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt_rt.h"

static int fake; /* 1: the stand-in NVML is on the loader path */

static void test_throttle_names(void **state)
{
    (void)state;
    char buf[256];
    fdt_throttle_names(0, buf, sizeof buf);
    assert_string_equal(buf, "");
    fdt_throttle_names(FDT_THROTTLE_GPU_IDLE | FDT_THROTTLE_SW_THERMAL, buf, sizeof buf);
    assert_string_equal(buf, "gpu_idle,sw_thermal");
    fdt_throttle_names(0x1ff, buf, sizeof buf);
    assert_string_equal(buf, "gpu_idle,applications_clocks,sw_power_cap,hw_slowdown,"
                             "sync_boost,sw_thermal,hw_thermal,hw_power_brake,display_clocks");
    fdt_throttle_names(0x400, buf, sizeof buf); /* a reason without a name is left out */
    assert_string_equal(buf, "");
    uint64_t bits = 0;
    assert_int_equal(fdt_throttle_parse("gpu_idle,applications_clocks,sw_power_cap,hw_slowdown,"
                                        "sync_boost,sw_thermal,hw_thermal,hw_power_brake,"
                                        "display_clocks", &bits), 0);
    assert_int_equal(bits, 0x1ff);
    assert_int_equal(fdt_throttle_parse("", &bits), 0);
    assert_int_equal(bits, 0);
    assert_int_equal(fdt_throttle_parse("hw_power_brake", &bits), 0);
    assert_int_equal(bits, FDT_THROTTLE_HW_POWER_BRAKE);
    assert_int_equal(fdt_throttle_parse("sw_thermal,overheated", &bits), -1);
    assert_int_equal(fdt_throttle_parse("sw_therm", &bits), -1);
    assert_string_equal(fdt_throttle_name(FDT_THROTTLE_HW_SLOWDOWN), "hw_slowdown");
    assert_null(fdt_throttle_name(0x3));
}

static void test_driver_version(void **state)
{
    (void)state;
    char buf[128];
    const char *from = fdt_rt_nvidia_driver(13000, buf, sizeof buf);
    if (fake) {
        assert_string_equal(from, "nvml");
        assert_string_equal(buf, "999.88.77");
        /* the CUDA API version does not matter when NVML answers */
        assert_string_equal(fdt_rt_nvidia_driver(0, buf, sizeof buf), "nvml");
        assert_string_equal(buf, "999.88.77");
    } else {
        assert_string_equal(from, "cuda");
        assert_string_equal(buf, "CUDA driver API 13.0");
        assert_string_equal(fdt_rt_nvidia_driver(12080, buf, sizeof buf), "cuda");
        assert_string_equal(buf, "CUDA driver API 12.8");
        assert_string_equal(fdt_rt_nvidia_driver(0, buf, sizeof buf), "");
        assert_string_equal(buf, "unknown");
    }
}

static void test_clocks(void **state)
{
    (void)state;
    fdt_clocks c;
    fdt_err e = {""};
    if (!fake) {
        c.known = 1;
        assert_int_equal(fdt_rt_nvidia_clocks("0000:18:00", &c, &e), -1);
        assert_int_equal(c.known, 0);
        assert_int_equal(c.sm_mhz, -1);
        assert_non_null(strstr(e.msg, "libnvidia-ml.so.1"));
        return;
    }
    unsetenv("FAKE_NVML_REASONS");
    unsetenv("FAKE_NVML_SM");
    assert_int_equal(fdt_rt_nvidia_clocks("0000:18:00", &c, &e), 0);
    assert_int_equal(c.known, 1);
    assert_int_equal(c.sm_mhz, 1755);
    assert_int_equal(c.sm_max_mhz, 1980);
    assert_int_equal(c.mem_mhz, 2619);
    assert_int_equal(c.mem_max_mhz, 2619);
    assert_int_equal(c.reasons_known, 1);
    assert_int_equal(c.reasons, 0);
    /* read again now: the GPU slowed down for heat */
    setenv("FAKE_NVML_REASONS", "0x60", 1);
    setenv("FAKE_NVML_SM", "1200", 1);
    assert_int_equal(fdt_rt_nvidia_clocks("0000:18:00", &c, &e), 0);
    assert_int_equal(c.sm_mhz, 1200);
    assert_int_equal(c.reasons, FDT_THROTTLE_SW_THERMAL | FDT_THROTTLE_HW_THERMAL);
    unsetenv("FAKE_NVML_REASONS");
    unsetenv("FAKE_NVML_SM");
    /* another GPU's address: NVML's answer, not this GPU's clocks */
    assert_int_equal(fdt_rt_nvidia_clocks("0000:99:00", &c, &e), -1);
    assert_int_equal(c.known, 0);
    assert_non_null(strstr(e.msg, "0000:99:00"));
    /* one nvmlInit_v2 for the whole process */
    int (*calls)(void) = NULL;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    *(void **)&calls = dlsym(lib, "fake_nvml_init_calls");
    assert_non_null(calls);
    assert_int_equal(calls(), 1);
    dlclose(lib);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "fake") && strcmp(argv[1], "absent"))) {
        fprintf(stderr, "usage: test_nvml fake|absent\n");
        return 2;
    }
    fake = !strcmp(argv[1], "fake");
    if (!fake && dlopen("libnvidia-ml.so.1", RTLD_NOW)) {
        fprintf(stderr, "test_nvml absent: this machine has an NVML; nothing to test\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_throttle_names),
        cmocka_unit_test(test_driver_version),
        cmocka_unit_test(test_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
