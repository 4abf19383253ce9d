/* Reading a database without writing beside it, and the files SQLite keeps beside one: the
 * -wal log of a WAL database, the -shm index of that log. A plain SQLite reader of a WAL
 * database creates the -wal and -shm when they are missing and leaves them behind, owned by
 * the reader, so that the owner's next write fails ("attempt to write a readonly database").
 * fdtune's readers create and change no file (SQLite's rules for read-only WAL databases,
 * https://www.sqlite.org/wal.html, "Read-Only Databases"):
 *  - a reader first takes SQLite's SHARED lock on the file, as every SQLite reader holds one,
 *    and keeps it while open: through SQLite's own file layer (its VFS), so that the locks of
 *    several connections of one process to one file (POSIX locks, which the close of any
 *    descriptor of the file would drop) stay SQLite's to count. While it is held, no writer
 *    can take the file exclusively: switch its journal mode, write a rollback-journal
 *    transaction into it, or, closing as the last connection, checkpoint its log and delete
 *    it;
 *  - a file whose header says rollback journal and that has no -wal beside it is read by
 *    SQLite as usual: such readers create nothing;
 *  - a WAL file whose -wal is missing or empty has all of its content in the file: it is read
 *    as an immutable file (immutable=1: SQLite opens no -wal, no -shm, takes no locks). A
 *    writer that starts meanwhile writes into a log of its own, which this reader does not
 *    see (a reader's snapshot, as any reader has), until a checkpoint copies the log into
 *    the file. That changes the file, and a read in progress would mix old and new pages. So
 *    the file (identity, size, modification time) and its log are looked at before each
 *    statement, while it runs (every 1000 steps of SQLite's machine) and after each row: a
 *    changed file, or a log that holds something (its checkpoint may come any time) or is
 *    not the one there was, fails the read ("changed while it was read: run the command
 *    again"), which finds the log the next time;
 *  - a WAL file whose -wal holds changes is read through the log and the -shm that is there,
 *    opened read-only (readonly_shm=1: without a writer to keep it current SQLite rebuilds the
 *    index in private memory), in one read transaction (one snapshot) held while open;
 *    without a -shm, reading would create one, so a reader is refused with what to do, and
 *    so is one that cannot read them.
 * A writer, before it opens the file, checks that it can write the -wal and -shm that are
 * there, and names them and their owner when it cannot. Whether another process has the
 * file open shows in the kernel's table of locks (SQLite's connections to a WAL file hold
 * locks on it and on its -shm while open). */
#include "db_internal.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* VM steps between two looks at a snapshot's file while a statement runs. */
#define SNAPSHOT_STEPS 1000

static void side_path(const char *path, const char *suffix, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", path, suffix);
}

/* "user NAME (uid N)", or "uid N" without a name. */
static void owner_of(uid_t uid, char *buf, size_t n)
{
    struct passwd *pw = getpwuid(uid);
    if (pw && pw->pw_name)
        snprintf(buf, n, "user %s (uid %u)", pw->pw_name, (unsigned)uid);
    else
        snprintf(buf, n, "uid %u", (unsigned)uid);
}

/* Opens db->hold (SQLite's default VFS, read-only) and takes SQLite's SHARED lock on it. A
 * file system without locks reads as SQLite would without them. 1: a writer holds the file
 * exclusively past wait_ms. */
static int hold(fdt_db *db, int wait_ms, fdt_err *e)
{
    char journal[4200], wal[4200];
    side_path(db->path, "-journal", journal, sizeof journal);
    side_path(db->path, "-wal", wal, sizeof wal);
    sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
    db->hold_name = sqlite3_create_filename(db->path, journal, wal, 0, NULL);
    sqlite3_file *f = vfs ? sqlite3_malloc(vfs->szOsFile) : NULL;
    if (!db->hold_name || !f) {
        sqlite3_free(f);
        return fdt_err_set(e, "%s: out of memory", db->path);
    }
    memset(f, 0, (size_t)vfs->szOsFile);
    int out, rc = vfs->xOpen(vfs, db->hold_name, f, SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_READONLY,
                             &out);
    if (rc != SQLITE_OK || !f->pMethods) {
        if (f->pMethods) /* the VFS's rule: closed even when the open failed */
            f->pMethods->xClose(f);
        sqlite3_free(f);
        return fdt_dbi_fail(db, e, rc != SQLITE_OK ? rc : SQLITE_CANTOPEN, "%s", db->path);
    }
    db->hold = f;
    for (int waited = 0;; waited += 20) {
        rc = f->pMethods->xLock(f, SQLITE_LOCK_SHARED);
        if ((rc & 0xff) != SQLITE_BUSY)
            return 0;
        if (waited >= wait_ms)
            return 1;
        usleep(20000);
    }
}

void fdt_dbi_release(fdt_db *db)
{
    if (db->hold) {
        db->hold->pMethods->xUnlock(db->hold, SQLITE_LOCK_NONE);
        db->hold->pMethods->xClose(db->hold);
        sqlite3_free(db->hold);
    }
    sqlite3_free_filename((char *)db->hold_name); /* char * before SQLite 3.41 */
    db->hold = NULL;
    db->hold_name = NULL;
}

/* 1 when the header says WAL (file format bytes 18 and 19 are 2). */
static int header_wal(sqlite3_file *f)
{
    unsigned char h[100];
    return f->pMethods->xRead(f, h, sizeof h, 0) == SQLITE_OK &&
           !memcmp(h, "SQLite format 3", 16) && h[18] == 2 && h[19] == 2;
}

/* Refuses a side file this process cannot read (a reader needs the log and its index). */
static int readable(const char *path, const char *side, fdt_err *e)
{
    struct stat sb;
    if (faccessat(AT_FDCWD, side, R_OK, AT_EACCESS) == 0 || stat(side, &sb) != 0)
        return 0;
    char owner[128];
    owner_of(sb.st_uid, owner, sizeof owner);
    return fdt_err_set(e, "%s: cannot read %s, which belongs to %s (mode %03o): SQLite's "
                       "write-ahead log and its index beside the database hold changes not "
                       "yet in it; ask its owner to make them readable, or to checkpoint the "
                       "log into the file (sqlite3 %s 'PRAGMA wal_checkpoint(TRUNCATE)')",
                       path, side, owner, (unsigned)(sb.st_mode & 0777), path);
}

/* A log with changes but no index: reading it would create the -shm. */
static int needs_index(const char *path, const char *wal, const struct stat *ws, fdt_err *e)
{
    char owner[128];
    owner_of(ws->st_uid, owner, sizeof owner);
    return fdt_err_set(e, "%s: its write-ahead log %s (of %s) holds changes not yet in the "
                       "file, and reading them needs the index %s-shm, which a read-only "
                       "command does not create: ask the file's owner to open it for writing "
                       "once (any fdtune command that writes to it, or sqlite3 %s 'PRAGMA "
                       "wal_checkpoint(TRUNCATE)'), or copy both files and read the copy",
                       path, wal, owner, path, path);
}

static void snapshot_take(fdt_db *db)
{
    char wal[4200];
    side_path(db->path, "-wal", wal, sizeof wal);
    db->snapshot = stat(db->path, &db->snap) == 0;
    if (stat(wal, &db->snap_wal) != 0)
        memset(&db->snap_wal, 0, sizeof db->snap_wal);
}

static int same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Changed: the file itself (a checkpoint wrote into it), or a log that holds something or
 * is not the one there was (a writer started: its checkpoint would come next, and one that
 * truncated its log after it leaves it empty but newer). */
int fdt_dbi_snapshot_changed(fdt_db *db)
{
    if (!db->snapshot || db->changed)
        return db->changed;
    char wal[4200];
    struct stat f, w;
    side_path(db->path, "-wal", wal, sizeof wal);
    int have_wal = stat(wal, &w) == 0;
    db->changed = stat(db->path, &f) != 0 || !same_stat(&f, &db->snap) ||
                  (have_wal && (w.st_size > 0 ||
                                (db->snap_wal.st_ino && !same_stat(&w, &db->snap_wal))));
    return db->changed;
}

static int snapshot_progress(void *ctx) { return fdt_dbi_snapshot_changed(ctx); }

/* How a reader opens the file (plan). */
typedef enum {
    READ_FILE,     /* a rollback journal: as SQLite reads it */
    READ_SNAPSHOT, /* WAL, no log: immutable, checked (fdt_dbi_snapshot_changed) */
    READ_LOG,      /* through the log and its -shm, read-only */
    READ_LOG_SHM   /* a writer's checks: through the log, creating its -shm */
} read_mode;

static const char *const mode_params[] = {"readonly_shm=1", "immutable=1", "readonly_shm=1",
                                          ""};

/* How to open, or -1 with e when the file cannot be read without writing beside it. */
static int plan(fdt_db *db, int writer, read_mode *mode, fdt_err *e)
{
    char wal[4200], shm[4200];
    struct stat ws, ss;
    side_path(db->path, "-wal", wal, sizeof wal);
    side_path(db->path, "-shm", shm, sizeof shm);
    int have_wal = stat(wal, &ws) == 0;
    if (!have_wal && !header_wal(db->hold)) {
        *mode = READ_FILE; /* readers create nothing there */
        return 0;
    }
    if (!have_wal || ws.st_size == 0) {
        /* SQLite would use WAL (an empty -wal makes it do so whatever the header says),
         * but everything is in the file */
        snapshot_take(db);
        *mode = READ_SNAPSHOT;
        return 0;
    }
    int have_shm = stat(shm, &ss) == 0;
    if (readable(db->path, wal, e) || (have_shm && readable(db->path, shm, e)))
        return -1;
    if (!have_shm && !writer)
        return needs_index(db->path, wal, &ws, e);
    *mode = have_shm ? READ_LOG : READ_LOG_SHM;
    return 0;
}

/* sqlite3_open_v2 read-only of a file: URI with the path's '%', '?' and '#' escaped. */
static int open_uri(fdt_db *db, const char *params)
{
    fdt_sb uri;
    fdt_sb_init(&uri);
    fdt_sb_puts(&uri, "file:");
    for (const char *c = db->path; *c; c++)
        if (*c == '%' || *c == '?' || *c == '#')
            fdt_sb_printf(&uri, "%%%02X", (unsigned char)*c);
        else
            fdt_sb_putn(&uri, c, 1);
    if (*params)
        fdt_sb_printf(&uri, "?%s", params);
    int rc = uri.oom ? SQLITE_NOMEM
                     : sqlite3_open_v2(fdt_sb_str(&uri), &db->h,
                                       SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    fdt_sb_free(&uri);
    return rc;
}

/* A read through the log with a read-only index begins with a read transaction held until
 * the connection closes (one snapshot for all of its statements): SQLite answers
 * SQLITE_READONLY_RECOVERY rather than wait while a writer updates or rebuilds the index,
 * so the first read is tried again until wait_ms. */
static int begin_log_read(fdt_db *db, int wait_ms, fdt_err *e)
{
    int rc = sqlite3_exec(db->h, "BEGIN", NULL, NULL, NULL);
    for (int waited = 0; rc == SQLITE_OK;) {
        rc = sqlite3_exec(db->h, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
        if (rc != SQLITE_READONLY_RECOVERY || waited >= wait_ms)
            break;
        usleep(10000);
        waited += 10;
        rc = SQLITE_OK;
    }
    return rc == SQLITE_OK ? 0 : fdt_dbi_fail(db, e, rc, "%s", db->path);
}

int fdt_dbi_open_reader(fdt_db *db, int writer, int wait_ms, int *busy, fdt_err *e)
{
    *busy = 0;
    int held = hold(db, wait_ms, e);
    if (held < 0)
        return -1;
    if (held) {
        *busy = 1;
        return fdt_err_set(e, "%s: another process holds the database exclusively (a writer "
                           "committing or closing) for more than %d ms: try again", db->path,
                           wait_ms);
    }
    read_mode mode;
    if (plan(db, writer, &mode, e))
        return -1;
    int rc = open_uri(db, mode_params[mode]);
    if (rc != SQLITE_OK)
        return fdt_dbi_fail(db, e, rc, "%s", db->path);
    sqlite3_extended_result_codes(db->h, 1);
    if (mode == READ_SNAPSHOT)
        sqlite3_progress_handler(db->h, SNAPSHOT_STEPS, snapshot_progress, db);
    return mode == READ_LOG ? begin_log_read(db, wait_ms, e) : 0;
}

int fdt_dbi_check_sides(const char *path, fdt_err *e)
{
    static const char *const suffix[] = {"-wal", "-shm"};
    char side[4200], names[8500] = "", owner[128] = "";
    struct stat sb;
    int n = 0;
    side_path(path, "-wal", side, sizeof side);
    int64_t logged = stat(side, &sb) == 0 ? (int64_t)sb.st_size : 0;
    for (int i = 0; i < 2; i++) {
        side_path(path, suffix[i], side, sizeof side);
        if (stat(side, &sb) != 0 || faccessat(AT_FDCWD, side, W_OK, AT_EACCESS) == 0)
            continue;
        owner_of(sb.st_uid, owner, sizeof owner);
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", n++ ? " and " : "",
                 side);
    }
    if (!n)
        return 0;
    return fdt_err_set(e, "%s: cannot write %s, which %s to %s: SQLite's write-ahead log and its "
                       "index beside the database, left by another user's process (sqlite3, "
                       "or an older fdtune reading it); when no process has %s open, %s",
                       path, names, n > 1 ? "belong" : "belongs", owner, path,
                       logged ? "the log holds changes not yet in the file: ask their owner "
                                "or an administrator to run sqlite3 on it with 'PRAGMA "
                                "wal_checkpoint(TRUNCATE)', then to remove them"
                              : "they hold nothing: remove them (or ask their owner to)");
}

/* Whether a lock line of /proc/locks ("1: POSIX  ADVISORY  READ 123 fe:00:4567 0 EOF") is
 * another process's lock on the file (dev, ino). */
static int lock_of_other(const char *line, dev_t dev, ino_t ino)
{
    char kind[16], mode[16], rw[16];
    long pid;
    unsigned maj, min;
    unsigned long long inode;
    const char *p = strchr(line, ':');
    if (!p || strstr(line, "->"))
        return 0; /* a waiter, not a holder */
    if (sscanf(p + 1, "%15s %15s %15s %ld %x:%x:%llu", kind, mode, rw, &pid, &maj, &min,
               &inode) != 7)
        return 0;
    return maj == major(dev) && min == minor(dev) && inode == (unsigned long long)ino &&
           pid != (long)getpid();
}

int fdt_dbi_open_elsewhere(const char *path)
{
    char shm[4200];
    struct stat f, s;
    side_path(path, "-shm", shm, sizeof shm);
    if (stat(path, &f) != 0)
        return -1;
    int have_shm = stat(shm, &s) == 0;
    FILE *locks = fopen("/proc/locks", "r");
    if (!locks)
        return -1;
    char line[512];
    int found = 0;
    while (!found && fgets(line, sizeof line, locks))
        found = lock_of_other(line, f.st_dev, f.st_ino) ||
                (have_shm && lock_of_other(line, s.st_dev, s.st_ino));
    fclose(locks);
    return found;
}
