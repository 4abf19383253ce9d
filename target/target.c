/* Resolving a target, in one place: from a device or from an architecture name, through the
 * backends' claims on architecture names (fdt_device_claim_of) and the table of target kinds
 * below, which says what each backend's targets are: the dialect its compiler reads and the
 * rules that judge what it compiles. */
#include "fdt_target.h"
#include "target_internal.h"

#include <stdio.h>
#include <string.h>

/* One row per backend that claims architectures (fdt_device_claim_at), by its name. */
typedef struct target_kind {
    const char *backend;
    fdt_dialect dialect;
    const fdt_target_rules *rules;
} target_kind;

static const target_kind kinds[] = {
    {"cuda", FDT_DIALECT_HIP, &fdt_target_gpu_rules},
    {"hip", FDT_DIALECT_HIP, &fdt_target_gpu_rules},
    {"cpu", FDT_DIALECT_C, &fdt_target_cpu_rules},
};

static const target_kind *kind_of(const fdt_device_claim *c)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(kinds[i].backend, c->backend))
            return &kinds[i];
    return NULL;
}

/* The kind's dialect and rules and the architecture's facts, for t->device as set. */
static void fill(fdt_target *t, const target_kind *k)
{
    snprintf(t->arch_name, sizeof t->arch_name, "%s", t->device.arch);
    t->arch = fdt_arch_of(&t->device);
    t->gen.dialect = k->dialect;
    t->rules = k->rules;
}

int fdt_target_resolve(const fdt_device *d, fdt_target *t, fdt_err *e)
{
    memset(t, 0, sizeof *t);
    const fdt_device_claim *c = fdt_device_claim_of(d->arch);
    const target_kind *k = c ? kind_of(c) : NULL;
    if (!k)
        return fdt_err_set(e, "device %s: no backend claims its architecture '%s'", d->name,
                           d->arch);
    t->device = *d;
    t->backend = fdt_rt_backend_find(d->backend[0] ? d->backend : c->backend);
    fill(t, k);
    return 0;
}

int fdt_target_for_arch(const char *arch, fdt_target *t, fdt_err *e)
{
    memset(t, 0, sizeof *t);
    if (strlen(arch) >= sizeof t->device.arch)
        return fdt_err_set(e, "target '%.40s...': longer than an architecture name (at most "
                              "%zu characters)", arch, sizeof t->device.arch - 1);
    const fdt_device_claim *c = fdt_device_claim_of(arch);
    const target_kind *k = c ? kind_of(c) : NULL;
    if (!k) {
        fdt_rt_backend_for_arch(arch, e); /* says which targets this build has */
        return -1;
    }
    fdt_device_init(&t->device);
    snprintf(t->device.backend, sizeof t->device.backend, "%s", c->backend);
    snprintf(t->device.vendor, sizeof t->device.vendor, "%s", c->vendor);
    snprintf(t->device.arch, sizeof t->device.arch, "%s", arch);
    t->backend = fdt_rt_backend_find(c->backend);
    fill(t, k);
    return 0;
}

int fdt_target_device_is_cpu(const fdt_device *d)
{
    fdt_target t;
    fdt_err e;
    return fdt_target_resolve(d, &t, &e) == 0 && t.gen.dialect == FDT_DIALECT_C;
}

void fdt_target_for_dialect(fdt_dialect dialect, fdt_target *t)
{
    memset(t, 0, sizeof *t);
    fdt_device_init(&t->device);
    t->gen.dialect = dialect;
}

int fdt_target_compiles(const fdt_target *t, fdt_err *e)
{
    if (t->backend)
        return 0;
    if (!t->rules)
        return fdt_err_set(e, "a source-only target compiles nothing");
    if (!fdt_rt_backend_for_arch(t->arch_name, e)) /* names this build's targets */
        return -1;
    return fdt_err_set(e, "device %s: backend '%s' is not in this build", t->device.name,
                       t->device.backend);
}

const char *fdt_target_prune(const fdt_target *t, const fdt_rt_resources *res,
                             const fdt_config *c, const fdt_geometry *g, char *buf, size_t n)
{
    FDT_ASSERT(t->rules, "only a target with rules judges resources");
    return t->rules->prune(t, res, c, g, buf, n);
}

int fdt_target_spill_check(const fdt_target *t, const fdt_rt_resources *res, char *why,
                           size_t n)
{
    FDT_ASSERT(t->rules, "only a target with rules judges resources");
    return t->rules->spills && t->rules->spills(t, res, why, n) != NULL;
}

int fdt_target_shared_check(const fdt_target *t, const fdt_problem *p, const fdt_config *c,
                            char *why, size_t n)
{
    FDT_ASSERT(t->rules, "only a target with rules judges resources");
    return t->rules->shared_check(t, p, c, why, n);
}

void fdt_target_occupancy(const fdt_target *t, const fdt_rt_resources *res, const fdt_config *c,
                          const fdt_geometry *g, char *buf, size_t n)
{
    FDT_ASSERT(t->rules, "only a target with rules judges resources");
    t->rules->occupancy(t, res, c, g, buf, n);
}
