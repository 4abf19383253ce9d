#!/bin/bash
# GPU call (not committed): the damped step's row-level layer test against the per-point one
set -u
C=$PWD/.gpu/s1
export PATH=/usr/local/cuda/bin:$PATH FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h
mkdir -p /tmp/h
for g in 512 256; do
for cfg in "align=32,by=8,l2pf=256,lb=512,lds=2,nw=256,pf=4,tile=2,vec=2" "align=32,by=8,l2pf=256,lb=512,lds=2,nt=1,nw=256,pf=3,tile=2,vec=2" "align=32,by=8,lb=512,nw=16,vec=4"; do
  for b in fdtune_old fdtune; do
    FDTUNE_CACHE=/tmp/c_$b $C/$b bench --op wave --R 4 --grid $g^3 --config "$cfg" 2>&1 | sed "s/^/$g $b wave /"
    FDTUNE_CACHE=/tmp/c_$b $C/$b bench --op dwave --absorb 16 --R 4 --grid $g^3 --config "$cfg" --config "$cfg,eta=array" --config "$cfg,deploy=inout" 2>&1 | sed "s/^/$g $b dwave /"
  done
done
done
