/* The host CPU's rules (backend cpu): a compiled candidate has no resource that limits it the
 * way registers and shared memory limit a GPU kernel, so nothing is pruned beyond a compile
 * failure, nothing spills and no on-chip memory is checked before compiling; the occupancy
 * line says how many threads run the kernel, on which cores. */
#include "target_internal.h"

#include <stdio.h>

static const char *cpu_prune(const fdt_target *t, const fdt_rt_resources *res,
                             const fdt_config *c, const fdt_geometry *g, char *buf, size_t n)
{
    (void)t;
    (void)res;
    (void)c;
    (void)g;
    (void)buf;
    (void)n;
    return NULL;
}

static int cpu_shared_check(const fdt_target *t, const fdt_problem *p, const fdt_config *c,
                            char *why, size_t n)
{
    (void)t;
    (void)p;
    (void)c;
    (void)why;
    (void)n;
    return 0;
}

static void cpu_occupancy(const fdt_target *t, const fdt_rt_resources *res, const fdt_config *c,
                          const fdt_geometry *g, char *buf, size_t n)
{
    (void)res;
    (void)c;
    (void)g;
    const fdt_device *d = &t->device;
    if (d->compute_units > 0)
        snprintf(buf, n, "threads: %d on cores %s (one per physical core, bound close)",
                 d->compute_units, d->core_ids[0] ? d->core_ids : "of the affinity mask");
    else
        snprintf(buf, n, "threads: one per physical core of the affinity mask, bound close");
}

const fdt_target_rules fdt_target_cpu_rules = {
    .name = "cpu",
    .prune = cpu_prune,
    .spills = NULL,
    .shared_check = cpu_shared_check,
    .occupancy = cpu_occupancy,
};
