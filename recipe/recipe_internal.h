/* Private state of a loaded recipe, shared by recipe.c (loading, directives), recipe_space.c
 * (enumeration, checks) and recipe_find.c. */
#ifndef FDT_RECIPE_INTERNAL_H
#define FDT_RECIPE_INTERNAL_H

#include "fdt_recipe.h"
#include "luahost.h"

/* Derives and constraints together; the rest of FDT_RECIPE_MAX_PRUNE is for generator rows. */
#define RECIPE_MAX_STEPS 40
#define RECIPE_MAX_PARAMS 32
/* Walking more points than this is not a search any strategy can afford. */
#define RECIPE_MAX_SPACE 10000000ULL

typedef struct recipe_param {
    const fdt_param_info *pi;
    int n;          /* values */
    int *values;    /* integers, or indices into pi->choices */
    int line;
} recipe_param;

enum { STEP_DERIVE, STEP_CONSTRAIN };

typedef struct recipe_step {
    int kind;
    char name[80];             /* constraint name, or the derived parameter */
    const fdt_param_info *pi;  /* derived parameter */
    int ref;                   /* function in the registry */
    int line;                  /* of the directive */
} recipe_step;

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
    uint64_t space;
    /* Lua side of enumeration (registry references) */
    int c_data, c_proxy, pending;
    int dev_proxy, prob_proxy;
    fdt_problem prob;          /* problem of the current call */
    const fdt_problem *cur;    /* &prob once a call set it; helpers refuse to run before */
    const fdt_config *cfg;     /* the config the running derives and constraints see as c;
                                  NULL outside them */
    uint64_t cfg_pending;      /* its parameters (catalogue bits) derived later */
};

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

#endif
