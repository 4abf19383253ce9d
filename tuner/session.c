/* The tuning session: probe, GPU selection through the catalogue (and what --gpu auto names,
 * for tune and for the commands that read stored results), the database with its kind
 * (simulated or real) checked before anything is written to it, then its stale runs marked,
 * a worker per GPU with its device and environment ids, and the stop flag that SIGINT and
 * SIGTERM set while workers run (fdt_session.h). */
#include "fdt_session.h"
#include "fdt_target.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void fdt_session_opts_init(fdt_session_opts *o)
{
    memset(o, 0, sizeof *o);
    fdt_worker_opts_default(&o->worker);
}

int fdt_session_gpu_auto(const char *gpu) { return gpu && !strcmp(gpu, "auto"); }

/* The first visible device that is (cpu 1) or is not (cpu 0) a CPU; -1 when none is. */
static int first_of_kind(const fdt_probe *p, int cpu)
{
    for (int i = 0; i < p->ndevices; i++)
        if (fdt_target_device_is_cpu(&p->device[i]) == cpu)
            return i;
    return -1;
}

int fdt_session_gpu_count(const fdt_probe *p)
{
    int n = 0;
    for (int i = 0; i < p->ndevices; i++)
        n += !fdt_target_device_is_cpu(&p->device[i]);
    return n;
}

int fdt_session_auto_device(const fdt_catalogue *cat, const fdt_probe *p, fdt_device *dev,
                            fdt_err *e)
{
    int i = first_of_kind(p, 0);
    if (i < 0)
        return fdt_err_set(e, "--gpu auto: no GPU is visible");
    *dev = p->device[i];
    fdt_catalogue_complete(cat, dev);
    return 0;
}

int fdt_session_select_cpu(const char *cpu, const fdt_probe *p, fdt_device *dev, int *index,
                           fdt_err *e)
{
    *index = first_of_kind(p, 1);
    fdt_device_init(dev);
    if (*index < 0)
        return fdt_err_set(e, "--cpu %s: no CPU is listed among the devices", cpu);
    const fdt_device *h = &p->device[*index];
    if (!fdt_session_gpu_auto(cpu) && !strcasestr(h->name, cpu) && !strcasestr(h->arch, cpu)) {
        fdt_err_set(e, "--cpu %s: the host CPU is a %s (%s, %d cores); give --cpu auto or a "
                       "part of that name or arch", cpu, h->name, h->arch, h->compute_units);
        *index = -1;
        return -1;
    }
    *dev = *h;
    return 0;
}

int fdt_session_probe_cpu(fdt_host_fn host, fdt_probe *p, fdt_err *e)
{
    memset(p, 0, sizeof *p);
    if ((host ? host : fdt_probe_host)(&p->device[0], e))
        return fdt_err_wrap(e, "the host CPU");
    p->ndevices = 1;
    return 0;
}

fdt_status fdt_session_host_cpu(const char *cpu, fdt_host_fn host, fdt_probe *p,
                                fdt_device *dev, fdt_err *e)
{
    fdt_device_init(dev);
    if (fdt_session_probe_cpu(host, p, e))
        return FDT_STATUS_ERROR;
    int index;
    if (fdt_session_select_cpu(cpu, p, dev, &index, e))
        return index < 0 && first_of_kind(p, 1) >= 0 ? FDT_STATUS_USAGE : FDT_STATUS_ERROR;
    return FDT_STATUS_OK;
}

fdt_status fdt_session_resolve_cpu(const char **cpu, fdt_host_fn host, fdt_probe *p,
                                   fdt_device *dev, fdt_err *e)
{
    memset(p, 0, sizeof *p);
    fdt_device_init(dev);
    if (!fdt_session_gpu_auto(*cpu))
        return FDT_STATUS_OK;
    fdt_status st = fdt_session_host_cpu(*cpu, host, p, dev, e);
    if (st == FDT_STATUS_OK)
        *cpu = fdt_session_gpu_text(dev, NULL);
    return st;
}

const char *fdt_session_gpu_text(const fdt_device *d, const fdt_catalogue *cat)
{
    if (cat && d->catalogue[0])
        return d->catalogue;
    return d->name[0] ? d->name : d->arch;
}

fdt_status fdt_session_resolve_auto(const char **gpu, const fdt_catalogue *cat,
                                    fdt_probe_fn probe, fdt_probe *p, fdt_device *dev,
                                    fdt_err *e)
{
    memset(p, 0, sizeof *p);
    fdt_device_init(dev);
    if (!fdt_session_gpu_auto(*gpu))
        return FDT_STATUS_OK;
    if ((probe ? probe : fdt_probe_devices)(p, e))
        return FDT_STATUS_ERROR;
    if (fdt_session_auto_device(cat, p, dev, e))
        return FDT_STATUS_NO_GPU;
    *gpu = fdt_session_gpu_text(dev, cat);
    return FDT_STATUS_OK;
}

int fdt_session_select_gpu(const fdt_catalogue *cat, const char *gpu, const fdt_probe *p,
                           int need_live, fdt_device *dev, int *index, fdt_err *e)
{
    *index = -1;
    fdt_device_init(dev);
    if (!gpu || fdt_session_gpu_auto(gpu)) {
        if (fdt_session_auto_device(cat, p, dev, e) == 0) {
            *index = first_of_kind(p, 0);
            return 0;
        }
        if (!need_live) {
            fdt_err why = *e;
            fdt_err_set(e, "%s (a dry run without a GPU needs --gpu NAME, e.g. --gpu H100; "
                           "for the host CPU, --cpu auto)", why.msg);
        }
        return -1;
    }
    if (fdt_catalogue_find(cat, gpu, p->device, p->ndevices, dev, e))
        return -1;
    /* which visible device is it? */
    for (int i = 0; i < p->ndevices; i++) {
        const fdt_catalogue_entry *m = fdt_catalogue_match(cat, &p->device[i]);
        int same_entry = m && dev->catalogue[0] && !strcmp(m->dev.name, dev->catalogue);
        int same_live = dev->live && fdt_device_same_model(&p->device[i], dev);
        if (same_entry || same_live) {
            *index = i;
            *dev = p->device[i];
            fdt_catalogue_complete(cat, dev);
            return 0;
        }
    }
    if (!need_live)
        return 0; /* described from the catalogue */
    fdt_sb vis;
    fdt_sb_init(&vis);
    for (int i = 0; i < p->ndevices; i++)
        fdt_sb_printf(&vis, "%s%d: %s (%s)", i ? ", " : "", i, p->device[i].name,
                      p->device[i].arch);
    fdt_err_set(e, "--gpu %s: no visible device is a %s (visible: %s)", gpu, dev->name,
                p->ndevices ? fdt_sb_str(&vis) : "none");
    fdt_sb_free(&vis);
    return -1;
}

/* ---------------------------------------------------------------- the stop flag */

/* One per process: signal handlers cannot reach a session. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    if (stop_flag) { /* a second Ctrl-C: the user means it */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    stop_flag = 1;
}

void fdt_session_arm(fdt_session *s)
{
    if (s->catching)
        return;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &s->old_int);
    sigaction(SIGTERM, &sa, &s->old_term);
    s->catching = 1;
}

/* ---------------------------------------------------------------- open and close */

static int attach_db(fdt_session *s, fdt_db *db, fdt_err *e)
{
    s->db = db;
    return fdt_db_run_mark_stale(db, &s->stale, e);
}

typedef struct kind_check {
    int simulated; /* of the session's devices */
    fdt_device other; /* the first stored device of the other kind */
    int found;
} kind_check;

static int other_kind(void *ctx, const fdt_device *d)
{
    kind_check *k = ctx;
    if (fdt_device_simulated(d) == k->simulated)
        return 0;
    k->other = *d;
    k->found = 1;
    return 1;
}

int fdt_session_check_kind(fdt_db *db, const fdt_probe *p, fdt_err *e)
{
    kind_check k = {.simulated = p->ndevices > 0 && fdt_device_simulated(&p->device[0])};
    if (fdt_db_devices(db, NULL, other_kind, &k, e))
        return -1;
    if (!k.found)
        return 0;
    if (k.simulated)
        return fdt_err_set(e, "%s holds results of real GPUs (%s): simulated results go into a "
                           "database of their own (--db)", fdt_db_path(db), k.other.name);
    return fdt_err_set(e, "%s holds simulated results (%s): results of real GPUs go into a "
                       "database of their own (--db)", fdt_db_path(db), k.other.name);
}

typedef struct kind_gate {
    const fdt_probe *probe;
    int refused;
} kind_gate;

static int gate_kind(void *ctx, fdt_db *db, fdt_err *e)
{
    kind_gate *g = ctx;
    g->refused = fdt_session_check_kind(db, g->probe, e) != 0;
    return g->refused ? -1 : 0;
}

fdt_status fdt_session_open_db(const char *path, int flags, const fdt_probe *p, fdt_db **db,
                               fdt_err *e)
{
    kind_gate g = {.probe = p};
    if (fdt_db_open_checked(path, flags, gate_kind, &g, db, e))
        return g.refused ? FDT_STATUS_USAGE : FDT_STATUS_ERROR;
    return FDT_STATUS_OK;
}

void fdt_session_detach_db(fdt_session *s)
{
    if (s->own_db)
        fdt_db_close(s->db);
    s->db = NULL;
    s->own_db = 0;
}

fdt_status fdt_session_open(const fdt_session_opts *o, fdt_session *s, fdt_err *e)
{
    memset(s, 0, sizeof *s);
    s->o = *o;
    s->cat = o->cat;
    stop_flag = 0;
    s->stop = &stop_flag;
    if (o->probed)
        s->probe = *o->probed;
    else if (o->cpu ? fdt_session_probe_cpu(o->probe_host, &s->probe, e)
                    : (o->probe ? o->probe : fdt_probe_devices)(&s->probe, e))
        return FDT_STATUS_ERROR;
    fdt_device dev;
    int live = -1;
    if (o->cpu) {
        if (fdt_session_select_cpu(o->cpu, &s->probe, &dev, &live, e))
            return first_of_kind(&s->probe, 1) < 0 ? FDT_STATUS_ERROR : FDT_STATUS_USAGE;
    } else if (fdt_session_gpu_count(&s->probe) == 0) {
        fdt_err_set(e, "no GPU is visible");
        return FDT_STATUS_NO_GPU;
    }
    if (o->select && !o->cpu &&
        fdt_session_select_gpu(s->cat, o->gpu, &s->probe, 1, &dev, &live, e))
        return FDT_STATUS_USAGE;
    /* Every condition on the database is checked before its first write (stale runs). */
    if (o->db) {
        if (fdt_session_check_kind(o->db, &s->probe, e))
            return FDT_STATUS_USAGE;
        if (attach_db(s, o->db, e))
            return FDT_STATUS_ERROR;
    } else {
        fdt_db *db = NULL;
        fdt_status st = fdt_session_open_db(o->db_path, FDT_DB_CREATE, &s->probe, &db, e);
        if (st != FDT_STATUS_OK)
            return st;
        s->own_db = 1;
        if (attach_db(s, db, e))
            return FDT_STATUS_ERROR;
    }
    if (o->select && fdt_session_add_gpu(s, live, NULL, e))
        return FDT_STATUS_ERROR;
    return FDT_STATUS_OK;
}

int fdt_session_add_gpu(fdt_session *s, int live, fdt_session_gpu **out, fdt_err *e)
{
    if (live < 0 || live >= s->probe.ndevices || s->ngpus == FDT_MAX_DEVICES)
        return fdt_err_set(e, "session: no visible device %d", live);
    const fdt_device *info = &s->probe.device[live];
    fdt_session_gpu *g = &s->gpu[s->ngpus];
    memset(g, 0, sizeof *g);
    g->live = live;
    g->dev = *info;
    fdt_catalogue_complete(s->cat, &g->dev);
    fdt_db_env_from_device(info, s->o.fdtune_version, &g->env);
    if (fdt_db_device_id(s->db, info, &g->device_id, e) ||
        fdt_db_env_id(s->db, &g->env, &g->env_id, e) ||
        fdt_worker_start(info->backend, info->index, &s->o.worker, &g->w, NULL, e))
        return -1;
    s->ngpus++;
    fdt_session_arm(s);
    if (out)
        *out = g;
    return 0;
}

void fdt_session_stop_gpu(fdt_session_gpu *g)
{
    if (g->w)
        fdt_worker_stop(g->w);
    g->w = NULL;
}

void fdt_session_close(fdt_session *s)
{
    if (s->catching) {
        sigaction(SIGINT, &s->old_int, NULL);
        sigaction(SIGTERM, &s->old_term, NULL);
        s->catching = 0;
    }
    for (int i = 0; i < s->ngpus; i++)
        fdt_session_stop_gpu(&s->gpu[i]);
    fdt_session_detach_db(s);
}
