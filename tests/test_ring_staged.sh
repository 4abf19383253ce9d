#!/bin/sh
# The ring's copy paths compute the same result (CPU only, "AMD first" 6). AMD compiles the
# ring (lds=2) and the stream (lds=3) with staged copies (FDT_STAGED_COPY: a plane's chunks
# loaded into registers together, written to the ring at the end of the step), NVIDIA with
# cp.async and, in the stream with mbar=1, a pair of mbarriers per ring slot instead of a
# block barrier per step, none of which runs here. This test generates lap and wave kernels
# with `fdtune gen` and compiles each three times for the host with g++ and a HIP shim
# (tests/ring_host: one thread per GPU thread, __syncthreads a barrier, blocks in turn): with
# the plain copies (load and store at issue), with FDT_STAGED_COPY defined (the AMD path),
# and with FDT_HOST_ASYNC (NVIDIA's path: cp.async groups and mbarriers emulated, each copy
# landing as late as the PTX allows, so that a missing wait reads stale data and a wrong
# phase deadlocks). All three must write bitwise the same output over a grid with remainders
# in x, y and z, and match the direct family's (lds=0) to rounding (reassociation: 1e-5 of
# the largest output in f32, 1e-12 in f64). The stream's bulk form (bulk=1, templates/
# ring_bulk.hip: each plane one tensor copy from thread 0, wave's queued rows by cp.async.bulk,
# completing on the slot barriers) has NVIDIA's path alone: it runs emulated (the box and the
# rows landing when their barrier's phase completes, which waits for the bytes announced; the
# box's values outside the grid as zeros) and must write bitwise what the same config with
# bulk=0 writes, emulated too, and match the direct family's to rounding. dwave's damped
# kernel (W=4 on every face) takes a thread's x slot turned with its block row where two or
# more warps span a row (prelude.hip layer_slot_x): its rings and streams of 64 and 128
# threads a row must match a direct kernel of 32 threads a row, whose slots do not turn; a
# ring whose rows all take the damping (layer=select) must match it too.
# Skips (77) when g++ cannot build C++20 threads.
# Usage: test_ring_staged.sh FDTUNE SOURCE_DIR
set -eu

fdtune=${1:?usage: test_ring_staged.sh PATH/TO/fdtune SOURCE_DIR}
host=${2:?usage: test_ring_staged.sh PATH/TO/fdtune SOURCE_DIR}/tests/ring_host
cxx=${CXX_HOST:-g++}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-ring-staged.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
printf '#include <barrier>\n#include <thread>\nint main() { std::barrier<> b(1); b.arrive_and_wait(); }\n' \
    >"$tmp/probe.cpp"
if ! "$cxx" -std=c++20 -pthread "$tmp/probe.cpp" -o "$tmp/probe" >/dev/null 2>&1; then
    echo "skip: $cxx cannot build C++20 std::barrier programs (the host harness needs them)" >&2
    exit 77
fi
nx=70 ny=20 nz=24
failed=0

# build R PREC CONFIG MODE: the harness for one kernel of operator $op in $tmp/h (MODE 0
# plain copies, 1 staged, 2 NVIDIA's emulated); 1 on failure
build() {
    "$fdtune" gen --op "$op" $absorb --R "$1" --precision "$2" --grid ${nx}x${ny}x${nz} \
        --config "$3" >"$tmp/k.raw" 2>"$tmp/gen.err" || { cat "$tmp/gen.err" >&2; return 1; }
    # the first kernel (dwave's source holds the damped one, then its interior one, NAME_int)
    name=$(sed -n 's/^extern "C" __global__ void \([a-z0-9_]*\)(.*/\1/p' "$tmp/k.raw" | head -n 1)
    # launch geometry from the banner: block, outputs per thread, planes per thread
    set -- "$1" "$2" "$3" "$4" $(sed -n 's|^// Block (\([0-9]*\), \([0-9]*\), [0-9]*); each thread computes \([0-9]*\) x \([0-9]*\) points (x, y) in each of \([0-9]*\) z planes.*|\1 \2 \3 \4 \5|p' "$tmp/k.raw")
    bx=$5 by=$6 gx=$(((nx + $5 * $7 - 1) / ($5 * $7))) gy=$(((ny + $6 * $8 - 1) / ($6 * $8)))
    gz=$(((nz + $9 - 1) / $9))
    line=$(sed -n 's/.*(align [0-9]*: line \([0-9]*\), slice \([0-9]*\)).*/\1/p' "$tmp/k.raw")
    slice=$(sed -n 's/.*(align [0-9]*: line \([0-9]*\), slice \([0-9]*\)).*/\2/p' "$tmp/k.raw")
    { [ "$4" = 1 ] && echo "#define FDT_STAGED_COPY 1"
      [ "$4" = 2 ] && echo "#define FDT_HOST_ASYNC 1"; sed "s/$name(/kern(/" "$tmp/k.raw"; } \
        >"$tmp/kernel.cu"
    real=float
    [ "$2" = f64 ] && real=double
    call="kern(out.data(), in.data(), (int)R, (int)(R + ny), (REAL)1, (REAL)0.5, (REAL)0.25)"
    [ "$op" = wave ] && call="kern(out.data(), in.data(), prev.data(), c2.data(), (int)R, \
(int)(R + ny), (REAL)1, (REAL)0.5, (REAL)0.25, (int)R + 3, (int)R + 2, (int)R + 5, (REAL)1)"
    # dwave: eta (unused with eta=dist), the box (the grid, at the origin, no hole), as wave
    [ "$op" = dwave ] && call="kern(out.data(), in.data(), prev.data(), c2.data(), c2.data(), \
atoi(argv[1]), ny, (int)nz, 0, 0, 0, 0, 0, 0, 0, 0, 0, (int)R, (int)(R + ny), (REAL)1, \
(REAL)0.5, (REAL)0.25, (int)R + 3, (int)R + 2, (int)R + 5, (REAL)1)"
    # bulk=1: the tensor map last, its box the tile's (2 HX + bx vec by 2 R + by tile)
    tmap=
    if grep -q 'fdt_tmap tmap)' "$tmp/kernel.cu"; then
        hx=$((($1 + $7 - 1) / $7 * $7))
        call="${call%)}, *reinterpret_cast<const ${name}_k::fdt_tmap *>(fdt_host_tmap_arg))"
        tmap="-DTMAP_BOX_X=$((2 * hx + $5 * $7)) -DTMAP_BOX_Y=$((2 * $1 + $6 * $8))"
    fi
    "$cxx" -std=c++20 -O1 -ffp-contract=off -pthread -I "$host" -I "$tmp" -DREAL=$real \
        "-DKERNEL_CALL=$call" $([ "$op" != lap ] && echo -DWAVE) $tmap \
        "$host/harness.cpp" -o "$tmp/h" || return 1
    [ "$4" != 1 ] || grep -q 'stage\[' "$tmp/kernel.cu" || { echo "no staged copies in $3" >&2; return 1; }
    geometry="$nx $ny $nz $1 $line $slice $bx $by $gx $gy $gz"
}

# check OP R PREC CONFIG: plain, staged, emulated NVIDIA and direct outputs
check() {
    op=$1
    shift
    absorb= direct=bx=64,by=4,nw=16,align=64
    [ "$op" = dwave ] && absorb="--absorb 4" direct=bx=32,by=4,nw=16,align=64
    tol=1e-5
    [ "$2" = f64 ] && tol=1e-12
    if build "$1" "$2" "$3" 0 && "$tmp/h" $geometry "$tmp/plain" >/dev/null &&
        build "$1" "$2" "$3" 1 && "$tmp/h" $geometry "$tmp/staged" >/dev/null &&
        cmp -s "$tmp/plain" "$tmp/staged" &&
        build "$1" "$2" "$3" 2 && "$tmp/h" $geometry "$tmp/async" >/dev/null &&
        cmp -s "$tmp/plain" "$tmp/async" &&
        build "$1" "$2" $direct 0 && "$tmp/h" $geometry "$tmp/direct" >/dev/null &&
        "$tmp/h" cmp "$tmp/staged" "$tmp/direct" "$tol" >"$tmp/cmp"; then
        echo "ok: $op R=$1 $2 $3: staged = async = plain, vs direct: $(cat "$tmp/cmp")"
    else
        echo "FAIL: $op R=$1 $2 $3 ($(cat "$tmp/cmp" 2>/dev/null))" >&2
        failed=$((failed + 1))
    fi
    rm -f "$tmp/cmp"
}

check lap 1 f32 bx=64,by=4,nw=16,lds=2,vec=4,align=64,tile=4,pf=2
check lap 8 f64 bx=32,by=8,nw=7,lds=2,align=64,pf=6
check lap 4 f32 bx=64,by=4,nw=16,lds=2,vec=2,align=64,tile=2,pf=3
check lap 4 f32 bx=64,by=4,nw=16,lds=3,vec=2,align=64,tile=2,pf=3
check lap 4 f32 bx=64,by=4,nw=16,lds=3,vec=2,align=64,tile=2,pf=3,mbar=1
check lap 8 f32 bx=16,by=16,nw=7,lds=3,vec=2,align=64,tile=2,pf=2,mbar=1
check lap 3 f64 bx=32,by=4,nw=5,lds=3,align=64,tile=3,pf=1,mbar=1
check wave 2 f32 bx=32,by=4,nw=9,lds=3,vec=2,align=64,tile=2,pf=3,mbar=1
check wave 5 f64 bx=24,by=5,nw=7,lds=3,align=64,tile=2,pf=2,mbar=1
check dwave 4 f32 bx=64,by=4,nw=16,lds=2,vec=2,align=64,tile=2,pf=3
check dwave 2 f64 bx=128,by=2,nw=9,lds=3,align=64,tile=2,pf=3,mbar=1
check dwave 4 f32 bx=64,by=4,nw=16,lds=2,vec=2,align=64,tile=2,pf=3,layer=select
# check_bulk OP R PREC CONFIG: the emulated bulk=1 kernel against CONFIG's bulk=0 and direct
check_bulk() {
    op=$1
    shift
    absorb=
    tol=1e-5
    [ "$2" = f64 ] && tol=1e-12
    if build "$1" "$2" "$3,bulk=1" 2 && grep -q 'bulk_tensor_copy(&ring' "$tmp/kernel.cu" &&
        "$tmp/h" $geometry "$tmp/bulk" >/dev/null &&
        build "$1" "$2" "$3" 2 && "$tmp/h" $geometry "$tmp/async" >/dev/null &&
        cmp -s "$tmp/bulk" "$tmp/async" &&
        build "$1" "$2" bx=64,by=4,nw=16,align=64 0 && "$tmp/h" $geometry "$tmp/direct" >/dev/null &&
        "$tmp/h" cmp "$tmp/bulk" "$tmp/direct" "$tol" >"$tmp/cmp"; then
        echo "ok: $op R=$1 $2 $3,bulk=1: bulk = async, vs direct: $(cat "$tmp/cmp")"
    else
        echo "FAIL: $op R=$1 $2 $3,bulk=1 ($(cat "$tmp/cmp" 2>/dev/null))" >&2
        failed=$((failed + 1))
    fi
    rm -f "$tmp/cmp"
}

check_bulk lap 4 f32 bx=32,by=4,nw=16,lds=3,vec=2,align=64,tile=2,pf=3,mbar=1
check_bulk lap 8 f32 bx=16,by=16,nw=7,lds=3,vec=2,align=64,tile=2,pf=2,mbar=1
check_bulk lap 3 f64 bx=32,by=4,nw=5,lds=3,vec=2,align=64,tile=3,pf=4,mbar=1
check_bulk wave 2 f32 bx=32,by=4,nw=9,lds=3,vec=4,align=64,tile=1,pf=3,mbar=1
check_bulk wave 5 f64 bx=24,by=5,nw=7,lds=3,vec=2,align=64,tile=2,pf=2,mbar=1
echo "test_ring_staged: 16 kernels, $failed failed"
[ "$failed" -eq 0 ]
