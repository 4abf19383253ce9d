/* The search space of a loaded recipe: walking the product of its value lists in a fixed
 * order, running derives and constraints (in recipe order) and the generator's own check on
 * each point, and counting why points were dropped. Recipes see the config, the device and
 * the problem as read-only tables whose unknown fields are errors, so a typo in a
 * constraint fails at its line instead of quietly pruning everything. */
#include "recipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

/* ---------------------------------------------------------------- Lua-side context */

typedef struct context_args {
    fdt_recipe *r;
    const fdt_device *dev;
} context_args;

static void set_int(lua_State *L, const char *k, long long v)
{
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, k);
}

static void set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

static int build_context(lua_State *L)
{
    context_args *a = lua_touserdata(L, 1);
    fdt_recipe *r = a->r;
    const fdt_device *d = a->dev;
    const fdt_problem *p = r->cur;
    luaL_unref(L, LUA_REGISTRYINDEX, r->dev_proxy);
    luaL_unref(L, LUA_REGISTRYINDEX, r->prob_proxy);
    r->dev_proxy = r->prob_proxy = LUA_NOREF;

    lua_createtable(L, 0, 26);
    set_str(L, "vendor", d->vendor);
    set_str(L, "name", d->name);
    set_str(L, "arch", d->arch);
    set_int(L, "compute_units", d->compute_units);
    set_int(L, "warp_size", d->warp_size);
    set_int(L, "max_threads_per_block", d->max_threads_per_block);
    set_int(L, "shared_per_block", d->shared_per_block);
    set_int(L, "shared_per_block_optin", d->shared_per_block_optin);
    set_int(L, "l2_bytes", d->l2_bytes);
    set_int(L, "infinity_cache_bytes", d->infinity_cache_bytes);
    set_int(L, "llc_bytes", d->llc_bytes);
    set_int(L, "mem_bytes", d->mem_bytes);
    lua_pushnumber(L, d->peak_bw_gbs);
    lua_setfield(L, -2, "peak_bw_gbs");
    set_str(L, "catalogue", d->catalogue);
    lua_pushboolean(L, d->live);
    lua_setfield(L, -2, "live");
    /* the host CPU's facts (zero or "" on a GPU) */
    set_int(L, "cores", d->sockets > 0 ? d->compute_units : 0);
    set_int(L, "threads", d->threads);
    set_int(L, "sockets", d->sockets);
    set_int(L, "numa", d->numa_nodes);
    set_str(L, "simd", d->simd);
    set_int(L, "vector_bytes", d->vector_bytes);
    set_int(L, "l1d", d->l1d_bytes);
    set_int(L, "l2", d->sockets > 0 ? d->l2_bytes : 0);
    set_int(L, "llc", d->sockets > 0 ? d->llc_bytes : 0);
    set_int(L, "mem", d->sockets > 0 ? d->mem_bytes : 0);
    fdt_luahost_push_proxy(L, -1, 0, "dev");
    r->dev_proxy = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);

    lua_createtable(L, 0, 10);
    set_str(L, "op", fdt_op_name(p->op));
    set_int(L, "R", p->R);
    set_str(L, "prec", fdt_prec_name(p->prec));
    set_int(L, "esize", (long long)fdt_prec_size(p->prec));
    set_int(L, "nx", p->nx);
    set_int(L, "ny", p->ny);
    set_int(L, "nz", p->nz);
    set_int(L, "absorb_w", p->absorb_w); /* dwave's layer (0 for the other operators) */
    lua_pushnumber(L, p->absorb_s);
    lua_setfield(L, -2, "absorb_s");
    fdt_luahost_push_proxy(L, -1, 0, "prob");
    r->prob_proxy = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);
    return 0;
}

static int prepare(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev, fdt_err *e)
{
    if ((unsigned)p->op >= FDT_OP_COUNT)
        return fdt_err_set(e, "recipe %s: invalid operator", r->name);
    if (!fdt_recipe_serves(r, p->op)) {
        char ops[64] = "";
        size_t used = 0;
        for (int op = 0; op < FDT_OP_COUNT; op++)
            if (r->ops & (1u << op))
                used += (size_t)snprintf(ops + used, sizeof ops - used, "%s%s", used ? ", " : "",
                                         fdt_op_name((fdt_op)op));
        return fdt_err_set(e, "recipe %s: written for %s, not for %s", r->name, ops,
                           fdt_op_name(p->op));
    }
    if (fdt_problem_check(p, e))
        return fdt_err_wrap(e, "recipe %s", r->name);
    if (!dev)
        return fdt_err_set(e, "recipe %s: no device description", r->name);
    /* The helpers (shared_bytes, blocks) read the problem while recipe functions run. */
    r->prob = *p;
    r->cur = &r->prob;
    r->shadow_ok = 0; /* c_data is filled whole at the first point */
    fdt_luahost_set_time(&r->host, r->lim.walk_seconds); /* the walk's time starts */
    context_args a = {r, dev};
    return fdt_luahost_cpcall(&r->host, build_context, &a, e);
}

/* ---------------------------------------------------------------- the config table */

typedef struct fill_args {
    fdt_recipe *r;
    const fdt_config *c;
    uint64_t unset; /* parameters (catalogue bits) without a value yet: the ones to derive */
} fill_args;

/* Sets c_data to config c with the parameters in `unset` nil, touching only the fields
 * whose value differs from what the table holds (r->shadow). */
static int fill_config(lua_State *L)
{
    fill_args *a = lua_touserdata(L, 1);
    fdt_recipe *r = a->r;
    size_t np;
    const fdt_param_info *all = fdt_config_params(&np);
    FDT_ASSERT(np <= sizeof r->shadow / sizeof r->shadow[0], "a shadow slot per parameter");
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->c_data);
    for (size_t i = 0; i < np; i++) {
        long long want = a->unset & ((uint64_t)1 << i)
                             ? RECIPE_NIL
                             : *(const int *)((const char *)a->c + all[i].offset);
        if (r->shadow_ok && r->shadow[i] == want)
            continue;
        if (want == RECIPE_NIL)
            lua_pushnil(L);
        else
            fdt_recipe_push_value(L, &all[i], (int)want);
        lua_setfield(L, -2, all[i].name);
        r->shadow[i] = want;
    }
    return 0;
}

typedef struct set_args {
    fdt_recipe *r;
    const fdt_param_info *pi;
    int v;
} set_args;

static int set_field(lua_State *L)
{
    set_args *a = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, a->r->c_data);
    fdt_recipe_push_value(L, a->pi, a->v);
    lua_setfield(L, -2, a->pi->name);
    a->r->shadow[fdt_recipe_param_index(a->pi)] = a->v;
    return 0;
}

static int *field_of(fdt_config *c, const fdt_param_info *pi)
{
    return (int *)((char *)c + pi->offset);
}

/* Appends where a recipe error happened (which step, which config) to e; returns -1. */
static int in_step(const recipe_step *s, const fdt_config *c, fdt_err *e)
{
    char key[256], msg[sizeof e->msg];
    fdt_config_format(c, key, sizeof key);
    snprintf(msg, sizeof msg, "%s (in %s '%s' at %s:%d, config %s)", e->msg,
             s->kind == STEP_DERIVE ? "derive" : "constraint", s->name, s->file, s->line, key);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    return -1;
}

/* "file.lua:LINE" where the step's function is defined, for errors about what it returned. */
static const char *step_func_where(fdt_recipe *r, const recipe_step *s, char *buf, size_t n)
{
    lua_State *L = r->host.L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref);
    if (fdt_luahost_func_where(L, -1, buf, n))
        snprintf(buf, n, "%s:%d", s->file, s->line);
    lua_pop(L, 1);
    return buf;
}

/* Runs one derive or constraint on c: 0 passes, 1 prunes (why), -1 error. */
static int run_step(fdt_recipe *r, const recipe_step *s, fdt_config *c, char *why, size_t whyn,
                    fdt_err *e)
{
    lua_State *L = r->host.L;
    char at[96];
    int nres = s->kind == STEP_DERIVE ? 1 : 2;
    lua_rawgeti(L, LUA_REGISTRYINDEX, s->ref);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->tracking ? r->c_track : r->c_proxy);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->dev_proxy);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->prob_proxy);
    if (fdt_luahost_call(&r->host, 3, nres, r->lim.call_instructions, e))
        return in_step(s, c, e);
    int rc = 0;
    if (s->kind == STEP_DERIVE) {
        const fdt_param_info *pi = s->pi;
        int ok = pi->choices ? lua_type(L, -1) == LUA_TSTRING
                             : lua_type(L, -1) == LUA_TNUMBER && lua_isinteger(L, -1);
        long long iv;
        if (!pi->choices && !ok && fdt_luahost_tointeger(L, -1, &iv) == 0)
            ok = 1; /* 256.0 from a division is meant as 256 */
        if (!ok) {
            fdt_err_set(e, "%s: derive '%s' returned %s, expected %s",
                        step_func_where(r, s, at, sizeof at), s->name, fdt_luahost_typename(L, -1),
                        pi->choices ? "one of its names (a string)" : "an integer");
            lua_pop(L, 1);
            return in_step(s, c, e);
        }
        int v;
        char w[256];
        if (fdt_recipe_check_value(L, -1, pi, &v, w, sizeof w)) {
            /* A well-typed value the parameter cannot take prunes the point: the lists
             * combine into derived values a recipe author cannot enumerate by hand. */
            snprintf(why, whyn, "derive %s: %s", s->name, w);
            rc = 1;
        } else {
            *field_of(c, pi) = v;
            set_args a = {r, pi, v};
            if (fdt_luahost_cpcall(&r->host, set_field, &a, e)) {
                r->shadow_ok = 0;
                rc = -1;
            }
        }
        lua_pop(L, 1);
        return rc;
    }
    if (lua_type(L, -2) != LUA_TBOOLEAN) {
        fdt_err_set(e, "%s: constraint '%s' returned %s, expected true or false (and "
                       "optionally a reason)", step_func_where(r, s, at, sizeof at), s->name,
                    fdt_luahost_typename(L, -2));
        lua_pop(L, 2);
        return in_step(s, c, e);
    }
    if (!lua_toboolean(L, -2)) {
        if (lua_type(L, -1) == LUA_TSTRING)
            snprintf(why, whyn, "%s", lua_tostring(L, -1));
        else if (lua_isnil(L, -1))
            why[0] = 0;
        else {
            fdt_err_set(e, "%s: constraint '%s' gave %s as its reason, expected a string",
                        step_func_where(r, s, at, sizeof at), s->name,
                        fdt_luahost_typename(L, -1));
            lua_pop(L, 2);
            return in_step(s, c, e);
        }
        rc = 1;
    }
    lua_pop(L, 2);
    return rc;
}

enum { RUN_CONSTRAINTS = 1, RUN_GENERATOR = 2 };

/* Derives the parameters in `derive` (catalogue bits), then constraints and the generator
 * check as flags say. 1: survives; 0: pruned, *step is the step index or -1 for the
 * generator, why says why; -1: error. */
static int run_steps(fdt_recipe *r, fdt_config *c, uint64_t derive, int flags, int *step,
                     char *why, size_t whyn, fdt_err *e)
{
    r->cfg = c; /* the helpers read c from here (recipe.c) */
    r->cfg_pending = derive;
    for (int i = 0; i < r->nsteps; i++) {
        const recipe_step *s = &r->steps[i];
        uint64_t bit = 0;
        if (s->kind == STEP_DERIVE) {
            bit = (uint64_t)1 << fdt_recipe_param_index(s->pi);
            if (!(derive & bit))
                continue;
        } else if (!(flags & RUN_CONSTRAINTS)) {
            continue;
        }
        int rc = run_step(r, s, c, why, whyn, e);
        r->cfg_pending &= ~bit; /* derived now */
        if (rc) {
            *step = i;
            r->cfg = NULL;
            return rc < 0 ? -1 : 0;
        }
    }
    r->cfg = NULL;
    return 1;
}

static int pipeline(fdt_recipe *r, fdt_config *c, uint64_t derive, int flags, int *step,
                    char *why, size_t whyn, fdt_err *e)
{
    fill_args fa = {r, c, derive};
    if (fdt_luahost_cpcall(&r->host, fill_config, &fa, e)) {
        r->shadow_ok = 0; /* a field may have been set or not */
        return -1;
    }
    r->shadow_ok = 1;
    int rc = run_steps(r, c, derive, flags, step, why, whyn, e);
    if (rc < 1)
        return rc;
    if (flags & RUN_GENERATOR) {
        fdt_err ge;
        const fdt_gen_target t = {r->dialect};
        if (fdt_config_check_for(&t, r->cur, c, &ge)) {
            *step = -1;
            snprintf(why, whyn, "%s", ge.msg);
            return 0;
        }
    }
    return 1;
}

static uint64_t derived_mask(const fdt_recipe *r)
{
    uint64_t m = 0;
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].kind == STEP_DERIVE)
            m |= (uint64_t)1 << fdt_recipe_param_index(r->steps[i].pi);
    return m;
}

/* Point `index` of the product: first listed parameter slowest, values in listed order. */
static void decode(const fdt_recipe *r, uint64_t index, fdt_config *c)
{
    fdt_config_default(c);
    for (int i = r->nparams - 1; i >= 0; i--) {
        const recipe_param *p = &r->params[i];
        *field_of(c, p->pi) = p->values[index % (uint64_t)p->n];
        index /= (uint64_t)p->n;
    }
}

/* ---------------------------------------------------------------- statistics */

static void stats_init(const fdt_recipe *r, fdt_recipe_stats *st)
{
    memset(st, 0, sizeof *st);
    st->space = r->space;
    for (int i = 0; i < r->nsteps; i++) {
        fdt_recipe_prune *row = &st->prune[i];
        if (r->steps[i].kind == STEP_DERIVE)
            snprintf(row->name, sizeof row->name, "derive %s: out of range", r->steps[i].name);
        else
            snprintf(row->name, sizeof row->name, "%s", r->steps[i].name);
        snprintf(row->file, sizeof row->file, "%s", r->steps[i].file);
        row->line = r->steps[i].line;
    }
    st->nprune = r->nsteps;
}

/* "config vec=4: needs ..." -> "generator: vec"; the parameter the generator blames. */
static void generator_row_name(const char *msg, char *buf, size_t n)
{
    if (!strncmp(msg, "config ", 7)) {
        size_t k = strcspn(msg + 7, "=: ");
        if (k > 0 && k < 40) {
            snprintf(buf, n, "generator: %.*s", (int)k, msg + 7);
            return;
        }
    }
    snprintf(buf, n, "generator: other");
}

static void stats_count(fdt_recipe_stats *st, int step, const fdt_config *c, const char *why,
                        uint64_t n)
{
    fdt_recipe_prune *row = NULL;
    if (step >= 0) {
        row = &st->prune[step];
    } else {
        char name[96];
        generator_row_name(why, name, sizeof name);
        for (int i = 0; i < st->nprune && !row; i++)
            if (st->prune[i].line == 0 && !strcmp(st->prune[i].name, name))
                row = &st->prune[i];
        if (!row && st->nprune < FDT_RECIPE_MAX_PRUNE) {
            row = &st->prune[st->nprune++];
            snprintf(row->name, sizeof row->name, "%s", name);
        }
        if (!row) /* every slot taken: the last one collects the rest */
            row = &st->prune[FDT_RECIPE_MAX_PRUNE - 1];
    }
    uint64_t before = row->count;
    row->count += n;
    if (before == 0) {
        if (step < 0) {
            snprintf(row->example, sizeof row->example, "%s", why);
        } else {
            char key[160];
            fdt_config_format(c, key, sizeof key);
            snprintf(row->example, sizeof row->example, "%s%s%s", key, why[0] ? ": " : "", why);
        }
    }
}

/* ---------------------------------------------------------------- the prefix skip */

/* The walk decodes point idx with the first parameter slowest, so the points that share the
 * values of parameters 0..k (in recipe order) with it are a run. When steps 0..step decided
 * c's prune reading only parameters up to k (and derived ones, whose derives' reads count),
 * they decide the rest of that run alike: every earlier step passes again and step prunes
 * again, with the same reason (it reads nothing else). Runs those steps again on c through
 * the tracking proxy and returns the first point after the run, or idx + 1 when the reads
 * reach the last parameter, a helper read the whole config, or the verdict changed (a recipe
 * whose steps are not functions of c, dev and prob). -1: error. */
static int64_t prune_run_end(fdt_recipe *r, fdt_config *c, uint64_t derive, uint64_t idx,
                             int step, const char *why, fdt_err *e)
{
    r->tracking = 1;
    r->track = 0;
    int step2;
    char why2[256];
    int k = pipeline(r, c, derive, RUN_CONSTRAINTS, &step2, why2, sizeof why2, e);
    r->tracking = 0;
    if (k < 0)
        return -1;
    if (k != 0 || step2 != step || strcmp(why, why2))
        return (int64_t)(idx + 1);
    int last = -1; /* the last parameter in recipe order that was read */
    for (int i = 0; i < r->nparams; i++)
        if (r->track & ((uint64_t)1 << fdt_recipe_param_index(r->params[i].pi)))
            last = i;
    uint64_t run = 1; /* points that share parameters 0..last */
    for (int i = last + 1; i < r->nparams; i++)
        run *= (uint64_t)r->params[i].n;
    return (int64_t)((idx / run + 1) * run);
}

/* ---------------------------------------------------------------- public */

void fdt_recipe_set_prefix_skip(fdt_recipe *r, int on) { r->prefix_skip = on != 0; }

int fdt_recipe_enumerate(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                         fdt_recipe_visit visit, void *ctx, fdt_recipe_stats *stats, fdt_err *e)
{
    fdt_recipe_stats *st = stats ? stats : malloc(sizeof *st);
    if (!st)
        return fdt_err_set(e, "recipe %s: out of memory", r->name);
    int rc = prepare(r, p, dev, e);
    if (rc == 0) {
        stats_init(r, st);
        memset(r->futile, 0, sizeof r->futile);
        uint64_t derive = derived_mask(r);
        for (uint64_t idx = 0; idx < r->space; idx++) {
            fdt_config c;
            char why[256];
            int step;
            decode(r, idx, &c);
            int k = pipeline(r, &c, derive, RUN_CONSTRAINTS | RUN_GENERATOR, &step, why,
                             sizeof why, e);
            if (k < 0) {
                rc = -1;
                break;
            }
            st->visited++;
            st->evaluated++;
            if (k == 0) {
                uint64_t next = idx + 1;
                /* A step whose last 8 reruns skipped nothing is rerun every 64th prune only
                 * (the rerun costs another evaluation). */
                unsigned *f = step >= 0 ? &r->futile[step] : NULL;
                if (f && r->prefix_skip && (*f < 8 || *f % 64 == 0)) {
                    int64_t end = prune_run_end(r, &c, derive, idx, step, why, e);
                    st->evaluated++;
                    if (end < 0) {
                        rc = -1;
                        break;
                    }
                    next = (uint64_t)end;
                }
                if (f)
                    *f = next > idx + 1 ? 0 : *f + 1;
                stats_count(st, step, &c, why, next - idx);
                st->visited += next - idx - 1;
                idx = next - 1;
                continue;
            }
            st->survivors++;
            if (visit && visit(ctx, &c, idx)) {
                st->stopped = 1;
                break;
            }
        }
    }
    if (!stats)
        free(st);
    return rc;
}

static void format_why(const fdt_recipe *r, int step, const char *why, char *out, size_t n)
{
    if (!out || !n)
        return;
    if (step < 0)
        snprintf(out, n, "generator: %s", why);
    else if (r->steps[step].kind == STEP_DERIVE)
        snprintf(out, n, "%s", why);
    else
        snprintf(out, n, "constraint '%s'%s%s", r->steps[step].name, why[0] ? ": " : "", why);
}

int fdt_recipe_point(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                     uint64_t index, fdt_config *c, char *why, size_t whyn, fdt_err *e)
{
    if (index >= r->space)
        return fdt_err_set(e, "recipe %s: point %llu is outside the space (%llu points)",
                           r->name, (unsigned long long)index, (unsigned long long)r->space);
    if (prepare(r, p, dev, e))
        return -1;
    char w[256];
    int step;
    decode(r, index, c);
    int k = pipeline(r, c, derived_mask(r), RUN_CONSTRAINTS | RUN_GENERATOR, &step, w, sizeof w,
                     e);
    if (k == 0)
        format_why(r, step, w, why, whyn);
    else if (why && whyn)
        why[0] = 0;
    return k;
}

int fdt_recipe_derive(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                      fdt_config *c, fdt_err *e)
{
    if (prepare(r, p, dev, e))
        return -1;
    char w[256];
    int step;
    int k = pipeline(r, c, derived_mask(r), 0, &step, w, sizeof w, e);
    if (k == 0)
        return fdt_err_set(e, "recipe %s: %s", r->name, w);
    return k < 0 ? -1 : 0;
}

int fdt_recipe_check(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                     const fdt_config *c, char *why, size_t whyn, fdt_err *e)
{
    if (prepare(r, p, dev, e))
        return -1;
    fdt_config copy = *c;
    char w[256];
    int step;
    int k = pipeline(r, &copy, 0, RUN_CONSTRAINTS | RUN_GENERATOR, &step, w, sizeof w, e);
    if (k == 0)
        format_why(r, step, w, why, whyn);
    else if (why && whyn)
        why[0] = 0;
    return k;
}

int fdt_recipe_default_config(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                              fdt_config *c, fdt_err *e)
{
    if (prepare(r, p, dev, e))
        return -1;
    *c = r->defcfg;
    char w[256];
    int step;
    int k = pipeline(r, c, derived_mask(r) & ~r->defset, 0, &step, w, sizeof w, e);
    if (k == 0)
        return fdt_err_set(e, "recipe %s: default config: %s", r->name, w);
    return k < 0 ? -1 : 0;
}
