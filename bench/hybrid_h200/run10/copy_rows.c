/* The record of bench/hybrid_h200/run10: pitched copies of narrow rows between an H200 and its host
 * (issue 29 face copies), a driver-API program run once on the device (nvcc-free: gcc copy_rows.c
 * -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda). Its output: copy_rows.txt. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CK(x)                                                                                      \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_) {                                                                                  \
            const char *s;                                                                         \
            cuGetErrorString(r_, &s);                                                              \
            fprintf(stderr, "%s: %s\n", #x, s);                                                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
static CUstream s1, s2;
static CUevent e0, e1;
typedef struct {
    int kind;
    size_t w, h, spitch, dpitch;
} job; /* kind 0 D2H 1 H2D 2 D2D */
static CUdeviceptr dbig, dsmall;
static char *hbig, *hsmall;
static void fill(CUDA_MEMCPY2D *c, int kind, size_t w, size_t h, size_t sp, size_t dp) {
    memset(c, 0, sizeof *c);
    c->WidthInBytes = w;
    c->Height = h;
    if (kind == 0) {
        c->srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c->srcDevice = dbig;
        c->srcPitch = sp;
        c->dstMemoryType = CU_MEMORYTYPE_HOST;
        c->dstHost = hbig;
        c->dstPitch = dp;
    }
    if (kind == 1) {
        c->srcMemoryType = CU_MEMORYTYPE_HOST;
        c->srcHost = hbig;
        c->srcPitch = sp;
        c->dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c->dstDevice = dbig;
        c->dstPitch = dp;
    }
    if (kind == 2) {
        c->srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c->srcDevice = dbig;
        c->srcPitch = sp;
        c->dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c->dstDevice = dsmall;
        c->dstPitch = dp;
    }
    if (kind == 3) {
        c->srcMemoryType = CU_MEMORYTYPE_DEVICE;
        c->srcDevice = dsmall;
        c->srcPitch = sp;
        c->dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c->dstDevice = dbig;
        c->dstPitch = dp;
    }
}
static double timeit(int kind, size_t w, size_t h, size_t sp, size_t dp, int both) {
    CUDA_MEMCPY2D c, c2;
    fill(&c, kind, w, h, sp, dp);
    fill(&c2, 1 - kind, w, h, dp, sp);
    float best = 1e30;
    for (int r = 0; r < 7; r++) {
        CK(cuEventRecord(e0, s1));
        CK(cuMemcpy2DAsync(&c, s1));
        if (both) {
            CK(cuMemcpy2DAsync(&c2, s2));
        }
        CK(cuEventRecord(e1, s1));
        CK(cuStreamSynchronize(s1));
        CK(cuStreamSynchronize(s2));
        float ms;
        CK(cuEventElapsedTime(&ms, e0, e1));
        if (r && ms < best)
            best = ms;
    }
    return best;
}
int main(void) {
    CUdevice d;
    CUcontext ctx;
    CK(cuInit(0));
    CK(cuDeviceGet(&d, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, d));
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, 0));
    size_t big = (size_t)1 << 30;
    CK(cuMemAlloc(&dbig, big));
    CK(cuMemAlloc(&dsmall, big));
    CK(cuMemHostAlloc((void **)&hbig, big, 0));
    CK(cuMemsetD8(dbig, 1, big));
    memset(hbig, 2, big);
    const char *kn[] = {"D2H", "H2D", "D2D-pack", "D2D-unpack"};
    size_t widths[] = {16, 32, 64, 128, 256, 1024, 1920};
    size_t rows = 230400; /* 480x480: a 512^3 x face */
    printf("kind width rows pitch ms GB/s ns/row\n");
    for (int k = 0; k < 4; k++)
        for (int wi = 0; wi < 7; wi++) {
            size_t w = widths[wi], h = rows;
            if (w * h > big / 4)
                h = big / 4 / w;
            size_t sp = (k == 3) ? w : 2048 + 64 * (w > 1024),
                   dp = (k == 2) ? w : (k == 3 ? 2048 + 64 * (w > 1024) : 2048 + 64 * (w > 1024));
            if (k == 0 || k == 1) {
                sp = 2112;
                dp = 2112;
            }
            double ms = timeit(k, w, h, sp, dp, 0);
            printf("%s %zu %zu %zu %.4f %.2f %.3f\n", kn[k], w, h, sp, ms, w * h / ms * 1e-6,
                   ms * 1e6 / h);
        }
    /* pitched D2H with pitched H2D at once */
    for (int wi = 0; wi < 7; wi++) {
        size_t w = widths[wi], h = rows;
        double ms = timeit(0, w, h, 2112, 2112, 1);
        printf("both %zu %zu %.4f %.2f %.3f\n", w, h, ms, 2 * w * h / ms * 1e-6, ms * 1e6 / h);
    }
    /* contiguous */
    size_t sizes[] = {4096, 65536, 1 << 20, 7372800, 22 << 20};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 5; i++) {
            double ms = timeit(k, sizes[i], 1, sizes[i], sizes[i], 0);
            printf("contig-%s %zu %.4f %.2f\n", kn[k], sizes[i], ms, sizes[i] / ms * 1e-6);
        }
    return 0;
}
