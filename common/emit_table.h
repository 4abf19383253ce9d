/* What the emitter's two files share (emit.c: the documents, CSV and the cells of a table;
 * emit_table.c: the table form written and fitted to a width); not part of fdt_emit.h. */
#ifndef FDT_EMIT_TABLE_H
#define FDT_EMIT_TABLE_H

#include "fdt_emit.h"

/* Whether column c appears in m's form. */
static inline int fdt_emit_shown(const fdt_emit *m, const fdt_col *c)
{
    if (c->show == FDT_SHOW_NONE)
        return 0;
    return m->mode == FDT_EMIT_TEXT ? c->show != FDT_SHOW_DATA : c->show != FDT_SHOW_TEXT;
}

/* A column type without its _OPT (FDT_COL_STR_OPT: FDT_COL_STR, ...). */
static inline fdt_col_type fdt_emit_base_type(fdt_col_type t)
{
    return t >= FDT_COL_STR_OPT ? (fdt_col_type)(t - FDT_COL_STR_OPT) : t;
}

/* Writes the open table of m (its header, and m->cells row by row) into m->out in the table
 * form, fitted to m->width as fdt_emit_table_end describes; memory running out sets m->oom
 * and writes nothing. */
void fdt_emit_write_table(fdt_emit *m);

#endif
