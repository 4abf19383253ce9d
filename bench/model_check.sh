#!/usr/bin/env bash
# The model's on-chip terms against Nsight Compute (issue 14, "an on-chip term in the model"),
# for a GPU machine with the built tree and ncu: for each cell (op, R, precision, grid, config)
# it asks the model's dry run on the visible GPU (fdtune --gpu NAME --dry-run --json over a
# recipe of that one config) for its bound and per-point counts, profiles the candidate's
# first launch under ncu inside `fdtune bench --probe` (the metrics of bench/model_check.py,
# those this ncu knows), and appends one row of predicted beside measured numbers per output
# point to OUTDIR/model_check.csv (bench/model_check.py says what each column measures).
# Usage: bench/model_check.sh OUTDIR
# Env: CELLS (cells of the form op:R:precision:N:config, space-separated; default the eight
# below), DEADLINE (seconds, default 230: no cell starts after it), GPU (the catalogue name for
# the dry run; default the visible GPU's, found by catalogue_gpu in lib.sh), FDTUNE (default ./build/fdtune), NCU (default ncu).
# The default cells are configs measured on an H100 and an H200 (tests/data/nvidia-measured.txt:
# tuned d2x and d2z, the tuned ring of lap R=4, the stream and the ring at R=8, the stream in
# f64 and for wave, the direct reference at R=4); the same list serves both GPUs.
set -u
OUTDIR=${1:?usage: bench/model_check.sh OUTDIR}
mkdir -p "$OUTDIR"
export OUTDIR
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
NCU=${NCU:-ncu}
deadline=${DEADLINE:-230}
start=$(date +%s)
csv=$OUTDIR/model_check.csv
DEFAULT_CELLS="
lap:4:f32:512:align=32,by=8,l2pf=256,lb=512,lds=2,nw=128,pf=5,tile=2,vec=2
lap:8:f32:512:align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=256,pf=3,tile=2,vec=2
lap:8:f32:512:align=32,bx=32,by=8,l2pf=256,lb=256,lds=2,nw=64,pf=6,tile=2,vec=2
lap:8:f64:512:align=32,bx=32,by=8,lb=256,lds=3,nw=256,pf=3,tile=2,vec=2
wave:8:f32:512:align=32,bx=32,by=8,lb=256,lds=3,nw=128,pf=4,vec=4
d2z:4:f32:512:align=32,bx=128,by=1,lb=128,nt=1,nw=8,order=yzx,vec=4
d2x:4:f32:512:align=32,bx=128,by=8,lb=1024,nt=1,vec=4
lap:4:f32:512:default"

command -v "$NCU" >/dev/null || { echo "model_check: no '$NCU' (set NCU)" >&2; exit 2; }
[ -x "$FDTUNE" ] || { echo "model_check: no fdtune at $FDTUNE (build first)" >&2; exit 2; }

# The metrics this ncu knows: model_check.py's list less those whose base name
# `ncu --query-metrics` does not list (all of them when the query fails).
known=$("$NCU" --query-metrics 2>/dev/null | awk '{print $1}')
metrics=
for m in $(python3 "$here/model_check.py" --metrics); do
    if [ -z "$known" ] || grep -qxF "${m%%.*}" <<<"$known"; then
        metrics=${metrics:+$metrics,}$m
    else
        echo "model_check: this ncu has no ${m%%.*}: its column stays empty" >&2
    fi
done

python3 "$here/model_check.py" --header >"$csv"
# A dry run probes nothing, so it takes a catalogue name, not 'auto': $GPU, else the visible
# GPU's catalogue name.
gpuarg=${GPU:-$(catalogue_gpu "$(device_name)")}
[ -n "$gpuarg" ] || { echo "model_check: no catalogue name for the visible GPU (set GPU)" >&2; exit 2; }
for cell in ${CELLS:-$DEFAULT_CELLS}; do
    IFS=: read -r op R prec n cfg <<<"$cell"
    left=$(( deadline - ($(date +%s) - start) ))
    if [ "$left" -lt 20 ]; then
        echo "model_check: DEADLINE=$deadline reached; not run: $cell" >&2
        continue
    fi
    name="$op-R$R-$prec-$n-$(printf %s "$cfg" | md5sum | cut -c1-8)"
    rec=$OUTDIR/mc-$name.lua
    config_recipe "$op" "$cfg" >"$rec"
    if ! "$FDTUNE" --gpu "$gpuarg" --op "$op" --R "$R" --precision "$prec" --grid "$n^3" \
        --recipe "$rec" --dry-run --top 1 --json >"$OUTDIR/mc-$name.dry.json" \
        2>"$OUTDIR/mc-$name.dry.log"; then
        echo "model_check: $cell: the dry run failed ($OUTDIR/mc-$name.dry.log)" >&2
        continue
    fi
    # the candidate's first launch only (the reference kernel is fdt_ref_*)
    timeout 90 "$NCU" --csv --print-units base --clock-control none --target-processes all \
        --kernel-name "regex:^fdt_${op}_r" --launch-count 1 --metrics "$metrics" \
        --log-file "$OUTDIR/mc-$name.ncu.csv" \
        "$FDTUNE" bench --op "$op" --R "$R" --precision "$prec" --grid "$n^3" --config "$cfg" \
        --probe --json >"$OUTDIR/mc-$name.bench.json" 2>"$OUTDIR/mc-$name.bench.log"
    rc=$?
    [ "$rc" -eq 0 ] || echo "model_check: $cell: ncu/bench exit $rc ($OUTDIR/mc-$name.*)" >&2
    python3 "$here/model_check.py" "$OUTDIR/mc-$name.dry.json" "$OUTDIR/mc-$name.ncu.csv" \
        "$OUTDIR/mc-$name.bench.json" >>"$csv" || echo "model_check: $cell: no row" >&2
    tail -1 "$csv" >&2
done
python3 - "$csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = [("op", 4), ("R", 2), ("precision", 4), ("pred_bound", 7), ("meas_bound", 7),
        ("pred_gbs", 5), ("meas_gbs", 5), ("pred_shared_B", 6), ("meas_shared_B", 6),
        ("pred_l1_B", 6), ("meas_l1_B", 6), ("pred_fp", 6), ("meas_fp", 6), ("pred_inst", 6),
        ("meas_inst", 6), ("pred_occupancy", 5), ("meas_occupancy", 5)]
print(" ".join(c.replace("pred_", "p.").replace("meas_", "m.")[:w + 3].rjust(w + 3)
               for c, w in cols))
for r in rows:
    print(" ".join(str(r[c])[:w + 3].rjust(w + 3) for c, w in cols) + "  " + r["config"])
agree = sum(r["pred_bound"] == r["meas_bound"] for r in rows)
print("bound agrees in %d of %d cells; %s" % (agree, len(rows), sys.argv[1]))
PY
