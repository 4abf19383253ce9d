/* Length-prefixed messages over a descriptor: the parent and its compile children and GPU
 * workers talk this way. Reads honour a deadline so that a hung peer is noticed. */
#include "fdt_common.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FRAME_MAX ((size_t)1 << 31)

static int write_all(int fd, const void *data, size_t n, fdt_err *e)
{
    const char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return fdt_err_set(e, "write: %s", strerror(errno));
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int fdt_frame_write(int fd, uint32_t type, const void *data, size_t n, fdt_err *e)
{
    if (n >= FRAME_MAX)
        return fdt_err_set(e, "message of %zu bytes is too large", n);
    uint32_t hdr[2] = {type, (uint32_t)n};
    if (write_all(fd, hdr, sizeof hdr, e))
        return -1;
    return n ? write_all(fd, data, n, e) : 0;
}

/* Returns 0, 1 on timeout, -1 on error/EOF. */
static int read_all(int fd, void *data, size_t n, double deadline, fdt_err *e)
{
    char *p = data;
    while (n) {
        if (deadline > 0) {
            double left = deadline - fdt_now();
            if (left <= 0)
                return 1;
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            int r = poll(&pf, 1, (int)(left * 1000.0) + 1);
            if (r < 0) {
                if (errno == EINTR)
                    continue;
                return fdt_err_set(e, "poll: %s", strerror(errno));
            }
            if (r == 0)
                return 1;
        }
        ssize_t got = read(fd, p, n);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return fdt_err_set(e, "read: %s", strerror(errno));
        }
        if (got == 0)
            return fdt_err_set(e, "peer closed the connection");
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

int fdt_frame_read(int fd, uint32_t *type, void **data, size_t *n, int timeout_ms, fdt_err *e)
{
    *data = NULL;
    *n = 0;
    double deadline = timeout_ms < 0 ? 0 : fdt_now() + timeout_ms / 1000.0;
    uint32_t hdr[2];
    int r = read_all(fd, hdr, sizeof hdr, deadline, e);
    if (r)
        return r;
    *type = hdr[0];
    if (hdr[1] == 0)
        return 0;
    char *buf = malloc((size_t)hdr[1] + 1);
    if (!buf)
        return fdt_err_set(e, "out of memory for a %u-byte message", hdr[1]);
    r = read_all(fd, buf, hdr[1], deadline, e);
    if (r) {
        free(buf);
        return r;
    }
    buf[hdr[1]] = 0; /* convenient for text payloads */
    *data = buf;
    *n = hdr[1];
    return 0;
}
