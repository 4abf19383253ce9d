/* fdtune's analytic model of a stencil kernel's time, used to rank a space before anything
 * is measured. It is a two-level roofline: bytes from DRAM (the effective bytes, plus the z
 * neighbours re-read when the planes they live in have left the last-level cache, the
 * seeds' plane-vs-cache effect, which split and grid order change) and bytes through L2
 * (the footprint of each block with its halo, the loads a thread issues for its neighbours
 * when they come from registers rather than a shared tile, window and tile overlaps,
 * partial cache sectors of unaligned rows), each at the device's bandwidth; then divided by
 * how well the resident threads (registers, shared memory, block limits) keep enough bytes
 * in flight (a ring of shared tiles, lds=2, keeps pf planes in flight without registers),
 * and by the tail of the last wave of blocks. It only has to order configs well
 * enough for the neighbourhood search to take over; measured times decide. */
#include "fdt_search.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SECTOR 32.0        /* bytes: the unit of L2 and DRAM traffic */
#define L2_OVER_DRAM 2.5   /* L2 bandwidth relative to peak DRAM bandwidth */
#define DRAM_EFF 0.90      /* achievable fraction of the peak (a copy reaches about this) */
#define LATENCY_S 700e-9   /* DRAM latency the bytes in flight must cover */
#define L1_REUSE 0.7       /* share of repeated neighbour loads that L1 serves (no LDS tile) */
#define LAUNCH_MS 0.004    /* launch overhead, per launch of a split */
#define CU_THREADS 2048    /* resident threads per CU/SM on every GPU fdtune targets */
#define CU_REGS 65536      /* 32-bit registers per SM (NVIDIA) or per CU per lane set (AMD) */
#define CLOCK_HZ 1.7e9     /* shader clock of the GPUs fdtune targets, near enough */
#define L1_WAVEFRONT 128.0 /* bytes the L1/LDS pipeline moves per clock per CU */
#define SOFTMAX_K 4.0      /* how sharply the slowest of DRAM, L2 and L1 dominates */

static int imax(int a, int b) { return a > b ? a : b; }
static int imin(int a, int b) { return a < b ? a : b; }
static int roundup(int v, int m) { return (v + m - 1) / m * m; }

/* L1 (or LDS) wavefronts one warp instruction costs: its bytes in 128-byte units, plus one
 * when it does not start on a 128-byte boundary (shifted neighbour loads, unaligned rows). */
static double wavefronts(double bytes, int aligned)
{
    return ceil(bytes / L1_WAVEFRONT) + (aligned ? 0 : 1);
}

/* Wavefronts per output point through the load/store pipeline: what a warp issues for one
 * plane step (its rows, their x and y neighbours, the incoming plane of the window, the
 * extra point-wise inputs of wave, the stores), over the outputs of that step. This is the
 * term that separates vector widths and alignments, which move the same DRAM bytes. */
static double l1_per_output(const fdt_problem *p, const fdt_config *c, const int r[3],
                            double es, int aligned, int HX)
{
    double vb = 32.0 * c->vec * es; /* bytes of one vector warp instruction */
    double wf = 0;
    int rows = c->tile;
    if (c->lds) {
        /* the block fills its tile once per plane (global, mostly aligned), then every
         * neighbour comes from LDS at full width */
        double fill = (double)(c->bx * c->vec + 2 * HX) * (c->by * rows + 2 * r[1]) * es;
        wf += wavefronts(fill, 1) / (c->bx * c->by / 32.0) * 1.25;
        wf += rows * (double)(c->vec + 2 * HX) / c->vec * wavefronts(vb, 1);
        wf += 2 * r[1] * wavefronts(vb, 1);
    } else {
        if (r[0] > 0)
            wf += rows * (double)(c->vec + 2 * HX) / c->vec * wavefronts(vb, 0);
        else
            wf += rows * wavefronts(vb, aligned);
        wf += 2 * r[1] * wavefronts(vb, aligned);
    }
    if (r[2] > 0)
        wf += c->nw > 0 ? wavefronts(vb, aligned) * (1 + 2.0 * r[2] / c->nw)
                        : rows * 2 * r[2] * wavefronts(vb, aligned);
    if (p->op == FDT_OP_WAVE)
        wf += rows * 2 * wavefronts(vb, aligned);
    wf += rows * wavefronts(vb, aligned); /* stores */
    return wf / (32.0 * rows * c->vec);
}

/* Registers when the compiler has not said: the window (2R+1 planes plus prefetched ones) of
 * vec*tile values, the neighbour temporaries, addressing; doubles take two each. */
static int estimate_regs(const fdt_problem *p, const fdt_config *c)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    int values = c->vec * c->tile;
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
    if (p->op == FDT_OP_WAVE)
        regs += per * values * 2;
    return imin(255, regs);
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

static void footprint_of(const fdt_problem *p, const fdt_config *c, footprint *f)
{
    fdt_op_radii(p->op, p->R, f->r);
    f->es = (double)fdt_prec_size(p->prec);
    f->nin = fdt_op_ninputs(p->op);
    f->W = c->bx * c->vec;
    f->HX = f->r[0] ? roundup(f->r[0], c->vec) : 0;
    f->rows = (double)c->by * c->tile;
    int nw = c->nw;
    /* footprint of a block with its halo: what a shared tile or a perfect L1 loads */
    f->xfoot = (f->W * f->es + 2 * ceil(f->HX * f->es / SECTOR) * SECTOR) / (f->W * f->es);
    f->aligned = c->align > 1 && (int)(c->align * f->es) % (int)SECTOR == 0;
    if (!f->aligned)
        f->xfoot += SECTOR / (f->W * f->es); /* rows straddle one more sector */
    f->yfoot = (f->rows + 2 * f->r[1]) / f->rows;
    f->zload = f->r[2] == 0 ? 0 : nw > 0 ? 2.0 * f->r[2] / nw : 2.0 * f->r[2] / c->bz;
    f->foot = f->xfoot * f->yfoot + f->zload;
    /* what a thread's own loads cost when only L1 stands between them and L2 */
    f->xinst = (double)(c->vec + 2 * f->HX) / c->vec;
    f->inst = (c->tile * f->xinst + 2 * f->r[1]) / c->tile + (nw > 0 ? f->zload : 2.0 * f->r[2]);
}

/* DRAM and L2 traffic and their times (t); returns the DRAM bandwidth in bytes/s. */
static double traffic(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                      const footprint *f, fdt_model_terms *t)
{
    const int *r = f->r;
    double es = f->es;
    double nx = (double)p->nx, ny = (double)p->ny, nz = (double)p->nz;
    double npts = nx * ny * nz;
    double point_bytes = npts * es; /* one array's interior */
    double l2_in = c->lds ? f->foot : L1_REUSE * f->foot + (1 - L1_REUSE) * f->inst;

    /* --- DRAM: z neighbours come back from DRAM when their planes left the cache --- */
    double llc = (double)(dev->llc_bytes > 0 ? dev->llc_bytes : dev->l2_bytes);
    if (!strcmp(dev->vendor, "NVIDIA"))
        llc *= 0.5; /* the far half of a partitioned L2 does not serve as a near cache */
    const char *order = fdt_orders[c->order];
    int z_first = order[0] == 'z';
    int x_first = order[0] == 'x';
    /* bytes that stream between a plane's first use and its last as a z neighbour */
    double plane = (nx + 2 * r[0]) * (ny + 2 * r[1]) * es / c->split;
    if (!x_first)
        plane = (f->W + 2 * r[0]) * (ny / c->split + 2 * r[1]) * es; /* a column of blocks */
    double span = (2 * r[2] + 1) * plane;
    t->llc_hit = r[2] == 0 ? 1 : z_first ? 0.9 : span <= llc ? 0.95 : llc / span * 0.5;
    /* a block re-reads 2R planes per nw (window) or bz (no window) planes it writes: the
     * same z loads that reach L2 (zload), so DRAM never carries more than L2 */
    double zextra = f->zload;
    double dram_in = 1 + zextra * (1 - t->llc_hit);
    /* x and y halos of the whole box are read once (the effective bytes count them) */
    double halo = fdt_effective_bytes(p) / es - npts * (f->nin + 1);
    t->dram_bytes = point_bytes * (f->nin + dram_in) + halo * es;
    t->l2_bytes = point_bytes * (f->nin + l2_in) + halo * es;
    if (c->nt && !x_first)
        t->dram_bytes *= 0.99; /* streaming stores leave the cache to the inputs */

    double bw = dev->peak_bw_gbs > 0 ? dev->peak_bw_gbs * 1e9 : 1e12;
    t->t_dram_ms = t->dram_bytes / (bw * DRAM_EFF) * 1e3;
    t->t_l2_ms = t->l2_bytes / (bw * L2_OVER_DRAM) * 1e3;
    return bw;
}

/* Resident blocks per CU (0 when none fits), with registers and occupancy in t; *spills is
 * set when launch bounds force the estimated registers to spill. */
static int residency(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                     const fdt_rt_resources *res, fdt_model_terms *t, int *spills)
{
    int threads = c->bx * c->by * c->bz;
    t->regs_estimated = !(res && res->registers > 0);
    t->regs = t->regs_estimated ? estimate_regs(p, c) : res->registers;
    int reg_file = !strcmp(dev->vendor, "AMD") ? CU_REGS * 2 : CU_REGS;
    *spills = 0;
    if (t->regs_estimated && c->lb > 0) { /* __launch_bounds__: the compiler fits lb threads */
        int cap = imax(8, reg_file / roundup(c->lb, 32) / 8 * 8);
        *spills = t->regs > cap; /* and spills what does not fit: fdtune prunes such kernels */
        t->regs = imin(t->regs, cap);
    }
    int blocks = CU_THREADS / threads;
    int regs_block = roundup(t->regs, 8) * roundup(threads, 32);
    blocks = imin(blocks, reg_file / imax(regs_block, 1));
    fdt_geometry g;
    fdt_err ge;
    int shared = 0;
    if (fdt_gen_geometry(p, c, &g, &ge) == 0)
        shared = (int)g.shared_bytes;
    if (res && res->shared_bytes > 0)
        shared = res->shared_bytes;
    if (shared > 0) {
        int per_cu = dev->shared_per_block_optin > dev->shared_per_block
                         ? dev->shared_per_block_optin + 1024
                         : dev->shared_per_block;
        blocks = imin(blocks, per_cu / shared);
    }
    blocks = imin(blocks, 32);
    if (blocks < 1)
        blocks = 0;
    t->threads_per_cu = blocks * threads;
    t->occupancy = (double)t->threads_per_cu / CU_THREADS;
    return blocks;
}

/* How well the bytes in flight cover the DRAM latency (t->latency_eff). */
static void latency(const fdt_config *c, const footprint *f, double bw, int cus,
                    fdt_model_terms *t)
{
    /* bytes each thread has in flight: its loads for one step of the window (pf planes ahead)
     * or all its loads when there is no window; shared tiles wait for a barrier per plane */
    double es = f->es;
    double inflight_thread = c->vec * es * (c->nw > 0 ? c->pf * (1 + (c->lds ? 0 : 0.5 * f->xinst))
                                                       : f->inst * c->tile);
    if (c->lds == 1)
        inflight_thread *= 0.6;
    else if (c->lds == 2) /* the thread's share of the tiles in flight (halo included): the
                           * next plane's copy lands while this one is computed, so pf = 1
                           * keeps half a plane in flight on average */
        inflight_thread = (c->pf - 0.5) * f->xfoot * f->yfoot * c->vec * c->tile * es;
    double need = bw / cus * LATENCY_S;
    double have = t->threads_per_cu * inflight_thread * f->nin;
    t->latency_eff = have <= 0 ? 0.01 : fmin(1.0, 0.35 + 0.65 * have / need);
    /* A ring block waits at a barrier each plane for the slowest copy of the block, so
     * coverage keeps paying well past the mean latency: fitted to an H100 (lap R=4 1024^3,
     * 256x8 outputs per block, where have/need is about pf - 0.5): pf 2, 4, 5, 6 ran at
     * 0.85, 0.97, 0.985, 1.0 of the best. */
    if (c->lds == 2 && have > 0)
        t->latency_eff = 1 - 0.5 * exp(-0.8 * have / need);
}

/* The tail of the last wave of blocks (t->tail_eff), from the blocks the generator launches. */
static void tail(const fdt_problem *p, const fdt_config *c, int blocks, int cus,
                 fdt_model_terms *t)
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
}

double fdt_model_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                      const fdt_rt_resources *res, fdt_model_terms *terms)
{
    fdt_model_terms t = {0};
    footprint f;
    footprint_of(p, c, &f);
    double bw = traffic(p, c, dev, &f, &t);
    int spills;
    int blocks = residency(p, c, dev, res, &t, &spills);
    int cus = dev->compute_units > 0 ? dev->compute_units : 1;
    latency(c, &f, bw, cus, &t);
    tail(p, c, blocks, cus, &t);
    double npts = (double)p->nx * (double)p->ny * (double)p->nz;
    t.t_l1_ms = npts * l1_per_output(p, c, f.r, f.es, f.aligned, f.HX) / (cus * CLOCK_HZ) * 1e3;
    double base = pow(pow(t.t_dram_ms, SOFTMAX_K) + pow(t.t_l2_ms, SOFTMAX_K) +
                          pow(t.t_l1_ms, SOFTMAX_K), 1 / SOFTMAX_K);
    t.time_ms = blocks == 0 ? 1e9 : base / (t.latency_eff * fmax(t.tail_eff, 0.05)) +
                                       LAUNCH_MS * c->split;
    if (spills)
        t.time_ms *= 10; /* last in the ranking, but still ordered among themselves */
    if (terms)
        *terms = t;
    return t.time_ms;
}

void fdt_model_describe(const fdt_model_terms *t, fdt_sb *out)
{
    fdt_sb_printf(out, "dram %.3f l2 %.3f l1 %.3f ms, llc hit %.2f, regs %s%d, occ %.2f, "
                  "lat %.2f, tail %.2f -> %.4f ms",
                  t->t_dram_ms, t->t_l2_ms, t->t_l1_ms, t->llc_hit,
                  t->regs_estimated ? "~" : "", t->regs, t->occupancy, t->latency_eff,
                  t->tail_eff, t->time_ms);
}
