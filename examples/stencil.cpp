// The exported header on a GPU: d2x (second x derivative, radius 4, f32) of a smooth field by
// the header's launcher, which picks the variant tuned for this device and grid, checked
// against the same stencil on the CPU. One source for both platforms: compiled as HIP
// (hipcc's clang) or as CUDA (nvcc: the header then maps the HIP dialect and the HIP runtime
// calls used here onto CUDA and defines FDTUNED_CUDA).
// Usage: stencil [N] (an N^3 grid, default 256). Exit 0 PASS, 1 FAIL or no variant can run the
// grid, 2 a GPU error, 3 no GPU is visible.
#include "fdtuned.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hipError_t e_ = (call);                                                            \
        if (e_ != hipSuccess) {                                                            \
            std::fprintf(stderr, "%s: %s\n", #call, hipGetErrorString(e_));                \
            return 2;                                                                      \
        }                                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 256;
    const int R = 4;
    const float h = 1.0f / n, sx = 1.0f / (h * h);
    // the layout of the variant the launcher will pick for this grid on this device
    fdtuned_layout l;
    const int got = fdtuned_d2x_r4_f32_layout(n, n, n, &l);
    if (got == FDTUNED_NO_DEVICE) {
        std::fprintf(stderr, "no GPU is visible: nothing to run on\n");
        return 3;
    }
    if (got != 0) {
        std::fprintf(stderr, "no variant can run %d^3\n", n);
        return 1;
    }
    std::printf("variant %d on %d^3\n", fdtuned_d2x_r4_f32_current(n, n, n), n);
    std::vector<float> in(l.elems, 0.0f), out(l.elems, 0.0f);
    auto at = [&](long long i, long long j, long long k) {
        return l.offset + i + l.line * j + l.slice * k; // padded coordinates
    };
    for (long long k = 0; k < l.mz; k++)
        for (long long j = 0; j < l.my; j++)
            for (long long i = 0; i < l.mx; i++)
                in[at(i, j, k)] = std::sin(2.0f * 3.14159265f * (i - R) * h);
    float *din = nullptr, *dout = nullptr;
    CHECK(hipMalloc((void **)&din, l.elems * sizeof(float)));
    CHECK(hipMalloc((void **)&dout, l.elems * sizeof(float)));
    CHECK(hipMemcpy(din, in.data(), l.elems * sizeof(float), hipMemcpyHostToDevice));
    CHECK(hipMemcpy(dout, out.data(), l.elems * sizeof(float), hipMemcpyHostToDevice));
    CHECK(fdtuned_d2x_r4_f32(dout, din, n, n, n, sx, 0));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(out.data(), dout, l.elems * sizeof(float), hipMemcpyDeviceToHost));
    // the 8th-order second-derivative stencil on the CPU
    static const double c[R + 1] = {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560};
    double maxerr = 0, maxref = 0;
    for (long long k = R; k < R + n; k++)
        for (long long j = R; j < R + n; j++)
            for (long long i = R; i < R + n; i++) {
                double ref = c[0] * in[at(i, j, k)];
                for (int r = 1; r <= R; r++)
                    ref += c[r] * (in[at(i + r, j, k)] + in[at(i - r, j, k)]);
                ref *= sx;
                maxerr = std::fmax(maxerr, std::fabs(ref - out[at(i, j, k)]));
                maxref = std::fmax(maxref, std::fabs(ref));
            }
    hipFree(din);
    hipFree(dout);
    const bool ok = maxerr <= 1e-3 * maxref;
    std::printf("d2x R=4 f32 %d^3: max error %.3g of %.3g: %s\n", n, maxerr, maxref,
                ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
