/* Evaluation of given configs (`fdtune bench`): on a GPU, each candidate verified and timed
 * in turn on one worker after the problem's setup; without one, what a GPU run would compile,
 * built (fdt_target_build) for every backend's default target with the resources the
 * compiler reports. */
#include "fdt_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kernel c of the compile-only list, unbuilt, and its row's key: -2 the verification kernels,
 * -1 the reference (the default config under the name the worker gives it), else config c. */
static void compile_cand(const fdt_problem *p, const fdt_config *cfgs, int c, char *key,
                         size_t keyn, char *kernel, size_t kn, fdt_cand *v)
{
    if (c == -2) {
        snprintf(key, keyn, "(verification kernels)");
        snprintf(kernel, kn, "fdt_fill_%s", fdt_prec_name(p->prec));
        fdt_cand_init(v, FDT_CAND_UTIL, NULL, kernel);
    } else if (c == -1) {
        snprintf(key, keyn, "(reference)");
        fdt_eval_reference_name(p, kernel, kn);
        fdt_cand_init(v, FDT_CAND_STENCIL, NULL, kernel);
    } else {
        fdt_config_format(&cfgs[c], key, keyn);
        fdt_cand_init(v, FDT_CAND_STENCIL, &cfgs[c], NULL);
    }
}

int fdt_bench_compile(const fdt_problem *p, const fdt_config *cfgs, int n,
                      fdt_bench_compiled **rows, int *nrows, fdt_err *e)
{
    int nb = fdt_rt_backend_count();
    size_t total = (size_t)(n + 2) * (size_t)nb;
    *nrows = 0;
    *rows = calloc(total ? total : 1, sizeof **rows);
    if (!*rows)
        return fdt_err_set(e, "out of memory");
    int failures = 0;
    fdt_build_opts o;
    fdt_build_opts_init(&o);
    o.stop_after = FDT_BUILD_COMPILE;
    for (int c = -2; c < n; c++) {
        char key[256], kernel[96];
        for (int b = 0; b < nb; b++) {
            const fdt_rt_backend *be = fdt_rt_backend_at(b);
            if (be->host)
                continue; /* compiles for the GPUs' default targets */
            fdt_bench_compiled *row = &(*rows)[(*nrows)++];
            row->target = be->example_arch;
            fdt_target t;
            fdt_cand v, *pv = &v;
            compile_cand(p, cfgs, c, key, sizeof key, kernel, sizeof kernel, &v);
            snprintf(row->config, sizeof row->config, "%s", key);
            if (fdt_target_for_arch(be->example_arch, &t, &row->err) ||
                fdt_target_build(&t, p, &pv, 1, &o, &row->err)) {
                failures++;
                continue;
            }
            if (fdt_cand_failed(&v)) {
                row->err = v.err;
                failures++;
            } else {
                row->ok = 1;
                row->res = v.code.res;
                row->seconds = v.compile_s;
            }
            fdt_cand_free(&v);
        }
    }
    return failures;
}

static void tell(fdt_bench_progress cb, void *ctx, fdt_bench_event *ev)
{
    if (cb)
        cb(ctx, ev);
}

fdt_status fdt_bench_run(const fdt_bench_request *rq, const fdt_device *d,
                         fdt_bench_progress cb, void *ctx, fdt_bench_result *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    fdt_worker_opts wo;
    fdt_worker_opts_default(&wo);
    wo.eval_timeout_ms = rq->timeout_s * 1000;
    if (rq->seed >= 0)
        wo.seed = (uint64_t)rq->seed;
    out->seed = wo.seed;
    out->res = calloc(rq->n > 0 ? (size_t)rq->n : 1, sizeof *out->res);
    if (!out->res) {
        fdt_err_set(e, "out of memory");
        return FDT_STATUS_ERROR;
    }
    fdt_bench_event ev = {.kind = FDT_BENCH_SETUP, .dev = d, .p = &rq->p, .n = rq->n};
    tell(cb, ctx, &ev);
    fdt_worker *w = NULL;
    if (fdt_worker_start(d->backend, d->index, &wo, &w, NULL, e) ||
        fdt_worker_setup(w, &rq->p, &out->setup, e)) {
        fdt_worker_stop(w);
        return FDT_STATUS_ERROR;
    }
    fdt_timing_opts to;
    if (rq->probe)
        fdt_timing_opts_probe(&to);
    else
        fdt_timing_opts_default(&to);
    fdt_status st = FDT_STATUS_OK;
    for (int i = 0; i < rq->n; i++) {
        char key[256];
        fdt_config_format(&rq->cfgs[i], key, sizeof key);
        ev = (fdt_bench_event){.kind = FDT_BENCH_BEGIN, .dev = d, .p = &rq->p, .i = i,
                               .n = rq->n, .config = key};
        tell(cb, ctx, &ev);
        if (fdt_evaluate(w, &rq->p, &rq->cfgs[i], &to, &out->res[i], e)) {
            st = FDT_STATUS_ERROR;
            break;
        }
        out->n++;
        out->failures += out->res[i].status != FDT_EVAL_OK;
        ev.kind = FDT_BENCH_DONE;
        ev.r = &out->res[i];
        tell(cb, ctx, &ev);
    }
    out->restarts = fdt_worker_restarts(w);
    fdt_worker_stop(w);
    if (st == FDT_STATUS_OK && out->failures)
        st = FDT_STATUS_FAILED;
    return st;
}

void fdt_bench_result_free(fdt_bench_result *r)
{
    free(r->res);
    r->res = NULL;
    r->n = 0;
}
