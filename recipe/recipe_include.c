/* Modules of recipes: `include "common"` runs lib/common.lua, found next to the recipe or in
 * lib/ of a directory of the search path, once per recipe, and hands back what it returned.
 * A module runs in the recipe's own sandboxed state: the same libraries, the same memory
 * limit, and the instruction budget of the code that includes it; its text is read, never a
 * binary chunk. A module is named, never given as a path, so that a recipe cannot reach
 * files outside the module directories. Its messages keep its own "common.lua:LINE" and say
 * where it was included from (luahost.c), and its bytes take part in the recipe's hash. */
#include "recipe_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

/* Whether a and b name the same existing directory (however they are spelt). */
static int same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!strcmp(a, b))
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int add_module_dir(recipe_modules *ms, const char *dir, const char *sub, fdt_err *e)
{
    char path[4200];
    snprintf(path, sizeof path, "%s%s", dir, sub);
    for (int i = 0; i < ms->ndirs; i++)
        if (same_dir(ms->dirs[i], path))
            return 0;
    if (ms->ndirs >= RECIPE_MAX_MODULE_DIRS)
        return 0;
    if (!(ms->dirs[ms->ndirs] = strdup(path)))
        return fdt_err_set(e, "recipe modules: out of memory");
    ms->ndirs++;
    return 0;
}

int fdt_recipe_modules_init(recipe_modules *ms, const char *recipe_path, fdt_err *e)
{
    memset(ms, 0, sizeof *ms);
    if (recipe_path) {
        const char *slash = strrchr(recipe_path, '/');
        char dir[4096];
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == recipe_path)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - recipe_path), recipe_path);
        if (add_module_dir(ms, dir, !strcmp(dir, "/") ? "lib" : "/lib", e))
            return -1;
    }
    const char *all[RECIPE_MAX_DIRS];
    char store[8192];
    int nd = fdt_recipe_search_path(all, store, sizeof store);
    for (int i = 0; i < nd; i++)
        if (add_module_dir(ms, all[i], "/lib", e))
            return -1;
    return 0;
}

void fdt_recipe_modules_free(recipe_modules *ms)
{
    for (int i = 0; i < ms->ndirs; i++)
        free(ms->dirs[i]);
    for (int i = 0; i < ms->n; i++)
        free(ms->m[i].path);
    ms->ndirs = ms->n = 0;
}

uint64_t fdt_recipe_modules_hash(const recipe_modules *ms, uint64_t seed)
{
    for (int i = 0; i < ms->n; i++) {
        seed = fdt_hash64_str(ms->m[i].name, seed);
        seed = fdt_hash64(&ms->m[i].hash, sizeof ms->m[i].hash, seed);
    }
    return seed;
}

/* A plain module name: letters, digits, '_' and '-'. Raises otherwise, saying why. */
static void check_name(lua_State *L, const char *name)
{
    size_t len = strlen(name);
    if (strchr(name, '/') || strchr(name, '\\') || strstr(name, ".."))
        luaL_error(L, "include '%s': a module is named, not given as a path (include \"common\" "
                      "loads lib/common.lua)", name);
    if (len > 4 && !strcmp(name + len - 4, ".lua"))
        luaL_error(L, "include '%s': name the module without .lua (include \"%s\")", name,
                   lua_pushlstring(L, name, len - 4));
    if (len == 0 || len >= sizeof ((recipe_module *)0)->name)
        luaL_error(L, "include '%s': a module name has 1 to %d characters", name,
                   (int)sizeof ((recipe_module *)0)->name - 1);
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
            luaL_error(L, "include '%s': a module name has only letters, digits, _ and -",
                       name);
}

/* "include 'a': include cycle: a -> b -> a" for `name`, which is still loading as m[i]. */
static int cycle_error(lua_State *L, const recipe_modules *ms, int i, const char *name)
{
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int j = i; j < ms->n; j++)
        if (ms->m[j].loading) {
            luaL_addstring(&b, ms->m[j].name);
            luaL_addstring(&b, " -> ");
        }
    luaL_addstring(&b, name);
    luaL_pushresult(&b);
    return luaL_error(L, "include '%s': include cycle: %s", name, lua_tostring(L, -1));
}

/* The first <dir>/<name>.lua that can be read; raises naming every directory otherwise. */
static void locate(lua_State *L, const recipe_modules *ms, const char *name, char *path,
                   size_t n)
{
    for (int i = 0; i < ms->ndirs; i++) {
        snprintf(path, n, "%s/%s.lua", ms->dirs[i], name);
        if (access(path, R_OK) == 0)
            return;
    }
    char list[1536];
    fdt_recipe_dir_list((const char *const *)ms->dirs, ms->ndirs, list, sizeof list);
    luaL_error(L, "include '%s': not found in %s", name, list);
}

int fdt_recipe_include(lua_State *L, fdt_luahost *h, recipe_modules *ms, const char *name)
{
    check_name(L, name);
    for (int i = 0; i < ms->n; i++)
        if (!strcmp(ms->m[i].name, name)) {
            if (ms->m[i].loading)
                return cycle_error(L, ms, i, name);
            lua_rawgeti(L, LUA_REGISTRYINDEX, ms->m[i].ref);
            return 1;
        }
    if (ms->n >= FDT_LUAHOST_MAX_MODULES)
        return luaL_error(L, "include '%s': a recipe includes at most %d modules", name,
                          FDT_LUAHOST_MAX_MODULES);
    char path[4300], chunk[64], from[96];
    locate(L, ms, name, path, sizeof path);
    char *text;
    size_t len;
    fdt_err e;
    if (fdt_read_file(path, &text, &len, &e))
        return luaL_error(L, "include '%s': %s", name, e.msg);
    recipe_module *m = &ms->m[ms->n];
    memset(m, 0, sizeof *m);
    m->path = strdup(path);
    if (!m->path) {
        free(text);
        return luaL_error(L, "include '%s': out of memory", name);
    }
    snprintf(m->name, sizeof m->name, "%s", name);
    m->hash = fdt_hash64(text, len, FDT_HASH_SEED);
    m->ref = LUA_NOREF;
    m->loading = 1;
    ms->n++;
    snprintf(chunk, sizeof chunk, "%s.lua", name);
    fdt_luahost_where(L, 1, from, sizeof from);
    int rc = fdt_luahost_load_module(h, chunk, from, text, len, &e);
    free(text);
    if (rc) {
        /* The parser's "common.lua:LINE: ..." keeps its position; the host adds the note. */
        lua_pushstring(L, e.msg);
        return lua_error(L);
    }
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    m->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    m->loading = 0;
    return 1;
}
