/* The host CPU's backend (issue 28, section 2; no GPU needed): the device facts are sane on
 * this machine and the cpu target resolves from them and from its architecture names; the
 * GPU probe, the default targets and `--gpu auto` never pick the CPU; a hand-written C kernel
 * (`void k(void **args)` adding two arrays) compiles through fdt_rt_compile and the cache (the
 * second compile is a cache hit), loads and runs with the backend's own calls and gives the
 * right sums; a kernel that crashes (SIGSEGV) and one that hangs, run in an isolated child,
 * cost that child, not this process; the isolated worker starts on the CPU and measures its
 * copy bandwidth; the cache flush reads a buffer of twice the last-level cache; gcc and clang
 * both compile, each its own compiler in the cache's key; a compile error shows the
 * compiler's message; no compiler ($CC=/nonexistent) and a compiler without OpenMP are errors
 * that name $CC, and `fdtune devices` exits 4 on them. The damped step (dwave) runs every
 * deployment through the worker, verified; a box left out fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdt_eval.h"
#include "fdt_session.h"
#include "fdt_target.h"
#include "testutil.h"

#ifndef FDTUNE_BIN
#error "FDTUNE_BIN (the fdtune executable) must be defined by the build"
#endif

static const char *const kernel_src =
    "#include <stddef.h>\n"
    "void k(void **args)\n"
    "{\n"
    "    float *c = *(float **)args[0];\n"
    "    const float *a = *(const float **)args[1], *b = *(const float **)args[2];\n"
    "    long long n = *(long long *)args[3];\n"
    "#pragma omp parallel for simd\n"
    "    for (long long i = 0; i < n; i++)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n";

static const char *const crash_src = "void crash(void **args)\n"
                                     "{\n"
                                     "    (void)args;\n"
                                     "    *(volatile int *)16 = 1;\n"
                                     "}\n"
                                     "void hang(void **args)\n"
                                     "{\n"
                                     "    (void)args;\n"
                                     "    for (volatile int i = 0;; i += 0)\n"
                                     "        ;\n"
                                     "}\n";

static const fdt_rt_backend *cpu(void)
{
    const fdt_rt_backend *b = fdt_rt_backend_find("cpu");
    if (!b)
        fail_msg("no backend cpu in this build");
    return b;
}

static void describe(fdt_device *d)
{
    fdt_err e;
    if (cpu()->device_info(0, d, &e))
        fail_msg("cpu device_info: %s", e.msg);
}

static void test_facts(void **state)
{
    (void)state;
    fdt_device d;
    describe(&d);
    assert_int_equal(cpu()->host, 1);
    assert_string_equal(d.backend, "cpu");
    static const char *const arches[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4", "aarch64",
                                         "aarch64-sve"};
    int known = 0;
    for (int i = 0; i < 5; i++)
        known |= !strcmp(d.arch, arches[i]);
    if (!known)
        fail_msg("arch '%s' is none of the five CPU ISA levels", d.arch);
    assert_true(d.name[0] && d.vendor[0] && d.simd[0] && d.core_ids[0]);
    assert_true(d.compute_units >= 1);
    assert_true(d.threads >= d.compute_units);
    assert_true(d.sockets >= 1 && d.numa_nodes >= 1);
    assert_true(d.vector_bytes >= 16);
    assert_true(d.l1d_bytes > 0 && d.l2_bytes > 0 && d.llc_bytes >= d.l2_bytes);
    assert_true(d.mem_bytes > 0);
    assert_memory_equal(d.uuid, "cpu-", 4);
    assert_int_equal(strlen(d.uuid), 4 + 16);
    assert_true(d.compiler_version[0] != 0);
    /* the CPU keeps the last-level cache it read (derive would take L2 for a GPU) */
    int64_t llc = d.llc_bytes;
    fdt_device_derive(&d);
    assert_true(d.llc_bytes == llc);
    /* a problem under four times the LLC is timed after a flush of twice the LLC */
    fdt_problem p = {0};
    p.op = FDT_OP_LAP;
    p.R = 4;
    p.prec = FDT_F32;
    p.nx = p.ny = p.nz = 16;
    assert_true(fdt_eval_flush_bytes(&d, &p) == 2 * (uint64_t)llc);
    /* the cores are the process's first mask, not the calling thread's mask now: OpenMP binds
     * the thread that runs a kernel to one core, and the copy team started after that was one
     * thread (23 GB/s of copy on a 16-core host that copies 119) */
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    fdt_device bound;
    describe(&bound);
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    assert_int_equal(bound.compute_units, d.compute_units);
}

static void test_target(void **state)
{
    (void)state;
    fdt_device d;
    fdt_target t;
    fdt_err e;
    describe(&d);
    assert_int_equal(fdt_target_resolve(&d, &t, &e), 0);
    assert_ptr_equal(t.backend, cpu());
    assert_int_equal(t.gen.dialect, FDT_DIALECT_C);
    assert_string_equal(t.rules->name, "cpu");
    fdt_rt_resources res = {-1, -1, -1, -1, -1, -1, -1, -1, 1000};
    fdt_config c;
    fdt_config_default(&c);
    fdt_geometry g = {0};
    char buf[256];
    assert_null(fdt_target_prune(&t, &res, &c, &g, buf, sizeof buf));
    assert_int_equal(fdt_target_spill_check(&t, &res, buf, sizeof buf), 0);
    fdt_target_occupancy(&t, &res, &c, &g, buf, sizeof buf);
    char want[64];
    snprintf(want, sizeof want, "threads: %d on cores ", d.compute_units);
    assert_has(buf, want);
    static const char *const arches[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4", "aarch64",
                                         "aarch64-sve"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(fdt_target_for_arch(arches[i], &t, &e), 0);
        assert_string_equal(t.device.backend, "cpu");
        assert_int_equal(t.gen.dialect, FDT_DIALECT_C);
        assert_ptr_equal(fdt_rt_backend_for_arch(arches[i], &e), cpu());
    }
    /* the compiler builds for this CPU's family: the other family's names are refused */
    int x86 = !strncmp(d.arch, "x86-64", 6);
    assert_null(fdt_rt_backend_for_target(x86 ? "aarch64" : "x86-64-v2", &e));
    assert_has(e.msg, d.arch);
    assert_ptr_equal(fdt_rt_backend_for_target(x86 ? "x86-64-v4" : "aarch64-sve", &e), cpu());
    /* the compiler's identity: real path, version, options, what native means here */
    char id[1024];
    assert_int_equal(cpu()->compiler_id(d.arch, id, sizeof id, &e), 0);
    assert_has(id, "-fopenmp -fPIC -shared");
    assert_has(id, x86 ? "-march=native" : "-mcpu=native");
    assert_has(id, d.name);
    assert_has(id, "predefined ");
    const char *level = x86 ? (strcmp(d.arch, "x86-64-v2") ? "x86-64-v2" : "x86-64-v3")
                            : (strcmp(d.arch, "aarch64") ? "aarch64" : "aarch64-sve");
    char other[1024];
    assert_int_equal(cpu()->compiler_id(level, other, sizeof other, &e), 0);
    assert_lacks(other, "native");
    assert_has(other, x86 ? "-march=x86-64-v" : "-march=armv8-a");
}

/* The CPU is no GPU: the probe lists GPUs only, the default targets are the GPUs', and
 * `--gpu auto` never resolves to the CPU. */
static void test_not_a_gpu(void **state)
{
    (void)state;
    fdt_probe p;
    fdt_err e;
    assert_int_equal(fdt_probe_devices(&p, &e), 0);
    for (int i = 0; i < p.ndevices; i++)
        assert_string_not_equal(p.device[i].backend, "cpu");
    for (int i = 0; i < p.nbackends; i++)
        assert_string_not_equal(p.backend[i].name, "cpu");
    const char *targets[8];
    int nskipped = 0;
    fdt_rt_unavailable skipped[8];
    int n = fdt_rt_default_targets(targets, 8, skipped, &nskipped);
    for (int i = 0; i < n; i++)
        assert_ptr_not_equal(fdt_rt_backend_for_arch(targets[i], &e), cpu());
    for (int i = 0; i < nskipped; i++)
        assert_ptr_not_equal(skipped[i].b, cpu());
    const char *gpu = "auto";
    fdt_device dev;
    fdt_status st = fdt_session_resolve_auto(&gpu, NULL, NULL, &p, &dev, &e);
    if (st == FDT_STATUS_OK)
        assert_string_not_equal(dev.backend, "cpu");
    else
        assert_int_equal(st, FDT_STATUS_NO_GPU);
    /* the host probe is the CPU's own */
    fdt_device h;
    assert_int_equal(fdt_probe_host(&h, &e), 0);
    assert_string_equal(h.backend, "cpu");
}

static void compile(const char *src, const char *kernel, fdt_rt_code *c)
{
    fdt_device d;
    fdt_err e;
    describe(&d);
    if (fdt_rt_compile(cpu(), src, kernel, d.arch, 120000, c, &e))
        fail_msg("compile of %s: %s", kernel, e.msg);
}

/* gcc and clang both build kernels; each is its own compiler in the cache's key, so a
 * kernel compiled by one is never served for the other. */
static void test_clang(void **state)
{
    (void)state;
    char clang[1024], cache[1024];
    if (fdt_find_program("clang-16", clang, sizeof clang) &&
        fdt_find_program("clang", clang, sizeof clang))
        skip(); /* scripts/setup.sh installs clang-16 and libomp-16-dev */
    fdt_device d;
    fdt_err e;
    describe(&d);
    assert_int_equal(tu_mkdtemp(cache, sizeof cache, "fdtune-cpu-clang"), 0);
    setenv("FDTUNE_CACHE", cache, 1);
    char gcc_id[1024], clang_id[1024];
    assert_int_equal(cpu()->compiler_id(d.arch, gcc_id, sizeof gcc_id, &e), 0);
    fdt_rt_code c1, c2;
    compile(kernel_src, "k", &c1);
    assert_int_equal(c1.cached, 0);
    setenv("CC", clang, 1);
    if (cpu()->compiler_id(d.arch, clang_id, sizeof clang_id, &e))
        fail_msg("clang: %s", e.msg);
    assert_string_not_equal(gcc_id, clang_id);
    assert_has(clang_id, "clang");
    compile(kernel_src, "k", &c2);
    unsetenv("CC");
    assert_int_equal(c2.cached, 0); /* not gcc's object */
    assert_true(c2.size > 4 && !memcmp(c2.image, "\177ELF", 4));
    fdt_rt_code_free(&c1);
    fdt_rt_code_free(&c2);
    unsetenv("FDTUNE_CACHE");
    tu_rmtree(cache);
}

/* A source that does not compile: the compiler's message, the kernel and target named. */
static void test_compile_error(void **state)
{
    (void)state;
    fdt_device d;
    fdt_err e;
    fdt_rt_code c;
    describe(&d);
    /* the compiler's scratch directories are removed, after a failure and after a success */
    char tmp[1024];
    assert_int_equal(tu_mkdtemp(tmp, sizeof tmp, "fdtune-cpu-tmp"), 0);
    const char *old_tmp = getenv("TMPDIR");
    char *saved = old_tmp ? strdup(old_tmp) : NULL;
    setenv("TMPDIR", tmp, 1);
    setenv("FDTUNE_CACHE", "", 1); /* no cache: the compiler runs */
    assert_int_equal(fdt_rt_compile(cpu(), "void k(void **a) { this is not code; }", "k",
                                    d.arch, 60000, &c, &e), -1);
    assert_int_equal(fdt_rt_compile(cpu(), "void k(void **a) { (void)a; }", "k", d.arch, 60000,
                                    &c, &e), 0);
    fdt_rt_code_free(&c);
    unsetenv("FDTUNE_CACHE");
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    assert_int_equal(rmdir(tmp), 0); /* fails unless empty */
    assert_int_equal(fdt_rt_compile(cpu(), "void k(void **a) { this is not code; }", "k",
                                    d.arch, 60000, &c, &e), -1);
    assert_has(e.msg, "cpu compile of k for ");
    assert_has(e.msg, "failed");
    assert_has(e.msg, "this is not code");
    /* test_runtime's check of every backend: its example arch, a GPU source */
    assert_int_equal(fdt_rt_compile(cpu(), "extern \"C\" __global__ void k() { this is not code; }",
                                    "k", cpu()->example_arch, 60000, &c, &e), -1);
    assert_has(e.msg, "failed");
    assert_has(e.msg, "this is not code");
}

static void test_compile_run(void **state)
{
    (void)state;
    char cache[1024];
    assert_int_equal(tu_mkdtemp(cache, sizeof cache, "fdtune-cpu-cache"), 0);
    setenv("FDTUNE_CACHE", cache, 1);
    fdt_rt_code c1, c2;
    compile(kernel_src, "k", &c1);
    assert_int_equal(c1.cached, 0);
    assert_true(c1.size > 4 && !memcmp(c1.image, "\177ELF", 4));
    assert_true(c1.res.code_bytes > 0);
    compile(kernel_src, "k", &c2);
    assert_int_equal(c2.cached, 1);
    assert_int_equal(c2.size, c1.size);
    assert_memory_equal(c2.image, c1.image, c1.size);
    /* run it with the backend's own calls, as the worker does */
    const fdt_rt_backend *b = cpu();
    fdt_err e;
    void *mod, *fn, *ev[2];
    long long n = 100003;
    uint64_t a, bb, out;
    assert_int_equal(b->open(0, &e), 0);
    assert_string_equal(getenv("OMP_PLACES"), "cores");
    assert_string_equal(getenv("OMP_PROC_BIND"), "close");
    assert_string_equal(getenv("OMP_DYNAMIC"), "false");
    fdt_device d;
    describe(&d);
    /* threads spin where there are cores to spare, sleep on 2 cores or fewer */
    assert_string_equal(getenv("OMP_WAIT_POLICY"), d.compute_units > 2 ? "active" : "passive");
    assert_int_equal(atoi(getenv("OMP_NUM_THREADS")), d.compute_units);
    assert_int_equal(b->module_load(c2.image, c2.size, &mod, &e), 0);
    assert_int_equal(b->module_function(mod, "k", &fn, &e), 0);
    assert_int_equal(b->module_function(mod, "nothere", &fn, &e), -1);
    assert_has(e.msg, "nothere");
    assert_int_equal(b->module_function(mod, "k", &fn, &e), 0);
    size_t bytes = (size_t)n * sizeof(float);
    assert_int_equal(b->alloc(bytes, &a, &e) || b->alloc(bytes, &bb, &e) ||
                         b->alloc(bytes, &out, &e), 0);
    /* three arrays read at one index: 4 KiB-aligned starts in distinct sets of a 128 KiB
     * cache way (the L2's on current servers), each 68 KiB x k (k < 16) into a huge page */
    const uint64_t way = 128u << 10, starts[3] = {a, bb, out};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(starts[i] % 4096, 0);
        assert_int_equal(starts[i] % (2u << 20) % (68u << 10), 0);
        assert_true(starts[i] % (2u << 20) <= 15 * (68u << 10));
        for (int j = 0; j < i; j++)
            assert_int_not_equal(starts[i] % way, starts[j] % way);
    }
    float *h = malloc(bytes), *r = malloc(bytes);
    for (long long i = 0; i < n; i++)
        h[i] = (float)i;
    assert_int_equal(b->copy_h2d(a, h, bytes, &e) || b->copy_h2d(bb, h, bytes, &e), 0);
    assert_int_equal(b->memset_async(out, 0xff, bytes, &e), 0);
    void *args[] = {&out, &a, &bb, &n};
    uint32_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
    float ms = -1;
    assert_int_equal(b->event_create(&ev[0], &e) || b->event_create(&ev[1], &e), 0);
    assert_int_equal(b->event_record(ev[0], &e) || b->launch(fn, grid, block, 0, args, &e) ||
                         b->event_record(ev[1], &e) || b->sync(&e),
                     0);
    assert_int_equal(b->event_elapsed(ev[0], ev[1], &ms, &e), 0);
    assert_true(ms >= 0);
    assert_int_equal(b->copy_d2h(r, out, bytes, &e), 0);
    for (long long i = 0; i < n; i++)
        if (r[i] != 2.0f * (float)i)
            fail_msg("c[%lld] = %g, want %g", i, r[i], 2.0 * i);
    /* the device copy and the read flush on the pinned team */
    assert_int_equal(b->copy_d2d_async(a, out, bytes, &e), 0);
    assert_int_equal(b->copy_d2h(h, a, bytes, &e), 0);
    assert_memory_equal(h, r, bytes);
    assert_int_equal(b->flush(out, bytes, &e), 0);
    size_t fr = 0, total = 0;
    assert_int_equal(b->mem_info(&fr, &total, &e), 0);
    assert_true(total > 0 && fr <= total);
    b->event_destroy(ev[0]);
    b->event_destroy(ev[1]);
    b->free(a);
    b->free(bb);
    b->free(out);
    b->module_unload(mod);
    free(h);
    free(r);
    fdt_rt_code_free(&c1);
    fdt_rt_code_free(&c2);
    tu_rmtree(cache);
    unsetenv("FDTUNE_CACHE");
}

/* Two objects with an entry point of one name: each module answers with its own, whether
 * loaded side by side or one after the other (the worker keeps its verification kernels
 * loaded while it loads each candidate). */
static void test_modules(void **state)
{
    (void)state;
    const fdt_rt_backend *b = cpu();
    fdt_rt_code one, two;
    fdt_err e;
    compile("int v(void) { return 1; }\nvoid f(void **a) { *(int *)a[0] = v(); }\n", "f", &one);
    compile("int v(void) { return 2; }\nvoid f(void **a) { *(int *)a[0] = v(); }\n", "f", &two);
    void *m1, *m2, *fn;
    int got = 0;
    void *args[] = {&got};
    uint32_t g[3] = {1, 1, 1};
    assert_int_equal(b->module_load(one.image, one.size, &m1, &e), 0);
    assert_int_equal(b->module_load(two.image, two.size, &m2, &e), 0);
    assert_int_equal(b->module_function(m2, "f", &fn, &e) || b->launch(fn, g, g, 0, args, &e), 0);
    assert_int_equal(got, 2);
    assert_int_equal(b->module_function(m1, "f", &fn, &e) || b->launch(fn, g, g, 0, args, &e), 0);
    assert_int_equal(got, 1);
    b->module_unload(m2);
    for (int k = 0; k < 3; k++) { /* loaded and unloaded in turn, m1 still loaded */
        const fdt_rt_code *c = k % 2 ? &one : &two;
        assert_int_equal(b->module_load(c->image, c->size, &m2, &e), 0);
        assert_int_equal(b->module_function(m2, "f", &fn, &e) || b->launch(fn, g, g, 0, args, &e),
                         0);
        assert_int_equal(got, k % 2 ? 1 : 2);
        b->module_unload(m2);
    }
    b->module_unload(m1);
    fdt_rt_code_free(&one);
    fdt_rt_code_free(&two);
}

/* A kernel of crash_src run in a child, as the isolated worker runs every candidate. */
typedef struct faulty {
    const fdt_rt_code *code;
    const char *kernel;
} faulty;

static int run_faulty(void *arg, fdt_sb *out)
{
    const faulty *f = arg;
    fdt_err e;
    void *mod, *fn, *args[1] = {NULL};
    uint32_t one[3] = {1, 1, 1};
    signal(SIGSEGV, SIG_DFL); /* cmocka's handler would go on running tests in this child */
    if (cpu()->open(0, &e) || cpu()->module_load(f->code->image, f->code->size, &mod, &e) ||
        cpu()->module_function(mod, f->kernel, &fn, &e) ||
        cpu()->launch(fn, one, one, 0, args, &e)) {
        fdt_sb_puts(out, e.msg);
        return -1;
    }
    return 0;
}

static void test_faults(void **state)
{
    (void)state;
    fdt_rt_code c;
    fdt_err e;
    compile(crash_src, "crash", &c);
    faulty crash = {&c, "crash"}, hang = {&c, "hang"};
    char *res = NULL;
    size_t n = 0;
    assert_int_equal(fdt_run_in_child("crashing kernel", run_faulty, &crash, 20000, &res, &n,
                                      &e), -1);
    assert_has(e.msg, "crashing kernel");
    assert_has(e.msg, "signal");
    assert_int_equal(fdt_run_in_child("hanging kernel", run_faulty, &hang, 1500, &res, &n, &e),
                     -1);
    assert_has(e.msg, "hanging kernel");
    fdt_rt_code_free(&c);
}

/* The isolated worker runs on the CPU: it starts, describes the CPU and measures the copy. */
static void test_worker(void **state)
{
    (void)state;
    fdt_worker *w = NULL;
    fdt_device info;
    fdt_err e;
    if (fdt_worker_start("cpu", 0, NULL, &w, &info, &e))
        fail_msg("worker on the CPU: %s", e.msg);
    assert_string_equal(info.backend, "cpu");
    assert_int_equal(fdt_worker_target(w)->gen.dialect, FDT_DIALECT_C);
    double gbs = 0;
    if (fdt_worker_copy_bandwidth(w, (size_t)64 << 20, &gbs, &e))
        fail_msg("copy bandwidth: %s", e.msg);
    assert_true(gbs > 0.1);
    assert_int_equal(fdt_worker_restarts(w), 0);
    fdt_worker_stop(w);
}

/* One config built for the worker's target and evaluated: its status, and its message. */
static fdt_eval_status eval_config(fdt_worker *w, const fdt_problem *p, const char *text,
                                   fdt_eval_result *r)
{
    fdt_config c;
    fdt_err e;
    if (fdt_config_parse(text, &c, &e))
        fail_msg("config %s: %s", text, e.msg);
    fdt_cand v, *pv = &v;
    fdt_cand_init(&v, FDT_CAND_STENCIL, &c, NULL);
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    if (fdt_target_build(fdt_worker_target(w), p, &pv, 1, &o, &e) || v.state != FDT_CAND_READY)
        fail_msg("building %s for the CPU: %s", text, e.msg[0] ? e.msg : v.err.msg);
    fdt_timing_opts t;
    fdt_timing_opts_probe(&t);
    if (fdt_worker_eval(w, &c, &v.code, v.kernel, &t, r, &e))
        fail_msg("evaluating %s: %s", text, e.msg);
    fdt_cand_free(&v);
    print_message("%-12s %d %.4f ms %.1f GB/s %.2f of copy %s\n", text, r->status,
                  r->timing.median_ms, r->gbs, r->frac_copy, r->message);
    return r->status;
}

/* A problem on the CPU through the isolated worker, as on a GPU: set up (inputs, reference
 * checked), candidates verified and timed; broken kernels (bench/faults.sh's: a wrong sign,
 * a halo write, an illegal address, a kernel that never ends) cost their candidate, the
 * worker restarts after the crash and the hang, and a correct kernel after them is ok. */
static void test_worker_faults(void **state)
{
    (void)state;
    fdt_worker *w = NULL;
    fdt_worker_opts o;
    fdt_err e;
    fdt_worker_opts_default(&o);
    o.eval_timeout_ms = 8000;
    if (fdt_worker_start("cpu", 0, &o, &w, NULL, &e))
        fail_msg("worker on the CPU: %s", e.msg);
    fdt_problem p = {0};
    p.op = FDT_OP_LAP;
    p.R = 4;
    p.prec = FDT_F32;
    p.nx = p.ny = p.nz = 48;
    fdt_setup_result sr;
    if (fdt_worker_setup(w, &p, &sr, &e))
        fail_msg("setup on the CPU: %s", e.msg);
    assert_true(sr.copy_gbs > 0.1);
    print_message("setup copy %.1f GB/s\n", sr.copy_gbs);
    assert_true(sr.ref_points > 0);
    fdt_eval_result r;
    assert_int_equal(eval_config(w, &p, "default", &r), FDT_EVAL_OK);
    assert_true(r.gbs > 0 && r.frac_copy > 0);
    assert_true(r.timing.flushed); /* 48^3 fits the last-level cache: flushed by reading */
    assert_int_equal(eval_config(w, &p, "fault=coef", &r), FDT_EVAL_WRONG);
    assert_int_equal(eval_config(w, &p, "fault=halo", &r), FDT_EVAL_WRONG);
    assert_int_equal(eval_config(w, &p, "fault=oob", &r), FDT_EVAL_CRASHED);
    assert_has(r.message, "signal 11");
    /* a dead worker is brought back (and the problem set up again) by the next evaluation */
    assert_int_equal(eval_config(w, &p, "fault=hang", &r), FDT_EVAL_TIMEOUT);
    assert_int_equal(fdt_worker_restarts(w), 1);
    assert_int_equal(eval_config(w, &p, "default", &r), FDT_EVAL_OK);
    assert_int_equal(fdt_worker_restarts(w), 2);
    fdt_worker_stop(w);
}

/* A dwave problem (R=2, a layer of 6 points, strong damping) set up on a fresh CPU worker. */
static fdt_worker *dwave_worker(fdt_problem *p, fdt_prec prec)
{
    fdt_worker *w = NULL;
    fdt_err e;
    memset(p, 0, sizeof *p);
    p->op = FDT_OP_DWAVE;
    p->R = 2;
    p->prec = prec;
    p->nx = 40;
    p->ny = 36;
    p->nz = 32;
    p->absorb_w = 6;
    p->absorb_s = 0.5;
    if (fdt_worker_start("cpu", 0, NULL, &w, NULL, &e))
        fail_msg("worker on the CPU: %s", e.msg);
    fdt_setup_result sr;
    if (fdt_worker_setup(w, p, &sr, &e))
        fail_msg("dwave setup on the CPU: %s", e.msg);
    assert_true(sr.ref_points > 0);
    return w;
}

/* The damped step through the real worker: every deployment (complete, inout, sides) with
 * each damping source (eta=dist, eta=array) verifies against the reference (the default
 * config's complete deployment), in f32 and f64; a wrong kernel fails, and so does a step
 * that leaves one box of its deployment unwritten (FDTUNE_TEST_DROP_BOX): the poison the
 * worker fills the output with shows there. Each is timed on its first planes too. Each
 * evaluation after an inout or sides one finds its inputs as they were filled (the layers'
 * timing rotates the fields through them and fills them again): else it fails. */
static void test_worker_dwave(void **state)
{
    (void)state;
    static const char *const deploys[] = {"complete", "inout", "sides"};
    static const char *const etas[] = {"dist", "array"};
    char cfg[96];
    fdt_problem p;
    fdt_eval_result r;
    for (int prec = FDT_F32; prec <= FDT_F64; prec++) {
        fdt_worker *w = dwave_worker(&p, (fdt_prec)prec);
        for (int d = 0; d < 3; d++)
            for (int x = 0; x < 2; x++) {
                snprintf(cfg, sizeof cfg, "deploy=%s,eta=%s", deploys[d], etas[x]);
                if (eval_config(w, &p, cfg, &r) != FDT_EVAL_OK)
                    fail_msg("dwave %s %s: %s", fdt_prec_name(p.prec), cfg, r.message);
                assert_true(r.gbs > 0);
                /* the layer kernels timed alone: none in complete, a time in the others */
                if (d == 0)
                    assert_true(r.layers_ms == 0);
                else
                    assert_true(r.layers_ms > 0 && r.layers_ms < 1e6);
                /* the grid's first 2R planes alone (a data-parallel CPU part), in every
                 * deployment; what they wrote passed the check after the timing */
                assert_true(r.part_ms > 0 && r.part_ms < 1e6);
            }
        if (prec == FDT_F32)
            assert_int_equal(eval_config(w, &p, "deploy=sides,fault=coef", &r), FDT_EVAL_WRONG);
        fdt_worker_stop(w);
    }
    /* box 1: inout's interior, sides' first z slab; complete has no box 1 and still verifies */
    setenv("FDTUNE_TEST_DROP_BOX", "1", 1);
    fdt_worker *w = dwave_worker(&p, FDT_F32);
    unsetenv("FDTUNE_TEST_DROP_BOX");
    assert_int_equal(eval_config(w, &p, "deploy=inout", &r), FDT_EVAL_WRONG);
    assert_has(r.message, "not finite");
    assert_int_equal(eval_config(w, &p, "deploy=sides,eta=array", &r), FDT_EVAL_WRONG);
    assert_has(r.message, "not finite");
    assert_int_equal(eval_config(w, &p, "deploy=complete", &r), FDT_EVAL_OK);
    fdt_worker_stop(w);
}

/* `fdtune devices` with CC set: its status and what it wrote. */
static void devices_with_cc(const char *cc, tu_result *r)
{
    char dir[1024];
    assert_int_equal(tu_mkdtemp(dir, sizeof dir, "fdtune-cpu-cc"), 0);
    setenv("CC", cc, 1);
    char *argv[] = {(char *)FDTUNE_BIN, "devices", "--no-bandwidth", NULL};
    tu_run(r, dir, argv);
    unsetenv("CC");
    tu_rmtree(dir);
}

/* `fdtune devices` lists the CPU with the library's facts and a measured copy bandwidth. */
static void test_devices(void **state)
{
    (void)state;
    fdt_device d;
    describe(&d);
    char dir[1024], want[512];
    assert_int_equal(tu_mkdtemp(dir, sizeof dir, "fdtune-cpu-devices"), 0);
    char *argv[] = {(char *)FDTUNE_BIN, "devices", "--json", NULL};
    tu_result r;
    tu_run(&r, dir, argv);
    expect_status(&r, 0);
    assert_has(r.out, "\"hosts\": [{\"backend\": \"cpu\"");
    snprintf(want, sizeof want, "\"name\": \"%s\", \"arch\": \"%s\", \"sockets\": %d, "
             "\"cores\": %d, \"threads\": %d", d.name, d.arch, d.sockets, d.compute_units,
             d.threads);
    assert_has(r.out, want);
    snprintf(want, sizeof want, "\"llc_bytes\": %lld", (long long)d.llc_bytes);
    assert_has(r.out, want);
    const char *bw = strstr(strstr(r.out, "\"hosts\""), "\"copy_bandwidth_gbs\": ");
    assert_non_null(bw);
    if (atof(bw + strlen("\"copy_bandwidth_gbs\": ")) <= 0.1)
        fail_msg("no copy bandwidth measured: %.80s", bw);
    tu_result_free(&r);
    tu_rmtree(dir);
}

static void test_no_compiler(void **state)
{
    (void)state;
    fdt_device d;
    describe(&d);
    setenv("CC", "/nonexistent", 1);
    fdt_rt_code c;
    fdt_err e;
    int rc = fdt_rt_compile(cpu(), kernel_src, "k", d.arch, 60000, &c, &e);
    unsetenv("CC");
    assert_int_equal(rc, -1);
    assert_has(e.msg, "$CC=/nonexistent");
    tu_result r;
    devices_with_cc("/nonexistent", &r);
    expect_status(&r, 4);
    assert_has(r.err, "$CC=/nonexistent");
    tu_result_free(&r);
}

/* A compiler without OpenMP: a wrapper of cc that rejects -fopenmp. */
static void test_no_openmp(void **state)
{
    (void)state;
    char dir[1024], path[1100];
    assert_int_equal(tu_mkdtemp(dir, sizeof dir, "fdtune-noomp"), 0);
    snprintf(path, sizeof path, "%s/cc-noomp", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = -fopenmp ]; then\n"
          "    echo \"cc-noomp: error: unsupported option '-fopenmp'\" >&2; exit 1\n  fi\n"
          "done\nexec cc \"$@\"\n", f);
    fclose(f);
    chmod(path, 0755);
    tu_result r;
    devices_with_cc(path, &r);
    expect_status(&r, 4);
    assert_has(r.err, "does not build OpenMP code");
    assert_has(r.err, "$CC=");
    assert_has(r.err, "cc-noomp");
    tu_result_free(&r);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts),       cmocka_unit_test(test_target),
        cmocka_unit_test(test_not_a_gpu),   cmocka_unit_test(test_worker),
        cmocka_unit_test(test_worker_faults), cmocka_unit_test(test_worker_dwave),
        cmocka_unit_test(test_faults),      cmocka_unit_test(test_no_compiler),
        cmocka_unit_test(test_no_openmp),   cmocka_unit_test(test_compile_error),
        cmocka_unit_test(test_clang),       cmocka_unit_test(test_modules),
        cmocka_unit_test(test_devices),
        /* last: it starts OpenMP's threads in this process, which forked children lack */
        cmocka_unit_test(test_compile_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
