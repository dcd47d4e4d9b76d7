// Per-op cases of EnsureShape, BroadcastArgs, Reverse and ReverseV2 (tests/ops/gen.js; cases.js appends
// them), exactly (tol 0): every rank 0 to 4, single and several axes, negative
// axes, no axis, float32 and int32, inputs past 16 elements (the GPU path).
'use strict';

function transformCases(rngFor, util, { T }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const rev = [
    { shape: [40], axis: [0], dt: 'float32' },
    { shape: [5, 7], axis: [1], dt: 'float32' },
    { shape: [5, 7], axis: [-2], dt: 'int32' },
    { shape: [3, 4, 5], axis: [0, 2], dt: 'float32' },
    { shape: [2, 3, 4, 5], axis: [-1, 1, -4], dt: 'float32' },
    { shape: [2, 3, 4, 5], axis: [], dt: 'int32' },
    { shape: [6, 1, 9], axis: [1, 2], dt: 'int32' },
    { shape: [0, 3], axis: [1], dt: 'float32' },
  ];
  rev.forEach((r, k) => {
    const u = util(rngFor());
    const n = u.n(r.shape);
    const x = r.dt === 'int32' ? u.vals(n, () => u.int(-100, 100)) : u.vals(n, () => u.int(-1000, 1000) / 7);
    out.push({ name: `ReverseV2_${k}`, op: 'ReverseV2', tol: 0, attr: { T: T(r.dt), Tidx: T('int32') },
      inputs: [ph(r.dt, r.shape, x, 'x'), cst('int32', [r.axis.length], r.axis, 'axis')] });
    if (r.axis.every((a) => a >= 0)) {
      const dims = r.shape.map((_, i) => r.axis.includes(i));
      out.push({ name: `Reverse_${k}`, op: 'Reverse', tol: 0, attr: { T: T(r.dt) },
        inputs: [ph(r.dt, r.shape, x, 'x'), cst('bool', [dims.length], dims, 'dims')] });
    }
  });
  [[40], [2, 3, 5], [4, 1, 6]].forEach((shape, k) => {
    const u = util(rngFor());
    out.push({ name: `EnsureShape_${k}`, op: 'EnsureShape', tol: 0, attr: { T: T('float32') },
      inputs: [ph('float32', shape, u.vals(u.n(shape), () => u.int(-99, 99) / 4), 'x'), cst('int32', [shape.length], shape, 'shape')] });
  });
  [[[2, 1, 5], [3, 1]], [[1], [4, 7]], [[], [3]], [[6, 1, 1], [1, 4, 2]], [[0, 1], [1, 5]]].forEach(([a, b], k) => {
    out.push({ name: `BroadcastArgs_${k}`, op: 'BroadcastArgs', tol: 0, attr: { T: T('int32') },
      inputs: [cst('int32', [a.length], a, 's0'), cst('int32', [b.length], b, 's1')] });
  });
  return out;
}

module.exports = { transformCases };
