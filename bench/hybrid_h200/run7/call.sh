#!/bin/bash
# issue 29 run7: the damped kernel's rows without their branch (layer=select, which
# recipes/dwave.lua derives on NVIDIA): default-rule tunes of dwave at 256^3 and 512^3 into a
# fresh database (the shipped system database measured first); then each grid's dwave best
# against the wave's fastest kernel known (nt=1 pf=3 ring; nw=64 at 256^3, nw=512 at 512^3)
# and the best with layer=branch, in one bench run each, in the order D W W D.
set -u
F=$PWD/.gpu/r9/fdtune
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache
mkdir -p /tmp/h
L=$OUT/i29.txt
best() { $F query best --db $OUT/t.db --no-system-db --op $1 --absorb 16 --grid ${2}^3 --csv | python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(r[0]["config"] if r else "")'; }
for g in 256 512; do
  s=$(date +%s); $F --gpu auto --op dwave --absorb 16 --R 4 --grid ${g}^3 --db $OUT/t.db > $OUT/tune_dwave_$g.txt 2>&1
  echo "dwave $g: tune rc=$? $(( $(date +%s) - s )) s: $(grep -m1 'wall' $OUT/tune_dwave_$g.txt | cut -c1-220)" >> $L
done
C=align=32,by=8,l2pf=256,lb=512,lds=2,tile=2,vec=2,nt=1,pf=3
for g in 256 512; do
  D=$(best dwave $g); nw=64; [ $g = 512 ] && nw=512
  B=$(echo "$D" | sed 's/layer=select/layer=branch/')
  echo "== $g: dwave best $D; wave $C,nw=$nw" >> $L
  for k in D W W D; do
    if [ $k = D ]; then $F bench --op dwave --absorb 16 --R 4 --grid ${g}^3 --config "$D" --config "$B" 2>&1 | grep -E " \.\.\. |rror" | sed "s/^/$g dwave: /"
    else $F bench --op wave --R 4 --grid ${g}^3 --config "$C,nw=$nw" 2>&1 | grep -E " \.\.\. |rror" | sed "s/^/$g wave: /"; fi
  done >> $L
done
$F query best --db $OUT/t.db --no-system-db > $OUT/best.txt 2>&1
cut -c1-250 $L; cut -c1-330 $OUT/best.txt
