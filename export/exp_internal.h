/* Private to the export module: the distinct kernels of a plan (what the header defines,
 * each once), the naming of runtime-dims kernels, the embedded snippets (the hand-written
 * parts of the header, kept as real files under export/snippets/ so they can be read and
 * compiled on their own). */
#ifndef FDT_EXP_INTERNAL_H
#define FDT_EXP_INTERNAL_H

#include "fdt_export.h"

/* One kernel of the header: a config of a problem, with the grid baked in or not. */
typedef struct fdt_exp_kernel {
    int cpu;             /* of a CPU family: generated in the C dialect */
    char name[96];
    fdt_problem problem; /* the grid matters only when !runtime_dims */
    fdt_config cfg;
    int runtime_dims;
} fdt_exp_kernel;

typedef struct fdt_exp_kernels {
    fdt_exp_kernel *v;
    size_t n;
} fdt_exp_kernels;

/* Every kernel the plan's variant tables name, in table order, identical names once.
 * Returns 0, -1 out of memory, -2 when one name stands for two different kernels (a hash
 * collision). */
int fdt_exp_kernels_collect(const fdt_exp_plan *p, fdt_exp_kernels *ks);
void fdt_exp_kernels_free(fdt_exp_kernels *ks);

/* Turns a generated kernel's source into what the header holds, appended to out. */
typedef int (*fdt_exp_adapt_fn)(const char *src, const char *name, fdt_sb *out, fdt_err *e);

/* The kernels of one part of the header (cpu: the CPU part, in the C dialect, for every CPU;
 * else the GPU part, in the GPUs' dialect, for none of them in particular), each generated
 * once (fdt_target_build) and appended to b through adapt after a blank line. Fails saying
 * which kernel the generator refused, or on a name that stands for two kernels. */
int fdt_exp_write_kernels(const fdt_exp_plan *p, int cpu, fdt_exp_adapt_fn adapt, fdt_sb *b,
                          fdt_err *e);

/* "fdt_lap_r4_f32_rt_1a2b3c4d": a hash of the config only, since the grid is an argument. */
void fdt_exp_runtime_name(const fdt_problem *p, const fdt_config *c, char *buf, size_t n);

/* The stored devices of every database, dbs[0]'s first, into all; (*which)[i] is the index
 * in dbs of the database device i is from (malloc'ed; free it). devices.c, with
 * fdt_exp_match_gpu. */
int fdt_exp_collect_devices(fdt_db *const *dbs, size_t ndbs, fdt_db_device_list *all,
                            size_t **which, fdt_err *e);

/* The comment block's text, which header.c and cpu.c share (provenance.c, which calls
 * neither). Text safe inside a C block comment (no comment end, no control characters),
 * appended. */
void fdt_exp_comment_text(fdt_sb *b, const char *s);
/* s as a C string literal, appended. */
void fdt_exp_c_str(fdt_sb *b, const char *s);

/* The rows of family f's variant table (variants.c): variant 0 the fallback, then per tuned
 * result its constant and its runtime-dims kernel; cpu: the CPU part's rows (one launch over
 * the whole grid), else the GPU part's (each config's launch shape). */
void fdt_exp_variant_rows(fdt_sb *b, const fdt_exp_family *f, int cpu);
/* The header's provenance lines (" * Provenance\n ..."): export, databases, runs, devices and
 * every tuned result with where it was measured. */
void fdt_exp_provenance(const fdt_exp_plan *p, fdt_sb *b);

/* dwave.c: the damped wave step's parts of both headers. Whether family f is dwave's. */
int fdt_exp_is_dwave(const fdt_exp_family *f);
/* fdtuned_<name>_damping (the damping at distance 0..W into the layer, fdt_absorb_damping
 * rounded to T) and fdtuned_<name>_profile(nx, ny, nz, eta), which fills the eta array. */
void fdt_exp_dwave_profile(fdt_sb *b, const fdt_exp_family *f, const char *T);
/* fdtuned_<name>_boxes(variant, nx, ny, nz, box, geo): the variant's deployment (its config's
 * deploy, the block extents fdt_gen_deploy_ext gives in the family's dialect) through
 * fdtuned_deploy_boxes, each box with the variant's geometry. After the variant table. */
void fdt_exp_dwave_boxes(fdt_sb *b, const fdt_exp_family *f);
/* The locals of box i inside a launcher's box loop (box[], lay and the pointers p_next, p,
 * p_prev, c2 in scope): B, the pointers o, x, xp, xc at the box's padded origin, its extents
 * bnx.., origin gx.. and hole hx0..hz1, each line after `indent`. */
void fdt_exp_dwave_box_locals(fdt_sb *b, const char *T, const char *indent);

/* The usage comment of a dwave family's profile function and arguments (printf: its name, W,
 * S), both parts'. */
#define FDT_EXP_DWAVE_USAGE                                                                          \
    " *     void fdtuned_%s_profile(int nx, int ny, int nz, T *eta);  fills eta\n"          \
    " *       dwave (layer W=%d S=%g built in; g the damping, 0 inside the layer): p_next =\n"  \
    " *       (2p - (1 - g) p_prev + c2 * lap(p)) / (1 + g) + src. Its launchers take eta (after\n" \
    " *       c2): nx + ny + nz values the profile function fills, and run the variant's\n"    \
    " *       deployment (complete, inout or sides) box by box.\n"

/* Embedded export/snippets/<name>; NULL if unknown (generated by export/embed.cmake). */
const char *fdt_exp_snippet(const char *name);

#endif
