#!/usr/bin/env bash
# Several tuners on one node at once (issue 30's "four tuners side by side"): one default
# `fdtune --gpu auto --R 4 --grid G` per GPU, each pinned to its own share of the host's
# cores (taskset: cores i*C .. i*C+C-1, C = cores / GPUs) and to its GPU
# (CUDA_VISIBLE_DEVICES), all started together, each into its own database. Prints each
# tuner's wall time, its compile time and the best fraction of copy per operator, and the
# same job alone on GPU 0 first (SOLO=0 leaves that out), so the cost of sharing the node
# shows. Each tuner compiles into a compile cache of its own, empty at the start (as four
# users' would be): with one cache the later tuners would find the first's kernels (a first
# run with SOLO=1 and one cache: 10-28 s of compiling each instead of 81 s).
# Usage: bench/side_by_side.sh
# Environment: FDTUNE (default build/fdtune), OUTDIR (default bench/results/side_by_side),
# GRID (default 512^3), NGPU (default: every visible GPU), SOLO (default 1).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/side_by_side}
GRID=${GRID:-512^3}
SOLO=${SOLO:-1}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes}
mkdir -p "$OUTDIR"
rm -rf "$OUTDIR"/*.db* "$OUTDIR"/*.json "$OUTDIR"/*.txt "$OUTDIR"/cache_*
NGPU=${NGPU:-$(nvidia-smi -L 2>/dev/null | wc -l)}
[ "$NGPU" -ge 1 ] || { echo "no GPU visible (nvidia-smi -L)"; exit 3; }
cores=$(nproc --all)
per=$((cores / NGPU))
echo "=== $NGPU GPU(s), $cores host cores: $per cores per tuner, grid $GRID"
# tune I WHO: GPU I pinned to its cores, into WHO.db; the summary JSON into WHO.json
tune() {
    local i=$1 who=$2 lo=$(( $1 * per )) t0 rc
    t0=$(date +%s.%N)
    rm -rf "$OUTDIR/cache_$who"
    FDTUNE_CACHE="$OUTDIR/cache_$who" CUDA_VISIBLE_DEVICES=$i taskset -c "$lo-$((lo + per - 1))" "$FDTUNE" --gpu auto --R 4 \
        --grid "$GRID" --db "$OUTDIR/$who.db" --json >"$OUTDIR/$who.json" 2>"$OUTDIR/$who.txt"
    rc=$?
    echo "$who rc=$rc wall $(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)") s" >>"$OUTDIR/walls.txt"
}
summary() {
    python3 - "$OUTDIR" "$@" <<'PY'
import json, sys, os
d = sys.argv[1]
walls = dict(l.split(" ", 1) for l in open(os.path.join(d, "walls.txt")).read().splitlines())
for who in sys.argv[2:]:
    try:
        j = json.load(open(os.path.join(d, who + ".json")))
    except Exception as e:
        print("%-6s %s (no summary: %s)" % (who, walls.get(who, "?"), e)); continue
    rows = j.get("problems", [])
    comp = sum((r.get("compile_s") or 0) for r in rows)
    ops = " ".join("%s %.3f (%s)" % (r["op"], r.get("best_frac_copy") or 0,
                                     (r.get("stopped") or "?").split(" (")[0]) for r in rows)
    print("%-6s %s, compile %.0f s; best of copy: %s" % (who, walls.get(who, "?"), comp, ops))
PY
}
: >"$OUTDIR/walls.txt"
if [ "$SOLO" = 1 ]; then
    tune 0 solo
    summary solo
fi
whos=()
for ((i = 0; i < NGPU; i++)); do
    tune "$i" "gpu$i" &
    whos+=("gpu$i")
done
wait
summary "${whos[@]}"
