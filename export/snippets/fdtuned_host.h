/* ---- fdtune export: host side shared by the launchers (hipcc, or nvcc through the mapping) -
 * Which device is current, as the selection needs it: the architecture name and the
 * compute-unit count, queried once per device and cached (a property query costs far more
 * than a launch). Under nvcc without HIP, HIP's stream and error types are CUDA's, so
 * launcher signatures read the same on both platforms. */
#ifndef FDTUNED_HOST_V1
#define FDTUNED_HOST_V1

#if defined(FDTUNED_CUDA)
#include <cuda_runtime.h>
typedef cudaStream_t hipStream_t;
typedef cudaError_t hipError_t;
#ifndef hipSuccess
#define hipSuccess cudaSuccess
#endif
#ifndef hipErrorInvalidValue
#define hipErrorInvalidValue cudaErrorInvalidValue
#endif
#define FDTUNED_LAST_ERROR() cudaGetLastError()
#else
#define FDTUNED_LAST_ERROR() hipGetLastError()
#endif

/* Lets a kernel take `bytes` of dynamic shared memory per block (the variants whose tiles
 * form a ring, lds=2): NVIDIA wants this opt-in above 48 KB; on AMD it checks the limit. */
static inline hipError_t fdtuned_allow_shared(const void *kernel, unsigned bytes)
{
#if defined(FDTUNED_CUDA)
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
#else
    return hipFuncSetAttribute(kernel, hipFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
#endif
}

#define FDTUNED_MAX_DEVICES 64

/* "sm_" + major + minor, e.g. sm_90, sm_100. */
static inline void fdtuned_sm_name_(int major, int minor, char *out)
{
    char digits[16];
    int n = 0, v = major * 10 + minor, k = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < 15);
    out[k++] = 's';
    out[k++] = 'm';
    out[k++] = '_';
    while (n)
        out[k++] = digits[--n];
    out[k] = 0;
}

/* The current device's architecture ("gfx90a", "sm_90") and compute units. The cache is
 * per translation unit and takes no lock: threads that ask about one device for the first
 * time together store the same answer. */
static inline hipError_t fdtuned_current_device(const char **arch, int *cus)
{
    static char archs[FDTUNED_MAX_DEVICES][64];
    static int units[FDTUNED_MAX_DEVICES], known[FDTUNED_MAX_DEVICES];
    static char other[64];
    int dev = 0;
    char *name;
#if defined(FDTUNED_CUDA)
    int major = 0, minor = 0, n = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess)
        return err;
    if (dev >= 0 && dev < FDTUNED_MAX_DEVICES && known[dev]) {
        *arch = archs[dev];
        *cus = units[dev];
        return cudaSuccess;
    }
    if ((err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) ||
        (err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) ||
        (err = cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev)))
        return err;
    name = dev >= 0 && dev < FDTUNED_MAX_DEVICES ? archs[dev] : other;
    fdtuned_sm_name_(major, minor, name);
#else
    hipDeviceProp_t prop;
    int n, i;
    hipError_t err = hipGetDevice(&dev);
    if (err != hipSuccess)
        return err;
    if (dev >= 0 && dev < FDTUNED_MAX_DEVICES && known[dev]) {
        *arch = archs[dev];
        *cus = units[dev];
        return hipSuccess;
    }
    if ((err = hipGetDeviceProperties(&prop, dev)) != hipSuccess)
        return err;
    n = prop.multiProcessorCount;
    name = dev >= 0 && dev < FDTUNED_MAX_DEVICES ? archs[dev] : other;
    /* gcnArchName "gfx90a:sramecc+:xnack-" is kept whole (the selection ignores the
     * features); HIP on NVIDIA leaves it empty, and the compute capability names it. */
    for (i = 0; i < 63 && prop.gcnArchName[i]; i++)
        name[i] = prop.gcnArchName[i];
    name[i] = 0;
    if (!name[0])
        fdtuned_sm_name_(prop.major, prop.minor, name);
#endif
    if (dev >= 0 && dev < FDTUNED_MAX_DEVICES) {
        units[dev] = n;
        known[dev] = 1;
    }
    *arch = name;
    *cus = n;
    return hipSuccess;
}

#endif /* FDTUNED_HOST_V1 */
