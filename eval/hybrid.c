/* The hybrid step's runner (fdt_hyrun.h): two devices, each with the kernels of one config,
 * run N damped wave steps of one grid between them; the same steps on one device from the
 * same initial field give the field they are compared with. A run is a set of parts (a
 * device, its arrays and the boxes it computes) and of transfers (a box of the new field
 * copied from one part's arrays into the other's) done every step: a part's boxes next to a
 * cut first, then its transfers on a copy stream of the GPU side (one for the GPU's planes
 * out, one for the host's in, so the two directions overlap), then its other boxes; the
 * host waits for every stream, and p, p_prev and the output rotate. The CPU backend's calls
 * return when done, so the GPU's queued work runs while the host computes its part. One
 * device alone (the single-device modes and reference) queues its steps back to back with no
 * wait between them, as a program on one device does, and times them by its own events. */
#include "fdt_hyrun.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXBOX (FDTUNED_DEPLOY_MAX + 1)
#define MAXXFER 12

/* One opened device and its kernels: fn[0] the interior kernel NAME_int, fn[1] NAME. */
typedef struct hdev {
    const fdt_rt_backend *b;
    fdt_config cfg;
    fdt_gen_target gen;
    void *mod, *fn[2];
    void *s_main, *s_copy, *s_in; /* s_copy: its own planes out; s_in: the host's in */
    void *ev[7]; /* 0: a part's cut computed; 1+2i, 2+2i: part i's transfers begin, end;
                  * 5, 6: its part's boxes begin, end (its compute time) */
    int host;    /* its memory is the host's (the CPU backend) */
} hdev;

/* One part: its device, its arrays (the global x/y layout of its device's config, nz planes
 * of its own starting at global plane z0) and the boxes it computes (the first ncut before
 * its transfers). f[0] the output, f[1] p, f[2] p_prev: device addresses (host addresses for
 * host memory). */
typedef struct part {
    hdev *d;
    fdt_layout lay;
    int64_t z0;
    uint64_t f[3], c2, eta;
    int hostmem;                  /* its arrays are host memory */
    const fdt_rt_backend *alloc;  /* who allocated them (NULL: another part's, shared) */
    const fdt_rt_backend *pin;    /* the GPU that registered them (host memory), or NULL */
    int npinned;                  /* of f[0], f[1], f[2], c2, eta, how many it registered */
    int nbox, ncut;
    fdtuned_box box[MAXBOX];
    fdt_geometry geo[MAXBOX];
} part;

/* A box of the new field (interior coordinates) copied from part `from` to part `to`. */
typedef struct xfer {
    int from, to;
    int64_t g[3], n[3];
} xfer;

typedef struct run {
    const fdt_problem *p;
    fdt_params q;
    int npart, nxfer, shared;
    part part[2];
    xfer x[MAXXFER];
} run;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static const char *const mode_names[FDT_HYRUN_MODES] = {"gpu-only", "cpu-only", "data-parallel",
                                                         "task-parallel"};
static const char *const mode_short[FDT_HYRUN_MODES] = {"gpu", "cpu", "data", "task"};

const char *fdt_hyrun_mode_name(fdt_hyrun_mode m)
{
    FDT_ASSERT((unsigned)m < FDT_HYRUN_MODES, "a known mode");
    return mode_names[m];
}

int fdt_hyrun_mode_parse(const char *s, fdt_hyrun_mode *m, fdt_err *e)
{
    for (int i = 0; i < FDT_HYRUN_MODES; i++)
        if (!strcmp(s, mode_names[i]) || !strcmp(s, mode_short[i])) {
            *m = (fdt_hyrun_mode)i;
            return 0;
        }
    return fdt_err_set(e, "hybrid mode '%s': expected gpu-only, cpu-only, data-parallel or "
                          "task-parallel", s);
}

void fdt_hyrun_request_init(fdt_hyrun_request *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->mode = FDT_HYRUN_DATA;
    rq->fraction = 0.25;
    rq->steps = 10;
    rq->warmup = 2;
    rq->seed = 20241122;
    rq->share = FDT_HYRUN_SHARE_UNIFIED;
    rq->timeout_s = 600;
    rq->repeat = 1;
}

/* ------------------------------------------------------------------ devices */

static void dev_close(hdev *d)
{
    if (!d->b)
        return;
    for (int i = 0; i < 5; i++)
        if (d->ev[i])
            d->b->event_destroy(d->ev[i]);
    d->b->stream_destroy(d->s_main);
    d->b->stream_destroy(d->s_copy);
    d->b->stream_destroy(d->s_in);
    d->b->module_unload(d->mod);
    memset(d, 0, sizeof *d);
}

/* Both kernels may use the config's dynamic shared memory (NVIDIA's opt-in above 48 KB):
 * the same for every box, a function of the config alone (fdt_gen_shared). */
static int allow_shared(hdev *d, const fdt_problem *p, fdt_err *e)
{
    uint32_t bytes = 0;
    int dynamic = 0;
    if (d->host || !d->b->allow_shared)
        return 0;
    if (fdt_gen_shared(p, &d->cfg, &bytes, &dynamic, e))
        return -1;
    for (int i = 0; dynamic && i < 2; i++)
        if (d->b->allow_shared(d->fn[i], bytes, e))
            return -1;
    return 0;
}

/* Compiles cfg's kernels for problem p on side's device, opens it, loads them. */
static int dev_open(hdev *d, const fdt_hyrun_side *side, const fdt_problem *p, fdt_err *e)
{
    memset(d, 0, sizeof *d);
    fdt_target t;
    if (fdt_target_resolve(&side->dev, &t, e))
        return -1;
    if (!t.backend)
        return fdt_err_set(e, "%s: its backend is not in this build", side->dev.name);
    d->b = t.backend;
    d->cfg = side->cfg;
    d->gen = t.gen;
    d->host = d->b->host;
    fdt_cand v, *pv = &v;
    fdt_cand_init(&v, FDT_CAND_STENCIL, &d->cfg, NULL);
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    o.stop_after = FDT_BUILD_COMPILE;
    char name_int[128];
    int rc = -1;
    if (fdt_target_build(&t, p, &pv, 1, &o, e))
        goto done;
    if (fdt_cand_failed(&v)) {
        *e = v.err;
        goto done;
    }
    fdt_gen_dwave_interior_name(v.kernel, name_int, sizeof name_int);
    if (d->b->open(side->dev.index, e) ||
        d->b->module_load(v.code.image, v.code.size, &d->mod, e) ||
        d->b->module_function(d->mod, v.kernel, &d->fn[1], e) ||
        d->b->module_function(d->mod, name_int, &d->fn[0], e) ||
        d->b->stream_create(&d->s_main, e) || d->b->stream_create(&d->s_copy, e) ||
        d->b->stream_create(&d->s_in, e))
        goto done;
    for (int i = 0; i < 7; i++)
        if (d->b->event_create(&d->ev[i], e))
            goto done;
    if (allow_shared(d, p, e))
        goto done;
    rc = 0;
done:
    fdt_cand_free(&v);
    if (rc) {
        fdt_err_wrap(e, side->dev.name);
        dev_close(d);
    }
    return rc;
}

/* ------------------------------------------------------------------ arrays */

static size_t esize(const fdt_problem *p) { return fdt_prec_size(p->prec); }

static void part_free(part *P)
{
    uint64_t *a[5] = {&P->f[0], &P->f[1], &P->f[2], &P->c2, &P->eta};
    for (int i = 0; P->alloc && i < 5; i++) {
        if (i < P->npinned)
            P->pin->host_unregister((void *)(uintptr_t)*a[i]);
        P->alloc->free(*a[i]);
    }
    memset(P, 0, sizeof *P);
}

/* Part P's arrays on its device for nz planes from global plane z0, in its device's memory;
 * a host part's registered with pin (a GPU peer's backend) for the peer's copies, so that the
 * CPU computes in the memory its kernels were tuned in (the CPU backend's: huge pages, each
 * array at its own offset in them; on the H200 node a data-parallel part ran 20% slower in
 * the GPU driver's own pinned allocations, bench/hybrid_h200/run17). */
static int part_alloc(part *P, hdev *d, const fdt_problem *p, int64_t z0, int64_t nz,
                      const fdt_rt_backend *pin, fdt_err *e)
{
    memset(P, 0, sizeof *P);
    P->d = d;
    P->z0 = z0;
    fdt_problem lp = *p;
    lp.nz = nz;
    if (fdt_layout_make(&lp, d->cfg.align, &P->lay, e))
        return -1;
    size_t bytes = (size_t)P->lay.elems * esize(p);
    size_t eta = fdt_absorb_profile_bytes(p);
    P->hostmem = d->host;
    P->alloc = d->b;
    P->pin = d->host ? pin : NULL;
    uint64_t *a[5] = {&P->f[0], &P->f[1], &P->f[2], &P->c2, &P->eta};
    for (int i = 0; i < 5; i++) {
        size_t n = i < 4 ? bytes : eta;
        if (P->alloc->alloc(n, a[i], e))
            return -1;
        if (P->pin && P->pin->host_register((void *)(uintptr_t)*a[i], n, e))
            return fdt_err_wrap(e, "hybrid: pinning the host part's arrays");
        P->npinned += P->pin != NULL;
    }
    return 0;
}

/* The device address A's kernels use for host address h of shared memory. */
static int mapped(hdev *d, uint64_t h, uint64_t *out, fdt_err *e)
{
    if (d->host) {
        *out = h;
        return 0;
    }
    return d->b->host_device_ptr((void *)(uintptr_t)h, out, e);
}

/* Host buffer -> one of P's arrays (at address a). */
static int upload(part *P, uint64_t a, const void *buf, size_t n, fdt_err *e)
{
    if (P->hostmem) {
        memcpy((void *)(uintptr_t)a, buf, n);
        return 0;
    }
    return P->d->b->copy_h2d(a, buf, n, e) || P->d->b->sync(e) ? -1 : 0;
}

static int download(part *P, uint64_t a, void *buf, size_t n, fdt_err *e)
{
    if (P->hostmem) {
        memcpy(buf, (const void *)(uintptr_t)a, n);
        return 0;
    }
    return P->d->b->copy_d2h(buf, a, n, e);
}

static void put(void *buf, const fdt_problem *p, int64_t i, double v)
{
    if (p->prec == FDT_F32)
        ((float *)buf)[i] = (float)v;
    else
        ((double *)buf)[i] = v;
}

static double get(const void *buf, const fdt_problem *p, int64_t i)
{
    return p->prec == FDT_F32 ? (double)((const float *)buf)[i] : ((const double *)buf)[i];
}

/* ------------------------------------------------------------------ stability */

/* The leapfrog p+ = 2 p - p- + c2 L(p) is stable when c2 * rho < 4, rho the spectral radius of
 * L = sx d2x + sy d2y + sz d2z: at c2 * rho = 4 an eigenvalue of the step reaches -1, beyond
 * it one grows every step (the damped form divides by 1 + g >= 1 and only shrinks it). The
 * central second-derivative weights alternate in sign, so a 1-D stencil's symbol is largest
 * at the grid's Nyquist wave number: rho_1 = |c_0| + 2 sum |c_r|; rho = (|sx|+|sy|+|sz|) rho_1
 * (R=1, unit scales: 12, the classic c dt / h < 1/sqrt(3)). */
double fdt_hyrun_spectral_radius(const fdt_problem *p, const fdt_params *q)
{
    long double c[FDT_R_MAX + 1];
    fdt_err e;
    int rc = fdt_fd_coeffs(p->R, c, &e);
    FDT_REQUIRE(rc == 0, "the weights of a checked radius");
    long double r1 = fabsl(c[0]);
    for (int r = 1; r <= p->R; r++)
        r1 += 2 * fabsl(c[r]);
    return (double)r1 * (fabs(q->sx) + fabs(q->sy) + fabs(q->sz));
}

double fdt_hyrun_c2_max(const fdt_problem *p, const fdt_params *q)
{
    return FDT_HYRUN_CFL_SAFETY * 4.0 / fdt_hyrun_spectral_radius(p, q);
}

/* What the arrays start as: the seeded input field (p, p_prev; the output 0) with c2 the
 * seeded value scaled into (c2/2, c2], or for the energy check a field at rest (0) with c2
 * constant; c2 below the CFL bound of the run's scales q (asserted). */
typedef struct init {
    uint64_t seed;
    int rest;
    double c2;
} init;

static init init_make(const fdt_problem *p, const fdt_params *q, uint64_t seed, int rest,
                      double c2)
{
    FDT_REQUIRE(c2 > 0 && c2 * fdt_hyrun_spectral_radius(p, q) < 4, "c2 within the CFL bound");
    init in = {seed, rest, c2};
    return in;
}

/* The value of field f (0 output, 1 p, 2 p_prev, 3 c2) at padded global (i, j, k). The seeded
 * c2 lies in (0.25, 0.5): twice it, times in->c2, in (c2/2, c2). */
static double init_value(const init *in, const fdt_problem *p, int f, int64_t i, int64_t j,
                         int64_t k)
{
    static const int field[4] = {-1, FDT_FIELD_IN, FDT_FIELD_PREV, FDT_FIELD_C2};
    if (f == 0)
        return 0;
    if (in->rest)
        return f == 3 ? in->c2 : 0;
    double v = fdt_input_value(in->seed, field[f], i, j, k, p->prec);
    return f == 3 ? 2 * v * in->c2 : v;
}

/* Planes [k0, k1) of P's field f into buf. */
typedef struct fill_job {
    const part *P;
    const fdt_problem *p;
    const init *in;
    void *buf;
    int f;
    int64_t k0, k1;
} fill_job;

static void *fill_planes(void *arg)
{
    const fill_job *j = arg;
    const fdt_layout *l = &j->P->lay;
    for (int64_t k = j->k0; k < j->k1; k++)
        for (int64_t y = 0; y < l->my; y++)
            for (int64_t i = 0; i < l->mx; i++)
                put(j->buf, j->p, fdt_layout_index(l, i, y, k),
                    init_value(j->in, j->p, j->f, i, y, k + j->P->z0));
    return NULL;
}

/* Most threads of the host's loops over a grid's planes: a 512^3 field is 1.4e8 seeded
 * values, about 1 s on one core; a run fills every field twice (its reference's and its own)
 * and compares its output with its reference's. */
#define HOST_THREADS 64

/* The cores this process may use, as a run's child process started (host_mask_take): the
 * CPU backend's OpenMP team binds the thread that starts it to one core, and threads that
 * thread creates would inherit it. */
static cpu_set_t host_mask;
static int host_mask_taken;

static void host_mask_take(void)
{
    host_mask_taken = sched_getaffinity(0, sizeof host_mask, &host_mask) == 0;
}

/* How many jobs a host loop over `planes` planes takes: the cores of host_mask (one where it
 * could not be taken), at most one a plane and HOST_THREADS. */
static int host_jobs(int64_t planes)
{
    int n = host_mask_taken ? CPU_COUNT(&host_mask) : 1;
    n = n < 1 ? 1 : n > HOST_THREADS ? HOST_THREADS : n;
    return planes < n ? (int)(planes > 0 ? planes : 1) : n;
}

/* Runs fn on each of the n jobs of `size` bytes at `jobs`: job 0 on this thread, the others
 * on threads of their own, free to run on any core of host_mask (one whose thread cannot
 * start runs here after job 0). */
static void run_jobs(void *(*fn)(void *), void *jobs, size_t size, int n)
{
    FDT_ASSERT(n >= 1 && n <= HOST_THREADS, "a job per thread");
    pthread_t t[HOST_THREADS];
    int started[HOST_THREADS] = {0};
    pthread_attr_t attr;
    int attr_ok = pthread_attr_init(&attr) == 0;
    if (attr_ok && host_mask_taken)
        pthread_attr_setaffinity_np(&attr, sizeof host_mask, &host_mask);
    for (int i = 1; i < n; i++)
        started[i] = pthread_create(&t[i], attr_ok ? &attr : NULL, fn,
                                    (char *)jobs + (size_t)i * size) == 0;
    if (attr_ok)
        pthread_attr_destroy(&attr);
    fn(jobs);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
        else
            fn((char *)jobs + (size_t)i * size);
    }
}

/* P's field f into buf, its planes split among the cores this process may use. */
static void fill_field(const part *P, const fdt_problem *p, const init *in, void *buf, int f)
{
    int64_t mz = P->lay.mz;
    int n = host_jobs(mz);
    fill_job job[HOST_THREADS];
    for (int i = 0; i < n; i++)
        job[i] = (fill_job){P, p, in, buf, f, mz * i / n, mz * (i + 1) / n};
    FDT_ASSERT(job[0].k0 == 0 && job[n - 1].k1 == mz, "the jobs cover every plane");
    run_jobs(fill_planes, job, sizeof job[0], n);
}

/* Fills P's arrays (every padded point, from global plane z0 - R) and its eta profile. */
static int part_fill(part *P, const fdt_problem *p, const init *in, fdt_err *e)
{
    size_t n = (size_t)P->lay.elems * esize(p);
    void *buf = calloc(1, n > fdt_absorb_profile_bytes(p) ? n : fdt_absorb_profile_bytes(p));
    if (!buf)
        return fdt_err_set(e, "hybrid run: out of memory");
    uint64_t a[4] = {P->f[0], P->f[1], P->f[2], P->c2};
    int rc = 0;
    for (int f = 0; f < 4 && !rc; f++) {
        fill_field(P, p, in, buf, f);
        rc = upload(P, a[f], buf, n, e);
    }
    if (!rc)
        rc = fdt_absorb_profile(p, buf, e) ||
             upload(P, P->eta, buf, fdt_absorb_profile_bytes(p), e);
    free(buf);
    return rc ? -1 : 0;
}

/* Shared memory: one allocation of the whole grid in host memory, B's (the host's) arrays,
 * pinned and mapped by A's backend when A is a GPU; A uses them through its own addresses
 * (mapped afterwards), B frees them. */
static int part_share(part *A, part *B, hdev *da, hdev *db, const fdt_problem *p,
                      const init *in, fdt_err *e)
{
    if (!db->host)
        return fdt_err_set(e, "shared memory: device B must be the host CPU");
    FDT_REQUIRE(db->cfg.align == da->cfg.align, "one layout (same_layout raised the smaller)");
    if (part_alloc(B, db, p, 0, p->nz, da->host ? NULL : da->b, e) || part_fill(B, p, in, e))
        return -1;
    *A = *B;
    A->d = da;
    A->alloc = NULL;
    A->hostmem = da->host;
    uint64_t *a[5] = {&A->f[0], &A->f[1], &A->f[2], &A->c2, &A->eta};
    for (int i = 0; i < 5; i++)
        if (mapped(da, *a[i], a[i], e))
            return -1;
    return 0;
}

/* ------------------------------------------------------------------ boxes and launches */

/* Box (g, n) as P's box i with kernel `damped`, and its geometry for P's config. A box
 * shallower than the config's window (the GPU's slab of a data-parallel split, the interior
 * of a task-parallel one, when the tuned kernel walks the whole grid's depth) gets one layer
 * of blocks, each walking the box's planes: every family stops its walk at the box's last
 * plane (k1 = min(k0 + NW, R + nz)), so the compiled kernel runs it as it is. */
static int add_box(part *P, const fdt_problem *p, const int64_t g[3], const int64_t n[3],
                   int damped, fdt_err *e)
{
    FDT_ASSERT(P->nbox < MAXBOX, "room for the box");
    fdtuned_box *b = &P->box[P->nbox];
    memset(b, 0, sizeof *b);
    for (int a = 0; a < 3; a++) {
        b->g[a] = g[a];
        b->n[a] = n[a];
    }
    b->damped = damped;
    if (fdt_gen_box_geometry(&P->d->gen, p, &P->d->cfg, n, &P->geo[P->nbox], e))
        return fdt_err_wrap(e, "hybrid: box %lldx%lldx%lld at %lld,%lld,%lld", (long long)n[0],
                            (long long)n[1], (long long)n[2], (long long)g[0], (long long)g[1],
                            (long long)g[2]);
    P->nbox++;
    return 0;
}

/* The deployment of P's config on the grid (fdt_gen_deploy), as P's boxes. */
static int add_deploy(part *P, const fdt_problem *p, fdt_err *e)
{
    fdt_deploy d;
    if (fdt_gen_deploy(&P->d->gen, p, &P->d->cfg, &d, e))
        return -1;
    for (int i = 0; i < d.nbox; i++) {
        P->box[i] = d.box[i];
        P->geo[i] = d.geo[i];
    }
    P->nbox = d.nbox;
    return 0;
}

/* Launches P's boxes [from, to) on its main stream. */
static int launch_boxes(const run *r, const part *P, int from, int to, fdt_err *e)
{
    fdt_arg a[FDT_ARG_COUNT];
    int n = fdt_gen_kernel_args(FDT_OP_DWAVE, 0, a);
    /* f[0] the output, f[1] p, f[2] p_prev: the part's arrays rotate every step */
    const fdt_launch_arrays arr = {P->f[0], P->f[1], P->f[2], P->c2, P->eta, &P->lay, P->z0};
    for (int i = from; i < to; i++) {
        fdt_argval v[FDT_ARG_COUNT];
        void *args[FDT_ARG_COUNT];
        int jb = -1, je = -1;
        fdt_gen_argvals(r->p, &r->q, &arr, &P->box[i], a, n, v);
        for (int k = 0; k < n; k++) {
            jb = a[k] == FDT_ARG_JBEG ? k : jb;
            je = a[k] == FDT_ARG_JEND ? k : je;
            args[k] = &v[k];
        }
        FDT_ASSERT(jb >= 0 && je >= 0, "dwave kernels take JBEG and JEND");
        const fdt_geometry *g = &P->geo[i];
        for (int s = 0; s < g->nlaunch; s++) {
            v[jb].i = g->launch[s].jbeg;
            v[je].i = g->launch[s].jend;
            if (P->d->b->launch_on(P->d->fn[P->box[i].damped], g->launch[s].grid,
                                   g->launch[s].block, g->shared_dynamic ? g->shared_bytes : 0,
                                   args, P->d->s_main, e))
                return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ transfers */

/* The device that copies between F and T: the GPU side's (NULL: both are host memory). */
static hdev *copier(const part *F, const part *T)
{
    return !F->hostmem ? F->d : !T->hostmem ? T->d : NULL;
}

static void xfer_side(const part *P, const xfer *x, const fdt_problem *p, uint64_t *addr,
                      size_t *line, size_t *slice)
{
    int R = p->R;
    *addr = P->f[0] + esize(p) * (uint64_t)fdt_layout_index(&P->lay, x->g[0] + R, x->g[1] + R,
                                                            x->g[2] - P->z0 + R);
    *line = (size_t)P->lay.line * esize(p);
    *slice = (size_t)P->lay.slice * esize(p);
}

/* The stream of copier d for part F's transfers: its copy stream for its own part's (device
 * to host), its second one for the host's (host to device), so the two directions overlap. */
static void *xfer_stream(const hdev *d, const part *F)
{
    return d == F->d ? d->s_copy : d->s_in;
}

/* Whether box x of whole planes (the grid's nx x ny) can go as one contiguous range: both
 * parts in one layout (same_layout), so the planes' slices, halos and padding included (zeros
 * on both sides: p = 0 beyond the grid), are the same bytes, and one linear copy replaces a
 * pitched one of the interior rows. On the H200 it did not shorten the step: with pitched or
 * contiguous copies alike a data-parallel step took the GPU's kernels and then the copies
 * (512^3: 0.601 + 0.09-0.10 ms; the planner's serial_ms). */
static int whole_planes(const run *r, const part *F, const part *T, const xfer *x)
{
    return x->g[0] == 0 && x->g[1] == 0 && x->n[0] == r->p->nx && x->n[1] == r->p->ny &&
           F->lay.line == T->lay.line && F->lay.slice == T->lay.slice &&
           F->lay.offset == T->lay.offset;
}

static int do_xfer(const run *r, const xfer *x, fdt_err *e)
{
    const part *F = &r->part[x->from], *T = &r->part[x->to];
    fdt_rt_box_copy c;
    memset(&c, 0, sizeof c);
    xfer_side(F, x, r->p, &c.src, &c.src_line, &c.src_slice);
    xfer_side(T, x, r->p, &c.dst, &c.dst_line, &c.dst_slice);
    c.src_host = F->hostmem;
    c.dst_host = T->hostmem;
    c.width = (size_t)x->n[0] * esize(r->p);
    c.rows = (size_t)x->n[1];
    c.planes = (size_t)x->n[2];
    if (whole_planes(r, F, T, x)) {
        /* from the planes' first element (x = y = -R) to their last slice's end */
        size_t back = (size_t)(r->p->R + r->p->R * F->lay.line) * esize(r->p);
        c.src -= back;
        c.dst -= back;
        c.width = c.src_slice * c.planes;
        c.src_line = c.dst_line = c.src_slice = c.dst_slice = c.width;
        c.rows = c.planes = 1;
    }
    hdev *d = copier(F, T);
    if (!d)
        return fdt_rt_backend_find("cpu")->copy_box_on(&c, NULL, e);
    return d->b->copy_box_on(&c, xfer_stream(d, F), e);
}

/* Part `from`'s transfers, after its cut boxes (a GPU's copy stream waits for them); their
 * time is the copier's events around them (the host clock when both sides are host memory). */
static int part_xfers(const run *r, int from, double *host_ms, fdt_err *e)
{
    const part *F = &r->part[from];
    hdev *d = NULL;
    double t0 = now_ms();
    int any = 0;
    for (int i = 0; i < r->nxfer; i++) {
        if (r->x[i].from != from)
            continue;
        if (!any) {
            d = copier(F, &r->part[r->x[i].to]);
            if (d && d == F->d &&
                (d->b->event_record_on(d->ev[0], d->s_main, e) ||
                 d->b->stream_wait_event(d->s_copy, d->ev[0], e)))
                return -1;
            if (d && d->b->event_record_on(d->ev[1 + 2 * from], xfer_stream(d, F), e))
                return -1;
            any = 1;
        }
        if (do_xfer(r, &r->x[i], e))
            return -1;
    }
    if (any && d && d->b->event_record_on(d->ev[2 + 2 * from], xfer_stream(d, F), e))
        return -1;
    *host_ms = any && !d ? now_ms() - t0 : 0;
    return 0;
}

/* ------------------------------------------------------------------ steps */

/* Part i's boxes and transfers of one step; a GPU's between events 5 and 6 of its main
 * stream, a host part's timed by the host clock (*host_ms: its copies, *cpu_ms: its boxes). */
static int part_step(run *r, int i, double *host_ms, double *cpu_ms, fdt_err *e)
{
    part *P = &r->part[i];
    hdev *d = P->d;
    double t0 = now_ms();
    if (!d->host && d->b->event_record_on(d->ev[5], d->s_main, e))
        return -1;
    if (launch_boxes(r, P, 0, P->ncut, e) || part_xfers(r, i, host_ms, e) ||
        launch_boxes(r, P, P->ncut, P->nbox, e))
        return -1;
    if (!d->host)
        return d->b->event_record_on(d->ev[6], d->s_main, e);
    *cpu_ms += now_ms() - t0 - *host_ms; /* the host parts' sum (two: the CPU for both) */
    return 0;
}

/* One step: each part (GPUs first: their work is queued) its cut boxes, its transfers, its
 * other boxes; then the host waits for every stream and the fields rotate. *xms: the
 * transfers' time; ms[0], ms[1]: the GPU's and the host's compute time (0 without one). */
static int step(run *r, double *xms, double ms[2], fdt_err *e)
{
    double host_ms[2] = {0, 0};
    *xms = ms[0] = ms[1] = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < r->npart; i++)
            if (r->part[i].d->host == pass && part_step(r, i, &host_ms[i], &ms[1], e))
                return -1;
    for (int i = 0; i < r->npart; i++) {
        hdev *d = r->part[i].d;
        if (d->b->stream_sync(d->s_main, e) || d->b->stream_sync(d->s_copy, e) ||
            d->b->stream_sync(d->s_in, e))
            return -1;
    }
    for (int i = 0; i < r->npart; i++) {
        part *P = &r->part[i];
        hdev *d = NULL;
        for (int k = 0; k < r->nxfer && !d; k++)
            if (r->x[k].from == i)
                d = copier(P, &r->part[r->x[k].to]);
        float ms_x = 0, ms_c = 0;
        if (d && d->b->event_elapsed(d->ev[1 + 2 * i], d->ev[2 + 2 * i], &ms_x, e))
            return -1;
        if (!P->d->host && P->d->b->event_elapsed(P->d->ev[5], P->d->ev[6], &ms_c, e))
            return -1;
        *xms += ms_x + host_ms[i];
        ms[0] += ms_c;
        fdt_gen_fields_rotate(P->f);
    }
    return 0;
}

static double median(double *v, int n)
{
    fdt_timing t;
    memset(&t, 0, sizeof t);
    fdt_timing_stats(v, n, &t);
    return t.median_ms;
}

/* One device alone: its steps queued back to back, as a program on one device runs them (no
 * wait for the host between steps), each step's time between its start and the next one's on
 * the device's own clock (events on its stream; the host backend's read the host clock, its
 * launches return when done). The medians into res. */
static int run_queued(run *r, int warmup, int steps, fdt_hyrun_result *res, fdt_err *e)
{
    part *P = &r->part[0];
    hdev *d = P->d;
    FDT_ASSERT(r->npart == 1 && r->nxfer == 0, "one device, nothing to exchange");
    void **ev = calloc((size_t)steps + 1, sizeof *ev);
    double *t = calloc((size_t)steps, sizeof *t);
    int rc = ev && t ? 0 : fdt_err_set(e, "hybrid run: out of memory");
    for (int i = 0; !rc && i <= steps; i++)
        rc = d->b->event_create(&ev[i], e);
    for (int s = 0; !rc && s < warmup + steps; s++) {
        if (s >= warmup)
            rc = d->b->event_record_on(ev[s - warmup], d->s_main, e);
        rc = rc || launch_boxes(r, P, 0, P->nbox, e);
        fdt_gen_fields_rotate(P->f);
    }
    rc = rc || d->b->event_record_on(ev[steps], d->s_main, e) || d->b->stream_sync(d->s_main, e);
    for (int i = 0; !rc && i < steps; i++) {
        float ms = 0;
        rc = d->b->event_elapsed(ev[i], ev[i + 1], &ms, e);
        t[i] = ms;
    }
    if (!rc) {
        res->step_ms = median(t, steps);
        res->exchange_ms = 0;
        res->gpu_ms = d->host ? 0 : res->step_ms;
        res->cpu_ms = d->host ? res->step_ms : 0;
    }
    for (int i = 0; ev && i <= steps; i++)
        if (ev[i])
            d->b->event_destroy(ev[i]);
    free(ev);
    free(t);
    return rc;
}

/* warmup + steps steps; the medians of the timed ones into res (step, exchange, compute). One
 * device alone: run_queued. */
static int run_steps(run *r, int warmup, int steps, fdt_hyrun_result *res, fdt_err *e)
{
    if (r->npart == 1)
        return run_queued(r, warmup, steps, res, e);
    double *t[4];
    int rc = 0;
    for (int k = 0; k < 4; k++)
        if (!(t[k] = calloc((size_t)steps, sizeof *t[k])))
            rc = fdt_err_set(e, "hybrid run: out of memory");
    for (int s = 0; !rc && s < warmup + steps; s++) {
        double t0 = now_ms(), x = 0, ms[2];
        rc = step(r, &x, ms, e);
        if (s >= warmup) {
            t[0][s - warmup] = now_ms() - t0;
            t[1][s - warmup] = x;
            t[2][s - warmup] = ms[0];
            t[3][s - warmup] = ms[1];
        }
    }
    if (!rc) {
        res->step_ms = median(t[0], steps);
        res->exchange_ms = median(t[1], steps);
        res->gpu_ms = median(t[2], steps);
        res->cpu_ms = median(t[3], steps);
    }
    for (int k = 0; k < 4; k++)
        free(t[k]);
    return rc;
}

static void run_free(run *r)
{
    for (int i = r->npart - 1; i >= 0; i--)
        part_free(&r->part[i]);
    r->npart = 0;
}

/* p (f[1]) over the boxes each part computes, into the global layout gl's host buffer. */
static int gather(run *r, const fdt_layout *gl, void *out, fdt_err *e)
{
    const fdt_problem *p = r->p;
    int R = p->R;
    for (int i = 0; i < r->npart; i++) {
        part *P = &r->part[i];
        size_t n = (size_t)P->lay.elems * esize(p);
        void *buf = malloc(n);
        if (!buf)
            return fdt_err_set(e, "hybrid run: out of memory");
        if (download(P, P->f[1], buf, n, e)) {
            free(buf);
            return -1;
        }
        for (int b = 0; b < P->nbox; b++) {
            const fdtuned_box *x = &P->box[b];
            for (int64_t k = x->g[2]; k < x->g[2] + x->n[2]; k++)
                for (int64_t j = x->g[1]; j < x->g[1] + x->n[1]; j++)
                    for (int64_t i2 = x->g[0]; i2 < x->g[0] + x->n[0]; i2++)
                        put(out, p, fdt_layout_index(gl, i2 + R, j + R, k + R),
                            get(buf, p, fdt_layout_index(&P->lay, i2 + R, j + R,
                                                         k - P->z0 + R)));
        }
        free(buf);
    }
    return 0;
}

/* ------------------------------------------------------------------ the modes */

/* Part on device d over the whole grid (its own arrays) with its deployment, or one damped
 * box when single. */
static int setup_one(run *r, hdev *d, int single, const init *in, fdt_err *e)
{
    part *P = &r->part[r->npart++];
    if (part_alloc(P, d, r->p, 0, r->p->nz, NULL, e) || part_fill(P, r->p, in, e))
        return -1;
    const int64_t g[3] = {0, 0, 0}, n[3] = {r->p->nx, r->p->ny, r->p->nz};
    return single ? add_box(P, r->p, g, n, 1, e) : add_deploy(P, r->p, e);
}

/* Two parts, sharing one allocation of the grid or each with its own arrays: A's nza planes
 * from plane 0, B's nzb from plane zb. A host part's arrays are pinned by a GPU peer. */
static int setup_pair(run *r, hdev *da, hdev *db, int share, int64_t nza, int64_t zb,
                      int64_t nzb, const init *in, fdt_err *e)
{
    const fdt_problem *p = r->p;
    part *A = &r->part[0], *B = &r->part[1];
    r->npart = 2;
    r->shared = share;
    if (share)
        return part_share(A, B, da, db, p, in, e);
    const fdt_rt_backend *pin_a = db->host ? NULL : db->b, *pin_b = da->host ? NULL : da->b;
    return part_alloc(A, da, p, 0, nza, pin_a, e) || part_fill(A, p, in, e) ||
                   part_alloc(B, db, p, zb, nzb, pin_b, e) || part_fill(B, p, in, e)
               ? -1
               : 0;
}

static void add_xfer(run *r, int from, const int64_t g[3], const int64_t n[3])
{
    FDT_ASSERT(r->nxfer < MAXXFER, "room for the transfer");
    xfer *x = &r->x[r->nxfer++];
    x->from = from;
    x->to = 1 - from;
    memcpy(x->g, g, sizeof x->g);
    memcpy(x->n, n, sizeof x->n);
}

/* Part P's planes [z0, z1) as a box at the cut (on side top: the planes next to z1, else
 * next to z0) computed first, then the rest: the cut box t planes thick, t the smallest of
 * need, 2 need, 4 need, ... (and at last the whole part) whose boxes the config can run (a
 * window along z may not fit R planes). */
static int add_cut(part *P, const fdt_problem *p, int64_t z0, int64_t z1, int top, int64_t need,
                   fdt_err *e)
{
    int64_t n = z1 - z0;
    for (int64_t t = need;; t = 2 * t < n ? 2 * t : n) {
        const int64_t gc[3] = {0, 0, top ? z1 - t : z0}, nc[3] = {p->nx, p->ny, t};
        const int64_t gr[3] = {0, 0, top ? z0 : z0 + t}, nr[3] = {p->nx, p->ny, n - t};
        P->nbox = 0;
        if (add_box(P, p, gc, nc, 1, e) == 0 && (t == n || add_box(P, p, gr, nr, 1, e) == 0)) {
            P->ncut = 1;
            return 0;
        }
        if (t == n)
            return -1;
    }
}

/* Data-parallel: A the planes [0, nza), B [nza, nz), each first the planes at the cut the
 * other reads (R, or all its planes when it has fewer: the rest of the other's halo is the
 * grid's own boundary halo, which each holds as the single device does). */
static int setup_data(run *r, hdev *da, hdev *db, int share, int64_t nza, const init *in,
                      fdt_err *e)
{
    const fdt_problem *p = r->p;
    int64_t nz = p->nz, ta = nza < p->R ? nza : p->R, tb = nz - nza < p->R ? nz - nza : p->R;
    if (setup_pair(r, da, db, share, nza, nza, nz - nza, in, e) ||
        add_cut(&r->part[0], p, 0, nza, 1, ta, e) || add_cut(&r->part[1], p, nza, nz, 0, tb, e))
        return -1;
    const int64_t ga[3] = {0, 0, nza - ta}, gb[3] = {0, 0, nza};
    const int64_t na[3] = {p->nx, p->ny, ta}, nb[3] = {p->nx, p->ny, tb};
    if (!share) {
        add_xfer(r, 0, ga, na);
        add_xfer(r, 1, gb, nb);
    }
    return 0;
}

/* Task-parallel: A the interior box with the interior kernel, B the six slabs of the sides
 * deployment; then the R-thick faces each reads of the other. */
static int setup_task(run *r, hdev *da, hdev *db, int share, const init *in, fdt_err *e)
{
    const fdt_problem *p = r->p;
    int64_t R = p->R, W = p->absorb_w, n[3] = {p->nx, p->ny, p->nz};
    if (W < R)
        return fdt_err_set(e, "task-parallel: the layer (W=%lld) must be at least R=%lld "
                              "points thick", (long long)W, (long long)R);
    if (setup_pair(r, da, db, share, p->nz, 0, p->nz, in, e))
        return -1;
    fdtuned_box sides[FDTUNED_DEPLOY_MAX];
    const long long ln[3] = {n[0], n[1], n[2]}, ext[3] = {1, 1, 1};
    int nb = fdtuned_deploy_boxes(2, ln, (int)W, ext, sides);
    FDT_ASSERT(nb == 7, "the sides deployment has the interior and six slabs");
    const int64_t gi[3] = {W, W, W}, ni[3] = {n[0] - 2 * W, n[1] - 2 * W, n[2] - 2 * W};
    if (add_box(&r->part[0], p, gi, ni, 0, e))
        return -1;
    for (int b = 1; b < nb; b++) {
        const int64_t g[3] = {sides[b].g[0], sides[b].g[1], sides[b].g[2]};
        const int64_t m[3] = {sides[b].n[0], sides[b].n[1], sides[b].n[2]};
        if (add_box(&r->part[1], p, g, m, 1, e))
            return -1;
    }
    r->part[0].ncut = r->part[0].nbox;
    r->part[1].ncut = r->part[1].nbox;
    for (int a = 0; a < 3 && !share; a++)
        for (int hi = 0; hi < 2; hi++) {
            int64_t g[3] = {W, W, W}, m[3] = {ni[0], ni[1], ni[2]};
            m[a] = R;
            g[a] = hi ? n[a] - W - R : W; /* the interior's own faces: A to B */
            add_xfer(r, 0, g, m);
            g[a] = hi ? n[a] - W : W - R; /* the slabs' planes next to it: B to A */
            add_xfer(r, 1, g, m);
        }
    return 0;
}

/* ------------------------------------------------------------------ the run */

typedef struct hyrun_job {
    const fdt_hyrun_request *rq;
} hyrun_job;

/* Whether the pair shares one allocation. */
static int want_share(const fdt_hyrun_request *rq, hdev *da, fdt_err *e)
{
    int u = 0;
    if (rq->share == FDT_HYRUN_SHARE_NEVER || rq->mode == FDT_HYRUN_GPU ||
        rq->mode == FDT_HYRUN_CPU)
        return 0;
    if (rq->share == FDT_HYRUN_SHARE_ALWAYS)
        return 1;
    if (da->b->unified(&u, e))
        return -1;
    return u;
}

static int64_t planes_b(const fdt_hyrun_request *rq)
{
    return (int64_t)llround(rq->fraction * (double)rq->p.nz);
}

int fdt_hyrun_check(const fdt_hyrun_request *rq, fdt_err *e)
{
    if (rq->p.op != FDT_OP_DWAVE)
        return fdt_err_set(e, "hybrid run: the operator must be dwave (it is %s)",
                           fdt_op_name(rq->p.op));
    if (fdt_problem_check(&rq->p, e))
        return -1;
    if (rq->steps < 1 || rq->warmup < 0)
        return fdt_err_set(e, "hybrid run: steps=%d must be at least 1", rq->steps);
    if (rq->repeat < 1 || rq->repeat > FDT_HYRUN_MAX_REPEAT)
        return fdt_err_set(e, "hybrid run: repeat=%d must be in 1..%d", rq->repeat,
                           FDT_HYRUN_MAX_REPEAT);
    int64_t nb = planes_b(rq);
    if (rq->mode == FDT_HYRUN_DATA && (nb < 1 || rq->p.nz - nb < 1))
        return fdt_err_set(e, "data-parallel: fraction %g gives %lld of %lld planes to device B; "
                              "each device needs at least one", rq->fraction, (long long)nb,
                           (long long)rq->p.nz);
    return 0;
}

#ifdef FDTUNE_ASSERTS
/* Whether box [g, g + n) lies within the grid and its z planes [z0, z1). */
static int box_within(const fdt_problem *p, const int64_t g[3], const int64_t n[3], int64_t z0,
                      int64_t z1)
{
    const int64_t hi[3] = {p->nx, p->ny, z1 < p->nz ? z1 : p->nz}, lo[3] = {0, 0, z0 > 0 ? z0 : 0};
    for (int a = 0; a < 3; a++)
        if (n[a] < 1 || g[a] < lo[a] || g[a] + n[a] > hi[a])
            return 0;
    return 1;
}
#endif

/* A run's invariants (the state checker of eval/hybrid.c, as SQLite's assert_pager_state):
 * every part's boxes lie in its own planes and the parts' boxes hold each output point once
 * by count (the boxes of one part never overlap: a deployment's or a cut's); the cut boxes
 * come first; each transfer goes from one part to the other, from planes its source computes
 * to planes of its destination's arrays (its halo). */
static void assert_run_state(const run *r)
{
#ifdef FDTUNE_ASSERTS
    const fdt_problem *p = r->p;
    FDT_ASSERT(r->npart >= 1 && r->npart <= 2, "one or two parts");
    double points = 0;
    for (int i = 0; i < r->npart; i++) {
        const part *P = &r->part[i];
        int64_t z1 = P->z0 + (r->shared ? p->nz : P->lay.nz);
        FDT_ASSERT(P->ncut >= 0 && P->ncut <= P->nbox && P->nbox <= MAXBOX, "cut boxes first");
        for (int b = 0; b < P->nbox; b++) {
            const fdtuned_box *x = &P->box[b];
            const int64_t g[3] = {x->g[0], x->g[1], x->g[2]}, n[3] = {x->n[0], x->n[1], x->n[2]};
            FDT_ASSERT(box_within(p, g, n, r->shared ? 0 : P->z0, z1), "a box in its part");
            double h = 1;
            for (int a = 0; a < 3; a++)
                h *= (double)(x->hole[2 * a + 1] - x->hole[2 * a]);
            points += (double)n[0] * (double)n[1] * (double)n[2] - h;
        }
    }
    FDT_ASSERT(points == (double)p->nx * (double)p->ny * (double)p->nz,
               "the parts' boxes hold every output point once");
    for (int i = 0; i < r->nxfer; i++) {
        const xfer *x = &r->x[i];
        FDT_ASSERT(r->npart == 2 && !r->shared, "transfers between parts of their own");
        FDT_ASSERT((x->from == 0 || x->from == 1) && x->to == 1 - x->from, "one way");
        const part *F = &r->part[x->from], *T = &r->part[x->to];
        FDT_ASSERT(box_within(p, x->g, x->n, F->z0, F->z0 + F->lay.nz), "from planes it has");
        FDT_ASSERT(box_within(p, x->g, x->n, T->z0 - p->R, T->z0 + T->lay.nz + p->R),
                   "into its destination's arrays");
    }
#else
    (void)r;
#endif
}

/* The hybrid (or one-device) run of rq on devices d into p's layout buffer out. */
static int mode_run(const fdt_hyrun_request *rq, hdev *d, const init *in, fdt_hyrun_result *res,
                    const fdt_layout *gl, void *out, fdt_err *e)
{
    run r;
    memset(&r, 0, sizeof r);
    r.p = &rq->p;
    fdt_params_default(&rq->p, &r.q);
    int share = want_share(rq, &d[0], e), rc = -1;
    if (share < 0)
        return -1;
    if (rq->mode == FDT_HYRUN_GPU || rq->mode == FDT_HYRUN_CPU)
        rc = setup_one(&r, &d[rq->mode == FDT_HYRUN_CPU], 0, in, e);
    else if (rq->mode == FDT_HYRUN_DATA)
        rc = setup_data(&r, &d[0], &d[1], share, rq->p.nz - planes_b(rq), in, e);
    else
        rc = setup_task(&r, &d[0], &d[1], share, in, e);
    if (!rc) {
        assert_run_state(&r);
        rc = run_steps(&r, rq->warmup, rq->steps, res, e) || gather(&r, gl, out, e);
    }
    res->shared = r.shared;
    res->nz_b = rq->mode == FDT_HYRUN_DATA ? planes_b(rq) : 0;
    for (int i = 0; i < r.nxfer; i++)
        res->exchange_bytes += (double)(r.x[i].n[0] * r.x[i].n[1] * r.x[i].n[2]) *
                               (double)esize(&rq->p);
    run_free(&r);
    return rc;
}

/* The single-device reference on device A into out. */
static int single_run(const fdt_hyrun_request *rq, hdev *d, const init *in, double *ms,
                      const fdt_layout *gl, void *out, fdt_err *e)
{
    run r;
    memset(&r, 0, sizeof r);
    r.p = &rq->p;
    fdt_params_default(&rq->p, &r.q);
    fdt_hyrun_result one;
    memset(&one, 0, sizeof one);
    int rc = setup_one(&r, d, 1, in, e) || run_steps(&r, rq->warmup, rq->steps, &one, e) ||
             gather(&r, gl, out, e);
    *ms = one.step_ms;
    run_free(&r);
    return rc ? -1 : 0;
}

/* compare()'s figures over planes [k0, k1) (padded) into res, zeroed by the caller. */
static void compare_planes(const fdt_problem *p, const fdt_layout *gl, const void *a,
                           const void *b, int64_t k0, int64_t k1, fdt_hyrun_result *res)
{
    int R = p->R;
    res->bitwise = 1;
    for (int64_t k = k0; k < k1; k++)
        for (int64_t j = R; j < p->ny + R; j++)
            for (int64_t i = R; i < p->nx + R; i++) {
                int64_t at = fdt_layout_index(gl, i, j, k);
                double x = get(a, p, at), y = get(b, p, at), d = fabs(x - y);
                if (!isfinite(x) || !isfinite(y)) {
                    res->nonfinite++;
                    continue;
                }
                res->max_abs_diff = d > res->max_abs_diff ? d : res->max_abs_diff;
                res->max_abs = fabs(y) > res->max_abs ? fabs(y) : res->max_abs;
                size_t es = esize(p);
                if (memcmp((const char *)a + at * (int64_t)es, (const char *)b + at * (int64_t)es,
                           es))
                    res->bitwise = 0;
            }
}

/* A thread's planes of compare(). */
typedef struct cmp_job {
    const fdt_problem *p;
    const fdt_layout *gl;
    const void *a, *b;
    int64_t k0, k1;
    fdt_hyrun_result res;
} cmp_job;

static void *compare_job(void *arg)
{
    cmp_job *j = arg;
    compare_planes(j->p, j->gl, j->a, j->b, j->k0, j->k1, &j->res);
    return NULL;
}

/* The run's output a against its reference b over the interior: the largest difference and
 * value, the points not finite, and whether they are equal bit for bit; the planes split
 * among the cores this process may use. */
static void compare(const fdt_problem *p, const fdt_layout *gl, const void *a, const void *b,
                    fdt_hyrun_result *res)
{
    int n = host_jobs(p->nz);
    cmp_job job[HOST_THREADS];
    for (int i = 0; i < n; i++)
        job[i] = (cmp_job){.p = p, .gl = gl, .a = a, .b = b, .k0 = p->R + p->nz * i / n,
                           .k1 = p->R + p->nz * (i + 1) / n};
    run_jobs(compare_job, job, sizeof job[0], n);
    res->bitwise = 1;
    for (int i = 0; i < n; i++) {
        const fdt_hyrun_result *r = &job[i].res;
        res->max_abs_diff = fmax(res->max_abs_diff, r->max_abs_diff);
        res->max_abs = fmax(res->max_abs, r->max_abs);
        res->nonfinite += r->nonfinite;
        res->bitwise &= r->bitwise;
    }
}

/* Device B's side in rq's mode: its layers' config for task-parallel where it has one. */
static fdt_hyrun_side side_b(const fdt_hyrun_request *rq)
{
    fdt_hyrun_side s = rq->side[1];
    if (rq->mode == FDT_HYRUN_TASK && s.has_layers)
        s.cfg = s.cfg_layers;
    return s;
}

/* Shared memory is one allocation, so one layout; and a data-parallel pair in one layout
 * exchanges whole planes as contiguous copies (whole_planes): when the two configs' aligns
 * differ, the one with the smaller gets the larger (both dialects take align; it changes the
 * padding, not the kernel's work) and its kernels are built again; res->shared_align and
 * res->realigned say so. Before the single-device run, so that device A's reference uses the
 * config of its part. */
static int same_layout(const fdt_hyrun_request *rq, hdev *d, fdt_hyrun_result *res, fdt_err *e)
{
    int share = want_share(rq, &d[0], e);
    if (share < 0)
        return -1;
    if ((!share && rq->mode != FDT_HYRUN_DATA) || d[0].cfg.align == d[1].cfg.align)
        return 0;
    int lo = d[0].cfg.align < d[1].cfg.align ? 0 : 1;
    fdt_hyrun_side s = lo ? side_b(rq) : rq->side[0];
    s.cfg.align = d[1 - lo].cfg.align;
    res->shared_align = s.cfg.align;
    res->realigned = lo;
    dev_close(&d[lo]);
    if (dev_open(&d[lo], &s, &rq->p, e))
        return fdt_err_wrap(e, "one layout: device %c's config with align=%d (the other's)",
                            "AB"[lo], s.cfg.align);
    return 0;
}

static int hyrun_child(void *arg, fdt_sb *out)
{
    host_mask_take(); /* before any kernel binds this thread */
    const fdt_hyrun_request *rq = ((hyrun_job *)arg)->rq;
    hdev d[2];
    memset(d, 0, sizeof d);
    fdt_hyrun_result res;
    memset(&res, 0, sizeof res);
    res.mode = rq->mode;
    fdt_err e;
    fdt_layout gl;
    void *a = NULL, *b = NULL;
    fdt_params q;
    fdt_params_default(&rq->p, &q);
    init in = init_make(&rq->p, &q, rq->seed, 0, fdt_hyrun_c2_max(&rq->p, &q));
    res.c2_max = in.c2;
    int rc = fdt_layout_make(&rq->p, 1, &gl, &e);
    if (!rc) {
        a = calloc((size_t)gl.elems, esize(&rq->p));
        b = calloc((size_t)gl.elems, esize(&rq->p));
        rc = a && b ? 0 : fdt_err_set(&e, "hybrid run: out of memory");
    }
    int need_b = rq->mode != FDT_HYRUN_GPU;
    fdt_hyrun_side sb = side_b(rq);
    rc = rc || dev_open(&d[0], &rq->side[0], &rq->p, &e) ||
         (need_b && dev_open(&d[1], &sb, &rq->p, &e)) ||
         (need_b && same_layout(rq, d, &res, &e)) ||
         single_run(rq, &d[0], &in, &res.single_ms, &gl, b, &e) ||
         mode_run(rq, d, &in, &res, &gl, a, &e);
    if (!rc)
        compare(&rq->p, &gl, a, b, &res);
    free(a);
    free(b);
    dev_close(&d[1]);
    dev_close(&d[0]);
    if (rc)
        fdt_sb_puts(out, e.msg);
    else
        fdt_sb_putn(out, (const char *)&res, sizeof res);
    return rc ? -1 : 0;
}

/* One run of rq in a child process into r. */
static int run_once(const fdt_hyrun_request *rq, fdt_hyrun_result *r, fdt_err *e)
{
    hyrun_job job = {rq};
    char *data = NULL;
    size_t n = 0;
    char what[64];
    snprintf(what, sizeof what, "hybrid run (%s)", fdt_hyrun_mode_name(rq->mode));
    if (fdt_run_in_child(what, hyrun_child, &job, rq->timeout_s * 1000, &data, &n, e))
        return -1;
    int ok = n == sizeof *r;
    if (ok)
        memcpy(r, data, sizeof *r);
    free(data);
    return ok ? 0 : fdt_err_set(e, "%s: malformed answer", what);
}

static int by_step_ms(const void *a, const void *b)
{
    double x = ((const fdt_hyrun_result *)a)->step_ms, y = ((const fdt_hyrun_result *)b)->step_ms;
    return (x > y) - (x < y);
}

/* The runs v[0..n) as one result: the run of the median step time (the lower middle of an
 * even count) with the runs' spread, and the worst agreement of any run. Sorts v. */
static void merge_runs(fdt_hyrun_result *v, int n, fdt_hyrun_result *r)
{
    FDT_ASSERT(n >= 1, "a merge of at least one run");
    qsort(v, (size_t)n, sizeof *v, by_step_ms);
    *r = v[(n - 1) / 2];
    r->runs = n;
    r->step_min_ms = v[0].step_ms;
    r->step_max_ms = v[n - 1].step_ms;
    for (int i = 0; i < n; i++) {
        FDT_ASSERT(v[i].mode == r->mode && v[i].nz_b == r->nz_b, "runs of one request");
        r->max_abs_diff = fmax(r->max_abs_diff, v[i].max_abs_diff);
        r->max_abs = fmax(r->max_abs, v[i].max_abs);
        r->nonfinite = v[i].nonfinite > r->nonfinite ? v[i].nonfinite : r->nonfinite;
        r->bitwise &= v[i].bitwise;
    }
    FDT_ASSERT(r->step_min_ms <= r->step_ms && r->step_ms <= r->step_max_ms,
               "the median run lies within the spread");
}

int fdt_hyrun_run(const fdt_hyrun_request *rq, fdt_hyrun_result *r, fdt_err *e)
{
    memset(r, 0, sizeof *r);
    int split = rq->mode == FDT_HYRUN_DATA || rq->mode == FDT_HYRUN_TASK;
    if (fdt_hyrun_check(rq, e))
        return -1;
    if (split && !fdt_target_device_is_cpu(&rq->side[1].dev))
        return fdt_err_set(e, "%s: device B must be the host CPU (it is %s)",
                           fdt_hyrun_mode_name(rq->mode), rq->side[1].dev.name);
    fdt_hyrun_result v[FDT_HYRUN_MAX_REPEAT];
    for (int i = 0; i < rq->repeat; i++)
        if (run_once(rq, &v[i], e))
            return -1;
    merge_runs(v, rq->repeat, r);
    return 0;
}

double fdt_hyrun_tolerance(const fdt_problem *p, const fdt_hyrun_result *r, int steps)
{
    double eps = p->prec == FDT_F32 ? 0x1p-24 : 0x1p-53;
    return 16.0 * steps * eps * r->max_abs;
}

int fdt_hyrun_agrees(const fdt_problem *p, const fdt_hyrun_result *r, int steps)
{
    if (r->nonfinite)
        return 0;
    return r->bitwise || r->max_abs_diff <= fdt_hyrun_tolerance(p, r, steps);
}

/* ------------------------------------------------------------------ the energy check */

#define RICKER_PI 3.14159265358979323846

/* The Ricker wavelet of peak frequency f (cycles per step) delayed by t0 steps, at step t. */
static double ricker(double f, double t0, double t)
{
    double a = RICKER_PI * f * (t - t0);
    return (1 - 2 * a * a) * exp(-a * a);
}

typedef struct energy_job {
    const fdt_hyrun_side *side;
    const fdt_problem *p;
    const int *W;
    int n;
} energy_job;

/* sum of p^2 over the points within radius rad of the grid's centre. */
static double energy(const fdt_problem *p, const fdt_layout *gl, const void *f, double rad)
{
    double s = 0, c[3] = {(double)(p->nx / 2), (double)(p->ny / 2), (double)(p->nz / 2)};
    for (int64_t k = 0; k < p->nz; k++)
        for (int64_t j = 0; j < p->ny; j++)
            for (int64_t i = 0; i < p->nx; i++) {
                double dx = (double)i - c[0], dy = (double)j - c[1], dz = (double)k - c[2];
                if (dx * dx + dy * dy + dz * dz > rad * rad)
                    continue;
                double v = get(f, p, fdt_layout_index(gl, i + p->R, j + p->R, k + p->R));
                s += v * v;
            }
    return s;
}

/* The pulse and when to measure: with unit axis scales, c2 the CFL bound's (fdt_hyrun_c2_max:
 * 0.9 of 4 / rho; 0.225 at R=2, 0.185 at R=4), a speed of c = sqrt(c2) points per step; L the
 * half of the smallest extent; a wavelength of L/4 (peak frequency f = c / lambda, delay
 * t0 = 1.2 / f); before: at 2 t0 (emitted, short of every layer); after: at t0 + 2L / c (a
 * wave reflected at a face back at the centre); the sphere of radius L - Wmax (clear of the
 * widest layer). */
typedef struct pulse {
    double c2, f, t0, rad;
    int t_before, t_after;
} pulse;

static void pulse_plan(const fdt_problem *p, const fdt_params *q, int Wmax, pulse *u)
{
    u->c2 = fdt_hyrun_c2_max(p, q);
    const double c = sqrt(u->c2);
    int64_t L = p->nx < p->ny ? p->nx : p->ny;
    L = (L < p->nz ? L : p->nz) / 2;
    u->f = c / ((double)L / 4);
    u->t0 = 1.2 / u->f;
    u->rad = (double)(L - Wmax);
    u->t_before = (int)ceil(2 * u->t0);
    u->t_after = (int)ceil(u->t0 + 2.0 * (double)L / c);
}

/* The pulse's steps on run r (one part), the energies at the two times into out. */
static int pulse_run(run *r, const pulse *u, const fdt_layout *gl, void *buf,
                     fdt_hyrun_energy *out, fdt_err *e)
{
    for (int t = 0; t < u->t_after; t++) {
        double x, ms[2];
        r->q.src = ricker(u->f, u->t0, t);
        if (step(r, &x, ms, e))
            return -1;
        if (t + 1 != u->t_before && t + 1 != u->t_after)
            continue;
        if (gather(r, gl, buf, e))
            return -1;
        double en = energy(r->p, gl, buf, u->rad);
        if (t + 1 == u->t_before)
            out->before = en;
        else
            out->after = en;
    }
    out->steps = u->t_after;
    out->ratio = out->before > 0 ? out->after / out->before : NAN;
    return 0;
}

/* One width: the damped step over the grid (W = 0: the interior kernel, undamped, compiled
 * for a layer of 1), from rest, with the pulse at the centre. */
static int energy_one(const fdt_hyrun_side *side, const fdt_problem *p0, int W, int Wmax,
                      fdt_hyrun_energy *out, fdt_err *e)
{
    fdt_problem p = *p0;
    p.absorb_w = W > 0 ? W : 1;
    pulse u;
    hdev d;
    run r;
    memset(&r, 0, sizeof r);
    r.p = &p;
    fdt_params_default(&p, &r.q);
    r.q.sx = r.q.sy = r.q.sz = 1.0;
    pulse_plan(&p, &r.q, Wmax, &u);
    init in = init_make(&p, &r.q, 0, 1, u.c2);
    fdt_layout gl;
    if (fdt_layout_make(&p, 1, &gl, e) || dev_open(&d, side, &p, e))
        return -1;
    void *buf = calloc((size_t)gl.elems, esize(&p));
    const int64_t g[3] = {0, 0, 0}, n[3] = {p.nx, p.ny, p.nz};
    part *P = &r.part[r.npart++];
    out->W = W;
    int rc = !buf ? fdt_err_set(e, "energy check: out of memory")
                  : part_alloc(P, &d, &p, 0, p.nz, NULL, e) || part_fill(P, &p, &in, e) ||
                        add_box(P, &p, g, n, W > 0, e) || pulse_run(&r, &u, &gl, buf, out, e);
    run_free(&r);
    dev_close(&d);
    free(buf);
    return rc ? -1 : 0;
}

static int energy_child(void *arg, fdt_sb *out)
{
    host_mask_take(); /* before any kernel binds this thread */
    const energy_job *j = arg;
    fdt_hyrun_energy *res = calloc((size_t)j->n, sizeof *res);
    fdt_err e;
    int Wmax = 0, rc = res ? 0 : fdt_err_set(&e, "energy check: out of memory");
    for (int i = 0; i < j->n; i++)
        Wmax = j->W[i] > Wmax ? j->W[i] : Wmax;
    for (int i = 0; !rc && i < j->n; i++)
        rc = energy_one(j->side, j->p, j->W[i], Wmax, &res[i], &e);
    if (rc)
        fdt_sb_puts(out, e.msg);
    else
        fdt_sb_putn(out, (const char *)res, (size_t)j->n * sizeof *res);
    free(res);
    return rc ? -1 : 0;
}

int fdt_hyrun_reflection_check(const fdt_problem *p, const int *W, int n, fdt_err *e)
{
    int64_t m = p->nx < p->ny ? p->nx : p->ny;
    m = m < p->nz ? m : p->nz;
    for (int i = 0; i < n; i++)
        if (W[i] < 0 || 8 * (int64_t)W[i] > m)
            return fdt_err_set(e, "energy check: W=%d: a layer may take at most an eighth of the "
                                  "grid's smallest extent (%lld), so that the pulse leaves the "
                                  "source before it reaches one", W[i], (long long)m);
    if (p->op != FDT_OP_DWAVE)
        return fdt_err_set(e, "energy check: the operator must be dwave");
    return 0;
}

int fdt_hyrun_reflection(const fdt_hyrun_side *side, const fdt_problem *p, const int *W, int n,
                         fdt_hyrun_energy *out, int timeout_s, fdt_err *e)
{
    if (fdt_hyrun_reflection_check(p, W, n, e))
        return -1;
    energy_job j = {side, p, W, n};
    char *data = NULL;
    size_t len = 0;
    if (fdt_run_in_child("energy check", energy_child, &j, timeout_s * 1000, &data, &len, e))
        return -1;
    int ok = len == (size_t)n * sizeof *out;
    if (ok)
        memcpy(out, data, len);
    free(data);
    return ok ? 0 : fdt_err_set(e, "energy check: malformed answer");
}

int fdt_hyrun_energy_falls(const fdt_hyrun_energy *en, int n, fdt_err *why)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(en[i].before) || !isfinite(en[i].after) || !(en[i].before > 0))
            return fdt_err_set(why, "W=%d: the energy before %g, after %g (%d steps): not a "
                                    "finite, positive measure (an unstable step?)", en[i].W,
                               en[i].before, en[i].after, en[i].steps), 0;
    for (int i = 0; i < n; i++)
        if (!(en[i].ratio < 1))
            return fdt_err_set(why, "W=%d: after/before %g is not below 1: the energy in the "
                                    "centre grew after the pulse left (an unstable step?)",
                               en[i].W, en[i].ratio), 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (en[i].W < en[j].W && !(en[j].ratio < en[i].ratio))
                return fdt_err_set(why, "W=%d: after/before %g is not below W=%d's %g",
                                   en[j].W, en[j].ratio, en[i].W, en[i].ratio), 0;
    return 1;
}
