/* The rows of a header's variant tables (fdtuned_variant, portable/fdtuned_select.h), which
 * both of its parts write: per operator, variant 0 the fallback, then per tuned result its
 * constant and its runtime-dims kernel, each with what the selection reads (the device and
 * grid it was tuned for, the launch shape, the layout's alignment, the measured time that
 * breaks ties) and where it came from. The GPU part (header.c) gives each row its config's
 * launch shape; the CPU part (cpu.c) one launch over the whole grid. Calls provenance.c only. */
#include "exp_internal.h"

#include <math.h>
#include <stdio.h>

/* The shape every CPU variant row carries: one launch over the whole grid (split 1, a block
 * count far below every limit for any extent the layout takes). */
enum { CPU_BX = 16384, CPU_BY = 16384, CPU_BZ = 16384 };

static void num(fdt_sb *b, double v)
{
    if (isfinite(v))
        fdt_sb_printf(b, "%.6g", v);
    else
        fdt_sb_puts(b, "-1");
}

/* The launch shape of c: the GPU config's, or the CPU's one launch (cpu). */
static void shape(fdt_sb *b, const fdt_config *c, int cpu)
{
    if (cpu)
        fdt_sb_printf(b, "%d, %d, %d, 1, 1, 0, 1, %d, \"xyz\"", CPU_BX, CPU_BY, CPU_BZ,
                      c->align);
    else
        fdt_sb_printf(b, "%d, %d, %d, %d, %d, %d, %d, %d, \"%s\"", c->bx, c->by, c->bz, c->vec,
                      c->tile, c->nw, c->split, c->align, fdt_orders[c->order]);
}

static void variant_row(fdt_sb *b, const fdt_exp_family *f, int index, int kind,
                        const char *kernel, const fdt_config *c, const fdt_exp_tuned *t,
                        int sibling, int cpu)
{
    static const char *kinds[] = {"FDTUNED_FALLBACK", "FDTUNED_CONSTANT", "FDTUNED_RUNTIME"};
    static const char *words[] = {"fallback", "constant", "runtime dims"};
    FDT_ASSERT(kind >= 0 && kind < 3, "a variant is a fallback, a constant or a runtime one");
    char key[256];
    fdt_config_format(c, key, sizeof key);
    fdt_sb_printf(b, "    /* %d: %s", index, words[kind]);
    if (t) {
        char pk[160];
        fdt_problem_format(&t->row.problem, pk, sizeof pk);
        fdt_sb_puts(b, ", ");
        fdt_exp_comment_text(b, t->row.device.name);
        fdt_sb_printf(b, ", %s", pk);
    }
    fdt_sb_printf(b, " */\n    {%s, ", kinds[kind]);
    fdt_exp_c_str(b, kernel);
    fdt_sb_puts(b, ", ");
    fdt_exp_c_str(b, key);
    fdt_sb_puts(b, ", ");
    fdt_exp_c_str(b, t ? t->row.device.name : "");
    fdt_sb_puts(b, ", ");
    fdt_exp_c_str(b, t ? t->row.device.arch : "");
    fdt_sb_printf(b, ", %d, %lldLL, %lldLL, %lldLL, %d,\n     %d, %d, ",
                  t ? t->row.device.compute_units : 0, t ? (long long)t->row.problem.nx : 0LL,
                  t ? (long long)t->row.problem.ny : 0LL, t ? (long long)t->row.problem.nz : 0LL,
                  sibling, f->R, (int)fdt_prec_size(f->prec));
    shape(b, c, cpu);
    fdt_sb_puts(b, ", ");
    /* the median exactly: the selection breaks ties by it as fdt_db_nearest does */
    if (t && isfinite(t->row.ev.time_ms))
        fdt_sb_printf(b, "%.17g", t->row.ev.time_ms);
    else
        num(b, NAN);
    fdt_sb_puts(b, ", ");
    num(b, t ? t->row.ev.gbs : NAN);
    fdt_sb_puts(b, ", ");
    num(b, t ? t->row.ev.frac_copy : NAN);
    fdt_sb_printf(b, ", %lldLL, %lldLL, %d},\n",
                  t && t->row.ev.run_id > 0 ? (long long)t->row.ev.run_id : 0LL,
                  t ? (long long)t->row.ev.id : 0LL, t && t->row.source == FDT_DB_MODEL);
}

void fdt_exp_variant_rows(fdt_sb *b, const fdt_exp_family *f, int cpu)
{
    variant_row(b, f, 0, 0, f->kfallback, &f->fallback, NULL, -1, cpu);
    for (size_t t = 0; t < f->ntuned; t++) {
        const fdt_exp_tuned *tu = &f->tuned[t];
        variant_row(b, f, tu->vconst, 1, tu->kconst, &tu->cfg, tu, -1, cpu);
        variant_row(b, f, tu->vruntime, 2, tu->kruntime, &tu->cfg, tu, tu->vconst, cpu);
    }
}
