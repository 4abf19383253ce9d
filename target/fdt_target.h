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

#endif
