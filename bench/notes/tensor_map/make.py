#!/usr/bin/env python3
# Issue 31's tensor-map experiment (a record, not the product): the stream family's bulk fill
# (bulk=1) with its row copies replaced by one cp.async.bulk.tensor.3d per plane (thread 0, a
# box of TX x TY values from a tensor map passed as a __grid_constant__ parameter, completing
# on the slot's full barrier), the ring's slots padded to 128 bytes (TYP rows), written beside
# fdtune's own kernels (bulk=0) into one CUDA file for harness.cu. Usage, with fdtune built:
#   python3 make.py build/fdtune OUTDIR && cd OUTDIR && cp .../harness.cu . &&
#   nvcc -std=c++17 -O3 -arch=sm_90 -diag-suppress 177,550 -o harness harness.cu -lcuda
# h200.txt is what ./harness printed on the H200 (2026-11-29).
import os, re, subprocess, sys
FD, OUTDIR = sys.argv[1], sys.argv[2]
L8 = "align=32,bx=32,by=16,lb=512,lds=3,nw=512,pf=4,tile=2,vec=2"
cases = [  # (group, op, R, prec, n, config, tensor): the group's first is its bit reference
 (0, "lap", 4, "f32", 512, "align=32,by=8,l2pf=256,lb=512,lds=3,nw=128,pf=4,tile=4,vec=2", 0),
 (0, "lap", 4, "f32", 512, "align=32,by=8,lb=512,lds=3,nw=128,pf=4,tile=4,vec=2", 1),
 (0, "lap", 4, "f32", 512, "align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2", 1),
 (0, "lap", 4, "f32", 512, "align=32,bx=64,by=4,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2", 1),
 (0, "lap", 4, "f32", 512, "align=32,bx=32,by=16,lb=512,lds=3,nw=128,pf=4,tile=2,vec=2", 1),
 (0, "lap", 4, "f32", 512, "align=32,bx=32,by=16,lb=512,lds=3,nw=512,pf=3,tile=2,vec=2", 1),
 (1, "lap", 8, "f32", 512, "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,mbar=1,nw=512,pf=4,tile=2,vec=2", 0),
 (1, "lap", 8, "f32", 512, "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,mbar=1,nw=128,pf=4,tile=2,vec=2", 0),
 (1, "lap", 8, "f32", 512, L8, 1),
 (1, "lap", 8, "f32", 512, L8.replace("pf=4", "pf=3"), 1),
 (1, "lap", 8, "f32", 512, L8.replace("pf=4", "pf=6"), 1),
 (1, "lap", 8, "f32", 512, L8.replace("nw=512", "nw=128"), 1),
 (1, "lap", 8, "f32", 512, "align=32,bx=64,by=8,lb=512,lds=3,nw=512,pf=4,tile=2,vec=2", 1),
 (1, "lap", 8, "f32", 512, "align=32,bx=32,by=8,lb=256,lds=3,nw=512,pf=4,tile=1,vec=4", 1),
 (1, "lap", 8, "f32", 512, "align=32,bx=64,by=8,lb=512,lds=3,nw=512,pf=4,tile=4,vec=1", 1),
 (1, "lap", 8, "f32", 512, "align=32,bx=32,by=8,lb=256,lds=3,nw=512,pf=4,tile=2,vec=2", 1),
 (2, "lap", 6, "f64", 512, "align=32,bx=16,by=16,lb=256,lds=3,mbar=1,nw=512,pf=5,tile=2,vec=2", 0),
 (2, "lap", 6, "f64", 512, "align=32,bx=16,by=16,lb=256,lds=3,nw=512,pf=5,tile=2,vec=2", 1),
 (2, "lap", 6, "f64", 512, "align=32,bx=32,by=8,lb=256,lds=3,nw=512,pf=4,tile=2,vec=2", 1),
 (2, "lap", 6, "f64", 512, "align=32,bx=32,by=4,lb=128,lds=3,nw=512,pf=4,tile=2,vec=2", 1),
 (3, "lap", 5, "f64", 512, "align=32,bx=32,by=8,lb=256,lds=3,mbar=1,nw=512,pf=4,tile=2,vec=2", 0),
 (3, "lap", 5, "f64", 512, "align=32,bx=32,by=8,lb=256,lds=3,nw=512,pf=4,tile=2,vec=2", 1),
 (4, "lap", 8, "f64", 512, "align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=4,tile=2,vec=2", 0),
 (4, "lap", 8, "f64", 512, "align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=4,tile=2,vec=2", 1),
 (5, "lap", 8, "f32", 1024, "align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,mbar=1,nw=512,pf=4,tile=2,vec=2", 0),
 (5, "lap", 8, "f32", 1024, L8, 1),
 (6, "lap", 4, "f32", 1024, "align=32,bx=128,l2pf=256,lb=512,lds=3,nw=256,pf=4,tile=4,vec=2", 0),
 (6, "lap", 4, "f32", 1024, "align=32,bx=32,by=16,lb=512,lds=3,nw=256,pf=4,tile=2,vec=2", 1),
 (6, "lap", 4, "f32", 1024, "align=32,by=8,lb=512,lds=3,nw=256,pf=4,tile=4,vec=2", 1),
]
srcs, main = [], []
FILL = re.compile(r"    auto fill = \[&\]\(int m, int rs, int ws, unsigned bar\) \{.*?\n    \};\n", re.S)
TFILL = """    auto fill = [&](int m, int rs, int ws, unsigned bar) {
        (void)ws;
        if (tid == 0) {
            slot_bar_arrive_tx(bar, (unsigned)(TX * TY * sizeof(real)));
            asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3, %4}], [%5];"
                         :: "r"((unsigned)__cvta_generic_to_shared(&ring[rs][0][0])),
                            "l"((unsigned long long)&tm), "r"(iblk - HX + tsft), "r"(jblk - RY),
                            "r"(k0 - RZ + m), "r"(bar) : "memory");
        }
    };
"""
for vi, (ci, op, R, prec, n, cfg, tens) in enumerate(cases):
    if True:
        v = "tensor" if tens else "plain"
        extra = ",mbar=1,bulk=1" if tens else ""
        if tens and "mbar=1" in cfg: cfg = cfg.replace(",mbar=1", "")
        src = subprocess.run([FD, "gen", "--op", op, "--R", str(R), "--precision", prec,
                              "--grid", f"{n}^3", "--config", cfg + extra],
                             capture_output=True, text=True, check=True).stdout
        src = src.replace("#include <hip/hip_runtime.h>", "").replace("#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900) || defined(FDT_HOST_ASYNC)", "#if 1").replace("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800", "#if 1")
        name = re.search(r'extern "C" __global__ void (?:__launch_bounds__\(\d+\)\s*)?(\w+)\(', src).group(1)
        ns = re.search(r"namespace (\w+) \{", src).group(1)
        new = f"k{vi}"
        src = src.replace(ns, new + "_ns").replace(name, new)
        if v == "tensor":
            src, k = FILL.subn(TFILL, src)
            assert k == 1, "fill not found"
            src = src.replace("real (*const ring)[TY][TX] = reinterpret_cast<real (*)[TY][TX]>", "real (*const ring)[TYP][TX] = reinterpret_cast<real (*)[TYP][TX]>")
            src, k = re.subn(r"constexpr int BARS_AT = \d+;", "constexpr int TYP = [] { int t = TY; while (t * TX * (int)sizeof(real) % 128) ++t; return t; }();\nconstexpr int BARS_AT = (S * TYP * TX * (int)sizeof(real) + 7) / 8 * 8;", src)
            assert k == 1
            src = re.sub(r"(float|double) sz\)", r"\1 sz, const __grid_constant__ fdt_tmap tm, int tsft)", src, count=1)
            src = src.replace('"l"((unsigned long long)&tm)', '"l"((unsigned long long)&tm)')
        src = "\n".join(l for l in src.split("\n") if not l.startswith("#error"))
        srcs.append(src)
        es = 4 if prec == "f32" else 8
        T = "float" if es == 4 else "double"
        main.append(f'  run_case<{T}>({ci}, "{op} R={R} {prec} {n}^3 {v:6s} {cfg}{extra}", {n}, {R}, '
                    f'(void*){new}, {new}_ns::BX, {new}_ns::BY, {new}_ns::VEC, {new}_ns::TILE, {new}_ns::NW, '
                    f'{new}_ns::TX, {new}_ns::TY, {new}_ns::{"TYP" if v=="tensor" else "TY"}, {"1" if v=="tensor" else "0"}, {vi});')
open(os.path.join(OUTDIR, "kernels.cuh"), "w").write("struct alignas(64) fdt_tmap { unsigned long long v[16]; };\n" +
    "#define __builtin_nontemporal_store(value, ptr) __stcs((ptr), (value))\n" +
    "#define __builtin_nontemporal_load(ptr) __ldcs(ptr)\n" + "\n".join(srcs))
open(os.path.join(OUTDIR, "cases.inc"), "w").write("\n".join(main) + "\n")
