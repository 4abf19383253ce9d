#include "fdt_gen.h"
#include "fdt_rt.h"
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    fdt_problem p = {FDT_OP_LAP, 4, FDT_F32, 64, 64, 64};
    fdt_config c; fdt_err e;
    if (argc > 1) { fdt_op_parse(argv[1], &p.op, &e); }
    if (fdt_config_parse(argc > 2 ? argv[2] : "", &c, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
    if (argc > 3) p.prec = strcmp(argv[3], "f64") ? FDT_F32 : FDT_F64;
    if (argc > 4) p.R = atoi(argv[4]);
    fdt_sb b; fdt_sb_init(&b);
    char name[96]; fdt_gen_kernel_name(&p, &c, name, sizeof name);
    if (fdt_gen_source(&p, &c, name, &b, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
    const char *archs[] = {"sm_90", "gfx90a"};
    for (int i = 0; i < 2; i++) {
        const fdt_rt_backend *be = fdt_rt_backend_for_arch(archs[i], &e);
        if (!be) { fprintf(stderr, "%s\n", e.msg); continue; }
        fdt_rt_code code;
        if (fdt_rt_compile(be, fdt_sb_str(&b), name, archs[i], 60000, &code, &e)) { fprintf(stderr, "FAIL %s: %s\n", archs[i], e.msg); continue; }
        printf("%s: %zu bytes regs=%d sgpr=%d spill=%d scratch=%d shared=%d cached=%d\n", archs[i], code.size, code.res.registers, code.res.sgprs, code.res.spill_bytes, code.res.scratch_bytes, code.res.shared_bytes, code.cached);
        fdt_rt_code_free(&code);
    }
    return 0;
}
