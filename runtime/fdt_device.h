/* A GPU, one struct for everything fdtune knows about one: what a backend reports of a
 * visible device, what the catalogue (recipes/gpus.lua) says of a model, what the database
 * stores, and what recipes see as `dev`. Each user fills or reads the fields it knows;
 * fields nobody filled are zero or "". The rules about devices live here too: which two
 * devices are one model (portable/fdtuned_model.h, shared with exported headers) and the
 * derived last-level cache. */
#ifndef FDT_DEVICE_H
#define FDT_DEVICE_H

#include <stdint.h>

#include "fdtuned_model.h"

typedef struct fdt_device {
    /* --- identity: what the database stores (with id) and compares results by --- */
    int64_t id;            /* database id; 0 until stored (or when not from the database) */
    char backend[8];       /* "cuda", "hip": follows from the arch (fdtuned_arch_backend) */
    char vendor[16];       /* "NVIDIA", "AMD": follows from the arch (fdtuned_arch_vendor) */
    char name[128];        /* the driver's name ("NVIDIA H100 80GB HBM3"), or the catalogue's
                              canonical name ("H100 SXM") for a device described from it */
    char arch[32];         /* "sm_90", "gfx90a" (HIP's ":features" are dropped) */
    int compute_units;     /* SMs (NVIDIA) or CUs (AMD; per GCD for MI250/MI250X) */
    int warp_size;         /* 32 or 64 */
    int64_t l2_bytes;
    int64_t mem_bytes;     /* total memory as the driver reports it */
    char uuid[48];         /* "GPU-..."; "" when unknown: tells GPUs of one model apart */
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
    int64_t llc_bytes;            /* last-level cache: fdt_device_derive */

    /* --- software of a visible device --- */
    char driver_version[64];   /* kernel driver (e.g. 580.159.04) and API version */
    char runtime_version[32];
    char compiler_version[32];

    /* --- provenance --- */
    int index;             /* ordinal within the backend when live; -1 otherwise */
    char catalogue[48];    /* the matching catalogue entry's name; "" when none */
    int live;              /* 1: described by a backend from a visible GPU */
} fdt_device;

/* The backend of a simulated GPU: one whose evaluations a recorded database answers
 * (eval/sim.c). Its identity differs from every real GPU's (this backend, "(simulated)" in
 * its name, a UUID of its own), so its results are never taken for a real device's. */
#define FDT_SIM_BACKEND "sim"

/* 1 when d is a simulated GPU. */
int fdt_device_simulated(const fdt_device *d);

/* Everything zero or "", index -1: a device nobody described yet. */
void fdt_device_init(fdt_device *d);

/* Fills the derived fields: llc_bytes, the Infinity Cache when there is one, else L2. */
void fdt_device_derive(fdt_device *d);

/* 1 when a and b are one device model (portable/fdtuned_model.h): equal names, the same base
 * arch and equal compute units. Memory, UUID and PCI address do not count. */
int fdt_device_same_model(const fdt_device *a, const fdt_device *b);

#endif
