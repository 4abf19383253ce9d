/* Collecting an export plan from the databases (the user's, then the system database):
 * which stored devices each --gpu names (substring of name or arch, then the GPU catalogue's
 * names and aliases), the best evaluation of every (device, problem) among them, the
 * system's results for what the user tuned left out (fdt_db_rows_shadow), one result per
 * device model and grid (the fastest when several GPUs of one model were tuned), grouped into
 * one family per operator/R/precision with fdtune's default config as the fallback. A
 * request the databases cannot answer is refused here, before anything is generated, so an
 * export never silently ships fallbacks where the user asked for tuned kernels. */
#include "fdt_export.h"
#include "exp_internal.h"
#include "fdt_recipe.h"
#include "fdt_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void fdt_exp_opts_init(fdt_exp_opts *o) { memset(o, 0, sizeof *o); }

int fdt_exp_family_nvariants(const fdt_exp_family *f) { return 1 + 2 * (int)f->ntuned; }

void fdt_exp_runtime_name(const fdt_problem *p, const fdt_config *c, char *buf, size_t n)
{
    /* The grid is not part of a runtime-dims kernel, so the name hashes the config only:
     * one kernel then serves every grid and device the config was best for. */
    char key[256];
    fdt_config_format(c, key, sizeof key);
    snprintf(buf, n, "fdt_%s_r%d_%s_rt_%08x", fdt_op_name(p->op), p->R, fdt_prec_name(p->prec),
             (unsigned)(fdt_hash64_str(key, FDT_HASH_SEED) & 0xffffffffu));
}

/* ------------------------------------------------------------------ collecting rows */

/* fdt_db_collect_row behind the filters fdt_db_best cannot express (operators, grids). */
typedef struct wanted_rows {
    fdt_db_rows *rows;
    const fdt_exp_opts *o;
} wanted_rows;

static int grid_wanted(const fdt_exp_opts *o, const fdt_problem *p)
{
    if (!o->ngrids)
        return 1;
    for (int i = 0; i < o->ngrids; i++)
        if (o->grids[i][0] == p->nx && o->grids[i][1] == p->ny && o->grids[i][2] == p->nz)
            return 1;
    return 0;
}

static int collect_wanted(void *ctx, const fdt_db_row *r)
{
    const wanted_rows *w = ctx;
    if (w->o->ops && !(w->o->ops & (1u << r->problem.op)))
        return 0;
    if (!grid_wanted(w->o, &r->problem))
        return 0;
    return fdt_db_collect_row(w->rows, r);
}

static int add_note(fdt_exp_plan *p, const char *fmt, ...) FDT_PRINTF(2, 3);
static int add_note(fdt_exp_plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *note = fdt_sb_vformat(fmt, ap);
    va_end(ap);
    char **v = note ? realloc(p->notes, (p->nnotes + 1) * sizeof *v) : NULL;
    if (!v) {
        free(note);
        return -1;
    }
    p->notes = v;
    p->notes[p->nnotes++] = note;
    return 0;
}

/* ------------------------------------------------------------------ devices */

static void describe_devices(const fdt_db_device_list *all, fdt_sb *b)
{
    if (!all->n) {
        fdt_sb_puts(b, "it holds no device");
        return;
    }
    fdt_sb_puts(b, "it holds ");
    for (size_t i = 0, k = 0; i < all->n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= fdt_device_same_model(&all->v[j], &all->v[i]);
        if (!dup)
            fdt_sb_printf(b, "%s%s (%s, %d CUs)", k++ ? ", " : "", all->v[i].name,
                          all->v[i].arch, all->v[i].compute_units);
    }
}

/* The refusal when a --gpu (NULL: none given) names no stored device; entry is the catalogue's
 * reading of it, when it had one. */
static void nothing_named(const char *opt, const char *gpu, const fdt_device *entry,
                          const fdt_db_device_list *all, const char *database, fdt_err *e)
{
    fdt_sb held;
    fdt_sb_init(&held);
    describe_devices(all, &held);
    if (!gpu)
        fdt_err_set(e, "%s: the database holds no device", database);
    else if (entry->name[0])
        fdt_err_set(e, "%s %s: %s (%s) was never tuned in %s (%s)", opt, gpu, entry->name,
                    entry->arch, database, fdt_sb_str(&held));
    else
        fdt_err_set(e, "%s %s: no %s in %s matches (%s)", opt, gpu,
                    strcmp(opt, "--cpu") ? "device" : "CPU", database, fdt_sb_str(&held));
    fdt_sb_free(&held);
}

/* ------------------------------------------------------------------ grouping */

/* A family is one operator, radius and precision, and for dwave one absorbing layer (its
 * kernels have the layer built in). */
static int same_family(const fdt_problem *a, const fdt_problem *b)
{
    return a->op == b->op && a->R == b->R && a->prec == b->prec &&
           a->absorb_w == b->absorb_w && a->absorb_s == b->absorb_s;
}

/* The dialect of a row's kernels: its device's target's (the GPUs' where none claims it). */
static fdt_gen_target row_dialect(const fdt_db_row *r)
{
    fdt_gen_target g = {fdt_target_device_is_cpu(&r->device) ? FDT_DIALECT_C : FDT_DIALECT_HIP};
    return g;
}

static int cmp_family(const fdt_problem *a, const fdt_problem *b)
{
    if (a->op != b->op)
        return a->op < b->op ? -1 : 1;
    if (a->R != b->R)
        return a->R < b->R ? -1 : 1;
    if (a->prec != b->prec)
        return a->prec < b->prec ? -1 : 1;
    if (a->absorb_w != b->absorb_w)
        return a->absorb_w < b->absorb_w ? -1 : 1;
    if (a->absorb_s != b->absorb_s)
        return a->absorb_s < b->absorb_s ? -1 : 1;
    return 0;
}

static int cmp_int64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

/* Family, then base arch, compute units, device name, grid volume, grid, then the order
 * fdtuned_tiebreak gives results of one device model and grid (the faster first): the order
 * of the variant tables. */
static int cmp_rows(const void *pa, const void *pb)
{
    const fdt_db_row *a = pa, *b = pb;
    int c = (int)row_dialect(a).dialect - (int)row_dialect(b).dialect; /* GPUs, then CPUs */
    if (!c)
        c = cmp_family(&a->problem, &b->problem);
    if (!c) {
        int la = fdtuned_arch_base_len(a->device.arch), lb = fdtuned_arch_base_len(b->device.arch);
        c = strncmp(a->device.arch, b->device.arch, (size_t)(la < lb ? la : lb));
        if (!c)
            c = la < lb ? -1 : la > lb;
    }
    if (!c)
        c = a->device.compute_units < b->device.compute_units ? -1
            : a->device.compute_units > b->device.compute_units;
    if (!c)
        c = strcmp(a->device.name, b->device.name);
    if (!c) {
        double va = (double)a->problem.nx * a->problem.ny * a->problem.nz;
        double vb = (double)b->problem.nx * b->problem.ny * b->problem.nz;
        c = va < vb ? -1 : va > vb;
    }
    if (!c)
        c = cmp_int64(a->problem.nx, b->problem.nx);
    if (!c)
        c = cmp_int64(a->problem.ny, b->problem.ny);
    if (!c)
        c = cmp_int64(a->problem.nz, b->problem.nz);
    if (!c) {
        fdtuned_result ra, rb;
        fdt_db_row_result(a, &ra);
        fdt_db_row_result(b, &rb);
        c = fdtuned_tiebreak(&ra, &rb);
    }
    return c;
}

/* One tuned result per (family, device model, grid): the nearest ranking's candidates. */
static int same_slot(const fdt_db_row *a, const fdt_db_row *b)
{
    fdtuned_result ra, rb;
    fdt_db_row_result(a, &ra);
    fdt_db_row_result(b, &rb);
    return same_family(&a->problem, &b->problem) && fdtuned_same_slot(&ra, &rb);
}

static void problem_filters(const fdt_exp_opts *o, char *buf, size_t n)
{
    fdt_sb b;
    fdt_sb_init(&b);
    for (int R = 0, k = 0; R < 32; R++)
        if (o->Rs & (1u << R))
            fdt_sb_printf(&b, k++ ? ",%d" : " R=%d", R);
    for (int p = FDT_F32, k = 0; p <= FDT_F64; p++)
        if (o->precs & (1u << p))
            fdt_sb_printf(&b, k++ ? ",%s" : " %s", fdt_prec_name((fdt_prec)p));
    snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
}

/* Whether row answers for what --gpu named: a measured result of a stored device it named,
 * or the model's answer for one of their models or for its catalogue entry. */
static int row_named(const fdt_db_row *row, const fdt_db_device_list *all,
                     const fdt_db_source *src, const char *hit, const fdt_device *entry)
{
    int model = row->source == FDT_DB_MODEL;
    if (model && entry->name[0] && fdt_device_same_model(entry, &row->device))
        return 1;
    for (size_t i = 0; i < all->n; i++)
        if (hit[i] && (model ? fdt_device_same_model(&all->v[i], &row->device)
                             : all->v[i].id == row->device.id && src[i] == row->source))
            return 1;
    return 0;
}

/* Every --gpu must have something tuned (or answered by the model) for what was asked: each
 * --op (when given), each --grid (when given), or anything matching the filters. gpu NULL:
 * no --gpu, every device. */
static int check_coverage(const fdt_exp_opts *o, const fdt_db_device_list *all,
                          const fdt_db_source *src, const char *hit, const fdt_device *entry,
                          const char *gpu, const fdt_db_rows *rows, fdt_err *e)
{
    char filt[64];
    problem_filters(o, filt, sizeof filt);
    fdt_sb names;
    fdt_sb_init(&names);
    for (size_t i = 0, k = 0; i < all->n; i++)
        if (hit[i])
            fdt_sb_printf(&names, "%s%s", k++ ? ", " : "", all->v[i].name);
    int rc = 0;
    for (int op = 0; op < FDT_OP_COUNT && !rc; op++) {
        if (o->ops ? !(o->ops & (1u << op)) : op > 0)
            continue;
        for (int g = 0; g < (o->ngrids ? o->ngrids : 1) && !rc; g++) {
            int found = 0;
            for (size_t r = 0; r < rows->n && !found; r++) {
                const fdt_db_row *row = &rows->v[r];
                if (o->ops && (int)row->problem.op != op)
                    continue;
                if (o->ngrids && (row->problem.nx != o->grids[g][0] ||
                                  row->problem.ny != o->grids[g][1] ||
                                  row->problem.nz != o->grids[g][2]))
                    continue;
                found = row_named(row, all, src, hit, entry);
            }
            if (found)
                continue;
            fdt_sb what;
            fdt_sb_init(&what);
            if (o->ops)
                fdt_sb_printf(&what, "%s%s", fdt_op_name((fdt_op)op), filt);
            else
                fdt_sb_printf(&what, "result%s%s", *filt ? " for" : "", filt);
            if (o->ngrids)
                fdt_sb_printf(&what, " on %lldx%lldx%lld", (long long)o->grids[g][0],
                              (long long)o->grids[g][1], (long long)o->grids[g][2]);
            if (gpu)
                rc = fdt_err_set(e, "--gpu %s: the database has no tuned %s for %s (see "
                                    "'fdtune query best --gpu %s'; tune it first)",
                                 gpu, fdt_sb_str(&what), fdt_sb_str(&names), gpu);
            else
                rc = fdt_err_set(e, "the database has no tuned %s (see 'fdtune query best'; "
                                    "tune it first)", fdt_sb_str(&what));
            fdt_sb_free(&what);
        }
    }
    fdt_sb_free(&names);
    return rc;
}

/* ------------------------------------------------------------------ the plan */

static void utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Adds a run once, keeping the runs by source, then id. */
static int add_run(fdt_exp_plan *p, int64_t run, fdt_db_source src)
{
    for (size_t i = 0; i < p->nruns; i++)
        if (p->runs[i] == run && p->run_sources[i] == src)
            return 0;
    int64_t *v = realloc(p->runs, (p->nruns + 1) * sizeof *v);
    if (v)
        p->runs = v;
    fdt_db_source *w = v ? realloc(p->run_sources, (p->nruns + 1) * sizeof *w) : NULL;
    if (!w)
        return -1;
    p->run_sources = w;
    size_t i = p->nruns++;
    while (i > 0 && (p->run_sources[i - 1] > src ||
                     (p->run_sources[i - 1] == src && p->runs[i - 1] > run))) {
        p->runs[i] = p->runs[i - 1];
        p->run_sources[i] = p->run_sources[i - 1];
        i--;
    }
    p->runs[i] = run;
    p->run_sources[i] = src;
    return 0;
}

/* Config, layout and kernel names of one tuned result; a stored config this generator no
 * longer accepts is an error rather than a silent gap. */
static int fill_tuned(fdt_exp_tuned *t, fdt_err *e)
{
    char key[160];
    fdt_problem_format(&t->row.problem, key, sizeof key);
    fdt_gen_target g = row_dialect(&t->row);
    if (fdt_config_parse(t->row.ev.config, &t->cfg, e) ||
        fdt_config_check_for(&g, &t->row.problem, &t->cfg, e) ||
        fdt_layout_make(&t->row.problem, t->cfg.align, &t->layout, e))
        return fdt_err_wrap(e, "%s on %s: stored best config '%s'", key, t->row.device.name,
                            t->row.ev.config);
    if (t->cfg.fault != FDT_FAULT_NONE)
        return fdt_err_set(e, "%s on %s: stored best config '%s' is a deliberately broken "
                              "test kernel", key, t->row.device.name, t->row.ev.config);
    fdt_gen_kernel_name(&t->row.problem, &t->cfg, t->kconst, sizeof t->kconst);
    fdt_exp_runtime_name(&t->row.problem, &t->cfg, t->kruntime, sizeof t->kruntime);
    return 0;
}

static int build_families(fdt_exp_plan *p, fdt_db_rows *rows, fdt_err *e)
{
    qsort(rows->v, rows->n, sizeof *rows->v, cmp_rows);
    /* One result per (family, device model, grid): the first after sorting, which
     * fdtuned_tiebreak puts first (the fastest), as fdt_db_nearest keeps it. */
    size_t n = 0;
    for (size_t i = 0; i < rows->n; i++)
        if (!n || !same_slot(&rows->v[n - 1], &rows->v[i]))
            rows->v[n++] = rows->v[i];
    rows->n = n;
    for (size_t i = 0; i < rows->n;) {
        size_t j = i;
        fdt_gen_target g = row_dialect(&rows->v[i]);
        while (j < rows->n && same_family(&rows->v[i].problem, &rows->v[j].problem) &&
               row_dialect(&rows->v[j]).dialect == g.dialect)
            j++;
        fdt_exp_family *v = realloc(p->fam, (p->nfam + 1) * sizeof *v);
        if (!v)
            return fdt_err_set(e, "export: out of memory");
        p->fam = v;
        fdt_exp_family *f = &p->fam[p->nfam++];
        memset(f, 0, sizeof *f);
        const fdt_problem *pr = &rows->v[i].problem;
        f->cpu = g.dialect == FDT_DIALECT_C;
        f->op = pr->op;
        f->R = pr->R;
        f->prec = pr->prec;
        f->absorb_w = pr->absorb_w;
        f->absorb_s = pr->absorb_s;
        snprintf(f->name, sizeof f->name, "%s%s_r%d_%s", f->cpu ? "cpu_" : "",
                 fdt_op_name(pr->op), pr->R, fdt_prec_name(pr->prec));
        if (p->nfam > 1 && !strcmp(f[-1].name, f->name))
            return fdt_err_set(e, "export: %s R=%d %s was tuned with two absorbing layers (W=%d "
                                  "S=%g and W=%d S=%g): one header holds one layer per "
                                  "operator, radius and precision; pick one with --absorb",
                               fdt_op_name(pr->op), pr->R,
                               fdt_prec_name(pr->prec), f[-1].absorb_w, f[-1].absorb_s,
                               f->absorb_w, f->absorb_s);
        fdt_config_fallback_for(&g, pr, &f->fallback);
        fdt_exp_runtime_name(pr, &f->fallback, f->kfallback, sizeof f->kfallback);
        f->tuned = calloc(j - i, sizeof *f->tuned);
        if (!f->tuned)
            return fdt_err_set(e, "export: out of memory");
        for (size_t k = i; k < j; k++) {
            fdt_exp_tuned *t = &f->tuned[f->ntuned];
            t->row = rows->v[k];
            if (fill_tuned(t, e))
                return -1;
            t->vconst = 1 + 2 * (int)f->ntuned;
            t->vruntime = 2 + 2 * (int)f->ntuned;
            f->ntuned++;
            if (t->row.ev.run_id > 0 && add_run(p, t->row.ev.run_id, t->row.source))
                return fdt_err_set(e, "export: out of memory");
        }
        i = j;
    }
    return 0;
}

/* What the user should know about the result: device models of the selection that a
 * family has no result for (they get a same-arch result or the fallback), and results the
 * model predicted (stale_note adds the one about kernels that may not be the measured
 * ones). */
static int collect_notes(fdt_exp_plan *p)
{
    for (size_t f = 0; f < p->nfam; f++) {
        const fdt_exp_family *fam = &p->fam[f];
        for (size_t d = 0; d < p->ndevices; d++) {
            const fdt_device *dev = &p->devices[d];
            if (fdt_target_device_is_cpu(dev) != fam->cpu)
                continue; /* the other part's device */
            int dup = 0, have = 0, arch = 0;
            for (size_t k = 0; k < d; k++)
                dup |= fdt_device_same_model(&p->devices[k], dev);
            for (size_t t = 0; t < fam->ntuned; t++) {
                have |= fdt_device_same_model(&fam->tuned[t].row.device, dev);
                arch |= fdtuned_same_arch(fam->tuned[t].row.device.arch, dev->arch);
            }
            if (dup || have)
                continue;
            if (add_note(p, "%s (%s, %d CUs) has no tuned %s R=%d %s: it uses %s", dev->name,
                         dev->arch, dev->compute_units, fdt_op_name(fam->op), fam->R,
                         fdt_prec_name(fam->prec),
                         arch ? "the nearest result of its arch" : "the fallback (default "
                                                                   "config)"))
                return -1;
        }
    }
    for (size_t d = 0; d < p->ndevices; d++) {
        size_t n = 0;
        for (size_t f = 0; f < p->nfam; f++)
            for (size_t t = 0; t < p->fam[f].ntuned; t++)
                n += p->fam[f].tuned[t].row.source == FDT_DB_MODEL &&
                     fdt_device_same_model(&p->fam[f].tuned[t].row.device, &p->devices[d]);
        if (n && add_note(p, "%s (%s, %d CUs): %zu of the results are PREDICTED by fdtune's "
                             "model, not measured (nothing measured on %s answers them): tune "
                             "it to measure them", p->devices[d].name, p->devices[d].arch,
                          p->devices[d].compute_units, n, p->devices[d].arch))
            return -1;
    }
    return 0;
}

/* The note about results whose kernel may not be the one measured (fdt_exp_stale_note). */
static int stale_note(fdt_exp_plan *p, fdt_db *const *dbs, size_t ndbs, fdt_err *e)
{
    size_t n = 0;
    for (size_t f = 0; f < p->nfam; f++)
        n += p->fam[f].ntuned;
    fdt_db_row *rows = malloc((n + 1) * sizeof *rows);
    if (!rows)
        return fdt_err_set(e, "export: out of memory");
    n = 0;
    for (size_t f = 0; f < p->nfam; f++)
        for (size_t t = 0; t < p->fam[f].ntuned; t++)
            rows[n++] = p->fam[f].tuned[t].row;
    char *note = NULL;
    int rc = fdt_exp_stale_note(dbs, ndbs, rows, n, &note, e);
    free(rows);
    if (!rc && note && add_note(p, "%s", note))
        rc = fdt_err_set(e, "export: out of memory");
    free(note);
    return rc;
}

/* The plan's header fields: where from, when, by what. */
static void plan_init(fdt_exp_plan *p, fdt_db *const *dbs, size_t ndbs, const fdt_exp_opts *o)
{
    for (size_t k = 0; k < ndbs; k++) {
        int sys = fdt_db_source_of(dbs[k]) == FDT_DB_SYSTEM;
        char *into = sys ? p->system_database : p->database;
        snprintf(into, sizeof p->database, "%s", fdt_db_path(dbs[k]));
    }
    utc_now(p->exported, sizeof p->exported);
    snprintf(p->fdtune_version, sizeof p->fdtune_version, "%s",
             o->fdtune_version ? o->fdtune_version : "");
    snprintf(p->generator, sizeof p->generator, "%s", fdt_gen_fingerprint());
    snprintf(p->command, sizeof p->command, "%s", o->command ? o->command : "");
}

/* The selection of devices and their best results, with what a request lacks refused. */
typedef struct selection {
    fdt_db_device_list all; /* every stored device of every database */
    size_t *which;          /* the index in dbs of each one's database */
    fdt_db_source *src;     /* its source */
    char *hit, *sel;        /* named by the current --gpu; named by any */
    fdt_db_rows rows;
} selection;

/* Keeps among the devices hit those of one kind (cpu 1: CPUs, 0: GPUs); how many. */
static int keep_kind(const fdt_db_device_list *all, char *hit, int cpu)
{
    int n = 0;
    for (size_t i = 0; i < all->n; i++) {
        if (hit[i] && fdt_target_device_is_cpu(&all->v[i]) != cpu)
            hit[i] = 0;
        n += hit[i] != 0;
    }
    return n;
}

/* Each --gpu must name at least one device, stored or (with the model's answers) described
 * by the catalogue, and have what was asked for tuned or answered by the model. */
static int select_devices(fdt_db *const *dbs, size_t ndbs, const fdt_exp_opts *o,
                          fdt_exp_plan *p, selection *s, fdt_err *e)
{
    wanted_rows want = {&s->rows, o};
    char where[8300];
    snprintf(where, sizeof where, "%s%s%s", p->database, p->database[0] && p->system_database[0]
                                                             ? " and the system database " : "",
             p->system_database);
    for (int g = 0; g < (o->ngpus ? o->ngpus : 1); g++) {
        memset(s->hit, 0, s->all.n + 1);
        if (!o->ngpus)
            memset(s->hit, 1, s->all.n);
        fdt_device entry;
        fdt_err ce;
        fdt_device_init(&entry);
        int named = o->ngpus ? fdt_exp_match_gpu(&s->all, o->gpus[g], o->cat, s->hit, &entry,
                                                 &ce)
                             : (int)s->all.n;
        if (o->ngpus) /* --gpu names GPUs only, --cpu CPUs only */
            named = keep_kind(&s->all, s->hit, o->cpu[g]);
        /* Where nothing measured answers, the model's answers for what --gpu names. */
        size_t from = s->rows.n;
        if (o->ngpus && !o->cpu[g] &&
            fdt_exp_model_rows(dbs, ndbs, o->gpus[g], o, &s->rows, e))
            return FDT_EXP_ERROR;
        if (!named && s->rows.n == from) {
            nothing_named(o->ngpus && o->cpu[g] ? "--cpu" : "--gpu",
                          o->ngpus ? o->gpus[g] : NULL, &entry, &s->all, where, e);
            return FDT_EXP_NOTHING;
        }
        /* Their best results; fdt_db_best filters what it can, collect_wanted the rest. */
        for (size_t i = 0; i < s->all.n; i++) {
            if (!s->hit[i] || s->sel[i])
                continue;
            s->sel[i] = 1;
            fdt_db_filter f;
            fdt_db_filter_init(&f);
            f.device_id = s->all.v[i].id;
            f.Rs = o->Rs;
            f.precs = o->precs;
            f.absorb_w = o->absorb_w;
            f.absorb_s = o->absorb_s;
            if (fdt_db_best(dbs[s->which[i]], &f, collect_wanted, &want, e))
                return FDT_EXP_ERROR;
            if (s->rows.oom)
                return fdt_err_set(e, "export: out of memory");
        }
        if (check_coverage(o, &s->all, s->src, s->hit, &entry, o->ngpus ? o->gpus[g] : NULL,
                           &s->rows, e))
            return FDT_EXP_NOTHING;
    }
    return 0;
}

static int add_devices(fdt_exp_plan *p, const selection *s, fdt_err *e)
{
    for (size_t i = 0; i < s->all.n; i++) {
        if (!s->sel[i])
            continue;
        fdt_device *v = realloc(p->devices, (p->ndevices + 1) * sizeof *v);
        if (v)
            p->devices = v;
        fdt_db_source *w = v ? realloc(p->device_sources, (p->ndevices + 1) * sizeof *w) : NULL;
        if (!w)
            return fdt_err_set(e, "export: out of memory");
        p->device_sources = w;
        p->device_sources[p->ndevices] = s->src[i];
        p->devices[p->ndevices++] = s->all.v[i];
    }
    /* GPUs no database holds that the model answered for, described from the catalogue */
    for (size_t r = 0; r < s->rows.n; r++) {
        const fdt_device *d = &s->rows.v[r].device;
        int dup = s->rows.v[r].source != FDT_DB_MODEL;
        for (size_t i = 0; i < p->ndevices && !dup; i++)
            dup = fdt_device_same_model(&p->devices[i], d);
        if (dup)
            continue;
        fdt_device *v = realloc(p->devices, (p->ndevices + 1) * sizeof *v);
        if (v)
            p->devices = v;
        fdt_db_source *w = v ? realloc(p->device_sources, (p->ndevices + 1) * sizeof *w) : NULL;
        if (!w)
            return fdt_err_set(e, "export: out of memory");
        p->device_sources = w;
        p->device_sources[p->ndevices] = FDT_DB_MODEL;
        p->devices[p->ndevices++] = *d;
    }
    return 0;
}

int fdt_exp_plan_make(fdt_db *const *dbs, size_t ndbs, const fdt_exp_opts *o,
                      fdt_exp_plan **out, fdt_err *e)
{
    *out = NULL;
    if (o->ngpus < 0 || o->ngpus > FDT_EXP_MAX_GPUS || o->ngrids < 0 ||
        o->ngrids > FDT_EXP_MAX_GRIDS)
        return fdt_err_set(e, "export: at most %d devices and %d grids", FDT_EXP_MAX_GPUS,
                           FDT_EXP_MAX_GRIDS);
    fdt_exp_plan *p = calloc(1, sizeof *p);
    if (!p)
        return fdt_err_set(e, "export: out of memory");
    plan_init(p, dbs, ndbs, o);
    int rc = FDT_EXP_ERROR;
    selection s;
    memset(&s, 0, sizeof s);
    if (fdt_exp_collect_devices(dbs, ndbs, &s.all, &s.which, e))
        goto done;
    s.hit = calloc(s.all.n + 1, 1);
    s.sel = calloc(s.all.n + 1, 1);
    s.src = calloc(s.all.n + 1, sizeof *s.src);
    if (!s.hit || !s.sel || !s.src) {
        fdt_err_set(e, "export: out of memory");
        goto done;
    }
    for (size_t i = 0; i < s.all.n; i++)
        s.src[i] = fdt_db_source_of(dbs[s.which[i]]);
    if ((rc = select_devices(dbs, ndbs, o, p, &s, e)) != 0)
        goto done;
    rc = FDT_EXP_ERROR;
    fdt_db_rows_shadow(&s.rows);
    if (add_devices(p, &s, e) || build_families(p, &s.rows, e))
        goto done;
    if (collect_notes(p)) {
        fdt_err_set(e, "export: out of memory");
        goto done;
    }
    if (stale_note(p, dbs, ndbs, e))
        goto done;
    rc = 0;
done:
    free(s.all.v);
    free(s.which);
    free(s.src);
    free(s.rows.v);
    free(s.hit);
    free(s.sel);
    if (rc)
        fdt_exp_plan_free(p);
    else
        *out = p;
    return rc;
}

void fdt_exp_plan_free(fdt_exp_plan *p)
{
    if (!p)
        return;
    for (size_t f = 0; f < p->nfam; f++)
        free(p->fam[f].tuned);
    free(p->fam);
    for (size_t i = 0; i < p->nnotes; i++)
        free(p->notes[i]);
    free(p->notes);
    free(p->devices);
    free(p->device_sources);
    free(p->runs);
    free(p->run_sources);
    free(p);
}

size_t fdt_exp_kernel_count(const fdt_exp_plan *p)
{
    fdt_exp_kernels ks;
    if (fdt_exp_kernels_collect(p, &ks))
        return 0;
    size_t n = ks.n;
    fdt_exp_kernels_free(&ks);
    return n;
}
