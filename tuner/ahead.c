/* Compiling ahead (fdt_ahead.h): a batch built on a thread while the tuner measures the batch
 * before it on its own. The thread's build reports its progress and asks whether to give up
 * through the two callbacks below, under the ahead's lock; the caller's thread alone turns
 * them into events. */
#include "fdt_ahead.h"

#include <stdlib.h>
#include <string.h>

static void on_progress(void *ctx, size_t done, size_t n)
{
    fdt_ahead *a = ctx;
    pthread_mutex_lock(&a->mu);
    a->done = done;
    a->total = n;
    a->told = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

static int on_cancelled(void *ctx)
{
    const fdt_ahead *a = ctx;
    return atomic_load(&a->cancel) || (a->stop && *a->stop);
}

static void *build(void *arg)
{
    fdt_ahead *a = arg;
    fdt_err e = {{0}};
    double t0 = fdt_now();
    int rc = fdt_target_build(a->t, a->p, a->v, a->n, &a->o, &e);
    pthread_mutex_lock(&a->mu);
    a->rc = rc;
    a->err = e;
    a->wall_s = fdt_now() - t0;
    a->finished = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

int fdt_ahead_start(fdt_ahead *a, const fdt_target *t, const fdt_problem *p, fdt_cand *const *v,
                    size_t n, const fdt_build_opts *o, const volatile sig_atomic_t *stop,
                    fdt_err *e)
{
    memset(a, 0, sizeof *a);
    a->v = malloc((n ? n : 1) * sizeof *a->v);
    if (!a->v)
        return fdt_err_set(e, "compiling ahead: out of memory");
    memcpy(a->v, v, n * sizeof *v);
    a->t = t;
    a->p = p;
    a->n = n;
    a->o = *o;
    a->o.on_done = on_progress;
    a->o.cancelled = on_cancelled;
    a->o.ctx = a;
    a->stop = stop;
    atomic_init(&a->cancel, 0);
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    int rc = pthread_create(&a->th, NULL, build, a);
    if (rc) {
        pthread_mutex_destroy(&a->mu);
        pthread_cond_destroy(&a->cv);
        free(a->v);
        a->v = NULL;
        return fdt_err_set(e, "compiling ahead: no thread: %s", strerror(rc));
    }
    a->running = 1;
    return 0;
}

/* Waits for the thread to finish, passing its progress on; then joins it. */
static void join(fdt_ahead *a, fdt_done_fn progress, void *ctx, double *wall_s,
                 double *waited_s)
{
    FDT_ASSERT(a->running, "an ahead build is waited for once");
    double t0 = fdt_now();
    pthread_mutex_lock(&a->mu);
    for (;;) {
        if (a->told && progress) {
            size_t done = a->done, total = a->total;
            a->told = 0;
            pthread_mutex_unlock(&a->mu); /* the callback runs without the lock */
            progress(ctx, done, total);
            pthread_mutex_lock(&a->mu);
            continue;
        }
        if (a->finished)
            break;
        pthread_cond_wait(&a->cv, &a->mu);
    }
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    a->running = 0;
    *waited_s = fdt_now() - t0;
    *wall_s = a->wall_s;
    pthread_mutex_destroy(&a->mu);
    pthread_cond_destroy(&a->cv);
    free(a->v);
    a->v = NULL;
}

int fdt_ahead_wait(fdt_ahead *a, fdt_done_fn progress, void *ctx, double *wall_s,
                   double *waited_s, fdt_err *e)
{
    join(a, progress, ctx, wall_s, waited_s);
    if (a->rc)
        *e = a->err;
    return a->rc;
}

void fdt_ahead_cancel(fdt_ahead *a, double *wall_s, double *waited_s)
{
    atomic_store(&a->cancel, 1);
    join(a, NULL, NULL, wall_s, waited_s);
}
