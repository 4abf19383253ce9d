/* fdtune's model's answers (fdt_export.h): for a device model nothing was measured on, the
 * top-ranked config of its architecture and grid, exactly what `fdtune --gpu X --R N --grid G
 * --dry-run` ranks first (fdt_model_rank over the operator's recipe, the device described
 * from the GPU catalogue). They are the step of the nearest ladder after every measured rung
 * and before fdtune's built-in default: a request gets one for a (device model, problem) only
 * where no measured result of the device's architecture can answer it (fdt_db_nearest_in
 * finds none), so a measured result, the user's or the system database's, replaces it as soon
 * as one exists. Rows made here have source FDT_DB_MODEL: no run, no date, no environment but
 * this fdtune's, the prediction in place of the median. */
#include "fdt_export.h"
#include "exp_internal.h"
#include "fdt_recipe.h"
#include "fdt_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTUNE_VERSION
#define FDTUNE_VERSION "?"
#endif

int fdt_exp_model_device(const struct fdt_catalogue *cat, const fdt_device *d, fdt_device *out)
{
    *out = *d;
    if (d->catalogue[0] && d->peak_bw_gbs > 0)
        return 0; /* described from the catalogue already */
    if (!cat || !fdt_catalogue_match(cat, d))
        return -1;
    fdt_catalogue_complete(cat, out);
    return 0;
}

int fdt_exp_model_answer(const fdt_device *dev, const fdt_problem *p, fdt_db_row *row,
                         int *have, fdt_err *e)
{
    *have = 0;
    fdt_recipe *r = NULL;
    if (fdt_recipe_load_for_op(p->op, NULL, &r, e))
        return fdt_err_wrap(e, "the model's answer");
    fdt_model_ranking k;
    int rc = fdt_model_rank(r, p, dev, 1, &k, e);
    char path[1024];
    snprintf(path, sizeof path, "%s", rc ? "" : fdt_recipe_path(r));
    fdt_recipe_free(r);
    if (rc) {
        char key[160];
        fdt_problem_format(p, key, sizeof key);
        return fdt_err_wrap(e, "the model's answer for %s on %s", key, dev->name);
    }
    if (k.ntop) {
        memset(row, 0, sizeof *row);
        fdt_db_eval_init(&row->ev);
        row->source = FDT_DB_MODEL;
        row->device = *dev;
        row->device.id = 0;
        row->problem = *p;
        row->ev.run_id = -1;
        row->ev.time_ms = k.top[0].pred_ms;
        row->ev.gbs = k.top[0].pred_gbs;
        row->ev.frac_copy = NAN;
        snprintf(row->ev.config, sizeof row->ev.config, "%s", k.top[0].config);
        fdt_layout l;
        fdt_err le;
        if (fdt_layout_make(p, k.top[0].cfg.align, &l, &le) == 0) {
            row->ev.layout_line = l.line;
            row->ev.layout_offset = l.offset;
        }
        snprintf(row->ev.message, sizeof row->ev.message,
                 "predicted by fdtune's model, not measured: the first of %zu configs of %s "
                 "ranked on %s", k.n, path, dev->name);
        snprintf(row->env.fdtune_version, sizeof row->env.fdtune_version, "%s", FDTUNE_VERSION);
        snprintf(row->env.generator, sizeof row->env.generator, "%s", fdt_gen_fingerprint());
        *have = 1;
    }
    fdt_model_ranking_free(&k);
    return 0;
}

/* ------------------------------------------------------------------ the request's problems */

typedef struct problems {
    fdt_problem *v;
    size_t n, cap;
    const fdt_exp_opts *o;
    int oom;
} problems;

static int same_problem(const fdt_problem *a, const fdt_problem *b)
{
    return a->op == b->op && a->R == b->R && a->prec == b->prec && a->nx == b->nx &&
           a->ny == b->ny && a->nz == b->nz;
}

static void add_problem(problems *ps, const fdt_problem *p)
{
    for (size_t i = 0; i < ps->n; i++)
        if (same_problem(&ps->v[i], p))
            return;
    fdt_problem *v = fdt_grow(ps->v, &ps->cap, ps->n, sizeof *v, 32);
    if (!v) {
        ps->oom = 1;
        return;
    }
    ps->v = v;
    ps->v[ps->n++] = *p;
}

/* Whether the request's filters take problem p. */
static int wanted(const fdt_exp_opts *o, const fdt_problem *p)
{
    if ((o->ops && !(o->ops & (1u << p->op))) || (o->Rs && !(o->Rs & (1u << p->R))) ||
        (o->precs && !(o->precs & (1u << p->prec))))
        return 0;
    for (int g = 0; g < o->ngrids; g++)
        if (o->grids[g][0] == p->nx && o->grids[g][1] == p->ny && o->grids[g][2] == p->nz)
            return 1;
    return !o->ngrids;
}

static int collect_problem(void *ctx, const fdt_db_row *r)
{
    problems *ps = ctx;
    if (wanted(ps->o, &r->problem))
        add_problem(ps, &r->problem);
    return ps->oom;
}

/* The problems a request is about: those of every result of the databases its filters take,
 * and with operators, R and grids given, every problem they name (its precision, else
 * both). */
static int request_problems(fdt_db *const *dbs, size_t ndbs, const fdt_exp_opts *o,
                            problems *ps, fdt_err *e)
{
    ps->o = o;
    for (size_t k = 0; k < ndbs; k++) {
        fdt_db_filter f;
        fdt_db_filter_init(&f);
        f.Rs = o->Rs;
        f.precs = o->precs;
        f.absorb_w = o->absorb_w;
        f.absorb_s = o->absorb_s;
        if (fdt_db_best(dbs[k], &f, collect_problem, ps, e))
            return -1;
    }
    for (int op = 0; op < FDT_OP_COUNT && o->ops && o->Rs && o->ngrids; op++)
        for (int R = FDT_R_MIN; R <= FDT_R_MAX; R++)
            for (int prec = 0; prec < 2 && (o->Rs & (1u << R)); prec++)
                for (int g = 0; g < o->ngrids; g++) {
                    fdt_problem p = {(fdt_op)op, R, (fdt_prec)prec, o->grids[g][0],
                                     o->grids[g][1], o->grids[g][2]};
                    if (op == FDT_OP_DWAVE) { /* the layer asked for (--absorb) */
                        p.absorb_w = o->absorb_w;
                        p.absorb_s = o->absorb_s;
                    }
                    fdt_err pe;
                    if (wanted(o, &p) && fdt_problem_check(&p, &pe) == 0)
                        add_problem(ps, &p);
                }
    return ps->oom ? fdt_err_set(e, "the model's answers: out of memory") : 0;
}

/* The device models gpu names: the distinct stored ones it matches (fdt_exp_match_gpu), else
 * the catalogue's entry; none when it names neither. */
static int named_models(fdt_db *const *dbs, size_t ndbs, const char *gpu,
                        const struct fdt_catalogue *cat, fdt_db_device_list *models, fdt_err *e)
{
    fdt_db_device_list all;
    size_t *which = NULL;
    int rc = fdt_exp_collect_devices(dbs, ndbs, &all, &which, e);
    free(which);
    char *hit = rc ? NULL : calloc(all.n + 1, 1);
    if (!rc && !hit)
        rc = fdt_err_set(e, "the model's answers: out of memory");
    fdt_device entry;
    fdt_err ce;
    if (!rc && !fdt_exp_match_gpu(&all, gpu, cat, hit, &entry, &ce) && entry.name[0])
        fdt_db_collect_device(models, &entry);
    for (size_t i = 0; !rc && i < all.n; i++) {
        int dup = 0;
        for (size_t j = 0; j < models->n; j++)
            dup |= fdt_device_same_model(&models->v[j], &all.v[i]);
        if (hit[i] && !dup)
            fdt_db_collect_device(models, &all.v[i]);
    }
    if (!rc && models->oom)
        rc = fdt_err_set(e, "the model's answers: out of memory");
    free(all.v);
    free(hit);
    return rc;
}

/* Whether rows holds a model row of d's model for problem p already (another --gpu named it). */
static int answered(const fdt_db_rows *rows, const fdt_device *d, const fdt_problem *p)
{
    for (size_t i = 0; i < rows->n; i++)
        if (rows->v[i].source == FDT_DB_MODEL && same_problem(&rows->v[i].problem, p) &&
            fdt_device_same_model(&rows->v[i].device, d))
            return 1;
    return 0;
}

int fdt_exp_model_rows(fdt_db *const *dbs, size_t ndbs, const char *gpu, const fdt_exp_opts *o,
                       fdt_db_rows *rows, fdt_err *e)
{
    fdt_db_device_list models = {0};
    problems ps = {0};
    fdt_db_row *near = malloc(sizeof *near);
    int rc = near ? named_models(dbs, ndbs, gpu, o->cat, &models, e)
                  : fdt_err_set(e, "the model's answers: out of memory");
    if (!rc && models.n)
        rc = request_problems(dbs, ndbs, o, &ps, e);
    for (size_t d = 0; d < models.n && !rc; d++) {
        fdt_device dev;
        if (fdt_exp_model_device(o->cat, &models.v[d], &dev))
            continue; /* the catalogue cannot describe it: nothing to rank with */
        for (size_t i = 0; i < ps.n && !rc; i++) {
            fdt_db_fallback which;
            int have;
            if (answered(rows, &dev, &ps.v[i]))
                continue;
            rc = fdt_db_nearest_in(dbs, ndbs, &dev, &ps.v[i], NULL, near, &which, e);
            if (rc || which != FDT_DB_NEAREST_NONE)
                continue;
            rc = fdt_exp_model_answer(&dev, &ps.v[i], near, &have, e);
            if (!rc && have && fdt_db_collect_row(rows, near))
                rc = fdt_err_set(e, "the model's answers: out of memory");
        }
    }
    free(models.v);
    free(ps.v);
    free(near);
    return rc ? -1 : 0;
}
