/* Whether a stored result still stands for the kernel this fdtune writes (fdt_db.h). A
 * result records the generator fingerprint it was measured with, which changes with any
 * change of the generator's code, also one that leaves a config's kernel as it was. So the
 * database also records, in its metadata, the hash of the code each best was measured with
 * (fdt_gen_source_hash): under "kernel_source <generator> <backend> <op> R<n> <precision>
 * <grid> config <hash of the config text>",
 * written when a best is decided with this fdtune's generator (decisions.c) and carried
 * along by `db merge` (tuner/merge.c). A result of another generator whose recorded hash is
 * this generator's hash for the same problem and config was measured with the very kernel
 * this fdtune writes; one whose hash differs, or that has none recorded, may not have been.
 * Metadata keeps this in a key/value table every schema from v3 has, with no column of its
 * own. */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kernel_names[] = {"this generator", "unchanged", "differs",
                                           "unrecorded"};

const char *fdt_db_kernel_name(fdt_db_kernel k)
{
    return (unsigned)k < sizeof kernel_names / sizeof kernel_names[0] ? kernel_names[k] : "?";
}

int fdt_db_kernel_is_source_key(const char *key)
{
    return !strncmp(key, FDT_DB_KERNEL_KEY_PREFIX, strlen(FDT_DB_KERNEL_KEY_PREFIX));
}

void fdt_db_kernel_key(const fdt_db_row *row, char *key, size_t n)
{
    /* no '=' in a key (`db merge --meta KEY=VALUE` splits at the first), so the config text
     * goes in as its hash */
    const fdt_problem *p = &row->problem;
    char layer[64] = ""; /* dwave's absorbing layer: another W or S is another kernel */
    if (p->op == FDT_OP_DWAVE)
        snprintf(layer, sizeof layer, " W%d S%.17g", p->absorb_w, p->absorb_s);
    snprintf(key, n, "%s%s %s %s R%d %s %lldx%lldx%lld%s config %016llx",
             FDT_DB_KERNEL_KEY_PREFIX, row->env.generator, row->device.backend,
             fdt_op_name(p->op), p->R, fdt_prec_name(p->prec), (long long)p->nx,
             (long long)p->ny, (long long)p->nz, layer,
             (unsigned long long)fdt_hash64_str(row->ev.config, FDT_HASH_SEED));
}

int fdt_db_kernel_hash(const fdt_db_row *row, char *hex, size_t n, fdt_err *e)
{
    fdt_config c;
    if (fdt_config_parse(row->ev.config, &c, e) ||
        fdt_gen_source_hash(&row->problem, &c, row->device.backend, hex, n, e))
        return -1;
    return 0;
}

int fdt_db_kernel_recorded(fdt_db *db, const fdt_db_row *row, char *hex, size_t n, int *found,
                           fdt_err *e)
{
    char key[512];
    fdt_db_kernel_key(row, key, sizeof key);
    *found = 0;
    hex[0] = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, "SELECT value FROM metadata WHERE key = :key", &st, e))
        return fdt_err_wrap(e, "%s: recorded kernel source", db->path);
    int rc = fdt_dbi_bind_text(st, ":key", key);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(hex, n, "%s", (const char *)sqlite3_column_text(st, 0));
        *found = 1;
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "%s: recorded kernel source", db->path);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int fdt_db_kernel_check(fdt_db *db, const fdt_db_row *row, fdt_db_kernel *k, fdt_err *e)
{
    if (row->source == FDT_DB_MODEL || !strcmp(row->env.generator, fdt_gen_fingerprint())) {
        *k = FDT_DB_KERNEL_CURRENT;
        return 0;
    }
    char recorded[40], now[40];
    int found;
    fdt_err ge;
    if (fdt_db_kernel_recorded(db, row, recorded, sizeof recorded, &found, e))
        return -1;
    if (!found)
        *k = FDT_DB_KERNEL_UNRECORDED;
    else if (fdt_db_kernel_hash(row, now, sizeof now, &ge) || strcmp(now, recorded))
        *k = FDT_DB_KERNEL_DIFFERS; /* this generator writes other code, or none */
    else
        *k = FDT_DB_KERNEL_UNCHANGED;
    return 0;
}

/* Sets a metadata key inside the caller's open transaction. */
static int meta_put_locked(fdt_db *db, const char *key, const char *value, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "INSERT INTO metadata (key, value) VALUES (:key, :value)"
                        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        &st, e))
        return -1;
    int rc = fdt_dbi_bind_text(st, ":key", key);
    if (rc == SQLITE_OK)
        rc = fdt_dbi_bind_text(st, ":value", value);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : fdt_dbi_fail(db, e, rc, "metadata %s", key);
}

static int take_row(void *ctx, const fdt_db_row *row)
{
    *(fdt_db_row *)ctx = *row;
    return 0;
}

int fdt_dbi_kernel_record(fdt_db *db, int64_t eval_id, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT " FDT_DBI_ROW_COLUMNS " FROM evaluations e" FDT_DBI_ROW_JOINS
                        " WHERE e.id = :id",
                        &st, e))
        return -1;
    if (fdt_dbi_bind_int(st, ":id", eval_id) != SQLITE_OK) {
        sqlite3_finalize(st);
        return fdt_err_set(e, "kernel source: bind");
    }
    fdt_db_row row;
    row.ev.id = 0;
    if (fdt_dbi_each_row(db, st, take_row, &row, e, "kernel source"))
        return -1;
    if (row.ev.id != eval_id || strcmp(row.env.generator, fdt_gen_fingerprint()))
        return 0; /* only the generator that measured it knows the code it measured */
    char key[512], hex[40];
    fdt_err ge;
    fdt_db_kernel_key(&row, key, sizeof key);
    if (fdt_db_kernel_hash(&row, hex, sizeof hex, &ge))
        return 0; /* a config the generator refuses has no code to record */
    return meta_put_locked(db, key, hex, e);
}

typedef struct keyset {
    char (*v)[512];
    size_t n, cap;
    int oom;
} keyset;

static int push_key(keyset *k, const char *key)
{
    char(*v)[512] = fdt_grow(k->v, &k->cap, k->n, sizeof *v, 64);
    if (!v) {
        k->oom = 1;
        return 1;
    }
    k->v = v;
    snprintf(k->v[k->n++], sizeof *k->v, "%s", key);
    return 0;
}

static int add_best_key(void *ctx, const fdt_db_row *row)
{
    char key[512];
    fdt_db_kernel_key(row, key, sizeof key);
    return push_key(ctx, key);
}

/* The kernel-source keys of the metadata that name no best (k[0]: the bests' keys; k[1]
 * gets the stale ones). */
static int stale_key(void *ctx, const char *key, const char *value)
{
    (void)value;
    keyset *k = ctx;
    if (!fdt_db_kernel_is_source_key(key))
        return 0;
    for (size_t i = 0; i < k[0].n; i++)
        if (!strcmp(k[0].v[i], key))
            return 0;
    return push_key(&k[1], key);
}

int fdt_db_kernel_prune(fdt_db *db, fdt_err *e)
{
    keyset k[2] = {{0}, {0}};
    int rc = fdt_db_best(db, NULL, add_best_key, &k[0], e) || k[0].oom ||
             fdt_db_meta(db, stale_key, k, e) || k[1].oom;
    if (k[0].oom || k[1].oom)
        fdt_err_set(e, "out of memory");
    for (size_t i = 0; !rc && i < k[1].n; i++) {
        sqlite3_stmt *st;
        if ((rc = fdt_dbi_prepare(db, "DELETE FROM metadata WHERE key = :key", &st, e)))
            break;
        int s = fdt_dbi_bind_text(st, ":key", k[1].v[i]);
        if (s == SQLITE_OK)
            s = sqlite3_step(st);
        sqlite3_finalize(st);
        if (s != SQLITE_DONE)
            rc = fdt_dbi_fail(db, e, s, "metadata %s", k[1].v[i]);
    }
    free(k[0].v);
    free(k[1].v);
    return rc ? fdt_err_wrap(e, "%s: kernel sources of results no longer held", db->path) : 0;
}

int fdt_db_kernels(fdt_db *db, fdt_db_kernel_fn fn, void *ctx, fdt_err *e)
{
    fdt_db_rows best = {0};
    int rc = fdt_db_best(db, NULL, fdt_db_collect_row, &best, e);
    if (!rc && best.oom)
        rc = fdt_err_set(e, "%s: kernel sources: out of memory", db->path);
    for (size_t i = 0; i < best.n && !rc; i++) {
        fdt_db_kernel k;
        rc = fdt_db_kernel_check(db, &best.v[i], &k, e);
        if (!rc && fn(ctx, &best.v[i], k))
            break;
    }
    free(best.v);
    return rc ? -1 : 0;
}
