/* The fallback ladder for a (device, problem) that was not tuned exactly: this grid on this
 * device model, else the nearest tuned grid on this device model, else the nearest result on
 * another model of the same arch, else nothing (the caller uses the recipe's default). SQL
 * yields the best result of every candidate (device, problem) pair; the ranking is done here
 * because it needs logarithms, which not every SQLite build provides. */
#include "db_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct candidate {
    fdt_db_fallback rung;
    double vol, plane; /* |log| of the volume and xy-plane ratios */
    int64_t cu;        /* compute-unit difference */
    double time_ms;
    int64_t nx, ny, nz, device_id, eval_id;
} candidate;

static int same_model(const fdt_db_device *a, const fdt_db_device *b)
{
    return !strcmp(a->backend, b->backend) && !strcmp(a->vendor, b->vendor) &&
           !strcmp(a->name, b->name) && !strcmp(a->arch, b->arch) &&
           a->compute_units == b->compute_units && a->mem_bytes == b->mem_bytes;
}

/* Volumes of real grids are far below 2^53, so equal volumes give bit-equal distances and
 * the tie-breakers below decide, not rounding. */
static double log_ratio(double a, double b) { return fabs(log(a / b)); }

static void rate(const fdt_db_device *dev, const fdt_problem *p, const fdt_db_row *row,
                 candidate *c)
{
    const fdt_problem *q = &row->problem;
    int exact = q->nx == p->nx && q->ny == p->ny && q->nz == p->nz;
    if (same_model(dev, &row->device))
        c->rung = exact ? FDT_DB_NEAREST_EXACT : FDT_DB_NEAREST_GRID;
    else
        c->rung = FDT_DB_NEAREST_ARCH;
    c->vol = log_ratio((double)q->nx * (double)q->ny * (double)q->nz,
                       (double)p->nx * (double)p->ny * (double)p->nz);
    c->plane = log_ratio((double)q->nx * (double)q->ny, (double)p->nx * (double)p->ny);
    c->cu = llabs((long long)row->device.compute_units - (long long)dev->compute_units);
    c->time_ms = row->ev.time_ms;
    c->nx = q->nx;
    c->ny = q->ny;
    c->nz = q->nz;
    c->device_id = row->device.id;
    c->eval_id = row->ev.id;
}

#define CMP(a, b)                      \
    do {                               \
        if ((a) != (b))                \
            return (a) < (b) ? -1 : 1; \
    } while (0)

static int compare(const candidate *a, const candidate *b)
{
    CMP(a->rung, b->rung);
    CMP(a->vol, b->vol);
    CMP(a->plane, b->plane);
    CMP(a->cu, b->cu);
    CMP(a->time_ms, b->time_ms);
    CMP(a->nx, b->nx);
    CMP(a->ny, b->ny);
    CMP(a->nz, b->nz);
    CMP(a->device_id, b->device_id);
    CMP(a->eval_id, b->eval_id);
    return 0;
}

static const char nearest_sql[] = FDT_DBI_BEST_SQL(
    "d.backend = :backend AND d.arch = :arch AND p.op = :op AND p.radius = :R"
    " AND p.precision = :prec AND (:generator IS NULL OR v.generator = :generator)", "");

int fdt_db_nearest(fdt_db *db, const fdt_db_device *dev, const fdt_problem *p,
                   const char *generator, fdt_db_row *out, fdt_db_fallback *which, fdt_err *e)
{
    *which = FDT_DB_NEAREST_NONE;
    if (p->nx <= 0 || p->ny <= 0 || p->nz <= 0 || (unsigned)p->op >= FDT_OP_COUNT)
        return fdt_err_set(e, "nearest: invalid problem");
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, nearest_sql, &st, e))
        return fdt_err_wrap(e, "nearest");
    int rc = fdt_dbi_bind_text(st, ":backend", dev->backend);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":arch", dev->arch);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":op", fdt_op_name(p->op));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":R", p->R);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":prec", fdt_prec_name(p->prec));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":generator", generator);
    candidate best = {0}, c;
    int have = 0;
    fdt_db_row *row = malloc(sizeof *row); /* rows are large; keep them off the stack */
    if (!row) {
        sqlite3_finalize(st);
        return fdt_err_set(e, "nearest: out of memory");
    }
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        fdt_dbi_read_row(st, row);
        rate(dev, p, row, &c);
        if (!have || compare(&c, &best) < 0) {
            best = c;
            *out = *row;
            have = 1;
        }
    }
    free(row);
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "nearest");
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    if (have)
        *which = best.rung;
    return 0;
}
