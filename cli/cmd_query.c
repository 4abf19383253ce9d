/* fdtune query: read-only questions to the tuning database. `best` gives the best config per
 * (device, problem), with the model's answers for the GPUs --gpu names where nothing measured
 * answers (fdt_exp_model_rows), or with --nearest the answer fdtune would use for a problem
 * that was never tuned (fdt_exp_nearest: the database's fallback ladder, then the model's
 * answer, ending at fdtune's built-in default config, as exported headers do); `runs` lists
 * the tuning runs, `history` one config's measurements across runs, and `show` everything one
 * run recorded. Each answer is an aligned table for people, or --json / --csv for scripts;
 * both machine forms carry the same fields, so a script can switch between them. The database
 * is opened read-only, so querying never migrates, creates or locks a file for writing. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_export.h"
#include "fdt_recipe.h"
#include "fdt_session.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ output */

/* Every answer is one column description rendered by the emitter (common/fdt_emit.h) as a
 * table, CSV or JSON. Unknown values (NaN reals, negative integers) read "-" in the table,
 * an empty CSV field and null in JSON; empty text reads "-" in the table and stays "" in the
 * machine forms. */

/* The databases a query consults: the user's, then the system database (best and nearest
 * only; runs, history and show are about the user's runs). */
typedef struct dbset {
    fdt_db *v[2];
    size_t n;
} dbset;

/* The user's database of a set, NULL when only the system database answers. */
static fdt_db *user_db(const dbset *d)
{
    return d->n && fdt_db_source_of(d->v[0]) == FDT_DB_USER ? d->v[0] : NULL;
}

/* {"schema": 1, "query": ..., "database": ..., "system_database": ... (JSON only). */
static void doc_begin(fdt_emit *m, const char *query, const dbset *d)
{
    emit_doc_begin(m);
    fdt_emit_str(m, "query", query);
    fdt_db *user = user_db(d);
    fdt_emit_str_opt(m, "database", user ? fdt_db_path(user) : "");
    const char *sys = "";
    for (size_t i = 0; i < d->n; i++)
        if (fdt_db_source_of(d->v[i]) == FDT_DB_SYSTEM)
            sys = fdt_db_path(d->v[i]);
    if (strcmp(query, "best") == 0 || strcmp(query, "nearest") == 0)
        fdt_emit_str_opt(m, "system_database", sys);
}

/* "db.db" or "db.db and the system database sys.db", for notes. */
static void where(const dbset *d, char *buf, size_t n)
{
    fdt_sb b;
    fdt_sb_init(&b);
    for (size_t i = 0; i < d->n; i++)
        fdt_sb_printf(&b, "%s%s%s", i ? " and " : "",
                      fdt_db_source_of(d->v[i]) == FDT_DB_SYSTEM ? "the system database " : "",
                      fdt_db_path(d->v[i]));
    snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
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

static const fdt_col best_cols[] = {
    {"source", "source", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"device", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH | FDT_COL_KEY},
    {"arch", "arch", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"compute_units", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"backend", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"uuid", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    PROBLEM_COLS,
    CONFIG_COLS(FDT_COL_DASH),
    {"median_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"min_ms", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"max_ms", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"gbs", "GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"frac_copy", "of copy", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"cut_short", "cut short", FDT_COL_BOOL, NULL, FDT_SHOW_ALL, 0},
    {"stopped", "stopped", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"layout", "line/offset", FDT_COL_STR, NULL, FDT_SHOW_TEXT, FDT_COL_DASH},
    {"layout_line", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"layout_offset", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"registers", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"spill_bytes", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"shared_bytes", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"run", "run", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"date", "date (UTC)", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"env", "driver / compiler", FDT_COL_STR, NULL, FDT_SHOW_TEXT, FDT_COL_DASH},
    {"driver", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"runtime", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"compiler", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"fdtune_version", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"generator", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
};

static void emit_best_row(fdt_emit *m, const fdt_db_row *r)
{
    const fdt_db_eval *ev = &r->ev;
    const fdt_problem *p = &r->problem;
    char buf[160], when[32];
    fdt_emit_cell_str(m, fdt_db_source_name(r->source));
    fdt_emit_cell_str(m, r->device.name);
    fdt_emit_cell_str(m, r->device.arch);
    fdt_emit_cell_int(m, r->device.compute_units);
    fdt_emit_cell_str(m, r->device.backend);
    fdt_emit_cell_str(m, r->device.uuid);
    emit_problem_cells(m, p);
    emit_config_cells(m, ev->config, &r->device);
    /* a model row is a prediction: no measured time, bandwidth or fraction of copy */
    int measured = r->source != FDT_DB_MODEL;
    fdt_emit_cell_real(m, measured ? ev->time_ms : NAN);
    fdt_emit_cell_real(m, ev->time_min_ms);
    fdt_emit_cell_real(m, ev->time_max_ms);
    fdt_emit_cell_real(m, measured ? ev->gbs : NAN);
    fdt_emit_cell_real(m, ev->frac_copy);
    fdt_emit_cell_bool(m, r->cut_short);
    fdt_emit_cell_str(m, r->stopped);
    if (ev->layout_line >= 0)
        snprintf(buf, sizeof buf, "%lld/%lld", (long long)ev->layout_line,
                 (long long)ev->layout_offset);
    else
        buf[0] = 0;
    fdt_emit_cell_str(m, buf);
    fdt_emit_cell_int(m, ev->layout_line);
    fdt_emit_cell_int(m, ev->layout_offset);
    fdt_emit_cell_int(m, ev->registers);
    fdt_emit_cell_int(m, ev->spill_bytes);
    fdt_emit_cell_int(m, ev->shared_bytes);
    fdt_emit_cell_int(m, ev->run_id > 0 ? ev->run_id : -1);
    int text = m->mode == FDT_EMIT_TEXT;
    fdt_emit_cell_str(m, text ? short_time(ev->created, when, sizeof when) : ev->created);
    if (r->env.driver[0] || r->env.compiler[0])
        snprintf(buf, sizeof buf, "%s / %s", r->env.driver, r->env.compiler);
    else
        buf[0] = 0;
    fdt_emit_cell_str(m, buf);
    fdt_emit_cell_str(m, r->env.driver);
    fdt_emit_cell_str(m, r->env.runtime);
    fdt_emit_cell_str(m, r->env.compiler);
    fdt_emit_cell_str(m, r->env.fdtune_version);
    fdt_emit_cell_str(m, r->env.generator);
}

/* ------------------------------------------------------------------ options */

typedef struct qopts {
    const char *sub;   /* best, runs, history, show */
    const char *db;    /* --db; NULL: the default path */
    const char *gpu;
    const char *cpu;   /* --cpu: the host CPU ("auto") or a stored CPU's name or arch */
    char config[256]; /* history's --config in canonical form */
    const char *run;   /* show's argument */
    problem_args pa;
    int nearest, limit, no_system;
    fdt_emit_mode mode;
} qopts;

static void usage_overview(FILE *f)
{
    fprintf(f,
            "usage: fdtune query best    [--gpu X | --cpu X] [--op OPS] [--R N,...] [--grid G,...]\n"
            "                            [--precision f32,f64] [--nearest]\n"
            "       fdtune query runs    [--gpu X] [--limit N]\n"
            "       fdtune query history --op OP --R N --grid G --config KEY=VAL,... [--gpu X]\n"
            "       fdtune query show    RUN\n"
            "common options: [--db PATH] [--no-system-db] [--json | --csv]\n"
            "                [--export-json FILE] [--export-csv FILE]\n\n"
            "Questions to the tuning database, which is opened read-only. Tables for reading by\n"
            "default; --json (a document with \"schema\": %d) or --csv (a header row, RFC 4180\n"
            "quoting) for scripts, both with the same fields. 'fdtune query <query> --help'\n"
            "describes each query.\n\n"
            "  --db PATH   the database (default: $FDTUNE_DB, else\n"
            "              $XDG_DATA_HOME/fdtune/fdtune.db, else ~/.local/share/fdtune/fdtune.db)\n"
            "  --gpu X     devices whose name or arch contains X (case-insensitive); auto:\n"
            "              the visible GPU's (none visible: exit 3)\n"
            "  --cpu X     the same for the host CPU's results: auto (the host CPU's model),\n"
            "              or a part of a stored CPU's name or arch (x86-64-v3)\n"
            "  --op, --R, --precision, --grid  lists (comma-separated or repeated): any of\n"
            "              their values; history and --nearest take one problem\n"
            "  --absorb W[:S]  with --op dwave (required; best, history): only dwave's\n"
            "              problems of this absorbing layer (width W, strength S, default 0.1)\n"
            "  --no-system-db  best and --nearest consult your database, then the system\n"
            "              database (share/fdtune/system.db, results measured on the project's\n"
            "              GPUs; column \"source\": user or system); this leaves it out\n"
            EXPORT_HELP "\n"
            "exit status: 0 answered (also when nothing matched), 2 bad arguments or an unknown\n"
            "run, 4 the database is missing or unreadable.\n",
            FDT_JSON_SCHEMA_VERSION);
    print_exit_statuses(f);
}

static void usage_sub(const char *sub, FILE *f)
{
    if (!strcmp(sub, "best"))
        fprintf(f,
                "usage: fdtune query best [--gpu X] [--op OPS] [--R N,...] [--grid G,...]\n"
                "                         [--precision f32,f64] [--absorb W[:S]] [--db PATH]\n"
                "                         [--json | --csv]\n"
                "       fdtune query best --nearest --gpu X --op OP --R N --grid G\n"
                "                         [--precision f32|f64] [--db PATH] [--json | --csv]\n\n"
                "The best config of every tuned (device, problem): verified (status ok), fully\n"
                "timed, smallest median time. Each row names the device, the problem, the\n"
                "config, its median time, effective bandwidth and fraction of the copy bandwidth\n"
                "of its run, the array layout the kernel expects (leading dimension / offset in\n"
                "elements), the run and date, and the environment (driver, compiler). The\n"
                "options filter: --gpu a substring of the device name or arch (auto: the\n"
                "visible GPU's name), --grid N^3 or NXxNYxNZ; --op, --R, --precision and --grid\n"
                "take lists (lap,d2z) and match any of their values; --op dwave takes --absorb\n"
                "W[:S], its absorbing layer (another W or S is another problem). Your database\n"
                "is consulted first, then the system database (the results measured on the\n"
                "project's GPUs, share/fdtune/system.db): the column source says which\n"
                "answered (user or system); where you tuned a device model and problem, your\n"
                "result answers for it. --no-system-db: yours alone. \"cut short\": the latest\n"
                "search of the problem was stopped by its share of --time before its budget or\n"
                "space was spent, so the best is that of what was measured.\n\n"
                "--nearest answers for one problem that may never have been tuned, as an exported\n"
                "header would, among the tuned results of the same op, R and precision whose\n"
                "config can run the grid: this grid on the first device model (name, arch,\n"
                "compute units) in the database matching --gpu (exact), else that model's\n"
                "nearest tuned grid (grid), else the nearest result on another model of the same\n"
                "arch (arch), else the model's top-ranked config for this device and grid\n"
                "(model: the first of 'fdtune --gpu X ... --dry-run', predicted, not measured),\n"
                "else fdtune's built-in default config, the one exported headers fall back to\n"
                "(none). A --gpu the database does not know by name is resolved through the GPU\n"
                "catalogue (recipes/gpus.lua). The candidates of your database and the system\n"
                "database compete by this one rule. best --gpu X lists the model's answers too\n"
                "(source model, no median: predicted) where nothing measured answers.\n");
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
                "                            [--precision f32|f64] [--absorb W[:S]] [--gpu X]\n"
                "                            [--db PATH] [--json | --csv]\n\n"
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
    print_exit_statuses(f);
}

/* Which options each query takes: the option's short code must be in the string. */
static const struct {
    const char *name, *codes;
} subs[] = {
    {"best", "GUoRpgAnDjChS"},
    {"runs", "GUlDjChS"},
    {"history", "GUoRpgAcDjChS"},
    {"show", "DjChS"},
};

static const struct option query_opts[] = {
    {"gpu", required_argument, 0, 'G'},     {"op", required_argument, 0, 'o'},
    {"cpu", required_argument, 0, 'U'},
    {"R", required_argument, 0, 'R'},       {"precision", required_argument, 0, 'p'},
    {"grid", required_argument, 0, 'g'},    {"nearest", no_argument, 0, 'n'},
    {"absorb", required_argument, 0, 'A'},
    {"limit", required_argument, 0, 'l'},   {"config", required_argument, 0, 'c'},
    {"db", required_argument, 0, 'D'},      {"json", no_argument, 0, 'j'},
    {"csv", no_argument, 0, 'C'},           {"help", no_argument, 0, 'h'},
    {"no-system-db", no_argument, 0, 'S'},  EXPORT_OPTIONS,
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
    while ((c = getopt_long(argc, argv, "h", query_opts, NULL)) != -1) {
        if (c > 0 && c < 128)
            seen[c] = 1;
        int t = problem_args_take(&o->pa, c == 'A' ? OPT_ABSORB : c, optarg);
        if (t < 0)
            return EXIT_USAGE;
        if (t)
            continue;
        switch (c) {
        case 'G': o->gpu = optarg; break;
        case 'U': o->cpu = optarg; break;
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
        case 'S': o->no_system = 1; break;
        case 'j': o->mode = FDT_EMIT_JSON; break;
        case 'C': o->mode = FDT_EMIT_CSV; break;
        case 'h': help = 1; break;
        case OPT_EXPORT_JSON:
        case OPT_EXPORT_CSV: export_option(c, optarg); break;
        default: return bad_option("query", argv, "h", query_opts);
        }
    }
    if (optind >= argc) {
        if (help)
            return print_help("query", usage_overview);
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
        FILE *f = help_stream();
        if (f)
            usage_sub(o->sub, f);
        return help_done(cmd, f);
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
    if (o->cpu && !*o->cpu)
        die_usage(cmd, "--cpu needs auto, a name or an arch");
    if (o->cpu && o->gpu)
        die_usage(cmd, "--gpu and --cpu together: ask for one device at a time");
    if (o->nearest && (!(o->gpu || o->cpu) || !o->pa.have_op || !o->pa.have_R ||
                       !o->pa.have_grid))
        die_usage(cmd, "--nearest needs --gpu (or --cpu), --op, --R and --grid");
    if (!strcmp(o->sub, "history") &&
        (!o->pa.have_op || !o->pa.have_R || !o->pa.have_grid || !seen['c']))
        die_usage(cmd, "history needs --op, --R, --grid and --config");
    if (problem_args_done(&o->pa))
        return EXIT_USAGE;
    if (o->nearest || !strcmp(o->sub, "history")) { /* one problem */
        if (problem_args_one(&o->pa, o->nearest ? "query best --nearest" : cmd))
            return EXIT_USAGE;
        if (fdt_problem_check(&o->pa.p, &e))
            die_usage(cmd, "%s", e.msg);
    }
    return -1;
}

/* ------------------------------------------------------------------ best */

/* Results whose kernel may not be the one measured are marked, as export marks them
 * (fdt_exp_stale_note). Returns -1 when the databases cannot say. */
static int note_stale(const dbset *d, const fdt_db_row *rows, size_t n)
{
    char *note = NULL;
    fdt_err e;
    if (fdt_exp_stale_note(d->v, d->n, rows, n, &note, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    if (note)
        print_note("%s", note);
    free(note);
    return 0;
}

/* The model's answers for the device models --gpu names where nothing measured answers
 * (fdt_exp_model_rows), appended to rs. */
static int model_rows(const dbset *d, const qopts *o, fdt_db_rows *rs)
{
    fdt_exp_opts x;
    fdt_exp_opts_init(&x);
    x.ops = o->pa.ops;
    x.Rs = o->pa.Rs;
    x.precs = o->pa.precs;
    x.absorb_w = o->pa.absorb_w;
    x.absorb_s = o->pa.absorb_s;
    for (int g = 0; g < o->pa.ngrids && g < FDT_EXP_MAX_GRIDS; g++) {
        x.grids[g][0] = o->pa.grid[g][0];
        x.grids[g][1] = o->pa.grid[g][1];
        x.grids[g][2] = o->pa.grid[g][2];
        x.ngrids = g + 1;
    }
    fdt_catalogue *cat = NULL;
    fdt_err e;
    if (fdt_catalogue_load_default(&cat, &e) == 0)
        x.cat = cat; /* without it, the model has no description to rank with */
    int rc = fdt_exp_model_rows(d->v, d->n, o->gpu, &x, rs, &e);
    fdt_catalogue_free(cat);
    if (rc)
        print_error("%s", e.msg);
    return rc;
}

/* Rows of fdtune's model are predictions: said once, with how to measure instead. */
static void note_predicted(const fdt_db_rows *rs, const char *gpu)
{
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++)
        n += rs->v[i].source == FDT_DB_MODEL;
    if (n)
        print_note("%zu of these rows are predicted, not measured (source model): nothing "
                   "measured on %s's architecture answers them, so fdtune's model ranked the "
                   "recipe's space (the first of 'fdtune --gpu %s ... --dry-run'); tune to "
                   "measure them", n, gpu, gpu);
}

static int query_best(const dbset *d, const qopts *o)
{
    fdt_db_filter f;
    fdt_db_filter_init(&f);
    f.gpu = o->gpu;
    f.ops = o->pa.ops;
    f.Rs = o->pa.Rs;
    f.precs = o->pa.precs;
    f.grids = (const int64_t(*)[3])o->pa.grid;
    f.ngrids = o->pa.ngrids;
    f.absorb_w = o->pa.absorb_w;
    f.absorb_s = o->pa.absorb_s;
    fdt_db_rows rs = {0};
    fdt_err e;
    for (size_t k = 0; k < d->n; k++)
        if (fdt_db_best(d->v[k], &f, fdt_db_collect_row, &rs, &e) || rs.oom) {
            print_error("%s", rs.oom ? "best: out of memory" : e.msg);
            free(rs.v);
            return EXIT_ERROR;
        }
    fdt_db_rows_shadow(&rs); /* the user's result of a device model and problem answers */
    if (o->gpu && model_rows(d, o, &rs)) {
        free(rs.v);
        return EXIT_ERROR;
    }
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, o->mode, &b);
    doc_begin(&m, "best", d);
    fdt_emit_array(&m, "results");
    fdt_emit_table(&m, best_cols, NCOLS(best_cols));
    for (size_t i = 0; i < rs.n; i++) {
        fdt_emit_row(&m, NULL);
        emit_best_row(&m, &rs.v[i]);
        fdt_emit_row_end(&m);
    }
    fdt_emit_table_end(&m);
    fdt_emit_end(&m);
    fdt_emit_end(&m);
    char in[8300];
    where(d, in, sizeof in);
    int rc = emit_done(&m) ? EXIT_ERROR : EXIT_OK;
    fflush(stdout);
    if (!rs.n && o->mode == FDT_EMIT_TEXT)
        print_note("no tuned result in %s matches these filters (see 'fdtune query runs')", in);
    if (note_stale(d, rs.v, rs.n))
        rc = EXIT_ERROR;
    note_predicted(&rs, o->gpu);
    free(rs.v);
    return rc;
}

static const char *fallback_why(fdt_db_fallback f)
{
    switch (f) {
    case FDT_DB_NEAREST_EXACT: return "this device model has this problem tuned";
    case FDT_DB_NEAREST_GRID: return "the nearest tuned grid on this device model";
    case FDT_DB_NEAREST_ARCH: return "the nearest result on another device model of this arch";
    case FDT_DB_NEAREST_MODEL:
        return "nothing measured on this arch can run this grid: fdtune's model's top-ranked "
               "config (the first of a dry run), predicted, not measured";
    default: return "nothing tuned for this op, R and precision on this arch can run this grid: "
                    "fdtune's built-in default (the config exported headers fall back to)";
    }
}

/* The table form of --nearest: the rung, why it was taken, and where the config was
 * measured. */
static void nearest_text(fdt_emit *m, const fdt_exp_answer *a, const fdt_problem *p)
{
    const fdt_db_row *row = &a->row;
    char pkey[160], tuned[160], when[32];
    fdt_problem_format(p, pkey, sizeof pkey);
    fdt_problem_format(&row->problem, tuned, sizeof tuned);
    fdt_emit_text(m, "fallback  %s: %s\n", fdt_db_fallback_name(a->which),
                  fallback_why(a->which));
    fdt_emit_text(m, "device    %s (%s, %d CUs)\n", a->device.name, a->device.arch,
                  a->device.compute_units);
    fdt_emit_text(m, "problem   %s\n", pkey);
    fdt_emit_text(m, "config    %s\n", row->ev.config);
    if (a->which == FDT_DB_NEAREST_NONE)
        return;
    if (a->which == FDT_DB_NEAREST_MODEL) {
        fdt_emit_text(m, "predicted %.4f ms, %.0f GB/s by fdtune's model (not measured: tune to "
                         "measure)\n", row->ev.time_ms, row->ev.gbs);
        fdt_emit_text(m, "layout    line %lld, offset %lld (elements)\n",
                      (long long)row->ev.layout_line, (long long)row->ev.layout_offset);
        return;
    }
    fdt_emit_text(m, "measured  %s on %s (%s, %d CUs): %.4f ms, %.0f GB/s, %.3f of copy\n",
                  tuned, row->device.name, row->device.arch, row->device.compute_units,
                  row->ev.time_ms, row->ev.gbs, row->ev.frac_copy);
    fdt_emit_text(m, "layout    line %lld, offset %lld (elements, for %s)\n",
                  (long long)row->ev.layout_line, (long long)row->ev.layout_offset, tuned);
    fdt_emit_text(m, "run       %lld%s, %s UTC, driver %s, compiler %s, fdtune %s, "
                     "generator %s\n", (long long)row->ev.run_id,
                  row->source == FDT_DB_SYSTEM ? " of the system database" : "",
                  short_time(row->ev.created, when, sizeof when), row->env.driver,
                  row->env.compiler, row->env.fdtune_version, row->env.generator);
}

/* The machine forms of --nearest: the best-row fields (of the tuned problem, or the
 * requested one with only the config for "none"), led by the rung and the request. */
static void nearest_data(fdt_emit *m, const fdt_exp_answer *a, const fdt_problem *p,
                         const dbset *d)
{
    fdt_col cols[NCOLS(best_cols) + 4];
    cols[0] = (fdt_col){"fallback", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH};
    cols[1] = (fdt_col){"requested_nx", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0};
    cols[2] = (fdt_col){"requested_ny", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0};
    cols[3] = (fdt_col){"requested_nz", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0};
    memcpy(cols + 4, best_cols, sizeof best_cols);
    doc_begin(m, "nearest", d);
    fdt_emit_str(m, "fallback", fdt_db_fallback_name(a->which));
    fdt_emit_table(m, cols, NCOLS(cols));
    fdt_emit_row(m, "result");
    fdt_emit_cell_str(m, fdt_db_fallback_name(a->which));
    fdt_emit_cell_int(m, p->nx);
    fdt_emit_cell_int(m, p->ny);
    fdt_emit_cell_int(m, p->nz);
    emit_best_row(m, &a->row);
    fdt_emit_row_end(m);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
}

static int query_nearest(const dbset *d, const qopts *o)
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
    int rc = fdt_exp_nearest(d->v, d->n, o->gpu, cat, p, a, &e);
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
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, o->mode, &b);
    if (o->mode == FDT_EMIT_TEXT)
        nearest_text(&m, a, p);
    else
        nearest_data(&m, a, p, d);
    rc = emit_done(&m) ? EXIT_ERROR : EXIT_OK;
    fflush(stdout);
    if (a->which != FDT_DB_NEAREST_NONE && note_stale(d, &a->row, 1))
        rc = EXIT_ERROR;
    free(a);
    return rc;
}

/* ------------------------------------------------------------------ runs */

static const fdt_col run_cols[] = {
    {"id", "id", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"kind", "kind", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"status", "status", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"started", "started (UTC)", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"finished", "finished", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"device", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"arch", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"device_id", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"env_id", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"strategy", "strategy", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"recipe", "recipe", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"recipe_hash", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"budget", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"seed", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"evaluations", "evals", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"ok", "ok", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"copy_gbs", "copy GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, 0},
    {"host", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"pid", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"notes", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"command", "command", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
};

static void emit_run_row(fdt_emit *m, const fdt_db_run *r, const fdt_device *d)
{
    char s[32], f[32], seed[24];
    int text = m->mode == FDT_EMIT_TEXT;
    fdt_emit_cell_int(m, r->id);
    fdt_emit_cell_str(m, fdt_db_run_kind_name(r->kind));
    fdt_emit_cell_str(m, fdt_db_run_status_name(r->status));
    fdt_emit_cell_str(m, text ? short_time(r->started, s, sizeof s) : r->started);
    fdt_emit_cell_str(m, text ? short_time(r->finished, f, sizeof f) : r->finished);
    fdt_emit_cell_str(m, d ? d->name : "");
    fdt_emit_cell_str(m, d ? d->arch : "");
    fdt_emit_cell_int(m, r->device_id);
    fdt_emit_cell_int(m, r->env_id);
    fdt_emit_cell_str(m, r->strategy);
    fdt_emit_cell_str(m, r->recipe);
    fdt_emit_cell_str(m, r->recipe_hash);
    fdt_emit_cell_int(m, r->budget);
    /* Text: a 64-bit seed does not survive JSON readers that hold numbers as doubles. */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)r->seed);
    fdt_emit_cell_str(m, seed);
    fdt_emit_cell_int(m, r->n_evals);
    fdt_emit_cell_int(m, r->n_ok);
    fdt_emit_cell_real(m, r->copy_gbs);
    fdt_emit_cell_str(m, r->host);
    fdt_emit_cell_int(m, r->pid);
    fdt_emit_cell_str(m, r->notes);
    fdt_emit_cell_str(m, r->command);
}

static int query_runs(const dbset *d, const qopts *o)
{
    fdt_db *db = d->v[0];
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
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, o->mode, &b);
    doc_begin(&m, "runs", d);
    fdt_emit_array(&m, "runs");
    fdt_emit_table(&m, run_cols, NCOLS(run_cols));
    for (size_t i = 0; i < rs.n; i++) {
        fdt_emit_row(&m, NULL);
        emit_run_row(&m, &rs.v[i], device_by_id(&ds, rs.v[i].device_id));
        fdt_emit_row_end(&m);
    }
    fdt_emit_table_end(&m);
    fdt_emit_end(&m);
    fdt_emit_end(&m);
    if (!rs.n && o->mode == FDT_EMIT_TEXT)
        print_note("no runs%s%s in %s", o->gpu ? " on a device matching " : "",
                   o->gpu ? o->gpu : "", fdt_db_path(db));
    free(rs.v);
    free(ds.v);
    return emit_done(&m) ? EXIT_ERROR : EXIT_OK;
}

/* ------------------------------------------------------------------ history and show */

/* One evaluation in the listings of history and show; history leaves out what it fixed
 * (problem, config) from the table, show what the run fixed (device, environment). */
static const fdt_col eval_cols[] = {
    {"id", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"run", "run", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"date", "date (UTC)", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"device", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"arch", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"uuid", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    PROBLEM_COLS,
    CONFIG_COLS(FDT_COL_DASH),
    {"stage", "stage", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"status", "status", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
    {"median_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"min_ms", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"max_ms", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"reps", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"gbs", "GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"frac_copy", "of copy", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"max_err", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"tolerance", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"registers", "regs", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"spill_bytes", "spills", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"shared_bytes", "shared", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"layout_line", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"layout_offset", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"compile_s", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"env", "driver / compiler", FDT_COL_STR, NULL, FDT_SHOW_TEXT, FDT_COL_DASH},
    {"driver", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"compiler", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"generator", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, FDT_COL_DASH},
    {"message", "message", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_DASH},
};
enum { EV_RUN = 1, EV_DATE = 2, EV_DEVICE = 3, EV_PROBLEM = 6, EV_CONFIG = 13, EV_ENV = 30 };

static void emit_eval_row(fdt_emit *m, const fdt_db_row *r)
{
    const fdt_db_eval *ev = &r->ev;
    const fdt_problem *p = &r->problem;
    char buf[160], when[32];
    fdt_emit_cell_int(m, ev->id);
    fdt_emit_cell_int(m, ev->run_id);
    int text = m->mode == FDT_EMIT_TEXT;
    fdt_emit_cell_str(m, text ? short_time(ev->created, when, sizeof when) : ev->created);
    fdt_emit_cell_str(m, r->device.name);
    fdt_emit_cell_str(m, r->device.arch);
    fdt_emit_cell_str(m, r->device.uuid);
    emit_problem_cells(m, p);
    emit_config_cells(m, ev->config, &r->device);
    fdt_emit_cell_str(m, fdt_db_stage_name(ev->stage));
    fdt_emit_cell_str(m, fdt_db_status_name(ev->status));
    fdt_emit_cell_real(m, ev->time_ms);
    fdt_emit_cell_real(m, ev->time_min_ms);
    fdt_emit_cell_real(m, ev->time_max_ms);
    fdt_emit_cell_int(m, ev->reps);
    fdt_emit_cell_real(m, ev->gbs);
    fdt_emit_cell_real(m, ev->frac_copy);
    fdt_emit_cell_real(m, ev->max_err);
    fdt_emit_cell_real(m, ev->tolerance);
    fdt_emit_cell_int(m, ev->registers);
    fdt_emit_cell_int(m, ev->spill_bytes);
    fdt_emit_cell_int(m, ev->shared_bytes);
    fdt_emit_cell_int(m, ev->layout_line);
    fdt_emit_cell_int(m, ev->layout_offset);
    fdt_emit_cell_real(m, ev->compile_s);
    snprintf(buf, sizeof buf, "%s / %s", r->env.driver, r->env.compiler);
    fdt_emit_cell_str(m, buf);
    fdt_emit_cell_str(m, r->env.driver);
    fdt_emit_cell_str(m, r->env.compiler);
    fdt_emit_cell_str(m, r->env.generator);
    fdt_emit_cell_str(m, ev->message);
}

/* eval_cols with the table columns in `hide` (EV_* indices) taken out of the table. */
static void eval_columns(fdt_col *cols, const int *hide, int nhide)
{
    memcpy(cols, eval_cols, sizeof eval_cols);
    for (int i = 0; i < nhide; i++)
        cols[hide[i]].show = cols[hide[i]].show == FDT_SHOW_TEXT ? FDT_SHOW_NONE : FDT_SHOW_DATA;
}

/* The evaluations of history and show: a table, or the array "evaluations" in JSON. */
static void emit_evals(fdt_emit *m, const fdt_col *cols, const fdt_db_rows *rs)
{
    fdt_emit_array(m, "evaluations");
    fdt_emit_table(m, cols, NCOLS(eval_cols));
    for (size_t i = 0; i < rs->n; i++) {
        fdt_emit_row(m, NULL);
        emit_eval_row(m, &rs->v[i]);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
}

static int query_history(const dbset *d, const qopts *o)
{
    fdt_db *db = d->v[0];
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
    fdt_col cols[NCOLS(eval_cols)];
    eval_columns(cols, hide, NCOLS(hide));
    char pkey[160];
    fdt_problem_format(&o->pa.p, pkey, sizeof pkey);
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, o->mode, &b);
    doc_begin(&m, "history", d);
    fdt_emit_str(&m, "problem", pkey);
    fdt_emit_str(&m, "config", key);
    if (rs.n)
        fdt_emit_text(&m, "%s, config %s\n\n", pkey, key);
    emit_evals(&m, cols, &rs);
    fdt_emit_end(&m);
    if (!rs.n && o->mode == FDT_EMIT_TEXT)
        print_note("config %s of %s was never measured%s%s in %s", key, pkey,
                   o->gpu ? " on a device matching " : "", o->gpu ? o->gpu : "",
                   fdt_db_path(db));
    free(rs.v);
    return emit_done(&m) ? EXIT_ERROR : EXIT_OK;
}

static const char *dash(const char *s) { return *s ? s : "-"; }

static void show_header(fdt_emit *m, const fdt_db_run *r, const fdt_device *d,
                        const fdt_db_env *v, const fdt_db_rows *rs)
{
    char s[32], f[32];
    size_t ok = 0;
    for (size_t i = 0; i < rs->n; i++)
        ok += rs->v[i].ev.status == FDT_DB_OK;
    fdt_emit_text(m, "run       %lld (%s, %s)\n", (long long)r->id,
                  fdt_db_run_kind_name(r->kind), fdt_db_run_status_name(r->status));
    fdt_emit_text(m, "started   %s UTC, finished %s\n", short_time(r->started, s, sizeof s),
                  r->finished[0] ? short_time(r->finished, f, sizeof f) : "-");
    if (d)
        fdt_emit_text(m, "device    %s (%s, %s, %d CUs, %.0f GiB), uuid %s\n", d->name,
                      d->backend, d->arch, d->compute_units, d->mem_bytes / 1073741824.0,
                      dash(d->uuid));
    if (v)
        fdt_emit_text(m, "env       driver %s, runtime %s, compiler %s, fdtune %s, generator %s\n",
                      dash(v->driver), dash(v->runtime), dash(v->compiler),
                      dash(v->fdtune_version), dash(v->generator));
    fdt_emit_text(m, "recipe    %s%s%s%s, strategy %s, budget %lld, seed %llu\n",
                  dash(r->recipe), r->recipe_hash[0] ? " (" : "", r->recipe_hash,
                  r->recipe_hash[0] ? ")" : "", dash(r->strategy), (long long)r->budget,
                  (unsigned long long)r->seed);
    if (isfinite(r->copy_gbs))
        fdt_emit_text(m, "copy      %.0f GB/s device-to-device\n", r->copy_gbs);
    else
        fdt_emit_text(m, "copy      not measured\n");
    fdt_emit_text(m, "host      %s, pid %lld\n", dash(r->host), (long long)r->pid);
    fdt_emit_text(m, "command   %s\n", r->command);
    if (r->notes[0])
        fdt_emit_text(m, "notes     %s\n", r->notes);
    fdt_emit_text(m, "evaluations %zu, %zu ok\n", rs->n, ok);
}

/* show in every form: the table form has the run's header, then its evaluations; CSV the
 * evaluations only; JSON the run (a row of run_cols), its environment and evaluations. */
static void render_show(fdt_emit *m, const dbset *dbs, const fdt_db_run *r,
                        const fdt_device *d, const fdt_db_env *v, const fdt_db_rows *rs)
{
    static const int hide[] = {EV_RUN, EV_DATE, EV_DEVICE, EV_ENV};
    fdt_col cols[NCOLS(eval_cols)];
    eval_columns(cols, hide, NCOLS(hide));
    show_header(m, r, d, v, rs);
    if (rs->n)
        fdt_emit_text(m, "\n");
    doc_begin(m, "show", dbs);
    if (m->mode == FDT_EMIT_JSON) {
        fdt_emit_table(m, run_cols, NCOLS(run_cols));
        fdt_emit_row(m, "run");
        emit_run_row(m, r, d);
        fdt_emit_row_end(m);
        fdt_emit_table_end(m);
    }
    fdt_db_env none = {0};
    emit_env(m, "env", v ? v : &none);
    emit_evals(m, cols, rs);
    fdt_emit_end(m);
}

static int query_show(const dbset *dbs, const qopts *o)
{
    fdt_db *db = dbs->v[0];
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
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, o->mode, &b);
    render_show(&m, dbs, &r, have_d ? &d : NULL, have_v ? &v : NULL, &rs);
    free(rs.v);
    return emit_done(&m) ? EXIT_ERROR : EXIT_OK;
}

/* ------------------------------------------------------------------ entry */

int cmd_query(int argc, char **argv)
{
    qopts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc >= 0)
        return rc;
    /* --gpu auto: the visible GPU; --nearest names it as its catalogue entry, as for a name */
    fdt_device visible;
    fdt_catalogue *cat = NULL;
    fdt_err e;
    if (o.nearest && fdt_session_gpu_auto(o.gpu) && fdt_catalogue_load_default(&cat, &e))
        cat = NULL;
    rc = resolve_gpu_auto(&o.gpu, cat, &visible);
    fdt_catalogue_free(cat);
    if (rc == EXIT_OK && o.cpu && (rc = resolve_cpu_auto(&o.cpu, &visible)) == EXIT_OK)
        o.gpu = o.cpu; /* the stored devices it names, as --gpu names them */
    if (rc != EXIT_OK)
        return rc;
    dbset d = {{NULL, NULL}, 0};
    int best = !strcmp(o.sub, "best");
    if (best ? open_dbs(o.db, o.no_system, d.v, &d.n) : open_db_readonly(o.db, &d.v[0]))
        return EXIT_ERROR;
    if (!best)
        d.n = 1;
    if (best)
        rc = o.nearest ? query_nearest(&d, &o) : query_best(&d, &o);
    else if (!strcmp(o.sub, "runs"))
        rc = query_runs(&d, &o);
    else if (!strcmp(o.sub, "history"))
        rc = query_history(&d, &o);
    else
        rc = query_show(&d, &o);
    if (stdout_flush() && rc == EXIT_OK)
        rc = EXIT_ERROR;
    close_dbs(d.v, d.n);
    return rc;
}
