/* A device (a GPU, or the host CPU of backend cpu), one struct for everything fdtune knows about one: what a backend reports of a
 * visible device, what the catalogue (recipes/gpus.lua) says of a model, what the database
 * stores, and what recipes see as `dev`. Each user fills or reads the fields it knows;
 * fields nobody filled are zero or "". The rules about devices live here too: which two
 * devices are one model (portable/fdtuned_model.h, shared with exported headers) and the
 * derived last-level cache. */
#ifndef FDT_DEVICE_H
#define FDT_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "fdtuned_model.h"

/* A GPU's clocks at one moment, as NVML reports them (NVIDIA only): MHz, -1 where unknown,
 * and the reasons the clocks are held down as FDT_THROTTLE_* bits (NVML's own values). */
typedef struct fdt_clocks {
    int known;                 /* 1: read from NVML; 0: nothing known (no NVML, AMD, sim) */
    int sm_mhz, sm_max_mhz;    /* NVML_CLOCK_SM: current, and the most it may reach */
    int mem_mhz, mem_max_mhz;  /* NVML_CLOCK_MEM */
    int reasons_known;         /* 1: reasons holds what NVML said */
    uint64_t reasons;          /* FDT_THROTTLE_* */
} fdt_clocks;

enum {
    FDT_THROTTLE_GPU_IDLE = 0x1,
    FDT_THROTTLE_APPLICATIONS_CLOCKS = 0x2,
    FDT_THROTTLE_SW_POWER_CAP = 0x4,
    FDT_THROTTLE_HW_SLOWDOWN = 0x8,
    FDT_THROTTLE_SYNC_BOOST = 0x10,
    FDT_THROTTLE_SW_THERMAL = 0x20,
    FDT_THROTTLE_HW_THERMAL = 0x40,
    FDT_THROTTLE_HW_POWER_BRAKE = 0x80,
    FDT_THROTTLE_DISPLAY_CLOCKS = 0x100,
};
/* The reasons that cap the clocks for heat or power: a run under one is not comparable. */
#define FDT_THROTTLE_CAPS                                                                  \
    (FDT_THROTTLE_SW_POWER_CAP | FDT_THROTTLE_HW_SLOWDOWN | FDT_THROTTLE_SW_THERMAL |      \
     FDT_THROTTLE_HW_THERMAL | FDT_THROTTLE_HW_POWER_BRAKE)

/* Nothing known: known 0, every clock -1, no reasons. */
void fdt_clocks_init(fdt_clocks *c);
/* The names of the reasons in bits, comma-separated, in bit order ("gpu_idle,sw_thermal"):
 * gpu_idle, applications_clocks, sw_power_cap, hw_slowdown, sync_boost, sw_thermal,
 * hw_thermal, hw_power_brake, display_clocks; bits without a name are left out. "" for none. */
void fdt_throttle_names(uint64_t bits, char *buf, size_t n);
/* The bits of such a list; -1 when a name is unknown. */
int fdt_throttle_parse(const char *names, uint64_t *bits);
/* The name of one bit; NULL when it has none. */
const char *fdt_throttle_name(uint64_t bit);

typedef struct fdt_device {
    /* --- identity: what the database stores (with id) and compares results by --- */
    int64_t id;            /* database id; 0 until stored (or when not from the database) */
    char backend[8];       /* "cuda", "hip", "cpu": follows from the arch (fdt_device_claim_of) */
    char vendor[16];       /* "NVIDIA", "AMD": follows from the arch (fdt_device_claim_of); a
                              CPU's as it reports itself ("AMD", "Intel", "ARM"): "AMD" alone
                              does not mean an AMD GPU (ask the backend or the arch) */
    char name[128];        /* the driver's name ("NVIDIA H100 80GB HBM3"), or the catalogue's
                              canonical name ("H100 SXM") for a device described from it; a
                              CPU's model name ("AMD EPYC 7763 64-Core Processor") */
    char arch[32];         /* "sm_90", "gfx90a" (HIP's ":features" are dropped); a CPU's ISA
                              level: x86-64-v2/v3/v4, aarch64, aarch64-sve */
    int compute_units;     /* SMs (NVIDIA) or CUs (AMD; per GCD for MI250/MI250X); a CPU's
                              physical cores in this process's affinity mask */
    int warp_size;         /* 32 or 64 (1 for a CPU) */
    int64_t l2_bytes;      /* a CPU: per core */
    int64_t mem_bytes;     /* total memory as the driver reports it */
    char uuid[48];         /* "GPU-..."; "" when unknown: tells GPUs of one model apart
                              (NVIDIA: the 16 bytes as 8-4-4-4-12 hex; AMD: fdt_device_amd_uuid);
                              a CPU: "cpu-" + 16 hex digits of a hash of the machine's id */
    char pci[24];          /* "0000:18:00" */

    /* --- capabilities --- */
    int max_threads_per_block;
    int shared_per_block;       /* bytes, static limit */
    int shared_per_block_optin; /* bytes, with the opt-in attribute (NVIDIA above 48 KB) */
    int regs_per_block;
    int clock_khz, mem_clock_khz, mem_bus_bits;
    double peak_bw_gbs;           /* from memory clock and bus width, or the catalogue; 0:
                                     unknown */
    double achievable_bw_gbs;     /* sustained bandwidth published for this model (the
                                     catalogue's); 0: unknown */
    int64_t infinity_cache_bytes; /* AMD Infinity Cache (MALL), from the catalogue; 0: none */
    int64_t llc_bytes;            /* last-level cache: fdt_device_derive (a CPU: the total of
                                     its last-level caches, as the backend read it) */

    /* --- a CPU's facts (backend cpu; zero or "" for GPUs; not stored in the database) --- */
    int sockets;           /* packages holding the cores this process may use */
    int threads;           /* hardware threads this process may use */
    int numa_nodes;        /* NUMA nodes of the machine */
    char simd[16];         /* the widest SIMD ISA: "AVX-512", "AVX2", "SSE4.2", "SVE", "NEON" */
    int vector_bytes;      /* its vector register's bytes (16, 32, 64; SVE: the length now) */
    int64_t l1d_bytes;     /* L1 data cache per core (l2_bytes: L2 per core) */
    char core_ids[128];    /* the CPUs this process may use, as a list ("0-7,16-23") */

    /* --- software of a visible device --- */
    /* what the environment record keeps, readable: */
    char driver_version[128];   /* kernel driver: "580.159.04" (NVML), "CUDA driver API 13.0"
                                   (cuDriverGetVersion, without NVML), "amdgpu 6.10.5" */
    char driver_source[8];      /* where driver_version came from: "nvml", "cuda"; "" (AMD) */
    char runtime_version[320];  /* "driver API 13.0", "HIP 6.2.41133 (/opt/rocm-6.2.0/lib)" */
    char compiler_version[512]; /* "nvrtc 13.0", "hiprtc 6.2.60200, comgr 2.8 (<dir>)" */

    fdt_clocks clocks;          /* when it was described (NVIDIA with NVML; else unknown) */

    /* --- provenance --- */
    int index;             /* ordinal within the backend when live; -1 otherwise */
    char catalogue[48];    /* the matching catalogue entry's name; "" when none */
    int live;              /* 1: described by a backend from a visible GPU */
} fdt_device;

/* Which backend and vendor an architecture name belongs to: every backend fdtune has, built
 * into this binary or not (a build without CUDA still reads NVIDIA devices from databases and
 * from the catalogue), claims the architectures its compiler targets. The one rule that names
 * an architecture's backend: fdt_device.backend and .vendor follow from it, the catalogue
 * checks its entries by it and the runtime picks a compiler by it (fdt_rt_backend_for_arch). */
typedef struct fdt_device_claim {
    const char *backend; /* "cuda", "hip", "cpu": the name of the runtime's backend */
    const char *vendor;  /* "NVIDIA", "AMD"; "" for cpu (a CPU reports its own vendor) */
    const char *form;    /* what its architecture names look like, for messages: "sm_..." */
    int (*claims)(const char *arch); /* 1 when arch (features after ':' or not) is one */
} fdt_device_claim;

/* The claim arch falls under; NULL when no backend claims it (NULL and "" included). */
const fdt_device_claim *fdt_device_claim_of(const char *arch);
/* Claim i of every backend fdtune has, in a fixed order; NULL past the end. */
const fdt_device_claim *fdt_device_claim_at(int i);

/* The backend of a simulated GPU: one whose evaluations a recorded database answers
 * (eval/sim.c). Its identity differs from every real GPU's (this backend, "(simulated)" in
 * its name, a UUID of its own), so its results are never taken for a real device's. */
#define FDT_SIM_BACKEND "sim"

/* 1 when d is a simulated GPU. */
int fdt_device_simulated(const fdt_device *d);

/* Everything zero or "", index -1: a device nobody described yet. */
void fdt_device_init(fdt_device *d);

/* Fills the derived fields: llc_bytes, the Infinity Cache when there is one, else L2; a CPU
 * (sockets > 0) keeps the last-level cache its backend read. */
void fdt_device_derive(fdt_device *d);

/* The UUID of an AMD GPU from the 16 bytes of hipDeviceGetUuid, as rocminfo and
 * ROCR_VISIBLE_DEVICES write it: ROCm's runtime fills them with the 16 hex characters of the
 * GPU's 64-bit unique id (ROCr's "GPU-<16 hex>" without "GPU-"), so "GPU-" and those 16
 * characters; "" where the GPU has none (ROCr's "GPU-XX"); "GPU-" and 32 hex digits of the
 * 16 bytes where they are anything else. */
void fdt_device_amd_uuid(const unsigned char bytes[16], char *out, size_t n);

/* The UUID fdtune stored for d's GPU before it kept all of it (hip, up to fdtune 0.1.0: the
 * first 8 of the 16 characters as hex bytes, "GPU-3132..."), for d with an AMD UUID of the
 * current form; 0 when there is one. */
int fdt_device_amd_uuid_legacy(const fdt_device *d, char *out, size_t n);

/* 1 when stored and live name one GPU by their UUIDs (both known): the same UUID, or a
 * stored AMD UUID of the legacy form of live's. */
int fdt_device_same_gpu(const fdt_device *stored, const fdt_device *live);

/* 1 when a and b are one device model (portable/fdtuned_model.h): equal names, the same base
 * arch and equal compute units. Memory, UUID and PCI address do not count. */
int fdt_device_same_model(const fdt_device *a, const fdt_device *b);

#endif
