/* Configurations: the parameter catalogue, parsing, the canonical text key, the fallback used
 * when nothing was tuned, and the checks that decide whether a configuration can be
 * generated for a problem. The defaults below are part of every stored key (keys omit
 * defaults), so they must never change. */
#include "fdt_gen.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const fdt_orders[] = {"xyz", "xzy", "yxz", "yzx", "zxy", "zyx", NULL};
static const char *const faults[] = {"none", "coef", "plane", "halo", "oob", "hang", NULL};

#define P(name, def, min, max, choices, help) \
    {#name, offsetof(fdt_config, name), def, min, max, choices, help}
/* Sorted by name: the canonical text lists keys in this order. */
static const fdt_param_info params[] = {
    P(align, 1, 1, 1024, NULL, "leading-dimension alignment in elements (power of two)"),
    P(bx, 64, 1, 1024, NULL, "threads per block along x"),
    P(by, 4, 1, 1024, NULL, "threads per block along y"),
    P(bz, 1, 1, 64, NULL, "threads per block along z"),
    P(fault, 0, 0, FDT_FAULT_COUNT - 1, faults, "test only: deliberately broken kernel"),
    P(l2pf, 0, 0, 256, NULL, "L2 prefetch size hint of the ring's (lds=2, 3) asynchronous "
                             "copies in bytes: 0 (none), 64, 128, 256 (NVIDIA; no effect on "
                             "AMD)"),
    P(lb, 0, 0, 1024, NULL, "launch bounds (max threads per block), 0 for none"),
    P(lds, 0, 0, 3, NULL, "shared-memory tile: 1 x/y neighbours of one plane, 2 an "
                          "asynchronously filled ring of planes, 3 the ring read once per "
                          "plane into sums in registers (all need nw >= 1)"),
    P(mbar, 0, 0, 1, NULL, "the stream (lds=3) hands planes from its copies to its march through "
                           "two barriers per ring slot (mbarrier) instead of a block-wide "
                           "barrier per step, and copies pf - 1 planes ahead (NVIDIA sm_80 on; "
                           "no effect on AMD)"),
    P(nt, 0, 0, 1, NULL, "nontemporal output stores"),
    P(nw, 0, 0, 1 << 30, NULL, "z planes per thread, register sliding window (0: none)"),
    P(order, 0, 0, 5, fdt_orders, "axes walked by blockIdx.x, .y, .z"),
    P(pf, 1, 1, 8, NULL, "planes loaded ahead of the sliding window (needs nw >= 1)"),
    P(split, 1, 1, FDT_SPLIT_MAX, NULL, "y subdomains launched one after another"),
    P(tile, 1, 1, FDT_TILE_MAX, NULL, "outputs per thread along y"),
    P(vec, 1, 1, 4, NULL, "outputs per thread along x as one vector (1, 2, 4)"),
};
#undef P
#define NPARAMS (sizeof params / sizeof params[0])

const fdt_param_info *fdt_config_params(size_t *n)
{
    *n = NPARAMS;
    return params;
}

const fdt_param_info *fdt_config_param(const char *name)
{
    for (size_t i = 0; i < NPARAMS; i++)
        if (!strcmp(params[i].name, name))
            return &params[i];
    return NULL;
}

static int *field(fdt_config *c, const fdt_param_info *pi) { return (int *)((char *)c + pi->offset); }

void fdt_config_default(fdt_config *c)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < NPARAMS; i++)
        *field(c, &params[i]) = params[i].def;
}

void fdt_config_fallback(const fdt_problem *p, fdt_config *c)
{
    (void)p; /* the same config serves every problem; the problem is the question asked */
    fdt_config_default(c);
}

static void list_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NPARAMS && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", params[i].name);
}

int fdt_config_set(fdt_config *c, const char *key, const char *value, fdt_err *e)
{
    const fdt_param_info *pi = fdt_config_param(key);
    if (!pi) {
        char names[256];
        list_names(names, sizeof names);
        return fdt_err_set(e, "unknown config parameter '%s' (known: %s)", key, names);
    }
    if (pi->choices) {
        for (int i = 0; pi->choices[i]; i++)
            if (!strcmp(pi->choices[i], value)) {
                *field(c, pi) = i;
                return 0;
            }
        char opts[128] = "";
        size_t used = 0;
        for (int i = 0; pi->choices[i]; i++)
            used += (size_t)snprintf(opts + used, sizeof opts - used, "%s%s", i ? ", " : "",
                                     pi->choices[i]);
        return fdt_err_set(e, "config %s='%s': expected one of %s", key, value, opts);
    }
    errno = 0;
    char *end;
    long v = strtol(value, &end, 10);
    if (!*value || *end || errno == ERANGE)
        return fdt_err_set(e, "config %s='%s': expected an integer", key, value);
    if (v < pi->min || v > pi->max)
        return fdt_err_set(e, "config %s=%ld: out of range (%d..%d)", key, v, pi->min, pi->max);
    *field(c, pi) = (int)v;
    return 0;
}

int fdt_config_get(const fdt_config *c, const char *key, int *value)
{
    const fdt_param_info *pi = fdt_config_param(key);
    if (!pi)
        return -1;
    *value = *field((fdt_config *)c, pi);
    return 0;
}

int fdt_config_parse(const char *s, fdt_config *c, fdt_err *e)
{
    fdt_config_default(c);
    if (!s || !*s || !strcmp(s, "default"))
        return 0;
    char *copy = strdup(s);
    if (!copy)
        return fdt_err_set(e, "config: out of memory");
    unsigned seen = 0;
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            rc = fdt_err_set(e, "config '%s': expected key=value at '%s'", s, tok);
            break;
        }
        *eq = 0;
        const fdt_param_info *pi = fdt_config_param(tok);
        if (pi) {
            unsigned bit = 1u << (pi - params);
            if (seen & bit) {
                rc = fdt_err_set(e, "config '%s': parameter '%s' given twice", s, tok);
                break;
            }
            seen |= bit;
        }
        if (fdt_config_set(c, tok, eq + 1, e)) {
            rc = -1;
            break;
        }
    }
    free(copy);
    return rc;
}

/* One "name=value" of the parameter catalogue's entry i, appended at *used. */
static void put_param(const fdt_config *c, size_t i, char *buf, size_t n, size_t *used)
{
    int v = *field((fdt_config *)c, &params[i]);
    const char *sep = *used ? "," : "";
    if (params[i].choices)
        *used += (size_t)snprintf(buf + *used, *used < n ? n - *used : 0, "%s%s=%s", sep,
                                  params[i].name, params[i].choices[v]);
    else
        *used += (size_t)snprintf(buf + *used, *used < n ? n - *used : 0, "%s%s=%d", sep,
                                  params[i].name, v);
}

void fdt_config_format(const fdt_config *c, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NPARAMS; i++)
        if (*field((fdt_config *)c, &params[i]) != params[i].def)
            put_param(c, i, buf, n, &used);
    if (!used)
        snprintf(buf, n, "default");
}

void fdt_config_display(const fdt_config *c, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NPARAMS; i++)
        if (strcmp(params[i].name, "fault") || *field((fdt_config *)c, &params[i]))
            put_param(c, i, buf, n, &used);
}

void fdt_config_display_key(const char *key, char *buf, size_t n)
{
    fdt_config c;
    fdt_err e;
    if (*key && key[0] != '(' && fdt_config_parse(key, &c, &e) == 0)
        fdt_config_display(&c, buf, n);
    else
        snprintf(buf, n, "%s", key);
}

static int is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

int fdt_config_check(const fdt_problem *p, const fdt_config *c, fdt_err *e)
{
    for (size_t i = 0; i < NPARAMS; i++) {
        int v = *field((fdt_config *)c, &params[i]);
        if (v < params[i].min || v > params[i].max)
            return fdt_err_set(e, "config %s=%d: out of range (%d..%d)", params[i].name, v,
                               params[i].min, params[i].max);
    }
    int r[3];
    fdt_op_radii(p->op, p->R, r);
    long threads = (long)c->bx * c->by * c->bz;
    if (threads > 1024)
        return fdt_err_set(e, "config bx*by*bz=%ld: more than 1024 threads per block", threads);
    if (c->lb && c->lb < threads)
        return fdt_err_set(e, "config lb=%d: below the block size bx*by*bz=%ld", c->lb, threads);
    if (c->vec != 1 && c->vec != 2 && c->vec != 4)
        return fdt_err_set(e, "config vec=%d: expected 1, 2 or 4", c->vec);
    if (p->prec == FDT_F64 && c->vec == 4)
        return fdt_err_set(e, "config vec=4: f64 vectors are at most 2 wide (16-byte loads)");
    if (!is_pow2(c->align))
        return fdt_err_set(e, "config align=%d: must be a power of two", c->align);
    if (c->align % c->vec)
        return fdt_err_set(e, "config vec=%d: needs align to be a multiple of %d (align=%d), "
                              "so that vector loads are aligned", c->vec, c->vec, c->align);
    /* The grid-dependent checks (portable/fdtuned_geometry.h), reported where they always
     * were: the window first, the split and the launch geometry after the other checks. */
    int fit = FDTUNED_FIT_OK;
    fdt_err fit_e;
    fdt_config_fit(p, c, &fit, &fit_e);
    if (fit == FDTUNED_FIT_WINDOW)
        return fdt_err_set(e, "%s", fit_e.msg);
    if (c->pf != 1 && c->nw < 1)
        return fdt_err_set(e, "config pf=%d: prefetching planes needs a window (nw >= 1)", c->pf);
    if (c->lds) {
        /* lds=2 and 3 also serve d2z: the ring is then a queue of this thread's own planes */
        if (c->lds == 1 && r[0] == 0 && r[1] == 0)
            return fdt_err_set(e, "config lds=1: %s has no x or y neighbours to share",
                               fdt_op_name(p->op));
        if (c->nw < 1)
            return fdt_err_set(e, "config lds=%d: needs nw >= 1 (the tile is filled plane by "
                                  "plane while the block marches along z)", c->lds);
        if (c->bz != 1)
            return fdt_err_set(e, "config lds=%d: needs bz=1 (one tile per block), got bz=%d",
                               c->lds, c->bz);
    }
    if (c->l2pf && c->l2pf != 64 && c->l2pf != 128 && c->l2pf != 256)
        return fdt_err_set(e, "config l2pf=%d: expected 0, 64, 128 or 256", c->l2pf);
    if (c->l2pf && c->lds < 2)
        return fdt_err_set(e, "config l2pf=%d: only the ring families (lds=2, 3) issue "
                              "asynchronous copies to give the hint to", c->l2pf);
    if (c->mbar && c->lds != 3)
        return fdt_err_set(e, "config mbar=1: only the stream (lds=3) has slot barriers, "
                              "got lds=%d", c->lds);
    if (c->mbar && r[0] == 0 && r[1] == 0)
        return fdt_err_set(e, "config mbar=1: %s reads only its own copies, with no barrier "
                              "to replace", fdt_op_name(p->op));
    if (fit != FDTUNED_FIT_OK)
        return fdt_err_set(e, "%s", fit_e.msg);
    uint32_t shared;
    int dynamic;
    return fdt_gen_shared(p, c, &shared, &dynamic, e);
}
