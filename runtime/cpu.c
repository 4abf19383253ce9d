/* The host CPU's backend ("cpu"): the cores of this process's affinity mask as one device
 * behind the same table as the GPU backends, so that the isolated worker drives it unchanged.
 *
 * Compiling: the system C compiler ($CC, else cc) builds each kernel source into a shared
 * object with -O3 -march=native (AArch64: -mcpu=native) -fopenmp -fPIC -shared, inside the
 * compile pool's child, in a private scratch directory that is always removed (for another
 * ISA level of this CPU's family, named as a target, -march=LEVEL instead of native). The
 * compiler's identity in the cache key is its real path, its `--version` line, the options
 * and what `native` means on this CPU (the model name and the ISA macros the compiler enables
 * there), so that a cached object is never served to another CPU. Whether the compiler has
 * OpenMP is checked once per process (per compiler) by compiling a small OpenMP program.
 * Copies use ordinary or streaming stores, whichever is faster at the size (cpu_copy_d2d);
 * the OpenMP threads sleep between parallel regions (cpu_open says why).
 *
 * Running: memory is whole huge pages (2 MiB-aligned, advised for transparent huge pages),
 * each array starting at its own offset in them (cpu_alloc says why), and first touched by
 * the kernels' threads (the fill kernel); copies to and from the host are memcpy; a module is the
 * shared object written to a memfd and dlopen'ed; a launch calls the entry point
 * `void NAME(void **args)` (grid, block and shared memory mean nothing here); events read the
 * monotonic clock and sync has nothing to wait for. open() sets the OpenMP environment before
 * the first kernel loads the OpenMP runtime. The device copy, memset and cache flush run on a
 * team of pthreads pinned one per physical core of the mask, in order (OMP_PROC_BIND=close's
 * placement), so that the copy bandwidth, the denominator of every fraction of copy, is
 * measured on the cores and placement the kernels use. */
#include "rt_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#define CPU_OPTIONS "-O3 -march=native -fopenmp -fPIC -shared"
#define CPU_NATIVE "-march=native"
#else
#define CPU_OPTIONS "-O3 -mcpu=native -fopenmp -fPIC -shared"
#define CPU_NATIVE "-mcpu=native"
#endif

#define HUGE_PAGE ((size_t)2 << 20)
#define MAX_TEAM 256

/* ------------------------------------------------------------------ the compiler */

/* What $CC names ("cc" when unset), for messages. */
static const char *cc_name(void)
{
    const char *cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

/* The compiler's real path; fails naming $CC. */
static int cc_path(char *buf, size_t n, fdt_err *e)
{
    char found[PATH_MAX];
    const char *cc = getenv("CC");
    if (fdt_find_program(cc_name(), found, sizeof found))
        return fdt_err_set(e, "cpu: C compiler %s%s not found (set $CC to a C compiler with "
                              "OpenMP, e.g. gcc)", cc && *cc ? "$CC=" : "", cc_name());
    if (!realpath(found, buf) && snprintf(buf, n, "%s", found) < 0)
        return fdt_err_set(e, "cpu: %s: path too long", found);
    return 0;
}

/* The first line of `cc --version`. */
static int cc_version(const char *path, char *buf, size_t n, fdt_err *e)
{
    const char *argv[] = {path, "--version", NULL};
    fdt_sb out;
    fdt_sb_init(&out);
    int rc = fdt_exec(argv, &out, NULL, e);
    if (rc)
        fdt_err_set(e, "cpu: C compiler $CC=%s: %s --version: %s", cc_name(), path, e->msg);
    else
        snprintf(buf, n, "%.*s", (int)strcspn(fdt_sb_str(&out), "\n"), fdt_sb_str(&out));
    fdt_sb_free(&out);
    return rc;
}

/* Runs the compiler on source src in a new scratch directory: `cc -O3 MARCH -fopenmp -fPIC
 * -shared -o x.so x.c`; the object into image (may be NULL), the compiler's messages into
 * log. The directory is removed whatever happens. */
static int cc_build(const char *path, const char *march, const char *src, fdt_sb *image,
                    fdt_sb *log, fdt_err *e)
{
    char dir[1024], c[1100], so[1100];
    if (fdt_scratch_dir("fdtune-cc", dir, sizeof dir, e))
        return -1;
    snprintf(c, sizeof c, "%s/x.c", dir);
    snprintf(so, sizeof so, "%s/x.so", dir);
    const char *argv[] = {path, "-O3", march, "-fopenmp", "-fPIC", "-shared", "-o", so, c,
                          NULL};
    int rc = fdt_write_file(c, src, strlen(src), e);
    if (rc == 0 && fdt_exec(argv, NULL, log, e))
        rc = -1;
    char *data = NULL;
    size_t n = 0;
    if (rc == 0 && image && fdt_read_file(so, &data, &n, e) == 0) {
        fdt_sb_putn(image, data, n);
        free(data);
    } else if (rc == 0 && image) {
        rc = -1;
    }
    fdt_remove_tree(dir);
    return rc;
}

/* The once-per-process check (per compiler) that the compiler builds OpenMP code: -1 with e
 * saying so. */
static int cc_openmp(const char *path, fdt_err *e)
{
    static int state; /* 0 not checked, 1 has OpenMP, -1 has not (why) */
    static fdt_err why;
    static char checked[PATH_MAX]; /* the compiler state is about */
    if (strcmp(checked, path)) {
        snprintf(checked, sizeof checked, "%s", path);
        state = 0;
    }
    static const char probe[] = "#include <omp.h>\n"
                                "int fdt_probe(void) { int n = 0;\n#pragma omp parallel\n"
                                "#pragma omp atomic\nn++;\nreturn n + omp_get_max_threads(); }\n";
    if (state == 0) {
        fdt_sb log;
        fdt_sb_init(&log);
        state = cc_build(path, CPU_NATIVE, probe, NULL, &log, &why) ? -1 : 1;
        if (state < 0)
            fdt_err_set(&why, "cpu: C compiler $CC=%s (%s) does not build OpenMP code (with "
                              "-fopenmp): %.300s", cc_name(), path, fdt_sb_str(&log));
        fdt_sb_free(&log);
    }
    if (state < 0)
        *e = why;
    return state < 0 ? -1 : 0;
}

static int cpu_compiler_version(char *buf, size_t n, fdt_err *e)
{
    char path[PATH_MAX], ver[256];
    if (cc_path(path, sizeof path, e) || cc_version(path, ver, sizeof ver, e))
        return -1;
    snprintf(buf, n, "%s (%s)", ver, path);
    return 0;
}

/* The ISA macros `cc -march=native` predefines here (__AVX2__, __ARM_FEATURE_SVE, ...), in
 * the compiler's order, and a hash of every macro it predefines (the tuning ones too). */
static int cc_native(const char *path, fdt_sb *out, fdt_err *e)
{
    const char *argv[] = {path, CPU_NATIVE, "-E", "-dM", "-x", "c", "/dev/null", NULL};
    fdt_sb text;
    fdt_sb_init(&text);
    if (fdt_exec(argv, &text, NULL, e)) {
        fdt_sb_free(&text);
        return fdt_err_set(e, "cpu: C compiler $CC=%s: %s %s: %s", cc_name(), path, CPU_NATIVE,
                           e->msg);
    }
    static const char *const isa[] = {"__SSE", "__AVX", "__FMA", "__F16C", "__BMI", "__LZCNT",
                                      "__POPCNT", "__MOVBE", "__ARM_NEON", "__ARM_FEATURE_"};
    const char *s = fdt_sb_str(&text);
    fdt_sb_printf(out, "predefined %016llx:",
                  (unsigned long long)fdt_hash64_str(s, FDT_HASH_SEED));
    for (const char *l = s; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n')) {
        if (strncmp(l, "#define ", 8))
            continue;
        const char *name = l + 8;
        size_t len = strcspn(name, " \n");
        for (size_t i = 0; i < sizeof isa / sizeof isa[0]; i++)
            if (!strncmp(name, isa[i], strlen(isa[i]))) {
                fdt_sb_printf(out, " %.*s", (int)len, name);
                break;
            }
    }
    fdt_sb_free(&text);
    return 0;
}

/* The option that selects what the compiler builds for arch: -march=native (AArch64
 * -mcpu=native) for this CPU's own ISA level, which is what runs here; the level itself for
 * another one of this CPU's family (`gen --compile --target x86-64-v4` on an AVX2 machine):
 * code that compiles here and runs on such a CPU. Fails for the other family's names. */
static int march_of(const char *arch, char *buf, size_t n, fdt_err *e)
{
    fdt_device d;
    if (fdt_rt_cpu_describe(&d, e))
        return -1;
    int x86 = !strncmp(d.arch, "x86-64", 6);
    if (!strcmp(arch, d.arch))
        snprintf(buf, n, "%s", CPU_NATIVE);
    else if (x86 && !strncmp(arch, "x86-64-v", 8))
        snprintf(buf, n, "-march=%s", arch);
    else if (!x86 && !strcmp(arch, "aarch64"))
        snprintf(buf, n, "-march=armv8-a");
    else if (!x86 && !strcmp(arch, "aarch64-sve"))
        snprintf(buf, n, "-march=armv8-a+sve");
    else
        return fdt_err_set(e, "target '%s': the cpu backend compiles for this host's "
                              "architecture (%s, %s: %s)", arch, d.name, d.arch,
                           x86 ? "x86-64-v2, x86-64-v3, x86-64-v4" : "aarch64, aarch64-sve");
    return 0;
}

static int cpu_check_target(const char *arch, fdt_err *e)
{
    char march[64];
    return march_of(arch, march, sizeof march, e);
}

static int cpu_compiler_id(const char *arch, char *buf, size_t n, fdt_err *e)
{
    char path[PATH_MAX], ver[256], march[64];
    fdt_device d;
    if (march_of(arch, march, sizeof march, e) || cc_path(path, sizeof path, e) ||
        cc_version(path, ver, sizeof ver, e) || cc_openmp(path, e) ||
        fdt_rt_cpu_describe(&d, e))
        return -1;
    fdt_sb id;
    fdt_sb_init(&id);
    fdt_sb_printf(&id, "%s | %s | -O3 %s -fopenmp -fPIC -shared", path, ver, march);
    int rc = 0;
    if (!strcmp(march, CPU_NATIVE)) { /* what native means on this CPU */
        fdt_sb_printf(&id, " | native on %s (%s): ", d.name, d.arch);
        rc = cc_native(path, &id, e);
    }
    if (rc == 0)
        snprintf(buf, n, "%s", fdt_sb_str(&id));
    fdt_sb_free(&id);
    return rc;
}

static int cpu_compile(const char *src, const char *kernel, const char *arch, fdt_sb *image,
                       fdt_sb *log, fdt_rt_resources *res, fdt_err *e)
{
    (void)res; /* code_bytes from the object (compile.c); the rest is -1: no such limits */
    char path[PATH_MAX], march[64];
    if (march_of(arch, march, sizeof march, e) || cc_path(path, sizeof path, e))
        return -1;
    if (cc_build(path, march, src, image, log, e))
        return fdt_err_set(e, "cpu compile of %s for %s failed: %s\n%s", kernel, arch, e->msg,
                           fdt_sb_str(log));
    return 0;
}

static int cpu_libraries(fdt_rt_lib *libs, int max)
{
    char path[PATH_MAX], ver[256];
    fdt_err e;
    if (max < 1)
        return 0;
    fdt_rt_lib *l = &libs[0];
    memset(l, 0, sizeof *l);
    snprintf(l->backend, sizeof l->backend, "cpu");
    snprintf(l->role, sizeof l->role, "C compiler");
    if (cc_path(path, sizeof path, &e) || cc_version(path, ver, sizeof ver, &e)) {
        snprintf(l->note, sizeof l->note, "%s", e.msg);
        return 1;
    }
    snprintf(l->path, sizeof l->path, "%s", path);
    snprintf(l->version, sizeof l->version, "%s", ver);
    snprintf(l->note, sizeof l->note, "%s", CPU_OPTIONS);
    return 1;
}

/* ------------------------------------------------------------------ the device */

static int cpu_device_count(int *n, fdt_err *e)
{
    fdt_device d;
    *n = 0;
    if (fdt_rt_cpu_describe(&d, e))
        return -1;
    *n = 1;
    return 0;
}

static int cpu_device_info(int idx, fdt_device *d, fdt_err *e)
{
    if (idx != 0)
        return fdt_err_set(e, "cpu: device %d: the host CPU is device 0", idx);
    char path[PATH_MAX], ver[256];
    if (fdt_rt_cpu_describe(d, e) || cc_path(path, sizeof path, e) ||
        cc_version(path, ver, sizeof ver, e) || cc_openmp(path, e))
        return -1;
    struct utsname u;
    snprintf(d->driver_version, sizeof d->driver_version, "Linux %s",
             uname(&u) == 0 ? u.release : "unknown");
    snprintf(d->runtime_version, sizeof d->runtime_version, "OpenMP of %s", ver);
    snprintf(d->compiler_version, sizeof d->compiler_version, "%s (%s) %s", ver, path,
             CPU_OPTIONS);
    fdt_clocks_init(&d->clocks);
    return 0;
}

/* The pinned team: one thread per physical core of the mask, in core order. */
typedef enum { OP_COPY, OP_COPY_NT, OP_SET, OP_READ } team_op;

static struct {
    int n;
    pid_t pid; /* the process that started the team: a forked child starts its own */
    pthread_t th[MAX_TEAM];
    pthread_barrier_t go, done;
    team_op op;
    char *dst;
    const char *src;
    size_t bytes;
    unsigned char value;
    size_t copy_bytes; /* the size the copy's store kind was chosen for */
    int copy_nt;       /* 1: streaming stores copy faster at that size */
} T;

static volatile uint64_t sink;

/* Member i's share of [0, bytes), in whole cache lines. */
static void share(int i, size_t *lo, size_t *hi)
{
    FDT_ASSERT(T.n > 0 && i >= 0 && i < T.n, "a member of a started team");
    size_t lines = (T.bytes + 63) / 64;
    *lo = lines * (size_t)i / (size_t)T.n * 64;
    *hi = lines * (size_t)(i + 1) / (size_t)T.n * 64;
    if (*hi > T.bytes)
        *hi = T.bytes;
    if (*lo > *hi)
        *lo = *hi;
    FDT_ASSERT(*lo <= *hi && *hi <= T.bytes, "a member's share lies inside the buffer");
}

/* A copy with streaming (non-temporal) stores where the ISA has them in C (x86-64: SSE2's
 * movntdq); elsewhere ordinary stores. */
static void copy_nt(char *d, const char *s, size_t n)
{
#if defined(__x86_64__)
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    size_t i = head;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i)),
                b = _mm_loadu_si128((const __m128i *)(s + i + 16)),
                c = _mm_loadu_si128((const __m128i *)(s + i + 32)),
                x = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), x);
    }
    memcpy(d + i, s + i, n - i);
    _mm_sfence();
#else
    memcpy(d, s, n);
#endif
}

static uint64_t read_sum(const char *p, size_t n)
{
    const uint64_t *q = (const uint64_t *)p;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t words = n / 8, i = 0;
    for (; i + 4 <= words; i += 4) {
        a += q[i];
        b += q[i + 1];
        c += q[i + 2];
        d += q[i + 3];
    }
    for (; i < words; i++)
        a += q[i];
    return a + b + c + d;
}

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static pid_t gate_open; /* the process whose team's barriers are ready */

static void *member(void *arg)
{
    int i = (int)(intptr_t)arg;
    pthread_mutex_lock(&gate_lock);
    while (gate_open != getpid())
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    for (;;) {
        pthread_barrier_wait(&T.go);
        size_t lo, hi;
        share(i, &lo, &hi);
        switch (T.op) {
        case OP_COPY: memcpy(T.dst + lo, T.src + lo, hi - lo); break;
        case OP_COPY_NT: copy_nt(T.dst + lo, T.src + lo, hi - lo); break;
        case OP_SET: memset(T.dst + lo, T.value, hi - lo); break;
        case OP_READ: sink += read_sum(T.src + lo, hi - lo); break;
        }
        pthread_barrier_wait(&T.done);
    }
    return NULL;
}

/* Starts the team once per process: thread i pinned to the first hardware thread of core i;
 * as many as could be started (at least one) make the team. */
static int team_start(fdt_err *e)
{
    if (T.n && T.pid == getpid())
        return 0;
    T.n = 0;
    T.copy_bytes = 0;
    T.pid = getpid();
    int first[MAX_TEAM], started = 0;
    int n = fdt_rt_cpu_cores(first, MAX_TEAM);
    for (int i = 0; i < n && i < MAX_TEAM; i++) {
        pthread_attr_t a;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(first[i], &set);
        pthread_attr_init(&a);
        pthread_attr_setaffinity_np(&a, sizeof set, &set);
        int rc = pthread_create(&T.th[i], &a, member, (void *)(intptr_t)i);
        pthread_attr_destroy(&a);
        if (rc)
            break;
        started++;
    }
    if (started == 0 || pthread_barrier_init(&T.go, NULL, (unsigned)started + 1) ||
        pthread_barrier_init(&T.done, NULL, (unsigned)started + 1))
        return fdt_err_set(e, "cpu: the copy team's threads: %s",
                           started ? "no barrier" : "none could be started");
    T.n = started;
    pthread_mutex_lock(&gate_lock);
    gate_open = getpid();
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    return 0;
}

static int team_run(team_op op, uint64_t dst, uint64_t src, size_t n, unsigned char v,
                    fdt_err *e)
{
    if (team_start(e))
        return -1;
    FDT_ASSERT(T.n > 0 && T.pid == getpid(), "this process's team is started");
    T.op = op;
    T.dst = (char *)(uintptr_t)dst;
    T.src = (const char *)(uintptr_t)src;
    T.bytes = n;
    T.value = v;
    pthread_barrier_wait(&T.go);
    pthread_barrier_wait(&T.done);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The copy stores the faster way for its size: on the first copy of a size, each kind is
 * timed twice (the better of two) and the faster one is kept for that size. */
static int cpu_copy_d2d(uint64_t dst, uint64_t src, size_t n, fdt_err *e)
{
    if (n != T.copy_bytes) {
        double best[2] = {1e30, 1e30};
        for (int rep = 0; rep < 2; rep++)
            for (int k = 0; k < 2; k++) {
                double t0 = now_s();
                if (team_run(k ? OP_COPY_NT : OP_COPY, dst, src, n, 0, e))
                    return -1;
                double t = now_s() - t0;
                best[k] = t < best[k] ? t : best[k];
            }
        T.copy_bytes = n;
        T.copy_nt = best[1] < best[0];
    }
    return team_run(T.copy_nt ? OP_COPY_NT : OP_COPY, dst, src, n, 0, e);
}

static int cpu_memset(uint64_t dst, unsigned char value, size_t n, fdt_err *e)
{
    return team_run(OP_SET, dst, 0, n, value, e);
}

static int cpu_flush(uint64_t buf, size_t n, fdt_err *e)
{
    return team_run(OP_READ, 0, buf, n, 0, e);
}

static int cpu_open(int idx, fdt_err *e)
{
    if (idx != 0)
        return fdt_err_set(e, "cpu: device %d: the host CPU is device 0", idx);
    /* read by the OpenMP runtime when the first kernel loads it: one thread per physical
     * core of the mask, bound close in core order, no dynamic adjustment. Threads spin
     * between parallel regions and at barriers (active) where the machine has cores to
     * spare for it: measured on the 16-core Xeon host of the H200 machines, lap R=4 f32
     * 512^3 blocked ran at 49.5 GB/s active and 37.7 GB/s passive, d2y 79.7 and 67.6 (each
     * barrier's wake-up is a futex call). On 2 cores or fewer they sleep (passive): between
     * timed launches the cache flush runs on the copy team, pinned to the same cores, which
     * spinning threads slow down, and a spinning member the scheduler preempts costs the
     * next region a whole time slice at its closing barrier (the default lap kernel at 48^3
     * took 11.5 ms active, 0.3 ms passive on the 2-core machine under load). */
    int cores = fdt_rt_cpu_cores(NULL, 0);
    char threads[16];
    snprintf(threads, sizeof threads, "%d", cores);
    setenv("OMP_PLACES", "cores", 1);
    setenv("OMP_PROC_BIND", "close", 1);
    setenv("OMP_NUM_THREADS", threads, 1);
    setenv("OMP_DYNAMIC", "false", 1);
    setenv("OMP_WAIT_POLICY", cores > 2 ? "active" : "passive", 1);
    return 0;
}

static int cpu_mem_info(size_t *free_bytes, size_t *total, fdt_err *e)
{
    return fdt_rt_cpu_meminfo(free_bytes, total, e);
}

/* The offset of the next allocation's start within its first huge page (cpu_alloc). */
static atomic_uint skew_next;

/* Memory for `bytes`: a block of whole huge pages (2 MiB-aligned, advised for transparent
 * huge pages) whose start is skewed by the k-th of 16 offsets, k counting the process's
 * allocations: k x 68 KiB (17 pages of 4 KiB). A stencil reads its arrays (p, p_prev, c2,
 * the output) at the same index; in huge pages arrays that start at one offset share the
 * physical address bits that index the L2's sets, so those streams compete for the same
 * sets. 17 is odd, so 16 successive offsets fall on 16 distinct pages of any cache way of
 * 64 KiB to 2 MiB (the L2 ways of current x86 and Arm servers: 128 KiB on Sapphire/Emerald
 * Rapids, Zen 4, Neoverse V2). On the H200 node's Xeon (Emerald Rapids, 16 cores, THP on
 * madvise) the damped wave's first 8 planes of 512^3 ran in 0.57-0.69 ms in arrays at one
 * offset and 0.49-0.52 ms skewed (bench/hybrid_h200/run17). The skew keeps 4 KiB alignment,
 * above any layout's (align x element size), and stays within the first huge page. */
static int cpu_alloc(size_t bytes, uint64_t *ptr, fdt_err *e)
{
    enum { SKEWS = 16 };
    const size_t step = (size_t)17 << 12;
    size_t skew = (atomic_fetch_add(&skew_next, 1) % SKEWS) * step;
    FDT_ASSERT(skew < HUGE_PAGE && skew % 4096 == 0, "a skew within the first huge page");
    void *p = NULL;
    size_t size = (bytes + skew + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, size))
        return fdt_err_set(e, "cpu: allocating %zu bytes: out of memory", bytes);
    madvise(p, size, MADV_HUGEPAGE); /* advice: without transparent huge pages, 4 KiB pages */
    /* A GPU's memory comes back holding anything (cuMemAlloc does not zero it); fresh host
     * pages are zero, which hides a caller that reads what it never set. The tests poison
     * the host's memory instead (all bits set: a NaN in f32 and f64). */
    const char *poison = getenv("FDTUNE_TEST_CPU_POISON");
    if (poison && *poison && strcmp(poison, "0"))
        memset(p, 0xff, size);
    *ptr = (uint64_t)(uintptr_t)p + skew;
    return 0;
}

/* Frees cpu_alloc's memory: its block starts at the huge page the skewed start is in. */
static void cpu_free(uint64_t ptr)
{
    if (ptr)
        free((void *)(uintptr_t)(ptr & ~(uint64_t)(HUGE_PAGE - 1)));
}

static int cpu_copy_h2d(uint64_t dst, const void *src, size_t n, fdt_err *e)
{
    (void)e;
    memcpy((void *)(uintptr_t)dst, src, n);
    return 0;
}

static int cpu_copy_d2h(void *dst, uint64_t src, size_t n, fdt_err *e)
{
    (void)e;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return 0;
}

/* Keeps the OpenMP runtime a kernel's object loaded in this process for good: unloading the
 * last kernel must not unload it under its own (spinning) threads. */
static void pin_openmp(void)
{
    static const char *const names[] = {"libgomp.so.1", "libomp.so.5", "libomp.so",
                                        "libiomp5.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        dlopen(names[i], RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

/* A loaded kernel object: its handle and the memfd it was loaded from, kept open while it is
 * loaded. dlopen knows a loaded object by the path it was given ("/proc/self/fd/N") and
 * answers a second dlopen of that path with the first object: an fd number stays unique
 * among the loaded objects only while their fds stay open. */
typedef struct cpu_module {
    void *handle;
    int fd;
} cpu_module;

static int cpu_module_load(const void *image, size_t n, void **module, fdt_err *e)
{
    cpu_module *m = calloc(1, sizeof *m);
    if (!m)
        return fdt_err_set(e, "cpu: loading a kernel: out of memory");
    m->fd = memfd_create("fdtune-kernel", MFD_CLOEXEC);
    if (m->fd < 0) {
        free(m);
        return fdt_err_set(e, "cpu: memfd_create: %s", strerror(errno));
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", m->fd);
    for (size_t done = 0; done < n;) {
        ssize_t w = write(m->fd, (const char *)image + done, n - done);
        if (w <= 0) {
            fdt_err_set(e, "cpu: writing the kernel's object: %s", strerror(errno));
            close(m->fd);
            free(m);
            return -1;
        }
        done += (size_t)w;
    }
    m->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!m->handle) {
        fdt_err_set(e, "cpu: loading the kernel's object: %s", dlerror());
        close(m->fd);
        free(m);
        return -1;
    }
    pin_openmp();
    *module = m;
    return 0;
}

static int cpu_module_function(void *module, const char *kernel, void **fn, fdt_err *e)
{
    cpu_module *m = module;
    *fn = dlsym(m->handle, kernel);
    if (!*fn)
        return fdt_err_set(e, "cpu: kernel %s not in its object", kernel);
    return 0;
}

static void cpu_module_unload(void *module)
{
    cpu_module *m = module;
    if (!m)
        return;
    dlclose(m->handle);
    close(m->fd);
    free(m);
}

static int cpu_launch(void *fn, const uint32_t grid[3], const uint32_t block[3],
                      unsigned shared, void **args, fdt_err *e)
{
    (void)grid;
    (void)block;
    (void)shared;
    (void)e;
    ((void (*)(void **))fn)(args);
    return 0;
}

static int cpu_event_create(void **ev, fdt_err *e)
{
    *ev = calloc(1, sizeof(double));
    return *ev ? 0 : fdt_err_set(e, "cpu: event: out of memory");
}

static void cpu_event_destroy(void *ev) { free(ev); }

static int cpu_event_record(void *ev, fdt_err *e)
{
    (void)e;
    *(double *)ev = now_s();
    return 0;
}

static int cpu_event_elapsed(void *start, void *stop, float *ms, fdt_err *e)
{
    (void)e;
    *ms = (float)((*(double *)stop - *(double *)start) * 1e3);
    return 0;
}

static int cpu_sync(fdt_err *e)
{
    (void)e;
    return 0; /* a launch returns when the kernel is done */
}

static int cpu_context_lost(void) { return 0; }

/* ---- pinned memory and streams: the host's memory is the device's; a stream runs each call
 * synchronously, in order, before the call returns (so waits and syncs have nothing to do) */

static int cpu_host_alloc(size_t bytes, void **p, fdt_err *e)
{
    uint64_t a = 0;
    *p = NULL;
    if (cpu_alloc(bytes, &a, e))
        return -1;
    *p = (void *)(uintptr_t)a;
    return 0;
}

static void cpu_host_free(void *p) { cpu_free((uint64_t)(uintptr_t)p); }

/* The host's memory needs no pinning for the host. */
static int cpu_host_register(void *p, size_t bytes, fdt_err *e)
{
    (void)p;
    (void)bytes;
    (void)e;
    return 0;
}

static void cpu_host_unregister(void *p) { (void)p; }

static int cpu_host_device_ptr(void *p, uint64_t *dptr, fdt_err *e)
{
    (void)e;
    *dptr = (uint64_t)(uintptr_t)p;
    return 0;
}

static int cpu_unified(int *u, fdt_err *e)
{
    (void)e;
    *u = 1;
    return 0;
}

/* A stream is a token: nothing is queued. */
static int cpu_stream_create(void **s, fdt_err *e)
{
    *s = malloc(1);
    return *s ? 0 : fdt_err_set(e, "cpu: stream: out of memory");
}

static void cpu_stream_destroy(void *s) { free(s); }

static int cpu_launch_on(void *fn, const uint32_t grid[3], const uint32_t block[3],
                         unsigned shared, void **args, void *s, fdt_err *e)
{
    (void)s;
    return cpu_launch(fn, grid, block, shared, args, e);
}

static int cpu_copy_h2d_on(uint64_t dst, const void *src, size_t n, void *s, fdt_err *e)
{
    (void)s;
    return cpu_copy_h2d(dst, src, n, e);
}

static int cpu_copy_d2h_on(void *dst, uint64_t src, size_t n, void *s, fdt_err *e)
{
    (void)s;
    return cpu_copy_d2h(dst, src, n, e);
}

static int cpu_copy_d2d_on(uint64_t dst, uint64_t src, size_t n, void *s, fdt_err *e)
{
    (void)s;
    return cpu_copy_d2d(dst, src, n, e);
}

static int cpu_event_record_on(void *ev, void *s, fdt_err *e)
{
    (void)s;
    return cpu_event_record(ev, e);
}

static int cpu_stream_wait_event(void *s, void *ev, fdt_err *e)
{
    (void)s;
    (void)ev;
    (void)e;
    return 0; /* what ev marks has run */
}

/* A row at a time (both sides are host memory). */
static int cpu_copy_box_on(const fdt_rt_box_copy *c, void *s, fdt_err *e)
{
    (void)s;
    (void)e;
    for (size_t k = 0; k < c->planes; k++)
        for (size_t j = 0; j < c->rows; j++)
            memcpy((char *)(uintptr_t)c->dst + k * c->dst_slice + j * c->dst_line,
                   (const char *)(uintptr_t)c->src + k * c->src_slice + j * c->src_line,
                   c->width);
    return 0;
}

static int cpu_stream_sync(void *s, fdt_err *e)
{
    (void)s;
    return cpu_sync(e);
}

const fdt_rt_backend fdt_rt_cpu = {
    .name = "cpu",
    .vendor = "",
#if defined(__aarch64__)
    .example_arch = "aarch64",
#else
    .example_arch = "x86-64-v3",
#endif
    .options = CPU_OPTIONS,
    .host = 1,
    .compiler_version = cpu_compiler_version,
    .compiler_id = cpu_compiler_id,
    .check_target = cpu_check_target,
    .compile = cpu_compile,
    .libraries = cpu_libraries,
    .device_count = cpu_device_count,
    .device_info = cpu_device_info,
    .open = cpu_open,
    .mem_info = cpu_mem_info,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_h2d = cpu_copy_h2d,
    .copy_d2h = cpu_copy_d2h,
    .copy_d2d_async = cpu_copy_d2d,
    .memset_async = cpu_memset,
    .flush = cpu_flush,
    .module_load = cpu_module_load,
    .module_function = cpu_module_function,
    .module_unload = cpu_module_unload,
    .launch = cpu_launch,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .event_elapsed = cpu_event_elapsed,
    .sync = cpu_sync,
    .context_lost = cpu_context_lost,
    .host_alloc = cpu_host_alloc,
    .host_free = cpu_host_free,
    .host_register = cpu_host_register,
    .host_unregister = cpu_host_unregister,
    .host_device_ptr = cpu_host_device_ptr,
    .unified = cpu_unified,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .launch_on = cpu_launch_on,
    .copy_h2d_on = cpu_copy_h2d_on,
    .copy_d2h_on = cpu_copy_d2h_on,
    .copy_d2d_on = cpu_copy_d2d_on,
    .event_record_on = cpu_event_record_on,
    .stream_wait_event = cpu_stream_wait_event,
    .stream_sync = cpu_stream_sync,
    .copy_box_on = cpu_copy_box_on,
};
