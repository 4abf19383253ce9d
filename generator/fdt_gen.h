/* Public interface of the generator: the problem (operator, radius, precision, grid), the
 * configuration (one point of a search space), the halo-padded array layout, the launch
 * geometry, the source of one candidate (HIP for the GPUs, C with OpenMP for the CPU), the FD
 * coefficients and the double-precision CPU reference with the verification tolerances.
 * Everything here is pure computation: no GPU, no I/O. */
#ifndef FDT_GEN_H
#define FDT_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "fdt_common.h"
#include "fdtuned_layout.h"
#include "fdtuned_geometry.h"
#include "fdtuned_deploy.h"

/* ------------------------------------------------------------------ problem */

/* dwave: the damped wave step (an acoustic leapfrog step with an absorbing layer of width W on
 * every face; see fdt_problem's absorb fields). */
typedef enum {
    FDT_OP_D2X, FDT_OP_D2Y, FDT_OP_D2Z, FDT_OP_LAP, FDT_OP_WAVE, FDT_OP_DWAVE, FDT_OP_COUNT
} fdt_op;
/* The operators a tune covers when none is named: the five undamped ones (dwave needs an
 * absorbing layer, so it is tuned when asked for). */
#define FDT_OPS_DEFAULT ((1u << FDT_OP_DWAVE) - 1)
typedef enum { FDT_F32, FDT_F64 } fdt_prec;

#define FDT_R_MIN 1
#define FDT_R_MAX 8
/* Largest interior extent along one axis; keeps every index of one axis in an int. */
#define FDT_DIM_MAX FDTUNED_DIM_MAX
/* Largest allocation of one array we accept (1 TiB): beyond any GPU, and far from overflow. */
#define FDT_ALLOC_MAX ((int64_t)FDTUNED_ALLOC_BYTES_MAX)

typedef struct fdt_problem {
    fdt_op op;
    int R;         /* stencil radius, order of accuracy 2R */
    fdt_prec prec;
    int64_t nx, ny, nz; /* interior points */
    /* dwave only (0 for every other operator): the absorbing layer's width W in points on
     * each face (1 .. half the smallest extent) and its strength S = eta_max * dt, the damping
     * at the outer face of the layer per time step (0 < S <= FDT_ABSORB_S_MAX). */
    int absorb_w;
    double absorb_s;
} fdt_problem;

#define FDT_ABSORB_S_MAX 10.0
/* The strength used when only a width is given ("--absorb 16"). */
#define FDT_ABSORB_S_DEFAULT 0.1

const char *fdt_op_name(fdt_op op);
int fdt_op_parse(const char *s, fdt_op *op, fdt_err *e);
const char *fdt_prec_name(fdt_prec p);
int fdt_prec_parse(const char *s, fdt_prec *p, fdt_err *e);
size_t fdt_prec_size(fdt_prec p);
/* "N^3" or "NXxNYxNZ"; positive integers no larger than FDT_DIM_MAX. */
int fdt_grid_parse(const char *s, int64_t dims[3], fdt_err *e);
/* Checks R and the grid (also that an array of this problem can be allocated). */
int fdt_problem_check(const fdt_problem *p, fdt_err *e);
/* Radius along x, y, z: d2x -> (R,0,0), lap, wave and dwave -> (R,R,R). */
void fdt_op_radii(fdt_op op, int R, int r[3]);
/* Number of input arrays the kernel reads (wave, dwave: p, p_prev, c2). */
int fdt_op_ninputs(fdt_op op);
/* Whether op is a time step (wave, dwave): reads p, p_prev and c2, writes p_next, and takes
 * a point source. */
int fdt_op_is_step(fdt_op op);
/* Parses an absorbing layer "W" or "W:S" (width in points, strength S = eta_max * dt) into
 * p->absorb_w and p->absorb_s; the grid is checked against W by fdt_problem_check. */
int fdt_absorb_parse(const char *s, fdt_problem *p, fdt_err *e);
/* dwave's damping e(x) = S (d/W)^2 along axis (0 x, 1 y, 2 z) at interior coordinate x, d the
 * distance into the layer (W - x for x < W, x - (n - 1 - W) for x > n - 1 - W, else 0; so d
 * runs W..1 over the layer). At a point the damping g is the sum over the three axes (0 in the
 * interior); the step is p_next = (2 p - (1 - g) p_prev + c2 L(p)) / (1 + g) + src. */
double fdt_absorb_damping(const fdt_problem *p, int axis, int64_t x);
/* The eta array that kernels with eta=array read: nx + ny + nz values of the problem's
 * precision, e_x[0..nx) | e_y[0..ny) | e_z[0..nz), each fdt_absorb_damping rounded. buf holds
 * fdt_absorb_profile_bytes(p). Fails for a problem that is not a valid dwave. */
size_t fdt_absorb_profile_bytes(const fdt_problem *p);
int fdt_absorb_profile(const fdt_problem *p, void *buf, fdt_err *e);
/* Text key such as "lap R=4 f32 512x512x512" ("dwave R=4 f32 512x512x512 W=16 S=0.1"). */
void fdt_problem_format(const fdt_problem *p, char *buf, size_t n);
/* The problem as members of the JSON object m is in: "op", "R", "precision", "nx", "ny",
 * "nz" (the names of every schema-1 document and of plans of tasks), and for dwave
 * "absorb_width" and "absorb_strength". */
struct fdt_emit;
void fdt_problem_emit(struct fdt_emit *m, const fdt_problem *p);

/* ------------------------------------------------------------------ config */

typedef enum {
    FDT_FAULT_NONE,  /* production kernels */
    FDT_FAULT_COEF,  /* test only: one coefficient of the stencil has the wrong sign */
    FDT_FAULT_PLANE, /* test only: one z plane of the output is never written */
    FDT_FAULT_HALO,  /* test only: writes into the halo */
    FDT_FAULT_OOB,   /* test only: writes far outside the arrays (illegal address) */
    FDT_FAULT_HANG,  /* test only: never finishes */
    FDT_FAULT_COUNT
} fdt_fault;

#define FDT_SPLIT_MAX FDTUNED_SPLIT_MAX
#define FDT_TILE_MAX 64

typedef struct fdt_config {
    int bx, by, bz; /* thread block */
    int lb;         /* __launch_bounds__ max threads; 0: none */
    int tile;       /* outputs per thread along y, loads in ascending address order */
    int nw;         /* z planes per thread with a register sliding window; 0: none */
    int vec;        /* outputs per thread along x, loaded and stored as vectors */
    int align;      /* leading-dimension alignment in elements (x = R starts aligned) */
    int lds;        /* shared-memory (LDS) tiles: 0 none, 1 one plane's x/y neighbours
                     * (registers carry the next plane), 2 a ring of planes filled by
                     * asynchronous copies pf planes ahead, feeding the window too, 3 that
                     * ring read once per plane into a queue of sums in registers */
    int nt;         /* nontemporal output stores */
    int order;      /* index into fdt_orders: which axis blockIdx.x/.y/.z walk */
    int pf;         /* planes loaded ahead of the sliding window (latency hiding) */
    int split;      /* y subdomains launched one after another */
    int l2pf;       /* L2 prefetch size hint (bytes) of the ring's asynchronous copies */
    int mbar;       /* the stream (lds=3): a pair of barriers per ring slot instead of a
                     * block-wide barrier per step (NVIDIA's cp.async; no effect on AMD) */
    int bulk;       /* the stream with mbar=1: each ring slot filled by one tensor copy
                     * (cp.async.bulk.tensor, the kernel's tensor map: fdt_gen_tmap) that
                     * completes on its barrier (NVIDIA sm_90 on; AMD gfx9: loads that
                     * write LDS directly) */
    int guard;      /* the stream's output stores: 0 "rows" (each row tests that it lies in the
                     * grid), 1 "none" (unguarded, full vectors: the grid covered by whole
                     * blocks, checked; kernels of runtime dims keep the guards) */
    int fault;      /* fdt_fault, test only */
    /* The C dialect's (the CPU's; templates/cpu_*.c). nt, align and fault serve both. */
    int blk;        /* kernel family: 0 loops (the plain loop nest), 1 blocked (tiles) */
    int tx, ty, tz; /* blocked: tile width, height, depth in points (0: the whole extent) */
    int thr;        /* threads, num_threads (0: every core this process may use) */
    int bind;       /* thread placement, proc_bind: 0 close, 1 spread */
    int loop;       /* loop order: 0 "kj" (k outer: rows in address order), 1 "jk" */
    int simd;       /* simdlen of every omp simd loop (0: the compiler's choice) */
    int xs;         /* x strip of the streaming-store and two-pass buffers (0: whole rows,
                     * at most FDT_XS_WHOLE_MAX values) */
    int uj, uk;     /* blocked: output rows (uj) and planes (uk) computed together */
    int pfd;        /* blocked: software prefetch this many planes ahead (0: none) */
    int sched;      /* OpenMP schedule: 0 static, 1 dynamic */
    int chunk;      /* the schedule's chunk (0: the schedule's default) */
    int twopass;    /* lap and wave: each row's x and y terms, then its z terms */
    /* dwave's (both dialects; every other operator takes the defaults only). */
    int deploy;     /* FDT_DEPLOY_*: the launches that cover the grid (fdt_gen_deploy) */
    int eta;        /* the damping: 0 "dist" computed from the distance to the faces, 1 "array"
                     * read from the eta array (fdt_absorb_profile) */
    int layer;      /* FDT_LAYER_*: how the damped GPU kernel's rows apply the damping (HIP) */
} fdt_config;

/* The deployments of dwave (portable/fdtuned_deploy.h): one damped kernel over the grid; a
 * damped kernel over the border shell and the interior kernel over the block-aligned hole;
 * the interior kernel over [W, n-W)^3 and a damped kernel per face. */
enum { FDT_DEPLOY_COMPLETE = 0, FDT_DEPLOY_INOUT = 1, FDT_DEPLOY_SIDES = 2 };
enum { FDT_ETA_DIST = 0, FDT_ETA_ARRAY = 1 };
/* The damped GPU kernel's rows: "branch" tests each output row and damps only the rows that
 * touch the layer; "select" damps every row and keeps the undamped value where g = 0 (no
 * branch in a plane's code). */
enum { FDT_LAYER_BRANCH = 0, FDT_LAYER_SELECT = 1 };

/* The strip of xs=0: whole rows up to this many values (the buffers live on the stack). */
#define FDT_XS_WHOLE_MAX 1024

/* The source dialects the generator emits: HIP, which hiprtc and the AMD offline compiler
 * compile, and NVRTC through fdtune's mapping header (fdt_gen_nvrtc_hip_header); C, C11 with
 * OpenMP 4.5 for the host CPU's compiler (templates/cpu_*.c). */
typedef enum { FDT_DIALECT_HIP, FDT_DIALECT_C, FDT_DIALECT_COUNT } fdt_dialect;
/* A set of dialects, as fdt_param_info.dialects holds it. */
#define FDT_DIALECT_BIT(d) (1u << (d))

/* What the generator needs of the target a candidate is built for (target/fdt_target.h holds
 * the rest: backend, architecture, rules): the dialect its compiler reads. */
typedef struct fdt_gen_target {
    fdt_dialect dialect;
} fdt_gen_target;

/* The dialect's name in messages: "HIP" (the GPUs'), "C" (the CPU's). */
const char *fdt_dialect_name(fdt_dialect d);

/* Parameter catalogue, used by the parser, the canonical form and the recipes. One catalogue
 * serves every dialect: a parameter belongs to the dialects in `dialects`, and a config sets
 * only parameters of its target's dialect (the others stay at their defaults, which the
 * canonical key omits; fdt_config_check_for refuses any other value). */
typedef struct fdt_param_info {
    const char *name;
    size_t offset;              /* into fdt_config */
    int def, min, max;          /* integers; for choices min/max index the list */
    const char *const *choices; /* NULL for integers */
    const char *help;
    unsigned dialects;          /* FDT_DIALECT_BIT of each dialect that takes it */
} fdt_param_info;

const fdt_param_info *fdt_config_params(size_t *n);
const fdt_param_info *fdt_config_param(const char *name);
/* "xyz", "yzx", ...: axis walked by blockIdx.x, .y, .z. */
extern const char *const fdt_orders[];

/* Every parameter at its default. A parameter's default is its own dialect's baseline (the
 * GPUs' direct kernel; the CPU's plain loop nest, blk=0), so this is the default config of
 * every dialect; fdt_config_default_for says so for a target. */
void fdt_config_default(fdt_config *c);
void fdt_config_default_for(const fdt_gen_target *t, fdt_config *c);
/* The config used when nothing was tuned for a problem: fdtune's built-in default (the
 * generator's reference config, which the GPU worker verifies every problem with). It runs on
 * any GPU and any grid of the problem and needs no device-dependent derives; `fdtune query
 * best --nearest` answers with it and exported headers fall back to it. */
void fdt_config_fallback(const fdt_problem *p, fdt_config *c);
/* The fallback of target t's dialect: the GPUs' as above; the CPU's is the plain loop nest
 * (blk=0), which runs any grid with every core. */
void fdt_config_fallback_for(const fdt_gen_target *t, const fdt_problem *p, fdt_config *c);
/* Sets one parameter from text ("64", "yzx"); errors name the parameter. */
int fdt_config_set(fdt_config *c, const char *key, const char *value, fdt_err *e);
int fdt_config_get(const fdt_config *c, const char *key, int *value);
/* Parses "bx=64,by=4,nw=32" (also "default" or ""); unknown keys are errors. */
int fdt_config_parse(const char *s, fdt_config *c, fdt_err *e);
/* Canonical text: sorted keys, defaults omitted; "default" when every value is default.
 * This text is the key of a config everywhere (CLI, database, exports). */
void fdt_config_format(const fdt_config *c, char *buf, size_t n);
/* What a person reads: every parameter of the config's dialect, in the catalogue's order,
 * defaults included ("bx=64,by=4,bz=1,lb=0,..."; the test-only fault, dwave's deploy and
 * eta, and the stream's bulk only when set). The dialect is C when a parameter only the C dialect takes is set, else
 * HIP's. Not a key: compare and store configs by fdt_config_format's canonical text. Fits
 * FDT_CONFIG_DISPLAY_MAX bytes. */
void fdt_config_display(const fdt_config *c, char *buf, size_t n);
/* fdt_config_display with the parameters of target t's dialect. */
void fdt_config_display_for(const fdt_gen_target *t, const fdt_config *c, char *buf, size_t n);
/* fdt_config_display of a canonical key (or any text fdt_config_parse reads); text that is
 * not a config ("(reference)", "", a key this build cannot parse) is copied as it is. */
void fdt_config_display_key(const char *key, char *buf, size_t n);
#define FDT_CONFIG_DISPLAY_MAX 256
/* Whether the config can be generated for the problem in the GPUs' dialect (HIP); the error
 * names the parameter. fdt_config_check_for with a HIP target. */
int fdt_config_check(const fdt_problem *p, const fdt_config *c, fdt_err *e);
/* Whether the config can be generated for the problem in target t's dialect: a parameter of
 * another dialect set is refused by name ("config: bx is a GPU parameter; the C dialect
 * takes blk, tx, ..."), then the dialect's own rules. */
int fdt_config_check_for(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                         fdt_err *e);
/* The grid-dependent part of fdt_config_check: whether a config (valid in itself) can run the
 * problem's grid (portable/fdtuned_geometry.h, fdtuned_fit). Returns 0, or -1 with *why (may
 * be NULL) the FDTUNED_FIT_* reason and e the message fdt_config_check gives for it. */
int fdt_config_fit(const fdt_problem *p, const fdt_config *c, int *why, fdt_err *e);

/* ------------------------------------------------------------------ layout */

/* Halo-padded layout of the seeds: pos = i + line*j + slice*k over the padded box
 * (nx+2R) x (ny+2R) x (nz+2R), leading dimension rounded up to `align`, base pointer
 * offset so that x = R is aligned, and one spare row at the end so that whole-vector reads
 * of the last halo row stay inside the allocation. */
typedef struct fdt_layout {
    int R, align;
    int64_t nx, ny, nz;     /* interior */
    int64_t mx, my, mz;     /* padded box with halo: nx+2R, ny+2R, nz+2R */
    int64_t line, slice;    /* strides in elements; line >= mx, multiple of align */
    int64_t offset;         /* elements from the allocation start to x=0,y=0,z=0 */
    int64_t elems;          /* elements to allocate */
    size_t esize;           /* bytes per element */
} fdt_layout;

int fdt_layout_make(const fdt_problem *p, int align, fdt_layout *l, fdt_err *e);
/* Element index (from the allocation start) of padded coordinates (i, j, k). */
static inline int64_t fdt_layout_index(const fdt_layout *l, int64_t i, int64_t j, int64_t k)
{
    return l->offset + i + l->line * j + l->slice * k;
}

/* The seeds' figure of merit: bytes that must be read once and written once. */
double fdt_effective_bytes(const fdt_problem *p);

/* A thin part of p's grid (issue 29): its first 2R z planes, whose step a CPU's worker times
 * alone, back to back (fdt_eval_result.part_ms: a data-parallel hybrid step's CPU part, whose
 * arrays stay in the host's caches from step to step), and from which the hybrid planner
 * prices such a part. 0 where the grid has fewer than 4R planes (no part thinner than half
 * of it). */
int64_t fdt_gen_part_planes(const fdt_problem *p);

/* ------------------------------------------------------------------ launch geometry */

/* One launch: grid[3] and block[3] dimensions, and the padded y rows [jbeg, jend) it writes. */
typedef fdtuned_launch fdt_launch;

typedef struct fdt_geometry {
    int nlaunch;
    fdt_launch launch[FDT_SPLIT_MAX];
    uint32_t shared_bytes; /* shared memory of the kernel's tiles per block */
    int shared_dynamic;    /* 1: shared_bytes is dynamic, passed at launch (lds=2, 3) */
} fdt_geometry;

/* The launches of a config on the problem's grid (portable/fdtuned_geometry.h) and its shared
 * memory; the error names the parameter that does not fit. */
int fdt_gen_geometry(const fdt_problem *p, const fdt_config *c, fdt_geometry *g, fdt_err *e);
/* The geometry in target t's dialect: HIP's is fdt_gen_geometry's; C's is one "launch" (a
 * call of the entry point; grid and block 1 x 1 x 1, no shared memory) writing rows R ..
 * R + ny. Fails when fdt_config_check_for refuses the config. */
int fdt_gen_geometry_for(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                         fdt_geometry *g, fdt_err *e);
/* The geometry in t's dialect of c on a box of p's grid of extents n, a register window
 * deeper than the box cut to its depth (a hybrid step's part or box, a CPU's thin part timed
 * alone: they run the config's window over fewer planes than the grid's). A deployment's own
 * boxes are fdt_gen_deploy's, which refuses such a window instead. */
int fdt_gen_box_geometry(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                         const int64_t n[3], fdt_geometry *g, fdt_err *e);
/* What the portable layout, geometry and fit functions need of a config on a problem. An
 * order index out of range gives a NULL order (which they refuse). */
void fdt_gen_shape(const fdt_problem *p, const fdt_config *c, fdtuned_shape *s);
/* Blocks of one launch along x, y and z (one y subdomain when split > 1), whether or not the
 * grid's limits allow them (fdt_gen_geometry says that); zeros for a malformed config or
 * grid. */
void fdt_gen_blocks(const fdt_problem *p, const fdt_config *c, int64_t blocks[3]);
/* The shared memory of a config's tiles per block, and whether it is dynamic (passed at
 * launch): a function of the operator, radius, precision and config alone, not the grid. */
int fdt_gen_shared(const fdt_problem *p, const fdt_config *c, uint32_t *bytes, int *dynamic,
                   fdt_err *e);
/* Where the stream's slot barriers (mbar=1) begin in its dynamic shared memory: the tiles'
 * and wave's queues' bytes rounded up to 8. The template takes it as BARS_AT, and
 * fdt_gen_shared counts the barriers from there. */
int64_t fdt_gen_barriers_at(const fdt_problem *p, const fdt_config *c);

/* The extents of a config's shared tile (tile.hip, ring.hip, stream.hip): tx = bx*vec + 2 HX
 * values (HX the x radius rounded up to whole vectors), ty = by*tile + 2 R_y rows. */
void fdt_gen_tile(const fdt_problem *p, const fdt_config *c, int64_t *tx, int64_t *ty);
/* Rows of one slot of the stream's ring (lds=3): the tile's, by*tile + 2 R_y, and with
 * bulk=1 as many more as make a slot a multiple of 128 bytes (where a tensor copy may land). */
int64_t fdt_gen_slot_rows(const fdt_problem *p, const fdt_config *c);
/* Whether config c's kernels take a tensor map (bulk=1: the stream's ring slots filled by
 * tensor copies on NVIDIA; on AMD the parameter is there and unused): 1, with m the map of
 * input pointer `in` (the padded origin of p's arrays in layout l, fdtuned_tmap_make), which
 * every launcher passes by value after the kernel's other arguments; 0 when it takes none. */
int fdt_gen_tmap(const fdt_problem *p, const fdt_config *c, const fdt_layout *l, uint64_t in,
                 fdtuned_tmap *m);

/* ------------------------------------------------------------------ kernel arguments */

/* Every generated kernel takes its arguments in this order; which ones depends on the op.
 * dwave's: OUT, IN, PREV, C2, ETA, [NX, NY, NZ, LINE, SLICE: the global grid], BNX, BNY, BNZ,
 * GX, GY, GZ, HX0, HX1, HY0, HY1, HZ0, HZ1, JBEG, JEND, SX, SY, SZ, SI, SJ, SK, SRC; its
 * pointers point at the box's padded origin, SI, SJ, SK are global padded coordinates. */
typedef enum {
    FDT_ARG_OUT, FDT_ARG_IN, FDT_ARG_PREV, FDT_ARG_C2, /* pointers (already offset) */
    FDT_ARG_NX, FDT_ARG_NY, FDT_ARG_NZ, FDT_ARG_LINE,  /* int */
    FDT_ARG_SLICE,                                     /* long long */
    FDT_ARG_JBEG, FDT_ARG_JEND,                        /* int */
    FDT_ARG_SX, FDT_ARG_SY, FDT_ARG_SZ,                /* real: 1/h^2 per axis */
    FDT_ARG_SI, FDT_ARG_SJ, FDT_ARG_SK,                /* int: wave source point (padded) */
    FDT_ARG_SRC,                                       /* real: wave source amplitude */
    FDT_ARG_ETA,                         /* dwave: pointer to the eta array's first value */
    FDT_ARG_BNX, FDT_ARG_BNY, FDT_ARG_BNZ, /* dwave, int: this launch's box extents */
    FDT_ARG_GX, FDT_ARG_GY, FDT_ARG_GZ,  /* dwave, int: global interior coordinate of the box's
                                          * first point */
    FDT_ARG_HX0, FDT_ARG_HX1,            /* dwave, int: box-local interior [x0,x1) x [y0,y1) x */
    FDT_ARG_HY0, FDT_ARG_HY1,            /* [z0,z1) the launch leaves to another (zeros: */
    FDT_ARG_HZ0, FDT_ARG_HZ1,            /* none) */
    FDT_ARG_COUNT
} fdt_arg;

/* Fills args (at most FDT_ARG_COUNT) and returns how many. With the grid baked into the
 * kernel (the default), the dimensions are not arguments. */
int fdt_gen_kernel_args(fdt_op op, int runtime_dims, fdt_arg *args);

/* ------------------------------------------------------------------ deployments */

/* The launches of one dwave deployment: its boxes (portable/fdtuned_deploy.h) and the
 * geometry of the config on each box's extents (fdt_gen_geometry_for). */
typedef struct fdt_deploy {
    int nbox;
    fdtuned_box box[FDTUNED_DEPLOY_MAX];
    fdt_geometry geo[FDTUNED_DEPLOY_MAX];
} fdt_deploy;

/* The blocks' output extents the hole of deploy=inout is aligned to: bx*vec, by*tile and
 * bz*max(nw, 1) in HIP; 1, 1, 1 in C (which skips single points). */
void fdt_gen_deploy_ext(const fdt_gen_target *t, const fdt_config *c, long long ext[3]);
/* The boxes of c's deployment on dwave problem p in target t's dialect, each with the
 * config's geometry on its extents. Fails (the error names the box) when the config cannot
 * run some box: a window longer than a W-thick slab, a box whose x origin is not on a whole
 * vector, any grid misfit. Any other operator has one box, the grid, undamped. */
int fdt_gen_deploy(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                   fdt_deploy *d, fdt_err *e);

/* ------------------------------------------------------------------ source */

/* How the source is specialised. */
typedef struct fdt_gen_opts {
    /* 0 (what fdtune tunes and times): grid and layout strides are compile-time constants,
     * which saves registers and address arithmetic. 1: they are kernel arguments, so one
     * kernel serves any grid (exports use it for sizes that were not tuned). */
    int runtime_dims;
} fdt_gen_opts;

/* The source of one candidate for target t, in t's dialect, with one extern "C" kernel named
 * `name` (a C identifier; NULL: fdt_gen_kernel_name). HIP: the same text compiles with hiprtc
 * and, through fdtune's mapping header, NVRTC. C (C11 + OpenMP 4.5): the entry point is
 * `void name(void **args)`, the arguments of fdt_gen_kernel_args each passed by address in
 * that order (as a GPU launch passes them), everything else static, so that several
 * candidates (distinct names) share one translation unit. dwave: two kernels with the same
 * arguments, `name` (damped; where the damping is 0 it writes the interior kernel's bits) and
 * fdt_gen_dwave_interior_name's (the undamped wave expression), which fdt_gen_deploy's boxes
 * launch; their pointers point at the box's padded origin. opts NULL: the defaults (grid baked
 * in). Fails for a dialect the generator does not emit. */
int fdt_gen_source(const fdt_gen_target *t, const fdt_problem *p, const fdt_config *c,
                   const char *name, const fdt_gen_opts *opts, fdt_sb *out, fdt_err *e);
/* dwave: the second kernel of every dwave source, `name` + "_int" (the interior kernel: the
 * undamped wave expression, the same arguments; ETA and the hole unused). */
void fdt_gen_dwave_interior_name(const char *name, char *buf, size_t n);
/* Default kernel name, e.g. "fdt_lap_r4_f32_1a2b3c4d" (hash of the canonical config and
 * the grid). */
void fdt_gen_kernel_name(const fdt_problem *p, const fdt_config *c, char *buf, size_t n);
/* Utility kernels for verification (fill, poison, compare, check_fill, gather) in one
 * precision, for target t (its dialect); the C dialect's also copy and flush (the CPU
 * worker's copy bandwidth and cache flush), each `void fdt_NAME_PREC(void **args)` taking the
 * GPU utility kernel's arguments (templates/cpu_util.c). */
int fdt_gen_util_source(const fdt_gen_target *t, fdt_prec prec, fdt_sb *out, fdt_err *e);
/* NVRTC's in-memory "hip/hip_runtime.h": maps the HIP dialect fdtune emits onto CUDA. */
const char *fdt_gen_nvrtc_hip_header(void);
/* The AMD compilers' "hip/hip_runtime.h" (templates/amd_device.h): the HIP device API the
 * kernels use, for a compiler given no ROCm header (clang -nogpuinc); empty under hiprtc
 * (__HIPCC_RTC__), whose built-in runtime header declares it all. */
const char *fdt_gen_amd_hip_header(void);
/* Fingerprint of the generator code and templates this binary was built from. */
const char *fdt_gen_fingerprint(void);
/* The hash of the code a tuning run compiles for (p, c) on a backend ("cuda", "hip"; another
 * name: the kernel alone): the kernel's source (fdt_gen_source, default name and options)
 * followed by the backend's mapping header (NVRTC's, or the AMD compilers'), comments (from
 * "//" to the end of a line), blank lines and runs of white space left out, so the banner's
 * generator fingerprint and version do not count. Two generators whose fingerprints differ
 * but which write the same code for (p, c) give the same hash: what tells a result measured
 * with an older generator whose kernel is unchanged from one whose kernel is not. out gets
 * 16 hex digits (FNV-1a, 64 bits). -1 when the generator refuses (p, c). */
int fdt_gen_source_hash(const fdt_problem *p, const fdt_config *c, const char *backend,
                        char *out, size_t n, fdt_err *e);

/* ------------------------------------------------------------------ coefficients */

/* Central second-derivative weights for radius R (order 2R): c[0] is the centre weight,
 * c[r] the weight of the points at +r and -r. Fornberg's algorithm in long double. */
int fdt_fd_coeffs(int R, long double *c, fdt_err *e);
/* General Fornberg weights: derivative order m at x0 for nodes x[0..n-1]; w is n long. */
int fdt_fornberg(int m, long double x0, const long double *x, int n, long double *w, fdt_err *e);

/* ------------------------------------------------------------------ reference and tolerance */

/* Input fields are a pure function of (seed, field, i, j, k), identical on CPU and GPU,
 * never zero, exactly representable in f32 and f64. Fields: 0 = in / p, 1 = p_prev, 2 = c2. */
enum { FDT_FIELD_IN = 0, FDT_FIELD_PREV = 1, FDT_FIELD_C2 = 2 };
double fdt_input_value(uint64_t seed, int field, int64_t i, int64_t j, int64_t k, fdt_prec prec);

/* Run-time parameters of a problem instance (what the kernel gets besides the arrays). */
typedef struct fdt_params {
    double sx, sy, sz;          /* 1/h^2 along x, y, z */
    int64_t si, sj, sk;         /* wave: source point, padded coordinates */
    double src;                 /* wave: source amplitude at this step */
} fdt_params;
/* The parameters fdtune verifies with: distinct per-axis scales (axis mix-ups show) and a
 * source at the centre of the grid. */
void fdt_params_default(const fdt_problem *p, fdt_params *q);

/* Double-precision reference at padded point (i, j, k), reading inputs through fn. */
typedef double (*fdt_input_fn)(void *ctx, int field, int64_t i, int64_t j, int64_t k);
double fdt_reference_point(const fdt_problem *p, const fdt_params *q, const long double *coef,
                           fdt_input_fn fn, void *ctx, int64_t i, int64_t j, int64_t k);

/* Tolerances, from the precision, the radius and the size of the terms:
 *  ref_vs_exact: GPU reference kernel against the double-precision CPU reference;
 *  cand_vs_ref:  candidate against the GPU reference (both rounded). Absolute, per point. */
typedef struct fdt_tolerance {
    double ref_vs_exact, cand_vs_ref;
    int nterms;        /* terms in one output point */
    double abs_terms;  /* bound on the sum of |term| with |input| <= 1 */
} fdt_tolerance;
void fdt_tolerance_make(const fdt_problem *p, const fdt_params *q, fdt_tolerance *t);

/* ------------------------------------------------------------------ launch arguments */

/* One kernel argument's value, as a launch passes it (by address: args[i] = &v[i]). */
typedef union fdt_argval {
    uint64_t ptr;
    int i;
    long long ll;
    float f;
    double d;
} fdt_argval;

/* The arrays a launch works on: the device addresses of their allocations (laid out by lay;
 * out, in = p, prev = p_prev, c2; eta the dwave profile, 0 when none) and the global z of the
 * allocation's first interior plane (0 for the whole grid; a part of a split domain holds the
 * planes from z0 on). */
typedef struct fdt_launch_arrays {
    uint64_t out, in, prev, c2, eta;
    const fdt_layout *lay;
    int64_t z0;
} fdt_launch_arrays;

/* A time loop's three fields after a leapfrog step (wave, dwave): f[0] the output, f[1] p,
 * f[2] p_prev; the output becomes the next step's p, p its p_prev, and p_prev's array takes
 * its output (c2 stays). The one rule of the hybrid runner's steps and the worker's timings. */
static inline void fdt_gen_fields_rotate(uint64_t f[3])
{
    uint64_t t = f[2];
    f[2] = f[1];
    f[1] = f[0];
    f[0] = t;
}

/* The values of arguments a[0..n) (fdt_gen_kernel_args, grid baked in) of p's kernel over box
 * b (NULL: the whole grid, one box): the array pointers at the box's padded origin, the box's
 * extents, global origin and hole, the scales and the source of q. JBEG and JEND are left 0:
 * each launch of a y split sets its own. The one rule every runner of a kernel uses (the
 * worker, the hybrid runner). */
void fdt_gen_argvals(const fdt_problem *p, const fdt_params *q, const fdt_launch_arrays *arr,
                     const fdtuned_box *b, const fdt_arg *a, int n, fdt_argval *v);

#endif
