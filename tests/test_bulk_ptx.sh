#!/bin/sh
# The stream's bulk form (bulk=1, templates/ring_bulk.hip) in sm_90 PTX (issue 31): each
# kernel fills its ring with tensor copies (cp.async.bulk.tensor.3d, a plane a copy; wave's
# queued rows by cp.async.bulk) completing on the slot barriers (mbarrier.arrive.expect_tx),
# and no thread issues a cp.async of its own any more, where the same config with bulk=0
# issues per-thread cp.async and no bulk copy (so the greps tell the two apart). Below sm_90 a bulk=1 kernel does not compile, and says why. nvcc -ptx (the CUDA
# toolkit's; NVCC names another) turns the source into PTX as bench/ptx_compare.sh does, with
# NVRTC's hip/hip_runtime.h. Skips (77) without nvcc.
# Usage: test_bulk_ptx.sh FDTUNE SOURCE_DIR
set -eu

fdtune=${1:?usage: test_bulk_ptx.sh PATH/TO/fdtune SOURCE_DIR}
src=${2:?usage: test_bulk_ptx.sh PATH/TO/fdtune SOURCE_DIR}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if ! [ -x "$nvcc" ]; then
    echo "skip: no nvcc at $nvcc (NVCC names another) to compile PTX with" >&2
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-bulk-ptx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/inc/hip"
cp "$src/templates/nvrtc_hip_runtime.h" "$tmp/inc/hip/hip_runtime.h"
failed=0
n=0

# ptx ARCH OP R PREC CONFIG: the PTX in $tmp/k.ptx, nvcc's messages in $tmp/nvcc.err
ptx() {
    "$fdtune" gen --op "$2" --R "$3" --precision "$4" --grid 512^3 --config "$5" >"$tmp/k.cu" \
        2>"$tmp/gen.err" &&
        "$nvcc" -arch="$1" -ptx -std=c++17 -I "$tmp/inc" "$tmp/k.cu" -o "$tmp/k.ptx" \
            >"$tmp/nvcc.err" 2>&1
}

# check OP R PREC CONFIG (without bulk): bulk=1 copies in bulk alone, bulk=0 per thread alone
check() {
    n=$((n + 1))
    bulk='cp\.async\.bulk\.tensor\.3d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes'
    thread='cp\.async\.c[ag]\.shared\.global\|cp\.async\.mbarrier\.arrive'
    if ! ptx sm_90 "$1" "$2" "$3" "$4,bulk=1"; then
        echo "FAIL: $1 R=$2 $3 $4,bulk=1: no PTX: $(head -c 400 "$tmp/nvcc.err")" >&2
        failed=$((failed + 1))
        return
    fi
    nb=$(grep -c "$bulk" "$tmp/k.ptx" || true)
    nx=$(grep -c 'mbarrier\.arrive\.expect_tx' "$tmp/k.ptx" || true)
    nt=$(grep -c "$thread" "$tmp/k.ptx" || true)
    ptx sm_90 "$1" "$2" "$3" "$4" || { echo "FAIL: $1 R=$2 $3 $4: no PTX" >&2; failed=$((failed + 1)); return; }
    ob=$(grep -c "$bulk" "$tmp/k.ptx" || true)
    ot=$(grep -c "$thread" "$tmp/k.ptx" || true)
    if [ "$nb" -gt 0 ] && [ "$nx" -gt 0 ] && [ "$nt" -eq 0 ] && [ "$ob" -eq 0 ] && [ "$ot" -gt 0 ]; then
        echo "ok: $1 R=$2 $3 $4: bulk=1 $nb tensor copies, $nx expect_tx, 0 per-thread; bulk=0 $ot per-thread"
    else
        echo "FAIL: $1 R=$2 $3 $4: bulk=1 $nb tensor copies, $nx expect_tx, $nt per-thread; bulk=0 $ob bulk, $ot per-thread" >&2
        failed=$((failed + 1))
    fi
}

check lap 4 f32 align=32,bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=4,tile=2,vec=2
check lap 8 f32 align=32,bx=32,by=16,lb=512,lds=3,mbar=1,nw=512,pf=5,tile=2,vec=2
check lap 6 f64 align=32,bx=32,by=8,lb=256,lds=3,mbar=1,nw=256,pf=4,tile=2,vec=2
check wave 4 f32 align=32,bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=4,tile=1,vec=4

# below sm_90 the bulk form is a compile error that names itself
n=$((n + 1))
if ptx sm_80 lap 4 f32 align=32,bx=32,by=8,lds=3,mbar=1,nw=128,pf=4,tile=2,vec=2,bulk=1; then
    echo "FAIL: a bulk=1 kernel compiled for sm_80" >&2
    failed=$((failed + 1))
elif grep -q 'config bulk=1: needs NVIDIA sm_90 or later (cp.async.bulk) or AMD gfx9 (loads into LDS)' "$tmp/nvcc.err"; then
    echo "ok: sm_80 refuses bulk=1: config bulk=1: needs NVIDIA sm_90 or later (cp.async.bulk) or AMD gfx9 (loads into LDS)"
else
    echo "FAIL: sm_80 bulk=1: $(head -c 400 "$tmp/nvcc.err")" >&2
    failed=$((failed + 1))
fi
echo "test_bulk_ptx: $n checks, $failed failed"
[ "$failed" -eq 0 ]
