/* Whole-file reads, the output rule (fdt_write_file_atomic: a file replaced through a
 * temporary file, fsync and rename, a link followed to its target, a device, a FIFO or
 * /dev/stdout written in place), plain writes, mkdir -p, scratch directories and their
 * removal, finding a program on $PATH, and where the installed data lies next to the
 * running program. */
#include "fdt_common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

/* ---------------------------------------------------------------- output paths */

/* Where a path's last component lives: its directory, "." when it has none. */
static void dir_of(const char *path, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, n, ".");
    else if (slash == path)
        snprintf(buf, n, "/");
    else
        snprintf(buf, n, "%.*s", (int)(slash - path), path);
}

/* 1 when the directory of path is in /proc. */
static int in_proc(const char *path)
{
    char dir[PATH_MAX];
    struct statfs fs;
    dir_of(path, dir, sizeof dir);
    return statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

/* The link cur when it is one of /proc's: 1 with *fd set when it names a descriptor of this
 * process (/dev/stdout, /dev/fd/N, /proc/self/fd/N: the kernel resolves the directories), 0
 * when it is not in /proc, -1 (e) for another link there (another process's descriptor, a
 * working directory, ...). */
static int proc_link(const char *cur, int *fd, fdt_err *e)
{
    char dir[PATH_MAX], real[PATH_MAX], own[64];
    if (!in_proc(cur))
        return 0;
    dir_of(cur, dir, sizeof dir);
    const char *base = strrchr(cur, '/') ? strrchr(cur, '/') + 1 : cur;
    char *end;
    long n = strtol(base, &end, 10);
    snprintf(own, sizeof own, "/proc/%ld/", (long)getpid());
    size_t ol = strlen(own), rl = realpath(dir, real) ? strlen(real) : 0;
    if (*base && !*end && n >= 0 && n <= INT_MAX && rl > ol && !strncmp(real, own, ol) &&
        !strcmp(real + rl - 3, "/fd") &&
        (rl == ol + 2 || !strncmp(real + ol, "task/", 5))) {
        *fd = (int)n;
        return 1;
    }
    return fdt_err_set(e, "%s: a link in /proc, not a descriptor of this process", cur);
}

static const char *kind_name(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISBLK(m) ? "a block device"
         : S_ISSOCK(m) ? "a socket" : "not a file fdtune writes";
}

int fdt_output_resolve(const char *path, fdt_out_path *o, fdt_err *e)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    if (!*path)
        return fdt_err_set(e, "output: empty path");
    if (snprintf(o->path, sizeof o->path, "%s", path) >= (int)sizeof o->path)
        return fdt_err_set(e, "%.200s...: path too long", path);
    for (int hops = 0;; hops++) {
        struct stat st;
        if (lstat(o->path, &st) != 0) {
            if (errno != ENOENT)
                return fdt_err_set(e, "%s: %s", o->path, strerror(errno));
            if (in_proc(o->path))
                return fdt_err_set(e, "%s: no such open descriptor", o->path);
            o->kind = FDT_OUT_NEW; /* a new file, or the target of a dangling link */
            return 0;
        }
        o->mode = st.st_mode;
        if (S_ISREG(st.st_mode)) {
            o->kind = FDT_OUT_FILE;
            return 0;
        }
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            o->kind = FDT_OUT_STREAM;
            return 0;
        }
        if (!S_ISLNK(st.st_mode))
            return fdt_err_set(e, "%s: %s; give a file, a character device (/dev/null), a FIFO "
                                  "or /dev/stdout", o->path, kind_name(st.st_mode));
        int own = proc_link(o->path, &o->fd, e);
        if (own) {
            o->kind = FDT_OUT_FD;
            return own < 0 ? -1 : 0;
        }
        if (hops == 40)
            return fdt_err_set(e, "%s: %s", path, strerror(ELOOP));
        char target[PATH_MAX], next[PATH_MAX + PATH_MAX];
        ssize_t len = readlink(o->path, target, sizeof target - 1);
        if (len < 0)
            return fdt_err_set(e, "%s: %s", o->path, strerror(errno));
        target[len] = 0;
        if (target[0] == '/')
            snprintf(next, sizeof next, "%s", target);
        else {
            char dir[PATH_MAX];
            dir_of(o->path, dir, sizeof dir);
            snprintf(next, sizeof next, "%s/%s", dir, target);
        }
        if (snprintf(o->path, sizeof o->path, "%s", next) >= (int)sizeof o->path)
            return fdt_err_set(e, "%s: its link's target is too long", path);
    }
}

int fdt_output_db_path(const char *path, char *real, size_t n, fdt_err *e)
{
    fdt_out_path o;
    if (fdt_output_resolve(path, &o, e))
        return -1;
    if (o.kind == FDT_OUT_STREAM || o.kind == FDT_OUT_FD)
        return fdt_err_set(e, "%s: %s cannot hold a database (SQLite needs a file, with "
                              "its journal beside it); give a file path", path,
                           o.kind == FDT_OUT_FD ? "a descriptor like standard output"
                           : S_ISFIFO(o.mode)   ? "a FIFO"
                                                : "a character device");
    if (snprintf(real, n, "%s", o.path) >= (int)n)
        return fdt_err_set(e, "%s: path too long", path);
    return 0;
}

/* Writes all of data to fd; 0, or the errno of the write that failed. SIGPIPE is held off
 * meanwhile, so that a reader that went away is EPIPE here rather than the end of fdtune. */
static int write_all(int fd, const void *data, size_t n)
{
    sigset_t pipe, old;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &old);
    int err = 0;
    for (const char *p = data; n && !err;) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno != EINTR)
            err = errno;
        else if (w == 0)
            err = EIO; /* nothing taken: no progress to wait for */
        else if (w > 0) {
            p += w;
            n -= (size_t)w;
        }
    }
    if (err == EPIPE && !sigismember(&old, SIGPIPE)) {
        struct timespec now = {0, 0};
        sigtimedwait(&pipe, NULL, &now); /* the SIGPIPE this write raised */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

/* path (a new file or a regular one, o) replaced through a temporary file beside it, which
 * is flushed to disk first; an existing file keeps its permission bits. */
static int write_replacing(const char *path, const fdt_out_path *o, const void *data, size_t n,
                           fdt_err *e)
{
    size_t pl = strlen(o->path);
    char *tmp = malloc(pl + 48);
    if (!tmp)
        return fdt_err_set(e, "%s: out of memory", path);
    int fd = -1;
    mode_t mode = o->kind == FDT_OUT_FILE ? 0600 : 0644; /* a file's own mode comes next */
    for (int k = 0; fd < 0 && k < 100; k++) {
        snprintf(tmp, pl + 48, "%s.tmp.%ld.%d", o->path, (long)getpid(), k);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    int err = fd < 0 ? errno : 0;
    if (!err && o->kind == FDT_OUT_FILE && fchmod(fd, o->mode & 07777) != 0)
        err = errno;
    if (!err)
        err = write_all(fd, data, n);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (fd >= 0 && close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, o->path) != 0)
        err = errno;
    if (err && fd >= 0)
        unlink(tmp);
    free(tmp);
    if (!err)
        return 0;
    if (strcmp(path, o->path))
        return fdt_err_set(e, "%s (a link to %s): %s", path, o->path, strerror(err));
    return fdt_err_set(e, "%s: %s", path, strerror(err)); /* the name the caller knows */
}

int fdt_write_file_atomic(const char *path, const void *data, size_t n, fdt_err *e)
{
    fdt_out_path o;
    if (fdt_output_resolve(path, &o, e))
        return -1;
    if (o.kind == FDT_OUT_NEW || o.kind == FDT_OUT_FILE)
        return write_replacing(path, &o, data, n, e);
    int fd = o.kind == FDT_OUT_FD ? o.fd : open(o.path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    int err = fd < 0 ? errno : write_all(fd, data, n);
    if (o.kind == FDT_OUT_STREAM && fd >= 0 && close(fd) != 0 && !err)
        err = errno;
    return err ? fdt_err_set(e, "%s: %s", path, strerror(err)) : 0;
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
