/* The plumbing under every db/ function: SQLite result codes turned into "what: why"
 * messages that tell corruption, a full disk and lock contention apart; IMMEDIATE
 * transactions that outlast a busy writer; binding by parameter name; and reading a joined
 * evaluation back into an fdt_db_row. */
#include "db_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* SQLite's own busy handler waits up to busy_timeout (10 s, see open.c) per attempt; these
 * retries cover the cases where it gives up or is not consulted (WAL recovery, a checkpoint
 * in progress, a lock upgrade), with a growing pause so that writers fall out of step. */
#define BUSY_RETRIES 6

static void backoff(int attempt)
{
    long ms = 10L << (attempt < 6 ? attempt : 6);
    ms += (long)(getpid() % 17); /* two writers that collided should not retry in lockstep */
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int fdt_dbi_fail(fdt_db *db, fdt_err *e, int rc, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* The connection's message is more precise ("UNIQUE constraint failed: ..."), but only
     * when it still describes this error. */
    const char *msg = sqlite3_errstr(rc);
    if (db && db->h && (sqlite3_errcode(db->h) & 0xff) == (rc & 0xff))
        msg = sqlite3_errmsg(db->h);
    if (db && db->changed)
        return fdt_err_set(e, "%s: %s changed while it was read (another process wrote to it "
                           "meanwhile): run the command again", what, db->path);
    /* Only true while this connection has written nothing: a failed transaction rolls back,
     * earlier ones stay. */
    const char *kept = db && db->wrote ? "" : "; the file was left as it is";
    if (rc == SQLITE_READONLY_ROLLBACK)
        return fdt_err_set(e, "%s: a writer was cut off in the middle of a transaction and left "
                           "%s-journal, which a read-only command does not roll back: open it "
                           "for writing once (any fdtune command that writes to it rolls it "
                           "back)%s", what, db ? db->path : "its", kept);
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        return fdt_err_set(e, "%s: %s%s", what, msg, kept);
    case SQLITE_CORRUPT:
        return fdt_err_set(e, "%s: integrity problem: %s%s", what, msg, kept);
    case SQLITE_FULL:
        return fdt_err_set(e, "%s: %s; the transaction was rolled back", what, msg);
    case SQLITE_BUSY:
        return fdt_err_set(e, "%s: %s: another process kept it locked too long", what, msg);
    default:
        return fdt_err_set(e, "%s: %s", what, msg);
    }
}

int fdt_dbi_prepare(fdt_db *db, const char *sql, sqlite3_stmt **st, fdt_err *e)
{
    *st = NULL;
    if (fdt_dbi_snapshot_changed(db))
        return fdt_dbi_fail(db, e, SQLITE_INTERRUPT, "prepare statement");
    int rc = sqlite3_prepare_v2(db->h, sql, -1, st, NULL);
    if (rc != SQLITE_OK) {
        *st = NULL;
        return fdt_dbi_fail(db, e, rc, "prepare statement");
    }
    return 0;
}

int fdt_dbi_begin(fdt_db *db, fdt_err *e)
{
    if (db->readonly)
        return fdt_err_set(e, "%s: opened read-only", db->path);
    if (db->bulk)
        return db->bulk_failed ? fdt_err_set(e, "%s: an earlier write of this transaction "
                                                "failed", db->path)
                               : 0;
    FDT_ASSERT(sqlite3_get_autocommit(db->h), "writes are single, unnested transactions");
    for (int attempt = 0;; attempt++) {
        int rc = sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            return 0;
        if ((rc & 0xff) != SQLITE_BUSY || attempt >= BUSY_RETRIES)
            return fdt_dbi_fail(db, e, rc, "begin transaction");
        backoff(attempt);
    }
}

void fdt_dbi_rollback(fdt_db *db)
{
    if (db->bulk) {
        db->bulk_failed = 1;
        return;
    }
    /* After some errors (SQLITE_FULL among them) SQLite has already rolled back. */
    if (!sqlite3_get_autocommit(db->h))
        sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

int fdt_dbi_commit(fdt_db *db, fdt_err *e)
{
    if (db->bulk)
        return 0;
    FDT_ASSERT(!sqlite3_get_autocommit(db->h), "a commit ends a transaction fdt_dbi_begin began");
    for (int attempt = 0;; attempt++) {
        int rc = sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL);
        if (rc == SQLITE_OK) {
            db->wrote = 1;
            return 0;
        }
        /* A busy COMMIT leaves the transaction open, so it can simply be tried again. */
        if ((rc & 0xff) == SQLITE_BUSY && attempt < BUSY_RETRIES &&
            !sqlite3_get_autocommit(db->h)) {
            backoff(attempt);
            continue;
        }
        fdt_dbi_fail(db, e, rc, "commit");
        fdt_dbi_rollback(db);
        return -1;
    }
}

static int param(sqlite3_stmt *st, const char *name)
{
    return sqlite3_bind_parameter_index(st, name);
}

int fdt_dbi_bind_text(sqlite3_stmt *st, const char *name, const char *s)
{
    int i = param(st, name);
    if (!i)
        return SQLITE_RANGE;
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

int fdt_dbi_bind_int(sqlite3_stmt *st, const char *name, int64_t v)
{
    int i = param(st, name);
    return i ? sqlite3_bind_int64(st, i, v) : SQLITE_RANGE;
}

int fdt_dbi_bind_opt_int(sqlite3_stmt *st, const char *name, int64_t v)
{
    int i = param(st, name);
    if (!i)
        return SQLITE_RANGE;
    return v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_int64(st, i, v);
}

int fdt_dbi_bind_real(sqlite3_stmt *st, const char *name, double v)
{
    int i = param(st, name);
    if (!i)
        return SQLITE_RANGE;
    return isnan(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

int fdt_dbi_bind_null(sqlite3_stmt *st, const char *name)
{
    int i = param(st, name);
    return i ? sqlite3_bind_null(st, i) : SQLITE_RANGE;
}

void fdt_dbi_copy(char *dst, size_t n, sqlite3_stmt *st, int col)
{
    const unsigned char *s = sqlite3_column_text(st, col);
    snprintf(dst, n, "%s", s ? (const char *)s : "");
}

double fdt_dbi_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

int64_t fdt_dbi_opt_int(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, col);
}

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
    fdt_dbi_copy(ev->message, sizeof ev->message, st, c++);
    fdt_dbi_copy(ev->created, sizeof ev->created, st, c++);
    fdt_dbi_copy(ev->config, sizeof ev->config, st, c++);
    return c;
}

/* op, radius, precision, nx, ny, nz from column c, of the problems row id. */
static int read_problem(sqlite3_stmt *st, int c, int64_t id, fdt_problem *p, fdt_err *e)
{
    char text[16];
    fdt_err ignored;
    fdt_op op = FDT_OP_COUNT;
    fdt_prec prec = FDT_F32;
    int64_t R;
    if (fdt_dbi_bounded(st, c + 1, FDT_DBI_B_RADIUS, id, &R, e) ||
        fdt_dbi_bounded(st, c + 3, FDT_DBI_B_NX, id, &p->nx, e) ||
        fdt_dbi_bounded(st, c + 4, FDT_DBI_B_NY, id, &p->ny, e) ||
        fdt_dbi_bounded(st, c + 5, FDT_DBI_B_NZ, id, &p->nz, e))
        return -1;
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
    if (c < 0 || read_problem(st, c, ev->problem_id, &row->problem, e))
        return -1;
    c += 6;
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

sqlite3 *fdt_dbi_handle(fdt_db *db) { return db->h; }

int fdt_db_bulk_begin(fdt_db *db, fdt_err *e)
{
    FDT_REQUIRE(!db->bulk, "bulk writes are not nested");
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "%s: bulk write", db->path);
    db->bulk = 1;
    db->bulk_failed = 0;
    return 0;
}

int fdt_db_bulk_commit(fdt_db *db, fdt_err *e)
{
    FDT_REQUIRE(db->bulk, "a bulk commit ends a bulk write");
    int failed = db->bulk_failed;
    db->bulk = db->bulk_failed = 0;
    if (failed || sqlite3_get_autocommit(db->h)) {
        fdt_dbi_rollback(db);
        return fdt_err_set(e, "%s: a write of the transaction failed: nothing was written",
                           db->path);
    }
    return fdt_dbi_commit(db, e);
}

void fdt_db_bulk_rollback(fdt_db *db)
{
    db->bulk = db->bulk_failed = 0;
    fdt_dbi_rollback(db);
}

void fdt_db_set_source(fdt_db *db, fdt_db_source s) { db->source = s; }

fdt_db_source fdt_db_source_of(const fdt_db *db) { return db->source; }
