/* Runs a function in a forked child and brings its output back through a pipe. Used where
 * a vendor library may crash or hang (hiprtc 5.2 segfaults on some targets; a driver may
 * wedge): the crash becomes an error message here and fdtune keeps going. Many children run
 * side by side, bounded per call and, in a pool shared by several processes (a tuning run
 * over several GPUs), in all. Also runs an external program (an offline compiler, a
 * disassembler) and gathers its output. */
#include "fdt_common.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CHILD_OK = 1, CHILD_FAIL = 2 };

static void describe_exit(fdt_err *e, const char *what, int status)
{
    if (WIFSIGNALED(status))
        fdt_err_set(e, "%s: crashed (signal %d, %s)", what, WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        fdt_err_set(e, "%s: child exited with status %d without a result", what,
                    WEXITSTATUS(status));
    else
        fdt_err_set(e, "%s: child ended abnormally", what);
}

/* Forks a child that runs fn(arg) and sends its bytes back framed (CHILD_OK or CHILD_FAIL)
 * through a pipe: *pid is the child, *fd the parent's end to read. */
static int start_child(fdt_child_fn fn, void *arg, pid_t *pid_out, int *fd_out, fdt_err *e)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return fdt_err_set(e, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return fdt_err_set(e, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        fdt_sb out;
        fdt_sb_init(&out);
        int rc = fn(arg, &out);
        fdt_err we;
        int st = fdt_frame_write(fds[1], rc == 0 ? CHILD_OK : CHILD_FAIL, fdt_sb_str(&out),
                                 out.len, &we);
        _exit(st == 0 ? 0 : 3);
    }
    close(fds[1]);
    *pid_out = pid;
    *fd_out = fds[0];
    return 0;
}

int fdt_run_in_child(const char *what, fdt_child_fn fn, void *arg, int timeout_ms,
                     char **result, size_t *result_len, fdt_err *e)
{
    *result = NULL;
    if (result_len)
        *result_len = 0;
    pid_t pid;
    int fd;
    if (start_child(fn, arg, &pid, &fd, e))
        return fdt_err_wrap(e, "%s", what);
    uint32_t type = 0;
    void *data = NULL;
    size_t n = 0;
    fdt_err re;
    int r = fdt_frame_read(fd, &type, &data, &n, timeout_ms, &re);
    close(fd);
    if (r == 1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return fdt_err_set(e, "%s: timed out after %.1f s (killed)", what, timeout_ms / 1000.0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (r < 0) {
        describe_exit(e, what, status);
        return -1;
    }
    if (type == CHILD_FAIL) {
        fdt_err_set(e, "%s: %s", what, data ? (char *)data : "failed");
        free(data);
        return -1;
    }
    *result = data ? data : calloc(1, 1);
    if (result_len)
        *result_len = n;
    return 0;
}

/* ---------------------------------------------------------------- the shared pool */

#define POOL_MAX 1024

/* The pool this process shares: a file whose byte i is slot i, locked (F_SETLK, a lock of
 * this process) while a child of this process holds it. A process's own locks never conflict
 * with each other, so which slots it holds is kept here too, for the process that owns it
 * (a forked process holds none of its parent's locks). */
static struct {
    int fd, n;
    pid_t owner;
    unsigned char held[POOL_MAX];
} pool = {-1, 0, 0, {0}};

int fdt_child_pool_share(int slots, fdt_err *e)
{
    if (slots < 1 || slots > POOL_MAX)
        return fdt_err_set(e, "compile pool: %d slots (1..%d)", slots, POOL_MAX);
    fdt_child_pool_leave();
    int fd = memfd_create("fdtune-pool", 0);
    if (fd < 0)
        return fdt_err_set(e, "compile pool: memfd_create: %s", strerror(errno));
    pool.fd = fd;
    pool.n = slots;
    pool.owner = getpid();
    memset(pool.held, 0, sizeof pool.held);
    return 0;
}

int fdt_child_pool_slots(void) { return pool.fd >= 0 ? pool.n : 0; }

void fdt_child_pool_leave(void)
{
    if (pool.fd >= 0)
        close(pool.fd);
    pool.fd = -1;
    pool.n = 0;
}

static int pool_lock(int i, short type)
{
    struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = i, .l_len = 1};
    return fcntl(pool.fd, F_SETLK, &l);
}

/* A free slot taken for a child (its index), -1 when every slot is held, or -2 when this
 * process shares no pool. */
static int pool_take_locked(void)
{
    if (pool.fd < 0)
        return -2;
    if (pool.owner != getpid()) { /* forked after the pool was shared: holds nothing yet */
        pool.owner = getpid();
        memset(pool.held, 0, sizeof pool.held);
    }
    for (int i = 0; i < pool.n; i++)
        if (!pool.held[i] && pool_lock(i, F_WRLCK) == 0) {
            pool.held[i] = 1;
            return i;
        }
    return -1;
}

static void pool_give_locked(int i)
{
    if (i < 0 || pool.fd < 0 || !pool.held[i])
        return;
    pool_lock(i, F_UNLCK);
    pool.held[i] = 0;
}

/* The two above under one lock: a tuner's compile thread and its main thread (a worker
 * restarted during a measurement builds its verification kernels) may both start children. */
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

static int pool_take(void)
{
    pthread_mutex_lock(&pool_mu);
    int i = pool_take_locked();
    pthread_mutex_unlock(&pool_mu);
    return i;
}

static void pool_give(int i)
{
    pthread_mutex_lock(&pool_mu);
    pool_give_locked(i);
    pthread_mutex_unlock(&pool_mu);
}

/* ---------------------------------------------------------------- many children */

#define MAX_PARALLEL 64

typedef struct slot {
    size_t job;
    pid_t pid;
    int fd;
    double deadline;
    int pool_slot; /* of the shared pool, or < 0 */
} slot;

/* Collects one child whose pipe is readable (or whose time is up). */
static int finish_child(slot *s, const char *what, int timed_out, char **result, size_t *len,
                        fdt_err *err)
{
    int failed = 1;
    if (timed_out) {
        kill(s->pid, SIGKILL);
        fdt_err_set(err, "%s: timed out (killed)", what);
    } else {
        uint32_t type = 0;
        void *data = NULL;
        size_t n = 0;
        fdt_err re;
        double left = s->deadline - fdt_now();
        int r = fdt_frame_read(s->fd, &type, &data, &n, left > 0 ? (int)(left * 1000) + 1 : 1, &re);
        if (r == 1) {
            kill(s->pid, SIGKILL);
            fdt_err_set(err, "%s: timed out (killed)", what);
        } else if (r == 0 && type == CHILD_OK) {
            *result = data ? data : calloc(1, 1);
            *len = n;
            failed = 0;
        } else if (r == 0) {
            fdt_err_set(err, "%s: %s", what, data ? (char *)data : "failed");
            free(data);
        } else {
            err->msg[0] = 0; /* described from the exit status below */
        }
    }
    close(s->fd);
    int status = 0;
    while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (failed && !err->msg[0])
        describe_exit(err, what, status);
    s->pid = -1;
    pool_give(s->pool_slot);
    s->pool_slot = -1;
    return failed;
}

/* Starts job `job` in the free slot s, holding a slot of the shared pool when there is one.
 * 1 started, 0 no slot of the pool is free (nothing done), -1 the fork failed (err). */
static int start_slot(slot *s, fdt_child_fn fn, void *arg, size_t job, int timeout_ms,
                      fdt_err *err)
{
    int ps = pool_take();
    if (ps == -1)
        return 0;
    s->pool_slot = ps;
    s->job = job;
    s->deadline = fdt_now() + timeout_ms / 1000.0;
    if (start_child(fn, arg, &s->pid, &s->fd, err)) {
        pool_give(ps);
        s->pool_slot = -1;
        return -1;
    }
    return 1;
}

int fdt_run_many(const char *const *what, fdt_child_fn fn, void *const *args, size_t n,
                 int parallel, int timeout_ms, char **results, size_t *lens, fdt_err *errs,
                 fdt_err *e)
{
    return fdt_run_many_progress(what, fn, args, n, parallel, timeout_ms, results, lens, errs,
                                 NULL, NULL, e);
}

int fdt_run_many_progress(const char *const *what, fdt_child_fn fn, void *const *args,
                          size_t n, int parallel, int timeout_ms, char **results, size_t *lens,
                          fdt_err *errs, fdt_done_fn on_done, void *ctx, fdt_err *e)
{
    return fdt_run_many_cancel(what, fn, args, n, parallel, timeout_ms, results, lens, errs,
                               on_done, NULL, ctx, e);
}

#define CANCEL_POLL_MS 50 /* how often a batch that may be cancelled asks */

/* Gives up the jobs of [*next, n) that never started: each fails "WHAT: cancelled". */
static void cancel_rest(const char *const *what, size_t n, size_t *next, size_t *done,
                        int *failures, fdt_err *errs)
{
    for (; *next < n; (*next)++) {
        fdt_err_set(&errs[*next], "%s: cancelled", what[*next]);
        (*failures)++;
        (*done)++;
    }
}

int fdt_run_many_cancel(const char *const *what, fdt_child_fn fn, void *const *args, size_t n,
                        int parallel, int timeout_ms, char **results, size_t *lens,
                        fdt_err *errs, fdt_done_fn on_done, fdt_cancel_fn cancelled, void *ctx,
                        fdt_err *e)
{
    if (parallel < 1)
        parallel = 1;
    if (parallel > MAX_PARALLEL)
        parallel = MAX_PARALLEL;
    slot *slots = calloc((size_t)parallel, sizeof *slots);
    struct pollfd *pfd = calloc((size_t)parallel, sizeof *pfd);
    if (!slots || !pfd) {
        free(slots);
        free(pfd);
        return fdt_err_set(e, "out of memory");
    }
    for (int i = 0; i < parallel; i++) {
        slots[i].pid = -1;
        slots[i].pool_slot = -1;
    }
    size_t next = 0, done = 0;
    int failures = 0, running = 0, started = 0, gave_up = 0;
    for (size_t i = 0; i < n; i++) {
        results[i] = NULL;
        lens[i] = 0;
        errs[i].msg[0] = 0;
    }
    while (done < n) {
        if (!gave_up && cancelled && cancelled(ctx)) { /* drain: start nothing more */
            size_t before = done;
            gave_up = 1;
            cancel_rest(what, n, &next, &done, &failures, errs);
            if (on_done && done > before) /* those given up end too */
                on_done(ctx, done, n);
            if (done == n)
                break;
        }
        /* fill free slots (and, in a shared pool, only while one of its slots is free) */
        for (int i = 0; i < parallel && next < n; i++) {
            if (slots[i].pid > 0)
                continue;
            int st = start_slot(&slots[i], fn, args[next], next, timeout_ms, &errs[next]);
            if (st == 0)
                break;
            if (st < 0 && !started && !running) { /* cannot fork at all */
                fdt_err_set(e, "%s", errs[next].msg);
                free(slots);
                free(pfd);
                return -1;
            }
            if (st < 0) {
                fdt_err_wrap(&errs[next], "%s", what[next]);
                failures++;
                done++;
            } else {
                started = 1;
                running++;
            }
            next++;
        }
        int np = 0, idx[MAX_PARALLEL];
        double soonest = 1e300, now = fdt_now();
        for (int i = 0; i < parallel; i++)
            if (slots[i].pid > 0) {
                pfd[np] = (struct pollfd){.fd = slots[i].fd, .events = POLLIN};
                idx[np] = i;
                np++;
                if (slots[i].deadline < soonest)
                    soonest = slots[i].deadline;
            }
        if (!np) { /* the shared pool is full with other processes' children */
            if (next < n)
                usleep(10000);
            continue;
        }
        if (next < n && fdt_child_pool_slots() && soonest - now > 0.02)
            soonest = now + 0.02; /* look for a slot another process freed */
        int wait_ms = soonest - now > 0 ? (int)((soonest - now) * 1000) + 1 : 0;
        if (cancelled && !gave_up && wait_ms > CANCEL_POLL_MS)
            wait_ms = CANCEL_POLL_MS;
        int r = poll(pfd, (nfds_t)np, wait_ms);
        if (r < 0 && errno != EINTR) {
            fdt_err_set(e, "poll: %s", strerror(errno));
            break;
        }
        now = fdt_now();
        for (int k = 0; k < np; k++) {
            slot *s = &slots[idx[k]];
            int ready = r > 0 && (pfd[k].revents & (POLLIN | POLLHUP | POLLERR));
            int late = now >= s->deadline;
            if (!ready && !late)
                continue;
            size_t j = s->job;
            failures += finish_child(s, what[j], !ready && late, &results[j], &lens[j], &errs[j]);
            running--;
            done++;
            if (on_done)
                on_done(ctx, done, n);
        }
    }
    /* only on a poll failure: do not leave children behind */
    for (int i = 0; i < parallel; i++)
        if (slots[i].pid > 0) {
            kill(slots[i].pid, SIGKILL);
            finish_child(&slots[i], what[slots[i].job], 1, &results[slots[i].job],
                         &lens[slots[i].job], &errs[slots[i].job]);
            failures++;
        }
    free(slots);
    free(pfd);
    if (gave_up)
        return fdt_err_set(e, "cancelled");
    return failures;
}

/* ---------------------------------------------------------------- external programs */

/* Reads both pipes until the program closes them. */
static void drain(int fo, int fe, fdt_sb *out, fdt_sb *err)
{
    struct pollfd p[2] = {{.fd = fo, .events = POLLIN}, {.fd = fe, .events = POLLIN}};
    fdt_sb *dst[2] = {out, err};
    int open_fds = 2;
    char buf[16384];
    while (open_fds) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t r = read(p[i].fd, buf, sizeof buf);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
            } else if (dst[i]) {
                fdt_sb_putn(dst[i], buf, (size_t)r);
            }
        }
    }
}

int fdt_exec(const char *const *argv, fdt_sb *out, fdt_sb *err, fdt_err *e)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0)
        return fdt_err_set(e, "%s: pipe: %s", argv[0], strerror(errno));
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        return fdt_err_set(e, "%s: pipe: %s", argv[0], strerror(errno));
    }
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        /* dies with the caller; a caller already gone leaves nothing to do */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        execv(argv[0], (char *const *)argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    if (pid < 0) {
        close(po[0]);
        close(pe[0]);
        return fdt_err_set(e, "%s: fork: %s", argv[0], strerror(errno));
    }
    drain(po[0], pe[0], out, err);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFSIGNALED(status))
        return fdt_err_set(e, "%s: killed by signal %d (%s)", argv[0], WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
    return fdt_err_set(e, "%s: exited with status %d", argv[0],
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
