/* The "what: why" error buffer shared by all modules, and the report of a broken invariant
 * (FDT_ASSERT). */
#include "fdt_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fdt_err_set(fdt_err *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int fdt_err_wrap(fdt_err *e, const char *fmt, ...)
{
    if (!e)
        return -1;
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t cap = sizeof e->msg - 1, wl = strlen(what), ol = strnlen(e->msg, cap);
    if (wl + 2 > cap)
        wl = cap - 2;
    if (wl + 2 + ol > cap)
        ol = cap - wl - 2;
    memmove(e->msg + wl + 2, e->msg, ol);
    memcpy(e->msg, what, wl);
    e->msg[wl] = ':';
    e->msg[wl + 1] = ' ';
    e->msg[wl + 2 + ol] = 0;
    return -1;
}

void fdt_assert_fail(const char *cond, const char *msg, const char *file, int line,
                     const char *func)
{
    fprintf(stderr, "fdtune: internal error: %s:%d: %s: assertion '%s' failed: %s\n", file, line,
            func, cond, msg);
    abort();
}
