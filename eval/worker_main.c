/* The GPU worker process: owns one device and one problem at a time. It fills the inputs
 * from the seeded generator, computes and checks the reference output, then verifies each
 * candidate before timing it: output poisoned with a NaN pattern, every interior point
 * compared with the reference, every other element (halo, padding, base offset, spare row)
 * required to still hold the poison, inputs required to be unchanged, and the comparison
 * repeated after timing. A candidate's step is every launch of its deployment: one for every
 * operator but dwave, whose deployment (fdt_gen_deploy: complete, inout, sides) runs its
 * boxes one after another, each with its own kernel (the damped NAME or the interior
 * NAME_int), pointers at the box's origin and geometry, all inside one timed action, and is
 * verified whole like any output; a deployment with an interior box is then timed again
 * without it (layers_ms: what a task-parallel hybrid step leaves to the CPU); on a host
 * CPU its damped kernel is timed on the grid's first planes alone (part_ms: a data-parallel
 * hybrid step's CPU part).
 * FDTUNE_TEST_DROP_BOX=i (tests only) leaves box i of every candidate's step out, so that
 * tests see an unwritten box fail the check. Device errors that
 * kill the context end this process after the result is sent, so the parent restarts a
 * clean worker. */
#include "worker_proto.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define BATCH 10
#define MAX_SAMPLES_FULL (128LL * 128 * 128)
#define RANDOM_SAMPLES 4096
#define GATHER_CHUNK (1 << 20)

static const uint32_t POISON32 = 0x7fc0deadu, PAD32 = 0x7fc0fadeu;
static const uint64_t POISON64 = 0x7ff8deaddeaddeadULL, PAD64 = 0x7ff8fadefadefadeULL;

/* Mirror of `check` in templates/util.hip (80 bytes, all 8-byte fields): the compare kernels
 * write it, the worker reads it back as bytes. */
typedef struct dev_check {
    uint64_t bad, nonfinite, touched, checked, first_bad, first_touched, max_err_bits;
    double sse, ssr, unused;
} dev_check;
_Static_assert(sizeof(dev_check) == 80 && offsetof(dev_check, max_err_bits) == 48 &&
                   offsetof(dev_check, sse) == 56 && offsetof(dev_check, unused) == 72,
               "dev_check mirrors struct check of templates/util.hip field by field");

typedef struct arrays {
    fdt_layout lay;
    uint64_t in[3]; /* fields: in / p, p_prev, c2 */
    uint64_t out;
    int valid;
} arrays;

static struct {
    int fd;
    const fdt_rt_backend *b;
    fdt_device info;
    int have_problem;
    fdt_problem p;
    fdt_params q;
    fdt_gen_target gen; /* the dialect of the target the parent builds for */
    uint64_t seed;
    fdt_tolerance tol;
    void *util_mod, *k_fill, *k_poison, *k_compare, *k_check, *k_gather;
    arrays a;
    fdt_layout ref_lay;
    uint64_t ref_out;
    uint64_t check; /* one dev_check on the device */
    uint64_t eta;   /* dwave: the damping profile (fdt_absorb_profile); 0 otherwise */
    uint64_t flush;
    size_t flush_bytes;
    void *ev[2 * BATCH];
    double copy_gbs;
} W;

/* ---------------------------------------------------------------- small helpers */

static size_t esize(void) { return fdt_prec_size(W.p.prec); }
static int nin(void) { return fdt_op_ninputs(W.p.op); }

/* The device's clocks now, where the backend reads them (unknown otherwise): taken right
 * after a problem's setup and after each evaluation, so that the first and the last of a
 * run's measurements carry the clocks they ran at. */
static void sample_clocks(fdt_clocks *c)
{
    fdt_err e;
    if (!W.b->clocks || W.b->clocks(c, &e))
        fdt_clocks_init(c);
}

static void send_error(const char *msg)
{
    fdt_err e;
    fdt_frame_write(W.fd, MSG_ERROR, msg, strlen(msg), &e);
}

static void free_arrays(void)
{
    for (int i = 0; i < 3; i++)
        W.b->free(W.a.in[i]);
    W.b->free(W.a.out);
    memset(&W.a, 0, sizeof W.a);
}

static void free_problem(void)
{
    free_arrays();
    W.b->free(W.ref_out);
    W.b->free(W.flush);
    W.b->free(W.check);
    W.b->free(W.eta);
    W.ref_out = W.flush = W.check = W.eta = 0;
    W.flush_bytes = 0;
    if (W.util_mod)
        W.b->module_unload(W.util_mod);
    W.util_mod = NULL;
    W.have_problem = 0;
}

/* A grid-stride launch of a utility kernel over n elements. */
static int launch1d(void *fn, int64_t n, void **args, fdt_err *e)
{
    int64_t blocks = (n + 255) / 256;
    if (blocks > (1 << 18))
        blocks = 1 << 18;
    if (blocks < 1)
        blocks = 1;
    uint32_t grid[3] = {(uint32_t)blocks, 1, 1}, block[3] = {256, 1, 1};
    return W.b->launch(fn, grid, block, 0, args, e);
}

static int fill(uint64_t base, const fdt_layout *l, int field, fdt_err *e)
{
    long long elems = l->elems, offset = l->offset, line = l->line, slice = l->slice;
    int mx = (int)l->mx, my = (int)l->my, mz = (int)l->mz;
    unsigned long long seed = W.seed;
    uint32_t pad32 = PAD32;
    uint64_t pad64 = PAD64;
    void *args[] = {&base, &elems, &offset, &line, &slice, &mx, &my, &mz, &seed, &field,
                    W.p.prec == FDT_F32 ? (void *)&pad32 : (void *)&pad64};
    return launch1d(W.k_fill, elems, args, e);
}

static int poison(uint64_t base, int64_t elems, fdt_err *e)
{
    long long n = elems;
    uint32_t p32 = POISON32;
    uint64_t p64 = POISON64;
    void *args[] = {&base, &n, W.p.prec == FDT_F32 ? (void *)&p32 : (void *)&p64};
    return launch1d(W.k_poison, elems, args, e);
}

static int reset_check(fdt_err *e)
{
    dev_check c = {0};
    c.first_bad = c.first_touched = ~0ULL;
    return W.b->copy_h2d(W.check, &c, sizeof c, e);
}

/* Compares an output array (layout l) with the reference; fills *c. */
static int compare(uint64_t out, const fdt_layout *l, double tol, dev_check *c, fdt_err *e)
{
    if (reset_check(e))
        return -1;
    long long elems = l->elems, offset = l->offset, line = l->line, slice = l->slice;
    long long roff = W.ref_lay.offset, rline = W.ref_lay.line, rslice = W.ref_lay.slice;
    int R = W.p.R, nx = (int)W.p.nx, ny = (int)W.p.ny, nz = (int)W.p.nz;
    uint32_t p32 = POISON32;
    uint64_t p64 = POISON64;
    void *args[] = {&out, &elems, &offset, &line, &slice, &R, &nx, &ny, &nz, &W.ref_out,
                    &roff, &rline, &rslice, &tol,
                    W.p.prec == FDT_F32 ? (void *)&p32 : (void *)&p64, &W.check};
    if (launch1d(W.k_compare, elems, args, e) || W.b->sync(e))
        return -1;
    return W.b->copy_d2h(c, W.check, sizeof *c, e);
}

/* Counts elements of the current inputs that differ from what fill() wrote. */
static int inputs_changed(uint64_t *changed, fdt_err *e)
{
    if (reset_check(e))
        return -1;
    const fdt_layout *l = &W.a.lay;
    long long elems = l->elems, offset = l->offset, line = l->line, slice = l->slice;
    int mx = (int)l->mx, my = (int)l->my, mz = (int)l->mz;
    unsigned long long seed = W.seed;
    uint32_t pad32 = PAD32;
    uint64_t pad64 = PAD64;
    for (int f = 0; f < nin(); f++) {
        int field = f;
        void *args[] = {&W.a.in[f], &elems, &offset, &line, &slice, &mx, &my, &mz, &seed, &field,
                        W.p.prec == FDT_F32 ? (void *)&pad32 : (void *)&pad64, &W.check};
        if (launch1d(W.k_check, elems, args, e))
            return -1;
    }
    dev_check c;
    if (W.b->sync(e) || W.b->copy_d2h(&c, W.check, sizeof c, e))
        return -1;
    *changed = c.touched;
    return 0;
}

/* Arrays for the layout of `align`, allocated and filled (kept while the layout holds). */
static int ensure_arrays(int align, fdt_err *e)
{
    if (W.a.valid && W.a.lay.align == align)
        return 0;
    free_arrays();
    if (fdt_layout_make(&W.p, align, &W.a.lay, e))
        return -1;
    size_t bytes = (size_t)W.a.lay.elems * esize(), need = bytes * (size_t)(nin() + 1);
    size_t free_b = 0, total = 0;
    if (W.b->mem_info(&free_b, &total, e))
        return -1;
    if (need > free_b)
        return fdt_err_set(e, "the problem needs %.2f GiB for %d arrays of %.2f GiB; the device "
                              "has %.2f GiB free of %.2f GiB", need / 1073741824.0, nin() + 1,
                           bytes / 1073741824.0, free_b / 1073741824.0, total / 1073741824.0);
    for (int f = 0; f < nin(); f++)
        if (W.b->alloc(bytes, &W.a.in[f], e) || fill(W.a.in[f], &W.a.lay, f, e))
            return -1;
    if (W.b->alloc(bytes, &W.a.out, e) || W.b->sync(e))
        return -1;
    W.a.valid = 1;
    return 0;
}

/* ---------------------------------------------------------------- running a stencil kernel */


typedef struct kernel_run {
    void *fn;
    fdt_geometry g;
    fdt_argval v[FDT_ARG_COUNT];
    _Alignas(128) unsigned char tmap[FDT_RT_TMAP_BYTES]; /* bulk=1: the last argument */
    void *args[FDT_ARG_COUNT + 1];
    int nargs;            /* the kernel's arguments before the tensor map */
    int in, jbeg, jend;   /* indices of those arguments */
} kernel_run;

/* One step of a candidate: the launches of its deployment's boxes, in order (one box, the
 * grid, for every operator but dwave). Each kernel_run points into itself: never copied. */
typedef struct step_run {
    int nbox;
    int drop; /* tests only: the box left out (FDTUNE_TEST_DROP_BOX), -1 none */
    int layers_only;                  /* 1: run_step launches the damped boxes alone */
    int damped[FDTUNED_DEPLOY_MAX];   /* box i runs the damped kernel (a layer's box) */
    kernel_run box[FDTUNED_DEPLOY_MAX];
} step_run;

/* The arguments of one launch over box b (NULL: the whole grid) of layout l: pointers at the
 * box's padded origin, its extents, global origin and hole (fdt_gen_kernel_args). */
static void prepare_run(kernel_run *k, void *fn, const fdt_geometry *g, const fdt_layout *l,
                        const uint64_t *in, uint64_t out, const fdtuned_box *b)
{
    memset(k, 0, sizeof *k);
    k->fn = fn;
    k->g = *g;
    fdt_arg a[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(W.p.op, 0, a);
    const fdt_launch_arrays arr = {out, in[0], in[1], in[2], W.eta, l, 0};
    fdt_gen_argvals(&W.p, &W.q, &arr, b, a, n, k->v);
    k->nargs = n;
    for (int i = 0; i < n; i++) {
        k->in = a[i] == FDT_ARG_IN ? i : k->in;
        k->jbeg = a[i] == FDT_ARG_JBEG ? i : k->jbeg;
        k->jend = a[i] == FDT_ARG_JEND ? i : k->jend;
        k->args[i] = &k->v[i];
    }
}

/* With bulk=1 the kernel's tensor map of its argument `in` (fdt_gen_tmap), its last
 * argument: encoded by the backend where the kernel reads it, zeros where it does not (AMD). */
static int prepare_tmap(kernel_run *k, const fdt_config *c, const fdt_layout *l, fdt_err *e)
{
    fdtuned_tmap t;
    if (!fdt_gen_tmap(&W.p, c, l, k->v[k->in].ptr, &t))
        return 0;
    FDT_ASSERT(!k->args[k->nargs], "the tensor map follows the kernel's other arguments");
    k->args[k->nargs] = k->tmap;
    if (W.b->tensor_map)
        return W.b->tensor_map(&t, (int)l->esize, k->tmap, e);
    return 0;
}

/* The step of config c on layout l: for dwave the boxes of its deployment (fn the damped
 * kernel, fn_int the interior one), else one launch of fn over the grid with geometry g.
 * Fails when the config cannot run some box of the grid (the generator says why). */
static int prepare_step(step_run *s, void *fn, void *fn_int, const fdt_config *c,
                        const fdt_geometry *g, const fdt_layout *l, const uint64_t *in,
                        uint64_t out, fdt_err *e)
{
    s->drop = -1;
    s->layers_only = 0;
    if (W.p.op != FDT_OP_DWAVE) {
        s->nbox = 1;
        prepare_run(&s->box[0], fn, g, l, in, out, NULL);
        return prepare_tmap(&s->box[0], c, l, e);
    }
    fdt_deploy d;
    if (fdt_gen_deploy(&W.gen, &W.p, c, &d, e))
        return -1;
    FDT_ASSERT(d.nbox >= 1 && d.nbox <= FDTUNED_DEPLOY_MAX, "a deployment has 1 to 7 boxes");
    s->nbox = d.nbox;
    for (int i = 0; i < d.nbox; i++) {
        s->damped[i] = d.box[i].damped != 0;
        prepare_run(&s->box[i], d.box[i].damped ? fn : fn_int, &d.geo[i], l, in, out,
                    &d.box[i]);
    }
    return 0;
}

static int run_kernel(kernel_run *k, fdt_err *e)
{
    for (int s = 0; s < k->g.nlaunch; s++) {
        k->v[k->jbeg].i = k->g.launch[s].jbeg;
        k->v[k->jend].i = k->g.launch[s].jend;
        if (W.b->launch(k->fn, k->g.launch[s].grid, k->g.launch[s].block,
                        k->g.shared_dynamic ? k->g.shared_bytes : 0, k->args, e))
            return -1;
    }
    return 0;
}

/* One step: every box of the deployment, in order (an action of time_action); with
 * layers_only the damped boxes alone. */
static int run_step(void *ctx, fdt_err *e)
{
    step_run *s = ctx;
    for (int i = 0; i < s->nbox; i++)
        if (i != s->drop && (!s->layers_only || s->damped[i]) && run_kernel(&s->box[i], e))
            return -1;
    return 0;
}

/* Opts each launch's kernel in to the dynamic shared memory its geometry needs. */
static int allow_shared(const step_run *s, fdt_err *e)
{
    for (int i = 0; i < s->nbox; i++) {
        const kernel_run *k = &s->box[i];
        if (k->g.shared_dynamic && W.b->allow_shared &&
            W.b->allow_shared(k->fn, k->g.shared_bytes, e))
            return -1;
    }
    return 0;
}

/* Tests only: the box FDTUNE_TEST_DROP_BOX names, which candidates' steps leave out; -1 when
 * it is not set. */
static int test_drop_box(void)
{
    const char *s = getenv("FDTUNE_TEST_DROP_BOX");
    return s && *s ? atoi(s) : -1;
}

/* The step's kernels in module mod: `name`, and for dwave also its interior kernel
 * (fdt_gen_dwave_interior_name); *fn_int is NULL for other operators. */
static int step_kernels(void *mod, const char *name, void **fn, void **fn_int, fdt_err *e)
{
    *fn_int = NULL;
    if (W.b->module_function(mod, name, fn, e))
        return -1;
    if (W.p.op != FDT_OP_DWAVE)
        return 0;
    char in[128];
    fdt_gen_dwave_interior_name(name, in, sizeof in);
    return W.b->module_function(mod, in, fn_int, e);
}

/* ---------------------------------------------------------------- timing */

typedef int (*action_fn)(void *ctx, fdt_err *e);

static double median_of(const double *ms, int n)
{
    double *tmp = malloc(sizeof *tmp * (size_t)n);
    if (!tmp)
        return 0;
    memcpy(tmp, ms, sizeof *tmp * (size_t)n);
    fdt_timing t = {0};
    fdt_timing_stats(tmp, n, &t);
    free(tmp);
    return t.median_ms;
}

/* Evicts the last-level cache before timed sample `sample`: the backend's flush where it
 * has one (the CPU reads the buffer: writes would leave dirty lines for the kernel to write
 * back), else a write of the buffer. */
static int flush_caches(int sample, fdt_err *e)
{
    if (W.b->flush)
        return W.b->flush(W.flush, W.flush_bytes, e);
    return W.b->memset_async(W.flush, (unsigned char)sample, W.flush_bytes, e);
}

/* Warm-up, then batches of event-timed launches until the median is stable. */
static int time_action(action_fn act, void *ctx, const fdt_timing_opts *o, int flush,
                       fdt_timing *t, fdt_err *e)
{
    int max = o->max_reps > 0 ? o->max_reps : 1;
    if (max > 5000)
        max = 5000;
    double *ms = malloc(sizeof *ms * (size_t)max);
    if (!ms)
        return fdt_err_set(e, "timing: out of memory");
    int rc = -1, n = 0;
    double prev = 0, total = 0;
    for (int i = 0; i < o->warmup; i++)
        if (act(ctx, e))
            goto done;
    if (W.b->sync(e))
        goto done;
    while (n < max) {
        int batch = max - n < BATCH ? max - n : BATCH;
        for (int r = 0; r < batch; r++) {
            if (flush && flush_caches(n + r, e))
                goto done;
            if (W.b->event_record(W.ev[2 * r], e) || act(ctx, e) ||
                W.b->event_record(W.ev[2 * r + 1], e))
                goto done;
        }
        if (W.b->sync(e))
            goto done;
        for (int r = 0; r < batch; r++) {
            float x = 0;
            if (W.b->event_elapsed(W.ev[2 * r], W.ev[2 * r + 1], &x, e))
                goto done;
            ms[n++] = x;
            total += x / 1000.0;
        }
        double med = median_of(ms, n);
        if (n >= o->min_reps && prev > 0 && fabs(med - prev) <= o->stable * med)
            break;
        if (n >= o->min_reps && total >= o->max_seconds)
            break;
        prev = med;
    }
    t->flushed = flush;
    fdt_timing_stats(ms, n, t);
    rc = 0;
done:
    free(ms);
    return rc;
}

/* A time loop's fields in its step r from the worker's (step 0): rotated r times
 * (fdt_gen_fields_rotate); in[] (p, p_prev, c2) as prepare_step takes it. */
static void rotated_fields(int r, uint64_t in[3], uint64_t *out)
{
    FDT_ASSERT(W.p.op == FDT_OP_DWAVE && nin() == 3, "the damped step's p, p_prev and c2");
    uint64_t f[3] = {W.a.out, W.a.in[0], W.a.in[1]}; /* output, p, p_prev */
    for (int i = 0; i < r; i++)
        fdt_gen_fields_rotate(f);
    in[0] = f[1];
    in[1] = f[2];
    in[2] = W.a.in[2];
    *out = f[0];
}

/* The steps of a time loop, each with its fields (rotated_fields), one after the other as an
 * action of time_action. */
typedef struct rotating_steps {
    step_run s[3];
    int next;
} rotating_steps;

static int run_rotating(void *ctx, fdt_err *e)
{
    rotating_steps *r = ctx;
    FDT_ASSERT(r->next >= 0 && r->next < 3, "one of the three steps");
    int i = r->next;
    r->next = (i + 1) % 3;
    return run_step(&r->s[i], e);
}

/* p and p_prev (in[0], in[1]) as fill() wrote them again, after the rotating steps wrote
 * into them (c2 they only read); then every input checked. */
static int restore_inputs(fdt_err *e)
{
    uint64_t changed = 0;
    for (int f = 0; f < 2; f++)
        if (fill(W.a.in[f], &W.a.lay, f, e))
            return -1;
    if (W.b->sync(e) || inputs_changed(&changed, e))
        return -1;
    if (changed)
        return fdt_err_set(e, "the inputs filled again differ at %llu points",
                           (unsigned long long)changed);
    return 0;
}

/* A deployment with an interior box (step k of config c, kernels fn and fn_int, geometry g):
 * its layer kernels' time alone, else 0. Back to back, without the cache flush of the step's
 * timing: task-parallel's CPU computes the layers alone, step after step, so what of their
 * data fits in its cache stays there; and with the fields rotating from step to step as a
 * time loop's do (the H200 host at 256^3: the sides deployment's six slabs took 1.46-1.61 ms
 * with the fields fixed, 2.02-2.40 ms rotating, and 2.31 ms in the hybrid runner's
 * task-parallel step: bench/hybrid_h200/run18). The rotations write into the inputs, which
 * are filled again after (the output is the step's no more: the caller has checked it). */
static int time_layers(const step_run *k, void *fn, void *fn_int, const fdt_config *c,
                       const fdt_geometry *g, const fdt_timing_opts *o, double *ms, fdt_err *e)
{
    *ms = 0;
    int layers = 0;
    for (int i = 0; i < k->nbox; i++)
        layers += k->damped[i];
    if (k->nbox < 2 || layers == k->nbox)
        return 0;
    FDT_ASSERT(layers >= 1, "a deployment with an interior box has layer boxes");
    rotating_steps r;
    r.next = 0;
    for (int i = 0; i < 3; i++) {
        uint64_t in[3], out;
        rotated_fields(i, in, &out);
        if (prepare_step(&r.s[i], fn, fn_int, c, g, &W.a.lay, in, out, e))
            return -1;
        r.s[i].layers_only = 1;
    }
    fdt_timing t;
    memset(&t, 0, sizeof t);
    int rc = time_action(run_rotating, &r, o, 0, &t, e);
    *ms = t.median_ms;
    return rc || restore_inputs(e) ? -1 : 0;
}

/* A kernel_run as an action of time_action. */
static int run_one(void *ctx, fdt_err *e)
{
    return run_kernel(ctx, e);
}

/* dwave on a host CPU: config c's damped kernel over the grid's first m planes alone
 * (fdt_gen_part_planes), back to back without the cache flush, as a data-parallel hybrid
 * step's CPU part runs step after step in arrays that stay in the host's caches; else 0.
 * The box writes what the step wrote there (the damped kernel is the whole grid's in the
 * complete deployment). A config that cannot run the box leaves it 0. */
static int time_part(const fdt_config *c, void *fn, const fdt_timing_opts *o, double *ms,
                     fdt_err *e)
{
    *ms = 0;
    int64_t m = fdt_gen_part_planes(&W.p);
    if (W.p.op != FDT_OP_DWAVE || !W.b->host || m <= 0)
        return 0;
    FDT_ASSERT(m < W.p.nz, "a part thinner than the grid");
    const int64_t n[3] = {W.p.nx, W.p.ny, m};
    fdtuned_box b;
    memset(&b, 0, sizeof b);
    for (int a = 0; a < 3; a++)
        b.n[a] = n[a];
    b.damped = 1;
    fdt_geometry g;
    fdt_err ignored;
    if (fdt_gen_box_geometry(&W.gen, &W.p, c, n, &g, &ignored))
        return 0;
    kernel_run k; /* points into itself: prepared here, never copied */
    prepare_run(&k, fn, &g, &W.a.lay, W.a.in, W.a.out, &b);
    fdt_timing t;
    memset(&t, 0, sizeof t);
    int rc = time_action(run_one, &k, o, 0, &t, e);
    *ms = t.median_ms;
    return rc;
}

typedef struct copy_ctx {
    uint64_t a, b;
    size_t bytes;
} copy_ctx;

static int copy_once(void *ctx, fdt_err *e)
{
    copy_ctx *c = ctx;
    return W.b->copy_d2d_async(c->b, c->a, c->bytes, e);
}

static int measure_copy(size_t bytes, double *gbs, double *ms_out, fdt_err *e)
{
    copy_ctx c = {0, 0, bytes};
    int rc = -1;
    if (W.b->alloc(bytes, &c.a, e) || W.b->alloc(bytes, &c.b, e) ||
        W.b->memset_async(c.a, 0x3c, bytes, e))
        goto done;
    fdt_timing_opts o = {.warmup = 3, .min_reps = 20, .max_reps = 100, .max_seconds = 2.0,
                         .stable = 0.002};
    fdt_timing t;
    if (time_action(copy_once, &c, &o, 0, &t, e))
        goto done;
    *gbs = 2.0 * (double)bytes / (t.median_ms * 1e-3) / 1e9;
    if (ms_out)
        *ms_out = t.median_ms;
    rc = 0;
done:
    W.b->free(c.a);
    W.b->free(c.b);
    return rc;
}

/* Copy buffers of 1 GiB each way, smaller when memory is short. */
static size_t copy_bytes(fdt_err *e)
{
    size_t free_b = 0, total = 0;
    if (W.b->mem_info(&free_b, &total, e))
        return 0;
    size_t bytes = (size_t)1 << 30;
    while (bytes > ((size_t)16 << 20) && 2 * bytes > free_b / 2)
        bytes /= 2;
    return bytes;
}

/* ---------------------------------------------------------------- the host link */

/* Pinned host buffers and device buffers of `bytes` each, two of each (one per direction),
 * and the two streams and events that run both directions at once. */
typedef struct link_ctx {
    void *host[2];
    uint64_t dev[2];
    size_t bytes;
    int dir;        /* 0 host to device, 1 device to host, 2 both at once; 3, 4: the box of
                       FDT_LINK_ROWS narrow rows to and from the device (bytes unused) */
    void *s[2], *ev[3];
} link_ctx;

/* The box of narrow rows in c's direction (3 to the device, 4 from it): FDT_LINK_ROWS rows of
 * FDT_LINK_ROW bytes, as FDT_LINK_PLANES planes, spread evenly over the buffers, copied as the
 * hybrid runner copies a face of R points (eval/hybrid.c do_xfer). */
static int link_box(const link_ctx *c, fdt_err *e)
{
    int dir = c->dir;
    size_t rows = FDT_LINK_ROWS / FDT_LINK_PLANES, line = FDT_LINK_BYTES / FDT_LINK_ROWS;
    fdt_rt_box_copy b = {.width = FDT_LINK_ROW, .rows = rows, .planes = FDT_LINK_PLANES};
    FDT_ASSERT(line >= FDT_LINK_ROW && rows * FDT_LINK_PLANES == FDT_LINK_ROWS,
               "the rows fit the buffers, apart");
    b.dst_line = b.src_line = line;
    b.dst_slice = b.src_slice = line * rows;
    b.dst_host = dir == 4;
    b.src_host = dir == 3;
    b.dst = dir == 3 ? c->dev[0] : (uint64_t)(uintptr_t)c->host[1];
    b.src = dir == 3 ? (uint64_t)(uintptr_t)c->host[0] : c->dev[1];
    return W.b->copy_box_on(&b, NULL, e);
}

static int link_once(void *ctx, fdt_err *e)
{
    link_ctx *c = ctx;
    if (c->dir == 0)
        return W.b->copy_h2d_on(c->dev[0], c->host[0], c->bytes, NULL, e);
    if (c->dir == 1)
        return W.b->copy_d2h_on(c->host[1], c->dev[1], c->bytes, NULL, e);
    if (c->dir >= 3)
        return link_box(c, e);
    /* both: the two streams start after what the default stream holds, and it waits for both */
    return W.b->event_record_on(c->ev[0], NULL, e) ||
                   W.b->stream_wait_event(c->s[0], c->ev[0], e) ||
                   W.b->stream_wait_event(c->s[1], c->ev[0], e) ||
                   W.b->copy_h2d_on(c->dev[0], c->host[0], c->bytes, c->s[0], e) ||
                   W.b->copy_d2h_on(c->host[1], c->dev[1], c->bytes, c->s[1], e) ||
                   W.b->event_record_on(c->ev[1], c->s[0], e) ||
                   W.b->event_record_on(c->ev[2], c->s[1], e) ||
                   W.b->stream_wait_event(NULL, c->ev[1], e) ||
                   W.b->stream_wait_event(NULL, c->ev[2], e)
               ? -1
               : 0;
}

/* The median time of `bytes` copies in direction dir, in ms. */
static int link_time(link_ctx *c, int dir, size_t bytes, double *ms, fdt_err *e)
{
    fdt_timing_opts o = {.warmup = 2, .min_reps = 5, .max_reps = 30, .max_seconds = 1.0,
                         .stable = 0.01};
    fdt_timing t;
    c->dir = dir;
    c->bytes = bytes;
    if (time_action(link_once, c, &o, 0, &t, e))
        return -1;
    *ms = t.median_ms > 0 ? t.median_ms : 1e-6;
    return 0;
}

static void link_free(link_ctx *c)
{
    for (int i = 0; i < 2; i++) {
        W.b->host_free(c->host[i]);
        W.b->free(c->dev[i]);
        W.b->stream_destroy(c->s[i]);
    }
    for (int i = 0; i < 3; i++)
        if (c->ev[i])
            W.b->event_destroy(c->ev[i]);
}

/* The host<->device link: pinned copies of FDT_LINK_BYTES each way, one direction at a time
 * and both at once, a FDT_LINK_SMALL copy's time, the narrow rows' time, and whether the
 * device is unified. */
static int measure_link(fdt_link *l, fdt_err *e)
{
    link_ctx c;
    memset(&c, 0, sizeof c);
    memset(l, 0, sizeof *l);
    double ms[6];
    int rc = -1;
    for (int i = 0; i < 2; i++)
        if (W.b->host_alloc(FDT_LINK_BYTES, &c.host[i], e) ||
            W.b->alloc(FDT_LINK_BYTES, &c.dev[i], e) || W.b->stream_create(&c.s[i], e))
            goto done;
    for (int i = 0; i < 3; i++)
        if (W.b->event_create(&c.ev[i], e))
            goto done;
    memset(c.host[0], 0x3c, FDT_LINK_BYTES);
    if (W.b->memset_async(c.dev[1], 0x5a, FDT_LINK_BYTES, e) ||
        link_time(&c, 0, FDT_LINK_BYTES, &ms[0], e) ||
        link_time(&c, 1, FDT_LINK_BYTES, &ms[1], e) ||
        link_time(&c, 2, FDT_LINK_BYTES, &ms[2], e) ||
        link_time(&c, 0, FDT_LINK_SMALL, &ms[3], e) || link_time(&c, 3, 0, &ms[4], e) ||
        link_time(&c, 4, 0, &ms[5], e) || W.b->unified(&l->unified, e))
        goto done;
    l->h2d_gbs = (double)FDT_LINK_BYTES / (ms[0] * 1e-3) / 1e9;
    l->d2h_gbs = (double)FDT_LINK_BYTES / (ms[1] * 1e-3) / 1e9;
    l->both_gbs = (double)FDT_LINK_BYTES / (ms[2] * 1e-3) / 1e9;
    l->latency_us = ms[3] * 1e3;
    /* the slower direction's time a row beyond a copy's latency */
    l->row_ns = fmax(0, (fmax(ms[4], ms[5]) - ms[3]) * 1e6 / FDT_LINK_ROWS);
    rc = 0;
done:
    link_free(&c);
    return rc;
}

/* ---------------------------------------------------------------- reference check */

typedef struct hash_ctx {
    uint64_t seed;
    fdt_prec prec;
} hash_ctx;

static double hash_input(void *ctx, int field, int64_t i, int64_t j, int64_t k)
{
    const hash_ctx *h = ctx;
    return fdt_input_value(h->seed, field, i, j, k, h->prec);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Interior sample points (padded coordinates): all of them on small grids, otherwise
 * corners, edge midpoints, face centres, the source and thousands of random points. */
static int64_t *sample_points(int64_t *count, int *all)
{
    const fdt_problem *p = &W.p;
    int64_t N = p->nx * p->ny * p->nz, n = 0;
    *all = N <= MAX_SAMPLES_FULL;
    int64_t cap = *all ? N : RANDOM_SAMPLES + 64;
    int64_t *pts = malloc(sizeof *pts * 3 * (size_t)cap);
    if (!pts)
        return NULL;
    const int R = p->R;
#define ADD(i, j, k)                                                \
    do {                                                            \
        pts[3 * n] = (i) + R, pts[3 * n + 1] = (j) + R, pts[3 * n + 2] = (k) + R; \
        n++;                                                        \
    } while (0)
    if (*all) {
        for (int64_t k = 0; k < p->nz; k++)
            for (int64_t j = 0; j < p->ny; j++)
                for (int64_t i = 0; i < p->nx; i++)
                    ADD(i, j, k);
    } else {
        int64_t ext[3] = {p->nx, p->ny, p->nz};
        for (int c = 0; c < 27; c++) { /* corners, edge midpoints, face centres, centre */
            int64_t v[3];
            for (int d = 0, cc = c; d < 3; d++, cc /= 3)
                v[d] = cc % 3 == 0 ? 0 : cc % 3 == 1 ? ext[d] / 2 : ext[d] - 1;
            ADD(v[0], v[1], v[2]);
        }
        if (fdt_op_is_step(p->op))
            ADD(W.q.si - R, W.q.sj - R, W.q.sk - R);
        uint64_t s = W.seed ^ 0x5eedULL;
        while (n < cap)
            ADD((int64_t)(splitmix(&s) % (uint64_t)p->nx), (int64_t)(splitmix(&s) % (uint64_t)p->ny),
                (int64_t)(splitmix(&s) % (uint64_t)p->nz));
    }
#undef ADD
    *count = n;
    return pts;
}

/* Reads the reference output at the sample points and compares with the CPU. */
static int check_reference(fdt_setup_result *r, fdt_err *e)
{
    int64_t n = 0;
    int all = 0;
    int64_t *pts = sample_points(&n, &all);
    long long *idx = malloc(sizeof *idx * GATHER_CHUNK);
    double *vals = malloc(sizeof *vals * GATHER_CHUNK);
    uint64_t didx = 0, dvals = 0;
    int rc = -1;
    if (!pts || !idx || !vals) {
        fdt_err_set(e, "reference check: out of memory");
        goto done;
    }
    long double coef[FDT_R_MAX + 1];
    if (fdt_fd_coeffs(W.p.R, coef, e) ||
        W.b->alloc(sizeof *idx * GATHER_CHUNK, &didx, e) ||
        W.b->alloc(sizeof *vals * GATHER_CHUNK, &dvals, e))
        goto done;
    hash_ctx hc = {W.seed, W.p.prec};
    double maxerr = 0;
    for (int64_t base = 0; base < n; base += GATHER_CHUNK) {
        int m = (int)(n - base < GATHER_CHUNK ? n - base : GATHER_CHUNK);
        for (int q = 0; q < m; q++) {
            const int64_t *c = &pts[3 * (base + q)];
            idx[q] = fdt_layout_index(&W.ref_lay, c[0], c[1], c[2]);
        }
        void *args[] = {&W.ref_out, &didx, &dvals, &m};
        if (W.b->copy_h2d(didx, idx, sizeof *idx * (size_t)m, e) || launch1d(W.k_gather, m, args, e) ||
            W.b->sync(e) || W.b->copy_d2h(vals, dvals, sizeof *vals * (size_t)m, e))
            goto done;
        for (int q = 0; q < m; q++) {
            const int64_t *c = &pts[3 * (base + q)];
            double want = fdt_reference_point(&W.p, &W.q, coef, hash_input, &hc, c[0], c[1], c[2]);
            double err = fabs(vals[q] - want);
            if (!(err <= W.tol.ref_vs_exact)) {
                fdt_err_set(e, "the reference kernel disagrees with the double-precision CPU "
                               "reference at interior (%lld,%lld,%lld): GPU %.17g, CPU %.17g, "
                               "|diff| %.3g > tolerance %.3g", (long long)(c[0] - W.p.R),
                            (long long)(c[1] - W.p.R), (long long)(c[2] - W.p.R), vals[q], want,
                            err, W.tol.ref_vs_exact);
                goto done;
            }
            if (err > maxerr)
                maxerr = err;
        }
    }
    r->ref_points = (uint64_t)n;
    r->ref_all_points = all;
    r->ref_max_err = maxerr;
    r->ref_tol = W.tol.ref_vs_exact;
    rc = 0;
done:
    W.b->free(didx);
    W.b->free(dvals);
    free(pts);
    free(idx);
    free(vals);
    return rc;
}

/* ---------------------------------------------------------------- messages */

static int load_util(const char *image, size_t n, fdt_err *e)
{
    if (W.b->module_load(image, n, &W.util_mod, e))
        return fdt_err_wrap(e, "loading the verification kernels");
    struct {
        const char *what;
        void **fn;
    } k[] = {{"fill", &W.k_fill},       {"poison", &W.k_poison}, {"compare", &W.k_compare},
             {"check_fill", &W.k_check}, {"gather", &W.k_gather}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        char name[64];
        UTIL_KERNEL(name, k[i].what, W.p.prec);
        if (W.b->module_function(W.util_mod, name, k[i].fn, e))
            return fdt_err_wrap(e, "loading the verification kernels");
    }
    return 0;
}

/* dwave: the damping profile (fdt_absorb_profile) on the device, copied once per problem. */
static int upload_profile(fdt_err *e)
{
    size_t bytes = fdt_absorb_profile_bytes(&W.p);
    void *h = malloc(bytes);
    if (!h)
        return fdt_err_set(e, "the damping profile: out of memory");
    int rc = fdt_absorb_profile(&W.p, h, e) || W.b->alloc(bytes, &W.eta, e) ||
                     W.b->copy_h2d(W.eta, h, bytes, e)
                 ? -1
                 : 0;
    free(h);
    return rc;
}

static int do_setup(const char *payload, size_t n, fdt_setup_result *r, fdt_err *e)
{
    double t0 = fdt_now();
    setup_msg m;
    if (n < sizeof m)
        return fdt_err_set(e, "setup: malformed message");
    memcpy(&m, payload, sizeof m);
    if (sizeof m + m.util_len + m.ref_len != n)
        return fdt_err_set(e, "setup: malformed message");
    const char *util_img = payload + sizeof m, *ref_img = util_img + m.util_len;
    free_problem();
    memset(r, 0, sizeof *r);
    W.p = m.p;
    W.gen = m.gen;
    W.seed = m.seed;
    fdt_params_default(&W.p, &W.q);
    fdt_tolerance_make(&W.p, &W.q, &W.tol);
    r->tol = W.tol;
    if (load_util(util_img, m.util_len, e))
        return -1;
    if (W.copy_gbs <= 0) {
        size_t cb = copy_bytes(e);
        double ms = 0;
        if (!cb || measure_copy(cb, &W.copy_gbs, &ms, e))
            return fdt_err_wrap(e, "measuring the copy bandwidth");
        r->copy_ms = ms;
    }
    r->copy_gbs = W.copy_gbs;
    if (W.b->alloc(sizeof(dev_check), &W.check, e))
        return -1;
    /* Inputs in the reference layout (align 1), the reference output beside them. */
    if (ensure_arrays(1, e) || fdt_layout_make(&W.p, 1, &W.ref_lay, e))
        return -1;
    if (W.b->alloc((size_t)W.ref_lay.elems * esize(), &W.ref_out, e) ||
        poison(W.ref_out, W.ref_lay.elems, e))
        return -1;
    if (W.p.op == FDT_OP_DWAVE && upload_profile(e))
        return -1;
    /* the reference: the default config, for dwave its complete deployment (one box) */
    void *rmod = NULL, *rfn = NULL, *rfn_int = NULL;
    if (W.b->module_load(ref_img, m.ref_len, &rmod, e) ||
        step_kernels(rmod, m.ref_kernel, &rfn, &rfn_int, e))
        return fdt_err_wrap(e, "loading the reference kernel");
    fdt_config rc;
    fdt_config_default(&rc);
    fdt_geometry g;
    step_run k;
    if (fdt_gen_geometry(&W.p, &rc, &g, e) ||
        prepare_step(&k, rfn, rfn_int, &rc, &g, &W.ref_lay, W.a.in, W.ref_out, e))
        return -1;
    FDT_ASSERT(k.nbox == 1, "the reference runs the grid in one launch");
    if (run_step(&k, e) || W.b->sync(e))
        return fdt_err_wrap(e, "running the reference kernel");
    W.b->module_unload(rmod);
    /* The reference must be finite everywhere inside and leave the rest untouched. */
    dev_check c;
    if (compare(W.ref_out, &W.ref_lay, 0.0, &c, e))
        return -1;
    if (c.nonfinite || c.touched || c.checked != (uint64_t)(W.p.nx * W.p.ny * W.p.nz))
        return fdt_err_set(e, "the reference kernel is broken: %llu non-finite points, %llu "
                              "halo/padding elements written, %llu of %lld points checked",
                           (unsigned long long)c.nonfinite, (unsigned long long)c.touched,
                           (unsigned long long)c.checked, (long long)(W.p.nx * W.p.ny * W.p.nz));
    if (check_reference(r, e))
        return -1;
    /* Problems that fit in the last-level cache would time the cache: flush it, by the
     * parent's rule (fdt_eval_flush_bytes), which knows the Infinity Cache from the catalogue. */
    if (m.flush_bytes > 0) {
        W.flush_bytes = (size_t)m.flush_bytes;
        if (W.b->alloc(W.flush_bytes, &W.flush, e))
            return -1;
        /* a buffer flushed by reading is written once: untouched pages all read one page */
        if (W.b->flush && W.b->memset_async(W.flush, 1, W.flush_bytes, e))
            return -1;
    }
    size_t fb = 0, tb = 0;
    if (W.b->mem_info(&fb, &tb, e) == 0)
        r->device_bytes = tb - fb;
    W.have_problem = 1;
    r->setup_s = fdt_now() - t0;
    return 0;
}

/* Decodes an allocation element index to padded coordinates. */
static void element_coords(const fdt_layout *l, uint64_t el, int64_t out[3])
{
    int64_t pos = (int64_t)el - l->offset;
    if (el == ~0ULL || pos < 0) {
        out[0] = out[1] = out[2] = -1;
        return;
    }
    out[2] = pos / l->slice;
    out[1] = pos % l->slice / l->line;
    out[0] = pos % l->line;
}

static void verify_message(fdt_eval_result *r, const dev_check *c, const char *when)
{
    const fdt_verify *v = &r->verify;
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_printf(&b, "%s:", when);
    if (v->bad)
        fdt_sb_printf(&b, " %llu of %llu points off by more than %.3g (max %.3g, first at "
                          "interior %lld,%lld,%lld);", (unsigned long long)v->bad,
                      (unsigned long long)v->checked, v->tol, v->max_err,
                      (long long)(v->first[0] - W.p.R), (long long)(v->first[1] - W.p.R),
                      (long long)(v->first[2] - W.p.R));
    if (v->nonfinite)
        fdt_sb_printf(&b, " %llu points not finite (never written?);",
                      (unsigned long long)v->nonfinite);
    if (v->nonfinite && !v->bad)
        fdt_sb_printf(&b, " first at interior %lld,%lld,%lld;", (long long)(v->first[0] - W.p.R),
                      (long long)(v->first[1] - W.p.R), (long long)(v->first[2] - W.p.R));
    if (v->touched) {
        int64_t t[3];
        element_coords(&W.a.lay, c->first_touched, t);
        fdt_sb_printf(&b, " %llu halo/padding elements written (first at padded %lld,%lld,%lld);",
                      (unsigned long long)v->touched, (long long)t[0], (long long)t[1],
                      (long long)t[2]);
    }
    if (v->input_changed)
        fdt_sb_printf(&b, " %llu input elements changed;", (unsigned long long)v->input_changed);
    if (v->checked != (uint64_t)(W.p.nx * W.p.ny * W.p.nz))
        fdt_sb_printf(&b, " only %llu points compared;", (unsigned long long)v->checked);
    if (b.len && fdt_sb_str(&b)[b.len - 1] == ';')
        b.s[--b.len] = 0;
    snprintf(r->message, sizeof r->message, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
}

static void fill_verify(fdt_verify *v, const dev_check *c)
{
    v->checked = c->checked;
    v->bad = c->bad;
    v->nonfinite = c->nonfinite;
    v->touched = c->touched;
    double m;
    memcpy(&m, &c->max_err_bits, sizeof m);
    v->max_err = m;
    v->rel_err = c->ssr > 0 ? sqrt(c->sse / c->ssr) : 0;
    element_coords(&W.a.lay, c->first_bad, v->first);
}

static int verified(const fdt_verify *v)
{
    return !v->bad && !v->nonfinite && !v->touched && !v->input_changed &&
           v->checked == (uint64_t)(W.p.nx * W.p.ny * W.p.nz);
}

/* Turns a device error into the result's status. Returns 1 when the context is lost. */
static int device_failure(fdt_eval_result *r, const char *stage, const fdt_err *e)
{
    int lost = W.b->context_lost();
    r->status = lost ? FDT_EVAL_CRASHED : FDT_EVAL_LAUNCH_ERROR;
    snprintf(r->message, sizeof r->message, "%s: %s", stage, e->msg);
    return lost;
}

static int do_eval(const char *payload, size_t n, fdt_eval_result *r)
{
    eval_msg m;
    memset(r, 0, sizeof *r);
    fdt_err e;
    if (n < sizeof m) {
        r->status = FDT_EVAL_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "malformed request");
        return 0;
    }
    memcpy(&m, payload, sizeof m);
    const char *image = payload + sizeof m;
    r->verify.tol = W.tol.cand_vs_ref;
    fdt_geometry g;
    if (fdt_gen_geometry(&W.p, &m.c, &g, &e)) {
        r->status = FDT_EVAL_LAUNCH_ERROR;
        snprintf(r->message, sizeof r->message, "%s", e.msg);
        return 0;
    }
    if (ensure_arrays(m.c.align, &e))
        return device_failure(r, "preparing the arrays", &e);
    r->line = W.a.lay.line;
    r->offset = W.a.lay.offset;
    void *mod = NULL, *fn = NULL, *fn_int = NULL;
    if (W.b->module_load(image, m.image_len, &mod, &e))
        return device_failure(r, "loading the kernel", &e);
    if (step_kernels(mod, m.kernel, &fn, &fn_int, &e)) {
        W.b->module_unload(mod);
        return device_failure(r, "loading the kernel", &e);
    }
    step_run k;
    if (prepare_step(&k, fn, fn_int, &m.c, &g, &W.a.lay, W.a.in, W.a.out, &e)) {
        W.b->module_unload(mod);
        r->status = FDT_EVAL_LAUNCH_ERROR; /* a box of the grid the config cannot run */
        snprintf(r->message, sizeof r->message, "%s", e.msg);
        return 0;
    }
    if (allow_shared(&k, &e)) {
        W.b->module_unload(mod);
        return device_failure(r, "loading the kernel", &e);
    }
    k.drop = test_drop_box();
    dev_check c;
    int lost = 0;
    if (poison(W.a.out, W.a.lay.elems, &e) || W.b->sync(&e)) {
        lost = device_failure(r, "poisoning the output", &e);
        goto out;
    }
    if (run_step(&k, &e) || W.b->sync(&e)) {
        lost = device_failure(r, "running the kernel", &e);
        goto out;
    }
    if (compare(W.a.out, &W.a.lay, W.tol.cand_vs_ref, &c, &e) ||
        inputs_changed(&r->verify.input_changed, &e)) {
        lost = device_failure(r, "verifying", &e);
        goto out;
    }
    fill_verify(&r->verify, &c);
    r->verify.tol = W.tol.cand_vs_ref;
    if (!verified(&r->verify)) {
        r->status = FDT_EVAL_WRONG;
        verify_message(r, &c, "wrong");
        goto out;
    }
    if (time_action(run_step, &k, &m.t, W.flush_bytes > 0, &r->timing, &e) ||
        time_part(&m.c, fn, &m.t, &r->part_ms, &e)) {
        lost = device_failure(r, "timing", &e);
        goto out;
    }
    /* Same output after the timed runs: catches races and reads of unwritten memory. */
    if (compare(W.a.out, &W.a.lay, W.tol.cand_vs_ref, &c, &e)) {
        lost = device_failure(r, "verifying after timing", &e);
        goto out;
    }
    fdt_verify again = r->verify;
    fill_verify(&again, &c);
    if (!verified(&again)) {
        r->verify = again;
        r->verify.rerun_changed = 1;
        r->status = FDT_EVAL_WRONG;
        verify_message(r, &c, "wrong after repeated runs (race?)");
        goto out;
    }
    /* last: its rotating fields write into the inputs (filled again) and the output */
    if (time_layers(&k, fn, fn_int, &m.c, &g, &m.t, &r->layers_ms, &e)) {
        lost = device_failure(r, "timing the layers", &e);
        goto out;
    }
    r->status = FDT_EVAL_OK;
    r->gbs = fdt_effective_bytes(&W.p) / (r->timing.median_ms * 1e-3) / 1e9;
    r->frac_copy = W.copy_gbs > 0 ? r->gbs / W.copy_gbs : 0;
out:
    if (!lost)
        W.b->module_unload(mod);
    return lost;
}

void fdt_worker_main(int fd, const char *backend, int index)
{
    W.fd = fd;
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive fdtune */
    signal(SIGINT, SIG_IGN);          /* Ctrl-C is the parent's to handle */
    /* a kernel that faults (the CPU's run in this process) ends the worker, whatever handler
     * the process it was forked from installed: the parent sees the crash by its signal */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    fdt_err e;
    W.b = fdt_rt_backend_find(backend);
    if (!W.b) {
        send_error("unknown backend");
        _exit(2);
    }
    if (W.b->open(index, &e) || W.b->device_info(index, &W.info, &e)) {
        send_error(e.msg);
        _exit(2);
    }
    for (int i = 0; i < 2 * BATCH; i++)
        if (W.b->event_create(&W.ev[i], &e)) {
            send_error(e.msg);
            _exit(2);
        }
    fdt_frame_write(fd, MSG_HELLO, &W.info, sizeof W.info, &e);
    for (;;) {
        uint32_t type;
        void *data = NULL;
        size_t n = 0;
        if (fdt_frame_read(fd, &type, &data, &n, -1, &e))
            _exit(0); /* parent gone */
        if (type == MSG_QUIT) {
            free(data);
            free_problem();
            _exit(0);
        } else if (type == MSG_COPYBW && n == sizeof(uint64_t)) {
            uint64_t bytes;
            memcpy(&bytes, data, sizeof bytes);
            double gbs = 0;
            if (measure_copy((size_t)bytes, &gbs, NULL, &e))
                send_error(e.msg);
            else
                fdt_frame_write(fd, MSG_COPYBW_OK, &gbs, sizeof gbs, &e);
        } else if (type == MSG_LINK && n == 0) {
            fdt_link l;
            if (measure_link(&l, &e))
                send_error(e.msg);
            else
                fdt_frame_write(fd, MSG_LINK_OK, &l, sizeof l, &e);
        } else if (type == MSG_SETUP) {
            fdt_setup_result r;
            if (do_setup(data, n, &r, &e)) {
                int lost = W.b->context_lost();
                free_problem();
                send_error(e.msg);
                if (lost)
                    _exit(3);
            } else {
                sample_clocks(&r.clocks);
                fdt_frame_write(fd, MSG_SETUP_OK, &r, sizeof r, &e);
            }
        } else if (type == MSG_EVAL) {
            fdt_eval_result r;
            int lost = !W.have_problem ? 0 : do_eval(data, n, &r);
            if (!W.have_problem) {
                memset(&r, 0, sizeof r);
                r.status = FDT_EVAL_LAUNCH_ERROR;
                snprintf(r.message, sizeof r.message, "no problem set up");
            }
            if (!lost)
                sample_clocks(&r.clocks);
            else
                fdt_clocks_init(&r.clocks);
            fdt_frame_write(fd, MSG_EVAL_OK, &r, sizeof r, &e);
            if (lost)
                _exit(3); /* the context is gone: the parent starts a fresh worker */
        } else {
            send_error("unknown request");
        }
        free(data);
    }
}
