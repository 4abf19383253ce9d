/* Recipes and the GPU catalogue. A recipe is a Lua file (recipes/<op>.lua) describing a
 * search space: value lists of config parameters, derived parameters, constraints, and a
 * default strategy, budget and config. The catalogue (recipes/gpus.lua) names GPUs with their
 * aliases and hardware facts, so that dry runs work on machines without a GPU. Both run in a
 * sandboxed Lua host: no I/O, memory and instruction limits, and every mistake reported as
 * "file.lua:LINE: message". The language is described in recipes/README.md. */
#ifndef FDT_RECIPE_H
#define FDT_RECIPE_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_common.h"
#include "fdt_gen.h"
#include "fdt_rt.h"

/* ------------------------------------------------------------------ devices */

/* What recipes see as `dev`, from a live GPU or from a catalogue entry: one shape for both.
 * The Lua table has exactly these fields (catalogue and live are a string and a boolean). */
typedef struct fdt_recipe_device {
    char vendor[16];           /* "AMD", "NVIDIA" */
    char name[128];            /* catalogue name, or the driver's name for a live GPU */
    char arch[32];             /* "gfx90a", "sm_90" */
    int compute_units;         /* CUs or SMs (per GCD for MI250/MI250X) */
    int warp_size;
    int max_threads_per_block;
    int shared_per_block;      /* bytes, static limit */
    int shared_per_block_optin;
    int64_t l2_bytes;
    int64_t infinity_cache_bytes; /* AMD Infinity Cache (MALL), 0 when none */
    int64_t llc_bytes;         /* last-level cache: the infinity cache if any, else L2 */
    int64_t mem_bytes;
    double peak_bw_gbs;
    char catalogue[48];        /* matching catalogue entry, "" when none */
    int live;                  /* 1: described from a visible GPU */
} fdt_recipe_device;

/* ------------------------------------------------------------------ recipes */

typedef struct fdt_recipe fdt_recipe;

typedef struct fdt_recipe_limits {
    size_t mem_bytes;            /* Lua heap of one recipe (default 64 MiB) */
    long long load_instructions; /* running the file (default 50 million) */
    long long call_instructions; /* one derive or constraint call (default 1 million) */
} fdt_recipe_limits;

void fdt_recipe_limits_default(fdt_recipe_limits *l);

/* Loads and runs a recipe file; lim may be NULL (defaults). Errors read "file.lua:LINE: ...".
 * `include "name"` finds lib/name.lua next to the file, then in lib/ of each directory of
 * the search path (see fdt_recipe_install_dirs). */
int fdt_recipe_load(const char *path, const fdt_recipe_limits *lim, fdt_recipe **out, fdt_err *e);
/* Same from text; `name` is the file name used in messages and for the recipe name. Text
 * has no directory of its own: modules come from the search path only. */
int fdt_recipe_load_text(const char *name, const char *text, size_t len,
                         const fdt_recipe_limits *lim, fdt_recipe **out, fdt_err *e);
void fdt_recipe_free(fdt_recipe *r);

/* Identity for the database: the name (`name "..."`, else the file stem), the path it was
 * loaded from ("" for text) and a hash of the file's bytes and of the modules it includes
 * (16 hex digits; a recipe that includes nothing hashes its own bytes only). */
const char *fdt_recipe_name(const fdt_recipe *r);
const char *fdt_recipe_path(const fdt_recipe *r);
const char *fdt_recipe_hash(const fdt_recipe *r);
/* 1 when the recipe lists op in `ops {}` (or lists no ops at all). */
int fdt_recipe_serves(const fdt_recipe *r, fdt_op op);
/* "exhaustive", "random", "model", or NULL when the recipe does not say. */
const char *fdt_recipe_strategy(const fdt_recipe *r);
/* Evaluations, 0 when the recipe does not say. */
int fdt_recipe_budget(const fdt_recipe *r);
/* Product of the value lists: the number of points before any pruning. */
uint64_t fdt_recipe_space_size(const fdt_recipe *r);
/* Human-readable summary: parameters with their values, derives, constraints (with lines),
 * strategy, budget, default. */
void fdt_recipe_describe(const fdt_recipe *r, fdt_sb *out);

#define FDT_RECIPE_MAX_PRUNE 64

/* Why configs were dropped: one row per derive (value out of range) and constraint, in
 * recipe order (zero counts included), then one per generator parameter ("generator: vec")
 * in order of first appearance. */
typedef struct fdt_recipe_prune {
    char name[96];     /* constraint name, "derive lb: out of range", "generator: vec" */
    char file[64];     /* of the directive: the recipe or a module ("common.lua"); "" for
                        * the generator */
    int line;          /* line of the directive in that file, 0 for the generator */
    uint64_t count;
    char example[192]; /* the first reason given (constraint's reason, generator message) */
} fdt_recipe_prune;

typedef struct fdt_recipe_stats {
    uint64_t space;     /* product of the value lists */
    uint64_t visited;   /* points evaluated (space, unless the callback stopped early) */
    uint64_t survivors; /* configs handed to the callback */
    int stopped;        /* the callback asked to stop */
    int nprune;
    fdt_recipe_prune prune[FDT_RECIPE_MAX_PRUNE];
} fdt_recipe_stats;

/* Receives each surviving config with its index in the product; return 0 to go on,
 * anything else to stop (enumerate then returns 0 with stats->stopped set). */
typedef int (*fdt_recipe_visit)(void *ctx, const fdt_config *c, uint64_t index);

/* Walks the product of the value lists in a fixed order (first listed parameter slowest,
 * last fastest; values in listed order), applies derives and constraints in recipe order,
 * then fdt_config_check, and calls visit (may be NULL) for every survivor. Parameters the
 * recipe does not list keep fdtune's defaults. stats may be NULL. Returns -1 on a recipe
 * error (a constraint raising, a derive returning a wrong type) or when the recipe does not
 * serve p->op. */
int fdt_recipe_enumerate(fdt_recipe *r, const fdt_problem *p, const fdt_recipe_device *dev,
                         fdt_recipe_visit visit, void *ctx, fdt_recipe_stats *stats, fdt_err *e);

/* The point at `index` (< space size) of the same order, derived and checked: returns 1 when
 * it survives, 0 when pruned (why: "constraint 'x': reason"), -1 on error. For random
 * strategies that sample the product without walking it. */
int fdt_recipe_point(fdt_recipe *r, const fdt_problem *p, const fdt_recipe_device *dev,
                     uint64_t index, fdt_config *c, char *why, size_t whyn, fdt_err *e);

/* Runs the derives on c (for a config built by hand, e.g. from --config). */
int fdt_recipe_derive(fdt_recipe *r, const fdt_problem *p, const fdt_recipe_device *dev,
                      fdt_config *c, fdt_err *e);
/* Constraints and fdt_config_check on c as it is: 1 accepted, 0 rejected (why), -1 error. */
int fdt_recipe_check(fdt_recipe *r, const fdt_problem *p, const fdt_recipe_device *dev,
                     const fdt_config *c, char *why, size_t whyn, fdt_err *e);

/* The config used when nothing was tuned: fdtune's defaults, then `default {}`, then the
 * derives of parameters that `default {}` does not set. Not checked: see fdt_recipe_check. */
int fdt_recipe_default_config(fdt_recipe *r, const fdt_problem *p, const fdt_recipe_device *dev,
                              fdt_config *c, fdt_err *e);

/* ------------------------------------------------------------------ finding files */

/* The search path is the directories of FDTUNE_RECIPES (colon-separated), then the caller's
 * directories, which fdtune takes from here: <directory of the running program>/../share/
 * fdtune/recipes (the installed recipes), then the source tree's recipes/. Fills dirs with
 * pointers into store and returns how many (at most max). */
int fdt_recipe_install_dirs(const char **dirs, int max, char *store, size_t n);

/* Finds `file` (e.g. "gpus.lua") in the directories of FDTUNE_RECIPES (colon-separated),
 * then in dirs (e.g. <exe dir>/../share/fdtune/recipes and the source tree's recipes/). */
int fdt_recipe_find_file(const char *file, const char *const *dirs, int ndirs, char *path,
                         size_t n, fdt_err *e);
/* The recipe for op: `override` (--recipe FILE) when given; else, directory by directory in
 * the order above, <op>.lua, then the first *.lua (sorted by name) whose `ops {}` lists op. */
int fdt_recipe_find_for_op(fdt_op op, const char *override, const char *const *dirs, int ndirs,
                           char *path, size_t n, fdt_err *e);

/* ------------------------------------------------------------------ catalogue */

typedef struct fdt_catalogue fdt_catalogue;

#define FDT_CATALOGUE_MAX_ALIASES 8

typedef struct fdt_catalogue_entry {
    fdt_recipe_device dev;   /* dev.name is the canonical name, dev.catalogue the same */
    int naliases;
    char aliases[FDT_CATALOGUE_MAX_ALIASES][48];
    int nmatch;              /* extra substrings of driver names (normalized matching) */
    char match[FDT_CATALOGUE_MAX_ALIASES][48];
    char source[256];        /* where the numbers come from */
    char note[192];
    int line;                /* of the entry in gpus.lua */
} fdt_catalogue_entry;

int fdt_catalogue_load(const char *path, fdt_catalogue **out, fdt_err *e);
int fdt_catalogue_load_text(const char *name, const char *text, size_t len, fdt_catalogue **out,
                            fdt_err *e);
void fdt_catalogue_free(fdt_catalogue *c);
int fdt_catalogue_count(const fdt_catalogue *c);
const fdt_catalogue_entry *fdt_catalogue_at(const fdt_catalogue *c, int i);

/* Resolves a --gpu argument. Names and aliases compare case-insensitively on letters and
 * digits only ("rx7900xtx" = "RX 7900 XTX") and win. Otherwise an arch ("gfx90a", "sm_90")
 * picks the first visible device of that arch (described live, completed from the
 * catalogue), else the only catalogue entry of that arch; an arch shared by several entries
 * with none visible is an error naming them. Unknown names get suggestions. */
int fdt_catalogue_find(const fdt_catalogue *c, const char *text,
                       const fdt_rt_device_info *visible, int nvisible, fdt_recipe_device *out,
                       fdt_err *e);

/* The entry a live GPU is: same arch; among entries whose name, alias or match string is
 * contained in the driver's name, the one with equal compute units, then the longest such
 * string; with no name match, the only entry of that arch with equal compute units. NULL
 * when nothing fits (or the fit is ambiguous). */
const fdt_catalogue_entry *fdt_catalogue_match(const fdt_catalogue *c,
                                               const fdt_rt_device_info *live);

/* Describes a live GPU: its own facts, completed by the matching entry (infinity cache,
 * peak bandwidth when the driver gives none). c may be NULL. */
void fdt_catalogue_describe(const fdt_catalogue *c, const fdt_rt_device_info *live,
                            fdt_recipe_device *out);

#endif
