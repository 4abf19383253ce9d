#!/bin/sh
# The CPU target's figures (issue 28, section 3): tunes the host CPU (`--cpu auto`, the
# default recipe recipes/cpu.lua) for each problem given, each in a fresh database, and
# prints one row per problem: the best config's bandwidth as a fraction of the copy
# bandwidth measured in the same run, the plain loop-nest baseline (the recipe's default,
# measured in the same run) and the best's speedup over it, and the tune's wall time.
#   FDTUNE=build/fdtune bench/cpu_targets.sh GRID OUTDIR [OPS [RADII [PRECISIONS]]]
#   e.g. bench/cpu_targets.sh 512^3 /tmp/cpu "d2x d2y d2z lap wave" "4" "f32"
# OUTDIR gets each tune's JSON (OP-RR-PREC.json), its log, and table.txt. The CPU model,
# cores and compiler head the table (fdtune devices --json).
set -u
grid=$1 out=$2
ops=${3:-"d2x d2y d2z lap wave"} radii=${4:-4} precs=${5:-f32}
fdtune=${FDTUNE:-fdtune}
mkdir -p "$out" || exit 4
"$fdtune" devices --json >"$out/devices.json" 2>"$out/devices.log"
python3 - "$out/devices.json" >"$out/table.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for h in d.get("hosts", []):
    print("# %s (%s), %s cores, %s threads, %s; copy %s GB/s; compiler %s" % (
        h.get("name"), h.get("arch"), h.get("cores"), h.get("threads"), h.get("simd"),
        h.get("copy_bandwidth_gbs"), h.get("compiler", "")))
print("%-5s %2s %-4s %-12s %8s %8s %8s %9s %8s %7s  %s" % ("op", "R", "prec", "grid", "GB/s",
      "copy", "of copy", "base GB/s", "speedup", "wall s", "best config / stopped"))
PY
for prec in $precs; do for R in $radii; do for op in $ops; do
    tag=$op-r$R-$prec
    rm -f "$out/$tag.db"
    "$fdtune" --cpu auto --op "$op" --R "$R" --precision "$prec" --grid "$grid" \
        --db "$out/$tag.db" --json >"$out/$tag.json" 2>"$out/$tag.log"
    rc=$?
    python3 - "$out/$tag.json" "$rc" "$grid" >>"$out/table.txt" <<'PY'
import json, sys
path, rc, grid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    p = json.load(open(path))["problems"][0]
except Exception as ex:  # the tune failed: say so in its row
    print("# %s: tune exit %d, no result (%s)" % (path, rc, ex))
    sys.exit(0)
print("%-5s %2d %-4s %-12s %8.1f %8.1f %8.3f %9.1f %7.2fx %7.1f  %s / %s" % (
    p["op"], p["R"], p["precision"], grid, p["best_gbs"], p["copy_gbs"], p["best_frac_copy"],
    p.get("baseline_gbs") or 0, p.get("speedup") or 0, p["wall_s"], p["best_config"],
    p.get("stopped", "")))
PY
    cat "$out/table.txt" | tail -1
done; done; done
