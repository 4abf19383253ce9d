/* Host<->device links (schema v8): what `fdtune devices` measures of a device's copies to and
 * from pinned host memory (GB/s each way, both at once, the latency of a small copy, a narrow
 * row's time in a box copy (v10), and whether the device reads host memory in place), logged
 * per device; the newest measurement answers, and the hybrid planner reads it. A measurement
 * that is not one (a rate that is not positive or not finite) is refused before anything is
 * written. */
#include "db_internal.h"

#include <math.h>
#include <string.h>

/* "what: why" for a link whose numbers cannot be a measurement; 0 when they can. */
static int check_link(const fdt_db_link *l, fdt_err *e)
{
    if (!(l->h2d_gbs > 0 && isfinite(l->h2d_gbs)) || !(l->d2h_gbs > 0 && isfinite(l->d2h_gbs)))
        return fdt_err_set(e, "link: copy rates must be positive GB/s (host to device %g, "
                              "device to host %g)", l->h2d_gbs, l->d2h_gbs);
    if (!(l->both_gbs >= 0 && isfinite(l->both_gbs)))
        return fdt_err_set(e, "link: both_gbs %g must be 0 (not measured) or positive",
                           l->both_gbs);
    if (!(l->latency_us >= 0 && isfinite(l->latency_us)))
        return fdt_err_set(e, "link: latency %g us must be 0 or positive", l->latency_us);
    if (!isnan(l->row_ns) && !(l->row_ns >= 0 && isfinite(l->row_ns)))
        return fdt_err_set(e, "link: a row's time %g ns must be 0 or positive (NaN: not "
                              "measured)", l->row_ns);
    if (l->unified != 0 && l->unified != 1)
        return fdt_err_set(e, "link: unified is 0 or 1, not %d", l->unified);
    if (!memchr(l->measured, 0, sizeof l->measured))
        return fdt_err_set(e, "link: measured time is not a terminated string");
    return 0;
}

static int bind_link(sqlite3_stmt *st, int64_t device_id, const fdt_db_link *l)
{
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":h2d", l->h2d_gbs);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":d2h", l->d2h_gbs);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":both", l->both_gbs);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":lat", l->latency_us);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":row", l->row_ns);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":unified", l->unified);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":measured", *l->measured ? l->measured : NULL);
    return rc;
}

int fdt_db_link_put(fdt_db *db, int64_t device_id, const fdt_db_link *l, fdt_err *e)
{
    if (check_link(l, e))
        return fdt_err_wrap(e, "device %lld", (long long)device_id);
    sqlite3_stmt *st = NULL;
    if (fdt_dbi_begin(db, e))
        return fdt_err_wrap(e, "device %lld: link", (long long)device_id);
    if (fdt_dbi_prepare(db,
                        "INSERT INTO links (device_id, h2d_gbs, d2h_gbs, both_gbs, latency_us,"
                        " row_ns, unified, measured) VALUES (:device, :h2d, :d2h, :both, :lat,"
                        " :row, :unified, coalesce(:measured,"
                        " strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
                        &st, e))
        goto fail;
    int rc = bind_link(st, device_id, l);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "insert");
        goto fail;
    }
    sqlite3_finalize(st);
    if (fdt_dbi_commit(db, e))
        return fdt_err_wrap(e, "device %lld: link", (long long)device_id);
    return 0;
fail:
    sqlite3_finalize(st);
    fdt_dbi_rollback(db);
    return fdt_err_wrap(e, "device %lld: link", (long long)device_id);
}

int fdt_db_link_get(fdt_db *db, int64_t device_id, fdt_db_link *l, int *found, fdt_err *e)
{
    memset(l, 0, sizeof *l);
    *found = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT h2d_gbs, d2h_gbs, both_gbs, latency_us, unified, measured,"
                        " row_ns"
                        " FROM links WHERE device_id = :device ORDER BY measured DESC, id DESC"
                        " LIMIT 1",
                        &st, e))
        return fdt_err_wrap(e, "device %lld: link", (long long)device_id);
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        l->h2d_gbs = sqlite3_column_double(st, 0);
        l->d2h_gbs = sqlite3_column_double(st, 1);
        l->both_gbs = sqlite3_column_double(st, 2);
        l->latency_us = sqlite3_column_double(st, 3);
        l->unified = sqlite3_column_int(st, 4) != 0;
        fdt_dbi_copy(l->measured, sizeof l->measured, st, 5);
        l->row_ns = fdt_dbi_real(st, 6);
        *found = 1;
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "device %lld: link", (long long)device_id);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}
