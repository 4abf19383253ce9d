#!/usr/bin/env bash
# GPU check of `fdtune export` (issue 4), for an NVIDIA machine: exports the tuning database
# DB for the visible GPU as a header (and as JSON), compiles the user program main.cu with
# nvcc against that header and fdtune's generator library (the CPU reference), and runs it:
# every exported operator through its launcher on a tuned and an untuned grid, and every
# other variant that can run those grids, checked against the CPU reference. Exit status:
# the program's (0 all PASS, 1 a FAIL, 2 a CUDA error), 3 without nvcc or a GPU, 4 when a
# step before it failed.
#
# Usage: bench/export_check/run.sh DB
# Environment:
#   FDTUNE       the fdtune binary (default: build/fdtune of this checkout)
#   BUILD        the build directory holding the static libraries (default: build/)
#   NVCC         default /usr/local/cuda/bin/nvcc
#   OUTDIR       default bench/results/export_check
#   GPU          --gpu for the export (default: the visible GPU's arch, sm_XY, from nvidia-smi)
#   ARCH         nvcc's -arch (default: that same sm_XY)
#   EXPORT_ARGS  more export options, e.g. "--R 4 --precision f32"
#   TUNE_GRIDS   e.g. "256 384": first tune R=4 f32 on these N^3 grids into DB (model
#                strategy, BUDGET evaluations per operator, default 60; TUNE_ARGS for more)
#   and main.cu's EXPORT_CHECK_GRID, EXPORT_CHECK_QUICK, EXPORT_CHECK_SAMPLES.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
db=${1:?usage: bench/export_check/run.sh DB}
FDTUNE=${FDTUNE:-$root/build/fdtune}
BUILD=${BUILD:-$root/build}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
OUTDIR=${OUTDIR:-$root/bench/results/export_check}
mkdir -p "$OUTDIR" || exit 4

if [ ! -x "$NVCC" ]; then
    echo "run.sh: no nvcc at $NVCC (install the CUDA toolkit or set NVCC)" >&2
    exit 3
fi
for lib in generator/libfdt_generator.a templates/libfdt_templates.a common/libfdt_common.a; do
    if [ ! -f "$BUILD/$lib" ]; then
        echo "run.sh: $BUILD/$lib missing (build fdtune first, or set BUILD)" >&2
        exit 4
    fi
done
if [ -z "${GPU:-}" ] || [ -z "${ARCH:-}" ]; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -1 |
        tr -d ' .\r')
    if [ -z "$cc" ]; then
        echo "run.sh: no GPU visible to nvidia-smi (set GPU and ARCH to go on)" >&2
        exit 3
    fi
    GPU=${GPU:-sm_$cc}
    ARCH=${ARCH:-sm_$cc}
fi

if [ -n "${TUNE_GRIDS:-}" ]; then
    for g in $TUNE_GRIDS; do
        echo "run.sh: tuning R=4 f32 $g^3 into $db" >&2
        # shellcheck disable=SC2086
        "$FDTUNE" --gpu auto --R 4 --grid "$g^3" --strategy model --budget "${BUDGET:-60}" \
            --db "$db" ${TUNE_ARGS:-} >"$OUTDIR/tune-$g.log" 2>&1 ||
            echo "run.sh: tuning $g^3 ended with status $? (see $OUTDIR/tune-$g.log)" >&2
    done
fi

# shellcheck disable=SC2086
"$FDTUNE" export --db "$db" --gpu "$GPU" ${EXPORT_ARGS:-} -o "$OUTDIR/fd_tuned.h" || exit 4
# shellcheck disable=SC2086
"$FDTUNE" export --db "$db" --gpu "$GPU" ${EXPORT_ARGS:-} --format json \
    -o "$OUTDIR/fd_tuned.json" || exit 4

echo "run.sh: compiling main.cu for $ARCH" >&2
"$NVCC" -std=c++17 -O2 -arch="$ARCH" -Xcompiler -Wall,-Wextra "$here/main.cu" \
    -I"$OUTDIR" -I"$root/generator" -I"$root/portable" -I"$root/common" \
    "$BUILD/generator/libfdt_generator.a" "$BUILD/templates/libfdt_templates.a" \
    "$BUILD/common/libfdt_common.a" -o "$OUTDIR/export_check" || exit 4

"$OUTDIR/export_check" | tee "$OUTDIR/export_check.log"
exit "${PIPESTATUS[0]}"
