/* One candidate from configuration to result: generate, compile for the worker's device
 * (in a child process, through the cache), prune on what the compiler reports (spills, AMD
 * scratch, shared memory over the device limit, a block larger than the code allows, a
 * workgroup that does not fit on a compute unit by the architecture's rules), then verify
 * and time on the worker. */
#include "fdt_eval.h"
#include "fdt_arch.h"

#include <stdio.h>
#include <string.h>

/* Shared memory of one block: what the compiler saw (static) and the dynamic part. */
static long block_shared(const fdt_rt_resources *res, const fdt_geometry *g)
{
    return (res->shared_bytes > 0 ? res->shared_bytes : 0) +
           (g->shared_dynamic ? (long)g->shared_bytes : 0);
}

/* What one workgroup of a compiled kernel uses, for the occupancy rules. */
static fdt_arch_use kernel_use(const fdt_rt_resources *res, const fdt_config *c,
                               const fdt_geometry *g)
{
    fdt_arch_use u = {c->bx * c->by * c->bz, res->registers, res->agprs, res->sgprs,
                      block_shared(res, g)};
    return u;
}

int fdt_eval_shared_check(const char *arch, const fdt_problem *p, const fdt_config *c,
                          char *why, size_t n)
{
    uint32_t bytes = 0;
    int dynamic = 0;
    fdt_err e;
    if (fdt_gen_shared(p, c, &bytes, &dynamic, &e))
        return 0; /* not generated: fdt_config_check says why */
    return fdt_arch_shared_exceeds(fdt_arch_find(arch), NULL, (long)bytes, dynamic, why, n);
}

void fdt_eval_occupancy(const char *arch, const fdt_rt_resources *res, const fdt_config *c,
                        const fdt_geometry *g, char *buf, size_t n)
{
    const fdt_arch *a = fdt_arch_find(arch);
    fdt_arch_use u = kernel_use(res, c, g);
    fdt_occupancy o;
    fdt_arch_occupancy(a, &u, &o);
    char line[160];
    fdt_arch_occupancy_format(a, &o, line, sizeof line);
    snprintf(buf, n, "occupancy: %s%s%s", line, a->known ? "" : "; ",
             a->known ? "" : a->fallback);
}

/* What a kernel keeps in memory that belongs in registers, in buf (returned), or NULL:
 * spills (NVIDIA's spill stores to local memory, AMD's VGPRs spilled to scratch) and on AMD
 * any private (scratch) memory without spills: memory traffic per work-item, from arrays the
 * compiler could not keep in registers, that the model knows nothing of. */
static const char *memory_spills(const fdt_arch *a, const fdt_rt_resources *res, char *buf,
                                 size_t n)
{
    int amd = !strcmp(a->vendor, "AMD");
    if (res->spill_bytes > 0 && amd)
        snprintf(buf, n, "spills %d bytes of registers (VGPRs to scratch; %d bytes of scratch "
                 "per work-item)", res->spill_bytes, res->scratch_bytes);
    else if (res->spill_bytes > 0)
        snprintf(buf, n, "spills %d bytes of registers (spill stores to local memory; a %d-byte "
                 "stack frame per thread)", res->spill_bytes, res->scratch_bytes);
    else if (amd && res->scratch_bytes > 0)
        snprintf(buf, n, "uses %d bytes of scratch (private memory) per work-item",
                 res->scratch_bytes);
    else
        return NULL;
    return buf;
}

int fdt_eval_spill_check(const char *arch, const fdt_rt_resources *res, char *why, size_t n)
{
    return memory_spills(fdt_arch_find(arch), res, why, n) != NULL;
}

const char *fdt_eval_prune(const fdt_rt_resources *res, const fdt_config *cfg,
                           const fdt_geometry *g, const fdt_device *d, char *buf, size_t n)
{
    const fdt_arch *a = fdt_arch_of(d);
    int amd = !strcmp(a->vendor, "AMD");
    if (memory_spills(a, res, buf, n))
        return buf;
    /* code past what the instruction cache was measured to hold runs several times slower */
    if (a->code_limit > 0 && res->code_bytes > a->code_limit) {
        snprintf(buf, n, "%.1f KB of machine code outgrow the instruction cache (%s: %.1f KB, "
                 "measured)", res->code_bytes / 1e3, a->name, a->code_limit / 1e3);
        return buf;
    }
    /* dynamic shared memory may go up to the opt-in limit, static only to the default one */
    long shared = block_shared(res, g);
    if (fdt_arch_shared_exceeds(a, d, shared, g->shared_dynamic, buf, n))
        return buf;
    int threads = cfg->bx * cfg->by * cfg->bz;
    if (res->max_threads > 0 && threads > res->max_threads) {
        snprintf(buf, n, "block of %d threads exceeds the %d the code object allows", threads,
                 res->max_threads);
        return buf;
    }
    if (d->max_threads_per_block > 0 && threads > d->max_threads_per_block) {
        snprintf(buf, n, "block of %d threads exceeds the device limit %d", threads,
                 d->max_threads_per_block);
        return buf;
    }
    /* one workgroup must fit on a CU: its waves' registers (VGPRs with the AGPRs, SGPRs on
     * AMD) and its shared memory, by the architecture's allocation rules */
    fdt_arch_use u = kernel_use(res, cfg, g);
    fdt_occupancy o;
    fdt_arch_occupancy(a, &u, &o);
    if (o.groups == 0) {
        snprintf(buf, n, "one %s of %d threads at %d %s per thread does not fit on %s %s of %s "
                 "(%s)", amd ? "workgroup" : "block", threads, res->registers,
                 amd ? "VGPRs" : "registers", amd ? "a" : "an", amd ? "CU" : "SM", a->name,
                 fdt_occ_limit_name(a, o.limit));
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
    if (fdt_eval_prune(&code->res, c, &g, fdt_worker_device(w), why, sizeof why)) {
        r->status = FDT_EVAL_PRUNED;
        snprintf(r->message, sizeof r->message, "%s", why);
        return 0;
    }
    int rc = fdt_worker_eval(w, c, code, kernel, t, r, e);
    r->compile_s = compile_s;
    if (!fdt_device_simulated(fdt_worker_device(w)))
        r->res = res; /* a simulated GPU's answer carries the recorded resources */
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
