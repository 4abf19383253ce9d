/* The GPU's clocks recorded with a run (schema v4): the maximum SM and memory clocks, the
 * current ones and the throttle reasons at the start and at the end of the run's
 * measurements, and where the environment's driver version came from. Written by tune and
 * retune while the run is running; read by retune to tell a throttled run from a regression. */
#include "db_internal.h"

#include <stdio.h>
#include <string.h>

static const char *const set_sql[] = {
    "UPDATE runs SET sm_mhz_start = :sm, mem_mhz_start = :mem, throttle_start = :thr,"
    " sm_max_mhz = coalesce(:smmax, sm_max_mhz), mem_max_mhz = coalesce(:memmax, mem_max_mhz),"
    " driver_source = coalesce(:src, driver_source)"
    " WHERE id = :id AND status = 'running'",
    "UPDATE runs SET sm_mhz_end = :sm, mem_mhz_end = :mem, throttle_end = :thr,"
    " sm_max_mhz = coalesce(:smmax, sm_max_mhz), mem_max_mhz = coalesce(:memmax, mem_max_mhz),"
    " driver_source = coalesce(:src, driver_source)"
    " WHERE id = :id AND status = 'running'",
};

/* What fdt_db_run_set_clocks binds. */
typedef struct clock_values {
    const char *src, *thr;
    const fdt_clocks *c;
} clock_values;

static int bind_clocks(sqlite3_stmt *st, const void *arg)
{
    const clock_values *v = arg;
    const fdt_clocks *c = v->c;
    int rc = fdt_dbi_bind_opt_int(st, ":sm", c->sm_mhz);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_opt_int(st, ":mem", c->mem_mhz);
    if (rc == SQLITE_OK) /* a maximum is positive or unknown */
        rc = fdt_dbi_bind_opt_int(st, ":smmax", c->sm_max_mhz > 0 ? c->sm_max_mhz : -1);
    if (rc == SQLITE_OK)
        rc = fdt_dbi_bind_opt_int(st, ":memmax", c->mem_max_mhz > 0 ? c->mem_max_mhz : -1);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":thr", c->reasons_known ? v->thr : NULL);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":src", v->src && *v->src ? v->src : NULL);
    return rc;
}

int fdt_db_run_set_clocks(fdt_db *db, int64_t run_id, fdt_db_clocks_when when,
                          const char *driver_source, const fdt_clocks *c, fdt_err *e)
{
    if ((unsigned)when > FDT_DB_CLOCKS_END)
        return fdt_err_set(e, "run %lld: clocks: bad moment", (long long)run_id);
    if (!c->known)
        return 0;
    char thr[256];
    fdt_throttle_names(c->reasons, thr, sizeof thr);
    clock_values v = {driver_source, thr, c};
    if (fdt_dbi_update_running(db, run_id, set_sql[when], bind_clocks, &v, e))
        return fdt_err_wrap(e, "run %lld: record clocks", (long long)run_id);
    return 0;
}

/* Columns col.. (sm, mem, throttle) with the maxima into c. */
static void read_clocks(sqlite3_stmt *st, int col, int64_t smmax, int64_t memmax, fdt_clocks *c)
{
    fdt_clocks_init(c);
    int64_t sm = fdt_dbi_opt_int(st, col), mem = fdt_dbi_opt_int(st, col + 1);
    const char *thr = (const char *)sqlite3_column_text(st, col + 2);
    c->known = sm >= 0 || mem >= 0 || thr;
    if (!c->known)
        return;
    c->sm_mhz = (int)sm;
    c->mem_mhz = (int)mem;
    c->sm_max_mhz = (int)smmax;
    c->mem_max_mhz = (int)memmax;
    c->reasons_known = thr && fdt_throttle_parse(thr, &c->reasons) == 0;
}

int fdt_db_run_clocks(fdt_db *db, int64_t run_id, fdt_clocks *start, fdt_clocks *end,
                      char *src, size_t n, fdt_err *e)
{
    fdt_clocks_init(start);
    fdt_clocks_init(end);
    if (n)
        src[0] = 0;
    sqlite3_stmt *st = NULL;
    if (fdt_dbi_prepare(db,
                        "SELECT sm_max_mhz, mem_max_mhz, driver_source, sm_mhz_start,"
                        " mem_mhz_start, throttle_start, sm_mhz_end, mem_mhz_end, throttle_end"
                        " FROM runs WHERE id = :id",
                        &st, e))
        return fdt_err_wrap(e, "run %lld: clocks", (long long)run_id);
    int rc = fdt_dbi_bind_int(st, ":id", run_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int64_t smmax = fdt_dbi_opt_int(st, 0), memmax = fdt_dbi_opt_int(st, 1);
        fdt_dbi_copy(src, n, st, 2);
        read_clocks(st, 3, smmax, memmax, start);
        read_clocks(st, 6, smmax, memmax, end);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE)
        return fdt_err_set(e, "run %lld: clocks: no such run", (long long)run_id);
    if (rc != SQLITE_ROW)
        return fdt_dbi_fail(db, e, rc, "run %lld: clocks", (long long)run_id);
    return 0;
}
