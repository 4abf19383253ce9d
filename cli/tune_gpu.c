/* What the three ways of the tune command share (tune_cli.h): the recipes of the request,
 * the session options, the simulated node of --simulate-from, and the run on one GPU, which
 * a task of a plan (tune_task.c) is too. */
#include "fdt_db.h"
#include "tune_cli.h"
#include "tune_output.h"

#ifndef FDTUNE_VERSION
#define FDTUNE_VERSION "0.0.0"
#endif

fdt_dialect tune_dialect(const tune_args *a) { return a->cpu ? FDT_DIALECT_C : FDT_DIALECT_HIP; }

int tune_load_recipes(const tune_args *a, fdt_recipe **rec)
{
    fdt_err e;
    for (int op = 0; op < FDT_OP_COUNT; op++)
        rec[op] = NULL;
    for (int op = 0; op < FDT_OP_COUNT; op++)
        if ((a->rq.ops & (1u << op)) &&
            fdt_recipe_load_for_dialect((fdt_op)op, tune_dialect(a), a->recipe, &rec[op], &e)) {
            print_error("%s", e.msg);
            tune_free_recipes(rec);
            return EXIT_USAGE;
        }
    return EXIT_OK;
}

void tune_free_recipes(fdt_recipe **rec)
{
    for (int op = 0; op < FDT_OP_COUNT; op++) {
        fdt_recipe_free(rec[op]);
        rec[op] = NULL;
    }
}

void tune_session_opts(const tune_args *a, const fdt_catalogue *cat, fdt_session_opts *so)
{
    fdt_session_opts_init(so);
    so->db_path = a->db;
    so->cat = cat;
    so->gpu = a->gpu;
    so->cpu = a->cpu;
    so->fdtune_version = FDTUNE_VERSION;
    so->worker.seed = a->rq.seed;
    so->worker.eval_timeout_ms = (int)a->timeout * 1000;
    if (a->simulate) {
        so->worker.simulate_from = a->simulate;
        /* a simulated setup reads a few rows: it has no business taking minutes */
        so->worker.setup_timeout_ms = so->worker.eval_timeout_ms;
    }
}

int tune_sim_probe(const tune_args *a, fdt_probe *p, const fdt_probe **probed)
{
    *probed = NULL;
    if (!a->simulate)
        return 0;
    int n = a->sim_gpus; /* else as many as --devices names, else 1 */
    for (int i = 0; !a->sim_gpus && i < a->ndevices; i++)
        n = a->devices[i] + 1 > n ? a->devices[i] + 1 : n;
    fdt_err e;
    if (fdt_sim_probe(a->simulate, n ? n : 1, p, &e)) {
        print_error("%s", e.msg);
        return -1;
    }
    *probed = p;
    return 0;
}

/* A session failed to open: says why (no GPU: what each backend saw). */
static void print_open_failure(fdt_status st, const fdt_session *s, const fdt_err *e)
{
    if (st == FDT_STATUS_NO_GPU)
        print_no_gpu(&s->probe, "nothing can be tuned here",
                     "Without a GPU: --cpu auto tunes the host CPU; --dry-run shows the space, "
                     "the pruning and the model's ranking; --replay DB compares the strategies "
                     "on stored results; --simulate-from DB answers from recorded results");
    else
        print_error("%s", e->msg);
}

int tune_one_gpu(tune_args *a, const fdt_catalogue *cat, fdt_recipe **rec, const char *db_path,
                 int *opened)
{
    fdt_err e;
    fdt_probe simprobe;
    fdt_session_opts so;
    tune_session_opts(a, cat, &so);
    so.select = 1;
    if (db_path)
        so.db_path = db_path;
    *opened = 0;
    if (tune_sim_probe(a, &simprobe, &so.probed))
        return EXIT_USAGE;
    fdt_session s;
    fdt_status st = fdt_session_open(&so, &s, &e);
    *opened = s.db != NULL;
    if (s.stale)
        print_note("%d earlier run(s) ended without finishing (killed?); marked interrupted, "
                   "their results are kept and resumed", s.stale);
    if (st != FDT_STATUS_OK) {
        print_open_failure(st, &s, &e);
        fdt_session_close(&s);
        return exit_status(st);
    }
    a->rq.command = a->command;
    const fdt_session_gpu *g = &s.gpu[0];
    tune_progress prog;
    tune_progress_init(&prog, a->json);
    fdt_tune_report rep;
    st = fdt_tune_run(&s, g, rec, &a->rq, tune_progress_event, &prog, &rep, &e);
    tune_progress_end(&prog);
    if (st == FDT_STATUS_ERROR)
        print_error("%s", e.msg);
    tune_out_summary(a->json, &s.probe.device[g->live], &g->dev, fdt_db_path(s.db), rep.sum,
                     rep.n);
    fdt_session_close(&s);
    return exit_status(st);
}

