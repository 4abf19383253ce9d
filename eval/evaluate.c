/* One candidate from configuration to result: generate, compile for the worker's device
 * (in a child process, through the cache), prune on what the compiler reports (spills,
 * shared memory over the device limit, a block larger than the code allows), then verify
 * and time on the worker. */
#include "fdt_eval.h"

#include <stdio.h>
#include <string.h>

/* Reason a compiled candidate should not be run, or NULL. */
static const char *static_prune(const fdt_rt_code *c, const fdt_config *cfg,
                                const fdt_geometry *g, const fdt_device *d, char *buf,
                                size_t n)
{
    if (c->res.spill_bytes > 0) {
        snprintf(buf, n, "spills %d bytes of registers", c->res.spill_bytes);
        return buf;
    }
    /* dynamic shared memory may go up to the opt-in limit, static only to the default one */
    long shared = (c->res.shared_bytes > 0 ? c->res.shared_bytes : 0) +
                  (g->shared_dynamic ? (long)g->shared_bytes : 0);
    int limit = g->shared_dynamic && d->shared_per_block_optin > d->shared_per_block
                    ? d->shared_per_block_optin
                    : d->shared_per_block;
    if (shared > 0 && limit > 0 && shared > limit) {
        snprintf(buf, n, "needs %ld bytes of shared memory, the device allows %d per block",
                 shared, limit);
        return buf;
    }
    int threads = cfg->bx * cfg->by * cfg->bz;
    if (c->res.registers > 0 && d->regs_per_block > 0 && d->warp_size > 0) {
        /* registers are allocated per warp, in units of 8 per thread (NVIDIA) */
        long warps = (threads + d->warp_size - 1) / d->warp_size;
        long need = warps * d->warp_size * ((c->res.registers + 7) / 8 * 8);
        if (need > d->regs_per_block) {
            snprintf(buf, n, "needs %ld registers per block (%d per thread), the device has %d",
                     need, c->res.registers, d->regs_per_block);
            return buf;
        }
    }
    if (c->res.max_threads > 0 && threads > c->res.max_threads) {
        snprintf(buf, n, "block of %d threads exceeds the %d the code object allows", threads,
                 c->res.max_threads);
        return buf;
    }
    if (d->max_threads_per_block > 0 && threads > d->max_threads_per_block) {
        snprintf(buf, n, "block of %d threads exceeds the device limit %d", threads,
                 d->max_threads_per_block);
        return buf;
    }
    return NULL;
}

int fdt_evaluate_code(fdt_worker *w, const fdt_problem *p, const fdt_config *c,
                      const char *kernel, const fdt_rt_code *code, const fdt_timing_opts *t,
                      fdt_eval_result *r, fdt_err *e)
{
    double compile_s = r->compile_s;
    memset(r, 0, sizeof *r);
    r->compile_s = compile_s;
    fdt_geometry g;
    if (fdt_gen_geometry(p, c, &g, e))
        return -1; /* generated, so it has a geometry: anything else is the caller's error */
    /* what a block holds: the compiler sees only the static part of the shared memory */
    fdt_rt_resources res = code->res;
    if (g.shared_dynamic)
        res.shared_bytes = (res.shared_bytes > 0 ? res.shared_bytes : 0) + (int)g.shared_bytes;
    r->res = res;
    char why[256];
    if (static_prune(code, c, &g, fdt_worker_device(w), why, sizeof why)) {
        r->status = FDT_EVAL_PRUNED;
        snprintf(r->message, sizeof r->message, "%s", why);
        return 0;
    }
    int rc = fdt_worker_eval(w, c, code, kernel, t, r, e);
    r->compile_s = compile_s;
    r->res = res;
    return rc;
}

int fdt_evaluate(fdt_worker *w, const fdt_problem *p, const fdt_config *c,
                 const fdt_timing_opts *t, fdt_eval_result *r, fdt_err *e)
{
    memset(r, 0, sizeof *r);
    const fdt_device *d = fdt_worker_device(w);
    const fdt_rt_backend *b = fdt_rt_backend_find(d->backend);
    char kernel[96];
    fdt_gen_kernel_name(p, c, kernel, sizeof kernel);
    fdt_sb src;
    fdt_sb_init(&src);
    if (fdt_gen_source(p, c, kernel, NULL, &src, e)) {
        fdt_sb_free(&src);
        return -1; /* an invalid config is the caller's error, not a result */
    }
    double t0 = fdt_now();
    fdt_rt_code code;
    fdt_err ce;
    int rc = fdt_rt_compile(b, fdt_sb_str(&src), kernel, d->arch, 300000, &code, &ce);
    fdt_sb_free(&src);
    r->compile_s = fdt_now() - t0;
    if (rc) {
        r->status = FDT_EVAL_COMPILE_ERROR;
        snprintf(r->message, sizeof r->message, "%s", ce.msg);
        return 0;
    }
    rc = fdt_evaluate_code(w, p, c, kernel, &code, t, r, e);
    fdt_rt_code_free(&code);
    return rc;
}
