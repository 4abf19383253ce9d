/* Runtime tests (no GPU needed): every operator x R in {1,2,4,8} x f32/f64 with a spread of
 * configs compiles through hiprtc for gfx90a and NVRTC for sm_90 with the compiler's own
 * resource report; compilation is isolated (a crash or a hang in the child is an error) and
 * its children, shared by several processes, stay within the pool's slots in all; the
 * compile cache returns what was compiled; messages between processes survive framing. A
 * backend whose compiler is missing is skipped only where the setup script cannot install it
 * (NVRTC comes with the CUDA toolkit); hiprtc must be there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdt_gen.h"
#include "fdt_rt.h"

#define assert_contains(hay, needle)                                                       \
    do {                                                                                   \
        if (!strstr((hay), (needle)))                                                      \
            fail_msg("'%s' does not contain '%s'", (hay), (needle));                        \
    } while (0)

static int compiler_ok(const char *arch)
{
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(arch, &e);
    char v[64];
    return b && b->compiler_version(v, sizeof v, &e) == 0;
}

/* ------------------------------------------------------------------ pure helpers */

static void test_ptxas_parse(void **state)
{
    (void)state;
    const char *log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'other' for 'sm_90'\n"
        "ptxas info    : Used 99 registers, used 0 barriers\n"
        "ptxas info    : Compiling entry function 'k1' for 'sm_90'\n"
        "ptxas info    : Function properties for k1\n"
        "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
        "ptxas info    : Used 40 registers, used 1 barriers, 8704 bytes smem\n";
    fdt_rt_resources r = {-1, -1, -1, -1, -1, -1, -1};
    fdt_rt_parse_ptxas(log, "k1", &r);
    assert_int_equal(r.registers, 40);
    assert_int_equal(r.scratch_bytes, 16);
    assert_int_equal(r.spill_bytes, 8);
    assert_int_equal(r.shared_bytes, 8704);
}

static void test_code_pack_roundtrip(void **state)
{
    (void)state;
    fdt_rt_code c = {0}, d;
    char img[] = {1, 2, 0, 3, 4};
    c.image = img;
    c.size = sizeof img;
    c.log = "the log";
    c.res = (fdt_rt_resources){10, 20, 0, 4, 8, 1024, 256};
    fdt_sb b;
    fdt_sb_init(&b);
    assert_int_equal(fdt_rt_code_pack(&c, &b), 0);
    fdt_err e;
    assert_int_equal(fdt_rt_code_unpack(b.s, b.len, &d, &e), 0);
    assert_int_equal(d.size, sizeof img);
    assert_memory_equal(d.image, img, sizeof img);
    assert_string_equal(d.log, "the log");
    assert_memory_equal(&d.res, &c.res, sizeof c.res);
    fdt_rt_code_free(&d);
    for (size_t cut = 0; cut < b.len; cut++) /* every truncation is refused */
        assert_int_equal(fdt_rt_code_unpack(b.s, cut, &d, &e), -1);
    fdt_sb_free(&b);
}

static int child_ok(void *arg, fdt_sb *out)
{
    fdt_sb_printf(out, "hello %s", (const char *)arg);
    return 0;
}
static int child_fails(void *arg, fdt_sb *out)
{
    (void)arg;
    fdt_sb_puts(out, "it went wrong");
    return -1;
}
static int child_crashes(void *arg, fdt_sb *out)
{
    (void)arg;
    (void)out;
    signal(SIGSEGV, SIG_DFL); /* cmocka's handler would catch it */
    raise(SIGSEGV);
    return 0;
}
static int child_hangs(void *arg, fdt_sb *out)
{
    (void)arg;
    (void)out;
    for (;;)
        pause();
    return 0;
}

static void test_child_isolation(void **state)
{
    (void)state;
    char *r;
    size_t n;
    fdt_err e;
    assert_int_equal(fdt_run_in_child("ok", child_ok, "there", 10000, &r, &n, &e), 0);
    assert_string_equal(r, "hello there");
    free(r);
    assert_int_equal(fdt_run_in_child("job", child_fails, NULL, 10000, &r, &n, &e), -1);
    assert_string_equal(e.msg, "job: it went wrong");
    assert_int_equal(fdt_run_in_child("job", child_crashes, NULL, 10000, &r, &n, &e), -1);
    assert_contains(e.msg, "job: crashed (signal 11");
    double t0 = fdt_now();
    assert_int_equal(fdt_run_in_child("job", child_hangs, NULL, 300, &r, &n, &e), -1);
    assert_contains(e.msg, "timed out after 0.3 s");
    assert_true(fdt_now() - t0 < 5);
}

/* ------------------------------------------------------------------ the shared pool */

/* Children of several processes count themselves in a shared page: how many run now, the
 * most that ever ran at once. */
static volatile int *g_running;

static int child_counted(void *arg, fdt_sb *out)
{
    (void)arg;
    int now = __atomic_add_fetch(&g_running[0], 1, __ATOMIC_SEQ_CST);
    int peak = __atomic_load_n(&g_running[1], __ATOMIC_SEQ_CST);
    while (now > peak &&
           !__atomic_compare_exchange_n(&g_running[1], &peak, now, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST))
        ;
    usleep(60000);
    __atomic_sub_fetch(&g_running[0], 1, __ATOMIC_SEQ_CST);
    fdt_sb_puts(out, "ok");
    return 0;
}

/* Three processes run 6 jobs each, up to 4 at a time of their own, in a pool of 2: never
 * more than 2 children at once in all, and every job done. Without the pool, the same runs
 * reach more than 2 (what the test tells apart). */
static int pool_peak(int share)
{
    g_running[0] = g_running[1] = 0;
    fdt_err e;
    if (share)
        assert_int_equal(fdt_child_pool_share(2, &e), 0);
    pid_t pids[3];
    for (int k = 0; k < 3; k++) {
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0) {
            const char *what[6] = {"a", "b", "c", "d", "e", "f"};
            void *args[6] = {0};
            char *res[6];
            size_t lens[6];
            fdt_err errs[6], fe;
            int failed = fdt_run_many(what, child_counted, args, 6, 4, 20000, res, lens, errs,
                                      &fe);
            for (int i = 0; i < 6; i++)
                free(res[i]);
            _exit(failed == 0 ? 0 : 1);
        }
    }
    for (int k = 0; k < 3; k++) {
        int st = 0;
        assert_int_equal(waitpid(pids[k], &st, 0), pids[k]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    if (share) {
        assert_int_equal(fdt_child_pool_slots(), 2);
        fdt_child_pool_leave();
        assert_int_equal(fdt_child_pool_slots(), 0);
    }
    return g_running[1];
}

static void test_child_pool(void **state)
{
    (void)state;
    g_running = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(g_running != MAP_FAILED);
    assert_true(pool_peak(0) > 2);
    assert_int_equal(pool_peak(1), 2);
    fdt_err e;
    assert_int_equal(fdt_child_pool_share(0, &e), -1);
    assert_contains(e.msg, "0 slots");
    munmap((void *)g_running, 4096);
}

static void test_frames(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fdt_err e;
    assert_int_equal(fdt_frame_write(fds[1], 7, "abc", 3, &e), 0);
    assert_int_equal(fdt_frame_write(fds[1], 8, NULL, 0, &e), 0);
    uint32_t type;
    void *data;
    size_t n;
    assert_int_equal(fdt_frame_read(fds[0], &type, &data, &n, 1000, &e), 0);
    assert_int_equal(type, 7);
    assert_int_equal(n, 3);
    assert_memory_equal(data, "abc", 3);
    free(data);
    assert_int_equal(fdt_frame_read(fds[0], &type, &data, &n, 1000, &e), 0);
    assert_int_equal(type, 8);
    assert_int_equal(n, 0);
    assert_int_equal(fdt_frame_read(fds[0], &type, &data, &n, 100, &e), 1); /* timeout */
    close(fds[1]);
    assert_int_equal(fdt_frame_read(fds[0], &type, &data, &n, 1000, &e), -1);
    assert_contains(e.msg, "closed");
    close(fds[0]);
}

static void test_backend_for_arch(void **state)
{
    (void)state;
    fdt_err e;
#ifdef FDTUNE_HAVE_CUDA
    assert_string_equal(fdt_rt_backend_for_arch("sm_90", &e)->name, "cuda");
#endif
#ifdef FDTUNE_HAVE_HIP
    assert_string_equal(fdt_rt_backend_for_arch("gfx90a", &e)->name, "hip");
#endif
    assert_null(fdt_rt_backend_for_arch("tpu_v5", &e));
    assert_contains(e.msg, "target 'tpu_v5'");
}

/* ------------------------------------------------------------------ compilation */

static const char *const spread[] = {
    "default",
    "bx=32,by=8,tile=4",
    "bx=64,by=4,nw=16,tile=2",
    "bx=24,by=5,bz=3,tile=3,vec=2,align=2,order=yzx,split=2,nt=1",
    "bx=32,by=8,nw=32,lds=1,vec=V,align=64,lb=256",
    /* the ring (lds=2): vector copies with a tile, scalar copies on an odd block with the
     * L2 prefetch hint */
    "bx=32,by=4,nw=16,lds=2,vec=V,align=64,pf=2,tile=2,lb=128",
    "bx=24,by=5,nw=7,lds=2,align=2,pf=3,order=yzx,split=2,l2pf=256",
};

static void compile_matrix(const char *arch)
{
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(arch, &e);
    static const int radii[] = {1, 2, 4, 8};
    int compiled = 0;
    for (int op = 0; op < FDT_OP_COUNT; op++)
        for (int ri = 0; ri < 4; ri++)
            for (int prec = 0; prec < 2; prec++)
                for (size_t ci = 0; ci < sizeof spread / sizeof spread[0]; ci++) {
                    fdt_problem p = {(fdt_op)op, radii[ri], (fdt_prec)prec, 301, 203, 157};
                    char text[128];
                    snprintf(text, sizeof text, "%s", spread[ci]);
                    char *v = strstr(text, "vec=V");
                    if (v)
                        v[4] = prec == FDT_F32 ? '4' : '2';
                    fdt_config c;
                    assert_int_equal(fdt_config_parse(text, &c, &e), 0);
                    if (op == FDT_OP_D2Z && c.lds == 1) /* no x/y neighbours to share */
                        fdt_config_parse("bx=32,by=8,nw=64,vec=2,align=64,tile=2", &c, &e);
                    if (fdt_config_check(&p, &c, &e))
                        fail_msg("%s R=%d: %s: %s", fdt_op_name(p.op), p.R, text, e.msg);
                    char name[96];
                    fdt_gen_kernel_name(&p, &c, name, sizeof name);
                    fdt_sb src;
                    fdt_sb_init(&src);
                    assert_int_equal(fdt_gen_source(&p, &c, name, NULL, &src, &e), 0);
                    fdt_rt_code code;
                    if (fdt_rt_compile(b, fdt_sb_str(&src), name, arch, 300000, &code, &e))
                        fail_msg("%s R=%d %s %s for %s: %s", fdt_op_name(p.op), p.R,
                                 fdt_prec_name(p.prec), text, arch, e.msg);
                    assert_true(code.size > 0);
                    /* the compiler's numbers, not a guess */
                    assert_true(code.res.registers > 0 && code.res.registers <= 512);
                    assert_true(code.res.spill_bytes >= 0 && code.res.scratch_bytes >= 0);
                    fdt_geometry g;
                    fdt_gen_geometry(&p, &c, &g, &e);
                    /* the ring's tiles are dynamic: the compiler sees no static part */
                    assert_int_equal(g.shared_dynamic, c.lds == 2);
                    if (c.lds == 1)
                        assert_int_equal(code.res.shared_bytes, (int)g.shared_bytes);
                    else
                        assert_int_equal(code.res.shared_bytes, 0);
                    fdt_rt_code_free(&code);
                    fdt_sb_free(&src);
                    compiled++;
                }
    for (int prec = 0; prec < 2; prec++) {
        fdt_sb src;
        fdt_sb_init(&src);
        assert_int_equal(fdt_gen_util_source((fdt_prec)prec, &src, &e), 0);
        fdt_rt_code code;
        char name[32];
        snprintf(name, sizeof name, "fdt_compare_%s", fdt_prec_name((fdt_prec)prec));
        if (fdt_rt_compile(b, fdt_sb_str(&src), name, arch, 300000, &code, &e))
            fail_msg("verification kernels for %s: %s", arch, e.msg);
        fdt_rt_code_free(&code);
        fdt_sb_free(&src);
    }
    print_message("compiled %d candidates for %s\n", compiled, arch);
}

static void test_compile_gfx90a(void **state)
{
    (void)state;
    if (!compiler_ok("gfx90a"))
        fail_msg("hiprtc is not available: install libamdhip64-dev (scripts/setup.sh does)");
    setenv("FDTUNE_CACHE", "", 1); /* really compile */
    compile_matrix("gfx90a");
}

static void test_compile_sm90(void **state)
{
    (void)state;
    if (!compiler_ok("sm_90")) {
        print_message("NVRTC not found (CUDA toolkit not installed): sm_90 not compiled\n");
        skip();
    }
    setenv("FDTUNE_CACHE", "", 1);
    compile_matrix("sm_90");
}

static void test_compile_errors(void **state)
{
    (void)state;
    fdt_err e;
    const char *bad = "extern \"C\" __global__ void k() { this is not code; }";
    for (int i = 0; i < fdt_rt_backend_count(); i++) {
        const fdt_rt_backend *b = fdt_rt_backend_at(i);
        if (!compiler_ok(b->example_arch))
            continue;
        fdt_rt_code code;
        assert_int_equal(fdt_rt_compile(b, bad, "k", b->example_arch, 60000, &code, &e), -1);
        assert_contains(e.msg, "failed");
        assert_contains(e.msg, "this is not code");
    }
    /* hiprtc of ROCm < 5.6 crashes on gfx942: refused with a message instead */
    if (compiler_ok("gfx90a")) {
        const fdt_rt_backend *b = fdt_rt_backend_for_arch("gfx90a", &e);
        char v[64];
        b->compiler_version(v, sizeof v, &e);
        fdt_rt_code code;
        int rc = fdt_rt_compile(b, "extern \"C\" __global__ void k() {}", "k", "gfx942", 60000,
                                &code, &e);
        if (strstr(v, "in libamdhip64")) {
            assert_int_equal(rc, -1);
            assert_contains(e.msg, "cannot compile for gfx942");
        } else if (rc == 0) {
            fdt_rt_code_free(&code);
        }
    }
}

static void test_compile_cache(void **state)
{
    (void)state;
    const char *arch = compiler_ok("gfx90a") ? "gfx90a" : compiler_ok("sm_90") ? "sm_90" : NULL;
    if (!arch)
        skip();
    char dir[] = "/tmp/fdtune-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("FDTUNE_CACHE", dir, 1);
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(arch, &e);
    const char *src = "extern \"C\" __global__ void k(float* o) { o[threadIdx.x] = 1.5f; }";
    fdt_rt_code a, c;
    assert_int_equal(fdt_rt_compile(b, src, "k", arch, 60000, &a, &e), 0);
    assert_int_equal(a.cached, 0);
    assert_int_equal(fdt_rt_compile(b, src, "k", arch, 60000, &c, &e), 0);
    assert_int_equal(c.cached, 1);
    assert_int_equal(a.size, c.size);
    assert_memory_equal(a.image, c.image, a.size);
    assert_memory_equal(&a.res, &c.res, sizeof a.res);
    fdt_rt_code_free(&c);
    /* another source is another entry */
    assert_int_equal(fdt_rt_compile(b, "extern \"C\" __global__ void k(float* o) { o[0] = 2; }",
                                    "k", arch, 60000, &c, &e), 0);
    assert_int_equal(c.cached, 0);
    fdt_rt_code_free(&a);
    fdt_rt_code_free(&c);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    setenv("FDTUNE_CACHE", "", 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ptxas_parse),     cmocka_unit_test(test_code_pack_roundtrip),
        cmocka_unit_test(test_child_isolation), cmocka_unit_test(test_child_pool),
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_backend_for_arch), cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_compile_cache),   cmocka_unit_test(test_compile_gfx90a),
        cmocka_unit_test(test_compile_sm90),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
