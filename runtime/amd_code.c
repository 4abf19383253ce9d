/* AMD code objects, whichever compiler made them (hiprtc, the offline clang): the resource
 * report from the kernel's metadata (the NT_AMDGPU_METADATA note, read through comgr's
 * metadata API, dlopen'ed like the rest of ROCm), and the code object inside the clang offload
 * bundle that newer hiprtc returns. */
#define __HIP_PLATFORM_AMD__ 1
#include "rt_internal.h"

#define FDT_RT_WHAT "hip"

#if FDTUNE_COMGR_SUBDIR
#include <amd_comgr/amd_comgr.h> /* ROCm >= 5.3 */
#else
#include <amd_comgr.h> /* ROCm <= 5.2, Debian 12 */
#endif
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *comgr_lib;
FDT_RT_DECL(amd_comgr_create_data);
FDT_RT_DECL(amd_comgr_set_data);
FDT_RT_DECL(amd_comgr_release_data);
FDT_RT_DECL(amd_comgr_get_data_metadata);
FDT_RT_DECL(amd_comgr_destroy_metadata);
FDT_RT_DECL(amd_comgr_metadata_lookup);
FDT_RT_DECL(amd_comgr_get_metadata_string);
FDT_RT_DECL(amd_comgr_get_metadata_list_size);
FDT_RT_DECL(amd_comgr_index_list_metadata);
FDT_RT_DECL(amd_comgr_get_version);

int fdt_rt_comgr_load(fdt_err *e)
{
    if (comgr_lib)
        return 0;
    fdt_rt_dl d;
    if (fdt_rt_rocm_open(FDT_ROCM_COMGR, &d, e))
        return fdt_err_wrap(e, "hip: comgr not found; it reports kernel resources: install "
                               "ROCm or Debian's libamd-comgr2");
    void *lib = d.lib;
    const char *libname = d.path;
    FDT_RT_SYM(lib, amd_comgr_create_data);
    FDT_RT_SYM(lib, amd_comgr_set_data);
    FDT_RT_SYM(lib, amd_comgr_release_data);
    FDT_RT_SYM(lib, amd_comgr_get_data_metadata);
    FDT_RT_SYM(lib, amd_comgr_destroy_metadata);
    FDT_RT_SYM(lib, amd_comgr_metadata_lookup);
    FDT_RT_SYM(lib, amd_comgr_get_metadata_string);
    FDT_RT_SYM(lib, amd_comgr_get_metadata_list_size);
    FDT_RT_SYM(lib, amd_comgr_index_list_metadata);
    *(void **)&p_amd_comgr_get_version = dlsym(lib, "amd_comgr_get_version"); /* comgr >= 1.8 */
    comgr_lib = lib;
    return 0;
}

int fdt_rt_comgr_file(char *path, size_t pn, char *version, size_t vn)
{
    if (!comgr_lib || fdt_rt_dl_path((void *)p_amd_comgr_create_data, path, pn))
        return -1;
    size_t major = 0, minor = 0;
    if (p_amd_comgr_get_version) {
        p_amd_comgr_get_version(&major, &minor);
        snprintf(version, vn, "comgr %zu.%zu", major, minor);
    } else {
        snprintf(version, vn, "comgr");
    }
    return 0;
}

int fdt_rt_comgr_root(char *buf, size_t n)
{
    char real[PATH_MAX], ver[32];
    if (fdt_rt_comgr_file(real, sizeof real, ver, sizeof ver))
        return -1;
    /* <root>/lib/libamd_comgr.so.N, <root>/lib64/..., <root>/lib/<multiarch>/...; the real
     * path, since /lib may be a link to /usr/lib */
    snprintf(buf, n, "%s", real);
    char *lib = strstr(buf, "/lib/");
    if (!lib)
        lib = strstr(buf, "/lib64/");
    if (!lib || lib == buf)
        return -1;
    *lib = 0;
    return 0;
}

int fdt_rt_amd_unbundle(const char *img, size_t n, const char **obj, size_t *objn)
{
    static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
    *obj = img;
    *objn = n;
    if (n < sizeof magic - 1 + 8 || memcmp(img, magic, sizeof magic - 1))
        return 0;
    size_t p = sizeof magic - 1;
    uint64_t count;
    memcpy(&count, img + p, 8);
    p += 8;
    for (uint64_t i = 0; i < count && p + 24 <= n; i++) {
        uint64_t off, size, idlen;
        memcpy(&off, img + p, 8);
        memcpy(&size, img + p + 8, 8);
        memcpy(&idlen, img + p + 16, 8);
        p += 24;
        if (p + idlen > n)
            return -1;
        if (memmem(img + p, idlen, "amdgcn", 6) && off + size <= n && size) {
            *obj = img + off;
            *objn = size;
            return 0;
        }
        p += idlen;
    }
    return -1;
}

static int md_string(amd_comgr_metadata_node_t node, char *buf, size_t n)
{
    size_t len = 0;
    if (p_amd_comgr_get_metadata_string(node, &len, NULL) || len == 0 || len > n)
        return -1;
    return p_amd_comgr_get_metadata_string(node, &len, buf) ? -1 : 0;
}

/* The integer under key in a kernel's map, -1 when absent (e.g. .agpr_count where the
 * target has no AGPRs). */
static int md_int(amd_comgr_metadata_node_t map, const char *key)
{
    amd_comgr_metadata_node_t v;
    if (p_amd_comgr_metadata_lookup(map, key, &v))
        return -1;
    char buf[64];
    int r = md_string(v, buf, sizeof buf) ? -1 : atoi(buf);
    p_amd_comgr_destroy_metadata(v);
    return r;
}

/* One kernel's map of the metadata (amdhsa.kernels[i]) into res. */
static void kernel_resources(amd_comgr_metadata_node_t k, fdt_rt_resources *res)
{
    res->registers = md_int(k, ".vgpr_count");
    res->sgprs = md_int(k, ".sgpr_count");
    res->agprs = md_int(k, ".agpr_count");
    res->scratch_bytes = md_int(k, ".private_segment_fixed_size");
    /* LLVM counts the 4-byte registers its VGPR spill stores write. They reach memory only
     * through the private segment: with none, every one went to an AGPR (gfx90a, gfx94x), a
     * register-to-register copy like an SGPR's spill to a VGPR lane, which costs no memory
     * traffic and is no spill in spill_bytes' sense. */
    int vs = md_int(k, ".vgpr_spill_count");
    res->spill_bytes = vs > 0 && res->scratch_bytes > 0 ? vs * 4 : 0;
    res->sgpr_spills = md_int(k, ".sgpr_spill_count");
    if (res->sgpr_spills < 0)
        res->sgpr_spills = 0;
    res->shared_bytes = md_int(k, ".group_segment_fixed_size");
    res->max_threads = md_int(k, ".max_flat_workgroup_size");
}

int fdt_rt_amd_resources(const char *obj, size_t n, const char *kernel, fdt_rt_resources *res,
                         fdt_err *e)
{
    if (fdt_rt_comgr_load(e))
        return -1;
    amd_comgr_data_t data;
    if (p_amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data))
        return fdt_err_set(e, "hip: comgr cannot take the code object");
    int found = 0, read = 0;
    amd_comgr_metadata_node_t md, kernels;
    if (!p_amd_comgr_set_data(data, n, obj) && !p_amd_comgr_get_data_metadata(data, &md)) {
        if (!p_amd_comgr_metadata_lookup(md, "amdhsa.kernels", &kernels)) {
            read = 1;
            size_t count = 0;
            p_amd_comgr_get_metadata_list_size(kernels, &count);
            for (size_t i = 0; i < count && !found; i++) {
                amd_comgr_metadata_node_t k, name;
                if (p_amd_comgr_index_list_metadata(kernels, i, &k))
                    continue;
                char nm[256] = "";
                if (!p_amd_comgr_metadata_lookup(k, ".name", &name)) {
                    md_string(name, nm, sizeof nm);
                    p_amd_comgr_destroy_metadata(name);
                }
                if (!strcmp(nm, kernel)) {
                    kernel_resources(k, res);
                    found = 1;
                }
                p_amd_comgr_destroy_metadata(k);
            }
            p_amd_comgr_destroy_metadata(kernels);
        }
        p_amd_comgr_destroy_metadata(md);
    }
    p_amd_comgr_release_data(data);
    if (!read)
        return fdt_err_set(e, "hip: no kernel metadata in the code object (%zu bytes)", n);
    if (!found || res->registers < 0)
        return fdt_err_set(e, "hip: kernel %s not found in the code object's metadata", kernel);
    return 0;
}
