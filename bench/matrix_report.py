#!/usr/bin/env python3
"""Heatmap of bench/matrix.sh's CSV: for every GPU in it, one panel with a row per (operator,
precision, grid) and a column per radius; each cell is coloured by frac_copy (the tuned best's
bandwidth over the copy bandwidth of the same run) and names the model's predicted bound.
Python's standard library only (the GPU machines have no matplotlib to rely on). Also prints
the table. Usage: matrix_report.py MATRIX.csv OUT.svg"""
import csv
import sys
from html import escape

CELL_W, CELL_H, LEFT, TOP, PANEL_GAP = 96, 42, 190, 56, 36


def colour(frac):
    """Red (0.3 of copy and below) through yellow (0.65) to green (1.0)."""
    t = min(1.0, max(0.0, (frac - 0.3) / 0.7))
    if t < 0.5:
        r, g = 220, int(60 + 2 * t * 160)
    else:
        r, g = int(220 - (t - 0.5) * 2 * 170), 220
    return f"rgb({r},{g},70)"


def main(path, out):
    rows = list(csv.DictReader(open(path, newline="")))
    if not rows:
        print(f"{path}: no cells yet")
        return 0
    gpus = list(dict.fromkeys(r["gpu"] for r in rows))
    radii = sorted({int(r["R"]) for r in rows})
    svg, y = [], 10
    for gpu in gpus:
        mine = [r for r in rows if r["gpu"] == gpu]
        lines = sorted({(r["op"], r["precision"], int(r["nx"]), int(r["ny"]), int(r["nz"]))
                        for r in mine}, key=lambda k: (k[2], k[0], k[1]))
        svg.append(f'<text x="10" y="{y + 20}" font-size="16" font-weight="bold">'
                   f'{escape(gpu)}: tuned best / copy bandwidth (model\'s bound)</text>')
        for j, R in enumerate(radii):
            svg.append(f'<text x="{LEFT + j * CELL_W + CELL_W / 2}" y="{y + TOP - 8}" '
                       f'font-size="13" text-anchor="middle">R={R}</text>')
        for i, (op, prec, nx, ny, nz) in enumerate(lines):
            yy = y + TOP + i * CELL_H
            grid = f"{nx}^3" if nx == ny == nz else f"{nx}x{ny}x{nz}"
            svg.append(f'<text x="{LEFT - 8}" y="{yy + CELL_H / 2 + 5}" font-size="13" '
                       f'text-anchor="end">{op} {prec} {grid}</text>')
            for j, R in enumerate(radii):
                x = LEFT + j * CELL_W
                hit = [r for r in mine if (r["op"], r["precision"], int(r["nx"]), int(r["ny"]),
                                           int(r["nz"]), int(r["R"])) == (op, prec, nx, ny, nz, R)]
                if not hit:
                    svg.append(f'<rect x="{x}" y="{yy}" width="{CELL_W - 2}" height="{CELL_H - 2}" '
                               f'fill="#eee"/>')
                    continue
                r = hit[-1]
                f = float(r["frac_copy"])
                tip = escape(f'{r["config"]}: {float(r["gbs"]):.0f} GB/s of {float(r["copy_gbs"]):.0f}')
                svg.append(f'<rect x="{x}" y="{yy}" width="{CELL_W - 2}" height="{CELL_H - 2}" '
                           f'fill="{colour(f)}"><title>{tip}</title></rect>')
                svg.append(f'<text x="{x + CELL_W / 2 - 1}" y="{yy + 18}" font-size="14" '
                           f'text-anchor="middle">{f:.3f}</text>')
                svg.append(f'<text x="{x + CELL_W / 2 - 1}" y="{yy + 34}" font-size="11" '
                           f'text-anchor="middle">{escape(r["predicted_bound"])}</text>')
        y += TOP + len(lines) * CELL_H + PANEL_GAP
    width = max(LEFT + len(radii) * CELL_W + 20, 640)  # room for the title
    with open(out, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" '
                f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>\n')
        f.write("\n".join(svg))
        f.write("\n</svg>\n")
    print(f"{'gpu':24s} {'op':4s} {'R':>2s} {'prec':4s} {'grid':>9s} {'GB/s':>7s} {'of copy':>7s} "
          f"{'bound':7s} {'tune s':>6s}  config")
    for r in rows:
        print(f'{r["gpu"][:24]:24s} {r["op"]:4s} {r["R"]:>2s} {r["precision"]:4s} '
              f'{r["nx"] + "^3":>9s} {float(r["gbs"]):7.0f} {float(r["frac_copy"]):7.3f} '
              f'{r["predicted_bound"]:7s} {r["tune_wall_s"]:>6s}  {r["config"]}')
    print(f"heatmap: {out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: matrix_report.py MATRIX.csv OUT.svg")
    sys.exit(main(sys.argv[1], sys.argv[2]))
