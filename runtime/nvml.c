/* NVML (libnvidia-ml.so.1, part of every NVIDIA driver install), dlopen'ed like libcuda
 * (dl.c): the driver's version as the driver itself says it, and a GPU's SM and memory clocks
 * with the reasons they are held down. NVML's ABI is stable and its header is not part of the
 * CUDA toolkit fdtune builds against, so the few prototypes used are written out here. One
 * nvmlInit_v2 per process, never shut down: the processes that ask (the device probe, the GPU
 * worker, the library report's child) are short-lived or own their GPU. */
#include "fdt_rt.h"
#include "rt_internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int nvml_ret; /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_device *nvml_device;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static struct {
    int tried, ready;
    char why[512];
    nvml_ret (*init)(void);
    nvml_ret (*driver_version)(char *, unsigned);
    nvml_ret (*by_pci)(const char *, nvml_device *);
    nvml_ret (*clock)(nvml_device, int, unsigned *);
    nvml_ret (*max_clock)(nvml_device, int, unsigned *);
    nvml_ret (*reasons)(nvml_device, unsigned long long *);
} N;

static void *sym(void *lib, const char *name, const char *alt)
{
    void *p = dlsym(lib, name);
    return p || !alt ? p : dlsym(lib, alt);
}

/* Loads NVML and initialises it, once; 0 when ready, else N.why says why not. */
static int nvml_load(void)
{
    if (N.tried)
        return N.ready ? 0 : -1;
    N.tried = 1;
    static const char *const names[] = {"libnvidia-ml.so.1", NULL};
    const char *loader[] = {""};
    fdt_rt_dl d;
    fdt_sb why;
    fdt_sb_init(&why);
    int rc = fdt_rt_dl_open(loader, 1, names, &d, &why);
    snprintf(N.why, sizeof N.why, "NVML: %s", rc ? fdt_sb_str(&why) : "");
    fdt_sb_free(&why);
    if (rc)
        return -1;
    *(void **)&N.init = sym(d.lib, "nvmlInit_v2", "nvmlInit");
    *(void **)&N.driver_version = sym(d.lib, "nvmlSystemGetDriverVersion", NULL);
    *(void **)&N.by_pci = sym(d.lib, "nvmlDeviceGetHandleByPciBusId_v2",
                              "nvmlDeviceGetHandleByPciBusId");
    *(void **)&N.clock = sym(d.lib, "nvmlDeviceGetClockInfo", NULL);
    *(void **)&N.max_clock = sym(d.lib, "nvmlDeviceGetMaxClockInfo", NULL);
    /* renamed in driver 535; the old name stays exported */
    *(void **)&N.reasons = sym(d.lib, "nvmlDeviceGetCurrentClocksEventReasons",
                               "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!N.init || !N.driver_version || !N.by_pci || !N.clock || !N.max_clock) {
        snprintf(N.why, sizeof N.why, "NVML: %s lacks the functions fdtune uses", d.path);
        return -1;
    }
    nvml_ret r = N.init();
    if (r != 0) {
        snprintf(N.why, sizeof N.why, "NVML: nvmlInit_v2 failed (error %d)", r);
        return -1;
    }
    N.ready = 1;
    return 0;
}

const char *fdt_rt_nvidia_driver(int cuda_api, char *buf, size_t n)
{
    char v[96];
    if (nvml_load() == 0 && N.driver_version(v, sizeof v) == 0 && v[0]) {
        snprintf(buf, n, "%s", v);
        return "nvml";
    }
    if (cuda_api > 0) {
        snprintf(buf, n, "CUDA driver API %d.%d", cuda_api / 1000, cuda_api % 1000 / 10);
        return "cuda";
    }
    snprintf(buf, n, "unknown");
    return "";
}

/* One clock in MHz, -1 when NVML does not say. */
static int mhz(nvml_ret (*f)(nvml_device, int, unsigned *), nvml_device h, int which)
{
    unsigned v = 0;
    return f(h, which, &v) == 0 ? (int)v : -1;
}

int fdt_rt_nvidia_clocks(const char *pci, fdt_clocks *c, fdt_err *e)
{
    fdt_clocks_init(c);
    if (nvml_load())
        return fdt_err_set(e, "clocks: %s", N.why);
    nvml_device h = NULL;
    nvml_ret r = N.by_pci(pci, &h);
    if (r != 0)
        return fdt_err_set(e, "clocks: NVML knows no GPU at PCI %s (error %d)", pci, r);
    c->known = 1;
    c->sm_mhz = mhz(N.clock, h, NVML_CLOCK_SM);
    c->sm_max_mhz = mhz(N.max_clock, h, NVML_CLOCK_SM);
    c->mem_mhz = mhz(N.clock, h, NVML_CLOCK_MEM);
    c->mem_max_mhz = mhz(N.max_clock, h, NVML_CLOCK_MEM);
    unsigned long long bits = 0;
    if (N.reasons && N.reasons(h, &bits) == 0) {
        c->reasons_known = 1;
        c->reasons = bits;
    }
    return 0;
}
