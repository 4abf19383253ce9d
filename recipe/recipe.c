/* Loading a recipe: the directives a recipe file calls (ops, name, param, derive, constrain,
 * strategy, budget, default) and the helpers it may use. A recipe is declarative and
 * call-based so that each directive knows the line it was called from: every malformed
 * value is reported as "file.lua:LINE: directive 'x': why" at the call, before any
 * enumeration runs. */
#include "recipe_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

static const char *const strategies[] = {"exhaustive", "random", "model", NULL};

void fdt_recipe_limits_default(fdt_recipe_limits *l)
{
    l->mem_bytes = (size_t)64 << 20;
    l->load_instructions = 50000000LL;
    l->call_instructions = 1000000LL;
    l->load_seconds = 10;
    l->walk_seconds = 60;
}

int fdt_recipe_param_index(const fdt_param_info *pi)
{
    size_t n;
    const fdt_param_info *all = fdt_config_params(&n);
    return (int)(pi - all);
}

void fdt_recipe_format_value(const fdt_param_info *pi, int v, char *buf, size_t n)
{
    if (pi->choices && v >= pi->min && v <= pi->max)
        snprintf(buf, n, "%s", pi->choices[v]);
    else
        snprintf(buf, n, "%d", v);
}

void fdt_recipe_push_value(lua_State *L, const fdt_param_info *pi, int v)
{
    /* A hand-made config may hold anything; the generator's check reports it later. */
    if (pi->choices && v >= pi->min && v <= pi->max)
        lua_pushstring(L, pi->choices[v]);
    else
        lua_pushinteger(L, v);
}

static void choice_list(const fdt_param_info *pi, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; pi->choices[i] && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", pi->choices[i]);
}

int fdt_recipe_check_value(lua_State *L, int idx, const fdt_param_info *pi, int *out, char *why,
                           size_t n)
{
    if (pi->choices) {
        char opts[128];
        choice_list(pi, opts, sizeof opts);
        if (lua_type(L, idx) != LUA_TSTRING) {
            snprintf(why, n, "expected one of %s, got %s", opts, fdt_luahost_typename(L, idx));
            return -1;
        }
        const char *s = lua_tostring(L, idx);
        for (int i = 0; pi->choices[i]; i++)
            if (!strcmp(s, pi->choices[i])) {
                *out = i;
                return 0;
            }
        snprintf(why, n, "'%s' is not one of %s", s, opts);
        return -1;
    }
    long long v;
    if (fdt_luahost_tointeger(L, idx, &v)) {
        if (lua_type(L, idx) == LUA_TNUMBER)
            snprintf(why, n, "expected an integer, got %g", (double)lua_tonumber(L, idx));
        else if (lua_type(L, idx) == LUA_TSTRING)
            snprintf(why, n, "expected an integer, got a string (\"%.40s\")", lua_tostring(L, idx));
        else
            snprintf(why, n, "expected an integer, got %s", fdt_luahost_typename(L, idx));
        return -1;
    }
    if (v < pi->min || v > pi->max) {
        snprintf(why, n, "%lld is out of range (%d..%d)", v, pi->min, pi->max);
        return -1;
    }
    /* The generator's own per-value rules, so that a value that can never work is an error
     * at its line rather than a silently empty slice of the space. */
    if (!strcmp(pi->name, "vec") && v != 1 && v != 2 && v != 4) {
        snprintf(why, n, "%lld is not a vector width (1, 2 or 4)", v);
        return -1;
    }
    if (!strcmp(pi->name, "align") && (v & (v - 1)) != 0) {
        snprintf(why, n, "%lld is not a power of two", v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* ---------------------------------------------------------------- directive plumbing */


static fdt_recipe *self(lua_State *L, const char *directive)
{
    fdt_recipe *r = lua_touserdata(L, lua_upvalueindex(1));
    if (r->host.frozen)
        fdt_luahost_error(L, "%s: directives belong at the top level of a recipe, not inside its "
                      "functions", directive);
    return r;
}

static void want_args(lua_State *L, int n, const char *usage)
{
    if (lua_gettop(L) != n)
        fdt_luahost_error(L, "expected %s (got %d argument%s)", usage, lua_gettop(L),
                   lua_gettop(L) == 1 ? "" : "s");
}

/* The file (the recipe, or a module it includes) and line of the Lua code calling the
 * current directive; line 0 and the recipe when there is none. */
static int caller_where(lua_State *L, char *file, size_t n)
{
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); level++)
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(file, n, "%s", ar.short_src);
            return ar.currentline;
        }
    fdt_recipe *r = lua_touserdata(L, lua_upvalueindex(1));
    snprintf(file, n, "%s", r->host.chunk);
    return 0;
}

/* Where an earlier directive is, for messages: "line 12" in the caller's own file, else
 * "common.lua:12". */
static const char *earlier(lua_State *L, const char *file, int line, char *buf, size_t n)
{
    char here[64];
    caller_where(L, here, sizeof here);
    if (!strcmp(here, file))
        snprintf(buf, n, "line %d", line);
    else
        snprintf(buf, n, "%s:%d", file, line);
    return buf;
}

/* Length of the list at idx; anything but a table whose keys are exactly 1..n is an error. */
static int list_len(lua_State *L, int idx, const char *what)
{
    if (!lua_istable(L, idx))
        fdt_luahost_error(L, "%s: expected a list { ... }, got %s", what, fdt_luahost_typename(L, idx));
    lua_Integer n = luaL_len(L, idx);
    lua_Integer keys = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        lua_Integer k;
        if (!lua_isinteger(L, -1) || (k = lua_tointeger(L, -1)) < 1 || k > n)
            fdt_luahost_error(L, "%s: expected a list, but it has the key %s", what,
                       luaL_tolstring(L, -1, NULL));
        keys++;
    }
    if (keys != n)
        fdt_luahost_error(L, "%s: the list has holes (nil values)", what);
    return (int)n;
}

static const fdt_param_info *known_param(lua_State *L, int idx, const char *directive)
{
    if (lua_type(L, idx) != LUA_TSTRING)
        fdt_luahost_error(L, "%s: expected a parameter name (a string), got %s", directive,
                   fdt_luahost_typename(L, idx));
    const char *name = lua_tostring(L, idx);
    const fdt_param_info *pi = fdt_config_param(name);
    if (!pi) {
        size_t np;
        const fdt_param_info *all = fdt_config_params(&np);
        char names[256];
        size_t used = 0;
        names[0] = 0;
        for (size_t i = 0; i < np && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     all[i].name);
        fdt_luahost_error(L, "%s '%s': unknown parameter (known: %s)", directive, name, names);
    }
    return pi;
}

static const recipe_param *listed(const fdt_recipe *r, const fdt_param_info *pi)
{
    for (int i = 0; i < r->nparams; i++)
        if (r->params[i].pi == pi)
            return &r->params[i];
    return NULL;
}

static const recipe_step *derived(const fdt_recipe *r, const fdt_param_info *pi)
{
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].kind == STEP_DERIVE && r->steps[i].pi == pi)
            return &r->steps[i];
    return NULL;
}

/* ---------------------------------------------------------------- directives */

static int d_ops(lua_State *L)
{
    fdt_recipe *r = self(L, "ops");
    want_args(L, 1, "ops { \"lap\", \"wave\" }");
    if (r->seen_ops)
        return fdt_luahost_error(L, "ops: given twice");
    if (lua_type(L, 1) == LUA_TSTRING) {
        lua_createtable(L, 1, 0);
        lua_pushvalue(L, 1);
        lua_rawseti(L, -2, 1);
        lua_replace(L, 1);
    }
    int n = list_len(L, 1, "ops");
    if (n == 0)
        return fdt_luahost_error(L, "ops: the list is empty");
    unsigned ops = 0;
    for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, 1, i);
        if (lua_type(L, -1) != LUA_TSTRING)
            return fdt_luahost_error(L, "ops: entry #%d is %s, expected an operator name", i,
                              fdt_luahost_typename(L, -1));
        fdt_op op;
        fdt_err e;
        if (fdt_op_parse(lua_tostring(L, -1), &op, &e))
            return fdt_luahost_error(L, "ops: %s", e.msg);
        if (ops & (1u << op))
            return fdt_luahost_error(L, "ops: '%s' listed twice", lua_tostring(L, -1));
        ops |= 1u << op;
        lua_pop(L, 1);
    }
    r->ops = ops;
    r->seen_ops = 1;
    return 0;
}

static int d_name(lua_State *L)
{
    fdt_recipe *r = self(L, "name");
    want_args(L, 1, "name \"text\"");
    if (r->seen_name)
        return fdt_luahost_error(L, "name: given twice");
    if (lua_type(L, 1) != LUA_TSTRING)
        return fdt_luahost_error(L, "name: expected a string, got %s", fdt_luahost_typename(L, 1));
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    if (len == 0 || len >= sizeof r->name)
        return fdt_luahost_error(L, "name: must be 1 to %d characters", (int)sizeof r->name - 1);
    for (size_t i = 0; i < len; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", s[i]))
            return fdt_luahost_error(L, "name '%s': use letters, digits, '_', '.' and '-' only", s);
    snprintf(r->name, sizeof r->name, "%s", s);
    r->seen_name = 1;
    return 0;
}

/* A recipe's parameters are of one dialect: pi, named by a directive, fixes it or must
 * agree with the parameter that did. */
static void take_dialect(lua_State *L, fdt_recipe *r, const fdt_param_info *pi,
                         const char *directive)
{
    for (int d = 0; d < FDT_DIALECT_COUNT; d++) {
        if (pi->dialects != FDT_DIALECT_BIT(d))
            continue; /* shared by several dialects, or not this one's own */
        if (r->dialect_by[0] && r->dialect != (fdt_dialect)d)
            fdt_luahost_error(L, "%s '%s': a parameter of the %s dialect, but %s is of the %s "
                                 "dialect: a recipe's parameters are all for one kind of target",
                              directive, pi->name, fdt_dialect_name((fdt_dialect)d),
                              r->dialect_by, fdt_dialect_name(r->dialect));
        if (!r->dialect_by[0]) {
            r->dialect = (fdt_dialect)d;
            snprintf(r->dialect_by, sizeof r->dialect_by, "%s", pi->name);
        }
    }
}

fdt_dialect fdt_recipe_dialect(const fdt_recipe *r) { return r->dialect; }

static int d_param(lua_State *L)
{
    fdt_recipe *r = self(L, "param");
    want_args(L, 2, "param(\"name\", { values })");
    char at[96];
    const fdt_param_info *pi = known_param(L, 1, "param");
    const recipe_param *prev = listed(r, pi);
    if (prev)
        return fdt_luahost_error(L, "param '%s': listed twice (first at %s)", pi->name,
                      earlier(L, prev->file, prev->line, at, sizeof at));
    const recipe_step *d = derived(r, pi);
    if (d)
        return fdt_luahost_error(L, "param '%s': already derived at %s", pi->name,
                      earlier(L, d->file, d->line, at, sizeof at));
    if (r->nparams >= RECIPE_MAX_PARAMS)
        return fdt_luahost_error(L, "param '%s': too many parameters", pi->name);
    take_dialect(L, r, pi, "param");
    char what[64];
    snprintf(what, sizeof what, "param '%s'", pi->name);
    int n = list_len(L, 2, what);
    if (n == 0)
        return fdt_luahost_error(L, "param '%s': the value list is empty", pi->name);
    if (n > RECIPE_MAX_VALUES)
        return fdt_luahost_error(L, "param '%s': %d values, more than the %d a parameter may "
                                    "list", pi->name, n, RECIPE_MAX_VALUES);
    /* The slot owns the array from here on, so an error below leaks nothing. */
    recipe_param *rp = &r->params[r->nparams];
    free(rp->values);
    rp->values = calloc((size_t)n, sizeof *rp->values);
    if (!rp->values)
        return fdt_luahost_error(L, "param '%s': out of memory", pi->name);
    for (int i = 0; i < n; i++) {
        char why[256], text[64];
        lua_rawgeti(L, 2, i + 1);
        if (fdt_recipe_check_value(L, -1, pi, &rp->values[i], why, sizeof why))
            return fdt_luahost_error(L, "param '%s': value #%d: %s", pi->name, i + 1, why);
        lua_pop(L, 1);
        for (int j = 0; j < i; j++)
            if (rp->values[j] == rp->values[i]) {
                fdt_recipe_format_value(pi, rp->values[i], text, sizeof text);
                return fdt_luahost_error(L, "param '%s': value %s listed twice", pi->name, text);
            }
    }
    if (r->space * (uint64_t)n > RECIPE_MAX_SPACE)
        return fdt_luahost_error(L, "param '%s': the space grows to %llu points, more than %llu "
                             "(split the recipe or shorten the lists)", pi->name,
                          (unsigned long long)(r->space * (uint64_t)n),
                          (unsigned long long)RECIPE_MAX_SPACE);
    rp->pi = pi;
    rp->n = n;
    rp->line = caller_where(L, rp->file, sizeof rp->file);
    r->space *= (uint64_t)n;
    r->nparams++;
    return 0;
}

static recipe_step *new_step(lua_State *L, fdt_recipe *r, const char *directive)
{
    if (r->nsteps >= RECIPE_MAX_STEPS)
        fdt_luahost_error(L, "%s: too many derives and constraints (at most %d)", directive,
                   RECIPE_MAX_STEPS);
    return &r->steps[r->nsteps];
}

static int d_derive(lua_State *L)
{
    fdt_recipe *r = self(L, "derive");
    want_args(L, 2, "derive(\"name\", function(c, dev, prob) ... end)");
    char at[96];
    const fdt_param_info *pi = known_param(L, 1, "derive");
    const recipe_param *lp = listed(r, pi);
    if (lp)
        return fdt_luahost_error(L, "derive '%s': already listed by param at %s", pi->name,
                      earlier(L, lp->file, lp->line, at, sizeof at));
    const recipe_step *d = derived(r, pi);
    if (d)
        return fdt_luahost_error(L, "derive '%s': derived twice (first at %s)", pi->name,
                      earlier(L, d->file, d->line, at, sizeof at));
    take_dialect(L, r, pi, "derive");
    if (!lua_isfunction(L, 2))
        return fdt_luahost_error(L, "derive '%s': expected a function(c, dev, prob), got %s", pi->name,
                          fdt_luahost_typename(L, 2));
    recipe_step *s = new_step(L, r, "derive");
    lua_pushvalue(L, 2);
    s->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s->kind = STEP_DERIVE;
    s->pi = pi;
    snprintf(s->name, sizeof s->name, "%s", pi->name);
    s->line = caller_where(L, s->file, sizeof s->file);
    r->nsteps++;
    return 0;
}

static int d_constrain(lua_State *L)
{
    fdt_recipe *r = self(L, "constrain");
    want_args(L, 2, "constrain(\"what must hold\", function(c, dev, prob) ... end)");
    char at[96];
    if (lua_type(L, 1) != LUA_TSTRING)
        return fdt_luahost_error(L, "constrain: the first argument must be its name (a string), got %s",
                          fdt_luahost_typename(L, 1));
    size_t len;
    const char *name = lua_tolstring(L, 1, &len);
    if (len == 0 || len >= sizeof r->steps[0].name)
        return fdt_luahost_error(L, "constrain: the name must be 1 to %d characters",
                          (int)sizeof r->steps[0].name - 1);
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].kind == STEP_CONSTRAIN && !strcmp(r->steps[i].name, name))
            return fdt_luahost_error(L, "constrain '%s': name used twice (first at %s)", name,
                          earlier(L, r->steps[i].file, r->steps[i].line, at, sizeof at));
    if (!lua_isfunction(L, 2))
        return fdt_luahost_error(L, "constrain '%s': expected a function(c, dev, prob), got %s", name,
                          fdt_luahost_typename(L, 2));
    recipe_step *s = new_step(L, r, "constrain");
    lua_pushvalue(L, 2);
    s->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    s->kind = STEP_CONSTRAIN;
    s->pi = NULL;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->line = caller_where(L, s->file, sizeof s->file);
    r->nsteps++;
    return 0;
}

static int d_strategy(lua_State *L)
{
    fdt_recipe *r = self(L, "strategy");
    want_args(L, 1, "strategy \"exhaustive\" | \"random\" | \"model\"");
    if (r->seen_strategy)
        return fdt_luahost_error(L, "strategy: given twice");
    const char *s = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
    for (int i = 0; s && strategies[i]; i++)
        if (!strcmp(s, strategies[i])) {
            snprintf(r->strategy, sizeof r->strategy, "%s", s);
            r->seen_strategy = 1;
            return 0;
        }
    if (s)
        return fdt_luahost_error(L, "strategy: '%s' is not one of exhaustive, random, model", s);
    return fdt_luahost_error(L, "strategy: expected one of exhaustive, random, model, got %s",
                      fdt_luahost_typename(L, 1));
}

static int d_budget(lua_State *L)
{
    fdt_recipe *r = self(L, "budget");
    want_args(L, 1, "budget(evaluations)");
    if (r->seen_budget)
        return fdt_luahost_error(L, "budget: given twice");
    long long v;
    if (fdt_luahost_tointeger(L, 1, &v))
        return fdt_luahost_error(L, "budget: expected an integer, got %s", fdt_luahost_typename(L, 1));
    if (v < 1 || v > 10000000)
        return fdt_luahost_error(L, "budget: %lld is out of range (1..10000000 evaluations)", v);
    r->budget = (int)v;
    r->seen_budget = 1;
    return 0;
}

static int d_default(lua_State *L)
{
    fdt_recipe *r = self(L, "default");
    want_args(L, 1, "default { bx = 64, ... }");
    if (r->seen_default)
        return fdt_luahost_error(L, "default: given twice");
    if (!lua_istable(L, 1))
        return fdt_luahost_error(L, "default: expected a table { name = value, ... }, got %s",
                          fdt_luahost_typename(L, 1));
    /* The smallest offending key, so the message does not depend on table order. */
    const char *bad = NULL;
    int badtype = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING) {
            badtype = 1;
            continue;
        }
        const char *k = lua_tostring(L, -1);
        if (!fdt_config_param(k) && (!bad || strcmp(k, bad) < 0))
            bad = k; /* the key stays alive in the table */
    }
    if (badtype)
        return fdt_luahost_error(L, "default: keys must be parameter names (default { bx = 64 }), "
                             "found a non-string key");
    if (bad) {
        lua_pushstring(L, bad);
        known_param(L, -1, "default");
    }
    size_t np;
    const fdt_param_info *all = fdt_config_params(&np);
    fdt_config_default(&r->defcfg);
    r->defset = 0;
    for (size_t i = 0; i < np; i++) {
        lua_getfield(L, 1, all[i].name);
        if (!lua_isnil(L, -1)) {
            char why[256];
            int v;
            if (fdt_recipe_check_value(L, -1, &all[i], &v, why, sizeof why))
                return fdt_luahost_error(L, "default: %s: %s", all[i].name, why);
            take_dialect(L, r, &all[i], "default");
            *(int *)((char *)&r->defcfg + all[i].offset) = v;
            r->defset |= (uint64_t)1 << i;
        }
        lua_pop(L, 1);
    }
    r->seen_default = 1;
    return 0;
}

/* include "name": a module from lib/ (recipe_include.c); returns what the module returned. */
static int d_include(lua_State *L)
{
    fdt_recipe *r = self(L, "include");
    want_args(L, 1, "include \"module\"");
    if (lua_type(L, 1) != LUA_TSTRING)
        return fdt_luahost_error(L, "include: expected a module name (a string), got %s",
                      fdt_luahost_typename(L, 1));
    return fdt_recipe_include(L, &r->host, &r->mods, lua_tostring(L, 1));
}

/* ---------------------------------------------------------------- helpers for recipes */

static const fdt_problem *helper_problem(lua_State *L, const char *usage)
{
    fdt_recipe *r = lua_touserdata(L, lua_upvalueindex(1));
    if (!r->cur)
        fdt_luahost_error(L, "%s works inside derive and constrain functions only", usage);
    want_args(L, 1, usage);
    return r->cur;
}

/* What a helper computes from a config (0, or -1 when the generator refuses the config). */
typedef int (*helper_fn)(const fdt_problem *p, const fdt_config *c, int64_t *value, fdt_err *e);

static int shared_of(const fdt_problem *p, const fdt_config *c, int64_t *value, fdt_err *e)
{
    uint32_t bytes;
    int dynamic;
    if (fdt_gen_shared(p, c, &bytes, &dynamic, e))
        return -1;
    *value = bytes;
    return 0;
}

static int blocks_of(const fdt_problem *p, const fdt_config *c, int64_t *value, fdt_err *e)
{
    (void)e;
    int64_t b[3];
    fdt_gen_blocks(p, c, b);
    *value = b[0] * b[1] * b[2];
    return 0;
}

/* The config a helper is asked about, whole: the recipe's c (the config its derives and
 * constraints are running on), or a table of the recipe's own read parameter by parameter.
 * A parameter with no value keeps fdtune's default: in c, one derived later in the recipe
 * (marked in *pending); in an own table, one it leaves out. */
static void config_arg(lua_State *L, fdt_recipe *r, fdt_config *c, uint64_t *pending)
{
    if (!lua_istable(L, 1))
        fdt_luahost_error(L, "expected a config table (c), got %s", fdt_luahost_typename(L, 1));
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->c_proxy);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->c_track);
    int tracked = lua_rawequal(L, 1, -1);
    int is_c = tracked || lua_rawequal(L, 1, -2);
    lua_pop(L, 2);
    if (tracked) /* a helper reads the whole config */
        r->track = ~(uint64_t)0;
    size_t np;
    const fdt_param_info *all = fdt_config_params(&np);
    fdt_config def;
    fdt_config_default(&def);
    *c = is_c && r->cfg ? *r->cfg : def;
    *pending = is_c && r->cfg ? r->cfg_pending : 0;
    for (size_t i = 0; i < np; i++) {
        int *f = (int *)((char *)c + all[i].offset);
        if (*pending & ((uint64_t)1 << i)) {
            *f = *(const int *)((const char *)&def + all[i].offset);
            continue;
        }
        if (is_c)
            continue;
        lua_getfield(L, 1, all[i].name);
        if (!lua_isnil(L, -1)) {
            char why[256];
            if (fdt_recipe_check_value(L, -1, &all[i], f, why, sizeof why))
                fdt_luahost_error(L, "c.%s: %s", all[i].name, why);
        }
        lua_pop(L, 1);
    }
}

/* Runs a helper on argument 1 and pushes its value. A parameter c has no value for yet
 * counts with its default, unless the answer depends on it (it changes at the parameter's
 * smallest or largest value): then reading it is the error it is in the recipe itself. */
static int run_helper(lua_State *L, const char *usage, const char *name, helper_fn fn)
{
    const fdt_problem *p = helper_problem(L, usage);
    fdt_recipe *r = lua_touserdata(L, lua_upvalueindex(1));
    fdt_config c;
    uint64_t pending;
    config_arg(L, r, &c, &pending);
    int64_t value, other;
    fdt_err e;
    if (fn(p, &c, &value, &e))
        return fdt_luahost_error(L, "%s: %s", name, e.msg);
    size_t np;
    const fdt_param_info *all = fdt_config_params(&np);
    for (size_t i = 0; i < np; i++) {
        if (!(pending & ((uint64_t)1 << i)))
            continue;
        fdt_config probe = c;
        int *f = (int *)((char *)&probe + all[i].offset), ends[2] = {all[i].min, all[i].max};
        for (int k = 0; k < 2; k++) {
            *f = ends[k];
            if (fn(p, &probe, &other, &e) || other != value)
                return fdt_luahost_error(L, "%s: c.%s is derived later in the recipe and has no value yet "
                                 "(derive it before calling %s)", name, all[i].name, usage);
        }
    }
    lua_pushinteger(L, (lua_Integer)value);
    return 1;
}

/* shared_bytes(c): shared memory (LDS) of the config's tiles, as the generator sizes it. */
static int h_shared_bytes(lua_State *L)
{
    return run_helper(L, "shared_bytes(c)", "shared_bytes", shared_of);
}

/* blocks(c): thread blocks of one launch (one y subdomain when split > 1), as the generator
 * launches them. */
static int h_blocks(lua_State *L)
{
    return run_helper(L, "blocks(c)", "blocks", blocks_of);
}

/* ---------------------------------------------------------------- loading */

static const char directive_hint[] =
    " (directives: ops, name, param, derive, constrain, strategy, budget, default, include; "
    "helpers: shared_bytes, blocks, KiB, MiB, GiB)";

static int register_directives(lua_State *L)
{
    void *r = lua_touserdata(L, 1);
    static const struct {
        const char *name;
        lua_CFunction fn;
    } fns[] = {{"ops", d_ops},           {"name", d_name},         {"param", d_param},
               {"derive", d_derive},     {"constrain", d_constrain}, {"strategy", d_strategy},
               {"budget", d_budget},     {"default", d_default},   {"include", d_include},
               {"shared_bytes", h_shared_bytes}, {"blocks", h_blocks}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        lua_pushlightuserdata(L, r);
        lua_pushcclosure(L, fns[i].fn, 1);
        lua_setglobal(L, fns[i].name);
    }
    return 0;
}

/* The tracker of c_track: the catalogue bit of a parameter read, every bit for a walk of the
 * whole table (the prefix skip then skips nothing). Other keys (errors) mark nothing. */
static void track_read(void *ud, const char *key)
{
    fdt_recipe *r = ud;
    if (!key) {
        r->track = ~(uint64_t)0;
        return;
    }
    /* Lua interns short strings, so a key read again is mostly the same pointer: looked up
     * in the catalogue once (a pointer reused for another string fails the name check). */
    int i = 0;
    while (i < r->ntrack && (r->track_key[i] != key || strcmp(r->track_name[i], key)))
        i++;
    if (i == r->ntrack) {
        const fdt_param_info *pi = fdt_config_param(key);
        if (i == (int)(sizeof r->track_key / sizeof r->track_key[0]) ||
            strlen(key) >= sizeof r->track_name[0]) {
            if (pi) /* not kept: still counted */
                r->track |= (uint64_t)1 << fdt_recipe_param_index(pi);
            return;
        }
        r->track_key[i] = key;
        snprintf(r->track_name[i], sizeof r->track_name[i], "%s", key);
        r->track_bit[i] = pi ? fdt_recipe_param_index(pi) : -1;
        r->ntrack++;
    }
    if (r->track_bit[i] >= 0)
        r->track |= (uint64_t)1 << r->track_bit[i];
}

/* After loading: the table behind `c` (every parameter), the names that are derived (so
 * that reading one before its derive says so), the read-only proxy recipes see and the
 * tracking one beside it (the walk's prefix skip). */
static int make_config_table(lua_State *L)
{
    fdt_recipe *r = lua_touserdata(L, 1);
    size_t np;
    const fdt_param_info *all = fdt_config_params(&np);
    lua_createtable(L, 0, (int)np);
    for (size_t i = 0; i < np; i++) {
        fdt_recipe_push_value(L, &all[i], all[i].def);
        lua_setfield(L, -2, all[i].name);
    }
    lua_createtable(L, 0, 4);
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].kind == STEP_DERIVE) {
            lua_pushboolean(L, 1);
            lua_setfield(L, -2, r->steps[i].name);
        }
    fdt_luahost_push_proxy(L, -2, -1, "c");
    r->c_proxy = luaL_ref(L, LUA_REGISTRYINDEX);
    r->pending = luaL_ref(L, LUA_REGISTRYINDEX);
    r->tracker.mark = track_read;
    r->tracker.ud = r;
    fdt_luahost_push_tracking_proxy(L, -1, "c", &r->tracker);
    r->c_track = luaL_ref(L, LUA_REGISTRYINDEX);
    r->c_data = luaL_ref(L, LUA_REGISTRYINDEX);
    r->shadow_ok = 0;
    return 0;
}

static void stem_of(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (len > 4 && !strcmp(base + len - 4, ".lua"))
        len -= 4;
    snprintf(out, n, "%.*s", (int)len, base);
}

/* Loads text named `name` in messages; modules are looked for next to `path` (NULL: only
 * along the search path). */
static int load_from_text(const char *name, const char *path, const char *text, size_t len,
                          const fdt_recipe_limits *lim, fdt_recipe **out, fdt_err *e)
{
    *out = NULL;
    fdt_recipe *r = calloc(1, sizeof *r);
    if (!r)
        return fdt_err_set(e, "recipe %s: out of memory", name);
    if (lim)
        r->lim = *lim;
    else
        fdt_recipe_limits_default(&r->lim);
    r->space = 1;
    r->c_data = r->c_proxy = r->c_track = r->pending = r->dev_proxy = r->prob_proxy = LUA_NOREF;
    r->prefix_skip = 1;
    fdt_config_default(&r->defcfg);
    stem_of(name, r->name, sizeof r->name);
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (fdt_luahost_open(&r->host, base, r->lim.mem_bytes, e)) {
        free(r);
        return -1;
    }
    snprintf(r->host.hint, sizeof r->host.hint, "%s", directive_hint);
    if (fdt_recipe_modules_init(&r->mods, path, e) ||
        fdt_luahost_cpcall(&r->host, register_directives, r, e) ||
        fdt_luahost_load(&r->host, text, len, e))
        goto fail;
    fdt_luahost_set_time(&r->host, r->lim.load_seconds);
    if (fdt_luahost_call(&r->host, 0, 0, r->lim.load_instructions, e))
        goto fail;
    fdt_luahost_freeze(&r->host);
    if (fdt_luahost_cpcall(&r->host, make_config_table, r, e))
        goto fail;
    /* The identity covers what the recipe included: a changed module is a changed space. */
    uint64_t h = fdt_hash64(text, len, FDT_HASH_SEED);
    snprintf(r->hash, sizeof r->hash, "%016llx",
             (unsigned long long)fdt_recipe_modules_hash(&r->mods, h));
    *out = r;
    return 0;
fail:
    fdt_recipe_free(r);
    return -1;
}

int fdt_recipe_load_text(const char *name, const char *text, size_t len,
                         const fdt_recipe_limits *lim, fdt_recipe **out, fdt_err *e)
{
    return load_from_text(name, NULL, text, len, lim, out, e);
}

int fdt_recipe_load(const char *path, const fdt_recipe_limits *lim, fdt_recipe **out, fdt_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    if (fdt_read_file(path, &text, &len, e))
        return fdt_err_wrap(e, "recipe");
    int rc = load_from_text(path, path, text, len, lim, out, e);
    free(text);
    if (rc == 0)
        snprintf((*out)->path, sizeof (*out)->path, "%s", path);
    return rc;
}

void fdt_recipe_free(fdt_recipe *r)
{
    if (!r)
        return;
    fdt_luahost_close(&r->host);
    fdt_recipe_modules_free(&r->mods);
    for (int i = 0; i < RECIPE_MAX_PARAMS; i++)
        free(r->params[i].values);
    free(r);
}

/* ---------------------------------------------------------------- identity */

const char *fdt_recipe_name(const fdt_recipe *r) { return r->name; }
const char *fdt_recipe_path(const fdt_recipe *r) { return r->path; }
const char *fdt_recipe_hash(const fdt_recipe *r) { return r->hash; }
int fdt_recipe_serves(const fdt_recipe *r, fdt_op op)
{
    return r->ops == 0 || (r->ops & (1u << op)) != 0;
}
const char *fdt_recipe_strategy(const fdt_recipe *r) { return r->strategy[0] ? r->strategy : NULL; }
int fdt_recipe_budget(const fdt_recipe *r) { return r->budget; }
uint64_t fdt_recipe_space_size(const fdt_recipe *r) { return r->space; }

void fdt_recipe_describe(const fdt_recipe *r, fdt_sb *out)
{
    const char *chunk = r->host.chunk;
    fdt_sb_printf(out, "recipe %s (%s, hash %s)\n", r->name, r->path[0] ? r->path : chunk,
                  r->hash);
    fdt_sb_puts(out, "  ops:");
    if (!r->ops)
        fdt_sb_puts(out, " any");
    for (int op = 0; op < FDT_OP_COUNT; op++)
        if (r->ops & (1u << op))
            fdt_sb_printf(out, " %s", fdt_op_name((fdt_op)op));
    fdt_sb_printf(out, "\n  space: %llu points\n", (unsigned long long)r->space);
    for (int i = 0; i < r->mods.n; i++)
        fdt_sb_printf(out, "  include %s   (%s)\n", r->mods.m[i].name, r->mods.m[i].path);
    for (int i = 0; i < r->nparams; i++) {
        const recipe_param *p = &r->params[i];
        fdt_sb_printf(out, "  param %-6s", p->pi->name);
        for (int j = 0; j < p->n; j++) {
            char v[64];
            fdt_recipe_format_value(p->pi, p->values[j], v, sizeof v);
            fdt_sb_printf(out, " %s", v);
        }
        fdt_sb_printf(out, "   (%s:%d)\n", p->file, p->line);
    }
    for (int i = 0; i < r->nsteps; i++)
        fdt_sb_printf(out, "  %s %s   (%s:%d)\n",
                      r->steps[i].kind == STEP_DERIVE ? "derive   " : "constrain",
                      r->steps[i].name, r->steps[i].file, r->steps[i].line);
    fdt_sb_printf(out, "  strategy: %s, budget: ", r->strategy[0] ? r->strategy : "(not set)");
    if (r->budget)
        fdt_sb_printf(out, "%d\n", r->budget);
    else
        fdt_sb_puts(out, "(not set)\n");
    char key[512];
    fdt_config_format(&r->defcfg, key, sizeof key);
    fdt_sb_printf(out, "  default: %s\n", key);
}
