#!/bin/sh
# AMD ring test (CPU only): the ring's (lds=2) copies on gfx90a keep a whole plane's chunks in
# flight and spill nothing. Each kernel below is compiled with `fdtune gen --compile --target
# gfx90a --disasm` (hiprtc, llvm-objdump-16) and its disassembly measured by
# bench/amd_disasm.py (the one parser of it): scratch and VGPR spill bytes must be 0, and
# inflight (the most global loads outstanding at once on any path) at least the chunks of
# one plane that the thread copies: TILE own rows + YPT y-halo + XPT x-halo chunks (+ 2 TILE
# of p_prev and c2 for wave), with YPT = ceil(2 RY BX / NT), XPT = ceil(BY TILE 2 HC / NT),
# HC = ceil(R / VEC) (templates/ring.hip). Before the staged copies (FDT_STAGED_COPY) every
# copy was one load and its wait (inflight 1). The shapes are those lap.lua admits on an
# MI250X (see test_recipe's test_lap_ring_amd), tile 1 and 4 and d2z besides; and the
# stream's bulk form (bulk=1), whose loads write LDS directly. Skips (77)
# with the reason when the build has no hiprtc, or llvm-objdump-16 or python3 is missing.
# Usage: test_amd_ring.sh FDTUNE SOURCE_DIR
set -eu

fdtune=${1:?usage: test_amd_ring.sh PATH/TO/fdtune SOURCE_DIR}
src=${2:?usage: test_amd_ring.sh PATH/TO/fdtune SOURCE_DIR}
parser=$src/bench/amd_disasm.py

if ! "$fdtune" --version 2>/dev/null | grep -q '^backend hip: hiprtc'; then
    echo "skip: this build has no hiprtc (ROCm) backend to compile gfx90a kernels" >&2
    exit 77
fi
for tool in llvm-objdump-16 python3; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "skip: $tool is not installed (gen --disasm and $parser need it)" >&2
        exit 77
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-amd-ring.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0
checks=0

# kernel OP R PREC CHUNKS CONFIG: compiles one ring kernel and checks its counts.
kernel() {
    op=$1 R=$2 prec=$3 chunks=$4 cfg=$5
    name="$op R=$R $prec $cfg"
    checks=$((checks + 1))
    if ! "$fdtune" gen --op "$op" --R "$R" --precision "$prec" --grid 512^3 --config "$cfg" \
        --compile --target gfx90a --disasm >"$tmp/out" 2>"$tmp/err"; then
        echo "FAIL: $name: gen failed: $(head -3 "$tmp/err")" >&2
        failed=$((failed + 1))
        return
    fi
    # vgprs,agprs,spill_bytes,scratch_bytes,loads,vmwaits,barriers,inflight,hidden
    row=$(python3 "$parser" <"$tmp/out")
    IFS=, read -r vgprs agprs spill scratch loads vmwaits barriers inflight hidden <<EOF
$row
EOF
    echo "$name: $vgprs VGPRs, spill $spill, scratch $scratch, $loads loads, $vmwaits vmcnt waits, inflight $inflight (plane: $chunks chunks)"
    if [ "$loads" -lt 1 ] || [ "$spill" != 0 ] || [ "$scratch" != 0 ] || [ "$inflight" -lt "$chunks" ]; then
        echo "FAIL: $name: wanted no spill, no scratch and >= $chunks loads in flight: $row" >&2
        failed=$((failed + 1))
    fi
}

# lap.lua's AMD ring shapes: tile 2, vec 2/4, f32 and f64, R 1/2/4, pf 2/3
kernel lap 4 f32 5 bx=64,by=4,nw=32,lds=2,vec=2,align=64,tile=2,pf=2     # 2 + YPT 2 + XPT 1
kernel lap 2 f32 4 bx=64,by=4,nw=32,lds=2,vec=4,align=64,tile=2,pf=3     # 2 + 1 + 1
kernel lap 1 f64 4 bx=64,by=4,nw=32,lds=2,vec=2,align=64,tile=2,pf=2     # 2 + 1 + 1
kernel wave 2 f32 8 bx=64,by=4,nw=32,lds=2,vec=2,align=64,tile=2,pf=2    # 2 + 1 + 1 + 4 queued
kernel wave 1 f64 8 bx=64,by=4,nw=32,lds=2,vec=2,align=64,tile=2,pf=2    # 2 + 1 + 1 + 4 queued
# tile 4 and tile 1 (the verification set's ring), and d2z (own rows only)
kernel lap 1 f32 6 bx=64,by=2,nw=32,lds=2,vec=4,align=64,tile=4,pf=2     # 4 + 1 + 1
kernel lap 4 f32 3 bx=32,by=8,nw=32,lds=2,vec=4,align=64,pf=2            # 1 + 1 + 1
kernel d2z 2 f32 2 bx=64,by=4,nw=32,lds=2,vec=4,align=64,tile=2,pf=2     # 2

# bulk OP R PREC RUNS CONFIG: the stream's bulk form (bulk=1: loads that write LDS directly,
# buffer_load_dword ... lds; bench/amd_bulk.sh) compiles with no scratch, loads no value of
# the ring into a VGPR (no global or buffer load without lds, no ds_write) and keeps at least
# RUNS LDS-direct loads in flight (a wave's runs of 64 dwords of one plane: TY rows of
# ceil(TX / 64) runs over NT / 64 waves).
bulk() {
    op=$1 R=$2 prec=$3 runs=$4 cfg=$5
    name="$op R=$R $prec $cfg"
    checks=$((checks + 1))
    if ! "$fdtune" gen --op "$op" --R "$R" --precision "$prec" --grid 512^3 --config "$cfg" \
        --compile --target gfx90a --disasm >"$tmp/out" 2>"$tmp/err"; then
        echo "FAIL: $name: gen failed: $(head -3 "$tmp/err")" >&2
        failed=$((failed + 1))
        return
    fi
    row=$(python3 "$parser" --lds-direct <"$tmp/out")
    IFS=, read -r vgprs agprs spill scratch loads vmwaits barriers inflight hidden vload dsw <<EOF
$row
EOF
    echo "$name: $vgprs VGPRs, scratch $scratch, $loads LDS-direct loads, inflight $inflight, $vload VGPR loads, $dsw ds_write"
    if [ "$loads" -lt 1 ] || [ "$spill" != 0 ] || [ "$scratch" != 0 ] || [ "$vload" != 0 ] ||
        [ "$dsw" != 0 ] || [ "$inflight" -lt "$runs" ]; then
        echo "FAIL: $name: wanted LDS-direct loads alone, >= $runs in flight, no scratch: $row" >&2
        failed=$((failed + 1))
    fi
}
bulk lap 4 f32 8 bx=64,by=4,lb=256,lds=3,mbar=1,bulk=1,nw=128,pf=3,tile=2,vec=2,align=64  # 16 rows x 2 / 4
bulk wave 4 f32 8 bx=32,by=8,lb=256,lds=3,mbar=1,bulk=1,nw=128,pf=3,vec=4,align=64        # 16 x 3 / 4 + queued

echo "test_amd_ring: $checks kernels, $failed failed"
[ "$failed" -eq 0 ]
