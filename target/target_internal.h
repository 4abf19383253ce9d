/* Private to the target module: the rules of each kind of hardware (gpu.c, cpu.c), which
 * the table of target kinds (target.c) points at. */
#ifndef FDT_TARGET_INTERNAL_H
#define FDT_TARGET_INTERNAL_H

#include "fdt_target.h"

/* The GPUs' rules, both vendors (gpu.c). */
extern const fdt_target_rules fdt_target_gpu_rules;
/* The host CPU's rules (cpu.c). */
extern const fdt_target_rules fdt_target_cpu_rules;

#endif
