/* AMD backend: the HIP runtime (libamdhip64), hiprtc (its own library from ROCm 5.6, inside
 * libamdhip64 before) and comgr for the code object's metadata (VGPRs, SGPRs, spills, LDS,
 * scratch), all dlopen'ed with the prototypes of the vendor headers. hiprtc from ROCm 5.2
 * (Debian 12) compiles for gfx900/906/908/90a/1030 and crashes on newer targets, so those
 * are refused up front there; compilation runs in a child process in any case. */
#define __HIP_PLATFORM_AMD__ 1
#include "fdt_rt.h"
#include "rt_internal.h"

#if FDTUNE_COMGR_SUBDIR
#include <amd_comgr/amd_comgr.h> /* ROCm >= 5.3 */
#else
#include <amd_comgr.h> /* ROCm <= 5.2, Debian 12 */
#endif
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR2(x) #x
#define STR(x) STR2(x)
#define DECL(name) static __typeof__(&name) p_##name
#define SYM(lib, name)                                                                   \
    do {                                                                                 \
        *(void **)&p_##name = dlsym(lib, STR(name));                                     \
        if (!p_##name)                                                                   \
            return fdt_err_set(e, "hip: symbol %s missing in %s", STR(name), libname);   \
    } while (0)

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

/* ---------------------------------------------------------------- hiprtc + comgr */

#define HIP_OPTIONS "-O3", "-std=c++17"
#define HIP_OPTIONS_TEXT "-O3 -std=c++17"

static void *rtc_lib, *comgr_lib;
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
DECL(amd_comgr_create_data);
DECL(amd_comgr_set_data);
DECL(amd_comgr_release_data);
DECL(amd_comgr_get_data_metadata);
DECL(amd_comgr_destroy_metadata);
DECL(amd_comgr_metadata_lookup);
DECL(amd_comgr_get_metadata_kind);
DECL(amd_comgr_get_metadata_string);
DECL(amd_comgr_get_metadata_list_size);
DECL(amd_comgr_index_list_metadata);

static int load_rtc(fdt_err *e)
{
    if (rtc_lib)
        return 0;
    static const char *const rtc_names[] = {"libhiprtc.so.6", "libhiprtc.so.5", "libhiprtc.so",
                                            "libamdhip64.so.5", NULL};
    static const char *const comgr_names[] = {"libamd_comgr.so.3", "libamd_comgr.so.2",
                                              "libamd_comgr.so", NULL};
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
    void *cg = open_first(comgr_names, &libname, why, sizeof why);
    if (!cg)
        return fdt_err_set(e, "hip: comgr not found (%s); it reports kernel resources", why);
    SYM(cg, amd_comgr_create_data);
    SYM(cg, amd_comgr_set_data);
    SYM(cg, amd_comgr_release_data);
    SYM(cg, amd_comgr_get_data_metadata);
    SYM(cg, amd_comgr_destroy_metadata);
    SYM(cg, amd_comgr_metadata_lookup);
    SYM(cg, amd_comgr_get_metadata_kind);
    SYM(cg, amd_comgr_get_metadata_string);
    SYM(cg, amd_comgr_get_metadata_list_size);
    SYM(cg, amd_comgr_index_list_metadata);
    rtc_lib = lib;
    comgr_lib = cg;
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

/* hiprtc of newer ROCm returns a clang offload bundle; take the amdgcn code object. */
static int unbundle(const char *img, size_t n, const char **obj, size_t *objn)
{
    static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
    *obj = img;
    *objn = n;
    if (n < sizeof magic - 1 + 8 || memcmp(img, magic, sizeof magic - 1))
        return 0;
    size_t p = sizeof magic - 1;
    uint64_t count;
    memcpy(&count, img + p, 8);
    p += 8;
    for (uint64_t i = 0; i < count && p + 24 <= n; i++) {
        uint64_t off, size, idlen;
        memcpy(&off, img + p, 8);
        memcpy(&size, img + p + 8, 8);
        memcpy(&idlen, img + p + 16, 8);
        p += 24;
        if (p + idlen > n)
            return -1;
        if (strstr(img + p, "amdgcn") && off + size <= n && size) {
            *obj = img + off;
            *objn = size;
            return 0;
        }
        p += idlen;
    }
    return -1;
}

static int md_string(amd_comgr_metadata_node_t node, char *buf, size_t n)
{
    size_t len = 0;
    if (p_amd_comgr_get_metadata_string(node, &len, NULL) || len == 0 || len > n)
        return -1;
    return p_amd_comgr_get_metadata_string(node, &len, buf) ? -1 : 0;
}

static int md_int(amd_comgr_metadata_node_t map, const char *key)
{
    amd_comgr_metadata_node_t v;
    if (p_amd_comgr_metadata_lookup(map, key, &v))
        return -1;
    char buf[64];
    int r = md_string(v, buf, sizeof buf) ? -1 : atoi(buf);
    p_amd_comgr_destroy_metadata(v);
    return r;
}

static void amd_resources(const char *obj, size_t n, const char *kernel, fdt_rt_resources *res)
{
    amd_comgr_data_t data;
    if (p_amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data))
        return;
    amd_comgr_metadata_node_t md, kernels;
    if (!p_amd_comgr_set_data(data, n, obj) && !p_amd_comgr_get_data_metadata(data, &md)) {
        if (!p_amd_comgr_metadata_lookup(md, "amdhsa.kernels", &kernels)) {
            size_t count = 0;
            p_amd_comgr_get_metadata_list_size(kernels, &count);
            for (size_t i = 0; i < count; i++) {
                amd_comgr_metadata_node_t k, name;
                if (p_amd_comgr_index_list_metadata(kernels, i, &k))
                    continue;
                char nm[256] = "";
                if (!p_amd_comgr_metadata_lookup(k, ".name", &name)) {
                    md_string(name, nm, sizeof nm);
                    p_amd_comgr_destroy_metadata(name);
                }
                if (!strcmp(nm, kernel)) {
                    res->registers = md_int(k, ".vgpr_count");
                    res->sgprs = md_int(k, ".sgpr_count");
                    res->agprs = md_int(k, ".agpr_count");
                    int vs = md_int(k, ".vgpr_spill_count"), ss = md_int(k, ".sgpr_spill_count");
                    res->spill_bytes = (vs > 0 ? vs : 0) * 4 + (ss > 0 ? ss : 0) * 4;
                    res->scratch_bytes = md_int(k, ".private_segment_fixed_size");
                    res->shared_bytes = md_int(k, ".group_segment_fixed_size");
                    res->max_threads = md_int(k, ".max_flat_workgroup_size");
                }
                p_amd_comgr_destroy_metadata(k);
            }
            p_amd_comgr_destroy_metadata(kernels);
        }
        p_amd_comgr_destroy_metadata(md);
    }
    p_amd_comgr_release_data(data);
}

static int hip_compile(const char *src, const char *kernel, const char *arch, fdt_sb *image,
                       fdt_sb *log, fdt_rt_resources *res, fdt_err *e)
{
    if (load_rtc(e))
        return -1;
    if (strcmp(fdtuned_arch_backend(arch), "hip"))
        return fdt_err_set(e, "hip: '%s' is not an AMD architecture (expected gfxNNN)", arch);
    if (rtc_legacy && !legacy_target_ok(arch))
        return fdt_err_set(e, "hip: the hiprtc in libamdhip64 (ROCm < 5.6) cannot compile for "
                              "%s (it crashes); it supports gfx900, gfx906, gfx908, gfx90a and "
                              "gfx1030. Use ROCm >= 5.7 for this target", arch);
    hiprtcProgram prog;
    hiprtcResult r = p_hiprtcCreateProgram(&prog, src, "fdtune_kernel.hip", 0, NULL, NULL);
    if (r != HIPRTC_SUCCESS)
        return fdt_err_set(e, "hiprtc: create program: %s", p_hiprtcGetErrorString(r));
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--offload-arch=%s", arch);
    const char *opts[] = {archopt, HIP_OPTIONS};
    r = p_hiprtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
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
    if (unbundle(code, n, &obj, &objn)) {
        free(code);
        return fdt_err_set(e, "hiprtc: malformed offload bundle for %s", arch);
    }
    fdt_sb_putn(image, obj, objn);
    amd_resources(obj, objn, kernel, res);
    free(code);
    if (res->registers < 0)
        return fdt_err_set(e, "hip: kernel %s not found in the code object's metadata", kernel);
    return 0;
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
    .compile = hip_compile,
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
