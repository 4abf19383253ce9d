/* The CPU form of fdtune's analytic model (fdt_cpu_model_time, fdt_search.h): the predicted
 * time of a C-dialect config (templates/cpu_loops.c, cpu_blocked.c) on a CPU device, and the
 * limit that binds it. Five terms, each the time one unit needs at its rate, combined by a
 * soft maximum (the square root of the sum of squares: a CPU core overlaps its memory
 * traffic with its work less than a GPU does):
 *
 *   dram  bytes from memory: each input and the output once, the output's read for ownership
 *         unless nt=1 writes it by streaming stores, and the neighbours re-read when the planes
 *         (loops) or the tile (blocked) they live in left the last-level cache; at the copy
 *         bandwidth, which the threads used reach as the square root of their share of the
 *         cores (the H200 host: 72-89 GB/s with 16 of 32 cores, 105 with all);
 *   llc   neighbours re-read from the last-level cache: the loops family's z (or y, for the
 *         other loop order) planes when 2R+1 planes of a thread's rows outgrow L2, a tile's
 *         planes when they outgrow L2, the halo rows and planes a tile shares with the tiles
 *         beside it;
 *   l2    neighbours re-read from L2: rows of a thread's 2R+1 rows (or a tile's planes) that do
 *         not fit in L1 but do in L2;
 *   core  the instructions of a point on one core: loads of the x neighbours (one cache line's
 *         neighbours) and the floating-point work at an issue cost per vector, every load of a
 *         neighbour from another row or plane (y, z; wave's point-wise inputs) at a larger
 *         cost, both fitted to the 2-core Zen 3 development machine (lap R=4 f32: ~4.2 cycles
 *         a point at the assumed clock);
 *   fp    the floating-point instructions alone at two vector FMAs per cycle.
 *
 * The device's facts: its cores (compute_units), vector bytes, L1d and L2 per core, the
 * last-level cache, sockets, and the copy bandwidth the fraction of every result is taken
 * of (the device's measured copy, achievable_bw_gbs, where known, else an estimate of
 * COPY_CORE_GBS per core up to COPY_SOCKET_GBS a socket); a fact the device does not give
 * takes the default below, and the terms say which were assumed (the clock always is: the
 * device reports none). The constants are fitted to the measured fractions of copy of
 * tests/test_cpu_model.c (the 2-core Zen 3 at 256^3 and the H200's 32-core host at 512^3).
 *
 * The parameters it reads: blk, tx, ty, tz (which cache a tile's planes stay in, its halo),
 * thr and bind (threads, and the sockets whose bandwidth they reach), loop (which axis
 * re-reads planes and which rows), simd (fewer lanes), uj and uk (neighbour loads shared,
 * half of them: see shared()), nt (no read for ownership; the strip buffer's store and
 * load), pfd (blocked: the full copy bandwidth), twopass (its strip's store and load; what
 * the shorter loops gain is not modelled). sched, chunk, xs and align change nothing in the
 * prediction: configs that differ only in them collapse in a dry run's ranking. */
#include "fdt_search.h"

#include <math.h>
#include <string.h>

#define CLOCK_ASSUMED_HZ 2.5e9 /* every core's clock: the device reports none */
#define VECTOR_ASSUMED 32.0    /* bytes of a SIMD register where unknown (AVX2) */
#define L1D_ASSUMED 32768.0    /* per core, where unknown */
#define L2_ASSUMED 524288.0    /* per core, where unknown */
#define LLC_PER_CORE 2097152.0 /* the last-level cache, per core, where unknown */
#define COPY_CORE_GBS 15.0     /* copy bandwidth per core where not measured (Zen 3: 30 GB/s
                                  on 2 cores) ... */
#define COPY_SOCKET_GBS 100.0  /* ... up to this per socket (the H200 host: 105 on 32) */
#define LLC_BW_CLK 21.0        /* bytes a core re-reads from the LLC per cycle (fitted: Zen 3
                                  d2z loops at 0.43 of copy) */
#define L2_BW_CLK 32.0         /* bytes a core re-reads from L2 per cycle */
#define C_NEAR 0.30            /* cycles per vector load of an x neighbour, FP instruction,
                                  store (fitted: Zen 3 d2x) */
#define C_FAR 1.32             /* cycles per vector load from another row or plane (fitted:
                                  Zen 3 lap and d2y, d2z blocked) */
#define C_WAVE 14.0            /* wave's further cycles per vector: the source point's test
                                  and its two further streams (fitted: Zen 3 wave blocked) */
#define FP_CLK 2.0             /* vector FP instructions per cycle (two FMA pipes) */
#define LLC_KNEE 1.4           /* the footprint over the LLC at which half the re-reads miss
                                  (fitted: the H200 host's lap loops at 0.38 of copy) */
#define LLC_STEEP 4.0
#define PF_LOSS 0.8            /* blocked without software prefetch: the share of the copy
                                  bandwidth the tiles' short rows reach (the hardware
                                  prefetchers lose each 4 KB page; 20-25% on Zen 3 lap) */
#define FORK_MS 0.005          /* a parallel region's start and end */
#define SOFT_K 2.0

/* The device's facts as the model uses them. */
typedef struct cpu_facts {
    int cores, sockets;
    double vector, l1d, l2, llc; /* bytes; vector, L1d and L2 per core */
    double copy_gbs, clock_hz;
    int copy_measured;
} cpu_facts;

/* A C-dialect config as the templates see it. */
typedef struct cpu_cfg {
    int blocked, tx, ty, tz, threads, spread, z_outer, simd, uj, uk, nt, pfd, twopass, eta;
} cpu_cfg;

/* d's facts, each the default above where d does not give it. */
static void facts_of(const fdt_device *d, cpu_facts *f)
{
    f->cores = d->compute_units > 0 ? d->compute_units : 1;
    f->sockets = d->sockets > 0 ? d->sockets : 1;
    f->vector = d->vector_bytes > 0 ? d->vector_bytes : VECTOR_ASSUMED;
    f->l1d = d->l1d_bytes > 0 ? (double)d->l1d_bytes : L1D_ASSUMED;
    f->l2 = d->l2_bytes > 0 ? (double)d->l2_bytes : L2_ASSUMED;
    f->llc = d->llc_bytes > 0 ? (double)d->llc_bytes : LLC_PER_CORE * f->cores;
    f->copy_measured = d->achievable_bw_gbs > 0;
    f->copy_gbs = f->copy_measured ? d->achievable_bw_gbs
                                   : fmin(COPY_CORE_GBS * f->cores, COPY_SOCKET_GBS * f->sockets);
    f->clock_hz = CLOCK_ASSUMED_HZ;
}

/* The C-dialect parameters of c: threads at most the cores (more share them), uj and uk at
 * least 1. */
static void cfg_of(const fdt_config *c, const cpu_facts *f, cpu_cfg *k)
{
    k->blocked = c->blk;
    k->tx = c->tx;
    k->ty = c->ty;
    k->tz = c->tz;
    k->threads = c->thr > 0 && c->thr < f->cores ? c->thr : f->cores;
    k->spread = c->bind == 1;
    k->z_outer = c->loop == 0;
    k->simd = c->simd;
    k->uj = c->uj > 0 ? c->uj : 1;
    k->uk = c->uk > 0 ? c->uk : 1;
    k->nt = c->nt;
    k->pfd = c->pfd;
    k->twopass = c->twopass;
    k->eta = c->eta;
}

/* The copy bandwidth (bytes/s) the config's threads reach: per socket the square root of the
 * share of its cores they use; close fills one socket before the next, spread shares them. */
static double copy_bw(const cpu_facts *f, const cpu_cfg *k)
{
    int per = f->cores / f->sockets > 0 ? f->cores / f->sockets : 1;
    double bw = 0;
    for (int s = 0, left = k->threads; s < f->sockets; s++) {
        int used = k->spread ? k->threads / f->sockets + (s < k->threads % f->sockets)
                             : (left < per ? left : per);
        left -= used;
        bw += sqrt(fmin(1.0, (double)used / per));
    }
    return f->copy_gbs * 1e9 / f->sockets * bw;
}

/* The share of re-reads over a footprint of `span` bytes per thread that the LLC serves,
 * with `streams` other planes passing through it per plane of the span. */
static double llc_hit(const cpu_facts *f, const cpu_cfg *k, double span, double streams)
{
    double over = k->threads * span * (1 + streams) / f->llc;
    return 1 / (1 + pow(over / LLC_KNEE, LLC_STEEP));
}

/* Where `bytes` of re-reads per point over a footprint `span` per thread come from: L1
 * (nothing counted: the core's loads), L2, else the LLC and, for what misses it, DRAM. */
static void reread(const cpu_facts *f, const cpu_cfg *k, double span, double bytes,
                   double streams, fdt_model_terms *t, double *dram, double *llc, double *l2)
{
    if (bytes <= 0 || span <= f->l1d / 2)
        return;
    if (span <= f->l2 / 2) {
        *l2 += bytes;
        return;
    }
    double h = llc_hit(f, k, span, streams);
    t->llc_hit = fmin(t->llc_hit, h);
    *llc += bytes * h;
    *dram += bytes * (1 - h);
}

/* DRAM, LLC and L2 bytes per point. */
static void traffic(const fdt_problem *p, const cpu_cfg *k, const cpu_facts *f,
                    fdt_model_terms *t, double *dram, double *llc, double *l2)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    double es = (double)fdt_prec_size(p->prec);
    int wave = fdt_op_is_step(p->op);
    double nin = 1 + 2 * wave;
    double streams = (nin - 1) + (k->nt ? 0 : 1); /* besides the input */
    *dram = es * (nin + 1 + (k->nt ? 0 : 1));
    *llc = *l2 = 0;
    t->llc_hit = 1;
    double nx = (double)p->nx, ny = (double)p->ny, nz = (double)p->nz;
    double row = (nx + 2 * r[0]) * es;
    if (!k->blocked) {
        /* the outer loop's axis re-reads planes, the inner one's rows */
        int o = k->z_outer ? 2 : 1, i = k->z_outer ? 1 : 2;
        double ni = k->z_outer ? ny : nz;
        double uo = k->z_outer ? k->uk : k->uj, ui = k->z_outer ? k->uj : k->uk;
        double plane = row * (ni + 2 * r[i]);
        reread(f, k, (2 * r[o] + 1) * plane, 2 * r[o] / uo * es, streams / (2 * r[o] + 1), t,
               dram, llc, l2);
        reread(f, k, (2 * r[i] + 1) * row, 2 * r[i] / ui * es, 0, t, dram, llc, l2);
        return;
    }
    double tx = k->tx > 0 && k->tx < nx ? k->tx : nx;
    double ty = k->ty > 0 && k->ty < ny ? k->ty : ny;
    double tz = k->tz > 0 && k->tz < nz ? k->tz : nz;
    double trow = (tx + 2 * r[0]) * es;
    double tile = trow * (ty + 2 * r[1]) * (2 * r[2] + 1);
    reread(f, k, tile, 2 * r[2] / k->uk * es, streams / (2 * r[2] + 1), t, dram, llc, l2);
    reread(f, k, (2 * r[1] + 1) * trow, 2 * r[1] / k->uj * es, 0, t, dram, llc, l2);
    /* the halo a tile shares with the tiles beside it, from the LLC */
    *llc += es * (2 * r[1] / ty + (tz < nz ? 2 * r[2] / tz : 0) + (tx < nx ? 2 * r[0] / tx : 0));
}

/* The share of a row's or plane's neighbour loads an output issues when u rows or planes
 * are computed together: half of the loads u outputs share are saved (the others go to the
 * registers the unrolled outputs need: uk=4 gained less on Zen 3 than the loads it saves,
 * and uj > 1 lost in every measurement). */
static double shared(int u)
{
    return (1 + 1.0 / u) / 2;
}

/* dwave's damped kernel's further work per point, as instructions() counts it: (1 - g) p_prev
 * and the division by 1 + g (a vector division costs DIV_CYCLES); g computed from the
 * distance to the faces (eta=dist: per axis a subtract, a min and S (d/W)^2: the y and z
 * ones once a row) or read (eta=array: the x value an x-neighbour-like load, the y and z ones
 * once a row) and summed. The interior kernel (wave's expression) has none. */
#define DIV_CYCLES 5.0
static void damping(const cpu_cfg *k, double *flops, double *near, double *div)
{
    *flops += 4;
    *div = DIV_CYCLES;
    if (k->eta == FDT_ETA_ARRAY) {
        *flops += 2;
        *near += 1;
    } else {
        *flops += 2 + 4;
    }
}

/* Vector instructions per point on one core: cycles (*core) and FP instructions (*fp). */
static void instructions(const fdt_problem *p, const cpu_cfg *k, const cpu_facts *f,
                         double *core, double *fp)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    double es = (double)fdt_prec_size(p->prec);
    double lanes = f->vector / es;
    if (k->simd > 0 && k->simd < lanes)
        lanes = k->simd;
    int wave = fdt_op_is_step(p->op), axes = 0;
    double flops = 0;
    for (int d = 0; d < 3; d++)
        if (r[d] > 0) {
            flops += 2 * r[d] + 1;
            axes++;
        }
    flops += axes + 2 * wave;
    double near = (r[0] ? 2 * r[0] + 1 : 1) + 1; /* x neighbours (or the centre), the store */
    near += 2.0 * k->nt + 2.0 * k->twopass;     /* the strip buffer's store and load */
    double far = 2.0 * r[1] * shared(k->uj) + 2.0 * r[2] * shared(k->uk) + 2 * wave;
    double div = 0;
    if (p->op == FDT_OP_DWAVE)
        damping(k, &flops, &near, &div);
    *core = (C_NEAR * (near + flops) + C_FAR * far + C_WAVE * wave + div) / lanes;
    *fp = flops / lanes;
}

/* The soft maximum of the five terms (SOFT_K), the largest naming t->bound. */
static double combine(fdt_model_terms *t)
{
    const double x[5] = {t->t_dram_ms, t->t_llc_ms, t->t_l2_ms, t->t_core_ms, t->t_fp_ms};
    static const fdt_bound names[5] = {FDT_BOUND_DRAM, FDT_BOUND_LLC, FDT_BOUND_L2,
                                       FDT_BOUND_CORE, FDT_BOUND_FP};
    double sum = 0;
    int top = 0;
    for (int i = 0; i < 5; i++) {
        sum += pow(x[i], SOFT_K);
        if (x[i] > x[top])
            top = i;
    }
    t->bound = names[top];
    return pow(sum, 1 / SOFT_K);
}

double fdt_cpu_model_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                          fdt_model_terms *terms)
{
    cpu_facts f;
    cpu_cfg k;
    facts_of(dev, &f);
    cfg_of(c, &f, &k);
    fdt_model_terms t;
    memset(&t, 0, sizeof t);
    t.cpu = 1;
    double dram, llc, l2, core, fp;
    traffic(p, &k, &f, &t, &dram, &llc, &l2);
    instructions(p, &k, &f, &core, &fp);
    double npts = (double)p->nx * (double)p->ny * (double)p->nz;
    double bw = copy_bw(&f, &k) * (k.blocked && !k.pfd ? PF_LOSS : 1);
    double per_core = npts / k.threads; /* points a thread computes */
    t.dram_bytes = npts * dram;
    t.llc_bytes = npts * llc;
    t.l2_bytes = npts * l2;
    t.t_dram_ms = t.dram_bytes / bw * 1e3;
    t.t_llc_ms = per_core * llc / (LLC_BW_CLK * f.clock_hz) * 1e3;
    t.t_l2_ms = per_core * l2 / (L2_BW_CLK * f.clock_hz) * 1e3;
    t.t_core_ms = per_core * core / f.clock_hz * 1e3;
    t.t_fp_ms = per_core * fp / (FP_CLK * f.clock_hz) * 1e3;
    t.onchip.fp = fp;
    t.onchip.inst = core;
    t.threads = k.threads;
    t.copy_gbs = f.copy_gbs;
    t.copy_measured = f.copy_measured;
    t.clock_ghz = f.clock_hz / 1e9;
    t.latency_eff = t.chip_eff = t.tail_eff = t.occupancy = 1;
    t.time_ms = combine(&t) + FORK_MS;
    if (terms)
        *terms = t;
    return t.time_ms;
}
