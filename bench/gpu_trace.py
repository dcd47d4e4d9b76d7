#!/usr/bin/env python3
"""Where a run's GPU time goes, from the GPU's own clock (issues 17 and 19).

  python3 bench/gpu_trace.py --models-dir DIR [--refs REFS] --out OUT --models a,b \
      [--runs 20] [--factors 1.25] [--top 8] [--peak 65] BIN[@VAR=VALUE...]

Per model: one process with --runs N --trace (the last run traced) with no
budget, then one at each factor x the model's lower bound (read from the
no-budget run's --stats). Where the GPU has timer queries (--trace's "GPU
kernels" and "GPU copies" tracks: each command between two timestamps, the run
waiting for nothing), prints per run:
- the span from the first command's start to the last one's end, the time
  kernels and copies took (each from its own two timestamps), and run_ms from
  --stats of a process with --runs N and no trace (the traced process: 3 runs);
- the copies: bytes, time, bytes / time, and how much of their time fell while a
  kernel ran (a timestamp waits for the commands before it, so a copy timed
  between two stamps does not overlap anything; this says whether the driver
  still ran them side by side);
- GPU time by kernel kind, and the --top kernels that multiply (conv2d,
  dwconv2d, matmul) by GPU time with their achieved TFLOP/s and its share of
  --peak TFLOP/s (65: the H200's fp32 FMA loop through GLES compute).
Writes OUT/gpu_trace.md (and the traces, OUT/MODEL[-xF].trace.json).
Without timer queries the trace has no GPU tracks and the model says so.
"""
import argparse, collections, json, os, subprocess, sys

from stream_h200 import inputs  # the references' inputs as --input arguments



def union(iv):
    """Total length of the union of intervals [a, b)."""
    tot, end = 0.0, None
    for a, b in sorted(iv):
        if end is None or a > end:
            tot += b - a
            end = b
        elif b > end:
            tot += b - end
            end = b
    return tot


def overlap(xs, ys):
    """Length of the union of xs that falls within the union of ys."""
    ys = sorted(ys)
    merged = []
    for a, b in ys:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    got = []
    for a, b in xs:
        for c, d in merged:
            lo, hi = max(a, c), min(b, d)
            if lo < hi:
                got.append((lo, hi))
    return union(got)


def summarize(path, top, peak, out):
    ev = json.load(open(path))['traceEvents']
    names = {e['tid']: e['args']['name'] for e in ev if e.get('ph') == 'M' and e.get('name') == 'thread_name'}
    tid = {v: k for k, v in names.items()}
    if 'GPU kernels' not in tid:
        out.append('no GPU tracks in the trace (no timer queries): nothing to sum\n')
        return
    k = [e for e in ev if e.get('ph') == 'X' and e['tid'] == tid['GPU kernels']]
    c = [e for e in ev if e.get('ph') == 'X' and e['tid'] == tid.get('GPU copies')]
    if not k and not c:
        out.append('no GPU events\n')
        return
    allx = k + c
    span = max(e['ts'] + e['dur'] for e in allx) - min(e['ts'] for e in allx)
    kiv = [(e['ts'], e['ts'] + e['dur']) for e in k]
    civ = [(e['ts'], e['ts'] + e['dur']) for e in c]
    kt, ct = union(kiv), union(civ)
    cb = sum(e['args'].get('bytes', 0) for e in c)
    hidden = overlap(civ, kiv)
    out.append('span %.3f ms: kernels %.3f ms (%d), copies %.3f ms (%d, %.2f MB, %s), copy time '
               'while a kernel ran %.3f ms\n' % (
                   span / 1e3, kt / 1e3, len(k), ct / 1e3, len(c), cb / 1e6,
                   '%.1f GB/s' % (cb / ct / 1e3) if ct > 0 else '-', hidden / 1e3))
    by = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for e in k:
        by[e['name']][0] += 1
        by[e['name']][1] += e['dur']
        by[e['name']][2] += e['args'].get('flops', 0)
    out.append('| kernel kind | dispatches | GPU ms | share | TFLOP/s |\n|---|---:|---:|---:|---:|\n')
    for n, (cnt, us, fl) in sorted(by.items(), key=lambda x: -x[1][1]):
        out.append('| %s | %d | %.3f | %.0f%% | %s |\n' % (
            n, cnt, us / 1e3, 100 * us / kt if kt else 0, '%.3g' % (fl / us / 1e6) if fl and us else '-'))
    mm = sorted((e for e in k if e['args'].get('flops', 0) > 0), key=lambda e: -e['dur'])[:top]
    if mm:
        out.append('\n| largest (GPU time) | kind | us | GFLOP | TFLOP/s | of %g |\n|---|---|---:|---:|---:|---:|\n' % peak)
        for e in mm:
            fl = e['args']['flops']
            r = fl / e['dur'] / 1e6 if e['dur'] > 0 else 0
            out.append('| %s | %s | %.1f | %.3g | %.3g | %.2g%% |\n' % (
                e['args'].get('detail', '')[-60:], e['name'], e['dur'], fl / 1e9, r, 100 * r / peak))
    out.append('\n')


def run(bin_, env, model, args, runs, vram, trace, stats):
    cmd = [bin_, '-q', '--no-plan-cache', '--runs', str(runs), '--stats', stats] + args
    if trace:
        cmd += ['--trace', trace]
    if vram:
        cmd += ['--vram', str(vram)]
    p = subprocess.run(cmd + [model], capture_output=True, text=True, env=dict(os.environ, **env))
    if p.returncode:
        return None, p.stderr.strip()[-300:]
    return json.load(open(stats)), ''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--models-dir', required=True)
    ap.add_argument('--refs', default='')
    ap.add_argument('--out', required=True)
    ap.add_argument('--models', required=True)
    ap.add_argument('--runs', type=int, default=20)
    ap.add_argument('--factors', default='1.25')
    ap.add_argument('--top', type=int, default=8)
    ap.add_argument('--peak', type=float, default=65.0)
    ap.add_argument('config')
    a = ap.parse_args()
    parts = a.config.split('@')
    bin_, env = parts[0], dict(p.split('=', 1) for p in parts[1:])
    os.makedirs(a.out, exist_ok=True)
    out = ['# GPU time by kernel (`bench/gpu_trace.py`, %s)\n\n' % a.config]
    for name in [m for m in a.models.split(',') if m]:
        model = os.path.join(a.models_dir, name if name.endswith('.json') or os.path.isdir(
            os.path.join(a.models_dir, name)) else name + '.json')
        args = inputs(a.refs, name) if a.refs else []
        lb = None
        for f in [None] + [float(x) for x in a.factors.split(',') if x]:
            tag = name if f is None else '%s-x%g' % (name, f)
            if f is not None and not lb:
                break
            vram = int(lb * f) if f is not None else None
            trace = os.path.join(a.out, tag + '.trace.json')
            st, err = run(bin_, env, model, args, a.runs, vram, None, os.path.join(a.out, tag + '.stats.json'))
            if st is not None:
                _, err = run(bin_, env, model, args, 3, vram, trace, os.path.join(a.out, tag + '.traced.json'))
            out.append('## %s, %s\n\n' % (name, 'no budget' if f is None else '%g x the lower bound (%d bytes)' % (f, vram)))
            if st is None or err:
                out.append('failed: %s\n\n' % err)
                continue
            if f is None:
                lb = int(st['lower_bound_bytes'])
            out.append('run_ms %.3f (untraced, --runs %d); traced: the last of 3 runs\n\n' % (st.get('run_ms', 0), a.runs))
            summarize(trace, a.top, a.peak, out)
    text = ''.join(out)
    open(os.path.join(a.out, 'gpu_trace.md'), 'w').write(text)
    sys.stdout.write(text)


if __name__ == '__main__':
    main()
