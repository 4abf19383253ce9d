/* The remapping primitives of a merge: copying one database into another by natural keys
 * (fdt_db.h says which), never by row id, since ids are local to a file. The source's rows are
 * first copied as they are into temporary tables of the target's connection (temp.src_*, any
 * schema the read-only path reads), then inserted with SQL that joins them to the target's rows
 * by natural key and records each source id's target id (temp.map_*). Rows the target already
 * holds are matched, not copied, so an import repeated adds nothing. Also the pruning that
 * keeps chosen evaluations and what they refer to, the counts per table and the metadata. The
 * decisions of a merge (which evaluation is best) are made above db/, in the tuner (merge.c). */
#include "db_internal.h"

#include <stdio.h>
#include <string.h>

/* The run columns schema v5 added (the driver's source and the GPU's clocks), named once: the
 * copy (tables[]), the runs' INSERT and the UPDATE that fills them in are built from this list
 * (X(column) for each). */
#define RUN_V5_COLUMNS(X)                                                                      \
    X(driver_source) X(sm_max_mhz) X(mem_max_mhz) X(sm_mhz_start) X(mem_mhz_start)             \
    X(throttle_start) X(sm_mhz_end) X(mem_mhz_end) X(throttle_end)
#define V5_NAME(c) #c ","                                            /* "c," */
#define V5_COL(c) ", " #c                                            /* ", c" */
#define V5_SRC(c) ", s." #c                                          /* ", s.c" */
#define V5_FILL(c) ", " #c " = coalesce(r." #c ", s." #c ")"         /* fills a NULL */
#define V5_NEW(c) " OR (r." #c " IS NULL AND s." #c " IS NOT NULL)"  /* there is one to fill */

/* The tables in dependency order, with the columns copied (the source's own ids included).
 * `later`: columns the schema step to version `since` added, copied too. A source of an older
 * schema lacks them (merge inputs are opened read-only, never migrated, and
 * fdt_dbi_compat_readonly has no stand-in for the v5 columns), so from it they are copied as
 * NULL: not recorded, as for any run before v5. */
static const struct table {
    const char *name, *cols;
    int since;
    const char *later;
} tables[] = {
    {"devices", "id, backend, vendor, name, arch, compute_units, warp_size, l2_bytes, mem_bytes,"
                " uuid, pci, first_seen", 0, NULL},
    {"environments", "id, driver, runtime, compiler, fdtune_version, generator", 0, NULL},
    /* a source older than v8 reads its problems with W = S = 0 (fdt_dbi_compat_readonly) */
    {"problems", "id, op, radius, precision, nx, ny, nz, absorb_width, absorb_strength", 0,
     NULL},
    {"configs", "id, key", 0, NULL},
    {"runs", "id, started, finished, status, kind, command, device_id, env_id, recipe,"
             " recipe_hash, strategy, budget, seed, copy_gbs, host, pid, notes",
     5, RUN_V5_COLUMNS(V5_NAME)},
    {"evaluations", "id, run_id, problem_id, config_id, status, stage, time_ms, time_min_ms,"
                    " time_max_ms, time_q1_ms, time_q3_ms, reps, outliers, gbs, frac_copy,"
                    " max_err, rel_err, tolerance, layout_line, layout_offset, registers, sgprs,"
                    " spill_bytes, scratch_bytes, shared_bytes, compile_s, message, created",
     9, "layers_ms,part_ms"},
    {"best_decisions", "id, device_id, problem_id, eval_id, decided_at, reason, cut_short", 7,
     "stopped"},
    /* a source older than v8 has none (fdt_dbi_compat_readonly's empty stand-in) */
    {"links", "id, device_id, h2d_gbs, d2h_gbs, both_gbs, latency_us, unified, measured", 10,
     "row_ns"},
};
#define NTABLES (sizeof tables / sizeof tables[0])

/* Runs one statement of constant SQL; *changes (may be NULL) gets the rows it changed. */
static int exec1(fdt_db *db, const char *sql, int64_t *changes, fdt_err *e)
{
    int rc = sqlite3_exec(db->h, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return fdt_dbi_fail(db, e, rc, "%.60s", sql);
    if (changes)
        *changes = sqlite3_changes64(db->h);
    return 0;
}

/* The schema version of in's file (user_version: the read-only path leaves it as it is). */
static int file_version(fdt_db *in, int *version, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(in, "SELECT user_version FROM pragma_user_version", &st, e))
        return fdt_err_wrap(e, "%s: schema version", in->path);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : fdt_dbi_fail(in, e, rc, "%s: schema version", in->path);
}

/* Table t's columns (all: cols and later), what to read them from in a source of schema
 * `version` (from: later as NULL when older than t->since) and one "?" per column (marks);
 * returns the number of columns. The lists are constants, far shorter than the buffers. */
static int columns(const struct table *t, int version, char all[1024], char from[1024],
                   char marks[256])
{
    int n = 1;
    snprintf(all, 1024, "%s", t->cols);
    snprintf(from, 1024, "%s", t->cols);
    snprintf(marks, 256, "?");
    for (const char *c = t->cols; *c; c++)
        n += *c == ',';
    for (const char *c = t->later; c && *c; n++) {
        size_t len = strcspn(c, ","), a = strlen(all), f = strlen(from);
        snprintf(all + a, 1024 - a, ",%.*s", (int)len, c);
        if (version >= t->since)
            snprintf(from + f, 1024 - f, ",%.*s", (int)len, c);
        else
            snprintf(from + f, 1024 - f, ", NULL");
        c += len + (c[len] == ',');
    }
    for (int i = 1; i < n && i < 64; i++)
        strcat(marks, ", ?");
    FDT_REQUIRE(n <= 64 && strlen(all) < 1000 && strlen(from) < 1000, "table columns fit");
    return n;
}

/* Copies every row of in's table t into out's temp.src_<t>, created when missing and emptied
 * first: the values as they are (sqlite3_value), whatever their types; the columns a source
 * of an older schema lacks (t->later) as NULL. */
static int copy_table(fdt_db *out, fdt_db *in, int version, const struct table *t, fdt_err *e)
{
    char sql[2560], all[1024], from_cols[1024], marks[256];
    int ncols = columns(t, version, all, from_cols, marks);
    snprintf(sql, sizeof sql, "CREATE TEMP TABLE IF NOT EXISTS src_%s (%s)", t->name, all);
    if (exec1(out, sql, NULL, e))
        return -1;
    snprintf(sql, sizeof sql, "DELETE FROM temp.src_%s", t->name);
    if (exec1(out, sql, NULL, e))
        return -1;
    sqlite3_stmt *from = NULL, *to = NULL;
    snprintf(sql, sizeof sql, "SELECT %s FROM %s ORDER BY id", from_cols, t->name);
    if (fdt_dbi_prepare(in, sql, &from, e))
        return fdt_err_wrap(e, "%s: %s", in->path, t->name);
    snprintf(sql, sizeof sql, "INSERT INTO temp.src_%s (%s) VALUES (%s)", t->name, all, marks);
    if (fdt_dbi_prepare(out, sql, &to, e)) {
        sqlite3_finalize(from);
        return -1;
    }
    int rc, wrc = SQLITE_DONE;
    while ((rc = sqlite3_step(from)) == SQLITE_ROW) {
        for (int i = 0; i < ncols && wrc == SQLITE_DONE; i++)
            if (sqlite3_bind_value(to, i + 1, sqlite3_column_value(from, i)) != SQLITE_OK)
                wrc = SQLITE_NOMEM;
        if (wrc == SQLITE_DONE)
            wrc = sqlite3_step(to);
        sqlite3_reset(to);
        if (wrc != SQLITE_DONE)
            break;
    }
    int ret = 0;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        ret = fdt_dbi_fail(in, e, rc, "%s: read %s", in->path, t->name);
    else if (wrc != SQLITE_DONE)
        ret = fdt_dbi_fail(out, e, wrc, "copy %s", t->name);
    sqlite3_finalize(from);
    sqlite3_finalize(to);
    return ret;
}

/* Per table: the insert of the rows new to the target (counted), then the map from source
 * id to target id by natural key. Runs also take the end of a run the target holds as
 * running. Kept in the order of `tables`. */
static const char *const remap[NTABLES][3] = {
    {"INSERT INTO main.devices (backend, vendor, name, arch, compute_units, warp_size, l2_bytes,"
     " mem_bytes, uuid, pci, first_seen) SELECT backend, vendor, name, arch, compute_units,"
     " warp_size, l2_bytes, mem_bytes, uuid, pci, first_seen FROM temp.src_devices WHERE true"
     " ORDER BY id ON CONFLICT DO NOTHING",
     "INSERT INTO temp.map_devices (src, dst) SELECT s.id, d.id FROM temp.src_devices s"
     " JOIN main.devices d ON d.backend = s.backend AND d.vendor = s.vendor AND d.name = s.name"
     " AND d.arch = s.arch AND d.compute_units = s.compute_units AND d.mem_bytes = s.mem_bytes"
     " AND d.uuid = s.uuid", NULL},
    {"INSERT INTO main.environments (driver, runtime, compiler, fdtune_version, generator)"
     " SELECT driver, runtime, compiler, fdtune_version, generator FROM temp.src_environments"
     " WHERE true ORDER BY id ON CONFLICT DO NOTHING",
     "INSERT INTO temp.map_environments (src, dst) SELECT s.id, v.id FROM temp.src_environments"
     " s JOIN main.environments v ON v.driver = s.driver AND v.runtime = s.runtime"
     " AND v.compiler = s.compiler AND v.fdtune_version = s.fdtune_version"
     " AND v.generator = s.generator", NULL},
    {"INSERT INTO main.problems (op, radius, precision, nx, ny, nz, absorb_width,"
     " absorb_strength) SELECT op, radius, precision, nx, ny, nz, absorb_width, absorb_strength"
     " FROM temp.src_problems WHERE true ORDER BY id ON CONFLICT DO NOTHING",
     "INSERT INTO temp.map_problems (src, dst) SELECT s.id, p.id FROM temp.src_problems s"
     " JOIN main.problems p ON p.op = s.op AND p.radius = s.radius AND p.precision = s.precision"
     " AND p.nx = s.nx AND p.ny = s.ny AND p.nz = s.nz AND p.absorb_width = s.absorb_width"
     " AND p.absorb_strength = s.absorb_strength", NULL},
    {"INSERT INTO main.configs (key) SELECT key FROM temp.src_configs WHERE true ORDER BY id"
     " ON CONFLICT DO NOTHING",
     "INSERT INTO temp.map_configs (src, dst) SELECT s.id, c.id FROM temp.src_configs s"
     " JOIN main.configs c ON c.key = s.key", NULL},
    {"INSERT INTO main.runs (started, finished, status, kind, command, device_id, env_id, recipe,"
     " recipe_hash, strategy, budget, seed, copy_gbs, host, pid, notes" RUN_V5_COLUMNS(V5_COL)
     ") SELECT s.started, s.finished, s.status, s.kind, s.command, md.dst, mv.dst, s.recipe,"
     " s.recipe_hash, s.strategy, s.budget, s.seed, s.copy_gbs, s.host, s.pid, s.notes"
     RUN_V5_COLUMNS(V5_SRC) " FROM temp.src_runs s"
     " JOIN temp.map_devices md ON md.src = s.device_id"
     " JOIN temp.map_environments mv ON mv.src = s.env_id"
     " WHERE NOT EXISTS (SELECT 1 FROM main.runs r WHERE r.host = s.host AND r.pid = s.pid"
     " AND r.started = s.started AND r.device_id = md.dst AND r.env_id = mv.dst"
     " AND r.kind = s.kind) ORDER BY s.id",
     "INSERT INTO temp.map_runs (src, dst) SELECT s.id, r.id FROM temp.src_runs s"
     " JOIN temp.map_devices md ON md.src = s.device_id"
     " JOIN temp.map_environments mv ON mv.src = s.env_id"
     " JOIN main.runs r ON r.host = s.host AND r.pid = s.pid AND r.started = s.started"
     " AND r.device_id = md.dst AND r.env_id = mv.dst AND r.kind = s.kind",
     /* A run copied while it was still running, now ended in the source; what the source
      * has recorded since (the copy bandwidth, the clocks) fills what the target lacks. */
     "UPDATE main.runs AS r SET status = iif(r.status = 'running', s.status, r.status),"
     " finished = iif(r.status = 'running', s.finished, r.finished),"
     " copy_gbs = coalesce(r.copy_gbs, s.copy_gbs)" RUN_V5_COLUMNS(V5_FILL)
     " FROM temp.src_runs s JOIN temp.map_runs m ON m.src = s.id WHERE r.id = m.dst"
     " AND ((r.status = 'running' AND s.status <> 'running')"
     " OR (r.copy_gbs IS NULL AND s.copy_gbs IS NOT NULL)" RUN_V5_COLUMNS(V5_NEW) ")"},
    {"INSERT INTO main.evaluations (run_id, problem_id, config_id, device_id, env_id, status,"
     " stage, time_ms, time_min_ms, time_max_ms, time_q1_ms, time_q3_ms, reps, outliers, gbs,"
     " frac_copy, max_err, rel_err, tolerance, layout_line, layout_offset, registers, sgprs,"
     " spill_bytes, scratch_bytes, shared_bytes, compile_s, message, created, layers_ms,"
     " part_ms)"
     " SELECT r.id,"
     " mp.dst, mc.dst, r.device_id, r.env_id, s.status, s.stage, s.time_ms, s.time_min_ms,"
     " s.time_max_ms, s.time_q1_ms, s.time_q3_ms, s.reps, s.outliers, s.gbs, s.frac_copy,"
     " s.max_err, s.rel_err, s.tolerance, s.layout_line, s.layout_offset, s.registers, s.sgprs,"
     " s.spill_bytes, s.scratch_bytes, s.shared_bytes, s.compile_s, s.message, s.created,"
     " s.layers_ms, s.part_ms"
     " FROM temp.src_evaluations s JOIN temp.map_runs mr ON mr.src = s.run_id"
     " JOIN main.runs r ON r.id = mr.dst JOIN temp.map_problems mp ON mp.src = s.problem_id"
     " JOIN temp.map_configs mc ON mc.src = s.config_id WHERE true ORDER BY s.id"
     " ON CONFLICT DO NOTHING",
     "INSERT INTO temp.map_evaluations (src, dst) SELECT s.id, e.id FROM temp.src_evaluations s"
     " JOIN temp.map_runs mr ON mr.src = s.run_id"
     " JOIN temp.map_problems mp ON mp.src = s.problem_id"
     " JOIN temp.map_configs mc ON mc.src = s.config_id"
     " JOIN main.evaluations e ON e.run_id = mr.dst AND e.problem_id = mp.dst"
     " AND e.config_id = mc.dst AND e.stage = s.stage", NULL},
    {"INSERT INTO main.best_decisions (device_id, problem_id, eval_id, decided_at, reason,"
     " cut_short, stopped)"
     " SELECT md.dst, mp.dst, me.dst, s.decided_at, s.reason, s.cut_short, s.stopped"
     " FROM temp.src_best_decisions s"
     " JOIN temp.map_devices md ON md.src = s.device_id"
     " JOIN temp.map_problems mp ON mp.src = s.problem_id"
     " JOIN temp.map_evaluations me ON me.src = s.eval_id"
     " WHERE NOT EXISTS (SELECT 1 FROM main.best_decisions b WHERE b.device_id = md.dst"
     " AND b.problem_id = mp.dst AND b.eval_id = me.dst AND b.decided_at = s.decided_at"
     " AND b.reason = s.reason AND b.cut_short = s.cut_short AND b.stopped IS s.stopped)"
     " ORDER BY s.id",
     NULL, NULL},
    /* a link measurement by its device and every value */
    {"INSERT INTO main.links (device_id, h2d_gbs, d2h_gbs, both_gbs, latency_us, unified,"
     " measured, row_ns) SELECT md.dst, s.h2d_gbs, s.d2h_gbs, s.both_gbs, s.latency_us,"
     " s.unified, s.measured, s.row_ns FROM temp.src_links s"
     " JOIN temp.map_devices md ON md.src = s.device_id"
     " WHERE NOT EXISTS (SELECT 1 FROM main.links l WHERE l.device_id = md.dst"
     " AND l.measured = s.measured AND l.h2d_gbs = s.h2d_gbs AND l.d2h_gbs = s.d2h_gbs"
     " AND l.both_gbs = s.both_gbs AND l.latency_us = s.latency_us AND l.unified = s.unified"
     " AND l.row_ns IS s.row_ns)"
     " ORDER BY s.id",
     NULL, NULL},
};

static int64_t *count_of(fdt_db_counts *c, size_t table)
{
    int64_t *v[NTABLES] = {&c->devices, &c->environments, &c->problems, &c->configs, &c->runs,
                           &c->evaluations, &c->decisions, &c->links};
    return v[table];
}

int fdt_db_import(fdt_db *out, fdt_db *in, fdt_db_counts *added, fdt_err *e)
{
    fdt_db_counts none, *cnt = added ? added : &none;
    memset(cnt, 0, sizeof *cnt);
    FDT_REQUIRE(out->bulk, "an import is part of a bulk write");
    if (out->bulk_failed)
        return fdt_err_set(e, "%s: an earlier write of this transaction failed", out->path);
    char sql[256];
    int version = 0;
    if (file_version(in, &version, e))
        goto fail;
    for (size_t t = 0; t < NTABLES; t++) {
        if (copy_table(out, in, version, &tables[t], e))
            goto fail;
        snprintf(sql, sizeof sql,
                 "CREATE TEMP TABLE IF NOT EXISTS map_%s (src INTEGER PRIMARY KEY, dst INTEGER"
                 " NOT NULL)", tables[t].name);
        if (exec1(out, sql, NULL, e))
            goto fail;
        snprintf(sql, sizeof sql, "DELETE FROM temp.map_%s", tables[t].name);
        if (exec1(out, sql, NULL, e) || exec1(out, remap[t][0], count_of(cnt, t), e) ||
            (remap[t][1] && exec1(out, remap[t][1], NULL, e)) ||
            (remap[t][2] && exec1(out, remap[t][2], NULL, e)))
            goto fail;
    }
    return 0;
fail:
    out->bulk_failed = 1;
    return fdt_err_wrap(e, "import %s into %s", in->path, out->path);
}

int fdt_db_import_eval(fdt_db *out, int64_t in_eval_id, int64_t *eval_id, int64_t *device_id,
                       int64_t *problem_id, fdt_err *e)
{
    *eval_id = *device_id = *problem_id = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(out,
                        "SELECT m.dst, e.device_id, e.problem_id FROM temp.map_evaluations m"
                        " JOIN main.evaluations e ON e.id = m.dst WHERE m.src = :id",
                        &st, e))
        return fdt_err_wrap(e, "imported evaluation %lld", (long long)in_eval_id);
    int rc = fdt_dbi_bind_int(st, ":id", in_eval_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *eval_id = sqlite3_column_int64(st, 0);
        *device_id = sqlite3_column_int64(st, 1);
        *problem_id = sqlite3_column_int64(st, 2);
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(out, e, rc, "imported evaluation %lld", (long long)in_eval_id);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* ------------------------------------------------------------------ checks and counts */

int fdt_dbi_run_key_clashes(fdt_db *db, int64_t *n, char *what, size_t len, fdt_err *e)
{
    *n = 0;
    if (len)
        what[0] = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT count(*) OVER (), host, pid, started, group_concat(id, ', ')"
                        " FROM runs GROUP BY host, pid, started, device_id, env_id, kind"
                        " HAVING count(*) > 1",
                        &st, e))
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        snprintf(what, len, "runs %s (host %s, pid %lld, started %s)",
                 (const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 1),
                 (long long)sqlite3_column_int64(st, 2), (const char *)sqlite3_column_text(st, 3));
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "run keys");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int fdt_dbi_bad_decisions(fdt_db *db, int64_t *n, fdt_err *e)
{
    *n = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT count(*) FROM best_decisions b WHERE NOT EXISTS (SELECT 1 FROM"
                        " evaluations x WHERE x.id = b.eval_id AND x.device_id = b.device_id"
                        " AND x.problem_id = b.problem_id AND x.status = 'ok'"
                        " AND x.stage = 'full')",
                        &st, e))
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : fdt_dbi_fail(db, e, rc, "decisions");
}

int fdt_db_import_check(fdt_db *in, fdt_err *e)
{
    int64_t n, bad;
    int version;
    char what[512];
    if (fdt_dbi_run_key_clashes(in, &n, what, sizeof what, e) ||
        fdt_dbi_bad_decisions(in, &bad, e) || file_version(in, &version, e))
        return fdt_err_wrap(e, "%s", in->path);
    if (fdt_dbi_bounds_refuse(in, version, e))
        return fdt_err_wrap(e, "%s", in->path);
    if (n)
        return fdt_err_set(e, "%s: %s share one natural key (host, pid, start time, device, "
                           "environment, kind), so a merge cannot tell them apart", in->path,
                           what);
    if (bad)
        return fdt_err_set(e, "%s: %lld best decisions do not name an ok full evaluation of "
                           "their own device and problem", in->path, (long long)bad);
    return 0;
}

int fdt_db_count(fdt_db *db, fdt_db_counts *c, fdt_err *e)
{
    memset(c, 0, sizeof *c);
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT (SELECT count(*) FROM devices),"
                        " (SELECT count(*) FROM environments), (SELECT count(*) FROM problems),"
                        " (SELECT count(*) FROM configs),"
                        " (SELECT count(*) FROM runs), (SELECT count(*) FROM evaluations),"
                        " (SELECT count(*) FROM best_decisions), (SELECT count(*) FROM links),"
                        " (SELECT count(*) FROM metadata)",
                        &st, e))
        return fdt_err_wrap(e, "%s: count rows", db->path);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        for (size_t t = 0; t < NTABLES; t++)
            *count_of(c, t) = sqlite3_column_int64(st, (int)t);
        c->metadata = sqlite3_column_int64(st, (int)NTABLES); /* after the links */
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "%s: count rows", db->path);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* ------------------------------------------------------------------ pruning */

/* What stays: the evaluations asked for, then what they need; each delete in an order that
 * keeps every foreign key satisfied. Counted per table in the order of `tables`. */
static const char *const prune[NTABLES] = {
    "DELETE FROM devices WHERE id NOT IN (SELECT device_id FROM runs)",
    "DELETE FROM environments WHERE id NOT IN (SELECT env_id FROM runs)",
    "DELETE FROM problems WHERE id NOT IN (SELECT problem_id FROM evaluations)",
    "DELETE FROM configs WHERE id NOT IN (SELECT config_id FROM evaluations)",
    "DELETE FROM runs WHERE id NOT IN (SELECT run_id FROM evaluations)",
    "DELETE FROM evaluations WHERE id NOT IN (SELECT id FROM temp.prune_keep)",
    "DELETE FROM best_decisions WHERE eval_id NOT IN (SELECT id FROM temp.prune_keep)",
    "DELETE FROM links WHERE device_id NOT IN (SELECT device_id FROM runs)",
};
/* links go with the runs of their device, before the devices */
static const size_t prune_order[NTABLES] = {6, 5, 4, 3, 2, 1, 7, 0};

static int fill_keep(fdt_db *db, const int64_t *keep, size_t n, fdt_err *e)
{
    sqlite3_stmt *st;
    if (exec1(db, "CREATE TEMP TABLE IF NOT EXISTS prune_keep (id INTEGER PRIMARY KEY)", NULL,
              e) ||
        exec1(db, "DELETE FROM temp.prune_keep", NULL, e) ||
        fdt_dbi_prepare(db, "INSERT OR IGNORE INTO temp.prune_keep (id) VALUES (:id)", &st, e))
        return -1;
    int rc = SQLITE_DONE;
    for (size_t i = 0; i < n && rc == SQLITE_DONE; i++) {
        rc = fdt_dbi_bind_int(st, ":id", keep[i]);
        if (rc == SQLITE_OK)
            rc = sqlite3_step(st);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fdt_dbi_fail(db, e, rc, "keep");
}

int fdt_db_prune_keep(fdt_db *db, const int64_t *keep, size_t n, fdt_db_counts *removed,
                      fdt_err *e)
{
    fdt_db_counts none, *cnt = removed ? removed : &none;
    memset(cnt, 0, sizeof *cnt);
    FDT_REQUIRE(db->bulk, "pruning is part of a bulk write");
    if (fill_keep(db, keep, n, e))
        goto fail;
    for (size_t i = 0; i < NTABLES; i++) {
        size_t t = prune_order[i];
        if (exec1(db, prune[t], count_of(cnt, t), e))
            goto fail;
    }
    return 0;
fail:
    db->bulk_failed = 1;
    return fdt_err_wrap(e, "%s: prune", db->path);
}

int fdt_db_compact(fdt_db *db, fdt_err *e)
{
    sqlite3_stmt *st;
    char mode[16] = "";
    if (fdt_dbi_prepare(db, "PRAGMA journal_mode = DELETE", &st, e))
        return fdt_err_wrap(e, "%s: compact", db->path);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        fdt_dbi_copy(mode, sizeof mode, st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW)
        return fdt_dbi_fail(db, e, rc, "%s: compact: rollback journal", db->path);
    if (strcmp(mode, "delete") != 0)
        return fdt_err_set(e, "%s: compact: journal mode stays '%s'", db->path, mode);
    return exec1(db, "VACUUM", NULL, e) ? fdt_err_wrap(e, "%s: compact", db->path) : 0;
}

/* ------------------------------------------------------------------ metadata */

int fdt_db_meta_set(fdt_db *db, const char *key, const char *value, fdt_err *e)
{
    if (!key || !*key || !value)
        return fdt_err_set(e, "metadata: a key and a value are required");
    sqlite3_stmt *st = NULL;
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "metadata %s", key);
    if (fdt_dbi_prepare(db,
                        "INSERT INTO metadata (key, value) VALUES (:key, :value)"
                        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        &st, e))
        goto fail;
    int rc = fdt_dbi_bind_text(st, ":key", key);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":value", value);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "insert");
        goto fail;
    }
    sqlite3_finalize(st);
    if (fdt_dbi_commit(db, e))
        return fdt_err_wrap(e, "metadata %s", key);
    return 0;
fail:
    sqlite3_finalize(st);
    fdt_dbi_rollback(db);
    return fdt_err_wrap(e, "metadata %s", key);
}

int fdt_db_meta(fdt_db *db, fdt_db_meta_fn fn, void *ctx, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, "SELECT key, value FROM metadata ORDER BY key", &st, e))
        return fdt_err_wrap(e, "%s: metadata", db->path);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(ctx, (const char *)sqlite3_column_text(st, 0),
               (const char *)sqlite3_column_text(st, 1))) {
            rc = SQLITE_DONE;
            break;
        }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "%s: metadata", db->path);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}
