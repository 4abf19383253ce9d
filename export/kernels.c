/* The distinct kernels of an export plan. Variant tables name kernels; the same kernel can
 * be named many times (one config best on several devices, a tuned config that is also the
 * fallback), and a header must define each once in its part (the GPUs' or the CPUs'). Kernel
 * names decide identity: the generator's name hashes config and grid, the runtime-dims name
 * the config alone. */
#include "exp_internal.h"
#include "fdt_target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add(fdt_exp_kernels *ks, size_t *cap, int cpu, const char *name,
               const fdt_problem *p, const fdt_config *c, int runtime_dims)
{
    for (size_t i = 0; i < ks->n; i++) {
        const fdt_exp_kernel *k = &ks->v[i];
        if (strcmp(k->name, name) || k->cpu != cpu)
            continue;
        /* Names are 32-bit hashes: the same name must mean the same kernel, or one variant
         * would silently run another's code. */
        int same = !memcmp(&k->cfg, c, sizeof *c) && k->runtime_dims == runtime_dims &&
                   k->problem.op == p->op && k->problem.R == p->R &&
                   k->problem.prec == p->prec && k->problem.absorb_w == p->absorb_w &&
                   k->problem.absorb_s == p->absorb_s &&
                   (runtime_dims || (k->problem.nx == p->nx && k->problem.ny == p->ny &&
                                     k->problem.nz == p->nz));
        return same ? 0 : -2;
    }
    fdt_exp_kernel *v = fdt_grow(ks->v, cap, ks->n, sizeof *v, 16);
    if (!v)
        return -1;
    ks->v = v;
    fdt_exp_kernel *k = &ks->v[ks->n++];
    memset(k, 0, sizeof *k);
    k->cpu = cpu;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->problem = *p;
    k->cfg = *c;
    k->runtime_dims = runtime_dims;
    return 0;
}

int fdt_exp_kernels_collect(const fdt_exp_plan *p, fdt_exp_kernels *ks)
{
    size_t cap = 0;
    ks->v = NULL;
    ks->n = 0;
    for (size_t f = 0; f < p->nfam; f++) {
        const fdt_exp_family *fam = &p->fam[f];
        /* The fallback's grid is only a placeholder (it is an argument): any valid one. */
        fdt_problem any = {fam->op, fam->R, fam->prec, 64, 64, 64, fam->absorb_w,
                           fam->absorb_s};
        if (2 * (int64_t)fam->absorb_w >= any.nx) /* a dwave layer wider than the placeholder */
            any.nx = any.ny = any.nz = 2 * (int64_t)fam->absorb_w + 1;
        int rc = add(ks, &cap, fam->cpu, fam->kfallback, &any, &fam->fallback, 1);
        for (size_t t = 0; t < fam->ntuned && !rc; t++) {
            const fdt_exp_tuned *tu = &fam->tuned[t];
            rc = add(ks, &cap, fam->cpu, tu->kconst, &tu->row.problem, &tu->cfg, 0);
            if (!rc)
                rc = add(ks, &cap, fam->cpu, tu->kruntime, &tu->row.problem, &tu->cfg, 1);
        }
        if (rc) {
            fdt_exp_kernels_free(ks);
            return rc;
        }
    }
    return 0;
}

void fdt_exp_kernels_free(fdt_exp_kernels *ks)
{
    free(ks->v);
    ks->v = NULL;
    ks->n = 0;
}

/* Generates kernel k of a part whose source dialect is t's, into v (freed by the caller). */
static int generate(const fdt_target *t, const fdt_exp_kernel *k, fdt_cand *v, fdt_err *e)
{
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    o.stop_after = FDT_BUILD_GENERATE;
    o.gen.runtime_dims = k->runtime_dims;
    fdt_cand *pv = v;
    fdt_cand_init(v, FDT_CAND_STENCIL, &k->cfg, k->name);
    if (fdt_target_build(t, &k->problem, &pv, 1, &o, e))
        return -1;
    if (fdt_cand_failed(v)) {
        *e = v->err;
        return -1;
    }
    return 0;
}

int fdt_exp_write_kernels(const fdt_exp_plan *p, int cpu, fdt_exp_adapt_fn adapt, fdt_sb *b,
                          fdt_err *e)
{
    fdt_exp_kernels ks;
    int kc = fdt_exp_kernels_collect(p, &ks);
    if (kc)
        return fdt_err_set(e, "export: %s", kc == -2 ? "two different kernels got the same "
                                                       "name (a hash collision); export fewer "
                                                       "results" : "out of memory");
    fdt_target t;
    fdt_target_for_dialect(cpu ? FDT_DIALECT_C : FDT_DIALECT_HIP, &t);
    int rc = 0;
    for (size_t i = 0; i < ks.n && !rc; i++) {
        const fdt_exp_kernel *k = &ks.v[i];
        if (!k->cpu != !cpu) /* the other part's */
            continue;
        fdt_cand v;
        rc = generate(&t, k, &v, e);
        if (rc)
            fdt_err_wrap(e, "export: %skernel %s", cpu ? "CPU " : "", k->name);
        else {
            fdt_sb_puts(b, "\n");
            rc = adapt(v.src, k->name, b, e);
        }
        fdt_cand_free(&v);
    }
    fdt_exp_kernels_free(&ks);
    return rc;
}
