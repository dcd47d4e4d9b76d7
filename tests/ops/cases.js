// The per-op cases of tests/ops/gen.js: for each op, small graphs with random
// shapes and values (seeded per case, so a case is the same on every run),
// the attributes and dtypes it takes, and its edge cases. Data inputs are
// Placeholders with more than 16 elements where the GPU path is meant:
// smaller inputs are bound by value and fold on the host (CORE_VALUE_INPUT_MAX).
'use strict';

const T = (dt) => ({ type: { float32: 'DT_FLOAT', int32: 'DT_INT32', bool: 'DT_BOOL' }[dt] });
const I = (v) => ({ i: String(v) });
const F = (v) => ({ f: v });
const B = (v) => ({ b: v });
const S = (v) => ({ s: Buffer.from(v, 'latin1').toString('base64') });
const IL = (v) => ({ list: { i: v.map(String) } });

function cases(mulberry32) {
  const out = [];
  let seed = 1;
  // One generator per case: adding a case never changes another's values.
  const rngFor = () => mulberry32(0x9e3779b9 ^ (seed++ * 2654435761));
  const add = (c) => { out.push(c); };

  const util = (rng) => {
    const int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
    const uni = (lo, hi) => Math.fround(lo + (hi - lo) * rng());
    // rank 1..4, 17..maxCount elements
    const shape = (maxRank = 4, maxCount = 600) => {
      for (;;) {
        const r = int(1, maxRank);
        const s = Array.from({ length: r }, () => int(1, r === 1 ? 300 : r === 2 ? 24 : 9));
        const n = s.reduce((a, b) => a * b, 1);
        if (n >= 17 && n <= maxCount) return s;
      }
    };
    const vals = (n, f) => Array.from({ length: n }, f);
    const n = (s) => s.reduce((a, b) => a * b, 1);
    return { int, uni, shape, vals, n };
  };
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  // Values with the edge cases of float math mixed in.
  const SPECIAL = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 3.4e38, -3.4e38, 1e-38];

  // ---- unary elementwise, float32
  const unary = [
    ['Neg', -5, 5], ['Abs', -5, 5], ['Relu', -5, 5], ['Relu6', -8, 8], ['Elu', -4, 4],
    ['Selu', -4, 4], ['Sigmoid', -8, 8], ['Tanh', -5, 5], ['Exp', -8, 8], ['Log', 0.01, 50],
    ['Sqrt', 0, 50], ['Rsqrt', 0.05, 50], ['Square', -9, 9], ['Reciprocal', 0.1, 9],
    ['Floor', -9, 9], ['Ceil', -9, 9], ['Round', -9, 9], ['Sin', -6, 6], ['Cos', -6, 6],
    ['Tan', -1.4, 1.4], ['Asin', -0.99, 0.99], ['Acos', -0.99, 0.99], ['Atan', -9, 9],
    ['Sinh', -4, 4], ['Cosh', -4, 4], ['Sign', -3, 3], ['Softplus', -9, 9], ['Erf', -3, 3],
    ['Expm1', -3, 3], ['Log1p', -0.9, 9], ['Asinh', -20, 20], ['Acosh', 1, 40],
    ['Atanh', -0.99, 0.99],
  ];
  for (const [op, lo, hi] of unary) {
    for (let k = 0; k < 2; k++) {
      const u = util(rngFor());
      const s = u.shape();
      add({ name: `${op}_${k}`, op, attr: { T: T('float32') }, inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(lo, hi)))] });
    }
  }
  // the inverse hyperbolics at their domain's edges: tfjs gives NaN outside,
  // +-Inf at atanh(+-1), and asinh is odd
  {
    const edge = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 1.5, -1.5, 0.5, -0.5, 1e-8, 1e30, -1e30, 1e19, 0.999999, -0.999999];
    for (const op of ['Asinh', 'Acosh', 'Atanh']) {
      add({ name: `${op}_edges`, op, attr: { T: T('float32') }, inputs: [ph('float32', [edge.length], edge)] });
    }
  }
  // LeakyRelu's alpha attr
  {
    const u = util(rngFor());
    const s = u.shape();
    add({ name: 'LeakyRelu_0', op: 'LeakyRelu', attr: { T: T('float32'), alpha: F(0.15) }, inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-5, 5)))] });
  }

  // ---- IsNan, IsFinite, IsInf: bool outputs, the edge cases are the point
  for (const op of ['IsNan', 'IsFinite', 'IsInf']) {
    for (let k = 0; k < 2; k++) {
      const u = util(rngFor());
      const s = u.shape();
      const v = u.vals(u.n(s), () => (u.int(0, 2) === 0 ? SPECIAL[u.int(0, SPECIAL.length - 1)] : u.uni(-1e3, 1e3)));
      add({ name: `${op}_${k}`, op, attr: { T: T('float32') }, inputs: [ph('float32', s, v)] });
    }
  }

  // ---- ClipByValue: scalar or broadcast bounds, float and int, NaN passes
  for (let k = 0; k < 4; k++) {
    const u = util(rngFor());
    const s = u.shape();
    const dt = k === 3 ? 'int32' : 'float32';
    const v = dt === 'int32' ? u.vals(u.n(s), () => u.int(-50, 50))
      : u.vals(u.n(s), () => (u.int(0, 9) === 0 ? SPECIAL[u.int(0, 5)] : u.uni(-5, 5)));
    const lo = dt === 'int32' ? -7 : u.uni(-3, 0);
    const hi = dt === 'int32' ? 20 : u.uni(0, 3);
    const inputs = [ph(dt, s, v), cst(dt, [], [lo]), cst(dt, [], [hi])];
    // a bound given as a tensor: tfjs's converter reads its first element ('number')
    if (k === 2) inputs[1] = cst(dt, [3], [lo, lo - 1, lo + 1]);
    add({ name: `ClipByValue_${k}`, op: 'ClipByValue', attr: { T: T(dt) }, inputs });
  }

  // ---- binary elementwise, with broadcasting
  const binary = [
    ['Add', -5, 5], ['AddV2', -5, 5], ['Sub', -5, 5], ['Mul', -5, 5], ['RealDiv', 0.5, 5],
    ['Maximum', -5, 5], ['Minimum', -5, 5], ['Pow', 0.1, 3], ['SquaredDifference', -5, 5],
    ['Atan2', -5, 5], ['FloorMod', 0.5, 9],
  ];
  for (const [op, lo, hi] of binary) {
    const u = util(rngFor());
    const s = u.shape(4, 400);
    const t = s.map((d, i) => (i % 2 ? d : 1)); // broadcasts along every other axis
    add({
      name: `${op}_0`, op, attr: { T: T('float32') },
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(lo, hi))), ph('float32', t, u.vals(u.n(t), () => u.uni(lo, hi)))],
    });
  }
  // FloorDiv: tfjs's kernel gives int32 whatever its inputs (floor_div.js,
  // binaryKernelFunc(..., 'int32')); here float FloorDiv stays float32, so
  // only the int32 form is a case until that is settled
  {
    const u = util(rngFor());
    const s = u.shape();
    add({
      name: 'FloorDiv_int', op: 'FloorDiv', attr: { T: T('int32') },
      inputs: [ph('int32', s, u.vals(u.n(s), () => u.int(-60, 60))), ph('int32', s, u.vals(u.n(s), () => u.int(1, 9) * (u.int(0, 1) ? 1 : -1)))],
    });
  }
  for (const op of ['Equal', 'Less', 'GreaterEqual']) {
    const u = util(rngFor());
    const s = u.shape();
    add({
      name: `${op}_0`, op, attr: { T: T('int32') },
      inputs: [ph('int32', s, u.vals(u.n(s), () => u.int(0, 4))), ph('int32', s, u.vals(u.n(s), () => u.int(0, 4)))],
    });
  }
  // ---- FusedBatchNorm, V2, V3 (inference): per-channel statistics as weights,
  // one case with them as model inputs, epsilon given or default
  for (const [k, op] of ['FusedBatchNorm', 'FusedBatchNormV2', 'FusedBatchNormV3', 'FusedBatchNormV3'].entries()) {
    const u = util(rngFor());
    const s = k === 0 ? [u.int(1, 2), u.int(2, 7), u.int(2, 7), u.int(1, 9)] : u.shape(4, 900);
    if (u.n(s) < 17) s[0] = 17;
    const ch = s[s.length - 1];
    const stat = (lo, hi) => u.vals(ch, () => u.uni(lo, hi));
    const mk = k === 3 ? ph : cst;
    const attr = { T: T('float32'), data_format: S('NHWC'), is_training: B(false) };
    if (k !== 1) attr.epsilon = F(k === 2 ? 1e-5 : 0.01);
    if (op === 'FusedBatchNormV3') attr.U = T('float32');
    add({
      name: `${op}_${k}`, op, attr, outputs: 1,
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-4, 4))), mk('float32', [ch], stat(0.5, 2), 'scale'),
        mk('float32', [ch], stat(-1, 1), 'offset'), mk('float32', [ch], stat(-1, 1), 'mean'), mk('float32', [ch], stat(0.01, 3), 'variance')],
    });
  }
  // ---- Zeros, Ones: every dtype and an empty shape; their outputs are
  // constants, so they fold on the host under both backends
  for (const op of ['Zeros', 'Ones']) {
    for (const dt of ['float32', 'int32', 'bool']) {
      const u = util(rngFor());
      const s = u.shape();
      add({ name: `${op}_${dt}`, op, attr: { T: T(dt) }, inputs: [cst('int32', [s.length], s, 'shape')] });
    }
    add({ name: `${op}_empty`, op, attr: { T: T('float32') }, inputs: [cst('int32', [2], [3, 0], 'shape')] });
  }
  for (const c of require('./cases_image.js').imageCases(rngFor, util, { T, F, S })) add(c);
  for (const c of require('./cases_einsum.js').einsumCases(rngFor, util, { T, I, S })) add(c);
  for (const c of require('./cases_creation.js').creationCases(rngFor, util, { T, I })) add(c);
  for (const c of require('./cases_random.js').randomCases(rngFor, util, { T, I, F })) add(c);
  for (const c of require('./cases_sparse.js').sparseCases(rngFor, util, { T })) add(c);
  for (const c of require('./cases_conv3d.js').conv3dCases(rngFor, util, { T, I, B, S, IL })) add(c);
  for (const c of require('./cases_scatter.js').scatterCases(rngFor, util, { T, I })) add(c);
  for (const c of require('./cases_control.js').controlCases(rngFor, util, { T })) add(c);
  for (const c of require('./cases_transform.js').transformCases(rngFor, util, { T })) add(c);
  for (const c of require('./cases_misc.js').miscCases(rngFor, util, { T, I, F, B })) add(c);
  for (const c of require('./cases_casesB.js').dynamicCases(rngFor, util, { T })) add(c);
  for (const c of require('./cases_cplx.js').cplxCases(rngFor, util, { T })) add(c);
  for (const c of require('./cases_casesC.js').casesC(rngFor, util, { T, I, B, S, IL })) add(c);
  for (const c of require('./cases_einsum.js').einsumBlockCases(rngFor, util, { T, I, S })) add(c);
  for (const c of require('./cases_str.js').strCases(rngFor, util, { T, I, B, S })) add(c);
  for (const c of require('./cases_casesA.js').casesACases(rngFor, util, { T, I, F, B, S, IL })) add(c);
  return out;
}

module.exports = { cases, T, I, F, B, S, IL };
