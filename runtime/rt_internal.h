/* Private to the runtime module: the backend instances and shared helpers. */
#ifndef FDT_RT_INTERNAL_H
#define FDT_RT_INTERNAL_H

#include "fdt_rt.h"

#include <limits.h>

#ifdef FDTUNE_HAVE_CUDA
extern const fdt_rt_backend fdt_rt_cuda;
#endif
#ifdef FDTUNE_HAVE_HIP
extern const fdt_rt_backend fdt_rt_hip;
#endif
/* The host CPU (cpu.c), in every build. */
extern const fdt_rt_backend fdt_rt_cpu;

/* ---- the host CPU's facts (cpu_facts.c) ---- */

/* Describes the host CPU as this process may use it (its affinity mask): backend "cpu",
 * vendor and model name as the CPU reports them, arch its ISA level (x86-64-v2/v3/v4 from
 * cpuid, aarch64 or aarch64-sve from HWCAP), compute_units its physical cores, sockets,
 * hardware threads, NUMA nodes, SIMD ISA and vector bytes, L1d and L2 per core, the
 * last-level caches' total, memory, the CPUs' ids, and uuid "cpu-" + a hash of
 * /etc/machine-id (else the host name). Fails on a processor below x86-64-v2 or of another
 * architecture. */
int fdt_rt_cpu_describe(fdt_device *d, fdt_err *e);
/* The physical cores of the affinity mask (hardware threads of one core count once); the
 * first CPU id of each, in order, into first (may be NULL) up to max. */
int fdt_rt_cpu_cores(int *first, int max);
/* MemAvailable and MemTotal of /proc/meminfo, in bytes. */
int fdt_rt_cpu_meminfo(size_t *avail, size_t *total, fdt_err *e);

/* Simulated GPUs' compile-only stand-in (sim.c); outside the registry's list. */
extern const fdt_rt_backend fdt_rt_sim;

/* The amdgpu kernel driver, from the sysfs mounted at root ("/sys"): "amdgpu 6.10.5" where
 * the driver says its version (ROCm's DKMS driver writes module/amdgpu/version, the file
 * rocminfo reads for its "ROCk module version"); the kernel's own driver has none, so "amdgpu
 * in-tree (Linux <uname release>, srcversion <module/amdgpu/srcversion>)", without the
 * srcversion where amdgpu is built into the kernel; "amdgpu not loaded" without
 * module/amdgpu. Any of them differs from another driver's, so the environment changes. */
void fdt_rt_amdgpu_kernel_driver_at(const char *root, char *buf, size_t n);
/* fdt_rt_amdgpu_kernel_driver_at of /sys. */
void fdt_rt_amdgpu_kernel_driver(char *buf, size_t n);

/* ---- loading vendor libraries (dl.c), for every backend ---- */

typedef struct fdt_rt_dl {
    void *lib;           /* the dlopen handle; NULL when nothing loaded */
    char path[PATH_MAX]; /* the real path of the file loaded ("" when unknown) */
} fdt_rt_dl;

/* Opens the first of names (newest first, NULL-terminated) at the first of the nplaces places
 * that has one that loads: a place is a directory, or "" for the dynamic loader's own search
 * by bare name; NULL places (unset variables) and repeated ones are skipped. Fails with why
 * saying which names were looked for where, and which files exist but did not load. */
int fdt_rt_dl_open(const char *const *places, int nplaces, const char *const *names,
                   fdt_rt_dl *out, fdt_sb *why);
/* The first of names (bare sonames) that is loaded in this process already, e.g. as a
 * dependency of another library: the file that library uses; 0 when one is. */
int fdt_rt_dl_loaded(const char *const *names, fdt_rt_dl *out);
/* 1 when directory dir holds a file of one of names (loadable or not). */
int fdt_rt_dl_has(const char *dir, const char *const *names);
/* The real path of the loaded file that defines addr (dladdr); 0 when found. */
int fdt_rt_dl_path(const void *addr, char *buf, size_t n);
/* The version in a library file's name: "6.2.60200" for .../libhiprtc.so.6.2.60200, "" when
 * the name has none. */
void fdt_rt_dl_file_version(const char *path, char *buf, size_t n);
/* Appends "files <hash>" to out: a hash of the paths with their sizes and modification times,
 * so that a compiler's identity in the cache key changes when one of its files does. */
void fdt_rt_dl_files_id(fdt_sb *out, const char *const *paths, int n);

/* Runs the program argv (argv[0] a path) on a scratch copy of image named `name` (for the
 * disassemblers): an argument "@FILE" stands for the copy's path. Its stdout goes to out and
 * its stderr to err; the copy is removed. Fails with e saying "what: how it ended" and what
 * it wrote on stderr. */
int fdt_rt_run_on_image(const char *what, const char *const *argv, const char *name,
                        const char *image, size_t n, fdt_sb *out, fdt_sb *err, fdt_err *e);

/* Resolves the vendor-header prototype `name` from a dlopen'ed library into p_<name> (declared
 * with FDT_RT_DECL), or returns from the calling function with e saying that the library
 * `libname` (a variable in scope) lacks it; FDT_RT_WHAT, defined by the including file, names
 * the backend in the message. A header macro that renames a function (ROCm 6's
 * hipGetDeviceProperties -> hipGetDevicePropertiesR0600, CUDA's cuMemAlloc -> cuMemAlloc_v2)
 * gives the symbol looked up and the type, never the variable's name; so an alias of these
 * two must be object-like (#define SYM FDT_RT_SYM): a function-like wrapper would expand
 * `name` before it reaches them. */
#define FDT_RT_STR2(x) #x
#define FDT_RT_STR(x) FDT_RT_STR2(x)
#define FDT_RT_DECL(name) static __typeof__(&name) p_##name
#define FDT_RT_SYM(lib, name)                                                             \
    do {                                                                                  \
        *(void **)&p_##name = dlsym(lib, FDT_RT_STR(name));                               \
        if (!p_##name)                                                                    \
            return fdt_err_set(e, "%s: symbol %s missing in %s", FDT_RT_WHAT,             \
                               FDT_RT_STR(name), libname);                                \
    } while (0)

#ifdef FDTUNE_HAVE_HIP
/* ---- which ROCm (rocm.c): one per process, its HIP runtime, hiprtc and comgr ---- */

typedef enum { FDT_ROCM_RUNTIME, FDT_ROCM_HIPRTC, FDT_ROCM_COMGR } fdt_rt_rocm_lib;
/* The library directory of the ROCm fdtune runs against (rocm.c says how it is chosen) and,
 * in *from (may be NULL), which place it came from ("$ROCM_PATH", "the loader path"). */
int fdt_rt_rocm_libdir(char *buf, size_t n, const char **from, fdt_err *e);
/* Opens the HIP runtime or hiprtc of that ROCm (from its directory, none other), or comgr
 * (the one loaded already, else that ROCm's, else the first place's that has one). Fails
 * saying where it looked. */
int fdt_rt_rocm_open(fdt_rt_rocm_lib which, fdt_rt_dl *out, fdt_err *e);

/* ---- the HIP runtime (hip.c) ---- */

/* 1 when HIP error `code` (a hipError_t) leaves the device context unusable, so that the
 * worker must restart: a kernel that faulted or hung (hipErrorIllegalAddress,
 * hipErrorLaunchTimeOut, hipErrorAssert) and hipErrorLaunchFailure reported later (a
 * synchronisation reporting a failed kernel). 0 for the rest, hipErrorLaunchFailure from the
 * launch call itself (at_launch 1) included: clr answers a block above the kernel's launch
 * bounds with it before anything is queued, and that is the candidate's error alone. */
int fdt_rt_hip_error_lost(int code, int at_launch);

/* ---- AMD code objects (amd_code.c): comgr reads them, whichever compiler made them ---- */

/* Loads comgr (once): the code object metadata reader. */
int fdt_rt_comgr_load(fdt_err *e);
/* The loaded comgr's real path, and its version as "comgr 2.8" ("comgr" when it cannot say);
 * 0 when comgr is loaded. */
int fdt_rt_comgr_file(char *path, size_t pn, char *version, size_t vn);
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

/* The identity of the clang that compiles arch (each target goes to the first clang that
 * knows it), for the compile cache and the logs: version, path and options. */
int fdt_rt_amd_clang_id(const char *arch, char *buf, size_t n, fdt_err *e);
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
