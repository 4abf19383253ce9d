#!/usr/bin/env bash
# Compiled resource usage of the verification spread (verify_configs of lib.sh), on the CPU
# only: every (op, R, precision, grid, config) is generated and compiled with
# `fdtune gen --compile --target ARCH` for each target, two at a time (xargs -P), and the
# compiler's report becomes one CSV row per (op, R, precision, grid, config, target):
# status, registers, sgprs (AMD only), agprs (AMD targets that have them), spill_bytes (to
# memory: NVIDIA spill stores, AMD VGPR spill stores to scratch), sgpr_spills (AMD only: SGPRs
# spilled to VGPR lanes), scratch_bytes, shared_bytes (static) and dynamic_shared_bytes (the
# ring's, sized at launch). AMD targets the legacy hiprtc cannot compile (gfx940, gfx942,
# gfx1100) go through the offline clang (FDTUNE_CLANG, else the first that knows the target
# of clang-19, clang-16, ROCm's). A failed
# generation or compilation is a row with status "error: <first line of the message>".
# Rows come out in the order of the loops below, whatever order the jobs finish in.
# Compare two such files with bench/resources_compare.py. Set FDTUNE_CACHE to a dedicated
# directory to keep these compiles out of the everyday cache (reruns are then cheap).
#
# Usage: resources.sh FDTUNE OUT.csv TARGET...      e.g. resources.sh build/fdtune r.csv sm_90 gfx90a
# Subsets (space-separated lists): OPS (d2x d2y d2z lap wave), RS (1 2 4 8), PRECS (f32 f64),
# GRIDS (512^3 301x203x157); JOBS (2) compiles at a time.
set -u
if [ "${1:-}" = --one ]; then
    # one job: --one FDTUNE SEQ OP R PREC GRID TARGET CONFIG -> "SEQ<TAB>csv row"
    shift
    fdtune=$1 seq=$2 op=$3 R=$4 prec=$5 grid=$6 target=$7 config=$8
    out=$("$fdtune" gen --op "$op" --R "$R" --precision "$prec" --grid "$grid" \
        --config "$config" --compile --target "$target" 2>&1)
    rc=$?
    report=$(printf '%s\n' "$out" | grep -m1 '^//   registers ')
    key="$op,$R,$prec,$grid,\"$config\",$target"
    if [ $rc -ne 0 ] || [ -z "$report" ]; then
        msg=$(printf '%s\n' "$out" | grep -m1 -i 'error' | tr -d '"' | cut -c1-200)
        printf '%s\t%s,"error (exit %d): %s",,,,,,,,\n' "$seq" "$key" "$rc" "${msg:-no report}"
        exit 0
    fi
    num() { printf '%s\n' "$report" | sed -n "s/.*$1.*/\\1/p"; }
    regs=$(num 'registers \([0-9]*\)')
    sgprs=$(num ', \([0-9]*\) SGPRs')
    agprs=$(num ', \([0-9]*\) AGPRs')
    spill=$(num 'spills \([0-9]*\) bytes')
    sspill=$(num ', \([0-9]*\) SGPR spills')
    scratch=$(num 'scratch\/stack \([0-9]*\) bytes')
    shared=$(num 'shared \([0-9]*\) bytes')
    dyn=$(num '+ \([0-9]*\) bytes dynamic')
    printf '%s\t%s,ok,%s,%s,%s,%s,%s,%s,%s,%s\n' "$seq" "$key" "$regs" "$sgprs" "$agprs" "$spill" \
        "$sspill" "$scratch" "$shared" "${dyn:-0}"
    exit 0
fi

if [ $# -lt 3 ]; then
    sed -n '/^# Usage/,/^# GRIDS/s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
fdtune=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
csv=$2
shift 2
[ -x "$fdtune" ] || { echo "resources.sh: $fdtune is not an executable" >&2; exit 2; }
FDTUNE=$fdtune
. "$(dirname "$0")/lib.sh"

jobs=$(mktemp)
trap 'rm -f "$jobs" "$jobs.out"' EXIT
seq=0
for op in ${OPS:-d2x d2y d2z lap wave}; do
  for R in ${RS:-1 2 4 8}; do
    for prec in ${PRECS:-f32 f64}; do
      for grid in ${GRIDS:-512^3 301x203x157}; do
        for config in $(verify_configs "$op" "$prec"); do
          for target in "$@"; do
            seq=$((seq + 1))
            printf '%s %s %s %s %s %s %s %s\n' "$fdtune" "$seq" "$op" "$R" "$prec" "$grid" \
                "$target" "$config" >>"$jobs"
          done
        done
      done
    done
  done
done
echo "resources.sh: $seq compiles, ${JOBS:-2} at a time" >&2
xargs -P "${JOBS:-2}" -L 1 bash "$0" --one <"$jobs" >"$jobs.out"
{
    echo "op,R,precision,grid,config,target,status,registers,sgprs,agprs,spill_bytes,sgpr_spills,scratch_bytes,shared_bytes,dynamic_shared_bytes"
    sort -n -k1,1 "$jobs.out" | cut -f2-
} >"$csv"
failed=$(grep -c ',"error' "$csv")
echo "resources.sh: $seq rows in $csv, $failed failed" >&2
