/* What the tune command shows: progress on stderr (one line rewritten on a terminal, one log
 * line per evaluation otherwise, so that logs of nightly runs stay readable), the summary per
 * operator on stdout (table or JSON), and the results of the offline modes that need no GPU
 * (computed in tuner/offline.c): --dry-run (the space, what pruned it, the model's ranking)
 * and --replay (each strategy run against the outcomes a database recorded, counting the
 * evaluations it needs to reach the best). */
#include "tune_output.h"

#include "cli.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ progress */

void tune_progress_init(tune_progress *t, int json)
{
    (void)json; /* progress goes to stderr either way; JSON owns stdout */
    memset(t, 0, sizeof *t);
    t->tty = isatty(STDERR_FILENO);
}

static void fmt_eta(double s, char *buf, size_t n)
{
    if (s < 0)
        snprintf(buf, n, "?");
    else if (s < 90)
        snprintf(buf, n, "%.0fs", s);
    else if (s < 5400)
        snprintf(buf, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else
        snprintf(buf, n, "%.1fh", s / 3600);
}

void tune_progress_event(void *ctx, const fdt_tune_event *ev)
{
    tune_progress *t = ctx;
    fdt_problem_format(ev->p, t->problem, sizeof t->problem);
    switch (ev->kind) {
    case FDT_TUNE_SETUP:
        tune_progress_end(t);
        fprintf(stderr, "%s: reference verified at %llu points (max err %.2g <= %.2g), copy "
                        "%.0f GB/s, setup %.1f s\n",
                t->problem, (unsigned long long)ev->setup->ref_points, ev->setup->ref_max_err,
                ev->setup->ref_tol, ev->setup->copy_gbs, ev->setup->setup_s);
        return;
    case FDT_TUNE_SPACE:
        fprintf(stderr, "%s: %zu configs in the space after the recipe's constraints, %zu "
                        "already in the database\n",
                t->problem, ev->survivors, ev->resumed);
        return;
    case FDT_TUNE_COMPILED:
        if (!t->tty && ev->survivors)
            fprintf(stderr, "%s: compiled %zu (%zu from the cache, %zu failed) in %.1f s\n",
                    t->problem, ev->survivors, ev->cached, ev->compile_failed, ev->compile_s);
        return;
    case FDT_TUNE_EVAL:
        break;
    }
    const fdt_eval_result *r = ev->r;
    char eta[32];
    fmt_eta(ev->eta_s, eta, sizeof eta);
    if (t->tty) {
        fprintf(stderr, "\r\033[K%s [%d/%d] best %.0f GB/s (%.3f of copy), ETA %s", t->problem,
                ev->done, ev->total, ev->best_gbs, ev->best_frac, eta);
        t->line_open = 1;
        return;
    }
    if (r->status == FDT_EVAL_OK)
        fprintf(stderr, "%s [%d/%d] %-8s %s: ok %.4f ms %.0f GB/s %.3f of copy\n", t->problem,
                ev->done, ev->total, ev->stage, ev->config, r->timing.median_ms, r->gbs,
                r->frac_copy);
    else
        fprintf(stderr, "%s [%d/%d] %-8s %s: %s: %s\n", t->problem, ev->done, ev->total,
                ev->stage, ev->config, fdt_eval_status_name(r->status), r->message);
}

void tune_progress_end(tune_progress *t)
{
    if (t->line_open)
        fputc('\n', stderr);
    t->line_open = 0;
}

/* ------------------------------------------------------------------ summary */

static void json_summary(const fdt_device *info, const char *db_path,
                         const fdt_tune_summary *s, int n)
{
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_puts(&b, "{");
    json_kv_int(&b, "schema", FDT_JSON_SCHEMA_VERSION, 1);
    fdt_sb_puts(&b, "\"device\": {");
    json_kv_str(&b, "name", info->name, 1);
    json_kv_str(&b, "arch", info->arch, 1);
    json_kv_int(&b, "compute_units", info->compute_units, 1);
    json_kv_str(&b, "driver", info->driver_version, 1);
    json_kv_str(&b, "compiler", info->compiler_version, 0);
    fdt_sb_puts(&b, "}, ");
    json_kv_str(&b, "database", db_path, 1);
    fdt_sb_puts(&b, "\"problems\": [");
    for (int i = 0; i < n; i++) {
        const fdt_tune_summary *x = &s[i];
        fdt_sb_puts(&b, i ? ", {" : "{");
        json_kv_str(&b, "op", fdt_op_name(x->p.op), 1);
        json_kv_int(&b, "R", x->p.R, 1);
        json_kv_str(&b, "precision", fdt_prec_name(x->p.prec), 1);
        json_kv_int(&b, "nx", x->p.nx, 1);
        json_kv_int(&b, "ny", x->p.ny, 1);
        json_kv_int(&b, "nz", x->p.nz, 1);
        json_kv_str(&b, "recipe", x->recipe, 1);
        json_kv_str(&b, "strategy", x->strategy, 1);
        json_kv_int(&b, "run", x->run_id, 1);
        if (x->have_best) {
            json_kv_str(&b, "best_config", x->best_config, 1);
            json_kv_num(&b, "best_ms", x->best_ms, 1);
            json_kv_num(&b, "best_gbs", x->best_gbs, 1);
            json_kv_num(&b, "best_frac_copy", x->best_frac, 1);
            json_kv_int(&b, "best_from_this_run", x->best_from_run, 1);
        }
        json_kv_str(&b, "baseline_config", x->base_config, 1);
        json_kv_num(&b, "baseline_gbs", x->have_base && x->base_ms > 0 ? x->base_gbs : NAN, 1);
        json_kv_num(&b, "speedup", x->speedup > 0 ? x->speedup : NAN, 1);
        json_kv_num(&b, "copy_gbs", x->copy_gbs, 1);
        json_kv_int(&b, "space", (long long)x->stats.space, 1);
        json_kv_int(&b, "survivors", (long long)x->stats.survivors, 1);
        json_kv_int(&b, "resumed", (long long)x->resumed, 1);
        json_kv_int(&b, "tried", x->tried, 1);
        json_kv_int(&b, "ok", x->ok, 1);
        json_kv_int(&b, "failed", x->failed, 1);
        json_kv_int(&b, "pruned", x->pruned, 1);
        json_kv_num(&b, "wall_s", x->wall_s, 1);
        json_kv_num(&b, "compile_s", x->compile_s, 1);
        json_kv_int(&b, "worker_restarts", x->worker_restarts, 1);
        json_kv_str(&b, "stopped", x->interrupted ? x->stop_reason : "", 0);
        fdt_sb_puts(&b, "}");
    }
    fdt_sb_puts(&b, "]}\n");
    fputs(fdt_sb_str(&b), stdout);
    fdt_sb_free(&b);
}

void tune_out_summary(int json, const fdt_device *info, const fdt_device *dev,
                      const char *db_path, const fdt_tune_summary *s, int n)
{
    if (json) {
        json_summary(info, db_path, s, n);
        return;
    }
    if (n == 0)
        return;
    char grid[64];
    snprintf(grid, sizeof grid, "%lldx%lldx%lld", (long long)s[0].p.nx, (long long)s[0].p.ny,
             (long long)s[0].p.nz);
    printf("\n%s (%s%s%s), R=%d %s, grid %s, copy %.0f GB/s measured in this run\n",
           info->name, info->arch, dev->catalogue[0] ? ", " : "", dev->catalogue, s[0].p.R,
           fdt_prec_name(s[0].p.prec), grid, s[0].copy_gbs);
    static const char *const hdr[] = {"op", "best config", "median ms", "GB/s", "of copy",
                                      "baseline GB/s", "speedup", "tried", "failed", "pruned",
                                      "resumed", "run"};
    table t;
    table_init(&t, 12, hdr);
    for (int i = 2; i < 12; i++)
        t.right[i] = 1;
    for (int i = 0; i < n; i++) {
        const fdt_tune_summary *x = &s[i];
        table_add(&t, "%s", fdt_op_name(x->p.op));
        if (x->have_best) {
            table_add(&t, "%s%s", x->best_config, x->best_from_run ? "" : " *");
            table_add(&t, "%.4f", x->best_ms);
            table_add(&t, "%.0f", x->best_gbs);
            table_add(&t, "%.3f", x->best_frac);
        } else {
            table_add(&t, "(no verified config)");
            table_add(&t, "-");
            table_add(&t, "-");
            table_add(&t, "-");
        }
        if (x->base_ms > 0) {
            table_add(&t, "%.0f", x->base_gbs);
            table_add(&t, x->speedup > 0 ? "%.2fx" : "-", x->speedup);
        } else {
            table_add(&t, "-");
            table_add(&t, "-");
        }
        table_add(&t, "%d", x->tried);
        table_add(&t, "%d", x->failed);
        table_add(&t, "%d", x->pruned);
        table_add(&t, "%zu", x->resumed);
        table_add(&t, "%lld", (long long)x->run_id);
    }
    table_print(&t, stdout);
    table_free(&t);
    int any_resumed = 0;
    for (int i = 0; i < n; i++)
        any_resumed |= s[i].have_best && !s[i].best_from_run;
    if (any_resumed)
        printf("* measured by an earlier run with the same device and software environment\n");
    printf("baseline: the recipe's default config (the seeds' kernel), measured in this run\n");
    for (int i = 0; i < n; i++) {
        const fdt_tune_summary *x = &s[i];
        printf("%s: %s strategy, recipe %s, %llu configs after constraints, wall %.1f s "
               "(compile %.1f s, setup %.1f s)%s%s\n",
               fdt_op_name(x->p.op), x->strategy, x->recipe,
               (unsigned long long)x->stats.survivors, x->wall_s, x->compile_s, x->setup_s,
               x->interrupted ? ", stopped: " : "", x->interrupted ? x->stop_reason : "");
    }
    if (n > 0 && s[n - 1].worker_restarts)
        printf("the GPU worker was restarted %d time(s) after crashes or timeouts\n",
               s[n - 1].worker_restarts);
    printf("results stored in %s ('fdtune query best --gpu %s' shows them)\n", db_path,
           info->arch);
}

/* ------------------------------------------------------------------ offline modes */

static int offline_items; /* problems written so far into the JSON document */

void tune_out_offline_begin(int json, const fdt_device *dev, const char *mode)
{
    offline_items = 0;
    if (json) {
        fdt_sb b;
        fdt_sb_init(&b);
        fdt_sb_puts(&b, "{");
        json_kv_int(&b, "schema", FDT_JSON_SCHEMA_VERSION, 1);
        json_kv_str(&b, "mode", mode, 1);
        fdt_sb_puts(&b, "\"device\": {");
        json_kv_str(&b, "name", dev->name, 1);
        json_kv_str(&b, "arch", dev->arch, 1);
        json_kv_int(&b, "compute_units", dev->compute_units, 1);
        json_kv_num(&b, "peak_bw_gbs", dev->peak_bw_gbs, 1);
        json_kv_int(&b, "live", dev->live, 0);
        fdt_sb_puts(&b, "}, \"problems\": [");
        fputs(fdt_sb_str(&b), stdout);
        fdt_sb_free(&b);
    } else {
        printf("%s: %s (%s, %d CUs, L2 %.0f MB, %.0f GB/s peak)%s\n", mode, dev->name, dev->arch,
               dev->compute_units, dev->l2_bytes / 1e6, dev->peak_bw_gbs,
               dev->live ? "" : ", described from the catalogue");
    }
}

void tune_out_offline_end(int json)
{
    if (json)
        fputs("]}\n", stdout);
}

static void json_problem_head(fdt_sb *b, const fdt_problem *p, const fdt_recipe *r)
{
    fdt_sb_puts(b, offline_items++ ? ", {" : "{");
    json_kv_str(b, "op", fdt_op_name(p->op), 1);
    json_kv_int(b, "R", p->R, 1);
    json_kv_str(b, "precision", fdt_prec_name(p->prec), 1);
    json_kv_int(b, "nx", p->nx, 1);
    json_kv_int(b, "ny", p->ny, 1);
    json_kv_int(b, "nz", p->nz, 1);
    json_kv_str(b, "recipe", fdt_recipe_path(r), 1);
}

void tune_out_dry_run(int json, const fdt_recipe *r, const fdt_device *dev,
                      const fdt_dry_run *d)
{
    const fdt_recipe_stats st = d->stats;
    const fdt_problem *p = &d->p;
    fdt_search_kind k = d->strategy;
    int budget = d->budget;
    size_t n = d->n, shown = d->ntop;
    char pk[128];
    fdt_problem_format(p, pk, sizeof pk);
    if (json) {
        fdt_sb b;
        fdt_sb_init(&b);
        json_problem_head(&b, p, r);
        json_kv_str(&b, "strategy", fdt_search_kind_name(k), 1);
        json_kv_int(&b, "budget", budget, 1);
        json_kv_int(&b, "space", (long long)st.space, 1);
        json_kv_int(&b, "survivors", (long long)st.survivors, 1);
        fdt_sb_puts(&b, "\"pruned\": [");
        for (int i = 0, first = 1; i < st.nprune; i++) {
            if (!st.prune[i].count)
                continue;
            fdt_sb_puts(&b, first ? "{" : ", {");
            first = 0;
            json_kv_str(&b, "by", st.prune[i].name, 1);
            json_kv_str(&b, "file", st.prune[i].file, 1);
            json_kv_int(&b, "line", st.prune[i].line, 1);
            json_kv_int(&b, "count", (long long)st.prune[i].count, 1);
            json_kv_str(&b, "example", st.prune[i].example, 0);
            fdt_sb_puts(&b, "}");
        }
        fdt_sb_puts(&b, "], \"ranking\": [");
        for (size_t i = 0; i < shown; i++) {
            const fdt_dry_run_row *x = &d->top[i];
            fdt_sb_puts(&b, i ? ", {" : "{");
            json_kv_str(&b, "config", x->config, 1);
            json_kv_num(&b, "predicted_ms", x->pred_ms, 1);
            json_kv_num(&b, "predicted_gbs", x->pred_gbs, 1);
            json_kv_num(&b, "dram_bytes", x->terms.dram_bytes, 1);
            json_kv_num(&b, "l2_bytes", x->terms.l2_bytes, 1);
            json_kv_int(&b, "registers_estimated", x->terms.regs, 1);
            json_kv_num(&b, "occupancy", x->terms.occupancy, 0);
            fdt_sb_puts(&b, "}");
        }
        fdt_sb_puts(&b, "]}");
        fputs(fdt_sb_str(&b), stdout);
        fdt_sb_free(&b);
    } else {
        printf("\n%s: recipe %s\n", pk, fdt_recipe_path(r));
        char bud[32];
        snprintf(bud, sizeof bud, budget > 0 ? "%d evaluations" : "none", budget);
        printf("  space %llu configs, %llu survive the constraints and the generator's checks; "
               "strategy %s, budget %s\n",
               (unsigned long long)st.space, (unsigned long long)st.survivors,
               fdt_search_kind_name(k), bud);
        for (int i = 0; i < st.nprune; i++) {
            const fdt_recipe_prune *pr = &st.prune[i];
            char at[96] = "";
            if (pr->line) /* the rule's own file: the recipe, or a module it includes */
                snprintf(at, sizeof at, " (%s:%d)", pr->file, pr->line);
            if (pr->count)
                printf("  pruned %8llu  %s%s: %s\n", (unsigned long long)pr->count, pr->name, at,
                       pr->example);
        }
        printf("  not compiled here: configs that spill registers or exceed shared memory are "
               "pruned after compilation, during the run\n");
        if (shown) {
            printf("  the model's ranking (top %zu of %zu; predicted, not measured):\n", shown, n);
            static const char *const hdr[] = {"rank", "config", "pred ms", "pred GB/s",
                                              "of peak", "model terms"};
            table t;
            table_init(&t, 6, hdr);
            t.right[0] = t.right[2] = t.right[3] = t.right[4] = 1;
            for (size_t i = 0; i < shown; i++) {
                const fdt_dry_run_row *x = &d->top[i];
                double gbs = x->pred_gbs;
                fdt_sb m;
                fdt_sb_init(&m);
                fdt_model_describe(&x->terms, &m);
                table_add(&t, "%zu", i + 1);
                table_add(&t, "%s", x->config);
                table_add(&t, "%.4f", x->pred_ms);
                table_add(&t, "%.0f", gbs);
                table_add(&t, "%.3f", dev->peak_bw_gbs > 0 ? gbs / dev->peak_bw_gbs : 0);
                table_add(&t, "%s", fdt_sb_str(&m));
                fdt_sb_free(&m);
            }
            table_print(&t, stdout);
            table_free(&t);
        }
    }
}

/* ------------------------------------------------------------------ replay */

void tune_out_replay(int json, const fdt_recipe *r, const fdt_replay_report *x)
{
    char pk[128];
    fdt_problem_format(&x->p, pk, sizeof pk);
    if (json) {
        fdt_sb b;
        fdt_sb_init(&b);
        json_problem_head(&b, &x->p, r);
        json_kv_str(&b, "recorded_device", x->device, 1);
        json_kv_int(&b, "configs", (long long)x->configs, 1);
        json_kv_str(&b, "best_config", x->best_config, 1);
        json_kv_num(&b, "best_ms", x->best_ms, 1);
        json_kv_num(&b, "best_gbs", x->best_gbs, 1);
        fdt_sb_puts(&b, "\"strategies\": [");
        for (int k = 0; k < x->n; k++) {
            fdt_sb_puts(&b, k ? ", {" : "{");
            json_kv_str(&b, "strategy", fdt_search_kind_name(x->kind[k]), 1);
            json_kv_int(&b, "evals_to_best", (long long)x->res[k].evals_to_best, 1);
            json_kv_int(&b, "evals_within_1pct", (long long)x->res[k].evals_within[0], 1);
            json_kv_int(&b, "evals_within_3pct", (long long)x->res[k].evals_within[1], 1);
            json_kv_int(&b, "evals_within_10pct", (long long)x->res[k].evals_within[2], 0);
            fdt_sb_puts(&b, "}");
        }
        fdt_sb_puts(&b, "]}");
        fputs(fdt_sb_str(&b), stdout);
        fdt_sb_free(&b);
    } else {
        printf("\n%s: %zu configs recorded on %s; best %s, %.4f ms, %.0f GB/s\n", pk, x->configs,
               x->device, x->best_config, x->best_ms, x->best_gbs);
        static const char *const hdr[] = {"strategy", "evals to best", "within 1%",
                                          "within 3%", "within 10%"};
        table t;
        table_init(&t, 5, hdr);
        for (int i = 1; i < 5; i++)
            t.right[i] = 1;
        for (int k = 0; k < x->n; k++) {
            table_add(&t, "%s", fdt_search_kind_name(x->kind[k]));
            table_add(&t, "%zu", x->res[k].evals_to_best);
            for (int w = 0; w < FDT_REPLAY_NWITHIN; w++)
                table_add(&t, "%zu", x->res[k].evals_within[w]);
        }
        table_print(&t, stdout);
        table_free(&t);
    }
}
