/* Compilation isolated in a child process, with an on-disk cache. The child runs the
 * vendor compiler and sends back the packed result; a crash or a hang there becomes an
 * error here. Disassembly of compiled code runs in a child the same way. Cache entries hold their whole key (backend, arch, kernel, compiler version,
 * options, source) and are verified on read, so a file-name hash collision costs only a
 * recompile. */
#include "rt_internal.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PACK_MAGIC "FDTCODE1"

void fdt_rt_code_free(fdt_rt_code *c)
{
    free(c->image);
    free(c->log);
    memset(c, 0, sizeof *c);
}

static void put_u64(fdt_sb *b, uint64_t v) { fdt_sb_putn(b, (const char *)&v, 8); }

int fdt_rt_code_pack(const fdt_rt_code *c, fdt_sb *out)
{
    fdt_sb_puts(out, PACK_MAGIC);
    put_u64(out, sizeof c->res);
    fdt_sb_putn(out, (const char *)&c->res, sizeof c->res);
    size_t ln = c->log ? strlen(c->log) : 0;
    put_u64(out, ln);
    fdt_sb_putn(out, c->log ? c->log : "", ln);
    put_u64(out, c->size);
    fdt_sb_putn(out, c->image, c->size);
    return out->oom ? -1 : 0;
}

int fdt_rt_code_unpack(const char *data, size_t n, fdt_rt_code *c, fdt_err *e)
{
    memset(c, 0, sizeof *c);
    size_t p = strlen(PACK_MAGIC);
    uint64_t len;
    if (n < p + 8 || memcmp(data, PACK_MAGIC, p))
        return fdt_err_set(e, "compiled code: bad header");
    /* a truncated record frees what was taken before it (c->log): callers see no code */
#define TAKE_LEN()                                                                 \
    do {                                                                           \
        if (p + 8 > n || (memcpy(&len, data + p, 8), len > n - p - 8)) {           \
            fdt_rt_code_free(c);                                                   \
            return fdt_err_set(e, "compiled code: truncated");                     \
        }                                                                          \
        p += 8;                                                                    \
    } while (0)
    TAKE_LEN();
    if (len != sizeof c->res)
        return fdt_err_set(e, "compiled code: written by another fdtune build");
    memcpy(&c->res, data + p, len);
    p += len;
    TAKE_LEN();
    c->log = malloc(len + 1);
    if (!c->log)
        return fdt_err_set(e, "compiled code: out of memory");
    memcpy(c->log, data + p, len);
    c->log[len] = 0;
    p += len;
    TAKE_LEN();
    c->image = malloc(len ? len : 1);
    if (!c->image) {
        fdt_rt_code_free(c);
        return fdt_err_set(e, "compiled code: out of memory");
    }
    memcpy(c->image, data + p, len);
    c->size = len;
#undef TAKE_LEN
    return 0;
}

void fdt_rt_parse_ptxas(const char *log, const char *kernel, fdt_rt_resources *res)
{
    char marker[256];
    snprintf(marker, sizeof marker, "Compiling entry function '%s'", kernel);
    const char *p = strstr(log, marker);
    if (!p)
        p = log; /* one kernel per program: fall back to the first report */
    const char *q;
    /* Numbers precede their labels: walk back from each label to its number. */
    struct {
        const char *label;
        int *dst;
    } items[] = {{" registers", &res->registers},
                 {" bytes stack frame", &res->scratch_bytes},
                 {" bytes spill stores", &res->spill_bytes},
                 {" bytes smem", &res->shared_bytes}};
    for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
        q = strstr(p, items[i].label);
        if (!q)
            continue;
        const char *s = q;
        while (s > p && s[-1] >= '0' && s[-1] <= '9')
            s--;
        if (s < q)
            *items[i].dst = atoi(s);
    }
    if (res->shared_bytes < 0 && res->registers >= 0)
        res->shared_bytes = 0; /* ptxas omits "smem" when there is none */
}

const char *fdt_rt_cache_dir(void)
{
    static char dir[1024];
    const char *env = getenv("FDTUNE_CACHE");
    if (env)
        return *env ? env : NULL;
    if (!dir[0]) {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(dir, sizeof dir, "%s/fdtune/kernels", xdg);
        else if (home && *home)
            snprintf(dir, sizeof dir, "%s/.cache/fdtune/kernels", home);
        else
            return NULL;
    }
    return dir;
}

typedef struct compile_job {
    const fdt_rt_backend *b;
    const char *src, *kernel, *arch;
} compile_job;

static int compile_child(void *arg, fdt_sb *out)
{
    const compile_job *j = arg;
    fdt_sb image, log;
    fdt_sb_init(&image);
    fdt_sb_init(&log);
    fdt_rt_code c = {0};
    c.res = (fdt_rt_resources){-1, -1, -1, -1, -1, -1, -1, -1, -1};
    fdt_err e;
    if (j->b->compile(j->src, j->kernel, j->arch, &image, &log, &c.res, &e)) {
        fdt_sb_puts(out, e.msg);
        return -1;
    }
    c.image = image.s;
    c.size = image.len;
    long code = fdt_rt_elf_code_bytes(image.s, image.len);
    c.res.code_bytes = code > INT32_MAX ? INT32_MAX : (int)code;
    c.log = (char *)fdt_sb_str(&log);
    return fdt_rt_code_pack(&c, out);
}

/* The whole key as text; the file name is its hash. */
static char *cache_key(const fdt_rt_backend *b, const char *src, const char *kernel,
                       const char *arch, const char *compiler)
{
    fdt_sb k;
    fdt_sb_init(&k);
    fdt_sb_printf(&k, "backend=%s\narch=%s\nkernel=%s\ncompiler=%s\noptions=%s\nsource=%zu\n",
                  b->name, arch, kernel, compiler, b->options, strlen(src));
    fdt_sb_puts(&k, src);
    return fdt_sb_take(&k);
}

static int cache_lookup(const char *path, const char *key, fdt_rt_code *out)
{
    char *data;
    size_t n;
    fdt_err e;
    if (fdt_read_file(path, &data, &n, &e))
        return -1;
    size_t kl = strlen(key);
    int rc = -1;
    if (n > kl + 1 && !memcmp(data, key, kl) && data[kl] == 0)
        rc = fdt_rt_code_unpack(data + kl + 1, n - kl - 1, out, &e);
    free(data);
    return rc;
}

static void cache_store(const char *dir, const char *path, const char *key, const fdt_rt_code *c)
{
    fdt_err e;
    if (fdt_mkdirs(dir, &e))
        return;
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_putn(&b, key, strlen(key) + 1);
    fdt_rt_code_pack(c, &b);
    if (!b.oom)
        fdt_write_file_atomic(path, b.s, b.len, &e); /* best effort: a cache miss next time */
    fdt_sb_free(&b);
}

int fdt_rt_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int fdt_rt_compile_many(const fdt_rt_backend *b, const char *arch, fdt_rt_job *jobs, size_t n,
                        int parallel, int timeout_ms, fdt_err *e)
{
    return fdt_rt_compile_many_progress(b, arch, jobs, n, parallel, timeout_ms, NULL, NULL, e);
}

/* The pool's count of ended compilations, offset by the jobs the cache answered. */
typedef struct batch_progress {
    fdt_done_fn fn;
    fdt_cancel_fn cancelled;
    void *ctx;
    size_t cached, n;
} batch_progress;

static int pool_cancelled(void *ctx)
{
    batch_progress *bp = ctx;
    return bp->cancelled(bp->ctx);
}

static void pool_done(void *ctx, size_t done, size_t n)
{
    (void)n;
    batch_progress *bp = ctx;
    bp->fn(bp->ctx, bp->cached + done, bp->n);
}

int fdt_rt_compile_many_progress(const fdt_rt_backend *b, const char *arch, fdt_rt_job *jobs,
                                 size_t n, int parallel, int timeout_ms, fdt_done_fn on_done,
                                 void *ctx, fdt_err *e)
{
    return fdt_rt_compile_many_cancel(b, arch, jobs, n, parallel, timeout_ms, on_done, NULL,
                                      ctx, e);
}

int fdt_rt_compile_many_cancel(const fdt_rt_backend *b, const char *arch, fdt_rt_job *jobs,
                               size_t n, int parallel, int timeout_ms, fdt_done_fn on_done,
                               fdt_cancel_fn cancelled, void *ctx, fdt_err *e)
{
    char compiler[1024];
    if (b->compiler_id ? b->compiler_id(arch, compiler, sizeof compiler, e)
                       : b->compiler_version(compiler, sizeof compiler, e))
        return -1;
    const char *dir = b->uncached ? NULL : fdt_rt_cache_dir();
    /* per job: cache key and path; misses go to the pool */
    char **keys = calloc(n ? n : 1, sizeof *keys), (*paths)[1200] = calloc(n ? n : 1, sizeof *paths);
    size_t *miss = calloc(n ? n : 1, sizeof *miss), nmiss = 0;
    compile_job *cj = calloc(n ? n : 1, sizeof *cj);
    void **args = calloc(n ? n : 1, sizeof *args);
    const char **what = calloc(n ? n : 1, sizeof *what);
    char **whatbuf = calloc(n ? n : 1, sizeof *whatbuf);
    char **res = calloc(n ? n : 1, sizeof *res);
    size_t *lens = calloc(n ? n : 1, sizeof *lens);
    fdt_err *errs = calloc(n ? n : 1, sizeof *errs);
    int failures = 0;
    if (!keys || !paths || !miss || !cj || !args || !what || !whatbuf || !res || !lens || !errs) {
        failures = fdt_err_set(e, "compile: out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        memset(&jobs[i].code, 0, sizeof jobs[i].code);
        jobs[i].rc = 0;
        jobs[i].err.msg[0] = 0;
        jobs[i].seconds = 0;
        if (dir) {
            keys[i] = cache_key(b, jobs[i].src, jobs[i].kernel, arch, compiler);
            snprintf(paths[i], sizeof paths[i], "%s/%016llx.bin", dir,
                     (unsigned long long)fdt_hash64_str(keys[i], FDT_HASH_SEED));
            if (cache_lookup(paths[i], keys[i], &jobs[i].code) == 0) {
                jobs[i].code.cached = 1;
                continue;
            }
        }
        cj[nmiss] = (compile_job){b, jobs[i].src, jobs[i].kernel, arch};
        args[nmiss] = &cj[nmiss];
        whatbuf[nmiss] = malloc(160);
        if (whatbuf[nmiss])
            snprintf(whatbuf[nmiss], 160, "%s compile of %s for %s", b->name, jobs[i].kernel,
                     arch);
        what[nmiss] = whatbuf[nmiss] ? whatbuf[nmiss] : "compile";
        miss[nmiss++] = i;
    }
    batch_progress bp = {on_done, cancelled, ctx, n - nmiss, n};
    if (on_done)
        on_done(ctx, n - nmiss, n);
    if (nmiss) {
        double t0 = fdt_now();
        int r = fdt_run_many_cancel(what, compile_child, args, nmiss, parallel, timeout_ms, res,
                                    lens, errs, on_done ? pool_done : NULL,
                                    cancelled ? pool_cancelled : NULL, &bp, e);
        if (r < 0) { /* nothing could start, or cancelled: no job holds code */
            for (size_t i = 0; i < n; i++)
                fdt_rt_code_free(&jobs[i].code);
            failures = -1;
            goto done;
        }
        double per = (fdt_now() - t0) * (parallel < (int)nmiss ? parallel : (int)nmiss) / nmiss;
        for (size_t m = 0; m < nmiss; m++) {
            fdt_rt_job *j = &jobs[miss[m]];
            j->seconds = per; /* children run side by side: an average share */
            if (!res[m]) {
                j->rc = -1;
                j->err = errs[m];
                failures++;
                continue;
            }
            if (fdt_rt_code_unpack(res[m], lens[m], &j->code, &j->err)) {
                j->rc = -1;
                failures++;
                continue;
            }
            if (dir)
                cache_store(dir, paths[miss[m]], keys[miss[m]], &j->code);
        }
    }
done:
    for (size_t i = 0; keys && i < n; i++)
        free(keys[i]);
    for (size_t m = 0; whatbuf && m < nmiss; m++)
        free(whatbuf[m]);
    for (size_t m = 0; res && m < nmiss; m++)
        free(res[m]);
    free(keys);
    free(paths);
    free(miss);
    free(cj);
    free(args);
    free(what);
    free(whatbuf);
    free(res);
    free(lens);
    free(errs);
    return failures;
}

int fdt_rt_compile(const fdt_rt_backend *b, const char *src, const char *kernel, const char *arch,
                   int timeout_ms, fdt_rt_code *out, fdt_err *e)
{
    fdt_rt_job j = {.src = src, .kernel = kernel};
    int r = fdt_rt_compile_many(b, arch, &j, 1, 1, timeout_ms, e);
    if (r < 0)
        return -1;
    if (j.rc) {
        *e = j.err;
        return -1;
    }
    *out = j.code;
    return 0;
}

typedef struct disasm_job {
    const fdt_rt_backend *b;
    const fdt_rt_code *c;
    const char *arch;
} disasm_job;

static int disasm_child(void *arg, fdt_sb *out)
{
    const disasm_job *j = arg;
    fdt_err e;
    fdt_sb text;
    fdt_sb_init(&text);
    int rc = j->b->disassemble(j->c->image, j->c->size, j->arch, &text, &e);
    fdt_sb_puts(out, rc ? e.msg : fdt_sb_str(&text));
    fdt_sb_free(&text);
    return rc || out->oom ? -1 : 0;
}

int fdt_rt_disassemble(const fdt_rt_backend *b, const fdt_rt_code *c, const char *arch,
                       int timeout_ms, fdt_sb *out, fdt_err *e)
{
    if (!b->disassemble)
        return fdt_err_set(e, "%s: no disassembler for this backend", b->name);
    disasm_job j = {b, c, arch};
    char what[128], *text;
    size_t n;
    snprintf(what, sizeof what, "disassembly for %s", arch);
    if (fdt_run_in_child(what, disasm_child, &j, timeout_ms, &text, &n, e))
        return -1;
    fdt_sb_putn(out, text, n);
    free(text);
    return 0;
}

int fdt_rt_run_on_image(const char *what, const char *const *argv, const char *name,
                        const char *image, size_t n, fdt_sb *out, fdt_sb *err, fdt_err *e)
{
    char dir[1024], file[1200];
    const char *args[32];
    size_t k = 0;
    if (fdt_scratch_dir("fdtune-tool", dir, sizeof dir, e))
        return -1;
    snprintf(file, sizeof file, "%s/%s", dir, name);
    for (; argv[k] && k < 31; k++)
        args[k] = strcmp(argv[k], "@FILE") ? argv[k] : file;
    args[k] = NULL;
    int rc = fdt_write_file(file, image, n, e);
    if (rc == 0 && fdt_exec(args, out, err, e))
        rc = fdt_err_set(e, "%s: %s\n%s", what, e->msg, fdt_sb_str(err));
    fdt_remove_tree(dir);
    return rc;
}
