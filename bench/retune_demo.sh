#!/usr/bin/env bash
# Demonstrates `fdtune retune` on a GPU machine (issue 4): tunes d2z and lap (R=4) into a
# fresh database, runs retune twice (nothing changed: the bests the tuner decided are kept),
# then with --force-env-change, which re-searches every problem as after a driver or
# compiler update, while a second retune started meanwhile is refused (exit 5); then doctors
# the stored median of one best so that retune finds a regression it cannot recover (exit
# 1), and runs once more (quiet: the best now follows today's measurement). Each report is
# printed and kept in OUTDIR.
# Usage: bench/retune_demo.sh [GRID [BUDGET]]   (defaults 512^3 and 20)
# Environment: FDTUNE (default build/fdtune), OUTDIR (default bench/results/retune).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/retune}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes}
grid=${1:-512^3}
budget=${2:-20}
mkdir -p "$OUTDIR"
db=$OUTDIR/retune-demo.db
rm -f "$db" "$db-wal" "$db-shm" "$db.retune.lock"

show() { echo "--- $1 (exit $2)"; cat "$OUTDIR/$1"; }

echo "=== tune: d2z,lap R=4 $grid, model strategy, budget $budget"
"$FDTUNE" --gpu auto --R 4 --grid "$grid" --op d2z,lap --strategy model --budget "$budget" \
    --db "$db" >"$OUTDIR/tune.txt" 2>"$OUTDIR/tune.log"
show tune.txt $?

echo "=== retune 1"
"$FDTUNE" retune --db "$db" >"$OUTDIR/retune1.txt" 2>"$OUTDIR/retune1.log"
show retune1.txt $?

echo "=== retune 2 (--json)"
"$FDTUNE" retune --db "$db" --json >"$OUTDIR/retune2.json" 2>"$OUTDIR/retune2.log"
show retune2.json $?

echo "=== retune 3 --force-env-change (re-searches every problem, budget $budget), and another"
echo "    retune started while it holds the lock"
"$FDTUNE" retune --db "$db" --force-env-change --budget "$budget" >"$OUTDIR/retune3.txt" \
    2>"$OUTDIR/retune3.log" &
pid=$!
for _ in $(seq 100); do [ -s "$db.retune.lock" ] && break; sleep 0.1; done # holder written
"$FDTUNE" retune --db "$db" >"$OUTDIR/retune-busy.txt" 2>&1
show retune-busy.txt "$? (5: refused while another retune runs)"
wait "$pid"
show retune3.txt $?

echo "=== retune 4 after a doctored row: the stored median of the lap best made 20% faster,"
echo "    so today's measurement is a 25% regression no re-search can recover (exit 1)"
python3 - "$db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
(eid,) = c.execute("SELECT b.eval_id FROM best_decisions b JOIN problems p ON p.id = b.problem_id"
                   " WHERE p.op = 'lap' ORDER BY b.id DESC LIMIT 1").fetchone()
c.execute("UPDATE evaluations SET time_ms = time_ms * 0.8, time_q1_ms = time_q1_ms * 0.8,"
          " time_q3_ms = time_q3_ms * 0.8, time_min_ms = time_min_ms * 0.8,"
          " time_max_ms = time_max_ms * 0.8 WHERE id = ?", (eid,))
c.commit()
print("doctored evaluation", eid)
PY
"$FDTUNE" retune --db "$db" --op lap --budget "$budget" >"$OUTDIR/retune4.txt" \
    2>"$OUTDIR/retune4.log"
show retune4.txt $?

echo "=== retune 5: quiet again (the decision moved to the measurement of retune 4)"
"$FDTUNE" retune --db "$db" >"$OUTDIR/retune5.txt" 2>"$OUTDIR/retune5.log"
show retune5.txt $?

echo "=== the database afterwards"
"$FDTUNE" query best --db "$db"
"$FDTUNE" query runs --db "$db"
