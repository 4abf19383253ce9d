/* The GPU catalogue (recipes/gpus.lua): named GPUs with aliases and published hardware
 * facts, loaded by the same sandboxed Lua host as recipes. It lets `--gpu MI250X` describe a
 * device on a machine that has none (dry runs, exports), completes what drivers do not
 * report (AMD's Infinity Cache, a model's achievable bandwidth) or misreport (a peak
 * bandwidth far from the model's), and recognises a live GPU. Names compare on letters and
 * digits only, case-folded, so "rx7900xtx" finds "RX 7900 XTX". An architecture is not a
 * name: several GPUs share one, so an arch picks a visible device of that arch, or the only
 * catalogue entry with it. */
#include "fdt_recipe.h"
#include "luahost.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

struct fdt_catalogue {
    fdt_catalogue_entry *v;
    int n, cap;
    char chunk[64];
};


/* ---------------------------------------------------------------- the gpu {} directive */

enum { K_STR, K_LIST, K_INT, K_NUM };
static const struct key {
    const char *name;
    int type, required;
} keys[] = {
    {"name", K_STR, 1},           {"aliases", K_LIST, 0},
    {"match", K_LIST, 0},         {"vendor", K_STR, 1},
    {"arch", K_STR, 1},           {"compute_units", K_INT, 1},
    {"warp_size", K_INT, 1},      {"max_threads_per_block", K_INT, 0},
    {"shared_per_block", K_INT, 1}, {"shared_per_block_optin", K_INT, 0},
    {"l2_bytes", K_INT, 1},       {"infinity_cache_bytes", K_INT, 0},
    {"mem_bytes", K_INT, 1},      {"peak_bw_gbs", K_NUM, 1},
    {"achievable_bw_gbs", K_NUM, 0}, {"source", K_STR, 1},
    {"note", K_STR, 0},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const char *str_field(lua_State *L, const char *k, size_t max)
{
    lua_getfield(L, 1, k);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    if (lua_type(L, -1) != LUA_TSTRING)
        fdt_luahost_error(L, "gpu: %s: expected a string, got %s", k, fdt_luahost_typename(L, -1));
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (len == 0 || len >= max)
        fdt_luahost_error(L, "gpu: %s: must be 1 to %zu characters", k, max - 1);
    lua_pop(L, 1); /* the table keeps the string alive */
    return s;
}

static long long int_field(lua_State *L, const char *k, long long def, long long min,
                           long long max)
{
    lua_getfield(L, 1, k);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return def;
    }
    long long v;
    if (fdt_luahost_tointeger(L, -1, &v))
        fdt_luahost_error(L, "gpu: %s: expected an integer, got %s", k, fdt_luahost_typename(L, -1));
    if (v < min || v > max)
        fdt_luahost_error(L, "gpu: %s: %lld is out of range (%lld..%lld)", k, v, min, max);
    lua_pop(L, 1);
    return v;
}

/* A bandwidth in GB/s, positive and at most max; 0 when an optional one is absent. */
static double bw_field(lua_State *L, const char *gpu, const char *k, int required, double max)
{
    lua_getfield(L, 1, k);
    if (lua_isnil(L, -1) && !required) {
        lua_pop(L, 1);
        return 0;
    }
    if (lua_type(L, -1) != LUA_TNUMBER || !(lua_tonumber(L, -1) > 0) ||
        lua_tonumber(L, -1) > max)
        fdt_luahost_error(L, "gpu %s: %s: expected a positive number%s, got %s", gpu, k,
               max < 1e12 ? " no larger than peak_bw_gbs" : "", fdt_luahost_typename(L, -1));
    double v = lua_tonumber(L, -1);
    lua_pop(L, 1);
    return v;
}

static int list_field(lua_State *L, const char *k, char out[][48], int max)
{
    lua_getfield(L, 1, k);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return 0;
    }
    if (!lua_istable(L, -1))
        fdt_luahost_error(L, "gpu: %s: expected a list of strings, got %s", k, fdt_luahost_typename(L, -1));
    int n = (int)luaL_len(L, -1);
    lua_Integer count = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        count++;
    }
    if (count != n)
        fdt_luahost_error(L, "gpu: %s: expected a list of strings (keys 1..n)", k);
    if (n > max)
        fdt_luahost_error(L, "gpu: %s: at most %d entries", k, max);
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        size_t len;
        if (lua_type(L, -1) != LUA_TSTRING || (lua_tolstring(L, -1, &len), len == 0 || len >= 48))
            fdt_luahost_error(L, "gpu: %s: entry #%d must be a string of 1 to 47 characters", k, i);
        snprintf(out[i - 1], 48, "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return n;
}

/* The base arch (fdtuned_arch_base_len), lower case: how a --gpu text or a live arch is
 * compared with the catalogue's. */
static void lower_arch(const char *s, char *out, size_t n)
{
    size_t k = 0, len = (size_t)fdtuned_arch_base_len(s);
    for (; k < len && k + 1 < n; k++)
        out[k] = (char)tolower((unsigned char)s[k]);
    out[k] = 0;
}

/* The first backend's claim of GPUs by vendor (fdt_device_claim_at); NULL: no backend's. */
static const fdt_device_claim *vendor_claim(const char *vendor)
{
    const fdt_device_claim *c;
    for (int i = 0; (c = fdt_device_claim_at(i)); i++)
        if (c->vendor[0] && !strcmp(c->vendor, vendor)) /* cpu claims no vendor */
            return c;
    return NULL;
}

/* The vendors of the backends' claims, each once: "NVIDIA, AMD". */
static void vendor_names(char *buf, size_t n)
{
    size_t used = 0;
    const fdt_device_claim *c;
    buf[0] = 0;
    for (int i = 0; (c = fdt_device_claim_at(i)) && used < n; i++)
        if (c->vendor[0] && vendor_claim(c->vendor) == c)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", c->vendor);
}

/* The entry table at index 1 has only known fields, and every required one (raises). */
static void check_keys(lua_State *L)
{
    const char *bad = NULL;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            fdt_luahost_error(L, "gpu: keys must be field names");
        const char *k = lua_tostring(L, -1);
        size_t i = 0;
        while (i < NKEYS && strcmp(keys[i].name, k))
            i++;
        if (i == NKEYS && (!bad || strcmp(k, bad) < 0))
            bad = k;
    }
    if (bad) {
        char names[512];
        size_t used = 0;
        for (size_t i = 0; i < NKEYS; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     keys[i].name);
        fdt_luahost_error(L, "gpu: unknown field '%s' (fields: %s)", bad, names);
    }
    for (size_t i = 0; i < NKEYS; i++)
        if (keys[i].required) {
            lua_getfield(L, 1, keys[i].name);
            if (lua_isnil(L, -1))
                fdt_luahost_error(L, "gpu: missing field '%s'", keys[i].name);
            lua_pop(L, 1);
        }
}

static int d_gpu(lua_State *L)
{
    fdt_catalogue *cat = lua_touserdata(L, lua_upvalueindex(1));
    fdt_luahost *h = lua_touserdata(L, lua_upvalueindex(2));
    if (h->frozen)
        return fdt_luahost_error(L, "gpu: only at the top level of the catalogue");
    if (lua_gettop(L) != 1 || !lua_istable(L, 1))
        return fdt_luahost_error(L, "gpu: expected gpu { name = \"...\", ... }");
    check_keys(L);
    if (cat->n == cat->cap) {
        int cap = cat->cap ? 2 * cat->cap : 32;
        fdt_catalogue_entry *v = realloc(cat->v, (size_t)cap * sizeof *v);
        if (!v)
            return fdt_luahost_error(L, "gpu: out of memory");
        cat->v = v;
        cat->cap = cap;
    }
    fdt_catalogue_entry *g = &cat->v[cat->n];
    memset(g, 0, sizeof *g);
    fdt_device *d = &g->dev;
    fdt_device_init(d);
    snprintf(d->name, sizeof d->name, "%s", str_field(L, "name", sizeof d->catalogue));
    snprintf(d->catalogue, sizeof d->catalogue, "%s", d->name);
    const char *vendor = str_field(L, "vendor", sizeof d->vendor);
    const fdt_device_claim *want = vendor_claim(vendor);
    if (!want) {
        char vendors[128];
        vendor_names(vendors, sizeof vendors);
        return fdt_luahost_error(L, "gpu %s: vendor '%s' is not one of %s", d->name, vendor,
                                 vendors);
    }
    snprintf(d->vendor, sizeof d->vendor, "%s", vendor);
    const char *arch = str_field(L, "arch", sizeof d->arch);
    lower_arch(arch, d->arch, sizeof d->arch);
    const fdt_device_claim *claim = fdt_device_claim_of(d->arch);
    if (!claim || strcmp(claim->vendor, vendor) || strcmp(d->arch, arch))
        return fdt_luahost_error(L, "gpu %s: arch '%s' should look like %s (lower case, no "
                                 "features)", d->name, arch, want->form);
    snprintf(d->backend, sizeof d->backend, "%s", claim->backend);
    d->compute_units = (int)int_field(L, "compute_units", 0, 1, 100000);
    d->warp_size = (int)int_field(L, "warp_size", 0, 1, 1024);
    if (d->warp_size != 32 && d->warp_size != 64)
        return fdt_luahost_error(L, "gpu %s: warp_size %d is not 32 or 64", d->name, d->warp_size);
    d->max_threads_per_block = (int)int_field(L, "max_threads_per_block", 1024, 1, 1 << 20);
    d->shared_per_block = (int)int_field(L, "shared_per_block", 0, 1, 1 << 30);
    d->shared_per_block_optin =
        (int)int_field(L, "shared_per_block_optin", d->shared_per_block, d->shared_per_block,
                       1 << 30);
    d->l2_bytes = int_field(L, "l2_bytes", 0, 1, 1LL << 40);
    d->infinity_cache_bytes = int_field(L, "infinity_cache_bytes", 0, 0, 1LL << 40);
    d->mem_bytes = int_field(L, "mem_bytes", 0, 1, 1LL << 50);
    d->peak_bw_gbs = bw_field(L, d->name, "peak_bw_gbs", 1, 1e12);
    d->achievable_bw_gbs = bw_field(L, d->name, "achievable_bw_gbs", 0, d->peak_bw_gbs);
    fdt_device_derive(d);
    g->naliases = list_field(L, "aliases", g->aliases, FDT_CATALOGUE_MAX_ALIASES);
    g->nmatch = list_field(L, "match", g->match, FDT_CATALOGUE_MAX_ALIASES);
    snprintf(g->source, sizeof g->source, "%s", str_field(L, "source", sizeof g->source));
    const char *note = str_field(L, "note", sizeof g->note);
    snprintf(g->note, sizeof g->note, "%s", note ? note : "");
    lua_Debug ar;
    g->line = lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar) ? ar.currentline : 0;

    /* Names and aliases must resolve to one entry, and never look like an architecture. */
    char mine[1 + FDT_CATALOGUE_MAX_ALIASES][48];
    int nmine = 0;
    fdt_luahost_normalize(d->name, mine[nmine++], 48);
    for (int i = 0; i < g->naliases; i++)
        fdt_luahost_normalize(g->aliases[i], mine[nmine++], 48);
    for (int i = 0; i < nmine; i++) {
        const char *text = i ? g->aliases[i - 1] : d->name;
        if (!mine[i][0])
            return fdt_luahost_error(L, "gpu %s: '%s' has no letters or digits", d->name, text);
        if ((!strncmp(mine[i], "gfx", 3) && isdigit((unsigned char)mine[i][3])) ||
            (!strncmp(mine[i], "sm", 2) && isdigit((unsigned char)mine[i][2])))
            return fdt_luahost_error(L, "gpu %s: '%s' looks like an architecture; architectures are "
                             "matched through 'arch', not as names", d->name, text);
        for (int j = 0; j < cat->n; j++) {
            const fdt_catalogue_entry *o = &cat->v[j];
            char t[48];
            for (int a = -1; a < o->naliases; a++) {
                fdt_luahost_normalize(a < 0 ? o->dev.name : o->aliases[a], t, sizeof t);
                if (!strcmp(t, mine[i]))
                    return fdt_luahost_error(L, "gpu %s: '%s' already names %s (line %d)", d->name, text,
                                  o->dev.name, o->line);
            }
        }
    }
    cat->n++;
    return 0;
}

static int register_gpu(lua_State *L)
{
    void **ud = lua_touserdata(L, 1);
    lua_pushlightuserdata(L, ud[0]);
    lua_pushlightuserdata(L, ud[1]);
    lua_pushcclosure(L, d_gpu, 2);
    lua_setglobal(L, "gpu");
    return 0;
}

int fdt_catalogue_load_text(const char *name, const char *text, size_t len, fdt_catalogue **out,
                            fdt_err *e)
{
    *out = NULL;
    fdt_catalogue *cat = calloc(1, sizeof *cat);
    if (!cat)
        return fdt_err_set(e, "catalogue: out of memory");
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    snprintf(cat->chunk, sizeof cat->chunk, "%s", base);
    fdt_luahost h;
    if (fdt_luahost_open(&h, base, (size_t)16 << 20, e)) {
        free(cat);
        return -1;
    }
    snprintf(h.hint, sizeof h.hint, " (the catalogue knows: gpu { ... }, KiB, MiB, GiB)");
    void *ud[2] = {cat, &h};
    int rc = fdt_luahost_cpcall(&h, register_gpu, ud, e);
    if (!rc)
        rc = fdt_luahost_load(&h, text, len, e);
    fdt_luahost_set_time(&h, 10); /* a recipe file's time limit */
    if (!rc)
        rc = fdt_luahost_call(&h, 0, 0, 10000000LL, e);
    fdt_luahost_close(&h);
    if (!rc && cat->n == 0)
        rc = fdt_err_set(e, "%s: no gpu { } entries", base);
    if (rc) {
        fdt_catalogue_free(cat);
        return -1;
    }
    *out = cat;
    return 0;
}

int fdt_catalogue_load(const char *path, fdt_catalogue **out, fdt_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    if (fdt_read_file(path, &text, &len, e))
        return fdt_err_wrap(e, "catalogue");
    int rc = fdt_catalogue_load_text(path, text, len, out, e);
    free(text);
    return rc;
}

void fdt_catalogue_free(fdt_catalogue *c)
{
    if (!c)
        return;
    free(c->v);
    free(c);
}

int fdt_catalogue_count(const fdt_catalogue *c) { return c->n; }

const fdt_catalogue_entry *fdt_catalogue_at(const fdt_catalogue *c, int i)
{
    return i >= 0 && i < c->n ? &c->v[i] : NULL;
}

/* ---------------------------------------------------------------- matching */

/* Longest name, alias or match string (normalized) contained in the normalized text. */
static size_t name_hit(const fdt_catalogue_entry *g, const char *text)
{
    size_t best = 0;
    char t[48];
    for (int a = -1; a < g->naliases + g->nmatch; a++) {
        const char *s = a < 0 ? g->dev.name : a < g->naliases ? g->aliases[a]
                                                                : g->match[a - g->naliases];
        fdt_luahost_normalize(s, t, sizeof t);
        size_t n = strlen(t);
        if (n > best && strstr(text, t))
            best = n;
    }
    return best;
}

const fdt_catalogue_entry *fdt_catalogue_match(const fdt_catalogue *c, const fdt_device *dev)
{
    char arch[32], name[160];
    lower_arch(dev->arch, arch, sizeof arch);
    fdt_luahost_normalize(dev->name, name, sizeof name);
    const fdt_catalogue_entry *best = NULL, *by_cu = NULL;
    int best_cu = 0, ncu = 0;
    size_t best_len = 0;
    for (int i = 0; i < c->n; i++) {
        const fdt_catalogue_entry *g = &c->v[i];
        if (strcmp(g->dev.arch, arch))
            continue;
        int cu = g->dev.compute_units == dev->compute_units;
        size_t len = name[0] ? name_hit(g, name) : 0;
        if (len && (!best || cu > best_cu || (cu == best_cu && len > best_len))) {
            best = g;
            best_cu = cu;
            best_len = len;
        }
        if (cu) {
            by_cu = g;
            ncu++;
        }
    }
    if (best)
        return best;
    return ncu == 1 ? by_cu : NULL;
}

int fdt_catalogue_bw_plausible(double live_gbs, double catalogue_gbs)
{
    if (!(live_gbs > 0))
        return 0;
    if (!(catalogue_gbs > 0))
        return 1;
    return fabs(live_gbs - catalogue_gbs) <= FDT_BW_PLAUSIBLE * catalogue_gbs;
}

void fdt_catalogue_complete(const fdt_catalogue *c, fdt_device *d)
{
    const fdt_catalogue_entry *m = c ? fdt_catalogue_match(c, d) : NULL;
    if (m) {
        const fdt_device *e = &m->dev;
        snprintf(d->catalogue, sizeof d->catalogue, "%s", e->name);
        /* The driver knows this device best; the catalogue fills what it does not say. */
        if (!d->vendor[0])
            snprintf(d->vendor, sizeof d->vendor, "%s", e->vendor);
        if (d->warp_size <= 0)
            d->warp_size = e->warp_size;
        if (d->max_threads_per_block <= 0)
            d->max_threads_per_block = e->max_threads_per_block;
        if (d->shared_per_block <= 0)
            d->shared_per_block = e->shared_per_block;
        if (d->shared_per_block_optin <= 0)
            d->shared_per_block_optin = e->shared_per_block_optin;
        if (d->l2_bytes <= 0)
            d->l2_bytes = e->l2_bytes;
        if (d->mem_bytes <= 0)
            d->mem_bytes = e->mem_bytes;
        if (!fdt_catalogue_bw_plausible(d->peak_bw_gbs, e->peak_bw_gbs))
            d->peak_bw_gbs = e->peak_bw_gbs;
        d->achievable_bw_gbs = e->achievable_bw_gbs;
        d->infinity_cache_bytes = e->infinity_cache_bytes;
    }
    fdt_device_derive(d);
}

/* ---------------------------------------------------------------- --gpu */

static int edit_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 47 || nb > 47)
        return 99;
    int prev[48], cur[48];
    for (size_t j = 0; j <= nb; j++)
        prev[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            int del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, sizeof prev);
    }
    return prev[nb];
}

static int unknown_gpu(const fdt_catalogue *c, const char *text, const char *norm, fdt_err *e)
{
    /* Up to three entries by edit distance on normalized names; all names when none is
     * close, so the message always says what would work. */
    int best[3] = {-1, -1, -1}, dist[3] = {99, 99, 99};
    for (int i = 0; i < c->n; i++) {
        const fdt_catalogue_entry *g = &c->v[i];
        int d = 99;
        char t[48];
        for (int a = -1; a < g->naliases; a++) {
            fdt_luahost_normalize(a < 0 ? g->dev.name : g->aliases[a], t, sizeof t);
            int k = edit_distance(norm, t);
            if (k < d)
                d = k;
        }
        int limit = (int)strlen(norm) / 3 + 1;
        if (d > limit)
            continue;
        for (int s = 0; s < 3; s++)
            if (d < dist[s]) {
                for (int m = 2; m > s; m--) {
                    dist[m] = dist[m - 1];
                    best[m] = best[m - 1];
                }
                dist[s] = d;
                best[s] = i;
                break;
            }
    }
    char list[1024];
    size_t used = 0;
    list[0] = 0;
    if (best[0] >= 0) {
        for (int s = 0; s < 3 && best[s] >= 0; s++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", s ? ", " : "",
                                     c->v[best[s]].dev.name);
        return fdt_err_set(e, "unknown GPU '%s' (did you mean %s?)", text, list);
    }
    for (int i = 0; i < c->n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 c->v[i].dev.name);
    return fdt_err_set(e, "unknown GPU '%s' (known: %s; or an architecture such as gfx90a or "
                          "sm_90)", text, list);
}

int fdt_catalogue_find(const fdt_catalogue *c, const char *text, const fdt_device *visible,
                       int nvisible, fdt_device *out, fdt_err *e)
{
    char norm[64], t[48];
    fdt_luahost_normalize(text, norm, sizeof norm);
    if (!norm[0])
        return fdt_err_set(e, "GPU name '%s': empty", text);
    for (int i = 0; i < c->n; i++) {
        const fdt_catalogue_entry *g = &c->v[i];
        for (int a = -1; a < g->naliases; a++) {
            fdt_luahost_normalize(a < 0 ? g->dev.name : g->aliases[a], t, sizeof t);
            if (!strcmp(t, norm)) {
                *out = g->dev;
                return 0;
            }
        }
    }
    char arch[32];
    lower_arch(text, arch, sizeof arch);
    for (int i = 0; i < nvisible; i++) {
        char va[32];
        lower_arch(visible[i].arch, va, sizeof va);
        if (!strcmp(va, arch)) {
            *out = visible[i];
            fdt_catalogue_complete(c, out);
            return 0;
        }
    }
    const fdt_catalogue_entry *only = NULL;
    int n = 0;
    char names[512];
    size_t used = 0;
    names[0] = 0;
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].dev.arch, arch)) {
            only = &c->v[i];
            used += (size_t)snprintf(names + used, used < sizeof names ? sizeof names - used : 0,
                                     "%s%s", n ? ", " : "", c->v[i].dev.name);
            n++;
        }
    if (n == 1) {
        *out = only->dev;
        return 0;
    }
    if (n > 1)
        return fdt_err_set(e, "GPU '%s': several GPUs have this architecture (%s) and none of "
                              "them is visible here; name one", text, names);
    return unknown_gpu(c, text, norm, e);
}
