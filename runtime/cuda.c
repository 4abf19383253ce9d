/* NVIDIA backend: the CUDA driver API (libcuda.so.1) and NVRTC (libnvrtc.so.13 or .12),
 * both dlopen'ed (dl.c). Prototypes come from the vendor headers: SYM() resolves the versioned
 * symbol a header macro names (cuMemAlloc -> cuMemAlloc_v2) with the header's own type.
 * NVRTC compiles fdtune's HIP dialect with an in-memory hip/hip_runtime.h. */
#include "fdt_rt.h"
#include "fdt_gen.h"
#include "rt_internal.h"

#include <cuda.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FDT_RT_WHAT "cuda"
#define DECL FDT_RT_DECL
#define SYM FDT_RT_SYM

/* ---------------------------------------------------------------- NVRTC */

/* 177: "declared but never referenced", for constants some variants do not use. */
#define CUDA_OPTIONS "-std=c++17", "--ptxas-options=-v", "-lineinfo", "--diag-suppress=177"
#define CUDA_OPTIONS_TEXT "-std=c++17 --ptxas-options=-v -lineinfo --diag-suppress=177"

static void *nvrtc_lib;
static char nvrtc_path[PATH_MAX]; /* the file loaded */
DECL(nvrtcVersion);
DECL(nvrtcCreateProgram);
DECL(nvrtcCompileProgram);
DECL(nvrtcGetProgramLogSize);
DECL(nvrtcGetProgramLog);
DECL(nvrtcGetCUBINSize);
DECL(nvrtcGetCUBIN);
DECL(nvrtcDestroyProgram);
DECL(nvrtcGetErrorString);

static int load_nvrtc(fdt_err *e)
{
    if (nvrtc_lib)
        return 0;
    /* The loader path first, then where the toolkit installs itself. */
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
    const char *home = getenv("CUDA_HOME");
    char home_lib[PATH_MAX] = "";
    if (home && *home)
        snprintf(home_lib, sizeof home_lib, "%s/lib64", home);
    const char *places[] = {"", home_lib[0] ? home_lib : NULL, "/usr/local/cuda/lib64"};
    fdt_rt_dl d;
    fdt_sb why;
    fdt_sb_init(&why);
    int rc = fdt_rt_dl_open(places, 3, names, &d, &why);
    if (rc)
        fdt_err_set(e, "cuda: NVRTC not found (%s); set CUDA_HOME or add the CUDA toolkit's "
                       "lib64 to LD_LIBRARY_PATH", fdt_sb_str(&why));
    fdt_sb_free(&why);
    if (rc)
        return -1;
    void *lib = d.lib;
    const char *libname = d.path;
    SYM(lib, nvrtcVersion);
    SYM(lib, nvrtcCreateProgram);
    SYM(lib, nvrtcCompileProgram);
    SYM(lib, nvrtcGetProgramLogSize);
    SYM(lib, nvrtcGetProgramLog);
    SYM(lib, nvrtcGetCUBINSize);
    SYM(lib, nvrtcGetCUBIN);
    SYM(lib, nvrtcDestroyProgram);
    SYM(lib, nvrtcGetErrorString);
    snprintf(nvrtc_path, sizeof nvrtc_path, "%s", d.path);
    nvrtc_lib = lib;
    return 0;
}

static int cuda_compiler_version(char *buf, size_t n, fdt_err *e)
{
    if (load_nvrtc(e))
        return -1;
    int major = 0, minor = 0;
    if (p_nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
        return fdt_err_set(e, "cuda: nvrtcVersion failed");
    snprintf(buf, n, "nvrtc %d.%d", major, minor);
    return 0;
}

/* "nvrtc 13.0 files <hash>": nvrtcVersion names no patch release (13.0.48 and 13.0.88 both
 * say 13.0), the file does. */
static int cuda_compiler_id(const char *arch, char *buf, size_t n, fdt_err *e)
{
    (void)arch;
    char ver[64];
    if (cuda_compiler_version(ver, sizeof ver, e))
        return -1;
    const char *files[] = {nvrtc_path};
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_printf(&b, "%s ", ver);
    fdt_rt_dl_files_id(&b, files, 1);
    snprintf(buf, n, "%s", fdt_sb_str(&b));
    fdt_sb_free(&b);
    return 0;
}

/* sm_70 is refused by NVRTC 13 (nvrtcGetSupportedArchs: 75 to 121), so it is refused before
 * compiling, naming what this NVRTC takes. "sm_90a" and "sm_100f" are their number's. */
static int cuda_check_target(const char *arch, fdt_err *e)
{
    fdt_err le;
    char ver[64];
    int n = 0, v[128];
    void *sym_n = NULL, *sym_list = NULL;
    if (cuda_compiler_version(ver, sizeof ver, &le) == 0) { /* optional: NVRTC 11.2 and later */
        sym_n = dlsym(nvrtc_lib, "nvrtcGetNumSupportedArchs");
        sym_list = dlsym(nvrtc_lib, "nvrtcGetSupportedArchs");
    }
    nvrtcResult (*get_n)(int *) = (nvrtcResult(*)(int *))sym_n;
    nvrtcResult (*get_list)(int *) = (nvrtcResult(*)(int *))sym_list;
    if (!get_n || !get_list || get_n(&n) != NVRTC_SUCCESS || n < 1 || n > 128 ||
        get_list(v) != NVRTC_SUCCESS)
        return 0; /* cannot tell here: the compile says */
    char *end;
    long want = strncmp(arch, "sm_", 3) ? -1 : strtol(arch + 3, &end, 10);
    if (want > 0 && *end && strcmp(end, "a") && strcmp(end, "f"))
        want = -1; /* sm_90a, sm_100f: the number's variants; nothing else */
    for (int i = 0; want > 0 && i < n; i++)
        if (v[i] == want)
            return 0;
    fdt_sb known;
    fdt_sb_init(&known);
    for (int i = 0; i < n; i++)
        fdt_sb_printf(&known, "%ssm_%d", i ? ", " : "", v[i]);
    fdt_err_set(e, "target '%s': %s does not compile for it; it compiles for %s", arch, ver,
                fdt_sb_str(&known));
    fdt_sb_free(&known);
    return -1;
}

static int cuda_compile(const char *src, const char *kernel, const char *arch, fdt_sb *image,
                        fdt_sb *log, fdt_rt_resources *res, fdt_err *e)
{
    if (load_nvrtc(e))
        return -1;
    if (!fdt_rt_backend_claims(&fdt_rt_cuda, arch))
        return fdt_err_set(e, "cuda: '%s' is not an NVIDIA architecture (expected sm_XX)", arch);
    const char *hdr_names[] = {"hip/hip_runtime.h"};
    const char *hdr_src[] = {fdt_gen_nvrtc_hip_header()};
    nvrtcProgram prog;
    nvrtcResult r = p_nvrtcCreateProgram(&prog, src, "fdtune_kernel.hip", 1, hdr_src, hdr_names);
    if (r != NVRTC_SUCCESS)
        return fdt_err_set(e, "nvrtc: create program: %s", p_nvrtcGetErrorString(r));
    char archopt[48];
    snprintf(archopt, sizeof archopt, "-arch=%s", arch);
    const char *opts[] = {archopt, CUDA_OPTIONS};
    r = p_nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    size_t ln = 0;
    p_nvrtcGetProgramLogSize(prog, &ln);
    if (ln > 1) {
        char *l = calloc(1, ln + 1);
        if (l) {
            p_nvrtcGetProgramLog(prog, l);
            fdt_sb_puts(log, l);
            free(l);
        }
    }
    if (r != NVRTC_SUCCESS) {
        p_nvrtcDestroyProgram(&prog);
        return fdt_err_set(e, "nvrtc: compilation for %s failed: %s\n%s", arch,
                           p_nvrtcGetErrorString(r), fdt_sb_str(log));
    }
    size_t n = 0;
    p_nvrtcGetCUBINSize(prog, &n);
    char *cubin = malloc(n ? n : 1);
    if (!cubin || p_nvrtcGetCUBIN(prog, cubin) != NVRTC_SUCCESS) {
        free(cubin);
        p_nvrtcDestroyProgram(&prog);
        return fdt_err_set(e, "nvrtc: no cubin for %s", arch);
    }
    fdt_sb_putn(image, cubin, n);
    free(cubin);
    p_nvrtcDestroyProgram(&prog);
    fdt_rt_parse_ptxas(fdt_sb_str(log), kernel, res);
    return 0;
}

/* cuobjdump -sass, else nvdisasm, from $CUDA_HOME/bin, /usr/local/cuda/bin or $PATH. */
static int cuda_disassemble(const char *image, size_t n, const char *arch, fdt_sb *out,
                            fdt_err *e)
{
    static const char *const tools[] = {"cuobjdump", "nvdisasm"};
    const char *home = getenv("CUDA_HOME");
    char tool[1024] = "", cand[1024];
    int which = -1;
    for (int t = 0; t < 2 && which < 0; t++) {
        const char *dirs[] = {home && *home ? home : NULL, "/usr/local/cuda", ""};
        for (int d = 0; d < 3 && which < 0; d++) {
            if (!dirs[d])
                continue;
            if (*dirs[d])
                snprintf(cand, sizeof cand, "%s/bin/%s", dirs[d], tools[t]);
            else
                snprintf(cand, sizeof cand, "%s", tools[t]); /* on $PATH */
            if (fdt_find_program(cand, tool, sizeof tool) == 0)
                which = t;
        }
    }
    if (which < 0)
        return fdt_err_set(e, "cuda: no disassembler for the %s cubin: neither cuobjdump nor "
                              "nvdisasm is in $CUDA_HOME/bin, /usr/local/cuda/bin or on $PATH; "
                              "install the CUDA toolkit's cuobjdump (package cuda-cuobjdump) or "
                              "nvdisasm (cuda-nvdisasm)", arch);
    const char *argv[] = {tool, which == 0 ? "-sass" : "@FILE", which == 0 ? "@FILE" : NULL, NULL};
    char what[128];
    snprintf(what, sizeof what, "cuda: disassembly for %s failed", arch);
    fdt_sb err;
    fdt_sb_init(&err);
    int rc = fdt_rt_run_on_image(what, argv, "kernel.cubin", image, n, out, &err, e);
    fdt_sb_free(&err);
    return rc;
}

/* ---------------------------------------------------------------- driver */

static void *cu_lib;   /* opened, its symbols resolved */
static int cu_ready;   /* cuInit succeeded */
static CUresult cu_last;
static CUdevice cu_dev;
static CUcontext cu_ctx;
DECL(cuInit);
DECL(cuDriverGetVersion);
DECL(cuDeviceGetCount);
DECL(cuDeviceGet);
DECL(cuDeviceGetName);
DECL(cuDeviceGetAttribute);
DECL(cuDeviceTotalMem);
DECL(cuDeviceGetUuid);
DECL(cuDevicePrimaryCtxRetain);
DECL(cuCtxSetCurrent);
DECL(cuCtxSynchronize);
DECL(cuMemGetInfo);
DECL(cuMemAlloc);
DECL(cuMemFree);
DECL(cuMemcpyHtoD);
DECL(cuMemcpyDtoH);
DECL(cuMemcpyDtoDAsync);
DECL(cuMemsetD8Async);
DECL(cuModuleLoadData);
DECL(cuModuleGetFunction);
DECL(cuModuleUnload);
DECL(cuLaunchKernel);
DECL(cuFuncSetAttribute);
DECL(cuEventCreate);
DECL(cuEventDestroy);
DECL(cuEventRecord);
DECL(cuEventElapsedTime);
DECL(cuGetErrorName);
DECL(cuGetErrorString);
DECL(cuMemHostAlloc);
DECL(cuMemFreeHost);
DECL(cuMemHostGetDevicePointer);
DECL(cuMemHostRegister);
DECL(cuMemHostUnregister);
DECL(cuStreamCreate);
DECL(cuStreamDestroy);
DECL(cuMemcpyHtoDAsync);
DECL(cuMemcpyDtoHAsync);
DECL(cuStreamWaitEvent);
DECL(cuStreamSynchronize);
DECL(cuMemcpy3DAsync);
DECL(cuTensorMapEncodeTiled); /* optional (CUDA 12 on): NULL without it */

/* libcuda, its symbols resolved; no device touched (cuInit is load_driver's). */
static int open_driver(fdt_err *e)
{
    if (cu_lib)
        return 0;
    static const char *const names[] = {"libcuda.so.1", NULL};
    const char *loader[] = {""};
    fdt_rt_dl d;
    fdt_sb why;
    fdt_sb_init(&why);
    int rc = fdt_rt_dl_open(loader, 1, names, &d, &why);
    if (rc)
        fdt_err_set(e, "cuda: driver library libcuda.so.1 not found (%s)", fdt_sb_str(&why));
    fdt_sb_free(&why);
    if (rc)
        return -1;
    void *lib = d.lib;
    const char *libname = d.path;
    SYM(lib, cuInit);
    SYM(lib, cuDriverGetVersion);
    SYM(lib, cuDeviceGetCount);
    SYM(lib, cuDeviceGet);
    SYM(lib, cuDeviceGetName);
    SYM(lib, cuDeviceGetAttribute);
    SYM(lib, cuDeviceTotalMem);
    SYM(lib, cuDeviceGetUuid);
    SYM(lib, cuDevicePrimaryCtxRetain);
    SYM(lib, cuCtxSetCurrent);
    SYM(lib, cuCtxSynchronize);
    SYM(lib, cuMemGetInfo);
    SYM(lib, cuMemAlloc);
    SYM(lib, cuMemFree);
    SYM(lib, cuMemcpyHtoD);
    SYM(lib, cuMemcpyDtoH);
    SYM(lib, cuMemcpyDtoDAsync);
    SYM(lib, cuMemsetD8Async);
    SYM(lib, cuModuleLoadData);
    SYM(lib, cuModuleGetFunction);
    SYM(lib, cuModuleUnload);
    SYM(lib, cuLaunchKernel);
    SYM(lib, cuFuncSetAttribute);
    SYM(lib, cuEventCreate);
    SYM(lib, cuEventDestroy);
    SYM(lib, cuEventRecord);
    SYM(lib, cuEventElapsedTime);
    SYM(lib, cuGetErrorName);
    SYM(lib, cuGetErrorString);
    SYM(lib, cuMemHostAlloc);
    SYM(lib, cuMemFreeHost);
    SYM(lib, cuMemHostGetDevicePointer);
    SYM(lib, cuMemHostRegister);
    SYM(lib, cuMemHostUnregister);
    SYM(lib, cuStreamCreate);
    SYM(lib, cuStreamDestroy);
    SYM(lib, cuMemcpyHtoDAsync);
    SYM(lib, cuMemcpyDtoHAsync);
    SYM(lib, cuStreamWaitEvent);
    SYM(lib, cuStreamSynchronize);
    SYM(lib, cuMemcpy3DAsync);
    *(void **)&p_cuTensorMapEncodeTiled = dlsym(lib, "cuTensorMapEncodeTiled");
    cu_lib = lib;
    return 0;
}

static int load_driver(fdt_err *e)
{
    if (cu_ready)
        return 0;
    if (open_driver(e))
        return -1;
    CUresult r = p_cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        p_cuGetErrorName(r, &name);
        return fdt_err_set(e, "cuda: cuInit failed: %s (no usable NVIDIA GPU or driver)", name);
    }
    cu_ready = 1;
    return 0;
}

/* The libraries: libcuda with its API version and the driver's (NVML's), NVRTC. */
static int cuda_libraries(fdt_rt_lib *libs, int max)
{
    if (max < 2)
        return 0;
    fdt_err e;
    memset(libs, 0, 2 * sizeof *libs);
    snprintf(libs[0].role, sizeof libs[0].role, "driver");
    snprintf(libs[1].role, sizeof libs[1].role, "NVRTC");
    if (open_driver(&e) == 0) {
        int dv = 0;
        char drv[32];
        p_cuDriverGetVersion(&dv); /* needs no cuInit */
        const char *from = fdt_rt_nvidia_driver(0, drv, sizeof drv);
        fdt_rt_dl_path((void *)p_cuDriverGetVersion, libs[0].path, sizeof libs[0].path);
        snprintf(libs[0].version, sizeof libs[0].version, "CUDA %d.%d, driver %s%s", dv / 1000,
                 dv % 1000 / 10, drv, *from ? " (NVML)" : "");
    } else {
        snprintf(libs[0].note, sizeof libs[0].note, "%s", e.msg);
    }
    if (cuda_compiler_version(libs[1].version, sizeof libs[1].version, &e) == 0)
        fdt_rt_dl_path((void *)p_nvrtcVersion, libs[1].path, sizeof libs[1].path);
    else
        snprintf(libs[1].note, sizeof libs[1].note, "%s", e.msg);
    for (int i = 0; i < 2; i++)
        snprintf(libs[i].backend, sizeof libs[i].backend, "cuda");
    return 2;
}

/* Formats a driver error as "what: CUDA_ERROR_X (description)" and remembers it. */
static int cu_fail(fdt_err *e, const char *what, CUresult r)
{
    cu_last = r;
    const char *name = "?", *desc = "";
    if (p_cuGetErrorName)
        p_cuGetErrorName(r, &name);
    if (p_cuGetErrorString)
        p_cuGetErrorString(r, &desc);
    return fdt_err_set(e, "%s: %s (%s)", what, name, desc);
}

#define CU(call, what)                                  \
    do {                                                \
        CUresult r_ = (call);                           \
        if (r_ != CUDA_SUCCESS)                         \
            return cu_fail(e, what, r_);                \
    } while (0)

static int cuda_device_count(int *n, fdt_err *e)
{
    *n = 0;
    if (load_driver(e))
        return -1;
    CU(p_cuDeviceGetCount(n), "cuDeviceGetCount");
    return 0;
}

static int attr(CUdevice d, CUdevice_attribute a)
{
    int v = 0;
    if (p_cuDeviceGetAttribute(&v, a, d) != CUDA_SUCCESS)
        return -1;
    return v;
}

static int cuda_device_info(int idx, fdt_device *info, fdt_err *e)
{
    fdt_device_init(info);
    if (load_driver(e))
        return -1;
    CUdevice d;
    CU(p_cuDeviceGet(&d, idx), "cuDeviceGet");
    snprintf(info->backend, sizeof info->backend, "cuda");
    snprintf(info->vendor, sizeof info->vendor, "NVIDIA");
    info->index = idx;
    info->live = 1;
    CU(p_cuDeviceGetName(info->name, sizeof info->name, d), "cuDeviceGetName");
    int maj = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    int min = attr(d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    snprintf(info->arch, sizeof info->arch, "sm_%d%d", maj, min);
    info->compute_units = attr(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info->warp_size = attr(d, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    info->max_threads_per_block = attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    info->shared_per_block = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    info->shared_per_block_optin = attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    info->regs_per_block = attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    info->l2_bytes = attr(d, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    info->clock_khz = attr(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    info->mem_clock_khz = attr(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    info->mem_bus_bits = attr(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    if (info->mem_clock_khz > 0 && info->mem_bus_bits > 0) /* double data rate */
        info->peak_bw_gbs = 2.0 * info->mem_clock_khz * 1e3 * (info->mem_bus_bits / 8) / 1e9;
    size_t mem = 0;
    CU(p_cuDeviceTotalMem(&mem, d), "cuDeviceTotalMem");
    info->mem_bytes = (int64_t)mem;
    CUuuid u;
    if (p_cuDeviceGetUuid(&u, d) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(info->uuid, sizeof info->uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
    }
    snprintf(info->pci, sizeof info->pci, "%04x:%02x:%02x",
             attr(d, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID), attr(d, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
             attr(d, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
    int dv = 0;
    p_cuDriverGetVersion(&dv);
    snprintf(info->driver_source, sizeof info->driver_source, "%s",
             fdt_rt_nvidia_driver(dv, info->driver_version, sizeof info->driver_version));
    fdt_err ke;
    fdt_rt_nvidia_clocks(info->pci, &info->clocks, &ke); /* unknown without NVML */
    snprintf(info->runtime_version, sizeof info->runtime_version, "driver API %d.%d", dv / 1000,
             dv % 1000 / 10);
    fdt_err ce;
    if (cuda_compiler_version(info->compiler_version, sizeof info->compiler_version, &ce))
        snprintf(info->compiler_version, sizeof info->compiler_version, "unavailable");
    return 0;
}

static int cuda_open(int idx, fdt_err *e)
{
    if (load_driver(e))
        return -1;
    CU(p_cuDeviceGet(&cu_dev, idx), "cuDeviceGet");
    CU(p_cuDevicePrimaryCtxRetain(&cu_ctx, cu_dev), "cuDevicePrimaryCtxRetain");
    CU(p_cuCtxSetCurrent(cu_ctx), "cuCtxSetCurrent");
    return 0;
}

/* The PCI address of the opened device, as fdt_device.pci writes it. */
static void cu_pci(char *buf, size_t n)
{
    snprintf(buf, n, "%04x:%02x:%02x", attr(cu_dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID),
             attr(cu_dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID),
             attr(cu_dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID));
}

static int cuda_clocks(fdt_clocks *c, fdt_err *e)
{
    char pci[24];
    cu_pci(pci, sizeof pci);
    return fdt_rt_nvidia_clocks(pci, c, e);
}

static int cuda_mem_info(size_t *free_bytes, size_t *total, fdt_err *e)
{
    CU(p_cuMemGetInfo(free_bytes, total), "cuMemGetInfo");
    return 0;
}

static int cuda_alloc(size_t bytes, uint64_t *ptr, fdt_err *e)
{
    CUdeviceptr p = 0;
    CUresult r = p_cuMemAlloc(&p, bytes);
    if (r != CUDA_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "cuMemAlloc(%.2f GiB)", bytes / 1073741824.0);
        return cu_fail(e, what, r);
    }
    *ptr = (uint64_t)p;
    return 0;
}

static void cuda_free(uint64_t ptr)
{
    if (ptr)
        p_cuMemFree((CUdeviceptr)ptr);
}

static int cuda_copy_h2d(uint64_t dst, const void *src, size_t n, fdt_err *e)
{
    CU(p_cuMemcpyHtoD((CUdeviceptr)dst, src, n), "cuMemcpyHtoD");
    return 0;
}

static int cuda_copy_d2h(void *dst, uint64_t src, size_t n, fdt_err *e)
{
    CU(p_cuMemcpyDtoH(dst, (CUdeviceptr)src, n), "cuMemcpyDtoH");
    return 0;
}

static int cuda_copy_d2d_async(uint64_t dst, uint64_t src, size_t n, fdt_err *e)
{
    CU(p_cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, n, 0), "cuMemcpyDtoDAsync");
    return 0;
}

static int cuda_memset_async(uint64_t dst, unsigned char v, size_t n, fdt_err *e)
{
    CU(p_cuMemsetD8Async((CUdeviceptr)dst, v, n, 0), "cuMemsetD8Async");
    return 0;
}

static int cuda_module_load(const void *image, size_t n, void **module, fdt_err *e)
{
    (void)n;
    CUmodule m;
    CU(p_cuModuleLoadData(&m, image), "cuModuleLoadData");
    *module = m;
    return 0;
}

static int cuda_module_function(void *module, const char *kernel, void **fn, fdt_err *e)
{
    CUfunction f;
    CUresult r = p_cuModuleGetFunction(&f, (CUmodule)module, kernel);
    if (r != CUDA_SUCCESS) {
        char what[160];
        snprintf(what, sizeof what, "cuModuleGetFunction(%s)", kernel);
        return cu_fail(e, what, r);
    }
    *fn = f;
    return 0;
}

static void cuda_module_unload(void *module)
{
    if (module)
        p_cuModuleUnload((CUmodule)module);
}

static int cuda_allow_shared(void *fn, unsigned bytes, fdt_err *e)
{
    CU(p_cuFuncSetAttribute((CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            (int)bytes),
       "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    return 0;
}


static int cuda_launch_on(void *fn, const uint32_t grid[3], const uint32_t block[3],
                          unsigned shared, void **args, void *s, fdt_err *e);

static int cuda_launch(void *fn, const uint32_t grid[3], const uint32_t block[3], unsigned shared,
                       void **args, fdt_err *e)
{
    return cuda_launch_on(fn, grid, block, shared, args, NULL, e);
}

static int cuda_event_create(void **ev, fdt_err *e)
{
    CUevent x;
    CU(p_cuEventCreate(&x, CU_EVENT_DEFAULT), "cuEventCreate");
    *ev = x;
    return 0;
}

static void cuda_event_destroy(void *ev)
{
    if (ev)
        p_cuEventDestroy((CUevent)ev);
}

static int cuda_event_record(void *ev, fdt_err *e)
{
    CU(p_cuEventRecord((CUevent)ev, 0), "cuEventRecord");
    return 0;
}

static int cuda_event_elapsed(void *a, void *b, float *ms, fdt_err *e)
{
    CU(p_cuEventElapsedTime(ms, (CUevent)a, (CUevent)b), "cuEventElapsedTime");
    return 0;
}

static int cuda_sync(fdt_err *e)
{
    CU(p_cuCtxSynchronize(), "cuCtxSynchronize");
    return 0;
}

/* Pinned and mapped (DEVICEMAP), so that host_device_ptr can give the device's address. */
static int cuda_host_alloc(size_t bytes, void **p, fdt_err *e)
{
    *p = NULL;
    CU(p_cuMemHostAlloc(p, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
       "cuMemHostAlloc");
    return 0;
}

static void cuda_host_free(void *p)
{
    if (p)
        p_cuMemFreeHost(p);
}

/* Pinned and mapped in place, as cuda_host_alloc's memory is. */
static int cuda_host_register(void *p, size_t bytes, fdt_err *e)
{
    CU(p_cuMemHostRegister(p, bytes, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE),
       "cuMemHostRegister");
    return 0;
}

static void cuda_host_unregister(void *p)
{
    if (p)
        p_cuMemHostUnregister(p);
}

static int cuda_host_device_ptr(void *p, uint64_t *dptr, fdt_err *e)
{
    CUdeviceptr d = 0;
    if (attr(cu_dev, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) != 1)
        return fdt_err_set(e, "cuda: this device cannot map host memory");
    CU(p_cuMemHostGetDevicePointer(&d, p, 0), "cuMemHostGetDevicePointer");
    *dptr = (uint64_t)d;
    return 0;
}

/* Pageable memory through the host's page tables (GH200's C2C, HMM), or an integrated GPU. */
static int cuda_unified(int *u, fdt_err *e)
{
    (void)e;
    *u = attr(cu_dev, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES) == 1 ||
         attr(cu_dev, CU_DEVICE_ATTRIBUTE_INTEGRATED) == 1;
    return 0;
}

static int cuda_stream_create(void **s, fdt_err *e)
{
    CUstream x;
    CU(p_cuStreamCreate(&x, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    *s = x;
    return 0;
}

static void cuda_stream_destroy(void *s)
{
    if (s)
        p_cuStreamDestroy((CUstream)s);
}

static int cuda_launch_on(void *fn, const uint32_t grid[3], const uint32_t block[3],
                          unsigned shared, void **args, void *s, fdt_err *e)
{
    CU(p_cuLaunchKernel((CUfunction)fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                        shared, (CUstream)s, args, NULL),
       "cuLaunchKernel");
    return 0;
}

static int cuda_copy_h2d_on(uint64_t dst, const void *src, size_t n, void *s, fdt_err *e)
{
    CU(p_cuMemcpyHtoDAsync((CUdeviceptr)dst, src, n, (CUstream)s), "cuMemcpyHtoDAsync");
    return 0;
}

static int cuda_copy_d2h_on(void *dst, uint64_t src, size_t n, void *s, fdt_err *e)
{
    CU(p_cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, n, (CUstream)s), "cuMemcpyDtoHAsync");
    return 0;
}

static int cuda_copy_d2d_on(uint64_t dst, uint64_t src, size_t n, void *s, fdt_err *e)
{
    CU(p_cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, n, (CUstream)s),
       "cuMemcpyDtoDAsync");
    return 0;
}

static int cuda_event_record_on(void *ev, void *s, fdt_err *e)
{
    CU(p_cuEventRecord((CUevent)ev, (CUstream)s), "cuEventRecord");
    return 0;
}

static int cuda_stream_wait_event(void *s, void *ev, fdt_err *e)
{
    CU(p_cuStreamWaitEvent((CUstream)s, (CUevent)ev, 0), "cuStreamWaitEvent");
    return 0;
}

static int cuda_stream_sync(void *s, fdt_err *e)
{
    CU(p_cuStreamSynchronize((CUstream)s), "cuStreamSynchronize");
    return 0;
}

/* One 3D copy: the slice stride must be a whole number of lines on each side. */
/* The stream's tensor map (fdtuned_tmap): a 3D tiled map of 4- or 8-byte floats, no
 * interleave, no swizzle, L2 promotion of 256 bytes, zeros outside. */
static int cuda_tensor_map(const fdtuned_tmap *t, int esize, void *map, fdt_err *e)
{
    if (!p_cuTensorMapEncodeTiled)
        return fdt_err_set(e, "cuda: the driver has no cuTensorMapEncodeTiled (CUDA 12 or "
                              "later): bulk=1 kernels cannot run");
    FDT_ASSERT(esize == 4 || esize == 8, "f32 or f64");
    const cuuint64_t dim[3] = {t->dim[0], t->dim[1], t->dim[2]};
    const cuuint64_t stride[2] = {t->stride[0], t->stride[1]};
    const cuuint32_t box[3] = {t->box[0], t->box[1], 1}, step[3] = {1, 1, 1};
    CU(p_cuTensorMapEncodeTiled((CUtensorMap *)map,
                                esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                                3, (void *)(uintptr_t)t->base, dim, stride, box, step,
                                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
       "cuTensorMapEncodeTiled");
    return 0;
}

static int cuda_copy_box_on(const fdt_rt_box_copy *c, void *s, fdt_err *e)
{
    if (c->src_slice % c->src_line || c->dst_slice % c->dst_line)
        return fdt_err_set(e, "cuda: box copy: a slice stride that is no whole number of lines");
    CUDA_MEMCPY3D m;
    memset(&m, 0, sizeof m);
    m.srcMemoryType = c->src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    m.srcHost = (const void *)(uintptr_t)c->src;
    m.srcDevice = (CUdeviceptr)c->src;
    m.srcPitch = c->src_line;
    m.srcHeight = c->src_slice / c->src_line;
    m.dstMemoryType = c->dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    m.dstHost = (void *)(uintptr_t)c->dst;
    m.dstDevice = (CUdeviceptr)c->dst;
    m.dstPitch = c->dst_line;
    m.dstHeight = c->dst_slice / c->dst_line;
    m.WidthInBytes = c->width;
    m.Height = c->rows;
    m.Depth = c->planes;
    CU(p_cuMemcpy3DAsync(&m, (CUstream)s), "cuMemcpy3DAsync");
    return 0;
}

static int cuda_context_lost(void)
{
    switch (cu_last) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return 1;
    default:
        return 0;
    }
}

const fdt_rt_backend fdt_rt_cuda = {
    .name = "cuda",
    .vendor = "NVIDIA",
    .example_arch = "sm_90",
    .options = CUDA_OPTIONS_TEXT,
    .compiler_version = cuda_compiler_version,
    .compiler_id = cuda_compiler_id,
    .check_target = cuda_check_target,
    .compile = cuda_compile,
    .disassemble = cuda_disassemble,
    .libraries = cuda_libraries,
    .device_count = cuda_device_count,
    .device_info = cuda_device_info,
    .open = cuda_open,
    .clocks = cuda_clocks,
    .mem_info = cuda_mem_info,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_h2d = cuda_copy_h2d,
    .copy_d2h = cuda_copy_d2h,
    .copy_d2d_async = cuda_copy_d2d_async,
    .memset_async = cuda_memset_async,
    .module_load = cuda_module_load,
    .module_function = cuda_module_function,
    .module_unload = cuda_module_unload,
    .allow_shared = cuda_allow_shared,
    .launch = cuda_launch,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_elapsed = cuda_event_elapsed,
    .sync = cuda_sync,
    .context_lost = cuda_context_lost,
    .host_alloc = cuda_host_alloc,
    .host_free = cuda_host_free,
    .host_register = cuda_host_register,
    .host_unregister = cuda_host_unregister,
    .host_device_ptr = cuda_host_device_ptr,
    .unified = cuda_unified,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .launch_on = cuda_launch_on,
    .copy_h2d_on = cuda_copy_h2d_on,
    .copy_d2h_on = cuda_copy_d2h_on,
    .copy_d2d_on = cuda_copy_d2d_on,
    .event_record_on = cuda_event_record_on,
    .stream_wait_event = cuda_stream_wait_event,
    .stream_sync = cuda_stream_sync,
    .copy_box_on = cuda_copy_box_on,
    .tensor_map = cuda_tensor_map,
};
