/* A tuning run, what `fdtune tune` does on a GPU: the problem of each requested operator,
 * one after the other on one GPU of a session, each with the strategy and budget its plan
 * gives (the request, then the recipe, then defaults), within one time limit for all and
 * until the session's stop flag is set; the summaries say what each problem found. */
#include "fdt_tune.h"

#include <stdio.h>
#include <string.h>

void fdt_tune_request_init(fdt_tune_request *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->strategy = FDT_SEARCH_MODEL;
    rq->seed = 1;
    rq->command = "";
}

void fdt_tune_plan(const fdt_tune_request *rq, const fdt_recipe *r, fdt_search_kind *k,
                   int *budget)
{
    *k = FDT_SEARCH_MODEL;
    fdt_err e;
    if (rq->have_strategy)
        *k = rq->strategy;
    else if (fdt_recipe_strategy(r))
        fdt_search_kind_parse(fdt_recipe_strategy(r), k, &e);
    *budget = rq->budget > 0 ? rq->budget : fdt_recipe_budget(r);
}

fdt_status fdt_tune_run(const fdt_session *s, const fdt_session_gpu *g, fdt_recipe *const *rec,
                        const fdt_tune_request *rq, fdt_tune_progress cb, void *cbctx,
                        fdt_tune_report *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    fdt_tune_ctx ctx = {.w = g->w, .db = s->db, .device_id = g->device_id,
                        .env_id = g->env_id, .dev = &g->dev};
    double deadline = rq->time_s > 0 ? fdt_now() + rq->time_s : 0;
    for (int op = 0; op < FDT_OP_COUNT && !*s->stop; op++) {
        if (!(rq->ops & (1u << op)))
            continue;
        fdt_problem p = rq->p;
        p.op = (fdt_op)op;
        fdt_tune_opts o;
        fdt_tune_opts_default(&o);
        fdt_tune_plan(rq, rec[op], &o.strategy, &o.budget);
        o.deadline = deadline;
        o.force = rq->force;
        o.seed = rq->seed;
        if (rq->parallel > 0)
            o.parallel = rq->parallel;
        o.command = rq->command;
        o.stop = s->stop;
        if (fdt_tune_problem(&ctx, rec[op], &p, &o, cb, cbctx, &out->sum[out->n], e)) {
            char pk[128];
            fdt_problem_format(&p, pk, sizeof pk);
            fdt_err_wrap(e, "%s", pk);
            return FDT_STATUS_ERROR;
        }
        if (!out->sum[out->n].have_best)
            out->missing++;
        out->n++;
        if (deadline > 0 && fdt_now() > deadline)
            break;
    }
    out->stopped = *s->stop != 0;
    return out->stopped ? FDT_STATUS_INTERRUPTED
           : out->missing ? FDT_STATUS_FAILED
                          : FDT_STATUS_OK;
}
