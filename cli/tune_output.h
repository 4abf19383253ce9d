/* Output of the tune command: the progress line or log lines while tuning, the summary
 * table (or JSON), the results of the two offline modes, --dry-run and --replay
 * (tune_output.c), and the progress and outcome of a run over several GPUs (many_output.c). */
#ifndef FDT_TUNE_OUTPUT_H
#define FDT_TUNE_OUTPUT_H

#include <stdio.h>

#include "fdt_emit.h"
#include "fdt_many.h"
#include "fdt_offline.h"
#include "fdt_tune.h"

/* The legend of the mark " !" after a best config in the summaries: its search was cut
 * short (fdt_tune_summary.cut_short). */
#define TUNE_CUT_SHORT_NOTE                                                                   \
    "! search cut short by its share of --time: the best of what was measured, not of the "  \
    "space (a rerun resumes it)"

typedef struct tune_progress {
    int tty;         /* stderr is a terminal: one line rewritten in place */
    int line_open;   /* a progress line is on the screen */
} tune_progress;

void tune_progress_init(tune_progress *t, int json);
void tune_progress_event(void *ctx, const fdt_tune_event *ev); /* fdt_tune_progress */
void tune_progress_end(tune_progress *t);

/* The text of a tuning event into buf: 1 a log line, 2 the progress line of a terminal (tty:
 * stderr is one; evaluations), 0 nothing to show. */
int tune_event_text(const fdt_tune_event *ev, int tty, char *buf, size_t n);

void tune_out_summary(int json, const fdt_device *info, const fdt_device *dev,
                      const char *db_path, const fdt_tune_summary *s, int n);
/* The last line of a finished tune's text summary: the export command that turns its results
 * into a header ("next: fdtune export --gpu GPU [--db DB] -o fdtuned.h"); gpu NULL leaves
 * --gpu out (every device); cpu 1: the host CPU's results ("--cpu auto", a C header);
 * db_path is named only where it is not the default database. Text only: nothing in JSON. */
void tune_out_next_step(fdt_emit *m, const char *gpu, int cpu, const char *db_path);

/* ------------------------------------------------------------------ several GPUs */

/* The progress of a run over several GPUs: on a terminal a line per GPU, rewritten in place,
 * with what happens to runs and GPUs printed above them; otherwise every line prefixed by its
 * GPU ("[GPU 1] ..."). */
typedef struct many_progress {
    int tty;
    int lines;          /* GPU lines on the screen */
    double drawn;       /* when they were last drawn */
    int ngpus;
    char line[FDT_MAX_DEVICES][256];
} many_progress;

void many_progress_init(many_progress *t);
void many_progress_event(void *ctx, const fdt_many_event *ev); /* fdt_many_progress */
void many_progress_end(many_progress *t);

/* The outcome of a run over several GPUs: the GPUs, the problems (a row each, with the GPU
 * that tuned it), what was retried where, what failed; a table or JSON (schema 1). */
void many_out_summary(int json, const fdt_many_report *r, const char *db_path,
                      const char *simulate_from);

void tune_out_offline_begin(int json, const fdt_device *dev, const char *mode);
void tune_out_offline_end(int json);
/* One problem of the offline modes (fdt_tune_dry_run, fdt_tune_replay), recipe r's. */
void tune_out_dry_run(int json, const fdt_recipe *r, const fdt_device *dev,
                      const fdt_dry_run *d);
void tune_out_replay(int json, const fdt_recipe *r, const fdt_replay_report *x);

#endif
