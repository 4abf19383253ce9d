/* SQL on a database file through a plain SQLite connection of its own, beside the fdt_db API:
 * for the tests that look at or damage what fdtune wrote (test_db, test_retune, test_merge),
 * the statements that turn a current file into an older schema's, and the clocks a run
 * records. They fail the running cmocka test when a statement fails. */
#ifndef FDT_TESTSQL_H
#define FDT_TESTSQL_H

#include <stdint.h>

#include "fdt_device.h"

/* The first column of the first row of sql, read-only. */
int64_t sql_int(const char *path, const char *sql);
/* Runs sql (several statements are fine), creating the file when missing. */
void sql_exec(const char *path, const char *sql);
/* Clocks as the tuner records them from NVML: known, with the current and maximum SM and
 * memory clocks and known throttle reasons (0 is "none"). */
fdt_clocks sql_clocks(int sm, int sm_max, int mem, int mem_max, uint64_t reasons);

/* What the v10 -> v11 step added (an evaluation's part time): dropped, a file is v10 again
 * (test_db's test_migrate_v10). */
#define DROP_V11                                                                           \
    "ALTER TABLE evaluations DROP COLUMN part_ms;"                                         \
    "PRAGMA user_version = 10;"

/* What the v9 -> v10 step added (a link's row time): dropped, with DROP_V11 first, a file is
 * v9 again (test_db's test_migrate_v9). */
#define DROP_V10                                                                           \
    DROP_V11                                                                               \
    "ALTER TABLE links DROP COLUMN row_ns;"                                                \
    "PRAGMA user_version = 9;"

/* What the v8 -> v9 step added (an evaluation's layer time): dropped, with DROP_V10 first, a
 * file is v8 again (test_db's test_migrate_v8). */
#define DROP_V9                                                                            \
    DROP_V10                                                                               \
    "ALTER TABLE evaluations DROP COLUMN layers_ms;"                                       \
    "PRAGMA user_version = 8;"

/* What the v7 -> v8 step did (the problems' absorbing layer and 'dwave'; the links table):
 * undone with v7's own problems table and its bounds triggers, a file is v7 again (test_db's
 * test_migrate_v7). Refused when the file holds a dwave problem. Turns the connection's
 * foreign keys off: the documented way of rebuilding a table. With DROP_V9 first. */
#define DROP_V8                                                                            \
    DROP_V9                                                                                \
    "PRAGMA foreign_keys = OFF;"                                                           \
    "CREATE TABLE v7_problems (id INTEGER PRIMARY KEY,"                                    \
    " op TEXT NOT NULL CHECK (op IN ('d2x', 'd2y', 'd2z', 'lap', 'wave')),"                \
    " radius INTEGER NOT NULL CHECK (radius >= 1),"                                        \
    " precision TEXT NOT NULL CHECK (precision IN ('f32', 'f64')),"                        \
    " nx INTEGER NOT NULL CHECK (nx >= 1), ny INTEGER NOT NULL CHECK (ny >= 1),"           \
    " nz INTEGER NOT NULL CHECK (nz >= 1), UNIQUE (op, radius, precision, nx, ny, nz)"     \
    ") STRICT;"                                                                            \
    "INSERT INTO v7_problems SELECT id, op, radius, precision, nx, ny, nz FROM problems;"  \
    "DROP TABLE problems; ALTER TABLE v7_problems RENAME TO problems;"                     \
    "CREATE TRIGGER problems_bounds_insert BEFORE INSERT ON problems WHEN"                 \
    " NEW.radius NOT BETWEEN 1 AND 8 OR NEW.nx NOT BETWEEN 1 AND 1000000000"               \
    " OR NEW.ny NOT BETWEEN 1 AND 1000000000 OR NEW.nz NOT BETWEEN 1 AND 1000000000"       \
    " BEGIN SELECT RAISE(ABORT, 'problems: a value outside its bounds'); END;"             \
    "CREATE TRIGGER problems_bounds_update BEFORE UPDATE ON problems WHEN"                 \
    " NEW.radius NOT BETWEEN 1 AND 8 OR NEW.nx NOT BETWEEN 1 AND 1000000000"               \
    " OR NEW.ny NOT BETWEEN 1 AND 1000000000 OR NEW.nz NOT BETWEEN 1 AND 1000000000"       \
    " BEGIN SELECT RAISE(ABORT, 'problems: a value outside its bounds'); END;"             \
    "DROP TABLE links;"                                                                    \
    "PRAGMA user_version = 7;"

/* What the v6 -> v7 step added (why a decision's search stopped): dropped, with DROP_V8
 * first, a file is v6 again (test_db's test_stopped_v7). */
#define DROP_V7                                                                            \
    DROP_V8                                                                                \
    "ALTER TABLE best_decisions DROP COLUMN stopped;"                                      \
    "PRAGMA user_version = 6;"

/* What the v5 -> v6 step added (the triggers of the bounds, bounds.c): dropped, with DROP_V7
 * first, a file is v5 again (and writes outside the bounds pass, as they did: test_db's
 * test_bounds). */
#define DROP_V6                                                                            \
    DROP_V7                                                                                \
    "DROP TRIGGER problems_bounds_insert; DROP TRIGGER problems_bounds_update;"           \
    "DROP TRIGGER devices_bounds_insert; DROP TRIGGER devices_bounds_update;"             \
    "DROP TRIGGER runs_bounds_insert; DROP TRIGGER runs_bounds_update;"                   \
    "DROP TRIGGER evaluations_bounds_insert; DROP TRIGGER evaluations_bounds_update;"     \
    "PRAGMA user_version = 5;"

/* What the v4 -> v5 step added (the runs' driver source and clocks): dropped, with DROP_V6
 * first, a file is v4 again (test_db's test_migrate_v4, and v3 with cut_short dropped too:
 * test_cut_short_v4; test_merge's v4 shard). */
#define DROP_V5                                                                            \
    DROP_V6                                                                                \
    "ALTER TABLE runs DROP COLUMN driver_source;"                                          \
    "ALTER TABLE runs DROP COLUMN sm_max_mhz;"                                             \
    "ALTER TABLE runs DROP COLUMN mem_max_mhz;"                                            \
    "ALTER TABLE runs DROP COLUMN sm_mhz_start;"                                           \
    "ALTER TABLE runs DROP COLUMN mem_mhz_start;"                                          \
    "ALTER TABLE runs DROP COLUMN throttle_start;"                                         \
    "ALTER TABLE runs DROP COLUMN sm_mhz_end;"                                             \
    "ALTER TABLE runs DROP COLUMN mem_mhz_end;"                                            \
    "ALTER TABLE runs DROP COLUMN throttle_end;"

#endif
