#!/usr/bin/env node
// Synthetic large-model generator: writes TensorFlow.js graph models with the
// architectures and sizes of EfficientDet D0-D7 and faster_rcnn_inception_resnet_v2
// (seeded random weights), in the format tensorflowjs_converter writes.
//
// usage: node bench/gen/gen.js NAME OUTDIR [--seed N] [--quant none|uint8|float16]
//            [--size S] [--dry] [--weights-from DIR]
//        node bench/gen/gen.js all CACHEDIR [...]     every model, into CACHEDIR/NAME
//
// NAME: effdet-d0 ... effdet-d7, frcnn-irv2; effdet-d0-od ... effdet-d7-od: the
// same networks (same weights) with the detection post-processing of a TF2 OD API
// export (bench/gen/postproc.js: box decoding, sigmoid, per-class NMS in a loop);
// frcnn-irv2-od (and -od-1024, at 1024x1024): frcnn-irv2 (same weights) as a TF1
// OD API export, with its proposals (NMS in a map_fn loop), CropAndResize, the
// second stage at batch 300 and the per-class NMS of the detections. --size sets the input resolution
// (effdet: a multiple of 128, default native; frcnn-irv2: default [1,-1,-1,3],
// any size; frcnn-irv2-od: default 600). frcnn-mini and frcnn-mini-od (default
// 160): frcnn-irv2(-od)'s graph, thin and short, for make test
// (tests/frcnn_od_test.sh); not in `all`. --dry builds the graph and prints its figures without writing (or
// calibrating). --weights-from DIR takes the weights from DIR, a model that
// gen.js wrote for the same network and seed (NAME-od: NAME's), instead of
// calibrating again: every weight's name, dtype and shape must match.
//
// Weights: He-style normal, then scaled by one forward pass over seeded random
// inputs (calib.js) as batch norms folded into them would scale them, so the
// activations keep their size through any depth. The weights do not depend on
// --size: effdet is calibrated at 512, frcnn-irv2 at 91 (with a one-region crop).
// GEN_DEBUG=N prints the calibration statistics of every Nth node (stderr).
'use strict';

const fs = require('fs');
const path = require('path');
const { Graph, writeModel, mulberry32 } = require('./graph');
const { calibrate } = require('./calib');
const effdet = require('./effdet');
const frcnn = require('./frcnn');

const CALIB_INPUTS = 4; // frcnn-irv2: 4 inputs of 91x91 (9x9 maps in the trunk)
const CALIB_EFFDET = 512; // effdet: one input of 512x512 (P7 is 4x4)
const CALIB_FRCNN = 91;
const CALIB_EFFDET_N = 1;
// effdet-*-od (postproc.js): the thresholds make every class's NMS work on
// effdet-d0-od at 512 with the seeded input (node bench/gen/check.js nms: 188 to
// 4219 candidates per class, at least one suppressed in each, 35209 kept)
const OD = { scoreThreshold: 0.2, iou: 0.5, maxPerClass: 400, maxTotal: 100 };
const NAMES = [...Object.keys(effdet.CONFIGS), 'frcnn-irv2', ...Object.keys(effdet.CONFIGS).map((n) => `${n}-od`),
  'frcnn-irv2-od', 'frcnn-irv2-od-1024'];
// test models, not in `all`: frcnn-irv2(-od)'s graph at a small size (make test)
const TEST_NAMES = ['frcnn-mini', 'frcnn-mini-od'];
// NAME-od is NAME with the post-processing: same backbone, same weights (same
// seed); frcnn-irv2-od-1024 is frcnn-irv2-od at 1024x1024
const baseName = (name) => name.replace(/-od(-1024)?$/, '');
const USAGE = 'usage: node bench/gen/gen.js NAME|all OUTDIR [--seed N] [--quant none|uint8|float16] [--size S] [--dry] [--weights-from DIR]';

function parseArgs(argv) {
  const o = { seed: 1, quant: 'none', size: 0, dry: false, weightsFrom: null };
  const pos = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--seed') o.seed = Number(val());
    else if (a === '--quant') o.quant = val();
    else if (a === '--size') o.size = Number(val());
    else if (a === '--dry') o.dry = true;
    else if (a === '--weights-from') o.weightsFrom = val();
    else if (a === '-h' || a === '--help') { process.stdout.write(USAGE + '\n'); process.exit(0); } else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else pos.push(a);
  }
  if (pos.length !== 2) throw new Error('expected NAME and OUTDIR');
  if (!Number.isSafeInteger(o.seed)) throw new Error('--seed: not an integer');
  if (!['none', 'uint8', 'float16'].includes(o.quant)) throw new Error(`--quant: ${o.quant}`);
  if (!Number.isInteger(o.size) || o.size < 0) throw new Error('--size: not a positive integer');
  [o.name, o.outdir] = pos;
  if (o.name !== 'all' && !NAMES.includes(o.name) && !TEST_NAMES.includes(o.name)) {
    throw new Error(`unknown model ${o.name} (${[...NAMES, ...TEST_NAMES].join(', ')})`);
  }
  return o;
}

// Different models get different weights from one seed.
function modelSeed(name, seed) {
  let h = 2166136261;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  return (h ^ seed) >>> 0;
}

// Builds the graph for an input size (0: dynamic, frcnn only).
function buildGraph(name, seed, size) {
  const g = new Graph(seed);
  const base = baseName(name);
  const od = base !== name;
  const built = name.startsWith('effdet-') ? effdet.build(g, base, effdet.CONFIGS[base], size, od ? OD : null)
    : frcnn.build(g, base, frcnn.CONFIGS[base], size, od ? frcnn.ODS[base] : null);
  return { g, built };
}

// Batch-norm statistics from a forward pass over seeded random inputs of `size`
// (calib.js). Returns the calibrated graph.
function calibrated(name, o, size) {
  const { g } = buildGraph(name, modelSeed(baseName(name), o.seed), size);
  const rnd = mulberry32(o.seed + 17);
  const cin = [];
  const n = Number(process.env.GEN_CALIB_N) || (name.startsWith('effdet-') ? CALIB_EFFDET_N : CALIB_INPUTS);
  for (let k = 0; k < n; k++) cin.push({ shape: [1, size, size, 3], data: Float32Array.from({ length: size * size * 3 }, () => rnd()) });
  const keep = process.env.GEN_DEBUG ? new Map() : null;
  const cal = calibrate(g, cin, g.calibOverrides || {}, keep);
  if (keep) {
    let i = 0;
    for (const [k, v] of keep) {
      if (i++ % Number(process.env.GEN_DEBUG) !== 0 && !/Identity/.test(k)) continue;
      let s = 0; let s2 = 0;
      for (const x of v.data) { s += x; s2 += x * x; }
      const m = s / v.data.length;
      process.stderr.write(`calib ${k} [${v.shape}] mean ${m.toFixed(3)} std ${Math.sqrt(s2 / v.data.length - m * m).toFixed(3)}\n`);
    }
  }
  if (cal.normalized !== cal.marked) throw new Error(`${name}: calibrated ${cal.normalized} of ${cal.marked} convs`);
  return g;
}

// The float32 weights of a model gen.js wrote (unquantized), in manifest order,
// as {name, data} (calibrated()'s graph's weights have the same form).
function readWeights(dir) {
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const m = json.weightsManifest[0];
  const all = Buffer.concat(m.paths.map((p) => fs.readFileSync(path.join(dir, p))));
  const weights = []; let off = 0;
  for (const w of m.weights) {
    if (w.quantization) throw new Error(`--weights-from ${dir}: ${w.name} is quantized`);
    const n = w.shape.reduce((a, b) => a * b, 1);
    if (off + n * 4 > all.length) throw new Error(`--weights-from ${dir}: the shards end inside ${w.name}`);
    const bytes = Uint8Array.prototype.slice.call(all, off, off + n * 4);
    weights.push({ name: w.name, dtype: w.dtype, shape: w.shape, data: w.dtype === 'float32' ? new Float32Array(bytes.buffer) : new Int32Array(bytes.buffer) });
    off += n * 4;
  }
  return { weights };
}

function generate(name, outdir, o) {
  const t0 = Date.now();
  let real = null; let size = o.size; let calSize;
  if (name.startsWith('effdet-')) {
    const cfg = effdet.CONFIGS[baseName(name)];
    size = size || cfg.size;
    if (size % 128) throw new Error(`${name}: --size ${size} is not a multiple of 128`);
    real = cfg.real;
    // The weights do not depend on the input size; calibrate at 512 (the P7 map
    // is 4x4 there: smaller maps are all border) so that every --size gets the
    // same weights as the native model.
    calSize = CALIB_EFFDET;
  } else {
    calSize = CALIB_FRCNN;
    // the -od replica's anchors need a size
    if (name !== baseName(name)) size = size || (name.endsWith('-1024') ? 1024 : name.startsWith('frcnn-mini') ? 160 : 600);
  }
  calSize = Number(process.env.GEN_CALIB_SIZE) || calSize;
  const { g, built } = buildGraph(name, modelSeed(baseName(name), o.seed), size);
  // NAME-od: the base model's calibration; its weights come first, the
  // post-processing's constants (anchors, thresholds) after them
  const cg = o.dry ? g : o.weightsFrom ? readWeights(o.weightsFrom) : calibrated(baseName(name), o, calSize);
  if (cg.weights.length > g.weights.length || (baseName(name) === name && cg.weights.length !== g.weights.length)) {
    throw new Error(`${name}: calibration graph differs`);
  }
  cg.weights.forEach((c, i) => {
    const w = g.weights[i];
    if (w.dtype !== 'float32') return;
    if (c.name !== w.name || c.data.length !== w.data.length || (c.shape && c.shape.join() !== w.shape.join()) || (c.dtype && c.dtype !== w.dtype)) {
      throw new Error(`${name}: weight ${w.name} differs in ${o.weightsFrom || 'the calibration graph'}`);
    }
    w.data = c.data;
  });
  const st = g.stats();
  let written = null;
  if (!o.dry) written = writeModel(g, outdir, { quant: o.quant, signature: built.signature });
  const secs = (Date.now() - t0) / 1000;
  const parts = [
    `${name}`, `input ${size || 'dynamic'}`, `params ${st.params} (${(st.params / 1e6).toFixed(2)}M` +
      (real ? `, real ${(real / 1e6).toFixed(1)}M, ${((st.params / real - 1) * 100).toFixed(1)}%)` : ')'),
    `float32 bytes ${st.bytes}`, `tensors ${st.tensors}`, `nodes ${st.nodes}`,
  ];
  if (st.post) parts.splice(2, 0, `post-processing constants ${st.post.tensors} tensors, ${st.post.params} values (anchors)`);
  if (written) parts.push(`written ${written.total} bytes in ${written.shards} shards (${o.quant})`, `-> ${outdir}`);
  parts.push(`${secs.toFixed(1)} s`);
  process.stdout.write(parts.join(', ') + '\n');
  return st;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.name === 'all') {
    // NAME-od after NAME, with NAME's weights (calibrating once per network)
    for (const n of NAMES) {
      const base = path.join(o.outdir, baseName(n));
      const from = n !== baseName(n) && !o.weightsFrom && o.quant === 'none' && !o.dry ? base : o.weightsFrom;
      generate(n, path.join(o.outdir, n), { ...o, weightsFrom: from });
    }
  } else {
    generate(o.name, o.outdir, o);
  }
}

if (require.main === module) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`gen.js: error: ${e.message}\n`);
    process.exit(1);
  }
}

module.exports = { generate, NAMES };
