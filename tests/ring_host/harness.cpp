// test_ring_staged.sh's host harness: runs kernel.cu (an fdtune lap kernel renamed kern, or
// with WAVE defined a wave kernel, which also reads p_prev and c2) over a padded grid of
// deterministic values, block by block with one thread per GPU thread, and
// writes the whole output array to a file. Arguments: nx ny nz R line slice bx by gx gy gz
// OUT; REAL and KERNEL_CALL come from the compile line. With `cmp A B TOL` it compares two
// such files instead: the largest difference must be at most TOL times the largest |B|
// (exit 1 otherwise, and when the files differ in size or B is all zeros).
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include "hip/hip_runtime.h"
thread_local dim3 threadIdx;
dim3 blockIdx, blockDim, gridDim;
std::barrier<> *fdt_block_barrier;
alignas(128) unsigned char fdt_dyn_shared[1 << 18];
// bulk=1 kernels' last parameter: the tensor map of in (fdt_host_tmap in its 128 bytes), for
// the tile box TMAP_BOX_X x TMAP_BOX_Y the compile line gives.
alignas(128) unsigned char fdt_host_tmap_arg[128];
#include "kernel.cu"

static std::vector<REAL> read_all(const char *path)
{
    std::vector<REAL> v;
    FILE *f = fopen(path, "rb");
    REAL x;
    while (f && fread(&x, sizeof x, 1, f) == 1)
        v.push_back(x);
    if (f)
        fclose(f);
    return v;
}

static int compare(const char *a, const char *b, double tol)
{
    std::vector<REAL> x = read_all(a), y = read_all(b);
    double d = 0, m = 0;
    for (size_t i = 0; i < x.size() && i < y.size(); i++) {
        d = std::max(d, (double)(x[i] > y[i] ? x[i] - y[i] : y[i] - x[i]));
        m = std::max(m, (double)(y[i] < 0 ? -y[i] : y[i]));
    }
    printf("max |a - b| %.3g, max |b| %.3g\n", d, m);
    return x.size() == y.size() && m > 0 && d <= tol * m ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 5 && std::string(argv[1]) == "cmp")
        return compare(argv[2], argv[3], atof(argv[4]));
    if (argc != 13) return 2;
    long nz = atol(argv[3]), R = atol(argv[4]), slice = atol(argv[6]);
    int bx = atoi(argv[7]), by = atoi(argv[8]), ny = atoi(argv[2]);
    gridDim = {(unsigned)atoi(argv[9]), (unsigned)atoi(argv[10]), (unsigned)atoi(argv[11])};
    blockDim = {(unsigned)bx, (unsigned)by, 1};
    size_t n = (size_t)slice * (nz + 2 * R) + 64;
    // in starts 64 values into its buffer, as the layout's base offset lets a bulk copy
    // (bulk=1) read a tile row's left x halo before the first column of the first row.
    std::vector<REAL> in_buf(n + 64), out(n, 0);
    struct { REAL *p; REAL *data() const { return p; } } in{in_buf.data() + 64};
#ifdef TMAP_BOX_X
    {
        // as fdtuned_tmap_make: the map starts on 16 bytes, shift values before in
        const int es = (int)sizeof(REAL), shift = (int)((uintptr_t)in.p % 16 / es);
        fdt_host_tmap t = {(const unsigned char *)(in.p - shift),
                           {atol(argv[1]) + 2 * R + shift, ny + 2 * R, nz + 2 * R},
                           {atol(argv[5]) * es, slice * es}, {TMAP_BOX_X, TMAP_BOX_Y}, es};
        static_assert(sizeof t <= sizeof fdt_host_tmap_arg, "the map fits the parameter");
        memcpy(fdt_host_tmap_arg, &t, sizeof t);
    }
#endif
    unsigned s = 12345;
    for (auto &v : in_buf) { s = s * 1103515245u + 12345u; v = (REAL)((s >> 8) % 2001) / 1000 - 1; }
#ifdef WAVE
    std::vector<REAL> prev(n), c2(n);
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        prev[i] = (REAL)((s >> 8) % 2001) / 1000 - 1;
        c2[i] = (REAL)0.1 + (REAL)((s >> 4) % 100) / 1000;
    }
#endif
    for (unsigned z = 0; z < gridDim.z; z++)
        for (unsigned y = 0; y < gridDim.y; y++)
            for (unsigned x = 0; x < gridDim.x; x++) {
                blockIdx = {x, y, z};
                std::barrier<> bar(bx * by);
                fdt_block_barrier = &bar;
                std::vector<std::thread> ts;
                for (int ty = 0; ty < by; ty++)
                    for (int tx = 0; tx < bx; tx++)
                        ts.emplace_back([&, tx, ty] {
                            threadIdx = {(unsigned)tx, (unsigned)ty, 0};
                            KERNEL_CALL;
                        });
                for (auto &t : ts) t.join();
            }
    (void)ny;
    FILE *f = fopen(argv[12], "wb");
    if (!f || fwrite(out.data(), sizeof(REAL), n, f) != n || fclose(f))
        return 1;
    double sum = 0; for (auto v : out) sum += v < 0 ? -v : v;
    printf("sum|out| %.6g\n", sum);
    return 0;
}
