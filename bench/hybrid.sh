#!/usr/bin/env bash
# The hybrid step on a real GPU node (issue 29's acceptance on the H200): at 256^3 and 512^3,
# dwave R=4 f32 W=16:
#  1. the host<->device link (`fdtune devices --db`);
#  2. the tunes the planner reads: the GPU's dwave (every deployment is a tuned parameter),
#     its undamped wave at the same grid (the interior kernel's rate), the CPU's dwave;
#  3. the three deployments' times on the GPU and on the CPU (`fdtune bench` of each device's
#     best config with deploy=complete, inout, sides);
#  4. the damped step's fraction of copy against the undamped wave's on the GPU (its extra
#     bytes counted: the effective bytes of dwave include c2 and p_prev like wave's): PASS
#     when dwave's GB/s is within 10% of wave's;
#  5. `fdtune hybrid plan --json`: the planner's choice and its data-parallel planes k;
#  6. `fdtune bench --hybrid gpu,cpu,data,task --fraction (k-d, k, k+d)/nz`: measured time per
#     step of GPU only, CPU only, data-parallel at three fractions around the chosen one,
#     task-parallel, each compared with the single-device run (agreement to rounding), with
#     the planner's prediction beside: PASS when every run agrees, when each predicted mode is
#     within 15% of its measurement, and when the planner's choice is the fastest measured or
#     within 3% of it;
#  7. data-parallel on host-mapped memory (--share always), the stand-in of unified memory;
#  8. the energy check (`fdtune bench --reflection`, W = 0, 4, 8, 16): PASS when it falls.
# Prints PASS/FAIL per check and keeps every JSON under OUTDIR. Usage: bench/hybrid.sh
# Environment: FDTUNE (default build/fdtune), OUTDIR (default bench/results/hybrid), BUDGET
# (configs measured per tune, default 60), STEPS (timed steps, default 50), GRIDS (default
# "256 512").
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/hybrid}
BUDGET=${BUDGET:-60}
STEPS=${STEPS:-50}
GRIDS=${GRIDS:-256 512}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes}
mkdir -p "$OUTDIR"
db=$OUTDIR/hybrid.db
rm -f "$db" "$db"-*
fails=0
verdict() {
    if [ "$1" -eq 0 ]; then echo "PASS: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); fi
}
step() { echo; echo "=== $*"; }

step "1. host link"
"$FDTUNE" devices --db "$db" | tee "$OUTDIR/devices.txt"
verdict "${PIPESTATUS[0]}" "devices measured and stored the link"

for g in $GRIDS; do
    grid="$g^3"
    prob=(--R 4 --precision f32 --grid "$grid")
    dw=(--op dwave --absorb 16 "${prob[@]}")
    step "2. tunes at $grid"
    "$FDTUNE" --gpu auto "${dw[@]}" --budget "$BUDGET" --db "$db"
    verdict $? "GPU dwave tuned at $grid"
    "$FDTUNE" --gpu auto --op wave "${prob[@]}" --budget "$BUDGET" --db "$db"
    verdict $? "GPU wave (the interior kernel's rate) tuned at $grid"
    "$FDTUNE" --cpu auto "${dw[@]}" --budget "$BUDGET" --db "$db"
    verdict $? "CPU dwave tuned at $grid"
    "$FDTUNE" query best "${prob[@]}" --op dwave,wave --db "$db" --no-system-db --json \
        >"$OUTDIR/best_$g.json"

    step "3. deployments at $grid"
    for who in gpu cpu; do
        cfg=$(python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["op"] == "dwave"
        and (r["backend"] == "cpu") == (sys.argv[2] == "cpu")]
print(rows[0]["config"] if rows else "")' "$OUTDIR/best_$g.json" "$who")
        [ -n "$cfg" ] || { verdict 1 "$who has a tuned dwave best at $grid"; continue; }
        base=$(echo "$cfg" | sed -E 's/(^|,)deploy=[a-z]+//; s/^,//')
        args=()
        for d in complete inout sides; do
            args+=(--config "${base:+$base,}deploy=$d")
        done
        dev=(--device 0)
        [ "$who" = cpu ] && dev=(--cpu auto)
        "$FDTUNE" bench "${dw[@]}" "${dev[@]}" "${args[@]}" --json >"$OUTDIR/deploy_${who}_$g.json"
        verdict $? "$who: the three deployments benched at $grid (deploy_${who}_$g.json)"
        python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("  %-60s %10.4f ms %8.0f GB/s %5.1f%% of copy" % (r["config"], r["median_ms"] or 0,
          r["gbs"] or 0, 100 * (r["frac_copy"] or 0)))' "$OUTDIR/deploy_${who}_$g.json"
    done

    step "4. damped vs undamped on the GPU at $grid"
    python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["backend"] != "cpu"]
b = {r["op"]: r for r in rows}
d, w = b["dwave"], b["wave"]
print("dwave %.0f GB/s (%.1f%% of copy), wave %.0f GB/s (%.1f%% of copy): %.1f%%" % (
    d["gbs"], 100 * d["frac_copy"], w["gbs"], 100 * w["frac_copy"], 100 * d["gbs"] / w["gbs"]))
sys.exit(0 if d["gbs"] >= 0.9 * w["gbs"] else 1)' "$OUTDIR/best_$g.json"
    verdict $? "dwave within 10% of wave's bandwidth on the GPU at $grid"

    step "5. the plan at $grid"
    "$FDTUNE" hybrid plan --gpu auto --cpu auto "${dw[@]}" --db "$db" | tee "$OUTDIR/plan_$g.txt"
    "$FDTUNE" hybrid plan --gpu auto --cpu auto "${dw[@]}" --db "$db" --json >"$OUTDIR/plan_$g.json"
    verdict $? "planned at $grid"
    fr=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["hybrid_plan"]
nz, k = p["nz"], p["cpu_planes"] or 4
d = max(2, k // 2)
ks = sorted({max(1, k - d), k, min(nz - 1, k + d)})
print(",".join("%.6f" % (x / nz) for x in ks))' "$OUTDIR/plan_$g.json")
    echo "data-parallel fractions: $fr"

    step "6. measured at $grid"
    "$FDTUNE" bench --hybrid gpu,cpu,data,task --fraction "$fr" --gpu auto --cpu auto "${dw[@]}" \
        --steps "$STEPS" --warmup 5 --db "$db" | tee "$OUTDIR/run_$g.txt"
    verdict "${PIPESTATUS[0]}" "every hybrid run agrees with the single-device run at $grid"
    "$FDTUNE" bench --hybrid gpu,cpu,data,task --fraction "$fr" --gpu auto --cpu auto "${dw[@]}" \
        --steps "$STEPS" --warmup 5 --db "$db" --json >"$OUTDIR/run_$g.json"
    python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
runs, choice = doc["runs"], doc.get("planned_choice")
ok = True
for r in runs:
    p = r["predicted_ms"]
    if p is None:
        continue
    err = abs(p - r["step_ms"]) / r["step_ms"]
    print("%-14s planes %-5s measured %.4f ms predicted %.4f ms (%+.1f%%)" % (
        r["mode"], r["cpu_planes"], r["step_ms"], p, 100 * (p - r["step_ms"]) / r["step_ms"]))
    ok &= err <= 0.15
best = min(r["step_ms"] for r in runs)
names = {"gpu": "gpu-only", "cpu": "cpu-only", "data": "data-parallel", "task": "task-parallel"}
mine = [r["step_ms"] for r in runs if r["mode"] == names.get(choice)]
print("planner chose %s: %.4f ms; fastest measured %.4f ms" % (choice, min(mine), best))
print("exchange per step:", ", ".join("%s %.4f ms (%.2f MB)" % (r["mode"], r["exchange_ms"],
      r["exchange_bytes"] / 1e6) for r in runs))
sys.exit(0 if ok and min(mine) <= 1.03 * best else 1)' "$OUTDIR/run_$g.json"
    verdict $? "predicted within 15% and the choice fastest (or within 3%) at $grid"

    step "7. host-mapped memory (the unified stand-in) at $grid"
    "$FDTUNE" bench --hybrid data --share always --fraction "$fr" --gpu auto --cpu auto "${dw[@]}" \
        --steps 10 --db "$db" | tee "$OUTDIR/mapped_$g.txt"
    verdict "${PIPESTATUS[0]}" "data-parallel on host-mapped memory agrees at $grid"
done

step "8. energy check"
"$FDTUNE" bench --reflection --gpu auto --op dwave --R 4 --grid 256^3 --absorb 16 \
    --widths 0,4,8,16 --db "$db" | tee "$OUTDIR/reflection.txt"
verdict "${PIPESTATUS[0]}" "the energy coming back falls as W grows"

echo
echo "$fails check(s) failed"
[ "$fails" -eq 0 ]
