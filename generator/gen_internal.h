/* Private to the generator: the template engine and the embedded template texts. */
#ifndef FDT_GEN_INTERNAL_H
#define FDT_GEN_INTERNAL_H

#include "fdt_common.h"

typedef struct fdt_tpl_var {
    const char *name;
    char *value; /* owned by the caller */
} fdt_tpl_var;

/* Renders `tpl`: {{NAME}} is replaced by the variable's value; lines of the form
 * `#{if NAME}`, `#{if !NAME}`, `#{else}`, `#{endif}` keep or drop the lines between them
 * (true: value not empty and not "0"). Unknown names and unbalanced blocks are errors that
 * name the template and line. */
int fdt_tpl_render(const char *tpl, const char *tpl_name, const fdt_tpl_var *vars, size_t nvars,
                   fdt_sb *out, fdt_err *e);

/* Embedded templates (generated at build time from templates/). NULL if unknown. */
const char *fdt_tpl_text(const char *name);
extern const char fdt_gen_fingerprint_text[];

#endif
