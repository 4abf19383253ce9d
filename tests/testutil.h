/* Helpers shared by the test executables that work in a scratch directory, run the built
 * fdtune binary (test_cli_query, test_db, test_export, test_retune). They fail the running
 * cmocka test where a step of their own fails. */
#ifndef FDT_TESTUTIL_H
#define FDT_TESTUTIL_H

#include <stddef.h>

typedef struct tu_result {
    int status;     /* exit code, or 128 + the signal that ended the process */
    char *out, *err; /* what it wrote, whole, NUL-terminated */
} tu_result;

/* A fresh directory $TMPDIR/NAME.XXXXXX (/tmp without TMPDIR) written into buf: 0, or -1. */
int tu_mkdtemp(char *buf, size_t n, const char *name);
/* Removes dir and everything under it: 0, or -1. */
int tu_rmtree(const char *dir);
/* The file at path, whole and NUL-terminated; free() it. */
char *tu_slurp(const char *path);
/* Runs argv[0] with argv (NULL-terminated), its stdout and stderr through files in dir that
 * are removed afterwards; free r with tu_result_free. */
void tu_run(tu_result *r, const char *dir, char *const *argv);
void tu_result_free(tu_result *r);

/* Fail the running test unless s contains part (or, for assert_lacks, unless it does not);
 * the message shows s, cut at 4000 characters. */
void assert_has(const char *s, const char *part);
void assert_lacks(const char *s, const char *part);
/* Fail the running test unless r exited with status; the message shows its output. */
void expect_status(const tu_result *r, int status);

#endif
