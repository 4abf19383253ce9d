/* SQL on a database file through a plain SQLite connection of its own, beside the fdt_db API:
 * for the tests that look at or damage what fdtune wrote (test_db, test_retune, test_merge).
 * They fail the running cmocka test when a statement fails. */
#ifndef FDT_TESTSQL_H
#define FDT_TESTSQL_H

#include <stdint.h>

/* The first column of the first row of sql, read-only. */
int64_t sql_int(const char *path, const char *sql);
/* Runs sql (several statements are fine), creating the file when missing. */
void sql_exec(const char *path, const char *sql);

#endif
