/* Runs a function in a forked child and brings its output back through a pipe. Used where
 * a vendor library may crash or hang (hiprtc 5.2 segfaults on some targets; a driver may
 * wedge): the crash becomes an error message here and fdtune keeps going. */
#include "fdt_common.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CHILD_OK = 1, CHILD_FAIL = 2 };

static void describe_exit(fdt_err *e, const char *what, int status)
{
    if (WIFSIGNALED(status))
        fdt_err_set(e, "%s: crashed (signal %d, %s)", what, WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status))
        fdt_err_set(e, "%s: child exited with status %d without a result", what,
                    WEXITSTATUS(status));
    else
        fdt_err_set(e, "%s: child ended abnormally", what);
}

int fdt_run_in_child(const char *what, fdt_child_fn fn, void *arg, int timeout_ms,
                     char **result, size_t *result_len, fdt_err *e)
{
    *result = NULL;
    if (result_len)
        *result_len = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return fdt_err_set(e, "%s: pipe: %s", what, strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return fdt_err_set(e, "%s: fork: %s", what, strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        fdt_sb out;
        fdt_sb_init(&out);
        int rc = fn(arg, &out);
        fdt_err we;
        int st = fdt_frame_write(fds[1], rc == 0 ? CHILD_OK : CHILD_FAIL, fdt_sb_str(&out),
                                 out.len, &we);
        _exit(st == 0 ? 0 : 3);
    }
    close(fds[1]);
    uint32_t type = 0;
    void *data = NULL;
    size_t n = 0;
    fdt_err re;
    int r = fdt_frame_read(fds[0], &type, &data, &n, timeout_ms, &re);
    close(fds[0]);
    if (r == 1) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return fdt_err_set(e, "%s: timed out after %.1f s (killed)", what, timeout_ms / 1000.0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (r < 0) {
        describe_exit(e, what, status);
        return -1;
    }
    if (type == CHILD_FAIL) {
        fdt_err_set(e, "%s: %s", what, data ? (char *)data : "failed");
        free(data);
        return -1;
    }
    *result = data ? data : calloc(1, 1);
    if (result_len)
        *result_len = n;
    return 0;
}
