/* SQL on the side of the fdt_db API for the tests (testsql.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>

#include "testsql.h"

int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(h));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

void sql_exec(const char *path, const char *sql)
{
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
                     SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(h);
}

fdt_clocks sql_clocks(int sm, int sm_max, int mem, int mem_max, uint64_t reasons)
{
    fdt_clocks c;
    fdt_clocks_init(&c);
    c.known = 1;
    c.sm_mhz = sm;
    c.sm_max_mhz = sm_max;
    c.mem_mhz = mem;
    c.mem_max_mhz = mem_max;
    c.reasons_known = 1;
    c.reasons = reasons;
    return c;
}
