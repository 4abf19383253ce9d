#!/bin/sh
# The shipped system database and this fdtune's generator agree: every result of
# share/fdtune/system.db was measured with the kernel this fdtune writes for its config, by
# `fdtune db check`'s kernels (measured with this generator, or with another whose recorded
# code, the hash of its kernel source and mapping header, is this generator's). Fails when a
# generator change alters a shipped config's kernel, or when results come with no record of
# their code, naming them: rebuild the system database then (share/fdtune/README.md).
# Usage: test_system_db.sh FDTUNE SOURCE_DIR
set -u
fdtune=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/testutil.sh"

db="$src/share/fdtune/system.db"
if ! "$fdtune" db check "$db" --json >"$tmp/check.json" 2>"$tmp/check.err"; then
    fail "db check $db: $(cat "$tmp/check.err")"
    finish
fi
py "share/fdtune/system.db: every result measured with the kernel this fdtune writes" '
import json, sys
k = json.load(open(sys.argv[1]))["kernels"]
stale = ["%s %s %s R=%d %s %dx%dx%d %s (generator %s)" % (s["kernel"], s["device"], s["op"],
         s["R"], s["precision"], s["nx"], s["ny"], s["nz"], s["config"], s["generator"])
         for s in k["stale"]]
assert not stale, ("%d of the shipped results were not measured with the kernel this fdtune "
                   "writes (rebuild the system database: share/fdtune/README.md):\n  " %
                   len(stale)) + "\n  ".join(stale)
assert k["this_generator"] + k["unchanged"] > 0, k
' "$tmp/check.json"
finish
