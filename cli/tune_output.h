/* Output of the tune command: the progress line or log lines while tuning, the summary
 * table (or JSON), and the results of the two offline modes, --dry-run and --replay. */
#ifndef FDT_TUNE_OUTPUT_H
#define FDT_TUNE_OUTPUT_H

#include <stdio.h>

#include "fdt_offline.h"
#include "fdt_tune.h"

typedef struct tune_progress {
    int tty;         /* stderr is a terminal: one line rewritten in place */
    int line_open;   /* a progress line is on the screen */
    char problem[96];
} tune_progress;

void tune_progress_init(tune_progress *t, int json);
void tune_progress_event(void *ctx, const fdt_tune_event *ev); /* fdt_tune_progress */
void tune_progress_end(tune_progress *t);

void tune_out_summary(int json, const fdt_device *info, const fdt_device *dev,
                      const char *db_path, const fdt_tune_summary *s, int n);

void tune_out_offline_begin(int json, const fdt_device *dev, const char *mode);
void tune_out_offline_end(int json);
/* One problem of the offline modes (fdt_tune_dry_run, fdt_tune_replay), recipe r's. */
void tune_out_dry_run(int json, const fdt_recipe *r, const fdt_device *dev,
                      const fdt_dry_run *d);
void tune_out_replay(int json, const fdt_recipe *r, const fdt_replay_report *x);

#endif
