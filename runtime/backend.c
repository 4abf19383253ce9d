/* The registry of backends compiled into this binary, the default targets (those whose
 * compiler loads), and small helpers they share. The simulated backend is found by name
 * but never listed. */
#include "rt_internal.h"

#include <stdio.h>
#include <string.h>

static const fdt_rt_backend *const backends[] = {
#ifdef FDTUNE_HAVE_CUDA
    &fdt_rt_cuda,
#endif
#ifdef FDTUNE_HAVE_HIP
    &fdt_rt_hip,
#endif
    NULL,
};

int fdt_rt_backend_count(void) { return (int)(sizeof backends / sizeof backends[0]) - 1; }

const fdt_rt_backend *fdt_rt_backend_at(int i)
{
    return i >= 0 && i < fdt_rt_backend_count() ? backends[i] : NULL;
}

const fdt_rt_backend *fdt_rt_backend_find(const char *name)
{
    for (int i = 0; backends[i]; i++)
        if (!strcmp(backends[i]->name, name))
            return backends[i];
    if (!strcmp(name, fdt_rt_sim.name))
        return &fdt_rt_sim; /* found by name only, never listed */
    return NULL;
}

int fdt_rt_default_targets(const char **targets, int max, fdt_rt_unavailable *skipped,
                           int *nskipped)
{
    int n = 0;
    *nskipped = 0;
    for (int i = 0; i < fdt_rt_backend_count() && n < max; i++) {
        const fdt_rt_backend *b = fdt_rt_backend_at(i);
        char ver[64];
        fdt_err e;
        if (b->compiler_version(ver, sizeof ver, &e) == 0) {
            targets[n++] = b->example_arch;
        } else if (skipped) {
            skipped[*nskipped].b = b;
            skipped[(*nskipped)++].why = e;
        }
    }
    return n;
}

const fdt_rt_backend *fdt_rt_backend_for_arch(const char *arch, fdt_err *e)
{
    const char *name = fdtuned_arch_backend(arch);
    for (int i = 0; backends[i]; i++)
        if (!strcmp(name, backends[i]->name))
            return backends[i];
    char known[128] = "";
    for (int i = 0; backends[i]; i++) {
        size_t u = strlen(known);
        snprintf(known + u, sizeof known - u, "%s%s (%s)", i ? ", " : "",
                 backends[i]->example_arch, backends[i]->name);
    }
    fdt_err_set(e, "target '%s': no backend in this build compiles for it (known: %s)", arch,
                fdt_rt_backend_count() ? known : "none");
    return NULL;
}

void fdt_rt_nvidia_kernel_driver(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return;
    char line[512];
    if (fgets(line, sizeof line, f)) {
        /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." or
         * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release ...":
         * the version is the first token made of digits and dots after "Module" */
        char *p = strstr(line, "Module");
        for (char *tok = p ? strtok(p + 6, " \t\n") : NULL; tok; tok = strtok(NULL, " \t\n"))
            if (tok[0] >= '0' && tok[0] <= '9' && strchr(tok, '.') &&
                strspn(tok, "0123456789.") == strlen(tok)) {
                snprintf(buf, n, "%s", tok);
                break;
            }
    }
    fclose(f);
}
