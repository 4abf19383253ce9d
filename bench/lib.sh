# Shared by the bench scripts: where fdtune is, where results go, and config lists.
# FDTUNE: the binary (default: ./build/fdtune); OUTDIR: results (default: bench/results).
FDTUNE=${FDTUNE:-$(cd "$(dirname "$0")/.." && pwd)/build/fdtune}
OUTDIR=${OUTDIR:-$(cd "$(dirname "$0")" && pwd)/results}
mkdir -p "$OUTDIR"

# Verification spread: tile > 1, windows, LDS, vectors, odd block shapes, order, split, nt,
# launch bounds. $1 = op, $2 = precision.
verify_configs() {
    local op=$1 v=4
    [ "$2" = f64 ] && v=2
    echo "default"
    echo "bx=32,by=8,tile=4"
    echo "bx=16,by=16,vec=$v,align=64,nt=1"
    echo "bx=64,by=4,nw=16"
    echo "bx=24,by=5,bz=3,tile=3,vec=2,align=2,order=yzx,split=3"
    # the register window with planes loaded ahead, a window length that leaves a remainder
    echo "bx=64,by=2,nw=23,pf=3,vec=$v,align=64,order=zyx"
    if [ "$op" = d2z ]; then
        echo "bx=32,by=8,nw=64,vec=$v,align=64,tile=2"
        echo "bx=64,by=2,nw=157,vec=$v,align=64,order=zyx,nt=1"
    else
        echo "bx=32,by=8,nw=32,lds=1,vec=$v,align=64"
        echo "bx=32,by=4,nw=8,tile=2,lds=1,nt=1,lb=256"
    fi
    # the asynchronous ring (lds=2): vector and scalar copies, deeper prefetch, an odd block
    # with a tile, order and split; none of them spills up to R=8 in f64
    echo "bx=32,by=8,nw=32,lds=2,vec=$v,align=64,pf=2"
    echo "bx=24,by=5,nw=7,lds=2,align=2,tile=2,order=yzx,split=3"
    echo "bx=16,by=4,nw=157,lds=2,vec=2,align=2,nt=1"
    # a deep ring with the L2 prefetch hint on a window that leaves a remainder, with a split
    echo "bx=64,by=2,nw=40,lds=2,vec=2,align=32,tile=2,pf=6,split=2,l2pf=256"
    # the stream (lds=3): vector copies, register blocking in y, an odd block with scalar
    # copies, order and split, a deep prefetch with the L2 hint on a window that leaves a
    # remainder; none of them spills up to R=8 in f64
    echo "bx=32,by=8,nw=32,lds=3,vec=$v,align=64,pf=2"
    echo "bx=32,by=4,nw=16,lds=3,vec=2,align=32,tile=2,pf=3,nt=1"
    echo "bx=24,by=5,nw=7,lds=3,align=2,tile=2,order=yzx,split=3"
    echo "bx=64,by=2,nw=40,lds=3,vec=2,align=32,pf=6,split=2,l2pf=256"
    # the stream with slot barriers (mbar=1; d2z has no barrier to replace): one plane ahead
    # and an odd block with order and split
    if [ "$op" != d2z ]; then
        echo "bx=32,by=4,nw=16,lds=3,vec=2,align=32,tile=2,pf=2,mbar=1"
        echo "bx=24,by=5,nw=7,lds=3,align=2,tile=2,order=yzx,split=3,pf=4,mbar=1"
    fi
}

# The tuned best of operator $2 at grid $3 in an earlier run's CSV $1 (bench/issue5_report.py's).
best_in_csv() {
    python3 - "$@" <<'PY'
import csv, sys
path, op, g = sys.argv[1:]
rows = [r for r in csv.reader(open(path)) if r[:3] == [op, g + "^3", "fdtune-tuned"]]
print(rows[0][3] if rows else "")
PY
}

config_args() { while read -r c; do printf -- '--config %s ' "$c"; done; }

# The summary of `fdtune bench --probe --json` in $1, cell $2, bench's exit status $3: how
# many configs verified, how many of them have $4 in their config, and each failure.
probe_summary() {
    python3 - "$@" <<'PY'
import json, sys
path, cell, rc, mark = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print("%s: no JSON (exit %s): %s" % (cell, rc, e)); sys.exit()
res = d.get("results", [])
ok = [r for r in res if r.get("status") == "ok"]
marked = [r for r in ok if mark in r.get("config", "")]
print("%s: exit %s, %d of %d configs verified, %d of them %s" % (cell, rc, len(ok), len(res),
      len(marked), mark))
for r in res:
    if r.get("status") != "ok":
        print("  %s: %s %s" % (r.get("config"), r.get("status"), r.get("error", r.get("message", ""))))
PY
}

# compute-sanitizer's tool $1 over `fdtune bench --op $2 --grid $3 --config $4 --probe`, its
# output in $5 (radius $6 and precision $7 when given, else R=4 f32); one line: the tool, the
# cell, the exit status (9: errors found) and the tool's summary.
sanitize() {
    timeout 100 compute-sanitizer --tool "$1" --target-processes all --error-exitcode 9 \
        "$FDTUNE" bench --op "$2" --R "${6:-4}" --precision "${7:-f32}" --grid "$3" \
        --config "$4" --probe >"$5" 2>&1
    echo "$1 $2${6:+ R=$6}${7:+ $7} $4: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY|Error' "$5" ||
        echo 'no summary'))"
}

# Nsight Compute's sections of one launch of candidate $4 (operator $1, radius $2, precision
# $3, grid $5; not the reference kernel), with the DRAM and L2 bytes, the instructions and the
# stall reasons per issue that the issue-31 notes quote, on stdout.
ncu_profile() {
    ncu --clock-control none --target-processes all --kernel-name "regex:fdt_${1}_r" --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio \
        "$FDTUNE" bench --op "$1" --R "$2" --precision "$3" --grid "$5" --config "$4" --probe 2>&1 |
        grep -vE "^==PROF==|^ *$" | head -150
}

# A recipe of one config, for the model's dry run of it: operator $1, config $2 ('default':
# the reference config).
config_recipe() {
    python3 - "$1" "$2" <<'PY'
import sys
op, cfg = sys.argv[1], sys.argv[2]
print('ops { "%s" }' % op)
for kv in ([] if cfg == "default" else cfg.split(",")):
    k, v = kv.split("=")
    print('param("%s", { %s })' % (k, v if v.lstrip("-").isdigit() else '"%s"' % v))
PY
}

# Field $1 (name, uuid, arch, ...) of the first visible GPU (fdtune devices --json), empty
# when none is visible; device_name: its name.
device_field() {
    "$FDTUNE" devices --json --no-bandwidth 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
devs = d.get("devices", d) if isinstance(d, dict) else d
print(devs[0].get(sys.argv[1]) or "" if devs else "")' "$1" 2>/dev/null
}
device_name() { device_field name; }

# The catalogue name a dry run takes for the GPU named $1 (a dry run probes nothing, so no
# 'auto'): $GPU, else the device name, without its vendor, else its first word ("NVIDIA H100
# 80GB HBM3" -> H100); empty when the catalogue has none of them.
catalogue_gpu() {
    local base=${1#NVIDIA } cand
    base=${base#AMD }; base=${base#Instinct }
    for cand in "${GPU:-}" "$1" "$base" "${base%% *}"; do
        [ -n "$cand" ] || continue
        if "$FDTUNE" --gpu "$cand" --op lap --R 1 --grid 8^3 --dry-run --top 0 >/dev/null 2>&1; then
            echo "$cand"; return 0
        fi
    done
}
