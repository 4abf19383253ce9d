#!/usr/bin/env bash
# For an AMD GPU (MI250X GCD first; any gfx9 device runs it): measures with `fdtune bench`
# the seeds' kernels of tests/test_arch.c's table, each as fdtune expresses it, and prints
# measured GB/s next to the seeds' published MI250X figure; the analytic model's prediction
# for the same rows is what `ctest --preset default -R test_arch -V` prints. Then checks the
# timing flush: a 256^3 problem must be timed with the cache flushed (on an MI300X the flush
# covers the 256 MiB Infinity Cache). Writes $OUTDIR/amd-seeds-*.json.
# Usage: bench/amd_seeds.sh [DEVICE]   (DEVICE: fdtune's device index, default 0)
set -u
. "$(dirname "$0")/lib.sh"
dev=${1:-0}

# problem (op R precision grid) | published GB/s | config, one per row of test_arch's table
rows() {
    cat <<'EOF'
d2x 1 f32 512^3|971|bx=256,by=1,lb=256
d2x 2 f32 512^3|995|bx=256,by=1,lb=256
d2x 3 f32 512^3|977|bx=256,by=1,lb=256
d2x 4 f32 512^3|956|bx=256,by=1,lb=256
d2y 1 f32 512^3|948|bx=64,by=4,lb=256
d2y 2 f32 512^3|982|bx=64,by=4,lb=256
d2y 3 f32 512^3|965|bx=64,by=4,lb=256
d2y 4 f32 512^3|940|bx=64,by=4,lb=256
d2z 1 f32 512^3|915|bx=64,by=8,lb=512
d2z 2 f32 512^3|753|bx=64,by=8,lb=512
d2z 3 f32 512^3|394|bx=64,by=8,lb=512
d2z 4 f32 512^3|217|bx=64,by=8,lb=512
d2x 4 f32 512^3|990|bx=256,by=1,lb=256,align=64
d2y 4 f32 512^3|966|bx=64,by=4,lb=256,align=64
d2z 4 f32 512^3|297|bx=64,by=8,lb=512,align=64
d2z 4 f32 512^3|1200|bx=64,by=4,lb=256,nw=64,align=64
lap 1 f64 510^3|965|bx=256,by=1
lap 1 f64 510^3|1035|bx=256,by=1,tile=2
lap 1 f64 510^3|1084|bx=256,by=1,tile=4
lap 1 f64 510^3|1104|bx=256,by=1,tile=8
lap 1 f64 1022^3|555|bx=256,by=1,lb=256,tile=8,nt=1
lap 1 f64 1022^3|934|bx=128,by=1,bz=8,lb=1024,tile=8,nt=1
lap 1 f64 1022^3|1070|bx=256,by=1,lb=256,tile=8,nt=1,order=yzx
lap 1 f64 1022^3|1176|bx=256,by=1,lb=256,tile=8,nt=1,split=4
EOF
}

printf '%-24s %-48s %9s %9s %7s\n' problem config published measured ratio
n=0
rows | while IFS='|' read -r prob pub config; do
    set -- $prob
    n=$((n + 1))
    json=$OUTDIR/amd-seeds-$n.json
    "$FDTUNE" bench --device "$dev" --op "$1" --R "$2" --precision "$3" --grid "$4" \
        --config "$config" --json >"$json" 2>"$json.log" || true
    gbs=$(python3 -c 'import json,sys
try:
    r = json.load(open(sys.argv[1]))["results"][0]
    print("%.0f" % r["gbs"] if r["status"] == "ok" else r["status"])
except Exception as e:
    print("error")' "$json")
    ratio=$(python3 -c 'import sys
try: print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))
except ValueError: print("-")' "$gbs" "$pub")
    printf '%-24s %-48s %9s %9s %7s\n' "$prob" "$config" "$pub" "$gbs" "$ratio"
done

# The flush: a problem far below the last-level cache is timed from memory.
json=$OUTDIR/amd-seeds-flush.json
"$FDTUNE" bench --device "$dev" --op lap --R 4 --grid 256^3 --config default --json \
    >"$json" 2>"$json.log" || true
python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["results"][0]
print("lap R=4 256^3: cache_flushed=%s, %.0f GB/s" % (r["cache_flushed"], r["gbs"]))
sys.exit(0 if r["cache_flushed"] else 1)' "$json"
