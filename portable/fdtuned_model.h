/* ---- fdtune portable: architectures and device models (plain C99 or C++11, no includes) --
 * When two GPUs count as one architecture and as one device model, the identity tuned
 * results are shared by. fdtune's device code (runtime/device.c), its database's nearest
 * ladder and its export use these functions; `fdtune export` copies this file verbatim into
 * every tuned header, whose selection uses them at run time.
 *
 * The base architecture is the name before any ':' ("gfx90a:sramecc+:xnack-" is gfx90a):
 * the features after it do not change what a kernel was tuned for. Its prefix says the
 * backend and vendor ("sm_": cuda, NVIDIA; "gfx": hip, AMD). A device model is (name, base
 * architecture, compute units): the memory a driver reports is not part of it (it varies
 * with ECC, reservations and driver versions on one model), while name and compute units
 * tell models apart (MIG slices report other names and SM counts). */
#ifndef FDTUNED_MODEL_V1
#define FDTUNED_MODEL_V1

/* Characters of arch before its first ':' (all of them when it has none). */
static inline int fdtuned_arch_base_len(const char *arch)
{
    int n = 0;
    while (arch && arch[n] && arch[n] != ':')
        n++;
    return n;
}

/* 1 when a and b have the same, non-empty base architecture. */
static inline int fdtuned_same_arch(const char *a, const char *b)
{
    int n = fdtuned_arch_base_len(a), i;
    if (!n || n != fdtuned_arch_base_len(b))
        return 0;
    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static inline int fdtuned_prefix_(const char *s, const char *prefix)
{
    while (*prefix)
        if (!s || *s++ != *prefix++)
            return 0;
    return 1;
}

/* The backend whose compiler targets arch: "cuda" for sm_*, "hip" for gfx*, "" otherwise. */
static inline const char *fdtuned_arch_backend(const char *arch)
{
    return fdtuned_prefix_(arch, "sm_") ? "cuda" : fdtuned_prefix_(arch, "gfx") ? "hip" : "";
}

/* The vendor of arch: "NVIDIA" for sm_*, "AMD" for gfx*, "" otherwise. */
static inline const char *fdtuned_arch_vendor(const char *arch)
{
    return fdtuned_prefix_(arch, "sm_") ? "NVIDIA" : fdtuned_prefix_(arch, "gfx") ? "AMD" : "";
}

/* 1 when two devices are one model: equal names, the same base architecture and equal
 * compute-unit counts. */
static inline int fdtuned_same_model(const char *name_a, const char *arch_a, int cus_a,
                                     const char *name_b, const char *arch_b, int cus_b)
{
    if (!name_a || !name_b || cus_a != cus_b || !fdtuned_same_arch(arch_a, arch_b))
        return 0;
    while (*name_a && *name_a == *name_b) {
        name_a++;
        name_b++;
    }
    return *name_a == *name_b;
}

#endif /* FDTUNED_MODEL_V1 */
