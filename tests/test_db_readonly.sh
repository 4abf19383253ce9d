#!/bin/sh
# Read-only commands leave nothing behind (issue 27, item 2), with users the test makes (it
# needs root, as CI runs it, to act as them: without root it exits 77, saying so). Every
# database lies in a directory every user may write, so that a reader could create files
# there; after each command the directory is listed (names, sizes, times to the nanosecond,
# owners, modes, inodes) and must be exactly as before.
#  1. user A's WAL database without a log (as a closed tune leaves it): user B's query best,
#     query runs, export, db check and db merge (its input) read it and create nothing;
#  2. the -wal and -shm another user's plain SQLite reader leaves (an older fdtune did the
#     same): B still reads without touching them; A's next tune is refused, naming them
#     and their owner (it was "attempt to write a readonly database"), and the file is left
#     as it is;
#  3. a log with changes and no -shm: reading would create the -shm, so a reader is refused
#     with what to do, nothing created; with the -shm there, B reads the logged changes
#     and writes nothing.
# Usage: test_db_readonly.sh FDTUNE SOURCE_DIR. Prints every failed check; exit 1 when any failed.
set -u
fdtune=$1
src=$2
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "skipped: acting as other users needs root and setpriv (CI runs as root)"
    exit 77
fi
# an interpreter every user may run (a root-only pyenv shim would not do)
pyx=/usr/bin/python3
[ -x "$pyx" ] || pyx=$(command -v python3)
rec=$src/tests/data/h100-replay.db
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-db-readonly.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$src/tests/testutil.sh"
export FDTUNE_CACHE="$tmp/cache" FDTUNE_SYSTEM_DB=
chmod 755 "$tmp"
mkdir -m 777 "$tmp/shared" "$tmp/res"
db=$tmp/shared/team.db
B=4242 # user B: a uid without a name, as on many clusters
sim="--simulate-from $rec --R 4 --grid 512^3 --strategy exhaustive --budget 4"

as() { # UID ARGS...: ARGS as that user (group the same number; nobody's is nogroup)
    u=$1
    shift
    g=$u
    [ "$u" = nobody ] && g=nogroup
    setpriv --reuid="$u" --regid="$g" --clear-groups "$@"
}
run_as() { # UID NAME EXPECTED_STATUS ARGS...: fdtune ARGS as UID, outputs in $tmp/res/
    u=$1 name=$2 want=$3
    shift 3
    rc=0
    as "$u" "$fdtune" "$@" >"$tmp/res/stdout" 2>"$tmp/res/stderr" || rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$name: exit status $rc, expected $want"
        tail -3 "$tmp/res/stderr" | sed 's/^/    stderr: /' >&2
    fi
}
listing() { # DIR: every file with what a change would show
    for f in "$1"/* "$1"/.[!.]*; do
        [ -e "$f" ] && stat -c '%n %s %y %z %U %a %i' "$f"
    done
}
same_listing() { # NAME BEFORE_FILE: the shared directory is as it was
    listing "$tmp/shared" >"$tmp/after"
    if ! cmp -s "$2" "$tmp/after"; then
        fail "$1: the directory changed"
        diff "$2" "$tmp/after" | sed 's/^/    /' >&2
    fi
}
readers() { # UID WHAT: every read-only command as UID, each leaving the directory as it was
    listing "$tmp/shared" >"$tmp/before"
    run_as "$1" "$2: query best" 0 query best --db "$db"
    same_listing "$2: query best" "$tmp/before"
    run_as "$1" "$2: query runs" 0 query runs --db "$db"
    same_listing "$2: query runs" "$tmp/before"
    run_as "$1" "$2: export" 0 export --gpu sm_90 --db "$db" -o "$tmp/res/tuned.h"
    same_listing "$2: export" "$tmp/before"
    run_as "$1" "$2: db check" 0 db check "$db"
    same_listing "$2: db check" "$tmp/before"
    rm -f "$tmp/res/merged.db"
    run_as "$1" "$2: db merge of it" 0 db merge -o "$tmp/res/merged.db" "$db"
    same_listing "$2: db merge of it" "$tmp/before"
}

# ---------------------------------------------------------------- 1. a WAL file, no log
run "A's tune" 0 $sim --op d2x --db "$db"
run "A's second tune" 0 $sim --op d2y --db "$db"
[ "$(od -An -tu1 -j18 -N2 "$db" | tr -s ' ')" = " 2 2" ] || fail "the tuned file is not in WAL mode"
[ ! -e "$db-wal" ] && [ ! -e "$db-shm" ] || fail "a closed tune left its log"
readers nobody "B (nobody) on A's file"
readers "$B" "B (uid $B) on A's file"

# ---------------------------------------------------------------- 2. another user's leftovers
chown nobody:nogroup "$db"
as "$B" "$pyx" -c '
import sqlite3, sys
c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
assert c.execute("select count(*) from runs").fetchone()[0] == 2
' "$db" || fail "a plain SQLite reader as uid $B"
[ -e "$db-wal" ] && [ -e "$db-shm" ] || fail "a plain SQLite reader left no -wal and -shm"
readers nobody "A (nobody) beside uid $B's -wal and -shm"
sum=$(sha256sum <"$db")
listing "$tmp/shared" >"$tmp/before"
run_as nobody "A's tune beside uid $B's -wal and -shm" 4 $sim --op d2z --db "$db"
expect_in "the refusal names the files" "$tmp/res/stderr" "cannot write $db-wal and $db-shm"
expect_in "the refusal names their owner" "$tmp/res/stderr" "belong to uid $B"
expect_in "the refusal says what to do" "$tmp/res/stderr" "they hold nothing: remove them"
expect_in "the refusal: left as it is" "$tmp/res/stderr" "the file was left as it is"
[ "$(sha256sum <"$db")" = "$sum" ] || fail "the refused tune changed the file"
same_listing "A's refused tune" "$tmp/before"
rm -f "$db-wal" "$db-shm"
run_as nobody "A's tune once they are gone" 0 $sim --op d2z --db "$db"

# ---------------------------------------------------------------- 3. a log with changes
# A writer's log, copied while it is open (its changes not yet checkpointed into the file)
"$pyx" -c '
import shutil, sqlite3, sys
db, copy = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db)
c.execute("pragma wal_autocheckpoint = 0")
c.execute("insert into metadata values (?, ?)", ("logged", "yes"))
c.commit()
for suffix in ("", "-wal", "-shm"):
    shutil.copyfile(db + suffix, copy + suffix)
c.close()
' "$db" "$tmp/shared/logged.db" || fail "writing a log"
chown nobody:nogroup "$tmp/shared"/logged.db*
shm=$tmp/shared/logged.db-shm
mv "$shm" "$tmp/saved-shm"
[ -s "$tmp/shared/logged.db-wal" ] || fail "the copied log is empty"
listing "$tmp/shared" >"$tmp/before"
for cmd in "query best --db" "db check"; do
    # shellcheck disable=SC2086
    run_as "$B" "a log without its index: $cmd" 4 $cmd "$tmp/shared/logged.db"
    expect_in "$cmd: says why" "$tmp/res/stderr" "needs the index $shm, which a read-only command does not create"
    expect_in "$cmd: says what to do" "$tmp/res/stderr" "open it for writing once"
    same_listing "a log without its index: $cmd" "$tmp/before"
done
cp -p "$tmp/saved-shm" "$shm"
chown nobody:nogroup "$shm"
listing "$tmp/shared" >"$tmp/before"
run_as "$B" "a log with its index: db check" 0 db check --json "$tmp/shared/logged.db"
expect_in "the logged change is read" "$tmp/res/stdout" '"logged": "yes"'
same_listing "a log with its index: db check" "$tmp/before"
run_as "$B" "a log with its index: query best" 0 query best --db "$tmp/shared/logged.db"
same_listing "a log with its index: query best" "$tmp/before"

finish
