#!/bin/sh
# The call graph of fdtune's source files, read from a build's objects: a file calls another
# when its object uses a function that the other's object defines. Variables do not count
# (runtime/backend.c's list of the backends names each backend's table, whose functions
# call backend.c).
# Fails on a file cycle through calls (a file that calls into another is called back by it,
# directly or round a loop), which the include graph (scripts/layers.sh) does not show: the
# files of one module share one internal header. Prints the number of files and calls, then
# every cycle; exits 1 when there is one, 2 on bad usage.
# Only the modules' objects count (BUILD_DIR/tests is left out); an object whose source was
# removed stays in a build directory until it is cleaned, and counts as a file.
#
# Usage: scripts/calls.sh BUILD_DIR        (needs nm)
set -u
[ $# -eq 1 ] && [ -d "$1" ] || { echo "usage: calls.sh BUILD_DIR" >&2; exit 2; }
bld=$1
objs=$(find "$bld" -path "$bld/tests" -prune -o -type f -name '*.c.o' -print | sort)
[ -n "$objs" ] || { echo "calls.sh: no objects under $bld: build first" >&2; exit 2; }
# One line per symbol: "FILE TYPE NAME", FILE the source as module/name.c.
for o in $objs; do
    f=$(printf '%s\n' "${o#"$bld"/}" | sed 's|/CMakeFiles/[^/]*\.dir/|/|; s|\.o$||')
    nm -P "$o" | while read -r name type rest; do printf '%s %s %s\n' "$f" "$type" "$name"; done
done | awk '
!($1 in files) { files[$1] = 1; order[++nf] = $1 } # in the order of the sorted objects
$2 == "U" { use[++nu] = $1 " " $3; next }
$2 ~ /^[TW]$/ { def[$3] = $1 }
# Depth-first search for a file cycle; state 1: on the path, 2: done.
function visit(f,    n, i, T, t, k, path) {
    state[f] = 1; stack[++sp] = f
    n = split(edges[f], T, " ")
    for (i = 1; i <= n; i++) {
        t = T[i]
        if (state[t] == 1) {
            path = t
            for (k = sp; k >= 1 && stack[k] != t; k--) path = stack[k] " -> " path
            bad[++nbad] = "cycle: " t " -> " path
        } else if (!state[t]) visit(t)
    }
    sp--; state[f] = 2
}
END {
    for (i = 1; i <= nu; i++) {
        split(use[i], U, " ")
        t = def[U[2]]
        if (t == "" || t == U[1] || (U[1], t) in edge) continue
        edge[U[1], t] = 1; edges[U[1]] = edges[U[1]] " " t; ncalls++
    }
    for (i = 1; i <= nf; i++) if (!state[order[i]]) visit(order[i])
    for (i = 1; i <= nbad; i++) print bad[i]
    if (nbad) { printf "calls.sh: %d file cycle(s) through calls\n", nbad; exit 1 }
    printf "calls.sh: %d files, %d calls between them, no file cycle\n", nf, ncalls + 0
}'
