#!/usr/bin/env bash
# Many GPUs on real hardware (issue "tune a whole machine"): what tests/test_many.sh checks on
# simulated GPUs, on the GPUs of this machine (one is enough for every step but the spread).
#  1. fdtune --gpu all: d2x, d2y, d2z and lap at R=4 f32 on 256^3 and 384^3 (8 problems),
#     model strategy, budget $BUDGET, into all.db: per GPU the problems it tuned, the
#     retries (none expected), the wall time; PASS when every problem has a verified best
#     and, with two GPUs or more, every GPU tuned at least one;
#  2. the same command again: PASS when every problem went back to the GPU that measured it
#     and resumed there (a budget measures that many more configs);
#  3. the same request as a plan of 8 tasks run by contrib/node/run-tasks.sh (one GPU each,
#     as many at once as GPUs) into shards, merged when `fdtune db merge` exists: PASS when
#     all 8 shards are published with a verified best each;
#  4. with two GPUs or more, a GPU that fails: SIGKILL to GPU 1's process in the middle of a
#     run (--devices 0,1, budget 40): PASS when its problem is retried on another GPU and
#     the run still succeeds.
# Prints PASS/FAIL per step and the summaries. Usage: bench/multigpu.sh
# Environment: FDTUNE (default build/fdtune), OUTDIR (default bench/results/multigpu),
# BUDGET (default 30).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/multigpu}
BUDGET=${BUDGET:-30}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes}
mkdir -p "$OUTDIR"
rm -rf "$OUTDIR"/*.db* "$OUTDIR/plan"
req=(--op d2x,d2y,d2z,lap --R 4 --grid 256^3 --grid 384^3 --strategy model --budget "$BUDGET")
ngpus=$("$FDTUNE" devices --json --no-bandwidth | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["devices"]))')
echo "=== $ngpus GPU(s)"
verdict() { if [ "$1" -eq 0 ]; then echo "PASS: $2"; else echo "FAIL: $2"; fi; }

check() { # JSON WHAT PYTHON-ASSERTS
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1])); n = $ngpus
$3
" "$1"
    verdict $? "$2"
}

echo "=== 1. fdtune --gpu all"
t0=$(date +%s)
"$FDTUNE" --gpu all "${req[@]}" --db "$OUTDIR/all.db" --json >"$OUTDIR/all.json" 2>"$OUTDIR/all.log"
echo "exit $?, $(( $(date +%s) - t0 )) s"
check "$OUTDIR/all.json" "every problem tuned, every GPU used" '
ps = d["problems"]
print([(p["gpu"], p["op"], p["nx"], p["best_gbs"]) for p in ps])
print("retries:", d["retries"])
assert len(ps) == 8 and all(p["state"] == "done" and p["best_config"] for p in ps)
assert n < 2 or all(g["problems_tuned"] > 0 for g in d["gpus"])'

echo "=== 2. again: resumes"
"$FDTUNE" --gpu all "${req[@]}" --db "$OUTDIR/all.db" --json >"$OUTDIR/again.json" 2>"$OUTDIR/again.log"
echo "exit $?"
check "$OUTDIR/again.json" "every problem resumed on the GPU that measured it" '
first = {(p["op"], p["nx"]): p["gpu"] for p in json.load(open("'"$OUTDIR/all.json"'"))["problems"]}
assert all(p["resumed"] > 0 and p["gpu"] == first[(p["op"], p["nx"])] for p in d["problems"]), d["problems"]'

echo "=== 3. a plan of tasks on this node"
mkdir -p "$OUTDIR/plan"
"$FDTUNE" plan "${req[@]}" -o "$OUTDIR/plan/tasks.jsonl"
t0=$(date +%s)
FDTUNE=$FDTUNE "$root/contrib/node/run-tasks.sh" "$OUTDIR/plan/tasks.jsonl" 2>&1 | tail -12
echo "$(( $(date +%s) - t0 )) s"
ok=0
for i in 0 1 2 3 4 5 6 7; do
    "$FDTUNE" query best --db "$OUTDIR/plan/results/task-000$i.db" --json 2>/dev/null |
        grep -q '"config"' || ok=1
done
verdict $ok "8 shards published, a best in each"

if [ "$ngpus" -ge 2 ]; then
    echo "=== 4. a GPU's process killed in the middle of a run"
    "$FDTUNE" --devices 0,1 --op d2x,d2y --R 4 --grid 512^3 --strategy model --budget 40 \
        --db "$OUTDIR/kill.db" --json >"$OUTDIR/kill.json" 2>"$OUTDIR/kill.log" &
    pid=$!
    sleep 20
    # GPU 1's process: the child of fdtune whose log lines say [GPU 1]; the second child
    victim=$(pgrep -P "$pid" | sed -n 2p)
    echo "killing $victim (children of $pid: $(pgrep -P "$pid" | tr '\n' ' '))"
    [ -n "$victim" ] && kill -9 "$victim"
    wait "$pid"
    echo "exit $?"
    grep -E "retried|failed" "$OUTDIR/kill.log" | head
    check "$OUTDIR/kill.json" "the killed GPU's problem retried elsewhere" '
assert len(d["retries"]) == 1 and d["retries"][0]["to_gpu"] is not None, d["retries"]
assert all(p["state"] == "done" for p in d["problems"]), d["problems"]'
fi
