/* Recipes and the GPU catalogue. A recipe is a Lua file (recipes/<op>.lua) describing a
 * search space: value lists of config parameters, derived parameters, constraints, a default
 * strategy and budget, and the baseline config tuning measures its speedup against. The catalogue (recipes/gpus.lua) names GPUs with their
 * aliases and hardware facts, so that dry runs work on machines without a GPU. Both run in a
 * sandboxed Lua host: no I/O, memory, instruction and time limits, and every mistake
 * reported as "file.lua:LINE: message". The language is described in recipes/README.md. */
#ifndef FDT_RECIPE_H
#define FDT_RECIPE_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_common.h"
#include "fdt_gen.h"
#include "fdt_device.h"

/* ------------------------------------------------------------------ devices */

/* Recipes see a device (fdt_device) as the read-only table `dev` with exactly these fields:
 * vendor, name, arch, compute_units, warp_size, max_threads_per_block, shared_per_block,
 * shared_per_block_optin, l2_bytes, infinity_cache_bytes, llc_bytes, mem_bytes, peak_bw_gbs,
 * catalogue (a string) and live (a boolean); recipes/README.md documents them. */

/* ------------------------------------------------------------------ recipes */

typedef struct fdt_recipe fdt_recipe;

typedef struct fdt_recipe_limits {
    size_t mem_bytes;            /* Lua heap of one recipe (default 64 MiB) */
    long long load_instructions; /* running the file (default 50 million) */
    long long call_instructions; /* one derive or constraint call (default 1 million) */
    double load_seconds;         /* CPU time of running the file (default 10 s) */
    double walk_seconds;         /* CPU time of one walk of the space: one enumerate, its
                                    visits included, or one point, derive, check or default
                                    config (default 60 s); 0: no time limit */
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
/* The source dialect of the parameters the recipe lists, derives and defaults (a recipe's
 * parameters are all of one dialect: recipes/cpu.lua's the C dialect's); HIP when none is one
 * dialect's own. The generator's check of every point (fdt_config_check_for) runs in it. */
fdt_dialect fdt_recipe_dialect(const fdt_recipe *r);
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
    uint64_t visited;   /* points decided (space, unless the callback stopped early); with
                           the prefix skip most pruned ones are decided in runs */
    uint64_t evaluated; /* runs of the derives and constraints (the prefix skip's reruns
                           included): the walk's cost */
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
 * serve p->op.
 * The prefix skip (on unless fdt_recipe_set_prefix_skip turned it off): when a derive or
 * constraint prunes a point reading only the first k listed parameters (the steps are run
 * again on it through a proxy that records what they read), the points that share those
 * values are pruned with it, with the same reason, without being evaluated; survivors and
 * statistics are those of the full walk, as long as derives and constraints are functions of
 * c, dev and prob (a step whose verdict changes on the second run skips nothing). */
/* Turns the walk's prefix skip (fdt_recipe_enumerate) off (0) or on (1, the default): for
 * tests and comparisons. */
void fdt_recipe_set_prefix_skip(fdt_recipe *r, int on);

int fdt_recipe_enumerate(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                         fdt_recipe_visit visit, void *ctx, fdt_recipe_stats *stats, fdt_err *e);

/* The point at `index` (< space size) of the same order, derived and checked: returns 1 when
 * it survives, 0 when pruned (why: "constraint 'x': reason"), -1 on error. For random
 * strategies that sample the product without walking it. */
int fdt_recipe_point(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                     uint64_t index, fdt_config *c, char *why, size_t whyn, fdt_err *e);

/* Runs the derives on c (for a config built by hand, e.g. from --config). */
int fdt_recipe_derive(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                      fdt_config *c, fdt_err *e);
/* Constraints and fdt_config_check on c as it is: 1 accepted, 0 rejected (why), -1 error. */
int fdt_recipe_check(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                     const fdt_config *c, char *why, size_t whyn, fdt_err *e);

/* The recipe's baseline, what `fdtune tune` measures to report the tuned config's speedup
 * (the seeds' kernel): fdtune's defaults, then `default {}`, then the derives of parameters
 * that `default {}` does not set. Not checked: see fdt_recipe_check. It is not the answer for
 * a problem nothing was tuned for; that is fdt_config_fallback. */
int fdt_recipe_default_config(fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
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
/* The GPUs' recipe for op: `override` (--recipe FILE) when given; else, directory by
 * directory in the order above, <op>.lua, then the first *.lua (sorted by name) of the HIP
 * dialect (fdt_recipe_dialect) whose `ops {}` lists op. */
int fdt_recipe_find_for_op(fdt_op op, const char *override, const char *const *dirs, int ndirs,
                           char *path, size_t n, fdt_err *e);
/* The recipe for op in dialect d: as fdt_recipe_find_for_op, with cpu.lua tried first for
 * the C dialect (the CPU's one recipe) and only recipes of dialect d scanned. */
int fdt_recipe_find_for_dialect(fdt_op op, fdt_dialect d, const char *override,
                                const char *const *dirs, int ndirs, char *path, size_t n,
                                fdt_err *e);
/* The recipe a command uses for op: `override` (--recipe FILE) or the one found along
 * fdtune's search path (fdt_recipe_install_dirs, fdt_recipe_find_for_op), loaded and checked
 * to serve op. fdt_recipe_load_for_dialect: the same for dialect d's targets. */
int fdt_recipe_load_for_op(fdt_op op, const char *override, fdt_recipe **r, fdt_err *e);
int fdt_recipe_load_for_dialect(fdt_op op, fdt_dialect d, const char *override,
                                fdt_recipe **r, fdt_err *e);

/* ------------------------------------------------------------------ catalogue */

typedef struct fdt_catalogue fdt_catalogue;

#define FDT_CATALOGUE_MAX_ALIASES 8

typedef struct fdt_catalogue_entry {
    fdt_device dev;          /* dev.name is the canonical name, dev.catalogue the same; backend
                                from the arch; not live */
    int naliases;
    char aliases[FDT_CATALOGUE_MAX_ALIASES][48];
    int nmatch;              /* extra substrings of driver names (normalized matching) */
    char match[FDT_CATALOGUE_MAX_ALIASES][48];
    char source[256];        /* where the numbers come from */
    char note[192];
    int line;                /* of the entry in gpus.lua */
} fdt_catalogue_entry;

int fdt_catalogue_load(const char *path, fdt_catalogue **out, fdt_err *e);
/* The catalogue a command uses: gpus.lua found along fdtune's search path (as recipes are),
 * loaded. */
int fdt_catalogue_load_default(fdt_catalogue **out, fdt_err *e);
int fdt_catalogue_load_text(const char *name, const char *text, size_t len, fdt_catalogue **out,
                            fdt_err *e);
void fdt_catalogue_free(fdt_catalogue *c);
int fdt_catalogue_count(const fdt_catalogue *c);
const fdt_catalogue_entry *fdt_catalogue_at(const fdt_catalogue *c, int i);

/* Resolves a --gpu argument. Names and aliases compare case-insensitively on letters and
 * digits only ("rx7900xtx" = "RX 7900 XTX") and win. Otherwise an arch ("gfx90a", "sm_90")
 * picks the first visible device of that arch (the live device completed from the
 * catalogue), else the only catalogue entry of that arch; an arch shared by several entries
 * with none visible is an error naming them. Unknown names get suggestions. */
int fdt_catalogue_find(const fdt_catalogue *c, const char *text, const fdt_device *visible,
                       int nvisible, fdt_device *out, fdt_err *e);

/* The entry a device is (a live GPU, or a stored one): same arch; among entries whose name,
 * alias or match string is contained in the device's name, the one with equal compute
 * units, then the longest such string; with no name match, the only entry of that arch with
 * equal compute units. NULL when nothing fits (or the fit is ambiguous). */
const fdt_catalogue_entry *fdt_catalogue_match(const fdt_catalogue *c, const fdt_device *d);

/* Completes a device in place from its matching entry: the entry's name in d->catalogue, the
 * Infinity Cache, the achievable bandwidth, and what the driver did not say (vendor, warp
 * size, block and shared limits, L2, memory, peak bandwidth); a peak bandwidth the driver's
 * memory clock and bus width give that is implausible for this model
 * (fdt_catalogue_bw_plausible) is replaced by the entry's; then the derived fields
 * (fdt_device_derive). The device's identity otherwise stays as the driver gave it. c may be
 * NULL (derive only). */
void fdt_catalogue_complete(const fdt_catalogue *c, fdt_device *d);

/* How far a live peak bandwidth may be from the catalogue's figure for the same model. HIP
 * reports the memory clock and bus width of some GPUs in ways the formula 2 x clock x width
 * misreads (an MI300X gives 2662 GB/s for its 5300); a live figure within this fraction is
 * the driver's to keep (clock variants, rounding), beyond it the catalogue wins. */
#define FDT_BW_PLAUSIBLE 0.25

/* 1 when a live peak bandwidth is plausible against the catalogue's figure: positive, and
 * within FDT_BW_PLAUSIBLE of it (any positive figure when the catalogue has none). */
int fdt_catalogue_bw_plausible(double live_gbs, double catalogue_gbs);

#endif
