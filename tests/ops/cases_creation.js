// Per-op cases of LinSpace and OneHot (tests/ops/gen.js; cases.js appends
// them), as tfjs-backend-cpu runs them, exactly (tol 0): LinSpace's float32 running sum (its
// last value need not be stop), num 1, a falling range, int32 bounds; OneHot's
// indices out of range (negative, depth and past it: all off), on/off values
// of every sign (TF always gives both), float32 and int32 outputs, indices of
// rank 0 to 3 and an empty one.
'use strict';

function creationCases(rngFor, util, { T, I }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const lin = [[0, 1, 50], [-3.7, 11.1, 33], [5, -5, 21], [2.5, 9, 1], [0.1, 0.7, 7]];
  lin.forEach(([a, b, n], k) => {
    out.push({ name: `LinSpace_${k}`, op: 'LinSpace', tol: 0, attr: { T: T('float32'), Tidx: T('int32') },
      inputs: [cst('float32', [], [a], 'start'), cst('float32', [], [b], 'stop'), cst('int32', [], [n], 'num')] });
  });
  out.push({ name: 'LinSpace_int', op: 'LinSpace', tol: 0, attr: { T: T('float32'), Tidx: T('int32') },
    inputs: [cst('int32', [], [-4], 'start'), cst('int32', [], [9], 'stop'), cst('int32', [], [40], 'num')] });
  const hot = [
    { shape: [30], depth: 5, dt: 'float32', on: 1, off: 0 },
    { shape: [4, 6], depth: 7, dt: 'float32', on: 2.5, off: -0.5 },
    { shape: [2, 3, 4], depth: 3, dt: 'int32', on: 9, off: -1 },
    { shape: [20], depth: 4, dt: 'int32', on: 1, off: 0 },
    { shape: [], depth: 20, dt: 'float32', on: 3, off: 1 },
    { shape: [0, 3], depth: 4, dt: 'float32', on: 1, off: 0 },
  ];
  hot.forEach((h, k) => {
    const u = util(rngFor());
    const n = u.n(h.shape);
    const idx = u.vals(n, () => u.int(-2, h.depth + 1)); // some out of range both ways
    const inputs = [ph('int32', h.shape, idx, 'indices'), cst('int32', [], [h.depth], 'depth')];
    inputs.push(cst(h.dt, [], [h.on], 'on'), cst(h.dt, [], [h.off], 'off'));
    out.push({ name: `OneHot_${k}`, op: 'OneHot', tol: 0, attr: { T: T(h.dt), TI: T('int32'), axis: I(-1) }, inputs });
  });
  return out;
}

module.exports = { creationCases };
