#!/usr/bin/env node
// Per-op tests against TensorFlow.js (issue 15): writes small single-op graph
// models in tensorflowjs_converter's format (model.json + one shard), their
// seeded inputs, and TensorFlow.js's outputs for them (tfjs-backend-cpu, the
// oracle's node_modules), one folder per case:
//   CASE/model.json group1-shard1of1.bin input_<name>.npy ref_<k>.npy case.txt
// case.txt is read by tests/test_ops.c: "op OP", "covers OP..." (the other
// ops of the graph the case tests, see graphCovers), "input NAME FILE",
// "output FILE", "tol T" (float32: |out-ref| <= T*max(1,|ref|); ints and bools exact).
//
// usage: node tests/ops/gen.js OUTDIR [--only OP[,OP...]] [--list]
// The cases themselves are in cases.js; --list prints "op<TAB>case" and writes nothing.
'use strict';

const fs = require('fs');
const path = require('path');
const { writeNpy, mulberry32, makeIOHandler } = require('../oracle/reference.js');
const { cases } = require('./cases.js');

const DT = { float32: 'DT_FLOAT', int32: 'DT_INT32', bool: 'DT_BOOL', string: 'DT_STRING' };
const ARRAY = { float32: Float32Array, int32: Int32Array, bool: Uint8Array };

// A Const's shard bytes; strings as tensorflowjs_converter writes them: per
// element a 4-byte little-endian length, then the bytes (values: JS strings,
// UTF-8 encoded, or byte arrays).
function constBytes(dtype, values) {
  if (dtype !== 'string') {
    const arr = ARRAY[dtype].from(values);
    return Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
  }
  return Buffer.concat(values.flatMap((v) => {
    const b = typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.from(v);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(b.length);
    return [len, b];
  }));
}

const shapeAttr = (shape) => ({ dim: shape.map((d) => ({ size: String(d) })) });
const count = (shape) => shape.reduce((a, b) => a * b, 1);

// A case's model: Placeholders for its inputs, Consts (in the shard) for its
// constant inputs, the op, and one Identity per output so that multi-output
// ops give every output a node of its own (outputs are the unconsumed nodes).
function buildModel(c) {
  const nodes = [];
  const weights = [];
  const parts = [];
  const names = [];
  c.inputs.forEach((inp, i) => {
    const name = inp.name || `in${i}`;
    names.push(name);
    if (inp.const) {
      nodes.push({
        name, op: 'Const',
        attr: {
          value: { tensor: { dtype: DT[inp.dtype], tensorShape: inp.shape.length ? shapeAttr(inp.shape) : {} } },
          dtype: { type: DT[inp.dtype] },
        },
      });
      weights.push({ name, shape: inp.shape, dtype: inp.dtype });
      parts.push(constBytes(inp.dtype, inp.values));
    } else {
      nodes.push({ name, op: 'Placeholder', attr: { dtype: { type: DT[inp.dtype] }, shape: { shape: shapeAttr(inp.shape) } } });
    }
  });
  // control-flow cases: extra nodes before the op, its own input list, the
  // library's functions and the weights of Consts inside them
  for (const w of c.fnWeights || []) {
    weights.push({ name: w.name, shape: w.shape, dtype: w.dtype });
    parts.push(constBytes(w.dtype, w.values));
  }
  nodes.push(...(c.nodes || []));
  nodes.push({ name: 'op', op: c.op, input: c.opInputs || names, attr: c.attr || {} });
  const nOut = c.outputs || 1;
  for (let k = 0; k < nOut; k++) {
    nodes.push({ name: `out${k}`, op: 'Identity', input: [k ? `op:${k}` : 'op'], attr: {} });
  }
  nodes.push(...(c.after || []));
  const covers = graphCovers(c, nodes);
  const model = {
    format: 'graph-model', generatedBy: '2.15.0', convertedBy: 'streaminfer tests/ops/gen.js',
    modelTopology: { node: nodes, library: c.library || {}, versions: { producer: 1286 } },
    weightsManifest: [{ paths: ['group1-shard1of1.bin'], weights }],
  };
  return { model, shard: Buffer.concat(parts), covers };
}

// The ops besides c.op that the case's graph contains and tests, credited to
// the case by tests/ops/table.js (case.txt "covers"): those c.covers names,
// each of which must be a node of the graph or of a library function, and
// Placeholder and Const wherever the graph has such nodes.
function graphCovers(c, nodes) {
  const ops = new Set(nodes.map((n) => n.op));
  for (const f of (c.library && c.library.function) || []) for (const n of f.nodeDef || []) ops.add(n.op);
  for (const op of c.covers || []) {
    if (op === c.op) throw new Error(`covers its own op ${op}`);
    if (!ops.has(op)) throw new Error(`covers ${op}, which is no node of its graph`);
  }
  return [...new Set([...(c.covers || []), ...['Placeholder', 'Const'].filter((op) => op !== c.op && ops.has(op))])];
}

async function runCase(tf, loadGraphModel, dir, c) {
  fs.mkdirSync(dir, { recursive: true });
  const { model, shard, covers } = buildModel(c);
  fs.writeFileSync(path.join(dir, 'model.json'), JSON.stringify(model));
  fs.writeFileSync(path.join(dir, 'group1-shard1of1.bin'), shard);
  const lines = [`op ${c.op}`];
  if (covers.length) lines.push(`covers ${covers.join(' ')}`);
  const feed = {};
  c.inputs.forEach((inp, i) => {
    if (inp.const) return;
    const name = inp.name || `in${i}`;
    const file = `input_${name}.npy`;
    writeNpy(path.join(dir, file), inp.dtype, inp.shape, ARRAY[inp.dtype].from(inp.values));
    feed[name] = tf.tensor(inp.dtype === 'bool' ? inp.values.map((v) => !!v) : inp.values, inp.shape, inp.dtype);
    lines.push(`input ${name} ${file}`);
  });
  // direct: ops tfjs-converter 4.22 lists but does not map (its
  // operation_mapper.js imports no ragged op list, so such a graph fails to
  // load in tfjs): the reference is the tfjs-core op itself on the same inputs
  let res;
  if (c.direct) {
    res = await c.direct(tf, feed);
  } else {
    const gm = await loadGraphModel(makeIOHandler(path.join(dir, 'model.json')));
    res = await gm.executeAsync(feed);
  }
  if (!Array.isArray(res)) res = [res];
  for (let k = 0; k < res.length; k++) {
    const t = res[k];
    const file = `ref_${k}.npy`;
    writeNpy(path.join(dir, file), t.dtype, t.shape, await t.data());
    lines.push(`output ${file}`);
  }
  lines.push(`tol ${c.tol != null ? c.tol : 1e-3}`);
  // unseeded random ops: tfjs's values are a fresh draw, only the range counts
  if (c.range) lines.push(`range ${c.range[0]} ${c.range[1]}`);
  if (c.moments) lines.push(`moments ${c.moments.join(' ')}`);
  fs.writeFileSync(path.join(dir, 'case.txt'), lines.join('\n') + '\n');
  tf.dispose(res);
  tf.dispose(Object.values(feed));
}

async function main() {
  const argv = process.argv.slice(2);
  let only = null; let list = false; let out = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--only') only = new Set(argv[++i].split(','));
    else if (argv[i] === '--list') list = true;
    else out = argv[i];
  }
  const all = cases(mulberry32);
  const seen = new Set();
  for (const c of all) {
    if (seen.has(c.name)) throw new Error(`two cases named ${c.name}`);
    seen.add(c.name);
  }
  const chosen = all.filter((c) => !only || only.has(c.op) || (c.covers || []).some((op) => only.has(op)));
  if (list) {
    for (const c of chosen) process.stdout.write(`${c.op}\t${c.name}\n`);
    return;
  }
  if (!out) throw new Error('usage: node tests/ops/gen.js OUTDIR [--only OP,...] [--list]');
  const oracle = path.join(__dirname, '..', 'oracle');
  const need = (m) => require(require.resolve(m, { paths: [oracle] }));
  const tf = need('@tensorflow/tfjs-core');
  need('@tensorflow/tfjs-backend-cpu');
  const { loadGraphModel } = need('@tensorflow/tfjs-converter');
  console.warn = () => {}; // the tfjs-node advert
  await tf.setBackend('cpu');
  fs.rmSync(out, { recursive: true, force: true });
  for (const c of chosen) {
    try {
      await runCase(tf, loadGraphModel, path.join(out, c.name), c);
    } catch (e) {
      throw new Error(`case ${c.name} (${c.op}): ${e.message.split('\n')[0]}`);
    }
  }
  process.stdout.write(`gen.js: ${chosen.length} cases in ${out}\n`);
}

main().catch((e) => {
  process.stderr.write(`gen.js: error: ${e.message}\n`);
  process.exit(1);
});
