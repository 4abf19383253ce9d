// The entry point (templates/cpu_entry.c, the last part of every CPU kernel family): it takes
// the arguments of the GPU kernel of the same name (fdt_gen_kernel_args), each passed by
// address as a GPU launch passes them (a pointer as its 8 bytes, an int as an int, a real as
// a REAL), copies them out in that order and calls the typed kernel above. The test-only
// faults fault=halo, oob and hang break it here (fault=coef is in d2, fault=plane in the
// rows).
//
// Template variables:
//   NAME       the entry point's name, a C identifier ("fdt_lap_r4_f32_1a2b3c4d")
//   UNPACK     per argument, its declaration and its copy from args ("    float *out;\n
//              __builtin_memcpy(&out, args[0], sizeof out);\n ...")
//   ARGS       the typed kernel's arguments ("out, in, jbeg, jend, sx, sy, sz")
//   FAULT_HALO, FAULT_OOB, FAULT_HANG  1 for that test-only fault, else 0
//   HALO_AT    the element of out's halo point (R, R, R - 1) ("3 * (ptrdiff_t)71808 + 4 *
//              (ptrdiff_t)272 + 4")
void {{NAME}}(void **args);
void {{NAME}}(void **args)
{
{{UNPACK}}
#{if FAULT_HANG}
    for (volatile int spin = 1; spin;)  // fault=hang: never returns (test only)
        ;
#{endif}
    {{NS}}_kernel({{ARGS}});
#{if FAULT_HALO}
    out[{{HALO_AT}}] = ({{REAL}})0;  // fault=halo: writes into the halo (test only)
#{endif}
#{if FAULT_OOB}
    *(volatile {{REAL}} *)(uintptr_t)64 = ({{REAL}})0;  // fault=oob: an illegal address (test only)
#{endif}
}
