/* The backend of simulated GPUs ("sim"): what stands in for a vendor compiler when a
 * recorded database answers the evaluations instead of a GPU (eval/sim.c). Its code object
 * is a placeholder that names the kernel, made at once and never cached, and it reports no
 * resources (-1: unknown), so a simulated run goes through the same compile pool as a real
 * one without a compiler. It has no devices of its own: the simulator describes simulated
 * GPUs and runs their workers. It is not in the registry that lists backends
 * (fdt_rt_backend_at: devices, default targets, --version); fdt_rt_backend_find("sim")
 * alone reaches it. For tests, FDTUNE_SIM_COMPILE_MS makes each compile take that long (in
 * its child of the pool), as FDTUNE_SIM_DELAY_MS slows the simulated GPU's answers: a
 * simulated tune then compiles while it measures as a real one does. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int sim_compiler_version(char *buf, size_t n, fdt_err *e)
{
    (void)e;
    snprintf(buf, n, "sim");
    return 0;
}

static int sim_compile(const char *src, const char *kernel, const char *arch, fdt_sb *image,
                       fdt_sb *log, fdt_rt_resources *res, fdt_err *e)
{
    (void)src;
    (void)log;
    (void)res; /* stays -1: a simulated compile reports nothing */
    (void)e;
    const char *ms = getenv("FDTUNE_SIM_COMPILE_MS");
    if (ms && atoi(ms) > 0)
        usleep((useconds_t)atoi(ms) * 1000);
    fdt_sb_printf(image, "sim:%s:%s", arch, kernel);
    return image->oom ? fdt_err_set(e, "sim compile: out of memory") : 0;
}

static int sim_device_count(int *n, fdt_err *e)
{
    *n = 0;
    return fdt_err_set(e, "sim: simulated GPUs come from --simulate-from, not from a driver");
}

const fdt_rt_backend fdt_rt_sim = {
    .name = FDT_SIM_BACKEND,
    .vendor = "",
    .example_arch = "sm_90",
    .options = "",
    .uncached = 1,
    .compiler_version = sim_compiler_version,
    .compile = sim_compile,
    .device_count = sim_device_count,
};
