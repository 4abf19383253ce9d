#!/bin/sh
# The README's "Using the tuned kernels in your code" as a user follows it: its `fdtune export`
# line, run as written against the system database of the source tree (a fresh install: no
# database of the user's), and its program (the ```cpp block) compiled with the command lines
# its first comment gives:
#   - nvcc: compiled and linked exactly as written (`nvcc -x cu -arch=sm_90 main.hip -o main`),
#     then run; without a GPU the program must say that no GPU is visible (exit 3: the
#     layout helper's FDTUNED_NO_DEVICE), with one it must run the kernel (exit 0);
#   - hipcc: there is no hipcc here, so its clang in HIP mode for gfx90a, with the flags of the
#     README's line, makes the host and the device pass hipcc makes (Debian's ROCm headers; no
#     device link, which needs ROCm's device libraries): what this does not check is said.
# A compiler missing here is skipped and said; with neither, the test is skipped (77).
# Usage: test_readme.sh FDTUNE SOURCE_DIR
set -u
fdtune=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/testutil.sh"

# The section's fenced blocks: the export command (the plain block naming `fdtune export`)
# and the program (the cpp block).
python3 - "$src/README.md" "$tmp" <<'EOF' || { echo "FAIL: the README's snippets" >&2; exit 1; }
import re, sys
text = open(sys.argv[1]).read()
sec = text[text.index("### Using the tuned kernels in your code"):]
sec = sec[:re.search(r"\n##+ ", sec[4:]).start() + 4]
blocks = re.findall(r"```(\w*)\n(.*?)```", sec, re.S)
export = [b for lang, b in blocks if not lang and b.startswith("fdtune export ")]
program = [b for lang, b in blocks if lang == "cpp"]
if len(export) != 1 or len(program) != 1:
    sys.exit("expected one `fdtune export` block and one cpp block, found %d and %d"
             % (len(export), len(program)))
open(sys.argv[2] + "/export.sh", "w").write(export[0])
open(sys.argv[2] + "/main.hip", "w").write(program[0])
first = program[0].splitlines()[0]
hip = re.search(r"hipcc [^(]*?(?=\s+\(|$)", first)
nv = re.search(r"nvcc [^)]*", first)
if not hip or not nv:
    sys.exit("the program's first comment names no hipcc and nvcc command: " + first)
open(sys.argv[2] + "/hipcc.cmd", "w").write(hip.group(0).strip() + "\n")
open(sys.argv[2] + "/nvcc.cmd", "w").write(nv.group(0).strip() + "\n")
EOF
note() { echo "note: $*" >&2; }

# ---------------------------------------------------------------- the export, as written
cd "$tmp" || exit 1
export FDTUNE_SYSTEM_DB="$src/share/fdtune/system.db" FDTUNE_DB="$tmp/no-user.db"
export_cmd=$(cat export.sh)
# shellcheck disable=SC2086
if ! "$fdtune" ${export_cmd#fdtune } >export.out 2>export.err; then
    fail "README: '$export_cmd' failed: $(cat export.err)"
    finish
fi
[ -s fdtuned.h ] || fail "README: '$export_cmd' wrote no fdtuned.h"
[ ! -e "$tmp/no-user.db" ] || fail "README: the export created the user's database"

# ---------------------------------------------------------------- nvcc, as written
built=0
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ -x "$nvcc" ]; then
    cmd=$(sed "s|^nvcc |'$nvcc' |" nvcc.cmd)
    if ! sh -c "$cmd" >nvcc.log 2>&1; then
        fail "README: '$(cat nvcc.cmd)' does not build the README's program:"
        sed 's/^/    /' nvcc.log >&2
    else
        built=$((built + 1))
        rc=0
        ./main >run.out 2>run.err || rc=$?
        case $rc in
        0) expect_in "README program on a GPU" run.out "d2x: no error" ;;
        3) expect_in "README program without a GPU" run.err "no GPU is visible" ;;
        *) fail "README program: exit $rc (0 on a GPU, 3 without one): $(cat run.out run.err)" ;;
        esac
        note "the README's program builds with '$(cat nvcc.cmd)' and exits $rc here"
    fi
else
    note "no nvcc at $nvcc: the CUDA build of the README's program was not checked"
fi

# ---------------------------------------------------------------- hipcc, as its clang does it
clang=${HIP_CLANG:-clang++-16}
hip="$clang -x hip --offload-arch=gfx90a -nogpulib --rocm-path=/usr -D__HIP_PLATFORM_AMD__"
printf '#include <hip/hip_runtime.h>\n__global__ void k(int *p) { *p = 1; }\nint main() { k<<<1, 1>>>(0); return 0; }\n' >probe.hip
if command -v "$clang" >/dev/null 2>&1 && $hip --cuda-host-only -c probe.hip -o probe.o >probe.log 2>&1; then
    # the README's hipcc flags, without its output (no link here)
    flags=$(sed -e 's/^hipcc //' -e 's/ main\.hip//' -e 's/-o [^ ]*//' hipcc.cmd)
    # shellcheck disable=SC2086
    if ! $hip $flags --cuda-host-only -c main.hip -o main.o >hip.log 2>&1 ||
        ! $hip $flags --cuda-device-only -emit-llvm -c main.hip -o main.bc >>hip.log 2>&1; then
        fail "README: the README's program does not build with $clang in HIP mode (hipcc's compiler):"
        sed 's/^/    /' hip.log >&2
    else
        built=$((built + 1))
        note "the README's program compiles with $clang -x hip for gfx90a (host and device" \
            "passes; not linked: no ROCm device libraries here, and not run: no AMD GPU)"
    fi
else
    note "$clang cannot compile HIP here: the HIP build of the README's program was not checked"
fi

if [ "$built" -eq 0 ] && [ "$failed" -eq 0 ]; then
    echo "SKIPPED: neither nvcc nor clang's HIP mode works here" >&2
    exit 77
fi
finish
