/* The system database: the best results measured on the project's GPUs, shipped with fdtune
 * as share/fdtune/system.db and only ever opened read-only, as an immutable file (no locks). Found the way recipes are
 * (recipe/recipe_path.c): $FDTUNE_SYSTEM_DB, then next to the running program
 * (<prefix>/share/fdtune, fdt_share_dir), then the source tree. */
#include "db_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef FDTUNE_SOURCE_DIR
#define FDTUNE_SOURCE_DIR "."
#endif

#define SYSTEM_DB "system.db"

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

int fdt_db_system_path(char *buf, size_t n, int *found, fdt_err *e)
{
    *found = 0;
    if (n)
        buf[0] = 0;
    const char *env = getenv("FDTUNE_SYSTEM_DB");
    if (env) {
        if (!*env)
            return 0; /* set and empty: turned off */
        struct stat sb;
        if (stat(env, &sb) != 0)
            return fdt_err_set(e, "FDTUNE_SYSTEM_DB=%s: %s", env, strerror(errno));
        if (!S_ISREG(sb.st_mode))
            return fdt_err_set(e, "FDTUNE_SYSTEM_DB=%s: not a regular file", env);
        if (snprintf(buf, n, "%s", env) >= (int)n)
            return fdt_err_set(e, "FDTUNE_SYSTEM_DB: path too long");
        *found = 1;
        return 0;
    }
    char share[4096];
    const char *dirs[2] = {NULL, FDTUNE_SOURCE_DIR "/share/fdtune"};
    if (fdt_share_dir(share, sizeof share) == 0)
        dirs[0] = share;
    for (int i = 0; i < 2; i++) {
        if (!dirs[i])
            continue;
        int w = snprintf(buf, n, "%s/" SYSTEM_DB, dirs[i]);
        if (w > 0 && (size_t)w < n && is_file(buf)) {
            *found = 1;
            return 0;
        }
    }
    if (n)
        buf[0] = 0;
    return 0;
}

int fdt_db_open_system(fdt_db **db, fdt_err *e)
{
    *db = NULL;
    char path[4096];
    int found;
    if (fdt_db_system_path(path, sizeof path, &found, e))
        return fdt_err_wrap(e, "system database");
    if (!found)
        return 0;
    if (fdt_db_open(path, FDT_DB_IMMUTABLE, db, e))
        return fdt_err_wrap(e, "system database");
    fdt_db_set_source(*db, FDT_DB_SYSTEM);
    return 0;
}
