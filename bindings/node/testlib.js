'use strict';
// Helpers of bindings/node/test/*.test.js (outside test/ so that node --test
// does not take it for a test file). Environment: STREAMINFER_CACHE (the model
// cache, default the repository's .cache), STREAMINFER_CLI (build/streaminfer).
const fs = require('fs');
const os = require('os');
const path = require('path');
const { createRequire } = require('module');

const ROOT = path.resolve(__dirname, '../..');
const CACHE = path.resolve(process.env.STREAMINFER_CACHE || path.join(ROOT, '.cache'));
const CLI = path.resolve(process.env.STREAMINFER_CLI || path.join(ROOT, 'build', 'streaminfer'));
const MODELS = path.join(CACHE, 'human-models', 'models');

// .npy version 1.0/2.0, little-endian, C order: <f4, <i4, |b1
const DESCR = { '<f4': ['float32', Float32Array], '<i4': ['int32', Int32Array], '|b1': ['bool', Uint8Array] };
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.readUInt32BE(0) !== 0x934e554d) throw new Error(`${file}: not a .npy file`);
  const v = buf[6];
  const hlen = v === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const at = v === 1 ? 10 : 12;
  const header = buf.toString('latin1', at, at + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  if (!DESCR[descr]) throw new Error(`${file}: dtype ${descr} not handled`);
  const [dtype, A] = DESCR[descr];
  const bytes = buf.subarray(at + hlen);
  const n = shape.reduce((a, d) => a * d, 1);
  const copy = new Uint8Array(n * A.BYTES_PER_ELEMENT);
  copy.set(bytes.subarray(0, copy.length));
  return { dtype, shape, data: new A(copy.buffer) };
}

// A reference folder of tests/make_refs.sh: its manifest, inputs and outputs.
function loadRef(spec) {
  const dir = path.join(CACHE, 'refs', spec);
  const man = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const inputs = {};
  for (const i of man.inputs) inputs[i.name] = readNpy(path.join(dir, i.file));
  const outputs = man.outputs.map((o) => ({ name: o.name, ...readNpy(path.join(dir, o.file)) }));
  return {
    dir, man, inputs, outputs,
    json: path.join(MODELS, `${spec.split('@')[0]}.json`),
    inputFiles: man.inputs.map((i) => [i.name, path.join(dir, i.file)]),
  };
}

// max |out - ref| / max(1, max |ref|), as tests/test_models.c
function relError(out, ref) {
  let scale = 1;
  for (const v of ref.data) scale = Math.max(scale, Math.abs(v));
  let worst = 0;
  for (let i = 0; i < ref.data.length; i++) {
    const d = Math.abs(out.data[i] - ref.data[i]);
    if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
  }
  return worst / scale;
}

const bytesOf = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const sanitize = (n) => n.replace(/[^A-Za-z0-9._-]/g, '_'); // the CLI's --output file names

function tmpDir(tag) { return fs.mkdtempSync(path.join(os.tmpdir(), `si-node-${tag}-`)); }

// x [1,8,8,4] -> Square -> AddV2(., x): two GPU steps, inline (no weights)
function tinyModel(dir, shape = [1, 8, 8, 4], file = 'tiny.json') {
  const f = { type: 'DT_FLOAT' };
  const dims = shape.map((d) => ({ size: String(d) }));
  const node = [
    { name: 'x', op: 'Placeholder', attr: { dtype: f, shape: { shape: { dim: dims } } } },
    { name: 'u', op: 'Square', input: ['x'], attr: { T: f } },
    { name: 'y', op: 'AddV2', input: ['u', 'x'], attr: { T: f } },
  ];
  file = path.join(dir, file);
  fs.writeFileSync(file, JSON.stringify({ format: 'graph-model', modelTopology: { node }, weightsManifest: [] }));
  return file;
}

// global.gc without --expose-gc
function getGc() {
  if (global.gc) return global.gc;
  require('v8').setFlagsFromString('--expose-gc');
  return require('vm').runInNewContext('gc');
}

// TensorFlow.js of the oracle (tests/oracle/setup.sh installs it)
function oracleTf() {
  const req = createRequire(path.join(ROOT, 'tests', 'oracle', 'package.json'));
  const tf = req('@tensorflow/tfjs-core');
  req('@tensorflow/tfjs-backend-cpu');
  return tf;
}

module.exports = { ROOT, CACHE, CLI, MODELS, readNpy, loadRef, relError, bytesOf, sanitize, tmpDir, tinyModel, getGc, oracleTf };
