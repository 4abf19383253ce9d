#!/usr/bin/env bash
# Deliberately broken kernels must be caught: a flipped coefficient, a skipped plane and a
# halo write are `wrong`; an illegal address is `crashed`; a kernel that never ends is
# `timeout`; the run carries on after each (the last, correct config must still be ok).
set -u
. "$(dirname "$0")/lib.sh"
grid=${1:-256^3}
"$FDTUNE" bench --op lap --R 4 --grid "$grid" --timeout 15 --probe --json \
    --config fault=coef --config fault=plane --config fault=halo \
    --config "bx=32,by=8,nw=32,lds=1,vec=4,align=64,fault=coef" \
    --config fault=oob --config fault=hang --config "bx=32,by=8,nw=32,vec=4,align=64" \
    >"$OUTDIR/faults.json" 2>"$OUTDIR/faults.log"
python3 - "$OUTDIR/faults.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = ["wrong", "wrong", "wrong", "wrong", "crashed", "timeout", "ok"]
got = [r["status"] for r in d["results"]]
for r, w in zip(d["results"], want):
    print(f'{r["config"]:45s} {r["status"]:8s} (expected {w}) {r["message"][:110]}')
print("restarts:", d["worker_restarts"])
sys.exit(0 if got == want else 1)
PY
