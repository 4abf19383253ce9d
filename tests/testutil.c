/* Scratch directories, whole-file reads and runs of a program with both output streams
 * captured, for the tests (see testutil.h). */
#include "testutil.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int tu_mkdtemp(char *buf, size_t n, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, n, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    return mkdtemp(buf) ? 0 : -1;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int tu_rmtree(const char *dir)
{
    return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *tu_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

void tu_run(tu_result *r, const char *dir, char *const *argv)
{
    char out[600], err[600];
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    r->out = tu_slurp(out);
    r->err = tu_slurp(err);
    unlink(out);
    unlink(err);
}

void tu_result_free(tu_result *r)
{
    free(r->out);
    free(r->err);
}

void assert_has(const char *s, const char *part)
{
    if (!strstr(s, part))
        fail_msg("'%s' not found in:\n%.4000s", part, s);
}

void assert_lacks(const char *s, const char *part)
{
    if (strstr(s, part))
        fail_msg("'%s' unexpectedly found in:\n%.4000s", part, s);
}

void expect_status(const tu_result *r, int status)
{
    if (r->status != status)
        fail_msg("exit %d, want %d\nstdout:\n%.4000s\nstderr:\n%s", r->status, status, r->out,
                 r->err);
}
