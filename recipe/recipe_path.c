/* The recipe search path, in one place: the directories of FDTUNE_RECIPES, then where fdtune
 * installs its recipes (<prefix>/share/fdtune/recipes, found next to the running program),
 * then the source tree's recipes/. The lookup of recipes and of gpus.lua (recipe_find.c) and
 * the modules recipes include (recipe_include.c, from lib/ of each directory) all walk it. */
#include "recipe_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTUNE_SOURCE_DIR
#define FDTUNE_SOURCE_DIR "."
#endif

/* Appends "<a><b>" to store at *used as dirs[*nd]; skipped when it does not fit. */
static void add_dir(const char **dirs, int *nd, int max, char *store, size_t n, size_t *used,
                    const char *a, const char *b)
{
    if (*nd >= max || *used >= n)
        return;
    int w = snprintf(store + *used, n - *used, "%s%s", a, b);
    if (w < 0 || (size_t)w >= n - *used)
        return;
    dirs[(*nd)++] = store + *used;
    *used += (size_t)w + 1;
}

int fdt_recipe_install_dirs(const char **dirs, int max, char *store, size_t n)
{
    int nd = 0;
    size_t used = 0;
    char share[4096];
    if (fdt_share_dir(share, sizeof share) == 0)
        add_dir(dirs, &nd, max, store, n, &used, share, "/recipes");
    add_dir(dirs, &nd, max, store, n, &used, FDTUNE_SOURCE_DIR, "/recipes");
    return nd;
}

int fdt_recipe_search_dirs(const char *const *dirs, int ndirs, const char **out, char *store,
                           size_t storen)
{
    int n = 0;
    const char *env = getenv("FDTUNE_RECIPES");
    if (env && *env) {
        snprintf(store, storen, "%s", env);
        for (char *save = NULL, *tok = strtok_r(store, ":", &save); tok && n < RECIPE_MAX_DIRS;
             tok = strtok_r(NULL, ":", &save))
            out[n++] = tok;
    }
    for (int i = 0; i < ndirs && n < RECIPE_MAX_DIRS; i++)
        if (dirs[i] && *dirs[i])
            out[n++] = dirs[i];
    return n;
}

int fdt_recipe_search_path(const char **out, char *store, size_t storen)
{
    const char *inst[2];
    size_t half = storen / 2;
    int ni = fdt_recipe_install_dirs(inst, 2, store + half, storen - half);
    return fdt_recipe_search_dirs(inst, ni, out, store, half);
}

void fdt_recipe_dir_list(const char *const *dirs, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", dirs[i]);
    if (!n)
        snprintf(buf, len, "no directory: set FDTUNE_RECIPES");
}
