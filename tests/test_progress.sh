#!/bin/sh
# Long work is visible (issue 16, item 9): the compile phase of a tune shows its progress on a
# terminal, "compiling K/N candidates" rewritten in place on stderr as each compilation of the
# batch ends, up to N/N; where stderr is no terminal (a log), no such lines, but one "compiled
# N (...)" line per batch as before. A simulated GPU (tests/data/h100-replay.db) answers; the
# terminal is a pseudo-terminal (Python's pty module).
# Usage: test_progress.sh FDTUNE SOURCE_DIR. Prints every failed check; exit 1 when any did.
set -u
fdtune=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-progress.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$src/tests/testutil.sh"
export FDTUNE_CACHE="$tmp/cache"
export FDTUNE_SYSTEM_DB=
args="tune --simulate-from $src/tests/data/h100-replay.db --R 4 --grid 512^3 --op d2x
      --strategy exhaustive --budget 20 --jobs 2"

# on a terminal
python3 - "$fdtune" "$tmp/tty.db" $args >"$tmp/tty.txt" <<'PY' || fail "tune on a terminal: exit status"
import os, pty, subprocess, sys
fdtune, db, args = sys.argv[1], sys.argv[2], sys.argv[3:]
m, s = pty.openpty()
p = subprocess.Popen([fdtune] + args + ["--db", db], stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=s)
os.close(s)
buf = b""
while True:
    try:
        d = os.read(m, 65536)
    except OSError:
        break
    if not d:
        break
    buf += d
sys.stdout.write(buf.decode(errors="replace"))
sys.exit(p.wait())
PY
python3 - "$tmp/tty.txt" <<'PY' || fail "terminal: compile progress in place"
import re, sys
t = open(sys.argv[1], newline="").read()
steps = re.findall(r"\r\x1b\[Kd2x R=4 f32 512x512x512: compiling (\d+)/(\d+) candidates", t)
assert steps, "no compile progress on the terminal:\n" + t[:400]
batches = {}
for k, n in steps:
    batches.setdefault(int(n), []).append(int(k))
big = max(batches)
assert big >= 2, batches
ks = batches[big]
assert ks[:big + 1] == list(range(big + 1)), ks  # a batch counts up, one by one, to N/N
assert "compiled " not in t, "the log line on a terminal"
PY

# in a log
"$fdtune" $args --db "$tmp/log.db" >/dev/null 2>"$tmp/log.txt" || fail "tune into a log: exit status"
if grep -q "compiling" "$tmp/log.txt"; then fail "log: compile progress lines in a log"; fi
grep -q "d2x R=4 f32 512x512x512: compiled " "$tmp/log.txt" || fail "log: no 'compiled N' line"

finish
