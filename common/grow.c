/* Growable arrays: query callbacks, enumerations and plans collect rows one at a time into
 * plain (pointer, count, capacity) arrays; this is the one place that makes room. */
#include "fdt_common.h"

#include <stdint.h>
#include <stdlib.h>

void *fdt_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
    FDT_ASSERT(size > 0 && first > 0 && n <= *cap, "arrays grow one element at a time");
    if (n < *cap)
        return v;
    size_t want = *cap ? 2 * *cap : first;
    if (want <= *cap || want > SIZE_MAX / size)
        return NULL;
    void *grown = realloc(v, want * size);
    if (grown)
        *cap = want;
    return grown;
}
