#!/bin/sh
# The README's main-job command: sets up everything (scripts/setup.sh installs the missing
# Debian packages, configures and builds the default preset), lists the visible GPUs, then
#  - with a GPU: tunes R=4 on a 512^3 grid for the first visible GPU
#      build/fdtune --gpu auto --R 4 --grid 512^3 [--op "$FDTUNE_OPS"] "$@"
#    (every operator unless FDTUNE_OPS is set, e.g. FDTUNE_OPS=d2z,lap; extra arguments go
#    to fdtune, e.g. --strategy exhaustive --budget 200); the exit status is fdtune's;
#  - without one: says so on stderr, names what else works without a GPU (export from the
#    system database, gen, --simulate-from), and runs the real main job on the host CPU:
#      build/fdtune --cpu auto --R 4 --grid N^3 [--op "$FDTUNE_OPS"] "$@"
#    at the grid that fits the machine (N = 256 with at least 4 GiB of memory available,
#    128 with 1 GiB, else 64; FDTUNE_GRID=N chooses), saying which and why, and ends by
#    printing the command that exports the tuned CPU kernels as a C header. The exit status
#    is fdtune's.
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
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { say "fdtune devices failed (exit $rc)"; exit "$rc"; }
# Is there a GPU for --gpu auto? fdtune's own answer: a dry run exits 3 when none is visible
# (the host CPU never counts as one).
gpu=1
rc=0
"$fdtune" --gpu auto --op lap --R 4 --grid '64^3' --dry-run --top 0 >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 3 ] || gpu=0

if [ "$gpu" -eq 1 ]; then
    say "fdtune --gpu auto --R 4 --grid 512^3${*:+ $*}"
    rc=0
    "$fdtune" --gpu auto --R 4 --grid '512^3' "$@" || rc=$?
    [ "$rc" -eq 0 ] || say "tuning ended with exit status $rc (see fdtune --help)"
    exit "$rc"
fi

say "NO GPU IS VISIBLE (see 'fdtune devices' above): the main job runs on the host CPU" \
    "instead (--cpu auto: C with OpenMP, compiled by \$CC, else cc). Without a GPU also:"
say "  - a header of GPU kernels tuned on the project's GPUs (the system database):" \
    "$fdtune export --gpu H100 --R 4 -o fdtuned.h"
say "  - the source of a kernel, compiled for a target: $fdtune gen --op lap --R 4" \
    "--compile --target sm_90"
say "  - tuning simulated GPUs that answer from a recorded database: $fdtune --gpu H100" \
    "--R 4 --grid 512^3 --simulate-from tests/data/h100-replay.db --db sim.db"

# The grid: the largest of 256^3, 128^3, 64^3 whose arrays fit well in the memory available
# (the worker holds about a dozen halo-padded arrays: 256^3 in f64 is about 1.8 GB).
avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo 2>/dev/null || true)
avail=${avail:-0}
if [ -n "${FDTUNE_GRID:-}" ]; then
    n=$FDTUNE_GRID
    why="FDTUNE_GRID=$n"
elif [ "$avail" -ge 4096 ]; then
    n=256
    why="$avail MiB of memory available (at least 4 GiB)"
elif [ "$avail" -ge 1024 ]; then
    n=128
    why="$avail MiB of memory available (less than the 4 GiB 256^3 wants)"
else
    n=64
    why="$avail MiB of memory available (less than the 1 GiB 128^3 wants)"
fi
say "tuning the host CPU at ${n}^3 ($why): fdtune --cpu auto --R 4 --grid ${n}^3${*:+ $*}"
rc=0
"$fdtune" --cpu auto --R 4 --grid "${n}^3" "$@" || rc=$?
if [ "$rc" -ne 0 ]; then
    say "tuning the CPU ended with exit status $rc (see fdtune --help)"
    exit "$rc"
fi
say "done on the CPU. Export its tuned kernels as a C header (build your program with" \
    "cc -fopenmp; examples/cpu_stencil.c shows how):"
say "  $fdtune export --cpu auto --R 4 -o fdtuned_cpu.h"
exit 0
