/* The tuning database: one SQLite file that is the single source of truth for everything
 * fdtune measures (CSV, JSON and tuned headers are exports of it). Every evaluation is keyed
 * by the device (identity includes arch, compute units and UUID), the software environment
 * (driver, runtime, compiler, fdtune version, generator fingerprint), the problem, the
 * canonical config text and the run that produced it, so a result from other hardware or an
 * older toolchain is never mistaken for a current one. Writes are short IMMEDIATE
 * transactions in WAL mode, so several tuners may share one file. Queries hand rows to a
 * callback (return non-zero from it to stop early); the CLI formats them. All fallible
 * functions return 0 or -1 and fill the fdt_err with "what: why". One fdt_db belongs to one
 * thread; a forked child opens its own. */
#ifndef FDT_DB_H
#define FDT_DB_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_common.h"
#include "fdt_gen.h"
#include "fdt_device.h"
#include "fdtuned_model.h"
#include "fdtuned_nearest.h"

typedef struct fdt_db fdt_db;

/* ------------------------------------------------------------------ open */

enum {
    FDT_DB_READONLY = 0,  /* queries only; creates and changes no file, beside it either (no
                             -wal, -shm: fdt_db_open); a missing file is an error */
    FDT_DB_READWRITE = 1, /* the file must exist; an older schema is migrated */
    FDT_DB_CREATE = 3,    /* read-write, creating the file and its directory when missing */
    FDT_DB_IMMUTABLE = 4, /* read-only, and the file never changes while open: SQLite takes no
                             locks (the shipped system database, which may lie on a read-only
                             or network mount where locks are slow or missing) */
};

/* FDTUNE_DB if set, else $XDG_DATA_HOME/fdtune/fdtune.db, else ~/.local/share/fdtune/fdtune.db. */
int fdt_db_default_path(char *buf, size_t n, fdt_err *e);
/* path NULL: the default path. A corrupt or foreign file, or one whose schema is newer than
 * this fdtune, is refused and left untouched. Read-write migrates an older schema; read-only
 * reads a v1 file as it is (it has no best decisions). Read-only creates and changes no
 * file: a WAL database without a log is read as it is in the file (its snapshot; a read that
 * a checkpoint of a writer started meanwhile would overlap fails: "changed while it was
 * read"), one with a log through its existing -shm, opened read-only, and one whose log has
 * no -shm is refused with what to do. Before a writer writes anything to an existing file,
 * it is checked on a read-only connection: the -wal and -shm beside it must be writable
 * (else they and their owner are named), it must be an fdtune database of a schema no
 * newer than this fdtune's, pass PRAGMA quick_check and hold no row outside the bounds of
 * schema v6; refused, the file is left as it is. */
int fdt_db_open(const char *path, int flags, fdt_db **db, fdt_err *e);
/* A caller's own condition on a file it is about to write (the kind of results it holds),
 * run on the read-only connection of a writer's checks: 0, or -1 with e to refuse it. */
typedef int (*fdt_db_gate)(void *ctx, fdt_db *db, fdt_err *e);
/* fdt_db_open, whose writer's checks of an existing file also run gate (NULL: none) before
 * anything is written; gate is not run for a new or empty file, which holds nothing. */
int fdt_db_open_checked(const char *path, int flags, fdt_db_gate gate, void *ctx,
                        fdt_db **db, fdt_err *e);
void fdt_db_close(fdt_db *db); /* NULL is fine */
const char *fdt_db_path(const fdt_db *db);
/* The schema version this fdtune writes (PRAGMA user_version). */
int fdt_db_schema_version(void);
/* The schema version of a file, read without migrating, creating or refusing it. */
int fdt_db_file_version(const char *path, int *version, fdt_err *e);
/* Full integrity and foreign-key check; the error lists the first problems found. */
int fdt_db_check(fdt_db *db, fdt_err *e);

/* The file system a database path lies on (its nearest existing directory while the file does
 * not exist yet). *network is 1 on the network and cluster file systems where SQLite's WAL
 * cannot work (its shared-memory index is local to one machine) and POSIX locks may not
 * hold across machines: NFS, SMB/CIFS, Lustre, GPFS, BeeGFS, CephFS, 9p, FUSE, AFS, Coda,
 * PanFS, OrangeFS, GFS2, OCFS2 and a few more, told apart by statfs's f_type (magic
 * numbers of linux/magic.h or of the file systems' own sources); name gets "nfs",
 * "lustre", ... there and "" on a local file system. On a network file system a read-write
 * open uses a rollback journal and holds the database exclusively until closed, so a
 * second writer (on any machine whose locks reach the server) is refused at once with the
 * advice to use per-job databases on node-local storage and `fdtune db merge`.
 * FDTUNE_TEST_FSTYPE, for tests only, replaces the statfs call: a name of the table, or
 * "local". */
int fdt_db_fs_kind(const char *path, char *name, size_t n, int *network, fdt_err *e);

/* ------------------------------------------------------------------ sources */

/* Which database a row came from: the user's tuning database, or the system database shipped
 * with fdtune (share/fdtune/system.db, read-only: the best results measured on the project's
 * GPUs). Queries consult the user's first; fdt_db_rows_shadow says how the two combine. A
 * row of FDT_DB_MODEL is in no database: fdtune's model's answer for a device model nothing
 * was measured on (export/model.c makes them), a prediction, never a measurement. */
typedef enum { FDT_DB_USER, FDT_DB_SYSTEM, FDT_DB_MODEL } fdt_db_source;
const char *fdt_db_source_name(fdt_db_source s); /* "user", "system", "model" */
/* A connection stamps its source on every row it reads (fdt_db_row.source); a new one is
 * FDT_DB_USER. */
void fdt_db_set_source(fdt_db *db, fdt_db_source s);
fdt_db_source fdt_db_source_of(const fdt_db *db);
/* Where the system database is: $FDTUNE_SYSTEM_DB when set (empty: none, so it is turned
 * off), else <dir of the executable>/../share/fdtune/system.db, else the source tree's
 * share/fdtune/system.db (the search-path idea of the recipes). *found = 0 and buf "" when
 * none of them exists; an FDTUNE_SYSTEM_DB naming a missing file is an error. */
int fdt_db_system_path(char *buf, size_t n, int *found, fdt_err *e);
/* Opens the system database (FDT_DB_IMMUTABLE) with source FDT_DB_SYSTEM; *db NULL when
 * there is none (fdt_db_system_path). */
int fdt_db_open_system(fdt_db **db, fdt_err *e);

/* ------------------------------------------------------------------ vocabulary */

typedef enum {
    FDT_DB_OK, FDT_DB_WRONG, FDT_DB_COMPILE_ERROR, FDT_DB_PRUNED, FDT_DB_LAUNCH_ERROR,
    FDT_DB_CRASHED, FDT_DB_TIMEOUT, FDT_DB_STATUS_COUNT
} fdt_db_status;
typedef enum { FDT_DB_PROBE, FDT_DB_FULL } fdt_db_stage;
typedef enum { FDT_DB_RUNNING, FDT_DB_DONE, FDT_DB_INTERRUPTED, FDT_DB_FAILED } fdt_db_run_status;
typedef enum { FDT_DB_TUNE, FDT_DB_RETUNE, FDT_DB_BENCH } fdt_db_run_kind;

/* Statuses a rerun measures again by default: they may come from a busy or restarted GPU
 * rather than from the config itself. */
#define FDT_DB_RETRY_DEFAULT ((1u << FDT_DB_CRASHED) | (1u << FDT_DB_TIMEOUT))

const char *fdt_db_status_name(fdt_db_status s); /* "ok", "compile_error", ... */
int fdt_db_status_parse(const char *s, fdt_db_status *out, fdt_err *e);
const char *fdt_db_stage_name(fdt_db_stage s);   /* "probe", "full" */
int fdt_db_stage_parse(const char *s, fdt_db_stage *out, fdt_err *e);
const char *fdt_db_run_status_name(fdt_db_run_status s);
const char *fdt_db_run_kind_name(fdt_db_run_kind k); /* "tune", "retune", "bench" */
int fdt_db_run_kind_parse(const char *s, fdt_db_run_kind *out, fdt_err *e);

/* ------------------------------------------------------------------ devices, environments */

typedef struct fdt_db_env {
    int64_t id; /* 0 until stored */
    /* as fdt_device's driver_version, runtime_version and compiler_version say them */
    char driver[128], runtime[320], compiler[512], fdtune_version[32], generator[80];
} fdt_db_env;

/* The environment of a run on this device: its driver/runtime/compiler versions (for AMD:
 * the amdgpu kernel driver, the HIP runtime's version and directory, hiprtc's and comgr's
 * versions and directories; see fdt_rt_backend.device_info), the given fdtune version and
 * this binary's generator fingerprint. */
void fdt_db_env_from_device(const fdt_device *d, const char *fdtune_version, fdt_db_env *v);

/* Get-or-create: the same identity (backend, vendor, name, arch, compute units, memory, UUID;
 * with warp size, L2 and PCI stored beside) always gives the same id. */
int fdt_db_device_id(fdt_db *db, const fdt_device *d, int64_t *id, fdt_err *e);
int fdt_db_env_id(fdt_db *db, const fdt_db_env *v, int64_t *id, fdt_err *e);
int fdt_db_problem_id(fdt_db *db, const fdt_problem *p, int64_t *id, fdt_err *e);
/* key: canonical config text (fdt_config_format); anything else is refused. */
int fdt_db_config_id(fdt_db *db, const char *key, int64_t *id, fdt_err *e);
/* Lookup only (works read-only): *id = 0 when the problem was never stored. */
int fdt_db_problem_find(fdt_db *db, const fdt_problem *p, int64_t *id, fdt_err *e);
/* The same for a device by its identity (the fields fdt_db_device_id keys on). */
int fdt_db_device_find(fdt_db *db, const fdt_device *d, int64_t *id, fdt_err *e);

/* A stored device: its identity fields and id (the rest zero, index -1, live 0). */
int fdt_db_device_get(fdt_db *db, int64_t id, fdt_device *d, fdt_err *e);
int fdt_db_env_get(fdt_db *db, int64_t id, fdt_db_env *v, fdt_err *e);
typedef int (*fdt_db_device_fn)(void *ctx, const fdt_device *d);
/* Devices whose name or arch contains gpu (case-insensitive; NULL: all), by id. */
int fdt_db_devices(fdt_db *db, const char *gpu, fdt_db_device_fn fn, void *ctx, fdt_err *e);

/* ------------------------------------------------------------------ links (schema v8) */

/* One measurement of a device's link to host memory (`fdtune devices` measures it; the hybrid
 * planner reads it). */
typedef struct fdt_db_link {
    double h2d_gbs, d2h_gbs; /* pinned copies, one direction at a time, GB/s (1e9); > 0 */
    double both_gbs;         /* each direction while both run at once (0: not measured) */
    double latency_us;       /* a small (4 KiB) copy's time; >= 0 */
    double row_ns;           /* a narrow row's time in a box copy beyond the latency (>= 0;
                                NaN: not measured, before schema v10) */
    int unified;             /* 1: the device reads host memory in place (APU / C2C / mapped) */
    char measured[32];       /* ISO-8601 UTC; "" on put: now */
} fdt_db_link;
/* Records a measurement of device device_id (an id of the devices table: fdt_db_device_id).
 * Rates that are not positive and finite, a negative latency, row time or both_gbs, or
 * unified other than 0 or 1 are refused and nothing is written. Measurements are a log: none
 * is replaced. */
int fdt_db_link_put(fdt_db *db, int64_t device_id, const fdt_db_link *l, fdt_err *e);
/* The newest measurement of device_id (latest measured time, then the latest written);
 * *found = 0 and l zeroed when there is none (a file older than v8 has none). */
int fdt_db_link_get(fdt_db *db, int64_t device_id, fdt_db_link *l, int *found, fdt_err *e);

/* ------------------------------------------------------------------ runs */

typedef struct fdt_db_run {
    int64_t id;                   /* out */
    fdt_db_run_kind kind;
    fdt_db_run_status status;     /* out */
    char started[32], finished[32]; /* out: ISO-8601 UTC; finished "" while running */
    char command[1024];           /* the command line, for the record */
    int64_t device_id, env_id;
    char recipe[128], recipe_hash[80], strategy[64];
    int64_t budget;               /* evaluations; 0: none */
    uint64_t seed;
    double copy_gbs;              /* device-to-device copy bandwidth of this run; NaN: unknown */
    char host[256];               /* "" at begin: this host */
    int64_t pid;                  /* out: process that began the run */
    char notes[512];
    int64_t n_evals, n_ok;        /* out (listings): evaluations recorded, of them ok */
} fdt_db_run;

void fdt_db_run_init(fdt_db_run *r);
/* Records a new run in status running and returns its id. */
int fdt_db_run_begin(fdt_db *db, const fdt_db_run *r, int64_t *run_id, fdt_err *e);
/* Sets the copy bandwidth once measured; frac_copy of later evaluations derives from it. */
int fdt_db_run_set_copy(fdt_db *db, int64_t run_id, double copy_gbs, fdt_err *e);
/* Ends a running run (done, interrupted or failed) and stamps the finish time. */
int fdt_db_run_finish(fdt_db *db, int64_t run_id, fdt_db_run_status status, fdt_err *e);
/* The GPU's clocks recorded with a run (schema v5): at the start or the end of its
 * measurements. */
typedef enum { FDT_DB_CLOCKS_START, FDT_DB_CLOCKS_END } fdt_db_clocks_when;
/* Records c (when known; an unknown c writes nothing) as the running run's clocks at `when`:
 * the current SM and memory clocks and the throttle reasons (as names), and the maximum
 * clocks; at the start also driver_source ("nvml", "cuda"; NULL or "": left NULL), where the
 * environment's driver version came from (fdt_device.driver_source). A later call for the
 * same `when` replaces the earlier one. Fails when the run is not running. */
int fdt_db_run_set_clocks(fdt_db *db, int64_t run_id, fdt_db_clocks_when when,
                          const char *driver_source, const fdt_clocks *c, fdt_err *e);
/* Reads them back into start and end (known 0 where none were recorded) and the driver's
 * source into src ("" when NULL). Needs a schema v5 file (a writable connection migrates). */
int fdt_db_run_clocks(fdt_db *db, int64_t run_id, fdt_clocks *start, fdt_clocks *end,
                      char *src, size_t n, fdt_err *e);
/* Marks interrupted the runs still "running" that were begun on this host by a process that
 * no longer exists (killed, crashed, power loss); *n says how many. */
int fdt_db_run_mark_stale(fdt_db *db, int *n, fdt_err *e);
/* Marks every run still running as interrupted, finished at its last evaluation (at its start
 * when it has none: no later moment is known), with why appended to its notes; *n: how many.
 * For a file that is final (a best-only merge: the system database), where a run copied while
 * it was going will never get its end. */
int fdt_db_runs_close_running(fdt_db *db, const char *why, int64_t *n, fdt_err *e);
int fdt_db_run_get(fdt_db *db, int64_t run_id, fdt_db_run *r, fdt_err *e);
/* The same as a lookup: 0 with *found = 0 when there is no such run (an error is an error). */
int fdt_db_run_find(fdt_db *db, int64_t run_id, fdt_db_run *r, int *found, fdt_err *e);

/* ------------------------------------------------------------------ evaluations */

/* One evaluation, every column. Numbers that do not apply are NaN (reals) or -1 (integers)
 * and stored as NULL. On insert, the fields marked "out" are ignored: device and
 * environment come from the run, config_id from the config text. */
typedef struct fdt_db_eval {
    int64_t id;                  /* out */
    int64_t run_id, problem_id;
    int64_t config_id;           /* out */
    int64_t device_id, env_id;   /* out */
    char config[256];            /* canonical config text */
    fdt_db_status status;
    fdt_db_stage stage;
    double time_ms;              /* median */
    double time_min_ms, time_max_ms, time_q1_ms, time_q3_ms;
    int reps, outliers;
    double gbs;                  /* effective bandwidth, GB/s */
    double frac_copy;            /* gbs / copy bandwidth of the run; NaN: derived on insert */
    double max_err, rel_err, tolerance;
    int64_t layout_line, layout_offset; /* elements: the array layout the kernel expects */
    int registers, sgprs, spill_bytes, scratch_bytes, shared_bytes;
    double compile_s;
    double layers_ms;            /* dwave inout/sides: the median time of the deployment's
                                    layer kernels alone (every launch but the interior's);
                                    NaN: none (no layer kernels, or before schema v9) */
    double part_ms;              /* dwave on a host CPU: the median time of the damped kernel
                                    over the grid's first fdt_gen_part_planes (2R) planes
                                    alone, back to back (a data-parallel hybrid step's CPU
                                    part); NaN: none (a GPU, another operator, a grid under
                                    4R planes, or before schema v11) */
    char message[1024];          /* why it failed, or a remark */
    char created[32];            /* out: ISO-8601 UTC */
} fdt_db_eval;

void fdt_db_eval_init(fdt_db_eval *ev); /* everything unset, status ok, stage full */
/* The run must be running. One (run, problem, config, stage) is recorded once; a second
 * insert is an error. A batch is one transaction: all rows or none. ids may be NULL. */
int fdt_db_eval_insert(fdt_db *db, const fdt_db_eval *ev, int64_t *id, fdt_err *e);
int fdt_db_eval_insert_batch(fdt_db *db, const fdt_db_eval *evs, size_t n, int64_t *ids,
                             fdt_err *e);

/* Resume: *found = 1 when (device, env, problem, config, stage) has an evaluation whose
 * status is not in retry_mask (bits 1u << fdt_db_status, e.g. FDT_DB_RETRY_DEFAULT). */
int fdt_db_measured(fdt_db *db, int64_t device_id, int64_t env_id, int64_t problem_id,
                    const char *config, fdt_db_stage stage, unsigned retry_mask, int *found,
                    fdt_err *e);

/* ------------------------------------------------------------------ queries */

/* An evaluation with what it refers to. */
typedef struct fdt_db_row {
    fdt_db_eval ev;
    fdt_problem problem;
    fdt_device device;
    fdt_db_env env;
    fdt_db_source source; /* the database that answered (ids are that database's) */
    int cut_short;        /* best rows (fdt_db_best): the decision in force says the search
                             was cut short (fdt_db_decision.cut_short); 0 in other rows */
    char stopped[160];    /* best rows: why the search behind the decision in force stopped
                             (fdt_db_decision.stopped); "" in other rows and where unknown */
} fdt_db_row;
typedef int (*fdt_db_row_fn)(void *ctx, const fdt_db_row *row);
typedef int (*fdt_db_run_fn)(void *ctx, const fdt_db_run *run);

/* Collectors for the queries' callbacks, for callers that want the whole answer before they
 * use it (or run another query, one statement at a time): pass fdt_db_collect_row with a
 * zeroed fdt_db_rows as ctx, and so on. When memory runs out, oom is set and the query stops
 * early; the caller checks oom after the query and frees v. */
typedef struct fdt_db_rows {
    fdt_db_row *v;
    size_t n, cap;
    int oom;
} fdt_db_rows;
typedef struct fdt_db_run_list {
    fdt_db_run *v;
    size_t n, cap;
    int oom;
} fdt_db_run_list;
typedef struct fdt_db_device_list {
    fdt_device *v;
    size_t n, cap;
    int oom;
} fdt_db_device_list;
int fdt_db_collect_row(void *ctx, const fdt_db_row *row);
int fdt_db_collect_run(void *ctx, const fdt_db_run *run);
int fdt_db_collect_device(void *ctx, const fdt_device *d);

/* Unset fields match anything; the sets (ops, Rs, precs, grids) match any of their members,
 * so that one filter answers `query best --op lap,d2z --R 2,4`. */
typedef struct fdt_db_filter {
    const char *gpu;        /* substring of the device name or arch, case-insensitive */
    unsigned ops;           /* bits 1u << fdt_op; 0: any */
    unsigned Rs;            /* bits 1u << R; 0: any */
    unsigned precs;         /* bits 1u << fdt_prec; 0: any */
    const int64_t (*grids)[3]; /* ngrids grids (nx, ny, nz); ngrids 0: any grid */
    int ngrids;
    int absorb_w;           /* > 0: of the dwave problems, only those with this absorbing
                               layer (width absorb_w, strength absorb_s; other operators'
                               problems are not affected); 0: any */
    double absorb_s;
    int64_t device_id, env_id; /* 0: any */
    const char *generator;  /* generator fingerprint; NULL: any */
} fdt_db_filter;
void fdt_db_filter_init(fdt_db_filter *f);

/* Best evaluation per (device, problem): the latest recorded decision (fdt_db_best_decide)
 * when there is one and its evaluation passes the filter; otherwise status ok, stage full,
 * smallest median time, ties to the smaller config text, then the earlier evaluation. The
 * env and generator filters apply before ranking. Rows by device, then problem. Also the
 * SQL view best_evaluations. With f->device_id set: the (device, problem) pairs a retune of
 * that device revisits. */
int fdt_db_best(fdt_db *db, const fdt_db_filter *f, fdt_db_row_fn fn, void *ctx, fdt_err *e);
/* The n best configs of one (device, problem): the decided best first (when its evaluation is
 * in env_id), then the other configs by their fastest evaluation; env_id 0: any environment.
 * Each row carries the environment that produced it (for retune). */
int fdt_db_top(fdt_db *db, int64_t device_id, int64_t problem_id, int64_t env_id, int n,
               fdt_db_row_fn fn, void *ctx, fdt_err *e);
/* The fastest ok full evaluation of one problem in one run (ties: config text, then id),
 * decisions aside; *found = 0 when the run has none. */
int fdt_db_run_best(fdt_db *db, int64_t run_id, int64_t problem_id, fdt_db_row *row,
                    int *found, fdt_err *e);
/* Start time (ISO-8601 UTC) of the newest run with evaluations of (device, problem); ""
 * when none. */
int fdt_db_last_run(fdt_db *db, int64_t device_id, int64_t problem_id, char *started,
                    size_t n, fdt_err *e);
/* Every evaluation of one (device, problem) in insertion order, env_id 0: any environment.
 * For resume (one environment) and for replaying strategies offline. */
int fdt_db_evals(fdt_db *db, int64_t device_id, int64_t env_id, int64_t problem_id,
                 fdt_db_row_fn fn, void *ctx, fdt_err *e);
/* One (problem, config) across runs, oldest first; device_id 0: every device. */
int fdt_db_history(fdt_db *db, const fdt_problem *p, const char *config, int64_t device_id,
                   fdt_db_row_fn fn, void *ctx, fdt_err *e);
/* Everything one run recorded, in order (`fdtune show RUN`). */
int fdt_db_run_evals(fdt_db *db, int64_t run_id, fdt_db_row_fn fn, void *ctx, fdt_err *e);
/* Runs, newest first, on devices matching f->gpu / f->device_id (other fields ignored);
 * limit 0: all. n_evals and n_ok are filled. */
int fdt_db_runs(fdt_db *db, const fdt_db_filter *f, int limit, fdt_db_run_fn fn, void *ctx,
                fdt_err *e);

/* ------------------------------------------------------------------ best decisions */

/* Which evaluation is the best of a (device, problem). Without a decision the best is the
 * smallest median; a decision pins it, so that a later result that is faster only within
 * the measurement noise (a re-measurement, a rerun) does not take over. The tuner records one
 * at the end of each problem, retune after judging re-measurements. The latest decision of a
 * pair is in force; older ones stay as history. Schema v2. */
typedef struct fdt_db_decision {
    int64_t id, device_id, problem_id, eval_id;
    char decided_at[32]; /* ISO-8601 UTC */
    char reason[128];
    int cut_short;       /* the search behind this best was cut short by its time limit
                            before its budget or space was spent (schema v4; 0 before) */
    char stopped[160];   /* why that search stopped, with its headroom (fdt_stop_describe;
                            schema v7); "" where unknown */
} fdt_db_decision;

/* eval_id must be an ok full evaluation of that device and problem (else an error).
 * cut_short (0 or 1): fdt_db_decision.cut_short. When the evaluation was measured with this
 * fdtune's generator, the hash of its kernel's code is recorded with the decision (one
 * transaction; see fdt_db_kernel_check). */
int fdt_db_best_decide(fdt_db *db, int64_t device_id, int64_t problem_id, int64_t eval_id,
                       int cut_short, const char *reason, fdt_err *e);
/* The same, with why the search stopped (fdt_db_decision.stopped; NULL or "": unknown). A
 * text the schema refuses (not one of its forms) is an error. */
int fdt_db_best_decide_stopped(fdt_db *db, int64_t device_id, int64_t problem_id,
                               int64_t eval_id, int cut_short, const char *stopped,
                               const char *reason, fdt_err *e);
/* The decision in force; *found = 0 when the pair has none. */
int fdt_db_best_decision(fdt_db *db, int64_t device_id, int64_t problem_id,
                         fdt_db_decision *d, int *found, fdt_err *e);

/* Which rung of fdt_db_nearest answered (the FDTUNED_RUNG_* of portable/fdtuned_nearest.h). */
typedef enum {
    FDT_DB_NEAREST_EXACT, /* this device model, this grid */
    FDT_DB_NEAREST_GRID,  /* this device model, nearest tuned grid of the same op, R, precision */
    FDT_DB_NEAREST_ARCH,  /* another device model of the same base arch (e.g. another
                             compute-unit count), nearest grid, then nearest unit count */
    FDT_DB_NEAREST_MODEL, /* nothing measured answers: fdtune's model's top-ranked config
                             (a row of source FDT_DB_MODEL; export/model.c, never from here) */
    FDT_DB_NEAREST_NONE   /* nothing usable: use fdt_config_fallback */
} fdt_db_fallback;
/* "exact", "grid", "arch", "model", "none" */
const char *fdt_db_fallback_name(fdt_db_fallback f);

/* The best tuned result to use for (device, problem), by the rule exported headers apply
 * (portable/fdtuned_nearest.h): a device model is (name, base arch, compute units), only the
 * dev fields name, arch and compute_units are read. Candidates are the best results of the
 * problem's op, R, precision and absorbing layer (dwave: the same W and S) on devices of dev's
 * base arch, one per device model and grid (the faster), whose config can run the problem's
 * grid (fdt_config_fit); they rank by rung, |log volume ratio|, |log xy-plane ratio|, compute-
 * unit difference, time, then grid and evaluation id. generator: only results of this generator
 * fingerprint (NULL: any; the row names the environment either way). *out is filled unless
 * *which is FDT_DB_NEAREST_NONE. */
int fdt_db_nearest(fdt_db *db, const fdt_device *dev, const fdt_problem *p,
                   const char *generator, fdt_db_row *out, fdt_db_fallback *which, fdt_err *e);
/* The same over several databases, dbs[0] first (the user's, then the system's): the
 * candidates of all of them, after fdt_db_rows_shadow, rank by the one rule above. */
int fdt_db_nearest_in(fdt_db *const *dbs, size_t ndbs, const fdt_device *dev,
                      const fdt_problem *p, const char *generator, fdt_db_row *out,
                      fdt_db_fallback *which, fdt_err *e);
/* A best row as the nearest ranking sees it (device model, grid, median time, evaluation id,
 * predicted when its source is FDT_DB_MODEL); r points into row. */
void fdt_db_row_result(const fdt_db_row *row, fdtuned_result *r);
/* How the user's and the system database combine, in one place for query, export and nearest: a
 * slot is one device model (name, base arch, compute units) and one problem (operator, radius,
 * precision, grid, absorbing layer); a row of a later source (the system database) whose slot a
 * row of an earlier source (the user's) fills is dropped, so the user's own measurement of a
 * model and grid always answers for it; the rest of each source stays and competes by the usual
 * rules. Keeps the order of the rest. */
void fdt_db_rows_shadow(fdt_db_rows *rows);

/* ------------------------------------------------------------------ bulk writes, merging */

/* One write transaction around many writes (a merge): every write function called between
 * begin and commit joins it instead of committing on its own, so all of it lands or none.
 * When a write inside fails, commit fails too and nothing is written; rollback undoes
 * everything. Not nested; one per connection at a time. */
int fdt_db_bulk_begin(fdt_db *db, fdt_err *e);
int fdt_db_bulk_commit(fdt_db *db, fdt_err *e);
void fdt_db_bulk_rollback(fdt_db *db);

/* Rows per table. */
typedef struct fdt_db_counts {
    int64_t devices, environments, problems, configs, runs, evaluations, decisions, metadata;
    int64_t links; /* host<->device link measurements (schema v8) */
} fdt_db_counts;
int fdt_db_count(fdt_db *db, fdt_db_counts *c, fdt_err *e);

/* The natural keys of a merge (row ids are local to a file, so rows are matched by what they
 * are): a device by its identity (backend, vendor, name, arch, compute units, memory, UUID), an
 * environment by its five fields, a problem by operator, radius, precision, grid and absorbing
 * layer (width and strength, dwave's), a config by its canonical text, a run by (host, pid,
 * started, device, environment, kind), an evaluation by (run, problem, config, stage), a
 * decision by (device, problem, evaluation, decided_at, reason), a link measurement by its
 * device and all its values. A run's key is unique: one process (host, pid) begins its runs one
 * after another and fdt_db_run_begin never gives two runs of one device, environment and kind
 * the same start time (to the millisecond) in one process; runs of different processes differ
 * in host or pid, or in start time when a pid was reused. fdt_db_import_check refuses a file
 * that breaks it (written by hand, or by an fdtune older than that guarantee), one with best
 * decisions that name no ok full evaluation of their own device and problem (the schema's
 * trigger would refuse them in the target), and one with integers outside the bounds of schema
 * v6 (likewise). */
int fdt_db_import_check(fdt_db *in, fdt_err *e);
/* Inside a bulk write of out: copies every device, environment, problem, config, run,
 * evaluation, best decision and link measurement of in (any connection, read-only is fine) into
 * out, remapped by the natural keys; rows out already holds are kept as they are and not copied
 * again, so importing one database twice adds nothing. A run out holds as running takes the
 * source's end (status, finish time) once the source has it; the copy bandwidth, the clocks and
 * the driver's source of a run (fdt_db_run_set_clocks) fill those out lacks (NULL). A source
 * older than schema v5 has no clocks: its runs come with none. Order within a table is kept.
 * added (may be NULL): the rows new to out, per table. */
int fdt_db_import(fdt_db *out, fdt_db *in, fdt_db_counts *added, fdt_err *e);
/* After fdt_db_import, until the next one: an evaluation of the imported database (its id
 * there) as out knows it: its id, device and problem in out; all 0 when it was not
 * imported. */
int fdt_db_import_eval(fdt_db *out, int64_t in_eval_id, int64_t *eval_id, int64_t *device_id,
                       int64_t *problem_id, fdt_err *e);
/* Inside a bulk write: keeps only the evaluations keep[0..n) (ids), the decisions that name one
 * of them, the runs, devices, environments, problems and configs kept rows refer to and the
 * link measurements of the kept runs' devices; everything else goes (the system database is
 * made so). removed (may be NULL): rows removed per table. */
int fdt_db_prune_keep(fdt_db *db, const int64_t *keep, size_t n, fdt_db_counts *removed,
                      fdt_err *e);
/* Rewrites the file without free pages and in a rollback journal (no -wal or -shm beside it,
 * so it can be read from a read-only directory). Not inside a transaction. */
int fdt_db_compact(fdt_db *db, fdt_err *e);

/* ------------------------------------------------------------------ metadata (schema v3) */

/* What a file is and how it was made, as key/value text (the system database records its
 * source, date and generator fingerprints). Setting a key replaces its value. */
int fdt_db_meta_set(fdt_db *db, const char *key, const char *value, fdt_err *e);
typedef int (*fdt_db_meta_fn)(void *ctx, const char *key, const char *value);
/* Every key, sorted; return non-zero from fn to stop. */
int fdt_db_meta(fdt_db *db, fdt_db_meta_fn fn, void *ctx, fdt_err *e);

/* ------------------------------------------------------------------ kernel sources (kernels.c) */

/* Whether the kernel this fdtune writes for a stored result is the one it was measured with:
 * the result's generator fingerprint is this fdtune's (or it is a model row), or the
 * database's metadata records the hash of the code it was measured with
 * (fdt_gen_source_hash) and that is this generator's hash for the same problem and config
 * (unchanged), or not (differs: the code changed, or this generator refuses the config), or
 * nothing is recorded for it (unrecorded). The hash is recorded under "kernel_source
 * <generator> <backend> <op> R<n> <precision> <grid> config <FNV-1a of the config text>"
 * (dwave: " W<width> S<strength>" after the grid) when a best is decided with this fdtune's
 * generator (fdt_db_best_decide) and carried along
 * by `fdtune db merge`. */
typedef enum {
    FDT_DB_KERNEL_CURRENT,
    FDT_DB_KERNEL_UNCHANGED,
    FDT_DB_KERNEL_DIFFERS,
    FDT_DB_KERNEL_UNRECORDED,
    FDT_DB_KERNEL_COUNT
} fdt_db_kernel;
#define FDT_DB_KERNEL_KEY_PREFIX "kernel_source "
/* "this generator", "unchanged", "differs", "unrecorded" */
const char *fdt_db_kernel_name(fdt_db_kernel k);
/* 1 when a metadata key is a recorded kernel source (FDT_DB_KERNEL_KEY_PREFIX). */
int fdt_db_kernel_is_source_key(const char *key);
/* The metadata key of row's kernel source. */
void fdt_db_kernel_key(const fdt_db_row *row, char *key, size_t n);
/* This generator's hash of row's kernel (fdt_gen_source_hash for its problem, config and
 * device backend); -1 when the generator refuses the config. */
int fdt_db_kernel_hash(const fdt_db_row *row, char *hex, size_t n, fdt_err *e);
/* The hash db records for row's kernel; *found = 0 when none. */
int fdt_db_kernel_recorded(fdt_db *db, const fdt_db_row *row, char *hex, size_t n, int *found,
                           fdt_err *e);
/* Row's state (row read from db). */
int fdt_db_kernel_check(fdt_db *db, const fdt_db_row *row, fdt_db_kernel *k, fdt_err *e);
/* Removes the recorded kernel sources that name no best of db (after a best-only merge). */
int fdt_db_kernel_prune(fdt_db *db, fdt_err *e);
typedef int (*fdt_db_kernel_fn)(void *ctx, const fdt_db_row *row, fdt_db_kernel k);
/* Every best of db (fdt_db_best, by device then problem) with its kernel's state; return
 * non-zero from fn to stop. */
int fdt_db_kernels(fdt_db *db, fdt_db_kernel_fn fn, void *ctx, fdt_err *e);

/* ------------------------------------------------------------------ health (fdtune db check) */

typedef struct fdt_db_health {
    int version;             /* schema version of the file */
    char integrity[1024];    /* "" when PRAGMA integrity_check finds nothing, else its first
                                problems */
    int64_t fk_violations;   /* rows that refer to a missing row (PRAGMA foreign_key_check) */
    int64_t bad_decisions;   /* decisions that do not name an ok full evaluation of their own
                                device and problem (written past the schema's trigger) */
    int64_t bad_runs;        /* runs that share a natural key (fdt_db_import_check) */
    int64_t out_of_bounds;   /* rows holding an integer outside the bounds of schema v6 (a
                                radius outside 1..8, a size outside 1..10^9, ...): written
                                outside fdtune, or damaged */
    char out_of_bounds_first[256]; /* the first ("problems row 3: ny = ..., outside ...") */
    /* Not errors, but worth knowing: */
    int64_t running_runs;    /* runs recorded as running */
    int64_t stale_runs;      /* of them, runs no process is writing any more: no other process
                                had the file open when it was checked (a file on a local file
                                system), or the run's process on this host is gone. Their
                                results stand; the runs were cut off (killed, crashed, copied
                                mid-run) and never finish. */
    char stale_first[320];   /* the first ("run 30 (host h, pid 12, started ...)") */
    int64_t idle_runs;       /* runs without an evaluation (stopped before the first) */
    int64_t unused_devices, unused_environments, unused_problems, unused_configs;
    fdt_db_counts rows;
} fdt_db_health;
/* Gathers all of the above; fails only when the file cannot be read at all. */
int fdt_db_health_check(fdt_db *db, fdt_db_health *h, fdt_err *e);
/* 1 when h shows a problem (integrity, foreign keys, decisions, run keys, bounds); stale
 * runs are a warning. */
int fdt_db_health_bad(const fdt_db_health *h);

/* What one (device, problem) holds. */
typedef struct fdt_db_pair {
    fdt_device device;
    fdt_problem problem;
    int64_t evaluations, ok, runs; /* ok: ok full evaluations */
    int decided;                   /* a best decision is recorded */
    double best_ms;                /* median of the best (fdt_db_best); NaN: none */
} fdt_db_pair;
typedef int (*fdt_db_pair_fn)(void *ctx, const fdt_db_pair *p);
/* Every (device, problem) with evaluations, by device, then problem. */
int fdt_db_pairs(fdt_db *db, fdt_db_pair_fn fn, void *ctx, fdt_err *e);

#endif
