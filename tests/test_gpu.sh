#!/bin/sh
# GPU test (label gpu): on a machine with a GPU, a candidate is verified and timed, broken
# kernels (a flipped coefficient, a skipped plane) are caught as wrong, and a tuning run over
# a space with illegal-address kernels records them as crashed and still finishes with a
# verified best. Without a GPU it says so and exits 77 (skipped), never passes.
# Usage: test_gpu.sh FDTUNE SOURCE_DIR
set -u
fdtune=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$fdtune" devices >"$tmp/devices" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "^No GPU is visible" "$tmp/devices"; then
    echo "SKIP: no GPU visible ($(tr '\n' ' ' <"$tmp/devices"))"
    exit 77
fi
[ $rc -eq 0 ] || fail "fdtune devices exited $rc: $(cat "$tmp/devices")"

"$fdtune" bench --op lap --R 4 --grid 61x37x29 --probe \
    --config bx=32,by=4,nw=8,vec=4,align=32 --config bx=32,by=2,lds=1,nw=8,tile=2,vec=4,align=32 \
    >"$tmp/ok" 2>&1 || fail "sound lap configs did not verify: $(cat "$tmp/ok")"
for fault in coef plane halo; do
    "$fdtune" bench --op d2y --R 4 --grid 64^3 --probe --config "bx=64,by=4,fault=$fault" \
        >"$tmp/$fault" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "fault=$fault: expected exit 1 (wrong), got $rc"
    grep -q wrong "$tmp/$fault" || fail "fault=$fault not reported as wrong: $(cat "$tmp/$fault")"
done

FDTUNE_RECIPES=$src/recipes "$fdtune" --gpu auto --R 4 --grid 128^3 --op d2x \
    --recipe "$src/tests/data/crash.lua" --db "$tmp/t.db" --timeout 20 >"$tmp/tune" 2>&1 ||
    fail "tuning over crashing kernels did not finish: $(cat "$tmp/tune")"
"$fdtune" query show 1 --db "$tmp/t.db" --csv >"$tmp/show" 2>&1 || fail "query show failed"
crashed=$(grep -c ',crashed,' "$tmp/show")
ok=$(grep -c ',ok,' "$tmp/show")
[ "$crashed" -eq 2 ] || fail "expected 2 crashed evaluations, got $crashed: $(cat "$tmp/show")"
[ "$ok" -ge 2 ] || fail "expected the sound configs to be ok: $(cat "$tmp/show")"
echo "ok: verification, fault detection, crash recovery ($crashed crashed, $ok ok rows)"
