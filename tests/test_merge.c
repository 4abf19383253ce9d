/* Tests of the database side of tuning a whole cluster, without a GPU. Shards are written
 * here through the fdt_db API as cluster jobs would (one per node, a GPU model on several
 * nodes, a re-measurement within the noise, a faster result beyond it), then:
 * - `fdtune db merge` copies them by natural keys: the counts are those of the sources, a
 *   second merge of the same shards adds nothing, `query best` and `export` of the merged
 *   file give the bests the noise rule picks from the sources, with their measured numbers;
 *   a run's GPU clocks and driver source go with it, the end ones also into a run an earlier
 *   merge copied while it was going;
 * - a shard whose pages were overwritten, one from a newer fdtune, one whose runs share a
 *   natural key, and the output named as an input are refused by name, and the output stays
 *   as it was (not even created); an older (v1) input is read as it is, untouched;
 * - on a network file system (FDTUNE_TEST_FSTYPE stands in for statfs) a writer uses a
 *   rollback journal and holds the database; a second writer is refused with the advice;
 * - the system database is consulted after the user's by query best, --nearest and export,
 *   each row naming its source, the user's result of a device model and grid shadowing the
 *   system's; --no-system-db and FDTUNE_SYSTEM_DB= leave it out; the search order is
 *   $FDTUNE_SYSTEM_DB, <exe>/../share/fdtune, the source tree; export works with no user
 *   database at all; retune never touches the system database; an AMD GPU nothing was
 *   measured on gets the model's answer (the dry run's first config), marked predicted in
 *   query best, --nearest and export, until a measured result of its architecture exists;
 * - fdt_db_run_begin keeps the natural key of runs unique; `db check` finds what is wrong.
 * Every file lives under a mkdtemp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db_internal.h"
#include "fdt_db.h"
#include "fdt_gen.h"
#include "fdt_merge.h"
#include "json_check.h"
#include "testsql.h"
#include "testutil.h"

#ifndef FDTUNE_BIN
#error "FDTUNE_BIN (the fdtune executable) must be defined by the build"
#endif
#ifndef FDT_SOURCE_DIR
#define FDT_SOURCE_DIR "."
#endif

static char g_dir[256];
static char CFG_A[64], CFG_B[64], CFG_C[64]; /* canonical config texts */

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
}

static size_t count_of(const char *s, const char *part)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, part)); p += strlen(part))
        n++;
    return n;
}

/* ------------------------------------------------------------------ running fdtune */

static void run_bin(tu_result *r, const char *bin, va_list ap)
{
    char *args[64];
    int n = 0;
    args[n++] = (char *)bin;
    for (const char *a; (a = va_arg(ap, const char *)) && n < 63;)
        args[n++] = (char *)a;
    args[n] = NULL;
    tu_run(r, g_dir, args);
}

static void run(tu_result *r, ...)
{
    va_list ap;
    va_start(ap, r);
    run_bin(r, FDTUNE_BIN, ap);
    va_end(ap);
}

static void assert_json(const char *doc)
{
    long at;
    if (json_check(doc, &at))
        fail_msg("not one JSON document (fails near offset %ld):\n%s", at, doc);
}

/* ------------------------------------------------------------------ SQL on the side */

/* One text cell of a query on h (a connection the caller holds). */
static void sql_text(sqlite3 *h, const char *sql, char *buf, size_t n)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

static void copy_file(const char *from, const char *to)
{
    char *bytes;
    size_t n;
    fdt_err e = {""};
    if (fdt_read_file(from, &bytes, &n, &e) || fdt_write_file_atomic(to, bytes, n, &e))
        fail_msg("copy %s: %s", from, e.msg);
    free(bytes);
}

static int same_bytes(const char *a, const char *b)
{
    char *x, *y;
    size_t nx, ny;
    fdt_err e = {""};
    if (fdt_read_file(a, &x, &nx, &e) || fdt_read_file(b, &y, &ny, &e))
        fail_msg("%s", e.msg);
    int same = nx == ny && memcmp(x, y, nx) == 0;
    free(x);
    free(y);
    return same;
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ------------------------------------------------------------------ writing shards */

static fdt_device gpu(const char *name, const char *arch, int cu, const char *uuid)
{
    fdt_device d;
    fdt_device_init(&d);
    snprintf(d.backend, sizeof d.backend, "%s", arch[0] == 's' ? "cuda" : "hip");
    snprintf(d.vendor, sizeof d.vendor, "%s", arch[0] == 's' ? "NVIDIA" : "AMD");
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "%s", arch);
    d.compute_units = cu;
    d.warp_size = arch[0] == 's' ? 32 : 64;
    d.l2_bytes = 50 << 20;
    d.mem_bytes = 80LL << 30;
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    snprintf(d.driver_version, sizeof d.driver_version, "580.65");
    snprintf(d.runtime_version, sizeof d.runtime_version, "13.0");
    snprintf(d.compiler_version, sizeof d.compiler_version, "13.0.48");
    return d;
}

static const fdt_device *h100_a(void)
{
    static fdt_device d;
    d = gpu("NVIDIA H100 80GB HBM3", "sm_90", 132, "GPU-aaaa");
    return &d;
}

static const fdt_device *h100_b(void)
{
    static fdt_device d;
    d = gpu("NVIDIA H100 80GB HBM3", "sm_90", 132, "GPU-bbbb");
    return &d;
}

static const fdt_device *mi250x(void)
{
    static fdt_device d;
    d = gpu("AMD Instinct MI250X", "gfx90a:sramecc+:xnack-", 110, "GPU-mmmm");
    return &d;
}

static fdt_problem prob(fdt_op op, int64_t n)
{
    fdt_problem p = {op, 4, FDT_F32, n, n, n};
    return p;
}

/* One shard as a job on `host` writes it: one run on one device, the evaluations given as
 * (problem, config, median, interquartile range), the tuner's decisions recorded. */
typedef struct meas {
    fdt_problem p;
    const char *cfg;
    double ms, iqr;
} meas;

static void remove_db(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[600];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

/* A fresh file each time (a file of an earlier test is replaced). */
static void shard(const char *path, const fdt_device *d, const char *host, const meas *m,
                  size_t n, int decide)
{
    remove_db(path);
    fdt_db *db = NULL;
    fdt_err e = {""};
    fdt_db_env v;
    fdt_db_env_from_device(d, "0.1.0", &v);
    int64_t dev, env, run;
    if (fdt_db_open(path, FDT_DB_CREATE, &db, &e) || fdt_db_device_id(db, d, &dev, &e) ||
        fdt_db_env_id(db, &v, &env, &e))
        fail_msg("%s: %s", path, e.msg);
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.device_id = dev;
    r.env_id = env;
    r.copy_gbs = 3000;
    snprintf(r.host, sizeof r.host, "%s", host);
    snprintf(r.command, sizeof r.command, "fdtune --gpu auto (test shard)");
    if (fdt_db_run_begin(db, &r, &run, &e))
        fail_msg("%s: %s", path, e.msg);
    for (size_t i = 0; i < n; i++) {
        int64_t pid, id;
        fdt_db_eval ev;
        fdt_db_eval_init(&ev);
        if (fdt_db_problem_id(db, &m[i].p, &pid, &e))
            fail_msg("%s", e.msg);
        ev.run_id = run;
        ev.problem_id = pid;
        snprintf(ev.config, sizeof ev.config, "%s", m[i].cfg);
        ev.time_ms = m[i].ms;
        ev.time_q1_ms = m[i].ms - m[i].iqr / 2;
        ev.time_q3_ms = m[i].ms + m[i].iqr / 2;
        ev.time_min_ms = m[i].ms - m[i].iqr;
        ev.time_max_ms = m[i].ms + m[i].iqr;
        ev.reps = 30;
        ev.gbs = 1000 / m[i].ms;
        if (fdt_db_eval_insert(db, &ev, &id, &e))
            fail_msg("%s: %s", path, e.msg);
        if (decide && fdt_db_best_decide(db, dev, pid, id, 0, "tune: first decision", &e))
            fail_msg("%s", e.msg);
    }
    if (fdt_db_run_finish(db, run, FDT_DB_DONE, &e))
        fail_msg("%s", e.msg);
    fdt_db_close(db);
}

/* The cluster: H100 GPU A on node1 (two problems), again on node2 (a re-measurement of d2x
 * faster only within the noise, which node2's tuner recorded as its best, and a new grid),
 * on node3 (lap faster beyond the noise), another H100 (GPU B) on node4, an MI250X on
 * node5. */
static void write_shards(char paths[5][512])
{
    fdt_problem d2x = prob(FDT_OP_D2X, 128), lap = prob(FDT_OP_LAP, 128),
                lap2 = prob(FDT_OP_LAP, 256);
    const meas s1[] = {{d2x, CFG_A, 1.00, 0.01}, {d2x, CFG_B, 0.90, 0.01}, {lap, CFG_A, 2.0, 0.02}};
    const meas s2[] = {{d2x, CFG_C, 0.895, 0.01}, {lap2, CFG_A, 3.0, 0.03}};
    const meas s3[] = {{lap, CFG_B, 1.5, 0.01}};
    const meas s4[] = {{d2x, CFG_C, 0.80, 0.01}};
    const meas s5[] = {{d2x, CFG_A, 1.2, 0.01}};
    const char *names[5] = {"s1.db", "s2.db", "s3.db", "s4.db", "s5.db"};
    for (int i = 0; i < 5; i++)
        path_in(paths[i], sizeof paths[i], names[i]);
    shard(paths[0], h100_a(), "node1", s1, 3, 0);
    shard(paths[1], h100_a(), "node2", s2, 2, 1);
    shard(paths[2], h100_a(), "node3", s3, 1, 0);
    shard(paths[3], h100_b(), "node4", s4, 1, 1);
    shard(paths[4], mi250x(), "node5", s5, 1, 0);
}

static fdt_db_counts counts(const char *path)
{
    fdt_db *db = NULL;
    fdt_err e = {""};
    fdt_db_counts c;
    if (fdt_db_open(path, FDT_DB_READONLY, &db, &e) || fdt_db_count(db, &c, &e))
        fail_msg("%s: %s", path, e.msg);
    fdt_db_close(db);
    return c;
}

static void assert_counts(const fdt_db_counts *a, const fdt_db_counts *b)
{
    if (memcmp(a, b, sizeof *a))
        fail_msg("counts differ: runs %lld/%lld, evaluations %lld/%lld, decisions %lld/%lld, "
                 "devices %lld/%lld, configs %lld/%lld",
                 (long long)a->runs, (long long)b->runs, (long long)a->evaluations,
                 (long long)b->evaluations, (long long)a->decisions, (long long)b->decisions,
                 (long long)a->devices, (long long)b->devices, (long long)a->configs,
                 (long long)b->configs);
}

/* ------------------------------------------------------------------ merge */

static void test_merge_idempotent(void **state)
{
    (void)state;
    char s[5][512], out[512];
    write_shards(s);
    path_in(out, sizeof out, "merged.db");
    tu_result r;
    run(&r, "db", "merge", "-o", out, s[0], s[1], s[2], s[3], s[4], "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"created\": true");
    tu_result_free(&r);

    /* Rows by natural key: 3 devices (two H100s, one MI250X), 1 environment (the shards'
     * drivers, runtimes and compilers are the same text), 3 problems, 3 configs, 5 runs, 8
     * evaluations. */
    fdt_db_counts c = counts(out);
    assert_int_equal(c.devices, 3);
    assert_int_equal(c.environments, 1);
    assert_int_equal(c.problems, 3);
    assert_int_equal(c.configs, 3);
    assert_int_equal(c.runs, 5);
    assert_int_equal(c.evaluations, 8);
    /* The measurements are the sources' own: start times, hosts and medians kept. */
    assert_int_equal(sql_int(out, "SELECT count(*) FROM runs WHERE host LIKE 'node%' AND"
                                  " status = 'done'"),
                     5);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM evaluations WHERE time_ms = 0.895"), 1);

    /* Again, the same shards and one of them twice: nothing is added. */
    run(&r, "db", "merge", "-o", out, s[0], s[1], s[2], s[3], s[4], s[1], NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    fdt_db_counts again = counts(out);
    assert_counts(&c, &again);
    assert_int_equal(again.evaluations, 8);

    /* In another order into a fresh file: the same rows. */
    char out2[512];
    path_in(out2, sizeof out2, "merged2.db");
    run(&r, "db", "merge", "-o", out2, s[4], s[3], s[2], s[1], s[0], NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    fdt_db_counts c2 = counts(out2);
    assert_int_equal(c2.evaluations, c.evaluations);
    assert_int_equal(c2.runs, c.runs);
}

/* The bests of the merged file: GPU A's d2x stays CFG_B (node2's CFG_C is faster only within
 * the noise), its lap is node3's CFG_B (faster beyond the noise), GPU B and the MI250X keep
 * their own; query best and export say so with the sources' numbers. */
static void test_merge_best_query_export(void **state)
{
    (void)state;
    char s[5][512], out[512];
    write_shards(s);
    path_in(out, sizeof out, "best.db");
    tu_result r;
    run(&r, "db", "merge", "-o", out, s[0], s[1], s[2], s[3], s[4], NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    /* The decisions of the merge name the shard and the rule. */
    assert_int_equal(sql_int(out, "SELECT count(*) FROM best_decisions WHERE reason ="
                                  " 'merge: s3.db: faster beyond noise'"),
                     1);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM best_decisions WHERE reason ="
                                  " 'merge: s2.db: kept the best, not beaten beyond noise'"),
                     1);

    run(&r, "query", "best", "--db", out, "--gpu", "GPU", "--csv", "--no-system-db", NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    run(&r, "query", "best", "--db", out, "--json", "--no-system-db", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_int_equal(count_of(r.out, "\"source\": \"user\""), 5);
    /* (A, d2x): CFG_B at 0.9; (A, lap 128): CFG_B at 1.5; (A, lap 256): CFG_A at 3; B and
     * the MI250X their own. Each result is the object from its uuid to its closing brace. */
    const char *pairs[][3] = {
        {"GPU-aaaa", "\"op\": \"d2x\", \"R\": 4, \"precision\": \"f32\", \"nx\": 128",
         "\"median_ms\": 0.9,"},
        {"GPU-aaaa", "\"op\": \"lap\", \"R\": 4, \"precision\": \"f32\", \"nx\": 128",
         "\"median_ms\": 1.5,"},
        {"GPU-aaaa", "\"op\": \"lap\", \"R\": 4, \"precision\": \"f32\", \"nx\": 256",
         "\"median_ms\": 3,"},
        {"GPU-bbbb", "\"op\": \"d2x\"", "\"median_ms\": 0.8,"},
        {"GPU-mmmm", "\"op\": \"d2x\"", "\"median_ms\": 1.2,"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        const char *p = r.out;
        int found = 0;
        while ((p = strstr(p, pairs[i][0]))) {
            const char *end = strchr(p, '}');
            char obj[2048];
            snprintf(obj, sizeof obj, "%.*s", (int)(end - p), p);
            if (strstr(obj, pairs[i][1]) && strstr(obj, pairs[i][2]))
                found = 1;
            p = end;
        }
        if (!found)
            fail_msg("no best %s %s with median %s in:\n%s", pairs[i][0], pairs[i][1],
                     pairs[i][2], r.out);
    }
    assert_lacks(r.out, "\"median_ms\": 0.895");
    tu_result_free(&r);

    /* Export: one result per device model and grid; GPU B's d2x (0.8) is the H100's fastest. */
    run(&r, "export", "--db", out, "--format", "json", "--no-system-db", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"median_ms\": 0.8,");
    assert_has(r.out, "\"median_ms\": 1.5,");
    assert_has(r.out, "\"median_ms\": 1.2,");
    assert_lacks(r.out, "\"median_ms\": 0.9,");
    assert_lacks(r.out, "\"median_ms\": 2,");
    assert_has(r.out, "\"source\": \"user\"");
    assert_has(r.out, "\"system_database\": null");
    tu_result_free(&r);
}

/* --best-only: one result per device model and problem (GPU A's d2x CFG_B at 0.90 is older
 * than GPU B's 0.80 and is beaten beyond noise, so B's stays), only what they refer to, a
 * rollback journal and the metadata of how it was made. */
static void test_merge_best_only(void **state)
{
    (void)state;
    char s[5][512], out[512];
    write_shards(s);
    path_in(out, sizeof out, "system.db");
    fdt_merge_opts o;
    memset(&o, 0, sizeof o);
    const char *in[5] = {s[0], s[1], s[2], s[3], s[4]};
    const char *meta[1] = {"source=test shards"};
    o.out = out;
    o.in = in;
    o.nin = 5;
    o.best_only = 1;
    o.meta = meta;
    o.nmeta = 1;
    o.fdtune_version = "0.1.0";
    fdt_merge_report rep;
    fdt_err e = {""};
    if (fdt_merge(&o, &rep, &e) != FDT_STATUS_OK)
        fail_msg("merge: %s", e.msg);
    assert_int_equal(rep.after.evaluations, 4); /* H100 d2x, lap 128, lap 256; MI250X d2x */
    assert_int_equal(rep.after.devices, 3);
    assert_int_equal(rep.pruned.evaluations, 4);
    fdt_merge_report_free(&rep);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM evaluations WHERE time_ms = 0.8"), 1);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM evaluations WHERE time_ms = 0.9"), 0);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM runs"), 4);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM metadata WHERE key = 'source' AND"
                                  " value = 'test shards'"),
                     1);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM metadata WHERE key IN ('made',"
                                  " 'made_by', 'result_generators', 'inputs')"),
                     4);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", out);
    assert_false(exists(wal));
    sqlite3 *h;
    char mode[32];
    assert_int_equal(sqlite3_open_v2(out, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sql_text(h, "PRAGMA journal_mode", mode, sizeof mode);
    sqlite3_close(h);
    assert_string_equal(mode, "delete");
}

/* Refusals: each names the file and leaves the output as it was, or never creates it. */
static void test_merge_refusals(void **state)
{
    (void)state;
    char s[5][512], out[512], fresh[512], bad[512], newer[512], clash[512];
    write_shards(s);
    path_in(out, sizeof out, "kept.db");
    path_in(fresh, sizeof fresh, "never.db");
    tu_result r;
    run(&r, "db", "merge", "-o", out, s[0], NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    char before[512];
    path_in(before, sizeof before, "kept-before.db");
    copy_file(out, before);

    /* A copy of a shard with a page overwritten. */
    path_in(bad, sizeof bad, "corrupt-shard.db");
    copy_file(s[0], bad);
    FILE *f = fopen(bad, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, 4096 * 3 + 8, SEEK_SET), 0);
    for (int i = 0; i < 3000; i++)
        fputc(0xA5, f);
    fclose(f);
    /* A shard from a newer fdtune. */
    path_in(newer, sizeof newer, "newer-shard.db");
    copy_file(s[1], newer);
    sql_exec(newer, "PRAGMA user_version = 99");
    /* A shard whose two runs share a natural key (written by hand). */
    path_in(clash, sizeof clash, "clash-shard.db");
    copy_file(s[2], clash);
    sql_exec(clash, "INSERT INTO runs (started, finished, status, kind, command, device_id,"
                    " env_id, recipe, recipe_hash, strategy, budget, seed, host, pid, notes)"
                    " SELECT started, finished, status, kind, command, device_id, env_id,"
                    " recipe, recipe_hash, strategy, budget, seed, host, pid, notes FROM runs");

    /* A shard whose best decision names a failed evaluation (past the schema's trigger). */
    char baddec[512];
    path_in(baddec, sizeof baddec, "bad-decision-shard.db");
    copy_file(s[2], baddec);
    sql_exec(baddec, "INSERT INTO evaluations (run_id, problem_id, config_id, device_id, env_id,"
                     " status, stage, message) SELECT run_id, problem_id, config_id, device_id,"
                     " env_id, 'wrong', 'probe', 'max error' FROM evaluations;"
                     " DROP TRIGGER best_decisions_valid;"
                     " INSERT INTO best_decisions (device_id, problem_id, eval_id, reason)"
                     " SELECT device_id, problem_id, max(id), 'by hand' FROM evaluations");

    const struct {
        const char *path, *why;
    } cases[] = {{bad, "integrity problem"},
                 {newer, "database schema v99 is newer than this fdtune"},
                 {clash, "share one natural key"},
                 {baddec, "do not name an ok full evaluation"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run(&r, "db", "merge", "-o", out, s[1], cases[i].path, s[3], NULL);
        expect_status(&r, 4);
        assert_has(r.err, "input refused");
        assert_has(r.err, cases[i].path);
        assert_has(r.err, cases[i].why);
        tu_result_free(&r);
        assert_true(same_bytes(out, before));
        run(&r, "db", "merge", "-o", fresh, cases[i].path, NULL);
        expect_status(&r, 4);
        tu_result_free(&r);
        assert_false(exists(fresh));
    }
    /* The output among the inputs: a usage error. */
    run(&r, "db", "merge", "-o", out, s[1], out, NULL);
    expect_status(&r, 2);
    assert_has(r.err, "is the output itself");
    tu_result_free(&r);
    assert_true(same_bytes(out, before));
    run(&r, "db", "merge", s[1], NULL);
    expect_status(&r, 2);
    tu_result_free(&r);
}

/* A new shard at path (any file there is removed first) holding the H100 and its environment,
 * whose ids go to dev and env: open, for the caller to fill and close. */
static fdt_db *new_shard(const char *path, int64_t *dev, int64_t *env)
{
    fdt_db *db = NULL;
    fdt_err e = {""};
    const fdt_device *d = h100_a();
    fdt_db_env v;
    fdt_db_env_from_device(d, "0.1.0", &v);
    remove_db(path);
    if (fdt_db_open(path, FDT_DB_CREATE, &db, &e) || fdt_db_device_id(db, d, dev, &e) ||
        fdt_db_env_id(db, &v, env, &e))
        fail_msg("%s", e.msg);
    return db;
}

/* A shard copied while its run was still going, merged, then merged again once the run has
 * ended and measured more: the run is the same row, now done, with the new evaluation. */
static void test_merge_running_shard(void **state)
{
    (void)state;
    char path[512], out[512];
    path_in(path, sizeof path, "running.db");
    path_in(out, sizeof out, "from-running.db");
    int64_t dev, env, rid, pid, id;
    fdt_db *db = new_shard(path, &dev, &env);
    fdt_err e = {""};
    fdt_problem p = prob(FDT_OP_D2X, 128);
    if (fdt_db_problem_id(db, &p, &pid, &e))
        fail_msg("%s", e.msg);
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.device_id = dev;
    r.env_id = env;
    assert_int_equal(fdt_db_run_begin(db, &r, &rid, &e), 0);
    fdt_db_eval ev;
    fdt_db_eval_init(&ev);
    ev.run_id = rid;
    ev.problem_id = pid;
    ev.time_ms = 1.0;
    snprintf(ev.config, sizeof ev.config, "%s", CFG_A);
    assert_int_equal(fdt_db_eval_insert(db, &ev, &id, &e), 0);
    tu_result t;
    run(&t, "db", "merge", "-o", out, path, NULL);
    expect_status(&t, 0);
    tu_result_free(&t);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM runs WHERE status = 'running' AND"
                                  " copy_gbs IS NULL"),
                     1);
    /* A best-only file is final (the system database): the run is closed, as interrupted at
     * its last evaluation, and says why. */
    char final_out[512];
    path_in(final_out, sizeof final_out, "from-running-best.db");
    run(&t, "db", "merge", "--best-only", "-o", final_out, path, "--json", NULL);
    expect_status(&t, 0);
    assert_has(t.out, "\"runs_closed\": 1");
    tu_result_free(&t);
    assert_int_equal(sql_int(final_out, "SELECT count(*) FROM runs WHERE status = 'interrupted'"
                                        " AND finished = (SELECT created FROM evaluations) AND"
                                        " notes LIKE '%still running when merged%'"),
                     1);
    assert_int_equal(fdt_db_run_set_copy(db, rid, 2900, &e), 0);
    snprintf(ev.config, sizeof ev.config, "%s", CFG_B);
    ev.time_ms = 0.8;
    assert_int_equal(fdt_db_eval_insert(db, &ev, &id, &e), 0);
    assert_int_equal(fdt_db_run_finish(db, rid, FDT_DB_DONE, &e), 0);
    fdt_db_close(db);
    run(&t, "db", "merge", "-o", out, path, NULL);
    expect_status(&t, 0);
    tu_result_free(&t);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM runs WHERE status = 'done' AND"
                                  " finished IS NOT NULL AND copy_gbs = 2900"),
                     1);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM evaluations"), 2);
    /* The faster one beats the first beyond noise: the merge decided so. */
    assert_int_equal(sql_int(out, "SELECT count(*) FROM best_decisions b JOIN evaluations x"
                                  " ON x.id = b.eval_id WHERE x.time_ms = 0.8 AND b.id ="
                                  " (SELECT max(id) FROM best_decisions)"),
                     1);
}

/* An H100's clocks (maxima 1980 and 2619 MHz) as the tuner records them (testsql.c). */
static fdt_clocks clocks(int sm, int mem, uint64_t reasons)
{
    return sql_clocks(sm, 1980, mem, 2619, reasons);
}

static void assert_clock(const char *what, const fdt_clocks *got, const fdt_clocks *want)
{
    if (got->known != want->known || (want->known &&
        (got->sm_mhz != want->sm_mhz || got->mem_mhz != want->mem_mhz ||
         got->sm_max_mhz != want->sm_max_mhz || got->mem_max_mhz != want->mem_max_mhz ||
         got->reasons_known != want->reasons_known || got->reasons != want->reasons)))
        fail_msg("%s clocks: known %d, sm %d of %d, mem %d of %d MHz, reasons %d:%#llx; want "
                 "known %d, sm %d of %d, mem %d of %d MHz, reasons %d:%#llx", what, got->known,
                 got->sm_mhz, got->sm_max_mhz, got->mem_mhz, got->mem_max_mhz,
                 got->reasons_known, (unsigned long long)got->reasons, want->known,
                 want->sm_mhz, want->sm_max_mhz, want->mem_mhz, want->mem_max_mhz,
                 want->reasons_known, (unsigned long long)want->reasons);
}

/* The clocks and driver source of the one run of path, as fdt_db_run_clocks reads them. */
static void assert_run_clocks(const char *path, const fdt_clocks *start, const fdt_clocks *end,
                              const char *source)
{
    fdt_db *db = NULL;
    fdt_err e = {""};
    fdt_clocks s, t;
    char src[16];
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs"), 1);
    if (fdt_db_open(path, FDT_DB_READONLY, &db, &e) ||
        fdt_db_run_clocks(db, sql_int(path, "SELECT id FROM runs"), &s, &t, src, sizeof src, &e))
        fail_msg("%s: %s", path, e.msg);
    fdt_db_close(db);
    assert_string_equal(src, source);
    assert_clock("start", &s, start);
    assert_clock("end", &t, end);
}

/* The GPU's clocks of a run (schema v5) go with it: a shard copied while its run was going
 * gives the output the start clocks and the driver's source; merged again once the run has
 * ended, the end clocks fill the run the output holds; merged into a fresh file, all come at
 * once. Read back through the API: the very values recorded. A v4 copy of the shard (before
 * the clocks) is merged with none. */
static void test_merge_run_clocks(void **state)
{
    (void)state;
    char path[512], out[512], fresh[512];
    path_in(path, sizeof path, "clocks.db");
    path_in(out, sizeof out, "from-clocks.db");
    path_in(fresh, sizeof fresh, "fresh-clocks.db");
    int64_t dev, env, rid;
    fdt_db *db = new_shard(path, &dev, &env);
    fdt_err e = {""};
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.device_id = dev;
    r.env_id = env;
    assert_int_equal(fdt_db_run_begin(db, &r, &rid, &e), 0);
    const fdt_clocks start = clocks(1980, 2619, 0),
                     end = clocks(1755, 2619, FDT_THROTTLE_SW_POWER_CAP | FDT_THROTTLE_SW_THERMAL);
    fdt_clocks none;
    fdt_clocks_init(&none);
    if (fdt_db_run_set_clocks(db, rid, FDT_DB_CLOCKS_START, "nvml", &start, &e))
        fail_msg("%s", e.msg);
    tu_result t;
    run(&t, "db", "merge", "-o", out, path, NULL);
    expect_status(&t, 0);
    tu_result_free(&t);
    assert_run_clocks(out, &start, &none, "nvml");

    if (fdt_db_run_set_clocks(db, rid, FDT_DB_CLOCKS_END, NULL, &end, &e) ||
        fdt_db_run_finish(db, rid, FDT_DB_DONE, &e))
        fail_msg("%s", e.msg);
    fdt_db_close(db);
    run(&t, "db", "merge", "-o", out, path, NULL);
    expect_status(&t, 0);
    tu_result_free(&t);
    assert_int_equal(sql_int(out, "SELECT count(*) FROM runs WHERE status = 'done'"), 1);
    assert_run_clocks(out, &start, &end, "nvml");

    run(&t, "db", "merge", "-o", fresh, path, NULL);
    expect_status(&t, 0);
    tu_result_free(&t);
    assert_run_clocks(fresh, &start, &end, "nvml");

    /* The same shard as a v4 fdtune wrote it (no clocks columns), read as it is: the run,
     * with no clocks and no driver source. */
    char v4[512], from_v4[512];
    path_in(v4, sizeof v4, "clocks-v4.db");
    path_in(from_v4, sizeof from_v4, "from-clocks-v4.db");
    copy_file(path, v4);
    sql_exec(v4, DROP_V5 "PRAGMA user_version = 4");
    run(&t, "db", "merge", "-o", from_v4, v4, NULL);
    expect_status(&t, 0);
    tu_result_free(&t);
    assert_int_equal(sql_int(v4, "PRAGMA user_version"), 4);
    assert_run_clocks(from_v4, &none, &none, "");
}

/* A v1 file (recorded on an H100) is read as it is: merged, untouched. */
static void test_merge_v1_input(void **state)
{
    (void)state;
    char from[1024], v1[512], out[512], before[512];
    snprintf(from, sizeof from, "%s/tests/data/h100-v1.db", FDT_SOURCE_DIR);
    path_in(v1, sizeof v1, "v1.db");
    path_in(before, sizeof before, "v1-before.db");
    path_in(out, sizeof out, "from-v1.db");
    copy_file(from, v1);
    copy_file(from, before);
    tu_result r;
    run(&r, "db", "merge", "-o", out, v1, NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    assert_true(same_bytes(v1, before));
    assert_int_equal(sql_int(out, "SELECT count(*) FROM evaluations"),
                     sql_int(v1, "SELECT count(*) FROM evaluations"));
    assert_int_equal(sql_int(out, "PRAGMA user_version"), fdt_db_schema_version());
    /* v1 has no decisions: the merge decided each pair, the smallest median. */
    assert_int_equal(sql_int(out, "SELECT count(*) FROM best_decisions WHERE reason LIKE"
                                  " 'merge: v1.db: first decision'"),
                     2);
    /* v1 recorded no clocks: its runs have none in the output (NULL, not made-up values). */
    assert_int_equal(sql_int(out, "SELECT count(*) FROM runs WHERE coalesce(driver_source,"
                                  " sm_max_mhz, mem_max_mhz, sm_mhz_start, mem_mhz_start,"
                                  " throttle_start, sm_mhz_end, mem_mhz_end, throttle_end)"
                                  " IS NULL"),
                     sql_int(v1, "SELECT count(*) FROM runs"));
}

/* ------------------------------------------------------------------ run keys, db check */

static void test_run_key_unique(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "runs.db");
    const meas one[] = {{prob(FDT_OP_D2X, 128), CFG_A, 1.0, 0.01}};
    shard(path, h100_a(), "", one, 1, 0);
    fdt_db *db = NULL;
    fdt_err e = {""};
    assert_int_equal(fdt_db_open(path, FDT_DB_READWRITE, &db, &e), 0);
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.device_id = 1;
    r.env_id = 1;
    for (int i = 0; i < 5; i++) {
        int64_t id;
        assert_int_equal(fdt_db_run_begin(db, &r, &id, &e), 0);
    }
    fdt_db_close(db);
    /* Six runs of one process, device, environment and kind: six start times. */
    assert_int_equal(sql_int(path, "SELECT count(DISTINCT started) FROM runs"), 6);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs"), 6);
}

static void test_db_check(void **state)
{
    (void)state;
    char s[5][512], out[512];
    write_shards(s);
    path_in(out, sizeof out, "check.db");
    tu_result r;
    run(&r, "db", "merge", "-o", out, s[0], s[1], s[2], s[3], s[4], NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    run(&r, "db", "check", out, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "integrity     ok");
    char schema[64];
    snprintf(schema, sizeof schema, "schema        v%d", fdt_db_schema_version());
    assert_has(r.out, schema);
    tu_result_free(&r);
    run(&r, "db", "check", out, "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"healthy\": true");
    assert_has(r.out, "\"evaluations\": 8");
    assert_int_equal(count_of(r.out, "\"decided\": true"), 5);
    tu_result_free(&r);

    /* An evaluation of a run that is not there, a decision naming a wrong evaluation. */
    sql_exec(out, "PRAGMA foreign_keys = OFF; INSERT INTO evaluations (run_id, problem_id,"
                  " config_id, device_id, env_id, status, stage, message) VALUES (999, 1, 1,"
                  " 1, 1, 'crashed', 'full', 'orphan');"
                  " DROP TRIGGER best_decisions_valid;"
                  " INSERT INTO best_decisions (device_id, problem_id, eval_id, reason)"
                  " VALUES (1, 1, (SELECT max(id) FROM evaluations), 'by hand')");
    run(&r, "db", "check", out, "--json", NULL);
    expect_status(&r, 1);
    assert_has(r.out, "\"healthy\": false");
    assert_has(r.out, "\"fk_violations\": 1");
    assert_has(r.out, "\"bad_decisions\": 1");
    tu_result_free(&r);
}

/* ------------------------------------------------------------------ network file systems */

static void test_network_fs(void **state)
{
    (void)state;
    char path[512], wal[600];
    path_in(path, sizeof path, "nfs/sub/tune.db");
    snprintf(wal, sizeof wal, "%s-wal", path);
    fdt_err e = {""};
    char fs[16];
    int network = -1;
    /* The real call works on a path that does not exist yet (its nearest directory). */
    unsetenv("FDTUNE_TEST_FSTYPE");
    assert_int_equal(fdt_db_fs_kind(path, fs, sizeof fs, &network, &e), 0);
    setenv("FDTUNE_TEST_FSTYPE", "nfs", 1);
    assert_int_equal(fdt_db_fs_kind(path, fs, sizeof fs, &network, &e), 0);
    assert_int_equal(network, 1);
    assert_string_equal(fs, "nfs");

    fdt_db *a = NULL, *b = NULL;
    if (fdt_db_open(path, FDT_DB_CREATE, &a, &e))
        fail_msg("%s", e.msg);
    char mode[32];
    sql_text(fdt_dbi_handle(a), "PRAGMA journal_mode", mode, sizeof mode);
    assert_string_equal(mode, "delete");
    sql_text(fdt_dbi_handle(a), "PRAGMA locking_mode", mode, sizeof mode);
    assert_string_equal(mode, "exclusive");
    int64_t cfg;
    assert_int_equal(fdt_db_config_id(a, CFG_A, &cfg, &e), 0);
    assert_false(exists(wal));
    /* A second writer, here or in another process, is refused with the advice. */
    assert_int_equal(fdt_db_open(path, FDT_DB_READWRITE, &b, &e), -1);
    assert_null(b);
    assert_has(e.msg, "network file system (nfs)");
    assert_has(e.msg, "fdtune db merge");
    /* A reader too, with what to do instead. */
    assert_int_equal(fdt_db_open(path, FDT_DB_READONLY, &b, &e), -1);
    assert_has(e.msg, "query it when that run ends, or query a copy");
    tu_result r;
    setenv("FDTUNE_TEST_FSTYPE", "lustre", 1);
    run(&r, "db", "merge", "-o", path, FDT_SOURCE_DIR "/tests/data/h100-replay.db", NULL);
    expect_status(&r, 4);
    assert_has(r.err, "network file system (lustre)");
    tu_result_free(&r);
    fdt_db_close(a);
    /* Once the first is gone, the next one writes. */
    if (fdt_db_open(path, FDT_DB_READWRITE, &b, &e))
        fail_msg("%s", e.msg);
    fdt_db_close(b);
    run(&r, "db", "merge", "-o", path, FDT_SOURCE_DIR "/tests/data/h100-replay.db", NULL);
    expect_status(&r, 0);
    tu_result_free(&r);
    assert_false(exists(wal));
    /* the recording's runs, every one */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs"),
                     sql_int(FDT_SOURCE_DIR "/tests/data/h100-replay.db",
                             "SELECT count(*) FROM runs"));

    /* On a local file system the same file goes back to WAL. */
    setenv("FDTUNE_TEST_FSTYPE", "local", 1);
    if (fdt_db_open(path, FDT_DB_READWRITE, &a, &e))
        fail_msg("%s", e.msg);
    sql_text(fdt_dbi_handle(a), "PRAGMA journal_mode", mode, sizeof mode);
    assert_string_equal(mode, "wal");
    fdt_db_close(a);
    /* A name fdtune does not know is an error, not a guess. */
    setenv("FDTUNE_TEST_FSTYPE", "zfs-over-carrier-pigeon", 1);
    assert_int_equal(fdt_db_open(path, FDT_DB_READWRITE, &a, &e), -1);
    assert_has(e.msg, "FDTUNE_TEST_FSTYPE=zfs-over-carrier-pigeon");
    unsetenv("FDTUNE_TEST_FSTYPE");
}

/* ------------------------------------------------------------------ the system database */

/* A user database: the same H100 model as the recorded system database (another UUID), with
 * d2x 512^3 (a slot the system database holds too) and d2y 128^3 (not). */
static void user_db(char *path, size_t n)
{
    snprintf(path, n, "%s/user/fdtune.db", g_dir);
    const meas m[] = {{prob(FDT_OP_D2X, 512), CFG_C, 0.5, 0.005},
                      {prob(FDT_OP_D2Y, 128), CFG_A, 0.06, 0.001}};
    if (!exists(path))
        shard(path, h100_b(), "", m, 2, 1);
}

/* The system database of the tests: the H100 recording, best only. */
static void system_db(char *path, size_t n)
{
    snprintf(path, n, "%s/sys/system.db", g_dir);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/sys", g_dir);
    mkdir(dir, 0755);
    fdt_merge_opts o;
    memset(&o, 0, sizeof o);
    const char *in[1] = {FDT_SOURCE_DIR "/tests/data/h100-replay.db"};
    o.out = path;
    o.in = in;
    o.nin = 1;
    o.best_only = 1;
    fdt_merge_report rep = {0};
    fdt_err e = {""};
    if (!exists(path) && fdt_merge(&o, &rep, &e) != FDT_STATUS_OK)
        fail_msg("system db: %s", e.msg);
    fdt_merge_report_free(&rep);
}

/* Whether the database at path holds results of a generator other than this fdtune's. */
static int older_generator(const char *path)
{
    char q[200];
    snprintf(q, sizeof q, "SELECT count(*) FROM environments WHERE generator <> '%s'",
             fdt_gen_fingerprint());
    return sql_int(path, q) > 0;
}

static void test_system_order_and_source(void **state)
{
    (void)state;
    char user[512], sys[512];
    user_db(user, sizeof user);
    system_db(sys, sizeof sys);
    setenv("FDTUNE_SYSTEM_DB", sys, 1);
    tu_result r;
    run(&r, "query", "best", "--db", user, "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    /* The user's two results, then the system's: the recording's 30 problems but d2x 512^3,
     * which the user's shadows. */
    assert_int_equal(count_of(r.out, "\"source\": \"user\""), 2);
    assert_int_equal(count_of(r.out, "\"source\": \"system\""), 29);
    assert_has(r.out, "\"system_database\": \"");
    const char *u = strstr(r.out, "\"source\": \"user\"");
    const char *s = strstr(r.out, "\"source\": \"system\"");
    assert_true(u && s && u < s);
    assert_has(s, "\"op\": \"d2y\", \"R\": 4, \"precision\": \"f32\", \"nx\": 512");
    assert_lacks(s, "\"op\": \"d2x\", \"R\": 4, \"precision\": \"f32\", \"nx\": 512");
    /* Results whose kernel may not be the one measured are marked: the system's are exactly
     * when the recording's generator is not this one's (the recording records no code). */
    if (older_generator(sys))
        assert_has(r.err, "may not have been measured with the kernel this fdtune");
    else
        assert_lacks(r.err, "may not have been measured with the kernel this fdtune");
    tu_result_free(&r);

    run(&r, "query", "best", "--db", user, "--csv", NULL);
    expect_status(&r, 0);
    assert_true(strncmp(r.out, "source,device,", 14) == 0);
    assert_int_equal(count_of(r.out, "\nuser,"), 2);
    assert_int_equal(count_of(r.out, "\nsystem,"), 29);
    tu_result_free(&r);
    run(&r, "query", "best", "--db", user, NULL);
    expect_status(&r, 0);
    assert_true(strncmp(r.out, "source", 6) == 0);
    tu_result_free(&r);

    /* Off: --no-system-db, or FDTUNE_SYSTEM_DB empty. */
    run(&r, "query", "best", "--db", user, "--json", "--no-system-db", NULL);
    expect_status(&r, 0);
    assert_int_equal(count_of(r.out, "\"source\": \"system\""), 0);
    assert_has(r.out, "\"system_database\": null");
    tu_result_free(&r);
    setenv("FDTUNE_SYSTEM_DB", "", 1);
    run(&r, "query", "best", "--db", user, "--json", NULL);
    expect_status(&r, 0);
    assert_int_equal(count_of(r.out, "\"source\": \"system\""), 0);
    tu_result_free(&r);
    /* A missing file named by FDTUNE_SYSTEM_DB is an error, not silence. */
    char none[600];
    snprintf(none, sizeof none, "%s/sys/none.db", g_dir);
    setenv("FDTUNE_SYSTEM_DB", none, 1);
    run(&r, "query", "best", "--db", user, NULL);
    expect_status(&r, 4);
    assert_has(r.err, "FDTUNE_SYSTEM_DB=");
    tu_result_free(&r);
    setenv("FDTUNE_SYSTEM_DB", sys, 1);

    /* --nearest ranks the candidates of both: the system's exact grid beats the user's other
     * grid of d2y; the user's d2x 512^3 answers for its own slot. */
    run(&r, "query", "best", "--db", user, "--nearest", "--gpu", "H100", "--op", "d2y", "--R",
        "4", "--grid", "512^3", "--json", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"fallback\": \"exact\"");
    assert_has(r.out, "\"source\": \"system\"");
    tu_result_free(&r);
    run(&r, "query", "best", "--db", user, "--nearest", "--gpu", "H100", "--op", "d2x", "--R",
        "4", "--grid", "512^3", "--json", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"fallback\": \"exact\"");
    assert_has(r.out, "\"source\": \"user\"");
    assert_has(r.out, CFG_C);
    tu_result_free(&r);
    run(&r, "query", "best", "--db", user, "--nearest", "--gpu", "H100", "--op", "d2y", "--R",
        "4", "--grid", "512^3", "--json", "--no-system-db", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"fallback\": \"grid\"");
    tu_result_free(&r);

    /* Export of f32 512^3 d2x and d2y: both sources, the user's result for the shared slot. */
    run(&r, "export", "--db", user, "--gpu", "H100", "--op", "d2x,d2y", "--precision", "f32",
        "--grid", "512^3", "--format", "json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"system_runs\": [7]"); /* the recording's d2y f32 512^3 */
    assert_has(r.out, "\"median_ms\": 0.5,");
    /* The device and the two variants (constant, runtime) of its one result. */
    assert_int_equal(count_of(r.out, "\"source\": \"system\""), 3);
    if (older_generator(sys))
        assert_has(r.err, "may not have been measured with the kernel this fdtune");
    else
        assert_lacks(r.err, "may not have been measured with the kernel this fdtune");
    tu_result_free(&r);
    run(&r, "export", "--db", user, "--gpu", "H100", NULL);
    expect_status(&r, 0);
    assert_has(r.out, " *   system database: ");
    assert_has(r.out, "of the system database, evaluated");
    tu_result_free(&r);
    unsetenv("FDTUNE_SYSTEM_DB");
}

/* Where the system database is found: $FDTUNE_SYSTEM_DB, then next to the binary
 * (<exe>/../share/fdtune), then the source tree; a fresh install with no database of its own
 * exports from it. */
static void test_system_search_and_fresh_install(void **state)
{
    (void)state;
    char user[512], sys[512], prefix[600], bin[700], share[700], installed[800], none[600];
    user_db(user, sizeof user);
    system_db(sys, sizeof sys);
    snprintf(none, sizeof none, "%s/fresh/fdtune.db", g_dir);
    setenv("FDTUNE_DB", none, 1);
    unsetenv("FDTUNE_SYSTEM_DB");
    tu_result r;

    /* The source tree's share/fdtune/system.db (this binary has no share/ beside it that
     * holds one: build/../share/fdtune is the source tree's own). */
    run(&r, "export", "--gpu", "H100", "--format", "json", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"database\": null");
    assert_has(r.out, "share/fdtune/system.db\"");
    assert_has(r.out, "\"source\": \"system\"");
    assert_lacks(r.out, "\"source\": \"user\"");
    tu_result_free(&r);
    assert_false(exists(none)); /* nothing was created for the user */

    /* An installed layout: <prefix>/bin/fdtune and <prefix>/share/fdtune/system.db (here the
     * user's results merged best-only, so the answer tells which file answered). */
    snprintf(prefix, sizeof prefix, "%s/prefix", g_dir);
    snprintf(bin, sizeof bin, "%s/bin", prefix);
    snprintf(share, sizeof share, "%s/share/fdtune", prefix);
    fdt_err e = {""};
    assert_int_equal(fdt_mkdirs(bin, &e), 0);
    assert_int_equal(fdt_mkdirs(share, &e), 0);
    snprintf(installed, sizeof installed, "%s/system.db", share);
    fdt_merge_opts o;
    memset(&o, 0, sizeof o);
    const char *in[1] = {user};
    o.out = installed;
    o.in = in;
    o.nin = 1;
    o.best_only = 1;
    fdt_merge_report rep;
    assert_int_equal(fdt_merge(&o, &rep, &e), FDT_STATUS_OK);
    fdt_merge_report_free(&rep);
    chmod(installed, 0444);
    char exe[800];
    snprintf(exe, sizeof exe, "%s/fdtune", bin);
    copy_file(FDTUNE_BIN, exe);
    chmod(exe, 0755);
    chmod(share, 0555); /* read-only, as under /usr/share */
    char *args[] = {exe, "query", "best", "--json", NULL};
    tu_run(&r, g_dir, args);
    expect_status(&r, 0);
    assert_has(r.out, "/prefix/bin/../share/fdtune/system.db\"");
    assert_has(r.out, "GPU-bbbb"); /* the installed file's device, not the recording's */
    assert_lacks(r.out, "\"source\": \"user\"");
    tu_result_free(&r);
    /* FDTUNE_SYSTEM_DB comes first; a path with characters a URI escapes is fine (the system
     * database is opened as an immutable file through a file: URI). */
    char odd[700], odd_dir[600];
    snprintf(odd_dir, sizeof odd_dir, "%s/sys 100%%?#", g_dir);
    mkdir(odd_dir, 0755);
    snprintf(odd, sizeof odd, "%s/system.db", odd_dir);
    copy_file(sys, odd);
    setenv("FDTUNE_SYSTEM_DB", odd, 1);
    tu_run(&r, g_dir, args);
    expect_status(&r, 0);
    assert_has(r.out, "GPU-1a0ddb37");
    tu_result_free(&r);
    setenv("FDTUNE_SYSTEM_DB", sys, 1);
    tu_run(&r, g_dir, args);
    expect_status(&r, 0);
    assert_has(r.out, "GPU-1a0ddb37");
    assert_lacks(r.out, "GPU-bbbb");
    tu_result_free(&r);
    chmod(share, 0755);
    /* A --db that is not there is still an error, whatever the system database holds. */
    run(&r, "export", "--db", none, "--gpu", "H100", NULL);
    expect_status(&r, 4);
    assert_has(r.err, "no tuning database");
    tu_result_free(&r);
    unsetenv("FDTUNE_SYSTEM_DB");
    unsetenv("FDTUNE_DB");
}

/* retune works on the user's database alone: the system database (consulted by query in the
 * same environment) is never opened for writing, and nothing appears beside it. */
static void list_dir(const char *dir, char *buf, size_t n)
{
    buf[0] = 0;
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *x; (x = readdir(d));)
        if (strlen(buf) + strlen(x->d_name) + 2 < n) {
            strcat(buf, x->d_name);
            strcat(buf, " ");
        }
    closedir(d);
}

static void test_retune_leaves_system_db(void **state)
{
    (void)state;
    char user[512], sys[512], copy[512], dir[600], before[4096], after[4096];
    /* A device no real GPU is, so that a GPU machine has nothing to measure either. */
    path_in(user, sizeof user, "retune-user.db");
    const meas m[] = {{prob(FDT_OP_LAP, 128), CFG_A, 0.5, 0.005}};
    fdt_device fake = gpu("fdtune test GPU", "sm_90", 7, "GPU-test");
    shard(user, &fake, "", m, 1, 1);
    system_db(sys, sizeof sys);
    snprintf(dir, sizeof dir, "%s/sysro", g_dir);
    mkdir(dir, 0755);
    snprintf(copy, sizeof copy, "%s/system.db", dir);
    copy_file(sys, copy);
    chmod(copy, 0444);
    setenv("FDTUNE_SYSTEM_DB", copy, 1);
    tu_result r;
    run(&r, "query", "best", "--db", user, "--json", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"source\": \"system\""); /* it is consulted in this environment */
    assert_has(r.out, "\"source\": \"user\"");
    tu_result_free(&r);
    list_dir(dir, before, sizeof before);
    run(&r, "retune", "--db", user, NULL);
    assert_true(r.status == 3 || r.status == 0); /* no GPU here; nothing to do on a GPU host */
    tu_result_free(&r);
    char missing[600];
    snprintf(missing, sizeof missing, "%s/user/none.db", g_dir);
    run(&r, "retune", "--db", missing, NULL);
    expect_status(&r, 4);
    assert_has(r.err, "no tuning database");
    tu_result_free(&r);
    list_dir(dir, after, sizeof after);
    assert_string_equal(after, before);
    assert_true(same_bytes(copy, sys));
    unsetenv("FDTUNE_SYSTEM_DB");
}

/* ------------------------------------------------------------------ kernel sources */

/* The code each best was measured with is recorded with its decision (metadata
 * kernel_source ...) and goes along with merges; a result of another generator whose
 * recorded code is this generator's for its config needs no note in query or export, one
 * whose code differs or was never recorded does; `db check` counts and lists them; a
 * best-only merge with --drop-stale leaves those out. */
static void test_kernel_sources(void **state)
{
    (void)state;
    char a[512], best[512], key[700], q[1024];
    path_in(a, sizeof a, "kernels-a.db");
    const meas m[] = {{prob(FDT_OP_D2X, 128), CFG_A, 0.5, 0.005},
                      {prob(FDT_OP_LAP, 128), CFG_B, 0.7, 0.005}};
    shard(a, h100_a(), "node1", m, 2, 1);
    /* Recorded at the decisions, under this generator's fingerprint, as this generator's hash. */
    assert_int_equal(sql_int(a, "SELECT count(*) FROM metadata WHERE key LIKE 'kernel_source %'"),
                     2);
    fdt_db_row row;
    memset(&row, 0, sizeof row);
    row.problem = prob(FDT_OP_D2X, 128);
    snprintf(row.ev.config, sizeof row.ev.config, "%s", CFG_A);
    snprintf(row.device.backend, sizeof row.device.backend, "cuda");
    snprintf(row.env.generator, sizeof row.env.generator, "%s", fdt_gen_fingerprint());
    char hex[40];
    fdt_err e = {""};
    assert_int_equal(fdt_db_kernel_hash(&row, hex, sizeof hex, &e), 0);
    fdt_db_kernel_key(&row, key, sizeof key);
    snprintf(q, sizeof q, "SELECT count(*) FROM metadata WHERE key = '%s' AND value = '%s'", key,
             hex);
    assert_int_equal(sql_int(a, q), 1);

    /* As an older fdtune left it: another generator, the same code recorded for d2x, code
     * that differs for lap. */
    sql_exec(a, "UPDATE environments SET generator = '00000000000000aa'");
    snprintf(q, sizeof q, "UPDATE metadata SET key = replace(key, '%s', '00000000000000aa')",
             fdt_gen_fingerprint());
    sql_exec(a, q);
    sql_exec(a, "UPDATE metadata SET value = '0123456789abcdef' WHERE key LIKE '% lap %'");
    tu_result r;
    run(&r, "query", "best", "--db", a, "--no-system-db", "--op", "d2x", NULL);
    expect_status(&r, 0);
    assert_lacks(r.err, "may not have been measured"); /* unchanged: no note */
    tu_result_free(&r);
    run(&r, "query", "best", "--db", a, "--no-system-db", NULL);
    expect_status(&r, 0);
    assert_has(r.err, "1 of these results may not have been measured with the kernel this "
                      "fdtune");
    assert_has(r.err, "1 measured with code that differs from this generator's, 0 with another "
                      "generator and no record of their code");
    char check[600];
    snprintf(check, sizeof check, "'fdtune db check %s' lists them", a);
    assert_has(r.err, check);
    tu_result_free(&r);
    run(&r, "export", "--db", a, "--no-system-db", "--gpu", "H100", "--op", "lap", NULL);
    expect_status(&r, 0);
    assert_has(r.err, "the result may not have been measured with the kernel this fdtune");
    assert_has(r.err, "its code differs from this generator's");
    tu_result_free(&r);
    run(&r, "db", "check", a, "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"kernels\": {\"this_generator\": 0, \"unchanged\": 1, \"differs\": 1, "
                      "\"unrecorded\": 0");
    assert_has(r.out, "\"kernel\": \"differs\"");
    assert_has(r.out, "\"metadata\": {}"); /* summed up, not listed as metadata */
    tu_result_free(&r);

    /* Merged: the records go along, and with --drop-stale the lap result stays out. */
    path_in(best, sizeof best, "kernels-best.db");
    run(&r, "db", "merge", "--best-only", "--drop-stale", "-o", best, a, "--json", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"stale_dropped\": 1");
    tu_result_free(&r);
    assert_int_equal(sql_int(best, "SELECT count(*) FROM evaluations"), 1);
    assert_int_equal(sql_int(best, "SELECT count(*) FROM metadata WHERE key LIKE "
                                   "'kernel_source %'"), 1); /* lap's record went with it */
    run(&r, "db", "check", best, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "kernels       0 results measured with this generator, 1 with another "
                      "whose kernel is unchanged (recorded), 0 whose kernel differs, 0 with "
                      "another and nothing recorded");
    tu_result_free(&r);
    /* Nothing recorded (a database from before the records): unrecorded. */
    sql_exec(a, "DELETE FROM metadata WHERE key LIKE 'kernel_source %'");
    run(&r, "query", "best", "--db", a, "--no-system-db", "--op", "d2x", NULL);
    expect_status(&r, 0);
    assert_has(r.err, "it was measured with another generator and its code was not recorded");
    tu_result_free(&r);
    run(&r, "db", "merge", "--drop-stale", "-o", best, a, NULL);
    expect_status(&r, 2); /* --drop-stale is for --best-only */
    tu_result_free(&r);
}

/* ------------------------------------------------------------------ the model's answers */

/* The text of the first `"key": "..."` after `after` in doc (a JSON document), into buf. */
static void json_str_after(const char *doc, const char *after, const char *key, char *buf,
                           size_t n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *a = strstr(doc, after), *k = a ? strstr(a, pat) : NULL;
    if (!k)
        fail_msg("no %s after %s in:\n%.2000s", key, after, doc);
    k += strlen(pat);
    const char *end = strchr(k, '"');
    snprintf(buf, n, "%.*s", (int)(end - k), k);
}

/* What the dry run ranks first for the MI250X (described from the catalogue): its config
 * whole, and (key, may be NULL) its canonical key. */
static void dry_run_first(const char *op, const char *grid, char *cfg, size_t n, char *key,
                          size_t nk)
{
    tu_result r;
    run(&r, "--gpu", "MI250X", "--op", op, "--R", "4", "--precision", "f32", "--grid", grid,
        "--dry-run", "--top", "3", "--json", NULL);
    expect_status(&r, 0);
    json_str_after(r.out, "\"ranking\": [", "config_full", cfg, n);
    if (key)
        json_str_after(r.out, "\"ranking\": [", "config", key, nk);
    tu_result_free(&r);
}

/* An AMD GPU nothing was measured on (no gfx90a result in the system database) gets the
 * model's top-ranked config, the dry run's first, marked as predicted in query best, --nearest
 * and export; once a measured result of its architecture exists, the measurement answers. */
static void test_system_model_answer(void **state)
{
    (void)state;
    char sys[512], none[600], user[512], dry[256], got[256], d2x_key[256];
    system_db(sys, sizeof sys);
    snprintf(none, sizeof none, "%s/fresh-model/fdtune.db", g_dir);
    setenv("FDTUNE_SYSTEM_DB", sys, 1);
    setenv("FDTUNE_DB", none, 1);
    tu_result r;

    /* query best: every problem of the databases for d2x, each the model's answer */
    run(&r, "query", "best", "--gpu", "MI250X", "--R", "4", "--op", "d2x", "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_int_equal(count_of(r.out, "\"source\": \"model\""), 6); /* f32, f64 x 3 grids */
    assert_lacks(r.out, "\"source\": \"system\"");
    assert_has(r.out, "\"median_ms\": null"); /* a prediction is no measurement */
    assert_has(r.err, "predicted, not measured (source model)");
    tu_result_free(&r);
    static const char *const grids[][2] = {{"d2x", "512^3"}, {"lap", "256^3"}};
    for (int i = 0; i < 2; i++) {
        dry_run_first(grids[i][0], grids[i][1], dry, sizeof dry, i ? NULL : d2x_key,
                      sizeof d2x_key);
        run(&r, "query", "best", "--gpu", "MI250X", "--R", "4", "--op", grids[i][0],
            "--precision", "f32", "--grid", grids[i][1], "--json", NULL);
        expect_status(&r, 0);
        assert_int_equal(count_of(r.out, "\"source\": \"model\""), 1);
        json_str_after(r.out, "\"source\": \"model\"", "config_full", got, sizeof got);
        assert_string_equal(got, dry);
        tu_result_free(&r);
        run(&r, "query", "best", "--nearest", "--gpu", "MI250X", "--R", "4", "--op",
            grids[i][0], "--grid", grids[i][1], "--json", NULL);
        expect_status(&r, 0);
        assert_has(r.out, "\"fallback\": \"model\"");
        json_str_after(r.out, "\"result\"", "config_full", got, sizeof got);
        assert_string_equal(got, dry);
        tu_result_free(&r);
    }
    /* export: the header's provenance and the JSON say predicted */
    char hdr[600];
    snprintf(hdr, sizeof hdr, "%s/mi250x.h", g_dir);
    run(&r, "export", "--gpu", "MI250X", "--op", "d2x", "--R", "4", "--precision", "f32", "-o",
        hdr, NULL);
    expect_status(&r, 0);
    assert_has(r.err, "PREDICTED by fdtune's model");
    tu_result_free(&r);
    char *h = tu_slurp(hdr);
    assert_has(h, " *     MI250X: hip, gfx90a, 110 CUs");
    assert_has(h, "(GPU catalogue: nothing measured, the model's predictions)");
    assert_int_equal(count_of(h, " *       PREDICTED by fdtune's model, not measured"), 3);
    assert_has(h, d2x_key); /* 512^3's config, the dry run's first */
    free(h);
    run(&r, "export", "--gpu", "MI250X", "--op", "d2x", "--R", "4", "--precision", "f32",
        "--format", "json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_int_equal(count_of(r.out, "\"predicted\": {"), 6); /* constant and runtime x 3 */
    assert_has(r.out, "\"source\": \"model\"");
    assert_lacks(r.out, "\"source\": \"system\"");
    tu_result_free(&r);
    assert_false(exists(none));

    /* A measured MI250X result of d2x f32 answers for every d2x f32 grid it can run (the
     * grid rung) and the model no longer does; f64 still gets the model's. */
    path_in(user, sizeof user, "mi250x-user.db");
    const meas m[] = {{prob(FDT_OP_D2X, 512), CFG_A, 0.5, 0.005}};
    shard(user, mi250x(), "", m, 1, 1);
    run(&r, "query", "best", "--db", user, "--gpu", "MI250X", "--R", "4", "--op", "d2x",
        "--json", NULL);
    expect_status(&r, 0);
    assert_int_equal(count_of(r.out, "\"source\": \"user\""), 1);
    assert_int_equal(count_of(r.out, "\"source\": \"model\""), 3);
    assert_lacks(r.out, "\"precision\": \"f32\", \"nx\": 256");
    tu_result_free(&r);
    run(&r, "query", "best", "--db", user, "--nearest", "--gpu", "MI250X", "--R", "4", "--op",
        "d2x", "--grid", "1024^3", "--json", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "\"fallback\": \"grid\"");
    assert_has(r.out, "\"source\": \"user\"");
    assert_has(r.out, CFG_A);
    tu_result_free(&r);
    run(&r, "export", "--db", user, "--gpu", "MI250X", "--op", "d2x", "--precision", "f32",
        NULL);
    expect_status(&r, 0);
    assert_lacks(r.out, "PREDICTED by fdtune's model, not measured");
    assert_has(r.out, CFG_A);
    tu_result_free(&r);
    unsetenv("FDTUNE_SYSTEM_DB");
    unsetenv("FDTUNE_DB");
}

/* ------------------------------------------------------------------ main */

static int setup(void **state)
{
    (void)state;
    if (tu_mkdtemp(g_dir, sizeof g_dir, "fdt_test_merge"))
        return -1;
    const char *keys[3] = {"bx=32,by=8", "bx=64,by=4", "bx=128,by=2"};
    char *out[3] = {CFG_A, CFG_B, CFG_C};
    for (int i = 0; i < 3; i++) {
        fdt_config c;
        fdt_err e = {""};
        if (fdt_config_parse(keys[i], &c, &e))
            return -1;
        fdt_config_format(&c, out[i], 64);
    }
    unsetenv("FDTUNE_TEST_FSTYPE");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tu_rmtree(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_idempotent),
        cmocka_unit_test(test_merge_best_query_export),
        cmocka_unit_test(test_merge_best_only),
        cmocka_unit_test(test_merge_refusals),
        cmocka_unit_test(test_merge_v1_input),
        cmocka_unit_test(test_merge_running_shard),
        cmocka_unit_test(test_merge_run_clocks),
        cmocka_unit_test(test_run_key_unique),
        cmocka_unit_test(test_db_check),
        cmocka_unit_test(test_network_fs),
        cmocka_unit_test(test_system_order_and_source),
        cmocka_unit_test(test_system_search_and_fresh_install),
        cmocka_unit_test(test_retune_leaves_system_db),
        cmocka_unit_test(test_system_model_answer),
        cmocka_unit_test(test_kernel_sources),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
