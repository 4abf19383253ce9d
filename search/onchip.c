/* What one output point of a generated kernel costs on chip (fdt_model_onchip, fdt_search.h):
 * counted from the templates of each kernel family of generator/source.c's table (direct:
 * lds=0 without a window, window: lds=0 with one, tile: lds=1, ring: lds=2, stream: lds=3),
 * per thread and z plane over the thread's TILE x VEC outputs. The counts: shared-memory
 * bytes and instructions (loads, stores, the writes of the ring's copies), the L1 wavefronts
 * of the global loads and stores (the repeated neighbour loads L1 serves where no tile is
 * used, the fills and stores where one is), floating-point instructions (the stencil as the
 * generator emits it: one multiply and, per symmetric pair, an add and an FMA per axis; the
 * stream's streaming sums 6R + 4), and issued instructions (those, plus register moves of the
 * sliding window, and address, guard and loop overhead: an estimate, fitted to the stream's
 * SASS and ncu counts of bench/notes/stream_notes.txt). search/model.c turns them into times. */
#include "fdt_search.h"
#include "fdt_arch.h"

#include <math.h>

/* Instruction overhead per thread and march step of each family: the ring families' wait,
 * barrier, commit, slot rotation, plane pointers and guards (fitted: ncu's 2.69 warp
 * instructions per point of the stream's lap R=8 f32 2x2, bench/notes/stream_notes.txt, less what
 * is counted); the others are estimates (the tile's barrier and puts, the window's pointers
 * and guards, the direct kernel's index arithmetic once per thread), for bench/model_check.sh
 * to measure. Plus OVH_MEM per global or asynchronous memory instruction (its address). */
static const double ovh_step[] = {40, 20, 40, 76, 76}; /* direct window tile ring stream */
#define OVH_MEM 2.0
/* The stream's slot barriers (mbar=1, with asynchronous copies): two waits, each a loop, two
 * arrivals and the slots' parity and index arithmetic, in place of a wait, a barrier and a
 * commit. sm_90 code grows by 38-47 instructions per unrolled step with them (lap R=8 f64
 * 2x2 94.8 -> 105.1 KB, wave R=8 f64 2x2 133.2 -> 146.0 KB, wave R=8 f32 1x4 105.2 -> 117.6
 * KB of .text, 16 bytes an instruction, 17 steps); counted as issued once per step. */
#define OVH_MBAR 40.0
/* The stream's bulk form (bulk=1 with the slot barriers, templates/ring_bulk.hip): no thread
 * copies a chunk; thread 0 copies each plane with one tensor copy (OVH_TENSOR instructions of
 * its warp: the coordinates, the expect_tx arrival, the copy) and, for wave, thread q copies
 * queued row q with one cp.async.bulk, so a warp of 32 rows issues OVH_BULK_ROW instructions
 * (the row's addresses, the copy, the loop); every thread spends OVH_BULK_STEP per step on
 * the tests for thread 0 and the queue's loop in place of the copies' guards and arrival.
 * OVH_BULK_ROW from the sm_90 PTX of the row copies (lap R=8 f32 2x2, bx=32, by=16: 13
 * instructions fewer than bulk=0 in each of the 17 unrolled steps, where the copies counted
 * here make 11), OVH_TENSOR from the tensor copy's PTX. */
#define OVH_TENSOR 12.0
#define OVH_BULK_ROW 14.0
#define OVH_BULK_STEP 4.0
/* What the bulk copies cost the SM's copy engine (the tensor memory accelerator), in bytes
 * per clock, counted in clocks per output (fdt_onchip.copy_clk): a side of the prediction
 * of its own, since the engine fills shared memory while the threads compute (on the L1
 * term and over chip_eff, as it was, the model put the tensor form 13-65% behind its bulk=0
 * siblings where the H200 measured -19% to +10%: bench/bulk_h200/bulk_check.txt). Measured
 * on an H200 (bench/notes/tensor_map, 2026-11-29): the tensor copies of a plane's tile ran
 * lap R=4 f32 at 8.5 bytes a clock per SM (0.750 of copy), R=8 f32 at 9.3 (0.596), R=6 f64
 * at 10.4 (0.668) and R=8 f64 at 11.7 (0.546): the engine's rate is at least the highest,
 * 12 taken. (The row copies that preceded them, a request a row, ran at 4.8-9.7,
 * bench/bulk_h200.) The model ranks the form level with its bulk=0 sibling at R=8 f32 (0.99)
 * and behind at R=8 f64 (1.08), where the H200 measured it 13-19% faster: the copies' issue
 * slots it frees are more than counted (ncu: 48 warp-instructions a thread and plane fewer
 * for lap R=8 f32 2x2, bench/bulk_h200/ncu_lap8.txt; the model counts about 5). */
#define BULK_BYTES_CLK 12.0

typedef enum { DIRECT, WINDOW, TILE, RING, STREAM } family;

/* The family of a config, as the generator's table picks it (lds, and a window or none). */
static family family_of(const fdt_config *c)
{
    if (c->lds >= 1 && c->lds <= 3)
        return (family)(TILE + c->lds - 1);
    return c->nw > 0 ? WINDOW : DIRECT;
}

/* One config's shape, as the templates see it. */
typedef struct shape {
    family fam;
    int r[3], HX, T, V, wave;
    double es, vb;   /* bytes per element; bytes of one thread's vector access */
    double vi;       /* instructions per vector access (at most 16 bytes each) */
    double steps;    /* march steps per output plane: the window's 2 RZ planes loaded first */
    double yh, xh;   /* y- and x-halo accesses per thread and plane of a shared tile */
} shape;

static void shape_of(const fdt_problem *p, const fdt_config *c, shape *s)
{
    fdt_op_radii(p->op, p->R, s->r);
    s->fam = family_of(c);
    s->T = c->tile;
    s->V = c->vec;
    s->wave = fdt_op_is_step(p->op);
    s->es = (double)fdt_prec_size(p->prec);
    s->HX = s->r[0] ? (s->r[0] + c->vec - 1) / c->vec * c->vec : 0;
    s->vb = c->vec * s->es;
    s->vi = ceil(s->vb / 16);
    double planes = c->nw > 0 ? fmin((double)c->nw, (double)p->nz) : 1;
    s->steps = c->nw > 0 ? (planes + 2 * s->r[2]) / planes : 1;
    double nt = (double)c->bx * c->by;
    s->yh = 2.0 * s->r[1] * c->bx / nt; /* chunks of VEC along the rows above and below */
    /* x halo: the ring's copies move whole vectors (HX / VEC a side), the tile's puts values */
    s->xh = s->fam == TILE ? 2.0 * s->r[0] * c->by * c->tile / nt
                           : 2.0 * (s->HX / c->vec) * c->by * c->tile / nt;
}

/* Wave's point-wise inputs a thread moves per output row: p_prev and c2, and in the stream
 * the centre again (it no longer holds the plane when the output is written); 0 for the
 * other operators. */
static double wave_inputs(const shape *s)
{
    return s->wave ? (s->fam == STREAM ? 3 : 2) : 0;
}

/* L1 (or LDS) wavefronts one wave instruction costs: its bytes in units of what the L1
 * moves per clock (128 bytes on NVIDIA), plus one when it does not start on such a boundary
 * (shifted neighbour loads, unaligned rows). */
static double wavefronts(const fdt_arch *a, double bytes, int aligned)
{
    return ceil(bytes / a->l1_bytes_clk) + (aligned ? 0 : 1);
}

/* Wavefronts of the global loads and stores per thread and plane (a wave's instruction
 * counted once per thread of it): the rows, their x and y neighbours and the z planes of
 * the families without a tile; the fill of the tile (its halo scattered: 1.25 of the
 * aligned count) and the window's planes of the others; wave's point-wise inputs; stores. */
static double global_wavefronts(const fdt_arch *a, const fdt_config *c, const shape *s,
                                int aligned)
{
    double lanes = a->wave, vb = lanes * s->vb;
    double one = wavefronts(a, vb, aligned) / lanes, T = s->T;
    double wf = 0;
    if (s->fam == DIRECT || s->fam == WINDOW) {
        wf += s->r[0] ? T * (double)(s->V + 2 * s->HX) / s->V * wavefronts(a, vb, 0) / lanes
                      : T * one;
        wf += 2 * s->r[1] * one;
        wf += s->fam == WINDOW ? T * one * s->steps : T * 2 * s->r[2] * one;
    } else {
        double tile = (double)c->bx * s->V * c->by * T; /* outputs of a block's plane */
        double halo = ((double)c->bx * s->V + 2 * s->HX) * (c->by * T + 2 * s->r[1]) - tile;
        double warps = (double)c->bx * c->by / lanes;
        wf += T * one * s->steps; /* this thread's own rows, the window's planes */
        if (halo > 0)
            wf += ceil(halo * s->es / a->l1_bytes_clk) / warps / lanes * 1.25;
    }
    wf += T * wave_inputs(s) * one;
    wf += T * one; /* stores */
    return wf;
}

/* Floating-point instructions per output: d2 per axis (one multiply, an add and an FMA per
 * pair) and the combination (sx dx + sy dy + sz dz: one multiply, an FMA per further axis;
 * wave's 2 p - p_prev + c2 (...) two more); the stream's streaming sums instead: per landing
 * plane sz p and 2 RZ weighted adds per value, 2 RX and 2 RY per output, and its centre and
 * the x and y scales (6R + 4 for lap). */
static double fp_per_output(const shape *s)
{
    const int *r = s->r;
    double fp = 0;
    int axes = 0;
    if (s->fam == STREAM) {
        fp = (r[2] ? s->steps * (2 * r[2] + 1) : 0) + 2 * r[0] + 2 * r[1] + 1 + (r[0] > 0) +
             (r[1] > 0);
    } else {
        for (int d = 0; d < 3; d++)
            if (r[d] > 0) {
                fp += 2 * r[d] + 1;
                axes++;
            }
        fp += axes;
    }
    return fp + (s->wave ? 2 : 0);
}

/* Shared-memory accesses per thread and plane: vectors (of VEC, loads and stores, the
 * ring's copies) and single values (the tile's x halo), with the copies alone in *copies. */
static void shared_accesses(const shape *s, double *vectors, double *values, double *copies)
{
    double T = s->T, x = 2.0 * T * s->HX / s->V; /* a row's x halo, whole vectors a side */
    double y = 2.0 * s->r[1];
    *vectors = *values = *copies = 0;
    switch (s->fam) {
    case TILE: /* puts of its own values and the halo, reads of the neighbours */
        *vectors = T + s->yh + y + x;
        *values = s->xh;
        break;
    case RING:
    case STREAM: /* copies of the plane with its halo, reads of the centre and neighbours */
        *copies = T * s->steps + s->yh + s->xh + wave_inputs(s) * T;
        *vectors = *copies + T * s->steps + y + x + wave_inputs(s) * T;
        break;
    default:
        break;
    }
}

/* The sm_90 machine code of a ring (lds=2) or stream (lds=3) kernel of lap or wave, whose
 * march is unrolled by Q = 2 R_z + 1 steps; per step about FP = (6R + 4) T V floating-point
 * instructions, LDS = T + 2 R_y + 2 T HX / V shared loads, the copies the step issues (the
 * plane's rows, the thread's share of the halo, wave's queued inputs) and, for the stream, the
 * slot barriers (mbar=1). Bytes, fitted by least squares to what NVRTC 13.0 compiled
 * (bench/codesize_sm90.txt): 69 streams, mean error 1.0%, largest 4.3% (4.7% left out one at
 * a time); 28 rings, mean 4.3%, largest 12.7% (14%); bench/codesize_fit.py. 0 for the other
 * families and operators (the one-axis operators' code is far smaller). The margin from which
 * an estimate counts as surely over a limit: 3% for the stream (in the fit every stream
 * estimated 3% over 136 KB compiled over it, none under; lap R=7 4x2 at 139.6 KB, estimated
 * 139.0, is left to its compiled size, and lap R=8 3x2, 134.8 KB, which runs at speed,
 * estimated 134.2, is not touched), 15% for the ring. The bulk form's fill (bulk=1) in place
 * of the copies: thread 0's tensor copy, TENSOR_FILL_BYTES a step (its ten instructions; the
 * sm_90 cubin of lap R=8 f32 2x2, bx=32, by=16, nvcc 13, is 98648 bytes with it against
 * 110608 with bulk=0), and for wave the loop of one queued row per thread, BULK_FILL_BYTES a
 * step (from the same kernel's row copies: 109328 bytes of cubin against 111504, the copies'
 * estimate 652 bytes a step, 17 steps). */
#define TENSOR_FILL_BYTES 160.0
#define BULK_FILL_BYTES 524.0
static void code_size(const fdt_problem *p, const fdt_config *c, const shape *s, fdt_onchip *o)
{
    o->code_bytes = 0;
    o->code_margin = 1;
    if ((s->fam != RING && s->fam != STREAM) ||
        (p->op != FDT_OP_LAP && !fdt_op_is_step(p->op)))
        return;
    double Q = 2.0 * s->r[2] + 1, T = s->T, V = s->V;
    double fp = (6.0 * p->R + 4) * T * V, lds = T + 2.0 * s->r[1] + 2 * T * s->HX / V;
    double copies = T + s->yh + s->xh + wave_inputs(s) * T;
    if (s->fam == STREAM) {
        double fill = c->bulk && c->mbar ? TENSOR_FILL_BYTES + BULK_FILL_BYTES * s->wave
                                         : 186.3 * copies;
        o->code_bytes = 14042 + Q * (18.1 * fp + 8.9 * lds + 586 * s->wave - 35.5 +
                                     703.7 * (c->mbar != 0) + fill);
        o->code_margin = 1.03;
    } else {
        o->code_bytes = -7320 + Q * (19.1 * fp + 33.6 * lds + 1185 * s->wave + 1786 +
                                     94.9 * copies);
        o->code_margin = 1.15;
    }
}

/* The bulk form's issue per thread and plane (bulk=1 where the slot barriers run: sm_90 on,
 * as the recipes prune it elsewhere): thread 0's tensor copy of each step, OVH_TENSOR, and the
 * warps that copy wave's queued rows, OVH_BULK_ROW each, shared by the block's warps, and
 * OVH_BULK_STEP per step; 0 without the form. */
static double bulk_issue(const fdt_arch *a, const fdt_config *c, const shape *s)
{
    if (!c->bulk || s->fam != STREAM || !fdt_arch_slot_barriers(a, c))
        return 0;
    double rows = wave_inputs(s) * c->by * s->T;
    double warps = ceil((double)c->bx * c->by / a->wave);
    return (OVH_TENSOR * s->steps + ceil(rows / a->wave) * OVH_BULK_ROW) / warps +
           OVH_BULK_STEP * s->steps;
}

/* The bulk form's bytes per output through the copy engine: a plane's tile (TX x TY values,
 * the y halo's rows too; wave's queued inputs a block row each) over the block's outputs of
 * the plane, times the march's steps per output plane. */
static double bulk_bytes(const fdt_config *c, const shape *s)
{
    double tx = 2.0 * s->HX + (double)c->bx * s->V, out_rows = (double)c->by * s->T;
    double bytes = ((out_rows + 2.0 * s->r[1]) * tx * s->steps +
                    wave_inputs(s) * out_rows * c->bx * s->V) * s->es;
    return bytes / (out_rows * c->bx * s->V);
}

/* Global memory instructions per thread and plane (loads and stores, of VEC each). */
static double global_accesses(const shape *s)
{
    double T = s->T, g = 0;
    if (s->fam == DIRECT)
        g = (s->r[1] ? T + 2 * s->r[1] : T) + 2.0 * T * s->HX / s->V + 2.0 * s->r[2] * T;
    else if (s->fam == WINDOW)
        g = T * s->steps + 2.0 * s->r[1] + 2.0 * T * s->HX / s->V;
    else if (s->fam == TILE)
        g = T * s->steps + s->yh; /* and xh single values, added by the caller */
    if (s->wave && s->fam <= TILE)
        g += 2 * T;
    return g + T; /* stores */
}

/* The damped step's further work per output of a damped kernel (dwave; the interior kernel is
 * the wave's expression and counts none): (1 - g) p_prev and the division by 1 + g (an add,
 * a multiply-subtract and the division, which the compilers expand to a reciprocal and its
 * Newton step: DIV_INST instructions of which two FP); then g itself: eta=dist computes each
 * axis's distance into the layer (two compares and selects, a subtract) and S (d/W)^2 (two
 * multiplies), eta=array loads the three per-axis values (the x one coalesced like an
 * input, the y and z ones the same for a whole row: a wavefront per wave instruction each,
 * from L1: the array is nx + ny + nz values) and adds them. */
#define DIV_INST 8.0
static void damping(const fdt_arch *a, const fdt_config *c, const shape *s, fdt_onchip *o)
{
    double fp = 2 + 2, inst = DIV_INST - 2;
    if (c->eta == FDT_ETA_ARRAY) {
        fp += 2;
        o->l1_bytes += 3 * s->es;
        o->l1_wavefronts += 3.0 / a->wave;
        inst += a->mem_issue ? 3 : 0;
    } else {
        fp += 3 * 3;
        inst += 3 * 2;
    }
    o->fp += fp;
    o->inst += fp + inst;
}

void fdt_model_onchip(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                      fdt_onchip *o)
{
    const fdt_arch *a = fdt_arch_of(dev);
    shape s;
    shape_of(p, c, &s);
    double outs = (double)s.T * s.V; /* a thread's outputs per plane */
    int aligned = c->align > 1 && (int)(c->align * s.es) % (int)a->sector == 0;
    double vec, val, copies;
    shared_accesses(&s, &vec, &val, &copies);
    double gvec = global_accesses(&s), gval = s.fam == TILE ? s.xh : 0;
    /* without asynchronous copies (AMD) a copy is a global load and a shared store */
    double gmem = (gvec + (a->async_copy ? 0 : copies)) * s.vi + gval;
    double async = a->async_copy ? copies * s.vi : 0;
    o->shared_bytes = (vec * s.vb + val * s.es) / outs;
    o->l1_bytes = ((gvec + copies) * s.vb + gval * s.es) / outs;
    /* the bulk form's rows land in shared memory as before, with no per-thread copy: the
     * copies leave the shared and the asynchronous instructions, the rows' issue replaces them */
    double bulk = bulk_issue(a, c, &s), rows = bulk > 0 ? bulk_bytes(c, &s) : 0;
    if (bulk > 0) {
        vec -= copies;
        async = 0;
    }
    o->l1_bytes += rows;
    o->shared_inst = (vec * s.vi + val) / outs;
    /* the bulk rows cost the copy engine's clocks per output, a term of their own */
    o->l1_wavefronts = global_wavefronts(a, c, &s, aligned) / outs;
    o->copy_clk = rows / BULK_BYTES_CLK;
    o->fp = fp_per_output(&s);
    /* the sliding window of the window and tile families moves its planes a register each
     * step (doubles: two); the ring and the stream rotate by unrolling */
    double moves = s.fam == WINDOW || s.fam == TILE
                       ? (2.0 * s.r[2] + c->pf) * outs * (s.es > 4 ? 2 : 1) : 0;
    double ovh = ovh_step[s.fam] * s.steps + OVH_MEM * (gmem + async) + bulk;
    if (fdt_arch_slot_barriers(a, c))
        ovh += OVH_MBAR * s.steps;
    if (s.wave) /* the point source's test at every output */
        ovh += 3 * outs;
    double mem = a->mem_issue ? gmem + vec * s.vi + val : 0;
    o->inst = o->fp + (moves + ovh + mem) / outs;
    if (p->op == FDT_OP_DWAVE)
        damping(a, c, &s, o);
    code_size(p, c, &s, o);
}
