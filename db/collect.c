/* Collectors for the query callbacks: each appends what a query reports to a growable array
 * and stops the query when memory runs out. The callbacks are typed, so there is one per
 * element type, over one append. The arrays are declared in fdt_db.h. */
#include "fdt_db.h"

#include <string.h>

/* v with x appended (n, cap updated); v unchanged and *oom set when memory runs out. */
static void *append(void *v, size_t *n, size_t *cap, int *oom, const void *x, size_t size)
{
    char *grown = fdt_grow(v, cap, *n, size, 16);
    if (!grown) {
        *oom = 1;
        return v;
    }
    memcpy(grown + *n * size, x, size);
    ++*n;
    return grown;
}

int fdt_db_collect_row(void *ctx, const fdt_db_row *row)
{
    fdt_db_rows *l = ctx;
    l->v = append(l->v, &l->n, &l->cap, &l->oom, row, sizeof *row);
    return l->oom;
}

int fdt_db_collect_run(void *ctx, const fdt_db_run *run)
{
    fdt_db_run_list *l = ctx;
    l->v = append(l->v, &l->n, &l->cap, &l->oom, run, sizeof *run);
    return l->oom;
}

int fdt_db_collect_device(void *ctx, const fdt_device *d)
{
    fdt_db_device_list *l = ctx;
    l->v = append(l->v, &l->n, &l->cap, &l->oom, d, sizeof *d);
    return l->oom;
}
