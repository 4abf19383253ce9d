/* Which stored devices a --gpu names, over the devices of every database at hand: a
 * substring of the stored name or arch (any case), else a name or alias of the GPU catalogue
 * and the stored devices it matches. The plan (plan.c), the nearest answer (nearest.c) and
 * the model's answers (model.c) resolve a --gpu through it; it calls none of them. */
#include "exp_internal.h"
#include "fdt_recipe.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return 0;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

int fdt_exp_match_gpu(const fdt_db_device_list *all, const char *gpu,
                      const struct fdt_catalogue *cat, char *hit, fdt_device *entry,
                      fdt_err *ce)
{
    int n = 0;
    fdt_device_init(entry);
    fdt_err_set(ce, "--gpu %s: no GPU catalogue to look it up in", gpu);
    for (size_t i = 0; i < all->n; i++)
        if (contains_ci(all->v[i].name, gpu) || contains_ci(all->v[i].arch, gpu)) {
            hit[i] = 1;
            n++;
        }
    if (n || !cat)
        return n;
    /* Not a substring of what the driver called it: perhaps a catalogue name or alias
     * ("H100 SXM" for "NVIDIA H100 80GB HBM3"); the catalogue decides which stored devices
     * are that GPU the way it matches live ones. */
    if (fdt_catalogue_find(cat, gpu, NULL, 0, entry, ce)) {
        fdt_device_init(entry);
        return 0;
    }
    for (size_t i = 0; i < all->n; i++) {
        const fdt_catalogue_entry *m = fdt_catalogue_match(cat, &all->v[i]);
        if (m && !strcmp(m->dev.name, entry->name)) {
            hit[i] = 1;
            n++;
        }
    }
    return n;
}

int fdt_exp_collect_devices(fdt_db *const *dbs, size_t ndbs, fdt_db_device_list *all,
                            size_t **which, fdt_err *e)
{
    memset(all, 0, sizeof *all);
    *which = NULL;
    for (size_t k = 0; k < ndbs; k++) {
        size_t from = all->n;
        if (fdt_db_devices(dbs[k], NULL, fdt_db_collect_device, all, e))
            return -1;
        size_t *w = all->oom ? NULL : realloc(*which, (all->n + 1) * sizeof *w);
        if (!w)
            return fdt_err_set(e, "devices: out of memory");
        *which = w;
        for (size_t i = from; i < all->n; i++)
            w[i] = k;
    }
    return 0;
}
