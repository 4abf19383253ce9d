// The HIP runtime API: hiprtc's own header on AMD, fdtune's shim for NVRTC on NVIDIA.
#include <hip/hip_runtime.h>
