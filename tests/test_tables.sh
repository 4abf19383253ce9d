#!/bin/sh
# Tables on terminals of 80 and 120 columns (issue 27, item 8): the fdtune binary given as $1,
# the source tree as $2, no GPU needed. `query best --gpu H200 --R 4 --op lap` from the
# shipped system database and the dry run `tune --dry-run --gpu H100 --R 4 --grid 512^3
# --op lap` run on a pseudo-terminal (script) with COLUMNS=80 and 120; their JSON is the
# truth the tables are checked against:
#  - every line fits the terminal;
#  - what identifies a row and its answer is whole: the problem, GB/s and the fraction of
#    copy (or of peak); nothing of it is left out;
#  - rows that differ look different: no two configs shown alike (the dry run's ranks 1 to 8
#    once showed the same cut config), and a cut config shows only items of its own config
#    (what every row shares is said below the table, and is in every row's config).
# Every failed check is printed; the exit status is 1 when any failed, 77 without script.
set -eu

fdtune=${1:?usage: test_tables.sh PATH/TO/fdtune SOURCE_DIR}
src=${2:?usage: test_tables.sh PATH/TO/fdtune SOURCE_DIR}

if ! script -qec true /dev/null >/dev/null 2>&1; then
    echo "test_tables: no pty (script from util-linux): skipped" >&2
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-tables.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export HOME="$tmp" # no database of the user's: the system database answers
export FDTUNE_SYSTEM_DB="$src/share/fdtune/system.db"
export FDTUNE_CACHE=
unset FDTUNE_DB || true
failed=0
checks=0

query="query best --gpu H200 --R 4 --op lap"
dry="tune --dry-run --gpu H100 --R 4 --grid 512^3 --op lap"
"$fdtune" $query --json >"$tmp/query.json" 2>/dev/null
"$fdtune" $dry --json >"$tmp/dry.json"

for cols in 80 120; do
    COLUMNS=$cols script -qec "'$fdtune' $query" /dev/null >"$tmp/query.$cols" 2>&1 || true
    COLUMNS=$cols script -qec "'$fdtune' $dry" /dev/null >"$tmp/dry.$cols" 2>&1 || true
    for what in query dry; do
        checks=$((checks + 1))
        python3 - "$tmp/$what.$cols" "$tmp/$what.json" "$cols" "$what" <<'EOF' || { failed=$((failed + 1)); echo "FAIL: $what at $cols columns" >&2; }
import json, re, sys
path, truth, cols, what = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).rstrip("\r\n") for l in open(path, encoding="utf-8")]
head = next(i for i, l in enumerate(lines) if re.match(r"^\S", l) and "config" in l and "GB/s" in l)
rows, notes = [], []
for l in lines[head + 1:]:
    if l.startswith("(") or (notes and re.match(r"^ \S", l)):
        notes.append(l)
    elif l.strip() and not notes and not l.startswith("fdtune") and not l.startswith("  ("):
        rows.append(l)
    else:
        break
table = [lines[head]] + rows + notes
too_wide = [l for l in table if len(l) > cols]
assert not too_wide, "lines wider than %d: %s" % (cols, too_wide)
split = lambda l: re.split(r" {2,}", l.strip())
labels = split(lines[head])
cells = [dict(zip(labels, split(r))) for r in rows]
assert all(len(split(r)) == len(labels) for r in rows), (labels, rows)
note = " ".join(n.strip() for n in notes)
doc = json.load(open(truth))
if what == "query":
    want = doc["results"]
    gbs, frac, fracfmt = "GB/s", "of copy", "frac_copy"
    assert "problem" in labels, labels
    for c, w in zip(cells, want):
        problem = "%s R=%d %s %dx%dx%d" % (w["op"], w["R"], w["precision"], w["nx"], w["ny"], w["nz"])
        assert c["problem"] == problem, (c["problem"], problem)
else:
    want = doc["problems"][0]["ranking"]
    gbs, frac, fracfmt = "pred GB/s", "of peak", None
    assert [c["rank"] for c in cells] == [str(i + 1) for i in range(len(want))], cells
assert len(cells) == len(want), (len(cells), len(want))
for c, w in zip(cells, want):
    g = w["gbs"] if what == "query" else w["predicted_gbs"]
    assert c[gbs] == "%.0f" % g, (c[gbs], g)
    if fracfmt:
        assert c[frac] == "%.3f" % w[fracfmt], (c[frac], w[fracfmt])
    else:
        assert re.match(r"^\d\.\d{3}$", c[frac]), c[frac]
# the configs: distinct, and each shows only items of its own config
shown = [c["config"] for c in cells]
assert len(set(shown)) == len(shown), "configs that differ look the same: %s" % shown
m = re.search(r"in config: ([^;)]*)", note)
common = m.group(1).split(",") if m else []
for c, w in zip(shown, want):
    full = w["config_full"].split(",")
    for it in re.split(r"[,\u2026]", c):
        assert not it or it in full or any(f.startswith(it) for f in full), (it, w["config_full"])
    assert all(x in full for x in common), (common, w["config_full"])
for key in ("problem", "config", gbs, frac):
    assert not re.search(r"left out[^)]*\b%s\b" % re.escape(key), note), note
EOF
    done
done
echo "test_tables: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
