/* Tests of the per-architecture rules (runtime/arch.c) and of what is built on them, CPU only:
 * the facts of each architecture against the vendors' published figures, with the fallback of
 * an unknown one; wave64 occupancy on AMD (VGPRs with the AGPRs, the allocation granule, SGPRs,
 * LDS, workgroups per CU) and NVIDIA's rule as fdtune applied it before the table existed; the
 * registers launch bounds leave a kernel; the pruning of compiled candidates (a 1024-thread
 * workgroup on gfx90a fits up to 128 VGPRs, scratch without spills is pruned on AMD); `fdtune
 * gen`'s occupancy line and its LDS warning; the catalogue's plausible peak bandwidth (an
 * MI300X's misread 2662 GB/s) and the timing flush that covers the Infinity Cache; and the
 * analytic model on an MI250X against the seeds' published numbers, with its dry-run ranking,
 * and on an H100 and an H200 against fdtune's measurements (tests/data/nvidia-measured.txt);
 * the model's on-chip counts per point against hand counts of the templates, and the limit it
 * says binds (on chip for the Laplacian at R=8, DRAM for d2x and d2z at R=4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt_arch.h"
#include "fdt_eval.h"
#include "fdt_recipe.h"
#include "fdt_search.h"
#include "testutil.h"

#ifndef FDTUNE_BIN
#error "FDTUNE_BIN (the fdtune executable) must be defined by the build"
#endif
#ifndef FDT_SOURCE_DIR
#define FDT_SOURCE_DIR "."
#endif

/* ------------------------------------------------------------------ helpers */

static void assert_contains(const char *msg, const char *part)
{
    if (!msg || !strstr(msg, part))
        fail_msg("expected \"%s\" in \"%s\"", part, msg ? msg : "(null)");
}

static const char *srcdir(void)
{
    const char *s = getenv("FDTUNE_TEST_SRC");
    return s && *s ? s : FDT_SOURCE_DIR;
}

static fdt_catalogue *catalogue(void)
{
    char path[1100];
    fdt_err e;
    fdt_catalogue *c;
    snprintf(path, sizeof path, "%s/recipes/gpus.lua", srcdir());
    if (fdt_catalogue_load(path, &c, &e))
        fail_msg("%s", e.msg);
    return c;
}

static fdt_device gpu(const char *name)
{
    fdt_catalogue *cat = catalogue();
    fdt_device d;
    fdt_err e;
    if (fdt_catalogue_find(cat, name, NULL, 0, &d, &e))
        fail_msg("%s", e.msg);
    fdt_catalogue_free(cat);
    return d;
}

static fdt_config cfg(const fdt_problem *p, const char *text)
{
    fdt_config c;
    fdt_err e = {{0}};
    if (fdt_config_parse(text, &c, &e))
        fail_msg("%s: %s", text, e.msg);
    if (fdt_config_check(p, &c, &e))
        fail_msg("%s is not valid: %s", text, e.msg);
    return c;
}

static fdt_occupancy occ(const char *arch, int threads, int regs, int agprs, int sgprs, long lds)
{
    fdt_arch_use u = {threads, regs, agprs, sgprs, lds};
    fdt_occupancy o;
    fdt_arch_occupancy(fdt_arch_find(arch), &u, &o);
    return o;
}

/* ------------------------------------------------------------------ 1. facts */

/* Each figure as AMD's GPU specifications table (VGPR file per CU, LDS), the LLVM AMDGPU
 * backend (waves per SIMD, granules) and the CUDA programming guide state it. */
static void test_facts(void **state)
{
    (void)state;
    static const struct {
        const char *arch;
        int wave, simds, waves, regs, agprs, unified, granule, lds_cu, lds_group;
    } want[] = {
        /* 512 KiB of VGPRs per CU = 512 per lane of 4 SIMDs x 64 lanes, AGPRs included */
        {"gfx90a", 64, 4, 8, 512, 0, 1, 8, 65536, 65536},
        {"gfx942", 64, 4, 8, 512, 0, 1, 8, 65536, 65536},
        /* MI100: 256 KiB VGPR + 256 KiB AccVGPR */
        {"gfx908", 64, 4, 10, 256, 256, 0, 4, 65536, 65536},
        {"gfx906", 64, 4, 10, 256, 0, 0, 4, 65536, 65536},
        {"sm_90", 32, 4, 16, 65536, 0, 0, 8, 228 * 1024, 227 * 1024},
        {"sm_80", 32, 4, 16, 65536, 0, 0, 8, 164 * 1024, 163 * 1024},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const fdt_arch *a = fdt_arch_find(want[i].arch);
        assert_string_equal(a->name, want[i].arch);
        assert_int_equal(a->known, 1);
        assert_int_equal(a->wave, want[i].wave);
        assert_int_equal(a->simds, want[i].simds);
        assert_int_equal(a->max_waves_simd, want[i].waves);
        assert_int_equal(a->reg_file, want[i].regs);
        assert_int_equal(a->agpr_file, want[i].agprs);
        assert_int_equal(a->unified_agprs, want[i].unified);
        assert_int_equal(a->reg_granule, want[i].granule);
        assert_int_equal(a->lds_cu, want[i].lds_cu);
        assert_int_equal(a->lds_group, want[i].lds_group);
        assert_true(a->source && *a->source);
    }
    /* NVIDIA: 2048 threads, 32 blocks, 255 registers, 48 KiB without the opt-in */
    const fdt_arch *h = fdt_arch_find("sm_90");
    assert_int_equal(h->wave * h->simds * h->max_waves_simd, 2048);
    assert_int_equal(h->max_groups_cu, 32);
    assert_int_equal(h->max_regs_thread, 255);
    assert_int_equal(h->lds_group_static, 48 * 1024);
    assert_string_equal(h->vendor, "NVIDIA");
    /* AMD: 16 workgroups per CU, 256 architected VGPRs, SGPRs limit waves on gfx9 */
    const fdt_arch *m = fdt_arch_find("gfx90a");
    assert_int_equal(m->max_groups_cu, 16);
    assert_int_equal(m->max_regs_thread, 256);
    assert_int_equal(m->sgpr_rule, 1);
    assert_string_equal(m->vendor, "AMD");
    /* every entry is whole: sane limits, model constants, a source */
    for (int i = 0; fdt_arch_at(i); i++) {
        const fdt_arch *a = fdt_arch_at(i);
        assert_true(a->known && a->wave > 0 && a->simds > 0 && a->max_waves_simd > 0);
        assert_true(a->lds_group <= a->lds_cu && a->lds_group_static <= a->lds_group);
        assert_true(a->clock_hz > 1e9 && a->dram_eff > 0.5 && a->dram_eff <= 1);
        assert_true(a->l2_over_dram > 1 && a->l1_reuse > 0 && a->l1_reuse <= 1);
        assert_true(fdt_arch_find(a->name) == a);
    }
}

static void test_lookup_and_fallback(void **state)
{
    (void)state;
    /* features and case do not matter */
    assert_true(fdt_arch_find("gfx90a:sramecc+:xnack-") == fdt_arch_find("gfx90a"));
    assert_true(fdt_arch_find("GFX942") == fdt_arch_find("gfx942"));
    /* unknown architectures fall back explicitly, saying whose facts they get */
    const fdt_arch *f = fdt_arch_find("gfx950");
    assert_int_equal(f->known, 0);
    assert_contains(f->fallback, "gfx90a");
    assert_int_equal(f->wave, 64);
    assert_int_equal(f->reg_file, 512);
    const fdt_arch *r = fdt_arch_find("gfx1201");
    assert_int_equal(r->known, 0);
    assert_contains(r->fallback, "gfx1030");
    assert_int_equal(r->wave, 32);
    const fdt_arch *n = fdt_arch_find("sm_100");
    assert_int_equal(n->known, 0);
    assert_contains(n->fallback, "sm_80");
    assert_int_equal(n->wave, 32);
    assert_int_equal(fdt_arch_find("")->known, 0);
    /* a device without an arch falls back by its vendor */
    fdt_device d;
    fdt_device_init(&d);
    snprintf(d.vendor, sizeof d.vendor, "AMD");
    assert_string_equal(fdt_arch_of(&d)->vendor, "AMD");
    snprintf(d.vendor, sizeof d.vendor, "NVIDIA");
    assert_string_equal(fdt_arch_of(&d)->vendor, "NVIDIA");
    snprintf(d.arch, sizeof d.arch, "gfx908");
    assert_true(fdt_arch_of(&d) == fdt_arch_find("gfx908"));
}

/* ------------------------------------------------------------------ 2. occupancy */

static void test_occupancy_amd(void **state)
{
    (void)state;
    /* a 1024-thread workgroup (16 waves, 4 per SIMD) fits gfx90a up to 512 / 4 = 128 VGPRs */
    fdt_occupancy o = occ("gfx90a", 1024, 128, 0, 0, 0);
    assert_int_equal(o.groups, 1);
    assert_int_equal(o.waves_simd, 4);
    assert_int_equal(o.limit, FDT_OCC_REGS);
    o = occ("gfx90a", 1024, 129, 0, 0, 0); /* rounds to 136: 3 waves per SIMD */
    assert_int_equal(o.groups, 0);
    assert_int_equal(o.limit, FDT_OCC_REGS);
    /* gfx908 and gfx906: 256 VGPRs, granule 4 */
    assert_int_equal(occ("gfx908", 1024, 64, 0, 0, 0).groups, 1);
    assert_int_equal(occ("gfx908", 1024, 65, 0, 0, 0).groups, 0);
    assert_int_equal(occ("gfx906", 1024, 64, 0, 0, 0).groups, 1);
    assert_int_equal(occ("gfx906", 1024, 66, 0, 0, 0).groups, 0);
    /* gfx90a: the compiler's VGPR count holds the AGPRs that share the file (65 VGPRs and
     * 64 AGPRs are counted 68 + 64 = 132): the AGPR count adds nothing */
    assert_int_equal(occ("gfx90a", 1024, 128, 64, 0, 0).groups, 1);
    assert_int_equal(occ("gfx90a", 1024, 132, 64, 0, 0).groups, 0);
    /* gfx908: the AGPRs have a file of their own, as large as the VGPRs' */
    assert_int_equal(occ("gfx908", 1024, 64, 64, 0, 0).groups, 1);
    o = occ("gfx908", 1024, 0, 80, 0, 0);
    assert_int_equal(o.groups, 0);
    assert_int_equal(o.limit, FDT_OCC_AGPRS);
    /* waves per SIMD by VGPRs, granule 8: 64 -> 8, 65 -> 7 (512 / 72) */
    o = occ("gfx90a", 256, 64, 0, 0, 0);
    assert_int_equal(o.waves_simd, 8);
    assert_int_equal(o.limit, FDT_OCC_WAVES);
    assert_true(fabs(o.fraction - 1.0) < 1e-12);
    o = occ("gfx90a", 256, 65, 0, 0, 0);
    assert_int_equal(o.waves_simd, 7);
    assert_int_equal(o.groups, 7);
    assert_int_equal(o.limit, FDT_OCC_REGS);
    /* 10 waves per SIMD before gfx90a */
    assert_int_equal(occ("gfx908", 64, 24, 0, 0, 0).waves_simd, 10);
    /* SGPRs: more than 100 leave 7 waves per SIMD (gfx9) */
    o = occ("gfx90a", 256, 32, 0, 102, 0);
    assert_int_equal(o.waves_simd, 7);
    assert_int_equal(o.limit, FDT_OCC_SGPRS);
    assert_int_equal(occ("gfx90a", 256, 32, 0, 100, 0).waves_simd, 8);
    /* LDS: 64 KiB per CU and per workgroup, allocated in 512-byte blocks */
    o = occ("gfx90a", 256, 32, 0, 0, 40 * 1024);
    assert_int_equal(o.groups, 1);
    assert_int_equal(o.limit, FDT_OCC_LDS);
    assert_int_equal(occ("gfx90a", 256, 32, 0, 0, 16 * 1024 + 1).groups, 3);
    o = occ("gfx90a", 256, 32, 0, 0, 64 * 1024 + 4);
    assert_int_equal(o.groups, 0);
    assert_int_equal(o.limit, FDT_OCC_LDS);
    /* at most 16 workgroups of several waves (gfx908's 40 slots would hold 20 of 2 waves),
     * but as many single-wave ones as there are slots */
    o = occ("gfx908", 128, 16, 0, 0, 0);
    assert_int_equal(o.groups, 16);
    assert_int_equal(o.limit, FDT_OCC_GROUPS);
    assert_int_equal(occ("gfx908", 64, 16, 0, 0, 0).groups, 40);
    assert_int_equal(occ("gfx90a", 64, 16, 0, 0, 0).groups, 32);
    /* 3-wave workgroups fill 30 of the 32 slots */
    o = occ("gfx90a", 192, 16, 0, 0, 0);
    assert_int_equal(o.groups, 10);
    assert_int_equal(o.limit, FDT_OCC_GROUP_SIZE);
    /* RDNA in wave32: 16 waves per SIMD32, 2 per CU */
    assert_int_equal(occ("gfx1030", 64, 32, 0, 0, 0).waves, 32);
    /* names and the one-line report gen prints */
    char line[160];
    fdt_arch_occupancy_format(fdt_arch_find("gfx90a"), &o, line, sizeof line);
    assert_string_equal(line, "8 waves per SIMD (limited by workgroup size)");
    o = occ("gfx90a", 1024, 200, 0, 0, 0);
    fdt_arch_occupancy_format(fdt_arch_find("gfx90a"), &o, line, sizeof line);
    assert_string_equal(line, "none: one workgroup does not fit (VGPRs)");
}

/* NVIDIA keeps the rule fdtune applied before the table: blocks per SM by threads, by
 * registers (rounded to 8 per thread, whole warps), by shared memory (the opt-in limit plus 1
 * KiB per SM) and 32. */
static void test_occupancy_nvidia_unchanged(void **state)
{
    (void)state;
    const int threads[] = {64, 128, 256, 384, 512, 1024};
    const int regs[] = {0, 24, 32, 40, 64, 65, 96, 128, 168, 255};
    const long shared[] = {0, 1000, 16384, 49152, 100000, 232448};
    for (size_t a = 0; a < 6; a++)
        for (size_t b = 0; b < 10; b++)
            for (size_t c = 0; c < 6; c++) {
                int t = threads[a], r = regs[b];
                long s = shared[c];
                int blocks = 2048 / t;
                if (r > 0) {
                    int per = (r + 7) / 8 * 8 * ((t + 31) / 32 * 32);
                    if (65536 / per < blocks)
                        blocks = 65536 / per;
                }
                if (s > 0 && (232448 + 1024) / s < blocks)
                    blocks = (int)((232448 + 1024) / s);
                if (blocks > 32)
                    blocks = 32;
                fdt_occupancy o = occ("sm_90", t, r, -1, -1, s);
                if (o.groups != blocks)
                    fail_msg("sm_90 %d threads %d regs %ld shared: %d blocks, the old rule %d",
                             t, r, s, o.groups, blocks);
                assert_true(fabs(o.fraction - (double)blocks * t / 2048) < 1e-12);
            }
    char line[160];
    fdt_occupancy o = occ("sm_90", 256, 161, -1, -1, 0);
    fdt_arch_occupancy_format(fdt_arch_find("sm_90"), &o, line, sizeof line);
    assert_string_equal(line, "8 warps per SM (limited by registers)");
}

static void test_reg_cap_and_shared(void **state)
{
    (void)state;
    const fdt_arch *m = fdt_arch_find("gfx90a"), *c = fdt_arch_find("gfx908"),
                   *h = fdt_arch_find("sm_90");
    assert_int_equal(fdt_arch_reg_cap(m, 1024), 128);
    assert_int_equal(fdt_arch_reg_cap(m, 0), 128); /* HIP's default launch bound is 1024 */
    assert_int_equal(fdt_arch_reg_cap(m, 512), 256);
    assert_int_equal(fdt_arch_reg_cap(m, 256), 256); /* at most the architected VGPRs */
    assert_int_equal(fdt_arch_reg_cap(c, 1024), 64);
    assert_int_equal(fdt_arch_reg_cap(c, 256), 256);
    assert_int_equal(fdt_arch_reg_cap(h, 1024), 64);
    assert_int_equal(fdt_arch_reg_cap(h, 0), 255);
    /* shared memory per workgroup: AMD has no opt-in; NVIDIA 48 KiB static, 227 KiB dynamic */
    assert_int_equal(fdt_arch_shared_limit(m, NULL, 1), 65536);
    assert_int_equal(fdt_arch_shared_limit(m, NULL, 0), 65536);
    assert_int_equal(fdt_arch_shared_limit(h, NULL, 0), 49152);
    assert_int_equal(fdt_arch_shared_limit(h, NULL, 1), 232448);
    char why[256];
    assert_int_equal(fdt_arch_shared_exceeds(m, NULL, 65536, 1, why, sizeof why), 0);
    assert_int_equal(fdt_arch_shared_exceeds(m, NULL, 73920, 1, why, sizeof why), 1);
    assert_string_equal(why, "needs 73920 bytes of LDS, gfx90a allows 65536 per workgroup");
    assert_int_equal(fdt_arch_shared_exceeds(h, NULL, 73920, 1, why, sizeof why), 0);
    assert_int_equal(fdt_arch_shared_exceeds(h, NULL, 73920, 0, why, sizeof why), 1);
    assert_contains(why, "without the opt-in");
    /* a device's own limits win over the architecture's */
    fdt_device d = gpu("H100");
    d.shared_per_block_optin = 100000;
    assert_int_equal(fdt_arch_shared_limit(h, &d, 1), 100000);
}

/* ------------------------------------------------------------------ 3. pruning */

/* An AMD device as HIP describes it (no catalogue involved): its L2 as one kernel sees it. */
static fdt_device live_amd(const char *name, const char *arch, int cus, int64_t l2)
{
    fdt_device d;
    fdt_device_init(&d);
    snprintf(d.vendor, sizeof d.vendor, "AMD");
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.arch, sizeof d.arch, "%s", arch);
    d.compute_units = cus;
    d.warp_size = 64;
    d.max_threads_per_block = 1024;
    d.shared_per_block = d.shared_per_block_optin = 65536;
    d.regs_per_block = 65536; /* what HIP reports, and what the NVIDIA rule divided */
    d.l2_bytes = l2;
    d.live = 1;
    return d;
}

static fdt_device live_mi250x(void) { return live_amd("AMD Instinct MI250X", "gfx90a", 110, 8 << 20); }

/* fdt_target_prune on the target of device d. */
static const char *prune_on(const fdt_device *d, const fdt_rt_resources *r, const fdt_config *c,
                            const fdt_geometry *g, char *why, size_t n)
{
    fdt_target t;
    fdt_err e;
    assert_int_equal(fdt_target_resolve(d, &t, &e), 0);
    return fdt_target_prune(&t, r, c, g, why, n);
}

static const char *prune(const fdt_device *d, const char *config, int regs, int agprs,
                         int sgprs, int spill, int scratch, char *why, size_t n)
{
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 256, 256, 256};
    fdt_config c = cfg(&p, config);
    fdt_geometry g;
    fdt_err e;
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    fdt_rt_resources r = {.registers = regs, .sgprs = sgprs, .agprs = agprs, .spill_bytes = spill,
                          .scratch_bytes = scratch, .shared_bytes = 0,
                          .max_threads = c.lb > 0 ? c.lb : 1024, .sgpr_spills = 0};
    return prune_on(d, &r, &c, &g, why, n);
}

static void test_prune(void **state)
{
    (void)state;
    fdt_device m = live_mi250x(), h = gpu("H100");
    char why[256];
    /* the NVIDIA rule (regs x threads <= 65536) pruned a 1024-thread block above 64 VGPRs */
    const char *big = "bx=256,by=4,lb=1024,nw=16,align=64";
    assert_null(prune(&m, big, 100, 0, 40, 0, 0, why, sizeof why));
    assert_null(prune(&m, big, 128, 0, 40, 0, 0, why, sizeof why));
    assert_non_null(prune(&m, big, 129, 0, 40, 0, 0, why, sizeof why));
    assert_contains(why, "does not fit on a CU of gfx90a (VGPRs)");
    assert_null(prune(&m, big, 128, 64, 40, 0, 0, why, sizeof why)); /* 64 + 64 AGPRs */
    assert_non_null(prune(&m, big, 136, 64, 40, 0, 0, why, sizeof why)); /* 72 + 64 */
    assert_contains(why, "VGPRs");
    /* ... and stays the rule on NVIDIA */
    assert_null(prune(&h, big, 64, -1, -1, 0, 0, why, sizeof why));
    assert_non_null(prune(&h, big, 65, -1, -1, 0, 0, why, sizeof why));
    assert_contains(why, "does not fit on an SM of sm_90 (registers)");
    /* scratch without spills is memory traffic the model does not know: pruned on AMD */
    assert_non_null(prune(&m, "bx=64,by=4,nw=16", 40, 0, 30, 0, 304, why, sizeof why));
    assert_string_equal(why, "uses 304 bytes of scratch (private memory) per work-item");
    assert_null(prune(&h, "bx=64,by=4,nw=16", 40, -1, -1, 0, 304, why, sizeof why));
    /* spills stay pruned everywhere */
    assert_non_null(prune(&m, "bx=64,by=4,nw=16", 40, 0, 30, 16, 16, why, sizeof why));
    assert_contains(why, "spills 16 bytes");
    /* the ring's dynamic LDS over 64 KiB */
    assert_non_null(prune(&m, "bx=64,by=4,lds=2,nw=32,pf=4,tile=4,vec=2,align=64,lb=256", 100,
                          0, 40, 0, 0, why, sizeof why));
    assert_contains(why, "bytes of LDS, AMD Instinct MI250X allows 65536 per workgroup");
    assert_null(prune(&h, "bx=64,by=4,lds=2,nw=32,pf=4,tile=4,vec=2,align=64,lb=256", 100, -1,
                      -1, 0, 0, why, sizeof why));
    /* machine code past the instruction cache measured on sm_90 (136 KB: the H100's stream
     * kernels of 139.6 KB and more ran 1.7-3.7x slower, those of 133.2 KB and less at speed);
     * nothing is known of the other architectures' caches, which prune none */
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 256, 256, 256};
    fdt_config c = cfg(&p, "bx=64,by=4,nw=16");
    fdt_geometry g;
    fdt_err e;
    assert_int_equal(fdt_gen_geometry(&p, &c, &g, &e), 0);
    fdt_rt_resources r = {.registers = 40, .sgprs = -1, .agprs = -1, .spill_bytes = 0,
                          .scratch_bytes = 0, .shared_bytes = 0, .max_threads = -1,
                          .sgpr_spills = -1, .code_bytes = 146048};
    assert_non_null(prune_on(&h, &r, &c, &g, why, sizeof why));
    assert_string_equal(why, "146.0 KB of machine code outgrow the instruction cache (sm_90: "
                             "136.0 KB, measured)");
    r.code_bytes = 139648; /* lap R=7 f32 4x2, 0.468 of copy where 2x4 (127.5 KB) ran 0.804 */
    assert_non_null(prune_on(&h, &r, &c, &g, why, sizeof why));
    r.code_bytes = 133248;
    assert_null(prune_on(&h, &r, &c, &g, why, sizeof why));
    r.code_bytes = -1; /* not an ELF object */
    assert_null(prune_on(&h, &r, &c, &g, why, sizeof why));
    fdt_device a100 = gpu("A100");
    r.code_bytes = 1 << 20;
    assert_null(prune_on(&a100, &r, &c, &g, why, sizeof why));
    assert_null(prune_on(&m, &r, &c, &g, why, sizeof why));
}

/* fdtune gen: the occupancy line and the LDS warning, from the built binary. */
static void test_gen_occupancy_and_warning(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(tu_mkdtemp(dir, sizeof dir, "fdt_test_arch"), 0);
    tu_result r;
    char *ver[] = {(char *)FDTUNE_BIN, "--version", NULL};
    tu_run(&r, dir, ver);
    int hip = strstr(r.out, "backend hip: hiprtc") != NULL;
    int cuda = strstr(r.out, "backend cuda: nvrtc") != NULL;
    int hip_built = strstr(r.out, "backend hip") != NULL;
    tu_result_free(&r);
    /* the ring's 117504 bytes of LDS: over gfx90a's 64 KiB, a warning on stderr, exit 0 */
    char *ring[] = {(char *)FDTUNE_BIN, "gen", "--op", "lap", "--R", "4", "--config",
                    "bx=64,by=4,lds=2,nw=32,pf=4,tile=4,vec=2,align=64,lb=256", NULL};
    tu_run(&r, dir, ring);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "extern \"C\"");
    if (hip_built)
        assert_contains(r.err, "warning: gfx90a: needs 117504 bytes of LDS, gfx90a allows "
                               "65536 per workgroup");
    assert_null(strstr(r.err, "sm_90")); /* within the opt-in limit there */
    tu_result_free(&r);
    /* the occupancy line of each compiler this build has */
    const struct {
        int have;
        char *target;
        const char *line;
    } occ_lines[] = {
        {hip, "gfx90a", "//   occupancy: 8 waves per SIMD (limited by wave slots)"},
        {cuda, "sm_90", "//   occupancy: 64 warps per SM (limited by warp slots)"},
    };
    for (int i = 0; i < 2; i++) {
        if (!occ_lines[i].have) {
            fprintf(stderr, "note: no compiler for %s here: its occupancy line not checked\n",
                    occ_lines[i].target);
            continue;
        }
        char *c[] = {(char *)FDTUNE_BIN, "gen",     "--op",     "d2z",
                     "--R",              "4",       "--config", "nw=16,lb=256",
                     "--compile",        "--target", occ_lines[i].target, NULL};
        tu_run(&r, dir, c);
        assert_int_equal(r.status, 0);
        assert_contains(r.out, occ_lines[i].line);
        tu_result_free(&r);
    }
    tu_rmtree(dir);
    /* the library check itself, without a binary */
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    fdt_config ringc = cfg(&p, "bx=64,by=4,lds=2,nw=32,pf=4,tile=4,vec=2,align=64,lb=256");
    char why[256];
    fdt_target amd, nv;
    fdt_err e;
    assert_int_equal(fdt_target_for_arch("gfx90a", &amd, &e), 0);
    assert_int_equal(fdt_target_for_arch("sm_90", &nv, &e), 0);
    assert_int_equal(fdt_target_shared_check(&amd, &p, &ringc, why, sizeof why), 1);
    assert_int_equal(fdt_target_shared_check(&nv, &p, &ringc, why, sizeof why), 0);
    fdt_config small = cfg(&p, "bx=64,by=4,lds=1,nw=32");
    assert_int_equal(fdt_target_shared_check(&amd, &p, &small, why, sizeof why), 0);
}

/* ------------------------------------------------------------------ 4. MI300X: bandwidth, flush */

static void test_peak_bandwidth(void **state)
{
    (void)state;
    assert_int_equal(fdt_catalogue_bw_plausible(2662, 5300), 0);
    assert_int_equal(fdt_catalogue_bw_plausible(3352, 3350), 1);
    assert_int_equal(fdt_catalogue_bw_plausible(4000, 5300), 1); /* 24.5% off */
    assert_int_equal(fdt_catalogue_bw_plausible(3900, 5300), 0); /* 26.4% off */
    assert_int_equal(fdt_catalogue_bw_plausible(0, 5300), 0);
    assert_int_equal(fdt_catalogue_bw_plausible(777, 0), 1);
    fdt_catalogue *cat = catalogue();
    /* a live MI300X as HIP describes it: 1.3 GHz x 8192 bits gives 2662 GB/s */
    fdt_device d = live_amd("AMD Instinct MI300X", "gfx942", 304, 4 << 20);
    d.mem_clock_khz = 1300000;
    d.mem_bus_bits = 8192;
    d.peak_bw_gbs = 2.0 * d.mem_clock_khz * 1e3 * (d.mem_bus_bits / 8) / 1e9;
    assert_true(fabs(d.peak_bw_gbs - 2662.4) < 0.1);
    fdt_catalogue_complete(cat, &d);
    assert_string_equal(d.catalogue, "MI300X");
    assert_true(d.peak_bw_gbs == 5300);
    assert_true(d.infinity_cache_bytes == 256LL << 20);
    assert_true(d.llc_bytes == 256LL << 20);
    /* a plausible live figure stays the driver's */
    fdt_device h;
    fdt_device_init(&h);
    snprintf(h.name, sizeof h.name, "NVIDIA H100 80GB HBM3");
    snprintf(h.arch, sizeof h.arch, "sm_90");
    h.compute_units = 132;
    h.peak_bw_gbs = 3352.3;
    fdt_catalogue_complete(cat, &h);
    assert_string_equal(h.catalogue, "H100 SXM");
    assert_true(h.peak_bw_gbs == 3352.3);
    /* the MI250X carries the seeds' achievable figure; the H100 none */
    fdt_device m = live_mi250x();
    fdt_catalogue_complete(cat, &m);
    assert_true(m.achievable_bw_gbs == 1300);
    assert_true(h.achievable_bw_gbs == 0);
    fdt_catalogue_free(cat);
    /* the catalogue refuses an achievable figure above the peak */
    const char *bad = "gpu { name = \"X1\", vendor = \"AMD\", arch = \"gfx90a\", "
                      "compute_units = 1, warp_size = 64, shared_per_block = 65536, "
                      "l2_bytes = 1, mem_bytes = 1, peak_bw_gbs = 100, "
                      "achievable_bw_gbs = 120, source = \"test\" }\n";
    fdt_catalogue *c2 = NULL;
    fdt_err e;
    assert_int_equal(fdt_catalogue_load_text("bad.lua", bad, strlen(bad), &c2, &e), -1);
    assert_contains(e.msg, "achievable_bw_gbs");
}

static void test_flush_covers_infinity_cache(void **state)
{
    (void)state;
    fdt_problem small = {FDT_OP_LAP, 4, FDT_F32, 256, 256, 256}; /* 134 MB */
    fdt_problem big = {FDT_OP_LAP, 4, FDT_F32, 1024, 1024, 1024};
    /* an MI300X completed from the catalogue, as the worker now describes it */
    fdt_device d = live_amd("AMD Instinct MI300X", "gfx942", 304, 4 << 20);
    fdt_device live = d;
    fdt_device_derive(&live);
    fdt_catalogue *cat = catalogue();
    fdt_catalogue_complete(cat, &d);
    fdt_catalogue_free(cat);
    /* 256 MiB of Infinity Cache: flush 512 MiB, where the rule on the L2 alone (4 MiB per
     * XCD as HIP reports it) flushed nothing and timed a 134 MB problem from the cache */
    assert_true(fdt_eval_flush_bytes(&d, &small) == 512ULL << 20);
    assert_true(fdt_eval_flush_bytes(&live, &small) == 0);
    assert_true(fdt_eval_flush_bytes(&d, &big) == 0);
    /* the Infinity Cache counts even where llc_bytes was not derived */
    fdt_device raw = live;
    raw.infinity_cache_bytes = 256LL << 20;
    raw.llc_bytes = 0;
    assert_true(fdt_eval_flush_bytes(&raw, &small) == 512ULL << 20);
    /* an MI250X and an H100: twice their L2, for problems under four times it */
    fdt_device m = gpu("MI250X"), h = gpu("H100");
    fdt_problem p128 = {FDT_OP_LAP, 4, FDT_F32, 128, 128, 128}; /* 17 MB */
    assert_true(fdt_eval_flush_bytes(&m, &p128) == 16ULL << 20);
    assert_true(fdt_eval_flush_bytes(&m, &small) == 0);
    assert_true(fdt_eval_flush_bytes(&h, &small) == 100ULL << 20);
    fdt_problem tiny = {FDT_OP_D2X, 1, FDT_F32, 64, 64, 64};
    fdt_device none;
    fdt_device_init(&none);
    assert_true(fdt_eval_flush_bytes(&none, &tiny) == 0);
}

/* ------------------------------------------------------------------ 5. the model against the seeds */

/* The seeds' published MI250X numbers, each kernel as fdtune expresses it, come from
 * tests/data/mi250x-seeds.txt (which says how each maps; bench/amd_seeds.sh measures the same
 * rows on an AMD GPU).
 *
 * Tolerance: every row within 20% and the rows together within 10% rms. Why 20: the seeds'
 * two series, measured two years and three ROCm versions apart (5.3, 6.1), put the plateau a
 * tuned kernel reaches at 1127 and 1204 GB/s (fits of 1/GB/s = 1/B + c/bytes per thread to
 * each), 7% apart, and one set of constants must serve both; the model is there to rank
 * configs, its residue is what the neighbourhood search measures away; and its worst rows
 * are the ones whose cause the posts report without numbers (the L2 reuse of a Laplacian
 * with one row per thread at 512^3, fetch efficiency 80%). The model as it stood before
 * (NVIDIA's rules and H100 constants on AMD) missed by up to 136%, rms 49% over these rows.
 *
 * Not held (no fdtune equivalent, or outside what the model predicts), kept in the table
 * with their reason: Laplacian kernel 1 (its loads jump back and forth; fdtune's tiles load
 * in ascending order, which is kernel 3: same config, 808 vs 965 GB/s), and kernel 3 with
 * m = 16 (342 GB/s: the posts report 3.9 GB fetched, the spilling that fdtune prunes; the
 * model ranks spills last rather than predicting them). */
typedef struct seed_row {
    char src[64];
    char gpu[32];       /* the catalogue's name */
    fdt_problem p;
    char config[160];
    double gbs;         /* published or measured effective bandwidth */
    char not_held[128]; /* why the row is outside the tolerance, or "" */
} seed_row;

/* The rows of tests/data/NAME; returns how many (at most max). Two forms: the seeds' (8
 * fields: source, op, R, precision, N, config, GB/s, not held; the GPU an MI250X) and the
 * NVIDIA measurements' (10 fields: source, GPU, op, R, precision, N, config, fraction of copy,
 * copy GB/s, not held). */
static int seed_rows(const char *name, seed_row *rows, int max)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/tests/data/%s", srcdir(), name);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("%s: cannot open", path);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        char *field[10] = {0}, *save = NULL;
        int k = 0;
        for (char *t = strtok_r(line, "|", &save); t && k < 10; t = strtok_r(NULL, "|", &save))
            field[k++] = t;
        if (k != 8 && k != 10)
            fail_msg("%s: a row of %d fields, want 8 or 10", path, k);
        char **x = k == 10 ? field + 1 : field; /* op onwards at x[1] */
        seed_row *r = &rows[n++];
        fdt_err e;
        snprintf(r->src, sizeof r->src, "%s", field[0]);
        snprintf(r->gpu, sizeof r->gpu, "%s", k == 10 ? field[1] : "MI250X");
        if (fdt_op_parse(x[1], &r->p.op, &e) || fdt_prec_parse(x[3], &r->p.prec, &e))
            fail_msg("%s: %s", path, e.msg);
        r->p.R = atoi(x[2]);
        r->p.nx = r->p.ny = r->p.nz = atoll(x[4]);
        snprintf(r->config, sizeof r->config, "%s", x[5]);
        r->gbs = k == 10 ? atof(x[6]) * atof(x[7]) : atof(x[6]);
        const char *why = field[k - 1];
        snprintf(r->not_held, sizeof r->not_held, "%s", strcmp(why, "-") ? why : "");
    }
    fclose(f);
    return n;
}

/* The model's error on row s (predicted over measured bandwidth, less one), printed with the
 * limit the model says binds. */
static double seed_error(const seed_row *s)
{
    fdt_device d = gpu(s->gpu);
    fdt_config c = cfg(&s->p, s->config);
    fdt_model_terms t;
    double ms = fdt_model_time(&s->p, &c, &d, NULL, &t);
    double gbs = fdt_effective_bytes(&s->p) / (ms * 1e-3) / 1e9;
    double err = gbs / s->gbs - 1;
    printf("  %-26s %-6s %-4s R=%d %s %4lld^3 %-66s %6.0f model %6.0f %+6.1f%% %-7s%s%s\n",
           s->src, s->gpu, fdt_op_name(s->p.op), s->p.R, fdt_prec_name(s->p.prec),
           (long long)s->p.nx, s->config, s->gbs, gbs, 100 * err, fdt_bound_name(t.bound),
           s->not_held[0] ? "  not held: " : "", s->not_held);
    return err;
}

/* Holds the model to the rows of tests/data/NAME: nrows rows, held of them held (not marked
 * otherwise), each within tol of its measured bandwidth and their rms within rms_max. */
static void hold_rows(const char *name, int nrows, int held, double tol, double rms_max)
{
    static seed_row rows[128];
    assert_int_equal(seed_rows(name, rows, 128), nrows);
    double sum2 = 0;
    int n = 0;
    for (int i = 0; i < nrows; i++) {
        const seed_row *s = &rows[i];
        double err = seed_error(s);
        if (s->not_held[0])
            continue;
        n++;
        sum2 += err * err;
        if (fabs(err) > tol)
            fail_msg("%s %s (%s): model %+.1f%% off the measured %.0f GB/s, beyond %.0f%%",
                     s->src, s->gpu, s->config, 100 * err, s->gbs, 100 * tol);
    }
    double rms = sqrt(sum2 / n);
    printf("  %d rows held, rms %.1f%%\n", n, 100 * rms);
    assert_int_equal(n, held);
    assert_true(rms <= rms_max);
}

/* The MI250X: the seeds' published numbers (rms 7.4% before the on-chip terms, 8.0% with
 * them: d2x R=4 comes out issue-bound). */
#define SEED_TOLERANCE 0.20
#define SEED_RMS 0.10

static void test_model_against_seeds(void **state)
{
    (void)state;
    hold_rows("mi250x-seeds.txt", 26, 24, SEED_TOLERANCE, SEED_RMS);
}

/* The NVIDIA rows' tolerances: the fit leaves an rms of 10.4% over the 74 rows held, the
 * largest errors the tuned d2z nw=8 at 512^3 (-33%: its short columns overlap the z halo's
 * steps with 16 resident blocks, which the model charges in full; bench/notes/stream_notes item
 * 15), the untuned seed d2z 64x8 at 1024^3 (+31%, the LLC's share of the z re-reads) and the
 * ring's wave R=8 (+23%). */
#define NVIDIA_TOLERANCE 0.35
#define NVIDIA_RMS 0.12

/* The model against fdtune's own measurements on an H100 and an H200
 * (tests/data/nvidia-measured.txt). */
static void test_model_against_nvidia(void **state)
{
    (void)state;
    hold_rows("nvidia-measured.txt", 75, 74, NVIDIA_TOLERANCE, NVIDIA_RMS);
}

/* Counted by hand from the templates, per output point (NAN: not checked).
 *  - direct (templates/direct.hip), lap R=4 f32, one value per thread: loads of 4 z planes
 *    below, 2R+1 rows of the y column (the centre among them), HX = 4 single x values a side,
 *    4 z planes above: 25, and one store: 26 accesses of 4 bytes; no shared memory. FP: d2
 *    per axis one multiply and 4 pairs of an add and an FMA (9), three axes, then sx dx (a
 *    multiply) + sy dy + sz dz (two FMAs): 30. d2x alone: 9 + the one scale.
 *  - the ring (templates/ring.hip), lap R=4 f32, bx=32 by=8 (256 threads), tile 2, vec 2,
 *    nw=64: per thread and plane it copies its 2 vectors of the plane, its share of the y
 *    halo (2R rows x 32 vectors / 256 threads = 1) and of the x halo (2 sides x HX/VEC = 2
 *    vectors x 16 rows / 256 = 0.25); the first 2R planes of a window of 64 are copied
 *    without an output, so the plane's own vectors count (64 + 8) / 64 = 1.125 times: 3.5
 *    copies. It reads back its centre (2 x 1.125), the 2R = 8 y-neighbour rows (2 rows of
 *    output share their 2 + 8 rows) and the x halo (2 x 2 vectors a row, 2 rows: 8): 18.25
 *    reads. 21.75 accesses of 8 bytes over 4 outputs: 43.5 bytes a point, 5.4375
 *    instructions. Through L1 (the copies and the 2 stores): 5.5 x 8 / 4 = 11 bytes. On an
 *    MI250X the copies are global loads and LDS stores: the same LDS bytes.
 *  - the stream (templates/stream.hip), lap R=8 f32 2x2, bx=32 by=16 (512 threads), nw=256:
 *    copies 2 x (256 + 16) / 256 + 2R x 32 / 512 (y halo, 1) + 2 x 4 x 32 / 512 (x halo,
 *    0.5) = 3.625; reads 2.125 centres, 16 y rows, 2 x 4 vectors x 2 rows of x halo (16):
 *    37.75 vectors of 8 bytes over 4 outputs = 75.5 bytes (the 6R + 1 = 49 neighbours one
 *    value at a time from shared memory would be 196). FP: per landing plane the z sums take
 *    2 RZ + 1 = 17 (x 1.0625), the x and y pairs 2 RX + 2 RY = 32, the centre and the x and y
 *    scales 3: 53.0625 (6R + 4 = 52 without the window's first planes). */
static void test_onchip_counts(void **state)
{
    (void)state;
    static const struct {
        const char *gpu;
        fdt_op op;
        int R;
        const char *config;
        double shared_bytes, shared_inst, l1_bytes, fp;
    } want[] = {
        {"H100", FDT_OP_LAP, 4, "bx=64,by=4", 0, 0, 104, 30},
        {"H100", FDT_OP_D2X, 4, "bx=128,by=8,vec=4,align=32", 0, 0, NAN, 10},
        {"H100", FDT_OP_LAP, 4, "align=32,bx=32,by=8,lb=256,lds=2,nw=64,pf=6,tile=2,vec=2",
         43.5, 5.4375, 11, 30},
        {"MI250X", FDT_OP_LAP, 4, "align=32,bx=32,by=8,lb=256,lds=2,nw=64,pf=6,tile=2,vec=2",
         43.5, 5.4375, NAN, 30},
        {"H100", FDT_OP_LAP, 8,
         "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=256,pf=3,tile=2,vec=2", 75.5, NAN,
         11.25, 53.0625},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fdt_problem p = {.op = want[i].op, .R = want[i].R, .prec = FDT_F32,
                         .nx = 512, .ny = 512, .nz = 512};
        fdt_config c = cfg(&p, want[i].config);
        fdt_device d = gpu(want[i].gpu);
        fdt_onchip o;
        fdt_model_onchip(&p, &c, &d, &o);
        const double got[4] = {o.shared_bytes, o.shared_inst, o.l1_bytes, o.fp};
        const double exp[4] = {want[i].shared_bytes, want[i].shared_inst, want[i].l1_bytes,
                               want[i].fp};
        static const char *what[4] = {"shared bytes", "shared instructions", "L1 bytes", "FP"};
        for (int k = 0; k < 4; k++)
            if (!isnan(exp[k]) && fabs(got[k] - exp[k]) > 1e-9)
                fail_msg("%s %s R=%d %s: %s %g a point, counted %g", want[i].gpu,
                         fdt_op_name(p.op), p.R, want[i].config, what[k], got[k], exp[k]);
    }
}

/* The side that binds a prediction: 1 on chip, 0 DRAM or L2. */
static int on_chip(const fdt_model_terms *t)
{
    double mem = fmax(t->t_dram_ms / t->latency_eff, t->t_l2_ms);
    double chip = fmax(fmax(t->t_l1_ms, t->t_shared_ms), fmax(t->t_issue_ms, t->t_fp_ms));
    return chip / t->chip_eff > mem;
}

/* Which limit the model says binds, for the configs measured on an H100: the high-radius
 * Laplacians on chip (the issue's 1.5 TB/s on both an H100 and an H200), the tuned d2x, d2z
 * and R=4 Laplacian by DRAM. */
static void test_model_bounds(void **state)
{
    (void)state;
    static const struct {
        fdt_op op;
        int R;
        fdt_prec prec;
        const char *config;
        int chip;        /* 1: on chip */
        fdt_bound bound; /* or FDT_BOUND_COUNT: any on the expected side */
    } want[] = {
        {FDT_OP_LAP, 8, FDT_F32,
         "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=256,pf=3,tile=2,vec=2", 1,
         FDT_BOUND_ISSUE},
        {FDT_OP_LAP, 8, FDT_F32,
         "align=32,bx=32,by=8,l2pf=256,lb=256,lds=2,nw=64,pf=6,tile=2,vec=2", 1,
         FDT_BOUND_COUNT},
        {FDT_OP_LAP, 8, FDT_F64, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=3,tile=2,vec=2",
         1, FDT_BOUND_COUNT},
        {FDT_OP_D2X, 4, FDT_F32, "align=32,bx=128,by=8,lb=1024,nt=1,vec=4", 0, FDT_BOUND_DRAM},
        {FDT_OP_D2Z, 4, FDT_F32, "align=32,bx=128,by=1,lb=128,nt=1,nw=8,order=yzx,vec=4", 0,
         FDT_BOUND_DRAM},
        {FDT_OP_LAP, 4, FDT_F32,
         "align=32,by=8,l2pf=256,lb=512,lds=2,nw=128,pf=5,tile=2,vec=2", 0, FDT_BOUND_DRAM},
    };
    fdt_device d = gpu("H100");
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        fdt_problem p = {.op = want[i].op, .R = want[i].R, .prec = want[i].prec,
                         .nx = 512, .ny = 512, .nz = 512};
        fdt_config c = cfg(&p, want[i].config);
        fdt_model_terms t;
        fdt_model_time(&p, &c, &d, NULL, &t);
        fdt_sb sb;
        fdt_sb_init(&sb);
        fdt_model_describe(&t, &sb);
        printf("  %s R=%d %s %s: %s\n", fdt_op_name(p.op), p.R, fdt_prec_name(p.prec),
               want[i].config, fdt_sb_str(&sb));
        fdt_sb_free(&sb);
        if (on_chip(&t) != want[i].chip)
            fail_msg("%s R=%d: bound on %s, want on %s", fdt_op_name(p.op), p.R,
                     on_chip(&t) ? "chip" : "DRAM/L2", want[i].chip ? "chip" : "DRAM/L2");
        if (want[i].chip && t.bound == FDT_BOUND_DRAM)
            fail_msg("%s R=%d: bound dram on chip", fdt_op_name(p.op), p.R);
        if (want[i].bound != FDT_BOUND_COUNT && t.bound != want[i].bound)
            fail_msg("%s R=%d: bound %s, want %s", fdt_op_name(p.op), p.R,
                     fdt_bound_name(t.bound), fdt_bound_name(want[i].bound));
    }
}

/* ------------------------------------------------------------------ 6. the MI250X dry run */

typedef struct ranked {
    fdt_config *v;
    double *ms;
    size_t n, cap;
} ranked;

static int push(void *ctx, const fdt_config *c, uint64_t index)
{
    (void)index;
    ranked *r = ctx;
    fdt_config *v = fdt_grow(r->v, &r->cap, r->n, sizeof *v, 1024);
    if (!v)
        return 1;
    r->v = v;
    r->v[r->n++] = *c;
    return 0;
}

/* The survivors of a shipped recipe for (op, R=4, f32, n^3) on d, each with its prediction. */
static void dry_run(const char *recipe, fdt_op op, int64_t n, const fdt_device *d, ranked *out,
                    fdt_problem *p)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/recipes/%s", srcdir(), recipe);
    fdt_recipe *r;
    fdt_err e;
    if (fdt_recipe_load(path, NULL, &r, &e))
        fail_msg("%s", e.msg);
    fdt_problem q = {op, 4, FDT_F32, n, n, n};
    *p = q;
    memset(out, 0, sizeof *out);
    if (fdt_recipe_enumerate(r, p, d, push, out, NULL, &e))
        fail_msg("%s: %s", recipe, e.msg);
    fdt_recipe_free(r);
    assert_true(out->n > 100);
    out->ms = malloc(out->n * sizeof *out->ms);
    assert_non_null(out->ms);
    for (size_t i = 0; i < out->n; i++)
        out->ms[i] = fdt_model_time(p, &out->v[i], d, NULL, NULL);
}

/* 1-based rank of config i by predicted time (ties count in its favour). */
static size_t rank_of(const ranked *r, size_t i)
{
    size_t k = 1;
    for (size_t j = 0; j < r->n; j++)
        k += r->ms[j] < r->ms[i];
    return k;
}

/* The best-ranked survivor of the seismic series' recipe (64x4 blocks, launch bounds 256,
 * rows aligned to 64, a register sliding window in z, no LDS) ranks among the first 32 of
 * lap on an MI250X, the configs the model strategy measures before it turns to
 * neighbourhoods (test_search's test_neighbourhood_order: 4 to 32); before the AMD rules it
 * ranked 134th (512^3) and 49th (1024^3), behind single-wave rings that hold one workgroup
 * per CU. No prediction of any shipped space exceeds the catalogue's achievable bandwidth
 * (the seeds' BabelStream 1.3 TB/s; before: up to 1475 GB/s), and the top 16 of lap and
 * wave keep at least two waves per SIMD resident. */
#define SEEDS_TOP_N 32
static void test_mi250x_dry_run(void **state)
{
    (void)state;
    fdt_device d = gpu("MI250X");
    assert_true(d.achievable_bw_gbs > 0);
    const struct {
        const char *recipe;
        fdt_op op;
    } spaces[] = {{"d2x.lua", FDT_OP_D2X}, {"d2y.lua", FDT_OP_D2Y}, {"d2z.lua", FDT_OP_D2Z},
                  {"lap.lua", FDT_OP_LAP}, {"lap.lua", FDT_OP_WAVE}};
    const int64_t grids[] = {512, 1024};
    for (int g = 0; g < 2; g++)
        for (size_t s = 0; s < sizeof spaces / sizeof spaces[0]; s++) {
            ranked r;
            fdt_problem p;
            dry_run(spaces[s].recipe, spaces[s].op, grids[g], &d, &r, &p);
            double eff = fdt_effective_bytes(&p);
            size_t best = 0, seed = r.n;
            for (size_t i = 0; i < r.n; i++) {
                double gbs = eff / (r.ms[i] * 1e-3) / 1e9;
                if (gbs > d.achievable_bw_gbs)
                    fail_msg("%s %lld^3: a config predicted at %.0f GB/s, above the achievable "
                             "%.0f", fdt_op_name(p.op), (long long)grids[g], gbs,
                             d.achievable_bw_gbs);
                if (r.ms[i] < r.ms[best])
                    best = i;
                const fdt_config *c = &r.v[i];
                if (c->bx == 64 && c->by == 4 && c->lb == 256 && c->align == 64 && !c->lds &&
                    c->nw > 0 && (seed == r.n || r.ms[i] < r.ms[seed]))
                    seed = i;
            }
            if (p.op == FDT_OP_LAP) {
                assert_true(seed < r.n);
                size_t k = rank_of(&r, seed);
                char key[256];
                fdt_config_format(&r.v[seed], key, sizeof key);
                printf("  lap %lld^3: %s ranks %zu of %zu, %.0f GB/s (best %.0f)\n",
                       (long long)grids[g], key, k, r.n, eff / (r.ms[seed] * 1e-3) / 1e9,
                       eff / (r.ms[best] * 1e-3) / 1e9);
                if (k > SEEDS_TOP_N)
                    fail_msg("lap %lld^3: the seeds' kind of config ranks %zu", (long long)grids[g],
                             k);
            }
            if (p.op == FDT_OP_LAP || p.op == FDT_OP_WAVE)
                for (size_t i = 0; i < r.n; i++) {
                    fdt_model_terms t;
                    if (rank_of(&r, i) > 16)
                        continue;
                    fdt_model_time(&p, &r.v[i], &d, NULL, &t);
                    if (t.occupancy < 0.25)
                        fail_msg("%s %lld^3: a top-16 config at occupancy %.2f",
                                 fdt_op_name(p.op), (long long)grids[g], t.occupancy);
                }
            free(r.v);
            free(r.ms);
        }
}

/* The ring's copies are ordinary loads on AMD: prefetching deeper buys nothing there (with
 * the same resident threads, the same latency cover), while on an H100 (cp.async) each plane
 * in flight counts. */
static void test_ring_latency_per_vendor(void **state)
{
    (void)state;
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 1024, 1024, 1024};
    fdt_config c2 = cfg(&p, "bx=64,by=2,tile=4,vec=2,nw=64,lds=2,pf=2,align=64,lb=128");
    fdt_config c6 = cfg(&p, "bx=64,by=2,tile=4,vec=2,nw=64,lds=2,pf=6,align=64,lb=128");
    fdt_rt_resources res = {.registers = 64, .sgprs = 30, .agprs = 0, .spill_bytes = 0,
                            .scratch_bytes = 0, .shared_bytes = 4096, .max_threads = 128,
                            .sgpr_spills = 0}; /* one LDS size: one occupancy */
    fdt_model_terms a, b;
    fdt_device m = gpu("MI250X"), h = gpu("H100");
    fdt_model_time(&p, &c2, &m, &res, &a);
    fdt_model_time(&p, &c6, &m, &res, &b);
    assert_int_equal(a.threads_per_cu, b.threads_per_cu);
    assert_true(a.latency_eff == b.latency_eff);
    fdt_model_time(&p, &c2, &h, NULL, &a);
    fdt_model_time(&p, &c6, &h, NULL, &b);
    assert_true(b.latency_eff > a.latency_eff);
    /* a launch counts its waves on AMD, not on NVIDIA */
    assert_true(a.t_wave_ms == 0);
    fdt_model_time(&p, &c2, &m, NULL, &a);
    assert_true(a.t_wave_ms > 0);
}

/* The z halo's steps (fdt_model_terms.t_halo_ms): 2 R_z / nw of an input plane's DRAM time
 * for a block with a z column on NVIDIA, nothing without one, without z neighbours or on AMD
 * (not measured there); with them the model prices explore45's nw series (lap R=7 f32, one
 * 256-thread stream per SM, 0.817 / 0.854 of copy at nw 128 / 512: 4.5% faster; predicted
 * 5.0%) within a point of what was measured. */
static void test_z_halo_steps(void **state)
{
    (void)state;
    fdt_device h = gpu("H100");
    fdt_problem lap = {FDT_OP_LAP, 4, FDT_F32, 512, 512, 512};
    fdt_model_terms a, b;
    fdt_config w16 = cfg(&lap, "bx=64,by=4,nw=16");
    fdt_config w64 = cfg(&lap, "bx=64,by=4,nw=64");
    fdt_model_time(&lap, &w16, &h, NULL, &a);
    fdt_model_time(&lap, &w64, &h, NULL, &b);
    /* a's DRAM time is dram_bytes at the same bandwidth: the halo is 2R/nw of one array */
    double plane_ms = a.t_dram_ms / a.dram_bytes * 512.0 * 512 * 512 * 4;
    assert_true(fabs(a.t_halo_ms - 8.0 / 16 * plane_ms) < 1e-9 * plane_ms);
    assert_true(fabs(b.t_halo_ms - a.t_halo_ms / 4) < 1e-9 * plane_ms);
    assert_true(b.time_ms < a.time_ms);
    fdt_config flat = cfg(&lap, "bx=64,by=4");
    fdt_model_time(&lap, &flat, &h, NULL, &a);
    assert_true(a.t_halo_ms == 0);
    fdt_problem d2x = {FDT_OP_D2X, 4, FDT_F32, 512, 512, 512};
    fdt_config xw = cfg(&d2x, "bx=64,by=4,nw=16");
    fdt_model_time(&d2x, &xw, &h, NULL, &a);
    assert_true(a.t_halo_ms == 0);
    fdt_device m = gpu("MI250X"); /* not measured on AMD: not counted (fdt_arch.halo_steps) */
    fdt_model_time(&lap, &w16, &m, NULL, &a);
    assert_true(a.t_halo_ms == 0);
    fdt_problem r7 = {FDT_OP_LAP, 7, FDT_F32, 512, 512, 512};
    const char *k = "align=32,bx=16,by=16,lb=256,lds=3,nt=1,pf=4,tile=2,vec=4,nw=";
    char t128[128], t512[128];
    snprintf(t128, sizeof t128, "%s128", k);
    snprintf(t512, sizeof t512, "%s512", k);
    fdt_config s128 = cfg(&r7, t128), s512 = cfg(&r7, t512);
    fdt_model_time(&r7, &s128, &h, NULL, &a);
    fdt_model_time(&r7, &s512, &h, NULL, &b);
    double gain = a.time_ms / b.time_ms - 1, measured = 0.854 / 0.817 - 1;
    assert_true(fabs(gain - measured) < 0.01);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_facts),
        cmocka_unit_test(test_lookup_and_fallback),
        cmocka_unit_test(test_occupancy_amd),
        cmocka_unit_test(test_occupancy_nvidia_unchanged),
        cmocka_unit_test(test_reg_cap_and_shared),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_gen_occupancy_and_warning),
        cmocka_unit_test(test_peak_bandwidth),
        cmocka_unit_test(test_flush_covers_infinity_cache),
        cmocka_unit_test(test_model_against_seeds),
        cmocka_unit_test(test_model_against_nvidia),
        cmocka_unit_test(test_onchip_counts),
        cmocka_unit_test(test_model_bounds),
        cmocka_unit_test(test_mi250x_dry_run),
        cmocka_unit_test(test_ring_latency_per_vendor),
        cmocka_unit_test(test_z_halo_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
