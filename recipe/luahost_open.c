/* Opening the sandbox: a Lua state on the host's allocator (the memory limit) with only the
 * safe libraries (base, string, table and math, less what does I/O, loads other code, dumps
 * binary chunks or draws random numbers), the size constants, the guard over the library
 * functions that run in C (luahost_guard.c), and strict globals (reading an unknown one is
 * an error, assigning one is refused once the host is frozen). It stands on luahost.c and
 * luahost_guard.c, neither of which calls it. */
#include "luahost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

static int global_index(lua_State *L)
{
    fdt_luahost *h = fdt_luahost_of(L);
    const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?";
    return luaL_error(L, "unknown name '%s'%s", key, h->hint);
}

static int global_newindex(lua_State *L)
{
    fdt_luahost *h = fdt_luahost_of(L);
    if (h->frozen)
        return luaL_error(L, "cannot assign the global '%s' here: functions of a recipe must "
                             "not keep state (use a local)",
                          lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?");
    lua_rawset(L, 1);
    return 0;
}

static int setup(lua_State *L)
{
    luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
    lua_settop(L, 0);
    static const char *const unsafe[] = {"dofile", "loadfile", "load", "loadstring", "require",
                                         "collectgarbage", "print", NULL};
    lua_pushglobaltable(L);
    for (int i = 0; unsafe[i]; i++) {
        lua_pushnil(L);
        lua_setfield(L, 1, unsafe[i]);
    }
    /* string.dump only serves to load binary chunks; math.random would make the search
     * space depend on the run. */
    lua_getfield(L, 1, "string");
    lua_pushnil(L);
    lua_setfield(L, -2, "dump");
    lua_pop(L, 1);
    /* Size constants that recipes and the catalogue both use. */
    static const struct { const char *name; lua_Integer v; } sizes[] = {
        {"KiB", 1024}, {"MiB", 1024 * 1024}, {"GiB", 1024LL * 1024 * 1024}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        lua_pushinteger(L, sizes[i].v);
        lua_setfield(L, 1, sizes[i].name);
    }
    lua_getfield(L, 1, "math");
    lua_pushnil(L);
    lua_setfield(L, -2, "random");
    lua_pushnil(L);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    /* Lock the string metatable so recipes cannot reach or change the string library's
     * innards through getmetatable(""). */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_pushliteral(L, "locked");
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    fdt_luahost_guard(L);
    lua_createtable(L, 0, 3);
    lua_pushcfunction(L, global_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, global_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushliteral(L, "locked");
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, 1);
    return 0;
}

int fdt_luahost_open(fdt_luahost *h, const char *chunk, size_t mem_limit, fdt_err *e)
{
    memset(h, 0, sizeof *h);
    snprintf(h->chunk, sizeof h->chunk, "%s", chunk);
    if (mem_limit < ((size_t)1 << 20))
        mem_limit = (size_t)1 << 20;
    h->soft = mem_limit;
    /* Room above the soft limit for the allocation that crosses it (a table doubling, a
     * string concatenation) so that the hook, not the allocator, reports it with its line. */
    h->hard = mem_limit > SIZE_MAX / 4 ? SIZE_MAX : mem_limit * 4;
    h->step = FDT_LUAHOST_HOOK_STEP;
    h->deadline = HUGE_VAL;
    lua_State *L = lua_newstate(fdt_luahost_alloc, h);
    if (!L)
        return fdt_err_set(e, "%s: cannot create a Lua state", chunk);
    h->L = L;
    lua_pushcfunction(L, setup);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        fdt_err_set(e, "%s: cannot set up the Lua state: %s", chunk,
                    lua_tostring(L, -1) ? lua_tostring(L, -1) : "out of memory");
        fdt_luahost_close(h);
        return -1;
    }
    return 0;
}
