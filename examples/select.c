/* Which tuned variant, with which array layout, the exported header picks for a device and a
 * grid, with no GPU: the header's plain-C part (FDTUNED_SELECT_ONLY), as a build system or a
 * test on a login node would ask. For every exported operator prints
 *   OP: variant V (constant|runtime|fallback) config CONFIG tuned on DEVICE NXxNYxNZ, elems E
 * ("predicted for DEVICE" where the variant is fdtune's model's answer, nothing measured)
 * Usage: fdtune_select [DEVICE ARCH CUS NX NY NZ]
 * (default: "NVIDIA H100 80GB HBM3" sm_90 132 512 512 512). Exit 1 when no variant can run
 * the grid. */
#include "fdtuned.h"

#include <stdio.h>
#include <stdlib.h>

static const char *kind_name(int kind)
{
    return kind == FDTUNED_CONSTANT ? "constant" : kind == FDTUNED_RUNTIME ? "runtime" : "fallback";
}

int main(int argc, char **argv)
{
    const char *name = argc > 6 ? argv[1] : "NVIDIA H100 80GB HBM3";
    const char *arch = argc > 6 ? argv[2] : "sm_90";
    int cus = argc > 6 ? atoi(argv[3]) : 132;
    long nx = argc > 6 ? atol(argv[4]) : 512, ny = argc > 6 ? atol(argv[5]) : 512,
         nz = argc > 6 ? atol(argv[6]) : 512;
    int bad = 0;
#define SHOW(op, R, p, T)                                                                      \
    {                                                                                          \
        fdtuned_layout l;                                                                      \
        int v = fdtuned_##op##_r##R##_##p##_select(name, arch, cus, nx, ny, nz);               \
        if (v < 0 || fdtuned_##op##_r##R##_##p##_layout_for(name, arch, cus, nx, ny, nz, &l)) { \
            printf("%s: no variant can run %ldx%ldx%ld\n", #op "_r" #R "_" #p, nx, ny, nz);    \
            bad = 1;                                                                           \
        } else {                                                                               \
            const fdtuned_variant *x = &fdtuned_##op##_r##R##_##p##_variants[v];               \
            printf("%s: variant %d (%s) config %s %s %s %lldx%lldx%lld, elems %lld\n",        \
                   #op "_r" #R "_" #p, v, kind_name(x->kind), x->config,                       \
                   x->predicted ? "predicted for" : "tuned on", *x->device ? x->device : "-",  \
                   x->nx, x->ny, x->nz, l.elems);                                              \
        }                                                                                      \
    }
    FDTUNED_OPERATORS(SHOW)
    return bad;
}
