/* Tests of the tuning database (db/): creation, reopening and migration; refusal of newer,
 * foreign, corrupt and missing files without touching them; stable ids; inserts, batches and
 * their rules; the best, top, history and run queries; the nearest fallback ladder; best
 * decisions (schema v2) and the migration of a recorded v1 file; a full disk; several processes
 * writing one file at once; resuming after a tuner was killed mid-run; dwave's absorbing layer
 * in the problems and the links table (schema v8). Every file lives under a mkdtemp directory
 * removed at the end. CPU only. */
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
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db_internal.h"
#include "fdt_db.h"
#include "fdt_recipe.h"
#include "testsql.h"
#include "testutil.h"

static char g_dir[256];

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ------------------------------------------------------------------ helpers */

static fdt_device device(const char *name, const char *arch, int cu, int64_t mem,
                                 const char *uuid)
{
    fdt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.backend, sizeof d.backend, "cuda");
    snprintf(d.vendor, sizeof d.vendor, "NVIDIA");
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "%s", arch);
    d.compute_units = cu;
    d.warp_size = 32;
    d.l2_bytes = 50 << 20;
    d.mem_bytes = mem;
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    snprintf(d.pci, sizeof d.pci, "0000:18:00.0");
    snprintf(d.driver_version, sizeof d.driver_version, "580.65.06");
    snprintf(d.runtime_version, sizeof d.runtime_version, "13.0");
    snprintf(d.compiler_version, sizeof d.compiler_version, "13.0.48");
    return d;
}

#define GB80 (80LL << 30)

static fdt_problem problem(fdt_op op, int R, int64_t nx, int64_t ny, int64_t nz)
{
    fdt_problem p = {op, R, FDT_F32, nx, ny, nz};
    return p;
}

/* A distinct canonical config for every i < 2^20. */
static void cfg_key(int i, char *buf, size_t n)
{
    fdt_config c;
    fdt_config_default(&c);
    c.bx = 1 + i % 1024;
    c.by = 1 + i / 1024;
    fdt_config_format(&c, buf, n);
}

static fdt_db_eval eval(int64_t run, int64_t prob, const char *config, fdt_db_status s,
                        fdt_db_stage stage, double t)
{
    fdt_db_eval ev;
    fdt_db_eval_init(&ev);
    ev.run_id = run;
    ev.problem_id = prob;
    snprintf(ev.config, sizeof ev.config, "%s", config);
    ev.status = s;
    ev.stage = stage;
    ev.time_ms = t;
    if (!isnan(t))
        ev.gbs = 1000.0 / t;
    return ev;
}

static fdt_db *open_ok(const char *path, int flags)
{
    fdt_db *db = NULL;
    fdt_err e = {""};
    int rc = fdt_db_open(path, flags, &db, &e);
    if (rc)
        fail_msg("open %s: %s", path, e.msg);
    return db;
}

/* A database with one device, environment, problem and running run. */
typedef struct fix {
    char path[512];
    fdt_db *db;
    int64_t dev, env, prob, run;
} fix;

static int64_t begin_run(fdt_db *db, int64_t dev, int64_t env, double copy)
{
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.device_id = dev;
    r.env_id = env;
    r.copy_gbs = copy;
    snprintf(r.command, sizeof r.command, "fdtune --gpu H100 --R 4 --grid 512^3");
    snprintf(r.recipe, sizeof r.recipe, "default");
    snprintf(r.strategy, sizeof r.strategy, "random");
    r.seed = 0xfedcba9876543210ULL;
    r.budget = 100;
    int64_t id = 0;
    fdt_err e = {""};
    if (fdt_db_run_begin(db, &r, &id, &e))
        fail_msg("begin run: %s", e.msg);
    return id;
}

static void fix_open(fix *f, const char *name)
{
    fdt_err e = {""};
    path_in(f->path, sizeof f->path, name);
    f->db = open_ok(f->path, FDT_DB_CREATE);
    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    fdt_problem p = problem(FDT_OP_LAP, 4, 512, 512, 512);
    if (fdt_db_device_id(f->db, &d, &f->dev, &e) || fdt_db_env_id(f->db, &v, &f->env, &e) ||
        fdt_db_problem_id(f->db, &p, &f->prob, &e))
        fail_msg("fixture: %s", e.msg);
    f->run = begin_run(f->db, f->dev, f->env, 3000.0);
}

static char *slurp(const char *path, size_t *n)
{
    char *data;
    fdt_err e;
    if (fdt_read_file(path, &data, n, &e))
        fail_msg("%s", e.msg);
    return data;
}

static void assert_same_bytes(const char *path, const char *before, size_t n)
{
    size_t m;
    char *after = slurp(path, &m);
    assert_int_equal(m, n);
    assert_memory_equal(after, before, n);
    free(after);
}

static void assert_contains(const char *s, const char *part)
{
    if (!strstr(s, part))
        fail_msg("expected '%s' in: %s", part, s);
}

/* Collects rows from a query callback. */
typedef struct rows {
    fdt_db_row r[64];
    int n;
} rows;

static int collect(void *ctx, const fdt_db_row *row)
{
    rows *rs = ctx;
    if (rs->n < 64)
        rs->r[rs->n] = *row;
    rs->n++;
    return 0;
}

/* ------------------------------------------------------------------ open, versions */

static void test_default_path(void **state)
{
    (void)state;
    char buf[512], *saved[3];
    const char *names[3] = {"FDTUNE_DB", "XDG_DATA_HOME", "HOME"};
    for (int i = 0; i < 3; i++)
        saved[i] = getenv(names[i]) ? strdup(getenv(names[i])) : NULL;
    fdt_err e;
    setenv("FDTUNE_DB", "/x/my.db", 1);
    setenv("XDG_DATA_HOME", "/data", 1);
    setenv("HOME", "/home/u", 1);
    assert_int_equal(fdt_db_default_path(buf, sizeof buf, &e), 0);
    assert_string_equal(buf, "/x/my.db");
    unsetenv("FDTUNE_DB");
    assert_int_equal(fdt_db_default_path(buf, sizeof buf, &e), 0);
    assert_string_equal(buf, "/data/fdtune/fdtune.db");
    setenv("XDG_DATA_HOME", "relative", 1); /* ignored, as the XDG spec says */
    assert_int_equal(fdt_db_default_path(buf, sizeof buf, &e), 0);
    assert_string_equal(buf, "/home/u/.local/share/fdtune/fdtune.db");
    unsetenv("XDG_DATA_HOME");
    assert_int_equal(fdt_db_default_path(buf, sizeof buf, &e), 0);
    assert_string_equal(buf, "/home/u/.local/share/fdtune/fdtune.db");
    assert_int_equal(fdt_db_default_path(buf, 8, &e), -1);
    for (int i = 0; i < 3; i++) {
        if (saved[i])
            setenv(names[i], saved[i], 1);
        else
            unsetenv(names[i]);
        free(saved[i]);
    }
}

static void test_create_and_version(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "new/sub/dir/fdtune.db");
    fdt_db *db = open_ok(path, FDT_DB_CREATE);
    assert_true(exists(path)); /* the directory was created too */
    assert_string_equal(fdt_db_path(db), path);
    fdt_err e = {""};
    assert_int_equal(fdt_db_check(db, &e), 0);
    fdt_db_close(db);

    int v = -1;
    assert_int_equal(fdt_db_schema_version(), 11);
    assert_int_equal(fdt_db_file_version(path, &v, &e), 0);
    assert_int_equal(v, fdt_db_schema_version());
    assert_int_equal(sql_int(path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(sql_int(path, "PRAGMA application_id"), FDT_DBI_APPLICATION_ID);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND"
                                   " name IN ('devices', 'environments', 'problems', 'configs',"
                                   " 'runs', 'evaluations')"),
                     6);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_schema WHERE type = 'view'"
                                   " AND name = 'best_evaluations'"),
                     1);
    /* WAL is persistent in the file; STRICT tables reject a text grid size. */
    sqlite3 *h;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    assert_int_not_equal(sqlite3_exec(h,
                                      "INSERT INTO problems (op, radius, precision, nx, ny, nz)"
                                      " VALUES ('lap', 4, 'f32', 'big', 1, 1)",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(h,
                                      "INSERT INTO problems (op, radius, precision, nx, ny, nz)"
                                      " VALUES ('d3x', 4, 'f32', 1, 1, 1)",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
    sqlite3_close(h);
}

static void test_reopen(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "reopen.db");
    fdt_err e = {""};
    int64_t cfg;
    assert_int_equal(fdt_db_config_id(f.db, "bx=32,by=8", &cfg, &e), 0);
    fdt_db_close(f.db);

    /* Read-write again: same ids, schema not re-run. */
    fdt_db *db = open_ok(f.path, FDT_DB_READWRITE);
    int64_t id;
    fdt_problem p = problem(FDT_OP_LAP, 4, 512, 512, 512);
    assert_int_equal(fdt_db_problem_id(db, &p, &id, &e), 0);
    assert_int_equal(id, f.prob);
    assert_int_equal(fdt_db_config_id(db, "bx=32,by=8", &id, &e), 0);
    assert_int_equal(id, cfg);
    fdt_db_close(db);

    /* Read-only: lookups work, writes are refused. */
    db = open_ok(f.path, FDT_DB_READONLY);
    assert_int_equal(fdt_db_problem_find(db, &p, &id, &e), 0);
    assert_int_equal(id, f.prob);
    fdt_problem other = problem(FDT_OP_D2Z, 4, 512, 512, 512);
    assert_int_equal(fdt_db_problem_find(db, &other, &id, &e), 0);
    assert_int_equal(id, 0);
    assert_int_equal(fdt_db_problem_id(db, &other, &id, &e), -1);
    assert_contains(e.msg, "read-only");
    fdt_device d;
    assert_int_equal(fdt_db_device_get(db, f.dev, &d, &e), 0);
    assert_string_equal(d.name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(d.compute_units, 132);
    fdt_db_env v;
    assert_int_equal(fdt_db_env_get(db, f.env, &v, &e), 0);
    assert_string_equal(v.fdtune_version, "0.1.0");
    assert_string_equal(v.generator, fdt_gen_fingerprint());
    assert_int_equal(fdt_db_env_get(db, 999, &v, &e), -1);
    assert_contains(e.msg, "no such environment");
    fdt_db_close(db);
}

static void test_migrate_v0(void **state)
{
    (void)state;
    char path[512];
    fdt_err e = {""};
    fdt_db *db;

    /* A zero-byte file is an empty (v0) database. */
    path_in(path, sizeof path, "v0-empty.db");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(fdt_db_open(path, FDT_DB_READONLY, &db, &e), -1);
    assert_contains(e.msg, "empty database");
    db = open_ok(path, FDT_DB_READWRITE);
    fdt_db_close(db);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(sql_int(path, "SELECT count(*) FROM evaluations"), 0);

    /* An SQLite file with a header but no tables and user_version 0. */
    path_in(path, sizeof path, "v0-header.db");
    sql_exec(path, "CREATE TABLE t (x); DROP TABLE t;");
    assert_int_equal(sql_int(path, "PRAGMA user_version"), 0);
    db = open_ok(path, FDT_DB_READWRITE);
    fdt_db_close(db);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs"), 0);

    /* Somebody else's database: refused and left alone. */
    path_in(path, sizeof path, "foreign.db");
    sql_exec(path, "CREATE TABLE photos (id INTEGER PRIMARY KEY, file TEXT);"
                   " INSERT INTO photos (file) VALUES ('cat.jpg');");
    size_t n;
    char *before = slurp(path, &n);
    assert_int_equal(fdt_db_open(path, FDT_DB_CREATE, &db, &e), -1);
    assert_null(db);
    assert_contains(e.msg, "not an fdtune database");
    assert_same_bytes(path, before, n);
    free(before);

    /* Another application's id. */
    path_in(path, sizeof path, "other-app.db");
    sql_exec(path, "PRAGMA application_id = 1234;");
    assert_int_equal(fdt_db_open(path, FDT_DB_READWRITE, &db, &e), -1);
    assert_contains(e.msg, "application_id");
}

static void test_newer_schema_refused(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "newer.db");
    fdt_db_close(open_ok(path, FDT_DB_CREATE));
    int newer = fdt_db_schema_version() + 1;
    char sql[64], want[128];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", newer);
    snprintf(want, sizeof want,
             "database schema v%d is newer than this fdtune (v%d): upgrade fdtune", newer,
             newer - 1);
    sql_exec(path, sql);
    size_t n;
    char *before = slurp(path, &n);
    fdt_err e = {""};
    fdt_db *db = NULL;
    for (int i = 0; i < 3; i++) {
        int flags[] = {FDT_DB_READONLY, FDT_DB_READWRITE, FDT_DB_CREATE};
        assert_int_equal(fdt_db_open(path, flags[i], &db, &e), -1);
        assert_null(db);
        assert_contains(e.msg, want);
    }
    int v = 0;
    assert_int_equal(fdt_db_file_version(path, &v, &e), 0);
    assert_int_equal(v, newer);
    assert_same_bytes(path, before, n);
    free(before);
}

static void test_corrupt_refused(void **state)
{
    (void)state;
    char path[512];
    fdt_err e = {""};
    fdt_db *db = NULL;

    /* Not an SQLite file at all. */
    path_in(path, sizeof path, "garbage.db");
    char junk[8192];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(i * 131 + 7);
    assert_int_equal(fdt_write_file_atomic(path, junk, sizeof junk, &e), 0);
    int flags[] = {FDT_DB_READONLY, FDT_DB_READWRITE, FDT_DB_CREATE};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(fdt_db_open(path, flags[i], &db, &e), -1);
        assert_null(db);
        assert_contains(e.msg, "not a database");
        print_message("garbage: %s\n", e.msg);
        assert_contains(e.msg, path);
        assert_same_bytes(path, junk, sizeof junk);
    }

    /* An fdtune database whose pages were damaged. */
    fix f;
    fix_open(&f, "damaged.db");
    fdt_db_eval evs[400];
    char key[64];
    for (int i = 0; i < 400; i++) {
        cfg_key(i, key, sizeof key);
        evs[i] = eval(f.run, f.prob, key, FDT_DB_OK, FDT_DB_FULL, 1.0 + i);
        snprintf(evs[i].message, sizeof evs[i].message, "%d %0200d", i, i);
    }
    assert_int_equal(fdt_db_eval_insert_batch(f.db, evs, 400, NULL, &e), 0);
    fdt_db_close(f.db); /* checkpoints the WAL into the file */
    size_t n;
    char *data = slurp(f.path, &n);
    assert_true(n >= 16 * 4096);
    for (size_t i = n / 2; i < n / 2 + 4096; i++)
        data[i] = (char)(i * 7 + 3);
    assert_int_equal(fdt_write_file_atomic(f.path, data, n, &e), 0);
    for (int i = 0; i < 2; i++) {
        int rc = fdt_db_open(f.path, flags[i], &db, &e);
        if (rc == 0) {
            rc = fdt_db_check(db, &e);
            fdt_db_close(db);
        }
        assert_int_equal(rc, -1);
        assert_contains(e.msg, "integrity problem");
        print_message("damaged file: %s\n", e.msg);
        assert_same_bytes(f.path, data, n);
    }
    free(data);
}

static void test_readonly_missing(void **state)
{
    (void)state;
    char path[512], dir[512];
    fdt_err e = {""};
    fdt_db *db = NULL;
    path_in(path, sizeof path, "missing.db");
    assert_int_equal(fdt_db_open(path, FDT_DB_READONLY, &db, &e), -1);
    assert_null(db);
    assert_contains(e.msg, "no tuning database");
    assert_false(exists(path));
    assert_int_equal(fdt_db_open(path, FDT_DB_READWRITE, &db, &e), -1);
    assert_false(exists(path));
    path_in(dir, sizeof dir, "nodir");
    snprintf(path, sizeof path, "%s/fdtune.db", dir);
    assert_int_equal(fdt_db_open(path, FDT_DB_READONLY, &db, &e), -1);
    assert_false(exists(dir));
    assert_int_equal(fdt_db_file_version(path, &(int){0}, &e), -1);
    assert_false(exists(dir));
}

/* ------------------------------------------------------------------ ids */

static void test_ids_stable(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "ids.db");
    fdt_err e = {""};
    int64_t a, b;
    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    assert_int_equal(fdt_db_device_id(f.db, &d, &a, &e), 0);
    assert_int_equal(a, f.dev);
    snprintf(d.pci, sizeof d.pci, "0000:99:00.0"); /* not identity */
    assert_int_equal(fdt_db_device_id(f.db, &d, &a, &e), 0);
    assert_int_equal(a, f.dev);
    /* Each identity field makes another device. */
    fdt_device d2 = d;
    snprintf(d2.uuid, sizeof d2.uuid, "GPU-bbbb");
    assert_int_equal(fdt_db_device_id(f.db, &d2, &b, &e), 0);
    assert_int_not_equal(b, f.dev);
    d2 = d;
    d2.compute_units = 114;
    assert_int_equal(fdt_db_device_id(f.db, &d2, &b, &e), 0);
    assert_int_not_equal(b, f.dev);
    d2 = d;
    snprintf(d2.arch, sizeof d2.arch, "sm_100");
    int64_t c;
    assert_int_equal(fdt_db_device_id(f.db, &d2, &c, &e), 0);
    assert_int_not_equal(c, b);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM devices"), 4);
    d2.compute_units = 0;
    assert_int_equal(fdt_db_device_id(f.db, &d2, &c, &e), -1);
    assert_contains(e.msg, "incomplete identity");

    /* Environments: any version change is another environment. */
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    assert_int_equal(fdt_db_env_id(f.db, &v, &a, &e), 0);
    assert_int_equal(a, f.env);
    snprintf(v.driver, sizeof v.driver, "590.1");
    assert_int_equal(fdt_db_env_id(f.db, &v, &b, &e), 0);
    assert_int_not_equal(b, f.env);
    fdt_db_env_from_device(&d, "0.2.0", &v);
    assert_int_equal(fdt_db_env_id(f.db, &v, &c, &e), 0);
    assert_true(c != f.env && c != b);
    v.generator[0] = 0;
    assert_int_equal(fdt_db_env_id(f.db, &v, &c, &e), -1);

    /* Problems. */
    fdt_problem p = problem(FDT_OP_LAP, 4, 512, 512, 512);
    assert_int_equal(fdt_db_problem_id(f.db, &p, &a, &e), 0);
    assert_int_equal(a, f.prob);
    p.prec = FDT_F64;
    assert_int_equal(fdt_db_problem_id(f.db, &p, &b, &e), 0);
    assert_int_not_equal(b, f.prob);
    assert_int_equal(fdt_db_problem_id(f.db, &p, &c, &e), 0);
    assert_int_equal(c, b);
    p.R = 9;
    assert_int_equal(fdt_db_problem_id(f.db, &p, &c, &e), -1);
    assert_contains(e.msg, "R=9");

    /* Configs: canonical text only, so one config has one id. */
    assert_int_equal(fdt_db_config_id(f.db, "bx=32,by=8,nw=64,vec=4", &a, &e), 0);
    assert_int_equal(fdt_db_config_id(f.db, "bx=32,by=8,nw=64,vec=4", &b, &e), 0);
    assert_int_equal(a, b);
    assert_int_equal(fdt_db_config_id(f.db, "default", &c, &e), 0);
    assert_int_not_equal(c, a);
    assert_int_equal(fdt_db_config_id(f.db, "vec=4,bx=32,by=8,nw=64", &c, &e), -1);
    assert_contains(e.msg, "not canonical (canonical form 'bx=32,by=8,nw=64,vec=4')");
    assert_int_equal(fdt_db_config_id(f.db, "bx=64,by=8", &c, &e), -1); /* bx=64 is default */
    assert_int_equal(fdt_db_config_id(f.db, "colour=red", &c, &e), -1);
    assert_int_equal(fdt_db_config_id(f.db, "", &c, &e), -1);
    fdt_db_close(f.db);
}

/* ------------------------------------------------------------------ evaluations, best */

static void test_insert_and_best(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "best.db");
    fdt_err e = {""};
    fdt_problem p2 = problem(FDT_OP_D2Z, 4, 512, 512, 512);
    int64_t prob2;
    assert_int_equal(fdt_db_problem_id(f.db, &p2, &prob2, &e), 0);

    /* Faster results that must not count (wrong answer, probe stage), a tie at 2.0 ms
     * broken by the config text, and a second problem. */
    fdt_db_eval evs[] = {
        eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 3.0),
        eval(f.run, f.prob, "bx=256", FDT_DB_WRONG, FDT_DB_FULL, 0.5),
        eval(f.run, f.prob, "bx=128", FDT_DB_OK, FDT_DB_PROBE, 0.7),
        eval(f.run, f.prob, "by=8", FDT_DB_OK, FDT_DB_FULL, 2.0),
        eval(f.run, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 2.0),
        eval(f.run, f.prob, "bx=8", FDT_DB_COMPILE_ERROR, FDT_DB_FULL, NAN),
        eval(f.run, f.prob, "bx=8", FDT_DB_PRUNED, FDT_DB_PROBE, NAN),
        eval(f.run, prob2, "nw=64", FDT_DB_OK, FDT_DB_FULL, 1.5),
        eval(f.run, prob2, "nw=32", FDT_DB_TIMEOUT, FDT_DB_FULL, NAN),
    };
    size_t n = sizeof evs / sizeof evs[0];
    evs[0].reps = 25;
    evs[0].outliers = 2;
    evs[0].time_min_ms = 2.9;
    evs[0].time_max_ms = 3.3;
    evs[0].time_q1_ms = 2.95;
    evs[0].time_q3_ms = 3.05;
    evs[0].max_err = 1e-6;
    evs[0].rel_err = 1e-7;
    evs[0].tolerance = 1e-5;
    evs[0].layout_line = 544;
    evs[0].layout_offset = 28;
    evs[0].registers = 64;
    evs[0].spill_bytes = 0;
    evs[0].shared_bytes = 4096;
    evs[0].compile_s = 0.25;
    evs[3].frac_copy = 0.5; /* given explicitly: kept */
    snprintf(evs[5].message, sizeof evs[5].message, "error: too many resources requested");
    int64_t ids[9] = {0};
    assert_int_equal(fdt_db_eval_insert_batch(f.db, evs, n, ids, &e), 0);
    for (size_t i = 1; i < n; i++)
        assert_true(ids[i] > ids[i - 1]);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM evaluations"), (int64_t)n);

    /* Every column comes back; NaN and -1 are NULL; frac_copy derives from the run. */
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_run_evals(f.db, f.run, collect, &rs, &e), 0);
    assert_int_equal(rs.n, (int)n);
    const fdt_db_eval *r0 = &rs.r[0].ev;
    assert_int_equal(r0->id, ids[0]);
    assert_string_equal(r0->config, "bx=32");
    assert_int_equal(r0->status, FDT_DB_OK);
    assert_int_equal(r0->stage, FDT_DB_FULL);
    assert_true(r0->time_ms == 3.0 && r0->time_min_ms == 2.9 && r0->time_max_ms == 3.3);
    assert_true(r0->time_q1_ms == 2.95 && r0->time_q3_ms == 3.05);
    assert_int_equal(r0->reps, 25);
    assert_int_equal(r0->outliers, 2);
    assert_true(fabs(r0->gbs - 1000.0 / 3.0) < 1e-9);
    assert_true(fabs(r0->frac_copy - 1000.0 / 3.0 / 3000.0) < 1e-12);
    assert_true(r0->max_err == 1e-6 && r0->rel_err == 1e-7 && r0->tolerance == 1e-5);
    assert_int_equal(r0->layout_line, 544);
    assert_int_equal(r0->layout_offset, 28);
    assert_int_equal(r0->registers, 64);
    assert_int_equal(r0->sgprs, -1);
    assert_int_equal(r0->spill_bytes, 0);
    assert_int_equal(r0->scratch_bytes, -1);
    assert_int_equal(r0->shared_bytes, 4096);
    assert_true(r0->compile_s == 0.25);
    assert_int_equal(r0->device_id, f.dev);
    assert_int_equal(r0->env_id, f.env);
    assert_int_equal(strlen(r0->created), 24); /* 2025-01-02T03:04:05.678Z */
    assert_int_equal(r0->created[10], 'T');
    assert_int_equal(r0->created[23], 'Z');
    assert_true(rs.r[3].ev.frac_copy == 0.5);
    assert_true(isnan(rs.r[5].ev.time_ms) && isnan(rs.r[5].ev.gbs));
    assert_int_equal(rs.r[5].ev.status, FDT_DB_COMPILE_ERROR);
    assert_string_equal(rs.r[5].ev.message, "error: too many resources requested");
    assert_string_equal(rs.r[0].device.arch, "sm_90");
    assert_int_equal(rs.r[0].problem.op, FDT_OP_LAP);
    assert_int_equal(rs.r[0].problem.nz, 512);
    assert_string_equal(rs.r[0].env.generator, fdt_gen_fingerprint());

    /* Best: one row per (device, problem), the 2.0 ms tie to "bx=16" < "by=8". */
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.r[0].problem.op, FDT_OP_D2Z); /* ordered by op name */
    assert_string_equal(rs.r[0].ev.config, "nw=64");
    assert_int_equal(rs.r[1].problem.op, FDT_OP_LAP);
    assert_string_equal(rs.r[1].ev.config, "bx=16");
    assert_true(rs.r[1].ev.time_ms == 2.0);
    /* The view agrees. */
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT id FROM best_evaluations WHERE problem_id = %lld",
             (long long)f.prob);
    assert_int_equal(sql_int(f.path, sql), rs.r[1].ev.id);

    /* Filters. */
    fdt_db_filter flt;
    fdt_db_filter_init(&flt);
    flt.ops = 1u << FDT_OP_LAP;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_string_equal(rs.r[0].ev.config, "bx=16");
    /* Sets: any of their members (query best --op lap,d2z --R 2,4 --grid 256^3,512^3). */
    flt.ops = 1u << FDT_OP_LAP | 1u << FDT_OP_D2Z | 1u << FDT_OP_D2X;
    flt.Rs = 1u << 2 | 1u << 4;
    flt.precs = 1u << FDT_F64 | 1u << FDT_F32;
    static const int64_t two[][3] = {{256, 256, 256}, {512, 512, 512}};
    flt.grids = two;
    flt.ngrids = 2;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    flt.ops = 1u << FDT_OP_D2X | 1u << FDT_OP_WAVE;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0);
    flt.ops = 0;
    flt.precs = 1u << FDT_F64;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0);
    fdt_db_filter_init(&flt);
    flt.gpu = "h100";
    flt.Rs = 1u << 4;
    flt.precs = 1u << FDT_F32;
    static const int64_t g512[][3] = {{512, 512, 512}};
    flt.grids = g512;
    flt.ngrids = 1;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    flt.gpu = "SM_90";
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    const char *misses[] = {"MI250X", NULL};
    for (int i = 0; misses[i]; i++) {
        fdt_db_filter_init(&flt);
        flt.gpu = misses[i];
        rs.n = 0;
        assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
        assert_int_equal(rs.n, 0);
    }
    fdt_db_filter_init(&flt);
    static const int64_t g256[][3] = {{256, 512, 512}};
    flt.grids = g256;
    flt.ngrids = 1;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0);
    fdt_db_filter_init(&flt);
    flt.Rs = 1u << 2;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0);
    fdt_db_filter_init(&flt);
    flt.generator = "0000";
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0);
    fdt_db_filter_init(&flt);
    flt.env_id = f.env;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);

    /* A faster ok/full result in a later run replaces the best. */
    int64_t run2 = begin_run(f.db, f.dev, f.env, 3000.0);
    fdt_db_eval faster = eval(run2, f.prob, "by=8", FDT_DB_OK, FDT_DB_FULL, 1.25);
    assert_int_equal(fdt_db_eval_insert(f.db, &faster, NULL, &e), 0);
    fdt_db_filter_init(&flt);
    flt.ops = 1u << FDT_OP_LAP;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_string_equal(rs.r[0].ev.config, "by=8");
    assert_int_equal(rs.r[0].ev.run_id, run2);
    fdt_db_close(f.db);
}

static void test_insert_rules(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "rules.db");
    fdt_err e = {""};
    fdt_db_eval ev = eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 1.0);
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), 0);

    /* The same measurement twice in one run is a bug. */
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), -1);
    assert_contains(e.msg, "already recorded");
    ev.stage = FDT_DB_PROBE; /* its probe is another row */
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), 0);

    /* A batch with one bad row records nothing. */
    fdt_db_eval batch[3] = {
        eval(f.run, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 1.0),
        eval(f.run, f.prob, "bx=8", FDT_DB_OK, FDT_DB_FULL, 1.0),
        eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 1.0), /* duplicate */
    };
    assert_int_equal(fdt_db_eval_insert_batch(f.db, batch, 3, NULL, &e), -1);
    assert_contains(e.msg, "3 of 3 (none recorded)");
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM evaluations"), 2);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM configs WHERE key = 'bx=16'"), 0);

    /* Checked before any SQL. */
    ev = eval(f.run, f.prob, "bx=4", FDT_DB_OK, FDT_DB_FULL, NAN);
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), -1);
    assert_contains(e.msg, "positive median time");
    ev = eval(f.run, f.prob, "by=8,bx=4", FDT_DB_OK, FDT_DB_FULL, 1.0);
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), -1);
    assert_contains(e.msg, "not canonical");
    /* Unknown problem: the foreign key says no. */
    ev = eval(f.run, 9999, "bx=4", FDT_DB_OK, FDT_DB_FULL, 1.0);
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), -1);
    assert_contains(e.msg, "FOREIGN KEY");
    /* The database itself refuses an evaluation whose device is not its run's. */
    fdt_device d2 = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-other");
    int64_t dev2;
    assert_int_equal(fdt_db_device_id(f.db, &d2, &dev2, &e), 0);
    int64_t cfg2;
    assert_int_equal(fdt_db_config_id(f.db, "bx=2", &cfg2, &e), 0);
    sqlite3 *h = fdt_dbi_handle(f.db);
    char sql[512];
    const char *ins = "INSERT INTO evaluations (run_id, problem_id, config_id, device_id, env_id,"
                      " status, stage, time_ms, message) VALUES (%lld, %lld, %lld, %lld, %lld,"
                      " 'ok', 'full', 1.0, '')";
    snprintf(sql, sizeof sql, ins, (long long)f.run, (long long)f.prob, (long long)cfg2,
             (long long)dev2, (long long)f.env);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_CONSTRAINT_FOREIGNKEY);

    /* A finished run takes no more evaluations, and finishes once. */
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);
    ev = eval(f.run, f.prob, "bx=4", FDT_DB_OK, FDT_DB_FULL, 1.0);
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), -1);
    assert_contains(e.msg, "is done, not running");
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_FAILED, &e), -1);
    assert_contains(e.msg, "run is done, not running");
    assert_int_equal(fdt_db_run_finish(f.db, 4242, FDT_DB_DONE, &e), -1);
    assert_contains(e.msg, "no such run");
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM evaluations"), 2);
    assert_int_equal(fdt_db_check(f.db, &e), 0);
    fdt_db_close(f.db);
}

static void test_full_disk(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "full.db");
    fdt_err e = {""};
    fdt_db_eval ev = eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 1.0);
    assert_int_equal(fdt_db_eval_insert(f.db, &ev, NULL, &e), 0);
    int64_t before = sql_int(f.path, "SELECT count(*) FROM evaluations");

    /* Cap the file at its current size: the next pages cannot be allocated. */
    sqlite3 *h = fdt_dbi_handle(f.db);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA page_count", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int pages = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA max_page_count = %d", pages);
    assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);

    enum { N = 500 };
    fdt_db_eval *evs = calloc(N, sizeof *evs);
    assert_non_null(evs);
    char key[64];
    for (int i = 0; i < N; i++) {
        cfg_key(i + 1, key, sizeof key);
        evs[i] = eval(f.run, f.prob, key, FDT_DB_OK, FDT_DB_FULL, 1.0 + i);
        memset(evs[i].message, 'x', 900);
        evs[i].message[900] = 0;
    }
    assert_int_equal(fdt_db_eval_insert_batch(f.db, evs, N, NULL, &e), -1);
    assert_contains(e.msg, "full");
    print_message("full disk: %s\n", e.msg);
    assert_contains(e.msg, "rolled back");
    assert_true(sqlite3_get_autocommit(h)); /* no transaction left open */
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM evaluations"), before);
    assert_int_equal(fdt_db_check(f.db, &e), 0);

    /* Space again: the same batch goes in whole. */
    assert_int_equal(sqlite3_exec(h, "PRAGMA max_page_count = 1000000", NULL, NULL, NULL),
                     SQLITE_OK);
    assert_int_equal(fdt_db_eval_insert_batch(f.db, evs, N, NULL, &e), 0);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM evaluations"), before + N);
    free(evs);
    fdt_db_close(f.db);
}

/* ------------------------------------------------------------------ runs, history, top */

static int collect_run(void *ctx, const fdt_db_run *r)
{
    fdt_db_run *out = ctx;
    int i = 0;
    while (out[i].id)
        i++;
    out[i] = *r;
    return 0;
}

static void test_runs_history_top(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "runs.db");
    fdt_err e = {""};
    fdt_db_eval a[] = {
        eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 2.0),
        eval(f.run, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 3.0),
        eval(f.run, f.prob, "bx=8", FDT_DB_CRASHED, FDT_DB_FULL, NAN),
    };
    assert_int_equal(fdt_db_eval_insert_batch(f.db, a, 3, NULL, &e), 0);
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);

    /* A retune in a newer environment re-measures bx=32, slower now. */
    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    snprintf(d.driver_version, sizeof d.driver_version, "590.10");
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    int64_t env2;
    assert_int_equal(fdt_db_env_id(f.db, &v, &env2, &e), 0);
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.kind = FDT_DB_RETUNE;
    r.device_id = f.dev;
    r.env_id = env2;
    snprintf(r.command, sizeof r.command, "fdtune retune");
    snprintf(r.host, sizeof r.host, "nightly-box");
    int64_t run2;
    assert_int_equal(fdt_db_run_begin(f.db, &r, &run2, &e), 0);
    assert_true(run2 > f.run);
    assert_int_equal(fdt_db_run_set_copy(f.db, run2, 2950.0, &e), 0);
    fdt_db_eval b[] = {
        eval(run2, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 2.5),
        eval(run2, f.prob, "bx=4", FDT_DB_OK, FDT_DB_FULL, 2.75),
    };
    assert_int_equal(fdt_db_eval_insert_batch(f.db, b, 2, NULL, &e), 0);

    /* Runs, newest first, with counts; the first is done, the retune still running. */
    fdt_db_run list[4];
    memset(list, 0, sizeof list);
    assert_int_equal(fdt_db_runs(f.db, NULL, 0, collect_run, list, &e), 0);
    assert_int_equal(list[0].id, run2);
    assert_int_equal(list[1].id, f.run);
    assert_int_equal(list[2].id, 0);
    assert_int_equal(list[0].status, FDT_DB_RUNNING);
    assert_int_equal(list[0].kind, FDT_DB_RETUNE);
    assert_string_equal(list[0].finished, "");
    assert_string_equal(list[0].host, "nightly-box");
    assert_true(list[0].copy_gbs == 2950.0);
    assert_int_equal(list[0].n_evals, 2);
    assert_int_equal(list[1].status, FDT_DB_DONE);
    assert_int_equal(list[1].n_evals, 3);
    assert_int_equal(list[1].n_ok, 2);
    assert_int_equal(list[1].seed, 0xfedcba9876543210ULL);
    assert_int_equal(list[1].budget, 100);
    assert_int_equal(list[1].pid, getpid());
    assert_string_equal(list[1].command, "fdtune --gpu H100 --R 4 --grid 512^3");
    assert_true(strcmp(list[1].finished, list[1].started) >= 0);
    char host[256];
    gethostname(host, sizeof host);
    assert_string_equal(list[1].host, host);
    memset(list, 0, sizeof list);
    assert_int_equal(fdt_db_runs(f.db, NULL, 1, collect_run, list, &e), 0);
    assert_int_equal(list[1].id, 0);
    fdt_db_filter flt;
    fdt_db_filter_init(&flt);
    flt.gpu = "mi300";
    memset(list, 0, sizeof list);
    assert_int_equal(fdt_db_runs(f.db, &flt, 0, collect_run, list, &e), 0);
    assert_int_equal(list[0].id, 0);
    /* Evaluations of the retune have frac_copy from the copy bandwidth set later. */
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_run_evals(f.db, run2, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    assert_true(fabs(rs.r[0].ev.frac_copy - 400.0 / 2950.0) < 1e-12);
    assert_int_equal(rs.r[0].ev.env_id, env2);

    /* History of bx=32: both runs, oldest first, each with its environment. */
    fdt_problem p = problem(FDT_OP_LAP, 4, 512, 512, 512);
    rs.n = 0;
    assert_int_equal(fdt_db_history(f.db, &p, "bx=32", 0, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.r[0].ev.run_id, f.run);
    assert_true(rs.r[0].ev.time_ms == 2.0);
    assert_string_equal(rs.r[0].env.driver, "580.65.06");
    assert_int_equal(rs.r[1].ev.run_id, run2);
    assert_string_equal(rs.r[1].env.driver, "590.10");
    rs.n = 0;
    assert_int_equal(fdt_db_history(f.db, &p, "bx=32", f.dev + 1, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0);

    /* Top: one row per config at its best, in any environment or in one. */
    rs.n = 0;
    assert_int_equal(fdt_db_top(f.db, f.dev, f.prob, 0, 10, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 3);
    assert_string_equal(rs.r[0].ev.config, "bx=32");
    assert_true(rs.r[0].ev.time_ms == 2.0);
    assert_string_equal(rs.r[1].ev.config, "bx=4");
    assert_string_equal(rs.r[2].ev.config, "bx=16");
    rs.n = 0;
    assert_int_equal(fdt_db_top(f.db, f.dev, f.prob, 0, 2, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    rs.n = 0;
    assert_int_equal(fdt_db_top(f.db, f.dev, f.prob, env2, 10, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    assert_true(rs.r[0].ev.time_ms == 2.5);

    /* Replay / resume reads: all evaluations of (device, problem), by environment. */
    rs.n = 0;
    assert_int_equal(fdt_db_evals(f.db, f.dev, 0, f.prob, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 5);
    rs.n = 0;
    assert_int_equal(fdt_db_evals(f.db, f.dev, f.env, f.prob, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 3);

    /* Devices listing. */
    fdt_device dev;
    assert_int_equal(fdt_db_device_get(f.db, f.dev, &dev, &e), 0);
    assert_string_equal(dev.uuid, "GPU-aaaa");
    assert_int_equal(fdt_db_device_get(f.db, 77, &dev, &e), -1);

    /* Stale runs: ours is alive, so nothing is marked. */
    int n = -1;
    assert_int_equal(fdt_db_run_mark_stale(f.db, &n, &e), 0);
    assert_int_equal(n, 0);
    fdt_db_run got;
    assert_int_equal(fdt_db_run_get(f.db, run2, &got, &e), 0);
    assert_int_equal(got.status, FDT_DB_RUNNING);
    assert_int_equal(fdt_db_run_finish(f.db, run2, FDT_DB_INTERRUPTED, &e), 0);
    assert_int_equal(fdt_db_run_get(f.db, run2, &got, &e), 0);
    assert_int_equal(got.status, FDT_DB_INTERRUPTED);
    assert_true(got.finished[0] != 0);
    fdt_db_close(f.db);
}

/* ------------------------------------------------------------------ nearest */

static void add_best(fdt_db *db, const fdt_device *d, fdt_problem p, const char *config,
                     double t)
{
    fdt_err e = {""};
    int64_t dev, env, prob;
    fdt_db_env v;
    fdt_db_env_from_device(d, "0.1.0", &v);
    if (fdt_db_device_id(db, d, &dev, &e) || fdt_db_env_id(db, &v, &env, &e) ||
        fdt_db_problem_id(db, &p, &prob, &e))
        fail_msg("%s", e.msg);
    int64_t run = begin_run(db, dev, env, 3000.0);
    fdt_db_eval ev = eval(run, prob, config, FDT_DB_OK, FDT_DB_FULL, t);
    if (fdt_db_eval_insert(db, &ev, NULL, &e))
        fail_msg("%s", e.msg);
    /* A faster failure that must never be chosen. */
    ev = eval(run, prob, "bx=1", FDT_DB_WRONG, FDT_DB_FULL, t / 10);
    if (fdt_db_eval_insert(db, &ev, NULL, &e) || fdt_db_run_finish(db, run, FDT_DB_DONE, &e))
        fail_msg("%s", e.msg);
}

static void nearest(fdt_db *db, const fdt_device *d, fdt_problem p, const char *gen,
                    fdt_db_fallback want, const char *config)
{
    fdt_device dev = *d;
    fdt_db_row row;
    fdt_db_fallback which = (fdt_db_fallback)-1;
    fdt_err e = {""};
    if (fdt_db_nearest(db, &dev, &p, gen, &row, &which, &e))
        fail_msg("%s", e.msg);
    if (which != want)
        fail_msg("nearest for %s %lldx%lldx%lld: got %s, want %s", d->name, (long long)p.nx,
                 (long long)p.ny, (long long)p.nz, fdt_db_fallback_name(which),
                 fdt_db_fallback_name(want));
    if (config)
        assert_string_equal(row.ev.config, config);
}

static void test_nearest(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "nearest.db");
    fdt_db *db = open_ok(path, FDT_DB_CREATE);
    fdt_device sxm = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-1");
    fdt_device sxm2 = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-2");
    fdt_device pcie = device("NVIDIA H100 PCIe", "sm_90", 114, GB80, "GPU-3");
    fdt_device h200 = device("NVIDIA H200", "sm_90", 132, 141LL << 30, "GPU-4");
    fdt_device b200 = device("NVIDIA B200", "sm_100", 148, 180LL << 30, "GPU-5");
    fdt_device mi = device("AMD Instinct MI250X", "gfx90a", 110, 64LL << 30, "GPU-6");
    snprintf(mi.backend, sizeof mi.backend, "hip");
    snprintf(mi.vendor, sizeof mi.vendor, "AMD");

    add_best(db, &sxm, problem(FDT_OP_LAP, 4, 512, 512, 512), "bx=32", 2.0);
    add_best(db, &sxm, problem(FDT_OP_LAP, 4, 256, 256, 256), "bx=16", 0.3);
    add_best(db, &sxm, problem(FDT_OP_LAP, 4, 1024, 512, 256), "by=8", 2.0); /* = 512^3 volume */
    add_best(db, &sxm2, problem(FDT_OP_LAP, 4, 128, 128, 128), "bx=8", 0.05);
    add_best(db, &pcie, problem(FDT_OP_LAP, 2, 1024, 1024, 1024), "nw=64", 20.0);
    add_best(db, &h200, problem(FDT_OP_LAP, 2, 512, 512, 512), "nw=32", 2.0);
    add_best(db, &pcie, problem(FDT_OP_LAP, 2, 256, 256, 256), "tile=2", 0.1);
    add_best(db, &h200, problem(FDT_OP_LAP, 2, 256, 256, 256), "tile=4", 0.2);
    add_best(db, &b200, problem(FDT_OP_D2Z, 4, 512, 512, 512), "nw=16", 1.0);

    /* 1: exact grid on this device model (also from the sibling GPU of the same model). */
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 512, 512, 512), NULL, FDT_DB_NEAREST_EXACT, "bx=32");
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 128, 128, 128), NULL, FDT_DB_NEAREST_EXACT, "bx=8");
    nearest(db, &sxm2, problem(FDT_OP_LAP, 4, 256, 256, 256), NULL, FDT_DB_NEAREST_EXACT,
            "bx=16");
    /* 2: nearest tuned grid on this model: 400^3 is nearest 512^3 by volume... */
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 400, 400, 400), NULL, FDT_DB_NEAREST_GRID, "bx=32");
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 300, 300, 300), NULL, FDT_DB_NEAREST_GRID, "bx=16");
    /* ... and between equal volumes the nearer xy plane decides: 1024x1024x128 has the
     * volume of 512^3 and of 1024x512x256, and the plane of the latter is nearer. */
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 2048, 2048, 2048), NULL, FDT_DB_NEAREST_GRID, "by=8");
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 1024, 1024, 128), NULL, FDT_DB_NEAREST_GRID, "by=8");
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 512, 512, 512), NULL, FDT_DB_NEAREST_EXACT, "bx=32");
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 256, 256, 2048), NULL, FDT_DB_NEAREST_GRID, "bx=32");
    /* 3: same arch, another model: R=2 is tuned on the PCIe card (other SM count) and on
     * the H200 (same SM count, more memory). The grid decides first, then the unit count. */
    nearest(db, &sxm, problem(FDT_OP_LAP, 2, 1024, 1024, 1024), NULL, FDT_DB_NEAREST_ARCH,
            "nw=64");
    nearest(db, &sxm, problem(FDT_OP_LAP, 2, 512, 512, 512), NULL, FDT_DB_NEAREST_ARCH, "nw=32");
    /* Equal grids on both: the nearer unit count wins over the faster PCIe result. */
    nearest(db, &sxm, problem(FDT_OP_LAP, 2, 256, 256, 256), NULL, FDT_DB_NEAREST_ARCH, "tile=4");
    nearest(db, &pcie, problem(FDT_OP_LAP, 2, 256, 256, 256), NULL, FDT_DB_NEAREST_EXACT,
            "tile=2");
    nearest(db, &pcie, problem(FDT_OP_LAP, 4, 512, 512, 512), NULL, FDT_DB_NEAREST_ARCH, "bx=32");
    /* 4: nothing for this arch, this op or this generator. */
    nearest(db, &mi, problem(FDT_OP_LAP, 4, 512, 512, 512), NULL, FDT_DB_NEAREST_NONE, NULL);
    nearest(db, &sxm, problem(FDT_OP_D2Z, 4, 512, 512, 512), NULL, FDT_DB_NEAREST_NONE, NULL);
    nearest(db, &sxm, problem(FDT_OP_LAP, 8, 512, 512, 512), NULL, FDT_DB_NEAREST_NONE, NULL);
    fdt_problem f64 = problem(FDT_OP_LAP, 4, 512, 512, 512);
    f64.prec = FDT_F64;
    nearest(db, &sxm, f64, NULL, FDT_DB_NEAREST_NONE, NULL);
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 512, 512, 512), "not-this-generator",
            FDT_DB_NEAREST_NONE, NULL);
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 512, 512, 512), fdt_gen_fingerprint(),
            FDT_DB_NEAREST_EXACT, "bx=32");
    nearest(db, &b200, problem(FDT_OP_D2Z, 4, 512, 512, 512), NULL, FDT_DB_NEAREST_EXACT,
            "nw=16");
    assert_string_equal(fdt_db_fallback_name(FDT_DB_NEAREST_ARCH), "arch");
    assert_string_equal(fdt_db_fallback_name(FDT_DB_NEAREST_MODEL), "model");
    assert_string_equal(fdt_db_source_name(FDT_DB_MODEL), "model");
    fdt_db_close(db);

    /* The model's answers rank after every measured result of the architecture, whatever
     * their grid and model, and answer nothing of another architecture. */
    fdtuned_request q = {"AMD Instinct MI250X", "gfx90a", 110, 512, 512, 512};
    fdtuned_result other = {"AMD Instinct MI210", "gfx90a:xnack-", 104, 64, 64, 64, 9.0, 1, 0};
    fdtuned_result pred = {"AMD Instinct MI250X", "gfx90a", 110, 512, 512, 512, 0.1, 2, 1};
    fdtuned_result pred_far = {"AMD Instinct MI250X", "gfx90a", 110, 64, 64, 64, 0.1, 3, 1};
    fdtuned_result pred_sm = {"NVIDIA H100", "sm_90", 132, 512, 512, 512, 0.1, 4, 1};
    assert_int_equal(fdtuned_rung(&q, &other), FDTUNED_RUNG_ARCH);
    assert_int_equal(fdtuned_rung(&q, &pred), FDTUNED_RUNG_MODEL);
    assert_int_equal(fdtuned_rung(&q, &pred_sm), FDTUNED_RUNG_NONE);
    assert_true(fdtuned_rank(&q, &other, &pred) < 0);
    assert_true(fdtuned_rank(&q, &pred, &pred_far) < 0); /* then the nearest grid */
    assert_false(fdtuned_same_slot(&pred, &(fdtuned_result){"AMD Instinct MI250X", "gfx90a",
                                                             110, 512, 512, 512, 1.0, 5, 0}));

    /* Read-only is enough for queries. */
    db = open_ok(path, FDT_DB_READONLY);
    nearest(db, &sxm, problem(FDT_OP_LAP, 4, 400, 400, 400), NULL, FDT_DB_NEAREST_GRID, "bx=32");
    fdt_db_close(db);
}

/* The rules of the ladder, one at a time. */
static void test_nearest_rules(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "rules.db");
    fdt_db *db = open_ok(path, FDT_DB_CREATE);
    fdt_device mi = device("AMD Instinct MI250X", "gfx90a", 110, 64LL << 30, "GPU-m1");
    snprintf(mi.backend, sizeof mi.backend, "hip");
    snprintf(mi.vendor, sizeof mi.vendor, "AMD");
    fdt_device mi210 = mi;
    snprintf(mi210.name, sizeof mi210.name, "AMD Instinct MI210");
    mi210.compute_units = 104;
    snprintf(mi210.uuid, sizeof mi210.uuid, "GPU-m2");
    /* a window of 512 planes, tuned on 512^3, cannot run nz = 100 */
    add_best(db, &mi, problem(FDT_OP_LAP, 6, 512, 512, 512), "nw=512", 1.0);
    add_best(db, &mi, problem(FDT_OP_LAP, 6, 256, 256, 256), "nw=16", 0.2);
    nearest(db, &mi, problem(FDT_OP_LAP, 6, 900, 900, 100), NULL, FDT_DB_NEAREST_GRID, "nw=16");
    nearest(db, &mi, problem(FDT_OP_LAP, 6, 900, 900, 600), NULL, FDT_DB_NEAREST_GRID, "nw=512");
    /* nothing that can run the grid: none (fdt_config_fallback answers) */
    nearest(db, &mi, problem(FDT_OP_LAP, 6, 64, 64, 8), NULL, FDT_DB_NEAREST_NONE, NULL);
    /* one model: memory and features do not count, name and compute units do */
    fdt_device q = mi;
    q.mem_bytes = 128LL << 30;
    snprintf(q.uuid, sizeof q.uuid, "GPU-other");
    nearest(db, &q, problem(FDT_OP_LAP, 6, 256, 256, 256), NULL, FDT_DB_NEAREST_EXACT, "nw=16");
    snprintf(q.arch, sizeof q.arch, "gfx90a:sramecc+:xnack-");
    nearest(db, &q, problem(FDT_OP_LAP, 6, 256, 256, 256), NULL, FDT_DB_NEAREST_EXACT, "nw=16");
    q = mi;
    snprintf(q.name, sizeof q.name, "AMD Instinct MI250");
    nearest(db, &q, problem(FDT_OP_LAP, 6, 256, 256, 256), NULL, FDT_DB_NEAREST_ARCH, "nw=16");
    q = mi;
    q.compute_units = 104;
    nearest(db, &q, problem(FDT_OP_LAP, 6, 256, 256, 256), NULL, FDT_DB_NEAREST_ARCH, "nw=16");
    q = mi;
    snprintf(q.arch, sizeof q.arch, "sm_90"); /* never the same arch as gfx90a */
    nearest(db, &q, problem(FDT_OP_LAP, 6, 256, 256, 256), NULL, FDT_DB_NEAREST_NONE, NULL);
    /* a result stored with features answers its base arch */
    fdt_device featured = mi;
    snprintf(featured.arch, sizeof featured.arch, "gfx90a:xnack-");
    snprintf(featured.uuid, sizeof featured.uuid, "GPU-m3");
    add_best(db, &featured, problem(FDT_OP_D2Z, 6, 256, 256, 256), "bx=32", 0.1);
    nearest(db, &mi, problem(FDT_OP_D2Z, 6, 256, 256, 256), NULL, FDT_DB_NEAREST_EXACT, "bx=32");

    /* rung before grid: this model on another grid beats another model on this grid */
    add_best(db, &mi, problem(FDT_OP_LAP, 3, 512, 512, 512), "by=2", 1.0);
    add_best(db, &mi210, problem(FDT_OP_LAP, 3, 256, 256, 256), "by=8", 0.1);
    nearest(db, &mi, problem(FDT_OP_LAP, 3, 256, 256, 256), NULL, FDT_DB_NEAREST_GRID, "by=2");
    nearest(db, &mi210, problem(FDT_OP_LAP, 3, 512, 512, 512), NULL, FDT_DB_NEAREST_GRID,
            "by=8");
    /* another model: volume before plane before compute units */
    fdt_device far = mi;
    snprintf(far.name, sizeof far.name, "AMD Instinct MI100");
    far.compute_units = 120;
    snprintf(far.uuid, sizeof far.uuid, "GPU-m4");
    fdt_device near = far;
    snprintf(near.name, sizeof near.name, "AMD Instinct MI200");
    near.compute_units = 100;
    snprintf(near.uuid, sizeof near.uuid, "GPU-m5");
    add_best(db, &far, problem(FDT_OP_LAP, 2, 256, 256, 256), "bx=128", 0.5);  /* CUs 120 */
    add_best(db, &near, problem(FDT_OP_LAP, 2, 512, 512, 64), "bx=256", 0.5);  /* CUs 100 */
    add_best(db, &near, problem(FDT_OP_LAP, 2, 400, 400, 400), "bx=16", 0.01); /* CUs 100 */
    fdt_device asker = mi; /* a model never tuned, nearer the MI100 by compute units */
    snprintf(asker.name, sizeof asker.name, "AMD Instinct MI250 (asker)");
    asker.compute_units = 118;
    /* 256^3 and 512x512x64 have one volume; 256^3's plane is nearer 256^3 */
    nearest(db, &asker, problem(FDT_OP_LAP, 2, 256, 256, 256), NULL, FDT_DB_NEAREST_ARCH,
            "bx=128");
    /* 512x512x64's plane is nearer 512x512x64 even though the MI100 has nearer CUs */
    asker.compute_units = 119;
    nearest(db, &asker, problem(FDT_OP_LAP, 2, 512, 512, 64), NULL, FDT_DB_NEAREST_ARCH,
            "bx=256");
    /* the volume comes first: 400^3 is nearer 380^3 than the others, slower CUs or not */
    nearest(db, &asker, problem(FDT_OP_LAP, 2, 380, 380, 380), NULL, FDT_DB_NEAREST_ARCH,
            "bx=16");
    /* equal grids: the nearer compute-unit count, not the faster result */
    add_best(db, &near, problem(FDT_OP_LAP, 2, 256, 256, 256), "bx=512", 0.001);
    nearest(db, &asker, problem(FDT_OP_LAP, 2, 256, 256, 256), NULL, FDT_DB_NEAREST_ARCH,
            "bx=128");
    asker.compute_units = 101;
    nearest(db, &asker, problem(FDT_OP_LAP, 2, 256, 256, 256), NULL, FDT_DB_NEAREST_ARCH,
            "bx=512");
    fdt_db_close(db);
}

/* One model: (name, base arch, compute units). */
static void test_same_model(void **state)
{
    (void)state;
    fdt_device a = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-1");
    fdt_device b = a;
    b.mem_bytes = 94LL << 30; /* ECC, reservations, drivers: memory varies on one model */
    snprintf(b.uuid, sizeof b.uuid, "GPU-2");
    snprintf(b.pci, sizeof b.pci, "0000:3b:00.0");
    assert_true(fdt_device_same_model(&a, &b));
    snprintf(b.name, sizeof b.name, "NVIDIA H100 PCIe");
    assert_false(fdt_device_same_model(&a, &b));
    b = a;
    b.compute_units = 66; /* a MIG slice reports fewer SMs */
    assert_false(fdt_device_same_model(&a, &b));
    fdt_device m = device("AMD Instinct MI250X", "gfx90a", 110, 64LL << 30, "GPU-3");
    fdt_device n = m;
    snprintf(n.arch, sizeof n.arch, "gfx90a:sramecc+:xnack-");
    assert_true(fdt_device_same_model(&m, &n));
    snprintf(m.arch, sizeof m.arch, "gfx90a:sramecc-:xnack+");
    assert_true(fdt_device_same_model(&m, &n));
    snprintf(n.arch, sizeof n.arch, "gfx90");
    assert_false(fdt_device_same_model(&m, &n));
    /* sm_90 and gfx90a are never one model, whatever the rest says */
    fdt_device s = m;
    snprintf(s.arch, sizeof s.arch, "sm_90");
    assert_false(fdt_device_same_model(&m, &s));
    assert_false(fdtuned_same_arch("sm_90", "gfx90a"));
    assert_false(fdtuned_same_arch("", ""));
    assert_string_equal(fdtuned_arch_backend("sm_90"), "cuda");
    assert_string_equal(fdtuned_arch_backend("gfx90a:xnack-"), "hip");
    assert_string_equal(fdtuned_arch_vendor("gfx942"), "AMD");
    assert_string_equal(fdtuned_arch_vendor("sm_100"), "NVIDIA");
    assert_string_equal(fdtuned_arch_backend("x86"), "");
    /* fdtune's own rule: the backend that claims an arch, built into this binary or not */
    assert_string_equal(fdt_device_claim_of("sm_90")->backend, "cuda");
    assert_string_equal(fdt_device_claim_of("sm_100a")->vendor, "NVIDIA");
    assert_string_equal(fdt_device_claim_of("gfx90a:xnack-")->backend, "hip");
    assert_string_equal(fdt_device_claim_of("gfx942")->vendor, "AMD");
    assert_null(fdt_device_claim_of("x86"));
    assert_null(fdt_device_claim_of(""));
    assert_null(fdt_device_claim_of(NULL));
    assert_null(fdt_device_claim_of("SM_90")); /* names are lower case */
    /* the host CPU's ISA levels are the cpu backend's; a CPU's vendor is its own */
    assert_string_equal(fdt_device_claim_of("x86-64-v3")->backend, "cpu");
    assert_string_equal(fdt_device_claim_of("aarch64-sve")->backend, "cpu");
    assert_string_equal(fdt_device_claim_of("x86-64-v4")->vendor, "");
    assert_null(fdt_device_claim_of("x86-64-v5"));
    static const char *const example[] = {"sm_80", "gfx908", "aarch64"};
    for (int i = 0; fdt_device_claim_at(i); i++)
        assert_ptr_equal(fdt_device_claim_of(example[i]), fdt_device_claim_at(i));
    assert_null(fdt_device_claim_at(3));
}

/* A live device completed by the catalogue, stored and read back, keeps its identity. */
static void test_device_roundtrip(void **state)
{
    (void)state;
    char path[512], gpus[1200];
    const char *src = getenv("FDTUNE_TEST_SRC");
    snprintf(gpus, sizeof gpus, "%s/recipes/gpus.lua", src && *src ? src : ".");
    fdt_err e = {""};
    fdt_catalogue *cat;
    if (fdt_catalogue_load(gpus, &cat, &e))
        fail_msg("%s", e.msg);
    fdt_device live = device("AMD Instinct MI250X", "gfx90a", 110, 68702699520LL, "GPU-rt");
    snprintf(live.backend, sizeof live.backend, "hip");
    snprintf(live.vendor, sizeof live.vendor, "AMD");
    snprintf(live.pci, sizeof live.pci, "0000:c1:00");
    live.warp_size = 64;
    live.l2_bytes = 8 << 20;
    live.index = 3;
    live.live = 1;
    fdt_device d = live;
    fdt_catalogue_complete(cat, &d);
    fdt_catalogue_free(cat);
    assert_string_equal(d.catalogue, "MI250X");
    assert_int_equal(d.live, 1);
    path_in(path, sizeof path, "device.db");
    fdt_db *db = open_ok(path, FDT_DB_CREATE);
    int64_t id = 0, again = 0;
    assert_int_equal(fdt_db_device_id(db, &d, &id, &e), 0);
    assert_int_equal(fdt_db_device_id(db, &live, &again, &e), 0);
    assert_int_equal(again, id); /* completing did not change the identity */
    fdt_device back;
    assert_int_equal(fdt_db_device_get(db, id, &back, &e), 0);
    fdt_db_close(db);
    assert_int_equal(back.id, id);
    assert_string_equal(back.backend, live.backend);
    assert_string_equal(back.vendor, live.vendor);
    assert_string_equal(back.name, live.name);
    assert_string_equal(back.arch, live.arch);
    assert_int_equal(back.compute_units, live.compute_units);
    assert_int_equal(back.warp_size, live.warp_size);
    assert_int_equal(back.l2_bytes, live.l2_bytes);
    assert_int_equal(back.mem_bytes, live.mem_bytes);
    assert_string_equal(back.uuid, live.uuid);
    assert_string_equal(back.pci, live.pci);
    assert_true(fdt_device_same_model(&back, &d));
    assert_int_equal(back.live, 0);   /* provenance: from the database, not a visible GPU */
    assert_int_equal(back.index, -1);
}

/* ------------------------------------------------------------------ best decisions (v2) */

static int64_t insert_one(fdt_db *db, fdt_db_eval ev)
{
    fdt_err e = {""};
    int64_t id = 0;
    if (fdt_db_eval_insert(db, &ev, &id, &e))
        fail_msg("insert %s: %s", ev.config, e.msg);
    return id;
}

static void best_is(fdt_db *db, const fdt_db_filter *f, int64_t prob, int64_t want_id)
{
    rows rs = {.n = 0};
    fdt_err e = {""};
    if (fdt_db_best(db, f, collect, &rs, &e))
        fail_msg("best: %s", e.msg);
    for (int i = 0; i < rs.n && i < 64; i++)
        if (rs.r[i].ev.problem_id == prob) {
            if (rs.r[i].ev.id != want_id)
                fail_msg("best of problem %lld: evaluation %lld (%s), want %lld",
                         (long long)prob, (long long)rs.r[i].ev.id, rs.r[i].ev.config,
                         (long long)want_id);
            return;
        }
    fail_msg("best: no row for problem %lld", (long long)prob);
}

static void test_decisions(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "decisions.db");
    fdt_err e = {""};
    int64_t slow = insert_one(f.db, eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 2.0));
    int64_t fast = insert_one(f.db, eval(f.run, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 1.9));
    int64_t wrong = insert_one(f.db, eval(f.run, f.prob, "bx=8", FDT_DB_WRONG, FDT_DB_FULL, 1.0));
    int64_t probe = insert_one(f.db, eval(f.run, f.prob, "bx=4", FDT_DB_OK, FDT_DB_PROBE, 1.0));
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM best_decisions"), 0);

    /* No decision: the smallest median, as in v1. */
    fdt_db_decision d;
    int found = -1;
    assert_int_equal(fdt_db_best_decision(f.db, f.dev, f.prob, &d, &found, &e), 0);
    assert_int_equal(found, 0);
    best_is(f.db, NULL, f.prob, fast);

    /* A decision pins the slower one (e.g. the faster is within noise of it). */
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, slow, 0, "test: pinned", &e), 0);
    assert_int_equal(fdt_db_best_decision(f.db, f.dev, f.prob, &d, &found, &e), 0);
    assert_int_equal(found, 1);
    assert_int_equal(d.eval_id, slow);
    assert_string_equal(d.reason, "test: pinned");
    assert_int_equal(strlen(d.decided_at), 24);
    best_is(f.db, NULL, f.prob, slow);
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT id FROM best_evaluations WHERE problem_id = %lld",
             (long long)f.prob);
    assert_int_equal(sql_int(f.path, sql), slow); /* the view agrees */
    /* A later, faster result does not take over by itself. */
    int64_t run2 = begin_run(f.db, f.dev, f.env, 3000.0);
    int64_t faster = insert_one(f.db, eval(run2, f.prob, "by=8", FDT_DB_OK, FDT_DB_FULL, 0.5));
    best_is(f.db, NULL, f.prob, slow);
    /* Top: the decided best first, then the other configs by their fastest evaluation. */
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_top(f.db, f.dev, f.prob, 0, 3, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 3);
    assert_int_equal(rs.r[0].ev.id, slow);
    assert_int_equal(rs.r[1].ev.id, faster);
    assert_int_equal(rs.r[2].ev.id, fast);
    /* The same config measured again, faster: the decided evaluation still leads. */
    int64_t again = insert_one(f.db, eval(run2, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 1.0));
    rs.n = 0;
    assert_int_equal(fdt_db_top(f.db, f.dev, f.prob, 0, 10, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 3); /* one row per config */
    assert_int_equal(rs.r[0].ev.id, slow);
    /* Nearest answers with the decision too. */
    fdt_device dev;
    assert_int_equal(fdt_db_device_get(f.db, f.dev, &dev, &e), 0);
    fdt_problem p = problem(FDT_OP_LAP, 4, 512, 512, 512);
    fdt_db_row row;
    fdt_db_fallback which;
    assert_int_equal(fdt_db_nearest(f.db, &dev, &p, NULL, &row, &which, &e), 0);
    assert_int_equal(which, FDT_DB_NEAREST_EXACT);
    assert_int_equal(row.ev.id, slow);

    /* The latest decision is in force. */
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, faster, 0, "test: faster", &e), 0);
    best_is(f.db, NULL, f.prob, faster);
    assert_int_equal(sql_int(f.path, sql), faster);
    assert_int_equal(fdt_db_best_decision(f.db, f.dev, f.prob, &d, &found, &e), 0);
    assert_int_equal(d.eval_id, faster);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM best_decisions"), 2);

    /* A decided evaluation outside the filter: the smallest median of what the filter keeps. */
    fdt_device di = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    snprintf(di.driver_version, sizeof di.driver_version, "590.10");
    fdt_db_env v;
    fdt_db_env_from_device(&di, "0.1.0", &v);
    int64_t env2;
    assert_int_equal(fdt_db_env_id(f.db, &v, &env2, &e), 0);
    int64_t run3 = begin_run(f.db, f.dev, env2, 3000.0);
    int64_t other_env = insert_one(f.db, eval(run3, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 3.0));
    insert_one(f.db, eval(run3, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 3.5));
    fdt_db_filter flt;
    fdt_db_filter_init(&flt);
    flt.env_id = env2;
    best_is(f.db, &flt, f.prob, other_env);
    flt.env_id = f.env;
    best_is(f.db, &flt, f.prob, faster);
    rs.n = 0;
    assert_int_equal(fdt_db_top(f.db, f.dev, f.prob, env2, 10, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.r[0].ev.id, other_env);

    /* Run best: decisions aside, the fastest ok full result of one run. */
    int got = 0;
    assert_int_equal(fdt_db_run_best(f.db, run2, f.prob, &row, &got, &e), 0);
    assert_int_equal(got, 1);
    assert_int_equal(row.ev.id, faster);
    assert_int_equal(fdt_db_run_best(f.db, f.run, f.prob, &row, &got, &e), 0);
    assert_int_equal(row.ev.id, fast); /* the wrong and the probe do not count */
    assert_int_equal(fdt_db_run_best(f.db, run3 + 100, f.prob, &row, &got, &e), 0);
    assert_int_equal(got, 0);
    (void)again;

    /* Newest run of the pair. */
    char last[32];
    assert_int_equal(fdt_db_last_run(f.db, f.dev, f.prob, last, sizeof last, &e), 0);
    fdt_db_run r3;
    assert_int_equal(fdt_db_run_get(f.db, run3, &r3, &e), 0);
    assert_string_equal(last, r3.started);
    assert_int_equal(fdt_db_last_run(f.db, f.dev, f.prob + 100, last, sizeof last, &e), 0);
    assert_string_equal(last, "");

    /* Refused: a wrong result, a probe, another problem's or device's evaluation, no reason. */
    fdt_problem p2 = problem(FDT_OP_D2Z, 4, 512, 512, 512);
    int64_t prob2;
    assert_int_equal(fdt_db_problem_id(f.db, &p2, &prob2, &e), 0);
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, wrong, 0, "x", &e), -1);
    assert_contains(e.msg, "ok full evaluation");
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, probe, 0, "x", &e), -1);
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, prob2, slow, 0, "x", &e), -1);
    assert_int_equal(fdt_db_best_decide(f.db, f.dev + 1, f.prob, slow, 0, "x", &e), -1);
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, slow, 0, "", &e), -1);
    assert_contains(e.msg, "reason");
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, 0, 0, "x", &e), -1);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM best_decisions"), 2);
    assert_int_equal(fdt_db_check(f.db, &e), 0);
    fdt_db_close(f.db);

    /* Read-only: answers the same, decides nothing. */
    fdt_db *ro = open_ok(f.path, FDT_DB_READONLY);
    best_is(ro, NULL, f.prob, faster);
    assert_int_equal(fdt_db_best_decide(ro, f.dev, f.prob, slow, 0, "x", &e), -1);
    assert_contains(e.msg, "read-only");
    fdt_db_close(ro);
}

/* Schema v4 (issue 16): a best decision says whether its search was cut short by the time
 * limit; the best rows carry the mark of the decision in force (0 without one); the CHECK
 * refuses anything but 0 and 1. A v3 file (made here by dropping the column again) is read
 * as it is read-only (no mark, file untouched) and migrated with its decisions kept. */
static void test_cut_short_v4(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "cut.db");
    fdt_err e = {""};
    int64_t a = insert_one(f.db, eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 2.0));
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_best(f.db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.r[0].cut_short, 0); /* no decision */
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, a, 1, "test: cut", &e), 0);
    fdt_db_decision d;
    int found = 0;
    assert_int_equal(fdt_db_best_decision(f.db, f.dev, f.prob, &d, &found, &e), 0);
    assert_int_equal(d.cut_short, 1);
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.r[0].ev.id, a);
    assert_int_equal(rs.r[0].cut_short, 1);
    fdt_db_close(f.db);
    char *err = NULL;
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open(f.path, &h), SQLITE_OK);
    assert_int_not_equal(sqlite3_exec(h, "UPDATE best_decisions SET cut_short = 2", NULL, NULL,
                                      &err),
                         SQLITE_OK);
    sqlite3_free(err);
    sqlite3_close(h);

    /* back to v3: the column gone, then read-only and migrated */
    sql_exec(f.path, DROP_V5 "ALTER TABLE best_decisions DROP COLUMN cut_short;"
                     "PRAGMA user_version = 3; PRAGMA journal_mode = DELETE;");
    size_t n;
    char *before = slurp(f.path, &n);
    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    rs.n = 0;
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.r[0].ev.id, a); /* the decision still counts */
    assert_int_equal(rs.r[0].cut_short, 0);
    assert_int_equal(fdt_db_best_decision(db, f.dev, f.prob, &d, &found, &e), 0);
    assert_int_equal(found, 1);
    assert_int_equal(d.cut_short, 0);
    fdt_db_close(db);
    assert_same_bytes(f.path, before, n);
    free(before);
    db = open_ok(f.path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(f.path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(fdt_db_check(db, &e), 0);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM best_decisions WHERE cut_short = 0"),
                     1);
    assert_int_equal(fdt_db_best_decide(db, f.dev, f.prob, a, 1, "test: cut again", &e), 0);
    rs.n = 0;
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.r[0].cut_short, 1);
    fdt_db_close(db);
}

/* Schema v7 (issue 30): a best decision says why its search stopped, with the headroom
 * (fdt_stop_describe); the best rows carry it ("" without one); the CHECKs refuse a text that
 * is not one of its forms or not one printable line. A v6 file (made here by dropping the
 * column) is read as it is read-only ("", file untouched) and migrated with its decisions. */
static void test_stopped_v7(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "stopped.db");
    fdt_err e = {""};
    int64_t a = insert_one(f.db, eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 2.0));
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_best_decide_stopped(f.db, f.dev, f.prob, a, 0, "within 0.8% of copy",
                                                "test: stopped", &e),
                     0);
    fdt_db_decision d;
    int found = 0;
    assert_int_equal(fdt_db_best_decision(f.db, f.dev, f.prob, &d, &found, &e), 0);
    assert_string_equal(d.stopped, "within 0.8% of copy");
    assert_int_equal(fdt_db_best(f.db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_string_equal(rs.r[0].stopped, "within 0.8% of copy");
    /* the schema refuses what is not a reason: another word, a second line, empty */
    static const char *const bad[] = {"because", "budget: 3 of 3\nx", "", "converged"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char sql[160];
        snprintf(sql, sizeof sql, "UPDATE best_decisions SET stopped = '%s'", bad[k]);
        sqlite3 *h = NULL;
        char *err = NULL;
        assert_int_equal(sqlite3_open(f.path, &h), SQLITE_OK);
        assert_int_not_equal(sqlite3_exec(h, sql, NULL, NULL, &err), SQLITE_OK);
        sqlite3_free(err);
        sqlite3_close(h);
    }
    assert_int_equal(fdt_db_best_decide_stopped(f.db, f.dev, f.prob, a, 0, "why not",
                                                "test: refused", &e),
                     -1);
    /* no reason known (an older decision, retune, merge): NULL, read as "" */
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, a, 0, "test: none", &e), 0);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM best_decisions WHERE stopped IS NULL"),
                     1);
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, NULL, collect, &rs, &e), 0);
    assert_string_equal(rs.r[0].stopped, "");
    assert_int_equal(fdt_db_best_decide_stopped(f.db, f.dev, f.prob, a, 0,
                                                "converged: 40 evaluations without gain",
                                                "test: again", &e),
                     0);
    fdt_db_close(f.db);

    /* back to v6: read-only as it is, then migrated with its decisions */
    sql_exec(f.path, DROP_V7 "PRAGMA journal_mode = DELETE;");
    size_t n;
    char *before = slurp(f.path, &n);
    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    rs.n = 0;
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.r[0].ev.id, a);
    assert_string_equal(rs.r[0].stopped, "");
    assert_int_equal(fdt_db_best_decision(db, f.dev, f.prob, &d, &found, &e), 0);
    assert_int_equal(found, 1);
    assert_string_equal(d.stopped, "");
    fdt_db_close(db);
    assert_same_bytes(f.path, before, n);
    free(before);
    db = open_ok(f.path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(f.path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(fdt_db_check(db, &e), 0);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM best_decisions WHERE stopped IS NULL"),
                     3);
    assert_int_equal(fdt_db_best_decide_stopped(db, f.dev, f.prob, a, 0, "budget: 40 of 40",
                                                "test: migrated", &e),
                     0);
    rs.n = 0;
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    assert_string_equal(rs.r[0].stopped, "budget: 40 of 40");
    fdt_db_close(db);
}

/* Every best answer of a database, as "device problem -> evaluation" lines. */
static char *best_answers(fdt_db *db)
{
    rows *rs = calloc(1, sizeof *rs);
    assert_non_null(rs);
    fdt_err e = {""};
    if (fdt_db_best(db, NULL, collect, rs, &e))
        fail_msg("best: %s", e.msg);
    assert_true(rs->n > 0 && rs->n <= 64);
    fdt_sb b;
    fdt_sb_init(&b);
    for (int i = 0; i < rs->n; i++)
        fdt_sb_printf(&b, "%lld %lld -> %lld %s %.9g\n", (long long)rs->r[i].ev.device_id,
                      (long long)rs->r[i].ev.problem_id, (long long)rs->r[i].ev.id,
                      rs->r[i].ev.config, rs->r[i].ev.time_ms);
    free(rs);
    return fdt_sb_take(&b);
}

/* A v1 file recorded by an earlier fdtune on an H100 (tests/data/h100-v1.db): read as it is
 * when opened read-only (the file untouched), migrated to the current schema by a read-write
 * open, with the same best answers before and after; the view and the integrity check agree. */
static void test_migrate_v1(void **state)
{
    (void)state;
    const char *src = getenv("FDTUNE_TEST_SRC");
    if (!src || !*src)
        skip();
    char from[1024], path[512];
    snprintf(from, sizeof from, "%s/tests/data/h100-v1.db", src);
    path_in(path, sizeof path, "v1.db");
    size_t n;
    char *bytes = slurp(from, &n);
    fdt_err e = {""};
    assert_int_equal(fdt_write_file_atomic(path, bytes, n, &e), 0);
    free(bytes);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), 1);
    char *before = slurp(path, &n);

    fdt_db *db = open_ok(path, FDT_DB_READONLY);
    char *v1 = best_answers(db);
    rows rs = {.n = 0};
    /* A pair of the file: top and decisions work on the stand-in table. */
    int64_t dev = sql_int(path, "SELECT device_id FROM evaluations LIMIT 1");
    int64_t prob = sql_int(path, "SELECT problem_id FROM evaluations LIMIT 1");
    assert_int_equal(fdt_db_top(db, dev, prob, 0, 3, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 3);
    fdt_db_decision d;
    int found = -1;
    assert_int_equal(fdt_db_best_decision(db, dev, prob, &d, &found, &e), 0);
    assert_int_equal(found, 0);
    fdt_db_close(db);
    assert_same_bytes(path, before, n); /* reading never migrates */
    free(before);

    db = open_ok(path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), fdt_db_schema_version());
    char *v2 = best_answers(db);
    assert_string_equal(v2, v1);
    assert_int_equal(fdt_db_check(db, &e), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM best_decisions"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM best_evaluations"),
                     sql_int(path, "SELECT count(*) FROM (SELECT DISTINCT device_id, problem_id"
                                   " FROM evaluations WHERE status = 'ok' AND stage = 'full')"));
    fdt_db_close(db);
    /* Read-only again, now migrated: still the same answers. */
    db = open_ok(path, FDT_DB_READONLY);
    char *again = best_answers(db);
    assert_string_equal(again, v1);
    fdt_db_close(db);
    free(v1);
    free(v2);
    free(again);
}

/* ------------------------------------------------------------------ clocks (v5) */

/* 1 when sql fails on the file (a CHECK refused it), through a connection of its own. */
static int sql_refused(const char *path, const char *sql)
{
    sqlite3 *h = NULL;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    int rc = sqlite3_exec(h, sql, NULL, NULL, NULL);
    sqlite3_close(h);
    return rc != SQLITE_OK;
}

/* A v4 file (the schema before the clocks: v5's columns dropped again): read as it is when
 * opened read-only (the file untouched), migrated by a read-write open with its run intact and
 * no clocks; then the clocks of a new run written and read back, and the CHECKs. */
static void test_migrate_v4(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "v3.db");
    fdt_err e = {""};
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);
    fdt_db_close(f.db);
    sql_exec(f.path, DROP_V5 "PRAGMA user_version = 4;");
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM pragma_table_info('runs')"
                                     " WHERE name LIKE '%mhz%'"), 0);
    size_t n;
    char *before = slurp(f.path, &n);
    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    fdt_db_run r;
    assert_int_equal(fdt_db_run_get(db, f.run, &r, &e), 0);
    assert_int_equal(r.status, FDT_DB_DONE);
    fdt_db_close(db);
    assert_same_bytes(f.path, before, n); /* reading never migrates */
    free(before);

    db = open_ok(f.path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(f.path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(fdt_db_check(db, &e), 0);
    assert_int_equal(fdt_db_run_get(db, f.run, &r, &e), 0);
    assert_int_equal(r.status, FDT_DB_DONE);
    assert_true(r.copy_gbs == 3000.0);
    fdt_clocks start, end;
    char src[8] = "x";
    assert_int_equal(fdt_db_run_clocks(db, f.run, &start, &end, src, sizeof src, &e), 0);
    assert_int_equal(start.known, 0);
    assert_int_equal(end.known, 0);
    assert_string_equal(src, "");

    /* a run of v4: its clocks at the start and the end, as the worker read them */
    int64_t run = begin_run(db, f.dev, f.env, 3000.0);
    fdt_clocks c;
    fdt_clocks_init(&c);
    assert_int_equal(fdt_db_run_set_clocks(db, run, FDT_DB_CLOCKS_START, "nvml", &c, &e), 0);
    assert_int_equal(sql_int(f.path, "SELECT driver_source IS NULL FROM runs ORDER BY id DESC"),
                     1); /* unknown clocks write nothing */
    c.known = 1;
    c.sm_mhz = 1755;
    c.sm_max_mhz = 1980;
    c.mem_mhz = c.mem_max_mhz = 2619;
    c.reasons_known = 1;
    c.reasons = FDT_THROTTLE_GPU_IDLE | FDT_THROTTLE_SW_THERMAL;
    assert_int_equal(fdt_db_run_set_clocks(db, run, FDT_DB_CLOCKS_START, "nvml", &c, &e), 0);
    c.sm_mhz = 1410;
    c.reasons = 0;
    assert_int_equal(fdt_db_run_set_clocks(db, run, FDT_DB_CLOCKS_END, NULL, &c, &e), 0);
    char q[256];
    snprintf(q, sizeof q, "SELECT throttle_start = 'gpu_idle,sw_thermal' AND throttle_end = ''"
             " AND sm_mhz_start = 1755 AND sm_mhz_end = 1410 AND sm_max_mhz = 1980 AND"
             " mem_mhz_end = 2619 AND driver_source = 'nvml' FROM runs WHERE id = %lld",
             (long long)run);
    assert_int_equal(sql_int(f.path, q), 1);
    assert_int_equal(fdt_db_run_clocks(db, run, &start, &end, src, sizeof src, &e), 0);
    assert_string_equal(src, "nvml");
    assert_int_equal(start.known, 1);
    assert_int_equal(start.sm_mhz, 1755);
    assert_int_equal(start.sm_max_mhz, 1980);
    assert_int_equal(start.reasons_known, 1);
    assert_int_equal(start.reasons, FDT_THROTTLE_GPU_IDLE | FDT_THROTTLE_SW_THERMAL);
    assert_int_equal(end.sm_mhz, 1410);
    assert_int_equal(end.mem_mhz, 2619);
    assert_int_equal(end.reasons_known, 1);
    assert_int_equal(end.reasons, 0);
    assert_int_equal(fdt_db_run_finish(db, run, FDT_DB_DONE, &e), 0);
    assert_int_equal(fdt_db_run_set_clocks(db, run, FDT_DB_CLOCKS_END, NULL, &c, &e), -1);
    assert_contains(e.msg, "run is done, not running");
    fdt_db_close(db);

    /* the CHECKs: where a driver version came from, clocks, names of reasons */
    assert_true(sql_refused(f.path, "UPDATE runs SET driver_source = 'proc'"));
    assert_true(sql_refused(f.path, "UPDATE runs SET sm_max_mhz = 0"));
    assert_true(sql_refused(f.path, "UPDATE runs SET sm_mhz_end = -1"));
    assert_true(sql_refused(f.path, "UPDATE runs SET throttle_end = 'SW Thermal'"));
    assert_true(sql_refused(f.path, "UPDATE runs SET sm_mhz_start = '1755 MHz'")); /* STRICT */
    assert_false(sql_refused(f.path, "UPDATE runs SET throttle_end = 'hw_slowdown,sw_thermal'"));
}

/* ------------------------------------------------------------------ processes */

/* Child side of the concurrency test: everything checked by hand, the result in the exit
 * status, never back into cmocka. */
static int writer(const char *path, int id, int nevals, int per_tx, int barrier)
{
    char c;
    if (read(barrier, &c, 1) < 0) /* returns 0 when the parent releases everyone at once */
        return 10;
    fdt_db *db;
    fdt_err e = {""};
    if (fdt_db_open(path, FDT_DB_CREATE, &db, &e)) {
        fprintf(stderr, "writer %d: %s\n", id, e.msg);
        return 11;
    }
    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    fdt_problem p = problem(FDT_OP_LAP, 4, 64 + id, 64, 64);
    int64_t dev, env, prob, run;
    fdt_db_run r;
    fdt_db_run_init(&r);
    if (fdt_db_device_id(db, &d, &dev, &e) || fdt_db_env_id(db, &v, &env, &e) ||
        fdt_db_problem_id(db, &p, &prob, &e))
        goto fail;
    r.device_id = dev;
    r.env_id = env;
    if (fdt_db_run_begin(db, &r, &run, &e))
        goto fail;
    fdt_db_eval batch[16];
    for (int i = 0; i < nevals; i += per_tx) {
        int n = 0;
        for (int j = i; j < i + per_tx && j < nevals; j++) {
            char key[64];
            cfg_key(j, key, sizeof key); /* the same keys in every writer */
            batch[n++] = eval(run, prob, key, FDT_DB_OK, FDT_DB_FULL, 1.0 + j);
        }
        if (fdt_db_eval_insert_batch(db, batch, (size_t)n, NULL, &e))
            goto fail;
    }
    if (fdt_db_run_finish(db, run, FDT_DB_DONE, &e))
        goto fail;
    fdt_db_close(db);
    return 0;
fail:
    fprintf(stderr, "writer %d: %s\n", id, e.msg);
    fdt_db_close(db);
    return 12;
}

static int reader(const char *path, int barrier)
{
    char c;
    if (read(barrier, &c, 1) < 0)
        return 10;
    fdt_err e = {""};
    int queries = 0;
    for (int i = 0; i < 5000 && queries < 100; i++) {
        fdt_db *db;
        /* The file may not exist yet, or not be migrated yet: that is a refusal, not a crash. */
        if (fdt_db_open(path, FDT_DB_READONLY, &db, &e)) {
            usleep(2000);
            continue;
        }
        rows *rs = calloc(1, sizeof *rs);
        int rc = rs ? fdt_db_best(db, NULL, collect, rs, &e) : -1;
        free(rs);
        fdt_db_close(db);
        if (rc) {
            fprintf(stderr, "reader: %s\n", e.msg);
            return 13;
        }
        queries++;
    }
    return queries > 0 ? 0 : 14;
}

static void test_concurrent_writers(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "concurrent/fdtune.db"); /* created by the racing writers */
    enum { WRITERS = 3, EVALS = 500, PER_TX = 5 };
    int barrier[2];
    assert_int_equal(pipe(barrier), 0);
    pid_t pids[WRITERS + 1];
    for (int w = 0; w <= WRITERS; w++) {
        pids[w] = fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) {
            close(barrier[1]);
            _exit(w < WRITERS ? writer(path, w, EVALS, PER_TX, barrier[0])
                              : reader(path, barrier[0]));
        }
    }
    close(barrier[0]);
    close(barrier[1]); /* go */
    for (int w = 0; w <= WRITERS; w++) {
        int status;
        assert_int_equal(waitpid(pids[w], &status, 0), pids[w]);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) != 0)
            fail_msg("process %d exited %d", w, WEXITSTATUS(status));
    }
    assert_int_equal(sql_int(path, "SELECT count(*) FROM evaluations"), WRITERS * EVALS);
    assert_int_equal(sql_int(path, "SELECT count(DISTINCT problem_id) FROM evaluations"),
                     WRITERS);
    assert_int_equal(sql_int(path, "SELECT max(n) FROM (SELECT count(*) AS n FROM evaluations"
                                   " GROUP BY problem_id)"),
                     EVALS);
    assert_int_equal(sql_int(path, "SELECT min(n) FROM (SELECT count(*) AS n FROM evaluations"
                                   " GROUP BY problem_id)"),
                     EVALS);
    /* The racing get-or-creates agreed on one row each. */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM devices"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM environments"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM configs"), EVALS);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs WHERE status = 'done'"), WRITERS);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), fdt_db_schema_version());
    fdt_db *db = open_ok(path, FDT_DB_READONLY);
    fdt_err e = {""};
    assert_int_equal(fdt_db_check(db, &e), 0);
    fdt_db_close(db);
}

/* Child side of the resume test: one run, one evaluation per transaction, reporting each
 * commit on the pipe; it never finishes on its own before the parent kills it. */
static void tuner_child(const char *path, int report, int nevals)
{
    fdt_db *db;
    fdt_err e = {""};
    if (fdt_db_open(path, FDT_DB_CREATE, &db, &e))
        _exit(11);
    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    fdt_problem p = problem(FDT_OP_D2Z, 4, 512, 512, 512);
    int64_t dev, env, prob, run;
    if (fdt_db_device_id(db, &d, &dev, &e) || fdt_db_env_id(db, &v, &env, &e) ||
        fdt_db_problem_id(db, &p, &prob, &e))
        _exit(12);
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.device_id = dev;
    r.env_id = env;
    if (fdt_db_run_begin(db, &r, &run, &e))
        _exit(12);
    for (int i = 0; i < nevals; i++) {
        char key[64];
        cfg_key(i, key, sizeof key);
        /* Every tenth one timed out: a rerun measures those again. */
        fdt_db_eval ev = i % 10 == 7 ? eval(run, prob, key, FDT_DB_TIMEOUT, FDT_DB_FULL, NAN)
                                     : eval(run, prob, key, FDT_DB_OK, FDT_DB_FULL, 1.0 + i);
        if (fdt_db_eval_insert(db, &ev, NULL, &e)) {
            fprintf(stderr, "tuner child: %s\n", e.msg);
            _exit(13);
        }
        if (write(report, &i, sizeof i) != sizeof i)
            _exit(14);
        usleep(1000);
    }
    _exit(15); /* too fast: the parent should have killed us */
}

static int count_row(void *ctx, const fdt_db_row *row)
{
    (void)row;
    ++*(int *)ctx;
    return 0;
}

static void test_resume_after_kill(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "resume.db");
    enum { N = 1000, KILL_AFTER = 40 };
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        tuner_child(path, pfd[1], N);
    }
    close(pfd[1]);
    int last = -1, got = 0;
    while (got < KILL_AFTER && read(pfd[0], &last, sizeof last) == sizeof last)
        got++;
    assert_int_equal(got, KILL_AFTER);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(pfd[0]);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    /* What the killed run committed: at least what it reported, never all. */
    int64_t k = sql_int(path, "SELECT count(*) FROM evaluations");
    assert_true(k >= KILL_AFTER && k < N);
    int64_t timeouts = sql_int(path, "SELECT count(*) FROM evaluations WHERE status = 'timeout'");
    assert_int_equal(timeouts, (k + 2) / 10); /* i % 10 == 7 for i < k */

    /* The rerun: the dead run is marked interrupted, the committed work is skipped. */
    fdt_db *db = open_ok(path, FDT_DB_READWRITE);
    fdt_err e = {""};
    int stale = 0;
    assert_int_equal(fdt_db_run_mark_stale(db, &stale, &e), 0);
    assert_int_equal(stale, 1);
    fdt_db_run r;
    assert_int_equal(fdt_db_run_get(db, 1, &r, &e), 0);
    assert_int_equal(r.status, FDT_DB_INTERRUPTED);
    assert_int_equal(r.pid, pid);
    assert_int_equal(r.n_evals, k);
    assert_int_equal(fdt_db_run_mark_stale(db, &stale, &e), 0);
    assert_int_equal(stale, 0);

    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    fdt_problem p = problem(FDT_OP_D2Z, 4, 512, 512, 512);
    int64_t dev, env, prob;
    assert_int_equal(fdt_db_device_id(db, &d, &dev, &e), 0);
    assert_int_equal(fdt_db_env_id(db, &v, &env, &e), 0);
    assert_int_equal(fdt_db_problem_id(db, &p, &prob, &e), 0);
    int seen = 0;
    assert_int_equal(fdt_db_evals(db, dev, env, prob, count_row, &seen, &e), 0);
    assert_int_equal(seen, k);

    int64_t run = begin_run(db, dev, env, 3000.0);
    int skipped = 0, measured = 0;
    for (int i = 0; i < N; i++) {
        char key[64];
        cfg_key(i, key, sizeof key);
        int found = -1;
        assert_int_equal(fdt_db_measured(db, dev, env, prob, key, FDT_DB_FULL,
                                         FDT_DB_RETRY_DEFAULT, &found, &e),
                         0);
        /* Exactly the committed rows are skipped, except the timeouts. */
        assert_int_equal(found, i < k && i % 10 != 7);
        int probe_found = -1;
        assert_int_equal(fdt_db_measured(db, dev, env, prob, key, FDT_DB_PROBE,
                                         FDT_DB_RETRY_DEFAULT, &probe_found, &e),
                         0);
        assert_int_equal(probe_found, 0);
        if (found) {
            skipped++;
            continue;
        }
        fdt_db_eval ev = eval(run, prob, key, FDT_DB_OK, FDT_DB_FULL, 1.0 + i);
        assert_int_equal(fdt_db_eval_insert(db, &ev, NULL, &e), 0);
        measured++;
    }
    assert_int_equal(fdt_db_run_finish(db, run, FDT_DB_DONE, &e), 0);
    assert_int_equal(skipped, k - timeouts);
    assert_int_equal(measured, N - k + timeouts);
    /* With an empty retry mask, a timeout counts as measured too. */
    char key7[64];
    cfg_key(7, key7, sizeof key7);
    int found = 0;
    assert_int_equal(fdt_db_measured(db, dev, env, prob, key7, FDT_DB_FULL, 0, &found, &e), 0);
    assert_int_equal(found, 1);
    /* Another environment has measured nothing. */
    assert_int_equal(fdt_db_measured(db, dev, env + 1, prob, key7, FDT_DB_FULL, 0, &found, &e), 0);
    assert_int_equal(found, 0);
    fdt_db_close(db);

    /* Every config exactly once with a final status; only the timeouts have a second row. */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM evaluations"), N + timeouts);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM evaluations WHERE status = 'ok'"), N);
    assert_int_equal(sql_int(path, "SELECT count(DISTINCT config_id) FROM evaluations"), N);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM (SELECT config_id FROM evaluations"
                                   " WHERE status = 'ok' GROUP BY config_id HAVING count(*) > 1)"),
                     0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
    db = open_ok(path, FDT_DB_READONLY);
    assert_int_equal(fdt_db_check(db, &e), 0);
    fdt_db_close(db);
}

/* ------------------------------------------------------------------ names */

static void test_names(void **state)
{
    (void)state;
    fdt_err e;
    for (int s = 0; s < FDT_DB_STATUS_COUNT; s++) {
        fdt_db_status back;
        assert_int_equal(fdt_db_status_parse(fdt_db_status_name((fdt_db_status)s), &back, &e), 0);
        assert_int_equal(back, s);
    }
    fdt_db_status st;
    assert_int_equal(fdt_db_status_parse("great", &st, &e), -1);
    assert_contains(e.msg, "compile_error");
    fdt_db_stage sg;
    assert_int_equal(fdt_db_stage_parse("probe", &sg, &e), 0);
    assert_int_equal(sg, FDT_DB_PROBE);
    fdt_db_run_kind k;
    assert_int_equal(fdt_db_run_kind_parse("retune", &k, &e), 0);
    assert_int_equal(k, FDT_DB_RETUNE);
    assert_string_equal(fdt_db_run_status_name(FDT_DB_INTERRUPTED), "interrupted");
}

/* ------------------------------------------------------------------ main */

static int group_setup(void **state)
{
    (void)state;
    return tu_mkdtemp(g_dir, sizeof g_dir, "fdt_test_db");
}

static int group_teardown(void **state)
{
    (void)state;
    return tu_rmtree(g_dir);
}


/* ------------------------------------------------------------------ do no harm (issue 27) */

/* The database file at path and the files beside it, with their sizes, owners and
 * modification times to the nanosecond (and change times: ctime), one line each, in buf. */
static void listing_of(const char *dir, int ctime, char *buf, size_t n)
{
    static const char *const names[] = {"", "-wal", "-shm", "-journal"};
    buf[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[600];
        struct stat sb;
        snprintf(p, sizeof p, "%s%s", dir, names[i]);
        if (stat(p, &sb) != 0)
            continue;
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s %lld %u %lld.%09ld %lld.%09ld\n", p,
                 (long long)sb.st_size, (unsigned)sb.st_uid, (long long)sb.st_mtim.tv_sec,
                 sb.st_mtim.tv_nsec, ctime ? (long long)sb.st_ctim.tv_sec : 0LL,
                 ctime ? sb.st_ctim.tv_nsec : 0L);
    }
}

static void listing(const char *dir, char *buf, size_t n) { listing_of(dir, 1, buf, n); }

static void assert_listing_of(const char *path, int ctime, const char *before)
{
    char now[4096];
    listing_of(path, ctime, now, sizeof now);
    if (strcmp(now, before) != 0)
        fail_msg("the files changed:\nbefore:\n%safter:\n%s", before, now);
}

static void assert_listing(const char *path, const char *before)
{
    assert_listing_of(path, 1, before);
}

/* One full evaluation and a decision in f, then closed (the log checkpointed, removed). */
static void fix_done(fix *f)
{
    fdt_err e = {""};
    char key[64];
    cfg_key(0, key, sizeof key);
    fdt_db_eval ev = eval(f->run, f->prob, key, FDT_DB_OK, FDT_DB_FULL, 1.5);
    int64_t id;
    assert_int_equal(fdt_db_eval_insert(f->db, &ev, &id, &e), 0);
    assert_int_equal(fdt_db_run_finish(f->db, f->run, FDT_DB_DONE, &e), 0);
    fdt_db_close(f->db);
    f->db = NULL;
}

static int count_meta(void *ctx, const char *key, const char *value)
{
    (void)value;
    *(int *)ctx += !strcmp(key, "logged");
    return 0;
}

/* A read-only open creates and changes no file: a WAL file without a log is read from the
 * file itself; a log with changes through its -shm, opened read-only; a log without its
 * -shm is refused, saying what to do; beside each, the files are as they were. */
static void test_readonly_creates_nothing(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "ro.db");
    fix_done(&f);
    fdt_err e = {""};
    char before[4096], wal[600], shm[600];
    snprintf(wal, sizeof wal, "%s-wal", f.path);
    snprintf(shm, sizeof shm, "%s-shm", f.path);
    assert_false(exists(wal));
    listing(f.path, before, sizeof before);
    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    assert_true(db->snapshot);
    rows rs = {.n = 0};
    fdt_db_health h;
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_int_equal(fdt_db_health_check(db, &h, &e), 0);
    fdt_db_close(db);
    int v;
    assert_int_equal(fdt_db_file_version(f.path, &v, &e), 0);
    assert_listing(f.path, before);

    /* a writer's log, left with its changes and index (not checkpointed at close) */
    sqlite3 *w;
    assert_int_equal(sqlite3_open(f.path, &w), SQLITE_OK);
    assert_int_equal(sqlite3_db_config(w, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(w, "PRAGMA wal_autocheckpoint = 0; INSERT INTO metadata"
                                     " VALUES ('logged', 'yes')", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(w);
    struct stat sb;
    assert_true(stat(wal, &sb) == 0 && sb.st_size > 0 && exists(shm));
    /* as root, SQLite gives the -wal and -shm it opens the database's owner, which they
     * have: their change time moves, nothing else (test_db_readonly.sh reads as another
     * user, change times included) */
    int root = geteuid() == 0;
    listing_of(f.path, !root, before, sizeof before);
    db = open_ok(f.path, FDT_DB_READONLY);
    assert_false(db->snapshot);
    int logged = 0;
    assert_int_equal(fdt_db_meta(db, count_meta, &logged, &e), 0);
    assert_int_equal(logged, 1); /* read through the log */
    fdt_db_close(db);
    assert_listing_of(f.path, !root, before);

    /* the same log without its index: reading would create it */
    assert_int_equal(unlink(shm), 0);
    listing(f.path, before, sizeof before);
    assert_int_equal(fdt_db_open(f.path, FDT_DB_READONLY, &db, &e), -1);
    assert_contains(e.msg, "which a read-only command does not create");
    assert_contains(e.msg, "open it for writing once");
    assert_listing(f.path, before);
    /* a writer creates it and goes on */
    db = open_ok(f.path, FDT_DB_READWRITE);
    fdt_db_close(db);
}

/* A WAL file without a log is read as a snapshot of the file; a writer that starts meanwhile
 * makes the reads that follow fail, with what to do, instead of reading pages its
 * checkpoint may have changed; a new connection reads the writer's changes. */
static void test_snapshot_changed(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "snap.db");
    fix_done(&f);
    fdt_err e = {""};
    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    assert_true(db->snapshot);
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    fdt_db *w = open_ok(f.path, FDT_DB_READWRITE);
    int64_t run = begin_run(w, f.dev, f.env, 3000.0);
    char key[64];
    cfg_key(1, key, sizeof key);
    fdt_db_eval ev = eval(run, f.prob, key, FDT_DB_OK, FDT_DB_FULL, 1.0);
    assert_int_equal(fdt_db_eval_insert(w, &ev, NULL, &e), 0);
    rs.n = 0;
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), -1);
    assert_contains(e.msg, "changed while it was read");
    assert_contains(e.msg, "run the command again");
    assert_int_equal(fdt_db_health_check(db, &(fdt_db_health){0}, &e), -1); /* sticky */
    fdt_db_close(db);
    db = open_ok(f.path, FDT_DB_READONLY);
    assert_false(db->snapshot); /* now through the log */
    rs.n = 0;
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_true(rs.r[0].ev.time_ms == 1.0);
    fdt_db_close(db);
    fdt_db_close(w);
}

/* "The file was left as it is" is said only while the connection has written nothing. */
static void test_left_as_it_is(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "left.db");
    fix_done(&f);
    fdt_err e = {""};
    fdt_db *db = open_ok(f.path, FDT_DB_READWRITE);
    fdt_dbi_fail(db, &e, SQLITE_CORRUPT, "read");
    assert_contains(e.msg, "integrity problem: ");
    assert_contains(e.msg, "the file was left as it is");
    int64_t run = begin_run(db, f.dev, f.env, 3000.0); /* a write */
    assert_true(run > 0);
    fdt_dbi_fail(db, &e, SQLITE_CORRUPT, "read");
    assert_contains(e.msg, "integrity problem: ");
    if (strstr(e.msg, "left as it is"))
        fail_msg("said of a file this connection wrote to: %s", e.msg);
    fdt_dbi_fail(db, &e, SQLITE_NOTADB, "read");
    if (strstr(e.msg, "left as it is"))
        fail_msg("said of a file this connection wrote to: %s", e.msg);
    fdt_db_close(db);
    /* a file the journal switch rewrote counts as written */
    sql_exec(f.path, "PRAGMA journal_mode = DELETE");
    db = open_ok(f.path, FDT_DB_READWRITE);
    fdt_dbi_fail(db, &e, SQLITE_CORRUPT, "read");
    if (strstr(e.msg, "left as it is"))
        fail_msg("said of a file switched to WAL: %s", e.msg);
    fdt_db_close(db);
}

/* A damaged file is refused by a writer before anything is written: the checks run on a
 * read-only connection (quick_check), so the file keeps every byte, no log beside it. */
static void test_writer_checks_first(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "checked.db");
    fdt_err e = {""};
    fdt_db_eval evs[300];
    char key[64];
    for (int i = 0; i < 300; i++) {
        cfg_key(i, key, sizeof key);
        evs[i] = eval(f.run, f.prob, key, FDT_DB_OK, FDT_DB_FULL, 1.0 + i);
        snprintf(evs[i].message, sizeof evs[i].message, "%d %0200d", i, i);
    }
    assert_int_equal(fdt_db_eval_insert_batch(f.db, evs, 300, NULL, &e), 0);
    fdt_db_close(f.db);
    /* a rollback-journal file (as db merge --best-only leaves it): a write switches it */
    sql_exec(f.path, "PRAGMA journal_mode = DELETE");
    size_t n;
    char *data = slurp(f.path, &n);
    for (size_t i = n / 2; i < n / 2 + 4096; i++)
        data[i] = (char)(i * 7 + 3);
    assert_int_equal(fdt_write_file_atomic(f.path, data, n, &e), 0);
    char before[4096];
    listing(f.path, before, sizeof before);
    fdt_db *db = NULL;
    assert_int_equal(fdt_db_open(f.path, FDT_DB_READWRITE, &db, &e), -1);
    assert_contains(e.msg, "integrity problem");
    assert_contains(e.msg, "the file was left as it is");
    assert_same_bytes(f.path, data, n);
    assert_listing(f.path, before);
    free(data);
}

/* A gate refuses before anything is written (fdt_db_open_checked). */
static int refuse_all(void *ctx, fdt_db *db, fdt_err *e)
{
    *(int *)ctx += db->readonly;
    return fdt_err_set(e, "%s: not this one", fdt_db_path(db));
}

/* Another writer writes while the checks read (on the first round only), then the gate
 * reads: the checks read again, through the new log, and pass. */
typedef struct busy_gate {
    const char *path;
    int rounds;
} busy_gate;

static int write_meanwhile(void *ctx, fdt_db *db, fdt_err *e)
{
    busy_gate *g = ctx;
    if (g->rounds++ == 0) {
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO metadata VALUES ('meanwhile', '%d')", g->rounds);
        sql_exec(g->path, sql);
    }
    fdt_db_counts c;
    return fdt_db_count(db, &c, e);
}

static void test_gate(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "gate.db");
    fix_done(&f);
    sql_exec(f.path, "PRAGMA journal_mode = DELETE");
    size_t n;
    char *before = slurp(f.path, &n);
    fdt_err e = {""};
    fdt_db *db = NULL;
    int readonly = 0;
    assert_int_equal(fdt_db_open_checked(f.path, FDT_DB_CREATE, refuse_all, &readonly, &db, &e),
                     -1);
    assert_null(db);
    assert_int_equal(readonly, 1); /* asked on a read-only connection */
    assert_contains(e.msg, "not this one; the file was left as it is");
    assert_same_bytes(f.path, before, n);
    free(before);
    /* a writer meanwhile: the checks run again */
    fdt_db_close(open_ok(f.path, FDT_DB_READWRITE)); /* back to WAL, no log left */
    busy_gate g = {f.path, 0};
    assert_int_equal(fdt_db_open_checked(f.path, FDT_DB_READWRITE, write_meanwhile, &g, &db, &e),
                     0);
    assert_int_equal(g.rounds, 2);
    fdt_db_close(db);
    /* a new file holds nothing to ask about */
    char fresh[512];
    path_in(fresh, sizeof fresh, "gate-new.db");
    assert_int_equal(fdt_db_open_checked(fresh, FDT_DB_CREATE, refuse_all, &readonly, &db, &e),
                     0);
    fdt_db_close(db);
}

/* Stored integers outside the bounds of schema v6 (item 12): an older file holding them is
 * refused by the migration (rolled back) and by a writer's checks, reported by the health
 * check, and refused by the reader rather than computed with (a radius of 2^32 + 4 was shown
 * as R=4); a v6 file refuses such writes. */
static void test_bounds(void **state)
{
    (void)state;
    static const char *const bad[][2] = {
        {"UPDATE problems SET ny = 9223372036854775807",
         "problems row 1: ny = 9223372036854775807, outside 1..1000000000"},
        {"UPDATE problems SET radius = 4294967300",
         "problems row 1: radius = 4294967300, outside 1..8"},
        {"UPDATE devices SET compute_units = 4294967428",
         "devices row 1: compute_units = 4294967428, outside 0..1048576"},
        {"UPDATE evaluations SET registers = -5",
         "evaluations row 1: registers = -5, outside 0..2147483647"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        fix f;
        char name[32];
        snprintf(name, sizeof name, "bounds%zu.db", k);
        fix_open(&f, name);
        fix_done(&f);
        fdt_err e = {""};
        /* a v6 file refuses the write */
        sqlite3 *h;
        assert_int_equal(sqlite3_open(f.path, &h), SQLITE_OK);
        assert_int_equal(sqlite3_exec(h, bad[k][0], NULL, NULL, NULL) & 0xff, SQLITE_CONSTRAINT);
        assert_contains(sqlite3_errmsg(h), "a value outside its bounds");
        sqlite3_close(h);
        /* an older file (v5: no triggers) holds it */
        char sql[4096];
        snprintf(sql, sizeof sql, DROP_V6 "%s;", bad[k][0]);
        sql_exec(f.path, sql);
        size_t n;
        char *before = slurp(f.path, &n);
        fdt_db *db = NULL;
        assert_int_equal(fdt_db_open(f.path, FDT_DB_READWRITE, &db, &e), -1);
        assert_contains(e.msg, bad[k][1]);
        assert_contains(e.msg, "the file was left as it is");
        assert_same_bytes(f.path, before, n);
        /* read-only: the health check reports it, the reader refuses it */
        db = open_ok(f.path, FDT_DB_READONLY);
        fdt_db_health h6;
        assert_int_equal(fdt_db_health_check(db, &h6, &e), 0);
        assert_int_equal(h6.out_of_bounds, 1);
        assert_string_equal(h6.out_of_bounds_first, bad[k][1]);
        assert_true(fdt_db_health_bad(&h6));
        rows rs = {.n = 0};
        assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), -1);
        assert_contains(e.msg, bad[k][1]);
        assert_int_equal(fdt_db_import_check(db, &e), -1);
        assert_contains(e.msg, bad[k][1]);
        fdt_db_close(db);
        assert_same_bytes(f.path, before, n);
        free(before);
    }
    /* the migration itself refuses, rolled back: here on a connection past the checks */
    fix f;
    fix_open(&f, "bounds-migrate.db");
    fdt_err e = {""};
    assert_int_equal(sqlite3_exec(fdt_dbi_handle(f.db), DROP_V6 "UPDATE problems SET ny ="
                                  " 9223372036854775807;", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(fdt_dbi_migrate(f.db, &e), -1);
    assert_contains(e.msg, "schema v5 -> v6");
    assert_contains(e.msg, "ny = 9223372036854775807, outside 1..1000000000");
    fdt_db_close(f.db);
    assert_int_equal(sql_int(f.path, "PRAGMA user_version"), 5);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'"
                             " AND name LIKE '%bounds%'"), 0);
    /* every bound at its edge is written, one past it refused */
    fix g;
    fix_open(&g, "bounds-edges.db");
    static const char *const edges[][2] = {
        {"INSERT INTO problems (op, radius, precision, nx, ny, nz) VALUES"
         " ('lap', 8, 'f32', 1000000000, 1, 1)",
         "INSERT INTO problems (op, radius, precision, nx, ny, nz) VALUES"
         " ('lap', 9, 'f32', 1, 1, 1)"},
        {"UPDATE problems SET nz = 1000000000", "UPDATE problems SET nz = 1000000001"},
        {"UPDATE runs SET budget = 2147483647", "UPDATE runs SET budget = 2147483648"},
        {"UPDATE devices SET mem_bytes = 1125899906842624",
         "UPDATE devices SET mem_bytes = 1125899906842625"},
    };
    for (size_t k = 0; k < sizeof edges / sizeof edges[0]; k++) {
        assert_int_equal(sqlite3_exec(fdt_dbi_handle(g.db), edges[k][0], NULL, NULL, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_exec(fdt_dbi_handle(g.db), edges[k][1], NULL, NULL, NULL) &
                             0xff,
                         SQLITE_CONSTRAINT);
    }
    fdt_db_close(g.db);
}

/* Runs left running (item 9 of issue 27): the health check counts them, and calls stale
 * those no process writes any more: every one while no other process has the file open,
 * else those begun on this host by a process that is gone. */
static void test_stale_runs(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "stale.db");
    fdt_err e = {""};
    int64_t elsewhere = begin_run(f.db, f.dev, f.env, 3000.0);
    fdt_db_close(f.db);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld WHERE id = %lld;"
             "UPDATE runs SET host = 'another-host', pid = 1 WHERE id = %lld", (long)dead,
             (long long)f.run, (long long)elsewhere);
    sql_exec(f.path, sql);
    /* nobody has the file open: both are stale */
    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    fdt_db_health h;
    assert_int_equal(fdt_db_health_check(db, &h, &e), 0);
    fdt_db_close(db);
    assert_int_equal(h.running_runs, 2);
    assert_int_equal(h.stale_runs, 2);
    char want[64];
    snprintf(want, sizeof want, "run %lld (host ", (long long)f.run);
    assert_contains(h.stale_first, want);
    assert_false(fdt_db_health_bad(&h)); /* a warning */
    /* another process holds it open: only the one of a process gone from this host */
    int ready[2], quit[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(quit), 0);
    pid_t holder = fork();
    if (holder == 0) {
        sqlite3 *h2;
        char c;
        if (sqlite3_open(f.path, &h2) != SQLITE_OK ||
            sqlite3_exec(h2, "SELECT count(*) FROM runs", NULL, NULL, NULL) != SQLITE_OK)
            _exit(1);
        if (write(ready[1], "r", 1) != 1 || read(quit[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    db = open_ok(f.path, FDT_DB_READONLY);
    assert_int_equal(fdt_db_health_check(db, &h, &e), 0);
    fdt_db_close(db);
    assert_int_equal(write(quit[1], "q", 1), 1);
    int status;
    waitpid(holder, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 2; i++) {
        close(ready[i]);
        close(quit[i]);
    }
    assert_int_equal(h.running_runs, 2);
    assert_int_equal(h.stale_runs, 1);
    assert_contains(h.stale_first, want);
}

/* ------------------------------------------------------------------ dwave, links (v8) */

/* A dwave problem of width W and strength S on a 64^3 grid. */
static fdt_problem dwave(int W, double S)
{
    fdt_problem p = problem(FDT_OP_DWAVE, 4, 64, 64, 64);
    p.absorb_w = W;
    p.absorb_s = S;
    return p;
}

/* Schema v8 (issue 29): a dwave problem is stored with its absorbing layer and read back with
 * it; another W or S is another problem; queries filter by it (best, history, nearest, pairs);
 * a merge carries it; the CHECKs refuse a layer on another operator and a dwave without one. */
static void test_dwave_problems(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "dwave.db");
    fdt_err e = {""};
    fdt_problem a = dwave(16, 0.1), b = dwave(16, 0.05), c = dwave(8, 0.1);
    fdt_problem w = problem(FDT_OP_WAVE, 4, 64, 64, 64);
    int64_t ia, ib, ic, iw, again;
    assert_int_equal(fdt_db_problem_id(f.db, &a, &ia, &e), 0);
    assert_int_equal(fdt_db_problem_id(f.db, &b, &ib, &e), 0);
    assert_int_equal(fdt_db_problem_id(f.db, &c, &ic, &e), 0);
    assert_int_equal(fdt_db_problem_id(f.db, &w, &iw, &e), 0);
    assert_true(ia != ib && ia != ic && ib != ic && iw != ia);
    assert_int_equal(fdt_db_problem_find(f.db, &b, &again, &e), 0);
    assert_int_equal(again, ib);
    assert_int_equal(sql_int(f.path, "SELECT absorb_width FROM problems WHERE op = 'dwave'"
                                     " AND absorb_strength = 0.05"), 16);
    /* a layer on another operator, or a dwave without one, is no problem */
    fdt_problem bad = w;
    bad.absorb_w = 4;
    bad.absorb_s = 0.1;
    assert_int_equal(fdt_db_problem_id(f.db, &bad, &again, &e), -1);
    bad = dwave(0, 0);
    assert_int_equal(fdt_db_problem_id(f.db, &bad, &again, &e), -1);
    static const char *const refused[] = {
        "INSERT INTO problems (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength)"
        " VALUES ('lap', 4, 'f32', 8, 8, 8, 2, 0.1)",
        "INSERT INTO problems (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength)"
        " VALUES ('lap', 4, 'f32', 8, 8, 8, 0, 0.1)",
        "INSERT INTO problems (op, radius, precision, nx, ny, nz) VALUES ('dwave', 4, 'f32', 8,"
        " 8, 8)",
        "INSERT INTO problems (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength)"
        " VALUES ('dwave', 4, 'f32', 8, 8, 8, 2, 0)",
        "INSERT INTO problems (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength)"
        " VALUES ('dwave', 4, 'f32', 8, 8, 8, 2, 10.5)",
        "INSERT INTO problems (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength)"
        " VALUES ('dwave', 4, 'f32', 8, 8, 8, -2, 0.1)",
        "INSERT INTO problems (op, radius, precision, nx, ny, nz, absorb_width, absorb_strength)"
        " VALUES ('dwave', 4, 'f32', 8, 8, 8, 2000000000, 0.1)",
        "UPDATE problems SET absorb_width = 0 WHERE op = 'dwave'",
    };
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
        if (!sql_refused(f.path, refused[k]))
            fail_msg("not refused: %s", refused[k]);
    /* what is measured of one answers for it alone */
    int64_t ea = insert_one(f.db, eval(f.run, ia, "bx=32", FDT_DB_OK, FDT_DB_FULL, 2.0));
    int64_t eb = insert_one(f.db, eval(f.run, ib, "bx=16", FDT_DB_OK, FDT_DB_FULL, 3.0));
    fdt_db_filter flt;
    fdt_db_filter_init(&flt);
    flt.ops = 1u << FDT_OP_DWAVE;
    flt.absorb_w = 16;
    flt.absorb_s = 0.1;
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.r[0].ev.id, ea);
    assert_int_equal(rs.r[0].problem.op, FDT_OP_DWAVE);
    assert_int_equal(rs.r[0].problem.absorb_w, 16);
    assert_true(rs.r[0].problem.absorb_s == 0.1);
    flt.absorb_s = 0.05;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.r[0].ev.id, eb);
    assert_true(rs.r[0].problem.absorb_s == 0.05);
    flt.absorb_w = 8;
    rs.n = 0;
    assert_int_equal(fdt_db_best(f.db, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0);
    rs.n = 0;
    assert_int_equal(fdt_db_history(f.db, &b, "bx=16", 0, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_int_equal(rs.r[0].ev.id, eb);
    fdt_db_row row;
    fdt_db_fallback which;
    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    assert_int_equal(fdt_db_nearest(f.db, &d, &b, NULL, &row, &which, &e), 0);
    assert_int_equal(which, FDT_DB_NEAREST_EXACT);
    assert_int_equal(row.ev.id, eb);
    fdt_problem none = dwave(4, 0.1);
    assert_int_equal(fdt_db_nearest(f.db, &d, &none, NULL, &row, &which, &e), 0);
    assert_int_equal(which, FDT_DB_NEAREST_NONE);
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);

    /* a merge keeps the layer: both problems arrive as themselves */
    char path[512];
    path_in(path, sizeof path, "dwave-merged.db");
    fdt_db *out = open_ok(path, FDT_DB_CREATE);
    assert_int_equal(fdt_db_bulk_begin(out, &e), 0);
    assert_int_equal(fdt_db_import(out, f.db, NULL, &e), 0);
    assert_int_equal(fdt_db_bulk_commit(out, &e), 0);
    int64_t ma = 0, mb = 0;
    assert_int_equal(fdt_db_problem_find(out, &a, &ma, &e), 0);
    assert_int_equal(fdt_db_problem_find(out, &b, &mb, &e), 0);
    assert_true(ma > 0 && mb > 0 && ma != mb);
    rs.n = 0;
    assert_int_equal(fdt_db_best(out, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 0); /* W=8 S=0.05: none */
    flt.absorb_w = 16;
    assert_int_equal(fdt_db_best(out, &flt, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 1);
    assert_true(rs.r[0].problem.absorb_s == 0.05);
    fdt_db_close(out);
    fdt_db_close(f.db);
}

/* A v7 file (problems without a layer, no links: DROP_V8) keeps every row through the
 * rebuild of its problems table: read as it is read-only (the file untouched, W = S = 0,
 * no link), then migrated with the same ids and answers, its foreign keys and bounds intact,
 * and dwave problems stored after. */
static void test_migrate_v7(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "v7.db");
    fdt_err e = {""};
    fdt_problem w = problem(FDT_OP_WAVE, 2, 128, 64, 32);
    int64_t iw;
    assert_int_equal(fdt_db_problem_id(f.db, &w, &iw, &e), 0);
    int64_t e1 = insert_one(f.db, eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 2.0));
    insert_one(f.db, eval(f.run, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 1.0));
    insert_one(f.db, eval(f.run, iw, "bx=32", FDT_DB_WRONG, FDT_DB_FULL, NAN));
    insert_one(f.db, eval(f.run, iw, "bx=128", FDT_DB_OK, FDT_DB_FULL, 4.0));
    assert_int_equal(fdt_db_best_decide(f.db, f.dev, f.prob, e1, 0, "test: pinned", &e), 0);
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);
    char *answers = best_answers(f.db);
    fdt_db_close(f.db);
    sql_exec(f.path, DROP_V8 "PRAGMA journal_mode = DELETE;");
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM pragma_table_info('problems')"
                                     " WHERE name LIKE 'absorb%'"), 0);
    static const char *const counts =
        "SELECT (SELECT count(*) FROM problems) * 1000000 + (SELECT count(*) FROM evaluations)"
        " * 10000 + (SELECT count(*) FROM best_decisions) * 100 + (SELECT count(*) FROM runs)";
    int64_t before_counts = sql_int(f.path, counts);
    int64_t sum_ids = sql_int(f.path, "SELECT sum(id * nx + radius) FROM problems");
    size_t n;
    char *before = slurp(f.path, &n);

    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    char *ro = best_answers(db);
    assert_string_equal(ro, answers);
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_best(db, NULL, collect, &rs, &e), 0);
    for (int i = 0; i < rs.n; i++)
        assert_true(rs.r[i].problem.absorb_w == 0 && rs.r[i].problem.absorb_s == 0);
    fdt_db_link l;
    int found = -1;
    assert_int_equal(fdt_db_link_get(db, f.dev, &l, &found, &e), 0);
    assert_int_equal(found, 0);
    fdt_db_close(db);
    assert_same_bytes(f.path, before, n); /* reading never migrates */
    free(before);

    db = open_ok(f.path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(f.path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(fdt_db_check(db, &e), 0);
    assert_int_equal(sql_int(f.path, counts), before_counts);
    assert_int_equal(sql_int(f.path, "SELECT sum(id * nx + radius) FROM problems"), sum_ids);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM problems WHERE absorb_width = 0"
                                     " AND absorb_strength = 0"), 2);
    char *rw = best_answers(db);
    assert_string_equal(rw, answers);
    /* the rebuilt table has its bounds triggers again, and the foreign keys are back on */
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'"
                                     " AND tbl_name = 'problems'"), 2);
    assert_true(sql_refused(f.path, "UPDATE problems SET nx = 1000000001"));
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM sqlite_schema WHERE sql LIKE"
                                     " '%new_problems%'"), 0);
    assert_int_not_equal(sqlite3_exec(fdt_dbi_handle(db), "DELETE FROM problems", NULL, NULL,
                                      NULL), SQLITE_OK);
    fdt_problem a = dwave(16, 0.1);
    int64_t ia;
    assert_int_equal(fdt_db_problem_id(db, &a, &ia, &e), 0);
    assert_true(ia > iw);
    fdt_db_close(db);
    free(answers);
    free(ro);
    free(rw);
}

/* A file made an older schema's by `drop` (testsql.h's statements) reads read-only as it did
 * (the best answers `answers`, the file untouched), its evaluations into *rs; opened for
 * writing it is migrated, checked, and answers the same. */
static void older_evals_read_and_migrate(fix *f, const char *drop, const char *answers, rows *rs)
{
    fdt_err e = {""};
    sql_exec(f->path, drop);
    size_t n;
    char *before = slurp(f->path, &n);
    fdt_db *db = open_ok(f->path, FDT_DB_READONLY);
    rs->n = 0;
    assert_int_equal(fdt_db_evals(db, f->dev, 0, f->prob, collect, rs, &e), 0);
    char *ro = best_answers(db);
    assert_string_equal(ro, answers);
    fdt_db_close(db);
    assert_same_bytes(f->path, before, n); /* reading never migrates */
    free(before);
    free(ro);
    db = open_ok(f->path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(f->path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(fdt_db_check(db, &e), 0);
    char *rw = best_answers(db);
    assert_string_equal(rw, answers);
    fdt_db_close(db);
    free(rw);
}

/* The evaluations' layer time (v9): stored and read back where measured, NaN where not; a
 * value that is no time is refused; a v8 file (DROP_V9) reads as it is read-only, every row
 * without a layer time and the file untouched, and is migrated keeping every row. */
static void test_migrate_v8(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "v8.db");
    fdt_err e = {""};
    fdt_db_eval with = eval(f.run, f.prob, "deploy=sides", FDT_DB_OK, FDT_DB_PROBE, 2.0);
    with.layers_ms = 1.25;
    insert_one(f.db, with);
    insert_one(f.db, eval(f.run, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 1.0));
    fdt_db_eval bad = eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 1.5);
    bad.layers_ms = -1;
    assert_int_equal(fdt_db_eval_insert(f.db, &bad, NULL, &e), -1);
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_evals(f.db, f.dev, 0, f.prob, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    for (int i = 0; i < rs.n; i++)
        assert_true(strcmp(rs.r[i].ev.config, "deploy=sides")
                        ? isnan(rs.r[i].ev.layers_ms)
                        : rs.r[i].ev.layers_ms == 1.25);
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);
    char *answers = best_answers(f.db);
    fdt_db_close(f.db);

    older_evals_read_and_migrate(&f, DROP_V9 "PRAGMA journal_mode = DELETE;", answers, &rs);
    assert_int_equal(rs.n, 2);
    for (int i = 0; i < rs.n; i++)
        assert_true(isnan(rs.r[i].ev.layers_ms));
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM evaluations WHERE layers_ms IS NULL"),
                     2);
    free(answers);
}

/* The links' row time (v10): a v9 file (DROP_V10) reads as it is read-only, its links without
 * a row time and the file untouched, and is migrated keeping every link (row_ns NULL). */
static void test_migrate_v9(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "v9.db");
    fdt_err e = {""};
    fdt_db_link l;
    memset(&l, 0, sizeof l);
    l.h2d_gbs = l.d2h_gbs = 55;
    l.latency_us = 3.5;
    l.row_ns = 2.9;
    assert_int_equal(fdt_db_link_put(f.db, f.dev, &l, &e), 0);
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);
    fdt_db_close(f.db);

    sql_exec(f.path, DROP_V10 "PRAGMA journal_mode = DELETE;");
    size_t n;
    char *before = slurp(f.path, &n);
    fdt_db *db = open_ok(f.path, FDT_DB_READONLY);
    fdt_db_link got;
    int found = 0;
    assert_int_equal(fdt_db_link_get(db, f.dev, &got, &found, &e), 0);
    assert_int_equal(found, 1);
    assert_true(got.h2d_gbs == 55 && got.latency_us == 3.5 && isnan(got.row_ns));
    fdt_db_close(db);
    assert_same_bytes(f.path, before, n); /* reading never migrates */
    free(before);

    db = open_ok(f.path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(f.path, "PRAGMA user_version"), fdt_db_schema_version());
    assert_int_equal(fdt_db_check(db, &e), 0);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM links WHERE row_ns IS NULL"), 1);
    assert_true(sql_refused(f.path, "UPDATE links SET row_ns = -1"));
    fdt_db_close(db);
}

/* The evaluations' part time (v11): stored and read back where measured, NaN where not; a
 * value that is no time is refused; a v10 file (DROP_V11) reads as it is read-only, every row
 * without a part time (the layer time kept) and the file untouched, and is migrated keeping
 * every row. */
static void test_migrate_v10(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "v10.db");
    fdt_err e = {""};
    fdt_db_eval with = eval(f.run, f.prob, "blk=1", FDT_DB_OK, FDT_DB_FULL, 2.0);
    with.part_ms = 0.03;
    with.layers_ms = 1.5;
    insert_one(f.db, with);
    insert_one(f.db, eval(f.run, f.prob, "bx=16", FDT_DB_OK, FDT_DB_FULL, 1.0));
    fdt_db_eval bad = eval(f.run, f.prob, "bx=32", FDT_DB_OK, FDT_DB_FULL, 1.5);
    bad.part_ms = 0;
    assert_int_equal(fdt_db_eval_insert(f.db, &bad, NULL, &e), -1);
    rows rs = {.n = 0};
    assert_int_equal(fdt_db_evals(f.db, f.dev, 0, f.prob, collect, &rs, &e), 0);
    assert_int_equal(rs.n, 2);
    for (int i = 0; i < rs.n; i++)
        assert_true(strcmp(rs.r[i].ev.config, "blk=1") ? isnan(rs.r[i].ev.part_ms)
                                                        : rs.r[i].ev.part_ms == 0.03);
    assert_int_equal(fdt_db_run_finish(f.db, f.run, FDT_DB_DONE, &e), 0);
    char *answers = best_answers(f.db);
    fdt_db_close(f.db);

    older_evals_read_and_migrate(&f, DROP_V11 "PRAGMA journal_mode = DELETE;", answers, &rs);
    assert_int_equal(rs.n, 2);
    for (int i = 0; i < rs.n; i++)
        assert_true(isnan(rs.r[i].ev.part_ms) &&
                    (strcmp(rs.r[i].ev.config, "blk=1") || rs.r[i].ev.layers_ms == 1.5));
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM evaluations WHERE part_ms IS NULL"),
                     2);
    assert_true(sql_refused(f.path, "UPDATE evaluations SET part_ms = -1"));
    free(answers);
}

/* The links table (v8): nothing until measured; the newest measurement answers (by its time,
 * then the later write); a measurement that is not one is refused, nothing written; a merge
 * carries them once, pruning drops them with their device's runs. */
static void test_links(void **state)
{
    (void)state;
    fix f;
    fix_open(&f, "links.db");
    fdt_err e = {""};
    fdt_db_link l, got;
    int found = -1;
    assert_int_equal(fdt_db_link_get(f.db, f.dev, &got, &found, &e), 0);
    assert_int_equal(found, 0);
    memset(&l, 0, sizeof l);
    l.h2d_gbs = 55.0;
    l.d2h_gbs = 53.5;
    l.both_gbs = 40.0;
    l.latency_us = 9.5;
    l.row_ns = 2.9;
    snprintf(l.measured, sizeof l.measured, "2026-11-28T10:00:00.000Z");
    assert_int_equal(fdt_db_link_put(f.db, f.dev, &l, &e), 0);
    fdt_db_link older = l;
    snprintf(older.measured, sizeof older.measured, "2026-11-27T10:00:00.000Z");
    older.h2d_gbs = 20;
    assert_int_equal(fdt_db_link_put(f.db, f.dev, &older, &e), 0);
    assert_int_equal(fdt_db_link_get(f.db, f.dev, &got, &found, &e), 0);
    assert_int_equal(found, 1);
    assert_true(got.h2d_gbs == 55.0 && got.d2h_gbs == 53.5 && got.both_gbs == 40.0);
    assert_true(got.latency_us == 9.5 && got.row_ns == 2.9);
    assert_int_equal(got.unified, 0);
    assert_string_equal(got.measured, "2026-11-28T10:00:00.000Z");
    /* "" is now: newer than both */
    fdt_db_link now = l;
    now.measured[0] = 0;
    now.unified = 1;
    now.both_gbs = 0;
    now.row_ns = NAN; /* not measured: NULL */
    assert_int_equal(fdt_db_link_put(f.db, f.dev, &now, &e), 0);
    assert_int_equal(fdt_db_link_get(f.db, f.dev, &got, &found, &e), 0);
    assert_int_equal(got.unified, 1);
    assert_true(isnan(got.row_ns));
    assert_true(got.both_gbs == 0);
    assert_true(strlen(got.measured) >= 20 && strcmp(got.measured, l.measured) > 0);
    /* refused: a rate that is not positive, a negative latency, unified 2, a row time that is
     * negative or infinite, an unknown device */
    fdt_db_link bad[6] = {l, l, l, l, l, l};
    bad[0].h2d_gbs = 0;
    bad[1].latency_us = -1;
    bad[2].unified = 2;
    bad[3].d2h_gbs = NAN;
    bad[4].row_ns = -0.5;
    bad[5].row_ns = INFINITY;
    for (int k = 0; k < 6; k++) {
        assert_int_equal(fdt_db_link_put(f.db, f.dev, &bad[k], &e), -1);
        assert_contains(e.msg, "link");
    }
    assert_int_equal(fdt_db_link_put(f.db, f.dev + 100, &l, &e), -1);
    assert_int_equal(sql_int(f.path, "SELECT count(*) FROM links"), 3);
    assert_true(sql_refused(f.path, "INSERT INTO links (device_id, h2d_gbs, d2h_gbs, latency_us,"
                                    " unified, measured) VALUES (1, 1, 1, 1, 0, 'yesterday')"));
    /* another device has none; one measured and never tuned is in use (db check) */
    assert_int_equal(fdt_db_link_get(f.db, f.dev + 1, &got, &found, &e), 0);
    assert_int_equal(found, 0);
    fdt_device other = device("NVIDIA H200", "sm_90", 132, GB80, "GPU-bbbb");
    int64_t oid;
    assert_int_equal(fdt_db_device_id(f.db, &other, &oid, &e), 0);
    fdt_db_health h;
    assert_int_equal(fdt_db_health_check(f.db, &h, &e), 0);
    assert_int_equal(h.unused_devices, 1);
    assert_int_equal(fdt_db_link_put(f.db, oid, &l, &e), 0);
    assert_int_equal(fdt_db_health_check(f.db, &h, &e), 0);
    assert_int_equal(h.unused_devices, 0);
    /* a merge carries them, once however often it runs; the newest still answers */
    char path[512];
    path_in(path, sizeof path, "links-merged.db");
    fdt_db *out = open_ok(path, FDT_DB_CREATE);
    fdt_db_counts added;
    for (int k = 0; k < 2; k++) {
        assert_int_equal(fdt_db_bulk_begin(out, &e), 0);
        assert_int_equal(fdt_db_import(out, f.db, &added, &e), 0);
        assert_int_equal(fdt_db_bulk_commit(out, &e), 0);
        assert_int_equal(added.links, k ? 0 : 4);
    }
    fdt_db_counts c;
    assert_int_equal(fdt_db_count(out, &c, &e), 0);
    assert_int_equal(c.links, 4);
    int64_t dev = 0;
    fdt_device d = device("NVIDIA H100 80GB HBM3", "sm_90", 132, GB80, "GPU-aaaa");
    assert_int_equal(fdt_db_device_find(out, &d, &dev, &e), 0);
    assert_int_equal(fdt_db_link_get(out, dev, &got, &found, &e), 0);
    assert_int_equal(found, 1);
    assert_int_equal(got.unified, 1);
    /* pruned with the runs of their device (the system database keeps what it keeps) */
    assert_int_equal(fdt_db_bulk_begin(out, &e), 0);
    fdt_db_counts removed;
    assert_int_equal(fdt_db_prune_keep(out, NULL, 0, &removed, &e), 0);
    assert_int_equal(fdt_db_bulk_commit(out, &e), 0);
    assert_int_equal(removed.links, 4);
    assert_int_equal(removed.devices, 2);
    assert_int_equal(fdt_db_check(out, &e), 0);
    fdt_db_close(out);
    fdt_db_close(f.db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_create_and_version),
        cmocka_unit_test(test_reopen),
        cmocka_unit_test(test_migrate_v0),
        cmocka_unit_test(test_newer_schema_refused),
        cmocka_unit_test(test_cut_short_v4),
        cmocka_unit_test(test_stopped_v7),
        cmocka_unit_test(test_corrupt_refused),
        cmocka_unit_test(test_readonly_missing),
        cmocka_unit_test(test_ids_stable),
        cmocka_unit_test(test_insert_and_best),
        cmocka_unit_test(test_insert_rules),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_runs_history_top),
        cmocka_unit_test(test_nearest),
        cmocka_unit_test(test_nearest_rules),
        cmocka_unit_test(test_same_model),
        cmocka_unit_test(test_device_roundtrip),
        cmocka_unit_test(test_decisions),
        cmocka_unit_test(test_migrate_v1),
        cmocka_unit_test(test_migrate_v4),
        cmocka_unit_test(test_concurrent_writers),
        cmocka_unit_test(test_resume_after_kill),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_readonly_creates_nothing),
        cmocka_unit_test(test_snapshot_changed),
        cmocka_unit_test(test_left_as_it_is),
        cmocka_unit_test(test_writer_checks_first),
        cmocka_unit_test(test_gate),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_stale_runs),
        cmocka_unit_test(test_dwave_problems),
        cmocka_unit_test(test_migrate_v7),
        cmocka_unit_test(test_migrate_v8),
        cmocka_unit_test(test_migrate_v9),
        cmocka_unit_test(test_migrate_v10),
        cmocka_unit_test(test_links),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
