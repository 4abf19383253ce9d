#!/bin/sh
# The include graph of fdtune's modules, checked against the README's layers ("Layout"): each
# module includes only modules before it in LAYERS, and no source file includes itself
# through others (no file cycle). Prints the module-level graph, one line per module with the
# modules it includes, then every violation; exits 1 when there is one, 2 on bad usage.
# Only the modules' own .c and .h files count (tests/, bench/ and the build are not modules);
# `#include "name"` is resolved in the including file's directory first, then in the modules'
# directories (a name found in none is a system or vendor header and is left out).
#
# Usage: scripts/layers.sh [SOURCE_DIR]        (default: the tree this script is in)
# LAYERS (space-separated) overrides the order, e.g. to print the graph of an older tree.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$root" ] || { echo "layers.sh: $root is not a directory" >&2; exit 2; }
order="common portable generator templates device runtime target db recipe eval search tuner"
layers=${LAYERS:-"$order export cli"}
cd "$root" || exit 2
files=$(for m in $layers; do
    [ -d "$m" ] && find "$m" -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \)
done | sort)
[ -n "$files" ] || { echo "layers.sh: no module sources under $root" >&2; exit 2; }
# One line per include: "FILE INCLUDED-NAME"; then awk resolves, draws and checks.
for f in $files; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r inc; do printf '%s %s\n' "$f" "$inc"; done
done | awk -v layers="$layers" -v files="$files" '
function dir(p) { return sub(/\/[^\/]*$/, "", p) ? p : "." }
function mod(p) { sub(/\/.*/, "", p); return p }
function base(p) { sub(/.*\//, "", p); return p }
BEGIN {
    nl = split(layers, L, " ")
    for (i = 1; i <= nl; i++) rank[L[i]] = i
    nf = split(files, F, "\n")
    for (i = 1; i <= nf; i++) {
        known[F[i]] = 1; present[mod(F[i])] = 1
        if (!(base(F[i]) in byname)) byname[base(F[i])] = F[i]
    }
}
{
    f = $1; inc = $2
    t = dir(f) "/" inc
    if (!(t in known)) t = (base(inc) in byname) ? byname[base(inc)] : ""
    if (t == "" || t == f) next
    edges[f] = edges[f] " " t
    a = mod(f); b = mod(t)
    if (a != b) {
        if (!((a, b) in dep)) { dep[a, b] = 1; deps[a] = deps[a] " " b }
        if (rank[b] >= rank[a] && !((f, t) in told)) {
            told[f, t] = 1
            bad[++nbad] = sprintf("layer: %s includes %s (%s is not before %s)", f, t, b, a)
        }
    }
}
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
    for (i = 1; i <= nf; i++) if (!state[F[i]]) visit(F[i])
    for (i = 1; i <= nl; i++) {
        m = L[i]; line = ""
        if (!(m in present)) continue
        for (j = 1; j <= nl; j++) if ((m, L[j]) in dep) line = line " " L[j]
        printf "%-10s ->%s\n", m, line == "" ? " (nothing)" : line
    }
    for (i = 1; i <= nbad; i++) print bad[i]
    if (nbad) { printf "layers.sh: %d violation(s) of the layers (%s)\n", nbad, layers; exit 1 }
    printf "layers.sh: %d files, one-way layers, no file cycle\n", nf
}'
