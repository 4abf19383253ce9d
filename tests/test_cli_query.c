/* Tests of `fdtune query` as users and scripts meet it: a database is written through the
 * fdt_db API (two GPUs, three runs, ok, wrong and failed evaluations), then the built fdtune
 * binary is run on it and its stdout, stderr and exit status are checked: the best config wins
 * over slower and wrong ones, the JSON is well-formed and versioned, the CSV survives RFC 4180
 * parsing (configs and messages hold commas and quotes), --nearest names the rung that answered
 * (resolving catalogue names to stored devices), the model's answer where nothing measured
 * answers and fdtune's built-in default where the model cannot rank either, the same configs
 * `fdtune export` gives, runs/show/history list what was stored, and mistakes exit 2 or 4 with
 * a message; list options (--op lap,d2x) filter as in tune, --gpu auto is the visible GPU (a
 * stand-in CUDA driver shows one) or exit 3 when there is none; dwave rows answer for their
 * absorbing layer (--absorb) alone. The database file must be
 * byte-identical afterwards
 * (queries are read-only). CPU only; everything lives under a mkdtemp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdt_db.h"
#include "json_check.h"
#include "testutil.h"

#ifndef FDTUNE_BIN
#error "FDTUNE_BIN (the fdtune executable) must be defined by the build"
#endif
#ifndef FDT_SOURCE_DIR
#define FDT_SOURCE_DIR "."
#endif

static char g_dir[256], g_db[512], g_src[1024];
static char *g_db_bytes;
static size_t g_db_len;
static int64_t g_run1, g_run2, g_run3;

/* Canonical keys, computed through the generator so the test follows its rules. */
static char FAST[64], SLOW[64], WRONG[64], D2X[64], BROKEN[64], MI[64];
/* What tables show of a config: every parameter (fdt_config_display_key). */
static char BROKEN_SHOWN[FDT_CONFIG_DISPLAY_MAX], FAST_SHOWN[FDT_CONFIG_DISPLAY_MAX];
static const char BROKEN_MSG[] = "nvrtc: error: \"vec\" needs aligned rows, line 3";

/* ------------------------------------------------------------------ running fdtune */

/* Runs fdtune with the arguments of argv (NULL-terminated) and captures both streams. */
static void runv(tu_result *r, const char *const *argv)
{
    char *args[64];
    int n = 0;
    args[n++] = (char *)FDTUNE_BIN;
    for (; *argv && n < 63; argv++)
        args[n++] = (char *)*argv;
    args[n] = NULL;
    tu_run(r, g_dir, args);
}

static void run(tu_result *r, ...)
{
    const char *args[64];
    int n = 0;
    va_list ap;
    va_start(ap, r);
    for (const char *a; (a = va_arg(ap, const char *)) && n < 63;)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    runv(r, args);
}

/* ------------------------------------------------------------------ JSON and CSV checks */

static void assert_json(const char *doc)
{
    long at;
    if (json_check(doc, &at))
        fail_msg("not one JSON document (fails near offset %ld):\n%s", at, doc);
    /* Versioned at the top level, before anything else. */
    if (strncmp(doc, "{\"schema\": 1,", 13))
        fail_msg("the document does not start with \"schema\": 1:\n%s", doc);
}

/* An RFC 4180 reader: records of fields, quotes doubled inside quoted fields. */
typedef struct csv {
    int nrec, nfield[64];
    char *field[64][64];
} csv;

static void csv_parse(const char *s, csv *c)
{
    memset(c, 0, sizeof *c);
    while (*s) {
        assert_true(c->nrec < 64);
        int r = c->nrec++;
        for (;;) {
            char buf[2048];
            size_t n = 0;
            if (*s == '"') {
                for (s++;; s++) {
                    if (!*s)
                        fail_msg("CSV: unterminated quoted field");
                    if (*s == '"') {
                        if (s[1] != '"')
                            break;
                        s++;
                    }
                    assert_true(n < sizeof buf - 1);
                    buf[n++] = *s;
                }
                s++;
                if (*s != ',' && *s != '\n' && *s != '\r' && *s)
                    fail_msg("CSV: text after a closing quote: %.20s", s);
            } else {
                for (; *s && *s != ',' && *s != '\n' && *s != '\r'; s++) {
                    if (*s == '"')
                        fail_msg("CSV: a quote inside an unquoted field");
                    assert_true(n < sizeof buf - 1);
                    buf[n++] = *s;
                }
            }
            buf[n] = 0;
            assert_true(c->nfield[r] < 64);
            c->field[r][c->nfield[r]++] = strdup(buf);
            if (*s == ',') {
                s++;
                continue;
            }
            if (*s == '\r')
                s++;
            if (*s == '\n')
                s++;
            break;
        }
    }
}

static void csv_free(csv *c)
{
    for (int r = 0; r < c->nrec; r++)
        for (int f = 0; f < c->nfield[r]; f++)
            free(c->field[r][f]);
}

/* Parses and checks there are `rows` data rows, each as wide as the header. */
static void csv_load(const char *text, csv *c, int rows)
{
    csv_parse(text, c);
    if (c->nrec != rows + 1)
        fail_msg("CSV has %d data rows, want %d:\n%s", c->nrec - 1, rows, text);
    for (int r = 1; r < c->nrec; r++)
        if (c->nfield[r] != c->nfield[0])
            fail_msg("CSV record %d has %d fields, the header %d:\n%s", r, c->nfield[r],
                     c->nfield[0], text);
}

/* The column named `key` in the header. */
static int csv_col(const csv *c, const char *key)
{
    for (int f = 0; f < c->nfield[0]; f++)
        if (!strcmp(c->field[0][f], key))
            return f;
    fail_msg("CSV header lacks '%s'", key);
    return -1;
}

/* ------------------------------------------------------------------ the database */

static fdt_device device(const char *backend, const char *vendor, const char *name,
                                 const char *arch, int cu, const char *uuid)
{
    fdt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.backend, sizeof d.backend, "%s", backend);
    snprintf(d.vendor, sizeof d.vendor, "%s", vendor);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "%s", arch);
    d.compute_units = cu;
    d.warp_size = !strcmp(vendor, "AMD") ? 64 : 32;
    d.l2_bytes = 50LL << 20;
    d.mem_bytes = 80LL << 30;
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    snprintf(d.driver_version, sizeof d.driver_version, "580.65.06");
    snprintf(d.runtime_version, sizeof d.runtime_version, "13.0");
    snprintf(d.compiler_version, sizeof d.compiler_version, "13.0.48");
    return d;
}

static void canon(const char *text, char *key, size_t n)
{
    fdt_config c;
    fdt_err e;
    if (fdt_config_parse(text, &c, &e))
        fail_msg("%s: %s", text, e.msg);
    fdt_config_format(&c, key, n);
}

static int64_t begin(fdt_db *db, const fdt_device *d, fdt_db_run_kind kind,
                     const char *cmd, double copy)
{
    fdt_err e;
    int64_t dev, env, id;
    fdt_db_env v;
    fdt_db_env_from_device(d, "0.1.0", &v);
    fdt_db_run r;
    fdt_db_run_init(&r);
    if (fdt_db_device_id(db, d, &dev, &e) || fdt_db_env_id(db, &v, &env, &e))
        fail_msg("%s", e.msg);
    r.kind = kind;
    r.device_id = dev;
    r.env_id = env;
    r.copy_gbs = copy;
    snprintf(r.command, sizeof r.command, "%s", cmd);
    snprintf(r.recipe, sizeof r.recipe, "lap");
    snprintf(r.strategy, sizeof r.strategy, "model");
    if (fdt_db_run_begin(db, &r, &id, &e))
        fail_msg("%s", e.msg);
    return id;
}

static void add(fdt_db *db, int64_t run_id, fdt_problem p, const char *config, fdt_db_status s,
                double ms, const char *msg)
{
    fdt_err e;
    fdt_db_eval ev;
    fdt_db_eval_init(&ev);
    ev.run_id = run_id;
    if (fdt_db_problem_id(db, &p, &ev.problem_id, &e))
        fail_msg("%s", e.msg);
    snprintf(ev.config, sizeof ev.config, "%s", config);
    ev.status = s;
    ev.time_ms = ms;
    ev.gbs = isnan(ms) ? NAN : 2.0 / ms * 1000;
    ev.layout_line = 544;
    ev.layout_offset = 28;
    ev.registers = 40;
    ev.spill_bytes = 0;
    ev.shared_bytes = 0;
    snprintf(ev.message, sizeof ev.message, "%s", msg);
    if (fdt_db_eval_insert(db, &ev, NULL, &e))
        fail_msg("%s", e.msg);
}

static int setup(void **state)
{
    (void)state;
    if (tu_mkdtemp(g_dir, sizeof g_dir, "fdt_query"))
        return -1;
    snprintf(g_db, sizeof g_db, "%s/tune.db", g_dir);
    const char *src = getenv("FDTUNE_TEST_SRC");
    snprintf(g_src, sizeof g_src, "%s", src && *src ? src : FDT_SOURCE_DIR);
    char recipes[1100];
    snprintf(recipes, sizeof recipes, "%s/recipes", g_src);
    setenv("FDTUNE_RECIPES", recipes, 1);
    setenv("NO_COLOR", "1", 1);
    unsetenv("FDTUNE_DB");

    canon("bx=32,by=8", FAST, sizeof FAST);
    canon("bx=128,by=2", SLOW, sizeof SLOW);
    canon("bx=256,by=1", WRONG, sizeof WRONG);
    canon("bx=64,tile=2", D2X, sizeof D2X);
    canon("bx=96,vec=4", BROKEN, sizeof BROKEN);
    canon("bx=512", MI, sizeof MI);
    fdt_config_display_key(BROKEN, BROKEN_SHOWN, sizeof BROKEN_SHOWN);
    fdt_config_display_key(FAST, FAST_SHOWN, sizeof FAST_SHOWN);

    fdt_db *db;
    fdt_err e;
    if (fdt_db_open(g_db, FDT_DB_CREATE, &db, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    fdt_device h100 = device("cuda", "NVIDIA", "NVIDIA H100 80GB HBM3", "sm_90", 132,
                                     "GPU-h100");
    fdt_device mi = device("hip", "AMD", "AMD Instinct MI250X", "gfx90a", 110, "GPU-mi");
    fdt_problem lap = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    fdt_problem d2x = {FDT_OP_D2X, 4, FDT_F32, 256, 256, 256};

    g_run1 = begin(db, &h100, FDT_DB_TUNE, "fdtune --gpu H100 --R 4 --grid 512^3", 3000);
    add(db, g_run1, lap, FAST, FDT_DB_OK, 1.0, "");
    add(db, g_run1, lap, SLOW, FDT_DB_OK, 2.0, "");
    /* Faster than everything, but it computed the wrong answer: never the best. */
    add(db, g_run1, lap, WRONG, FDT_DB_WRONG, 0.5, "max |err| 3e-2 > tolerance 1e-5");
    add(db, g_run1, d2x, D2X, FDT_DB_OK, 0.25, "");
    add(db, g_run1, d2x, BROKEN, FDT_DB_COMPILE_ERROR, NAN, BROKEN_MSG);
    if (fdt_db_run_finish(db, g_run1, FDT_DB_DONE, &e))
        fail_msg("%s", e.msg);
    /* A retune re-measures the winner, a little slower; it is still running. */
    g_run2 = begin(db, &h100, FDT_DB_RETUNE, "fdtune retune", 2900);
    add(db, g_run2, lap, FAST, FDT_DB_OK, 1.1, "");
    g_run3 = begin(db, &mi, FDT_DB_TUNE, "fdtune --gpu MI250X --R 4 --grid 512^3", 1300);
    add(db, g_run3, lap, MI, FDT_DB_OK, 1.5, "");
    if (fdt_db_run_finish(db, g_run3, FDT_DB_DONE, &e))
        fail_msg("%s", e.msg);
    fdt_db_close(db);
    g_db_bytes = tu_slurp(g_db);
    struct stat sb;
    stat(g_db, &sb);
    g_db_len = (size_t)sb.st_size;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(g_db_bytes);
    tu_rmtree(g_dir);
    return 0;
}

/* ------------------------------------------------------------------ best */

static void test_best_text(void **state)
{
    (void)state;
    tu_result r;
    run(&r, "query", "best", "--db", g_db, NULL);
    expect_status(&r, 0);
    assert_has(r.out, FAST_SHOWN); /* the whole config, defaults included */
    assert_has(r.out, "align=1,bx=32,by=8,bz=1,l2pf=0,lb=0,lds=0,mbar=0,nt=0,nw=0,order=xyz");
    assert_lacks(r.out, SLOW);
    assert_lacks(r.out, WRONG);
    assert_lacks(r.out, BROKEN);
    assert_has(r.out, D2X);
    assert_has(r.out, MI);
    assert_has(r.out, "NVIDIA H100 80GB HBM3");
    assert_has(r.out, "gfx90a");
    assert_has(r.out, "lap R=4 f32 512x512x512");
    assert_has(r.out, "1.0000");   /* median ms of the winner, not the retune's 1.1 */
    assert_has(r.out, "0.667");    /* 2000 GB/s of the run's 3000 GB/s copy */
    assert_has(r.out, "544/28");   /* layout line/offset */
    assert_has(r.out, "580.65.06 / 13.0.48");
    assert_string_equal(r.err, "");
    tu_result_free(&r);

    /* Filters: the GPU substring, the op. */
    run(&r, "query", "best", "--db", g_db, "--gpu", "h100", "--op", "lap", NULL);
    expect_status(&r, 0);
    assert_has(r.out, FAST);
    assert_lacks(r.out, MI);
    assert_lacks(r.out, D2X);
    tu_result_free(&r);
    run(&r, "query", "best", "--db", g_db, "--gpu", "b200", NULL);
    expect_status(&r, 0);
    assert_string_equal(r.out, "");
    assert_has(r.err, "no tuned result");
    tu_result_free(&r);
}

static void test_best_json_csv(void **state)
{
    (void)state;
    tu_result r;
    run(&r, "query", "best", "--db", g_db, "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    char want[128];
    snprintf(want, sizeof want, "\"config\": \"%s\"", FAST);
    assert_has(r.out, want);
    assert_has(r.out, "\"layout_line\": 544");
    assert_lacks(r.out, SLOW);
    assert_lacks(r.out, WRONG);
    tu_result_free(&r);

    run(&r, "query", "best", "--db", g_db, "--csv", NULL);
    expect_status(&r, 0);
    csv c;
    csv_load(r.out, &c, 3);
    int k = csv_col(&c, "config"); /* H100 lap, H100 d2x, MI250X lap */
    int found = 0;
    for (int i = 1; i < c.nrec; i++) {
        found += !strcmp(c.field[i][k], FAST);
        assert_string_not_equal(c.field[i][k], SLOW);
    }
    assert_int_equal(found, 1);
    /* Rows come by device name: AMD before NVIDIA. */
    assert_string_equal(c.field[1][k], MI);
    csv_free(&c);
    tu_result_free(&r);

    run(&r, "query", "best", "--db", g_db, "--csv", "--R", "4", "--grid", "256^3", NULL);
    expect_status(&r, 0);
    csv_load(r.out, &c, 1);
    k = csv_col(&c, "config");
    assert_string_equal(c.field[1][k], D2X);
    csv_free(&c);
    tu_result_free(&r);
}

/* A GPU catalogue that describes none of the test's GPUs (FDTUNE_RECIPES comes first in the
 * search path): fdtune's model then has nothing to rank with. */
static void other_catalogue(void)
{
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/other-catalogue", g_dir);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/gpus.lua", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("gpu {\n  name = \"Test GPU\", vendor = \"NVIDIA\", arch = \"sm_75\",\n"
          "  compute_units = 40, warp_size = 32, shared_per_block = 48 * KiB,\n"
          "  l2_bytes = 4 * MiB, mem_bytes = 16 * GiB, peak_bw_gbs = 448,\n"
          "  source = \"a test entry\",\n}\n", f);
    fclose(f);
    setenv("FDTUNE_RECIPES", dir, 1);
}

static void test_nearest(void **state)
{
    (void)state;
    tu_result r;
    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100", "--op", "lap", "--R",
        "4", "--grid", "600^3", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "fallback  grid:");
    assert_has(r.out, FAST);
    assert_has(r.out, "512x512x512");
    assert_lacks(r.out, WRONG);
    tu_result_free(&r);

    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100", "--op", "lap", "--R",
        "4", "--grid", "512^3", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "fallback  exact:");
    assert_has(r.out, FAST);
    tu_result_free(&r);

    /* An H200 was never tuned here: the catalogue says it is sm_90, so the H100's result of
     * the same arch answers. */
    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H200", "--op", "lap", "--R",
        "4", "--grid", "600^3", "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"fallback\": \"arch\"");
    assert_has(r.out, "\"requested_nx\": 600");
    assert_has(r.out, "\"nx\": 512");
    char want[128];
    snprintf(want, sizeof want, "\"config\": \"%s\"", FAST);
    assert_has(r.out, want);
    tu_result_free(&r);

    /* A catalogue name resolves to the stored devices the catalogue matches to it. */
    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100 SXM", "--op", "lap",
        "--R", "4", "--grid", "512^3", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "fallback  exact:");
    assert_has(r.out, "device    NVIDIA H100 80GB HBM3 (sm_90, 132 CUs)");
    tu_result_free(&r);

    /* Nothing measured for d2z on sm_90: the model's top-ranked config, predicted. */
    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100", "--op", "d2z", "--R",
        "4", "--grid", "600^3", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "fallback  model:");
    assert_has(r.out, "predicted ");
    assert_has(r.out, "by fdtune's model (not measured: tune to measure)");
    assert_lacks(r.out, "measured  ");
    tu_result_free(&r);

    /* Nor can the model rank (the catalogue in use describes no such GPU): fdtune's built-in
     * default, the config exports fall back to. */
    fdt_problem p = {FDT_OP_D2Z, 4, FDT_F32, 600, 600, 600};
    fdt_config c;
    char def[256];
    fdt_config_fallback(&p, &c);
    fdt_config_format(&c, def, sizeof def);
    other_catalogue();
    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100", "--op", "d2z", "--R",
        "4", "--grid", "600^3", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "fallback  none:");
    assert_has(r.out, "fdtune's built-in default (the config exported headers fall back to)");
    char line[300];
    snprintf(line, sizeof line, "config    %s\n", def);
    assert_has(r.out, line);
    assert_lacks(r.out, "recipe");
    tu_result_free(&r);

    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100", "--op", "d2z", "--R",
        "4", "--grid", "600^3", "--csv", NULL);
    expect_status(&r, 0);
    csv cs;
    csv_load(r.out, &cs, 1);
    int k = csv_col(&cs, "config");
    assert_string_equal(cs.field[1][k], def);
    assert_string_equal(cs.field[1][0], "none");
    csv_free(&cs);
    tu_result_free(&r);
    unsetenv("FDTUNE_RECIPES");
}

/* When nothing measured answers, query --nearest and an export answer with the same config:
 * the model's answer for that device and grid (the export's variant for it), and where the
 * model cannot rank either, the fallback variant every exported table starts with. */
static const char *exported_config(const char *doc, const char *kind, char *buf, size_t n)
{
    char at[64];
    snprintf(at, sizeof at, "\"kind\": \"%s\"", kind);
    const char *v = strstr(doc, at);
    const char *cfg = v ? strstr(v, "\"config\": \"") : NULL;
    if (!cfg)
        fail_msg("no %s variant in:\n%.2000s", kind, doc);
    cfg += strlen("\"config\": \"");
    snprintf(buf, n, "%.*s", (int)strcspn(cfg, "\""), cfg);
    return buf;
}

static void test_fallback_agrees(void **state)
{
    (void)state;
    tu_result r;
    char exported[256];
    /* d2z on the H100, and lap on a GPU whose arch has nothing tuned (MI300X, gfx942): the
     * model's answer, the export's variant for that grid */
    static const char *const asks[][4] = {{"H100", "d2z", "4", "600^3"},
                                           {"MI300X", "lap", "4", "512^3"}};
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        run(&r, "export", "--db", g_db, "--gpu", asks[i][0], "--op", asks[i][1], "--R",
            asks[i][2], "--grid", asks[i][3], "--precision", "f32", "--format", "json", NULL);
        expect_status(&r, 0);
        assert_json(r.out);
        exported_config(r.out, "constant", exported, sizeof exported);
        tu_result_free(&r);
        run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", asks[i][0], "--op",
            asks[i][1], "--R", asks[i][2], "--grid", asks[i][3], "--csv", NULL);
        expect_status(&r, 0);
        csv cs;
        csv_load(r.out, &cs, 1);
        assert_string_equal(cs.field[1][0], "model");
        assert_string_equal(cs.field[1][csv_col(&cs, "config")], exported);
        csv_free(&cs);
        tu_result_free(&r);
    }
    /* The model cannot rank (a catalogue that describes no test GPU): the export refuses
     * d2z, which nothing answers, and the fallback variant of its tables is what --nearest
     * answers with. */
    other_catalogue();
    run(&r, "export", "--db", g_db, "--gpu", "H100", "--op", "d2z", "--R", "4", "--grid",
        "600^3", NULL);
    expect_status(&r, 1);
    tu_result_free(&r);
    run(&r, "export", "--db", g_db, "--gpu", "H100", "--op", "lap", "--format", "json", NULL);
    expect_status(&r, 0);
    exported_config(r.out, "fallback", exported, sizeof exported);
    tu_result_free(&r);
    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100", "--op", "d2z", "--R",
        "4", "--grid", "600^3", "--csv", NULL);
    expect_status(&r, 0);
    csv cs;
    csv_load(r.out, &cs, 1);
    assert_string_equal(cs.field[1][0], "none");
    assert_string_equal(cs.field[1][csv_col(&cs, "config")], exported);
    csv_free(&cs);
    tu_result_free(&r);
    unsetenv("FDTUNE_RECIPES");
}

/* ------------------------------------------------------------------ runs, show, history */

static void test_runs(void **state)
{
    (void)state;
    tu_result r;
    char id[32];
    run(&r, "query", "runs", "--db", g_db, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "fdtune --gpu MI250X --R 4 --grid 512^3");
    assert_has(r.out, "retune");
    assert_has(r.out, "running");
    tu_result_free(&r);

    run(&r, "query", "runs", "--db", g_db, "--csv", NULL);
    expect_status(&r, 0);
    csv c;
    csv_load(r.out, &c, 3);
    int k = csv_col(&c, "id");
    int n = csv_col(&c, "evaluations");
    snprintf(id, sizeof id, "%lld", (long long)g_run3); /* newest first */
    assert_string_equal(c.field[1][k], id);
    snprintf(id, sizeof id, "%lld", (long long)g_run1);
    assert_string_equal(c.field[3][k], id);
    assert_string_equal(c.field[3][n], "5");
    csv_free(&c);
    tu_result_free(&r);

    run(&r, "query", "runs", "--db", g_db, "--csv", "--gpu", "mi250", NULL);
    expect_status(&r, 0);
    csv_load(r.out, &c, 1);
    k = csv_col(&c, "id");
    snprintf(id, sizeof id, "%lld", (long long)g_run3);
    assert_string_equal(c.field[1][k], id);
    csv_free(&c);
    tu_result_free(&r);

    run(&r, "query", "runs", "--db", g_db, "--limit", "2", "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"command\": \"fdtune retune\"");
    assert_lacks(r.out, "fdtune --gpu H100"); /* the oldest run is past the limit */
    tu_result_free(&r);
}

static void test_show(void **state)
{
    (void)state;
    tu_result r;
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)g_run1);
    run(&r, "query", "show", id, "--db", g_db, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "NVIDIA H100 80GB HBM3");
    assert_has(r.out, "fdtune --gpu H100 --R 4 --grid 512^3");
    assert_has(r.out, FAST);
    assert_has(r.out, SLOW);
    assert_has(r.out, WRONG);
    assert_has(r.out, BROKEN_SHOWN); /* the whole config, defaults included */
    assert_lacks(r.out, BROKEN);
    assert_has(r.out, "compile_error");
    assert_has(r.out, BROKEN_MSG);
    assert_has(r.out, "evaluations 5, 3 ok");
    assert_lacks(r.out, MI);
    tu_result_free(&r);

    run(&r, "query", "show", id, "--db", g_db, "--csv", NULL);
    expect_status(&r, 0);
    csv c;
    csv_load(r.out, &c, 5);
    int m = csv_col(&c, "message");
    int s = csv_col(&c, "status");
    int cfg = csv_col(&c, "config");
    /* The message with a comma and quotes comes back exactly, in insertion order. */
    assert_string_equal(c.field[5][cfg], BROKEN);
    assert_string_equal(c.field[5][s], "compile_error");
    assert_string_equal(c.field[5][m], BROKEN_MSG);
    assert_string_equal(c.field[3][s], "wrong");
    csv_free(&c);
    tu_result_free(&r);

    run(&r, "query", "show", id, "--db", g_db, "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"message\": \"nvrtc: error: \\\"vec\\\" needs aligned rows, line 3\"");
    assert_has(r.out, "\"status\": \"done\"");
    tu_result_free(&r);
}

static void test_history(void **state)
{
    (void)state;
    tu_result r;
    /* Keys out of order and a default value spelled out: the same config. */
    run(&r, "query", "history", "--db", g_db, "--op", "lap", "--R", "4", "--grid", "512^3",
        "--config", "by=8,bx=32,bz=1", "--csv", NULL);
    expect_status(&r, 0);
    csv c;
    csv_load(r.out, &c, 2);
    int k = csv_col(&c, "run");
    int t = csv_col(&c, "median_ms");
    char id[32];
    snprintf(id, sizeof id, "%lld", (long long)g_run1); /* oldest first */
    assert_string_equal(c.field[1][k], id);
    assert_true(fabs(atof(c.field[1][t]) - 1.0) < 1e-9);
    snprintf(id, sizeof id, "%lld", (long long)g_run2);
    assert_string_equal(c.field[2][k], id);
    assert_true(fabs(atof(c.field[2][t]) - 1.1) < 1e-9);
    csv_free(&c);
    tu_result_free(&r);

    run(&r, "query", "history", "--db", g_db, "--op", "lap", "--R", "4", "--grid", "512^3",
        "--config", FAST, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "1.0000");
    assert_has(r.out, "1.1000");
    tu_result_free(&r);

    run(&r, "query", "history", "--db", g_db, "--op", "lap", "--R", "4", "--grid", "512^3",
        "--config", FAST, "--gpu", "mi250", "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"evaluations\": []");
    tu_result_free(&r);
}

/* ------------------------------------------------------------------ list options */

/* --op, --R, --precision and --grid take lists in query as in tune (comma-separated or
 * repeated): best answers for any of the values; an empty item is a usage error naming the
 * option; what answers for one problem takes one value. */
static void test_best_lists(void **state)
{
    (void)state;
    tu_result r;
    run(&r, "query", "best", "--db", g_db, "--gpu", "h100", "--op", "lap,d2x", NULL);
    expect_status(&r, 0);
    assert_has(r.out, FAST);
    assert_has(r.out, D2X);
    assert_lacks(r.out, MI);
    tu_result_free(&r);
    run(&r, "query", "best", "--db", g_db, "--op", "d2z", "--op", "lap", "--R", "2,4",
        "--precision", "f64,f32", "--grid", "512^3", "--grid", "640^3,512^3", NULL);
    expect_status(&r, 0);
    assert_has(r.out, FAST);
    assert_has(r.out, MI);
    assert_lacks(r.out, D2X);
    tu_result_free(&r);
    run(&r, "query", "best", "--db", g_db, "--grid", "256^3,640^3", "--csv", NULL);
    expect_status(&r, 0);
    csv c;
    csv_load(r.out, &c, 1); /* d2x on 256^3 alone */
    assert_string_equal(c.field[1][csv_col(&c, "op")], "d2x");
    csv_free(&c);
    tu_result_free(&r);

    static const char *const bad[][3] = {
        {"--op", "lap,", "empty item"},          {"--op", ",lap", "empty item"},
        {"--op", "lap,,d2x", "empty item"},      {"--op", "", "expected a value"},
        {"--R", "4,", "empty item"},             {"--precision", "f32,,f64", "empty item"},
        {"--grid", "512^3,", "empty item"},      {"--op", "lap,bogus", "operator 'bogus'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run(&r, "query", "best", "--db", g_db, bad[i][0], bad[i][1], NULL);
        if (r.status != 2 || !strstr(r.err, bad[i][0]) || !strstr(r.err, bad[i][2]) || r.out[0])
            fail_msg("query best %s '%s': exit %d, want 2 naming %s (%s)\n%s", bad[i][0],
                     bad[i][1], r.status, bad[i][0], bad[i][2], r.err);
        tu_result_free(&r);
    }
    run(&r, "query", "history", "--db", g_db, "--op", "lap,d2x", "--R", "4", "--grid", "512^3",
        "--config", FAST, NULL);
    expect_status(&r, 2);
    assert_has(r.err, "takes one problem: give --op one value");
    tu_result_free(&r);
    run(&r, "query", "best", "--db", g_db, "--nearest", "--gpu", "H100", "--op", "lap", "--R",
        "2,4", "--grid", "512^3", NULL);
    expect_status(&r, 2);
    assert_has(r.err, "give --R one value");
    tu_result_free(&r);
}

/* ------------------------------------------------------------------ --gpu auto */

/* Runs fdtune with the CUDA driver stand-in first on the loader path (ndevices GPUs), or as
 * the process has it (ndevices < 0). */
static void run_visible(tu_result *r, int ndevices, const char *const *argv)
{
#ifdef FAKE_CUDA_DIR
    char *old = getenv("LD_LIBRARY_PATH") ? strdup(getenv("LD_LIBRARY_PATH")) : NULL;
    char path[2048], n[16];
    if (ndevices >= 0) {
        snprintf(path, sizeof path, "%s%s%s", FAKE_CUDA_DIR, old ? ":" : "", old ? old : "");
        snprintf(n, sizeof n, "%d", ndevices);
        setenv("LD_LIBRARY_PATH", path, 1);
        setenv("FAKE_CUDA_DEVICES", n, 1);
    }
    runv(r, argv);
    if (old)
        setenv("LD_LIBRARY_PATH", old, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    unsetenv("FAKE_CUDA_DEVICES");
    free(old);
#else
    (void)ndevices;
    runv(r, argv);
#endif
}

/* 1 when fdtune sees no GPU, run as run_visible runs it. */
static int sees_no_gpu(int ndevices)
{
    static const char *const devices[] = {"devices", "--no-bandwidth", NULL};
    tu_result r;
    run_visible(&r, ndevices, devices);
    int none = strstr(r.out, "No GPU is visible") != NULL;
    tu_result_free(&r);
    return none;
}

/* --gpu auto means the visible GPU in query, export and a dry run as in tune: with none
 * visible, exit 3 and say so; with the stand-in driver's H100 visible, the H100's results
 * alone, and the dry run describes it. */
static void test_gpu_auto(void **state)
{
    (void)state;
    tu_result r;
    static const char *const best[] = {"query", "best", "--gpu", "auto", "--db", NULL, NULL};
    static const char *const runs[] = {"query", "runs", "--gpu", "auto", "--db", NULL, NULL};
    static const char *const nearest[] = {"query", "best", "--nearest", "--gpu", "auto",
                                          "--op", "lap", "--R", "4", "--grid", "512^3",
                                          "--db", NULL, NULL};
    static const char *const export[] = {"export", "--gpu", "auto", "--op", "lap", "--format",
                                         "json", "--db", NULL, NULL};
    static const char *const dry[] = {"tune", "--dry-run", "--gpu", "auto", "--op", "lap", "--R",
                                      "4", "--grid", "512^3", "--top", "1", "--db", NULL, NULL};
    const char *const *all[] = {best, runs, nearest, export, dry};
    const char *argv[5][16];
    for (int k = 0; k < 5; k++) { /* each with --db g_db */
        int n = 0;
        for (; all[k][n]; n++)
            argv[k][n] = all[k][n];
        argv[k][n] = g_db;
        argv[k][n + 1] = NULL;
    }
#ifdef FAKE_CUDA_DIR
    int none = 0; /* the stand-in shows no device, and the real drivers (if any) none */
#else
    int none = -1; /* as the process is */
#endif
    if (sees_no_gpu(none)) {
        for (int k = 0; k < 5; k++) {
            run_visible(&r, none, argv[k]);
            expect_status(&r, 3);
            assert_has(r.err, "no GPU is visible, so --gpu auto names no device");
            assert_has(r.err, "Name the GPU instead, e.g. --gpu H100");
            assert_string_equal(r.out, "");
            tu_result_free(&r);
        }
    } else {
        print_message("a GPU is visible here: --gpu auto without one is not checked\n");
    }
#ifdef FAKE_CUDA_DIR
    run_visible(&r, 1, argv[0]);
    expect_status(&r, 0);
    assert_has(r.err, "--gpu auto: the visible GPU, NVIDIA H100 80GB HBM3 (sm_90, 132 CUs)");
    assert_has(r.out, FAST);
    assert_has(r.out, D2X);
    assert_lacks(r.out, MI);
    tu_result_free(&r);
    run_visible(&r, 1, argv[1]);
    expect_status(&r, 0);
    assert_has(r.out, "NVIDIA H100 80GB HBM3");
    assert_lacks(r.out, "MI250X");
    tu_result_free(&r);
    run_visible(&r, 1, argv[2]);
    expect_status(&r, 0);
    assert_has(r.out, "fallback  exact:");
    assert_has(r.out, "device    NVIDIA H100 80GB HBM3 (sm_90, 132 CUs)");
    tu_result_free(&r);
    run_visible(&r, 1, argv[3]);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "NVIDIA H100 80GB HBM3");
    assert_lacks(r.out, "MI250X");
    tu_result_free(&r);
    run_visible(&r, 1, argv[4]); /* a dry run describes the visible GPU */
    expect_status(&r, 0);
    assert_has(r.out, "dry-run: NVIDIA H100 80GB HBM3 (sm_90, 132 CUs");
    tu_result_free(&r);
#else
    print_message("no cuda backend in this build: --gpu auto with a visible GPU is not checked "
                  "here (the stand-in driver needs it)\n");
#endif
}

/* ------------------------------------------------------------------ errors and defaults */

static void test_errors(void **state)
{
    (void)state;
    tu_result r;
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nope/none.db", g_dir);
    run(&r, "query", "best", "--db", missing, NULL);
    expect_status(&r, 4);
    assert_has(r.err, "no tuning database at");
    assert_has(r.err, missing);
    assert_string_equal(r.out, "");
    tu_result_free(&r);
    struct stat sb;
    assert_int_not_equal(stat(missing, &sb), 0); /* and nothing was created */

    static const char *const bad[][12] = {
        {"query", "best", "--grid", "600^", NULL},
        {"query", "best", "--R", "9", NULL},
        {"query", "best", "--json", "--csv", NULL},
        {"query", "best", "--limit", "3", NULL},
        {"query", "best", "--nearest", "--gpu", "H100", "--op", "lap", "--R", "4", NULL},
        {"query", "history", "--op", "lap", "--R", "4", "--grid", "512^3", NULL},
        {"query", "history", "--op", "lap", "--R", "4", "--grid", "8^3", "--config", "zz=1",
         NULL},
        {"query", "show", NULL},
        {"query", "show", "999", NULL},
        {"query", "frobnicate", NULL},
        {"query", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *const *a = bad[i];
        const char *args[16] = {0};
        int n = 0;
        for (; a[n]; n++)
            args[n] = a[n];
        args[n] = "--db"; /* a real database: only the arguments are wrong */
        args[n + 1] = g_db;
        runv(&r, args);
        if (r.status != 2 || !r.err[0])
            fail_msg("'%s %s %s ...': exit %d, want 2 with a message\n%s", a[0], a[1],
                     a[2] ? a[2] : "", r.status, r.err);
        tu_result_free(&r);
    }
    run(&r, "query", "show", "999", "--db", g_db, NULL);
    assert_has(r.err, "no run 999");
    tu_result_free(&r);

    run(&r, "query", "best", "--help", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "--nearest");
    tu_result_free(&r);
}

static void test_default_path(void **state)
{
    (void)state;
    setenv("FDTUNE_DB", g_db, 1);
    tu_result r;
    run(&r, "query", "runs", "--csv", NULL);
    unsetenv("FDTUNE_DB");
    expect_status(&r, 0);
    csv c;
    csv_load(r.out, &c, 3);
    csv_col(&c, "id");
    csv_free(&c);
    tu_result_free(&r);
}

/* Last: after every query above, the file is exactly as the tuner left it. */
static void test_read_only(void **state)
{
    (void)state;
    struct stat sb;
    assert_int_equal(stat(g_db, &sb), 0);
    assert_int_equal((size_t)sb.st_size, g_db_len);
    char *now = tu_slurp(g_db);
    assert_memory_equal(now, g_db_bytes, g_db_len);
    free(now);
}

/* ------------------------------------------------------------------ dwave */

/* dwave's absorbing layer is part of its problem (schema v8): a database of its own with one
 * H100 holding an undamped lap and two dwave problems that differ only in W; query best
 * --op dwave --absorb W finds the row of that layer alone, names it, and the machine forms
 * carry absorb_width and absorb_strength (null but for dwave); history and --nearest take the
 * layer; --op lap,dwave --absorb W keeps the lap row; without --absorb, exit 2. */
static void test_dwave(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/dwave.db", g_dir);
    fdt_db *db;
    fdt_err e;
    if (fdt_db_open(path, FDT_DB_CREATE, &db, &e))
        fail_msg("%s", e.msg);
    fdt_device h100 = device("cuda", "NVIDIA", "NVIDIA H100 80GB HBM3", "sm_90", 132,
                             "GPU-h100");
    fdt_problem lap = {FDT_OP_LAP, 4, FDT_F32, 64, 64, 64};
    fdt_problem w16 = {FDT_OP_DWAVE, 4, FDT_F32, 64, 64, 64};
    w16.absorb_w = 16;
    w16.absorb_s = 0.1;
    fdt_problem w8 = w16;
    w8.absorb_w = 8;
    int64_t run1 = begin(db, &h100, FDT_DB_TUNE, "fdtune --op dwave --absorb 16", 3000);
    add(db, run1, lap, FAST, FDT_DB_OK, 1.0, "");
    add(db, run1, w16, SLOW, FDT_DB_OK, 2.0, "");
    add(db, run1, w8, MI, FDT_DB_OK, 1.5, "");
    if (fdt_db_run_finish(db, run1, FDT_DB_DONE, &e))
        fail_msg("%s", e.msg);
    fdt_db_close(db);

    tu_result r;
    run(&r, "query", "best", "--db", path, "--no-system-db", "--op", "dwave", "--absorb", "16",
        NULL);
    expect_status(&r, 0);
    assert_has(r.out, "dwave R=4 f32 64x64x64 W=16 S=0.1");
    assert_has(r.out, SLOW);
    assert_lacks(r.out, MI);
    assert_lacks(r.out, "W=8");
    assert_lacks(r.out, "lap R=4");
    tu_result_free(&r);

    run(&r, "query", "best", "--db", path, "--no-system-db", "--op", "dwave", "--absorb",
        "16:0.1", "--json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"absorb_width\": 16");
    assert_has(r.out, "\"absorb_strength\": 0.1");
    tu_result_free(&r);
    /* another strength is another problem: nothing */
    run(&r, "query", "best", "--db", path, "--no-system-db", "--op", "dwave", "--absorb",
        "16:0.2", NULL);
    expect_status(&r, 0);
    assert_lacks(r.out, SLOW);
    tu_result_free(&r);

    run(&r, "query", "best", "--db", path, "--no-system-db", "--op", "lap,dwave", "--absorb",
        "8", "--csv", NULL);
    expect_status(&r, 0);
    csv c;
    csv_load(r.out, &c, 2); /* lap, then dwave W=8 */
    int kw = csv_col(&c, "absorb_width"), ks = csv_col(&c, "absorb_strength");
    int ko = csv_col(&c, "op");
    assert_string_equal(c.field[1][ko], "dwave");
    assert_string_equal(c.field[1][kw], "8");
    assert_true(fabs(atof(c.field[1][ks]) - 0.1) < 1e-12);
    assert_string_equal(c.field[2][ko], "lap");
    assert_string_equal(c.field[2][kw], "");
    assert_string_equal(c.field[2][ks], "");
    csv_free(&c);
    tu_result_free(&r);

    run(&r, "query", "history", "--db", path, "--no-system-db", "--op", "dwave", "--absorb",
        "8", "--R", "4", "--grid", "64^3", "--config", MI, NULL);
    expect_status(&r, 0);
    assert_has(r.out, "1.5000");
    tu_result_free(&r);
    run(&r, "query", "best", "--db", path, "--no-system-db", "--nearest", "--gpu", "h100",
        "--op", "dwave", "--absorb", "16", "--R", "4", "--grid", "64^3", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "fallback  exact:");
    assert_has(r.out, SLOW);
    assert_lacks(r.out, MI);
    tu_result_free(&r);

    run(&r, "query", "best", "--db", path, "--op", "dwave", NULL);
    expect_status(&r, 2);
    assert_has(r.err, "--op dwave needs --absorb W[:S]");
    assert_string_equal(r.out, "");
    tu_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_best_text),   cmocka_unit_test(test_best_json_csv),
        cmocka_unit_test(test_nearest),     cmocka_unit_test(test_fallback_agrees),     cmocka_unit_test(test_runs),
        cmocka_unit_test(test_show),        cmocka_unit_test(test_history),
        cmocka_unit_test(test_best_lists),  cmocka_unit_test(test_gpu_auto),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_read_only),   cmocka_unit_test(test_dwave),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
