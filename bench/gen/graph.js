// A GraphDef-JSON builder that writes what tensorflowjs_converter writes for a
// SavedModel: model.json (format graph-model) and 4 MB weight shards.
'use strict';

const fs = require('fs');
const path = require('path');

const SHARD_BYTES = 4194304; // the converter's default weight_shard_size_bytes

const b64 = (s) => Buffer.from(s, 'latin1').toString('base64');
const DT = { float32: 'DT_FLOAT', int32: 'DT_INT32' };

// mulberry32, the generator tests/oracle/reference.js makes inputs with.
const { mulberry32 } = require('../../tests/oracle/reference.js');

class Rng {
  constructor(seed) { this.u = mulberry32(seed); this.spare = null; }
  uniform(lo = 0, hi = 1) { return lo + (hi - lo) * this.u(); }
  normal() {
    if (this.spare !== null) { const s = this.spare; this.spare = null; return s; }
    let u1 = this.u();
    if (u1 < 1e-12) u1 = 1e-12;
    const r = Math.sqrt(-2 * Math.log(u1));
    const th = 2 * Math.PI * this.u();
    this.spare = r * Math.sin(th);
    return r * Math.cos(th);
  }
}

const shapeAttr = (shape) => ({ dim: shape.map((d) => ({ size: String(d) })) });
const ilist = (a) => ({ list: { i: a.map(String) } });
const slist = (a) => ({ list: { s: a.map(b64) } });

class Graph {
  constructor(seed) {
    this.rng = new Rng(seed);
    this.nodes = [];
    this.weights = []; // {name, shape, dtype, data}
    this.used = new Set();
    this.shapes = new Map(); // node name -> static NHWC shape (null where dynamic)
    this.calib = new Map(); // conv node name -> how calib.js normalizes it
  }

  // Node names must be unique: the converter's names come from TF scopes, which
  // number repeats (conv, conv_1, ...).
  uniq(name) {
    if (!this.used.has(name)) { this.used.add(name); return name; }
    for (let k = 1; ; k++) {
      const n = `${name}_${k}`;
      if (!this.used.has(n)) { this.used.add(n); return n; }
    }
  }

  node(name, op, inputs, attr, shape) {
    const n = { name: this.uniq(name), op };
    if (inputs && inputs.length) n.input = inputs;
    n.attr = attr || {};
    this.nodes.push(n);
    this.shapes.set(n.name, shape || null);
    return n.name;
  }

  // A name taken now for a node built later (nodeAs): the -od replicas use a
  // value (the crops) before the nodes that make it, so that the weights the
  // plain model has keep their order and the post-processing's come after.
  reserve(name) { const n = this.uniq(name); this.shapes.set(n, null); return n; }

  nodeAs(reserved, op, inputs, attr) {
    if (!this.used.has(reserved) || this.nodes.some((x) => x.name === reserved)) throw new Error(`${reserved}: not reserved, or built`);
    const n = { name: reserved, op };
    if (inputs && inputs.length) n.input = inputs;
    n.attr = attr || {};
    this.nodes.push(n);
    return reserved;
  }

  constant(name, dtype, shape, data) {
    const count = shape.reduce((a, b) => a * b, 1);
    if (data.length !== count) throw new Error(`${name}: ${data.length} values for [${shape}]`);
    const nm = this.node(name, 'Const', null, {
      value: { tensor: { dtype: DT[dtype], tensorShape: shape.length ? shapeAttr(shape) : {} } },
      dtype: { type: DT[dtype] },
    }, shape);
    this.weights.push({ name: nm, shape, dtype, data });
    return nm;
  }

  constF(name, shape, fill) {
    const count = shape.reduce((a, b) => a * b, 1);
    const d = new Float32Array(count);
    for (let i = 0; i < count; i++) d[i] = fill(i);
    return this.constant(name, 'float32', shape, d);
  }

  constI(name, values, shape) {
    return this.constant(name, 'int32', shape || [values.length], Int32Array.from(values));
  }

  // He-style normal: std = gain * sqrt(2 / fan_in).
  heWeights(name, shape, fanIn, gain = 1) {
    const std = gain * Math.sqrt(2 / fanIn);
    return this.constF(name, shape, () => this.rng.normal() * std);
  }

  placeholder(name, shape) {
    return this.node(name, 'Placeholder', null, {
      dtype: { type: 'DT_FLOAT' }, shape: { shape: shapeAttr(shape) },
    }, shape.some((d) => d < 0) ? null : shape);
  }

  shape(name) { return this.shapes.get(name); }

  // ---------------------------------------------------------------- ops

  convAttrs(strides, padding, dilation) {
    return {
      T: { type: 'DT_FLOAT' },
      strides: ilist([1, strides, strides, 1]),
      padding: { s: b64(padding) },
      data_format: { s: b64('NHWC') },
      dilations: ilist([1, dilation, dilation, 1]),
      explicit_paddings: { list: {} },
    };
  }

  static convOut(n, k, s, d, padding) {
    const ke = (k - 1) * d + 1;
    return padding === 'SAME' ? Math.ceil(n / s) : Math.floor((n - ke) / s) + 1;
  }

  outShape(x, kh, kw, s, d, padding, c) {
    const sh = this.shape(x);
    if (!sh) return null;
    return [sh[0], Graph.convOut(sh[1], kh, s, d, padding), Graph.convOut(sh[2], kw, s, d, padding), c];
  }

  // Conv2D (no bias), or _FusedConv2D when `fused` names BiasAdd[, activation].
  conv(name, x, w, o) {
    const { stride = 1, padding = 'SAME', dilation = 1, bias = null, act = null } = o;
    const ws = this.shape(w);
    const attr = this.convAttrs(stride, padding, dilation);
    attr.use_cudnn_on_gpu = { b: true };
    const shape = this.outShape(x, ws[0], ws[1], stride, dilation, padding, ws[3]);
    if (!bias) return this.node(name, 'Conv2D', [x, w], attr, shape);
    attr.fused_ops = slist(act ? ['BiasAdd', act] : ['BiasAdd']);
    attr.num_args = { i: '1' };
    attr.epsilon = { f: 0 };
    return this.node(name, '_FusedConv2D', [x, w, bias], attr, shape);
  }

  depthwise(name, x, w, o) {
    const { stride = 1, padding = 'SAME', dilation = 1, bias = null, act = null } = o;
    const ws = this.shape(w);
    const attr = this.convAttrs(stride, padding, dilation);
    const shape = this.outShape(x, ws[0], ws[1], stride, dilation, padding, ws[2] * ws[3]);
    if (!bias) return this.node(name, 'DepthwiseConv2dNative', [x, w], attr, shape);
    attr.fused_ops = slist(act ? ['BiasAdd', act] : ['BiasAdd']);
    attr.num_args = { i: '1' };
    return this.node(name, 'FusedDepthwiseConv2dNative', [x, w, bias], attr, shape);
  }

  pool(name, op, x, k, s, padding) {
    const sh = this.shape(x);
    return this.node(name, op, [x], {
      T: { type: 'DT_FLOAT' }, ksize: ilist([1, k, k, 1]), strides: ilist([1, s, s, 1]),
      padding: { s: b64(padding) }, data_format: { s: b64('NHWC') }, explicit_paddings: { list: {} },
    }, sh && this.outShape(x, k, k, s, 1, padding, sh[3]));
  }

  // Broadcasting binary op; the static shape is the larger operand's.
  binary(name, op, a, b) {
    const sa = this.shape(a); const sb = this.shape(b);
    const size = (x) => x.reduce((p, q) => p * q, 1);
    let shape = null;
    if (sa && sb) shape = size(sa) >= size(sb) ? sa : sb;
    return this.node(name, op, [a, b], { T: { type: 'DT_FLOAT' } }, shape);
  }

  unary(name, op, x) { return this.node(name, op, [x], { T: { type: 'DT_FLOAT' } }, this.shape(x)); }

  swish(name, x) {
    const s = this.unary(`${name}/Sigmoid`, 'Sigmoid', x);
    return this.binary(`${name}/mul`, 'Mul', x, s);
  }

  mean(name, x, axes, keepDims) {
    const idx = this.constI(`${name}/reduction_indices`, axes);
    const sh = this.shape(x);
    let shape = null;
    if (sh) shape = keepDims ? sh.map((d, i) => (axes.includes(i) ? 1 : d)) : sh.filter((_, i) => !axes.includes(i));
    return this.node(name, 'Mean', [x, idx], {
      T: { type: 'DT_FLOAT' }, Tidx: { type: 'DT_INT32' }, keep_dims: { b: keepDims },
    }, shape);
  }

  reshape(name, x, dims, staticShape) {
    const s = this.constI(`${name}/shape`, dims);
    return this.node(name, 'Reshape', [x, s], { T: { type: 'DT_FLOAT' }, Tshape: { type: 'DT_INT32' } },
      staticShape || (dims.every((d) => d >= 0) ? dims : null));
  }

  concat(name, xs, axis, staticShape) {
    const a = this.constI(`${name}/axis`, [axis], []);
    return this.node(name, 'ConcatV2', [...xs, a], {
      T: { type: 'DT_FLOAT' }, Tidx: { type: 'DT_INT32' }, N: { i: String(xs.length) },
    }, staticShape || null);
  }

  resize(name, op, x, h, w, halfPixel) {
    const size = this.constI(`${name}/size`, [h, w]);
    const sh = this.shape(x);
    return this.node(name, op, [x, size], {
      T: { type: 'DT_FLOAT' }, align_corners: { b: false }, half_pixel_centers: { b: halfPixel },
    }, sh ? [sh[0], h, w, sh[3]] : null);
  }

  identity(name, x) { return this.node(name, 'Identity', [x], { T: { type: 'DT_FLOAT' } }, this.shape(x)); }

  // ---------------------------------------------------------------- output

  // params: the network's float32 values, without the post-processing's
  // constants (postproc.js, named .../Postprocessor/..., .../FirstStagePostprocessor/...), counted apart
  stats() {
    let params = 0; let bytes = 0; let postParams = 0; let postTensors = 0;
    for (const w of this.weights) {
      const n = w.data.length;
      const post = /Postprocessor\//.test(w.name);
      if (post) { postTensors++; if (w.dtype === 'float32') postParams += n; } else if (w.dtype === 'float32') params += n;
      bytes += n * 4;
    }
    const st = { params, bytes, tensors: this.weights.length, nodes: this.nodes.length };
    if (postTensors) st.post = { tensors: postTensors, params: postParams };
    return st;
  }
}

// ---------------------------------------------------------------- quantization
// As tensorflowjs/quantization.py does: uint8 per tensor with the range nudged so
// that 0.0 is exact; float16 by IEEE half rounding. Only float32 weights.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function toHalf(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

function quantize(w, quant) {
  if (quant === 'none' || w.dtype !== 'float32') return { bytes: Buffer.from(w.data.buffer, w.data.byteOffset, w.data.byteLength) };
  const d = w.data;
  if (quant === 'float16') {
    const out = Buffer.alloc(d.length * 2);
    for (let i = 0; i < d.length; i++) out.writeUInt16LE(toHalf(d[i]), i * 2);
    return { bytes: out, q: { dtype: 'float16', original_dtype: 'float32' } };
  }
  let lo = Infinity; let hi = -Infinity;
  for (let i = 0; i < d.length; i++) { if (d[i] < lo) lo = d[i]; if (d[i] > hi) hi = d[i]; }
  const out = Buffer.alloc(d.length);
  if (lo === hi) return { bytes: out, q: { dtype: 'uint8', min: lo, scale: 1.0, original_dtype: 'float32' } };
  const scale = (hi - lo) / 255;
  const zero = Math.round(-lo / scale);
  const nlo = -zero * scale; const nhi = nlo + 255 * scale;
  for (let i = 0; i < d.length; i++) {
    const v = Math.min(Math.max(d[i], nlo), nhi);
    out[i] = Math.round((v - nlo) / scale);
  }
  return { bytes: out, q: { dtype: 'uint8', min: nlo, scale, original_dtype: 'float32' } };
}

// Writes model.json and the shards. Returns the byte count written to shards.
function writeModel(g, outdir, { quant = 'none', signature, producer = 1395 }) {
  fs.mkdirSync(outdir, { recursive: true });
  for (const f of fs.readdirSync(outdir)) {
    if (/^group\d+-shard\d+of\d+\.bin$/.test(f) || f === 'model.json') fs.rmSync(path.join(outdir, f));
  }
  const entries = []; const parts = [];
  let total = 0;
  for (const w of g.weights) {
    const { bytes, q } = quantize(w, quant);
    const e = { name: w.name, shape: w.shape, dtype: w.dtype };
    if (q) e.quantization = q;
    entries.push(e); parts.push(bytes); total += bytes.length;
  }
  const nShards = Math.max(1, Math.ceil(total / SHARD_BYTES));
  const paths = [];
  for (let i = 1; i <= nShards; i++) paths.push(`group1-shard${i}of${nShards}.bin`);
  // Weights back to back; a weight may straddle two shards.
  let shard = 0; let buf = Buffer.alloc(Math.min(SHARD_BYTES, total)); let fill = 0;
  const flush = () => {
    fs.writeFileSync(path.join(outdir, paths[shard]), fill === buf.length ? buf : buf.subarray(0, fill));
    shard++; fill = 0;
  };
  for (const p of parts) {
    let off = 0;
    while (off < p.length) {
      const n = Math.min(p.length - off, buf.length - fill);
      p.copy(buf, fill, off, off + n);
      fill += n; off += n;
      if (fill === buf.length) flush();
    }
  }
  if (fill > 0 || shard === 0) flush();
  if (shard !== nShards) throw new Error(`wrote ${shard} shards, expected ${nShards}`);
  const model = {
    format: 'graph-model',
    generatedBy: '2.15.0',
    convertedBy: 'TensorFlow.js Converter v4.17.0',
    signature,
    modelTopology: { node: g.nodes, library: {}, versions: { producer } },
    weightsManifest: [{ paths, weights: entries }],
  };
  // The converter writes a single line; keep the key order it uses.
  const ordered = {
    format: model.format, generatedBy: model.generatedBy, convertedBy: model.convertedBy,
    signature: model.signature, modelTopology: model.modelTopology, weightsManifest: model.weightsManifest,
  };
  fs.writeFileSync(path.join(outdir, 'model.json'), JSON.stringify(ordered));
  return { total, shards: nShards };
}

module.exports = { Graph, Rng, mulberry32, writeModel, quantize, toHalf, SHARD_BYTES, shapeAttr };
