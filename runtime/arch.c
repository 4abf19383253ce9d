/* The per-architecture table and the occupancy rules built on it (fdt_arch.h).
 *
 * Sources of the facts:
 *  - AMD: the ROCm "GPU architecture hardware specifications" table
 *    (rocm.docs.amd.com/en/latest/reference/gpu-arch-specs.html): wave size 64 on
 *    CDNA/GCN, 32 on RDNA; 64 KiB of LDS per CU on CDNA/GCN (per workgroup too); VGPR file
 *    512 KiB per CU on MI210/MI250/MI250X/MI300 (= 512 VGPRs per lane of 4 SIMDs of 64 lanes),
 *    256 KiB VGPR + 256 KiB AccVGPR on MI100, 256 KiB on MI50/MI60; SGPR file 12.5 KiB (800
 *    per SIMD). The LLVM AMDGPU backend that compiles for them (AMDGPUBaseInfo.cpp, which
 *    llvm.org's llvm-calc-occupancy documents for gfx90a: "Max waves/EU: 8", "EUs (SIMDs)
 *    per CU: 4"): 8 waves per SIMD on gfx90a and gfx940+, 10 on earlier gfx9, 16 on gfx10.3+;
 *    VGPRs allocated in granules of 8 on gfx90a/gfx940+, 4 on earlier gfx9 (wave64), 16 on
 *    gfx10.3 and 24 on gfx11 (wave32); 512 VGPRs with the AGPRs on gfx90a/gfx940+ (the
 *    architected VGPRs rounded up to 4, then the AGPRs), 256 earlier; at most 256
 *    architected VGPRs; SGPR occupancy on gfx9 (<= 80: 10 waves, <= 88: 9, <= 100: 8, else 7);
 *    at most 16 workgroups of more than one wave per CU; LDS allocated in blocks of 128
 *    dwords (AMDGPUUsage: COMPUTE_PGM_RSRC2.LDS_SIZE). HIP's default launch bound is 1024
 *    threads, so a kernel without __launch_bounds__ is compiled for 16 waves per workgroup.
 *  - NVIDIA: the CUDA C++ Programming Guide's table of compute capabilities 8.0 and 9.0 and
 *    the CUDA Occupancy Calculator: 65536 32-bit registers per SM and per block, 255 per
 *    thread, allocated per warp 256 at a time; 2048 threads (64 warps) and 32 blocks per SM;
 *    shared memory 164 KiB per SM and 163 KiB per block with the opt-in on 8.0, 228 and 227
 *    KiB on 9.0, 48 KiB without it. These are the figures fdtune applied before this table
 *    existed; the model's NVIDIA constants are its H100 fit, unchanged.
 * The model constants of the AMD entries say for each whether it is published, derived or
 * fitted (to the seeds' MI250X measurements, tests/test_arch.c). */
#include "fdt_arch.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define KIB 1024

/* The analytic model's constants fitted to an H100 (search/model.c before this table):
 * every NVIDIA architecture shares them. On chip, per SM and clock (the CUDA C++ Programming
 * Guide): shared memory of 32 banks of 32 bits a clock, 128 bytes; four schedulers of one warp
 * instruction each, 128 thread instructions; occ_half 0.8 waves per scheduler fitted with
 * search/model.c's SOFTMAX_SIDES to fdtune's H100 and H200 measurements
 * (tests/data/nvidia-measured.txt; among them the stream's lap R=8 f32 2x2 at 8 and 16 warps
 * per SM, 0.534 and 0.657 of copy, bench/notes/stream_notes.txt); halo_steps 1 measured on an H100
 * (lap R=7 f32, one stream per SM, nw 128 -> 512: 4.5% faster; bench/notes/stream_notes item 15).
 * The FP rates differ between architectures (NVIDIA_SM). */
#define NVIDIA_MODEL                                                                         \
    .clock_hz = 1.7e9, .l1_bytes_clk = 128.0, .sector = 32.0, .l2_over_dram = 2.5,            \
    .l1_reuse = 0.7,                                                                          \
    .dram_eff = 0.90, .latency_s = 700e-9, .llc_near = 0.5, .llc_knee = 0, .llc_steep = 0,    \
    .wave_clk = 0, .async_copy = 1, .lds_bytes_clk = 128.0, .issue_clk = 128.0,               \
    .mem_issue = 1, .occ_half = 0.8, .halo_steps = 1.0

/* The AMD model constants, from the MI250X (gfx90a) unless an entry overrides one:
 *  - sector 64 B: the MI200 vector L1 line (seeds, Seismic stencil codes part 2: "64 B - the
 *    MI250 L1 cache line size"), l1_bytes_clk 64: one such line per clock per CU (assumed);
 *  - l2_over_dram 2.1: derived, 32 L2 channels (rocprofiler-compute's L2 chapter) at 64 B per
 *    clock each (assumed) at 1.7 GHz, 3.5 TB/s, over the 1.64 TB/s peak of one GCD;
 *  - dram_eff 0.735, wave_clk 19: fitted to the seeds' MI250X series (1/GB/s = 1/B + c/bytes
 *    per thread: the seismic kernels give B = 1204 GB/s = 0.735 of the peak and c = 19 clocks
 *    per wave per CU); the seeds' BabelStream figure for one GCD is 1.3-1.4 TB/s;
 *  - llc_knee 1.87, llc_steep 6.1: fitted to the seeds' d2z baselines R = 1..4 at 512^3 (HBM
 *    read/write 7.0 at R = 4) and the Laplacian's L2 limit (three planes of 2.5 MB fit 8 MB,
 *    one plane of 8 MB leaves a third of the fetches useful);
 *  - llc_near 1: one GCD's L2 serves all its CUs;
 *  - latency 700 ns: the H100 figure (not measured on AMD);
 *  - async_copy 0: HIP has no asynchronous global-to-LDS copy in source form (the ring's
 *    copies are ordinary loads and stores, templates/prelude.hip);
 *  - on chip, per CU and clock: LDS 128 bytes (32 banks of 4 bytes: rocprofiler-compute's
 *    LDS examples, measured on an MI250); one wave64 vector instruction (four SIMD16s, each
 *    taking 4 clocks per instruction: the ROCm pipeline descriptions), 64 thread
 *    instructions, memory instructions issuing beside them (mem_issue 0); the FP rates from
 *    each data sheet's peak vector FLOPs over CUs x clock / 2 (AMD_MODEL's fp32 and fp64);
 *    occ_half the H100's (not fitted on AMD; it keeps the
 *    MI250X seed rows within their tolerances);
 *  - halo_steps 0: the z halo's steps are measured on an H100 only (bench/notes/stream_notes item
 *    15); the seeds' MI250X window series (Seismic stencil codes part 1, figure 11) shows the
 *    effective bandwidth following the HBM read/write ratio that the traffic term already
 *    counts, and the one MI250X row with a window (d2z nw=64) says nothing of nw. */
#define AMD_MODEL(clock, line, fp32, fp64)                                                   \
    .clock_hz = clock, .l1_bytes_clk = 64.0, .sector = line, .l2_over_dram = 2.1,             \
    .l1_reuse = 1.0,                                                                          \
    .dram_eff = 0.735, .latency_s = 700e-9, .llc_near = 1.0, .llc_knee = 1.87,                \
    .llc_steep = 6.1, .wave_clk = 19.0, .async_copy = 0, .lds_bytes_clk = 128.0,              \
    .issue_clk = 64.0, .fp32_clk = fp32, .fp64_clk = fp64, .mem_issue = 0, .occ_half = 0.8,   \
    .halo_steps = 0

/* CDNA and GCN (wave64, 4 SIMDs of 16 lanes per CU, 64 KiB of LDS): waves per SIMD, VGPRs
 * per lane, AGPRs in a file of their own, AGPRs in the VGPR file, the VGPR granule. */
#define AMD_GFX9(waves, vgprs, agprs, unified, granule)                                      \
    .vendor = "AMD", .known = 1, .fallback = "", .wave = 64, .simds = 4,                      \
    .max_waves_simd = waves, .max_groups_cu = 16, .max_group_threads = 1024,                  \
    .reg_file = vgprs, .agpr_file = agprs, .unified_agprs = unified, .reg_granule = granule,  \
    .max_regs_thread = 256, .sgpr_rule = 1, .lds_cu = 64 * KIB, .lds_group = 64 * KIB,        \
    .lds_group_static = 64 * KIB, .lds_granule = 512

/* RDNA in wave32 (HIP's default there): 2 SIMD32 per CU, 4 per WGP; 64 KiB of LDS per
 * workgroup, 128 KiB per WGP. */
#define AMD_RDNA(vgprs, granule)                                                             \
    .vendor = "AMD", .known = 1, .fallback = "", .wave = 32, .simds = 2, .max_waves_simd = 16, \
    .max_groups_cu = 16, .max_group_threads = 1024, .reg_file = vgprs,                        \
    .reg_granule = granule, .max_regs_thread = 256, .sgpr_rule = 0, .lds_cu = 64 * KIB,       \
    .lds_group = 64 * KIB, .lds_group_static = 64 * KIB, .lds_granule = 512

/* NVIDIA: shared memory per SM and per block with the opt-in; FP32 and FP64 results per SM
 * and clock (the programming guide's table of arithmetic instruction throughput: 64 and 32
 * on 8.0, 128 and 64 on 9.0). */
#define NVIDIA_SM(lds_sm, lds_block, fp32, fp64)                                             \
    .vendor = "NVIDIA", .known = 1, .fallback = "", .wave = 32, .simds = 4,                   \
    .max_waves_simd = 16, .max_groups_cu = 32, .max_group_threads = 1024, .reg_file = 65536,  \
    .reg_granule = 8, .max_regs_thread = 255, .lds_cu = lds_sm, .lds_group = lds_block,       \
    .lds_group_static = 48 * KIB, .lds_granule = 0, .fp32_clk = fp32, .fp64_clk = fp64,      \
    NVIDIA_MODEL

static const fdt_arch table[] = {
    /* FP32 and FP64 per CU and clock: MI50 13.4 and 6.7 TFLOPs at 60 CUs x 1.725 GHz; MI100
     * 23.1 and 11.5 at 120 x 1.502; MI250X 47.9 and 47.9 at 220 x 1.7 (packed FP32 doubles
     * FP32, not counted: the compiler must pair the operations); MI300X 81.7 FP64 (the FP32
     * 163.4 is packed) at 304 x 2.1; RX 6900 XT 23.0 at 80 x 2.25, FP64 1/16 of it; RX 7900
     * XTX 61.4 with dual issue (not counted) at 96 x 2.5, FP64 1.9 */
    {.name = "gfx906", AMD_GFX9(10, 256, 0, 0, 4), AMD_MODEL(1.725e9, 64.0, 64, 32),
     .source = "GCN5.1 (MI50, MI60): 256 VGPRs, 10 waves per SIMD"},
    {.name = "gfx908", AMD_GFX9(10, 256, 256, 0, 4), AMD_MODEL(1.502e9, 64.0, 64, 32),
     .source = "CDNA (MI100): 256 VGPRs and 256 AGPRs in files of their own, 10 waves per SIMD"},
    {.name = "gfx90a", AMD_GFX9(8, 512, 0, 1, 8), AMD_MODEL(1.7e9, 64.0, 64, 64),
     .source = "CDNA2 (MI210, MI250, MI250X): 512 VGPRs with the AGPRs, 8 waves per SIMD"},
    {.name = "gfx942", AMD_GFX9(8, 512, 0, 1, 8), AMD_MODEL(2.1e9, 128.0, 64, 64),
     .source = "CDNA3 (MI300X, MI300A): 512 VGPRs with the AGPRs, 8 waves per SIMD; 128 B "
               "L1 lines; the other model constants are gfx90a's (not fitted on an MI300)"},
    {.name = "gfx1030", AMD_RDNA(1024, 16), AMD_MODEL(2.25e9, 128.0, 64, 4),
     .source = "RDNA2 (RX 6900 XT) in wave32: 1024 VGPRs per lane, 16 waves per SIMD; model "
               "constants gfx90a's (not fitted)"},
    {.name = "gfx1100", AMD_RDNA(1536, 24), AMD_MODEL(2.5e9, 128.0, 64, 4),
     .source = "RDNA3 (RX 7900 XTX) in wave32: 1536 VGPRs per lane, 16 waves per SIMD; model "
               "constants gfx90a's (not fitted)"},
    {.name = "sm_80", NVIDIA_SM(164 * KIB, 163 * KIB, 64, 32),
     .source = "compute capability 8.0 (A100)"},
    /* code_limit: on an H100 every stream kernel of 139.6 KB (10^3 bytes) of .text or more ran
     * 1.7-3.7x slower than its smaller neighbours, every one of 135.2 KB or less at speed (the 70
     * tuned bests of bench/matrix among them; bench/notes/stream_notes.txt item 11): the limit sits
     * between */
    {.name = "sm_90", NVIDIA_SM(228 * KIB, 227 * KIB, 128, 64), .code_limit = 136000,
     .source = "compute capability 9.0 (H100, H200)"},
};
#define NTABLE (sizeof table / sizeof table[0])

static const fdt_arch *entry(const char *name)
{
    for (size_t i = 0; i < NTABLE; i++)
        if (!strcmp(table[i].name, name))
            return &table[i];
    return NULL;
}

const fdt_arch *fdt_arch_at(int i) { return i >= 0 && (size_t)i < NTABLE ? &table[i] : NULL; }

const fdt_arch *fdt_arch_find(const char *arch)
{
    static fdt_arch fb_rdna, fb_cdna, fb_sm, fb_other;
    char base[32];
    size_t n = 0, len = (size_t)fdtuned_arch_base_len(arch);
    for (; n < len && n + 1 < sizeof base; n++)
        base[n] = (char)tolower((unsigned char)arch[n]);
    base[n] = 0;
    const fdt_arch *a = entry(base);
    if (a)
        return a;
    /* The fallbacks: copies of a known entry that say so. Every call writes the same bytes
     * into its fallback, so concurrent calls agree. */
    if (!strncmp(base, "gfx1", 4) && strlen(base) >= 7) {
        fb_rdna = *entry("gfx1030");
        fb_rdna.known = 0;
        fb_rdna.fallback = "unknown RDNA architecture: gfx1030's facts";
        return &fb_rdna;
    }
    if (!strncmp(base, "gfx", 3)) {
        fb_cdna = *entry("gfx90a");
        fb_cdna.known = 0;
        fb_cdna.fallback = "unknown gfx architecture: gfx90a's facts";
        return &fb_cdna;
    }
    fdt_arch *fb = !strncmp(base, "sm_", 3) ? &fb_sm : &fb_other;
    *fb = *entry("sm_80");
    fb->known = 0;
    fb->fallback = fb == &fb_sm ? "unknown sm architecture: sm_80's facts"
                                : "unknown architecture: sm_80's facts";
    return fb;
}

const fdt_arch *fdt_arch_of(const fdt_device *d)
{
    if (d->arch[0])
        return fdt_arch_find(d->arch);
    return fdt_arch_find(!strcmp(d->vendor, "AMD") ? "gfx" : "sm_");
}

static int amd(const fdt_arch *a) { return !strcmp(a->vendor, "AMD"); }
static int ceil_div(long a, long b) { return (int)((a + b - 1) / b); }
static long round_up(long v, long m) { return m > 0 ? (v + m - 1) / m * m : v; }

int fdt_arch_slot_barriers(const fdt_arch *a, const fdt_config *c)
{
    return c->mbar && a->async_copy;
}

const char *fdt_occ_limit_name(const fdt_arch *a, fdt_occ_limit l)
{
    int am = amd(a);
    switch (l) {
    case FDT_OCC_WAVES: return am ? "wave slots" : "warp slots";
    case FDT_OCC_REGS: return am ? "VGPRs" : "registers";
    case FDT_OCC_AGPRS: return "AGPRs";
    case FDT_OCC_SGPRS: return "SGPRs";
    case FDT_OCC_LDS: return am ? "LDS" : "shared memory";
    case FDT_OCC_GROUP_SIZE: return am ? "workgroup size" : "block size";
    case FDT_OCC_GROUPS: return am ? "workgroups" : "blocks";
    default: return "?";
    }
}

/* Waves per SIMD the SGPRs allow on gfx9 (LLVM's getOccupancyWithNumSGPRs, VI and later). */
static int sgpr_waves(int sgprs)
{
    return sgprs <= 80 ? 10 : sgprs <= 88 ? 9 : sgprs <= 100 ? 8 : 7;
}

/* Keeps the smallest bound and which resource set it (the first of equals). */
static void bound(int *v, fdt_occ_limit *lim, int cand, fdt_occ_limit why)
{
    if (cand < *v) {
        *v = cand;
        *lim = why;
    }
}

/* Waves per SIMD the registers of one wave allow (AMD), and which file limits them. */
static int amd_reg_waves(const fdt_arch *a, const fdt_arch_use *u, fdt_occ_limit *lim)
{
    int waves = a->max_waves_simd;
    *lim = FDT_OCC_WAVES;
    /* regs is the compiler's count (.vgpr_count), which already holds the AGPRs where they
     * share the file (gfx90a, gfx942: the VGPRs rounded up to 4, then the AGPRs) and is the
     * larger of the two files' counts on gfx908 */
    int v = u->regs > 0 ? u->regs : 0, ag = u->agprs > 0 ? u->agprs : 0;
    if (v > 0)
        bound(&waves, lim, a->reg_file / (int)round_up(v, a->reg_granule), FDT_OCC_REGS);
    if (a->agpr_file > 0 && ag > 0)
        bound(&waves, lim, a->agpr_file / (int)round_up(ag, a->reg_granule), FDT_OCC_AGPRS);
    if (a->sgpr_rule && u->sgprs > 0)
        bound(&waves, lim, sgpr_waves(u->sgprs), FDT_OCC_SGPRS);
    return waves;
}

void fdt_arch_occupancy(const fdt_arch *a, const fdt_arch_use *u, fdt_occupancy *o)
{
    memset(o, 0, sizeof *o);
    int threads = u->threads > 0 ? u->threads : 1;
    int w = ceil_div(threads, a->wave);  /* waves of one workgroup */
    int slots = a->max_waves_simd * a->simds;
    int groups = 1 << 30;
    fdt_occ_limit lim = FDT_OCC_WAVES;
    if (threads > a->max_group_threads) {
        o->limit = FDT_OCC_GROUP_SIZE;
        return;
    }
    if (amd(a)) {
        fdt_occ_limit rl;
        int per_simd = amd_reg_waves(a, u, &rl);
        /* one workgroup puts ceil(w / simds) waves on its busiest SIMD */
        if (ceil_div(w, a->simds) > per_simd) {
            o->limit = per_simd < a->max_waves_simd ? rl : FDT_OCC_GROUP_SIZE;
            return;
        }
        groups = per_simd * a->simds / w;
        lim = per_simd < a->max_waves_simd ? rl
              : (per_simd * a->simds) % w ? FDT_OCC_GROUP_SIZE : FDT_OCC_WAVES;
        if (w > 1)
            bound(&groups, &lim, a->max_groups_cu, FDT_OCC_GROUPS);
    } else {
        groups = slots / w; /* warps per SM */
        if (slots % w)
            lim = FDT_OCC_GROUP_SIZE;
        if (u->regs > 0) {
            long per_warp = round_up(u->regs, a->reg_granule) * a->wave;
            bound(&groups, &lim, (int)(a->reg_file / (per_warp * w)), FDT_OCC_REGS);
        }
        bound(&groups, &lim, a->max_groups_cu, FDT_OCC_GROUPS);
    }
    if (u->lds > 0) {
        long need = round_up(u->lds, a->lds_granule);
        bound(&groups, &lim, need > a->lds_group ? 0 : (int)(a->lds_cu / need), FDT_OCC_LDS);
    }
    if (groups < 0)
        groups = 0;
    o->limit = lim;
    o->groups = groups;
    o->waves = groups * w;
    o->waves_simd = ceil_div(o->waves, a->simds);
    o->threads = groups * threads;
    o->fraction = (double)o->waves / slots;
}

void fdt_arch_occupancy_format(const fdt_arch *a, const fdt_occupancy *o, char *buf, size_t n)
{
    const char *lim = fdt_occ_limit_name(a, o->limit);
    if (o->groups == 0)
        snprintf(buf, n, "none: one %s does not fit (%s)", amd(a) ? "workgroup" : "block", lim);
    else if (amd(a))
        snprintf(buf, n, "%d waves per SIMD (limited by %s)", o->waves_simd, lim);
    else
        snprintf(buf, n, "%d warps per SM (limited by %s)", o->waves, lim);
}

int fdt_arch_reg_cap(const fdt_arch *a, int lb)
{
    if (amd(a)) {
        int threads = lb > 0 ? lb : 1024;
        int per_simd = ceil_div(ceil_div(threads, a->wave), a->simds);
        int cap = a->reg_file / per_simd / a->reg_granule * a->reg_granule;
        return cap < a->max_regs_thread ? cap : a->max_regs_thread;
    }
    if (lb <= 0)
        return a->max_regs_thread;
    int cap = (int)(a->reg_file / round_up(lb, a->wave) / a->reg_granule * a->reg_granule);
    return cap > 8 ? cap : 8;
}

long fdt_arch_shared_limit(const fdt_arch *a, const fdt_device *d, int dynamic)
{
    long st = d && d->shared_per_block > 0 ? d->shared_per_block : a->lds_group_static;
    long opt = d && d->shared_per_block_optin > 0 ? d->shared_per_block_optin : a->lds_group;
    return dynamic && opt > st ? opt : st;
}

int fdt_arch_shared_exceeds(const fdt_arch *a, const fdt_device *d, long bytes, int dynamic,
                            char *why, size_t n)
{
    long limit = fdt_arch_shared_limit(a, d, dynamic);
    if (bytes <= 0 || limit <= 0 || bytes <= limit)
        return 0;
    snprintf(why, n, "needs %ld bytes of %s, %s allows %ld per %s%s", bytes,
             amd(a) ? "LDS" : "shared memory", d && d->name[0] ? d->name : a->name, limit,
             amd(a) ? "workgroup" : "block",
             !amd(a) && !dynamic && limit < a->lds_group ? " without the opt-in" : "");
    return 1;
}
