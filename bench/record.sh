#!/usr/bin/env bash
# Recordings for the stopping rules' replay (issue 30): full-budget tunes (--search-all: no
# early stop) of the five operators at one radius, precision and grid per GPU, all GPUs at
# once, each pinned to its share of the host's cores, each into its own database; then
# `fdtune db merge` of them into one recording. --time bounds each tune (a recording cut by
# it says so: its runs are marked cut short). Usage: bench/record.sh "R:P:G" ...  (e.g.
# "4:f32:512^3" "8:f32:512^3" "4:f64:512^3" "6:f64:512^3"), one per GPU.
# Environment: FDTUNE (default build/fdtune), OUTDIR (default bench/results/record), TIME
# (--time of each tune, default 7m), BUDGET (default: the recipes').
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/record}
TIME=${TIME:-7m}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes}
[ $# -ge 1 ] || { echo "usage: bench/record.sh R:P:G ..." >&2; exit 2; }
mkdir -p "$OUTDIR"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -ge "$#" ] || { echo "$# recordings need $# GPUs, $ngpu visible" >&2; exit 3; }
per=$(( $(nproc --all) / $# ))
i=0
for spec in "$@"; do
    IFS=: read -r R P G <<<"$spec"
    lo=$((i * per))
    name="r${R}_${P}_${G%^3}"
    ( t0=$(date +%s)
      CUDA_VISIBLE_DEVICES=$i taskset -c "$lo-$((lo + per - 1))" "$FDTUNE" --gpu auto --R "$R" \
          --precision "$P" --grid "$G" --search-all --time "$TIME" ${BUDGET:+--budget "$BUDGET"} \
          --db "$OUTDIR/$name.db" --json >"$OUTDIR/$name.json" 2>"$OUTDIR/$name.txt"
      echo "$name rc=$? $(( $(date +%s) - t0 )) s" ) &
    i=$((i + 1))
done
wait
python3 - "$OUTDIR" <<'PY'
import json, sys, glob, os
for f in sorted(glob.glob(os.path.join(sys.argv[1], "r*.json"))):
    try:
        j = json.load(open(f))
    except Exception as e:
        print(os.path.basename(f), "no summary:", e); continue
    for r in j.get("problems", []):
        print("%-22s %-5s tried %4s ok %4s best %.3f of copy, %s" % (
            os.path.basename(f)[:-5], r["op"], r.get("tried"), r.get("ok"),
            r.get("best_frac_copy") or 0, r.get("stopped")))
PY
