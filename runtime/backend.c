/* The registry of backends compiled into this binary (the GPU backends, then the host CPU's),
 * the default targets (the GPU backends' whose compiler loads), the report of the libraries they load, and small helpers they share: the
 * amdgpu kernel driver's version (NVIDIA's is NVML's: nvml.c). The simulated backend is
 * found by name but never listed. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static const fdt_rt_backend *const backends[] = {
#ifdef FDTUNE_HAVE_CUDA
    &fdt_rt_cuda,
#endif
#ifdef FDTUNE_HAVE_HIP
    &fdt_rt_hip,
#endif
    &fdt_rt_cpu,
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
        if (b->host)
            continue; /* the CPU is a target when named, never by default */
        if (b->compiler_version(ver, sizeof ver, &e) == 0) {
            targets[n++] = b->example_arch;
        } else if (skipped) {
            skipped[*nskipped].b = b;
            skipped[(*nskipped)++].why = e;
        }
    }
    return n;
}

int fdt_rt_backend_claims(const fdt_rt_backend *b, const char *arch)
{
    const fdt_device_claim *c = fdt_device_claim_of(arch);
    return c && !strcmp(c->backend, b->name);
}

const fdt_rt_backend *fdt_rt_backend_for_arch(const char *arch, fdt_err *e)
{
    for (int i = 0; backends[i]; i++)
        if (fdt_rt_backend_claims(backends[i], arch))
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

const fdt_rt_backend *fdt_rt_backend_for_target(const char *arch, fdt_err *e)
{
    const fdt_rt_backend *b = fdt_rt_backend_for_arch(arch, e);
    if (b && b->check_target && b->check_target(arch, e))
        return NULL;
    return b;
}

/* The first line of file root/rel, without its newline; 0 when it has one. */
static int read_line(const char *root, const char *rel, char *buf, size_t n)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return ok && buf[0] ? 0 : -1;
}

void fdt_rt_amdgpu_kernel_driver_at(const char *root, char *buf, size_t n)
{
    char ver[64], src[64], dir[PATH_MAX];
    if (read_line(root, "module/amdgpu/version", ver, sizeof ver) == 0) { /* DKMS */
        snprintf(buf, n, "amdgpu %s", ver);
        return;
    }
    snprintf(dir, sizeof dir, "%s/module/amdgpu", root);
    struct utsname u;
    if (access(dir, F_OK) != 0 || uname(&u) != 0) {
        snprintf(buf, n, "amdgpu not loaded");
        return;
    }
    if (read_line(root, "module/amdgpu/srcversion", src, sizeof src) == 0)
        snprintf(buf, n, "amdgpu in-tree (Linux %s, srcversion %s)", u.release, src);
    else /* built into the kernel */
        snprintf(buf, n, "amdgpu in-tree (Linux %s)", u.release);
}

void fdt_rt_amdgpu_kernel_driver(char *buf, size_t n)
{
    fdt_rt_amdgpu_kernel_driver_at("/sys", buf, n);
}

static int libraries_child(void *arg, fdt_sb *out)
{
    (void)arg;
    fdt_rt_lib libs[FDT_RT_MAX_LIBS];
    int n = 0;
    for (int i = 0; i < fdt_rt_backend_count(); i++) {
        const fdt_rt_backend *b = fdt_rt_backend_at(i);
        if (b->libraries)
            n += b->libraries(libs + n, FDT_RT_MAX_LIBS - n);
    }
    fdt_sb_putn(out, (const char *)libs, (size_t)n * sizeof libs[0]);
    return out->oom ? -1 : 0;
}

int fdt_rt_libraries(fdt_rt_lib *libs, int max, int *n, fdt_err *e)
{
    char *data = NULL;
    size_t len = 0;
    *n = 0;
    if (fdt_run_in_child("library report", libraries_child, NULL, 60000, &data, &len, e))
        return -1;
    if (len % sizeof libs[0]) {
        free(data);
        return fdt_err_set(e, "library report: malformed answer");
    }
    *n = (int)(len / sizeof libs[0]) < max ? (int)(len / sizeof libs[0]) : max;
    if (*n > 0)
        memcpy(libs, data, (size_t)*n * sizeof libs[0]);
    free(data);
    return 0;
}
