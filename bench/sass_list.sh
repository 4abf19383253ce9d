#!/usr/bin/env bash
# SASS per march step (bench/sass_steps.py) of the configs of an explore list, each with the
# one binary FDTUNE (default .gpu/bin/fdtune): `fdtune gen --compile --target sm_90 --disasm`,
# which needs the CUDA toolkit's cuobjdump or nvdisasm (the GPU machine has them). Lines as
# explore.sh reads them: "OP GRID CONFIG [CONFIG...]" with R= and precision= words.
# Output: one line per config, the disassembly in $OUTDIR/sass/.
# Usage: bench/sass_list.sh LISTFILE
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
list=${1:?usage: sass_list.sh LISTFILE}
bin=${FDTUNE:-$root/.gpu/bin/fdtune}
out=${OUTDIR:-/tmp/fdtune-results}/sass
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
while read -r op grid rest; do
  [ -z "${op:-}" ] || [ "${op#\#}" != "$op" ] && continue
  R=4; prec=f32; cfgs=()
  for w in $rest; do
    case $w in R=*) R=${w#R=} ;; precision=*) prec=${w#precision=} ;; *) cfgs+=("$w") ;; esac
  done
  for cfg in "${cfgs[@]}"; do
    f=$out/$op-R$R-$prec-$(echo "$grid $cfg" | md5sum | cut -c1-8).sass
    "$bin" gen --op "$op" --R "$R" --precision "$prec" --grid "$grid" --config "$cfg" \
        --compile --target sm_90 --disasm >"$f" 2>&1
    echo "$op R=$R $prec $cfg: $(python3 "$root/bench/sass_steps.py" "$f" | cut -d: -f2-)"
  done
done <"$list"
