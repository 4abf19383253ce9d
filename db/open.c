/* Opening the tuning database: where it lives by default, and the gate every connection
 * passes before use. A writer checks an existing file on a read-only connection before it
 * opens it for writing: the -wal and -shm it must write, what the file is (version,
 * application id, tables), its integrity (quick check), the bounds of its rows and the
 * caller's own conditions (fdt_db_open_checked), so a corrupt, foreign, newer or otherwise
 * refused file is refused before anything is written to it; a read-only open creates and
 * changes no file (reader.c; an older schema is read as it is, see fdt_dbi_compat_readonly);
 * a read-write open then sets WAL, foreign keys and the busy timeout, and runs the forward
 * migrations. On a network file system (fs.c) a read-write open uses a rollback journal
 * instead of WAL and takes the database for itself until it closes, so a second writer is
 * refused with advice instead of corrupting it. Also the explicit integrity check. */
#include "db_internal.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Long enough for a writer committing a large batch on a slow disk; beyond it the retry in
 * fdt_dbi_begin takes over. */
#define BUSY_TIMEOUT_MS 10000

int fdt_db_default_path(char *buf, size_t n, fdt_err *e)
{
    const char *s = getenv("FDTUNE_DB");
    int w;
    if (s && *s) {
        w = snprintf(buf, n, "%s", s);
    } else if ((s = getenv("XDG_DATA_HOME")) && *s == '/') {
        /* The XDG spec says to ignore a relative XDG_DATA_HOME. */
        w = snprintf(buf, n, "%s/fdtune/fdtune.db", s);
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home) {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (!home || !*home)
            return fdt_err_set(e, "tuning database: set FDTUNE_DB (no XDG_DATA_HOME or HOME)");
        w = snprintf(buf, n, "%s/.local/share/fdtune/fdtune.db", home);
    }
    if (w < 0 || (size_t)w >= n)
        return fdt_err_set(e, "tuning database: path too long");
    return 0;
}

int fdt_db_schema_version(void) { return FDT_DBI_SCHEMA_VERSION; }

const char *fdt_db_path(const fdt_db *db) { return db->path; }

/* The integers of one row of a query without parameters; errors name the file. This is the
 * first read of a file, so it is where "not a database" shows. */
static int query_ints(fdt_db *db, const char *sql, int64_t *out, int n, fdt_err *e)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fdt_dbi_fail(db, e, rc, "%s", db->path);
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        fdt_dbi_fail(db, e, rc, "%s", db->path);
        sqlite3_finalize(st);
        return -1;
    }
    for (int i = 0; i < n; i++)
        out[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    return 0;
}

static int make_parent_dir(const char *path, fdt_err *e)
{
    char *dir = strdup(path);
    if (!dir)
        return fdt_err_set(e, "%s: out of memory", path);
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash && slash != dir) {
        *slash = 0;
        rc = fdt_mkdirs(dir, e);
    }
    free(dir);
    return rc;
}

/* Journal mode, synchronous and foreign keys are per connection (or need a write lock), so
 * they are set on every read-write open. */
static int set_write_pragmas(fdt_db *db, fdt_err *e)
{
    char mode[16] = "";
    int64_t was_wal = 0;
    if (query_ints(db, "SELECT journal_mode = 'wal' FROM pragma_journal_mode", &was_wal, 1, e))
        return -1;
    for (int attempt = 0;; attempt++) {
        sqlite3_stmt *st;
        if (fdt_dbi_prepare(db, "PRAGMA journal_mode = WAL", &st, e))
            return -1;
        int rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            fdt_dbi_copy(mode, sizeof mode, st, 0);
        sqlite3_finalize(st);
        if (rc == SQLITE_ROW)
            break;
        /* Switching a fresh file to WAL needs a moment of exclusive access; concurrent
         * creators queue here. */
        if ((rc & 0xff) != SQLITE_BUSY || attempt >= 10)
            return fdt_dbi_fail(db, e, rc, "%s: set WAL journal", db->path);
        usleep(20000u * (unsigned)(attempt + 1));
    }
    if (strcmp(mode, "wal") != 0)
        return fdt_err_set(e, "%s: cannot use a WAL journal (got '%s'; a network file system?)",
                           db->path, mode);
    db->wrote |= !was_wal; /* the switch rewrote the header */
    int rc = sqlite3_exec(db->h, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON", NULL,
                          NULL, NULL);
    if (rc != SQLITE_OK)
        return fdt_dbi_fail(db, e, rc, "%s: set pragmas", db->path);
    return 0;
}

/* How long a process waits for a database on a network file system before it is refused:
 * the writer there keeps it for its whole run, so waiting longer only delays the advice. */
#define NETWORK_WAIT_MS 2000

/* The refusal when another process holds a database on a network file system. */
static int network_busy(fdt_db *db, const char *fs, int writer, fdt_err *e)
{
    if (!writer)
        return fdt_err_set(e, "%s: the database is on a network file system (%s), where a "
                           "writing fdtune holds it for its whole run: query it when that run "
                           "ends, or query a copy (README: Databases on network filesystems)",
                           db->path, fs);
    return fdt_err_set(e, "%s: the database is on a network file system (%s), where fdtune "
                       "lets one process at a time open it for writing, and another process "
                       "holds it: wait for that one, or give each job its own database on "
                       "node-local storage (FDTUNE_DB=/tmp/...) and merge them afterwards with "
                       "'fdtune db merge' (README: Databases on network filesystems)",
                       db->path, fs);
}

static int is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

/* The write pragmas on a network file system: exclusive locking mode keeps the lock of the
 * first write until the connection closes, and BEGIN EXCLUSIVE takes it now, so another
 * writer (or reader) fails at once; a rollback journal (DELETE) instead of WAL, whose
 * shared-memory index other machines cannot see; full sync, as a rollback journal needs for
 * durability. */
static int set_network_pragmas(fdt_db *db, const char *fs, fdt_err *e)
{
    char mode[16] = "";
    int64_t was_wal = 0;
    int rc = sqlite3_exec(db->h, "PRAGMA locking_mode = EXCLUSIVE", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db->h, "BEGIN EXCLUSIVE; COMMIT", NULL, NULL, NULL);
    if (rc == SQLITE_OK &&
        query_ints(db, "SELECT journal_mode = 'wal' FROM pragma_journal_mode", &was_wal, 1, e))
        return -1;
    if (rc == SQLITE_OK) {
        sqlite3_stmt *st;
        if (fdt_dbi_prepare(db, "PRAGMA journal_mode = DELETE", &st, e))
            return -1;
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            fdt_dbi_copy(mode, sizeof mode, st, 0);
        sqlite3_finalize(st);
        rc = rc == SQLITE_ROW ? SQLITE_OK : rc;
    }
    if (is_busy(rc))
        return network_busy(db, fs, 1, e);
    if (rc != SQLITE_OK)
        return fdt_dbi_fail(db, e, rc, "%s: lock on a network file system (%s)", db->path, fs);
    if (strcmp(mode, "delete") != 0)
        return fdt_err_set(e, "%s: cannot use a rollback journal (got '%s')", db->path, mode);
    db->wrote |= !!was_wal; /* the switch rewrote the header */
    sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
    rc = sqlite3_exec(db->h, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON", NULL, NULL,
                      NULL);
    if (rc != SQLITE_OK)
        return fdt_dbi_fail(db, e, rc, "%s: set pragmas", db->path);
    return 0;
}

/* The checks that must pass before this process writes anything into the file. A reader
 * refuses a file without fdtune's schema, a writer builds it there (an empty file). */
static int check_file(fdt_db *db, int writer, int64_t *version, fdt_err *e)
{
    /* One statement, so one snapshot: read separately, a version of 0 and the tables of a
     * concurrent migration committed in between would look like a foreign database. */
    int64_t v[3];
    if (query_ints(db,
                   "SELECT (SELECT user_version FROM pragma_user_version),"
                   " (SELECT application_id FROM pragma_application_id),"
                   " (SELECT count(*) FROM sqlite_schema)",
                   v, 3, e))
        return -1;
    int64_t app = v[1], tables = v[2];
    *version = v[0];
    int known = fdt_db_schema_version();
    if (*version > known)
        return fdt_err_set(e, "%s: database schema v%lld is newer than this fdtune (v%d): "
                           "upgrade fdtune", db->path, (long long)*version, known);
    if (*version < 0)
        return fdt_err_set(e, "%s: not an fdtune database (schema version %lld)", db->path,
                           (long long)*version);
    if (app != 0 && app != FDT_DBI_APPLICATION_ID)
        return fdt_err_set(e, "%s: not an fdtune database (SQLite application_id 0x%08llx)",
                           db->path, (unsigned long long)app);
    /* Never build fdtune's tables into somebody else's database. */
    if (*version == 0 && tables)
        return fdt_err_set(e, "%s: not an fdtune database (it has %lld schema objects but "
                           "no fdtune schema version)", db->path, (long long)tables);
    if (!writer && *version == 0)
        return fdt_err_set(e, "%s: empty database (no fdtune schema yet)", db->path);
    /* An older schema read-only: read as it is (fdt_dbi_compat_readonly), or refused there. */
    return 0;
}

/* sqlite3_open_v2 of db->path for a writer; immutable: read-only through a file: URI with
 * immutable=1 (the system database: SQLite neither locks nor looks for a journal). */
static int open_handle(fdt_db *db, int oflags, int immutable, fdt_err *e)
{
    int rc;
    if (immutable) {
        fdt_sb uri;
        fdt_sb_init(&uri);
        fdt_sb_puts(&uri, "file:");
        for (const char *c = db->path; *c; c++)
            if (*c == '%' || *c == '?' || *c == '#')
                fdt_sb_printf(&uri, "%%%02X", (unsigned char)*c);
            else
                fdt_sb_putn(&uri, c, 1);
        fdt_sb_puts(&uri, "?immutable=1");
        rc = uri.oom ? SQLITE_NOMEM
                     : sqlite3_open_v2(fdt_sb_str(&uri), &db->h, oflags | SQLITE_OPEN_URI, NULL);
        fdt_sb_free(&uri);
    } else {
        rc = sqlite3_open_v2(db->path, &db->h, oflags, NULL);
    }
    return rc == SQLITE_OK ? 0 : fdt_dbi_fail(db, e, rc, "%s", db->path);
}

static fdt_db *new_db(const char *path, int readonly)
{
    fdt_db *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) {
        free(db);
        return NULL;
    }
    db->readonly = readonly;
    return db;
}

/* A reader's connection (reader.c) with the settings of every connection; writer: a
 * writer's checks before it writes (fdt_dbi_open_reader). */
static int open_read(fdt_db *db, int writer, int network, const char *fs, fdt_err *e)
{
    int busy;
    if (fdt_dbi_open_reader(db, writer, network ? NETWORK_WAIT_MS : BUSY_TIMEOUT_MS, &busy,
                            e)) {
        if (busy && network)
            network_busy(db, fs, writer, e);
        return -1;
    }
    sqlite3_extended_result_codes(db->h, 1);
    sqlite3_busy_timeout(db->h, network ? NETWORK_WAIT_MS : BUSY_TIMEOUT_MS);
    /* the temporary stand-ins of an older schema stay in memory */
    int rc = sqlite3_exec(db->h, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : fdt_dbi_fail(db, e, rc, "%s", db->path);
}

/* PRAGMA quick_check (the integrity check without the indexes' content and UNIQUE). */
static int quick_check(fdt_db *db, fdt_err *e)
{
    fdt_sb msg;
    fdt_sb_init(&msg);
    int rc = fdt_dbi_integrity(db, 1, &msg, e);
    if (!rc && msg.len)
        rc = fdt_err_set(e, "%s: integrity problem: %s", db->path, fdt_sb_str(&msg));
    fdt_sb_free(&msg);
    return rc;
}

/* One round of precheck's checks; *cut_off: a transaction a writer cut off (a hot rollback
 * journal) stopped them; *changed: another writer wrote meanwhile (fdt_dbi_snapshot_changed),
 * so that a new round reads through its log. */
static int precheck_once(const char *path, int network, const char *fs, fdt_db_gate gate,
                         void *ctx, int *cut_off, int *changed, fdt_err *e)
{
    fdt_db *db = new_db(path, 1);
    if (!db)
        return fdt_err_set(e, "%s: out of memory", path);
    int64_t version = 0;
    int rc = fdt_dbi_check_sides(path, e) || open_read(db, 1, network, fs, e) ||
             check_file(db, 1, &version, e);
    *cut_off = rc && db->h && sqlite3_extended_errcode(db->h) == SQLITE_READONLY_ROLLBACK;
    if (!rc && version > 0)
        rc = quick_check(db, e) || fdt_dbi_bounds_refuse(db, (int)version, e) ||
             fdt_dbi_compat_readonly(db, (int)version, e) || (gate && gate(ctx, db, e));
    *changed = rc && db->changed;
    fdt_db_close(db);
    return rc ? -1 : 0;
}

/* A rollback journal a writer left hot (cut off mid-transaction) is rolled back the way
 * SQLite does it, by a first read of a connection that may write; the file then holds what
 * was last committed, which is what every reader saw. */
static int roll_back(const char *path, fdt_err *e)
{
    fdt_db db = {.h = NULL, .path = (char *)path};
    int rc = sqlite3_open_v2(path, &db.h, SQLITE_OPEN_READWRITE, NULL);
    int64_t n;
    int ret = rc != SQLITE_OK ? fdt_dbi_fail(&db, e, rc, "%s", path)
                              : query_ints(&db, "SELECT count(*) FROM sqlite_schema", &n, 1, e);
    sqlite3_close_v2(db.h);
    return ret;
}

/* A writer's checks of an existing file, before it opens it for writing, on a connection
 * that writes nothing: the -wal and -shm it must write, what the file is (check_file), its
 * integrity (quick check), the bounds of its rows and the caller's gate. */
static int precheck(const char *path, int network, const char *fs, fdt_db_gate gate,
                    void *ctx, fdt_err *e)
{
    int cut_off, changed, rc;
    for (int round = 0;; round++) {
        rc = precheck_once(path, network, fs, gate, ctx, &cut_off, &changed, e);
        if (!rc || !changed || round == 4) /* writers of one file take turns: read again */
            break;
    }
    if (rc && cut_off) {
        if (roll_back(path, e))
            return fdt_err_wrap(e, "roll back the transaction a writer cut off");
        rc = precheck_once(path, network, fs, gate, ctx, &cut_off, &changed, e);
        if (rc)
            return fdt_err_wrap(e, "after rolling back the transaction a writer cut off");
    }
    if (rc && !strstr(e->msg, "left as it is")) {
        size_t n = strlen(e->msg);
        snprintf(e->msg + n, sizeof e->msg - n, "; the file was left as it is");
    }
    return rc ? -1 : 0;
}

/* db->h for flags: a reader's (reader.c), the system database's (immutable) or a writer's. */
static int connect(fdt_db *db, int flags, int network, const char *fs, fdt_err *e)
{
    int write = (flags & FDT_DB_READWRITE) != 0;
    if (!write && flags != FDT_DB_IMMUTABLE)
        return open_read(db, 0, network, fs, e);
    int create = (flags & FDT_DB_CREATE) == FDT_DB_CREATE;
    if (open_handle(db, write ? SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
                              : SQLITE_OPEN_READONLY,
                    flags == FDT_DB_IMMUTABLE, e))
        return -1;
    sqlite3_extended_result_codes(db->h, 1);
    sqlite3_busy_timeout(db->h, network ? NETWORK_WAIT_MS : BUSY_TIMEOUT_MS);
    return 0;
}

int fdt_db_open(const char *path, int flags, fdt_db **out, fdt_err *e)
{
    return fdt_db_open_checked(path, flags, NULL, NULL, out, e);
}

int fdt_db_open_checked(const char *path, int flags, fdt_db_gate gate, void *ctx,
                        fdt_db **out, fdt_err *e)
{
    *out = NULL;
    char def[4096];
    if (!path) {
        if (fdt_db_default_path(def, sizeof def, e))
            return -1;
        path = def;
    }
    if (!*path)
        return fdt_err_set(e, "tuning database: empty path");
    int write = (flags & FDT_DB_READWRITE) != 0;
    int create = (flags & FDT_DB_CREATE) == FDT_DB_CREATE;
    /* Readers only need the file system for a clearer message, so a failed look is local. */
    char fs[16];
    int network = 0;
    fdt_err fe;
    if (fdt_db_fs_kind(path, fs, sizeof fs, &network, write ? e : &fe)) {
        if (write)
            return fdt_err_wrap(e, "tuning database");
        network = 0;
    }

    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno != ENOENT)
            return fdt_err_set(e, "%s: %s", path, strerror(errno));
        if (!create)
            return fdt_err_set(e, "%s: no tuning database here", path);
        if (make_parent_dir(path, e))
            return fdt_err_wrap(e, "tuning database");
    } else if (!S_ISREG(sb.st_mode)) {
        return fdt_err_set(e, "%s: not a regular file", path);
    } else if (!write && sb.st_size == 0) {
        return fdt_err_set(e, "%s: empty database (no fdtune schema yet)", path);
    } else if (write && sb.st_size > 0 && precheck(path, network, fs, gate, ctx, e)) {
        return -1;
    }

    fdt_db *db = new_db(path, !write);
    if (!db)
        return fdt_err_set(e, "%s: out of memory", path);
    int rc = connect(db, flags, network, fs, e);
    int64_t version = 0;
    int rc_open = rc || check_file(db, write, &version, e);
    if (rc_open && !rc && network && is_busy(sqlite3_errcode(db->h)))
        network_busy(db, fs, write, e);
    int older = version < fdt_db_schema_version();
    if (rc_open || (write && !network && set_write_pragmas(db, e)) ||
        (write && network && set_network_pragmas(db, fs, e)) ||
        (write && older && fdt_dbi_migrate(db, e)) ||
        (!write && older && fdt_dbi_compat_readonly(db, (int)version, e))) {
        fdt_db_close(db);
        return -1;
    }
    *out = db;
    return 0;
}

void fdt_db_close(fdt_db *db)
{
    if (!db)
        return;
    if (db->h)
        sqlite3_close_v2(db->h);
    fdt_dbi_release(db);
    free(db->path);
    free(db);
}

int fdt_db_file_version(const char *path, int *version, fdt_err *e)
{
    struct stat sb;
    *version = 0;
    if (stat(path, &sb) != 0)
        return fdt_err_set(e, "%s: %s", path, strerror(errno));
    if (sb.st_size == 0)
        return 0;
    fdt_db db = {.h = NULL, .readonly = 1, .path = (char *)path};
    int64_t v = 0;
    int busy;
    int ret = fdt_dbi_open_reader(&db, 0, BUSY_TIMEOUT_MS, &busy, e) ||
                      query_ints(&db, "PRAGMA user_version", &v, 1, e)
                  ? -1
                  : 0;
    sqlite3_close_v2(db.h);
    fdt_dbi_release(&db);
    *version = (int)v;
    return ret;
}

int fdt_dbi_integrity(fdt_db *db, int quick, fdt_sb *msg, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, quick ? "PRAGMA quick_check(10)" : "PRAGMA integrity_check(10)",
                        &st, e))
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (!line || strcmp(line, "ok") == 0)
            continue;
        /* One row may hold several lines behind a "*** in database main ***" header. */
        static const char header[] = "*** in database main ***";
        if (!strncmp(line, header, sizeof header - 1))
            line += sizeof header - 1;
        for (const char *nl; *line; line = nl + (*nl != 0)) {
            nl = strchr(line, '\n');
            if (!nl)
                nl = line + strlen(line);
            if (nl > line)
                fdt_sb_printf(msg, "%s%.*s", msg->len ? "; " : "", (int)(nl - line), line);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return fdt_dbi_fail(db, e, rc, "integrity check");
    return 0;
}

int fdt_db_check(fdt_db *db, fdt_err *e)
{
    fdt_sb msg;
    fdt_sb_init(&msg);
    if (fdt_dbi_integrity(db, 0, &msg, e)) {
        fdt_sb_free(&msg);
        return fdt_err_wrap(e, "%s: check", db->path);
    }
    if (msg.len) {
        fdt_err_set(e, "%s: integrity problem: %s", db->path, fdt_sb_str(&msg));
        fdt_sb_free(&msg);
        return -1;
    }
    fdt_sb_free(&msg);

    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, "PRAGMA foreign_key_check", &st, e))
        return fdt_err_wrap(e, "%s: check", db->path);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        char table[64], parent[64];
        fdt_dbi_copy(table, sizeof table, st, 0);
        fdt_dbi_copy(parent, sizeof parent, st, 2);
        long long rowid = sqlite3_column_int64(st, 1);
        sqlite3_finalize(st);
        return fdt_err_set(e, "%s: integrity problem: %s row %lld refers to a missing %s row",
                           db->path, table, rowid, parent);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return fdt_dbi_fail(db, e, rc, "%s: check", db->path);
    return 0;
}
