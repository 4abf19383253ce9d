#!/usr/bin/env python3
"""Compares two CSV files of bench/resources.sh (BEFORE, AFTER), joined on (op, R, precision,
grid, config, target), and prints per target how many rows are equal, better (no count
higher and at least one lower among registers, sgprs, agprs, spill, SGPR spills, scratch,
static and dynamic shared bytes, of those both rows report; or a failed compile that now
succeeds) and worse (any count higher, or a compile that now fails), then every worse row
and every row found in one file only.
Exit status 1 when a row is worse or missing, else 0.

Usage: resources_compare.py BEFORE.csv AFTER.csv"""
import csv
import sys

KEY = ("op", "R", "precision", "grid", "config", "target")
METRICS = ("registers", "sgprs", "agprs", "spill_bytes", "sgpr_spills", "scratch_bytes",
           "shared_bytes", "dynamic_shared_bytes")


def load(path):
    with open(path, newline="") as f:
        return {tuple(r[k] for k in KEY): r for r in csv.DictReader(f)}


def counts(row, other):
    """The metrics both rows report (a column a file lacks, or that its target does not
    report, is not compared), as integers."""
    return [int(row[m]) for m in METRICS if row.get(m) and other.get(m)]


def verdict(b, a):
    """'equal', 'better' or 'worse' for one joined row."""
    bok, aok = b["status"] == "ok", a["status"] == "ok"
    if not aok:
        return "equal" if not bok else "worse"
    if not bok:
        return "better"
    cb, ca = counts(b, a), counts(a, b)
    if any(x > y for x, y in zip(ca, cb)):
        return "worse"
    return "better" if ca != cb else "equal"


def describe(row):
    if row["status"] != "ok":
        return row["status"]
    return " ".join(f"{m}={row.get(m) or '-'}" for m in METRICS)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    before, after = load(argv[1]), load(argv[2])
    targets = sorted({k[-1] for k in before} | {k[-1] for k in after})
    bad = False
    print(f"{'target':8} {'rows':>5} {'equal':>6} {'better':>7} {'worse':>6} {'missing':>8}")
    listing = []
    for t in targets:
        tally = {"equal": 0, "better": 0, "worse": 0, "missing": 0}
        keys = sorted({k for k in before if k[-1] == t} | {k for k in after if k[-1] == t})
        for k in keys:
            if k not in before or k not in after:
                tally["missing"] += 1
                listing.append(f"missing in {'AFTER' if k in before else 'BEFORE'}: {','.join(k)}")
                continue
            v = verdict(before[k], after[k])
            tally[v] += 1
            if v == "worse":
                listing.append(f"worse: {','.join(k)}\n  before {describe(before[k])}\n"
                               f"  after  {describe(after[k])}")
        bad = bad or tally["worse"] > 0 or tally["missing"] > 0
        print(f"{t:8} {len(keys):5} {tally['equal']:6} {tally['better']:7} {tally['worse']:6} "
              f"{tally['missing']:8}")
    for line in listing:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
