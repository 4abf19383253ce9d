#!/usr/bin/env python3
"""Counts the SASS of one march step of a ring or stream kernel (between two consecutive
BAR.SYNC, the last step's barrier excluded) from `fdtune gen --compile --disasm` output, by
instruction class: how many instructions the step issues, FP, shared loads, copies, the rest.
Usage: sass_steps.py FILE..."""
import collections, re, sys

def steps(path):
    ins = []
    for line in open(path):
        m = re.match(r'//\s+/\*([0-9a-f]{4,6})\*/\s+(.*?);', line)
        if m:
            text = m.group(2).strip()
            op = text.split()[1] if text.startswith('@') else text.split()[0]
            ins.append((int(m.group(1), 16), op))
    bars = [a for a, op in ins if op.startswith('BAR.SYNC')]
    if len(bars) < 3:
        return None
    a, b = bars[1], bars[2]  # a step in the middle of the unrolled march
    return [op for addr, op in ins if a <= addr < b]

for path in sys.argv[1:]:
    s = steps(path)
    if s is None:
        print(f"{path}: fewer than three barriers"); continue
    c = collections.Counter()
    for op in s:
        base = op.split('.')[0]
        c['fp' if base in ('FFMA', 'FADD', 'FMUL', 'DFMA', 'DADD', 'DMUL') else
          'lds' if base == 'LDS' else 'copy' if base == 'LDGSTS' else
          'store' if base == 'STG' else 'other'] += 1
    print(f"{path}: {len(s)} per step: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
