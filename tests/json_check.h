/* A strict JSON recogniser for the tests: enough to prove a document parses, without a
 * library. Shared by the tests of fdtune's --json outputs. */
#ifndef FDT_TEST_JSON_CHECK_H
#define FDT_TEST_JSON_CHECK_H

/* 0 when doc is exactly one JSON document (whitespace around it allowed); else 1, with
 * *fail_at the offset near which it stops parsing (-1: at the first value). */
int json_check(const char *doc, long *fail_at);

#endif
