/* Runtime tests (no GPU needed): every operator x R in {1,2,4,8} x f32/f64 with a spread of
 * configs compiles through hiprtc for gfx90a, NVRTC for sm_90 and the offline clang for
 * gfx940, gfx942 (MI300) and gfx1100 with the compiler's own resource report; compilation is isolated (a crash or a hang in the child is an error) and
 * its children, shared by several processes, stay within the pool's slots in all; the
 * compile cache returns what was compiled; messages between processes survive framing. A
 * backend whose compiler is missing is skipped only where the setup script cannot install it
 * (NVRTC comes with the CUDA toolkit); hiprtc must be there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdt_gen.h"
#include "fdt_rt.h"
#include "rt_internal.h" /* the offline compiler alone, to compare it with hiprtc */

static const fdt_gen_target hip_dialect = {FDT_DIALECT_HIP}; /* both backends compile it */

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
    fdt_rt_resources r = {-1, -1, -1, -1, -1, -1, -1, -1, -1};
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
    c.res = (fdt_rt_resources){10, 20, 0, 4, 8, 1024, 256, 3, 4096};
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

/* The machine code of an ELF64 object: the executable PROGBITS sections only (a cubin's
 * .text.<kernel>), not data, not NOBITS; anything that is no ELF64 object, or whose section
 * table lies outside the image, is -1. */
static void test_elf_code_bytes(void **state)
{
    (void)state;
    struct {
        Elf64_Ehdr eh;
        Elf64_Shdr sh[4];
    } o;
    memset(&o, 0, sizeof o);
    memcpy(o.eh.e_ident, ELFMAG, SELFMAG);
    o.eh.e_ident[EI_CLASS] = ELFCLASS64;
    o.eh.e_ident[EI_DATA] = ELFDATA2LSB;
    o.eh.e_shoff = offsetof(__typeof__(o), sh);
    o.eh.e_shentsize = sizeof(Elf64_Shdr);
    o.eh.e_shnum = 4;
    o.sh[1] = (Elf64_Shdr){.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
                           .sh_size = 1000};
    o.sh[2] = (Elf64_Shdr){.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_size = 70};
    o.sh[3] = (Elf64_Shdr){.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
                           .sh_size = 24};
    assert_int_equal(fdt_rt_elf_code_bytes(&o, sizeof o), 1024);
    o.sh[3].sh_type = SHT_NOBITS;
    assert_int_equal(fdt_rt_elf_code_bytes(&o, sizeof o), 1000);
    assert_int_equal(fdt_rt_elf_code_bytes(&o, sizeof o - 1), -1); /* table cut short */
    assert_int_equal(fdt_rt_elf_code_bytes(&o, sizeof o.eh - 1), -1);
    assert_int_equal(fdt_rt_elf_code_bytes("// PTX text", 12), -1);
    assert_int_equal(fdt_rt_elf_code_bytes(NULL, 0), -1);
    o.eh.e_ident[EI_CLASS] = ELFCLASS32;
    assert_int_equal(fdt_rt_elf_code_bytes(&o, sizeof o), -1);
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
    /* the stream (lds=3): vector copies with register blocking, and an odd block with
     * scalar copies */
    "bx=32,by=8,nw=32,lds=3,vec=V,align=64,pf=3,tile=2,lb=256",
    "bx=24,by=5,nw=7,lds=3,align=2,pf=2,tile=2,order=yzx,split=2",
};

/* One candidate of a compile set: its problem, config and generated source. */
typedef struct candidate {
    fdt_problem p;
    fdt_config c;
    char text[128], name[96];
    fdt_sb src;
} candidate;

/* The config of spread[ci] for problem p (vec=V made 4 or 2 for the precision; d2z has no
 * x/y neighbours to share in a tile). */
static void spread_config(const fdt_problem *p, size_t ci, candidate *k)
{
    fdt_err e;
    snprintf(k->text, sizeof k->text, "%s", spread[ci]);
    char *v = strstr(k->text, "vec=V");
    if (v)
        v[4] = p->prec == FDT_F32 ? '4' : '2';
    assert_int_equal(fdt_config_parse(k->text, &k->c, &e), 0);
    if (p->op == FDT_OP_D2Z && k->c.lds == 1)
        fdt_config_parse("bx=32,by=8,nw=64,vec=2,align=64,tile=2", &k->c, &e);
    if (p->op == FDT_OP_DWAVE) { /* every deployment, damping and row form across the spread */
        k->c.deploy = (int)(ci % 3);
        if (k->c.deploy == FDT_DEPLOY_INOUT && k->c.split > 1)
            k->c.deploy = FDT_DEPLOY_SIDES;
        k->c.eta = (int)(ci % 2);
        k->c.layer = (int)(ci / 2 % 2); /* the rows' forms, across both damping forms */
    }
    k->p = *p;
    fdt_deploy d;
    if (p->op == FDT_OP_DWAVE && fdt_gen_deploy(&hip_dialect, p, &k->c, &d, &e))
        k->c.deploy = FDT_DEPLOY_COMPLETE; /* a window deeper than the W-thick faces, or a
                                              face off the vectors: the whole grid runs it */
    if (fdt_config_check(&k->p, &k->c, &e))
        fail_msg("%s R=%d: %s: %s", fdt_op_name(p->op), p->R, k->text, e.msg);
    fdt_gen_kernel_name(&k->p, &k->c, k->name, sizeof k->name);
    fdt_sb_init(&k->src);
    assert_int_equal(fdt_gen_source(&hip_dialect, &k->p, &k->c, k->name, NULL, &k->src, &e), 0);
}

/* What the compiler must report for a candidate, on every target and on AMD's. */
static void check_resources(const candidate *k, const fdt_rt_code *code, const char *arch)
{
    fdt_err e;
    assert_true(code->size > 0);
    /* the compiler's numbers, not a guess */
    assert_true(code->res.registers > 0 && code->res.registers <= 512);
    assert_true(code->res.spill_bytes >= 0 && code->res.scratch_bytes >= 0);
    fdt_geometry g;
    fdt_gen_geometry(&k->p, &k->c, &g, &e);
    /* the ring's tiles are dynamic: the compiler sees no static part */
    /* the rings' tiles are dynamic: the compiler sees no static part */
    assert_int_equal(g.shared_dynamic, k->c.lds >= 2);
    if (k->c.lds == 1)
        assert_int_equal(code->res.shared_bytes, (int)g.shared_bytes);
    else
        assert_int_equal(code->res.shared_bytes, 0);
    if (strncmp(arch, "gfx", 3))
        return;
    assert_true(code->res.sgprs > 0 && code->res.sgprs <= 112);
    assert_true(code->res.sgpr_spills >= 0);
    /* AGPRs exist on gfx908/90a/94x only (gfx11 reports none) */
    if (!strncmp(arch, "gfx11", 5))
        assert_int_equal(code->res.agprs, -1);
    else
        assert_true(code->res.agprs >= 0);
    /* __launch_bounds__ is the largest block the code object allows; HIP's default 1024 */
    assert_int_equal(code->res.max_threads, k->c.lb ? k->c.lb : 1024);
}

/* The verification kernels (templates/util.hip) of both precisions as compile jobs. */
static void util_jobs(fdt_sb *src, char names[2][32], fdt_rt_job *jobs)
{
    fdt_err e;
    for (int prec = 0; prec < 2; prec++) {
        fdt_sb_init(&src[prec]);
        assert_int_equal(fdt_gen_util_source(&hip_dialect, (fdt_prec)prec, &src[prec], &e), 0);
        snprintf(names[prec], 32, "fdt_compare_%s", fdt_prec_name((fdt_prec)prec));
        jobs[prec] = (fdt_rt_job){.src = fdt_sb_str(&src[prec]), .kernel = names[prec]};
    }
}

/* A batch's progress, printed at every tenth of it: a long compile is not silent. */
typedef struct progress {
    const char *what;
    double t0;
    int shown; /* tenths printed */
} progress;

static void compile_progress(void *ctx, size_t done, size_t n)
{
    progress *p = ctx;
    int tenth = n ? (int)(done * 10 / n) : 10;
    if (tenth <= p->shown)
        return;
    p->shown = tenth;
    print_message("  %s: %zu/%zu compiled (%zu%%), %.0f s\n", p->what, done, n,
                  n ? done * 100 / n : 100, fdt_now() - p->t0);
}

/* Compiles jobs[0..n) for arch through the pool of child processes, as the tuner does (as
 * many at a time as there are CPU cores), printing its progress; fdt_rt_compile_many's
 * return. */
static int compile_pool(const fdt_rt_backend *b, const char *arch, fdt_rt_job *jobs, size_t n,
                        const char *what, fdt_err *e)
{
    progress p = {what, fdt_now(), 0};
    print_message("%s: compiling %zu kernels for %s, %d at a time\n", what, n, arch,
                  fdt_rt_cpu_count());
    return fdt_rt_compile_many_progress(b, arch, jobs, n, fdt_rt_cpu_count(), 300000,
                                        compile_progress, &p, e);
}

#define MATRIX (FDT_OP_COUNT * 4 * 2 * (sizeof spread / sizeof spread[0]))

/* Every operator x R in {1,2,4,8} x f32/f64 x spread, and the verification kernels, compiled
 * for arch through the pool of child processes. */
static void compile_matrix(const char *arch)
{
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(arch, &e);
    static const int radii[] = {1, 2, 4, 8};
    candidate *ks = calloc(MATRIX, sizeof *ks);
    fdt_rt_job *jobs = calloc(MATRIX + 2, sizeof *jobs);
    assert_non_null(ks);
    assert_non_null(jobs);
    size_t n = 0;
    for (int op = 0; op < FDT_OP_COUNT; op++)
        for (int ri = 0; ri < 4; ri++)
            for (int prec = 0; prec < 2; prec++)
                for (size_t ci = 0; ci < sizeof spread / sizeof spread[0]; ci++, n++) {
                    fdt_problem p = {(fdt_op)op, radii[ri], (fdt_prec)prec, 301, 203, 157};
                    if (op == FDT_OP_DWAVE) /* its two kernels compile in one source */
                        p.absorb_w = 16, p.absorb_s = 0.1;
                    spread_config(&p, ci, &ks[n]);
                    jobs[n] = (fdt_rt_job){.src = fdt_sb_str(&ks[n].src), .kernel = ks[n].name};
                }
    fdt_sb usrc[2];
    char unames[2][32];
    util_jobs(usrc, unames, jobs + n);
    double t0 = fdt_now();
    int failed = compile_pool(b, arch, jobs, n + 2, "the matrix", &e);
    if (failed < 0)
        fail_msg("compile for %s: %s", arch, e.msg);
    for (size_t i = 0; i < n + 2; i++) {
        if (jobs[i].rc && i < n)
            fail_msg("%s R=%d %s %s for %s: %s", fdt_op_name(ks[i].p.op), ks[i].p.R,
                     fdt_prec_name(ks[i].p.prec), ks[i].text, arch, jobs[i].err.msg);
        if (jobs[i].rc)
            fail_msg("verification kernels for %s: %s", arch, jobs[i].err.msg);
        if (i < n)
            check_resources(&ks[i], &jobs[i].code, arch);
        fdt_rt_code_free(&jobs[i].code);
    }
    for (size_t i = 0; i < n; i++)
        fdt_sb_free(&ks[i].src);
    fdt_sb_free(&usrc[0]);
    fdt_sb_free(&usrc[1]);
    print_message("compiled %zu candidates and the verification kernels for %s in %.0f s\n", n,
                  arch, fdt_now() - t0);
    free(ks);
    free(jobs);
}

/* The stream family (lds=3) compiles without spilling in shapes lap.lua admits (test_recipe.c
 * checks that it does: H100 and MI250X): registers hold the 2R+1 sums per column and nothing
 * else of size, up to R=8 in f64 with 2x2 blocking on sm_90, also with the slot barriers
 * (mbar=1: the H100's tuned lap R=8 f64 and wave R=8 f32), which gfx90a compiles as mbar=0,
 * in the bulk form (bulk=1: lap R=4 and R=8 f32, R=6 f64, wave R=8 f32 on sm_90, lap R=4
 * f32 on gfx90a) and with unguarded stores (guard=none: lap R=4 f32 on both).
 * (gfx90a: R=8 2x2 f32 spills 32 bytes at 256 threads, and no stream shape of R=8 f64 fits the
 * MI250X's 64 KB of LDS.) */
static void stream_no_spills(const char *arch)
{
    static const struct {
        const char *arch;
        fdt_op op;
        int R;
        fdt_prec prec;
        const char *cfg;
    } cases[] = {
        {"sm_90", FDT_OP_LAP, 8, FDT_F32, "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=128,pf=3,tile=2,vec=2"},
        {"sm_90", FDT_OP_LAP, 8, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,tile=2,vec=2"},
        {"sm_90", FDT_OP_WAVE, 8, FDT_F32, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=4,vec=4"},
        {"sm_90", FDT_OP_LAP, 4, FDT_F32, "align=32,l2pf=256,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2"},
        {"sm_90", FDT_OP_LAP, 8, FDT_F64, "align=32,bx=16,by=16,lb=256,lds=3,mbar=1,nt=1,nw=256,pf=5,tile=2,vec=2"},
        {"sm_90", FDT_OP_WAVE, 8, FDT_F32, "align=32,bx=16,by=16,lb=256,lds=3,mbar=1,nt=1,nw=256,pf=4,vec=4"},
        /* the bulk form (bulk=1: cp.async.bulk rows; tests/test_bulk_ptx.sh reads its PTX) */
        {"sm_90", FDT_OP_LAP, 4, FDT_F32, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=4,tile=2,vec=2"},
        {"sm_90", FDT_OP_LAP, 8, FDT_F32, "align=32,bulk=1,bx=32,by=16,lb=512,lds=3,mbar=1,nw=512,pf=5,tile=2,vec=2"},
        {"sm_90", FDT_OP_LAP, 6, FDT_F64, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,mbar=1,nw=256,pf=4,tile=2,vec=2"},
        {"sm_90", FDT_OP_WAVE, 8, FDT_F32, "align=32,bulk=1,bx=16,by=16,lb=256,lds=3,mbar=1,nt=1,nw=256,pf=4,vec=4"},
        {"gfx90a", FDT_OP_LAP, 6, FDT_F32, "align=64,bx=64,by=4,l2pf=256,lb=256,lds=3,nw=128,pf=2,tile=2,vec=2"},
        {"gfx90a", FDT_OP_LAP, 6, FDT_F32, "align=64,bx=64,by=4,l2pf=256,lb=256,lds=3,mbar=1,nw=128,pf=3,tile=2,vec=2"},
        {"gfx90a", FDT_OP_LAP, 4, FDT_F64, "align=64,bx=64,by=4,lb=256,lds=3,nw=128,pf=2,tile=2,vec=2"},
        /* the bulk form on AMD: loads that write LDS directly (bench/amd_bulk.txt) */
        {"gfx90a", FDT_OP_LAP, 4, FDT_F32, "align=64,bulk=1,bx=64,by=4,lb=256,lds=3,mbar=1,nw=128,pf=3,tile=2,vec=2"},
        {"gfx90a", FDT_OP_LAP, 4, FDT_F32, "align=64,bx=64,by=4,l2pf=256,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2"},
        /* unguarded stores (guard=none): the H200's lap R=4 stream of bench/notes/store_guard.txt */
        {"sm_90", FDT_OP_LAP, 4, FDT_F32, "align=32,bx=64,by=8,guard=none,l2pf=256,lb=512,lds=3,nw=256,pf=4,tile=2,vec=4"},
        {"gfx90a", FDT_OP_LAP, 4, FDT_F32, "align=64,bx=64,by=4,guard=none,l2pf=256,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2"},
    };
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(arch, &e);
    assert_non_null(b);
    enum { NCASES = sizeof cases / sizeof cases[0] };
    candidate ks[NCASES];
    fdt_rt_job jobs[NCASES];
    size_t at[NCASES], n = 0;
    for (size_t i = 0; i < NCASES; i++) {
        if (strcmp(cases[i].arch, arch))
            continue;
        candidate *k = &ks[n];
        k->p = (fdt_problem){cases[i].op, cases[i].R, cases[i].prec, 512, 512, 512};
        assert_int_equal(fdt_config_parse(cases[i].cfg, &k->c, &e), 0);
        fdt_gen_kernel_name(&k->p, &k->c, k->name, sizeof k->name);
        fdt_sb_init(&k->src);
        assert_int_equal(fdt_gen_source(&hip_dialect, &k->p, &k->c, k->name, NULL, &k->src, &e), 0);
        jobs[n] = (fdt_rt_job){.src = fdt_sb_str(&k->src), .kernel = k->name};
        at[n++] = i;
    }
    if (compile_pool(b, arch, jobs, n, "the stream family", &e) < 0)
        fail_msg("compile for %s: %s", arch, e.msg);
    for (size_t j = 0; j < n; j++) {
        const fdt_problem *p = &ks[j].p;
        const char *cfg = cases[at[j]].cfg;
        const fdt_rt_code *code = &jobs[j].code;
        if (jobs[j].rc)
            fail_msg("%s R=%d %s %s for %s: %s", fdt_op_name(p->op), p->R,
                     fdt_prec_name(p->prec), cfg, arch, jobs[j].err.msg);
        if (code->res.spill_bytes != 0 || code->res.scratch_bytes != 0)
            fail_msg("%s %s R=%d %s %s: %d registers, %d bytes spilled, %d of scratch", arch,
                     fdt_op_name(p->op), p->R, fdt_prec_name(p->prec), cfg,
                     code->res.registers, code->res.spill_bytes, code->res.scratch_bytes);
        /* the machine code read from the code object (cubin, AMD code object): the march
         * unrolled by 2R + 1 steps is tens of KiB, never the whole object */
        if (code->res.code_bytes < 16 * 1024 || (size_t)code->res.code_bytes >= code->size)
            fail_msg("%s %s R=%d %s %s: %d bytes of machine code in a %zu-byte object", arch,
                     fdt_op_name(p->op), p->R, fdt_prec_name(p->prec), cfg,
                     code->res.code_bytes, code->size);
        fdt_rt_code_free(&jobs[j].code);
        fdt_sb_free(&ks[j].src);
    }
}

static void test_compile_matrix_gfx90a(void **state)
{
    (void)state;
    if (!compiler_ok("gfx90a"))
        fail_msg("hiprtc is not available: install libamdhip64-dev (scripts/setup.sh does)");
    setenv("FDTUNE_CACHE", "", 1); /* really compile */
    compile_matrix("gfx90a");
    stream_no_spills("gfx90a");
}

static void test_compile_matrix_sm90(void **state)
{
    (void)state;
    if (!compiler_ok("sm_90")) {
        print_message("NVRTC not found (CUDA toolkit not installed): sm_90 not compiled\n");
        skip();
    }
    setenv("FDTUNE_CACHE", "", 1);
    compile_matrix("sm_90");
    stream_no_spills("sm_90");
}

/* The offline compiler (clang) of arch, or a skip that says why it is missing. */
static void need_offline(const char *arch)
{
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(arch, &e);
    char id[1024];
    if (!b || !b->compiler_id) {
        print_message("SKIPPED %s: %s\n", arch, b ? "no offline compiler" : e.msg);
        skip();
    }
    if (b->compiler_id(arch, id, sizeof id, &e)) {
        print_message("SKIPPED %s (not compiled, not a pass): %s\n", arch, e.msg);
        skip();
    }
    print_message("%s: %s\n", arch, id);
}

/* MI300 and RDNA3, which the hiprtc of ROCm < 5.6 cannot compile: the offline clang does.
 * gfx940 is the MI300 instruction set that clang 16 knows; gfx942 the one MI300X and MI300A
 * report, which needs clang 17 or later (Debian 12's clang-19): without such a clang its
 * matrix is skipped, saying why, never passed. */
static void test_compile_matrix_gfx940(void **state)
{
    (void)state;
    need_offline("gfx940");
    setenv("FDTUNE_CACHE", "", 1);
    compile_matrix("gfx940");
}

static void test_compile_matrix_gfx942(void **state)
{
    (void)state;
    need_offline("gfx942");
    setenv("FDTUNE_CACHE", "", 1);
    compile_matrix("gfx942");
}

static void test_compile_matrix_gfx1100(void **state)
{
    (void)state;
    need_offline("gfx1100");
    setenv("FDTUNE_CACHE", "", 1);
    compile_matrix("gfx1100");
}

/* ------------------------------------------------------------------ AMD: self-contained source */

/* Every family (the spread) for three problems, and the verification kernels: jobs over ks. */
#define FAMILY_SET (3 * (sizeof spread / sizeof spread[0]))
static size_t family_jobs(candidate *ks, fdt_rt_job *jobs, fdt_sb *usrc, char unames[2][32])
{
    static const fdt_problem probs[] = {{FDT_OP_LAP, 4, FDT_F32, 301, 203, 157},
                                        {FDT_OP_WAVE, 8, FDT_F64, 301, 203, 157},
                                        {FDT_OP_D2Z, 2, FDT_F32, 301, 203, 157}};
    size_t n = 0;
    for (size_t pi = 0; pi < 3; pi++)
        for (size_t ci = 0; ci < sizeof spread / sizeof spread[0]; ci++, n++) {
            spread_config(&probs[pi], ci, &ks[n]);
            jobs[n] = (fdt_rt_job){.src = fdt_sb_str(&ks[n].src), .kernel = ks[n].name};
        }
    util_jobs(usrc, unames, jobs + n);
    return n;
}

static void free_family(candidate *ks, size_t n, fdt_rt_job *jobs, fdt_sb *usrc)
{
    for (size_t i = 0; i < n; i++)
        fdt_sb_free(&ks[i].src);
    for (size_t i = 0; i < n + 2; i++)
        fdt_rt_code_free(&jobs[i].code);
    fdt_sb_free(&usrc[0]);
    fdt_sb_free(&usrc[1]);
}

/* hiprtc with no ROCm header anywhere it looks: $ROCM_PATH, $HIP_PATH and $LLVM_PATH (the
 * -isystem directories comgr adds) empty, and -nostdinc keeping clang's default /usr/include
 * away. A source that includes a real ROCm header then fails to compile (so the isolation
 * holds), and every kernel family and the verification kernels still compile: fdtune supplies
 * what they include. */
static const char *const rocm_vars[] = {"ROCM_PATH", "HIP_PATH", "LLVM_PATH"};
static char no_rocm[] = "/tmp/fdtune-no-rocm-XXXXXX", *rocm_saved[3];

/* Gives hiprtc its ROCm back, whatever the test's outcome. */
static int restore_rocm(void **state)
{
    (void)state;
    for (int i = 0; i < 3; i++) {
        if (rocm_saved[i])
            setenv(rocm_vars[i], rocm_saved[i], 1);
        else
            unsetenv(rocm_vars[i]);
        free(rocm_saved[i]);
    }
    unsetenv("FDTUNE_HIPRTC_OPTIONS");
    rmdir(no_rocm);
    return 0;
}

static void test_hiprtc_self_contained(void **state)
{
    (void)state;
    if (!compiler_ok("gfx90a"))
        fail_msg("hiprtc is not available: install libamdhip64-dev (scripts/setup.sh does)");
    assert_non_null(mkdtemp(no_rocm));
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(rocm_vars[i]);
        rocm_saved[i] = v ? strdup(v) : NULL;
        setenv(rocm_vars[i], no_rocm, 1);
    }
    setenv("FDTUNE_HIPRTC_OPTIONS", "-nostdinc", 1);
    setenv("FDTUNE_CACHE", "", 1);
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch("gfx90a", &e);
    fdt_rt_code code;
    const char *real = "#include <hip/hip_version.h>\n"
                       "extern \"C\" __global__ void k(int* o) { o[0] = HIP_VERSION_MAJOR; }\n";
    int rc = fdt_rt_compile(b, real, "k", "gfx90a", 60000, &code, &e);
    if (rc == 0)
        fail_msg("hiprtc still finds ROCm's headers: the isolation does not hold");
    assert_contains(e.msg, "'hip/hip_version.h' file not found");

    candidate ks[FAMILY_SET];
    fdt_rt_job jobs[FAMILY_SET + 2];
    fdt_sb usrc[2];
    char unames[2][32];
    size_t n = family_jobs(ks, jobs, usrc, unames);
    assert_true(compile_pool(b, "gfx90a", jobs, n + 2, "the families (hiprtc, no ROCm header)",
                             &e) >= 0);
    for (size_t i = 0; i < n + 2; i++) {
        if (jobs[i].rc)
            fail_msg("%s without ROCm headers: %s", jobs[i].kernel, jobs[i].err.msg);
        if (i < n)
            check_resources(&ks[i], &jobs[i].code, "gfx90a");
    }
    print_message("%zu kernels of every family and the verification kernels compiled by hiprtc "
                  "for gfx90a with no ROCm header reachable\n", n);
    free_family(ks, n, jobs, usrc);
}

/* What spills on AMD: VGPRs that went to AGPRs (the ring with launch bounds 128 at R=8 on
 * gfx90a: LLVM counts them as VGPR spills, but the kernel has no scratch) cost no memory and
 * are no spill bytes; VGPRs stored to scratch (d2x R=8 f64 with tile=4) are. */
static void test_amd_spills(void **state)
{
    (void)state;
    if (!compiler_ok("gfx90a"))
        fail_msg("hiprtc is not available: install libamdhip64-dev (scripts/setup.sh does)");
    setenv("FDTUNE_CACHE", "", 1);
    static const struct {
        fdt_problem p;
        const char *config;
        int memory; /* 1: spills to scratch expected, 0: to AGPRs only */
    } cases[] = {
        {{FDT_OP_LAP, 8, FDT_F32, 301, 203, 157},
         "bx=32,by=4,nw=16,lds=2,vec=4,align=64,pf=2,tile=2,lb=128", 0},
        {{FDT_OP_D2X, 8, FDT_F64, 301, 203, 157}, "bx=32,by=8,tile=4", 1},
    };
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch("gfx90a", &e);
    enum { NCASES = sizeof cases / sizeof cases[0] };
    candidate ks[NCASES];
    fdt_rt_job jobs[NCASES];
    for (size_t i = 0; i < NCASES; i++) {
        candidate *k = &ks[i];
        assert_int_equal(fdt_config_parse(cases[i].config, &k->c, &e), 0);
        k->p = cases[i].p;
        fdt_gen_kernel_name(&k->p, &k->c, k->name, sizeof k->name);
        fdt_sb_init(&k->src);
        assert_int_equal(fdt_gen_source(&hip_dialect, &k->p, &k->c, k->name, NULL, &k->src, &e), 0);
        jobs[i] = (fdt_rt_job){.src = fdt_sb_str(&k->src), .kernel = k->name};
    }
    if (compile_pool(b, "gfx90a", jobs, NCASES, "the spill cases", &e) < 0)
        fail_msg("compile for gfx90a: %s", e.msg);
    for (size_t i = 0; i < NCASES; i++) {
        const candidate *k = &ks[i];
        if (jobs[i].rc)
            fail_msg("%s: %s", cases[i].config, jobs[i].err.msg);
        const fdt_rt_resources *r = &jobs[i].code.res;
        print_message("%s R=%d %s %s on gfx90a: %d VGPRs, %d AGPRs, spills %d bytes, %d SGPR "
                      "spills, scratch %d bytes\n", fdt_op_name(k->p.op), k->p.R,
                      fdt_prec_name(k->p.prec), cases[i].config, r->registers, r->agprs,
                      r->spill_bytes, r->sgpr_spills, r->scratch_bytes);
        if (cases[i].memory) {
            assert_true(r->scratch_bytes > 0 && r->spill_bytes > 0);
        } else {
            assert_true(r->agprs > 0);
            assert_int_equal(r->scratch_bytes, 0);
            assert_int_equal(r->spill_bytes, 0);
        }
        fdt_rt_code_free(&jobs[i].code);
        fdt_sb_free(&ks[i].src);
    }
}

/* ------------------------------------------------------------------ AMD: disassembly */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The memory and synchronisation footprint of a disassembly: the distinct global memory
 * instructions with their cache-policy bits (nt, slc, glc, sc0, sc1), LDS reads and writes,
 * barriers and atomics, sorted, one per line. Scratch traffic (spills) is left out: how much
 * a compiler spills is its own business. */
static void footprint(const char *dis, fdt_sb *out)
{
    char *items[4096];
    size_t n = 0;
    for (const char *l = dis; *l && n < 4096;) {
        size_t len = strcspn(l, "\n");
        char line[512], op[96] = "";
        snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), l);
        l += len + (l[len] == '\n');
        char *c = strstr(line, "//");
        if (c)
            *c = 0;
        if (sscanf(line, " %95s", op) != 1)
            continue;
        if (!strncmp(op, "ds_read", 7) || !strncmp(op, "ds_load", 7))
            snprintf(op, sizeof op, "ds_read");
        else if (!strncmp(op, "ds_write", 8) || !strncmp(op, "ds_store", 8))
            snprintf(op, sizeof op, "ds_write");
        else if (strncmp(op, "global_", 7) && strcmp(op, "s_barrier") && !strstr(op, "atomic"))
            continue;
        fdt_sb item;
        fdt_sb_init(&item);
        fdt_sb_puts(&item, op);
        static const char *const bits[] = {" nt", " slc", " glc", " sc0", " sc1"};
        for (int i = 0; i < 5 && op[0] == 'g'; i++)
            if (strstr(line, bits[i]))
                fdt_sb_puts(&item, bits[i]);
        items[n++] = fdt_sb_take(&item);
    }
    qsort(items, n, sizeof items[0], cmp_str);
    for (size_t i = 0; i < n; i++) {
        if (!i || strcmp(items[i], items[i - 1]))
            fdt_sb_printf(out, "%s\n", items[i]);
    }
    for (size_t i = 0; i < n; i++)
        free(items[i]);
}

/* Gives the offline clang its default lookup back, whatever the test's outcome. */
static int restore_clang(void **state)
{
    (void)state;
    unsetenv("FDTUNE_CLANG");
    return 0;
}

#ifdef FDTUNE_HAVE_HIP
static int clang_id(const char *arch, char *buf, size_t n, fdt_err *e)
{
    return fdt_rt_amd_clang_id(arch, buf, n, e);
}

/* fdtune's device header (templates/amd_device.h) against HIP's own: every family and the
 * verification kernels compiled for gfx90a by the offline clang (fdtune's header, nothing
 * else) and by hiprtc (ROCm's runtime header) use the same global memory instructions (vector
 * widths, nontemporal stores), LDS, barriers and atomics (unsigned 64-bit min/max, the double
 * add). The headers are compared, not the compilers: clang 16, the nearest to the LLVM of
 * Debian's hiprtc (ROCm 5.2), compiles where it is found (clang 19 merges stores further: a
 * vec=4 tail of three floats becomes one global_store_dwordx3). */
static void test_amd_header_vs_hiprtc(void **state)
{
    (void)state;
    fdt_err e;
    char id[1024], c16[PATH_MAX];
    if (fdt_find_program("clang-16", c16, sizeof c16) == 0)
        setenv("FDTUNE_CLANG", c16, 1);
    if (clang_id("gfx90a", id, sizeof id, &e)) {
        print_message("SKIPPED (not compared, not a pass): %s\n", e.msg);
        skip();
    }
    print_message("offline clang: %s\n", id);
    const fdt_rt_backend *hip = fdt_rt_backend_for_arch("gfx90a", &e);
    fdt_rt_backend clang = {.name = "clang", .vendor = "AMD",
                            .options = "", .compiler_id = clang_id,
                            .compile = fdt_rt_amd_clang_compile,
                            .disassemble = hip->disassemble};
    setenv("FDTUNE_CACHE", "", 1);
    candidate ks[FAMILY_SET];
    fdt_rt_job jr[FAMILY_SET + 2], jc[FAMILY_SET + 2];
    fdt_sb usrc[2];
    char unames[2][32];
    size_t n = family_jobs(ks, jr, usrc, unames);
    memcpy(jc, jr, sizeof jc);
    assert_true(compile_pool(hip, "gfx90a", jr, n + 2, "the families (hiprtc)", &e) >= 0);
    assert_true(compile_pool(&clang, "gfx90a", jc, n + 2, "the families (clang)", &e) >= 0);
    for (size_t i = 0; i < n + 2; i++) {
        if (jr[i].rc || jc[i].rc)
            fail_msg("%s for gfx90a: %s", jr[i].kernel, jr[i].rc ? jr[i].err.msg : jc[i].err.msg);
        fdt_sb dr, dc, fr, fc;
        fdt_sb_init(&dr), fdt_sb_init(&dc), fdt_sb_init(&fr), fdt_sb_init(&fc);
        if (fdt_rt_disassemble(hip, &jr[i].code, "gfx90a", 60000, &dr, &e) ||
            fdt_rt_disassemble(hip, &jc[i].code, "gfx90a", 60000, &dc, &e))
            fail_msg("disassembly: %s", e.msg);
        footprint(fdt_sb_str(&dr), &fr);
        footprint(fdt_sb_str(&dc), &fc);
        assert_true(strstr(fdt_sb_str(&fr), "global_store") != NULL);
        if (strcmp(fdt_sb_str(&fr), fdt_sb_str(&fc)))
            fail_msg("%s (%s): hiprtc uses\n%sfdtune's header with clang uses\n%s", jr[i].kernel,
                     i < n ? ks[i].text : "util.hip", fdt_sb_str(&fr), fdt_sb_str(&fc));
        fdt_sb_free(&dr), fdt_sb_free(&dc), fdt_sb_free(&fr), fdt_sb_free(&fc);
        fdt_rt_code_free(&jc[i].code);
    }
    print_message("%zu kernels: the same memory instructions, LDS, barriers and atomics with "
                  "fdtune's header (clang) as with ROCm's (hiprtc)\n", n + 2);
    free_family(ks, n, jr, usrc);
}
#else
static void test_amd_header_vs_hiprtc(void **state)
{
    (void)state;
    print_message("SKIPPED: no hip backend in this build\n");
    skip();
}
#endif

/* Counts the lines of text that start (after blanks) with prefix. */
static int count_ops(const char *text, const char *prefix)
{
    int n = 0;
    for (const char *l = text; *l;) {
        const char *p = l + strspn(l, " \t");
        if (!strncmp(p, prefix, strlen(prefix)))
            n++;
        const char *eol = strchr(l, '\n');
        if (!eol)
            break;
        l = eol + 1;
    }
    return n;
}

/* The disassembly of a ring kernel (the asynchronous copies: on AMD ordinary loads into LDS)
 * for gfx90a (hiprtc), gfx940 and gfx942 (clang): the kernel's symbol, its global loads, the
 * end of the program; the counts of global loads and of waits on them are printed (a later
 * change keeps several loads in flight on AMD and will assert on them). A target without a
 * compiler here is left out, said, and makes the test a skip. */
static void test_disassemble(void **state)
{
    (void)state;
    static const char *const archs[] = {"gfx90a", "gfx940", "gfx942"};
    int missing = 0;
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    fdt_config c;
    fdt_err e;
    assert_int_equal(fdt_config_parse("bx=32,by=8,nw=32,lds=2,vec=4,align=64,pf=2", &c, &e), 0);
    char name[96], sym[128];
    fdt_gen_kernel_name(&p, &c, name, sizeof name);
    snprintf(sym, sizeof sym, "<%s>:", name);
    fdt_sb src;
    fdt_sb_init(&src);
    assert_int_equal(fdt_gen_source(&hip_dialect, &p, &c, name, NULL, &src, &e), 0);
    for (int a = 0; a < 3; a++) {
        const fdt_rt_backend *b = fdt_rt_backend_for_arch(archs[a], &e);
        char id[1024];
        if (a > 0 && (!b || b->compiler_id(archs[a], id, sizeof id, &e))) {
            print_message("SKIPPED %s (not disassembled, not a pass): %s\n", archs[a], e.msg);
            missing++;
            continue;
        }
        fdt_rt_code code;
        if (fdt_rt_compile(b, fdt_sb_str(&src), name, archs[a], 300000, &code, &e))
            fail_msg("%s: %s", archs[a], e.msg);
        fdt_sb dis;
        fdt_sb_init(&dis);
        if (fdt_rt_disassemble(b, &code, archs[a], 60000, &dis, &e))
            fail_msg("disassembly for %s: %s", archs[a], e.msg);
        const char *d = fdt_sb_str(&dis);
        assert_contains(d, sym);
        assert_contains(d, "global_load_dwordx4");
        assert_contains(d, "ds_write");
        assert_contains(d, "s_barrier");
        assert_contains(d, "s_endpgm");
        int loads = count_ops(d, "global_load"), waits = count_ops(d, "s_waitcnt vmcnt");
        assert_true(loads > 0 && waits > 0);
        print_message("ring lap R=4 f32 for %s: %d global_load*, %d s_waitcnt vmcnt\n", archs[a],
                      loads, waits);
        fdt_sb_free(&dis);
        fdt_rt_code_free(&code);
    }
    fdt_sb_free(&src);
    if (missing)
        skip();
}

/* Cubins are disassembled by cuobjdump -sass (or nvdisasm) where the toolkit has them; where
 * it has not, the message says which tools and packages. */
static void test_disassemble_cubin(void **state)
{
    (void)state;
    if (!compiler_ok("sm_90")) {
        print_message("NVRTC not found: no cubin to disassemble\n");
        skip();
    }
    fdt_err e;
    const fdt_rt_backend *b = fdt_rt_backend_for_arch("sm_90", &e);
    fdt_rt_code code;
    const char *src = "extern \"C\" __global__ void kdis(float* o) { o[threadIdx.x] = 2.5f; }";
    assert_int_equal(fdt_rt_compile(b, src, "kdis", "sm_90", 60000, &code, &e), 0);
    fdt_sb dis;
    fdt_sb_init(&dis);
    if (fdt_rt_disassemble(b, &code, "sm_90", 60000, &dis, &e) == 0) {
        assert_contains(fdt_sb_str(&dis), "kdis");
        assert_contains(fdt_sb_str(&dis), "EXIT");
    } else {
        assert_contains(e.msg, "cuobjdump");
        assert_contains(e.msg, "nvdisasm");
        print_message("no CUDA disassembler here: %s\n", e.msg);
    }
    fdt_sb_free(&dis);
    fdt_rt_code_free(&code);
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
    /* hiprtc of ROCm < 5.6 crashes on gfx942: the offline clang takes it instead (clang 17 and
     * later know it), and where no clang knows gfx942 (clang 16 alone) or none is found the
     * message says so, naming the target */
    if (compiler_ok("gfx90a")) {
        const fdt_rt_backend *b = fdt_rt_backend_for_arch("gfx90a", &e);
        char v[64];
        b->compiler_version(v, sizeof v, &e);
        fdt_rt_code code;
        /* fdtune's sources include hip/hip_runtime.h (hiprtc pre-includes its own, clang
         * reads nothing else) */
        int rc = fdt_rt_compile(b, "#include <hip/hip_runtime.h>\n"
                                   "extern \"C\" __global__ void k() {}", "k", "gfx942", 60000,
                                &code, &e);
        if (rc == 0) {
            assert_true(code.size > 0);
            fdt_rt_code_free(&code);
        } else {
            assert_null(strstr(e.msg, "crashed"));
            if (!strstr(e.msg, "does not know gfx942"))
                assert_contains(e.msg, "gfx942 needs the offline compiler");
            print_message("gfx942 here: %s\n", e.msg);
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
        cmocka_unit_test(test_elf_code_bytes),
        cmocka_unit_test(test_child_isolation), cmocka_unit_test(test_child_pool),
        cmocka_unit_test(test_frames),
        cmocka_unit_test(test_backend_for_arch), cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_compile_cache),   cmocka_unit_test(test_compile_matrix_gfx90a),
        cmocka_unit_test(test_compile_matrix_sm90),    cmocka_unit_test_teardown(test_hiprtc_self_contained, restore_rocm),
        cmocka_unit_test(test_compile_matrix_gfx940),  cmocka_unit_test(test_compile_matrix_gfx942),
        cmocka_unit_test(test_compile_matrix_gfx1100),
        cmocka_unit_test_teardown(test_amd_header_vs_hiprtc, restore_clang),
        cmocka_unit_test(test_disassemble),
        cmocka_unit_test(test_disassemble_cubin), cmocka_unit_test(test_amd_spills),
    };
    /* CTest runs the compile matrices one per test (each takes minutes on two cores) and the
     * rest as one: FDTUNE_TEST_FILTER runs the tests it matches, FDTUNE_TEST_SKIP skips them
     * (cmocka patterns, '*' and '?'). */
    if (getenv("FDTUNE_TEST_FILTER"))
        cmocka_set_test_filter(getenv("FDTUNE_TEST_FILTER"));
    if (getenv("FDTUNE_TEST_SKIP"))
        cmocka_set_skip_filter(getenv("FDTUNE_TEST_SKIP"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
