/* Tests of fdtune export. A database is written through the fdt_db API: an H100 (sm_90, 132
 * SMs) and an MI250X (gfx90a, 110 CUs) tuned for lap and d2z, R=4, f32, on 256^3 and 512^3,
 * with a different best config for every (device, problem) and slower or wrong ones beside
 * them; an MI210 (gfx90a, 104 CUs) with one result shows the compute-unit preference. Then:
 * the plan picks the best configs of the devices --gpu names (substring and catalogue name);
 * the header's device code compiles as it is through fdt_rt_compile, with hiprtc for gfx90a
 * and NVRTC for sm_90 (a missing compiler is skipped, both missing fails) and carries fdtune's
 * portable/ rules verbatim; the header's portable part, compiled by the host's C++ and C
 * compilers with FDTUNED_SELECT_ONLY, selects the expected variant for each (device name,
 * arch, compute units, grid), picks the same tuned result as fdt_db_nearest when it exports
 * every device, and its layout and launch geometry agree with fdt_layout_make and
 * fdt_gen_geometry; requests the database cannot answer are refused; the JSON parses; the
 * fdtune binary writes the file and exits 0, 1, 2 or 4 as documented; and a user program
 * including the header builds with nvcc and with clang's HIP mode where they work. CPU only;
 * everything lives under a mkdtemp directory. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "fdt_db.h"
#include "fdt_export.h"
#include "fdt_recipe.h"
#include "fdt_rt.h"
#include "json_check.h"
#include "testutil.h"

#ifndef FDTUNE_BIN
#error "FDTUNE_BIN (the fdtune executable) must be defined by the build"
#endif
#ifndef FDT_SOURCE_DIR
#define FDT_SOURCE_DIR "."
#endif

static char g_dir[256], g_db[512], g_src[1024];
static fdt_catalogue *g_cat;

static const char H100[] = "NVIDIA H100 80GB HBM3";
static const char MI250X[] = "AMD Instinct MI250X";
static const char MI210[] = "AMD Instinct MI210";

/* The best config of each (device, op, grid) and a slower one beside it. */
typedef struct tuned {
    const char *device, *op;
    int n;               /* grid n^3 */
    const char *best, *slower;
    double ms;
    char key[128];       /* canonical form of best */
} tuned;

static tuned g_tuned[] = {
    {H100, "lap", 256, "bx=32,by=8,tile=2,vec=2,nw=32,lds=2,pf=3,align=32", "bx=64,by=4", 0.2, ""},
    {H100, "lap", 512, "bx=32,by=8,tile=2,vec=2,nw=64,lds=3,mbar=1,bulk=1,pf=3,align=32",
     "bx=128,by=2", 1.0, ""},
    {H100, "d2z", 256, "bx=64,by=4,nw=32,align=32,vec=4", "bx=32,by=4", 0.1, ""},
    {H100, "d2z", 512, "bx=32,by=8,nw=64,order=yxz,align=32,nt=1", "bx=64,by=2", 0.7, ""},
    {MI250X, "lap", 256, "bx=64,by=4,tile=2,nw=8,align=64", "bx=256,by=1", 0.5, ""},
    {MI250X, "lap", 512, "bx=128,by=2,nw=16,vec=2,align=64,split=2", "bx=64,by=8", 2.5, ""},
    {MI250X, "d2z", 256, "bx=64,by=2,nw=16,align=16,pf=2", "bx=64,by=1", 0.3, ""},
    {MI250X, "d2z", 512, "bx=256,by=1,nw=32,align=64,vec=2", "bx=128,by=1", 1.9, ""},
    {MI210, "lap", 512, "bx=64,by=4,tile=4,nw=8,align=8", "bx=32,by=2", 2.8, ""},
};
#define NTUNED (sizeof g_tuned / sizeof g_tuned[0])
static char g_wrong[128];
static int64_t g_run_h100, g_run_mi, g_run_mi210;

/* ------------------------------------------------------------------ helpers */

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        fail_msg("%s: cannot create", path);
    fputs(text, f);
    fclose(f);
}

static size_t count(const char *s, const char *part)
{
    size_t n = 0, len = strlen(part);
    for (const char *p = strstr(s, part); p; p = strstr(p + len, part))
        n++;
    return n;
}

static fdt_op op_of(const char *name)
{
    fdt_op op;
    fdt_err e;
    if (fdt_op_parse(name, &op, &e))
        fail_msg("%s", e.msg);
    return op;
}

static void canon(const char *text, char *key, size_t n)
{
    fdt_config c;
    fdt_err e;
    if (fdt_config_parse(text, &c, &e))
        fail_msg("%s: %s", text, e.msg);
    fdt_config_format(&c, key, n);
}

static fdt_problem problem(const char *op, int64_t nx, int64_t ny, int64_t nz)
{
    fdt_problem p = {op_of(op), 4, FDT_F32, nx, ny, nz};
    return p;
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
    d.mem_bytes = 64LL << 30;
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    snprintf(d.driver_version, sizeof d.driver_version, "%s",
             !strcmp(vendor, "AMD") ? "6.3.6" : "580.65.06");
    snprintf(d.runtime_version, sizeof d.runtime_version, "%s",
             !strcmp(vendor, "AMD") ? "6.3" : "13.0");
    snprintf(d.compiler_version, sizeof d.compiler_version, "%s",
             !strcmp(vendor, "AMD") ? "hiprtc 6.3" : "nvrtc 13.0");
    return d;
}

static int64_t begin(fdt_db *db, const fdt_device *d, const char *cmd, double copy)
{
    fdt_err e;
    int64_t dev, env, id;
    fdt_db_env v;
    fdt_db_env_from_device(d, "0.1.0", &v);
    fdt_db_run r;
    fdt_db_run_init(&r);
    if (fdt_db_device_id(db, d, &dev, &e) || fdt_db_env_id(db, &v, &env, &e))
        fail_msg("%s", e.msg);
    r.kind = FDT_DB_TUNE;
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

/* One evaluation; returns its id. */
static int64_t add(fdt_db *db, int64_t run, fdt_problem p, const char *config, fdt_db_status s,
                   double ms)
{
    fdt_err e;
    fdt_db_eval ev;
    fdt_db_eval_init(&ev);
    ev.run_id = run;
    if (fdt_db_problem_id(db, &p, &ev.problem_id, &e))
        fail_msg("%s", e.msg);
    canon(config, ev.config, sizeof ev.config);
    fdt_config c;
    fdt_layout l;
    if (fdt_config_parse(config, &c, &e) || fdt_layout_make(&p, c.align, &l, &e))
        fail_msg("%s", e.msg);
    ev.status = s;
    ev.time_ms = ms;
    ev.time_min_ms = ms * 0.98;
    ev.time_max_ms = ms * 1.05;
    ev.gbs = fdt_effective_bytes(&p) / (ms * 1e-3) / 1e9;
    ev.layout_line = l.line;
    ev.layout_offset = l.offset;
    ev.registers = 64;
    ev.spill_bytes = 0;
    ev.shared_bytes = c.lds ? 9000 : 0;
    int64_t id;
    if (fdt_db_eval_insert(db, &ev, &id, &e))
        fail_msg("%s", e.msg);
    return id;
}

/* Records the tuner's decision for ev's (device, problem): best is ev, its search cut short
 * by its time limit or not. */
static void decide(fdt_db *db, const fdt_device *d, fdt_problem p, int64_t ev, int cut_short)
{
    fdt_err e;
    int64_t dev, prob;
    if (fdt_db_device_id(db, d, &dev, &e) || fdt_db_problem_id(db, &p, &prob, &e) ||
        fdt_db_best_decide(db, dev, prob, ev, cut_short, "tune: test", &e))
        fail_msg("%s", e.msg);
}

static int setup(void **state)
{
    (void)state;
    if (tu_mkdtemp(g_dir, sizeof g_dir, "fdt_export"))
        return -1;
    snprintf(g_db, sizeof g_db, "%s/tune.db", g_dir);
    const char *src = getenv("FDTUNE_TEST_SRC");
    snprintf(g_src, sizeof g_src, "%s", src && *src ? src : FDT_SOURCE_DIR);
    char recipes[1100], gpus[1200];
    snprintf(recipes, sizeof recipes, "%s/recipes", g_src);
    snprintf(gpus, sizeof gpus, "%s/gpus.lua", recipes);
    setenv("FDTUNE_RECIPES", recipes, 1);
    setenv("NO_COLOR", "1", 1);
    unsetenv("FDTUNE_DB");
    fdt_err e;
    if (fdt_catalogue_load(gpus, &g_cat, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    for (size_t i = 0; i < NTUNED; i++)
        canon(g_tuned[i].best, g_tuned[i].key, sizeof g_tuned[i].key);
    canon("bx=16,by=16", g_wrong, sizeof g_wrong);

    fdt_db *db;
    if (fdt_db_open(g_db, FDT_DB_CREATE, &db, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return -1;
    }
    fdt_device h = device("cuda", "NVIDIA", H100, "sm_90", 132, "GPU-h100");
    fdt_device m = device("hip", "AMD", MI250X, "gfx90a", 110, "GPU-mi250x");
    fdt_device m2 = device("hip", "AMD", MI210, "gfx90a", 104, "GPU-mi210");
    g_run_h100 = begin(db, &h, "fdtune --gpu H100 --R 4 --grid 256^3", 3000);
    g_run_mi = begin(db, &m, "fdtune --gpu MI250X --R 4 --grid 256^3", 1300);
    g_run_mi210 = begin(db, &m2, "fdtune --gpu MI210 --R 4 --grid 512^3", 1300);
    for (size_t i = 0; i < NTUNED; i++) {
        const tuned *t = &g_tuned[i];
        int64_t run = t->device == H100 ? g_run_h100 : t->device == MI250X ? g_run_mi
                                                                             : g_run_mi210;
        fdt_problem p = problem(t->op, t->n, t->n, t->n);
        add(db, run, p, t->slower, FDT_DB_OK, t->ms * 1.3);
        int64_t best = add(db, run, p, t->best, FDT_DB_OK, t->ms);
        /* faster, but wrong: never exported */
        add(db, run, p, g_wrong, FDT_DB_WRONG, t->ms * 0.5);
        /* The H100's lap 512^3 search was stopped by its time limit; the MI250X's d2z 256^3
         * search ended with its space spent (a decision, not cut short); the rest have no
         * decision (the smallest median): neither is cut short. */
        if (t->device == H100 && !strcmp(t->op, "lap") && t->n == 512)
            decide(db, &h, p, best, 1);
        if (t->device == MI250X && !strcmp(t->op, "d2z") && t->n == 256)
            decide(db, &m, p, best, 0);
    }
    /* Another H100 of the same model (other UUID), slower: one result per model and grid. */
    fdt_device h2 = device("cuda", "NVIDIA", H100, "sm_90", 132, "GPU-h100-b");
    int64_t run2 = begin(db, &h2, "fdtune --gpu H100 --R 4 --grid 256^3", 3000);
    add(db, run2, problem("lap", 256, 256, 256), "bx=128,by=1", FDT_DB_OK, 0.3);
    int64_t runs[] = {g_run_h100, g_run_mi, g_run_mi210, run2};
    for (size_t i = 0; i < 4; i++)
        if (fdt_db_run_finish(db, runs[i], FDT_DB_DONE, &e))
            fail_msg("%s", e.msg);
    fdt_db_close(db);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fdt_catalogue_free(g_cat);
    if (!getenv("FDT_TEST_KEEP"))
        tu_rmtree(g_dir);
    return 0;
}

/* The plan for --gpu mi250x --gpu "H100 SXM" (a catalogue name, not a substring of the
 * stored name), or for every device when all is set. */
static int make_plan(const char *const *gpus, int ngpus, unsigned ops, const int64_t (*grids)[3],
                     int ngrids, fdt_exp_plan **plan, fdt_err *e)
{
    fdt_db *db;
    if (fdt_db_open(g_db, FDT_DB_READONLY, &db, e))
        fail_msg("%s", e->msg);
    fdt_exp_opts o;
    fdt_exp_opts_init(&o);
    for (int i = 0; i < ngpus; i++)
        o.gpus[o.ngpus++] = gpus[i];
    o.ops = ops;
    o.Rs = 1u << 4;
    o.precs = 1u << FDT_F32;
    for (int i = 0; i < ngrids; i++) {
        memcpy(o.grids[i], grids[i], sizeof o.grids[i]);
        o.ngrids++;
    }
    o.cat = g_cat;
    o.fdtune_version = "0.1.0";
    o.command = "fdtune export --gpu mi250x --gpu 'H100 SXM' --R 4";
    int rc = fdt_exp_plan_make(&db, 1, &o, plan, e);
    fdt_db_close(db);
    return rc;
}

static const char *const TWO[] = {"mi250x", "H100 SXM"};

static fdt_exp_plan *two_device_plan(void)
{
    fdt_exp_plan *p;
    fdt_err e;
    if (make_plan(TWO, 2, 0, NULL, 0, &p, &e))
        fail_msg("%s", e.msg);
    return p;
}

static const tuned *find_tuned(const char *device, const char *op, int n)
{
    for (size_t i = 0; i < NTUNED; i++)
        if (!strcmp(g_tuned[i].device, device) && !strcmp(g_tuned[i].op, op) &&
            g_tuned[i].n == n)
            return &g_tuned[i];
    fail_msg("no tuned %s %s %d in the test table", device, op, n);
    return NULL;
}

/* ------------------------------------------------------------------ the plan */

static void test_plan(void **state)
{
    (void)state;
    fdt_exp_plan *p = two_device_plan();
    assert_int_equal(p->ndevices, 3); /* two H100s (one model) and the MI250X, not the MI210 */
    assert_int_equal(p->nfam, 2);
    assert_int_equal(p->fam[0].op, FDT_OP_D2Z);
    assert_int_equal(p->fam[1].op, FDT_OP_LAP);
    assert_string_equal(p->fam[1].name, "lap_r4_f32");
    for (size_t f = 0; f < p->nfam; f++) {
        assert_int_equal(p->fam[f].ntuned, 4);
        assert_int_equal(fdt_exp_family_nvariants(&p->fam[f]), 9);
        for (size_t t = 0; t < p->fam[f].ntuned; t++) {
            const fdt_exp_tuned *tu = &p->fam[f].tuned[t];
            const tuned *want = find_tuned(
                !strcmp(tu->row.device.name, H100) ? H100 : MI250X,
                fdt_op_name(tu->row.problem.op), (int)tu->row.problem.nx);
            assert_string_equal(tu->row.ev.config, want->key);
            assert_true(fabs(tu->row.ev.time_ms - want->ms) < 1e-9);
            assert_int_equal(tu->vconst, 1 + 2 * (int)t);
            assert_int_equal(tu->vruntime, 2 + 2 * (int)t);
        }
    }
    assert_int_equal(p->nruns, 2);
    assert_int_equal(p->runs[0], g_run_h100);
    assert_int_equal(p->runs[1], g_run_mi);
    /* per family: fallback + 4 constant + 4 runtime, no duplicates here */
    assert_int_equal(fdt_exp_kernel_count(p), 18);
    fdt_exp_plan_free(p);
}

/* ------------------------------------------------------------------ refusals */

static void test_refusal(void **state)
{
    (void)state;
    fdt_exp_plan *p = NULL;
    fdt_err e;
    const char *b200[] = {"H100", "B200"};
    assert_int_equal(make_plan(b200, 2, 0, NULL, 0, &p, &e), FDT_EXP_NOTHING);
    assert_null(p);
    assert_has(e.msg, "B200");
    assert_has(e.msg, "NVIDIA H100 80GB HBM3 (sm_90, 132 CUs)"); /* what it does hold */
    /* A catalogue name the database has never seen, of an architecture it holds nothing
     * of: the model's answers for its problems (predicted), nothing measured. */
    const char *mi300[] = {"MI300X"};
    assert_int_equal(make_plan(mi300, 1, 0, NULL, 0, &p, &e), 0);
    assert_int_equal(p->ndevices, 1);
    assert_int_equal(p->device_sources[0], FDT_DB_MODEL);
    assert_int_equal(p->nruns, 0);
    for (size_t f = 0; f < p->nfam; f++)
        for (size_t t = 0; t < p->fam[f].ntuned; t++) {
            assert_int_equal(p->fam[f].tuned[t].row.source, FDT_DB_MODEL);
            assert_string_equal(p->fam[f].tuned[t].row.device.arch, "gfx942");
        }
    assert_true(p->nfam > 0 && p->nnotes > 0);
    assert_has(p->notes[0], "PREDICTED by fdtune's model");
    fdt_exp_plan_free(p);
    /* Without a catalogue to describe it, nothing: the refusal names it. */
    fdt_db *db;
    if (fdt_db_open(g_db, FDT_DB_READONLY, &db, &e))
        fail_msg("%s", e.msg);
    fdt_exp_opts o;
    fdt_exp_opts_init(&o);
    o.gpus[o.ngpus++] = "NVIDIA A100";
    assert_int_equal(fdt_exp_plan_make(&db, 1, &o, &p, &e), FDT_EXP_NOTHING);
    assert_null(p);
    assert_has(e.msg, "--gpu NVIDIA A100: no device in");
    fdt_db_close(db);
    /* Known devices, unknown problem: wave was never tuned. */
    assert_int_equal(make_plan(TWO, 2, (1u << FDT_OP_LAP) | (1u << FDT_OP_WAVE), NULL, 0, &p,
                               &e), FDT_EXP_NOTHING);
    assert_has(e.msg, "no tuned wave R=4 f32");
    /* The MI210 has lap but no d2z. */
    const char *mi210[] = {"MI210"};
    assert_int_equal(make_plan(mi210, 1, 1u << FDT_OP_D2Z, NULL, 0, &p, &e), FDT_EXP_NOTHING);
    assert_has(e.msg, "no tuned d2z");
    /* A grid nobody tuned. */
    const int64_t g1024[][3] = {{1024, 1024, 1024}};
    assert_int_equal(make_plan(TWO, 2, 0, g1024, 1, &p, &e), FDT_EXP_NOTHING);
    assert_has(e.msg, "1024x1024x1024");
    /* ...while what exists is answered, restricted to it. */
    const int64_t g256[][3] = {{256, 256, 256}};
    assert_int_equal(make_plan(TWO, 2, 1u << FDT_OP_LAP, g256, 1, &p, &e), 0);
    assert_int_equal(p->nfam, 1);
    assert_int_equal(p->fam[0].ntuned, 2);
    fdt_exp_plan_free(p);
}

/* ------------------------------------------------------------------ device code */

static int compiler_ok(const fdt_rt_backend *b)
{
    char v[64];
    fdt_err e;
    return b && b->compiler_version(v, sizeof v, &e) == 0;
}

static void test_header_compiles(void **state)
{
    (void)state;
    fdt_exp_plan *p = two_device_plan();
    fdt_sb h;
    fdt_sb_init(&h);
    fdt_err e;
    if (fdt_exp_render_header(p, &h, &e))
        fail_msg("%s", e.msg);
    const char *text = fdt_sb_str(&h);
    /* Each kernel once; provenance present. */
    assert_int_equal(count(text, "FDTUNED_GLOBAL void "), fdt_exp_kernel_count(p));
    for (size_t f = 0; f < p->nfam; f++)
        for (size_t t = 0; t < p->fam[f].ntuned; t++) {
            char def[128];
            snprintf(def, sizeof def, "namespace %s_k {", p->fam[f].tuned[t].kconst);
            assert_int_equal(count(text, def), 1);
            assert_has(text, p->fam[f].tuned[t].row.ev.config); /* the key, in the table */
            /* the comments show the whole config: the provenance and the kernel's banner */
            char shown[FDT_CONFIG_DISPLAY_MAX], line[FDT_CONFIG_DISPLAY_MAX + 32];
            fdt_config_display(&p->fam[f].tuned[t].cfg, shown, sizeof shown);
            snprintf(line, sizeof line, " *       config %s\n", shown);
            assert_has(text, line);
            snprintf(line, sizeof line, "\n// Config: %s\n", shown);
            assert_has(text, line);
            snprintf(line, sizeof line, "\n// Config: %s\n", p->fam[f].tuned[t].row.ev.config);
            assert_null(strstr(text, line));
        }
    assert_has(text, g_db);
    assert_has(text, "runs: 1, 2");
    assert_has(text, "580.65.06");
    assert_has(text, "hiprtc 6.3");
    assert_has(text, "nvrtc 13.0");
    assert_has(text, fdt_gen_fingerprint());
    assert_has(text, "of copy");
    assert_int_equal(count(text, "#include <hip/hip_runtime.h>"), 1);
    /* The ring variant (lds=2) gets its dynamic shared memory at launch, after the opt-in;
     * its two kernels (grid baked in, grid as arguments) each: 8 tiles of 72 x 24 floats
     * (R + 1 + pf planes, x halo of whole vectors, y halo of R rows) */
    assert_int_equal(count(text, ", 55296)) != hipSuccess"), 2);
    assert_int_equal(count(text, "<<<grid, block, 55296, stream>>>"), 2);
    /* and the H100's lap 512^3 variant, the stream's bulk form (bulk=1): its two kernels'
     * rings are dynamic shared memory too, and each launch makes the kernel's tensor map of
     * its input (its last argument) first */
    assert_int_equal(count(text, "extern __shared__"), 4);
    assert_int_equal(count(text, "fdtuned_tensor_map(&tm, sh.esize, &map)"), 2);
    assert_int_equal(count(text, ", map);\n"), 2);
    assert_int_equal(count(text, "_k::fdt_tmap tmap)"), 2);
    /* The rules fdtune runs are in the header verbatim, once: no copies of its own. */
    static const char *const portable[] = {"fdtuned_layout.h", "fdtuned_geometry.h",
                                           "fdtuned_deploy.h", "fdtuned_model.h",
                                           "fdtuned_nearest.h"};
    for (size_t i = 0; i < sizeof portable / sizeof portable[0]; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/portable/%s", g_src, portable[i]);
        char *rule = tu_slurp(path);
        assert_int_equal(count(text, rule), 1);
        free(rule);
    }
    assert_int_equal(count(text, "static inline int fdtuned_layout_make("), 1);
    assert_int_equal(count(text, "static inline int fdtuned_geometry_make("), 1);

    int compiled = 0;
    static const struct {
        const char *backend, *arch;
    } targets[] = {{"hip", "gfx90a"}, {"cuda", "sm_90"}};
    for (size_t i = 0; i < 2; i++) {
        const fdt_rt_backend *b = fdt_rt_backend_find(targets[i].backend);
        if (!compiler_ok(b)) {
            fprintf(stderr, "note: %s compiler unavailable, %s not compiled\n",
                    targets[i].backend, targets[i].arch);
            continue;
        }
        fdt_rt_code code;
        /* The whole header is the program; any kernel names the resource report. */
        if (fdt_rt_compile(b, text, p->fam[1].tuned[0].kconst, targets[i].arch, 900000, &code,
                           &e))
            fail_msg("header for %s: %s", targets[i].arch, e.msg);
        assert_true(code.size > 0);
        fprintf(stderr, "note: header compiled for %s: %zu-byte code object\n", targets[i].arch, code.size);
        fdt_rt_code_free(&code);
        compiled++;
    }
    if (!compiled)
        fail_msg("neither hiprtc nor NVRTC is available: the header was not compiled");
    fdt_sb_free(&h);
    fdt_exp_plan_free(p);
}

/* ------------------------------------------------------------------ users' compilers */

/* What a user writes: allocate with the layout helper, launch, run a given variant. */
static const char USER_PROG[] =
    "#include \"fd_tuned.h\"\n"
    "#include <cstdio>\n"
    "#ifdef FDTUNED_CUDA\n#define ALLOC cudaMalloc\n#else\n#define ALLOC hipMalloc\n#endif\n"
    "int main()\n"
    "{\n"
    "    fdtuned_layout l;\n"
    "    float *in = 0, *out = 0;\n"
    "    if (fdtuned_lap_r4_f32_layout(256, 256, 256, &l))\n"
    "        return 1;\n"
    "    if (ALLOC((void **)&in, l.elems * sizeof(float)) != hipSuccess ||\n"
    "        ALLOC((void **)&out, l.elems * sizeof(float)) != hipSuccess)\n"
    "        return 2;\n"
    "    hipStream_t stream = 0;\n"
    "    hipError_t e = fdtuned_lap_r4_f32(out, in, 256, 256, 256, 1.0f, 0.5f, 0.25f, stream);\n"
    "    if (e == hipSuccess)\n"
    "        e = fdtuned_d2z_r4_f32_run(0, out, in, 300, 200, 100, 0.25f, stream);\n"
    "    std::printf(\"%d %d\\n\", (int)e, fdtuned_d2z_r4_f32_current(300, 300, 300));\n"
    "    return 0;\n"
    "}\n";

/* Runs a shell command in dir; 0 when it exits 0. The output goes to dir/log. */
static int sh(const char *dir, const char *cmd)
{
    char full[4096];
    snprintf(full, sizeof full, "cd '%s' && (%s) > log 2>&1", dir, cmd);
    return system(full);
}

/* The header with the compilers users have: nvcc (CUDA, through fdtune's mapping) and clang
 * in HIP mode (what hipcc drives on AMD; host and device passes, no device link, which would
 * need ROCm's device libraries). A compiler that cannot build a trivial program here is
 * skipped; one that can must build the user program without warnings. */
/* Builds program prog (C++) against header h in g_dir/tag with each of those compilers. */
static void user_compilers(const char *tag, const char *h, const char *prog)
{
    char dir[600], path[700], nvcc[600];
    snprintf(dir, sizeof dir, "%s/%s", g_dir, tag);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/fd_tuned.h", dir);
    spit(path, h);
    snprintf(path, sizeof path, "%s/user.cpp", dir);
    spit(path, prog);
    snprintf(path, sizeof path, "%s/probe_cuda.cpp", dir);
    spit(path, "#include <cstdio>\n__global__ void k(int *p) { *p = 1; }\n"
               "int main() { k<<<1, 1>>>(0); std::printf(\"x\"); return 0; }\n");
    snprintf(path, sizeof path, "%s/probe_hip.cpp", dir);
    spit(path, "#include <hip/hip_runtime.h>\n#include <cstdio>\n"
               "__global__ void k(int *p) { *p = 1; }\n"
               "int main() { k<<<1, 1>>>(0); std::printf(\"x\"); return 0; }\n");
    const char *env = getenv("NVCC");
    snprintf(nvcc, sizeof nvcc, "%s", env && *env ? env : "/usr/local/cuda/bin/nvcc");
    struct {
        const char *name;
        char cmd[2][1200];
    } comp[2];
    comp[0].name = "nvcc";
    for (int i = 0; i < 2; i++)
        snprintf(comp[0].cmd[i], sizeof comp[0].cmd[i],
                 "'%s' -std=c++17 -arch=sm_90 -Xcompiler -Wall,-Wextra,-Werror -x cu -c %s "
                 "-o out.o", nvcc, i ? "user.cpp" : "probe_cuda.cpp");
    comp[1].name = "clang HIP";
    static const char hip[] = "clang++ -x hip --offload-arch=gfx90a -nogpulib --rocm-path=/usr "
                              "-D__HIP_PLATFORM_AMD__ -Wall -Wextra -Werror";
    snprintf(comp[1].cmd[0], sizeof comp[1].cmd[0],
             "%s --cuda-host-only -c probe_hip.cpp -o probe.o && "
             "%s --cuda-device-only -emit-llvm -c probe_hip.cpp -o probe.bc", hip, hip);
    snprintf(comp[1].cmd[1], sizeof comp[1].cmd[1],
             "%s --cuda-host-only -c user.cpp -o host.o && "
             "%s --cuda-device-only -emit-llvm -c user.cpp -o device.bc", hip, hip);
    int built = 0;
    for (int c = 0; c < 2; c++) {
        if (sh(dir, comp[c].cmd[0]) != 0) {
            fprintf(stderr, "note: %s cannot build a trivial program here: skipped\n",
                    comp[c].name);
            continue;
        }
        if (sh(dir, comp[c].cmd[1]) != 0) {
            snprintf(path, sizeof path, "%s/log", dir);
            char *log = tu_slurp(path);
            fail_msg("%s: the user program does not build:\n%s\n%s", comp[c].name,
                     comp[c].cmd[1], log);
        }
        fprintf(stderr, "note: the user program builds with %s\n", comp[c].name);
        built++;
    }
    if (!built)
        fprintf(stderr, "note: neither nvcc nor clang's HIP mode is usable here: the header "
                        "was not compiled as users compile it\n");
}

static void test_user_compilers(void **state)
{
    (void)state;
    fdt_exp_plan *p = two_device_plan();
    fdt_sb h;
    fdt_sb_init(&h);
    fdt_err e;
    if (fdt_exp_render_header(p, &h, &e))
        fail_msg("%s", e.msg);
    user_compilers("user", fdt_sb_str(&h), USER_PROG);
    fdt_sb_free(&h);
    fdt_exp_plan_free(p);
}

/* ------------------------------------------------------------------ host-side selection */

/* A C/C++ program over the portable part: reads "family|device name|arch cus nx ny nz"
 * lines, prints the selected variant, the layout helper's answer and the selected variant's
 * launch geometry (launches, the grid and block of the first, the rows of the last). */
static const char SELECT_PROG[] =
    "#define FDTUNED_SELECT_ONLY 1\n"
    "#include \"fd_tuned.h\"\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "typedef struct fam {\n"
    "    const char *name;\n"
    "    const fdtuned_variant *v;\n"
    "    int n;\n"
    "    int (*select)(const char *, const char *, int, long, long, long);\n"
    "    int (*layout)(const char *, const char *, int, long, long, long, fdtuned_layout *);\n"
    "} fam;\n"
    "#define X(op, R, p, T) {#op \"_r\" #R \"_\" #p, fdtuned_##op##_r##R##_##p##_variants, \\\n"
    "    (int)(sizeof fdtuned_##op##_r##R##_##p##_variants / sizeof(fdtuned_variant)), \\\n"
    "    fdtuned_##op##_r##R##_##p##_select, fdtuned_##op##_r##R##_##p##_layout_for},\n"
    "static const fam fams[] = {FDTUNED_OPERATORS(X)};\n"
    "int main(void)\n"
    "{\n"
    "    char family[64], name[256], arch[64];\n"
    "    int cus;\n"
    "    long nx, ny, nz;\n"
    "    while (scanf(\" %63[^|]|%255[^|]|%63s %d %ld %ld %ld\", family, name, arch, &cus, &nx,\n"
    "                 &ny, &nz) == 7) {\n"
    "        const fam *f = NULL;\n"
    "        size_t i;\n"
    "        int v, rc;\n"
    "        fdtuned_layout l;\n"
    "        fdtuned_geometry g;\n"
    "        for (i = 0; i < sizeof fams / sizeof fams[0]; i++)\n"
    "            if (!strcmp(fams[i].name, family))\n"
    "                f = &fams[i];\n"
    "        if (!f) {\n"
    "            printf(\"nofamily\\n\");\n"
    "            continue;\n"
    "        }\n"
    "        v = f->select(name, arch, cus, nx, ny, nz);\n"
    "        rc = f->layout(name, arch, cus, nx, ny, nz, &l);\n"
    "        if (v < 0) {\n"
    "            printf(\"none %d\\n\", rc);\n"
    "            continue;\n"
    "        }\n"
    "        if (fdtuned_variant_geometry(&f->v[v], nx, ny, nz, &g) != 0)\n"
    "            return 1;\n"
    "        printf(\"%d %d %s %lld %lld %s| %d %lld %lld %lld %lld %d | %d %u %u %u %u %u %u %d \"\n"
    "               \"%d\\n\", v, f->v[v].kind, f->v[v].config, f->v[v].nx, f->v[v].eval,\n"
    "               f->v[v].device[0] ? f->v[v].device : \"-\", rc, l.line, l.slice, l.offset,\n"
    "               l.elems, l.align, g.nlaunch, g.launch[0].grid[0], g.launch[0].grid[1],\n"
    "               g.launch[0].grid[2], g.launch[0].block[0], g.launch[0].block[1],\n"
    "               g.launch[0].block[2], g.launch[g.nlaunch - 1].jbeg,\n"
    "               g.launch[g.nlaunch - 1].jend);\n"
    "    }\n"
    "    return 0;\n"
    "}\n";

typedef struct sel_case {
    const char *family, *name, *arch; /* the device asked about: name, arch, compute units */
    int cus;
    int64_t nx, ny, nz;
    int kind;             /* expected: 0 fallback, 1 constant, 2 runtime dims */
    const char *device;   /* the tuned result expected (kind 1, 2) */
    int n;                /* its tuned grid n^3 */
} sel_case;

/* One answer of SELECT_PROG. */
typedef struct sel_answer {
    int v, kind, rc, align, nlaunch;
    long long tnx, line, slice, offset, elems, eval;
    char config[200], device[200];
    unsigned grid[3], block[3];
    int jbeg, jend;
} sel_answer;

static void parse_answer(const char *line, const sel_case *k, size_t i, sel_answer *a)
{
    if (sscanf(line, "%d %d %199s %lld %lld %199[^|]| %d %lld %lld %lld %lld %d | %d %u %u %u "
                     "%u %u %u %d %d", &a->v, &a->kind, a->config, &a->tnx, &a->eval,
               a->device, &a->rc, &a->line, &a->slice, &a->offset, &a->elems, &a->align,
               &a->nlaunch, &a->grid[0], &a->grid[1], &a->grid[2], &a->block[0], &a->block[1],
               &a->block[2], &a->jbeg, &a->jend) != 21)
        fail_msg("case %zu (%s %s %d %lldx%lldx%lld): unexpected answer '%s'", i, k->family,
                 k->arch, k->cus, (long long)k->nx, (long long)k->ny, (long long)k->nz, line);
    size_t dl = strlen(a->device);
    while (dl && a->device[dl - 1] == ' ')
        a->device[--dl] = 0;
}

/* The layout and launch geometry the header computes for the selected config agree with
 * fdt_layout_make and fdt_gen_geometry (the same portable code, wrapped). */
static void check_layout_geometry(const sel_case *k, size_t i, const sel_answer *a,
                                  const char *key)
{
    fdt_config cfg;
    fdt_layout l;
    fdt_geometry g;
    fdt_err e;
    fdt_problem p = problem(k->family[0] == 'l' ? "lap" : "d2z", k->nx, k->ny, k->nz);
    if (fdt_config_parse(key, &cfg, &e) || fdt_layout_make(&p, cfg.align, &l, &e) ||
        fdt_gen_geometry(&p, &cfg, &g, &e))
        fail_msg("%s", e.msg);
    if (a->rc != 0 || a->line != l.line || a->slice != l.slice || a->offset != l.offset ||
        a->elems != l.elems || a->align != l.align)
        fail_msg("case %zu: layout rc %d line %lld slice %lld offset %lld elems %lld align %d, "
                 "generator: line %lld slice %lld offset %lld elems %lld align %d", i, a->rc,
                 a->line, a->slice, a->offset, a->elems, a->align, (long long)l.line,
                 (long long)l.slice, (long long)l.offset, (long long)l.elems, l.align);
    const fdt_launch *L0 = &g.launch[0], *Ln = &g.launch[g.nlaunch - 1];
    if (a->nlaunch != g.nlaunch || memcmp(a->grid, L0->grid, sizeof a->grid) ||
        memcmp(a->block, L0->block, sizeof a->block) || a->jbeg != Ln->jbeg ||
        a->jend != Ln->jend)
        fail_msg("case %zu: header geometry %d launches, grid %u %u %u, rows %d..%d; "
                 "generator %d launches, grid %u %u %u, rows %d..%d", i, a->nlaunch,
                 a->grid[0], a->grid[1], a->grid[2], a->jbeg, a->jend, g.nlaunch, L0->grid[0],
                 L0->grid[1], L0->grid[2], Ln->jbeg, Ln->jend);
}

/* fdt_db_nearest answers the case with the same tuned result (or none). */
static void check_db_agrees(const sel_case *k, size_t i, const sel_answer *a)
{
    fdt_db *db;
    fdt_err e;
    if (fdt_db_open(g_db, FDT_DB_READONLY, &db, &e))
        fail_msg("%s", e.msg);
    fdt_device dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "%s", k->name);
    snprintf(dev.arch, sizeof dev.arch, "%s", k->arch);
    dev.compute_units = k->cus;
    fdt_problem p = problem(k->family[0] == 'l' ? "lap" : "d2z", k->nx, k->ny, k->nz);
    fdt_db_row *row = malloc(sizeof *row);
    fdt_db_fallback which;
    assert_non_null(row);
    if (fdt_db_nearest(db, &dev, &p, NULL, row, &which, &e))
        fail_msg("%s", e.msg);
    fdt_db_close(db);
    long long want = which == FDT_DB_NEAREST_NONE ? 0 : (long long)row->ev.id;
    if (a->eval != want)
        fail_msg("case %zu (%s on '%s' %s %d CUs %lldx%lldx%lld): the header picks evaluation "
                 "%lld, fdt_db_nearest %lld (%s)", i, k->family, k->name, k->arch, k->cus,
                 (long long)k->nx, (long long)k->ny, (long long)k->nz, a->eval, want,
                 fdt_db_fallback_name(which));
    free(row);
}

static void check_answer(const char *compiler, const sel_case *k, size_t i, const sel_answer *a)
{
    char want_key[128];
    if (k->kind == 0)
        canon("default", want_key, sizeof want_key);
    else
        snprintf(want_key, sizeof want_key, "%s",
                 find_tuned(k->device, k->family[0] == 'l' ? "lap" : "d2z", k->n)->key);
    if (a->kind != k->kind || strcmp(a->config, want_key) ||
        (k->kind && (a->tnx != k->n || strcmp(a->device, k->device))))
        fail_msg("%s: case %zu (%s on '%s' %s %d CUs %lldx%lldx%lld): got variant %d kind %d "
                 "config %s tuned %lld on '%s', want kind %d config %s tuned %d on %s",
                 compiler, i, k->family, k->name, k->arch, k->cus, (long long)k->nx,
                 (long long)k->ny, (long long)k->nz, a->v, a->kind, a->config, a->tnx,
                 a->device, k->kind, want_key, k->n, k->kind ? k->device : "-");
    check_layout_geometry(k, i, a, want_key);
}

/* Compiles SELECT_PROG over the header with the host's C++ and C compilers and checks every
 * case; with compare_db (the header exports every device of the database), also that
 * fdt_db_nearest picks the same tuned result. */
static void run_selection(const char *header, const char *tag, const sel_case *cases,
                          size_t ncases, int compare_db)
{
    char dir[600], hdr[700], prog[700], in[700], out[700], cmd[4096];
    snprintf(dir, sizeof dir, "%s/%s", g_dir, tag);
    mkdir(dir, 0700);
    snprintf(hdr, sizeof hdr, "%s/fd_tuned.h", dir);
    spit(hdr, header);
    snprintf(prog, sizeof prog, "%s/select.c", dir);
    spit(prog, SELECT_PROG);
    snprintf(in, sizeof in, "%s/cases.txt", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    for (size_t i = 0; i < ncases; i++)
        fprintf(f, "%s|%s|%s %d %lld %lld %lld\n", cases[i].family, cases[i].name,
                cases[i].arch, cases[i].cus, (long long)cases[i].nx, (long long)cases[i].ny,
                (long long)cases[i].nz);
    fclose(f);

    /* The portable part is plain C++ and plain C: both compilers, warnings as errors. */
    static const char *const compilers[] = {
        "c++ -std=c++11 -x c++", "cc -std=c99 -x c"};
    for (size_t c = 0; c < 2; c++) {
        snprintf(out, sizeof out, "%s/out%zu.txt", dir, c);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && %s -Wall -Wextra -Wpedantic -Werror -O2 -o select%zu select.c "
                 "> build%zu.log 2>&1 && ./select%zu < cases.txt > '%s'",
                 dir, compilers[c], c, c, c, out);
        int st = system(cmd);
        if (st != 0) {
            char log[700];
            snprintf(log, sizeof log, "%s/build%zu.log", dir, c);
            char *l = tu_slurp(log);
            fail_msg("%s: exit %d\n%s", cmd, st, l);
        }
        char *text = tu_slurp(out);
        char *save = NULL, *line = strtok_r(text, "\n", &save);
        for (size_t i = 0; i < ncases; i++, line = strtok_r(NULL, "\n", &save)) {
            if (!line)
                fail_msg("%s: no answer for case %zu", compilers[c], i);
            sel_answer a;
            parse_answer(line, &cases[i], i, &a);
            check_answer(compilers[c], &cases[i], i, &a);
            if (compare_db && c == 0)
                check_db_agrees(&cases[i], i, &a);
        }
        free(text);
    }
}

static const char PCIE[] = "NVIDIA H100 PCIe";

static void test_select_host(void **state)
{
    (void)state;
    fdt_exp_plan *p = two_device_plan();
    fdt_sb h;
    fdt_sb_init(&h);
    fdt_err e;
    if (fdt_exp_render_header(p, &h, &e))
        fail_msg("%s", e.msg);
    static const sel_case cases[] = {
        /* exact device and grid: the constant kernel of that result */
        {"lap_r4_f32", H100, "sm_90", 132, 512, 512, 512, 1, H100, 512},
        {"lap_r4_f32", H100, "sm_90", 132, 256, 256, 256, 1, H100, 256},
        {"d2z_r4_f32", H100, "sm_90", 132, 512, 512, 512, 1, H100, 512},
        {"lap_r4_f32", MI250X, "gfx90a:sramecc+:xnack-", 110, 512, 512, 512, 1, MI250X, 512},
        {"d2z_r4_f32", MI250X, "gfx90a", 110, 256, 256, 256, 1, MI250X, 256},
        /* other grids: the runtime-dims kernel of the nearest tuned grid (by volume) */
        {"lap_r4_f32", H100, "sm_90", 132, 300, 300, 300, 2, H100, 256},
        {"lap_r4_f32", H100, "sm_90", 132, 450, 450, 450, 2, H100, 512},
        {"lap_r4_f32", H100, "sm_90", 132, 1024, 1024, 1024, 2, H100, 512},
        {"d2z_r4_f32", MI250X, "gfx90a", 110, 301, 203, 157, 2, MI250X, 256},
        {"lap_r4_f32", MI250X, "gfx90a:xnack-", 110, 400, 400, 400, 2, MI250X, 512},
        /* another model of the arch: still that arch's results, the nearest grid first */
        {"lap_r4_f32", PCIE, "sm_90", 114, 512, 512, 512, 1, H100, 512},
        {"lap_r4_f32", PCIE, "sm_90", 114, 200, 200, 200, 2, H100, 256},
        /* the nearest tuned configs cannot run the grid (nw 32 and 64 > nz 20): fallback */
        {"d2z_r4_f32", H100, "sm_90", 132, 600, 600, 20, 0, NULL, 0},
        /* MI250X lap 512 has split=2: with ny = 1 it cannot run; 256's config can */
        {"lap_r4_f32", MI250X, "gfx90a", 110, 2048, 1, 4096, 2, MI250X, 256},
        /* unknown architectures: the fallback */
        {"lap_r4_f32", "AMD Instinct MI300X", "gfx942", 304, 512, 512, 512, 0, NULL, 0},
        {"d2z_r4_f32", "NVIDIA A100", "sm_80", 108, 256, 256, 256, 0, NULL, 0},
        {"lap_r4_f32", H100, "sm_9", 132, 512, 512, 512, 0, NULL, 0},
        {"lap_r4_f32", MI250X, "gfx90", 110, 512, 512, 512, 0, NULL, 0},
    };
    run_selection(fdt_sb_str(&h), "two", cases, sizeof cases / sizeof cases[0], 0);
    fdt_sb_free(&h);
    fdt_exp_plan_free(p);

    /* Every device: the header and fdt_db_nearest answer alike. */
    if (make_plan(NULL, 0, 0, NULL, 0, &p, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(p->ndevices, 4);
    fdt_sb_init(&h);
    if (fdt_exp_render_header(p, &h, &e))
        fail_msg("%s", e.msg);
    static const sel_case all_cases[] = {
        /* rung 1 (this model, this grid) */
        {"lap_r4_f32", MI210, "gfx90a", 104, 512, 512, 512, 1, MI210, 512},
        {"lap_r4_f32", MI250X, "gfx90a", 110, 256, 256, 256, 1, MI250X, 256},
        /* rung 2 (this model, another grid) before rung 3 (another model, this grid) */
        {"lap_r4_f32", MI210, "gfx90a", 104, 256, 256, 256, 2, MI210, 512},
        /* rung 3: the grid first (256^3 is nearer 300^3 than 512^3), then the CU count */
        {"lap_r4_f32", "AMD Instinct MI250", "gfx90a", 104, 300, 300, 300, 2, MI250X, 256},
        {"lap_r4_f32", "AMD Instinct MI250", "gfx90a", 104, 512, 512, 512, 1, MI210, 512},
        {"lap_r4_f32", "AMD Instinct MI250", "gfx90a", 120, 512, 512, 512, 1, MI250X, 512},
        {"d2z_r4_f32", MI210, "gfx90a", 104, 512, 512, 512, 1, MI250X, 512}, /* no d2z */
        /* the same name with other compute units (a MIG slice, say) is another model */
        {"lap_r4_f32", H100, "sm_90", 66, 256, 256, 256, 1, H100, 256},
        {"lap_r4_f32", H100, "sm_90", 132, 256, 256, 256, 1, H100, 256},
        {"lap_r4_f32", H100, "sm_90", 132, 250, 260, 256, 2, H100, 256},
        /* nothing that can run it */
        {"d2z_r4_f32", H100, "sm_90", 132, 600, 600, 20, 0, NULL, 0},
        {"d2z_r4_f32", MI250X, "gfx90a", 110, 64, 64, 8, 0, NULL, 0},
        {"lap_r4_f32", "NVIDIA B200", "sm_100", 148, 512, 512, 512, 0, NULL, 0},
    };
    run_selection(fdt_sb_str(&h), "all", all_cases, sizeof all_cases / sizeof all_cases[0], 1);
    fdt_sb_free(&h);
    fdt_exp_plan_free(p);
}

/* The selection's codes, as the README's program tells them apart: FDTUNED_NO_VARIANT (-1) for a
 * grid no variant can run, FDTUNED_NO_DEVICE (-2) passed on by the layout helper when there
 * is no device to select for (what _current answers without a GPU), both distinct and
 * defined in the plain-C part (FDTUNED_SELECT_ONLY). */
static void test_select_codes(void **state)
{
    (void)state;
    fdt_exp_plan *p = two_device_plan();
    fdt_sb h;
    fdt_sb_init(&h);
    fdt_err e;
    if (fdt_exp_render_header(p, &h, &e))
        fail_msg("%s", e.msg);
    char dir[600], path[700], cmd[2048];
    snprintf(dir, sizeof dir, "%s/codes", g_dir);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/fd_tuned.h", dir);
    spit(path, fdt_sb_str(&h));
    snprintf(path, sizeof path, "%s/codes.c", dir);
    spit(path, "#define FDTUNED_SELECT_ONLY 1\n"
               "#include \"fd_tuned.h\"\n"
               "#include <stdio.h>\n"
               "int main(void)\n{\n"
               "    fdtuned_layout l;\n"
               "    printf(\"%d %d %d %d %d %d\\n\", FDTUNED_NO_VARIANT, FDTUNED_NO_DEVICE,\n"
               "           fdtuned_lap_r4_f32_select(\"x\", \"sm_90\", 132, 0, 512, 512),\n"
               "           fdtuned_lap_r4_f32_layout_for(\"x\", \"sm_90\", 132, 0, 512, 512, &l),\n"
               "           fdtuned_variant_layout(fdtuned_lap_r4_f32_variants,\n"
               "                                  FDTUNED_LAP_R4_F32_NVARIANTS, FDTUNED_NO_DEVICE,\n"
               "                                  512, 512, 512, &l),\n"
               "           fdtuned_lap_r4_f32_layout_for(\"x\", \"sm_90\", 132, 512, 512, 512, &l));\n"
               "    return 0;\n}\n");
    snprintf(cmd, sizeof cmd, "cd '%s' && cc -std=c99 -Wall -Wextra -Werror -o codes codes.c "
                              "> build.log 2>&1 && ./codes > out.txt", dir);
    if (system(cmd) != 0) {
        snprintf(path, sizeof path, "%s/build.log", dir);
        fail_msg("%s\n%s", cmd, tu_slurp(path));
    }
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *out = tu_slurp(path);
    assert_string_equal(out, "-1 -2 -1 -1 -2 0\n");
    free(out);
    fdt_sb_free(&h);
    fdt_exp_plan_free(p);
}

/* ------------------------------------------------------------------ JSON */

static void assert_json(const char *doc)
{
    long at;
    if (json_check(doc, &at))
        fail_msg("not one JSON document (fails near offset %ld):\n%s", at, doc);
}

static void test_json(void **state)
{
    (void)state;
    fdt_exp_plan *p = two_device_plan();
    fdt_sb j;
    fdt_sb_init(&j);
    fdt_err e;
    if (fdt_exp_render_json(p, &j, &e))
        fail_msg("%s", e.msg);
    const char *doc = fdt_sb_str(&j);
    assert_json(doc);
    assert_true(!strncmp(doc, "{\"schema\": 1, ", 14));
    assert_has(doc, "\"launcher\": \"fdtuned_lap_r4_f32\"");
    assert_has(doc, "\"launcher\": \"fdtuned_d2z_r4_f32\"");
    assert_int_equal(count(doc, "\"kind\": \"fallback\""), 2);
    assert_int_equal(count(doc, "\"kind\": \"constant\""), 8);
    assert_int_equal(count(doc, "\"kind\": \"runtime\""), 8);
    for (size_t i = 0; i < NTUNED; i++)
        if (g_tuned[i].device != MI210)
            assert_has(doc, g_tuned[i].key);
    assert_has(doc, "\"runs\": [1, 2]");
    /* the layout of a tuned grid, as the generator computes it */
    const tuned *t = find_tuned(H100, "lap", 512);
    fdt_config c;
    fdt_layout l;
    fdt_problem pr = problem("lap", 512, 512, 512);
    if (fdt_config_parse(t->key, &c, &e) || fdt_layout_make(&pr, c.align, &l, &e))
        fail_msg("%s", e.msg);
    char want[160];
    snprintf(want, sizeof want, "\"line\": %lld, \"slice\": %lld, \"offset\": %lld",
             (long long)l.line, (long long)l.slice, (long long)l.offset);
    assert_has(doc, want);

    /* cut_short: true in the measurement of both variants (constant, runtime) of the H100's
     * lap 512^3, whose search its time limit stopped; false in every other tuned variant,
     * decided (the MI250X's d2z 256^3) or not; the fallbacks have no measurement. Variants
     * stand one per line. */
    char cfg[200];
    snprintf(cfg, sizeof cfg, "\"config\": \"%s\"", t->key);
    int ntrue = 0, nfalse = 0;
    for (const char *line = doc; *line;) {
        size_t len = strcspn(line, "\n");
        char v[4096];
        assert_true(len < sizeof v);
        snprintf(v, sizeof v, "%.*s", (int)len, line);
        line += len + (line[len] == '\n');
        if (strstr(v, "\"cut_short\": true")) {
            ntrue++;
            if (!strstr(v, cfg) || !strstr(v, "\"device\": \"NVIDIA H100 80GB HBM3\"") ||
                !strstr(v, "\"grid\": [512, 512, 512]"))
                fail_msg("cut short, but not the H100's lap 512^3: %s", v);
        } else if (strstr(v, "\"cut_short\": false")) {
            nfalse++;
        } else if (strstr(v, "\"kind\": \"constant\"") || strstr(v, "\"kind\": \"runtime\"")) {
            fail_msg("a tuned variant without cut_short: %s", v);
        }
    }
    assert_int_equal(ntrue, 2);
    assert_int_equal(nfalse, 14);
    fdt_sb_free(&j);
    fdt_exp_plan_free(p);
}

/* ------------------------------------------------------------------ the command */

static void run(tu_result *r, ...)
{
    char *args[64];
    int n = 0;
    args[n++] = (char *)FDTUNE_BIN;
    va_list ap;
    va_start(ap, r);
    for (char *a; (a = va_arg(ap, char *)) && n < 63;)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    tu_run(r, g_dir, args);
}

static void test_command(void **state)
{
    (void)state;
    char path[600], missing[600];
    snprintf(path, sizeof path, "%s/cli_tuned.h", g_dir);
    snprintf(missing, sizeof missing, "%s/none.db", g_dir);
    tu_result r;
    run(&r, "export", "--db", g_db, "--gpu", "MI250X", "--gpu", "H100", "--R", "4", "-o", path,
        NULL);
    expect_status(&r, 0);
    assert_has(r.err, "wrote");
    char *h = tu_slurp(path);
    assert_has(h, "fdtuned_lap_r4_f32(float *out, const float *in, int nx, int ny, int nz, "
                  "float sx, float sy, float sz, hipStream_t stream)");
    assert_has(h, "fdtuned_d2z_r4_f32(float *out, const float *in, int nx, int ny, int nz, "
                  "float sz, hipStream_t stream)");
    assert_has(h, "command: fdtune export --db");
    free(h);
    tu_result_free(&r);

    run(&r, "export", "--db", g_db, "--gpu", "mi250x", "--op", "lap", "--format", "json", NULL);
    expect_status(&r, 0);
    assert_json(r.out);
    assert_has(r.out, "\"kind\": \"fdtune-export\"");
    tu_result_free(&r);

    /* refusals: exit 1, nothing written */
    snprintf(path, sizeof path, "%s/refused.h", g_dir);
    run(&r, "export", "--db", g_db, "--gpu", "B200", "-o", path, NULL);
    expect_status(&r, 1);
    assert_has(r.err, "B200");
    assert_true(access(path, F_OK) != 0);
    tu_result_free(&r);
    run(&r, "export", "--db", g_db, "--gpu", "H100", "--op", "wave", NULL);
    expect_status(&r, 1);
    assert_has(r.err, "no tuned wave");
    tu_result_free(&r);
    /* bad arguments: 2 */
    run(&r, "export", "--db", g_db, "--op", "curl", NULL);
    expect_status(&r, 2);
    tu_result_free(&r);
    run(&r, "export", "--db", g_db, "--format", "yaml", NULL);
    expect_status(&r, 2);
    tu_result_free(&r);
    run(&r, "export", "--db", g_db, "--R", "9", NULL);
    expect_status(&r, 2);
    tu_result_free(&r);
    /* no database: 4 */
    run(&r, "export", "--db", missing, NULL);
    expect_status(&r, 4);
    assert_has(r.err, "no tuning database");
    tu_result_free(&r);
    run(&r, "export", "--help", NULL);
    expect_status(&r, 0);
    assert_has(r.out, "exit status");
    tu_result_free(&r);
}

/* ------------------------------------------------------------------ dwave on the CPU */

/* This CPU's facts, as the CPU part's selection sees them. */
static void this_cpu(fdt_device *cpu)
{
    const fdt_rt_backend *b = fdt_rt_backend_find("cpu");
    fdt_err e;
    if (!b || b->device_info(0, cpu, &e))
        fail_msg("the CPU's facts: %s", b ? e.msg : "no cpu backend");
}

/* One tuned result of device dev, built by hand (the plan's rows are what the database would
 * give): its grid, config, kernel names (any distinct C names do) and place in the variant
 * table; cpu_tuned: of this CPU. */
static void tuned_on(fdt_exp_tuned *t, const fdt_device *dev, const fdt_problem *p,
                     const char *cfg, int index)
{
    fdt_err e;
    memset(t, 0, sizeof *t);
    t->row.device = *dev;
    t->row.problem = *p;
    t->row.ev.time_ms = 1.0 + index;
    snprintf(t->row.ev.config, sizeof t->row.ev.config, "%s", cfg);
    if (fdt_config_parse(cfg, &t->cfg, &e) || fdt_layout_make(p, t->cfg.align, &t->layout, &e))
        fail_msg("%s: %s", cfg, e.msg);
    fdt_gen_kernel_name(p, &t->cfg, t->kconst, sizeof t->kconst);
    snprintf(t->kruntime, sizeof t->kruntime, "test_%s_rt%d", fdt_op_name(p->op), index);
    t->vconst = 1 + 2 * index;
    t->vruntime = 2 + 2 * index;
}

static void cpu_tuned(fdt_exp_tuned *t, const fdt_problem *p, const char *cfg, int index)
{
    fdt_device cpu;
    this_cpu(&cpu);
    tuned_on(t, &cpu, p, cfg, index);
}

/* A CPU family of problem p's operator, radius, precision and layer with n tuned results;
 * a plan of it alone in *plan. */
static void cpu_plan(fdt_exp_plan *plan, fdt_exp_family *fam, const fdt_problem *p,
                     fdt_exp_tuned *res, size_t n)
{
    memset(fam, 0, sizeof *fam);
    fam->cpu = 1;
    fam->op = p->op;
    fam->R = p->R;
    fam->prec = p->prec;
    fam->absorb_w = p->absorb_w;
    fam->absorb_s = p->absorb_s;
    snprintf(fam->name, sizeof fam->name, "cpu_%s_r%d_%s", fdt_op_name(p->op), p->R,
             fdt_prec_name(p->prec));
    fdt_gen_target c = {FDT_DIALECT_C};
    fdt_config_fallback_for(&c, p, &fam->fallback);
    snprintf(fam->kfallback, sizeof fam->kfallback, "test_%s_fallback", fdt_op_name(p->op));
    fam->tuned = res;
    fam->ntuned = n;
    memset(plan, 0, sizeof *plan);
    snprintf(plan->generator, sizeof plan->generator, "%s", fdt_gen_fingerprint());
    plan->fam = fam;
    plan->nfam = 1;
}

/* Builds program `src` (under the source tree) against header h written as `header` in dir,
 * and runs it with `args`: its exit status, its output in *out (freed by the caller). */
static int build_run(const char *dir, const char *header, const char *h, const char *src,
                     const char *args, char **out)
{
    char path[700], cmd[2048];
    snprintf(path, sizeof path, "%s/%s", dir, header);
    spit(path, h);
    snprintf(cmd, sizeof cmd, "cd '%s' && cc -std=c99 -O1 -fopenmp -Wall -Wextra -Werror -I. "
                              "-o prog '%s/%s' -lm > build.log 2>&1", dir, FDT_SOURCE_DIR, src);
    if (system(cmd) != 0) {
        snprintf(path, sizeof path, "%s/build.log", dir);
        fail_msg("%s\n%s", cmd, tu_slurp(path));
    }
    snprintf(cmd, sizeof cmd, "cd '%s' && OMP_NUM_THREADS=2 ./prog %s > out.txt 2>&1", dir, args);
    int st = system(cmd);
    snprintf(path, sizeof path, "%s/out.txt", dir);
    *out = tu_slurp(path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A copy of text with the first `from` replaced by `to` (which must be there). */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (!at)
        fail_msg("'%s' is not in the text", from);
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1, pre = (size_t)(at - text);
    char *r = malloc(n);
    assert_non_null(r);
    snprintf(r, n, "%.*s%s%s", (int)pre, text, to, at + strlen(from));
    return r;
}

/* The dwave plan of the tests: sides with eta=array on 24x20x18 and inout with eta=dist on
 * 30x26x22, W=4, S=0.3, R=2, f32, both this CPU's. */
static void dwave_plan(fdt_exp_plan *plan, fdt_exp_family *fam, fdt_exp_tuned *res)
{
    fdt_problem p1 = {FDT_OP_DWAVE, 2, FDT_F32, 24, 20, 18, 4, 0.3};
    fdt_problem p2 = {FDT_OP_DWAVE, 2, FDT_F32, 30, 26, 22, 4, 0.3};
    cpu_tuned(&res[0], &p1, "deploy=sides,eta=array", 0);
    cpu_tuned(&res[1], &p2, "deploy=inout", 1);
    cpu_plan(plan, fam, &p1, res, 2);
}

/* The CPU header of dwave launches the chosen deployment: the dwave plan rendered and built
 * with cc (tests/data/dwave_header.c); on 24x20x18 the fallback (complete), both sides
 * variants and the inout runtime-dims variant each match a double-precision step at every
 * point and write nothing outside the interior, and the launcher picks the tuned sides
 * kernel. The same program fails on a header whose launchers skip the first box of every
 * deployment. */
static void test_dwave_header(void **state)
{
    (void)state;
    fdt_exp_plan plan;
    fdt_exp_family fam;
    fdt_exp_tuned res[2];
    dwave_plan(&plan, &fam, res);
    fdt_sb h;
    fdt_sb_init(&h);
    fdt_err e;
    if (fdt_exp_render_header(&plan, &h, &e))
        fail_msg("%s", e.msg);
    assert_has(fdt_sb_str(&h), "fdtuned_cpu_dwave_r2_f32_profile(int nx, int ny, int nz");
    char dir[600], *out = NULL;
    snprintf(dir, sizeof dir, "%s/dwave", g_dir);
    mkdir(dir, 0700);
    const char *prog = "tests/data/dwave_header.c", *args = "24 20 18 4 0.3";
    int st = build_run(dir, "fd_tuned.h", fdt_sb_str(&h), prog, args, &out);
    print_message("%s", out);
    if (st != 0)
        fail_msg("the dwave header's program failed (%d):\n%s", st, out);
    assert_has(out, "variant 0 (default): rc 0");
    assert_has(out, "variant 1 (deploy=sides,eta=array): rc 0");
    assert_has(out, "variant 2 (deploy=sides,eta=array): rc 0");
    assert_has(out, "variant 3: cannot run 24x20x18");
    assert_has(out, "variant 4 (deploy=inout): rc 0");
    assert_has(out, "picked 1\n");
    free(out);
    /* the same header with the first box of every deployment left out */
    char *bad = replaced(fdt_sb_str(&h), "for (i = 0; i < nbox; i++) {",
                         "for (i = 1; i < nbox; i++) {");
    assert_int_equal(build_run(dir, "fd_tuned.h", bad, prog, args, &out), 1);
    assert_has(out, "points off");
    free(out);
    free(bad);
    fdt_sb_free(&h);
}

/* export --driver's C API, run by the user program examples/dwave_driver.c on this CPU: N
 * steps with a point source through fdtd_step match N double-precision steps, for wave (the
 * fallback and a tuned loop nest) and for dwave (its tuned sides deployment with eta=array);
 * a driver whose p_prev never moves on fails the same program. A plan with no time-step
 * operator, or with a GPU's and a CPU's dwave (a hybrid step, not exported), is refused. */
static void test_driver(void **state)
{
    (void)state;
    fdt_exp_plan plan;
    fdt_exp_family fam;
    fdt_exp_tuned res[2];
    fdt_err e;
    char dir[600], *out = NULL;
    snprintf(dir, sizeof dir, "%s/driver", g_dir);
    mkdir(dir, 0700);
    const char *prog = "examples/dwave_driver.c";
    /* wave: 20x18x16 tuned; the program runs it and another grid (the fallback) */
    fdt_problem w = {FDT_OP_WAVE, 3, FDT_F32, 20, 18, 16};
    cpu_tuned(&res[0], &w, "loop=jk", 0);
    cpu_plan(&plan, &fam, &w, res, 1);
    fdt_sb h;
    fdt_sb_init(&h);
    if (fdt_exp_render_driver(&plan, &h, &e))
        fail_msg("%s", e.msg);
    assert_has(fdt_sb_str(&h), "static inline int fdtd_step(fdtd_real src)");
    int st = build_run(dir, "fdtd.h", fdt_sb_str(&h), prog, "20 18 16 40", &out);
    print_message("%s", out);
    if (st != 0)
        fail_msg("the driver's program failed (%d):\n%s", st, out);
    assert_has(out, "variant 1 (loop=jk): 40 steps");
    assert_has(out, ": ok\n");
    free(out);
    st = build_run(dir, "fdtd.h", fdt_sb_str(&h), prog, "17 21 19 30", &out);
    if (st != 0)
        fail_msg("the driver's program failed (%d):\n%s", st, out);
    assert_has(out, "variant 2 (loop=jk)");
    free(out);
    /* p_prev that never moves on: the program sees it */
    char *bad = replaced(fdt_sb_str(&h),
                         "t = fdtd_s.p_prev;\n    fdtd_s.p_prev = fdtd_s.p;\n    "
                         "fdtd_s.p = fdtd_s.p_next;\n    fdtd_s.p_next = t;",
                         "t = fdtd_s.p;\n    fdtd_s.p = fdtd_s.p_next;\n    fdtd_s.p_next = t;");
    assert_int_equal(build_run(dir, "fdtd.h", bad, prog, "20 18 16 40", &out), 1);
    assert_has(out, "WRONG");
    free(out);
    free(bad);
    fdt_sb_free(&h);
    /* nothing to step: a lap plan */
    fdt_problem l = {FDT_OP_LAP, 3, FDT_F32, 20, 18, 16};
    cpu_plan(&plan, &fam, &l, res, 0);
    fdt_sb_init(&h);
    assert_int_equal(fdt_exp_render_driver(&plan, &h, &e), FDT_EXP_NOTHING);
    assert_has(e.msg, "no time-step operator");
    fdt_sb_free(&h);
    /* dwave through the driver: the tuned sides deployment */
    dwave_plan(&plan, &fam, res);
    fdt_sb_init(&h);
    if (fdt_exp_render_driver(&plan, &h, &e))
        fail_msg("%s", e.msg);
    st = build_run(dir, "fdtd.h", fdt_sb_str(&h), prog, "24 20 18 60", &out);
    print_message("%s", out);
    if (st != 0)
        fail_msg("the dwave driver's program failed (%d):\n%s", st, out);
    assert_has(out, "dwave R=2 W=4 S=0.3 on 24x20x18, variant 1 (deploy=sides,eta=array)");
    assert_has(out, ": ok\n");
    free(out);
    fdt_sb_free(&h);
    /* a GPU's dwave beside the CPU's: a hybrid plan */
    fdt_exp_family two[2];
    two[0] = fam;
    two[1] = fam;
    two[1].cpu = 0;
    two[1].ntuned = 0;
    snprintf(two[1].name, sizeof two[1].name, "dwave_r2_f32");
    plan.fam = two;
    plan.nfam = 2;
    fdt_sb_init(&h);
    assert_int_equal(fdt_exp_render_driver(&plan, &h, &e), FDT_EXP_REFUSED);
    assert_has(e.msg, "hybrid plan");
    assert_int_equal(h.len, 0);
    fdt_sb_free(&h);
}

/* `fdtune export --driver` as users call it, on the recorded H100 database (wave R=4 in f32
 * and f64, no dwave): one wave writes the header and the driver (exit 0); both precisions are
 * two operators to step (exit 2, naming them), lap none (exit 1), --format json a usage
 * error (exit 2); a refused request leaves the output file as it was. */
static void test_driver_command(void **state)
{
    (void)state;
    char db[1200], path[600];
    snprintf(db, sizeof db, "%s/tests/data/h100-replay.db", g_src);
    snprintf(path, sizeof path, "%s/fdtd.h", g_dir);
    tu_result r;
    run(&r, "export", "--db", db, "--no-system-db", "--op", "wave", "--precision", "f32",
        "--grid", "256^3", "--driver", "-o", path, NULL);
    expect_status(&r, 0);
    char *h = tu_slurp(path);
    assert_has(h, "hipError_t fdtuned_wave_r4_f32(");
    assert_has(h, "static inline int fdtd_step(fdtd_real src)");
    assert_has(h, "#define FDTD_OP \"wave\"");
    free(h);
    tu_result_free(&r);
    run(&r, "export", "--db", db, "--no-system-db", "--op", "wave", "--driver", "-o", path,
        NULL);
    expect_status(&r, 2);
    assert_has(r.err, "2 time-step operators (wave R=4 f32, wave R=4 f64)");
    tu_result_free(&r);
    h = tu_slurp(path);
    assert_has(h, "#define FDTD_OP \"wave\""); /* untouched */
    free(h);
    run(&r, "export", "--db", db, "--no-system-db", "--op", "lap", "--driver", "-o", path, NULL);
    expect_status(&r, 1);
    assert_has(r.err, "no time-step operator");
    tu_result_free(&r);
    run(&r, "export", "--db", db, "--driver", "--format", "json", NULL);
    expect_status(&r, 2);
    assert_has(r.err, "--driver writes C code");
    tu_result_free(&r);
}

/* A user's HIP/CUDA program of the GPU dwave header with its driver. */
static const char DWAVE_GPU_PROG[] =
    "#include \"fd_tuned.h\"\n"
    "#include <cstdio>\n"
    "int main()\n{\n"
    "    float *f = 0;\n"
    "    hipStream_t stream = 0;\n"
    "    hipError_t e = fdtuned_dwave_r2_f32(f, f, f, f, f, 96, 80, 64, 1.0f, 1.0f, 1.0f, 9, 9, "
    "9, 1.0f,\n"
    "                                        stream);\n"
    "    if (fdtd_init(96, 80, 64, 1.0f, 1.0f, 1.0f) == 0) {\n"
    "        e = (hipError_t)fdtd_step(1.0f);\n"
    "        fdtd_finalize();\n"
    "    }\n"
    "    std::printf(\"%d\\n\", (int)e);\n"
    "    return 0;\n"
    "}\n";

/* The GPU part of a dwave export: a plan of H100 results (inout on 96x80x64, sides with
 * eta=array and a ring of planes (lds=2) on 128^3; W=6, S=0.2, R=2, f32) rendered with its
 * driver. Its kernels are each
 * source's two (damped and interior), its portable part (plain C, FDTUNED_SELECT_ONLY) gives
 * each variant's deployment the boxes fdt_gen_deploy gives (1 complete, 2 inout, 7 sides, the
 * hole aligned as fdtune aligns it), and a user program of the launcher and the driver builds
 * with nvcc and clang's HIP mode where they work. Running it needs a GPU. */
static void test_dwave_gpu_header(void **state)
{
    (void)state;
    fdt_device h100;
    memset(&h100, 0, sizeof h100);
    snprintf(h100.name, sizeof h100.name, "%s", H100);
    snprintf(h100.arch, sizeof h100.arch, "sm_90");
    snprintf(h100.backend, sizeof h100.backend, "cuda");
    h100.compute_units = 132;
    fdt_problem p1 = {FDT_OP_DWAVE, 2, FDT_F32, 96, 80, 64, 6, 0.2};
    fdt_problem p2 = {FDT_OP_DWAVE, 2, FDT_F32, 128, 128, 128, 6, 0.2};
    fdt_exp_tuned res[2];
    tuned_on(&res[0], &h100, &p1, "bx=32,by=4,deploy=inout", 0);
    tuned_on(&res[1], &h100, &p2, "bx=64,by=4,deploy=sides,eta=array,nw=4,lds=2", 1);
    fdt_exp_plan plan;
    fdt_exp_family fam;
    cpu_plan(&plan, &fam, &p1, res, 2);
    fam.cpu = 0;
    snprintf(fam.name, sizeof fam.name, "dwave_r2_f32");
    fdt_config_fallback(&p1, &fam.fallback);
    fdt_sb h;
    fdt_sb_init(&h);
    fdt_err e;
    if (fdt_exp_render_driver(&plan, &h, &e))
        fail_msg("%s", e.msg);
    const char *text = fdt_sb_str(&h);
    /* three sources, two kernels each */
    assert_int_equal(count(text, "FDTUNED_GLOBAL void "), 2 * (int)fdt_exp_kernel_count(&plan));
    assert_has(text, "if (B->damped)");
    /* the ring (lds=2) opts both kernels of each of its sources in to its shared memory */
    assert_int_equal(count(text, "fdtuned_allow_shared((const void *)"), 4);
    /* the portable part's deployments against the generator's */
    char dir[600], path[700], cmd[1400];
    snprintf(dir, sizeof dir, "%s/dwave_gpu", g_dir);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/fd_tuned.h", dir);
    spit(path, text);
    snprintf(path, sizeof path, "%s/boxes.c", dir);
    spit(path, "#define FDTUNED_SELECT_ONLY 1\n#include \"fd_tuned.h\"\n#include <stdio.h>\n"
               "int main(void)\n{\n    fdtuned_box b[FDTUNED_DEPLOY_MAX];\n"
               "    fdtuned_geometry g[FDTUNED_DEPLOY_MAX];\n"
               "    for (int v = 0; v < FDTUNED_DWAVE_R2_F32_NVARIANTS; v++) {\n"
               "        int n = fdtuned_dwave_r2_f32_boxes(v, 96, 80, 64, b, g);\n"
               "        printf(\"%d:%d\", v, n);\n"
               "        for (int i = 0; i < n; i++)\n"
               "            printf(\" %lld,%lld,%lld/%lld,%lld,%lld/%lld,%lld,%lld,%lld,%lld,"
               "%lld/%d/%d\", b[i].g[0], b[i].g[1],\n"
               "                   b[i].g[2], b[i].n[0], b[i].n[1], b[i].n[2], b[i].hole[0], "
               "b[i].hole[1],\n"
               "                   b[i].hole[2], b[i].hole[3], b[i].hole[4], b[i].hole[5], "
               "b[i].damped, g[i].nlaunch);\n"
               "        printf(\"\\n\");\n    }\n    return 0;\n}\n");
    snprintf(cmd, sizeof cmd, "cd '%s' && cc -std=c99 -Wall -Wextra -Werror -o boxes boxes.c > "
                              "build.log 2>&1 && ./boxes > out.txt", dir);
    if (system(cmd) != 0) {
        snprintf(path, sizeof path, "%s/build.log", dir);
        fail_msg("%s\n%s", cmd, tu_slurp(path));
    }
    snprintf(path, sizeof path, "%s/out.txt", dir);
    char *out = tu_slurp(path);
    fdt_sb want;
    fdt_sb_init(&want);
    fdt_gen_target hip = {FDT_DIALECT_HIP};
    for (int v = 0; v < 5; v++) {
        const fdt_config *c = v == 0 ? &fam.fallback : &res[(v - 1) / 2].cfg;
        fdt_deploy d;
        if (v == 3) { /* the constant kernel of 128^3 cannot run 96x80x64 */
            fdt_sb_printf(&want, "3:-1\n");
            continue;
        }
        if (fdt_gen_deploy(&hip, &p1, c, &d, &e))
            fail_msg("variant %d: %s", v, e.msg);
        fdt_sb_printf(&want, "%d:%d", v, d.nbox);
        for (int i = 0; i < d.nbox; i++) {
            const fdtuned_box *b = &d.box[i];
            fdt_sb_printf(&want, " %lld,%lld,%lld/%lld,%lld,%lld/%lld,%lld,%lld,%lld,%lld,%lld/"
                                 "%d/%d", b->g[0], b->g[1], b->g[2], b->n[0], b->n[1], b->n[2],
                          b->hole[0], b->hole[1], b->hole[2], b->hole[3], b->hole[4],
                          b->hole[5], b->damped, d.geo[i].nlaunch);
        }
        fdt_sb_puts(&want, "\n");
    }
    print_message("%s", out);
    assert_string_equal(out, fdt_sb_str(&want));
    assert_has(out, "\n1:2 ");
    assert_has(out, "\n2:2 ");
    assert_has(out, "\n4:7 ");
    free(out);
    fdt_sb_free(&want);
    user_compilers("dwave_user", text, DWAVE_GPU_PROG);
    fdt_sb_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan),
        cmocka_unit_test(test_refusal),
        cmocka_unit_test(test_select_host),
        cmocka_unit_test(test_select_codes),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_command),
        cmocka_unit_test(test_header_compiles),
        cmocka_unit_test(test_user_compilers),
        cmocka_unit_test(test_dwave_header),
        cmocka_unit_test(test_driver),
        cmocka_unit_test(test_dwave_gpu_header),
        cmocka_unit_test(test_driver_command),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
