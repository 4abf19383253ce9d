#{include cpu_prelude.c}
// Kernel family "loops" (the baseline): the loop nest a user writes by hand. The threads
// share the (k, j) rows of the grid (`parallel for collapse(2)`), each row is one SIMD loop
// over x, every output reads its neighbours straight from the arrays and the caches do what
// they can: the 2 R + 1 planes a z stencil spans are far apart, so on a large grid they come
// from the last-level cache or from memory.
//
// Template variables besides the prelude's (which this family renders with UJ = UK = 1,
// NT = 0, SPLIT = 0) and cpu_entry.c's:
//   PARAMS     the typed kernel's parameters, in fdt_gen_kernel_args' order: "float *restrict
//              out, const float *restrict in,\n    int jbeg, int jend, float sx, float sy,
//              float sz" (wave: prev and c2 after in; si, sj, sk, src last; with the grid as
//              arguments, "int nx, int ny, int nz, int dim_line, long long dim_slice" before
//              jbeg)
//   R          the radius ("4")
//   NX, NZ     interior points along x and z: constants ("256") or, with the grid as
//              arguments, "nx" and "nz"; the rows written are [jbeg, jend)
//   LINE, SLICE  strides in elements of the padded layout ("272", "71808"; or "dim_line",
//              "dim_slice")
//   THREADS    the num_threads clause: "" (the OpenMP default) or " num_threads(2)"
//   BIND       thread placement, proc_bind's argument: close | spread ("close")
//   SCHED      schedule's argument: "static", "static, 4", "dynamic, 1" ("static")
//   ORDER_KJ   1: k outer, j inner (rows in address order); 0: j outer, k inner
static void {{NS}}_kernel({{PARAMS}})
{
    enum { R = {{R}} };
    const int NX = {{NX}}, NZ = {{NZ}};
    const ptrdiff_t line = {{LINE}}, slice = {{SLICE}};
#{if DWAVE}
    {{BOX}}
#{endif}
#pragma omp parallel for collapse(2) schedule({{SCHED}}){{THREADS}} proc_bind({{BIND}})
#{if ORDER_KJ}
    for (int k = R; k < R + NZ; ++k)
        for (int j = jbeg; j < jend; ++j)
#{else}
    for (int j = jbeg; j < jend; ++j)
        for (int k = R; k < R + NZ; ++k)
#{endif}
#{if DWAVE}
            {{NS}}_span(out, in, prev, c2, si, sj, sk, src, b, line, slice, j, k, R, R + NX, 1,
                        1, {{SCALARS}});
#{else}
            {{NS}}_rows(out, in,
#{if WAVE}
                        prev, c2, si, sj, sk, src,
#{endif}
                        line, slice, j, k, R, R + NX, 1, 1, {{SCALARS}});
#{endif}
}

#{include cpu_entry.c}
