/* SQLite result codes turned into "what: why" messages that tell corruption, a full disk,
 * lock contention and a snapshot that changed under a read apart. It calls no other file of
 * db/, so every file of db/ (reader.c's opening among them) reports through it. */
#include "db_internal.h"

#include <stdarg.h>
#include <stdio.h>

int fdt_dbi_fail(fdt_db *db, fdt_err *e, int rc, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    /* The connection's message is more precise ("UNIQUE constraint failed: ..."), but only
     * when it still describes this error. */
    const char *msg = sqlite3_errstr(rc);
    if (db && db->h && (sqlite3_errcode(db->h) & 0xff) == (rc & 0xff))
        msg = sqlite3_errmsg(db->h);
    if (db && db->changed)
        return fdt_err_set(e, "%s: %s changed while it was read (another process wrote to it "
                           "meanwhile): run the command again", what, db->path);
    /* Only true while this connection has written nothing: a failed transaction rolls back,
     * earlier ones stay. */
    const char *kept = db && db->wrote ? "" : "; the file was left as it is";
    if (rc == SQLITE_READONLY_ROLLBACK)
        return fdt_err_set(e, "%s: a writer was cut off in the middle of a transaction and left "
                           "%s-journal, which a read-only command does not roll back: open it "
                           "for writing once (any fdtune command that writes to it rolls it "
                           "back)%s", what, db ? db->path : "its", kept);
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        return fdt_err_set(e, "%s: %s%s", what, msg, kept);
    case SQLITE_CORRUPT:
        return fdt_err_set(e, "%s: integrity problem: %s%s", what, msg, kept);
    case SQLITE_FULL:
        return fdt_err_set(e, "%s: %s; the transaction was rolled back", what, msg);
    case SQLITE_BUSY:
        return fdt_err_set(e, "%s: %s: another process kept it locked too long", what, msg);
    default:
        return fdt_err_set(e, "%s: %s", what, msg);
    }
}
