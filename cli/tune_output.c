/* What the tune command shows: progress on stderr (one line rewritten on a terminal, one log
 * line per evaluation otherwise, so that logs of nightly runs stay readable), the summary per
 * operator on stdout (table or JSON), and the offline modes that need no GPU: --dry-run (the
 * space, what pruned it, the model's ranking) and --replay (each strategy run against the
 * outcomes a database recorded, counting the evaluations it needs to reach the best). The
 * summary and the offline modes are rendered through the emitter (common/fdt_emit.h), one
 * column description per table for both the table and the JSON. */
#include "tune_output.h"

#include "cli.h"

#include <math.h>
#include <stdlib.h>
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

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

/* One tuned problem. The table merges the best config with its provenance mark and shows
 * the baseline only when it was measured; the JSON leaves the best_* keys out when there is
 * no verified config. */
static const fdt_col summary_cols[] = {
    {"op", "op", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"R", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"precision", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"nx", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"ny", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"nz", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"recipe", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"strategy", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"run", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"best_config", "best config", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
    {"best_config", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"best_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"best_gbs", "GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, 0},
    {"best_frac_copy", "of copy", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_ALL, 0},
    {"best_from_this_run", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"baseline_config", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"baseline_gbs", "baseline GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_TEXT, 0},
    {"baseline_gbs", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"speedup", "speedup", FDT_COL_REAL_OPT, "%.2fx", FDT_SHOW_TEXT, 0},
    {"speedup", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"copy_gbs", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"space", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"survivors", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"resumed", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"tried", "tried", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"ok", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"failed", "failed", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"pruned", "pruned", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"wall_s", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"compile_s", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"worker_restarts", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"stopped", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"resumed", "resumed", FDT_COL_INT, NULL, FDT_SHOW_TEXT, 0},
    {"run", "run", FDT_COL_INT, NULL, FDT_SHOW_TEXT, 0},
};

static void summary_row(fdt_emit *m, const fdt_tune_summary *x)
{
    char best[300];
    snprintf(best, sizeof best, "%s%s", x->best_config, x->best_from_run ? "" : " *");
    int base = x->base_ms > 0;
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, fdt_op_name(x->p.op));
    fdt_emit_cell_int(m, x->p.R);
    fdt_emit_cell_str(m, fdt_prec_name(x->p.prec));
    fdt_emit_cell_int(m, x->p.nx);
    fdt_emit_cell_int(m, x->p.ny);
    fdt_emit_cell_int(m, x->p.nz);
    fdt_emit_cell_str(m, x->recipe);
    fdt_emit_cell_str(m, x->strategy);
    fdt_emit_cell_int(m, x->run_id);
    fdt_emit_cell_str(m, x->have_best ? best : "(no verified config)");
    if (x->have_best) {
        fdt_emit_cell_str(m, x->best_config);
        fdt_emit_cell_real(m, x->best_ms);
        fdt_emit_cell_real(m, x->best_gbs);
        fdt_emit_cell_real(m, x->best_frac);
        fdt_emit_cell_int(m, x->best_from_run);
    } else
        for (int i = 0; i < 5; i++)
            fdt_emit_cell_omit(m);
    fdt_emit_cell_str(m, x->base_config);
    fdt_emit_cell_real(m, base ? x->base_gbs : NAN);
    fdt_emit_cell_real(m, x->have_base && base ? x->base_gbs : NAN);
    fdt_emit_cell_real(m, base && x->speedup > 0 ? x->speedup : NAN);
    fdt_emit_cell_real(m, x->speedup > 0 ? x->speedup : NAN);
    fdt_emit_cell_real(m, x->copy_gbs);
    fdt_emit_cell_int(m, (long long)x->stats.space);
    fdt_emit_cell_int(m, (long long)x->stats.survivors);
    fdt_emit_cell_int(m, (long long)x->resumed);
    fdt_emit_cell_int(m, x->tried);
    fdt_emit_cell_int(m, x->ok);
    fdt_emit_cell_int(m, x->failed);
    fdt_emit_cell_int(m, x->pruned);
    fdt_emit_cell_real(m, x->wall_s);
    fdt_emit_cell_real(m, x->compile_s);
    fdt_emit_cell_int(m, x->worker_restarts);
    fdt_emit_cell_str(m, x->interrupted ? x->stop_reason : "");
    fdt_emit_cell_int(m, (long long)x->resumed);
    fdt_emit_cell_int(m, x->run_id);
    fdt_emit_row_end(m);
}

/* Below the table: what the marks mean, how each problem was searched, where it is stored. */
static void summary_notes(fdt_emit *m, const fdt_device *info, const char *db_path,
                          const fdt_tune_summary *s, int n)
{
    int any_resumed = 0;
    for (int i = 0; i < n; i++)
        any_resumed |= s[i].have_best && !s[i].best_from_run;
    if (any_resumed)
        fdt_emit_text(m, "* measured by an earlier run with the same device and software "
                         "environment\n");
    fdt_emit_text(m, "baseline: the recipe's default config (the seeds' kernel), measured in "
                     "this run\n");
    for (int i = 0; i < n; i++) {
        const fdt_tune_summary *x = &s[i];
        fdt_emit_text(m, "%s: %s strategy, recipe %s, %llu configs after constraints, wall "
                         "%.1f s (compile %.1f s, setup %.1f s)%s%s\n",
                      fdt_op_name(x->p.op), x->strategy, x->recipe,
                      (unsigned long long)x->stats.survivors, x->wall_s, x->compile_s,
                      x->setup_s, x->interrupted ? ", stopped: " : "",
                      x->interrupted ? x->stop_reason : "");
    }
    if (n > 0 && s[n - 1].worker_restarts)
        fdt_emit_text(m, "the GPU worker was restarted %d time(s) after crashes or timeouts\n",
                      s[n - 1].worker_restarts);
    fdt_emit_text(m, "results stored in %s ('fdtune query best --gpu %s' shows them)\n",
                  db_path, info->arch);
}

static void summary_render(fdt_emit *m, const fdt_device *info, const fdt_device *dev,
                           const char *db_path, const fdt_tune_summary *s, int n)
{
    emit_doc_begin(m);
    fdt_emit_object(m, "device");
    fdt_emit_str(m, "name", info->name);
    fdt_emit_str(m, "arch", info->arch);
    fdt_emit_int(m, "compute_units", info->compute_units);
    fdt_emit_str(m, "driver", info->driver_version);
    fdt_emit_str(m, "compiler", info->compiler_version);
    fdt_emit_end(m);
    fdt_emit_str(m, "database", db_path);
    if (n > 0)
        fdt_emit_text(m, "\n%s (%s%s%s), R=%d %s, grid %lldx%lldx%lld, copy %.0f GB/s measured "
                         "in this run\n", info->name, info->arch, dev->catalogue[0] ? ", " : "",
                      dev->catalogue, s[0].p.R, fdt_prec_name(s[0].p.prec),
                      (long long)s[0].p.nx, (long long)s[0].p.ny, (long long)s[0].p.nz,
                      s[0].copy_gbs);
    fdt_emit_array(m, "problems");
    fdt_emit_table(m, summary_cols, NCOLS(summary_cols));
    for (int i = 0; i < n; i++)
        summary_row(m, &s[i]);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_end(m);
    if (n > 0)
        summary_notes(m, info, db_path, s, n);
}

void tune_out_summary(int json, const fdt_device *info, const fdt_device *dev,
                      const char *db_path, const fdt_tune_summary *s, int n)
{
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
    summary_render(&m, info, dev, db_path, s, n);
    emit_done(&m);
}

/* ------------------------------------------------------------------ offline modes */

/* The document of --dry-run and --replay: a head, then one problem at a time, each written
 * out as soon as it is known. */
static fdt_sb offline_out;
static fdt_emit offline;

void tune_out_offline_begin(int json, const fdt_device *dev, const char *mode)
{
    fdt_emit *m = &offline;
    emit_init(m, json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &offline_out);
    emit_doc_begin(m);
    fdt_emit_str(m, "mode", mode);
    fdt_emit_object(m, "device");
    fdt_emit_str(m, "name", dev->name);
    fdt_emit_str(m, "arch", dev->arch);
    fdt_emit_int(m, "compute_units", dev->compute_units);
    fdt_emit_real_opt(m, "peak_bw_gbs", dev->peak_bw_gbs);
    fdt_emit_int(m, "live", dev->live);
    fdt_emit_end(m);
    fdt_emit_array(m, "problems");
    fdt_emit_text(m, "%s: %s (%s, %d CUs, L2 %.0f MB, %.0f GB/s peak)%s\n", mode, dev->name,
                  dev->arch, dev->compute_units, dev->l2_bytes / 1e6, dev->peak_bw_gbs,
                  dev->live ? "" : ", described from the catalogue");
    emit_flush(m);
}

void tune_out_offline_end(int json)
{
    (void)json;
    fdt_emit_end(&offline);
    fdt_emit_end(&offline);
    emit_done(&offline);
}

typedef struct space {
    fdt_config *v;
    size_t n, cap;
} space;

static int push(void *ctx, const fdt_config *c, uint64_t index)
{
    (void)index;
    space *s = ctx;
    fdt_config *v = fdt_grow(s->v, &s->cap, s->n, sizeof *v, 256);
    if (!v)
        return 1;
    s->v = v;
    s->v[s->n++] = *c;
    return 0;
}

/* Opens the JSON object of one problem of the offline document. */
static void problem_head(fdt_emit *m, const fdt_problem *p, const char *recipe)
{
    fdt_emit_object(m, NULL);
    emit_problem(m, p);
    fdt_emit_str(m, "recipe", recipe);
}

/* What --dry-run found for one problem: the space, what pruned it, the model's ranking. */
typedef struct dry_run {
    const fdt_problem *p;
    const fdt_device *dev;
    const char *recipe;
    fdt_search_kind kind;
    int budget;
    const fdt_recipe_stats *st;
    const fdt_config *v;          /* the survivors */
    size_t n, shown;              /* shown: the top of the ranking to list */
    const double *pred;           /* predicted ms of each survivor */
    const fdt_model_terms *terms;
    const size_t *rank;           /* survivors, fastest predicted first */
} dry_run;

static const fdt_col ranking_cols[] = {
    {"rank", "rank", FDT_COL_INT, NULL, FDT_SHOW_TEXT, 0},
    {"config", "config", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"predicted_ms", "pred ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"predicted_gbs", "pred GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, 0},
    {"of_peak", "of peak", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_TEXT, 0},
    {"dram_bytes", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"l2_bytes", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"registers_estimated", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"occupancy", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"model_terms", "model terms", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
};

static void ranking_row(fdt_emit *m, const dry_run *d, size_t i)
{
    size_t x = d->rank[i];
    char key[256];
    fdt_config_format(&d->v[x], key, sizeof key);
    double gbs = fdt_effective_bytes(d->p) / (d->pred[x] * 1e-3) / 1e9;
    double peak = d->dev->peak_bw_gbs;
    fdt_sb terms;
    fdt_sb_init(&terms);
    fdt_model_describe(&d->terms[x], &terms);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_int(m, (long long)i + 1);
    fdt_emit_cell_str(m, key);
    fdt_emit_cell_real(m, d->pred[x]);
    fdt_emit_cell_real(m, gbs);
    fdt_emit_cell_real(m, peak > 0 ? gbs / peak : 0);
    fdt_emit_cell_real(m, d->terms[x].dram_bytes);
    fdt_emit_cell_real(m, d->terms[x].l2_bytes);
    fdt_emit_cell_int(m, d->terms[x].regs);
    fdt_emit_cell_real(m, d->terms[x].occupancy);
    fdt_emit_cell_str(m, fdt_sb_str(&terms));
    fdt_emit_row_end(m);
    fdt_sb_free(&terms);
}

static void pruned(fdt_emit *m, const fdt_recipe_stats *st)
{
    fdt_emit_array(m, "pruned");
    for (int i = 0; i < st->nprune; i++) {
        const fdt_recipe_prune *pr = &st->prune[i];
        if (!pr->count)
            continue;
        char at[96] = "";
        if (pr->line) /* the rule's own file: the recipe, or a module it includes */
            snprintf(at, sizeof at, " (%s:%d)", pr->file, pr->line);
        fdt_emit_text(m, "  pruned %8llu  %s%s: %s\n", (unsigned long long)pr->count, pr->name,
                      at, pr->example);
        fdt_emit_object(m, NULL);
        fdt_emit_str(m, "by", pr->name);
        fdt_emit_str(m, "file", pr->file);
        fdt_emit_int(m, "line", pr->line);
        fdt_emit_int(m, "count", (long long)pr->count);
        fdt_emit_str(m, "example", pr->example);
        fdt_emit_end(m);
    }
    fdt_emit_end(m);
}

static void dry_run_render(fdt_emit *m, const dry_run *d)
{
    char pk[128], bud[32];
    fdt_problem_format(d->p, pk, sizeof pk);
    snprintf(bud, sizeof bud, d->budget > 0 ? "%d evaluations" : "none", d->budget);
    problem_head(m, d->p, d->recipe);
    fdt_emit_str(m, "strategy", fdt_search_kind_name(d->kind));
    fdt_emit_int(m, "budget", d->budget);
    fdt_emit_int(m, "space", (long long)d->st->space);
    fdt_emit_int(m, "survivors", (long long)d->st->survivors);
    fdt_emit_text(m, "\n%s: recipe %s\n", pk, d->recipe);
    fdt_emit_text(m, "  space %llu configs, %llu survive the constraints and the generator's "
                     "checks; strategy %s, budget %s\n",
                  (unsigned long long)d->st->space, (unsigned long long)d->st->survivors,
                  fdt_search_kind_name(d->kind), bud);
    pruned(m, d->st);
    fdt_emit_text(m, "  not compiled here: configs that spill registers or exceed shared memory "
                     "are pruned after compilation, during the run\n");
    if (d->shown)
        fdt_emit_text(m, "  the model's ranking (top %zu of %zu; predicted, not measured):\n",
                      d->shown, d->n);
    fdt_emit_array(m, "ranking");
    fdt_emit_table(m, ranking_cols, NCOLS(ranking_cols));
    for (size_t i = 0; i < d->shown; i++)
        ranking_row(m, d, i);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_end(m);
}

int tune_out_dry_run(int json, fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                     fdt_search_kind k, int budget, int top)
{
    space sp = {0};
    fdt_recipe_stats st;
    fdt_err e;
    if (fdt_recipe_enumerate(r, p, dev, push, &sp, &st, &e)) {
        print_error("%s", e.msg);
        free(sp.v);
        return EXIT_USAGE;
    }
    if (st.stopped) {
        print_error("out of memory listing the space");
        free(sp.v);
        return EXIT_ERROR;
    }
    size_t n = sp.n;
    double *pred = malloc((n ? n : 1) * sizeof *pred);
    fdt_model_terms *terms = malloc((n ? n : 1) * sizeof *terms);
    fdt_search *s = NULL;
    if (!pred || !terms) {
        free(pred);
        free(terms);
        free(sp.v);
        print_error("out of memory");
        return EXIT_ERROR;
    }
    for (size_t i = 0; i < n; i++)
        pred[i] = fdt_model_time(p, &sp.v[i], dev, NULL, &terms[i]);
    if (n && fdt_search_new_predicted(FDT_SEARCH_MODEL, sp.v, n, pred, 1, &s, &e)) {
        print_error("%s", e.msg);
        free(pred);
        free(terms);
        free(sp.v);
        return EXIT_ERROR;
    }
    (void)json; /* the form was chosen by tune_out_offline_begin */
    size_t shown = n < (size_t)top ? n : (size_t)top;
    dry_run d = {p, dev, fdt_recipe_path(r), k, budget, &st, sp.v, n, shown,
                 pred, terms, s ? fdt_search_ranking(s) : NULL};
    dry_run_render(&offline, &d);
    emit_flush(&offline);
    fdt_search_free(s);
    free(pred);
    free(terms);
    free(sp.v);
    return EXIT_OK;
}

/* ------------------------------------------------------------------ replay */

typedef struct recorded {
    fdt_config *v;
    char (*key)[256];
    double *ms; /* best full (else probe) time of ok evaluations; -1 failed only */
    int *full;
    size_t n, cap;
    int64_t device_id;
    char device[128];
} recorded;

static int record_row(void *ctx, const fdt_db_row *row)
{
    recorded *r = ctx;
    size_t i;
    for (i = 0; i < r->n; i++)
        if (!strcmp(r->key[i], row->ev.config))
            break;
    if (i == r->n) {
        if (r->n == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 256;
            fdt_config *v = realloc(r->v, cap * sizeof *v);
            if (v)
                r->v = v;
            char(*k)[256] = realloc(r->key, cap * sizeof *k);
            if (k)
                r->key = k;
            double *m = realloc(r->ms, cap * sizeof *m);
            if (m)
                r->ms = m;
            int *f = realloc(r->full, cap * sizeof *f);
            if (f)
                r->full = f;
            if (!v || !k || !m || !f)
                return 1;
            r->cap = cap;
        }
        fdt_err e;
        if (fdt_config_parse(row->ev.config, &r->v[i], &e))
            return 0; /* a config of a newer generator: not replayable here */
        snprintf(r->key[i], sizeof r->key[i], "%s", row->ev.config);
        r->ms[i] = -1;
        r->full[i] = 0;
        r->n++;
    }
    if (row->ev.status != FDT_DB_OK || !(row->ev.time_ms > 0))
        return 0;
    int full = row->ev.stage == FDT_DB_FULL;
    /* a full sample beats a probe; among equals, the faster */
    if (r->ms[i] <= 0 || (full && !r->full[i]) ||
        (full == r->full[i] && row->ev.time_ms < r->ms[i])) {
        r->ms[i] = row->ev.time_ms;
        r->full[i] = full;
    }
    return 0;
}

typedef struct dev_pick {
    fdt_db *db;
    int64_t problem_id;
    recorded *rec;
    fdt_err *e;
    int failed;
} dev_pick;

static int pick_device(void *ctx, const fdt_device *d)
{
    dev_pick *pk = ctx;
    recorded tmp = {0};
    if (fdt_db_evals(pk->db, d->id, 0, pk->problem_id, record_row, &tmp, pk->e)) {
        pk->failed = 1;
        return 1;
    }
    if (tmp.n > pk->rec->n) { /* the device with the most recorded configs */
        free(pk->rec->v);
        free(pk->rec->key);
        free(pk->rec->ms);
        free(pk->rec->full);
        *pk->rec = tmp;
        pk->rec->device_id = d->id;
        snprintf(pk->rec->device, sizeof pk->rec->device, "%s", d->name);
    } else {
        free(tmp.v);
        free(tmp.key);
        free(tmp.ms);
        free(tmp.full);
    }
    return 0;
}

static const fdt_col strategy_cols[] = {
    {"strategy", "strategy", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"evals_to_best", "evals to best", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"evals_within_1pct", "within 1%", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"evals_within_3pct", "within 3%", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"evals_within_10pct", "within 10%", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
};
_Static_assert(FDT_REPLAY_NWITHIN == 3, "strategy_cols has a column per fdt_replay_within");

/* One problem of --replay: the record, then per strategy the evaluations it needed. */
static void replay_render(fdt_emit *m, const fdt_problem *p, const char *recipe,
                          const recorded *rec, const fdt_search_kind *kinds,
                          const fdt_replay *res, int nk)
{
    char pk[128];
    fdt_problem_format(p, pk, sizeof pk);
    const fdt_replay *x0 = &res[0];
    const char *best = rec->key[x0->best_idx];
    double gbs = fdt_effective_bytes(p) / (x0->best_ms * 1e-3) / 1e9;
    problem_head(m, p, recipe);
    fdt_emit_str(m, "recorded_device", rec->device);
    fdt_emit_int(m, "configs", (long long)rec->n);
    fdt_emit_str(m, "best_config", best);
    fdt_emit_real_opt(m, "best_ms", x0->best_ms);
    fdt_emit_real_opt(m, "best_gbs", gbs);
    fdt_emit_text(m, "\n%s: %zu configs recorded on %s; best %s, %.4f ms, %.0f GB/s\n", pk,
                  rec->n, rec->device, best, x0->best_ms, gbs);
    fdt_emit_array(m, "strategies");
    fdt_emit_table(m, strategy_cols, NCOLS(strategy_cols));
    for (int k = 0; k < nk; k++) {
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, fdt_search_kind_name(kinds[k]));
        fdt_emit_cell_int(m, (long long)res[k].evals_to_best);
        for (int w = 0; w < FDT_REPLAY_NWITHIN; w++)
            fdt_emit_cell_int(m, (long long)res[k].evals_within[w]);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_end(m);
}

int tune_out_replay(int json, fdt_recipe *r, const fdt_problem *p, const fdt_device *dev,
                    fdt_db *db, const char *gpu, int strategy, uint64_t seed)
{
    fdt_err e;
    int64_t pid = 0;
    char pk[128];
    fdt_problem_format(p, pk, sizeof pk);
    if (fdt_db_problem_find(db, p, &pid, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    recorded rec = {0};
    dev_pick pick = {db, pid, &rec, &e, 0};
    const char *filter = gpu && strcmp(gpu, "auto") ? dev->arch : NULL;
    if (pid && fdt_db_devices(db, filter, pick_device, &pick, &e)) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    if (pick.failed) {
        print_error("%s", e.msg);
        return EXIT_ERROR;
    }
    int rc = EXIT_OK;
    if (rec.n == 0) {
        print_error("replay: %s: the database has no evaluations for %s on %s", fdt_db_path(db),
                    pk, dev->name);
        rc = EXIT_FAIL;
        goto out;
    }
    fdt_search_kind kinds[3] = {FDT_SEARCH_EXHAUSTIVE, FDT_SEARCH_RANDOM, FDT_SEARCH_MODEL};
    fdt_replay res[3];
    int nk = 0;
    for (int k = 0; k < 3; k++) {
        if (strategy >= 0 && (int)kinds[k] != strategy)
            continue;
        if (fdt_search_replay(kinds[k], rec.v, rec.n, rec.ms, NULL, p, dev, seed, &res[nk], &e)) {
            print_error("replay: %s: %s", pk, e.msg);
            rc = EXIT_FAIL;
            goto out;
        }
        kinds[nk++] = kinds[k];
    }
    (void)json; /* the form was chosen by tune_out_offline_begin */
    replay_render(&offline, p, fdt_recipe_path(r), &rec, kinds, res, nk);
    emit_flush(&offline);
out:
    free(rec.v);
    free(rec.key);
    free(rec.ms);
    free(rec.full);
    return rc;
}
