// EfficientDet D0-D7: EfficientNet B0-B6 backbone, BiFPN, shared class/box heads,
// with batch norm folded into the conv biases as the converter does.
'use strict';

const postproc = require('./postproc');

// [backbone width, depth coefficients], BiFPN width, BiFPN repeats, head depth, input size
const CONFIGS = {
  'effdet-d0': { net: [1.0, 1.0], fpnW: 64, fpnD: 3, headD: 3, size: 512, real: 3.9e6 },
  'effdet-d1': { net: [1.0, 1.1], fpnW: 88, fpnD: 4, headD: 3, size: 640, real: 6.6e6 },
  'effdet-d2': { net: [1.1, 1.2], fpnW: 112, fpnD: 5, headD: 3, size: 768, real: 8.1e6 },
  'effdet-d3': { net: [1.2, 1.4], fpnW: 160, fpnD: 6, headD: 4, size: 896, real: 12.0e6 },
  'effdet-d4': { net: [1.4, 1.8], fpnW: 224, fpnD: 7, headD: 4, size: 1024, real: 20.7e6 },
  'effdet-d5': { net: [1.6, 2.2], fpnW: 288, fpnD: 7, headD: 4, size: 1280, real: 33.7e6 },
  'effdet-d6': { net: [1.8, 2.6], fpnW: 384, fpnD: 8, headD: 5, size: 1280, real: 51.9e6 },
  'effdet-d7': { net: [1.8, 2.6], fpnW: 384, fpnD: 8, headD: 5, size: 1536, real: 51.9e6 },
};

// EfficientNet-B0 stages: expand ratio, kernel, stride, in, out, repeats.
const B0_BLOCKS = [
  [1, 3, 1, 32, 16, 1], [6, 3, 2, 16, 24, 2], [6, 5, 2, 24, 40, 2], [6, 3, 2, 40, 80, 3],
  [6, 5, 1, 80, 112, 3], [6, 5, 2, 112, 192, 4], [6, 3, 1, 192, 320, 1],
];
const NUM_CLASSES = 90;
const NUM_ANCHORS = 9;

function roundFilters(f, w) {
  const x = f * w;
  let n = Math.max(8, Math.floor((x + 4) / 8) * 8);
  if (n < 0.9 * x) n += 8;
  return n;
}

function build(G, name, cfg, size, od) {
  const g = G;
  const rng = g.rng;
  const [wc, dc] = cfg.net;
  const P = `StatefulPartitionedCall/${name}`;
  const bias = (n, c, lo = -0.1, hi = 0.1) => g.constF(n, [c], () => rng.uniform(lo, hi));

  // 1x1 or kxk conv with folded batch norm: weights + bias, He-initialized, then
  // normalized by calib.js to std gamma, mean beta (as a trained batch norm
  // leaves them). Projections into a residual sum get a smaller gamma.
  const convBn = (n, x, cin, cout, k, o = {}) => {
    const w = g.heWeights(`${n}/weights`, [k, k, cin, cout], k * k * cin);
    const b = bias(`${n}/bias`, cout, ...(o.fixed || [-0.1, 0.1]));
    const t = g.conv(`${n}/BiasAdd`, x, w, { stride: o.stride || 1, bias: b, act: o.act || null });
    if (!o.fixed) g.calib.set(t, { kind: 'fold', gamma: o.gamma || [0.8, 1.2], beta: o.beta || [-0.1, 0.1] });
    return t;
  };
  const dwBn = (n, x, c, k, stride) => {
    const w = g.heWeights(`${n}/depthwise_weights`, [k, k, c, 1], k * k);
    const b = bias(`${n}/bias`, c);
    const t = g.depthwise(`${n}/depthwise`, x, w, { stride, bias: b });
    g.calib.set(t, { kind: 'fold', gamma: [0.8, 1.2], beta: [-0.1, 0.1] });
    return t;
  };

  // ------------------------------------------------ input normalization
  const input = g.placeholder('input_tensor', [1, size, size, 3]);
  let x = g.binary(`${P}/preprocess/sub`, 'Sub', input, g.constF(`${P}/preprocess/mean`, [3], (i) => [0.485, 0.456, 0.406][i]));
  x = g.binary(`${P}/preprocess/mul`, 'Mul', x, g.constF(`${P}/preprocess/inv_std`, [3], (i) => 1 / [0.229, 0.224, 0.225][i]));

  // ------------------------------------------------ backbone
  const B = `${P}/efficientnet-b/model`;
  const stemC = roundFilters(32, wc);
  x = convBn(`${B}/stem/conv2d`, x, 3, stemC, 3, { stride: 2 });
  x = g.swish(`${B}/stem/swish`, x);
  let cin = stemC;
  const feats = {}; let stride = 2; let blk = 0;
  B0_BLOCKS.forEach(([e, k, s, , fout, r], si) => {
    const cout = roundFilters(fout, wc);
    const reps = Math.ceil(dc * r);
    for (let i = 0; i < reps; i++) {
      const st = i === 0 ? s : 1;
      const n = `${B}/blocks_${blk++}`;
      const x0 = x;
      let h = x; const mid = cin * e;
      if (e !== 1) h = g.swish(`${n}/expand_swish`, convBn(`${n}/conv2d`, h, cin, mid, 1));
      h = g.swish(`${n}/dw_swish`, dwBn(`${n}/depthwise_conv2d`, h, mid, k, st));
      // squeeze-excite on the block's input width / 4; its convs keep their He
      // weights (a gate near sigmoid(1)): normalized on the global mean of one
      // input they would amplify the next input's differences block after block.
      const red = Math.max(1, Math.floor(cin * 0.25));
      let se = g.mean(`${n}/se/Mean`, h, [1, 2], true);
      se = g.swish(`${n}/se/reduce_swish`, convBn(`${n}/se/conv2d`, se, mid, red, 1, { fixed: [-0.1, 0.1] }));
      se = convBn(`${n}/se/conv2d_1`, se, red, mid, 1, { fixed: [0.5, 1.5] });
      se = g.unary(`${n}/se/Sigmoid`, 'Sigmoid', se);
      h = g.binary(`${n}/se/mul`, 'Mul', h, se);
      h = convBn(`${n}/project_conv2d`, h, mid, cout, 1, { gamma: [0.4, 0.8], beta: [-0.05, 0.05] });
      if (st === 1 && cin === cout) h = g.binary(`${n}/add`, 'AddV2', h, x0);
      x = h; cin = cout; stride *= st;
    }
    if (si === 2) feats[3] = [x, cin];
    if (si === 4) feats[4] = [x, cin];
    if (si === 6) feats[5] = [x, cin];
  });

  // ------------------------------------------------ BiFPN
  const W = cfg.fpnW;
  const R = `${P}/resample_p6`;
  let p6 = convBn(`${R}/conv2d`, feats[5][0], feats[5][1], W, 1);
  p6 = g.pool(`${R}/max_pooling2d/MaxPool`, 'MaxPool', p6, 3, 2, 'SAME');
  const p7 = g.pool(`${P}/resample_p7/max_pooling2d/MaxPool`, 'MaxPool', p6, 3, 2, 'SAME');
  let levels = { 3: feats[3], 4: feats[4], 5: feats[5], 6: [p6, W], 7: [p7, W] };

  const up = (n, t) => { const s = g.shape(t); return g.resize(`${n}/ResizeNearestNeighbor`, 'ResizeNearestNeighbor', t, s[1] * 2, s[2] * 2, false); };
  const down = (n, t) => g.pool(`${n}/MaxPool`, 'MaxPool', t, 3, 2, 'SAME');
  const project = (n, [t, c]) => (c === W ? t : convBn(`${n}/conv2d`, t, c, W, 1));

  for (let L = 0; L < cfg.fpnD; L++) {
    const F = `${P}/bifpn/cell_${L}`;
    let fn = 0;
    // Fast normalized fusion: relu(w_i) / (sum relu(w) + 1e-4), folded to constants;
    // then swish and a separable conv (depthwise, then 1x1 with folded batch norm).
    const fuse = (ins) => {
      const n = `${F}/fnode${fn++}`;
      const wr = ins.map(() => rng.uniform(0.5, 1.5));
      const sum = wr.reduce((a, b) => a + b, 0) + 1e-4;
      let acc = null;
      ins.forEach((t, i) => {
        const m = g.binary(`${n}/WSM${i ? '_' + i : ''}/mul`, 'Mul', t, g.constF(`${n}/WSM${i ? '_' + i : ''}/weight`, [], () => wr[i] / sum));
        acc = acc ? g.binary(`${n}/add${i > 1 ? '_' + (i - 1) : ''}`, 'AddV2', acc, m) : m;
      });
      acc = g.swish(`${n}/op_after_combine/swish`, acc);
      const dw = g.depthwise(`${n}/op_after_combine/separable_conv2d/depthwise`, acc,
        g.heWeights(`${n}/op_after_combine/separable_conv2d/depthwise_weights`, [3, 3, W, 1], 9), {});
      return convBn(`${n}/op_after_combine/separable_conv2d`, dw, W, W, 1, {});
    };
    const inp = {};
    for (let l = 3; l <= 7; l++) inp[l] = project(`${F}/resample_${l}`, levels[l]);
    // Bottom-up reuses P4/P5 inputs; in the first cell those need their own projection.
    const inp2 = {};
    for (let l = 4; l <= 6; l++) inp2[l] = L === 0 && levels[l][1] !== W ? project(`${F}/resample_${l}_1`, levels[l]) : inp[l];
    const td = {};
    td[7] = inp[7];
    for (let l = 6; l >= 3; l--) td[l] = fuse([inp[l], up(`${F}/up_${l}`, td[l + 1])]);
    const out = { 3: td[3] };
    for (let l = 4; l <= 7; l++) {
      const ins = l < 7 ? [inp2[l], td[l]] : [inp[7]];
      out[l] = fuse([...ins, down(`${F}/down_${l}`, out[l - 1])]);
    }
    levels = {};
    for (let l = 3; l <= 7; l++) levels[l] = [out[l], W];
  }

  // ------------------------------------------------ heads, shared across levels
  const head = (hn, nOut, outBias) => {
    const H = `${P}/${hn}`;
    const ln = hn.split('_')[0];
    const layers = [];
    for (let i = 0; i < cfg.headD; i++) {
      layers.push({
        dw: g.heWeights(`${H}/${ln}-${i}/depthwise_weights`, [3, 3, W, 1], 9),
        pw: g.heWeights(`${H}/${ln}-${i}/pointwise_weights`, [1, 1, W, W], W),
        b: bias(`${H}/${ln}-${i}/bias`, W),
      });
    }
    const fdw = g.heWeights(`${H}/predict/depthwise_weights`, [3, 3, W, 1], 9);
    const fpw = g.heWeights(`${H}/predict/pointwise_weights`, [1, 1, W, nOut], W);
    const fb = g.constF(`${H}/predict/bias`, [nOut], () => outBias + rng.uniform(-0.1, 0.1));
    const per = [];
    for (let l = 3; l <= 7; l++) {
      let t = levels[l][0];
      layers.forEach((ly, i) => {
        const n = `${H}/level_${l}/${ln}-${i}`;
        t = g.depthwise(`${n}/separable_conv2d/depthwise`, t, ly.dw, {});
        t = g.conv(`${n}/BiasAdd`, t, ly.pw, { bias: ly.b });
        g.calib.set(t, { kind: 'fold', gamma: [0.8, 1.2], beta: [-0.1, 0.1] });
        t = g.swish(`${n}/swish`, t);
      });
      t = g.depthwise(`${H}/level_${l}/predict/separable_conv2d/depthwise`, t, fdw, {});
      t = g.conv(`${H}/level_${l}/predict/BiasAdd`, t, fpw, { bias: fb });
      g.calib.set(t, { kind: 'fold', gamma: [1, 1], beta: [outBias - 0.1, outBias + 0.1] });
      const s = g.shape(t);
      const rows = s[1] * s[2] * NUM_ANCHORS;
      per.push([g.reshape(`${H}/Reshape_${l}`, t, [1, rows, nOut / NUM_ANCHORS]), rows]);
    }
    const total = per.reduce((a, [, r]) => a + r, 0);
    return g.concat(`${H}/concat`, per.map(([t]) => t), 1, [1, total, nOut / NUM_ANCHORS]);
  };
  const cls = head('class_net', NUM_ANCHORS * NUM_CLASSES, -4.6);
  const box = head('box_net', NUM_ANCHORS * 4, 0);
  const sig = (nm, t, d) => ({ name: `${nm}:0`, dtype: 'DT_FLOAT', tensorShape: { dim: (d || g.shape(t)).map((v) => ({ size: String(v) })) } });
  if (od) {
    // the -od replicas: the post-processing of a TF2 OD API export after the heads
    const outs = postproc.effdetPost(g, P, cls, box, { size, classes: NUM_CLASSES, ...od });
    const outputs = {};
    Object.entries(outs).forEach(([k, [t, d]], i) => {
      const o = g.identity(i ? `Identity_${i}` : 'Identity', t);
      outputs[k] = sig(o, o, d);
    });
    return { signature: { inputs: { input_tensor: sig('input_tensor', input) }, outputs } };
  }
  const o0 = g.identity('Identity', cls);
  const o1 = g.identity('Identity_1', box);
  return {
    signature: {
      inputs: { input_tensor: sig('input_tensor', input) },
      outputs: { class_outputs: sig(o0, o0), box_outputs: sig(o1, o1) },
    },
  };
}

module.exports = { CONFIGS, build };
