/* A stand-in for NVML (libnvidia-ml.so.1) for test_nvml: built as fake-nvml/libnvidia-ml.so.1
 * and found by the dynamic loader through LD_LIBRARY_PATH, the search fdtune's runtime uses
 * for the real one. It knows one GPU, at PCI 0000:18:00, and answers with canned values: the
 * driver "999.88.77" (no real driver has it, and /proc has no such number), SM 1755 of 1980
 * MHz, memory 2619 of 2619 MHz; FAKE_NVML_SM overrides the current SM clock and
 * FAKE_NVML_REASONS (a number) the throttle reasons (default none). FAKE_NVML_INIT_FAIL makes
 * nvmlInit_v2 fail. Only what fdtune calls is here; prototypes as NVML's (int for the enums). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The exported functions (NVML's names and shapes). */
int nvmlInit_v2(void);
int nvmlShutdown(void);
int fake_nvml_init_calls(void);
int nvmlSystemGetDriverVersion(char *buf, unsigned n);
int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **dev);
int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **dev);
int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz);
int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz);
int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *reasons);
int nvmlDeviceGetCurrentClocksThrottleReasons(void *dev, unsigned long long *reasons);

static int init_calls;
static char the_gpu; /* its address is the device handle */

static unsigned env_num(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    return v && *v ? (unsigned)strtoul(v, NULL, 0) : dflt;
}

int nvmlInit_v2(void)
{
    init_calls++;
    return getenv("FAKE_NVML_INIT_FAIL") ? 999 /* NVML_ERROR_UNKNOWN */ : 0;
}

int nvmlShutdown(void) { return 0; }

/* How often nvmlInit_v2 was called (fdtune initialises once per process). */
int fake_nvml_init_calls(void) { return init_calls; }

int nvmlSystemGetDriverVersion(char *buf, unsigned n)
{
    if (!init_calls)
        return 1; /* NVML_ERROR_UNINITIALIZED */
    snprintf(buf, n, "999.88.77");
    return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **dev)
{
    if (!init_calls)
        return 1;
    if (strcmp(pci, "0000:18:00") != 0)
        return 6; /* NVML_ERROR_NOT_FOUND */
    *dev = &the_gpu;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **dev)
{
    if (index != 0)
        return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    *dev = &the_gpu;
    return 0;
}

/* NVML_CLOCK_SM 1 (sm MHz), NVML_CLOCK_MEM 2 (2619 MHz); others not supported (3). */
static int clock(void *dev, int type, unsigned sm, unsigned *mhz)
{
    if (dev != &the_gpu)
        return 2;
    if (type == 1)
        *mhz = sm;
    else if (type == 2)
        *mhz = 2619;
    else
        return 3;
    return 0;
}

int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
    return clock(dev, type, env_num("FAKE_NVML_SM", 1755), mhz);
}

int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz)
{
    return clock(dev, type, 1980, mhz);
}

int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *reasons)
{
    if (dev != &the_gpu)
        return 2;
    *reasons = env_num("FAKE_NVML_REASONS", 0);
    return 0;
}

int nvmlDeviceGetCurrentClocksThrottleReasons(void *dev, unsigned long long *reasons)
{
    return nvmlDeviceGetCurrentClocksEventReasons(dev, reasons);
}
