/* A growable string used for generated source, logs and serialised messages. Allocation
 * failure is sticky rather than fatal so that callers check once at the end. */
#include "fdt_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fdt_sb_init(fdt_sb *b) { memset(b, 0, sizeof *b); }

void fdt_sb_free(fdt_sb *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

static int reserve(fdt_sb *b, size_t extra)
{
    FDT_ASSERT(b->cap == 0 ? b->len == 0 && !b->s : b->len < b->cap && b->s[b->len] == 0,
               "a string buffer holds len bytes and a NUL within cap");
    if (b->oom)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return -1;
    }
    b->s = s;
    b->cap = cap;
    return 0;
}

void fdt_sb_putn(fdt_sb *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}

void fdt_sb_puts(fdt_sb *b, const char *s) { fdt_sb_putn(b, s, strlen(s)); }

void fdt_sb_vprintf(fdt_sb *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n < 0 || reserve(b, (size_t)n))
        return;
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void fdt_sb_printf(fdt_sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fdt_sb_vprintf(b, fmt, ap);
    va_end(ap);
}

const char *fdt_sb_str(const fdt_sb *b) { return b->s ? b->s : ""; }

char *fdt_sb_take(fdt_sb *b)
{
    char *s = b->s;
    if (!s)
        s = calloc(1, 1);
    memset(b, 0, sizeof *b);
    return s;
}

char *fdt_sb_vformat(const char *fmt, va_list ap)
{
    fdt_sb b;
    fdt_sb_init(&b);
    fdt_sb_vprintf(&b, fmt, ap);
    if (b.oom) {
        fdt_sb_free(&b);
        return NULL;
    }
    return fdt_sb_take(&b);
}

char *fdt_sb_format(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = fdt_sb_vformat(fmt, ap);
    va_end(ap);
    return s;
}
