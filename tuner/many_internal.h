/* Private to a run over several GPUs (many.c, many_runner.c): the messages between fdtune and
 * the process of each GPU, over a socket pair, framed (fdt_frame_*). Both ends are one binary
 * (the process is forked), so plain structs travel as bytes. */
#ifndef FDT_MANY_INTERNAL_H
#define FDT_MANY_INTERNAL_H

#include "fdt_many.h"

enum {
    RN_READY = 1, /* GPU -> fdtune: fdt_device, the worker started */
    RN_FAILED,    /* GPU -> fdtune: text, it could not start */
    RN_EVENT,     /* GPU -> fdtune: flat_event */
    RN_DONE,      /* GPU -> fdtune: done_msg */
    RN_TUNE,      /* fdtune -> GPU: tune_msg, the problem's index and deadline */
    RN_QUIT,      /* fdtune -> GPU */
};

/* A tuning event with what its pointers point at. */
typedef struct flat_event {
    fdt_tune_event_kind kind;
    fdt_problem p;
    char config[256], stage[16];
    int has_r, has_setup;
    fdt_eval_result r;
    fdt_setup_result setup;
    int done, total;
    double best_gbs, best_frac, copy_gbs, elapsed_s, eta_s, compile_s;
    size_t survivors, resumed, compile_failed, cached, compiled;
} flat_event;

/* RN_TUNE: tune problem k, no evaluation starting after the run's deadline (fdt_now(); 0:
 * none), whose time it shares with share - 1 more problems (fdt_tune_opts.share). */
typedef struct tune_msg {
    int32_t k, share;
    double deadline;
} tune_msg;

/* The outcome of one problem on one GPU. */
typedef struct done_msg {
    int32_t problem;
    int32_t rc;         /* fdt_tune_problem's */
    fdt_tune_summary sum;
    char error[2048];   /* rc != 0 */
} done_msg;

/* What the process of one GPU is given (in its copy of fdtune's memory). */
typedef struct runner_args {
    int fd;                       /* its end of the socket pair */
    pid_t parent;
    int live;                     /* the visible device */
    const fdt_session_opts *so;   /* the database, catalogue, worker options, probe */
    fdt_recipe *const *rec;
    const fdt_tune_request *rq;
    const fdt_many_problem *v;    /* the problems (by index) */
} runner_args;

/* The process of one GPU: opens its session (database connection, worker), says READY or
 * FAILED, then tunes each problem it is sent until QUIT. Never returns. */
void many_runner_main(const runner_args *a) __attribute__((noreturn));

void many_flatten(const fdt_tune_event *ev, flat_event *f);
/* ev's pointers point into f. */
void many_unflatten(const flat_event *f, fdt_tune_event *ev);

#endif
