#!/bin/sh
# Tunes a request on a SLURM cluster: writes the plan (fdtune plan), submits one job array of
# its tasks, one GPU each, at most K at a time (contrib/slurm/fdtune-array.sbatch), and a merge
# job that runs once every task succeeded (--dependency=afterok, fdtune-merge.sbatch; SLURM
# cancels it when a task fails: rerun that task, then submit fdtune-merge.sbatch by hand),
# then prints both job ids. Needs sbatch; DIR must be on a filesystem the nodes share.
#
#   contrib/slurm/submit.sh -d $PWD/run1 -k 8 -- --R 4 --grid 512^3 --grid 1024^3
#
#   -d DIR        where the plan, the shards (DIR/results) and the logs (DIR/logs) go, and the
#                 merged database (DIR/fdtune.db); default: ./fdtune-run
#   -k K          at most K tasks at a time (--array=0-N%K); default 8
#   -o OUT.db     the merged database instead of DIR/fdtune.db
#   -s "ARGS"     more sbatch options for both jobs (e.g. "-p gpu -A proj")
#   -a "ARGS"     more sbatch options for the array only (e.g. "--time=1:00:00")
#   -f "ARGS"     more `fdtune tune` options for every task (e.g. "--timeout 60")
#   -- ARGS       what to tune: `fdtune plan` options (--op, --R, --precision, --grid, ...)
#
# Environment: FDTUNE (the binary; default: fdtune on PATH, made absolute for the jobs).
# Output (stdout): "array job ID: ..." and "merge job ID: ..." lines.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=./fdtune-run cap=8 out="" sb="" sba="" fa=""
while getopts d:k:o:s:a:f:h opt; do
    case $opt in
    d) dir=$OPTARG ;;
    k) cap=$OPTARG ;;
    o) out=$OPTARG ;;
    s) sb=$OPTARG ;;
    a) sba=$OPTARG ;;
    f) fa=$OPTARG ;;
    *) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "$#" -gt 0 ] || { echo "submit.sh: what to tune? e.g. submit.sh -- --R 4 --grid 512^3" >&2; exit 2; }
case $cap in '' | *[!0-9]* | 0) echo "submit.sh: -k $cap: a positive count" >&2; exit 2 ;; esac
fdtune=${FDTUNE:-fdtune}
case $fdtune in */*) fdtune=$(cd "$(dirname "$fdtune")" && pwd)/$(basename "$fdtune") ;;
*) fdtune=$(command -v "$fdtune") || { echo "submit.sh: fdtune is not on PATH (set FDTUNE)" >&2; exit 2; } ;;
esac
mkdir -p "$dir/logs" "$dir/results"
dir=$(cd "$dir" && pwd)
out=${out:-$dir/fdtune.db}
n=$("$fdtune" plan "$@" -o "$dir/tasks.jsonl")
[ "$n" -gt 0 ] || { echo "submit.sh: the plan has no task" >&2; exit 2; }
export FDTUNE="$fdtune" FDTUNE_TASKS="$dir/tasks.jsonl" FDTUNE_RESULTS="$dir/results" \
    FDTUNE_OUT="$out" FDTUNE_ARGS="$fa"
# shellcheck disable=SC2086 # option lists
array=$(sbatch --parsable --array="0-$((n - 1))%$cap" --output="$dir/logs/task-%A_%a.out" \
    --export=ALL $sb $sba "$here/fdtune-array.sbatch")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --output="$dir/logs/merge-%j.out" \
    --export=ALL $sb "$here/fdtune-merge.sbatch")
merge=${merge%%;*}
echo "array job $array: $n task(s), at most $cap at a time; shards in $dir/results, logs in $dir/logs"
echo "merge job $merge: after every task of $array succeeded, into $out"
