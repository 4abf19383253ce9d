/* The names of the database's enumerations (evaluation status, stage, run status and kind, the
 * nearest-result rung, the source of a row) as stored in its text columns, and their parsers. A
 * leaf of the module: the SQL helpers read rows through it, the writers store through it. */
#include "db_internal.h"

#include <string.h>

static const char *const status_names[FDT_DB_STATUS_COUNT] = {
    "ok", "wrong", "compile_error", "pruned", "launch_error", "crashed", "timeout"};
static const char *const stage_names[] = {"probe", "full"};
static const char *const run_status_names[] = {"running", "done", "interrupted", "failed"};
static const char *const kind_names[] = {"tune", "retune", "bench"};
static const char *const fallback_names[] = {"exact", "grid", "arch", "model", "none"};
static const char *const source_names[] = {"user", "system", "model"};
#define COUNT(a) ((int)(sizeof a / sizeof a[0]))

static int parse_name(const char *s, const char *const *names, int n, const char *what,
                      int *out, fdt_err *e)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) {
            *out = i;
            return 0;
        }
    fdt_sb list;
    fdt_sb_init(&list);
    for (int i = 0; i < n; i++)
        fdt_sb_printf(&list, "%s%s", i ? ", " : "", names[i]);
    fdt_err_set(e, "unknown %s '%s' (expected %s)", what, s, fdt_sb_str(&list));
    fdt_sb_free(&list);
    return -1;
}

const char *fdt_db_status_name(fdt_db_status s)
{
    return (unsigned)s < FDT_DB_STATUS_COUNT ? status_names[s] : "?";
}

int fdt_db_status_parse(const char *s, fdt_db_status *out, fdt_err *e)
{
    int v;
    if (parse_name(s, status_names, COUNT(status_names), "evaluation status", &v, e))
        return -1;
    *out = (fdt_db_status)v;
    return 0;
}

const char *fdt_db_stage_name(fdt_db_stage s)
{
    return (unsigned)s < (unsigned)COUNT(stage_names) ? stage_names[s] : "?";
}

int fdt_db_stage_parse(const char *s, fdt_db_stage *out, fdt_err *e)
{
    int v;
    if (parse_name(s, stage_names, COUNT(stage_names), "stage", &v, e))
        return -1;
    *out = (fdt_db_stage)v;
    return 0;
}

const char *fdt_db_run_status_name(fdt_db_run_status s)
{
    return (unsigned)s < (unsigned)COUNT(run_status_names) ? run_status_names[s] : "?";
}

const char *fdt_db_run_kind_name(fdt_db_run_kind k)
{
    return (unsigned)k < (unsigned)COUNT(kind_names) ? kind_names[k] : "?";
}

int fdt_db_run_kind_parse(const char *s, fdt_db_run_kind *out, fdt_err *e)
{
    int v;
    if (parse_name(s, kind_names, COUNT(kind_names), "run kind", &v, e))
        return -1;
    *out = (fdt_db_run_kind)v;
    return 0;
}

const char *fdt_db_fallback_name(fdt_db_fallback f)
{
    return (unsigned)f < (unsigned)COUNT(fallback_names) ? fallback_names[f] : "?";
}


const char *fdt_db_source_name(fdt_db_source s)
{
    return (unsigned)s < (unsigned)COUNT(source_names) ? source_names[s] : "?";
}
