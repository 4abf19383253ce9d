/* Tests of recipes and the GPU catalogue (CPU only): the shipped recipes and catalogue load
 * and give sensible spaces; every class of mistake is reported at its exact file:line; the
 * sandbox refuses I/O, code loading and binary chunks and stops endless loops, memory hogs
 * and endless work in C library calls (a time limit, bounded patterns and tables); pruning
 * counts and enumeration order are exact; modules (`include`) are found along the search
 * path, run once in the same sandbox, report their own file:line and take part in the
 * recipe's hash, and are never taken for recipes; catalogue lookups follow the
 * name-then-arch rule. Small recipes are written to a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <lauxlib.h>
#include <lua.h>

#include "fdt_recipe.h"
#include "testutil.h"

static char tmpdir[256];
static char srcdir[1024];
static fdt_recipe_limits small;
/* The default limits but half a second of CPU time, to load and to walk: recipes that
 * never stop meet this limit first. */
static fdt_recipe_limits quick;

static void assert_prefix(const char *msg, const char *prefix)
{
    if (strncmp(msg, prefix, strlen(prefix)) != 0)
        fail_msg("expected a message starting with \"%s\", got \"%s\"", prefix, msg);
}

static void assert_contains(const char *msg, const char *part)
{
    if (!strstr(msg, part))
        fail_msg("expected \"%s\" in \"%s\"", part, msg);
}

static void write_file(const char *name, const char *text, size_t len, char *path, size_t n)
{
    fdt_err e;
    snprintf(path, n, "%s/%s", tmpdir, name);
    if (fdt_write_file_atomic(path, text, len, &e))
        fail_msg("%s", e.msg);
}

/* Writes `text` as tmpdir/name and loads it with the limits lim. */
static int load_with(const char *name, const char *text, const fdt_recipe_limits *lim,
                     fdt_recipe **r, fdt_err *e)
{
    char path[512];
    write_file(name, text, strlen(text), path, sizeof path);
    return fdt_recipe_load(path, lim, r, e);
}

/* Writes `text` as tmpdir/name and loads it with the small limits. */
static int load(const char *name, const char *text, fdt_recipe **r, fdt_err *e)
{
    return load_with(name, text, &small, r, e);
}

/* Loading must fail with a message starting with `prefix`. */
static void load_fails(const char *text, const char *prefix, const char *part)
{
    fdt_recipe *r = NULL;
    fdt_err e = {{0}};
    if (load("bad.lua", text, &r, &e) == 0) {
        fdt_recipe_free(r);
        fail_msg("recipe loaded, expected \"%s\"", prefix);
    }
    assert_null(r);
    assert_prefix(e.msg, prefix);
    if (part)
        assert_contains(e.msg, part);
}

static fdt_problem problem(fdt_op op, int R, fdt_prec prec, int64_t n)
{
    fdt_problem p = {op, R, prec, n, n, n};
    return p;
}

/* A dwave problem on n^3 with an absorbing layer of width W (strength 0.1). */
static fdt_problem dwave_problem(int R, fdt_prec prec, int64_t n, int W)
{
    fdt_problem p = problem(FDT_OP_DWAVE, R, prec, n);
    p.absorb_w = W;
    p.absorb_s = 0.1;
    return p;
}

/* A device described by hand: NVIDIA-like, 100 SMs. */
static fdt_device test_device(void)
{
    fdt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.vendor, sizeof d.vendor, "NVIDIA");
    snprintf(d.name, sizeof d.name, "test GPU");
    snprintf(d.arch, sizeof d.arch, "sm_90");
    d.compute_units = 100;
    d.warp_size = 32;
    d.max_threads_per_block = 1024;
    d.shared_per_block = d.shared_per_block_optin = 48 * 1024;
    d.l2_bytes = d.llc_bytes = 50 << 20;
    d.mem_bytes = 80LL << 30;
    d.peak_bw_gbs = 3350;
    return d;
}

/* Enumerates r for the small problem most tests use (d2x, R=4, f32, 64^3) on test_device. */
static int walk_small(fdt_recipe *r, fdt_recipe_visit visit, void *ctx, fdt_recipe_stats *st,
                      fdt_err *e)
{
    fdt_problem p = problem(FDT_OP_D2X, 4, FDT_F32, 64);
    fdt_device d = test_device();
    return fdt_recipe_enumerate(r, &p, &d, visit, ctx, st, e);
}

/* Enumeration must fail with a message starting with `prefix`. */
static void enumerate_fails(const char *text, const char *prefix, const char *part)
{
    fdt_recipe *r = NULL;
    fdt_err e = {{0}};
    if (load("bad.lua", text, &r, &e))
        fail_msg("load: %s", e.msg);
    fdt_recipe_stats st;
    int rc = walk_small(r, NULL, NULL, &st, &e);
    fdt_recipe_free(r);
    if (rc == 0)
        fail_msg("enumeration succeeded, expected \"%s\"", prefix);
    assert_prefix(e.msg, prefix);
    if (part)
        assert_contains(e.msg, part);
}

static fdt_catalogue *catalogue(void)
{
    char path[1100];
    fdt_err e;
    fdt_catalogue *c;
    snprintf(path, sizeof path, "%s/recipes/gpus.lua", srcdir);
    if (fdt_catalogue_load(path, &c, &e))
        fail_msg("%s", e.msg);
    return c;
}

static fdt_recipe *shipped(const char *name)
{
    char path[1100];
    fdt_err e;
    fdt_recipe *r;
    snprintf(path, sizeof path, "%s/recipes/%s", srcdir, name);
    if (fdt_recipe_load(path, NULL, &r, &e))
        fail_msg("%s", e.msg);
    return r;
}

/* ---------------------------------------------------------------- shipped files */

typedef struct collect {
    int n;
    uint64_t last;
    int ordered;
    const fdt_problem *p;
    const fdt_device *dev;
    int bad;
} collect;

static int collect_visit(void *ctx, const fdt_config *c, uint64_t index)
{
    collect *k = ctx;
    fdt_err e;
    if (k->n && index <= k->last)
        k->ordered = 0;
    k->last = index;
    k->n++;
    /* Every survivor must be producible and obey the shipped rules. */
    if (fdt_config_check(k->p, c, &e) || c->bx % k->dev->warp_size ||
        c->lb != c->bx * c->by * c->bz || (c->align != 1 && c->align != k->dev->warp_size))
        k->bad++;
    return 0;
}

/* A survivor of cpu.lua must be one the C dialect generates. */
static int cpu_visit(void *ctx, const fdt_config *c, uint64_t index)
{
    collect *k = ctx;
    const fdt_gen_target cpu = {FDT_DIALECT_C};
    fdt_err e;
    (void)index;
    k->n++;
    if (fdt_config_check_for(&cpu, k->p, c, &e))
        k->bad++;
    return 0;
}

static void test_shipped_recipes(void **state)
{
    (void)state;
    static const struct {
        const char *file, *name;
        fdt_op op;
        /* survivors on an H100 at 512^3, R=4, f32 (recipes/README.md); lap and wave lost 124
         * and 262 ring configs when shared_bytes(c) began counting pf (their rings exceed
         * the opt-in limit; before, they passed the recipe and were pruned after compiling);
         * lds=3 (the stream) added 156 to each (4706 -> 4862, 4508 -> 4664). The spaces grew by
         * split = 8, 16 (d2z 25920 -> 43200) and by lds=3 (lap 653184 -> 1451520 with both):
         * the H100's split survivors are those of before, since its 50 MB refuse every split.
         * The fill rule's one block per unit for 512-thread blocks added 118 to lap and 40 to
         * wave (blocks of 512 threads or more, 132 to 263 of them on the H100's 132 units).
         * by = 16 grew the lap space to 1814400; it serves the stream from R=6 on only, as
         * bx = 16 (2268000), with by = 16 only, so neither adds an R=4 survivor; mbar (the
         * stream's slot barriers, from R=5 on) doubles it to 4536000, adding none either; bulk
         * (the stream's bulk copies, with the slot barriers at every radius on sm_90) doubles
         * it to 9072000 and adds 296 to lap (4980 -> 5276) and 228 to wave (4704 -> 4932);
         * the tensor copies' box of at most 256 values a side (bulk=1 by one tensor copy a
         * plane) refuses 104 of them for lap (5172) and 42 for wave (4890). A block for 7 units in
         * 8 where one a unit is the rule (blocks of 512 threads, 116 of the 132 units) adds 148
         * to lap (5320) and 50 to wave (4940). guard (the stream's unguarded stores, on whole
         * blocks) doubles the space to 18144000 and adds 510 to lap (5830) and 404 to wave
         * (5344). */
        uint64_t space, survivors;
        const char *strategy;
        const char *def;
    } want[] = {
        {"d2x.lua", "d2x", FDT_OP_D2X, 1440, 342, "exhaustive", "bx=256,by=1,lb=256"},
        {"d2y.lua", "d2y", FDT_OP_D2Y, 2880, 900, "exhaustive", "lb=256"},
        {"d2z.lua", "d2z", FDT_OP_D2Z, 43200, 2460, "model", "by=8,lb=512"},
        {"lap.lua", "lap", FDT_OP_LAP, 18144000, 5830, "model", "lb=256,lds=1,nw=32"},
        {"lap.lua", "lap", FDT_OP_WAVE, 18144000, 5344, "model", "lb=256,lds=1,nw=32"},
    };
    fdt_catalogue *cat = catalogue();
    fdt_device h100;
    fdt_err e;
    assert_int_equal(fdt_catalogue_find(cat, "H100", NULL, 0, &h100, &e), 0);
    assert_string_equal(h100.name, "H100 SXM");
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fdt_recipe *r = shipped(want[i].file);
        assert_string_equal(fdt_recipe_name(r), want[i].name);
        assert_int_equal(strlen(fdt_recipe_hash(r)), 16);
        assert_true(fdt_recipe_serves(r, want[i].op));
        assert_int_equal(fdt_recipe_space_size(r), want[i].space);
        assert_string_equal(fdt_recipe_strategy(r), want[i].strategy);
        assert_true(fdt_recipe_budget(r) > 0);
        fdt_problem p = problem(want[i].op, 4, FDT_F32, 512);
        collect k = {0, 0, 1, &p, &h100, 0};
        fdt_recipe_stats st;
        if (fdt_recipe_enumerate(r, &p, &h100, collect_visit, &k, &st, &e))
            fail_msg("%s: %s", want[i].file, e.msg);
        assert_int_equal(st.space, want[i].space);
        assert_int_equal(st.visited, want[i].space);
        assert_int_equal(st.survivors, (uint64_t)k.n);
        assert_int_equal(st.survivors, want[i].survivors);
        assert_true(k.ordered);
        assert_int_equal(k.bad, 0);
        /* Exhaustive search must stay affordable (an H100 measured about 30 candidates a
         * second at 512^3, so 5000 is under 3 minutes), and the space must not collapse; the
         * model strategy measures its budget alone, and ranks up to twice that many. */
        if (k.n < 200 || k.n > (strcmp(want[i].strategy, "model") ? 5000 : 10000))
            fail_msg("%s: %d survivors for %s on H100", want[i].file, k.n,
                     fdt_op_name(want[i].op));
        uint64_t pruned = 0;
        for (int j = 0; j < st.nprune; j++)
            pruned += st.prune[j].count;
        assert_int_equal(pruned + st.survivors, st.space);
        fdt_config c;
        char key[256], why[256];
        assert_int_equal(fdt_recipe_default_config(r, &p, &h100, &c, &e), 0);
        fdt_config_format(&c, key, sizeof key);
        assert_string_equal(key, want[i].def);
        if (fdt_recipe_check(r, &p, &h100, &c, why, sizeof why, &e) != 1)
            fail_msg("%s: default %s rejected: %s", want[i].file, key, why);
        /* The recipe for an operator it does not serve refuses. */
        fdt_problem other = problem(want[i].op == FDT_OP_D2X ? FDT_OP_D2Y : FDT_OP_D2X, 4,
                                    FDT_F32, 64);
        assert_int_equal(fdt_recipe_enumerate(r, &other, &h100, NULL, NULL, NULL, &e), -1);
        assert_contains(e.msg, "not for");
        fdt_recipe_free(r);
    }
    fdt_catalogue_free(cat);
}

/* recipes/cpu.lua: the C dialect's space, small enough to tune one operator at 256^3 in
 * 3 minutes on 2 cores (5 to 33 candidates, the loop nest among them), every survivor one
 * the C dialect generates, the plain loop nest its default; a recipe mixing dialects is
 * refused at its line. */
static void test_cpu_recipe(void **state)
{
    (void)state;
    static const struct {
        fdt_op op;
        uint64_t survivors;
    } want[] = {{FDT_OP_D2X, 13}, {FDT_OP_D2Y, 5}, {FDT_OP_D2Z, 33}, {FDT_OP_LAP, 33},
                {FDT_OP_WAVE, 33}};
    const fdt_gen_target cpu = {FDT_DIALECT_C};
    fdt_recipe *r = shipped("cpu.lua");
    assert_int_equal(fdt_recipe_dialect(r), FDT_DIALECT_C);
    assert_string_equal(fdt_recipe_strategy(r), "exhaustive");
    assert_int_equal(fdt_recipe_space_size(r), 1440); /* 240 x dwave's 3 deploy x 2 eta */
    fdt_device d = test_device();
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        for (int prec = 0; prec < 2; prec++) {
            fdt_problem p = problem(want[i].op, 4, prec, 256);
            assert_true(fdt_recipe_serves(r, want[i].op));
            fdt_recipe_stats st;
            fdt_err e;
            fdt_config c;
            collect k = {0, 0, 1, &p, &d, 0};
            if (fdt_recipe_enumerate(r, &p, &d, cpu_visit, &k, &st, &e))
                fail_msg("cpu.lua: %s", e.msg);
            if (st.survivors != want[i].survivors || k.bad)
                fail_msg("cpu.lua, %s: %llu survivors (want %llu), %d the C dialect refuses",
                         fdt_op_name(want[i].op), (unsigned long long)st.survivors,
                         (unsigned long long)want[i].survivors, k.bad);
            assert_true((uint64_t)fdt_recipe_budget(r) >= st.survivors);
            char key[256];
            assert_int_equal(fdt_recipe_default_config(r, &p, &d, &c, &e), 0);
            fdt_config_format(&c, key, sizeof key);
            assert_string_equal(key, "default");
            assert_int_equal(fdt_config_check_for(&cpu, &p, &c, &e), 0);
        }
    fdt_recipe_free(r);
    load_fails("param(\"blk\", { 0, 1 })\nparam(\"bx\", { 64 })\n",
               "bad.lua:2: param 'bx': a parameter of the HIP dialect, but blk is of the C "
               "dialect", NULL);
    load_fails("param(\"nt\", { 0, 1 })\nparam(\"vec\", { 1 })\ndefault { ty = 16 }\n",
               "bad.lua:3: default 'ty': a parameter of the C dialect, but vec is of the HIP "
               "dialect", NULL);
}

/* Counts dwave's survivors per deployment and damping while collecting them (collect_visit:
 * each must pass the generator's checks for the dwave problem). */
typedef struct dwave_count {
    collect k;
    int per[3][2]; /* [deploy][eta] */
    int layer[2];  /* [layer]: how the damped kernel's rows damp */
    const fdt_gen_target *t;
    int bad_for;   /* survivors fdt_config_check_for refuses on t */
    int long_windows; /* sides with a window longer than the layer */
} dwave_count;

static int dwave_visit(void *ctx, const fdt_config *c, uint64_t index)
{
    dwave_count *d = ctx;
    fdt_err e;
    if (d->t->dialect == FDT_DIALECT_HIP)
        collect_visit(&d->k, c, index);
    else
        cpu_visit(&d->k, c, index);
    if (fdt_config_check_for(d->t, d->k.p, c, &e))
        d->bad_for++;
    if ((unsigned)c->deploy < 3 && (unsigned)c->eta < 2)
        d->per[c->deploy][c->eta]++;
    if ((unsigned)c->layer < 2)
        d->layer[c->layer]++;
    d->long_windows += c->deploy == FDT_DEPLOY_SIDES && c->nw > d->k.p->absorb_w;
    return 0;
}

/* dwave's spaces (issue 29): recipes/dwave.lua (wave's space of lib/lapwave.lua, xyz order,
 * splits up to 4, times deploy {complete, inout, sides} and eta {dist, array}; layer derived:
 * select on NVIDIA, branch on AMD) and cpu.lua load; every survivor is a valid config for a
 * dwave problem (fdt_config_check_for in its dialect); every deployment survives, eta=array
 * only with complete, sides' windows within the layer; the survivors stay bounded (GPU: at most 2.5 times wave's; CPU: within the
 * exhaustive budget); lap.lua no longer lists dwave and dwave.lua serves nothing else; the
 * undamped operators keep their survivors (test_shipped_recipes, test_cpu_recipe). */
static void test_dwave_recipes(void **state)
{
    (void)state;
    fdt_catalogue *cat = catalogue();
    fdt_device h100;
    fdt_err e;
    assert_int_equal(fdt_catalogue_find(cat, "H100", NULL, 0, &h100, &e), 0);
    const fdt_gen_target hip = {FDT_DIALECT_HIP}, cpu = {FDT_DIALECT_C};
    fdt_recipe *r = shipped("dwave.lua");
    assert_string_equal(fdt_recipe_name(r), "dwave");
    assert_true(fdt_recipe_serves(r, FDT_OP_DWAVE));
    for (int op = 0; op < FDT_OP_COUNT; op++)
        assert_int_equal(fdt_recipe_serves(r, (fdt_op)op), op == FDT_OP_DWAVE);
    assert_int_equal(fdt_recipe_space_size(r), 8164800); /* 4536000 / 2 / 5 * 3 * 6 */
    fdt_problem p = dwave_problem(4, FDT_F32, 512, 16);
    dwave_count d = {{0, 0, 1, &p, &h100, 0}, {{0}}, {0}, &hip, 0, 0};
    fdt_recipe_stats st;
    if (fdt_recipe_enumerate(r, &p, &h100, dwave_visit, &d, &st, &e))
        fail_msg("dwave.lua: %s", e.msg);
    assert_int_equal(st.survivors, (uint64_t)d.k.n);
    assert_int_equal(st.survivors, 9676);
    assert_true(d.k.ordered);
    assert_int_equal(d.k.bad, 0);
    assert_int_equal(d.bad_for, 0);
    assert_int_equal(d.long_windows, 0);
    assert_int_equal(d.layer[FDT_LAYER_SELECT], 9676); /* NVIDIA: select alone */
    for (int dep = 0; dep < 3; dep++)
        if (d.per[dep][0] == 0)
            fail_msg("dwave.lua: no survivor of deploy %d", dep);
    assert_true(d.per[FDT_DEPLOY_COMPLETE][FDT_ETA_ARRAY] > 0);
    assert_int_equal(d.per[FDT_DEPLOY_INOUT][FDT_ETA_ARRAY], 0);
    assert_int_equal(d.per[FDT_DEPLOY_SIDES][FDT_ETA_ARRAY], 0);
    assert_true(st.survivors <= 4940 * 5 / 2); /* wave's 4940, bounded */
    fdt_config c;
    char key[256], why[256];
    assert_int_equal(fdt_recipe_default_config(r, &p, &h100, &c, &e), 0);
    fdt_config_format(&c, key, sizeof key);
    assert_string_equal(key, "layer=select,lb=256,lds=1,nw=32");
    assert_int_equal(fdt_recipe_check(r, &p, &h100, &c, why, sizeof why, &e), 1);
    assert_int_equal(fdt_config_check_for(&hip, &p, &c, &e), 0);
    /* a wider layer lets longer windows into sides */
    fdt_problem wide = dwave_problem(4, FDT_F32, 512, 64);
    dwave_count dw = {{0, 0, 1, &wide, &h100, 0}, {{0}}, {0}, &hip, 0, 0};
    if (fdt_recipe_enumerate(r, &wide, &h100, dwave_visit, &dw, &st, &e))
        fail_msg("dwave.lua W=64: %s", e.msg);
    assert_true(dw.per[FDT_DEPLOY_SIDES][0] > d.per[FDT_DEPLOY_SIDES][0]);
    assert_int_equal(dw.k.bad + dw.bad_for + dw.long_windows, 0);
    /* f64 at R=8 on a small grid, every shipped GPU kind keeps some */
    const char *gpus[] = {"MI250X", "MI300X", "A100", "H100 PCIe"};
    for (int g = 0; g < 4; g++) {
        fdt_device dd;
        assert_int_equal(fdt_catalogue_find(cat, gpus[g], NULL, 0, &dd, &e), 0);
        fdt_problem q = dwave_problem(8, FDT_F64, 64, 8);
        dwave_count dg = {{0, 0, 1, &q, &dd, 0}, {{0}}, {0}, &hip, 0, 0};
        if (fdt_recipe_enumerate(r, &q, &dd, dwave_visit, &dg, &st, &e))
            fail_msg("dwave.lua on %s: %s", gpus[g], e.msg);
        if (st.survivors == 0)
            fail_msg("dwave.lua keeps nothing on %s", gpus[g]);
        /* AMD keeps the rows' branch until an AMD GPU measures select */
        int amd = g < 2;
        assert_int_equal(dg.layer[amd ? FDT_LAYER_BRANCH : FDT_LAYER_SELECT], dg.k.n);
        assert_int_equal(dg.k.bad + dg.bad_for, 0);
    }
    /* it serves dwave alone; lap.lua no longer lists it */
    fdt_problem lap = problem(FDT_OP_LAP, 4, FDT_F32, 64);
    assert_int_equal(fdt_recipe_enumerate(r, &lap, &h100, NULL, NULL, NULL, &e), -1);
    assert_contains(e.msg, "not for");
    fdt_recipe_free(r);
    r = shipped("lap.lua");
    assert_false(fdt_recipe_serves(r, FDT_OP_DWAVE));
    fdt_recipe_free(r);

    /* the CPU: cpu.lua's wave space at two tile heights without prefetch, times the
     * deployments */
    r = shipped("cpu.lua");
    fdt_device host = test_device();
    for (int prec = 0; prec < 2; prec++) {
        fdt_problem q = dwave_problem(4, (fdt_prec)prec, 256, 16);
        dwave_count dc = {{0, 0, 1, &q, &host, 0}, {{0}}, {0}, &cpu, 0, 0};
        if (fdt_recipe_enumerate(r, &q, &host, dwave_visit, &dc, &st, &e))
            fail_msg("cpu.lua dwave: %s", e.msg);
        assert_int_equal(st.survivors, 36);
        assert_int_equal(dc.k.bad + dc.bad_for, 0);
        for (int dep = 0; dep < 3; dep++)
            assert_int_equal(dc.per[dep][0], 9); /* the loop nest and 8 of the blocked */
        assert_int_equal(dc.per[FDT_DEPLOY_COMPLETE][FDT_ETA_ARRAY], 9);
        assert_true((uint64_t)fdt_recipe_budget(r) >= st.survivors);
        assert_int_equal(fdt_recipe_default_config(r, &q, &host, &c, &e), 0);
        fdt_config_format(&c, key, sizeof key);
        assert_string_equal(key, "default");
        assert_int_equal(fdt_config_check_for(&cpu, &q, &c, &e), 0);
    }
    fdt_recipe_free(r);
    fdt_catalogue_free(cat);
}

/* Every shipped recipe keeps some configs on GPUs of every kind (small L2, Infinity Cache,
 * wave32 AMD, each NVIDIA generation), for small and large problems in both precisions: a
 * recipe that prunes everything is a bug. */
static void test_shipped_recipes_everywhere(void **state)
{
    (void)state;
    fdt_catalogue *cat = catalogue();
    const char *files[] = {"d2x.lua", "d2y.lua", "d2z.lua", "lap.lua"};
    const fdt_op ops[] = {FDT_OP_D2X, FDT_OP_D2Y, FDT_OP_D2Z, FDT_OP_WAVE};
    for (int f = 0; f < 4; f++) {
        fdt_recipe *r = shipped(files[f]);
        const char *gpus[] = {"MI50", "MI250X", "MI300X", "RX 7900 XTX", "A100", "H100 PCIe"};
        for (int g = 0; g < 6; g++) {
            fdt_device dd;
            fdt_err fe;
            if (fdt_catalogue_find(cat, gpus[g], NULL, 0, &dd, &fe))
                fail_msg("%s", fe.msg);
            const fdt_device *d = &dd;
            const fdt_problem probs[] = {problem(ops[f], 8, FDT_F64, 24),
                                         problem(ops[f], 1, FDT_F32, 1024)};
            for (int k = 0; k < 2; k++) {
                fdt_recipe_stats st;
                fdt_err e;
                if (fdt_recipe_enumerate(r, &probs[k], d, NULL, NULL, &st, &e))
                    fail_msg("%s on %s: %s", files[f], d->name, e.msg);
                if (st.survivors == 0)
                    fail_msg("%s on %s (problem %d): no config survives", files[f], d->name, k);
            }
        }
        fdt_recipe_free(r);
    }
    fdt_catalogue_free(cat);
}

/* The survivors of a walk, in order: their indices and an FNV-1a hash of their configs. */
typedef struct fold {
    uint64_t n, hash;
} fold;

static int fold_visit(void *ctx, const fdt_config *c, uint64_t index)
{
    fold *f = ctx;
    const unsigned char *b = (const unsigned char *)c;
    f->hash = (f->hash ^ index) * 1099511628211ULL;
    for (size_t i = 0; i < sizeof *c; i++)
        f->hash = (f->hash ^ b[i]) * 1099511628211ULL;
    f->n++;
    return 0;
}

/* The walk's prefix skip: survivors (in order, as configs) and every statistic but the cost
 * equal the full walk's, for the shipped lap recipe on NVIDIA and AMD GPUs and problems of
 * every kind; the skip evaluates a fraction of the points. And a constraint whose verdict is
 * not a function of c, dev and prob skips nothing (its rerun disagrees). */
static void test_prefix_skip(void **state)
{
    (void)state;
    fdt_catalogue *cat = catalogue();
    /* (a full walk of lap's 4.5 million points takes seconds: two of them; no search walks
     * it whole, so it runs without the walk's time limit, which a sanitizer's build would
     * exceed) */
    fdt_recipe_limits unlimited;
    fdt_recipe_limits_default(&unlimited);
    unlimited.walk_seconds = 0;
    char path[1100];
    fdt_recipe *r;
    fdt_err le;
    snprintf(path, sizeof path, "%s/recipes/lap.lua", srcdir);
    if (fdt_recipe_load(path, &unlimited, &r, &le))
        fail_msg("%s", le.msg);
    const char *gpus[] = {"H100", "MI250X"};
    const fdt_problem probs[] = {problem(FDT_OP_LAP, 4, FDT_F32, 512),
                                 problem(FDT_OP_WAVE, 7, FDT_F64, 40)};
    for (int g = 0; g < 2; g++) {
        fdt_device d;
        fdt_err e;
        if (fdt_catalogue_find(cat, gpus[g], NULL, 0, &d, &e))
            fail_msg("%s", e.msg);
        {
            const int k = g;
            fdt_recipe_stats full, skip;
            fold ff = {0, 14695981039346656037ULL}, fs = ff;
            fdt_recipe_set_prefix_skip(r, 0);
            if (fdt_recipe_enumerate(r, &probs[k], &d, fold_visit, &ff, &full, &e))
                fail_msg("%s: %s", gpus[g], e.msg);
            fdt_recipe_set_prefix_skip(r, 1);
            if (fdt_recipe_enumerate(r, &probs[k], &d, fold_visit, &fs, &skip, &e))
                fail_msg("%s: %s", gpus[g], e.msg);
            assert_true(ff.n > 0);
            assert_int_equal(fs.n, ff.n);
            assert_int_equal(fs.hash, ff.hash);
            assert_int_equal(skip.visited, full.visited);
            assert_int_equal(skip.survivors, full.survivors);
            assert_int_equal(full.evaluated, full.visited);
            if (skip.evaluated * 4 > full.evaluated)
                fail_msg("%s problem %d: the skip evaluated %llu of %llu points", gpus[g], k,
                         (unsigned long long)skip.evaluated,
                         (unsigned long long)full.evaluated);
            assert_int_equal(skip.nprune, full.nprune);
            for (int i = 0; i < full.nprune; i++) {
                assert_string_equal(skip.prune[i].name, full.prune[i].name);
                assert_int_equal(skip.prune[i].count, full.prune[i].count);
                assert_string_equal(skip.prune[i].example, full.prune[i].example);
            }
        }
    }
    fdt_recipe_free(r);
    fdt_catalogue_free(cat);

    /* A verdict that changes from one run to the next (a counter kept across calls): bx=32
     * is pruned at calls 1 and 3 and passes their reruns (calls 2 and 4), so its by=2 point is
     * not skipped with by=1's but evaluated: 8 points, 2 reruns. */
    const char *odd = "name 'odd'\n"
                      "param('bx', {32, 64, 128, 256})\n"
                      "param('by', {1, 2})\n"
                      "local calls = 0\n"
                      "constrain('every other call', function(c)\n"
                      "  calls = calls + 1\n"
                      "  return c.bx ~= 32 or calls % 2 == 0\n"
                      "end)\n";
    fdt_err e;
    fdt_recipe *o;
    if (load("odd.lua", odd, &o, &e))
        fail_msg("%s", e.msg);
    fdt_recipe_stats st;
    assert_int_equal(walk_small(o, NULL, NULL, &st, &e), 0);
    assert_int_equal(st.visited, 8);
    assert_int_equal(st.evaluated, 10);
    assert_int_equal(st.survivors, 6);
    fdt_recipe_free(o);
}

/* The deepest split among the survivors. */
static int deepest_split(void *ctx, const fdt_config *c, uint64_t index)
{
    (void)index;
    int *deepest = ctx;
    if (c->split > *deepest)
        *deepest = c->split;
    return 0;
}

static void test_shipped_split_rule(void **state)
{
    (void)state;
    /* 9 planes of 1032^2 f32 = 37 MiB, of 520^2 = 9.3 MiB, against half the last-level cache
     * (the near half of a partitioned one), each doubling of split only while still needed:
     * an 8 MiB L2 (an MI250X GCD, an MI100) splits 1024^3 16 ways (37/8 > 4, 37/16 < 4) and
     * 512^3 4 ways; an H100 (50 MiB) splits 1024^3 in two (37 > 25, 18.5 < 25) and 512^3 not
     * at all; an MI300X's 256 MiB Infinity Cache holds the planes of both. The split values
     * stopped at 4 before, which left 1024^3 on an 8 MiB L2 with 9 MiB of planes per pass. */
    fdt_catalogue *cat = catalogue();
    fdt_recipe *r = shipped("d2z.lua");
    const struct {
        const char *gpu;
        int n, deepest;
    } want[] = {{"MI250X", 1024, 16}, {"MI250X", 512, 4}, {"MI100", 1024, 16},
                {"H100", 1024, 2},    {"H100", 512, 1},   {"MI300X", 1024, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fdt_device d;
        fdt_err e;
        assert_int_equal(fdt_catalogue_find(cat, want[i].gpu, NULL, 0, &d, &e), 0);
        fdt_problem p = problem(FDT_OP_D2Z, 4, FDT_F32, want[i].n);
        int deepest = 0;
        assert_int_equal(fdt_recipe_enumerate(r, &p, &d, deepest_split, &deepest, NULL, &e), 0);
        if (deepest != want[i].deepest)
            fail_msg("%s %d^3: deepest split %d, expected %d", want[i].gpu, want[i].n, deepest,
                     want[i].deepest);
    }
    fdt_recipe_free(r);
    fdt_catalogue_free(cat);
}

/* The stream's rules in lap.lua: at R=8 in f64 on an H100, where no ring survives the
 * register rule (2R+1 planes of tile x vec doubles), the stream's 2x2 blocking does (its sums
 * are all it keeps); it needs vectors and 4..8 outputs per thread, 2..4 planes in flight, at
 * least max(8, R) rows per block and windows of 128 planes or more, and an unrolled march
 * the instruction cache holds (R=8 2x4 is refused, R=6 and R=7 2x4 are not; on an MI250X
 * R=7 2x4 is refused too); its copies of fewer than 16 bytes carry the L2 hint as the
 * ring's do. */
static void test_lap_stream_rules(void **state)
{
    (void)state;
    fdt_catalogue *cat = catalogue();
    fdt_recipe *r = shipped("lap.lua");
    fdt_device h100;
    fdt_err e;
    assert_int_equal(fdt_catalogue_find(cat, "H100", NULL, 0, &h100, &e), 0);
    const struct {
        int R;
        fdt_prec prec;
        const char *cfg, *why; /* why NULL: accepted */
    } want[] = {
        {8, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,tile=2,vec=2", NULL},
        {8, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=2,nw=128,pf=3,tile=2,vec=2",
         "values per thread fit in registers"},
        {8, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,tile=4,vec=2",
         "values per thread fit in registers"},
        {8, FDT_F32, "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=128,pf=3,tile=2,vec=2", NULL},
        {8, FDT_F32, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,vec=4", NULL},
        {8, FDT_F32, "align=32,bx=32,by=4,lb=128,lds=3,nw=128,pf=3,vec=4", "the stream"},
        {4, FDT_F32, "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=128,pf=3,vec=2", "the stream"},
        {4, FDT_F32, "align=32,l2pf=256,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2", NULL},
        {4, FDT_F32, "align=32,l2pf=256,lb=256,lds=3,nw=128,pf=5,tile=4,vec=2", "the stream"},
        {4, FDT_F32, "align=32,l2pf=256,lb=256,lds=3,nw=64,pf=4,tile=4,vec=2", "the stream"},
        {8, FDT_F32, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,tile=2,vec=4",
         "instruction cache"},
        {6, FDT_F32, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,tile=2,vec=4", NULL},
        {7, FDT_F32, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,tile=2,vec=4", NULL},
        /* rows of half a warp: the stream's square 2x2 tiles (bx=16, by=16) from R=6 on only */
        {8, FDT_F64, "align=32,bx=16,by=16,lb=256,lds=3,nw=256,pf=4,tile=2,vec=2", NULL},
        {7, FDT_F64, "align=32,bx=16,by=16,lb=256,lds=3,nw=256,pf=4,tile=2,vec=2", NULL},
        {8, FDT_F64, "align=32,bx=16,by=8,lb=128,lds=3,nw=256,pf=4,tile=2,vec=2", "wave size"},
        {8, FDT_F64, "align=32,bx=16,by=16,lb=256,lds=2,nw=256,pf=4,tile=2,vec=2", "wave size"},
        {5, FDT_F64, "align=32,bx=16,by=16,lb=256,lds=3,nw=256,pf=4,tile=2,vec=2", "by=16"},
        /* the stream's slot barriers (mbar=1) from R=5 on, copying pf - 1 planes ahead: pf up
         * to 5 there, 4 without them */
        {8, FDT_F64, "align=32,bx=16,by=16,lb=256,lds=3,mbar=1,nw=256,pf=4,tile=2,vec=2", NULL},
        {5, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,mbar=1,nw=256,pf=5,tile=2,vec=2", NULL},
        {5, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=5,tile=2,vec=2", "the stream"},
        {8, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,mbar=1,nw=256,pf=6,tile=2,vec=2",
         "the stream"},
        {4, FDT_F32, "align=32,l2pf=256,lb=256,lds=3,mbar=1,nw=128,pf=4,tile=4,vec=2",
         "slot barriers"},
        {4, FDT_F32, "align=32,bx=32,by=8,l2pf=256,lb=256,lds=2,mbar=1,nw=128,pf=3,tile=2,vec=2",
         "slot barriers"},
        /* the stream's bulk copies (bulk=1, sm_90) with the slot barriers at every radius and
         * precision, no L2 hint; not without the barriers; f32 R=5 and 6 rows in vectors of
         * 4 (the generator refuses an x halo of 6 floats: rows not on 16 bytes) */
        {4, FDT_F32, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=4,tile=2,vec=2", NULL},
        {8, FDT_F32, "align=32,bulk=1,bx=32,by=16,lb=512,lds=3,mbar=1,nw=128,pf=3,tile=2,vec=2",
         NULL},
        {6, FDT_F64, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,mbar=1,nw=256,pf=4,tile=2,vec=2", NULL},
        {1, FDT_F64, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=4,tile=2,vec=2", NULL},
        {5, FDT_F32, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=4,vec=4", NULL},
        {5, FDT_F32, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=4,tile=2,vec=2",
         "x halo"},
        {4, FDT_F32, "align=32,bulk=1,bx=32,by=8,lb=256,lds=3,nw=128,pf=4,tile=2,vec=2",
         "bulk copies"},
        /* 512-plane columns at 512^3: a stream whose registers hold one block per SM fills
         * the device with a block for 7 SMs in 8 from R=5 on (128 blocks of 2x4 on 132 SMs);
         * a lighter one (1x4, 60 values: two blocks per SM) needs two per SM, and R=4 keeps
         * the old count (f64 4x2, 144 values, 256 blocks) */
        {7, FDT_F32, "align=32,bx=16,by=16,lb=256,lds=3,nt=1,nw=512,pf=4,tile=2,vec=4", NULL},
        {7, FDT_F32, "align=32,bx=32,by=8,lb=256,lds=3,nw=512,pf=4,tile=2,vec=4", NULL},
        {7, FDT_F32, "align=32,bx=16,by=16,lb=256,lds=3,nw=512,pf=4,vec=4",
         "enough blocks to fill the device"},
        {4, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=4,tile=4,vec=2",
         "enough blocks to fill the device"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fdt_problem p = problem(FDT_OP_LAP, want[i].R, want[i].prec, 512);
        fdt_config c, d;
        char why[256];
        assert_int_equal(fdt_config_parse(want[i].cfg, &c, &e), 0);
        d = c;
        assert_int_equal(fdt_recipe_derive(r, &p, &h100, &d, &e), 0);
        assert_int_equal(d.l2pf, c.l2pf); /* the configs above carry what the recipe derives */
        int ok = fdt_recipe_check(r, &p, &h100, &c, why, sizeof why, &e);
        if (ok != !want[i].why || (want[i].why && !strstr(why, want[i].why)))
            fail_msg("R=%d %s %s: %s", want[i].R, fdt_prec_name(want[i].prec), want[i].cfg,
                     ok == 1 ? "accepted" : why);
    }
    /* on an MI250X (wave64, 64 KB of LDS) the shapes test_runtime.c compiles for gfx90a */
    fdt_device mi;
    assert_int_equal(fdt_catalogue_find(cat, "MI250X", NULL, 0, &mi, &e), 0);
    const struct {
        int R;
        fdt_prec prec;
        const char *cfg, *why; /* why NULL: accepted */
    } amd[] = {
        {6, FDT_F32, "align=64,bx=64,by=4,l2pf=256,lb=256,lds=3,nw=128,pf=2,tile=2,vec=2", NULL},
        {4, FDT_F64, "align=64,bx=64,by=4,lb=256,lds=3,nw=128,pf=2,tile=2,vec=2", NULL},
        {4, FDT_F32, "align=64,bx=64,by=4,l2pf=256,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2", NULL},
        /* the H100's limit of the unrolled march is not AMD's: R=7 2x4 stays out there */
        {7, FDT_F32, "align=64,bx=64,by=4,l2pf=256,lb=256,lds=3,nw=128,pf=2,tile=2,vec=4",
         "instruction cache"},
        /* the H100's rows of half a warp are not AMD's (a wave of 64 over four rows) */
        {8, FDT_F64, "align=64,bx=16,by=16,lb=256,lds=3,nw=256,pf=4,tile=2,vec=2", "wave size"},
        {8, FDT_F64, "align=64,bx=32,by=16,lb=512,lds=3,nw=256,pf=4,tile=2,vec=2", "wave size"},
        /* no cp.async to hand planes over with mbarriers: mbar=1 would be mbar=0 again */
        {6, FDT_F32, "align=64,bx=64,by=4,l2pf=256,lb=256,lds=3,mbar=1,nw=128,pf=2,tile=2,vec=2",
         "slot barriers"},
        /* nor the bulk copies, which need them (and sm_90) */
        {6, FDT_F32, "align=64,bulk=1,bx=64,by=4,lb=256,lds=3,mbar=1,nw=128,pf=2,tile=2,vec=2",
         "slot barriers"},
    };
    for (size_t i = 0; i < sizeof amd / sizeof amd[0]; i++) {
        fdt_problem p = problem(FDT_OP_LAP, amd[i].R, amd[i].prec, 512);
        fdt_config c;
        char why[256];
        assert_int_equal(fdt_config_parse(amd[i].cfg, &c, &e), 0);
        int ok = fdt_recipe_check(r, &p, &mi, &c, why, sizeof why, &e);
        if (ok != !amd[i].why || (amd[i].why && !strstr(why, amd[i].why)))
            fail_msg("MI250X R=%d %s: %s", amd[i].R, amd[i].cfg, ok == 1 ? "accepted" : why);
    }
    fdt_recipe_free(r);
    fdt_catalogue_free(cat);
}

/* lap.lua on AMD: the ring (lds=2) stages a plane's copies in registers next to its window,
 * so an MI250X (and an MI100, AMD too) admits only the windows gfx90a compiled with no scratch
 * (lap up to 48 32-bit values, wave up to 24: tests/test_amd_ring.sh disassembles them) and
 * refuses the shapes that spilled (lap R=4 f32 2x4 and 4x2, R=6 2x2, R=2 f64 4x2; wave R=4 f32
 * 2x2), while an H100 (cp.async: no registers) still admits all of them. */
static void test_lap_ring_amd(void **state)
{
    (void)state;
    fdt_catalogue *cat = catalogue();
    fdt_recipe *r = shipped("lap.lua");
    fdt_device mi, mi100, h100;
    fdt_err e;
    assert_int_equal(fdt_catalogue_find(cat, "MI250X", NULL, 0, &mi, &e), 0);
    assert_int_equal(fdt_catalogue_find(cat, "MI100", NULL, 0, &mi100, &e), 0);
    assert_int_equal(fdt_catalogue_find(cat, "H100", NULL, 0, &h100, &e), 0);
    const char *rule = "AMD rings stage their copies in registers";
    const struct {
        fdt_op op;
        int R;
        fdt_prec prec;
        const char *cfg;
        int amd; /* admitted on AMD */
    } want[] = {
        {FDT_OP_LAP, 4, FDT_F32, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=2,vec=2", 1},
        {FDT_OP_LAP, 2, FDT_F32, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=2,vec=4", 1},
        {FDT_OP_LAP, 1, FDT_F64, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=2,vec=2", 1},
        {FDT_OP_WAVE, 2, FDT_F32, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=2,vec=2", 1},
        {FDT_OP_LAP, 4, FDT_F32, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=2,vec=4", 0},
        {FDT_OP_LAP, 4, FDT_F32, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=4,vec=2", 0},
        {FDT_OP_LAP, 6, FDT_F32, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=2,vec=2", 0},
        {FDT_OP_LAP, 2, FDT_F64, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=4,vec=2", 0},
        {FDT_OP_WAVE, 4, FDT_F32, "align=64,bx=64,by=4,lb=256,lds=2,nw=32,pf=2,tile=2,vec=2", 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fdt_problem p = problem(want[i].op, want[i].R, want[i].prec, 512);
        fdt_config c;
        char why[256];
        assert_int_equal(fdt_config_parse(want[i].cfg, &c, &e), 0);
        const fdt_device *amd[] = {&mi, &mi100};
        for (int d = 0; d < 2; d++) {
            int ok = fdt_recipe_check(r, &p, amd[d], &c, why, sizeof why, &e);
            if (ok != want[i].amd || (!ok && !strstr(why, rule)))
                fail_msg("%s %s R=%d %s: %s", amd[d]->name, fdt_op_name(want[i].op), want[i].R,
                         want[i].cfg, ok == 1 ? "accepted" : why);
        }
        /* the H100 may refuse some for its own reasons, never for this one */
        if (fdt_recipe_check(r, &p, &h100, &c, why, sizeof why, &e) != 1 && strstr(why, rule))
            fail_msg("H100 %s R=%d %s: %s", fdt_op_name(want[i].op), want[i].R, want[i].cfg, why);
    }
    fdt_recipe_free(r);
    fdt_catalogue_free(cat);
}

/* ---------------------------------------------------------------- error classes */

static void test_error_lines(void **state)
{
    (void)state;
    load_fails("param(\"bx\", { 32 })\n"
               "param(\"by\", { 1, 2 }\n"
               "param(\"vec\", { 1 })\n",
               "bad.lua:3: ", "expected");
    load_fails("param(\"bx\", { 32 })\n"
               "parm(\"by\", { 1 })\n",
               "bad.lua:2: unknown name 'parm'", "directives: ops");
    load_fails("\n\nparam(\"bxx\", { 32 })\n", "bad.lua:3: param 'bxx': unknown parameter",
               "known: align, bind, blk, bulk, bx");
    load_fails("param(\"bx\", { 32 })\n"
               "param(\"vec\", { 1, 3 })\n",
               "bad.lua:2: param 'vec': value #2: 3 is not a vector width", NULL);
    load_fails("param(\"bx\", { 0 })\n", "bad.lua:1: param 'bx': value #1: 0 is out of range",
               NULL);
    load_fails("param(\"align\", { 1, 48 })\n",
               "bad.lua:1: param 'align': value #2: 48 is not a power of two", NULL);
    load_fails("-- types\nparam(\"bx\", { \"64\" })\n",
               "bad.lua:2: param 'bx': value #1: expected an integer, got a string", NULL);
    load_fails("param(\"bx\", { 64.5 })\n",
               "bad.lua:1: param 'bx': value #1: expected an integer, got 64.5", NULL);
    load_fails("param(\"order\", { \"xyz\", 1 })\n",
               "bad.lua:1: param 'order': value #2: expected one of xyz", NULL);
    load_fails("param(\"order\", { \"zzz\" })\n", "bad.lua:1: param 'order': value #1: 'zzz'",
               NULL);
    load_fails("param(\"bx\", 64)\n", "bad.lua:1: param 'bx': expected a list", NULL);
    load_fails("param(\"bx\", {})\n", "bad.lua:1: param 'bx': the value list is empty", NULL);
    load_fails("param(\"bx\", { 32, 64, 32 })\n", "bad.lua:1: param 'bx': value 32 listed twice",
               NULL);
    /* A list is bounded: 200,000 values (whose duplicate check took 20 s) are refused. */
    load_fails("local t = {}\n"
               "for i = 1, 200000 do t[i] = i end\n"
               "param(\"nw\", t)\n",
               "bad.lua:3: param 'nw': 200000 values, more than the 4096 a parameter may list",
               NULL);
    load_fails("local t = {}\n"
               "for i = 1, 4096 do t[i] = i end\n"
               "t[4096] = 7\n"
               "param(\"nw\", t)\n",
               "bad.lua:4: param 'nw': value 7 listed twice", NULL);
    load_fails("param(\"bx\", { 32 })\nparam(\"bx\", { 64 })\n",
               "bad.lua:2: param 'bx': listed twice (first at line 1)", NULL);
    load_fails("param(\"bx\", { 32 })\nderive(\"bx\", function(c) return 1 end)\n",
               "bad.lua:2: derive 'bx': already listed by param at line 1", NULL);
    load_fails("derive(\"lb\", 5)\n", "bad.lua:1: derive 'lb': expected a function", NULL);
    load_fails("constrain(\"x\", function() return true end)\n"
               "constrain(\"x\", function() return true end)\n",
               "bad.lua:2: constrain 'x': name used twice (first at line 1)", NULL);
    load_fails("param(\"bx\", { 64 })\n"
               "default { bx = 64,\n"
               "          bxx = 2 }\n",
               "bad.lua:2: default 'bxx': unknown parameter", NULL);
    load_fails("default { vec = 3 }\n", "bad.lua:1: default: vec: 3 is not a vector width",
               NULL);
    load_fails("default { bx = \"64\" }\n", "bad.lua:1: default: bx: expected an integer", NULL);
    load_fails("default { 64 }\n", "bad.lua:1: default: keys must be parameter names", NULL);
    load_fails("strategy \"fast\"\n", "bad.lua:1: strategy: 'fast' is not one of", NULL);
    load_fails("budget(0)\n", "bad.lua:1: budget: 0 is out of range", NULL);
    load_fails("budget(\"10\")\n", "bad.lua:1: budget: expected an integer, got a string", NULL);
    load_fails("ops { \"lap\", \"lapx\" }\n", "bad.lua:1: ops: unknown operator 'lapx'", NULL);
    load_fails("name \"a b\"\n", "bad.lua:1: name 'a b': use letters", NULL);
    load_fails("param(\"bx\")\n", "bad.lua:1: expected param(\"name\", { values })", NULL);
    load_fails("x = 1\nlocal y = z + 1\n", "bad.lua:2: unknown name 'z'", NULL);
    load_fails("error('plain')\n", "bad.lua:1: plain", NULL);
    load_fails("error('no position', 0)\n", "bad.lua:1: no position", NULL);
    load_fails("error({})\n", "bad.lua:1: error object is a table value", NULL);
    load_fails("local t = shared_bytes({})\n",
               "bad.lua:1: shared_bytes(c) works inside derive and constrain functions only", NULL);
}

static void test_runtime_error_lines(void **state)
{
    (void)state;
    /* A constraint that raises: the line of the failing code, then which constraint. */
    enumerate_fails("param(\"bx\", { 32, 64 })\n"
                    "constrain(\"boom\", function(c, dev, prob)\n"
                    "  local x = nil\n"
                    "  return x + c.bx > 0\n"
                    "end)\n",
                    "bad.lua:4: attempt to perform arithmetic on a nil value",
                    "(in constraint 'boom' at bad.lua:2, config bx=32)");
    /* A helper function defined elsewhere: the line inside the helper. */
    enumerate_fails("local function helper(c)\n"
                    "  return c.bx < nil\n"
                    "end\n"
                    "param(\"bx\", { 32 })\n"
                    "constrain(\"uses helper\", function(c) return helper(c) end)\n",
                    "bad.lua:2: attempt to compare", "constraint 'uses helper' at bad.lua:5");
    enumerate_fails("param(\"bx\", { 32 })\n"
                    "constrain(\"typo\", function(c, dev, prob)\n"
                    "  return c.bx > 0 and\n"
                    "         c.typo > 1\n"
                    "end)\n",
                    "bad.lua:4: c has no field 'typo' (fields: align, bind, blk, bulk, bx, by, bz,", NULL);
    enumerate_fails("constrain(\"dev typo\", function(c, dev, prob)\n"
                    "  return dev.nonexistent == 1\n"
                    "end)\n",
                    "bad.lua:2: dev has no field 'nonexistent' (fields: arch, catalogue,", NULL);
    enumerate_fails("constrain(\"prob typo\", function(c, dev, prob)\n"
                    "\n"
                    "  return prob.size > 1\n"
                    "end)\n",
                    "bad.lua:3: prob has no field 'size' (fields: R, absorb_s, absorb_w, esize, nx, ny, "
                    "nz, op, prec)",
                    NULL);
    enumerate_fails("constrain(\"write\", function(c)\n"
                    "  c.bx = 5\n"
                    "  return true\n"
                    "end)\n",
                    "bad.lua:2: c is read-only (cannot set 'bx')", NULL);
    enumerate_fails("constrain(\"early\", function(c) return c.lb > 0 end)\n"
                    "derive(\"lb\", function(c) return c.bx * c.by end)\n",
                    "bad.lua:1: c.lb is derived later in the recipe", NULL);
    enumerate_fails("constrain(\"nil\", function(c)\n"
                    "  local ok = c.bx > 0\n"
                    "end)\n",
                    "bad.lua:1: constraint 'nil' returned nil, expected true or false", NULL);
    enumerate_fails("constrain(\"reason\", function(c) return false, 42 end)\n",
                    "bad.lua:1: constraint 'reason' gave an integer as its reason", NULL);
    enumerate_fails("\nderive(\"lb\", function(c)\n"
                    "  return \"many\"\n"
                    "end)\n",
                    "bad.lua:2: derive 'lb' returned a string, expected an integer", NULL);
    enumerate_fails("derive(\"order\", function(c) return 1 end)\n",
                    "bad.lua:1: derive 'order' returned an integer, expected one of its names",
                    NULL);
    enumerate_fails("constrain(\"directive\", function(c)\n"
                    "  param(\"bx\", { 1 })\n"
                    "  return true\n"
                    "end)\n",
                    "bad.lua:2: param: directives belong at the top level", NULL);
    enumerate_fails("constrain(\"state\", function(c)\n"
                    "  counter = 1\n"
                    "  return true\n"
                    "end)\n",
                    "bad.lua:2: cannot assign the global 'counter' here", NULL);
    enumerate_fails("constrain(\"spin\", function(c)\n"
                    "  local n = 0\n"
                    "  while true do n = n + 1 end\n"
                    "end)\n",
                    "bad.lua:3: instruction limit exceeded (200000 instructions)",
                    "constraint 'spin'");
    enumerate_fails("constrain(\"proxy\", function(c)\n"
                    "  setmetatable(c, nil)\n"
                    "  return true\n"
                    "end)\n",
                    "bad.lua:2: cannot change a protected metatable", NULL);
}

/* ---------------------------------------------------------------- sandbox */

static int dump_writer(lua_State *L, const void *p, size_t n, void *ud)
{
    (void)L;
    fdt_sb_putn(ud, p, n);
    return 0;
}

/* Compiles source with the host Lua and writes the binary chunk as tmpdir/name. */
static void write_binary(const char *name, const char *source, char *path, size_t n)
{
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    assert_int_equal(luaL_loadstring(L, source), LUA_OK);
    fdt_sb bin;
    fdt_sb_init(&bin);
    assert_int_equal(lua_dump(L, dump_writer, &bin, 0), 0);
    lua_close(L);
    assert_true(bin.len > 4 && bin.s[0] == 0x1b);
    write_file(name, bin.s, bin.len, path, n);
    fdt_sb_free(&bin);
}

static void test_sandbox(void **state)
{
    (void)state;
    load_fails("local f = io.open(\"/etc/passwd\")\n", "bad.lua:1: unknown name 'io'", NULL);
    load_fails("\nos.execute(\"true\")\n", "bad.lua:2: unknown name 'os'", NULL);
    load_fails("local m = require(\"os\")\n", "bad.lua:1: unknown name 'require'", NULL);
    load_fails("local f = load(\"return 1\")\n", "bad.lua:1: unknown name 'load'", NULL);
    load_fails("dofile(\"/etc/passwd\")\n", "bad.lua:1: unknown name 'dofile'", NULL);
    load_fails("loadfile(\"/etc/passwd\")\n", "bad.lua:1: unknown name 'loadfile'", NULL);
    load_fails("local d = debug.getinfo(1)\n", "bad.lua:1: unknown name 'debug'", NULL);
    load_fails("collectgarbage()\n", "bad.lua:1: unknown name 'collectgarbage'", NULL);
    load_fails("print(1)\n", "bad.lua:1: unknown name 'print'", NULL);
    load_fails("local p = package.loaded\n", "bad.lua:1: unknown name 'package'", NULL);
    load_fails("local s = string.dump(function() end)\n",
               "bad.lua:1: attempt to call a nil value (field 'dump')", NULL);
    load_fails("local r = math.random()\n",
               "bad.lua:1: attempt to call a nil value (field 'random')", NULL);
    /* The string metatable is locked: no way back to the library table through it. */
    load_fails("assert(getmetatable(\"\") == \"locked\")\nerror(\"reached\")\n",
               "bad.lua:2: reached", NULL);

    /* A real binary chunk is refused. */
    char path[512];
    write_binary("binary.lua", "param('bx', { 64 })", path, sizeof path);
    fdt_recipe *r = NULL;
    fdt_err e;
    assert_int_equal(fdt_recipe_load(path, &small, &r, &e), -1);
    assert_string_equal(e.msg, "binary.lua: binary (precompiled) chunks are not accepted; "
                               "recipes are text");

    /* Limits. */
    load_fails("\nwhile true do end\n",
               "bad.lua:2: instruction limit exceeded (2000000 instructions)", NULL);
    /* pcall cannot swallow the limit: the catching frame fails at its next instruction. */
    load_fails("while true do\n"
               "  pcall(function() while true do end end)\n"
               "end\n",
               "bad.lua:", "instruction limit exceeded");
    load_fails("local t = {}\n"
               "for i = 1, 1e9 do\n"
               "  t[i] = i\n"
               "end\n",
               "bad.lua:3: memory limit exceeded (8 MiB)", NULL);
    load_fails("local t = {}\n"
               "for i = 1, 1e9 do\n"
               "  t[\"k\" .. i] = {}\n"
               "end\n",
               "bad.lua:3: memory limit exceeded (8 MiB)", NULL);
    load_fails("local s = \"x\"\n"
               "while true do\n"
               "  s = s .. s\n"
               "end\n",
               "bad.lua:3: memory limit exceeded (8 MiB)", NULL);
    /* One allocation far beyond the limit is refused outright, still with its line. */
    load_fails("\nlocal s = string.rep(\"x\", 1 << 30)\n", "bad.lua:2: memory limit exceeded",
               NULL);
    /* Garbage alone does not trip the limit: 100 MiB allocated over time, little live. */
    fdt_recipe *ok = NULL;
    if (load("garbage.lua",
             "for i = 1, 1000 do local s = string.rep(\"x\", 100000 + i) end\n"
             "param(\"bx\", { 64 })\n",
             &ok, &e))
        fail_msg("%s", e.msg);
    fdt_recipe_free(ok);
}

/* ---------------------------------------------------------------- work in C */

/* What could run for ever inside the C library, or with hooks off, is refused or stopped
 * (luahost_guard.c); what recipes do with it normally still works. */
static void test_library_guards(void **state)
{
    (void)state;
    /* Backtracking patterns: refused by the steps they could take on their subject. */
    load_fails("local i = string.find(string.rep('a', 3e4), '.-.-.-.-b')\n",
               "bad.lua:1: string.find: the pattern '.-.-.-.-b' could take 2.7e+23 steps on a "
               "subject of 30000 bytes, more than the 1e+08 one call may take", NULL);
    load_fails("local s = string.rep('a', 3e4)\nlocal m = s:match('(a-)(a-)b')\n",
               "bad.lua:2: string.match: the pattern '(a-)(a-)b'", NULL);
    load_fails("local s = string.rep('a', 3e4)\nfor w in s:gmatch('a*a*b') do end\n",
               "bad.lua:2: string.gmatch: the pattern 'a*a*b'", NULL);
    load_fails("local s = string.rep('a', 3e4)\nlocal t = s:gsub('a-a-a-x', '')\n",
               "bad.lua:2: string.gsub: the pattern 'a-a-a-x'", NULL);
    /* A literal search compares with memcmp: a long needle in a long haystack is refused. */
    load_fails("local s = string.rep('a', 1 << 21)\n"
               "local i = s:find(string.rep('a', 1 << 19) .. 'b', 1, true)\n",
               "bad.lua:2: string.find: the pattern 'aaaa", "subject of 2097152 bytes");
    /* Table functions walking more elements than there can be. */
    load_fails("table.move({}, 1, 1e15, 2)\n",
               "bad.lua:1: table.move: 1000000000000000 elements, more than the 16777216 one "
               "call may take", NULL);
    load_fails("local t = setmetatable({}, { __len = function() return 1 << 50 end })\n"
               "table.insert(t, 1, 0)\n",
               "bad.lua:2: table.insert: 1125899906842624 elements", NULL);
    load_fails("local t = setmetatable({}, { __len = function() return 1 << 50 end })\n"
               "table.remove(t, 1)\n",
               "bad.lua:2: table.remove: 1125899906842624 elements", NULL);
    load_fails("local s = table.concat({}, '', 1, 1e15)\n",
               "bad.lua:1: table.concat: 1000000000000000 elements", NULL);
    /* Finalizers run in the collector and at lua_close, with hooks off. */
    load_fails("setmetatable({}, { __gc = function() while true do end end })\n",
               "bad.lua:1: setmetatable: __gc is not allowed in a recipe", NULL);
    /* A message handler that loops: not run once the limit it would handle is exceeded
     * (the error comes from the count hook, where hooks are off)... */
    load_fails("local ok = xpcall(function() while true do end end,\n"
               "                  function(m) while true do end end)\n",
               "bad.lua:", "instruction limit exceeded (2000000 instructions)");
    /* ...nor after its own loop exceeded it, for an ordinary error. */
    load_fails("local ok = xpcall(error, function(m) while true do end end)\n",
               "bad.lua:", "instruction limit exceeded (2000000 instructions)");
    enumerate_fails("constrain('handled', function(c)\n"
                    "  local ok = xpcall(function() while true do end end,\n"
                    "                    function(m) while true do end end)\n"
                    "  return true\n"
                    "end)\n",
                    "bad.lua:", "instruction limit exceeded (200000 instructions)");
    /* Errors still name the function as the recipe called it. */
    load_fails("local s = string.rep()\n", "bad.lua:1: bad argument #1 to 'rep'", NULL);
    load_fails("table.sort({ 1, 'x' })\n", "bad.lua:1: attempt to compare", NULL);

    /* Ordinary use is unchanged. */
    fdt_recipe *r = NULL;
    fdt_err e;
    if (load("normal.lua",
             "local t = { 3, 1, 2 }\n"
             "table.sort(t)\n"
             "assert(t[1] == 1 and t[2] == 2 and t[3] == 3)\n"
             "table.sort(t, function(a, b) return a > b end)\n"
             "assert(t[1] == 3 and t[3] == 1)\n"
             "local ok, m = xpcall(function() error('boom') end,\n"
             "                     function(m) return 'handled: ' .. m end)\n"
             "assert(not ok and m:find('handled: ', 1, true))\n"
             "local n = 0\n"
             "for w in ('a b c'):gmatch('%a') do n = n + 1 end\n"
             "assert(n == 3)\n"
             "assert(('sm_90'):match('^sm_(%d+)') == '90')\n"
             "assert(('a,b'):gsub(',', ';') == 'a;b')\n"
             "assert(table.concat({ 'a', 'b' }, ',') == 'a,b')\n"
             "table.insert(t, 1, 0)\n"
             "assert(table.remove(t, 1) == 0 and #t == 3)\n"
             "assert(#table.move({ 1, 2 }, 1, 2, 3) == 4)\n"
             "local mt = setmetatable({}, { __index = function() return 1 end })\n"
             "assert(mt.x == 1)\n"
             "param('bx', { 64 })\n",
             &r, &e))
        fail_msg("%s", e.msg);
    fdt_recipe_free(r);
}

/* Loading (walk 0) or walking (1) `text` with the quick limits must fail with a message
 * starting with prefix and containing the parts that are not NULL, within a few seconds of
 * CPU time. */
static void stops(int walk, const char *text, const char *prefix, const char *part,
                  const char *part2)
{
    fdt_recipe *r = NULL;
    fdt_err e = {{0}};
    fdt_recipe_limits lim = quick;
    if (walk) /* what the file sets up, however slowly this machine runs it, is not tested */
        lim.load_seconds = 10;
    clock_t start = clock();
    int rc = load_with("slow.lua", text, &lim, &r, &e);
    if (walk) {
        if (rc)
            fail_msg("load: %s", e.msg);
        fdt_recipe_stats st;
        rc = walk_small(r, NULL, NULL, &st, &e);
    }
    fdt_recipe_free(r);
    double took = (double)(clock() - start) / CLOCKS_PER_SEC;
    if (rc == 0)
        fail_msg("the recipe ran to the end, expected \"%s\"", prefix);
    assert_prefix(e.msg, prefix);
    if (part)
        assert_contains(e.msg, part);
    if (part2)
        assert_contains(e.msg, part2);
    if (took > 5)
        fail_msg("stopped after %.1f s of CPU time, with a limit of %g s: %s", took,
                 quick.walk_seconds, e.msg);
}

/* A space of 100,000 points (bx 1..100, by 1..1000) whose constraint `body` runs on every
 * point; the walk took from minutes to hours with the work below. */
#define WIDE_SPACE                                                                           \
    "local xs, ys = {}, {}\n"                                                                \
    "for i = 1, 100 do xs[i] = i end\n"                                                      \
    "for i = 1, 1000 do ys[i] = i end\n"                                                     \
    "param('bx', xs)\n"                                                                      \
    "param('by', ys)\n"

/* The message of the quick limits' time running out. */
#define OUT_OF_TIME "time limit exceeded (0.5 s of CPU time)"

/* The time limit holds where the instruction limit counts nothing: inside C library calls
 * and long single instructions, over the many calls of a walk, and at load. */
static void test_time_limit(void **state)
{
    (void)state;
    /* 16 MiB strings, on every point. */
    stops(1, WIDE_SPACE "constrain('big', function(c)\n"
                        "  return #string.rep('x', 1 << 24) > 0\n"
                        "end)\n",
          "slow.lua", OUT_OF_TIME, "(in constraint 'big' at slow.lua:6");
    /* gsub over 2 MiB, on every point. */
    stops(1, WIDE_SPACE "local s = string.rep('ab', 1 << 20)\n"
                        "constrain('gsub', function(c)\n"
                        "  return s:gsub('a', 'c') ~= s\n"
                        "end)\n",
          "slow.lua", OUT_OF_TIME, "(in constraint 'gsub' at slow.lua:7");
    /* Sorting 210,000 numbers, on every point (a few instructions build the list). */
    stops(1, WIDE_SPACE "constrain('sort', function(c)\n"
                        "  local t = { string.byte(string.rep('gfedcba', 30000), 1, -1) }\n"
                        "  table.sort(t)\n"
                        "  return t[1] == 97\n"
                        "end)\n",
          "slow.lua", OUT_OF_TIME, "(in constraint 'sort' at slow.lua:6");
    /* One comparison of two 4 MiB strings per point: no library call, three instructions
     * (the hook never fires); the walk's calls add up. */
    stops(1, WIDE_SPACE "local a = string.rep('x', 1 << 22) .. 'a'\n"
                        "local b = string.rep('x', 1 << 22) .. 'b'\n"
                        "constrain('compare', function(c) return a < b end)\n",
          "slow.lua: " OUT_OF_TIME, "(in constraint 'compare' at slow.lua:8", NULL);
    /* Sorting 100,000 copies of a 1 MB string: each comparison reads it whole. */
    stops(0, "local s, t = string.rep('x', 1000000), {}\n"
             "for i = 1, 100000 do t[i] = s end\n"
             "table.sort(t)\n",
          "slow.lua:", OUT_OF_TIME, NULL);
    /* A vararg function that grows its argument list on every call: each call copies it. */
    stops(0, "local function f(...) return f(1, ...) end\n"
             "f()\n",
          "slow.lua:1: " OUT_OF_TIME, NULL, NULL);
}

/* ---------------------------------------------------------------- counting and order */

static const char tiny[] =
    "-- tiny.lua: a space small enough to count by hand\n"                   /* 1 */
    "param(\"bx\", { 32, 64, 128 })\n"                                       /* 2 */
    "param(\"by\", { 1, 2, 4 })\n"                                           /* 3 */
    "param(\"vec\", { 1, 2 })\n"                                             /* 4 */
    "param(\"align\", { 1, 2 })\n"                                           /* 5 */
    "constrain(\"at most 256 threads\", function(c, dev)\n"                  /* 6 */
    "  return c.bx * c.by <= 256 and c.bx * c.by <= dev.max_threads_per_block\n"
    "end)\n"                                                                 /* 8 */
    "derive(\"lb\", function(c) return c.bx * c.by * c.bz * 8 end)\n"        /* 9 */
    "constrain(\"no 64x2\", function(c)\n"                                   /* 10 */
    "  return not (c.bx == 64 and c.by == 2), \"64x2 is banned\"\n"
    "end)\n"
    "strategy \"random\"\n"
    "budget(7)\n"
    "default { bx = 128, by = 1 }\n";

typedef struct trace {
    int n;
    uint64_t index[64];
    fdt_config config[64];
} trace;

/* A pruning row: its name, where its rule is, its count and (unless NULL) its example. */
static void assert_row(const fdt_recipe_prune *row, const char *name, const char *file, int line,
                       uint64_t count, const char *example)
{
    assert_string_equal(row->name, name);
    assert_string_equal(row->file, file);
    assert_int_equal(row->line, line);
    assert_int_equal(row->count, count);
    if (example)
        assert_string_equal(row->example, example);
}

static int trace_visit(void *ctx, const fdt_config *c, uint64_t index)
{
    trace *t = ctx;
    if (t->n < 64) {
        t->index[t->n] = index;
        t->config[t->n] = *c;
    }
    t->n++;
    return 0;
}

static void test_counts(void **state)
{
    (void)state;
    fdt_recipe *r;
    fdt_err e;
    if (load("tiny.lua", tiny, &r, &e))
        fail_msg("%s", e.msg);
    assert_string_equal(fdt_recipe_name(r), "tiny");
    assert_string_equal(fdt_recipe_strategy(r), "random");
    assert_int_equal(fdt_recipe_budget(r), 7);
    assert_int_equal(fdt_recipe_space_size(r), 36);
    fdt_problem p = problem(FDT_OP_D2X, 4, FDT_F32, 64);
    fdt_device d = test_device();
    fdt_recipe_stats st;
    trace t = {0};
    assert_int_equal(fdt_recipe_enumerate(r, &p, &d, trace_visit, &t, &st, &e), 0);
    /* bx*by > 256: only 128x4 (x4 vec/align) = 4. lb = 8*bx*by > 1024: 64x4 and 128x2 = 8.
     * 64x2 banned = 4. Of the 5 block shapes left, vec=2 with align=1 fails in the
     * generator = 5. 36 - 21 = 15 survive. */
    assert_int_equal(st.space, 36);
    assert_int_equal(st.visited, 36);
    assert_int_equal(st.survivors, 15);
    assert_int_equal(t.n, 15);
    assert_int_equal(st.nprune, 4);
    assert_row(&st.prune[0], "at most 256 threads", "tiny.lua", 6, 4,
               "bx=128"); /* by=4 is the default */
    /* the first: 64x4, all defaults until lb is derived */
    assert_row(&st.prune[1], "derive lb: out of range", "tiny.lua", 9, 8,
               "default: derive lb: 2048 is out of range (0..1024)");
    assert_row(&st.prune[2], "no 64x2", "tiny.lua", 10, 4, "by=2,lb=1024: 64x2 is banned");
    assert_row(&st.prune[3], "generator: vec", "", 0, 5, NULL);
    assert_prefix(st.prune[3].example, "config vec=2: needs align");

    /* Order: first listed parameter slowest, values in listed order. */
    char key[256];
    fdt_config_format(&t.config[0], key, sizeof key);
    assert_int_equal(t.index[0], 0);
    assert_string_equal(key, "bx=32,by=1,lb=256");
    fdt_config_format(&t.config[1], key, sizeof key);
    assert_int_equal(t.index[1], 1);
    assert_string_equal(key, "align=2,bx=32,by=1,lb=256");
    fdt_config_format(&t.config[2], key, sizeof key);
    assert_int_equal(t.index[2], 3); /* index 2 is vec=2,align=1: the generator's */
    assert_string_equal(key, "align=2,bx=32,by=1,lb=256,vec=2");
    fdt_config_format(&t.config[14], key, sizeof key);
    assert_int_equal(t.index[14], 27);
    assert_string_equal(key, "align=2,bx=128,by=1,lb=1024,vec=2");

    /* The same walk twice gives the same configs; point() agrees with the walk. */
    trace t2 = {0};
    assert_int_equal(fdt_recipe_enumerate(r, &p, &d, trace_visit, &t2, NULL, &e), 0);
    assert_int_equal(t2.n, 15);
    for (int i = 0; i < 15; i++) {
        assert_int_equal(t.index[i], t2.index[i]);
        assert_memory_equal(&t.config[i], &t2.config[i], sizeof(fdt_config));
        fdt_config c;
        char why[256];
        assert_int_equal(fdt_recipe_point(r, &p, &d, t.index[i], &c, why, sizeof why, &e), 1);
        assert_memory_equal(&c, &t.config[i], sizeof c);
    }
    fdt_config c;
    char why[256];
    assert_int_equal(fdt_recipe_point(r, &p, &d, 2, &c, why, sizeof why, &e), 0);
    assert_prefix(why, "generator: config vec=2: needs align");
    assert_int_equal(fdt_recipe_point(r, &p, &d, 4 * 4, &c, why, sizeof why, &e), 0);
    assert_string_equal(why, "constraint 'no 64x2': 64x2 is banned");
    assert_int_equal(fdt_recipe_point(r, &p, &d, 36, &c, why, sizeof why, &e), -1);
    assert_contains(e.msg, "outside the space");

    /* Stopping early. */
    fdt_recipe_stats st2;
    assert_int_equal(fdt_recipe_enumerate(r, &p, &d, NULL, NULL, &st2, &e), 0);
    assert_int_equal(st2.survivors, 15);

    /* Default: `default {}` then the derives it does not set. */
    assert_int_equal(fdt_recipe_default_config(r, &p, &d, &c, &e), 0);
    fdt_config_format(&c, key, sizeof key);
    assert_string_equal(key, "bx=128,by=1,lb=1024");

    /* A hand-made config: derive fills lb; check says which constraint refuses. */
    assert_int_equal(fdt_config_parse("bx=64,by=2", &c, &e), 0);
    assert_int_equal(fdt_recipe_derive(r, &p, &d, &c, &e), 0);
    assert_int_equal(c.lb, 1024);
    assert_int_equal(fdt_recipe_check(r, &p, &d, &c, why, sizeof why, &e), 0);
    assert_string_equal(why, "constraint 'no 64x2': 64x2 is banned");
    assert_int_equal(fdt_config_parse("bx=32,by=1,lb=256", &c, &e), 0);
    assert_int_equal(fdt_recipe_check(r, &p, &d, &c, why, sizeof why, &e), 1);
    c.order = 17; /* garbage from a careless caller: refused, not a crash */
    assert_int_equal(fdt_recipe_check(r, &p, &d, &c, why, sizeof why, &e), 0);
    assert_string_equal(why, "generator: config order=17: out of range (0..5)");
    fdt_recipe_free(r);
}

static int stop_after_three(void *ctx, const fdt_config *c, uint64_t index)
{
    (void)c;
    (void)index;
    return ++*(int *)ctx == 3;
}

static void test_stop_and_identity(void **state)
{
    (void)state;
    fdt_recipe *r, *r2, *r3;
    fdt_err e;
    assert_int_equal(load("tiny.lua", tiny, &r, &e), 0);
    fdt_problem p = problem(FDT_OP_D2X, 4, FDT_F32, 64);
    fdt_device d = test_device();
    fdt_recipe_stats st;
    int n = 0;
    assert_int_equal(fdt_recipe_enumerate(r, &p, &d, stop_after_three, &n, &st, &e), 0);
    assert_int_equal(n, 3);
    assert_int_equal(st.stopped, 1);
    assert_int_equal(st.survivors, 3);
    assert_int_equal(st.visited, 4); /* the third survivor is index 3 */

    /* Same text, same hash; any change, another hash; `name` overrides the stem. */
    assert_int_equal(load("copy.lua", tiny, &r2, &e), 0);
    assert_string_equal(fdt_recipe_hash(r), fdt_recipe_hash(r2));
    assert_string_equal(fdt_recipe_name(r2), "copy");
    char changed[sizeof tiny + 32];
    snprintf(changed, sizeof changed, "name \"tiny-2\"\n%s", tiny);
    assert_int_equal(load("tiny2.lua", changed, &r3, &e), 0);
    assert_string_not_equal(fdt_recipe_hash(r), fdt_recipe_hash(r3));
    assert_string_equal(fdt_recipe_name(r3), "tiny-2");
    assert_true(fdt_recipe_serves(r3, FDT_OP_WAVE)); /* no ops {}: any operator */
    fdt_sb sb;
    fdt_sb_init(&sb);
    fdt_recipe_describe(r3, &sb);
    assert_contains(fdt_sb_str(&sb), "param bx     32 64 128   (tiny2.lua:3)");
    assert_contains(fdt_sb_str(&sb), "constrain no 64x2   (tiny2.lua:11)");
    fdt_sb_free(&sb);
    fdt_recipe_free(r);
    fdt_recipe_free(r2);
    fdt_recipe_free(r3);
}

static void test_helpers(void **state)
{
    (void)state;
    fdt_recipe *r;
    fdt_err e;
    /* shared_bytes and blocks agree with the generator for the configs they see. */
    assert_int_equal(load("helpers.lua",
                          "ops { \"lap\" }\n"
                          "param(\"bx\", { 32, 64 })\n"
                          "param(\"tile\", { 1, 2 })\n"
                          "param(\"lds\", { 0, 1 })\n"
                          "param(\"nw\", { 16 })\n"
                          "constrain(\"shared\", function(c, dev, prob)\n"
                          "  local want = 0\n"
                          "  if c.lds == 1 then\n"
                          "    want = 2 * (c.bx * c.vec + 2 * prob.R) * (c.by * c.tile + 2 * prob.R) * prob.esize\n"
                          "  end\n"
                          "  assert(shared_bytes(c) == want, \"shared_bytes\")\n"
                          "  local b = (prob.nx // (c.bx * c.vec)) * (prob.ny // (c.by * c.tile)) * (prob.nz // c.nw)\n"
                          "  assert(blocks(c) == b, \"blocks \" .. blocks(c) .. \" vs \" .. b)\n"
                          "  local seen, f, s = {}, pairs(c)\n"
                          "  assert(s == c, \"pairs exposes the table behind c\")\n"
                          "  for k, v in pairs(c) do seen[k] = v end\n"
                          "  assert(seen.bx == c.bx and seen.order == \"xyz\" and seen.nw == 16)\n"
                          "  return dev.llc_bytes == 50 * MiB and prob.op == \"lap\" and prob.prec == \"f64\"\n"
                          "end)\n",
                          &r, &e), 0);
    fdt_problem p = problem(FDT_OP_LAP, 2, FDT_F64, 128);
    fdt_device d = test_device();
    fdt_recipe_stats st;
    if (fdt_recipe_enumerate(r, &p, &d, NULL, NULL, &st, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(st.survivors, 8);
    fdt_recipe_free(r);
}

/* The helpers read the whole config: a ring's shared memory counts its pf planes (366080
 * bytes for lap R=4 f32 bx=256 by=2 tile=4 vec=2 lds=2 pf=6, against 199680 with pf=1), and
 * blocks(c) splits and orders as the generator launches; a parameter derived later counts
 * with its default unless the answer depends on it. */
static void test_helpers_whole_config(void **state)
{
    (void)state;
    fdt_problem ring = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    fdt_config c;
    fdt_err e;
    uint32_t bytes, pf1;
    int dynamic;
    if (fdt_config_parse("bx=256,by=2,tile=4,vec=2,nw=32,lds=2,pf=6", &c, &e) ||
        fdt_gen_shared(&ring, &c, &bytes, &dynamic, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(bytes, 366080); /* (R+1+pf) planes of (256*2 + 2*4) x (2*4 + 2*4) */
    c.pf = 1;
    if (fdt_gen_shared(&ring, &c, &pf1, &dynamic, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(pf1, 199680);
    fdt_problem split = {FDT_OP_LAP, 4, FDT_F32, 256, 100, 64};
    int64_t b[3];
    if (fdt_config_parse("bx=64,by=4,tile=2,vec=2,nw=16,split=3,order=yzx", &c, &e))
        fail_msg("%s", e.msg);
    fdt_gen_blocks(&split, &c, b);
    assert_int_equal(b[0] * b[1] * b[2], 40); /* 2 x 5 (40 of 100 rows) x 4 per launch */

    char text[2048];
    snprintf(text, sizeof text,
             "ops { \"lap\" }\n"
             "param(\"bx\", { 256, 64 })\nparam(\"by\", { 2, 4 })\nparam(\"tile\", { 4, 2 })\n"
             "param(\"vec\", { 2 })\nparam(\"nw\", { 32, 16 })\nparam(\"lds\", { 2, 0 })\n"
             "param(\"pf\", { 6 })\nparam(\"split\", { 1, 3 })\n"
             "param(\"order\", { \"xyz\", \"yzx\" })\n"
             "constrain(\"the ring of pf planes\", function(c)\n"
             "  if c.lds ~= 2 or c.bx ~= 256 or c.by ~= 2 or c.tile ~= 4 then return true end\n"
             "  return shared_bytes(c) == %u, shared_bytes(c) .. \" bytes\"\n"
             "end)\n"
             "constrain(\"blocks as launched\", function(c, dev, prob)\n"
             "  if c.bx ~= 64 or c.by ~= 4 or c.tile ~= 2 or c.nw ~= 16 or c.split ~= 3 or\n"
             "     prob.ny ~= 100 then return true end\n"
             "  return blocks(c) == %lld, blocks(c) .. \" blocks\"\n"
             "end)\n"
             "constrain(\"tables of the recipe's own\", function(c)\n"
             "  return shared_bytes({ bx = 256, by = 2, tile = 4, vec = 2, nw = 32, lds = 2,\n"
             "                        pf = 6 }) == %u and\n"
             "         blocks({ bx = 64, by = 4, tile = 2, vec = 2, nw = 16, split = 3 }) == %lld\n"
             "end)\n"
             "constrain(\"lb is derived later, which no helper needs\", function(c)\n"
             "  return shared_bytes(c) >= 0 and blocks(c) > 0\n"
             "end)\n"
             "derive(\"lb\", function(c) return c.bx * c.by * c.bz end)\n",
             bytes, (long long)(b[0] * b[1] * b[2]), bytes, (long long)(b[0] * b[1] * b[2]));
    fdt_recipe *r;
    assert_int_equal(load("whole.lua", text, &r, &e), 0);
    fdt_device d = test_device();
    d.shared_per_block_optin = 400 * 1024;
    fdt_recipe_stats st;
    if (fdt_recipe_enumerate(r, &split, &d, NULL, NULL, &st, &e))
        fail_msg("%s", e.msg);
    for (int i = 0; i < st.nprune; i++)
        if (st.prune[i].line && st.prune[i].count)
            fail_msg("constraint '%s' pruned %llu configs: %s", st.prune[i].name,
                     (unsigned long long)st.prune[i].count, st.prune[i].example);
    fdt_recipe_free(r);

    /* pf derived after a shared_bytes call: the ring's size depends on it, an error */
    enumerate_fails("ops { \"d2x\" }\nparam(\"lds\", { 2 })\nparam(\"nw\", { 32 })\n"
                    "constrain(\"fits\", function(c) return shared_bytes(c) < 100000 end)\n"
                    "derive(\"pf\", function(c) return 4 end)\n",
                    "bad.lua:4: shared_bytes: c.pf is derived later in the recipe", NULL);
}

/* ---------------------------------------------------------------- catalogue */

static void test_catalogue_entries(void **state)
{
    (void)state;
    fdt_catalogue *c = catalogue();
    const char *need[] = {"MI50",     "MI100",     "MI210",          "MI250",    "MI250X",
                          "MI300A",   "MI300X",    "RX 6900 XT",     "RX 7900 XTX",
                          "A100 40GB", "A100 80GB", "A100 80GB PCIe", "H100 SXM", "H100 PCIe",
                          "H200"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        int found = 0;
        for (int j = 0; j < fdt_catalogue_count(c); j++)
            if (!strcmp(fdt_catalogue_at(c, j)->dev.name, need[i]))
                found = 1;
        if (!found)
            fail_msg("catalogue lacks %s", need[i]);
    }
    for (int j = 0; j < fdt_catalogue_count(c); j++) {
        const fdt_catalogue_entry *g = fdt_catalogue_at(c, j);
        assert_true(strlen(g->source) > 20);
        assert_true(g->dev.peak_bw_gbs > 100);
        assert_true(g->dev.l2_bytes >= 4 << 20);
        assert_true(g->dev.llc_bytes >= g->dev.l2_bytes);
        assert_string_equal(g->dev.catalogue, g->dev.name);
        assert_int_equal(g->dev.live, 0);
        assert_int_equal(g->dev.warp_size, !strcmp(g->dev.vendor, "NVIDIA") ||
                                                   !strncmp(g->dev.name, "RX", 2) ? 32 : 64);
        assert_int_equal(g->dev.shared_per_block,
                         !strcmp(g->dev.vendor, "NVIDIA") ? 48 * 1024 : 64 * 1024);
    }
    fdt_device d;
    fdt_err e;
    assert_int_equal(fdt_catalogue_find(c, "MI250X", NULL, 0, &d, &e), 0);
    assert_int_equal(d.compute_units, 110); /* one GCD */
    assert_int_equal(d.l2_bytes, 8 << 20);
    assert_int_equal(d.mem_bytes, 64LL << 30);
    assert_string_equal(d.arch, "gfx90a");
    assert_int_equal(fdt_catalogue_find(c, "rx7900xtx", NULL, 0, &d, &e), 0);
    assert_string_equal(d.name, "RX 7900 XTX");
    assert_int_equal(d.l2_bytes, 6 << 20);
    assert_int_equal(d.infinity_cache_bytes, 96 << 20);
    assert_int_equal(d.llc_bytes, 96 << 20);
    assert_int_equal(fdt_catalogue_find(c, "H100", NULL, 0, &d, &e), 0);
    assert_int_equal(d.l2_bytes, 50 << 20);
    assert_int_equal(d.compute_units, 132);
    assert_true(d.peak_bw_gbs == 3350);
    fdt_catalogue_free(c);
}

/* A visible device as a backend describes it. */
static fdt_device live(const char *name, const char *arch, int cu)
{
    fdt_device i;
    fdt_device_init(&i);
    i.live = 1;
    i.index = 0;
    snprintf(i.name, sizeof i.name, "%s", name);
    snprintf(i.arch, sizeof i.arch, "%s", arch);
    snprintf(i.vendor, sizeof i.vendor, "%s", arch[0] == 's' ? "NVIDIA" : "AMD");
    i.compute_units = cu;
    i.warp_size = arch[0] == 's' ? 32 : 64;
    i.max_threads_per_block = 1024;
    i.shared_per_block = 65536;
    i.l2_bytes = 8 << 20;
    i.mem_bytes = 64LL << 30;
    return i;
}

static void test_catalogue_find(void **state)
{
    (void)state;
    fdt_catalogue *c = catalogue();
    fdt_device d;
    fdt_err e;
    static const struct {
        const char *text, *name;
    } names[] = {
        {"MI250X", "MI250X"},          {"mi250x", "MI250X"},         {"Instinct MI250X", "MI250X"},
        {"mi-250x", "MI250X"},         {"MI250", "MI250"},           {"rx 6900 xt", "RX 6900 XT"},
        {"RX7900XTX", "RX 7900 XTX"},  {"h100", "H100 SXM"},         {"H100-PCIe", "H100 PCIe"},
        {"h200", "H200"},              {"A100", "A100 40GB"},        {"a100-80gb", "A100 80GB"},
        {"A100 80GB PCIe", "A100 80GB PCIe"}, {"gfx906", "MI50"},    {"GFX1100", "RX 7900 XTX"},
        {"gfx908", "MI100"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (fdt_catalogue_find(c, names[i].text, NULL, 0, &d, &e))
            fail_msg("%s: %s", names[i].text, e.msg);
        assert_string_equal(d.name, names[i].name);
        assert_int_equal(d.live, 0);
    }
    /* An arch shared by several entries: an error naming them, unless one is visible. */
    assert_int_equal(fdt_catalogue_find(c, "gfx90a", NULL, 0, &d, &e), -1);
    assert_string_equal(e.msg, "GPU 'gfx90a': several GPUs have this architecture (MI210, "
                               "MI250, MI250X) and none of them is visible here; name one");
    assert_int_equal(fdt_catalogue_find(c, "sm_90", NULL, 0, &d, &e), -1);
    assert_contains(e.msg, "H100 SXM, H100 PCIe, H100 NVL, H200");
    fdt_device vis[2] = {live("NVIDIA H100 PCIe", "sm_90", 114),
                                 live("AMD Instinct MI250X", "gfx90a", 110)};
    assert_int_equal(fdt_catalogue_find(c, "gfx90a", vis, 2, &d, &e), 0);
    assert_string_equal(d.name, "AMD Instinct MI250X");
    assert_string_equal(d.catalogue, "MI250X");
    assert_int_equal(d.live, 1);
    assert_int_equal(fdt_catalogue_find(c, "sm_90", vis, 2, &d, &e), 0);
    assert_string_equal(d.catalogue, "H100 PCIe");
    /* A name wins over a visible device. */
    assert_int_equal(fdt_catalogue_find(c, "MI210", vis, 2, &d, &e), 0);
    assert_string_equal(d.name, "MI210");
    assert_int_equal(d.live, 0);
    /* Unknown names: suggestions, or the whole list. */
    assert_int_equal(fdt_catalogue_find(c, "mi25x", NULL, 0, &d, &e), -1);
    assert_string_equal(e.msg, "unknown GPU 'mi25x' (did you mean MI250, MI250X, MI50?)");
    assert_int_equal(fdt_catalogue_find(c, "H1OO", NULL, 0, &d, &e), -1);
    assert_contains(e.msg, "did you mean H100 SXM");
    assert_int_equal(fdt_catalogue_find(c, "voodoo", NULL, 0, &d, &e), -1);
    assert_prefix(e.msg, "unknown GPU 'voodoo' (known: MI50, MI100, MI210,");
    assert_int_equal(fdt_catalogue_find(c, "--", NULL, 0, &d, &e), -1);
    fdt_catalogue_free(c);
}

static void test_catalogue_match(void **state)
{
    (void)state;
    fdt_catalogue *c = catalogue();
    static const struct {
        const char *name, *arch;
        int cu;
        const char *want; /* NULL: no match */
    } cases[] = {
        {"NVIDIA H100 80GB HBM3", "sm_90", 132, "H100 SXM"},
        {"NVIDIA H100 PCIe", "sm_90", 114, "H100 PCIe"},
        {"NVIDIA H100 NVL", "sm_90", 132, "H100 NVL"},
        {"NVIDIA H200", "sm_90", 132, "H200"},
        {"NVIDIA H200 NVL", "sm_90", 132, "H200"},
        {"NVIDIA A100-SXM4-40GB", "sm_80", 108, "A100 40GB"},
        {"NVIDIA A100-SXM4-80GB", "sm_80", 108, "A100 80GB"},
        {"NVIDIA A100 80GB PCIe", "sm_80", 108, "A100 80GB PCIe"},
        {"AMD Instinct MI250X", "gfx90a", 110, "MI250X"},
        {"AMD Instinct MI250X / MI250", "gfx90a", 104, "MI250"}, /* CUs decide */
        {"AMD Instinct MI210", "gfx90a", 104, "MI210"},
        {"", "gfx90a", 110, "MI250X"},                          /* only one with 110 CUs */
        {"", "gfx90a", 104, NULL},                              /* MI210 or MI250 */
        {"AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 304, "MI300X"},
        {"AMD Radeon RX 7900 XTX", "gfx1100", 96, "RX 7900 XTX"},
        {"AMD Radeon RX 6800", "gfx1030", 60, NULL},
        {"NVIDIA GeForce RTX 4090", "sm_89", 128, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fdt_device info = live(cases[i].name, cases[i].arch, cases[i].cu);
        const fdt_catalogue_entry *m = fdt_catalogue_match(c, &info);
        if (!cases[i].want) {
            if (m)
                fail_msg("'%s' matched %s", cases[i].name, m->dev.name);
            continue;
        }
        if (!m)
            fail_msg("'%s' (%s, %d CUs) matched nothing", cases[i].name, cases[i].arch,
                     cases[i].cu);
        assert_string_equal(m->dev.name, cases[i].want);
    }
    /* complete: live facts win, the catalogue adds the Infinity Cache and missing bandwidth. */
    fdt_device d = live("AMD Radeon RX 7900 XTX", "gfx1100", 96);
    d.warp_size = 32;
    d.l2_bytes = 6 << 20;
    fdt_catalogue_complete(c, &d);
    assert_string_equal(d.catalogue, "RX 7900 XTX");
    assert_string_equal(d.name, "AMD Radeon RX 7900 XTX");
    assert_int_equal(d.infinity_cache_bytes, 96 << 20);
    assert_int_equal(d.llc_bytes, 96 << 20);
    assert_int_equal(d.l2_bytes, 6 << 20);
    assert_true(d.peak_bw_gbs == 960);
    assert_int_equal(d.live, 1);
    fdt_device other = live("NVIDIA GeForce RTX 4090", "sm_89", 128);
    other.peak_bw_gbs = 1008;
    d = other;
    fdt_catalogue_complete(c, &d);
    assert_string_equal(d.catalogue, "");
    assert_int_equal(d.llc_bytes, 8 << 20);
    assert_true(d.peak_bw_gbs == 1008);
    d = other;
    fdt_catalogue_complete(NULL, &d);
    assert_string_equal(d.name, "NVIDIA GeForce RTX 4090");
    assert_int_equal(d.llc_bytes, 8 << 20);
    fdt_catalogue_free(c);
}

static void catalogue_fails(const char *text, const char *prefix)
{
    fdt_catalogue *c = NULL;
    fdt_err e;
    if (fdt_catalogue_load_text("gpus.lua", text, strlen(text), &c, &e) == 0) {
        fdt_catalogue_free(c);
        fail_msg("catalogue loaded, expected \"%s\"", prefix);
    }
    assert_prefix(e.msg, prefix);
}

#define GPU_FIELDS                                                                         \
    "vendor = \"AMD\", arch = \"gfx90a\", compute_units = 1, warp_size = 64, "               \
    "shared_per_block = 65536, l2_bytes = 1, mem_bytes = 1, peak_bw_gbs = 1, source = \"s\""

static void test_catalogue_errors(void **state)
{
    (void)state;
    catalogue_fails("gpu { name = \"A\", " GPU_FIELDS " }\n"
                    "gpu { name = \"B\", aliases = { \"x\", \"a\" }, " GPU_FIELDS " }\n",
                    "gpus.lua:2: gpu B: 'a' already names A (line 1)");
    catalogue_fails("\ngpu { name = \"A\", aliases = { \"GFX90A\" }, " GPU_FIELDS " }\n",
                    "gpus.lua:2: gpu A: 'GFX90A' looks like an architecture");
    catalogue_fails("gpu { name = \"A\", l3_bytes = 5, " GPU_FIELDS " }\n",
                    "gpus.lua:1: gpu: unknown field 'l3_bytes' (fields: name, aliases,");
    catalogue_fails("gpu { name = \"A\", vendor = \"AMD\" }\n", "gpus.lua:1: gpu: missing field");
    catalogue_fails("gpu { name = \"A\", " GPU_FIELDS ", warp_size = \"64\" }\n",
                    "gpus.lua:1: gpu: warp_size: expected an integer, got a string");
    catalogue_fails("-- empty\n", "gpus.lua: no gpu { } entries");
    catalogue_fails("gpu { name = \"A\" " GPU_FIELDS " }\n", "gpus.lua:1: ");
    /* The catalogue runs in the same guarded sandbox as recipes. */
    catalogue_fails("local i = string.find(string.rep('a', 3e4), '.-.-.-.-b')\n",
                    "gpus.lua:1: string.find: the pattern '.-.-.-.-b' could take");
    /* vendor and arch by the backends' claims (fdt_device_claim_of) */
#define GPU_REST                                                                           \
    "compute_units = 1, warp_size = 32, shared_per_block = 65536, l2_bytes = 1, "             \
    "mem_bytes = 1, peak_bw_gbs = 1, source = \"s\""
    catalogue_fails("gpu { name = \"A\", vendor = \"Intel\", arch = \"xe\", " GPU_REST " }\n",
                    "gpus.lua:1: gpu A: vendor 'Intel' is not one of NVIDIA, AMD");
    catalogue_fails("gpu { name = \"A\", vendor = \"AMD\", arch = \"sm_90\", " GPU_REST " }\n",
                    "gpus.lua:1: gpu A: arch 'sm_90' should look like gfx... (lower case, no "
                    "features)");
    catalogue_fails("gpu { name = \"A\", vendor = \"NVIDIA\", arch = \"xe\", " GPU_REST " }\n",
                    "gpus.lua:1: gpu A: arch 'xe' should look like sm_... (lower case");
    catalogue_fails("gpu { name = \"A\", vendor = \"NVIDIA\", arch = \"SM_90\", " GPU_REST " }\n",
                    "gpus.lua:1: gpu A: arch 'SM_90' should look like sm_...");
    catalogue_fails("gpu { name = \"A\", vendor = \"AMD\", arch = \"gfx90a:xnack-\", "
                    "compute_units = 1, warp_size = 64, shared_per_block = 65536, l2_bytes = 1, "
                    "mem_bytes = 1, peak_bw_gbs = 1, source = \"s\" }\n",
                    "gpus.lua:1: gpu A: arch 'gfx90a:xnack-' should look like gfx...");
    fdt_catalogue *c = NULL;
    fdt_err e;
    const char *ok = "gpu { name = \"A\", vendor = \"NVIDIA\", arch = \"sm_90\", " GPU_REST " }\n"
                     "gpu { name = \"B\", " GPU_FIELDS " }\n";
    assert_int_equal(fdt_catalogue_load_text("gpus.lua", ok, strlen(ok), &c, &e), 0);
    assert_string_equal(fdt_catalogue_at(c, 0)->dev.backend, "cuda");
    assert_string_equal(fdt_catalogue_at(c, 1)->dev.backend, "hip");
    fdt_catalogue_free(c);
#undef GPU_REST
}

/* ---------------------------------------------------------------- lookup */

static void test_find(void **state)
{
    (void)state;
    char path[4096], srcrec[1100], sub[512];
    fdt_err e;
    snprintf(srcrec, sizeof srcrec, "%s/recipes", srcdir);
    const char *dirs[] = {"/nonexistent/share/fdtune/recipes", srcrec};
    unsetenv("FDTUNE_RECIPES");
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_D2Z, NULL, dirs, 2, path, sizeof path, &e), 0);
    assert_string_equal(strrchr(path, '/'), "/d2z.lua");
    assert_int_equal(strncmp(path, srcrec, strlen(srcrec)), 0);
    /* wave has no wave.lua: lap.lua lists it. */
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_WAVE, NULL, dirs, 2, path, sizeof path, &e),
                     0);
    assert_string_equal(strrchr(path, '/'), "/lap.lua");
    /* dwave has its own (wave's space with the deployments) */
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_DWAVE, NULL, dirs, 2, path, sizeof path, &e),
                     0);
    assert_string_equal(strrchr(path, '/'), "/dwave.lua");
    /* the CPU's recipe serves wave too, in its own dialect: each lookup finds its own */
    for (int op = 0; op < FDT_OP_COUNT; op++) {
        assert_int_equal(fdt_recipe_find_for_dialect(op, FDT_DIALECT_C, NULL, dirs, 2, path,
                                                     sizeof path, &e), 0);
        assert_string_equal(strrchr(path, '/'), "/cpu.lua");
    }
    assert_int_equal(fdt_recipe_find_for_dialect(FDT_OP_WAVE, FDT_DIALECT_HIP, NULL, dirs, 2,
                                                 path, sizeof path, &e), 0);
    assert_string_equal(strrchr(path, '/'), "/lap.lua");
    assert_int_equal(fdt_recipe_find_file("gpus.lua", dirs, 2, path, sizeof path, &e), 0);
    assert_string_equal(strrchr(path, '/'), "/gpus.lua");

    /* FDTUNE_RECIPES comes first. */
    snprintf(sub, sizeof sub, "%s/env", tmpdir);
    assert_int_equal(fdt_mkdirs(sub, &e), 0);
    char file[600];
    snprintf(file, sizeof file, "%s/d2z.lua", sub);
    assert_int_equal(fdt_write_file_atomic(file, "ops { \"d2z\" }\n", 14, &e), 0);
    snprintf(file, sizeof file, "%s/zz.lua", sub);
    assert_int_equal(fdt_write_file_atomic(file, "ops { \"d2y\" }\n", 14, &e), 0);
    snprintf(file, sizeof file, "%s/broken.lua", sub);
    assert_int_equal(fdt_write_file_atomic(file, "ops { \"d2x\" \n", 13, &e), 0);
    snprintf(file, sizeof file, "%s/cpu.lua", sub); /* the host CPU's: GPUs never get it */
    const char *cpu_rec = "ops { \"d2y\", \"wave\" }\nparam(\"blk\", { 0, 1 })\n";
    assert_int_equal(fdt_write_file_atomic(file, cpu_rec, strlen(cpu_rec), &e), 0);
    setenv("FDTUNE_RECIPES", sub, 1);
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_D2Z, NULL, dirs, 2, path, sizeof path, &e), 0);
    snprintf(file, sizeof file, "%s/d2z.lua", sub);
    assert_string_equal(path, file);
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_D2Y, NULL, dirs, 2, path, sizeof path, &e), 0);
    snprintf(file, sizeof file, "%s/zz.lua", sub);
    assert_string_equal(path, file);
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_WAVE, NULL, dirs, 2, path, sizeof path, &e),
                     0);
    assert_string_equal(strrchr(path, '/'), "/lap.lua");
    /* the host CPU's recipe is cpu.lua, of the C dialect; the GPUs' is another */
    fdt_recipe *r = NULL;
    if (fdt_recipe_load_for_dialect(FDT_OP_D2Y, FDT_DIALECT_C, NULL, &r, &e))
        fail_msg("%s", e.msg);
    assert_string_equal(fdt_recipe_name(r), "cpu");
    assert_int_equal(fdt_recipe_dialect(r), FDT_DIALECT_C);
    fdt_recipe_free(r);
    assert_int_equal(fdt_recipe_load_for_dialect(FDT_OP_D2Y, FDT_DIALECT_HIP, NULL, &r, &e), 0);
    assert_string_equal(fdt_recipe_name(r), "zz");
    assert_int_equal(fdt_recipe_dialect(r), FDT_DIALECT_HIP);
    fdt_recipe_free(r);
    /* A broken recipe in the directory does not hide the shipped one. */
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_D2X, NULL, dirs, 2, path, sizeof path, &e), 0);
    assert_string_equal(strrchr(path, '/'), "/d2x.lua");
    assert_int_equal(strncmp(path, srcrec, strlen(srcrec)), 0);
    /* Nothing anywhere: the message lists where it looked and the broken recipe. */
    const char *nowhere[] = {"/nonexistent"};
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_LAP, NULL, nowhere, 1, path, sizeof path, &e),
                     -1);
    assert_prefix(e.msg, "no recipe for lap (looked for lap.lua and ops { \"lap\" } in: ");
    assert_contains(e.msg, "/env, /nonexistent)");
    assert_contains(e.msg, "broken.lua:2:");
    unsetenv("FDTUNE_RECIPES");
    assert_int_equal(fdt_recipe_find_file("gpus.lua", nowhere, 1, path, sizeof path, &e), -1);
    assert_string_equal(e.msg, "gpus.lua: not found (looked in: /nonexistent)");

    /* --recipe FILE wins, and must exist. */
    assert_int_equal(fdt_recipe_find_for_op(FDT_OP_LAP, file, dirs, 2, path, sizeof path, &e), 0);
    assert_string_equal(path, file);
    assert_int_equal(
        fdt_recipe_find_for_op(FDT_OP_LAP, "/nonexistent/x.lua", dirs, 2, path, sizeof path, &e),
        -1);
    assert_string_equal(e.msg, "recipe /nonexistent/x.lua: No such file or directory");
    assert_int_equal(unlink(file), 0);
    snprintf(file, sizeof file, "%s/d2z.lua", sub);
    assert_int_equal(unlink(file), 0);
    snprintf(file, sizeof file, "%s/broken.lua", sub);
    assert_int_equal(unlink(file), 0);
    snprintf(file, sizeof file, "%s/cpu.lua", sub);
    assert_int_equal(unlink(file), 0);
    assert_int_equal(rmdir(sub), 0);
}

/* ---------------------------------------------------------------- modules */

/* Writes text as <dir>/lib/<name>.lua (dir NULL: tmpdir). */
static void write_module_in(const char *dir, const char *name, const char *text)
{
    char lib[512], path[700];
    fdt_err e;
    snprintf(lib, sizeof lib, "%s/lib", dir ? dir : tmpdir);
    if (fdt_mkdirs(lib, &e))
        fail_msg("%s", e.msg);
    snprintf(path, sizeof path, "%s/%s.lua", lib, name);
    if (fdt_write_file_atomic(path, text, strlen(text), &e))
        fail_msg("%s", e.msg);
}

static void write_module(const char *name, const char *text)
{
    write_module_in(NULL, name, text);
}

static void test_include(void **state)
{
    (void)state;
    unsetenv("FDTUNE_RECIPES");
    write_module("shared", "-- shared.lua: a value and a rule for the recipe\n"  /* 1 */
                           "local M = { widths = { 32, 64, 128 } }\n"           /* 2 */
                           "function M.rules()\n"                               /* 3 */
                           "  constrain(\"not 128\", function(c)\n"             /* 4 */
                           "    return c.bx ~= 128, \"128 is out\"\n"
                           "  end)\n"
                           "end\n"
                           "M.inner = include \"inner\"\n"
                           "return M\n");
    write_module("inner", "return { n = 7 }\n");
    write_module("quiet", "local unused = 1\n");
    fdt_recipe *r;
    fdt_err e;
    /* A second include hands back the same table (a second run would make a new one), also
     * for a module that another module included first; a module returning nothing gives
     * true. */
    if (load("inc.lua",
             "local a = include \"shared\"\n"                                          /* 1 */
             "local b = include \"shared\"\n"                                          /* 2 */
             "if not rawequal(a, b) then error(\"shared ran twice\") end\n"
             "if not rawequal(a.inner, include \"inner\") then error(\"inner ran twice\") end\n"
             "if include \"quiet\" ~= true then error(\"quiet gave no true\") end\n"
             "param(\"bx\", a.widths)\n"                                               /* 6 */
             "a.rules()\n"                                                             /* 7 */
             "derive(\"lb\", function(c) return c.bx * a.inner.n end)\n",              /* 8 */
             &r, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(fdt_recipe_space_size(r), 3);
    fdt_recipe_stats st;
    trace t = {0};
    assert_int_equal(walk_small(r, trace_visit, &t, &st, &e), 0);
    assert_int_equal(st.survivors, 2);
    assert_int_equal(t.config[0].lb, 32 * 7);
    assert_int_equal(t.config[1].lb, 64 * 7);
    /* The rule's row names the module's file and line. */
    assert_row(&st.prune[0], "not 128", "shared.lua", 4, 1, "bx=128: 128 is out");
    assert_row(&st.prune[1], "derive lb: out of range", "inc.lua", 8, 0, NULL);
    fdt_sb sb;
    fdt_sb_init(&sb);
    fdt_recipe_describe(r, &sb);
    assert_contains(fdt_sb_str(&sb), "param bx     32 64 128   (inc.lua:6)");
    assert_contains(fdt_sb_str(&sb), "constrain not 128   (shared.lua:4)");
    char line[700];
    snprintf(line, sizeof line, "include shared   (%s/lib/shared.lua)", tmpdir);
    assert_contains(fdt_sb_str(&sb), line);
    fdt_sb_free(&sb);
    fdt_recipe_free(r);
}

/* The recipe's own lib/ first, then lib/ of FDTUNE_RECIPES, of the installed recipes and of
 * the source tree; a module found nowhere names every directory looked in. */
static void test_include_resolution(void **state)
{
    (void)state;
    char own[400], env[400], path[600], want[2048];
    fdt_err e;
    snprintf(own, sizeof own, "%s/own", tmpdir);
    snprintf(env, sizeof env, "%s/env2", tmpdir);
    write_module_in(own, "prio", "return \"own\"\n");
    write_module_in(env, "prio", "return \"env\"\n");
    write_module_in(env, "envonly", "return \"env\"\n");
    setenv("FDTUNE_RECIPES", env, 1);
    static const char text[] =
        "if include \"prio\" ~= \"own\" then error(\"prio from elsewhere\") end\n"
        "if include \"envonly\" ~= \"env\" then error(\"envonly\") end\n"
        "local common = include \"common\"\n"   /* the shipped one, from the source tree */
        "common.block_rules()\n";
    snprintf(path, sizeof path, "%s/r.lua", own);
    assert_int_equal(fdt_write_file_atomic(path, text, strlen(text), &e), 0);
    fdt_recipe *r;
    if (fdt_recipe_load(path, NULL, &r, &e))
        fail_msg("%s", e.msg);
    fdt_sb sb;
    fdt_sb_init(&sb);
    fdt_recipe_describe(r, &sb);
    snprintf(want, sizeof want, "include common   (%s/recipes/lib/common.lua)", srcdir);
    assert_contains(fdt_sb_str(&sb), want);
    assert_contains(fdt_sb_str(&sb), "constrain bx is a multiple of the wave size   (common.lua:");
    fdt_sb_free(&sb);
    fdt_recipe_free(r);
    /* Text has no directory of its own: prio comes from FDTUNE_RECIPES. */
    assert_int_equal(fdt_recipe_load_text("t.lua", text, strlen(text), NULL, &r, &e), -1);
    assert_string_equal(e.msg, "t.lua:1: prio from elsewhere");
    static const char env_prio[] = "if include \"prio\" ~= \"env\" then error(\"no\") end\n";
    assert_int_equal(fdt_recipe_load_text("t.lua", env_prio, strlen(env_prio), NULL, &r, &e), 0);
    fdt_recipe_free(r);

    static const char missing[] = "\ninclude \"nosuch\"\n";
    snprintf(path, sizeof path, "%s/m.lua", own);
    assert_int_equal(fdt_write_file_atomic(path, missing, strlen(missing), &e), 0);
    assert_int_equal(fdt_recipe_load(path, NULL, &r, &e), -1);
    snprintf(want, sizeof want, "m.lua:2: include 'nosuch': not found in %s/lib, %s/lib, ", own,
             env);
    assert_prefix(e.msg, want);
    assert_contains(e.msg, "/../share/fdtune/recipes/lib, ");
    snprintf(want, sizeof want, ", %s/recipes/lib", srcdir);
    assert_contains(e.msg, want);
    unsetenv("FDTUNE_RECIPES");
}

static void test_include_names(void **state)
{
    (void)state;
    /* Each of these would name a readable file if it were taken as a path. */
    char path[512];
    write_file("escape.lua", "return 1\n", 9, path, sizeof path);
    write_module("plain", "return 1\n");
    load_fails("include \"../escape\"\n",
               "bad.lua:1: include '../escape': a module is named, not given as a path", NULL);
    char text[700], want[800];
    snprintf(text, sizeof text, "include \"%s/escape\"\n", tmpdir);
    snprintf(want, sizeof want, "bad.lua:1: include '%s/escape': a module is named", tmpdir);
    load_fails(text, want, NULL);
    load_fails("include \"lib/plain\"\n", "bad.lua:1: include 'lib/plain': a module is named",
               NULL);
    load_fails("include \"..\"\n", "bad.lua:1: include '..': a module is named", NULL);
    load_fails("include \"plain.lua\"\n",
               "bad.lua:1: include 'plain.lua': name the module without .lua (include "
               "\"plain\")", NULL);
    load_fails("include \"pl ain\"\n",
               "bad.lua:1: include 'pl ain': a module name has only letters, digits, _ and -",
               NULL);
    load_fails("include \"pl.ain\"\n", "bad.lua:1: include 'pl.ain': a module name has only",
               NULL);
    load_fails("include \"\"\n", "bad.lua:1: include '': a module name has 1 to 47 characters",
               NULL);
    load_fails("include(42)\n", "bad.lua:1: include: expected a module name (a string), got an "
                                "integer", NULL);
    load_fails("include(\"plain\", \"plain\")\n", "bad.lua:1: expected include \"module\"",
               NULL);
    /* The plain name works. */
    fdt_recipe *r;
    fdt_err e;
    if (load("ok.lua", "if include \"plain\" ~= 1 then error(\"no\") end\n", &r, &e))
        fail_msg("%s", e.msg);
    fdt_recipe_free(r);
}

static void test_include_errors(void **state)
{
    (void)state;
    /* Cycles name the chain; where each link was included follows. */
    write_module("cyca", "include \"cycb\"\nreturn {}\n");
    write_module("cycb", "\ninclude \"cyca\"\n");
    load_fails("include \"cyca\"\n",
               "cycb.lua:2: include 'cyca': include cycle: cyca -> cycb -> cyca "
               "(included from cyca.lua:1, included from bad.lua:1)", NULL);
    write_module("selfinc", "include \"selfinc\"\n");
    load_fails("\ninclude \"selfinc\"\n",
               "selfinc.lua:1: include 'selfinc': include cycle: selfinc -> selfinc "
               "(included from bad.lua:2)", NULL);
    /* Errors inside a module: its own file and line, then where it was included. */
    write_module("broken", "local M = {}\n\nerror(\"broken module\")\n");
    load_fails("param(\"bx\", { 32 })\ninclude \"broken\"\n",
               "broken.lua:3: broken module (included from bad.lua:2)", NULL);
    write_module("syntax", "local M = {\n  x = = 1\n}\n");
    load_fails("include \"syntax\"\n", "syntax.lua:2: unexpected symbol near '='",
               "(included from bad.lua:1)");
    write_module("typo", "local M = {}\nM.x = undefined_name + 1\nreturn M\n");
    load_fails("include \"typo\"\n", "typo.lua:2: unknown name 'undefined_name'",
               "(included from bad.lua:1)");
    /* A module's rule failing while the space is walked. */
    write_module("rules", "local M = {}\n"
                          "function M.add()\n"
                          "  constrain(\"boom\", function(c)\n"
                          "    return c.bx < nil\n"
                          "  end)\n"
                          "end\n"
                          "function M.silent()\n"
                          "  constrain(\"silent\", function(c) end)\n"
                          "end\n"
                          "return M\n");
    enumerate_fails("param(\"bx\", { 32 })\nlocal m = include \"rules\"\nm.add()\n",
                    "rules.lua:4: attempt to compare number with nil (included from bad.lua:2) "
                    "(in constraint 'boom' at rules.lua:3, config bx=32)", NULL);
    enumerate_fails("local m = include \"rules\"\nm.silent()\n",
                    "rules.lua:8: constraint 'silent' returned nil", NULL);
    /* Directives a module calls are checked against the recipe's own. */
    load_fails("local m = include \"rules\"\nm.add()\nm.add()\n",
               "rules.lua:3: constrain 'boom': name used twice (first at line 3)", NULL);
    load_fails("constrain(\"boom\", function() return true end)\n"
               "local m = include \"rules\"\nm.add()\n",
               "rules.lua:3: constrain 'boom': name used twice (first at bad.lua:1)", NULL);
    /* include belongs at the top level, like every directive. */
    enumerate_fails("constrain(\"late\", function(c)\n"
                    "  include \"rules\"\n"
                    "  return true\n"
                    "end)\n",
                    "bad.lua:2: include: directives belong at the top level", NULL);
}

/* A module runs in the recipe's sandbox, under its memory and instruction limits. */
static void test_include_sandbox(void **state)
{
    (void)state;
    static const struct {
        const char *module, *text, *want;
    } cases[] = {
        {"uio", "local f = io.open(\"/etc/passwd\")\n", "uio.lua:1: unknown name 'io'"},
        {"uos", "\nos.execute(\"true\")\n", "uos.lua:2: unknown name 'os'"},
        {"uload", "local f = load(\"return 1\")\n", "uload.lua:1: unknown name 'load'"},
        {"ureq", "local m = require(\"os\")\n", "ureq.lua:1: unknown name 'require'"},
        {"udebug", "local d = debug.getinfo(1)\n", "udebug.lua:1: unknown name 'debug'"},
        {"udofile", "dofile(\"/etc/passwd\")\n", "udofile.lua:1: unknown name 'dofile'"},
        {"uloadfile", "loadfile(\"/etc/passwd\")\n", "uloadfile.lua:1: unknown name 'loadfile'"},
        {"upackage", "local p = package.loaded\n", "upackage.lua:1: unknown name 'package'"},
        {"ugc", "collectgarbage()\n", "ugc.lua:1: unknown name 'collectgarbage'"},
        {"udump", "local s = string.dump(function() end)\n",
         "udump.lua:1: attempt to call a nil value (field 'dump')"},
        {"urandom", "local r = math.random()\n",
         "urandom.lua:1: attempt to call a nil value (field 'random')"},
        {"spin", "local M = {}\n\nwhile true do end\n",
         "spin.lua:3: instruction limit exceeded (2000000 instructions)"},
        {"hog", "local t = {}\nfor i = 1, 1e9 do\n  t[i] = i\nend\n",
         "hog.lua:3: memory limit exceeded (8 MiB)"},
        {"bighog", "\nlocal s = string.rep(\"x\", 1 << 30)\n",
         "bighog.lua:2: memory limit exceeded (8 MiB)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[128];
        write_module(cases[i].module, cases[i].text);
        snprintf(text, sizeof text, "include \"%s\"\n", cases[i].module);
        load_fails(text, cases[i].want, "(included from bad.lua:1)");
    }
    /* The instruction budget of a load covers the recipe and its modules together: two loops
     * of 2 instructions a turn (1.2 and 1.0 million of the 2 million) pass alone, not
     * together. */
    write_module("half", "local n = 0\nfor i = 1, 500000 do n = n + 1 end\n");
    static const char six[] = "local n = 0\nfor i = 1, 600000 do n = n + 1 end\n";
    fdt_recipe *r;
    fdt_err e;
    if (load("six.lua", six, &r, &e) || (fdt_recipe_free(r), 0) ||
        load("five.lua", "include \"half\"\n", &r, &e))
        fail_msg("%s", e.msg);
    fdt_recipe_free(r);
    char both[256];
    snprintf(both, sizeof both, "include \"half\"\n%s", six);
    load_fails(both, "bad.lua:", "instruction limit exceeded (2000000 instructions)");
    /* A module's function in a derive or constraint: the limit of one call. */
    write_module("spinfn", "return function(c)\n  while true do end\nend\n");
    enumerate_fails("constrain(\"spin\", include \"spinfn\")\n",
                    "spinfn.lua:2: instruction limit exceeded (200000 instructions): an endless "
                    "loop? (included from bad.lua:1) (in constraint 'spin' at bad.lua:1", NULL);
    /* Binary modules are refused like binary recipes. */
    char path[512];
    write_binary("lib/binmod.lua", "return 1", path, sizeof path);
    load_fails("include \"binmod\"\n", "bad.lua:1: binmod.lua: binary (precompiled) chunks are "
                                       "not accepted", NULL);
}

static void test_include_hash(void **state)
{
    (void)state;
    fdt_recipe *r;
    fdt_err e;
    char h1[17], h2[17], h3[17], want[17];
    static const char text[] = "local m = include \"hmod\"\nparam(\"bx\", { 32 * m.v })\n";
    write_module("hmod", "return { v = 1 }\n");
    assert_int_equal(load("hashed.lua", text, &r, &e), 0);
    snprintf(h1, sizeof h1, "%s", fdt_recipe_hash(r));
    fdt_recipe_free(r);
    /* The same space from other module bytes: another identity. */
    write_module("hmod", "return { v = 1 } -- edited\n");
    assert_int_equal(load("hashed.lua", text, &r, &e), 0);
    snprintf(h2, sizeof h2, "%s", fdt_recipe_hash(r));
    assert_int_equal(fdt_recipe_space_size(r), 1);
    fdt_recipe_free(r);
    assert_string_not_equal(h1, h2);
    write_module("hmod", "return { v = 1 }\n");
    assert_int_equal(load("hashed.lua", text, &r, &e), 0);
    snprintf(h3, sizeof h3, "%s", fdt_recipe_hash(r));
    fdt_recipe_free(r);
    assert_string_equal(h1, h3);
    /* A recipe that includes nothing keeps the hash of its own bytes. */
    assert_int_equal(load("tiny.lua", tiny, &r, &e), 0);
    snprintf(want, sizeof want, "%016llx",
             (unsigned long long)fdt_hash64(tiny, strlen(tiny), FDT_HASH_SEED));
    assert_string_equal(fdt_recipe_hash(r), want);
    fdt_recipe_free(r);
}

/* The lookup reads the directory's own *.lua files only: modules in lib/ are never taken
 * for recipes, even one named after an operator or listing one in ops {}. */
static void test_modules_are_not_recipes(void **state)
{
    (void)state;
    char dir[400], path[600];
    fdt_err e;
    snprintf(dir, sizeof dir, "%s/look", tmpdir);
    write_module_in(dir, "d2x", "ops { \"d2x\" }\nreturn {}\n");
    write_module_in(dir, "any", "ops { \"d2y\" }\nreturn {}\n");
    write_module_in(dir, "helper", "return { op = \"d2z\" }\n");
    static const char zz[] = "local m = include \"helper\"\nops { m.op }\n";
    snprintf(path, sizeof path, "%s/zz.lua", dir);
    assert_int_equal(fdt_write_file_atomic(path, zz, strlen(zz), &e), 0);
    setenv("FDTUNE_RECIPES", dir, 1);
    const char *nowhere[] = {"/nonexistent"};
    char found[4096];
    assert_int_equal(
        fdt_recipe_find_for_op(FDT_OP_D2X, NULL, nowhere, 1, found, sizeof found, &e), -1);
    assert_prefix(e.msg, "no recipe for d2x");
    assert_int_equal(
        fdt_recipe_find_for_op(FDT_OP_D2Y, NULL, nowhere, 1, found, sizeof found, &e), -1);
    assert_prefix(e.msg, "no recipe for d2y");
    /* A recipe of the directory finds its module while the lookup loads it. */
    assert_int_equal(
        fdt_recipe_find_for_op(FDT_OP_D2Z, NULL, nowhere, 1, found, sizeof found, &e), 0);
    assert_string_equal(found, path);
    unsetenv("FDTUNE_RECIPES");
}

/* ---------------------------------------------------------------- fixture */

static int setup(void **state)
{
    (void)state;
    const char *src = getenv("FDTUNE_TEST_SRC");
    snprintf(srcdir, sizeof srcdir, "%s", src ? src : ".");
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fdt_recipe_XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    fdt_recipe_limits_default(&small);
    small.mem_bytes = (size_t)8 << 20;
    small.load_instructions = 2000000;
    small.call_instructions = 200000;
    fdt_recipe_limits_default(&quick);
    quick.load_seconds = quick.walk_seconds = 0.5;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tu_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_recipes),
        cmocka_unit_test(test_cpu_recipe),
        cmocka_unit_test(test_dwave_recipes),
        cmocka_unit_test(test_shipped_recipes_everywhere),
        cmocka_unit_test(test_shipped_split_rule),
        cmocka_unit_test(test_prefix_skip),
        cmocka_unit_test(test_lap_stream_rules),
        cmocka_unit_test(test_lap_ring_amd),
        cmocka_unit_test(test_error_lines),
        cmocka_unit_test(test_runtime_error_lines),
        cmocka_unit_test(test_sandbox),
        cmocka_unit_test(test_library_guards),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_stop_and_identity),
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_helpers_whole_config),
        cmocka_unit_test(test_catalogue_entries),
        cmocka_unit_test(test_catalogue_find),
        cmocka_unit_test(test_catalogue_match),
        cmocka_unit_test(test_catalogue_errors),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_include),
        cmocka_unit_test(test_include_resolution),
        cmocka_unit_test(test_include_names),
        cmocka_unit_test(test_include_errors),
        cmocka_unit_test(test_include_sandbox),
        cmocka_unit_test(test_include_hash),
        cmocka_unit_test(test_modules_are_not_recipes),
    };
    /* FDTUNE_TEST_FILTER=test_sandbox runs one test (while working on it). */
    if (getenv("FDTUNE_TEST_FILTER"))
        cmocka_set_test_filter(getenv("FDTUNE_TEST_FILTER"));
    return cmocka_run_group_tests(tests, setup, teardown);
}
