/* fdtune retune: the nightly check of the tuning database on a GPU node. Takes the retune
 * lock of the database, matches the devices it holds results for to the visible GPUs, and
 * for each (device, problem) measures the stored best and its runners-up again, re-searches
 * when the software environment changed or the best regressed, and records a new best only
 * when it is faster beyond noise (all of it fdt_retune_run, tuner/retune_run.c and
 * tuner/retune.c). This file parses the options, shows the retune's events and progress on
 * stderr, prints the report (tables, or JSON, through the emitter) and maps the status to the
 * exit status. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "fdt_retune.h"
#include "fdt_tune.h"
#include "tune_output.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTUNE_VERSION
#define FDTUNE_VERSION "0.0.0"
#endif

static void retune_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune retune [--gpu NAME | --cpu auto] [--op OP[,OP...]] [--since 7d]\n"
            "                     [--regression 5%%]\n"
            "                     [--budget N] [--db PATH] [--json] [options]\n\n"
            "Re-measures what the tuning database holds for the GPUs visible here: for every\n"
            "(device, problem) tuned on one of them, the stored best config and its runners-up\n"
            "get a full sample again (stored as a run of kind retune). When the software\n"
            "environment changed since the best was measured (driver, runtime, compiler,\n"
            "fdtune version, generator), or the best got slower than its stored median by\n"
            "more than the threshold, the problem is searched again within a budget. A new\n"
            "best replaces the old one only when it is faster beyond the measurement noise of\n"
            "both (interquartile ranges). Meant for a nightly cron job or systemd timer.\n\n"
            "  --gpu NAME       only devices whose name or arch contains NAME (any case);\n"
            "                   auto: the first visible GPU's model\n"
            "  --cpu auto|NAME  the host CPU instead of the GPUs (NAME: a part of its model\n"
            "                   name or arch)\n"
            "  --op OPS         only these operators, comma-separated or repeated\n"
            "  --absorb W[:S]   with --op dwave (required): only its problems of this\n"
            "                   absorbing layer\n"
            "  --since T        only problems with a run in the last T (7d, 12h, 30m; at\n"
            "                   most 365d)\n"
            "  --regression P   threshold in percent of the stored median (default 5%%)\n"
            "  --budget N       evaluations of a re-search (default %d)\n"
            "  --strategy S     of a re-search: exhaustive, random or model (default model)\n"
            "  --jobs N         parallel compilations (default: CPU cores; on a GPU, at\n"
            "                   most the cores less one: the next batch compiles while it\n"
            "                   measures)\n"
            "  --timeout S      per candidate, verification and timing (default 30)\n"
            "  --db PATH        tuning database (default $FDTUNE_DB, else\n"
            "                   $XDG_DATA_HOME/fdtune/fdtune.db)\n"
            "  --json           the report as JSON (schema %d) on stdout\n"
            "  --force-env-change\n"
            "                   test flag: treat every problem as if the environment had\n"
            "                   changed, to exercise the re-search path\n\n"
            "Two retunes never overlap on one database: the second finds the lock file\n"
            "<db>.retune.lock held and exits 5, naming the holder.\n"
            "Exit status: 0 done (no regression, or every regression recovered), 1 a regression\n"
            "was not recovered (no config within the threshold of the old median) or a problem\n"
            "has no verified config any more, 2 usage, 3 no GPU visible, 4 operational error,\n"
            "5 another retune holds the lock, 130 interrupted.\n",
            FDT_RETUNE_BUDGET, FDT_JSON_SCHEMA_VERSION);
    print_exit_statuses(f);
}

typedef struct retune_args {
    const char *gpu, *cpu, *db;
    unsigned ops;
    int absorb_w;        /* --absorb: dwave's layer; 0: any */
    double absorb_s;
    double since_s;      /* 0: no cutoff */
    double threshold;
    long budget, jobs, timeout;
    fdt_search_kind strategy;
    int json, force_env, help;
} retune_args;

static int parse(int argc, char **argv, retune_args *a)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, 'G'},        {"op", required_argument, 0, 'o'},
        {"cpu", required_argument, 0, 'c'},        {"absorb", required_argument, 0, OPT_ABSORB},
        {"since", required_argument, 0, 's'},      {"regression", required_argument, 0, 'r'},
        {"budget", required_argument, 0, 'b'},     {"strategy", required_argument, 0, 'S'},
        {"jobs", required_argument, 0, 'J'},       {"timeout", required_argument, 0, 'T'},
        {"db", required_argument, 0, 'D'},         {"json", no_argument, 0, 'j'},
        {"force-env-change", no_argument, 0, 'F'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->threshold = FDT_RETUNE_THRESHOLD;
    a->budget = FDT_RETUNE_BUDGET;
    a->timeout = 30;
    a->strategy = FDT_SEARCH_MODEL;
    fdt_err e;
    problem_args pa; /* --op, parsed as every command parses it */
    problem_args_init(&pa);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'G': a->gpu = optarg; break;
        case 'c': a->cpu = optarg; break;
        case 'D': a->db = optarg; break;
        case 'j': a->json = 1; break;
        case 'F': a->force_env = 1; break;
        case 'h': a->help = 1; return EXIT_OK;
        case 'o':
        case OPT_ABSORB:
            if (problem_args_take(&pa, c, optarg) < 0)
                return EXIT_USAGE;
            break;
        case 's':
            if (parse_duration("--since", optarg, &a->since_s))
                return EXIT_USAGE;
            break;
        case 'r':
            if (parse_percent_arg("--regression", optarg, &a->threshold))
                return EXIT_USAGE;
            break;
        case 'b':
            if (parse_int_arg("--budget", optarg, 1, 100000000, &a->budget))
                return EXIT_USAGE;
            break;
        case 'J':
            if (parse_int_arg("--jobs", optarg, 1, 256, &a->jobs))
                return EXIT_USAGE;
            break;
        case 'T':
            if (parse_int_arg("--timeout", optarg, 1, 86400, &a->timeout))
                return EXIT_USAGE;
            break;
        case 'S':
            if (fdt_search_kind_parse(optarg, &a->strategy, &e)) {
                print_error("--%s", e.msg);
                return EXIT_USAGE;
            }
            break;
        default: return bad_option("retune", argv, "h", opts);
        }
    }
    if (optind < argc) {
        print_error("retune: unexpected argument '%s' (see 'fdtune retune --help')",
                    argv[optind]);
        return EXIT_USAGE;
    }
    if (problem_args_done(&pa))
        return EXIT_USAGE;
    a->ops = pa.ops;
    a->absorb_w = pa.absorb_w;
    a->absorb_s = pa.absorb_s;
    if (a->cpu && (a->gpu || !*a->cpu)) {
        print_error("retune: %s", *a->cpu ? "--cpu and --gpu together: retune the GPUs and the "
                                           "CPU one after the other"
                                         : "--cpu needs auto or a part of the CPU's name");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static void join_argv(int argc, char **argv, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "fdtune retune");
    for (int i = 1; i < argc && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, " %s", argv[i]);
}

/* ------------------------------------------------------------------ report */

typedef struct report {
    const retune_args *a;
    const char *db_path;
    const char *since;        /* cutoff, "" when none */
    const fdt_probe *pr;
    const fdt_retune_plan *plan;
    const fdt_retune_outcome *out;
    const int *done;          /* out[i] is filled */
    const fdt_retune_gpu *gpus;
    int ngpus;
    int interrupted;
} report;

static void fmt_ms(char *buf, size_t n, double ms)
{
    if (isfinite(ms) && ms > 0)
        snprintf(buf, n, "%.4f", ms);
    else
        snprintf(buf, n, "-");
}

static void fmt_change(char *buf, size_t n, double c)
{
    if (isfinite(c))
        snprintf(buf, n, "%+.1f%%", 100 * c);
    else
        snprintf(buf, n, "-");
}

static void problem_label(const fdt_retune_item *it, char *buf, size_t n)
{
    fdt_problem_format(&it->problem, buf, n);
}

static const char *gpu_label(const report *r, int live, char *buf, size_t n)
{
    const fdt_device *d = &r->pr->device[live];
    snprintf(buf, n, "%s (%s:%d)", d->name, d->backend, d->index);
    return buf;
}

/* The rule is the library's; this name keeps the report functions as they are. */
static int unrecovered(const fdt_retune_outcome *o)
{
    return fdt_retune_unrecovered(o);
}

/* How the problems that were reached fared. */
typedef struct report_counts {
    int checked, env, regressed, lost, researched, replaced;
} report_counts;

static report_counts count_outcomes(const report *r)
{
    report_counts c = {0};
    for (size_t i = 0; i < r->plan->n; i++) {
        if (!r->done[i])
            continue;
        const fdt_retune_outcome *o = &r->out[i];
        c.checked++;
        c.env += o->env_changed != 0;
        c.regressed += o->regressed;
        c.lost += unrecovered(o);
        c.researched += o->researched;
        c.replaced += o->action == FDT_RETUNE_REPLACED;
    }
    return c;
}

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

/* A positive time, else unknown. */
static double pos(double v) { return isfinite(v) && v > 0 ? v : NAN; }

/* One config measured again: a row of the table "Checked" (all problems) and of a problem's
 * "checks" in JSON. The table names the GPU and problem on a problem's first row only, and
 * shows the change in percent and a failure's message with its verdict. */
static const fdt_col check_cols[] = {
    {"gpu", "gpu", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
    {"problem", "problem", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
    CONFIG_COLS(0),
    {"role", "role", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"status", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"stored_ms", "stored ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"ms", "now ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"change", "change", FDT_COL_REAL_OPT, "%+.1f%%", FDT_SHOW_TEXT, 0},
    {"change", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"verdict", "verdict", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
    {"verdict", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"eval_id", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"message", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
};

static void check_row(fdt_emit *m, const report *r, const fdt_retune_item *it, int k,
                      const fdt_retune_check *c)
{
    char pk[128], failed[300];
    problem_label(it, pk, sizeof pk);
    snprintf(failed, sizeof failed, "failed: %s", c->message);
    const char *verdict = fdt_decide_verdict_name(c->verdict);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, k ? "" : r->pr->device[it->live].name);
    fdt_emit_cell_str(m, k ? "" : pk);
    emit_config_cells(m, c->config, &r->pr->device[it->live]);
    fdt_emit_cell_str(m, k ? "runner-up" : "best");
    fdt_emit_cell_str(m, fdt_db_status_name(c->status));
    fdt_emit_cell_real(m, pos(c->stored.median_ms));
    fdt_emit_cell_real(m, pos(c->now.median_ms));
    fdt_emit_cell_real(m, 100 * c->change);
    fdt_emit_cell_real(m, c->change);
    fdt_emit_cell_str(m, c->verdict == FDT_DECIDE_FAILED      ? failed
                         : c->verdict == FDT_DECIDE_THROTTLED ? c->message
                                                              : verdict);
    fdt_emit_cell_str(m, verdict);
    fdt_emit_cell_int(m, c->eval_id);
    fdt_emit_cell_str(m, c->message);
    fdt_emit_row_end(m);
}

static void gpus_json(fdt_emit *m, const report *r)
{
    fdt_emit_array(m, "gpus");
    for (int g = 0; g < r->ngpus; g++) {
        const fdt_retune_gpu *gd = &r->gpus[g];
        const fdt_device *d = &r->pr->device[gd->live];
        fdt_emit_object(m, NULL);
        fdt_emit_str(m, "name", d->name);
        fdt_emit_str(m, "backend", d->backend);
        fdt_emit_int(m, "index", d->index);
        fdt_emit_str(m, "arch", d->arch);
        fdt_emit_str(m, "uuid", d->uuid);
        fdt_emit_int_opt(m, "run_id", gd->run_id > 0 ? gd->run_id : -1);
        if (gd->error[0])
            fdt_emit_str(m, "error", gd->error);
        emit_env(m, "environment", &gd->env);
        fdt_emit_end(m);
    }
    fdt_emit_end(m);
}

/* What a problem was, where it was measured, and what changed in its environment. */
static void problem_json_head(fdt_emit *m, const report *r, const fdt_retune_item *it,
                              const fdt_retune_outcome *o)
{
    const fdt_device *d = &r->pr->device[it->live];
    fdt_emit_str(m, "gpu", d->name);
    fdt_emit_int(m, "gpu_index", d->index);
    fdt_emit_str(m, "stored_device", it->device.name);
    fdt_emit_str(m, "stored_uuid", it->device.uuid);
    fdt_emit_bool(m, "same_gpu", it->same_gpu);
    fdt_emit_str(m, "op", fdt_op_name(it->problem.op));
    fdt_emit_int(m, "R", it->problem.R);
    fdt_emit_str(m, "precision", fdt_prec_name(it->problem.prec));
    fdt_emit_array(m, "grid");
    fdt_emit_int(m, NULL, it->problem.nx);
    fdt_emit_int(m, NULL, it->problem.ny);
    fdt_emit_int(m, NULL, it->problem.nz);
    fdt_emit_end(m);
    fdt_emit_array(m, "env_changed");
    for (unsigned bit = 1; bit <= FDT_DECIDE_ENV_GENERATOR; bit <<= 1)
        if (o->env_changed & bit)
            fdt_emit_str(m, NULL, fdt_decide_env_field(bit));
    fdt_emit_end(m);
    fdt_emit_str(m, "env_diff", o->env_diff);
    emit_env(m, "stored_environment", &it->cand[0].env);
}

static void problem_json(fdt_emit *m, const report *r, const fdt_retune_item *it,
                         const fdt_retune_outcome *o)
{
    fdt_emit_object(m, NULL);
    problem_json_head(m, r, it, o);
    fdt_emit_bool(m, "regressed", o->regressed);
    fdt_emit_bool(m, "recovered", o->recovered);
    fdt_emit_bool(m, "researched", o->researched);
    fdt_emit_int(m, "run_id", o->run_id);
    if (o->research_run_id > 0) {
        fdt_emit_int(m, "research_run_id", o->research_run_id);
        fdt_emit_int(m, "research_tried", o->research_tried);
        fdt_emit_str(m, "research_best", o->research_best);
        fdt_emit_real_opt(m, "research_best_ms", pos(o->research_best_ms));
    }
    fdt_emit_str(m, "action", fdt_retune_action_name(o->action));
    fdt_emit_str(m, "reason", o->reason);
    fdt_emit_object(m, "best");
    fdt_emit_str(m, "config", o->best_config);
    fdt_emit_int(m, "eval_id", o->best_eval_id);
    fdt_emit_real_opt(m, "median_ms", pos(o->best.median_ms));
    fdt_emit_real_opt(m, "stored_median_ms", pos(it->cand[0].ev.time_ms));
    fdt_emit_end(m);
    fdt_emit_real_opt(m, "fastest_today_ms", pos(o->fastest_ms));
    fdt_emit_array(m, "checks");
    fdt_emit_table(m, check_cols, NCOLS(check_cols));
    for (int k = 0; k < o->ncheck; k++)
        check_row(m, r, it, k, &o->check[k]);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_str_opt(m, "error", o->error);
    fdt_emit_real_opt(m, "wall_s", pos(o->wall_s));
    fdt_emit_end(m);
}

static void report_json(const report *r, int status)
{
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, FDT_EMIT_JSON, &b);
    emit_doc_begin(&m);
    fdt_emit_str(&m, "command", "retune");
    fdt_emit_str(&m, "database", r->db_path);
    fdt_emit_real_opt(&m, "threshold", r->a->threshold);
    fdt_emit_str_opt(&m, "since", r->since);
    fdt_emit_bool(&m, "force_env_change", r->a->force_env);
    gpus_json(&m, r);
    fdt_emit_array(&m, "problems");
    for (size_t i = 0; i < r->plan->n; i++)
        if (r->done[i])
            problem_json(&m, r, &r->plan->items[i], &r->out[i]);
    fdt_emit_end(&m);
    report_counts c = count_outcomes(r);
    fdt_emit_object(&m, "skipped");
    fdt_emit_int(&m, "not_visible", (long long)r->plan->absent);
    fdt_emit_int(&m, "older_than_since", (long long)r->plan->older);
    fdt_emit_int(&m, "same_gpu_duplicate", (long long)r->plan->duplicate);
    fdt_emit_int(&m, "not_reached", (long long)(r->plan->n - (size_t)c.checked));
    fdt_emit_end(&m);
    fdt_emit_object(&m, "summary");
    fdt_emit_int(&m, "checked", c.checked);
    fdt_emit_int(&m, "env_changed", c.env);
    fdt_emit_int(&m, "regressed", c.regressed);
    fdt_emit_int(&m, "not_recovered", c.lost);
    fdt_emit_int(&m, "researched", c.researched);
    fdt_emit_int(&m, "replaced", c.replaced);
    fdt_emit_end(&m);
    fdt_emit_bool(&m, "interrupted", r->interrupted);
    fdt_emit_int(&m, "exit", status);
    fdt_emit_end(&m);
    emit_done(&m);
}

/* The title, and each GPU's software environment (and why one could not be used). */
static void report_text_head(fdt_emit *m, const report *r)
{
    char lbl[200];
    fdt_emit_text(m, "%sfdtune retune%s  database %s, regression threshold %.1f%%%s%s\n",
                  col(stdout, "\033[1m"), col(stdout, "\033[0m"), r->db_path,
                  100 * r->a->threshold, r->since[0] ? ", runs since " : "", r->since);
    for (int g = 0; g < r->ngpus; g++) {
        const fdt_db_env *v = &r->gpus[g].env;
        fdt_emit_text(m, "%s: driver %s, runtime %s, compiler %s, fdtune %s, generator %s%s%s\n",
                      gpu_label(r, r->gpus[g].live, lbl, sizeof lbl), v->driver, v->runtime,
                      v->compiler, v->fdtune_version, v->generator,
                      r->gpus[g].error[0] ? "\n  not used: " : "", r->gpus[g].error);
    }
}

static void section_title(fdt_emit *m, const char *title, const char *more)
{
    fdt_emit_text(m, "\n%s%s%s%s\n", col(stdout, "\033[1m"), title, col(stdout, "\033[0m"),
                  more);
}

/* Every config measured again, stored median against today's. */
static void checked_table(fdt_emit *m, const report *r)
{
    int any = 0;
    section_title(m, "Checked", " (full samples, stored median vs today)");
    fdt_emit_table(m, check_cols, NCOLS(check_cols));
    for (size_t i = 0; i < r->plan->n; i++) {
        if (!r->done[i])
            continue;
        const fdt_retune_outcome *o = &r->out[i];
        for (int k = 0; k < o->ncheck; k++) {
            check_row(m, r, &r->plan->items[i], k, &o->check[k]);
            any = 1;
        }
    }
    fdt_emit_table_end(m);
    if (!any)
        fdt_emit_text(m, "  nothing\n");
}

enum { SEC_ENV, SEC_REGRESSED, SEC_IMPROVED, SEC_RESEARCHED, SEC_ERRORS, SEC_COUNT };

/* The line of section `sec` about one problem; "" when it has nothing to say there. */
static void section_line(const report *r, size_t i, int sec, char *line, size_t n)
{
    const fdt_retune_item *it = &r->plan->items[i];
    const fdt_retune_outcome *o = &r->out[i];
    const fdt_retune_check *c = &o->check[0];
    const char *gpu = r->pr->device[it->live].name;
    char pk[128], s1[32], s2[32], s3[32], fast[32];
    problem_label(it, pk, sizeof pk);
    line[0] = 0;
    if (sec == SEC_ENV && o->env_changed)
        snprintf(line, n, "%s %s: %s", gpu, pk, o->env_diff);
    else if (sec == SEC_ENV && o->forced)
        snprintf(line, n, "%s %s: forced (--force-env-change)", gpu, pk);
    else if (sec == SEC_REGRESSED && o->regressed) {
        fmt_ms(s1, sizeof s1, c->stored.median_ms);
        fmt_ms(s2, sizeof s2, c->now.median_ms);
        fmt_change(s3, sizeof s3, c->change);
        fmt_ms(fast, sizeof fast, o->fastest_ms);
        snprintf(line, n, "%s %s: best %s %s -> %s ms (%s); %s (fastest today %s ms)", gpu, pk,
                 c->config, s1, s2, c->verdict == FDT_DECIDE_FAILED ? c->message : s3,
                 o->recovered ? "recovered" : "NOT recovered", fast);
    } else if (sec == SEC_IMPROVED) {
        for (int k = 0; k < o->ncheck; k++)
            if (o->check[k].verdict == FDT_DECIDE_IMPROVED) {
                size_t len = strlen(line);
                fmt_change(s3, sizeof s3, o->check[k].change);
                snprintf(line + len, n - len, "%s%s %s: %s %s", len ? "; " : "", gpu, pk,
                         o->check[k].config, s3);
            }
        if (o->action == FDT_RETUNE_REPLACED) {
            size_t len = strlen(line);
            fmt_ms(s1, sizeof s1, it->cand[0].ev.time_ms);
            fmt_ms(s2, sizeof s2, o->best.median_ms);
            snprintf(line + len, n - len, "%s%s %s: new best %s %s ms (was %s %s ms)",
                     len ? "; " : "", gpu, pk, o->best_config, s2, it->cand[0].ev.config, s1);
        }
    } else if (sec == SEC_RESEARCHED && o->researched) {
        fmt_ms(s1, sizeof s1, o->research_best_ms);
        snprintf(line, n, "%s %s: run %lld, %d configs measured, its fastest %s %s ms -> %s%s%s",
                 gpu, pk, (long long)o->research_run_id, o->research_tried,
                 o->research_best[0] ? o->research_best : "(none verified)", s1,
                 fdt_retune_action_name(o->action), o->reason[0] ? ": " : "", o->reason);
    } else if (sec == SEC_ERRORS && o->error[0])
        snprintf(line, n, "%s %s: %s", gpu, pk, o->error);
}

/* One line per notable event, grouped the way a reader scans a nightly log. */
static void sections(fdt_emit *m, const report *r)
{
    static const char *const titles[SEC_COUNT] = {"Environment changed", "Regressed",
                                                  "Improved", "Re-searched", "Errors"};
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        int n = 0;
        for (size_t i = 0; i < r->plan->n; i++) {
            char line[1400];
            if (!r->done[i])
                continue;
            section_line(r, i, sec, line, sizeof line);
            if (!line[0])
                continue;
            if (!n++)
                section_title(m, titles[sec], "");
            fdt_emit_text(m, "  %s\n", line);
        }
    }
}

/* The best of each problem after this retune, and what was done about it. */
static const fdt_col best_cols[] = {
    {"gpu", "gpu", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"problem", "problem", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"best", "best", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"median_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"action", "action", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"reason", "reason", FDT_COL_STR_OPT, NULL, FDT_SHOW_ALL, 0},
};

static void best_table(fdt_emit *m, const report *r)
{
    char pk[128];
    if (count_outcomes(r).checked)
        section_title(m, "Best after this retune", "");
    fdt_emit_table(m, best_cols, NCOLS(best_cols));
    for (size_t i = 0; i < r->plan->n; i++) {
        if (!r->done[i])
            continue;
        const fdt_retune_item *it = &r->plan->items[i];
        const fdt_retune_outcome *o = &r->out[i];
        problem_label(it, pk, sizeof pk);
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, r->pr->device[it->live].name);
        fdt_emit_cell_str(m, pk);
        fdt_emit_cell_str(m, o->best_config);
        fdt_emit_cell_real(m, pos(o->best.median_ms));
        fdt_emit_cell_str(m, fdt_retune_action_name(o->action));
        fdt_emit_cell_str(m, o->reason);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
}

static void report_text(const report *r)
{
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, FDT_EMIT_TEXT, &b);
    report_text_head(&m, r);
    checked_table(&m, r);
    sections(&m, r);
    best_table(&m, r);
    report_counts c = count_outcomes(r);
    fdt_emit_text(&m, "\n%d problem(s) checked, %d regressed (%d not recovered), %d re-searched, "
                      "%d best(s) replaced",
                  c.checked, c.regressed, c.lost, c.researched, c.replaced);
    if (r->plan->absent || r->plan->older || r->plan->duplicate)
        fdt_emit_text(&m, "; skipped: %zu on devices not visible here, %zu without a run since "
                          "the cutoff, %zu stored on another GPU of a model already checked",
                      r->plan->absent, r->plan->older, r->plan->duplicate);
    if (r->interrupted)
        fdt_emit_text(&m, "; interrupted (%zu not reached)", r->plan->n - (size_t)c.checked);
    fdt_emit_text(&m, "\n");
    emit_done(&m);
}

/* ------------------------------------------------------------------ the command */

/* ------------------------------------------------------------------ the command */

/* Events of the retune on stderr, as they happen. */
typedef struct show {
    tune_progress prog; /* a re-search's progress */
} show;

static void show_event(void *ctx, const fdt_retune_event *ev)
{
    show *sh = ctx;
    const fdt_retune_outcome *oc = ev->out;
    char pk[128];
    if (ev->item)
        fdt_problem_format(&ev->item->problem, pk, sizeof pk);
    switch (ev->kind) {
    case FDT_RETUNE_EV_LOCK_TAKEN:
        print_note("took over the retune lock left by %s (no longer running)", ev->text);
        return;
    case FDT_RETUNE_EV_STALE:
        print_note("%d earlier run(s) ended without finishing (killed?); marked interrupted",
                   ev->n);
        return;
    case FDT_RETUNE_EV_NOTHING:
        print_note("nothing to retune in %s: %zu stored problem(s) on devices not visible here, "
                   "%zu without a run since the cutoff", ev->rep->db_path, ev->rep->plan.absent,
                   ev->rep->plan.older);
        return;
    case FDT_RETUNE_EV_GPU_ERROR:
        print_error("%s: %s", ev->gpu->name, ev->text);
        return;
    case FDT_RETUNE_EV_ERROR:
        print_error("%s", ev->text);
        return;
    case FDT_RETUNE_EV_BEGIN:
        fprintf(stderr, "retune [%zu/%zu] %s %s: measuring %d stored config(s) again%s\n",
                ev->k, ev->count, ev->gpu->name, pk, ev->item->ncand,
                ev->item->same_gpu ? "" : " (stored on another GPU of this model)");
        return;
    case FDT_RETUNE_EV_END:
        break;
    }
    tune_progress_end(&sh->prog);
    if (ev->text)
        print_error("%s %s: %s", ev->gpu->name, pk, ev->text);
    if (oc->ncheck > 0) {
        char s1[32], s2[32], s3[32];
        fmt_ms(s1, sizeof s1, oc->check[0].stored.median_ms);
        fmt_ms(s2, sizeof s2, oc->check[0].now.median_ms);
        fmt_change(s3, sizeof s3, oc->check[0].change);
        fprintf(stderr, "retune [%zu/%zu] %s: best %s %s -> %s ms (%s, %s)%s%s -> %s\n", ev->k,
                ev->count, pk, oc->check[0].config, s1, s2, s3,
                fdt_decide_verdict_name(oc->check[0].verdict),
                oc->env_changed ? "; environment changed: " : "",
                oc->env_changed ? oc->env_diff : "", fdt_retune_action_name(oc->action));
    }
}

static void show_progress(void *ctx, const fdt_tune_event *ev)
{
    tune_progress_event(&((show *)ctx)->prog, ev);
}

int cmd_retune(int argc, char **argv)
{
    retune_args a;
    int rc = parse(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    if (a.help)
        return print_help("retune", retune_usage);
    char command[1024];
    join_argv(argc, argv, command, sizeof command);
    fdt_retune_request rq;
    fdt_retune_request_init(&rq);
    rq.db_path = a.db;
    rq.gpu = a.gpu;
    rq.cpu = a.cpu;
    rq.ops = a.ops;
    rq.absorb_w = a.absorb_w;
    rq.absorb_s = a.absorb_s;
    rq.since_s = a.since_s;
    rq.o.threshold = a.threshold;
    rq.o.force_env = a.force_env;
    rq.o.strategy = a.strategy;
    rq.o.budget = (int)a.budget;
    if (a.jobs > 0)
        rq.o.parallel = (int)a.jobs;
    rq.o.command = command;
    rq.timeout_s = (int)a.timeout;
    rq.fdtune_version = FDTUNE_VERSION;
    fdt_retune_report *rep = malloc(sizeof *rep);
    if (!rep) {
        print_error("out of memory");
        return EXIT_ERROR;
    }
    show sh;
    tune_progress_init(&sh.prog, a.json);
    fdt_err e;
    fdt_status st = fdt_retune_run(&rq, show_event, show_progress, &sh, rep, &e);
    rc = exit_status(st);
    if (!rep->ran && st == FDT_STATUS_NO_GPU) {
        char what[4200];
        snprintf(what, sizeof what, "nothing can be re-measured here (%s)", rep->db_path);
        print_no_gpu(&rep->probe, what, "Run retune on the GPU node that tuned the database; "
                     "for the host CPU's results, --cpu auto.");
    } else if (!rep->ran) {
        print_error("%s", e.msg);
    } else {
        report r = {.a = &a, .db_path = rep->db_path, .since = rep->since, .pr = &rep->probe,
                    .plan = &rep->plan, .out = rep->out, .done = rep->done, .gpus = rep->gpus,
                    .ngpus = rep->ngpus, .interrupted = rep->interrupted};
        if (a.json)
            report_json(&r, rc);
        else
            report_text(&r);
    }
    fdt_retune_report_free(rep);
    free(rep);
    return rc;
}
