#!/usr/bin/env python3
"""Is a steady run bound by the CPU that issues it? For each model and build
(LABEL=BIN[@VAR=VALUE...]), one process of 1 run and one of N+1 runs (no
budget, no plan cache); the difference over N gives each later run's wall, user
and system CPU time (the children's rusage), beside the issue_ms (--stats: the
CPU's time in the steps' GL calls of the last run, without the waits) and the
run_ms median --stats reports for the N+1-run process. The NVIDIA driver spins while it waits for the GPU, so user + sys
near wall says little; issue_ms near run_ms says the GPU waits on the CPU.

  python3 bench/cpu_bound.py MODELS_DIR N MODEL,MODEL,... LABEL=BIN[@VAR=VALUE...] ...
"""
import json, os, resource, subprocess, sys, tempfile, time


def one(si, env, model, n, stats):
    u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    subprocess.run([si, '-q', '--no-plan-cache', '--runs', str(n), '--stats', stats, model],
                   stdout=subprocess.DEVNULL, check=True, env=dict(os.environ, **env))
    u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = json.load(open(stats))
    return (time.time() - t0, u1.ru_utime - u0.ru_utime, u1.ru_stime - u0.ru_stime,
            s.get('issue_ms', float('nan')), s['run_ms_median'])


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    models, n, names = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(',')
    builds = []
    for a in sys.argv[4:]:
        label, rest = a.split('=', 1)
        parts = rest.split('@')
        builds.append((label, parts[0], dict(p.split('=', 1) for p in parts[1:])))
    stats = os.path.join(tempfile.mkdtemp(prefix='cpu-'), 's.json')
    print('| model | build | wall ms a run | user ms | sys ms | issue_ms (last run) | run_ms median |')
    print('|---|---|---:|---:|---:|---:|---:|')
    for m in names:
        path = os.path.join(models, m + '.json')
        for label, si, env in builds:
            a, b = one(si, env, path, 1, stats), one(si, env, path, n + 1, stats)
            d = [(b[k] - a[k]) / n * 1e3 for k in range(3)]
            print('| %s | %s | %.3f | %.3f | %.3f | %.3f | %.3f |' % (m, label, d[0], d[1], d[2], b[3], b[4]))


if __name__ == '__main__':
    main()
