/* The offline AMD compiler: clang with its lld, run as a program, for the targets hiprtc
 * cannot compile here (the hiprtc of ROCm < 5.6 refuses gfx94x and gfx11xx), and llvm-objdump
 * for the disassembly of any AMD code object. clang gets no ROCm header at all (-nogpuinc
 * -nostdinc) and no device library (-nogpulib): fdtune's hip/hip_runtime.h
 * (templates/amd_device.h) beside the source is everything it reads. The code object's
 * resources come from its metadata through the reader hiprtc's objects use (amd_code.c).
 *
 * Which clang: FDTUNE_CLANG (a path or a name on $PATH), else clang-16 on $PATH, else ROCm's
 * llvm/bin/clang under $ROCM_PATH, under the install the loaded comgr comes from, under the
 * ROCm this build found and under /opt/rocm, else a newer clang-N on $PATH. Its lld is the
 * ld.lld in its own directory (-B): Debian's default ld.lld may be older and not know the
 * target. */
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

typedef struct llvm_install {
    int state;             /* 0 not looked yet, 1 found, -1 not found (why) */
    char clang[PATH_MAX];  /* the real path of clang */
    char bindir[PATH_MAX]; /* its directory: ld.lld and llvm-objdump beside it */
    char version[160];     /* first line of `clang --version` */
    char why[1500];        /* what was tried, when not found */
} llvm_install;

static llvm_install llvm;

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

/* Takes the clang at path when it runs, says its version and has ld.lld beside it. */
static int try_clang(const char *path, const char *label)
{
    char real[PATH_MAX];
    if (!realpath(path, real)) {
        note("%s: not found", label);
        return -1;
    }
    char lld[PATH_MAX + 16];
    snprintf(llvm.bindir, sizeof llvm.bindir, "%s", real);
    char *slash = strrchr(llvm.bindir, '/');
    *slash = 0;
    snprintf(lld, sizeof lld, "%s/ld.lld", llvm.bindir);
    if (access(lld, X_OK) != 0) {
        note("%s: no ld.lld beside it in %s (install the lld of the same version, e.g. "
             "lld-16)", label, llvm.bindir);
        return -1;
    }
    const char *argv[] = {real, "--version", NULL};
    fdt_sb out;
    fdt_sb_init(&out);
    fdt_err e;
    if (fdt_exec(argv, &out, NULL, &e)) {
        note("%s: %s", label, e.msg);
        fdt_sb_free(&out);
        return -1;
    }
    const char *v = fdt_sb_str(&out);
    snprintf(llvm.version, sizeof llvm.version, "%.*s", (int)strcspn(v, "\n"), v);
    fdt_sb_free(&out);
    snprintf(llvm.clang, sizeof llvm.clang, "%s", real);
    return 0;
}

static int try_rocm(const char *root, const char *label)
{
    char path[PATH_MAX], lab[PATH_MAX + 64];
    if (!root || !*root)
        return -1;
    snprintf(path, sizeof path, "%s/llvm/bin/clang", root);
    snprintf(lab, sizeof lab, "%s (%s)", path, label);
    if (access(path, X_OK) == 0)
        return try_clang(path, lab);
    if (!strstr(llvm.why, path)) /* the same root may come up twice */
        note("%s: not found", lab);
    return -1;
}

static int find_llvm(fdt_err *e)
{
    if (llvm.state == 0) {
        char path[PATH_MAX], root[PATH_MAX], label[PATH_MAX + 16];
        const char *env = getenv("FDTUNE_CLANG");
        fdt_err ce;
        int ok = -1;
        if (env && *env) { /* the user's choice: no other clang stands in for it */
            snprintf(label, sizeof label, "FDTUNE_CLANG=%s", env);
            if (fdt_find_program(env, path, sizeof path) == 0)
                ok = try_clang(path, label);
            else
                note("%s: not an executable", label);
        } else {
            if (fdt_find_program("clang-16", path, sizeof path) == 0)
                ok = try_clang(path, path);
            else
                note("clang-16: not on $PATH");
            if (ok)
                ok = try_rocm(getenv("ROCM_PATH"), "$ROCM_PATH");
            if (ok && fdt_rt_comgr_load(&ce) == 0 && fdt_rt_comgr_root(root, sizeof root) == 0)
                ok = try_rocm(root, "where comgr is loaded from");
            if (ok)
                ok = try_rocm(FDTUNE_ROCM_ROOT, "the ROCm of this build");
            if (ok)
                ok = try_rocm("/opt/rocm", "the default ROCm");
            for (int v = 17; ok && v <= 22; v++) {
                char name[16];
                snprintf(name, sizeof name, "clang-%d", v);
                if (fdt_find_program(name, path, sizeof path) == 0)
                    ok = try_clang(path, path);
            }
        }
        llvm.state = ok ? -1 : 1;
    }
    if (llvm.state < 0)
        return fdt_err_set(e, "no clang for AMD GPUs found (%s): install Debian's clang-16 and "
                              "lld-16 (scripts/setup.sh does), or set FDTUNE_CLANG to a clang "
                              "with the AMDGPU target (ROCm's llvm/bin/clang)", llvm.why);
    return 0;
}

int fdt_rt_amd_clang_id(char *buf, size_t n, fdt_err *e)
{
    if (find_llvm(e))
        return -1;
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_printf(&b, "%s (%s)", llvm.version, llvm.clang);
    for (int i = 0; clang_options[i]; i++)
        fdt_sb_printf(&b, " %s", clang_options[i]);
    snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
    return 0;
}

/* The clang command for dir/fdtune_kernel.hip -> out, for arch (args: its storage). */
static void clang_argv(const char *dir, const char *arch, const char *out,
                       char args[4][PATH_MAX + 32], const char **argv)
{
    int n = 0;
    argv[n++] = llvm.clang;
    for (int i = 0; clang_options[i]; i++)
        argv[n++] = clang_options[i];
    snprintf(args[0], sizeof args[0], "--offload-arch=%s", arch);
    snprintf(args[1], sizeof args[1], "-B%s", llvm.bindir);
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
    if (find_llvm(e))
        return -1;
    char dir[PATH_MAX], out[PATH_MAX + 32], args[4][PATH_MAX + 32];
    if (fdt_scratch_dir("fdtune-clang", dir, sizeof dir, e))
        return -1;
    const char *argv[32];
    snprintf(out, sizeof out, "%s/fdtune_kernel.co", dir);
    clang_argv(dir, arch, out, args, argv);
    fdt_sb msgs;
    fdt_sb_init(&msgs);
    int rc = stage_source(dir, src, e);
    if (rc == 0 && fdt_exec(argv, NULL, &msgs, e)) {
        const char *m = fdt_sb_str(&msgs);
        char target[64];
        snprintf(target, sizeof target, "invalid target ID '%s'", arch);
        if (strstr(m, target))
            rc = fdt_err_set(e, "hip: %s (%s) does not know %s; LLVM 17 and later do: set "
                                "FDTUNE_CLANG to a newer clang (ROCm's llvm/bin/clang), or "
                                "compile for a target it knows (gfx940 stands for the MI300 "
                                "instruction set)", llvm.version, llvm.clang, arch);
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

/* llvm-objdump: beside the clang in use, else Debian's llvm-objdump-16, else ROCm's. */
static int find_objdump(char *path, size_t n, fdt_err *e)
{
    fdt_err ignore;
    char root[PATH_MAX];
    if (find_llvm(&ignore) == 0) {
        snprintf(path, n, "%s/llvm-objdump", llvm.bindir);
        if (access(path, X_OK) == 0)
            return 0;
    }
    if (fdt_find_program("llvm-objdump-16", path, n) == 0)
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
                          "llvm-objdump-16 on $PATH, none in ROCm's llvm/bin): install Debian's "
                          "llvm-16 (scripts/setup.sh does)");
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
    if (find_objdump(tool, sizeof tool, e))
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
