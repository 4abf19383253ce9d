/* Rendering an export plan as JSON for build systems: the same variant tables as the header
 * (index, kind, kernel, config and its launch parameters, the device and grid it was tuned on,
 * the layout of that grid) with the provenance of every tuned result (its source: the user's or
 * the system database; whether the search behind it was cut short by its time limit, as the
 * header's SEARCH CUT SHORT line says; a result of fdtune's model has "measured": null and
 * "predicted": its prediction) and the selection rule in words. Numbers that do not apply
 * are null.
 * Written through the emitter (common/fdt_emit.h): devices, operators and variants stand one
 * per line. */
#include "exp_internal.h"
#include "fdt_emit.h"

#include <stdio.h>
#include <string.h>

static void measured(fdt_emit *m, const fdt_exp_tuned *t)
{
    const fdt_db_eval *ev = &t->row.ev;
    const fdt_db_env *v = &t->row.env;
    fdt_emit_object(m, "measured");
    fdt_emit_real_opt(m, "median_ms", ev->time_ms);
    fdt_emit_real_opt(m, "min_ms", ev->time_min_ms);
    fdt_emit_real_opt(m, "max_ms", ev->time_max_ms);
    fdt_emit_real_opt(m, "gbs", ev->gbs);
    fdt_emit_real_opt(m, "frac_copy", ev->frac_copy);
    fdt_emit_str(m, "source", fdt_db_source_name(t->row.source));
    fdt_emit_int_opt(m, "run", ev->run_id > 0 ? ev->run_id : -1);
    fdt_emit_int(m, "evaluation", ev->id);
    fdt_emit_str(m, "date", ev->created);
    /* the best of what a search stopped by its time limit measured, not of its space */
    fdt_emit_bool(m, "cut_short", t->row.cut_short);
    fdt_emit_str(m, "stopped", t->row.stopped); /* why that search stopped; "": unknown */
    fdt_emit_str(m, "driver", v->driver);
    fdt_emit_str(m, "runtime", v->runtime);
    fdt_emit_str(m, "compiler", v->compiler);
    fdt_emit_str(m, "fdtune_version", v->fdtune_version);
    fdt_emit_str(m, "generator", v->generator);
    fdt_emit_int_opt(m, "registers", ev->registers);
    fdt_emit_int_opt(m, "spill_bytes", ev->spill_bytes);
    fdt_emit_int_opt(m, "shared_bytes", ev->shared_bytes);
    fdt_emit_end(m);
}

/* A result of fdtune's model: its prediction (no measurement). */
static void predicted(fdt_emit *m, const fdt_exp_tuned *t)
{
    fdt_emit_null(m, "measured");
    fdt_emit_object(m, "predicted");
    fdt_emit_real_opt(m, "time_ms", t->row.ev.time_ms);
    fdt_emit_real_opt(m, "gbs", t->row.ev.gbs);
    fdt_emit_str(m, "source", fdt_db_source_name(t->row.source));
    fdt_emit_str(m, "fdtune_version", t->row.env.fdtune_version);
    fdt_emit_str(m, "generator", t->row.env.generator);
    fdt_emit_end(m);
}

/* Where a tuned variant was measured, or what the model predicted for it; all null for the
 * fallback (t NULL). */
static void tuned_on(fdt_emit *m, const fdt_exp_tuned *t)
{
    static const char *const keys[] = {"device", "arch", "compute_units", "grid", "layout",
                                       "measured"};
    if (!t) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            fdt_emit_null(m, keys[i]);
        return;
    }
    const fdt_layout *l = &t->layout;
    fdt_emit_str(m, "device", t->row.device.name);
    fdt_emit_str(m, "arch", t->row.device.arch);
    fdt_emit_int(m, "compute_units", t->row.device.compute_units);
    fdt_emit_array(m, "grid");
    fdt_emit_int(m, NULL, t->row.problem.nx);
    fdt_emit_int(m, NULL, t->row.problem.ny);
    fdt_emit_int(m, NULL, t->row.problem.nz);
    fdt_emit_end(m);
    fdt_emit_object(m, "layout");
    fdt_emit_int(m, "line", l->line);
    fdt_emit_int(m, "slice", l->slice);
    fdt_emit_int(m, "offset", l->offset);
    fdt_emit_int(m, "elems", l->elems);
    fdt_emit_end(m);
    if (t->row.source == FDT_DB_MODEL)
        predicted(m, t);
    else
        measured(m, t);
}

static void variant(fdt_emit *m, int index, const char *kind, const char *kernel,
                    const fdt_config *c, const fdt_exp_tuned *t, int sibling)
{
    char cfg[256];
    fdt_config_format(c, cfg, sizeof cfg);
    fdt_emit_object(m, NULL);
    fdt_emit_int(m, "index", index);
    fdt_emit_str(m, "kind", kind);
    fdt_emit_str(m, "kernel", kernel);
    fdt_emit_str(m, "config", cfg);
    fdt_emit_bool(m, "runtime_dims", strcmp(kind, "constant") != 0);
    fdt_emit_int(m, "align", c->align);
    fdt_emit_array(m, "block");
    fdt_emit_int(m, NULL, c->bx);
    fdt_emit_int(m, NULL, c->by);
    fdt_emit_int(m, NULL, c->bz);
    fdt_emit_end(m);
    fdt_emit_int(m, "vec", c->vec);
    fdt_emit_int(m, "tile", c->tile);
    fdt_emit_int(m, "nw", c->nw);
    fdt_emit_int(m, "split", c->split);
    fdt_emit_str(m, "order", fdt_orders[c->order]);
    fdt_emit_int_opt(m, "constant_variant", sibling);
    tuned_on(m, t);
    fdt_emit_end(m);
}

static void operators(fdt_emit *m, const fdt_exp_plan *p)
{
    fdt_emit_array_lined(m, "operators");
    for (size_t i = 0; i < p->nfam; i++) {
        const fdt_exp_family *fam = &p->fam[i];
        char launcher[64];
        snprintf(launcher, sizeof launcher, "fdtuned_%s", fam->name);
        fdt_emit_object(m, NULL);
        fdt_emit_str(m, "target", fam->cpu ? "cpu" : "gpu");
        fdt_emit_str(m, "op", fdt_op_name(fam->op));
        fdt_emit_int(m, "R", fam->R);
        fdt_emit_str(m, "precision", fdt_prec_name(fam->prec));
        if (fam->op == FDT_OP_DWAVE) { /* the layer its kernels have built in */
            fdt_emit_int(m, "absorb_width", fam->absorb_w);
            fdt_emit_real(m, "absorb_strength", fam->absorb_s);
        } else {
            fdt_emit_null(m, "absorb_width");
            fdt_emit_null(m, "absorb_strength");
        }
        fdt_emit_str(m, "launcher", launcher);
        fdt_emit_array_lined(m, "variants");
        variant(m, 0, "fallback", fam->kfallback, &fam->fallback, NULL, -1);
        for (size_t t = 0; t < fam->ntuned; t++) {
            const fdt_exp_tuned *tu = &fam->tuned[t];
            variant(m, tu->vconst, "constant", tu->kconst, &tu->cfg, tu, -1);
            variant(m, tu->vruntime, "runtime", tu->kruntime, &tu->cfg, tu, tu->vconst);
        }
        fdt_emit_end(m);
        fdt_emit_end(m);
    }
    fdt_emit_end(m);
}

static void devices(fdt_emit *m, const fdt_exp_plan *p)
{
    fdt_emit_array_lined(m, "devices");
    for (size_t i = 0; i < p->ndevices; i++) {
        const fdt_device *d = &p->devices[i];
        fdt_emit_object(m, NULL);
        fdt_emit_str(m, "name", d->name);
        fdt_emit_str(m, "backend", d->backend);
        fdt_emit_str(m, "vendor", d->vendor);
        fdt_emit_str(m, "arch", d->arch);
        fdt_emit_int(m, "compute_units", d->compute_units);
        fdt_emit_int_opt(m, "mem_bytes", d->mem_bytes);
        fdt_emit_str(m, "uuid", d->uuid);
        fdt_emit_str(m, "source", fdt_db_source_name(p->device_sources[i]));
        fdt_emit_end(m);
    }
    fdt_emit_end(m);
}

int fdt_exp_render_json(const fdt_exp_plan *p, fdt_sb *b, fdt_err *e)
{
    fdt_emit m;
    fdt_emit_init(&m, FDT_EMIT_JSON, b);
    m.digits = FDT_EMIT_DIGITS_V1;
    fdt_emit_object(&m, NULL);
    fdt_emit_int(&m, "schema", FDT_EXP_JSON_SCHEMA);
    fdt_emit_str(&m, "kind", "fdtune-export");
    fdt_emit_str(&m, "fdtune_version", p->fdtune_version);
    fdt_emit_str(&m, "exported", p->exported);
    fdt_emit_str(&m, "command", p->command);
    fdt_emit_str_opt(&m, "database", p->database);
    fdt_emit_str_opt(&m, "system_database", p->system_database);
    /* Run ids are per database: the user's, then the system database's. */
    for (int src = FDT_DB_USER; src <= FDT_DB_SYSTEM; src++) {
        fdt_emit_array(&m, src == FDT_DB_USER ? "runs" : "system_runs");
        for (size_t i = 0; i < p->nruns; i++)
            if ((int)p->run_sources[i] == src)
                fdt_emit_int(&m, NULL, p->runs[i]);
        fdt_emit_end(&m);
    }
    fdt_emit_str(&m, "generator", p->generator);
    fdt_emit_str(&m, "pointers", "allocation base; element (i, j, k) of the padded box is at "
                                 "base[offset + i + line*j + slice*k]");
    fdt_emit_str(&m, "selection", "fdtuned_select_in (portable/fdtuned_nearest.h): among the "
                                  "runtime variants of the device's base arch whose config can "
                                  "run the grid, same device model (name, arch, compute units) "
                                  "and grid first, then same model, then other models, then "
                                  "the model's predictions (predicted, not measured); then "
                                  "|log volume ratio|, |log xy-plane ratio|, |compute-unit "
                                  "difference|, the faster median, the grid, the evaluation id; "
                                  "that very grid: its constant variant, else its runtime "
                                  "variant; nothing usable: the fallback (variant 0)");
    devices(&m, p);
    operators(&m, p);
    fdt_emit_array(&m, "notes");
    for (size_t i = 0; i < p->nnotes; i++)
        fdt_emit_str(&m, NULL, p->notes[i]);
    fdt_emit_end(&m);
    fdt_emit_end(&m);
    if (fdt_emit_finish(&m, e))
        return fdt_err_set(e, "export: out of memory");
    return 0;
}
