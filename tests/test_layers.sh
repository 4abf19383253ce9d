#!/bin/sh
# The structure (README "Layout"): scripts/layers.sh passes on this source tree and prints its
# module-level include graph; on made-up trees it fails on an include that runs back up the
# layers and on a file cycle, naming them. scripts/calls.sh finds no file cycle through calls
# in this build's objects, and names one in made-up objects. And rules that live in one place
# stay there.
# Usage: test_layers.sh SOURCE_DIR BUILD_DIR
set -u
src=$1
bld=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/tests/testutil.sh"
layers=$src/scripts/layers.sh

# this tree
rc=0
sh "$layers" "$src" >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || fail "layers.sh on the source tree: exit status $rc"
expect_in "the graph" "$tmp/out" "cli        ->"
expect_in "the verdict" "$tmp/out" "one-way layers, no file cycle"

# One rule in one place: which backend an architecture belongs to is the backends' claims
# (device/: fdt_device_claim_of); fdtune's code guesses it from no name prefix itself (the
# prefix helpers of portable/fdtuned_model.h stay for the exported headers).
uses() { # PATTERN MODULES...: the files of the modules (.c, .h) that use PATTERN
    pattern=$1
    shift
    for m in "$@"; do
        [ -d "$src/$m" ] && grep -l "$pattern" "$src/$m"/*.c "$src/$m"/*.h 2>/dev/null
    done
}
guess=$(uses 'fdtuned_arch_backend\|fdtuned_arch_vendor' common generator device runtime target \
    db recipe eval search tuner export cli)
[ -z "$guess" ] || fail "an architecture's backend guessed from its name in: $guess"

# One pipeline: candidates are generated and compiled by the target's builder alone
# (target/build.c: fdt_target_build); above it nothing calls the generator's source functions
# or the runtime's compile functions itself.
pipeline=$(uses 'fdt_gen_source(\|fdt_gen_util_source(\|fdt_rt_compile' target db recipe eval \
    search tuner export cli | grep -v '/target/build\.c$\|/target/fdt_target\.h$')
[ -z "$pipeline" ] || fail "generate or compile outside the builder (fdt_target_build): $pipeline"

# a made-up tree of two modules, lo below hi
mk() { # FILE LINES...: writes FILE under $tmp/t
    f=$tmp/t/$1
    shift
    mkdir -p "$(dirname "$f")"
    printf '%s\n' "$@" >"$f"
}
mk lo/lo.h '#include <stdio.h>' '#include "lo_internal.h"'
mk lo/lo_internal.h '/* nothing */'
mk lo/lo.c '#include "lo.h"'
mk hi/hi.h '#include "lo.h"'
mk hi/hi.c '#include "hi.h"' '#include "vendor.h"'
rc=0
LAYERS="lo hi" sh "$layers" "$tmp/t" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { fail "a one-way tree: exit status $rc"; cat "$tmp/out" >&2; }
expect_in "hi includes lo" "$tmp/out" "hi         -> lo"
expect_in "lo includes nothing" "$tmp/out" "lo         -> (nothing)"

# an include up the layers
mk lo/lo.c '#include "lo.h"' '#include "hi.h"'
rc=0
LAYERS="lo hi" sh "$layers" "$tmp/t" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "an include up the layers: exit status $rc, expected 1"
expect_in "the upward include named" "$tmp/out" \
    "layer: lo/lo.c includes hi/hi.h (hi is not before lo)"

# a file cycle inside one module
mk lo/lo.c '#include "lo.h"'
mk lo/lo_internal.h '#include "lo.h"'
rc=0
LAYERS="lo hi" sh "$layers" "$tmp/t" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a file cycle: exit status $rc, expected 1"
expect_in "the cycle named" "$tmp/out" "cycle: lo/lo.h -> lo/lo_internal.h -> lo/lo.h"

# bad usage
rc=0
sh "$layers" "$tmp/none" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a missing directory: exit status $rc, expected 2"

# no file cycle through calls in this build (a file that calls another is not called back)
calls=$src/scripts/calls.sh
rc=0
sh "$calls" "$bld" >"$tmp/out" 2>&1 || rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || fail "calls.sh on the build: exit status $rc"
expect_in "the calls' verdict" "$tmp/out" "no file cycle"

# made-up objects: a.c and b.c call each other, c.c calls a.c only
mkdir -p "$tmp/b/m/CMakeFiles/m.dir"
printf 'int b(int);\nint a(int x) { return x ? b(x - 1) : 0; }\n' >"$tmp/a.c"
printf 'int a(int);\nint b(int x) { return a(x); }\n' >"$tmp/b.c"
printf 'int a(int);\nint c(void) { return a(1); }\n' >"$tmp/c.c"
for f in a b c; do
    ${CC:-cc} -c "$tmp/$f.c" -o "$tmp/b/m/CMakeFiles/m.dir/$f.c.o" ||
        fail "cannot compile the made-up $f.c"
done
rc=0
sh "$calls" "$tmp/b" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { fail "a call cycle: exit status $rc, expected 1"; cat "$tmp/out" >&2; }
expect_in "the call cycle named" "$tmp/out" "m/a.c -> m/b.c -> m/a.c"
rm "$tmp/b/m/CMakeFiles/m.dir/b.c.o"
rc=0
sh "$calls" "$tmp/b" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { fail "one-way calls: exit status $rc"; cat "$tmp/out" >&2; }
expect_in "one-way calls counted" "$tmp/out" "2 files, 1 calls between them"
rc=0
sh "$calls" "$tmp/none" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "calls.sh on a missing directory: exit status $rc, expected 2"
finish
