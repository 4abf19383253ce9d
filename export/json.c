/* Rendering an export plan as JSON for build systems: the same variant tables as the header
 * (index, kind, kernel, config and its launch parameters, the device and grid it was tuned
 * on, the layout of that grid) with the provenance of every tuned result and the selection
 * rule in words. Numbers that do not apply are null. */
#include "exp_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void fdt_exp_json_str(fdt_sb *b, const char *s)
{
    fdt_sb_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fdt_sb_printf(b, "\\%c", c);
        else if (c == '\n')
            fdt_sb_puts(b, "\\n");
        else if (c == '\t')
            fdt_sb_puts(b, "\\t");
        else if (c < 0x20)
            fdt_sb_printf(b, "\\u%04x", c);
        else
            fdt_sb_putn(b, s, 1);
    }
    fdt_sb_puts(b, "\"");
}

static void key(fdt_sb *b, const char *k, int *first)
{
    if (!*first)
        fdt_sb_puts(b, ", ");
    *first = 0;
    fdt_exp_json_str(b, k);
    fdt_sb_puts(b, ": ");
}

static void kv_str(fdt_sb *b, const char *k, const char *v, int *first)
{
    key(b, k, first);
    fdt_exp_json_str(b, v);
}

static void kv_int(fdt_sb *b, const char *k, long long v, int *first)
{
    key(b, k, first);
    fdt_sb_printf(b, "%lld", v);
}

/* Negative integers mean "unknown" in the database: null. */
static void kv_int_opt(fdt_sb *b, const char *k, long long v, int *first)
{
    key(b, k, first);
    if (v < 0)
        fdt_sb_puts(b, "null");
    else
        fdt_sb_printf(b, "%lld", v);
}

static void kv_num(fdt_sb *b, const char *k, double v, int *first)
{
    key(b, k, first);
    if (isfinite(v))
        fdt_sb_printf(b, "%.10g", v);
    else
        fdt_sb_puts(b, "null");
}

static void measured(fdt_sb *b, const fdt_exp_tuned *t)
{
    const fdt_db_eval *ev = &t->row.ev;
    const fdt_db_env *v = &t->row.env;
    int f = 1;
    fdt_sb_puts(b, "{");
    kv_num(b, "median_ms", ev->time_ms, &f);
    kv_num(b, "min_ms", ev->time_min_ms, &f);
    kv_num(b, "max_ms", ev->time_max_ms, &f);
    kv_num(b, "gbs", ev->gbs, &f);
    kv_num(b, "frac_copy", ev->frac_copy, &f);
    kv_int_opt(b, "run", ev->run_id > 0 ? ev->run_id : -1, &f);
    kv_int(b, "evaluation", ev->id, &f);
    kv_str(b, "date", ev->created, &f);
    kv_str(b, "driver", v->driver, &f);
    kv_str(b, "runtime", v->runtime, &f);
    kv_str(b, "compiler", v->compiler, &f);
    kv_str(b, "fdtune_version", v->fdtune_version, &f);
    kv_str(b, "generator", v->generator, &f);
    kv_int_opt(b, "registers", ev->registers, &f);
    kv_int_opt(b, "spill_bytes", ev->spill_bytes, &f);
    kv_int_opt(b, "shared_bytes", ev->shared_bytes, &f);
    fdt_sb_puts(b, "}");
}

static void variant(fdt_sb *b, int index, const char *kind, const char *kernel,
                    const fdt_config *c, const fdt_exp_tuned *t, int sibling, int last)
{
    char cfg[256];
    fdt_config_format(c, cfg, sizeof cfg);
    int f = 1;
    fdt_sb_puts(b, "        {");
    kv_int(b, "index", index, &f);
    kv_str(b, "kind", kind, &f);
    kv_str(b, "kernel", kernel, &f);
    kv_str(b, "config", cfg, &f);
    key(b, "runtime_dims", &f);
    fdt_sb_puts(b, strcmp(kind, "constant") ? "true" : "false");
    kv_int(b, "align", c->align, &f);
    key(b, "block", &f);
    fdt_sb_printf(b, "[%d, %d, %d]", c->bx, c->by, c->bz);
    kv_int(b, "vec", c->vec, &f);
    kv_int(b, "tile", c->tile, &f);
    kv_int(b, "nw", c->nw, &f);
    kv_int(b, "split", c->split, &f);
    kv_str(b, "order", fdt_orders[c->order], &f);
    key(b, "constant_variant", &f);
    if (sibling >= 0)
        fdt_sb_printf(b, "%d", sibling);
    else
        fdt_sb_puts(b, "null");
    if (t) {
        const fdt_layout *l = &t->layout;
        kv_str(b, "device", t->row.device.name, &f);
        kv_str(b, "arch", t->row.device.arch, &f);
        kv_int(b, "compute_units", t->row.device.compute_units, &f);
        key(b, "grid", &f);
        fdt_sb_printf(b, "[%lld, %lld, %lld]", (long long)t->row.problem.nx,
                      (long long)t->row.problem.ny, (long long)t->row.problem.nz);
        key(b, "layout", &f);
        int g = 1;
        fdt_sb_puts(b, "{");
        kv_int(b, "line", l->line, &g);
        kv_int(b, "slice", l->slice, &g);
        kv_int(b, "offset", l->offset, &g);
        kv_int(b, "elems", l->elems, &g);
        fdt_sb_puts(b, "}");
        key(b, "measured", &f);
        measured(b, t);
    } else {
        key(b, "device", &f);
        fdt_sb_puts(b, "null, \"arch\": null, \"compute_units\": null, \"grid\": null, "
                       "\"layout\": null, \"measured\": null");
    }
    fdt_sb_puts(b, last ? "}\n" : "},\n");
}

int fdt_exp_render_json(const fdt_exp_plan *p, fdt_sb *b, fdt_err *e)
{
    int f = 1;
    fdt_sb_puts(b, "{");
    kv_int(b, "schema", FDT_EXP_JSON_SCHEMA, &f);
    kv_str(b, "kind", "fdtune-export", &f);
    kv_str(b, "fdtune_version", p->fdtune_version, &f);
    kv_str(b, "exported", p->exported, &f);
    kv_str(b, "command", p->command, &f);
    kv_str(b, "database", p->database, &f);
    key(b, "runs", &f);
    fdt_sb_puts(b, "[");
    for (size_t i = 0; i < p->nruns; i++)
        fdt_sb_printf(b, "%s%lld", i ? ", " : "", (long long)p->runs[i]);
    fdt_sb_puts(b, "]");
    kv_str(b, "generator", p->generator, &f);
    kv_str(b, "pointers", "allocation base; element (i, j, k) of the padded box is at "
                          "base[offset + i + line*j + slice*k]", &f);
    kv_str(b, "selection", "fdtuned_select_in (portable/fdtuned_nearest.h): among the "
                           "runtime variants of the device's base arch whose config can run "
                           "the grid, same device model (name, arch, compute units) and grid "
                           "first, then same model, then other models; then |log volume "
                           "ratio|, |log xy-plane ratio|, |compute-unit difference|, the "
                           "faster median, the grid, the evaluation id; that very grid: its "
                           "constant variant, else its runtime variant; nothing usable: the "
                           "fallback (variant 0)", &f);
    key(b, "devices", &f);
    fdt_sb_puts(b, "[\n");
    for (size_t i = 0; i < p->ndevices; i++) {
        const fdt_device *d = &p->devices[i];
        int g = 1;
        fdt_sb_puts(b, "    {");
        kv_str(b, "name", d->name, &g);
        kv_str(b, "backend", d->backend, &g);
        kv_str(b, "vendor", d->vendor, &g);
        kv_str(b, "arch", d->arch, &g);
        kv_int(b, "compute_units", d->compute_units, &g);
        kv_int_opt(b, "mem_bytes", d->mem_bytes, &g);
        kv_str(b, "uuid", d->uuid, &g);
        fdt_sb_puts(b, i + 1 < p->ndevices ? "},\n" : "}\n");
    }
    fdt_sb_puts(b, "  ]");
    key(b, "operators", &f);
    fdt_sb_puts(b, "[\n");
    for (size_t i = 0; i < p->nfam; i++) {
        const fdt_exp_family *fam = &p->fam[i];
        char launcher[64];
        snprintf(launcher, sizeof launcher, "fdtuned_%s", fam->name);
        int g = 1;
        fdt_sb_puts(b, "    {");
        kv_str(b, "op", fdt_op_name(fam->op), &g);
        kv_int(b, "R", fam->R, &g);
        kv_str(b, "precision", fdt_prec_name(fam->prec), &g);
        kv_str(b, "launcher", launcher, &g);
        key(b, "variants", &g);
        fdt_sb_puts(b, "[\n");
        variant(b, 0, "fallback", fam->kfallback, &fam->fallback, NULL, -1, fam->ntuned == 0);
        for (size_t t = 0; t < fam->ntuned; t++) {
            const fdt_exp_tuned *tu = &fam->tuned[t];
            variant(b, tu->vconst, "constant", tu->kconst, &tu->cfg, tu, -1, 0);
            variant(b, tu->vruntime, "runtime", tu->kruntime, &tu->cfg, tu, tu->vconst,
                    t + 1 == fam->ntuned);
        }
        fdt_sb_puts(b, "      ]");
        fdt_sb_puts(b, i + 1 < p->nfam ? "},\n" : "}\n");
    }
    fdt_sb_puts(b, "  ]");
    key(b, "notes", &f);
    fdt_sb_puts(b, "[");
    for (size_t i = 0; i < p->nnotes; i++) {
        if (i)
            fdt_sb_puts(b, ", ");
        fdt_exp_json_str(b, p->notes[i]);
    }
    fdt_sb_puts(b, "]}\n");
    if (b->oom)
        return fdt_err_set(e, "export: out of memory");
    return 0;
}
