#!/usr/bin/env bash
# Runs a list of bench stages on the GPU machine with the binary and compile cache carried
# in .gpu/, and packs the results into $OUT (the device tool returns at most 8 files), with
# nvidia-smi.txt (the GPU at the start) and smi-log.csv (clocks and power while it ran).
# Usage: bench/gpu_session.sh STAGE... ; stages: devices faults verify explore:LIST sanitize
#   ncu:OP:GRID:CONFIG[:R[:PRECISION]]  Nsight Compute sections of one candidate (R=4 f32)
#   tune:STRATEGY:BUDGET:DB[:OPS[:SECONDS[:GRID]]]  fdtune --gpu auto --R 4 into $OUTDIR/DB.db
#   crash  a tuning run over tests/data/crash.lua (illegal-address configs)
#   issue5 bench/issue5.sh (tune 512^3 and 1024^3 with the model strategy, then seeds vs tuned)
#   export-check  bench/export_check/run.sh on issue5's database (two tuned grids)
#   retune-demo   bench/retune_demo.sh on 256^3 with a budget of 20
#   session-check bench/session_check.sh (against .gpu/base/fdtune too when it is there)
#   matrix        bench/matrix.sh (lap and wave, R 1..8, f32/f64, 512^3 and 1024^3), resumable
#   multigpu  bench/multigpu.sh (--gpu all, resume, a plan on this node, a killed GPU)
#   model-check   bench/model_check.sh (8 cells under ncu: predicted vs measured per point)
#   ab:LIST   bench/ab.sh: LIST timed with .gpu/base/fdtune and .gpu/bin/fdtune, alternating
#   sass-ab   bench/sass_ab.sh: SASS per march step of a few rings/streams, base vs bin
#   sass:LIST bench/sass_list.sh: SASS per march step of every config of an explore list
set -u
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
export FDTUNE=$root/.gpu/bin/fdtune FDTUNE_CACHE=$root/.gpu/cache OUTDIR=/tmp/fdtune-results
export FDTUNE_RECIPES=$root/recipes
mkdir -p "$OUTDIR"
OUT=${OUT:-$OUTDIR}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >"$OUTDIR/nvidia-smi.txt" 2>&1
# SM clock, power and the clock limiters (0x4: the software power cap) every 500 ms while the
# stages run, into smi-log.csv: the H200 meets its power cap on sustained R=8 kernels at
# 1024^3, where a full sample runs 5% below its probe (bench/notes/explore46.txt)
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv -lms 500 >"$OUTDIR/smi-log.csv" 2>&1 &
smi_pid=$!
trap 'kill "$smi_pid" 2>/dev/null' EXIT
for stage in "$@"; do
  t0=$(date +%s)
  echo "=== $stage"
  case $stage in
    devices) "$FDTUNE" --version; "$FDTUNE" devices ;;
    faults) "$root/bench/faults.sh" ;;
    verify) "$root/bench/issue2_verify.sh" ;;
    explore:*) "$root/bench/explore.sh" "$root/bench/${stage#explore:}" ;;
    sass-ab) "$root/bench/sass_ab.sh" ;;
    sass:*) "$root/bench/sass_list.sh" "$root/bench/${stage#sass:}" ;;
    ab:*) "$root/bench/ab.sh" "$root/bench/${stage#ab:}" 2 ;;  # .gpu/base/fdtune vs .gpu/bin/fdtune
    sanitize)
      for c in "lap 61x37x29 bx=32,by=8,nw=8,lds=1,vec=4,align=64,tile=3" \
               "d2x 61x37x29 bx=16,by=16,vec=4,align=64,nt=1" \
               "wave 61x37x29 bx=24,by=5,bz=3,tile=3,vec=2,align=2,order=yzx,split=3" \
               "d2z 61x37x29 bx=32,by=8,nw=16,vec=4,align=64,tile=2" \
               "lap 61x37x29 bx=32,by=4,nw=8,lds=2,vec=4,align=64,tile=2,pf=3" \
               "wave 61x37x29 bx=24,by=5,nw=7,lds=2,align=2,tile=2,order=yzx,split=2,l2pf=256" \
               "d2z 61x37x29 bx=32,by=8,nw=16,lds=2,vec=4,align=64,pf=4" \
               "lap 61x37x29 bx=32,by=4,nw=8,lds=3,vec=2,align=64,tile=2,pf=3" \
               "wave 61x37x29 bx=24,by=5,nw=7,lds=3,align=2,tile=2,order=yzx,split=2,l2pf=256" \
               "d2z 61x37x29 bx=32,by=8,nw=16,lds=3,vec=4,align=64,pf=4" \
               "lap 61x37x29 bx=32,by=4,nw=8,lds=3,vec=2,align=64,tile=2,pf=3,mbar=1" \
               "wave 61x37x29 bx=24,by=5,nw=7,lds=3,align=2,tile=2,order=yzx,split=2,pf=2,mbar=1"; do
        set -- $c
        compute-sanitizer --tool memcheck --target-processes all --error-exitcode 9 \
            "$FDTUNE" bench --op "$1" --grid "$2" --config "$3" --probe 2>&1 | tail -4
        echo "memcheck $1 $3: exit ${PIPESTATUS[0]}"
      done
      # shared-memory hazards and barrier misuse of the stream's hand-over (block barrier and
      # slot barriers)
      for c in "lap 61x37x29 bx=32,by=4,nw=8,lds=3,vec=2,align=64,tile=2,pf=3" \
               "lap 61x37x29 bx=32,by=4,nw=8,lds=3,vec=2,align=64,tile=2,pf=3,mbar=1" \
               "wave 61x37x29 bx=24,by=5,nw=7,lds=3,align=2,tile=2,order=yzx,split=2,pf=2,mbar=1"; do
        set -- $c
        for tool in racecheck synccheck; do
          compute-sanitizer --tool $tool --target-processes all --error-exitcode 9 \
              "$FDTUNE" bench --op "$1" --grid "$2" --config "$3" --probe 2>&1 | tail -3
          echo "$tool $1 $3: exit ${PIPESTATUS[0]}"
        done
      done ;;
    verify-quick)  # one grid, the radii that stress registers most; every config must verify
                   # or be pruned (spills, no fit: bench exits 1 for those too)
      for op in d2x d2y d2z lap wave; do for R in 1 4 8; do for prec in f32 f64; do
        log=$OUTDIR/vq-$op-$R-$prec.log
        n=$(verify_configs $op $prec | wc -l)
        "$FDTUNE" bench --op $op --R $R --precision $prec --grid 301x203x157 --probe \
            $(verify_configs $op $prec | config_args) >/dev/null 2>"$log"
        rc=$?
        ok=$(grep -c '\.\.\. ok ' "$log"); pruned=$(grep -c '\.\.\. pruned: ' "$log")
        if [ "$rc" -le 1 ] && [ $((ok + pruned)) -eq "$n" ]; then
          echo "ok $op R=$R $prec: $ok verified, $pruned pruned"
        else
          echo "FAIL $op R=$R $prec (exit $rc): $ok verified, $pruned pruned of $n"
          grep -vE '\.\.\. (ok |pruned: )|^setting up' "$log" | tail -4
        fi
      done; done; done ;;
    ncu:*)  # ncu:OP:GRID:CONFIG[:R[:PRECISION]] profiles the candidate kernel (not the reference)
      IFS=: read -r _ op grid cfg nR nprec <<<"$stage"
      ncu_profile "$op" "${nR:-4}" "${nprec:-f32}" "$cfg" "$grid" ;;
    tune:*)  # stopped gracefully (SIGINT) after SECONDS: the database keeps what was measured
      IFS=: read -r _ strat budget db ops secs grid <<<"$stage"
      opsarg=(); [ -n "${ops:-}" ] && opsarg=(--op "$ops")
      timeout -s INT "${secs:-500}" "$FDTUNE" --gpu auto --R 4 \
          --grid "${grid:-512^3}" --strategy "$strat" --budget "$budget" "${opsarg[@]}" \
          --db "$OUTDIR/$db.db" --json >"$OUTDIR/$db.json" 2>"$OUTDIR/$db.log"
      echo "exit $?"; tail -3 "$OUTDIR/$db.log"; cat "$OUTDIR/$db.json" ;;
    issue5) BUDGET=${BUDGET:-100} "$root/bench/issue5.sh" "$OUTDIR/issue5.db" ;;
    issue5-report) TUNE=0 "$root/bench/issue5.sh" "$OUTDIR/issue5.db" ;;  # EXTRA_DB: see issue5.sh
    export-check)
      OUTDIR=$OUTDIR/export_check BUILD=$root/.gpu/build \
          "$root/bench/export_check/run.sh" "$OUTDIR/issue5.db"
      echo "exit $?" ;;
    retune-demo) OUTDIR=$OUTDIR/retune "$root/bench/retune_demo.sh" '256^3' 20 ;;
    session-check)
      base=$root/.gpu/base/fdtune; [ -x "$base" ] || base=
      OUTDIR=$OUTDIR/session FDTUNE_BASE=$base "$root/bench/session_check.sh"
      echo "exit $?" ;;
    matrix)  # bench/matrix.sh, resumable over calls: MATRIX_DIR (default .gpu/matrix, carried)
             # holds matrix.csv, matrix.db and matrix-wall.tsv; copied into the results, to be
             # put back into .gpu/matrix before the next call (env BUDGET, DEADLINE, CELLS)
      mkdir -p "${MATRIX_DIR:=$root/.gpu/matrix}"
      OUTDIR=$MATRIX_DIR "$root/bench/matrix.sh" "$MATRIX_DIR/matrix.db"
      echo "exit $?"
      mkdir -p "$OUTDIR/matrix" && cp "$MATRIX_DIR"/matrix* "$OUTDIR/matrix/" ;;
    multigpu) OUTDIR=$OUTDIR/multigpu "$root/bench/multigpu.sh" ;;
    model-check)  # bench/model_check.sh: the model's bound and per-point counts beside ncu's
      "$root/bench/model_check.sh" "$OUTDIR/model_check"
      echo "exit $?" ;;
    crash)
      "$FDTUNE" --gpu auto --R 4 --grid 256^3 --recipe "$root/tests/data/crash.lua" \
          --op d2x --db "$OUTDIR/crash.db" --timeout 20
      echo "exit $?"
      "$FDTUNE" query show 1 --db "$OUTDIR/crash.db" ;;
    *) echo "unknown stage $stage" ;;
  esac 2>&1 | tee "$OUTDIR/stage-${stage//[:\/]/_}.txt"
  echo "=== $stage took $(( $(date +%s) - t0 )) s"
done
kill "$smi_pid" 2>/dev/null
tar czf "$OUT/results.tgz" -C "$OUTDIR" . 2>/dev/null
