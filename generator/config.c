/* Configurations: the parameter catalogue, parsing, the canonical text key, the fallback used
 * when nothing was tuned, the checks that decide whether a configuration can be generated
 * for a problem, and its launch geometry in a target's dialect once checked. The defaults
 * below are part of every stored key (keys omit defaults), so they must never change. The
 * grid-dependent facts the checks use (fit, shared memory, geometry) are layout.c's, which
 * calls nothing here. */
#include "fdt_gen.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const faults[] = {"none", "coef", "plane", "halo", "oob", "hang", NULL};
static const char *const binds[] = {"close", "spread", NULL};
static const char *const loops[] = {"kj", "jk", NULL};
static const char *const scheds[] = {"static", "dynamic", NULL};
static const char *const deploys[] = {"complete", "inout", "sides", NULL};
static const char *const etas[] = {"dist", "array", NULL};
static const char *const layers[] = {"branch", "select", NULL};
static const char *const guards[] = {"rows", "none", NULL};

#define HIP FDT_DIALECT_BIT(FDT_DIALECT_HIP)
#define C FDT_DIALECT_BIT(FDT_DIALECT_C)
#define P(name, def, min, max, choices, dialects, help) \
    {#name, offsetof(fdt_config, name), def, min, max, choices, help, dialects}
/* Sorted by name: the canonical text lists keys in this order. */
static const fdt_param_info params[] = {
    P(align, 1, 1, 1024, NULL, HIP | C, "leading-dimension alignment in elements (power of two)"),
    P(bind, 0, 0, 1, binds, C, "thread placement: close (neighbouring cores) or spread"),
    P(blk, 0, 0, 1, NULL, C, "kernel family: 0 the plain loop nest (loops), 1 tiles in y and "
                             "z marching along z (blocked)"),
    P(bulk, 0, 0, 1, NULL, HIP, "the stream with slot barriers (lds=3, mbar=1) fills each ring "
                                "slot by one tensor copy from thread 0 (cp.async.bulk.tensor, "
                                "the kernel's tensor map of its input) that completes on the "
                                "slot's barrier (NVIDIA sm_90 on; AMD gfx9: loads straight "
                                "into LDS)"),
    P(bx, 64, 1, 1024, NULL, HIP, "threads per block along x"),
    P(by, 4, 1, 1024, NULL, HIP, "threads per block along y"),
    P(bz, 1, 1, 64, NULL, HIP, "threads per block along z"),
    P(chunk, 0, 0, 1 << 20, NULL, C, "the schedule's chunk in iterations (0: its default)"),
    P(deploy, FDT_DEPLOY_COMPLETE, 0, 2, deploys, HIP | C,
      "dwave: launches covering the grid: complete (one damped kernel), inout (the damped "
      "kernel on the border shell, the interior kernel on the hole), sides (the interior "
      "kernel, a damped kernel per face)"),
    P(eta, FDT_ETA_DIST, 0, 1, etas, HIP | C, "dwave: the damping computed from the distance "
                                              "to the faces (dist) or read from an array"),
    P(fault, 0, 0, FDT_FAULT_COUNT - 1, faults, HIP | C, "test only: deliberately broken kernel"),
    P(guard, 0, 0, 1, guards, HIP,
      "the stream's (lds=3) output stores: rows (each row tests that it lies in the grid) or "
      "none (every store a full vector, unguarded: where whole blocks cover the grid; the "
      "guard moves where the compiler puts the stores among the next plane's loads)"),
    P(l2pf, 0, 0, 256, NULL, HIP, "L2 prefetch size hint of the ring's (lds=2, 3) asynchronous "
                                  "copies in bytes: 0 (none), 64, 128, 256 (NVIDIA; no effect on "
                                  "AMD)"),
    P(layer, FDT_LAYER_BRANCH, 0, 1, layers, HIP,
      "dwave: the damped kernel's output rows: branch (each row tests whether it touches the "
      "layer and damps only if so) or select (every row computes the damping and keeps the "
      "undamped value where it is 0: no branch between a plane's rows)"),
    P(lb, 0, 0, 1024, NULL, HIP, "launch bounds (max threads per block), 0 for none"),
    P(lds, 0, 0, 3, NULL, HIP, "shared-memory tile: 1 x/y neighbours of one plane, 2 an "
                               "asynchronously filled ring of planes, 3 the ring read once per "
                               "plane into sums in registers (all need nw >= 1)"),
    P(loop, 0, 0, 1, loops, C, "loop order: kj (planes outer, rows inner: address order) or jk; "
                               "blocked: the order of the tiles"),
    P(mbar, 0, 0, 1, NULL, HIP, "the stream (lds=3) hands planes from its copies to its march "
                                "through two barriers per ring slot (mbarrier) instead of a "
                                "block-wide barrier per step, and copies pf - 1 planes ahead "
                                "(NVIDIA sm_80 on; no effect on AMD)"),
    P(nt, 0, 0, 1, NULL, HIP | C, "nontemporal output stores"),
    P(nw, 0, 0, 1 << 30, NULL, HIP, "z planes per thread, register sliding window (0: none)"),
    P(order, 0, 0, 5, fdt_orders, HIP, "axes walked by blockIdx.x, .y, .z"),
    P(pf, 1, 1, 8, NULL, HIP, "planes loaded ahead of the sliding window (needs nw >= 1)"),
    P(pfd, 0, 0, 16, NULL, C, "blocked: software prefetch of the march's leading plane this many "
                              "planes ahead (0: none)"),
    P(sched, 0, 0, 1, scheds, C, "OpenMP schedule of the rows or tiles: static or dynamic"),
    P(simd, 0, 0, 64, NULL, C, "simdlen of the SIMD loops over x (0: the compiler's; a power "
                               "of two)"),
    P(split, 1, 1, FDT_SPLIT_MAX, NULL, HIP, "y subdomains launched one after another"),
    P(thr, 0, 0, 4096, NULL, C, "threads (0: every core this process may use)"),
    P(tile, 1, 1, FDT_TILE_MAX, NULL, HIP, "outputs per thread along y"),
    P(twopass, 0, 0, 1, NULL, C, "lap and wave: each row's x and y terms in one SIMD pass, its "
                                 "z terms in a second"),
    P(tx, 0, 0, 1 << 30, NULL, C, "blocked: tile width in x (0: whole rows)"),
    P(ty, 0, 0, 1 << 30, NULL, C, "blocked: tile height in y rows (0: the whole extent)"),
    P(tz, 0, 0, 1 << 30, NULL, C, "blocked: planes a tile marches along z (0: the whole "
                                  "extent)"),
    P(uj, 1, 1, 4, NULL, C, "blocked: output rows computed together (1, 2, 4)"),
    P(uk, 1, 1, 4, NULL, C, "blocked: output planes computed together (1, 2, 4)"),
    P(vec, 1, 1, 4, NULL, HIP, "outputs per thread along x as one vector (1, 2, 4)"),
    P(xs, 0, 0, 4096, NULL, C, "x strip of the streaming-store and two-pass buffers, a multiple "
                               "of 16 (0: whole rows, at most 1024 values)"),
};
#undef P
#undef HIP
#undef C
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

void fdt_config_default_for(const fdt_gen_target *t, fdt_config *c)
{
    FDT_ASSERT(t && (unsigned)t->dialect < FDT_DIALECT_COUNT, "a known dialect");
    fdt_config_default(c); /* each parameter's default is its dialect's baseline */
}

void fdt_config_fallback(const fdt_problem *p, fdt_config *c)
{
    (void)p; /* the same config serves every problem; the problem is the question asked */
    fdt_config_default(c);
}

void fdt_config_fallback_for(const fdt_gen_target *t, const fdt_problem *p, fdt_config *c)
{
    /* HIP: the direct kernel; C: the plain loop nest (blk=0) with every core */
    fdt_config_default_for(t, c);
    (void)p;
}

const char *fdt_dialect_name(fdt_dialect d)
{
    switch (d) {
    case FDT_DIALECT_HIP: return "HIP";
    case FDT_DIALECT_C: return "C";
    case FDT_DIALECT_COUNT: break;
    }
    return "?";
}

/* The names of the parameters of the dialects in mask (every one: ~0u), comma-separated. */
static void list_names(unsigned mask, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NPARAMS && used < n; i++)
        if (params[i].dialects & mask)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "",
                                     params[i].name);
}

int fdt_config_set(fdt_config *c, const char *key, const char *value, fdt_err *e)
{
    const fdt_param_info *pi = fdt_config_param(key);
    if (!pi) {
        char names[512];
        list_names(~0u, names, sizeof names);
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
    uint64_t seen = 0;
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
            uint64_t bit = (uint64_t)1 << (pi - params);
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

/* A parameter of the catalogue's entry i is set to other than its default. */
static int is_set(const fdt_config *c, size_t i)
{
    return *field((fdt_config *)c, &params[i]) != params[i].def;
}

/* The dialect a config's own parameters say: C when one only the C dialect takes is set. */
static fdt_dialect dialect_of(const fdt_config *c)
{
    for (size_t i = 0; i < NPARAMS; i++)
        if (params[i].dialects == FDT_DIALECT_BIT(FDT_DIALECT_C) && is_set(c, i))
            return FDT_DIALECT_C;
    return FDT_DIALECT_HIP;
}

/* Parameters shown only when set: the test-only fault, dwave's deploy, eta and layer (which
 * every other operator leaves at their defaults), and the stream's bulk form (one form of one
 * family, set on sm_90 alone) and unguarded stores (one form of one family). */
static int shown_when_set(size_t i)
{
    return !strcmp(params[i].name, "fault") || !strcmp(params[i].name, "deploy") ||
           !strcmp(params[i].name, "eta") || !strcmp(params[i].name, "layer") ||
           !strcmp(params[i].name, "bulk") || !strcmp(params[i].name, "guard");
}

static void display(fdt_dialect d, const fdt_config *c, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < NPARAMS; i++)
        if ((params[i].dialects & FDT_DIALECT_BIT(d)) && (!shown_when_set(i) || is_set(c, i)))
            put_param(c, i, buf, n, &used);
}

void fdt_config_display(const fdt_config *c, char *buf, size_t n)
{
    display(dialect_of(c), c, buf, n);
}

void fdt_config_display_for(const fdt_gen_target *t, const fdt_config *c, char *buf, size_t n)
{
    FDT_ASSERT(t && (unsigned)t->dialect < FDT_DIALECT_COUNT, "a known dialect");
    display(t->dialect, c, buf, n);
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

/* Every value in its parameter's range, and none of another dialect's parameters set. */
static int check_params(fdt_dialect d, const fdt_config *c, fdt_err *e)
{
    for (size_t i = 0; i < NPARAMS; i++) {
        int v = *field((fdt_config *)c, &params[i]);
        if (v < params[i].min || v > params[i].max)
            return fdt_err_set(e, "config %s=%d: out of range (%d..%d)", params[i].name, v,
                               params[i].min, params[i].max);
    }
    for (size_t i = 0; i < NPARAMS; i++)
        if (!(params[i].dialects & FDT_DIALECT_BIT(d)) && is_set(c, i)) {
            char names[512];
            list_names(FDT_DIALECT_BIT(d), names, sizeof names);
            return fdt_err_set(e, "config: %s is a %s parameter; the %s dialect takes %s",
                               params[i].name, d == FDT_DIALECT_C ? "GPU" : "CPU",
                               fdt_dialect_name(d), names);
        }
    return 0;
}

/* bulk=1 (templates/ring_bulk.hip): the stream's slot barriers complete its bulk copies.
 * cp.async.bulk (wave's queued rows; AMD's loads into LDS likewise) moves runs that start on
 * 16 bytes in global and shared memory and are 16-byte multiples: a tile row starts HX (the
 * x halo in whole vectors) before the block's first column, whose global address is aligned
 * to `align` values (the layout's base offset and lines), and shared rows are TX = 2 HX +
 * bx vec values long, so align, HX and bx vec must each span a multiple of 16 bytes. A tensor
 * copy's box (the plane's tile, TX x TY) has at most 256 values a side. dwave's launches
 * (boxes of its deployments, the hybrid step's parts) pass no tensor map. r: the operator's
 * radii. */
static int check_bulk(const fdt_problem *p, const fdt_config *c, const int r[3], fdt_err *e)
{
    int es = (int)fdt_prec_size(p->prec), hx = (r[0] + c->vec - 1) / c->vec * c->vec;
    if (!c->mbar)
        return fdt_err_set(e, "config bulk=1: the bulk copies complete on the stream's slot "
                              "barriers: needs lds=3 and mbar=1, got lds=%d mbar=0", c->lds);
    if (c->align * es % 16)
        return fdt_err_set(e, "config bulk=1: bulk copies start on 16 bytes: needs lines "
                              "aligned to 16 bytes (align >= %d), got align=%d", 16 / es,
                           c->align);
    if (c->bx * c->vec * es % 16)
        return fdt_err_set(e, "config bulk=1: bulk copies move multiples of 16 bytes: a block "
                              "row of bx*vec=%d values is %d bytes", c->bx * c->vec,
                           c->bx * c->vec * es);
    if (hx * es % 16)
        return fdt_err_set(e, "config bulk=1: bulk copies start on 16 bytes: the x halo of "
                              "R=%d in whole vectors of vec=%d is %d values, %d bytes",
                           r[0], c->vec, hx, hx * es);
    int64_t tx, ty;
    fdt_gen_tile(p, c, &tx, &ty);
    if (tx > 256 || ty > 256)
        return fdt_err_set(e, "config bulk=1: a tensor copy moves at most 256 values a side: "
                              "the tile is %lld x %lld (2 HX + bx*vec by 2 R + by*tile)",
                           (long long)tx, (long long)ty);
    if (p->op == FDT_OP_DWAVE)
        return fdt_err_set(e, "config bulk=1: dwave's launches take no tensor map (its boxes, "
                              "the hybrid step's parts): needs bulk=0");
    return 0;
}

/* guard=none (templates/stream.hip): the stream's stores of full vectors without the row's
 * test, right only where every thread's outputs lie in the grid: rows of whole blocks
 * (bx*vec values) and every y subdomain (split) of whole blocks (by*tile rows); z is the
 * march's own loop bound. dwave's launches are boxes given at run time. Call after the fit. */
static int check_guard(const fdt_problem *p, const fdt_config *c, fdt_err *e)
{
    if (c->lds != 3)
        return fdt_err_set(e, "config guard=none: only the stream (lds=3) stores without "
                              "guards, got lds=%d", c->lds);
    if (p->op == FDT_OP_DWAVE)
        return fdt_err_set(e, "config guard=none: dwave's launches are boxes given at run "
                              "time: needs guard=rows");
    long long wx = (long long)c->bx * c->vec, wy = (long long)c->by * c->tile;
    if (p->nx % wx)
        return fdt_err_set(e, "config guard=none: rows of nx=%lld values are not whole blocks "
                              "of bx*vec=%lld", (long long)p->nx, wx);
    fdtuned_shape s;
    fdtuned_geometry g;
    fdt_gen_shape(p, c, &s);
    int rc = fdtuned_geometry_make(&s, p->nx, p->ny, p->nz, &g);
    FDT_ASSERT(rc == FDTUNED_FIT_OK, "the config fits its grid (checked before)");
    (void)rc;
    for (int i = 0; i < g.nlaunch; i++) {
        long long rows = g.launch[i].jend - g.launch[i].jbeg;
        if (rows % wy)
            return fdt_err_set(e, "config guard=none: y subdomain %d of %d has %lld rows, not "
                                  "whole blocks of by*tile=%lld", i + 1, g.nlaunch, rows, wy);
    }
    return 0;
}

/* deploy, eta and layer belong to dwave's absorbing layer: any other operator takes the
 * defaults. */
static int check_absorb(const fdt_problem *p, const fdt_config *c, fdt_err *e)
{
    if (p->op == FDT_OP_DWAVE)
        return 0;
    if (c->deploy != FDT_DEPLOY_COMPLETE)
        return fdt_err_set(e, "config deploy=%s: only dwave has an absorbing layer",
                           deploys[c->deploy]);
    if (c->eta != FDT_ETA_DIST)
        return fdt_err_set(e, "config eta=%s: only dwave has an absorbing layer",
                           etas[c->eta]);
    if (c->layer != FDT_LAYER_BRANCH)
        return fdt_err_set(e, "config layer=%s: only dwave has an absorbing layer",
                           layers[c->layer]);
    return 0;
}

/* The C dialect's rules (templates/cpu_*.c). */
static int check_c(const fdt_problem *p, const fdt_config *c, fdt_err *e)
{
    if (check_absorb(p, c, e))
        return -1;
    if (!is_pow2(c->align))
        return fdt_err_set(e, "config align=%d: must be a power of two", c->align);
    if (c->simd && !is_pow2(c->simd))
        return fdt_err_set(e, "config simd=%d: expected 0 (the compiler's) or a power of two",
                           c->simd);
    if (c->uj == 3 || c->uk == 3)
        return fdt_err_set(e, "config %s=3: expected 1, 2 or 4", c->uj == 3 ? "uj" : "uk");
    if (c->xs % 16)
        return fdt_err_set(e, "config xs=%d: expected 0 (whole rows) or a multiple of 16", c->xs);
    if (c->twopass && p->op != FDT_OP_LAP && !fdt_op_is_step(p->op))
        return fdt_err_set(e, "config twopass=1: only lap and wave have terms of two kinds to "
                              "split, not %s", fdt_op_name(p->op));
    if (!c->blk) {
        /* the plain loop nest: the baseline, with none of the blocked family's devices */
        static const char *const blocked_only[] = {"tx", "ty", "tz", "uj", "uk", "pfd",
                                                   "nt", "xs", "twopass"};
        for (size_t i = 0; i < sizeof blocked_only / sizeof blocked_only[0]; i++) {
            const fdt_param_info *pi = fdt_config_param(blocked_only[i]);
            if (is_set(c, (size_t)(pi - params)))
                return fdt_err_set(e, "config %s=%d: only the blocked family (blk=1) takes it",
                                   pi->name, *field((fdt_config *)c, pi));
        }
    }
    return 0;
}

int fdt_config_check_for(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                         fdt_err *e)
{
    FDT_ASSERT(t && (unsigned)t->dialect < FDT_DIALECT_COUNT, "a known dialect");
    if (t->dialect == FDT_DIALECT_C)
        return check_params(FDT_DIALECT_C, c, e) || check_c(p, c, e) ? -1 : 0;
    return fdt_config_check(p, c, e);
}

int fdt_config_check(const fdt_problem *p, const fdt_config *c, fdt_err *e)
{
    if (check_params(FDT_DIALECT_HIP, c, e) || check_absorb(p, c, e))
        return -1;
    if (c->deploy == FDT_DEPLOY_INOUT && c->split > 1)
        return fdt_err_set(e, "config deploy=inout: needs split=1 (the hole is aligned to the "
                              "blocks of one launch), got split=%d", c->split);
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
    if (c->bulk && check_bulk(p, c, r, e))
        return -1;
    if (fit != FDTUNED_FIT_OK)
        return fdt_err_set(e, "%s", fit_e.msg);
    if (c->guard && check_guard(p, c, e))
        return -1;
    uint32_t shared;
    int dynamic;
    return fdt_gen_shared(p, c, &shared, &dynamic, e);
}

int fdt_gen_geometry_for(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                         fdt_geometry *g, fdt_err *e)
{
    FDT_ASSERT(t && (unsigned)t->dialect < FDT_DIALECT_COUNT, "a known dialect");
    memset(g, 0, sizeof *g);
    if (fdt_config_check_for(t, p, c, e))
        return -1;
    if (t->dialect != FDT_DIALECT_C)
        return fdt_gen_geometry(p, c, g, e);
    /* one call of the entry point writes every interior row; its threads share them */
    g->nlaunch = 1;
    for (int d = 0; d < 3; d++)
        g->launch[0].grid[d] = g->launch[0].block[d] = 1;
    g->launch[0].jbeg = p->R;
    g->launch[0].jend = (int)(p->R + p->ny);
    return 0;
}

void fdt_gen_deploy_ext(const fdt_gen_target *t, const fdt_config *c, long long ext[3])
{
    FDT_ASSERT(t && (unsigned)t->dialect < FDT_DIALECT_COUNT, "a known dialect");
    if (t->dialect == FDT_DIALECT_C) {
        ext[0] = ext[1] = ext[2] = 1; /* the C kernels skip single points */
        return;
    }
    ext[0] = (long long)c->bx * c->vec;
    ext[1] = (long long)c->by * c->tile;
    ext[2] = (long long)c->bz * (c->nw ? c->nw : 1);
}

int fdt_gen_box_geometry(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                         const int64_t n[3], fdt_geometry *g, fdt_err *e)
{
    fdt_config cc = *c;
    if (cc.nw > n[2])
        cc.nw = (int)n[2];
    fdt_problem bp = *p;
    bp.nx = n[0];
    bp.ny = n[1];
    bp.nz = n[2];
    return fdt_gen_geometry_for(t, &bp, &cc, g, e);
}

/* The geometry of c on box b of deployment d: the box's own extents, checked as a grid. */
static int deploy_box_geometry(const fdt_gen_target *t, const fdt_problem *p,
                               const fdt_config *c, const fdtuned_box *b, int i,
                               fdt_geometry *g, fdt_err *e)
{
    fdt_problem bp = *p;
    bp.nx = b->n[0];
    bp.ny = b->n[1];
    bp.nz = b->n[2];
    fdt_err why;
    if (t->dialect == FDT_DIALECT_HIP && b->g[0] % c->vec)
        fdt_err_set(&why, "its x origin %lld is not on a whole vector (vec=%d; W=%d)",
                    b->g[0], c->vec, p->absorb_w);
    else if (fdt_gen_geometry_for(t, &bp, c, g, &why) == 0)
        return 0;
    return fdt_err_set(e, "config deploy=%s: box %d (%lldx%lldx%lld at %lld,%lld,%lld): %s",
                       deploys[c->deploy], i, b->n[0], b->n[1], b->n[2], b->g[0], b->g[1],
                       b->g[2], why.msg);
}

int fdt_gen_deploy(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                   fdt_deploy *d, fdt_err *e)
{
    memset(d, 0, sizeof *d);
    if (fdt_problem_check(p, e) || fdt_config_check_for(t, p, c, e))
        return -1;
    const long long n[3] = {p->nx, p->ny, p->nz};
    if (p->op != FDT_OP_DWAVE) { /* one box, the grid */
        d->nbox = 1;
        for (int i = 0; i < 3; i++)
            d->box[0].n[i] = n[i];
        return fdt_gen_geometry_for(t, p, c, &d->geo[0], e);
    }
    long long ext[3];
    fdt_gen_deploy_ext(t, c, ext);
    d->nbox = fdtuned_deploy_boxes(c->deploy, n, p->absorb_w, ext, d->box);
    FDT_ASSERT(d->nbox >= 1 && d->nbox <= FDTUNED_DEPLOY_MAX, "a checked problem has boxes");
    for (int i = 0; i < d->nbox; i++)
        if (deploy_box_geometry(t, p, c, &d->box[i], i, &d->geo[i], e))
            return -1;
    return 0;
}
