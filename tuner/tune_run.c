/* A tuning run, what `fdtune tune` does on a GPU: the problem of each requested operator,
 * one after the other on one GPU of a session, each with the strategy and budget its plan
 * gives (the request, then the recipe, then defaults), within one time limit shared among
 * the problems still to tune (each search gets an equal share of what remains when it
 * begins), and
 * until the session's stop flag is set; the summaries say what each problem found. Also the
 * problems of a request that lists several radii, precisions or grids, which a run over
 * several GPUs (many.c) and a plan of tasks (tasks.c) spread. */
#include "fdt_tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fdt_tune_request_init(fdt_tune_request *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->strategy = FDT_SEARCH_MODEL;
    rq->seed = 1;
    rq->command = "";
    fdt_stop_opts_default(&rq->stop_rules);
}

void fdt_tune_request_problem(const fdt_tune_request *rq, fdt_op op, fdt_problem *p)
{
    *p = rq->p;
    p->op = op;
    if (op != FDT_OP_DWAVE) {
        p->absorb_w = 0;
        p->absorb_s = 0;
    }
}

int fdt_tune_problems(const fdt_tune_request *rq, fdt_problem **out, int *n, fdt_err *e)
{
    *out = NULL;
    *n = 0;
    int64_t one[1][3] = {{rq->p.nx, rq->p.ny, rq->p.nz}};
    const int64_t(*grids)[3] = rq->ngrids ? (const int64_t(*)[3])rq->grid : one;
    int ngrids = rq->ngrids ? rq->ngrids : 1;
    unsigned Rs = rq->Rs ? rq->Rs : 1u << rq->p.R, precs = rq->precs ? rq->precs : 1u << rq->p.prec;
    size_t cap = (size_t)ngrids * (FDT_R_MAX + 1) * 2 * FDT_OP_COUNT;
    fdt_problem *v = malloc(cap * sizeof *v);
    if (!v)
        return fdt_err_set(e, "out of memory");
    for (int g = 0; g < ngrids; g++) {
        int dup = 0; /* a grid listed twice */
        for (int k = 0; k < g && !dup; k++)
            dup = !memcmp(grids[k], grids[g], sizeof grids[g]);
        for (int pr = 0; pr < 2 && !dup; pr++)
            for (int R = FDT_R_MIN; R <= FDT_R_MAX; R++)
                for (int op = 0; op < FDT_OP_COUNT; op++) {
                    if (!(precs & (1u << pr)) || !(Rs & (1u << R)) || !(rq->ops & (1u << op)))
                        continue;
                    fdt_problem p;
                    fdt_tune_request_problem(rq, (fdt_op)op, &p);
                    p.R = R;
                    p.prec = (fdt_prec)pr;
                    p.nx = grids[g][0];
                    p.ny = grids[g][1];
                    p.nz = grids[g][2];
                    v[(*n)++] = p;
                }
    }
    *out = v;
    return 0;
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

void fdt_tune_opts_for(const fdt_tune_request *rq, const fdt_recipe *r, double deadline,
                       const volatile sig_atomic_t *stop, fdt_tune_opts *o)
{
    fdt_tune_opts_default(o);
    fdt_tune_plan(rq, r, &o->strategy, &o->budget);
    o->deadline = deadline;
    o->force = rq->force;
    o->seed = rq->seed;
    if (rq->parallel > 0)
        o->parallel = rq->parallel;
    o->command = rq->command;
    o->stop = stop;
    o->stop_rules = rq->stop_rules;
    o->known_first = !rq->cold;
}

int fdt_tune_known_check(const fdt_tune_request *rq, fdt_err *e)
{
    char path[4096];
    int found;
    if (rq->cold || fdt_db_system_path(path, sizeof path, &found, e) == 0)
        return 0;
    fdt_err_wrap(e, "system database");
    return -1;
}

void fdt_tune_ctx_of(const fdt_session *s, const fdt_session_gpu *g, fdt_tune_ctx *ctx)
{
    *ctx = (fdt_tune_ctx){.w = g->w, .db = s->db, .device_id = g->device_id,
                          .env_id = g->env_id, .dev = &g->dev};
    if (fdt_device_simulated(&g->dev))
        ctx->simulate_from = s->o.worker.simulate_from;
}

fdt_status fdt_tune_run(const fdt_session *s, const fdt_session_gpu *g, fdt_recipe *const *rec,
                        const fdt_tune_request *rq, fdt_tune_progress cb, void *cbctx,
                        fdt_tune_report *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    fdt_tune_ctx ctx;
    fdt_tune_ctx_of(s, g, &ctx);
    double end = rq->time_s > 0 ? fdt_now() + rq->time_s : 0;
    int left = 0;
    for (int op = 0; op < FDT_OP_COUNT; op++)
        left += (rq->ops & (1u << op)) != 0;
    for (int op = 0; op < FDT_OP_COUNT && !*s->stop; op++) {
        if (!(rq->ops & (1u << op)))
            continue;
        fdt_problem p;
        fdt_tune_request_problem(rq, (fdt_op)op, &p);
        fdt_tune_opts o;
        fdt_tune_opts_for(rq, rec[op], end, s->stop, &o);
        o.share = left--;
        if (fdt_tune_problem(&ctx, rec[op], &p, &o, cb, cbctx, &out->sum[out->n], e)) {
            char pk[128];
            fdt_problem_format(&p, pk, sizeof pk);
            fdt_err_wrap(e, "%s", pk);
            return FDT_STATUS_ERROR;
        }
        if (!out->sum[out->n].have_best)
            out->missing++;
        out->n++;
        if (end > 0 && fdt_now() > end)
            break; /* no evaluation starts after the limit: the rest are not reached */
    }
    out->stopped = *s->stop != 0;
    return out->stopped ? FDT_STATUS_INTERRUPTED
           : out->missing ? FDT_STATUS_FAILED
                          : FDT_STATUS_OK;
}
