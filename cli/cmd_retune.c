/* fdtune retune: the nightly check of the tuning database on a GPU node. Takes the retune
 * lock of the database, matches the devices it holds results for to the visible GPUs, and
 * for each (device, problem) measures the stored best and its runners-up again, re-searches
 * when the software environment changed or the best regressed, and records a new best only
 * when it is faster beyond noise (all of it fdt_retune_run, tuner/retune_run.c and
 * tuner/retune.c). This file parses the options, shows the retune's events and progress on
 * stderr, prints the report (a table, or JSON) and maps the status to the exit status. */
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

static void env_json(fdt_sb *b, const char *key, const fdt_db_env *v, int comma)
{
    json_str(b, key);
    fdt_sb_puts(b, ": {");
    json_kv_str(b, "driver", v->driver, 1);
    json_kv_str(b, "runtime", v->runtime, 1);
    json_kv_str(b, "compiler", v->compiler, 1);
    json_kv_str(b, "fdtune_version", v->fdtune_version, 1);
    json_kv_str(b, "generator", v->generator, 0);
    fdt_sb_puts(b, comma ? "}, " : "}");
}

static void num_or_null(fdt_sb *b, const char *k, double v, int comma)
{
    json_kv_num(b, k, isfinite(v) && v > 0 ? v : NAN, comma);
}

/* The JSON object of plan item i (done). */
static void json_problem(fdt_sb *b, const report *r, size_t i)
{
    const fdt_retune_item *it = &r->plan->items[i];
    const fdt_retune_outcome *o = &r->out[i];
    const fdt_device *d = &r->pr->device[it->live];
    fdt_sb_puts(b, "{");
    json_kv_str(b, "gpu", d->name, 1);
    json_kv_int(b, "gpu_index", d->index, 1);
    json_kv_str(b, "stored_device", it->device.name, 1);
    json_kv_str(b, "stored_uuid", it->device.uuid, 1);
    fdt_sb_printf(b, "\"same_gpu\": %s, ", it->same_gpu ? "true" : "false");
    json_kv_str(b, "op", fdt_op_name(it->problem.op), 1);
    json_kv_int(b, "R", it->problem.R, 1);
    json_kv_str(b, "precision", fdt_prec_name(it->problem.prec), 1);
    fdt_sb_printf(b, "\"grid\": [%lld, %lld, %lld], ", (long long)it->problem.nx,
                  (long long)it->problem.ny, (long long)it->problem.nz);
    fdt_sb_puts(b, "\"env_changed\": [");
    int fc = 0;
    for (unsigned bit = 1; bit <= FDT_DECIDE_ENV_GENERATOR; bit <<= 1)
        if (o->env_changed & bit) {
            fdt_sb_puts(b, fc++ ? ", " : "");
            json_str(b, fdt_decide_env_field(bit));
        }
    fdt_sb_puts(b, "], ");
    json_kv_str(b, "env_diff", o->env_diff, 1);
    env_json(b, "stored_environment", &it->cand[0].env, 1);
    fdt_sb_printf(b, "\"regressed\": %s, \"recovered\": %s, \"researched\": %s, ",
                  o->regressed ? "true" : "false", o->recovered ? "true" : "false",
                  o->researched ? "true" : "false");
    json_kv_int(b, "run_id", o->run_id, 1);
    if (o->research_run_id > 0) {
        json_kv_int(b, "research_run_id", o->research_run_id, 1);
        json_kv_int(b, "research_tried", o->research_tried, 1);
        json_kv_str(b, "research_best", o->research_best, 1);
        num_or_null(b, "research_best_ms", o->research_best_ms, 1);
    }
    json_kv_str(b, "action", fdt_retune_action_name(o->action), 1);
    json_kv_str(b, "reason", o->reason, 1);
    fdt_sb_puts(b, "\"best\": {");
    json_kv_str(b, "config", o->best_config, 1);
    json_kv_int(b, "eval_id", o->best_eval_id, 1);
    num_or_null(b, "median_ms", o->best.median_ms, 1);
    num_or_null(b, "stored_median_ms", it->cand[0].ev.time_ms, 0);
    fdt_sb_puts(b, "}, ");
    num_or_null(b, "fastest_today_ms", o->fastest_ms, 1);
    fdt_sb_puts(b, "\"checks\": [");
    for (int k = 0; k < o->ncheck; k++) {
        const fdt_retune_check *c = &o->check[k];
        fdt_sb_puts(b, k ? ", {" : "{");
        json_kv_str(b, "config", c->config, 1);
        json_kv_str(b, "role", k ? "runner-up" : "best", 1);
        json_kv_str(b, "status", fdt_db_status_name(c->status), 1);
        num_or_null(b, "stored_ms", c->stored.median_ms, 1);
        num_or_null(b, "ms", c->now.median_ms, 1);
        json_kv_num(b, "change", c->change, 1);
        json_kv_str(b, "verdict", fdt_decide_verdict_name(c->verdict), 1);
        json_kv_int(b, "eval_id", c->eval_id, 1);
        json_kv_str(b, "message", c->message, 0);
        fdt_sb_puts(b, "}");
    }
    fdt_sb_puts(b, "], ");
    if (o->error[0])
        json_kv_str(b, "error", o->error, 1);
    else
        fdt_sb_puts(b, "\"error\": null, ");
    num_or_null(b, "wall_s", o->wall_s, 0);
    fdt_sb_puts(b, "}");
}

static void report_json(const report *r, int status)
{
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_puts(&b, "{");
    json_kv_int(&b, "schema", FDT_JSON_SCHEMA_VERSION, 1);
    json_kv_str(&b, "command", "retune", 1);
    json_kv_str(&b, "database", r->db_path, 1);
    json_kv_num(&b, "threshold", r->a->threshold, 1);
    if (r->since[0])
        json_kv_str(&b, "since", r->since, 1);
    else
        fdt_sb_puts(&b, "\"since\": null, ");
    fdt_sb_printf(&b, "\"force_env_change\": %s, ", r->a->force_env ? "true" : "false");
    fdt_sb_puts(&b, "\"gpus\": [");
    for (int g = 0; g < r->ngpus; g++) {
        const fdt_retune_gpu *gd = &r->gpus[g];
        const fdt_device *d = &r->pr->device[gd->live];
        fdt_sb_puts(&b, g ? ", {" : "{");
        json_kv_str(&b, "name", d->name, 1);
        json_kv_str(&b, "backend", d->backend, 1);
        json_kv_int(&b, "index", d->index, 1);
        json_kv_str(&b, "arch", d->arch, 1);
        json_kv_str(&b, "uuid", d->uuid, 1);
        if (gd->run_id > 0)
            json_kv_int(&b, "run_id", gd->run_id, 1);
        else
            fdt_sb_puts(&b, "\"run_id\": null, ");
        if (gd->error[0])
            json_kv_str(&b, "error", gd->error, 1);
        env_json(&b, "environment", &gd->env, 0);
        fdt_sb_puts(&b, "}");
    }
    fdt_sb_puts(&b, "], \"problems\": [");
    int first = 1;
    for (size_t i = 0; i < r->plan->n; i++) {
        if (!r->done[i])
            continue;
        fdt_sb_puts(&b, first ? "" : ", ");
        first = 0;
        json_problem(&b, r, i);
    }
    fdt_sb_puts(&b, "], ");
    int checked = 0, regressed = 0, lost = 0, researched = 0, replaced = 0, env = 0;
    for (size_t i = 0; i < r->plan->n; i++) {
        if (!r->done[i])
            continue;
        const fdt_retune_outcome *o = &r->out[i];
        checked++;
        regressed += o->regressed;
        lost += unrecovered(o);
        researched += o->researched;
        replaced += o->action == FDT_RETUNE_REPLACED;
        env += o->env_changed != 0;
    }
    fdt_sb_printf(&b, "\"skipped\": {\"not_visible\": %zu, \"older_than_since\": %zu, "
                      "\"same_gpu_duplicate\": %zu, \"not_reached\": %zu}, ",
                  r->plan->absent, r->plan->older, r->plan->duplicate,
                  r->plan->n - (size_t)checked);
    fdt_sb_printf(&b, "\"summary\": {\"checked\": %d, \"env_changed\": %d, \"regressed\": %d, "
                      "\"not_recovered\": %d, \"researched\": %d, \"replaced\": %d}, ",
                  checked, env, regressed, lost, researched, replaced);
    fdt_sb_printf(&b, "\"interrupted\": %s, ", r->interrupted ? "true" : "false");
    json_kv_int(&b, "exit", status, 0);
    fdt_sb_puts(&b, "}\n");
    fputs(fdt_sb_str(&b), stdout);
    fdt_sb_free(&b);
}

static void report_text(const report *r)
{
    FILE *f = stdout;
    char lbl[200], pk[128], s1[32], s2[32], s3[32];
    fprintf(f, "%sfdtune retune%s  database %s, regression threshold %.1f%%%s%s\n",
            col(f, "\033[1m"), col(f, "\033[0m"), r->db_path, 100 * r->a->threshold,
            r->since[0] ? ", runs since " : "", r->since);
    for (int g = 0; g < r->ngpus; g++) {
        const fdt_db_env *v = &r->gpus[g].env;
        fprintf(f, "%s: driver %s, runtime %s, compiler %s, fdtune %s, generator %s%s%s\n",
                gpu_label(r, r->gpus[g].live, lbl, sizeof lbl), v->driver, v->runtime,
                v->compiler, v->fdtune_version, v->generator,
                r->gpus[g].error[0] ? "\n  not used: " : "", r->gpus[g].error);
    }

    static const char *const hdr[] = {"gpu", "problem", "config", "role", "stored ms",
                                      "now ms", "change", "verdict"};
    table t;
    table_init(&t, 8, hdr);
    t.right[4] = t.right[5] = t.right[6] = 1;
    int any = 0;
    for (size_t i = 0; i < r->plan->n; i++) {
        if (!r->done[i])
            continue;
        const fdt_retune_item *it = &r->plan->items[i];
        const fdt_retune_outcome *o = &r->out[i];
        problem_label(it, pk, sizeof pk);
        for (int k = 0; k < o->ncheck; k++) {
            const fdt_retune_check *c = &o->check[k];
            table_add(&t, "%s", k ? "" : r->pr->device[it->live].name);
            table_add(&t, "%s", k ? "" : pk);
            table_add(&t, "%s", c->config);
            table_add(&t, "%s", k ? "runner-up" : "best");
            fmt_ms(s1, sizeof s1, c->stored.median_ms);
            fmt_ms(s2, sizeof s2, c->now.median_ms);
            fmt_change(s3, sizeof s3, c->change);
            table_add(&t, "%s", s1);
            table_add(&t, "%s", s2);
            table_add(&t, "%s", s3);
            if (c->verdict == FDT_DECIDE_FAILED)
                table_add(&t, "failed: %s", c->message);
            else
                table_add(&t, "%s", fdt_decide_verdict_name(c->verdict));
            any = 1;
        }
    }
    fprintf(f, "\n%sChecked%s (full samples, stored median vs today)\n", col(f, "\033[1m"),
            col(f, "\033[0m"));
    if (any)
        table_print(&t, f);
    else
        fprintf(f, "  nothing\n");
    table_free(&t);

    /* One line per notable event, grouped the way a reader scans a nightly log. */
    struct {
        const char *title;
        int kind;
    } sections[] = {{"Environment changed", 0}, {"Regressed", 1}, {"Improved", 2},
                    {"Re-searched", 3},         {"Errors", 4}};
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        int n = 0;
        for (size_t i = 0; i < r->plan->n; i++) {
            if (!r->done[i])
                continue;
            const fdt_retune_item *it = &r->plan->items[i];
            const fdt_retune_outcome *o = &r->out[i];
            problem_label(it, pk, sizeof pk);
            const char *gpu = r->pr->device[it->live].name;
            char line[1400] = "";
            switch (sections[s].kind) {
            case 0:
                if (o->env_changed)
                    snprintf(line, sizeof line, "%s %s: %s", gpu, pk, o->env_diff);
                else if (o->forced)
                    snprintf(line, sizeof line, "%s %s: forced (--force-env-change)", gpu, pk);
                break;
            case 1:
                if (o->regressed) {
                    const fdt_retune_check *c = &o->check[0];
                    char fast[32];
                    fmt_ms(s1, sizeof s1, c->stored.median_ms);
                    fmt_ms(s2, sizeof s2, c->now.median_ms);
                    fmt_change(s3, sizeof s3, c->change);
                    fmt_ms(fast, sizeof fast, o->fastest_ms);
                    snprintf(line, sizeof line,
                             "%s %s: best %s %s -> %s ms (%s); %s (fastest today %s ms)", gpu,
                             pk, c->config, s1, s2,
                             c->verdict == FDT_DECIDE_FAILED ? c->message : s3,
                             o->recovered ? "recovered" : "NOT recovered", fast);
                }
                break;
            case 2:
                for (int k = 0; k < o->ncheck; k++)
                    if (o->check[k].verdict == FDT_DECIDE_IMPROVED) {
                        size_t len = strlen(line);
                        fmt_change(s3, sizeof s3, o->check[k].change);
                        snprintf(line + len, sizeof line - len, "%s%s %s: %s %s", len ? "; " : "",
                                 gpu, pk, o->check[k].config, s3);
                    }
                if (o->action == FDT_RETUNE_REPLACED) {
                    size_t len = strlen(line);
                    fmt_ms(s1, sizeof s1, it->cand[0].ev.time_ms);
                    fmt_ms(s2, sizeof s2, o->best.median_ms);
                    snprintf(line + len, sizeof line - len,
                             "%s%s %s: new best %s %s ms (was %s %s ms)", len ? "; " : "", gpu,
                             pk, o->best_config, s2, it->cand[0].ev.config, s1);
                }
                break;
            case 3:
                if (o->researched) {
                    fmt_ms(s1, sizeof s1, o->research_best_ms);
                    snprintf(line, sizeof line,
                             "%s %s: run %lld, %d configs measured, its fastest %s %s ms -> "
                             "%s%s%s",
                             gpu, pk, (long long)o->research_run_id, o->research_tried,
                             o->research_best[0] ? o->research_best : "(none verified)", s1,
                             fdt_retune_action_name(o->action), o->reason[0] ? ": " : "",
                             o->reason);
                }
                break;
            case 4:
                if (o->error[0])
                    snprintf(line, sizeof line, "%s %s: %s", gpu, pk, o->error);
                break;
            }
            if (!line[0])
                continue;
            if (!n++)
                fprintf(f, "\n%s%s%s\n", col(f, "\033[1m"), sections[s].title, col(f, "\033[0m"));
            fprintf(f, "  %s\n", line);
        }
    }

    static const char *const dh[] = {"gpu", "problem", "best", "median ms", "action", "reason"};
    table_init(&t, 6, dh);
    t.right[3] = 1;
    any = 0;
    for (size_t i = 0; i < r->plan->n; i++) {
        if (!r->done[i])
            continue;
        const fdt_retune_item *it = &r->plan->items[i];
        const fdt_retune_outcome *o = &r->out[i];
        problem_label(it, pk, sizeof pk);
        table_add(&t, "%s", r->pr->device[it->live].name);
        table_add(&t, "%s", pk);
        table_add(&t, "%s", o->best_config);
        fmt_ms(s1, sizeof s1, o->best.median_ms);
        table_add(&t, "%s", s1);
        table_add(&t, "%s", fdt_retune_action_name(o->action));
        table_add(&t, "%s", o->reason[0] ? o->reason : "-");
        any = 1;
    }
    if (any) {
        fprintf(f, "\n%sBest after this retune%s\n", col(f, "\033[1m"), col(f, "\033[0m"));
        table_print(&t, f);
    }
    table_free(&t);

    int checked = 0, regressed = 0, lost = 0, researched = 0, replaced = 0;
    for (size_t i = 0; i < r->plan->n; i++)
        if (r->done[i]) {
            checked++;
            regressed += r->out[i].regressed;
            lost += unrecovered(&r->out[i]);
            researched += r->out[i].researched;
            replaced += r->out[i].action == FDT_RETUNE_REPLACED;
        }
    fprintf(f, "\n%d problem(s) checked, %d regressed (%d not recovered), %d re-searched, %d "
               "best(s) replaced",
            checked, regressed, lost, researched, replaced);
    if (r->plan->absent || r->plan->older || r->plan->duplicate)
        fprintf(f, "; skipped: %zu on devices not visible here, %zu without a run since the "
                   "cutoff, %zu stored on another GPU of a model already checked",
                r->plan->absent, r->plan->older, r->plan->duplicate);
    if (r->interrupted)
        fprintf(f, "; interrupted (%zu not reached)", r->plan->n - (size_t)checked);
    fprintf(f, "\n");
}

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
    if (a.help) {
        retune_usage(stdout);
        return EXIT_OK;
    }
    char command[1024];
    join_argv(argc, argv, command, sizeof command);
    fdt_retune_request rq;
    fdt_retune_request_init(&rq);
    rq.db_path = a.db;
    rq.gpu = a.gpu;
    rq.ops = a.ops;
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
        print_no_gpu(&rep->probe, what, "Run retune on the GPU node that tuned the database.");
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
