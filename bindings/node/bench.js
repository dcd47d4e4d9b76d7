#!/usr/bin/env node
'use strict';
// The binding's cost per call against the C library on the same model and input,
// and TensorFlow.js (cpu and wasm backends) on the same model in the same kind of
// process: ms per run (median) and peak RSS, each way in a process of its own.
//   node bindings/node/bench.js [--c build/bench/c_runs] [--models DIR]
//        [--hold build/bench/hold_context] [--model NAME] [--runs N] [--tiny-runs N]
//        [--out bench/results/node.md]
// (make node-bench). TensorFlow.js comes from bindings/node/bench/node_modules
// (npm ci there: tfjs-core, -converter, -backend-cpu and -backend-wasm 4.22.0).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.resolve(__dirname, '../..');
const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
const WARM = 3;

function npy(file, shape, data) { // float32 .npy, version 1.0
  let h = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  h += ' '.repeat(63 - ((10 + h.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(head);
  head.writeUInt16LE(h.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(h, 'latin1'), Buffer.from(data.buffer)]));
}

function input(shape) { // seeded, the same bits for every way
  const n = shape.reduce((a, d) => a * d, 1);
  const x = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    x[i] = (s >>> 8) / (1 << 24);
  }
  return x;
}

// ---------------------------------------------------------------- one way, in a child

async function child(way, model, shape, runs) {
  const x = input(shape);
  const times = [];
  const extra = [];
  if (way === 'execute' || way === 'executeAsync') {
    const { loadGraphModel } = require('.');
    const m = await loadGraphModel(model);
    const t = { data: x, shape, dtype: 'float32' };
    for (let i = -WARM; i < runs; i++) {
      const t0 = process.hrtime.bigint();
      const out = way === 'execute' ? m.execute(t) : await m.executeAsync(t);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (!out) throw new Error('no output');
      if (i >= 0) {
        times.push(ms);
        extra.push(ms - m.stats().run_ms); // outside the library's run_ms, this very call
      }
    }
    m.dispose();
  } else {
    const req = require('module').createRequire(path.join(__dirname, 'bench', 'package.json'));
    const tf = req('@tensorflow/tfjs-core');
    req('@tensorflow/tfjs-backend-cpu');
    const backend = way.replace('tfjs-', '');
    if (backend === 'wasm') req('@tensorflow/tfjs-backend-wasm');
    await tf.setBackend(backend);
    await tf.ready();
    const { loadGraphModel } = req('@tensorflow/tfjs-converter');
    const json = JSON.parse(fs.readFileSync(model, 'utf8'));
    const specs = [];
    const bufs = [];
    for (const g of json.weightsManifest) {
      for (const p of g.paths) bufs.push(fs.readFileSync(path.join(path.dirname(model), p)));
      specs.push(...g.weights);
    }
    const all = Buffer.concat(bufs);
    const m = await loadGraphModel({
      load: async () => ({
        modelTopology: json.modelTopology, weightSpecs: specs, format: json.format,
        weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
      }),
    });
    const t = tf.tensor(x, shape, 'float32');
    for (let i = -WARM; i < runs; i++) {
      const t0 = process.hrtime.bigint();
      const out = [].concat(m.execute(t));
      for (const o of out) o.dataSync();
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      tf.dispose(out);
      if (i >= 0) times.push(ms);
    }
  }
  return { ms_per_run: median(times), outside_ms: extra.length ? median(extra) : null, maxrss_kb: process.resourceUsage().maxRSS };
}

// ---------------------------------------------------------------- the table

function spawnWay(way, model, shape, runs, tmp) {
  if (way === 'C library') {
    const file = path.join(tmp, `in-${shape.join('x')}.npy`);
    npy(file, shape, input(shape));
    const r = spawnSync(arg('c', path.join(ROOT, 'build', 'bench', 'c_runs')), [model, file, String(WARM), String(runs)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`c_runs: ${r.stderr || r.error}`);
    return JSON.parse(r.stdout);
  }
  const r = spawnSync(process.execPath, [__filename, '--child', way, model, shape.join(','), String(runs)], { encoding: 'utf8' });
  if (r.status !== 0) return { error: (r.stderr || '').trim().split('\n').slice(-1)[0] };
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

function tinyModel(dir, shape) { // x -> Square -> AddV2(., x)
  const f = { type: 'DT_FLOAT' };
  const node = [
    { name: 'x', op: 'Placeholder', attr: { dtype: f, shape: { shape: { dim: shape.map((d) => ({ size: String(d) })) } } } },
    { name: 'u', op: 'Square', input: ['x'], attr: { T: f } },
    { name: 'y', op: 'AddV2', input: ['u', 'x'], attr: { T: f } },
  ];
  const file = path.join(dir, 'tiny.json');
  const versions = { producer: 1 }; // tfjs reads it
  fs.writeFileSync(file, JSON.stringify({ format: 'graph-model', modelTopology: { node, versions }, weightsManifest: [] }));
  return file;
}

function gpuName() { // the library's own context says what it runs on
  const hold = arg('hold', path.join(ROOT, 'build', 'bench', 'hold_context'));
  const r = spawnSync(hold, ['0'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n')[0].trim() : `an unnamed GPU (${hold} did not run)`;
}

async function main() {
  if (args[0] === '--child') {
    const [, way, model, shape, runs] = args;
    process.stdout.write(`${JSON.stringify(await child(way, model, shape.split(',').map(Number), Number(runs)))}\n`);
    return;
  }
  const benchDeps = path.join(__dirname, 'bench', 'node_modules', '@tensorflow', 'tfjs-backend-wasm');
  if (!fs.existsSync(benchDeps)) {
    console.error('bench.js: installing TensorFlow.js into bindings/node/bench (npm ci) ...');
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: path.join(__dirname, 'bench'), stdio: 'inherit' });
    if (r.status !== 0) throw new Error('npm ci in bindings/node/bench failed');
  }
  const models = arg('models', path.join(ROOT, '.cache', 'human-models', 'models'));
  const name = arg('model', 'emotion');
  const runs = Number(arg('runs', 30));
  const tinyRuns = Number(arg('tiny-runs', 300));
  const out = arg('out', path.join(ROOT, 'bench', 'results', 'node.md'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'si-node-bench-'));
  const real = path.join(models, `${name}.json`);
  const realShape = JSON.parse(fs.readFileSync(real, 'utf8')).modelTopology.node
    .find((n) => n.op === 'Placeholder').attr.shape.shape.dim.map((d) => Math.max(1, Number(d.size)));
  const small = [1, 8, 8, 4];
  const tinyShape = [1, 64, 64, 4];
  const kib = (sh) => `${sh.reduce((a, d) => a * d, 4) >> 10} KiB`;
  const cases = [small, tinyShape].map((sh) => ({
    label: `tiny [${sh}] (${kib(sh)} in and out, 2 GPU steps)`, model: tinyModel(fs.mkdtempSync(path.join(tmp, 't')), sh), shape: sh, runs: tinyRuns,
  }));
  cases.push({ label: `${name} ([${realShape}])`, model: real, shape: realShape, runs });
  const ways = ['C library', 'execute', 'executeAsync', 'tfjs-cpu', 'tfjs-wasm'];
  const rows = [];
  for (const c of cases) {
    const res = {};
    for (const w of ways) {
      process.stderr.write(`bench.js: ${c.label}: ${w} (${c.runs} runs) ... `);
      res[w] = spawnWay(w, c.model, c.shape, c.runs, tmp);
      process.stderr.write(`${res[w].error ? res[w].error : `${res[w].ms_per_run.toFixed(3)} ms`}\n`);
    }
    const base = res['C library'];
    for (const w of ways) {
      const r = res[w];
      if (r.error) {
        rows.push(`| ${c.label} | ${w} | failed: ${r.error} | | | | |`);
        continue;
      }
      const vsC = w === 'C library' ? '1' : (r.ms_per_run / base.ms_per_run).toFixed(2);
      const has = typeof r.outside_ms === 'number';
      const outside = has ? r.outside_ms.toFixed(3) : '';
      const own = has && w !== 'C library' ? (r.outside_ms - base.outside_ms).toFixed(3) : '';
      rows.push(`| ${c.label} | ${w} | ${r.ms_per_run.toFixed(3)} | ${vsC} | ${outside} | ${own} | ${(r.maxrss_kb / 1024).toFixed(0)} |`);
    }
  }
  fs.rmSync(tmp, { recursive: true });
  const text = `# Node.js binding: cost per call, and TensorFlow.js beside it

Made by \`make node-bench\` (\`node bindings/node/bench.js\`), ${new Date().toISOString().slice(0, 10)}, Node ${process.version},
on ${gpuName()}: Mesa llvmpipe runs the shaders on the CPU of a
${os.cpus().length}-core machine shared with other jobs, so the absolute figures say little about a
GPU; read the ratios. Each way runs in a process of its own: ${WARM} warm-up runs (planning,
shader compiles), then the median of ${tinyRuns} (tiny) or ${runs} (${name}) timed runs, on the same
seeded float32 input. From one process to the next the machine's load moves a run's time by
tens of percent, more than the binding adds; *binding's own* is measured inside
each call and is the figure for the binding's cost.

- **C library**: \`si_run\` plus reading the outputs' pointers (\`bindings/node/bench/c_runs.c\`).
- **execute** / **executeAsync**: the binding (\`model.execute(x)\`, \`await model.executeAsync(x)\`)
  with \`{data, shape, dtype}\` in and out.
- *outside run_ms*: the time of a call minus the library's own \`run_ms\` for that very call
  (\`si_get_stats\`, \`model.stats()\`), median. For the C library that is \`si_run\`'s entry and exit
  (the handle's lock, its GL context made current and the caller's put back). *binding's own*
  is the binding's figure less the C library's: the JS checks, the input copy (executeAsync
  copies the input; execute reads it in place), the output copy into a fresh typed array,
  and for executeAsync the hop to a worker thread and back to the event loop. The tiny
  model (Square, then Add: \`x*x + x\`) is there to show it; its two sizes show the copies.
- **tfjs-cpu** / **tfjs-wasm**: TensorFlow.js 4.22.0 (\`@tensorflow/tfjs-converter\`'s
  \`loadGraphModel\`, \`model.execute(x)\` and \`dataSync()\` of each output) with the cpu and
  the wasm backend, in Node.
- *peak RSS*: the process's maximum resident set (getrusage), Node itself included (about
  40 MiB of a bare \`node\`); llvmpipe's threads and shader cache are in the C and binding rows.

| model | way | ms per run | vs C | outside run_ms | binding's own | peak RSS MiB |
|---|---|---|---|---|---|---|
${rows.join('\n')}
`;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
  process.stdout.write(text);
}

main().catch((e) => {
  console.error(`bench.js: ${e.stack || e.message}`);
  process.exit(1);
});
