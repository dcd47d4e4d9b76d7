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
const http = require('http');
const path = require('path');
const os = require('os');
const {execFileSync} = require('child_process');
const puppeteer = require('puppeteer-core');

const REPO = path.resolve(__dirname, '..', '..');
const MODELS_DIR = path.join(REPO, '.cache', 'big');
const DEFAULT_ROWS = [
  'effdet-d0', 'effdet-d1', 'effdet-d2', 'effdet-d3', 'effdet-d4',
  'effdet-d5', 'effdet-d6', 'effdet-d7', 'frcnn-irv2@600', 'frcnn-irv2@1024',
];
const CHROMIUM_ARGS = [
  '--headless=new',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--ignore-gpu-blocklist',
  '--no-sandbox',
];

function parseArgs(argv) {
  const o = {
    chromium: '/usr/bin/chromium', timeoutMin: 20,
    json: path.join(__dirname, 'results.json'), seed: 1234, rows: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--chromium') o.chromium = argv[++i];
    else if (a === '--timeout-min') o.timeoutMin = Number(argv[++i]);
    else if (a === '--json') o.json = path.resolve(argv[++i]);
    else if (a === '--seed') o.seed = Number(argv[++i]);
    else if (a === '-h' || a === '--help') {
      process.stdout.write(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 14)
        .map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
      process.exit(0);
    } else if (a.startsWith('--')) throw new Error('unknown option ' + a);
    else o.rows.push(a);
  }
  if (!o.rows.length) o.rows = DEFAULT_ROWS.slice();
  if (!(o.timeoutMin > 0)) throw new Error('bad --timeout-min');
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

// Static file server over the repo root (models + node_modules + page.html).
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript',
  '.json': 'application/json', '.bin': 'application/octet-stream',
};
function startServer() {
  const server = http.createServer((req, res) => {
    if (req.url === '/favicon.ico') { res.writeHead(204); res.end(); return; }
    let rel;
    try { rel = decodeURIComponent(new URL(req.url, 'http://x').pathname); } catch (e) {
      res.writeHead(400); res.end(); return;
    }
    const file = path.resolve(REPO, '.' + rel);
    if (file !== REPO && !file.startsWith(REPO + path.sep)) { res.writeHead(403); res.end(); return; }
    fs.stat(file, (err, st) => {
      if (err || !st.isFile()) { res.writeHead(404); res.end('not found'); return; }
      res.writeHead(200, {
        'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
        'Content-Length': st.size,
      });
      fs.createReadStream(file).pipe(res);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function log(msg) { process.stderr.write(`[${new Date().toISOString()}] ${msg}\n`); }

async function runRow(row, opts, baseUrl, env) {
  const rec = {
    row: row.spec, model: row.name, inputShape: row.inputShape,
    weightBytesOnDisk: row.weightBytes, graphNodes: row.nodes,
    startedAt: new Date().toISOString(), console: [], pageErrors: [],
  };
  const t0 = Date.now();
  let browser = null;
  let lastPhase = 'launch';
  const phaseTimes = {};
  let timer = null;
  try {
    browser = await puppeteer.launch({
      executablePath: opts.chromium,
      headless: false,  // the headless flag is passed explicitly in args
      args: CHROMIUM_ARGS,
      protocolTimeout: (opts.timeoutMin * 60 + 120) * 1000,
      timeout: 120000,
    });
    rec.chromiumArgs = browser.process() ? browser.process().spawnargs.slice(1) : null;
    rec.browserVersion = await browser.version();
    env.browserVersion = rec.browserVersion;
    env.userAgent = await browser.userAgent();
    const page = await browser.newPage();
    page.on('console', (m) => {
      const text = m.text();
      const pm = /^\[bench\] phase=(\S+)/.exec(text);
      if (pm) {
        lastPhase = pm[1];
        phaseTimes[pm[1]] = Date.now() - t0;
        log(`  ${row.spec}: ${pm[1]} (+${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        return;
      }
      if (rec.console.length < 200) rec.console.push({type: m.type(), text: text.slice(0, 2000)});
      if (['warn', 'warning', 'error'].includes(m.type())) log(`  ${row.spec} console.${m.type()}: ${text.slice(0, 300)}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) rec.console.push({type: 'http', text: `${r.status()} ${r.url()}`});
    });
    page.on('pageerror', (e) => { rec.pageErrors.push(String(e && e.message || e)); });
    let crashed = null;
    const crash = new Promise((resolve) => {
      page.on('error', (e) => { crashed = 'page crashed: ' + String(e && e.message || e); resolve(); });
      browser.on('disconnected', () => { if (!crashed) crashed = 'browser disconnected'; resolve(); });
    });
    lastPhase = 'page-load';
    await page.goto(`${baseUrl}/bench/webgl/page.html`, {waitUntil: 'load'});
    await page.waitForFunction('window.__benchReady === true', {timeout: 60000});

    const capMs = opts.timeoutMin * 60 * 1000;
    const timeout = new Promise((resolve) => { timer = setTimeout(resolve, capMs); });
    const work = page.evaluate((a) => window.runBench(a),
      {modelUrl: row.modelUrl, inputShape: row.inputShape, seed: opts.seed});
    work.catch(() => {});
    const winner = await Promise.race([
      work.then((r) => ({kind: 'done', r}), (e) => ({kind: 'evalError', e})),
      timeout.then(() => ({kind: 'timeout'})),
      crash.then(() => ({kind: 'crash'})),
    ]);
    if (winner.kind === 'done') {
      Object.assign(rec, winner.r);
      rec.outcome = winner.r.ok ? 'ok' : `failed in ${winner.r.failedPhase}: ${winner.r.error}`;
    } else if (winner.kind === 'timeout') {
      rec.ok = false;
      rec.failedPhase = lastPhase;
      rec.outcome = `timeout after ${opts.timeoutMin} min (in ${lastPhase})`;
    } else if (winner.kind === 'crash') {
      rec.ok = false;
      rec.failedPhase = lastPhase;
      rec.outcome = `${crashed} (in ${lastPhase})`;
    } else {
      rec.ok = false;
      rec.failedPhase = lastPhase;
      rec.error = String(winner.e && winner.e.message || winner.e);
      rec.outcome = `evaluate failed in ${lastPhase}: ${rec.error}`;
    }
  } catch (e) {
    rec.ok = false;
    rec.failedPhase = lastPhase;
    rec.error = String(e && e.message || e);
    rec.outcome = `harness error in ${lastPhase}: ${rec.error}`;
  } finally {
    if (timer) clearTimeout(timer);
    rec.phaseReachedMs = phaseTimes;
    rec.wallMs = Date.now() - t0;
    if (browser) {
      const tc = Date.now();
      const proc = browser.process();
      const closed = await Promise.race([
        browser.close().then(() => true, () => false),
        new Promise((r) => setTimeout(() => r(false), 15000)),
      ]);
      if (!closed && proc && proc.exitCode === null) {
        try { proc.kill('SIGKILL'); } catch (e) { /* already gone */ }
        rec.browserKilled = true;
      }
      rec.closeMs = Date.now() - tc;
    }
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
  const opts = parseArgs(process.argv.slice(2));
  const rows = opts.rows.map(resolveRow);
  const server = await startServer();
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  let chromiumVersion = null;
  try {
    chromiumVersion = execFileSync(opts.chromium, ['--version'], {encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']}).trim();
  } catch (e) { chromiumVersion = 'unknown: ' + e.message; }
  const env = {
    chromium: opts.chromium, chromiumVersion, chromiumArgs: CHROMIUM_ARGS,
    node: process.version, host: os.hostname(), cpus: os.cpus().length,
    cpuModel: os.cpus()[0] && os.cpus()[0].model, totalMemBytes: os.totalmem(),
    tfjs: {}, puppeteerCore: require('puppeteer-core/package.json').version,
    seed: opts.seed, timeoutMin: opts.timeoutMin, command: process.argv.slice(1).join(' '),
  };
  for (const p of ['tfjs-core', 'tfjs-converter', 'tfjs-backend-webgl']) {
    env.tfjs[p] = require(`@tensorflow/${p}/package.json`).version;
  }
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
