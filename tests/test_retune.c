/* Tests of retune's decision logic (tuner/retune.c) without a GPU, against databases written
 * here through the fdt_db API: the regression threshold on both sides of 5%, the noise rule
 * (a result faster only within the interquartile noise never replaces the best, one faster
 * beyond it does), environment changes detected field by field, the plan (visible devices
 * matched by model and UUID, --op/--gpu/--since, one item per GPU and problem), the verdict
 * and decision after re-measuring and re-searching in each situation a night can bring, the
 * lock (held, refused with the holder's name, released, taken over from a dead holder), a
 * recorded v1 database migrated with its best answers intact, and the fdtune binary up to
 * the point where it needs a GPU. Every file lives under a mkdtemp directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdt_db.h"
#include "fdt_retune.h"
#include "testsql.h"
#include "testutil.h"

#ifndef FDTUNE_BIN
#error "FDTUNE_BIN (the fdtune executable) must be defined by the build"
#endif

static char g_dir[256];

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
}

/* ------------------------------------------------------------------ fixtures */

static fdt_device device(const char *name, int cu, const char *uuid, const char *driver)
{
    fdt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.backend, sizeof d.backend, "cuda");
    snprintf(d.vendor, sizeof d.vendor, "NVIDIA");
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "sm_90");
    d.compute_units = cu;
    d.warp_size = 32;
    d.l2_bytes = 50 << 20;
    d.mem_bytes = 80LL << 30;
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    snprintf(d.pci, sizeof d.pci, "0000:18:00.0");
    snprintf(d.driver_version, sizeof d.driver_version, "%s", driver);
    snprintf(d.runtime_version, sizeof d.runtime_version, "13.0");
    snprintf(d.compiler_version, sizeof d.compiler_version, "13.0.48");
    return d;
}

static fdt_problem problem(fdt_op op, int64_t n)
{
    fdt_problem p = {op, 4, FDT_F32, n, n, n};
    return p;
}

static fdt_db *open_db(const char *path, int flags)
{
    fdt_db *db = NULL;
    fdt_err e = {""};
    if (fdt_db_open(path, flags, &db, &e))
        fail_msg("open %s: %s", path, e.msg);
    return db;
}

static int64_t begin(fdt_db *db, int64_t dev, int64_t env, fdt_db_run_kind kind)
{
    fdt_db_run r;
    fdt_db_run_init(&r);
    r.kind = kind;
    r.device_id = dev;
    r.env_id = env;
    r.copy_gbs = 3000;
    snprintf(r.command, sizeof r.command, "test");
    int64_t id = 0;
    fdt_err e = {""};
    if (fdt_db_run_begin(db, &r, &id, &e))
        fail_msg("begin run: %s", e.msg);
    return id;
}

/* An ok full evaluation with a given median and interquartile range (NaN median: wrong). */
static fdt_db_eval timed(int64_t run, int64_t prob, const char *config, double ms, double iqr)
{
    fdt_db_eval ev;
    fdt_db_eval_init(&ev);
    ev.run_id = run;
    ev.problem_id = prob;
    snprintf(ev.config, sizeof ev.config, "%s", config);
    if (isnan(ms)) {
        ev.status = FDT_DB_WRONG;
        snprintf(ev.message, sizeof ev.message, "max error 3.1e-02 above tolerance");
        return ev;
    }
    ev.time_ms = ms;
    ev.time_q1_ms = ms - iqr / 2;
    ev.time_q3_ms = ms + iqr / 2;
    ev.time_min_ms = ms - iqr;
    ev.time_max_ms = ms + 2 * iqr;
    ev.reps = 40;
    ev.gbs = 1000 / ms;
    return ev;
}

static int64_t put(fdt_db *db, fdt_db_eval *ev)
{
    fdt_err e = {""};
    int64_t id = 0;
    if (fdt_db_eval_insert(db, ev, &id, &e))
        fail_msg("insert %s: %s", ev->config, e.msg);
    ev->id = id;
    return id;
}

static void env_of(const fdt_device *d, fdt_db_env *v)
{
    fdt_db_env_from_device(d, "0.1.0", v);
}

static int64_t ids(fdt_db *db, const fdt_device *d, const fdt_problem *p, int64_t *dev,
                   int64_t *prob)
{
    fdt_err e = {""};
    fdt_db_env v;
    env_of(d, &v);
    int64_t env = 0;
    if (fdt_db_device_id(db, d, dev, &e) || fdt_db_env_id(db, &v, &env, &e) ||
        (p && fdt_db_problem_id(db, p, prob, &e)))
        fail_msg("ids: %s", e.msg);
    return env;
}

static int take_row(void *ctx, const fdt_db_row *row)
{
    *(fdt_db_row *)ctx = *row;
    return 1;
}

/* The best fdt_db_best answers for one device and problem (the evaluation id). */
static int64_t best_eval(fdt_db *db, int64_t dev, const fdt_problem *p)
{
    fdt_db_filter f;
    fdt_db_filter_init(&f);
    f.device_id = dev;
    f.ops = 1u << p->op;
    f.Rs = 1u << p->R;
    const int64_t grid[][3] = {{p->nx, p->ny, p->nz}};
    f.grids = grid;
    f.ngrids = 1;
    fdt_db_row *row = calloc(1, sizeof *row);
    fdt_err e = {""};
    if (fdt_db_best(db, &f, take_row, row, &e))
        fail_msg("best: %s", e.msg);
    int64_t id = row->ev.id;
    free(row);
    return id;
}

/* ------------------------------------------------------------------ pure rules */

static fdt_decide_timing tm(double median, double iqr)
{
    fdt_decide_timing t = {median, median - iqr / 2, median + iqr / 2, NAN, NAN};
    return t;
}

static void test_judge_threshold(void **state)
{
    (void)state;
    fdt_decide_timing stored = tm(1.0, 0.01);
    struct {
        double now;
        fdt_decide_verdict want;
    } cases[] = {
        {1.0, FDT_DECIDE_UNCHANGED},   {1.049, FDT_DECIDE_UNCHANGED},
        {1.05, FDT_DECIDE_UNCHANGED},  /* "more than 5%": exactly 5% is not */
        {1.051, FDT_DECIDE_REGRESSED}, {1.5, FDT_DECIDE_REGRESSED},
        {0.951, FDT_DECIDE_UNCHANGED}, {0.949, FDT_DECIDE_IMPROVED},
        {NAN, FDT_DECIDE_FAILED},      {0.0, FDT_DECIDE_FAILED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fdt_decide_timing now = tm(cases[i].now, 0.01);
        fdt_decide_verdict v = fdt_decide_judge(&stored, &now, 0.05);
        if (v != cases[i].want)
            fail_msg("now %.3f: %s, want %s", cases[i].now, fdt_decide_verdict_name(v),
                     fdt_decide_verdict_name(cases[i].want));
    }
    /* Another threshold moves the line. */
    fdt_decide_timing now = tm(1.03, 0.01);
    assert_int_equal(fdt_decide_judge(&stored, &now, 0.02), FDT_DECIDE_REGRESSED);
    assert_int_equal(fdt_decide_judge(&stored, &now, 0.05), FDT_DECIDE_UNCHANGED);
    assert_string_equal(fdt_decide_verdict_name(FDT_DECIDE_REGRESSED), "regressed");
}

static void test_noise_rule(void **state)
{
    (void)state;
    /* Interquartile ranges: the larger of the two counts. */
    fdt_decide_timing old = tm(1.0, 0.02), cand;
    assert_true(fabs(fdt_decide_noise(&old) - 0.02) < 1e-12);
    cand = tm(0.985, 0.002);
    assert_int_equal(fdt_decide_beats(&old, &cand), 0); /* 1.5% faster, noise 2% */
    cand = tm(0.975, 0.002);
    assert_int_equal(fdt_decide_beats(&old, &cand), 1);
    old = tm(1.0, 0.002);
    cand = tm(0.975, 0.05); /* the candidate's own noise counts too */
    assert_int_equal(fdt_decide_beats(&old, &cand), 0);
    cand = tm(0.94, 0.05);
    assert_int_equal(fdt_decide_beats(&old, &cand), 1);
    /* A floor of 0.5% of the median, however tight the quartiles. */
    old = tm(1.0, 0.0);
    assert_true(fabs(fdt_decide_noise(&old) - 0.005) < 1e-12);
    cand = tm(0.996, 0.0);
    assert_int_equal(fdt_decide_beats(&old, &cand), 0);
    cand = tm(0.99, 0.0);
    assert_int_equal(fdt_decide_beats(&old, &cand), 1);
    /* Without quartiles, min..max. */
    fdt_decide_timing mm = {1.0, NAN, NAN, 0.97, 1.06};
    assert_true(fabs(fdt_decide_noise(&mm) - 0.09) < 1e-12);
    cand = tm(0.92, 0.0);
    assert_int_equal(fdt_decide_beats(&mm, &cand), 0);
    cand = tm(0.90, 0.0);
    assert_int_equal(fdt_decide_beats(&mm, &cand), 1);
    /* Failed measurements: never a winner, always beaten. */
    fdt_decide_timing failed = tm(NAN, 0);
    assert_int_equal(fdt_decide_beats(&old, &failed), 0);
    assert_int_equal(fdt_decide_beats(&failed, &old), 1);
    /* From a database row: only an ok row has a median. */
    fdt_db_eval ev = timed(1, 1, "bx=32", 2.0, 0.04);
    fdt_decide_timing t;
    fdt_decide_timing_of(&ev, &t);
    assert_true(t.median_ms == 2.0 && fabs(t.q3_ms - t.q1_ms - 0.04) < 1e-12);
    ev.status = FDT_DB_CRASHED;
    fdt_decide_timing_of(&ev, &t);
    assert_true(isnan(t.median_ms));
}

static void test_env_diff(void **state)
{
    (void)state;
    fdt_db_env a = {0, "580.65.06", "13.0", "13.0.48", "0.1.0", "gen-aaaa"};
    fdt_db_env b = a;
    char buf[512];
    assert_int_equal(fdt_decide_env_diff(&a, &b, buf, sizeof buf), 0u);
    assert_string_equal(buf, "");
    struct {
        size_t off;
        unsigned bit;
        const char *name;
    } fields[] = {
        {offsetof(fdt_db_env, driver), FDT_DECIDE_ENV_DRIVER, "driver"},
        {offsetof(fdt_db_env, runtime), FDT_DECIDE_ENV_RUNTIME, "runtime"},
        {offsetof(fdt_db_env, compiler), FDT_DECIDE_ENV_COMPILER, "compiler"},
        {offsetof(fdt_db_env, fdtune_version), FDT_DECIDE_ENV_FDTUNE, "fdtune"},
        {offsetof(fdt_db_env, generator), FDT_DECIDE_ENV_GENERATOR, "generator"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        b = a;
        char *f = (char *)&b + fields[i].off;
        const char *was = (const char *)&a + fields[i].off;
        snprintf(f, 16, "new-%zu", i);
        unsigned m = fdt_decide_env_diff(&a, &b, buf, sizeof buf);
        if (m != fields[i].bit)
            fail_msg("%s changed: mask 0x%x, want 0x%x", fields[i].name, m, fields[i].bit);
        char want[128];
        snprintf(want, sizeof want, "%s %s -> new-%zu", fields[i].name, was, i);
        assert_string_equal(buf, want);
        assert_string_equal(fdt_decide_env_field(fields[i].bit), fields[i].name);
    }
    /* Several at once, in field order; an empty value reads "(none)"; NULL buffer is fine. */
    b = a;
    snprintf(b.driver, sizeof b.driver, "590.10");
    snprintf(b.compiler, sizeof b.compiler, "%s", "");
    unsigned m = fdt_decide_env_diff(&a, &b, buf, sizeof buf);
    assert_int_equal(m, FDT_DECIDE_ENV_DRIVER | FDT_DECIDE_ENV_COMPILER);
    assert_string_equal(buf, "driver 580.65.06 -> 590.10, compiler 13.0.48 -> (none)");
    assert_int_equal(fdt_decide_env_diff(&a, &b, NULL, 0), m);
}

static void test_cutoff(void **state)
{
    (void)state;
    char buf[32];
    fdt_retune_cutoff((time_t)1700000000, 7 * 86400, buf, sizeof buf);
    assert_string_equal(buf, "2023-11-07T22:13:20.000Z");
    fdt_retune_cutoff((time_t)1700000000, 0, buf, sizeof buf);
    assert_string_equal(buf, "2023-11-14T22:13:20.000Z");
    /* Compares as text with the database's timestamps. */
    assert_true(strcmp("2023-11-14T22:13:20.001Z", buf) > 0);
}

/* ------------------------------------------------------------------ plan */

static void test_match(void **state)
{
    (void)state;
    fdt_device live[3] = {
        device("NVIDIA H100 80GB HBM3", 132, "GPU-1", "580"),
        device("NVIDIA H100 80GB HBM3", 132, "GPU-2", "580"),
        device("NVIDIA H100 PCIe", 114, "GPU-3", "580"),
    };
    fdt_device d = device("NVIDIA H100 80GB HBM3", 132, "GPU-2", "570");
    int same = -1;
    assert_int_equal(fdt_retune_match(&d, live, 3, &same), 1); /* the very GPU */
    assert_int_equal(same, 1);
    snprintf(d.uuid, sizeof d.uuid, "GPU-gone");
    assert_int_equal(fdt_retune_match(&d, live, 3, &same), 0); /* first of the model */
    assert_int_equal(same, 0);
    d.compute_units = 114; /* not a model that is visible */
    assert_int_equal(fdt_retune_match(&d, live, 3, &same), -1);
    snprintf(d.name, sizeof d.name, "NVIDIA H100 PCIe");
    assert_int_equal(fdt_retune_match(&d, live, 3, &same), 2);
    /* the model is (name, base arch, compute units): memory is not part of it */
    d.mem_bytes = 94LL << 30;
    assert_int_equal(fdt_retune_match(&d, live, 3, &same), 2);
    snprintf(d.arch, sizeof d.arch, "gfx90a"); /* never the same as sm_90 */
    assert_int_equal(fdt_retune_match(&d, live, 3, &same), -1);
    assert_int_equal(fdt_retune_match(&d, live, 0, &same), -1);
}

static void test_plan(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "plan.db");
    fdt_db *db = open_db(path, FDT_DB_CREATE);
    fdt_err e = {""};
    fdt_device h1 = device("NVIDIA H100 80GB HBM3", 132, "GPU-1", "580.65.06");
    fdt_device h9 = device("NVIDIA H100 80GB HBM3", 132, "GPU-9", "580.65.06");
    fdt_device mi = device("AMD Instinct MI250X", 110, "GPU-mi", "6.3");
    snprintf(mi.backend, sizeof mi.backend, "hip");
    snprintf(mi.vendor, sizeof mi.vendor, "AMD");
    snprintf(mi.arch, sizeof mi.arch, "gfx90a");
    fdt_problem lap = problem(FDT_OP_LAP, 512), d2z = problem(FDT_OP_D2Z, 512),
                d2x = problem(FDT_OP_D2X, 256), old = problem(FDT_OP_LAP, 256);
    int64_t dev1, dev9, devmi, plap, pd2z, pd2x, pold;
    int64_t env1 = ids(db, &h1, &lap, &dev1, &plap);
    int64_t env9 = ids(db, &h9, &d2z, &dev9, &pd2z);
    int64_t envmi = ids(db, &mi, &d2x, &devmi, &pd2x);
    assert_int_equal(fdt_db_problem_id(db, &old, &pold, &e), 0);

    /* GPU-1 (visible): lap with 4 configs, d2z with 2, an old lap 256^3 run; GPU-9 (gone,
     * same model): lap and d2z too; the MI250X (not visible): d2x. */
    int64_t r1 = begin(db, dev1, env1, FDT_DB_TUNE);
    fdt_db_eval evs[] = {
        timed(r1, plap, "bx=32", 1.0, 0.01), timed(r1, plap, "bx=128", 1.1, 0.01),
        timed(r1, plap, "by=8", 1.2, 0.01),  timed(r1, plap, "nw=32", 1.3, 0.01),
        timed(r1, plap, "nw=64", NAN, 0),    timed(r1, pd2z, "nw=16", 2.0, 0.01),
        timed(r1, pd2z, "nw=32", 2.5, 0.01),
    };
    for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
        put(db, &evs[i]);
    int64_t r_old = begin(db, dev1, env1, FDT_DB_TUNE);
    fdt_db_eval o = timed(r_old, pold, "bx=32", 0.2, 0.01);
    put(db, &o);
    int64_t r9 = begin(db, dev9, env9, FDT_DB_TUNE);
    fdt_db_eval e9[] = {timed(r9, plap, "bx=16", 0.9, 0.01), timed(r9, pd2z, "nw=8", 1.9, 0.01),
                        timed(r9, pold, "bx=8", 0.1, 0.01)};
    for (size_t i = 0; i < 3; i++)
        put(db, &e9[i]);
    int64_t rmi = begin(db, devmi, envmi, FDT_DB_TUNE);
    fdt_db_eval emi = timed(rmi, pd2x, "vec=2", 0.5, 0.01);
    put(db, &emi);
    /* A decision for d2z on GPU-1. */
    assert_int_equal(fdt_db_best_decide(db, dev1, pd2z, evs[5].id, 0, "test", &e), 0);
    /* The old lap 256^3 runs started long ago. */
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE runs SET started = '2020-01-01T00:00:00.000Z' WHERE id IN (%lld, %lld)",
             (long long)r_old, (long long)r9);
    fdt_db_close(db);
    sql_exec(path, sql);
    db = open_db(path, FDT_DB_READWRITE);

    /* Visible: GPU-1 and another H100 PCIe. */
    fdt_device live[2] = {device("NVIDIA H100 PCIe", 114, "GPU-p", "580.65.06"), h1};
    fdt_retune_plan plan;
    assert_int_equal(fdt_retune_plan_build(db, live, 2, NULL, &plan, &e), 0);
    /* lap 256, lap 512, d2z 512 on GPU-1: GPU-9's three pairs map to it as well and lose to
     * GPU-1's own; the MI250X is not visible. */
    assert_int_equal(plan.n, 3);
    assert_int_equal(plan.absent, 1);
    assert_int_equal(plan.duplicate, 3);
    assert_int_equal(plan.older, 0);
    const fdt_retune_item *it = &plan.items[0];
    assert_int_equal(it->problem.op, FDT_OP_D2Z); /* d2z sorts before lap */
    assert_int_equal(it->live, 1);
    assert_int_equal(it->same_gpu, 1);
    assert_int_equal(it->device.id, dev1);
    assert_int_equal(it->decided, 1);
    assert_int_equal(it->ncand, 2);
    assert_string_equal(it->cand[0].ev.config, "nw=16");
    it = &plan.items[2];
    assert_int_equal(it->problem.op, FDT_OP_LAP);
    assert_int_equal(it->problem.nx, 512);
    assert_int_equal(it->problem_id, plap);
    assert_int_equal(it->decided, 0);
    assert_int_equal(it->ncand, FDT_RETUNE_TOP);
    assert_string_equal(it->cand[0].ev.config, "bx=32"); /* best, then runners-up */
    assert_string_equal(it->cand[1].ev.config, "bx=128");
    assert_string_equal(it->cand[2].ev.config, "by=8");
    assert_string_equal(it->cand[0].env.driver, "580.65.06");
    assert_int_equal(strlen(it->last_run), 24);
    fdt_retune_plan_free(&plan);

    /* Only GPU-9's model visible under another UUID: its pairs and GPU-1's compete; GPU-1's
     * have the newer runs except for lap 256^3, where both are old and GPU-1's run is kept
     * by id. */
    fdt_device other = device("NVIDIA H100 80GB HBM3", 132, "GPU-new", "580.65.06");
    assert_int_equal(fdt_retune_plan_build(db, &other, 1, NULL, &plan, &e), 0);
    assert_int_equal(plan.n, 3);
    for (size_t i = 0; i < plan.n; i++) {
        assert_int_equal(plan.items[i].same_gpu, 0);
        assert_int_equal(plan.items[i].live, 0);
    }
    assert_int_equal(plan.items[2].device.id, dev1); /* lap 512: GPU-1's run is newer */
    fdt_retune_plan_free(&plan);

    /* --op, --gpu, --since. */
    fdt_retune_filter f;
    fdt_retune_filter_init(&f);
    f.ops = 1u << FDT_OP_D2Z;
    assert_int_equal(fdt_retune_plan_build(db, live, 2, &f, &plan, &e), 0);
    assert_int_equal(plan.n, 1);
    assert_int_equal(plan.items[0].problem.op, FDT_OP_D2Z);
    fdt_retune_plan_free(&plan);
    fdt_retune_filter_init(&f);
    f.gpu = "mi250";
    assert_int_equal(fdt_retune_plan_build(db, live, 2, &f, &plan, &e), 0);
    assert_int_equal(plan.n, 0);
    assert_int_equal(plan.absent, 1);
    fdt_retune_plan_free(&plan);
    fdt_retune_filter_init(&f);
    f.gpu = "SM_90";
    f.since = "2024-01-01T00:00:00.000Z";
    assert_int_equal(fdt_retune_plan_build(db, live, 2, &f, &plan, &e), 0);
    assert_int_equal(plan.n, 2); /* lap 256^3 only has runs from 2020 */
    assert_int_equal(plan.older, 4); /* GPU-1's lap 256^3 and all three of GPU-9 */
    assert_int_equal(plan.duplicate, 0);
    for (size_t i = 0; i < plan.n; i++)
        assert_int_equal(plan.items[i].problem.nx, 512);
    fdt_retune_plan_free(&plan);
    f.since = "2999-01-01T00:00:00.000Z";
    assert_int_equal(fdt_retune_plan_build(db, live, 2, &f, &plan, &e), 0);
    assert_int_equal(plan.n, 0);
    fdt_retune_plan_free(&plan);
    f.since = NULL;
    f.top = 1;
    assert_int_equal(fdt_retune_plan_build(db, live, 2, &f, &plan, &e), 0);
    assert_int_equal(plan.items[2].ncand, 1);
    fdt_retune_plan_free(&plan);
    /* No GPU visible: nothing to do, everything absent. */
    assert_int_equal(fdt_retune_plan_build(db, NULL, 0, NULL, &plan, &e), 0);
    assert_int_equal(plan.n, 0);
    assert_int_equal(plan.absent, 7);
    fdt_retune_plan_free(&plan);
    fdt_db_close(db);
}

/* ------------------------------------------------------------------ one night after another */

/* A database with one H100 and lap R=4 512^3 tuned in environment "580.65.06": bx=32 at
 * 1.00 ms (IQR 0.01), bx=128 at 1.02, by=8 at 1.05, a faster wrong nw=64. Each night is a
 * plan on the visible GPU (driver given), a retune run, re-measurements, perhaps a
 * re-search run, then the conclusion. */
typedef struct night {
    char path[512];
    fdt_db *db;
    int64_t dev, prob, stored_a, tune_env;
    fdt_problem p;
    fdt_device live;
    fdt_db_env now;
    int64_t now_env, run, research;
    fdt_retune_item *it;
    fdt_db_eval m[FDT_RETUNE_TOP];
    fdt_retune_outcome out;
} night;

static void history(night *n, const char *name)
{
    path_in(n->path, sizeof n->path, name);
    n->db = open_db(n->path, FDT_DB_CREATE);
    n->p = problem(FDT_OP_LAP, 512);
    fdt_device d = device("NVIDIA H100 80GB HBM3", 132, "GPU-1", "580.65.06");
    n->tune_env = ids(n->db, &d, &n->p, &n->dev, &n->prob);
    int64_t run = begin(n->db, n->dev, n->tune_env, FDT_DB_TUNE);
    fdt_db_eval evs[] = {timed(run, n->prob, "bx=32", 1.00, 0.01),
                         timed(run, n->prob, "bx=128", 1.02, 0.01),
                         timed(run, n->prob, "by=8", 1.05, 0.01),
                         timed(run, n->prob, "nw=64", NAN, 0)};
    for (size_t i = 0; i < 4; i++)
        put(n->db, &evs[i]);
    n->stored_a = evs[0].id;
    fdt_err e = {""};
    assert_int_equal(fdt_db_run_finish(n->db, run, FDT_DB_DONE, &e), 0);
    n->it = calloc(1, sizeof *n->it);
    assert_non_null(n->it);
}

/* Plans tonight with the GPU's driver and begins the retune run. */
static void tonight(night *n, const char *driver)
{
    n->live = device("NVIDIA H100 80GB HBM3", 132, "GPU-1", driver);
    env_of(&n->live, &n->now);
    int64_t dev, prob;
    n->now_env = ids(n->db, &n->live, &n->p, &dev, &prob);
    assert_int_equal(dev, n->dev);
    fdt_retune_plan plan;
    fdt_err e = {""};
    assert_int_equal(fdt_retune_plan_build(n->db, &n->live, 1, NULL, &plan, &e), 0);
    assert_int_equal(plan.n, 1);
    *n->it = plan.items[0];
    fdt_retune_plan_free(&plan);
    n->run = begin(n->db, n->dev, n->now_env, FDT_DB_RETUNE);
    n->research = 0;
}

/* The stored configs measured again (NaN: wrong), then assessed. */
static void measure(night *n, const double *ms, double threshold, int force)
{
    for (int i = 0; i < n->it->ncand; i++) {
        n->m[i] = timed(n->run, n->prob, n->it->cand[i].ev.config, ms[i], 0.01);
        put(n->db, &n->m[i]);
    }
    fdt_retune_assess(n->it, n->m, n->it->ncand, &n->now, threshold, force, &n->out);
}

/* A re-search found these (config, ms) pairs. */
static void researched(night *n, const char *const *configs, const double *ms, int k)
{
    n->research = begin(n->db, n->dev, n->now_env, FDT_DB_RETUNE);
    for (int i = 0; i < k; i++) {
        fdt_db_eval ev = timed(n->research, n->prob, configs[i], ms[i], 0.01);
        put(n->db, &ev);
    }
    n->out.researched = 1;
    n->out.research_run_id = n->research;
}

static void conclude(night *n, double threshold)
{
    int64_t runs[2] = {n->run, n->research};
    fdt_err e = {""};
    if (fdt_retune_conclude(n->db, n->it, n->dev, runs, 2, threshold, &n->out, &e))
        fail_msg("conclude: %s", e.msg);
    if (fdt_db_run_finish(n->db, n->run, FDT_DB_DONE, &e) ||
        (n->research && fdt_db_run_finish(n->db, n->research, FDT_DB_DONE, &e)))
        fail_msg("finish: %s", e.msg);
}

static void night_close(night *n)
{
    fdt_err e = {""};
    assert_int_equal(fdt_db_check(n->db, &e), 0);
    fdt_db_close(n->db);
    free(n->it);
}

/* Nothing changed; a runner-up is faster by noise alone, then beyond it. */
static void test_steady_and_noise(void **state)
{
    (void)state;
    night n;
    history(&n, "steady.db");
    tonight(&n, "580.65.06");
    assert_int_equal(n.it->decided, 0);
    /* bx=32 1.00 as stored; bx=128 0.995: faster than anything stored, within noise. */
    measure(&n, (double[]){1.00, 0.995, 1.06}, 0.05, 0);
    assert_int_equal(n.out.env_changed, 0u);
    assert_int_equal(n.out.regressed, 0);
    assert_int_equal(n.out.research, 0);
    assert_int_equal(n.out.ncheck, 3);
    assert_int_equal(n.out.check[0].verdict, FDT_DECIDE_UNCHANGED);
    assert_int_equal(n.out.check[2].verdict, FDT_DECIDE_UNCHANGED); /* +0.95% */
    assert_true(fabs(n.out.check[1].change - (0.995 / 1.02 - 1)) < 1e-12);
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_ADOPTED);
    assert_int_equal(n.out.best_eval_id, n.stored_a);
    /* Without the decision the smallest median (bx=128 at 0.995) would now be the best. */
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.stored_a);
    assert_int_equal(sql_int(n.path, "SELECT count(*) FROM best_decisions"), 1);

    /* The next night: decided; nothing moves, nothing is recorded. */
    tonight(&n, "580.65.06");
    assert_int_equal(n.it->decided, 1);
    assert_int_equal(n.it->cand[0].ev.id, n.stored_a);
    measure(&n, (double[]){1.004, 0.996, 1.05}, 0.05, 0);
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_KEPT);
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.stored_a);
    assert_int_equal(sql_int(n.path, "SELECT count(*) FROM best_decisions"), 1);

    /* Then bx=128 is faster beyond the noise of both (0.94 < 1.00 - 0.01), and more than 5%
     * faster than its own fastest stored (0.995 from the first night). */
    tonight(&n, "580.65.06");
    assert_true(n.it->cand[1].ev.time_ms == 0.995);
    measure(&n, (double[]){1.00, 0.94, 1.05}, 0.05, 0);
    assert_int_equal(n.out.check[1].verdict, FDT_DECIDE_IMPROVED);
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_REPLACED);
    assert_string_equal(n.out.best_config, "bx=128");
    assert_has(n.out.reason, "faster beyond noise");
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.m[1].id);
    fdt_db_decision d;
    int found;
    fdt_err e = {""};
    assert_int_equal(fdt_db_best_decision(n.db, n.dev, n.prob, &d, &found, &e), 0);
    assert_int_equal(d.eval_id, n.m[1].id);
    assert_string_equal(d.reason, n.out.reason);
    night_close(&n);
}

/* A new driver: re-search due; nothing better found, so the decision moves to today's
 * measurement of the same config, and the night after compares with that. */
static void test_env_change(void **state)
{
    (void)state;
    night n;
    history(&n, "env.db");
    tonight(&n, "590.10");
    measure(&n, (double[]){1.02, 1.03, 1.06}, 0.05, 0);
    assert_int_equal(n.out.env_changed, FDT_DECIDE_ENV_DRIVER);
    assert_string_equal(n.out.env_diff, "driver 580.65.06 -> 590.10");
    assert_int_equal(n.out.regressed, 0);
    assert_int_equal(n.out.research, 1);
    const char *cfg[] = {"nw=32"};
    researched(&n, cfg, (double[]){1.015}, 1); /* faster, within noise */
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_REFRESHED);
    assert_has(n.out.reason, "environment changed");
    assert_string_equal(n.out.best_config, "bx=32");
    assert_int_equal(n.out.best_eval_id, n.m[0].id);
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.m[0].id);

    tonight(&n, "590.10");
    assert_int_equal(n.it->cand[0].ev.id, n.m[0].id);
    measure(&n, (double[]){1.03, 1.03, 1.06}, 0.05, 0);
    assert_int_equal(n.out.env_changed, 0u); /* the best is today's environment's now */
    assert_int_equal(n.out.research, 0);
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_KEPT);
    night_close(&n);
}

/* The best got 10% slower; the re-search finds a config within the threshold. */
static void test_regression_recovered(void **state)
{
    (void)state;
    night n;
    history(&n, "recovered.db");
    tonight(&n, "580.65.06");
    measure(&n, (double[]){1.10, 1.12, 1.15}, 0.05, 0);
    assert_int_equal(n.out.check[0].verdict, FDT_DECIDE_REGRESSED);
    assert_int_equal(n.out.regressed, 1);
    assert_int_equal(n.out.research, 1);
    const char *cfg[] = {"nw=32", "tile=2"};
    researched(&n, cfg, (double[]){1.03, 1.20}, 2);
    conclude(&n, 0.05);
    assert_int_equal(n.out.recovered, 1);
    assert_int_equal(n.out.action, FDT_RETUNE_REPLACED);
    assert_string_equal(n.out.best_config, "nw=32");
    assert_true(n.out.fastest_ms == 1.03);
    fdt_db_row *row = calloc(1, sizeof *row);
    fdt_db_filter f;
    fdt_db_filter_init(&f);
    fdt_err e = {""};
    assert_int_equal(fdt_db_best(n.db, &f, take_row, row, &e), 0);
    assert_string_equal(row->ev.config, "nw=32");
    assert_int_equal(row->ev.run_id, n.research);
    free(row);
    night_close(&n);
}

/* The best got 10% slower and nothing comes within 5% of its old median: not recovered. */
static void test_regression_not_recovered(void **state)
{
    (void)state;
    night n;
    history(&n, "lost.db");
    tonight(&n, "580.65.06");
    measure(&n, (double[]){1.10, 1.13, 1.16}, 0.05, 0);
    const char *cfg[] = {"nw=32"};
    researched(&n, cfg, (double[]){1.095}, 1); /* within noise of 1.10, and > 1.05 */
    conclude(&n, 0.05);
    assert_int_equal(n.out.regressed, 1);
    assert_int_equal(n.out.recovered, 0);
    assert_int_equal(n.out.action, FDT_RETUNE_REFRESHED);
    assert_has(n.out.reason, "regression");
    assert_string_equal(n.out.best_config, "bx=32");
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.m[0].id);
    /* At a 10% threshold the same night is no regression. */
    fdt_retune_assess(n.it, n.m, 3, &n.now, 0.10, 0, &n.out);
    assert_int_equal(n.out.regressed, 0);
    assert_int_equal(n.out.research, 0);
    night_close(&n);
}

/* The best is wrong today: the fastest verified result replaces it; all wrong: lost. */
static void test_best_fails(void **state)
{
    (void)state;
    night n;
    history(&n, "fails.db");
    tonight(&n, "580.65.06");
    measure(&n, (double[]){NAN, 1.03, 1.06}, 0.05, 0);
    assert_int_equal(n.out.check[0].verdict, FDT_DECIDE_FAILED);
    assert_has(n.out.check[0].message, "wrong");
    assert_true(isnan(n.out.check[0].change));
    assert_int_equal(n.out.regressed, 1);
    assert_int_equal(n.out.research, 1);
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_REPLACED);
    assert_has(n.out.reason, "wrong");
    assert_string_equal(n.out.best_config, "bx=128");
    assert_int_equal(n.out.recovered, 1); /* 1.03 is within 5% of 1.00 */
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.m[1].id);
    night_close(&n);

    history(&n, "allwrong.db");
    tonight(&n, "580.65.06");
    measure(&n, (double[]){NAN, NAN, NAN}, 0.05, 0);
    researched(&n, NULL, NULL, 0);
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_LOST);
    assert_int_equal(n.out.recovered, 0);
    assert_true(isnan(n.out.fastest_ms));
    assert_int_equal(sql_int(n.path, "SELECT count(*) FROM best_decisions"), 0);
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.stored_a); /* the record stands */
    night_close(&n);
}

/* --force-env-change: the re-search path with nothing changed. */
static void test_forced(void **state)
{
    (void)state;
    night n;
    history(&n, "forced.db");
    tonight(&n, "580.65.06");
    measure(&n, (double[]){1.00, 1.02, 1.05}, 0.05, 1);
    assert_int_equal(n.out.env_changed, 0u);
    assert_int_equal(n.out.forced, 1);
    assert_int_equal(n.out.research, 1);
    researched(&n, (const char *[]){"nw=32"}, (double[]){1.01}, 1);
    conclude(&n, 0.05);
    assert_int_equal(n.out.action, FDT_RETUNE_REFRESHED);
    assert_has(n.out.reason, "forced");
    assert_int_equal(n.out.regressed, 0);
    night_close(&n);
}

/* ------------------------------------------------------------------ clocks */

/* SM clocks against their maximum, memory at its maximum (testsql.c). */
static fdt_clocks clocks(int sm, int sm_max, uint64_t reasons)
{
    return sql_clocks(sm, sm_max, 2619, 2619, reasons);
}

/* The rule of tuner/decide.c: a thermal or power cap, or a busy SM clock below 0.9 of its
 * maximum, makes a run throttled; idle clocks and unknown clocks do not; only a regression
 * becomes "throttled". */
static void test_throttle_rule(void **state)
{
    (void)state;
    char why[256];
    fdt_clocks c = clocks(1980, 1980, 0), unknown;
    fdt_clocks_init(&unknown);
    assert_int_equal(fdt_decide_throttled(&c, why, sizeof why), 0);
    assert_int_equal(fdt_decide_throttled(&unknown, why, sizeof why), 0);
    const uint64_t caps[] = {FDT_THROTTLE_SW_POWER_CAP, FDT_THROTTLE_HW_SLOWDOWN,
                             FDT_THROTTLE_SW_THERMAL, FDT_THROTTLE_HW_THERMAL,
                             FDT_THROTTLE_HW_POWER_BRAKE};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        c = clocks(1980, 1980, caps[i]);
        assert_int_equal(fdt_decide_throttled(&c, why, sizeof why), 1);
        assert_string_equal(why, fdt_throttle_name(caps[i]));
    }
    /* not caps: the GPU runs as set */
    c = clocks(1980, 1980, FDT_THROTTLE_APPLICATIONS_CLOCKS | FDT_THROTTLE_SYNC_BOOST |
                               FDT_THROTTLE_DISPLAY_CLOCKS);
    assert_int_equal(fdt_decide_throttled(&c, why, sizeof why), 0);
    c = clocks(1783, 1980, 0); /* 0.9005 of max */
    assert_int_equal(fdt_decide_throttled(&c, why, sizeof why), 0);
    c = clocks(1781, 1980, 0); /* 0.8995 */
    assert_int_equal(fdt_decide_throttled(&c, why, sizeof why), 1);
    assert_string_equal(why, "SM clock 1781 of 1980 MHz");
    c = clocks(345, 1980, FDT_THROTTLE_GPU_IDLE); /* idle clocks are low by design */
    assert_int_equal(fdt_decide_throttled(&c, why, sizeof why), 0);
    c = clocks(345, 1980, FDT_THROTTLE_GPU_IDLE | FDT_THROTTLE_HW_SLOWDOWN);
    assert_int_equal(fdt_decide_throttled(&c, why, sizeof why), 1);
    assert_string_equal(why, "hw_slowdown");

    fdt_clocks fine[2] = {clocks(1980, 1980, 0), clocks(1980, 1980, 0)};
    fdt_clocks hot[2] = {clocks(1980, 1980, 0), clocks(1500, 1980, FDT_THROTTLE_SW_THERMAL)};
    assert_int_equal(fdt_decide_judge_clocks(FDT_DECIDE_REGRESSED, fine, fine, why, sizeof why),
                     FDT_DECIDE_REGRESSED);
    assert_string_equal(why, "");
    assert_int_equal(fdt_decide_judge_clocks(FDT_DECIDE_REGRESSED, fine, hot, why, sizeof why),
                     FDT_DECIDE_THROTTLED);
    assert_string_equal(why, "throttled: not a regression (today's run at its end: sw_thermal)");
    assert_int_equal(fdt_decide_judge_clocks(FDT_DECIDE_REGRESSED, hot, fine, why, sizeof why),
                     FDT_DECIDE_THROTTLED);
    assert_has(why, "the stored best's run at its end");
    /* only a regression is excused: a failure, an improvement stay what they are */
    assert_int_equal(fdt_decide_judge_clocks(FDT_DECIDE_FAILED, hot, hot, why, sizeof why),
                     FDT_DECIDE_FAILED);
    assert_int_equal(fdt_decide_judge_clocks(FDT_DECIDE_IMPROVED, hot, hot, why, sizeof why),
                     FDT_DECIDE_IMPROVED);
    assert_int_equal(fdt_decide_judge_clocks(FDT_DECIDE_UNCHANGED, hot, hot, why, sizeof why),
                     FDT_DECIDE_UNCHANGED);
    assert_string_equal(fdt_decide_verdict_name(FDT_DECIDE_THROTTLED), "throttled");
}

/* Tonight's clocks, recorded on the retune run as retune records them, read back and applied
 * to the assessment (what fdt_retune_problem does). */
static void night_clocks(night *n, fdt_clocks start, fdt_clocks end)
{
    fdt_err e = {""};
    fdt_clocks stored[2], now[2];
    char src[8];
    if (fdt_db_run_set_clocks(n->db, n->run, FDT_DB_CLOCKS_START, "nvml", &start, &e) ||
        fdt_db_run_set_clocks(n->db, n->run, FDT_DB_CLOCKS_END, NULL, &end, &e) ||
        fdt_db_run_clocks(n->db, n->it->cand[0].ev.run_id, &stored[0], &stored[1], src,
                          sizeof src, &e) ||
        fdt_db_run_clocks(n->db, n->run, &now[0], &now[1], src, sizeof src, &e))
        fail_msg("clocks: %s", e.msg);
    assert_string_equal(src, "nvml");
    assert_int_equal(stored[0].known, 0); /* the history recorded none */
    fdt_retune_apply_clocks(&n->out, stored, now);
}

/* The best is 10% slower tonight on a GPU that held its clocks down for heat: "throttled:
 * not a regression", no re-search, the decision stays; the same night at full clocks is a
 * regression. */
static void test_throttled_night(void **state)
{
    (void)state;
    night n;
    history(&n, "throttled.db");
    tonight(&n, "580.65.06");
    measure(&n, (double[]){1.10, 1.13, 1.16}, 0.05, 0);
    assert_int_equal(n.out.check[0].verdict, FDT_DECIDE_REGRESSED);
    night_clocks(&n, clocks(1980, 1980, 0), clocks(1410, 1980, FDT_THROTTLE_HW_THERMAL));
    assert_int_equal(n.out.check[0].verdict, FDT_DECIDE_THROTTLED);
    assert_string_equal(n.out.check[0].message,
                        "throttled: not a regression (today's run at its end: hw_thermal)");
    assert_int_equal(n.out.regressed, 0);
    assert_int_equal(n.out.research, 0);
    conclude(&n, 0.05);
    assert_true(n.out.action != FDT_RETUNE_REFRESHED && n.out.action != FDT_RETUNE_REPLACED);
    assert_string_equal(n.out.best_config, "bx=32");
    assert_int_equal(best_eval(n.db, n.dev, &n.p), n.it->cand[0].ev.id);
    night_close(&n);

    history(&n, "cool.db");
    tonight(&n, "580.65.06");
    measure(&n, (double[]){1.10, 1.13, 1.16}, 0.05, 0);
    night_clocks(&n, clocks(1980, 1980, 0), clocks(1980, 1980, 0));
    assert_int_equal(n.out.check[0].verdict, FDT_DECIDE_REGRESSED);
    assert_int_equal(n.out.regressed, 1);
    assert_int_equal(n.out.research, 1);
    night_close(&n);
}

/* ------------------------------------------------------------------ lock */

static void test_lock(void **state)
{
    (void)state;
    char db[512];
    path_in(db, sizeof db, "locked.db");
    fdt_retune_lock l, l2;
    fdt_err e = {""};
    assert_int_equal(fdt_retune_lock_acquire(db, &l, &e), 0);
    assert_int_equal(l.took_over, 0);
    /* (Not read here: closing any descriptor of the file would drop this process's lock.) */
    char mine[64];
    snprintf(mine, sizeof mine, "pid %ld on ", (long)getpid());
    /* A second acquire in this process is refused, not merged. */
    assert_int_equal(fdt_retune_lock_acquire(db, &l2, &e), 1);
    assert_has(e.msg, "already held by this process");

    /* Another process is refused with the holder's pid and host. */
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fdt_retune_lock c;
        fdt_err ce = {""};
        int r = fdt_retune_lock_acquire(db, &c, &ce);
        int ok = r == 1 && strstr(ce.msg, "another retune is running") && strstr(ce.msg, mine);
        (void)!write(pipefd[1], ce.msg, strlen(ce.msg) + 1);
        _exit(ok ? 0 : 1);
    }
    char msg[2048] = "";
    close(pipefd[1]);
    (void)!read(pipefd[0], msg, sizeof msg - 1);
    close(pipefd[0]);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        fail_msg("child was not refused as expected: %s", msg);
    char host[256];
    gethostname(host, sizeof host);
    assert_has(msg, host);

    /* Released: another process gets it; then a holder that dies without releasing leaves
     * its name in the file, and the next acquire takes over. */
    fdt_retune_lock_release(&l);
    fdt_retune_lock_release(&l); /* twice is harmless */
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fdt_retune_lock c;
        fdt_err ce = {""};
        _exit(fdt_retune_lock_acquire(db, &c, &ce) == 0 ? 0 : 1); /* killed, in effect */
    }
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    assert_int_equal(fdt_retune_lock_acquire(db, &l, &e), 0);
    assert_int_equal(l.took_over, 1);
    char dead[64];
    snprintf(dead, sizeof dead, "pid %ld on ", (long)pid);
    assert_has(l.previous, dead);
    fdt_retune_lock_release(&l);
    /* After a clean release there is nobody to take over from. */
    assert_int_equal(fdt_retune_lock_acquire(db, &l, &e), 0);
    assert_int_equal(l.took_over, 0);
    fdt_retune_lock_release(&l);
    /* A lock file that cannot be created is an error, not "busy": its directory is a
     * regular file here, which no process can make a directory of. */
    char notdir[4200], bad[4300];
    path_in(notdir, sizeof notdir, "not-a-directory");
    FILE *f = fopen(notdir, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(bad, sizeof bad, "%s/x.db", notdir);
    assert_int_equal(fdt_retune_lock_acquire(bad, &l, &e), -1);
    assert_has(e.msg, "not-a-directory/x.db.retune.lock");
}

/* ------------------------------------------------------------------ v1 database */

static int line_of(void *ctx, const fdt_db_row *row)
{
    fdt_sb_printf(ctx, "%lld %lld -> %lld %s\n", (long long)row->ev.device_id,
                  (long long)row->ev.problem_id, (long long)row->ev.id, row->ev.config);
    return 0;
}

static char *best_lines(fdt_db *db)
{
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_err e = {""};
    if (fdt_db_best(db, NULL, line_of, &b, &e))
        fail_msg("best: %s", e.msg);
    return fdt_sb_take(&b);
}

/* The recorded H100 database (v1, tests/data/h100-v1.db): read-only it is read as it is;
 * migrated, it answers the same; the plan on a matching GPU revisits its problems with those
 * bests first. */
static void test_migrate_v1(void **state)
{
    (void)state;
    const char *src = getenv("FDTUNE_TEST_SRC");
    if (!src || !*src)
        skip();
    char from[1024], path[512];
    snprintf(from, sizeof from, "%s/tests/data/h100-v1.db", src);
    path_in(path, sizeof path, "v1.db");
    char *bytes;
    size_t n;
    fdt_err e = {""};
    assert_int_equal(fdt_read_file(from, &bytes, &n, &e), 0);
    assert_int_equal(fdt_write_file_atomic(path, bytes, n, &e), 0);
    free(bytes);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), 1);
    fdt_db *db = open_db(path, FDT_DB_READONLY);
    char *before = best_lines(db);
    fdt_db_close(db);
    assert_true(strlen(before) > 0);

    db = open_db(path, FDT_DB_READWRITE);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), fdt_db_schema_version());
    char *after = best_lines(db);
    assert_string_equal(after, before);

    /* The device of the file, visible again. */
    fdt_device d;
    assert_int_equal(fdt_db_device_get(db, sql_int(path, "SELECT min(id) FROM devices"), &d, &e),
                     0);
    fdt_device live;
    memset(&live, 0, sizeof live);
    snprintf(live.backend, sizeof live.backend, "%s", d.backend);
    snprintf(live.vendor, sizeof live.vendor, "%s", d.vendor);
    snprintf(live.name, sizeof live.name, "%s", d.name);
    snprintf(live.arch, sizeof live.arch, "%s", d.arch);
    live.compute_units = d.compute_units;
    snprintf(live.uuid, sizeof live.uuid, "%s", d.uuid);
    fdt_retune_plan plan;
    assert_int_equal(fdt_retune_plan_build(db, &live, 1, NULL, &plan, &e), 0);
    assert_true(plan.n > 0);
    for (size_t i = 0; i < plan.n; i++) {
        const fdt_retune_item *it = &plan.items[i];
        assert_int_equal(it->same_gpu, 1);
        assert_int_equal(it->decided, 0);
        char line[512];
        snprintf(line, sizeof line, "%lld %lld -> %lld %s\n", (long long)it->device.id,
                 (long long)it->problem_id, (long long)it->cand[0].ev.id, it->cand[0].ev.config);
        assert_has(before, line);
    }
    fdt_retune_plan_free(&plan);
    fdt_db_close(db);
    free(before);
    free(after);
}

/* ------------------------------------------------------------------ the fdtune binary */

typedef struct result {
    int status;
    char out[8192], err[8192];
} result;

/* Runs fdtune retune with the arguments (NULL-terminated); small outputs only. */
static void retune(result *r, ...)
{
    char *args[32];
    int n = 0;
    args[n++] = (char *)FDTUNE_BIN;
    args[n++] = (char *)"retune";
    va_list ap;
    va_start(ap, r);
    for (char *a; (a = va_arg(ap, char *)) && n < 31;)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    tu_result t;
    tu_run(&t, g_dir, args);
    r->status = t.status;
    snprintf(r->out, sizeof r->out, "%s", t.out);
    snprintf(r->err, sizeof r->err, "%s", t.err);
    tu_result_free(&t);
}

/* A probe that sees one GPU no real one is (for the paths before its worker starts). */
static int one_gpu(fdt_probe *p, fdt_err *e)
{
    (void)e;
    memset(p, 0, sizeof *p);
    p->ndevices = 1;
    p->device[0] = device("fdtune test GPU", 7, "GPU-test", "1.0");
    return 0;
}

static void test_cli(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "cli.db");
    /* A device no real GPU is, so that a GPU machine finds nothing to do here either. */
    fdt_db *db = open_db(path, FDT_DB_CREATE);
    fdt_device d = device("fdtune test GPU", 7, "GPU-test", "1.0");
    fdt_problem p = problem(FDT_OP_LAP, 64);
    int64_t dev, prob;
    int64_t env = ids(db, &d, &p, &dev, &prob);
    int64_t run = begin(db, dev, env, FDT_DB_TUNE);
    fdt_db_eval ev = timed(run, prob, "bx=32", 0.1, 0.001);
    put(db, &ev);
    fdt_db_close(db);
    result r;

    retune(&r, "--help", NULL);
    assert_int_equal(r.status, 0);
    assert_has(r.out, "--force-env-change");
    assert_has(r.out, "test flag");

    retune(&r, "--db", path, "--regression", "lots", NULL);
    assert_int_equal(r.status, 2);
    assert_has(r.err, "--regression");
    retune(&r, "--db", path, "--since", "7 days", NULL);
    assert_int_equal(r.status, 2);
    retune(&r, "--db", path, "--op", "d3x", NULL);
    assert_int_equal(r.status, 2);
    char missing[600];
    path_in(missing, sizeof missing, "missing.db");
    retune(&r, "--db", missing, NULL);
    assert_int_equal(r.status, 4);
    assert_has(r.err, "no tuning database");

    /* Without a GPU: exit 3 with a message (on a GPU machine: nothing to do, exit 0). */
    retune(&r, "--db", path, "--since", "7d", "--regression", "5%", NULL);
    if (r.status == 3) {
        assert_has(r.err, "no GPU is visible");
        assert_int_equal(strlen(r.out), 0);
    } else {
        assert_int_equal(r.status, 0);
        assert_has(r.err, "nothing to retune");
    }

    /* A retune holding the lock (this process): the second one exits 5 naming it. */
    fdt_retune_lock l;
    fdt_err e = {""};
    assert_int_equal(fdt_retune_lock_acquire(path, &l, &e), 0);
    char mine[64];
    snprintf(mine, sizeof mine, "pid %ld on ", (long)getpid());
    /* where a GPU is visible (a fake one here), another process is told busy, naming us */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        fdt_retune_request rq;
        fdt_retune_request_init(&rq);
        rq.db_path = path;
        rq.probe = one_gpu;
        static fdt_retune_report rep;
        fdt_status st = fdt_retune_run(&rq, NULL, NULL, NULL, &rep, &e);
        _exit(st == FDT_STATUS_BUSY && strstr(e.msg, "another retune is running") &&
                      strstr(e.msg, mine)
                  ? 0
                  : 1);
    }
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    /* the binary: the same, or where no GPU is visible, exit 3 before the lock is looked at */
    retune(&r, "--db", path, NULL);
    if (r.status == 3) {
        assert_has(r.err, "no GPU is visible");
    } else {
        assert_int_equal(r.status, 5);
        assert_has(r.err, "another retune is running");
        assert_has(r.err, mine);
    }
    fdt_retune_lock_release(&l);
    retune(&r, "--db", path, NULL);
    assert_true(r.status == 3 || r.status == 0);
}

/* ------------------------------------------------------------------ no harm without a GPU */

static int no_gpus(fdt_probe *p, fdt_err *e)
{
    (void)e;
    memset(p, 0, sizeof *p);
    return 0;
}

/* A copy of the recorded v1 database at path (in the scratch directory); its bytes in *bytes. */
static int copy_v1(char *path, size_t np, const char *name, char **bytes, size_t *n)
{
    const char *src = getenv("FDTUNE_TEST_SRC");
    if (!src || !*src)
        return -1;
    char from[1024];
    snprintf(from, sizeof from, "%s/tests/data/h100-v1.db", src);
    path_in(path, np, name);
    fdt_err e = {""};
    assert_int_equal(fdt_read_file(from, bytes, n, &e), 0);
    assert_int_equal(fdt_write_file_atomic(path, *bytes, *n, &e), 0);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), 1);
    return 0;
}

/* The file is byte for byte what it was, and nothing was left beside it. */
static void assert_untouched(const char *path, const char *bytes, size_t n)
{
    char *now;
    size_t m;
    fdt_err e = {""};
    assert_int_equal(fdt_read_file(path, &now, &m, &e), 0);
    assert_int_equal(m, n);
    assert_memory_equal(now, bytes, n);
    free(now);
    static const char *const beside[] = {"-wal", "-shm", "-journal", ".retune.lock"};
    for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
        char other[600];
        struct stat sb;
        snprintf(other, sizeof other, "%s%s", path, beside[i]);
        if (stat(other, &sb) == 0)
            fail_msg("%s was left beside the database", other);
    }
}

/* Issue 16, item 3: a retune that finds no GPU (a fake probe here, so that a GPU machine
 * sees the same) says so before it opens, migrates or locks the database; the fdtune
 * commands that write (retune, tune, tune --tasks) leave a v1 database as it was when no GPU
 * is visible (checked where none is, as on a CPU machine). */
static void test_no_gpu_no_harm(void **state)
{
    (void)state;
    char path[512];
    char *bytes;
    size_t n;
    if (copy_v1(path, sizeof path, "noharm.db", &bytes, &n))
        skip();
    fdt_retune_request rq;
    fdt_retune_request_init(&rq);
    rq.db_path = path;
    rq.probe = no_gpus;
    fdt_retune_report *rep = calloc(1, sizeof *rep);
    fdt_err e = {""};
    assert_non_null(rep);
    assert_int_equal(fdt_retune_run(&rq, NULL, NULL, NULL, rep, &e), FDT_STATUS_NO_GPU);
    assert_int_equal(rep->ran, 0);
    assert_has(e.msg, "no GPU is visible");
    fdt_retune_report_free(rep);
    free(rep);
    assert_untouched(path, bytes, n);

    /* The binary: where no GPU is visible, retune and tune exit 3 and touch nothing. */
    result r;
    retune(&r, "--db", path, NULL);
    if (r.status != 3) {
        free(bytes);
        return; /* a GPU is visible here: the fake probe above stands for this part */
    }
    assert_has(r.err, "no GPU is visible");
    assert_untouched(path, bytes, n);
    char *tune[] = {(char *)FDTUNE_BIN, (char *)"tune", (char *)"--gpu", (char *)"auto",
                    (char *)"--op", (char *)"d2x", (char *)"--R", (char *)"4",
                    (char *)"--grid", (char *)"64^3", (char *)"--db", path, NULL};
    tu_result t;
    tu_run(&t, g_dir, tune);
    expect_status(&t, 3);
    tu_result_free(&t);
    assert_untouched(path, bytes, n);

    /* a task of a plan whose published shard is that database: untouched, and no copy of it
     * left in the node-local directory */
    char plan[600], results[600], shard[700], local[600];
    path_in(plan, sizeof plan, "tasks.jsonl");
    path_in(results, sizeof results, "results");
    path_in(local, sizeof local, "local");
    snprintf(shard, sizeof shard, "%s/task-0000.db", results);
    assert_int_equal(mkdir(results, 0700), 0);
    assert_int_equal(mkdir(local, 0700), 0);
    fdt_err e2 = {""};
    assert_int_equal(fdt_write_file_atomic(shard, bytes, n, &e2), 0);
    char *mk[] = {(char *)FDTUNE_BIN, (char *)"plan", (char *)"--op", (char *)"d2x",
                  (char *)"--R", (char *)"4", (char *)"--grid", (char *)"64^3", (char *)"-o",
                  plan, NULL};
    tu_run(&t, g_dir, mk);
    expect_status(&t, 0);
    tu_result_free(&t);
    char *task[] = {(char *)FDTUNE_BIN, (char *)"tune", (char *)"--tasks", plan,
                    (char *)"--task", (char *)"0", (char *)"--results", results, NULL};
    const char *tmpdir = getenv("TMPDIR");
    char *saved = tmpdir ? strdup(tmpdir) : NULL;
    setenv("TMPDIR", local, 1);
    tu_run(&t, g_dir, task);
    if (saved)
        setenv("TMPDIR", saved, 1);
    else
        unsetenv("TMPDIR");
    free(saved);
    expect_status(&t, 3);
    tu_result_free(&t);
    assert_untouched(shard, bytes, n);
    DIR *d = opendir(local);
    assert_non_null(d);
    for (struct dirent *de; (de = readdir(d));)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            fail_msg("%s/%s was left behind", local, de->d_name);
    closedir(d);
    free(bytes);
}

/* ------------------------------------------------------------------ main */

static int group_setup(void **state)
{
    (void)state;
    return tu_mkdtemp(g_dir, sizeof g_dir, "fdt_test_retune");
}

static int group_teardown(void **state)
{
    (void)state;
    return tu_rmtree(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_judge_threshold),
        cmocka_unit_test(test_throttle_rule),
        cmocka_unit_test(test_throttled_night),
        cmocka_unit_test(test_noise_rule),
        cmocka_unit_test(test_env_diff),
        cmocka_unit_test(test_cutoff),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_steady_and_noise),
        cmocka_unit_test(test_env_change),
        cmocka_unit_test(test_regression_recovered),
        cmocka_unit_test(test_regression_not_recovered),
        cmocka_unit_test(test_best_fails),
        cmocka_unit_test(test_forced),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_migrate_v1),
        cmocka_unit_test(test_cli),
        cmocka_unit_test(test_no_gpu_no_harm),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
