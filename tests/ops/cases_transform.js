// Per-op cases of Reverse and ReverseV2 (tests/ops/gen.js; cases.js appends
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
  return out;
}

module.exports = { transformCases };
