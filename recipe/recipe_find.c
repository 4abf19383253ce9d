/* Where recipes come from: an explicit --recipe file, else the search path (recipe_path.c:
 * the directories of FDTUNE_RECIPES, then those the caller names, normally the installed
 * share/fdtune/recipes and the source tree). A directory serves an operator through <op>.lua
 * or through any recipe whose `ops {}` lists it (lap.lua also serves wave); only the
 * directory's own *.lua files are recipes, so the modules in its lib/ never are. What the
 * commands load comes from here too: the recipe of an operator and the GPU catalogue, found
 * along fdtune's own search path. */
#include "recipe_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fdt_recipe_find_file(const char *file, const char *const *dirs, int ndirs, char *path,
                         size_t n, fdt_err *e)
{
    const char *all[RECIPE_MAX_DIRS];
    char store[4096], list[1024];
    int nd = fdt_recipe_search_dirs(dirs, ndirs, all, store, sizeof store);
    for (int i = 0; i < nd; i++) {
        snprintf(path, n, "%s/%s", all[i], file);
        if (access(path, R_OK) == 0)
            return 0;
    }
    fdt_recipe_dir_list(all, nd, list, sizeof list);
    path[0] = 0;
    return fdt_err_set(e, "%s: not found (looked in: %s)", file, list);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The first recipe in dir (by name) of dialect want whose ops list op. 1 found, 0 not, -1
 * error. A recipe that fails to load is remembered in `bad` (the first one), since it may be
 * the one meant. */
static int scan_dir(const char *dir, fdt_op op, fdt_dialect want, char *path, size_t n,
                    fdt_err *bad, int *nbad)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    char *names[256];
    int count = 0;
    struct dirent *de;
    while ((de = readdir(d)) && count < 256) {
        size_t len = strlen(de->d_name);
        if (len > 4 && !strcmp(de->d_name + len - 4, ".lua") && strcmp(de->d_name, "gpus.lua"))
            if ((names[count] = strdup(de->d_name)))
                count++;
    }
    closedir(d);
    qsort(names, (size_t)count, sizeof names[0], cmp_str);
    int found = 0;
    for (int i = 0; i < count && !found; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        fdt_recipe *r;
        fdt_err e;
        if (fdt_recipe_load(p, NULL, &r, &e)) {
            if ((*nbad)++ == 0)
                *bad = e;
            continue;
        }
        if ((r->ops & (1u << op)) && r->dialect == want) {
            snprintf(path, n, "%s", p);
            found = 1;
        }
        fdt_recipe_free(r);
    }
    for (int i = 0; i < count; i++)
        free(names[i]);
    return found;
}

int fdt_recipe_find_for_op(fdt_op op, const char *override, const char *const *dirs, int ndirs,
                           char *path, size_t n, fdt_err *e)
{
    return fdt_recipe_find_for_dialect(op, FDT_DIALECT_HIP, override, dirs, ndirs, path, n, e);
}

int fdt_recipe_find_for_dialect(fdt_op op, fdt_dialect d, const char *override,
                                const char *const *dirs, int ndirs, char *path, size_t n,
                                fdt_err *e)
{
    if ((unsigned)op >= FDT_OP_COUNT)
        return fdt_err_set(e, "recipe: invalid operator");
    if (override && *override) {
        if (access(override, R_OK) != 0)
            return fdt_err_set(e, "recipe %s: %s", override, strerror(errno));
        snprintf(path, n, "%s", override);
        return 0;
    }
    const char *all[RECIPE_MAX_DIRS];
    char store[4096], list[1024], file[32];
    int nd = fdt_recipe_search_dirs(dirs, ndirs, all, store, sizeof store);
    /* the file tried first: the GPUs' recipe per operator, the CPU's one recipe */
    snprintf(file, sizeof file, "%s.lua", d == FDT_DIALECT_C ? "cpu" : fdt_op_name(op));
    fdt_err bad;
    int nbad = 0;
    for (int i = 0; i < nd; i++) {
        snprintf(path, n, "%s/%s", all[i], file);
        if (access(path, R_OK) == 0)
            return 0;
        if (scan_dir(all[i], op, d, path, n, &bad, &nbad))
            return 0;
    }
    path[0] = 0;
    fdt_recipe_dir_list(all, nd, list, sizeof list);
    if (nbad)
        return fdt_err_set(e, "no recipe for %s (looked for %s and ops { \"%s\" } in: %s); "
                              "%d recipe%s failed to load, the first: %s", fdt_op_name(op), file,
                           fdt_op_name(op), list, nbad, nbad == 1 ? "" : "s", bad.msg);
    return fdt_err_set(e, "no recipe for %s (looked for %s and ops { \"%s\" } in: %s)",
                       fdt_op_name(op), file, fdt_op_name(op), list);
}

int fdt_recipe_load_for_op(fdt_op op, const char *override, fdt_recipe **r, fdt_err *e)
{
    return fdt_recipe_load_for_dialect(op, FDT_DIALECT_HIP, override, r, e);
}

int fdt_recipe_load_for_dialect(fdt_op op, fdt_dialect d, const char *override,
                                fdt_recipe **r, fdt_err *e)
{
    const char *dirs[4];
    char store[4400], path[4200];
    int nd = fdt_recipe_install_dirs(dirs, 4, store, sizeof store);
    *r = NULL;
    if (fdt_recipe_find_for_dialect(op, d, override, dirs, nd, path, sizeof path, e) ||
        fdt_recipe_load(path, NULL, r, e))
        return -1;
    if (!fdt_recipe_serves(*r, op)) {
        fdt_recipe_free(*r);
        *r = NULL;
        return fdt_err_set(e, "%s: the recipe does not serve %s (its ops {} list)", path,
                           fdt_op_name(op));
    }
    return 0;
}

int fdt_catalogue_load_default(fdt_catalogue **out, fdt_err *e)
{
    const char *dirs[4];
    char store[4400], path[4200];
    *out = NULL;
    int nd = fdt_recipe_install_dirs(dirs, 4, store, sizeof store);
    if (fdt_recipe_find_file("gpus.lua", dirs, nd, path, sizeof path, e))
        return fdt_err_wrap(e, "GPU catalogue");
    return fdt_catalogue_load(path, out, e);
}
