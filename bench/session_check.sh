#!/usr/bin/env bash
# Checks on a GPU machine the paths that moved from the CLI into the library with the tuning
# session ("one home per concept", part 4): tune (session, fdt_tune_run, resume, time limit,
# Ctrl-C once and twice), retune (fdt_retune_run: re-measure, forced re-search, the lock),
# bench (fdt_bench_run) and devices. Each check prints PASS or FAIL with what it saw; the
# exit status is the number of failures. With FDTUNE_BASE (a binary built at the commit
# before the change, 86ca437) the same commands also run with it, and the outputs of both are
# compared with times, bandwidths and paths masked: the exhaustive strategy measures the same
# configs in the same order, so the logs should differ at most where noise picked another
# best config.
# Without a GPU it says so and exits 77.
# Usage: bench/session_check.sh   Environment: FDTUNE (default build/fdtune), FDTUNE_BASE,
# OUTDIR (default bench/results/session).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
OUTDIR=${OUTDIR:-$root/bench/results/session}
export FDTUNE_RECIPES=${FDTUNE_RECIPES:-$root/recipes} NO_COLOR=1
failures=0
check() { # NAME CONDITION-STATUS DETAIL
    if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}
# json FILE EXPR: EXPR over the document d (prints 1 when the file is not JSON)
json() { python3 -c "import json,sys
try: d = json.load(open(sys.argv[1]))
except ValueError: print(1); sys.exit()
print($2)" "$1"; }

# run BIN DIR: the command sequence, every output in DIR (NAME.out, NAME.err, NAME.rc).
run() {
    local bin=$1 dir=$2 db=$2/t.db
    rm -rf "$dir"; mkdir -p "$dir"
    x() { local name=$1; shift; "$@" >"$dir/$name.out" 2>"$dir/$name.err"; echo $? >"$dir/$name.rc"; }
    x devices "$bin" devices
    x tune1 "$bin" --gpu auto --R 4 --grid 128^3 --op d2x,lap --strategy exhaustive \
        --budget 12 --seed 3 --db "$db" --json
    x tune2 "$bin" --gpu auto --R 4 --grid 128^3 --op d2x,lap --strategy exhaustive \
        --budget 12 --seed 3 --db "$db" --json
    x tune-time "$bin" --gpu auto --R 4 --grid 128^3 --op d2y --strategy exhaustive \
        --time 5s --force --db "$db"
    # one SIGINT: stops after the evaluation in flight, prints the summary, exits 130
    "$bin" --gpu auto --R 4 --grid 256^3 --op lap --strategy exhaustive --force --db "$db" \
        >"$dir/int1.out" 2>"$dir/int1.err" &
    local pid=$!; sleep 15; kill -INT $pid; wait $pid; echo $? >"$dir/int1.rc"
    # two: the second one kills (no summary). On a grid the cache holds nothing for yet (so
    # the run cannot finish in seconds from compiled kernels, as 256^3 did on an H100), once
    # it measures (a progress line, at most 60 s)
    "$bin" --gpu auto --R 4 --grid 320^3 --op lap --strategy exhaustive --force --db "$db" \
        >"$dir/int2.out" 2>"$dir/int2.err" &
    pid=$!
    for _ in $(seq 120); do grep -q '\[' "$dir/int2.err" 2>/dev/null && break; sleep 0.5; done
    kill -INT $pid; sleep 0.05; kill -INT $pid; wait $pid; echo $? >"$dir/int2.rc"
    x retune1 "$bin" retune --db "$db" --op d2x,lap --json
    x query-runs "$bin" query runs --db "$db" --csv
    x retune2 "$bin" retune --db "$db" --op d2x --force-env-change --budget 5 --strategy exhaustive
    x bench "$bin" bench --op lap --R 4 --grid 61x37x29 --probe --seed 5 \
        --config bx=32,by=4,nw=8,vec=4,align=32 --config bx=64,by=2 --config bx=64,by=4,fault=coef
    x bench-json "$bin" bench --op d2x --R 2 --grid 64^3 --probe --seed 5 --json --config bx=64
}

mkdir -p "$OUTDIR"
if "$FDTUNE" devices --no-bandwidth 2>&1 | grep -q '^No GPU is visible'; then
    echo "SKIP: no GPU visible (session_check needs one)"
    exit 77
fi
run "$FDTUNE" "$OUTDIR/new"
d=$OUTDIR/new
check "tune exits 0" "$(cat $d/tune1.rc)" "exit $(cat $d/tune1.rc): $(tail -2 $d/tune1.err)"
# the budget counts the baseline when the recipe's default is in the space, else not
check "tune: 2 problems, 12 or 13 tried each (budget 12), each with a best" \
    "$(json $d/tune1.out "0 if len(d['problems']) == 2 and all(p['tried'] in (12, 13) and 'best_config' in p for p in d['problems']) else 1" 2>&1)" \
    "$(head -c 600 $d/tune1.out)"
check "rerun: resumes what the first measured (11 or more), new runs" \
    "$(python3 -c "import json,sys
try: a, b = (json.load(open(f))['problems'] for f in sys.argv[1:])
except ValueError: print(1); sys.exit()
print(0 if len(b) == 2 and all(y['resumed'] >= 11 and y['run'] != x['run'] and y['tried'] <= 13 for x, y in zip(a, b)) else 1)" $d/tune1.out $d/tune2.out)" \
    "$(head -c 600 $d/tune2.out)"
check "--time 5s stops on the time limit" \
    "$(grep -q 'stopped: time limit' $d/tune-time.out; echo $?)" "$(tail -3 $d/tune-time.out)"
check "one SIGINT: exit 130 with the summary" \
    "$([ "$(cat $d/int1.rc)" = 130 ] && grep -q 'stopped: interrupted' $d/int1.out; echo $?)" \
    "exit $(cat $d/int1.rc), stdout: $(tail -2 $d/int1.out)"
check "two SIGINTs: killed, no summary" \
    "$([ "$(cat $d/int2.rc)" = 130 ] && [ ! -s $d/int2.out ]; echo $?)" \
    "exit $(cat $d/int2.rc), stdout: $(head -2 $d/int2.out)"
check "time limit, one SIGINT and the killed run (marked by retune): 3 interrupted runs" \
    "$([ "$(grep -c ',interrupted,' $d/query-runs.out)" = 3 ]; echo $?)" "$(cat $d/query-runs.out)"
check "retune: exit 0 or 1, 2 or more problems checked, every GPU used" \
    "$(case $(cat $d/retune1.rc) in 0|1) json $d/retune1.out "0 if d['summary']['checked'] >= 2 and not any('error' in g for g in d['gpus']) else 1" ;; *) echo 1 ;; esac)" \
    "exit $(cat $d/retune1.rc): $(tail -3 $d/retune1.err)"
check "forced retune re-searches (exit 0 or 1)" \
    "$(case $(cat $d/retune2.rc) in 0|1) grep -q 'Re-searched' $d/retune2.out; echo $? ;; *) echo 1 ;; esac)" \
    "exit $(cat $d/retune2.rc): $(tail -5 $d/retune2.out)"
check "bench: the faulty config is wrong (exit 1), the others ok" \
    "$([ "$(cat $d/bench.rc)" = 1 ] && [ "$(grep -c ' ok ' $d/bench.out)" = 2 ] && grep -q wrong $d/bench.out; echo $?)" \
    "exit $(cat $d/bench.rc): $(cat $d/bench.out)"
check "bench --json: one ok result, seed 5" \
    "$(json $d/bench-json.out "0 if d['seed'] == 5 and [r['status'] for r in d['results']] == ['ok'] else 1" 2>&1)" \
    "$(head -c 400 $d/bench-json.out)"

if [ -n "${FDTUNE_BASE:-}" ]; then
    run "$FDTUNE_BASE" "$OUTDIR/base"
    mask() {
        sed -E -e "s#$OUTDIR/(new|base)#OUT#g" -e 's/[0-9]+\.[0-9]+/F/g' \
            -e 's/[0-9]+ (GB\/s|MB|GiB|MiB)/N \1/g' -e 's/"(wall_s|compile_s|setup_s|copy_gbs|best_gbs|best_ms|baseline_gbs|speedup|best_frac_copy|gbs|frac_copy)": [^,}]*/"\1": X/g' \
            -e 's/20[0-9-]+[T ][0-9:.]+Z?/TIME/g' -e 's/ +/ /g' "$1"
    }
    same=0
    for f in "$OUTDIR"/new/*.out "$OUTDIR"/new/*.err "$OUTDIR"/new/*.rc; do
        b=$OUTDIR/base/$(basename "$f")
        if ! diff <(mask "$f") <(mask "$b") >"$f.diff"; then
            echo "DIFFERS from the base binary: $(basename "$f") (see $f.diff)"; same=1
        else
            rm -f "$f.diff"
        fi
    done
    echo "base comparison: $([ $same = 0 ] && echo 'no difference' || echo 'differences listed above')"
fi
echo "session_check: $failures failure(s)"
exit "$failures"
