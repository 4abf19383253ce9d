/* ---- fdtune export: host side shared by the launchers (hipcc, or nvcc through the mapping) -
 * Which device is current, as the selection needs it: the device name, the architecture name
 * and the compute-unit count, queried once per device and cached (a property query costs far
 * more than a launch). Under nvcc without HIP, HIP's stream and error types are CUDA's, so
 * launcher signatures read the same on both platforms, and the part of the HIP runtime API a
 * program around the launchers needs (memory, copies, streams, events, synchronisation,
 * errors, devices: the names below, nothing else) maps onto CUDA's, so one source builds with
 * hipcc and with nvcc. */
#ifndef FDTUNED_HOST_V3
#define FDTUNED_HOST_V3

#if defined(FDTUNED_CUDA)
#include <cuda_runtime.h>
typedef cudaStream_t hipStream_t;
typedef cudaError_t hipError_t;
typedef cudaEvent_t hipEvent_t;
#ifndef hipSuccess
#define hipSuccess cudaSuccess
#endif
#ifndef hipErrorInvalidValue
#define hipErrorInvalidValue cudaErrorInvalidValue
#endif
#ifndef hipErrorNoDevice
#define hipErrorNoDevice cudaErrorNoDevice
#endif
#ifndef hipMalloc
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyDefault cudaMemcpyDefault
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipStreamCreate cudaStreamCreate
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipGetLastError cudaGetLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
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

/* The tensor map of a bulk=1 kernel (fdtuned_tmap_make) encoded into map (128 bytes, the
 * kernel's last argument): on NVIDIA by the CUDA driver's cuTensorMapEncodeTiled, which the
 * runtime finds (no -lcuda), as fdtune's worker encodes it; on AMD zeros (the kernels take the
 * parameter and do not read it). */
#if defined(FDTUNED_CUDA) || defined(__HIP_PLATFORM_NVIDIA__)
#include <cudaTypedefs.h>
static inline hipError_t fdtuned_tensor_map(const fdtuned_tmap *t, int esize, void *map)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode;
    cudaDriverEntryPointQueryResult q;
    cuuint64_t dim[3] = {t->dim[0], t->dim[1], t->dim[2]}, stride[2] = {t->stride[0], t->stride[1]};
    cuuint32_t box[3] = {t->box[0], t->box[1], 1}, step[3] = {1, 1, 1};
#if CUDART_VERSION >= 12050
    if (!encode && (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&encode,
                                                     12000, cudaEnableDefault, &q) != cudaSuccess ||
                    q != cudaDriverEntryPointSuccess))
        encode = 0;
#else
    if (!encode && (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&encode,
                                            cudaEnableDefault, &q) != cudaSuccess ||
                    q != cudaDriverEntryPointSuccess))
        encode = 0;
#endif
    if (!encode)
        return hipErrorInvalidValue; /* a driver without tensor maps (before CUDA 12) */
    return encode((CUtensorMap *)map,
                  esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
                  3, (void *)(size_t)t->base, dim, stride, box, step,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) ==
                   CUDA_SUCCESS
               ? hipSuccess
               : hipErrorInvalidValue;
}
#else
static inline hipError_t fdtuned_tensor_map(const fdtuned_tmap *t, int esize, void *map)
{
    unsigned char *m = (unsigned char *)map;
    for (int i = 0; i < 128; ++i)
        m[i] = 0;
    (void)t;
    (void)esize;
    return hipSuccess;
}
#endif

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

/* The current device as the selection needs it: its name ("NVIDIA H100 80GB HBM3", what
 * fdtune stored), architecture ("gfx90a:sramecc+:xnack-", "sm_90") and compute units, from
 * the HIP/CUDA device properties. The cache is per translation unit and takes no lock:
 * threads that ask about one device for the first time together store the same answer. */
static inline hipError_t fdtuned_current_device(const char **name, const char **arch, int *cus)
{
    static char names[FDTUNED_MAX_DEVICES][256], archs[FDTUNED_MAX_DEVICES][64];
    static int units[FDTUNED_MAX_DEVICES], known[FDTUNED_MAX_DEVICES];
    static char other_name[256], other_arch[64];
    int dev = 0, i, slot;
#if defined(FDTUNED_CUDA)
    cudaDeviceProp prop;
    cudaError_t err = cudaGetDevice(&dev);
#else
    hipDeviceProp_t prop;
    hipError_t err = hipGetDevice(&dev);
#endif
    if (err != hipSuccess)
        return err;
    slot = dev >= 0 && dev < FDTUNED_MAX_DEVICES;
    if (slot && known[dev]) {
        *name = names[dev];
        *arch = archs[dev];
        *cus = units[dev];
        return hipSuccess;
    }
#if defined(FDTUNED_CUDA)
    if ((err = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess)
        return err;
#else
    if ((err = hipGetDeviceProperties(&prop, dev)) != hipSuccess)
        return err;
#endif
    {
        char *nm = slot ? names[dev] : other_name, *ar = slot ? archs[dev] : other_arch;
        for (i = 0; i < 255 && prop.name[i]; i++)
            nm[i] = prop.name[i];
        nm[i] = 0;
#if defined(FDTUNED_CUDA)
        fdtuned_sm_name_(prop.major, prop.minor, ar);
#else
        /* gcnArchName "gfx90a:sramecc+:xnack-" is kept whole (the selection compares base
         * architectures); HIP on NVIDIA leaves it empty, and the compute capability names
         * it. */
        for (i = 0; i < 63 && prop.gcnArchName[i]; i++)
            ar[i] = prop.gcnArchName[i];
        ar[i] = 0;
        if (!ar[0])
            fdtuned_sm_name_(prop.major, prop.minor, ar);
#endif
        if (slot) {
            units[dev] = prop.multiProcessorCount;
            known[dev] = 1;
        }
        *name = nm;
        *arch = ar;
        *cus = prop.multiProcessorCount;
    }
    return hipSuccess;
}

#endif /* FDTUNED_HOST_V3 */
