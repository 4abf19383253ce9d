#!/bin/bash
# lap R=8 cells re-tuned with the copy engine as a side of its own (search/model.c), fresh DB
set -u
mkdir -p /tmp/h
export FDTUNE=$PWD/.gpu/m8/fdtune FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db FDTUNE_CACHE=/tmp/cache OUTDIR=$OUT
DEADLINE=${DEADLINE:-480} CELLS="$CELLS" bench/matrix.sh /tmp/m8.db > $OUT/matrix.log 2>&1
echo "rc=$?" >> $OUT/matrix.log
cat $OUT/matrix.csv
tail -3 $OUT/matrix-wall.tsv
for c in $CELLS; do :; done
$FDTUNE query best --db /tmp/m8.db --no-system-db 2>&1 | cut -c1-260
