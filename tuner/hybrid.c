/* The hybrid planner's inputs from the tuning database, and from published figures for the
 * machines we cannot reach (fdt_hybrid_db.h). Each rate is read from the rows the database's
 * own queries answer (fdt_db_best, fdt_db_top, fdt_db_link_get); nothing is written. */
#include "fdt_hybrid_db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fdt_arch.h"
#include "fdt_eval.h"

/* 1 when two problems are the same one (the absorbing layer included). */
static int same_problem(const fdt_problem *a, const fdt_problem *b)
{
    return a->op == b->op && a->R == b->R && a->prec == b->prec && a->nx == b->nx &&
           a->ny == b->ny && a->nz == b->nz && a->absorb_w == b->absorb_w &&
           a->absorb_s == b->absorb_s;
}

/* The "fdtune tune" that would measure p on the device (--gpu NAME or --cpu NAME). */
static void tune_hint(const fdt_problem *p, const char *flag, const char *name, char *buf,
                      size_t n)
{
    char layer[64] = "";
    if (p->op == FDT_OP_DWAVE)
        snprintf(layer, sizeof layer, " --absorb %d:%g", p->absorb_w, p->absorb_s);
    snprintf(buf, n, "fdtune tune %s '%s' --op %s --R %d --precision %s --grid %lldx%lldx%lld%s",
             flag, name, fdt_op_name(p->op), p->R, fdt_prec_name(p->prec), (long long)p->nx,
             (long long)p->ny, (long long)p->nz, layer);
}

/* The best row of p on the one device model name names among devices of kind cpu (1) or GPUs
 * (0); *found 0 when none. Several devices with results: FDT_STATUS_USAGE naming them. */
static fdt_status best_row(fdt_db *db, const char *name, int cpu, const fdt_problem *p,
                           int64_t device_id, fdt_db_row *out, int *found, fdt_err *e)
{
    fdt_db_filter f;
    fdt_db_filter_init(&f);
    int64_t grid[1][3] = {{p->nx, p->ny, p->nz}};
    f.gpu = device_id ? NULL : name;
    f.device_id = device_id;
    f.ops = 1u << p->op;
    f.Rs = 1u << p->R;
    f.precs = 1u << p->prec;
    f.grids = (const int64_t (*)[3])grid;
    f.ngrids = 1;
    f.absorb_w = p->absorb_w;
    f.absorb_s = p->absorb_s;
    fdt_db_rows rows = {0};
    if (fdt_db_best(db, &f, fdt_db_collect_row, &rows, e) || rows.oom) {
        free(rows.v);
        return rows.oom ? (fdt_err_set(e, "hybrid plan: out of memory"), FDT_STATUS_ERROR)
                        : FDT_STATUS_ERROR;
    }
    *found = 0;
    fdt_status st = FDT_STATUS_OK;
    for (size_t i = 0; i < rows.n && st == FDT_STATUS_OK; i++) {
        const fdt_db_row *r = &rows.v[i];
        int is_cpu = strcmp(r->device.backend, "cpu") == 0;
        if (!same_problem(&r->problem, p) || is_cpu != cpu)
            continue;
        if (*found && r->device.id != out->device.id) {
            fdt_err_set(e, "--%s %s: several stored devices have results for this problem "
                        "(%s, %s): name one", cpu ? "cpu" : "gpu", name, out->device.name,
                        r->device.name);
            st = FDT_STATUS_USAGE;
        }
        *out = *r;
        *found = 1;
    }
    free(rows.v);
    return st;
}

/* The device's copy bandwidth in the run that measured row. */
static double copy_of(fdt_db *db, const fdt_db_row *row, fdt_err *e)
{
    if (isfinite(row->ev.frac_copy) && row->ev.frac_copy > 0)
        return row->ev.gbs / row->ev.frac_copy;
    fdt_db_run run;
    int found = 0;
    if (fdt_db_run_find(db, row->ev.run_id, &run, &found, e) || !found || !isfinite(run.copy_gbs))
        return 0;
    return run.copy_gbs;
}

/* The deployment of a stored config (its deploy parameter); complete where the text does not
 * parse (a config of a later fdtune). */
static int deploy_of(const char *config)
{
    fdt_config c;
    fdt_err e;
    if (fdt_config_parse(config, &c, &e))
        return FDT_HYB_COMPLETE;
    return c.deploy;
}

/* Whether evaluation ev (full or not) replaces a value kept so far (had: there is one,
 * had_probe: a probe's): a full one replaces a probe's, then the faster (`faster`) wins. */
static int replaces(const fdt_db_eval *ev, int had, int had_probe, int faster)
{
    int full = ev->stage == FDT_DB_FULL, had_full = had && !had_probe;
    return full != had_full ? full : !had || faster;
}

/* Whether ev replaces deployment k's rate so far in d. */
static int better_deploy(const fdt_db_eval *ev, const fdt_hybrid_dev *d, int k)
{
    return replaces(ev, d->deploy_gbs[k] > 0, d->deploy_probe[k], ev->gbs > d->deploy_gbs[k]);
}

/* Whether ev replaces the layer time so far in d. */
static int better_layers(const fdt_db_eval *ev, const fdt_hybrid_dev *d)
{
    return replaces(ev, d->layers_ms > 0, d->layers_probe, ev->layers_ms < d->layers_ms);
}

/* ev's layer time into d (its config into layers_config, its id into *id) where it is a
 * sides deployment's (the six slabs of task-parallel) and better than d's. */
static void take_layers(const fdt_db_eval *ev, int deploy, fdt_hybrid_dev *d,
                        char layers_config[256], int64_t *id)
{
    if (deploy != FDT_HYB_SIDES || !(ev->layers_ms > 0) || !better_layers(ev, d))
        return;
    d->layers_ms = ev->layers_ms;
    d->layers_probe = ev->stage != FDT_DB_FULL;
    snprintf(layers_config, 256, "%s", ev->config);
    *id = ev->id;
}

/* What of an evaluation remeasured() takes: its rate (full ones), layer time, part time. */
typedef enum { TAKE_GBS, TAKE_LAYERS, TAKE_PART } take_what;

/* The winner's curse: a search keeps the fastest of noisy measurements, so the measurement
 * that chose a config is the low tail of that config's times (the H200 host at 512^3: the
 * CPU's best took 28.9 ms in its tune, 34.6 ms when the next run measured it again and 35.2
 * ms a step in the runner). Its other ok measurements do not depend on the choice: the
 * median of their rates (TAKE_GBS: full ones), layer times or part times (any stage), leaving
 * out evaluation `chosen` (0: none left out: the search never chose by the part time); 0 with
 * *n = 0 when there is none. */
static double remeasured(const fdt_db_rows *rows, int64_t chosen, const char *config,
                         take_what what, int *n)
{
    double *v = malloc(sizeof *v * (rows->n ? rows->n : 1));
    *n = 0;
    for (size_t i = 0; v && i < rows->n; i++) {
        const fdt_db_eval *ev = &rows->v[i].ev;
        double x = what == TAKE_GBS ? ev->gbs : what == TAKE_LAYERS ? ev->layers_ms : ev->part_ms;
        if (ev->id != chosen && ev->status == FDT_DB_OK && strcmp(ev->config, config) == 0 &&
            (what != TAKE_GBS || ev->stage == FDT_DB_FULL) && x > 0)
            v[(*n)++] = x;
    }
    fdt_timing t = {0};
    fdt_timing_stats(v, *n, &t); /* the timings' own median (0 of none) */
    free(v);
    return t.median_ms;
}

/* The best's rate (and the layer time) from their re-measurements where there are any, the
 * choice's own kept in own_gbs; the best's deployment takes the best's rate; the best's part
 * time, the median of all of its config's. */
static void take_remeasured(const fdt_db_rows *rows, const fdt_db_row *best, int64_t layers_id,
                            const char *layers_config, fdt_hybrid_dev *d)
{
    d->own_gbs = d->gbs;
    d->part_ms = remeasured(rows, 0, best->ev.config, TAKE_PART, &d->part_n);
    d->part_planes = d->part_n ? (int)fdt_gen_part_planes(&best->problem) : 0;
    double g = remeasured(rows, best->ev.id, best->ev.config, TAKE_GBS, &d->remeasured);
    if (d->remeasured) {
        int k = deploy_of(best->ev.config);
        if (d->deploy_gbs[k] == d->gbs)
            d->deploy_gbs[k] = g;
        d->gbs = g;
    }
    double l = layers_id ? remeasured(rows, layers_id, layers_config, TAKE_LAYERS,
                                      &d->layers_remeasured)
                         : 0;
    if (d->layers_remeasured)
        d->layers_ms = l;
}

/* From every evaluation of (device, problem) of row: the best ok one per deployment (dwave):
 * a full one, else a probe (the search probes every candidate and fully measures only those
 * near its best, so a slow deployment such as a CPU's sides is often only probed); the least
 * layer time of its sides evaluations, by the same rule; then the re-measurements of the best
 * and of that layer time (take_remeasured). */
static int device_evals(fdt_db *db, const fdt_db_row *row, fdt_hybrid_dev *d,
                        char (*configs)[256], char *layers_config, fdt_err *e)
{
    fdt_db_rows rows = {0};
    if (fdt_db_evals(db, row->device.id, 0, row->ev.problem_id, fdt_db_collect_row, &rows, e) ||
        rows.oom) {
        free(rows.v);
        return rows.oom ? fdt_err_set(e, "hybrid plan: out of memory") : -1;
    }
    char lc[256] = "";
    int64_t layers_id = 0;
    for (size_t i = 0; i < rows.n && row->problem.op == FDT_OP_DWAVE; i++) {
        const fdt_db_eval *ev = &rows.v[i].ev;
        if (ev->status != FDT_DB_OK || !(ev->gbs > 0))
            continue;
        int k = deploy_of(ev->config);
        take_layers(ev, k, d, lc, &layers_id);
        if (better_deploy(ev, d, k)) {
            d->deploy_gbs[k] = ev->gbs;
            d->deploy_probe[k] = ev->stage != FDT_DB_FULL;
            if (configs)
                snprintf(configs[k], 256, "%s", ev->config);
        }
    }
    take_remeasured(&rows, row, layers_id, lc, d);
    if (layers_config)
        snprintf(layers_config, 256, "%s", lc);
    free(rows.v);
    return 0;
}

/* A GPU's peak FP rate at p's precision from its architecture's facts (GFLOP/s; an FMA two). */
static double gpu_flops(const fdt_device *dev, const fdt_problem *p)
{
    const fdt_arch *a = fdt_arch_of(dev);
    double per_clk = p->prec == FDT_F64 ? a->fp64_clk : a->fp32_clk;
    return 2 * per_clk * a->clock_hz * dev->compute_units * 1e-9;
}

/* One device's rates for p: its best, deployments, copy bandwidth. */
static fdt_status device_rates(fdt_db *db, const char *name, int cpu, const fdt_problem *p,
                               fdt_hybrid_dev *d, fdt_db_row *row, char (*configs)[256],
                               char *layers_config, fdt_err *e)
{
    int found = 0;
    fdt_status st = best_row(db, name, cpu, p, 0, row, &found, e);
    if (st != FDT_STATUS_OK)
        return st;
    if (!found) {
        char hint[256];
        tune_hint(p, cpu ? "--cpu" : "--gpu", name, hint, sizeof hint);
        char key[128];
        fdt_problem_format(p, key, sizeof key);
        fdt_err_set(e, "hybrid plan: no tuned result for %s on a %s matching '%s'; run: %s",
                    key, cpu ? "CPU" : "GPU", name, hint);
        return FDT_STATUS_USAGE;
    }
    snprintf(d->name, sizeof d->name, "%s", row->device.name);
    d->gbs = row->ev.gbs;
    d->copy_gbs = copy_of(db, row, e);
    d->launch_us = cpu ? FDT_HYB_CPU_LAUNCH_US : FDT_HYB_GPU_LAUNCH_US;
    if (!cpu)
        d->flops_gfs = gpu_flops(&row->device, p);
    if (device_evals(db, row, d, configs, layers_config, e))
        return FDT_STATUS_ERROR;
    return FDT_STATUS_OK;
}

/* The GPU's undamped wave at p's grid, R and precision: the interior kernel's rate. */
static int interior_rate(fdt_db *db, const fdt_problem *p, int64_t device_id, double *gbs,
                         fdt_err *e)
{
    fdt_problem w = *p;
    w.op = FDT_OP_WAVE;
    w.absorb_w = 0;
    w.absorb_s = 0;
    fdt_db_row row;
    int found = 0;
    *gbs = 0;
    if (best_row(db, NULL, 0, &w, device_id, &row, &found, e) != FDT_STATUS_OK)
        return -1;
    if (found)
        *gbs = row.ev.gbs;
    return 0;
}

/* The GPU's link into in->link. */
static fdt_status link_of(fdt_db *db, const fdt_device *gpu, fdt_hybrid_in *in,
                          fdt_hybrid_sources *src, fdt_err *e)
{
    fdt_db_link l;
    int found = 0;
    if (fdt_db_link_get(db, gpu->id, &l, &found, e))
        return FDT_STATUS_ERROR;
    if (!found) {
        fdt_err_set(e, "hybrid plan: the host<->device link of %s is not measured; run "
                    "'fdtune devices' on its machine (it measures and stores the link)",
                    gpu->name);
        return FDT_STATUS_USAGE;
    }
    in->link = (fdt_hybrid_link){.h2d_gbs = l.h2d_gbs, .d2h_gbs = l.d2h_gbs,
                                 .both_gbs = l.both_gbs, .latency_us = l.latency_us,
                                 .row_ns = isnan(l.row_ns) ? 0 : l.row_ns, .unified = l.unified};
    snprintf(src->link_measured, sizeof src->link_measured, "%s", l.measured);
    return FDT_STATUS_OK;
}

/* A planner's input for problem p, nothing gathered yet but the figures no one measures
 * (FDT_HYB_SYNC_US, FDT_HYB_COPY_BESIDE): what a gathered input and a prediction share. */
static void input_begin(fdt_hybrid_in *in, const fdt_problem *p)
{
    memset(in, 0, sizeof *in);
    in->p = *p;
    in->sync_us = FDT_HYB_SYNC_US;
    in->beside = FDT_HYB_COPY_BESIDE;
}

fdt_status fdt_hybrid_gather(fdt_db *db, const char *gpu, const char *cpu, const fdt_problem *p,
                             fdt_hybrid_in *in, fdt_hybrid_sources *src, fdt_err *e)
{
    input_begin(in, p);
    memset(src, 0, sizeof *src);
    fdt_db_row row;
    fdt_status st = device_rates(db, gpu, 0, p, &in->gpu, &row, src->deploy_config, NULL, e);
    if (st != FDT_STATUS_OK)
        return st;
    src->gpu = row.device;
    snprintf(src->gpu_config, sizeof src->gpu_config, "%s", row.ev.config);
    if (p->op == FDT_OP_DWAVE && interior_rate(db, p, row.device.id, &in->gpu.interior_gbs, e))
        return FDT_STATUS_ERROR;
    if (!cpu)
        return FDT_STATUS_OK;
    if ((st = device_rates(db, cpu, 1, p, &in->cpu, &row, NULL, src->cpu_layers_config, e)) !=
        FDT_STATUS_OK)
        return st;
    src->cpu = row.device;
    snprintf(src->cpu_config, sizeof src->cpu_config, "%s", row.ev.config);
    return link_of(db, &src->gpu, in, src, e);
}

/* ------------------------------------------------------------------ predictions */

/* A machine's published figures (GB/s, GFLOP/s) and the assumptions beside them. */
typedef struct machine {
    const char *name;
    double gpu_peak_gbs;   /* the GPU's memory, peak */
    double cpu_peak_gbs;   /* the CPU's memory, peak (MI300A: the same HBM) */
    double link_gbs;       /* per direction (0: unified, no link) */
    int unified;
    double gpu_flops;      /* FP32 vector, peak */
    double cpu_copy_assumed; /* the CPU's copy as a fraction of its memory's peak (assumed) */
    const char *published;
    const char *cpu_assumption;
} machine;

static const machine machines[] = {
    {"MI300A", 5300, 5300, 0, 1, 122600, 0.036,
     "AMD Instinct MI300A APU product page and data sheet: 128 GB HBM3 at 5.3 TB/s peak shared "
     "by the CPU and the GPU (unified memory), 228 GPU compute units, 24 Zen 4 cores, 122.6 "
     "TFLOPS FP32 vector",
     "the 24 Zen 4 cores' copy: 3.6% of the HBM's peak, 190 GB/s (about 8 GB/s per core; AMD "
     "publishes no CPU-only bandwidth)"},
    {"GH200", 4000, 500, 450, 0, 67000, 0.8,
     "NVIDIA GH200 Grace Hopper Superchip data sheet: Grace's LPDDR5X at about 500 GB/s, the "
     "Hopper GPU's 96 GB HBM3 at 4.0 TB/s (4.8-4.9 TB/s with HBM3e), NVLink-C2C 900 GB/s "
     "(450 GB/s each way, cache-coherent), 67 TFLOPS FP32",
     "Grace's copy: 80% of its LPDDR5X peak, 400 GB/s; the C2C link copies at its published "
     "450 GB/s each way, both at once, 2 us latency (the coherent link also lets the GPU read "
     "the halos in place: the copies counted here are the upper bound)"},
};

/* Our measured H200's copy as a fraction of its published 4.8 TB/s peak: 4250 GB/s. */
#define H200_COPY_OF_PEAK (4250.0 / 4800.0)
/* A tuned step's fraction of its device's copy where nothing measured says (assumed). */
#define GPU_STEP_OF_COPY 0.90
#define CPU_STEP_OF_COPY 0.85

const char *fdt_hybrid_machines(void)
{
    return "MI300A, GH200";
}

/* A measured step's fraction of its device's copy, or the assumed one (*measured 0). */
static double step_of_copy(const fdt_hybrid_dev *d, double assumed, int *measured)
{
    *measured = d && d->gbs > 0 && d->copy_gbs > 0;
    return *measured ? fmin(d->gbs / d->copy_gbs, 1.0) : assumed;
}

fdt_status fdt_hybrid_predict(const char *name, const fdt_problem *p,
                              const fdt_hybrid_in *measured, fdt_hybrid_in *in,
                              fdt_hybrid_machine *m, fdt_err *e)
{
    const machine *mc = NULL;
    for (size_t k = 0; k < sizeof machines / sizeof machines[0]; k++)
        if (!strcasecmp(name, machines[k].name))
            mc = &machines[k];
    if (!mc) {
        fdt_err_set(e, "--predict %s: not a machine fdtune describes (%s)", name,
                    fdt_hybrid_machines());
        return FDT_STATUS_USAGE;
    }
    int gm, cm;
    double gf = step_of_copy(measured ? &measured->gpu : NULL, GPU_STEP_OF_COPY, &gm);
    double cf = step_of_copy(measured ? &measured->cpu : NULL, CPU_STEP_OF_COPY, &cm);
    input_begin(in, p);
    snprintf(in->gpu.name, sizeof in->gpu.name, "%s GPU (predicted)", mc->name);
    snprintf(in->cpu.name, sizeof in->cpu.name, "%s CPU (predicted)", mc->name);
    in->gpu.copy_gbs = mc->gpu_peak_gbs * H200_COPY_OF_PEAK;
    in->gpu.gbs = in->gpu.copy_gbs * gf;
    in->gpu.flops_gfs = mc->gpu_flops;
    in->gpu.launch_us = FDT_HYB_GPU_LAUNCH_US;
    in->cpu.copy_gbs = mc->cpu_peak_gbs * mc->cpu_copy_assumed;
    in->cpu.gbs = in->cpu.copy_gbs * cf;
    in->cpu.launch_us = FDT_HYB_CPU_LAUNCH_US;
    in->link = mc->unified
                   ? (fdt_hybrid_link){0, 0, 0, 0, 1, mc->gpu_peak_gbs * H200_COPY_OF_PEAK}
                   : (fdt_hybrid_link){mc->link_gbs, mc->link_gbs, mc->link_gbs, 2, 0, 0};
    m->name = mc->name;
    m->published = mc->published;
    snprintf(m->assumed, sizeof m->assumed,
             "the GPU's copy: %.1f%% of its peak (our H200: 4250 of 4800 GB/s); its step: "
             "%.0f%% of its copy (%s); %s; the CPU's step: %.0f%% of its copy (%s); launches "
             "and the per-step sync as on the machines we measured",
             100 * H200_COPY_OF_PEAK, 100 * gf, gm ? "measured on the GPU we tuned" : "assumed",
             mc->cpu_assumption, 100 * cf, cm ? "measured on the CPU we tuned" : "assumed");
    return FDT_STATUS_OK;
}
