#!/usr/bin/env bash
# Benchmark matrix (issue "every radius, both precisions, every GPU"), for a GPU machine: on the
# first visible GPU, tunes lap and wave with the shipped defaults (the recipe, the model
# strategy, the recipe's budget or BUDGET) for R in {1,2,4,6,8} x {f32,f64} at 512^3 and R in
# {4,8} x {f32,f64} at 1024^3 (28 cells), benches each cell's best in a run of its own (the
# copy bandwidth is measured in that run), asks the model's dry run which of its terms binds
# that config, and appends one row per cell to $OUTDIR/matrix.csv:
#   gpu,op,R,precision,nx,ny,nz,gbs,copy_gbs,frac_copy,config,predicted_bound,tune_wall_s
# predicted_bound is the limit the model says binds the config (the dry run's bound: dram, l2,
# l1, shared, issue, fp or latency; search/model.c).
# Resumes: a cell already in the CSV (same gpu, op, R, precision, grid) is skipped, and a
# cell whose tuning was cut short by DEADLINE is tuned on by the next run (the database keeps
# every evaluation; tune_wall_s adds the runs up), so the matrix can be built over several
# device calls of 10 minutes. fdtune's budget counts the evaluations of one run (a rerun
# spends it on configs not measured yet), so a resumed cell is given what is left of the
# cell's budget (BUDGET or the recipe's) after the evaluations its database already holds
# (the last run's resumed + tried, when it ran on this GPU with this driver and this fdtune:
# fdtune resumes per device, by its UUID, and per environment, which the driver and the
# generator's fingerprint in `fdtune --version` name); without that, a cell whose budget
# outlasts one run's time limit never completes. bench/matrix_report.py draws the heatmap (SVG) from the CSV.
# Usage: bench/matrix.sh [DB]  (default $OUTDIR/matrix.db). Env: BUDGET (evaluations per
# cell; default the recipe's), DEADLINE (seconds this run may take, default 540: no cell or
# evaluation starts after it), CELLS (a subset, e.g. "lap:8:f32:512 wave:4:f64:1024"),
# GPU (the catalogue name for the dry run; default: found from the device's name).
set -u
. "$(dirname "$0")/lib.sh"
db=${1:-$OUTDIR/matrix.db}
csv=$OUTDIR/matrix.csv
walls=$OUTDIR/matrix-wall.tsv
deadline=${DEADLINE:-540}
start=$(date +%s)
header=gpu,op,R,precision,nx,ny,nz,gbs,copy_gbs,frac_copy,config,predicted_bound,tune_wall_s
[ -s "$csv" ] || echo "$header" >"$csv"
touch "$walls"

cells() {
    if [ -n "${CELLS:-}" ]; then tr ' ' '\n' <<<"$CELLS"; return; fi
    for g in 512 1024; do
        radii="1 2 4 6 8"; [ "$g" = 1024 ] && radii="4 8"
        for R in $radii; do for prec in f32 f64; do for op in lap wave; do
            echo "$op:$R:$prec:$g"
        done; done; done
    done
}

gpu=$(device_name)
[ -n "$gpu" ] || { echo "matrix: no GPU visible (fdtune devices)" >&2; exit 3; }
# what must match for a run's evaluations to resume: GPU, driver, fdtune and its generator
uuid=$(device_field uuid)
resume_key=
[ -z "$uuid" ] ||
    resume_key="$uuid $(device_field driver) $("$FDTUNE" --version 2>/dev/null | head -1)"
cat_gpu=$(catalogue_gpu "$gpu")
[ -n "$cat_gpu" ] || echo "matrix: no catalogue entry for '$gpu' (set GPU): bounds unknown" >&2

# The model's bound for config $5 of op $1, R $2, precision $3 on grid $4: a recipe
# of that one config, dry-run.
bound_of() {
    local rec=$OUTDIR/matrix-one.lua
    config_recipe "$1" "$5" >"$rec"
    [ -n "$cat_gpu" ] || { echo unknown; return; }
    "$FDTUNE" --gpu "$cat_gpu" --op "$1" --R "$2" --precision "$3" --grid "$4^3" \
        --recipe "$rec" --dry-run --top 1 --json 2>/dev/null | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["problems"][0]["ranking"][0]["bound"])
except (ValueError, KeyError, IndexError):
    print("unknown")'
}

# The evaluations left of cell ($1 op, $2 R, $3 precision, $4 grid)'s budget (BUDGET, else
# the recipe's from the dry run), after those its last tuning run ($5, JSON, when there is
# one and $5.key holds this run's resume key) left in the database; at least 1. Without such
# a run, or when the budget is unknown: BUDGET, or empty (the recipe's budget).
budget_left() {
    local total=${BUDGET:-}
    [ -n "$resume_key" ] && [ "$(cat "$5.key" 2>/dev/null)" = "$resume_key" ] ||
        { echo "$total"; return 0; }
    if [ -z "$total" ] && [ -n "$cat_gpu" ]; then
        total=$("$FDTUNE" --gpu "$cat_gpu" --op "$1" --R "$2" --precision "$3" --grid "$4^3" \
            --dry-run --top 1 --json 2>/dev/null | python3 -c '
import json, sys
try: print(json.load(sys.stdin)["problems"][0]["budget"] or "")
except (ValueError, KeyError, IndexError): print("")')
    fi
    [ -n "$total" ] || return 0
    python3 - "$total" "$5" <<'PY'
import json, sys
total, path = int(sys.argv[1]), sys.argv[2]
done = 0
try:
    p = json.load(open(path))["problems"][0]
    done = int(p.get("resumed", 0)) + int(p.get("tried", 0))
except (OSError, ValueError, KeyError, IndexError):
    pass
print(max(1, total - done))
PY
}

for cell in $(cells); do
    IFS=: read -r op R prec g <<<"$cell"
    key="$gpu,$op,$R,$prec,$g,$g,$g"
    if grep -qF "$key," "$csv"; then continue; fi
    left=$(( deadline - ($(date +%s) - start) ))
    if [ "$left" -lt 120 ]; then
        echo "matrix: ${left}s left of DEADLINE=$deadline; the next run resumes at $cell" >&2
        break
    fi
    name="$op-R$R-$prec-$g"
    budget=$(budget_left "$op" "$R" "$prec" "$g" "$OUTDIR/matrix-tune-$name.json")
    echo "matrix: tuning $name (${left}s left${budget:+, budget $budget})" >&2
    t0=$(date +%s)
    "$FDTUNE" --gpu auto --op "$op" --R "$R" --precision "$prec" --grid "$g^3" \
        --strategy model ${budget:+--budget "$budget"} --time "$(( left - 90 ))s" \
        --db "$db" --json >"$OUTDIR/matrix-tune-$name.json" 2>"$OUTDIR/matrix-tune-$name.log"
    rc=$?
    echo "$resume_key" >"$OUTDIR/matrix-tune-$name.json.key"
    printf '%s\t%s\n' "$key" "$(( $(date +%s) - t0 ))" >>"$walls"
    read -r best stopped < <(python3 - "$OUTDIR/matrix-tune-$name.json" <<'PY'
import json, sys
try:
    p = json.load(open(sys.argv[1]))["problems"][0]
except (OSError, ValueError, KeyError, IndexError):
    print("- error"); sys.exit()
print(p.get("best_config") or "-", (p.get("stopped") or "done").replace(" ", "_"))
PY
)
    # complete unless --time (the deadline) or an interrupt cut it: a search that stopped at
    # the limit, converged or spent its budget or space is done ("stopped", fdt_stop_describe)
    case "$stopped" in time_limit* | interrupted* | error) stopped="cut:$stopped" ;; *) stopped=done ;; esac
    if [ "$stopped" != done ] || [ "$best" = - ]; then
        echo "matrix: $name not complete (tune exit $rc, stopped: $stopped); resumes next run" >&2
        [ "$stopped" = cut:error ] || break
        continue
    fi
    "$FDTUNE" bench --op "$op" --R "$R" --precision "$prec" --grid "$g^3" --config "$best" \
        --json >"$OUTDIR/matrix-bench-$name.json" 2>"$OUTDIR/matrix-bench-$name.log"
    bound=$(bound_of "$op" "$R" "$prec" "$g" "$best")
    python3 - "$OUTDIR/matrix-bench-$name.json" "$key" "$best" "$bound" "$walls" >>"$csv" <<'PY'
import json, sys
path, key, best, bound, walls = sys.argv[1:]
d = json.load(open(path))
r = [x for x in d["results"] if x["status"] == "ok"]
if not r:
    sys.exit("matrix: %s: the best config did not verify in its bench run" % key)
wall = sum(float(l.split("\t")[1]) for l in open(walls) if l.split("\t")[0] == key)
print("%s,%.1f,%.1f,%.4f,\"%s\",%s,%.0f" % (key, r[0]["gbs"], d["copy_gbs"], r[0]["frac_copy"],
                                            best, bound, wall))
PY
    tail -1 "$csv" >&2
done
python3 "$(dirname "$0")/matrix_report.py" "$csv" "$OUTDIR/matrix.svg"
