/* What the tune command shows: progress on stderr (one line rewritten on a terminal, one log
 * line per evaluation otherwise, so that logs of nightly runs stay readable), the summary per
 * operator on stdout (table or JSON), and the results of the offline modes that need no GPU
 * (computed in tuner/offline.c): --dry-run (the space, what pruned it, the model's ranking)
 * and --replay (each strategy run against the outcomes a database recorded, counting the
 * evaluations it needs to reach the best). The summary and the offline modes are rendered
 * through the emitter (common/fdt_emit.h), one column description per table for both the
 * table and the JSON. */
#include "tune_output.h"

#include "cli.h"
#include "fdt_db.h"
#include "fdt_target.h"

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

int tune_event_text(const fdt_tune_event *ev, int tty, char *buf, size_t n)
{
    char pk[96];
    fdt_problem_format(ev->p, pk, sizeof pk);
    switch (ev->kind) {
    case FDT_TUNE_SETUP:
        if (ev->setup->simulated)
            snprintf(buf, n, "%s: simulated (answers recorded on a GPU, nothing runs here), copy "
                             "%.0f GB/s as recorded", pk, ev->setup->copy_gbs);
        else
            snprintf(buf, n, "%s: reference verified at %llu points (max err %.2g <= %.2g), "
                             "copy %.0f GB/s, setup %.1f s", pk,
                     (unsigned long long)ev->setup->ref_points, ev->setup->ref_max_err,
                     ev->setup->ref_tol, ev->setup->copy_gbs, ev->setup->setup_s);
        return 1;
    case FDT_TUNE_SPACE:
        snprintf(buf, n, "%s: %zu configs in the space after the recipe's constraints, %zu "
                         "already in the database", pk, ev->survivors, ev->resumed);
        return 1;
    case FDT_TUNE_COMPILING: /* on a terminal, in place; a log gets the COMPILED line */
        if (!tty || !ev->survivors)
            return 0;
        snprintf(buf, n, "%s: compiling %zu/%zu candidates", pk, ev->compiled, ev->survivors);
        return 2;
    case FDT_TUNE_COMPILED:
        if (tty || !ev->survivors)
            return 0;
        snprintf(buf, n, "%s: compiled %zu (%zu from the cache, %zu failed) in %.1f s", pk,
                 ev->survivors, ev->cached, ev->compile_failed, ev->compile_s);
        return 1;
    case FDT_TUNE_EVAL:
        break;
    }
    const fdt_eval_result *r = ev->r;
    char eta[32];
    fmt_eta(ev->eta_s, eta, sizeof eta);
    if (tty) {
        snprintf(buf, n, "%s [%d/%d] best %.0f GB/s (%.3f of copy), ETA %s", pk, ev->done,
                 ev->total, ev->best_gbs, ev->best_frac, eta);
        return 2;
    }
    if (r->status == FDT_EVAL_OK)
        snprintf(buf, n, "%s [%d/%d] %-8s %s: ok %.4f ms %.0f GB/s %.3f of copy", pk, ev->done,
                 ev->total, ev->stage, ev->config, r->timing.median_ms, r->gbs, r->frac_copy);
    else
        snprintf(buf, n, "%s [%d/%d] %-8s %s: %s: %s", pk, ev->done, ev->total, ev->stage,
                 ev->config, fdt_eval_status_name(r->status), r->message);
    return 1;
}

void tune_progress_event(void *ctx, const fdt_tune_event *ev)
{
    tune_progress *t = ctx;
    char line[2048];
    int kind = tune_event_text(ev, t->tty, line, sizeof line);
    if (kind == 2) {
        fprintf(stderr, "\r\033[K%s", line);
        t->line_open = 1;
    } else if (kind == 1) {
        if (ev->kind == FDT_TUNE_SETUP)
            tune_progress_end(t);
        fprintf(stderr, "%s\n", line);
    }
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
    {"op", "op", FDT_COL_STR, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
    {"R", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"precision", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"nx", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"ny", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"nz", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"absorb_width", "", FDT_COL_INT_OPT, NULL, FDT_SHOW_DATA, 0},
    {"absorb_strength", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"recipe", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"strategy", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"run", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"best_config", "best config", FDT_COL_STR, NULL, FDT_SHOW_TEXT, FDT_COL_KEY},
    {"best_config", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"best_config_full", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"best_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"best_gbs", "GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"best_frac_copy", "of copy", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"best_from_this_run", "", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
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
    {"compile_overlapped_s", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"worker_restarts", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"stopped", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"headroom", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"cut_short", "", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
    {"start_config", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"start_source", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"resumed", "resumed", FDT_COL_INT, NULL, FDT_SHOW_TEXT, 0},
    {"run", "run", FDT_COL_INT, NULL, FDT_SHOW_TEXT, 0},
};

static void summary_row(fdt_emit *m, const fdt_device *info, const fdt_tune_summary *x)
{
    char best[FDT_CONFIG_DISPLAY_MAX + 8], full[FDT_CONFIG_DISPLAY_MAX];
    config_display(x->best_config, info, full, sizeof full);
    snprintf(best, sizeof best, "%s%s%s", full, x->best_from_run ? "" : " *",
             x->cut_short ? " !" : "");
    int base = x->base_ms > 0;
    fdt_emit_row(m, NULL);
    fdt_emit_cell_str(m, fdt_op_name(x->p.op));
    fdt_emit_cell_int(m, x->p.R);
    fdt_emit_cell_str(m, fdt_prec_name(x->p.prec));
    fdt_emit_cell_int(m, x->p.nx);
    fdt_emit_cell_int(m, x->p.ny);
    fdt_emit_cell_int(m, x->p.nz);
    int layer = x->p.op == FDT_OP_DWAVE; /* null for the undamped operators */
    fdt_emit_cell_int(m, layer ? x->p.absorb_w : -1);
    fdt_emit_cell_real(m, layer ? x->p.absorb_s : NAN);
    fdt_emit_cell_str(m, x->recipe);
    fdt_emit_cell_str(m, x->strategy);
    fdt_emit_cell_int(m, x->run_id);
    fdt_emit_cell_str(m, x->have_best ? best : "(no verified config)");
    if (x->have_best) {
        fdt_emit_cell_str(m, x->best_config);
        fdt_emit_cell_str(m, full);
        fdt_emit_cell_real(m, x->best_ms);
        fdt_emit_cell_real(m, x->best_gbs);
        fdt_emit_cell_real(m, x->best_frac);
        fdt_emit_cell_bool(m, x->best_from_run != 0);
    } else
        for (int i = 0; i < 6; i++)
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
    fdt_emit_cell_real(m, x->compile_overlapped_s);
    fdt_emit_cell_int(m, x->worker_restarts);
    fdt_emit_cell_str(m, x->stopped);
    fdt_emit_cell_real(m, x->headroom >= 0 ? x->headroom : NAN);
    fdt_emit_cell_bool(m, x->cut_short);
    fdt_emit_cell_str(m, x->start_config); /* "": null, nothing was measured first */
    fdt_emit_cell_str(m, x->start_source);
    fdt_emit_cell_int(m, (long long)x->resumed);
    fdt_emit_cell_int(m, x->run_id);
    fdt_emit_row_end(m);
}

/* Below the table: what the marks mean, how each problem was searched, where it is stored. */
static void summary_notes(fdt_emit *m, const fdt_device *info, const char *db_path,
                          const fdt_tune_summary *s, int n)
{
    int any_resumed = 0, any_cut = 0;
    for (int i = 0; i < n; i++) {
        any_resumed |= s[i].have_best && !s[i].best_from_run;
        any_cut |= s[i].cut_short;
    }
    if (any_resumed)
        fdt_emit_text(m, "* measured by an earlier run with the same device and software "
                         "environment\n");
    if (any_cut)
        fdt_emit_text(m, "%s\n", TUNE_CUT_SHORT_NOTE);
    fdt_emit_text(m, "baseline: the recipe's default config (%s), measured in this run\n",
                  fdt_target_device_is_cpu(info) ? "the plain loop nest a user writes"
                                                 : "the seeds' kernel");
    for (int i = 0; i < n; i++) {
        const fdt_tune_summary *x = &s[i];
        char overlapped[64] = "";
        if (x->compile_overlapped_s >= 0.05)
            snprintf(overlapped, sizeof overlapped, ", %.1f s of it overlapped",
                     x->compile_overlapped_s);
        char start[200] = "";
        if (x->start_config[0])
            snprintf(start, sizeof start, "; measured first: what fdtune answered (%s)",
                     x->start_source);
        fdt_emit_text(m, "%s: %s strategy, recipe %s, %llu configs after constraints, wall "
                         "%.1f s (compile %.1f s%s, setup %.1f s)%s%s%s%s\n",
                      fdt_op_name(x->p.op), x->strategy, x->recipe,
                      (unsigned long long)x->stats.survivors, x->wall_s, x->compile_s,
                      overlapped, x->setup_s, start, x->stopped[0] ? "; stopped: " : "",
                      x->stopped, x->cut_short ? " (search cut short)" : "");
    }
    if (n > 0 && s[n - 1].worker_restarts)
        fdt_emit_text(m, "the worker process was restarted %d time(s) after crashes or timeouts\n",
                      s[n - 1].worker_restarts);
    int cpu = fdt_target_device_is_cpu(info);
    fdt_emit_text(m, "results stored in %s ('fdtune query best --%s %s' shows them)\n",
                  db_path, cpu ? "cpu" : "gpu", cpu ? "auto" : info->arch);
    int any_best = 0;
    for (int i = 0; i < n; i++)
        any_best |= s[i].have_best;
    if (any_best)
        tune_out_next_step(m, info->arch, cpu, db_path);
}

void tune_out_next_step(fdt_emit *m, const char *gpu, int cpu, const char *db_path)
{
    char def[4096], db[4200] = "";
    fdt_err e;
    if (db_path && (fdt_db_default_path(def, sizeof def, &e) || strcmp(def, db_path))) {
        /* quoted for a POSIX shell when it holds anything beyond a plain path's characters */
        int plain = strspn(db_path, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789/._-+,:@%") == strlen(db_path);
        snprintf(db, sizeof db, plain ? " --db %s" : " --db '%s'", db_path);
    }
    if (cpu)
        fdt_emit_text(m, "next: fdtune export --cpu auto%s -o fdtuned_cpu.h (a C header for your "
                         "code, built with cc -fopenmp)\n", db);
    else
        fdt_emit_text(m, "next: fdtune export%s%s%s -o fdtuned.h (a header for your HIP or CUDA "
                         "code)\n", gpu ? " --gpu " : "", gpu ? gpu : "", db);
}

static void summary_render(fdt_emit *m, const fdt_device *info, const fdt_device *dev,
                           const char *db_path, const fdt_tune_summary *s, int n)
{
    emit_doc_begin(m);
    int sim = fdt_device_simulated(info);
    fdt_emit_object(m, "device");
    fdt_emit_str(m, "name", info->name);
    fdt_emit_str(m, "arch", info->arch);
    fdt_emit_int(m, "compute_units", info->compute_units);
    fdt_emit_str(m, "driver", info->driver_version);
    fdt_emit_str(m, "compiler", info->compiler_version);
    fdt_emit_str(m, "backend", info->backend);
    fdt_emit_bool(m, "simulated", sim);
    fdt_emit_end(m);
    fdt_emit_str(m, "database", db_path);
    if (sim)
        fdt_emit_text(m, "\nSIMULATED: %s answered (%s); no GPU ran anything here\n",
                      info->name, info->driver_version);
    if (n > 0)
        fdt_emit_text(m, "\n%s (%s%s%s), R=%d %s, grid %lldx%lldx%lld, copy %.0f GB/s measured "
                         "in this run\n", info->name, info->arch, dev->catalogue[0] ? ", " : "",
                      dev->catalogue, s[0].p.R, fdt_prec_name(s[0].p.prec),
                      (long long)s[0].p.nx, (long long)s[0].p.ny, (long long)s[0].p.nz,
                      s[0].copy_gbs);
    fdt_emit_array(m, "problems");
    fdt_emit_table(m, summary_cols, NCOLS(summary_cols));
    for (int i = 0; i < n; i++)
        summary_row(m, info, &s[i]);
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
    fdt_emit_bool(m, "live", dev->live != 0);
    fdt_emit_end(m);
    fdt_emit_array(m, "problems");
    if (fdt_model_cpu_form(dev))
        fdt_emit_text(m, "%s: %s (%s, %d cores, %s, L2 %lld KiB a core, LLC %lld MiB)%s\n", mode,
                      dev->name, dev->arch, dev->compute_units, dev->simd,
                      (long long)dev->l2_bytes >> 10, (long long)dev->llc_bytes >> 20,
                      dev->live ? ", this machine's CPU" : "");
    else
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

/* After the ranking: how many configs were collapsed into its rows, and which parameters
 * they differed in ("collapsed": n, "collapsed_params": [names]). */
static void collapsed_note(fdt_emit *m, const fdt_dry_run *d)
{
    size_t np;
    const fdt_param_info *pi = fdt_config_params(&np);
    fdt_sb names;
    fdt_sb_init(&names);
    fdt_emit_int(m, "collapsed", (long long)d->collapsed);
    fdt_emit_array(m, "collapsed_params");
    for (size_t k = 0; k < np; k++)
        if (d->collapsed_params & (1u << k)) {
            fdt_emit_str(m, NULL, pi[k].name);
            fdt_sb_printf(&names, "%s%s", names.len ? " or " : "", pi[k].name);
        }
    fdt_emit_end(m);
    if (d->collapsed)
        fdt_emit_text(m, "  (%zu rows differing only in %s collapsed: the model predicts the "
                         "same time; column merged)\n", d->collapsed, fdt_sb_str(&names));
    fdt_sb_free(&names);
}

/* Opens the JSON object of one problem of the offline document. */
static void problem_head(fdt_emit *m, const fdt_problem *p, const char *recipe)
{
    fdt_emit_object(m, NULL);
    emit_problem(m, p);
    fdt_emit_str(m, "recipe", recipe);
}

static const fdt_col ranking_cols[] = {
    {"rank", "rank", FDT_COL_INT, NULL, FDT_SHOW_TEXT, FDT_COL_KEY},
    CONFIG_COLS(0),
    {"predicted_ms", "pred ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"predicted_gbs", "pred GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"of_peak", "of peak", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_TEXT, FDT_COL_KEY},
    {"dram_bytes", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"l2_bytes", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"registers_estimated", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"occupancy", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"bound", "bound", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"shared_bytes_per_point", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"l1_bytes_per_point", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"fp_per_point", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"inst_per_point", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"model_terms", "model terms", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
    {"merged", "merged", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
};

static void ranking_row(fdt_emit *m, const fdt_device *dev, size_t i, const fdt_dry_run_row *x)
{
    /* a CPU's fraction is of the copy bandwidth its model terms take */
    double peak = x->terms.cpu ? x->terms.copy_gbs : dev->peak_bw_gbs;
    fdt_sb terms;
    fdt_sb_init(&terms);
    fdt_model_describe(&x->terms, &terms);
    fdt_emit_row(m, NULL);
    fdt_emit_cell_int(m, (long long)i + 1);
    emit_config_cells(m, x->config, dev);
    fdt_emit_cell_real(m, x->pred_ms);
    fdt_emit_cell_real(m, x->pred_gbs);
    fdt_emit_cell_real(m, peak > 0 ? x->pred_gbs / peak : 0);
    fdt_emit_cell_real(m, x->terms.dram_bytes);
    fdt_emit_cell_real(m, x->terms.l2_bytes);
    fdt_emit_cell_int(m, x->terms.regs);
    fdt_emit_cell_real(m, x->terms.occupancy);
    fdt_emit_cell_str(m, fdt_bound_name(x->terms.bound));
    fdt_emit_cell_real(m, x->terms.onchip.shared_bytes);
    fdt_emit_cell_real(m, x->terms.onchip.l1_bytes);
    fdt_emit_cell_real(m, x->terms.onchip.fp);
    fdt_emit_cell_real(m, x->terms.onchip.inst);
    fdt_emit_cell_str(m, fdt_sb_str(&terms));
    fdt_emit_cell_int(m, x->merged);
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

void tune_out_dry_run(int json, const fdt_recipe *r, const fdt_device *dev,
                      const fdt_dry_run *d)
{
    (void)json; /* the form was chosen by tune_out_offline_begin */
    fdt_emit *m = &offline;
    const fdt_recipe_stats *st = &d->stats;
    char pk[128], bud[32];
    fdt_problem_format(&d->p, pk, sizeof pk);
    snprintf(bud, sizeof bud, d->budget > 0 ? "%d evaluations" : "none", d->budget);
    problem_head(m, &d->p, fdt_recipe_path(r));
    fdt_emit_str(m, "strategy", fdt_search_kind_name(d->strategy));
    fdt_emit_int(m, "budget", d->budget);
    fdt_emit_int(m, "space", (long long)st->space);
    fdt_emit_int(m, "survivors", (long long)st->survivors);
    fdt_emit_text(m, "\n%s: recipe %s\n", pk, fdt_recipe_path(r));
    fdt_emit_text(m, "  space %llu configs, %llu survive the constraints and the generator's "
                     "checks; strategy %s, budget %s\n",
                  (unsigned long long)st->space, (unsigned long long)st->survivors,
                  fdt_search_kind_name(d->strategy), bud);
    pruned(m, st);
    if (!fdt_model_cpu_form(dev))
        fdt_emit_text(m, "  not compiled here: configs that spill registers, exceed shared "
                         "memory or outgrow the instruction cache are pruned after compilation, "
                         "during the run\n");
    else if (d->ntop)
        fdt_emit_text(m, "  of peak: of the copy bandwidth the model takes (%.0f GB/s, %s)\n",
                      d->top[0].terms.copy_gbs, d->top[0].terms.copy_measured
                                                    ? "the device's"
                                                    : "estimated per core");
    if (d->ntop)
        fdt_emit_text(m, "  the model's ranking (top %zu of %zu; predicted, not measured):\n",
                      d->ntop, d->n);
    fdt_emit_array(m, "ranking");
    fdt_emit_table(m, ranking_cols, NCOLS(ranking_cols));
    for (size_t i = 0; i < d->ntop; i++)
        ranking_row(m, dev, i, &d->top[i]);
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    collapsed_note(m, d);
    fdt_emit_end(m);
    emit_flush(m);
}

/* ------------------------------------------------------------------ replay */

static const fdt_col strategy_cols[] = {
    {"strategy", "strategy", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"evals_to_best", "evals to best", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"evals_within_1pct", "within 1%", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"evals_within_3pct", "within 3%", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"evals_within_10pct", "within 10%", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"stopped_after", "stops after", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"stopped_gap", "its best above", FDT_COL_REAL_OPT, "%.1f%%", FDT_SHOW_TEXT, 0},
    {"stopped_gap", "", FDT_COL_REAL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"stopped", "stopped", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"stopped_within_1pct", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"stopped_within_3pct", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
};
_Static_assert(FDT_REPLAY_NWITHIN == 3, "strategy_cols has a column per fdt_replay_within");

/* One problem of --replay: the record, then per strategy the evaluations it needed, and
 * where the stopping rules stop it (after how many, its best how far above the record's). */
void tune_out_replay(int json, const fdt_recipe *r, const fdt_replay_report *x)
{
    (void)json; /* the form was chosen by tune_out_offline_begin */
    fdt_emit *m = &offline;
    char pk[128];
    fdt_problem_format(&x->p, pk, sizeof pk);
    problem_head(m, &x->p, fdt_recipe_path(r));
    fdt_emit_str(m, "recorded_device", x->device);
    fdt_emit_int(m, "configs", (long long)x->configs);
    fdt_emit_str(m, "best_config", x->best_config);
    fdt_emit_real_opt(m, "best_ms", x->best_ms);
    fdt_emit_real_opt(m, "best_gbs", x->best_gbs);
    fdt_emit_text(m, "\n%s: %zu configs recorded on %s; best %s, %.4f ms, %.0f GB/s\n", pk,
                  x->configs, x->device, x->best_config, x->best_ms, x->best_gbs);
    fdt_emit_array(m, "strategies");
    fdt_emit_table(m, strategy_cols, NCOLS(strategy_cols));
    for (int k = 0; k < x->n; k++) {
        fdt_emit_row(m, NULL);
        fdt_emit_cell_str(m, fdt_search_kind_name(x->kind[k]));
        fdt_emit_cell_int(m, (long long)x->res[k].evals_to_best);
        for (int w = 0; w < FDT_REPLAY_NWITHIN; w++)
            fdt_emit_cell_int(m, (long long)x->res[k].evals_within[w]);
        const fdt_stop_replay_result *s = &x->stop[k];
        fdt_emit_cell_int(m, s->evals);
        fdt_emit_cell_real(m, s->gap >= 0 ? 100 * s->gap : NAN);
        fdt_emit_cell_real(m, s->gap >= 0 ? s->gap : NAN);
        fdt_emit_cell_str(m, s->stopped);
        fdt_emit_cell_int(m, s->within[0]);
        fdt_emit_cell_int(m, s->within[1]);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
    fdt_emit_end(m);
    emit_flush(m);
}
