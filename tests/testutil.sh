# Shell helpers of the end-to-end tests that count their failures (sourced, not run): set
# fdtune (the binary) and tmp (a scratch directory) first; failed counts the failed checks,
# and finish ends the script with the verdict.
failed=0
fail() { # MESSAGE: one failed check
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}
run() { # NAME EXPECTED_STATUS ARGS...: fdtune ARGS, stdout in $tmp/out, stderr in $tmp/err
    name=$1 want=$2
    shift 2
    rc=0
    "$fdtune" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "$name: exit status $rc, expected $want"
        tail -5 "$tmp/err" | sed 's/^/    stderr: /' >&2
    fi
}
expect_in() { # NAME FILE TEXT
    grep -qF -- "$3" "$2" || { fail "$1: '$3' not in $(basename "$2")"; head -5 "$2" | sed 's/^/    /' >&2; }
}
py() { # NAME SCRIPT ARGS...: a Python check; its exit message is the failure
    name=$1 script=$2
    shift 2
    python3 -c "$script" "$@" || fail "$name"
}
finish() { # exit 1 when a check failed
    if [ "$failed" -ne 0 ]; then
        echo "$failed check(s) failed" >&2
        exit 1
    fi
    echo "all checks passed"
}
