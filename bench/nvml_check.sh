#!/usr/bin/env bash
# Checks issue 16 item 7 on an NVIDIA GPU machine: the driver's identity from NVML and the
# clocks recorded with each run. (1) `fdtune devices --json`: every cuda device's driver
# comes from NVML (driver_source "nvml") and equals nvidia-smi's driver_version, with its SM
# and memory clocks and throttle reasons; (2) a small tune: its run row holds driver_source
# 'nvml', the maximum clocks and the clocks and throttle reasons at the start and the end,
# and the environment's driver is the bare version (no "(CUDA 13.0)"); (3) the stored best's
# run doctored as throttled (throttle_end 'sw_thermal') and its median 20% faster: retune
# reports "throttled: not a regression" (verdict throttled), re-searches nothing, exits 0.
# Prints "nvml_check: ok" at the end, or the first failed check (exit 1).
# Usage: bench/nvml_check.sh [GRID]   (default 256^3)
# Environment: FDTUNE (default build/fdtune), OUTDIR (default bench/results/nvml).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/nvml}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes}
grid=${1:-256^3}
mkdir -p "$OUTDIR"
db=$OUTDIR/nvml-check.db
rm -f "$db" "$db-wal" "$db-shm" "$db.retune.lock"
fail() { echo "nvml_check: FAILED: $*"; exit 1; }

echo "=== fdtune devices"
"$FDTUNE" devices --no-bandwidth | tee "$OUTDIR/devices.txt"
"$FDTUNE" devices --no-bandwidth --json >"$OUTDIR/devices.json" || fail "devices --json"
smi=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
python3 - "$OUTDIR/devices.json" "$smi" <<'PY' || fail "devices fields"
import json, sys
d = json.load(open(sys.argv[1]))
cuda = [x for x in d["devices"] if x["backend"] == "cuda"]
assert cuda, "no cuda device"
for x in cuda:
    print(x["name"], "driver", x["driver"], "from", x["driver_source"], "SM",
          x["sm_clock_mhz"], "/", x["sm_clock_max_mhz"], "mem", x["mem_clock_mhz"], "/",
          x["mem_clock_max_mhz"], "throttle", x["throttle_reasons"])
    assert x["driver_source"] == "nvml", x["driver_source"]
    assert sys.argv[2] == "" or x["driver"] == sys.argv[2], (x["driver"], sys.argv[2])
    assert "(" not in x["driver"] and "for" not in x["driver"], x["driver"]
    assert x["sm_clock_max_mhz"] > 0 and x["mem_clock_max_mhz"] > 0
    assert x["sm_clock_mhz"] is not None and x["throttle_reasons"] is not None
PY

echo "=== tune d2x R=4 $grid, budget 8"
"$FDTUNE" --gpu auto --R 4 --grid "$grid" --op d2x --budget 8 --db "$db" \
    >"$OUTDIR/tune.txt" 2>"$OUTDIR/tune.log" || fail "tune (see $OUTDIR/tune.log)"
python3 - "$db" <<'PY' || fail "run row clocks"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for row in c.execute("SELECT r.id, r.driver_source, r.sm_max_mhz, r.mem_max_mhz,"
                     " r.sm_mhz_start, r.mem_mhz_start, r.throttle_start, r.sm_mhz_end,"
                     " r.mem_mhz_end, r.throttle_end, v.driver FROM runs r"
                     " JOIN environments v ON v.id = r.env_id"):
    print("run", row)
    assert row[1] == "nvml" and row[2] > 0 and row[3] > 0, row
    assert None not in (row[4], row[5], row[6], row[7], row[8], row[9]), row
    assert "(" not in row[10], row[10]
PY

echo "=== retune after the best's run was doctored as throttled, its median 20% faster"
python3 - "$db" <<'PY' || fail "doctoring"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
(eid, run) = c.execute("SELECT e.id, e.run_id FROM best_evaluations e LIMIT 1").fetchone()
c.execute("UPDATE evaluations SET time_ms = time_ms * 0.8, time_q1_ms = time_q1_ms * 0.8,"
          " time_q3_ms = time_q3_ms * 0.8, time_min_ms = time_min_ms * 0.8,"
          " time_max_ms = time_max_ms * 0.8 WHERE id = ?", (eid,))
c.execute("UPDATE runs SET throttle_end = 'sw_thermal' WHERE id = ?", (run,))
c.commit()
print("doctored evaluation", eid, "of run", run)
PY
"$FDTUNE" retune --db "$db" >"$OUTDIR/retune.txt" 2>"$OUTDIR/retune.log"
rc=$?
cat "$OUTDIR/retune.txt"
[ "$rc" = 0 ] || fail "retune exit $rc (see $OUTDIR/retune.log)"
grep -q "throttled: not a regression (" "$OUTDIR/retune.txt" ||
    fail "no throttled verdict in the retune report"
"$FDTUNE" retune --db "$db" --json >"$OUTDIR/retune.json" 2>/dev/null
echo "nvml_check: ok"
