#!/usr/bin/env bash
# SASS per march step of a few ring/stream configs, with the baseline binary (.gpu/base) and
# the change (.gpu/bin): bench/sass_steps.py over `fdtune gen --compile --disasm` (needs the
# CUDA toolkit's cuobjdump or nvdisasm, which the GPU machine has). Output: $OUTDIR/sass/.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUTDIR:-/tmp/fdtune-results}/sass
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
while read -r op R prec cfg; do
  [ -z "${op:-}" ] || [ "${op#\#}" != "$op" ] && continue
  for side in base bin; do
    f=$out/$side-$op-R$R-$prec-$(echo "$cfg" | md5sum | cut -c1-8).sass
    "$root/.gpu/$side/fdtune" gen --op "$op" --R "$R" --precision "$prec" --grid 512^3 \
        --config "$cfg" --compile --target sm_90 --disasm >"$f" 2>&1
    echo "$side $op R=$R $prec $cfg: $(python3 "$root/bench/sass_steps.py" "$f" | cut -d: -f2-)"
  done
done <<'LIST'
lap 8 f32 align=32,by=8,l2pf=256,lb=512,lds=3,nw=128,pf=4,tile=2,vec=2
lap 8 f64 align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=3,tile=2,vec=2
lap 4 f32 align=32,by=8,l2pf=256,lb=512,lds=3,nw=128,pf=4,tile=4,vec=2
wave 8 f32 align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=3,vec=4
lap 4 f32 align=32,bx=128,by=2,l2pf=256,lb=256,lds=2,nw=128,pf=5,tile=4,vec=2
LIST
