#!/usr/bin/env python3
"""Issue 19: what a budget costs, for several builds or settings, in one call.

  python3 bench/stream_h200.py --models-dir DIR --refs REFS --out OUT [--runs 100]
      [--factors 1.25,1.0] [--budgets none,256M] [--rounds 2] --models a,b,c \
      LABEL=BIN[@VAR=VALUE...] ...

Per model and configuration (a build, with environment variables such as
SI_COPY_KERNELS=-1 or SI_PLAN_PREFETCH=1): steady-state run_ms with no budget
(--runs N, their median), then at each factor x the model's lower bound
(and at each of --budgets' sizes), its run_ms, the ratio to the same
configuration's no-budget run_ms, whether the outputs are bitwise that
no-budget run's, and the bytes uploaded a run (stream.json also keeps the
least median's issue_ms and stall_ms: the CPU's time issuing and waiting). Configurations are interleaved
per model and the whole repeated --rounds times; the table keeps the least
median of the rounds. Inputs: the references' (REFS/NAME/manifest.json), else
random. Writes OUT/stream.md and OUT/stream.json; prints the table.
"""
import argparse, json, os, shutil, subprocess, tempfile


def inputs(refs, name):
    d = os.path.join(refs, name)
    for f in ('manifest.json', 'meta.json'):
        p = os.path.join(d, f)
        if os.path.exists(p):
            m = json.load(open(p))
            return sum((['--input', '%s=%s' % (i['name'], os.path.join(d, i['file']))] for i in m['inputs']), [])
    return []


def run(bin_, env, model, args, runs, vram):
    out = tempfile.mkdtemp(prefix='st-')
    cmd = [bin_, '-q', '--no-plan-cache', '--runs', str(runs), '--output', out, '--stats',
           os.path.join(out, 's.json')] + args
    if vram:
        cmd += ['--vram', str(vram)]
    p = subprocess.run(cmd + [model], capture_output=True, text=True, env=dict(os.environ, **env))
    if p.returncode:
        shutil.rmtree(out, ignore_errors=True)
        return None, None, p.stderr.strip()[-200:]
    return json.load(open(os.path.join(out, 's.json'))), out, ''


def files(d):
    r = {}
    for root, _, fs in os.walk(d):
        for f in fs:
            if f.endswith('.npy'):
                r[os.path.relpath(os.path.join(root, f), d)] = open(os.path.join(root, f), 'rb').read()
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--models-dir', required=True)
    ap.add_argument('--refs', default='')
    ap.add_argument('--out', required=True)
    ap.add_argument('--models', required=True)
    ap.add_argument('--runs', type=int, default=100)
    ap.add_argument('--factors', default='1.25,1.0')
    ap.add_argument('--budgets', default='')
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('configs', nargs='+')
    a = ap.parse_args()
    cfgs = []
    for c in a.configs:
        label, rest = c.split('=', 1)
        parts = rest.split('@')
        cfgs.append((label, parts[0], dict(p.split('=', 1) for p in parts[1:])))
    factors = [float(f) for f in a.factors.split(',') if f]
    budgets = [b for b in a.budgets.split(',') if b]
    os.makedirs(a.out, exist_ok=True)
    best = {}
    for rnd in range(a.rounds):
        for name in [m for m in a.models.split(',') if m]:
            model = os.path.join(a.models_dir, name if name.endswith('.json') or os.path.isdir(
                os.path.join(a.models_dir, name)) else name + '.json')
            args = inputs(a.refs, name) if a.refs else []
            for label, bin_, env in cfgs:
                st, d, err = run(bin_, env, model, args, a.runs, None)
                key = (name, label)
                row = best.setdefault(key, {'none': None, 'cols': {}})
                if not st:
                    row['error'] = err
                    print(name, label, 'no budget failed:', err, flush=True)
                    continue
                free = files(d)
                shutil.rmtree(d, ignore_errors=True)
                if row['none'] is None or st['run_ms_median'] < row['none']:
                    row['none'] = st['run_ms_median']
                lb = int(st['lower_bound_bytes'])
                cols = [('%gxLB' % f, int(lb * f)) for f in factors] + [(b, b) for b in budgets]
                for col, vram in cols:
                    s2, d2, err2 = run(bin_, env, model, args, a.runs, vram)
                    c = row['cols'].setdefault(col, {'ms': None, 'same_bits': True, 'uploaded': None,
                                                     'budget': vram, 'peak': None, 'error': ''})
                    if not s2:
                        c['error'] = err2
                        c['same_bits'] = False
                        continue
                    same = files(d2) == free
                    shutil.rmtree(d2, ignore_errors=True)
                    c['same_bits'] = c['same_bits'] and same
                    if c['ms'] is None or s2['run_ms_median'] < c['ms']:
                        c['ms'] = s2['run_ms_median']
                        # the CPU's share of that run (is it bound by issuing?)
                        c['issue_ms'], c['stall_ms'] = s2.get('issue_ms'), s2.get('stall_ms')
                    c['uploaded'] = s2['bytes_uploaded']
                    c['peak'] = s2['peak_vram_bytes']
                print(rnd, name, label, json.dumps(row), flush=True)
    colnames = [('%gxLB' % f) for f in factors] + budgets
    lines = ['| model | config | none ms | ' + ' | '.join('%s ms (ratio, same bits, MB up)' % c for c in colnames) + ' |',
             '|---|---|---:|' + '---:|' * len(colnames)]
    for (name, label), row in best.items():
        cells = []
        for c in colnames:
            x = row['cols'].get(c)
            if not x or x['ms'] is None or not row['none']:
                cells.append('failed: %s' % (x['error'][:60] if x else row.get('error', '')))
                continue
            cells.append('%.3f (%.2f, %s, %.1f)' % (x['ms'], x['ms'] / row['none'], 'yes' if x['same_bits'] else 'NO',
                                                  (x['uploaded'] or 0) / 1e6))
        lines.append('| %s | %s | %s | %s |' % (name, label, '%.3f' % row['none'] if row['none'] else '-',
                                              ' | '.join(cells)))
    text = '\n'.join(lines) + '\n'
    print(text)
    open(os.path.join(a.out, 'stream.md'), 'w').write(text)
    json.dump({'%s|%s' % k: v for k, v in best.items()}, open(os.path.join(a.out, 'stream.json'), 'w'), indent=1)


if __name__ == '__main__':
    main()
