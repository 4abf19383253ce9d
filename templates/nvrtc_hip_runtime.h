// fdtune's hip/hip_runtime.h for NVRTC. fdtune emits HIP source; on NVIDIA it is compiled
// by NVRTC, which has CUDA's builtins (threadIdx, __syncthreads, float4, atomics, math)
// already, so this header only maps what differs in the HIP dialect fdtune uses.
#pragma once

#define __HIP_PLATFORM_NVIDIA__ 1

// Nontemporal (streaming, evict-first) stores and loads.
#define __builtin_nontemporal_store(value, ptr) __stcs((ptr), (value))
#define __builtin_nontemporal_load(ptr) __ldcs(ptr)
