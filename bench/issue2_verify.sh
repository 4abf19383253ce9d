#!/usr/bin/env bash
# Issue 2/5 acceptance on a GPU: every operator for R = 1, 2, 4, 8 in f32 and f64 on 512^3 and
# on the odd grid 301x203x157, each with the spread of configs of lib.sh (every kernel family
# and parameter), verified (probe timing only: correctness is the point here). One JSON file
# per problem under $OUTDIR/verify/. A config the compiler makes spill is pruned, not run:
# counted apart. Anything else that is not ok (wrong, crashed, timeout, launch or compile
# error) is a failure; the exit status is 1 when there was one.
set -u
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUTDIR/verify"
for grid in 512^3 301x203x157; do
  for op in d2x d2y d2z lap wave; do
    for R in 1 2 4 8; do
      for prec in f32 f64; do
        name="$op-R$R-$prec-${grid/^/c}"
        # shellcheck disable=SC2046
        "$FDTUNE" bench --op "$op" --R "$R" --precision "$prec" --grid "$grid" --probe --json \
            $(verify_configs "$op" "$prec" | config_args) >"$OUTDIR/verify/$name.json" \
            2>"$OUTDIR/verify/$name.log"
        echo "$name exit $?" >>"$OUTDIR/verify/exits.txt"
      done
    done
  done
done
python3 - "$OUTDIR/verify" <<'PY'
import collections, glob, json, os, sys
count, bad, pruned = collections.Counter(), [], []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    name = os.path.basename(path)[:-5]
    try:
        results = json.load(open(path))["results"]
    except (ValueError, KeyError):
        bad.append(f"{name}: no results (see {name}.log)")
        continue
    for r in results:
        count[r["status"]] += 1
        if r["status"] == "pruned":
            pruned.append(f'{name} {r["config"]}: {r["message"]}')
        elif r["status"] != "ok":
            bad.append(f'{name} {r["config"]}: {r["status"]} {r["message"]}')
print("verified candidates:", dict(count))
for line in pruned:
    print("pruned:", line)
for line in bad:
    print("FAIL:", line)
print(f"verification failures: {len(bad)}")
sys.exit(1 if bad else 0)
PY
