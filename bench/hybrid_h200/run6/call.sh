#!/bin/bash
# issue 29 run6: default-rule tunes of dwave and wave (R=4 f32 W=16, 256^3 and 512^3) with the
# damped kernel's turned x slot and the fill rule's 7 units in 8 for 512-thread blocks, a
# fresh database (the shipped system database measured first); then each grid's two bests in
# one run, D W W D; then lap R=4 f32 512^3's default tune (the fill rule's effect on lap).
set -u
F=$PWD/.gpu/r6/fdtune
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache
mkdir -p /tmp/h
L=$OUT/i29.txt
best() { $F query best --db $OUT/t.db --no-system-db --op $1 --grid ${2}^3 ${3:-} --csv | python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(r[0]["config"] if r else "")'; }
for g in 256 512; do
  s=$(date +%s); $F --gpu auto --op dwave --absorb 16 --R 4 --grid ${g}^3 --db $OUT/t.db > $OUT/dwave_$g.txt 2>&1
  echo "dwave $g: tune rc=$? $(( $(date +%s) - s )) s" >> $L
  s=$(date +%s); $F --gpu auto --op wave --R 4 --grid ${g}^3 --db $OUT/t.db > $OUT/wave_$g.txt 2>&1
  echo "wave $g: tune rc=$? $(( $(date +%s) - s )) s" >> $L
done
for g in 256 512; do
  D=$(best dwave $g "--absorb 16"); W=$(best wave $g)
  echo "== $g: dwave best $D, wave best $W" >> $L
  for k in D W W D; do
    if [ $k = D ]; then $F bench --op dwave --absorb 16 --R 4 --grid ${g}^3 --config "$D" 2>&1 | grep -E " \.\.\. |rror" | sed "s/^/$g dwave: /"
    else $F bench --op wave --R 4 --grid ${g}^3 --config "$W" 2>&1 | grep -E " \.\.\. |rror" | sed "s/^/$g wave: /"; fi
  done >> $L
done
s=$(date +%s); $F --gpu auto --op lap --R 4 --grid 512^3 --db $OUT/t.db > $OUT/lap_512.txt 2>&1
echo "lap 512: tune rc=$? $(( $(date +%s) - s )) s" >> $L
$F query best --db $OUT/t.db --no-system-db > $OUT/best.txt 2>&1
cat $L; cut -c1-330 $OUT/best.txt
