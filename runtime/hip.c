/* AMD backend: the HIP runtime (libamdhip64), hiprtc (its own library from ROCm 5.6, inside
 * libamdhip64 before) and comgr for the code object's metadata (VGPRs, SGPRs, spills, LDS,
 * scratch; amd_code.c), all dlopen'ed with the prototypes of the vendor headers, from one
 * ROCm (rocm.c says which and how). ROCm's own version reports do not identify it: hiprtcVersion
 * says 9.0 in every ROCm since 5.6 and hipDriverGetVersion the HIP version, so the compiler's
 * identity is the hiprtc file's version, comgr's version and the files themselves, and the
 * driver is the amdgpu kernel driver's. hiprtc from ROCm 5.2 (Debian 12) compiles for
 * gfx900/906/908/90a/1030 and crashes on newer targets: those go to the offline clang
 * (amd_clang.c) instead. Either compiler gets fdtune's own hip/hip_runtime.h
 * (templates/amd_device.h), so no ROCm header has to be found; compilation runs in a child
 * process in any case. */
#define __HIP_PLATFORM_AMD__ 1
#include "fdt_gen.h"
#include "fdt_rt.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FDT_RT_WHAT "hip"
#define DECL FDT_RT_DECL
#define SYM FDT_RT_SYM

/* ---------------------------------------------------------------- hiprtc */

#define HIP_OPTIONS "-O3", "-std=c++17"
#define HIP_OPTIONS_TEXT "-O3 -std=c++17"
/* Options appended to fdtune's, whitespace-separated (diagnostics: -nostdinc shows that the
 * source needs no system header); part of the compile cache key. */
#define HIPRTC_OPTIONS_ENV "FDTUNE_HIPRTC_OPTIONS"
#define HIPRTC_EXTRA_MAX 16

static void *rtc_lib;
static int rtc_legacy; /* hiprtc inside libamdhip64 (ROCm < 5.6): crashes on newer targets */
static char rtc_path[PATH_MAX]; /* the file hiprtc is in */
DECL(hiprtcCreateProgram);
DECL(hiprtcCompileProgram);
DECL(hiprtcGetProgramLogSize);
DECL(hiprtcGetProgramLog);
DECL(hiprtcGetCodeSize);
DECL(hiprtcGetCode);
DECL(hiprtcDestroyProgram);
DECL(hiprtcGetErrorString);
DECL(hiprtcVersion);

/* hiprtc of the ROCm fdtune runs against: libhiprtc, else (ROCm < 5.6) the runtime library
 * when hiprtc is inside it; then comgr. */
static int load_rtc(fdt_err *e)
{
    if (rtc_lib)
        return 0;
    fdt_rt_dl d;
    fdt_err why;
    int legacy = 0;
    if (fdt_rt_rocm_open(FDT_ROCM_HIPRTC, &d, &why)) {
        fdt_err re;
        if (fdt_rt_rocm_open(FDT_ROCM_RUNTIME, &d, &re) || !dlsym(d.lib, "hiprtcCreateProgram"))
            return fdt_err_set(e, "hip: hiprtc not found (%s); install ROCm or Debian's "
                                  "libamdhip64-dev", why.msg);
        legacy = 1;
    }
    void *lib = d.lib;
    const char *libname = d.path;
    SYM(lib, hiprtcCreateProgram);
    SYM(lib, hiprtcCompileProgram);
    SYM(lib, hiprtcGetProgramLogSize);
    SYM(lib, hiprtcGetProgramLog);
    SYM(lib, hiprtcGetCodeSize);
    SYM(lib, hiprtcGetCode);
    SYM(lib, hiprtcDestroyProgram);
    SYM(lib, hiprtcGetErrorString);
    SYM(lib, hiprtcVersion);
    if (fdt_rt_comgr_load(e))
        return -1;
    snprintf(rtc_path, sizeof rtc_path, "%s", d.path);
    rtc_legacy = legacy;
    rtc_lib = lib;
    return 0;
}

/* The directory of a file's path (its length). */
static int dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (int)(slash - path) : 0;
}

/* "hiprtc 6.2.60200, comgr 2.8": the hiprtc file's version (hiprtcVersion says 9.0 in every
 * ROCm since 5.6), "(in libamdhip64)" for ROCm < 5.6, and comgr's version; with dirs, the
 * directories of the two files after it ("(/opt/rocm-6.2.0/lib)" when they are one). */
static int rtc_describe(int dirs, char *buf, size_t n, fdt_err *e)
{
    if (load_rtc(e))
        return -1;
    char ver[64], cpath[PATH_MAX], cver[32] = "comgr";
    fdt_rt_dl_file_version(rtc_path, ver, sizeof ver);
    if (fdt_rt_comgr_file(cpath, sizeof cpath, cver, sizeof cver))
        cpath[0] = 0;
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_printf(&b, "hiprtc%s%s%s, %s", *ver ? " " : "", ver,
                  rtc_legacy ? " (in libamdhip64)" : "", cver);
    int rl = dir_len(rtc_path), cl = dir_len(cpath);
    if (dirs && rl == cl && !strncmp(rtc_path, cpath, (size_t)rl))
        fdt_sb_printf(&b, " (%.*s)", rl, rtc_path);
    else if (dirs)
        fdt_sb_printf(&b, " (%.*s, %.*s)", rl, rtc_path, cl, cpath);
    snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
    return 0;
}

static int hip_compiler_version(char *buf, size_t n, fdt_err *e)
{
    return rtc_describe(0, buf, n, e);
}

/* Targets the legacy hiprtc handles (checked on Debian 12's ROCm 5.2.3). */
static int legacy_target_ok(const char *arch)
{
    static const char *const ok[] = {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", NULL};
    size_t base = (size_t)fdtuned_arch_base_len(arch);
    for (int i = 0; ok[i]; i++)
        if (strlen(ok[i]) == base && !strncmp(ok[i], arch, base))
            return 1;
    return 0;
}

/* Which compiler takes arch: hiprtc where it is loaded and can compile the target, else the
 * offline clang. Returns 1 for clang with *why saying why hiprtc does not (for messages). */
static int takes_clang(const char *arch, char *why, size_t n)
{
    fdt_err e;
    if (load_rtc(&e)) {
        snprintf(why, n, "%s", e.msg);
        return 1;
    }
    if (rtc_legacy && !legacy_target_ok(arch)) {
        snprintf(why, n, "the hiprtc in libamdhip64 (ROCm < 5.6) cannot compile for %s (it "
                         "crashes; it supports gfx900, gfx906, gfx908, gfx90a and gfx1030)",
                 arch);
        return 1;
    }
    return 0;
}

/* FDTUNE_HIPRTC_OPTIONS split at whitespace into opts (storage in buf); the count. */
static int extra_options(char *buf, size_t n, const char **opts)
{
    const char *env = getenv(HIPRTC_OPTIONS_ENV);
    snprintf(buf, n, "%s", env ? env : "");
    int k = 0;
    for (char *tok = strtok(buf, " \t\n"); tok && k < HIPRTC_EXTRA_MAX; tok = strtok(NULL, " \t\n"))
        opts[k++] = tok;
    return k;
}

static int hip_compiler_id(const char *arch, char *buf, size_t n, fdt_err *e)
{
    char why[512];
    if (takes_clang(arch, why, sizeof why)) {
        if (fdt_rt_amd_clang_id(arch, buf, n, e) == 0)
            return 0;
        return fdt_err_wrap(e, "hip: %s needs the offline compiler because %s", arch, why);
    }
    char ver[128], extra[512], cpath[PATH_MAX], cver[32];
    const char *opts[HIPRTC_EXTRA_MAX];
    if (hip_compiler_version(ver, sizeof ver, e))
        return -1;
    if (fdt_rt_comgr_file(cpath, sizeof cpath, cver, sizeof cver))
        cpath[0] = 0;
    const char *files[] = {rtc_path, cpath};
    int k = extra_options(extra, sizeof extra, opts);
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_printf(&b, "%s ", ver);
    fdt_rt_dl_files_id(&b, files, 2);
    for (int i = 0; i < k; i++)
        fdt_sb_printf(&b, " %s", opts[i]);
    snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
    return 0;
}

/* hiprtc's log after a compile into log. */
static void rtc_log(hiprtcProgram prog, fdt_sb *log)
{
    size_t ln = 0;
    p_hiprtcGetProgramLogSize(prog, &ln);
    if (ln > 1) {
        char *l = calloc(1, ln + 1);
        if (l) {
            p_hiprtcGetProgramLog(prog, l);
            fdt_sb_puts(log, l);
            free(l);
        }
    }
}

/* hiprtc: the source with fdtune's hip/hip_runtime.h in memory. hiprtc pre-includes its own
 * runtime header (-include hiprtc_runtime.h, -D__HIPCC_RTC__, -nogpuinc), so the in-memory one
 * adds nothing; it is there so that the source's #include resolves without a ROCm header on
 * any include path (relocated and Spack installs). */
static int rtc_compile(const char *src, const char *kernel, const char *arch, fdt_sb *image,
                       fdt_sb *log, fdt_rt_resources *res, fdt_err *e)
{
    const char *hdr_names[] = {"hip/hip_runtime.h"};
    const char *hdr_src[] = {fdt_gen_amd_hip_header()};
    if (!hdr_src[0])
        return fdt_err_set(e, "hip: templates/amd_device.h is not embedded");
    hiprtcProgram prog;
    hiprtcResult r = p_hiprtcCreateProgram(&prog, src, "fdtune_kernel.hip", 1, hdr_src, hdr_names);
    if (r != HIPRTC_SUCCESS)
        return fdt_err_set(e, "hiprtc: create program: %s", p_hiprtcGetErrorString(r));
    char archopt[64], extra[512];
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    const char *opts[2 + 2 + HIPRTC_EXTRA_MAX] = {archopt, HIP_OPTIONS};
    int nopt = 3 + extra_options(extra, sizeof extra, opts + 3);
    r = p_hiprtcCompileProgram(prog, nopt, opts);
    rtc_log(prog, log);
    if (r != HIPRTC_SUCCESS) {
        p_hiprtcDestroyProgram(&prog);
        return fdt_err_set(e, "hiprtc: compilation for %s failed: %s\n%s", arch,
                           p_hiprtcGetErrorString(r), fdt_sb_str(log));
    }
    size_t n = 0;
    p_hiprtcGetCodeSize(prog, &n);
    char *code = malloc(n ? n : 1);
    if (!code || p_hiprtcGetCode(prog, code) != HIPRTC_SUCCESS) {
        free(code);
        p_hiprtcDestroyProgram(&prog);
        return fdt_err_set(e, "hiprtc: no code object for %s", arch);
    }
    p_hiprtcDestroyProgram(&prog);
    const char *obj;
    size_t objn;
    if (fdt_rt_amd_unbundle(code, n, &obj, &objn)) {
        free(code);
        return fdt_err_set(e, "hiprtc: malformed offload bundle for %s", arch);
    }
    fdt_sb_putn(image, obj, objn);
    int rc = fdt_rt_amd_resources(obj, objn, kernel, res, e);
    free(code);
    return rc;
}

static int hip_compile(const char *src, const char *kernel, const char *arch, fdt_sb *image,
                       fdt_sb *log, fdt_rt_resources *res, fdt_err *e)
{
    if (!fdt_rt_backend_claims(&fdt_rt_hip, arch))
        return fdt_err_set(e, "hip: '%s' is not an AMD architecture (expected gfxNNN)", arch);
    char why[512];
    if (!takes_clang(arch, why, sizeof why))
        return rtc_compile(src, kernel, arch, image, log, res, e);
    if (fdt_rt_amd_clang_compile(src, kernel, arch, image, log, res, e) == 0)
        return 0;
    if (strstr(e->msg, "no clang for AMD GPUs found"))
        fdt_err_wrap(e, "hip: %s needs the offline compiler because %s", arch, why);
    return -1;
}

static int hip_disassemble(const char *image, size_t n, const char *arch, fdt_sb *out,
                           fdt_err *e)
{
    return fdt_rt_amd_disassemble(image, n, arch, out, e);
}

/* ---------------------------------------------------------------- runtime */

static void *hip_lib;             /* opened, its symbols resolved */
static int hip_ready;             /* hipInit succeeded */
static char hip_path[PATH_MAX];   /* the file it is */
static hipError_t hip_last;       /* the last error, for context_lost */
static int hip_last_at_launch;    /* 1: it came from the launch itself, nothing was queued */
static int hip_idx;               /* the device hip_open made current */
DECL(hipInit);
DECL(hipGetDeviceCount);
DECL(hipDeviceGet);
DECL(hipDeviceGetName);
DECL(hipDeviceGetAttribute);
DECL(hipDeviceTotalMem);
DECL(hipDeviceGetUuid);
DECL(hipGetDeviceProperties);
DECL(hipRuntimeGetVersion);
DECL(hipSetDevice);
DECL(hipMemGetInfo);
DECL(hipFree);
DECL(hipMemcpyHtoD);
DECL(hipMemcpyDtoH);
DECL(hipMemcpyDtoDAsync);
DECL(hipMemsetD8Async);
DECL(hipModuleLoadData);
DECL(hipModuleGetFunction);
DECL(hipModuleUnload);
DECL(hipModuleLaunchKernel);
DECL(hipFuncGetAttribute);
DECL(hipEventCreate);
DECL(hipEventDestroy);
DECL(hipEventRecord);
DECL(hipEventElapsedTime);
DECL(hipDeviceSynchronize);
DECL(hipGetErrorName);
DECL(hipHostMalloc);
DECL(hipHostFree);
DECL(hipHostGetDevicePointer);
DECL(hipHostRegister);
DECL(hipHostUnregister);
DECL(hipStreamCreate);
DECL(hipStreamDestroy);
DECL(hipMemcpyHtoDAsync);
DECL(hipMemcpyDtoHAsync);
DECL(hipStreamWaitEvent);
DECL(hipStreamSynchronize);
static hipError_t (*p_hipMalloc)(void **, size_t);

/* The runtime library of the ROCm fdtune runs against, its symbols resolved; no device is
 * touched (hipInit is load_hip's). */
static int open_hip(fdt_err *e)
{
    if (hip_lib)
        return 0;
    fdt_rt_dl d;
    if (fdt_rt_rocm_open(FDT_ROCM_RUNTIME, &d, e))
        return fdt_err_wrap(e, "hip: libamdhip64 not found");
    void *lib = d.lib;
    const char *libname = d.path;
    SYM(lib, hipInit);
    SYM(lib, hipGetDeviceCount);
    SYM(lib, hipDeviceGet);
    SYM(lib, hipDeviceGetName);
    SYM(lib, hipDeviceGetAttribute);
    SYM(lib, hipDeviceTotalMem);
    SYM(lib, hipDeviceGetUuid);
    SYM(lib, hipGetDeviceProperties);
    SYM(lib, hipRuntimeGetVersion);
    SYM(lib, hipSetDevice);
    SYM(lib, hipMemGetInfo);
    SYM(lib, hipFree);
    SYM(lib, hipMemcpyHtoD);
    SYM(lib, hipMemcpyDtoH);
    SYM(lib, hipMemcpyDtoDAsync);
    SYM(lib, hipMemsetD8Async);
    SYM(lib, hipModuleLoadData);
    SYM(lib, hipModuleGetFunction);
    SYM(lib, hipModuleUnload);
    SYM(lib, hipModuleLaunchKernel);
    SYM(lib, hipEventCreate);
    SYM(lib, hipEventDestroy);
    SYM(lib, hipEventRecord);
    SYM(lib, hipEventElapsedTime);
    SYM(lib, hipDeviceSynchronize);
    SYM(lib, hipGetErrorName);
    SYM(lib, hipHostMalloc);
    SYM(lib, hipHostFree);
    SYM(lib, hipHostGetDevicePointer);
    SYM(lib, hipHostRegister);
    SYM(lib, hipHostUnregister);
    SYM(lib, hipStreamCreate);
    SYM(lib, hipStreamDestroy);
    SYM(lib, hipMemcpyHtoDAsync);
    SYM(lib, hipMemcpyDtoHAsync);
    SYM(lib, hipStreamWaitEvent);
    SYM(lib, hipStreamSynchronize);
    *(void **)&p_hipMalloc = dlsym(lib, "hipMalloc");
    if (!p_hipMalloc)
        return fdt_err_set(e, "hip: symbol hipMalloc missing in %s", libname);
    *(void **)&p_hipFuncGetAttribute = dlsym(lib, "hipFuncGetAttribute"); /* optional */
    snprintf(hip_path, sizeof hip_path, "%s", d.path);
    hip_lib = lib;
    return 0;
}

static int load_hip(fdt_err *e)
{
    if (hip_ready)
        return 0;
    if (open_hip(e))
        return -1;
    hipError_t r = p_hipInit(0);
    if (r != hipSuccess)
        return fdt_err_set(e, "hip: hipInit failed: %s (no usable AMD GPU or driver; runtime %s)",
                           p_hipGetErrorName(r), hip_path);
    hip_ready = 1;
    return 0;
}

/* "6.2.41133" from hipRuntimeGetVersion's major * 10^7 + minor * 10^5 + patch. */
static void hip_version_text(char *buf, size_t n)
{
    int v = 0;
    if (p_hipRuntimeGetVersion(&v) != hipSuccess || v <= 0)
        snprintf(buf, n, "?");
    else
        snprintf(buf, n, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

static int hip_fail(fdt_err *e, const char *what, hipError_t r)
{
    hip_last = r;
    hip_last_at_launch = 0;
    return fdt_err_set(e, "%s: %s", what, p_hipGetErrorName ? p_hipGetErrorName(r) : "?");
}

#define HIPCALL(call, what)                             \
    do {                                                \
        hipError_t r_ = (call);                         \
        if (r_ != hipSuccess)                           \
            return hip_fail(e, what, r_);               \
    } while (0)

static int hip_device_count(int *n, fdt_err *e)
{
    *n = 0;
    if (load_hip(e))
        return -1;
    HIPCALL(p_hipGetDeviceCount(n), "hipGetDeviceCount");
    return 0;
}

static int hattr(int dev, hipDeviceAttribute_t a)
{
    int v = 0;
    return p_hipDeviceGetAttribute(&v, a, dev) == hipSuccess ? v : -1;
}

/* What identifies the software a device runs with: the amdgpu kernel driver, the HIP
 * runtime's version and directory, hiprtc's and comgr's versions and directories (hiprtc's
 * file version names the ROCm release it comes with). */
static void software(fdt_device *info)
{
    char ver[32];
    fdt_rt_amdgpu_kernel_driver(info->driver_version, sizeof info->driver_version);
    hip_version_text(ver, sizeof ver);
    snprintf(info->runtime_version, sizeof info->runtime_version, "HIP %s (%.*s)", ver,
             dir_len(hip_path), hip_path);
    fdt_err ce;
    if (rtc_describe(1, info->compiler_version, sizeof info->compiler_version, &ce))
        snprintf(info->compiler_version, sizeof info->compiler_version, "unavailable");
}

static int hip_device_info(int idx, fdt_device *info, fdt_err *e)
{
    fdt_device_init(info);
    if (load_hip(e))
        return -1;
    hipDevice_t d;
    HIPCALL(p_hipDeviceGet(&d, idx), "hipDeviceGet");
    snprintf(info->backend, sizeof info->backend, "hip");
    snprintf(info->vendor, sizeof info->vendor, "AMD");
    info->index = idx;
    info->live = 1;
    HIPCALL(p_hipDeviceGetName(info->name, sizeof info->name, d), "hipDeviceGetName");
    /* Oversized buffer: later ROCm versions grew hipDeviceProp_t. */
    union {
        hipDeviceProp_t p;
        char pad[8192];
    } props;
    memset(&props, 0, sizeof props);
    if (p_hipGetDeviceProperties(&props.p, idx) == hipSuccess) {
        int n = fdtuned_arch_base_len(props.p.gcnArchName);
        snprintf(info->arch, sizeof info->arch, "%.*s", (int)n, props.p.gcnArchName);
    }
    info->compute_units = hattr(idx, hipDeviceAttributeMultiprocessorCount);
    info->warp_size = hattr(idx, hipDeviceAttributeWarpSize);
    info->max_threads_per_block = hattr(idx, hipDeviceAttributeMaxThreadsPerBlock);
    info->shared_per_block = hattr(idx, hipDeviceAttributeMaxSharedMemoryPerBlock);
    info->shared_per_block_optin = info->shared_per_block;
    info->regs_per_block = hattr(idx, hipDeviceAttributeMaxRegistersPerBlock);
    info->l2_bytes = hattr(idx, hipDeviceAttributeL2CacheSize);
    info->clock_khz = hattr(idx, hipDeviceAttributeClockRate);
    info->mem_clock_khz = hattr(idx, hipDeviceAttributeMemoryClockRate);
    info->mem_bus_bits = hattr(idx, hipDeviceAttributeMemoryBusWidth);
    if (info->mem_clock_khz > 0 && info->mem_bus_bits > 0)
        info->peak_bw_gbs = 2.0 * info->mem_clock_khz * 1e3 * (info->mem_bus_bits / 8) / 1e9;
    size_t mem = 0;
    HIPCALL(p_hipDeviceTotalMem(&mem, d), "hipDeviceTotalMem");
    info->mem_bytes = (int64_t)mem;
    hipUUID u;
    if (p_hipDeviceGetUuid(&u, d) == hipSuccess)
        fdt_device_amd_uuid((const unsigned char *)u.bytes, info->uuid, sizeof info->uuid);
    snprintf(info->pci, sizeof info->pci, "%02x", hattr(idx, hipDeviceAttributePciBusId));
    software(info);
    return 0;
}

static int hip_open(int idx, fdt_err *e)
{
    if (load_hip(e))
        return -1;
    HIPCALL(p_hipSetDevice(idx), "hipSetDevice");
    hip_idx = idx;
    return 0;
}

static int hip_mem_info(size_t *free_bytes, size_t *total, fdt_err *e)
{
    HIPCALL(p_hipMemGetInfo(free_bytes, total), "hipMemGetInfo");
    return 0;
}

static int hip_alloc(size_t bytes, uint64_t *ptr, fdt_err *e)
{
    void *p = NULL;
    hipError_t r = p_hipMalloc(&p, bytes);
    if (r != hipSuccess) {
        char what[64];
        snprintf(what, sizeof what, "hipMalloc(%.2f GiB)", bytes / 1073741824.0);
        return hip_fail(e, what, r);
    }
    *ptr = (uint64_t)(uintptr_t)p;
    return 0;
}

static void hip_free(uint64_t ptr)
{
    if (ptr)
        p_hipFree((void *)(uintptr_t)ptr);
}

static int hip_copy_h2d(uint64_t dst, const void *src, size_t n, fdt_err *e)
{
    HIPCALL(p_hipMemcpyHtoD((hipDeviceptr_t)(uintptr_t)dst, (void *)src, n), "hipMemcpyHtoD");
    return 0;
}

static int hip_copy_d2h(void *dst, uint64_t src, size_t n, fdt_err *e)
{
    HIPCALL(p_hipMemcpyDtoH(dst, (hipDeviceptr_t)(uintptr_t)src, n), "hipMemcpyDtoH");
    return 0;
}

static int hip_copy_d2d_async(uint64_t dst, uint64_t src, size_t n, fdt_err *e)
{
    HIPCALL(p_hipMemcpyDtoDAsync((hipDeviceptr_t)(uintptr_t)dst, (hipDeviceptr_t)(uintptr_t)src,
                                 n, 0),
            "hipMemcpyDtoDAsync");
    return 0;
}

static int hip_memset_async(uint64_t dst, unsigned char v, size_t n, fdt_err *e)
{
    HIPCALL(p_hipMemsetD8Async((hipDeviceptr_t)(uintptr_t)dst, v, n, 0), "hipMemsetD8Async");
    return 0;
}

static int hip_module_load(const void *image, size_t n, void **module, fdt_err *e)
{
    (void)n;
    hipModule_t m;
    HIPCALL(p_hipModuleLoadData(&m, image), "hipModuleLoadData");
    *module = m;
    return 0;
}

static int hip_module_function(void *module, const char *kernel, void **fn, fdt_err *e)
{
    hipFunction_t f;
    hipError_t r = p_hipModuleGetFunction(&f, (hipModule_t)module, kernel);
    if (r != hipSuccess) {
        char what[160];
        snprintf(what, sizeof what, "hipModuleGetFunction(%s)", kernel);
        return hip_fail(e, what, r);
    }
    *fn = f;
    return 0;
}

/* The launch bounds of the functions launched lately (the largest block each allows), so
 * that a block above them is refused here, plainly, before hipModuleLaunchKernel answers it
 * with hipErrorLaunchFailure (clr's ihipLaunchKernel_validate), the code that also stands for
 * a kernel that failed. Forgotten when a module is unloaded (handles are reused). */
static struct {
    void *fn;
    int max;
} bounds[8];
static unsigned nbounds;

static int launch_bound(void *fn)
{
    for (unsigned i = 0; i < nbounds && i < 8; i++)
        if (bounds[i].fn == fn)
            return bounds[i].max;
    int v = -1;
    if (!p_hipFuncGetAttribute ||
        p_hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                              (hipFunction_t)fn) != hipSuccess)
        v = -1; /* unknown: the runtime's own check stands */
    bounds[nbounds % 8].fn = fn;
    bounds[nbounds % 8].max = v;
    nbounds++;
    return v;
}

static void hip_module_unload(void *module)
{
    memset(bounds, 0, sizeof bounds);
    nbounds = 0;
    if (module)
        p_hipModuleUnload((hipModule_t)module);
}

static int hip_launch_on(void *fn, const uint32_t grid[3], const uint32_t block[3],
                         unsigned shared, void **args, void *s, fdt_err *e)
{
    unsigned long threads = (unsigned long)block[0] * block[1] * block[2];
    int max = launch_bound(fn);
    hipError_t r = hipErrorInvalidConfiguration;
    if (max <= 0 || threads <= (unsigned long)max)
        r = p_hipModuleLaunchKernel((hipFunction_t)fn, grid[0], grid[1], grid[2], block[0],
                                    block[1], block[2], shared, (hipStream_t)s, args, NULL);
    if (r == hipSuccess)
        return 0;
    hip_fail(e, "hipModuleLaunchKernel", r);
    hip_last_at_launch = 1;
    if (max > 0 && threads > (unsigned long)max)
        fdt_err_set(e, "hipModuleLaunchKernel: a block of %lu threads (%ux%ux%u) is above the "
                       "kernel's launch bounds (%d threads): not launched",
                    threads, block[0], block[1], block[2], max);
    return -1;
}

static int hip_launch(void *fn, const uint32_t grid[3], const uint32_t block[3], unsigned shared,
                      void **args, fdt_err *e)
{
    return hip_launch_on(fn, grid, block, shared, args, NULL, e);
}

/* Pinned and mapped, so that host_device_ptr can give the device's address. */
static int hip_host_alloc(size_t bytes, void **p, fdt_err *e)
{
    *p = NULL;
    HIPCALL(p_hipHostMalloc(p, bytes, hipHostMallocMapped | hipHostMallocPortable),
            "hipHostMalloc");
    return 0;
}

static void hip_host_free(void *p)
{
    if (p)
        p_hipHostFree(p);
}

/* Pinned and mapped in place, as hip_host_alloc's memory is. */
static int hip_host_register(void *p, size_t bytes, fdt_err *e)
{
    HIPCALL(p_hipHostRegister(p, bytes, hipHostRegisterMapped | hipHostRegisterPortable),
            "hipHostRegister");
    return 0;
}

static void hip_host_unregister(void *p)
{
    if (p)
        p_hipHostUnregister(p);
}

static int hip_host_device_ptr(void *p, uint64_t *dptr, fdt_err *e)
{
    void *d = NULL;
    if (hattr(hip_idx, hipDeviceAttributeCanMapHostMemory) != 1)
        return fdt_err_set(e, "hip: this device cannot map host memory");
    HIPCALL(p_hipHostGetDevicePointer(&d, p, 0), "hipHostGetDevicePointer");
    *dptr = (uint64_t)(uintptr_t)d;
    return 0;
}

/* An APU (MI300A: integrated, one HBM) or pageable memory through the host's page tables. */
static int hip_unified(int *u, fdt_err *e)
{
    (void)e;
    *u = hattr(hip_idx, hipDeviceAttributeIntegrated) == 1 ||
         hattr(hip_idx, hipDeviceAttributePageableMemoryAccessUsesHostPageTables) == 1;
    return 0;
}

static int hip_stream_create(void **s, fdt_err *e)
{
    hipStream_t x;
    HIPCALL(p_hipStreamCreate(&x), "hipStreamCreate");
    *s = x;
    return 0;
}

static void hip_stream_destroy(void *s)
{
    if (s)
        p_hipStreamDestroy((hipStream_t)s);
}

static int hip_copy_h2d_on(uint64_t dst, const void *src, size_t n, void *s, fdt_err *e)
{
    HIPCALL(p_hipMemcpyHtoDAsync((hipDeviceptr_t)(uintptr_t)dst, (void *)src, n, (hipStream_t)s),
            "hipMemcpyHtoDAsync");
    return 0;
}

static int hip_copy_d2h_on(void *dst, uint64_t src, size_t n, void *s, fdt_err *e)
{
    HIPCALL(p_hipMemcpyDtoHAsync(dst, (hipDeviceptr_t)(uintptr_t)src, n, (hipStream_t)s),
            "hipMemcpyDtoHAsync");
    return 0;
}

static int hip_copy_d2d_on(uint64_t dst, uint64_t src, size_t n, void *s, fdt_err *e)
{
    HIPCALL(p_hipMemcpyDtoDAsync((hipDeviceptr_t)(uintptr_t)dst, (hipDeviceptr_t)(uintptr_t)src,
                                 n, (hipStream_t)s),
            "hipMemcpyDtoDAsync");
    return 0;
}

static int hip_event_record_on(void *ev, void *s, fdt_err *e)
{
    HIPCALL(p_hipEventRecord((hipEvent_t)ev, (hipStream_t)s), "hipEventRecord");
    return 0;
}

static int hip_stream_wait_event(void *s, void *ev, fdt_err *e)
{
    HIPCALL(p_hipStreamWaitEvent((hipStream_t)s, (hipEvent_t)ev, 0), "hipStreamWaitEvent");
    return 0;
}

static int hip_stream_sync(void *s, fdt_err *e)
{
    HIPCALL(p_hipStreamSynchronize((hipStream_t)s), "hipStreamSynchronize");
    return 0;
}

/* A copy per contiguous run: the whole box when its rows and planes are back to back on both
 * sides, else a plane at a time when its rows are, else a row at a time (HIP_MEMCPY3D's
 * layout differs between ROCm releases, so no 3D copy). */
static int hip_copy_box_on(const fdt_rt_box_copy *c, void *s, fdt_err *e)
{
    size_t run = c->width, nrun = c->rows * c->planes, per_plane = c->rows;
    int rows_packed = c->src_line == c->width && c->dst_line == c->width;
    if (rows_packed) {
        run = c->width * c->rows, nrun = c->planes, per_plane = 1;
        if (c->src_slice == run && c->dst_slice == run)
            run *= c->planes, nrun = 1;
    }
    for (size_t i = 0; i < nrun; i++) {
        size_t k = i / per_plane, j = i % per_plane;
        uint64_t src = c->src + k * c->src_slice + j * c->src_line;
        uint64_t dst = c->dst + k * c->dst_slice + j * c->dst_line;
        int rc = c->src_host && c->dst_host
                     ? (memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, run), 0)
                 : c->src_host ? hip_copy_h2d_on(dst, (const void *)(uintptr_t)src, run, s, e)
                 : c->dst_host ? hip_copy_d2h_on((void *)(uintptr_t)dst, src, run, s, e)
                               : hip_copy_d2d_on(dst, src, run, s, e);
        if (rc)
            return -1;
    }
    return 0;
}

static int hip_event_create(void **ev, fdt_err *e)
{
    hipEvent_t x;
    HIPCALL(p_hipEventCreate(&x), "hipEventCreate");
    *ev = x;
    return 0;
}

static void hip_event_destroy(void *ev)
{
    if (ev)
        p_hipEventDestroy((hipEvent_t)ev);
}

static int hip_event_record(void *ev, fdt_err *e)
{
    HIPCALL(p_hipEventRecord((hipEvent_t)ev, 0), "hipEventRecord");
    return 0;
}

static int hip_event_elapsed(void *a, void *b, float *ms, fdt_err *e)
{
    HIPCALL(p_hipEventElapsedTime(ms, (hipEvent_t)a, (hipEvent_t)b), "hipEventElapsedTime");
    return 0;
}

static int hip_sync(fdt_err *e)
{
    HIPCALL(p_hipDeviceSynchronize(), "hipDeviceSynchronize");
    return 0;
}

/* One entry of the library report: the file that defines sym (NULL: path as given) and its
 * version, or (note) why there is none. */
static fdt_rt_lib *lib_entry(fdt_rt_lib *l, const char *role, const void *sym, const char *path,
                             const char *ver, const char *note)
{
    memset(l, 0, sizeof *l);
    snprintf(l->backend, sizeof l->backend, "hip");
    snprintf(l->role, sizeof l->role, "%s", role);
    if (sym ? fdt_rt_dl_path(sym, l->path, sizeof l->path) != 0 : !path)
        l->path[0] = 0;
    else if (!sym)
        snprintf(l->path, sizeof l->path, "%s", path);
    snprintf(l->version, sizeof l->version, "%s", ver ? ver : "");
    snprintf(l->note, sizeof l->note, "%s", note ? note : "");
    return l + 1;
}

static int hip_libraries(fdt_rt_lib *libs, int max)
{
    if (max < 3)
        return 0;
    fdt_rt_lib *l = libs;
    fdt_err e = {{0}};
    char ver[64], hv[32], path[PATH_MAX];
    if (open_hip(&e) == 0) {
        hip_version_text(hv, sizeof hv);
        snprintf(ver, sizeof ver, "HIP %s", hv);
        l = lib_entry(l, "HIP runtime", (void *)p_hipRuntimeGetVersion, NULL, ver, NULL);
    } else {
        l = lib_entry(l, "HIP runtime", NULL, NULL, NULL, e.msg);
    }
    if (load_rtc(&e) == 0) {
        int major = 0, minor = 0;
        char note[96];
        p_hiprtcVersion(&major, &minor);
        fdt_rt_dl_file_version(rtc_path, hv, sizeof hv);
        snprintf(ver, sizeof ver, "hiprtc %s", *hv ? hv : "?");
        snprintf(note, sizeof note, "%shiprtcVersion says %d.%d",
                 rtc_legacy ? "inside libamdhip64 (ROCm < 5.6); " : "", major, minor);
        l = lib_entry(l, "hiprtc", (void *)p_hiprtcCreateProgram, NULL, ver, note);
    } else {
        l = lib_entry(l, "hiprtc", NULL, NULL, NULL, e.msg);
    }
    if (fdt_rt_comgr_load(&e) == 0 && fdt_rt_comgr_file(path, sizeof path, ver, sizeof ver) == 0)
        l = lib_entry(l, "comgr", NULL, path, ver, NULL);
    else
        l = lib_entry(l, "comgr", NULL, NULL, NULL, e.msg);
    return (int)(l - libs);
}

/* ROCm's runtime does not return a failed kernel as an error code: a device exception (an
 * illegal address, a fault) reaches its queue callback, which aborts the process (clr,
 * rocdevice.cpp/rocvirtual.cpp callbackQueue: "Abort on device exceptions"), so the worker
 * dies and its parent sees the crash. The codes that do come back are the API's own checks,
 * made before anything is queued: hipModuleLaunchKernel answers hipErrorLaunchFailure for a
 * block above the kernel's launch bounds (or an unsupported cooperative launch), and the
 * context is as good as before. Codes that name a failed kernel count as lost: in case a
 * runtime reports one instead of aborting, and hipErrorLaunchFailure from anything but the
 * launch itself (a synchronisation that reports an earlier kernel). */
int fdt_rt_hip_error_lost(int code, int at_launch)
{
    switch ((hipError_t)code) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchTimeOut:
    case hipErrorAssert:
        return 1;
    case hipErrorLaunchFailure:
        return !at_launch;
    default:
        return 0;
    }
}

static int hip_context_lost(void)
{
    return fdt_rt_hip_error_lost(hip_last, hip_last_at_launch);
}

const fdt_rt_backend fdt_rt_hip = {
    .name = "hip",
    .vendor = "AMD",
    .example_arch = "gfx90a",
    .options = HIP_OPTIONS_TEXT,
    .compiler_version = hip_compiler_version,
    .compiler_id = hip_compiler_id,
    .compile = hip_compile,
    .disassemble = hip_disassemble,
    .libraries = hip_libraries,
    .device_count = hip_device_count,
    .device_info = hip_device_info,
    .open = hip_open,
    .mem_info = hip_mem_info,
    .alloc = hip_alloc,
    .free = hip_free,
    .copy_h2d = hip_copy_h2d,
    .copy_d2h = hip_copy_d2h,
    .copy_d2d_async = hip_copy_d2d_async,
    .memset_async = hip_memset_async,
    .module_load = hip_module_load,
    .module_function = hip_module_function,
    .module_unload = hip_module_unload,
    .launch = hip_launch,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_elapsed = hip_event_elapsed,
    .sync = hip_sync,
    .context_lost = hip_context_lost,
    .host_alloc = hip_host_alloc,
    .host_free = hip_host_free,
    .host_register = hip_host_register,
    .host_unregister = hip_host_unregister,
    .host_device_ptr = hip_host_device_ptr,
    .unified = hip_unified,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .launch_on = hip_launch_on,
    .copy_h2d_on = hip_copy_h2d_on,
    .copy_d2h_on = hip_copy_d2h_on,
    .copy_d2d_on = hip_copy_d2d_on,
    .event_record_on = hip_event_record_on,
    .stream_wait_event = hip_stream_wait_event,
    .stream_sync = hip_stream_sync,
    .copy_box_on = hip_copy_box_on,
};
