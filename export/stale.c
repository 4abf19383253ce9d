/* Whether exported or listed results stand for the kernels this fdtune writes (fdt_export.h):
 * the one note `query` and `export` give about results whose kernel may not be the one that
 * was measured (fdt_db_kernel_check: its code differs from what was measured, or it was
 * measured with another generator and nothing records its code). Results of another generator
 * whose recorded code is unchanged need no note. */
#include "fdt_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The database of rows from source src among dbs; NULL when none is. */
static fdt_db *db_of(fdt_db *const *dbs, size_t ndbs, fdt_db_source src)
{
    for (size_t k = 0; k < ndbs; k++)
        if (fdt_db_source_of(dbs[k]) == src)
            return dbs[k];
    return NULL;
}

int fdt_exp_stale_note(fdt_db *const *dbs, size_t ndbs, const fdt_db_row *rows, size_t n,
                       char **note, fdt_err *e)
{
    *note = NULL;
    size_t differs = 0, unrecorded = 0;
    int from[FDT_DB_MODEL + 1] = {0}; /* per source: stale rows seen */
    for (size_t i = 0; i < n; i++) {
        fdt_db *db = db_of(dbs, ndbs, rows[i].source);
        fdt_db_kernel k = FDT_DB_KERNEL_CURRENT;
        if (db && fdt_db_kernel_check(db, &rows[i], &k, e))
            return -1;
        differs += k == FDT_DB_KERNEL_DIFFERS;
        unrecorded += k == FDT_DB_KERNEL_UNRECORDED;
        if (k == FDT_DB_KERNEL_DIFFERS || k == FDT_DB_KERNEL_UNRECORDED)
            from[rows[i].source] = 1;
    }
    if (!differs && !unrecorded)
        return 0;
    fdt_sb b;
    fdt_sb_init(&b);
    if (n == 1)
        fdt_sb_printf(&b, "the result may not have been measured with the kernel this fdtune "
                          "(generator %s) writes for its config: %s", fdt_gen_fingerprint(),
                      differs ? "its code differs from this generator's"
                              : "it was measured with another generator and its code was not "
                                "recorded");
    else
        fdt_sb_printf(&b, "%zu of these results may not have been measured with the kernel "
                          "this fdtune (generator %s) writes for their configs: %zu measured "
                          "with code that differs from this generator's, %zu with another "
                          "generator and no record of their code", differs + unrecorded,
                      fdt_gen_fingerprint(), differs, unrecorded);
    fdt_sb_puts(&b, "; re-tune to refresh (");
    for (int src = FDT_DB_USER, k = 0; src <= FDT_DB_SYSTEM; src++) {
        fdt_db *db = from[src] ? db_of(dbs, ndbs, (fdt_db_source)src) : NULL;
        if (db)
            fdt_sb_printf(&b, "%s'fdtune db check %s' lists %s", k++ ? "; " : "",
                          fdt_db_path(db), n == 1 ? "it" : "them");
    }
    fdt_sb_puts(&b, ")");
    if (b.oom) {
        fdt_sb_free(&b);
        return fdt_err_set(e, "out of memory");
    }
    *note = fdt_sb_take(&b);
    return *note ? 0 : fdt_err_set(e, "out of memory");
}
