/* Finding things for commands that name a GPU, need recipes or read the database: the
 * recipe of an operator and the GPU catalogue (along the recipe search path, which
 * recipe/recipe_path.c defines), resolving --gpu against the visible devices through the
 * catalogue, and the tuning database opened for reading. */
#include "cli.h"
#include "fdt_eval.h"
#include "fdt_db.h"
#include "fdt_recipe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int load_catalogue(fdt_catalogue **cat, fdt_err *e)
{
    return fdt_catalogue_load_installed(cat, e);
}

int select_gpu(const fdt_catalogue *cat, const char *gpu, const fdt_probe *p, int need_live,
               fdt_device *dev, int *index, fdt_err *e)
{
    *index = -1;
    fdt_device_init(dev);
    if (!gpu || !strcmp(gpu, "auto")) {
        if (p->ndevices == 0)
            return fdt_err_set(e, "--gpu auto: no GPU is visible%s", need_live ? "" :
                               " (a dry run without a GPU needs --gpu NAME, e.g. --gpu H100)");
        *index = 0;
        *dev = p->device[0];
        fdt_catalogue_complete(cat, dev);
        return 0;
    }
    if (fdt_catalogue_find(cat, gpu, p->device, p->ndevices, dev, e))
        return -1;
    /* which visible device is it? */
    for (int i = 0; i < p->ndevices; i++) {
        const fdt_catalogue_entry *m = fdt_catalogue_match(cat, &p->device[i]);
        int same_entry = m && dev->catalogue[0] && !strcmp(m->dev.name, dev->catalogue);
        int same_live = dev->live && fdt_device_same_model(&p->device[i], dev);
        if (same_entry || same_live) {
            *index = i;
            *dev = p->device[i];
            fdt_catalogue_complete(cat, dev);
            return 0;
        }
    }
    if (!need_live)
        return 0; /* described from the catalogue */
    fdt_sb vis;
    fdt_sb_init(&vis);
    for (int i = 0; i < p->ndevices; i++)
        fdt_sb_printf(&vis, "%s%d: %s (%s)", i ? ", " : "", i, p->device[i].name,
                      p->device[i].arch);
    fdt_err_set(e, "--gpu %s: no visible device is a %s (visible: %s)", gpu, dev->name,
                p->ndevices ? fdt_sb_str(&vis) : "none");
    fdt_sb_free(&vis);
    return -1;
}

fdt_recipe *load_recipe(fdt_op op, const char *override)
{
    const char *dirs[4];
    char store[4400];
    int nd = fdt_recipe_install_dirs(dirs, 4, store, sizeof store);
    char path[4200];
    fdt_err e;
    fdt_recipe *r = NULL;
    if (fdt_recipe_find_for_op(op, override, dirs, nd, path, sizeof path, &e) ||
        fdt_recipe_load(path, NULL, &r, &e)) {
        print_error("%s", e.msg);
        return NULL;
    }
    if (!fdt_recipe_serves(r, op)) {
        print_error("%s: the recipe does not serve %s (its ops {} list)", path, fdt_op_name(op));
        fdt_recipe_free(r);
        return NULL;
    }
    return r;
}

int open_db_readonly(const char *path, fdt_db **db)
{
    char def[4096];
    fdt_err e;
    if (!path) {
        if (fdt_db_default_path(def, sizeof def, &e)) {
            print_error("%s", e.msg);
            return -1;
        }
        path = def;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        print_error("no tuning database at %s: run fdtune --gpu NAME --R N --grid G first "
                    "(or name one with --db PATH or FDTUNE_DB)", path);
        return -1;
    }
    if (fdt_db_open(path, FDT_DB_READONLY, db, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    return 0;
}
