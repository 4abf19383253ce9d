/* The schema and its forward migrations. steps[i] takes a database from version i to i+1
 * and ends by setting PRAGMA user_version itself, so the SQL of a step is a constant and a
 * new schema version is one more entry (plus FDT_DBI_SCHEMA_VERSION); the step to v6 first
 * runs the bounds of bounds.c (a refusal, then triggers made from that list). All pending steps run
 * in one IMMEDIATE transaction after the version is read again under the lock, so two
 * processes opening a fresh file at once migrate it exactly once. Tables are STRICT;
 * enumerations are CHECKed; every identity column is NOT NULL so UNIQUE really dedupes.
 * Also the stand-ins that let a read-only connection query an older file as it is. */
#include "db_internal.h"

/* v0 -> v1: the first schema. */
static const char v1[] =
    "CREATE TABLE devices ("
    " id INTEGER PRIMARY KEY,"
    " backend TEXT NOT NULL, vendor TEXT NOT NULL, name TEXT NOT NULL, arch TEXT NOT NULL,"
    " compute_units INTEGER NOT NULL CHECK (compute_units >= 0),"
    " warp_size INTEGER NOT NULL, l2_bytes INTEGER NOT NULL,"
    " mem_bytes INTEGER NOT NULL CHECK (mem_bytes >= 0),"
    " uuid TEXT NOT NULL, pci TEXT NOT NULL,"
    " first_seen TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
    " UNIQUE (backend, vendor, name, arch, compute_units, mem_bytes, uuid)"
    ") STRICT;"

    "CREATE TABLE environments ("
    " id INTEGER PRIMARY KEY,"
    " driver TEXT NOT NULL, runtime TEXT NOT NULL, compiler TEXT NOT NULL,"
    " fdtune_version TEXT NOT NULL, generator TEXT NOT NULL,"
    " UNIQUE (driver, runtime, compiler, fdtune_version, generator)"
    ") STRICT;"

    /* op and precision are enumerations of the generator; a new one is a migration. */
    "CREATE TABLE problems ("
    " id INTEGER PRIMARY KEY,"
    " op TEXT NOT NULL CHECK (op IN ('d2x', 'd2y', 'd2z', 'lap', 'wave')),"
    " radius INTEGER NOT NULL CHECK (radius >= 1),"
    " precision TEXT NOT NULL CHECK (precision IN ('f32', 'f64')),"
    " nx INTEGER NOT NULL CHECK (nx >= 1), ny INTEGER NOT NULL CHECK (ny >= 1),"
    " nz INTEGER NOT NULL CHECK (nz >= 1),"
    " UNIQUE (op, radius, precision, nx, ny, nz)"
    ") STRICT;"

    "CREATE TABLE configs ("
    " id INTEGER PRIMARY KEY,"
    " key TEXT NOT NULL UNIQUE CHECK (length(key) > 0)"
    ") STRICT;"

    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY,"
    " started TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
    " finished TEXT,"
    " status TEXT NOT NULL DEFAULT 'running'"
    "  CHECK (status IN ('running', 'done', 'interrupted', 'failed')),"
    " kind TEXT NOT NULL CHECK (kind IN ('tune', 'retune', 'bench')),"
    " command TEXT NOT NULL,"
    " device_id INTEGER NOT NULL REFERENCES devices (id),"
    " env_id INTEGER NOT NULL REFERENCES environments (id),"
    " recipe TEXT NOT NULL, recipe_hash TEXT NOT NULL, strategy TEXT NOT NULL,"
    " budget INTEGER NOT NULL CHECK (budget >= 0),"
    " seed INTEGER NOT NULL,"
    " copy_gbs REAL CHECK (copy_gbs > 0),"
    " host TEXT NOT NULL, pid INTEGER NOT NULL,"
    " notes TEXT NOT NULL,"
    " CHECK ((status = 'running') = (finished IS NULL))"
    ") STRICT;"
    /* Target of the evaluations' composite key: an evaluation's device and environment are
     * those of its run, enforced by the database. */
    "CREATE UNIQUE INDEX runs_identity ON runs (id, device_id, env_id);"
    "CREATE INDEX runs_device ON runs (device_id);"
    "CREATE INDEX runs_running ON runs (host) WHERE status = 'running';"

    "CREATE TABLE evaluations ("
    " id INTEGER PRIMARY KEY,"
    " run_id INTEGER NOT NULL,"
    " problem_id INTEGER NOT NULL REFERENCES problems (id),"
    " config_id INTEGER NOT NULL REFERENCES configs (id),"
    " device_id INTEGER NOT NULL REFERENCES devices (id),"
    " env_id INTEGER NOT NULL REFERENCES environments (id),"
    " status TEXT NOT NULL CHECK (status IN ('ok', 'wrong', 'compile_error', 'pruned',"
    "  'launch_error', 'crashed', 'timeout')),"
    " stage TEXT NOT NULL CHECK (stage IN ('probe', 'full')),"
    " time_ms REAL, time_min_ms REAL, time_max_ms REAL, time_q1_ms REAL, time_q3_ms REAL,"
    " reps INTEGER, outliers INTEGER,"
    " gbs REAL, frac_copy REAL,"
    " max_err REAL, rel_err REAL, tolerance REAL,"
    " layout_line INTEGER, layout_offset INTEGER,"
    " registers INTEGER, sgprs INTEGER, spill_bytes INTEGER, scratch_bytes INTEGER,"
    " shared_bytes INTEGER,"
    " compile_s REAL,"
    " message TEXT NOT NULL,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
    " FOREIGN KEY (run_id, device_id, env_id) REFERENCES runs (id, device_id, env_id),"
    /* A second row for the same measurement in one run is a bug (a resume that re-measured
     * what was committed), not data. */
    " UNIQUE (run_id, problem_id, config_id, stage),"
    " CHECK (status <> 'ok' OR time_ms > 0)"
    ") STRICT;"
    /* Only successful full measurements compete for "best": a small partial index, already
     * in ranking order. */
    "CREATE INDEX evaluations_best ON evaluations (device_id, problem_id, time_ms)"
    " WHERE status = 'ok' AND stage = 'full';"
    "CREATE INDEX evaluations_resume ON evaluations (device_id, env_id, problem_id, config_id);"
    "CREATE INDEX evaluations_history ON evaluations (problem_id, config_id);"

    /* Same ranking as FDT_DBI_BEST_SQL (db_internal.h), for people with the sqlite3 shell. */
    "CREATE VIEW best_evaluations AS"
    " SELECT * FROM (SELECT e.*, ROW_NUMBER() OVER (PARTITION BY e.device_id, e.problem_id"
    "  ORDER BY e.time_ms, c.key, e.id) AS rank"
    "  FROM evaluations e JOIN configs c ON c.id = e.config_id"
    "  WHERE e.status = 'ok' AND e.stage = 'full')"
    " WHERE rank = 1;"

    "PRAGMA application_id = 1178883157;" /* FDT_DBI_APPLICATION_ID, "FDTU" */
    "PRAGMA user_version = 1;";

/* v1 -> v2: recorded best decisions. "Best" was the smallest median of the ok full
 * evaluations, so a re-measurement that came out faster by noise alone became the best. A
 * decision names the evaluation that is the best of a (device, problem) from then on, until
 * a later decision replaces it (the latest row wins; the table is a log, never rewritten).
 * Pairs without a decision keep the smallest-median rule, so every v1 answer is unchanged
 * by the migration. The trigger keeps a decision pointing at an ok full evaluation of its
 * own device and problem, whoever writes it. */
static const char v2[] =
    "CREATE TABLE best_decisions ("
    " id INTEGER PRIMARY KEY,"
    " device_id INTEGER NOT NULL REFERENCES devices (id),"
    " problem_id INTEGER NOT NULL REFERENCES problems (id),"
    " eval_id INTEGER NOT NULL REFERENCES evaluations (id),"
    " decided_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),"
    " reason TEXT NOT NULL CHECK (length(reason) > 0)"
    ") STRICT;"
    "CREATE INDEX best_decisions_latest ON best_decisions (device_id, problem_id, id);"
    "CREATE TRIGGER best_decisions_valid BEFORE INSERT ON best_decisions"
    " WHEN NOT EXISTS (SELECT 1 FROM evaluations e WHERE e.id = NEW.eval_id"
    "  AND e.device_id = NEW.device_id AND e.problem_id = NEW.problem_id"
    "  AND e.status = 'ok' AND e.stage = 'full')"
    " BEGIN SELECT RAISE(ABORT, 'a best decision must name an ok full evaluation of its"
    " device and problem'); END;"

    /* The view follows the new ranking: the latest decision first, then the smallest median
     * (FDT_DBI_BEST_SQL in db_internal.h). */
    "DROP VIEW best_evaluations;"
    "CREATE VIEW best_evaluations AS"
    " SELECT * FROM (SELECT e.*, ROW_NUMBER() OVER (PARTITION BY e.device_id, e.problem_id"
    "  ORDER BY e.id IS NOT (SELECT b.eval_id FROM best_decisions b"
    "   WHERE b.device_id = e.device_id AND b.problem_id = e.problem_id"
    "   ORDER BY b.id DESC LIMIT 1), e.time_ms, c.key, e.id) AS rank"
    "  FROM evaluations e JOIN configs c ON c.id = e.config_id"
    "  WHERE e.status = 'ok' AND e.stage = 'full')"
    " WHERE rank = 1;"

    "PRAGMA user_version = 2;";

/* v2 -> v3: merging and shipping databases. A metadata table (key, value) says what a file is
 * and how it was made: the system database shipped with fdtune records its source, date and
 * generator fingerprint there. An index on the natural key of a run (host, pid, started:
 * fdt_db_run_begin keeps it unique with the device, environment and kind) lets a merge find
 * the runs it has already copied. Nothing else changes, so every v2 answer stays. */
static const char v3[] =
    "CREATE TABLE metadata ("
    " key TEXT PRIMARY KEY CHECK (length(key) > 0),"
    " value TEXT NOT NULL"
    ") STRICT, WITHOUT ROWID;"
    "CREATE INDEX runs_natural ON runs (host, pid, started);"
    "PRAGMA user_version = 3;";

/* v3 -> v4: a best decision says whether the search behind it was cut short: stopped by
 * its share of a time limit before its budget or space was spent, so that its best is only
 * the best of what was measured. On the decision, not the run: it qualifies the answer that
 * queries and exports give for a (device, problem), and a later search that completes the
 * space (a rerun resumes) records a decision that clears it, even when the best stays. Every
 * earlier decision was of a search that ended some other way, as far as is known: 0. */
static const char v4[] =
    "ALTER TABLE best_decisions ADD COLUMN"
    " cut_short INTEGER NOT NULL DEFAULT 0 CHECK (cut_short IN (0, 1));"
    "PRAGMA user_version = 4;";

/* v4 -> v5: the driver's identity and the GPU's clocks with each run. driver_source says
 * where the environment's driver version came from (NVML, or cuDriverGetVersion without it);
 * the SM and memory clocks (MHz: the maximum, and the current one at the start and the end of
 * the run's measurements) and the throttle reasons then (a comma-separated list of names, ""
 * for none: fdt_throttle_names), so that retune tells a throttled run from a regression. NULL
 * where unknown: AMD GPUs, simulated ones, runs before v5. Nothing else changes. */
static const char v5[] =
    "ALTER TABLE runs ADD COLUMN driver_source TEXT"
    " CHECK (driver_source IN ('nvml', 'cuda'));"
    "ALTER TABLE runs ADD COLUMN sm_max_mhz INTEGER CHECK (sm_max_mhz > 0);"
    "ALTER TABLE runs ADD COLUMN mem_max_mhz INTEGER CHECK (mem_max_mhz > 0);"
    "ALTER TABLE runs ADD COLUMN sm_mhz_start INTEGER CHECK (sm_mhz_start >= 0);"
    "ALTER TABLE runs ADD COLUMN mem_mhz_start INTEGER CHECK (mem_mhz_start >= 0);"
    "ALTER TABLE runs ADD COLUMN throttle_start TEXT"
    " CHECK (throttle_start NOT GLOB '*[^a-z_,]*');"
    "ALTER TABLE runs ADD COLUMN sm_mhz_end INTEGER CHECK (sm_mhz_end >= 0);"
    "ALTER TABLE runs ADD COLUMN mem_mhz_end INTEGER CHECK (mem_mhz_end >= 0);"
    "ALTER TABLE runs ADD COLUMN throttle_end TEXT"
    " CHECK (throttle_end NOT GLOB '*[^a-z_,]*');"
    "PRAGMA user_version = 5;";

/* v5 -> v6: bounds on every stored integer fdtune computes with (a problem's radius 1..8 and
 * sizes 1..10^9, a device's units and bytes, a run's budget, pid and clocks, an evaluation's
 * counts, resources and layout), which the schema before only asked to be positive: a file
 * written outside fdtune could hold an ny that overflowed an export's geometry. The bounds
 * are one list (bounds.c), which also makes the triggers that keep every later write inside
 * them; a file with a row outside them is refused by this step, rolled back, before they are
 * added (fdt_dbi_migrate). Nothing else changes. */
static const char v6[] = "PRAGMA user_version = 6;";

/* v6 -> v7: a best decision says why the search behind it stopped and the headroom its best
 * left to the limit that binds it (fdt_stop_describe: "within 0.8% of copy", "converged: 60
 * evaluations without gain (4.0% above copy)", "budget: 40 of 40", "space: 12 of 12", "time
 * limit: 9 of 40", "interrupted: 3 of 40"), one printable line that begins with one of those
 * words. On the decision, beside cut_short, for the same reason: it qualifies the answer of
 * queries and exports. NULL where unknown: decisions before v7 and of retune. */
static const char v7[] =
    "ALTER TABLE best_decisions ADD COLUMN stopped TEXT"
    " CHECK (stopped IS NULL OR (length(stopped) BETWEEN 1 AND 159"
    "  AND stopped NOT GLOB '*[^ -~]*'"
    "  AND (stopped GLOB 'within *' OR stopped GLOB 'converged: *'"
    "   OR stopped GLOB 'budget: *' OR stopped GLOB 'space: *'"
    "   OR stopped GLOB 'time limit: *' OR stopped GLOB 'interrupted: *')));"
    "PRAGMA user_version = 7;";

/* v7 -> v8 (issue 29): the damped wave step and the host<->device links. A problem gains its
 * absorbing layer (width W in points, strength S = eta_max * dt; fdt_problem.absorb_w/_s):
 * 'dwave' joins the operators, and a dwave problem with another W or S is another problem, so
 * both join the UNIQUE key. SQLite cannot change a CHECK or a UNIQUE in place: the table is
 * rebuilt the documented way (lang_altertable.html, "Making Other Kinds Of Table Schema
 * Changes": new table, copy, drop, rename; fdt_dbi_migrate turns the foreign keys off around
 * it and runs foreign_key_check before committing), every row keeping its id, and its bounds
 * triggers (bounds.c, dropped with the old table) are made again by fdt_dbi_migrate. Every
 * earlier problem is undamped: W = S = 0. The links table logs measurements of a device's
 * host<->device copies (fdt_db_link; the newest per device answers). */
static const char v8[] =
    "CREATE TABLE new_problems ("
    " id INTEGER PRIMARY KEY,"
    " op TEXT NOT NULL CHECK (op IN ('d2x', 'd2y', 'd2z', 'lap', 'wave', 'dwave')),"
    " radius INTEGER NOT NULL CHECK (radius >= 1),"
    " precision TEXT NOT NULL CHECK (precision IN ('f32', 'f64')),"
    " nx INTEGER NOT NULL CHECK (nx >= 1), ny INTEGER NOT NULL CHECK (ny >= 1),"
    " nz INTEGER NOT NULL CHECK (nz >= 1),"
    " absorb_width INTEGER NOT NULL DEFAULT 0 CHECK (absorb_width >= 0),"
    " absorb_strength REAL NOT NULL DEFAULT 0"
    "  CHECK (absorb_strength >= 0 AND absorb_strength <= 10),"
    /* a layer exactly for dwave: W > 0 and S > 0 there, both 0 elsewhere */
    " CHECK (CASE WHEN op = 'dwave' THEN absorb_width > 0 AND absorb_strength > 0"
    "  ELSE absorb_width = 0 AND absorb_strength = 0 END),"
    " UNIQUE (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength)"
    ") STRICT;"
    "INSERT INTO new_problems (id, op, radius, precision, nx, ny, nz)"
    " SELECT id, op, radius, precision, nx, ny, nz FROM problems ORDER BY id;"
    "DROP TABLE problems;"
    "ALTER TABLE new_problems RENAME TO problems;"

    "CREATE TABLE links ("
    " id INTEGER PRIMARY KEY,"
    " device_id INTEGER NOT NULL REFERENCES devices (id),"
    " h2d_gbs REAL NOT NULL CHECK (h2d_gbs > 0),"
    " d2h_gbs REAL NOT NULL CHECK (d2h_gbs > 0),"
    " both_gbs REAL NOT NULL DEFAULT 0 CHECK (both_gbs >= 0),"
    " latency_us REAL NOT NULL CHECK (latency_us >= 0),"
    " unified INTEGER NOT NULL CHECK (unified IN (0, 1)),"
    " measured TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"
    "  CHECK (length(measured) BETWEEN 10 AND 31 AND measured GLOB '[0-9][0-9][0-9][0-9]-*'"
    "  AND measured NOT GLOB '*[^ -~]*')"
    ") STRICT;"
    "CREATE INDEX links_latest ON links (device_id, measured, id);"
    "PRAGMA user_version = 8;";

/* v8 -> v9 (issue 29): the time of a deployment's layer kernels alone. A dwave candidate
 * deployed inout or sides is timed twice by the worker: its whole step (time_ms) and then
 * every launch but the interior's (layers_ms, the median of its own samples), which is what
 * the CPU computes in a task-parallel hybrid step (the sides deployment's six slabs). Not
 * derivable from the step: a config that is fast on the whole grid can be slow on thin
 * slabs and the other way round (H200 host, 256^3 W=16: the blocked best 4.4 ms a step, its
 * slabs 6.6-10.6 ms; the plain loop nest 11.1 ms a step, its slabs 3.0 ms). NULL where there
 * are no layer kernels (every other operator, complete) and for rows before v9. */
static const char v9[] =
    "ALTER TABLE evaluations ADD COLUMN layers_ms REAL"
    " CHECK (layers_ms IS NULL OR layers_ms > 0);"
    "PRAGMA user_version = 9;";

/* v9 -> v10 (issue 29): a narrow row's time in a box copy between host and device. A face
 * of R points along x goes over the link as one row of R values per (y, z): the copy engines
 * take a time per row whatever its bytes up to a few hundred (H200: 2.9 ns a row of 16 to
 * 128 bytes, 5.5 GB/s for rows of 16), so the bandwidth alone prices such a face 10x too
 * fast. NULL: not measured (links before v10). */
static const char v10[] =
    "ALTER TABLE links ADD COLUMN row_ns REAL CHECK (row_ns IS NULL OR row_ns >= 0);"
    "PRAGMA user_version = 10;";

/* v10 -> v11 (issue 29): a CPU's time of a thin part. A dwave candidate on a host CPU is
 * timed a third time: its damped kernel over the grid's first 2R planes alone, back to back
 * without the cache flush (part_ms), which is how a data-parallel hybrid step's CPU part runs:
 * a few planes in arrays of their own that stay in the host's caches from step to step (H200
 * host, 256^3 R=4 f32: parts of 1-3 planes at 88-163 GB/s where the grid's tuned step, timed
 * with the caches flushed, makes 59). NULL where not timed (a GPU, another operator, a grid
 * under 4R planes) and for rows before v11. */
static const char v11[] =
    "ALTER TABLE evaluations ADD COLUMN part_ms REAL CHECK (part_ms IS NULL OR part_ms > 0);"
    "PRAGMA user_version = 11;";

static const char *const steps[] = {v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11};
#define NSTEPS ((int)(sizeof steps / sizeof steps[0]))

_Static_assert(NSTEPS == FDT_DBI_SCHEMA_VERSION, "one migration step per schema version");
_Static_assert(FDT_DBI_APPLICATION_ID == 1178883157, "application_id in the v1 step");

/* The schema version and the number of schema objects, in one snapshot. */
static int read_version(fdt_db *db, int *v, int *objects, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT (SELECT user_version FROM pragma_user_version),"
                        " (SELECT count(*) FROM sqlite_schema)",
                        &st, e))
        return -1;
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        fdt_dbi_fail(db, e, rc, "read schema version");
        sqlite3_finalize(st);
        return -1;
    }
    *v = sqlite3_column_int(st, 0);
    *objects = sqlite3_column_int(st, 1);
    sqlite3_finalize(st);
    return 0;
}

/* An older file read without migrating it (read-only connections never write): empty
 * temporary tables stand in for the ones later steps added, so every query runs unchanged
 * and answers as the older schema did (v1: no decisions, the smallest median; v2: no
 * metadata; v3: no search cut short). The temp schema belongs to this connection alone; the file is not touched.
 * compat[v] stands in for what the step from v to v + 1 added. */
static const char compat_v1[] =
    "CREATE TEMP TABLE best_decisions ("
    " id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL, problem_id INTEGER NOT NULL,"
    " eval_id INTEGER NOT NULL, decided_at TEXT NOT NULL, reason TEXT NOT NULL,"
    " cut_short INTEGER NOT NULL DEFAULT 0, stopped TEXT) STRICT;";
static const char compat_v2[] =
    "CREATE TEMP TABLE metadata (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;";
/* The file's own decisions with the v4 column: the temp schema is searched first, so the
 * view stands in for the table (a v1 file has the stand-in table above instead). */
static const char compat_v3[] =
    "CREATE TEMP VIEW IF NOT EXISTS best_decisions AS"
    " SELECT *, 0 AS cut_short, NULL AS stopped FROM main.best_decisions;";
/* v6: the file's own decisions with the v7 column (earlier files got it above). */
static const char compat_v6[] =
    "CREATE TEMP VIEW IF NOT EXISTS best_decisions AS"
    " SELECT *, NULL AS stopped FROM main.best_decisions;";
/* v4: the read-only path never reads the clocks columns v5 added (fdt_db_run_clocks is for
 * writers, whose files are migrated), so nothing stands in for them. v5: the bounds of v6
 * are triggers, for writes; the reader checks each row itself (fdt_dbi_read_row). */
/* v7: the file's problems with v8's absorbing layer, none (every older problem is undamped),
 * and no links measured. */
static const char compat_v7[] =
    "CREATE TEMP VIEW IF NOT EXISTS problems AS"
    " SELECT id, op, radius, precision, nx, ny, nz, 0 AS absorb_width,"
    " 0.0 AS absorb_strength FROM main.problems;"
    "CREATE TEMP TABLE links (id INTEGER PRIMARY KEY, device_id INTEGER NOT NULL,"
    " h2d_gbs REAL NOT NULL, d2h_gbs REAL NOT NULL, both_gbs REAL NOT NULL,"
    " latency_us REAL NOT NULL, unified INTEGER NOT NULL, measured TEXT NOT NULL,"
    " row_ns REAL) STRICT;";
/* v8: the file's evaluations with v9's layer time and v11's part time, none measured. */
static const char compat_v8[] =
    "CREATE TEMP VIEW IF NOT EXISTS evaluations AS"
    " SELECT *, NULL AS layers_ms, NULL AS part_ms FROM main.evaluations;";
/* v9: the file's links with v10's row time, none measured (a v7 file got it above). */
static const char compat_v9[] =
    "CREATE TEMP VIEW IF NOT EXISTS links AS SELECT *, NULL AS row_ns FROM main.links;";
/* v10: the file's evaluations with v11's part time, none measured (a v8 file got it above). */
static const char compat_v10[] =
    "CREATE TEMP VIEW IF NOT EXISTS evaluations AS SELECT *, NULL AS part_ms"
    " FROM main.evaluations;";
static const char *const compat[] = {NULL,      compat_v1, compat_v2, compat_v3,
                                     NULL,      NULL,      compat_v6, compat_v7,
                                     compat_v8, compat_v9, compat_v10};
_Static_assert(sizeof compat / sizeof compat[0] == NSTEPS, "a stand-in per migration step");

int fdt_dbi_compat_readonly(fdt_db *db, int version, fdt_err *e)
{
    if (version >= NSTEPS)
        return 0;
    if (version < FDT_DBI_READABLE_VERSION)
        return fdt_err_set(e, "%s: database schema v%d is older than this fdtune (v%d): open it "
                           "for writing once to upgrade", db->path, version, NSTEPS);
    for (int v = version; v < NSTEPS; v++) {
        if (!compat[v])
            continue;
        int rc = sqlite3_exec(db->h, compat[v], NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            return fdt_dbi_fail(db, e, rc, "%s: read schema v%d", db->path, version);
    }
    return 0;
}

/* After the steps, inside their transaction: no row may refer to a missing one (the steps
 * ran with the foreign keys off, as a table rebuild must). */
static int foreign_keys_hold(fdt_db *db, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, "PRAGMA foreign_key_check", &st, e))
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        fdt_err_set(e, "%s row %lld refers to a missing %s row", sqlite3_column_text(st, 0),
                    (long long)sqlite3_column_int64(st, 1), sqlite3_column_text(st, 2));
    else if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "foreign key check");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int migrate_steps(fdt_db *db, fdt_err *e);

int fdt_dbi_migrate(fdt_db *db, fdt_err *e)
{
    /* PRAGMA foreign_keys is a no-op inside a transaction: off before it, on again after. */
    int rc = sqlite3_exec(db->h, "PRAGMA foreign_keys = OFF", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return fdt_dbi_fail(db, e, rc, "%s: migrate", db->path);
    int ret = migrate_steps(db, e);
    rc = sqlite3_exec(db->h, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    if (rc != SQLITE_OK && !ret)
        return fdt_dbi_fail(db, e, rc, "%s: migrate", db->path);
    return ret;
}

static int migrate_steps(fdt_db *db, fdt_err *e)
{
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "%s: migrate", db->path);
    int v, objects;
    if (read_version(db, &v, &objects, e))
        goto fail;
    /* Another process may have migrated between our first look and the lock; the version
     * read now is the one that counts, and so is the emptiness of a v0 file. */
    if (v == 0 && objects) {
        fdt_err_set(e, "not an fdtune database (%d schema objects but no schema version)",
                    objects);
        goto fail;
    }
    if (v > NSTEPS) {
        fdt_err_set(e, "database schema v%d is newer than this fdtune (v%d): upgrade fdtune", v,
                    NSTEPS);
        goto fail;
    }
    for (; v < NSTEPS; v++) {
        /* the step to v6 refuses a file with rows outside the bounds, then adds them */
        if (v == 5 &&
            (fdt_dbi_bounds_refuse(db, v, e) || fdt_dbi_bounds_triggers(db, NULL, 6, e))) {
            fdt_err_wrap(e, "schema v5 -> v6");
            goto fail;
        }
        int rc = sqlite3_exec(db->h, steps[v], NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            fdt_dbi_fail(db, e, rc, "schema v%d -> v%d", v, v + 1);
            goto fail;
        }
        /* the step to v8 rebuilt the problems table, whose triggers went with the old one */
        if (v == 7 && fdt_dbi_bounds_triggers(db, "problems", 8, e)) {
            fdt_err_wrap(e, "schema v7 -> v8");
            goto fail;
        }
        int now;
        if (read_version(db, &now, &objects, e))
            goto fail;
        if (now != v + 1) {
            fdt_err_set(e, "internal error: step to v%d left schema version %d", v + 1, now);
            goto fail;
        }
    }
    if (foreign_keys_hold(db, e))
        goto fail;
    if (fdt_dbi_commit(db, e))
        return fdt_err_wrap(e, "%s: migrate", db->path);
    return 0;
fail:
    fdt_dbi_rollback(db);
    return fdt_err_wrap(e, "%s: migrate", db->path);
}
