/* Evaluations: recording them (one or a batch per transaction) and the reads a resumed or
 * replayed tuning run needs. An evaluation takes its device and environment from its run,
 * inside the INSERT itself, so the denormalised keys can never disagree with the run; the
 * database enforces the same through a composite foreign key. */
#include "db_internal.h"

#include <math.h>
#include <string.h>

void fdt_db_eval_init(fdt_db_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    ev->status = FDT_DB_OK;
    ev->stage = FDT_DB_FULL;
    ev->time_ms = ev->time_min_ms = ev->time_max_ms = ev->time_q1_ms = ev->time_q3_ms = NAN;
    ev->gbs = ev->frac_copy = ev->max_err = ev->rel_err = ev->tolerance = ev->compile_s = ev->layers_ms =
        ev->part_ms = NAN;
    ev->reps = ev->outliers = -1;
    ev->layout_line = ev->layout_offset = -1;
    ev->registers = ev->sgprs = ev->spill_bytes = ev->scratch_bytes = ev->shared_bytes = -1;
}

static int check_eval(const fdt_db_eval *ev, fdt_err *e)
{
    if (ev->run_id <= 0 || ev->problem_id <= 0)
        return fdt_err_set(e, "run and problem ids required");
    if ((unsigned)ev->status >= FDT_DB_STATUS_COUNT || (unsigned)ev->stage > FDT_DB_FULL)
        return fdt_err_set(e, "unknown status %d or stage %d", (int)ev->status, (int)ev->stage);
    if (ev->status == FDT_DB_OK && !(ev->time_ms > 0 && isfinite(ev->time_ms)))
        return fdt_err_set(e, "status ok needs a positive median time");
    return fdt_dbi_check_config_key(ev->config, e);
}

static const char insert_sql[] =
    "INSERT INTO evaluations (run_id, problem_id, config_id, device_id, env_id, status, stage,"
    " time_ms, time_min_ms, time_max_ms, time_q1_ms, time_q3_ms, reps, outliers, gbs,"
    " frac_copy, max_err, rel_err, tolerance, layout_line, layout_offset, registers, sgprs,"
    " spill_bytes, scratch_bytes, shared_bytes, compile_s, layers_ms, part_ms, message)"
    " SELECT r.id, :problem, :config, r.device_id, r.env_id, :status, :stage, :time_ms,"
    " :time_min_ms, :time_max_ms, :time_q1_ms, :time_q3_ms, :reps, :outliers, :gbs,"
    " COALESCE(:frac_copy, :gbs / r.copy_gbs), :max_err, :rel_err, :tolerance, :layout_line,"
    " :layout_offset, :registers, :sgprs, :spill_bytes, :scratch_bytes, :shared_bytes,"
    " :compile_s, :layers_ms, :part_ms, :message"
    " FROM runs r WHERE r.id = :run AND r.status = 'running'";

static int bind_eval(sqlite3_stmt *st, const fdt_db_eval *ev, int64_t config_id)
{
    int rc = fdt_dbi_bind_int(st, ":run", ev->run_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", ev->problem_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":config", config_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":status", fdt_db_status_name(ev->status));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":stage", fdt_db_stage_name(ev->stage));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":time_ms", ev->time_ms);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":time_min_ms", ev->time_min_ms);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":time_max_ms", ev->time_max_ms);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":time_q1_ms", ev->time_q1_ms);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":time_q3_ms", ev->time_q3_ms);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":reps", ev->reps);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":outliers", ev->outliers);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":gbs", ev->gbs);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":frac_copy", ev->frac_copy);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":max_err", ev->max_err);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":rel_err", ev->rel_err);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":tolerance", ev->tolerance);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":layout_line", ev->layout_line);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":layout_offset", ev->layout_offset);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":registers", ev->registers);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":sgprs", ev->sgprs);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":spill_bytes", ev->spill_bytes);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":scratch_bytes", ev->scratch_bytes);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":shared_bytes", ev->shared_bytes);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":compile_s", ev->compile_s);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":layers_ms", ev->layers_ms);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":part_ms", ev->part_ms);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":message", ev->message);
    return rc;
}

/* Why an INSERT ... SELECT FROM runs inserted nothing. */
static int run_not_running(fdt_db *db, int64_t run_id, fdt_err *e)
{
    fdt_db_run r;
    if (fdt_db_run_get(db, run_id, &r, e))
        return -1;
    return fdt_err_set(e, "run %lld is %s, not running", (long long)run_id,
                       fdt_db_run_status_name(r.status));
}

int fdt_db_eval_insert_batch(fdt_db *db, const fdt_db_eval *evs, size_t n, int64_t *ids,
                             fdt_err *e)
{
    for (size_t i = 0; i < n; i++)
        if (check_eval(&evs[i], e))
            return fdt_err_wrap(e, "insert evaluation %zu of %zu", i + 1, n);
    if (n == 0)
        return 0;
    sqlite3_stmt *st = NULL;
    size_t i = 0;
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "insert evaluations");
    if (fdt_dbi_prepare(db, insert_sql, &st, e))
        goto fail;
    for (; i < n; i++) {
        const fdt_db_eval *ev = &evs[i];
        int64_t config_id;
        if (fdt_dbi_config_id_locked(db, ev->config, &config_id, e))
            goto fail;
        int rc = bind_eval(st, ev, config_id);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        if (rc == SQLITE_CONSTRAINT_UNIQUE) {
            fdt_err_set(e, "already recorded in run %lld (config %s, stage %s)",
                        (long long)ev->run_id, ev->config, fdt_db_stage_name(ev->stage));
            goto fail;
        }
        if (rc != SQLITE_DONE) {
            fdt_dbi_fail(db, e, rc, "config %s", ev->config);
            goto fail;
        }
        if (sqlite3_changes(db->h) != 1) {
            run_not_running(db, ev->run_id, e);
            goto fail;
        }
        if (ids)
            ids[i] = sqlite3_last_insert_rowid(db->h);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (fdt_dbi_commit(db, e))
        return fdt_err_wrap(e, "insert %zu evaluations", n);
    return 0;
fail:
    sqlite3_finalize(st);
    fdt_dbi_rollback(db);
    if (n == 1)
        return fdt_err_wrap(e, "insert evaluation");
    return fdt_err_wrap(e, "insert evaluations: %zu of %zu (none recorded)", i + 1, n);
}

int fdt_db_eval_insert(fdt_db *db, const fdt_db_eval *ev, int64_t *id, fdt_err *e)
{
    return fdt_db_eval_insert_batch(db, ev, 1, id, e);
}

int fdt_db_measured(fdt_db *db, int64_t device_id, int64_t env_id, int64_t problem_id,
                    const char *config, fdt_db_stage stage, unsigned retry_mask, int *found,
                    fdt_err *e)
{
    *found = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT e.status FROM evaluations e JOIN configs c ON c.id = e.config_id"
                        " WHERE e.device_id = :device AND e.env_id = :env"
                        " AND e.problem_id = :problem AND c.key = :config AND e.stage = :stage",
                        &st, e))
        return fdt_err_wrap(e, "measured");
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":env", env_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", problem_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":config", config);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":stage", fdt_db_stage_name(stage));
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        rc = SQLITE_OK;
        char name[32];
        fdt_db_status s;
        fdt_err ignored;
        fdt_dbi_copy(name, sizeof name, st, 0);
        if (fdt_db_status_parse(name, &s, &ignored) == 0 && !(retry_mask & (1u << s))) {
            *found = 1;
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "measured %s", config);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int fdt_db_evals(fdt_db *db, int64_t device_id, int64_t env_id, int64_t problem_id,
                 fdt_db_row_fn fn, void *ctx, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT " FDT_DBI_ROW_COLUMNS " FROM evaluations e" FDT_DBI_ROW_JOINS
                        " WHERE e.device_id = :device AND e.problem_id = :problem"
                        " AND (:env IS NULL OR e.env_id = :env) ORDER BY e.id",
                        &st, e))
        return fdt_err_wrap(e, "evaluations");
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", problem_id);
    if (rc == SQLITE_OK)
        rc = env_id > 0 ? fdt_dbi_bind_int(st, ":env", env_id) : fdt_dbi_bind_null(st, ":env");
    if (rc != SQLITE_OK) {
        fdt_dbi_fail(db, e, rc, "evaluations");
        sqlite3_finalize(st);
        return -1;
    }
    return fdt_dbi_each_row(db, st, fn, ctx, e, "evaluations");
}

int fdt_db_run_evals(fdt_db *db, int64_t run_id, fdt_db_row_fn fn, void *ctx, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT " FDT_DBI_ROW_COLUMNS " FROM evaluations e" FDT_DBI_ROW_JOINS
                        " WHERE e.run_id = :run ORDER BY e.id",
                        &st, e))
        return fdt_err_wrap(e, "run %lld", (long long)run_id);
    int rc = fdt_dbi_bind_int(st, ":run", run_id);
    if (rc != SQLITE_OK) {
        fdt_dbi_fail(db, e, rc, "run %lld", (long long)run_id);
        sqlite3_finalize(st);
        return -1;
    }
    return fdt_dbi_each_row(db, st, fn, ctx, e, "run evaluations");
}
