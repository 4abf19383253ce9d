#!/usr/bin/env bash
# The stream's bulk form on AMD (bulk=1, templates/ring_bulk.hip: loads that write LDS
# directly, buffer_load_dword ... lds), on the CPU: each kernel below is compiled by `fdtune
# gen --compile --target TARGET --disasm` (gfx90a: ROCm's hiprtc; gfx942: the offline clang,
# clang-19) and measured by amd_disasm.py --lds-direct, beside its bulk=0 sibling (the staged
# copies: a plane's chunks loaded into VGPRs, then written to LDS) measured by amd_disasm.py.
# One CSV row per kernel: target,op,R,prec,config,form, then the parser's columns (bulk=1:
# loads and inflight count the LDS-direct loads; vgpr_loads and ds_writes 0 mean no value of
# the ring goes through a VGPR; scratch_bytes the code object's scratch). No AMD GPU has run
# the form: the recipes prune it on AMD.
# Usage: amd_bulk.sh FDTUNE TARGET... > out.csv
set -u
[ $# -ge 2 ] || { sed -n '/^# Usage/s/^# \{0,1\}//p' "$0" >&2; exit 2; }
fd=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
echo "target,op,R,prec,config,form,$(python3 "$here/amd_disasm.py" --lds-direct --header)"
for target in "$@"; do
    for cell in "lap 1 f32 bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=3,tile=2,vec=4,align=64" \
                "lap 4 f32 bx=64,by=4,lb=256,lds=3,mbar=1,nw=128,pf=3,tile=2,vec=2,align=64" \
                "lap 6 f32 bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=3,tile=2,vec=4,align=64" \
                "lap 4 f64 bx=64,by=4,lb=256,lds=3,mbar=1,nw=128,pf=2,tile=2,vec=2,align=64" \
                "wave 4 f32 bx=32,by=8,lb=256,lds=3,mbar=1,nw=128,pf=3,vec=4,align=64"; do
        set -- $cell
        for form in staged bulk; do
            cfg=$4 flag=
            [ "$form" = bulk ] && cfg=$4,bulk=1 flag=--lds-direct
            row=$("$fd" gen --op "$1" --R "$2" --precision "$3" --grid 512^3 --config "$cfg" \
                --compile --target "$target" --disasm 2>&1 | python3 "$here/amd_disasm.py" $flag)
            echo "$target,$1,$2,$3,\"$cfg\",$form,$row"
        done
    done
done
