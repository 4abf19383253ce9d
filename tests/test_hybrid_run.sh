#!/bin/sh
# The host<->device link (issue 29, item 3): `fdtune devices` measures it in each GPU's worker,
# shows it beside the copy bandwidth and stores it in the tuning database (--db PATH, created;
# the default database only when one is there). The GPU is the stand-in CUDA driver of the
# tests (fake-cuda/libcuda.so.1) with FAKE_CUDA_MEMORY=1: its memory, copies, streams and
# events work on the host, so the worker's measurement runs; a build without the cuda backend
# skips (77).
# usage: test_hybrid_run.sh FDTUNE FAKE_CUDA_DIR
fdtune=$1
fake=$2
[ -f "$fake/libcuda.so.1" ] || { echo "no stand-in CUDA driver in this build: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/testutil.sh"
export LD_LIBRARY_PATH="$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_CUDA_MEMORY=1
export FDTUNE_DB="$tmp/default.db" FDTUNE_CACHE=""

# measured, shown and stored in the database named
run "devices --db" 0 devices --db "$tmp/links.db"
expect_in "devices --db: header" "$tmp/out" "h2d  d2h  both  4K us  unified"
expect_in "devices --db: stored" "$tmp/err" "host links stored in $tmp/links.db"
py "devices --db: the row shows the link" '
import re, sys
row = [l for l in open(sys.argv[1]) if "cuda:0" in l][0]
m = re.search(r" - +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +no ", row)
assert m and all(float(x) > 0 for x in m.groups()[:3]), row
' "$tmp/out"
py "devices --db: one link row of the fake H100" '
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select d.name, l.h2d_gbs, l.d2h_gbs, l.both_gbs, l.latency_us, l.unified "
                  "from links l join devices d on d.id = l.device_id").fetchall()
assert len(rows) == 1, rows
name, h2d, d2h, both, lat, uni = rows[0]
assert name == "NVIDIA H100 80GB HBM3" and h2d > 0 and d2h > 0 and both > 0 and lat >= 0, rows
assert uni == 0, rows
' "$tmp/links.db"

# JSON carries the same fields
run "devices --json" 0 devices --json --db "$tmp/links.db"
py "devices --json: link fields" '
import json, sys
d = json.load(open(sys.argv[1]))["devices"][0]
assert d["link_h2d_gbs"] > 0 and d["link_d2h_gbs"] > 0 and d["link_both_gbs"] > 0, d
assert d["link_latency_us"] >= 0 and d["unified"] == 0, d
' "$tmp/out"
py "devices --json: a second measurement is logged" '
import sqlite3, sys
assert sqlite3.connect(sys.argv[1]).execute("select count(*) from links").fetchone()[0] == 2
' "$tmp/links.db"

# no --db and no default database: shown, nothing created
run "devices without a database" 0 devices
expect_in "devices without a database: said" "$tmp/err" "host links not stored"
[ ! -e "$tmp/default.db" ] || fail "devices without a database created $tmp/default.db"

# --no-bandwidth measures nothing and stores nothing
run "devices --no-bandwidth" 0 devices --no-bandwidth --db "$tmp/none.db"
[ ! -e "$tmp/none.db" ] || fail "devices --no-bandwidth created a database"
finish
