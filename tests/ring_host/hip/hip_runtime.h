// Host shim for test_ring_staged.sh: enough of HIP to run one fdtune lap kernel on CPU threads
// (one std::thread per GPU thread of a block, blocks one after another, __syncthreads a
// std::barrier), so that the ring's copy paths can be compared on a machine with no GPU.
#pragma once
#include <algorithm>
#include <barrier>
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
