/* Small shared helpers every fdtune module uses: the "what: why" error buffer, a growable
 * string, a content hash, whole-file I/O and scratch directories, length-prefixed messages
 * over a descriptor, running a function in a child process so that a crash or a hang there
 * becomes an error here, and running an external program (a compiler, a disassembler). Library code reports through these and never prints or exits. */
#ifndef FDT_COMMON_H
#define FDT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#define FDT_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---- invariants ----
 * FDT_ASSERT(cond, "what must hold") states an invariant of fdtune's own code (never a check
 * of input: input gets an fdt_err). Builds with FDTUNE_ASSERTS (the asan preset, and Debug
 * builds) evaluate it and, when it fails, print file:line, the condition and the message on
 * stderr and abort; other builds compile it out without evaluating cond. FDT_REQUIRE is the
 * same check in every build, for misuse of an interface whose result would otherwise be
 * silently wrong (e.g. a table row with a missing cell). Structures that must match across
 * processes, GPU code or exported headers get _Static_assert instead. */
#define FDT_REQUIRE(cond, msg) \
    ((cond) ? (void)0 : fdt_assert_fail(#cond, (msg), __FILE__, __LINE__, __func__))
#ifdef FDTUNE_ASSERTS
#define FDT_ASSERT(cond, msg) FDT_REQUIRE(cond, msg)
#else
#define FDT_ASSERT(cond, msg) ((void)sizeof(!(cond)))
#endif
void fdt_assert_fail(const char *cond, const char *msg, const char *file, int line,
                     const char *func) __attribute__((noreturn));

/* ---- errors: fallible functions return 0 or -1 and fill one of these ---- */
typedef struct fdt_err {
    char msg[2048];
} fdt_err;

/* Sets the message (printf style) and returns -1, so `return fdt_err_set(e, ...)` reads well. */
int fdt_err_set(fdt_err *e, const char *fmt, ...) FDT_PRINTF(2, 3);
/* Prepends "what: " to the current message and returns -1. */
int fdt_err_wrap(fdt_err *e, const char *fmt, ...) FDT_PRINTF(2, 3);

/* What kind of outcome an operation that drives a whole command had (tune, retune, bench):
 * the message says what happened, this says which kind, and the CLI maps it to an exit
 * status (0, 1, 2, 3, 4, 5, 130 in this order). */
typedef enum {
    FDT_STATUS_OK,
    FDT_STATUS_FAILED,      /* it ran and a check failed (no verified config, a regression) */
    FDT_STATUS_USAGE,       /* the request cannot be met as given (names nothing here) */
    FDT_STATUS_NO_GPU,      /* it needs a GPU and none is visible */
    FDT_STATUS_ERROR,       /* operational: device, compiler, database, disk */
    FDT_STATUS_BUSY,        /* another process holds what it needs (the retune lock) */
    FDT_STATUS_INTERRUPTED, /* stopped by SIGINT or SIGTERM; what was done is kept */
} fdt_status;

/* ---- growable string ---- */
typedef struct fdt_sb {
    char *s;
    size_t len, cap;
    int oom; /* sticky: set when an allocation failed; the text is then truncated */
} fdt_sb;

void fdt_sb_init(fdt_sb *b);
void fdt_sb_free(fdt_sb *b);
void fdt_sb_puts(fdt_sb *b, const char *s);
void fdt_sb_putn(fdt_sb *b, const char *s, size_t n);
void fdt_sb_printf(fdt_sb *b, const char *fmt, ...) FDT_PRINTF(2, 3);
void fdt_sb_vprintf(fdt_sb *b, const char *fmt, va_list ap);
/* Returns the buffer ("" when empty) and hands ownership to the caller. */
char *fdt_sb_take(fdt_sb *b);
/* A new string formatted printf-style (free it), or NULL when out of memory. */
char *fdt_sb_format(const char *fmt, ...) FDT_PRINTF(1, 2);
char *fdt_sb_vformat(const char *fmt, va_list ap);
const char *fdt_sb_str(const fdt_sb *b);

/* ---- hashing (FNV-1a 64: names cache files and fingerprints text; not for security) ---- */
uint64_t fdt_hash64(const void *data, size_t n, uint64_t seed);
uint64_t fdt_hash64_str(const char *s, uint64_t seed);
#define FDT_HASH_SEED 0xcbf29ce484222325ULL

/* ---- growable arrays ---- */
/* Room for element n of an array v of *cap elements of `size` bytes: returns v when there
 * is room, else the array grown (doubling; `first` elements the first time) with *cap
 * updated, or NULL when out of memory (v and *cap are then unchanged and v still owned). */
void *fdt_grow(void *v, size_t *cap, size_t n, size_t size, size_t first);

/* ---- files ---- */
/* Reads a whole file; *out is NUL-terminated (and *len excludes the NUL). */
int fdt_read_file(const char *path, char **out, size_t *len, fdt_err *e);
/* ---- the output rule: how fdtune writes a path it is given (-o, --export-json, ...) ----
 * What a path names once its symbolic links are followed (chains and relative links
 * included; a dangling link names its target, which is then created). */
typedef enum {
    FDT_OUT_NEW,    /* nothing there yet: created */
    FDT_OUT_FILE,   /* a regular file: replaced atomically, its permission bits kept */
    FDT_OUT_STREAM, /* a character device or a FIFO: opened and written in place */
    FDT_OUT_FD,     /* a descriptor of this process (/dev/stdout, /dev/stderr, /dev/fd/N,
                       /proc/self/fd/N): written through it, in place */
} fdt_out_kind;
typedef struct fdt_out_path {
    fdt_out_kind kind;
    char path[4096]; /* the path with its links followed (FDT_OUT_FD: the /proc link) */
    int fd;          /* FDT_OUT_FD: the descriptor, else -1 */
    unsigned mode;   /* st_mode of what it names (not FDT_OUT_NEW, FDT_OUT_FD); a
                        FDT_OUT_FILE keeps its permission bits */
} fdt_out_path;
/* Classifies path for writing. A directory, a block device, a socket, a link loop or a
 * /proc link to anything but this process's descriptors is refused (-1, e says what it is). */
int fdt_output_resolve(const char *path, fdt_out_path *o, fdt_err *e);
/* Writes data to path by the output rule: a new path or a regular file (a link's target
 * too) through a temporary file in the same directory, fsync and rename, so readers never
 * see half a file and the link stays a link; a character device, a FIFO or one of this
 * process's descriptors written in place and never replaced (a FIFO waits for its reader).
 * A failed write (ENOSPC on /dev/full, EPIPE from a reader that left: SIGPIPE is held off)
 * is -1 with "path: why", and a replaced file is then left as it was. */
int fdt_write_file_atomic(const char *path, const void *data, size_t n, fdt_err *e);
/* The output rule for a database written through SQLite (db merge -o, the shards of a
 * plan): the file the path names, links followed, in real (n bytes); a new path or a regular
 * file. A character device, a FIFO or a descriptor cannot hold a database and is refused
 * (-1, "path: why"), as fdt_output_resolve refuses the rest. */
int fdt_output_db_path(const char *path, char *real, size_t n, fdt_err *e);
/* mkdir -p */
int fdt_mkdirs(const char *path, fdt_err *e);
/* Writes a whole file in place (no fsync): for scratch files that live as long as one job. */
int fdt_write_file(const char *path, const void *data, size_t n, fdt_err *e);
/* A new private directory under $TMPDIR (else /tmp) named prefix-XXXXXX; its path in buf. */
int fdt_scratch_dir(const char *prefix, char *buf, size_t n, fdt_err *e);
/* Removes a directory and everything below it (best effort, never follows links). */
void fdt_remove_tree(const char *dir);
/* The executable `name`: itself when it holds a '/', else the first match on $PATH. Fills
 * buf with the path and returns 0, or -1 when there is none. */
int fdt_find_program(const char *name, char *buf, size_t n);
/* Where fdtune installs its data, found next to the running program: "<dir of the
 * executable>/../share/fdtune" (the recipes, the system database). 0, or -1 when the
 * executable's path is unknown or does not fit. */
int fdt_share_dir(char *buf, size_t n);

/* ---- framed messages over a pipe or socket: u32 type, u32 length, payload ---- */
int fdt_frame_write(int fd, uint32_t type, const void *data, size_t n, fdt_err *e);
/* Waits at most timeout_ms (<0: forever). Returns 0 with *data malloc'ed (may be NULL when
 * n == 0), 1 on timeout, -1 on error or EOF (message says which). */
int fdt_frame_read(int fd, uint32_t *type, void **data, size_t *n, int timeout_ms, fdt_err *e);

/* ---- run a function in a child process ---- */
/* The child calls fn(arg, &out) and its bytes come back in *result. A crash, a non-zero
 * exit or a run past timeout_ms (the child is killed) is reported in e, naming `what`.
 * fn returns 0 on success; on failure it puts its message in out (the parent reports it). */
typedef int (*fdt_child_fn)(void *arg, fdt_sb *out);
int fdt_run_in_child(const char *what, fdt_child_fn fn, void *arg, int timeout_ms,
                     char **result, size_t *result_len, fdt_err *e);

/* Runs fn(args[i]) for i < n in child processes, at most `parallel` at a time, each within
 * timeout_ms. For each job, results[i]/lens[i] receive its bytes (malloc'ed) or stay NULL
 * with errs[i] filled (failure, crash or timeout, naming what[i]). Returns the number of jobs
 * that failed, or -1 when no child could be started at all (e). */
int fdt_run_many(const char *const *what, fdt_child_fn fn, void *const *args, size_t n,
                 int parallel, int timeout_ms, char **results, size_t *lens, fdt_err *errs,
                 fdt_err *e);
/* Told how far a batch is: done of n jobs have ended (ok or not). */
typedef void (*fdt_done_fn)(void *ctx, size_t done, size_t n);
/* fdt_run_many, and on_done(ctx, done, n) (may be NULL) each time a job ends. */
int fdt_run_many_progress(const char *const *what, fdt_child_fn fn, void *const *args,
                          size_t n, int parallel, int timeout_ms, char **results, size_t *lens,
                          fdt_err *errs, fdt_done_fn on_done, void *ctx, fdt_err *e);
/* Asked while a batch runs: non-zero to give it up. */
typedef int (*fdt_cancel_fn)(void *ctx);
/* fdt_run_many_progress that gives up once cancelled(ctx) (may be NULL; asked at least every
 * 50 ms, from the calling thread) answers non-zero: no child starts after that, the running
 * ones are drained (waited for, so that each ends as it would have, cleaning up after itself,
 * and is reaped; their results are kept), and each job that never started fails with "WHAT:
 * cancelled" (on_done counts them ended, at once). Then it returns -1 with e "cancelled";
 * otherwise as fdt_run_many. on_done and cancelled both get ctx. */
int fdt_run_many_cancel(const char *const *what, fdt_child_fn fn, void *const *args, size_t n,
                        int parallel, int timeout_ms, char **results, size_t *lens,
                        fdt_err *errs, fdt_done_fn on_done, fdt_cancel_fn cancelled, void *ctx,
                        fdt_err *e);

/* Runs the program argv[0] (a path) with arguments argv (NULL-terminated), waits for it and
 * gathers what it wrote to stdout into out and to stderr into err (either may be NULL to
 * drop it). Returns 0 when it exited with status 0, else -1 with e saying how it ended. It is
 * meant for the isolated children above: the program is killed when the calling process dies
 * (a compile child killed for its time limit leaves no compiler behind). */
int fdt_exec(const char *const *argv, fdt_sb *out, fdt_sb *err, fdt_err *e);
/* ---- one pool of child processes for several processes ----
 * Alone, each fdt_run_many starts at most `parallel` children of its own. Once a process
 * shares a pool, it and the processes it forks afterwards start at most `slots` children of
 * fdt_run_many in all: each child holds a slot while it runs. A slot is a POSIX record lock
 * on one byte of an anonymous file, so the slots of a process that dies are free again at
 * once. A tuning run over several GPUs (one process per GPU) shares its CPU cores so. */
int fdt_child_pool_share(int slots, fdt_err *e);
/* The slots of the pool this process shares; 0 when it shares none. */
int fdt_child_pool_slots(void);
/* Leaves the pool (the processes forked before keep it). */
void fdt_child_pool_leave(void);

/* Monotonic wall clock in seconds. */
double fdt_now(void);

#endif
