/* The one builder of candidates: generate, compile through the isolated, cached compile pool,
 * prune by the target's rules. Tune, retune, evaluate, the worker's verification and
 * reference kernels, bench, gen and export all build their kernels here, each stopping where
 * it needs to (fdt_build_stop). */
#include "fdt_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The invariants of a candidate's state (like SQLite's assert_pager_state): what each state
 * holds and what it does not. */
static void cand_check(const fdt_cand *v)
{
    int has_code = v->code.image != NULL, failed = fdt_cand_failed(v);
    FDT_ASSERT(v->kind == FDT_CAND_STENCIL || v->name, "a verification kernel has a name");
    FDT_ASSERT((v->state == FDT_CAND_GENERATED) == (v->src != NULL),
               "a source is held exactly while GENERATED");
    FDT_ASSERT(has_code == (v->state == FDT_CAND_COMPILED || v->state == FDT_CAND_PRUNED ||
                            v->state == FDT_CAND_READY),
               "a code object is held exactly while COMPILED, PRUNED or READY");
    FDT_ASSERT(!(failed || v->state == FDT_CAND_PRUNED) || v->err.msg[0],
               "a failed or pruned candidate says why");
    FDT_ASSERT(v->state == FDT_CAND_NEW || failed || v->kernel[0], "a built kernel has a name");
}

void fdt_cand_init(fdt_cand *v, fdt_cand_kind kind, const fdt_config *cfg, const char *name)
{
    memset(v, 0, sizeof *v);
    v->kind = kind;
    if (cfg)
        v->cfg = *cfg;
    else
        fdt_config_default(&v->cfg);
    v->name = name;
    v->state = FDT_CAND_NEW;
}

void fdt_cand_free(fdt_cand *v)
{
    free(v->src);
    v->src = NULL;
    fdt_rt_code_free(&v->code);
    memset(&v->code, 0, sizeof v->code);
    v->state = FDT_CAND_NEW;
}

int fdt_cand_failed(const fdt_cand *v)
{
    return v->state == FDT_CAND_GENERATE_FAILED || v->state == FDT_CAND_COMPILE_FAILED;
}

void fdt_build_opts_init(fdt_build_opts *o)
{
    memset(o, 0, sizeof *o);
    o->stop_after = FDT_BUILD_PRUNE;
    o->parallel = 1;
    o->timeout_ms = 300000;
}

/* NEW -> GENERATED (src) or GENERATE_FAILED (err). */
static void generate(const fdt_target *t, const fdt_problem *p, fdt_cand *v,
                     const fdt_build_opts *o)
{
    fdt_sb src;
    fdt_sb_init(&src);
    int rc;
    if (v->kind == FDT_CAND_UTIL) {
        rc = fdt_gen_util_source(&t->gen, p->prec, &src, &v->err);
    } else {
        if (!v->name)
            fdt_gen_kernel_name(p, &v->cfg, v->kernel, sizeof v->kernel);
        rc = fdt_gen_source(&t->gen, p, &v->cfg, v->name ? v->name : v->kernel, &o->gen, &src,
                            &v->err);
    }
    if (rc == 0 && src.oom)
        rc = fdt_err_set(&v->err, "generator: out of memory");
    if (rc) {
        fdt_sb_free(&src);
        v->state = FDT_CAND_GENERATE_FAILED;
        return;
    }
    if (v->name) /* the generator checked a stencil's; the verification kernel's is ours */
        snprintf(v->kernel, sizeof v->kernel, "%s", v->name);
    v->src = fdt_sb_take(&src);
    v->state = FDT_CAND_GENERATED;
}

/* GENERATED -> COMPILED or COMPILE_FAILED, all in one batch of the pool; -1 when none could
 * start (they are NEW again). */
static int compile(const fdt_target *t, fdt_cand **g, size_t ng, const fdt_build_opts *o,
                   fdt_err *e)
{
    if (ng == 0)
        return 0;
    int r = -1;
    fdt_rt_job *jobs = NULL;
    if (fdt_target_compiles(t, e) == 0 && !(jobs = calloc(ng, sizeof *jobs)))
        fdt_err_set(e, "compile: out of memory");
    if (jobs) {
        for (size_t i = 0; i < ng; i++)
            jobs[i] = (fdt_rt_job){.src = g[i]->src, .kernel = g[i]->kernel};
        r = fdt_rt_compile_many_cancel(t->backend, t->arch_name, jobs, ng,
                                       o->parallel > 0 ? o->parallel : 1, o->timeout_ms,
                                       o->on_done, o->cancelled, o->ctx, e);
    }
    for (size_t i = 0; i < ng; i++) {
        fdt_cand *v = g[i];
        free(v->src); /* the code object is what is needed from here on */
        v->src = NULL;
        if (r < 0) {
            v->state = FDT_CAND_NEW;
            continue;
        }
        v->compile_s = jobs[i].seconds;
        if (jobs[i].rc) {
            v->state = FDT_CAND_COMPILE_FAILED;
            v->err = jobs[i].err;
        } else {
            v->state = FDT_CAND_COMPILED;
            v->code = jobs[i].code;
        }
    }
    free(jobs);
    return r < 0 ? -1 : 0;
}

/* COMPILED -> READY or PRUNED (err: the rule's reason). */
static void judge(const fdt_target *t, const fdt_problem *p, fdt_cand *v)
{
    if (v->kind != FDT_CAND_STENCIL) {
        v->state = FDT_CAND_READY;
        return;
    }
    fdt_geometry g;
    char why[256];
    if (fdt_gen_geometry(p, &v->cfg, &g, &v->err)) { /* generated, so it has one */
        fdt_cand_free(v);
        v->state = FDT_CAND_GENERATE_FAILED;
        return;
    }
    if (fdt_target_prune(t, &v->code.res, &v->cfg, &g, why, sizeof why)) {
        v->state = FDT_CAND_PRUNED;
        snprintf(v->err.msg, sizeof v->err.msg, "%s", why);
    } else {
        v->state = FDT_CAND_READY;
    }
}

int fdt_target_build(const fdt_target *t, const fdt_problem *p, fdt_cand *const *v, size_t n,
                     const fdt_build_opts *o, fdt_err *e)
{
    fdt_build_opts defaults;
    if (!o) {
        fdt_build_opts_init(&defaults);
        o = &defaults;
    }
    fdt_cand **built = calloc(n ? n : 1, sizeof *built);
    if (!built)
        return fdt_err_set(e, "build: out of memory");
    size_t nb = 0, ng = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i]->state == FDT_CAND_NEW)
            built[nb++] = v[i];
    for (size_t i = 0; i < nb; i++) {
        generate(t, p, built[i], o);
        if (built[i]->state == FDT_CAND_GENERATED)
            built[ng++] = built[i]; /* the compile's batch, in order */
    }
    int rc = 0;
    if (o->stop_after >= FDT_BUILD_COMPILE)
        rc = compile(t, built, ng, o, e);
    for (size_t i = 0; rc == 0 && o->stop_after == FDT_BUILD_PRUNE && i < ng; i++)
        if (built[i]->state == FDT_CAND_COMPILED)
            judge(t, p, built[i]);
    for (size_t i = 0; i < n; i++)
        cand_check(v[i]);
    free(built);
    return rc;
}
