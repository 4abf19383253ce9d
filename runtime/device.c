/* The device struct's rules: an empty device, the derived last-level cache, which two
 * devices are one model (the portable rule exported headers apply too), which is a simulated
 * one, and the forms of an AMD GPU's UUID. */
#include "fdt_device.h"

#include <stdio.h>
#include <string.h>

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
