// A user program for the exported header (issue 4), written for the test, not generated:
// for every operator the header exports (FDTUNED_OPERATORS), on a grid the current GPU was
// tuned for and on one it was not, it allocates with the header's layout helper, fills the
// inputs deterministically (fdtune's seeded input fields), poisons the output, runs the
// launcher (and then every other variant that can run the grid, through _run), copies the
// result back and compares it with fdtune's double-precision CPU reference
// (fdt_reference_point) within fdtune's tolerance, and checks that nothing outside the
// interior was written. Prints max error and PASS/FAIL per operator, grid and variant, plus
// a timing of the launcher; exits 1 on any failure, 2 on a CUDA error.
//
// Build (bench/export_check/run.sh does this):
//   nvcc -std=c++17 -O2 -arch=sm_90 -x cu main.cu -I<dir of fd_tuned.h> -I generator -I portable -I common
//        build/generator/libfdt_generator.a build/templates/libfdt_templates.a
//        build/common/libfdt_common.a -o export_check
// Environment: EXPORT_CHECK_GRID=NXxNYxNZ (the untuned grid, default 301x203x157),
// EXPORT_CHECK_QUICK=1 (launchers only, no other variants), EXPORT_CHECK_SAMPLES=N (random
// interior points checked beyond the boundary layers, default 2000000).
#include "fd_tuned.h"

extern "C" {
#include "fdt_gen.h"
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CK(call)                                                                          \
    do {                                                                                  \
        cudaError_t err_ = (call);                                                        \
        if (err_ != cudaSuccess) {                                                        \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                         cudaGetErrorString(err_));                                       \
            std::exit(2);                                                                 \
        }                                                                                 \
    } while (0)

static const uint64_t SEED = 20240601;

struct grid3 {
    long long nx, ny, nz;
};

// Runs f(k) for k in [0, n) on all cores.
template <class F> static void parallel_for(long long n, F f)
{
    unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < nt; ++t)
        ts.emplace_back([&, t] {
            for (long long k = t; k < n; k += nt)
                f(k);
        });
    for (auto &t : ts)
        t.join();
}

// ---- calling each operator's launcher (v < 0) or one variant (v >= 0) with the parameters
// fdtune verifies with (fdt_params_default).

template <class T, class L, class Rn>
static cudaError_t call_d2x(L launch, Rn run, int v, T *out, T *const *in, int nx, int ny, int nz,
                            const fdt_params &q, cudaStream_t s)
{
    return v < 0 ? launch(out, in[0], nx, ny, nz, (T)q.sx, s)
                 : run(v, out, in[0], nx, ny, nz, (T)q.sx, s);
}
template <class T, class L, class Rn>
static cudaError_t call_d2y(L launch, Rn run, int v, T *out, T *const *in, int nx, int ny, int nz,
                            const fdt_params &q, cudaStream_t s)
{
    return v < 0 ? launch(out, in[0], nx, ny, nz, (T)q.sy, s)
                 : run(v, out, in[0], nx, ny, nz, (T)q.sy, s);
}
template <class T, class L, class Rn>
static cudaError_t call_d2z(L launch, Rn run, int v, T *out, T *const *in, int nx, int ny, int nz,
                            const fdt_params &q, cudaStream_t s)
{
    return v < 0 ? launch(out, in[0], nx, ny, nz, (T)q.sz, s)
                 : run(v, out, in[0], nx, ny, nz, (T)q.sz, s);
}
template <class T, class L, class Rn>
static cudaError_t call_lap(L launch, Rn run, int v, T *out, T *const *in, int nx, int ny, int nz,
                            const fdt_params &q, cudaStream_t s)
{
    return v < 0 ? launch(out, in[0], nx, ny, nz, (T)q.sx, (T)q.sy, (T)q.sz, s)
                 : run(v, out, in[0], nx, ny, nz, (T)q.sx, (T)q.sy, (T)q.sz, s);
}
template <class T, class L, class Rn>
static cudaError_t call_wave(L launch, Rn run, int v, T *out, T *const *in, int nx, int ny,
                             int nz, const fdt_params &q, cudaStream_t s)
{
    return v < 0 ? launch(out, in[0], in[1], in[2], nx, ny, nz, (T)q.sx, (T)q.sy, (T)q.sz,
                          (int)q.si, (int)q.sj, (int)q.sk, (T)q.src, s)
                 : run(v, out, in[0], in[1], in[2], nx, ny, nz, (T)q.sx, (T)q.sy, (T)q.sz,
                       (int)q.si, (int)q.sj, (int)q.sk, (T)q.src, s);
}

// ---- one exported operator

struct family {
    const char *name;
    fdt_op op;
    int R;
    fdt_prec prec;
    const fdtuned_variant *v;
    int n;
};

static double input_fn(void *ctx, int field, int64_t i, int64_t j, int64_t k)
{
    const fdt_prec *prec = (const fdt_prec *)ctx;
    return fdt_input_value(SEED, field, i, j, k, *prec);
}

static const char *kind_name(int k)
{
    return k == FDTUNED_CONSTANT ? "constant" : k == FDTUNED_RUNTIME ? "runtime dims" : "fallback";
}

static int g_failures = 0;

// Runs one variant (v < 0: the launcher) on grid g and checks it. Returns 0 on PASS.
template <class T, class Call>
static int check_one(const family &f, Call call, int v, const grid3 &g, bool timed)
{
    const int nx = (int)g.nx, ny = (int)g.ny, nz = (int)g.nz;
    const char *name, *arch;
    int cus;
    CK(fdtuned_current_device(&name, &arch, &cus));
    int chosen = v >= 0 ? v : fdtuned_select_in(f.v, f.n, name, arch, cus, nx, ny, nz);
    fdtuned_layout l;
    if (chosen < 0 || fdtuned_variant_layout(f.v, f.n, chosen, nx, ny, nz, &l) != 0) {
        std::printf("%-12s %lldx%lldx%lld: no variant can run this grid: FAIL\n", f.name, g.nx,
                    g.ny, g.nz);
        return 1;
    }
    const fdtuned_variant &var = f.v[chosen];
    fdt_problem p = {f.op, f.R, f.prec, g.nx, g.ny, g.nz};
    fdt_params q;
    fdt_params_default(&p, &q);
    fdt_tolerance tol;
    fdt_tolerance_make(&p, &q, &tol);
    long double coef[FDT_R_MAX + 1];
    fdt_err e;
    if (fdt_fd_coeffs(f.R, coef, &e)) {
        std::fprintf(stderr, "%s\n", e.msg);
        std::exit(2);
    }

    // inputs over the whole padded box, as fdtune fills them
    const int nin = fdt_op_ninputs(f.op);
    const size_t bytes = (size_t)l.elems * sizeof(T);
    std::vector<T> host((size_t)l.elems);
    T *din[3] = {nullptr, nullptr, nullptr}, *dout = nullptr;
    for (int fi = 0; fi < nin; ++fi) {
        std::fill(host.begin(), host.end(), (T)0);
        parallel_for(l.mz, [&](long long k) {
            for (long long j = 0; j < l.my; ++j)
                for (long long i = 0; i < l.mx; ++i)
                    host[(size_t)fdtuned_index(&l, i, j, k)] =
                        (T)fdt_input_value(SEED, fi, i, j, k, f.prec);
        });
        CK(cudaMalloc(&din[fi], bytes));
        CK(cudaMemcpy(din[fi], host.data(), bytes, cudaMemcpyHostToDevice));
    }
    CK(cudaMalloc(&dout, bytes));
    CK(cudaMemset(dout, 0xff, bytes)); // poison: NaN everywhere, so any write shows
    CK(cudaDeviceSynchronize());

    cudaError_t err = call(v, dout, din, nx, ny, nz, q, (cudaStream_t)0);
    if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        std::printf("%-12s %lldx%lldx%lld variant %d: CUDA error %s: FAIL\n", f.name, g.nx, g.ny,
                    g.nz, chosen, cudaGetErrorString(err));
        std::exit(2);
    }
    std::vector<T> res((size_t)l.elems);
    CK(cudaMemcpy(res.data(), dout, bytes, cudaMemcpyDeviceToHost));

    // 1. nothing outside the interior was written: every such element keeps the poison
    std::vector<long long> bad_halo((size_t)l.mz, 0);
    unsigned char poison[sizeof(T)];
    std::memset(poison, 0xff, sizeof poison);
    const long long R = f.R;
    parallel_for(l.mz, [&](long long k) {
        long long n = 0;
        for (long long j = 0; j < l.my; ++j)
            for (long long i = 0; i < l.line; ++i) {
                bool inside = i >= R && i < R + g.nx && j >= R && j < R + g.ny && k >= R &&
                              k < R + g.nz;
                if (!inside && std::memcmp(&res[(size_t)fdtuned_index(&l, i, j, k)], poison,
                                           sizeof(T)))
                    n++;
            }
        bad_halo[(size_t)k] = n;
    });
    long long halo_writes = 0;
    for (long long n : bad_halo)
        halo_writes += n;

    // 2. interior against the CPU reference: every point of the boundary layers (R+1 thick,
    // where halos and block edges meet), plus a seeded sample of the rest
    std::vector<double> maxerr((size_t)l.mz, 0.0);
    std::vector<long long> checked((size_t)l.mz, 0), nbad((size_t)l.mz, 0);
    long long samples = 2000000;
    if (const char *s = std::getenv("EXPORT_CHECK_SAMPLES"))
        samples = std::atoll(s);
    const double interior = (double)g.nx * (double)g.ny * (double)g.nz;
    const double keep = std::min(1.0, (double)samples / interior);
    fdt_prec prec = f.prec;
    parallel_for(g.nz, [&](long long kk) {
        const long long k = R + kk;
        double me = 0;
        long long nc = 0, nb = 0;
        uint64_t h = 0x9e3779b97f4a7c15ULL * (uint64_t)(k + 1);
        for (long long j = R; j < R + g.ny; ++j)
            for (long long i = R; i < R + g.nx; ++i) {
                const long long b = R + 1;
                bool edge = i < R + b || i >= R + g.nx - b || j < R + b || j >= R + g.ny - b ||
                            k < R + b || k >= R + g.nz - b;
                h ^= h << 13;
                h ^= h >> 7;
                h ^= h << 17;
                if (!edge && (double)(h >> 11) * 0x1p-53 >= keep)
                    continue;
                double want = fdt_reference_point(&p, &q, coef, input_fn, &prec, i, j, k);
                double got = (double)res[(size_t)fdtuned_index(&l, i, j, k)];
                double d = std::fabs(got - want);
                if (!(d <= tol.ref_vs_exact + tol.cand_vs_ref)) { // NaN counts as wrong
                    nb++;
                    d = std::isfinite(d) ? d : INFINITY;
                }
                me = std::max(me, d);
                nc++;
            }
        maxerr[(size_t)k] = me;
        checked[(size_t)k] = nc;
        nbad[(size_t)k] = nb;
    });
    double me = 0;
    long long nc = 0, nb = 0;
    for (size_t k = 0; k < maxerr.size(); ++k) {
        me = std::max(me, maxerr[k]);
        nc += checked[k];
        nb += nbad[k];
    }

    // 3. the launcher's time (median of 9 after warm-up), for comparison with the database
    double ms = NAN;
    if (timed && nb == 0 && halo_writes == 0) {
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        std::vector<float> t;
        for (int r = 0; r < 12; ++r) {
            CK(cudaEventRecord(a));
            CK(call(v, dout, din, nx, ny, nz, q, (cudaStream_t)0));
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float x;
            CK(cudaEventElapsedTime(&x, a, b));
            if (r >= 3)
                t.push_back(x);
        }
        std::sort(t.begin(), t.end());
        ms = t[t.size() / 2];
        CK(cudaEventDestroy(a));
        CK(cudaEventDestroy(b));
    }

    const bool pass = nb == 0 && halo_writes == 0 && nc > 0;
    std::printf("%-12s %lldx%lldx%lld %s variant %d (%s%s%s%s, config %s): max |err| %.3g "
                "(tolerance %.3g) over %lld points, %lld bad, %lld writes outside the "
                "interior",
                f.name, g.nx, g.ny, g.nz, v < 0 ? "launcher" : "run     ", chosen,
                kind_name(var.kind), var.device[0] ? ", tuned on " : "", var.device,
                var.device[0] ? (std::string(" ") + std::to_string(var.nx) + "x" +
                                 std::to_string(var.ny) + "x" + std::to_string(var.nz))
                                    .c_str()
                              : "",
                var.config, me, tol.ref_vs_exact + tol.cand_vs_ref, nc, nb, halo_writes);
    if (std::isfinite(ms))
        std::printf(", %.4f ms, %.0f GB/s", ms, fdt_effective_bytes(&p) / (ms * 1e-3) / 1e9);
    std::printf(": %s\n", pass ? "PASS" : "FAIL");
    std::fflush(stdout);
    for (int fi = 0; fi < nin; ++fi)
        CK(cudaFree(din[fi]));
    CK(cudaFree(dout));
    return pass ? 0 : 1;
}

// The tuned grid of this device: a constant variant the launcher would pick on its grid.
static bool tuned_grid(const family &f, grid3 *g)
{
    const char *name, *arch;
    int cus;
    CK(fdtuned_current_device(&name, &arch, &cus));
    for (int i = 0; i < f.n; ++i)
        if (f.v[i].kind == FDTUNED_CONSTANT &&
            fdtuned_select_in(f.v, f.n, name, arch, cus, f.v[i].nx, f.v[i].ny, f.v[i].nz) == i) {
            *g = {f.v[i].nx, f.v[i].ny, f.v[i].nz};
            return true;
        }
    return false;
}

template <class T, class Call> static void check_family(const family &f, Call call)
{
    grid3 grids[2];
    if (!tuned_grid(f, &grids[0])) {
        std::printf("%-12s no tuned grid for this device in the header: FAIL (export for this "
                    "GPU)\n", f.name);
        g_failures++;
        grids[0] = {256, 256, 256};
    }
    grids[1] = {301, 203, 157};
    if (const char *s = std::getenv("EXPORT_CHECK_GRID")) {
        long long a, b, c;
        if (std::sscanf(s, "%lldx%lldx%lld", &a, &b, &c) == 3)
            grids[1] = {a, b, c};
    }
    const bool quick = std::getenv("EXPORT_CHECK_QUICK") != nullptr;
    for (const grid3 &g : grids) {
        g_failures += check_one<T>(f, call, -1, g, true);
        if (quick)
            continue;
        // every other variant that can run this grid, so each kernel of the header is
        // checked on this GPU, whatever device it was tuned for
        const char *name, *arch;
        int cus;
        CK(fdtuned_current_device(&name, &arch, &cus));
        int chosen = fdtuned_select_in(f.v, f.n, name, arch, cus, g.nx, g.ny, g.nz);
        for (int i = 0; i < f.n; ++i)
            if (i != chosen && fdtuned_usable(&f.v[i], g.nx, g.ny, g.nz))
                g_failures += check_one<T>(f, call, i, g, false);
    }
}

int main()
{
    int dev = 0;
    cudaDeviceProp prop;
    CK(cudaGetDevice(&dev));
    CK(cudaGetDeviceProperties(&prop, dev));
    const char *name, *arch;
    int cus;
    CK(fdtuned_current_device(&name, &arch, &cus));
    std::printf("device %d: %s, %s, %d SMs; header generator %s\n", dev, prop.name, arch, cus,
                FDTUNED_GENERATOR);

#define FDT_CHECK_OP(op, R, p, T)                                                          \
    {                                                                                      \
        fdt_op o;                                                                          \
        fdt_prec pr;                                                                       \
        fdt_err e;                                                                         \
        if (fdt_op_parse(#op, &o, &e) || fdt_prec_parse(#p, &pr, &e)) {                    \
            std::fprintf(stderr, "%s\n", e.msg);                                           \
            return 2;                                                                      \
        }                                                                                  \
        family f = {#op "_r" #R "_" #p, o, R, pr, fdtuned_##op##_r##R##_##p##_variants,     \
                    (int)(sizeof fdtuned_##op##_r##R##_##p##_variants /                    \
                          sizeof(fdtuned_variant))};                                       \
        check_family<T>(f, [](int v, T *out, T *const *in, int nx, int ny, int nz,         \
                              const fdt_params &q, cudaStream_t s) {                       \
            return call_##op<T>(fdtuned_##op##_r##R##_##p, fdtuned_##op##_r##R##_##p##_run, \
                                v, out, in, nx, ny, nz, q, s);                             \
        });                                                                                \
    }
    FDTUNED_OPERATORS(FDT_CHECK_OP)
#undef FDT_CHECK_OP

    std::printf("%s: %d failure%s\n", g_failures ? "FAIL" : "PASS", g_failures,
                g_failures == 1 ? "" : "s");
    return g_failures ? 1 : 0;
}
