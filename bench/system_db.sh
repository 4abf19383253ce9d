#!/usr/bin/env bash
# Builds share/fdtune/system.db, the system database fdtune ships and consults after the
# user's own (README: The system database). On the GPU it runs on, tunes the five operators
# at R=4 in f32 and f64 on 256^3, 512^3 and 1024^3 into a shard of its own under $OUTDIR,
# then merges with `fdtune db merge --best-only` (one result per device model and problem,
# decided by the noise rule; only what provenance needs; rollback journal, compacted) the
# system database already there (results of other GPUs; left out with --fresh), that shard
# and any shards named on the command line into a new file, checks it and puts it in place.
# How it was made (source, host, devices, date, fdtune and generator fingerprints) goes into
# the database's metadata; `fdtune db check share/fdtune/system.db` shows it, with whether
# each result was measured with the kernel this fdtune writes (kernels): the merge carries the
# recorded hashes of the code each result was measured with, and records them for results of
# this fdtune's generator; tests/test_system_db.sh fails while a result's kernel differs or
# has no record.
#
# Usage: bench/system_db.sh [--fresh] [--no-tune] [--drop-stale] [--attest OLD_FDTUNE COMMIT]
#                           [--gpu NAME] [--budget N] [SHARD.db...]
#   --fresh       start from nothing: leave the system database there out of the merge
#   --no-tune     tune nothing here: merge the SHARD.db given (tuned on other machines), or,
#                 with none, the system database there alone (to re-make it)
#   --drop-stale  leave out the results whose kernel this fdtune does not write as it was
#                 measured, or whose code was never recorded (db merge --drop-stale)
#   --attest OLD_FDTUNE COMMIT  record, for results measured with OLD_FDTUNE's generator,
#                 that their code is unchanged where OLD_FDTUNE (built from COMMIT) and this
#                 fdtune emit the same code for them (bench/system_db_attest.py)
#   --gpu NAME    the GPU to tune (default: auto, the first visible one)
#   --budget N    evaluations per operator and problem (default: the recipes')
# Environment: FDTUNE (the binary, default build/fdtune), OUTDIR (default bench/results),
# SYSTEM_DB_OUT (where the result goes, default share/fdtune/system.db).
# Prints the merge summary and `fdtune db check` of the result; exit 0 when it is sound.
set -eu
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
system=${SYSTEM_DB_OUT:-$root/share/fdtune/system.db}

fresh=0 tune=1 gpu=auto budget= drop= attest_old= attest_commit=
shards=()
while [ $# -gt 0 ]; do
    case $1 in
    --fresh) fresh=1 ;;
    --no-tune) tune=0 ;;
    --drop-stale) drop=--drop-stale ;;
    --attest) attest_old=$2; attest_commit=$3; shift 2 ;;
    --gpu) gpu=$2; shift ;;
    --budget) budget=$2; shift ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "system_db.sh: unknown option $1" >&2; exit 2 ;;
    *) shards+=("$1") ;;
    esac
    shift
done

stamp=$(date -u +%Y%m%dT%H%M%SZ)
host=$(hostname)
if [ "$tune" = 1 ]; then
    shard=$OUTDIR/system-shard-$host-$stamp.db
    for prec in f32 f64; do
        for n in 256 512 1024; do
            echo "== tune R=4 $prec $n^3 on $gpu -> $shard" >&2
            # shellcheck disable=SC2086
            "$FDTUNE" --gpu "$gpu" --R 4 --precision "$prec" --grid "$n^3" --db "$shard" \
                ${budget:+--budget "$budget"} || echo "(tune $prec $n^3 exited $?; merging what it measured)" >&2
        done
    done
    shards+=("$shard")
fi
inputs=()
[ "$fresh" = 0 ] && [ -f "$system" ] && inputs+=("$system")
[ ${#shards[@]} -gt 0 ] || [ ${#inputs[@]} -gt 0 ] || { echo "system_db.sh: nothing to merge" >&2; exit 2; }
inputs+=("${shards[@]}")
devices=$(for s in "${inputs[@]}"; do
    "$FDTUNE" db check "$s" --json | python3 -c 'import json, sys
print("\n".join(sorted({p["device"] for p in json.load(sys.stdin)["pairs"]})))'
done | sort -u | paste -sd ';' -)

if [ "$tune" = 1 ]; then
    what="tuned by bench/system_db.sh on $host: R=4 f32 and f64, 256^3 512^3 1024^3, the five operators"
elif [ ${#shards[@]} -gt 0 ]; then
    what="merged by bench/system_db.sh on $host from shards tuned elsewhere: ${shards[*]##*/}"
else
    what="re-made by bench/system_db.sh on $host from the system database before it"
fi
# The code an older generator's results were measured with, recorded where nothing had.
attested=()
if [ -n "$attest_old" ] && [ -f "$system" ]; then
    verdicts=$OUTDIR/system-attest-$stamp.txt
    mkdir -p "$OUTDIR"
    mapfile -t attested < <(python3 "$root/bench/system_db_attest.py" "$attest_old" \
        "$attest_commit" "$system" 2>"$verdicts")
    cat "$verdicts" >&2
    what="$what; the code of ${#attested[@]} results of generator $("$attest_old" --version |
        sed -n 's/.*(generator \([0-9a-f]*\)).*/\1/p') recorded from $attest_commit by bench/system_db_attest.py ($(grep -c '^unchanged' "$verdicts") unchanged, $(grep -c '^differs' "$verdicts") differ)"
fi
# What the system database before said of itself goes along.
before=
if [ "$fresh" = 0 ] && [ -f "$system" ]; then
    before="; merged with the system database before it, whose source was: $("$FDTUNE" db check "$system" --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata"].get("source", "?"))')"
fi
new=$system.new.$$
rm -f "$new"
# shellcheck disable=SC2086
"$FDTUNE" db merge --best-only $drop -o "$new" \
    --meta "kind=fdtune system database" \
    --meta "source=$what ($devices), $stamp$before" \
    "${attested[@]}" "${inputs[@]}"
"$FDTUNE" db check "$new"
chmod 0444 "$new"
mv -f "$new" "$system"
echo "wrote $system: commit it, and update share/fdtune/README.md (its source, generator and kernels lines)" >&2
