/* The hybrid planner (issue 29): from measured rates alone, the predicted time per step of one
 * problem run GPU only, CPU only, data-parallel (a fraction f of the z planes on the CPU, the
 * rest on the GPU, R halo planes exchanged each way every step) and task-parallel (the CPU
 * computes the absorbing layers, the sides deployment's six slabs, the GPU the interior box),
 * and the fastest of them. Every term of the arithmetic is kept in the plan so that a command
 * can show it, beside the seed paper's own decision (004, section 3) in measured terms: is
 * the step memory- or compute-bound (its arithmetic intensity against each device's flop per
 * byte), and how much more a point of the layers costs the GPU than a point of the interior
 * (divergence). Pure computation: no I/O, no database (tuner/hybrid.c gathers the rates).
 *
 * The model of one device on a box of n points: t(n) = launches * launch_us + bytes(n) / rate,
 * bytes(n) the box's effective bytes (fdt_effective_bytes of the box as a problem of its own:
 * the halo it reads counts) and rate the device's tuned effective bandwidth with the launches
 * of the measured step taken out of it, so that t of the whole grid is the measured time. A
 * CPU's data-parallel part of k planes is not the grid: its arrays stay in the host's caches
 * from step to step. Where the CPU's thin part of m planes was timed alone (part_ms), its
 * first min(k, m) planes go at that rate and the rest at the grid's.
 *
 * The overlap rule (the runner, eval/hybrid.c, does the same): every step each device first
 * computes the points the other needs (data-parallel: its R planes beside the cut), then the
 * copies of those run, both directions at once where the link allows, while each device
 * computes the rest of its part; the step ends when both parts and the copies are done, then
 * the devices synchronise once. So t = max(t_gpu, t_cpu, max(first_gpu, first_cpu) + t_copy)
 * + sync. Task-parallel computes each part whole first (first = t: the interior box and the
 * six slabs, not cut at the faces the other reads), so its copies follow both parts. With
 * unified memory (APU, NVLink-C2C, host-mapped) nothing is copied, but both parts draw on one
 * memory: their bytes over the shared bandwidth are a floor under the step. */
#ifndef FDT_HYBRID_H
#define FDT_HYBRID_H

#include <stdint.h>

#include "fdt_common.h"
#include "fdt_gen.h"

typedef enum {
    FDT_HYB_GPU,  /* GPU only */
    FDT_HYB_CPU,  /* CPU only */
    FDT_HYB_DATA, /* data-parallel: f of the z planes on the CPU */
    FDT_HYB_TASK, /* task-parallel: the CPU the layers, the GPU the interior */
    FDT_HYB_COUNT
} fdt_hybrid_strategy;

/* "gpu", "cpu", "data", "task". */
const char *fdt_hybrid_strategy_name(fdt_hybrid_strategy s);

/* Deployments, as the config parameter deploy numbers them (FDT_DEPLOY_*). */
enum {
    FDT_HYB_COMPLETE = FDT_DEPLOY_COMPLETE,
    FDT_HYB_INOUT = FDT_DEPLOY_INOUT,
    FDT_HYB_SIDES = FDT_DEPLOY_SIDES,
    FDT_HYB_NDEPLOY
};

/* What one device measured for the problem. Every rate is an effective bandwidth in GB/s
 * (1e9 bytes/s): fdt_effective_bytes of the problem over the measured time of one step. */
typedef struct fdt_hybrid_dev {
    char name[128];        /* the device's name, for the text (database: devices.name) */
    double gbs;            /* the tuned best for the problem, any config (database: the best
                              evaluation of the device and problem); 0: none measured */
    double deploy_gbs[FDT_HYB_NDEPLOY]; /* the best evaluation whose config has deploy=complete,
                              inout, sides (dwave only): a full one, else a probe (a
                              deployment slower than the best is often only probed); 0: not
                              measured */
    int deploy_probe[FDT_HYB_NDEPLOY]; /* 1: deploy_gbs[k] is a probe's (no full evaluation) */
    double layers_ms;      /* the sides deployment's six slabs alone, ms: the least of the
                              sides evaluations' layer times (database: evaluations.layers_ms;
                              a full one, else a probe), what task-parallel leaves to this
                              device; 0: not measured */
    int layers_probe;      /* 1: layers_ms is a probe's */
    int remeasured;        /* gbs is the median of this many re-measurements of the best's
                              config (its other ok full evaluations: the one that chose it is
                              the low tail of its times); 0: gbs is the choice's own */
    double own_gbs;        /* the choice's own measurement (gbs when remeasured is 0) */
    int layers_remeasured; /* the same for layers_ms: the median of this many other
                              measurements of its config's layer time; 0: the choice's own */
    double part_ms;        /* a CPU: its best config's damped kernel over the grid's first
                              part_planes planes alone, back to back (database:
                              evaluations.part_ms: the median of that config's ok
                              evaluations'), how a data-parallel CPU part runs: its arrays
                              stay in the host's caches from step to step; 0: not measured */
    int part_planes;       /* those planes (fdt_gen_part_planes: 2R) */
    int part_n;            /* the measurements part_ms is the median of */
    double interior_gbs;   /* the undamped wave at the same grid, R and precision (the interior
                              kernel's expression); 0: not measured */
    double copy_gbs;       /* the device's copy bandwidth measured in those runs (database:
                              the runs' copy_gbs); 0: unknown */
    double launch_us;      /* one kernel launch, microseconds (an assumed figure unless
                              measured; the caller says) */
    double flops_gfs;      /* the device's peak FP rate at the problem's precision, GFLOP/s
                              (GPU: the architecture's facts x compute units x clock; CPU:
                              cores x vector lanes x 2 x clock); 0: unknown */
} fdt_hybrid_dev;

/* The host<->device link (database: fdt_db_link of the GPU). */
typedef struct fdt_hybrid_link {
    double h2d_gbs, d2h_gbs; /* pinned copies, one direction at a time, GB/s; 0: unknown */
    double both_gbs;         /* each direction while both run at once; 0: not measured (the
                                planner then runs the two directions one after the other) */
    double latency_us;       /* a small copy's time, microseconds */
    double row_ns;           /* a box copy's time a row beyond the latency, nanoseconds: a
                                face's copy takes the longer of its rows' time and its bytes'
                                (0: not measured, bytes alone) */
    int unified;             /* 1: the GPU reads host memory in place: nothing is copied */
    double shared_gbs;       /* unified: the bandwidth of the memory both draw from, GB/s;
                                0: unknown (no floor) */
} fdt_hybrid_link;

/* The planner's input. */
typedef struct fdt_hybrid_in {
    fdt_problem p;         /* the problem (dwave for task-parallel: its layer width W) */
    fdt_hybrid_dev gpu, cpu;
    fdt_hybrid_link link;
    double sync_us;        /* the per-step synchronisation of the two devices, microseconds */
    double beside;         /* a discrete GPU's copies while its kernels run: the share of their
                              own rate they make then, in [0, 1] (0: they wait for the kernels) */
} fdt_hybrid_in;

/* One device's share of a split step. */
typedef struct fdt_hybrid_part {
    double points;     /* output points */
    double bytes;      /* their effective bytes (the boxes' own halos counted) */
    double gbs;        /* the measured rate taken (GB/s) */
    double net_gbs;    /* that rate with its step's launches taken out (fdt_hybrid_net_gbs) */
    int launches;      /* kernel launches per step */
    double launch_us;  /* each */
    double thin_bytes; /* of bytes, those at the thin part's rate: a CPU part's first
                          thin_planes planes (fdt_hybrid_dev.part_ms); 0: none */
    int thin_planes;
    double thin_gbs;   /* that rate, its launch taken out */
    double t_ms;       /* thin_bytes / thin_gbs + the rest / net_gbs + launches * launch_us */
    double first_ms;   /* the part of it the other device needs, computed first */
} fdt_hybrid_part;

/* One strategy's prediction. */
typedef struct fdt_hybrid_pred {
    int ok;                /* 1: predicted; 0: not possible (why says so) */
    char why[200];         /* when ok = 0, why not; when ok, what a rate was taken for where
                              the measured one is missing ("" when all were measured) */
    fdt_hybrid_part gpu, cpu;
    double copy_bytes;     /* per step from the GPU to the CPU (device to host) */
    double copy_rows;      /* the rows of those boxes (a face of R points along x: a row of R
                              values per (y, z)) */
    double copy_bytes_h2d; /* the same from the CPU to the GPU (data-parallel: a CPU part */
    double copy_rows_h2d;  /* thinner than R sends its planes alone) */
    double copy_ms;        /* those copies (both directions, at once where the link was
                              measured so: the shorter at that rate, the rest of the longer at
                              its direction's own), latencies included: each box the longer
                              of its rows' time and its bytes' */
    double exch_ms;        /* max(first_gpu, first_cpu) + copy_ms: when the halos are there */
    double serial_ms;      /* a discrete GPU's step and what its copies have left when its
                              kernels end: gpu.t_ms + max(0, copy_ms - beside x (gpu.t_ms -
                              gpu.first_ms)); 0 with unified memory */
    double floor_ms;       /* the memory both draw on: unified, both parts' bytes over the
                              shared bandwidth; discrete, the CPU part's bytes and the copies'
                              (both read or write host memory) over the CPU's copy bandwidth;
                              0 where that bandwidth is unknown */
    double sync_ms;
    double t_ms;           /* the prediction per step */
    const char *bound;     /* what sets t: "gpu", "gpu+copies" (serial_ms), "cpu", "exchange",
                              "memory" (the floor) */
} fdt_hybrid_pred;

/* The paper's decision (004, section 3, figure 4) in measured terms. */
typedef struct fdt_hybrid_decision {
    double flops_pt;        /* floating-point operations per point of the step */
    double bytes_pt;        /* effective bytes per point */
    double intensity;       /* flops_pt / bytes_pt */
    double gpu_balance;     /* the GPU's flops_gfs / copy_gbs (flop per byte); 0: unknown */
    int compute_bound;      /* 1 above the balance, 0 below, -1 unknown */
    double layer_cost;      /* GPU: time per layer point over time per interior point, from
                               the best deployment's step and the interior kernel's (the GPU's
                               best way with the layers is what a CPU would relieve); 0:
                               unknown (needs dwave deployments and the interior rate) */
    double layer_cost_by[FDT_HYB_NDEPLOY]; /* the same from each deployment's step (complete:
                               the paper's divergence, layers and interior in one kernel);
                               0: that deployment not measured */
    int divergent;          /* 1: layer_cost >= FDT_HYB_DIVERGENT, 0 below, -1 unknown */
    fdt_hybrid_strategy paper; /* what the paper's strategy picks: task when divergent,
                               else data (GPU only is not among its choices) */
} fdt_hybrid_decision;

/* A point of the layers costing the GPU this many times a point of the interior counts as
 * divergent (the paper's "empirical threshold"; ours, stated). */
#define FDT_HYB_DIVERGENT 1.5

/* A split (data or task) is chosen over the faster single device only when it predicts at
 * least this gain: below it, the prediction's error (the issue asks for 15%) and the CPU's
 * cores spent are not worth the split. */
#define FDT_HYB_MARGIN 0.03

typedef struct fdt_hybrid_plan {
    fdt_hybrid_pred s[FDT_HYB_COUNT];
    int64_t cpu_planes;    /* data-parallel: the z planes on the CPU (best found) */
    double f;              /* cpu_planes / nz */
    double f_balance;      /* the rates' ratio cpu / (cpu + gpu) (the paper's first guess) */
    int64_t interior[3];   /* task-parallel: the interior box's extents (n - 2W) */
    fdt_hybrid_strategy choice; /* the fastest predicted (a split only by FDT_HYB_MARGIN) */
    char why[240];         /* the choice in one sentence with its numbers */
    double gain;           /* 1 - t(choice) / t(gpu only) */
    double split_gain;     /* 1 - t(best split) / t(gpu only) (negative: a split loses) */
    fdt_hybrid_decision d;
} fdt_hybrid_plan;

/* Predicts every strategy of in and chooses the fastest. Fails (-1, e says "what: why") when
 * the problem is not valid or the GPU has no rate; a CPU without a rate leaves GPU only (the
 * other strategies not ok, saying why). Task-parallel needs dwave. */
int fdt_hybrid_plan_make(const fdt_hybrid_in *in, fdt_hybrid_plan *out, fdt_err *e);

/* The data-parallel prediction with the z planes [0, cpu_planes) on the CPU and the rest on
 * the GPU, for a runner to set beside its measurement at a fraction of its own (the plan's
 * s[FDT_HYB_DATA] is this at the best cpu_planes). Fails (-1, e says why) as
 * fdt_hybrid_plan_make does, when the CPU has no rate, or when cpu_planes is not in
 * [1, nz - 1]. */
int fdt_hybrid_predict_data(const fdt_hybrid_in *in, int64_t cpu_planes, fdt_hybrid_pred *out,
                            fdt_err *e);

/* The predicted time per step (ms) of a run of strategy k beside plan (made from in): the
 * plan's, but data-parallel at the run's own cpu_planes (fdt_hybrid_predict_data); NaN when
 * the plan has none for it. */
double fdt_hybrid_predicted_ms(const fdt_hybrid_in *in, const fdt_hybrid_plan *plan,
                               fdt_hybrid_strategy k, int64_t cpu_planes);

/* The rate of a device's work alone: gbs measured over p's whole grid in a step of
 * measured_launches launches of launch_us each, those launches taken out (never counted as
 * more than half the step). */
double fdt_hybrid_net_gbs(const fdt_problem *p, double gbs, int measured_launches,
                          double launch_us);

/* The time (ms) of one device on an n[0] x n[1] x n[2] box of problem p, by the model above:
 * the box's effective bytes at fdt_hybrid_net_gbs, plus launches launches of launch_us. Of
 * the whole grid with the measured launches it gives the measured time. */
double fdt_hybrid_box_ms(const fdt_problem *p, const int64_t n[3], double gbs,
                         int measured_launches, int launches, double launch_us);

#endif
