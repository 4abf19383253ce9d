/* Runs: one invocation of the tuner (or retune, or bench) on one device in one environment.
 * A run is "running" until finished; one whose process died without finishing (SIGKILL,
 * crash, power loss) is found by host and pid and marked interrupted, so a later run can
 * resume past what it committed. */
#include "db_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"

#define RUN_SELECT                                                                            \
    "SELECT r.id, r.started, r.finished, r.status, r.kind, r.command, r.device_id, r.env_id," \
    " r.recipe, r.recipe_hash, r.strategy, r.budget, r.seed, r.copy_gbs, r.host, r.pid,"      \
    " r.notes, (SELECT count(*) FROM evaluations x WHERE x.run_id = r.id),"                   \
    " (SELECT count(*) FROM evaluations x WHERE x.run_id = r.id AND x.status = 'ok')"         \
    " FROM runs r JOIN devices d ON d.id = r.device_id "

void fdt_db_run_init(fdt_db_run *r)
{
    memset(r, 0, sizeof *r);
    r->kind = FDT_DB_TUNE;
    r->status = FDT_DB_RUNNING;
    r->copy_gbs = NAN;
}

static void this_host(char *buf, size_t n)
{
    if (gethostname(buf, n) != 0)
        snprintf(buf, n, "unknown");
    buf[n - 1] = 0;
}

int fdt_dbi_run_gone(const char *host, int64_t pid)
{
    char here[256];
    this_host(here, sizeof here);
    if (strcmp(host, here) != 0 || pid <= 0 || pid > INT_MAX || (pid_t)pid == getpid())
        return 0;
    /* EPERM means the process exists under another user: still alive. */
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int fdt_db_run_begin(fdt_db *db, const fdt_db_run *r, int64_t *run_id, fdt_err *e)
{
    *run_id = 0;
    if ((unsigned)r->kind > FDT_DB_BENCH)
        return fdt_err_set(e, "begin run: unknown kind %d", (int)r->kind);
    if (r->device_id <= 0 || r->env_id <= 0)
        return fdt_err_set(e, "begin run: device and environment ids required");
    if (r->budget < 0 || (!isnan(r->copy_gbs) && !(r->copy_gbs > 0)))
        return fdt_err_set(e, "begin run: negative budget or copy bandwidth");
    char host[256];
    if (r->host[0])
        snprintf(host, sizeof host, "%s", r->host);
    else
        this_host(host, sizeof host);

    sqlite3_stmt *st = NULL;
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "begin run");
    /* The natural key of a run (host, pid, started, device, environment, kind; fdt_db.h) is
     * kept unique here: a second run of this process, device, environment and kind in the
     * same millisecond inserts nothing and is tried again a millisecond later ('now' is one
     * value within one statement). */
    if (fdt_dbi_prepare(db,
                        "INSERT INTO runs (started, kind, command, device_id, env_id, recipe,"
                        " recipe_hash, strategy, budget, seed, copy_gbs, host, pid, notes)"
                        " SELECT " NOW ", :kind, :command, :device, :env, :recipe, :recipe_hash,"
                        " :strategy, :budget, :seed, :copy, :host, :pid, :notes"
                        " WHERE NOT EXISTS (SELECT 1 FROM runs WHERE host = :host AND pid = :pid"
                        " AND started = " NOW " AND device_id = :device AND env_id = :env"
                        " AND kind = :kind)",
                        &st, e))
        goto fail;
    int rc = fdt_dbi_bind_text(st, ":kind", fdt_db_run_kind_name(r->kind));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":command", r->command);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":device", r->device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":env", r->env_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":recipe", r->recipe);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":recipe_hash", r->recipe_hash);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":strategy", r->strategy);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":budget", r->budget);
    /* SQLite integers are signed; the seed keeps its bits. */
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":seed", (int64_t)r->seed);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":copy", r->copy_gbs);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":host", host);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":pid", (int64_t)getpid());
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":notes", r->notes);
    for (int tries = 0; rc == SQLITE_OK || rc == SQLITE_DONE; tries++) {
        rc = sqlite3_step(st);
        if (rc != SQLITE_DONE || sqlite3_changes(db->h) == 1)
            break;
        if (tries == 1000) {
            fdt_err_set(e, "no distinct start time after %d tries", tries);
            goto fail;
        }
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
        sqlite3_reset(st);
    }
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "insert");
        goto fail;
    }
    *run_id = sqlite3_last_insert_rowid(db->h);
    sqlite3_finalize(st);
    if (fdt_dbi_commit(db, e)) {
        *run_id = 0;
        return fdt_err_wrap(e, "begin run");
    }
    return 0;
fail:
    sqlite3_finalize(st);
    fdt_dbi_rollback(db);
    return fdt_err_wrap(e, "begin run");
}

/* One named value for fdt_dbi_update_running: text when set, else a real. */
typedef struct one_value {
    const char *name, *text;
    double real;
} one_value;

static int bind_one(sqlite3_stmt *st, const void *arg)
{
    const one_value *v = arg;
    return v->text ? fdt_dbi_bind_text(st, v->name, v->text)
                   : fdt_dbi_bind_real(st, v->name, v->real);
}

int fdt_dbi_update_running(fdt_db *db, int64_t run_id, const char *sql, fdt_dbi_binder bind,
                           const void *arg, fdt_err *e)
{
    sqlite3_stmt *st = NULL;
    if (fdt_dbi_begin(db, e))
        return -1;
    if (fdt_dbi_prepare(db, sql, &st, e))
        goto fail;
    int rc = fdt_dbi_bind_int(st, ":id", run_id);
    if (rc == SQLITE_OK)
        rc = bind(st, arg);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "update");
        goto fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_changes(db->h) != 1) {
        fdt_db_run r;
        if (fdt_db_run_get(db, run_id, &r, e) == 0)
            fdt_err_set(e, "run is %s, not running", fdt_db_run_status_name(r.status));
        goto fail;
    }
    return fdt_dbi_commit(db, e);
fail:
    sqlite3_finalize(st);
    fdt_dbi_rollback(db);
    return -1;
}

int fdt_db_run_set_copy(fdt_db *db, int64_t run_id, double copy_gbs, fdt_err *e)
{
    if (!(copy_gbs > 0))
        return fdt_err_set(e, "run %lld: copy bandwidth must be positive", (long long)run_id);
    one_value v = {":copy", NULL, copy_gbs};
    if (fdt_dbi_update_running(db, run_id,
                               "UPDATE runs SET copy_gbs = :copy WHERE id = :id AND"
                               " status = 'running'",
                               bind_one, &v, e))
        return fdt_err_wrap(e, "run %lld: set copy bandwidth", (long long)run_id);
    return 0;
}

int fdt_db_run_finish(fdt_db *db, int64_t run_id, fdt_db_run_status status, fdt_err *e)
{
    if (status == FDT_DB_RUNNING || (unsigned)status > FDT_DB_FAILED)
        return fdt_err_set(e, "run %lld: finish needs done, interrupted or failed",
                           (long long)run_id);
    one_value v = {":status", fdt_db_run_status_name(status), 0};
    if (fdt_dbi_update_running(db, run_id,
                               "UPDATE runs SET status = :status, finished = " NOW
                               " WHERE id = :id AND status = 'running'",
                               bind_one, &v, e))
        return fdt_err_wrap(e, "run %lld: finish", (long long)run_id);
    return 0;
}

int fdt_db_run_mark_stale(fdt_db *db, int *n, fdt_err *e)
{
    *n = 0;
    char host[256];
    this_host(host, sizeof host);
    sqlite3_stmt *st = NULL;
    int64_t *ids = NULL;
    size_t nids = 0, cap = 0;
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "mark stale runs");
    /* Under the write lock, so a run cannot begin or finish while we decide. */
    if (fdt_dbi_prepare(db, "SELECT id, pid FROM runs WHERE status = 'running' AND host = :host",
                        &st, e))
        goto fail;
    int rc = fdt_dbi_bind_text(st, ":host", host);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        int64_t id = sqlite3_column_int64(st, 0);
        if (!fdt_dbi_run_gone(host, sqlite3_column_int64(st, 1)))
            continue;
        int64_t *grown = fdt_grow(ids, &cap, nids, sizeof *ids, 16);
        if (!grown) {
            fdt_err_set(e, "out of memory");
            goto fail;
        }
        ids = grown;
        ids[nids++] = id;
    }
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "list running runs");
        goto fail;
    }
    sqlite3_finalize(st);
    if (fdt_dbi_prepare(db,
                        "UPDATE runs SET status = 'interrupted', finished = " NOW
                        " WHERE id = :id AND status = 'running'",
                        &st, e))
        goto fail;
    for (size_t i = 0; i < nids; i++) {
        rc = fdt_dbi_bind_int(st, ":id", ids[i]);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc != SQLITE_DONE) {
            fdt_dbi_fail(db, e, rc, "run %lld", (long long)ids[i]);
            goto fail;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (fdt_dbi_commit(db, e)) {
        free(ids);
        return fdt_err_wrap(e, "mark stale runs");
    }
    *n = (int)nids;
    free(ids);
    return 0;
fail:
    sqlite3_finalize(st);
    free(ids);
    fdt_dbi_rollback(db);
    return fdt_err_wrap(e, "mark stale runs");
}

static void read_run(sqlite3_stmt *st, fdt_db_run *r)
{
    char text[32];
    fdt_err e;
    fdt_db_run_init(r);
    int c = 0;
    r->id = sqlite3_column_int64(st, c++);
    fdt_dbi_copy(r->started, sizeof r->started, st, c++);
    fdt_dbi_copy(r->finished, sizeof r->finished, st, c++);
    fdt_dbi_copy(text, sizeof text, st, c++);
    for (int i = FDT_DB_RUNNING; i <= FDT_DB_FAILED; i++)
        if (!strcmp(text, fdt_db_run_status_name((fdt_db_run_status)i)))
            r->status = (fdt_db_run_status)i;
    fdt_dbi_copy(text, sizeof text, st, c++);
    fdt_db_run_kind_parse(text, &r->kind, &e); /* CHECKed: always known */
    fdt_dbi_copy(r->command, sizeof r->command, st, c++);
    r->device_id = sqlite3_column_int64(st, c++);
    r->env_id = sqlite3_column_int64(st, c++);
    fdt_dbi_copy(r->recipe, sizeof r->recipe, st, c++);
    fdt_dbi_copy(r->recipe_hash, sizeof r->recipe_hash, st, c++);
    fdt_dbi_copy(r->strategy, sizeof r->strategy, st, c++);
    r->budget = sqlite3_column_int64(st, c++);
    r->seed = (uint64_t)sqlite3_column_int64(st, c++);
    r->copy_gbs = fdt_dbi_real(st, c++);
    fdt_dbi_copy(r->host, sizeof r->host, st, c++);
    r->pid = sqlite3_column_int64(st, c++);
    fdt_dbi_copy(r->notes, sizeof r->notes, st, c++);
    r->n_evals = sqlite3_column_int64(st, c++);
    r->n_ok = sqlite3_column_int64(st, c++);
}

int fdt_db_run_find(fdt_db *db, int64_t run_id, fdt_db_run *r, int *found, fdt_err *e)
{
    sqlite3_stmt *st;
    *found = 0;
    if (fdt_dbi_prepare(db, RUN_SELECT "WHERE r.id = :id", &st, e))
        return fdt_err_wrap(e, "run %lld", (long long)run_id);
    int rc = fdt_dbi_bind_int(st, ":id", run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        read_run(st, r);
        *found = 1;
    } else if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "run %lld", (long long)run_id);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int fdt_db_run_get(fdt_db *db, int64_t run_id, fdt_db_run *r, fdt_err *e)
{
    int found;
    if (fdt_db_run_find(db, run_id, r, &found, e))
        return -1;
    if (!found)
        return fdt_err_set(e, "run %lld: no such run", (long long)run_id);
    return 0;
}

int fdt_db_runs(fdt_db *db, const fdt_db_filter *f, int limit, fdt_db_run_fn fn, void *ctx,
                fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        RUN_SELECT
                        "WHERE (:gpu IS NULL OR instr(lower(d.name), lower(:gpu)) > 0"
                        " OR instr(lower(d.arch), lower(:gpu)) > 0)"
                        " AND (:device IS NULL OR r.device_id = :device)"
                        " ORDER BY r.id DESC LIMIT :limit",
                        &st, e))
        return fdt_err_wrap(e, "list runs");
    int rc = fdt_dbi_bind_text(st, ":gpu", f ? f->gpu : NULL);
    if (rc == SQLITE_OK)
        rc = f && f->device_id > 0 ? fdt_dbi_bind_int(st, ":device", f->device_id)
                                   : fdt_dbi_bind_null(st, ":device");
    if (rc == SQLITE_OK)
        rc = fdt_dbi_bind_int(st, ":limit", limit > 0 ? limit : -1); /* -1: no limit */
    fdt_db_run r;
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        read_run(st, &r);
        if (fn(ctx, &r)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "list runs");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int fdt_db_runs_close_running(fdt_db *db, const char *why, int64_t *n, fdt_err *e)
{
    *n = 0;
    sqlite3_stmt *st = NULL;
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "close running runs");
    if (fdt_dbi_prepare(db,
                        "UPDATE runs SET status = 'interrupted',"
                        " finished = coalesce((SELECT max(x.created) FROM evaluations x"
                        "  WHERE x.run_id = runs.id), started),"
                        " notes = CASE WHEN notes = '' THEN :why ELSE notes || '; ' || :why END"
                        " WHERE status = 'running'",
                        &st, e))
        goto fail;
    int rc = fdt_dbi_bind_text(st, ":why", why);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "update");
        goto fail;
    }
    sqlite3_finalize(st);
    *n = sqlite3_changes(db->h);
    if (fdt_dbi_commit(db, e))
        return fdt_err_wrap(e, "close running runs");
    return 0;
fail:
    sqlite3_finalize(st);
    fdt_dbi_rollback(db);
    return fdt_err_wrap(e, "close running runs");
}
