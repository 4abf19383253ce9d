#!/bin/sh
# When a search stops (issue 30, items 1 and 3), on a CPU: a simulated GPU answers from
# tests/data/h100-replay.db (40 recorded configs a problem), and --replay runs the
# strategies against it and against h100-v1.db's exhaustive records.
#  1. the limit: d2x R=4 f64 512^3, whose recorded best runs at the copy bandwidth of its run,
#     stops within 2% (the default) of copy after a few of its 40 configs; --search-all
#     spends them all; by replay, d2x f64 1024^3 stops after one evaluation (0.6% above copy);
#  2. convergence: d2z R=4 f32 512^3 with --stop-after 5 stops after 5 evaluations without a
#     gain; --replay of h100-v1.db's d2y (900 configs) stops the model strategy converged;
#  3. the budget: --budget 7 is never passed, with the rules or with --search-all;
#  4. a rerun resumes where the last stopped and measures more;
#  5. why it stopped is in every output: the text and JSON summaries, query best (table and
#     JSON), the exported header and export JSON; a merge keeps it;
#  6. bad values of the options are usage errors that change nothing;
#  7. what fdtune already answers is measured first: d2x tuned at 512^3, then at 1024^3 into
#     the same database, measures the 512^3 best right after the baseline and says so;
#     --cold measures nothing first; a system database that cannot be read fails the tune
#     before anything is written.
# Usage: test_stop.sh FDTUNE SOURCE_DIR. Prints every failed check; exit 1 when any did.
set -u
fdtune=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-stop.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$src/tests/testutil.sh"
export FDTUNE_CACHE="$tmp/cache"
export FDTUNE_SYSTEM_DB= # the databases named here alone answer
rec=$src/tests/data/h100-replay.db
sim() { # NAME DB ARGS...: a simulated tune of R=4 512^3, the JSON summary in $tmp/out
    n=$1 db=$2
    shift 2
    run "$n" 0 tune --simulate-from "$rec" --R 4 --grid 512^3 --db "$db" --json "$@"
}

# ---------------------------------------------------------------- 1. the limit
sim "d2x f64 at the limit" "$tmp/a.db" --op d2x --precision f64
cp "$tmp/out" "$tmp/limit.json"
py "d2x f64 stops within 2% of copy, early" '
import json, sys
p = json.load(open(sys.argv[1]))["problems"][0]
assert p["stopped"].startswith("within ") and p["stopped"].endswith("% of copy"), p["stopped"]
assert 0 <= p["headroom"] <= 0.02, p["headroom"]
assert 1 <= p["tried"] < 40, p["tried"]
' "$tmp/limit.json"
sim "d2x f64, --search-all" "$tmp/b.db" --op d2x --precision f64 --search-all
py "--search-all spends the space" '
import json, sys
p = json.load(open(sys.argv[1]))["problems"][0]
assert p["stopped"].startswith("space: 40 of 40"), p["stopped"]
assert p["tried"] >= 40, p["tried"]
' "$tmp/out"

# ---------------------------------------------------------------- 2. convergence
sim "d2z converges" "$tmp/c.db" --op d2z --stop-after 5
py "d2z stops after 5 evaluations without gain" '
import json, sys
p = json.load(open(sys.argv[1]))["problems"][0]
assert p["stopped"].startswith("converged: 5 evaluations without gain ("), p["stopped"]
assert p["stopped"].endswith(" above copy)"), p["stopped"]
assert 6 <= p["tried"] < 40, p["tried"]
' "$tmp/out"
run "replay of an exhaustive record" 0 tune --gpu H100 --R 4 --grid 512^3 --op d2y \
    --replay "$src/tests/data/h100-v1.db" --stop-after 40 --stop-within 1 --json
py "replay: the model strategy converges on d2y, its best within 1% of the record's" '
import json, sys
p = json.load(open(sys.argv[1]))["problems"][0]
s = {x["strategy"]: x for x in p["strategies"]}
m = s["model"]
assert p["configs"] == 900, p["configs"]
assert m["stopped"].startswith("converged: 40 evaluations without gain"), m["stopped"]
assert m["stopped_after"] < 100 and m["stopped_gap"] <= 0.01, m
assert 1 <= m["stopped_within_1pct"] <= m["stopped_after"], m
' "$tmp/out"
run "replay --search-all" 0 tune --gpu H100 --R 4 --grid 512^3 --op d2y --strategy model \
    --replay "$src/tests/data/h100-v1.db" --search-all --json
py "replay --search-all: the whole record" '
import json, sys
m = json.load(open(sys.argv[1]))["problems"][0]["strategies"][0]
assert m["strategy"] == "model" and m["stopped_after"] == 900, m
assert m["stopped"].startswith("space: 900 of 900"), m["stopped"]
' "$tmp/out"
run "replay: the limit" 0 tune --gpu H100 --R 4 --grid 1024^3 --precision f64 --op d2x \
    --strategy model --replay "$rec" --json
py "replay: d2x f64 1024^3 stops at copy after one evaluation" '
import json, sys
m = json.load(open(sys.argv[1]))["problems"][0]["strategies"][0]
assert m["stopped_after"] == 1 and m["stopped"].startswith("within "), m
' "$tmp/out"

# ---------------------------------------------------------------- 3. the budget
for extra in "" "--search-all"; do
    sim "d2z --budget 7 $extra" "$tmp/d$extra.db" --op d2z --budget 7 --stop-after 100 $extra
    py "the budget is an upper bound ($extra)" '
import json, sys
p = json.load(open(sys.argv[1]))["problems"][0]
assert p["stopped"].startswith("budget: 7 of 7"), p["stopped"]
assert p["tried"] <= 8, p["tried"]  # the budget, and the baseline when it is not in the space
' "$tmp/out"
done
run "replay --budget" 0 tune --gpu H100 --R 4 --grid 512^3 --op d2y --replay \
    "$src/tests/data/h100-v1.db" --budget 30 --search-all --json
py "replay: the budget bounds every strategy" '
import json, sys
for m in json.load(open(sys.argv[1]))["problems"][0]["strategies"]:
    assert m["stopped_after"] == 30 and m["stopped"].startswith("budget: 30 of 30"), m
' "$tmp/out"

# ---------------------------------------------------------------- 4. a rerun searches on
sim "d2x f64 rerun" "$tmp/a.db" --op d2x --precision f64
py "a rerun resumes and measures more" '
import json, sys
first = json.load(open(sys.argv[1]))["problems"][0]
p = json.load(open(sys.argv[2]))["problems"][0]
assert p["resumed"] >= first["tried"] - 1 and p["tried"] >= 1, (first["tried"], p)
assert p["stopped"], p
' "$tmp/limit.json" "$tmp/out"

# ---------------------------------------------------------------- 5. every output says why
run "text summary" 0 tune --simulate-from "$rec" --R 4 --grid 512^3 --db "$tmp/e.db" --op d2x \
    --precision f64
expect_in "text summary: why d2x stopped" "$tmp/out" "; stopped: within "
run "query best --json" 0 query best --db "$tmp/e.db" --json
py "query best: the stopped field" '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"] if isinstance(d, dict) and "rows" in d else d
rows = rows if isinstance(rows, list) else next(v for v in d.values() if isinstance(v, list))
assert len(rows) == 1 and rows[0]["stopped"].startswith("within "), rows
' "$tmp/out"
run "query best" 0 query best --db "$tmp/e.db"
expect_in "query best: the column" "$tmp/out" "stopped"
expect_in "query best: the reason" "$tmp/out" "% of copy"
run "export" 0 export --db "$tmp/e.db" -o "$tmp/e.h"
expect_in "export: the header says why" "$tmp/e.h" " *       search stopped: within "
run "export json" 0 export --db "$tmp/e.db" --format json -o "$tmp/e.json"
expect_in "export json: stopped" "$tmp/e.json" '"stopped": "within '

run "db merge" 0 db merge -o "$tmp/merged.db" "$tmp/e.db"
run "query best of the merge" 0 query best --db "$tmp/merged.db" --json
py "a merge keeps why the search stopped" '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"] if isinstance(d, dict) and "rows" in d else d
rows = rows if isinstance(rows, list) else next(v for v in d.values() if isinstance(v, list))
assert len(rows) == 1 and rows[0]["stopped"].startswith("within "), rows
' "$tmp/out"

# ---------------------------------------------------------------- 7. the known answer first
sim "known: d2x at 512^3" "$tmp/k.db" --op d2x
cp "$tmp/out" "$tmp/k512.json"
cp "$tmp/k.db" "$tmp/kc.db" # for --cold below: the same 512^3 result known
run "known: d2x at 1024^3, the same database" 0 tune --simulate-from "$rec" --R 4 \
    --grid 1024^3 --db "$tmp/k.db" --json --op d2x
cp "$tmp/out" "$tmp/k1024.json"
py "known: the 512^3 best measured first at 1024^3, and said so" '
import json, sqlite3, sys
a = json.load(open(sys.argv[1]))["problems"][0]
b = json.load(open(sys.argv[2]))["problems"][0]
assert a["start_config"] is None, a["start_config"]  # nothing was known
assert b["start_config"] == a["best_config"], (b.get("start_config"), a["best_config"])
assert b["start_source"].startswith("user database, grid: "), b["start_source"]
assert b["start_source"].endswith(" 512x512x512"), b["start_source"]
db = sqlite3.connect(sys.argv[3])
keys = [k for (k,) in db.execute(
    "SELECT c.key FROM evaluations e JOIN configs c ON c.id = e.config_id "
    "WHERE e.run_id = ? ORDER BY e.id", (b["run"],))]
order = [k for i, k in enumerate(keys) if k not in keys[:i]]
assert order[0] == b["baseline_config"] and order[1] == b["start_config"], order[:3]
' "$tmp/k512.json" "$tmp/k1024.json" "$tmp/k.db"
run "known: d2x at 256^3, the text summary" 0 tune --simulate-from "$rec" --R 4 \
    --grid 256^3 --db "$tmp/k.db" --op d2x
expect_in "known: the summary says what was measured first" "$tmp/out" \
    "measured first: what fdtune answered (user database, grid: "
run "known: --cold" 0 tune --simulate-from "$rec" --R 4 --grid 1024^3 --db "$tmp/kc.db" \
    --json --op d2x --cold
py "known: --cold measures nothing first" '
import json, sys
p = json.load(open(sys.argv[1]))["problems"][0]
assert p["start_config"] is None and p["start_source"] is None, p["start_config"]
' "$tmp/out"
sum_before=$(cksum <"$tmp/k.db")
export FDTUNE_SYSTEM_DB="$tmp/missing.db"
run "known: an unreadable system database" 4 tune \
    --simulate-from "$rec" --R 4 --grid 256^3 --db "$tmp/k.db" --op d2y
expect_in "known: why" "$tmp/err" "system database: FDTUNE_SYSTEM_DB=$tmp/missing.db"
[ "$(cksum <"$tmp/k.db")" = "$sum_before" ] || fail "known: the failed tune changed the database"
run "known: --cold reads no system database" 0 tune \
    --simulate-from "$rec" --R 4 --grid 256^3 --db "$tmp/k2.db" --op d2y --cold --budget 3
export FDTUNE_SYSTEM_DB=

# ---------------------------------------------------------------- 6. bad values
for bad in "--stop-within 0" "--stop-within 101" "--stop-within x" "--stop-after 0" \
    "--stop-after -3"; do
    # shellcheck disable=SC2086
    run "tune $bad" 2 tune --simulate-from "$rec" --R 4 --grid 512^3 --db "$tmp/bad.db" \
        --op d2x $bad
    [ ! -e "$tmp/bad.db" ] || fail "tune $bad: wrote a database"
done
# a plan's task runs what the plan says: the stopping rules are refused beside --tasks
run "tune --tasks --search-all" 2 tune --tasks "$tmp/none.jsonl" --search-all
expect_in "tune --tasks --search-all: why" "$tmp/err" "stopping rules"
run "tune --tasks --cold" 2 tune --tasks "$tmp/none.jsonl" --cold
expect_in "tune --tasks --cold: why" "$tmp/err" "--cold"
run "tune --dry-run --cold" 2 tune --gpu H100 --R 4 --grid 512^3 --op d2x --dry-run --cold
expect_in "tune --dry-run --cold: why" "$tmp/err" "--cold changes what a tune measures first"
finish
