#!/bin/sh
# Many GPUs, plans of tasks and simulated GPUs, end to end on a CPU (no GPU needed): every run
# here is answered by simulated GPUs from tests/data/h100-replay.db (the five operators at R=4,
# f32 and f64, 256^3, 512^3 and 1024^3, 40 configs each, recorded on an H100; the runs here
# tune d2x and d2y at R=4 f32 on 512^3, over the configs recorded), so the outcome is known.
#  1. one simulated GPU: every row and output is marked simulated (device backend "sim", name
#     "(simulated)", driver "simulated from ...", run notes, evaluation messages, the summary);
#     the best of each problem is the recorded best; a database of real GPUs is refused, an
#     unrecorded problem is an error that says so; the text summary ends by naming the
#     next step (the export of what was tuned), which works;
#  2. --gpu all on two simulated GPUs: the two problems are spread (each GPU tunes one), into
#     one database, with the recorded bests; a rerun resumes on the GPU that measured each;
#  3. a simulated GPU made to fail (FDTUNE_SIM_FAULT: dies at setup, dies after 40 answers,
#     hangs): its problem is retried on the other GPU and the run succeeds; the failed GPU's
#     rows stay its own (no median mixes GPUs); the summary says what was retried where;
#  4. SIGINT stops a run over two GPUs (exit 130, runs interrupted) and a rerun resumes;
#  5. plan -> 4 tasks -> 4 simulated shards (published atomically, no WAL beside them) ->
#     merge -> merge again (same counts) -> query best -> export, checked against the source
#     recording (a copy of h100-replay.db with the measurements of R=4 f32 512^3 attached to a
#     second grid, 512x512x256, so that the plan has four problems); the same plan on a plain node with
#     contrib/node/run-tasks.sh (two GPUs, a task each at a time); the merge steps need
#     `fdtune db merge` and are skipped, saying why, where this build does not have it;
#  6. usage errors of the new options.
# Usage: test_many.sh FDTUNE SOURCE_DIR. Prints every failed check; exit 1 when any failed.
set -u
fdtune=$1
src=$2
rec=$src/tests/data/h100-replay.db
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-many.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
# fail, run, expect_in, py (and the count of failed checks): tests/testutil.sh
. "$src/tests/testutil.sh"
sim="--simulate-from $rec"
export FDTUNE_CACHE="$tmp/cache"
# query and export answer from the databases named here alone (no shipped system database:
# FDTUNE_SYSTEM_DB empty turns it off where fdtune has one), so the checks compare with the
# recording and nothing else
export FDTUNE_SYSTEM_DB=

# the recorded bests, by problem: "op R prec nx ny nz" -> config
"$fdtune" query best --db "$rec" --json >"$tmp/source.json" || fail "query best on the recording"

# ---------------------------------------------------------------- 1. one simulated GPU
run "one simulated GPU" 0 $sim --R 4 --grid 512^3 --op d2x,d2y --strategy exhaustive \
    --db "$tmp/one.db" --json
cp "$tmp/out" "$tmp/one.json"
py "one GPU: the summary is marked" '
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["device"]
assert dev["simulated"] is True and dev["backend"] == "sim", dev
assert dev["name"].endswith("(simulated)") and dev["driver"].startswith("simulated from "), dev
' "$tmp/one.json"
py "one GPU: rows marked" '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
devs = c.execute("select backend, name, uuid from devices").fetchall()
assert devs and all(b == "sim" and n.endswith("(simulated)") and u.startswith("sim0-") for b, n, u in devs), devs
envs = c.execute("select driver, compiler from environments").fetchall()
assert envs == [("simulated from h100-replay.db", "sim")], envs
notes = c.execute("select notes from runs").fetchall()
assert notes and all(n[0].startswith("simulated from ") for n in notes), notes
n, marked = c.execute("select count(*), sum(message like \"simulated from h100-replay.db (evaluation %\") from evaluations").fetchone()
# exhaustive over the recorded configs: as many rows as the recording has for the two problems
r = sqlite3.connect(sys.argv[2])
want = r.execute("select count(*) from evaluations e join problems p on p.id = e.problem_id where p.op in (\"d2x\", \"d2y\") and p.radius = 4 and p.precision = \"f32\" and p.nx = 512 and p.ny = 512 and p.nz = 512").fetchone()[0]
assert want > 100 and n == want and marked == n, (n, marked, want)
' "$tmp/one.db" "$rec"
# the bests are the recorded bests (query best, on both databases)
"$fdtune" query best --db "$tmp/one.db" --json >"$tmp/q1.json" || fail "query best one.db"
cat >"$tmp/same_bests.py" <<'PY'
import json, sys
def bests(path):
    rows = json.load(open(path))["results"]
    out = {}
    for r in rows:
        k = (r["op"], r["R"], r["precision"], r["nx"], r["ny"], r["nz"])
        out[k] = (r["config"], r["device"])
    return out
# argv[3]: how many problems were tuned; the recording's bests of those problems are compared
a, b = bests(sys.argv[1]), bests(sys.argv[2])
assert len(b) == int(sys.argv[3]), (sys.argv[3], b)
a = {k: v for k, v in a.items() if k in b}
assert {k: v[0] for k, v in a.items()} == {k: v[0] for k, v in b.items()}, (a, b)
assert all(v[1].endswith("(simulated)") for v in b.values()), b
assert not any(v[1].endswith("(simulated)") for v in a.values()), a
PY
python3 "$tmp/same_bests.py" "$tmp/source.json" "$tmp/q1.json" 2 || fail "one GPU: bests differ from the recording"
expect_in "query shows simulated" "$tmp/q1.json" "(simulated)"
run "one GPU text summary" 0 $sim --R 4 --grid 512^3 --op d2x --db "$tmp/one.db"
expect_in "summary says simulated" "$tmp/out" "SIMULATED:"
expect_in "progress says simulated" "$tmp/err" "simulated (answers recorded on a GPU"
# a finished tune names the next step as its last line (text only, never in --json), and
# that step works: it writes the header of what was just tuned
last=$(tail -n 1 "$tmp/out")
[ "$last" = "next: fdtune export --gpu sm_90 --db $tmp/one.db -o fdtuned.h (a header for your HIP or CUDA code)" ] ||
    fail "one GPU: the summary's last line is not the next step: $last"
! grep -q "next:" "$tmp/one.json" || fail "one GPU: the next step is inside the --json output"
run "the next step" 0 export --gpu sm_90 --db "$tmp/one.db" -o "$tmp/next.h"
expect_in "the next step's header" "$tmp/next.h" "fdtuned_d2x_r4_f32("
# a database of real GPUs is refused (the recording itself, copied)
cp "$rec" "$tmp/real.db"
run "simulated into a real database" 2 $sim --R 4 --grid 512^3 --op d2x --db "$tmp/real.db"
expect_in "mixing refused" "$tmp/err" "holds results of real GPUs"
run "many: simulated into a real database" 2 $sim --devices 0,1 --R 4 --grid 512^3 --op d2x \
    --db "$tmp/real.db"
expect_in "many: mixing refused" "$tmp/err" "holds results of real GPUs"
# a problem the recording does not have
run "unrecorded problem" 4 $sim --R 4 --grid 640^3 --op d2x --db "$tmp/one.db"
expect_in "unrecorded" "$tmp/err" "not recorded in"
run "many: unrecorded problem" 2 $sim --gpu all --R 6 --grid 512^3 --op d2z --db "$tmp/x.db"
expect_in "many: unrecorded" "$tmp/err" "d2z R=6 f32 512x512x512 is not recorded in"
[ ! -s "$tmp/out" ] || fail "many: a refused request printed a summary"

# ---------------------------------------------------------------- 2. two simulated GPUs
run "two GPUs" 0 $sim --simulate-gpus 2 --gpu all --R 4 --grid 512^3 --op d2x,d2y \
    --strategy exhaustive --db "$tmp/two.db" --json
cp "$tmp/out" "$tmp/two.json"
py "two GPUs: spread, one database" '
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
assert d["simulated"] is True and d["retries"] == [], d
gpus = {g["gpu"]: g for g in d["gpus"]}
assert sorted(gpus) == [0, 1] and all(g["problems_tuned"] == 1 and not g["failed"] for g in gpus.values()), gpus
ps = d["problems"]
assert len(ps) == 2 and sorted(p["gpu"] for p in ps) == [0, 1] and all(p["state"] == "done" for p in ps), ps
c = sqlite3.connect(sys.argv[2])
runs = c.execute("select r.status, d.uuid from runs r join devices d on d.id = r.device_id").fetchall()
assert len(runs) == 2 and all(s == "done" for s, _ in runs), runs
assert sorted(u[:5] for _, u in runs) == ["sim0-", "sim1-"], runs
' "$tmp/two.json" "$tmp/two.db"
"$fdtune" query best --db "$tmp/two.db" --json >"$tmp/q2.json" || fail "query best two.db"
python3 "$tmp/same_bests.py" "$tmp/source.json" "$tmp/q2.json" 2 || fail "two GPUs: bests differ from the recording"
! grep -q "next:" "$tmp/two.json" || fail "two GPUs: the next step is inside the --json output"
run "two GPUs, text" 0 $sim --simulate-gpus 2 --gpu all --R 4 --grid 512^3 --op d2x,d2y \
    --strategy exhaustive --db "$tmp/two.db"
last=$(tail -n 1 "$tmp/out")
[ "$last" = "next: fdtune export --db $tmp/two.db -o fdtuned.h (a header for your HIP or CUDA code)" ] ||
    fail "two GPUs: the summary's last line is not the next step: $last"
run "two GPUs, rerun" 0 $sim --simulate-gpus 2 --gpu all --R 4 --grid 512^3 --op d2x,d2y \
    --strategy exhaustive --db "$tmp/two.db" --json
py "two GPUs: a rerun resumes on the GPU that measured each problem" '
import json, sys
first, again = (json.load(open(p)) for p in sys.argv[1:3])
where = {p["op"]: p["gpu"] for p in first["problems"]}
for p in again["problems"]:
    assert p["gpu"] == where[p["op"]] and p["resumed"] == 40 and p["tried"] == 1, p
' "$tmp/two.json" "$tmp/out"

# ---------------------------------------------------------------- 3. a GPU that fails
for fault in 1:crash 1:crash@40 1:hang; do
    rm -f "$tmp/f.db"*
    FDTUNE_SIM_FAULT=$fault run "fault $fault" 0 $sim --devices 0,1 --R 4 --grid 512^3 \
        --op d2x,d2y --strategy exhaustive --timeout 1 --db "$tmp/f.db" --json
    cp "$tmp/out" "$tmp/f.json"
    py "fault $fault: retried on GPU 0" '
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
g = {x["gpu"]: x for x in d["gpus"]}
assert g[1]["failed"] and g[1]["why"] and not g[0]["failed"], g
assert g[0]["problems_tuned"] == 2 and g[1]["problems_tuned"] == 0, g
r = d["retries"]
assert len(r) == 1 and r[0]["from_gpu"] == 1 and r[0]["to_gpu"] == 0, r
assert all(p["state"] == "done" and p["gpu"] == 0 for p in d["problems"]), d["problems"]
c = sqlite3.connect(sys.argv[2])
# what the failed GPU measured is its own: a failed run on sim1, none of it on sim0
rows = c.execute("select d.uuid, r.status, count(e.id) from runs r join devices d on d.id = r.device_id left join evaluations e on e.run_id = r.id group by r.id").fetchall()
assert all(u.startswith("sim0-") and s == "done" or u.startswith("sim1-") and s == "failed" for u, s, _ in rows), rows
mixed = c.execute("select count(*) from evaluations e join runs r on r.id = e.run_id where e.device_id <> r.device_id").fetchone()[0]
assert mixed == 0
# the bests of GPU 0 come from its own runs that finished
best = c.execute("select r.status from best_evaluations b join devices d on d.id = b.device_id join runs r on r.id = b.run_id where d.uuid like \"sim0-%\"").fetchall()
assert best == [("done",), ("done",)], best
' "$tmp/f.json" "$tmp/f.db"
    expect_in "fault $fault: progress names the retry" "$tmp/err" "retried here after GPU 1 failed"
done
FDTUNE_SIM_FAULT=1:crash run "fault: text summary" 0 $sim --devices 0,1 --R 4 --grid 512^3 \
    --op d2x,d2y --db "$tmp/f2.db"
expect_in "summary: retry line" "$tmp/out" "retried on GPU 0"
expect_in "log lines prefixed by GPU" "$tmp/err" "[GPU 1]"
# every GPU of the model failed: the problems fail, the run says so
FDTUNE_SIM_FAULT=0:crash,1:crash run "every GPU fails" 4 $sim --devices 0,1 --R 4 \
    --grid 512^3 --op d2x,d2y --db "$tmp/f3.db"

# ---------------------------------------------------------------- 4. Ctrl-C and resume
rm -f "$tmp/i.db"*
FDTUNE_SIM_DELAY_MS=40 "$fdtune" $sim --devices 0,1 --R 4 --grid 512^3 --op d2x,d2y \
    --strategy exhaustive --db "$tmp/i.db" --json >"$tmp/i.json" 2>"$tmp/i.err" &
pid=$!
sleep 1.5
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 130 ] || fail "SIGINT: exit status $rc, expected 130"
py "SIGINT: runs interrupted, partial results kept" '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
st = c.execute("select status from runs").fetchall()
assert st and all(s == "interrupted" for (s,) in st), st
n = c.execute("select count(*) from evaluations").fetchone()[0]
assert 0 < n < 113, n  # the whole run: 113 rows
' "$tmp/i.db"
run "resume after SIGINT" 0 $sim --devices 0,1 --R 4 --grid 512^3 --op d2x,d2y \
    --strategy exhaustive --db "$tmp/i.db" --json
py "resume: measured before, not again" '
import json, sys
d = json.load(open(sys.argv[1]))
assert all(p["state"] == "done" and p["resumed"] > 0 for p in d["problems"]), d["problems"]
' "$tmp/out"

# ---------------------------------------------------------------- 5. plan, tasks, merge
# the source: the recording with its measurements attached to a second grid as well
cp "$rec" "$tmp/rec4.db"
python3 - "$tmp/rec4.db" <<'PY' || fail "building the 4-problem recording"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for pid, op in c.execute("select id, op from problems where radius = 4 and precision = 'f32' and nx = 512 and ny = 512 and nz = 512").fetchall():
    cur = c.execute("insert into problems (op, radius, precision, nx, ny, nz) values (?, 4, 'f32', 512, 512, 256)", (op,))
    new = cur.lastrowid
    cols = [r[1] for r in c.execute("pragma table_info(evaluations)") if r[1] not in ("id", "problem_id")]
    sel = ", ".join("time_ms * 0.5" if x == "time_ms" else x for x in cols)
    c.execute(f"insert into evaluations ({', '.join(cols)}, problem_id) select {sel}, ? from evaluations where problem_id = ?", (new, pid))
c.commit()
PY
"$fdtune" query best --db "$tmp/rec4.db" --json >"$tmp/source4.json" || fail "query best rec4"
mkdir -p "$tmp/plan"
run "plan" 0 plan --op d2x,d2y --R 4 --grid 512^3 --grid 512x512x256 --strategy exhaustive \
    -o "$tmp/plan/tasks.jsonl"
[ "$(cat "$tmp/out")" = 4 ] || fail "plan: $(cat "$tmp/out") tasks, expected 4"
py "plan: 4 JSON lines of schema 1" '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 4
for i, l in enumerate(lines):
    t = json.loads(l)
    assert t["schema"] == 1 and t["task"] == i and t["tasks"] == 4 and t["strategy"] == "exhaustive", t
' "$tmp/plan/tasks.jsonl"
for i in 0 1 2; do
    run "task $i" 0 tune --tasks "$tmp/plan/tasks.jsonl" --task $i --simulate-from "$tmp/rec4.db"
done
SLURM_ARRAY_TASK_ID=3 run "task 3 from SLURM_ARRAY_TASK_ID" 0 tune \
    --tasks "$tmp/plan/tasks.jsonl" --simulate-from "$tmp/rec4.db"
ls "$tmp/plan/results" >"$tmp/shards"
[ "$(cat "$tmp/shards" | tr '\n' ' ')" = "task-0000.db task-0001.db task-0002.db task-0003.db " ] ||
    fail "shards: $(cat "$tmp/shards" | tr '\n' ' ')"
py "each shard: one consistent file, one simulated device, one problem" '
import sqlite3, sys
for i, path in enumerate(sys.argv[1:]):
    c = sqlite3.connect(path)
    assert c.execute("pragma integrity_check").fetchone()[0] == "ok"
    d = c.execute("select backend, name from devices").fetchall()
    assert d == [("sim", "NVIDIA H100 80GB HBM3 (simulated)")], d
    assert c.execute("select count(distinct problem_id) from evaluations").fetchone()[0] == 1
    assert c.execute("select count(*) from runs where status = \"done\"").fetchone()[0] == 1
' "$tmp/plan/results/task-0000.db" "$tmp/plan/results/task-0001.db" \
  "$tmp/plan/results/task-0002.db" "$tmp/plan/results/task-0003.db"
[ -z "$(ls "$tmp/plan/results" | grep -e '-wal$' -e '-shm$' -e '\.tmp-')" ] || fail "WAL or temporary files beside the shards"
# a task run again resumes from its published shard
run "task 0 again" 0 tune --tasks "$tmp/plan/tasks.jsonl" --task 0 --simulate-from "$tmp/rec4.db" --json
py "task again: resumed" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["problems"][0]["resumed"] == 40, d["problems"][0]
' "$tmp/out"
merged=$tmp/merged.db
if "$fdtune" db merge --help >/dev/null 2>&1; then
    run "merge" 0 db merge -o "$merged" "$tmp"/plan/results/task-*.db
    counts() { python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print([c.execute(f"select count(*) from {t}").fetchone()[0] for t in ("devices", "environments", "problems", "configs", "runs", "evaluations")])' "$1"; }
    first=$(counts "$merged")
    run "merge again" 0 db merge -o "$merged" "$tmp"/plan/results/task-*.db
    [ "$(counts "$merged")" = "$first" ] || fail "merge again: counts $(counts "$merged"), first $first"
    "$fdtune" query best --db "$merged" --json >"$tmp/qm.json" || fail "query best merged"
    python3 "$tmp/same_bests.py" "$tmp/source4.json" "$tmp/qm.json" 4 || fail "merged bests differ from the recording"
    run "export merged" 0 export --db "$merged" --format json -o "$tmp/export.json"
    py "export: the recorded bests, marked simulated" '
import json, sys
x = json.load(open(sys.argv[1])); src = json.load(open(sys.argv[2]))
want = {(r["op"], r["nx"], r["ny"], r["nz"], r["config"]) for r in src["results"]
        if r["op"] in ("d2x", "d2y") and r["R"] == 4 and r["precision"] == "f32"
        and (r["nx"], r["ny"], r["nz"]) in ((512, 512, 512), (512, 512, 256))}
got = set()
for o in x["operators"]:
    for v in o["variants"]:
        if v["kind"] == "constant":
            assert v["device"].endswith("(simulated)") and v["measured"]["driver"].startswith("simulated from"), v
            got.add((o["op"], *v["grid"], v["config"]))
assert got == want, (got, want)
assert all(d["backend"] == "sim" for d in x["devices"]), x["devices"]
' "$tmp/export.json" "$tmp/source4.json"
else
    echo "SKIP: the merge step (merge, merge again, query best and export of the merged database):" \
         "'fdtune db merge' is not in this build (it comes from the dbscale branch)." \
         "Checked instead: each shard's best against the recording."
    for i in 0 1 2 3; do
        "$fdtune" query best --db "$tmp/plan/results/task-000$i.db" --json >"$tmp/qs$i.json" ||
            fail "query best shard $i"
    done
    python3 - "$tmp/source4.json" "$tmp"/qs?.json <<'PY' || fail "shard bests differ from the recording"
import json, sys
def rows(p):
    return json.load(open(p))["results"]
want = {(r["op"], r["nx"], r["ny"], r["nz"]): r["config"] for r in rows(sys.argv[1])
        if r["op"] in ("d2x", "d2y") and r["R"] == 4 and r["precision"] == "f32"
        and (r["nx"], r["ny"], r["nz"]) in ((512, 512, 512), (512, 512, 256))}
got = {}
for p in sys.argv[2:]:
    for r in rows(p):
        got[(r["op"], r["nx"], r["ny"], r["nz"])] = r["config"]
assert got == want, (got, want)
PY
fi

# the plain node: every task, one GPU each, two at a time, then the merge
rm -rf "$tmp/plan/results"
rc=0
FDTUNE=$fdtune sh "$src/contrib/node/run-tasks.sh" -g 0,1 -j 1 \
    -f "--simulate-from $tmp/rec4.db" "$tmp/plan/tasks.jsonl" >"$tmp/node.out" 2>"$tmp/node.err" || rc=$?
[ "$(ls "$tmp/plan/results" | grep -c '^task-000[0-3].db$')" = 4 ] ||
    fail "run-tasks.sh: shards $(ls "$tmp/plan/results" | tr '\n' ' ')"
for g in 0 1; do
    grep -q "GPU $g: task . done" "$tmp/node.err" || fail "run-tasks.sh: GPU $g ran no task: $(cat "$tmp/node.err")"
done
if "$fdtune" db merge --help >/dev/null 2>&1; then
    [ "$rc" -eq 0 ] || fail "run-tasks.sh: exit $rc: $(tail -3 "$tmp/node.err")"
    "$fdtune" query best --db "$tmp/plan/fdtune.db" --json >"$tmp/qn.json" || fail "run-tasks.sh: no merged database"
    python3 "$tmp/same_bests.py" "$tmp/source4.json" "$tmp/qn.json" 4 || fail "run-tasks.sh: merged bests differ"
else
    [ "$rc" -eq 1 ] || fail "run-tasks.sh without fdtune db merge: exit $rc"
    echo "SKIP: run-tasks.sh's merge: 'fdtune db merge' is not in this build"
fi

# ---------------------------------------------------------------- 6. usage
run "--tasks without a task" 2 tune --tasks "$tmp/plan/tasks.jsonl" $sim
expect_in "no task" "$tmp/err" "SLURM_ARRAY_TASK_ID"
run "--task out of range" 2 tune --tasks "$tmp/plan/tasks.jsonl" --task 4 $sim
expect_in "out of range" "$tmp/err" "task 4 of 4: the plan has tasks 0..3"
printf '{"schema": 2, "task": 0}\n' >"$tmp/bad.jsonl"
run "plan of another schema" 2 tune --tasks "$tmp/bad.jsonl" --task 0 $sim
expect_in "schema" "$tmp/err" "schema 2"
printf 'not json\n' >"$tmp/bad.jsonl"
run "plan line not JSON" 2 tune --tasks "$tmp/bad.jsonl" --task 0 $sim
expect_in "not JSON" "$tmp/err" "bad.jsonl:1: not a JSON object"
run "--tasks with --R" 2 tune --tasks "$tmp/plan/tasks.jsonl" --task 0 --R 4
run "--devices with --gpu" 2 --devices 0,1 --gpu H100 --R 4 --grid 512^3
run "--simulate-gpus alone" 2 --simulate-gpus 2 --gpu all --R 4 --grid 512^3
run "--devices out of range" 2 $sim --simulate-gpus 2 --devices 0,3 --R 4 --grid 512^3 --op d2x \
    --db "$tmp/u.db"
run "plan without -o" 2 plan --R 4 --grid 512^3
run "plan without --grid" 2 plan --R 4 -o "$tmp/p.jsonl"

[ "$failed" -eq 0 ] || { echo "test_many: $failed check(s) failed" >&2; exit 1; }
echo "test_many: ok"
