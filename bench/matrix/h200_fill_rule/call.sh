#!/bin/bash
# compute-sanitizer on damped kernels with the turned x slot (S = 2 and 4, ring and stream),
# then the R=4 matrix cells with the fill rule's 128-block configs
set -u
F=$PWD/.gpu/fin/fdtune
mkdir -p /tmp/h
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache
S=$OUT/sanitizer.txt
for c in "bx=64,by=4,nw=8,lds=2,vec=1,align=64,tile=2,pf=3" "bx=128,by=2,nw=8,lds=2,vec=1,align=64,tile=2,pf=2" \
         "bx=64,by=4,nw=8,lds=3,vec=1,align=64,tile=2,pf=3" "bx=64,by=4,nw=8,lds=2,vec=1,align=64,tile=2,pf=3,deploy=inout"; do
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F bench --op dwave --absorb 4 --grid 61x37x29 --config "$c" --probe > /tmp/san.log 2>&1
    echo "$tool dwave 61x37x29 W=4 $c: exit $? ($(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log || echo no summary); $(grep -m1 -E '\.\.\. ' /tmp/san.log | sed 's/.*\.\.\. //'))" >> $S
  done
done
cat $S
FDTUNE=$F OUTDIR=$OUT DEADLINE=${DEADLINE:-330} CELLS="lap:4:f32:1024 lap:4:f32:512 wave:4:f32:512 wave:4:f32:1024 d2z:4:f32:1024" bench/matrix.sh /tmp/fin.db > $OUT/matrix.log 2>&1
echo "matrix rc=$?"; cat $OUT/matrix.csv; cat $OUT/matrix-wall.tsv
