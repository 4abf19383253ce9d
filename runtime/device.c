/* The device struct's rules: an empty device, the derived last-level cache, which two
 * devices are one model (the portable rule exported headers apply too), and which is a
 * simulated one. */
#include "fdt_device.h"

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
