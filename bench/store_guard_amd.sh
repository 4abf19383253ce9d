#!/usr/bin/env bash
# The stream's stores with and without the row's guard (guard=rows / none) on AMD, on the
# CPU: lap R=4 f32 512^3 in a 64x4 block of 4x2 outputs (an MI250X shape of lap.lua's space)
# compiled by `fdtune gen --compile --target TARGET --disasm` (gfx90a: ROCm's hiprtc; gfx942:
# the offline clang), one line per kernel: the code object's VGPRs and scratch
# (amd_disasm.py), its global stores by kind, its conditional branches, its exec-mask saves
# (s_and_saveexec: a divergent block entered) and its instructions. No AMD GPU has timed
# either form; the search measures both where it runs.
# Usage: store_guard_amd.sh FDTUNE TARGET...
set -u
[ $# -ge 2 ] || { sed -n '/^# Usage/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
fd=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for t in "$@"; do
    for g in rows none; do
        cfg="align=64,bx=64,by=4,guard=$g,l2pf=256,lb=256,lds=3,nw=128,pf=4,tile=4,vec=2"
        "$fd" gen --op lap --R 4 --precision f32 --grid 512^3 --config "$cfg" --compile \
            --target "$t" --disasm >"$tmp" 2>&1 || { echo "$t guard=$g: compile failed"; continue; }
        d=$(sed -n '/Disassembly of section .text/,$p' "$tmp")
        echo "$t guard=$g: $(python3 "$here/amd_disasm.py" <"$tmp" |
            awk -F, '{print "vgprs " $1 ", scratch " $4}'); stores:" \
            "$(grep -oE '(global|buffer|flat)_store_[a-z0-9]+' <<<"$d" | sort | uniq -c |
               awk '{printf "%s %s ", $1, $2}'); cbranch $(grep -c s_cbranch <<<"$d")," \
            "saveexec $(grep -cE 's_and_saveexec_b(32|64)' <<<"$d")," \
            "instructions $(grep -cE '^//\s+\s[a-z_]+' <<<"$d")"
    done
done
