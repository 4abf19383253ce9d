/* The hybrid planner's inputs (search/fdt_hybrid.h) gathered from what fdtune measured, and
 * the predictions for machines we cannot reach. `fdtune hybrid plan` calls these, then
 * fdt_hybrid_plan_make. From the tuning database: the GPU's and the CPU's tuned bests for the
 * problem, their best per deployment (dwave's deploy parameter), the GPU's undamped wave at
 * the same grid (the interior kernel's rate), the copy bandwidths their runs measured, and the
 * GPU's host<->device link (`fdtune devices` measures it). For MI300A and GH200: the vendors'
 * published figures with the fractions of them a tuned kernel reaches taken from our own
 * measurements where the database has them, assumed otherwise, each figure labelled. */
#ifndef FDT_HYBRID_DB_H
#define FDT_HYBRID_DB_H

#include "fdt_common.h"
#include "fdt_db.h"
#include "fdt_device.h"
#include "fdt_hybrid.h"

/* Figures not measured by fdtune that the planner needs, assumed (the text says so). */
#define FDT_HYB_GPU_LAUNCH_US 4.0 /* one kernel launch queued on a stream */
#define FDT_HYB_CPU_LAUNCH_US 2.0 /* one OpenMP parallel region of a warm team */
#define FDT_HYB_SYNC_US 10.0      /* the per-step wait for the GPU's stream and the host */
/* A discrete GPU's copies beside its kernels (fdt_hybrid_in.beside): on the H200 a
 * data-parallel step at 256^3 took the GPU's part and 0.010-0.014 ms of its 0.025 ms of
 * copies beyond the sync, which ran beside 0.074 ms of kernels (0.15-0.22 of their rate;
 * bench/hybrid_h200/run13 and run14), and at 512^3 0.087 ms of copies hid beside 0.52 ms
 * (run10, run11). Not measured by `fdtune devices`. */
#define FDT_HYB_COPY_BESIDE 0.2

/* Where each gathered rate came from, for the text. */
typedef struct fdt_hybrid_sources {
    fdt_device gpu, cpu;          /* the stored devices (cpu.id 0: none found) */
    char gpu_config[256], cpu_config[256]; /* their best configs */
    char deploy_config[FDT_HYB_NDEPLOY][256]; /* the GPU's best per deployment */
    char cpu_layers_config[256];  /* the CPU's config of in->cpu.layers_ms: the one whose
                                     slabs task-parallel runs ("" none measured) */
    char link_measured[32];       /* when the link was measured */
    char notes[512];              /* what was not found and what stands in ("" if none) */
} fdt_hybrid_sources;

/* The planner's input for problem p from db: the GPU that gpu names (a substring of a stored
 * GPU's name or arch) and the CPU that cpu names (the same among stored CPUs; NULL: none).
 * FDT_STATUS_USAGE, e naming the command to run, when the GPU or the CPU has no tuned result
 * for p (the tune), when a name matches several stored devices with results, or when the
 * GPU's link is not measured (`fdtune devices`). What is missing but has a stand-in (a
 * deployment, the interior rate) the planner says itself. FDT_STATUS_ERROR when the database
 * fails. */
fdt_status fdt_hybrid_gather(fdt_db *db, const char *gpu, const char *cpu, const fdt_problem *p,
                             fdt_hybrid_in *in, fdt_hybrid_sources *src, fdt_err *e);

/* A machine described from published figures (fdt_hybrid_predict). */
typedef struct fdt_hybrid_machine {
    const char *name;        /* "MI300A", "GH200" */
    const char *published;   /* the vendor's figures used, with where they are published */
    char assumed[512];       /* the figures assumed, with the measured fractions taken */
} fdt_hybrid_machine;

/* The names fdt_hybrid_predict knows, comma-separated ("MI300A, GH200"). */
const char *fdt_hybrid_machines(void);

/* The planner's input for p on machine name (case-insensitive), a prediction: the GPU's and
 * the CPU's rates are the published memory bandwidth times the fraction of it a tuned step
 * reaches, taken from measured (the gathered input of a machine we measured; NULL or without
 * rates: assumed fractions) and labelled in m. FDT_STATUS_USAGE for an unknown name. */
fdt_status fdt_hybrid_predict(const char *name, const fdt_problem *p,
                              const fdt_hybrid_in *measured, fdt_hybrid_in *in,
                              fdt_hybrid_machine *m, fdt_err *e);

#endif
