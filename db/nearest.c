/* The fallback ladder for a (device, problem) that was not tuned exactly, by the one rule
 * exported headers apply too (portable/fdtuned_nearest.h): among the best results of the
 * same op, R, precision and base arch, one per device model and grid (the first by
 * fdtuned_tiebreak), those whose config can run the requested grid, ranked by rung (this
 * model and grid, this model, another model of the arch), grid distance, compute-unit
 * distance and time; nothing at all means the caller goes on down the ladder: the model's
 * answer (export/model.c), then fdtune's default config.
 * SQL yields the best result of every candidate (device, problem) pair of the arch; the rest
 * happens here. Over the user's and the system database, the candidates of both compete
 * once fdt_db_rows_shadow has dropped the system's results for slots the user tuned; the
 * same function decides what query best lists and what export keeps. */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(FDT_DB_NEAREST_EXACT == (int)FDTUNED_RUNG_EXACT &&
                   FDT_DB_NEAREST_GRID == (int)FDTUNED_RUNG_GRID &&
                   FDT_DB_NEAREST_ARCH == (int)FDTUNED_RUNG_ARCH &&
                   FDT_DB_NEAREST_MODEL == (int)FDTUNED_RUNG_MODEL &&
                   FDT_DB_NEAREST_NONE == (int)FDTUNED_RUNG_NONE,
               "the ladder's rungs are the portable ranking's");

void fdt_db_row_result(const fdt_db_row *row, fdtuned_result *r)
{
    r->name = row->device.name;
    r->arch = row->device.arch;
    r->cus = row->device.compute_units;
    r->nx = row->problem.nx;
    r->ny = row->problem.ny;
    r->nz = row->problem.nz;
    r->ms = row->ev.time_ms;
    r->id = row->ev.id;
    r->predicted = row->source == FDT_DB_MODEL;
}

/* Whether row i is a candidate: the first of its device model and grid, with a config that
 * can run the requested problem. */
static int candidate(const fdt_db_rows *rows, size_t i, const fdt_problem *p)
{
    fdtuned_result ri, rj;
    fdt_db_row_result(&rows->v[i], &ri);
    for (size_t j = 0; j < rows->n; j++) {
        fdt_db_row_result(&rows->v[j], &rj);
        if (j != i && fdtuned_same_slot(&ri, &rj) && fdtuned_tiebreak(&rj, &ri) < 0)
            return 0;
    }
    fdt_config c;
    fdt_err e;
    return fdt_config_parse(rows->v[i].ev.config, &c, &e) == 0 &&
           fdt_config_fit(p, &c, NULL, &e) == 0;
}

static const char nearest_sql[] = FDT_DBI_BEST_SQL(
    "(d.arch = :arch OR substr(d.arch, 1, length(:arch) + 1) = :arch || ':')"
    " AND p.op = :op AND p.radius = :R AND p.precision = :prec"
    " AND p.absorb_width = :W AND p.absorb_strength = :S"
    " AND (:generator IS NULL OR v.generator = :generator)", "");

/* The best results of the request's op, R, precision, absorbing layer and base arch. */
static int collect(fdt_db *db, const fdt_device *dev, const fdt_problem *p,
                   const char *generator, fdt_db_rows *rows, fdt_err *e)
{
    char arch[sizeof dev->arch];
    snprintf(arch, sizeof arch, "%.*s", fdtuned_arch_base_len(dev->arch), dev->arch);
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, nearest_sql, &st, e))
        return -1;
    int rc = fdt_dbi_bind_text(st, ":arch", arch);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":op", fdt_op_name(p->op));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":R", p->R);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":prec", fdt_prec_name(p->prec));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":W", p->absorb_w);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":S", p->absorb_s);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":generator", generator);
    if (rc != SQLITE_OK) {
        fdt_dbi_fail(db, e, rc, "bind");
        sqlite3_finalize(st);
        return -1;
    }
    if (fdt_dbi_each_row(db, st, fdt_db_collect_row, rows, e, "query"))
        return -1;
    return rows->oom ? fdt_err_set(e, "out of memory") : 0;
}

static int same_problem(const fdt_problem *a, const fdt_problem *b)
{
    return a->op == b->op && a->R == b->R && a->prec == b->prec && a->nx == b->nx &&
           a->ny == b->ny && a->nz == b->nz && a->absorb_w == b->absorb_w &&
           a->absorb_s == b->absorb_s;
}

void fdt_db_rows_shadow(fdt_db_rows *rows)
{
    size_t n = 0;
    for (size_t i = 0; i < rows->n; i++) {
        const fdt_db_row *r = &rows->v[i];
        int shadowed = 0;
        for (size_t j = 0; j < rows->n && !shadowed; j++) {
            const fdt_db_row *u = &rows->v[j];
            shadowed = u->source < r->source && same_problem(&u->problem, &r->problem) &&
                       fdt_device_same_model(&u->device, &r->device);
        }
        if (!shadowed)
            rows->v[n++] = *r;
    }
    rows->n = n;
}

int fdt_db_nearest(fdt_db *db, const fdt_device *dev, const fdt_problem *p,
                   const char *generator, fdt_db_row *out, fdt_db_fallback *which, fdt_err *e)
{
    return fdt_db_nearest_in(&db, 1, dev, p, generator, out, which, e);
}

int fdt_db_nearest_in(fdt_db *const *dbs, size_t ndbs, const fdt_device *dev,
                      const fdt_problem *p, const char *generator, fdt_db_row *out,
                      fdt_db_fallback *which, fdt_err *e)
{
    *which = FDT_DB_NEAREST_NONE;
    if (p->nx <= 0 || p->ny <= 0 || p->nz <= 0 || (unsigned)p->op >= FDT_OP_COUNT)
        return fdt_err_set(e, "nearest: invalid problem");
    fdt_db_rows rows = {0};
    for (size_t k = 0; k < ndbs; k++)
        if (collect(dbs[k], dev, p, generator, &rows, e)) {
            free(rows.v);
            return fdt_err_wrap(e, "nearest");
        }
    fdt_db_rows_shadow(&rows);
    fdtuned_request q = {dev->name, dev->arch, dev->compute_units, p->nx, p->ny, p->nz};
    fdtuned_result r, b;
    size_t best = rows.n;
    for (size_t i = 0; i < rows.n; i++) {
        fdt_db_row_result(&rows.v[i], &r);
        if (fdtuned_rung(&q, &r) == FDTUNED_RUNG_NONE || !candidate(&rows, i, p))
            continue;
        if (best < rows.n) {
            fdt_db_row_result(&rows.v[best], &b);
            if (fdtuned_rank(&q, &r, &b) >= 0)
                continue;
        }
        best = i;
    }
    if (best < rows.n) {
        *out = rows.v[best];
        fdt_db_row_result(out, &r);
        *which = (fdt_db_fallback)fdtuned_rung(&q, &r);
    }
    free(rows.v);
    return 0;
}
