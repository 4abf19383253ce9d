/* The C dialect of the generator, end to end on this machine's C compiler: for every operator,
 * R in {1, 4, 8}, f32 and f64, both kernel families and a spread of configs (tiles, uj/uk,
 * streaming stores, two passes, prefetch, loop order and schedule, the grid as arguments), the
 * generated source is compiled with `$CC -O2 -fopenmp -fPIC -shared` (several kernels per
 * translation unit), loaded with dlopen and run through its `void NAME(void **args)` entry
 * point on a small odd grid; the inputs come from the generated fill, the output from the
 * generated poison, and every point of the output is checked: interior points against the
 * generator's fp64 reference (generator/reference.c) within fdt_tolerance_make's bound,
 * everything else still the poison. The util entry points (compare, check_fill, gather, copy,
 * flush) are checked against the same arithmetic done here, and the test-only faults must be
 * caught: coef and plane (wrong values), halo (a touched halo), oob (the process dies) and
 * hang (it never returns; both in a child process). dwave (every deployment x eta form) runs
 * its two kernels, NAME and NAME_int, over fdt_gen_deploy's boxes; each box alone writes
 * exactly its points but its hole, and the three deployments write the same bytes.
 * No C compiler with OpenMP: exit 77 (skipped), saying so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fdt_gen.h"
#include "testutil.h"

/* TUS units of cases, then the util functions' (UTIL_TU) and the faults' (FAULT_TU) */
enum { NX = 37, NY = 29, NZ = 23, TUS = 6, UTIL_TU = TUS, FAULT_TU = TUS + 1, CASES_MAX = 256 };
static const uint32_t POISON32 = 0x7fc0deadu, PAD32 = 0x7fc0fadeu;
static const uint64_t POISON64 = 0x7ff8deaddeaddeadULL, PAD64 = 0x7ff8fadefadefadeULL;
static const uint64_t SEED = 12345;
static const fdt_gen_target CPU = {FDT_DIALECT_C};

typedef void (*entry_fn)(void **args);

typedef struct gc_case {
    fdt_problem p;
    char config[96];
    int runtime_dims;
    char name[32];
    int tu;        /* translation unit it is compiled in */
    entry_fn fn;
    entry_fn fn_int; /* dwave: the interior kernel NAME_int */
} gc_case;

static char dir[256];
static gc_case cases[CASES_MAX];
static int ncases;
static void *libs[FAULT_TU + 1];
static entry_fn fill[2], poison[2], compare[2], check_fill[2], gather[2], copy[2], flush[2];

/* ---------------------------------------------------------------- building the cases */

static void add_case(fdt_op op, int R, fdt_prec prec, const char *config, int rt)
{
    assert_true(ncases < CASES_MAX);
    gc_case *c = &cases[ncases];
    c->p = (fdt_problem){op, R, prec, NX, NY, NZ};
    if (op == FDT_OP_DWAVE) /* a strong layer 5 points wide: the damping shows */
        c->p.absorb_w = 5, c->p.absorb_s = 0.5;
    snprintf(c->config, sizeof c->config, "%s", config);
    c->runtime_dims = rt;
    snprintf(c->name, sizeof c->name, "gc_k%d", ncases);
    c->tu = ncases % TUS;
    ncases++;
}

/* The configs each problem is generated with: the baseline, one of the blocked configs in
 * turn (so that each meets several operators, radii and both precisions), and at R=4 the
 * loop nest's clauses and the grid as arguments. About 100 kernels: their compile is most
 * of the test's time. */
static void make_cases(void)
{
    static const char *const blocked[] = {
        "blk=1",                                      /* one tile: whole rows and planes */
        "blk=1,tx=16,ty=5,tz=7,uk=2,pfd=2",           /* x tiles, remainders, prefetch */
        "blk=1,ty=4,uj=2,uk=4,nt=1,xs=16,loop=jk",    /* streaming stores through strips */
        "blk=1,ty=3,tz=5,uj=4,pfd=1,sched=dynamic",
    };
    static const char *const lapwave[] = {
        "blk=1,ty=6,tz=9,twopass=1,nt=1,uj=4",        /* two passes through strips */
        "blk=1,twopass=1,uk=2,pfd=1",
    };
    static const int radii[] = {1, 4, 8};
    int turn = 0;
    for (int op = 0; op < FDT_OP_COUNT; op++)
        for (int ri = 0; ri < 3; ri++)
            for (int prec = 0; prec < 2; prec++) {
                add_case(op, radii[ri], prec, "default", 0); /* loops: the baseline */
                add_case(op, radii[ri], prec, blocked[turn++ % 4], 0);
                if (op == FDT_OP_LAP || fdt_op_is_step(op))
                    add_case(op, radii[ri], prec, lapwave[(ri + prec) % 2], 0);
                if (radii[ri] == 4) {
                    add_case(op, 4, prec, "loop=jk,sched=dynamic,chunk=3,thr=2,bind=spread,"
                                          "simd=4,align=16", 0);
                    add_case(op, 4, prec, "default", 1);
                    add_case(op, 4, prec, "blk=1,tx=8,ty=3,tz=4,uk=4,nt=1,pfd=3", 1);
                }
            }
    /* dwave: every deployment with both damping forms (eta=array right after its eta=dist
     * twin), in both families and the two-pass and streaming-store rows */
    static const char *const deploys[] = {"complete", "inout", "sides"};
    static const char *const dw[] = {"default", "blk=1,ty=4,tz=5,uj=2,uk=2",
                                     "blk=1,ty=6,twopass=1,nt=1,uj=4,xs=16",
                                     "blk=1,tx=16,ty=3,nt=1,uk=4,pfd=1"};
    for (int d = 0; d < 3; d++)
        for (int prec = 0; prec < 2; prec++)
            for (int eta = 0; eta < 2; eta++) {
                char config[96];
                int k = d * 2 + prec;
                snprintf(config, sizeof config, "deploy=%s,eta=%s%s%s", deploys[d],
                         eta ? "array" : "dist", k % 4 ? "," : "", k % 4 ? dw[k % 4] : "");
                add_case(FDT_OP_DWAVE, radii[k % 3], prec, config, k == 5);
            }
}

/* The test-only faults, in lap R=4 f32 kernels named gc_faultN: what must show when one
 * runs (wrong values, a touched halo), or how its process ends (SIGSEGV, never). */
static const struct {
    const char *config;
    int bad, touched, crash, hang;
} faults[] = {
    {"blk=1,ty=4,uk=2,fault=coef", 1, 0, 0, 0},
    {"fault=coef", 1, 0, 0, 0},
    {"fault=plane", 1, 0, 0, 0},
    {"blk=1,ty=4,uk=4,nt=1,fault=plane", 1, 0, 0, 0},
    {"blk=1,fault=halo", 0, 1, 0, 0},
    {"fault=oob", 0, 0, 1, 0},
    {"blk=1,fault=hang", 0, 0, 0, 1},
};
#define NFAULTS (sizeof faults / sizeof faults[0])

/* ---------------------------------------------------------------- compiling */

static const char *cc(void)
{
    const char *c = getenv("CC");
    return c && *c ? c : "cc";
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Compiles dir/tuN.c into dir/tuN.so in a child process; returns its pid. */
static pid_t start_compile(int tu)
{
    char src[300], so[300], log[300];
    snprintf(src, sizeof src, "%s/tu%d.c", dir, tu);
    snprintf(so, sizeof so, "%s/tu%d.so", dir, tu);
    snprintf(log, sizeof log, "%s/tu%d.log", dir, tu);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(log, "w", stderr) || !freopen(log, "a", stdout))
            _exit(126);
        execlp(cc(), cc(), "-O2", "-fopenmp", "-fPIC", "-shared", "-o", so, src, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void finish_compile(pid_t pid, int tu)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
        char log[300];
        snprintf(log, sizeof log, "%s/tu%d.log", dir, tu);
        char *text = tu_slurp(log);
        fail_msg("%s failed on %s/tu%d.c:\n%.4000s", cc(), dir, tu, text ? text : "");
    }
}

/* The sources of every case (TUS units), of the util functions (UTIL_TU) and of the faults
 * (FAULT_TU), compiled two at a time and loaded. */
static int setup(void **state)
{
    (void)state;
    make_cases();
    fdt_sb src[FAULT_TU + 1];
    fdt_err e;
    for (int t = 0; t <= FAULT_TU; t++)
        fdt_sb_init(&src[t]);
    for (int i = 0; i < ncases; i++) {
        fdt_config c;
        fdt_gen_opts o = {cases[i].runtime_dims};
        if (fdt_config_parse(cases[i].config, &c, &e) ||
            fdt_gen_source(&CPU, &cases[i].p, &c, cases[i].name, &o, &src[cases[i].tu], &e))
            fail_msg("case %d (%s): %s", i, cases[i].config, e.msg);
    }
    for (int prec = 0; prec < 2; prec++)
        if (fdt_gen_util_source(&CPU, prec, &src[UTIL_TU], &e))
            fail_msg("util source: %s", e.msg);
    for (size_t i = 0; i < NFAULTS; i++) {
        fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, NX, NY, NZ};
        fdt_config c;
        char name[32];
        snprintf(name, sizeof name, "gc_fault%zu", i);
        if (fdt_config_parse(faults[i].config, &c, &e) ||
            fdt_gen_source(&CPU, &p, &c, name, NULL, &src[FAULT_TU], &e))
            fail_msg("%s: %s", faults[i].config, e.msg);
    }
    pid_t pids[FAULT_TU + 1];
    for (int t = 0; t <= FAULT_TU; t++) {
        char path[300];
        snprintf(path, sizeof path, "%s/tu%d.c", dir, t);
        write_file(path, fdt_sb_str(&src[t]));
        fdt_sb_free(&src[t]);
        pids[t] = start_compile(t);
        if (t >= 1)
            finish_compile(pids[t - 1], t - 1);
    }
    finish_compile(pids[FAULT_TU], FAULT_TU);
    for (int t = 0; t <= FAULT_TU; t++) {
        char so[300];
        snprintf(so, sizeof so, "%s/tu%d.so", dir, t);
        libs[t] = dlopen(so, RTLD_NOW | RTLD_LOCAL);
        if (!libs[t])
            fail_msg("dlopen %s: %s", so, dlerror());
    }
    for (int i = 0; i < ncases; i++) {
        *(void **)&cases[i].fn = dlsym(libs[cases[i].tu], cases[i].name);
        assert_non_null(cases[i].fn);
        if (cases[i].p.op == FDT_OP_DWAVE) {
            char name[40];
            fdt_gen_dwave_interior_name(cases[i].name, name, sizeof name);
            *(void **)&cases[i].fn_int = dlsym(libs[cases[i].tu], name);
            assert_non_null(cases[i].fn_int);
        }
    }
    static const char *const pn[2] = {"f32", "f64"};
    for (int prec = 0; prec < 2; prec++) {
        struct {
            const char *what;
            entry_fn *fn;
        } u[] = {{"fill", &fill[prec]},       {"poison", &poison[prec]},
                 {"compare", &compare[prec]}, {"check_fill", &check_fill[prec]},
                 {"gather", &gather[prec]},   {"copy", &copy[prec]},
                 {"flush", &flush[prec]}};
        for (size_t k = 0; k < sizeof u / sizeof u[0]; k++) {
            char sym[40];
            snprintf(sym, sizeof sym, "fdt_%s_%s", u[k].what, pn[prec]);
            *(void **)u[k].fn = dlsym(libs[UTIL_TU], sym);
            if (!*u[k].fn)
                fail_msg("util entry point %s missing", sym);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- running a case */

typedef struct arrays {
    fdt_layout lay;
    void *in[3], *out;
    size_t bytes;
} arrays;

static void *alloc_array(size_t bytes)
{
    void *p = NULL;
    assert_int_equal(posix_memalign(&p, 64, bytes), 0);
    return p;
}

static void fill_array(const fdt_problem *p, const fdt_layout *l, void *a, int field)
{
    long long elems = l->elems, offset = l->offset, line = l->line, slice = l->slice;
    int mx = (int)l->mx, my = (int)l->my, mz = (int)l->mz;
    unsigned long long seed = SEED;
    uint32_t pad32 = PAD32;
    uint64_t pad64 = PAD64;
    void *args[] = {&a, &elems, &offset, &line, &slice, &mx, &my, &mz, &seed, &field,
                    p->prec == FDT_F32 ? (void *)&pad32 : (void *)&pad64};
    fill[p->prec](args);
}

static void poison_array(const fdt_problem *p, void *a, long long elems)
{
    uint32_t p32 = POISON32;
    uint64_t p64 = POISON64;
    void *args[] = {&a, &elems, p->prec == FDT_F32 ? (void *)&p32 : (void *)&p64};
    poison[p->prec](args);
}

static void make_arrays(const fdt_problem *p, int align, arrays *a)
{
    fdt_err e;
    memset(a, 0, sizeof *a);
    assert_int_equal(fdt_layout_make(p, align, &a->lay, &e), 0);
    a->bytes = (size_t)a->lay.elems * fdt_prec_size(p->prec);
    for (int f = 0; f < fdt_op_ninputs(p->op); f++) {
        a->in[f] = alloc_array(a->bytes);
        fill_array(p, &a->lay, a->in[f], f);
    }
    a->out = alloc_array(a->bytes);
    poison_array(p, a->out, a->lay.elems);
}

static void free_arrays(arrays *a)
{
    for (int f = 0; f < 3; f++)
        free(a->in[f]);
    free(a->out);
}

typedef union argval {
    void *ptr;
    int i;
    long long ll;
    float f;
    double d;
} argval;

static void set_real(const fdt_problem *p, argval *v, double x)
{
    if (p->prec == FDT_F32)
        v->f = (float)x;
    else
        v->d = x;
}

/* One launch: the box it computes (NULL: the grid, for every operator but dwave) and dwave's
 * eta array. */
typedef struct launch_box {
    const fdtuned_box *box;
    const void *eta;
} launch_box;

/* Calls fn on the arrays with the arguments of fdt_gen_kernel_args, for rows [jbeg, jend) (of
 * the box, dwave: its pointers offset to the box's padded origin). */
static void run_kernel(entry_fn fn, const fdt_problem *p, const fdt_params *q, arrays *a,
                       int rt, int jbeg, int jend, const launch_box *lb)
{
    fdt_arg at[FDT_ARG_COUNT];
    argval v[FDT_ARG_COUNT];
    void *args[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(p->op, rt, at);
    const fdtuned_box *b = lb ? lb->box : NULL;
    int64_t origin = b ? b->g[0] + b->g[1] * a->lay.line + b->g[2] * a->lay.slice : 0;
    size_t off = (size_t)(a->lay.offset + origin) * fdt_prec_size(p->prec);
    for (int i = 0; i < n; i++) {
        switch (at[i]) {
        case FDT_ARG_OUT: v[i].ptr = (char *)a->out + off; break;
        case FDT_ARG_IN: v[i].ptr = (char *)a->in[0] + off; break;
        case FDT_ARG_PREV: v[i].ptr = (char *)a->in[1] + off; break;
        case FDT_ARG_C2: v[i].ptr = (char *)a->in[2] + off; break;
        case FDT_ARG_ETA: v[i].ptr = (void *)lb->eta; break;
        case FDT_ARG_NX: v[i].i = (int)p->nx; break;
        case FDT_ARG_NY: v[i].i = (int)p->ny; break;
        case FDT_ARG_NZ: v[i].i = (int)p->nz; break;
        case FDT_ARG_LINE: v[i].i = (int)a->lay.line; break;
        case FDT_ARG_SLICE: v[i].ll = a->lay.slice; break;
        case FDT_ARG_JBEG: v[i].i = jbeg; break;
        case FDT_ARG_JEND: v[i].i = jend; break;
        case FDT_ARG_SX: set_real(p, &v[i], q->sx); break;
        case FDT_ARG_SY: set_real(p, &v[i], q->sy); break;
        case FDT_ARG_SZ: set_real(p, &v[i], q->sz); break;
        case FDT_ARG_SI: v[i].i = (int)q->si; break;
        case FDT_ARG_SJ: v[i].i = (int)q->sj; break;
        case FDT_ARG_SK: v[i].i = (int)q->sk; break;
        case FDT_ARG_SRC: set_real(p, &v[i], q->src); break;
        default: /* dwave's box: extents, origin, hole */
            assert_non_null(b);
            if (at[i] <= FDT_ARG_BNZ)
                v[i].i = (int)b->n[at[i] - FDT_ARG_BNX];
            else if (at[i] <= FDT_ARG_GZ)
                v[i].i = (int)b->g[at[i] - FDT_ARG_GX];
            else
                v[i].i = (int)b->hole[at[i] - FDT_ARG_HX0];
        }
        args[i] = &v[i];
    }
    fn(args);
}

/* Runs dwave case c's two kernels over the boxes b[0..nb) on a: NAME on the damped boxes,
 * NAME_int on the others, each on its own rows (box-local), the eta array made here. */
static void run_boxes(const gc_case *c, const fdt_params *q, arrays *a, const fdtuned_box *b,
                      int nb)
{
    fdt_err e;
    void *eta = alloc_array(fdt_absorb_profile_bytes(&c->p));
    assert_int_equal(fdt_absorb_profile(&c->p, eta, &e), 0);
    for (int i = 0; i < nb; i++) {
        launch_box lb = {&b[i], eta};
        run_kernel(b[i].damped ? c->fn : c->fn_int, &c->p, q, a, c->runtime_dims, c->p.R,
                   (int)(c->p.R + b[i].n[1]), &lb);
    }
    free(eta);
}

typedef struct input_ctx {
    const fdt_problem *p;
    const arrays *a;
} input_ctx;

static double elem(const fdt_problem *p, const void *a, int64_t e)
{
    return p->prec == FDT_F32 ? ((const float *)a)[e] : ((const double *)a)[e];
}

/* The reference reads the inputs the generated fill wrote. */
static double input(void *ctx, int field, int64_t i, int64_t j, int64_t k)
{
    input_ctx *c = ctx;
    return elem(c->p, c->a->in[field], fdt_layout_index(&c->a->lay, i, j, k));
}

static int poisoned(const fdt_problem *p, const void *a, int64_t e)
{
    if (p->prec == FDT_F32) {
        uint32_t u;
        memcpy(&u, (const float *)a + e, 4);
        return u == POISON32;
    }
    uint64_t u;
    memcpy(&u, (const double *)a + e, 8);
    return u == POISON64;
}

typedef struct verdict {
    long bad, touched;
    double max_err;
    char first[160];
} verdict;

/* Every element of the output: interior points within tol of the fp64 reference, every other
 * element of the allocation still the poison. */
static void check_output(const fdt_problem *p, const fdt_params *q, const arrays *a,
                         verdict *v)
{
    long double coef[FDT_R_MAX + 1];
    fdt_err e;
    assert_int_equal(fdt_fd_coeffs(p->R, coef, &e), 0);
    fdt_tolerance tol;
    fdt_tolerance_make(p, q, &tol);
    input_ctx ctx = {p, a};
    memset(v, 0, sizeof *v);
    const fdt_layout *l = &a->lay;
    char *inside = calloc((size_t)l->elems, 1);
    assert_non_null(inside);
    for (int64_t k = p->R; k < p->R + p->nz; k++)
        for (int64_t j = p->R; j < p->R + p->ny; j++)
            for (int64_t i = p->R; i < p->R + p->nx; i++) {
                int64_t at = fdt_layout_index(l, i, j, k);
                inside[at] = 1;
                double want = fdt_reference_point(p, q, coef, input, &ctx, i, j, k);
                double got = elem(p, a->out, at), err = fabs(got - want);
                if (!(err <= tol.ref_vs_exact)) {
                    if (!v->bad++)
                        snprintf(v->first, sizeof v->first, "(%lld, %lld, %lld): %.9g, want "
                                 "%.9g (tolerance %.3g)", (long long)i, (long long)j,
                                 (long long)k, got, want, tol.ref_vs_exact);
                }
                if (err > v->max_err || err != err)
                    v->max_err = err;
            }
    for (int64_t at = 0; at < l->elems; at++)
        if (!inside[at] && !poisoned(p, a->out, at))
            v->touched++;
    free(inside);
}

/* Runs case c on fresh arrays and checks its output. */
static void run_case(const gc_case *c, verdict *v)
{
    fdt_config cfg;
    fdt_err e;
    fdt_geometry g;
    assert_int_equal(fdt_config_parse(c->config, &cfg, &e), 0);
    assert_int_equal(fdt_gen_geometry_for(&CPU, &c->p, &cfg, &g, &e), 0);
    assert_int_equal(g.nlaunch, 1);
    fdt_params q;
    fdt_params_default(&c->p, &q);
    arrays a;
    make_arrays(&c->p, cfg.align, &a);
    if (c->p.op == FDT_OP_DWAVE) { /* the config's deployment, each box on its own rows */
        fdt_deploy d;
        assert_int_equal(fdt_gen_deploy(&CPU, &c->p, &cfg, &d, &e), 0);
        for (int i = 0; i < d.nbox; i++)
            assert_int_equal(d.geo[i].launch[0].jend - d.geo[i].launch[0].jbeg, d.box[i].n[1]);
        run_boxes(c, &q, &a, d.box, d.nbox);
    } else {
        run_kernel(c->fn, &c->p, &q, &a, c->runtime_dims, g.launch[0].jbeg, g.launch[0].jend,
                   NULL);
    }
    check_output(&c->p, &q, &a, v);
    free_arrays(&a);
}

static void test_every_case(void **state)
{
    (void)state;
    int failed = 0;
    for (int i = 0; i < ncases; i++) {
        const gc_case *c = &cases[i];
        verdict v;
        run_case(c, &v);
        if (v.bad || v.touched) {
            char what[96];
            fdt_problem_format(&c->p, what, sizeof what);
            print_error("%s %s%s: %ld wrong (first %s), %ld halo elements touched\n", what,
                        c->config, c->runtime_dims ? " (grid as arguments)" : "", v.bad,
                        v.first, v.touched);
            failed++;
        }
    }
    print_message("%d kernels checked at every point of %dx%dx%d\n", ncases, NX, NY, NZ);
    assert_int_equal(failed, 0);
}

/* The elements one launch of box b wrote (not the poison): exactly the box's points outside
 * its hole. */
static void check_box_writes(const gc_case *c, const arrays *a, const fdtuned_box *b)
{
    const fdt_layout *l = &a->lay;
    const int R = c->p.R;
    long written = 0, expected = 0;
    for (int64_t at = 0; at < l->elems; at++)
        written += !poisoned(&c->p, a->out, at);
    for (int64_t z = 0; z < b->n[2]; z++)
        for (int64_t y = 0; y < b->n[1]; y++)
            for (int64_t x = 0; x < b->n[0]; x++) {
                const long long *h = b->hole;
                int hole = x >= h[0] && x < h[1] && y >= h[2] && y < h[3] && z >= h[4] &&
                           z < h[5];
                int64_t at = fdt_layout_index(l, R + b->g[0] + x, R + b->g[1] + y,
                                              R + b->g[2] + z);
                if (hole != poisoned(&c->p, a->out, at))
                    fail_msg("%s box at %lld,%lld,%lld: point (%lld, %lld, %lld) %s", c->config,
                             b->g[0], b->g[1], b->g[2], (long long)x, (long long)y,
                             (long long)z, hole ? "in the hole written" : "not written");
                expected += !hole;
            }
    if (written != expected)
        fail_msg("%s box at %lld,%lld,%lld: %ld elements written outside it", c->config,
                 b->g[0], b->g[1], b->g[2], written - expected);
}

/* dwave: the three deployments of one compiled kernel pair write the same bits. Each case's
 * NAME and NAME_int run over the boxes of complete, inout and sides (fdtuned_deploy_boxes,
 * one point per block in C) from the same inputs; the outputs (halo included) must be equal
 * byte for byte: the damped kernel writes where g = 0 exactly what the interior kernel does
 * ((w + g p_prev) / (1 + g) is taken only where g != 0), and every point's value depends on
 * its global coordinates, not on the box. The two damping forms are a different matter: eta=dist
 * computes S (d/W)^2 in the kernel's precision, eta=array reads its rounding from fp64, so in
 * f32 the layer's values may differ in the last bits (both within the tolerance, test_every_case);
 * the interior, where g = 0, is the same bits. The counts are printed. */
static void test_dwave_deployments_agree(void **state)
{
    (void)state;
    int compared = 0;
    for (int i = 0; i < ncases; i++) {
        const gc_case *c = &cases[i];
        if (c->p.op != FDT_OP_DWAVE)
            continue;
        fdt_config cfg;
        fdt_err e;
        assert_int_equal(fdt_config_parse(c->config, &cfg, &e), 0);
        fdt_params q;
        fdt_params_default(&c->p, &q);
        const long long n[3] = {c->p.nx, c->p.ny, c->p.nz}, ext[3] = {1, 1, 1};
        arrays a[3];
        for (int d = 0; d < 3; d++) {
            fdtuned_box b[FDTUNED_DEPLOY_MAX];
            int nb = fdtuned_deploy_boxes(d, n, c->p.absorb_w, ext, b);
            assert_true(nb >= 1);
            make_arrays(&c->p, cfg.align, &a[d]);
            for (int k = 0; k < nb; k++) { /* each launch alone writes its box but the hole */
                run_boxes(c, &q, &a[d], &b[k], 1);
                check_box_writes(c, &a[d], &b[k]);
                poison_array(&c->p, a[d].out, a[d].lay.elems);
            }
            run_boxes(c, &q, &a[d], b, nb);
        }
        for (int d = 1; d < 3; d++)
            if (memcmp(a[0].out, a[d].out, a[0].bytes)) {
                char what[96];
                fdt_problem_format(&c->p, what, sizeof what);
                fail_msg("%s %s: deployment %d's output differs from complete's", what,
                         c->config, d);
            }
        for (int d = 0; d < 3; d++)
            free_arrays(&a[d]);
        compared++;
    }
    assert_true(compared >= 12);
    /* eta=array against its eta=dist twin (the case before it) */
    int pairs = 0;
    for (int i = 1; i < ncases; i++) {
        const gc_case *c = &cases[i], *twin = &cases[i - 1];
        if (c->p.op != FDT_OP_DWAVE || !strstr(c->config, "eta=array") ||
            !strstr(twin->config, "eta=dist"))
            continue;
        fdt_params q;
        fdt_params_default(&c->p, &q);
        const long long n[3] = {c->p.nx, c->p.ny, c->p.nz}, ext[3] = {1, 1, 1};
        fdtuned_box b[FDTUNED_DEPLOY_MAX];
        int nb = fdtuned_deploy_boxes(0, n, c->p.absorb_w, ext, b);
        fdt_config cfg;
        fdt_err e;
        assert_int_equal(fdt_config_parse(c->config, &cfg, &e), 0);
        arrays x, y;
        make_arrays(&c->p, cfg.align, &x);
        make_arrays(&c->p, cfg.align, &y);
        run_boxes(c, &q, &x, b, nb);
        run_boxes(twin, &q, &y, b, nb);
        long differ = 0, interior_differ = 0;
        size_t es = fdt_prec_size(c->p.prec);
        const int W = c->p.absorb_w, R = c->p.R;
        for (int64_t k = R; k < R + c->p.nz; k++)
            for (int64_t j = R; j < R + c->p.ny; j++)
                for (int64_t i2 = R; i2 < R + c->p.nx; i2++) {
                    int64_t at = fdt_layout_index(&x.lay, i2, j, k);
                    if (!memcmp((char *)x.out + at * es, (char *)y.out + at * es, es))
                        continue;
                    differ++;
                    int inside = i2 - R >= W && i2 - R < c->p.nx - W && j - R >= W &&
                                 j - R < c->p.ny - W && k - R >= W && k - R < c->p.nz - W;
                    interior_differ += inside;
                }
        char what[96];
        fdt_problem_format(&c->p, what, sizeof what);
        print_message("%s %s: eta=array and eta=dist differ at %ld of %lld points (%ld in the "
                      "interior)\n", what, c->config, differ,
                      (long long)(c->p.nx * c->p.ny * c->p.nz), interior_differ);
        assert_int_equal(interior_differ, 0);
        free_arrays(&x);
        free_arrays(&y);
        pairs++;
    }
    assert_true(pairs >= 4);
}

/* ---------------------------------------------------------------- the faults */

static entry_fn fault_fn(size_t i)
{
    char name[32];
    snprintf(name, sizeof name, "gc_fault%zu", i);
    entry_fn fn;
    *(void **)&fn = dlsym(libs[FAULT_TU], name);
    assert_non_null(fn);
    return fn;
}

static void test_faults_caught(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFAULTS; i++) {
        if (faults[i].crash || faults[i].hang)
            continue; /* test_crash_and_hang */
        gc_case c = {.p = {FDT_OP_LAP, 4, FDT_F32, NX, NY, NZ}, .fn = fault_fn(i)};
        snprintf(c.config, sizeof c.config, "%s", faults[i].config);
        verdict v;
        run_case(&c, &v);
        if ((faults[i].bad && !v.bad) || (faults[i].touched && !v.touched))
            fail_msg("%s went unnoticed (%ld wrong, %ld touched)", faults[i].config, v.bad,
                     v.touched);
    }
}

/* The child of test_crash_and_hang: runs fault kernel i on lap R=4 f32's arrays, with the
 * units the parent compiled. */
static int child_run(const char *which)
{
    char so[300];
    for (int t = UTIL_TU; t <= FAULT_TU; t++) {
        snprintf(so, sizeof so, "%s/tu%d.so", dir, t);
        if (!(libs[t] = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
            return 2;
    }
    *(void **)&fill[0] = dlsym(libs[UTIL_TU], "fdt_fill_f32");
    *(void **)&poison[0] = dlsym(libs[UTIL_TU], "fdt_poison_f32");
    size_t i = (size_t)atoi(which);
    if (!fill[0] || !poison[0] || i >= NFAULTS)
        return 2;
    gc_case c = {.p = {FDT_OP_LAP, 4, FDT_F32, NX, NY, NZ}, .fn = fault_fn(i)};
    snprintf(c.config, sizeof c.config, "%s", faults[i].config);
    verdict v;
    run_case(&c, &v);
    return 0;
}

/* fault=oob kills the process that runs it, fault=hang never returns: each in a child. */
static void test_crash_and_hang(void **state)
{
    (void)state;
    for (size_t i = 0; i < NFAULTS; i++) {
        if (!faults[i].crash && !faults[i].hang)
            continue;
        char which[16];
        snprintf(which, sizeof which, "%zu", i);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            execl("/proc/self/exe", "test_gen_c", "--child", dir, which, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        pid_t done = 0;
        /* the crash within 10 s; the hang still running after 2 s */
        for (int t = 0; t < (faults[i].hang ? 20 : 100) && done == 0; t++) {
            struct timespec ts = {0, 100000000};
            nanosleep(&ts, NULL);
            done = waitpid(pid, &status, WNOHANG);
        }
        if (faults[i].crash) {
            assert_int_equal(done, pid);
            if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
                fail_msg("%s: the child ended with status %#x, not SIGSEGV", faults[i].config,
                         status);
        } else {
            if (done)
                fail_msg("%s: the child returned (status %#x)", faults[i].config, status);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
        }
    }
}

/* ---------------------------------------------------------------- the util entry points */

/* check record of cpu_util.c (and util.hip) */
typedef struct check {
    unsigned long long bad, nonfinite, touched, checked, first_bad, first_touched, max_err_bits;
    double sum_sq_err, sum_sq_ref, unused;
} check;

static void test_util(void **state)
{
    (void)state;
    for (int prec = 0; prec < 2; prec++) {
        fdt_problem p = {FDT_OP_WAVE, 3, prec, NX, NY, NZ};
        arrays a;
        make_arrays(&p, 8, &a);
        const fdt_layout *l = &a.lay;
        /* fill: fdt_input_value in the box, the pad pattern elsewhere */
        for (int f = 0; f < 3; f++)
            for (int64_t k = 0; k < l->mz; k++)
                for (int64_t j = 0; j < l->my; j++)
                    for (int64_t i = 0; i < l->mx; i++)
                        assert_true(elem(&p, a.in[f], fdt_layout_index(l, i, j, k)) ==
                                    fdt_input_value(SEED, f, i, j, k, prec));
        assert_int_equal(prec ? memcmp((char *)a.in[0], &PAD64, 8) : memcmp(a.in[0], &PAD32, 4), 0);
        /* check_fill: untouched inputs, then one changed element, counted over two fields */
        check ck = {0};
        ck.first_bad = ck.first_touched = ~0ULL;
        long long elems = l->elems, offset = l->offset, line = l->line, slice = l->slice;
        int mx = (int)l->mx, my = (int)l->my, mz = (int)l->mz;
        unsigned long long seed = SEED;
        uint32_t pad32 = PAD32, p32 = POISON32;
        uint64_t pad64 = PAD64, p64 = POISON64;
        void *padp = prec ? (void *)&pad64 : (void *)&pad32, *poip = prec ? (void *)&p64 : (void *)&p32;
        check *ckp = &ck;
        int64_t changed = fdt_layout_index(l, 5, 6, 7);
        if (prec)
            ((double *)a.in[1])[changed] += 1;
        else
            ((float *)a.in[1])[changed] += 1;
        for (int f = 0; f < 2; f++) {
            void *arr = a.in[f];
            void *args[] = {&arr, &elems, &offset, &line, &slice, &mx, &my, &mz, &seed, &f, padp,
                            &ckp};
            check_fill[prec](args);
        }
        assert_int_equal(ck.touched, 1);
        assert_int_equal(ck.first_touched, changed);
        /* compare: a reference copy of the input against itself with one interior point
         * off, one halo point written and one NaN */
        void *cand = alloc_array(a.bytes);
        memcpy(cand, a.in[0], a.bytes);
        poison_array(&p, cand, l->elems);
        for (int64_t k = p.R; k < p.R + p.nz; k++)
            for (int64_t j = p.R; j < p.R + p.ny; j++)
                for (int64_t i = p.R; i < p.R + p.nx; i++) {
                    int64_t at = fdt_layout_index(l, i, j, k);
                    if (prec)
                        ((double *)cand)[at] = ((double *)a.in[0])[at];
                    else
                        ((float *)cand)[at] = ((float *)a.in[0])[at];
                }
        int64_t off1 = fdt_layout_index(l, 4, 4, 4), halo = fdt_layout_index(l, 1, 5, 5),
                nan1 = fdt_layout_index(l, 9, 9, 9);
        if (prec) {
            ((double *)cand)[off1] += 0.5;
            ((double *)cand)[halo] = 0;
            ((double *)cand)[nan1] = NAN;
        } else {
            ((float *)cand)[off1] += 0.5f;
            ((float *)cand)[halo] = 0;
            ((float *)cand)[nan1] = NAN;
        }
        int R = p.R, nx = NX, ny = NY, nz = NZ;
        double tol = 0.25;
        void *ref = a.in[0];
        void *cargs[] = {&cand, &elems, &offset, &line, &slice, &R, &nx, &ny, &nz, &ref, &offset,
                         &line, &slice, &tol, poip, &ckp};
        compare[prec](cargs);
        assert_int_equal(ck.bad, 1);
        assert_int_equal(ck.first_bad, off1 < nan1 ? off1 : nan1);
        assert_int_equal(ck.nonfinite, 1);
        assert_int_equal(ck.touched, 1);
        assert_int_equal(ck.first_touched, halo);
        assert_int_equal(ck.checked, (unsigned long long)NX * NY * NZ);
        double maxe;
        memcpy(&maxe, &ck.max_err_bits, 8);
        assert_true(fabs(maxe - 0.5) < 1e-6);
        /* gather */
        long long idx[2] = {off1, changed};
        double got[2];
        int n = 2;
        void *gi = idx, *go = got;
        void *gargs[] = {&cand, &gi, &go, &n};
        gather[prec](gargs);
        assert_true(got[0] == elem(&p, cand, off1));
        assert_true(got[1] == elem(&p, cand, changed));
        /* copy, with ordinary and with streaming stores */
        for (int nt = 0; nt < 2; nt++) {
            void *dst = alloc_array(a.bytes), *src = a.in[2];
            long long cnt = l->elems - 3;
            memset(dst, 0x55, a.bytes);
            void *args[] = {&dst, &src, &cnt, &nt};
            copy[prec](args);
            size_t es = fdt_prec_size(prec);
            assert_memory_equal(dst, src, (size_t)cnt * es);
            for (size_t b = (size_t)cnt * es; b < a.bytes; b++)
                assert_int_equal(((unsigned char *)dst)[b], 0x55);
            free(dst);
        }
        /* flush: reads every word (its value depends on them) */
        uint64_t words[1000];
        for (int w = 0; w < 1000; w++)
            words[w] = (uint64_t)w * 2;
        long long nw = 1000;
        double sum = -1;
        void *wp = words, *sp = &sum;
        void *fargs[] = {&wp, &nw, &sp};
        flush[prec](fargs);
        assert_true(sum == 0); /* every word even */
        words[517] = 1;
        flush[prec](fargs);
        assert_true(sum == 1);
        free(cand);
        free_arrays(&a);
    }
}

/* ---------------------------------------------------------------- what the generator refuses */

static void test_refusals(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_D2X, 4, FDT_F32, NX, NY, NZ};
    fdt_config c;
    fdt_err e;
    fdt_sb src;
    fdt_sb_init(&src);
    assert_int_equal(fdt_config_parse("bx=32", &c, &e), 0);
    assert_int_equal(fdt_gen_source(&CPU, &p, &c, NULL, NULL, &src, &e), -1);
    assert_string_equal(e.msg, "config: bx is a GPU parameter; the C dialect takes align, bind, "
                               "blk, chunk, deploy, eta, fault, loop, nt, pfd, sched, simd, thr, "
                               "twopass, tx, ty, tz, uj, uk, xs");
    assert_int_equal(fdt_config_parse("blk=1,twopass=1", &c, &e), 0);
    assert_int_equal(fdt_gen_source(&CPU, &p, &c, NULL, NULL, &src, &e), -1);
    assert_int_equal(fdt_config_parse("default", &c, &e), 0);
    assert_int_equal(fdt_gen_source(&CPU, &p, &c, "1bad", NULL, &src, &e), -1);
    assert_true(strstr(e.msg, "not a C identifier") != NULL);
    /* the default name and the hash of the CPU's code */
    assert_int_equal(fdt_gen_source(&CPU, &p, &c, NULL, NULL, &src, &e), 0);
    char name[96], h1[20], h2[20];
    fdt_gen_kernel_name(&p, &c, name, sizeof name);
    assert_true(strstr(fdt_sb_str(&src), name) != NULL);
    assert_true(strstr(fdt_sb_str(&src), "void fdt_d2x_r4_f32_") != NULL);
    assert_int_equal(fdt_gen_source_hash(&p, &c, "cpu", h1, sizeof h1, &e), 0);
    assert_int_equal(fdt_gen_source_hash(&p, &c, "hip", h2, sizeof h2, &e), 0);
    assert_string_not_equal(h1, h2);
    assert_int_equal(fdt_config_parse("blk=1", &c, &e), 0);
    assert_int_equal(fdt_gen_source_hash(&p, &c, "cpu", h2, sizeof h2, &e), 0);
    assert_string_not_equal(h1, h2);
    fdt_sb_free(&src);
}

static int teardown(void **state)
{
    (void)state;
    for (int t = 0; t <= FAULT_TU; t++)
        if (libs[t])
            dlclose(libs[t]);
    if (!getenv("FDT_KEEP"))
        tu_rmtree(dir);
    return 0;
}

/* Whether $CC compiles and links a two-line OpenMP program. */
static int have_openmp_cc(void)
{
    char src[300], cmd[1024];
    snprintf(src, sizeof src, "%s/probe.c", dir);
    FILE *f = fopen(src, "w");
    if (!f)
        return 0;
    fputs("#include <omp.h>\nint probe(void) { return omp_get_max_threads(); }\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -fopenmp -fPIC -shared -o %s/probe.so %s >/dev/null 2>&1",
             cc(), dir, src);
    return system(cmd) == 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--child")) {
        snprintf(dir, sizeof dir, "%s", argv[2]);
        return child_run(argv[3]);
    }
    /* the kernels' threads wait passively: the machine is shared with other tests */
    setenv("OMP_WAIT_POLICY", "passive", 0);
    if (tu_mkdtemp(dir, sizeof dir, "test_gen_c")) {
        fprintf(stderr, "test_gen_c: cannot make a scratch directory: %s\n", strerror(errno));
        return 1;
    }
    if (!have_openmp_cc()) {
        fprintf(stderr, "test_gen_c: skipped: %s cannot build an OpenMP shared object\n", cc());
        tu_rmtree(dir);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_every_case),
        cmocka_unit_test(test_dwave_deployments_agree),
        cmocka_unit_test(test_util),
        cmocka_unit_test(test_faults_caught),
        cmocka_unit_test(test_crash_and_hang),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
