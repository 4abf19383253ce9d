/* Loading vendor libraries, one way for every backend: a library is looked for at places in
 * order (directories, and the dynamic loader's own search by bare name: LD_LIBRARY_PATH, the
 * cache, the system directories), at each place under its names newest first; the first file
 * that loads wins, and a file that exists but does not load is said in the message, like the
 * places and names tried. What was loaded is told by its real path (dladdr or the handle's
 * link map, through realpath), and the files a compiler is made of are summed up for the
 * compile cache's key by their real paths, sizes and modification times. */
#include "rt_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int fdt_rt_dl_path(const void *addr, char *buf, size_t n)
{
    Dl_info info;
    char real[PATH_MAX];
    if (!addr || !dladdr(addr, &info) || !info.dli_fname || !realpath(info.dli_fname, real))
        return -1;
    snprintf(buf, n, "%s", real);
    return 0;
}

/* The real path of the file behind a dlopen handle. */
static int handle_path(void *lib, char *buf, size_t n)
{
    struct link_map *lm = NULL;
    char real[PATH_MAX];
    if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) || !lm || !lm->l_name || !realpath(lm->l_name, real))
        return -1;
    snprintf(buf, n, "%s", real);
    return 0;
}

void fdt_rt_dl_file_version(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    const char *so = strstr(base ? base : path, ".so.");
    snprintf(buf, n, "%s", so ? so + 4 : "");
}

int fdt_rt_dl_has(const char *dir, const char *const *names)
{
    char path[PATH_MAX];
    for (int i = 0; dir && *dir && names[i]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (access(path, F_OK) == 0)
            return 1;
    }
    return 0;
}

/* Opens name at place ("" the loader's search); a failure worth telling goes to failures. */
static void *open_one(const char *place, const char *name, fdt_sb *failures)
{
    char path[PATH_MAX];
    if (*place) {
        snprintf(path, sizeof path, "%s/%s", place, name);
        if (access(path, F_OK) != 0)
            return NULL; /* not there: the summary says where it was looked for */
    } else {
        snprintf(path, sizeof path, "%s", name);
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        if (why && !(!*place && strstr(why, "No such file or directory")))
            fdt_sb_printf(failures, "; %s", why);
    }
    return lib;
}

/* 1 when places[p] already came earlier (ROCM_PATH may be /opt/rocm). */
static int seen(const char *const *places, int p)
{
    for (int q = 0; q < p; q++)
        if (places[q] && !strcmp(places[q], places[p]))
            return 1;
    return 0;
}

/* "a, b and c": the names, then where they were looked for, into why. */
static void summary(const char *const *places, int nplaces, const char *const *names,
                    fdt_sb *why)
{
    fdt_sb_puts(why, "no ");
    for (int i = 0; names[i]; i++)
        fdt_sb_printf(why, "%s%s", i ? (names[i + 1] ? ", " : " or ") : "", names[i]);
    int k = 0, loader = 0;
    for (int p = 0; p < nplaces; p++) {
        if (!places[p] || seen(places, p))
            continue;
        if (!*places[p]) {
            loader = 1;
            continue;
        }
        fdt_sb_printf(why, "%s%s", k++ ? ", " : " in ", places[p]);
    }
    if (loader)
        fdt_sb_puts(why, k ? " or on the loader path" : " on the loader path");
}

int fdt_rt_dl_open(const char *const *places, int nplaces, const char *const *names,
                   fdt_rt_dl *out, fdt_sb *why)
{
    fdt_sb failures;
    fdt_sb_init(&failures);
    memset(out, 0, sizeof *out);
    for (int p = 0; p < nplaces && !out->lib; p++) {
        if (!places[p] || seen(places, p))
            continue;
        for (int i = 0; names[i] && !out->lib; i++)
            out->lib = open_one(places[p], names[i], &failures);
    }
    if (out->lib) {
        if (handle_path(out->lib, out->path, sizeof out->path))
            out->path[0] = 0;
    } else {
        summary(places, nplaces, names, why);
        fdt_sb_puts(why, fdt_sb_str(&failures));
    }
    fdt_sb_free(&failures);
    return out->lib ? 0 : -1;
}

int fdt_rt_dl_loaded(const char *const *names, fdt_rt_dl *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; names[i] && !out->lib; i++)
        out->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (out->lib && handle_path(out->lib, out->path, sizeof out->path))
        out->path[0] = 0;
    return out->lib ? 0 : -1;
}

void fdt_rt_dl_files_id(fdt_sb *out, const char *const *paths, int n)
{
    uint64_t h = FDT_HASH_SEED;
    for (int i = 0; i < n; i++) {
        struct stat st;
        long long size = -1, mtime = -1;
        if (paths[i] && stat(paths[i], &st) == 0) {
            size = (long long)st.st_size;
            mtime = (long long)st.st_mtime;
        }
        char rec[PATH_MAX + 64];
        int len = snprintf(rec, sizeof rec, "%s|%lld|%lld;", paths[i] ? paths[i] : "", size,
                           mtime);
        h = fdt_hash64(rec, (size_t)len < sizeof rec ? (size_t)len : sizeof rec - 1, h);
    }
    fdt_sb_printf(out, "files %016llx", (unsigned long long)h);
}
