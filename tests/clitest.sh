# Shared by the shell tests of the fdtune binary (sourced; the caller sets fdtune, out, err,
# failed=0 and checks=0): fail, run, expect_status, expect_in, expect_not_in.

fail() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# run ARGS...: runs fdtune, leaves the exit status in $rc, stdout in $out, stderr in $err.
run() {
    rc=0
    "$fdtune" "$@" >"$out" 2>"$err" || rc=$?
}

# expect NAME STATUS: the last run exited with STATUS.
expect_status() {
    checks=$((checks + 1))
    if [ "$rc" -ne "$2" ]; then
        fail "$1: exit status $rc, expected $2"
        sed 's/^/    stderr: /' "$err" | head -5 >&2
    fi
}

# expect_in NAME FILE TEXT: FILE (stdout or stderr of the last run) contains TEXT.
expect_in() {
    checks=$((checks + 1))
    if ! grep -qF -- "$3" "$2"; then
        fail "$1: '$3' not found in $(basename "$2")"
        sed 's/^/    /' "$2" | head -5 >&2
    fi
}

# expect_not_in NAME FILE TEXT: FILE does not contain TEXT.
expect_not_in() {
    checks=$((checks + 1))
    if grep -qF -- "$3" "$2"; then
        fail "$1: '$3' found in $(basename "$2")"
        grep -F -- "$3" "$2" | sed 's/^/    /' | head -3 >&2
    fi
}
