/* The hybrid planner (fdt_hybrid.h): the four strategies' predicted times per step from
 * measured rates, the best data-parallel split found by trying every whole number of z planes,
 * and the seed paper's decision (memory- or compute-bound, divergence) in measured terms. The
 * model and the overlap rule are stated in the header; each function here computes one term. */
#include "fdt_hybrid.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *fdt_hybrid_strategy_name(fdt_hybrid_strategy s)
{
    static const char *const names[FDT_HYB_COUNT] = {"gpu", "cpu", "data", "task"};
    FDT_ASSERT(s >= 0 && s < FDT_HYB_COUNT, "strategy in range");
    return names[s];
}

/* Effective bytes of an n box of p (the box as a problem of its own). */
static double box_bytes(const fdt_problem *p, const int64_t n[3])
{
    if (n[0] <= 0 || n[1] <= 0 || n[2] <= 0)
        return 0;
    fdt_problem q = *p;
    q.nx = n[0];
    q.ny = n[1];
    q.nz = n[2];
    return fdt_effective_bytes(&q);
}

/* Bytes at a rate in GB/s, in ms. */
static double ms_of(double bytes, double gbs)
{
    return bytes / gbs * 1e-6;
}

/* The rate gbs measured over `bytes` with `launches` launches, those launches taken out. */
static double net_of(double bytes, double gbs, int launches, double launch_us)
{
    FDT_ASSERT(gbs > 0 && bytes > 0, "a rate to scale");
    double full = ms_of(bytes, gbs);
    double net = fmax(full - launches * launch_us * 1e-3, 0.5 * full);
    return bytes / net * 1e-6;
}

double fdt_hybrid_net_gbs(const fdt_problem *p, double gbs, int measured_launches,
                          double launch_us)
{
    return net_of(fdt_effective_bytes(p), gbs, measured_launches, launch_us);
}

double fdt_hybrid_box_ms(const fdt_problem *p, const int64_t n[3], double gbs,
                         int measured_launches, int launches, double launch_us)
{
    double bytes = box_bytes(p, n);
    if (bytes <= 0)
        return 0;
    return ms_of(bytes, fdt_hybrid_net_gbs(p, gbs, measured_launches, launch_us)) +
           launches * launch_us * 1e-3;
}

/* One rate the planner takes, with the launches its measurement ran. */
typedef struct rate {
    double gbs;
    int launches;
} rate;

static const int deploy_launches[FDT_HYB_NDEPLOY] = {1, 2, 7};

/* One box copied per step one way: its bytes and its rows (contiguous: 1). */
typedef struct box_copy {
    double bytes, rows;
} box_copy;

/* One direction's copies of boxes c[0..n) at bw GB/s: each its latency and the longer of its
 * rows' time and its bytes' (the copy engines take a time per row, whatever its bytes, up to a
 * few hundred: H200, 2.9 ns a row of 16 to 128 bytes, bench/hybrid_h200/run10/copy_rows.txt). */
static double boxes_ms(const fdt_hybrid_link *l, const box_copy *c, int n, double bw)
{
    double t = 0, row_ns = l->row_ns > 0 ? l->row_ns : 0;
    FDT_ASSERT(bw > 0, "a link measured where copies are made (check_in)");
    for (int i = 0; i < n; i++) {
        FDT_ASSERT(c[i].rows >= 1 && c[i].bytes >= c[i].rows, "a box copied has rows of bytes");
        t += l->latency_us * 1e-3 + fmax(c[i].rows * row_ns * 1e-6, ms_of(c[i].bytes, bw));
    }
    return t;
}

/* The bytes and rows of boxes c[0..n). */
static void box_sums(const box_copy *c, int n, double *bytes, double *rows)
{
    *bytes = *rows = 0;
    for (int i = 0; i < n; i++) {
        *bytes += c[i].bytes;
        *rows += c[i].rows;
    }
}

/* One direction's boxes: c[0..n) at the link's single-direction rate gbs. */
typedef struct copy_dir {
    const box_copy *c;
    int n;
    double gbs;
} copy_dir;

/* The copies of both directions' boxes: with both measured at once (both_gbs), the two run
 * together at that rate until the shorter is done, and the rest of the longer at its own
 * direction's rate; else one direction after the other. */
static double copy_ms(const fdt_hybrid_link *l, copy_dir a, copy_dir b)
{
    if (l->unified)
        return 0;
    if (!(l->both_gbs > 0))
        return boxes_ms(l, a.c, a.n, a.gbs) + boxes_ms(l, b.c, b.n, b.gbs);
    double ta = boxes_ms(l, a.c, a.n, l->both_gbs), tb = boxes_ms(l, b.c, b.n, l->both_gbs);
    double lo = fmin(ta, tb), hi = fmax(ta, tb), own = ta >= tb ? a.gbs : b.gbs;
    /* alone no slower than beside the other (a noisy both_gbs may exceed a direction's) */
    double t = lo + (hi - lo) * (own > 0 ? fmin(1, l->both_gbs / own) : 1);
    FDT_ASSERT(t >= lo && t <= hi, "the copies between the shorter's and the longer's time");
    return t;
}

/* The floor of the memory both parts draw on (fdt_hybrid_pred.floor_ms). */
static double floor_ms(const fdt_hybrid_in *in, const fdt_hybrid_pred *s)
{
    if (in->link.unified)
        return in->link.shared_gbs > 0
                   ? ms_of(s->gpu.bytes + s->cpu.bytes, in->link.shared_gbs)
                   : 0;
    double bytes = s->cpu.bytes + s->copy_bytes + s->copy_bytes_h2d;
    return in->cpu.copy_gbs > 0 ? ms_of(bytes, in->cpu.copy_gbs) : 0;
}

/* t = max(t_gpu, t_cpu, exchange, floor, serial) + sync, naming the largest. serial: on a
 * discrete GPU its copies start when the planes the CPU needs are done (gpu.first_ms) and
 * make in->beside of their own rate while its kernels run (measured on the H200 with the
 * cut computed first, bench/hybrid_h200 run10, run13, run14: a data-parallel step took the
 * GPU's part and 0.007-0.011 ms at 512^3, whose 0.087 ms of copies ran beside 0.52 ms of
 * kernels; 0.023-0.027 ms at 256^3, whose 0.025 ms ran beside 0.074); what is left when the
 * kernels end runs after them. */
static void finish_split(const fdt_hybrid_in *in, fdt_hybrid_pred *s, const box_copy *d2h,
                         int nd, const box_copy *h2d, int nh)
{
    box_sums(d2h, nd, &s->copy_bytes, &s->copy_rows);
    box_sums(h2d, nh, &s->copy_bytes_h2d, &s->copy_rows_h2d);
    s->copy_ms = copy_ms(&in->link, (copy_dir){d2h, nd, in->link.d2h_gbs},
                         (copy_dir){h2d, nh, in->link.h2d_gbs});
    s->exch_ms = fmax(s->gpu.first_ms, s->cpu.first_ms) + s->copy_ms;
    FDT_ASSERT(in->beside >= 0 && in->beside <= 1, "a share of the copies' rate");
    double hidden = in->beside * fmax(0, s->gpu.t_ms - s->gpu.first_ms);
    s->serial_ms = in->link.unified ? 0 : s->gpu.t_ms + fmax(0, s->copy_ms - hidden);
    s->floor_ms = floor_ms(in, s);
    s->sync_ms = in->sync_us * 1e-3;
    double t = s->gpu.t_ms;
    s->bound = "gpu";
    if (s->serial_ms > t) {
        t = s->serial_ms;
        s->bound = "gpu+copies";
    }
    if (s->cpu.t_ms > t) {
        t = s->cpu.t_ms;
        s->bound = "cpu";
    }
    if (s->exch_ms > t) {
        t = s->exch_ms;
        s->bound = "exchange";
    }
    if (s->floor_ms > t) {
        t = s->floor_ms;
        s->bound = "memory";
    }
    s->t_ms = t + s->sync_ms;
    s->ok = 1;
}

/* One device alone on the whole grid: the measured step. */
static void single(const fdt_hybrid_in *in, const fdt_hybrid_dev *d, fdt_hybrid_pred *s,
                   fdt_hybrid_part *part, const char *bound)
{
    const fdt_problem *p = &in->p;
    part->points = (double)p->nx * (double)p->ny * (double)p->nz;
    part->bytes = fdt_effective_bytes(p);
    part->gbs = part->net_gbs = d->gbs; /* the measured step, its launch included */
    part->launches = 1;
    part->t_ms = ms_of(part->bytes, d->gbs);
    s->t_ms = part->t_ms;
    s->bound = bound;
    s->ok = 1;
}

/* The time of `planes` z planes of a part in `launches` launches: the first thin_planes of
 * them at the thin part's rate (none where part->thin_gbs is 0), the rest at net_gbs. */
static double planes_ms(const fdt_hybrid_in *in, const fdt_hybrid_part *part, int64_t planes,
                        int launches, double *thin_bytes)
{
    const fdt_problem *p = &in->p;
    int64_t thin = part->thin_gbs > 0 ? (planes < part->thin_planes ? planes : part->thin_planes)
                                      : 0;
    int64_t n[3] = {p->nx, p->ny, planes}, nt[3] = {p->nx, p->ny, thin};
    double all = box_bytes(p, n), tb = box_bytes(p, nt);
    FDT_ASSERT(tb <= all, "the thin planes are of the part");
    if (thin_bytes)
        *thin_bytes = tb;
    double t = launches * part->launch_us * 1e-3 + ms_of(all - tb, part->net_gbs);
    return tb > 0 ? t + ms_of(tb, part->thin_gbs) : t;
}

/* A part of `planes` z planes of the grid at rate r, its first `first` planes computed
 * first in a launch of their own; a CPU's thin part measured (d->part_ms) prices its first
 * planes. */
static void slab_part(const fdt_hybrid_in *in, const fdt_hybrid_dev *d, rate r, int64_t planes,
                      int64_t first, fdt_hybrid_part *part)
{
    const fdt_problem *p = &in->p;
    int64_t n[3] = {p->nx, p->ny, planes}, nm[3] = {p->nx, p->ny, d->part_planes};
    part->points = (double)p->nx * (double)p->ny * (double)planes;
    part->bytes = box_bytes(p, n);
    part->gbs = r.gbs;
    part->net_gbs = fdt_hybrid_net_gbs(p, r.gbs, r.launches, d->launch_us);
    part->launches = r.launches + 1;
    part->launch_us = d->launch_us;
    if (d->part_ms > 0 && d->part_planes > 0 && d->part_planes < p->nz) {
        part->thin_planes = d->part_planes; /* measured in one launch */
        part->thin_gbs = net_of(box_bytes(p, nm), box_bytes(p, nm) / d->part_ms * 1e-6, 1,
                                d->launch_us);
    }
    part->t_ms = planes_ms(in, part, planes, part->launches, &part->thin_bytes);
    part->first_ms = planes_ms(in, part, first, 1, NULL);
}

/* Data-parallel with k planes on the CPU (the z planes [0, k); the GPU [k, nz)). */
static void data_at(const fdt_hybrid_in *in, rate g, rate c, int64_t k, fdt_hybrid_pred *s)
{
    const fdt_problem *p = &in->p;
    memset(s, 0, sizeof *s);
    int64_t gp = p->nz - k, gsend = gp < p->R ? gp : p->R, csend = k < p->R ? k : p->R;
    slab_part(in, &in->gpu, g, gp, gsend, &s->gpu);
    slab_part(in, &in->cpu, c, k, csend, &s->cpu);
    /* the planes at the cut each part sends, R or all of a thinner part, as planes x ny rows
     * of nx points (the runner's one range where both parts share a layout is no faster: rows
     * this long are bound by their bytes) */
    double plane = (double)p->nx * (double)p->ny * (double)fdt_prec_size(p->prec);
    const box_copy d2h = {plane * (double)gsend, (double)p->ny * (double)gsend},
                   h2d = {plane * (double)csend, (double)p->ny * (double)csend};
    finish_split(in, s, &d2h, 1, &h2d, 1);
}

/* The rate of a device's share of a split domain: its tuned best, with the launches of the
 * deployment that measured it (one where no deployment's rate equals it). */
static rate whole_rate(const fdt_hybrid_dev *d)
{
    for (int k = 0; k < FDT_HYB_NDEPLOY; k++)
        if (d->deploy_gbs[k] > 0 && d->deploy_gbs[k] == d->gbs)
            return (rate){d->gbs, deploy_launches[k]};
    return (rate){d->gbs, 1};
}

/* The best split among k = lo, lo + step, ... <= hi into *s (kept when none beats it); the
 * best k, or 0 when none beat *s. */
static int64_t scan(const fdt_hybrid_in *in, rate g, rate c, int64_t lo, int64_t hi,
                    int64_t step, fdt_hybrid_pred *s)
{
    int64_t best = 0;
    fdt_hybrid_pred t;
    for (int64_t k = lo; k <= hi; k += step) {
        data_at(in, g, c, k, &t);
        if (!s->ok || t.t_ms < s->t_ms) {
            *s = t;
            best = k;
        }
    }
    return best;
}

/* Most splits tried in one pass: beyond it every step-th plane, then the planes around the
 * best of those (the time is the larger of a part that grows with k and one that shrinks). */
#define SPLITS_MAX 4096

static void data_parallel(const fdt_hybrid_in *in, fdt_hybrid_plan *out)
{
    fdt_hybrid_pred *s = &out->s[FDT_HYB_DATA];
    const fdt_problem *p = &in->p;
    rate g = whole_rate(&in->gpu), c = whole_rate(&in->cpu);
    out->f_balance = c.gbs / (c.gbs + g.gbs);
    if (p->nz < 2) {
        snprintf(s->why, sizeof s->why, "data-parallel: %lld z plane cannot be split",
                 (long long)p->nz);
        return;
    }
    int64_t last = p->nz - 1, step = (last + SPLITS_MAX - 1) / SPLITS_MAX;
    int64_t best = scan(in, g, c, 1, last, step, s);
    if (step > 1) {
        int64_t lo = best - step > 1 ? best - step : 1;
        int64_t k = scan(in, g, c, lo, best + step < last ? best + step : last, 1, s);
        best = k ? k : best;
    }
    out->cpu_planes = best;
    out->f = (double)best / (double)p->nz;
    if (llround(out->f_balance * (double)p->nz) == 0)
        snprintf(s->why, sizeof s->why,
                 "the rates' balance f = %.4f rounds to 0 of %lld z planes: the CPU's share "
                 "is less than one plane (the best split found, %lld plane%s, is shown)",
                 out->f_balance, (long long)p->nz, (long long)best, best == 1 ? "" : "s");
}

/* The sides deployment's six slabs around the interior box: points and effective bytes. */
static void slabs(const fdt_problem *p, double *points, double *bytes)
{
    int64_t W = p->absorb_w, n[3] = {p->nx, p->ny, p->nz};
    int64_t iy = n[1] - 2 * W, iz = n[2] - 2 * W;
    int64_t zf[3] = {n[0], n[1], W}, yf[3] = {n[0], W, iz}, xf[3] = {W, iy, iz};
    *bytes = 2 * (box_bytes(p, zf) + box_bytes(p, yf) + box_bytes(p, xf));
    *points = 2 * ((double)n[0] * n[1] * W + (double)n[0] * W * iz + (double)W * iy * iz);
}

/* Appends a clause to why (n bytes), "; " after any before it. */
static void add_why(char *why, size_t n, const char *text)
{
    size_t used = strlen(why);
    snprintf(why + used, n - used, "%s%s", used ? "; " : "", text);
}

/* The rate of the GPU's interior kernel and of the CPU's slabs, saying in why what stands in
 * for a rate not measured. */
static void task_rates(const fdt_hybrid_in *in, rate *g, rate *c, char *why, size_t n)
{
    *g = (rate){in->gpu.interior_gbs, 1};
    *c = (rate){0, 6};
    why[0] = 0;
    /* The slabs' own rate: their time alone, measured (layers_ms). Neither the sides
     * deployment's rate over the grid nor the whole-grid rate: the slabs are thin (the x faces
     * rows of W points), and which config runs them fastest is another question than which
     * runs the grid fastest (H200 host, 256^3 R=4 f32, W=16: the blocked best 4.4 ms a step
     * and 6.6-10.6 ms its slabs; the plain loop nest 11.1 ms a step and 3.0 ms its slabs). */
    const fdt_problem *p = &in->p;
    int64_t W = p->absorb_w, ni[3] = {p->nx - 2 * W, p->ny - 2 * W, p->nz - 2 * W};
    double slab_pts, slab_bytes;
    slabs(p, &slab_pts, &slab_bytes);
    if (in->cpu.layers_ms > 0) {
        c->gbs = slab_bytes / in->cpu.layers_ms * 1e-6;
    } else if (in->cpu.deploy_gbs[FDT_HYB_SIDES] > 0 && in->cpu.gbs > 0) {
        /* no layer time (a database before schema v9): the sides step less its interior
         * box at the whole-grid rate, said */
        add_why(why, n, "the CPU's slabs not timed alone (rows before fdtune stored "
                        "layers_ms): the sides step less its interior at the whole-grid rate");
        double t_sides = ms_of(fdt_effective_bytes(p), in->cpu.deploy_gbs[FDT_HYB_SIDES]);
        double t_int = ms_of(box_bytes(p, ni), in->cpu.gbs);
        if (t_sides > t_int)
            c->gbs = slab_bytes / (t_sides - t_int) * 1e-6;
    }
    if (g->gbs <= 0) {
        *g = whole_rate(&in->gpu);
        add_why(why, n, "the GPU's interior kernel not measured (tune wave at this grid): "
                        "its whole-grid rate taken");
    }
    if (c->gbs <= 0) {
        *c = whole_rate(&in->cpu);
        add_why(why, n, "the CPU's sides deployment not measured (or no slower than its "
                        "interior alone): its whole-grid rate taken");
    }
}

static void task_parallel(const fdt_hybrid_in *in, fdt_hybrid_plan *out)
{
    fdt_hybrid_pred *s = &out->s[FDT_HYB_TASK];
    const fdt_problem *p = &in->p;
    if (p->op != FDT_OP_DWAVE) {
        snprintf(s->why, sizeof s->why, "task-parallel: %s has no absorbing layer for the CPU "
                 "(dwave only)", fdt_op_name(p->op));
        return;
    }
    int64_t W = p->absorb_w, R = p->R;
    int64_t ni[3] = {p->nx - 2 * W, p->ny - 2 * W, p->nz - 2 * W};
    memcpy(out->interior, ni, sizeof ni);
    rate g, c;
    task_rates(in, &g, &c, s->why, sizeof s->why);
    double ipts = (double)ni[0] * (double)ni[1] * (double)ni[2];
    s->gpu.points = ipts;
    s->gpu.bytes = box_bytes(p, ni);
    s->gpu.gbs = g.gbs;
    s->gpu.net_gbs = fdt_hybrid_net_gbs(p, g.gbs, g.launches, in->gpu.launch_us);
    s->gpu.launches = 1;
    s->gpu.launch_us = in->gpu.launch_us;
    s->gpu.t_ms = fdt_hybrid_box_ms(p, ni, g.gbs, g.launches, 1, in->gpu.launch_us);
    /* Each part whole before its copies, as the runner does (eval/hybrid.c setup_task: the
     * interior box and the sides deployment's slabs, none cut at the faces the other reads):
     * measured on the H200 (bench/hybrid_h200/run9), the step was the CPU's slabs and then
     * its copies (512^3: 15.2 ms of slabs, 17.2 ms a step). Cutting the slabs at those faces
     * would add launches of thin boxes or compute the faces twice. */
    s->gpu.first_ms = s->gpu.t_ms;
    slabs(p, &s->cpu.points, &s->cpu.bytes);
    s->cpu.gbs = c.gbs;
    s->cpu.net_gbs = net_of(s->cpu.bytes, c.gbs, c.launches, in->cpu.launch_us); /* slabs' */
    s->cpu.launches = 6;
    s->cpu.launch_us = in->cpu.launch_us;
    double work = ms_of(s->cpu.bytes, s->cpu.net_gbs);
    s->cpu.t_ms = work + 6 * in->cpu.launch_us * 1e-3;
    s->cpu.first_ms = s->cpu.t_ms;
    /* each way: the six faces of the interior, R deep (a star stencil needs no edges), as the
     * runner's boxes: rows along x, so the x faces are a row of R values per (y, z) */
    double es = (double)fdt_prec_size(p->prec);
    box_copy face[6];
    for (int a = 0; a < 3; a++) {
        double m[3] = {(double)ni[0], (double)ni[1], (double)ni[2]};
        m[a] = (double)R;
        face[2 * a] = face[2 * a + 1] = (box_copy){m[0] * m[1] * m[2] * es, m[1] * m[2]};
    }
    finish_split(in, s, face, 6, face, 6);
}

/* Floating-point operations per output point: per axis R symmetric pairs, an add and an FMA
 * (3 flops) each, the centre and the axes' sum (4); the step adds 2p - p_prev + c2 L (4) and
 * dwave the damping of its layers, (1 - g) and the division by 1 + g (4, the interior's g = 0
 * counted, eta read or computed left out). One axis for d2x, d2y, d2z. */
static double flops_per_point(const fdt_problem *p)
{
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    double f = 3.0 * (r[0] + r[1] + r[2]) + 4;
    if (fdt_op_is_step(p->op))
        f += 4;
    if (p->op == FDT_OP_DWAVE)
        f += 4;
    return f;
}

/* The GPU's cost of a layer point over an interior point, from a step measured at gbs and
 * the interior kernel's rate; 0 when either is missing. */
static double layer_cost(const fdt_hybrid_in *in, const fdt_hybrid_plan *out, double gbs)
{
    const fdt_problem *p = &in->p;
    if (p->op != FDT_OP_DWAVE || gbs <= 0 || in->gpu.interior_gbs <= 0)
        return 0;
    double n = (double)p->nx * (double)p->ny * (double)p->nz;
    double ipts = (double)out->interior[0] * out->interior[1] * out->interior[2];
    double t_step = ms_of(fdt_effective_bytes(p), gbs);
    double t_int = ms_of(box_bytes(p, out->interior), in->gpu.interior_gbs);
    double layer = fmax(t_step - t_int, 0) / (n - ipts);
    return layer / (t_int / ipts);
}

static void decide(const fdt_hybrid_in *in, fdt_hybrid_plan *out)
{
    fdt_hybrid_decision *d = &out->d;
    const fdt_problem *p = &in->p;
    d->flops_pt = flops_per_point(p);
    d->bytes_pt = fdt_effective_bytes(p) / ((double)p->nx * (double)p->ny * (double)p->nz);
    d->intensity = d->flops_pt / d->bytes_pt;
    double bw = in->gpu.copy_gbs > 0 ? in->gpu.copy_gbs : in->gpu.gbs;
    d->gpu_balance = in->gpu.flops_gfs > 0 ? in->gpu.flops_gfs / bw : 0;
    d->compute_bound = d->gpu_balance > 0 ? d->intensity > d->gpu_balance : -1;
    double best = 0;
    for (int k = 0; k < FDT_HYB_NDEPLOY; k++) {
        d->layer_cost_by[k] = layer_cost(in, out, in->gpu.deploy_gbs[k]);
        best = fmax(best, in->gpu.deploy_gbs[k]);
    }
    d->layer_cost = layer_cost(in, out, best);
    d->divergent = d->layer_cost > 0 ? d->layer_cost >= FDT_HYB_DIVERGENT : -1;
    d->paper = d->divergent == 1 ? FDT_HYB_TASK : FDT_HYB_DATA;
}

/* The fastest single device, then a split only where it gains FDT_HYB_MARGIN over that. */
static void choose(fdt_hybrid_plan *out)
{
    const fdt_hybrid_pred *s = out->s;
    fdt_hybrid_strategy one = FDT_HYB_GPU, split = FDT_HYB_COUNT;
    if (s[FDT_HYB_CPU].ok && s[FDT_HYB_CPU].t_ms < s[FDT_HYB_GPU].t_ms)
        one = FDT_HYB_CPU;
    for (int k = FDT_HYB_DATA; k <= FDT_HYB_TASK; k++)
        if (s[k].ok && (split == FDT_HYB_COUNT || s[k].t_ms < s[split].t_ms))
            split = (fdt_hybrid_strategy)k;
    double t1 = s[one].t_ms, tg = s[FDT_HYB_GPU].t_ms;
    out->choice = one;
    out->split_gain = split == FDT_HYB_COUNT ? 0 : 1 - s[split].t_ms / tg;
    if (split == FDT_HYB_COUNT) {
        snprintf(out->why, sizeof out->why, "%s only: no split can be predicted",
                 fdt_hybrid_strategy_name(one));
    } else if (1 - s[split].t_ms / t1 >= FDT_HYB_MARGIN) {
        out->choice = split;
        snprintf(out->why, sizeof out->why,
                 "%s-parallel: %.4f ms against %.4f ms %s only, %.1f%% faster (at least "
                 "%.0f%% needed)", fdt_hybrid_strategy_name(split), s[split].t_ms, t1,
                 fdt_hybrid_strategy_name(one), 100 * (1 - s[split].t_ms / t1),
                 100 * FDT_HYB_MARGIN);
    } else {
        snprintf(out->why, sizeof out->why,
                 "%s only: %.4f ms; the best split, %s-parallel, %.4f ms, gains %.1f%% "
                 "(a split needs at least %.0f%%; it is bound by %s)",
                 fdt_hybrid_strategy_name(one), t1, fdt_hybrid_strategy_name(split),
                 s[split].t_ms, 100 * (1 - s[split].t_ms / t1), 100 * FDT_HYB_MARGIN,
                 s[split].bound);
    }
    out->gain = 1 - s[out->choice].t_ms / tg;
}

/* The input's own checks: the problem, the GPU's rate, the link where copies are made. */
static int check_in(const fdt_hybrid_in *in, fdt_err *e)
{
    if (fdt_problem_check(&in->p, e) < 0)
        return fdt_err_wrap(e, "hybrid plan");
    if (!(in->gpu.gbs > 0))
        return fdt_err_set(e, "hybrid plan: no tuned rate for the GPU (%s) on this problem",
                           in->gpu.name[0] ? in->gpu.name : "unnamed");
    if (in->cpu.gbs > 0 && !in->link.unified && !(in->link.h2d_gbs > 0 && in->link.d2h_gbs > 0))
        return fdt_err_set(e, "hybrid plan: the host<->device link of %s is not measured "
                           "(h2d %.3g, d2h %.3g GB/s)", in->gpu.name, in->link.h2d_gbs,
                           in->link.d2h_gbs);
    return 0;
}

/* Why nothing with the CPU can be predicted. */
static void no_cpu_rate(const fdt_hybrid_in *in, char *buf, size_t n)
{
    snprintf(buf, n, "no tuned rate for the CPU (%s) on this problem",
             in->cpu.name[0] ? in->cpu.name : "none named");
}

int fdt_hybrid_predict_data(const fdt_hybrid_in *in, int64_t cpu_planes, fdt_hybrid_pred *out,
                            fdt_err *e)
{
    memset(out, 0, sizeof *out);
    if (check_in(in, e) < 0)
        return -1;
    if (!(in->cpu.gbs > 0)) {
        char why[200];
        no_cpu_rate(in, why, sizeof why);
        return fdt_err_set(e, "hybrid plan: %s", why);
    }
    if (cpu_planes < 1 || cpu_planes > in->p.nz - 1)
        return fdt_err_set(e, "hybrid plan: %lld CPU planes: a split of %lld z planes gives "
                           "each device 1 to %lld", (long long)cpu_planes, (long long)in->p.nz,
                           (long long)in->p.nz - 1);
    data_at(in, whole_rate(&in->gpu), whole_rate(&in->cpu), cpu_planes, out);
    return 0;
}

double fdt_hybrid_predicted_ms(const fdt_hybrid_in *in, const fdt_hybrid_plan *plan,
                               fdt_hybrid_strategy k, int64_t cpu_planes)
{
    FDT_ASSERT(k >= 0 && k < FDT_HYB_COUNT, "a strategy the plan has");
    fdt_hybrid_pred d;
    fdt_err e;
    const fdt_hybrid_pred *s = &plan->s[k];
    if (k == FDT_HYB_DATA)
        s = fdt_hybrid_predict_data(in, cpu_planes, &d, &e) ? NULL : &d;
    return s && s->ok ? s->t_ms : NAN;
}

/* A prediction's invariants: a possible one is a finite positive time named by its bound, no
 * less than any of its terms; a split's parts cover the grid's points. */
static void assert_pred(const fdt_hybrid_in *in, const fdt_hybrid_pred *s, int split)
{
    if (!s->ok)
        return;
    FDT_ASSERT(isfinite(s->t_ms) && s->t_ms > 0 && s->bound, "a time and its bound");
    if (!split)
        return;
    double terms[6] = {s->gpu.t_ms, s->cpu.t_ms, s->exch_ms, s->serial_ms, s->floor_ms,
                       s->copy_ms};
    for (int i = 0; i < 6; i++)
        FDT_ASSERT(terms[i] >= 0 && s->t_ms >= terms[i], "a split takes its longest term");
    FDT_ASSERT(s->exch_ms >= s->copy_ms && s->copy_bytes >= 0 && s->copy_rows >= 0 &&
                   s->copy_bytes_h2d >= 0 && s->copy_rows_h2d >= 0,
               "the exchange holds its copies");
    double pts = (double)in->p.nx * (double)in->p.ny * (double)in->p.nz;
    FDT_ASSERT(s->gpu.points + s->cpu.points <= pts * (1 + 1e-12), "parts within the grid");
}

/* The plan's invariants (fdt_hybrid_plan_make's result): every strategy's prediction holds
 * its own; the choice is a possible strategy, and a split only by FDT_HYB_MARGIN over the
 * single devices' faster. */
static void assert_plan(const fdt_hybrid_in *in, const fdt_hybrid_plan *pl)
{
    for (int k = 0; k < FDT_HYB_COUNT; k++)
        assert_pred(in, &pl->s[k], k >= FDT_HYB_DATA);
    const fdt_hybrid_pred *c = &pl->s[pl->choice];
    FDT_ASSERT(c->ok, "the choice is possible");
    double single = pl->s[FDT_HYB_GPU].t_ms;
    if (pl->s[FDT_HYB_CPU].ok && pl->s[FDT_HYB_CPU].t_ms < single)
        single = pl->s[FDT_HYB_CPU].t_ms;
    FDT_ASSERT(pl->choice < FDT_HYB_DATA ? c->t_ms == single
                                          : c->t_ms <= (1 - FDT_HYB_MARGIN) * single,
               "the faster single device, or a split by the margin");
}

int fdt_hybrid_plan_make(const fdt_hybrid_in *in, fdt_hybrid_plan *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    if (check_in(in, e) < 0)
        return -1;
    single(in, &in->gpu, &out->s[FDT_HYB_GPU], &out->s[FDT_HYB_GPU].gpu, "gpu");
    if (in->cpu.gbs > 0) {
        single(in, &in->cpu, &out->s[FDT_HYB_CPU], &out->s[FDT_HYB_CPU].cpu, "cpu");
        data_parallel(in, out);
        task_parallel(in, out);
    } else {
        for (int k = FDT_HYB_CPU; k < FDT_HYB_COUNT; k++)
            no_cpu_rate(in, out->s[k].why, sizeof out->s[k].why);
    }
    if (in->p.op == FDT_OP_DWAVE && out->interior[0] == 0) {
        int64_t W2 = 2 * (int64_t)in->p.absorb_w;
        out->interior[0] = in->p.nx - W2;
        out->interior[1] = in->p.ny - W2;
        out->interior[2] = in->p.nz - W2;
    }
    decide(in, out);
    choose(out);
    assert_plan(in, out);
    return 0;
}
