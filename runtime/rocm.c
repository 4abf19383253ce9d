/* Which ROCm fdtune runs against, and its libraries. One ROCm is chosen per process: the first
 * place, in the order $ROCM_PATH/lib, $HIP_PATH/lib, the ROCm this build found
 * (FDTUNE_ROCM_ROOT/lib), /opt/rocm/lib and then the dynamic loader's search, that holds the
 * HIP runtime (libamdhip64) or hiprtc (libhiprtc), each tried under its versioned names newest
 * first (7, 6, 5) then the unversioned one. Both come from that directory and from no other:
 * hiprtc and the runtime are built together, and Debian's libamdhip64 5.2 on the loader path
 * must not stand beside a ROCm 6 hiprtc from /opt/rocm (5.2 does not know gfx942). comgr is
 * the one already loaded (hiprtc's or the runtime's own dependency), else the chosen
 * directory's, else the first place's that has one (Spack installs comgr apart). */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FDTUNE_ROCM_ROOT
#define FDTUNE_ROCM_ROOT "/opt/rocm"
#endif

static const char *const runtime_names[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                            "libamdhip64.so.5", "libamdhip64.so", NULL};
static const char *const hiprtc_names[] = {"libhiprtc.so.7", "libhiprtc.so.6", "libhiprtc.so.5",
                                           "libhiprtc.so", NULL};
static const char *const comgr_names[] = {"libamd_comgr.so.3", "libamd_comgr.so.2",
                                          "libamd_comgr.so", NULL};

#define NPLACES 5 /* four directories, then the loader's search */

typedef struct places {
    char dir[NPLACES - 1][PATH_MAX];
    const char *at[NPLACES];
} places;

static const char *const place_label[NPLACES] = {"$ROCM_PATH", "$HIP_PATH",
                                                 "the ROCm of this build", "/opt/rocm",
                                                 "the loader path"};

static void rocm_places(places *pl)
{
    const char *roots[NPLACES - 1] = {getenv("ROCM_PATH"), getenv("HIP_PATH"), FDTUNE_ROCM_ROOT,
                                      "/opt/rocm"};
    for (int i = 0; i < NPLACES - 1; i++) {
        pl->at[i] = NULL;
        if (roots[i] && *roots[i]) {
            snprintf(pl->dir[i], sizeof pl->dir[i], "%s/lib", roots[i]);
            pl->at[i] = pl->dir[i];
        }
    }
    pl->at[NPLACES - 1] = "";
}

static struct {
    int state;              /* 0 not looked yet, 1 chosen, -1 none found (why) */
    char libdir[PATH_MAX];  /* the chosen ROCm's library directory */
    const char *from;       /* which place it is */
    char why[1536];
} rocm;

/* The loader's search: the directory of the runtime (else hiprtc) it finds. */
static int pick_loader(places *pl, fdt_sb *why)
{
    const char *loader[] = {""};
    fdt_rt_dl d;
    if (fdt_rt_dl_open(loader, 1, runtime_names, &d, why) &&
        fdt_rt_dl_open(loader, 1, hiprtc_names, &d, why)) {
        fdt_sb_free(why);
        fdt_sb_init(why);
        fdt_rt_dl_open(pl->at, NPLACES, runtime_names, &d, why);
        fdt_sb_puts(why, "; ");
        fdt_rt_dl_open(pl->at, NPLACES, hiprtc_names, &d, why);
        return -1;
    }
    char *slash = strrchr(d.path, '/');
    if (!d.path[0] || !slash)
        return -1;
    *slash = 0;
    snprintf(rocm.libdir, sizeof rocm.libdir, "%s", d.path);
    return 0; /* the handle stays open: opening the file by path again gives it back */
}

static int pick(fdt_err *e)
{
    if (rocm.state == 0) {
        places pl;
        rocm_places(&pl);
        rocm.state = -1;
        for (int i = 0; i < NPLACES - 1 && rocm.state < 0; i++)
            if (pl.at[i] && (fdt_rt_dl_has(pl.at[i], runtime_names) ||
                             fdt_rt_dl_has(pl.at[i], hiprtc_names))) {
                snprintf(rocm.libdir, sizeof rocm.libdir, "%s", pl.at[i]);
                rocm.from = place_label[i];
                rocm.state = 1;
            }
        fdt_sb why;
        fdt_sb_init(&why);
        if (rocm.state < 0 && pick_loader(&pl, &why) == 0) {
            rocm.from = place_label[NPLACES - 1];
            rocm.state = 1;
        }
        snprintf(rocm.why, sizeof rocm.why, "%s", fdt_sb_str(&why));
        fdt_sb_free(&why);
    }
    if (rocm.state < 0)
        return fdt_err_set(e, "no ROCm found (%s)", rocm.why);
    return 0;
}

int fdt_rt_rocm_libdir(char *buf, size_t n, const char **from, fdt_err *e)
{
    if (pick(e))
        return -1;
    snprintf(buf, n, "%s", rocm.libdir);
    if (from)
        *from = rocm.from;
    return 0;
}

int fdt_rt_rocm_open(fdt_rt_rocm_lib which, fdt_rt_dl *out, fdt_err *e)
{
    memset(out, 0, sizeof *out);
    const char *const *names = which == FDT_ROCM_RUNTIME  ? runtime_names
                               : which == FDT_ROCM_HIPRTC ? hiprtc_names
                                                          : comgr_names;
    if (which == FDT_ROCM_COMGR && fdt_rt_dl_loaded(comgr_names, out) == 0)
        return 0;
    fdt_err pe;
    int have = pick(&pe) == 0;
    fdt_sb why;
    fdt_sb_init(&why);
    int rc = -1;
    if (have) {
        const char *dir[] = {rocm.libdir};
        rc = fdt_rt_dl_open(dir, 1, names, out, &why);
    }
    if (rc && which == FDT_ROCM_COMGR) {
        places pl;
        rocm_places(&pl);
        fdt_sb_puts(&why, have ? "; " : "");
        rc = fdt_rt_dl_open(pl.at, NPLACES, names, out, &why);
    }
    if (rc && which != FDT_ROCM_COMGR)
        rc = have ? fdt_err_set(e, "%s, the ROCm found first (at %s); fdtune takes the HIP "
                                   "runtime and hiprtc from one ROCm only",
                                fdt_sb_str(&why), rocm.from)
                  : fdt_err_set(e, "%s", pe.msg);
    else if (rc)
        rc = fdt_err_set(e, "%s", fdt_sb_str(&why));
    fdt_sb_free(&why);
    return rc;
}
