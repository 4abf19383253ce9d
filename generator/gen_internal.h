/* Private to the generator: the template engine, the embedded template texts and the table
 * of kernel families (exposed here for the tests). */
#ifndef FDT_GEN_INTERNAL_H
#define FDT_GEN_INTERNAL_H

#include "fdt_common.h"
#include "fdt_gen.h"

typedef struct fdt_tpl_var {
    const char *name;
    char *value; /* owned by the caller */
} fdt_tpl_var;

/* Renders `tpl`: {{NAME}} is replaced by the variable's value; lines of the form
 * `#{if NAME}`, `#{if !NAME}`, `#{else}`, `#{endif}` keep or drop the lines between them
 * (true: value not empty and not "0"); a line `#{include NAME}` renders the embedded template
 * NAME there with the same variables (its #{if} blocks must balance within it). Unknown
 * names and templates, unbalanced blocks and includes nested more than 4 deep are errors
 * that name the template and line. */
int fdt_tpl_render(const char *tpl, const char *tpl_name, const fdt_tpl_var *vars, size_t nvars,
                   fdt_sb *out, fdt_err *e);

/* The template variables of one rendering (filled in generator/source.c). */
typedef struct fdt_tpl_vars fdt_tpl_vars;

/* A kernel family: the configs it generates (by lds and whether nw >= 1), its template
 * (templates/<tpl>, which includes prelude.hip), which of the prelude's optional helpers it
 * uses (put, the asynchronous copies, weight(r) beside d2), and the function that sets its own
 * template variables after the shared ones. */
typedef struct fdt_gen_family {
    const char *name; /* "direct", "window", "tile", "ring", "stream" */
    const char *tpl;  /* embedded template file */
    int lds;          /* the config's lds */
    int window;       /* 1: generates nw >= 1; 0: nw = 0 */
    int shared;       /* uses put (shared-memory stores) */
    int async;        /* uses copy_async, async_commit, async_wait */
    int weights;      /* uses weight(r), the weight of the neighbour at signed offset r */
    void (*vars)(const fdt_problem *p, const fdt_config *c, fdt_tpl_vars *vs);
} fdt_gen_family;

/* Every family, one row each; fdt_gen_source picks from this table only. */
extern const fdt_gen_family fdt_gen_families[];
extern const size_t fdt_gen_family_count;

/* The family that generates c; NULL with e set ("no kernel family generates lds=.. with
 * nw=..") when none does. */
const fdt_gen_family *fdt_gen_family_of(const fdt_config *c, fdt_err *e);

/* fdt_gen_source with family f: also fails when f does not generate c or its template is not
 * embedded (the error names the family and the template). */
int fdt_gen_family_source(const fdt_gen_family *f, const fdt_problem *p, const fdt_config *c,
                          const char *name, const fdt_gen_opts *opts, fdt_sb *out, fdt_err *e);

/* Embedded templates (generated at build time from templates/). NULL if unknown. */
const char *fdt_tpl_text(const char *name);
extern const char fdt_gen_fingerprint_text[];

#endif
