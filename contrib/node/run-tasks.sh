#!/bin/sh
# Runs every task of an fdtune plan on one multi-GPU node without a batch system: one task
# per GPU at a time (CUDA_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES narrowed to that GPU), as
# many at once as GPUs, each GPU taking the next task when it is done; each task writes its
# shard on local storage and publishes it to results/ beside the plan; then the shards are
# merged (fdtune db merge) into one database.
#
#   fdtune plan --R 4 --grid 512^3 --grid 1024^3 -o run1/tasks.jsonl
#   contrib/node/run-tasks.sh -g 0,1,2,3 run1/tasks.jsonl        # -> run1/fdtune.db
#
#   -g GPUS     the GPUs, by index (default: every GPU `fdtune devices` lists)
#   -o OUT.db   the merged database (default: fdtune.db beside the plan)
#   -j N        compile processes per task (default: the CPU cores / the GPUs)
#   -f "ARGS"   more `fdtune tune` options for every task (e.g. "--timeout 60")
#
# `fdtune --gpu all` does the same in one process (one database, retries on another GPU, one
# progress display): use it on a node you sit at. Use this script when each task must stand
# alone (a task that fails costs itself, a rerun of this script skips nothing but resumes
# every task from its published shard) or when the database lives on a network filesystem
# (the shards are written locally). Environment: FDTUNE (default: fdtune on PATH).
# Exit status: 0 when every task and the merge succeeded (a task whose problem has no
# verified config counts as done), else 1; 2 for bad arguments.
set -u
gpus="" out="" jobs="" fa=""
while getopts g:o:j:f:h opt; do
    case $opt in
    g) gpus=$OPTARG ;;
    o) out=$OPTARG ;;
    j) jobs=$OPTARG ;;
    f) fa=$OPTARG ;;
    *) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "$#" -eq 1 ] && [ -f "$1" ] || { echo "run-tasks.sh: give the plan (tasks.jsonl); -h for help" >&2; exit 2; }
tasks=$1
fdtune=${FDTUNE:-fdtune}
plan_dir=$(cd "$(dirname "$tasks")" && pwd)
results=$plan_dir/results
out=${out:-$plan_dir/fdtune.db}
n=$(grep -c . "$tasks")
if [ -z "$gpus" ]; then
    count=$("$fdtune" devices --json --no-bandwidth |
        python3 -c 'import json, sys; print(len(json.load(sys.stdin)["devices"]))') || exit 2
    [ "$count" -gt 0 ] || { echo "run-tasks.sh: no GPU is visible (fdtune devices)" >&2; exit 2; }
    gpus=$(seq -s, 0 $((count - 1)))
fi
ngpus=$(echo "$gpus" | tr ',' '\n' | grep -c .)
[ -n "$jobs" ] || jobs=$(( $(nproc) / ngpus > 0 ? $(nproc) / ngpus : 1 ))
mkdir -p "$results"
work=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-node.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo 0 >"$work/next"
: >"$work/failed"
echo "run-tasks.sh: $n task(s) on GPU(s) $gpus, $jobs compile processes each" >&2

# lane GPU: takes the next task until none is left
lane() {
    while :; do
        i=$(flock "$work/next" sh -c 'i=$(cat "$1"); echo $((i + 1)) >"$1"; echo "$i"' _ "$work/next")
        [ "$i" -lt "$n" ] || return 0
        rc=0
        # shellcheck disable=SC2086 # fa is a list of options
        CUDA_VISIBLE_DEVICES=$1 HIP_VISIBLE_DEVICES=$1 "$fdtune" tune --tasks "$tasks" \
            --task "$i" --results "$results" --jobs "$jobs" $fa \
            >"$results/task-$i.out" 2>"$results/task-$i.log" || rc=$?
        if [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; then
            echo "run-tasks.sh: GPU $1: task $i done" >&2
        else
            echo "run-tasks.sh: GPU $1: task $i failed (exit $rc, see $results/task-$i.log)" >&2
            echo "$i" >>"$work/failed"
        fi
    done
}
for g in $(echo "$gpus" | tr ',' ' '); do
    lane "$g" &
done
wait
if [ -s "$work/failed" ]; then
    echo "run-tasks.sh: task(s) failed: $(tr '\n' ' ' <"$work/failed")- not merged; run this" \
         "script again to rerun them (the others resume from their shards)" >&2
    exit 1
fi
"$fdtune" db merge -o "$out" "$results"/task-*.db || exit 1
echo "run-tasks.sh: merged $n shard(s) into $out" >&2
