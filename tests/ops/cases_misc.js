// Per-op cases of Cumsum, Cumprod, LRN, MatrixBandPart, BitwiseAnd,
// EuclideanNorm and RaggedTensorToTensor (tests/ops/gen.js; cases.js appends
// them). Where a tfjs graph cannot run the node, or runs it into a malformed
// tensor, the reference is the tfjs-core op itself (direct), and the case says why.
'use strict';

function miscCases(rngFor, util, { T, I, F, B }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });

  // ---- Cumsum, Cumprod: every exclusive/reverse pair, random axes, float32
  // and int32; int32 sums wrap, int32 products are tfjs's float64 products
  // (big factors: past 2^53 they round before the Int32Array wraps them)
  const SCAN_SPECIAL = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 3.4e38, -3.4e38, 1e-38];
  for (const op of ['Cumsum', 'Cumprod']) {
    let k = 0;
    for (const dt of ['float32', 'int32']) {
      for (let flags = 0; flags < 4; flags++) {
        const u = util(rngFor());
        const s = u.shape();
        const axis = u.int(0, s.length - 1);
        const big = dt === 'int32' && flags === 3;
        const x = dt === 'int32'
          ? u.vals(u.n(s), () => (big ? u.int(-2147483648, 2147483647) : u.int(op === 'Cumsum' ? -2000000000 : -3, op === 'Cumsum' ? 2000000000 : 3)))
          : u.vals(u.n(s), () => (op === 'Cumsum' ? u.uni(-9, 9) : u.uni(0.6, 1.5) * (u.int(0, 5) ? 1 : -1)));
        out.push({ name: `${op}_${k++}`, op, tol: dt === 'int32' ? 0 : 1e-5,
          attr: { T: T(dt), Tidx: T('int32'), exclusive: B(!!(flags & 1)), reverse: B(!!(flags & 2)) },
          inputs: [ph(dt, s, x, 'x'), cst('int32', [], [axis], 'axis')] });
      }
    }
    // NaN, infinities, signed zeros and overflow along the scanned axis
    for (let flags = 0; flags < 4; flags++) {
      const u = util(rngFor());
      const s = [6, 20];
      const x = u.vals(u.n(s), () => (u.int(0, 3) ? u.uni(-2, 2) : SCAN_SPECIAL[u.int(0, SCAN_SPECIAL.length - 1)]));
      out.push({ name: `${op}_special_${flags}`, op, tol: 1e-5,
        attr: { T: T('float32'), Tidx: T('int32'), exclusive: B(!!(flags & 1)), reverse: B(!!(flags & 2)) },
        inputs: [ph('float32', s, x, 'x'), cst('int32', [], [flags & 1], 'axis')] });
    }
    // empty tensors, a long axis (one line), the last axis of rank 4
    [[[0, 5], 0], [[7, 0], 1], [[3000], 0], [[3, 2, 4, 5], 3], [[1, 40, 1], 1]].forEach(([s, axis], j) => {
      const u = util(rngFor());
      const x = u.vals(u.n(s), () => (op === 'Cumsum' ? u.uni(-3, 3) : u.uni(0.9, 1.1)));
      out.push({ name: `${op}_shape_${j}`, op, tol: 1e-4,
        attr: { T: T('float32'), Tidx: T('int32'), exclusive: B(j % 2 === 1), reverse: B(j > 2) },
        inputs: [ph('float32', s, x, 'x'), cst('int32', [], [axis], 'axis')] });
    });
    // a scalar: tfjs's loop never runs, leaving 0 (Cumsum) or 1 (Cumprod)
    for (const dt of ['float32', 'int32']) {
      out.push({ name: `${op}_scalar_${dt}`, op, tol: 0, attr: { T: T(dt), Tidx: T('int32') },
        inputs: [ph(dt, [], [dt === 'int32' ? 7 : 2.5], 'x'), cst('int32', [], [0], 'axis')] });
    }
    // a negative axis: tfjs's kernel gives a malformed tensor (shape
    // [undefined, ...]); it counts from the end here, as in TF, so the
    // reference is tfjs's op on the axis counted from the front
    [[[4, 9], -1, 0], [[3, 5, 6], -2, 3], [[2, 3, 4, 5], -4, 1]].forEach(([s, axis, flags], j) => {
      const u = util(rngFor());
      const x = u.vals(u.n(s), () => (op === 'Cumsum' ? u.uni(-3, 3) : u.uni(0.8, 1.2)));
      const fn = op === 'Cumsum' ? 'cumsum' : 'cumprod';
      out.push({ name: `${op}_negaxis_${j}`, op, tol: 1e-5,
        attr: { T: T('float32'), Tidx: T('int32'), exclusive: B(!!(flags & 1)), reverse: B(!!(flags & 2)) },
        inputs: [ph('float32', s, x, 'x'), cst('int32', [], [axis], 'axis')],
        direct: (tf, f) => tf[fn](f.x, axis + s.length, !!(flags & 1), !!(flags & 2)) });
    });
  }

  // ---- BitwiseAnd: tfjs-converter's op list names the inputs x and y, its
  // executor reads a and b, so a tfjs graph fails on the node (undefined
  // passed to bitwiseAnd); the reference is tf.bitwiseAnd itself. int32 over
  // the whole range; a broadcast operand (TF broadcasts; tfjs's op wants
  // equal shapes, so its reference broadcasts first)
  for (let k = 0; k < 3; k++) {
    const u = util(rngFor());
    const s = u.shape();
    const r = () => u.int(-2147483648, 2147483647);
    out.push({ name: `BitwiseAnd_${k}`, op: 'BitwiseAnd', tol: 0, attr: { T: T('int32') },
      inputs: [ph('int32', s, u.vals(u.n(s), r), 'x'), ph('int32', s, u.vals(u.n(s), r), 'y')],
      direct: (tf, f) => tf.bitwiseAnd(f.x, f.y) });
  }
  {
    const u = util(rngFor());
    const s = [5, 8, 3];
    out.push({ name: 'BitwiseAnd_bcast', op: 'BitwiseAnd', tol: 0, attr: { T: T('int32') },
      inputs: [ph('int32', s, u.vals(u.n(s), () => u.int(-100000, 100000)), 'x'), ph('int32', [8, 1], u.vals(8, () => u.int(-300, 300)), 'y')],
      direct: (tf, f) => tf.bitwiseAnd(f.x, tf.broadcastTo(f.y, s)) });
  }

  // ---- MatrixBandPart: tfjs bands by num_lower on both sides (the
  // converter maps numLower and numUpper both to input 1); num_upper is any
  // value, tfjs never reads it. -1 keeps all, limits past the matrix clip;
  // batches, float32 (NaN outside the band becomes 0), int32, bool; a
  // num_lower fed at run time
  const bands = [
    { s: [6, 7], nl: 0, nu: -1, dt: 'float32' },
    { s: [6, 7], nl: -1, nu: 0, dt: 'float32' },
    { s: [3, 5, 4], nl: 1, nu: 2, dt: 'float32' },
    { s: [2, 3, 4, 5], nl: 2, nu: -1, dt: 'int32' },
    { s: [9, 4], nl: 30, nu: 1, dt: 'float32' },
    { s: [4, 9], nl: -1, nu: -1, dt: 'bool' },
    { s: [1, 20], nl: 3, nu: 0, dt: 'float32' },
    { s: [20, 1], nl: 3, nu: 0, dt: 'float32' },
  ];
  bands.forEach((b, k) => {
    const u = util(rngFor());
    const n = u.n(b.s);
    const x = b.dt === 'bool' ? u.vals(n, () => u.int(0, 1)) : b.dt === 'int32' ? u.vals(n, () => u.int(-99, 99))
      : u.vals(n, () => (u.int(0, 5) ? u.uni(-5, 5) : SCAN_SPECIAL[u.int(0, 2)]));
    out.push({ name: `MatrixBandPart_${k}`, op: 'MatrixBandPart', tol: 0, attr: { T: T(b.dt), Tindex: T('int32') },
      inputs: [ph(b.dt, b.s, x, 'x'), cst('int32', [], [b.nl], 'num_lower'), cst('int32', [], [b.nu], 'num_upper')] });
  });
  [-1, 1].forEach((nl, k) => {
    const u = util(rngFor());
    const s = [3, 6, 5];
    out.push({ name: `MatrixBandPart_fed_${k}`, op: 'MatrixBandPart', tol: 0, attr: { T: T('float32'), Tindex: T('int32') },
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-5, 5)), 'x'), ph('int32', [], [nl], 'num_lower'), ph('int32', [], [2], 'num_upper')] });
  });

  // ---- LRN: rank 4 and rank 3 (tfjs adds a batch of 1), radii from 0 to
  // past the channels, the attrs' defaults (5, 1, 1, 0.5) and others
  const lrns = [
    { s: [2, 3, 4, 7], attr: { depth_radius: I(2), bias: F(1), alpha: F(0.5), beta: F(0.75) } },
    { s: [1, 4, 5, 12], attr: {} },
    { s: [5, 6, 3], attr: { depth_radius: I(1), bias: F(2), alpha: F(0.0001), beta: F(0.75) } },
    { s: [3, 2, 2, 9], attr: { depth_radius: I(0), bias: F(0.5), alpha: F(2), beta: F(1.5) } },
    { s: [2, 5, 4], attr: { depth_radius: I(40), bias: F(1), alpha: F(1), beta: F(0.5) } },
    { s: [1, 1, 30, 16], attr: { depth_radius: I(3), bias: F(1e-3), alpha: F(3), beta: F(0.25) } },
  ];
  lrns.forEach((l, k) => {
    const u = util(rngFor());
    out.push({ name: `LRN_${k}`, op: 'LRN', tol: 1e-4, attr: { T: T('float32'), ...l.attr },
      inputs: [ph('float32', l.s, u.vals(u.n(l.s), () => u.uni(-3, 3)), 'x')] });
  });
  {
    const s = [2, 2, 12];
    // infinities, signed zeros, float32's extremes (their squares overflow
    // float32, not tfjs's float64) and ordinary values; NaN in its own row
    const x = Array.from({ length: 48 }, (_, i) => (i % 3 ? (i % 5) - 2.5 : SCAN_SPECIAL[1 + ((i / 3) % 9)]));
    x[40] = NaN;
    out.push({ name: 'LRN_special', op: 'LRN', tol: 1e-4, attr: { T: T('float32'), depth_radius: I(1) },
      inputs: [ph('float32', s, x, 'x')] });
  }
  // ---- EuclideanNorm: one axis (scalar or list) or two (in order, reversed,
  // negative), keep_dims both ways, NaN and infinities, a vector with no
  // axes, an empty reduced axis, scalars (abs(x), int32 too)
  const norms = [
    { s: null, ax: 'scalar', keep: false }, { s: null, ax: 'one', keep: true },
    { s: [4, 5, 6], ax: [2, 0], keep: false }, { s: [4, 5, 6], ax: [-1, -2], keep: true },
    { s: [3, 4, 2, 5], ax: [1, 2], keep: false }, { s: [40], ax: [0], keep: true },
    { s: [40], ax: [], keep: false }, { s: [6, 30], ax: [1], keep: false, special: true },
    { s: [3, 0, 5], ax: [1], keep: false }, { s: [3, 0, 5], ax: [0, 2], keep: true },
  ];
  norms.forEach((c, k) => {
    const u = util(rngFor());
    const s = c.s || u.shape();
    const axv = c.ax === 'scalar' ? [u.int(0, s.length - 1)] : c.ax === 'one' ? [u.int(-s.length, s.length - 1)] : c.ax;
    const x = u.vals(u.n(s), () => (c.special && !u.int(0, 4) ? SCAN_SPECIAL[u.int(0, 9)] : u.uni(-4, 4)));
    out.push({ name: `EuclideanNorm_${k}`, op: 'EuclideanNorm', tol: 1e-5, attr: { T: T('float32'), Tidx: T('int32'), keep_dims: B(c.keep) },
      inputs: [ph('float32', s, x, 'x'), cst('int32', c.ax === 'scalar' ? [] : [axv.length], axv, 'axis')] });
  });
  [['float32', -2.5, [0], false], ['int32', -7, [0], false], ['float32', 3, [], true]].forEach(([dt, v, ax, keep], k) => {
    out.push({ name: `EuclideanNorm_scalar_${k}`, op: 'EuclideanNorm', tol: 0, attr: { T: T(dt), Tidx: T('int32'), keep_dims: B(keep) },
      inputs: [ph(dt, [], [v], 'x'), cst('int32', [ax.length], ax, 'axis')] });
  });
  // tfjs's norm throws on no axes at rank >= 2 and on more than two: the
  // norm here is TF's, checked against tfjs's sqrt(sum(square(x)))
  [[[3, 4, 5], [0, 1, 2], false], [[2, 3, 2, 4], [3, 0, 1], true], [[5, 6], [], false]].forEach(([s, ax, keep], k) => {
    const u = util(rngFor());
    out.push({ name: `EuclideanNorm_tf_${k}`, op: 'EuclideanNorm', tol: 1e-5, attr: { T: T('float32'), Tidx: T('int32'), keep_dims: B(keep) },
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-4, 4)), 'x'), cst('int32', [ax.length], ax, 'axis')],
      direct: (tf, f) => tf.sqrt(tf.sum(tf.square(f.x), ax, keep)) });
  });
  // ---- RaggedTensorToTensor: tfjs-converter's operation_mapper imports no
  // ragged op list, so a tfjs graph fails to load; the reference is
  // tf.raggedTensorToTensor itself. ROW_SPLITS and FIRST_DIM_SIZE +
  // VALUE_ROWIDS, one and two ragged levels, shapes that cut rows and
  // columns or add rows, empty rows; tfjs's quirks: a default_value of more
  // than one element pads with zeros, an inner dim of shape used as an index
  // (values [2, 3] into [-1, -1, 1] read flat), types cut at an unknown name
  const b64 = (v) => Buffer.from(v, 'latin1').toString('base64');
  const rtt = (name, types, shape, vShape, vals, dShape, dflt, parts, dt = 'float32') => {
    const inputs = [ph('int32', [shape.length], shape, 'shape'), ph(dt, vShape, vals, 'values'), ph(dt, dShape, dflt, 'default_value')];
    parts.forEach((p, i) => inputs.push(ph('int32', p.length === 1 && types[i] === 'FIRST_DIM_SIZE' ? [] : [p.length], p, `part${i}`)));
    out.push({ name: `RaggedTensorToTensor_${name}`, op: 'RaggedTensorToTensor', tol: 0,
      attr: { T: T(dt), Tindex: T('int32'), Tshape: T('int32'), num_row_partition_tensors: I(parts.length),
        row_partition_types: { list: { s: types.map(b64) } } },
      inputs,
      direct: (tf, f) => tf.raggedTensorToTensor(f.shape, f.values, f.default_value, parts.map((_, i) => f[`part${i}`]), types) });
  };
  {
    const u = util(rngFor());
    const splits = [0];
    for (let r = 0; r < 7; r++) splits.push(splits[r] + (r === 2 ? 0 : u.int(0, 6)));
    const n = splits[7];
    rtt('splits', ['ROW_SPLITS'], [-1, -1], [n], u.vals(n, () => u.uni(-9, 9)), [], [0.5], [splits]);
    rtt('cut', ['ROW_SPLITS'], [4, 3], [n], u.vals(n, () => u.int(-99, 99)), [], [-7], [splits], 'int32');
    rtt('more_rows', ['ROW_SPLITS'], [10, -1], [n], u.vals(n, () => u.uni(-9, 9)), [], [2], [splits]);
  }
  rtt('rowids', ['FIRST_DIM_SIZE', 'VALUE_ROWIDS'], [-1, -1], [9], [1, 2, 3, 4, 5, 6, 7, 8, 9], [], [0],
    [[7], [0, 0, 1, 1, 1, 4, 4, 6, 6]]);
  rtt('rowids_cut', ['FIRST_DIM_SIZE', 'VALUE_ROWIDS'], [5, 2], [9], [1, 2, 3, 4, 5, 6, 7, 8, 9], [], [-1],
    [[7], [0, 0, 1, 1, 1, 4, 4, 6, 6]]);
  rtt('two_levels', ['ROW_SPLITS', 'ROW_SPLITS'], [-1, -1, -1], [10], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [], [0],
    [[0, 2, 2, 5], [0, 1, 4, 4, 7, 10]]);
  rtt('two_rowids', ['FIRST_DIM_SIZE', 'VALUE_ROWIDS', 'VALUE_ROWIDS'], [-1, 2, -1], [8], [8, 7, 6, 5, 4, 3, 2, 1], [], [9],
    [[3], [0, 0, 0, 2, 2], [0, 1, 1, 2, 3, 3, 3, 4]]);
  rtt('dense_rows', ['ROW_SPLITS'], [-1, -1, 2], [6, 2], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], [], [5], [[0, 1, 1, 4, 6]]);
  rtt('default_vector', ['ROW_SPLITS'], [-1, -1, 2], [3, 2], [1, 2, 3, 4, 5, 6], [2], [7, 8], [[0, 1, 3]]);
  rtt('inner_as_index', ['ROW_SPLITS'], [-1, -1, 1], [2, 3], [1, 2, 3, 4, 5, 6], [], [9], [[0, 1, 2]]);
  rtt('unknown_type', ['ROW_SPLITS', 'BOGUS', 'ROW_SPLITS'], [-1, -1], [5], [1, 2, 3, 4, 5], [], [0.5], [[0, 2, 2, 5], [0, 1]]);
  return out;
}

module.exports = { miscCases };
