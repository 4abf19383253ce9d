/* Device discovery across backends, run in a child process so that the caller stays free of
 * GPU driver state (GPU workers are forked from it) and a wedged driver cannot hang it. */
#include "fdt_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int probe_child(void *arg, fdt_sb *out)
{
    (void)arg;
    fdt_probe p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < fdt_rt_backend_count() && p.nbackends < 4; i++) {
        const fdt_rt_backend *b = fdt_rt_backend_at(i);
        fdt_backend_probe *bp = &p.backend[p.nbackends++];
        snprintf(bp->name, sizeof bp->name, "%s", b->name);
        fdt_err e;
        if (b->compiler_version(bp->compiler, sizeof bp->compiler, &e))
            snprintf(bp->compiler, sizeof bp->compiler, "unavailable");
        int n = 0;
        if (b->device_count(&n, &e)) {
            snprintf(bp->message, sizeof bp->message, "%s", e.msg);
            continue;
        }
        bp->available = 1;
        bp->count = n;
        if (n == 0)
            snprintf(bp->message, sizeof bp->message, "%s: driver loaded, no device visible",
                     b->name);
        for (int d = 0; d < n && p.ndevices < FDT_MAX_DEVICES; d++)
            if (b->device_info(d, &p.device[p.ndevices], &e) == 0)
                p.ndevices++;
            else
                snprintf(bp->message, sizeof bp->message, "device %d: %s", d, e.msg);
    }
    fdt_sb_putn(out, (const char *)&p, sizeof p);
    return 0;
}

int fdt_probe_devices(fdt_probe *p, fdt_err *e)
{
    char *data = NULL;
    size_t n = 0;
    if (fdt_run_in_child("device discovery", probe_child, NULL, 120000, &data, &n, e))
        return -1;
    if (n != sizeof *p) {
        free(data);
        return fdt_err_set(e, "device discovery: malformed answer");
    }
    memcpy(p, data, sizeof *p);
    free(data);
    return 0;
}
