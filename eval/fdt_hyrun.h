/* The hybrid step's runner (issue 29, item 3): N time steps of the damped wave step (dwave)
 * split between two devices, each a backend with the kernels of one config, and the same N
 * steps on one device from the same initial field, compared point by point. A library: it
 * returns results and never prints. Modes:
 *   gpu-only, cpu-only: one device runs its config's deployment (fdt_gen_deploy) on the grid;
 *   data-parallel: z planes [0, nz_a) on device A, [nz_a, nz) on device B; each holds its
 *     planes plus R halo planes on each side (its own arrays, of the global x/y layout). A step
 *     computes first the planes at the cut the other reads (R, or all of a part thinner than
 *     R), copies them to the other device on a second stream while the rest of the part
 *     computes, waits, and swaps p and p_prev;
 *   task-parallel: device A the interior box [W, n-W)^3 with the interior kernel NAME_int,
 *     device B the six W-thick slabs with the damped kernel NAME; each holds the whole grid, and
 *     the R-thick faces each side reads of the other are exchanged after every step.
 * With shared memory (FDT_HYRUN_SHARE_*: a unified device, or host-mapped memory as its
 * stand-in) both devices use one allocation of the whole grid and nothing is copied.
 * Kernels are launched per box with the dwave ABI (fdt_gen_kernel_args): pointers into the
 * device's own arrays at the box's padded origin, global coordinates GX, GY, GZ. The run takes
 * place in a child process (a device fault or hang ends the child, not the caller). */
#ifndef FDT_HYRUN_H
#define FDT_HYRUN_H

#include "fdt_eval.h"

typedef enum {
    FDT_HYRUN_GPU,  /* device A alone, its deployment */
    FDT_HYRUN_CPU,  /* device B alone, its deployment */
    FDT_HYRUN_DATA, /* data-parallel at a fraction of the planes on B */
    FDT_HYRUN_TASK, /* task-parallel: A the interior, B the layers */
    FDT_HYRUN_MODES
} fdt_hyrun_mode;

/* "gpu-only", "cpu-only", "data-parallel", "task-parallel". */
const char *fdt_hyrun_mode_name(fdt_hyrun_mode m);
/* One of those names (also "gpu", "cpu", "data", "task"); fails naming them. */
int fdt_hyrun_mode_parse(const char *s, fdt_hyrun_mode *m, fdt_err *e);

/* When the two devices share one allocation instead of exchanging halos. */
typedef enum {
    FDT_HYRUN_SHARE_NEVER,   /* always copy (what CI checks: the exchange's code path) */
    FDT_HYRUN_SHARE_UNIFIED, /* when device A reads host memory in place (backend unified) */
    FDT_HYRUN_SHARE_ALWAYS,  /* host-mapped memory (pinned, mapped into A) as the stand-in */
} fdt_hyrun_share;

/* One device of the pair: a visible device (backend, index) and its kernels' config. */
typedef struct fdt_hyrun_side {
    fdt_device dev;
    fdt_config cfg;
    int has_layers;        /* device B, task-parallel: 1 to run the slabs with cfg_layers */
    fdt_config cfg_layers; /* the config whose slabs were timed fastest (fdt_hybrid_dev's
                            * layers_ms): which config runs the grid best and which runs its
                            * thin slabs best differ (the CPU's blocked family and its plain
                            * loop nest) */
} fdt_hyrun_side;

#define FDT_HYRUN_MAX_REPEAT 100 /* runs of one request at most (fdt_hyrun_request.repeat) */

typedef struct fdt_hyrun_request {
    fdt_problem p;            /* dwave */
    fdt_hyrun_side side[2];   /* [0] device A (the GPU), [1] device B (the CPU) */
    fdt_hyrun_mode mode;
    double fraction;          /* data-parallel: the share of the z planes on B, in (0, 1) */
    int steps, warmup;        /* timed steps (>= 1) after warm-up steps; the fields compared
                               * after steps + warmup steps */
    uint64_t seed;            /* the initial field: fdt_input_value(seed, ...), its c2 scaled
                               * into (c2_max/2, c2_max] (fdt_hyrun_c2_max) */
    fdt_hyrun_share share;
    int timeout_s;            /* of the whole run (the child is killed after it) */
    int repeat;               /* runs of the request, each in its own child process (fresh
                               * allocations, kernels, threads): the result is the run of
                               * the median step time, with the runs' spread (1..100) */
} fdt_hyrun_request;

/* Defaults: data-parallel at 0.25, 10 steps after 2, seed 20241122, share when unified,
 * 600 s, one run; p and side are the caller's. */
void fdt_hyrun_request_init(fdt_hyrun_request *rq);

typedef struct fdt_hyrun_result {
    fdt_hyrun_mode mode;
    int64_t nz_b;          /* data-parallel: planes on B; else 0 */
    int shared;            /* 1: one allocation, no copies */
    int shared_align;      /* shared memory, or data-parallel (whole planes exchanged as
                            * contiguous copies), with configs of two aligns: the larger, which
                            * both used (one layout; the other side's kernels built with it); 0
                            * when no config was changed */
    int realigned;         /* then the side whose config was changed: 0 A, 1 B */
    double step_ms;        /* median wall time of a step over the timed steps (with repeat:
                            * of the run whose median is the median of the runs' medians,
                            * every time of this result that run's) */
    int runs;              /* runs made (the request's repeat) */
    double step_min_ms;    /* the least and greatest step_ms of those runs (step_ms itself */
    double step_max_ms;    /* when runs == 1) */
    double exchange_ms;    /* median time of a step's copies (their own time: hidden when they
                            * overlap the computation); 0 when nothing is copied */
    double exchange_bytes; /* bytes copied per step, both directions */
    double gpu_ms;         /* median time of the GPU's boxes in a step (its main stream's
                            * events around them); 0 without a GPU part */
    double cpu_ms;         /* median host time of the CPU's boxes in a step; 0 without one */
    double single_ms;      /* the single-device step (device A, one damped box over the grid) */
    double max_abs_diff;   /* max |run - single| over the interior after the steps (with
                            * repeat: the largest of the runs; nonfinite too; bitwise: all) */
    double max_abs;        /* max |single| there (the scale of the difference) */
    int64_t nonfinite;     /* points where either field is not finite (left out of both
                            * maxima; any fails the agreement) */
    int bitwise;           /* 1: the two fields are identical bit for bit */
    double c2_max;         /* the initial field's c2 lies in (c2_max/2, c2_max]: below the CFL
                            * bound (fdt_hyrun_c2_max), so the N steps are stable */
} fdt_hyrun_result;

/* Checks rq before anything runs (its devices aside): dwave, a valid problem, steps >= 1,
 * a data-parallel fraction that leaves each device at least one plane. Fails saying which. */
int fdt_hyrun_check(const fdt_hyrun_request *rq, fdt_err *e);

/* Runs rq (rq->repeat times, each in a child process; fdt_hyrun_check first). Fails saying
 * why at the first run that fails: a bad request, a
 * split whose device B is not the host CPU, task-parallel with W < R, a config that cannot
 * run a box (with shared memory the config of the smaller align runs with the larger, see
 * shared_align) (a data-parallel part's cut box
 * grows until the config fits it), a device or compile error. */
int fdt_hyrun_run(const fdt_hyrun_request *rq, fdt_hyrun_result *r, fdt_err *e);

/* The tolerance of the agreement after `steps` steps: 16 * steps * eps * max|single| (eps of
 * p's precision: 2^-24 or 2^-53), an absolute bound on |difference|. */
double fdt_hyrun_tolerance(const fdt_problem *p, const fdt_hyrun_result *r, int steps);
/* 1 when r's field agrees with the single-device run to rounding after `steps` steps: every
 * point finite in both, and equal bit for bit or max |difference| <= fdt_hyrun_tolerance. */
int fdt_hyrun_agrees(const fdt_problem *p, const fdt_hyrun_result *r, int steps);

/* The stability of the runs' leapfrog step: c2 * rho < 4, rho the spectral radius of the
 * stencil L = sx d2x + sy d2y + sz d2z with scales q: (|sx|+|sy|+|sz|) (|c_0| + 2 sum |c_r|)
 * (the weights' symbol at the Nyquist wave number; R=1, unit scales: 12). */
double fdt_hyrun_spectral_radius(const fdt_problem *p, const fdt_params *q);
/* The c2 the runs use at most: FDT_HYRUN_CFL_SAFETY * 4 / rho. The agreement runs start from
 * the seeded p and p_prev (in (-1, 1)) with c2 in (c2_max/2, c2_max], the energy check with
 * c2 = c2_max and unit scales. */
#define FDT_HYRUN_CFL_SAFETY 0.9
double fdt_hyrun_c2_max(const fdt_problem *p, const fdt_params *q);

/* The energy check of the absorbing layer: a point source (a Ricker wavelet at the grid's
 * centre, unit axis scales and c2 = fdt_hyrun_c2_max, constant) on device side->dev with its
 * config, the damped step for W > 0 and the undamped step (the interior kernel over the
 * whole grid) for W = 0. before: sum of p^2 over the central region (every point farther
 * than the widest layer from the faces) when the pulse has left the source but not reached a
 * layer; after: the same when a wave reflected at the outer boundary would have crossed back
 * into it; ratio = after / before, which must stay below 1 and fall as W grows. */
typedef struct fdt_hyrun_energy {
    int W;
    int steps;             /* steps run */
    double before, after, ratio;
} fdt_hyrun_energy;
/* Whether the check can run: p dwave, each W[i] 0 or at most an eighth of the grid's
 * smallest extent (the pulse must leave the source before it reaches a layer). */
int fdt_hyrun_reflection_check(const fdt_problem *p, const int *W, int n, fdt_err *e);
/* For the n widths W[i] on p's grid, R and precision (p's W and S: S is used, W replaced by
 * each W[i]); in a child process (fdt_hyrun_reflection_check first). */
int fdt_hyrun_reflection(const fdt_hyrun_side *side, const fdt_problem *p, const int *W, int n,
                         fdt_hyrun_energy *out, int timeout_s, fdt_err *e);
/* 1 when the ratio falls strictly as W grows over the n results (in any order of W); 0 with
 * why set ("W=4: ...") when it does not, when an energy is not finite or not positive, or
 * when a ratio is not below 1 (the energy grew: an unstable step, not an absorbing layer). */
int fdt_hyrun_energy_falls(const fdt_hyrun_energy *en, int n, fdt_err *why);

#endif
