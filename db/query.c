/* The questions people and the retuner ask: the best result per (device, problem) (the
 * latest recorded decision, else the smallest median), the top configs of one pair, the
 * fastest result of one run, the newest run of a pair, and the history of one config across
 * runs. Optional filters are written into constant SQL as "(:x IS NULL OR ...)" and bound,
 * so no query text is ever built from values. The ranking here is the one of the
 * best_evaluations view. */
#include "db_internal.h"

#include <math.h>
#include <string.h>

void fdt_db_filter_init(fdt_db_filter *f) { memset(f, 0, sizeof *f); }

/* A set is bound as the text ",a,b,c," and matched with instr() against ',' || value || ','. */
#define FILTER                                                                                \
    "(:gpu IS NULL OR instr(lower(d.name), lower(:gpu)) > 0"                                 \
    "  OR instr(lower(d.arch), lower(:gpu)) > 0)"                                             \
    " AND (:ops IS NULL OR instr(:ops, ',' || p.op || ',') > 0)"                              \
    " AND (:Rs IS NULL OR instr(:Rs, ',' || p.radius || ',') > 0)"                            \
    " AND (:precs IS NULL OR instr(:precs, ',' || p.precision || ',') > 0)"                   \
    " AND (:grids IS NULL OR instr(:grids, ',' || p.nx || 'x' || p.ny || 'x' || p.nz || ',') > 0)" \
    " AND (:W IS NULL OR p.op <> 'dwave' OR (p.absorb_width = :W AND p.absorb_strength = :S))" \
    " AND (:device IS NULL OR e.device_id = :device) AND (:env IS NULL OR e.env_id = :env)"   \
    " AND (:generator IS NULL OR v.generator = :generator)"

static int bind_opt(sqlite3_stmt *st, const char *name, int64_t v, int set)
{
    return set ? fdt_dbi_bind_int(st, name, v) : fdt_dbi_bind_null(st, name);
}

/* The sets of a filter as bound text: ",lap,d2z,", ",2,4,", ",f32,", ",512x512x512,"; ""
 * (any) for an empty set. which: 0 operators, 1 radii, 2 precisions, 3 grids. */
static void set_text(const fdt_db_filter *f, int which, fdt_sb *b)
{
    unsigned bits = which == 0 ? f->ops : which == 1 ? f->Rs : which == 2 ? f->precs : 0;
    int n = which == 0 ? FDT_OP_COUNT : which == 2 ? FDT_F64 + 1 : 32;
    for (int i = 0; i < n; i++)
        if (bits & (1u << i)) {
            if (which == 1)
                fdt_sb_printf(b, ",%d", i);
            else
                fdt_sb_printf(b, ",%s", which ? fdt_prec_name((fdt_prec)i)
                                              : fdt_op_name((fdt_op)i));
        }
    for (int i = 0; which == 3 && f->grids && i < f->ngrids; i++)
        fdt_sb_printf(b, ",%lldx%lldx%lld", (long long)f->grids[i][0],
                      (long long)f->grids[i][1], (long long)f->grids[i][2]);
    if (b->len)
        fdt_sb_puts(b, ",");
}

static int bind_filter(sqlite3_stmt *st, const fdt_db_filter *f)
{
    fdt_db_filter none;
    if (!f) {
        fdt_db_filter_init(&none);
        f = &none;
    }
    static const char *const sets[] = {":ops", ":Rs", ":precs", ":grids"};
    int rc = fdt_dbi_bind_text(st, ":gpu", f->gpu && *f->gpu ? f->gpu : NULL);
    for (int k = 0; k < 4 && rc == SQLITE_OK; k++) {
        fdt_sb b;
        fdt_sb_init(&b);
        set_text(f, k, &b);
        rc = b.oom ? SQLITE_NOMEM : fdt_dbi_bind_text(st, sets[k], b.len ? b.s : NULL);
        fdt_sb_free(&b);
    }
    if (rc == SQLITE_OK) rc = bind_opt(st, ":W", f->absorb_w, f->absorb_w > 0);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":S", f->absorb_w > 0 ? f->absorb_s : NAN);
    if (rc == SQLITE_OK) rc = bind_opt(st, ":device", f->device_id, f->device_id > 0);
    if (rc == SQLITE_OK) rc = bind_opt(st, ":env", f->env_id, f->env_id > 0);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":generator", f->generator);
    return rc;
}

static const char best_sql[] = FDT_DBI_BEST_SQL(
    FILTER, "ORDER BY d.name, d.id, p.op, p.radius, p.precision, p.nx, p.ny, p.nz,"
    " p.absorb_width, p.absorb_strength");

int fdt_db_best(fdt_db *db, const fdt_db_filter *f, fdt_db_row_fn fn, void *ctx, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db, best_sql, &st, e))
        return fdt_err_wrap(e, "best");
    int rc = bind_filter(st, f);
    if (rc != SQLITE_OK) {
        fdt_dbi_fail(db, e, rc, "best");
        sqlite3_finalize(st);
        return -1;
    }
    return fdt_dbi_each_row(db, st, fn, ctx, e, "best");
}

int fdt_db_top(fdt_db *db, int64_t device_id, int64_t problem_id, int64_t env_id, int n,
               fdt_db_row_fn fn, void *ctx, fdt_err *e)
{
    /* The decided best first (when its evaluation is in the asked environment), then one row
     * per other config (its fastest evaluation), so a config measured in many runs does not
     * crowd the others out of the top n. */
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "WITH decided AS (SELECT e.id, e.config_id FROM evaluations e"
                        "  WHERE e.id = (SELECT b.eval_id FROM best_decisions b"
                        "   WHERE b.device_id = :device AND b.problem_id = :problem"
                        "   ORDER BY b.id DESC LIMIT 1)"
                        "  AND e.status = 'ok' AND e.stage = 'full'"
                        "  AND (:env IS NULL OR e.env_id = :env)),"
                        " per_config AS (SELECT e.id, ROW_NUMBER() OVER (PARTITION BY"
                        "  e.config_id ORDER BY e.time_ms, e.id) AS rn FROM evaluations e"
                        "  WHERE e.device_id = :device AND e.problem_id = :problem"
                        "  AND e.status = 'ok' AND e.stage = 'full'"
                        "  AND (:env IS NULL OR e.env_id = :env)"
                        "  AND e.config_id NOT IN (SELECT config_id FROM decided)),"
                        " picked AS (SELECT id, 0 AS grp FROM decided"
                        "  UNION ALL SELECT id, 1 FROM per_config WHERE rn = 1)"
                        " SELECT " FDT_DBI_ROW_COLUMNS " FROM picked k"
                        " JOIN evaluations e ON e.id = k.id" FDT_DBI_ROW_JOINS
                        " ORDER BY k.grp, e.time_ms, c.key, e.id LIMIT :n",
                        &st, e))
        return fdt_err_wrap(e, "top");
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", problem_id);
    if (rc == SQLITE_OK) rc = bind_opt(st, ":env", env_id, env_id > 0);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":n", n > 0 ? n : -1);
    if (rc != SQLITE_OK) {
        fdt_dbi_fail(db, e, rc, "top");
        sqlite3_finalize(st);
        return -1;
    }
    return fdt_dbi_each_row(db, st, fn, ctx, e, "top");
}

typedef struct one_row {
    fdt_db_row *row;
    int *found;
} one_row;

static int take_one(void *ctx, const fdt_db_row *row)
{
    one_row *o = ctx;
    *o->row = *row;
    *o->found = 1;
    return 1;
}

int fdt_db_run_best(fdt_db *db, int64_t run_id, int64_t problem_id, fdt_db_row *row,
                    int *found, fdt_err *e)
{
    *found = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT " FDT_DBI_ROW_COLUMNS " FROM evaluations e" FDT_DBI_ROW_JOINS
                        " WHERE e.run_id = :run AND e.problem_id = :problem"
                        " AND e.status = 'ok' AND e.stage = 'full'"
                        " ORDER BY e.time_ms, c.key, e.id LIMIT 1",
                        &st, e))
        return fdt_err_wrap(e, "run %lld: best", (long long)run_id);
    int rc = fdt_dbi_bind_int(st, ":run", run_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", problem_id);
    if (rc != SQLITE_OK) {
        fdt_dbi_fail(db, e, rc, "run %lld: best", (long long)run_id);
        sqlite3_finalize(st);
        return -1;
    }
    one_row o = {row, found};
    return fdt_dbi_each_row(db, st, take_one, &o, e, "run best");
}

int fdt_db_last_run(fdt_db *db, int64_t device_id, int64_t problem_id, char *started,
                    size_t n, fdt_err *e)
{
    if (n)
        started[0] = 0;
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT max(r.started) FROM evaluations e JOIN runs r ON r.id = e.run_id"
                        " WHERE e.device_id = :device AND e.problem_id = :problem",
                        &st, e))
        return fdt_err_wrap(e, "last run");
    int rc = fdt_dbi_bind_int(st, ":device", device_id);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":problem", problem_id);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        fdt_dbi_copy(started, n, st, 0);
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_DONE)
        fdt_dbi_fail(db, e, rc, "last run");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int fdt_db_history(fdt_db *db, const fdt_problem *p, const char *config, int64_t device_id,
                   fdt_db_row_fn fn, void *ctx, fdt_err *e)
{
    sqlite3_stmt *st;
    if (fdt_dbi_prepare(db,
                        "SELECT " FDT_DBI_ROW_COLUMNS " FROM evaluations e" FDT_DBI_ROW_JOINS
                        " WHERE c.key = :config AND p.op = :op AND p.radius = :R"
                        " AND p.precision = :prec AND p.nx = :nx AND p.ny = :ny AND p.nz = :nz"
                        " AND p.absorb_width = :W AND p.absorb_strength = :S"
                        " AND (:device IS NULL OR e.device_id = :device)"
                        " ORDER BY e.created, e.id",
                        &st, e))
        return fdt_err_wrap(e, "history");
    int rc = fdt_dbi_bind_text(st, ":config", config);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":op", fdt_op_name(p->op));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":R", p->R);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_text(st, ":prec", fdt_prec_name(p->prec));
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":nx", p->nx);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":ny", p->ny);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":nz", p->nz);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_int(st, ":W", p->absorb_w);
    if (rc == SQLITE_OK) rc = fdt_dbi_bind_real(st, ":S", p->absorb_s);
    if (rc == SQLITE_OK) rc = bind_opt(st, ":device", device_id, device_id > 0);
    if (rc != SQLITE_OK) {
        fdt_dbi_fail(db, e, rc, "history");
        sqlite3_finalize(st);
        return -1;
    }
    return fdt_dbi_each_row(db, st, fn, ctx, e, "history");
}
