#!/usr/bin/env bash
# Issue 2 acceptance on a GPU: every operator for R = 1, 2, 4, 8 in f32 and f64 on 512^3 and
# on the odd grid 301x203x157, each with a spread of configs, verified (probe timing only:
# correctness is the point here). One JSON file per problem under $OUTDIR/verify/.
set -u
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUTDIR/verify"
fail=0
for grid in 512^3 301x203x157; do
  for op in d2x d2y d2z lap wave; do
    for R in 1 2 4 8; do
      for prec in f32 f64; do
        name="$op-R$R-$prec-${grid/^/c}"
        # shellcheck disable=SC2046
        "$FDTUNE" bench --op "$op" --R "$R" --precision "$prec" --grid "$grid" --probe --json \
            $(verify_configs "$op" "$prec" | config_args) >"$OUTDIR/verify/$name.json" \
            2>"$OUTDIR/verify/$name.log"
        rc=$?
        [ $rc -ne 0 ] && { fail=$((fail + 1)); echo "FAIL($rc) $name"; tail -3 "$OUTDIR/verify/$name.log"; }
      done
    done
  done
done
echo "verification problems failed: $fail"
[ $fail -eq 0 ]
