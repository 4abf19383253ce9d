/* The database shard of a task (fdt_tasks.h): where it is written while the task runs
 * (node-local storage), where it is published (the results directory), and the atomic copy
 * between the two. The copy is SQLite's VACUUM INTO, through a connection of its own on the
 * source opened read-only, into a temporary name that is renamed over the destination:
 * the published file is a single consistent database with no WAL beside it, whatever state
 * the source was left in. */
#include "fdt_tasks.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fdt_shard_local_dir(void)
{
    static const char *const vars[] = {"SLURM_TMPDIR", "TMPDIR"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        struct stat sb;
        if (v && *v && stat(v, &sb) == 0 && S_ISDIR(sb.st_mode))
            return v;
    }
    return "/tmp";
}

void fdt_shard_results_default(const char *tasks_path, char *buf, size_t n)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", tasks_path);
    snprintf(buf, n, "%s/results", dirname(tmp));
}

void fdt_shard_path(const char *dir, int index, char *buf, size_t n)
{
    snprintf(buf, n, "%s/task-%04d.db", dir, index);
}

void fdt_shard_remove(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

static int sync_file(const char *path, fdt_err *e)
{
    int fd = open(path, O_RDONLY);
    int rc = fd >= 0 && fsync(fd) == 0 ? 0 : fdt_err_set(e, "sync %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

int fdt_shard_copy(const char *src, const char *to, fdt_err *e)
{
    char dir[4096], tmp[4200], dst[4096];
    snprintf(dir, sizeof dir, "%s", to);
    char *d = dirname(dir);
    if (fdt_mkdirs(d, e) || fdt_output_db_path(to, dst, sizeof dst, e)) /* a link: its target */
        return fdt_err_wrap(e, "copy %s", src);
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", dst, (long)getpid());
    fdt_shard_remove(tmp);
    sqlite3 *h = NULL;
    int rc = sqlite3_open_v2(src, &h, SQLITE_OPEN_READONLY, NULL);
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(h, 60000);
        rc = sqlite3_prepare_v2(h, "VACUUM INTO ?1", -1, &st, NULL);
    }
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc != SQLITE_OK)
        fdt_err_set(e, "copy %s to %s: %s", src, dst, h ? sqlite3_errmsg(h) : "out of memory");
    sqlite3_finalize(st);
    sqlite3_close(h);
    if (rc == SQLITE_OK && sync_file(tmp, e)) /* VACUUM INTO does not sync its output */
        rc = SQLITE_ERROR;
    if (rc == SQLITE_OK && rename(tmp, dst) != 0) {
        fdt_err_set(e, "copy %s: rename to %s: %s", src, dst, strerror(errno));
        rc = SQLITE_ERROR;
    }
    if (rc != SQLITE_OK)
        fdt_shard_remove(tmp);
    return rc == SQLITE_OK ? 0 : -1;
}
