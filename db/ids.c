/* The keys evaluations refer to: devices, software environments, problems and configs,
 * each found or created by its full identity (a lookup first, so the common case takes no
 * write lock; then insert-or-ignore and lookup again under the lock, so concurrent tuners
 * agree on one id). */
#include "db_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ get-or-create */

typedef int (*bind_fn)(sqlite3_stmt *st, const void *arg);

/* Runs a lookup whose single column is an id: *id = 0 when there is no row. */
static int lookup(fdt_db *db, const char *sql, bind_fn bind, const void *arg, int64_t *id,
                  fdt_err *e)
{
    sqlite3_stmt *st;
    *id = 0;
    if (fdt_dbi_prepare(db, sql, &st, e))
        return -1;
    int rc = bind(st, arg);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *id = sqlite3_column_int64(st, 0);
            rc = SQLITE_DONE;
        }
    }
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "look up");
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

static int insert(fdt_db *db, const char *sql, bind_fn bind, const void *arg, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, sql, &st, e))
        return -1;
    int rc = bind(st, arg);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc != SQLITE_DONE) {
        fdt_dbi_fail(db, e, rc, "insert");
        sqlite3_finalize(st);
        return -1;
    }
    sqlite3_finalize(st);
    return 0;
}

/* insert_sql must ignore a conflict on the identity that select_sql looks up. */
static int get_or_create(fdt_db *db, const char *select_sql, bind_fn bind_key,
                         const char *insert_sql, bind_fn bind_all, const void *arg,
                         int64_t *id, fdt_err *e)
{
    if (lookup(db, select_sql, bind_key, arg, id, e))
        return -1;
    if (*id)
        return 0;
    if (fdt_dbi_begin(db, e))
        return -1;
    if (insert(db, insert_sql, bind_all, arg, e) ||
        lookup(db, select_sql, bind_key, arg, id, e)) {
        fdt_dbi_rollback(db);
        return -1;
    }
    if (fdt_dbi_commit(db, e))
        return -1;
    if (!*id)
        return fdt_err_set(e, "internal error: inserted row not found");
    return 0;
}

/* --- devices */

static int bind_device_key(sqlite3_stmt *st, const void *arg)
{
    const fdt_device *d = arg;
    int rc = fdt_dbi_bind_text(st, ":backend", d->backend);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":vendor", d->vendor);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":name", d->name);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":arch", d->arch);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":cu", d->compute_units);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":mem", d->mem_bytes);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":uuid", d->uuid);
    return rc;
}

static const char device_select[] =
    "SELECT id FROM devices WHERE backend = :backend AND vendor = :vendor AND name = :name"
    " AND arch = :arch AND compute_units = :cu AND mem_bytes = :mem AND uuid = :uuid";

static int bind_device_all(sqlite3_stmt *st, const void *arg)
{
    const fdt_device *d = arg;
    int rc = bind_device_key(st, arg);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":warp", d->warp_size);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":l2", d->l2_bytes);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":pci", d->pci);
    return rc;
}

int fdt_db_device_id(fdt_db *db, const fdt_device *d, int64_t *id, fdt_err *e)
{
    if (!d->backend[0] || !d->name[0] || !d->arch[0] || d->compute_units <= 0)
        return fdt_err_set(e, "device: incomplete identity (backend '%s', name '%s', arch '%s', "
                           "%d compute units)", d->backend, d->name, d->arch, d->compute_units);
    if (get_or_create(db, device_select, bind_device_key,
                      "INSERT INTO devices (backend, vendor, name, arch, compute_units,"
                      " warp_size, l2_bytes, mem_bytes, uuid, pci) VALUES (:backend, :vendor,"
                      " :name, :arch, :cu, :warp, :l2, :mem, :uuid, :pci) ON CONFLICT DO NOTHING",
                      bind_device_all, d, id, e))
        return fdt_err_wrap(e, "device %s (%s)", d->name, d->arch);
    return 0;
}

int fdt_db_device_find(fdt_db *db, const fdt_device *d, int64_t *id, fdt_err *e)
{
    if (lookup(db, device_select, bind_device_key, d, id, e))
        return fdt_err_wrap(e, "device %s (%s)", d->name, d->arch);
    return 0;
}

#define DEVICE_SELECT                                                                     \
    "SELECT id, backend, vendor, name, arch, compute_units, warp_size, l2_bytes, mem_bytes," \
    " uuid, pci FROM devices "

/* A device row (DEVICE_SELECT); one outside the bounds (bounds.c) is refused. */
static int read_device(sqlite3_stmt *st, fdt_device *d, fdt_err *e)
{
    fdt_device_init(d);
    d->id = sqlite3_column_int64(st, 0);
    return fdt_dbi_read_device(st, 1, d, e);
}

int fdt_db_device_get(fdt_db *db, int64_t id, fdt_device *d, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, DEVICE_SELECT "WHERE id = :id", &st, e))
        return fdt_err_wrap(e, "device %lld", (long long)id);
    int rc = fdt_dbi_bind_int(st, ":id", id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    int bad = 0;
    if (rc == SQLITE_ROW)
        bad = read_device(st, d, e);
    else if (rc == SQLITE_DONE)
        fdt_err_set(e, "device %lld: no such device", (long long)id);
    else
        fdt_dbi_fail(db, e, rc, "device %lld", (long long)id);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW && !bad ? 0 : -1;
}

int fdt_db_devices(fdt_db *db, const char *gpu, fdt_db_device_fn fn, void *ctx, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        DEVICE_SELECT "WHERE :gpu IS NULL OR instr(lower(name), lower(:gpu)) > 0"
                                      " OR instr(lower(arch), lower(:gpu)) > 0 ORDER BY id",
                        &st, e))
        return fdt_err_wrap(e, "list devices");
    int rc = fdt_dbi_bind_text(st, ":gpu", gpu);
    fdt_device d;
    if (rc == SQLITE_OK)
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (read_device(st, &d, e)) {
                sqlite3_finalize(st);
                return fdt_err_wrap(e, "%s: list devices", db->path);
            }
            if (fn(ctx, &d)) {
                rc = SQLITE_DONE;
                break;
            }
        }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "list devices");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* --- environments */

void fdt_db_env_from_device(const fdt_device *info, const char *fdtune_version, fdt_db_env *v)
{
    memset(v, 0, sizeof *v);
    snprintf(v->driver, sizeof v->driver, "%s", info->driver_version);
    snprintf(v->runtime, sizeof v->runtime, "%s", info->runtime_version);
    snprintf(v->compiler, sizeof v->compiler, "%s", info->compiler_version);
    snprintf(v->fdtune_version, sizeof v->fdtune_version, "%s",
             fdtune_version ? fdtune_version : "");
    snprintf(v->generator, sizeof v->generator, "%s", fdt_gen_fingerprint());
}

static int bind_env(sqlite3_stmt *st, const void *arg)
{
    const fdt_db_env *v = arg;
    int rc = fdt_dbi_bind_text(st, ":driver", v->driver);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":runtime", v->runtime);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":compiler", v->compiler);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":fdtune", v->fdtune_version);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":generator", v->generator);
    return rc;
}

int fdt_db_env_id(fdt_db *db, const fdt_db_env *v, int64_t *id, fdt_err *e)
{
    /* Without these two a result could not be told apart from one of other code. */
    if (!v->fdtune_version[0] || !v->generator[0])
        return fdt_err_set(e, "environment: fdtune version and generator fingerprint required");
    if (get_or_create(db,
                      "SELECT id FROM environments WHERE driver = :driver AND runtime = :runtime"
                      " AND compiler = :compiler AND fdtune_version = :fdtune"
                      " AND generator = :generator",
                      bind_env,
                      "INSERT INTO environments (driver, runtime, compiler, fdtune_version,"
                      " generator) VALUES (:driver, :runtime, :compiler, :fdtune, :generator)"
                      " ON CONFLICT DO NOTHING",
                      bind_env, v, id, e))
        return fdt_err_wrap(e, "environment");
    return 0;
}

int fdt_db_env_get(fdt_db *db, int64_t id, fdt_db_env *v, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT id, driver, runtime, compiler, fdtune_version, generator"
                        " FROM environments WHERE id = :id",
                        &st, e))
        return fdt_err_wrap(e, "environment %lld", (long long)id);
    int rc = fdt_dbi_bind_int(st, ":id", id);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        memset(v, 0, sizeof *v);
        v->id = sqlite3_column_int64(st, 0);
        fdt_dbi_copy(v->driver, sizeof v->driver, st, 1);
        fdt_dbi_copy(v->runtime, sizeof v->runtime, st, 2);
        fdt_dbi_copy(v->compiler, sizeof v->compiler, st, 3);
        fdt_dbi_copy(v->fdtune_version, sizeof v->fdtune_version, st, 4);
        fdt_dbi_copy(v->generator, sizeof v->generator, st, 5);
    } else if (rc == SQLITE_DONE) {
        fdt_err_set(e, "environment %lld: no such environment", (long long)id);
    } else {
        fdt_dbi_fail(db, e, rc, "environment %lld", (long long)id);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

/* --- problems */

static int bind_problem(sqlite3_stmt *st, const void *arg)
{
    const fdt_problem *p = arg;
    int rc = fdt_dbi_bind_text(st, ":op", fdt_op_name(p->op));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":R", p->R);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":prec", fdt_prec_name(p->prec));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":nx", p->nx);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":ny", p->ny);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":nz", p->nz);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":W", p->absorb_w);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":S", p->absorb_s);
    return rc;
}

static const char problem_select[] =
    "SELECT id FROM problems WHERE op = :op AND radius = :R AND precision = :prec"
    " AND nx = :nx AND ny = :ny AND nz = :nz AND absorb_width = :W AND absorb_strength = :S";

static int check_problem(const fdt_problem *p, fdt_err *e)
{
    if ((unsigned)p->op >= FDT_OP_COUNT || (p->prec != FDT_F32 && p->prec != FDT_F64))
        return fdt_err_set(e, "problem: unknown operator or precision");
    if (fdt_problem_check(p, e))
        return -1;
    return 0;
}

int fdt_db_problem_id(fdt_db *db, const fdt_problem *p, int64_t *id, fdt_err *e)
{
    char name[128];
    if (check_problem(p, e))
        return fdt_err_wrap(e, "problem");
    fdt_problem_format(p, name, sizeof name);
    if (get_or_create(db, problem_select, bind_problem,
                      "INSERT INTO problems (op, radius, precision, nx, ny, nz, absorb_width,"
                      " absorb_strength) VALUES (:op, :R, :prec, :nx, :ny, :nz, :W, :S)"
                      " ON CONFLICT DO NOTHING",
                      bind_problem, p, id, e))
        return fdt_err_wrap(e, "problem %s", name);
    return 0;
}

int fdt_db_problem_find(fdt_db *db, const fdt_problem *p, int64_t *id, fdt_err *e)
{
    *id = 0;
    if (check_problem(p, e))
        return fdt_err_wrap(e, "problem");
    if (lookup(db, problem_select, bind_problem, p, id, e))
        return fdt_err_wrap(e, "problem");
    return 0;
}

/* --- configs */

int fdt_dbi_check_config_key(const char *key, fdt_err *e)
{
    fdt_config c;
    char canon[256];
    if (!key || !*key)
        return fdt_err_set(e, "config: empty key");
    if (strlen(key) >= sizeof canon)
        return fdt_err_set(e, "config '%.40s...': key too long", key);
    if (fdt_config_parse(key, &c, e))
        return fdt_err_wrap(e, "config '%s'", key);
    fdt_config_format(&c, canon, sizeof canon);
    /* Two spellings of one config would split its history in two. */
    if (strcmp(canon, key) != 0)
        return fdt_err_set(e, "config '%s': not canonical (canonical form '%s')", key, canon);
    return 0;
}

static int bind_config(sqlite3_stmt *st, const void *arg)
{
    return fdt_dbi_bind_text(st, ":key", arg);
}

static const char config_select[] = "SELECT id FROM configs WHERE key = :key";
static const char config_insert[] =
    "INSERT INTO configs (key) VALUES (:key) ON CONFLICT DO NOTHING";

int fdt_dbi_config_id_locked(fdt_db *db, const char *key, int64_t *id, fdt_err *e)
{
    if (lookup(db, config_select, bind_config, key, id, e))
        return -1;
    if (*id)
        return 0;
    if (insert(db, config_insert, bind_config, key, e) ||
        lookup(db, config_select, bind_config, key, id, e))
        return -1;
    return *id ? 0 : fdt_err_set(e, "internal error: inserted config not found");
}

int fdt_db_config_id(fdt_db *db, const char *key, int64_t *id, fdt_err *e)
{
    if (fdt_dbi_check_config_key(key, e))
        return -1;
    if (get_or_create(db, config_select, bind_config, config_insert, bind_config, key, id, e))
        return fdt_err_wrap(e, "config '%s'", key);
    return 0;
}
