#!/bin/sh
# Replays the search strategies against a database recorded on a real H100 (exhaustive R=4
# f32 512^3 runs of d2x and d2y: every config of the shipped recipes measured), without a GPU.
# The recorded best and the exhaustive strategy's count are facts of the record; the model
# strategy must reach within 3% of the best in a handful of evaluations and before random.
# Usage: test_replay.sh FDTUNE SOURCE_DIR
set -u
fdtune=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$fdtune" --gpu H100 --R 4 --grid 512^3 --op d2x,d2y --replay "$src/tests/data/h100-replay.db" \
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
# a problem the record does not hold is an error, not an empty success
"$fdtune" --gpu H100 --R 4 --grid 256^3 --op d2x --replay "$src/tests/data/h100-replay.db" \
    >"$tmp/none" 2>&1 && fail "replay of an unrecorded problem succeeded"
grep -q "no evaluations" "$tmp/none" || fail "unclear message: $(cat "$tmp/none")"
echo "ok"
