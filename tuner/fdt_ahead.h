/* Compiling ahead: one batch of candidates built (fdt_target_build) on a thread of its own
 * while the caller's thread does other work, so that the tuner compiles the next batch while
 * it measures this one. The thread builds and does nothing else: it touches only the batch's
 * candidates and the compile pool. Its progress is kept here, for the caller to pass on from
 * its own thread (fdt_ahead_wait), and the build gives up when the caller cancels it or its
 * stop flag is set (a stopped search compiles nothing more). */
#ifndef FDT_AHEAD_H
#define FDT_AHEAD_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "fdt_target.h"

typedef struct fdt_ahead {
    /* the build, the thread's alone while it runs */
    const fdt_target *t;
    const fdt_problem *p;
    fdt_cand **v;
    size_t n;
    fdt_build_opts o;
    const volatile sig_atomic_t *stop; /* may be NULL */
    atomic_int cancel;
    pthread_t th;
    int running; /* started, not joined */
    /* what the thread tells, under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t done, total; /* of the build's compilations, through so far */
    int told;           /* done changed since the caller last looked */
    int finished;
    int rc;
    fdt_err err;
    double wall_s; /* the build's wall time */
} fdt_ahead;

/* Starts building v[0..n) for t and p with o (its on_done, cancelled and ctx are the ahead's
 * own) on a new thread; the candidates are the thread's until fdt_ahead_wait or
 * fdt_ahead_cancel returns. stop (may be NULL) is a flag set asynchronously (the user's
 * interrupt): the build gives up when it is set. Fails (e) when no thread can be started:
 * nothing is built then. t, p and the candidates must outlive the build. */
int fdt_ahead_start(fdt_ahead *a, const fdt_target *t, const fdt_problem *p, fdt_cand *const *v,
                    size_t n, const fdt_build_opts *o, const volatile sig_atomic_t *stop,
                    fdt_err *e);

/* Waits for the build started, telling progress(ctx, done, n) (may be NULL) from this thread
 * as its compilations end. Returns what fdt_target_build returned (-1 with e: nothing could
 * be compiled, or the stop flag gave the build up: "cancelled"); *wall_s is the build's wall
 * time and *waited_s how long this call waited for it (the part of wall_s not overlapped
 * with the caller's work). */
int fdt_ahead_wait(fdt_ahead *a, fdt_done_fn progress, void *ctx, double *wall_s,
                   double *waited_s, fdt_err *e);

/* Gives the build started up and waits for it to end (the compilations running are drained,
 * fdt_run_many_cancel: no child is left). The candidates are the caller's again, some NEW,
 * some built; *wall_s and *waited_s as for fdt_ahead_wait. */
void fdt_ahead_cancel(fdt_ahead *a, double *wall_s, double *waited_s);

#endif
