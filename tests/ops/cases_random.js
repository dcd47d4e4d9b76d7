// Per-op cases of the random ops (tests/ops/gen.js; cases.js appends them),
// as tfjs-core's rand_util.js draws them from seedrandom's alea. Seeded ones
// are compared with tfjs's values (ints exactly, floats to 1e-6); where tfjs
// seeds from Math.random (RandomUniform always, a seed attr of 0 for
// RandomStandardNormal, TruncatedNormal and Multinomial) only the range and
// the moments are checked: streaminfer seeds those from the node's name.
'use strict';

function randomCases(rngFor, util, { T, I, F }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const shapeIn = (s) => cst('int32', [s.length], s, 'shape');
  // RandomStandardNormal: seeded, several shapes and seeds (the polar method's
  // spare value, an odd count)
  [[[7, 9], 5], [[301], 1234], [[2, 3, 5], 87654321], [[1], -17]].forEach(([s, seed], k) => {
    out.push({ name: `RandomStandardNormal_${k}`, op: 'RandomStandardNormal', tol: 1e-6,
      attr: { dtype: T('float32'), T: T('int32'), seed: I(seed), seed2: I(3) }, inputs: [shapeIn(s)] });
  });
  out.push({ name: 'RandomStandardNormal_unseeded', op: 'RandomStandardNormal', range: [-8, 8], moments: [0, 1, 0.1],
    attr: { dtype: T('float32'), T: T('int32'), seed: I(0), seed2: I(0) }, inputs: [shapeIn([40, 50])] });
  // TruncatedNormal: within two standard deviations, redrawn outside
  [[[500], 99], [[6, 7], 3]].forEach(([s, seed], k) => {
    out.push({ name: `TruncatedNormal_${k}`, op: 'TruncatedNormal', tol: 1e-6,
      attr: { dtype: T('float32'), T: T('int32'), seed: I(seed), seed2: I(0) }, inputs: [shapeIn(s)] });
  });
  out.push({ name: 'TruncatedNormal_unseeded', op: 'TruncatedNormal', range: [-2, 2], moments: [0, 0.88, 0.1],
    attr: { dtype: T('float32'), T: T('int32'), seed: I(0), seed2: I(0) }, inputs: [shapeIn([2000])] });
  // RandomUniformInt: seeded always (0 too), min/max as attrs, truncation of
  // negative values toward zero; without min/max tfjs draws from [0, 1): zeros
  [[[50], 0, -5, 17], [[4, 8], 42, -1000, 1000], [[3, 3, 3], 7, 3, 9]].forEach(([s, seed, lo, hi], k) => {
    out.push({ name: `RandomUniformInt_${k}`, op: 'RandomUniformInt', tol: 0,
      attr: { Tout: T('int32'), T: T('int32'), seed: I(seed), seed2: I(0), minval: I(lo), maxval: I(hi) }, inputs: [shapeIn(s)] });
  });
  out.push({ name: 'RandomUniformInt_noattrs', op: 'RandomUniformInt', tol: 0,
    attr: { Tout: T('int32'), T: T('int32'), seed: I(11), seed2: I(0) }, inputs: [shapeIn([20])] });
  // RandomUniform: tfjs's converter never passes the seed
  out.push({ name: 'RandomUniform_0', op: 'RandomUniform', range: [0, 1], moments: [0.5, 0.2887, 0.05],
    attr: { dtype: T('float32'), T: T('int32'), seed: I(8), seed2: I(0) }, inputs: [shapeIn([30, 40])] });
  // Multinomial: logits as data (placeholders), softmax, float32 cdf, every
  // row restarting the generator; extreme logits put all mass on one event
  [[[3, 6], 50, 7], [[2, 20], 33, 123456], [[1, 2], 40, 2]].forEach(([s, n, seed], k) => {
    const u = util(rngFor());
    const v = u.vals(u.n(s), () => u.uni(-3, 3));
    out.push({ name: `Multinomial_${k}`, op: 'Multinomial', tol: 0,
      attr: { T: T('float32'), output_dtype: T('int32'), seed: I(seed), seed2: I(0) },
      inputs: [ph('float32', s, v, 'logits'), cst('int32', [], [n], 'num_samples')] });
  });
  {
    const v = [0, 0, 50, 0, -50, 0, 0, 0, 0, 0, 0, 0, 30, 30, 0, 0, 0, 0];
    out.push({ name: 'Multinomial_peaked', op: 'Multinomial', tol: 0,
      attr: { T: T('float32'), output_dtype: T('int32'), seed: I(5), seed2: I(0) },
      inputs: [ph('float32', [3, 6], v, 'logits'), cst('int32', [], [25], 'num_samples')] });
  }
  out.push({ name: 'Multinomial_unseeded', op: 'Multinomial', range: [0, 4],
    attr: { T: T('float32'), output_dtype: T('int32'), seed: I(0), seed2: I(0) },
    inputs: [ph('float32', [4, 5], Array.from({ length: 20 }, (_, i) => (i % 5) * 0.3), 'logits'), cst('int32', [], [30], 'num_samples')] });
  return out;
}

module.exports = { randomCases };
