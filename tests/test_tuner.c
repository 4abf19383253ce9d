/* Tests of the tuner's orchestration without a GPU, through the library: the session's GPU
 * selection and the order of its steps against a fake probe (no GPU: nothing created; a GPU
 * --gpu does not name: a usage error, nothing created; a database given open: its stale
 * runs marked before the probe; a worker that cannot start: an operational error), the plan
 * of strategy and budget per operator (request, recipe, default), the dry run's space,
 * survivors and model ranking for a catalogue GPU, the replay of the strategies against the
 * recorded H100 database, and a whole retune up to its GPU (lock taken over, stale runs,
 * plan, a GPU that cannot be used) with the status that follows from outcomes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdt_offline.h"
#include "fdt_retune.h"
#include "fdt_session.h"
#include "fdt_tune.h"
#include "testutil.h"

static char g_dir[256];
static fdt_catalogue *g_cat;

static void path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", g_dir, name);
}

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* ------------------------------------------------------------------ fake probes */

/* The device an H100 reports, on a backend no build has: a worker can never start on it. */
static fdt_device fake_h100(void)
{
    fdt_device d;
    fdt_device_init(&d);
    snprintf(d.backend, sizeof d.backend, "fake");
    snprintf(d.vendor, sizeof d.vendor, "NVIDIA");
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    snprintf(d.arch, sizeof d.arch, "sm_90");
    d.compute_units = 132;
    d.warp_size = 32;
    d.mem_bytes = 85017493504LL;
    d.l2_bytes = 50 << 20;
    snprintf(d.uuid, sizeof d.uuid, "GPU-fake-0");
    snprintf(d.driver_version, sizeof d.driver_version, "580.0");
    snprintf(d.runtime_version, sizeof d.runtime_version, "13.0");
    snprintf(d.compiler_version, sizeof d.compiler_version, "nvrtc 13.0");
    d.index = 0;
    d.live = 1;
    return d;
}

static int probe_none(fdt_probe *p, fdt_err *e)
{
    (void)e;
    memset(p, 0, sizeof *p);
    p->nbackends = 2;
    snprintf(p->backend[0].name, sizeof p->backend[0].name, "cuda");
    snprintf(p->backend[0].message, sizeof p->backend[0].message, "cuda: no driver here");
    snprintf(p->backend[1].name, sizeof p->backend[1].name, "hip");
    return 0;
}

static int probe_h100(fdt_probe *p, fdt_err *e)
{
    probe_none(p, e);
    p->ndevices = 1;
    p->device[0] = fake_h100();
    return 0;
}

static int probe_fails(fdt_probe *p, fdt_err *e)
{
    (void)p;
    return fdt_err_set(e, "device discovery: the child crashed");
}

/* ------------------------------------------------------------------ session */

static void test_select_gpu(void **state)
{
    (void)state;
    fdt_probe none, one;
    fdt_err e = {""};
    probe_none(&none, &e);
    probe_h100(&one, &e);
    fdt_device dev;
    int index = 7;

    /* auto: the first visible device, completed from the catalogue */
    assert_int_equal(fdt_session_select_gpu(g_cat, "auto", &one, 1, &dev, &index, &e), 0);
    assert_int_equal(index, 0);
    assert_string_equal(dev.name, "NVIDIA H100 80GB HBM3");
    assert_true(dev.catalogue[0] != 0);
    assert_int_equal(fdt_session_select_gpu(g_cat, NULL, &none, 1, &dev, &index, &e), -1);
    assert_has(e.msg, "--gpu auto: no GPU is visible");
    assert_int_equal(fdt_session_select_gpu(g_cat, "auto", &none, 0, &dev, &index, &e), -1);
    assert_has(e.msg, "--gpu auto: no GPU is visible (a dry run without a GPU needs --gpu NAME");

    /* auto where stored devices are matched (query, export): probed, then the device's name
     * as the driver gives it, or its catalogue entry's for lookups through the catalogue */
    fdt_probe p;
    const char *gpu = "auto";
    assert_int_equal(fdt_session_resolve_auto(&gpu, NULL, probe_h100, &p, &dev, &e),
                     FDT_STATUS_OK);
    assert_string_equal(gpu, "NVIDIA H100 80GB HBM3");
    gpu = "auto";
    assert_int_equal(fdt_session_resolve_auto(&gpu, g_cat, probe_h100, &p, &dev, &e),
                     FDT_STATUS_OK);
    assert_string_equal(gpu, "H100 SXM");
    gpu = "auto";
    assert_int_equal(fdt_session_resolve_auto(&gpu, g_cat, probe_none, &p, &dev, &e),
                     FDT_STATUS_NO_GPU);
    assert_has(e.msg, "--gpu auto: no GPU is visible");
    assert_string_equal(gpu, "auto");
    assert_int_equal(p.nbackends, 2); /* what each backend saw, for the message */
    assert_int_equal(fdt_session_resolve_auto(&gpu, g_cat, probe_fails, &p, &dev, &e),
                     FDT_STATUS_ERROR);
    assert_has(e.msg, "the child crashed");
    gpu = "H100"; /* anything else stays, and nothing is probed */
    assert_int_equal(fdt_session_resolve_auto(&gpu, g_cat, probe_fails, &p, &dev, &e),
                     FDT_STATUS_OK);
    assert_string_equal(gpu, "H100");
    assert_int_equal(p.ndevices, 0);

    /* a catalogue name: the visible device of that model, or the catalogue's description */
    assert_int_equal(fdt_session_select_gpu(g_cat, "H100", &one, 1, &dev, &index, &e), 0);
    assert_int_equal(index, 0);
    assert_int_equal(dev.live, 1);
    assert_int_equal(fdt_session_select_gpu(g_cat, "H100", &none, 0, &dev, &index, &e), 0);
    assert_int_equal(index, -1);
    assert_int_equal(dev.live, 0);
    assert_int_equal(dev.compute_units, 132);
    assert_true(dev.peak_bw_gbs > 0);

    /* a model that is not visible: refused when a live GPU is needed, naming what is */
    assert_int_equal(fdt_session_select_gpu(g_cat, "MI250X", &one, 1, &dev, &index, &e), -1);
    assert_has(e.msg, "no visible device is a");
    assert_has(e.msg, "0: NVIDIA H100 80GB HBM3 (sm_90)");
    assert_int_equal(fdt_session_select_gpu(g_cat, "MI250X", &one, 0, &dev, &index, &e), 0);
    assert_int_equal(index, -1);
    assert_int_equal(fdt_session_select_gpu(g_cat, "nosuchgpu", &one, 0, &dev, &index, &e), -1);
}

/* The host CPU as the cpu backend describes one (issue 28). */
static int host_epyc(fdt_device *d, fdt_err *e)
{
    (void)e;
    fdt_device_init(d);
    snprintf(d->backend, sizeof d->backend, "cpu");
    snprintf(d->vendor, sizeof d->vendor, "AMD");
    snprintf(d->name, sizeof d->name, "AMD EPYC 7763 64-Core Processor");
    snprintf(d->arch, sizeof d->arch, "x86-64-v3");
    snprintf(d->uuid, sizeof d->uuid, "cpu-0123456789abcdef");
    d->compute_units = 64;
    d->index = 0;
    d->live = 1;
    return 0;
}

static int host_fails(fdt_device *d, fdt_err *e)
{
    (void)d;
    return fdt_err_set(e, "cpu: no C compiler: $CC is unset and cc is not found");
}

/* A probe that lists the host CPU before a GPU: --gpu never takes it. */
static int probe_cpu_h100(fdt_probe *p, fdt_err *e)
{
    probe_h100(p, e);
    p->device[1] = p->device[0];
    host_epyc(&p->device[0], e);
    p->ndevices = 2;
    return 0;
}

/* --cpu and --gpu auto (issue 28): --gpu auto never names the host CPU; --cpu auto or a part
 * of its name or arch names it, anything else is refused naming it; a session on the CPU
 * probes the host only and refuses before any database exists. */
static void test_select_cpu(void **state)
{
    (void)state;
    fdt_probe p, gpus;
    fdt_err e = {""};
    fdt_device dev;
    int index = 7;
    probe_cpu_h100(&p, &e);
    assert_true(fdt_target_device_is_cpu(&p.device[0]));
    assert_false(fdt_target_device_is_cpu(&p.device[1]));
    assert_int_equal(fdt_session_gpu_count(&p), 1);

    assert_int_equal(fdt_session_auto_device(NULL, &p, &dev, &e), 0);
    assert_string_equal(dev.name, "NVIDIA H100 80GB HBM3");
    assert_int_equal(fdt_session_select_gpu(g_cat, "auto", &p, 1, &dev, &index, &e), 0);
    assert_int_equal(index, 1);
    p.device[1] = p.device[0];
    p.ndevices = 1; /* the CPU alone */
    assert_int_equal(fdt_session_gpu_count(&p), 0);
    assert_int_equal(fdt_session_auto_device(NULL, &p, &dev, &e), -1);
    assert_has(e.msg, "--gpu auto: no GPU is visible");

    const char *names[] = {"auto", "EPYC", "epyc 7763", "x86-64-v3"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        index = 7;
        assert_int_equal(fdt_session_select_cpu(names[i], &p, &dev, &index, &e), 0);
        assert_int_equal(index, 0);
        assert_string_equal(dev.arch, "x86-64-v3");
    }
    assert_int_equal(fdt_session_select_cpu("Xeon", &p, &dev, &index, &e), -1);
    assert_int_equal(index, -1);
    assert_has(e.msg, "--cpu Xeon: the host CPU is a AMD EPYC 7763 64-Core Processor");
    probe_h100(&gpus, &e);
    assert_int_equal(fdt_session_select_cpu("auto", &gpus, &dev, &index, &e), -1);
    assert_has(e.msg, "no CPU is listed");

    /* the host CPU where stored devices are matched: its name; a name stays */
    const char *cpu = "auto";
    assert_int_equal(fdt_session_resolve_cpu(&cpu, host_epyc, &p, &dev, &e), FDT_STATUS_OK);
    assert_string_equal(cpu, "AMD EPYC 7763 64-Core Processor");
    cpu = "auto";
    assert_int_equal(fdt_session_resolve_cpu(&cpu, host_fails, &p, &dev, &e),
                     FDT_STATUS_ERROR);
    assert_has(e.msg, "the host CPU: cpu: no C compiler");
    assert_int_equal(fdt_session_host_cpu("Xeon", host_epyc, &p, &dev, &e), FDT_STATUS_USAGE);

    /* a session on the CPU: the host only; refused before the database is created */
    char db[512];
    path_in(db, sizeof db, "cpu-session.db");
    fdt_session_opts o;
    fdt_session s;
    fdt_session_opts_init(&o);
    o.db_path = db;
    o.cat = g_cat;
    o.select = 1;
    o.cpu = "Xeon";
    o.probe = probe_fails; /* never asked: a CPU session does not probe the GPUs */
    o.probe_host = host_epyc;
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "the host CPU is a AMD EPYC");
    fdt_session_close(&s);
    o.probe_host = host_fails;
    o.cpu = "auto";
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_ERROR);
    assert_has(e.msg, "no C compiler");
    fdt_session_close(&s);
    assert_false(exists(db));
}

static void tune_opts(fdt_session_opts *o, const char *db, fdt_probe_fn probe, const char *gpu)
{
    fdt_session_opts_init(o);
    o->db_path = db;
    o->cat = g_cat;
    o->select = 1;
    o->gpu = gpu;
    o->fdtune_version = "0.1.0";
    o->probe = probe;
}

static void test_session_order(void **state)
{
    (void)state;
    char db[512];
    path_in(db, sizeof db, "session.db");
    fdt_session_opts o;
    fdt_session s;
    fdt_err e = {""};

    /* no GPU: the backends say why, and no database is created */
    tune_opts(&o, db, probe_none, "H100");
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_NO_GPU);
    assert_int_equal(s.probe.nbackends, 2);
    assert_string_equal(s.probe.backend[0].message, "cuda: no driver here");
    assert_null(s.db);
    fdt_session_close(&s);
    assert_false(exists(db));

    /* the probe fails: an operational error */
    tune_opts(&o, db, probe_fails, "H100");
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_ERROR);
    assert_has(e.msg, "the child crashed");
    fdt_session_close(&s);

    /* a GPU that is not visible: a usage error, still no database */
    tune_opts(&o, db, probe_h100, "MI250X");
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "no visible device is a");
    fdt_session_close(&s);
    assert_false(exists(db));

    /* the GPU is there: the database is created and the device stored, then its worker
     * cannot start (no backend "fake"): an operational error, nothing left running */
    tune_opts(&o, db, probe_h100, "H100");
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_ERROR);
    assert_has(e.msg, "backend 'fake' is not in this build");
    assert_non_null(s.db);
    assert_int_equal(s.ngpus, 0);
    assert_int_equal(*s.stop, 0);
    fdt_session_close(&s);
    assert_true(exists(db));
    fdt_db *h = NULL;
    assert_int_equal(fdt_db_open(db, FDT_DB_READONLY, &h, &e), 0);
    int n = 0;
    fdt_db_device_list ds = {0};
    assert_int_equal(fdt_db_devices(h, "H100", fdt_db_collect_device, &ds, &e), 0);
    n = (int)ds.n;
    free(ds.v);
    fdt_db_close(h);
    assert_int_equal(n, 1);
}

/* A run left "running" by a process that is gone. */
static void stale_run(const char *path)
{
    fdt_db *db = NULL;
    fdt_err e = {""};
    assert_int_equal(fdt_db_open(path, FDT_DB_CREATE, &db, &e), 0);
    fdt_device d = fake_h100();
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    fdt_db_run r;
    fdt_db_run_init(&r);
    assert_int_equal(fdt_db_device_id(db, &d, &r.device_id, &e), 0);
    assert_int_equal(fdt_db_env_id(db, &v, &r.env_id, &e), 0);
    int64_t id = 0;
    assert_int_equal(fdt_db_run_begin(db, &r, &id, &e), 0);
    fdt_db_close(db);
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    assert_true(pid > 0);
    waitpid(pid, NULL, 0);
    sqlite3 *sh;
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld WHERE id = %lld", (long)pid,
             (long long)id);
    assert_int_equal(sqlite3_open(path, &sh), SQLITE_OK);
    assert_int_equal(sqlite3_exec(sh, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(sh);
}

static void test_session_given_db(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "given.db");
    stale_run(path);
    fdt_db *db = NULL;
    fdt_err e = {""};
    assert_int_equal(fdt_db_open(path, FDT_DB_READWRITE, &db, &e), 0);
    fdt_session_opts o;
    fdt_session_opts_init(&o);
    o.db = db;
    o.probe = probe_none;
    fdt_session s;
    /* no GPU: nothing is known of the kind of results to come, so nothing is written, not
     * even the stale run's end */
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_NO_GPU);
    assert_int_equal(s.stale, 0);
    fdt_session_close(&s);
    fdt_db_run r;
    assert_int_equal(fdt_db_run_get(db, 1, &r, &e), 0);
    assert_int_equal(r.status, FDT_DB_RUNNING);
    /* a GPU of the database's kind: its kind checked, then the stale run marked */
    o.probe = probe_h100;
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_OK);
    assert_int_equal(s.stale, 1);
    fdt_session_close(&s);
    assert_int_equal(fdt_db_run_get(db, 1, &r, &e), 0);
    assert_int_equal(r.status, FDT_DB_INTERRUPTED);
    /* the caller's database stays open */
    assert_int_equal(fdt_db_run_get(db, 1, &r, &e), 0);
    fdt_db_close(db);
}

/* ------------------------------------------------------------------ plan, dry run, replay */

static fdt_recipe *recipe_text(const char *text)
{
    fdt_recipe *r = NULL;
    fdt_err e = {""};
    if (fdt_recipe_load_text("t.lua", text, strlen(text), NULL, &r, &e))
        fail_msg("recipe: %s", e.msg);
    return r;
}

static void test_plan(void **state)
{
    (void)state;
    fdt_recipe *says = recipe_text("param(\"bx\", { 64 })\nstrategy \"random\"\nbudget(77)\n");
    fdt_recipe *silent = recipe_text("param(\"bx\", { 64 })\n");
    fdt_tune_request rq;
    fdt_tune_request_init(&rq);
    fdt_search_kind k;
    int budget;

    fdt_tune_plan(&rq, says, &k, &budget); /* the recipe's */
    assert_int_equal(k, FDT_SEARCH_RANDOM);
    assert_int_equal(budget, 77);
    fdt_tune_plan(&rq, silent, &k, &budget); /* the defaults: model, no budget */
    assert_int_equal(k, FDT_SEARCH_MODEL);
    assert_int_equal(budget, 0);
    rq.have_strategy = 1; /* the request wins */
    rq.strategy = FDT_SEARCH_EXHAUSTIVE;
    rq.budget = 5;
    fdt_tune_plan(&rq, says, &k, &budget);
    assert_int_equal(k, FDT_SEARCH_EXHAUSTIVE);
    assert_int_equal(budget, 5);
    rq.have_strategy = 0; /* a strategy value without have_strategy is not a request */
    fdt_tune_plan(&rq, says, &k, &budget);
    assert_int_equal(k, FDT_SEARCH_RANDOM);
    assert_int_equal(budget, 5);
    fdt_recipe_free(says);
    fdt_recipe_free(silent);
}

static void h100_512(fdt_tune_request *rq, fdt_device *dev)
{
    fdt_tune_request_init(rq);
    fdt_problem p = {FDT_OP_D2X, 4, FDT_F32, 512, 512, 512};
    rq->p = p;
    fdt_probe none;
    fdt_err e = {""};
    probe_none(&none, &e);
    int index;
    if (fdt_session_select_gpu(g_cat, "H100", &none, 0, dev, &index, &e))
        fail_msg("H100: %s", e.msg);
}

static void test_dry_run(void **state)
{
    (void)state;
    fdt_tune_request rq;
    fdt_device dev;
    h100_512(&rq, &dev);
    fdt_recipe *r = NULL;
    fdt_err e = {""};
    assert_int_equal(fdt_recipe_load_for_op(FDT_OP_D2X, NULL, &r, &e), 0);
    fdt_dry_run d;
    assert_int_equal(fdt_tune_dry_run(&rq, FDT_OP_D2X, r, &dev, 15, &d, &e), FDT_STATUS_OK);
    /* the shipped d2x space on an H100 at 512^3 (recipes/README.md's table) and its plan */
    assert_int_equal(d.stats.space, 1440);
    assert_int_equal(d.stats.survivors, 342);
    assert_int_equal(d.n, 342);
    assert_int_equal(d.strategy, FDT_SEARCH_EXHAUSTIVE);
    assert_int_equal(d.budget, 1000);
    assert_int_equal(d.p.op, FDT_OP_D2X);
    uint64_t pruned = 0;
    for (int i = 0; i < d.stats.nprune; i++)
        pruned += d.stats.prune[i].count;
    assert_int_equal(pruned + d.stats.survivors, d.stats.space);
    /* the top 15 of the model's ranking, best first, each with its bandwidth */
    assert_int_equal(d.ntop, 15);
    double eff = fdt_effective_bytes(&d.p);
    for (size_t i = 0; i < d.ntop; i++) {
        assert_true(d.top[i].pred_ms > 0);
        assert_true(i == 0 || d.top[i].pred_ms >= d.top[i - 1].pred_ms);
        assert_true(fabs(d.top[i].pred_gbs - eff / (d.top[i].pred_ms * 1e-3) / 1e9) < 1e-6);
        assert_true(fabs(d.top[i].terms.time_ms - d.top[i].pred_ms) < 1e-12);
    }
    /* the model's own ranking: no survivor is predicted faster than the first */
    fdt_config c;
    assert_int_equal(fdt_config_parse(d.top[0].config, &c, &e), 0);
    assert_true(fabs(fdt_model_time(&d.p, &c, &dev, NULL, NULL) - d.top[0].pred_ms) < 1e-12);
    fdt_dry_run_free(&d);

    /* more rows asked than survive: all of them; the request's plan shows */
    rq.have_strategy = 1;
    rq.strategy = FDT_SEARCH_RANDOM;
    rq.budget = 7;
    assert_int_equal(fdt_tune_dry_run(&rq, FDT_OP_D2X, r, &dev, 100000, &d, &e), FDT_STATUS_OK);
    /* every survivor is a row or collapsed into one: the same prediction, term by term, and a
     * config that differs from the row's in nt alone (the model ignores it here) */
    assert_int_equal(d.ntop + d.collapsed, 342);
    assert_true(d.collapsed > 0);
    size_t np, merged = 0;
    const fdt_param_info *pi = fdt_config_params(&np);
    for (size_t k = 0; k < np; k++)
        assert_true(!(d.collapsed_params & (1u << k)) || !strcmp(pi[k].name, "nt"));
    for (size_t i = 0; i < d.ntop; i++) {
        merged += (size_t)d.top[i].merged;
        fdt_config a;
        assert_int_equal(fdt_config_parse(d.top[i].config, &a, &e), 0);
        a.nt = 1 - a.nt;
        for (size_t j = 0; j < d.ntop; j++) { /* its nt twin is no row of its own */
            fdt_config b;
            assert_int_equal(fdt_config_parse(d.top[j].config, &b, &e), 0);
            assert_false(!memcmp(&a, &b, sizeof a) && d.top[j].pred_ms == d.top[i].pred_ms);
        }
    }
    assert_int_equal(merged, d.collapsed);
    assert_int_equal(d.strategy, FDT_SEARCH_RANDOM);
    assert_int_equal(d.budget, 7);
    fdt_dry_run_free(&d);
    fdt_recipe_free(r);

    /* a recipe that fails on the problem is the user's to fix */
    fdt_recipe *bad = recipe_text("param(\"bx\", { 64 })\n"
                                  "constrain(\"raises\", function(c) error(\"boom\") end)\n");
    assert_int_equal(fdt_tune_dry_run(&rq, FDT_OP_D2X, bad, &dev, 5, &d, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "boom");
    fdt_dry_run_free(&d);
    fdt_recipe_free(bad);
}

static void test_replay(void **state)
{
    (void)state;
    const char *src = getenv("FDTUNE_TEST_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/h100-replay.db", src && *src ? src : ".");
    fdt_db *db = NULL;
    fdt_err e = {""};
    assert_int_equal(fdt_db_open(path, FDT_DB_READONLY, &db, &e), 0);
    fdt_tune_request rq;
    fdt_device dev;
    h100_512(&rq, &dev);
    fdt_replay_report x;
    assert_int_equal(fdt_tune_replay(db, &rq, FDT_OP_D2X, &dev, &x, &e), FDT_STATUS_OK);
    /* facts of the record (as tests/test_replay.sh checks them through the binary): budget
     * 40, so 40 configs recorded */
    assert_int_equal(x.configs, 40);
    assert_string_equal(x.best_config, "align=32,bx=32,lb=128,vec=4");
    assert_string_equal(x.device, "NVIDIA H100 80GB HBM3");
    assert_int_equal(x.n, 3);
    assert_int_equal(x.kind[0], FDT_SEARCH_EXHAUSTIVE);
    assert_int_equal(x.kind[2], FDT_SEARCH_MODEL);
    assert_int_equal(x.res[0].evals_to_best, 32);
    assert_true(x.res[2].evals_within[1] <= 5);
    assert_true(fabs(x.best_gbs - fdt_effective_bytes(&x.p) / (x.best_ms * 1e-3) / 1e9) < 1e-6);

    rq.have_strategy = 1; /* one strategy asked: that one only */
    rq.strategy = FDT_SEARCH_MODEL;
    assert_int_equal(fdt_tune_replay(db, &rq, FDT_OP_D2X, &dev, &x, &e), FDT_STATUS_OK);
    assert_int_equal(x.n, 1);
    assert_int_equal(x.kind[0], FDT_SEARCH_MODEL);

    /* a problem the record does not hold fails, naming it */
    rq.p.nx = rq.p.ny = rq.p.nz = 640;
    assert_int_equal(fdt_tune_replay(db, &rq, FDT_OP_D2X, &dev, &x, &e),
                     FDT_STATUS_FAILED);
    assert_has(e.msg, "no evaluations for d2x R=4 f32 640x640x640");
    fdt_db_close(db);
}

/* ------------------------------------------------------------------ retune */

/* The stopping rules (issue 30, fdt_stop.h) on synthetic timings: a gain is what the noise
 * rule of decide.c calls one (a result within the noise does not reset convergence); a gain
 * that reaches the limit stops at once, a resumed best never does; the model's on-chip bound
 * is the limit only where the measurement does not beat it; --search-all stops for nothing
 * but the budget; K defaults by strategy. */
static fdt_decide_timing ms_timing(double ms)
{
    return (fdt_decide_timing){ms, NAN, NAN, NAN, NAN};
}

static void test_stop_rules(void **state)
{
    (void)state;
    fdt_stop_opts o;
    fdt_stop_opts_default(&o);
    assert_true(o.within == FDT_STOP_WITHIN_DEFAULT && o.after < 0 && !o.all);
    fdt_stop s;
    fdt_stop_init(&s, &o, FDT_SEARCH_MODEL, 100);
    assert_int_equal(s.o.after, FDT_STOP_AFTER_MODEL);
    fdt_stop_init(&s, &o, FDT_SEARCH_EXHAUSTIVE, 100);
    assert_int_equal(s.o.after, FDT_STOP_AFTER_EXHAUSTIVE);
    assert_true(fdt_stop_headroom(&s) < 0); /* nothing measured */

    /* convergence: a resumed best at 0.5% above copy does not stop; a result within the
     * noise floor of it (0.5%) or a failure is no gain */
    fdt_stop_limit copy = {.copy_ms = 0.995, .chip_ms = 0, .bound = FDT_BOUND_DRAM};
    o.after = 3;
    fdt_stop_init(&s, &o, FDT_SEARCH_MODEL, 100);
    fdt_decide_timing t = ms_timing(1.0);
    fdt_stop_resumed(&s, &t, &copy);
    assert_int_equal(s.why, FDT_STOP_NOT);
    t = ms_timing(0.998);
    assert_int_equal(fdt_stop_report(&s, &t, &copy), 0);
    t = ms_timing(NAN);
    assert_int_equal(fdt_stop_report(&s, &t, &copy), 0);
    t = ms_timing(1.2);
    assert_int_equal(fdt_stop_report(&s, &t, &copy), 1);
    assert_int_equal(s.why, FDT_STOP_CONVERGED);
    char why[160];
    fdt_stop_describe(&s, why, sizeof why);
    /* the headroom is the fastest result's (0.998 ms), though it was no gain */
    assert_string_equal(why, "converged: 3 evaluations without gain (0.3% above copy)");

    /* the limit: a gain to within 1% of copy stops at once (--stop-within 1) */
    o.within = 0.01;
    fdt_stop_limit c1 = {.copy_ms = 1.0, .chip_ms = 0, .bound = FDT_BOUND_DRAM};
    fdt_stop_init(&s, &o, FDT_SEARCH_MODEL, 100);
    t = ms_timing(2.0);
    assert_int_equal(fdt_stop_report(&s, &t, &c1), 0);
    t = ms_timing(1.008);
    assert_int_equal(fdt_stop_report(&s, &t, &c1), 1);
    assert_int_equal(s.why, FDT_STOP_LIMIT);
    fdt_stop_describe(&s, why, sizeof why);
    assert_string_equal(why, "within 0.8% of copy");
    assert_true(fabs(fdt_stop_headroom(&s) - 0.008) < 1e-9);

    /* the model's on-chip bound binds where the measurement does not beat it */
    fdt_stop_limit chip = {.copy_ms = 1.0, .chip_ms = 1.5, .bound = FDT_BOUND_SHARED};
    fdt_stop_init(&s, &o, FDT_SEARCH_MODEL, 100);
    t = ms_timing(1.509);
    assert_int_equal(fdt_stop_report(&s, &t, &chip), 1);
    fdt_stop_describe(&s, why, sizeof why);
    assert_string_equal(why, "within 0.6% of the model's shared bound");
    fdt_stop_init(&s, &o, FDT_SEARCH_MODEL, 100);
    t = ms_timing(1.2); /* beats the bound: the bound is no limit, the copy is */
    assert_int_equal(fdt_stop_report(&s, &t, &chip), 0);
    assert_true(fabs(fdt_stop_headroom(&s) - 0.2) < 1e-9);

    /* --search-all: neither rule stops; the budget ends it */
    o.all = 1;
    fdt_stop_init(&s, &o, FDT_SEARCH_MODEL, 5);
    for (int k = 0; k < 5; k++) {
        t = ms_timing(k == 0 ? 1.001 : 1.1);
        assert_int_equal(fdt_stop_report(&s, &t, &c1), 0);
    }
    fdt_stop_end(&s, FDT_STOP_BUDGET);
    fdt_stop_describe(&s, why, sizeof why);
    assert_string_equal(why, "budget: 5 of 5 (0.1% above copy)");
    fdt_stop_end(&s, FDT_STOP_SPACE); /* the first reason stays */
    assert_int_equal(s.why, FDT_STOP_BUDGET);
}

static void test_retune_status(void **state)
{
    (void)state;
    fdt_retune_report *rep = calloc(1, sizeof *rep);
    fdt_retune_item items[3];
    fdt_retune_outcome out[3];
    int done[3] = {1, 1, 0};
    memset(items, 0, sizeof items);
    memset(out, 0, sizeof out);
    rep->plan.items = items;
    rep->plan.n = 3;
    rep->out = out;
    rep->done = done;
    assert_int_equal(fdt_retune_status(rep), FDT_STATUS_OK);
    out[0].regressed = 1; /* regressed and recovered: fine */
    out[0].recovered = 1;
    assert_int_equal(fdt_retune_status(rep), FDT_STATUS_OK);
    out[2].action = FDT_RETUNE_LOST; /* not reached: does not count */
    assert_int_equal(fdt_retune_status(rep), FDT_STATUS_OK);
    out[1].regressed = 1; /* regressed, not recovered */
    assert_int_equal(fdt_retune_status(rep), FDT_STATUS_FAILED);
    out[1].regressed = 0;
    out[1].action = FDT_RETUNE_LOST; /* nothing verified any more */
    assert_int_equal(fdt_retune_status(rep), FDT_STATUS_FAILED);
    rep->errors = 1; /* an operational error outranks a failed check */
    assert_int_equal(fdt_retune_status(rep), FDT_STATUS_ERROR);
    rep->interrupted = 1; /* and an interruption outranks both */
    assert_int_equal(fdt_retune_status(rep), FDT_STATUS_INTERRUPTED);
    free(rep);
}

typedef struct seen {
    int n;
    fdt_retune_event_kind kind[16];
    char text[16][256];
} seen;

static void record(void *ctx, const fdt_retune_event *ev)
{
    seen *s = ctx;
    if (s->n == 16)
        return;
    s->kind[s->n] = ev->kind;
    snprintf(s->text[s->n], sizeof s->text[s->n], "%s", ev->text ? ev->text : "");
    if (ev->kind == FDT_RETUNE_EV_STALE)
        snprintf(s->text[s->n], sizeof s->text[s->n], "%d", ev->n);
    s->n++;
}

/* A database holding a tuned lap R=4 128^3 on the fake H100. */
static void tuned_db(const char *path)
{
    stale_run(path); /* creates it, with a dead run */
    fdt_db *db = NULL;
    fdt_err e = {""};
    assert_int_equal(fdt_db_open(path, FDT_DB_READWRITE, &db, &e), 0);
    fdt_device d = fake_h100();
    fdt_db_env v;
    fdt_db_env_from_device(&d, "0.1.0", &v);
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 128, 128, 128};
    fdt_db_run r;
    fdt_db_run_init(&r);
    int64_t prob, run;
    assert_int_equal(fdt_db_device_id(db, &d, &r.device_id, &e), 0);
    assert_int_equal(fdt_db_env_id(db, &v, &r.env_id, &e), 0);
    assert_int_equal(fdt_db_problem_id(db, &p, &prob, &e), 0);
    assert_int_equal(fdt_db_run_begin(db, &r, &run, &e), 0);
    fdt_db_eval ev;
    fdt_db_eval_init(&ev);
    ev.run_id = run;
    ev.problem_id = prob;
    snprintf(ev.config, sizeof ev.config, "bx=128");
    ev.time_ms = 0.1;
    ev.time_q1_ms = 0.099;
    ev.time_q3_ms = 0.101;
    ev.reps = 40;
    if (fdt_db_eval_insert(db, &ev, NULL, &e))
        fail_msg("insert: %s", e.msg);
    assert_int_equal(fdt_db_run_finish(db, run, FDT_DB_DONE, &e), 0);
    fdt_db_close(db);
}

static void test_retune_run(void **state)
{
    (void)state;
    char path[512], lock[600];
    path_in(path, sizeof path, "retune.db");
    tuned_db(path);
    /* a lock file naming a holder that is gone (no process holds the lock) */
    snprintf(lock, sizeof lock, "%s.retune.lock", path);
    FILE *f = fopen(lock, "w");
    assert_non_null(f);
    fputs("pid 1 on gone since 2020-01-01T00:00:00.000Z\n", f);
    fclose(f);

    fdt_retune_request rq;
    fdt_retune_request_init(&rq);
    rq.db_path = path;
    rq.fdtune_version = "0.1.0";
    rq.probe = probe_none;
    fdt_retune_report *rep = malloc(sizeof *rep);
    fdt_err e = {""};
    seen s = {0};

    /* no GPU: NO_GPU with the backends before anything is touched (issue 16: the lock
     * file is not taken over, the dead run is not marked) */
    assert_int_equal(fdt_retune_run(&rq, record, NULL, &s, rep, &e), FDT_STATUS_NO_GPU);
    assert_false(rep->ran);
    assert_string_equal(rep->db_path, path);
    assert_int_equal(rep->probe.nbackends, 2);
    assert_int_equal(s.n, 0);
    char *held = tu_slurp(lock);
    assert_string_equal(held, "pid 1 on gone since 2020-01-01T00:00:00.000Z\n");
    free(held);
    fdt_retune_report_free(rep);

    /* a GPU: the lock left by a dead holder is taken over, the dead run marked */
    memset(&s, 0, sizeof s);
    rq.probe = probe_h100;
    assert_int_equal(fdt_retune_run(&rq, record, NULL, &s, rep, &e), FDT_STATUS_ERROR);
    assert_true(s.n >= 2);
    assert_int_equal(s.kind[0], FDT_RETUNE_EV_LOCK_TAKEN);
    assert_string_equal(s.text[0], "pid 1 on gone since 2020-01-01T00:00:00.000Z");
    assert_int_equal(s.kind[1], FDT_RETUNE_EV_STALE);
    assert_string_equal(s.text[1], "1");
    fdt_retune_report_free(rep);

    /* the fake H100: its stored problem is planned, its recipe loaded, then its worker
     * cannot start: the GPU's error is reported and the retune fails operationally */
    memset(&s, 0, sizeof s);
    rq.probe = probe_h100;
    assert_int_equal(fdt_retune_run(&rq, record, NULL, &s, rep, &e), FDT_STATUS_ERROR);
    assert_true(rep->ran);
    assert_int_equal(rep->plan.n, 1);
    assert_int_equal(rep->plan.items[0].problem.op, FDT_OP_LAP);
    assert_int_equal(rep->ngpus, 1);
    assert_has(rep->gpus[0].error, "backend 'fake' is not in this build");
    assert_int_equal(rep->gpus[0].started, 0);
    assert_string_equal(rep->gpus[0].env.fdtune_version, "0.1.0");
    assert_int_equal(rep->done[0], 0);
    assert_int_equal(rep->errors, 1);
    assert_int_equal(s.n, 1); /* the stale run was marked the first time; the lock is free */
    assert_int_equal(s.kind[0], FDT_RETUNE_EV_GPU_ERROR);
    fdt_retune_report_free(rep);

    /* --gpu auto: the visible GPU's stored results are planned, another model's are not */
    rq.gpu = "auto";
    assert_int_equal(fdt_retune_run(&rq, record, NULL, &s, rep, &e), FDT_STATUS_ERROR);
    assert_int_equal(rep->plan.n, 1);
    fdt_retune_report_free(rep);
    rq.gpu = "MI250X";
    assert_int_equal(fdt_retune_run(&rq, record, NULL, &s, rep, &e), FDT_STATUS_OK);
    assert_int_equal(rep->plan.n, 0);
    fdt_retune_report_free(rep);
    rq.gpu = NULL;

    /* --op narrows the plan to nothing: said, and done */
    memset(&s, 0, sizeof s);
    rq.ops = 1u << FDT_OP_D2X;
    assert_int_equal(fdt_retune_run(&rq, record, NULL, &s, rep, &e), FDT_STATUS_OK);
    assert_true(rep->ran);
    assert_int_equal(rep->plan.n, 0);
    assert_int_equal(rep->ngpus, 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.kind[0], FDT_RETUNE_EV_NOTHING);
    fdt_retune_report_free(rep);

    /* another retune holds the lock: busy, naming it */
    fdt_retune_lock l;
    assert_int_equal(fdt_retune_lock_acquire(path, &l, &e), 0);
    assert_int_equal(fdt_retune_run(&rq, record, NULL, &s, rep, &e), FDT_STATUS_BUSY);
    assert_has(e.msg, "already held by this process");
    fdt_retune_lock_release(&l);
    fdt_retune_report_free(rep);
    free(rep);
}

/* ------------------------------------------------------------------ main */

static int group_setup(void **state)
{
    (void)state;
    fdt_err e;
    if (fdt_catalogue_load_default(&g_cat, &e)) {
        fprintf(stderr, "catalogue: %s\n", e.msg);
        return -1;
    }
    return tu_mkdtemp(g_dir, sizeof g_dir, "fdt_test_tuner");
}

static int group_teardown(void **state)
{
    (void)state;
    fdt_catalogue_free(g_cat);
    return tu_rmtree(g_dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select_gpu),    cmocka_unit_test(test_select_cpu),
        cmocka_unit_test(test_session_order),
        cmocka_unit_test(test_session_given_db), cmocka_unit_test(test_plan),
        cmocka_unit_test(test_dry_run),       cmocka_unit_test(test_replay),
        cmocka_unit_test(test_retune_status), cmocka_unit_test(test_retune_run),
        cmocka_unit_test(test_stop_rules),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
