/* The offline AMD compiler: clang with its lld, run as a program, for the targets hiprtc
 * cannot compile here (the hiprtc of ROCm < 5.6 refuses gfx94x and gfx11xx), and llvm-objdump
 * for the disassembly of any AMD code object. clang gets no ROCm header at all (-nogpuinc
 * -nostdinc) and no device library (-nogpulib): fdtune's hip/hip_runtime.h
 * (templates/amd_device.h) beside the source is everything it reads. The code object's
 * resources come from its metadata through the reader hiprtc's objects use (amd_code.c).
 *
 * Which clang, per target: FDTUNE_CLANG (a path or a name on $PATH) alone when it is set;
 * else the first of these that knows the target: clang-19 on $PATH (Debian 12's newest, which
 * knows gfx940, gfx941 and gfx942), clang-16 on $PATH (gfx940 but no gfx941/gfx942), ROCm's
 * llvm/bin/clang under $ROCM_PATH, under the install the loaded comgr comes from, under the
 * ROCm this build found and under /opt/rocm, else another clang-N on $PATH. A clang knows a
 * target when its --print-supported-cpus lists it (one that lists no AMD processor at all is
 * taken at its word and its compile error says). Its lld is the ld.lld in its own directory
 * (-B): Debian's default ld.lld may be older and not know the target. */
#include "fdt_gen.h"
#include "rt_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FDTUNE_ROCM_ROOT
#define FDTUNE_ROCM_ROOT "/opt/rocm"
#endif

/* Besides --offload-arch, -B and the files. Code object v5 is ROCm 6's and 7's default, the
 * toolchains of the GPUs this path stands in for (clang 16's own default is v4). */
static const char *const clang_options[] = {
    "-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc",
    "-nostdinc", "-O3", "-std=c++17", "-mcode-object-version=5", NULL};

/* Debian's clangs in the order they are preferred; the other versions come after ROCm's. */
static const int preferred_versions[] = {19, 16};
enum { NEWEST_VERSION = 22, MAX_CLANGS = 12 };

typedef struct llvm_install {
    int state;             /* 0 not probed yet, 1 usable, -1 not (why noted) */
    char label[PATH_MAX + 64]; /* how it was found, for messages */
    char path[PATH_MAX];   /* where it was found */
    char clang[PATH_MAX];  /* the real path of clang */
    char bindir[PATH_MAX]; /* its directory: ld.lld and llvm-objdump beside it */
    char version[160];     /* first line of `clang --version` */
    char cpus[2048];       /* " gfx900 gfx906 ... ": the AMD processors it lists, "" none */
} llvm_install;

/* The clangs that may compile, in the order they are preferred, found once per value of
 * FDTUNE_CLANG. */
static struct {
    int listed;            /* the candidates are known */
    char env[PATH_MAX];    /* FDTUNE_CLANG when they were found */
    int user;              /* 1: FDTUNE_CLANG chose the only one */
    int n;
    llvm_install c[MAX_CLANGS];
    char why[1500];        /* what was not found or does not do */
} llvm;

/* Adds what was tried and why it did not do to llvm.why. */
static void note(const char *fmt, ...) FDT_PRINTF(1, 2);
static void note(const char *fmt, ...)
{
    size_t u = strlen(llvm.why), n = sizeof llvm.why;
    if (u + 3 >= n)
        return;
    if (u) {
        snprintf(llvm.why + u, n - u, "; ");
        u += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(llvm.why + u, n - u, fmt, ap);
    va_end(ap);
}

/* Adds a clang at path as the next candidate (the same file found twice counts once). */
static void add_candidate(const char *path, const char *label)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        note("%s: not found", label);
        return;
    }
    for (int i = 0; i < llvm.n; i++)
        if (!strcmp(llvm.c[i].path, real))
            return;
    if (llvm.n == MAX_CLANGS)
        return;
    llvm_install *c = &llvm.c[llvm.n++];
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", real);
    snprintf(c->label, sizeof c->label, "%s", label);
}

static void add_named(const char *name, int say_missing)
{
    char path[PATH_MAX];
    if (fdt_find_program(name, path, sizeof path) == 0)
        add_candidate(path, path);
    else if (say_missing)
        note("%s: not on $PATH", name);
}

static void add_rocm(const char *root, const char *label)
{
    char path[PATH_MAX], lab[PATH_MAX + 64];
    if (!root || !*root)
        return;
    snprintf(path, sizeof path, "%s/llvm/bin/clang", root);
    snprintf(lab, sizeof lab, "%s (%s)", path, label);
    if (access(path, X_OK) == 0)
        add_candidate(path, lab);
    else if (!strstr(llvm.why, path)) /* the same root may come up twice */
        note("%s: not found", lab);
}

/* The candidates, in the order of the file's comment. */
static void list_candidates(void)
{
    const char *env = getenv("FDTUNE_CLANG");
    if (llvm.listed && !strcmp(llvm.env, env ? env : ""))
        return;
    memset(&llvm, 0, sizeof llvm);
    llvm.listed = 1;
    snprintf(llvm.env, sizeof llvm.env, "%s", env ? env : "");
    if (env && *env) { /* the user's choice: no other clang stands in for it */
        char path[PATH_MAX], label[PATH_MAX + 16];
        llvm.user = 1;
        snprintf(label, sizeof label, "FDTUNE_CLANG=%s", env);
        if (fdt_find_program(env, path, sizeof path) == 0)
            add_candidate(path, label);
        else
            note("%s: not an executable", label);
        return;
    }
    char name[16], root[PATH_MAX];
    fdt_err ce;
    for (size_t i = 0; i < sizeof preferred_versions / sizeof preferred_versions[0]; i++) {
        snprintf(name, sizeof name, "clang-%d", preferred_versions[i]);
        add_named(name, 1);
    }
    add_rocm(getenv("ROCM_PATH"), "$ROCM_PATH");
    if (fdt_rt_comgr_load(&ce) == 0 && fdt_rt_comgr_root(root, sizeof root) == 0)
        add_rocm(root, "where comgr is loaded from");
    add_rocm(FDTUNE_ROCM_ROOT, "the ROCm of this build");
    add_rocm("/opt/rocm", "the default ROCm");
    for (int v = 17; v <= NEWEST_VERSION; v++) {
        int preferred = 0;
        for (size_t i = 0; i < sizeof preferred_versions / sizeof preferred_versions[0]; i++)
            preferred |= preferred_versions[i] == v;
        snprintf(name, sizeof name, "clang-%d", v);
        if (!preferred)
            add_named(name, 0);
    }
}

/* The AMD processors clang lists (its --print-supported-cpus for amdgcn) into c->cpus as
 * " gfx900 gfx906 ... "; "" when it lists none or cannot say. */
static void list_cpus(llvm_install *c)
{
    const char *argv[] = {c->clang, "--target=amdgcn-amd-amdhsa", "-nogpulib",
                          "--print-supported-cpus", NULL};
    fdt_sb out, err;
    fdt_sb_init(&out);
    fdt_sb_init(&err);
    fdt_err e;
    c->cpus[0] = 0;
    if (fdt_exec(argv, &out, &err, &e) == 0) {
        fdt_sb_puts(&out, fdt_sb_str(&err)); /* LLVM prints the list on stderr */
        size_t u = 0;
        for (const char *s = fdt_sb_str(&out); *s;) {
            s += strspn(s, " \t\n");
            size_t len = strcspn(s, " \t\n");
            if (len > 3 && !strncmp(s, "gfx", 3) && u + len + 3 < sizeof c->cpus)
                u += (size_t)snprintf(c->cpus + u, sizeof c->cpus - u, "%s%.*s ", u ? "" : " ",
                                      (int)len, s);
            s += len;
        }
    }
    fdt_sb_free(&out);
    fdt_sb_free(&err);
}

/* Makes c usable when its clang runs, says its version and has ld.lld beside it. */
static int probe(llvm_install *c)
{
    if (c->state)
        return c->state > 0 ? 0 : -1;
    c->state = -1;
    char lld[PATH_MAX + 16];
    snprintf(c->clang, sizeof c->clang, "%s", c->path);
    snprintf(c->bindir, sizeof c->bindir, "%s", c->path);
    *strrchr(c->bindir, '/') = 0;
    snprintf(lld, sizeof lld, "%s/ld.lld", c->bindir);
    if (access(lld, X_OK) != 0) {
        note("%s: no ld.lld beside it in %s (install the lld of the same version, e.g. "
             "lld-19)", c->label, c->bindir);
        return -1;
    }
    const char *argv[] = {c->clang, "--version", NULL};
    fdt_sb out;
    fdt_sb_init(&out);
    fdt_err e;
    if (fdt_exec(argv, &out, NULL, &e)) {
        note("%s: %s", c->label, e.msg);
        fdt_sb_free(&out);
        return -1;
    }
    const char *v = fdt_sb_str(&out);
    snprintf(c->version, sizeof c->version, "%.*s", (int)strcspn(v, "\n"), v);
    fdt_sb_free(&out);
    list_cpus(c);
    c->state = 1;
    return 0;
}

/* Whether c's clang knows arch (its base name, without target features). */
static int knows(const llvm_install *c, const char *arch)
{
    char token[64];
    if (!c->cpus[0])
        return 1;
    snprintf(token, sizeof token, " %.*s ", fdtuned_arch_base_len(arch), arch);
    return strstr(c->cpus, token) != NULL;
}

/* The clang for arch: the first candidate that runs and knows it. */
static const llvm_install *find_llvm(const char *arch, fdt_err *e)
{
    list_candidates();
    int usable = 0;
    fdt_sb others;
    fdt_sb_init(&others);
    for (int i = 0; i < llvm.n; i++) {
        if (probe(&llvm.c[i]))
            continue;
        if (knows(&llvm.c[i], arch)) {
            fdt_sb_free(&others);
            return &llvm.c[i];
        }
        fdt_sb_printf(&others, "%s%s (%s)", usable++ ? ", " : "", llvm.c[i].version,
                      llvm.c[i].clang);
    }
    int base = fdtuned_arch_base_len(arch);
    if (usable)
        fdt_err_set(e, "no clang for AMD GPUs found that knows %.*s (%s %s not know it%s%s): %s",
                    base, arch, fdt_sb_str(&others), usable > 1 ? "do" : "does",
                    llvm.why[0] ? "; " : "", llvm.why,
                    llvm.user ? "set FDTUNE_CLANG to a clang that lists it in "
                                "--print-supported-cpus (ROCm's llvm/bin/clang; gfx941 and "
                                "gfx942 need LLVM 17 or later), or unset it"
                              : "install Debian's clang-19 and lld-19 (scripts/setup.sh does; "
                                "gfx941 and gfx942 need LLVM 17 or later), or set FDTUNE_CLANG "
                                "to a clang that knows it (ROCm's llvm/bin/clang)");
    else
        fdt_err_set(e, "no clang for AMD GPUs found (%s): install Debian's clang-19 and lld-19 "
                       "(scripts/setup.sh does), or set FDTUNE_CLANG to a clang with the AMDGPU "
                       "target (ROCm's llvm/bin/clang)", llvm.why);
    fdt_sb_free(&others);
    return NULL;
}

int fdt_rt_amd_clang_id(const char *arch, char *buf, size_t n, fdt_err *e)
{
    const llvm_install *c = find_llvm(arch, e);
    if (!c)
        return -1;
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_printf(&b, "%s (%s)", c->version, c->clang);
    for (int i = 0; clang_options[i]; i++)
        fdt_sb_printf(&b, " %s", clang_options[i]);
    snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
    return 0;
}

/* The clang command of c for dir/fdtune_kernel.hip -> out, for arch (args: its storage). */
static void clang_argv(const llvm_install *c, const char *dir, const char *arch, const char *out,
                       char args[4][PATH_MAX + 32], const char **argv)
{
    int n = 0;
    argv[n++] = c->clang;
    for (int i = 0; clang_options[i]; i++)
        argv[n++] = clang_options[i];
    snprintf(args[0], sizeof args[0], "--offload-arch=%s", arch);
    snprintf(args[1], sizeof args[1], "-B%s", c->bindir);
    snprintf(args[2], sizeof args[2], "-I%s", dir);
    snprintf(args[3], sizeof args[3], "%s/fdtune_kernel.hip", dir);
    for (int i = 0; i < 4; i++)
        argv[n++] = args[i];
    argv[n++] = "-c";
    argv[n++] = "-o";
    argv[n++] = out;
    argv[n] = NULL;
}

/* Writes the source and fdtune's hip/hip_runtime.h into dir. */
static int stage_source(const char *dir, const char *src, fdt_err *e)
{
    char path[PATH_MAX + 64];
    const char *hdr = fdt_gen_amd_hip_header();
    if (!hdr)
        return fdt_err_set(e, "hip: templates/amd_device.h is not embedded");
    snprintf(path, sizeof path, "%s/hip", dir);
    if (fdt_mkdirs(path, e))
        return -1;
    snprintf(path, sizeof path, "%s/hip/hip_runtime.h", dir);
    if (fdt_write_file(path, hdr, strlen(hdr), e))
        return -1;
    snprintf(path, sizeof path, "%s/fdtune_kernel.hip", dir);
    return fdt_write_file(path, src, strlen(src), e);
}

int fdt_rt_amd_clang_compile(const char *src, const char *kernel, const char *arch,
                             fdt_sb *image, fdt_sb *log, fdt_rt_resources *res, fdt_err *e)
{
    const llvm_install *c = find_llvm(arch, e);
    if (!c)
        return -1;
    char dir[PATH_MAX], out[PATH_MAX + 32], args[4][PATH_MAX + 32];
    if (fdt_scratch_dir("fdtune-clang", dir, sizeof dir, e))
        return -1;
    const char *argv[32];
    snprintf(out, sizeof out, "%s/fdtune_kernel.co", dir);
    clang_argv(c, dir, arch, out, args, argv);
    fdt_sb msgs;
    fdt_sb_init(&msgs);
    int rc = stage_source(dir, src, e);
    if (rc == 0 && fdt_exec(argv, NULL, &msgs, e)) {
        const char *m = fdt_sb_str(&msgs);
        char target[64];
        snprintf(target, sizeof target, "invalid target ID '%s'", arch);
        if (strstr(m, target))
            rc = fdt_err_set(e, "hip: %s (%s) does not know %s; LLVM 17 and later know gfx941 "
                                "and gfx942: set FDTUNE_CLANG to a clang that knows it (ROCm's "
                                "llvm/bin/clang, Debian's clang-19), or compile for a target it "
                                "knows", c->version, c->clang, arch);
        else
            rc = fdt_err_set(e, "hip: clang compilation for %s failed: %s\n%s", arch, e->msg, m);
    }
    fdt_sb_puts(log, fdt_sb_str(&msgs));
    fdt_sb_free(&msgs);
    char *obj = NULL;
    size_t n = 0;
    if (rc == 0 && fdt_read_file(out, &obj, &n, e) == 0) {
        fdt_sb_putn(image, obj, n);
        rc = fdt_rt_amd_resources(obj, n, kernel, res, e);
    } else if (rc == 0) {
        rc = -1;
    }
    free(obj);
    fdt_remove_tree(dir);
    return rc;
}

/* llvm-objdump for arch: beside the clang that compiles arch, else Debian's llvm-objdump-19
 * or llvm-objdump-16, else ROCm's. */
static int find_objdump(const char *arch, char *path, size_t n, fdt_err *e)
{
    fdt_err ignore;
    char root[PATH_MAX];
    const llvm_install *c = find_llvm(arch, &ignore);
    if (c) {
        snprintf(path, n, "%s/llvm-objdump", c->bindir);
        if (access(path, X_OK) == 0)
            return 0;
    }
    if (fdt_find_program("llvm-objdump-19", path, n) == 0 ||
        fdt_find_program("llvm-objdump-16", path, n) == 0)
        return 0;
    const char *roots[] = {getenv("ROCM_PATH"), NULL, FDTUNE_ROCM_ROOT, "/opt/rocm"};
    if (fdt_rt_comgr_load(&ignore) == 0 && fdt_rt_comgr_root(root, sizeof root) == 0)
        roots[1] = root;
    for (int i = 0; i < 4; i++) {
        if (!roots[i] || !*roots[i])
            continue;
        snprintf(path, n, "%s/llvm/bin/llvm-objdump", roots[i]);
        if (access(path, X_OK) == 0)
            return 0;
    }
    return fdt_err_set(e, "hip: llvm-objdump not found (not beside the clang in use, no "
                          "llvm-objdump-19 or llvm-objdump-16 on $PATH, none in ROCm's "
                          "llvm/bin): install Debian's llvm-19 (scripts/setup.sh does)");
}

/* Drops llvm-objdump's "<scratch path>:\tfile format ..." line, so that the text is the
 * same from run to run. */
static void drop_file_line(fdt_sb *out)
{
    const char *s = fdt_sb_str(out), *ff = strstr(s, "file format");
    if (!ff)
        return;
    const char *eol = strchr(ff, '\n');
    size_t cut = eol ? (size_t)(eol + 1 - s) : out->len;
    memmove(out->s, out->s + cut, out->len - cut + 1);
    out->len -= cut;
}

int fdt_rt_amd_disassemble(const char *img, size_t n, const char *arch, fdt_sb *out,
                           fdt_err *e)
{
    char tool[PATH_MAX], mcpu[96];
    if (find_objdump(arch, tool, sizeof tool, e))
        return -1;
    snprintf(mcpu, sizeof mcpu, "--mcpu=%.*s", (int)strcspn(arch, ":"), arch); /* no features */
    const char *argv[] = {tool, "-d", "--no-show-raw-insn", "--triple=amdgcn-amd-amdhsa", mcpu,
                          "@FILE", NULL};
    char what[128];
    snprintf(what, sizeof what, "hip: disassembly for %s failed", arch);
    fdt_sb err;
    fdt_sb_init(&err);
    int rc = fdt_rt_run_on_image(what, argv, "kernel.co", img, n, out, &err, e);
    if (rc == 0 && strstr(fdt_sb_str(&err), "not a recognized processor"))
        rc = fdt_err_set(e, "hip: %s does not know %s: %s", tool, arch, fdt_sb_str(&err));
    if (rc == 0)
        drop_file_line(out);
    fdt_sb_free(&err);
    return rc;
}
