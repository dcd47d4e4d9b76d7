#!/usr/bin/env node
// streaminfer test oracle: runs a TensorFlow.js graph model under Node with
// tfjs-backend-cpu on seeded inputs and writes inputs/outputs as .npy files.
//
// usage: node tests/oracle/reference.js MODEL OUTDIR [--seed N]
//            [--shape NAME=d0,d1,...]... [--inputs-only] [--use-inputs]
//
// MODEL is a folder holding model.json or a graph-model .json file; weight
// shards are resolved relative to the json's folder.  See DESIGN.md,
// "Reference outputs".
'use strict';

const fs = require('fs');
const path = require('path');

const VERSION = 1; // bump when the input generation or file layout changes

const USAGE = 'usage: node tests/oracle/reference.js MODEL OUTDIR [--seed N] ' +
  '[--shape NAME=d0,d1,...]... [--inputs-only] [--use-inputs]';

class UsageError extends Error {}

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const opt = { seed: 1, shapes: new Map(), inputsOnly: false, useInputs: false };
  const pos = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const takeValue = (flag) => {
      const eq = a.indexOf('=');
      if (a.startsWith(flag + '=')) return a.slice(eq + 1);
      if (i + 1 >= argv.length) throw new UsageError(`${flag} needs a value`);
      return argv[++i];
    };
    if (a === '--help' || a === '-h') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else if (a === '--seed' || a.startsWith('--seed=')) {
      const v = takeValue('--seed');
      if (!/^-?\d+$/.test(v)) throw new UsageError(`--seed: not an integer: ${v}`);
      opt.seed = Number(v);
      if (!Number.isSafeInteger(opt.seed)) throw new UsageError(`--seed: out of range: ${v}`);
    } else if (a === '--shape' || a.startsWith('--shape=')) {
      const v = takeValue('--shape');
      const eq = v.lastIndexOf('=');
      if (eq <= 0) throw new UsageError(`--shape: expected NAME=d0,d1,..., got ${v}`);
      const name = v.slice(0, eq);
      const dimsText = v.slice(eq + 1);
      const dims = dimsText === '' ? [] : dimsText.split(',').map((d) => {
        if (!/^\d+$/.test(d.trim())) throw new UsageError(`--shape ${name}: bad dimension '${d}'`);
        return Number(d.trim());
      });
      opt.shapes.set(name, dims);
    } else if (a === '--inputs-only') {
      opt.inputsOnly = true;
    } else if (a === '--use-inputs') {
      opt.useInputs = true;
    } else if (a.startsWith('--')) {
      throw new UsageError(`unknown option ${a}`);
    } else {
      pos.push(a);
    }
  }
  if (pos.length !== 2) throw new UsageError('expected MODEL and OUTDIR');
  if (opt.inputsOnly && opt.useInputs) throw new UsageError('--inputs-only and --use-inputs exclude each other');
  opt.model = pos[0];
  opt.outdir = pos[1];
  return opt;
}

// ---------------------------------------------------------------- .npy

const NPY_MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // \x93NUMPY

const DTYPE_TO_DESCR = { float32: '<f4', int32: '<i4', bool: '|b1' };
const DESCR_TO_DTYPE = { '<f4': 'float32', '<i4': 'int32', '|b1': 'bool', '|u1': 'bool' };
const DTYPE_ARRAY = { float32: Float32Array, int32: Int32Array, bool: Uint8Array };

function npyShapeText(shape) {
  if (shape.length === 0) return '()';
  if (shape.length === 1) return `(${shape[0]},)`;
  return `(${shape.join(', ')})`;
}

// Encodes a typed array (Float32Array / Int32Array / Uint8Array for bool) as
// a version 1.0 .npy file: little-endian, C order, header padded so the data
// starts at a multiple of 64 bytes.
function npyEncode(dtype, shape, values) {
  const descr = DTYPE_TO_DESCR[dtype];
  if (!descr) throw new Error(`cannot write dtype ${dtype} as .npy`);
  const count = shape.reduce((a, b) => a * b, 1);
  if (values.length !== count) {
    throw new Error(`npy: ${values.length} values for shape [${shape}]`);
  }
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${npyShapeText(shape)}, }`;
  const pre = NPY_MAGIC.length + 2 + 2; // magic, version, uint16 header length
  const total = Math.ceil((pre + header.length + 1) / 64) * 64;
  header = header + ' '.repeat(total - pre - header.length - 1) + '\n';
  if (header.length > 0xffff) throw new Error('npy: header too long');
  const head = Buffer.alloc(pre);
  NPY_MAGIC.copy(head, 0);
  head[6] = 1; head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  let body;
  if (dtype === 'bool') {
    body = Buffer.alloc(count);
    for (let i = 0; i < count; i++) body[i] = values[i] ? 1 : 0;
  } else {
    body = Buffer.alloc(count * 4);
    for (let i = 0; i < count; i++) {
      if (dtype === 'float32') body.writeFloatLE(values[i], i * 4);
      else body.writeInt32LE(values[i], i * 4);
    }
  }
  return Buffer.concat([head, Buffer.from(header, 'latin1'), body]);
}

function writeNpy(file, dtype, shape, values) {
  fs.writeFileSync(file, npyEncode(dtype, shape, values));
}

// Reads a .npy file written by npyEncode (or numpy) with descr <f4, <i4,
// |b1 or |u1 (read as bool) in C order.  Returns {dtype, shape, values}.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || !buf.subarray(0, 6).equals(NPY_MAGIC)) {
    throw new Error(`${file}: not a .npy file`);
  }
  const major = buf[6];
  let hlen; let off;
  if (major === 1) { hlen = buf.readUInt16LE(8); off = 10; } else if (major === 2 || major === 3) {
    hlen = buf.readUInt32LE(8); off = 12;
  } else throw new Error(`${file}: unsupported .npy version ${major}`);
  const header = buf.subarray(off, off + hlen).toString(major === 3 ? 'utf8' : 'latin1');
  const descrM = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortM = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeM = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descrM || !fortM || !shapeM) throw new Error(`${file}: bad .npy header ${header.trim()}`);
  if (fortM[1] !== 'False') throw new Error(`${file}: fortran_order arrays are not supported`);
  const dtype = DESCR_TO_DTYPE[descrM[1]];
  if (!dtype) throw new Error(`${file}: unsupported .npy dtype ${descrM[1]}`);
  const shape = shapeM[1].split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`${file}: bad shape (${shapeM[1]})`);
  const count = shape.reduce((a, b) => a * b, 1);
  const data = off + hlen;
  const size = dtype === 'bool' ? 1 : 4;
  if (buf.length - data !== count * size) {
    throw new Error(`${file}: ${buf.length - data} data bytes, expected ${count * size}`);
  }
  const values = new DTYPE_ARRAY[dtype](count);
  for (let i = 0; i < count; i++) {
    const p = data + i * size;
    if (dtype === 'float32') values[i] = buf.readFloatLE(p);
    else if (dtype === 'int32') values[i] = buf.readInt32LE(p);
    else values[i] = buf[p] ? 1 : 0;
  }
  return { dtype, shape, values };
}

// ---------------------------------------------------------------- inputs

// mulberry32 on a uint32 state; in C:
//   s += 0x6D2B79F5; t = s; t = (t ^ t >> 15) * (t | 1);
//   t ^= t + (t ^ t >> 7) * (t | 61); return (t ^ t >> 14) / 4294967296.0;
// (all uint32_t arithmetic).  The state is the seed taken modulo 2^32.
function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generateValues(dtype, count, seed) {
  const rand = mulberry32(seed);
  const values = new DTYPE_ARRAY[dtype](count);
  for (let i = 0; i < count; i++) {
    const r = rand();
    if (dtype === 'float32') values[i] = Math.fround(r);
    else if (dtype === 'int32') values[i] = Math.floor(r * 256);
    else values[i] = r < 0.5 ? 1 : 0;
  }
  return values;
}

function sanitize(name) {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

// Assigns file names, adding a numeric suffix if two names sanitize alike.
function uniqueFile(used, base) {
  let file = `${base}.npy`;
  for (let k = 2; used.has(file); k++) file = `${base}__${k}.npy`;
  used.add(file);
  return file;
}

function resolveShape(info, shapes) {
  const given = shapes.get(info.name);
  const modelShape = Array.isArray(info.shape) ? info.shape : null;
  if (given) {
    if (modelShape) {
      if (given.length !== modelShape.length) {
        throw new Error(`--shape ${info.name}: rank ${given.length}, model says [${modelShape}]`);
      }
      modelShape.forEach((d, i) => {
        if (d != null && d >= 0 && d !== given[i]) {
          throw new Error(`--shape ${info.name}: dimension ${i} is ${given[i]}, model says ${d}`);
        }
      });
    }
    return given.slice();
  }
  if (!modelShape) throw new Error(`input ${info.name} has no shape in the model; give --shape ${info.name}=...`);
  return modelShape.map((d, i) => {
    if (d != null && d >= 0) return d;
    if (i === 0) return 1;
    throw new Error(`input ${info.name} has unknown dimension ${i} in [${modelShape}]; give --shape ${info.name}=...`);
  });
}

// ---------------------------------------------------------------- model loading

function modelJsonPath(model) {
  let st;
  try { st = fs.statSync(model); } catch (e) { throw new Error(`model not found: ${model}`); }
  if (st.isDirectory()) {
    const p = path.join(model, 'model.json');
    if (!fs.existsSync(p)) throw new Error(`no model.json in ${model}`);
    return path.resolve(p);
  }
  return path.resolve(model);
}

function readShard(dir, p) {
  const candidates = [path.resolve(dir, p)];
  try { candidates.push(path.resolve(dir, decodeURIComponent(p))); } catch (e) { /* keep raw */ }
  for (const c of candidates) {
    if (fs.existsSync(c)) return fs.readFileSync(c);
  }
  throw new Error(`weight shard not found: ${candidates[0]}`);
}

function makeIOHandler(jsonPath) {
  return {
    load: async () => {
      let json;
      try {
        json = JSON.parse(fs.readFileSync(jsonPath, 'utf8'));
      } catch (e) {
        throw new Error(`cannot read ${jsonPath}: ${e.message}`);
      }
      if (!json.modelTopology) throw new Error(`${jsonPath}: no modelTopology (not a graph model?)`);
      const dir = path.dirname(jsonPath);
      const weightSpecs = [];
      const buffers = [];
      for (const group of json.weightsManifest || []) {
        for (const p of group.paths || []) buffers.push(readShard(dir, p));
        weightSpecs.push(...(group.weights || []));
      }
      const all = Buffer.concat(buffers);
      const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
      const artifacts = {
        modelTopology: json.modelTopology,
        weightSpecs,
        weightData,
        format: json.format,
        generatedBy: json.generatedBy,
        convertedBy: json.convertedBy,
        signature: json.signature,
        userDefinedMetadata: json.userDefinedMetadata,
      };
      if (json.modelInitializer != null) artifacts.modelInitializer = json.modelInitializer;
      if (json.initializerSignature != null) artifacts.initializerSignature = json.initializerSignature;
      return artifacts;
    },
  };
}

// ---------------------------------------------------------------- console

// tfjs prints a tfjs-node advert and an execute()-would-do hint through
// console.warn.  Drop those two; hold any other message back so that a failed
// run prints only its one error line, and a good run shows them on stderr.
const KNOWN_NOISE = [/looks like you are running TensorFlow\.js in Node\.js/,
  /did not contain any nodes with control flow/];
const heldMessages = [];
function holdConsole() {
  const hold = (...args) => {
    const text = args.map((a) => (typeof a === 'string' ? a : String(a))).join(' ');
    if (!KNOWN_NOISE.some((re) => re.test(text))) heldMessages.push(text);
  };
  console.warn = hold;
  console.log = hold;
  console.info = hold;
}

// ---------------------------------------------------------------- main

async function main() {
  const opt = parseArgs(process.argv.slice(2));
  const jsonPath = modelJsonPath(opt.model);
  const outdir = path.resolve(opt.outdir);
  fs.mkdirSync(outdir, { recursive: true });
  // A manifest from an earlier run must not outlive a failed one.
  if (!opt.inputsOnly) fs.rmSync(path.join(outdir, 'manifest.json'), { force: true });

  let tf; let loadGraphModel;
  try {
    tf = require('@tensorflow/tfjs-core');
    require('@tensorflow/tfjs-backend-cpu');
    ({ loadGraphModel } = require('@tensorflow/tfjs-converter'));
  } catch (e) {
    throw new Error(`cannot load TensorFlow.js (${e.message.split('\n')[0]}); run tests/oracle/setup.sh`);
  }
  if (!(await tf.setBackend('cpu'))) throw new Error('cannot set the tfjs cpu backend');
  await tf.ready();

  const model = await loadGraphModel(makeIOHandler(jsonPath));
  const inputInfos = model.inputs;
  const inputKeys = model.inputNodes; // signature key or node name, as the model feeds them
  const outputInfos = model.outputs;

  for (const name of opt.shapes.keys()) {
    if (!inputInfos.some((i) => i.name === name)) {
      throw new Error(`--shape ${name}: no such input (inputs: ${inputInfos.map((i) => i.name).join(', ')})`);
    }
  }

  const usedFiles = new Set();
  const inputs = [];
  const feed = {};
  inputInfos.forEach((info, idx) => {
    const dtype = info.dtype || 'float32';
    if (!DTYPE_TO_DESCR[dtype]) throw new Error(`input ${info.name}: unsupported dtype ${dtype}`);
    const file = uniqueFile(usedFiles, `input_${sanitize(info.name)}`);
    const filePath = path.join(outdir, file);
    let shape; let values;
    if (opt.useInputs) {
      if (!fs.existsSync(filePath)) throw new Error(`--use-inputs: missing ${filePath}`);
      const npy = readNpy(filePath);
      if (npy.dtype !== dtype) throw new Error(`${filePath}: dtype ${npy.dtype}, model input ${info.name} wants ${dtype}`);
      const modelShape = Array.isArray(info.shape) ? info.shape : null;
      if (modelShape) {
        const ok = modelShape.length === npy.shape.length &&
          modelShape.every((d, i) => d == null || d < 0 || d === npy.shape[i]);
        if (!ok) throw new Error(`${filePath}: shape [${npy.shape}] does not fit input ${info.name} [${modelShape}]`);
      }
      shape = npy.shape; values = npy.values;
    } else {
      shape = resolveShape(info, opt.shapes);
      const count = shape.reduce((a, b) => a * b, 1);
      values = generateValues(dtype, count, opt.seed + 7919 * idx);
      writeNpy(filePath, dtype, shape, values);
    }
    inputs.push({ name: info.name, file, shape, dtype });
    feed[inputKeys[idx]] = tf.tensor(dtype === 'bool' ? Array.from(values, (v) => v !== 0) : values, shape, dtype);
  });

  const manifest = { model: jsonPath, seed: opt.seed, version: VERSION, inputs, outputs: [], ms: null };
  if (opt.inputsOnly) {
    fs.writeFileSync(path.join(outdir, 'inputs.json'), JSON.stringify(
      { model: jsonPath, seed: opt.seed, version: VERSION, inputs }, null, 2) + '\n');
    for (const i of inputs) process.stdout.write(`input ${i.name} [${i.shape}] ${i.dtype} -> ${i.file}\n`);
    return;
  }

  const t0 = performance.now();
  let result = await model.executeAsync(feed);
  const ms = performance.now() - t0;
  if (!Array.isArray(result)) {
    if (result instanceof tf.Tensor) result = [result];
    else throw new Error('executeAsync returned a named map; expected tensors in outputNodes order');
  }
  if (result.length !== outputInfos.length) {
    throw new Error(`executeAsync returned ${result.length} tensors for ${outputInfos.length} model outputs`);
  }

  for (let i = 0; i < result.length; i++) {
    const t = result[i];
    const name = outputInfos[i].name;
    if (!DTYPE_TO_DESCR[t.dtype]) throw new Error(`output ${name}: cannot write dtype ${t.dtype}`);
    const file = uniqueFile(usedFiles, sanitize(name));
    const values = await t.data();
    writeNpy(path.join(outdir, file), t.dtype, t.shape, values);
    manifest.outputs.push({ name, file, shape: t.shape.slice(), dtype: t.dtype });
  }
  manifest.ms = Math.round(ms * 1000) / 1000;
  // Write the manifest last so its presence means the folder is complete.
  const mtmp = path.join(outdir, 'manifest.json.tmp');
  fs.writeFileSync(mtmp, JSON.stringify(manifest, null, 2) + '\n');
  fs.renameSync(mtmp, path.join(outdir, 'manifest.json'));

  for (const o of manifest.outputs) process.stdout.write(`${o.name} [${o.shape}] ${o.dtype}\n`);
  process.stdout.write(`executeAsync ${manifest.ms.toFixed(1)} ms\n`);
}

if (require.main === module) {
  holdConsole();
  main().then(() => {
    for (const m of heldMessages) process.stderr.write(`reference.js: tfjs: ${m.trim()}\n`);
    process.exit(0);
  }, (err) => {
    const msg = (err && err.message ? err.message : String(err)).split('\n')[0];
    const hint = err instanceof UsageError ? ` (${USAGE})` : '';
    process.stderr.write(`reference.js: error: ${msg}${hint}\n`);
    process.exit(1);
  });
}

module.exports = { npyEncode, readNpy, writeNpy, mulberry32, generateValues, sanitize, makeIOHandler, VERSION };
