/* Best decisions: which evaluation is the best of a (device, problem) from now on. The
 * smallest median alone cannot be the rule once results are re-measured (a re-measurement
 * that is faster by noise would take over), so whoever judges two results (the tuner at the
 * end of a problem, retune after re-measuring) records the winner here with a reason. The
 * table is a log: the latest row of a pair is in force, earlier rows are history. The schema
 * trigger refuses a decision for an evaluation that is not an ok full measurement of the
 * same device and problem. A decision also says whether the search behind it was cut short
 * by its time limit (schema v4). */
#include "db_internal.h"

#include <stdio.h>
#include <string.h>

int fdt_db_best_decide(fdt_db *db, int64_t device_id, int64_t problem_id, int64_t eval_id,
                       int cut_short, const char *reason, fdt_err *e)
{
    return fdt_db_best_decide_stopped(db, device_id, problem_id, eval_id, cut_short, NULL,
                                      reason, e);
}

int fdt_db_best_decide_stopped(fdt_db *db, int64_t device_id, int64_t problem_id,
                               int64_t eval_id, int cut_short, const char *stopped,
                               const char *reason, fdt_err *e)
{
    if (device_id <= 0 || problem_id <= 0 || eval_id <= 0)
        return fdt_err_set(e, "best decision: device, problem and evaluation ids required");
    if (!reason || !*reason)
        return fdt_err_set(e, "best decision: a reason is required");
    sqlite3_stmt *st = NULL;
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "best decision");
    if (fdt_dbi_prepare(db,
                        "INSERT INTO best_decisions (device_id, problem_id, eval_id, reason,"
                        " cut_short, stopped) VALUES (:device, :problem, :eval, :reason, :cut,"
                        " :stopped)",
                        &st, e))
        goto fail;
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", problem_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":eval", eval_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":reason", reason);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":cut", cut_short != 0);
    if (rc == SQLITE_OK && stopped && *stopped)
        rc = fdt_dbi_bind_text(st, ":stopped", stopped);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "evaluation %lld", (long long)eval_id);
        goto fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (fdt_dbi_kernel_record(db, eval_id, e))
        goto fail;
    if (fdt_dbi_commit(db, e))
        return fdt_err_wrap(e, "best decision");
    return 0;
fail:
    sqlite3_finalize(st);
    fdt_dbi_rollback(db);
    return fdt_err_wrap(e, "best decision");
}

int fdt_db_best_decision(fdt_db *db, int64_t device_id, int64_t problem_id,
                         fdt_db_decision *d, int *found, fdt_err *e)
{
    *found = 0;
    memset(d, 0, sizeof *d);
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT id, device_id, problem_id, eval_id, decided_at, reason, cut_short,"
                        " stopped"
                        " FROM best_decisions WHERE device_id = :device"
                        " AND problem_id = :problem ORDER BY id DESC LIMIT 1",
                        &st, e))
        return fdt_err_wrap(e, "best decision");
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", problem_id);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        d->id = sqlite3_column_int64(st, 0);
        d->device_id = sqlite3_column_int64(st, 1);
        d->problem_id = sqlite3_column_int64(st, 2);
        d->eval_id = sqlite3_column_int64(st, 3);
        fdt_dbi_copy(d->decided_at, sizeof d->decided_at, st, 4);
        fdt_dbi_copy(d->reason, sizeof d->reason, st, 5);
        d->cut_short = sqlite3_column_int(st, 6) != 0;
        fdt_dbi_copy(d->stopped, sizeof d->stopped, st, 7);
        *found = 1;
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "best decision");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}
