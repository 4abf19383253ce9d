/* fdtune retune: the nightly check of the tuning database on a GPU node. Takes the retune
 * lock of the database, matches the devices it holds results for to the visible GPUs, and
 * for each (device, problem) measures the stored best and its runners-up again, re-searches
 * when the software environment changed or the best regressed, and records a new best only
 * when it is faster beyond noise (all in tuner/retune.c). This file parses the options, runs
 * one GPU worker per visible device with work, shows progress on stderr and prints the
 * report (tables, or JSON, through the emitter), and maps the outcome to the exit status. */
#include "cli.h"
#include "fdt_db.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "fdt_retune.h"
#include "fdt_tune.h"
#include "tune_output.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef FDTUNE_VERSION
#define FDTUNE_VERSION "0.0.0"
#endif

static void retune_usage(FILE *f)
{
    fprintf(f,
            "usage: fdtune retune [--gpu NAME] [--op OP[,OP...]] [--since 7d] [--regression 5%%]\n"
            "                     [--budget N] [--db PATH] [--json] [options]\n\n"
            "Re-measures what the tuning database holds for the GPUs visible here: for every\n"
            "(device, problem) tuned on one of them, the stored best config and its runners-up\n"
            "get a full sample again (stored as a run of kind retune). When the software\n"
            "environment changed since the best was measured (driver, runtime, compiler,\n"
            "fdtune version, generator), or the best got slower than its stored median by\n"
            "more than the threshold, the problem is searched again within a budget. A new\n"
            "best replaces the old one only when it is faster beyond the measurement noise of\n"
            "both (interquartile ranges). Meant for a nightly cron job or systemd timer.\n\n"
            "  --gpu NAME       only devices whose name or arch contains NAME (any case)\n"
            "  --op OPS         only these operators, comma-separated or repeated\n"
            "  --since T        only problems with a run in the last T (7d, 12h, 30m)\n"
            "  --regression P   threshold in percent of the stored median (default 5%%)\n"
            "  --budget N       evaluations of a re-search (default %d)\n"
            "  --strategy S     of a re-search: exhaustive, random or model (default model)\n"
            "  --jobs N         parallel compilations (default: CPU cores)\n"
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
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    if (stop_flag) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    stop_flag = 1;
}

typedef struct retune_args {
    const char *gpu, *db;
    unsigned ops;
    double since_s;      /* 0: no cutoff */
    double threshold;
    long budget, jobs, timeout;
    fdt_search_kind strategy;
    int json, force_env, help;
} retune_args;

static int add_ops(const char *arg, unsigned *ops)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        fdt_op op;
        fdt_err e;
        if (fdt_op_parse(tok, &op, &e)) {
            print_error("--op: %s", e.msg);
            return -1;
        }
        *ops |= 1u << op;
    }
    return 0;
}

/* "5%", "5" and "2.5%" are percent of the stored median. */
static int parse_percent(const char *s, double *frac)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || (*end && strcmp(end, "%")) || !(v > 0) || v > 100)
        return -1;
    *frac = v / 100;
    return 0;
}

static int parse(int argc, char **argv, retune_args *a)
{
    static const struct option opts[] = {
        {"gpu", required_argument, 0, 'G'},        {"op", required_argument, 0, 'o'},
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
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'G': a->gpu = optarg; break;
        case 'D': a->db = optarg; break;
        case 'j': a->json = 1; break;
        case 'F': a->force_env = 1; break;
        case 'h': a->help = 1; return EXIT_OK;
        case 'o':
            if (add_ops(optarg, &a->ops))
                return EXIT_USAGE;
            break;
        case 's':
            if (parse_duration(optarg, &a->since_s)) {
                print_error("--since '%s': expected a duration such as 7d, 12h or 30m", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'r':
            if (parse_percent(optarg, &a->threshold)) {
                print_error("--regression '%s': expected a percentage above 0, e.g. 5%%", optarg);
                return EXIT_USAGE;
            }
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
        default:
            retune_usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        print_error("retune: unexpected argument '%s' (see 'fdtune retune --help')",
                    argv[optind]);
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

/* Everything the report needs about one visible GPU that had work. */
typedef struct gpu_done {
    int live;
    int64_t run_id;
    fdt_db_env env;
    int started;      /* a worker ran on it */
    char error[512];  /* why it could not be used */
} gpu_done;

typedef struct report {
    const retune_args *a;
    const char *db_path;
    const char *since;        /* cutoff, "" when none */
    const fdt_probe *pr;
    const fdt_retune_plan *plan;
    const fdt_retune_outcome *out;
    const int *done;          /* out[i] is filled */
    const gpu_done *gpus;
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

static int unrecovered(const fdt_retune_outcome *o)
{
    return (o->regressed && !o->recovered) || o->action == FDT_RETUNE_LOST;
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
    {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
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
    fdt_emit_cell_str(m, c->config);
    fdt_emit_cell_str(m, k ? "runner-up" : "best");
    fdt_emit_cell_str(m, fdt_db_status_name(c->status));
    fdt_emit_cell_real(m, pos(c->stored.median_ms));
    fdt_emit_cell_real(m, pos(c->now.median_ms));
    fdt_emit_cell_real(m, 100 * c->change);
    fdt_emit_cell_real(m, c->change);
    fdt_emit_cell_str(m, c->verdict == FDT_DECIDE_FAILED ? failed : verdict);
    fdt_emit_cell_str(m, verdict);
    fdt_emit_cell_int(m, c->eval_id);
    fdt_emit_cell_str(m, c->message);
    fdt_emit_row_end(m);
}

static void gpus_json(fdt_emit *m, const report *r)
{
    fdt_emit_array(m, "gpus");
    for (int g = 0; g < r->ngpus; g++) {
        const gpu_done *gd = &r->gpus[g];
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

int cmd_retune(int argc, char **argv)
{
    retune_args a;
    int rc = parse(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    if (a.help) {
        retune_usage(stdout);
        return EXIT_OK;
    }
    fdt_err e;
    char db_path[4096];
    if (a.db)
        snprintf(db_path, sizeof db_path, "%s", a.db);
    else if (fdt_db_default_path(db_path, sizeof db_path, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    fdt_db *db = NULL;
    if (fdt_db_open(db_path, FDT_DB_READWRITE, &db, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    fdt_retune_lock lock;
    int lr = fdt_retune_lock_acquire(db_path, &lock, &e);
    if (lr) {
        print_error("%s", e.msg);
        fdt_db_close(db);
        return lr > 0 ? EXIT_BUSY : EXIT_ERROR;
    }
    if (lock.took_over)
        print_note("took over the retune lock left by %s (no longer running)", lock.previous);

    fdt_catalogue *cat = NULL;
    fdt_probe *pr = calloc(1, sizeof *pr);
    fdt_retune_plan plan = {0};
    fdt_retune_outcome *out = NULL;
    int *done = NULL;
    gpu_done gpus[FDT_MAX_DEVICES];
    int ngpus = 0;
    fdt_recipe *rec[FDT_OP_COUNT] = {0};
    char since[32] = "";
    rc = EXIT_OK;

    int stale = 0;
    if (!pr) {
        print_error("out of memory");
        rc = EXIT_ERROR;
        goto out;
    }
    if (fdt_db_run_mark_stale(db, &stale, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
        goto out;
    }
    if (stale)
        print_note("%d earlier run(s) ended without finishing (killed?); marked interrupted",
                   stale);
    if (fdt_probe_devices(pr, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
        goto out;
    }
    if (pr->ndevices == 0) {
        fdt_sb why;
        fdt_sb_init(&why);
        for (int i = 0; i < pr->nbackends; i++)
            fdt_sb_printf(&why, "\n  %s: %s", pr->backend[i].name,
                          pr->backend[i].message[0] ? pr->backend[i].message : "no device");
        print_error("no GPU is visible, so nothing can be re-measured here (%s). Backends "
                    "tried:%s\n  Run retune on the GPU node that tuned the database.",
                    db_path, pr->nbackends ? fdt_sb_str(&why) : " none compiled in");
        fdt_sb_free(&why);
        rc = EXIT_NO_GPU;
        goto out;
    }
    if (load_catalogue(&cat, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
        goto out;
    }

    fdt_retune_filter flt;
    fdt_retune_filter_init(&flt);
    flt.gpu = a.gpu;
    flt.ops = a.ops;
    if (a.since_s > 0) {
        fdt_retune_cutoff(time(NULL), a.since_s, since, sizeof since);
        flt.since = since;
    }
    if (fdt_retune_plan_build(db, pr->device, pr->ndevices, &flt, &plan, &e)) {
        print_error("%s", e.msg);
        rc = EXIT_ERROR;
        goto out;
    }
    out = calloc(plan.n ? plan.n : 1, sizeof *out);
    done = calloc(plan.n ? plan.n : 1, sizeof *done);
    if (!out || !done) {
        print_error("out of memory");
        rc = EXIT_ERROR;
        goto out;
    }
    if (plan.n == 0)
        print_note("nothing to retune in %s: %zu stored problem(s) on devices not visible here, "
                   "%zu without a run since the cutoff", db_path, plan.absent, plan.older);
    /* Recipes first: a missing one should cost no GPU time. */
    for (size_t i = 0; i < plan.n; i++) {
        fdt_op op = plan.items[i].problem.op;
        if (!rec[op] && !(rec[op] = load_recipe(op, NULL))) {
            rc = EXIT_USAGE;
            goto out;
        }
    }

    char command[1024];
    join_argv(argc, argv, command, sizeof command);
    fdt_retune_opts o;
    fdt_retune_opts_default(&o);
    o.threshold = a.threshold;
    o.force_env = a.force_env;
    o.strategy = a.strategy;
    o.budget = (int)a.budget;
    if (a.jobs > 0)
        o.parallel = (int)a.jobs;
    o.command = command;
    o.stop = &stop_flag;

    struct sigaction sa = {0}, old_int, old_term;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int errors = 0;
    for (int li = 0; li < pr->ndevices && !stop_flag; li++) {
        size_t first = plan.n, count = 0;
        for (size_t i = 0; i < plan.n; i++)
            if (plan.items[i].live == li) {
                first = first < i ? first : i;
                count++;
            }
        if (!count)
            continue;
        const fdt_device *info = &pr->device[li];
        gpu_done *gd = &gpus[ngpus++];
        memset(gd, 0, sizeof *gd);
        gd->live = li;
        fdt_db_env_from_device(info, FDTUNE_VERSION, &gd->env);
        fdt_device dev = *info;
        fdt_catalogue_complete(cat, &dev);
        fdt_retune_ctx ctx = {.db = db, .dev = &dev, .env = gd->env};
        fdt_worker_opts wo;
        fdt_worker_opts_default(&wo);
        wo.eval_timeout_ms = (int)a.timeout * 1000;
        fdt_db_run run;
        fdt_db_run_init(&run);
        run.kind = FDT_DB_RETUNE;
        snprintf(run.command, sizeof run.command, "%s", command);
        snprintf(run.strategy, sizeof run.strategy, "re-measure");
        if (fdt_db_device_id(db, info, &ctx.device_id, &e) ||
            fdt_db_env_id(db, &gd->env, &ctx.env_id, &e) ||
            fdt_worker_start(info->backend, info->index, &wo, &ctx.w, NULL, &e)) {
            snprintf(gd->error, sizeof gd->error, "%s", e.msg);
            print_error("%s: %s", info->name, e.msg);
            errors++;
            continue;
        }
        run.device_id = ctx.device_id;
        run.env_id = ctx.env_id;
        if (fdt_db_run_begin(db, &run, &ctx.run_id, &e)) {
            snprintf(gd->error, sizeof gd->error, "%s", e.msg);
            print_error("%s: %s", info->name, e.msg);
            fdt_worker_stop(ctx.w);
            errors++;
            continue;
        }
        gd->run_id = ctx.run_id;
        gd->started = 1;
        tune_progress prog;
        tune_progress_init(&prog, a.json);
        size_t k = 0;
        for (size_t i = first; i < plan.n && !stop_flag; i++) {
            const fdt_retune_item *it = &plan.items[i];
            if (it->live != li)
                continue;
            char pk[128];
            fdt_problem_format(&it->problem, pk, sizeof pk);
            fprintf(stderr, "retune [%zu/%zu] %s %s: measuring %d stored config(s) again%s\n",
                    ++k, count, info->name, pk, it->ncand,
                    it->same_gpu ? "" : " (stored on another GPU of this model)");
            int prc = fdt_retune_problem(&ctx, it, rec[it->problem.op], &o, tune_progress_event,
                                         &prog, &out[i], &e);
            tune_progress_end(&prog);
            done[i] = 1;
            const fdt_retune_outcome *oc = &out[i];
            if (prc) {
                errors++;
                print_error("%s %s: %s", info->name, pk, oc->error[0] ? oc->error : e.msg);
            }
            if (oc->ncheck > 0) {
                char s1[32], s2[32], s3[32];
                fmt_ms(s1, sizeof s1, oc->check[0].stored.median_ms);
                fmt_ms(s2, sizeof s2, oc->check[0].now.median_ms);
                fmt_change(s3, sizeof s3, oc->check[0].change);
                fprintf(stderr, "retune [%zu/%zu] %s: best %s %s -> %s ms (%s, %s)%s%s -> %s\n",
                        k, count, pk, oc->check[0].config, s1, s2, s3,
                        fdt_decide_verdict_name(oc->check[0].verdict),
                        oc->env_changed ? "; environment changed: " : "",
                        oc->env_changed ? oc->env_diff : "", fdt_retune_action_name(oc->action));
            }
        }
        fdt_db_run_status rs = stop_flag ? FDT_DB_INTERRUPTED : FDT_DB_DONE;
        if (fdt_db_run_finish(db, ctx.run_id, rs, &e)) {
            print_error("%s", e.msg);
            errors++;
        }
        fdt_worker_stop(ctx.w);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);

    int fail = 0;
    for (size_t i = 0; i < plan.n; i++)
        if (done[i] && unrecovered(&out[i]))
            fail = 1;
    if (stop_flag)
        rc = 130;
    else if (errors)
        rc = EXIT_ERROR;
    else if (fail)
        rc = EXIT_FAIL;
    report r = {.a = &a, .db_path = db_path, .since = since, .pr = pr, .plan = &plan,
                .out = out, .done = done, .gpus = gpus, .ngpus = ngpus,
                .interrupted = stop_flag != 0};
    if (a.json)
        report_json(&r, rc);
    else
        report_text(&r);
out:
    for (int op = 0; op < FDT_OP_COUNT; op++)
        fdt_recipe_free(rec[op]);
    fdt_catalogue_free(cat);
    fdt_retune_plan_free(&plan);
    free(out);
    free(done);
    free(pr);
    fdt_retune_lock_release(&lock);
    fdt_db_close(db);
    return rc;
}
