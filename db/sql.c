/* The plumbing under every db/ function: statements prepared only while a snapshot's file
 * is as it was; IMMEDIATE transactions that outlast a busy writer; binding by parameter
 * name; reading a column as text, a real or an optional integer. Its messages come from
 * fail.c; reading a joined evaluation back into an fdt_db_row is rows.c's. */
#include "db_internal.h"

#include <math.h>
#include <stdio.h>
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
