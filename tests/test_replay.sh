#!/bin/sh
# Replays the search strategies against databases recorded on a real H100, without a GPU.
# tests/data/h100-v1.db holds exhaustive R=4 f32 512^3 runs of d2x and d2y (every config of
# the recipes of its day measured): the recorded best and the exhaustive strategy's count are
# facts of the record; the model strategy must reach within 3% of the best in a handful of
# evaluations and before random (a comparison only an exhaustive record can judge).
# tests/data/h100-replay.db, the current recording (budget 40 per problem), replays all five
# operators, each over the 40 configs it measured, with its recorded bests.
# Usage: test_replay.sh FDTUNE SOURCE_DIR
set -u
fdtune=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$fdtune" --gpu H100 --R 4 --grid 512^3 --op d2x,d2y --replay "$src/tests/data/h100-v1.db" \
    --json >"$tmp/r.json" 2>"$tmp/err" || fail "replay exited $?: $(cat "$tmp/err")"
python3 - "$tmp/r.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["mode"] == "replay", d
p = {x["op"]: x for x in d["problems"]}
s = {op: {y["strategy"]: y for y in p[op]["strategies"]} for op in p}
def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
check(p["d2x"]["configs"] == 342 and p["d2y"]["configs"] == 900, "configs recorded")
check(p["d2x"]["best_config"] == "align=32,bx=128,by=8,lb=1024,nt=1,vec=4", "d2x best")
check(s["d2x"]["exhaustive"]["evals_to_best"] == 249, "exhaustive reaches the d2x best in record order")
for op in ("d2x", "d2y"):
    m, r = s[op]["model"], s[op]["random"]
    check(1 <= m["evals_within_3pct"] <= 5, f"{op}: model within 3% after {m['evals_within_3pct']}")
    check(m["evals_within_3pct"] <= r["evals_within_3pct"], f"{op}: model not better than random")
    check(m["evals_to_best"] < s[op]["exhaustive"]["evals_to_best"], f"{op}: model after exhaustive")
print("replay ok:", {op: s[op]["model"]["evals_within_3pct"] for op in s})
PY
# the current recording: the five operators, 40 recorded configs each, its bests
"$fdtune" --gpu H100 --R 4 --grid 512^3 --replay "$src/tests/data/h100-replay.db" \
    --json >"$tmp/five.json" 2>"$tmp/err" || fail "replay of five exited $?: $(cat "$tmp/err")"
python3 - "$tmp/five.json" <<'PY' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
p = {x["op"]: x for x in d["problems"]}
def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
check(sorted(p) == ["d2x", "d2y", "d2z", "lap", "wave"], f"five operators replayed: {sorted(p)}")
for op, x in p.items():
    check(x["configs"] == 40, f"{op}: {x['configs']} configs recorded, not 40")
    s = {y["strategy"]: y for y in x["strategies"]}
    check(1 <= s["exhaustive"]["evals_to_best"] <= 40, f"{op}: exhaustive reaches the best")
check(p["d2x"]["best_config"] == "align=32,bx=32,lb=128,vec=4", "d2x best")
check(p["wave"]["best_config"] == "align=32,by=8,l2pf=256,lb=512,lds=2,nw=64,pf=3,tile=2,vec=2",
      "wave best")
print("replay of five ok")
PY
# a problem the record does not hold is an error, not an empty success
"$fdtune" --gpu H100 --R 4 --grid 640^3 --op d2x --replay "$src/tests/data/h100-replay.db" \
    >"$tmp/none" 2>&1 && fail "replay of an unrecorded problem succeeded"
grep -q "no evaluations" "$tmp/none" || fail "unclear message: $(cat "$tmp/none")"
echo "ok"
