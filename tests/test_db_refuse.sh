#!/bin/sh
# Refuse before writing (issue 27, items 3, 12 and 13), on files the test makes and damages:
# a command that cannot do its job leaves the database byte for byte as it was (sha256) and
# creates no -wal, -shm or -journal beside it, and says "left as it is" only then.
#  1. a copy of the shipped system database (real GPUs): a simulated tune into it is refused
#     before it marks a run or switches the journal; a damaged copy as the output of db
#     merge is refused before the merge switches it to WAL or bumps its change counter;
#  2. stored sizes out of bounds (an older file, v5, written outside fdtune): an ny of
#     9223372036854775807 and a radius of 4294967300 are reported by db check (exit 1) and
#     refused by query, export, db merge (as an input) and a tune (the migration to v6);
#  3. a corpus of damaged copies of a small database a simulated tune wrote (seeded, so the
#     same every run: bytes flipped in a page, a page zeroed, the file cut short): for each,
#     the read-only commands change nothing, and a simulated tune into it and a merge into
#     it either succeed or leave it as it was.
# Usage: test_db_refuse.sh FDTUNE SOURCE_DIR [COPIES]. Prints every failed check; exit 1 when any
# failed.
set -u
fdtune=$1
src=$2
copies=${3:-60}
rec=$src/tests/data/h100-replay.db
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-db-refuse.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$src/tests/testutil.sh"
export FDTUNE_CACHE="$tmp/cache" FDTUNE_SYSTEM_DB=
sim="--simulate-from $rec --R 4 --grid 512^3 --strategy exhaustive --budget 3"

sides() { # FILE: the files SQLite keeps beside it that are there
    for s in -wal -shm -journal; do [ -e "$1$s" ] && printf '%s ' "$s"; done
}
unchanged() { # NAME FILE SUM: FILE's sha256 is SUM and nothing lies beside it
    [ "$(sha256sum <"$2")" = "$3" ] || fail "$1: the file changed"
    [ -z "$(sides "$2")" ] || fail "$1: left $(sides "$2")beside the file"
}
refused() { # NAME FILE STATUS ARGS...: fdtune ARGS exits STATUS and leaves FILE as it was
    name=$1 file=$2 want=$3
    shift 3
    sum=$(sha256sum <"$file")
    run "$name" "$want" "$@"
    unchanged "$name" "$file" "$sum"
}

# ---------------------------------------------------------------- 1. the system database
sys=$tmp/system-copy.db
cp "$src/share/fdtune/system.db" "$sys"
refused "a simulated tune into the system database" "$sys" 2 $sim --op d2x --db "$sys"
expect_in "says why" "$tmp/err" "holds results of real GPUs"
expect_in "says it was left" "$tmp/err" "the file was left as it is"
run "a simulated tune" 0 $sim --op d2x --db "$tmp/base.db"
cp "$src/share/fdtune/system.db" "$sys"
py "damage pages of a copy" '
import sys
f = open(sys.argv[1], "r+b")
f.seek(4096 * 2)
f.write(bytes(4096 * 3))
' "$sys"
refused "db merge into a damaged system database" "$sys" 4 db merge -o "$sys" "$tmp/base.db"
expect_in "says why" "$tmp/err" "integrity problem"
expect_in "says it was left" "$tmp/err" "the file was left as it is"

# ---------------------------------------------------------------- 2. sizes out of bounds
for bad in "ny = 9223372036854775807" "radius = 4294967300"; do
    f=$tmp/bounds.db
    rm -f "$f" "$tmp/merged.db"
    cp "$tmp/base.db" "$f"
    py "an older file with $bad" '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for t in ("problems", "devices", "runs", "evaluations"):
    for k in ("insert", "update"):
        c.execute("drop trigger if exists %s_bounds_%s" % (t, k))
c.execute("update problems set " + sys.argv[2])
c.execute("pragma user_version = 5")
c.commit()
c.close()
' "$f" "$bad"
    refused "db check of $bad" "$f" 1 db check "$f"
    expect_in "db check names it" "$tmp/out" "$bad, outside"
    refused "query best of $bad" "$f" 4 query best --db "$f"
    expect_in "query names it" "$tmp/err" "$bad, outside"
    refused "export of $bad" "$f" 4 export --gpu sm_90 --db "$f" -o "$tmp/x.h"
    expect_in "export names it" "$tmp/err" "$bad, outside"
    refused "db merge of $bad" "$f" 4 db merge -o "$tmp/merged.db" "$f"
    expect_in "merge names it" "$tmp/err" "$bad, outside"
    [ -e "$tmp/merged.db" ] && fail "the refused merge created its output"
    refused "a tune into $bad" "$f" 4 $sim --op d2x --db "$f"
    expect_in "the tune names it" "$tmp/err" "$bad, outside"
done

# ---------------------------------------------------------------- 3. damaged copies
run "a second simulated tune" 0 $sim --op d2y --db "$tmp/base.db"
run "a shard to merge" 0 $sim --op d2z --db "$tmp/shard.db"
[ -z "$(sides "$tmp/base.db")" ] || fail "the closed tunes left $(sides "$tmp/base.db")"
size=$(stat -c %s "$tmp/base.db")
good=0 refusals=0 wrote=0 i=0
while [ "$i" -lt "$copies" ]; do
    m=$tmp/m$i.db
    "${PYTHON:-python3}" - "$tmp/base.db" "$m" "$i" <<'EOF' || fail "damage copy $i"
import random, shutil, sys
src, dst, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.copyfile(src, dst)
r = random.Random(seed)
data = bytearray(open(dst, "rb").read())
pages = len(data) // 4096
kind = seed % 3
if kind == 0:   # bytes flipped in one page
    p = r.randrange(pages)
    for _ in range(r.randint(1, 8)):
        data[p * 4096 + r.randrange(4096)] ^= 1 << r.randrange(8)
elif kind == 1: # one page (not the first) zeroed
    p = r.randrange(1, pages)
    data[p * 4096:(p + 1) * 4096] = bytes(4096)
else:           # cut short
    data = data[:r.randrange(1, pages) * 4096 - r.choice((0, 0, 100))]
open(dst, "wb").write(data)
EOF
    sum=$(sha256sum <"$m")
    # read-only: never a change, whatever they say
    for cmd in "query best --db $m" "query runs --db $m" "db check $m" \
        "export --gpu sm_90 --db $m -o $tmp/x.h"; do
        rc=0
        # shellcheck disable=SC2086
        "$fdtune" $cmd >"$tmp/out" 2>"$tmp/err" || rc=$?
        [ "$rc" -lt 128 ] || fail "copy $i: $cmd: died (status $rc)"
        unchanged "copy $i: $cmd (status $rc)" "$m" "$sum"
    done
    # writers: done, or refused with the file as it was
    for w in tune merge; do
        cp "$m" "$m.w"
        rm -f "$m.w-wal" "$m.w-shm" "$m.w-journal"
        rc=0
        if [ "$w" = tune ]; then
            "$fdtune" $sim --op d2x --db "$m.w" >"$tmp/out" 2>"$tmp/err" || rc=$?
        else
            "$fdtune" db merge -o "$m.w" "$tmp/shard.db" >"$tmp/out" 2>"$tmp/err" || rc=$?
        fi
        [ "$rc" -lt 128 ] || fail "copy $i: $w: died (status $rc)"
        if [ "$rc" -eq 0 ]; then
            wrote=$((wrote + 1))
        else
            refusals=$((refusals + 1))
            unchanged "copy $i: refused $w (status $rc: $(tail -1 "$tmp/err" | cut -c1-160))" \
                "$m.w" "$sum"
        fi
        if grep -q "left as it is" "$tmp/err" && [ "$(sha256sum <"$m.w")" != "$sum" ]; then
            fail "copy $i: $w says 'left as it is' of a changed file"
        fi
        rm -f "$m.w" "$m.w-wal" "$m.w-shm" "$m.w-journal"
    done
    [ "$(stat -c %s "$m")" -eq "$size" ] && good=$((good + 1))
    rm -f "$m"
    i=$((i + 1))
done
echo "damaged copies: $copies ($good of the full size); writers: $refusals refused, $wrote done"
[ "$refusals" -gt 0 ] || fail "no damaged copy was refused: the corpus tests nothing"

finish
