/* What `fdtune db check` reports about a file: its schema version, SQLite's integrity and
 * foreign-key checks, rows that break fdtune's own rules (decisions naming the wrong
 * evaluation, runs sharing a natural key, integers outside the bounds), runs left running
 * that nothing writes any more, rows nothing refers to, counts per table and per
 * (device, problem). Gathering never fails on what it finds; only an unreadable file is an
 * error. */
#include "db_internal.h"

#include <stdio.h>
#include <string.h>

/* One integer from constant SQL. */
static int scalar(fdt_db *db, const char *sql, int64_t *v, fdt_err *e)
{
    sqlite3_stmt *st;
    *v = 0;
    if (fdt_dbi_prepare(db, sql, &st, e))
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *v = sqlite3_column_int64(st, 0);
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "%.50s", sql);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Runs recorded as running, and which of them no process is writing any more: all of them
 * when no other process has the file open (fdt_dbi_open_elsewhere) on a local file system,
 * else those begun on this host by a process that is gone (as a writer marks them). */
static int running_runs(fdt_db *db, fdt_db_health *h, fdt_err *e)
{
    char fs[16];
    int network = 1;
    fdt_err ignored;
    if (fdt_db_fs_kind(db->path, fs, sizeof fs, &network, &ignored))
        network = 1;
    int nobody = !network && fdt_dbi_open_elsewhere(db->path) == 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, "SELECT id, host, pid, started FROM runs WHERE status = 'running'"
                            " ORDER BY id", &st, e))
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        char host[256], started[32];
        fdt_dbi_copy(host, sizeof host, st, 1);
        fdt_dbi_copy(started, sizeof started, st, 3);
        int64_t id = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 2);
        h->running_runs++;
        if (!nobody && !fdt_dbi_run_gone(host, pid))
            continue;
        if (!h->stale_runs++)
            snprintf(h->stale_first, sizeof h->stale_first, "run %lld (host %s, pid %lld, "
                     "started %s)", (long long)id, host, (long long)pid, started);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fdt_dbi_fail(db, e, rc, "running runs");
}

int fdt_db_health_check(fdt_db *db, fdt_db_health *h, fdt_err *e)
{
    memset(h, 0, sizeof *h);
    int64_t version;
    fdt_sb msg;
    fdt_sb_init(&msg);
    int rc = scalar(db, "PRAGMA user_version", &version, e) || fdt_dbi_integrity(db, 0, &msg, e);
    snprintf(h->integrity, sizeof h->integrity, "%s", fdt_sb_str(&msg));
    fdt_sb_free(&msg);
    h->version = (int)version;
    char what[512];
    if (rc ||
        scalar(db, "SELECT count(*) FROM pragma_foreign_key_check", &h->fk_violations, e) ||
        fdt_dbi_bad_decisions(db, &h->bad_decisions, e) ||
        fdt_dbi_run_key_clashes(db, &h->bad_runs, what, sizeof what, e) ||
        fdt_dbi_out_of_bounds(db, h->version, &h->out_of_bounds, h->out_of_bounds_first,
                              sizeof h->out_of_bounds_first, e) ||
        running_runs(db, h, e) ||
        scalar(db, "SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM evaluations x"
                   " WHERE x.run_id = r.id)", &h->idle_runs, e) ||
        scalar(db, "SELECT count(*) FROM devices d WHERE NOT EXISTS (SELECT 1 FROM runs x"
                   " WHERE x.device_id = d.id)", &h->unused_devices, e) ||
        scalar(db, "SELECT count(*) FROM environments v WHERE NOT EXISTS (SELECT 1 FROM runs x"
                   " WHERE x.env_id = v.id)", &h->unused_environments, e) ||
        scalar(db, "SELECT count(*) FROM problems p WHERE NOT EXISTS (SELECT 1 FROM"
                   " evaluations x WHERE x.problem_id = p.id)", &h->unused_problems, e) ||
        scalar(db, "SELECT count(*) FROM configs c WHERE NOT EXISTS (SELECT 1 FROM evaluations"
                   " x WHERE x.config_id = c.id)", &h->unused_configs, e) ||
        fdt_db_count(db, &h->rows, e))
        return fdt_err_wrap(e, "%s: check", db->path);
    return 0;
}

int fdt_db_health_bad(const fdt_db_health *h)
{
    return h->integrity[0] || h->fk_violations || h->bad_decisions || h->bad_runs ||
           h->out_of_bounds;
}

/* The pairs with their counts, device and problem; the best median by the ranking of every
 * best query (FDT_DBI_BEST_SQL), one row per pair, so the join does not multiply rows. */
static const char pairs_sql[] =
    "SELECT d.id, d.backend, d.vendor, d.name, d.arch, d.compute_units, d.uuid, p.op,"
    " p.radius, p.precision, p.nx, p.ny, p.nz, p.absorb_width, p.absorb_strength, count(*),"
    " sum(e.status = 'ok' AND e.stage = 'full'), count(DISTINCT e.run_id),"
    " EXISTS (SELECT 1 FROM best_decisions b WHERE b.device_id = e.device_id"
    "  AND b.problem_id = e.problem_id), max(x.time_ms)"
    " FROM evaluations e JOIN devices d ON d.id = e.device_id"
    " JOIN problems p ON p.id = e.problem_id"
    " LEFT JOIN (SELECT device_id, problem_id, time_ms FROM (" FDT_DBI_BEST_SQL("1", "") ")) x"
    "  ON x.device_id = e.device_id AND x.problem_id = e.problem_id"
    " GROUP BY e.device_id, e.problem_id"
    " ORDER BY d.name, d.id, p.op, p.radius, p.precision, p.nx, p.ny, p.nz, p.absorb_width,"
    " p.absorb_strength";

/* A pair's row; -1 for one outside the bounds (bounds.c), which the health check reports
 * and the listing leaves out. */
static int read_pair(sqlite3_stmt *st, fdt_db_pair *q)
{
    fdt_err ignored;
    memset(q, 0, sizeof *q);
    fdt_device_init(&q->device);
    q->device.id = sqlite3_column_int64(st, 0);
    fdt_dbi_copy(q->device.backend, sizeof q->device.backend, st, 1);
    fdt_dbi_copy(q->device.vendor, sizeof q->device.vendor, st, 2);
    fdt_dbi_copy(q->device.name, sizeof q->device.name, st, 3);
    fdt_dbi_copy(q->device.arch, sizeof q->device.arch, st, 4);
    int64_t units;
    if (fdt_dbi_bounded(st, 5, FDT_DBI_B_UNITS, q->device.id, &units, &ignored) ||
        fdt_dbi_read_problem(st, 7, 0, &q->problem, &ignored))
        return -1;
    q->device.compute_units = (int)units;
    fdt_dbi_copy(q->device.uuid, sizeof q->device.uuid, st, 6);
    int c = 7 + FDT_DBI_PROBLEM_NCOLS;
    q->evaluations = sqlite3_column_int64(st, c);
    q->ok = sqlite3_column_int64(st, c + 1);
    q->runs = sqlite3_column_int64(st, c + 2);
    q->decided = sqlite3_column_int(st, c + 3);
    q->best_ms = fdt_dbi_real(st, c + 4);
    return 0;
}

int fdt_db_pairs(fdt_db *db, fdt_db_pair_fn fn, void *ctx, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, pairs_sql, &st, e))
        return fdt_err_wrap(e, "%s: pairs", db->path);
    fdt_db_pair q;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (read_pair(st, &q))
            continue;
        if (fn(ctx, &q)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "%s: pairs", db->path);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}
