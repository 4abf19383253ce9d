/* What fdtune answers for one problem on one device, as an export would: which stored devices a
 * --gpu names (devices.c: a substring of the stored name or arch, else the GPU catalogue's
 * names and aliases), the nearest tuned result of the user's and the system database for the
 * first of them (or, for a GPU neither database saw, for the catalogue's description of it), the
 * model's top-ranked config when nothing measured answers (model.c), and fdtune's built-in
 * default when the model cannot rank either. `fdtune query best --nearest` prints this; the
 * export plan resolves its --gpu the same way, adds the same model answers, and its headers
 * fall back to the same config. */
#include "fdt_export.h"
#include "exp_internal.h"
#include "fdt_recipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device to answer for: the first stored device gpu names (other models it names are
 * listed in a->others), else the catalogue's entry. */
static int pick_device(fdt_db *const *dbs, size_t ndbs, const char *gpu,
                       const struct fdt_catalogue *cat, fdt_exp_answer *a, fdt_err *e)
{
    fdt_db_device_list all;
    size_t *which = NULL;
    int got = fdt_exp_collect_devices(dbs, ndbs, &all, &which, e);
    free(which);
    if (got) {
        free(all.v);
        return FDT_EXP_ERROR;
    }
    char *hit = calloc(all.n + 1, 1);
    if (!hit) {
        free(all.v);
        fdt_err_set(e, "nearest: out of memory");
        return FDT_EXP_ERROR;
    }
    fdt_device entry;
    fdt_err ce;
    int rc = 0;
    size_t first = all.n;
    fdt_exp_match_gpu(&all, gpu, cat, hit, &entry, &ce);
    for (size_t i = 0; i < all.n; i++) {
        if (!hit[i])
            continue;
        if (first == all.n)
            first = i;
        else if (!fdt_device_same_model(&all.v[i], &all.v[first])) {
            size_t u = strlen(a->others);
            snprintf(a->others + u, sizeof a->others - u, "%s%s (%s, %d CUs)", u ? ", " : "",
                     all.v[i].name, all.v[i].arch, all.v[i].compute_units);
        }
    }
    if (first < all.n) {
        a->device = all.v[first];
        a->stored = 1;
    } else if (entry.name[0]) {
        a->device = entry; /* the catalogue says what it is: results of its arch can answer */
    } else {
        rc = FDT_EXP_NOTHING;
        fdt_err_set(e, "--gpu %s: no device in the database%s matches, and %s", gpu,
                    ndbs > 1 ? "s" : "", ce.msg);
    }
    free(all.v);
    free(hit);
    return rc;
}

int fdt_exp_nearest(fdt_db *const *dbs, size_t ndbs, const char *gpu,
                    const struct fdt_catalogue *cat, const fdt_problem *p, fdt_exp_answer *a,
                    fdt_err *e)
{
    memset(a, 0, sizeof *a);
    fdt_device_init(&a->device);
    int rc = pick_device(dbs, ndbs, gpu, cat, a, e);
    if (rc)
        return rc;
    if (fdt_db_nearest_in(dbs, ndbs, &a->device, p, NULL, &a->row, &a->which, e))
        return FDT_EXP_ERROR;
    fdt_device dev;
    int have = 0;
    if (a->which == FDT_DB_NEAREST_NONE && fdt_exp_model_device(cat, &a->device, &dev) == 0) {
        /* Nothing measured answers: the model's top-ranked config, when it can rank. */
        if (fdt_exp_model_answer(&dev, p, &a->row, &have, e))
            return FDT_EXP_ERROR;
        if (have)
            a->which = FDT_DB_NEAREST_MODEL;
    }
    if (a->which == FDT_DB_NEAREST_NONE) {
        /* Nothing usable tuned: fdtune's built-in default, what exported headers fall back
         * to; the row carries the request and that config, nothing measured. */
        memset(&a->row, 0, sizeof a->row);
        fdt_db_eval_init(&a->row.ev);
        a->row.ev.run_id = -1;
        a->row.problem = *p;
        a->row.device = a->device;
        fdt_config c;
        fdt_config_fallback(p, &c);
        fdt_config_format(&c, a->row.ev.config, sizeof a->row.ev.config);
    }
    return 0;
}
