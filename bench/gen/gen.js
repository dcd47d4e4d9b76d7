#!/usr/bin/env node
// Synthetic large-model generator: writes TensorFlow.js graph models with the
// architectures and sizes of EfficientDet D0-D7 and faster_rcnn_inception_resnet_v2
// (seeded random weights), in the format tensorflowjs_converter writes.
//
// usage: node bench/gen/gen.js NAME OUTDIR [--seed N] [--quant none|uint8|float16]
//            [--size S] [--dry]
//        node bench/gen/gen.js all CACHEDIR [...]     every model, into CACHEDIR/NAME
//
// NAME: effdet-d0 ... effdet-d7, frcnn-irv2. --size sets the input resolution
// (effdet: a multiple of 128, default native; frcnn-irv2: default [1,-1,-1,3],
// any size). --dry builds the graph and prints its figures without writing (or
// calibrating).
//
// Weights: He-style normal, then scaled by one forward pass over seeded random
// inputs (calib.js) as batch norms folded into them would scale them, so the
// activations keep their size through any depth. The weights do not depend on
// --size: effdet is calibrated at 512, frcnn-irv2 at 91 (with a one-region crop).
// GEN_DEBUG=N prints the calibration statistics of every Nth node (stderr).
'use strict';

const path = require('path');
const { Graph, writeModel, mulberry32 } = require('./graph');
const { calibrate } = require('./calib');
const effdet = require('./effdet');
const frcnn = require('./frcnn');

const CALIB_INPUTS = 4; // frcnn-irv2: 4 inputs of 91x91 (9x9 maps in the trunk)
const CALIB_EFFDET = 512; // effdet: one input of 512x512 (P7 is 4x4)
const CALIB_FRCNN = 91;
const CALIB_EFFDET_N = 1;
const NAMES = [...Object.keys(effdet.CONFIGS), 'frcnn-irv2'];
const USAGE = 'usage: node bench/gen/gen.js NAME|all OUTDIR [--seed N] [--quant none|uint8|float16] [--size S] [--dry]';

function parseArgs(argv) {
  const o = { seed: 1, quant: 'none', size: 0, dry: false };
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
    else if (a === '-h' || a === '--help') { process.stdout.write(USAGE + '\n'); process.exit(0); } else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
    else pos.push(a);
  }
  if (pos.length !== 2) throw new Error('expected NAME and OUTDIR');
  if (!Number.isSafeInteger(o.seed)) throw new Error('--seed: not an integer');
  if (!['none', 'uint8', 'float16'].includes(o.quant)) throw new Error(`--quant: ${o.quant}`);
  if (!Number.isInteger(o.size) || o.size < 0) throw new Error('--size: not a positive integer');
  [o.name, o.outdir] = pos;
  if (o.name !== 'all' && !NAMES.includes(o.name)) throw new Error(`unknown model ${o.name} (${NAMES.join(', ')})`);
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
  const built = name.startsWith('effdet-') ? effdet.build(g, name, effdet.CONFIGS[name], size)
    : frcnn.build(g, name, frcnn.CONFIG, size);
  return { g, built };
}

// Batch-norm statistics from a forward pass over seeded random inputs of `size`
// (calib.js). Returns the calibrated graph.
function calibrated(name, o, size) {
  const { g } = buildGraph(name, modelSeed(name, o.seed), size);
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

function generate(name, outdir, o) {
  const t0 = Date.now();
  let real = null; let size = o.size; let calSize;
  if (name.startsWith('effdet-')) {
    const cfg = effdet.CONFIGS[name];
    size = size || cfg.size;
    if (size % 128) throw new Error(`${name}: --size ${size} is not a multiple of 128`);
    real = cfg.real;
    // The weights do not depend on the input size; calibrate at 512 (the P7 map
    // is 4x4 there: smaller maps are all border) so that every --size gets the
    // same weights as the native model.
    calSize = CALIB_EFFDET;
  } else {
    calSize = CALIB_FRCNN;
  }
  calSize = Number(process.env.GEN_CALIB_SIZE) || calSize;
  const { g, built } = buildGraph(name, modelSeed(name, o.seed), size);
  const cg = o.dry ? g : calibrated(name, o, calSize);
  if (cg.weights.length !== g.weights.length) throw new Error(`${name}: calibration graph differs`);
  g.weights.forEach((w, i) => {
    const c = cg.weights[i];
    if (w.dtype !== 'float32') return;
    if (c.name !== w.name || c.data.length !== w.data.length) throw new Error(`${name}: weight ${w.name} differs in the calibration graph`);
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
  if (written) parts.push(`written ${written.total} bytes in ${written.shards} shards (${o.quant})`, `-> ${outdir}`);
  parts.push(`${secs.toFixed(1)} s`);
  process.stdout.write(parts.join(', ') + '\n');
  return st;
}

function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.name === 'all') {
    for (const n of NAMES) generate(n, path.join(o.outdir, n), o);
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
