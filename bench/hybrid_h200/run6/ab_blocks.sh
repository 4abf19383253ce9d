#!/bin/bash
# issue 29: 128-block configs (one 512-thread block a unit, 128 of 132 units) for dwave and wave
set -u
mkdir -p /tmp/h
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=
G=$PWD/.gpu/sw
B="align=32,by=8,l2pf=256,lb=512,lds=2,tile=2,vec=2"
for b in old new new old; do
  $G/$b bench --op dwave --absorb 16 --R 4 --grid 512^3 --config $B,nw=512,pf=3 --config $B,nw=512,pf=4 --config $B,nw=256,pf=3 2>&1 | grep -E "\.\.\. |rror" | sed "s/^/$b 512 dwave: /"
  $G/$b bench --op wave --R 4 --grid 512^3 --config $B,nt=1,nw=512,pf=3 --config $B,nt=1,nw=256,pf=3 2>&1 | grep -E "\.\.\. |rror" | sed "s/^/$b 512 wave: /"
  $G/$b bench --op dwave --absorb 16 --R 4 --grid 256^3 --config $B,nw=64,pf=3 --config $B,nw=64,pf=4 --config $B,nw=64,pf=2 2>&1 | grep -E "\.\.\. |rror" | sed "s/^/$b 256 dwave: /"
  $G/$b bench --op wave --R 4 --grid 256^3 --config $B,nt=1,nw=64,pf=3 --config $B,nw=64,pf=3 --config align=32,bx=32,by=4,l2pf=256,lb=128,lds=2,nt=1,nw=64,pf=2,tile=2,vec=2 2>&1 | grep -E "\.\.\. |rror" | sed "s/^/$b 256 wave: /"
done > $OUT/ab2.txt 2>&1
cat $OUT/ab2.txt
