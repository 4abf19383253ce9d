#!/bin/sh
# CLI conventions (issue 16, items 1, 2, 4 and 9): the fdtune binary given as $1, the source
# tree as $2, no GPU needed (tune runs on a GPU simulated from tests/data/h100-replay.db).
#  - machine output: --json prints JSON on stdout, also without a GPU (bench) and on errors
#    (an error document); notices go to stderr; flags are JSON booleans; every JSON document's
#    fields are in docs/json-schema.md and every field documented there is in a sample;
#    --export-json/--export-csv write the file besides the table, atomically, and a file that
#    cannot be written is exit 4 with no partial file;
#  - consistency: -h and 'fdtune help CMD' on every command (with --json: a help document),
#    the exit statuses (5 and 130 included) in every --help, an unknown option is one line
#    naming it, gen --target bogus is a usage error, a full stdout is exit 4, export -o
#    names the path given;
#  - configs shown to people are complete (every parameter, defaults included);
#  - tables fit a terminal of $COLUMNS columns (a pty), and are not cut when not a terminal;
#  - the dry-run ranking collapses rows that differ only in what the model ignores (nt).
# Every failed check is printed; the exit status is 1 when any failed.
set -eu

fdtune=${1:?usage: test_cli_ux.sh PATH/TO/fdtune SOURCE_DIR}
src=${2:?usage: test_cli_ux.sh PATH/TO/fdtune SOURCE_DIR}
rec=$src/tests/data/h100-replay.db

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-ux.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
out=$tmp/stdout
err=$tmp/stderr
failed=0
checks=0
export FDTUNE_SYSTEM_DB=
export FDTUNE_CACHE="$tmp/cache"
unset COLUMNS || true

. "$(dirname "$0")/clitest.sh"

# py NAME SCRIPT ARGS...: a Python check (exit non-zero and a message when it fails).
py() {
    name=$1 script=$2
    shift 2
    checks=$((checks + 1))
    python3 -c "$script" "$@" || fail "$name"
}

sim="--gpu H100 --simulate-from $rec"
cd "$tmp"

# ---------------------------------------------------------------- a database to query
run tune $sim --op d2x --R 4 --grid 512^3 --budget 12 --db "$tmp/t.db" --json
expect_status "tune --json (simulated)" 0
cp "$out" "$tmp/tune.json"

# ---------------------------------------------------------------- 1. machine output
# bench --json without a GPU: a JSON document on stdout, the notice on stderr, exit 3
run bench --json --op lap --R 2 --grid 32^3
expect_status "bench --json, no GPU" 3
expect_in "bench --json, no GPU: the notice" "$err" "No GPU is visible"
py "bench --json, no GPU: stdout is one JSON document with the compilations" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["device"] is None, d
assert d["compiled"] and all(r["status"] in ("compiled", "compile_error") for r in d["compiled"])
' "$out"
# text mode: the notice is not on stdout either
run bench --op lap --R 2 --grid 32^3
expect_not_in "bench, no GPU: the notice is not data" "$out" "No GPU is visible"

# --json and an error: an error document on stdout, the message on stderr
run query best --json --db "$tmp/missing.db"
expect_status "query --json, missing database" 4
expect_in "query --json, missing database: stderr" "$err" "missing.db"
py "query --json, missing database: the error document" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["error"]["status"] == 4 and "missing.db" in d["error"]["message"], d
' "$out"
run tune --json --frob
expect_status "tune --json --frob" 2
py "tune --json --frob: the error document" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["error"]["status"] == 2 and "--frob" in d["error"]["message"], d
' "$out"
run devices --json --no-bandwidth
py "devices --json: a document (with a GPU or not), booleans are true/false" '
import json, sys
d = json.load(open(sys.argv[1]))
for b in d.get("backends", []):
    assert isinstance(b["available"], bool), b
' "$out"

# booleans: flags are true/false, never 0/1
py "tune --json: flags are booleans" '
import json, sys
d = json.load(open(sys.argv[1]))
def walk(v, path):
    if isinstance(v, dict):
        for k, x in v.items():
            walk(x, path + "." + k)
    elif isinstance(v, list):
        for x in v:
            walk(x, path + "[]")
    elif path.rsplit(".", 1)[-1] in ("best_from_this_run", "live", "simulated", "verified",
                                     "stale", "cut_short", "available", "all_points",
                                     "cache_flushed"):
        assert isinstance(v, bool), (path, v)
walk(d, "")
assert any(isinstance(p.get("best_from_this_run"), bool) for p in d["problems"]), d
' "$tmp/tune.json"

# ---------------------------------------------------------------- 2. consistency
for cmd in tune query export plan retune gen bench devices db hybrid; do
    run $cmd -h
    expect_status "$cmd -h" 0
    expect_in "$cmd -h" "$out" "usage: fdtune"
    cp "$out" "$tmp/h1"
    run help $cmd
    expect_status "help $cmd" 0
    checks=$((checks + 1))
    cmp -s "$out" "$tmp/h1" || fail "'fdtune help $cmd' differs from '$cmd -h'"
    expect_in "$cmd --help: exit status 5" "$tmp/h1" "5 busy"
    expect_in "$cmd --help: exit status 130" "$tmp/h1" "130 interrupted"
    # with --json: one document holding the same text (issue 27 item 16)
    for form in "$cmd -h --json" "help $cmd --json"; do
        run $form
        expect_status "$form" 0
        py "$form: the help document" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == 1 and d["help"]["command"] == sys.argv[3], d
assert d["help"]["text"] == open(sys.argv[2]).read(), d["help"]["text"][:200]
' "$out" "$tmp/h1" "$cmd"
    done
    run $cmd --frob
    expect_status "$cmd --frob" 2
    expect_in "$cmd --frob" "$err" "unknown option '--frob'"
    expect_in "$cmd --frob" "$err" "--help"
    checks=$((checks + 1))
    [ "$(wc -l <"$err")" -eq 1 ] || fail "$cmd --frob: $(wc -l <"$err") lines on stderr, expected 1"
    checks=$((checks + 1))
    [ ! -s "$out" ] || fail "$cmd --frob: printed on stdout"
done
run help
expect_status "help" 0
expect_in "help: the main usage" "$out" "commands:"
cp "$out" "$tmp/h0"
for form in "--help --json" "help --json"; do
    run $form
    expect_status "fdtune $form" 0
    py "fdtune $form: the help document, command null" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["help"]["command"] is None and d["help"]["text"] == open(sys.argv[2]).read(), d
' "$out" "$tmp/h0"
done
run tune -h
cp "$out" "$tmp/h2"
run tune --json --help
py "tune --json --help: the help document" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["help"] == {"command": "tune", "text": open(sys.argv[2]).read()}, d
' "$out" "$tmp/h2"
run query best -h
cp "$out" "$tmp/h2"
run query best -h --json
py "query best -h --json: the help of query best" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["help"] == {"command": "query best", "text": open(sys.argv[2]).read()}, d
' "$out" "$tmp/h2"
run help bogus
expect_status "help bogus" 2
expect_in "help bogus: names it" "$err" "'bogus'"
run gen --op lap --R
expect_status "gen --R (no value)" 2
expect_in "gen --R (no value)" "$err" "option '--R' needs a value"

run gen --op lap --R 4 --target bogus
expect_status "gen --target bogus" 2
expect_in "gen --target bogus" "$err" "bogus"

if [ -w /dev/full ]; then
    rc=0
    "$fdtune" gen --op lap --R 4 >/dev/full 2>"$err" || rc=$?
    expect_status "gen > /dev/full" 4
    expect_in "gen > /dev/full" "$err" "No space left on device"
    rc=0
    "$fdtune" query best --db "$tmp/t.db" >/dev/full 2>"$err" || rc=$?
    expect_status "query best > /dev/full" 4
fi

run export --db "$tmp/t.db" -o "$tmp/missing/dir/x.h"
expect_status "export -o missing dir" 4
expect_in "export -o missing dir: the path given" "$err" "$tmp/missing/dir/x.h:"
expect_not_in "export -o missing dir: no temporary name" "$err" ".tmp."

# ---------------------------------------------------------------- --export-json / --export-csv
run query best --db "$tmp/t.db" --export-json "$tmp/best.json" --export-csv "$tmp/best.csv"
expect_status "query best --export-json/--export-csv" 0
expect_in "query best --export-*: the table on stdout" "$out" "median ms"
py "query best --export-*: the files hold the same answer" '
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert d["query"] == "best" and len(d["results"]) == len(rows) == 1, (d, rows)
assert d["results"][0]["config"] == rows[0]["config"], (d, rows)
' "$tmp/best.json" "$tmp/best.csv"
run tune $sim --op d2x --R 4 --grid 512^3 --budget 12 --db "$tmp/t.db" --export-json "$tmp/tune.x.json" --export-csv "$tmp/tune.x.csv"
expect_status "tune --export-json" 0
py "tune --export-json: the summary document" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["problems"][0]["op"] == "d2x", d
' "$tmp/tune.x.json"
expect_in "tune --export-csv" "$tmp/tune.x.csv" "best_config"
run bench --op lap --R 2 --grid 32^3 --export-json "$tmp/bench.x.json"
expect_status "bench --export-json, no GPU" 3
py "bench --export-json, no GPU: the compilations" '
import json, sys
assert json.load(open(sys.argv[1]))["compiled"]
' "$tmp/bench.x.json"
# a file that cannot be written: exit 4, nothing left there (no partial or temporary file)
mkdir "$tmp/ro"
chmod a-w "$tmp/ro"
run query best --db "$tmp/t.db" --export-json "$tmp/missing/x.json"
expect_status "--export-json into a missing directory" 4
expect_in "--export-json into a missing directory: names it" "$err" "$tmp/missing/x.json"
if [ "$(id -u)" -ne 0 ]; then
    run query best --db "$tmp/t.db" --export-csv "$tmp/ro/x.csv"
    expect_status "--export-csv into a read-only directory" 4
    checks=$((checks + 1))
    [ -z "$(ls -A "$tmp/ro")" ] || fail "--export-csv into a read-only directory left $(ls "$tmp/ro")"
fi
echo '{"partial": ' >"$tmp/keep.json"
run query best --db "$tmp/missing.db" --export-json "$tmp/keep.json"
checks=$((checks + 1))
grep -q partial "$tmp/keep.json" || fail "a failed query replaced the --export-json file"

# ---------------------------------------------------------------- 4. complete configs
run bench --op lap --R 2 --grid 32^3 --config bx=64,by=4,nw=32,vec=4,align=32
expect_in "bench: the config shown whole" "$out" "align=32,bx=64,by=4,bz=1,l2pf=0,lb=0,lds=0,mbar=0,nt=0,nw=32,order=xyz,pf=1,split=1,tile=1,vec=4"
run query best --db "$tmp/t.db"
expect_in "query best: the config shown whole (defaults too)" "$out" "bz=1,"
expect_in "query best: the config shown whole (defaults too)" "$out" "split=1"
py "query best --json: the key stays canonical, config_full has every parameter" '
import json, sys
d = json.load(open(sys.argv[1]))["results"][0]
assert "bz=" not in d["config"], d
full = dict(kv.split("=") for kv in d["config_full"].split(","))
assert set(full) >= {"align", "bx", "by", "bz", "lb", "lds", "nt", "nw", "order", "pf", "split", "tile", "vec", "l2pf"}, full
canon = dict(kv.split("=") for kv in d["config"].split(","))
assert all(full[k] == v for k, v in canon.items()), (canon, full)
' "$tmp/best.json"
expect_in "tune summary: the best config shown whole" "$tmp/tune.x.csv" "best_config_full"

# ---------------------------------------------------------------- 9. tables fit the terminal
if script -qec true /dev/null >/dev/null 2>&1; then
    COLUMNS=140 script -qec "'$fdtune' query best --db '$tmp/t.db'" /dev/null >"$tmp/tty.out" 2>&1 || true
    py "COLUMNS=140 on a terminal: every table line fits, cut with a marker" '
import re, sys
lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).rstrip("\r\n") for l in open(sys.argv[1], encoding="utf-8")]
table = [l for l in lines if l and not l.startswith("fdtune") and not l.startswith(("(", " "))]
assert len(table) == 2, lines
assert all(len(l) <= 140 for l in lines if not l.startswith("fdtune")), [len(l) for l in lines]
assert "\u2026" in table[1], table
' "$tmp/tty.out"
else
    echo "test_cli_ux: no pty (script from util-linux): the terminal width check is skipped" >&2
fi
COLUMNS=60 "$fdtune" query best --db "$tmp/t.db" >"$out" 2>/dev/null
py "not a terminal: nothing cut, whatever COLUMNS says" '
import sys
text = open(sys.argv[1], encoding="utf-8").read()
assert "\u2026" not in text and "order=xyz" in text, text
' "$out"

# ---------------------------------------------------------------- 9. the dry run collapses nt
run tune --gpu H100 --op d2x --R 4 --grid 512^3 --dry-run --json
expect_status "dry run" 0
py "dry run: configs differing only in nt are collapsed, and counted" '
import json, sys
p = json.load(open(sys.argv[1]))["problems"][0]
rows = p["ranking"]
assert p["collapsed"] > 0 and p["collapsed_params"] == ["nt"], p["collapsed_params"]
assert sum(r["merged"] for r in rows) == p["collapsed"], rows
def without_nt(r):
    return (r["predicted_ms"], ",".join(kv for kv in r["config_full"].split(",") if not kv.startswith("nt=")))
keys = [without_nt(r) for r in rows]
assert len(keys) == len(set(keys)), "two rows differ only in nt"
' "$out"
run tune --gpu H100 --op d2x --R 4 --grid 512^3 --dry-run
expect_in "dry run: says so" "$out" "rows differing only in nt collapsed"

# ---------------------------------------------------------------- lists (issue 27, items 4, 16)
# Every command that takes --op, --R, --precision or --grid takes lists there, through one
# parser: an empty item is a usage error naming the option, a long list is read whole.
for cmd in "tune --gpu H100 --R 4 --grid 512^3 --dry-run" "plan --R 4 --grid 64^3 -o $tmp/e.jsonl" \
    "query best --db $tmp/t.db" "export --db $tmp/t.db" "retune --db $tmp/t.db" "gen" \
    "bench --grid 32^3"; do
    for v in "d2x," ",d2x" "d2x,,lap" ""; do
        run $cmd --op "$v"
        expect_status "$cmd --op '$v'" 2
        expect_in "$cmd --op '$v': names it" "$err" "--op '$v'"
        checks=$((checks + 1))
        [ ! -s "$out" ] || fail "$cmd --op '$v': printed on stdout"
    done
done
run plan --R 4, --grid 64^3 -o "$tmp/e.jsonl"
expect_in "plan --R '4,'" "$err" "--R '4,': an empty item"
run export --db "$tmp/t.db" --grid "512^3,,256^3"
expect_in "export --grid '512^3,,256^3'" "$err" "--grid '512^3,,256^3': an empty item"
checks=$((checks + 1))
[ ! -e "$tmp/e.jsonl" ] || fail "a refused plan wrote $tmp/e.jsonl"
# lists mean the same everywhere: several values where a command takes several problems
run query best --db "$tmp/t.db" --op lap,d2x --R 2,4 --precision f64,f32 --grid 64^3,512^3
expect_status "query best with lists" 0
expect_in "query best with lists: d2x answers" "$out" "d2x R=4 f32 512x512x512"
run export --db "$tmp/t.db" --op d2x --R 2,4 --precision f32,f64 --format json
expect_status "export with lists" 0
run tune --gpu H100 --R 4 --grid 512^3 --dry-run --op d2x,d2y --top 1
expect_status "tune --dry-run --op d2x,d2y" 0
run plan --op d2x,lap --R 2,4 --precision f32,f64 --grid 64^3 --grid 128^3 -o "$tmp/l.jsonl"
expect_status "plan with lists" 0
checks=$((checks + 1))
[ "$(cat "$out")" = 16 ] || fail "plan with lists: $(cat "$out") tasks, expected 2 x 2 x 2 x 2"
run retune --db "$tmp/t.db" --op d2x,lap
checks=$((checks + 1))
[ "$rc" -ne 2 ] || fail "retune --op d2x,lap: refused as a usage error: $(cat "$err")"
# ... and one value where a command makes one kernel or answers for one problem
run gen --op d2x,lap
expect_status "gen --op d2x,lap" 2
expect_in "gen --op d2x,lap" "$err" "gen takes one problem: give --op one value"
run bench --R 2,4 --grid 32^3
expect_status "bench --R 2,4" 2
expect_in "bench --R 2,4" "$err" "bench takes one problem: give --R one value"
# item 16: nothing is cut, however long the list: the item past 511 bytes counts
long=$(python3 -c 'print("d2y," * 130, end="")')
run plan --op "${long}d2x" --R 4 --grid 64^3 -o "$tmp/long.jsonl"
expect_status "plan --op <long list>,d2x" 0
checks=$((checks + 1))
[ "$(cat "$out")" = 2 ] || fail "plan --op <long list>,d2x: $(cat "$out") tasks, expected 2 (d2y, d2x)"
for cmd in "tune --gpu H100 --R 4 --grid 512^3 --dry-run" "plan --R 4 --grid 64^3 -o $tmp/e.jsonl" \
    "query best --db $tmp/t.db" "export --db $tmp/t.db" "retune --db $tmp/t.db"; do
    run $cmd --op "${long}bogus"
    expect_status "$cmd --op <long list>,bogus" 2
    expect_in "$cmd --op <long list>,bogus: names it" "$err" "unknown operator 'bogus'"
done

# ---------------------------------------------------------------- durations (issue 27, item 11)
# --time and --since: one parser, finite positive durations of at most a year
for v in inf nan -inf -1 0 1e308d 1e400 1e-400 366d 0x10 5y; do
    run plan --R 4 --grid 64^3 -o "$tmp/d.jsonl" --time "$v"
    expect_status "plan --time '$v'" 2
    expect_in "plan --time '$v': names it" "$err" "--time '$v'"
    run tune --gpu H100 --R 4 --grid 512^3 --dry-run --op d2x --time "$v"
    expect_status "tune --time '$v'" 2
    run retune --db "$tmp/t.db" --since "$v"
    expect_status "retune --since '$v'" 2
    expect_in "retune --since '$v': names it" "$err" "--since '$v'"
done
checks=$((checks + 1))
[ ! -e "$tmp/d.jsonl" ] || fail "a refused plan wrote $tmp/d.jsonl"
run plan --R 4 --grid 64^3 -o "$tmp/d.jsonl" --time 365d
expect_status "plan --time 365d" 0
expect_in "plan --time 365d: a year in seconds" "$tmp/d.jsonl" '"time_s": 3.1536e+07'
run plan --R 4 --grid 64^3 -o "$tmp/d.jsonl" --time 1e308d
expect_in "plan --time 1e308d: says the limit" "$err" "at most 365d"
run plan --R 4 --grid 64^3 -o "$tmp/d.jsonl" --time nan
expect_in "plan --time nan: says why" "$err" "not a number"

# ---------------------------------------------------------------- did you mean (issue 27, item 9)
run tune --r 4 --grid 512^3
expect_status "tune --r" 2
expect_in "tune --r: did you mean --R" "$err" "unknown option '--r'; did you mean '--R'?"
run tune -r 4
expect_in "tune -r: did you mean --R" "$err" "did you mean '--R'?"
run tune -gpu H100
expect_in "tune -gpu: did you mean --gpu" "$err" "did you mean '--gpu'?"
run plan --gird 64^3
expect_in "plan --gird" "$err" "did you mean '--grid'?"
run retune --sinse 7d
expect_in "retune --sinse" "$err" "did you mean '--since'?"
run tune --s 1
expect_in "tune --s: ambiguous" "$err" "option '--s' is ambiguous: --strategy, --seed"
for cmd in tune query export plan retune gen bench devices hybrid; do
    run $cmd --Help
    expect_status "$cmd --Help" 2
    expect_in "$cmd --Help" "$err" "did you mean '--help'?"
    checks=$((checks + 1))
    [ "$(wc -l <"$err")" -eq 1 ] || fail "$cmd --Help: $(wc -l <"$err") lines on stderr, expected 1"
done
run db merge --best-onyl -o "$tmp/x.db" "$tmp/t.db"
expect_in "db merge --best-onyl" "$err" "did you mean '--best-only'?"

# ---------------------------------------------------------------- run.sh without a GPU (item 9)
# scripts/run.sh on a machine without a GPU names what works without one and runs the main
# job on the host CPU (--cpu auto) at a grid that fits, then prints the export command; run
# here with a stand-in fdtune that sees no GPU (--gpu auto exits 3) and logs its arguments
# (and a setup that does nothing), as a copy of the scripts
mkdir -p "$tmp/rs/scripts" "$tmp/rs/build"
cp "$src/scripts/run.sh" "$tmp/rs/scripts/run.sh"
printf '#!/bin/sh\nexit 0\n' >"$tmp/rs/scripts/setup.sh"
printf '#!/bin/sh\necho "$*" >>"%s"\ncase "$*" in devices*) echo "No GPU is visible.";; *"--gpu auto"*) exit 3;; esac\nexit 0\n' \
    "$tmp/rs/args" >"$tmp/rs/build/fdtune"
chmod +x "$tmp/rs/scripts/setup.sh" "$tmp/rs/build/fdtune"
rc=0
sh "$tmp/rs/scripts/run.sh" --budget 3 >"$out" 2>"$err" || rc=$?
expect_status "run.sh without a GPU" 0
expect_in "run.sh without a GPU: export from the system database" "$err" "fdtune export --gpu H100"
expect_in "run.sh without a GPU: gen" "$err" "fdtune gen --op lap"
expect_in "run.sh without a GPU: simulated GPUs" "$err" "--simulate-from"
expect_in "run.sh without a GPU: says it tunes the CPU" "$err" "the main job runs on the host CPU"
expect_in "run.sh without a GPU: the grid and why" "$err" "MiB of memory available"
tail -n 1 "$err" >"$tmp/rs/last"
expect_in "run.sh without a GPU: ends with the export" "$tmp/rs/last" "export --cpu auto --R 4 -o"
checks=$((checks + 1))
grep -q -- '^--cpu auto --R 4 --grid [0-9]*^3 --budget 3$' "$tmp/rs/args" ||
    fail "run.sh without a GPU: no CPU tune ran: $(cat "$tmp/rs/args")"
checks=$((checks + 1))
! grep -q -- '^--gpu auto --R 4 --grid' "$tmp/rs/args" ||
    fail "run.sh without a GPU: --gpu auto was tuned"
: >"$tmp/rs/args"
FDTUNE_GRID=48 sh "$tmp/rs/scripts/run.sh" >"$out" 2>"$err" || rc=$?
checks=$((checks + 1))
grep -q -- '^--cpu auto --R 4 --grid 48^3$' "$tmp/rs/args" ||
    fail "run.sh FDTUNE_GRID=48: $(cat "$tmp/rs/args")"

# ---------------------------------------------------------------- 1. the field reference
# docs/json-schema.md: every field of every document a sample gives is documented in its
# section, and every field documented there (not marked optional) is in the sample; the
# schema versions the code defines are the one the reference documents.
best_cfg=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["config"])' "$tmp/best.json")
"$fdtune" query best --db "$tmp/missing.db" --json >"$tmp/s.error.json" 2>/dev/null || true
"$fdtune" export -h --json >"$tmp/s.help.json"
cp "$tmp/tune.json" "$tmp/s.tune.json"
"$fdtune" tune --gpu all --simulate-from "$rec" --simulate-gpus 2 --op d2x,d2y --R 4 --grid 512^3 --budget 6 --db "$tmp/m.db" --json >"$tmp/s.tune-many.json" 2>/dev/null || fail "tune --gpu all (simulated)"
"$fdtune" tune --gpu H100 --op d2x --R 4 --grid 512^3 --dry-run --top 3 --json >"$tmp/s.tune-dry-run.json" || fail "dry run"
"$fdtune" tune --gpu H100 --op d2x --R 4 --grid 512^3 --replay "$rec" --json >"$tmp/s.tune-replay.json" || fail "replay"
"$fdtune" bench --json --op lap --R 2 --grid 32^3 >"$tmp/s.bench-compile-only.json" 2>/dev/null || true
"$fdtune" query best --db "$tmp/t.db" --json >"$tmp/s.query-best.json"
"$fdtune" query best --db "$tmp/t.db" --json --nearest --gpu H100 --op d2x --R 4 --grid 256^3 >"$tmp/s.query-nearest.json"
"$fdtune" query runs --db "$tmp/t.db" --json >"$tmp/s.query-runs.json"
"$fdtune" query show 1 --db "$tmp/t.db" --json >"$tmp/s.query-show.json"
"$fdtune" query history --db "$tmp/t.db" --json --op d2x --R 4 --grid 512^3 --config "$best_cfg" >"$tmp/s.query-history.json"
"$fdtune" devices --json --no-bandwidth >"$tmp/s.devices.json" 2>/dev/null || true
"$fdtune" db merge -o "$tmp/merged.db" "$tmp/t.db" "$tmp/m.db" --json >"$tmp/s.db-merge.json" 2>/dev/null || fail "db merge"
"$fdtune" db check "$tmp/merged.db" --json >"$tmp/s.db-check.json" 2>/dev/null || fail "db check"
"$fdtune" export --db "$tmp/t.db" --format json >"$tmp/s.export.json" 2>/dev/null || fail "export --format json"
"$fdtune" plan --R 4 --grid 512^3 -o "$tmp/tasks.jsonl" >/dev/null 2>&1 || fail "plan"
head -1 "$tmp/tasks.jsonl" >"$tmp/s.plan.json"
"$fdtune" hybrid plan --predict MI300A --json >"$tmp/s.hybrid-plan.json" || fail "hybrid plan --predict"
py "docs/json-schema.md documents every field of every document, both ways" '
import glob, json, os, re, sys
src, tmp = sys.argv[1], sys.argv[2]
doc = open(os.path.join(src, "docs", "json-schema.md"), encoding="utf-8").read()
sections, name, bullet = {}, None, None
for line in doc.splitlines():
    m = re.match(r"## (\S+)$", line)
    if m:
        name = m.group(1)
        sections[name] = {}
        continue
    m = re.match(r"- `([A-Za-z_0-9]+)`", line)
    if m and name:
        bullet = m.group(1)
        sections[name][bullet] = "(optional)" in line
    elif line.startswith("  ") and name and bullet:
        sections[name][bullet] |= "(optional)" in line
    else:
        bullet = None
def keys(v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            out.add(k)
            keys(x, out)
    elif isinstance(v, list):
        for x in v:
            keys(x, out)
    return out
bad = []
samples = sorted(glob.glob(os.path.join(tmp, "s.*.json")))
assert len(samples) == 18, samples
for f in samples:
    sec = os.path.basename(f)[2:-5]
    d = json.load(open(f))
    if sec not in sections:
        bad.append("no section " + sec)
        continue
    assert d["schema"] == 1, (sec, d.get("schema"))
    got, documented = keys(d, set()), sections[sec]
    bad += ["%s: %s is not documented" % (sec, k) for k in sorted(got - set(documented))]
    bad += ["%s: documented %s is not in the sample" % (sec, k)
            for k, opt in sorted(documented.items()) if not opt and k not in got]
# the schema versions the code defines: each the documented "schema": 1
for path, name in (("cli/cli.h", "FDT_JSON_SCHEMA_VERSION"), ("export/fdt_export.h", "FDT_EXP_JSON_SCHEMA"),
                   ("tuner/fdt_tasks.h", "FDT_TASKS_SCHEMA")):
    m = re.search(r"#define\s+%s\s+(\d+)" % name, open(os.path.join(src, path)).read())
    if not m or "\"schema\": %s" % m.group(1) not in doc:
        bad.append("%s (%s) is not the documented schema" % (name, path))
assert not bad, "\n".join(bad)
' "$src" "$tmp"

echo "test_cli_ux: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
