/* Private: the messages between fdtune and its GPU worker. Both ends are the same binary
 * (the worker is forked), so plain structs travel as bytes, followed by code images. */
#ifndef FDT_WORKER_PROTO_H
#define FDT_WORKER_PROTO_H

#include "fdt_eval.h"

enum {
    MSG_HELLO = 1,   /* worker -> parent: fdt_device */
    MSG_ERROR,       /* worker -> parent: text */
    MSG_COPYBW,      /* parent -> worker: uint64 bytes */
    MSG_COPYBW_OK,   /* worker -> parent: double GB/s */
    MSG_SETUP,       /* parent -> worker: setup_msg + util image + reference image */
    MSG_SETUP_OK,    /* worker -> parent: fdt_setup_result */
    MSG_EVAL,        /* parent -> worker: eval_msg + image */
    MSG_EVAL_OK,     /* worker -> parent: fdt_eval_result */
    MSG_QUIT,
    MSG_LINK,        /* parent -> worker: nothing */
    MSG_LINK_OK,     /* worker -> parent: fdt_link */
};

typedef struct setup_msg {
    fdt_problem p;
    uint64_t seed;
    char ref_kernel[96];
    uint64_t util_len, ref_len;
    uint64_t flush_bytes;  /* written before each timed launch (fdt_eval_flush_bytes); 0: none */
    fdt_gen_target gen;    /* the dialect the worker's kernels are in (its deployments') */
} setup_msg;

typedef struct eval_msg {
    fdt_config c;
    fdt_timing_opts t;
    char kernel[96];
    uint64_t image_len;
} eval_msg;

/* The worker's main loop (never returns). */
void fdt_worker_main(int fd, const char *backend, int index) __attribute__((noreturn));
/* The same for simulated GPU `index` answering from `recording` (eval/sim.c); life: how many
 * workers were started on that GPU before this one (a GPU that failed stays failed). */
void fdt_sim_worker_main(int fd, const char *recording, int index, int life)
    __attribute__((noreturn));

/* Names of the utility kernels in templates/util.hip for one precision. */
#define UTIL_KERNEL(buf, what, prec) snprintf(buf, sizeof buf, "fdt_%s_%s", what, fdt_prec_name(prec))

#endif
