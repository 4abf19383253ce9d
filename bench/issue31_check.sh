#!/usr/bin/env bash
# Issue 31's cells with the final code, on one NVIDIA GPU, everything under $OUT (default
# bench/results) as issue31_check/ plus its summary issue31_check.txt:
#  1. timing: each cell's tuned best (bench/matrix/h200.csv, or MATRIX_CSV; d2z's from the
#     H200's issue-5 run, bench/issue5_h200/after.csv) in a bench run of its own, whose copy
#     bandwidth is the denominator (as bench/matrix.sh does); against the issue's target;
#  2. verification and sanitizers: the best with its window cut to 16 planes (the longest
#     that a 40-plane grid takes, with a remainder) on 256x64x40, whose rows are whole blocks
#     of every best (guard=none needs them): `fdtune bench --probe` (the reference against
#     the CPU, then the candidate against it over every point, halo, padding and inputs
#     untouched), compute-sanitizer memcheck, and racecheck and synccheck where the kernel
#     shares memory (lds >= 1); then memcheck of the best itself on a grid as deep as its
#     window plus a remainder (256x64x(nw+8));
#  3. Nsight Compute: one launch of each best at its cell's grid (bench/lib.sh ncu_profile).
# Usage: OUT=DIR bench/issue31_check.sh [STEPS]  (STEPS: any of "time verify ncu", default
# all three; CELLS: a subset of the cells below; MATRIX_CSV: the bests' CSV, default
# bench/matrix/h200.csv, e.g. h100.csv on an H100; FDTUNE: the binary, default ./build/fdtune)
set -u
OUTDIR=${OUT:-${OUTDIR:-$(cd "$(dirname "$0")" && pwd)/results}}
export OUTDIR
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
dir=$OUTDIR/issue31_check
mkdir -p "$dir"
sum=$OUTDIR/issue31_check.txt
: >"$sum"
steps=${1:-"time verify ncu"}
say() { echo "$*" | tee -a "$sum"; }

# The issue's cells: operator, radius, precision, edge of the cubic grid, target fraction.
cells=${CELLS:-"lap:4:f32:512:0.90 lap:4:f32:1024:0.90 lap:8:f32:512:0.75 lap:8:f32:1024:0.75
lap:6:f64:512:0.80 lap:5:f64:512:0.80 d2z:4:f32:1024:0.93"}

# The tuned best config of a cell (op R precision edge) from the recorded runs.
best_of() {
    if [ "$1" = d2z ]; then  # R=4 f32 only
        [ "$2$3" = 4f32 ] && best_in_csv "$here/issue5_h200/after.csv" d2z "$4"
        return
    fi
    python3 - "${MATRIX_CSV:-$here/matrix/h200.csv}" "$@" <<'PY'
import csv, sys
path, op, R, prec, n = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path))
        if (r["op"], r["R"], r["precision"], r["nx"]) == (op, R, prec, n)]
print(rows[-1]["config"] if rows else "")
PY
}

# The config $1 with its window cut to $2 planes.
cut_window() { echo "$1" | sed -E "s/(^|,)nw=[0-9]+/\1nw=$2/"; }

# The window length of config $1.
window_of() { echo "$1" | sed -nE 's/(^|.*,)nw=([0-9]+).*/\2/p'; }

say "issue31_check: $("$FDTUNE" --version 2>&1 | head -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
for cell in $cells; do
    IFS=: read -r op R prec n target <<<"$cell"
    best=$(best_of "$op" "$R" "$prec" "$n")
    tag=$op-R$R-$prec-$n
    if [ -z "$best" ]; then
        say "$tag: no recorded best"
        continue
    fi
    say "== $op R=$R $prec $n^3 (target $target): $best"
    case " $steps " in *" time "*)
        timeout 120 "$FDTUNE" bench --op "$op" --R "$R" --precision "$prec" --grid "$n^3" \
            --config "$best" --json >"$dir/time-$tag.json" 2>"$dir/time-$tag.log"
        rc=$?
        python3 - "$dir/time-$tag.json" "$rc" "$target" <<'PY' | tee -a "$sum"
import json, sys
path, rc, target = sys.argv[1], sys.argv[2], float(sys.argv[3])
try:
    d = json.load(open(path))
    r = d["results"][0]
    f = r["frac_copy"]  # the worker's gbs / copy_gbs
    print("time: exit %s, %s, %.4f ms, %.0f GB/s, copy %.0f GB/s, %.3f of copy: %s" % (
        rc, r["status"], r["median_ms"], r["gbs"], d["copy_gbs"], f,
        "PASS" if f >= target else "MISS (target %.2f)" % target))
except Exception as e:
    print("time: exit %s, no result: %s" % (rc, e))
PY
    esac
    case " $steps " in *" verify "*)
        small=$(cut_window "$best" 16)
        timeout 120 "$FDTUNE" bench --op "$op" --R "$R" --precision "$prec" --grid 256x64x40 \
            --config "$small" --probe --json >"$dir/verify-$tag.json" 2>"$dir/verify-$tag.log"
        probe_summary "$dir/verify-$tag.json" "verify 256x64x40 $small" "$?" "nw=16" | tee -a "$sum"
        tools=memcheck
        case ",$best," in *,lds=[123],*) tools="memcheck racecheck synccheck" ;; esac
        for tool in $tools; do
            sanitize "$tool" "$op" 256x64x40 "$small" "$dir/san-$tool-$tag.log" "$R" "$prec" |
                tee -a "$sum"
        done
        deep=$(( $(window_of "$best") + 8 ))
        sanitize memcheck "$op" "256x64x$deep" "$best" "$dir/san-memcheck-full-$tag.log" \
            "$R" "$prec" | sed "s/^/256x64x$deep: /" | tee -a "$sum"
    esac
    case " $steps " in *" ncu "*)
        if command -v ncu >/dev/null; then
            ncu_profile "$op" "$R" "$prec" "$best" "$n^3" >"$dir/ncu-$tag.txt" 2>&1
            grep -E "^ +(DRAM Throughput|Duration|Compute \(SM\) Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per Thread|L2 Hit Rate) |dram__bytes_(read|write).sum|smsp__inst_executed.sum" \
                "$dir/ncu-$tag.txt" | sed -E 's/ +/ /g; s/^/ncu:/' | tee -a "$sum"
        else
            say "ncu: not found on PATH"
        fi
    esac
done
tar czf "$OUTDIR/issue31_check.tar.gz" -C "$OUTDIR" issue31_check 2>/dev/null
