#!/usr/bin/env python3
"""Fits the model's estimate of sm_90 machine code (search/onchip.c, code_size) to the kernels
of bench/codesize_sm90.txt: least squares per family (ring lds=2, stream lds=3), printing the
coefficients, the mean and largest relative error, and the same left out one at a time.
Needs numpy (Debian: python3-numpy). Usage: bench/codesize_fit.py [bench/codesize_sm90.txt]"""
import sys

import numpy as np


def rows(path):
    out = []
    for line in open(path):
        if line.startswith('#') or not line.strip():
            continue
        op, R, prec, cfg, size = line.split()
        R, size = int(R), float(size)
        c = dict(kv.split('=') for kv in cfg.split(','))
        T, V, bx, by = int(c['tile']), int(c['vec']), int(c['bx']), int(c['by'])
        hx = (R + V - 1) // V * V
        nt = bx * by
        lds = c['lds']
        wave = op == 'wave'
        out.append(dict(
            lds=lds, size=size, desc=f'{op} R={R} {prec} {cfg}',
            Q=2 * R + 1, fp=(6 * R + 4) * T * V, ld=T + 2 * R + 2 * T * hx / V,
            wave=float(wave), mbar=float(c.get('mbar', '0') != '0'),
            # the copies one unrolled step issues (fdt_model_onchip's count)
            cp=T + 2 * R * bx / nt + 2 * (hx / V) * by * T / nt + (wave * (3 if lds == '3' else 2) * T)))
    return out


FEATURES = {
    '2': lambda r: [1, r['Q'] * r['fp'], r['Q'] * r['ld'], r['Q'] * r['wave'], r['Q'], r['Q'] * r['cp']],
    '3': lambda r: [1, r['Q'] * r['fp'], r['Q'] * r['ld'], r['Q'] * r['wave'], r['Q'], r['Q'] * r['mbar'],
                    r['Q'] * r['cp']],
}


def main():
    data = rows(sys.argv[1] if len(sys.argv) > 1 else 'bench/codesize_sm90.txt')
    for lds, name in (('3', 'stream'), ('2', 'ring')):
        rs = [r for r in data if r['lds'] == lds]
        A = np.array([FEATURES[lds](r) for r in rs], dtype=float)
        y = np.array([r['size'] for r in rs])
        x, *_ = np.linalg.lstsq(A, y, rcond=None)
        err = (A @ x - y) / y
        loo = []
        for i in range(len(rs)):
            keep = np.arange(len(rs)) != i
            xi, *_ = np.linalg.lstsq(A[keep], y[keep], rcond=None)
            loo.append(abs(A[i] @ xi - y[i]) / y[i])
        print(f'{name} ({len(rs)}): ' + ' '.join(f'{v:.1f}' for v in x))
        print(f'  mean error {np.abs(err).mean():.3f}, largest over {err.max():.3f}, under {-err.min():.3f}; '
              f'left out one at a time: mean {np.mean(loo):.3f}, largest {np.max(loo):.3f}')


if __name__ == '__main__':
    main()
