/* fdtune db merge: shards into one database (fdt_merge.h). db/ copies rows by natural keys
 * (fdt_db_import) inside one bulk transaction; this file checks the inputs first, decides the
 * best of each (device, problem) again with the noise rule of tune and retune (decide.c),
 * carries the inputs' recorded kernel sources along, and, for the system database, keeps one
 * result per (device model, problem). */
#include "fdt_merge.h"
#include "fdt_decide.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void fdt_merge_report_free(fdt_merge_report *r)
{
    free(r->in);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- checking the inputs */

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Opens an input read-only and checks everything a merge relies on; older schemas are read
 * as they are (the read-only path never migrates: inputs are not ours to change). -2 when
 * the input is the output itself (a usage error), -1 when it is refused. */
static int open_input(const char *path, const struct stat *out_st, fdt_merge_input *mi,
                      fdt_db **db, fdt_err *e)
{
    struct stat sb;
    snprintf(mi->path, sizeof mi->path, "%s", path);
    if (stat(path, &sb) != 0)
        return fdt_err_set(e, "%s: %s", path, strerror(errno));
    if (out_st && same_file(&sb, out_st))
        return fdt_err_set(e, "%s: is the output itself", path) - 1;
    if (fdt_db_file_version(path, &mi->version, e) || fdt_db_open(path, FDT_DB_READONLY, db, e))
        return -1;
    if (fdt_db_check(*db, e) || fdt_db_import_check(*db, e) || fdt_db_count(*db, &mi->rows, e))
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- deciding */

static int take_first(void *ctx, const fdt_db_row *row)
{
    *(fdt_db_row *)ctx = *row;
    return 1;
}

/* The output's best of one pair before an input is imported (what tune calls the current
 * best: the decision in force, else the smallest median); *have = 0 when it has none. */
static int incumbent(fdt_db *out, const fdt_db_row *in_best, fdt_db_row *cur, int *have,
                     fdt_err *e)
{
    int64_t dev, prob;
    *have = 0;
    cur->ev.id = 0;
    if (fdt_db_device_find(out, &in_best->device, &dev, e) ||
        fdt_db_problem_find(out, &in_best->problem, &prob, e))
        return -1;
    if (dev && prob && fdt_db_top(out, dev, prob, 0, 1, take_first, cur, e))
        return -1;
    *have = cur->ev.id > 0;
    return 0;
}

/* Decides the output's best of the pair of one input best (imported now) against the
 * incumbent, and records it when it is not the decision in force. */
static int decide(fdt_db *out, const char *label, const fdt_db_row *cand,
                  const fdt_db_row *cur, int have_cur, fdt_merge_input *mi,
                  fdt_merge_report *r, fdt_err *e)
{
    int64_t ev, dev, prob;
    if (fdt_db_import_eval(out, cand->ev.id, &ev, &dev, &prob, e))
        return -1;
    if (!ev)
        return fdt_err_set(e, "internal error: evaluation %lld of %s was not imported",
                           (long long)cand->ev.id, mi->path);
    int64_t pick = ev;
    const char *why = "first decision";
    if (have_cur && cur->ev.id != ev) {
        fdt_decide_timing tc, tn;
        fdt_decide_timing_of(&cur->ev, &tc);
        fdt_decide_timing_of(&cand->ev, &tn);
        if (fdt_decide_beats(&tc, &tn)) {
            why = "faster beyond noise";
        } else {
            pick = cur->ev.id;
            why = "kept the best, not beaten beyond noise";
        }
    } else if (have_cur) {
        why = "the same result";
    }
    mi->won += pick == ev;
    fdt_db_decision d;
    int found;
    if (fdt_db_best_decision(out, dev, prob, &d, &found, e))
        return -1;
    if (found && d.eval_id == pick)
        return 0;
    char reason[128];
    snprintf(reason, sizeof reason, "merge: %.60s: %s", label, why);
    /* the mark of the search behind the pick (the input's, or the incumbent's decision) */
    int cut = pick == ev ? cand->cut_short : found && d.cut_short;
    /* and why that search stopped (the best row's, from its decision) */
    const char *stopped = pick == ev ? cand->stopped : cur->stopped;
    if (fdt_db_best_decide_stopped(out, dev, prob, pick, cut, stopped, reason, e))
        return -1;
    r->decisions++;
    return 0;
}

/* The input's recorded kernel sources (fdt_db_kernel_check): facts about its results, not
 * about the file, so they go along with the results. */
typedef struct carry {
    fdt_db *out;
    fdt_err *e;
    int failed;
} carry;

static int carry_one(void *ctx, const char *key, const char *value)
{
    carry *c = ctx;
    if (!fdt_db_kernel_is_source_key(key))
        return 0;
    c->failed = fdt_db_meta_set(c->out, key, value, c->e) != 0;
    return c->failed;
}

static int carry_kernel_sources(fdt_db *out, fdt_db *in, const fdt_merge_input *mi,
                                fdt_err *e)
{
    carry c = {out, e, 0};
    if (!mi->rows.metadata) /* none, or a file from before metadata (v1, v2) */
        return 0;
    if (fdt_db_meta(in, carry_one, &c, e) || c.failed)
        return fdt_err_wrap(e, "kernel sources");
    return 0;
}

/* One input into the output: its bests, the output's incumbents of those pairs, the import,
 * then a decision per pair. */
static int merge_one(fdt_db *out, fdt_db *in, fdt_merge_input *mi, fdt_merge_report *r,
                     fdt_err *e)
{
    fdt_db_rows best = {0};
    fdt_db_row *cur = NULL;
    int *have = NULL, rc = -1;
    char path[4096];
    snprintf(path, sizeof path, "%s", mi->path);
    const char *label = basename(path);
    if (fdt_db_best(in, NULL, fdt_db_collect_row, &best, e))
        goto done;
    cur = malloc((best.n + 1) * sizeof *cur);
    have = calloc(best.n + 1, sizeof *have);
    if (best.oom || !cur || !have) {
        fdt_err_set(e, "out of memory");
        goto done;
    }
    mi->bests = (int64_t)best.n;
    for (size_t i = 0; i < best.n; i++)
        if (incumbent(out, &best.v[i], &cur[i], &have[i], e))
            goto done;
    if (fdt_db_import(out, in, &mi->added, e) || carry_kernel_sources(out, in, mi, e))
        goto done;
    for (size_t i = 0; i < best.n; i++)
        if (decide(out, label, &best.v[i], &cur[i], have[i], mi, r, e))
            goto done;
    rc = 0;
done:
    free(best.v);
    free(cur);
    free(have);
    return rc ? fdt_err_wrap(e, "merge %s", mi->path) : 0;
}

/* ---------------------------------------------------------------- best only */

/* The order in which the bests of one slot (device model, problem) are judged: by slot, then
 * the oldest first, so a newer result replaces it only when faster beyond noise. */
static int cmp_slot_age(const void *pa, const void *pb)
{
    const fdt_db_row *a = pa, *b = pb;
    const fdt_problem *p = &a->problem, *q = &b->problem;
    int c = strcmp(a->device.name, b->device.name);
    if (!c)
        c = a->device.compute_units - b->device.compute_units;
    if (!c)
        c = strcmp(a->device.arch, b->device.arch);
    if (!c)
        c = (int)p->op - (int)q->op;
    if (!c)
        c = p->R - q->R;
    if (!c)
        c = (int)p->prec - (int)q->prec;
    if (!c)
        c = (p->nx > q->nx) - (p->nx < q->nx);
    if (!c)
        c = (p->ny > q->ny) - (p->ny < q->ny);
    if (!c)
        c = (p->nz > q->nz) - (p->nz < q->nz);
    if (!c)
        c = strcmp(a->ev.created, b->ev.created);
    if (!c)
        c = (a->ev.id > b->ev.id) - (a->ev.id < b->ev.id);
    return c;
}

static int same_slot(const fdt_db_row *a, const fdt_db_row *b)
{
    return fdt_device_same_model(&a->device, &b->device) && a->problem.op == b->problem.op &&
           a->problem.R == b->problem.R && a->problem.prec == b->problem.prec &&
           a->problem.nx == b->problem.nx && a->problem.ny == b->problem.ny &&
           a->problem.nz == b->problem.nz;
}

/* drop_stale: leaves out of best the results whose kernel this fdtune no longer writes as it
 * was measured, or whose code was never recorded (fdt_db_kernel_check); counted in r. */
static int drop_stale(fdt_db *out, fdt_db_rows *best, fdt_merge_report *r, fdt_err *e)
{
    size_t n = 0;
    for (size_t i = 0; i < best->n; i++) {
        fdt_db_kernel k;
        if (fdt_db_kernel_check(out, &best->v[i], &k, e))
            return -1;
        if (k == FDT_DB_KERNEL_DIFFERS || k == FDT_DB_KERNEL_UNRECORDED)
            r->stale++;
        else
            best->v[n++] = best->v[i];
    }
    best->n = n;
    return 0;
}

/* One result per (device model, problem), decided by the noise rule; then only those stay. A
 * best-only file is final: runs still running in it are closed, and the kernel sources of
 * results it no longer holds go. */
static int keep_best_only(fdt_db *out, const fdt_merge_opts *o, fdt_merge_report *r,
                          fdt_err *e)
{
    fdt_db_rows best = {0};
    int64_t *keep = NULL;
    size_t nkeep = 0;
    int rc = -1;
    if (fdt_db_best(out, NULL, fdt_db_collect_row, &best, e))
        goto done;
    keep = malloc((best.n + 1) * sizeof *keep);
    if (best.oom || !keep) {
        fdt_err_set(e, "out of memory");
        goto done;
    }
    if (o->drop_stale && drop_stale(out, &best, r, e))
        goto done;
    qsort(best.v, best.n, sizeof *best.v, cmp_slot_age);
    for (size_t i = 0; i < best.n;) {
        size_t w = i, j = i + 1;
        for (; j < best.n && same_slot(&best.v[i], &best.v[j]); j++) {
            fdt_decide_timing tw, tj;
            fdt_decide_timing_of(&best.v[w].ev, &tw);
            fdt_decide_timing_of(&best.v[j].ev, &tj);
            if (fdt_decide_beats(&tw, &tj))
                w = j;
        }
        keep[nkeep++] = best.v[w].ev.id;
        i = j;
    }
    rc = fdt_db_prune_keep(out, keep, nkeep, &r->pruned, e) ||
         fdt_db_runs_close_running(out, "still running when merged into a best-only database "
                                        "(finished: its last evaluation)", &r->closed, e) ||
         fdt_db_kernel_prune(out, e);
done:
    free(best.v);
    free(keep);
    return rc ? fdt_err_wrap(e, "keep the best only") : 0;
}

/* ---------------------------------------------------------------- metadata */

static int check_meta(const fdt_merge_opts *o, fdt_err *e)
{
    for (size_t i = 0; i < o->nmeta; i++) {
        const char *eq = strchr(o->meta[i], '=');
        if (!eq || eq == o->meta[i])
            return fdt_err_set(e, "metadata '%s': expected KEY=VALUE", o->meta[i]);
    }
    return 0;
}

/* The distinct generator fingerprints of what the output holds, ", "-separated. */
static int result_generators(fdt_db *db, fdt_sb *b, fdt_err *e)
{
    fdt_db_rows best = {0};
    if (fdt_db_best(db, NULL, fdt_db_collect_row, &best, e))
        return -1;
    for (size_t i = 0; i < best.n; i++) {
        const char *g = best.v[i].env.generator;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(best.v[j].env.generator, g);
        if (!seen)
            fdt_sb_printf(b, "%s%s", b->len ? ", " : "", g);
    }
    int oom = best.oom || b->oom;
    free(best.v);
    return oom ? fdt_err_set(e, "out of memory") : 0;
}

/* What a best-only merge records about itself, then the KEY=VALUE of the caller (which may
 * replace any of them). */
static int write_meta(fdt_db *out, const fdt_merge_opts *o, fdt_err *e)
{
    if (o->best_only) {
        char now[32], made_by[160];
        time_t t = time(NULL);
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(made_by, sizeof made_by, "fdtune %s (generator %s)",
                 o->fdtune_version ? o->fdtune_version : "?", fdt_gen_fingerprint());
        fdt_sb ins, gens;
        fdt_sb_init(&ins);
        fdt_sb_init(&gens);
        for (size_t i = 0; i < o->nin; i++) {
            char p[4096];
            snprintf(p, sizeof p, "%s", o->in[i]);
            fdt_sb_printf(&ins, "%s%s", i ? " " : "", basename(p));
        }
        int rc = result_generators(out, &gens, e) ||
                 fdt_db_meta_set(out, "made", now, e) ||
                 fdt_db_meta_set(out, "made_by", made_by, e) ||
                 fdt_db_meta_set(out, "result_generators", fdt_sb_str(&gens), e) ||
                 fdt_db_meta_set(out, "inputs", fdt_sb_str(&ins), e) ||
                 fdt_db_meta_set(out, "command", o->command ? o->command : "", e) ||
                 fdt_db_meta_set(out, "content", "best only: one result per device model and "
                                 "problem, decided by the noise rule of tune and retune", e);
        fdt_sb_free(&ins);
        fdt_sb_free(&gens);
        if (rc)
            return -1;
    }
    for (size_t i = 0; i < o->nmeta; i++) {
        const char *eq = strchr(o->meta[i], '=');
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(eq - o->meta[i]), o->meta[i]);
        if (fdt_db_meta_set(out, key, eq + 1, e))
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- the merge */

/* What an existing output must pass before the merge writes to it, on the read-only
 * connection of fdt_db_open_checked: the checks of an input. */
static int gate_output(void *ctx, fdt_db *db, fdt_err *e)
{
    (void)ctx;
    return fdt_db_check(db, e) || fdt_db_import_check(db, e) ? -1 : 0;
}

static void remove_output(const char *path)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

/* Everything inside the output's one transaction. */
static int merge_all(fdt_db *out, fdt_db **ins, const fdt_merge_opts *o, fdt_merge_report *r,
                     fdt_err *e)
{
    if (fdt_db_bulk_begin(out, e))
        return -1;
    for (size_t i = 0; i < o->nin; i++)
        if (merge_one(out, ins[i], &r->in[i], r, e))
            goto fail;
    if ((o->best_only && keep_best_only(out, o, r, e)) || write_meta(out, o, e))
        goto fail;
    if (fdt_db_bulk_commit(out, e))
        return -1;
    return 0;
fail:
    fdt_db_bulk_rollback(out);
    return -1;
}

fdt_status fdt_merge(const fdt_merge_opts *o, fdt_merge_report *r, fdt_err *e)
{
    memset(r, 0, sizeof *r);
    if (!o->out || !*o->out || o->nin == 0 || check_meta(o, e)) {
        if (!o->out || !*o->out || o->nin == 0)
            fdt_err_set(e, "merge: an output and at least one input are needed");
        return FDT_STATUS_USAGE;
    }
    /* the output rule for a database: a link followed, a device or FIFO refused */
    char out_path[4096];
    if (fdt_output_db_path(o->out, out_path, sizeof out_path, e)) {
        fdt_err_wrap(e, "merge: output");
        return FDT_STATUS_ERROR;
    }
    struct stat out_st;
    int exists = stat(out_path, &out_st) == 0;
    r->created = !exists;
    r->in = calloc(o->nin, sizeof *r->in);
    fdt_db **ins = calloc(o->nin, sizeof *ins);
    fdt_db *out = NULL;
    fdt_status st = FDT_STATUS_ERROR;
    if (!r->in || !ins) {
        fdt_err_set(e, "merge: out of memory");
        goto done;
    }
    r->nin = o->nin;
    /* Every input passes before the output is touched. */
    for (size_t i = 0; i < o->nin; i++) {
        int rc = open_input(o->in[i], exists ? &out_st : NULL, &r->in[i], &ins[i], e);
        if (rc) {
            st = rc == -2 ? FDT_STATUS_USAGE : FDT_STATUS_ERROR;
            fdt_err_wrap(e, "input refused");
            goto done;
        }
    }
    if (fdt_db_open_checked(out_path, FDT_DB_CREATE, gate_output, NULL, &out, e) ||
        fdt_db_count(out, &r->before, e)) {
        fdt_err_wrap(e, "output");
        goto done;
    }
    if (merge_all(out, ins, o, r, e) || (o->best_only && fdt_db_compact(out, e)) ||
        fdt_db_count(out, &r->after, e))
        goto done;
    st = FDT_STATUS_OK;
done:
    for (size_t i = 0; ins && i < o->nin; i++)
        fdt_db_close(ins[i]);
    free(ins);
    fdt_db_close(out);
    if (st != FDT_STATUS_OK && r->created)
        remove_output(out_path);
    return st;
}
