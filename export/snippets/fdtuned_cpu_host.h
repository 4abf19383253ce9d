/* ---- fdtune export: the current CPU, as fdtune describes it (C11, Linux) -----------------
 * The CPU part of an exported header selects a variant by the CPU a program runs on, with the
 * same three facts fdtune keys CPU results by (fdtune devices shows them):
 *   name   the model name the CPU reports (/proc/cpuinfo "model name", runs of blanks made
 *          one); "" where there is none (the selection then goes by the architecture);
 *   arch   the ISA level fdtune compiles for: x86-64-v2, x86-64-v3 (AVX2, FMA, BMI, ...),
 *          x86-64-v4 (AVX-512 F, BW, CD, DQ, VL); aarch64, aarch64-sve;
 *   cores  the physical cores of this process's affinity mask (/proc/self/status
 *          Cpus_allowed_list; hardware threads of one core count once, by /sys topology), at
 *          least 1.
 * The selection is fdtune's nearest rule (portable/fdtuned_nearest.h): another model of the
 * same arch answers when the exact one was not tuned, and the fallback when none was. */
#ifndef FDTUNED_CPU_HOST_V1
#define FDTUNED_CPU_HOST_V1

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

/* The model name into buf ("" when /proc/cpuinfo has none). */
static inline void fdtuned_cpu_name_(char *buf, size_t n)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    buf[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !c)
            continue;
        size_t w = 0;
        for (const char *r = c + 1; *r && w + 1 < n; r++) {
            int blank = *r == ' ' || *r == '\t' || *r == '\n' || *r == '\r';
            if (!(blank && (w == 0 || buf[w - 1] == ' ')))
                buf[w++] = blank ? ' ' : *r;
        }
        while (w > 0 && buf[w - 1] == ' ')
            w--;
        buf[w] = 0;
        break;
    }
    if (f)
        fclose(f);
}

/* The ISA level of this CPU, as fdtune names it. */
static inline const char *fdtuned_cpu_arch_(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return "x86-64-v4";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("avx"))
        return "x86-64-v3";
    return "x86-64-v2";
#elif defined(__aarch64__)
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif
    return (getauxval(AT_HWCAP) & HWCAP_SVE) ? "aarch64-sve" : "aarch64";
#else
    return "";
#endif
}

/* One number from a /sys file; -1 when it cannot be read. */
static inline long long fdtuned_cpu_sys_(int cpu, const char *what)
{
    char path[128];
    long long v = -1;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%lld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* The physical cores of this process's affinity mask (at least 1). */
static inline int fdtuned_cpu_cores_(void)
{
    static long long seen[4096][2];
    char line[8192] = "";
    int n = 0;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f) && strncmp(line, "Cpus_allowed_list:", 18))
        line[0] = 0;
    if (f)
        fclose(f);
    if (strncmp(line, "Cpus_allowed_list:", 18))
        return 1;
    for (char *s = line + 18; *s && n < 4096;) { /* "0-7,16-23" */
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long c = a; c <= b && n < 4096; c++) {
            long long pkg = fdtuned_cpu_sys_((int)c, "physical_package_id");
            long long core = fdtuned_cpu_sys_((int)c, "core_id");
            int dup = 0;
            for (int i = 0; i < n && core >= 0 && !dup; i++)
                dup = seen[i][0] == pkg && seen[i][1] == core;
            if (!dup) {
                seen[n][0] = pkg;
                seen[n++][1] = core;
            }
        }
        s = *end == ',' ? end + 1 : end;
        if (*s == '\n' || *s == 0)
            break;
    }
    return n > 0 ? n : 1;
}

/* The current CPU: its model name, arch and cores (described once per process). */
static inline void fdtuned_cpu_current_device(const char **name, const char **arch, int *cores)
{
    static char model[256];
    static const char *isa;
    static int n;
    if (!isa) {
        fdtuned_cpu_name_(model, sizeof model);
        n = fdtuned_cpu_cores_();
        isa = fdtuned_cpu_arch_();
    }
    *name = model;
    *arch = isa;
    *cores = n;
}

#endif /* FDTUNED_CPU_HOST_V1 */
