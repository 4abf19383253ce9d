#!/bin/bash
# issue 29 run18: the slabs timed with the fields rotating; on run17's databases (256^3 call
# 8, 512^3 call 7), the CPU's layer times cleared, the slabs' config measured again three
# times by the tuner, the plan and task-parallel (3 runs) again
set -u
export HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache FDTUNE_RECIPES=$PWD/recipes
mkdir -p /tmp/h /tmp/r
F=$PWD/.gpu/r18/fdtune
trap 'tar czf $OUT/r18.tgz -C /tmp r' EXIT
s=$(date +%s)
for g in 256 512; do
  db=/tmp/r/h$g.db; cp .gpu/r18/h$g.db $db
  P=(--op dwave --absorb 16 --R 4 --precision f32 --grid $g^3)
  python3 -c '
import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
n=c.execute("update evaluations set layers_ms = NULL where layers_ms is not null and device_id in (select id from devices where name not like \"%NVIDIA%\")").rowcount
c.commit(); print("cleared", n, "CPU layer times")' $db
  for i in 1 2 3; do
    $F --cpu auto "${P[@]}" --recipe .gpu/r18/layers.lua --db $db --search-all --json > /tmp/r/layers_${g}_$i.json 2>/tmp/r/layers_${g}_$i.err
    echo "layers $g $i rc=$? $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d)[:0])' /tmp/r/layers_${g}_$i.json 2>/dev/null) at $(( $(date +%s) - s )) s"
  done
  python3 -c '
import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
print("layers_ms now:", [round(r[0],4) for r in c.execute("select layers_ms from evaluations where layers_ms is not null order by id")])' $db
  $F hybrid plan --gpu auto --cpu auto "${P[@]}" --db $db > /tmp/r/plan_$g.txt 2>&1
  grep -E "six slabs alone|^  task|^      cpu .*slab|Choice" /tmp/r/plan_$g.txt | cut -c1-200
  $F hybrid plan --gpu auto --cpu auto "${P[@]}" --db $db --json > /tmp/r/plan_$g.json 2>/dev/null
  timeout 150 $F bench --hybrid task --gpu auto --cpu auto "${P[@]}" --steps 30 --warmup 5 --repeat 3 --db $db --json > /tmp/r/run_task_$g.json 2>/tmp/r/run_task_$g.err
  python3 -c '
import json,sys
for r in json.load(open(sys.argv[1]))["runs"]:
    p=r["predicted_ms"]; print("%s %s step %.4f (%d runs %.4f-%.4f) pred %.4f %+.1f%% gpu %.4f cpu %.4f x %.4f" % (sys.argv[2], r["mode"], r["step_ms"], r["runs"], r["step_min_ms"], r["step_max_ms"], p, 100*(p-r["step_ms"])/r["step_ms"], r["gpu_ms"], r["cpu_ms"], r["exchange_ms"]))' /tmp/r/run_task_$g.json $g
  echo "grid $g done at $(( $(date +%s) - s )) s"
done
