#!/usr/bin/env node
// Checks a generated model.
//   node bench/gen/check.js stats DIR...           mean/std/min/max of every .npy in DIR
//   node bench/gen/check.js compare REFDIR OUTDIR  max|out-ref| against 1e-3*max(1,max|ref|)
//   node bench/gen/check.js probe MODEL [--size S] [--every N]
//       runs tfjs-cpu on a seeded input and prints the statistics of the outputs and
//       of every Nth Relu/AddV2/Mul node: activations must stay finite and not vanish.
//   node bench/gen/check.js nms OUTDIR MODEL
//       how much work each NMS of an -od replica did: from its raw outputs in OUTDIR
//       (raw_detection_boxes, raw_detection_scores, by the model's signature) and the
//       thresholds in MODEL's graph, per class the candidates over the score
//       threshold, how many the NMS kept (at most max_output_size) and suppressed.
//   node bench/gen/check.js ties REFDIR OUTDIR MODEL
//       frcnn-*-od where compare fails on order alone: the proposal NMS's inputs
//       within tolerance, each side's NMS exact on its own inputs, the same
//       proposals kept, the detections the same as a set (rows moved only
//       where their scores are within 1e-5 of another's: a near tie).
'use strict';

const fs = require('fs');
const path = require('path');
const oracle = require('../../tests/oracle/reference.js');
// tfjs is installed beside the oracle (tests/oracle/setup.sh).
const oracleRequire = require('module').createRequire(require.resolve('../../tests/oracle/reference.js'));

function stat(values) {
  let n = 0; let s = 0; let s2 = 0; let lo = Infinity; let hi = -Infinity; let bad = 0; let zero = 0;
  for (const v of values) {
    if (!Number.isFinite(v)) { bad++; continue; }
    n++; s += v; s2 += v * v; if (v < lo) lo = v; if (v > hi) hi = v; if (v === 0) zero++;
  }
  const mean = s / n;
  return { mean, std: Math.sqrt(Math.max(0, s2 / n - mean * mean)), lo, hi, bad, zero, n };
}
const fmt = (st) => `mean ${st.mean.toExponential(3)} std ${st.std.toExponential(3)} min ${st.lo.toExponential(3)} ` +
  `max ${st.hi.toExponential(3)} nonfinite ${st.bad} zero ${(100 * st.zero / Math.max(1, st.n)).toFixed(1)}%`;

function npys(dir) { return fs.readdirSync(dir).filter((f) => f.endsWith('.npy') && !f.startsWith('input_')).sort(); }

function stats(dirs) {
  for (const d of dirs) {
    for (const f of npys(d)) {
      const a = oracle.readNpy(path.join(d, f));
      console.log(`${path.join(d, f)} [${a.shape}] ${fmt(stat(a.values))}`);
    }
  }
}

function compare(refDir, outDir) {
  let ok = true;
  for (const f of npys(refDir)) {
    const r = oracle.readNpy(path.join(refDir, f));
    const p = path.join(outDir, f);
    if (!fs.existsSync(p)) { console.log(`${f}: missing in ${outDir}`); ok = false; continue; }
    const o = oracle.readNpy(p);
    if (o.shape.join() !== r.shape.join()) { console.log(`${f}: shape [${o.shape}] vs ref [${r.shape}]`); ok = false; continue; }
    let maxRef = 0; let maxDiff = 0; let at = -1;
    for (let i = 0; i < r.values.length; i++) {
      maxRef = Math.max(maxRef, Math.abs(r.values[i]));
      const dv = Math.abs(o.values[i] - r.values[i]);
      if (!(dv <= maxDiff)) { maxDiff = Number.isNaN(dv) ? Infinity : dv; at = i; }
    }
    const tol = 1e-3 * Math.max(1, maxRef);
    const pass = maxDiff <= tol;
    ok = ok && pass;
    console.log(`${f} [${r.shape}]: max|out-ref| ${maxDiff.toExponential(3)} (at ${at}) tol ${tol.toExponential(3)} ${pass ? 'PASS' : 'FAIL'}`);
  }
  return ok;
}

async function probe(model, size, every) {
  const tf = oracleRequire('@tensorflow/tfjs-core');
  oracleRequire('@tensorflow/tfjs-backend-cpu');
  const { loadGraphModel } = oracleRequire('@tensorflow/tfjs-converter');
  console.warn = () => {};
  await tf.setBackend('cpu');
  const dir = model;
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const bufs = json.weightsManifest[0].paths.map((p) => fs.readFileSync(path.join(dir, p)));
  const all = Buffer.concat(bufs);
  const m = await loadGraphModel({
    load: async () => ({
      modelTopology: json.modelTopology, weightSpecs: json.weightsManifest[0].weights,
      weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength),
      format: json.format, generatedBy: json.generatedBy, convertedBy: json.convertedBy, signature: json.signature,
    }),
  });
  const inp = m.inputs[0];
  const shape = inp.shape.map((d, i) => (d > 0 ? d : i === 0 ? 1 : i === 3 ? 3 : size));
  const count = shape.reduce((a, b) => a * b, 1);
  const x = tf.tensor(oracle.generateValues('float32', count, 1), shape);
  const picks = json.modelTopology.node.filter((n) => ['Relu', 'AddV2', 'Mul'].includes(n.op) &&
    /(add|Relu|se\/mul|swish\/mul)$/.test(n.name));
  const chosen = picks.filter((_, i) => i % every === 0 || i === picks.length - 1).map((n) => n.name);
  const outNames = m.outputNodes;
  const t0 = Date.now();
  const res = await m.executeAsync({ [m.inputNodes[0]]: x }, [...chosen, ...outNames]);
  const secs = (Date.now() - t0) / 1000;
  res.forEach((t, i) => {
    const name = i < chosen.length ? chosen[i] : `OUTPUT ${outNames[i - chosen.length]}`;
    console.log(`${name} [${t.shape}] ${fmt(stat(t.dataSync()))}`);
  });
  console.log(`input [${shape}], tfjs-cpu ${secs.toFixed(1)} s`);
}

function iouOf(b, i, j) {
  const [ay0, ax0, ay1, ax1] = [Math.min(b[4 * i], b[4 * i + 2]), Math.min(b[4 * i + 1], b[4 * i + 3]), Math.max(b[4 * i], b[4 * i + 2]), Math.max(b[4 * i + 1], b[4 * i + 3])];
  const [by0, bx0, by1, bx1] = [Math.min(b[4 * j], b[4 * j + 2]), Math.min(b[4 * j + 1], b[4 * j + 3]), Math.max(b[4 * j], b[4 * j + 2]), Math.max(b[4 * j + 1], b[4 * j + 3])];
  const aa = (ay1 - ay0) * (ax1 - ax0); const ab = (by1 - by0) * (bx1 - bx0);
  if (aa <= 0 || ab <= 0) return 0;
  const ih = Math.max(Math.min(ay1, by1) - Math.max(ay0, by0), 0); const iw = Math.max(Math.min(ax1, bx1) - Math.max(ax0, bx0), 0);
  return (ih * iw) / (aa + ab - ih * iw);
}

// Greedy hard NMS as TensorFlow's: candidates by descending score, a candidate
// kept unless it overlaps a kept one by more than iou; stops at maxOut kept.
// Candidate a's box is box a (boxes shared by the classes) or, with perClass,
// box a * stride + off. Returns [candidates, kept, suppressed before the stop].
function nmsWork(boxes, scores, stride, off, n, maxOut, iou, thr, perClass = false) {
  const cand = [];
  for (let a = 0; a < n; a++) if (scores[a * stride + off] > thr) cand.push(a);
  cand.sort((p, q) => scores[q * stride + off] - scores[p * stride + off] || p - q);
  const bi = (a) => (perClass ? a * stride + off : a);
  const kept = []; let supp = 0;
  for (const a of cand) {
    if (kept.length >= maxOut) break;
    if (kept.some((k) => iouOf(boxes, bi(k), bi(a)) > iou)) supp++; else kept.push(a);
  }
  return [cand.length, kept.length, supp];
}

// A model's json, the .npy file an output is written to, and a scalar weight
// (an NMS's max output, IoU and score threshold) read from its shards.
function modelReader(model) {
  const json = JSON.parse(fs.readFileSync(path.join(model, 'model.json'), 'utf8'));
  const outs = json.signature.outputs;
  const wts = json.weightsManifest[0].weights;
  let all = null;
  return {
    json,
    outs,
    file: (dir, k) => path.join(dir, `${outs[k].name.replace(/:0$/, '').replace(/\//g, '_')}.npy`),
    scalar: (name) => {
      all = all || Buffer.concat(json.weightsManifest[0].paths.map((p) => fs.readFileSync(path.join(model, p))));
      const i = wts.findIndex((x) => x.name === name);
      let off = 0;
      for (let k = 0; k < i; k++) off += wts[k].shape.reduce((a, b) => a * b, 1) * 4;
      return wts[i].dtype === 'int32' ? all.readInt32LE(off) : all.readFloatLE(off);
    },
  };
}

function nms(outDir, model) {
  const { json, outs, file: outFile, scalar: wv } = modelReader(model);
  const file = (k) => outFile(outDir, k);
  const nodes = json.modelTopology.node;
  // effdet-*-od: one NMS per class on the anchors' boxes; frcnn-irv2-od: the
  // proposals' NMS (one class) on the decoded anchors, then one per class on
  // each class's boxes decoded from the proposals
  const stages = outs.raw_proposal_boxes ? [
    ['proposals', 'raw_proposal_boxes', 'raw_proposal_scores', 'FirstStagePostprocessor/', 'anchors'],
    ['detections', 'raw_detection_boxes', 'raw_detection_scores', 'SecondStagePostprocessor/', 'proposals'],
  ] : [['detections', 'raw_detection_boxes', 'raw_detection_scores', '', 'anchors']];
  let ok = true;
  for (const [what, bk, sk, scope, per] of stages) {
    const boxes = oracle.readNpy(file(bk));
    const scores = oracle.readNpy(file(sk));
    const nmsNode = nodes.find((n) => n.op.startsWith('NonMaxSuppression') && n.name.includes(scope));
    const [maxOut, iou, thr] = [2, 3, 4].map((k) => wv(nmsNode.input[k]));
    const A = scores.shape[1]; const C = scores.shape.length > 2 ? scores.shape[2] : 1;
    const perClass = boxes.shape.length === 4;
    let tc = 0; let tk = 0; let ts = 0; let minC = Infinity; let maxC = 0; let noWork = 0;
    for (let c = 0; c < C; c++) {
      const [nc, nk, ns] = nmsWork(boxes.values, scores.values, C, c, A, maxOut, iou, thr, perClass);
      tc += nc; tk += nk; ts += ns; minC = Math.min(minC, nc); maxC = Math.max(maxC, nc);
      if (ns === 0 || nk === 0) noWork++;
    }
    console.log(`${path.basename(model)} ${what}: ${C} classes x ${A} ${per}, score threshold ${thr}, IoU ${iou}, at most ${maxOut} per class: ` +
      `candidates ${tc} (per class ${minC} to ${maxC}), kept ${tk}, suppressed ${ts}; classes where nothing was suppressed or nothing kept: ${noWork}`);
    ok = ok && noWork === 0;
  }
  return ok;
}

// Greedy hard NMS as TensorFlow's (NonMaxSuppressionV3): the kept candidates'
// indices, candidates over thr by descending score, ties by index.
function nmsKept(boxes, scores, maxOut, iou, thr) {
  const cand = [];
  for (let a = 0; a < scores.length; a++) if (scores[a] > thr) cand.push(a);
  cand.sort((p, q) => scores[q] - scores[p] || p - q);
  const kept = [];
  for (const a of cand) {
    if (kept.length >= maxOut) break;
    if (!kept.some((k) => iouOf(boxes, k, a) > iou)) kept.push(a);
  }
  return kept;
}

// frcnn-*-od against a reference where float rounding reorders near ties: the
// proposal NMS's inputs within tolerance; on each side the NMS exact (a plain
// greedy NMS on that side's own raw boxes and scores gives its proposals bit
// for bit); the same proposals kept on both sides (as a set: a tie in the
// scores may order them otherwise, and the second stage's rows with them);
// the detections the same as a set of (class, score, box) rows within
// tolerance, the rows out of place only where scores tie.
function ties(refDir, outDir, model) {
  const { json, file, scalar: wv } = modelReader(model);
  const rd = (d, k) => oracle.readNpy(file(d, k)).values;
  const nmsNode = json.modelTopology.node.find((n) => n.op.startsWith('NonMaxSuppression') && n.name.includes('FirstStagePostprocessor/'));
  const [maxOut, iou, thr] = [2, 3, 4].map((k) => wv(nmsNode.input[k]));
  let ok = true;
  const say = (good, msg) => { console.log(`${good ? 'ok  ' : 'FAIL'} ${msg}`); ok = ok && good; };
  const within = (a, b) => {
    let m = 0; let big = 0;
    for (let i = 0; i < a.length; i++) { m = Math.max(m, Math.abs(a[i] - b[i])); big = Math.max(big, Math.abs(a[i])); }
    return [m <= 1e-3 * Math.max(1, big), m];
  };
  for (const k of ['raw_proposal_boxes', 'raw_proposal_scores']) {
    const [good, m] = within(rd(refDir, k), rd(outDir, k));
    say(good, `${k}: max|out-ref| ${m.toExponential(3)}`);
  }
  const kept = {};
  for (const [side, d] of [['reference', refDir], ['output', outDir]]) {
    const b = rd(d, 'raw_proposal_boxes'); const sc = rd(d, 'raw_proposal_scores'); const p = rd(d, 'proposal_boxes');
    const k = nmsKept(b, sc, maxOut, iou, thr);
    const exact = k.every((a, i) => [0, 1, 2, 3].every((q) => b[4 * a + q] === p[4 * i + q]));
    say(exact, `${side}: a plain NMS on its raw proposals gives its ${k.length} proposals bit for bit`);
    kept[side] = { k, sc };
  }
  const [a, c] = [kept.reference.k, kept.output.k];
  const inC = new Set(c);
  say(a.length === c.length && a.every((x) => inC.has(x)), `the same ${a.length} proposals kept on both sides`);
  const first = a.findIndex((x, i) => x !== c[i]);
  if (first >= 0) {
    const [x, y] = [a[first], c[first]];
    console.log(`     in another order from proposal ${first}: anchors ${x} and ${y} score ` +
      `${kept.reference.sc[x]} and ${kept.reference.sc[y]} in the reference, ` +
      `${kept.output.sc[x]} and ${kept.output.sc[y]} in the output`);
  }
  const det = (d) => {
    const b = rd(d, 'detection_boxes'); const sc = rd(d, 'detection_scores'); const cl = rd(d, 'detection_classes');
    return Array.from(sc, (v, i) => [cl[i], v, ...b.slice(4 * i, 4 * i + 4)]);
  };
  const dr = det(refDir); const dq = det(outDir);
  const used = new Set(); let matched = 0; let moved = 0; let tied = 0; let worst = 0;
  dr.forEach((x, i) => {
    let best = -1; let bd = Infinity;
    dq.forEach((y, j) => {
      if (used.has(j) || y[0] !== x[0]) return;
      const dd = Math.max(...x.map((v, q) => Math.abs(v - y[q])));
      if (dd < bd) { bd = dd; best = j; }
    });
    if (best < 0 || bd > 1e-3) return;
    used.add(best); matched++; worst = Math.max(worst, bd);
    // a near tie: float rounding (~2e-6 in the raw scores) can order it either way
    if (best !== i) { moved++; if (dr.some((z, j) => j !== i && Math.abs(z[1] - x[1]) <= 1e-5)) tied++; }
  });
  say(matched === dr.length && tied === moved, `detections: ${matched} of ${dr.length} the same as a set ` +
    `(max diff ${worst.toExponential(3)}); ${moved} in another place, ${tied} of them within 1e-5 in score of another row`);
  return ok;
}

module.exports = { nmsWork };
async function main() {
  const [cmd, ...rest] = process.argv.slice(2);
  if (cmd === 'stats') stats(rest);
  else if (cmd === 'compare') { if (!compare(rest[0], rest[1])) process.exit(1); } else if (cmd === 'probe') {
    let size = 128; let every = 10; const pos = [];
    for (let i = 0; i < rest.length; i++) {
      if (rest[i] === '--size') size = Number(rest[++i]);
      else if (rest[i] === '--every') every = Number(rest[++i]);
      else pos.push(rest[i]);
    }
    await probe(pos[0], size, every);
  } else if (cmd === 'nms') {
    if (!nms(rest[0], rest[1])) process.exit(1);
  } else if (cmd === 'ties') {
    if (!ties(rest[0], rest[1], rest[2])) process.exit(1);
  } else {
    console.error('usage: check.js stats DIR... | compare REFDIR OUTDIR | probe MODEL [--size S] [--every N] | nms OUTDIR MODEL | ties REFDIR OUTDIR MODEL');
    process.exit(2);
  }
}

if (require.main === module) main().catch((e) => { console.error(`check.js: error: ${e.message}`); process.exit(1); });
