#!/bin/sh
# bench/model_check.sh without a GPU: run against tests/fake_ncu.sh (a stand-in for ncu) and
# the H100 of the catalogue for the dry run, it writes one row per default cell of predicted
# beside measured numbers; the measured per-point figures are the fake's (DRAM 8 bytes, L2 12,
# L1 20 without the LDGSTS sectors this ncu "lacks", shared 32, FP 30, 64 instructions,
# occupancy 0.245, 2500 GB/s, bound dram from its 91.5% of peak), of its first kernel only;
# the predictions are the model's (the stream's lap R=8 f32 bound by issue, d2x by DRAM, the
# direct lap R=4's 104 bytes of L1 a point). $1: fdtune; $2: the source tree.
set -eu
fdtune=${1:?usage: test_model_check.sh FDTUNE SRCDIR}
src=${2:?usage: test_model_check.sh FDTUNE SRCDIR}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-model-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
failed=0
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

NCU=$src/tests/fake_ncu.sh GPU=H100 FDTUNE=$fdtune "$src/bench/model_check.sh" "$tmp" \
    >"$tmp/out" 2>"$tmp/err" || fail "model_check.sh exit $?"
csv=$tmp/model_check.csv
[ "$(wc -l <"$csv")" -eq 9 ] || fail "$(wc -l <"$csv") lines in model_check.csv, want 9"
grep -q "no l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts" "$tmp/err" ||
    fail "the metric ncu lacks is not named"
grep -q "bound agrees in 3 of 8 cells" "$tmp/out" || fail "no summary: $(tail -1 "$tmp/out")"
# field N of the row whose config is $1 (op $2)
field() { python3 -c '
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["config"] == sys.argv[2] and r["op"] == sys.argv[3]:
        print(r[sys.argv[4]])' "$csv" "$1" "$2" "$3"; }
d2x=align=32,bx=128,by=8,lb=1024,nt=1,vec=4
stream=align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=256,pf=3,tile=2,vec=2
# config|op|column|value
while IFS='|' read -r cfg op col want; do
    got=$(field "$cfg" "$op" "$col")
    [ "$got" = "$want" ] || fail "$op $cfg: $col is '$got', want '$want'"
done <<EOF2
$d2x|d2x|pred_bound|dram
$d2x|d2x|meas_bound|dram
$d2x|d2x|meas_dram_B|8.00
$d2x|d2x|meas_l2_B|12.00
$d2x|d2x|meas_l1_B|20.00
$d2x|d2x|meas_shared_B|32.00
$d2x|d2x|meas_fp|30.00
$d2x|d2x|meas_inst|64.00
$d2x|d2x|meas_occupancy|0.245
$d2x|d2x|meas_gbs|2500
$d2x|d2x|kernel_ms|0.4123
$d2x|d2x|pct_dram|91.5
$d2x|d2x|pred_fp|10.00
$stream|lap|pred_bound|issue
$stream|lap|pred_shared_B|75.50
default|lap|pred_l1_B|104.00
default|lap|gpu|H100 SXM
EOF2
echo "test_model_check: $failed failed" >&2
[ "$failed" -eq 0 ]
