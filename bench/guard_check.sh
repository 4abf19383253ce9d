#!/usr/bin/env bash
# The stream's unguarded stores (guard=none, issue 31) on one NVIDIA GPU, in about two
# minutes, everything under $OUT (default bench/results) as guard_check/ plus its summary
# guard_check.txt:
#  1. verify: `fdtune bench --probe` (the reference against the CPU, then every candidate
#     against the reference over every point, halo, padding and inputs untouched) of a
#     guard=none spread (vectors of 2 and 4, register blocking, order yzx with a split of 2,
#     the bulk copies' form) beside each one's guard=rows sibling, on a grid whose rows are
#     whole blocks (what guard=none requires) and whose z has a remainder, for lap R=4 and
#     R=8 f32, lap R=6 f64 and wave R=4 f32;
#  2. compute-sanitizer memcheck, racecheck and synccheck of an unguarded lap and wave on a
#     small grid (memcheck: whether a store past the rows' end leaves the allocation).
# Usage: OUT=DIR bench/guard_check.sh   (FDTUNE: the binary, default ./build/fdtune)
set -u
OUTDIR=${OUT:-${OUTDIR:-$(cd "$(dirname "$0")" && pwd)/results}}
export OUTDIR
. "$(dirname "$0")/lib.sh"
dir=$OUTDIR/guard_check
mkdir -p "$dir"
sum=$OUTDIR/guard_check.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }

say "guard_check: $("$FDTUNE" --version 2>&1 | head -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# The guard=none spread for precision $1, each line "guard=rows sibling|guard=none".
guard_spread() {
    local v=4
    [ "$1" = f64 ] && v=2
    for c in "bx=32,by=4,nw=16,lds=3,vec=$v,align=32,pf=2" \
             "bx=32,by=8,nw=32,lds=3,vec=2,align=64,tile=2,pf=3" \
             "bx=32,by=4,nw=7,lds=3,vec=2,align=32,tile=2,order=yzx,split=2,pf=4" \
             "bx=32,by=4,nw=16,lds=3,vec=$v,align=32,pf=2,mbar=1,bulk=1"; do
        echo "$c"
        echo "$c,guard=none"
    done
}

say "== verify (fdtune bench --probe, 256x160x97)"
for cell in "lap 4 f32" "lap 8 f32" "lap 6 f64" "wave 4 f32"; do
    set -- $cell
    log=$dir/verify-$1-$2-$3
    timeout 90 "$FDTUNE" bench --op "$1" --R "$2" --precision "$3" --grid 256x160x97 --probe \
        $(guard_spread "$3" | config_args) --json >"$log.json" 2>"$log.log"
    rc=$?
    probe_summary "$log.json" "$1 R=$2 $3" "$rc" guard=none | tee -a "$sum"
done

say "== compute-sanitizer (64x32x29, --probe)"
if command -v compute-sanitizer >/dev/null; then
    for c in "lap 64x32x29 bx=32,by=4,nw=8,lds=3,vec=2,align=64,tile=2,pf=3,guard=none" \
             "wave 64x32x29 bx=32,by=4,nw=7,lds=3,vec=2,align=32,tile=2,order=yzx,split=2,pf=2,guard=none"; do
        set -- $c
        for tool in memcheck racecheck synccheck; do
            sanitize $tool "$1" "$2" "$3" "$dir/san-$tool-$1.log" | tee -a "$sum"
        done
    done
else
    say "compute-sanitizer: not found on PATH"
fi
