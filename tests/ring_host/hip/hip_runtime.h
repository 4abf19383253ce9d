// Host shim for test_ring_staged.sh: enough of HIP to run one fdtune lap kernel on CPU threads
// (one std::thread per GPU thread of a block, blocks one after another, __syncthreads a
// std::barrier), so that the ring's copy paths can be compared on a machine with no GPU.
// With FDT_HOST_ASYNC the kernel takes NVIDIA's path (prelude.hip), with cp.async and the
// mbarriers emulated below: a copy lands as late as the PTX allows (at the wait for its group,
// or at the thread's arrival on a barrier that tracks its copies), and a wait for a barrier
// phase that does not complete within a minute aborts (a deadlock).
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>
using std::min; using std::max;
struct dim3 { unsigned x, y, z; };
extern thread_local dim3 threadIdx;
extern dim3 blockIdx, blockDim, gridDim;
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__
#define __builtin_nontemporal_store(v, p) (*(p) = (v))
extern std::barrier<> *fdt_block_barrier;
inline void __syncthreads() { fdt_block_barrier->arrive_and_wait(); }

// Shared memory is the one dynamic array: its addresses are offsets into it.
extern unsigned char fdt_dyn_shared[];
inline unsigned __cvta_generic_to_shared(const void *p)
{
    return (unsigned)((const unsigned char *)p - fdt_dyn_shared);
}

// cp.async: this thread's copies in flight, by group (the last one open, not yet committed).
struct fdt_host_copy { void *d; const void *s; size_t n; };
inline thread_local std::deque<std::vector<fdt_host_copy>> fdt_host_groups(1);
inline void fdt_host_land(std::vector<fdt_host_copy> &g)
{
    for (auto &c : g) memcpy(c.d, c.s, c.n);
    g.clear();
}
inline void fdt_host_copy_async(void *d, const void *s, size_t n)
{
    fdt_host_groups.back().push_back({d, s, n});
}
inline void fdt_host_async_commit() { fdt_host_groups.emplace_back(); }
inline void fdt_host_async_wait(int n)  // all but the n newest committed groups land
{
    while ((int)fdt_host_groups.size() - 1 > n) {
        fdt_host_land(fdt_host_groups.front());
        fdt_host_groups.pop_front();
    }
}

// mbarrier: one 64-bit word in shared memory, phase bit 63, expected arrivals in bits 32-62,
// pending arrivals in bits 0-31, and (beside it) the bytes of bulk copies announced and not
// yet complete. Arrivals take a lock; the copies that arrivals or bulk copies track wait in
// a list per barrier and land when the phase completes (no arrival and no byte pending), as
// late as the PTX allows.
inline std::mutex fdt_host_bar_lock;
inline std::map<unsigned, std::vector<fdt_host_copy>> fdt_host_bar_copies;
inline std::map<unsigned, long long> fdt_host_bar_tx;
inline std::atomic_ref<uint64_t> fdt_host_bar_word(unsigned b)
{
    if (b % 8) { fprintf(stderr, "mbarrier at %u: not 8-byte aligned\n", b); abort(); }
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t *>(fdt_dyn_shared + b));
}
inline void fdt_host_bar_init(unsigned b, int n)
{
    fdt_host_bar_word(b).store((uint64_t)n << 32 | (uint64_t)n);
}
inline void fdt_host_bar_complete_locked(unsigned b)  // if nothing is pending any more
{
    auto w = fdt_host_bar_word(b);
    uint64_t v = w.load();
    uint64_t pend = v & 0xffffffffu, expect = v >> 32 & 0x7fffffffu, phase = v >> 63;
    if (pend > 0 || fdt_host_bar_tx[b] > 0)
        return;
    if (fdt_host_bar_tx[b] < 0) { fprintf(stderr, "mbarrier at %u: bytes not announced\n", b); abort(); }
    fdt_host_land(fdt_host_bar_copies[b]);  // the phase completes: what it tracks has landed
    w.store((phase ^ 1) << 63 | expect << 32 | expect);
}
inline void fdt_host_bar_arrive_locked(unsigned b)
{
    auto w = fdt_host_bar_word(b);
    uint64_t v = w.load();
    if ((v & 0xffffffffu) == 0) { fprintf(stderr, "mbarrier at %u: an arrival too many\n", b); abort(); }
    w.store(v - 1);
    fdt_host_bar_complete_locked(b);
}
inline void fdt_host_bar_arrive(unsigned b)
{
    std::lock_guard<std::mutex> g(fdt_host_bar_lock);
    fdt_host_bar_arrive_locked(b);
}
inline void fdt_host_bar_arrive_copies(unsigned b)
{
    std::lock_guard<std::mutex> g(fdt_host_bar_lock);
    auto &l = fdt_host_bar_copies[b];
    for (auto &grp : fdt_host_groups) {
        l.insert(l.end(), grp.begin(), grp.end());
        grp.clear();
    }
    fdt_host_bar_arrive_locked(b);
}
// mbarrier.arrive.expect_tx: bytes more that the phase waits for, then the arrival.
inline void fdt_host_bar_arrive_tx(unsigned b, unsigned bytes)
{
    std::lock_guard<std::mutex> g(fdt_host_bar_lock);
    fdt_host_bar_tx[b] += bytes;
    fdt_host_bar_arrive_locked(b);
}
// cp.async.bulk with complete_tx on barrier b: 16-byte aligned runs of 16-byte multiples (as
// the PTX requires; an abort otherwise), landing when b's phase completes.
inline void fdt_host_bulk_copy(void *d, const void *s, unsigned n, unsigned b)
{
    if (n == 0 || n % 16 || (d == nullptr) ||
        ((const unsigned char *)d - fdt_dyn_shared) % 16) {
        fprintf(stderr, "cp.async.bulk of %u bytes to shared %ld: not 16-byte aligned\n", n,
                (long)((const unsigned char *)d - fdt_dyn_shared));
        abort();
    }
    std::lock_guard<std::mutex> g(fdt_host_bar_lock);
    fdt_host_bar_copies[b].push_back({d, s, n});
    fdt_host_bar_tx[b] -= n;
    fdt_host_bar_complete_locked(b);
}
// cp.async.bulk.tensor.3d with complete_tx on barrier b: the box of tensor map m (a
// fdt_host_tmap, which the harness writes into the kernel's 128-byte parameter) at x, y, z
// into d (128-byte aligned, as the PTX requires; an abort otherwise), values outside the
// map's extents as zeros, landing when b's phase completes; the whole box's bytes.
struct fdt_host_tmap {
    const unsigned char *base;  // the map's first value
    long long dim[3], stride[2];  // values along x, y, z; bytes between rows, planes
    int box[2], esize;
};
inline const unsigned char fdt_host_zeros[4096] = {};
inline void fdt_host_tensor_copy(void *d, const void *map, int x, int y, int z, unsigned b)
{
    const fdt_host_tmap *t = (const fdt_host_tmap *)map;
    if (((const unsigned char *)d - fdt_dyn_shared) % 128 || t->box[0] * t->esize % 16 ||
        t->box[0] > 256 || t->box[1] > 256) {
        fprintf(stderr, "cp.async.bulk.tensor to shared %ld, box %d x %d: not a valid copy\n",
                (long)((const unsigned char *)d - fdt_dyn_shared), t->box[0], t->box[1]);
        abort();
    }
    std::lock_guard<std::mutex> g(fdt_host_bar_lock);
    auto &l = fdt_host_bar_copies[b];
    unsigned char *row = (unsigned char *)d;
    for (int r = 0; r < t->box[1]; r++, row += (size_t)t->box[0] * t->esize) {
        const long long gy = y + r;
        const bool in = gy >= 0 && gy < t->dim[1] && z >= 0 && z < t->dim[2];
        // the row's columns inside [0, dim[0]) from the map, the rest zeros
        const long long a = in ? std::max(0LL, (long long)x) : x + t->box[0];
        const long long e = in ? std::min((long long)x + t->box[0], t->dim[0]) : a;
        if (a > x)
            l.push_back({row, fdt_host_zeros, (size_t)(a - x) * t->esize});
        if (e > a)
            l.push_back({row + (size_t)(a - x) * t->esize,
                         t->base + z * t->stride[1] + gy * t->stride[0] + a * t->esize,
                         (size_t)(e - a) * t->esize});
        if (x + t->box[0] > std::max(a, e))
            l.push_back({row + (size_t)(std::max(a, e) - x) * t->esize, fdt_host_zeros,
                         (size_t)(x + t->box[0] - std::max(a, e)) * t->esize});
    }
    fdt_host_bar_tx[b] -= (long long)t->box[0] * t->box[1] * t->esize;
    fdt_host_bar_complete_locked(b);
}
inline void fdt_host_bar_wait(unsigned b, int parity)
{
    auto w = fdt_host_bar_word(b);
    auto t0 = std::chrono::steady_clock::now();
    while ((int)(w.load() >> 63) == parity) {
        std::this_thread::yield();
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(60)) {
            fprintf(stderr, "mbarrier at %u: phase of parity %d never completed\n", b, parity);
            abort();
        }
    }
}
