#!/usr/bin/env python3
"""Compares the HIP source that two fdtune binaries emit (`fdtune gen`, no compile) for a
sample of problems and every config of verify_configs (bench/lib.sh), after normalising:
comments (the banner with them) and blank lines dropped, runs of whitespace made one space.
Each source is then `identical`; `moved` (identical but for where the constexpr declarations
in front of the kernel function stand: the same declarations, the rest the same text); or
`different`, shown as a unified diff.
Exit status 1 when a source is different or a generation fails in one binary only.

Usage: sources_compare.py BEFORE_FDTUNE AFTER_FDTUNE [--ops lap,d2z,wave] [--R 1,4,8]
                          [--precisions f32,f64] [--grids 512^3] [--diffs N]"""
import argparse
import collections
import difflib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def verify_configs(op, prec):
    out = subprocess.run(["bash", "-c", f'. "{HERE}/lib.sh"; verify_configs {op} {prec}'],
                         check=True, capture_output=True, text=True,
                         env=dict(os.environ, OUTDIR=os.environ.get("OUTDIR", "/tmp")))
    return out.stdout.split()


def generate(fdtune, op, R, prec, grid, config):
    """The normalised lines of the source, or None when generation fails (the error)."""
    r = subprocess.run([fdtune, "gen", "--op", op, "--R", str(R), "--precision", prec,
                        "--grid", grid, "--config", config], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    lines = []
    for line in r.stdout.splitlines():
        line = re.sub(r"\s+", " ", re.sub(r"//.*", "", line)).strip()
        if line:
            lines.append(line)
    return lines, ""


def moved(b, n):
    """Whether b and n differ only in where the constexpr declarations in front of the kernel
    function stand: the same declarations, and the same text once they are taken out."""
    def split(lines):
        k = next((i for i, l in enumerate(lines) if l.startswith('extern "C"')), len(lines))
        decl = [l for l in lines[:k] if l.startswith("constexpr ")]
        rest = [l for l in lines[:k] if not l.startswith("constexpr ")] + lines[k:]
        return sorted(decl), rest
    return split(b) == split(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--ops", default="lap,d2z,wave")
    ap.add_argument("--R", default="1,4,8")
    ap.add_argument("--precisions", default="f32,f64")
    ap.add_argument("--grids", default="512^3")
    ap.add_argument("--diffs", type=int, default=3, help="different sources to show in full")
    a = ap.parse_args()
    tally = collections.Counter()
    shown = 0
    for op in a.ops.split(","):
        for prec in a.precisions.split(","):
            for R in a.R.split(","):
                for grid in a.grids.split(","):
                    for config in verify_configs(op, prec):
                        b, berr = generate(a.before, op, R, prec, grid, config)
                        n, nerr = generate(a.after, op, R, prec, grid, config)
                        what = f"{op} R={R} {prec} {grid} {config}"
                        if b is None or n is None:
                            same = b is None and n is None and berr == nerr
                            tally["both fail" if same else "fail"] += 1
                            if not same:
                                print(f"fail: {what}\n  before: {berr}\n  after:  {nerr}")
                            continue
                        if b == n:
                            tally["identical"] += 1
                        elif moved(b, n):
                            tally["moved"] += 1
                        else:
                            tally["different"] += 1
                            print(f"different: {what}")
                            if shown < a.diffs:
                                shown += 1
                                sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
                                    b, n, "before", "after", lineterm="", n=1))
    total = sum(tally.values())
    print(f"{total} sources: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    return 1 if tally["different"] or tally["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
