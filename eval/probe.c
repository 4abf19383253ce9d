/* Device discovery across backends, run in a child process so that the caller stays free of
 * GPU driver state (GPU workers are forked from it) and a wedged driver cannot hang it. The
 * GPUs' list holds the GPU backends' devices only: `--gpu auto` and `--gpu all` pick from it,
 * so they never turn into a CPU run; the host CPU (a backend with host set) is probed on its
 * own (fdt_probe_host). */
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
        if (b->host)
            continue;
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

static int host_child(void *arg, fdt_sb *out)
{
    (void)arg;
    fdt_device d;
    fdt_err e;
    for (int i = 0; i < fdt_rt_backend_count(); i++) {
        const fdt_rt_backend *b = fdt_rt_backend_at(i);
        if (!b->host)
            continue;
        if (b->device_info(0, &d, &e)) {
            fdt_sb_puts(out, e.msg);
            return -1;
        }
        fdt_sb_putn(out, (const char *)&d, sizeof d);
        return 0;
    }
    fdt_sb_puts(out, "no host CPU backend in this build");
    return -1;
}

int fdt_probe_host(fdt_device *d, fdt_err *e)
{
    char *data = NULL;
    size_t n = 0;
    if (fdt_run_in_child("host CPU discovery", host_child, NULL, 120000, &data, &n, e))
        return -1;
    if (n != sizeof *d) {
        free(data);
        return fdt_err_set(e, "host CPU discovery: malformed answer");
    }
    memcpy(d, data, sizeof *d);
    free(data);
    return 0;
}
