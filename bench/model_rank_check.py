#!/usr/bin/env python3
"""The model's ranking against what tuning runs measured. Reads `fdtune tune` logs (the lines
"OP R=N PREC NXxNYxNZ [i/n] full|probe CONFIG: ok MS ms ..."), fdtune databases (*.db: the
full samples that verified, of cubic grids, on devices whose name holds the GPU named) or CSV
extracts of them (*.csv: columns source, op, R, precision, n, config, time_ms). Asks the model
for its prediction of every measured config (`fdtune tune --dry-run --top 100000
--json` of the same problem on the named catalogue GPU; configs matched by their canonical
keys) and prints per problem: how many measured configs the model ranks, the rank correlation
(Spearman) of predicted and measured times, the spread of log(predicted / measured), and how
the model's first pick, and the best of its first five, among the measured configs compare
with the best measured. The measured configs are those a search chose to measure, not a
sample of the space. No GPU needed.

Usage: bench/model_rank_check.py [--gpu H100] FDTUNE LOG|DB|CSV [...]
Example: bench/model_rank_check.py build/fdtune bench/h100/logs/*653497a.log"""
import collections
import csv
import json
import math
import re
import sqlite3
import subprocess
import sys

LINE = re.compile(r'(\w+) R=(\d+) (f\d+) (\d+)x\d+x\d+ \[\d+/\d+\] (full|probe) +(\S+): ok ([\d.]+) ms')


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0] * len(values)
    for pos, i in enumerate(order):
        r[i] = pos
    return r


def main():
    args = sys.argv[1:]
    gpu = 'H100'
    if len(args) > 1 and args[0] == '--gpu':
        gpu, args = args[1], args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    fdtune, logs = args[0], args[1:]
    measured = collections.defaultdict(dict)  # problem -> config -> ms (a full sample wins)
    for path in logs:
        if path.endswith('.csv'):
            for row in csv.DictReader(open(path)):
                measured[(row['op'], row['R'], row['precision'], row['n'])][row['config']] = \
                    float(row['time_ms'])
            continue
        if path.endswith('.db'):
            db = sqlite3.connect(f'file:{path}?mode=ro', uri=True)
            q = ("SELECT p.op, p.radius, p.precision, p.nx, c.key, e.time_ms FROM evaluations e "
                 "JOIN problems p ON p.id = e.problem_id JOIN configs c ON c.id = e.config_id "
                 "JOIN devices d ON d.id = e.device_id WHERE e.status = 'ok' AND e.stage = 'full' "
                 "AND p.nx = p.ny AND p.ny = p.nz AND d.name LIKE ?")
            for op, R, prec, n, config, ms in db.execute(q, (f'%{gpu}%',)):
                measured[(op, str(R), prec, str(n))][config] = ms
            db.close()
            continue
        for line in open(path):
            m = LINE.match(line)
            if not m:
                continue
            op, R, prec, n, kind, config, ms = m.groups()
            d = measured[(op, R, prec, n)]
            if kind == 'full' or config not in d:
                d[config] = float(ms)
    for (op, R, prec, n), d in sorted(measured.items()):
        out = subprocess.run([fdtune, 'tune', '--op', op, '--R', R, '--precision', prec,
                              '--grid', n + '^3', '--gpu', gpu, '--dry-run', '--top', '100000',
                              '--json'], capture_output=True, text=True, check=True).stdout
        predicted = {row['config']: row['predicted_ms']
                     for row in json.loads(out)['problems'][0]['ranking']}
        pairs = [(predicted[k], ms) for k, ms in d.items() if k in predicted]
        if len(pairs) < 5:
            continue
        rp, rm = ranks([p for p, _ in pairs]), ranks([m for _, m in pairs])
        npairs = len(pairs)
        spearman = 1 - 6 * sum((a - b) ** 2 for a, b in zip(rp, rm)) / (npairs * (npairs ** 2 - 1))
        logs_ = [math.log(p / m) for p, m in pairs]
        mean = sum(logs_) / npairs
        spread = math.sqrt(sum((x - mean) ** 2 for x in logs_) / npairs)
        best = min(m for _, m in pairs)
        first = min(pairs)[1]
        top5 = min(m for _, m in sorted(pairs)[:5])
        print(f'{op} R={R} {prec} {n}^3: {npairs} measured configs ranked, Spearman {spearman:.3f}, '
              f'log error spread {spread:.3f}; the model\'s first pick {first / best:.3f}x the best '
              f'measured, the best of its first five {top5 / best:.3f}x')


if __name__ == '__main__':
    main()
