// Per-op cases of the scatter, counting, set and search ops (tests/ops/gen.js;
// cases.js appends them), as tfjs-backend-cpu runs them, exactly (tol 0).
// ScatterNd sums duplicate indices in update order, TensorScatterUpdate keeps
// the last; an index row past a dimension whose flat slice is still inside
// the output is tfjs's (it checks the flat index only); no updates.
// Unique, UniqueV2 (an axis, negative too) and ListDiff have data-dependent
// shapes and run in the host interpreter: duplicates, NaN (tfjs dedups it),
// -0 and 0 (one value), int32 and float32, an empty input.
'use strict';

function scatterCases(rngFor, util, { T }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  // values from a small pool, so that there are duplicates
  const pool = (u, dt, n, k) => u.vals(n, () => (dt === 'int32' ? u.int(-k, k) : Math.fround(u.int(-k, k) * 0.5)));

  // ---- Unique: 1-D
  ['float32', 'int32', 'float32'].forEach((dt, k) => {
    const u = util(rngFor());
    const n = u.int(17, 300);
    const v = pool(u, dt, n, k === 2 ? 40 : 6);
    if (k === 0) { v[3] = NaN; v[9] = NaN; v[5] = -0; v[11] = 0; v[12] = -0; }
    out.push({ name: `Unique_${k}`, op: 'Unique', tol: 0, outputs: 2, attr: { T: T(dt), out_idx: T('int32') },
      inputs: [ph(dt, [n], v, 'x')] });
  });
  out.push({ name: 'Unique_empty', op: 'Unique', tol: 0, outputs: 2, attr: { T: T('float32'), out_idx: T('int32') },
    inputs: [ph('float32', [0], [], 'x')] });
  // ---- UniqueV2: along an axis of a rank 1..3 tensor, rows repeated
  [[[40], 0, 'int32'], [[12, 3], 0, 'float32'], [[3, 12], 1, 'int32'], [[3, 10, 2], -2, 'float32'],
    [[4, 2, 9], 2, 'int32'], [[30, 2], -1, 'float32']].forEach(([s, axis, dt], k) => {
    const u = util(rngFor());
    const ax = axis < 0 ? axis + s.length : axis;
    const outer = s.slice(0, ax).reduce((a, b) => a * b, 1);
    const inner = s.slice(ax + 1).reduce((a, b) => a * b, 1);
    const len = s[ax];
    const distinct = Array.from({ length: 4 }, () => pool(u, dt, outer * inner, 3));
    const v = new Array(u.n(s));
    for (let i = 0; i < len; i++) {
      const d = distinct[u.int(0, 3)];
      for (let m = 0; m < outer; m++) for (let n = 0; n < inner; n++) v[(m * len + i) * inner + n] = d[m * inner + n];
    }
    out.push({ name: `UniqueV2_${k}`, op: 'UniqueV2', tol: 0, outputs: 2,
      attr: { T: T(dt), Taxis: T('int32'), out_idx: T('int32') },
      inputs: [ph(dt, s, v, 'x'), cst('int32', [1], [axis], 'axis')] });
  });
  // ---- ListDiff
  ['float32', 'int32', 'int32', 'float32'].forEach((dt, k) => {
    const u = util(rngFor());
    const nx = k === 2 ? 0 : u.int(17, 200);
    const ny = k === 3 ? 0 : u.int(1, 30);
    const x = pool(u, dt, nx, 12);
    const y = pool(u, dt, ny, 12);
    if (k === 0) { x[0] = NaN; x[4] = -0; y[0] = NaN; y[1] = 0; }
    out.push({ name: `ListDiff_${k}`, op: 'ListDiff', tol: 0, outputs: 2, attr: { T: T(dt), out_idx: T('int32') },
      inputs: [ph(dt, [nx], x, 'x'), ph(dt, [ny], y, 'y')] });
  });
  // ---- ScatterNd: [n, depth] indices into shape, duplicates
  [[[40], 1, 'float32', 0], [[9, 5], 1, 'float32', 0], [[4, 6, 3], 2, 'int32', 0], [[5, 4, 3], 3, 'float32', 0],
    [[6, 7], 2, 'int32', 1], [[30], 0, 'float32', 0], [[8, 3], 1, 'float32', 2]].forEach(([s, depth, dt, kind], k) => {
    const u = util(rngFor());
    const n = kind === 2 ? 0 : u.int(17, 60);
    const inner = s.slice(depth).reduce((a, b) => a * b, 1);
    const idx = [];
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < depth; j++) idx.push(u.int(0, Math.min(s[j] - 1, 3)));
    }
    // past a dimension, flat index inside: [1, 7] of [6, 7] is [2, 0]
    if (kind === 1) { idx[0] = 1; idx[1] = s[1]; }
    const ishape = depth === 0 ? [n] : [n, depth];
    const ivals = depth === 0 ? u.vals(n, () => u.int(0, 5)) : idx;
    const ushape = [n, ...s.slice(depth ? depth : 1)];
    const upd = dt === 'int32' ? u.vals(u.n(ushape), () => u.int(-9, 9)) : u.vals(u.n(ushape), () => u.uni(-3, 3));
    out.push({ name: `ScatterNd_${k}`, op: 'ScatterNd', tol: 0, attr: { T: T(dt), Tindices: T('int32') },
      inputs: [ph('int32', ishape, ivals, 'indices'), ph(dt, ushape, upd, 'updates'), cst('int32', [s.length], s, 'shape')] });
    void inner;
  });
  // ---- TensorScatterUpdate: the last duplicate wins
  [[[40], 1, 'float32'], [[9, 5], 1, 'int32'], [[4, 6, 3], 2, 'float32'], [[5, 4, 3], 3, 'int32']].forEach(([s, depth, dt], k) => {
    const u = util(rngFor());
    const n = u.int(17, 50);
    const idx = [];
    for (let i = 0; i < n; i++) for (let j = 0; j < depth; j++) idx.push(u.int(0, Math.min(s[j] - 1, 3)));
    const ushape = [n, ...s.slice(depth)];
    const gen = () => (dt === 'int32' ? u.int(-99, 99) : u.uni(-3, 3));
    out.push({ name: `TensorScatterUpdate_${k}`, op: 'TensorScatterUpdate', tol: 0, attr: { T: T(dt), Tindices: T('int32') },
      inputs: [ph(dt, s, u.vals(u.n(s), gen), 'tensor'), ph('int32', [n, depth], idx, 'indices'), ph(dt, ushape, u.vals(u.n(ushape), gen), 'updates')] });
  });
  // ---- LowerBound, UpperBound: sorted rows with runs of equal values, values
  // on them, between and outside, NaN; rank 1 (one row) to 3
  for (const op of ['LowerBound', 'UpperBound']) {
    [[[1], 40, 30, 'float32'], [[3], 20, 25, 'int32'], [[2, 3], 9, 6, 'float32'], [[4], 1, 20, 'int32'],
      [[2], 60, 17, 'float32']].forEach(([lead, n, nv, dt], k) => {
      const u = util(rngFor());
      const b = lead.reduce((x, y) => x * y, 1);
      const gen = () => (dt === 'int32' ? u.int(-8, 8) : Math.fround(u.int(-8, 8) * 0.75));
      const sorted = [];
      for (let r = 0; r < b; r++) sorted.push(...u.vals(n, gen).sort((x, y) => x - y));
      const vals = u.vals(b * nv, () => (u.int(0, 3) ? gen() : dt === 'int32' ? u.int(-20, 20) : u.uni(-10, 10)));
      if (dt === 'float32') { vals[0] = NaN; vals[1] = Infinity; vals[2] = -Infinity; }
      const rank1 = k === 0;
      out.push({ name: `${op}_${k}`, op, tol: 0, attr: { T: T(dt), out_type: T('int32') },
        inputs: [ph(dt, rank1 ? [n] : [...lead, n], sorted, 'sorted'), ph(dt, rank1 ? [nv] : [...lead, nv], vals, 'values')] });
    });
  }
  // ---- Bincount (rank 1), DenseBincount (rank 1: binary_output unread, rank
  // 2): values past size skipped, weights float, int or empty, size 0
  [['Bincount', [60], 10, 'float32', false], ['Bincount', [40], 7, 'int32', false], ['Bincount', [30], 5, 'empty', false],
    ['DenseBincount', [50], 8, 'float32', true], ['DenseBincount', [4, 20], 6, 'float32', false],
    ['DenseBincount', [3, 15], 5, 'int32', true], ['DenseBincount', [5, 9], 4, 'empty', false],
    ['Bincount', [20], 0, 'float32', false]].forEach(([op, s, size, wt, binary], k) => {
    const u = util(rngFor());
    const x = u.vals(u.n(s), () => u.int(0, size + 2));
    const wdt = wt === 'empty' ? 'float32' : wt;
    const w = wt === 'empty' ? [] : u.vals(u.n(s), () => (wt === 'int32' ? u.int(-5, 9) : u.uni(-2, 3)));
    const attr = { T: T(wdt), Tidx: T('int32') };
    if (op === 'DenseBincount') attr.binary_output = { b: binary };
    out.push({ name: `${op}_${k}`, op, tol: 0, attr,
      inputs: [ph('int32', s, x, 'x'), cst('int32', [], [size], 'size'), ph(wdt, wt === 'empty' ? [0] : s, w, 'weights')] });
  });
  return out;
}

module.exports = { scatterCases };
