/* Private to db/: the connection, the error and transaction helpers every file shares, and
 * the column list that turns a joined evaluation into an fdt_db_row. Nothing outside db/
 * (except its test) includes this. */
#ifndef FDT_DB_INTERNAL_H
#define FDT_DB_INTERNAL_H

#include <sqlite3.h>
#include <sys/stat.h>

#include "fdt_db.h"

struct fdt_db {
    sqlite3 *h;
    int readonly;
    char *path;
    fdt_db_source source; /* stamped on every row read (fdt_dbi_each_row) */
    int bulk;             /* inside fdt_db_bulk_begin: writes join that transaction */
    int bulk_failed;      /* a write inside the bulk transaction failed: only rollback remains */
    int wrote;            /* this connection changed the file (a commit, a journal switch):
                             an error no longer says the file was left as it is */
    sqlite3_file *hold;   /* a reader's own handle of the file, holding SQLite's SHARED lock
                             while open (reader.c); NULL: none */
    const char *hold_name; /* its name as SQLite's VFS takes it */
    int snapshot;         /* a reader of a WAL file without a log: read as immutable while the
                             file stays as it was (fdt_dbi_snapshot_changed) */
    int changed;          /* the snapshot's file changed under a read, which then failed */
    struct stat snap;     /* the file's identity, size and modification time when opened */
    struct stat snap_wal; /* its empty -wal then (st_ino 0: none) */
};

/* The schema this code writes; schema.c holds one migration step per version. */
#define FDT_DBI_SCHEMA_VERSION 11
/* The oldest schema a read-only connection reads as it is (fdt_dbi_compat_readonly). */
#define FDT_DBI_READABLE_VERSION 1

/* The file's application_id ("FDTU"), so a foreign SQLite file is recognised as such. */
#define FDT_DBI_APPLICATION_ID 0x46445455

/* ---- reading without writing beside the file, the files beside it (reader.c) ---- */

/* Opens db->h read-only for db->path (a regular file, not empty) so that nothing is created
 * or changed beside it: takes SQLite's SHARED lock (db->hold; waits up to wait_ms while a
 * writer holds the file exclusively, then fails with *busy set), then reads the file as its
 * header and its -wal say (reader.c's purpose). writer: the checks a writer runs
 * before it writes, which may create the -shm that a log without one needs (the writer
 * would create it anyway). */
int fdt_dbi_open_reader(fdt_db *db, int writer, int wait_ms, int *busy, fdt_err *e);
/* Refuses (naming them and their owner) a -wal or -shm beside path that this process
 * cannot write, before a writer opens path. */
int fdt_dbi_check_sides(const char *path, fdt_err *e);
/* 1 when db reads a snapshot (db->snapshot) whose file has changed since it was opened, or
 * may change any time (a log with something in it): what is read now may mix old and new
 * pages, so reads fail (db->changed, sticky). */
int fdt_dbi_snapshot_changed(fdt_db *db);
/* Releases the reader's lock and handle. */
void fdt_dbi_release(fdt_db *db);
/* 1 when another process holds a lock on the file at path or its -shm (it has the file
 * open: SQLite's connections to a WAL file do), 0 when none does, -1 when it cannot be told
 * (no /proc/locks). */
int fdt_dbi_open_elsewhere(const char *path);

/* ---- the bounds of stored integers (schema v6, bounds.c) ---- */

/* The bounded columns, by table. */
enum {
    FDT_DBI_B_RADIUS, FDT_DBI_B_NX, FDT_DBI_B_NY, FDT_DBI_B_NZ, FDT_DBI_B_ABSORB_W, /* problems */
    FDT_DBI_B_UNITS, FDT_DBI_B_WARP, FDT_DBI_B_L2, FDT_DBI_B_MEM,                  /* devices */
    FDT_DBI_B_BUDGET, FDT_DBI_B_PID, FDT_DBI_B_SM_MAX, FDT_DBI_B_MEM_MAX,          /* runs */
    FDT_DBI_B_SM_START, FDT_DBI_B_MEM_START, FDT_DBI_B_SM_END, FDT_DBI_B_MEM_END,
    FDT_DBI_B_REPS, FDT_DBI_B_OUTLIERS, FDT_DBI_B_LINE, FDT_DBI_B_OFFSET,          /* evaluations */
    FDT_DBI_B_REGISTERS, FDT_DBI_B_SGPRS, FDT_DBI_B_SPILL, FDT_DBI_B_SCRATCH, FDT_DBI_B_SHARED,
    FDT_DBI_NBOUNDS
};
/* Column col of st, the column bound `which` (FDT_DBI_B_*) is on, of the row `id` of its
 * table: 0 with *v (-1 for NULL), or -1 with e ("problems row 3: ny = 9223372036854775807,
 * outside 1..1000000000") when outside the bound. */
int fdt_dbi_bounded(sqlite3_stmt *st, int col, int which, int64_t id, int64_t *v, fdt_err *e);
/* The rows outside the bounds of a file of schema `version` (the columns it has): *n, and
 * what (len > 0) describes the first. */
int fdt_dbi_out_of_bounds(fdt_db *db, int version, int64_t *n, char *what, size_t len,
                          fdt_err *e);
/* The same as a refusal: -1 with e naming the first row when there is any. */
int fdt_dbi_bounds_refuse(fdt_db *db, int version, fdt_err *e);
/* Creates the triggers that refuse a write outside the bounds of the columns a file of schema
 * `version` has, on table (NULL: every bounded table): the step to v6 makes them all, the
 * step to v8 those of the problems table it rebuilt. */
int fdt_dbi_bounds_triggers(fdt_db *db, const char *table, int version, fdt_err *e);

/* Formats "what: reason" from an SQLite result code (and the connection's message when it
 * belongs to that code); returns -1. Corruption says the file was left as it is only while
 * this connection has written nothing (db->wrote); a read of a changed snapshot says so.
 * fail.c, which calls no other file of db/. */
int fdt_dbi_fail(fdt_db *db, fdt_err *e, int rc, const char *fmt, ...) FDT_PRINTF(4, 5);
/* Prepares sql on db (*st NULL on failure); fails without preparing once a snapshot's file
 * has changed (fdt_dbi_snapshot_changed). sql.c, as are the transaction, binding and column
 * helpers below. */
int fdt_dbi_prepare(fdt_db *db, const char *sql, sqlite3_stmt **st, fdt_err *e);

/* BEGIN IMMEDIATE, retrying past the busy timeout; fails on a read-only connection. Inside a
 * bulk write (fdt_db_bulk_begin) the three join the open transaction: begin and commit do
 * nothing, rollback marks the bulk write failed and leaves the undoing to its owner. */
int fdt_dbi_begin(fdt_db *db, fdt_err *e);
/* COMMIT, retrying while busy; on failure the transaction is rolled back. */
int fdt_dbi_commit(fdt_db *db, fdt_err *e);
void fdt_dbi_rollback(fdt_db *db);

/* Binding by parameter name (":run"); NULL text, NaN and negative "unset" integers bind
 * NULL. They return an SQLite code so that a misspelt name shows up as an error. */
int fdt_dbi_bind_text(sqlite3_stmt *st, const char *name, const char *s);
int fdt_dbi_bind_int(sqlite3_stmt *st, const char *name, int64_t v);
int fdt_dbi_bind_opt_int(sqlite3_stmt *st, const char *name, int64_t v); /* v < 0: NULL */
int fdt_dbi_bind_real(sqlite3_stmt *st, const char *name, double v);    /* NaN: NULL */
int fdt_dbi_bind_null(sqlite3_stmt *st, const char *name);
void fdt_dbi_copy(char *dst, size_t n, sqlite3_stmt *st, int col);
double fdt_dbi_real(sqlite3_stmt *st, int col); /* NULL: NaN */
int64_t fdt_dbi_opt_int(sqlite3_stmt *st, int col); /* NULL: -1 */

/* Binds the parameters of an UPDATE besides :id (an SQLite code). */
typedef int (*fdt_dbi_binder)(sqlite3_stmt *st, const void *arg);
/* One UPDATE of the running run run_id (sql says "WHERE id = :id AND status = 'running'"),
 * its parameters bound by bind(arg), in its own transaction; when it changed nothing, fails
 * saying the run's status ("run is done, not running"). runs.c. */
int fdt_dbi_update_running(fdt_db *db, int64_t run_id, const char *sql, fdt_dbi_binder bind,
                           const void *arg, fdt_err *e);

/* Forward migrations up to fdt_db_schema_version(); schema.c. */
int fdt_dbi_migrate(fdt_db *db, fdt_err *e);
/* Read-only connection to an older file (version >= FDT_DBI_READABLE_VERSION): creates the
 * temporary stand-ins the queries need; an older file is refused. schema.c. */
int fdt_dbi_compat_readonly(fdt_db *db, int version, fdt_err *e);

/* Inside an open transaction: records the kernel-source hash of evaluation eval_id when it
 * was measured with this fdtune's generator (kernels.c). */
int fdt_dbi_kernel_record(fdt_db *db, int64_t eval_id, fdt_err *e);

/* Inside an open transaction (ids.c). */
int fdt_dbi_config_id_locked(fdt_db *db, const char *key, int64_t *id, fdt_err *e);
int fdt_dbi_check_config_key(const char *key, fdt_err *e);

/* A joined evaluation row: select FDT_DBI_ROW_COLUMNS from an `e` with the columns of
 * evaluations, then FDT_DBI_ROW_JOINS; fdt_dbi_read_row reads them back from column 0
 * (rows.c, as are fdt_dbi_read_device and fdt_dbi_each_row). */
#define FDT_DBI_ROW_COLUMNS                                                                   \
    "e.id, e.run_id, e.problem_id, e.config_id, e.device_id, e.env_id, e.status, e.stage, "   \
    "e.time_ms, e.time_min_ms, e.time_max_ms, e.time_q1_ms, e.time_q3_ms, e.reps, "           \
    "e.outliers, e.gbs, e.frac_copy, e.max_err, e.rel_err, e.tolerance, e.layout_line, "      \
    "e.layout_offset, e.registers, e.sgprs, e.spill_bytes, e.scratch_bytes, e.shared_bytes, " \
    "e.compile_s, e.layers_ms, e.part_ms, e.message, e.created, c.key, p.op, p.radius, "     \
    "p.precision, p.nx, p.ny, "                                                               \
    "p.nz, p.absorb_width, p.absorb_strength, d.backend, d.vendor, d.name, d.arch, "          \
    "d.compute_units, d.warp_size, d.l2_bytes, "                                              \
    "d.mem_bytes, d.uuid, d.pci, v.driver, v.runtime, v.compiler, v.fdtune_version, "         \
    "v.generator"
#define FDT_DBI_KEY_JOINS                                                                     \
    " JOIN problems p ON p.id = e.problem_id JOIN devices d ON d.id = e.device_id"            \
    " JOIN environments v ON v.id = e.env_id"
#define FDT_DBI_ROW_JOINS " JOIN configs c ON c.id = e.config_id" FDT_DBI_KEY_JOINS
/* Fails (e) on a row outside the bounds (fdt_dbi_bounded) rather than read it. */
int fdt_dbi_read_row(sqlite3_stmt *st, fdt_db_row *row, fdt_err *e);
/* The columns of a problem (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength:
 * FDT_DBI_PROBLEM_NCOLS of them) from column c of st, of the problems row id, within the
 * bounds (a strength outside 0..FDT_ABSORB_S_MAX is refused like them). rows.c. */
#define FDT_DBI_PROBLEM_NCOLS 8
int fdt_dbi_read_problem(sqlite3_stmt *st, int c, int64_t id, fdt_problem *p, fdt_err *e);
/* A device's backend, vendor, name, arch, compute units, warp size, L2 and memory bytes, UUID
 * and PCI address from column c on (d->id set before, for the message), within the bounds. */
int fdt_dbi_read_device(sqlite3_stmt *st, int c, fdt_device *d, fdt_err *e);

/* The latest decision of every (device, problem) that has one (best_decisions is a log). */
#define FDT_DBI_LATEST_DECISIONS                                                              \
    "SELECT b.device_id, b.problem_id, b.eval_id, b.cut_short, b.stopped"                    \
    " FROM best_decisions b"                                                                 \
    " WHERE NOT EXISTS"                                                                      \
    " (SELECT 1 FROM best_decisions n WHERE n.device_id = b.device_id"                       \
    "  AND n.problem_id = b.problem_id AND n.id > b.id)"

/* The best evaluation per (device, problem) among the rows of `e` matching WHERE (a condition
 * on e, p, d, v): the latest recorded decision when its evaluation matches WHERE; otherwise
 * status ok, stage full, smallest median time, then smallest config text, then smallest id
 * (the order of the best_evaluations view). The minimum comes from the partial index first;
 * only the rows at the minimum are ranked, as ranking every row costs a sort of the whole
 * table. A decided pair also goes through the minimum, which is then dropped: cheaper than
 * excluding the decided pairs from the indexed scan. After the row's columns comes
 * cut_short (the decision's; 0 without one) and stopped (the decision's; NULL without one),
 * which fdt_dbi_read_row reads by their names. */
#define FDT_DBI_BEST_SQL(WHERE, ORDER)                                                        \
    "WITH latest AS (" FDT_DBI_LATEST_DECISIONS "),"                                         \
    " decided AS (SELECT e.id, e.device_id, e.problem_id, l.cut_short, l.stopped"           \
    "  FROM latest l"                                                                        \
    "  JOIN evaluations e"                                                                   \
    "  ON e.id = l.eval_id" FDT_DBI_KEY_JOINS " WHERE e.status = 'ok' AND e.stage = 'full'"  \
    "  AND " WHERE "),"                                                                     \
    " m AS (SELECT e.device_id, e.problem_id, min(e.time_ms) AS t FROM evaluations e"        \
    FDT_DBI_KEY_JOINS " WHERE e.status = 'ok' AND e.stage = 'full' AND " WHERE               \
    " GROUP BY e.device_id, e.problem_id),"                                                 \
    " ranked AS (SELECT e.id, e.device_id, e.problem_id, ROW_NUMBER() OVER (PARTITION BY"    \
    "  e.device_id, e.problem_id ORDER BY c.key, e.id) AS rn FROM m JOIN evaluations e"      \
    "  ON e.device_id = m.device_id AND e.problem_id = m.problem_id AND e.time_ms = m.t"     \
    FDT_DBI_ROW_JOINS "  WHERE e.status = 'ok' AND e.stage = 'full' AND " WHERE "),"        \
    " chosen AS (SELECT id, cut_short, stopped FROM decided"                                 \
    "  UNION ALL SELECT r.id, 0, NULL FROM ranked r"                                          \
    "  WHERE r.rn = 1"                                                                       \
    "  AND NOT EXISTS (SELECT 1 FROM decided x WHERE x.device_id = r.device_id"             \
    "  AND x.problem_id = r.problem_id))"                                                   \
    " SELECT " FDT_DBI_ROW_COLUMNS ", r.cut_short AS cut_short, r.stopped AS stopped"         \
    " FROM chosen r"                                                                         \
    " JOIN evaluations e ON e.id = r.id"                                                     \
    FDT_DBI_ROW_JOINS " " ORDER
/* Steps st to the end, handing each row to fn; finalizes st (rows.c). */
int fdt_dbi_each_row(fdt_db *db, sqlite3_stmt *st, fdt_db_row_fn fn, void *ctx, fdt_err *e,
                     const char *what);

/* 1 when a run recorded as running by (host, pid) was begun on this host by a process that
 * no longer exists (killed, crashed, power loss); 0 while it lives, or where that cannot be
 * told (another host); runs.c. */
int fdt_dbi_run_gone(const char *host, int64_t pid);

/* Runs that share a natural key (fdt_db_import_check): *n of them, what the first clash names
 * ("runs 3, 4 (host h, pid 12, started ...)"); import.c. */
int fdt_dbi_run_key_clashes(fdt_db *db, int64_t *n, char *what, size_t len, fdt_err *e);
/* Best decisions that do not name an ok full evaluation of their own device and problem
 * (written past the schema's trigger); import.c. */
int fdt_dbi_bad_decisions(fdt_db *db, int64_t *n, fdt_err *e);
/* PRAGMA integrity_check's problems (quick: quick_check's), "; "-separated, into msg (empty
 * when it says ok). */
int fdt_dbi_integrity(fdt_db *db, int quick, fdt_sb *msg, fdt_err *e);

/* The test's window into the connection (fault injection such as max_page_count). */
sqlite3 *fdt_dbi_handle(fdt_db *db);

#endif
