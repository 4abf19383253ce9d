#!/usr/bin/env bash
# Times a list of candidates per problem (full sample, verified first) and prints a table.
# Input lines: "OP GRID CONFIG [CONFIG...]" (R=4 f32 unless R=/precision= appear as words).
# Used to explore the kernel families before the tuner exists; results in $OUTDIR/explore/.
set -u
. "$(dirname "$0")/lib.sh"
mkdir -p "$OUTDIR/explore"
list=${1:?usage: explore.sh LISTFILE}
n=0
while read -r op grid rest; do
  [ -z "${op:-}" ] || [ "${op#\#}" != "$op" ] && continue
  R=4; prec=f32; args=()
  for w in $rest; do
    case $w in R=*) R=${w#R=} ;; precision=*) prec=${w#precision=} ;; *) args+=(--config "$w") ;; esac
  done
  n=$((n + 1))
  out="$OUTDIR/explore/$n-$op-R$R-$prec-${grid/^/c}"
  "$FDTUNE" bench --op "$op" --R "$R" --precision "$prec" --grid "$grid" --json "${args[@]}" \
      >"$out.json" 2>"$out.log" || echo "note: $op $grid exit $?"
done <"$list"
python3 "$(dirname "$0")/summarize.py" "$OUTDIR"/explore/*.json
