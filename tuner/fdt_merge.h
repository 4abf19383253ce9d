/* Merging tuning databases: the shards of per-GPU or per-job tuning (node-local files, one
 * per task) into one database, and the shipped system database from them. Rows are copied by
 * their natural keys (fdt_db_import), so merging a shard twice adds nothing; the best of each
 * (device, problem) is then decided again by the rule tune and retune use (fdt_decide_beats:
 * the best so far stays unless a shard's best is faster beyond the noise of both), and the
 * decision is recorded with a reason "merge: ...". The inputs' recorded kernel sources
 * (fdt_db_kernel_check) go along with their results. Every input is opened read-only and
 * checked (schema version, integrity, foreign keys, run keys) before the output is opened or
 * created, and the whole merge is one transaction, so a refused input leaves the output
 * exactly as it was. Library code: nothing is printed. */
#ifndef FDT_MERGE_H
#define FDT_MERGE_H

#include <stddef.h>

#include "fdt_common.h"
#include "fdt_db.h"

typedef struct fdt_merge_opts {
    const char *out;            /* the output; created (with its directory) when missing */
    const char *const *in;      /* the inputs, merged in this order */
    size_t nin;
    /* Keep one result per (device model, problem): of the bests of the GPUs of one model,
     * the oldest stays unless a newer one beats it beyond noise (fdt_decide_beats); then only
     * those evaluations, their decisions and what they refer to remain, in a rollback
     * journal, compacted: how the system database is made. Records how in the metadata:
     * made (UTC), made_by (fdtune version and generator fingerprint), result_generators
     * (the fingerprints the kept results were measured with), inputs, command, content. */
    int best_only;
    /* With best_only: leave out the results whose kernel this fdtune does not write as it
     * was measured (fdt_db_kernel_check: differs, or unrecorded), so that what stays answers
     * with the kernels that were measured (bench/system_db.sh --drop-stale). */
    int drop_stale;
    const char *const *meta;    /* "KEY=VALUE": set in the output's metadata */
    size_t nmeta;
    const char *fdtune_version; /* of this fdtune, for the metadata of a best-only merge */
    const char *command;        /* the command line, for the same; may be NULL */
} fdt_merge_opts;

/* One input and what it brought. */
typedef struct fdt_merge_input {
    char path[4096];
    int version;                /* its schema version (older ones are read as they are) */
    fdt_db_counts rows;         /* what it holds */
    fdt_db_counts added;        /* of that, rows new to the output */
    int64_t bests;              /* its best results (one per device and problem) */
    int64_t won;                /* of them, the output's best after this input */
} fdt_merge_input;

typedef struct fdt_merge_report {
    fdt_merge_input *in;        /* one per input, in order */
    size_t nin;
    int created;                /* the output did not exist before */
    fdt_db_counts before, after; /* the output's rows */
    fdt_db_counts pruned;       /* best-only: rows removed */
    int64_t stale;              /* drop_stale: results left out for their kernel */
    int64_t closed;             /* best-only: runs still running, closed as interrupted */
    int64_t decisions;          /* best decisions the merge recorded */
} fdt_merge_report;

/* Merges o->in into o->out. Returns FDT_STATUS_OK; FDT_STATUS_USAGE when the request is
 * wrong (no input, the output among the inputs, a bad KEY=VALUE); FDT_STATUS_ERROR when an
 * input is refused (missing, not an fdtune database, failing its integrity or foreign-key
 * check, a newer schema, runs sharing a natural key: e names it), the output cannot be used,
 * or the write fails. On error the output is as before (a file created for it is removed).
 * r is filled as far as the merge got; free it with fdt_merge_report_free. */
fdt_status fdt_merge(const fdt_merge_opts *o, fdt_merge_report *r, fdt_err *e);
void fdt_merge_report_free(fdt_merge_report *r);

#endif
