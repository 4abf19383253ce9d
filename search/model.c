/* fdtune's analytic model of a stencil kernel's time, used to rank a space before anything
 * is measured. It is a two-level roofline: bytes from DRAM (the effective bytes, plus the z
 * neighbours re-read when the planes they live in have left the last-level cache, the
 * seeds' plane-vs-cache effect, which split and grid order change) and bytes through L2
 * (the footprint of each block with its halo, the loads a thread issues for its neighbours
 * when they come from registers rather than a shared tile, window and tile overlaps,
 * partial cache lines of unaligned rows), each at the device's bandwidth; then divided by
 * how well the resident waves (occupancy by the architecture's rules, runtime/fdt_arch.h)
 * keep enough bytes in flight (a ring of shared tiles, lds=2, keeps pf planes in flight
 * without registers where its copies are asynchronous), and by the tail of the last wave of
 * blocks; beside them the on-chip times (search/onchip.c's counts per point: L1 wavefronts,
 * shared-memory bytes, issued and FP instructions, each at the CU's rate, over the share of
 * those rates the resident waves reach), the slower side binding, and the bound named after
 * the largest term (or latency); plus, where the architecture counts one (AMD), a cost per
 * wave launched. The constants that differ between architectures (line size, L1 and L2
 * bandwidth, achievable DRAM fraction, clock, cache behaviour, on-chip rates) come from the architecture table, which says which
 * are published and which fitted: NVIDIA's are the H100 fit, AMD's the MI250X's (the seeds'
 * published numbers, tests/test_arch.c). It only has to order configs well enough for the
 * neighbourhood search to take over; measured times decide. */
#include "fdt_search.h"
#include "fdt_arch.h"
#include "fdt_target.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LAUNCH_MS 0.004    /* launch overhead, per launch of a split */
#define SOFTMAX_K 4.0      /* how sharply the slowest of DRAM and L2, or of the on-chip
                              units, dominates its side */
#define SOFTMAX_SIDES 8.0  /* and the slower side the other (fitted with occ_half: the H100
                              and H200 rows of tests/data/nvidia-measured.txt, the MI250X's
                              of mi250x-seeds.txt) */
#define LATENCY_BOUND 0.75 /* the efficiency below which the bound is called latency */

static int imin(int a, int b) { return a < b ? a : b; }
static int roundup(int v, int m) { return (v + m - 1) / m * m; }

/* The stream's registers (lds=3): its queue of 2 RZ + 1 sums, the centre values and the y
 * sums of TILE x VEC outputs, one row's x halos (HX a side), 30 for addressing; doubles take
 * two each. No window of input planes: its pf planes wait in shared memory. That is what it
 * needs (sm_90 compiles lap R=8 f32 2x2 into 126 under lb=512, R=4 4x2 into 128); where the
 * launch bounds leave more, the compiler spends about 15% more (142 and 150 under lb=256,
 * f64 R=8 2x2 242), which residency() caps at what the bounds allow: what it needs in *need. */
static int stream_regs(const fdt_problem *p, const fdt_config *c, const int r[3], int *need)
{
    int values = c->vec * c->tile;
    int per = p->prec == FDT_F64 ? 2 : 1;
    int HX = r[0] ? roundup(r[0], c->vec) : 0;
    *need = 30 + per * (values * (2 * r[2] + 1 + 1 + (r[1] > 0)) + 2 * HX);
    if (fdt_op_is_step(p->op)) /* p_prev, c2 and the centre come from shared memory at the
                               * store, one row at a time (wave R=8 2x2: 126 under lb=512) */
        *need += per * values;
    return imin(255, *need + *need * 15 / 100);
}

/* Registers when the compiler has not said: the window (2R+1 planes plus prefetched ones) of
 * vec*tile values, the neighbour temporaries, addressing; doubles take two each. *need: the
 * fewest it compiles into without spilling (the same but for the stream). */
static int estimate_regs(const fdt_problem *p, const fdt_config *c, int *need)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    int values = c->vec * c->tile;
    if (c->lds == 3)
        return stream_regs(p, c, r, need);
    /* the ring's prefetched planes wait in shared memory, not in registers */
    int planes = c->nw > 0 ? 2 * r[2] + 1 + (c->lds == 2 ? 0 : c->pf) : 1;
    int temps = c->lds ? 2 : 2 + (r[0] > 0) + (r[1] > 0);
    int per = p->prec == FDT_F64 ? 2 : 1;
    int regs = 24 + per * values * (planes + temps);
    if (c->lds == 2) { /* the ring also holds the rows and x halos it reads from shared
                        * memory for one plane (an H100 gave 164 for R=4 vec=2 tile=4) */
        int HX = r[0] ? roundup(r[0], c->vec) : 0;
        regs += per * (c->vec * 2 * r[1] + 2 * c->tile * HX);
    }
    if (fdt_op_is_step(p->op))
        regs += per * values * 2;
    *need = imin(255, regs);
    return *need;
}

/* What one config moves per output point, before any device is involved. */
typedef struct footprint {
    int r[3];         /* radius along x, y, z */
    double es;        /* bytes per element */
    int nin;          /* input arrays */
    int W, HX;        /* outputs of one block row along x; x halo in whole vectors */
    double rows;      /* outputs of one block along y */
    int aligned;      /* rows start on a sector boundary */
    double xfoot, yfoot, zload, foot; /* L2 footprint of a block with its halo, per output */
    double xinst, inst; /* a thread's own loads per output (only L1 in front of L2) */
} footprint;

static void footprint_of(const fdt_arch *a, const fdt_problem *p, const fdt_config *c,
                         footprint *f)
{
    double line = a->sector; /* bytes of one L1 line (NVIDIA: the 32-byte sector) */
    fdt_op_radii(p->op, p->R, f->r);
    f->es = (double)fdt_prec_size(p->prec);
    f->nin = fdt_op_ninputs(p->op);
    f->W = c->bx * c->vec;
    f->HX = f->r[0] ? roundup(f->r[0], c->vec) : 0;
    f->rows = (double)c->by * c->tile;
    int nw = c->nw;
    /* footprint of a block with its halo: what a shared tile or a perfect L1 loads */
    f->xfoot = (f->W * f->es + 2 * ceil(f->HX * f->es / line) * line) / (f->W * f->es);
    f->aligned = c->align > 1 && (int)(c->align * f->es) % (int)line == 0;
    if (!f->aligned)
        f->xfoot += line / (f->W * f->es); /* rows straddle one more line */
    f->yfoot = (f->rows + 2 * f->r[1]) / f->rows;
    f->zload = f->r[2] == 0 ? 0 : nw > 0 ? 2.0 * f->r[2] / nw : 2.0 * f->r[2] / c->bz;
    f->foot = f->xfoot * f->yfoot + f->zload;
    /* what a thread's own loads cost when only L1 stands between them and L2 */
    f->xinst = (double)(c->vec + 2 * f->HX) / c->vec;
    f->inst = (c->tile * f->xinst + 2 * f->r[1]) / c->tile + (nw > 0 ? f->zload : 2.0 * f->r[2]);
}

/* Share of the z-neighbour re-reads the last-level cache serves. span: bytes of the 2R+1
 * input planes a z stencil keeps live; llc: the near part of the cache; inflight: the planes
 * the resident blocks of the whole device cover at once. The H100 rule: 0.95 while the
 * planes fit, then llc/span/2. The AMD rule (llc_knee > 0), fitted to the seeds' MI250X
 * measurements: a smooth fall-off in what streams through the cache while a plane is live
 * (the input planes and as many of every other stream: the point-wise inputs of wave, and
 * the output unless its stores are nontemporal), but never below the share of a plane's
 * 2R + 1 readers that are resident together with its first (the seeds' Laplacian at 512^3:
 * tiles of 8 rows kept 99% of the fetches useful where one row kept 80%). */
static double llc_hit(const fdt_arch *a, const fdt_config *c, const footprint *f, double span,
                      double llc, double inflight)
{
    if (a->llc_knee <= 0)
        return span <= llc ? 0.95 : llc / span * 0.5;
    double streams = f->nin + (c->nt ? 0 : 1);
    double hit = 0.95 / (1 + pow(span * streams / llc / a->llc_knee, a->llc_steep));
    /* of a plane's 2R + 1 readers, those within one in-flight window of the first find it */
    double together = fmin(0.99, fmax(0, inflight - 1) / (2.0 * f->r[2]));
    return fmax(hit, together);
}

/* The DRAM bandwidth the model may count on (bytes/s): the architecture's achievable share
 * of the peak, never above the catalogue's achievable figure for this model. */
static double dram_bw(const fdt_arch *a, const fdt_device *dev, double peak)
{
    double bw = peak * a->dram_eff;
    if (dev->achievable_bw_gbs > 0 && dev->achievable_bw_gbs * 1e9 < bw)
        bw = dev->achievable_bw_gbs * 1e9;
    return bw;
}

/* DRAM and L2 traffic and their times (t, whose residency is known); returns the peak DRAM
 * bandwidth in bytes/s. */
static double traffic(const fdt_arch *a, const fdt_problem *p, const fdt_config *c,
                      const fdt_device *dev, const footprint *f, fdt_model_terms *t, int cus)
{
    const int *r = f->r;
    double es = f->es;
    double nx = (double)p->nx, ny = (double)p->ny, nz = (double)p->nz;
    double npts = nx * ny * nz;
    double point_bytes = npts * es; /* one array's interior */
    double l2_in = c->lds ? f->foot : a->l1_reuse * f->foot + (1 - a->l1_reuse) * f->inst;

    /* --- DRAM: z neighbours come back from DRAM when their planes left the cache --- */
    double llc = (double)(dev->llc_bytes > 0 ? dev->llc_bytes : dev->l2_bytes);
    llc *= a->llc_near; /* NVIDIA: the far half of a partitioned L2 is no near cache */
    const char *order = fdt_orders[c->order];
    int z_first = order[0] == 'z';
    int x_first = order[0] == 'x';
    /* bytes that stream between a plane's first use and its last as a z neighbour */
    double plane = (nx + 2 * r[0]) * (ny + 2 * r[1]) * es / c->split;
    if (!x_first)
        plane = (f->W + 2 * r[0]) * (ny / c->split + 2 * r[1]) * es; /* a column of blocks */
    double span = (2 * r[2] + 1) * plane;
    /* planes (of the size above) the resident blocks of the whole device cover at once */
    double inflight = (double)t->threads_per_cu * cus * c->tile * c->vec * es / plane;
    t->llc_hit = r[2] == 0 ? 1 : z_first ? 0.9 : llc_hit(a, c, f, span, llc, inflight);
    /* a block re-reads 2R planes per nw (window) or bz (no window) planes it writes: the
     * same z loads that reach L2 (zload), so DRAM never carries more than L2 */
    double zextra = f->zload;
    /* AMD: a re-read row that straddles one more line than it needs fetches that line again
     * (the seeds' d2z baseline at R=4 ran 1.37x faster aligned, for 4% fewer HBM bytes) */
    if (a->llc_knee > 0 && !f->aligned)
        zextra *= 1 + a->sector / (f->W * es);
    double dram_in = 1 + zextra * (1 - t->llc_hit);
    /* x and y halos of the whole box are read once (the effective bytes count them) */
    double halo = fdt_effective_bytes(p) / es - npts * (f->nin + 1);
    t->dram_bytes = point_bytes * (f->nin + dram_in) + halo * es;
    t->l2_bytes = point_bytes * (f->nin + l2_in) + halo * es;
    if (c->nt && !x_first)
        t->dram_bytes *= 0.99; /* streaming stores leave the cache to the inputs */

    double bw = dev->peak_bw_gbs > 0 ? dev->peak_bw_gbs * 1e9 : 1e12;
    t->t_dram_ms = t->dram_bytes / dram_bw(a, dev, bw) * 1e3;
    t->t_l2_ms = t->l2_bytes / (bw * a->l2_over_dram) * 1e3;
    return bw;
}

/* Resident blocks per CU (0 when none fits), by the architecture's occupancy rules, with
 * registers and occupancy in t; *spills is set when launch bounds (AMD: HIP's default of
 * 1024 threads without them) force the estimated registers to spill. */
static int residency(const fdt_arch *a, const fdt_problem *p, const fdt_config *c,
                     const fdt_rt_resources *res, fdt_model_terms *t, int *spills)
{
    int threads = c->bx * c->by * c->bz;
    t->regs_estimated = !(res && res->registers > 0);
    int need = 0;
    t->regs = t->regs_estimated ? estimate_regs(p, c, &need) : res->registers;
    *spills = 0;
    if (t->regs_estimated) { /* __launch_bounds__: the compiler fits lb threads */
        int cap = fdt_arch_reg_cap(a, c->lb);
        *spills = need > cap; /* and spills what does not fit: fdtune prunes such kernels */
        t->regs = imin(t->regs, cap);
    }
    fdt_arch_use u = {threads, t->regs, res ? res->agprs : 0, res ? res->sgprs : 0, 0};
    fdt_geometry g;
    fdt_err ge;
    if (fdt_gen_geometry(p, c, &g, &ge) == 0)
        u.lds = (long)g.shared_bytes;
    if (res && res->shared_bytes > 0)
        u.lds = res->shared_bytes;
    fdt_occupancy o;
    fdt_arch_occupancy(a, &u, &o);
    t->threads_per_cu = o.threads;
    t->occupancy = o.fraction;
    return o.groups;
}

/* How well the bytes in flight cover the DRAM latency (t->latency_eff). */
static void latency(const fdt_arch *a, const fdt_config *c, const footprint *f, double bw,
                    int cus, fdt_model_terms *t)
{
    /* bytes each thread has in flight: its loads for one step of the window (pf planes ahead)
     * or all its loads when there is no window; shared tiles wait for a barrier per plane */
    double es = f->es;
    /* the ring's copies (ring and stream, lds >= 2) fly pf planes ahead only where they are
     * asynchronous; elsewhere they are loads that return before the next plane's copies are
     * issued */
    int ring = c->lds >= 2;
    int pf = ring && !a->async_copy ? 1 : c->pf;
    double inflight_thread = c->vec * es * (c->nw > 0 ? pf * (1 + (c->lds ? 0 : 0.5 * f->xinst))
                                                       : f->inst * c->tile);
    if (c->lds == 1)
        inflight_thread *= 0.6;
    else if (ring) { /* the thread's share of the tiles in flight (halo included): the next
                      * plane's copy lands while this one is computed, so pf = 1 keeps half a
                      * plane in flight on average; the stream with slot barriers copies a
                      * plane a step later (pf - 1 steps ahead) */
        double lead = pf - (fdt_arch_slot_barriers(a, c) ? 1.5 : 0.5);
        inflight_thread = fmax(lead, 0.25) * f->xfoot * f->yfoot * c->vec * c->tile * es;
    }
    double need = bw / cus * a->latency_s;
    double have = t->threads_per_cu * inflight_thread * f->nin;
    t->latency_eff = have <= 0 ? 0.01 : fmin(1.0, 0.35 + 0.65 * have / need);
    /* A ring block waits at a barrier each plane for the slowest copy of the block, so
     * coverage keeps paying well past the mean latency: fitted to an H100 (lap R=4 1024^3,
     * 256x8 outputs per block, where have/need is about pf - 0.5): pf 2, 4, 5, 6 ran at
     * 0.85, 0.97, 0.985, 1.0 of the best. */
    if (ring && have > 0)
        t->latency_eff = 1 - 0.5 * exp(-0.8 * have / need);
}

/* The tail of the last wave of blocks (t->tail_eff), from the blocks the generator launches,
 * and the time the architecture charges per wave launched (t->t_wave_ms). */
static void tail(const fdt_arch *a, const fdt_problem *p, const fdt_config *c, int blocks,
                 int cus, fdt_model_terms *t)
{
    int64_t nb[3];
    fdt_gen_blocks(p, c, nb);
    double nblocks = (double)nb[0] * (double)(nb[1] * c->split) * (double)nb[2];
    double slots = (double)blocks * cus;
    if (slots > 0) {
        double waves = ceil(nblocks / slots);
        t->tail_eff = nblocks / (waves * slots);
        if (waves > 4)
            t->tail_eff = 1 - (1 - t->tail_eff) / waves * 4; /* matters less with many waves */
    }
    double waves_per_block = ceil((double)c->bx * c->by * c->bz / a->wave);
    t->t_wave_ms = nblocks * waves_per_block * a->wave_clk / (cus * a->clock_hz) * 1e3;
}

/* The steps of the z halo (t->t_halo_ms): a block that marches a z column (nw >= 1) fills 2 R_z
 * planes before its first output, 2 R_z steps of its march that emit nothing and wait for
 * DRAM with no output to overlap them, so they cost 2 R_z / nw of an input plane's DRAM
 * time, at the architecture's weight (fdt_arch.halo_steps: 1 on NVIDIA, 0 on AMD where
 * it is not measured), added to the time, whatever the family and however many blocks are
 * resident (measured on an H100: lap R=7 f32 one block per SM, nw 128 -> 512 ran 4.5%
 * faster where the traffic alone priced 2.2%; the tuning logs of lap and wave R=4 show
 * windows and tiles of nw 16-64 20-48% slower than predicted without it; bench/notes/stream_notes
 * item 15). Blocks without a z column (nw = 0) and operators without z neighbours cost
 * nothing here. */
static void halo_steps(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                       const fdt_arch *a, const footprint *f, double bw, fdt_model_terms *t)
{
    t->t_halo_ms = 0;
    if (c->nw < 1 || f->r[2] == 0 || a->halo_steps <= 0)
        return;
    double planes = fmin((double)c->nw, (double)p->nz);
    double npts = (double)p->nx * (double)p->ny * (double)p->nz;
    double plane_ms = npts * f->es / dram_bw(a, dev, bw) * 1e3; /* one input array's */
    t->t_halo_ms = a->halo_steps * 2.0 * f->r[2] / planes * plane_ms;
}

/* The on-chip times (t_l1_ms, t_shared_ms, t_issue_ms, t_fp_ms) of npts outputs at the CU's
 * rates, and how much of those rates the resident waves reach (chip_eff). */
static void onchip(const fdt_arch *a, const fdt_problem *p, const fdt_config *c,
                   const fdt_device *dev, int cus, fdt_model_terms *t)
{
    fdt_model_onchip(p, c, dev, &t->onchip);
    const fdt_onchip *o = &t->onchip;
    double npts = (double)p->nx * (double)p->ny * (double)p->nz;
    double per_ms = npts / (cus * a->clock_hz) * 1e3; /* ms per unit of clocks per point */
    t->t_l1_ms = per_ms * o->l1_wavefronts;
    t->t_copy_ms = per_ms * o->copy_clk;
    t->t_shared_ms = per_ms * o->shared_bytes / a->lds_bytes_clk;
    t->t_issue_ms = per_ms * o->inst / a->issue_clk;
    t->t_fp_ms = per_ms * o->fp / (p->prec == FDT_F64 ? a->fp64_clk : a->fp32_clk);
    double w = (double)t->threads_per_cu / a->wave / a->simds; /* waves per SIMD */
    t->chip_eff = w / (w + a->occ_half);
}

/* The soft maximum of x[0..n) (the k-th root of the sum of k-th powers); *top: the largest. */
static double softmax(const double *x, int n, double k, int *top)
{
    double sum = 0;
    *top = 0;
    for (int i = 0; i < n; i++) {
        sum += pow(x[i], k);
        if (x[i] > x[*top])
            *top = i;
    }
    return pow(sum, 1 / k);
}

/* The prediction's soft maximum of the terms and which binds: the memory side (DRAM over
 * latency_eff, L2) and the on-chip side (L1, shared, issue, FP over chip_eff), each a soft
 * maximum of its own terms, and with bulk=1 the copy engine's time (asynchronous to the
 * threads, it fills shared memory whatever their occupancy: no chip_eff), then the sides
 * more sharply (SOFTMAX_SIDES). The bound is the largest term of the largest side (the copy
 * engine: l1), or latency where that side's efficiency is below LATENCY_BOUND (the unit
 * waits more than a third of the time). */
static double combine(fdt_model_terms *t)
{
    double lat = t->latency_eff, ce = t->chip_eff;
    const double mem[2] = {t->t_dram_ms / lat, t->t_l2_ms};
    const double chip[4] = {t->t_l1_ms, t->t_shared_ms, t->t_issue_ms, t->t_fp_ms};
    int mtop, ctop, top;
    double sides[3] = {softmax(mem, 2, SOFTMAX_K, &mtop), softmax(chip, 4, SOFTMAX_K, &ctop) / ce,
                       t->t_copy_ms};
    double base = softmax(sides, t->t_copy_ms > 0 ? 3 : 2, SOFTMAX_SIDES, &top);
    double eff = top == 0 ? (mtop == 0 ? lat : 1) : top == 1 ? ce : 1;
    t->bound = eff < LATENCY_BOUND ? FDT_BOUND_LATENCY
               : top == 0          ? (fdt_bound)(FDT_BOUND_DRAM + mtop)
               : top == 1          ? (fdt_bound)(FDT_BOUND_L1 + ctop)
                                   : FDT_BOUND_L1; /* the copy engine fills shared memory */
    return base;
}

int fdt_model_cpu_form(const fdt_device *dev)
{
    fdt_target t;
    fdt_err e;
    return fdt_target_resolve(dev, &t, &e) == 0 && t.gen.dialect == FDT_DIALECT_C;
}

/* One kernel over the whole of p's grid (the GPUs' form). */
static double kernel_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                          const fdt_rt_resources *res, fdt_model_terms *terms)
{
    const fdt_arch *a = fdt_arch_of(dev);
    fdt_model_terms t = {0};
    footprint f;
    footprint_of(a, p, c, &f);
    int spills;
    int blocks = residency(a, p, c, res, &t, &spills);
    int cus = dev->compute_units > 0 ? dev->compute_units : 1;
    double bw = traffic(a, p, c, dev, &f, &t, cus);
    latency(a, c, &f, bw, cus, &t);
    tail(a, p, c, blocks, cus, &t);
    onchip(a, p, c, dev, cus, &t);
    halo_steps(p, c, dev, a, &f, bw, &t);
    double base = combine(&t);
    t.time_ms = blocks == 0 ? 1e9 : base / fmax(t.tail_eff, 0.05) + t.t_wave_ms +
                                       t.t_halo_ms + LAUNCH_MS * c->split;
    if (a->code_limit > 0) {
        /* Code over the architecture's measured limit (fdt_arch.code_limit), or a ring's or
         * stream's estimate over it by the estimate's margin (fdt_onchip.code_margin, above
         * the fit's largest error), ranks last, as a spilling config does: the evaluation
         * would prune it after compiling (fdt_target_prune). */
        int compiled = res && res->code_bytes > 0;
        t.code_bytes = compiled ? res->code_bytes : t.onchip.code_bytes;
        t.code_over = t.code_bytes > (compiled ? 1 : t.onchip.code_margin) * a->code_limit;
    }
    if (spills || t.code_over)
        t.time_ms *= 10; /* last in the ranking, but still ordered among themselves */
    t.boxes = 1;
    if (terms)
        *terms = t;
    return t.time_ms;
}

/* One launch of the form dev takes over all of p's grid. */
static double form_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                        int cpu, const fdt_rt_resources *res, fdt_model_terms *t)
{
    if (cpu) {
        double ms = fdt_cpu_model_time(p, c, dev, t);
        t->boxes = 1;
        return ms;
    }
    return kernel_time(p, c, dev, res, t);
}

/* The terms that add up over a deployment's launches: sum += w t (w: the share of a box's
 * points its launch computes; the hole's blocks are launched and return at once, so the cost
 * per wave launched, t_wave_ms, counts whole). */
static void add_terms(fdt_model_terms *sum, const fdt_model_terms *t, double w)
{
    sum->dram_bytes += w * t->dram_bytes;
    sum->l2_bytes += w * t->l2_bytes;
    sum->llc_bytes += w * t->llc_bytes;
    sum->t_dram_ms += w * t->t_dram_ms;
    sum->t_l2_ms += w * t->t_l2_ms;
    sum->t_l1_ms += w * t->t_l1_ms;
    sum->t_shared_ms += w * t->t_shared_ms;
    sum->t_issue_ms += w * t->t_issue_ms;
    sum->t_fp_ms += w * t->t_fp_ms;
    sum->t_copy_ms += w * t->t_copy_ms;
    sum->t_llc_ms += w * t->t_llc_ms;
    sum->t_core_ms += w * t->t_core_ms;
    sum->t_halo_ms += w * t->t_halo_ms;
    sum->t_wave_ms += t->t_wave_ms;
    sum->time_ms += w * (t->time_ms - t->t_wave_ms) + t->t_wave_ms;
}

/* dst's additive terms (those add_terms sums) replaced by src's. */
static void take_sums(fdt_model_terms *dst, const fdt_model_terms *src)
{
    dst->dram_bytes = src->dram_bytes;
    dst->l2_bytes = src->l2_bytes;
    dst->llc_bytes = src->llc_bytes;
    dst->t_dram_ms = src->t_dram_ms;
    dst->t_l2_ms = src->t_l2_ms;
    dst->t_l1_ms = src->t_l1_ms;
    dst->t_shared_ms = src->t_shared_ms;
    dst->t_issue_ms = src->t_issue_ms;
    dst->t_fp_ms = src->t_fp_ms;
    dst->t_copy_ms = src->t_copy_ms;
    dst->t_llc_ms = src->t_llc_ms;
    dst->t_core_ms = src->t_core_ms;
    dst->t_halo_ms = src->t_halo_ms;
    dst->t_wave_ms = src->t_wave_ms;
    dst->time_ms = src->time_ms;
}

/* dwave's deployment (fdt_config.deploy): each of its launches (fdt_gen_deploy's boxes) is
 * predicted as a kernel of its own over the box's extents, the damped ones as dwave, the
 * interior kernel's as wave, a box's hole taking away its share of the work (not of the
 * blocks launched); their times add up, every launch with its cost (the GPUs' LAUNCH_MS, or
 * the CPU's parallel region that its form counts). The terms are the largest launch's, with
 * the additive ones summed and boxes the launches. A config that cannot run some box ranks
 * last. */
static double deployment_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                              int cpu, const fdt_rt_resources *res, fdt_model_terms *terms)
{
    fdt_gen_target gt = {cpu ? FDT_DIALECT_C : FDT_DIALECT_HIP};
    fdt_deploy d;
    fdt_err e;
    fdt_model_terms sum = {0}, t, top = {0};
    if (fdt_gen_deploy(&gt, p, c, &d, &e)) {
        form_time(p, c, dev, cpu, res, &top);
        top.time_ms = 1e9;
        if (terms)
            *terms = top;
        return top.time_ms;
    }
    double most = -1;
    for (int b = 0; b < d.nbox; b++) {
        const fdtuned_box *x = &d.box[b];
        fdt_problem q = *p;
        q.nx = x->n[0];
        q.ny = x->n[1];
        q.nz = x->n[2];
        if (!x->damped) {
            q.op = FDT_OP_WAVE;
            q.absorb_w = 0;
            q.absorb_s = 0;
        }
        double pts = (double)q.nx * (double)q.ny * (double)q.nz;
        double hole = (double)(x->hole[1] - x->hole[0]) * (double)(x->hole[3] - x->hole[2]) *
                      (double)(x->hole[5] - x->hole[4]);
        form_time(&q, c, dev, cpu, res, &t);
        add_terms(&sum, &t, 1 - hole / pts);
        if (!cpu && b > 0)
            sum.time_ms += LAUNCH_MS;
        if (pts - hole > most) {
            most = pts - hole;
            top = t;
        }
    }
    fdt_model_terms out = top; /* the largest launch's ratios, the deployment's sums */
    take_sums(&out, &sum);
    out.boxes = d.nbox;
    if (terms)
        *terms = out;
    return out.time_ms;
}

double fdt_model_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                      const fdt_rt_resources *res, fdt_model_terms *terms)
{
    int cpu = fdt_model_cpu_form(dev);
    if (p->op == FDT_OP_DWAVE && p->absorb_w > 0)
        return deployment_time(p, c, dev, cpu, res, terms);
    fdt_model_terms t;
    double ms = form_time(p, c, dev, cpu, res, &t);
    if (terms)
        *terms = t;
    return ms;
}

const char *fdt_bound_name(fdt_bound b)
{
    static const char *names[FDT_BOUND_COUNT] = {"dram", "l2",      "l1",  "shared", "issue",
                                                 "fp",   "latency", "llc", "core"};
    return b >= 0 && b < FDT_BOUND_COUNT ? names[b] : "?";
}

/* The CPU form's line (fdt_model_describe). */
static void describe_cpu(const fdt_model_terms *t, fdt_sb *out)
{
    fdt_sb_printf(out, "dram %.3f llc %.3f l2 %.3f core %.3f fp %.3f ms, llc hit %.2f, %d "
                  "threads, copy %.0f GB/s (%s), clock %.1f GHz (assumed) -> %.4f ms, bound %s",
                  t->t_dram_ms, t->t_llc_ms, t->t_l2_ms, t->t_core_ms, t->t_fp_ms, t->llc_hit,
                  t->threads, t->copy_gbs, t->copy_measured ? "the device's" : "estimated per core",
                  t->clock_ghz, t->time_ms, fdt_bound_name(t->bound));
    if (t->boxes > 1)
        fdt_sb_printf(out, ", %d launches summed", t->boxes);
}

void fdt_model_describe(const fdt_model_terms *t, fdt_sb *out)
{
    if (t->cpu) {
        describe_cpu(t, out);
        return;
    }
    fdt_sb_printf(out, "dram %.3f l2 %.3f l1 %.3f shared %.3f issue %.3f fp %.3f ms, llc hit "
                  "%.2f, regs %s%d, occ %.2f, lat %.2f, chip %.2f, tail %.2f",
                  t->t_dram_ms, t->t_l2_ms, t->t_l1_ms, t->t_shared_ms, t->t_issue_ms,
                  t->t_fp_ms, t->llc_hit, t->regs_estimated ? "~" : "", t->regs, t->occupancy,
                  t->latency_eff, t->chip_eff, t->tail_eff);
    if (t->t_copy_ms > 0)
        fdt_sb_printf(out, ", copy engine %.3f ms", t->t_copy_ms);
    if (t->t_wave_ms > 0)
        fdt_sb_printf(out, ", waves %.3f ms", t->t_wave_ms);
    if (t->t_halo_ms > 0)
        fdt_sb_printf(out, ", z halo %.3f ms", t->t_halo_ms);
    if (t->code_over)
        fdt_sb_printf(out, ", code ~%.0f KB over the instruction cache", t->code_bytes / 1000);
    fdt_sb_printf(out, " -> %.4f ms, bound %s", t->time_ms, fdt_bound_name(t->bound));
    if (t->boxes > 1)
        fdt_sb_printf(out, ", %d launches summed", t->boxes);
}
