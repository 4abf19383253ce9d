#!/bin/bash
# issue 29: dwave 512^3 with the whole budget (--search-all: no early stop), then its best
# against the wave's fastest kernel measured (nw=512, 128 blocks), D W W D in one call
set -u
F=$PWD/.gpu/sa/fdtune
mkdir -p /tmp/h
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache
L=$OUT/sa.txt
s=$(date +%s)
$F --gpu auto --op dwave --absorb 16 --R 4 --grid 512^3 --db /tmp/sa.db --search-all --time 250s > $OUT/tune_dwave_512_all.txt 2>&1
echo "dwave 512 search-all: rc=$? $(( $(date +%s) - s )) s" >> $L
tail -3 $OUT/tune_dwave_512_all.txt >> $L
D=$($F query best --db /tmp/sa.db --no-system-db --op dwave --absorb 16 --grid 512^3 --csv | python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(r[0]["config"])')
W=align=32,by=8,l2pf=256,lb=512,lds=2,nt=1,nw=512,pf=3,tile=2,vec=2
echo "== dwave best $D; wave $W" >> $L
for k in D W W D; do
  if [ $k = D ]; then $F bench --op dwave --absorb 16 --R 4 --grid 512^3 --config "$D" 2>&1 | grep -E " \.\.\. |rror" | sed "s/^/dwave: /"
  else $F bench --op wave --R 4 --grid 512^3 --config "$W" 2>&1 | grep -E " \.\.\. |rror" | sed "s/^/wave: /"; fi
done >> $L
cat $L
