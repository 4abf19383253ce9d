/* Tests of the emitter (common/fdt_emit.h), the one writer of fdtune's tables, CSV and JSON:
 * the table aligns columns by UTF-8 characters and shows unknown values as "-"; CSV quotes
 * per RFC 4180; JSON escapes quotes, backslashes and control characters, passes UTF-8
 * through, replaces invalid bytes, writes unknown values as null and never NaN, and prints
 * reals that read back exactly; one rendering serves all three forms; nested documents (a
 * run with its results, lined arrays) come out exactly and pass the strict recogniser of
 * tests/json_check.c; and every misuse (a cell of the wrong type, a missing or extra cell, a
 * key where none belongs, unbalanced objects, a bad table format) stops the program with an
 * assertion in every form, checked in a child process. Also the output rule of
 * fdt_write_file_atomic (common/fsutil.c), against nodes made here: a file replaced with its
 * mode kept, links followed (absolute, relative, chained, dangling) and kept, a FIFO and a
 * descriptor written in place, mknod copies of /dev/null and /dev/full (as root) left as
 * they are with ENOSPC reported, EPIPE an error rather than a signal, a directory refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdt_emit.h"
#include "json_check.h"

/* ------------------------------------------------------------------ helpers */

static void assert_json_valid(const char *doc)
{
    long at = 0;
    if (json_check(doc, &at)) {
        print_error("invalid JSON near offset %ld: %s\n", at, doc);
        fail();
    }
}

/* A small table of devices: text, integer, real and boolean columns, some unknown values,
 * columns for one form only. */
static const fdt_col dev_cols[] = {
    {"name", "name", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"cus", "CUs", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"mem", "memory", FDT_COL_REAL_OPT, "%.1f GiB", FDT_SHOW_TEXT, 0},
    {"mem_bytes", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"gbs", "GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, 0},
    {"live", "live", FDT_COL_BOOL, NULL, FDT_SHOW_ALL, 0},
    {"uuid", "uuid", FDT_COL_STR_OPT, NULL, FDT_SHOW_ALL, 0},
    {"note", "note", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
};
#define NDEV ((int)(sizeof dev_cols / sizeof dev_cols[0]))

static void dev_row(fdt_emit *m, const char *name, long long cus, long long mem, double gbs,
                    int live, const char *uuid, const char *note)
{
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, name);
    fdt_emit_cell_int(m, cus);
    fdt_emit_cell_real(m, mem / 1073741824.0);
    fdt_emit_cell_int(m, mem);
    fdt_emit_cell_real(m, gbs);
    fdt_emit_cell_bool(m, live);
    fdt_emit_cell_str(m, uuid);
    fdt_emit_cell_str(m, note);
    fdt_emit_row_end(m);
}

/* The same rendering for every form: a document with the devices as rows. */
static void render_devices(fdt_emit *m)
{
    fdt_emit_object(m, NULL);
    fdt_emit_int(m, "schema", 1);
    fdt_emit_text(m, "devices:\n");
    fdt_emit_array(m, "devices");
    fdt_emit_table(m, dev_cols, NDEV);
    dev_row(m, "H100", 132, 85899345920LL, 3008.4217, 1, "GPU-1", "a, \"b\"");
    dev_row(m, "Ünïcode — x", -1, 1073741824LL, NAN, 0, "", "");
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_end(m);
}

static char *render(fdt_emit_mode mode, void (*fn)(fdt_emit *), int digits)
{
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_emit m;
    fdt_emit_init(&m, mode, &b);
    m.digits = digits;
    fn(&m);
    fdt_err e;
    assert_int_equal(fdt_emit_finish(&m, &e), 0);
    return fdt_sb_take(&b);
}

/* ------------------------------------------------------------------ text */

static void test_text_table(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_TEXT, render_devices, FDT_EMIT_DIGITS_V1);
    /* numbers right, text left, the last column unpadded, widths in characters (the
     * unicode name is 11 characters wide, 16 bytes), unknowns "-", data columns absent */
    assert_string_equal(t, "devices:\n"
                           "name         CUs    memory  GB/s  live  uuid   note\n"
                           "H100         132  80.0 GiB  3008  yes   GPU-1  a, \"b\"\n"
                           "Ünïcode — x    -   1.0 GiB     -  no    -      -\n");
    free(t);
}

static void text_empty_and_headers(fdt_emit *m)
{
    static const fdt_col c[] = {{"a", "alpha", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
                                {"b", "b", FDT_COL_INT, "%lld B", FDT_SHOW_ALL, FDT_COL_LEFT},
                                {"c", "c", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_RIGHT}};
    fdt_emit_table(m, c, 3); /* no rows: nothing at all */
    fdt_emit_table_end(m);
    m->head_on = "<";
    m->head_off = ">";
    fdt_emit_table(m, c, 3);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, "x");
    fdt_emit_cell_int(m, 4096);
    fdt_emit_cell_str(m, "y");
    fdt_emit_row_end(m);
    fdt_emit_table_end(m);
}

static void test_text_alignment_flags(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_TEXT, text_empty_and_headers, 0);
    /* headers wrapped in head_on/off, padding inside; an explicit left integer and a right
     * string; a right-aligned last column is padded */
    assert_string_equal(t, "<alpha>  <b     >  <c>\n"
                           "x      4096 B  y\n");
    free(t);
}

/* ------------------------------------------------------------------ CSV */

static void test_csv_quoting(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_CSV, render_devices, FDT_EMIT_DIGITS_V1);
    /* keys as the header, text-only columns left out, unknowns empty, quotes doubled and
     * fields with commas or quotes quoted; no document, no free text */
    assert_string_equal(t, "name,cus,mem_bytes,gbs,live,uuid,note\n"
                           "H100,132,85899345920,3008.4217,true,GPU-1,\"a, \"\"b\"\"\"\n"
                           "Ünïcode — x,,1073741824,,false,,\n");
    free(t);
}

static void csv_specials(fdt_emit *m)
{
    static const fdt_col c[] = {{"s", "s", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
                                {"t", "t", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0}};
    const char *v[] = {"plain", "line\nbreak", "cr\rhere", "\"", "", " spaced "};
    fdt_emit_table(m, c, 2);
    for (int i = 0; i < 6; i += 2) {
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, v[i]);
        fdt_emit_cell_str(m, v[i + 1]);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
}

static void test_csv_specials(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_CSV, csv_specials, 0);
    assert_string_equal(t, "s,t\n"
                           "plain,\"line\nbreak\"\n"
                           "\"cr\rhere\",\"\"\"\"\n"
                           ", spaced \n");
    free(t);
}

/* ------------------------------------------------------------------ JSON */

static void test_json_rows(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_JSON, render_devices, FDT_EMIT_DIGITS_V1);
    assert_string_equal(t, "{\"schema\": 1, \"devices\": ["
                           "{\"name\": \"H100\", \"cus\": 132, \"mem_bytes\": 85899345920, "
                           "\"gbs\": 3008.4217, \"live\": true, \"uuid\": \"GPU-1\", "
                           "\"note\": \"a, \\\"b\\\"\"}, "
                           "{\"name\": \"Ünïcode — x\", \"cus\": null, "
                           "\"mem_bytes\": 1073741824, "
                           "\"gbs\": null, \"live\": false, \"uuid\": null, \"note\": \"\"}]}\n");
    assert_json_valid(t);
    free(t);
}

static void json_strings(fdt_emit *m)
{
    fdt_emit_array(m, NULL);
    fdt_emit_str(m, NULL, "q\" b\\ n\n t\t r\r c\001\037 d\x7f");
    fdt_emit_str(m, NULL, "é — 😀");
    fdt_emit_str(m, NULL,
                 "bad \xff lone \x80 overlong \xc0\x80 surrogate \xed\xa0\x80 cut \xe2\x82");
    fdt_emit_str_opt(m, NULL, "");
    fdt_emit_end(m);
}

static void test_json_escaping(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_JSON, json_strings, 0);
    assert_string_equal(t, "[\"q\\\" b\\\\ n\\n t\\t r\\u000d c\\u0001\\u001f d\x7f\", "
                           "\"é — 😀\", "
                           "\"bad \\ufffd lone \\ufffd overlong \\ufffd\\ufffd surrogate "
                           "\\ufffd\\ufffd\\ufffd cut \\ufffd\\ufffd\", null]\n");
    assert_json_valid(t);
    free(t);
}

static void json_unknowns(fdt_emit *m)
{
    static const fdt_col c[] = {{"s", "s", FDT_COL_STR_OPT, NULL, FDT_SHOW_ALL, 0},
                                {"i", "i", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
                                {"r", "r", FDT_COL_REAL_OPT, NULL, FDT_SHOW_ALL, 0},
                                {"b", "b", FDT_COL_BOOL_OPT, NULL, FDT_SHOW_ALL, 0},
                                {"o", "o", FDT_COL_REAL, NULL, FDT_SHOW_ALL, 0},
                                {"z", "z", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0}};
    fdt_emit_object(m, NULL);
    fdt_emit_real_opt(m, "nan", NAN);
    fdt_emit_real_opt(m, "inf", INFINITY);
    fdt_emit_real_opt(m, "-inf", -INFINITY);
    fdt_emit_int_opt(m, "neg", -1);
    fdt_emit_int_opt(m, "zero", 0);
    fdt_emit_null(m, "null");
    fdt_emit_table(m, c, 6);
    fdt_emit_row(m, "row");
    fdt_emit_cell_str(m, "");
    fdt_emit_cell_int(m, -5);
    fdt_emit_cell_real(m, INFINITY);
    fdt_emit_cell_bool(m, -1);
    fdt_emit_cell_omit(m); /* the key is left out */
    fdt_emit_cell_int(m, -7); /* not _OPT: a number */
    fdt_emit_row_end(m);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
}

static void test_json_nulls(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_JSON, json_unknowns, 0);
    assert_string_equal(t, "{\"nan\": null, \"inf\": null, \"-inf\": null, \"neg\": null, "
                           "\"zero\": 0, \"null\": null, \"row\": {\"s\": null, \"i\": null, "
                           "\"r\": null, \"b\": null, \"z\": -7}}\n");
    assert_json_valid(t);
    free(t);
    t = render(FDT_EMIT_CSV, json_unknowns, 0);
    assert_string_equal(t, "s,i,r,b,o,z\n,,,,,-7\n");
    free(t);
    t = render(FDT_EMIT_TEXT, json_unknowns, 0);
    assert_string_equal(t, "s  i  r  b  o   z\n"
                           "-  -  -  -  -  -7\n");
    free(t);
}

static const double reals[] = {0.1, 1.0 / 3, 3008.421734, 1e300, 5e-324, -2.5e-7,
                               9007199254740993.0, 123456789.123456789, 0.0, -1.0};

static void json_reals(fdt_emit *m)
{
    fdt_emit_array(m, NULL);
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        fdt_emit_real(m, NULL, reals[i]);
    fdt_emit_end(m);
}

static void test_json_reals_round_trip(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_JSON, json_reals, FDT_EMIT_DIGITS_ROUNDTRIP);
    assert_json_valid(t);
    assert_string_equal(t, "[0.1, 0.3333333333333333, 3008.421734, 1e+300, 5e-324, "
                           "-2.5e-07, 9007199254740992, 123456789.12345679, 0, -1]\n");
    const char *s = t + 1;
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        char *end;
        double v = strtod(s, &end);
        assert_true(end > s);
        assert_true(v == reals[i]); /* reads back as the very same double */
        s = end + strspn(end, ", ");
    }
    free(t);
    /* the schema-1 documents keep ten significant digits */
    t = render(FDT_EMIT_JSON, json_reals, FDT_EMIT_DIGITS_V1);
    assert_string_equal(t, "[0.1, 0.3333333333, 3008.421734, 1e+300, 4.940656458e-324, "
                           "-2.5e-07, 9.007199255e+15, 123456789.1, 0, -1]\n");
    free(t);
}

/* ------------------------------------------------------------------ documents */

static const fdt_col res_cols[] = {
    {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"median_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"ok", "ok", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
};

/* A run with its results, its environment and a lined array of operators (the layout of
 * fdtune export --format json), all from one rendering. */
static void render_run(fdt_emit *m)
{
    fdt_emit_object(m, NULL);
    fdt_emit_int(m, "schema", 1);
    fdt_emit_object(m, "run");
    fdt_emit_int(m, "id", 7);
    fdt_emit_str(m, "device", "H100");
    fdt_emit_text(m, "run 7 on H100\n");
    fdt_emit_array(m, "results");
    fdt_emit_table(m, res_cols, 3);
    for (int i = 0; i < 2; i++) {
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, i ? "bx=64" : "bx=32,by=4");
        fdt_emit_cell_real(m, i ? NAN : 0.36921);
        fdt_emit_cell_bool(m, !i);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_object(m, "env");
    fdt_emit_str(m, "driver", "580");
    fdt_emit_end(m);
    fdt_emit_end(m);
    fdt_emit_array_lined(m, "operators");
    for (int i = 0; i < 2; i++) {
        fdt_emit_object(m, NULL);
        fdt_emit_str(m, "op", i ? "lap" : "d2x");
        fdt_emit_array_lined(m, "variants");
        for (int k = 0; k <= i; k++) {
            fdt_emit_object(m, NULL);
            fdt_emit_int(m, "index", k);
            fdt_emit_array(m, "block");
            fdt_emit_int(m, NULL, 64);
            fdt_emit_int(m, NULL, 4);
            fdt_emit_end(m);
            fdt_emit_end(m);
        }
        fdt_emit_end(m);
        fdt_emit_end(m);
    }
    fdt_emit_end(m);
    fdt_emit_array_lined(m, "empty");
    fdt_emit_end(m);
    fdt_emit_bool(m, "done", 1);
    fdt_emit_end(m);
}

static void test_nested_document(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_JSON, render_run, FDT_EMIT_DIGITS_V1);
    assert_string_equal(t, "{\"schema\": 1, \"run\": {\"id\": 7, \"device\": \"H100\", "
                           "\"results\": [{\"config\": \"bx=32,by=4\", \"median_ms\": 0.36921, "
                           "\"ok\": true}, {\"config\": \"bx=64\", \"median_ms\": null, "
                           "\"ok\": false}], \"env\": {\"driver\": \"580\"}}, \"operators\": [\n"
                           "    {\"op\": \"d2x\", \"variants\": [\n"
                           "        {\"index\": 0, \"block\": [64, 4]}\n"
                           "      ]},\n"
                           "    {\"op\": \"lap\", \"variants\": [\n"
                           "        {\"index\": 0, \"block\": [64, 4]},\n"
                           "        {\"index\": 1, \"block\": [64, 4]}\n"
                           "      ]}\n"
                           "  ], \"empty\": [\n"
                           "  ], \"done\": true}\n");
    assert_json_valid(t);
    free(t);
    /* the same rendering as a table: the free text and the results, no document */
    t = render(FDT_EMIT_TEXT, render_run, FDT_EMIT_DIGITS_V1);
    assert_string_equal(t, "run 7 on H100\n"
                           "config      median ms\n"
                           "bx=32,by=4     0.3692\n"
                           "bx=64               -\n");
    free(t);
}

/* ------------------------------------------------------------------ misuse */

/* Runs fn in a child process: it must die of SIGABRT (an assertion, on in every build)
 * with `what` in its message on stderr. */
static void expect_abort(void (*fn)(fdt_emit *), fdt_emit_mode mode, const char *what)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);
        dup2(fd[1], 2);
        close(fd[0]);
        fdt_sb b;
        fdt_sb_init(&b);
        fdt_emit m;
        fdt_emit_init(&m, mode, &b);
        fn(&m);
        fdt_err e;
        fdt_emit_finish(&m, &e);
        _exit(0);
    }
    close(fd[1]);
    char err[4096];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof err - 1 && (k = read(fd[0], err + n, sizeof err - 1 - n)) > 0)
        n += (size_t)k;
    err[n] = 0;
    close(fd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT) {
        print_error("expected an assertion naming \"%s\"; the child %s %d\n", what,
                    WIFSIGNALED(st) ? "died of signal" : "exited",
                    WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        fail();
    }
    if (!strstr(err, what)) {
        print_error("the assertion does not name \"%s\": %s\n", what, err);
        fail();
    }
}

/* ------------------------------------------------------------------ invariants */

static int evaluated;
static int touch(void) { return ++evaluated, 0; }

/* Runs fn in a child: 1 when it died of SIGABRT with `what` on stderr, 0 when it exited 0. */
static int child_aborts(void (*fn)(void), const char *what)
{
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);
        dup2(fd[1], 2);
        close(fd[0]);
        fn();
        _exit(0);
    }
    close(fd[1]);
    char err[4096];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof err - 1 && (k = read(fd[0], err + n, sizeof err - 1 - n)) > 0)
        n += (size_t)k;
    err[n] = 0;
    close(fd[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT || !strstr(err, what))
        fail_msg("expected SIGABRT naming \"%s\", got status %d: %s", what, st, err);
    return 1;
}

static void require_fails(void) { FDT_REQUIRE(touch() == 42, "the answer is forty-two"); }
static void assert_fails(void) { FDT_ASSERT(touch() == 42, "checked only with FDTUNE_ASSERTS"); }
static void assert_holds(void)
{
    FDT_ASSERT(1 + 1 == 2, "arithmetic");
    FDT_REQUIRE(1 + 1 == 2, "arithmetic");
}

/* FDT_REQUIRE checks in every build; FDT_ASSERT only where FDTUNE_ASSERTS is defined (the asan
 * preset, Debug builds), and elsewhere does not even evaluate its condition. */
static void test_invariant_macros(void **state)
{
    (void)state;
    assert_int_equal(child_aborts(assert_holds, ""), 0);
    assert_int_equal(child_aborts(require_fails, "assertion 'touch() == 42' failed: the answer "
                                                 "is forty-two"), 1);
#ifdef FDTUNE_ASSERTS
    assert_int_equal(child_aborts(assert_fails, "checked only with FDTUNE_ASSERTS"), 1);
#else
    assert_int_equal(child_aborts(assert_fails, ""), 0);
    evaluated = 0;
    assert_fails();
    assert_int_equal(evaluated, 0);
#endif
}

static const fdt_col one_str[] = {{"s", "s", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0}};

static void open_row(fdt_emit *m)
{
    fdt_emit_table(m, one_str, 1);
    fdt_emit_row(m, NULL);
}

static void int_in_str(fdt_emit *m)
{
    open_row(m);
    fdt_emit_cell_int(m, 1);
}

static void hidden_mismatch(fdt_emit *m)
{
    static const fdt_col c[] = {{"h", "h", FDT_COL_REAL, NULL, FDT_SHOW_DATA, 0}};
    fdt_emit_table(m, c, 1); /* shown in CSV and JSON only; the table still checks */
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, "x");
}

static void too_many(fdt_emit *m)
{
    open_row(m);
    fdt_emit_cell_str(m, "a");
    fdt_emit_cell_str(m, "b");
}

static void too_few(fdt_emit *m)
{
    static const fdt_col c[] = {{"a", "a", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
                                {"b", "b", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0}};
    fdt_emit_table(m, c, 2);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, "a");
    fdt_emit_row_end(m);
}

static void nan_in_real(fdt_emit *m)
{
    static const fdt_col c[] = {{"r", "r", FDT_COL_REAL, "%.1f", FDT_SHOW_ALL, 0}};
    fdt_emit_table(m, c, 1);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_real(m, NAN);
}

static void nan_real_member(fdt_emit *m)
{
    fdt_emit_object(m, NULL);
    fdt_emit_real(m, "r", NAN);
}

static void key_in_array(fdt_emit *m)
{
    fdt_emit_array(m, NULL);
    fdt_emit_int(m, "k", 1);
}

static void no_key_in_object(fdt_emit *m)
{
    fdt_emit_object(m, NULL);
    fdt_emit_int(m, NULL, 1);
}

static void end_of_nothing(fdt_emit *m) { fdt_emit_end(m); }

static void left_open(fdt_emit *m) { fdt_emit_object(m, NULL); }

static void two_documents(fdt_emit *m)
{
    fdt_emit_object(m, NULL);
    fdt_emit_end(m);
    fdt_emit_object(m, NULL);
}

static void text_in_table(fdt_emit *m)
{
    open_row(m);
    fdt_emit_cell_str(m, "a");
    fdt_emit_row_end(m);
    fdt_emit_text(m, "between\n");
}

static void member_in_row(fdt_emit *m)
{
    fdt_emit_array(m, NULL);
    open_row(m);
    fdt_emit_str(m, "x", "y");
}

static void int_format_d(fdt_emit *m)
{
    static const fdt_col c[] = {{"i", "i", FDT_COL_INT, "%d B", FDT_SHOW_ALL, 0}};
    fdt_emit_table(m, c, 1);
}

static void real_format_two(fdt_emit *m)
{
    static const fdt_col c[] = {{"r", "r", FDT_COL_REAL, "%.1f/%.1f", FDT_SHOW_ALL, 0}};
    fdt_emit_table(m, c, 1);
}

static void str_format(fdt_emit *m)
{
    static const fdt_col c[] = {{"s", "s", FDT_COL_STR, "%s", FDT_SHOW_ALL, 0}};
    fdt_emit_table(m, c, 1);
}

static void duplicate_keys(fdt_emit *m)
{
    static const fdt_col c[] = {{"k", "a", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
                                {"k", "b", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0}};
    fdt_emit_table(m, c, 2);
}

static void table_left_open(fdt_emit *m)
{
    fdt_emit_table(m, one_str, 1);
}

static void test_misuse_aborts(void **state)
{
    (void)state;
    const char *cell = "the cell's type is not its column's";
    for (int mode = FDT_EMIT_TEXT; mode <= FDT_EMIT_JSON; mode++) {
        expect_abort(int_in_str, (fdt_emit_mode)mode, cell);
        expect_abort(hidden_mismatch, (fdt_emit_mode)mode, cell);
        expect_abort(too_many, (fdt_emit_mode)mode, "more cells than columns");
        expect_abort(too_few, (fdt_emit_mode)mode, "fewer cells than columns");
        expect_abort(nan_in_real, (fdt_emit_mode)mode, "not finite in a column");
        expect_abort(int_format_d, (fdt_emit_mode)mode, "one conversion of the column's type");
        expect_abort(real_format_two, (fdt_emit_mode)mode, "one conversion of the column's type");
        expect_abort(str_format, (fdt_emit_mode)mode, "one conversion of the column's type");
        expect_abort(text_in_table, (fdt_emit_mode)mode, "a table is open");
        expect_abort(table_left_open, (fdt_emit_mode)mode, "a table is still open");
    }
    /* the document's structure is checked in the forms that do not write it, too */
    for (int mode = FDT_EMIT_TEXT; mode <= FDT_EMIT_JSON; mode++) {
        expect_abort(nan_real_member, (fdt_emit_mode)mode, "not finite");
        expect_abort(key_in_array, (fdt_emit_mode)mode, "an array element takes no key");
        expect_abort(no_key_in_object, (fdt_emit_mode)mode, "a member of an object needs a key");
        expect_abort(end_of_nothing, (fdt_emit_mode)mode, "nothing is open");
        expect_abort(left_open, (fdt_emit_mode)mode, "still open");
        expect_abort(two_documents, (fdt_emit_mode)mode, "a second top-level value");
        expect_abort(member_in_row, (fdt_emit_mode)mode, "a row holds cells only");
    }
    expect_abort(duplicate_keys, FDT_EMIT_JSON, "two data columns with one key");
    expect_abort(duplicate_keys, FDT_EMIT_CSV, "two data columns with one key");
}

/* Duplicate keys are fine when only one of the columns is shown in the form. */
static void split_keys(fdt_emit *m)
{
    static const fdt_col c[] = {{"k", "k", FDT_COL_INT_OPT, NULL, FDT_SHOW_TEXT, 0},
                                {"k", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0}};
    fdt_emit_array(m, NULL);
    fdt_emit_table(m, c, 2);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_int(m, -1);
    fdt_emit_cell_int(m, 0);
    fdt_emit_row_end(m);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
}

static void test_split_columns(void **state)
{
    (void)state;
    char *t = render(FDT_EMIT_JSON, split_keys, 0);
    assert_string_equal(t, "[{\"k\": 0}]\n");
    free(t);
    t = render(FDT_EMIT_TEXT, split_keys, 0);
    assert_string_equal(t, "k\n-\n");
    free(t);
}

/* The lines of t are at most width characters wide (UTF-8 characters). */
static void assert_lines_fit(const char *t, int width)
{
    for (const char *l = t; *l; l = strchr(l, '\n') + 1) {
        int chars = 0;
        for (const char *p = l; *p != '\n'; p++)
            chars += ((unsigned char)*p & 0xc0) != 0x80;
        if (chars > width) {
            print_error("a line of %d characters, more than %d:\n%s", chars, width, t);
            fail();
        }
    }
}

/* A width limit (a terminal's): a key column is cut with "…" until each line fits, numbers
 * are never cut, a column that is no key is left out first and named below the table; no
 * limit cuts nothing. A tee gets the same calls in its own form. */
static void test_fit_width_and_tee(void **state)
{
    (void)state;
    static const fdt_col c[] = {
        {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
        {"ms", "median ms", FDT_COL_REAL, "%.4f", FDT_SHOW_ALL, FDT_COL_KEY},
        {"dev", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0}};
    const char *cfg = "align=32,bx=64,by=4,bz=1,l2pf=0,lb=0,lds=0,mbar=0,nt=0,nw=32";
    for (int width = 0; width <= 40; width += 40) {
        fdt_sb out, tee_out;
        fdt_sb_init(&out);
        fdt_sb_init(&tee_out);
        fdt_emit m, tee;
        fdt_emit_init(&m, FDT_EMIT_TEXT, &out);
        fdt_emit_init(&tee, FDT_EMIT_JSON, &tee_out);
        m.width = width;
        m.tee = &tee;
        fdt_emit_array(&m, NULL);
        fdt_emit_table(&m, c, 3);
        fdt_emit_row(&m, NULL);
        fdt_emit_cell_str(&m, cfg);
        fdt_emit_cell_real(&m, 0.123456);
        fdt_emit_cell_str(&m, "H100");
        fdt_emit_row_end(&m);
        fdt_emit_table_end(&m);
        fdt_emit_end(&m);
        fdt_err e;
        assert_int_equal(fdt_emit_finish(&m, &e), 0);
        assert_int_equal(fdt_emit_finish(&tee, &e), 0);
        const char *t = fdt_sb_str(&out);
        assert_non_null(strstr(t, "0.1235"));
        if (width) {
            /* one row: a list cut by whole items */
            assert_non_null(strstr(t, "align=32,bx=64,by=4,bz=1\xe2\x80\xa6 "));
            assert_non_null(strstr(t, "(left out to fit 40 columns: device)\n"));
            assert_null(strstr(t, "H100"));
            assert_lines_fit(t, width);
        } else {
            assert_non_null(strstr(t, cfg));
            assert_non_null(strstr(t, "H100"));
        }
        char want[256];
        snprintf(want, sizeof want, "[{\"config\": \"%s\", \"ms\": 0.123456, \"dev\": \"H100\"}]\n",
                 cfg);
        assert_string_equal(fdt_sb_str(&tee_out), want);
        fdt_sb_free(&out);
        fdt_sb_free(&tee_out);
    }
}

/* t with its notes' wrapped lines joined again (a static copy). */
static const char *unwrapped(const char *t)
{
    static char buf[4096];
    size_t n = 0;
    for (const char *p = t; *p && n < sizeof buf - 1; p++) {
        if (p[0] == '\n' && p[1] == ' ' && p[2] != ' ')
            p++; /* "\n " continues a note */
        buf[n++] = *p;
    }
    buf[n] = 0;
    return buf;
}

/* A table of rows (NULL-terminated lists of cells) over cols, in the table form at width. */
static char *fitted(const fdt_col *cols, int ncols, const char *const *cells, int rows, int width)
{
    fdt_sb out;
    fdt_sb_init(&out);
    fdt_emit m;
    fdt_emit_init(&m, FDT_EMIT_TEXT, &out);
    m.width = width;
    fdt_emit_table(&m, cols, ncols);
    for (int r = 0; r < rows; r++) {
        fdt_emit_row(&m, NULL);
        for (int k = 0; k < ncols; k++) {
            const char *v = cells[r * ncols + k];
            if (cols[k].type == FDT_COL_STR)
                fdt_emit_cell_str(&m, v);
            else
                fdt_emit_cell_real(&m, atof(v));
        }
        fdt_emit_row_end(&m);
    }
    fdt_emit_table_end(&m);
    fdt_err e;
    assert_int_equal(fdt_emit_finish(&m, &e), 0);
    assert_lines_fit(fdt_sb_str(&out), width);
    return fdt_sb_take(&out);
}

/* The rows of a table (lines before the first note), each cut into its cells at runs of
 * two spaces or more: rows[r][k]; returns the number of rows. */
static int table_cells(const char *t, char cells[][8][128], int max)
{
    int r = 0;
    for (const char *l = t; *l && *l != '(' && r < max; l = strchr(l, '\n') + 1, r++) {
        const char *end = strchr(l, '\n');
        int k = 0;
        for (const char *p = l; p < end && k < 8;) {
            p += strspn(p, " ");
            const char *q = strstr(p, "  ");
            if (!q || q > end)
                q = end;
            snprintf(cells[r][k++], 128, "%.*s", (int)(q - p), p);
            p = q;
        }
        for (; k < 8; k++)
            cells[r][k][0] = 0;
    }
    return r;
}

/* Configs leave out their default values, so a row that sets one more key (the dry run's
 * rank 10 with bulk=1 among bulk=0 rows) is a longer list: the items every config holds,
 * wherever they sit, still go below the table, and the table fits (it did not: 88 columns
 * at 80, test_tables). */
static void test_fit_uneven_configs(void **state)
{
    (void)state;
    static const fdt_col cols[] = {
        {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
        {"gbs", "GB/s", FDT_COL_REAL, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    };
    static const char *const rows[] = {
        "align=32,bx=64,by=8,bz=1,lb=512,lds=3,nw=256,pf=4,tile=2,vec=4", "2772",
        "align=32,bulk=1,bx=64,by=8,bz=1,lb=512,lds=3,mbar=1,nw=256,pf=5,tile=2,vec=2", "2718",
        "align=32,bx=128,by=4,bz=1,lb=512,lds=3,nw=256,pf=4,tile=4,vec=2", "2761",
    };
    char *t = fitted(cols, 2, rows, 3, 52);
    char cells[8][8][128];
    assert_int_equal(table_cells(t, cells, 8), 4);
    assert_string_equal(cells[2][0], "bulk=1,bx=64,by=8,mbar=1,pf=5,tile=2,vec=2");
    assert_string_equal(cells[3][0], "bx=128,by=4,pf=4,tile=4,vec=2");
    for (int r = 1; r <= 3; r++)
        assert_string_equal(cells[r][1], rows[(r - 1) * 2 + 1]);
    assert_non_null(strstr(unwrapped(t), "in config: align=32,bz=1,lb=512,lds=3,nw=256"));
    free(t);
}

/* Fitting keeps what identifies a row: a column the same in every row and the items every
 * config shares go below the table; other columns are left out before a key column is cut;
 * configs that differ only late (the dry run's ranks 1 and 7) or in several places stay
 * different, cut by whole items; device names that differ only at the end are cut in the
 * middle; two key columns that each could hide the difference are cut so that each tells
 * its cells apart. */
static void test_fit_keeps_rows_apart(void **state)
{
    (void)state;
    static const fdt_col cols[] = {
        {"problem", "problem", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
        {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
        {"gbs", "GB/s", FDT_COL_REAL, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
        {"device", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
        {"date", "date (UTC)", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    };
#define LAP "lap R=4 f32 512x512x512"
#define H100 "NVIDIA H100 80GB HBM3"
    static const char *const rows[] = {
        LAP, "align=32,bx=64,by=8,bz=1,lb=512,nw=128,pf=4,tile=2,vec=4", "2729", H100,
        "2026-11-25 04:41",
        LAP, "align=32,bx=64,by=8,bz=1,lb=512,nw=128,pf=3,tile=2,vec=4", "2685", H100,
        "2026-11-25 04:42",
        LAP, "align=32,bx=128,by=4,bz=1,lb=512,nw=128,pf=4,tile=4,vec=2", "2716", H100,
        "2026-11-25 04:43",
        LAP, "align=32,bx=64,by=8,bz=1,lb=512,nw=64,pf=4,tile=2,vec=2", "2700", H100,
        "2026-11-25 04:44",
    };
#undef LAP
#undef H100
    /* wide enough: nothing changes */
    char *t = fitted(cols, 5, rows, 4, 200);
    assert_non_null(strstr(t, "NVIDIA H100 80GB HBM3"));
    assert_null(strstr(t, "\xe2\x80\xa6"));
    free(t);
    t = fitted(cols, 5, rows, 4, 60);
    char cells[8][8][128];
    assert_int_equal(table_cells(t, cells, 8), 5);
    assert_string_equal(cells[0][0], "config"); /* the problem went below: the same in every row */
    for (int r = 1; r <= 4; r++) {
        for (int q = 1; q < r; q++)
            assert_string_not_equal(cells[r][0], cells[q][0]);
        assert_string_equal(cells[r][1], rows[(r - 1) * 5 + 2]); /* GB/s whole */
        assert_string_equal(cells[r][2], rows[(r - 1) * 5 + 4]); /* room for the date */
    }
    assert_non_null(strstr(unwrapped(t), "(in every row: problem lap R=4 f32 512x512x512; in "
                                         "config: align=32,bz=1,lb=512; device NVIDIA H100 80GB "
                                         "HBM3)"));
    free(t);
    /* narrower: the date is left out, configs still differ by the items that tell them
     * apart, and show nothing that is not theirs */
    for (int width = 30; width >= 24; width -= 2) {
        t = fitted(cols, 5, rows, 4, width);
        char note[64];
        snprintf(note, sizeof note, "(left out to fit %d columns: date (UTC))", width);
        assert_non_null(strstr(unwrapped(t), note));
        assert_int_equal(table_cells(t, cells, 8), 5);
        for (int r = 1; r <= 4; r++) {
            for (int q = 1; q < r; q++)
                assert_string_not_equal(cells[r][0], cells[q][0]);
            for (const char *p = cells[r][0]; *p;) { /* every item shown is the row's own */
                size_t n = strcspn(p, ",\xe2");
                char it[64];
                snprintf(it, sizeof it, "%.*s", (int)n, p);
                assert_true(!n || strstr(rows[(r - 1) * 5 + 1], it));
                p += n + (p[n] == ',' ? 1 : p[n] ? 3 : 0);
            }
        }
        free(t);
    }

    /* text that is no list: device names differing at their end, cut in the middle */
    static const fdt_col dcols[] = {
        {"device", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
        {"gbs", "GB/s", FDT_COL_REAL, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    };
    static const char *const drows[] = {
        "AMD Instinct MI250X / MI250 (gfx90a)", "1300",
        "AMD Instinct MI250X / MI250 (gfx90b)", "1310",
        "AMD Instinct MI300X", "4000",
    };
    t = fitted(dcols, 2, drows, 3, 20);
    assert_int_equal(table_cells(t, cells, 8), 4);
    assert_string_not_equal(cells[1][0], cells[2][0]);
    assert_non_null(strstr(cells[1][0], "a)"));
    assert_non_null(strstr(cells[2][0], "b)"));
    free(t);

    /* two key columns, each differing where the other would be cut */
    static const fdt_col kcols[] = {
        {"a", "a", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
        {"b", "b", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
    };
    static const char *const krows[] = {
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx1", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy1",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx2", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy2",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx1", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy2",
    };
    for (int nrows = 3; nrows >= 2; nrows--) { /* with two rows, each column alone */
        t = fitted(kcols, 2, krows, nrows, 30);
        assert_int_equal(table_cells(t, cells, 8), nrows + 1);
        for (int r = 1; r <= nrows; r++)
            for (int q = 1; q < r; q++)
                assert_true(strcmp(cells[r][0], cells[q][0]) || strcmp(cells[r][1], cells[q][1]));
        free(t);
    }
}

/* ------------------------------------------------------------------ the output rule */

/* A scratch directory for one test, its path in dir. */
static void scratch(char *dir, size_t n)
{
    fdt_err e;
    assert_int_equal(fdt_scratch_dir("fdtune-test-out", dir, n, &e), 0);
}

static char *slurp(const char *path)
{
    char *t = NULL;
    fdt_err e;
    if (fdt_read_file(path, &t, NULL, &e))
        return NULL;
    return t;
}

/* A regular file is replaced whole and keeps its mode; a new path is created; neither leaves
 * a temporary file; a directory is refused and left as it is. */
static void test_output_files(void **state)
{
    (void)state;
    char dir[4096], f[4200], g[4200], d[4200];
    scratch(dir, sizeof dir);
    snprintf(f, sizeof f, "%s/kept", dir);
    snprintf(g, sizeof g, "%s/new", dir);
    snprintf(d, sizeof d, "%s/adir", dir);
    fdt_err e;
    assert_int_equal(fdt_write_file_atomic(f, "old text, longer\n", 17, &e), 0);
    assert_int_equal(chmod(f, 0640), 0);
    assert_int_equal(fdt_write_file_atomic(f, "new\n", 4, &e), 0);
    char *t = slurp(f);
    assert_string_equal(t, "new\n");
    free(t);
    struct stat st;
    assert_int_equal(stat(f, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(fdt_write_file_atomic(g, "x", 1, &e), 0);
    assert_int_equal(mkdir(d, 0755), 0);
    assert_int_equal(fdt_write_file_atomic(d, "x", 1, &e), -1);
    assert_non_null(strstr(e.msg, "adir: a directory"));
    assert_int_equal(stat(d, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    char ls[4300];
    snprintf(ls, sizeof ls, "test \"$(ls -A '%s')\" = \"$(printf 'adir\\nkept\\nnew')\"", dir);
    assert_int_equal(system(ls), 0); /* no temporary file left */
    fdt_remove_tree(dir);
}

/* Links: absolute, relative to the link's own directory, a chain, a dangling one (its target
 * is created); each stays a link and its target is written. A loop is refused. */
static void test_output_links(void **state)
{
    (void)state;
    char dir[4096], p[4200], q[4200];
    scratch(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/sub", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    static const char *const links[][2] = {
        {"abs", NULL},           /* -> DIR/a.txt */
        {"sub/rel", "../r.txt"}, /* relative to sub/, not to the working directory */
        {"c1", "sub/rel"},       /* c2 -> c1 -> sub/rel -> r.txt */
        {"c2", "c1"},
        {"dangling", "made.txt"},
    };
    snprintf(q, sizeof q, "%s/a.txt", dir);
    fdt_err e;
    assert_int_equal(fdt_write_file_atomic(q, "old", 3, &e), 0);
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, links[i][0]);
        assert_int_equal(symlink(links[i][1] ? links[i][1] : q, p), 0);
    }
    static const char *const written[][2] = {
        {"abs", "a.txt"}, {"sub/rel", "r.txt"}, {"c2", "r.txt"}, {"dangling", "made.txt"}};
    for (size_t i = 0; i < sizeof written / sizeof written[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, written[i][0]);
        assert_int_equal(fdt_write_file_atomic(p, written[i][0], strlen(written[i][0]), &e), 0);
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        snprintf(q, sizeof q, "%s/%s", dir, written[i][1]);
        assert_int_equal(lstat(q, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        char *t = slurp(q);
        assert_string_equal(t, written[i][0]);
        free(t);
    }
    snprintf(p, sizeof p, "%s/loop1", dir);
    assert_int_equal(symlink("loop2", p), 0);
    snprintf(q, sizeof q, "%s/loop2", dir);
    assert_int_equal(symlink("loop1", q), 0);
    assert_int_equal(fdt_write_file_atomic(p, "x", 1, &e), -1);
    fdt_remove_tree(dir);
}

/* A FIFO with a reader and a descriptor (/dev/fd/N, /dev/stdout) are written in place; a
 * reader that went away is EPIPE, an error, not SIGPIPE. */
static void test_output_streams(void **state)
{
    (void)state;
    char dir[4096], p[4200];
    scratch(dir, sizeof dir);
    snprintf(p, sizeof p, "%s/fifo", dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the reader: what it read back through the pipe */
        char buf[64] = {0};
        FILE *f = fopen(p, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        _exit(write(fds[1], buf, n) == (ssize_t)n ? 0 : 1);
    }
    close(fds[1]);
    fdt_err e;
    assert_int_equal(fdt_write_file_atomic(p, "through", 7, &e), 0);
    char got[64] = {0};
    assert_int_equal(read(fds[0], got, sizeof got - 1), 7);
    assert_string_equal(got, "through");
    int status;
    waitpid(pid, &status, 0);
    close(fds[0]);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));

    fdt_out_path o;
    assert_int_equal(fdt_output_resolve("/dev/stdout", &o, &e), 0);
    assert_int_equal(o.kind, FDT_OUT_FD);
    assert_int_equal(o.fd, 1);
    assert_int_equal(pipe(fds), 0);
    char fdpath[64];
    snprintf(fdpath, sizeof fdpath, "/dev/fd/%d", fds[1]);
    assert_int_equal(fdt_write_file_atomic(fdpath, "fd", 2, &e), 0);
    memset(got, 0, sizeof got);
    assert_int_equal(read(fds[0], got, sizeof got - 1), 2);
    assert_string_equal(got, "fd");
    close(fds[0]); /* no reader: EPIPE */
    assert_int_equal(fdt_write_file_atomic(fdpath, "fd", 2, &e), -1);
    assert_non_null(strstr(e.msg, "Broken pipe"));
    assert_int_equal(fdt_output_db_path(fdpath, p, sizeof p, &e), -1);
    assert_non_null(strstr(e.msg, "cannot hold a database"));
    close(fds[1]);
    assert_int_equal(fdt_write_file_atomic(fdpath, "fd", 2, &e), -1); /* closed now */
    assert_non_null(strstr(e.msg, "no such open descriptor"));
    fdt_remove_tree(dir);
}

/* Copies of /dev/null and /dev/full made with mknod (root only): written in place, never
 * replaced; the full one is ENOSPC; neither can hold a database. */
static void test_output_devices(void **state)
{
    (void)state;
    if (geteuid() != 0) {
        fprintf(stderr, "test_output_devices: not root, mknod is skipped\n");
        skip();
    }
    char dir[4096], null[4200], full[4200], real[4200];
    scratch(dir, sizeof dir);
    snprintf(null, sizeof null, "%s/null", dir);
    snprintf(full, sizeof full, "%s/full", dir);
    if (mknod(null, S_IFCHR | 0666, makedev(1, 3)) != 0) {
        fprintf(stderr, "test_output_devices: mknod: %s: skipped\n", strerror(errno));
        fdt_remove_tree(dir);
        skip();
    }
    assert_int_equal(mknod(full, S_IFCHR | 0666, makedev(1, 7)), 0);
    fdt_err e;
    assert_int_equal(fdt_write_file_atomic(null, "x", 1, &e), 0);
    assert_int_equal(fdt_write_file_atomic(full, "x", 1, &e), -1);
    assert_non_null(strstr(e.msg, "full: No space left on device"));
    const char *nodes[] = {null, full};
    for (int i = 0; i < 2; i++) {
        struct stat st;
        assert_int_equal(lstat(nodes[i], &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        assert_int_equal(major(st.st_rdev), 1);
        assert_int_equal(minor(st.st_rdev), i ? 7 : 3);
        assert_int_equal(fdt_output_db_path(nodes[i], real, sizeof real, &e), -1);
        assert_non_null(strstr(e.msg, "a character device cannot hold a database"));
    }
    fdt_remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_table),         cmocka_unit_test(test_text_alignment_flags),
        cmocka_unit_test(test_csv_quoting),        cmocka_unit_test(test_csv_specials),
        cmocka_unit_test(test_json_rows),          cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_json_nulls),         cmocka_unit_test(test_json_reals_round_trip),
        cmocka_unit_test(test_nested_document),    cmocka_unit_test(test_misuse_aborts),
        cmocka_unit_test(test_split_columns),      cmocka_unit_test(test_invariant_macros),
        cmocka_unit_test(test_fit_width_and_tee),  cmocka_unit_test(test_output_files),
        cmocka_unit_test(test_fit_keeps_rows_apart),
        cmocka_unit_test(test_fit_uneven_configs), cmocka_unit_test(test_output_links),
        cmocka_unit_test(test_output_streams),
        cmocka_unit_test(test_output_devices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
