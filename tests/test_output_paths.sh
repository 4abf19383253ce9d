#!/bin/sh
# The output rule (issue 27, items 1 and 9) through the fdtune binary given as $1, the source
# tree as $2, no GPU needed: every writer of a path the user names (query, tune and bench's
# --export-json/--export-csv, export -o, plan -o, db merge -o) against nodes this test makes
# in a temporary directory:
#  - a regular file is replaced (its mode kept), a new path created;
#  - a symbolic link (absolute, relative to its own directory, a chain, dangling) stays a
#    link and its target is written (a dangling link's target is created);
#  - a character device (mknod copies of /dev/null and /dev/full, as root) and a FIFO with a
#    reader are written in place and stay what they were; /dev/stdout is the command's stdout
#    (tried once a link of the test's own to /proc/self/fd/1 was written through: a broken
#    binary run as root must not replace the machine's /dev/stdout);
#  - a write error (ENOSPC on the /dev/full copy) is exit 4 with the reason;
#  - a directory is refused (exit 4) and left as it was;
#  - db merge -o refuses a device, a FIFO and /dev/stdout (SQLite needs a file) and follows
#    a link;
#  - an ordinary user (nobody, when this runs as root) writes -o /dev/null and
#    --export-csv /dev/stdout;
#  - stdout on a full device: one message with the write's reason, exit 4.
# Every failed check is printed; the exit status is 1 when any failed.
set -eu

fdtune=${1:?usage: test_output_paths.sh PATH/TO/fdtune SOURCE_DIR}
src=${2:?usage: test_output_paths.sh PATH/TO/fdtune SOURCE_DIR}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-out.XXXXXX")
reader=
trap '[ -z "$reader" ] || kill "$reader" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
out=$tmp/stdout
err=$tmp/stderr
failed=0
checks=0
export HOME="$tmp/home" # no default database: the system database answers
export FDTUNE_SYSTEM_DB="$src/share/fdtune/system.db"
export FDTUNE_CACHE=
unset FDTUNE_DB COLUMNS || true

. "$(dirname "$0")/clitest.sh"

# check NAME CONDITION...: one check, failed when the test command fails
check() {
    name=$1
    shift
    checks=$((checks + 1))
    "$@" || fail "$name"
}
# kind PATH: file type and device numbers as stat says, links not followed
kind() { stat -c '%F %t:%T' "$1"; }

q="query best --gpu H200 --R 4 --op lap"
cd "$tmp"
mkdir files links

# ---------------------------------------------------------------- regular files, new paths
echo old >files/kept.csv
chmod 640 files/kept.csv
run $q --export-csv files/kept.csv
expect_status "--export-csv onto a file" 0
expect_in "--export-csv onto a file: replaced" files/kept.csv "config_full"
check "--export-csv onto a file: its mode kept" [ "$(stat -c %a files/kept.csv)" = 640 ]
check "--export-csv onto a file: no temporary file left" [ "$(ls files)" = kept.csv ]
run $q --export-json files/new.json
expect_status "--export-json to a new path" 0
expect_in "--export-json to a new path" files/new.json '"schema": 1'

# ---------------------------------------------------------------- symbolic links
echo old >files/abs.csv
ln -s "$tmp/files/abs.csv" links/abs
echo old >files/rel.csv
ln -s ../files/rel.csv links/rel # relative to the link's directory, not to the working one
ln -s rel links/chain1
ln -s chain1 links/chain2
ln -s ../files/created.csv links/dangling
for l in abs rel chain2 dangling; do
    run $q --export-csv "links/$l"
    expect_status "--export-csv onto a link ($l)" 0
    check "--export-csv onto a link ($l): still a link" [ -L "links/$l" ]
    expect_in "--export-csv onto a link ($l): its target written" "links/$l" "config_full"
done
check "a chain of links: the last target written" grep -q config_full files/rel.csv
check "a dangling link: its target created" [ -f files/created.csv ]
check "links: no temporary file left" [ "$(ls files | wc -l)" -eq 5 ]
ln -s loop2 links/loop1
ln -s loop1 links/loop2
run $q --export-json links/loop1
expect_status "--export-json onto a loop of links" 4
expect_in "--export-json onto a loop of links" "$err" "Too many levels of symbolic links"

# ---------------------------------------------------------------- a directory
mkdir adir
run $q --export-json adir
expect_status "--export-json onto a directory" 4
expect_in "--export-json onto a directory: says what it is" "$err" "adir: a directory"
check "--export-json onto a directory: left as it was" [ -d adir -a -z "$(ls -A adir)" ]
run export --gpu H100 -o adir
expect_status "export -o a directory" 4
expect_in "export -o a directory" "$err" "adir: a directory"

# ---------------------------------------------------------------- a FIFO with a reader
mkfifo fifo
timeout 60 cat fifo >fifo.out &
reader=$!
run $q --export-csv fifo
expect_status "--export-csv into a FIFO" 0
rc=0
wait "$reader" || rc=$?
reader=
check "--export-csv into a FIFO: the reader got the CSV (reader's status $rc)" grep -q config_full fifo.out
check "--export-csv into a FIFO: still a FIFO" [ -p fifo ]

# ---------------------------------------------------------------- /dev/stdout
# First a link of this test's own to /proc/self/fd/1: a binary that replaced links would
# replace the machine's /dev/stdout (as root), so the real one is tried only once this
# link was written through.
ln -s /proc/self/fd/1 links/stdout
run $q --export-csv links/stdout
expect_status "--export-csv onto a link to /proc/self/fd/1" 0
expect_in "--export-csv onto a link to /proc/self/fd/1: the CSV on stdout" "$out" "config_full"
check "--export-csv onto a link to /proc/self/fd/1: still a link" [ -L links/stdout ]
if [ -L links/stdout ] && grep -q config_full "$out"; then
    run $q --export-csv /dev/stdout
    expect_status "--export-csv /dev/stdout" 0
    expect_in "--export-csv /dev/stdout: the table" "$out" "median ms"
    expect_in "--export-csv /dev/stdout: the CSV after it" "$out" "config_full"
    run export --gpu H100 -o /dev/stdout
    expect_status "export -o /dev/stdout" 0
    expect_in "export -o /dev/stdout: the header on stdout" "$out" "#define"
    run plan --R 4 --grid 512^3 -o /dev/stdout
    expect_status "plan -o /dev/stdout" 0
    expect_in "plan -o /dev/stdout: the tasks on stdout" "$out" '"task"'
    run db merge -o /dev/stdout "$FDTUNE_SYSTEM_DB"
    expect_status "db merge -o /dev/stdout" 4
    expect_in "db merge -o /dev/stdout" "$err" "cannot hold a database"
    check "/dev/stdout is still a link" [ -L /dev/stdout ]
else
    echo "test_output_paths: a link to /proc/self/fd/1 was not written through: the real /dev/stdout is left alone" >&2
fi

# ---------------------------------------------------------------- character devices
if [ "$(id -u)" -eq 0 ] && mknod null c 1 3 2>/dev/null; then
    mknod full c 1 7
    null0=$(kind null) full0=$(kind full)
    for w in "$q --export-json null" "$q --export-csv null" "tune --dry-run --gpu H100 --R 2 --grid 128^3 --op d2x --export-json null" "export --gpu H100 -o null" "plan --R 4 --grid 512^3 -o null"; do
        run $w
        expect_status "$w" 0
        check "$w: the node stays a character device 1:3" [ "$(kind null)" = "$null0" ]
    done
    for w in "$q --export-json full" "$q --export-csv full" "tune --dry-run --gpu H100 --R 2 --grid 128^3 --op d2x --export-csv full" "export --gpu H100 -o full" "plan --R 4 --grid 512^3 -o full"; do
        run $w
        expect_status "$w" 4
        expect_in "$w: the reason" "$err" "full: No space left on device"
        check "$w: the node stays a character device 1:7" [ "$(kind full)" = "$full0" ]
    done
    mkdir recipes # a path that names a recipe is still an output path: exit 4, not 2
    mknod recipes/full c 1 7
    run plan --R 4 --grid 512^3 -o recipes/full
    expect_status "plan -o recipes/full" 4
    ln -s ../null links/null
    run $q --export-csv links/null
    expect_status "--export-csv onto a link to a device" 0
    check "a link to a device: the link and the device stay" [ -L links/null -a "$(kind null)" = "$null0" ]
    # stdout on a full device: one message, the write's own reason (issue 27 item 9)
    mknod stdout.full c 1 7
    for j in "" --json; do
        rc=0
        "$fdtune" $q $j >stdout.full 2>"$err" || rc=$?
        expect_status "query best $j >/dev/full" 4
        expect_in "query best $j >/dev/full: the reason" "$err" "fdtune: error: write standard output: No space left on device"
        expect_not_in "query best $j >/dev/full: no stale errno" "$err" "Inappropriate ioctl"
        check "query best $j >/dev/full: said once" [ "$(grep -c error "$err")" -eq 1 ]
    done
    rc=0 # the backends' libraries are loaded: their exit handlers flush stdout too
    "$fdtune" --version >stdout.full 2>"$err" || rc=$?
    expect_status "--version >/dev/full" 4
    expect_in "--version >/dev/full: the reason" "$err" "write standard output: No space left on device"
    run db merge -o null "$FDTUNE_SYSTEM_DB"
    expect_status "db merge -o a character device" 4
    expect_in "db merge -o a character device" "$err" "null: a character device cannot hold a database"
    check "db merge -o a character device: it stays one" [ "$(kind null)" = "$null0" ]
else
    echo "test_output_paths: not root, or mknod not allowed here: the device nodes are skipped" >&2
fi

# ---------------------------------------------------------------- db merge -o
run db merge -o fifo "$FDTUNE_SYSTEM_DB"
expect_status "db merge -o a FIFO" 4
expect_in "db merge -o a FIFO" "$err" "fifo: a FIFO cannot hold a database"
check "db merge -o a FIFO: still a FIFO" [ -p fifo ]
run db merge -o adir "$FDTUNE_SYSTEM_DB"
expect_status "db merge -o a directory" 4
expect_in "db merge -o a directory" "$err" "adir: a directory"
ln -s ../files/merged.db links/merged
run db merge -o links/merged "$FDTUNE_SYSTEM_DB"
expect_status "db merge -o a dangling link" 0
check "db merge -o a link: still a link, its target the database" [ -L links/merged -a -s files/merged.db ]
check "db merge -o a link: no journal left beside the link" [ "$(ls links | grep -c merged)" -eq 1 ]

# ---------------------------------------------------------------- an ordinary user
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
    if command -v setpriv >/dev/null 2>&1; then
        as_nobody() { setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups "$@"; }
    else
        as_nobody() { su -s /bin/sh nobody -c '"$0" "$@"' "$@"; }
    fi
    # nobody may not reach the build tree: a copy of the binary and the database it reads
    mkdir nobody
    cp "$fdtune" nobody/fdtune
    cp "$FDTUNE_SYSTEM_DB" nobody/system.db
    chmod 755 "$tmp" nobody nobody/fdtune
    chmod 644 nobody/system.db
    for w in "export --gpu H100 -o /dev/null" "query best --gpu H100 --export-json /dev/null" \
        "query best --gpu H200 --R 4 --op lap --export-csv /dev/stdout"; do
        rc=0
        as_nobody env HOME=/nonexistent FDTUNE_SYSTEM_DB="$tmp/nobody/system.db" \
            "$tmp/nobody/fdtune" $w >"$out" 2>"$err" || rc=$?
        expect_status "as nobody: $w" 0
        expect_not_in "as nobody: $w" "$err" "Permission denied"
    done
    expect_in "as nobody: --export-csv /dev/stdout: the CSV on stdout" "$out" "config_full"
    check "as nobody: /dev/null is still a character device" [ -c /dev/null ]
fi

echo "test_output_paths: $checks checks, $failed failed"
[ "$failed" -eq 0 ]
