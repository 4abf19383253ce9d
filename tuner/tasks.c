/* Plans of tasks (fdt_tasks.h): a request written as one JSON line per problem, and one line
 * read back into a task. Lines are written by the emitter (common/fdt_emit.h) and read by
 * SQLite's JSON functions on an in-memory connection, so a malformed line is caught by a
 * real JSON parser and no other one is carried. */
#include "fdt_tasks.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt_emit.h"

/* One task as a JSON line. */
static void task_line(fdt_emit *m, const fdt_tune_request *rq, const char *recipe,
                      const fdt_problem *p, int index, int count)
{
    fdt_emit_object(m, NULL);
    fdt_emit_int(m, "schema", FDT_TASKS_SCHEMA);
    fdt_emit_int(m, "task", index);
    fdt_emit_int(m, "tasks", count);
    fdt_problem_emit(m, p);
    if (rq->have_strategy)
        fdt_emit_str(m, "strategy", fdt_search_kind_name(rq->strategy));
    else
        fdt_emit_null(m, "strategy");
    fdt_emit_int(m, "budget", rq->budget);
    fdt_emit_real(m, "time_s", rq->time_s);
    fdt_emit_int(m, "seed", (long long)rq->seed);
    fdt_emit_str_opt(m, "recipe", recipe ? recipe : "");
    fdt_emit_end(m);
}

int fdt_tasks_write(const char *path, const fdt_tune_request *rq, const char *recipe,
                    int *ntasks, fdt_err *e)
{
    *ntasks = 0;
    fdt_problem *ps = NULL;
    int n = 0;
    if (fdt_tune_problems(rq, &ps, &n, e))
        return -1;
    if (n == 0) {
        free(ps);
        return fdt_err_set(e, "plan: no problem to tune (no operator)");
    }
    char abs[PATH_MAX];
    if (recipe && !realpath(recipe, abs)) {
        free(ps);
        return fdt_err_set(e, "plan: recipe %s: not found", recipe) - 1;
    }
    fdt_sb out;
    fdt_sb_init(&out);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        fdt_emit m;
        fdt_emit_init(&m, FDT_EMIT_JSON, &out);
        task_line(&m, rq, recipe ? abs : NULL, &ps[i], i, n);
        rc = fdt_emit_finish(&m, e); /* appends the line and its newline */
    }
    free(ps);
    if (rc == 0 && out.oom)
        rc = fdt_err_set(e, "plan: out of memory");
    if (rc == 0 && fdt_write_file_atomic(path, out.s, out.len, e))
        rc = fdt_err_wrap(e, "plan");
    fdt_sb_free(&out);
    if (rc == 0)
        *ntasks = n;
    return rc;
}

/* ------------------------------------------------------------------ reading */

/* The members of a task line, in the order of the query's columns. */
static const char *const keys[] = {"schema", "task", "tasks", "op", "R", "precision", "nx",
                                   "ny", "nz", "strategy", "budget", "time_s", "seed", "recipe",
                                   "absorb_width", "absorb_strength"};
enum { K_SCHEMA, K_TASK, K_TASKS, K_OP, K_R, K_PREC, K_NX, K_NY, K_NZ, K_STRATEGY, K_BUDGET,
       K_TIME, K_SEED, K_RECIPE, K_ABSORB_W, K_ABSORB_S, K_COUNT };
/* Optional members (null or absent is fine; the absorbing layer is dwave's, whose problem
 * check asks for it). */
#define OPTIONAL                                                                               \
    ((1u << K_STRATEGY) | (1u << K_RECIPE) | (1u << K_ABSORB_W) | (1u << K_ABSORB_S))

static const char is_object[] =
    "SELECT CASE WHEN json_valid(?1) THEN json_type(?1) = 'object' ELSE 0 END";
static const char query[] =
    "SELECT 1,"
    " json_extract(?1, '$.schema'), json_extract(?1, '$.task'), json_extract(?1, '$.tasks'),"
    " json_extract(?1, '$.op'), json_extract(?1, '$.R'), json_extract(?1, '$.precision'),"
    " json_extract(?1, '$.nx'), json_extract(?1, '$.ny'), json_extract(?1, '$.nz'),"
    " json_extract(?1, '$.strategy'), json_extract(?1, '$.budget'),"
    " json_extract(?1, '$.time_s'), json_extract(?1, '$.seed'), json_extract(?1, '$.recipe'),"
    " json_extract(?1, '$.absorb_width'), json_extract(?1, '$.absorb_strength')";

/* Column k of the query as an integer member (INTEGER type required). */
static int member_int(sqlite3_stmt *st, int k, int64_t *v, fdt_err *e)
{
    if (sqlite3_column_type(st, k + 1) != SQLITE_INTEGER)
        return fdt_err_set(e, "\"%s\" must be an integer", keys[k]);
    *v = sqlite3_column_int64(st, k + 1);
    return 0;
}

static int member_text(sqlite3_stmt *st, int k, const char **v, fdt_err *e)
{
    if (sqlite3_column_type(st, k + 1) != SQLITE_TEXT)
        return fdt_err_set(e, "\"%s\" must be a string", keys[k]);
    *v = (const char *)sqlite3_column_text(st, k + 1);
    return 0;
}

/* The absorbing layer's members, when present, into p (checked with the problem). */
static int take_layer(sqlite3_stmt *st, fdt_problem *p, fdt_err *e)
{
    int64_t w = 0;
    if (sqlite3_column_type(st, K_ABSORB_W + 1) != SQLITE_NULL) {
        if (member_int(st, K_ABSORB_W, &w, e))
            return -1;
        if (w < 0 || w > FDT_DIM_MAX)
            return fdt_err_set(e, "\"absorb_width\" %lld: out of range", (long long)w);
        p->absorb_w = (int)w;
    }
    int tt = sqlite3_column_type(st, K_ABSORB_S + 1);
    if (tt == SQLITE_NULL)
        return 0;
    if (tt != SQLITE_INTEGER && tt != SQLITE_FLOAT)
        return fdt_err_set(e, "\"absorb_strength\" must be a number");
    p->absorb_s = sqlite3_column_double(st, K_ABSORB_S + 1);
    return 0;
}

/* The members of a parsed line into t (index and count checked by the caller). */
static int take_members(sqlite3_stmt *st, fdt_task *t, fdt_err *e)
{
    int64_t schema = 0, index = 0, count = 0, R = 0, budget = 0, seed = 0;
    const char *op = "", *prec = "", *strategy = "", *recipe = "";
    if (sqlite3_column_type(st, K_SCHEMA + 1) == SQLITE_NULL)
        return fdt_err_set(e, "not a task: no \"schema\"");
    if (member_int(st, K_SCHEMA, &schema, e))
        return -1;
    if (schema != FDT_TASKS_SCHEMA)
        return fdt_err_set(e, "schema %lld: this fdtune reads plans of schema %d",
                           (long long)schema, FDT_TASKS_SCHEMA);
    for (int k = 0; k < K_COUNT; k++)
        if (sqlite3_column_type(st, k + 1) == SQLITE_NULL && !(OPTIONAL & (1u << k)))
            return fdt_err_set(e, "\"%s\" is missing", keys[k]);
    if (member_int(st, K_TASK, &index, e) || member_int(st, K_TASKS, &count, e) ||
        member_text(st, K_OP, &op, e) || member_int(st, K_R, &R, e) ||
        member_text(st, K_PREC, &prec, e) || member_int(st, K_NX, &t->p.nx, e) ||
        member_int(st, K_NY, &t->p.ny, e) || member_int(st, K_NZ, &t->p.nz, e) ||
        member_int(st, K_BUDGET, &budget, e) || member_int(st, K_SEED, &seed, e))
        return -1;
    int tt = sqlite3_column_type(st, K_TIME + 1);
    if (tt != SQLITE_INTEGER && tt != SQLITE_FLOAT)
        return fdt_err_set(e, "\"time_s\" must be a number");
    t->time_s = sqlite3_column_double(st, K_TIME + 1);
    t->index = (int)index;
    t->count = (int)count;
    t->p.R = (int)R;
    if (take_layer(st, &t->p, e))
        return -1;
    if (fdt_op_parse(op, &t->p.op, e) || fdt_prec_parse(prec, &t->p.prec, e) ||
        fdt_problem_check(&t->p, e))
        return -1;
    if (budget < 0 || budget > 100000000 || seed < 0 || !(t->time_s >= 0) ||
        index < 0 || count < 1 || index >= count || count > 1000000)
        return fdt_err_set(e, "task %lld of %lld, budget %lld, seed %lld, time_s %g: out of "
                           "range", (long long)index, (long long)count, (long long)budget,
                           (long long)seed, t->time_s);
    t->budget = (int)budget;
    t->seed = (uint64_t)seed;
    if (sqlite3_column_type(st, K_STRATEGY + 1) != SQLITE_NULL) {
        if (member_text(st, K_STRATEGY, &strategy, e) ||
            fdt_search_kind_parse(strategy, &t->strategy, e))
            return -1;
        t->have_strategy = 1;
    }
    if (sqlite3_column_type(st, K_RECIPE + 1) != SQLITE_NULL) {
        if (member_text(st, K_RECIPE, &recipe, e))
            return -1;
        snprintf(t->recipe, sizeof t->recipe, "%s", recipe);
    }
    return 0;
}

/* Runs sql (one row) on line; the row is in *st. */
static int step_on(sqlite3 *h, const char *sql, const char *line, size_t len, sqlite3_stmt **st,
                   fdt_err *e)
{
    if (sqlite3_prepare_v2(h, sql, -1, st, NULL) != SQLITE_OK)
        return fdt_err_set(e, "JSON: %s", sqlite3_errmsg(h));
    sqlite3_bind_text(*st, 1, line, (int)len, SQLITE_STATIC);
    if (sqlite3_step(*st) != SQLITE_ROW)
        return fdt_err_set(e, "JSON: %s", sqlite3_errmsg(h));
    return 0;
}

/* Parses one line into t: a JSON object first (the members are read only then). */
static int parse_line(sqlite3 *h, const char *line, size_t len, fdt_task *t, fdt_err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = step_on(h, is_object, line, len, &st, e);
    if (rc == 0 && !sqlite3_column_int(st, 0))
        rc = fdt_err_set(e, "not a JSON object");
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && (rc = step_on(h, query, line, len, &st, e)) == 0)
        rc = take_members(st, t, e);
    sqlite3_finalize(st);
    return rc;
}

int fdt_task_read(const char *path, int index, fdt_task *t, fdt_err *e)
{
    memset(t, 0, sizeof *t);
    char *text = NULL;
    size_t len = 0;
    if (fdt_read_file(path, &text, &len, e))
        return fdt_err_wrap(e, "tasks");
    /* the lines of the plan: one task each (a final newline ends the last) */
    int nlines = 0;
    const char *line = NULL;
    size_t line_len = 0;
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        size_t l = nl ? (size_t)(nl - s) : strlen(s);
        if (nlines == index) {
            line = s;
            line_len = l;
        }
        nlines++;
        s += l + (nl ? 1 : 0);
    }
    int rc = 0;
    if (nlines == 0)
        rc = fdt_err_set(e, "tasks %s: no task in the file", path);
    else if (index < 0 || index >= nlines)
        rc = fdt_err_set(e, "tasks %s: task %d of %d: the plan has tasks 0..%d", path, index,
                         nlines, nlines - 1);
    sqlite3 *h = NULL;
    if (rc == 0 && sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        rc = fdt_err_set(e, "tasks: cannot open SQLite's JSON reader");
    if (rc == 0 && parse_line(h, line, line_len, t, e))
        rc = fdt_err_wrap(e, "tasks %s:%d", path, index + 1);
    if (rc == 0 && (t->index != index || t->count != nlines))
        rc = fdt_err_set(e, "tasks %s:%d: the line says task %d of %d, the file has %d lines",
                         path, index + 1, t->index, t->count, nlines);
    sqlite3_close(h);
    free(text);
    return rc;
}

void fdt_task_request(const fdt_task *t, fdt_tune_request *rq)
{
    fdt_tune_request_init(rq);
    rq->p = t->p;
    rq->ops = 1u << t->p.op;
    rq->have_strategy = t->have_strategy;
    rq->strategy = t->strategy;
    rq->budget = t->budget;
    rq->time_s = t->time_s;
    rq->seed = t->seed;
}
