/* fdtune db: the tuning database as a file. `merge` folds shards (per-GPU or per-job
 * databases, e.g. written on node-local storage by cluster jobs) into one (tuner/merge.c:
 * natural keys, the noise rule, one transaction); `check` says whether a file is sound
 * (schema version, integrity, foreign keys, fdtune's own rules, rows nothing refers to) and
 * what it holds per (device, problem). A table for people or --json for scripts. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_merge.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

static void db_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune db merge -o OUT.db [--best-only [--drop-stale]] [--meta KEY=VALUE]...\n"
            "                       [--json] IN.db...\n"
            "       fdtune db check DB [--json]\n\n"
            "merge: copies every device, environment, problem, config, run, evaluation and best\n"
            "decision of the inputs into OUT (created when missing), matching rows by what they\n"
            "are (a device by its identity, a run by host, pid, start time, device, environment\n"
            "and kind, an evaluation by run, problem, config and stage), never by row id, so\n"
            "merging a shard twice adds nothing. The best of each (device, problem) is decided\n"
            "again as tune and retune decide it: OUT's best stays unless an input's best is\n"
            "faster beyond the noise of both; the decision is recorded with the reason\n"
            "\"merge: SHARD: ...\". Inputs are read-only (an older schema is read as it is;\n"
            "nothing is created beside them) and all are checked first: one that is not an\n"
            "fdtune database, fails its integrity or foreign-key check, holds sizes out of\n"
            "bounds or comes from a newer fdtune is refused by name and nothing is written. An\n"
            "existing OUT passes the same checks before anything is written to it. The merge\n"
            "is one transaction. The hashes of the code the inputs' results were measured with\n"
            "(metadata kernel_source ...) go along with them.\n"
            "  -o OUT          the merged database: a file (a link is followed; a device, a\n"
            "                  FIFO or /dev/stdout cannot hold a database and is refused)\n"
            "  --best-only     keep one result per (device model, problem), decided by the same\n"
            "                  noise rule, and only what it refers to; compact, rollback journal\n"
            "                  (how share/fdtune/system.db is made; bench/system_db.sh); runs\n"
            "                  still running are closed as interrupted\n"
            "  --drop-stale    with --best-only: leave out results whose kernel this fdtune does\n"
            "                  not write as it was measured (check's kernels: differs, unrecorded)\n"
            "  --meta K=V      record K = V in OUT's metadata (repeatable)\n\n"
            "check (read-only: creates and changes nothing): integrity, schema version,\n"
            "foreign keys, decisions that do not name an ok full evaluation of their device\n"
            "and problem, runs sharing a natural key, integers outside their bounds (a radius\n"
            "outside 1..8, a grid size outside 1..10^9, ...); a warning for runs recorded as\n"
            "running that no process is writing any more; runs, devices, environments,\n"
            "problems and configs nothing refers to; kernels: whether each best was measured\n"
            "with the kernel this fdtune writes for it (this generator; another whose recorded\n"
            "code is unchanged; code that differs; another generator and no record), the stale\n"
            "ones listed; the metadata; rows per table and, per (device, problem): evaluations,\n"
            "ok ones, runs, whether the best is a recorded decision, and the best median.\n\n"
            "exit status: 0 merged / sound, 1 check found a problem, 2 bad arguments, 4 an input\n"
            "was refused or a database could not be read or written.\n");
    print_exit_statuses(f);
}

/* ------------------------------------------------------------------ merge */

static const fdt_col counts_cols[] = {
    {"devices", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"environments", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"problems", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"configs", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"runs", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"evaluations", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"decisions", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"metadata", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"links", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
};

/* Rows per table as a JSON object named key (nothing in the table form). */
static void emit_counts(fdt_emit *m, const char *key, const fdt_db_counts *c)
{
    if (m->mode != FDT_EMIT_JSON)
        return;
    fdt_emit_table(m, counts_cols, NCOLS(counts_cols));
    fdt_emit_row(m, key);
    fdt_emit_cell_int(m, c->devices);
    fdt_emit_cell_int(m, c->environments);
    fdt_emit_cell_int(m, c->problems);
    fdt_emit_cell_int(m, c->configs);
    fdt_emit_cell_int(m, c->runs);
    fdt_emit_cell_int(m, c->evaluations);
    fdt_emit_cell_int(m, c->decisions);
    fdt_emit_cell_int(m, c->metadata);
    fdt_emit_cell_int(m, c->links);
    fdt_emit_row_end(m);
    fdt_emit_table_end(m);
}

static void counts_text(fdt_sb *b, const fdt_db_counts *c)
{
    fdt_sb_printf(b, "%lld devices, %lld environments, %lld problems, %lld configs, %lld runs, "
                     "%lld evaluations, %lld decisions",
                  (long long)c->devices, (long long)c->environments, (long long)c->problems,
                  (long long)c->configs, (long long)c->runs, (long long)c->evaluations,
                  (long long)c->decisions);
}

static const fdt_col input_cols[] = {
    {"path", "input", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"schema", "schema", FDT_COL_INT, "v%lld", FDT_SHOW_ALL, 0},
    {"runs", "runs", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"evaluations", "evals", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"new_runs", "new runs", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"new_evaluations", "new evals", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"new_decisions", "new decisions", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"bests", "bests", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"won", "best after", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
};

static void render_merge(fdt_emit *m, const fdt_merge_opts *o, const fdt_merge_report *r)
{
    emit_doc_begin(m);
    fdt_emit_str(m, "command", "db merge");
    fdt_emit_str(m, "output", o->out);
    fdt_emit_bool(m, "created", r->created);
    fdt_emit_bool(m, "best_only", o->best_only);
    fdt_emit_array(m, "inputs");
    fdt_emit_table(m, input_cols, NCOLS(input_cols));
    for (size_t i = 0; i < r->nin; i++) {
        const fdt_merge_input *mi = &r->in[i];
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, mi->path);
        fdt_emit_cell_int(m, mi->version);
        fdt_emit_cell_int(m, mi->rows.runs);
        fdt_emit_cell_int(m, mi->rows.evaluations);
        fdt_emit_cell_int(m, mi->added.runs);
        fdt_emit_cell_int(m, mi->added.evaluations);
        fdt_emit_cell_int(m, mi->added.decisions);
        fdt_emit_cell_int(m, mi->bests);
        fdt_emit_cell_int(m, mi->won);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    emit_counts(m, "before", &r->before);
    emit_counts(m, "after", &r->after);
    if (o->best_only)
        emit_counts(m, "pruned", &r->pruned);
    fdt_emit_int(m, "merge_decisions", r->decisions);
    fdt_emit_int(m, "stale_dropped", r->stale);
    fdt_emit_int(m, "runs_closed", r->closed);
    fdt_sb t;
    fdt_sb_init(&t);
    counts_text(&t, &r->after);
    fdt_emit_text(m, "\n%s %s: %s; %lld best decisions recorded by the merge\n", o->out,
                  r->created ? "created" : "now holds", fdt_sb_str(&t), (long long)r->decisions);
    if (o->drop_stale)
        fdt_emit_text(m, "%lld results left out: their kernel is not the one this fdtune writes, "
                         "or its code was never recorded\n", (long long)r->stale);
    if (r->closed)
        fdt_emit_text(m, "%lld runs still running closed as interrupted (finished: their last "
                         "evaluation)\n", (long long)r->closed);
    fdt_sb_free(&t);
    fdt_emit_end(m);
}

static int db_merge(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"best-only", no_argument, 0, 'b'},
        {"meta", required_argument, 0, 'm'},   {"json", no_argument, 0, 'j'},
        {"drop-stale", no_argument, 0, 's'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    fdt_merge_opts o;
    memset(&o, 0, sizeof o);
    const char **meta = calloc((size_t)argc + 1, sizeof *meta);
    int json = 0, c;
    if (!meta) {
        print_error("out of memory");
        return EXIT_ERROR;
    }
    /* The command line as typed (getopt reorders argv), for the metadata. */
    fdt_sb cmdline;
    command_line(&cmdline, "db merge", argc, argv);
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': o.out = optarg; break;
        case 'b': o.best_only = 1; break;
        case 's': o.drop_stale = 1; break;
        case 'm': meta[o.nmeta++] = optarg; break;
        case 'j': json = 1; break;
        case 'h': free(meta); fdt_sb_free(&cmdline); return print_help("db", db_usage);
        default: free(meta); fdt_sb_free(&cmdline); return bad_option("db merge", argv, "o:h", opts);
        }
    }
    if (!o.out || !*o.out || optind >= argc || (o.drop_stale && !o.best_only)) {
        free(meta);
        fdt_sb_free(&cmdline);
        die_usage("db merge", "%s", !o.out || !*o.out ? "-o OUT is required"
                                    : optind >= argc  ? "which databases? (IN.db...)"
                                                      : "--drop-stale needs --best-only");
    }
    o.in = (const char *const *)argv + optind;
    o.nin = (size_t)(argc - optind);
    o.meta = meta;
    o.fdtune_version = FDTUNE_VERSION;
    o.command = fdt_sb_str(&cmdline);
    fdt_merge_report r;
    fdt_err e;
    fdt_status st = fdt_merge(&o, &r, &e);
    int rc = exit_status(st);
    if (st != FDT_STATUS_OK) {
        print_error("%s", e.msg);
    } else {
        fdt_sb b;
        fdt_emit m;
        emit_init(&m, json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
        render_merge(&m, &o, &r);
        rc = emit_done(&m) ? EXIT_ERROR : EXIT_OK;
    }
    fdt_merge_report_free(&r);
    fdt_sb_free(&cmdline);
    free(meta);
    return rc;
}

/* ------------------------------------------------------------------ check */

static const fdt_col pair_cols[] = {
    {"device", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"arch", "arch", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"backend", "backend", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"uuid", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    PROBLEM_COLS,
    {"evaluations", "evals", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"ok", "ok", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"runs", "runs", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"decided", "decided", FDT_COL_BOOL, NULL, FDT_SHOW_ALL, 0},
    {"best_ms", "best ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
};

static int emit_pair(void *ctx, const fdt_db_pair *q)
{
    fdt_emit *m = ctx;
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, q->device.name);
    fdt_emit_cell_str(m, q->device.arch);
    fdt_emit_cell_str(m, q->device.backend);
    fdt_emit_cell_str(m, q->device.uuid);
    emit_problem_cells(m, &q->problem);
    fdt_emit_cell_int(m, q->evaluations);
    fdt_emit_cell_int(m, q->ok);
    fdt_emit_cell_int(m, q->runs);
    fdt_emit_cell_bool(m, q->decided);
    fdt_emit_cell_real(m, q->best_ms);
    fdt_emit_row_end(m);
    return 0;
}

static int emit_meta(void *ctx, const char *key, const char *value)
{
    fdt_emit *m = ctx;
    if (fdt_db_kernel_is_source_key(key))
        return 0; /* one per result: summed up under "kernels" */
    fdt_emit_str(m, key, value);
    fdt_emit_text(m, "  %-18s %s\n", key, value);
    return 0;
}

/* ------------------------------------------------------------------ kernels */

static const fdt_col stale_cols[] = {
    {"kernel", "  kernel", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"device", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"arch", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    PROBLEM_COLS,
    {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"generator", "measured with generator", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"source_key", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"recorded_hash", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"source_hash", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
};

/* The bests' kernel states, counted, and the stale ones (differs, unrecorded) listed. */
typedef struct kernel_tally {
    fdt_emit *m;
    fdt_db *db;
    int64_t n[FDT_DB_KERNEL_COUNT];
    int listing; /* 0: counting; 1: emitting the stale ones */
} kernel_tally;

static int tally_kernel(void *ctx, const fdt_db_row *row, fdt_db_kernel k)
{
    kernel_tally *t = ctx;
    if (!t->listing) {
        t->n[k]++;
        return 0;
    }
    if (k != FDT_DB_KERNEL_DIFFERS && k != FDT_DB_KERNEL_UNRECORDED)
        return 0;
    fdt_emit_row(t->m, NULL);
    fdt_emit_cell_str(t->m, fdt_db_kernel_name(k));
    fdt_emit_cell_str(t->m, row->device.name);
    fdt_emit_cell_str(t->m, row->device.arch);
    emit_problem_cells(t->m, &row->problem);
    fdt_emit_cell_str(t->m, row->ev.config);
    fdt_emit_cell_str(t->m, row->env.generator);
    /* the code recorded as measured, and what this generator writes ("": none) */
    char recorded[40] = "", now[40] = "", key[512];
    int found;
    fdt_err e;
    fdt_db_kernel_key(row, key, sizeof key);
    fdt_emit_cell_str(t->m, key);
    if (fdt_db_kernel_recorded(t->db, row, recorded, sizeof recorded, &found, &e))
        recorded[0] = 0;
    if (fdt_db_kernel_hash(row, now, sizeof now, &e))
        now[0] = 0;
    fdt_emit_cell_str(t->m, recorded);
    fdt_emit_cell_str(t->m, now);
    fdt_emit_row_end(t->m);
    return 0;
}

/* Whether each best was measured with the kernel this fdtune writes (fdt_db_kernels). */
static int render_kernels(fdt_emit *m, fdt_db *db, fdt_err *e)
{
    kernel_tally t = {m, db, {0}, 0};
    if (fdt_db_kernels(db, tally_kernel, &t, e))
        return -1;
    fdt_emit_object(m, "kernels");
    fdt_emit_int(m, "this_generator", t.n[FDT_DB_KERNEL_CURRENT]);
    fdt_emit_int(m, "unchanged", t.n[FDT_DB_KERNEL_UNCHANGED]);
    fdt_emit_int(m, "differs", t.n[FDT_DB_KERNEL_DIFFERS]);
    fdt_emit_int(m, "unrecorded", t.n[FDT_DB_KERNEL_UNRECORDED]);
    fdt_emit_text(m, "kernels       %lld results measured with this generator, %lld with another "
                     "whose kernel is unchanged (recorded), %lld whose kernel differs, %lld with "
                     "another and nothing recorded\n",
                  (long long)t.n[FDT_DB_KERNEL_CURRENT], (long long)t.n[FDT_DB_KERNEL_UNCHANGED],
                  (long long)t.n[FDT_DB_KERNEL_DIFFERS], (long long)t.n[FDT_DB_KERNEL_UNRECORDED]);
    int stale = t.n[FDT_DB_KERNEL_DIFFERS] + t.n[FDT_DB_KERNEL_UNRECORDED] > 0;
    if (stale)
        fdt_emit_text(m, "              re-tune these to measure the kernels this fdtune "
                         "writes:\n");
    fdt_emit_array(m, "stale");
    fdt_emit_table(m, stale_cols, NCOLS(stale_cols));
    t.listing = 1;
    int rc = stale ? fdt_db_kernels(db, tally_kernel, &t, e) : 0;
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_end(m);
    return rc;
}

/* One finding: "ok" or what is wrong, in the table and as a JSON member. */
static void finding(fdt_emit *m, const char *key, const char *label, int64_t n, const char *what)
{
    fdt_emit_int(m, key, n);
    if (n)
        fdt_emit_text(m, "%-13s %lld %s\n", label, (long long)n, what);
    else
        fdt_emit_text(m, "%-13s ok\n", label);
}

static void render_health(fdt_emit *m, fdt_db *db, const fdt_db_health *h)
{
    char fs[16];
    int network = 0;
    fdt_err e;
    if (fdt_db_fs_kind(fdt_db_path(db), fs, sizeof fs, &network, &e))
        snprintf(fs, sizeof fs, "?");
    fdt_emit_str(m, "database", fdt_db_path(db));
    fdt_emit_int(m, "version", h->version);
    fdt_emit_int(m, "fdtune_schema", fdt_db_schema_version());
    fdt_emit_str(m, "filesystem", network ? fs : "local");
    fdt_emit_bool(m, "network", network);
    fdt_emit_bool(m, "healthy", !fdt_db_health_bad(h));
    fdt_emit_str(m, "integrity", h->integrity[0] ? h->integrity : "ok");
    fdt_emit_text(m, "database      %s\nschema        v%d (this fdtune writes v%d)\n",
                  fdt_db_path(db), h->version, fdt_db_schema_version());
    fdt_emit_text(m, "file system   %s\n", network ? fs : "local");
    fdt_emit_text(m, "integrity     %s\n", h->integrity[0] ? h->integrity : "ok");
    finding(m, "fk_violations", "foreign keys", h->fk_violations, "rows refer to missing rows");
    finding(m, "bad_decisions", "decisions", h->bad_decisions,
            "best decisions do not name an ok full evaluation of their device and problem");
    finding(m, "bad_runs", "run keys", h->bad_runs,
            "runs share a natural key (host, pid, start time, device, environment, kind)");
    char what[400];
    snprintf(what, sizeof what, "rows hold integers outside fdtune's bounds, first %s",
             h->out_of_bounds_first);
    finding(m, "out_of_bounds", "bounds", h->out_of_bounds, what);
    fdt_emit_int(m, "running_runs", h->running_runs);
    fdt_emit_int(m, "stale_runs", h->stale_runs);
    fdt_emit_str(m, "stale_run", h->stale_first);
    if (h->stale_runs)
        fdt_emit_text(m, "running       warning: %lld run(s) recorded as running that no "
                         "process is writing any more, first %s: cut off (killed, crashed, or "
                         "copied mid-run); their results stand, the runs never finish\n",
                      (long long)h->stale_runs, h->stale_first);
    else
        fdt_emit_text(m, "running       %lld run(s) in progress\n", (long long)h->running_runs);
    fdt_emit_object(m, "unused");
    fdt_emit_int(m, "idle_runs", h->idle_runs);
    fdt_emit_int(m, "devices", h->unused_devices);
    fdt_emit_int(m, "environments", h->unused_environments);
    fdt_emit_int(m, "problems", h->unused_problems);
    fdt_emit_int(m, "configs", h->unused_configs);
    fdt_emit_end(m);
    fdt_emit_text(m, "unused        %lld runs without evaluations; nothing refers to %lld "
                     "devices, %lld environments, %lld problems, %lld configs\n",
                  (long long)h->idle_runs, (long long)h->unused_devices,
                  (long long)h->unused_environments, (long long)h->unused_problems,
                  (long long)h->unused_configs);
    emit_counts(m, "rows", &h->rows);
    fdt_sb t;
    fdt_sb_init(&t);
    counts_text(&t, &h->rows);
    fdt_emit_text(m, "rows          %s, %lld metadata\n", fdt_sb_str(&t),
                  (long long)h->rows.metadata);
    fdt_sb_free(&t);
}

static int db_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'h': return print_help("db", db_usage);
        default: return bad_option("db check", argv, "h", opts);
        }
    }
    if (optind != argc - 1)
        die_usage("db check", "%s", optind >= argc ? "which database? (DB)"
                                                   : "one database at a time");
    fdt_db *db = NULL;
    fdt_err e;
    fdt_db_health h;
    if (fdt_db_open(argv[optind], FDT_DB_READONLY, &db, &e) || fdt_db_health_check(db, &h, &e)) {
        print_error("%s", e.msg);
        fdt_db_close(db);
        return EXIT_ERROR;
    }
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
    emit_doc_begin(&m);
    fdt_emit_str(&m, "command", "db check");
    render_health(&m, db, &h);
    int rc = render_kernels(&m, db, &e);
    fdt_emit_object(&m, "metadata");
    fdt_emit_text(&m, "metadata%s\n", h.rows.metadata ? "" : "      none");
    if (rc == 0)
        rc = fdt_db_meta(db, emit_meta, &m, &e);
    fdt_emit_end(&m);
    fdt_emit_text(&m, "\n");
    fdt_emit_array(&m, "pairs");
    fdt_emit_table(&m, pair_cols, NCOLS(pair_cols));
    if (rc == 0)
        rc = fdt_db_pairs(db, emit_pair, &m, &e);
    fdt_emit_table_end(&m);
    fdt_emit_end(&m);
    fdt_emit_end(&m);
    if (rc)
        print_error("%s", e.msg);
    int bad = fdt_db_health_bad(&h) || rc;
    fdt_db_close(db);
    if (emit_done(&m))
        return EXIT_ERROR;
    return bad ? EXIT_FAIL : EXIT_OK;
}

/* ------------------------------------------------------------------ entry */

int cmd_db(int argc, char **argv)
{
    if (argc < 2) {
        db_usage(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
        return print_help("db", db_usage);
    if (!strcmp(argv[1], "merge"))
        return db_merge(argc - 1, argv + 1);
    if (!strcmp(argv[1], "check"))
        return db_check(argc - 1, argv + 1);
    if (argv[1][0] == '-') { /* an option before the subcommand */
        optind = 2;
        optopt = 0;
        return bad_option("db", argv, "h", NULL);
    }
    die_usage("db", "unknown subcommand '%s' (merge or check)", argv[1]);
    return EXIT_USAGE;
}
