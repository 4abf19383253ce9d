#!/usr/bin/env bash
# How the ring's (lds=2) copies wait on AMD, on the CPU: every (op, R, precision) and ring
# config of the verification spread (verify_configs of lib.sh, lds=2 lines) is compiled by
# `fdtune gen --compile --target TARGET --disasm` and measured by amd_disasm.py; one CSV row
# per kernel: target,op,R,prec,config, then amd_disasm.py's columns (vgprs, agprs,
# spill_bytes, scratch_bytes, loads, vmwaits, barriers, inflight, hidden; -1: not reported).
# Usage: amd_ring.sh FDTUNE TARGET... > out.csv   (OPS, RS, PRECS: subsets, as resources.sh)
set -u
[ $# -ge 2 ] || { sed -n '/^# Usage/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
fd=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
FDTUNE=$fd
. "$here/lib.sh"
echo "target,op,R,prec,config,$(python3 "$here/amd_disasm.py" --header)"
for target in "$@"; do
    for op in ${OPS:-d2x d2y d2z lap wave}; do
        for R in ${RS:-1 2 4 8}; do
            for prec in ${PRECS:-f32 f64}; do
                while read -r cfg; do
                    row=$("$fd" gen --op "$op" --R "$R" --precision "$prec" --grid 512^3 \
                        --config "$cfg" --compile --target "$target" --disasm 2>&1 |
                        python3 "$here/amd_disasm.py")
                    echo "$target,$op,$R,$prec,\"$cfg\",$row"
                done < <(verify_configs "$op" "$prec" | grep -- 'lds=2')
            done
        done
    done
done
