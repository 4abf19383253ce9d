#!/usr/bin/env bash
# For an AMD GPU (MI250X GCD first; any gfx9 device runs it): measures with `fdtune bench`
# the seeds' kernels of tests/data/mi250x-seeds.txt, each as fdtune expresses it, and prints
# measured GB/s next to the seeds' published MI250X figure; the analytic model's prediction
# for the same rows is what `ctest --preset default -R test_arch -V` prints. Then checks the
# timing flush: a 256^3 problem must be timed with the cache flushed (on an MI300X the flush
# covers the 256 MiB Infinity Cache). Writes $OUTDIR/amd-seeds-*.json.
# Usage: bench/amd_seeds.sh [DEVICE]   (DEVICE: fdtune's device index, default 0)
set -u
. "$(dirname "$0")/lib.sh"
dev=${1:-0}

# The rows: tests/data/mi250x-seeds.txt (source|op|R|precision|N|config|GB/s|not held)
seeds=$(cd "$(dirname "$0")/.." && pwd)/tests/data/mi250x-seeds.txt

printf '%-24s %-48s %9s %9s %7s\n' problem config published measured ratio
n=0
grep -v '^#' "$seeds" | while IFS='|' read -r _src op R prec N config pub _; do
    prob="$op $R $prec $N^3"
    n=$((n + 1))
    json=$OUTDIR/amd-seeds-$n.json
    "$FDTUNE" bench --device "$dev" --op "$op" --R "$R" --precision "$prec" --grid "$N^3" \
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
