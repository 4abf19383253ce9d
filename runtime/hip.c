/* AMD backend: the HIP runtime (libamdhip64), hiprtc (its own library from ROCm 5.6, inside
 * libamdhip64 before) and comgr for the code object's metadata (VGPRs, SGPRs, spills, LDS,
 * scratch; amd_code.c), all dlopen'ed with the prototypes of the vendor headers. hiprtc from
 * ROCm 5.2 (Debian 12) compiles for gfx900/906/908/90a/1030 and crashes on newer targets:
 * those go to the offline clang (amd_clang.c) instead. Either compiler gets fdtune's own
 * hip/hip_runtime.h (templates/amd_device.h), so no ROCm header has to be found; compilation
 * runs in a child process in any case. */
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

#define DECL(name) FDT_RT_DECL(name)
#define SYM(lib, name) FDT_RT_SYM(lib, name, libname, "hip")

static void *open_first(const char *const *names, const char **opened, char *why, size_t n)
{
    why[0] = 0;
    for (int i = 0; names[i]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *opened = names[i];
            return lib;
        }
        size_t u = strlen(why);
        snprintf(why + u, n - u, "%s%s", u ? "; " : "", dlerror());
    }
    return NULL;
}

/* ---------------------------------------------------------------- hiprtc */

#define HIP_OPTIONS "-O3", "-std=c++17"
#define HIP_OPTIONS_TEXT "-O3 -std=c++17"
/* Options appended to fdtune's, whitespace-separated (diagnostics: -nostdinc shows that the
 * source needs no system header); part of the compile cache key. */
#define HIPRTC_OPTIONS_ENV "FDTUNE_HIPRTC_OPTIONS"
#define HIPRTC_EXTRA_MAX 16

static void *rtc_lib;
static int rtc_legacy; /* hiprtc inside libamdhip64 (ROCm < 5.6): crashes on newer targets */
DECL(hiprtcCreateProgram);
DECL(hiprtcCompileProgram);
DECL(hiprtcGetProgramLogSize);
DECL(hiprtcGetProgramLog);
DECL(hiprtcGetCodeSize);
DECL(hiprtcGetCode);
DECL(hiprtcDestroyProgram);
DECL(hiprtcGetErrorString);
DECL(hiprtcVersion);

static int load_rtc(fdt_err *e)
{
    if (rtc_lib)
        return 0;
    static const char *const rtc_names[] = {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so",
                                            "libamdhip64.so.5", NULL};
    char why[1024];
    const char *libname = NULL;
    void *lib = open_first(rtc_names, &libname, why, sizeof why);
    if (!lib)
        return fdt_err_set(e, "hip: hiprtc not found (%s); install ROCm or Debian's "
                              "libamdhip64-dev", why);
    SYM(lib, hiprtcCreateProgram);
    SYM(lib, hiprtcCompileProgram);
    SYM(lib, hiprtcGetProgramLogSize);
    SYM(lib, hiprtcGetProgramLog);
    SYM(lib, hiprtcGetCodeSize);
    SYM(lib, hiprtcGetCode);
    SYM(lib, hiprtcDestroyProgram);
    SYM(lib, hiprtcGetErrorString);
    SYM(lib, hiprtcVersion);
    rtc_legacy = strstr(libname, "amdhip64") != NULL;
    if (fdt_rt_comgr_load(e))
        return -1;
    rtc_lib = lib;
    return 0;
}

static int hip_compiler_version(char *buf, size_t n, fdt_err *e)
{
    if (load_rtc(e))
        return -1;
    int major = 0, minor = 0;
    p_hiprtcVersion(&major, &minor);
    snprintf(buf, n, "hiprtc %d.%d%s", major, minor, rtc_legacy ? " (in libamdhip64)" : "");
    return 0;
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
        if (fdt_rt_amd_clang_id(buf, n, e) == 0)
            return 0;
        return fdt_err_wrap(e, "hip: %s needs the offline compiler because %s", arch, why);
    }
    char ver[64], extra[512];
    const char *opts[HIPRTC_EXTRA_MAX];
    if (hip_compiler_version(ver, sizeof ver, e))
        return -1;
    int k = extra_options(extra, sizeof extra, opts);
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_puts(&b, ver);
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
    if (strcmp(fdtuned_arch_backend(arch), "hip"))
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

static void *hip_lib;
static hipError_t hip_last;
DECL(hipInit);
DECL(hipGetDeviceCount);
DECL(hipDeviceGet);
DECL(hipDeviceGetName);
DECL(hipDeviceGetAttribute);
DECL(hipDeviceTotalMem);
DECL(hipDeviceGetUuid);
DECL(hipGetDeviceProperties);
DECL(hipDriverGetVersion);
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
DECL(hipEventCreate);
DECL(hipEventDestroy);
DECL(hipEventRecord);
DECL(hipEventElapsedTime);
DECL(hipDeviceSynchronize);
DECL(hipGetErrorName);
static hipError_t (*p_hipMalloc)(void **, size_t);

static int load_hip(fdt_err *e)
{
    if (hip_lib)
        return 0;
    static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so",
                                        NULL};
    char why[1024];
    const char *libname = NULL;
    void *lib = open_first(names, &libname, why, sizeof why);
    if (!lib)
        return fdt_err_set(e, "hip: libamdhip64 not found (%s)", why);
    SYM(lib, hipInit);
    SYM(lib, hipGetDeviceCount);
    SYM(lib, hipDeviceGet);
    SYM(lib, hipDeviceGetName);
    SYM(lib, hipDeviceGetAttribute);
    SYM(lib, hipDeviceTotalMem);
    SYM(lib, hipDeviceGetUuid);
    SYM(lib, hipGetDeviceProperties);
    SYM(lib, hipDriverGetVersion);
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
    *(void **)&p_hipMalloc = dlsym(lib, "hipMalloc");
    if (!p_hipMalloc)
        return fdt_err_set(e, "hip: symbol hipMalloc missing in %s", libname);
    hipError_t r = p_hipInit(0);
    if (r != hipSuccess) {
        const char *name = p_hipGetErrorName(r);
        dlclose(lib);
        return fdt_err_set(e, "hip: hipInit failed: %s (no usable AMD GPU or driver)", name);
    }
    hip_lib = lib;
    return 0;
}

static int hip_fail(fdt_err *e, const char *what, hipError_t r)
{
    hip_last = r;
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
    if (p_hipDeviceGetUuid(&u, d) == hipSuccess) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(info->uuid, sizeof info->uuid, "GPU-%02x%02x%02x%02x%02x%02x%02x%02x", b[0], b[1],
                 b[2], b[3], b[4], b[5], b[6], b[7]);
    }
    snprintf(info->pci, sizeof info->pci, "%02x", hattr(idx, hipDeviceAttributePciBusId));
    int dv = 0, rv = 0;
    p_hipDriverGetVersion(&dv);
    p_hipRuntimeGetVersion(&rv);
    snprintf(info->driver_version, sizeof info->driver_version, "%d", dv);
    snprintf(info->runtime_version, sizeof info->runtime_version, "HIP %d", rv);
    fdt_err ce;
    if (hip_compiler_version(info->compiler_version, sizeof info->compiler_version, &ce))
        snprintf(info->compiler_version, sizeof info->compiler_version, "unavailable");
    return 0;
}

static int hip_open(int idx, fdt_err *e)
{
    if (load_hip(e))
        return -1;
    HIPCALL(p_hipSetDevice(idx), "hipSetDevice");
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

static void hip_module_unload(void *module)
{
    if (module)
        p_hipModuleUnload((hipModule_t)module);
}

static int hip_launch(void *fn, const uint32_t grid[3], const uint32_t block[3], unsigned shared,
                      void **args, fdt_err *e)
{
    HIPCALL(p_hipModuleLaunchKernel((hipFunction_t)fn, grid[0], grid[1], grid[2], block[0],
                                    block[1], block[2], shared, 0, args, NULL),
            "hipModuleLaunchKernel");
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

static int hip_context_lost(void)
{
    return hip_last == hipErrorIllegalAddress || hip_last == hipErrorLaunchFailure ||
           hip_last == hipErrorLaunchTimeOut || hip_last == hipErrorAssert;
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
};
