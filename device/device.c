/* The device struct's rules: which backend claims an architecture, an empty device, the
 * derived last-level cache, which two devices are one model (the portable rule exported
 * headers apply too), which is a simulated one, and the forms of an AMD GPU's UUID. */
#include "fdt_device.h"

#include <stdio.h>
#include <string.h>

static int has_prefix(const char *arch, const char *prefix)
{
    return arch && !strncmp(arch, prefix, strlen(prefix));
}

/* NVIDIA's compute capabilities (NVRTC's -arch): sm_90, sm_100a. */
static int claims_sm(const char *arch) { return has_prefix(arch, "sm_"); }
/* AMD's GPU targets (the LLVM processor names): gfx90a, gfx942, gfx1100. */
static int claims_gfx(const char *arch) { return has_prefix(arch, "gfx"); }

/* The ISA levels the host CPU's kernels are compiled for (runtime/cpu.c): x86-64 micro-
 * architecture levels and AArch64 with or without SVE. */
static int claims_cpu(const char *arch)
{
    static const char *const names[] = {"x86-64-v2", "x86-64-v3", "x86-64-v4", "aarch64",
                                        "aarch64-sve"};
    for (size_t i = 0; arch && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(arch, names[i]))
            return 1;
    return 0;
}

/* A CPU's vendor is no property of its ISA level ("AMD" and "Intel" share x86-64-v3): the
 * cpu claim names none, and the backend reports the CPU's own. */
static const fdt_device_claim claims[] = {
    {"cuda", "NVIDIA", "sm_...", claims_sm},
    {"hip", "AMD", "gfx...", claims_gfx},
    {"cpu", "", "x86-64-v2|v3|v4, aarch64, aarch64-sve", claims_cpu},
};
#define NCLAIMS ((int)(sizeof claims / sizeof claims[0]))

const fdt_device_claim *fdt_device_claim_at(int i)
{
    return i >= 0 && i < NCLAIMS ? &claims[i] : NULL;
}

const fdt_device_claim *fdt_device_claim_of(const char *arch)
{
    for (int i = 0; arch && *arch && i < NCLAIMS; i++)
        if (claims[i].claims(arch))
            return &claims[i];
    return NULL;
}

int fdt_device_simulated(const fdt_device *d)
{
    return !strcmp(d->backend, FDT_SIM_BACKEND);
}

void fdt_device_init(fdt_device *d)
{
    memset(d, 0, sizeof *d);
    d->index = -1;
}

void fdt_device_derive(fdt_device *d)
{
    if (d->sockets > 0)
        return; /* a CPU: its backend read the last-level caches */
    d->llc_bytes = d->infinity_cache_bytes > 0 ? d->infinity_cache_bytes : d->l2_bytes;
}

int fdt_device_same_model(const fdt_device *a, const fdt_device *b)
{
    return fdtuned_same_model(a->name, a->arch, a->compute_units, b->name, b->arch,
                              b->compute_units);
}

static int is_hex(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
              (s[i] >= 'A' && s[i] <= 'F')))
            return 0;
    return 1;
}

void fdt_device_amd_uuid(const unsigned char bytes[16], char *out, size_t n)
{
    if (is_hex(bytes, 16)) {
        snprintf(out, n, "GPU-%.16s", (const char *)bytes);
        return;
    }
    if (!memcmp(bytes, "XX", 2) && !bytes[2]) { /* ROCr: the GPU has no unique id */
        snprintf(out, n, "%s", "");
        return;
    }
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    snprintf(out, n, "GPU-%s", hex);
}

int fdt_device_amd_uuid_legacy(const fdt_device *d, char *out, size_t n)
{
    const unsigned char *id = (const unsigned char *)d->uuid + 4;
    size_t len = strlen(d->uuid);
    if (strcmp(d->backend, "hip") || strncmp(d->uuid, "GPU-", 4) || !is_hex(id, len - 4))
        return -1;
    if (len == 4 + 16) /* the characters of ROCm's unique id: the first 8 as hex bytes */
        snprintf(out, n, "GPU-%02x%02x%02x%02x%02x%02x%02x%02x", id[0], id[1], id[2], id[3],
                 id[4], id[5], id[6], id[7]);
    else if (len == 4 + 32) /* 16 other bytes as hex: the first 8 of them */
        snprintf(out, n, "GPU-%.16s", (const char *)id);
    else
        return -1;
    return 0;
}

int fdt_device_same_gpu(const fdt_device *stored, const fdt_device *live)
{
    char legacy[48];
    if (!stored->uuid[0] || !live->uuid[0])
        return 0;
    return !strcmp(stored->uuid, live->uuid) ||
           (fdt_device_amd_uuid_legacy(live, legacy, sizeof legacy) == 0 &&
            !strcmp(stored->uuid, legacy));
}

void fdt_clocks_init(fdt_clocks *c)
{
    memset(c, 0, sizeof *c);
    c->sm_mhz = c->sm_max_mhz = c->mem_mhz = c->mem_max_mhz = -1;
}

static const char *const throttle_names[] = {
    "gpu_idle",   "applications_clocks", "sw_power_cap",   "hw_slowdown",    "sync_boost",
    "sw_thermal", "hw_thermal",          "hw_power_brake", "display_clocks",
};
#define NTHROTTLE ((int)(sizeof throttle_names / sizeof throttle_names[0]))

const char *fdt_throttle_name(uint64_t bit)
{
    for (int i = 0; i < NTHROTTLE; i++)
        if (bit == (uint64_t)1 << i)
            return throttle_names[i];
    return NULL;
}

void fdt_throttle_names(uint64_t bits, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < NTHROTTLE; i++)
        if (bits & ((uint64_t)1 << i)) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "", throttle_names[i]);
            if (w < 0 || (size_t)w >= n - used)
                return;
            used += (size_t)w;
        }
}

int fdt_throttle_parse(const char *names, uint64_t *bits)
{
    *bits = 0;
    for (const char *p = names; p && *p;) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < NTHROTTLE && !found; i++)
            if (strlen(throttle_names[i]) == len && !strncmp(p, throttle_names[i], len)) {
                *bits |= (uint64_t)1 << i;
                found = 1;
            }
        if (!found)
            return -1;
        p += len + (p[len] == ',');
    }
    return 0;
}
