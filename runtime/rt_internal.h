/* Private to the runtime module: the backend instances and shared helpers. */
#ifndef FDT_RT_INTERNAL_H
#define FDT_RT_INTERNAL_H

#include "fdt_rt.h"

#ifdef FDTUNE_HAVE_CUDA
extern const fdt_rt_backend fdt_rt_cuda;
#endif
#ifdef FDTUNE_HAVE_HIP
extern const fdt_rt_backend fdt_rt_hip;
#endif
/* Simulated GPUs' compile-only stand-in (sim.c); outside the registry's list. */
extern const fdt_rt_backend fdt_rt_sim;

/* The NVIDIA kernel-module version (e.g. "580.159.04") from /proc, or "unknown". */
void fdt_rt_nvidia_kernel_driver(char *buf, size_t n);

/* Runs the program argv (argv[0] a path) on a scratch copy of image named `name` (for the
 * disassemblers): an argument "@FILE" stands for the copy's path. Its stdout goes to out and
 * its stderr to err; the copy is removed. Fails with e saying "what: how it ended" and what
 * it wrote on stderr. */
int fdt_rt_run_on_image(const char *what, const char *const *argv, const char *name,
                        const char *image, size_t n, fdt_sb *out, fdt_sb *err, fdt_err *e);

/* Resolves the vendor-header prototype `name` from a dlopen'ed library into p_<name> (declared
 * with FDT_RT_DECL), or returns from the calling function with e saying which library lacks it. */
#define FDT_RT_STR2(x) #x
#define FDT_RT_STR(x) FDT_RT_STR2(x)
#define FDT_RT_DECL(name) static __typeof__(&name) p_##name
#define FDT_RT_SYM(lib, name, libname, what)                                              \
    do {                                                                                  \
        *(void **)&p_##name = dlsym(lib, FDT_RT_STR(name));                               \
        if (!p_##name)                                                                    \
            return fdt_err_set(e, "%s: symbol %s missing in %s", what, FDT_RT_STR(name),   \
                               libname);                                                  \
    } while (0)

#ifdef FDTUNE_HAVE_HIP
/* ---- AMD code objects (amd_code.c): comgr reads them, whichever compiler made them ---- */

/* Loads comgr (once): the code object metadata reader. */
int fdt_rt_comgr_load(fdt_err *e);
/* Fills res from the metadata note of `kernel` in an AMD code object (ELF): VGPRs, SGPRs,
 * AGPRs, VGPR spills to memory (bytes of spill stores; none without scratch), SGPR spills (to
 * VGPR lanes, a count), private segment (scratch), group segment (LDS) and the largest block
 * the code allows. Fails when
 * comgr is missing, the object is unreadable or has no such kernel. */
int fdt_rt_amd_resources(const char *obj, size_t n, const char *kernel, fdt_rt_resources *res,
                         fdt_err *e);
/* The amdgcn code object inside a clang offload bundle (what hiprtc of ROCm >= 5.6 returns);
 * the image itself when it is not a bundle. -1: a malformed bundle. */
int fdt_rt_amd_unbundle(const char *img, size_t n, const char **obj, size_t *objn);
/* Where the loaded comgr library lives, as the root of its ROCm install ("/opt/rocm-6.2.0"
 * for /opt/rocm-6.2.0/lib/libamd_comgr.so.2); 0 when comgr is loaded and the path is known. */
int fdt_rt_comgr_root(char *buf, size_t n);

/* ---- the offline AMD compiler (amd_clang.c): clang + lld, for what hiprtc cannot compile ---- */

/* The compiler's identity for the compile cache and the logs: version, path and options. */
int fdt_rt_amd_clang_id(char *buf, size_t n, fdt_err *e);
/* Compiles src for arch in a scratch directory (fdtune's hip/hip_runtime.h beside it) into a
 * code object, with clang's messages in log and the resources from the code object. Runs clang
 * as a program: call it inside a compile child. */
int fdt_rt_amd_clang_compile(const char *src, const char *kernel, const char *arch,
                             fdt_sb *image, fdt_sb *log, fdt_rt_resources *res, fdt_err *e);
/* llvm-objdump's disassembly of an AMD code object for arch (a program: call it in a child). */
int fdt_rt_amd_disassemble(const char *img, size_t n, const char *arch, fdt_sb *out,
                           fdt_err *e);
#endif

#endif
