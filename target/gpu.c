/* The GPUs' rules (both vendors; what differs between them is fdt_arch data): pruning a
 * compiled candidate on what the compiler reports (spills, code past the instruction cache,
 * AMD scratch, shared memory over the limit, a block larger than the code or the device
 * allows, a workgroup that does not fit on a compute unit by the architecture's rules), the
 * shared-memory check before compiling, and the occupancy line. */
#include "target_internal.h"

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

static int gpu_shared_check(const fdt_target *t, const fdt_problem *p, const fdt_config *c,
                            char *why, size_t n)
{
    uint32_t bytes = 0;
    int dynamic = 0;
    fdt_err e;
    if (fdt_gen_shared(p, c, &bytes, &dynamic, &e))
        return 0; /* not generated: fdt_config_check says why */
    return fdt_arch_shared_exceeds(t->arch, &t->device, (long)bytes, dynamic, why, n);
}

static void gpu_occupancy(const fdt_target *t, const fdt_rt_resources *res, const fdt_config *c,
                          const fdt_geometry *g, char *buf, size_t n)
{
    const fdt_arch *a = t->arch;
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
static const char *gpu_spills(const fdt_target *t, const fdt_rt_resources *res, char *buf,
                              size_t n)
{
    int amd = !strcmp(t->arch->vendor, "AMD");
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

static const char *gpu_prune(const fdt_target *t, const fdt_rt_resources *res,
                             const fdt_config *cfg, const fdt_geometry *g, char *buf, size_t n)
{
    const fdt_arch *a = t->arch;
    const fdt_device *d = &t->device;
    int amd = !strcmp(a->vendor, "AMD");
    if (gpu_spills(t, res, buf, n))
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

const fdt_target_rules fdt_target_gpu_rules = {
    .name = "gpu",
    .prune = gpu_prune,
    .spills = gpu_spills,
    .shared_check = gpu_shared_check,
    .occupancy = gpu_occupancy,
};
