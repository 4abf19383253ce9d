/* Reading a joined evaluation (FDT_DBI_ROW_COLUMNS) back into an fdt_db_row: each integer
 * within its bound (bounds.c), a snapshot's row only while its file is as it was (reader.c),
 * and the steps through a statement's rows. */
#include "db_internal.h"

#include <string.h>

/* The evaluation's columns from column 0; returns the next column, or -1 with e. Every
 * integer that is computed with is read within its bound (bounds.c), so nothing narrows or
 * overflows; a row outside is refused. */
static int read_eval(sqlite3_stmt *st, fdt_db_eval *ev, fdt_err *e)
{
    char text[64];
    fdt_err ignored;
    int c = 0; /* in the order of FDT_DBI_ROW_COLUMNS */
    ev->id = sqlite3_column_int64(st, c++);
    ev->run_id = sqlite3_column_int64(st, c++);
    ev->problem_id = sqlite3_column_int64(st, c++);
    ev->config_id = sqlite3_column_int64(st, c++);
    ev->device_id = sqlite3_column_int64(st, c++);
    ev->env_id = sqlite3_column_int64(st, c++);
    /* The CHECK constraints guarantee known names, so parsing cannot fail here. */
    fdt_dbi_copy(text, sizeof text, st, c++);
    fdt_db_status_parse(text, &ev->status, &ignored);
    fdt_dbi_copy(text, sizeof text, st, c++);
    fdt_db_stage_parse(text, &ev->stage, &ignored);
    ev->time_ms = fdt_dbi_real(st, c++);
    ev->time_min_ms = fdt_dbi_real(st, c++);
    ev->time_max_ms = fdt_dbi_real(st, c++);
    ev->time_q1_ms = fdt_dbi_real(st, c++);
    ev->time_q3_ms = fdt_dbi_real(st, c++);
    int64_t v[5];
    if (fdt_dbi_bounded(st, c, FDT_DBI_B_REPS, ev->id, &v[0], e) ||
        fdt_dbi_bounded(st, c + 1, FDT_DBI_B_OUTLIERS, ev->id, &v[1], e))
        return -1;
    ev->reps = (int)v[0];
    ev->outliers = (int)v[1];
    c += 2;
    ev->gbs = fdt_dbi_real(st, c++);
    ev->frac_copy = fdt_dbi_real(st, c++);
    ev->max_err = fdt_dbi_real(st, c++);
    ev->rel_err = fdt_dbi_real(st, c++);
    ev->tolerance = fdt_dbi_real(st, c++);
    if (fdt_dbi_bounded(st, c, FDT_DBI_B_LINE, ev->id, &ev->layout_line, e) ||
        fdt_dbi_bounded(st, c + 1, FDT_DBI_B_OFFSET, ev->id, &ev->layout_offset, e))
        return -1;
    c += 2;
    int *res[5] = {&ev->registers, &ev->sgprs, &ev->spill_bytes, &ev->scratch_bytes,
                   &ev->shared_bytes};
    for (int i = 0; i < 5; i++, c++) {
        if (fdt_dbi_bounded(st, c, FDT_DBI_B_REGISTERS + i, ev->id, &v[i], e))
            return -1;
        *res[i] = (int)v[i];
    }
    ev->compile_s = fdt_dbi_real(st, c++);
    ev->layers_ms = fdt_dbi_real(st, c++);
    ev->part_ms = fdt_dbi_real(st, c++);
    fdt_dbi_copy(ev->message, sizeof ev->message, st, c++);
    fdt_dbi_copy(ev->created, sizeof ev->created, st, c++);
    fdt_dbi_copy(ev->config, sizeof ev->config, st, c++);
    return c;
}

int fdt_dbi_read_problem(sqlite3_stmt *st, int c, int64_t id, fdt_problem *p, fdt_err *e)
{
    char text[16];
    fdt_err ignored;
    fdt_op op = FDT_OP_COUNT;
    fdt_prec prec = FDT_F32;
    int64_t R, W;
    if (fdt_dbi_bounded(st, c + 1, FDT_DBI_B_RADIUS, id, &R, e) ||
        fdt_dbi_bounded(st, c + 3, FDT_DBI_B_NX, id, &p->nx, e) ||
        fdt_dbi_bounded(st, c + 4, FDT_DBI_B_NY, id, &p->ny, e) ||
        fdt_dbi_bounded(st, c + 5, FDT_DBI_B_NZ, id, &p->nz, e) ||
        fdt_dbi_bounded(st, c + 6, FDT_DBI_B_ABSORB_W, id, &W, e))
        return -1;
    double S = sqlite3_column_double(st, c + 7);
    if (!(S >= 0 && S <= FDT_ABSORB_S_MAX))
        return fdt_err_set(e, "problems row %lld: absorb_strength = %g, outside 0..%g",
                           (long long)id, S, FDT_ABSORB_S_MAX);
    p->absorb_w = (int)W;
    p->absorb_s = S;
    fdt_dbi_copy(text, sizeof text, st, c);
    fdt_op_parse(text, &op, &ignored); /* CHECKed: always known */
    p->op = op;
    p->R = (int)R;
    fdt_dbi_copy(text, sizeof text, st, c + 2);
    fdt_prec_parse(text, &prec, &ignored);
    p->prec = prec;
    return 0;
}

int fdt_dbi_read_device(sqlite3_stmt *st, int c, fdt_device *d, fdt_err *e)
{
    int64_t units, warp;
    fdt_dbi_copy(d->backend, sizeof d->backend, st, c);
    fdt_dbi_copy(d->vendor, sizeof d->vendor, st, c + 1);
    fdt_dbi_copy(d->name, sizeof d->name, st, c + 2);
    fdt_dbi_copy(d->arch, sizeof d->arch, st, c + 3);
    if (fdt_dbi_bounded(st, c + 4, FDT_DBI_B_UNITS, d->id, &units, e) ||
        fdt_dbi_bounded(st, c + 5, FDT_DBI_B_WARP, d->id, &warp, e) ||
        fdt_dbi_bounded(st, c + 6, FDT_DBI_B_L2, d->id, &d->l2_bytes, e) ||
        fdt_dbi_bounded(st, c + 7, FDT_DBI_B_MEM, d->id, &d->mem_bytes, e))
        return -1;
    d->compute_units = (int)units;
    d->warp_size = (int)warp;
    fdt_dbi_copy(d->uuid, sizeof d->uuid, st, c + 8);
    fdt_dbi_copy(d->pci, sizeof d->pci, st, c + 9);
    return 0;
}

int fdt_dbi_read_row(sqlite3_stmt *st, fdt_db_row *row, fdt_err *e)
{
    memset(row, 0, sizeof *row);
    fdt_db_eval *ev = &row->ev;
    int c = read_eval(st, ev, e);
    if (c < 0 || fdt_dbi_read_problem(st, c, ev->problem_id, &row->problem, e))
        return -1;
    c += FDT_DBI_PROBLEM_NCOLS;
    fdt_device *d = &row->device;
    fdt_device_init(d);
    d->id = ev->device_id;
    if (fdt_dbi_read_device(st, c, d, e))
        return -1;
    c += 10;
    fdt_db_env *v = &row->env;
    v->id = ev->env_id;
    fdt_dbi_copy(v->driver, sizeof v->driver, st, c++);
    fdt_dbi_copy(v->runtime, sizeof v->runtime, st, c++);
    fdt_dbi_copy(v->compiler, sizeof v->compiler, st, c++);
    fdt_dbi_copy(v->fdtune_version, sizeof v->fdtune_version, st, c++);
    fdt_dbi_copy(v->generator, sizeof v->generator, st, c++);
    /* a best row (FDT_DBI_BEST_SQL) carries its decision's mark after the row */
    const char *name = c < sqlite3_column_count(st) ? sqlite3_column_name(st, c) : NULL;
    if (name && !strcmp(name, "cut_short"))
        row->cut_short = sqlite3_column_int(st, c) != 0;
    name = c + 1 < sqlite3_column_count(st) ? sqlite3_column_name(st, c + 1) : NULL;
    if (name && !strcmp(name, "stopped"))
        fdt_dbi_copy(row->stopped, sizeof row->stopped, st, c + 1);
    return 0;
}

int fdt_dbi_each_row(fdt_db *db, sqlite3_stmt *st, fdt_db_row_fn fn, void *ctx, fdt_err *e,
                     const char *what)
{
    fdt_db_row row;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        /* a snapshot's row counts only when its file was the same after reading it */
        if (fdt_dbi_snapshot_changed(db)) {
            rc = SQLITE_INTERRUPT;
            break;
        }
        if (fdt_dbi_read_row(st, &row, e)) {
            sqlite3_finalize(st);
            return fdt_err_wrap(e, "%s: %s: evaluation %lld", db->path, what,
                                (long long)row.ev.id);
        }
        row.source = db->source;
        if (fn(ctx, &row))
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "%s", what);
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}
