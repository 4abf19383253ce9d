/* What a run over several GPUs shows (tuner/fdt_many.h). Progress on stderr: on a terminal
 * one line per GPU, rewritten in place, with the log lines (a problem set up, finished, a GPU
 * failed, a retry) printed above them; otherwise every line prefixed by its GPU. The outcome
 * on stdout, through the emitter (a table or JSON): the GPUs, one row per problem and device
 * model with the GPU that tuned it, what was retried where, what failed, and, for simulated
 * GPUs, that nothing was measured here. */
#include "tune_output.h"

#include "cli.h"
#include "fdt_target.h"

#include <math.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

/* ------------------------------------------------------------------ progress */

void many_progress_init(many_progress *t)
{
    memset(t, 0, sizeof *t);
    t->tty = isatty(STDERR_FILENO);
}

/* The GPU lines again, under what was printed (tty), each cut to the terminal's width so
 * that none wraps (the cursor goes back up one row per GPU). */
static void redraw(many_progress *t, const char *log)
{
    struct winsize ws;
    int cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 79;
    if (t->lines > 0)
        fprintf(stderr, "\033[%dA", t->lines);
    fprintf(stderr, "\r\033[J");
    if (log)
        fprintf(stderr, "%s\n", log);
    for (int g = 0; g < t->ngpus; g++)
        fprintf(stderr, "%.*s\n", cols, t->line[g]);
    t->lines = t->ngpus;
    t->drawn = fdt_now();
}

/* A log line of GPU g (-1: of the run). */
static void log_line(many_progress *t, const fdt_many_report *r, int g, const char *text)
{
    char prefix[32] = "";
    if (g >= 0)
        snprintf(prefix, sizeof prefix, "[GPU %d] ", r->gpu[g].live);
    if (!t->tty) {
        fprintf(stderr, "%s%s\n", prefix, text);
        return;
    }
    char buf[2200];
    snprintf(buf, sizeof buf, "%s%s", prefix, text);
    redraw(t, buf);
}

/* GPU g's line on a terminal. */
static void status(many_progress *t, const fdt_many_report *r, int g, const char *what)
{
    snprintf(t->line[g], sizeof t->line[g], "GPU %d %.60s: %s", r->gpu[g].live,
             r->gpu[g].dev.name, what);
}

static void problem_text(const fdt_many_report *r, int k, char *buf, size_t n)
{
    fdt_problem_format(&r->v[k].p, buf, n);
}

/* A problem ended: how. */
static void finished(many_progress *t, const fdt_many_report *r, int g, int k)
{
    const fdt_many_problem *p = &r->v[k];
    char pk[96], text[2400];
    problem_text(r, k, pk, sizeof pk);
    if (p->state == FDT_MANY_FAILED)
        snprintf(text, sizeof text, "%s: failed: %s", pk, p->error);
    else if (!p->sum.have_best)
        snprintf(text, sizeof text, "%s: no verified config%s%s", pk,
                 p->sum.stopped[0] ? "; stopped: " : "", p->sum.stopped);
    else
        snprintf(text, sizeof text, "%s: best %s, %.0f GB/s (%.3f of copy)%s%s", pk,
                 p->sum.best_config, p->sum.best_gbs, p->sum.best_frac,
                 p->sum.stopped[0] ? "; stopped: " : "", p->sum.stopped);
    if (g >= 0)
        status(t, r, g, "idle");
    log_line(t, r, g, text);
}

void many_progress_event(void *ctx, const fdt_many_event *ev)
{
    many_progress *t = ctx;
    const fdt_many_report *r = ev->report;
    t->ngpus = r->ngpus;
    for (int k = 0; k < r->ngpus; k++)
        if (!t->line[k][0])
            status(t, r, k, "starting");
    char text[2400], pk[96];
    int g = ev->gpu;
    switch (ev->kind) {
    case FDT_MANY_STARTED:
        status(t, r, g, "started");
        snprintf(text, sizeof text, "%s (%s, %s): started", r->gpu[g].dev.name,
                 r->gpu[g].dev.arch, r->gpu[g].dev.uuid);
        log_line(t, r, g, text);
        return;
    case FDT_MANY_GPU_FAILED:
        status(t, r, g, "failed, out of the run");
        snprintf(text, sizeof text, "failed, taken out of the run: %s", ev->why);
        log_line(t, r, g, text);
        return;
    case FDT_MANY_SUSPECT:
        problem_text(r, ev->problem, pk, sizeof pk);
        status(t, r, g, "failed; waits for the retry of its problem");
        snprintf(text, sizeof text, "%s failed: %s; it goes to another GPU of the model", pk,
                 ev->why);
        log_line(t, r, g, text);
        return;
    case FDT_MANY_RETRY:
        problem_text(r, ev->problem, pk, sizeof pk);
        snprintf(text, sizeof text, "%s: retried here after GPU %d failed", pk,
                 r->gpu[ev->from].live);
        log_line(t, r, g, text);
        return;
    case FDT_MANY_FINISHED:
        finished(t, r, g, ev->problem);
        return;
    case FDT_MANY_TUNE:
        break;
    }
    int kind = tune_event_text(ev->ev, t->tty, text, sizeof text);
    if (kind == 1) {
        log_line(t, r, g, text);
    } else if (kind == 2) {
        snprintf(t->line[g], sizeof t->line[g], "GPU %d %s", r->gpu[g].live, text);
        if (fdt_now() - t->drawn > 0.1) /* at most ten times a second */
            redraw(t, NULL);
    }
}

void many_progress_end(many_progress *t)
{
    if (t->tty && t->lines)
        redraw(t, NULL);
    t->lines = 0;
}

/* ------------------------------------------------------------------ summary */

static const fdt_col gpu_cols[] = {
    {"gpu", "GPU", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"name", "device", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"arch", "arch", FDT_COL_STR, NULL, FDT_SHOW_ALL, 0},
    {"backend", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"compute_units", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"uuid", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"simulated", "", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
    {"problems_tuned", "problems", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"failed", "", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
    {"why", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"status", "status", FDT_COL_STR, NULL, FDT_SHOW_TEXT, 0},
};

static void gpu_rows(fdt_emit *m, const fdt_many_report *r)
{
    fdt_emit_array(m, "gpus");
    fdt_emit_table(m, gpu_cols, NCOLS(gpu_cols));
    for (int g = 0; g < r->ngpus; g++) {
        const fdt_many_gpu *x = &r->gpu[g];
        char st[1100];
        snprintf(st, sizeof st, "%s%s", x->failed    ? "failed: "
                                         : x->started ? "ok"
                                                      : "not started",
                 x->failed ? x->why : "");
        fdt_emit_row(m, NULL);
        fdt_emit_cell_int(m, x->live);
        fdt_emit_cell_str(m, x->dev.name);
        fdt_emit_cell_str(m, x->dev.arch);
        fdt_emit_cell_str(m, x->dev.backend);
        fdt_emit_cell_int(m, x->dev.compute_units);
        fdt_emit_cell_str(m, x->dev.uuid);
        fdt_emit_cell_bool(m, fdt_device_simulated(&x->dev));
        fdt_emit_cell_int(m, x->tuned);
        fdt_emit_cell_bool(m, x->failed);
        fdt_emit_cell_str(m, x->failed ? x->why : "");
        fdt_emit_cell_str(m, st);
        fdt_emit_row_end(m);
    }
    fdt_emit_table_end(m);
    fdt_emit_end(m);
}

static const fdt_col problem_cols[] = {
    {"gpu", "GPU", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, FDT_COL_KEY},
    PROBLEM_COLS,
    {"state", "", FDT_COL_STR, NULL, FDT_SHOW_DATA, 0},
    {"best_config", "best config", FDT_COL_STR_OPT, NULL, FDT_SHOW_TEXT,
     FDT_COL_DASH | FDT_COL_KEY},
    {"best_config", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"best_config_full", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"best_ms", "median ms", FDT_COL_REAL_OPT, "%.4f", FDT_SHOW_ALL, 0},
    {"best_gbs", "GB/s", FDT_COL_REAL_OPT, "%.0f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"best_frac_copy", "of copy", FDT_COL_REAL_OPT, "%.3f", FDT_SHOW_ALL, FDT_COL_KEY},
    {"best_from_this_run", "", FDT_COL_BOOL_OPT, NULL, FDT_SHOW_DATA, 0},
    {"cut_short", "", FDT_COL_BOOL, NULL, FDT_SHOW_DATA, 0},
    {"stopped", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
    {"speedup", "speedup", FDT_COL_REAL_OPT, "%.2fx", FDT_SHOW_ALL, 0},
    {"run", "run", FDT_COL_INT_OPT, NULL, FDT_SHOW_ALL, 0},
    {"tried", "tried", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"failed", "failed", FDT_COL_INT, NULL, FDT_SHOW_ALL, 0},
    {"pruned", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"resumed", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"not_recorded", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"tries", "", FDT_COL_INT, NULL, FDT_SHOW_DATA, 0},
    {"error", "", FDT_COL_STR_OPT, NULL, FDT_SHOW_DATA, 0},
};

static const char *state_name(fdt_many_state s)
{
    return s == FDT_MANY_DONE ? "done" : s == FDT_MANY_FAILED ? "failed"
                                : s == FDT_MANY_RUNNING     ? "running"
                                                            : "not started";
}

static void problem_row(fdt_emit *m, const fdt_many_report *r, const fdt_many_problem *p)
{
    const fdt_tune_summary *x = &p->sum;
    int best = p->state == FDT_MANY_DONE && x->have_best;
    char cfg[FDT_CONFIG_DISPLAY_MAX + 8], full[FDT_CONFIG_DISPLAY_MAX];
    config_display(x->best_config, p->gpu >= 0 ? &r->gpu[p->gpu].dev : NULL, full, sizeof full);
    snprintf(cfg, sizeof cfg, "%s%s%s", full, x->best_from_run ? "" : " *",
             x->cut_short ? " !" : "");
    fdt_emit_row(m, NULL);
    fdt_emit_cell_int(m, p->gpu >= 0 ? r->gpu[p->gpu].live : -1);
    emit_problem_cells(m, &p->p);
    fdt_emit_cell_str(m, state_name(p->state));
    fdt_emit_cell_str(m, best ? cfg : "");
    fdt_emit_cell_str(m, best ? x->best_config : "");
    fdt_emit_cell_str(m, best ? full : "");
    fdt_emit_cell_real(m, best ? x->best_ms : NAN);
    fdt_emit_cell_real(m, best ? x->best_gbs : NAN);
    fdt_emit_cell_real(m, best ? x->best_frac : NAN);
    fdt_emit_cell_bool(m, best ? x->best_from_run : -1);
    fdt_emit_cell_bool(m, x->cut_short);
    fdt_emit_cell_str(m, x->stopped);
    fdt_emit_cell_real(m, best && x->speedup > 0 ? x->speedup : NAN);
    fdt_emit_cell_int(m, x->run_id > 0 ? x->run_id : -1);
    fdt_emit_cell_int(m, x->tried);
    fdt_emit_cell_int(m, x->failed);
    fdt_emit_cell_int(m, x->pruned);
    fdt_emit_cell_int(m, (long long)x->resumed);
    fdt_emit_cell_int(m, (long long)x->not_recorded);
    fdt_emit_cell_int(m, p->tries);
    fdt_emit_cell_str(m, p->state == FDT_MANY_FAILED ? p->error : "");
    fdt_emit_row_end(m);
}

/* What was retried where, as data and as notes. */
static void retries(fdt_emit *m, const fdt_many_report *r)
{
    fdt_emit_array(m, "retries");
    for (int i = 0; i < r->nretries; i++) {
        const fdt_many_retry *x = &r->retries[i];
        const fdt_many_problem *p = &r->v[x->problem];
        char pk[96], to[64] = "not retried";
        fdt_problem_format(&p->p, pk, sizeof pk);
        if (x->to >= 0)
            snprintf(to, sizeof to, "retried on GPU %d (%s)", r->gpu[x->to].live,
                     p->state == FDT_MANY_DONE ? "done" : state_name(p->state));
        fdt_emit_text(m, "retry: %s failed on GPU %d (%s); %s\n", pk, r->gpu[x->from].live,
                      x->why, to);
        fdt_emit_object(m, NULL);
        fdt_emit_str(m, "problem", pk);
        fdt_emit_int(m, "from_gpu", r->gpu[x->from].live);
        fdt_emit_int_opt(m, "to_gpu", x->to >= 0 ? r->gpu[x->to].live : -1);
        fdt_emit_str(m, "why", x->why);
        fdt_emit_end(m);
    }
    fdt_emit_end(m);
}

/* Below the tables: simulation, failures, what was not started, where results are. */
static void notes(fdt_emit *m, const fdt_many_report *r, const char *db_path)
{
    int resumed = 0, cut = 0;
    for (int i = 0; i < r->n; i++) {
        const fdt_many_problem *p = &r->v[i];
        resumed |= p->state == FDT_MANY_DONE && p->sum.have_best && !p->sum.best_from_run;
        cut |= p->sum.cut_short;
        char pk[96];
        fdt_problem_format(&p->p, pk, sizeof pk);
        if (p->state == FDT_MANY_FAILED)
            fdt_emit_text(m, "failed: %s: %s\n", pk, p->error);
        else if (p->state == FDT_MANY_PENDING)
            fdt_emit_text(m, "not started: %s (%s)\n", pk,
                          r->stopped ? "interrupted" : "time limit");
    }
    if (resumed)
        fdt_emit_text(m, "* measured by an earlier run with the same device and software "
                         "environment\n");
    if (cut)
        fdt_emit_text(m, "%s\n", TUNE_CUT_SHORT_NOTE);
    fdt_emit_text(m, "results stored in %s ('fdtune query best' shows them)\n", db_path);
    int any_done = 0;
    for (int i = 0; i < r->n; i++)
        any_done |= r->v[i].state == FDT_MANY_DONE && r->v[i].sum.have_best;
    if (any_done) /* a run on the host CPU has it as its one device */
        tune_out_next_step(m, NULL, r->ngpus == 1 && fdt_target_device_is_cpu(&r->gpu[0].dev),
                           db_path);
}

void many_out_summary(int json, const fdt_many_report *r, const char *db_path,
                      const char *simulate_from)
{
    fdt_sb b;
    fdt_emit m;
    emit_init(&m, json ? FDT_EMIT_JSON : FDT_EMIT_TEXT, &b);
    emit_doc_begin(&m);
    fdt_emit_bool(&m, "simulated", r->simulated);
    fdt_emit_str_opt(&m, "simulated_from", r->simulated && simulate_from ? simulate_from : "");
    fdt_emit_str(&m, "database", db_path);
    if (r->simulated)
        fdt_emit_text(&m, "\nSIMULATED: %d simulated GPU(s) answered from %s; no GPU ran "
                          "anything here\n", r->ngpus, simulate_from);
    fdt_emit_text(&m, "\n");
    gpu_rows(&m, r);
    fdt_emit_text(&m, "\n");
    fdt_emit_array(&m, "problems");
    fdt_emit_table(&m, problem_cols, NCOLS(problem_cols));
    for (int i = 0; i < r->n; i++)
        problem_row(&m, r, &r->v[i]);
    fdt_emit_table_end(&m);
    fdt_emit_end(&m);
    retries(&m, r);
    notes(&m, r, db_path);
    fdt_emit_end(&m);
    emit_done(&m);
}
