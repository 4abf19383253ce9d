/* Export: turns what the tuning database knows into something a user's code can use
 * without fdtune. A plan is collected first (which devices --gpu names, the best config of
 * every tuned (device model, problem), grouped per operator/R/precision into one launcher
 * each, with fdtune's built-in default as the fallback), then rendered either as one
 * self-contained header (generated kernels, variant tables, run-time selection by device
 * model and grid with fdtune's own nearest rule, layout helpers, host launchers, provenance)
 * or as JSON carrying the same selection as data. The answer for one problem on one device
 * (`query best --nearest`) lives here too. Pure library code: nothing is printed; what the
 * user should hear comes back as notes and "what: why" errors. */
#ifndef FDT_EXPORT_H
#define FDT_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_common.h"
#include "fdt_db.h"
#include "fdt_gen.h"

struct fdt_catalogue;

/* Status of fdt_exp_plan_make (0 is success). */
enum {
    FDT_EXP_ERROR = -1,   /* operational: the database failed, out of memory, generator */
    FDT_EXP_NOTHING = -2, /* the database has nothing for a requested device or problem */
    FDT_EXP_REFUSED = -3, /* the request cannot be rendered as asked (e says what to change) */
};

#define FDT_EXP_MAX_GPUS 16
#define FDT_EXP_MAX_GRIDS 16

typedef struct fdt_exp_opts {
    /* Devices: each a case-insensitive substring of the stored device name or arch, else a
     * catalogue name or alias (needs cat). None: every device in the database. */
    const char *gpus[FDT_EXP_MAX_GPUS];
    int ngpus;
    /* 1 where gpus[i] came from --cpu: it names CPUs only (fdt_target_device_is_cpu), and no
     * model answers for it; 0: it names GPUs only. */
    unsigned char cpu[FDT_EXP_MAX_GPUS];
    unsigned ops;      /* bit (1u << fdt_op) per operator; 0: every tuned operator */
    unsigned Rs;       /* bit (1u << R) per radius; 0: any */
    unsigned precs;    /* bit (1u << fdt_prec) per precision; 0: any */
    int64_t grids[FDT_EXP_MAX_GRIDS][3]; /* tuned grids to export; none: every tuned grid */
    int ngrids;
    int absorb_w;      /* > 0: dwave's results of this absorbing layer only (fdt_db_filter) */
    double absorb_s;
    const struct fdt_catalogue *cat; /* resolves catalogue names and aliases; may be NULL */
    const char *fdtune_version;      /* of this binary, for the provenance */
    const char *command;             /* the command line, for the provenance; may be NULL */
} fdt_exp_opts;

void fdt_exp_opts_init(fdt_exp_opts *o);

/* One tuned result: the best config of one device model for one problem (grid included). */
typedef struct fdt_exp_tuned {
    fdt_db_row row;         /* the evaluation, its problem, device and environment */
    fdt_config cfg;
    fdt_layout layout;      /* on the tuned grid */
    char kconst[96];        /* kernel with the tuned grid baked in */
    char kruntime[96];      /* the same config with the grid as arguments */
    int vconst, vruntime;   /* indices in the family's variant table */
} fdt_exp_tuned;

/* One operator/R/precision on GPUs or on CPUs: one launcher, its variant table and a
 * fallback. */
typedef struct fdt_exp_family {
    int cpu;                /* 1: CPU results (the C dialect's kernels), 0: GPU results */
    fdt_op op;
    int R;
    fdt_prec prec;
    int absorb_w;           /* dwave: the absorbing layer its kernels have built in (every */
    double absorb_s;        /* result of the family was tuned with it); 0 for other ops */
    char name[32];          /* "lap_r4_f32": launcher fdtuned_lap_r4_f32; on CPUs
                               "cpu_lap_r4_f32": fdtuned_cpu_lap_r4_f32 */
    fdt_config fallback;    /* fdt_config_fallback_for its dialect: fdtune's built-in default
                               (variant 0; on CPUs the plain loop nest) */
    char kfallback[96];
    fdt_exp_tuned *tuned;   /* by arch, compute units, device name, grid volume */
    size_t ntuned;
} fdt_exp_family;

typedef struct fdt_exp_plan {
    char database[4096];     /* the user's database; "" when only the system database answered */
    char system_database[4096]; /* the system database consulted; "" when none */
    char exported[32];       /* ISO-8601 UTC */
    char fdtune_version[32];
    char generator[80];      /* fingerprint of the generator that writes the kernels */
    char command[1024];
    fdt_device *devices;  /* the devices --gpu selected: the user's by id, then the system's */
    fdt_db_source *device_sources; /* which database each device is from */
    size_t ndevices;
    int64_t *runs;           /* run ids the exported results come from: the user's ascending,
                                then the system database's */
    fdt_db_source *run_sources; /* which database each run id belongs to */
    size_t nruns;
    fdt_exp_family *fam;     /* by op, R, precision */
    size_t nfam;
    char **notes;            /* what the user should know (gaps covered by the fallback,
                                the model's predictions, results whose kernel may not be the
                                one measured: fdt_exp_stale_note) */
    size_t nnotes;
} fdt_exp_plan;

/* Collects the plan from dbs (the user's database first, then the system database; one is
 * fine): their devices and best results together, each result marked with its source, the
 * system's results for a (device model, problem) the user tuned left out (fdt_db_rows_shadow).
 * Returns 0, FDT_EXP_NOTHING (e says which device or problem the databases lack) or
 * FDT_EXP_ERROR. */
int fdt_exp_plan_make(fdt_db *const *dbs, size_t ndbs, const fdt_exp_opts *o,
                      fdt_exp_plan **out, fdt_err *e);
void fdt_exp_plan_free(fdt_exp_plan *p);

/* Variants of a family: 0 is the fallback, then per tuned result its constant and its
 * runtime-dims kernel (fdt_exp_tuned.vconst, .vruntime). */
int fdt_exp_family_nvariants(const fdt_exp_family *f);

/* The self-contained header (appended to out): the GPU part for HIP/CUDA code with the GPU
 * families, then, when the plan has CPU families, the CPU part (fdt_exp_render_cpu); a plan
 * of CPU families only is the CPU part alone. */
int fdt_exp_render_header(const fdt_exp_plan *p, fdt_sb *out, fdt_err *e);
/* The CPU part (appended to out): plain C11 + OpenMP for `cc -fopenmp`, with the CPU
 * families' kernels (generated in the C dialect), their variant tables, the selection by the
 * current CPU (model name, arch, cores) and grid with the nearest rule of the GPU part
 * (portable/fdtuned_nearest.h), layout helpers and launchers fdtuned_cpu_<op>_r<R>_<prec>.
 * Guarded on its own, so it may follow the GPU part in one file. */
int fdt_exp_render_cpu(const fdt_exp_plan *p, fdt_sb *out, fdt_err *e);
/* The header (fdt_exp_render_header) followed by the time-step driver, a plain C API over the
 * launcher of the plan's one time-step operator (wave or dwave): fdtd_init(nx, ny, nz, sx, sy,
 * sz), fdtd_p/_p_prev/_c2 and fdtd_index (where to fill the fields), fdtd_source(i, j, k),
 * fdtd_step(src), fdtd_finalize(); host memory and the CPU part's launcher for a plan of CPU
 * results, device memory and the GPU part's launcher for GPU results. Returns 0,
 * FDT_EXP_NOTHING (no time-step operator), FDT_EXP_REFUSED (several, or results for both a
 * GPU and a CPU: e says what to narrow) or FDT_EXP_ERROR. */
int fdt_exp_render_driver(const fdt_exp_plan *p, fdt_sb *out, fdt_err *e);
/* The same selection as JSON (appended to out); "schema" is FDT_EXP_JSON_SCHEMA. */
#define FDT_EXP_JSON_SCHEMA 1
int fdt_exp_render_json(const fdt_exp_plan *p, fdt_sb *out, fdt_err *e);

/* Distinct kernels the header defines (identical kernels are emitted once). */
size_t fdt_exp_kernel_count(const fdt_exp_plan *p);

/* The note for rows (each read from the database of its source among dbs) that may not have
 * been measured with the kernel this fdtune writes (fdt_db_kernel_check: differs, or
 * unrecorded), naming what to do and `fdtune db check` of the databases they come from;
 * *note NULL when there are none (results of another generator whose recorded code is
 * unchanged need no note). The caller frees *note. */
int fdt_exp_stale_note(fdt_db *const *dbs, size_t ndbs, const fdt_db_row *rows, size_t n,
                       char **note, fdt_err *e);

/* ------------------------------------------------------------------ one problem, one device */

/* Marks in hit (one flag per device of all, zeroed by the caller) the stored devices `gpu`
 * names: those whose name or arch contains it (case-insensitive); when none does and cat is
 * given, a catalogue name or alias names the stored devices the catalogue matches to that
 * entry (fdt_catalogue_match), and *entry receives the entry (entry->name is "" when the
 * catalogue did not resolve gpu; ce then says why). Returns the number of devices marked. */
int fdt_exp_match_gpu(const fdt_db_device_list *all, const char *gpu,
                      const struct fdt_catalogue *cat, char *hit, fdt_device *entry,
                      fdt_err *ce);

/* ------------------------------------------------------------------ the model's answers */

/* dev (a stored device, or a catalogue entry) as the model needs it: the GPU catalogue's
 * description (fdt_catalogue_complete) of the entry it is (fdt_catalogue_match), identity
 * kept; an entry as it is. Returns -1 when cat is NULL or knows no such GPU: the model has
 * nothing to rank with. */
int fdt_exp_model_device(const struct fdt_catalogue *cat, const fdt_device *dev,
                         fdt_device *out);
/* fdtune's model's answer for problem p on dev (described: fdt_exp_model_device): the first
 * row of the model's ranking of the operator's recipe (fdt_model_rank), what `fdtune --dry-run`
 * ranks first for that device and problem. *row: source FDT_DB_MODEL, the config, the
 * prediction as time_ms and gbs (frac_copy unknown), the layout, no run (run_id -1), this
 * fdtune's version and generator. *have = 0 when the recipe's space is empty there. Returns
 * -1 when the recipe cannot be loaded or fails on p (e says how). */
int fdt_exp_model_answer(const fdt_device *dev, const fdt_problem *p, fdt_db_row *row,
                         int *have, fdt_err *e);
/* The model's rows of a request (query best, export) for what gpu names (the distinct stored
 * device models it matches, fdt_exp_match_gpu, else the GPU catalogue's entry; described
 * through o->cat, and one the catalogue cannot describe gets none): for each such model and
 * each problem of the request where nothing measured answers (fdt_db_nearest_in over dbs
 * finds no candidate) and rows holds no model row yet, fdt_exp_model_answer's row, appended
 * to rows. The request's problems: those of every result in dbs that o's operators, R,
 * precision and grids take, and with o's operators, R and grids all given every problem they
 * name (its precision, else both). Each row ranks a recipe's space:
 * milliseconds for d2x, seconds for lap and wave. */
int fdt_exp_model_rows(fdt_db *const *dbs, size_t ndbs, const char *gpu, const fdt_exp_opts *o,
                       fdt_db_rows *rows, fdt_err *e);

/* What fdtune uses for one problem on one device. */
typedef struct fdt_exp_answer {
    fdt_device device;     /* answered for: the first stored device --gpu names (by id), else
                              the catalogue's description of it */
    int stored;            /* 1: device is in one of the databases */
    char others[1024];     /* other device models --gpu names: "name (arch, N CUs), ..." */
    fdt_db_fallback which; /* the rung of the nearest ladder; FDT_DB_NEAREST_MODEL: nothing
                              measured answers and the model does; FDT_DB_NEAREST_NONE:
                              neither, the answer is fdt_config_fallback */
    fdt_db_row row;        /* the tuned result; for MODEL the model's row
                              (fdt_exp_model_answer); for NONE the request with the
                              fallback's config text, nothing measured (run_id -1) */
} fdt_exp_answer;

/* `fdtune query best --nearest`: resolves gpu (fdt_exp_match_gpu over the devices of all
 * dbs, the user's database first; cat may be NULL), then fdt_db_nearest_in for the problem,
 * else the model's answer for the device (fdt_exp_model_answer, when the catalogue describes
 * it), else fdtune's built-in default (fdt_config_fallback, what exported headers fall back to).
 * Returns 0, FDT_EXP_NOTHING when gpu names no stored device and no catalogue entry, or
 * FDT_EXP_ERROR. */
int fdt_exp_nearest(fdt_db *const *dbs, size_t ndbs, const char *gpu,
                    const struct fdt_catalogue *cat, const fdt_problem *p, fdt_exp_answer *a,
                    fdt_err *e);

#endif
