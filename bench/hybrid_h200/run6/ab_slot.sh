#!/bin/bash
# issue 29: the damped kernel's x slot turned with the block row (layer_slot_x), old vs new
# binaries on the same configs, in the order old new new old; then default tunes with new.
set -u
mkdir -p /tmp/h
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=
G=$PWD/.gpu/sw
L=$OUT/ab.txt
D512a=align=32,bx=64,by=8,l2pf=256,lb=512,lds=2,nw=256,pf=3,tile=2,vec=2
D512b=align=32,bx=128,l2pf=256,lb=512,lds=2,nw=256,pf=2,tile=2,vec=2
D512c=align=32,bx=64,by=8,deploy=inout,l2pf=256,lb=512,lds=2,nw=128,pf=3,tile=2,vec=2
W512=align=32,by=8,l2pf=256,lb=512,lds=2,nt=1,nw=256,pf=3,tile=2,vec=2
D256a=align=32,bx=64,by=8,deploy=inout,l2pf=256,lb=512,lds=2,nw=32,pf=3,tile=2,vec=2
D256b=align=32,bx=64,by=8,l2pf=256,lb=512,lds=2,nw=64,pf=3,tile=2,vec=2
W256=align=32,bx=32,by=4,l2pf=256,lb=128,lds=2,nt=1,nw=64,pf=2,tile=2,vec=2
for b in old new new old; do
  $G/$b bench --op dwave --absorb 16 --R 4 --grid 512^3 --config $D512a --config $D512b --config $D512c 2>&1 | grep -E "\.\.\. |copy|rror" | sed "s/^/$b 512 dwave: /"
  $G/$b bench --op wave --R 4 --grid 512^3 --config $W512 2>&1 | grep -E "\.\.\. |rror" | sed "s/^/$b 512 wave: /"
  $G/$b bench --op dwave --absorb 16 --R 4 --grid 256^3 --config $D256a --config $D256b 2>&1 | grep -E "\.\.\. |rror" | sed "s/^/$b 256 dwave: /"
  $G/$b bench --op wave --R 4 --grid 256^3 --config $W256 2>&1 | grep -E "\.\.\. |rror" | sed "s/^/$b 256 wave: /"
done > $L 2>&1
cat $L
if [ "${TUNE:-0}" = 1 ]; then
  for g in 256 512; do
    s=$(date +%s)
    $G/new --gpu auto --op dwave --absorb 16 --R 4 --grid ${g}^3 --db $OUT/t.db > $OUT/tune_dwave_$g.txt 2>&1
    echo "dwave $g: tune rc=$? $(( $(date +%s) - s )) s" >> $OUT/tunes.txt
    s=$(date +%s)
    $G/new --gpu auto --op wave --R 4 --grid ${g}^3 --db $OUT/t.db > $OUT/tune_wave_$g.txt 2>&1
    echo "wave $g: tune rc=$? $(( $(date +%s) - s )) s" >> $OUT/tunes.txt
  done
  $G/new query best --db $OUT/t.db --no-system-db >> $OUT/tunes.txt 2>&1
  cat $OUT/tunes.txt | cut -c1-300
fi
