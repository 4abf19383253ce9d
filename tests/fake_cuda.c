/* A stand-in for the CUDA driver (libcuda.so.1) for the tests of --gpu auto: built as
 * fake-cuda/libcuda.so.1 (only where the cuda backend is, with CUDA's cuda.h) and found by the
 * dynamic loader through LD_LIBRARY_PATH, the search fdtune's cuda backend uses for the real
 * one. It shows one GPU as the driver of an H100 SXM names it, "NVIDIA H100 80GB HBM3", sm_90
 * with 132 SMs, so that fdtune's device discovery sees a visible GPU on a machine without
 * one; FAKE_CUDA_DEVICES=0 makes it show none. Nothing can run on it: contexts, memory,
 * modules and launches fail with CUDA_ERROR_NOT_SUPPORTED. Every function fdtune resolves is
 * here, with cuda.h's own prototype (its macros give the versioned names, cuMemAlloc_v2). */
#include <cuda.h>
#include <stdlib.h>
#include <string.h>

#define NO CUDA_ERROR_NOT_SUPPORTED

static int ndevices(void)
{
    const char *v = getenv("FAKE_CUDA_DEVICES");
    return v && *v ? atoi(v) : 1;
}

static int valid(CUdevice d) { return d >= 0 && d < ndevices(); }

CUresult cuInit(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    *n = ndevices();
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return valid(ordinal) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    if (!valid(d) || len < 1)
        return CUDA_ERROR_INVALID_VALUE;
    strncpy(name, "NVIDIA H100 80GB HBM3", (size_t)len - 1);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    static const struct {
        CUdevice_attribute a;
        int v;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 52428800},
        {CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1980000},
        {CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 2619000},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 5120},
        {CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0x18},
    };
    if (!valid(d))
        return CUDA_ERROR_INVALID_DEVICE;
    *v = 0;
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if (attrs[i].a == a)
            *v = attrs[i].v;
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
    *bytes = (size_t)85017493504ULL;
    return valid(d) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d)
{
    memset(u, 0xfa, sizeof *u);
    return valid(d) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuGetErrorName(CUresult r, const char **s)
{
    *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : "CUDA_ERROR_NOT_SUPPORTED";
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == CUDA_SUCCESS ? "no error" : "the fake driver of fdtune's tests runs nothing";
    return CUDA_SUCCESS;
}

/* Nothing runs on the fake GPU. */
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)c, (void)d; return NO; }
CUresult cuCtxSetCurrent(CUcontext c) { (void)c; return NO; }
CUresult cuCtxSynchronize(void) { return NO; }
CUresult cuMemGetInfo(size_t *f, size_t *t) { (void)f, (void)t; return NO; }
CUresult cuMemAlloc(CUdeviceptr *p, size_t n) { (void)p, (void)n; return NO; }
CUresult cuMemFree(CUdeviceptr p) { (void)p; return NO; }
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    (void)d, (void)s, (void)n;
    return NO;
}
CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    (void)d, (void)s, (void)n;
    return NO;
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)d, (void)s, (void)n, (void)st;
    return NO;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st)
{
    (void)d, (void)v, (void)n, (void)st;
    return NO;
}
CUresult cuModuleLoadData(CUmodule *m, const void *image) { (void)m, (void)image; return NO; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)f, (void)m, (void)name;
    return NO;
}
CUresult cuModuleUnload(CUmodule m) { (void)m; return NO; }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream st, void **args,
                        void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)st,
        (void)args, (void)extra;
    return NO;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    (void)f, (void)a, (void)v;
    return NO;
}
CUresult cuEventCreate(CUevent *ev, unsigned int flags) { (void)ev, (void)flags; return NO; }
CUresult cuEventDestroy(CUevent ev) { (void)ev; return NO; }
CUresult cuEventRecord(CUevent ev, CUstream st) { (void)ev, (void)st; return NO; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    (void)ms, (void)a, (void)b;
    return NO;
}
