#!/usr/bin/env bash
# The hybrid step on a real GPU node (issue 29's acceptance on the H200): at 256^3 and 512^3,
# dwave R=4 f32 W=16:
#  1. the host<->device link (`fdtune devices --db`; skipped with KEEP_DB=1 when the database
#     already holds a link: a second call for another grid);
#  2. the tunes the planner reads (each with the tuner's default budget unless BUDGET is
#     set): the GPU's dwave (every deployment is a tuned parameter), its undamped wave at the
#     same grid (the interior kernel's rate), the CPU's dwave (every CPU candidate is timed
#     on the grid's first 2R planes too: the data-parallel part's rate); then
#     `fdtune query best` of dwave (--absorb 16) and of wave, each into its own JSON;
#  3. the three deployments' times on the GPU and on the CPU (`fdtune bench` of each device's
#     best config with deploy=complete, inout, sides), the same measured by the tuner into the
#     database (the best measured again: the planner takes re-measurements over the search's
#     own measurement, the low tail of the winner's times), and the CPU's config whose slabs
#     the tune timed fastest (task-parallel's) measured again; the CPU's REMEASURE times each
#     (the host's times spread by 10-30% from one run to the next: the planner takes the
#     median);
#  4. the damped step's fraction of copy against the undamped wave's on the GPU (its extra
#     bytes counted: the effective bytes of dwave include c2 and p_prev like wave's): PASS
#     when dwave's GB/s is within 10% of wave's;
#  5. `fdtune hybrid plan --json`: the planner's choice and its data-parallel planes k; three
#     distinct plane counts around k (k-d, k, k+d with d = max(1, k/2), shifted up or down to
#     stay within 1..nz-1; 1, 2 and 4 planes when the plan has no split), said in the output;
#  6. `fdtune bench --hybrid MODE --fraction ... --repeat REPEAT` for each mode in its own
#     call (each printed when done; merged into run_GRID.json): measured time
#     per step of GPU only, CPU only, data-parallel at those three fractions, task-parallel,
#     each run REPEAT times in its own process (the median run's time, beside the runs' least
#     and greatest: one run on a shared host lands anywhere in a spread of 30%), each compared
#     with the single-device run (max |diff|, max |p| and the tolerance), with the planner's
#     prediction beside every run (data-parallel at each run's own planes): PASS when every
#     run agrees, when each prediction is within 15% of its measurement, and when the
#     planner's choice is the fastest measured or within 3% of it;
#  7. data-parallel on host-mapped memory (--share always), the stand-in of unified memory;
#  8. the energy check (`fdtune bench --reflection`, W = 0, 4, 8, 16 at 256^3): PASS when it
#     falls (REFLECTION=0 leaves it out: a second call).
# Prints PASS/FAIL per check and keeps every JSON under OUTDIR. Usage: bench/hybrid.sh
# Environment: FDTUNE (default build/fdtune), OUTDIR (default bench/results/hybrid), BUDGET
# (configs measured per tune, default: the tuner's own), REMEASURE (the CPU's re-measurements
# in step 3, default 3), STEPS (timed steps, default 50), REPEAT (runs of
# each mode in step 6, default 5), GRIDS (default
# "256 512"), KEEP_DB=1 (keep OUTDIR/hybrid.db: grids in separate calls share one database),
# REFLECTION (default 1), RUN_ONLY=1 (with KEEP_DB=1: steps 5-7 alone, on the tunes the
# database holds: the runner and the planner again, no tuning). E.g. GRIDS=256
# bench/hybrid.sh, then GRIDS=512 KEEP_DB=1 REFLECTION=0 bench/hybrid.sh.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/hybrid}
BUDGET=${BUDGET:-}
REMEASURE=${REMEASURE:-3}
budget=()
[ -n "$BUDGET" ] && budget=(--budget "$BUDGET")
STEPS=${STEPS:-50}
REPEAT=${REPEAT:-5}
GRIDS=${GRIDS:-256 512}
KEEP_DB=${KEEP_DB:-0}
REFLECTION=${REFLECTION:-1}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes}
mkdir -p "$OUTDIR"
db=$OUTDIR/hybrid.db
[ "$KEEP_DB" = 1 ] || rm -f "$db" "$db"-*
fails=0
verdict() {
    if [ "$1" -eq 0 ]; then echo "PASS: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); fi
}
step() { echo; echo "=== $*"; }

# tune_these WHO NAME --config C ...: the configs measured by the tuner into the database
# (WHO gpu or cpu), through a recipe of those configs alone (OUTDIR/NAME.lua); the tuner's
# JSON in OUTDIR/NAME_tuned.json.
tune_these() {
    local who=$1 name=$2 rec="$OUTDIR/$2.lua" tdev=(--gpu auto)
    shift 2
    python3 - "$@" >"$rec" <<'EOF'
import sys
cfgs = [a for a in sys.argv[1:] if a != "--config"]
vals = {}
for c in cfgs:
    for kv in c.split(","):
        k, v = kv.split("=")
        if v not in vals.setdefault(k, []):
            vals[k].append(v)
lit = lambda v: v if v.lstrip("-").replace(".", "", 1).isdigit() else '"%s"' % v
print('-- bench/hybrid.sh: these configs alone, measured again')
print('ops { "dwave" }')
for k, vs in vals.items():
    print('param("%s", { %s })' % (k, ", ".join(lit(v) for v in vs)))
print('constrain("these configs alone", function(c, dev, prob)')
print('  local s = {}')
for c in cfgs:
    print('  s["%s"] = true' % ",".join(sorted(c.split(","))))
print('  local t = {}')
print('  for _, k in ipairs({%s}) do t[#t + 1] = k .. "=" .. tostring(c[k]) end' %
      ", ".join('"%s"' % k for k in sorted(vals)))
print('  return s[table.concat(t, ",")] == true')
print('end)')
print('strategy "exhaustive"')
print('budget(%d)' % len(cfgs))
print('default { %s }' % ", ".join("%s = %s" % (k, lit(vs[0])) for k, vs in vals.items()))
EOF
    [ "$who" = cpu ] && tdev=(--cpu auto)
    "$FDTUNE" "${tdev[@]}" "${dw[@]}" --recipe "$rec" --db "$db" --search-all \
        --json >"$OUTDIR/${name}_tuned.json"
}

step "1. host link"
links=$(python3 -c '
import sqlite3, sys
try:
    print(sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
          .execute("select count(*) from links").fetchone()[0])
except Exception:
    print(0)' "$db")
if [ "$KEEP_DB" = 1 ] && [ "$links" -gt 0 ]; then
    echo "skipped: $db already holds $links host link measurement(s) (KEEP_DB=1)"
else
    "$FDTUNE" devices --db "$db" | tee "$OUTDIR/devices.txt"
    verdict "${PIPESTATUS[0]}" "devices measured and stored the link"
fi

for g in $GRIDS; do
    grid="$g^3"
    prob=(--R 4 --precision f32 --grid "$grid")
    dw=(--op dwave --absorb 16 "${prob[@]}")
    if [ "${RUN_ONLY:-0}" != 1 ]; then
    step "2. tunes at $grid"
    "$FDTUNE" --gpu auto "${dw[@]}" "${budget[@]}" --db "$db"
    verdict $? "GPU dwave tuned at $grid"
    "$FDTUNE" --gpu auto --op wave "${prob[@]}" "${budget[@]}" --db "$db"
    verdict $? "GPU wave (the interior kernel's rate) tuned at $grid"
    "$FDTUNE" --cpu auto "${dw[@]}" "${budget[@]}" --db "$db"
    verdict $? "CPU dwave tuned at $grid"
    # one query per op: dwave takes its layer (--absorb), wave none
    "$FDTUNE" query best "${dw[@]}" --db "$db" --no-system-db --json >"$OUTDIR/best_dwave_$g.json"
    verdict $? "query best dwave at $grid"
    "$FDTUNE" query best --op wave "${prob[@]}" --db "$db" --no-system-db --json \
        >"$OUTDIR/best_wave_$g.json"
    verdict $? "query best wave at $grid"

    step "3. deployments at $grid"
    for who in gpu cpu; do
        cfg=$(python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["results"] if r["op"] == "dwave"
        and (r["backend"] == "cpu") == (sys.argv[2] == "cpu")]
print(rows[0]["config"] if rows else "")' "$OUTDIR/best_dwave_$g.json" "$who")
        [ -n "$cfg" ] || { verdict 1 "$who has a tuned dwave best at $grid"; continue; }
        base=$(echo "$cfg" | sed -E 's/(^|,)deploy=[a-z]+//; s/^,//')
        args=()
        for d in complete inout sides; do
            c="${base:+$base,}deploy=$d"
            # a window deeper than the W-thick faces cannot run sides: the same config with
            # the window cut to W (16) stands in, and the line says so
            if [ "$who" = gpu ] && ! "$FDTUNE" gen "${dw[@]}" --config "$c" >/dev/null 2>&1; then
                c2=$(echo "$c" | sed -E 's/(^|,)nw=[0-9]+/\1nw=16/')
                echo "  $c cannot run its boxes here: $c2 benched instead"
                c=$c2
            fi
            args+=(--config "$c")
        done
        dev=(--device 0)
        [ "$who" = cpu ] && dev=(--cpu auto)
        "$FDTUNE" bench "${dw[@]}" "${dev[@]}" "${args[@]}" --json >"$OUTDIR/deploy_${who}_$g.json"
        verdict $? "$who: the three deployments benched at $grid (deploy_${who}_$g.json)"
        # the same three measured by the tuner and stored, so that the planner reads each
        # deployment's rate (the slabs' of sides above all) from the database; the best's
        # complete is measured again there (the search's own measurement is the low tail
        # of its times, which the planner then leaves out)
        times=1
        [ "$who" = cpu ] && times=$REMEASURE
        for i in $(seq "$times"); do
            tune_these "$who" "deploy_${who}_$g" "${args[@]}"
            verdict $? "$who: the three deployments measured by the tuner into the database ($i of $times)"
        done
        if [ "$who" = cpu ]; then
            # the config whose slabs the tune timed fastest, which task-parallel runs: its
            # layer time measured again for the same reason
            lc=$("$FDTUNE" hybrid plan --gpu auto --cpu auto "${dw[@]}" --db "$db" --json |
                python3 -c 'import json,sys; print(json.load(sys.stdin)["hybrid_plan"]["inputs"]["cpu"].get("layers_config") or "")')
            if [ -n "$lc" ]; then
                for i in $(seq "$REMEASURE"); do
                    tune_these cpu "layers_cpu_$g" --config "$lc"
                    verdict $? "cpu: the slabs' config ($lc) measured again by the tuner ($i of $REMEASURE)"
                done
            fi
        fi
        python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("  %-60s %10.4f ms %8.0f GB/s %5.1f%% of copy" % (r["config"], r["median_ms"] or 0,
          r["gbs"] or 0, 100 * (r["frac_copy"] or 0)))' "$OUTDIR/deploy_${who}_$g.json"
    done

    step "4. damped vs undamped on the GPU at $grid"
    python3 -c '
import json, sys
rows = [r for f in sys.argv[1:] for r in json.load(open(f))["results"] if r["backend"] != "cpu"]
b = {r["op"]: r for r in rows}
if "dwave" not in b or "wave" not in b:
    print("no GPU best of %s" % " and ".join(o for o in ("dwave", "wave") if o not in b))
    sys.exit(1)
d, w = b["dwave"], b["wave"]
print("dwave %.0f GB/s (%.1f%% of copy), wave %.0f GB/s (%.1f%% of copy): %.1f%%" % (
    d["gbs"], 100 * d["frac_copy"], w["gbs"], 100 * w["frac_copy"], 100 * d["gbs"] / w["gbs"]))
sys.exit(0 if d["gbs"] >= 0.9 * w["gbs"] else 1)' "$OUTDIR/best_dwave_$g.json" \
        "$OUTDIR/best_wave_$g.json"
    verdict $? "dwave within 10% of wave's bandwidth on the GPU at $grid"
    fi

    step "5. the plan at $grid"
    "$FDTUNE" hybrid plan --gpu auto --cpu auto "${dw[@]}" --db "$db" | tee "$OUTDIR/plan_$g.txt"
    "$FDTUNE" hybrid plan --gpu auto --cpu auto "${dw[@]}" --db "$db" --json >"$OUTDIR/plan_$g.json"
    verdict $? "planned at $grid"
    fr=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["hybrid_plan"]
nz, k = p["nz"], p.get("cpu_planes") or 0
if k < 1:
    ks, why = [1, 2, 4], "the plan has no data-parallel split: 1, 2 and 4 planes"
else:
    d = max(1, k // 2)
    lo = min(max(1, k - d), nz - 1 - 2 * d)
    ks = [lo, lo + d, lo + 2 * d]
    why = "the plan puts k = %d planes on the CPU: %s (d = %d)" % (
        k, ", ".join(map(str, ks)), d)
print(why, file=sys.stderr)
print(",".join("%.8f" % (x / nz) for x in ks))' "$OUTDIR/plan_$g.json")
    echo "data-parallel fractions: $fr"

    step "6. measured at $grid"
    # one mode a call, each printed when done (a call cut short by a limit keeps what ran),
    # then merged into run_GRID.json
    rc=0
    for m in gpu data cpu task; do
        fa=()
        [ $m = data ] && fa=(--fraction "$fr")
        "$FDTUNE" bench --hybrid $m "${fa[@]}" --gpu auto --cpu auto "${dw[@]}" \
            --steps "$STEPS" --warmup 5 --repeat "$REPEAT" --db "$db" --json \
            >"$OUTDIR/run_${g}_$m.json" || rc=1
        python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["runs"]:
    print("  %s %s: %.4f ms a step (%d runs %.4f-%.4f), predicted %s" % (r["mode"],
          r["cpu_planes"] or "-", r["step_ms"], r["runs"], r["step_min_ms"], r["step_max_ms"],
          r["predicted_ms"]))' "$OUTDIR/run_${g}_$m.json" 2>/dev/null
    done
    python3 -c '
import json, sys
docs = [json.load(open(f)) for f in sys.argv[2:]]
doc = docs[0]
doc["runs"] = [r for d in docs for r in d["runs"]]
json.dump(doc, open(sys.argv[1], "w"), indent=1)' "$OUTDIR/run_$g.json" \
        "$OUTDIR"/run_${g}_{gpu,data,cpu,task}.json || rc=1
    verdict $rc "every hybrid run agrees with the single-device run at $grid"
    python3 -c '
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except ValueError:
    print("no JSON from the run")
    sys.exit(1)
runs, choice = doc["runs"], doc.get("planned_choice")
ok = bool(runs)
print("%-14s %6s %10s %4s %17s %10s %7s %10s %10s %10s %6s" % ("mode", "planes", "ms/step",
      "runs", "min-max", "predicted", "error", "max|diff|", "max|p|", "tolerance", "agrees"))
for r in runs:
    p = r["predicted_ms"]
    err = None if p is None else (p - r["step_ms"]) / r["step_ms"]
    print("%-14s %6s %10.4f %4d %8.4f-%-8.4f %10s %7s %10.3g %10.3g %10.3g %6s" % (
        r["mode"], r["cpu_planes"] or "-", r["step_ms"], r["runs"], r["step_min_ms"],
        r["step_max_ms"], "-" if p is None else "%.4f" % p,
        "-" if err is None else "%+.1f%%" % (100 * err), r["max_abs_diff"] or 0,
        r["max_abs"] or 0, r["tolerance"] or 0, r["agrees"]))
    ok &= err is None or abs(err) <= 0.15
print("exchange per step:", ", ".join("%s %.4f ms (%.2f MB)" % (r["mode"], r["exchange_ms"],
      r["exchange_bytes"] / 1e6) for r in runs))
names = {"gpu": "gpu-only", "cpu": "cpu-only", "data": "data-parallel", "task": "task-parallel"}
mine = [r["step_ms"] for r in runs if r["mode"] == names.get(choice)]
if not mine:
    print("no prediction or no run of the choice the planner made (%s)" % choice)
    sys.exit(1)
best = min(r["step_ms"] for r in runs)
print("planner chose %s: %.4f ms; fastest measured %.4f ms" % (choice, min(mine), best))
sys.exit(0 if ok and min(mine) <= 1.03 * best else 1)' "$OUTDIR/run_$g.json"
    verdict $? "predicted within 15% and the choice fastest (or within 3%) at $grid"

    step "7. host-mapped memory (the unified stand-in) at $grid"
    "$FDTUNE" bench --hybrid data --share always --fraction "$fr" --gpu auto --cpu auto "${dw[@]}" \
        --steps 10 --db "$db" | tee "$OUTDIR/mapped_$g.txt"
    verdict "${PIPESTATUS[0]}" "data-parallel on host-mapped memory agrees at $grid"
done

if [ "$REFLECTION" = 1 ]; then
    step "8. energy check"
    "$FDTUNE" bench --reflection --gpu auto --op dwave --R 4 --grid 256^3 --absorb 16 \
        --widths 0,4,8,16 --db "$db" | tee "$OUTDIR/reflection.txt"
    verdict "${PIPESTATUS[0]}" "the energy coming back falls as W grows"
fi

echo
echo "$fails check(s) failed"
[ "$fails" -eq 0 ]
