#!/usr/bin/env python3
"""Summarises a CSV of bench/resources.sh per target: rows, compiled, failed (grouped by
message), and how many compiled kernels have scratch > 0, VGPR spills to memory
(spill_bytes > 0; NVIDIA: spill stores) and SGPR spills (AMD: to VGPR lanes). Then lists the
rows of AMD targets with scratch where the reference target (default sm_90) has no spill
bytes for the same (op, R, precision, grid, config), with what the numbers tell of the
reason: a kernel whose VGPR count equals (within the allocation granule of 8) the most any
spilling kernel of that target and launch bound got has hit the compiler's VGPR budget (on
AMD the budget follows from the largest block the code allows, 1024 threads without
__launch_bounds__, where NVIDIA's compiler assumes no block size); scratch without spill
bytes is private memory the kernel addresses at run time.

Usage: resources_summary.py FILE.csv [REFERENCE_TARGET]"""
import collections
import csv
import re
import sys

KEY = ("op", "R", "precision", "grid", "config")


def num(row, field):
    return int(row[field]) if row.get(field) else 0


def launch_bound(config):
    m = re.search(r"\blb=(\d+)", config)
    return int(m.group(1)) if m else 1024


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    ref = argv[2] if len(argv) == 3 else "sm_90"
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    print(f"{'target':8} {'rows':>5} {'compiled':>8} {'failed':>6} {'scratch>0':>9} "
          f"{'VGPR spills':>11} {'SGPR spills':>11}")
    budget = collections.defaultdict(int)  # (target, launch bound) -> VGPRs of spilling kernels
    for r in rows:
        if r["status"] == "ok" and num(r, "spill_bytes") > 0:
            k = (r["target"], launch_bound(r["config"]))
            budget[k] = max(budget[k], num(r, "registers"))
    failures = []
    for t in targets:
        mine = [r for r in rows if r["target"] == t]
        ok = [r for r in mine if r["status"] == "ok"]
        bad = [r for r in mine if r["status"] != "ok"]
        failures += bad
        sgpr = sum(1 for r in ok if num(r, "sgpr_spills") > 0)
        print(f"{t:8} {len(mine):5} {len(ok):8} {len(bad):6} "
              f"{sum(1 for r in ok if num(r, 'scratch_bytes') > 0):9} "
              f"{sum(1 for r in ok if num(r, 'spill_bytes') > 0):11} "
              f"{sgpr if t.startswith('gfx') else '-':>11}")
    if failures:
        print("\nfailed, by message:")
        for msg, n in collections.Counter((r["target"], r["status"]) for r in failures).items():
            print(f"  {n:4} {msg[0]}: {msg[1]}")
    refs = {tuple(r[k] for k in KEY): r for r in rows if r["target"] == ref and r["status"] == "ok"}
    listed = [r for r in rows if r["target"].startswith("gfx") and r["status"] == "ok"
              and num(r, "scratch_bytes") > 0 and tuple(r[k] for k in KEY) in refs
              and num(refs[tuple(r[k] for k in KEY)], "spill_bytes") == 0]
    print(f"\nAMD kernels with scratch where {ref} has no spills: {len(listed)}")
    for r in listed:
        s = refs[tuple(r[k] for k in KEY)]
        regs, lb = num(r, "registers"), launch_bound(r["config"])
        if num(r, "spill_bytes") == 0:
            why = "scratch without VGPR spill bytes: private memory addressed at run time"
        elif regs > budget[(r["target"], lb)] - 8:
            why = (f"VGPR budget {budget[(r['target'], lb)]} of {lb}-thread blocks reached "
                   f"({ref} uses {s['registers']} registers)")
        else:
            why = f"VGPR spills below the budget ({regs} VGPRs)"
        print(f"  {r['target']:7} {r['op']} R={r['R']} {r['precision']} {r['grid']} {r['config']}: "
              f"scratch {r['scratch_bytes']} B, spills {r['spill_bytes']} B, "
              f"{r['registers']} VGPRs, {r['agprs'] or '-'} AGPRs; {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
