/* A stand-in for the CUDA driver (libcuda.so.1) for the tests of --gpu auto: built as
 * fake-cuda/libcuda.so.1 (only where the cuda backend is, with CUDA's cuda.h) and found by the
 * dynamic loader through LD_LIBRARY_PATH, the search fdtune's cuda backend uses for the real
 * one. It shows one GPU as the driver of an H100 SXM names it, "NVIDIA H100 80GB HBM3", sm_90
 * with 132 SMs, so that fdtune's device discovery sees a visible GPU on a machine without
 * one; FAKE_CUDA_DEVICES=0 makes it show none. Nothing can run on it: contexts, memory,
 * modules and launches fail with CUDA_ERROR_NOT_SUPPORTED. With FAKE_CUDA_MEMORY=1 its
 * memory works instead (host memory behind device pointers, at most FAKE_MAX bytes at a time
 * so that a test stays small): contexts, allocations, copies (memcpy, done when the call
 * returns), pinned host memory, streams and events (the host's clock), so that a worker
 * starts and measures copies and the host link; modules and launches still fail. Every
 * function fdtune resolves is here, with cuda.h's own prototype (its macros give the
 * versioned names, cuMemAlloc_v2). */
#include <cuda.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NO CUDA_ERROR_NOT_SUPPORTED

static int ndevices(void)
{
    const char *v = getenv("FAKE_CUDA_DEVICES");
    return v && *v ? atoi(v) : 1;
}

static int valid(CUdevice d) { return d >= 0 && d < ndevices(); }

/* FAKE_CUDA_MEMORY=1: memory, copies, streams and events work. */
static int runs(void)
{
    const char *v = getenv("FAKE_CUDA_MEMORY");
    return v && !strcmp(v, "1");
}

#define FAKE_MAX ((size_t)256 << 20) /* the largest allocation the fake device makes */

#define RUNS_OR_NO (runs() ? CUDA_SUCCESS : NO)

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
        {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1},
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
    *s = r == CUDA_SUCCESS                 ? "CUDA_SUCCESS"
         : r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
                                           : "CUDA_ERROR_NOT_SUPPORTED";
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == CUDA_SUCCESS                 ? "no error"
         : r == CUDA_ERROR_OUT_OF_MEMORY ? "above what the fake driver of fdtune's tests allocates"
                                           : "the fake driver of fdtune's tests runs nothing";
    return CUDA_SUCCESS;
}

/* Contexts and memory: host memory with FAKE_CUDA_MEMORY=1, else nothing runs. */
CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    *c = (CUcontext)(uintptr_t)1;
    return valid(d) ? RUNS_OR_NO : CUDA_ERROR_INVALID_DEVICE;
}
CUresult cuCtxSetCurrent(CUcontext c) { (void)c; return RUNS_OR_NO; }
CUresult cuCtxSynchronize(void) { return RUNS_OR_NO; }
CUresult cuMemGetInfo(size_t *f, size_t *t)
{
    *f = FAKE_MAX * 2;
    *t = FAKE_MAX * 4;
    return RUNS_OR_NO;
}
/* n bytes of host memory, or why not. */
static CUresult fake_alloc(void **p, size_t n)
{
    *p = NULL;
    if (!runs())
        return NO;
    if (n > FAKE_MAX || !(*p = malloc(n ? n : 1)))
        return CUDA_ERROR_OUT_OF_MEMORY;
    return CUDA_SUCCESS;
}
CUresult cuMemAlloc(CUdeviceptr *p, size_t n)
{
    void *h;
    CUresult r = fake_alloc(&h, n);
    *p = (CUdeviceptr)(uintptr_t)h;
    return r;
}
CUresult cuMemFree(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return RUNS_OR_NO;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
    (void)flags;
    return fake_alloc(p, n);
}
CUresult cuMemFreeHost(void *p)
{
    free(p);
    return RUNS_OR_NO;
}
/* Host memory registered in place: nothing to pin here. */
CUresult cuMemHostRegister(void *p, size_t n, unsigned int flags)
{
    (void)p;
    (void)n;
    (void)flags;
    return RUNS_OR_NO;
}
CUresult cuMemHostUnregister(void *p)
{
    (void)p;
    return RUNS_OR_NO;
}
CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
    (void)flags;
    *d = (CUdeviceptr)(uintptr_t)p;
    return RUNS_OR_NO;
}
/* Copies of n bytes from s to d when memory works. */
static CUresult fake_copy(void *d, const void *s, size_t n)
{
    if (!runs())
        return NO;
    memmove(d, s, n);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    return fake_copy((void *)(uintptr_t)d, s, n);
}
CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    return fake_copy(d, (const void *)(uintptr_t)s, n);
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    return fake_copy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
    (void)st;
    return fake_copy((void *)(uintptr_t)d, s, n);
}
CUresult cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st)
{
    (void)st;
    return fake_copy(d, (const void *)(uintptr_t)s, n);
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st)
{
    (void)st;
    if (!runs())
        return NO;
    memset((void *)(uintptr_t)d, v, n);
    return CUDA_SUCCESS;
}
CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D *m, CUstream st)
{
    (void)st;
    if (!runs())
        return NO;
    const char *src = m->srcMemoryType == CU_MEMORYTYPE_HOST ? (const char *)m->srcHost
                                                              : (const char *)m->srcDevice;
    char *dst = m->dstMemoryType == CU_MEMORYTYPE_HOST ? (char *)m->dstHost
                                                        : (char *)m->dstDevice;
    for (size_t k = 0; k < m->Depth; k++)
        for (size_t j = 0; j < m->Height; j++)
            memmove(dst + (k * m->dstHeight + j) * m->dstPitch,
                    src + (k * m->srcHeight + j) * m->srcPitch, m->WidthInBytes);
    return CUDA_SUCCESS;
}
/* Streams: every call is done when it returns, so a stream is a token. */
CUresult cuStreamCreate(CUstream *st, unsigned int flags)
{
    (void)flags;
    *st = (CUstream)(uintptr_t)2;
    return RUNS_OR_NO;
}
CUresult cuStreamDestroy(CUstream st) { (void)st; return RUNS_OR_NO; }
CUresult cuStreamWaitEvent(CUstream st, CUevent ev, unsigned int flags)
{
    (void)st, (void)ev, (void)flags;
    return RUNS_OR_NO;
}
CUresult cuStreamSynchronize(CUstream st) { (void)st; return RUNS_OR_NO; }
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
/* Events hold the host's monotonic clock when recorded. */
CUresult cuEventCreate(CUevent *ev, unsigned int flags)
{
    (void)flags;
    *ev = NULL;
    if (!runs())
        return NO;
    *ev = calloc(1, sizeof(double));
    return *ev ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuEventDestroy(CUevent ev)
{
    free(ev);
    return RUNS_OR_NO;
}
CUresult cuEventRecord(CUevent ev, CUstream st)
{
    (void)st;
    if (!runs())
        return NO;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    *(double *)(void *)ev = (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
    return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    if (!runs())
        return NO;
    *ms = (float)((*(double *)(void *)b - *(double *)(void *)a) * 1e3);
    return CUDA_SUCCESS;
}
