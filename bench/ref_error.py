#!/usr/bin/env python3
"""Largest error of a run's outputs against the references tests use (TensorFlow.js):
max |out - ref| / max(1, max |ref|) over every output, as tests/test_models.c measures
it (it fails above 1e-3). No numpy needed.

  python3 bench/ref_error.py OUTDIR REFDIR      (REFDIR/manifest.json names the outputs)
"""
import array, ast, json, os, sys


def npy(path):
    b = open(path, 'rb').read()
    if b[:6] != b'\x93NUMPY':
        raise ValueError(path + ': not an npy file')
    hl = int.from_bytes(b[8:10], 'little') if b[6] == 1 else int.from_bytes(b[8:12], 'little')
    start = (10 if b[6] == 1 else 12) + hl
    h = ast.literal_eval(b[(10 if b[6] == 1 else 12):start].decode('latin1'))
    code = {'<f4': 'f', '<i4': 'i', '<f8': 'd', '|b1': 'b', '<i8': 'q', '|u1': 'B'}[h['descr']]
    a = array.array(code)
    a.frombytes(b[start:])
    return list(a)


def main():
    out, ref = sys.argv[1], sys.argv[2]
    m = json.load(open(os.path.join(ref, 'manifest.json')))
    worst, seen = 0.0, 0
    for o in m['outputs']:
        if not os.path.exists(os.path.join(ref, o['file'])):
            continue
        seen += 1
        r = npy(os.path.join(ref, o['file']))
        p = os.path.join(out, o['file'])
        if not os.path.exists(p):
            p = os.path.join(out, o['name'].replace('/', '_').replace(':', '_') + '.npy')
        x = npy(p)
        if len(x) != len(r):
            print('%s: %d elements, the reference %d' % (o['name'], len(x), len(r)))
            worst = float('inf')
            continue
        scale = max([1.0] + [abs(v) for v in r])
        e = max([0.0] + [abs(a - b) for a, b in zip(x, r)]) / scale
        worst = max(worst, e)
    print('%.3g' % worst if seen else '- (no output references)')


if __name__ == '__main__':
    main()
