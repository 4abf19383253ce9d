/* A tuning session: what tune and retune set up before they measure anything, in one place.
 * Opening one probes the visible GPUs (in a child process), resolves the GPU asked for
 * through the catalogue, opens or creates the tuning database, marks interrupted the runs a
 * killed fdtune left "running", and starts a GPU worker for each device it opens, with that
 * device's database and environment ids. From the first worker on, SIGINT and SIGTERM set
 * the session's stop flag (a second one kills, as always) until the session closes. The
 * database and the stop flag belong to the session, the device, its ids and its worker to
 * each of its GPUs, so one session can hold several GPUs of a node, a worker each, over one
 * database. A session on the host CPU (--cpu) holds it as its one device, with a worker like
 * a GPU's (backend cpu), and never probes the GPUs. What --gpu auto and --cpu name is decided
 * here for every command (tune, retune, and query and export, which match stored devices
 * with it): --gpu never names the host CPU. This module never prints or exits:
 * failures come back as an fdt_status with a "what: why" message, and when no GPU is visible
 * the probe says per backend why. */
#ifndef FDT_SESSION_H
#define FDT_SESSION_H

#include <signal.h>

#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"

/* Lists the visible devices (fdt_probe_devices, or a fake in tests). */
typedef int (*fdt_probe_fn)(fdt_probe *p, fdt_err *e);
/* Describes the host CPU (fdt_probe_host, or a fake in tests). */
typedef int (*fdt_host_fn)(fdt_device *d, fdt_err *e);

typedef struct fdt_session_opts {
    const char *db_path;      /* the database to open, created when missing (NULL: the
                                 default path); opened only once a GPU is there to use */
    fdt_db *db;               /* instead, one the caller opened and closes (retune opens it
                                 first, for its lock, with fdt_session_open_db); its kind is
                                 checked, then its stale runs are marked */
    const fdt_catalogue *cat; /* resolves `gpu` and completes device descriptions */
    int select;               /* 1: open the GPU `gpu` names at once; 0: none yet */
    const char *gpu;          /* catalogue name, alias or arch; NULL or "auto": the first */
    const char *cpu;          /* instead of a GPU, the host CPU: "auto", or a part of its name
                                 or arch it must match (fdt_session_select_cpu); NULL: a GPU */
    const char *fdtune_version; /* recorded in each GPU's environment */
    fdt_worker_opts worker;   /* of each GPU's worker */
    fdt_probe_fn probe;       /* NULL: fdt_probe_devices */
    fdt_host_fn probe_host;   /* with cpu, instead of probe: NULL: fdt_probe_host */
    const fdt_probe *probed;  /* the devices already listed, used instead of probing: the
                                 simulator's (fdt_sim_probe), or the probe of the process a
                                 GPU's own process was forked from; NULL: probe */
} fdt_session_opts;

/* No database, no GPU selected, default worker options, the real probe. */
void fdt_session_opts_init(fdt_session_opts *o);

/* One GPU of the session. */
typedef struct fdt_session_gpu {
    int live;                 /* its index in the session's probe */
    fdt_device dev;           /* the probe's description completed from the catalogue */
    fdt_db_env env;           /* its software environment now */
    int64_t device_id, env_id; /* in the session's database (keyed on the probe's description) */
    fdt_worker *w;            /* NULL once stopped */
} fdt_session_gpu;

typedef struct fdt_session {
    fdt_probe probe;          /* what the backends saw: the devices, or per backend why none */
    fdt_db *db;
    const fdt_catalogue *cat; /* completes the GPUs' descriptions (from the options; a caller
                                 that loads it after opening sets it here) */
    int stale;                /* earlier runs marked interrupted at open */
    const volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM: stop after what is in flight */
    int ngpus;
    fdt_session_gpu gpu[FDT_MAX_DEVICES];
    /* private */
    fdt_session_opts o;
    int own_db, catching;
    struct sigaction old_int, old_term;
} fdt_session;

/* --gpu auto, in every command that takes --gpu: the visible GPU, the first of the visible
 * GPUs (fdt_session_auto_device), which tune opens and which query, export and retune
 * match stored devices with (fdt_session_resolve_auto). 1 when gpu is "auto" (--cpu auto
 * too). */
int fdt_session_gpu_auto(const char *gpu);

/* How many of the visible devices p are GPUs (not fdt_target_device_is_cpu). */
int fdt_session_gpu_count(const fdt_probe *p);

/* The device "auto" names among the visible devices p: the first GPU (never the host CPU),
 * completed from cat (may be NULL), into *dev. None visible: -1 and e "--gpu auto: no GPU is
 * visible". */
int fdt_session_auto_device(const fdt_catalogue *cat, const fdt_probe *p, fdt_device *dev,
                            fdt_err *e);

/* --cpu in every command that takes it: the host CPU among the visible devices p (the first
 * fdt_target_device_is_cpu device; a process sees one) into *dev and *index, when cpu is "auto" or
 * a case-insensitive part of its name or arch. Fails (*index -1) when no CPU is listed (this
 * build has no cpu backend) or when the host CPU is not the one cpu names (e names it). */
int fdt_session_select_cpu(const char *cpu, const fdt_probe *p, fdt_device *dev, int *index,
                           fdt_err *e);

/* The devices of a session on the host CPU: the host CPU alone (host; NULL: fdt_probe_host)
 * as the one device of *p. Fails saying why ("the host CPU: ..."; no C compiler: $CC). */
int fdt_session_probe_cpu(fdt_host_fn host, fdt_probe *p, fdt_err *e);

/* The host CPU --cpu (cpu: "auto" or a part of its name or arch) names: described
 * (fdt_session_probe_cpu) into *p, then fdt_session_select_cpu into *dev. FDT_STATUS_USAGE
 * when the host CPU is not the one cpu names, FDT_STATUS_ERROR when it cannot be described. */
fdt_status fdt_session_host_cpu(const char *cpu, fdt_host_fn host, fdt_probe *p,
                                fdt_device *dev, fdt_err *e);

/* --cpu auto in the commands that compare --cpu with stored devices (query, export):
 * *cpu stays unless it is "auto"; then *dev is the host CPU (fdt_session_host_cpu) and *cpu
 * points at its name (held in *dev). */
fdt_status fdt_session_resolve_cpu(const char **cpu, fdt_host_fn host, fdt_probe *p,
                                   fdt_device *dev, fdt_err *e);

/* What a --gpu argument names device d by. A filter of stored devices (a substring of their
 * name or arch; cat NULL): d's name as the driver gives it, which is what a database stores
 * for that model (its arch when the driver gave no name). A lookup that falls back to the GPU
 * catalogue (export, query best --nearest; cat given): the name of d's catalogue entry when
 * it has one, which finds the stored results of that model and describes it when none are
 * stored; else the same as without. */
const char *fdt_session_gpu_text(const fdt_device *d, const fdt_catalogue *cat);

/* --gpu auto in the commands that compare --gpu with stored devices (query, export): *gpu
 * stays unless it is "auto"; then the visible devices are probed (probe; NULL:
 * fdt_probe_devices) into *p, *dev is the one "auto" names (completed from cat, may be NULL)
 * and *gpu points at its text (fdt_session_gpu_text(dev, cat), held in *dev).
 * FDT_STATUS_NO_GPU (e says so, p per backend why) when none is visible, FDT_STATUS_ERROR when
 * the probe failed. */
fdt_status fdt_session_resolve_auto(const char **gpu, const fdt_catalogue *cat,
                                    fdt_probe_fn probe, fdt_probe *p, fdt_device *dev,
                                    fdt_err *e);

/* Resolves a GPU request (NULL or "auto": the first visible device; else a catalogue name,
 * alias or arch, fdt_catalogue_find) against the visible devices p. dev: the device
 * completed from the catalogue; *index: the visible device, or -1 when it is described from
 * the catalogue only, which is allowed when !need_live (the offline modes). */
int fdt_session_select_gpu(const fdt_catalogue *cat, const char *gpu, const fdt_probe *p,
                           int need_live, fdt_device *dev, int *index, fdt_err *e);

/* Opens a session. Order: the probe (with `cpu`, the host CPU alone: fdt_session_probe_cpu,
 * FDT_STATUS_ERROR when it cannot be described; else the GPUs, none visible:
 * FDT_STATUS_NO_GPU, s->probe says why); the selection (FDT_STATUS_USAGE when `gpu` names no
 * visible device, or `cpu` does not name the host CPU); the database, given open or opened
 * by path only now, so that nothing is created where nothing can be tuned, and checked
 * before anything is written to it: the kind of its devices must be the kind of the
 * session's (simulated GPUs or real ones: fdt_session_check_kind, FDT_STATUS_USAGE), and a
 * database opened here passes fdt_db_open_checked's checks; then its stale runs are marked;
 * the selected GPU or CPU (fdt_session_add_gpu). Other failures are FDT_STATUS_ERROR.
 * Whatever it returns, s is closed with fdt_session_close. */
fdt_status fdt_session_open(const fdt_session_opts *o, fdt_session *s, fdt_err *e);

/* Opens the visible device `live` as a GPU of the session: its description completed from
 * the catalogue, its environment, their ids in the database and a started worker; the first
 * worker arms the stop flag. *g (may be NULL) points at it. On failure nothing is added. */
int fdt_session_add_gpu(fdt_session *s, int live, fdt_session_gpu **g, fdt_err *e);

/* Opens (flags: FDT_DB_CREATE or FDT_DB_READWRITE) the database of a session whose visible
 * devices are p, refusing one of the other kind (fdt_session_check_kind: FDT_STATUS_USAGE)
 * among the checks that run before anything is written to it (fdt_db_open_checked; a
 * refusal of those is FDT_STATUS_ERROR). */
fdt_status fdt_session_open_db(const char *path, int flags, const fdt_probe *p, fdt_db **db,
                               fdt_err *e);

/* Simulated and real results never share a database: refuses (e) a database that holds a
 * device of the other kind than the visible devices p (all simulated, or all real). The
 * merged databases of several tasks are one kind as long as each task's was. */
int fdt_session_check_kind(fdt_db *db, const fdt_probe *p, fdt_err *e);

/* Arms the stop flag (SIGINT, SIGTERM) of a session that holds no GPU itself, whose GPUs
 * run in processes of their own (fdt_tune_many). */
void fdt_session_arm(fdt_session *s);

/* Closes the database the session opened (s->db is NULL after): a session whose GPUs run in
 * processes of their own, which open their own, must hold no connection when it forks them
 * (SQLite's rule: a connection never crosses a fork). */
void fdt_session_detach_db(fdt_session *s);

/* Stops one GPU's worker (its entry stays, with w NULL). */
void fdt_session_stop_gpu(fdt_session_gpu *g);

/* Stops the workers, restores the signal handlers and closes the database it opened. */
void fdt_session_close(fdt_session *s);

#endif
