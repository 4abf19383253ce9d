#!/bin/sh
# The CPU end to end (issue 28, acceptance "CI"): the fdtune binary given as $1, the source
# tree as $2, no GPU needed (the host CPU is the device, backend cpu).
#  - a real tune on the host CPU: every operator, R=4, f32 and f64, on a small grid
#    (FDTUNE_TEST_GRID, default 32^3) with a tiny budget (FDTUNE_TEST_BUDGET, default 2),
#    every problem ending with a verified best stored for the CPU;
#  - query best --cpu auto lists them; export --cpu auto writes the C header; the plain C
#    program examples/cpu_stencil.c built with `cc -fopenmp` runs every operator through the
#    header on the tuned grid (the constant kernels) and on an odd grid (runtime dims) and
#    checks it point by point against its fp64 reference; the same program fails on a header
#    whose kernels were broken (one weight), so the check is real; one export of a database
#    with GPU (tests/data/h100-replay.db) and CPU results writes both parts in one file;
#  - retune --cpu auto re-measures the CPU's results;
#  - bad inputs: --cpu with a NAME that is not the host CPU (exit 2, nothing written), --gpu
#    auto with no GPU (exit 3, the message points at --cpu auto; skipped where a GPU is
#    visible), export --cpu of a CPU the database lacks (exit 1, no file), and injected
#    faults on the CPU: a kernel that crashes (fault=oob), one that hangs (fault=hang) and
#    one that is wrong (fault=coef) cost their candidate only, in bench and in a tune whose
#    recipe (tests/data/cpu_faults.lua) holds them, which still finds the sound config;
#  - the damped step (dwave, --absorb 4:0.3, R=2, f32) tuned on the CPU, exported with
#    --driver and stepped by examples/dwave_driver.c on two grids against double precision.
# Every failed check is printed; the exit status is 1 when any failed.
set -eu

fdtune=${1:?usage: test_cpu_tune.sh PATH/TO/fdtune SOURCE_DIR}
src=${2:?usage: test_cpu_tune.sh PATH/TO/fdtune SOURCE_DIR}
grid=${FDTUNE_TEST_GRID:-32^3}
budget=${FDTUNE_TEST_BUDGET:-2}
n=${grid%^3}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-cpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
out=$tmp/stdout
err=$tmp/stderr
failed=0
checks=0
export FDTUNE_SYSTEM_DB=
export FDTUNE_CACHE="${FDTUNE_CACHE:-$tmp/cache}"
db=$tmp/cpu.db
cc=${CC:-cc}

. "$(dirname "$0")/clitest.sh"

# py NAME SCRIPT ARGS...: a Python check (exit non-zero and a message when it fails).
py() {
    name=$1 script=$2
    shift 2
    checks=$((checks + 1))
    python3 -c "$script" "$@" || fail "$name"
}

# ---------------------------------------------------------------- the tune
run --cpu auto --R 4 --grid "$grid" --precision f32,f64 --budget "$budget" --timeout 60 \
    --db "$db" --json
expect_status "tune --cpu auto (every operator, f32 and f64)" 0
if [ "$rc" -ne 0 ]; then
    tail -n 20 "$err" >&2
fi
expect_in "tune --cpu auto: the host CPU" "$err" "cpu"

run query best --cpu auto --db "$db" --no-system-db --json
expect_status "query best --cpu auto" 0
cp "$out" "$tmp/best.json"
py "query best --cpu auto: a verified best of every operator in f32 and f64 on the CPU" '
import json, sys
d = json.load(open(sys.argv[1]))
got = sorted((r["op"], r["precision"]) for r in d["results"] if r["median_ms"] is not None)
want = sorted((op, p) for op in ("d2x", "d2y", "d2z", "lap", "wave") for p in ("f32", "f64"))
if got != want:
    sys.exit(f"best results {got}, expected {want}")
if {r["backend"] for r in d["results"]} != {"cpu"}:
    sys.exit("not CPU results: " + str({(r["backend"], r["arch"]) for r in d["results"]}))
' "$tmp/best.json"

# ---------------------------------------------------------------- export and the C program
run export --cpu auto --R 4 --db "$db" --no-system-db -o "$tmp/fdtuned_cpu.h"
expect_status "export --cpu auto" 0
expect_in "export --cpu auto: a C header" "$tmp/fdtuned_cpu.h" "FDTUNED_CPU_OPERATORS"
expect_not_in "export --cpu auto: no GPU part" "$tmp/fdtuned_cpu.h" "hip_runtime.h"

run export --cpu auto --R 4 --db "$db" --no-system-db --format json
expect_status "export --cpu auto --format json" 0
py "export --cpu auto --format json: ten CPU operators, launchers fdtuned_cpu_*" '
import json, sys
d = json.load(open(sys.argv[1]))
ops = d["operators"]
bad = [o["launcher"] for o in ops if o["target"] != "cpu" or not o["launcher"].startswith("fdtuned_cpu_")]
if len(ops) != 10 or bad:
    sys.exit(f"{len(ops)} operators, not CPU ones: {bad}")
' "$out"

build() { # build OUT HEADER: the example against a header
    "$cc" -O2 -march=native -fopenmp -std=c11 -Wall -Wextra -Werror \
        -DFDTUNED_HEADER="\"$2\"" "$src/examples/cpu_stencil.c" -o "$1" -lm
}
checks=$((checks + 1))
if ! build "$tmp/cpu_stencil" "$tmp/fdtuned_cpu.h" 2>"$tmp/cc.log"; then
    fail "cc -fopenmp examples/cpu_stencil.c with the exported header"
    head -n 20 "$tmp/cc.log" >&2
fi
for g in "$n $n $n" "37 29 23"; do
    rc=0
    # shellcheck disable=SC2086
    "$tmp/cpu_stencil" $g >"$out" 2>"$err" || rc=$?
    expect_status "cpu_stencil $g (every operator against the fp64 reference)" 0
    checks=$((checks + 1))
    [ "$(grep -c ': ok$' "$out")" -eq 10 ] || fail "cpu_stencil $g: not 10 operators ok: $(cat "$out")"
done
# the constant kernel (grid baked in) answers on the tuned grid, a runtime one elsewhere
rc=0
"$tmp/cpu_stencil" "$n" "$n" "$n" >"$out" 2>&1 || rc=$?
checks=$((checks + 1))
grep -q "variant [13579] " "$out" || fail "tuned grid: no constant variant picked: $(head -3 "$out")"

# the check is real: a header whose kernels have one weight wrong fails it
sed 's/(p\[-1 \* s\] + p\[1 \* s\])/(p[-1 * s] + p[2 * s])/' "$tmp/fdtuned_cpu.h" >"$tmp/broken.h"
checks=$((checks + 1))
if cmp -s "$tmp/fdtuned_cpu.h" "$tmp/broken.h"; then
    fail "could not break the header's kernels (no '(p[-1 * s] + p[1 * s])' in them)"
elif build "$tmp/broken" "$tmp/broken.h" 2>"$tmp/cc.log"; then
    rc=0
    "$tmp/broken" 37 29 23 >"$out" 2>"$err" || rc=$?
    expect_status "cpu_stencil with a broken kernel" 1
    expect_in "cpu_stencil with a broken kernel" "$out" "WRONG"
else
    fail "the broken header does not build"
fi

# one export for a database with GPU and CPU results: both parts in one file; a C program
# gets the CPU part (FDTUNED_CPU_ONLY), and the notes speak of each part's own devices
run db merge -o "$tmp/both.db" "$db" "$src/tests/data/h100-replay.db"
expect_status "db merge of CPU and GPU results" 0
run export --gpu H100 --cpu auto --R 4 --db "$tmp/both.db" --no-system-db -o "$tmp/both.h"
expect_status "export --gpu H100 --cpu auto" 0
expect_in "export --gpu --cpu: the GPU part" "$tmp/both.h" "hip_runtime.h"
expect_in "export --gpu --cpu: the CPU part" "$tmp/both.h" "FDTUNED_CPU_OPERATORS"
expect_in "export --gpu --cpu: the summary names the CPU's" "$err" "CPU lap R=4 f32"
checks=$((checks + 1))
! grep "has no tuned" "$err" | grep -q "(x86-64-v\|(aarch64" ||
    fail "export --gpu --cpu: a note counts the CPU among the GPUs: $(grep "has no tuned" "$err")"
checks=$((checks + 1))
if build "$tmp/both" "$tmp/both.h" 2>"$tmp/cc.log"; then
    rc=0
    "$tmp/both" 37 29 23 >"$out" 2>"$err" || rc=$?
    expect_status "cpu_stencil with the two-part header" 0
else
    fail "cc -fopenmp examples/cpu_stencil.c with the two-part header"
    head -n 20 "$tmp/cc.log" >&2
fi
checks=$((checks + 1))
"$cc" -fopenmp -fsyntax-only -DFDTUNED_SELECT_ONLY -x c "$tmp/both.h" 2>"$tmp/cc.log" ||
    fail "the two-part header with FDTUNED_SELECT_ONLY: $(head -n 5 "$tmp/cc.log")"

# ---------------------------------------------------------------- bad inputs
run --cpu no-such-cpu --R 4 --grid 16^3 --op lap --db "$tmp/bad.db"
expect_status "tune --cpu no-such-cpu" 2
expect_in "tune --cpu no-such-cpu: names the host CPU" "$err" "the host CPU is a"
checks=$((checks + 1))
[ ! -e "$tmp/bad.db" ] || fail "tune --cpu no-such-cpu created its database"

run --gpu auto --cpu auto --R 4 --grid 16^3 --op lap --db "$tmp/bad.db"
expect_status "tune --gpu auto --cpu auto" 2

if "$fdtune" devices --json --no-bandwidth 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(1 if any(x.get("backend") != "cpu" for x in d["devices"]) else 0)'; then
    run --gpu auto --R 4 --grid 16^3 --op lap --db "$tmp/bad.db"
    expect_status "tune --gpu auto without a GPU" 3
    expect_in "tune --gpu auto without a GPU: points at --cpu auto" "$err" "--cpu auto"
    checks=$((checks + 1))
    [ ! -e "$tmp/bad.db" ] || fail "tune --gpu auto without a GPU created its database"
else
    echo "note: a GPU is visible here; the --gpu auto without a GPU check is skipped" >&2
fi

run export --cpu no-such-cpu --R 4 --db "$db" --no-system-db -o "$tmp/none.h"
expect_status "export --cpu no-such-cpu" 1
expect_in "export --cpu no-such-cpu" "$err" "--cpu no-such-cpu"
checks=$((checks + 1))
[ ! -e "$tmp/none.h" ] || fail "export --cpu no-such-cpu wrote a file"

# retune of the CPU's results: re-measured on the host CPU (0 done, 1 a regression not
# recovered on a noisy machine); another CPU's name is refused
run retune --cpu auto --op d2x --db "$db" --json
checks=$((checks + 1))
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "retune --cpu auto: exit $rc: $(tail -n 3 "$err")"
py "retune --cpu auto: the CPU's d2x problems re-measured" '
import json, sys
d = json.load(open(sys.argv[1]))
items = [i for i in d["problems"] if i["op"] == "d2x" and not i["error"]]
if len(items) != 2 or {g["backend"] for g in d["gpus"]} != {"cpu"}:
    sys.exit(f"{len(items)} d2x problems re-measured, expected 2 (f32, f64) on the cpu: {d}")
' "$out"
run retune --cpu no-such-cpu --db "$db"
expect_status "retune --cpu no-such-cpu" 2
expect_in "retune --cpu no-such-cpu" "$err" "the host CPU is a"

# ---------------------------------------------------------------- injected faults
run bench --cpu auto --op lap --R 4 --grid 16^3 --timeout 10 --probe --json \
    --config fault=oob --config fault=hang --config fault=coef --config blk=0
expect_status "bench --cpu auto with faults (some not ok)" 1
py "bench --cpu auto: crashed, timeout, wrong, then ok" '
import json, sys
d = json.load(open(sys.argv[1]))
got = [r["status"] for r in d["results"]]
want = ["crashed", "timeout", "wrong", "ok"]
if got != want:
    sys.exit(f"statuses {got}, expected {want}")
restarts = d.get("worker_restarts", 0)
if restarts < 2:
    sys.exit(f"worker_restarts {restarts}, expected 2 or more")
full = d["results"][3]["config_full"]  # the loop nest, key "default": the C parameters
if "blk=0" not in full or "bx=" in full:
    sys.exit(f"the CPU default config shown as {full}")
' "$out"

run --cpu auto --op lap --R 4 --grid 16^3 --recipe "$src/tests/data/cpu_faults.lua" \
    --timeout 10 --db "$tmp/faults.db" --json
expect_status "tune --cpu auto over crashing and hanging kernels" 0
run query best --cpu auto --db "$tmp/faults.db" --no-system-db --json
py "tune over faults: the sound config is the best" '
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["results"] if x["op"] == "lap"]
if len(r) != 1 or "fault=" in r[0]["config"] or r[0]["median_ms"] is None:
    sys.exit(f"best {r}")
' "$out"
checks=$((checks + 1))
statuses=$(python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(" ".join(sorted({s for (s,) in c.execute("select status from evaluations")})))
' "$tmp/faults.db")
case $statuses in
    *crashed*timeout*wrong*) ;;
    *) fail "tune over faults: statuses stored '$statuses', expected crashed, timeout and wrong" ;;
esac

# ---------------------------------------------------------------- dwave and the step driver
# A damped step tuned on the CPU (every deployment is a candidate of cpu.lua), exported with
# the driver and stepped by the user program examples/dwave_driver.c: N steps with a point
# source through fdtd_step against N double-precision steps, on the tuned grid and another.
run --cpu auto --op dwave --absorb 4:0.3 --R 2 --grid 32^3 --precision f32 --budget 4 \
    --timeout 60 --db "$tmp/dwave.db"
expect_status "tune --cpu auto --op dwave --absorb 4:0.3" 0
run export --cpu auto --op dwave --absorb 4:0.3 --db "$tmp/dwave.db" --no-system-db --driver \
    -o "$tmp/fdtd.h"
expect_status "export --cpu auto --op dwave --driver" 0
expect_in "export --driver: the driver after the header" "$tmp/fdtd.h" "fdtd_step(fdtd_real src)"
checks=$((checks + 1))
if ! "$cc" -O2 -march=native -fopenmp -std=c11 -Wall -Wextra -Werror \
        -DFDTD_HEADER="\"$tmp/fdtd.h\"" "$src/examples/dwave_driver.c" -o "$tmp/dwave_driver" \
        -lm 2>"$tmp/cc.log"; then
    fail "cc -fopenmp examples/dwave_driver.c with the exported driver"
    head -n 20 "$tmp/cc.log" >&2
fi
for g in "32 32 32 100" "40 36 30 60"; do
    rc=0
    # shellcheck disable=SC2086
    "$tmp/dwave_driver" $g >"$out" 2>"$err" || rc=$?
    expect_status "dwave_driver $g (the driver's steps against double precision)" 0
    expect_in "dwave_driver $g: ok" "$out" ": ok"
done

echo "test_cpu_tune: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
