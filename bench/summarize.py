#!/usr/bin/env python3
"""Prints one table row per candidate from `fdtune bench --json` files (best first per problem)."""
import json
import sys

for path in sys.argv[1:]:
    try:
        d = json.load(open(path))
    except (OSError, ValueError) as err:
        print(f"{path}: unreadable ({err})")
        continue
    p = d["problem"]
    print(f'\n{p["op"]} R={p["R"]} {p["precision"]} {p["nx"]}x{p["ny"]}x{p["nz"]} on '
          f'{d["device"]["name"]}: copy {d["copy_gbs"]:.0f} GB/s')
    rows = sorted(d["results"], key=lambda r: -(r["gbs"] or 0))
    for r in rows:
        if r["status"] == "ok":
            print(f'  {r["config"]:55s} {r["median_ms"]:8.4f} ms {r["gbs"]:7.0f} GB/s '
                  f'{r["frac_copy"]:6.3f}  regs {r["registers"]:3d}  reps {r["reps"]}')
        else:
            print(f'  {r["config"]:55s} {r["status"]}: {r["message"][:100]}')
