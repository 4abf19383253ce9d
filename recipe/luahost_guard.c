/* The sandbox's guard over the library functions that run in C. The count hook fires
 * between Lua instructions only, so a recipe could otherwise spend any time inside one call
 * of the C library, or make the host run its code with hooks off:
 * - every function of string and table reads the clock when it is called and when it
 *   returns, and fails once the time limit ran out or another limit was exceeded;
 * - what a recipe's arguments could make endless inside one call is bounded beforehand:
 *   pattern matching (string.find, match, gmatch, gsub) by the steps its backtracking
 *   could take on the subject, table functions by the number of elements they walk, and
 *   table.sort compares through a function that reads the clock;
 * - xpcall runs the recipe's message handler only while no limit was exceeded: the count
 *   hook raises its errors with hooks off, and a handler that loops there would never stop;
 * - setmetatable refuses __gc: finalizers run inside the garbage collector with hooks off,
 *   and at lua_close. */
#include "luahost.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>

/* Steps of backtracking one pattern-matching call may take (about a second of the matcher
 * at its slowest); the estimate (pattern_steps) is an upper bound, far above what most
 * subjects take. */
#define MATCH_STEPS 1e8
/* Elements one table function may walk: more than the memory limit lets a table hold, so
 * only a range or a __len that claims more than there is meets it. */
#define TABLE_ELEMENTS (1LL << 24)

/* ---------------------------------------------------------------- patterns */

/* Where the single-character class at p[i] ends (lstrlib's classEnd): past "%x", a set
 * "[...]" (a ']' first in it is a member) or one character; lp when it is malformed, which
 * the matcher reports. */
static size_t class_end(const char *p, size_t lp, size_t i)
{
    char c = p[i++];
    if (c == '%')
        return i < lp ? i + 1 : lp;
    if (c != '[')
        return i;
    if (i < lp && p[i] == '^')
        i++;
    do {
        if (i >= lp)
            return lp;
        if (p[i++] == '%' && i < lp)
            i++;
    } while (i >= lp || p[i] != ']');
    return i + 1;
}

/* An upper bound of the steps Lua's matcher takes to find pattern p in a subject of n
 * bytes. It backtracks: each repetition ('*', '+', '-') tries up to n + 1 lengths for the
 * rest of the pattern, each '?' two, and each start position (one when anchored) begins
 * anew; along every path the pattern's items cost a step each, and a balance (%b) or a
 * back reference (%1) up to n + 1. `anchorable`: whether a leading '^' anchors (not in
 * gmatch). */
static double pattern_steps(const char *p, size_t lp, size_t n, int anchorable)
{
    double len = (double)n + 1, paths = 1, scans = 0;
    int anchored = anchorable && lp > 0 && p[0] == '^';
    size_t i = anchored ? 1 : 0;
    while (i < lp) {
        char next = i + 1 < lp ? p[i + 1] : 0;
        if (p[i] == '(' || p[i] == ')') {
            i++;
        } else if (p[i] == '%' && next == 'b') {
            scans++;
            i += 4;
        } else if (p[i] == '%' && next == 'f') {
            i += 2;
            i = i < lp ? class_end(p, lp, i) : lp;
        } else if (p[i] == '%' && isdigit((unsigned char)next)) {
            scans++;
            i += 2;
        } else {
            i = class_end(p, lp, i);
            if (i < lp && p[i] && strchr("*+-", p[i])) {
                paths *= len;
                i++;
            } else if (i < lp && p[i] == '?') {
                paths *= 2;
                i++;
            }
        }
    }
    return (anchored ? 1 : len) * paths * ((double)lp + 2 + len * scans);
}

/* Whether string.find takes p literally: no magic character in it (lstrlib's
 * nospecials). */
static int literal(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++)
        if (p[i] && strchr("^$*+?.([%-", p[i]))
            return 0;
    return 1;
}

static int is_text(lua_State *L, int idx)
{
    return lua_type(L, idx) == LUA_TSTRING || lua_type(L, idx) == LUA_TNUMBER;
}

/* Refuses a match whose steps could exceed MATCH_STEPS. `find`: string.find, which
 * compares a literal pattern with memcmp (a step per 16 bytes); `anchorable` as in
 * pattern_steps. Wrong arguments are left to the function to report. */
static void check_pattern(lua_State *L, const char *name, int find, int anchorable)
{
    if (!is_text(L, 1) || !is_text(L, 2))
        return;
    size_t n, lp;
    lua_tolstring(L, 1, &n);
    const char *p = lua_tolstring(L, 2, &lp);
    double steps = find && (lua_toboolean(L, 4) || literal(p, lp))
                       ? ((double)n + 1) * (1 + (double)lp / 16)
                       : pattern_steps(p, lp, n, anchorable);
    if (steps > MATCH_STEPS)
        fdt_luahost_error(L, "%s: the pattern '%.40s%s' could take %.2g steps on a subject of "
                             "%zu bytes, more than the %.0e one call may take: shorten the "
                             "subject or the pattern", name, p, lp > 40 ? "..." : "", steps, n,
                          MATCH_STEPS);
}

static void pre_find(lua_State *L, const char *name) { check_pattern(L, name, 1, 1); }
static void pre_match(lua_State *L, const char *name) { check_pattern(L, name, 0, 1); }
static void pre_gmatch(lua_State *L, const char *name) { check_pattern(L, name, 0, 0); }

/* ---------------------------------------------------------------- tables */

static void check_count(lua_State *L, const char *name, lua_Integer first, lua_Integer last)
{
    if (last >= first && (lua_Unsigned)last - (lua_Unsigned)first >= (lua_Unsigned)TABLE_ELEMENTS)
        fdt_luahost_error(L, "%s: %llu elements, more than the %lld one call may take", name,
                          (unsigned long long)((lua_Unsigned)last - (lua_Unsigned)first + 1),
                          TABLE_ELEMENTS);
}

/* #t as the table functions take it, when a __len metamethod could claim anything; -1 when
 * t has none (then the table itself bounds it). */
static lua_Integer claimed_len(lua_State *L, int idx)
{
    if (luaL_getmetafield(L, idx, "__len") == LUA_TNIL)
        return -1;
    lua_pop(L, 1);
    return luaL_len(L, idx);
}

/* table.insert and table.remove shift the elements up to #t. */
static void pre_shift(lua_State *L, const char *name)
{
    lua_Integer n = claimed_len(L, 1);
    if (n >= 0)
        check_count(L, name, 1, n);
}

/* table.concat(t, sep, i, j) walks i..j, j being #t by default. */
static void pre_concat(lua_State *L, const char *name)
{
    int ok = 1;
    lua_Integer first = lua_isnoneornil(L, 3) ? 1 : lua_tointegerx(L, 3, &ok);
    lua_Integer last = 0;
    if (!ok)
        return;
    if (!lua_isnoneornil(L, 4))
        last = lua_tointegerx(L, 4, &ok);
    else if ((last = claimed_len(L, 1)) < 0)
        return;
    if (ok)
        check_count(L, name, first, last);
}

/* table.move(a1, f, e, t) walks f..e. */
static void pre_move(lua_State *L, const char *name)
{
    int okf, oke;
    lua_Integer f = lua_tointegerx(L, 2, &okf), e = lua_tointegerx(L, 3, &oke);
    if (okf && oke)
        check_count(L, name, f, e);
}

/* The comparison table.sort makes through: the recipe's function (upvalue 1) or '<', after
 * a look at the clock (comparing long strings takes time of its own). */
static int timed_less(lua_State *L)
{
    fdt_luahost_check_time(L, "table.sort");
    if (lua_isnil(L, lua_upvalueindex(1))) {
        lua_pushboolean(L, lua_compare(L, 1, 2, LUA_OPLT));
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static void pre_sort(lua_State *L, const char *name)
{
    (void)name;
    if (!lua_isnoneornil(L, 2) && lua_type(L, 2) != LUA_TFUNCTION)
        return; /* sort reports it */
    lua_settop(L, 2);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, timed_less, 1);
    lua_replace(L, 2);
}

/* ---------------------------------------------------------------- the wrapper */

typedef void (*precheck)(lua_State *L, const char *name);

static const struct {
    const char *name;
    precheck pre;
} prechecks[] = {
    {"string.find", pre_find},     {"string.match", pre_match},   {"string.gmatch", pre_gmatch},
    {"string.gsub", pre_match},    {"table.concat", pre_concat},  {"table.insert", pre_shift},
    {"table.remove", pre_shift},   {"table.move", pre_move},      {"table.sort", pre_sort},
};

/* A library function under the guard: upvalue 1 the function, 2 its name ("string.find"),
 * 3 its precheck (index into prechecks + 1, or 0). The function runs in this frame, so
 * its argument errors name it as the recipe called it. */
static int guarded(lua_State *L)
{
    const char *name = lua_tostring(L, lua_upvalueindex(2));
    fdt_luahost_check_time(L, name);
    lua_Integer k = lua_tointeger(L, lua_upvalueindex(3));
    if (k > 0)
        prechecks[k - 1].pre(L, name);
    int nresults = lua_tocfunction(L, lua_upvalueindex(1))(L);
    fdt_luahost_check_time(L, name);
    return nresults;
}

/* Replaces each C function of the global table `lib` with a guarded closure over it. */
static void guard_library(lua_State *L, const char *lib)
{
    lua_getglobal(L, lib);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_type(L, -2) != LUA_TSTRING || !lua_iscfunction(L, -1)) {
            lua_pop(L, 1);
            continue;
        }
        char name[64];
        snprintf(name, sizeof name, "%s.%s", lib, lua_tostring(L, -2));
        lua_Integer k = 0;
        for (size_t i = 0; i < sizeof prechecks / sizeof prechecks[0]; i++)
            if (!strcmp(prechecks[i].name, name))
                k = (lua_Integer)i + 1;
        lua_pushstring(L, name);
        lua_pushinteger(L, k);
        lua_pushcclosure(L, guarded, 3);
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4); /* replacing a field is allowed while lua_next walks the table */
    }
    lua_pop(L, 1);
}

/* ---------------------------------------------------------------- base */

/* The handler xpcall gets in place of the recipe's (upvalue 1): the recipe's runs only
 * while no limit was exceeded; after that the message goes on as it is. */
static int guarded_handler(lua_State *L)
{
    if (fdt_luahost_over(L))
        return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* xpcall(f, handler, ...) with the handler guarded; upvalue 1 the library's xpcall. */
static int guarded_xpcall(lua_State *L)
{
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, guarded_handler, 1);
    lua_replace(L, 2);
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

/* setmetatable refusing a metatable with __gc (the collector marks an object for
 * finalization only when its metatable has __gc as it is set); upvalue 1 the library's. */
static int guarded_setmetatable(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return fdt_luahost_error(L, "setmetatable: __gc is not allowed in a recipe "
                                        "(finalizers run outside its limits)");
        lua_pop(L, 1);
    }
    return lua_tocfunction(L, lua_upvalueindex(1))(L);
}

static void replace_global(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_getglobal(L, name);
    lua_pushcclosure(L, fn, 1);
    lua_setglobal(L, name);
}

void fdt_luahost_guard(lua_State *L)
{
    guard_library(L, "string");
    guard_library(L, "table");
    replace_global(L, "xpcall", guarded_xpcall);
    replace_global(L, "setmetatable", guarded_setmetatable);
}
