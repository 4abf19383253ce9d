/* Search strategies and fdtune's analytic performance model. A strategy walks a list of
 * configs (the recipe's surviving space) and proposes which to measure next; results are
 * reported back as they come. `exhaustive` takes the space in recipe order, `random` a seeded
 * permutation, `model` ranks every config by the model's predicted time, measures the best
 * ranked first and then the one-parameter neighbourhoods of the best measured configs. The
 * same strategies replay offline against times already measured, which is how they are
 * compared and tested without a GPU. */
#ifndef FDT_SEARCH_H
#define FDT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_common.h"
#include "fdt_gen.h"
#include "fdt_recipe.h"
#include "fdt_rt.h"

typedef enum { FDT_SEARCH_EXHAUSTIVE, FDT_SEARCH_RANDOM, FDT_SEARCH_MODEL } fdt_search_kind;

const char *fdt_search_kind_name(fdt_search_kind k);
int fdt_search_kind_parse(const char *s, fdt_search_kind *k, fdt_err *e);

/* ------------------------------------------------------------------ model */

/* What one output point costs on chip (fdt_model_onchip), counted from the template of the
 * config's kernel family (generator/source.c's table: direct, window, tile, ring, stream) per
 * thread and z plane over the thread's TILE x VEC outputs. */
typedef struct fdt_onchip {
    double shared_bytes;  /* shared memory (LDS) bytes: loads, stores, the ring's copies'
                             writes (0 without a tile) */
    double shared_inst;   /* shared-memory instructions (a copy counts one) */
    double l1_bytes;      /* bytes of the global loads and stores through L1: every
                             neighbour a thread loads where no tile shares them, else the
                             tile's fill; wave's point-wise inputs; the stores */
    double l1_wavefronts; /* what those cost in L1 wavefronts (128 bytes on NVIDIA), one
                             more for each access that starts off a line */
    double copy_clk;      /* the copy engine's clocks (bulk=1: the tensor copies' bytes into
                             shared memory, which no thread issues); 0 without the form */
    double fp;            /* floating-point instructions: per axis one multiply and an add
                             and an FMA per symmetric pair, then the combination (lap R=4:
                             30); the stream's streaming sums 6R + 4 (lap R=4: 28) */
    double inst;          /* issued instructions per point: fp, the memory instructions
                             (NVIDIA; AMD issues them beside the vector ALU), the window's
                             register moves, address, guard and loop overhead (estimated:
                             fitted to the stream's SASS and ncu counts) */
    double code_bytes;    /* the kernel's sm_90 machine code, estimated for the ring and the
                             stream of lap and wave (their march unrolled by 2 R_z + 1 steps);
                             0 where not estimated */
    double code_margin;   /* the factor over a limit from which the estimate is surely over
                             it (above the fit's largest error) */
} fdt_onchip;

/* The on-chip counts of (p, c) on dev's architecture (whose copies may be asynchronous, and
 * whose L1 line and wave size set the wavefronts). */
void fdt_model_onchip(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                      fdt_onchip *o);

/* The limit that binds a prediction (fdt_model_terms.bound). */
typedef enum {
    FDT_BOUND_DRAM,    /* DRAM bytes at the achievable bandwidth */
    FDT_BOUND_L2,      /* L2 bytes */
    FDT_BOUND_L1,      /* L1 wavefronts of the global loads and stores */
    FDT_BOUND_SHARED,  /* shared-memory bytes */
    FDT_BOUND_ISSUE,   /* instructions at the issue rate */
    FDT_BOUND_FP,      /* floating-point instructions at the FP32 or FP64 rate */
    FDT_BOUND_LATENCY, /* the slowest unit waits longer than it works: too few bytes in
                          flight for the DRAM latency, or too few resident waves for the
                          latency of dependent instructions on chip */
    FDT_BOUND_LLC,     /* a CPU's last-level cache bytes (the CPU form) */
    FDT_BOUND_CORE,    /* a CPU core's loads and instructions (the CPU form) */
    FDT_BOUND_COUNT
} fdt_bound;

/* "dram", "l2", "l1", "shared", "issue", "fp", "latency", "llc", "core". */
const char *fdt_bound_name(fdt_bound b);

/* The model's terms for one config, for --dry-run and for tests. Each t_*_ms is the time one
 * unit needs at its full rate; the prediction is a soft maximum (the fourth root of the sum of
 * fourth powers) of the DRAM time over latency_eff and the L2 time, beside one of the on-chip
 * times over chip_eff, and (bulk=1) the copy engine's time, the slowest of these sides
 * dominating more sharply (the eighth root), over tail_eff, plus t_wave_ms, t_halo_ms and the
 * launches. */
typedef struct fdt_model_terms {
    double dram_bytes, l2_bytes; /* predicted traffic of one launch sequence */
    double t_dram_ms, t_l2_ms;   /* each at the device's bandwidth */
    double t_l1_ms;              /* L1 wavefronts of the global loads and stores */
    double t_shared_ms;          /* shared-memory bytes at the CU's shared bandwidth */
    double t_issue_ms;           /* instructions at the CU's issue rate */
    double t_fp_ms;              /* floating-point instructions at the FP32 or FP64 rate */
    double t_copy_ms;            /* the copy engine's bytes (bulk=1), asynchronous to the
                                    threads: a side of its own beside DRAM/L2 and the four
                                    above; bound "l1" where it binds; 0 without the form */
    fdt_onchip onchip;           /* the per-point counts behind the four above */
    double llc_hit;              /* fraction of the z-neighbour re-reads served by the LLC */
    int regs;                    /* per thread: compiled, or estimated when not compiled */
    int regs_estimated;
    int threads_per_cu;          /* resident: limited by registers, shared memory, threads */
    double occupancy;            /* threads_per_cu / the CU's thread limit */
    double latency_eff;          /* bytes in flight against what the DRAM bandwidth needs
                                    (<= 1) */
    double chip_eff;             /* the share of their rate the on-chip units reach with the
                                    resident waves (<= 1; fdt_arch.occ_half) */
    double tail_eff;             /* blocks against whole waves of resident blocks (<= 1) */
    double t_wave_ms;            /* the architecture's cost per wave launched (AMD; 0 on
                                    NVIDIA), added to the time */
    double t_halo_ms;            /* the DRAM steps of the 2 R_z planes a block fills before
                                    the first output of its z column (nw >= 1; 0 without a
                                    z column), added to the time */
    double code_bytes;           /* machine code: compiled, or estimated for a ring or a
                                    stream (fdt_onchip.code_bytes) where the architecture
                                    has a measured limit; 0: unknown */
    int code_over;               /* code_bytes outgrow that limit (an estimate by its
                                    margin, fdt_onchip.code_margin): the config ranks last,
                                    as a spilling one does */
    fdt_bound bound;             /* the largest term of the slower side, or latency when
                                    that side's efficiency (latency_eff for DRAM, chip_eff on
                                    chip) is below 0.75 */
    double time_ms;              /* prediction */
    /* The CPU form's (search/cpu_model.c; zero in the GPUs' form, whose fields above it
     * leaves at zero but dram_bytes, l2_bytes, t_dram_ms, t_l2_ms, t_fp_ms, onchip.fp and
     * onchip.inst: the vector FP instructions and the core's cycles per point, and llc_hit:
     * the share of the re-reads that outgrow L2 the LLC serves). */
    int cpu;                     /* 1: the CPU form filled these terms */
    double llc_bytes;            /* bytes re-read from the last-level cache */
    double t_llc_ms;             /* those at a core's LLC bandwidth */
    double t_core_ms;            /* the core's loads and instructions at the assumed clock */
    int threads;                 /* the threads the config runs */
    double copy_gbs;             /* the copy bandwidth the DRAM term is taken of */
    int copy_measured;           /* 1: the device's own (achievable_bw_gbs); 0: estimated per
                                    core */
    double clock_ghz;            /* the clock the core terms assume (the device reports none) */
    /* dwave's deployments (fdt_config.deploy): each launch is predicted over its box (the
     * damped kernel's as dwave, the interior kernel's as wave) and the times add up, every
     * launch with its cost; the terms above are then the largest launch's, with the bytes
     * and the times (t_*_ms, time_ms) summed over the launches. */
    int boxes;                   /* launches of one step: 1, or the deployment's boxes */
} fdt_model_terms;

/* Predicted time of (p, c) on dev. res: the compiled resources, or NULL to estimate them.
 * terms may be NULL. Returns a positive time (ms). The form follows dev's target (the
 * dialect of the backend that claims its architecture): a C-dialect target (the host CPU)
 * takes the CPU form (fdt_cpu_model_time), every other the GPUs'. dwave is its deployment's
 * launches summed (fdt_model_terms.boxes), each in that form; a config that cannot run one
 * of its boxes (fdt_gen_deploy) ranks last (1e9 ms). */
double fdt_model_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                      const fdt_rt_resources *res, fdt_model_terms *terms);
/* 1 when dev's target takes the CPU form of the model (its dialect is C); 0 otherwise,
 * also when no backend claims dev's architecture. */
int fdt_model_cpu_form(const fdt_device *dev);
/* The CPU form (search/cpu_model.c): the predicted time (ms) of C-dialect config c for p on
 * CPU device dev, from DRAM, LLC and L2 bytes per point, the core's instructions and its FP
 * work, each at its rate, the largest naming the bound (dram, llc, l2, core, fp). Facts dev
 * does not give are assumed (terms say which: copy_measured, clock_ghz). terms may be NULL. */
double fdt_cpu_model_time(const fdt_problem *p, const fdt_config *c, const fdt_device *dev,
                          fdt_model_terms *terms);
/* One line: "dram 0.356 l2 0.210 l1 0.150 shared 0.000 issue 0.101 fp 0.040 ms, llc hit
 * 1.00, regs ~64, occ 1.00, lat 1.00, chip 0.90, tail 0.99 -> 0.361 ms, bound dram"; the CPU
 * form's: "dram 4.12 llc 1.05 l2 0.00 core 2.10 fp 0.44 ms, llc hit 1.00, 2 threads, copy
 * 30 GB/s (estimated: 15 per core), clock 2.5 GHz (assumed) -> 4.76 ms, bound dram". */
void fdt_model_describe(const fdt_model_terms *t, fdt_sb *out);

/* ------------------------------------------------------------------ the model's ranking */

/* One row of the model's ranking of a space. */
typedef struct fdt_ranked {
    char config[256];         /* canonical text */
    fdt_config cfg;
    double pred_ms;           /* the model's predicted time */
    double pred_gbs;          /* the effective bandwidth that time means */
    fdt_model_terms terms;
    int merged;               /* ranked configs collapsed into this row (see below) */
} fdt_ranked;

typedef struct fdt_model_ranking {
    fdt_recipe_stats stats;   /* space, survivors, what each rule pruned */
    size_t n;                 /* configs ranked: every survivor */
    size_t ntop;              /* rows of top: the smaller of n and the top asked for */
    fdt_ranked *top;          /* the model's ranking, best first */
    /* A ranked config whose prediction has every term (fdt_model_terms) of a row above it
     * and whose config differs from that row's in one parameter alone (one the model ignores
     * there, such as nt) is collapsed into that row rather than shown. */
    size_t collapsed;         /* configs collapsed into the rows of top */
    unsigned collapsed_params; /* bit i: fdt_config_params()[i] was what differed */
} fdt_model_ranking;

/* fdt_model_rank's status when the recipe fails on the problem (a constraint raising, an op
 * it does not serve); e says how. */
#define FDT_RANK_RECIPE (-2)

/* The model's ranking of recipe r's space for problem p on dev (a visible device, or one
 * described from the catalogue): enumerates and prunes the space (fdt_recipe_enumerate),
 * predicts every survivor (fdt_model_time, resources estimated) and keeps the best `top` by
 * the model strategy's order (fdt_search_ranking), its first row the model's top-ranked
 * config. The walk costs what the space costs: lap and wave at R=4 walk 4.5 million points
 * (seconds). Returns 0, FDT_RANK_RECIPE, or -1 (out of memory). */
int fdt_model_rank(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev, int top,
                   fdt_model_ranking *out, fdt_err *e);
void fdt_model_ranking_free(fdt_model_ranking *k);

/* ------------------------------------------------------------------ strategies */

typedef struct fdt_search fdt_search;

/* Copies the space. The model strategy predicts every config with fdt_model_time. */
int fdt_search_new(fdt_search_kind kind, const fdt_config *space, size_t n, const fdt_problem *p,
                   const fdt_device *dev, uint64_t seed, fdt_search **s, fdt_err *e);
/* The same with the predictions given (predicted[i] > 0 for config i; lower is better), for
 * synthetic landscapes in tests. predicted may be NULL for exhaustive and random. */
int fdt_search_new_predicted(fdt_search_kind kind, const fdt_config *space, size_t n,
                             const double *predicted, uint64_t seed, fdt_search **s, fdt_err *e);
/* The next config to measure: 0 and *idx set, or 1 when every config has been proposed.
 * Several may be taken before their results are reported (batches). */
int fdt_search_next(fdt_search *s, size_t *idx);
/* Result of config idx: ok with a time, or failed. Also for configs measured elsewhere
 * (resumed from the database): they are then never proposed. */
void fdt_search_report(fdt_search *s, size_t idx, int ok, double ms);
/* Best reported so far: 0 with idx and ms, or -1 when nothing succeeded. */
int fdt_search_best(const fdt_search *s, size_t *idx, double *ms);
/* Configs by predicted time, best first (model strategy; NULL for the others). */
const size_t *fdt_search_ranking(const fdt_search *s);
/* The prediction for config idx (ms), or 0 when the strategy has none. */
double fdt_search_predicted(const fdt_search *s, size_t idx);
void fdt_search_free(fdt_search *s);

/* ------------------------------------------------------------------ replay */

#define FDT_REPLAY_NWITHIN 3
extern const double fdt_replay_within[FDT_REPLAY_NWITHIN]; /* 0.01, 0.03, 0.10 */

typedef struct fdt_replay {
    size_t n;          /* configs with a recorded outcome */
    size_t best_idx;   /* the recorded best */
    double best_ms;
    size_t evals_to_best; /* evaluations the strategy needed to propose the best */
    size_t evals_within[FDT_REPLAY_NWITHIN]; /* ... to propose one within 1%, 3%, 10% */
} fdt_replay;

/* Runs a strategy against recorded outcomes: time_ms[i] > 0 is config i's time, <= 0 a
 * failure. predicted: as for fdt_search_new_predicted, NULL to use the model with p and dev.
 * Fails when nothing in the record succeeded. */
int fdt_search_replay(fdt_search_kind kind, const fdt_config *space, size_t n,
                      const double *time_ms, const double *predicted, const fdt_problem *p,
                      const fdt_device *dev, uint64_t seed, fdt_replay *out, fdt_err *e);

#endif
