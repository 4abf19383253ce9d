#!/bin/bash
# issue 31 point 4: the issue-5 benchmark (bench/issue5.sh) before issue 31's code (6cea2da) and
# after (HEAD), the same budget; WHICH=before|after|final. The after run also benches before's
# bests (EXTRA_DB, label fdtune-extra) in the same run; final (the issue's last code, the binary
# in .gpu/bin) benches them from before.csv (EXTRA_CSV), as before's database is not kept.
set -u
W=$1
G=$PWD/.gpu/i5
mkdir -p /tmp/h
if [ $W = before ]; then
  export FDTUNE=$G/before/fdtune FDTUNE_RECIPES=$G/before/recipes FDTUNE_SYSTEM_DB=$G/before/system.db
  extra=
elif [ $W = final ]; then
  export FDTUNE=$PWD/.gpu/bin/fdtune FDTUNE_RECIPES=$PWD/recipes FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db
  export EXTRA_CSV=$PWD/bench/issue5_h200/before.csv
  extra=
else
  export FDTUNE=$G/after/fdtune FDTUNE_RECIPES=$PWD/recipes FDTUNE_SYSTEM_DB=$PWD/share/fdtune/system.db
  extra=$G/before.db
fi
export HOME=/tmp/h FDTUNE_CACHE=/tmp/cache-$W OUTDIR=$OUT/$W
mkdir -p $OUTDIR
s=$(date +%s)
BUDGET=${BUDGET:-60} TUNE_TIME=${TUNE_TIME:-60s} EXTRA_DB=$extra bench/issue5.sh $OUTDIR/issue5.db > $OUTDIR/report.txt 2> $OUTDIR/stderr.txt
echo "rc=$? $(( $(date +%s) - s )) s" >> $OUTDIR/report.txt
cd $OUTDIR && tar czf $OUT/$W.tgz . && rm -rf $OUTDIR
