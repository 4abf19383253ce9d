/* Tests of tuning on several GPUs and in tasks, through the library, with no GPU: a request's
 * problems (every grid, precision, radius and operator, in that nesting, each once); plans of
 * tasks written and read back, and every way a plan line can be wrong (not JSON, another
 * schema, a missing or mistyped member, an index out of range); the atomic copy of a shard
 * (one file, the same rows, no WAL beside it, nothing left behind on failure); simulated
 * GPUs from tests/data/h100-replay.db (their marked identity, their recorded configs); a
 * session refusing a database of the other kind (simulated results beside real ones); and a
 * run over several simulated GPUs: problems spread over the GPUs of a model, a problem
 * retried on another GPU when its GPU fails, the GPU taken out only when the retry works,
 * and a problem blamed when it fails on two GPUs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db_internal.h"
#include "fdt_many.h"
#include "fdt_session.h"
#include "fdt_tasks.h"
#include "testutil.h"

static char g_dir[256], g_rec[1024];
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

static fdt_tune_request request(unsigned ops, int R, int64_t n)
{
    fdt_tune_request rq;
    fdt_tune_request_init(&rq);
    rq.p = (fdt_problem){FDT_OP_D2X, R, FDT_F32, n, n, n};
    rq.ops = ops;
    return rq;
}

/* ------------------------------------------------------------------ problems */

static void test_problems(void **state)
{
    (void)state;
    fdt_err e = {""};
    fdt_problem *v = NULL;
    int n = 0;
    /* no lists: the request's problem, one per operator, in operator order */
    fdt_tune_request rq = request((1u << FDT_OP_LAP) | (1u << FDT_OP_D2X), 4, 256);
    assert_int_equal(fdt_tune_problems(&rq, &v, &n, &e), 0);
    assert_int_equal(n, 2);
    assert_int_equal(v[0].op, FDT_OP_D2X);
    assert_int_equal(v[1].op, FDT_OP_LAP);
    assert_int_equal(v[1].nz, 256);
    free(v);
    /* grids (one given twice), precisions and radii: grid, precision, radius, operator */
    rq.Rs = (1u << 2) | (1u << 4);
    rq.precs = (1u << FDT_F32) | (1u << FDT_F64);
    int64_t grids[3][3] = {{512, 512, 512}, {64, 32, 16}, {512, 512, 512}};
    memcpy(rq.grid, grids, sizeof grids);
    rq.ngrids = 3;
    assert_int_equal(fdt_tune_problems(&rq, &v, &n, &e), 0);
    assert_int_equal(n, 2 * 2 * 2 * 2);
    assert_int_equal(v[0].R, 2);
    assert_int_equal(v[0].op, FDT_OP_D2X);
    assert_int_equal(v[1].op, FDT_OP_LAP);
    assert_int_equal(v[2].R, 4);
    assert_int_equal(v[4].prec, FDT_F64);
    assert_int_equal(v[8].nx, 64);
    assert_int_equal(v[15].nz, 16);
    assert_int_equal(v[15].prec, FDT_F64);
    free(v);
}

/* ------------------------------------------------------------------ plans */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_plan_round_trip(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "tasks.jsonl");
    fdt_err e = {""};
    fdt_tune_request rq = request((1u << FDT_OP_D2X) | (1u << FDT_OP_WAVE), 4, 512);
    rq.Rs = (1u << 3) | (1u << 4);
    rq.have_strategy = 1;
    rq.strategy = FDT_SEARCH_RANDOM;
    rq.budget = 40;
    rq.time_s = 90;
    rq.seed = 7;
    int n = 0;
    assert_int_equal(fdt_tasks_write(path, &rq, NULL, &n, &e), 0);
    assert_int_equal(n, 4);
    fdt_task t;
    assert_int_equal(fdt_task_read(path, 3, &t, &e), 0);
    assert_int_equal(t.index, 3);
    assert_int_equal(t.count, 4);
    assert_int_equal(t.p.op, FDT_OP_WAVE);
    assert_int_equal(t.p.R, 4);
    assert_int_equal(t.p.nx, 512);
    assert_int_equal(t.have_strategy, 1);
    assert_int_equal(t.strategy, FDT_SEARCH_RANDOM);
    assert_int_equal(t.budget, 40);
    assert_true(t.time_s == 90);
    assert_int_equal(t.seed, 7);
    assert_string_equal(t.recipe, "");
    fdt_tune_request back;
    fdt_task_request(&t, &back);
    assert_int_equal(back.ops, 1u << FDT_OP_WAVE);
    assert_int_equal(back.budget, 40);
    /* the recipe's plan when the request names none; a recipe of one's own, absolute */
    rq.have_strategy = 0;
    char recipe[600];
    snprintf(recipe, sizeof recipe, "%s/recipes/d2x.lua", getenv("FDTUNE_TEST_SRC"));
    assert_int_equal(fdt_tasks_write(path, &rq, recipe, &n, &e), 0);
    assert_int_equal(fdt_task_read(path, 0, &t, &e), 0);
    assert_int_equal(t.have_strategy, 0);
    assert_true(t.recipe[0] == '/');
    assert_has(t.recipe, "recipes/d2x.lua");
    assert_int_equal(fdt_tasks_write(path, &rq, "/no/such/recipe.lua", &n, &e), -2);
    assert_has(e.msg, "not found");
    /* out of range, and no file */
    assert_int_equal(fdt_task_read(path, 4, &t, &e), -1);
    assert_has(e.msg, "task 4 of 4: the plan has tasks 0..3");
    assert_int_equal(fdt_task_read(path, -1, &t, &e), -1);
    path_in(path, sizeof path, "none.jsonl");
    assert_int_equal(fdt_task_read(path, 0, &t, &e), -1);
    assert_has(e.msg, "none.jsonl");
}

/* One bad line as the whole plan: read fails saying `why`. */
static void bad_line(const char *line, const char *why)
{
    char path[512];
    path_in(path, sizeof path, "bad.jsonl");
    write_text(path, line);
    fdt_task t;
    fdt_err e = {""};
    if (fdt_task_read(path, 0, &t, &e) != -1)
        fail_msg("accepted: %s", line);
    assert_has(e.msg, why);
    assert_has(e.msg, "bad.jsonl:1");
}

/* dwave's absorbing layer (issue 29): the request's layer goes to dwave's problems alone
 * (fdt_tune_request_problem), a plan writes it into dwave's tasks only and reads it back, and
 * a dwave task without its layer, or with a bad one, is refused. */
static void test_dwave_layer(void **state)
{
    (void)state;
    fdt_err e = {""};
    fdt_tune_request rq = request((1u << FDT_OP_LAP) | (1u << FDT_OP_DWAVE), 4, 64);
    rq.p.op = FDT_OP_LAP; /* the last --op given: the layer is dwave's whatever it is */
    rq.p.absorb_w = 8;
    rq.p.absorb_s = 0.05;
    fdt_problem *v = NULL;
    int n = 0;
    assert_int_equal(fdt_tune_problems(&rq, &v, &n, &e), 0);
    assert_int_equal(n, 2);
    assert_int_equal(v[0].op, FDT_OP_LAP);
    assert_int_equal(v[0].absorb_w, 0);
    assert_true(v[0].absorb_s == 0);
    assert_int_equal(v[1].op, FDT_OP_DWAVE);
    assert_int_equal(v[1].absorb_w, 8);
    assert_true(v[1].absorb_s == 0.05);
    for (int i = 0; i < n; i++)
        assert_int_equal(fdt_problem_check(&v[i], &e), 0);
    free(v);
    fdt_problem one;
    fdt_tune_request_problem(&rq, FDT_OP_WAVE, &one);
    assert_int_equal(one.absorb_w, 0);

    char path[512];
    path_in(path, sizeof path, "dwave.jsonl");
    assert_int_equal(fdt_tasks_write(path, &rq, NULL, &n, &e), 0);
    assert_int_equal(n, 2);
    fdt_task t;
    assert_int_equal(fdt_task_read(path, 0, &t, &e), 0);
    assert_int_equal(t.p.op, FDT_OP_LAP);
    assert_int_equal(t.p.absorb_w, 0);
    assert_int_equal(fdt_task_read(path, 1, &t, &e), 0);
    assert_int_equal(t.p.op, FDT_OP_DWAVE);
    assert_int_equal(t.p.absorb_w, 8);
    assert_true(t.p.absorb_s == 0.05);
    fdt_tune_request back;
    fdt_task_request(&t, &back);
    fdt_tune_request_problem(&back, FDT_OP_DWAVE, &one);
    assert_int_equal(one.absorb_w, 8);

    bad_line("{\"schema\": 1, \"task\": 0, \"tasks\": 1, \"op\": \"dwave\", \"R\": 4, "
             "\"precision\": \"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
             "\"time_s\": 0, \"seed\": 1}\n",
             "dwave needs an absorbing layer");
    bad_line("{\"schema\": 1, \"task\": 0, \"tasks\": 1, \"op\": \"dwave\", \"R\": 4, "
             "\"precision\": \"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
             "\"time_s\": 0, \"seed\": 1, \"absorb_width\": 40, \"absorb_strength\": 0.1}\n",
             "leaves no interior");
    bad_line("{\"schema\": 1, \"task\": 0, \"tasks\": 1, \"op\": \"dwave\", \"R\": 4, "
             "\"precision\": \"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
             "\"time_s\": 0, \"seed\": 1, \"absorb_width\": \"8\", \"absorb_strength\": 0.1}\n",
             "\"absorb_width\" must be an integer");
    bad_line("{\"schema\": 1, \"task\": 0, \"tasks\": 1, \"op\": \"lap\", \"R\": 4, "
             "\"precision\": \"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
             "\"time_s\": 0, \"seed\": 1, \"absorb_width\": 8, \"absorb_strength\": 0.1}\n",
             "an absorbing layer is dwave's");
}


static void test_plan_errors(void **state)
{
    (void)state;
    const char *good = "\"task\": 0, \"tasks\": 1, \"op\": \"d2x\", \"R\": 4, \"precision\": "
                       "\"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
                       "\"time_s\": 0, \"seed\": 1";
    char line[512];
    snprintf(line, sizeof line, "{\"schema\": 1, %s}\n", good);
    char path[512];
    path_in(path, sizeof path, "good.jsonl");
    write_text(path, line);
    fdt_task t;
    fdt_err e = {""};
    assert_int_equal(fdt_task_read(path, 0, &t, &e), 0); /* strategy and recipe: optional */
    assert_int_equal(t.p.nz, 64);

    bad_line("not json\n", "not a JSON object");
    bad_line("[1, 2]\n", "not a JSON object");
    bad_line("{\"task\": 0}\n", "no \"schema\"");
    snprintf(line, sizeof line, "{\"schema\": 2, %s}\n", good);
    bad_line(line, "schema 2: this fdtune reads plans of schema 1");
    bad_line("{\"schema\": 1, \"task\": 0}\n", "\"tasks\" is missing");
    snprintf(line, sizeof line, "{\"schema\": \"1\", %s}\n", good);
    bad_line(line, "\"schema\" must be an integer");
    snprintf(line, sizeof line, "{\"schema\": 1, %s, \"strategy\": \"fastest\"}\n", good);
    bad_line(line, "fastest");
    /* values the problem does not allow */
    bad_line("{\"schema\": 1, \"task\": 0, \"tasks\": 1, \"op\": \"d9\", \"R\": 4, "
             "\"precision\": \"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
             "\"time_s\": 0, \"seed\": 1}\n", "d9");
    bad_line("{\"schema\": 1, \"task\": 0, \"tasks\": 1, \"op\": \"d2x\", \"R\": 9, "
             "\"precision\": \"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
             "\"time_s\": 0, \"seed\": 1}\n", "R");
    /* the line says another place than it has */
    bad_line("{\"schema\": 1, \"task\": 0, \"tasks\": 3, \"op\": \"d2x\", \"R\": 4, "
             "\"precision\": \"f32\", \"nx\": 64, \"ny\": 64, \"nz\": 64, \"budget\": 0, "
             "\"time_s\": 0, \"seed\": 1}\n", "the line says task 0 of 3, the file has 1");
}

/* ------------------------------------------------------------------ shards */

static int count_rows(const char *path)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM t", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return n;
}

static void test_shard_copy(void **state)
{
    (void)state;
    char src[512], dst[512], wal[600], bad[512];
    path_in(src, sizeof src, "src.db");
    path_in(dst, sizeof dst, "results/deep/task-0007.db");
    fdt_shard_path(g_dir, 7, bad, sizeof bad);
    assert_has(bad, "/task-0007.db");
    sqlite3 *h;
    assert_int_equal(sqlite3_open(src, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode=WAL; CREATE TABLE t(x);"
                                     "INSERT INTO t VALUES (1), (2), (3);", NULL, NULL, NULL),
                     SQLITE_OK);
    fdt_err e = {""};
    /* a writer still connected (its rows in the WAL): the copy has them all */
    assert_int_equal(fdt_shard_copy(src, dst, &e), 0);
    sqlite3_close(h);
    assert_int_equal(count_rows(dst), 3);
    snprintf(wal, sizeof wal, "%s-wal", dst);
    assert_false(exists(wal));
    /* a copy over an older one replaces it whole */
    assert_int_equal(sqlite3_open(src, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "INSERT INTO t VALUES (4);", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    assert_int_equal(fdt_shard_copy(src, dst, &e), 0);
    assert_int_equal(count_rows(dst), 4);
    /* a source that is not a database: an error, the destination untouched, no leftovers */
    path_in(bad, sizeof bad, "junk.db");
    write_text(bad, "this is not a database, not even close to one, at all\n");
    assert_int_equal(fdt_shard_copy(bad, dst, &e), -1);
    assert_has(e.msg, "junk.db");
    assert_int_equal(count_rows(dst), 4);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", dst, (long)getpid());
    assert_false(exists(tmp));
    fdt_shard_remove(dst);
    assert_false(exists(dst));
    /* the local directory: $SLURM_TMPDIR first, then $TMPDIR, never a missing one */
    setenv("SLURM_TMPDIR", g_dir, 1);
    assert_string_equal(fdt_shard_local_dir(), g_dir);
    setenv("SLURM_TMPDIR", "/no/such/dir", 1);
    setenv("TMPDIR", "/no/such/dir/either", 1);
    assert_string_equal(fdt_shard_local_dir(), "/tmp");
    unsetenv("SLURM_TMPDIR");
    unsetenv("TMPDIR");
    fdt_shard_results_default("/data/run1/tasks.jsonl", bad, sizeof bad);
    assert_string_equal(bad, "/data/run1/results");
}

/* ------------------------------------------------------------------ simulated GPUs */

static void test_sim_devices(void **state)
{
    (void)state;
    fdt_probe p;
    fdt_err e = {""};
    assert_int_equal(fdt_sim_probe(g_rec, 3, &p, &e), 0);
    assert_int_equal(p.ndevices, 3);
    for (int i = 0; i < 3; i++) {
        const fdt_device *d = &p.device[i];
        assert_true(fdt_device_simulated(d));
        assert_string_equal(d->backend, "sim");
        assert_string_equal(d->name, "NVIDIA H100 80GB HBM3 (simulated)");
        assert_string_equal(d->arch, "sm_90");
        assert_int_equal(d->compute_units, 132);
        assert_string_equal(d->driver_version, "simulated from h100-replay.db");
        assert_int_equal(d->index, i);
        char want[64];
        snprintf(want, sizeof want, "sim%d-GPU-", i);
        assert_true(!strncmp(d->uuid, want, strlen(want)));
    }
    assert_int_equal(fdt_sim_probe(g_rec, 0, &p, &e), -1);
    assert_int_equal(fdt_sim_probe("/no/such.db", 1, &p, &e), -1);
    assert_has(e.msg, "--simulate-from");
    /* what the recording has: every evaluation of d2x f32 512^3 (40 configs, probe and full) */
    assert_int_equal(fdt_sim_probe(g_rec, 1, &p, &e), 0);
    fdt_problem d2x = {FDT_OP_D2X, 4, FDT_F32, 512, 512, 512};
    size_t n = 0;
    assert_int_equal(fdt_sim_configs(g_rec, &p.device[0], &d2x, NULL, NULL, &n, &e), 0);
    assert_int_equal(n, 39 + 18); /* the record's rows: 39 probes, 18 full samples */
    d2x.nz = 640;
    assert_int_equal(fdt_sim_configs(g_rec, &p.device[0], &d2x, NULL, NULL, &n, &e), 0);
    assert_int_equal(n, 0);
}

/* A run of a process that is gone, left "running" in db (what a killed tune leaves). */
static void stale_run(fdt_db *db, const fdt_device *d)
{
    fdt_err e = {""};
    fdt_db_env v;
    fdt_db_env_from_device(d, "0.1.0", &v);
    fdt_db_run r;
    fdt_db_run_init(&r);
    int64_t id;
    assert_int_equal(fdt_db_device_id(db, d, &r.device_id, &e), 0);
    assert_int_equal(fdt_db_env_id(db, &v, &r.env_id, &e), 0);
    assert_int_equal(fdt_db_run_begin(db, &r, &id, &e), 0);
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    assert_true(pid > 0);
    waitpid(pid, NULL, 0);
    char sql[128];
    snprintf(sql, sizeof sql, "UPDATE runs SET pid = %ld WHERE id = %lld", (long)pid,
             (long long)id);
    assert_int_equal(sqlite3_exec(fdt_dbi_handle(db), sql, NULL, NULL, NULL), SQLITE_OK);
}

static char *slurp_file(const char *path, size_t *n)
{
    char *bytes;
    fdt_err e = {""};
    if (fdt_read_file(path, &bytes, n, &e))
        fail_msg("%s", e.msg);
    return bytes;
}

/* The first recorded config, as fdt_sim_configs lists them. */
static int take_first_config(void *ctx, const char *config)
{
    snprintf(ctx, 256, "%s", config);
    return 1;
}

/* A simulated GPU's worker evaluates candidates built for its target as tune and retune do
 * (fdt_target_build, then fdt_evaluate_cand): a recorded config answers as recorded, a stored
 * config that does not parse is a compile_error result, and one the target's rules prune is
 * a pruned result that never reaches the worker. */
static void test_sim_build_and_evaluate(void **state)
{
    (void)state;
    fdt_worker_opts wo;
    fdt_worker_opts_default(&wo);
    wo.simulate_from = g_rec;
    fdt_worker *w = NULL;
    fdt_err e = {""};
    assert_int_equal(fdt_worker_start(FDT_SIM_BACKEND, 0, &wo, &w, NULL, &e), 0);
    const fdt_target *t = fdt_worker_target(w);
    assert_ptr_equal(t->backend, fdt_rt_backend_find(FDT_SIM_BACKEND));
    assert_string_equal(t->arch_name, "sm_90");
    assert_string_equal(t->arch->name, "sm_90");
    fdt_problem p = {FDT_OP_D2X, 4, FDT_F32, 512, 512, 512};
    fdt_setup_result setup;
    assert_int_equal(fdt_worker_setup(w, &p, &setup, &e), 0);
    char recorded[256] = "";
    size_t n = 0;
    assert_int_equal(fdt_sim_configs(g_rec, fdt_worker_device(w), &p, take_first_config,
                                     recorded, &n, &e), 0);
    fdt_cand v[3], *pv[3] = {&v[0], &v[1], &v[2]};
    fdt_config c;
    assert_int_equal(fdt_config_parse(recorded, &c, &e), 0);
    fdt_cand_init(&v[0], FDT_CAND_STENCIL, &c, NULL);
    fdt_cand_init(&v[1], FDT_CAND_STENCIL, NULL, NULL);
    assert_int_equal(fdt_config_parse("bx=", &v[1].cfg, &v[1].err), -1);
    v[1].state = FDT_CAND_GENERATE_FAILED;
    assert_int_equal(fdt_config_parse("bx=64,by=8,lds=2,nw=32,pf=8,tile=8,vec=4,align=64,lb=512",
                                      &c, &e), 0);
    fdt_cand_init(&v[2], FDT_CAND_STENCIL, &c, NULL);
    assert_int_equal(fdt_target_build(t, &p, pv, 3, NULL, &e), 0);
    assert_int_equal(v[0].state, FDT_CAND_READY);
    assert_int_equal(v[1].state, FDT_CAND_GENERATE_FAILED);
    assert_int_equal(v[2].state, FDT_CAND_PRUNED);
    fdt_timing_opts full;
    fdt_timing_opts_default(&full);
    fdt_eval_result r;
    assert_int_equal(fdt_evaluate_cand(w, &p, &v[0], &full, &r, &e), 0);
    assert_has(r.message, "simulated from h100-replay.db (evaluation ");
    assert_int_equal(fdt_evaluate_cand(w, &p, &v[1], &full, &r, &e), 0);
    assert_int_equal(r.status, FDT_EVAL_COMPILE_ERROR);
    assert_string_equal(r.message, v[1].err.msg);
    assert_int_equal(fdt_evaluate_cand(w, &p, &v[2], &full, &r, &e), 0);
    assert_int_equal(r.status, FDT_EVAL_PRUNED);
    assert_has(r.message, "needs 608256 bytes of shared memory");
    assert_int_equal(r.res.shared_bytes, 608256); /* the dynamic part counted */
    for (int i = 0; i < 3; i++)
        fdt_cand_free(&v[i]);
    fdt_worker_stop(w);
}

/* A database holding a device of the other kind is refused by a session, before anything is
 * written to it: its stale run stays as it was, the file byte for byte. */
static void test_kinds_apart(void **state)
{
    (void)state;
    char path[512];
    path_in(path, sizeof path, "kinds.db");
    fdt_probe sim, real;
    fdt_err e = {""};
    assert_int_equal(fdt_sim_probe(g_rec, 1, &sim, &e), 0);
    memset(&real, 0, sizeof real);
    real.ndevices = 1;
    real.device[0] = sim.device[0];
    snprintf(real.device[0].backend, sizeof real.device[0].backend, "fake");
    snprintf(real.device[0].name, sizeof real.device[0].name, "NVIDIA H100 80GB HBM3");
    /* a database with a simulated device: a real GPU's session refuses it */
    fdt_db *db = NULL;
    int64_t id;
    assert_int_equal(fdt_db_open(path, FDT_DB_CREATE, &db, &e), 0);
    assert_int_equal(fdt_session_check_kind(db, &sim, &e), 0);
    assert_int_equal(fdt_db_device_id(db, &sim.device[0], &id, &e), 0);
    assert_int_equal(fdt_session_check_kind(db, &sim, &e), 0);
    assert_int_equal(fdt_session_check_kind(db, &real, &e), -1);
    assert_has(e.msg, "holds simulated results (NVIDIA H100 80GB HBM3 (simulated))");
    stale_run(db, &sim.device[0]);
    fdt_db_close(db);
    size_t n, m;
    char *before = slurp_file(path, &n);
    fdt_session_opts o;
    fdt_session_opts_init(&o);
    o.db_path = path;
    o.cat = g_cat;
    o.select = 1;
    o.probed = &real;
    fdt_session s;
    assert_int_equal(fdt_session_open(&o, &s, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "results of real GPUs go into a database of their own");
    assert_has(e.msg, "the file was left as it is");
    assert_int_equal(s.ngpus, 0); /* refused before any worker started */
    assert_int_equal(s.stale, 0); /* nor was the stale run marked */
    fdt_session_close(&s);
    char *after = slurp_file(path, &m);
    assert_true(n == m && !memcmp(before, after, n));
    free(before);
    free(after);
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", path);
    assert_false(exists(wal));
    /* and the other way round */
    path_in(path, sizeof path, "real.db");
    assert_int_equal(fdt_db_open(path, FDT_DB_CREATE, &db, &e), 0);
    assert_int_equal(fdt_db_device_id(db, &real.device[0], &id, &e), 0);
    assert_int_equal(fdt_session_check_kind(db, &sim, &e), -1);
    assert_has(e.msg, "holds results of real GPUs");
    fdt_db_close(db);
}

/* ------------------------------------------------------------------ several GPUs */

typedef struct seen {
    int started, failed, retries, finished, suspect;
} seen;

static void count_events(void *ctx, const fdt_many_event *ev)
{
    seen *s = ctx;
    s->started += ev->kind == FDT_MANY_STARTED;
    s->failed += ev->kind == FDT_MANY_GPU_FAILED;
    s->retries += ev->kind == FDT_MANY_RETRY;
    s->finished += ev->kind == FDT_MANY_FINISHED;
    s->suspect += ev->kind == FDT_MANY_SUSPECT;
}

/* A run of d2x and d2y at 512^3 (exhaustive) on simulated GPUs live[0..n) of a node of
 * ngpus, into a fresh database `name`. */
static fdt_status many_run(const char *name, int ngpus, const int *live, int n, seen *s,
                           fdt_many_report *out, fdt_err *e)
{
    static fdt_probe p;
    char path[512];
    path_in(path, sizeof path, name);
    if (fdt_sim_probe(g_rec, ngpus, &p, e))
        fail_msg("%s", e->msg);
    fdt_session_opts so;
    fdt_session_opts_init(&so);
    so.db_path = path;
    so.cat = g_cat;
    so.fdtune_version = "0.1.0";
    so.probed = &p;
    so.worker.simulate_from = g_rec;
    so.worker.eval_timeout_ms = so.worker.setup_timeout_ms = 1000;
    fdt_recipe *rec[FDT_OP_COUNT] = {0};
    for (int op = FDT_OP_D2X; op <= FDT_OP_D2Y; op++)
        if (fdt_recipe_load_for_op((fdt_op)op, NULL, &rec[op], e))
            fail_msg("%s", e->msg);
    fdt_tune_request rq = request((1u << FDT_OP_D2X) | (1u << FDT_OP_D2Y), 4, 512);
    rq.have_strategy = 1;
    rq.strategy = FDT_SEARCH_EXHAUSTIVE;
    memset(s, 0, sizeof *s);
    fdt_status st = fdt_tune_many(&so, live, n, rec, &rq, count_events, s, out, e);
    for (int op = 0; op < FDT_OP_COUNT; op++)
        fdt_recipe_free(rec[op]);
    return st;
}

static void test_many_spread(void **state)
{
    (void)state;
    int live[2] = {0, 1};
    seen s;
    fdt_many_report r;
    fdt_err e = {""};
    assert_int_equal(many_run("spread.db", 2, live, 2, &s, &r, &e), FDT_STATUS_OK);
    assert_int_equal(r.ngpus, 2);
    assert_int_equal(r.nmodels, 1);
    assert_int_equal(r.n, 2);
    assert_int_equal(s.started, 2);
    assert_int_equal(s.finished, 2);
    assert_int_equal(r.gpu[0].tuned + r.gpu[1].tuned, 2);
    assert_int_equal(r.gpu[0].tuned, 1); /* both GPUs worked */
    assert_int_equal(r.simulated, 1);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(r.v[i].state, FDT_MANY_DONE);
        assert_int_equal(r.v[i].sum.have_best, 1);
        assert_int_equal(r.v[i].sum.simulated, 1);
        assert_int_equal(r.v[i].tries, 1);
    }
    assert_string_equal(r.v[0].sum.best_config, "align=32,bx=32,lb=128,vec=4");
    assert_int_equal(r.nretries, 0);
    fdt_many_report_free(&r);
}

static void test_many_retry(void **state)
{
    (void)state;
    int live[2] = {0, 1};
    seen s;
    fdt_many_report r;
    fdt_err e = {""};
    /* GPU 1 dies at its first setup: its problem goes to GPU 0, GPU 1 is taken out */
    setenv("FDTUNE_SIM_FAULT", "1:crash", 1);
    assert_int_equal(many_run("retry.db", 2, live, 2, &s, &r, &e), FDT_STATUS_OK);
    assert_int_equal(r.nretries, 1);
    assert_int_equal(r.retries[0].from, 1);
    assert_int_equal(r.retries[0].to, 0);
    assert_int_equal(r.gpu[1].failed, 1);
    assert_int_equal(r.gpu[0].tuned, 2);
    assert_int_equal(s.suspect, 1);
    assert_int_equal(s.retries, 1);
    assert_int_equal(s.failed, 1);
    assert_int_equal(r.v[r.retries[0].problem].tries, 2);
    assert_int_equal(r.v[r.retries[0].problem].state, FDT_MANY_DONE);
    fdt_many_report_free(&r);

    /* one GPU alone fails: nothing to retry on, the problem fails, the GPU is not blamed */
    int one[1] = {1};
    assert_int_equal(many_run("alone.db", 2, one, 1, &s, &r, &e), FDT_STATUS_ERROR);
    assert_int_equal(r.failed, 2);
    assert_has(r.v[0].error, "no other GPU of this model to retry on");
    assert_int_equal(r.nretries, 0);

    /* every GPU fails the same problem: it is blamed after two, the GPUs go on */
    fdt_many_report_free(&r);
    setenv("FDTUNE_SIM_FAULT", "0:crash,1:crash", 1);
    assert_int_equal(many_run("both.db", 2, live, 2, &s, &r, &e), FDT_STATUS_ERROR);
    assert_int_equal(r.failed, 2);
    int blamed = 0;
    for (int i = 0; i < r.n; i++)
        blamed += strstr(r.v[i].error, "it failed on two GPUs") != NULL;
    assert_true(blamed >= 1);
    assert_has(e.msg, "could not be tuned");
    fdt_many_report_free(&r);
    unsetenv("FDTUNE_SIM_FAULT");

    /* a device index that is not there */
    int bad[2] = {0, 5};
    assert_int_equal(many_run("bad.db", 2, bad, 2, &s, &r, &e), FDT_STATUS_USAGE);
    assert_has(e.msg, "no visible device 5");
    fdt_many_report_free(&r);
}

/* ------------------------------------------------------------------ main */

static int group_setup(void **state)
{
    (void)state;
    fdt_err e;
    const char *src = getenv("FDTUNE_TEST_SRC");
    snprintf(g_rec, sizeof g_rec, "%s/tests/data/h100-replay.db", src && *src ? src : ".");
    if (fdt_catalogue_load_default(&g_cat, &e)) {
        fprintf(stderr, "catalogue: %s\n", e.msg);
        return -1;
    }
    return tu_mkdtemp(g_dir, sizeof g_dir, "fdt_test_tasks");
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
        cmocka_unit_test(test_problems),    cmocka_unit_test(test_plan_round_trip),
        cmocka_unit_test(test_dwave_layer),
        cmocka_unit_test(test_plan_errors), cmocka_unit_test(test_shard_copy),
        cmocka_unit_test(test_sim_devices), cmocka_unit_test(test_sim_build_and_evaluate),
        cmocka_unit_test(test_kinds_apart),
        cmocka_unit_test(test_many_spread), cmocka_unit_test(test_many_retry),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
