'use strict';
// streaminfer for Node.js: TensorFlow.js's GraphModel API over the C library
// (src/addon.c). Inputs are checked here, against what the model declares, so a
// wrong dtype or shape is refused before anything reaches the library; runs go
// to worker threads, one model's runs in the order they were asked for.
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');
const { fileURLToPath } = require('url');

const ADDON = process.env.STREAMINFER_ADDON || path.join(__dirname, 'build', 'streaminfer.node');
let native;
try {
  native = require(ADDON);
} catch (e) {
  e.message = `streaminfer: cannot load the addon ${ADDON} (build it with 'make node' at the ` +
    `top of the streaminfer sources, or 'npm install ./bindings/node'): ${e.message}`;
  throw e;
}

const DTYPES = ['float32', 'int32', 'bool']; // si_dtype's order
const ARRAYS = { float32: Float32Array, int32: Int32Array, bool: Uint8Array };
const IO = { mmap: 0, uring: 1 };
const BACKENDS = { gpu: 0, host: 1, auto: 2 };
const PRECISIONS = { f32: 0, f16: 1 }; // si_precision's order
const OPTIONS = ['vram', 'io', 'backend', 'precision', 'trace', 'tf'];

function siError(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

function parseOptions(o) {
  if (o === undefined || o === null) o = {};
  if (typeof o !== 'object') throw siError('SI_ARG', 'options must be an object');
  for (const k of Object.keys(o)) {
    if (!OPTIONS.includes(k)) {
      throw siError('SI_ARG', `unknown option '${k}' (streaminfer's options: ${OPTIONS.join(', ')})`);
    }
  }
  let vram = 0;
  if (typeof o.vram === 'string') {
    vram = native.parseSize(o.vram);
    if (vram === null) throw siError('SI_ARG', `vram: not a size: '${o.vram}' (512M, 1G, 1.5G or bytes)`);
  } else if (typeof o.vram === 'number' || typeof o.vram === 'bigint') {
    vram = Number(o.vram);
    if (!Number.isSafeInteger(vram) || vram < 0) throw siError('SI_ARG', `vram: not a size: ${o.vram}`);
  } else if (o.vram !== undefined && o.vram !== null) {
    throw siError('SI_ARG', 'vram must be a size such as \'256M\' or a number of bytes');
  }
  const pick = (key, table) => {
    if (o[key] === undefined) return 0;
    if (!(o[key] in table)) {
      throw siError('SI_ARG', `${key}: '${o[key]}' is not one of ${Object.keys(table).join(', ')}`);
    }
    return table[o[key]];
  };
  if (o.trace !== undefined && typeof o.trace !== 'string') throw siError('SI_ARG', 'trace must be a file path');
  return { vram, io: pick('io', IO), backend: pick('backend', BACKENDS), precision: pick('precision', PRECISIONS),
           trace: o.trace, tf: o.tf };
}

function modelFile(p) {
  if (p instanceof URL) return fileURLToPath(p);
  if (typeof p !== 'string') throw siError('SI_ARG', 'the model path must be a string');
  return p.startsWith('file://') ? fileURLToPath(p) : p;
}

// Output dtypes and shapes are not in the library's API before a run; the
// signature of model.json has them (what tfjs's GraphModel.outputs shows).
const DT = { DT_FLOAT: 'float32', DT_HALF: 'float32', DT_BOOL: 'bool' };
const dtOf = (t) => (t in DT ? DT[t] : /^DT_U?INT/.test(t) ? 'int32' : undefined);
const bare = (n) => n.replace(/:0$/, '');

function readSignature(file) {
  try {
    const json = fs.statSync(file).isDirectory() ? path.join(file, 'model.json') : file;
    const m = JSON.parse(fs.readFileSync(json, 'utf8'));
    const sig = m.signature || {};
    const entries = (part) => Object.entries(sig[part] || {}).map(([key, t]) => ({
      key,
      name: bare(t.name || key),
      dtype: t.dtype ? dtOf(t.dtype) : undefined,
      shape: t.tensorShape && !t.tensorShape.unknownRank
        ? (t.tensorShape.dim || []).map((d) => Number(d.size)) : undefined,
    }));
    const nodes = new Map(((m.modelTopology || {}).node || []).map((n) => [n.name, n]));
    return { inputs: entries('inputs'), outputs: entries('outputs'), nodes };
  } catch (e) {
    return { inputs: [], outputs: [], nodes: new Map() }; // the library has opened it; metadata only
  }
}

function isTensor(x) {
  return x !== null && typeof x === 'object' && Array.isArray(x.shape) &&
    (typeof x.dataSync === 'function' || 'data' in x);
}

const shapeText = (s) => `[${s.join(',')}]`;

function dtypeOfArray(a) {
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof Uint8Array) return 'bool';
  return undefined;
}

let tfjsCore; // undefined: not looked for yet; null: not found
function findTf() {
  if (tfjsCore === undefined) {
    tfjsCore = null;
    const from = [require.main && require.main.filename, path.join(process.cwd(), 'index.js'), __filename];
    for (const f of from) {
      if (!f) continue;
      try {
        tfjsCore = createRequire(f)('@tensorflow/tfjs-core');
        break;
      } catch (e) { /* next place */ }
    }
  }
  return tfjsCore;
}

class GraphModel {
  #h;
  #inputs;
  #outputs;
  #aliases; // {inputs, outputs}: Map of every accepted name to an index
  #tf;

  constructor(h, sig, tf) {
    this.#h = h;
    this.#tf = tf;
    const info = native.info(h);
    this.#inputs = info.inputs.map((i) => ({
      name: i.name,
      shape: i.shape === null ? undefined : i.shape,
      dtype: DTYPES[i.dtype],
    }));
    this.#outputs = info.outputs.map((name) => {
      const s = sig.outputs.find((o) => o.name === name);
      const node = sig.nodes.get(name);
      const attr = node && node.attr ? node.attr : {};
      const t = (attr.dtype || attr.T || {}).type;
      return { name, shape: s ? s.shape : undefined, dtype: s && s.dtype ? s.dtype : t ? dtOf(t) : undefined };
    });
    const names = (list, sigList) => {
      const m = new Map();
      list.forEach((t, i) => {
        m.set(t.name, i);
        m.set(`${t.name}:0`, i);
      });
      for (const s of sigList) if (m.has(s.name) && !m.has(s.key)) m.set(s.key, m.get(s.name));
      return m;
    };
    this.#aliases = { inputs: names(this.#inputs, sig.inputs), outputs: names(this.#outputs, sig.outputs) };
  }

  /** [{name, shape, dtype}]: shape has -1 for dimensions the input binds, undefined for an unknown rank */
  get inputs() { return this.#inputs.map((t) => ({ ...t, shape: t.shape && t.shape.slice() })); }
  /** [{name, shape, dtype}] as model.json's signature declares them (undefined where it does not) */
  get outputs() { return this.#outputs.map((t) => ({ ...t, shape: t.shape && t.shape.slice() })); }
  get inputNodes() { return this.#inputs.map((t) => t.name); }
  get outputNodes() { return this.#outputs.map((t) => t.name); }

  /** Runs now, in this thread (the event loop waits); see executeAsync. */
  execute(inputs, outputs) {
    const h = this.#live();
    const { list, tfjs } = this.#prepare(inputs);
    const sel = this.#select(outputs);
    return this.#finish(native.run(h, list, sel, false), tfjs);
  }

  /** Runs on a worker thread, after this model's earlier runs. Resolves to one
   * tensor when one output is asked for (or the model has one), else an array. */
  async executeAsync(inputs, outputs) {
    const h = this.#live();
    const { list, tfjs } = this.#prepare(inputs);
    const sel = this.#select(outputs);
    return this.#finish(await native.run(h, list, sel, true), tfjs);
  }

  predict(inputs) { return this.execute(inputs); }
  predictAsync(inputs) { return this.executeAsync(inputs); }

  /** The figures of the last run (streaminfer --stats): bytes, counts, ms. */
  stats() { return native.stats(this.#live()); }

  /** Frees the model (GPU memory included). Runs not started are rejected; one
   * already on a worker finishes first. */
  dispose() {
    if (this.#h) native.dispose(this.#h);
    this.#h = null;
  }

  #live() {
    if (!this.#h) throw siError('SI_DISPOSED', 'the model was disposed');
    return this.#h;
  }

  #select(outputs) {
    if (outputs === undefined || outputs === null) return undefined;
    const names = typeof outputs === 'string' ? [outputs] : outputs;
    if (!Array.isArray(names)) throw siError('SI_ARG', 'outputs must be a name or an array of names');
    return names.map((n) => {
      const i = this.#aliases.outputs.get(n);
      if (i === undefined) {
        throw siError('SI_ARG', `the model has no output named '${n}' (its outputs: ${this.outputNodes.join(', ')})`);
      }
      return i;
    });
  }

  #prepare(inputs) {
    const infos = this.#inputs;
    const given = new Array(infos.length);
    const names = () => infos.map((t) => t.name).join(', ');
    if (isTensor(inputs)) {
      if (infos.length !== 1) {
        throw siError('SI_INPUT', `the model has ${infos.length} inputs (${names()}): give an array or a {name: tensor} map`);
      }
      given[0] = inputs;
    } else if (Array.isArray(inputs)) {
      if (inputs.length !== infos.length) {
        throw siError('SI_INPUT', `the model has ${infos.length} input${infos.length === 1 ? '' : 's'} (${names()}), ${inputs.length} given`);
      }
      inputs.forEach((t, i) => { given[i] = t; });
    } else if (inputs !== null && typeof inputs === 'object') {
      for (const [key, t] of Object.entries(inputs)) {
        const i = this.#aliases.inputs.get(key);
        if (i === undefined) throw siError('SI_INPUT', `the model has no input named '${key}' (its inputs: ${names()})`);
        if (given[i] !== undefined) throw siError('SI_INPUT', `input '${infos[i].name}' given twice`);
        given[i] = t;
      }
      const missing = infos.filter((t, i) => given[i] === undefined).map((t) => t.name);
      if (missing.length) throw siError('SI_INPUT', `input${missing.length > 1 ? 's' : ''} '${missing.join("', '")}' missing`);
    } else {
      throw siError('SI_INPUT', 'inputs must be a tensor, an array of tensors or a {name: tensor} map');
    }
    let tfjs = false;
    const list = infos.map((info, i) => {
      const t = given[i];
      if (!isTensor(t)) {
        throw siError('SI_INPUT', `input '${info.name}' is not a tensor (a tfjs Tensor, or {data, shape, dtype})`);
      }
      const isTf = typeof t.dataSync === 'function';
      tfjs = tfjs || isTf;
      const dtype = t.dtype !== undefined ? t.dtype : dtypeOfArray(t.data);
      if (dtype !== info.dtype) throw siError('SI_INPUT', `input '${info.name}' must be ${info.dtype}, got ${dtype}`);
      const shape = t.shape;
      if (!shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
        throw siError('SI_INPUT', `input '${info.name}': bad shape ${shapeText(shape)}`);
      }
      if (info.shape && (shape.length !== info.shape.length || shape.some((d, k) => info.shape[k] >= 0 && info.shape[k] !== d))) {
        throw siError('SI_INPUT', `input '${info.name}' must have shape ${shapeText(info.shape)}, got ${shapeText(shape)}`);
      }
      const n = shape.reduce((a, d) => a * d, 1);
      const A = ARRAYS[dtype];
      let data = isTf ? t.dataSync() : t.data;
      if (Array.isArray(data)) {
        data = dtype === 'bool' ? A.from(data, (v) => (v ? 1 : 0)) : A.from(data);
      } else if (!(data instanceof A)) {
        const kind = data === null || data === undefined ? String(data) : data.constructor.name;
        throw siError('SI_INPUT', `input '${info.name}': ${dtype} data must be a ${A.name}, got ${kind}`);
      }
      if (data.length !== n) {
        throw siError('SI_INPUT', `input '${info.name}' has ${data.length} values, its shape ${shapeText(shape)} needs ${n}`);
      }
      return { name: info.name, dtype: DTYPES.indexOf(dtype), shape, data };
    });
    return { list, tfjs };
  }

  #finish(outs, tfjs) {
    const tf = tfjs ? this.#tf || findTf() : null;
    const res = tf ? outs.map((o) => tf.tensor(o.data, o.shape, o.dtype)) : outs;
    return res.length > 1 ? res : res[0];
  }
}

/** Opens a TensorFlow.js graph model (model.json, its folder, or a file:// URL).
 * options: vram ('256M', '1G' or bytes; none: no limit), io ('mmap' | 'uring'),
 * backend ('gpu' | 'host' | 'auto'), trace (a Chrome trace file written each run),
 * tf (the @tensorflow/tfjs-core module to make output tensors with; by default the
 * one the main program resolves). */
async function loadGraphModel(modelPath, options) {
  const opt = parseOptions(options);
  const file = modelFile(modelPath);
  const h = await native.open(file, opt);
  return new GraphModel(h, readSignature(file), opt.tf);
}

module.exports = {
  loadGraphModel,
  GraphModel,
  version: native.version(),
  /** si_model handles open in this process (for tests of leaks) */
  liveHandles: native.liveHandles,
};
