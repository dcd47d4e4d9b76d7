#!/usr/bin/env node
// Measures what TensorFlow.js 4.22.0's WebGL backend allocates for the big
// synthetic models in .cache/big/, in headless Chromium with WebGL on
// SwiftShader (CPU). One fresh browser per row, default tfjs flags.
//
//   node bench/webgl/run.js [options] [MODEL[@SIZE]...]
//
// Default rows: effdet-d0 .. effdet-d7, frcnn-irv2@600, frcnn-irv2@1024.
// Options:
//   --chromium PATH     browser binary (default /usr/bin/chromium)
//   --timeout-min N     cap per row in minutes (default 20)
//   --json PATH         JSON output (default bench/webgl/results.json)
//   --seed N            input PRNG seed (default 1234)
// Markdown table -> stdout; progress -> stderr; JSON rewritten after each row.
'use strict';

const fs = require('fs');
const path = require('path');
const os = require('os');
const {
  REPO, CHROMIUM_ARGS, startServer, parseArgs, log, runPage, chromiumVersion: getChromiumVersion, tfjsVersions,
} = require('./common');

const MODELS_DIR = path.join(REPO, '.cache', 'big');
const DEFAULT_ROWS = [
  'effdet-d0', 'effdet-d1', 'effdet-d2', 'effdet-d3', 'effdet-d4',
  'effdet-d5', 'effdet-d6', 'effdet-d7', 'frcnn-irv2@600', 'frcnn-irv2@1024',
];
function parseOptions(argv) {
  const o = parseArgs(argv, __filename,
    {timeoutMin: 20, json: path.join(__dirname, 'results.json'), seed: 1234}, ['--seed']);
  o.rows = o.words.length ? o.words : DEFAULT_ROWS.slice();
  return o;
}

// Resolve MODEL[@SIZE] to a model URL and a concrete [1,H,W,3] input shape.
function resolveRow(spec) {
  const [name, sizeStr] = spec.split('@');
  const dir = path.join(MODELS_DIR, name);
  const mj = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const inputs = mj.signature && mj.signature.inputs;
  const keys = Object.keys(inputs || {});
  if (keys.length !== 1) throw new Error(`${name}: expected 1 input, got ${keys.length}`);
  const dims = inputs[keys[0]].tensorShape.dim.map((d) => Number(d.size));
  let shape = dims.slice();
  if (sizeStr) {
    const s = Number(sizeStr);
    if (!(s > 0)) throw new Error(`bad size in ${spec}`);
    if (dims[1] > 0 && dims[1] !== s) throw new Error(`${name} has fixed input ${dims}, not ${s}`);
    shape = [1, s, s, dims[3] > 0 ? dims[3] : 3];
  }
  if (shape.some((d) => !(d > 0))) throw new Error(`${name}: dynamic input ${dims}; give MODEL@SIZE`);
  let weightBytes = 0;
  for (const g of mj.weightsManifest) {
    for (const p of g.paths) weightBytes += fs.statSync(path.join(dir, p)).size;
  }
  return {
    spec, name, inputShape: shape, weightBytes,
    modelUrl: `/.cache/big/${name}/model.json`,
    nodes: mj.modelTopology.node.length,
  };
}

async function runRow(row, opts, baseUrl, env) {
  const rec = {
    row: row.spec, model: row.name, inputShape: row.inputShape,
    weightBytesOnDisk: row.weightBytes, graphNodes: row.nodes,
    startedAt: new Date().toISOString(), console: [], pageErrors: [],
  };
  const phaseTimes = {};
  const p = await runPage(opts, {
    url: `${baseUrl}/bench/webgl/page.html`, fn: 'runBench',
    arg: {modelUrl: row.modelUrl, inputShape: row.inputShape, seed: opts.seed},
    tag: row.spec, rec, maxConsole: 200, consoleChars: 2000,
    onPhase: (name, ms) => { phaseTimes[name] = ms; },
    onPage: async (page, browser) => {
      rec.chromiumArgs = browser.process() ? browser.process().spawnargs.slice(1) : null;
      rec.browserVersion = await browser.version();
      env.browserVersion = rec.browserVersion;
      env.userAgent = await browser.userAgent();
      page.on('console', (m) => {
        if (['warn', 'warning', 'error'].includes(m.type())) log(`  ${row.spec} console.${m.type()}: ${m.text().slice(0, 300)}`);
      });
      page.on('response', (r) => {
        if (r.status() >= 400) rec.console.push({type: 'http', text: `${r.status()} ${r.url()}`});
      });
    },
  });
  if (p.result) Object.assign(rec, p.result);
  else {
    rec.ok = false;
    rec.failedPhase = p.phase;
    if (p.error !== undefined) rec.error = p.error;
  }
  rec.outcome = p.outcome;
  rec.phaseReachedMs = phaseTimes;
  rec.wallMs = p.runMs;
  if (p.closed) {
    if (p.closed.killed) rec.browserKilled = true;
    rec.closeMs = p.closed.closeMs;
  }
  return rec;
}

const MiB = (b) => (typeof b === 'number' ? (b / 1048576).toFixed(1) : '—');
const sec = (ms) => (typeof ms === 'number' ? (ms / 1000).toFixed(1) : '—');

function table(results) {
  const lines = [
    '| model | input | numBytesInGPUAllocated (MiB) | numBytesInGPU (MiB) | numTensors | numBytes (MiB) | load s | execute+data s | wall s | outcome |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of results) {
    const m = r.memoryAfterRun || {};
    const ph = r.phases || {};
    const run = (typeof ph.execute === 'number' && typeof ph.data === 'number') ? ph.execute + ph.data : undefined;
    const outcome = String(r.outcome || '').replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 300);
    lines.push(`| ${r.model} | ${(r.inputShape || []).join('x')} | ${MiB(m.numBytesInGPUAllocated)} | ` +
      `${MiB(m.numBytesInGPU)} | ${m.numTensors ?? '—'} | ${MiB(m.numBytes)} | ${sec(ph.load)} | ${sec(run)} | ` +
      `${sec(r.wallMs)} | ${outcome} |`);
  }
  return lines.join('\n');
}

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  const rows = opts.rows.map(resolveRow);
  const server = await startServer();
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  const chromiumVersion = getChromiumVersion(opts.chromium);
  const env = {
    chromium: opts.chromium, chromiumVersion, chromiumArgs: CHROMIUM_ARGS,
    node: process.version, host: os.hostname(), cpus: os.cpus().length,
    cpuModel: os.cpus()[0] && os.cpus()[0].model, totalMemBytes: os.totalmem(),
    tfjs: tfjsVersions(), puppeteerCore: require('puppeteer-core/package.json').version,
    seed: opts.seed, timeoutMin: opts.timeoutMin, command: process.argv.slice(1).join(' '),
  };
  const out = {env, startedAt: new Date().toISOString(), results: []};
  const save = () => {
    fs.mkdirSync(path.dirname(opts.json), {recursive: true});
    fs.writeFileSync(opts.json, JSON.stringify(out, null, 2) + '\n');
  };
  log(`serving ${REPO} at ${baseUrl}; ${rows.length} row(s); cap ${opts.timeoutMin} min/row; JSON -> ${opts.json}`);
  for (const row of rows) {
    log(`${row.spec}: input ${row.inputShape.join('x')}, ${(row.weightBytes / 1048576).toFixed(1)} MiB weights`);
    const rec = await runRow(row, opts, baseUrl, env);
    out.results.push(rec);
    if (rec.gl && !env.gl) env.gl = rec.gl;
    save();
    const m = rec.memoryAfterRun || {};
    log(`${row.spec}: ${rec.outcome}; GPUAllocated ${MiB(m.numBytesInGPUAllocated)} MiB; wall ${sec(rec.wallMs)} s`);
  }
  out.finishedAt = new Date().toISOString();
  save();
  server.close();
  const gl = env.gl || {};
  process.stdout.write(`Chromium: ${env.browserVersion || env.chromiumVersion}; ` +
    `renderer: ${gl.UNMASKED_RENDERER || gl.RENDERER || 'unknown'}; ${gl.contextType || ''}\n\n`);
  process.stdout.write(table(out.results) + '\n');
}

main().catch((e) => { console.error(e && e.stack || e); process.exit(1); });
