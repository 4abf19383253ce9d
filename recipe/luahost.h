/* Private interface of the sandboxed Lua host shared by recipes and the GPU catalogue: a Lua
 * state with only the safe libraries, a memory limit, an instruction limit per call, a limit
 * of processor time over a run of calls that holds inside library functions too, strict
 * read-only tables (reading an unknown field is an error at the reading line), protected
 * calls whose errors always come back as "file.lua:LINE: message", and further chunks
 * (modules a recipe includes) whose messages keep their own file name and say where they
 * were included from. */
#ifndef FDT_LUAHOST_H
#define FDT_LUAHOST_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "fdt_common.h"

/* At most this many modules in one state. */
#define FDT_LUAHOST_MAX_MODULES 16

/* Instructions between two hook calls while nothing is wrong: cheap, yet a loop is caught
 * within a thousand instructions of the limit. */
#define FDT_LUAHOST_HOOK_STEP 1000

/* A chunk loaded after the main one (a module): its name in messages ("common.lua") and
 * where it was first included ("lap.lua:3"). */
typedef struct fdt_luahost_module {
    char chunk[64];
    char from[96];
} fdt_luahost_module;

typedef struct fdt_luahost {
    lua_State *L;
    char chunk[64];        /* display name in messages: the file's base name */
    size_t used;           /* bytes allocated by Lua */
    size_t soft, hard;     /* soft: the limit users see; hard: refused outright */
    long long left;        /* instructions left in the current call */
    long long budget;      /* instructions of the current call (for the message) */
    int step;              /* current count-hook period */
    double seconds;        /* the time limit set by fdt_luahost_set_time (0: none) */
    double cpu_start;      /* this thread's processor time then */
    double deadline;       /* the wall-clock time before which it cannot have run out
                              (HUGE_VAL: never) */
    unsigned calls;        /* calls since then (the clock is read after every 16th) */
    int over;              /* a limit was exceeded in the running call: every further
                              instruction and library call fails with over_msg */
    char over_msg[160];
    int in_call;
    int collected;         /* a full collection already ran since memory went over */
    int frozen;            /* globals are read-only */
    char oom_where[96];    /* "file.lua:LINE" of the allocation refused at the hard limit */
    char mem_where[96];    /* and of the one that crossed the soft limit */
    char hint[256];        /* appended to "unknown name" errors, e.g. the directive list */
    int nmodules;
    fdt_luahost_module modules[FDT_LUAHOST_MAX_MODULES];
} fdt_luahost;

/* Opens a state with base (minus dofile, loadfile, load, require, collectgarbage, print),
 * the size constants KiB, MiB, GiB,
 * string (minus dump), table and math (minus random, randomseed: results must be
 * reproducible). Globals are strict: reading an undefined one is an error. `chunk` is the
 * name used in messages. The host must stay at the same address while open.
 * luahost_open.c, above luahost.c and luahost_guard.c. */
int fdt_luahost_open(fdt_luahost *h, const char *chunk, size_t mem_limit, fdt_err *e);
void fdt_luahost_close(fdt_luahost *h);

/* The allocator of every state (lua_Alloc; ud is the host): counts the bytes Lua holds,
 * refuses what would pass the hard limit and has the count hook report the soft limit at
 * the line that crossed it. luahost.c; fdt_luahost_open (luahost_open.c) creates the state
 * on it. */
void *fdt_luahost_alloc(void *ud, void *ptr, size_t osize, size_t nsize);
/* The host whose state L is (the allocator's ud). */
fdt_luahost *fdt_luahost_of(lua_State *L);

/* Loads text (binary chunks are refused) and pushes the chunk as a function. */
int fdt_luahost_load(fdt_luahost *h, const char *text, size_t len, fdt_err *e);

/* Loads a module's text the same way as a further chunk named `chunk` ("common.lua"),
 * included from `from` ("lap.lua:3"), and pushes it as a function; on error nothing is
 * pushed and e holds "common.lua:LINE: message". From then on, a message positioned in the
 * module ends with "(included from lap.lua:3)", the whole chain for nested modules. At
 * most FDT_LUAHOST_MAX_MODULES modules. */
int fdt_luahost_load_module(fdt_luahost *h, const char *chunk, const char *from,
                            const char *text, size_t len, fdt_err *e);

/* lua_pcall under a message handler that keeps file:line, with an instruction limit for
 * this call, under the time limit (fdt_luahost_set_time). On error the stack is restored
 * (function and arguments popped) and e holds "file.lua:LINE: message"; a call that returns
 * after the time ran out may fail too ("file.lua: time limit exceeded (60 s of CPU
 * time)"). */
int fdt_luahost_call(fdt_luahost *h, int nargs, int nresults, long long instructions,
                     fdt_err *e);

/* Starts a time limit: from now on, the calls of fdt_luahost_call fail once this thread
 * has used `seconds` of processor time (0: no limit), until the next fdt_luahost_set_time.
 * The count hook looks at the clock every thousand instructions, the library functions
 * (luahost_guard.c) when they are called and when they return, and fdt_luahost_call after
 * the first call and every 16th. */
void fdt_luahost_set_time(fdt_luahost *h, double seconds);

/* Runs fn(L, ud) in protected mode (for C code that builds Lua values and could run out
 * of memory); fn returns nothing on the stack. Host code, not the recipe's: not timed. */
int fdt_luahost_cpcall(fdt_luahost *h, lua_CFunction fn, void *ud, fdt_err *e);

/* Once frozen, assigning a global is an error (recipe functions must not keep state). */
void fdt_luahost_freeze(fdt_luahost *h);

/* Pushes a read-only proxy of the table at index `data` (absolute or relative): reading a
 * field the table lacks raises "`what` has no field 'x' (fields: ...)" at the reading line;
 * writing raises "`what` is read-only". The data table stays live through the proxy and may
 * be updated in place by C (raw sets, or lua_setfield: the data table gets a metatable
 * whose __index raises those errors, so C must not read a missing key of it with
 * lua_getfield). Keys listed in the optional table at index `pending` (0: none) raise
 * "`what`.x is not derived yet" instead. */
void fdt_luahost_push_proxy(lua_State *L, int data, int pending, const char *what);

/* Who is told of the reads through a tracking proxy: mark(ud, key) before each read of a
 * string key, mark(ud, NULL) when the whole table is walked (pairs). */
typedef struct fdt_luahost_tracker {
    void (*mark)(void *ud, const char *key);
    void *ud;
} fdt_luahost_tracker;

/* Pushes a second read-only proxy over the data table at index `data`, which
 * fdt_luahost_push_proxy already fronts (its metatable gives the same errors): the same
 * values, errors and pairs, but every read is a call that first tells t (which must outlive
 * the proxy). Slower than the plain proxy; for finding out which fields a function reads. */
void fdt_luahost_push_tracking_proxy(lua_State *L, int data, const char *what,
                                     fdt_luahost_tracker *t);

/* For library functions running in the sandbox: raises the running call's limit error
 * (at the calling line) when a limit was exceeded in it, or "time limit exceeded (60 s of
 * CPU time) in `in`" when its time ran out. */
void fdt_luahost_check_time(lua_State *L, const char *in);

/* 1 when a limit was exceeded in the running call (fdt_luahost_check_time would raise). */
int fdt_luahost_over(lua_State *L);

/* Replaces the library functions that run in C, where the count hook never fires
 * (luahost_guard.c): every function of string and table checks the time when it is called
 * and when it returns, pattern matching and table functions refuse work beyond their
 * bounds, table.sort compares through the clock, xpcall runs its handler only while no
 * limit was exceeded, and setmetatable refuses __gc. Runs in fdt_luahost_open's protected
 * setup. */
void fdt_luahost_guard(lua_State *L);

/* "file.lua:LINE" of the innermost running Lua function (level >= 1), or the chunk name. */
void fdt_luahost_where(lua_State *L, int level, char *buf, size_t n);

/* "file.lua:LINE" where the Lua function at stack index idx is defined; 0 on success, -1
 * (buf untouched) when it is not a Lua function. */
int fdt_luahost_func_where(lua_State *L, int idx, char *buf, size_t n);

/* luaL_error with printf formats (lua_pushfstring knows no %lld or %g): raises the message
 * at the position of the Lua code calling the current C function. Never returns. */
int fdt_luahost_error(lua_State *L, const char *fmt, ...) FDT_PRINTF(2, 3);

/* Human-readable type of a value for messages: "an integer", "a string", ... */
const char *fdt_luahost_typename(lua_State *L, int idx);

/* An integer (or a float with an integral value) at idx; 0 on success. */
int fdt_luahost_tointeger(lua_State *L, int idx, long long *out);

/* Case-folded text with only letters and digits ("RX 7900-XTX" -> "rx7900xtx"). */
void fdt_luahost_normalize(const char *s, char *out, size_t n);

#endif
