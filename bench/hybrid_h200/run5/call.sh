#!/bin/bash
# GPU call (not committed): issue 29's damped/undamped ratio with the default stopping rules
# (hybrid.sh's tunes had a budget of 40), then the two bests in one run, D W W D; then the CPU's
# vectorized damped step on the host's 16 cores against the undamped wave.
set -u
F=$PWD/.gpu/i29/fdtune
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache
mkdir -p /tmp/h
L=$OUT/i29.txt
for g in 256 512; do
  s=$(date +%s)
  $F --gpu auto --op dwave --absorb 16 --R 4 --grid ${g}^3 --db $OUT/t.db --json > $OUT/dwave_$g.json 2>>$L
  echo "dwave $g: tune rc=$? $(( $(date +%s) - s )) s" >> $L
  s=$(date +%s)
  $F --gpu auto --op wave --R 4 --grid ${g}^3 --db $OUT/t.db --json > $OUT/wave_$g.json 2>>$L
  echo "wave $g: tune rc=$? $(( $(date +%s) - s )) s" >> $L
done
$F query best --db $OUT/t.db --no-system-db >> $L 2>&1
for g in 256 512; do
  D=$($F query best --db $OUT/t.db --no-system-db --op dwave --grid ${g}^3 --csv | python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(r[0]["config"])')
  W=$($F query best --db $OUT/t.db --no-system-db --op wave --grid ${g}^3 --csv | python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(r[0]["config"])')
  echo "== $g: dwave best $D, wave best $W" >> $L
  for k in D W W D; do
    if [ $k = D ]; then $F bench --op dwave --absorb 16 --R 4 --grid ${g}^3 --config "$D" 2>&1 | grep -E " \.\.\. |copy|rror" | sed "s/^/$g dwave: /"
    else $F bench --op wave --R 4 --grid ${g}^3 --config "$W" 2>&1 | grep -E " \.\.\. |copy|rror" | sed "s/^/$g wave: /"; fi
  done >> $L
done
# the CPU's damped step (vectorized since 34f2ba3) against the wave, host cores, 512^3
for c in "blk=1,eta=array,nt=1,ty=16" "blk=1,nt=1,ty=16" "blk=1,eta=array,twopass=1,ty=16"; do
  $F bench --cpu auto --op dwave --absorb 16 --R 4 --grid 512^3 --config "$c" 2>&1 | grep -E " \.\.\. |copy|rror" | sed "s/^/cpu dwave: /"
done >> $L
$F bench --cpu auto --op wave --R 4 --grid 512^3 --config "blk=1,nt=1,ty=16" 2>&1 | grep -E " \.\.\. |copy|rror" | sed "s/^/cpu wave: /" >> $L
echo done >> $L
