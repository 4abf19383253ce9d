#!/usr/bin/env python3
"""What the compilers' options cost: each kernel source in --kernels compiled with today's
options (runtime/cuda.c, hip.c, amd_clang.c, cpu.c) and with candidate variants, --reps times
(variants interleaved within each repetition, so that a burst of load hits all alike), the
median wall time per kernel, and whether the emitted code is the same as today's.

NVRTC and hiprtc are called through ctypes in a child forked per compile from this process,
which has the library loaded (as fdtune's compile pool calls them, with the same in-memory
hip/hip_runtime.h from templates/); clang and cc run as programs (as fdtune runs them). "Same code" compares the ELF sections of the output byte for byte: every section
except those that carry no code (.debug*, .nv_debug*, .comment, the symbol and string tables,
the cubin's tool notes .note.nv.tkinfo/.note.nv.cuinfo, the GNU build id); the code object's
.note (AMD kernel metadata: VGPRs, SGPRs, LDS) and the cubin's .nv.info* (registers, params)
are compared. hiprtc's offload bundle is unbundled first. For the CPU's shared object, whose
layout a different linker moves, the instructions are also compared with addresses normalised
(objdump -d). Used by bench/compile_options.sh, which writes bench/compile_options.txt."""
import argparse
import ctypes
import os
import pickle
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TPL = os.path.join(ROOT, "templates")

# Today's options, as runtime/*.c pass them (the target option comes first, added per arch).
NVRTC_TODAY = ["-std=c++17", "--ptxas-options=-v", "-lineinfo", "--diag-suppress=177"]
HIPRTC_TODAY = ["-O3", "-std=c++17"]
CLANG_TODAY = ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib",
               "-nogpuinc", "-nostdinc", "-O3", "-std=c++17", "-mcode-object-version=5"]
CC_TODAY = ["-O3", "-march=native", "-fopenmp", "-fPIC", "-shared"]


TIMED_ONLY = False


def without(opts, drop):
    return [o for o in opts if o not in drop]


def today_and(today, *added, ref=()):
    """(label, options, note) rows: today's options twice (the second timing is the A/A
    noise), then today's plus each option list of added, then of ref ("ref" in the note:
    known to change code, measured as a reference). A row's label names what it adds."""
    rows = [("today", today, ""), ("today (again: A/A noise)", today, "")]
    return rows + [("+ " + " ".join(o), today + o, "ref" if o in ref else "")
                   for o in list(added) + list(ref)]


NVRTC_VARIANTS = today_and(
    NVRTC_TODAY, ["-minimal"], ["-no-source-include"], ["--split-compile=0"], ["-pch"],
    ["--Ofast-compile=min"], ref=(["--Ofast-compile=max"], ["--extra-device-vectorization"]))
# what today's NVRTC options would lose, between the A/A row and the additions
NVRTC_VARIANTS[2:2] = [
    ("-lineinfo dropped", without(NVRTC_TODAY, ["-lineinfo"]), ""),
    ("--ptxas-options=-v dropped", without(NVRTC_TODAY, ["--ptxas-options=-v"]),
     "fdtune parses ptxas -v (registers, spills, smem)"),
    ("both dropped", without(NVRTC_TODAY, ["-lineinfo", "--ptxas-options=-v"]), ""),
]
HIPRTC_VARIANTS = today_and(HIPRTC_TODAY, ["-fno-gpu-rdc"],
                            ["-Xclang", "-disable-llvm-verifier"], ["-g0"],
                            ref=(["-fgpu-flush-denormals-to-zero"],))
CLANG_VARIANTS = today_and(CLANG_TODAY, ["-fno-gpu-rdc"], ["-Xclang", "-disable-llvm-verifier"],
                           ["-pipe"], ["-g0"], ["-fdiscard-value-names"],
                           ref=(["-fgpu-flush-denormals-to-zero"],))
CC_VARIANTS = today_and(CC_TODAY, ["-pipe"], ["-g0"], ["-fno-ident"], ["-fuse-ld=gold"],
                        ["-fuse-ld=lld"], ["-pipe", "-fuse-ld=lld"])

IGNORED = re.compile(r"^(\.debug|\.nv_debug|\.nv\.debug|\.rela?\.debug|\.rela?\.nv_debug|"
                     r"\.comment$|\.symtab$|\.strtab$|\.hash$|\.gnu\.hash$|"
                     r"\.shstrtab$|\.note\.nv\.tkinfo$|\.note\.nv\.cuinfo$|"
                     r"\.note\.gnu\.build-id$)")


# clang names a symbol after a hash of the command line (the compilation unit's id): data
CUID = re.compile(rb"__hip_cuid_[0-9a-f]+")


def elf_sections(blob):
    """{name: (executable, bytes)} of an ELF64 little-endian image (NOBITS: its size as text;
    clang's __hip_cuid_ symbol name normalised)."""
    if blob[:4] != b"\x7fELF" or blob[4] != 2:
        raise ValueError("not an ELF64 image")
    shoff, = struct.unpack_from("<Q", blob, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", blob, 0x3A)
    hdrs = []
    for i in range(shnum):
        name, typ, flags, _addr, off, size = struct.unpack_from("<IIQQQQ", blob,
                                                                shoff + i * shentsize)
        hdrs.append((name, typ, flags, off, size))
    stroff, strsize = hdrs[shstrndx][3], hdrs[shstrndx][4]
    names = blob[stroff:stroff + strsize]
    out = {}
    for name, typ, flags, off, size in hdrs[1:]:
        n = names[name:names.index(b"\0", name)].decode()
        data = (b"nobits %d" % size) if typ == 8 else blob[off:off + size]
        out[n] = (bool(flags & 4), CUID.sub(b"__hip_cuid_" + b"0" * 16, data))
    return out


def differing(a, b):
    """The compared sections that differ between images a and b: (code, other) names, code
    being the executable sections (the machine instructions)."""
    sa, sb = elf_sections(a), elf_sections(b)
    names = sorted(n for n in set(sa) | set(sb) if not IGNORED.match(n))
    diff = [n for n in names if sa.get(n) != sb.get(n)]
    code = [n for n in diff if (sa.get(n) or sb.get(n))[0]]
    return code, [n for n in diff if n not in code]


def unbundle(blob, arch):
    """The amdgcn code object for arch inside a clang offload bundle (else blob itself)."""
    magic = b"__CLANG_OFFLOAD_BUNDLE__"
    if not blob.startswith(magic):
        return blob
    n, = struct.unpack_from("<Q", blob, len(magic))
    p = len(magic) + 8
    for _ in range(n):
        off, size, idlen = struct.unpack_from("<QQQ", blob, p)
        ident = blob[p + 24:p + 24 + idlen].decode()
        p += 24 + idlen
        if ident.startswith("hip") and arch in ident:
            return blob[off:off + size]
    raise ValueError("no %s code object in the bundle" % arch)


def forked(fn, *args):
    """fn(*args) in a forked child, its result back through a pipe: fdtune compiles each kernel
    in a child forked from a process that has the library loaded (runtime/compile.c), so the
    compiler's per-process first-compile cost is every compile's."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = fn(*args)
        except Exception as ex:  # reported as the compile's error
            res = (0.0, None, repr(ex))
        with os.fdopen(w, "wb") as f:
            f.write(pickle.dumps(res))
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return pickle.loads(data) if data else (0.0, None, "the compile child died")


class Rtc:
    """NVRTC or hiprtc through ctypes: the same calls under the prefix `p` (nvrtc, hiprtc),
    the header fdtune passes as hip/hip_runtime.h, the target option (arch_opt + arch), the
    code getter (`code`: CUBIN, Code) and what is done to the code (post) and its log."""

    def __init__(self, lib, p, header, arch_opt, code, post, with_log):
        self.lib, self.p, self.arch_opt, self.code = ctypes.CDLL(lib), p, arch_opt, code
        self.post, self.with_log = post, with_log
        self.fn("GetErrorString").restype = ctypes.c_char_p
        self.hdr = open(os.path.join(TPL, header), "rb").read()

    def fn(self, name):
        return getattr(self.lib, self.p + name)

    def compile(self, src, arch, opts):
        return forked(self.compile_here, src, arch, opts)

    def compile_here(self, src, arch, opts):
        prog = ctypes.c_void_p()
        names = (ctypes.c_char_p * 1)(b"hip/hip_runtime.h")
        hdrs = (ctypes.c_char_p * 1)(self.hdr)
        allopts = [self.arch_opt + arch] + opts
        arr = (ctypes.c_char_p * len(allopts))(*[o.encode() for o in allopts])
        t0 = time.perf_counter()
        self.fn("CreateProgram")(ctypes.byref(prog), src, b"fdtune_kernel.hip", 1, hdrs, names)
        r = self.fn("CompileProgram")(prog, len(allopts), arr)
        out = None
        if r == 0:
            n = ctypes.c_size_t()
            self.fn("Get%sSize" % self.code)(prog, ctypes.byref(n))
            buf = ctypes.create_string_buffer(n.value)
            self.fn("Get" + self.code)(prog, buf)
            out = self.post(buf.raw, arch)
        dt = time.perf_counter() - t0
        err = None
        if r != 0:
            err = self.fn("GetErrorString")(r).decode()
        if r != 0 and self.with_log:
            ln = ctypes.c_size_t()
            self.fn("GetProgramLogSize")(prog, ctypes.byref(ln))
            lb = ctypes.create_string_buffer(ln.value + 1)
            self.fn("GetProgramLog")(prog, lb)
            err = "%s: %s" % (err, lb.value.decode(errors="replace").strip().splitlines()[:1])
        self.fn("DestroyProgram")(ctypes.byref(prog))
        return dt, out, err


class Nvrtc(Rtc):
    def __init__(self):
        super().__init__(os.environ.get("NVRTC", "/usr/local/cuda/lib64/libnvrtc.so"), "nvrtc",
                         "nvrtc_hip_runtime.h", "-arch=", "CUBIN", lambda b, a: b, True)
        mj, mn = ctypes.c_int(), ctypes.c_int()
        self.lib.nvrtcVersion(ctypes.byref(mj), ctypes.byref(mn))
        self.version = "NVRTC %d.%d" % (mj.value, mn.value)


class Hiprtc(Rtc):
    def __init__(self):
        super().__init__(os.environ.get("HIPRTC", "libamdhip64.so.5"), "hiprtc", "amd_device.h",
                         "--offload-arch=", "Code", unbundle, False)
        self.version = "hiprtc of " + os.path.realpath(
            "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5").rsplit("/", 1)[-1]


class Program:
    """clang (AMD, offline) or cc (CPU) run as a program on a file in a scratch directory."""

    def __init__(self, exe, kind, tmp):
        self.exe, self.kind, self.tmp = exe, kind, tmp
        v = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        self.version = "%s: %s" % (exe, v.splitlines()[0])
        if kind == "clang":
            os.makedirs(os.path.join(tmp, "hip"), exist_ok=True)
            with open(os.path.join(tmp, "hip", "hip_runtime.h"), "wb") as f:
                f.write(open(os.path.join(TPL, "amd_device.h"), "rb").read())

    def compile(self, src, arch, opts):
        ext = "hip" if self.kind == "clang" else "c"
        path = os.path.join(self.tmp, "fdtune_kernel." + ext)
        with open(path, "wb") as f:
            f.write(src)
        out = os.path.join(self.tmp, "out.bin")
        if os.path.exists(out):
            os.remove(out)
        if self.kind == "clang":
            bindir = os.path.dirname(os.path.realpath(shutil.which(self.exe)))
            argv = [self.exe] + opts + ["--offload-arch=" + arch, "-B" + bindir,
                                        "-I" + self.tmp, path, "-c", "-o", out]
        else:
            argv = [self.exe] + opts + ["-o", out, path]
        t0 = time.perf_counter()
        p = subprocess.run(argv, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if p.returncode:
            return dt, None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        return dt, open(out, "rb").read(), None


def cpu_insns(blob, tmp):
    """objdump -d of .text with addresses and raw bytes removed (layout-independent)."""
    path = os.path.join(tmp, "insns.so")
    with open(path, "wb") as f:
        f.write(blob)
    d = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", path],
                       capture_output=True, text=True).stdout
    lines = []
    for ln in d.splitlines()[3:]:
        ln = re.sub(r"^\s*[0-9a-f]+:\s*", "", ln)
        ln = re.sub(r"^[0-9a-f]+ <", "<", ln)
        ln = re.sub(r"\b[0-9a-f]+ <", "<", ln)
        ln = re.sub(r"-?0x[0-9a-f]+\(%rip\)", "X(%rip)", ln)
        lines.append(ln)
    return "\n".join(lines)


def candidate(images, key, note):
    """Whether a variant is still timed after the first repetition: not a reference and its
    code (executable sections) the same as today's on every kernel so far."""
    if note == "ref":
        return False
    base = images[("today", key[1])]
    return all(not differing(base[k], img)[0] for k, img in images[key].items())


def run(compiler, archs, kernels, variants, reps, timed_arch, log):
    """{(label, arch): {kernel: [times]}}, {(label, arch): {kernel: image}}, {(label, arch):
    error}, and the (arch, kernel, why) today's options cannot compile (left out there)."""
    times, images, errors, skipped = {}, {}, {}, []
    for arch in archs:
        # today's once first: what does not compile for arch today is left out for arch
        ok = []
        for name, src in kernels:
            _dt, _img, err = compiler.compile(src, arch, variants[0][1])
            if err:
                skipped.append((arch, name, err))
            else:
                ok.append((name, src))
        nrep = reps if arch == timed_arch else 1
        for rep in range(nrep):
            for name, src in ok:
                for label, opts, note in variants:
                    key = (label, arch)
                    if key in errors or (rep and not candidate(images, key, note)):
                        continue
                    dt, img, err = compiler.compile(src, arch, opts)
                    if err:
                        errors[key] = "%s: %s" % (name, err)
                        continue
                    times.setdefault(key, {}).setdefault(name, []).append(dt)
                    images.setdefault(key, {}).setdefault(name, img)
            log("  %s rep %d/%d done" % (arch, rep + 1, nrep))
    return times, images, errors, skipped


def table(title, compiler, archs, kernels, variants, reps, timed_arch, tmp, cpu, log):
    if TIMED_ONLY:
        archs = [timed_arch]
    log("%s: %s" % (title, compiler.version))
    times, images, errors, skipped = run(compiler, archs, kernels, variants, reps, timed_arch,
                                         log)
    rows = ["", "== %s (%s); timed on %s, %d reps; code compared on %s" %
            (title, compiler.version, timed_arch, reps, ", ".join(archs))]
    rows += ["   left out on %s (today's options do not compile it either): %s: %s" %
             (a, k, w[:90]) for a, k, w in skipped]
    rows.append("")
    hdr = "%-40s %8s %7s %6s %4s  %s" % ("options (vs today's)", "median_s", "saving",
                                         "noise", "reps", "code identical to today's "
                                         "(what differs)")
    rows += [hdr, "-" * len(hdr)]
    base = {k: statistics.median(v) for k, v in times[("today", timed_arch)].items()}
    for label, _opts, note in variants:
        key = (label, timed_arch)
        if key in errors:
            rows.append("%-40s %8s %7s %6s %4s  %s" % (label, "-", "-", "-", "-",
                                                       "not accepted: " + errors[key][:80]))
            continue
        med = {k: statistics.median(v) for k, v in times[key].items()}
        per_kernel = statistics.mean(med.values())
        saving = 1 - sum(med.values()) / sum(base.values())
        # noise: the largest (max-min)/median over the kernels' repetitions
        noise = max((max(v) - min(v)) / statistics.median(v) for v in times[key].values())
        diffs, meta = [], []
        for arch in archs:
            ka = (label, arch)
            if ka in errors:
                diffs.append("%s: not accepted" % arch)
                continue
            for name in images[("today", arch)]:
                a0, a1 = images[("today", arch)][name], images[ka][name]
                code, other = differing(a0, a1)
                if code and cpu and cpu_insns(a0, tmp) == cpu_insns(a1, tmp):
                    other, code = ["layout only: instructions same"] + code + other, []
                if code:
                    diffs.append("%s %s: code differs (%s)" % (arch, name, ",".join(code[:2])))
                elif other:
                    meta.append("%s %s: %s" % (arch, name, ",".join(other[:3])))
        total = sum(len(images[("today", arch)]) for arch in archs)
        if diffs:
            same = "NO (%d of %d; e.g. %s)" % (len(diffs), total, diffs[0])
        elif meta:
            same = "code yes, not the rest (%d of %d; e.g. %s)" % (len(meta), total, meta[0])
        else:
            same = "yes"
        if note:
            same += " [%s]" % ("reference: known to change code" if note == "ref" else note)
        nrep = min(len(v) for v in times[key].values())
        rows.append("%-40s %8.3f %+6.1f%% %5.0f%% %4d  %s" % (label, per_kernel, 100 * saving,
                                                              100 * noise, nrep, same))
    print("\n".join(rows), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", required=True, help="directory of NAME.hip and NAME.c sources")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="nvrtc,hiprtc,clang,cc")
    ap.add_argument("--variants", default="",
                    help="comma-separated substrings: only the variants whose label has one "
                         "(today's are always kept)")
    ap.add_argument("--names", default="", help="comma-separated kernel names to keep")
    ap.add_argument("--timed-only", action="store_true",
                    help="compare the code on the timed target only")
    a = ap.parse_args()
    pick = [p for p in a.variants.split(",") if p]
    keep = lambda vs: [v for v in vs if v[0].startswith("today") or not pick or
                       any(p in v[0] for p in pick)]
    global TIMED_ONLY, NVRTC_VARIANTS, HIPRTC_VARIANTS, CLANG_VARIANTS, CC_VARIANTS
    TIMED_ONLY = a.timed_only
    NVRTC_VARIANTS, HIPRTC_VARIANTS = keep(NVRTC_VARIANTS), keep(HIPRTC_VARIANTS)
    CLANG_VARIANTS, CC_VARIANTS = keep(CLANG_VARIANTS), keep(CC_VARIANTS)
    which = a.only.split(",")
    names = [n for n in a.names.split(",") if n]
    files = sorted(f for f in os.listdir(a.kernels)
                   if not names or f.rsplit(".", 1)[0] in names)
    hip = [(f[:-4], open(os.path.join(a.kernels, f), "rb").read()) for f in files
           if f.endswith(".hip")]
    c = [(f[:-2], open(os.path.join(a.kernels, f), "rb").read()) for f in files
         if f.endswith(".c")]
    log = lambda s: print(s, file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="fdtune-copts-") as tmp:
        if "nvrtc" in which:
            table("NVRTC (runtime/cuda.c)", Nvrtc(), ["sm_90", "sm_80"], hip,
                         NVRTC_VARIANTS, a.reps, "sm_90", tmp, False, log)
        if "hiprtc" in which:
            table("hiprtc (runtime/hip.c)", Hiprtc(), ["gfx90a"], hip, HIPRTC_VARIANTS,
                         a.reps, "gfx90a", tmp, False, log)
        if "clang" in which:
            table("offline clang (runtime/amd_clang.c)",
                         Program(os.environ.get("CLANG", "clang-19"), "clang", tmp),
                         ["gfx942", "gfx90a"], hip, CLANG_VARIANTS, a.reps, "gfx942", tmp,
                         False, log)
        if "cc" in which:
            table("CPU (runtime/cpu.c)", Program(os.environ.get("CC", "cc"), "cc", tmp),
                         ["native"], c, CC_VARIANTS, a.reps, "native", tmp, True, log)


if __name__ == "__main__":
    main()
