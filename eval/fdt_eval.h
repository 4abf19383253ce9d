/* Evaluating candidates on a GPU. A worker process owns one device: it allocates the
 * halo-padded arrays, fills them from a seeded generator, computes the reference output with
 * the simplest generated kernel (itself checked against the double-precision CPU reference),
 * and then verifies and times candidates. A candidate that crashes, hangs or corrupts the
 * context takes down the worker, not fdtune: the parent records the status and restarts it.
 * The parent never initialises a GPU driver itself; it compiles (in child processes) and
 * sends code objects to the worker. Bench evaluates given configs: on a worker, or without a
 * GPU by compiling them for the default targets. */
#ifndef FDT_EVAL_H
#define FDT_EVAL_H

#include "fdt_common.h"
#include "fdt_gen.h"
#include "fdt_rt.h"
#include "fdt_target.h"

typedef enum {
    FDT_EVAL_OK,
    FDT_EVAL_WRONG,         /* ran, but the output or the halo is wrong */
    FDT_EVAL_COMPILE_ERROR,
    FDT_EVAL_PRUNED,        /* not run: static resources (spills, shared memory, registers) */
    FDT_EVAL_LAUNCH_ERROR,  /* refused at launch (e.g. too many resources) */
    FDT_EVAL_CRASHED,       /* killed the context or the worker process */
    FDT_EVAL_TIMEOUT,       /* did not finish within the per-candidate limit */
    FDT_EVAL_STATUS_COUNT
} fdt_eval_status;

const char *fdt_eval_status_name(fdt_eval_status s);

/* ---------------------------------------------------------------- devices */

#define FDT_MAX_DEVICES 16

typedef struct fdt_backend_probe {
    char name[8];      /* backend */
    int available;     /* driver loaded */
    int count;         /* devices visible */
    char message[512]; /* why unavailable, or empty */
    char compiler[48]; /* compiler version or "unavailable: why" */
} fdt_backend_probe;

typedef struct fdt_probe {
    int nbackends;
    fdt_backend_probe backend[4];
    int ndevices;
    fdt_device device[FDT_MAX_DEVICES];
} fdt_probe;

/* Lists the devices of every GPU backend, in a child process (a wedged driver cannot hang
 * fdtune and this process stays free of GPU state). The host CPU is not among them. */
int fdt_probe_devices(fdt_probe *p, fdt_err *e);
/* Describes the host CPU (backend cpu, device 0) with its facts and the C compiler that
 * builds its kernels, in a child process. Fails saying why: no C compiler ($CC named), one
 * without OpenMP, an unsupported processor. */
int fdt_probe_host(fdt_device *d, fdt_err *e);

/* ---------------------------------------------------------------- timing */

typedef struct fdt_timing_opts {
    int warmup;         /* launches before timing */
    int min_reps, max_reps;
    double max_seconds; /* of timed launches, per candidate */
    double stable;      /* stop when the median moved less than this fraction (e.g. 0.005) */
} fdt_timing_opts;

void fdt_timing_opts_default(fdt_timing_opts *o); /* full sample */
void fdt_timing_opts_probe(fdt_timing_opts *o);   /* cheap probe: a few launches */

typedef struct fdt_timing {
    double median_ms, min_ms, max_ms, q1_ms, q3_ms;
    int reps, outliers; /* outliers: beyond q3 + 1.5 IQR or below q1 - 1.5 IQR */
    int flushed;        /* last-level cache flushed before each launch */
} fdt_timing;

/* Statistics of n samples (sorted in place). */
void fdt_timing_stats(double *ms, int n, fdt_timing *t);

/* ---------------------------------------------------------------- results */

typedef struct fdt_verify {
    uint64_t checked, bad, nonfinite, touched, input_changed;
    double max_err, rel_err, tol; /* rel_err: ||out - ref||_2 / ||ref||_2 */
    int64_t first[3];             /* padded coordinates of the first bad point, or -1 */
    int rerun_changed;            /* output differed after timing (a race) */
} fdt_verify;

typedef struct fdt_eval_result {
    fdt_eval_status status;
    char message[1024];
    fdt_verify verify;
    fdt_timing timing;
    double gbs;        /* effective bandwidth (seeds' formula) */
    double frac_copy;  /* gbs / copy bandwidth measured by this worker */
    fdt_rt_resources res;
    double compile_s;
    double layers_ms;  /* dwave inout/sides: the median of the layer kernels alone (every
                          launch of the step but the interior's), timed after the step;
                          0: none (one box) */
    double part_ms;    /* dwave on a host CPU: the median of the damped kernel over the grid's
                          first fdt_gen_part_planes planes alone, back to back without the
                          cache flush (a data-parallel hybrid step's CPU part); 0: none */
    int64_t line, offset; /* layout the kernel ran with (elements) */
    fdt_clocks clocks;    /* the GPU's clocks right after it (known 0: not read) */
} fdt_eval_result;

/* What the worker established for a problem. */
typedef struct fdt_setup_result {
    double copy_gbs;         /* device-to-device copy, bytes read + written per second / 1e9 */
    double copy_ms;
    uint64_t ref_points;     /* points of the reference checked against the CPU */
    int ref_all_points;      /* 1: every interior point was checked */
    double ref_max_err, ref_tol;
    fdt_tolerance tol;
    double setup_s;
    size_t device_bytes;     /* allocated for the problem */
    int simulated;           /* 1: a simulated GPU answered (copy_gbs is the recorded one) */
    fdt_clocks clocks;       /* the GPU's clocks right after the setup (known 0: not read) */
} fdt_setup_result;

/* ---------------------------------------------------------------- worker */

typedef struct fdt_worker fdt_worker;

typedef struct fdt_worker_opts {
    uint64_t seed;         /* input data */
    int eval_timeout_ms;   /* per candidate, verification and timing included */
    int setup_timeout_ms;
    int compile_timeout_ms;
    const char *simulate_from; /* the recording a simulated GPU's worker answers from (the
                                  workers of backend FDT_SIM_BACKEND); NULL otherwise */
} fdt_worker_opts;

void fdt_worker_opts_default(fdt_worker_opts *o);

/* Bytes the worker writes (a GPU) or reads (a CPU: the backend's flush) before each timed
 * launch so that a problem that would fit in the last-level cache is timed from memory, not
 * from the cache: twice the largest of the L2, the Infinity Cache (d must be completed from
 * the catalogue for it: an MI300X's 256 MiB) and llc_bytes (a CPU's last-level caches,
 * total), for problems whose effective bytes are under four times that; 0 otherwise. */
uint64_t fdt_eval_flush_bytes(const fdt_device *d, const fdt_problem *p);

/* Starts a worker on (backend, index); returns the device description: the driver's,
 * completed from the installed GPU catalogue (fdt_catalogue_complete) when it knows the GPU,
 * so that the pruning and the flush see the Infinity Cache and a plausible peak bandwidth. */
int fdt_worker_start(const char *backend, int index, const fdt_worker_opts *o, fdt_worker **w,
                     fdt_device *info, fdt_err *e);
/* Measures the device-to-device copy bandwidth with buffers of `bytes` (each way). */
int fdt_worker_copy_bandwidth(fdt_worker *w, size_t bytes, double *gbs, fdt_err *e);
/* The same on a worker of its own, started on visible device d and stopped after. */
int fdt_device_copy_bandwidth(const fdt_device *d, size_t bytes, double *gbs, fdt_err *e);
/* The host<->device link of a device as its worker measures it: pinned copies of
 * FDT_LINK_BYTES, one direction at a time and both at once (two streams), a copy of
 * FDT_LINK_SMALL, and a box of FDT_LINK_ROWS rows of FDT_LINK_ROW bytes each way (a face of
 * R points along x is such a box: the copy engines take a time per row, whatever its bytes,
 * up to a few hundred bytes; H200: 2.9 ns a row of 16 to 128 bytes, 5.5-44 GB/s). */
#define FDT_LINK_BYTES ((size_t)64 << 20)
#define FDT_LINK_SMALL ((size_t)4 << 10)
#define FDT_LINK_ROWS ((size_t)1 << 16)
#define FDT_LINK_PLANES ((size_t)256)
#define FDT_LINK_ROW ((size_t)16)
typedef struct fdt_link {
    double h2d_gbs, d2h_gbs; /* GB/s (1e9), one direction at a time */
    double both_gbs;         /* each direction while both run at once */
    double latency_us;       /* the FDT_LINK_SMALL copy's time */
    double row_ns;           /* a narrow row's time in a box copy beyond the latency, the
                                slower direction's, nanoseconds */
    int unified;             /* the device reads the host's memory in place (backend unified) */
} fdt_link;
/* Measures the host link of the worker's device. */
int fdt_worker_link(fdt_worker *w, fdt_link *l, fdt_err *e);
/* The same on a worker of its own, started on visible device d and stopped after. */
int fdt_device_link(const fdt_device *d, fdt_link *l, fdt_err *e);
/* Records l as device d's newest link measurement (fdt_db_link_put; d gets its id). */
struct fdt_db;
int fdt_device_link_put(struct fdt_db *db, const fdt_device *d, const fdt_link *l, fdt_err *e);
/* Prepares a problem: arrays, inputs, the verified reference, the copy bandwidth. */
int fdt_worker_setup(fdt_worker *w, const fdt_problem *p, fdt_setup_result *r, fdt_err *e);
/* Verifies and (when correct) times one compiled candidate. Crashes and timeouts come back
 * as statuses (the worker is restarted and the problem set up again); -1 only when the
 * worker cannot be brought back. */
int fdt_worker_eval(fdt_worker *w, const fdt_config *c, const fdt_rt_code *code,
                    const char *kernel, const fdt_timing_opts *t, fdt_eval_result *r, fdt_err *e);
const fdt_device *fdt_worker_device(const fdt_worker *w);
/* The target of the worker's device (fdt_target_resolve, when the worker started): what its
 * candidates are built for. */
const fdt_target *fdt_worker_target(const fdt_worker *w);
/* The GPU's clocks as the worker last read them: after the latest setup or evaluation (the
 * start and the end of a run's measurements); known 0 when never read (AMD, simulated GPUs,
 * no NVML). */
const fdt_clocks *fdt_worker_clocks(const fdt_worker *w);
int fdt_worker_restarts(const fdt_worker *w);
void fdt_worker_stop(fdt_worker *w);

/* Name of the reference kernel of a problem (the default config under its own name). */
void fdt_eval_reference_name(const fdt_problem *p, char *buf, size_t n);

/* ---------------------------------------------------------------- one candidate */

/* Builds (config, problem) for the worker's target (fdt_target_build: generate, compile,
 * prune), then verifies and times it. Fills r in every case; -1 when c does not generate or
 * the worker cannot be kept going. */
int fdt_evaluate(fdt_worker *w, const fdt_problem *p, const fdt_config *c,
                 const fdt_timing_opts *t, fdt_eval_result *r, fdt_err *e);
/* The same for a candidate built for the worker's target: a failed build is a compile_error
 * result with its message, a pruned one a pruned result with the rule's reason (neither
 * runs), a ready one is verified and timed. r->compile_s is the candidate's. The resources
 * in r count the dynamic shared memory too. */
int fdt_evaluate_cand(fdt_worker *w, const fdt_problem *p, const fdt_cand *v,
                      const fdt_timing_opts *t, fdt_eval_result *r, fdt_err *e);

/* ---------------------------------------------------------------- simulated GPUs */

/* A simulated GPU answers evaluations from a recorded tuning database instead of running
 * them (eval/sim.c), so that tune, plan tasks, merge and export run end to end without a GPU.
 * Simulated GPU i of a node stands for the recording's real device i mod (their number), in
 * id order, and carries an identity of its own that marks every result: backend
 * FDT_SIM_BACKEND, the recorded name with " (simulated)", UUID "sim<i>-<recorded UUID>",
 * driver "simulated from <file name>", runtime and compiler "sim". Its worker answers a
 * probe with the recorded probe of the config and a full sample with the recorded full
 * sample (either with the other when only that one was recorded; of several, the fastest ok
 * row), its message naming the recording and the evaluation; a recorded crash ends the
 * worker as a real one would. A problem the recording does not have fails at setup, a config
 * it does not have fails the evaluation: fdt_sim_configs lists what it has, and a tuning run
 * restricts a simulated GPU's space to it.
 *
 * For tests, FDTUNE_SIM_FAULT="GPU:crash[@N],GPU:hang[@N]" makes simulated GPU number GPU
 * fail for good once its worker has answered N setups and evaluations (default 0: at its
 * first setup): its worker dies (crash) or stops answering (hang), and so does every worker
 * started on it later. FDTUNE_SIM_DELAY_MS delays each answer. */

/* The simulated node: n GPUs (1..FDT_MAX_DEVICES) from `recording`, listed as a probe. */
int fdt_sim_probe(const char *recording, int n, fdt_probe *p, fdt_err *e);

/* Receives a recorded config (canonical text); non-zero stops. */
typedef int (*fdt_sim_config_fn)(void *ctx, const char *config);
/* The config of every evaluation the recording has of problem p on the device simulated GPU
 * dev stands for (a config may come more than once: probe and full); *n: how many (0: the
 * problem is not recorded). fn may be NULL to count. */
int fdt_sim_configs(const char *recording, const fdt_device *dev, const fdt_problem *p,
                    fdt_sim_config_fn fn, void *ctx, size_t *n, fdt_err *e);

/* ---------------------------------------------------------------- bench: given configs */

/* One config compiled for one target, where no GPU can run it. */
typedef struct fdt_bench_compiled {
    char config[256];      /* the config's text, "(verification kernels)" or "(reference)" */
    const char *target;    /* the backend's default target (its example_arch) */
    int ok;                /* compiled; else err says why */
    fdt_rt_resources res;
    double seconds;
    fdt_err err;
} fdt_bench_compiled;

/* Without a GPU: compiles for every backend's default target what a GPU run of configs
 * cfgs[0..n) would compile first, the verification kernels and the reference, then each
 * config. *rows (malloc'ed, *nrows of them) in that order, a target after another per
 * kernel; returns the number that failed, or -1 when memory runs out (e). */
int fdt_bench_compile(const fdt_problem *p, const fdt_config *cfgs, int n,
                      fdt_bench_compiled **rows, int *nrows, fdt_err *e);

typedef struct fdt_bench_request {
    fdt_problem p;
    const fdt_config *cfgs;  /* the candidates, checked against p */
    int n;
    int timeout_s;           /* per candidate, verification and timing included */
    long seed;               /* input data; < 0: the worker's default */
    int probe;               /* a few launches per candidate instead of a full sample */
} fdt_bench_request;

typedef enum {
    FDT_BENCH_SETUP, /* the worker is being started on the device and set up for p */
    FDT_BENCH_BEGIN, /* candidate i of n begins */
    FDT_BENCH_DONE,  /* candidate i of n is done: r */
} fdt_bench_event_kind;

typedef struct fdt_bench_event {
    fdt_bench_event_kind kind;
    const fdt_device *dev;
    const fdt_problem *p;
    int i, n;
    const char *config;        /* BEGIN, DONE */
    const fdt_eval_result *r;  /* DONE */
} fdt_bench_event;

typedef void (*fdt_bench_progress)(void *ctx, const fdt_bench_event *ev);

typedef struct fdt_bench_result {
    fdt_setup_result setup;  /* the reference check and the copy bandwidth */
    uint64_t seed;           /* of the input data */
    int restarts;            /* of the worker, after crashes or timeouts */
    int n;                   /* results, one per candidate done */
    fdt_eval_result *res;
    int failures;            /* results not ok */
} fdt_bench_result;

/* On device d (a visible one): starts a worker, sets the problem up (verified reference,
 * copy bandwidth), then verifies and times each candidate in turn. FDT_STATUS_ERROR when the
 * worker cannot be started, set up or kept going (e); else FDT_STATUS_FAILED when a candidate
 * is not ok, FDT_STATUS_OK. Free out with fdt_bench_result_free whatever it returns. */
fdt_status fdt_bench_run(const fdt_bench_request *rq, const fdt_device *d,
                         fdt_bench_progress cb, void *ctx, fdt_bench_result *out, fdt_err *e);
void fdt_bench_result_free(fdt_bench_result *r);

#endif
