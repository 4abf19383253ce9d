/* One candidate from configuration to result: generate, compile for the worker's target
 * (in a child process, through the cache), prune on what the compiler reports by the
 * target's rules (target/: spills, AMD scratch, shared memory over the device limit, a block
 * larger than the code allows, a workgroup that does not fit on a compute unit), then verify
 * and time on the worker. */
#include "fdt_eval.h"

#include <stdio.h>
#include <string.h>

int fdt_evaluate_cand(fdt_worker *w, const fdt_problem *p, const fdt_cand *v,
                      const fdt_timing_opts *t, fdt_eval_result *r, fdt_err *e)
{
    memset(r, 0, sizeof *r);
    r->compile_s = v->compile_s;
    if (fdt_cand_failed(v)) {
        r->status = FDT_EVAL_COMPILE_ERROR;
        snprintf(r->message, sizeof r->message, "%s", v->err.msg);
        return 0;
    }
    FDT_ASSERT(v->state == FDT_CAND_READY || v->state == FDT_CAND_PRUNED,
               "a candidate is built and judged before it is evaluated");
    fdt_geometry g;
    if (fdt_gen_geometry(p, &v->cfg, &g, e))
        return -1; /* generated, so it has a geometry: anything else is the caller's error */
    /* what a block holds: the compiler sees only the static part of the shared memory */
    fdt_rt_resources res = v->code.res;
    if (g.shared_dynamic)
        res.shared_bytes = (res.shared_bytes > 0 ? res.shared_bytes : 0) + (int)g.shared_bytes;
    r->res = res;
    if (v->state == FDT_CAND_PRUNED) {
        r->status = FDT_EVAL_PRUNED;
        snprintf(r->message, sizeof r->message, "%s", v->err.msg);
        return 0;
    }
    int rc = fdt_worker_eval(w, &v->cfg, &v->code, v->kernel, t, r, e);
    r->compile_s = v->compile_s;
    if (!fdt_device_simulated(fdt_worker_device(w)))
        r->res = res; /* a simulated GPU's answer carries the recorded resources */
    return rc;
}

int fdt_evaluate(fdt_worker *w, const fdt_problem *p, const fdt_config *c,
                 const fdt_timing_opts *t, fdt_eval_result *r, fdt_err *e)
{
    memset(r, 0, sizeof *r);
    fdt_cand v;
    fdt_cand_init(&v, FDT_CAND_STENCIL, c, NULL);
    fdt_cand *pv = &v;
    fdt_err be;
    if (fdt_target_build(fdt_worker_target(w), p, &pv, 1, NULL, &be)) {
        r->status = FDT_EVAL_COMPILE_ERROR; /* no compiler for the device: this config's */
        snprintf(r->message, sizeof r->message, "%s", be.msg);
        return 0;
    }
    int rc = 0;
    if (v.state == FDT_CAND_GENERATE_FAILED) {
        *e = v.err;
        rc = -1; /* an invalid config is the caller's error, not a result */
    } else {
        rc = fdt_evaluate_cand(w, p, &v, t, r, e);
    }
    fdt_cand_free(&v);
    return rc;
}
