/* Private state of a loaded recipe, shared by recipe.c (loading, directives), recipe_space.c
 * (enumeration, checks), recipe_include.c (modules), recipe_path.c (the search path) and
 * recipe_find.c. */
#ifndef FDT_RECIPE_INTERNAL_H
#define FDT_RECIPE_INTERNAL_H

#include "fdt_recipe.h"
#include "luahost.h"

/* Derives and constraints together; the rest of FDT_RECIPE_MAX_PRUNE is for generator rows. */
#define RECIPE_MAX_STEPS 40
#define RECIPE_MAX_PARAMS 32
/* Values one param may list: every value of bx (1..1024) four times over. The duplicate
 * check compares each value with those before it, a few milliseconds at this bound. */
#define RECIPE_MAX_VALUES 4096
/* Walking more points than this is not a search any strategy can afford. */
#define RECIPE_MAX_SPACE 20000000ULL
/* Directories of the search path (FDTUNE_RECIPES entries and the caller's together). */
#define RECIPE_MAX_DIRS 32
/* Where a recipe looks for modules: its own lib/, then lib/ of each search directory. */
#define RECIPE_MAX_MODULE_DIRS (RECIPE_MAX_DIRS + 1)

typedef struct recipe_param {
    const fdt_param_info *pi;
    int n;          /* values */
    int *values;    /* integers, or indices into pi->choices */
    char file[64];  /* of the directive: the recipe, or a module it includes */
    int line;
} recipe_param;

enum { STEP_DERIVE, STEP_CONSTRAIN };

typedef struct recipe_step {
    int kind;
    char name[80];             /* constraint name, or the derived parameter */
    const fdt_param_info *pi;  /* derived parameter */
    int ref;                   /* function in the registry */
    char file[64];             /* of the directive: the recipe, or a module it includes */
    int line;                  /* of the directive */
} recipe_step;

/* A module the recipe included (recipe_include.c). */
typedef struct recipe_module {
    char name[48];             /* "common" */
    char *path;                /* where it was found */
    uint64_t hash;             /* of its bytes */
    int ref;                   /* its value, in the registry */
    int loading;               /* still running: including it now is a cycle */
} recipe_module;

typedef struct recipe_modules {
    int ndirs;
    char *dirs[RECIPE_MAX_MODULE_DIRS]; /* looked in, in order */
    int n;
    recipe_module m[FDT_LUAHOST_MAX_MODULES];
} recipe_modules;

struct fdt_recipe {
    fdt_luahost host;
    fdt_recipe_limits lim;
    char path[4096];
    char name[64];
    char hash[17];
    unsigned ops;              /* bit per fdt_op; 0: any */
    char strategy[16];
    int budget;
    int nparams;
    recipe_param params[RECIPE_MAX_PARAMS];
    int nsteps;
    recipe_step steps[RECIPE_MAX_STEPS];
    fdt_config defcfg;         /* fdtune defaults overridden by `default {}` */
    uint64_t defset;           /* bit per parameter (catalogue index) set by `default {}` */
    int seen_name, seen_ops, seen_strategy, seen_budget, seen_default;
    fdt_dialect dialect;       /* of the parameters listed, derived or defaulted: the
                                  generator checks configs in it (HIP until one says) */
    char dialect_by[16];       /* the first of them that is one dialect's own; "" none yet */
    uint64_t space;
    recipe_modules mods;
    /* Lua side of enumeration (registry references) */
    int c_data, c_proxy, pending;
    int dev_proxy, prob_proxy;
    fdt_problem prob;          /* problem of the current call */
    const fdt_problem *cur;    /* &prob once a call set it; helpers refuse to run before */
    const fdt_config *cfg;     /* the config the running derives and constraints see as c;
                                  NULL outside them */
    uint64_t cfg_pending;      /* its parameters (catalogue bits) derived later */
    /* What the Lua table c_data holds, per parameter (catalogue index): the value, or
     * RECIPE_NIL; valid while shadow_ok. Filling a point then sets only the fields that
     * differ from the last one (the walk changes its last parameters most often). */
    long long shadow[64];
    int shadow_ok;
    /* The walk's prefix skip (recipe_space.c): c_track, a proxy of c_data that reports each
     * read to `tracker`, which sets the parameter's catalogue bit in `track` (all bits when
     * the whole config is read: pairs, a helper); run_step passes it while `tracking`. */
    int c_track;
    int tracking;
    uint64_t track;
    fdt_luahost_tracker tracker;
    int prefix_skip;           /* 1 (default): the walk skips what a prune's reads decide */
    const char *track_key[64]; /* the key strings the tracker met (Lua interns short ones: */
    char track_name[64][24];   /* a key read again is mostly the same pointer, checked by */
    int track_bit[64];         /* name), their catalogue bits (-1: none); ntrack in use */
    int ntrack;
    unsigned futile[RECIPE_MAX_STEPS]; /* reruns of a step in a row that skipped nothing */
};
#define RECIPE_NIL (-(1LL << 62))

/* Catalogue index of a parameter (bit position in defset and masks). */
int fdt_recipe_param_index(const fdt_param_info *pi);
/* Validates one value of parameter pi at stack index idx; on success *out is the integer
 * (or choice index). On failure fills why (without position) and returns -1. */
int fdt_recipe_check_value(lua_State *L, int idx, const fdt_param_info *pi, int *out, char *why,
                           size_t n);
/* Pushes the Lua value of parameter pi holding v (integer or choice string). */
void fdt_recipe_push_value(lua_State *L, const fdt_param_info *pi, int v);
/* Formats a parameter value for messages ("64", "yzx"). */
void fdt_recipe_format_value(const fdt_param_info *pi, int v, char *buf, size_t n);


/* ---- the search path (recipe_path.c) ---- */

/* The directories of FDTUNE_RECIPES (colon-separated; `store` holds the split copy), then
 * dirs; at most RECIPE_MAX_DIRS. */
int fdt_recipe_search_dirs(const char *const *dirs, int ndirs, const char **out, char *store,
                           size_t storen);
/* FDTUNE_RECIPES, then fdt_recipe_install_dirs: the whole search path. */
int fdt_recipe_search_path(const char **out, char *store, size_t storen);
/* "a, b, c" for messages ("no directory: set FDTUNE_RECIPES" when n is 0). */
void fdt_recipe_dir_list(const char *const *dirs, int n, char *buf, size_t len);

/* ---- modules (recipe_include.c) ---- */

/* The directories include looks in: <directory of recipe_path>/lib (none when recipe_path
 * is NULL: a recipe given as text has no directory), then lib/ of each directory of the
 * search path; a directory met again (by another spelling) is dropped. */
int fdt_recipe_modules_init(recipe_modules *ms, const char *recipe_path, fdt_err *e);
/* Frees what init and include allocated (the Lua values go with the state). */
void fdt_recipe_modules_free(recipe_modules *ms);
/* The work of `include "name"` (the directive checks its argument is a string): checks the
 * name, finds lib/<name>.lua, runs it once in h's state and pushes its value (true when it
 * returns nothing); later includes push the same value. Raises Lua errors. */
int fdt_recipe_include(lua_State *L, fdt_luahost *h, recipe_modules *ms, const char *name);
/* seed folded with each module's name and bytes, in include order; seed itself when the
 * recipe includes nothing (so such recipes keep the hash of their own bytes). */
uint64_t fdt_recipe_modules_hash(const recipe_modules *ms, uint64_t seed);

#endif
