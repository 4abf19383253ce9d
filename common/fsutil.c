/* Whole-file reads, atomic writes (temporary file, fsync, rename), plain writes, mkdir -p,
 * scratch directories and their removal, finding a program on $PATH, and where the installed
 * data lies next to the running program. */
#include "fdt_common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double fdt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int fdt_read_file(const char *path, char **out, size_t *len, fdt_err *e)
{
    *out = NULL;
    if (len)
        *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fdt_err_set(e, "%s: %s", path, strerror(errno));
    fdt_sb b;
    fdt_sb_init(&b);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fdt_sb_putn(&b, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad || b.oom) {
        fdt_sb_free(&b);
        return fdt_err_set(e, "%s: %s", path, bad ? "read error" : "out of memory");
    }
    if (len)
        *len = b.len;
    *out = fdt_sb_take(&b);
    return 0;
}

int fdt_write_file_atomic(const char *path, const void *data, size_t n, fdt_err *e)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 32);
    if (!tmp)
        return fdt_err_set(e, "%s: out of memory", path);
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fdt_err_set(e, "%s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    const char *p = data;
    size_t left = n;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            fdt_err_set(e, "%s: %s", path, strerror(errno));
            close(fd);
            unlink(tmp);
            free(tmp);
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        fdt_err_set(e, "%s: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        fdt_err_set(e, "%s: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

int fdt_mkdirs(const char *path, fdt_err *e)
{
    char *p = strdup(path);
    if (!p)
        return fdt_err_set(e, "%s: out of memory", path);
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == 0) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                fdt_err_set(e, "mkdir %s: %s", p, strerror(errno));
                free(p);
                return -1;
            }
            *s = c;
            if (!c)
                break;
        }
    }
    free(p);
    return 0;
}

int fdt_write_file(const char *path, const void *data, size_t n, fdt_err *e)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return fdt_err_set(e, "%s: %s", path, strerror(errno));
    int bad = fwrite(data, 1, n, f) != n;
    if (fclose(f) != 0 || bad)
        return fdt_err_set(e, "%s: write error", path);
    return 0;
}

int fdt_scratch_dir(const char *prefix, char *buf, size_t n, fdt_err *e)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if ((size_t)snprintf(buf, n, "%s/%s-XXXXXX", tmp, prefix) >= n)
        return fdt_err_set(e, "scratch directory under %s: path too long", tmp);
    if (!mkdtemp(buf))
        return fdt_err_set(e, "scratch directory %s: %s", buf, strerror(errno));
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    remove(path);
    return 0;
}

void fdt_remove_tree(const char *dir)
{
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

int fdt_find_program(const char *name, char *buf, size_t n)
{
    if (strchr(name, '/')) {
        if (access(name, X_OK) != 0)
            return -1;
        snprintf(buf, n, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
        size_t len = strcspn(p, ":");
        if (len && (size_t)snprintf(buf, n, "%.*s/%s", (int)len, p, name) < n &&
            access(buf, X_OK) == 0)
            return 0;
        p += len + (p[len] == ':');
    }
    return -1;
}

int fdt_share_dir(char *buf, size_t n)
{
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0 || n == 0)
        return -1;
    exe[len] = 0;
    int w = snprintf(buf, n, "%s/../share/fdtune", dirname(exe));
    return w < 0 || (size_t)w >= n ? -1 : 0;
}
