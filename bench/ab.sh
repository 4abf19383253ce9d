#!/usr/bin/env bash
# A/B on one GPU: the same explore list timed with two fdtune binaries in one session
# (FDTUNE_A, default .gpu/base/fdtune, the baseline; FDTUNE_B, default .gpu/bin/fdtune, the
# change), alternating A, B, A, B so that clock drift shows; results in $OUTDIR/ab-{A,B}N.
# Usage: bench/ab.sh LISTFILE [ROUNDS]
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
list=${1:?usage: ab.sh LISTFILE [ROUNDS]}
rounds=${2:-2}
A=${FDTUNE_A:-$root/.gpu/base/fdtune} B=${FDTUNE_B:-$root/.gpu/bin/fdtune}
base=${OUTDIR:-/tmp/fdtune-results}
for n in $(seq 1 "$rounds"); do
  for side in A B; do
    bin=$A; [ $side = B ] && bin=$B
    echo "=== $side round $n ($bin)"
    FDTUNE=$bin OUTDIR=$base/ab-$side$n "$root/bench/explore.sh" "$list"
  done
done
