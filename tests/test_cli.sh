#!/bin/sh
# CLI test: the user-facing basics and errors of the fdtune binary given as $1. --version
# names fdtune, SQLite and Lua; --help works; an unknown command, a bad radius, a bad grid
# (zero, incomplete, negative, overflowing, garbage), an unknown operator and a bad config
# are usage errors (exit 2) with a message on stderr that names the problem and nothing on
# stdout; `gen` prints compilable source and, with --compile, the compiler's resource usage
# (for every compiler this build has, the offline clang for gfx940 and gfx942 included, with
# --disasm the disassembly) and a warning on stderr when the kernel spills registers to
# memory; a missing offline compiler, or one that does not know the target, is an
# operational error naming the target and the packages, and a target NVRTC does not take is
# a usage error naming those it takes; --op dwave and --absorb W[:S] go together in every
# command that takes a problem, and a bad layer is a usage error. Every failed check is
# printed; the exit status is 1 when any check failed. CTest runs it with FDTUNE_CACHE
# pointing into the build tree.
set -eu

fdtune=${1:?usage: test_cli.sh PATH/TO/fdtune}
[ -x "$fdtune" ] || { echo "test_cli: $fdtune is not an executable" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-test-cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
out=$tmp/stdout
err=$tmp/stderr
failed=0
checks=0

. "$(dirname "$0")/clitest.sh"

# expect_usage_error NAME TEXT ARGS...: exit 2, TEXT on stderr, nothing on stdout.
expect_usage_error() {
    name=$1 text=$2
    shift 2
    run "$@"
    expect_status "$name" 2
    expect_in "$name" "$err" "$text"
    checks=$((checks + 1))
    [ ! -s "$out" ] || fail "$name: a usage error printed on stdout"
}

# --- version, help, unknown command -------------------------------------------------
run --version
expect_status "--version" 0
expect_in "--version" "$out" "fdtune "
expect_in "--version" "$out" "SQLite "
expect_in "--version" "$out" "Lua "
cp "$out" "$tmp/version"

run --help
expect_status "--help" 0
expect_in "--help" "$out" "usage: fdtune"
expect_in "--help" "$out" "exit status"

run gen --help
expect_status "gen --help" 0
expect_in "gen --help" "$out" "usage: fdtune gen"

expect_usage_error "unknown command" "unknown command 'frobnicate'" frobnicate
expect_usage_error "unknown option" "--bogus" gen --bogus

# --- gen: source of one candidate ---------------------------------------------------
run gen --op lap --R 4 --config bx=64
expect_status "gen lap" 0
expect_in "gen lap" "$out" 'extern "C"'
expect_in "gen lap" "$out" '__global__'

run gen --op d2z --R 8 --precision f64 --grid 301x203x157 --config bx=32,by=8,nw=32
expect_status "gen d2z NXxNYxNZ" 0
expect_in "gen d2z NXxNYxNZ" "$out" 'extern "C"'

# --- gen: usage errors name the problem ---------------------------------------------
expect_usage_error "R=0" "--R 0" gen --op lap --R 0
expect_usage_error "R=9" "--R 9" gen --op lap --R 9
expect_usage_error "R=abc" "--R 'abc'" gen --op lap --R abc
expect_usage_error "grid 0^3" "grid '0^3'" gen --op lap --R 4 --grid '0^3'
expect_usage_error "grid 12x" "grid '12x'" gen --op lap --R 4 --grid 12x
expect_usage_error "grid -5^3" "grid '-5^3'" gen --op lap --R 4 --grid '-5^3'
expect_usage_error "grid overflow" "too large" gen --op lap --R 4 --grid '99999999999^3'
expect_usage_error "grid allocation" "GiB" gen --op lap --R 4 --grid 1000000x1000000x1000000
expect_usage_error "grid abc" "grid 'abc'" gen --op lap --R 4 --grid abc
expect_usage_error "unknown op" "operator 'nope'" gen --op nope --R 4
expect_usage_error "unknown precision" "precision 'f16'" gen --op lap --R 4 --precision f16
expect_usage_error "config bx=abc" "bx" gen --op lap --R 4 --config bx=abc
expect_in "config bx=abc" "$err" "integer"
expect_usage_error "config nope=1" "'nope'" gen --op lap --R 4 --config nope=1
expect_usage_error "config vec=3" "vec" gen --op lap --R 4 --config vec=3

# --- gen --compile: the compiler's resource usage -----------------------------------
# Only for the compilers this build has (--version says "backend NAME: compiler
# unavailable" or "backends: none compiled in" otherwise).
compiled=0
if grep -q '^backend cuda: nvrtc' "$tmp/version"; then
    run gen --op lap --R 4 --config bx=64 --compile --target sm_90
    expect_status "gen --compile sm_90" 0
    expect_in "gen --compile sm_90" "$out" 'extern "C"'
    expect_in "gen --compile sm_90" "$out" "for sm_90"
    expect_in "gen --compile sm_90" "$out" "registers"
    expect_not_in "gen --compile sm_90, no spills" "$err" "spills"
    # spill stores to local memory: a warning with the numbers (stdout stays the source)
    run gen --op d2x --R 8 --precision f64 --config bx=32,by=8,tile=4,lb=1024 --target sm_90
    expect_status "gen spilling sm_90" 0
    expect_in "gen spilling sm_90" "$err" "warning: sm_90: spills "
    expect_in "gen spilling sm_90" "$err" "bytes of registers (spill stores to local memory; a "
    expect_not_in "gen spilling sm_90: not on stdout" "$out" "warning:"
    compiled=$((compiled + 1))
else
    echo "note: no NVRTC in this build: gen --compile --target sm_90 not checked" >&2
fi
# A target this build's NVRTC does not take (NVRTC 13 dropped sm_70) is a usage error naming
# the ones it takes; every NVIDIA target the shell completions offer is taken.
if grep -q '^backend cuda: nvrtc' "$tmp/version"; then
    nvrtc=$(sed -n 's/^backend cuda: nvrtc \([0-9]*\).*/\1/p' "$tmp/version")
    if [ "${nvrtc:-0}" -ge 13 ]; then
        expect_usage_error "gen --target sm_70" "target 'sm_70': nvrtc" gen --target sm_70
        expect_in "gen --target sm_70: the targets it takes" "$err" "it compiles for sm_75, sm_80"
    fi
    expect_usage_error "gen --target sm_90x" "target 'sm_90x'" gen --target sm_90x
    completion=$(dirname "$0")/../dist/completions/fdtune.bash
    for t in $(sed -n 's/^ *--target) list="\([^"]*\)".*/\1/p' "$completion"); do
        case $t in sm_*) ;; *) continue ;; esac
        run gen --op lap --R 4 --target "$t"
        expect_status "gen --target $t (offered by the completions)" 0
    done
fi
# gen for the host CPU: the config is read in the C dialect of the target; a GPU parameter
# is refused by name, and targets of two dialects are refused together
cpuarch=$(uname -m | sed 's/^x86_64$/x86-64-v2/; s/^aarch64$/aarch64/')
run gen --target "$cpuarch" --op lap --R 4 --grid 32^3 --config blk=1,ty=16
expect_status "gen --target $cpuarch --config blk=1,ty=16" 0
expect_in "gen --target $cpuarch: C with OpenMP" "$out" "C11 with OpenMP 4.5, kernel family blocked"
expect_usage_error "gen --target $cpuarch --config bx=32" "bx is a GPU parameter" \
    gen --target "$cpuarch" --op lap --R 4 --config bx=32
expect_usage_error "gen: targets of two dialects" "sources of two dialects" \
    gen --target "$cpuarch" --target sm_90 --op lap --R 4
if grep -q '^backend hip: hiprtc' "$tmp/version"; then
    run gen --op d2z --R 4 --config nw=16 --compile --target gfx90a
    expect_status "gen --compile gfx90a" 0
    expect_in "gen --compile gfx90a" "$out" "for gfx90a"
    expect_in "gen --compile gfx90a" "$out" "VGPRs"
    expect_not_in "gen --compile gfx90a, no spills" "$err" "spills"
    # VGPRs spilled to scratch (592 bytes, 476 of scratch with Debian's hiprtc): a warning
    # with the numbers, as for LDS over the limit
    run gen --op wave --R 8 --config bx=24,by=5,bz=3,tile=3,vec=2,align=2,order=yzx,split=3 \
        --target gfx90a
    expect_status "gen spilling gfx90a" 0
    expect_in "gen spilling gfx90a" "$err" "warning: gfx90a: spills "
    expect_in "gen spilling gfx90a" "$err" "bytes of registers (VGPRs to scratch; "
    expect_in "gen spilling gfx90a" "$err" "bytes of scratch per work-item); tune prunes"
    compiled=$((compiled + 1))
else
    echo "note: no hiprtc in this build: gen --compile --target gfx90a not checked" >&2
fi

# --- gen --compile for the AMD targets the legacy hiprtc cannot compile --------------
# The hiprtc of ROCm < 5.6 ("in libamdhip64") refuses gfx94x and gfx11xx: the offline clang
# compiles them. Where no clang is found the check is skipped, said and counted (not passed).
skipped=0
if grep -q '^backend hip: hiprtc.*(in libamdhip64)' "$tmp/version"; then
    # gfx940 (clang 16 and later) and gfx942, MI300's real ISA (clang 17 and later): a clang
    # that does not know the target is a skip that says so, never a pass
    for t in gfx940 gfx942; do
        run gen --op lap --R 4 --config bx=32,by=8,nw=32,lds=2,vec=4,align=64,pf=2 \
            --target $t --disasm
        if [ "$rc" -ne 0 ] && grep -q 'no clang for AMD GPUs found' "$err"; then
            echo "SKIPPED: gen --target $t --disasm (no clang for it): $(head -c 400 "$err")" >&2
            skipped=$((skipped + 1))
            continue
        fi
        expect_status "gen --target $t --disasm" 0
        expect_in "gen $t" "$out" "for $t"
        expect_in "gen $t" "$out" "VGPRs"
        expect_in "gen $t" "$out" "SGPR spills"
        expect_in "gen $t --disasm" "$out" "// Disassembly for $t:"
        expect_in "gen $t --disasm" "$out" "global_load_dwordx4"
        expect_in "gen $t --disasm" "$out" "s_endpgm"
        compiled=$((compiled + 1))
    done
    # no clang: the target, what it needs and how to install it; exit 4 (operational error)
    rc=0
    FDTUNE_CLANG=$tmp/no/clang "$fdtune" gen --op lap --R 4 --target gfx1100 >"$out" 2>"$err" ||
        rc=$?
    expect_status "gen gfx1100 without clang" 4
    expect_in "gen gfx1100 without clang" "$err" "gfx1100 needs the offline compiler"
    expect_in "gen gfx1100 without clang" "$err" "FDTUNE_CLANG=$tmp/no/clang: not an executable"
    expect_in "gen gfx1100 without clang" "$err" "clang-19 and lld-19"
    # a clang that does not know the target (clang 16 and gfx942): said, naming both, exit 4
    if clang16=$(command -v clang-16) && [ -x "$(dirname "$(readlink -f "$clang16")")/ld.lld" ]
    then
        rc=0
        FDTUNE_CLANG=$clang16 "$fdtune" gen --op lap --R 4 --target gfx942 >"$out" 2>"$err" ||
            rc=$?
        expect_status "gen gfx942 with clang-16" 4
        expect_in "gen gfx942 with clang-16" "$err" "found that knows gfx942"
        expect_in "gen gfx942 with clang-16" "$err" "clang version 16"
        expect_in "gen gfx942 with clang-16" "$err" "LLVM 17 or later"
    else
        echo "SKIPPED: gen gfx942 with clang-16 (no clang-16 with its lld here)" >&2
        skipped=$((skipped + 1))
    fi
    # each target goes to the first clang that knows it: with clang 16 found first (as
    # "clang-19") and clang 19 found later (as "clang-20"), gfx942 still compiles
    clang19=$(command -v clang-19 || true)
    if [ -n "${clang16:-}" ] && [ -n "$clang19" ] &&
        [ -x "$(dirname "$(readlink -f "$clang19")")/ld.lld" ]; then
        mkdir -p "$tmp/bin"
        ln -sf "$(readlink -f "$clang16")" "$tmp/bin/clang-19"
        ln -sf "$(readlink -f "$clang19")" "$tmp/bin/clang-20"
        rc=0
        PATH="$tmp/bin:$PATH" FDTUNE_CACHE= "$fdtune" gen --op lap --R 4 --target gfx942 \
            >"$out" 2>"$err" || rc=$?
        expect_status "gen gfx942, clang 16 before clang 19" 0
        expect_in "gen gfx942, clang 16 before clang 19" "$out" "for gfx942"
    else
        echo "SKIPPED: gen gfx942 routed past clang 16 (needs clang-16 and clang-19)" >&2
        skipped=$((skipped + 1))
    fi
else
    echo "note: no legacy hiprtc in this build: the offline AMD compiler is not exercised" >&2
fi
if grep -q '^backend hip: hiprtc' "$tmp/version"; then
    run gen --op d2z --R 4 --config nw=16 --target gfx90a --disasm
    expect_status "gen gfx90a --disasm" 0
    expect_in "gen gfx90a --disasm" "$out" "// Disassembly for gfx90a:"
    expect_in "gen gfx90a --disasm" "$out" "s_endpgm"
fi
if grep -q '^backend cuda: nvrtc' "$tmp/version"; then
    # cuobjdump/nvdisasm where the toolkit has them; else a message naming them
    run gen --op lap --R 4 --target sm_90 --disasm
    if [ "$rc" -eq 0 ]; then
        expect_in "gen sm_90 --disasm" "$out" "// Disassembly for sm_90:"
    else
        expect_status "gen sm_90 --disasm without cuobjdump" 4
        expect_in "gen sm_90 --disasm without cuobjdump" "$err" "cuobjdump"
        expect_in "gen sm_90 --disasm without cuobjdump" "$out" "for sm_90"
    fi
fi

# --- the dry run names the model's bound: in the text table and, with the per-point on-chip
# counts, in the JSON ranking; the stream's lap R=8 f32 on an H100 is bound on chip, the
# tuned d2x R=4 by DRAM (tests/test_arch.c holds the numbers)
cat >"$tmp/one.lua" <<'EOF2'
ops { "lap" }
param("align", { 32 }); param("lds", { 3 }); param("tile", { 2 }); param("vec", { 2 }); param("bx", { 32 })
param("by", { 16 }); param("nw", { 256 }); param("pf", { 3 }); param("lb", { 512 })
EOF2
run --gpu H100 --op lap --R 8 --grid '512^3' --recipe "$tmp/one.lua" --dry-run --top 1
expect_status "dry-run bound" 0
expect_in "dry-run bound" "$out" "  bound  model terms"
expect_in "dry-run bound" "$out" "  issue  dram "
run --gpu H100 --op lap --R 8 --grid '512^3' --recipe "$tmp/one.lua" --dry-run --top 1 --json
expect_status "dry-run bound json" 0
expect_in "dry-run bound json" "$out" '"bound": "issue"'
expect_in "dry-run bound json" "$out" '"shared_bytes_per_point":'
expect_in "dry-run bound json" "$out" '"inst_per_point":'
cat >"$tmp/d2x.lua" <<'EOF2'
ops { "d2x" }
param("bx", { 128 }); param("by", { 8 }); param("vec", { 4 }); param("align", { 32 })
param("lb", { 1024 }); param("nt", { 1 })
EOF2
run --gpu H100 --op d2x --R 4 --grid '512^3' --recipe "$tmp/d2x.lua" --dry-run --top 1 --json
expect_status "dry-run bound d2x" 0
expect_in "dry-run bound d2x" "$out" '"bound": "dram"'

# --- dwave's absorbing layer: --absorb W[:S] goes with --op dwave, in every command ------
# that takes a problem; each refusal is a usage error that says what to give, and nothing is
# written (the plan file stays absent).
for cmd in "gen" "bench --grid 64^3" "tune --R 4 --grid 64^3" \
    "plan --R 4 --grid 64^3 -o $tmp/d.jsonl" "export" "retune" "query best" \
    "query history --R 4 --grid 64^3 --config bx=32"; do
    # shellcheck disable=SC2086 # the command's words
    expect_usage_error "$cmd --op dwave without --absorb" "--op dwave needs --absorb W[:S]" \
        $cmd --op dwave
    # shellcheck disable=SC2086
    expect_usage_error "$cmd --absorb without dwave" "only dwave has an absorbing layer" \
        $cmd --op lap --absorb 16
done
[ ! -e "$tmp/d.jsonl" ] || fail "a refused plan wrote $tmp/d.jsonl"
expect_usage_error "tune --absorb without --op" "only dwave has an absorbing layer" \
    tune --R 4 --grid 64^3 --absorb 16
expect_usage_error "--absorb 0" "the width W must be an integer" gen --op dwave --absorb 0
expect_usage_error "--absorb 16:20" "the strength S must be a number in (0, 10]" \
    gen --op dwave --absorb 16:20
expect_usage_error "--absorb 16:" "the strength S" gen --op dwave --absorb 16:
expect_usage_error "--absorb 16x" "unexpected text" gen --op dwave --absorb 16x
expect_usage_error "--absorb wider than the grid" "W=16 leaves no interior along x" \
    gen --op dwave --absorb 16 --grid 32x64x64
expect_usage_error "query runs --absorb" "--absorb does not apply to 'query runs'" \
    query runs --absorb 16
# gen hands the layer to the generator: W baked into dwave's kernels
run gen --op dwave --absorb 16:0.05 --R 2 --grid 64^3
expect_status "gen --op dwave --absorb 16:0.05" 0
expect_in "gen dwave: W in the source" "$out" "constexpr int ABS_W = 16;"
# a plan of a dwave tune carries the layer into its tasks, which read back as that problem
run plan --op lap,dwave --absorb 8:0.05 --R 4 --grid 64^3 -o "$tmp/dw.jsonl"
expect_status "plan --op lap,dwave --absorb 8:0.05" 0
expect_in "plan dwave: the layer in the task" "$tmp/dw.jsonl" '"op": "dwave", "R": 4, "precision": "f32", "nx": 64, "ny": 64, "nz": 64, "absorb_width": 8, "absorb_strength": 0.05'
checks=$((checks + 1))
[ "$(grep -c absorb_width "$tmp/dw.jsonl")" -eq 1 ] || fail "plan dwave: a layer on lap's task"

# --- devices: works with and without a GPU ------------------------------------------
run devices --no-bandwidth
expect_status "devices" 0
checks=$((checks + 1))
[ -s "$out" ] || fail "devices: printed nothing"

echo "test_cli: $checks checks, $failed failed, $skipped skipped ($compiled compilers exercised)" >&2
[ "$failed" -eq 0 ]
