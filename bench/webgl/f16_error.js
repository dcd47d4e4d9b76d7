#!/usr/bin/env node
// Error of TensorFlow.js 4.22.0's WebGL backend (headless Chromium, SwiftShader)
// on the package models against the references the tests use (.cache/refs/SPEC,
// made with tfjs-backend-cpu), with default flags (f32 textures) and with
// WEBGL_FORCE_F16_TEXTURES. One fresh browser per row and precision.
//
//   node bench/webgl/f16_error.js [options] [SPEC...]
//
// Default rows: every SPEC of tests/MODELS.md (table_specs in tests/lib.sh).
// Options:
//   --chromium PATH     browser binary (default /usr/bin/chromium)
//   --timeout-min N     cap per row and precision in minutes (default 10)
//   --json PATH         JSON output (default bench/webgl/f16_errors.json)
// Markdown table -> stdout; progress -> stderr; JSON rewritten after each row.
'use strict';

const fs = require('fs');
const path = require('path');
const os = require('os');
const {execFileSync} = require('child_process');
const {
  REPO, CHROMIUM_ARGS, startServer, parseArgs, log, runPage, chromiumVersion, tfjsVersions,
} = require('./common');
const {readNpy} = require('../../tests/oracle/reference.js');

const MODELS = path.join(REPO, '.cache', 'human-models', 'models');
const REFS = path.join(REPO, '.cache', 'refs');

function parseOptions(argv) {
  const o = parseArgs(argv, __filename, {timeoutMin: 10, json: path.join(__dirname, 'f16_errors.json')});
  o.specs = o.words.length ? o.words
    : execFileSync('sh', ['-c', '. tests/lib.sh && table_specs "$1"', 'sh', MODELS],
      {cwd: REPO, encoding: 'utf8'}).trim().split(/\s+/);
  return o;
}

// A row: SPEC's model URL, its manifest and its inputs (base64 for the page).
function loadRow(spec) {
  const name = spec.split('@')[0];
  const refDir = path.join(REFS, spec);
  const manifest = JSON.parse(fs.readFileSync(path.join(refDir, 'manifest.json'), 'utf8'));
  if (!fs.existsSync(path.join(MODELS, name + '.json'))) throw new Error(`no ${MODELS}/${name}.json`);
  const inputs = manifest.inputs.map((i) => {
    const a = readNpy(path.join(refDir, i.file));
    const b = Buffer.from(a.values.buffer, a.values.byteOffset, a.values.byteLength);
    return {name: i.name, shape: i.shape, dtype: i.dtype, b64: b.toString('base64')};
  });
  return {spec, name, refDir, manifest, inputs, modelUrl: `/.cache/human-models/models/${name}.json`};
}

// One run in a fresh browser: {ok, outcome, outputs (with b64), gl, flags, ...}.
async function runOnce(row, f16, opts, baseUrl) {
  const rec = {console: [], pageErrors: []};
  const t0 = Date.now();
  const p = await runPage(opts, {
    url: `${baseUrl}/bench/webgl/ref_page.html`, fn: 'runRef',
    arg: {modelUrl: row.modelUrl, f16, inputs: row.inputs},
    tag: `${row.spec} ${f16 ? 'f16' : 'f32'}`, rec, maxConsole: 50, consoleChars: 1000,
    onPage: async (page, browser) => { rec.browserVersion = await browser.version(); },
  });
  if (p.result) Object.assign(rec, p.result);
  rec.outcome = p.outcome;
  if (p.closed) rec.browserKilled = p.closed.killed;
  rec.ok = rec.outcome === 'ok';
  rec.wallMs = Date.now() - t0;
  return rec;
}

// max |out - ref| / max(1, max |ref|), as tests/test_models.c (a NaN
// difference counts as infinite) and bench/ref_error.py measure it.
function outputError(out, ref) {
  let scale = 1, maxDiff = 0, at = 0, nonFinite = 0;
  for (let i = 0; i < ref.length; i++) scale = Math.max(scale, Math.abs(ref[i]) || 0);
  for (let i = 0; i < ref.length; i++) {
    const d = Math.abs(out[i] - ref[i]);
    if (!(d <= maxDiff)) { maxDiff = Number.isNaN(d) ? Infinity : d; at = i; }
    if (!Number.isFinite(out[i])) nonFinite++;
  }
  return {error: maxDiff / scale, maxDiff, at, value: out[at], ref: ref[at], nonFinite};
}

// Compares a run's outputs with the manifest's, by name; sets run.maxError.
function score(row, run) {
  const ARRAYS = {Float32Array, Int32Array, Uint8Array};
  const got = new Map((run.outputs || []).map((o) => [o.name, o]));
  run.outputs = row.manifest.outputs.map((m) => {
    const r = {name: m.name, refShape: m.shape};
    const o = got.get(m.name);
    if (!o) return Object.assign(r, {error: Infinity, message: 'no such output'});
    const b = Buffer.from(o.b64, 'base64');
    const out = new ARRAYS[o.array](new Uint8Array(b).buffer);
    Object.assign(r, {shape: o.shape, dtype: o.dtype, array: o.array});
    if (o.shape.join() !== m.shape.join()) {
      return Object.assign(r, {error: Infinity, message: `shape [${o.shape}], reference [${m.shape}]`});
    }
    return Object.assign(r, outputError(out, readNpy(path.join(row.refDir, m.file)).values));
  });
  run.maxError = Math.max(0, ...run.outputs.map((o) => o.error));
}

// printf's %.3g
function g3(x) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return '0';
  const [m, e] = x.toExponential(2).split('e');
  const exp = Number(e);
  const strip = (s) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (exp < -4 || exp >= 3) return `${strip(m)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return strip(x.toFixed(2 - exp));
}

function cell(run) {
  if (!run) return '—';
  const esc = (s) => String(s).replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 200);
  if (!run.ok) return 'failed: ' + esc(run.outcome);
  const notes = run.outputs.filter((o) => o.message || o.nonFinite)
    .map((o) => `${o.name}: ${o.message || o.nonFinite + ' NaN/inf'}`);
  return g3(run.maxError) + (notes.length ? ` (${esc(notes.join('; '))})` : '');
}

function table(results) {
  const lines = ['| model | webgl f32 error | webgl f16 error |', '|---|---|---|'];
  for (const r of results) lines.push(`| ${r.spec} | ${cell(r.runs.f32)} | ${cell(r.runs.f16)} |`);
  return lines.join('\n');
}

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  const server = await startServer();
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  const env = {
    chromium: opts.chromium, chromiumVersion: chromiumVersion(opts.chromium), chromiumArgs: CHROMIUM_ARGS,
    node: process.version, host: os.hostname(), cpus: os.cpus().length,
    cpuModel: os.cpus()[0] && os.cpus()[0].model, tfjs: tfjsVersions(),
    puppeteerCore: require('puppeteer-core/package.json').version,
    timeoutMin: opts.timeoutMin, command: process.argv.slice(1).join(' '),
  };
  const out = {env, startedAt: new Date().toISOString(), results: []};
  const save = () => {
    fs.mkdirSync(path.dirname(opts.json), {recursive: true});
    // inf and nan as strings (JSON has neither)
    const num = (k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v);
    fs.writeFileSync(opts.json, JSON.stringify(out, num, 2) + '\n');
  };
  log(`serving ${REPO} at ${baseUrl}; ${opts.specs.length} row(s); cap ${opts.timeoutMin} min/run; JSON -> ${opts.json}`);
  for (const spec of opts.specs) {
    const res = {spec, runs: {}};
    out.results.push(res);
    let row;
    try {
      row = loadRow(spec);
      res.inputs = row.manifest.inputs;
    } catch (e) {
      const run = {ok: false, outcome: `no reference: ${e.message}`};
      res.runs = {f32: run, f16: run};
      log(`${spec}: ${run.outcome}`);
      save();
      continue;
    }
    for (const prec of ['f32', 'f16']) {
      const run = await runOnce(row, prec === 'f16', opts, baseUrl);
      if (run.ok) score(row, run);
      else delete run.outputs;
      res.runs[prec] = run;
      if (run.gl && !env.gl) env.gl = run.gl;
      if (run.browserVersion) env.browserVersion = run.browserVersion;
      log(`${spec} ${prec}: ${run.ok ? 'error ' + g3(run.maxError) : run.outcome}; wall ${(run.wallMs / 1000).toFixed(1)} s`);
      save();
    }
  }
  out.finishedAt = new Date().toISOString();
  save();
  server.close();
  const gl = env.gl || {};
  process.stdout.write(`Chromium: ${env.browserVersion || env.chromiumVersion}; ` +
    `renderer: ${gl.UNMASKED_RENDERER || gl.RENDERER || 'unknown'}; ${gl.contextType || ''}; ` +
    `tfjs ${env.tfjs['tfjs-backend-webgl']}\n\n`);
  process.stdout.write(table(out.results) + '\n');
}

main().catch((e) => { console.error(e && e.stack || e); process.exit(1); });
