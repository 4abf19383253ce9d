/* Private to the runtime module: the backend instances and shared helpers. */
#ifndef FDT_RT_INTERNAL_H
#define FDT_RT_INTERNAL_H

#include "fdt_rt.h"

#ifdef FDTUNE_HAVE_CUDA
extern const fdt_rt_backend fdt_rt_cuda;
#endif
#ifdef FDTUNE_HAVE_HIP
extern const fdt_rt_backend fdt_rt_hip;
#endif
/* Simulated GPUs' compile-only stand-in (sim.c); outside the registry's list. */
extern const fdt_rt_backend fdt_rt_sim;

/* The NVIDIA kernel-module version (e.g. "580.159.04") from /proc, or "unknown". */
void fdt_rt_nvidia_kernel_driver(char *buf, size_t n);

#endif
