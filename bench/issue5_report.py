#!/usr/bin/env python3
"""Turns the issue-5 benchmark results (issue5-OP-GRID.json and .labels, written by
bench/issue5.sh) into a table on stdout, issue5.csv and issue5.svg (effective bandwidth per
operator and grid, seeds' baselines beside fdtune's tuned best, the copy bandwidth of the same
run as a line). Plain Python: the SVG is written by hand so that no plotting package is needed
on a GPU node."""
import csv
import glob
import json
import os
import sys

OPS = ["d2x", "d2y", "d2z", "lap", "wave"]


def load(outdir):
    rows = []
    for path in sorted(glob.glob(os.path.join(outdir, "issue5-*-*.json"))):
        base = os.path.basename(path)[len("issue5-"):-len(".json")]
        if base.startswith("tune"):
            continue
        op, grid = base.rsplit("-", 1)
        try:
            doc = json.load(open(path))
        except (OSError, ValueError) as e:
            print(f"{path}: unreadable ({e})", file=sys.stderr)
            continue
        labels = open(path[:-5] + ".labels").read().split()
        copy = doc["copy_gbs"]
        base_gbs = None
        for label, r in zip(labels, doc["results"]):
            ok = r["status"] == "ok"
            gbs = r["gbs"] if ok else None
            if label.startswith("seed") and ok and base_gbs is None:
                base_gbs = gbs
            rows.append({"op": op, "grid": f"{grid}^3", "kernel": label, "config": r["config"],
                         "status": r["status"], "median_ms": r.get("median_ms"),
                         "gbs": gbs, "copy_gbs": copy,
                         "frac_copy": gbs / copy if ok else None})
        for row in rows:
            if row["op"] == op and row["grid"] == f"{grid}^3":
                row["speedup_vs_seed"] = (row["gbs"] / base_gbs
                                          if row["gbs"] and base_gbs else None)
    rows.sort(key=lambda r: (int(r["grid"][:-2]), OPS.index(r["op"]), not r["kernel"].startswith("fdtune")))
    return rows


def fmt(v, f):
    return "-" if v is None else format(v, f)


def svg(rows, path):
    groups = []
    for r in rows:
        key = (r["grid"], r["op"])
        if not groups or groups[-1][0] != key:
            groups.append((key, []))
        groups[-1][1].append(r)
    bar, gap, h, top, left = 16, 22, 320, 40, 60
    width = left + sum(len(g[1]) * bar + gap for g in groups) + 40
    vmax = max([r["copy_gbs"] for r in rows] + [1]) * 1.1
    y = lambda v: top + h - v / vmax * h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h + top + 90}" '
           'font-family="sans-serif" font-size="10">',
           f'<text x="{left}" y="20" font-size="13">Effective bandwidth, R=4 f32 '
           '(grey: seeds\' kernels, blue: fdtune tuned; red line: copy, same run)</text>']
    for t in range(0, int(vmax), 500):
        out.append(f'<line x1="{left}" x2="{width - 20}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                   'stroke="#ddd"/><text x="5" y="%.1f">%d GB/s</text>' % (y(t) + 3, t))
    x = left
    for (grid, op), rs in groups:
        x0 = x
        for r in rs:
            v = r["gbs"] or 0
            colour = "#999" if r["kernel"].startswith("seed") else "#1f77b4"
            out.append(f'<rect x="{x}" y="{y(v):.1f}" width="{bar - 2}" height="{top + h - y(v):.1f}" '
                       f'fill="{colour}"><title>{r["kernel"]} {r["config"]}: {v:.0f} GB/s</title></rect>')
            x += bar
        c = rs[0]["copy_gbs"]
        out.append(f'<line x1="{x0 - 2}" x2="{x}" y1="{y(c):.1f}" y2="{y(c):.1f}" stroke="red"/>')
        out.append(f'<text x="{x0}" y="{top + h + 14}">{op}</text>'
                   f'<text x="{x0}" y="{top + h + 26}">{grid}</text>')
        x += gap
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
    rows = load(outdir)
    if not rows:
        sys.exit(f"no issue5 results in {outdir}")
    cols = ["op", "grid", "kernel", "config", "status", "median_ms", "gbs", "copy_gbs",
            "frac_copy", "speedup_vs_seed"]
    with open(os.path.join(outdir, "issue5.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    svg(rows, os.path.join(outdir, "issue5.svg"))
    print(f"{'op':5} {'grid':7} {'kernel':22} {'GB/s':>6} {'of copy':>7} {'speedup':>7}  config")
    for r in rows:
        print(f"{r['op']:5} {r['grid']:7} {r['kernel']:22} {fmt(r['gbs'], '6.0f')} "
              f"{fmt(r['frac_copy'], '7.3f')} {fmt(r['speedup_vs_seed'], '6.2f')}x  {r['config']}"
              + ("" if r["status"] == "ok" else f"  ({r['status']})"))
    print(f"wrote {outdir}/issue5.csv and {outdir}/issue5.svg")


if __name__ == "__main__":
    main()
