/* The sandboxed Lua host behind recipes and the GPU catalogue. Recipes are code that users
 * download and edit, so the state gets only base, string, table and math (no I/O, no
 * loading of other code, no binary chunks: luahost_open.c opens it), a memory limit through
 * its allocator, an instruction limit through a count hook, and a limit of processor time
 * that the hook, the library functions (luahost_guard.c) and the calls check. Every mistake must surface
 * as "file.lua:LINE: message": the message handler adds a position where Lua did not, the
 * hook reports the line it interrupted, and a refused allocation records where it happened
 * because Lua does not run message handlers for memory errors. */
#include "luahost.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

static double seconds_of(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The wall clock the checks read: monotonic, and the coarse one (a few milliseconds of
 * resolution, plenty for limits of seconds) because it is read thousands of times a second
 * and costs a fraction of the fine one. */
static double wall_now(void)
{
#ifdef CLOCK_MONOTONIC_COARSE
    return seconds_of(CLOCK_MONOTONIC_COARSE);
#else
    return seconds_of(CLOCK_MONOTONIC);
#endif
}

static fdt_luahost *host_of(lua_State *L)
{
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

static void format_size(size_t bytes, char *buf, size_t n)
{
    if (bytes >= ((size_t)1 << 20) && bytes % ((size_t)1 << 20) == 0)
        snprintf(buf, n, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, n, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, n, "%zu bytes", bytes);
}

static void hook(lua_State *L, lua_Debug *ar);

/* The first Lua frame from `level` up, as "file:line"; empty when there is none. */
static int lua_frame_where(lua_State *L, int level, char *buf, size_t n)
{
    lua_Debug ar;
    for (int lv = level; lua_getstack(L, lv, &ar); lv++) {
        if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
            snprintf(buf, n, "%s:%d", ar.short_src, ar.currentline);
            return 1;
        }
    }
    buf[0] = 0;
    return 0;
}

void *fdt_luahost_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    fdt_luahost *h = ud;
    size_t old = ptr ? osize : 0; /* without ptr, osize encodes the object type */
    if (nsize == 0) {
        free(ptr);
        h->used -= old;
        return NULL;
    }
    if (nsize > old && h->used - old + nsize > h->hard) {
        /* Reading the call stack is safe here (no allocation) and is the only way to say
         * where a memory error happened: Lua skips message handlers for them. */
        if (h->L && h->in_call)
            lua_frame_where(h->L, 0, h->oom_where, sizeof h->oom_where);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p)
        return NULL;
    size_t before = h->used;
    h->used = h->used - old + nsize;
    /* Crossing the soft limit: run the hook at the next instruction, which reports the
     * line (after a full collection, so that garbage alone never trips it). */
    if (h->L && h->in_call && before <= h->soft && h->used > h->soft) {
        /* The allocating line, not the next instruction's (a loop's back jump). */
        lua_frame_where(h->L, 0, h->mem_where, sizeof h->mem_where);
        if (h->step != 1) {
            h->step = 1;
            lua_sethook(h->L, hook, LUA_MASKCOUNT, 1);
        }
    }
    return p;
}

static void raise_at(lua_State *L, lua_Debug *ar, const char *msg)
{
    if (lua_getinfo(L, "Sl", ar) && ar->currentline > 0)
        lua_pushfstring(L, "%s:%d: %s", ar->short_src, ar->currentline, msg);
    else
        lua_pushstring(L, msg);
    lua_error(L);
}

/* From now on every instruction and library call of the running call fails with msg: a
 * pcall inside the recipe cannot swallow the error and go on (the frame that caught it fails
 * at its next instruction), and xpcall no longer runs the recipe's handler, which would run
 * with hooks off when the error comes from the count hook. */
static void set_over(fdt_luahost *h, lua_State *L, const char *msg)
{
    h->over = 1;
    snprintf(h->over_msg, sizeof h->over_msg, "%s", msg);
    if (h->step != 1) {
        h->step = 1;
        lua_sethook(L, hook, LUA_MASKCOUNT, 1);
    }
}

/* "time limit exceeded (60 s of CPU time)", and " in string.find" when `in` names where. */
static void time_msg(const fdt_luahost *h, const char *in, char *buf, size_t n)
{
    snprintf(buf, n, "time limit exceeded (%g s of CPU time)%s%s", h->seconds,
             in ? " in " : "", in ? in : "");
}

/* Whether the time limit ran out: the processor time of this thread since
 * fdt_luahost_set_time reached it. The limit counts processor time, so that a machine busy
 * with other work does not fail a recipe that is merely slow to be scheduled; it is read
 * only once the wall clock, which runs at least as fast, says the time may be up (reading
 * it costs a system call), and then the wall deadline moves by what is left. */
static int time_up(fdt_luahost *h)
{
    if (wall_now() <= h->deadline)
        return 0;
    double left = h->seconds - (seconds_of(CLOCK_THREAD_CPUTIME_ID) - h->cpu_start);
    if (left <= 0)
        return 1;
    h->deadline = wall_now() + left;
    return 0;
}

/* The memory limit's error, or nothing when a full collection brings the heap back under
 * it (garbage alone never trips it). */
static void check_memory(fdt_luahost *h, lua_State *L, lua_Debug *ar)
{
    char msg[160], size[32];
    if (!h->collected) {
        h->collected = 1;
        lua_gc(L, LUA_GCCOLLECT);
    }
    if (h->used > h->soft) {
        format_size(h->soft, size, sizeof size);
        snprintf(msg, sizeof msg, "memory limit exceeded (%s)", size);
        set_over(h, L, msg);
        if (h->mem_where[0]) {
            lua_pushfstring(L, "%s: %s", h->mem_where, msg);
            lua_error(L);
        }
        raise_at(L, ar, msg);
    }
    h->collected = 0;
    h->mem_where[0] = 0;
}

static void hook(lua_State *L, lua_Debug *ar)
{
    fdt_luahost *h = host_of(L);
    char msg[160];
    if (h->over)
        raise_at(L, ar, h->over_msg);
    if (h->used > h->soft)
        check_memory(h, L, ar);
    h->left -= h->step;
    if (h->left < 0) {
        snprintf(msg, sizeof msg, "instruction limit exceeded (%lld instructions): an endless "
                                  "loop?", h->budget);
        set_over(h, L, msg);
        raise_at(L, ar, msg);
    }
    if (time_up(h)) {
        time_msg(h, NULL, msg, sizeof msg);
        set_over(h, L, msg);
        raise_at(L, ar, msg);
    }
    if (h->step != FDT_LUAHOST_HOOK_STEP) {
        h->step = FDT_LUAHOST_HOOK_STEP;
        lua_sethook(L, hook, LUA_MASKCOUNT, FDT_LUAHOST_HOOK_STEP);
    }
}

/* Past "<chunk>:<digits>" at the start of s, or NULL. */
static const char *past_position(const char *s, const char *chunk)
{
    size_t n = strlen(chunk);
    if (strncmp(s, chunk, n) != 0 || s[n] != ':' || !isdigit((unsigned char)s[n + 1]))
        return NULL;
    const char *p = s + n + 1;
    while (isdigit((unsigned char)*p))
        p++;
    return p;
}

/* Whether msg starts with "<chunk>:<digits>:". */
static int has_position(const char *msg, const char *chunk)
{
    const char *p = past_position(msg, chunk);
    return p && *p == ':';
}

/* The module that s ("common.lua:12: message" or "common.lua:12") is positioned in, -1 for
 * none. */
static int module_of(const fdt_luahost *h, const char *s)
{
    for (int i = 0; i < h->nmodules; i++) {
        const char *p = past_position(s, h->modules[i].chunk);
        if (p && (*p == ':' || *p == 0))
            return i;
    }
    return -1;
}

/* Whether msg starts with a position in the main chunk or in a module. */
static int positioned(const fdt_luahost *h, const char *msg)
{
    return has_position(msg, h->chunk) || module_of(h, msg) >= 0;
}

/* " (included from a.lua:1, included from lap.lua:3)" for a message positioned in a
 * module, "" otherwise: each module's include site, up to the main chunk. */
static void include_note(const fdt_luahost *h, const char *msg, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    int m = module_of(h, msg);
    for (int hops = 0; m >= 0 && hops < FDT_LUAHOST_MAX_MODULES && used < n; hops++) {
        const char *from = h->modules[m].from;
        used += (size_t)snprintf(buf + used, n - used, "%sincluded from %s", hops ? ", " : " (",
                                 from);
        m = module_of(h, from);
    }
    if (used && used < n)
        snprintf(buf + used, n - used, ")");
}

static int message_handler(lua_State *L)
{
    fdt_luahost *h = host_of(L);
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "error object is a %s value", luaL_typename(L, 1));
    }
    if (!positioned(h, msg)) {
        char where[96];
        if (lua_frame_where(L, 1, where, sizeof where))
            msg = lua_pushfstring(L, "%s: %s", where, msg);
        else
            msg = lua_pushfstring(L, "%s: %s", h->chunk, msg);
    }
    char note[512];
    include_note(h, msg, note, sizeof note);
    if (note[0] && !strstr(msg, note)) /* not twice for an error raised again */
        lua_pushfstring(L, "%s%s", msg, note);
    return 1;
}

void fdt_luahost_close(fdt_luahost *h)
{
    if (h->L)
        lua_close(h->L);
    h->L = NULL;
}

/* Parses text as the chunk `chunk` and pushes it; on error pushes nothing. */
static int load_chunk(fdt_luahost *h, const char *chunk, const char *text, size_t len,
                      fdt_err *e)
{
    char name[80];
    snprintf(name, sizeof name, "=%s", chunk);
    int rc = luaL_loadbufferx(h->L, text, len, name, "t");
    if (rc == LUA_OK)
        return 0;
    const char *msg = lua_tostring(h->L, -1);
    if (rc == LUA_ERRMEM || !msg)
        fdt_err_set(e, "%s: memory limit exceeded while parsing", chunk);
    else if (strstr(msg, "attempt to load a binary chunk"))
        fdt_err_set(e, "%s: binary (precompiled) chunks are not accepted; recipes are text",
                    chunk);
    else
        fdt_err_set(e, "%s", msg); /* the parser's "file:line: ... near 'x'" */
    lua_pop(h->L, 1);
    return -1;
}

int fdt_luahost_load(fdt_luahost *h, const char *text, size_t len, fdt_err *e)
{
    return load_chunk(h, h->chunk, text, len, e);
}

int fdt_luahost_load_module(fdt_luahost *h, const char *chunk, const char *from,
                            const char *text, size_t len, fdt_err *e)
{
    if (h->nmodules >= FDT_LUAHOST_MAX_MODULES)
        return fdt_err_set(e, "%s: more than %d modules", from, FDT_LUAHOST_MAX_MODULES);
    fdt_luahost_module *m = &h->modules[h->nmodules++];
    snprintf(m->chunk, sizeof m->chunk, "%s", chunk);
    snprintf(m->from, sizeof m->from, "%s", from);
    return load_chunk(h, chunk, text, len, e);
}

/* The error of a call that failed with rc, in e. */
static void call_error(fdt_luahost *h, int rc, fdt_err *e)
{
    if (rc == LUA_ERRMEM) {
        char size[32], note[512];
        format_size(h->soft, size, sizeof size);
        const char *where = h->oom_where[0] ? h->oom_where : h->chunk;
        include_note(h, where, note, sizeof note);
        fdt_err_set(e, "%s: memory limit exceeded (%s)%s", where, size, note);
    } else {
        const char *msg = lua_tostring(h->L, -1);
        fdt_err_set(e, "%s", msg ? msg : "error with a non-string value");
    }
}

/* fdt_luahost_call; `timed` 0 for host code (fdt_luahost_cpcall), which does not fail on
 * the time limit. */
static int protected_call(fdt_luahost *h, int nargs, int nresults, long long instructions,
                          int timed, fdt_err *e)
{
    lua_State *L = h->L;
    int fn = lua_gettop(L) - nargs;
    if (!lua_checkstack(L, 8)) {
        lua_settop(L, fn - 1);
        return fdt_err_set(e, "%s: Lua stack overflow", h->chunk);
    }
    lua_pushcfunction(L, message_handler);
    lua_insert(L, fn);
    h->left = h->budget = instructions;
    h->step = FDT_LUAHOST_HOOK_STEP;
    h->collected = 0;
    h->over = 0;
    h->oom_where[0] = 0;
    h->mem_where[0] = 0;
    h->in_call = 1;
    lua_sethook(L, hook, LUA_MASKCOUNT, FDT_LUAHOST_HOOK_STEP);
    int rc = lua_pcall(L, nargs, nresults, fn);
    lua_sethook(L, NULL, 0, 0);
    h->in_call = 0;
    /* A call can end without the clock read inside (a few instructions, each slow: comparing
     * long strings): read after the first call and every 16th, which costs a walk of
     * millions of short calls nothing to speak of. */
    if (rc == LUA_OK && timed && h->calls++ % 16 == 0 && time_up(h)) {
        char msg[160];
        time_msg(h, NULL, msg, sizeof msg);
        fdt_err_set(e, "%s: %s", h->chunk, msg);
        lua_settop(L, fn - 1);
        return -1;
    }
    if (rc == LUA_OK) {
        lua_remove(L, fn);
        return 0;
    }
    call_error(h, rc, e);
    lua_settop(L, fn - 1);
    return -1;
}

int fdt_luahost_call(fdt_luahost *h, int nargs, int nresults, long long instructions,
                     fdt_err *e)
{
    return protected_call(h, nargs, nresults, instructions, 1, e);
}

void fdt_luahost_set_time(fdt_luahost *h, double seconds)
{
    h->seconds = seconds > 0 ? seconds : 0;
    h->cpu_start = seconds > 0 ? seconds_of(CLOCK_THREAD_CPUTIME_ID) : 0;
    h->deadline = seconds > 0 ? wall_now() + seconds : HUGE_VAL;
    h->calls = 0;
}

void fdt_luahost_check_time(lua_State *L, const char *in)
{
    fdt_luahost *h = host_of(L);
    if (h->over)
        fdt_luahost_error(L, "%s", h->over_msg);
    if (time_up(h)) {
        char msg[160];
        time_msg(h, in, msg, sizeof msg);
        set_over(h, L, msg);
        fdt_luahost_error(L, "%s", msg);
    }
}

int fdt_luahost_over(lua_State *L) { return host_of(L)->over; }

fdt_luahost *fdt_luahost_of(lua_State *L) { return host_of(L); }

static int cpcall_trampoline(lua_State *L)
{
    lua_CFunction fn = (lua_CFunction)(uintptr_t)lua_touserdata(L, lua_upvalueindex(1));
    return fn(L);
}

int fdt_luahost_cpcall(fdt_luahost *h, lua_CFunction fn, void *ud, fdt_err *e)
{
    /* A C function pointer cannot travel as light userdata portably; an upvalue of a
     * closure can, through uintptr_t, which is fine on every platform fdtune targets. */
    lua_pushlightuserdata(h->L, (void *)(uintptr_t)fn);
    lua_pushcclosure(h->L, cpcall_trampoline, 1);
    lua_pushlightuserdata(h->L, ud);
    return protected_call(h, 1, 0, FDT_LUAHOST_HOOK_STEP, 0, e);
}

void fdt_luahost_freeze(fdt_luahost *h) { h->frozen = 1; }

/* ---------------------------------------------------------------- strict proxies */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted, comma-separated string keys of the tables at upvalues 1 and 2, pushed. */
static void push_field_list(lua_State *L)
{
    const char *names[128];
    int n = 0;
    for (int u = 1; u <= 2; u++) {
        int t = lua_upvalueindex(u);
        if (!lua_istable(L, t))
            continue;
        lua_pushnil(L);
        while (lua_next(L, t)) {
            lua_pop(L, 1);
            if (lua_type(L, -1) == LUA_TSTRING && n < 128)
                names[n++] = lua_tostring(L, -1); /* keys stay alive in their table */
        }
    }
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; i < n; i++) {
        if (i)
            luaL_addstring(&b, ", ");
        luaL_addstring(&b, names[i]);
    }
    luaL_pushresult(&b);
}

/* The data table's __index: a read the table cannot answer (the proxy's __index is the data
 * table itself, so fields it holds are read without a call). */
static int proxy_miss(lua_State *L)
{
    lua_pushvalue(L, 2);
    lua_rawget(L, lua_upvalueindex(1));
    if (!lua_isnil(L, -1))
        return 1;
    lua_pop(L, 1);
    const char *what = lua_tostring(L, lua_upvalueindex(3));
    if (lua_type(L, 2) != LUA_TSTRING)
        return luaL_error(L, "%s has no field [%s]", what, luaL_tolstring(L, 2, NULL));
    const char *key = lua_tostring(L, 2);
    if (lua_istable(L, lua_upvalueindex(2))) {
        lua_pushvalue(L, 2);
        if (lua_rawget(L, lua_upvalueindex(2)) != LUA_TNIL)
            return luaL_error(L, "%s.%s is derived later in the recipe and has no value yet "
                                 "(derive it earlier, or check after its derive)", what, key);
        lua_pop(L, 1);
    }
    push_field_list(L);
    return luaL_error(L, "%s has no field '%s' (fields: %s)", what, key, lua_tostring(L, -1));
}

static int proxy_newindex(lua_State *L)
{
    return luaL_error(L, "%s is read-only (cannot set '%s')", lua_tostring(L, lua_upvalueindex(1)),
                      luaL_tolstring(L, 2, NULL));
}

/* Iterator over the data table held as an upvalue, so that pairs() never hands the
 * writable table itself to the recipe. */
static int proxy_next(lua_State *L)
{
    lua_settop(L, 2);
    if (lua_next(L, lua_upvalueindex(1)))
        return 2;
    lua_pushnil(L);
    return 1;
}

static int proxy_pairs(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushcclosure(L, proxy_next, 1);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

/* The tracking proxy's __index: tells the tracker, then reads the data table (whose
 * metatable raises the errors of a field it lacks). */
static int tracking_index(lua_State *L)
{
    fdt_luahost_tracker *t = lua_touserdata(L, lua_upvalueindex(2));
    if (lua_type(L, 2) == LUA_TSTRING)
        t->mark(t->ud, lua_tostring(L, 2));
    lua_pushvalue(L, 2);
    lua_gettable(L, lua_upvalueindex(1));
    return 1;
}

static int tracking_pairs(lua_State *L)
{
    fdt_luahost_tracker *t = lua_touserdata(L, lua_upvalueindex(2));
    t->mark(t->ud, NULL);
    return proxy_pairs(L);
}

/* Pushes the empty table that fronts the data table at absolute index data: reads answered
 * by the data table itself (t NULL) or through the tracker t, writes refused, pairs over the
 * data table. */
static void push_front(lua_State *L, int data, const char *what, fdt_luahost_tracker *t)
{
    lua_createtable(L, 0, 0);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, data);
    if (t) {
        lua_pushlightuserdata(L, t);
        lua_pushcclosure(L, tracking_index, 2);
    }
    lua_setfield(L, -2, "__index");
    lua_pushstring(L, what);
    lua_pushcclosure(L, proxy_newindex, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushvalue(L, data);
    if (t) {
        lua_pushlightuserdata(L, t);
        lua_pushcclosure(L, tracking_pairs, 2);
    } else {
        lua_pushcclosure(L, proxy_pairs, 1);
    }
    lua_setfield(L, -2, "__pairs");
    lua_pushliteral(L, "locked");
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
}

void fdt_luahost_push_proxy(lua_State *L, int data, int pending, const char *what)
{
    data = lua_absindex(L, data);
    pending = pending ? lua_absindex(L, pending) : 0;
    /* the data table's own metatable answers what it lacks: the errors */
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, data);
    if (pending)
        lua_pushvalue(L, pending);
    else
        lua_pushnil(L);
    lua_pushstring(L, what);
    lua_pushcclosure(L, proxy_miss, 3);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "locked");
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, data);
    push_front(L, data, what, NULL);
}

void fdt_luahost_push_tracking_proxy(lua_State *L, int data, const char *what,
                                     fdt_luahost_tracker *t)
{
    push_front(L, lua_absindex(L, data), what, t);
}

/* ---------------------------------------------------------------- small helpers */

void fdt_luahost_where(lua_State *L, int level, char *buf, size_t n)
{
    if (!lua_frame_where(L, level, buf, n)) {
        fdt_luahost *h = host_of(L);
        snprintf(buf, n, "%s", h->chunk);
    }
}

int fdt_luahost_func_where(lua_State *L, int idx, char *buf, size_t n)
{
    if (lua_type(L, idx) != LUA_TFUNCTION)
        return -1;
    lua_Debug ar;
    lua_pushvalue(L, idx);
    if (!lua_getinfo(L, ">S", &ar) || ar.linedefined <= 0)
        return -1;
    snprintf(buf, n, "%s:%d", ar.short_src, ar.linedefined);
    return 0;
}

const char *fdt_luahost_typename(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TNIL: return "nil";
    case LUA_TBOOLEAN: return "a boolean";
    case LUA_TNUMBER: return lua_isinteger(L, idx) ? "an integer" : "a number";
    case LUA_TSTRING: return "a string";
    case LUA_TTABLE: return "a table";
    case LUA_TFUNCTION: return "a function";
    default: return "a value of another type";
    }
}

int fdt_luahost_tointeger(lua_State *L, int idx, long long *out)
{
    if (lua_type(L, idx) != LUA_TNUMBER)
        return -1;
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, idx, &ok);
    if (!ok)
        return -1;
    *out = (long long)v;
    return 0;
}

void fdt_luahost_normalize(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; *s && k + 1 < n; s++)
        if (isalnum((unsigned char)*s))
            out[k++] = (char)tolower((unsigned char)*s);
    out[k] = 0;
}

int fdt_luahost_error(lua_State *L, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return luaL_error(L, "%s", buf);
}
