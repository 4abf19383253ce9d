/* The target of a candidate: what it is built for, as one concept. A target carries the
 * backend that compiles for it (its function table), the architecture's facts (runtime/arch.c),
 * the source dialect the generator emits for it, and the rules that judge a compiled
 * candidate's resources (prune, shared-memory check, occupancy). It is resolved once, from a
 * device (a worker's, a simulated GPU's) or from an architecture name where there is no
 * device (`gen --target`, bench without a GPU), and passed down: nothing below the tuner
 * guesses it from a name. Which backend an architecture belongs to is the backends' claim
 * (fdt_device_claim_of); what each backend's targets are (dialect, rules) is the table of
 * target kinds (target.c).
 *
 * One function builds candidates for a target (fdt_target_build): generate, compile through
 * the isolated, cached compile pool, prune. Every caller that makes kernels uses it: tune,
 * retune, evaluate, the worker's verification and reference kernels, bench, gen, export. */
#ifndef FDT_TARGET_H
#define FDT_TARGET_H

#include <stddef.h>

#include "fdt_arch.h"
#include "fdt_common.h"
#include "fdt_device.h"
#include "fdt_gen.h"
#include "fdt_rt.h"

typedef struct fdt_target fdt_target;

/* The rules that judge a compiled candidate on a kind of target: a table of functions, one
 * per kind of hardware. The GPUs' serves both vendors (their differences are fdt_arch data). */
typedef struct fdt_target_rules {
    const char *name; /* "gpu" */
    /* Why a compiled candidate should not run on t, in buf (returned), or NULL. */
    const char *(*prune)(const fdt_target *t, const fdt_rt_resources *res, const fdt_config *c,
                         const fdt_geometry *g, char *buf, size_t n);
    /* What a compiled kernel keeps in memory that belongs in registers (spills, and on AMD
     * scratch without spills), in buf (returned), or NULL. prune prunes on it. */
    const char *(*spills)(const fdt_target *t, const fdt_rt_resources *res, char *buf,
                          size_t n);
    /* 1 when c's on-chip memory for p exceeds what t allows (the reason in why), before any
     * compiling; 0 otherwise. */
    int (*shared_check)(const fdt_target *t, const fdt_problem *p, const fdt_config *c,
                        char *why, size_t n);
    /* One line on how many copies of a compiled kernel run at once on t, and what limits
     * them. */
    void (*occupancy)(const fdt_target *t, const fdt_rt_resources *res, const fdt_config *c,
                      const fdt_geometry *g, char *buf, size_t n);
} fdt_target_rules;

struct fdt_target {
    const fdt_rt_backend *backend; /* compiles for it; NULL when this build lacks the backend
                                      (or for a source-only target): it cannot compile */
    const fdt_arch *arch;          /* the architecture's facts; NULL for a source-only target */
    char arch_name[32];            /* what the compiler targets: "sm_90", "gfx90a:xnack-" */
    fdt_device device;             /* the device it was resolved from; for an architecture
                                      alone, its identity only (backend, vendor, arch; live 0:
                                      the rules then take the architecture's limits) */
    fdt_gen_target gen;            /* the source dialect the generator emits for it */
    const fdt_target_rules *rules; /* NULL for a source-only target */
};

/* The target of device d: its backend (d->backend, else the one that claims its arch; NULL
 * when not in this build), the facts of its architecture (fdt_arch_of), and the dialect and
 * rules of the backend that claims the arch. Fails ("device NAME: ...") when no backend
 * claims d's architecture. */
int fdt_target_resolve(const fdt_device *d, fdt_target *t, fdt_err *e);

/* The target of an architecture name where there is no device ("sm_90", "gfx942"): the
 * backend that claims it (NULL when this build lacks it), its facts, dialect and rules. Fails
 * when no backend claims arch or the name is longer than a device's arch field holds. */
int fdt_target_for_arch(const char *arch, fdt_target *t, fdt_err *e);

/* 1 when device d is a CPU: its target (fdt_target_resolve) is written in the C dialect; 0
 * for a GPU and for a device no backend claims. The one rule that tells them apart where a
 * command names a kind of device (--gpu never names a CPU, --cpu never a GPU; an export
 * writes each its own part). */
int fdt_target_device_is_cpu(const fdt_device *d);

/* A source-only target: the dialect alone, no backend, architecture or rules (what an
 * export's kernels are written in, for every architecture of their dialect). It generates
 * only (FDT_BUILD_GENERATE). */
void fdt_target_for_dialect(fdt_dialect dialect, fdt_target *t);

/* 0 when t's backend is in this build, so that candidates can be compiled for it; else -1
 * with e saying so and naming the targets this build has (a usage error where the user named
 * the target). */
int fdt_target_compiles(const fdt_target *t, fdt_err *e);

/* t's rules (t must have them): why a compiled candidate should not run on t, in buf
 * (returned), or NULL. res: what the compiler reported (static shared memory only; g adds
 * the dynamic part). On GPUs: spills (spill_bytes: NVIDIA's spill stores; on AMD the VGPR
 * spills, SGPR spills going to VGPR lanes), machine code past the instruction cache measured
 * for the architecture (fdt_arch.code_limit), on AMD any scratch (private segment), shared
 * memory over the limit per workgroup (fdt_arch_shared_exceeds, with the device's own limits
 * where it reports them), a block larger than the code object or the device allows, and a
 * workgroup that does not fit on one compute unit by the architecture's occupancy rules
 * (fdt_arch_occupancy: registers, AGPRs, SGPRs, LDS). */
const char *fdt_target_prune(const fdt_target *t, const fdt_rt_resources *res,
                             const fdt_config *c, const fdt_geometry *g, char *buf, size_t n);

/* 1 when a kernel compiled for t with resources res keeps registers in memory, with the
 * numbers in why: spills (NVIDIA's spill stores, AMD's VGPRs spilled to scratch) or, on AMD,
 * scratch without spills; 0 otherwise (t must have rules). fdt_target_prune prunes on it;
 * `fdtune gen` warns with it. */
int fdt_target_spill_check(const fdt_target *t, const fdt_rt_resources *res, char *why,
                           size_t n);

/* 1 when the shared memory (LDS) of c's tiles for p exceeds what one workgroup may use on t
 * (fdt_arch_shared_exceeds: the architecture's limits, or the device's where it reports
 * them), with the reason in why; 0 otherwise (also for a config that does not generate).
 * `fdtune gen` warns with it. */
int fdt_target_shared_check(const fdt_target *t, const fdt_problem *p, const fdt_config *c,
                            char *why, size_t n);

/* "occupancy: 8 waves per SIMD (limited by VGPRs)" (AMD) or "occupancy: 32 warps per SM
 * (limited by registers)" (NVIDIA) of a kernel compiled for t with resources res, config c
 * and geometry g (whose dynamic shared memory counts); an architecture the facts table does
 * not know says whose facts it got. */
void fdt_target_occupancy(const fdt_target *t, const fdt_rt_resources *res, const fdt_config *c,
                          const fdt_geometry *g, char *buf, size_t n);

/* ------------------------------------------------------------------ building candidates */

/* What a candidate is made of. */
typedef enum {
    FDT_CAND_STENCIL, /* the operator's kernel of a config (the problem's) */
    FDT_CAND_UTIL,    /* the verification kernels of the problem's precision (fill, poison,
                         compare, gather: one source); never pruned */
} fdt_cand_kind;

/* How far a candidate got. */
typedef enum {
    FDT_CAND_NEW,             /* not built: fdt_target_build takes it */
    FDT_CAND_GENERATE_FAILED, /* the generator refused it (err); a caller may mark a
                                 candidate so itself (a stored config that does not parse) */
    FDT_CAND_GENERATED,       /* src holds its source (a build that stops at GENERATE) */
    FDT_CAND_COMPILE_FAILED,  /* the compiler failed on it, or its child did (err) */
    FDT_CAND_COMPILED,        /* code holds it (a build that stops at COMPILE) */
    FDT_CAND_PRUNED,          /* code holds it; the target's rules say it should not run (err) */
    FDT_CAND_READY,           /* code holds it, and it may run */
} fdt_cand_state;

/* One candidate kernel. */
typedef struct fdt_cand {
    /* in */
    fdt_cand_kind kind;
    fdt_config cfg;      /* STENCIL: its config */
    const char *name;    /* its kernel's name, kept alive by the caller: NULL for a stencil's
                            default (fdt_gen_kernel_name); UTIL: the verification kernel whose
                            resources the compiler reports */
    /* out */
    fdt_cand_state state;
    char kernel[96];     /* the kernel's name in src and code */
    char *src;           /* GENERATED: the source */
    fdt_rt_code code;    /* COMPILED, PRUNED, READY */
    fdt_err err;         /* GENERATE_FAILED, COMPILE_FAILED: why; PRUNED: the rule's reason */
    double compile_s;    /* wall time of its compile (its share of the pool's), 0 when the
                            cache answered */
} fdt_cand;

/* A NEW candidate of kind `kind`: config cfg (STENCIL; NULL for UTIL) and kernel name `name`
 * (may be NULL for STENCIL). */
void fdt_cand_init(fdt_cand *v, fdt_cand_kind kind, const fdt_config *cfg, const char *name);
/* Frees its source and code object; it is NEW again (its kind, config and name kept). */
void fdt_cand_free(fdt_cand *v);
/* 1 when it failed to build: GENERATE_FAILED or COMPILE_FAILED (err says why). */
int fdt_cand_failed(const fdt_cand *v);

/* Where a build stops. */
typedef enum {
    FDT_BUILD_GENERATE, /* the sources only (export; gen without --compile) */
    FDT_BUILD_COMPILE,  /* compiled, not judged (gen --compile reports pruned kernels too; the
                           worker's verification and reference kernels; bench without a GPU) */
    FDT_BUILD_PRUNE,    /* compiled and judged by the target's rules: READY or PRUNED */
} fdt_build_stop;

typedef struct fdt_build_opts {
    fdt_build_stop stop_after;
    int parallel;          /* compiler processes at a time (the pool's width; < 1: 1) */
    int timeout_ms;        /* per compile */
    fdt_gen_opts gen;      /* how the sources are specialised (runtime_dims: exports) */
    fdt_done_fn on_done;   /* may be NULL: on_done(ctx, done, n) as compiles end
                              (fdt_rt_compile_many_progress) */
    fdt_cancel_fn cancelled; /* may be NULL: cancelled(ctx) non-zero gives the compile up
                                (fdt_rt_compile_many_cancel); asked from the building thread */
    void *ctx;               /* of on_done and cancelled */
} fdt_build_opts;

/* PRUNE, one process, 300 s per compile, the grid baked in, no progress. */
void fdt_build_opts_init(fdt_build_opts *o);

/* Builds the NEW candidates among v[0..n) for target t and problem p, in one pipeline:
 * generates each (fdt_gen_source, or the verification kernels), compiles those that
 * generated together in the isolated, cached compile pool (fdt_rt_compile_many_progress), and
 * judges what compiled by t's rules (fdt_target_prune), each step as far as o->stop_after
 * says. Candidates not NEW are left as they are. Returns -1 only when no compile could be
 * started (e: no compiler for t, out of memory) or o->cancelled gave it up (e "cancelled"):
 * then the candidates that generated are NEW again, holding nothing; else 0, with each
 * candidate's state saying how far it got and, when it failed, why. Beyond v's candidates it
 * touches the compile cache and, once per process, the backend's compiler (loaded and
 * identified by the first build): after one build for t has ended, another thread may build
 * other candidates for t while this one does other work. */
int fdt_target_build(const fdt_target *t, const fdt_problem *p, fdt_cand *const *v, size_t n,
                     const fdt_build_opts *o, fdt_err *e);

#endif
