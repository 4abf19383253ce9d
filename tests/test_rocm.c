/* Which ROCm the HIP backend runs against, and what identifies it ("AMD first", points 2, 4
 * and 8), on the CPU. Fake ROCm trees are built in a scratch directory: a directory's lib/
 * holds a working copy (a hard link, else a copy) of the HIP runtime installed on the loader
 * path (Debian's libamdhip64.so.5, which holds hiprtc too) under the soname a newer ROCm uses,
 * or an empty stub file that does not load. Each choice runs in a child process, since the
 * backend chooses its ROCm once per process. The checks: $ROCM_PATH before $HIP_PATH before
 * the loader path, .so.7 before older names, a stub in the chosen tree is an error and not a
 * quiet fall-back to another ROCm; the library report and `fdtune --version` / `fdtune
 * devices` name the fake tree's file; the compile cache key holds comgr's version and changes
 * with the files; the amdgpu kernel driver's version read from a fake sysfs changes the
 * environment; AMD UUIDs keep their 16 characters; a launch refused for its launch bounds is
 * the candidate's error, not a lost context. Without a HIP backend or a HIP runtime on the
 * loader path (scripts/setup.sh installs Debian's) the ROCm tests skip, saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdt_decide.h"
#include "fdt_device.h"
#include "fdt_retune.h"
#include "rt_internal.h"
#include "testutil.h"

#ifdef FDTUNE_HAVE_HIP
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#endif

#define assert_contains(hay, needle)                                                       \
    do {                                                                                   \
        if (!strstr((hay), (needle)))                                                      \
            fail_msg("expected \"%s\" in \"%s\"", (needle), (hay));                        \
    } while (0)

static char scratch[PATH_MAX];

/* Writes text to root/rel, making the directories on the way. */
static void put_file(const char *root, const char *rel, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* ---------------------------------------------------------------- point 8: identity, errors */

static void test_amd_uuid_whole(void **state)
{
    (void)state;
    char a[48], b[48], legacy[48];
    fdt_device_amd_uuid((const unsigned char *)"0123456789abcdef", a, sizeof a);
    assert_string_equal(a, "GPU-0123456789abcdef");
    /* two GPUs whose unique ids share the first 8 characters: one UUID each */
    fdt_device_amd_uuid((const unsigned char *)"0123456789abcdee", b, sizeof b);
    assert_string_not_equal(a, b);
    fdt_device_amd_uuid((const unsigned char *)"XX\0\0\0\0\0\0\0\0\0\0\0\0\0\0", b, sizeof b);
    assert_string_equal(b, ""); /* ROCr: no unique id */
    const unsigned char bin[16] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0xff};
    fdt_device_amd_uuid(bin, b, sizeof b);
    assert_string_equal(b, "GPU-deadbeef000102030405060708090aff");

    /* what fdtune 0.1.0 stored for that GPU still names it for retune */
    fdt_device live, stored, other;
    fdt_device_init(&live);
    snprintf(live.backend, sizeof live.backend, "hip");
    snprintf(live.name, sizeof live.name, "AMD Instinct MI250X");
    snprintf(live.arch, sizeof live.arch, "gfx90a");
    live.compute_units = 110;
    snprintf(live.uuid, sizeof live.uuid, "%s", a);
    assert_int_equal(fdt_device_amd_uuid_legacy(&live, legacy, sizeof legacy), 0);
    assert_string_equal(legacy, "GPU-3031323334353637");
    stored = live;
    snprintf(stored.uuid, sizeof stored.uuid, "%s", legacy);
    other = live;
    snprintf(other.uuid, sizeof other.uuid, "GPU-fedcba9876543210");
    assert_true(fdt_device_same_gpu(&stored, &live));
    assert_false(fdt_device_same_gpu(&stored, &other));
    fdt_device two[2] = {other, live};
    int same = 0;
    assert_int_equal(fdt_retune_match(&stored, two, 2, &same), 1);
    assert_int_equal(same, 1);
}

static void test_launch_failure_is_the_candidates(void **state)
{
    (void)state;
#ifndef FDTUNE_HAVE_HIP
    skip();
#else
    /* clr's launch check: a block above the launch bounds, nothing queued */
    assert_false(fdt_rt_hip_error_lost(hipErrorLaunchFailure, 1));
    assert_false(fdt_rt_hip_error_lost(hipErrorInvalidConfiguration, 1));
    /* a failed kernel reported later, or a fault: the context is gone */
    assert_true(fdt_rt_hip_error_lost(hipErrorLaunchFailure, 0));
    assert_true(fdt_rt_hip_error_lost(hipErrorIllegalAddress, 0));
    assert_true(fdt_rt_hip_error_lost(hipErrorIllegalAddress, 1));
    assert_true(fdt_rt_hip_error_lost(hipErrorLaunchTimeOut, 0));
    assert_false(fdt_rt_hip_error_lost(hipErrorOutOfMemory, 0));
#endif
}

/* ---------------------------------------------------------------- point 4: the driver */

static void test_amdgpu_driver_version(void **state)
{
    (void)state;
    char root[PATH_MAX], a[128], b[128], c[128];
    snprintf(root, sizeof root, "%s/sys-dkms", scratch);
    put_file(root, "module/amdgpu/version", "6.8.5\n");
    put_file(root, "module/amdgpu/srcversion", "0123ABCD\n");
    fdt_rt_amdgpu_kernel_driver_at(root, a, sizeof a);
    assert_string_equal(a, "amdgpu 6.8.5");
    put_file(root, "module/amdgpu/version", "6.10.5\n"); /* ROCm's driver upgraded */
    fdt_rt_amdgpu_kernel_driver_at(root, b, sizeof b);
    assert_string_equal(b, "amdgpu 6.10.5");

    snprintf(root, sizeof root, "%s/sys-intree", scratch);
    put_file(root, "module/amdgpu/srcversion", "0123ABCD\n");
    fdt_rt_amdgpu_kernel_driver_at(root, c, sizeof c);
    assert_contains(c, "amdgpu in-tree (Linux ");
    assert_contains(c, "srcversion 0123ABCD)");

    snprintf(root, sizeof root, "%s/sys-none", scratch);
    put_file(root, "module/other/version", "1\n");
    fdt_rt_amdgpu_kernel_driver_at(root, c, sizeof c);
    assert_string_equal(c, "amdgpu not loaded");

    /* the environment record keeps it: retune sees the upgrade */
    fdt_device d;
    fdt_device_init(&d);
    fdt_db_env before, after;
    snprintf(d.driver_version, sizeof d.driver_version, "%s", a);
    fdt_db_env_from_device(&d, "0.1.0", &before);
    snprintf(d.driver_version, sizeof d.driver_version, "%s", b);
    fdt_db_env_from_device(&d, "0.1.0", &after);
    char diff[256];
    assert_true(fdt_decide_env_diff(&before, &after, diff, sizeof diff) != 0);
    assert_contains(diff, "driver");
}

/* The files' identity follows their size and time, and their paths. */
static void test_files_id(void **state)
{
    (void)state;
    char a[PATH_MAX], b[PATH_MAX];
    snprintf(a, sizeof a, "%s/ids/libhiprtc.so.6", scratch);
    snprintf(b, sizeof b, "%s/ids/libamd_comgr.so.3", scratch);
    put_file(scratch, "ids/libhiprtc.so.6", "one");
    put_file(scratch, "ids/libamd_comgr.so.3", "two");
    const char *files[] = {a, b}, *swapped[] = {b, a};
    fdt_sb x, y, z;
    fdt_sb_init(&x), fdt_sb_init(&y), fdt_sb_init(&z);
    fdt_rt_dl_files_id(&x, files, 2);
    fdt_rt_dl_files_id(&y, swapped, 2);
    assert_string_not_equal(fdt_sb_str(&x), fdt_sb_str(&y));
    put_file(scratch, "ids/libhiprtc.so.6", "one, patched");
    fdt_rt_dl_files_id(&z, files, 2);
    assert_string_not_equal(fdt_sb_str(&x), fdt_sb_str(&z));
    assert_int_equal(strncmp(fdt_sb_str(&x), "files ", 6), 0);
    fdt_sb_free(&x), fdt_sb_free(&y), fdt_sb_free(&z);
    char v[32];
    fdt_rt_dl_file_version("/opt/rocm-6.2.0/lib/libhiprtc.so.6.2.60200", v, sizeof v);
    assert_string_equal(v, "6.2.60200");
    fdt_rt_dl_file_version("/spack/lib/libhiprtc.so", v, sizeof v);
    assert_string_equal(v, "");
}

#ifdef FDTUNE_HAVE_HIP
/* ---------------------------------------------------------------- points 2 and 4: trees */

static char loader_runtime[PATH_MAX]; /* the HIP runtime on the loader path: "" none */

static int find_runtime(void *arg, fdt_sb *out)
{
    (void)arg;
    static const char *const names[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                        "libamdhip64.so.5", "libamdhip64.so", NULL};
    const char *loader[] = {""};
    fdt_rt_dl d;
    if (fdt_rt_dl_open(loader, 1, names, &d, out))
        return -1;
    fdt_sb_puts(out, d.path);
    return 0;
}

/* The runtime to copy into the trees, or skips the test saying why there is none. */
static void need_runtime(void)
{
    if (!loader_runtime[0]) {
        char *path = NULL;
        size_t n = 0;
        fdt_err e;
        if (fdt_run_in_child("find the HIP runtime", find_runtime, NULL, 30000, &path, &n, &e)) {
            print_message("skipped: no HIP runtime on the loader path (%s); scripts/setup.sh "
                          "installs Debian's libamdhip64-dev\n", e.msg);
            skip();
        }
        snprintf(loader_runtime, sizeof loader_runtime, "%.*s", (int)n, path);
        free(path);
    }
}

/* root = scratch/name; root/lib/soname a working runtime (stub 0) or an empty file (stub 1). */
static void tree_file(const char *name, const char *soname, int stub, char *root, size_t rn)
{
    char path[PATH_MAX];
    snprintf(root, rn, "%s/%s", scratch, name);
    snprintf(path, sizeof path, "%s/lib/%s", root, soname);
    put_file(root, "lib/.keep", "");
    if (stub) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
        return;
    }
    if (access(path, F_OK) == 0 || link(loader_runtime, path) == 0)
        return;
    FILE *in = fopen(loader_runtime, "rb"), *out = fopen(path, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[1 << 16];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, k, out), k);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

typedef struct scene {
    const char *rocm, *hip; /* $ROCM_PATH, $HIP_PATH (NULL: unset) */
    int what;               /* 0 the choice, 1 the library report, 2 the compiler's ids */
} scene;

static void scene_env(const char *var, const char *v)
{
    if (v)
        setenv(var, v, 1);
    else
        unsetenv(var);
}

static int run_scene(void *arg, fdt_sb *out)
{
    const scene *s = arg;
    scene_env("ROCM_PATH", s->rocm);
    scene_env("HIP_PATH", s->hip);
    fdt_err e;
    if (s->what == 1) {
        fdt_rt_lib libs[8];
        int n = fdt_rt_hip.libraries(libs, 8);
        for (int i = 0; i < n; i++)
            fdt_sb_printf(out, "%s|%s|%s|%s\n", libs[i].role, libs[i].path, libs[i].version,
                          libs[i].note);
        return 0;
    }
    if (s->what == 2) {
        char id[1024], ver[256];
        if (fdt_rt_hip.compiler_id("gfx90a", id, sizeof id, &e) ||
            fdt_rt_hip.compiler_version(ver, sizeof ver, &e)) {
            fdt_sb_puts(out, e.msg);
            return -1;
        }
        fdt_sb_printf(out, "%s\n%s", id, ver);
        return 0;
    }
    char dir[PATH_MAX];
    const char *from = NULL;
    fdt_rt_dl d;
    if (fdt_rt_rocm_libdir(dir, sizeof dir, &from, &e) ||
        fdt_rt_rocm_open(FDT_ROCM_RUNTIME, &d, &e)) {
        fdt_sb_puts(out, e.msg);
        return -1;
    }
    fdt_sb_printf(out, "%s\n%s\n%s", dir, from, d.path);
    return 0;
}

/* The scene's answer (0) or its error (-1) in buf. */
static int scene_run(const char *rocm, const char *hip, int what, char *buf, size_t n)
{
    scene s = {rocm, hip, what};
    char *res = NULL;
    size_t len = 0;
    fdt_err e;
    int rc = fdt_run_in_child("scene", run_scene, &s, 60000, &res, &len, &e);
    if (rc)
        snprintf(buf, n, "%s", e.msg);
    else
        snprintf(buf, n, "%.*s", (int)len, res ? res : "");
    free(res);
    return rc;
}

static void test_rocm_search_order(void **state)
{
    (void)state;
    need_runtime();
    char r7[PATH_MAX], h6[PATH_MAX], empty[PATH_MAX], want[PATH_MAX * 2 + 64], got[4096];
    tree_file("rocm7", "libamdhip64.so.7", 0, r7, sizeof r7);
    tree_file("rocm7", "libamdhip64.so.5", 0, r7, sizeof r7); /* loads too: not taken */
    tree_file("hip6", "libamdhip64.so.6", 0, h6, sizeof h6);
    tree_file("empty", "README", 1, empty, sizeof empty);

    assert_int_equal(scene_run(r7, h6, 0, got, sizeof got), 0);
    snprintf(want, sizeof want, "%s/lib\n$ROCM_PATH\n%s/lib/libamdhip64.so.7", r7, r7);
    assert_string_equal(got, want);

    assert_int_equal(scene_run(empty, h6, 0, got, sizeof got), 0);
    snprintf(want, sizeof want, "%s/lib\n$HIP_PATH\n%s/lib/libamdhip64.so.6", h6, h6);
    assert_string_equal(got, want);

    /* neither: the build's ROCm, /opt/rocm, then the loader path, none of the trees */
    assert_int_equal(scene_run(empty, NULL, 0, got, sizeof got), 0);
    assert_null(strstr(got, scratch));
    if (!strstr(got, "/opt/rocm") && !strstr(got, "the ROCm of this build")) {
        snprintf(want, sizeof want, "\nthe loader path\n%s", loader_runtime);
        assert_contains(got, want);
    }
}

/* A runtime file in $ROCM_PATH that does not load is an error naming it: fdtune does not
 * go on to another ROCm behind the user's back. */
static void test_rocm_stub_is_an_error(void **state)
{
    (void)state;
    need_runtime();
    char stub[PATH_MAX], h6[PATH_MAX], want[PATH_MAX + 64], got[4096];
    tree_file("stub", "libamdhip64.so.6", 1, stub, sizeof stub);
    tree_file("hip6", "libamdhip64.so.6", 0, h6, sizeof h6);
    assert_int_equal(scene_run(stub, h6, 0, got, sizeof got), -1);
    snprintf(want, sizeof want, "%s/lib/libamdhip64.so.6", stub);
    assert_contains(got, want);
    assert_contains(got, "the ROCm found first (at $ROCM_PATH)");
}

/* The library report, and the CLI that prints it, name the tree's files and versions. */
static void test_rocm_reported(void **state)
{
    (void)state;
    need_runtime();
    char r7[PATH_MAX], want[PATH_MAX + 64], got[4096];
    tree_file("rocm7", "libamdhip64.so.7", 0, r7, sizeof r7);
    assert_int_equal(scene_run(r7, NULL, 1, got, sizeof got), 0);
    snprintf(want, sizeof want, "HIP runtime|%s/lib/libamdhip64.so.7|HIP ", r7);
    assert_contains(got, want);
    /* Debian's 5.2 has hiprtc inside the runtime: the same file */
    snprintf(want, sizeof want, "hiprtc|%s/lib/libamdhip64.so.7|", r7);
    assert_contains(got, want);
    assert_contains(got, "comgr|/");
    assert_contains(got, "|comgr ");

    const char *saved = getenv("ROCM_PATH");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("ROCM_PATH", r7, 1);
    static const char *const cmds[][4] = {{FDTUNE_BIN, "--version", NULL},
                                          {FDTUNE_BIN, "devices", "--no-bandwidth", NULL}};
    for (int i = 0; i < 2; i++) {
        tu_result r;
        tu_run(&r, scratch, (char *const *)cmds[i]);
        snprintf(want, sizeof want, "%s/lib/libamdhip64.so.7", r7);
        assert_contains(r.out, want);
        assert_contains(r.out, "comgr ");
        tu_result_free(&r);
    }
    scene_env("ROCM_PATH", keep);
    free(keep);
}

/* The compile cache key: comgr's version and the compiler's files, not hiprtcVersion. */
static void test_compiler_id_of_the_tree(void **state)
{
    (void)state;
    need_runtime();
    char r7[PATH_MAX], h6[PATH_MAX], empty[PATH_MAX], a[2048], b[2048], c[2048];
    tree_file("rocm7", "libamdhip64.so.7", 0, r7, sizeof r7);
    tree_file("hip6", "libamdhip64.so.6", 0, h6, sizeof h6);
    tree_file("empty", "README", 1, empty, sizeof empty);
    assert_int_equal(scene_run(r7, NULL, 2, a, sizeof a), 0);
    assert_int_equal(scene_run(empty, h6, 2, b, sizeof b), 0);
    assert_int_equal(scene_run(empty, NULL, 2, c, sizeof c), 0);
    print_message("compiler id in $ROCM_PATH: %s\n", a);
    assert_contains(a, ", comgr ");
    assert_contains(a, " files ");
    assert_contains(a, "hiprtc 7 (in libamdhip64)"); /* the version in the file's name */
    assert_contains(b, "hiprtc 6 (in libamdhip64)");
    assert_null(strstr(c, "9.0"));
    /* one toolchain in three places: three keys */
    *strchr(a, '\n') = *strchr(b, '\n') = *strchr(c, '\n') = 0;
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, c);
    assert_string_not_equal(b, c);
}
#endif

int main(void)
{
    if (tu_mkdtemp(scratch, sizeof scratch, "fdtune-rocm")) {
        fprintf(stderr, "test_rocm: no scratch directory\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_amd_uuid_whole),
        cmocka_unit_test(test_launch_failure_is_the_candidates),
        cmocka_unit_test(test_amdgpu_driver_version),
        cmocka_unit_test(test_files_id),
#ifdef FDTUNE_HAVE_HIP
        cmocka_unit_test(test_rocm_search_order),
        cmocka_unit_test(test_rocm_stub_is_an_error),
        cmocka_unit_test(test_rocm_reported),
        cmocka_unit_test(test_compiler_id_of_the_tree),
#endif
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tu_rmtree(scratch);
    return rc;
}
