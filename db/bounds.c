/* The bounds of the integers fdtune stores and computes with (schema v6): a problem's radius
 * and sizes, a device's units and bytes, a run's budget, pid and clocks, an evaluation's
 * counts, resource figures and layout. The schema before v6 only asked most of them to be
 * positive, so a file written outside fdtune could hold an ny of 2^63 - 1, which overflowed
 * the geometry of an export, or a radius of 2^32 + 4, read as 4. One list, used four ways:
 * the triggers that keep every write of a v6 file inside it (the v5 -> v6 step adds them:
 * SQLite cannot add a CHECK to an existing table without rebuilding it), the refusal of
 * that step and of a writer's checks for a file with rows outside it, the rows `db check`
 * reports, and the reader, which refuses a row outside it before anything computes with it
 * (an older file, or a damaged one, is read as it is). A column is checked as SQLite stores
 * it (64 bits), before anything narrows it. */
#include "db_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct bound {
    const char *table, *column;
    int64_t lo, hi;
    int since; /* the schema version that added the column */
} bound;

#define INT_TOP 2147483647LL /* a field read into an int */
#define BYTES_TOP (1LL << 50) /* a device's memory or cache: a petabyte */
#define MHZ_TOP 1000000LL

static const bound bounds[FDT_DBI_NBOUNDS] = {
    [FDT_DBI_B_RADIUS] = {"problems", "radius", FDT_R_MIN, FDT_R_MAX, 1},
    [FDT_DBI_B_NX] = {"problems", "nx", 1, FDT_DIM_MAX, 1},
    [FDT_DBI_B_NY] = {"problems", "ny", 1, FDT_DIM_MAX, 1},
    [FDT_DBI_B_NZ] = {"problems", "nz", 1, FDT_DIM_MAX, 1},
    [FDT_DBI_B_ABSORB_W] = {"problems", "absorb_width", 0, FDT_DIM_MAX / 2, 8},
    [FDT_DBI_B_UNITS] = {"devices", "compute_units", 0, 1 << 20, 1},
    [FDT_DBI_B_WARP] = {"devices", "warp_size", 0, 1024, 1},
    [FDT_DBI_B_L2] = {"devices", "l2_bytes", 0, BYTES_TOP, 1},
    [FDT_DBI_B_MEM] = {"devices", "mem_bytes", 0, BYTES_TOP, 1},
    [FDT_DBI_B_BUDGET] = {"runs", "budget", 0, INT_TOP, 1},
    [FDT_DBI_B_PID] = {"runs", "pid", 0, INT_TOP, 1},
    [FDT_DBI_B_SM_MAX] = {"runs", "sm_max_mhz", 0, MHZ_TOP, 5},
    [FDT_DBI_B_MEM_MAX] = {"runs", "mem_max_mhz", 0, MHZ_TOP, 5},
    [FDT_DBI_B_SM_START] = {"runs", "sm_mhz_start", 0, MHZ_TOP, 5},
    [FDT_DBI_B_MEM_START] = {"runs", "mem_mhz_start", 0, MHZ_TOP, 5},
    [FDT_DBI_B_SM_END] = {"runs", "sm_mhz_end", 0, MHZ_TOP, 5},
    [FDT_DBI_B_MEM_END] = {"runs", "mem_mhz_end", 0, MHZ_TOP, 5},
    [FDT_DBI_B_REPS] = {"evaluations", "reps", 0, INT_TOP, 1},
    [FDT_DBI_B_OUTLIERS] = {"evaluations", "outliers", 0, INT_TOP, 1},
    [FDT_DBI_B_LINE] = {"evaluations", "layout_line", 0, FDT_ALLOC_MAX, 1},
    [FDT_DBI_B_OFFSET] = {"evaluations", "layout_offset", 0, FDT_ALLOC_MAX, 1},
    [FDT_DBI_B_REGISTERS] = {"evaluations", "registers", 0, INT_TOP, 1},
    [FDT_DBI_B_SGPRS] = {"evaluations", "sgprs", 0, INT_TOP, 1},
    [FDT_DBI_B_SPILL] = {"evaluations", "spill_bytes", 0, INT_TOP, 1},
    [FDT_DBI_B_SCRATCH] = {"evaluations", "scratch_bytes", 0, INT_TOP, 1},
    [FDT_DBI_B_SHARED] = {"evaluations", "shared_bytes", 0, INT_TOP, 1},
};

static const char *const tables[] = {"problems", "devices", "runs", "evaluations"};
#define NTABLES (sizeof tables / sizeof tables[0])

/* "col NOT BETWEEN lo AND hi OR ..." over the columns of table a file of `version` has,
 * each prefixed by `prefix` ("NEW."); NULL passes (NOT NULL is the schema's business). */
static void outside(fdt_sb *b, const char *table, const char *prefix, int version)
{
    int first = 1;
    for (int i = 0; i < FDT_DBI_NBOUNDS; i++) {
        const bound *x = &bounds[i];
        if (strcmp(x->table, table) != 0 || x->since > version)
            continue;
        fdt_sb_printf(b, "%s%s%s NOT BETWEEN %lld AND %lld", first ? "" : " OR ", prefix,
                      x->column, (long long)x->lo, (long long)x->hi);
        first = 0;
    }
}

static void describe(const bound *x, int64_t id, int64_t v, char *buf, size_t n)
{
    snprintf(buf, n, "%s row %lld: %s = %lld, outside %lld..%lld", x->table, (long long)id,
             x->column, (long long)v, (long long)x->lo, (long long)x->hi);
}

int fdt_dbi_bounded(sqlite3_stmt *st, int col, int which, int64_t id, int64_t *v, fdt_err *e)
{
    const bound *x = &bounds[which];
    *v = -1;
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return 0;
    *v = sqlite3_column_int64(st, col);
    if (*v >= x->lo && *v <= x->hi)
        return 0;
    char what[256];
    describe(x, id, *v, what, sizeof what);
    return fdt_err_set(e, "%s", what);
}

int fdt_dbi_bounds_triggers(fdt_db *db, const char *table, int version, fdt_err *e)
{
    fdt_sb b;
    fdt_sb_init(&b);
    for (size_t t = 0; t < NTABLES; t++) {
        static const char *const events[] = {"insert", "update"};
        if (table && strcmp(table, tables[t]) != 0)
            continue;
        for (int k = 0; k < 2; k++) {
            fdt_sb_printf(&b, "CREATE TRIGGER %s_bounds_%s BEFORE %s ON %s WHEN ", tables[t],
                          events[k], k ? "UPDATE" : "INSERT", tables[t]);
            outside(&b, tables[t], "NEW.", version);
            fdt_sb_printf(&b, " BEGIN SELECT RAISE(ABORT, '%s: a value outside its bounds "
                          "(fdtune db check lists them)'); END;", tables[t]);
        }
    }
    int rc = b.oom ? SQLITE_NOMEM : sqlite3_exec(db->h, fdt_sb_str(&b), NULL, NULL, NULL);
    fdt_sb_free(&b);
    return rc == SQLITE_OK ? 0 : fdt_dbi_fail(db, e, rc, "add the bounds");
}

/* Steps st over (id, column index, value) rows: counts them, describes the first. */
static int scan(fdt_db *db, sqlite3_stmt *st, const char *table, int64_t *n, char *what,
                size_t len, fdt_err *e)
{
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!*n && len)
            describe(&bounds[sqlite3_column_int(st, 1)], sqlite3_column_int64(st, 0),
                     sqlite3_column_int64(st, 2), what, len);
        ++*n;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fdt_dbi_fail(db, e, rc, "%s: bounds", table);
}

int fdt_dbi_out_of_bounds(fdt_db *db, int version, int64_t *n, char *what, size_t len,
                          fdt_err *e)
{
    *n = 0;
    if (len)
        what[0] = 0;
    /* One scan per table: the row, then which of its columns is out first, and its value. */
    for (size_t t = 0; t < NTABLES; t++) {
        fdt_sb b;
        fdt_sb_init(&b);
        fdt_sb_puts(&b, "SELECT id, CASE");
        for (int i = 0; i < FDT_DBI_NBOUNDS; i++)
            if (!strcmp(bounds[i].table, tables[t]) && bounds[i].since <= version)
                fdt_sb_printf(&b, " WHEN %s NOT BETWEEN %lld AND %lld THEN %d",
                              bounds[i].column, (long long)bounds[i].lo,
                              (long long)bounds[i].hi, i);
        fdt_sb_puts(&b, " END AS k, CASE");
        for (int i = 0; i < FDT_DBI_NBOUNDS; i++)
            if (!strcmp(bounds[i].table, tables[t]) && bounds[i].since <= version)
                fdt_sb_printf(&b, " WHEN %s NOT BETWEEN %lld AND %lld THEN %s",
                              bounds[i].column, (long long)bounds[i].lo,
                              (long long)bounds[i].hi, bounds[i].column);
        fdt_sb_printf(&b, " END FROM %s WHERE ", tables[t]);
        outside(&b, tables[t], "", version);
        fdt_sb_puts(&b, " ORDER BY id");
        sqlite3_stmt *st;
        int rc = b.oom ? fdt_err_set(e, "out of memory")
                       : fdt_dbi_prepare(db, fdt_sb_str(&b), &st, e);
        fdt_sb_free(&b);
        if (rc || scan(db, st, tables[t], n, what, len, e))
            return -1;
    }
    return 0;
}

int fdt_dbi_bounds_refuse(fdt_db *db, int version, fdt_err *e)
{
    int64_t n;
    char what[256];
    if (fdt_dbi_out_of_bounds(db, version, &n, what, sizeof what, e))
        return -1;
    if (!n)
        return 0;
    return fdt_err_set(e, "%lld row(s) hold values outside fdtune's bounds, first %s (written "
                       "outside fdtune, or damaged: fdtune db check %s lists them)",
                       (long long)n, what, db->path);
}
