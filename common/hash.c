/* FNV-1a, 64 bits: names compile-cache entries and fingerprints configurations. Cache
 * entries also store their full key, so a collision costs a recompile, never a wrong hit. */
#include "fdt_common.h"

#include <string.h>

uint64_t fdt_hash64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t fdt_hash64_str(const char *s, uint64_t seed) { return fdt_hash64(s, strlen(s), seed); }
