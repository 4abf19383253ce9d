#!/bin/bash
# issue 29 run9: the winners measured again, the slabs timed without the flush, the runner's host memory the CPU's own (huge pages) registered with the GPU
set -u
export HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache
mkdir -p /tmp/h /tmp/hy
FDTUNE=$PWD/.gpu/r12/fdtune OUTDIR=/tmp/hy GRIDS="256 512" REFLECTION=0 STEPS=50 bench/hybrid.sh > $OUT/hybrid.txt 2>&1
echo "rc=$?" >> $OUT/hybrid.txt
for f in plan_256.json plan_512.json run_256.json run_512.json deploy_gpu_512.json deploy_gpu_256.json; do cp /tmp/hy/$f $OUT/ 2>/dev/null; done
grep -E "^(PASS|FAIL)|=== |rc=" $OUT/hybrid.txt
