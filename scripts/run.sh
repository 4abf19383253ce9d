#!/bin/sh
# The README's main-job command: sets up everything (scripts/setup.sh installs the missing
# Debian packages, configures and builds the default preset), lists the visible GPUs, then
#  - with a GPU: tunes R=4 on a 512^3 grid for the first visible GPU
#      build/fdtune --gpu auto --R 4 --grid 512^3 [--op "$FDTUNE_OPS"] "$@"
#    (every operator unless FDTUNE_OPS is set, e.g. FDTUNE_OPS=d2z,lap; extra arguments go
#    to fdtune, e.g. --strategy exhaustive --budget 200); the exit status is fdtune's;
#  - without one: says so on stderr, names what works without a GPU (export from the system
#    database, gen, --simulate-from), and does what needs no GPU: the search space, pruning
#    and the model's ranking for an H100 (--dry-run, with the same FDTUNE_OPS and extra
#    arguments), and one `fdtune bench` candidate compiled for sm_90 and gfx90a (it cannot
#    be run, verified or timed). Exit status 0 when both did what they can without a GPU.
# Data on stdout, progress and diagnostics on stderr.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/setup.sh" default
cd "$here"
fdtune=./build/fdtune

if [ -n "${FDTUNE_OPS:-}" ]; then
    set -- --op "$FDTUNE_OPS" "$@"
fi

say() { echo "run: $*" >&2; }

say "fdtune devices"
rc=0
devices=$("$fdtune" devices) || rc=$?
[ -z "$devices" ] || printf '%s\n' "$devices"
gpu=1
case $rc in
    0) case $devices in "No GPU is visible"*) gpu=0 ;; esac ;;
    3) gpu=0 ;;
    *) say "fdtune devices failed (exit $rc)"; exit "$rc" ;;
esac

if [ "$gpu" -eq 1 ]; then
    say "fdtune --gpu auto --R 4 --grid 512^3${*:+ $*}"
    rc=0
    "$fdtune" --gpu auto --R 4 --grid '512^3' "$@" || rc=$?
    [ "$rc" -eq 0 ] || say "tuning ended with exit status $rc (see fdtune --help)"
    exit "$rc"
fi

say "NO GPU IS VISIBLE (see 'fdtune devices' above): nothing can be tuned, run, verified" \
    "or timed on this machine. What works without a GPU:"
say "  - a header of tuned kernels from the system database (results measured on the" \
    "project's GPUs): $fdtune export --gpu H100 --R 4 -o fdtuned.h"
say "  - the source of a kernel, compiled for a target: $fdtune gen --op lap --R 4" \
    "--compile --target sm_90"
say "  - tuning simulated GPUs that answer from a recorded database: $fdtune --gpu H100" \
    "--R 4 --grid 512^3 --simulate-from tests/data/h100-replay.db --db sim.db"
say "Doing what needs no GPU now: the dry run and one bench candidate."

say "fdtune --gpu H100 --R 4 --grid 512^3 --dry-run${*:+ $*} (search space, pruning, model" \
    "ranking)"
dry=0
"$fdtune" --gpu H100 --R 4 --grid '512^3' --dry-run "$@" || dry=$?
[ "$dry" -eq 0 ] || say "the dry run failed (exit $dry)"

config=bx=64,by=4,nw=32,vec=4,align=32
say "fdtune bench --op lap --R 4 --grid 256^3 --config $config (compiles only, no GPU)"
bench=0
"$fdtune" bench --op lap --R 4 --grid '256^3' --config "$config" || bench=$?
case $bench in
    3) ;; # expected: compiled for the default targets, then "no GPU visible"
    0) say "bench ran although no GPU was listed" ;;
    *) say "bench failed (exit $bench)" ;;
esac

if [ "$dry" -eq 0 ] && { [ "$bench" -eq 3 ] || [ "$bench" -eq 0 ]; }; then
    say "done without a GPU: shown the search space and the model's ranking for an H100," \
        "and compiled one candidate for sm_90 and gfx90a. Not done: tuning, verification" \
        "and timing, which need a visible GPU (NVIDIA driver libcuda.so.1 or AMD" \
        "libamdhip64 with a GPU)."
    exit 0
fi
[ "$dry" -ne 0 ] && exit "$dry"
exit "$bench"
