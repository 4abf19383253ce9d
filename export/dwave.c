/* The parts of an exported header that only the damped wave step (dwave) has, which the GPU
 * part (header.c) and the CPU part (cpu.c) both write: the damping table and the profile
 * function that fills the eta array the kernels with eta=array read, and the deployment of
 * each variant (complete, inout or sides, with the block extents its hole is aligned to),
 * which the launchers walk box by box through fdtuned_deploy_boxes (portable/, copied into
 * the header). The values come from the generator (fdt_absorb_damping, fdt_gen_deploy_ext),
 * so the header launches what fdtune measured. */
#include "exp_internal.h"

#include <stdio.h>

int fdt_exp_is_dwave(const fdt_exp_family *f) { return f->op == FDT_OP_DWAVE; }

/* The family's problem on a grid that holds its layer (the grid plays no other part). */
static fdt_problem layer_problem(const fdt_exp_family *f)
{
    int64_t n = 2 * (int64_t)f->absorb_w + 1;
    fdt_problem p = {f->op, f->R, f->prec, n, n, n, f->absorb_w, f->absorb_s};
    return p;
}

void fdt_exp_dwave_profile(fdt_sb *b, const fdt_exp_family *f, const char *T)
{
    const fdt_problem p = layer_problem(f);
    const int W = f->absorb_w;
    fdt_sb_printf(b, "\n/* The damping of %s at distance d = 0..W into the layer (W=%d, S=%g): "
                     "S (d/W)^2. */\nstatic const %s fdtuned_%s_damping[%d] = {",
                  f->name, W, f->absorb_s, T, f->name, W + 1);
    for (int d = 0; d <= W; d++) /* x = W - d lies at distance d from the low face */
        fdt_sb_printf(b, "%s%s(%s)%.17g", d ? "," : "", d % 4 ? " " : "\n    ", T,
                      d ? fdt_absorb_damping(&p, 0, W - d) : 0.0);
    fdt_sb_printf(b,
                  "};\n\n"
                  "/* Fills the eta array the %s launchers read: nx + ny + nz values, the damping "
                  "along x\n * (eta[0..nx)), y (eta[nx..nx+ny)) and z, each 0 outside the layer "
                  "(fdtune's\n * fdt_absorb_profile). */\n"
                  "static inline void fdtuned_%s_profile(int nx, int ny, int nz, %s *eta)\n{\n"
                  "    const int n[3] = {nx, ny, nz}, W = %d;\n"
                  "    int a, x, at = 0;\n"
                  "    for (a = 0; a < 3; at += n[a], a++)\n"
                  "        for (x = 0; x < n[a]; x++)\n"
                  "            eta[at + x] = fdtuned_%s_damping[x < W ? W - x\n"
                  "                                             : x > n[a] - 1 - W ? "
                  "x - (n[a] - 1 - W) : 0];\n}\n",
                  f->name, f->name, T, W, f->name);
}

void fdt_exp_dwave_boxes(fdt_sb *b, const fdt_exp_family *f)
{
    const int nv = fdt_exp_family_nvariants(f);
    fdt_gen_target t = {f->cpu ? FDT_DIALECT_C : FDT_DIALECT_HIP};
    fdt_sb dep, ext;
    fdt_sb_init(&dep);
    fdt_sb_init(&ext);
    for (int v = 0; v < nv; v++) {
        const fdt_config *c = v == 0 ? &f->fallback : &f->tuned[(v - 1) / 2].cfg;
        long long e3[3];
        fdt_gen_deploy_ext(&t, c, e3);
        fdt_sb_printf(&dep, "%s%d", v ? ", " : "", c->deploy);
        fdt_sb_printf(&ext, "%s{%lld, %lld, %lld}", v ? ", " : "", e3[0], e3[1], e3[2]);
    }
    fdt_sb_printf(b,
                  "\n/* The boxes of variant `variant`'s deployment (0 complete, 1 inout, 2 "
                  "sides) on an\n * nx x ny x nz grid, each with the variant's geometry on its "
                  "extents: how many, or -1\n * when the variant cannot run the grid or one of "
                  "its boxes. */\n"
                  "static inline int fdtuned_%s_boxes(int variant, int nx, int ny, int nz, "
                  "fdtuned_box *box,\n"
                  "                                   fdtuned_geometry *geo)\n{\n"
                  "    static const int deploy[%d] = {%s};\n"
                  "    static const long long ext[%d][3] = {%s};\n"
                  "    const long long n[3] = {nx, ny, nz};\n"
                  "    int nbox, i;\n"
                  "    if (variant < 0 || variant >= %d ||\n"
                  "        !fdtuned_usable(&fdtuned_%s_variants[variant], nx, ny, nz))\n"
                  "        return -1;\n"
                  "    nbox = fdtuned_deploy_boxes(deploy[variant], n, %d, ext[variant], box);\n"
                  "    for (i = 0; i < nbox; i++)\n"
                  "        if (fdtuned_variant_geometry(&fdtuned_%s_variants[variant], "
                  "box[i].n[0], box[i].n[1],\n"
                  "                                     box[i].n[2], &geo[i]) != 0)\n"
                  "            return -1;\n"
                  "    return nbox;\n}\n",
                  f->name, nv, fdt_sb_str(&dep), nv, fdt_sb_str(&ext), nv, f->name,
                  f->absorb_w, f->name);
    fdt_sb_free(&dep);
    fdt_sb_free(&ext);
}

void fdt_exp_dwave_box_locals(fdt_sb *b, const char *T, const char *indent)
{
    fdt_sb_printf(b,
                  "%sconst fdtuned_box *B = &box[i];\n"
                  "%sconst long long org = lay.offset + B->g[0] + B->g[1] * lay.line + "
                  "B->g[2] * lay.slice;\n"
                  "%s%s *o = p_next + org;\n"
                  "%sconst %s *x = p + org, *xp = p_prev + org, *xc = c2 + org;\n"
                  "%sint bnx = (int)B->n[0], bny = (int)B->n[1], bnz = (int)B->n[2];\n"
                  "%sint gx = (int)B->g[0], gy = (int)B->g[1], gz = (int)B->g[2];\n"
                  "%sint hx0 = (int)B->hole[0], hx1 = (int)B->hole[1], hy0 = (int)B->hole[2];\n"
                  "%sint hy1 = (int)B->hole[3], hz0 = (int)B->hole[4], hz1 = (int)B->hole[5];\n",
                  indent, indent, indent, T, indent, T, indent, indent, indent, indent);
}
