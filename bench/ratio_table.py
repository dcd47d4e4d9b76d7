#!/usr/bin/env python3
"""Issue 17's ratio table from medians: bench/stream_h200.py's stream.json (each
configuration's no-budget run_ms, the median of its runs, the least over rounds) against
torchref's CUDA-graph medians (../shared/peers/torchref/bench.py --out JSON), same call.

  python3 bench/ratio_table.py STREAM_JSON TORCHREF_JSON
"""
import json, math, sys

st = json.load(open(sys.argv[1]))
try:
    tr = {r['model']: r for r in json.load(open(sys.argv[2]))['results']}
except (OSError, ValueError, KeyError) as ex:  # no torchref figures: the medians alone
    print('(no torchref figures: %s)' % ex)
    tr = {}
configs = []
for key in st:
    c = key.split('|', 1)[1]
    if c not in configs:
        configs.append(c)
models = []
for key in st:
    m = key.split('|', 1)[0]
    if m not in models:
        models.append(m)
print('| model | cuDNN graph ms | ' + ' | '.join('%s ms (ratio)' % c for c in configs) + ' |')
print('|---|---:|' + '---:|' * len(configs))
logs = {c: [] for c in configs}
for m in models:
    g = (tr.get(m, {}).get('graph') or {}).get('median')
    cells = []
    for c in configs:
        v = st.get('%s|%s' % (m, c), {}).get('none')
        if v and g:
            logs[c].append(math.log(v / g))
            cells.append('%.3f (%.2f)' % (v, v / g))
        else:
            cells.append('%s' % v)
    print('| %s | %s | %s |' % (m, '%.3f' % g if g else '-', ' | '.join(cells)))
print('| geometric mean | | ' + ' | '.join('(%.2f)' % math.exp(sum(l) / len(l)) if l else '-' for l in logs.values()) + ' |')
