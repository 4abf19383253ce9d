#!/bin/sh
# `fdtune bench --hybrid` and `--reflection` (issue 29, item 3) as a user runs them, the host
# CPU standing in for the GPU (--gpu cpu): every split agrees with the single-device run bit
# for bit (one dialect, one config), the JSON document says so, the energy check falls with
# W, and bad requests are usage errors (exit 2) before anything runs. Then the host<->device
# link: `fdtune devices` measures it in each GPU's worker, shows it beside the copy bandwidth
# and stores it in the tuning database (--db PATH, created; the default database only when
# one is there). That GPU is the stand-in CUDA driver of the tests (fake-cuda/libcuda.so.1)
# with FAKE_CUDA_MEMORY=1: its memory, copies, streams and events work on the host, so the
# worker's measurement runs; a build without the cuda backend skips that part (77 when
# nothing else failed).
# usage: test_hybrid_run.sh FDTUNE FAKE_CUDA_DIR
fdtune=$1
fake=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/testutil.sh"
export FDTUNE_DB="$tmp/default.db"
# the host's allocations hold all bits set (NaN), as a GPU's hold anything (runtime/cpu.c)
export FDTUNE_TEST_CPU_POISON=1

small="--op dwave --R 2 --grid 24x20x32 --absorb 4 --gpu cpu"
# shellcheck disable=SC2086
run "bench --hybrid" 0 bench --hybrid data,task,cpu --fraction 0.25,0.5 --share never \
    --steps 3 --warmup 1 $small --json
py "bench --hybrid: four runs, each equal bit for bit, copies counted" '
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert [r["mode"] for r in runs] == ["data-parallel", "data-parallel", "task-parallel",
                                     "cpu-only"], runs
assert [r["cpu_planes"] for r in runs] == [8, 16, None, None], runs
for r in runs:
    assert r["agrees"] and r["bitwise"] and r["max_abs_diff"] == 0 and not r["shared"], r
    assert r["step_ms"] > 0 and r["single_ms"] > 0, r
    assert 0.1 < r["max_abs"] < 16 and r["nonfinite"] == 0, r
    assert abs(r["tolerance"] - 16 * 4 * 2**-24 * r["max_abs"]) < 1e-12, r
    assert r["shared_align"] is None, r
assert 0 < d["c2_max"] * (5 / 2 + 2 * (4 / 3 + 1 / 12)) * 1.75 < 4, d
assert runs[0]["exchange_bytes"] == 2 * 2 * 24 * 20 * 4, runs[0]
assert runs[3]["exchange_bytes"] == 0, runs[3]
assert d["no_prediction"] == "no tuning database" and d["problem"]["absorb_width"] == 4, d
' "$tmp/out"
# --repeat: each mode run three times, the median run reported with the runs' spread
# shellcheck disable=SC2086
run "bench --hybrid --repeat 3" 0 bench --hybrid gpu,data --repeat 3 --share never --steps 2 \
    $small --json
py "bench --hybrid --repeat 3: three runs, the median within their spread, all equal" '
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["mode"] for r in runs] == ["gpu-only", "data-parallel"], runs
for r in runs:
    assert r["runs"] == 3, r
    assert 0 < r["step_min_ms"] <= r["step_ms"] <= r["step_max_ms"], r
    assert r["agrees"] and r["bitwise"] and r["max_abs_diff"] == 0, r
' "$tmp/out"
# shellcheck disable=SC2086
run "bench --hybrid --share always" 0 bench --hybrid data --share always --steps 2 $small --json
py "bench --hybrid --share always: one allocation, nothing copied, equal" '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["shared"] and r["exchange_bytes"] == 0 and r["bitwise"] and r["agrees"], r
' "$tmp/out"
# configs of two aligns share one layout: the smaller runs with the larger, and says so
# shellcheck disable=SC2086
run "bench --hybrid --share always, two aligns" 0 bench --hybrid data --share always \
    --steps 2 --config-cpu align=8 $small
expect_in "two aligns: said" "$tmp/out" \
    "shared memory is one layout: device A's config ran with align=8"
expect_in "two aligns: the tolerance said" "$tmp/out" \
    "agrees: every point finite and max |diff| <= tolerance"
run "bench --reflection" 0 bench --reflection --widths 0,3,6 --op dwave --R 2 --grid 48^3 \
    --absorb 3 --gpu cpu --json
py "bench --reflection: the ratio falls with W" '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["reflection"]
assert [x["W"] for x in r] == [0, 3, 6] and d["falls"] is True, d
assert r[0]["ratio"] > r[1]["ratio"] > r[2]["ratio"] > 0, r
' "$tmp/out"
# R=4: the pulse's c2 within the CFL bound (it was past it, and the energy not finite)
# (the energy grew by 1e63 and 'falls' was said of a rounding-level decrease)
run "bench --reflection R=4" 0 bench --reflection --widths 0,3 --op dwave --R 4 --grid 48^3 \
    --absorb 3 --gpu cpu --json
py "bench --reflection R=4: the energy comes back weaker than it left, less with W" '
import json, sys
d = json.load(open(sys.argv[1]))
r = d["reflection"]
assert d["falls"] is True and 1 > r[0]["ratio"] > r[1]["ratio"] > 0, d
' "$tmp/out"

# the planner's prediction beside every data-parallel run, at each run's own planes (not only
# at the plan's split): a database with the host's dwave tuned, the same rows copied to a
# stand-in "GPU" of the host's name (backend cuda) and a link of it
run "tune the host's dwave" 0 --cpu auto --op dwave --absorb 4 --R 2 --grid 24x20x32 \
    --budget 1 --db "$tmp/plan.db"
py "a stand-in GPU of the host's name with the host's results and a link" '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
def copy(table, row_id, **over):
    cols = [c[1] for c in db.execute("pragma table_info(%s)" % table) if c[1] != "id"]
    row = dict(zip(cols, db.execute("select %s from %s where id = ?" % (", ".join(cols), table),
                                     (row_id,)).fetchone()))
    row.update(over)
    return db.execute("insert into %s (%s) values (%s)" % (table, ", ".join(row),
                      ", ".join("?" * len(row))), list(row.values())).lastrowid
cpu = db.execute("select id from devices where backend = \"cpu\"").fetchone()[0]
gpu = copy("devices", cpu, backend="cuda", arch="sm_90", uuid="GPU-standin", warp_size=32)
for (run,) in db.execute("select id from runs where device_id = ?", (cpu,)).fetchall():
    new = copy("runs", run, device_id=gpu, pid=0)
    for (ev,) in db.execute("select id from evaluations where run_id = ?", (run,)).fetchall():
        copy("evaluations", ev, run_id=new, device_id=gpu)
db.execute("insert into links (device_id, h2d_gbs, d2h_gbs, both_gbs, latency_us, unified) "
           "values (?, 50, 50, 40, 4, 0)", (gpu,))
db.commit()
' "$tmp/plan.db"
# shellcheck disable=SC2086
run "bench --hybrid with a plan" 0 bench --hybrid data,gpu --fraction 0.25,0.5 --steps 2 \
    $small --db "$tmp/plan.db" --json
py "bench --hybrid: a prediction beside each run, data-parallel at its own planes" '
import json, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
assert [r["cpu_planes"] for r in runs] == [8, 16, None], runs
assert all(r["predicted_ms"] and r["predicted_ms"] > 0 for r in runs), runs
assert runs[0]["predicted_ms"] != runs[1]["predicted_ms"], runs
' "$tmp/out"

# task-parallel's slabs on a config of their own (--config-layers): said, and the run agrees
# shellcheck disable=SC2086
run "bench --hybrid task --config-layers" 0 bench --hybrid task --steps 2 \
    --config-layers blk=1,ty=4 $small --json
py "bench --hybrid --config-layers: the layers' config in the document, the run agrees" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config_b_layers"] == "blk=1,ty=4" and d["config_b"] == "default", d
assert [r["mode"] for r in d["runs"]] == ["task-parallel"] and d["runs"][0]["agrees"], d
' "$tmp/out"

# usage errors: nothing runs
# shellcheck disable=SC2086
run "bench --config-layers bogus=1" 2 bench --hybrid task --config-layers bogus=1 $small
expect_in "bench --config-layers bogus=1: said" "$tmp/err" \
    "--config-layers: unknown config parameter 'bogus'"
# shellcheck disable=SC2086
run "bench --hybrid frob" 2 bench --hybrid frob $small
expect_in "bench --hybrid frob: said" "$tmp/err" "hybrid mode 'frob': expected gpu-only"
# shellcheck disable=SC2086
run "bench --fraction 1.5" 2 bench --hybrid data --fraction 1.5 $small
expect_in "bench --fraction 1.5: said" "$tmp/err" "--fraction '1.5': a number between 0 and 1"
# shellcheck disable=SC2086
run "bench --fraction 0.01" 2 bench --hybrid data --fraction 0.01 $small
expect_in "bench --fraction 0.01: said" "$tmp/err" "gives 0 of 32 planes to device B"
# shellcheck disable=SC2086
run "bench --repeat 0" 2 bench --hybrid data --repeat 0 $small
expect_in "bench --repeat 0: said" "$tmp/err" "--repeat 0: out of range (1..100)"
run "bench --hybrid lap" 2 bench --hybrid data --op lap --R 2 --grid 32^3 --gpu cpu
expect_in "bench --hybrid lap: said" "$tmp/err" "--op dwave"
# shellcheck disable=SC2086
run "bench --share sometimes" 2 bench --hybrid data --share sometimes $small
expect_in "bench --share sometimes: said" "$tmp/err" "--share 'sometimes': never, unified or always"
run "bench --reflection --widths 0,7" 2 bench --reflection --widths 0,7 --op dwave --R 2 \
    --grid 48^3 --absorb 3 --gpu cpu
expect_in "bench --reflection --widths 0,7: said" "$tmp/err" "W=7: a layer may take at most"
[ "$(cat "$tmp/out")" = "" ] || fail "a usage error printed on stdout"

if [ ! -f "$fake/libcuda.so.1" ]; then
    echo "no stand-in CUDA driver in this build: the host link is not checked"
    [ "$failed" -eq 0 ] && exit 77
    finish
fi
export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_CUDA_MEMORY=1

# measured, shown and stored in the database named
run "devices --db" 0 devices --db "$tmp/links.db"
# the columns widen with their values (a link of 10 GB/s or more): the header's words in order
py "devices --db: header" '
import re, sys
assert re.search(r"h2d +d2h +both +4K us +row ns +unified", open(sys.argv[1]).read())
' "$tmp/out"
expect_in "devices --db: stored" "$tmp/err" "host links stored in $tmp/links.db"
py "devices --db: the row shows the link" '
import re, sys
row = [l for l in open(sys.argv[1]) if "cuda:0" in l][0]
m = re.search(r" - +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +no ", row)
assert m and all(float(x) > 0 for x in m.groups()[:3]) and float(m.group(5)) >= 0, row
' "$tmp/out"
py "devices --db: one link row of the fake H100" '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select d.name, l.h2d_gbs, l.d2h_gbs, l.both_gbs, l.latency_us, l.unified, "
                  "l.row_ns from links l join devices d on d.id = l.device_id").fetchall()
assert len(rows) == 1, rows
name, h2d, d2h, both, lat, uni, row = rows[0]
assert name == "NVIDIA H100 80GB HBM3" and h2d > 0 and d2h > 0 and both > 0 and lat >= 0, rows
assert row is not None and row >= 0, rows
assert uni == 0, rows
' "$tmp/links.db"

# JSON carries the same fields; without --db and without a default database nothing is stored
# and no file is created
run "devices --json" 0 devices --json
py "devices --json: link fields" '
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
assert d["link_h2d_gbs"] > 0 and d["link_d2h_gbs"] > 0 and d["link_both_gbs"] > 0, d
assert d["link_latency_us"] >= 0 and d["link_row_ns"] >= 0 and d["unified"] == 0, d
' "$tmp/out"
[ ! -e "$tmp/default.db" ] || fail "devices without a database created $tmp/default.db"

# --no-bandwidth measures nothing and stores nothing
run "devices --no-bandwidth" 0 devices --no-bandwidth --db "$tmp/none.db"
[ ! -e "$tmp/none.db" ] || fail "devices --no-bandwidth created a database"
finish
