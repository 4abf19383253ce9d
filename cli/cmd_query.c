/* fdtune query: read-only questions to the tuning database. `best` gives the best config per
 * (device, problem), or with --nearest the answer fdtune would use for a problem that was never
 * tuned (fdt_exp_nearest: the database's fallback ladder, ending at fdtune's built-in default
 * config, as exported headers do); `runs` lists
 * the tuning runs, `history` one config's measurements across runs, and `show` everything one
 * run recorded. Each answer is an aligned table for people, or --json / --csv for scripts;
 * both machine forms carry the same fields, so a script can switch between them. The database
 * is opened read-only, so querying never migrates, creates or locks a file for writing. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_export.h"
#include "fdt_recipe.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ output */

typedef enum { OUT_TEXT, OUT_JSON, OUT_CSV } out_mode;
enum { C_STR, C_INT, C_NUM };
/* Where a column appears: the table is for reading, so it merges or shortens fields that the
 * machine forms keep separate and exact. */
enum { IN_ALL, IN_TEXT, IN_DATA, IN_NONE };

typedef struct column {
    const char *key;   /* JSON key and CSV header */
    const char *label; /* table header */
    int type;
    const char *fmt;   /* table format of a C_NUM */
    int in;
} column;

/* Rows go out cell by cell in column order; each output form keeps the cells it shows. Unknown
 * values (NaN reals, negative integers, empty text) read "-" in the table, an empty CSV field
 * and null in JSON (empty text stays ""). */
typedef struct emitter {
    out_mode mode;
    const column *cols;
    int ncols, col, nrows, first;
    table t;
    fdt_sb b; /* JSON: the row objects, comma-separated; CSV: header and lines */
} emitter;

static int em_active(const emitter *m, const column *c)
{
    if (c->in == IN_NONE)
        return 0;
    return m->mode == OUT_TEXT ? c->in != IN_DATA : c->in != IN_TEXT;
}

static void csv_field(fdt_sb *b, const char *s, int first)
{
    if (!first)
        fdt_sb_puts(b, ",");
    if (!strpbrk(s, ",\"\r\n")) {
        fdt_sb_puts(b, s);
        return;
    }
    fdt_sb_puts(b, "\"");
    for (; *s; s++)
        fdt_sb_putn(b, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1); /* quotes doubled */
    fdt_sb_puts(b, "\"");
}

static void em_begin(emitter *m, out_mode mode, const column *cols, int ncols)
{
    memset(m, 0, sizeof *m);
    m->mode = mode;
    m->cols = cols;
    m->ncols = ncols;
    fdt_sb_init(&m->b);
    const char *hdr[TABLE_MAXCOLS];
    int n = 0, right[TABLE_MAXCOLS];
    for (int i = 0; i < ncols; i++) {
        if (!em_active(m, &cols[i]))
            continue;
        if (mode == OUT_CSV)
            csv_field(&m->b, cols[i].key, n == 0);
        if (n < TABLE_MAXCOLS) {
            right[n] = cols[i].type != C_STR;
            hdr[n++] = cols[i].label;
        }
    }
    if (mode == OUT_CSV)
        fdt_sb_puts(&m->b, "\n");
    if (mode == OUT_TEXT) {
        table_init(&m->t, n, hdr);
        for (int i = 0; i < n; i++)
            m->t.right[i] = right[i];
    }
}

static void em_row(emitter *m)
{
    m->col = 0;
    m->first = 1;
    if (m->mode == OUT_JSON)
        fdt_sb_puts(&m->b, m->nrows ? ", {" : "{");
    m->nrows++;
}

static void em_row_end(emitter *m)
{
    if (m->mode == OUT_JSON)
        fdt_sb_puts(&m->b, "}");
    else if (m->mode == OUT_CSV)
        fdt_sb_puts(&m->b, "\n");
}

/* The column the next cell belongs to, or NULL when this form does not show it. */
static const column *em_next(emitter *m)
{
    if (m->col >= m->ncols)
        return NULL;
    const column *c = &m->cols[m->col++];
    if (!em_active(m, c))
        return NULL;
    if (m->mode == OUT_JSON && !m->first)
        fdt_sb_puts(&m->b, ", ");
    if (m->mode == OUT_CSV && !m->first)
        fdt_sb_puts(&m->b, ",");
    m->first = 0;
    return c;
}

static void em_str(emitter *m, const char *v)
{
    const column *c = em_next(m);
    if (!c)
        return;
    if (m->mode == OUT_TEXT)
        table_add(&m->t, "%s", *v ? v : "-");
    else if (m->mode == OUT_CSV)
        csv_field(&m->b, v, 1);
    else
        json_kv_str(&m->b, c->key, v, 0);
}

static void em_int(emitter *m, long long v)
{
    const column *c = em_next(m);
    if (!c)
        return;
    if (m->mode == OUT_TEXT)
        table_add(&m->t, v < 0 ? "-" : "%lld", v);
    else if (m->mode == OUT_CSV) {
        if (v >= 0)
            fdt_sb_printf(&m->b, "%lld", v);
    } else if (v >= 0)
        json_kv_int(&m->b, c->key, v, 0);
    else {
        json_str(&m->b, c->key);
        fdt_sb_puts(&m->b, ": null");
    }
}

static void em_num(emitter *m, double v)
{
    const column *c = em_next(m);
    if (!c)
        return;
    if (m->mode == OUT_TEXT)
        table_add(&m->t, isfinite(v) ? c->fmt : "-", v);
    else if (m->mode == OUT_CSV) {
        if (isfinite(v))
            fdt_sb_printf(&m->b, "%.10g", v);
    } else
        json_kv_num(&m->b, c->key, v, 0);
}

/* Prints the table or the CSV; JSON stays in m->b for the caller's document. */
static void em_finish(emitter *m)
{
    if (m->mode == OUT_TEXT) {
        if (m->nrows)
            table_print(&m->t, stdout);
        table_free(&m->t);
    } else if (m->mode == OUT_CSV)
        fputs(fdt_sb_str(&m->b), stdout);
}

static void em_free(emitter *m)
{
    if (m->mode == OUT_TEXT && m->t.cells)
        table_free(&m->t);
    fdt_sb_free(&m->b);
}

static void json_doc_begin(fdt_sb *b, const char *query, const fdt_db *db)
{
    fdt_sb_puts(b, "{");
    json_kv_int(b, "schema", FDT_JSON_SCHEMA_VERSION, 1);
    json_kv_str(b, "query", query, 1);
    json_kv_str(b, "database", fdt_db_path(db), 1);
}

/* "2025-06-01T12:34:56.789Z" -> "2025-06-01 12:34": minutes are enough to tell runs apart. */
static const char *short_time(const char *iso, char *buf, size_t n)
{
    if (strlen(iso) < 16)
        return iso;
    snprintf(buf, n, "%.10s %.5s", iso, iso + 11);
    return buf;
}

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

/* ------------------------------------------------------------------ collecting rows */

/* Queries hand rows to callbacks; collecting them first (fdt_db_collect_*) lets one answer be
 * printed in any form and lets other lookups run without a statement still open. */

static const fdt_device *device_by_id(const fdt_db_device_list *ds, int64_t id)
{
    for (size_t i = 0; i < ds->n; i++)
        if (ds->v[i].id == id)
            return &ds->v[i];
    return NULL;
}

static int list_devices(fdt_db *db, const char *gpu, fdt_db_device_list *ds)
{
    fdt_err e;
    if (fdt_db_devices(db, gpu, fdt_db_collect_device, ds, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    if (ds->oom) {
        print_error("devices: out of memory");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ best and nearest rows */

static const column best_cols[] = {
    {"device", "device", C_STR, NULL, IN_ALL},
    {"arch", "arch", C_STR, NULL, IN_ALL},
    {"compute_units", "", C_INT, NULL, IN_DATA},
    {"backend", "", C_STR, NULL, IN_DATA},
    {"uuid", "", C_STR, NULL, IN_DATA},
    {"problem", "problem", C_STR, NULL, IN_TEXT},
    {"op", "", C_STR, NULL, IN_DATA},
    {"R", "", C_INT, NULL, IN_DATA},
    {"precision", "", C_STR, NULL, IN_DATA},
    {"nx", "", C_INT, NULL, IN_DATA},
    {"ny", "", C_INT, NULL, IN_DATA},
    {"nz", "", C_INT, NULL, IN_DATA},
    {"config", "config", C_STR, NULL, IN_ALL},
    {"median_ms", "median ms", C_NUM, "%.4f", IN_ALL},
    {"min_ms", "", C_NUM, NULL, IN_DATA},
    {"max_ms", "", C_NUM, NULL, IN_DATA},
    {"gbs", "GB/s", C_NUM, "%.0f", IN_ALL},
    {"frac_copy", "of copy", C_NUM, "%.3f", IN_ALL},
    {"layout", "line/offset", C_STR, NULL, IN_TEXT},
    {"layout_line", "", C_INT, NULL, IN_DATA},
    {"layout_offset", "", C_INT, NULL, IN_DATA},
    {"registers", "", C_INT, NULL, IN_DATA},
    {"spill_bytes", "", C_INT, NULL, IN_DATA},
    {"shared_bytes", "", C_INT, NULL, IN_DATA},
    {"run", "run", C_INT, NULL, IN_ALL},
    {"date", "date (UTC)", C_STR, NULL, IN_ALL},
    {"env", "driver / compiler", C_STR, NULL, IN_TEXT},
    {"driver", "", C_STR, NULL, IN_DATA},
    {"runtime", "", C_STR, NULL, IN_DATA},
    {"compiler", "", C_STR, NULL, IN_DATA},
    {"fdtune_version", "", C_STR, NULL, IN_DATA},
    {"generator", "", C_STR, NULL, IN_DATA},
};

static void emit_best_row(emitter *m, const fdt_db_row *r)
{
    const fdt_db_eval *ev = &r->ev;
    const fdt_problem *p = &r->problem;
    char buf[160], when[32];
    em_str(m, r->device.name);
    em_str(m, r->device.arch);
    em_int(m, r->device.compute_units);
    em_str(m, r->device.backend);
    em_str(m, r->device.uuid);
    fdt_problem_format(p, buf, sizeof buf);
    em_str(m, buf);
    em_str(m, fdt_op_name(p->op));
    em_int(m, p->R);
    em_str(m, fdt_prec_name(p->prec));
    em_int(m, p->nx);
    em_int(m, p->ny);
    em_int(m, p->nz);
    em_str(m, ev->config);
    em_num(m, ev->time_ms);
    em_num(m, ev->time_min_ms);
    em_num(m, ev->time_max_ms);
    em_num(m, ev->gbs);
    em_num(m, ev->frac_copy);
    if (ev->layout_line >= 0)
        snprintf(buf, sizeof buf, "%lld/%lld", (long long)ev->layout_line,
                 (long long)ev->layout_offset);
    else
        buf[0] = 0;
    em_str(m, buf);
    em_int(m, ev->layout_line);
    em_int(m, ev->layout_offset);
    em_int(m, ev->registers);
    em_int(m, ev->spill_bytes);
    em_int(m, ev->shared_bytes);
    em_int(m, ev->run_id > 0 ? ev->run_id : -1);
    em_str(m, m->mode == OUT_TEXT ? short_time(ev->created, when, sizeof when) : ev->created);
    if (r->env.driver[0] || r->env.compiler[0])
        snprintf(buf, sizeof buf, "%s / %s", r->env.driver, r->env.compiler);
    else
        buf[0] = 0;
    em_str(m, buf);
    em_str(m, r->env.driver);
    em_str(m, r->env.runtime);
    em_str(m, r->env.compiler);
    em_str(m, r->env.fdtune_version);
    em_str(m, r->env.generator);
}

/* ------------------------------------------------------------------ options */

typedef struct qopts {
    const char *sub;   /* best, runs, history, show */
    const char *db;    /* --db; NULL: the default path */
    const char *gpu;
    char config[256]; /* history's --config in canonical form */
    const char *run;   /* show's argument */
    problem_args pa;
    int have_prec, nearest, limit;
    out_mode mode;
} qopts;

static void usage_overview(FILE *f)
{
    fprintf(f,
            "usage: fdtune query best    [--gpu X] [--op OP] [--R N] [--grid G]\n"
            "                            [--precision f32|f64] [--nearest]\n"
            "       fdtune query runs    [--gpu X] [--limit N]\n"
            "       fdtune query history --op OP --R N --grid G --config KEY=VAL,... [--gpu X]\n"
            "       fdtune query show    RUN\n"
            "common options: [--db PATH] [--json | --csv]\n\n"
            "Questions to the tuning database, which is opened read-only. Tables for reading by\n"
            "default; --json (a document with \"schema\": %d) or --csv (a header row, RFC 4180\n"
            "quoting) for scripts, both with the same fields. 'fdtune query <query> --help'\n"
            "describes each query.\n\n"
            "  --db PATH   the database (default: $FDTUNE_DB, else\n"
            "              $XDG_DATA_HOME/fdtune/fdtune.db, else ~/.local/share/fdtune/fdtune.db)\n"
            "  --gpu X     devices whose name or arch contains X (case-insensitive)\n\n"
            "exit status: 0 answered (also when nothing matched), 2 bad arguments or an unknown\n"
            "run, 4 the database is missing or unreadable.\n",
            FDT_JSON_SCHEMA_VERSION);
}

static void usage_sub(const char *sub, FILE *f)
{
    if (!strcmp(sub, "best"))
        fprintf(f,
                "usage: fdtune query best [--gpu X] [--op OP] [--R N] [--grid G]\n"
                "                         [--precision f32|f64] [--db PATH] [--json | --csv]\n"
                "       fdtune query best --nearest --gpu X --op OP --R N --grid G\n"
                "                         [--precision f32|f64] [--db PATH] [--json | --csv]\n\n"
                "The best config of every tuned (device, problem): verified (status ok), fully\n"
                "timed, smallest median time. Each row names the device, the problem, the\n"
                "config, its median time, effective bandwidth and fraction of the copy bandwidth\n"
                "of its run, the array layout the kernel expects (leading dimension / offset in\n"
                "elements), the run and date, and the environment (driver, compiler). The\n"
                "options filter: --gpu a substring of the device name or arch, --grid N^3 or\n"
                "NXxNYxNZ.\n\n"
                "--nearest answers for one problem that may never have been tuned, as an exported\n"
                "header would, among the tuned results of the same op, R and precision whose\n"
                "config can run the grid: this grid on the first device model (name, arch,\n"
                "compute units) in the database matching --gpu (exact), else that model's\n"
                "nearest tuned grid (grid), else the nearest result on another model of the same\n"
                "arch (arch), else fdtune's built-in default config, the one exported headers\n"
                "fall back to (none). A --gpu the database does not know by name is resolved\n"
                "through the GPU catalogue (recipes/gpus.lua).\n");
    else if (!strcmp(sub, "runs"))
        fprintf(f,
                "usage: fdtune query runs [--gpu X] [--limit N] [--db PATH] [--json | --csv]\n\n"
                "Tuning runs, newest first: id, kind (tune, retune, bench), status (running,\n"
                "done, interrupted, failed), start and finish (UTC), device, strategy, recipe,\n"
                "evaluations recorded and how many were ok, the copy bandwidth measured in the\n"
                "run, and the command line. --limit N shows the newest N (default: all).\n");
    else if (!strcmp(sub, "history"))
        fprintf(f,
                "usage: fdtune query history --op OP --R N --grid G --config KEY=VAL,...\n"
                "                            [--precision f32|f64] [--gpu X] [--db PATH]\n"
                "                            [--json | --csv]\n\n"
                "Every measurement of one config of one problem across runs, oldest first, with\n"
                "the device and environment of each: how a config fared as drivers and compilers\n"
                "changed. The config is compared in canonical form, so key order and default\n"
                "values do not matter.\n");
    else
        fprintf(f,
                "usage: fdtune query show RUN [--db PATH] [--json | --csv]\n\n"
                "One run (an id from 'fdtune query runs'): its header (kind, status, times,\n"
                "device, environment, recipe, strategy, budget, seed, copy bandwidth, host,\n"
                "command), then every evaluation it recorded in order: problem, config, stage,\n"
                "status, median time, bandwidth, fraction of copy, registers, spills, shared\n"
                "memory and the message (why it failed). --csv gives the evaluations only.\n");
}

/* Which options each query takes: the option's short code must be in the string. */
static const struct {
    const char *name, *codes;
} subs[] = {
    {"best", "GoRpgnDjCh"},
    {"runs", "GlDjCh"},
    {"history", "GoRpgcDjCh"},
    {"show", "DjCh"},
};

static const struct option query_opts[] = {
    {"gpu", required_argument, 0, 'G'},     {"op", required_argument, 0, 'o'},
    {"R", required_argument, 0, 'R'},       {"precision", required_argument, 0, 'p'},
    {"grid", required_argument, 0, 'g'},    {"nearest", no_argument, 0, 'n'},
    {"limit", required_argument, 0, 'l'},   {"config", required_argument, 0, 'c'},
    {"db", required_argument, 0, 'D'},      {"json", no_argument, 0, 'j'},
    {"csv", no_argument, 0, 'C'},           {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0}};

static const char *opt_name(int code)
{
    for (const struct option *o = query_opts; o->name; o++)
        if (o->val == code)
            return o->name;
    return "?";
}

/* Returns -1 to go on, else the exit status (help printed, or a usage error). */
static int parse_opts(int argc, char **argv, qopts *o)
{
    memset(o, 0, sizeof *o);
    problem_args_init(&o->pa);
    char seen[128] = {0};
    int help = 0, c;
    long v;
    fdt_config cfg;
    fdt_err e;
    optind = 1;
    /* Options may come before or after the query name (getopt permutes), so the query is
     * known only once all are read; which apply is checked then. */
    while ((c = getopt_long(argc, argv, "", query_opts, NULL)) != -1) {
        if (c > 0 && c < 128)
            seen[c] = 1;
        int t = problem_args_take(&o->pa, c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (t) {
            o->have_prec |= c == 'p';
            continue;
        }
        switch (c) {
        case 'G': o->gpu = optarg; break;
        case 'n': o->nearest = 1; break;
        case 'l':
            if (parse_int_arg("--limit", optarg, 0, 1000000000L, &v))
                return EXIT_USAGE;
            o->limit = (int)v;
            break;
        case 'c':
            if (fdt_config_parse(optarg, &cfg, &e)) {
                print_error("--config: %s", e.msg);
                return EXIT_USAGE;
            }
            fdt_config_format(&cfg, o->config, sizeof o->config);
            break;
        case 'D': o->db = optarg; break;
        case 'j': o->mode = OUT_JSON; break;
        case 'C': o->mode = OUT_CSV; break;
        case 'h': help = 1; break;
        default: usage_overview(stderr); return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        if (help) {
            usage_overview(stdout);
            return EXIT_OK;
        }
        die_usage("query", "which query? best, runs, history or show");
    }
    o->sub = argv[optind++];
    const char *codes = NULL;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (!strcmp(o->sub, subs[i].name))
            codes = subs[i].codes;
    if (!codes)
        die_usage("query", "unknown query '%s' (best, runs, history or show)", o->sub);
    char cmd[32];
    snprintf(cmd, sizeof cmd, "query %s", o->sub);
    if (help) {
        usage_sub(o->sub, stdout);
        return EXIT_OK;
    }
    for (int k = 1; k < 128; k++)
        if (seen[k] && !strchr(codes, k))
            die_usage(cmd, "--%s does not apply to '%s'", opt_name(k), cmd);
    if (seen['j'] && seen['C'])
        die_usage(cmd, "--json and --csv exclude each other");
    if (!strcmp(o->sub, "show")) {
        if (optind >= argc)
            die_usage(cmd, "which run? (an id from 'fdtune query runs')");
        o->run = argv[optind++];
    }
    if (optind < argc)
        die_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (o->gpu && !*o->gpu)
        die_usage(cmd, "--gpu needs a name or an arch");
    if (o->nearest && (!o->gpu || !o->pa.have_op || !o->pa.have_R || !o->pa.have_grid))
        die_usage(cmd, "--nearest needs --gpu, --op, --R and --grid");
    if (!strcmp(o->sub, "history") &&
        (!o->pa.have_op || !o->pa.have_R || !o->pa.have_grid || !seen['c']))
        die_usage(cmd, "history needs --op, --R, --grid and --config");
    if ((o->nearest || !strcmp(o->sub, "history")) && fdt_problem_check(&o->pa.p, &e))
        die_usage(cmd, "%s", e.msg);
    return -1;
}

/* ------------------------------------------------------------------ best */

static int query_best(fdt_db *db, const qopts *o)
{
    fdt_db_filter f;
    fdt_db_filter_init(&f);
    f.gpu = o->gpu;
    if (o->pa.have_op)
        f.op = (int)o->pa.p.op;
    if (o->pa.have_R)
        f.R = o->pa.p.R;
    if (o->have_prec)
        f.prec = (int)o->pa.p.prec;
    if (o->pa.have_grid) {
        f.nx = o->pa.p.nx;
        f.ny = o->pa.p.ny;
        f.nz = o->pa.p.nz;
    }
    fdt_db_rows rs = {0};
    fdt_err e;
    if (fdt_db_best(db, &f, fdt_db_collect_row, &rs, &e) || rs.oom) {
        print_error("%s", rs.oom ? "best: out of memory" : e.msg);
        free(rs.v);
        return EXIT_ERROR;
    }
    emitter m;
    em_begin(&m, o->mode, best_cols, NCOLS(best_cols));
    for (size_t i = 0; i < rs.n; i++) {
        em_row(&m);
        emit_best_row(&m, &rs.v[i]);
        em_row_end(&m);
    }
    if (o->mode == OUT_JSON) {
        fdt_sb d;
        fdt_sb_init(&d);
        json_doc_begin(&d, "best", db);
        fdt_sb_printf(&d, "\"results\": [%s]}\n", fdt_sb_str(&m.b));
        fputs(fdt_sb_str(&d), stdout);
        fdt_sb_free(&d);
    } else
        em_finish(&m);
    if (!rs.n && o->mode == OUT_TEXT)
        print_note("no tuned result in %s matches these filters (see 'fdtune query runs')",
                   fdt_db_path(db));
    em_free(&m);
    free(rs.v);
    return EXIT_OK;
}

static const char *fallback_why(fdt_db_fallback f)
{
    switch (f) {
    case FDT_DB_NEAREST_EXACT: return "this device model has this problem tuned";
    case FDT_DB_NEAREST_GRID: return "the nearest tuned grid on this device model";
    case FDT_DB_NEAREST_ARCH: return "the nearest result on another device model of this arch";
    default: return "nothing tuned for this op, R and precision on this arch can run this grid: "
                    "fdtune's built-in default (the config exported headers fall back to)";
    }
}

static int query_nearest(fdt_db *db, const qopts *o)
{
    const fdt_problem *p = &o->pa.p;
    fdt_catalogue *cat = NULL;
    fdt_err e;
    if (fdt_catalogue_load_default(&cat, &e))
        cat = NULL; /* names the catalogue knows then resolve to nothing */
    fdt_exp_answer *a = malloc(sizeof *a); /* rows are large; keep them off the stack */
    if (!a) {
        fdt_catalogue_free(cat);
        print_error("nearest: out of memory");
        return EXIT_ERROR;
    }
    int rc = fdt_exp_nearest(db, o->gpu, cat, p, a, &e);
    fdt_catalogue_free(cat);
    if (rc) {
        print_error("%s", e.msg);
        free(a);
        return rc == FDT_EXP_NOTHING ? EXIT_USAGE : EXIT_ERROR;
    }
    if (a->others[0])
        print_note("--gpu %s matches several device models: answering for %s (%s, %d CUs), "
                   "not %s", o->gpu, a->device.name, a->device.arch, a->device.compute_units,
                   a->others);
    const fdt_device dev = a->device;
    fdt_db_row *row = &a->row;
    fdt_db_fallback which = a->which;

    char pkey[160], tuned[160];
    fdt_problem_format(p, pkey, sizeof pkey);
    fdt_problem_format(&row->problem, tuned, sizeof tuned);
    if (o->mode == OUT_TEXT) {
        printf("fallback  %s: %s\n", fdt_db_fallback_name(which), fallback_why(which));
        printf("device    %s (%s, %d CUs)\n", dev.name, dev.arch, dev.compute_units);
        printf("problem   %s\n", pkey);
        printf("config    %s\n", row->ev.config);
        if (which != FDT_DB_NEAREST_NONE) {
            char when[32];
            printf("measured  %s on %s (%s, %d CUs): %.4f ms, %.0f GB/s, %.3f of copy\n", tuned,
                   row->device.name, row->device.arch, row->device.compute_units,
                   row->ev.time_ms, row->ev.gbs, row->ev.frac_copy);
            printf("layout    line %lld, offset %lld (elements, for %s)\n",
                   (long long)row->ev.layout_line, (long long)row->ev.layout_offset, tuned);
            printf("run       %lld, %s UTC, driver %s, compiler %s, fdtune %s\n",
                   (long long)row->ev.run_id,
                   short_time(row->ev.created, when, sizeof when), row->env.driver,
                   row->env.compiler, row->env.fdtune_version);
            if (strcmp(row->env.generator, fdt_gen_fingerprint()))
                printf("note      measured with generator %s; this fdtune generates %s, so the "
                       "kernel may differ\n", row->env.generator, fdt_gen_fingerprint());
        }
        free(a);
        return EXIT_OK;
    }
    /* Machine forms: the best-row fields (of the tuned problem, or the requested one with
     * only the config for "none"), led by the rung and the request. */
    column cols[NCOLS(best_cols) + 4];
    cols[0] = (column){"fallback", "", C_STR, NULL, IN_DATA};
    cols[1] = (column){"requested_nx", "", C_INT, NULL, IN_DATA};
    cols[2] = (column){"requested_ny", "", C_INT, NULL, IN_DATA};
    cols[3] = (column){"requested_nz", "", C_INT, NULL, IN_DATA};
    memcpy(cols + 4, best_cols, sizeof best_cols);
    emitter m;
    em_begin(&m, o->mode, cols, NCOLS(cols));
    em_row(&m);
    em_str(&m, fdt_db_fallback_name(which));
    em_int(&m, p->nx);
    em_int(&m, p->ny);
    em_int(&m, p->nz);
    emit_best_row(&m, row);
    em_row_end(&m);
    if (o->mode == OUT_JSON) {
        fdt_sb d;
        fdt_sb_init(&d);
        json_doc_begin(&d, "nearest", db);
        json_kv_str(&d, "fallback", fdt_db_fallback_name(which), 1);
        fdt_sb_printf(&d, "\"result\": %s}\n", fdt_sb_str(&m.b));
        fputs(fdt_sb_str(&d), stdout);
        fdt_sb_free(&d);
    } else
        em_finish(&m);
    em_free(&m);
    free(a);
    return EXIT_OK;
}

/* ------------------------------------------------------------------ runs */

static const column run_cols[] = {
    {"id", "id", C_INT, NULL, IN_ALL},
    {"kind", "kind", C_STR, NULL, IN_ALL},
    {"status", "status", C_STR, NULL, IN_ALL},
    {"started", "started (UTC)", C_STR, NULL, IN_ALL},
    {"finished", "finished", C_STR, NULL, IN_ALL},
    {"device", "device", C_STR, NULL, IN_ALL},
    {"arch", "", C_STR, NULL, IN_DATA},
    {"device_id", "", C_INT, NULL, IN_DATA},
    {"env_id", "", C_INT, NULL, IN_DATA},
    {"strategy", "strategy", C_STR, NULL, IN_ALL},
    {"recipe", "recipe", C_STR, NULL, IN_ALL},
    {"recipe_hash", "", C_STR, NULL, IN_DATA},
    {"budget", "", C_INT, NULL, IN_DATA},
    {"seed", "", C_STR, NULL, IN_DATA},
    {"evaluations", "evals", C_INT, NULL, IN_ALL},
    {"ok", "ok", C_INT, NULL, IN_ALL},
    {"copy_gbs", "copy GB/s", C_NUM, "%.0f", IN_ALL},
    {"host", "", C_STR, NULL, IN_DATA},
    {"pid", "", C_INT, NULL, IN_DATA},
    {"notes", "", C_STR, NULL, IN_DATA},
    {"command", "command", C_STR, NULL, IN_ALL},
};

static void emit_run_row(emitter *m, const fdt_db_run *r, const fdt_device *d)
{
    char s[32], f[32], seed[24];
    int text = m->mode == OUT_TEXT;
    em_int(m, r->id);
    em_str(m, fdt_db_run_kind_name(r->kind));
    em_str(m, fdt_db_run_status_name(r->status));
    em_str(m, text ? short_time(r->started, s, sizeof s) : r->started);
    em_str(m, text ? short_time(r->finished, f, sizeof f) : r->finished);
    em_str(m, d ? d->name : "");
    em_str(m, d ? d->arch : "");
    em_int(m, r->device_id);
    em_int(m, r->env_id);
    em_str(m, r->strategy);
    em_str(m, r->recipe);
    em_str(m, r->recipe_hash);
    em_int(m, r->budget);
    /* Text: a 64-bit seed does not survive JSON readers that hold numbers as doubles. */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    em_str(m, seed);
    em_int(m, r->n_evals);
    em_int(m, r->n_ok);
    em_num(m, r->copy_gbs);
    em_str(m, r->host);
    em_int(m, r->pid);
    em_str(m, r->notes);
    em_str(m, r->command);
}

static int query_runs(fdt_db *db, const qopts *o)
{
    fdt_db_filter f;
    fdt_db_filter_init(&f);
    f.gpu = o->gpu;
    fdt_db_run_list rs = {0};
    fdt_db_device_list ds = {0};
    fdt_err e;
    if (fdt_db_runs(db, &f, o->limit, fdt_db_collect_run, &rs, &e) || rs.oom) {
        print_error("%s", rs.oom ? "runs: out of memory" : e.msg);
        free(rs.v);
        return EXIT_ERROR;
    }
    if (list_devices(db, NULL, &ds)) {
        free(rs.v);
        return EXIT_ERROR;
    }
    emitter m;
    em_begin(&m, o->mode, run_cols, NCOLS(run_cols));
    for (size_t i = 0; i < rs.n; i++) {
        em_row(&m);
        emit_run_row(&m, &rs.v[i], device_by_id(&ds, rs.v[i].device_id));
        em_row_end(&m);
    }
    if (o->mode == OUT_JSON) {
        fdt_sb d;
        fdt_sb_init(&d);
        json_doc_begin(&d, "runs", db);
        fdt_sb_printf(&d, "\"runs\": [%s]}\n", fdt_sb_str(&m.b));
        fputs(fdt_sb_str(&d), stdout);
        fdt_sb_free(&d);
    } else
        em_finish(&m);
    if (!rs.n && o->mode == OUT_TEXT)
        print_note("no runs%s%s in %s", o->gpu ? " on a device matching " : "",
                   o->gpu ? o->gpu : "", fdt_db_path(db));
    em_free(&m);
    free(rs.v);
    free(ds.v);
    return EXIT_OK;
}

/* ------------------------------------------------------------------ history and show */

/* One evaluation in the listings of history and show; history leaves out what it fixed
 * (problem, config) from the table, show what the run fixed (device, environment). */
static const column eval_cols[] = {
    {"id", "", C_INT, NULL, IN_DATA},
    {"run", "run", C_INT, NULL, IN_ALL},
    {"date", "date (UTC)", C_STR, NULL, IN_ALL},
    {"device", "device", C_STR, NULL, IN_ALL},
    {"arch", "", C_STR, NULL, IN_DATA},
    {"uuid", "", C_STR, NULL, IN_DATA},
    {"problem", "problem", C_STR, NULL, IN_TEXT},
    {"op", "", C_STR, NULL, IN_DATA},
    {"R", "", C_INT, NULL, IN_DATA},
    {"precision", "", C_STR, NULL, IN_DATA},
    {"nx", "", C_INT, NULL, IN_DATA},
    {"ny", "", C_INT, NULL, IN_DATA},
    {"nz", "", C_INT, NULL, IN_DATA},
    {"config", "config", C_STR, NULL, IN_ALL},
    {"stage", "stage", C_STR, NULL, IN_ALL},
    {"status", "status", C_STR, NULL, IN_ALL},
    {"median_ms", "median ms", C_NUM, "%.4f", IN_ALL},
    {"min_ms", "", C_NUM, NULL, IN_DATA},
    {"max_ms", "", C_NUM, NULL, IN_DATA},
    {"reps", "", C_INT, NULL, IN_DATA},
    {"gbs", "GB/s", C_NUM, "%.0f", IN_ALL},
    {"frac_copy", "of copy", C_NUM, "%.3f", IN_ALL},
    {"max_err", "", C_NUM, NULL, IN_DATA},
    {"tolerance", "", C_NUM, NULL, IN_DATA},
    {"registers", "regs", C_INT, NULL, IN_ALL},
    {"spill_bytes", "spills", C_INT, NULL, IN_ALL},
    {"shared_bytes", "shared", C_INT, NULL, IN_ALL},
    {"layout_line", "", C_INT, NULL, IN_DATA},
    {"layout_offset", "", C_INT, NULL, IN_DATA},
    {"compile_s", "", C_NUM, NULL, IN_DATA},
    {"env", "driver / compiler", C_STR, NULL, IN_TEXT},
    {"driver", "", C_STR, NULL, IN_DATA},
    {"compiler", "", C_STR, NULL, IN_DATA},
    {"generator", "", C_STR, NULL, IN_DATA},
    {"message", "message", C_STR, NULL, IN_ALL},
};
enum { EV_RUN = 1, EV_DATE = 2, EV_DEVICE = 3, EV_PROBLEM = 6, EV_CONFIG = 13, EV_ENV = 30 };

static void emit_eval_row(emitter *m, const fdt_db_row *r)
{
    const fdt_db_eval *ev = &r->ev;
    const fdt_problem *p = &r->problem;
    char buf[160], when[32];
    em_int(m, ev->id);
    em_int(m, ev->run_id);
    em_str(m, m->mode == OUT_TEXT ? short_time(ev->created, when, sizeof when) : ev->created);
    em_str(m, r->device.name);
    em_str(m, r->device.arch);
    em_str(m, r->device.uuid);
    fdt_problem_format(p, buf, sizeof buf);
    em_str(m, buf);
    em_str(m, fdt_op_name(p->op));
    em_int(m, p->R);
    em_str(m, fdt_prec_name(p->prec));
    em_int(m, p->nx);
    em_int(m, p->ny);
    em_int(m, p->nz);
    em_str(m, ev->config);
    em_str(m, fdt_db_stage_name(ev->stage));
    em_str(m, fdt_db_status_name(ev->status));
    em_num(m, ev->time_ms);
    em_num(m, ev->time_min_ms);
    em_num(m, ev->time_max_ms);
    em_int(m, ev->reps);
    em_num(m, ev->gbs);
    em_num(m, ev->frac_copy);
    em_num(m, ev->max_err);
    em_num(m, ev->tolerance);
    em_int(m, ev->registers);
    em_int(m, ev->spill_bytes);
    em_int(m, ev->shared_bytes);
    em_int(m, ev->layout_line);
    em_int(m, ev->layout_offset);
    em_num(m, ev->compile_s);
    snprintf(buf, sizeof buf, "%s / %s", r->env.driver, r->env.compiler);
    em_str(m, buf);
    em_str(m, r->env.driver);
    em_str(m, r->env.compiler);
    em_str(m, r->env.generator);
    em_str(m, ev->message);
}

/* eval_cols with the table columns in `hide` (EV_* indices) taken out of the table. */
static void eval_columns(column *cols, const int *hide, int nhide)
{
    memcpy(cols, eval_cols, sizeof eval_cols);
    for (int i = 0; i < nhide; i++)
        cols[hide[i]].in = cols[hide[i]].in == IN_TEXT ? IN_NONE : IN_DATA;
}

static int query_history(fdt_db *db, const qopts *o)
{
    const char *key = o->config;
    fdt_err e;
    fdt_db_device_list ds = {0};
    if (o->gpu && list_devices(db, o->gpu, &ds))
        return EXIT_ERROR;
    fdt_db_rows rs = {0};
    if (fdt_db_history(db, &o->pa.p, key, 0, fdt_db_collect_row, &rs, &e) || rs.oom) {
        print_error("%s", rs.oom ? "history: out of memory" : e.msg);
        free(rs.v);
        free(ds.v);
        return EXIT_ERROR;
    }
    /* --gpu names a set of devices; one history call over all keeps the order by time. */
    size_t n = 0;
    for (size_t i = 0; i < rs.n; i++)
        if (!o->gpu || device_by_id(&ds, rs.v[i].ev.device_id))
            rs.v[n++] = rs.v[i];
    rs.n = n;
    free(ds.v);

    static const int hide[] = {EV_PROBLEM, EV_CONFIG};
    column cols[NCOLS(eval_cols)];
    eval_columns(cols, hide, NCOLS(hide));
    emitter m;
    em_begin(&m, o->mode, cols, NCOLS(cols));
    for (size_t i = 0; i < rs.n; i++) {
        em_row(&m);
        emit_eval_row(&m, &rs.v[i]);
        em_row_end(&m);
    }
    char pkey[160];
    fdt_problem_format(&o->pa.p, pkey, sizeof pkey);
    if (o->mode == OUT_JSON) {
        fdt_sb d;
        fdt_sb_init(&d);
        json_doc_begin(&d, "history", db);
        json_kv_str(&d, "problem", pkey, 1);
        json_kv_str(&d, "config", key, 1);
        fdt_sb_printf(&d, "\"evaluations\": [%s]}\n", fdt_sb_str(&m.b));
        fputs(fdt_sb_str(&d), stdout);
        fdt_sb_free(&d);
    } else {
        if (o->mode == OUT_TEXT && rs.n)
            printf("%s, config %s\n\n", pkey, key);
        em_finish(&m);
    }
    if (!rs.n && o->mode == OUT_TEXT)
        print_note("config %s of %s was never measured%s%s in %s", key, pkey,
                   o->gpu ? " on a device matching " : "", o->gpu ? o->gpu : "",
                   fdt_db_path(db));
    em_free(&m);
    free(rs.v);
    return EXIT_OK;
}

static const char *dash(const char *s) { return *s ? s : "-"; }

static void show_header(const fdt_db_run *r, const fdt_device *d, const fdt_db_env *v,
                        const fdt_db_rows *rs)
{
    char s[32], f[32];
    size_t ok = 0;
    for (size_t i = 0; i < rs->n; i++)
        ok += rs->v[i].ev.status == FDT_DB_OK;
    printf("run       %lld (%s, %s)\n", (long long)r->id, fdt_db_run_kind_name(r->kind),
           fdt_db_run_status_name(r->status));
    printf("started   %s UTC, finished %s\n", short_time(r->started, s, sizeof s),
           r->finished[0] ? short_time(r->finished, f, sizeof f) : "-");
    if (d)
        printf("device    %s (%s, %s, %d CUs, %.0f GiB), uuid %s\n", d->name, d->backend,
               d->arch, d->compute_units, d->mem_bytes / 1073741824.0, dash(d->uuid));
    if (v)
        printf("env       driver %s, runtime %s, compiler %s, fdtune %s, generator %s\n",
               dash(v->driver), dash(v->runtime), dash(v->compiler), dash(v->fdtune_version),
               dash(v->generator));
    printf("recipe    %s%s%s%s, strategy %s, budget %lld, seed %llu\n",
           dash(r->recipe), r->recipe_hash[0] ? " (" : "", r->recipe_hash,
           r->recipe_hash[0] ? ")" : "", dash(r->strategy),
           (long long)r->budget, (unsigned long long)r->seed);
    if (isfinite(r->copy_gbs))
        printf("copy      %.0f GB/s device-to-device\n", r->copy_gbs);
    else
        printf("copy      not measured\n");
    printf("host      %s, pid %lld\n", dash(r->host), (long long)r->pid);
    printf("command   %s\n", r->command);
    if (r->notes[0])
        printf("notes     %s\n", r->notes);
    printf("evaluations %zu, %zu ok\n", rs->n, ok);
}

static int query_show(fdt_db *db, const qopts *o)
{
    long id;
    if (parse_int_arg("RUN", o->run, 1, 0x7fffffffL, &id))
        return EXIT_USAGE;
    int64_t rid = id;
    fdt_db_run r;
    fdt_err e;
    int found;
    if (fdt_db_run_find(db, rid, &r, &found, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    if (!found) { /* an unknown id is the user's mistake */
        print_error("no run %ld in %s (see 'fdtune query runs')", id, fdt_db_path(db));
        return EXIT_USAGE;
    }
    fdt_device d;
    fdt_db_env v;
    int have_d = fdt_db_device_get(db, r.device_id, &d, &e) == 0;
    int have_v = fdt_db_env_get(db, r.env_id, &v, &e) == 0;
    fdt_db_rows rs = {0};
    if (fdt_db_run_evals(db, rid, fdt_db_collect_row, &rs, &e) || rs.oom) {
        print_error("%s", rs.oom ? "show: out of memory" : e.msg);
        free(rs.v);
        return EXIT_ERROR;
    }
    static const int hide[] = {EV_RUN, EV_DATE, EV_DEVICE, EV_ENV};
    column cols[NCOLS(eval_cols)];
    eval_columns(cols, hide, NCOLS(hide));
    emitter m;
    em_begin(&m, o->mode, cols, NCOLS(cols));
    for (size_t i = 0; i < rs.n; i++) {
        em_row(&m);
        emit_eval_row(&m, &rs.v[i]);
        em_row_end(&m);
    }
    if (o->mode == OUT_JSON) {
        emitter rm;
        em_begin(&rm, OUT_JSON, run_cols, NCOLS(run_cols));
        em_row(&rm);
        emit_run_row(&rm, &r, have_d ? &d : NULL);
        em_row_end(&rm);
        fdt_sb doc;
        fdt_sb_init(&doc);
        json_doc_begin(&doc, "show", db);
        fdt_sb_printf(&doc, "\"run\": %s, ", fdt_sb_str(&rm.b));
        fdt_sb_puts(&doc, "\"env\": {");
        json_kv_str(&doc, "driver", have_v ? v.driver : "", 1);
        json_kv_str(&doc, "runtime", have_v ? v.runtime : "", 1);
        json_kv_str(&doc, "compiler", have_v ? v.compiler : "", 1);
        json_kv_str(&doc, "fdtune_version", have_v ? v.fdtune_version : "", 1);
        json_kv_str(&doc, "generator", have_v ? v.generator : "", 0);
        fdt_sb_printf(&doc, "}, \"evaluations\": [%s]}\n", fdt_sb_str(&m.b));
        fputs(fdt_sb_str(&doc), stdout);
        fdt_sb_free(&doc);
        em_free(&rm);
    } else {
        if (o->mode == OUT_TEXT) {
            show_header(&r, have_d ? &d : NULL, have_v ? &v : NULL, &rs);
            if (rs.n)
                putchar('\n');
        }
        em_finish(&m);
    }
    em_free(&m);
    free(rs.v);
    return EXIT_OK;
}

/* ------------------------------------------------------------------ entry */

int cmd_query(int argc, char **argv)
{
    qopts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc >= 0)
        return rc;
    fdt_db *db = NULL;
    if (open_db_readonly(o.db, &db))
        return EXIT_ERROR;
    if (!strcmp(o.sub, "best"))
        rc = o.nearest ? query_nearest(db, &o) : query_best(db, &o);
    else if (!strcmp(o.sub, "runs"))
        rc = query_runs(db, &o);
    else if (!strcmp(o.sub, "history"))
        rc = query_history(db, &o);
    else
        rc = query_show(db, &o);
    fflush(stdout);
    if (ferror(stdout) && rc == EXIT_OK) {
        print_error("writing the answer: %s", strerror(errno));
        rc = EXIT_ERROR;
    }
    fdt_db_close(db);
    return rc;
}
