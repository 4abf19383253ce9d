#!/usr/bin/env bash
# The stream's bulk form (bulk=1, templates/ring_bulk.hip; issue 31) on one NVIDIA sm_90 GPU
# (an H200 or H100), in under 8 minutes, everything under $OUT (default bench/results) as
# bulk_check.tar.gz plus its summary bulk_check.txt:
#  1. verify: `fdtune bench --probe` (the reference against the CPU, then every candidate
#     against the reference over every point, halo, padding and inputs untouched) of a bulk
#     spread (vectors of 2 and 4, register blocking, an odd block of 24x5 with order yzx and
#     a split of 3, planes ahead 2..5) on a grid with remainders in x, y and z, for lap R=4
#     and R=8 f32, lap R=6 f64 and wave R=4 f32, each beside its bulk=0 sibling;
#  2. compute-sanitizer memcheck, racecheck and synccheck of a bulk lap and a bulk wave on a
#     small grid (the tensor copies' boxes reach past the grid's padded extents, as zeros, and
#     wave's queued rows read the layout's padding: memcheck says whether any access leaves
#     the allocation; racecheck and synccheck the slot barriers' hand-over);
#  3. timing, bulk off and on, in one bench run per cell (its copy bandwidth measured in the
#     same run, as bench/matrix.sh does): the H200 matrix's tuned bests (bench/matrix/h200.csv,
#     bulk=0) beside bulk configs (mbar=1,bulk=1, no L2 hint: l2pf belongs to cp.async; the
#     best's geometry where its tile fits a tensor copy, and those bench/notes/tensor_map
#     found fastest) for lap R=4 and R=8 f32 at 512^3 and 1024^3 and lap R=5, 6 and 8 f64 at
#     512^3; d2z R=4 f32 1024^3 with its tuned best alone: d2z reads only its own columns, so
#     it has no slot barriers and no bulk form (the generator refuses mbar=1 for it), and its
#     best is a register window, not the stream.
# Usage: OUT=DIR bench/bulk_check.sh   (FDTUNE: the binary, default ./build/fdtune)
set -u
OUTDIR=${OUT:-${OUTDIR:-$(cd "$(dirname "$0")" && pwd)/results}}
export OUTDIR
. "$(dirname "$0")/lib.sh"
dir=$OUTDIR/bulk_check
mkdir -p "$dir"
sum=$OUTDIR/bulk_check.txt
: >"$sum"
start=$(date +%s)
say() { echo "$*" | tee -a "$sum"; }
left() { echo $((450 - ($(date +%s) - start))); }  # seconds left of 7.5 minutes

say "bulk_check: $("$FDTUNE" --version 2>&1 | head -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# The bulk verification spread for precision $1 (f32 vectors of 4, so that the x halo of
# every radius is whole 16 bytes; f64 vectors of 2), each line "bulk=0 sibling|bulk=1".
bulk_spread() {
    local v=4
    [ "$1" = f64 ] && v=2
    for c in "bx=32,by=4,nw=16,lds=3,vec=$v,align=32,pf=2,mbar=1" \
             "bx=32,by=8,nw=32,lds=3,vec=2,align=64,tile=2,pf=3,mbar=1" \
             "bx=24,by=5,nw=7,lds=3,vec=$v,align=32,tile=2,order=yzx,split=3,pf=4,mbar=1" \
             "bx=48,by=2,nw=40,lds=3,vec=$v,align=32,pf=5,split=2,mbar=1"; do
        echo "$c"
        echo "$c,bulk=1"
    done
}

# 1. verification
say "== verify (fdtune bench --probe, 301x203x157)"
for cell in "lap 4 f32" "lap 8 f32" "lap 6 f64" "wave 4 f32"; do
    set -- $cell
    log=$dir/verify-$1-$2-$3
    # every config must verify (bench exits 1 otherwise)
    [ "$(left)" -gt 300 ] || { say "$1 R=$2 $3: verify skipped, out of time"; continue; }
    timeout 90 "$FDTUNE" bench --op "$1" --R "$2" --precision "$3" --grid 301x203x157 --probe \
        $(bulk_spread "$3" | config_args) --json >"$log.json" 2>"$log.log"
    rc=$?
    probe_summary "$log.json" "$1 R=$2 $3" "$rc" bulk=1 | tee -a "$sum"
done

# 2. sanitizers
say "== compute-sanitizer (61x37x29, --probe)"
if command -v compute-sanitizer >/dev/null; then
    for c in "lap 61x37x29 bx=32,by=4,nw=8,lds=3,vec=2,align=64,tile=2,pf=3,mbar=1,bulk=1" \
             "wave 61x37x29 bx=24,by=5,nw=7,lds=3,vec=4,align=32,tile=2,order=yzx,split=2,pf=2,mbar=1,bulk=1"; do
        set -- $c
        for tool in memcheck racecheck synccheck; do
            [ "$(left)" -gt 200 ] || { say "$tool $1 $3: skipped, out of time"; continue; }
            sanitize $tool "$1" "$2" "$3" "$dir/san-$tool-$1.log" | tee -a "$sum"
        done
    done
else
    say "compute-sanitizer: not found on PATH"
fi

# 3. timing, bulk off and on
say "== timing (fdtune bench, fraction of copy in the same run)"
B=lds=3,mbar=1,bulk=1
cells=(
    "lap 4 f32 512 align=32,by=8,l2pf=256,lb=512,lds=3,nw=128,pf=4,tile=4,vec=2 align=32,by=8,lb=512,nw=128,pf=4,tile=4,vec=2,$B align=32,bx=32,by=16,lb=512,nw=128,pf=4,tile=2,vec=2,$B"
    "lap 8 f32 512 align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,mbar=1,nw=512,pf=4,tile=2,vec=2 align=32,bx=32,by=16,lb=512,nw=512,pf=4,tile=2,vec=2,$B align=32,bx=32,by=16,lb=512,nw=512,pf=6,tile=2,vec=2,$B align=32,by=8,lb=512,nw=512,pf=4,tile=2,vec=2,$B"
    "lap 4 f32 1024 align=32,bx=128,l2pf=256,lb=512,lds=3,nw=256,pf=4,tile=4,vec=2 align=32,by=8,lb=512,nw=256,pf=4,tile=4,vec=2,$B"
    "lap 8 f32 1024 align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,mbar=1,nw=512,pf=4,tile=2,vec=2 align=32,bx=32,by=16,lb=512,nw=512,pf=4,tile=2,vec=2,$B align=32,bx=32,by=16,lb=512,nw=512,pf=6,tile=2,vec=2,$B"
    "lap 6 f64 512 align=32,bx=16,by=16,lb=256,lds=3,mbar=1,nw=512,pf=5,tile=2,vec=2 align=32,bx=16,by=16,lb=256,nw=512,pf=5,tile=2,vec=2,$B align=32,bx=32,by=8,lb=256,nw=512,pf=4,tile=2,vec=2,$B"
    "lap 5 f64 512 align=32,bx=32,by=8,lb=256,lds=3,mbar=1,nw=512,pf=4,tile=2,vec=2 align=32,bx=32,by=8,lb=256,nw=512,pf=4,tile=2,vec=2,$B"
    "lap 8 f64 512 align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=4,tile=2,vec=2 align=32,bx=32,by=8,lb=256,nw=256,pf=4,tile=2,vec=2,$B"
    "d2z 4 f32 1024 align=32,by=1,lb=64,nt=1,nw=16,split=2,vec=4"
)
for cell in "${cells[@]}"; do
    set -- $cell
    [ "$(left)" -gt 30 ] || { say "$1 R=$2 $3 $4^3: skipped, out of time"; continue; }
    args=()
    for c in "${@:5}"; do args+=(--config "$c"); done
    log=$dir/time-$1-$2-$3-$4
    timeout $(( $(left) > 120 ? 120 : $(left) )) "$FDTUNE" bench --op "$1" --R "$2" \
        --precision "$3" --grid "$4^3" "${args[@]}" --json >"$log.json" 2>"$log.log"
    rc=$?
    python3 - "$log.json" "$1 R=$2 $3 $4^3" "$rc" <<'PY' | tee -a "$sum"
import json, sys
path, cell, rc = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print("%s: no JSON (exit %s): %s" % (cell, rc, e)); sys.exit()
print("%s: exit %s, copy %.1f GB/s" % (cell, rc, d.get("copy_gbs") or 0))
for r in d.get("results", []):
    if r.get("status") == "ok":
        print("  %-90s %8.1f GB/s  %.4f of copy" % (r["config"], r["gbs"], r["frac_copy"]))
    else:
        print("  %-90s %s" % (r.get("config"), r.get("status")))
PY
done
say "bulk_check: $(( $(date +%s) - start )) s"
tar -czf "$OUTDIR/bulk_check.tar.gz" -C "$OUTDIR" bulk_check && rm -rf "$dir"
