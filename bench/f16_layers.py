#!/usr/bin/env python3
"""Where a model loses precision at --precision f16: the chain of N nodes that ends
at NODE (back through each node's first input that is not a constant), each made a
model output, run at f32 and at f16 on the same inputs; for each node, its largest
value at f32 and how far f16 is from f32 there (max |f16 - f32|, and that over the
largest |f32|). An output stays float32 at f16, so each node is read as computed
from halves, before its own rounding. No numpy needed.

  python3 bench/f16_layers.py BUILD MODEL.json NODE N [--input ...]

BUILD: a build folder (its streaminfer); MODEL.json: a graph model with its shards
beside it (copied, with the outputs replaced, into a temporary folder); --input and
what follows are passed to streaminfer as they are (default: its seeded inputs).
"""
import json, os, re, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_error import npy  # noqa: E402


def chain(model, node, n):
    by = {x['name']: x for x in model['modelTopology']['node']}
    out, cur = [], node
    while cur in by and len(out) < n:
        x = by[cur]
        if x['op'] != 'Identity':
            out.append(cur)
        ins = [i.split(':')[0] for i in x.get('input', []) if not i.startswith('^')]
        ins = [i for i in ins if i in by and by[i]['op'] != 'Const']
        if not ins:
            break
        cur = ins[0]
    return [(c, by[c]['op']) for c in out]


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    build, src, node, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    extra = sys.argv[5:]
    model = json.load(open(src))
    nodes = chain(model, node, n)
    if not nodes:
        sys.exit(f'{src}: no node {node}')
    model['signature'] = dict(model.get('signature') or {})
    model['signature']['outputs'] = {f'o{i}': {'name': c + ':0', 'dtype': 'DT_FLOAT'}
                                     for i, (c, _) in enumerate(nodes)}
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, 'm'))
        for g in model.get('weightsManifest', []):
            for p in g['paths']:
                shutil.copy(os.path.join(os.path.dirname(src), p), os.path.join(tmp, 'm', p))
        json.dump(model, open(os.path.join(tmp, 'm', 'model.json'), 'w'))
        for prec in ('f32', 'f16'):
            subprocess.run([os.path.join(build, 'streaminfer'), '-q', '--precision', prec, *extra,
                            '--output', os.path.join(tmp, prec), os.path.join(tmp, 'm')],
                           check=True, stdout=subprocess.DEVNULL)
        print('| node | op | max abs f32 | max abs f16 - f32 | relative |')
        print('|---|---|---:|---:|---:|')
        for c, op in nodes:
            f = re.sub(r'[^A-Za-z0-9._-]', '_', c) + '.npy'
            a, b = npy(os.path.join(tmp, 'f32', f)), npy(os.path.join(tmp, 'f16', f))
            big = max((abs(v) for v in a), default=0.0)
            d = max((abs(p - q) for p, q in zip(a, b)), default=0.0)
            print(f'| {c} | {op} | {big:.4g} | {d:.4g} | {d / big if big else 0:.3g} |')


if __name__ == '__main__':
    main()
