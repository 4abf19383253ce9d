/* What the host CPU is, for the cpu backend (cpu.c): its identity (vendor, model name, the
 * ISA level its kernels are compiled for, the physical cores of this process's affinity
 * mask, a per-machine UUID) and its facts (sockets, hardware threads, NUMA nodes, SIMD ISA
 * and vector width, caches, memory, core ids). The ISA level comes from the processor itself
 * (cpuid on x86-64, the auxiliary vector's HWCAP on AArch64), the rest from /proc/cpuinfo,
 * /proc/meminfo and /sys/devices/system. Nothing here assumes x86. */
#include "rt_internal.h"

#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

#define SYS_CPU "/sys/devices/system/cpu"

/* The first line of a file, without its newline; 0 when it has one. */
static int line_of(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return ok ? 0 : -1;
}

static long long number_of(const char *path)
{
    char buf[64];
    return line_of(path, buf, sizeof buf) ? -1 : atoll(buf);
}

/* The value of the first "key : value" line of /proc/cpuinfo whose key is key; 0 when one. */
static int cpuinfo(const char *key, char *buf, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int rc = -1;
    size_t kl = strlen(key);
    while (f && rc && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon || strncmp(line, key, kl) || (line[kl] != ' ' && line[kl] != '\t'))
            continue;
        char *v = colon + 1;
        while (*v == ' ')
            v++;
        v[strcspn(v, "\n")] = 0;
        snprintf(buf, n, "%s", v);
        rc = 0;
    }
    if (f)
        fclose(f);
    return rc;
}

/* "0-3,8" for the CPUs in set. */
static void cpu_list(const cpu_set_t *set, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && used + 1 < n; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        int w = last > c ? snprintf(buf + used, n - used, "%s%d-%d", used ? "," : "", c, last)
                         : snprintf(buf + used, n - used, "%s%d", used ? "," : "", c);
        if (w < 0 || (size_t)w >= n - used)
            break;
        used += (size_t)w;
        c = last;
    }
}

static void affinity(cpu_set_t *set)
{
    CPU_ZERO(set);
    if (sched_getaffinity(0, sizeof *set, set) != 0 || CPU_COUNT(set) == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < (n > 0 ? n : 1) && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
    }
}

/* Package and core of CPU c (-1 when sysfs does not say: each CPU its own core). */
static void topology(int c, long long *package, long long *core)
{
    char path[128];
    snprintf(path, sizeof path, SYS_CPU "/cpu%d/topology/physical_package_id", c);
    *package = number_of(path);
    snprintf(path, sizeof path, SYS_CPU "/cpu%d/topology/core_id", c);
    *core = number_of(path);
}

int fdt_rt_cpu_cores(int *first, int max)
{
    cpu_set_t set;
    affinity(&set);
    long long seen[CPU_SETSIZE][2];
    int n = 0, cores = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        long long pkg, core;
        topology(c, &pkg, &core);
        int dup = 0;
        for (int i = 0; i < n && core >= 0 && !dup; i++)
            dup = seen[i][0] == pkg && seen[i][1] == core;
        if (dup)
            continue; /* a second hardware thread of a core already counted */
        seen[n][0] = pkg;
        seen[n++][1] = core;
        if (first && cores < max)
            first[cores] = c;
        cores++;
    }
    return cores > 0 ? cores : 1;
}

/* Sockets of the CPUs in set. */
static int sockets_of(const cpu_set_t *set)
{
    long long pk[64];
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        long long pkg, core;
        topology(c, &pkg, &core);
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = pk[i] == pkg;
        if (!dup && n < 64)
            pk[n++] = pkg;
    }
    return n > 0 ? n : 1;
}

static int numa_nodes(void)
{
    char path[96];
    int n = 0;
    for (int i = 0; i < 1024; i++) {
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d", i);
        if (access(path, F_OK) == 0)
            n++;
    }
    return n > 0 ? n : 1;
}

/* "32K", "1024K", "32M" as bytes. */
static int64_t size_of(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    int64_t mul = *end == 'K' ? 1024 : *end == 'M' ? 1 << 20 : *end == 'G' ? 1LL << 30 : 1;
    return v > 0 ? v * mul : 0;
}

/* The last-level cache of CPU c: its level, its size and the CPUs sharing it (a list); -1
 * when sysfs describes no data or unified cache of it. */
static int last_level(int c, int *level, int64_t *bytes, char *shared, size_t n)
{
    *level = 0;
    for (int i = 0; i < 16; i++) {
        char base[128], path[192], type[32], size[32];
        snprintf(base, sizeof base, SYS_CPU "/cpu%d/cache/index%d", c, i);
        snprintf(path, sizeof path, "%s/level", base);
        long long lv = number_of(path);
        snprintf(path, sizeof path, "%s/type", base);
        if (lv < 0 || line_of(path, type, sizeof type))
            break;
        snprintf(path, sizeof path, "%s/size", base);
        if (!strcmp(type, "Instruction") || lv < *level || line_of(path, size, sizeof size))
            continue;
        *level = (int)lv;
        *bytes = size_of(size);
        snprintf(path, sizeof path, "%s/shared_cpu_list", base);
        if (line_of(path, shared, n))
            snprintf(shared, n, "%d", c);
    }
    return *level > 0 ? 0 : -1;
}

/* L1d and L2 per core from cpu c's caches. */
static void core_caches(int c, fdt_device *d)
{
    for (int i = 0; i < 16; i++) {
        char base[128], path[192], type[32], size[32];
        snprintf(base, sizeof base, SYS_CPU "/cpu%d/cache/index%d", c, i);
        snprintf(path, sizeof path, "%s/level", base);
        long long level = number_of(path);
        snprintf(path, sizeof path, "%s/type", base);
        if (level < 0 || line_of(path, type, sizeof type))
            break;
        snprintf(path, sizeof path, "%s/size", base);
        if (line_of(path, size, sizeof size) || !strcmp(type, "Instruction"))
            continue;
        if (level == 1)
            d->l1d_bytes = size_of(size);
        else if (level == 2)
            d->l2_bytes = size_of(size);
    }
}

/* The last-level caches the CPUs in set use, in total: each instance (a distinct set of
 * sharing CPUs) once. */
static int64_t llc_total(const cpu_set_t *set)
{
    enum { MAXI = 256 };
    char(*seen)[256] = calloc(MAXI, sizeof *seen);
    int n = 0;
    int64_t total = 0;
    if (!seen)
        return 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        char shared[256];
        int level;
        int64_t bytes = 0;
        if (!CPU_ISSET(c, set) || last_level(c, &level, &bytes, shared, sizeof shared))
            continue;
        int dup = 0;
        for (int i = 0; i < n && !dup; i++)
            dup = !strcmp(seen[i], shared);
        if (dup)
            continue;
        if (n < MAXI)
            snprintf(seen[n++], sizeof seen[0], "%s", shared);
        total += bytes;
    }
    free(seen);
    return total;
}

static int64_t meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    int64_t v = -1;
    size_t kl = strlen(key);
    while (f && v < 0 && fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':')
            v = atoll(line + kl + 1) * 1024;
    if (f)
        fclose(f);
    return v;
}

int fdt_rt_cpu_meminfo(size_t *avail, size_t *total, fdt_err *e)
{
    int64_t t = meminfo("MemTotal"), a = meminfo("MemAvailable");
    if (t <= 0)
        return fdt_err_set(e, "cpu: /proc/meminfo: no MemTotal");
    *total = (size_t)t;
    *avail = (size_t)(a > 0 ? a : t);
    return 0;
}

#if defined(__x86_64__)
/* The x86-64 micro-architecture level (the psABI's v2, v3, v4) from cpuid, with the
 * operating system's support of the AVX and AVX-512 register state (XGETBV). */
static int isa_level(fdt_device *d, fdt_err *e)
{
    unsigned a, b, c, dx, b7 = 0, c7 = 0, d7 = 0, ax1 = 0, bx1 = 0, cx1 = 0, dx1 = 0;
    if (!__get_cpuid(1, &a, &b, &c, &dx))
        return fdt_err_set(e, "cpu: cpuid leaf 1 unavailable");
    __get_cpuid_count(7, 0, &a, &b7, &c7, &d7);
    __get_cpuid(0x80000001, &ax1, &bx1, &cx1, &dx1);
    unsigned long long xcr0 = 0;
    if (c & (1u << 27)) { /* OSXSAVE */
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        xcr0 = ((unsigned long long)hi << 32) | lo;
    }
    int v2 = (c & (1u << 0)) && (c & (1u << 9)) && (c & (1u << 13)) && (c & (1u << 19)) &&
             (c & (1u << 20)) && (c & (1u << 23)) && (cx1 & 1u); /* SSE3 SSSE3 CX16 SSE4.1/2
                                                                     POPCNT LAHF */
    int avx_os = (xcr0 & 6) == 6, zmm_os = (xcr0 & 0xe6) == 0xe6;
    int v3 = v2 && avx_os && (c & (1u << 28)) && (c & (1u << 12)) && (c & (1u << 29)) &&
             (c & (1u << 22)) && (b7 & (1u << 3)) && (b7 & (1u << 5)) && (b7 & (1u << 8)) &&
             (cx1 & (1u << 5)); /* AVX FMA F16C MOVBE BMI1 AVX2 BMI2 LZCNT */
    int v4 = v3 && zmm_os && (b7 & (1u << 16)) && (b7 & (1u << 17)) && (b7 & (1u << 28)) &&
             (b7 & (1u << 30)) && (b7 & (1u << 31)); /* AVX-512 F DQ CD BW VL */
    if (!v2)
        return fdt_err_set(e, "cpu: this x86-64 CPU lacks x86-64-v2 (SSE4.2, POPCNT, CX16), "
                              "the oldest level fdtune compiles for");
    const char *level = v4 ? "x86-64-v4" : v3 ? "x86-64-v3" : "x86-64-v2";
    snprintf(d->arch, sizeof d->arch, "%s", level);
    snprintf(d->simd, sizeof d->simd, "%s", v4 ? "AVX-512" : v3 ? "AVX2" : "SSE4.2");
    d->vector_bytes = v4 ? 64 : v3 ? 32 : 16;
    return 0;
}
#elif defined(__aarch64__)
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif
/* AArch64 with SVE (its vector length now, prctl) or without (NEON, 16 bytes). */
static int isa_level(fdt_device *d, fdt_err *e)
{
    (void)e;
    int sve = (getauxval(AT_HWCAP) & HWCAP_SVE) != 0;
    int vl = 16;
#ifdef PR_SVE_GET_VL
    if (sve) {
        int r = prctl(PR_SVE_GET_VL);
        if (r > 0)
            vl = r & 0xffff;
    }
#endif
    snprintf(d->arch, sizeof d->arch, "%s", sve ? "aarch64-sve" : "aarch64");
    snprintf(d->simd, sizeof d->simd, "%s", sve ? "SVE" : "NEON");
    d->vector_bytes = vl;
    return 0;
}
#else
static int isa_level(fdt_device *d, fdt_err *e)
{
    (void)d;
    return fdt_err_set(e, "cpu: this processor is neither x86-64 nor AArch64");
}
#endif

/* AArch64's implementer codes (MIDR bits 31-24) and a few well-known parts. */
static void arm_identity(fdt_device *d)
{
    static const struct { unsigned impl; const char *vendor; } vendors[] = {
        {0x41, "ARM"}, {0x42, "Broadcom"}, {0x43, "Cavium"}, {0x46, "Fujitsu"},
        {0x48, "HiSilicon"}, {0x4e, "NVIDIA"}, {0x50, "Ampere"}, {0x51, "Qualcomm"},
        {0x61, "Apple"}, {0xc0, "Ampere"},
    };
    static const struct { unsigned impl, part; const char *name; } parts[] = {
        {0x41, 0xd0c, "ARM Neoverse-N1"}, {0x41, 0xd40, "ARM Neoverse-V1"},
        {0x41, 0xd49, "ARM Neoverse-N2"}, {0x41, 0xd4f, "ARM Neoverse-V2"},
        {0x41, 0xd84, "ARM Neoverse-V3"}, {0x46, 0x001, "Fujitsu A64FX"},
    };
    char impl_s[32] = "", part_s[32] = "";
    cpuinfo("CPU implementer", impl_s, sizeof impl_s);
    cpuinfo("CPU part", part_s, sizeof part_s);
    unsigned impl = (unsigned)strtoul(impl_s, NULL, 0), part = (unsigned)strtoul(part_s, NULL, 0);
    snprintf(d->vendor, sizeof d->vendor, "ARM implementer 0x%02x", impl);
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
        if (vendors[i].impl == impl)
            snprintf(d->vendor, sizeof d->vendor, "%s", vendors[i].vendor);
    if (d->name[0])
        return;
    snprintf(d->name, sizeof d->name, "%s part 0x%03x", d->vendor, part);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].impl == impl && parts[i].part == part)
            snprintf(d->name, sizeof d->name, "%s", parts[i].name);
}

/* Vendor and model name as the CPU reports them. */
static void identity(fdt_device *d)
{
    char v[64] = "";
    cpuinfo("model name", d->name, sizeof d->name);
    if (cpuinfo("vendor_id", v, sizeof v) == 0) {
        snprintf(d->vendor, sizeof d->vendor, "%s",
                 !strcmp(v, "AuthenticAMD") ? "AMD" : !strcmp(v, "GenuineIntel") ? "Intel" : v);
    } else {
        arm_identity(d);
    }
    /* collapse runs of blanks ("Intel(R) Xeon(R) CPU  E5" has two) */
    char *w = d->name;
    for (const char *r = d->name; *r; r++)
        if (!(isspace((unsigned char)*r) && (w == d->name || w[-1] == ' ')))
            *w++ = isspace((unsigned char)*r) ? ' ' : *r;
    while (w > d->name && w[-1] == ' ')
        w--;
    *w = 0;
    if (!d->name[0])
        snprintf(d->name, sizeof d->name, "%s CPU", d->vendor[0] ? d->vendor : "unknown");
}

/* "cpu-" and 16 hex digits of a hash of /etc/machine-id, else of the host name. */
static void machine_uuid(fdt_device *d)
{
    char id[256] = "";
    if (line_of("/etc/machine-id", id, sizeof id) || !id[0])
        gethostname(id, sizeof id - 1);
    snprintf(d->uuid, sizeof d->uuid, "cpu-%016llx",
             (unsigned long long)fdt_hash64_str(id, FDT_HASH_SEED));
}

int fdt_rt_cpu_describe(fdt_device *d, fdt_err *e)
{
    fdt_device_init(d);
    snprintf(d->backend, sizeof d->backend, "cpu");
    if (isa_level(d, e))
        return -1;
    identity(d);
    cpu_set_t set;
    affinity(&set);
    int first = 0;
    for (; first < CPU_SETSIZE && !CPU_ISSET(first, &set); first++)
        ;
    d->compute_units = fdt_rt_cpu_cores(NULL, 0);
    d->threads = CPU_COUNT(&set);
    d->sockets = sockets_of(&set);
    d->numa_nodes = numa_nodes();
    cpu_list(&set, d->core_ids, sizeof d->core_ids);
    core_caches(first, d);
    d->llc_bytes = llc_total(&set);
    size_t avail = 0, total = 0;
    if (fdt_rt_cpu_meminfo(&avail, &total, e))
        return -1;
    d->mem_bytes = (int64_t)total;
    machine_uuid(d);
    d->warp_size = 1;
    d->index = 0;
    d->live = 1;
    return 0;
}
