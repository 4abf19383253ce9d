/* Per-architecture facts: one table (runtime/arch.c) for what a GPU architecture fixes, with
 * the vendor's source for each: the wave (warp) size, SIMDs per compute unit, resident waves
 * per SIMD, the register file and its allocation granule, SGPRs, LDS (shared memory) per
 * compute unit and per workgroup; and the rules built on them, which pruning, the analytic
 * model and `fdtune gen --compile` all call: the occupancy of a kernel (resident workgroups
 * and waves per compute unit, and what limits them), whether one workgroup fits at all, the
 * registers a compiler may give a kernel under its launch bounds, and the shared memory one
 * workgroup may use. The table also carries the analytic model's per-architecture constants
 * (fitted or published, each saying which).
 *
 * Facts here belong to the architecture (gfx90a, sm_90), never to one model of GPU: what
 * varies between models of one architecture (compute units, caches, memory bandwidth) lives
 * in fdt_device and the catalogue (recipes/gpus.lua). An architecture the table does not know
 * gets an explicit fallback (fdt_arch.known == 0, fdt_arch.fallback says whose facts). */
#ifndef FDT_ARCH_H
#define FDT_ARCH_H

#include <stddef.h>

#include "fdt_device.h"
#include "fdt_gen.h"

typedef struct fdt_arch {
    const char *name;     /* base architecture: "gfx90a", "sm_90" */
    const char *vendor;   /* "AMD", "NVIDIA" */
    int known;            /* 1: the looked-up arch is in the table; 0: a fallback */
    const char *fallback; /* for a fallback, why these facts ("unknown gfx arch: gfx90a's
                             facts"); "" for a known arch */

    /* --- one compute unit (AMD CU) or streaming multiprocessor (NVIDIA SM) --- */
    int wave;             /* threads per wave (AMD) or warp (NVIDIA) */
    int simds;            /* SIMDs per CU (AMD) or SM sub-partitions (NVIDIA): 4 */
    int max_waves_simd;   /* resident waves per SIMD (NVIDIA: warps per SM / 4) */
    int max_groups_cu;    /* resident workgroups per CU: AMD 16 (of more than one wave),
                             NVIDIA 32 blocks */
    int max_group_threads; /* largest workgroup (block) */

    /* --- registers --- */
    int reg_file;         /* AMD: VGPRs per SIMD lane (unified with the AGPRs on gfx90a and
                             gfx942); NVIDIA: 32-bit registers per SM */
    int agpr_file;        /* AMD gfx908: AGPRs per SIMD lane, a file of their own; 0 otherwise */
    int unified_agprs;    /* 1: AGPRs follow the VGPRs (rounded up to 4) in reg_file: the
                             compiler's VGPR count holds them */
    int reg_granule;      /* AMD: VGPRs per lane are allocated per wave in units of this;
                             NVIDIA: per-thread registers round up to this (8 = 256 per warp) */
    int max_regs_thread;  /* addressable registers of one thread (AMD: architected VGPRs) */
    int sgpr_rule;        /* 1: SGPRs limit waves per SIMD (gfx9: 800 per SIMD) */

    /* --- LDS / shared memory --- */
    int lds_cu;           /* bytes per CU (NVIDIA: per SM, as the model counts it: the
                             opt-in limit per block + 1 KiB) */
    int lds_group;        /* bytes one workgroup may use (NVIDIA: with the opt-in) */
    int lds_group_static; /* bytes without an opt-in (NVIDIA 48 KiB; AMD = lds_group) */
    int lds_granule;      /* bytes: LDS is allocated per workgroup in units of this (0: none
                             counted) */

    /* --- the analytic model's constants (search/model.c) --- */
    double clock_hz;      /* shader clock */
    double l1_bytes_clk;  /* bytes the L1/LDS pipeline moves per clock per CU */
    double sector;        /* bytes: the unit of L1-L2 traffic (partial lines of rows) */
    double l2_over_dram;  /* L2 bandwidth relative to peak DRAM bandwidth */
    double l1_reuse;      /* share of a thread's repeated neighbour loads L1 serves (no LDS
                             tile); the rest reaches L2 */
    double dram_eff;      /* achievable fraction of the peak DRAM bandwidth */
    double latency_s;     /* DRAM latency the bytes in flight must cover */
    double llc_near;      /* share of the last-level cache that serves as a near cache */
    double llc_knee;      /* > 0: z re-reads hit the LLC as 0.95 / (1 + (need/llc/knee)^steep),
                             need counting every stream that passes while a plane is live;
                             0: the H100 rule (0.95 when the planes fit, else llc/span/2) */
    double llc_steep;
    double wave_clk;      /* clocks of a CU each wave costs besides its memory traffic
                             (launch, index arithmetic), added to the time; 0: none counted */
    int async_copy;       /* 1: the ring's copies are asynchronous (cp.async), pf planes fly
                             at no register cost; 0: ordinary loads, one plane in flight */
    /* on chip (search/model.c's shared, issue and FP terms): each per clock per CU */
    double lds_bytes_clk; /* bytes the shared memory (LDS) serves, bank-conflict free */
    double issue_clk;     /* thread instructions issued (NVIDIA: 4 schedulers of one warp
                             instruction each = 128; AMD: one wave instruction per SIMD every 4
                             clocks on CDNA = 64, one per clock per SIMD32 on RDNA) */
    double fp32_clk;      /* FP32 operations (an FMA counts one) */
    double fp64_clk;      /* FP64 operations */
    int mem_issue;        /* 1: memory instructions take issue slots like any other (NVIDIA);
                             0: they issue beside the vector ALU's (AMD: VMEM and LDS ports),
                             which issue_clk then counts alone */
    long code_limit;      /* measured: bytes of machine code (fdt_rt_resources.code_bytes)
                             past which a kernel's unrolled loop leaves the instruction cache
                             and runs several times slower; 0: none known */
    double halo_steps;    /* measured: the weight of a z column's halo steps (the 2 R_z planes
                             filled before its first output, search/model.c's t_halo_ms);
                             1: each costs its DRAM time in full; 0: not counted */
    double occ_half;      /* fitted: resident waves per SIMD at which the on-chip units run
                             at half their rate; they run at w / (w + occ_half) of it with w
                             waves per SIMD (dependent FMA chains, shared-memory latency) */
    const char *source;   /* where the facts come from */
} fdt_arch;

/* The facts of arch (its base before any ':', case-insensitive). Never NULL: an unknown arch
 * gets a fallback with known = 0 ("gfx1..." RDNA: gfx1030's facts, other "gfx": gfx90a's,
 * anything else: sm_80's). */
const fdt_arch *fdt_arch_find(const char *arch);
/* The facts of d's architecture; a device without one falls back by its vendor ("AMD": the
 * gfx fallback, otherwise the sm fallback). */
const fdt_arch *fdt_arch_of(const fdt_device *d);
/* The table itself, for tests and listings: entry i, or NULL past the end. */
const fdt_arch *fdt_arch_at(int i);

/* 1 when c's stream runs with slot barriers on a: mbar=1 (which the generator accepts only for
 * the stream of an operator with x or y neighbours) where the copies are asynchronous, as the
 * template compiles it (FDT_ASYNC_COPY); elsewhere mbar=1 is the block barrier of mbar=0. */
int fdt_arch_slot_barriers(const fdt_arch *a, const fdt_config *c);

/* What limits the occupancy of a kernel. */
typedef enum {
    FDT_OCC_WAVES,      /* the hardware's waves per SIMD (nothing else binds) */
    FDT_OCC_REGS,       /* VGPRs (AMD) or registers (NVIDIA) */
    FDT_OCC_AGPRS,      /* AMD gfx908's separate AGPR file */
    FDT_OCC_SGPRS,      /* AMD scalar registers */
    FDT_OCC_LDS,        /* LDS / shared memory */
    FDT_OCC_GROUP_SIZE, /* whole workgroups: their waves do not fill the slots left */
    FDT_OCC_GROUPS,     /* the resident workgroups (blocks) per CU */
    FDT_OCC_COUNT
} fdt_occ_limit;

/* "wave slots"/"warp slots", "VGPRs"/"registers", "AGPRs", "SGPRs", "LDS"/"shared memory",
 * "workgroup size"/"block size", "workgroups"/"blocks": the vendor's words for a limit. */
const char *fdt_occ_limit_name(const fdt_arch *a, fdt_occ_limit l);

/* What one workgroup of a kernel uses. regs: registers per thread (NVIDIA), or VGPRs as the
 * AMD compiler counts them for occupancy (the code object's .vgpr_count: on gfx90a and gfx942
 * the architected VGPRs rounded up to 4 plus the AGPRs, on gfx908 the larger of the two);
 * agprs (.agpr_count, held against gfx908's separate AGPR file), sgprs: AMD only. Any of
 * them <= 0 when unknown (then it does not limit). */
typedef struct fdt_arch_use {
    int threads;
    int regs, agprs, sgprs;
    long lds;   /* bytes of LDS / shared memory of one workgroup, static and dynamic */
} fdt_arch_use;

typedef struct fdt_occupancy {
    int groups;        /* resident workgroups per CU; 0: one does not fit */
    int waves;         /* resident waves per CU */
    int waves_simd;    /* resident waves on the busiest SIMD (NVIDIA: warps per SM / 4) */
    int threads;       /* resident threads per CU */
    double fraction;   /* waves / the CU's wave slots */
    fdt_occ_limit limit;
} fdt_occupancy;

/* Occupancy of a kernel using u on a. Wave64 rules on AMD: a workgroup's waves spread over
 * the SIMDs of one CU; waves per SIMD are limited by the VGPRs (with the AGPRs, each rounded
 * to the allocation granule), the SGPRs and the wave slots; workgroups by the LDS and 16 per
 * CU. NVIDIA: blocks per SM by threads, by registers (allocated per warp, 256 at a time), by
 * shared memory and 32 per SM. groups == 0 when one workgroup does not fit, and limit says
 * which resource refused it. */
void fdt_arch_occupancy(const fdt_arch *a, const fdt_arch_use *u, fdt_occupancy *o);

/* One line: "8 waves per SIMD (limited by VGPRs)" (AMD) or "32 warps per SM (limited by
 * registers)" (NVIDIA); "none: one workgroup does not fit (VGPRs)" when none fits. */
void fdt_arch_occupancy_format(const fdt_arch *a, const fdt_occupancy *o, char *buf, size_t n);

/* The registers per thread a compiler may use for a kernel whose workgroups have at most lb
 * threads (lb <= 0: none declared; HIP then assumes 1024 on AMD, NVIDIA's cap stays the
 * addressable 255): AMD: the register file over the waves one SIMD must hold, at most the
 * architected VGPRs; NVIDIA: what lets one block of lb threads fit, at least 8. */
int fdt_arch_reg_cap(const fdt_arch *a, int lb);

/* The shared memory (LDS) one workgroup may use on a, or on d when d says (a live device
 * reports its own limits; NULL: the architecture's): dynamic shared memory up to the opt-in
 * limit, static only to the default one. */
long fdt_arch_shared_limit(const fdt_arch *a, const fdt_device *d, int dynamic);

/* 1 when a workgroup needing `bytes` of shared memory (dynamic or static) exceeds
 * fdt_arch_shared_limit, with the reason in why ("needs 73920 bytes of LDS, gfx90a allows
 * 65536 per workgroup"); 0 otherwise. */
int fdt_arch_shared_exceeds(const fdt_arch *a, const fdt_device *d, long bytes, int dynamic,
                            char *why, size_t n);

#endif
