// Per-op cases of the graph, shape and data-movement ops (tests/ops/gen.js;
// cases.js appends them), exactly (tol 0): PlaceholderWithDefault, Identity,
// IdentityN, Snapshot, StopGradient, Rank, Size, Shape, ShapeN, NoOp,
// Transpose, ConcatV2, Concat, GatherV2, Gather, Slice, StridedSlice, Pack,
// Unpack, Tile, Split, SplitV, GatherNd, SparseToDense, ExpandDims, MirrorPad,
// Pad, PadV2, Reshape, Squeeze, SpaceToBatchND, BatchToSpaceND, DepthToSpace,
// BroadcastTo. Data inputs are Placeholders past 16 elements (the GPU path);
// float32, int32 and bool where tfjs takes them; the edge cases tfjs's
// converter and kernels give: negative axes, empty inputs, size -1, every
// StridedSlice mask (random combinations that tfjs's sliceInfo accepts),
// Pad's constant_value attr (tfjs reads it), ShapeN's float32 outputs
// (tfjs's tensor1d without a dtype), NoOp's scalar 1.
'use strict';

const path = require('path');

function casesC(rngFor, util, { T, I, B, S, IL }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  // exact values of each dtype: float32 multiples of 1/8, int32 past 2^24, bool
  const data = (u, dt, n) => (dt === 'float32' ? u.vals(n, () => u.int(-8000, 8000) / 8)
    : dt === 'int32' ? u.vals(n, () => u.int(-50000000, 50000000)) : u.vals(n, () => u.int(0, 1)));
  const add = (c) => out.push({ tol: 0, ...c });
  const prod = (s) => s.reduce((a, b) => a * b, 1);
  // a random shape of rank r with count in [lo, hi] (dims >= minDim)
  const shapeOf = (u, r, lo = 17, hi = 900, minDim = 1, maxDim = 9) => {
    if (r === 0) return [];
    for (let t = 0; t < 10000; t++) {
      const s = Array.from({ length: r }, () => u.int(minDim, r === 1 ? 200 : maxDim));
      if (prod(s) >= lo && prod(s) <= hi) return s;
    }
    throw new Error(`no shape of rank ${r} in [${lo}, ${hi}]`);
  };
  const DTS = ['float32', 'int32', 'bool'];

  // ---- PlaceholderWithDefault, not fed: its default (a Const, or a fed
  // Placeholder's value); the harness feeds only the case's inputs
  DTS.forEach((dt, k) => {
    const u = util(rngFor());
    const s = shapeOf(u, 1 + (k % 3));
    add({ name: `PlaceholderWithDefault_const_${dt}`, op: 'PlaceholderWithDefault',
      attr: { dtype: T(dt), shape: { shape: { dim: s.map((d) => ({ size: String(d) })) } } },
      inputs: [cst(dt, s, data(u, dt, prod(s)), 'default')] });
    const s2 = shapeOf(u, 2 + k);
    add({ name: `PlaceholderWithDefault_ph_${dt}`, op: 'PlaceholderWithDefault',
      attr: { dtype: T(dt), shape: { shape: { dim: s2.map(() => ({ size: '-1' })) } } },
      inputs: [ph(dt, s2, data(u, dt, prod(s2)), 'x')] });
  });

  // ---- Identity, Snapshot, StopGradient: every dtype, a scalar, an empty tensor
  for (const op of ['Identity', 'Snapshot', 'StopGradient']) {
    DTS.forEach((dt, k) => {
      const u = util(rngFor());
      const s = shapeOf(u, 1 + k * 2);
      add({ name: `${op}_${dt}`, op, attr: { T: T(dt) }, inputs: [ph(dt, s, data(u, dt, prod(s)), 'x')] });
    });
    const u = util(rngFor());
    add({ name: `${op}_scalar`, op, attr: { T: T('float32') }, inputs: [ph('float32', [], [u.int(-99, 99) / 4], 'x')] });
    add({ name: `${op}_empty`, op, attr: { T: T('int32') }, inputs: [ph('int32', [3, 0, 2], [], 'x')] });
  }
  // ---- IdentityN: several dtypes and shapes at once
  {
    const u = util(rngFor());
    const ins = DTS.map((dt, i) => { const s = shapeOf(u, i + 1); return ph(dt, s, data(u, dt, prod(s)), `x${i}`); });
    add({ name: 'IdentityN_0', op: 'IdentityN', outputs: 3, attr: { T: { list: { type: ['DT_FLOAT', 'DT_INT32', 'DT_BOOL'] } } }, inputs: ins });
    const s = shapeOf(u, 4);
    add({ name: 'IdentityN_1', op: 'IdentityN', outputs: 1, attr: { T: { list: { type: ['DT_FLOAT'] } } },
      inputs: [ph('float32', s, data(u, 'float32', prod(s)), 'x0')] });
  }

  // ---- Rank, Size, Shape: ranks 0 to 6, empty dims, every dtype; Shape's
  // out_type int64 is int32 in tfjs
  [0, 1, 2, 3, 4, 5, 6].forEach((r) => {
    const u = util(rngFor());
    const dt = DTS[r % 3];
    const s = r === 0 ? [] : shapeOf(u, r, 17, 2000, 1, 5);
    if (r === 5) s[2] = 0;
    const x = ph(dt, s, data(u, dt, prod(s)), 'x');
    add({ name: `Rank_${r}`, op: 'Rank', attr: { T: T(dt) }, inputs: [x] });
    add({ name: `Size_${r}`, op: 'Size', attr: { T: T(dt), out_type: T('int32') }, inputs: [x] });
    add({ name: `Shape_${r}`, op: 'Shape', attr: { T: T(dt), out_type: { type: r === 3 ? 'DT_INT64' : 'DT_INT32' } }, inputs: [x] });
  });
  // ---- ShapeN: tfjs gives float32 (tensor1d without a dtype) whatever out_type
  [[1, 2, 3], [4, 0], [6]].forEach((ranks, k) => {
    const u = util(rngFor());
    const ins = ranks.map((r, i) => {
      const dt = DTS[(i + k) % 3];
      const s = r === 0 ? [] : shapeOf(u, r, 17, 900, 1, 5);
      return ph(dt, s, data(u, dt, prod(s)), `x${i}`);
    });
    add({ name: `ShapeN_${k}`, op: 'ShapeN', outputs: ranks.length,
      attr: { T: T(ins[0].dtype), N: I(ranks.length), out_type: T('int32') }, inputs: ins });
  });
  // ---- NoOp: tfjs gives a float32 scalar 1 for its output; with a control input
  add({ name: 'NoOp_0', op: 'NoOp', attr: {}, inputs: [] });
  {
    const u = util(rngFor());
    add({ name: 'NoOp_ctrl', op: 'NoOp', attr: {}, opInputs: ['^x'], inputs: [ph('float32', [30], data(u, 'float32', 30), 'x')] });
  }

  // ---- Transpose: random perms, ranks 1 to 6, every dtype, an empty input
  for (let k = 0; k < 14; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 6);
    const dt = DTS[k % 3];
    const s = shapeOf(u, r, 17, 3000, 1, r >= 5 ? 5 : 9);
    const perm = Array.from({ length: r }, (_, i) => i);
    for (let i = r - 1; i > 0; i--) { const j = u.int(0, i); [perm[i], perm[j]] = [perm[j], perm[i]]; }
    add({ name: `Transpose_${k}`, op: 'Transpose', attr: { T: T(dt), Tperm: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [r], perm, 'perm')] });
  }
  add({ name: 'Transpose_empty', op: 'Transpose', attr: { T: T('float32'), Tperm: T('int32') },
    inputs: [ph('float32', [4, 0, 3], [], 'x'), cst('int32', [3], [2, 0, 1], 'perm')] });
  {
    const u = util(rngFor());
    add({ name: 'Transpose_identity', op: 'Transpose', attr: { T: T('int32'), Tperm: T('int32') },
      inputs: [ph('int32', [5, 6, 7], data(u, 'int32', 210), 'x'), cst('int32', [3], [0, 1, 2], 'perm')] });
  }

  // ---- ConcatV2 (axis last) and Concat (axis first): 2 to 4 inputs, negative
  // axes, an input empty along the axis, every dtype
  for (let k = 0; k < 12; k++) {
    const u = util(rngFor());
    const op = k % 2 ? 'Concat' : 'ConcatV2';
    const r = 1 + (k % 4);
    const dt = DTS[k % 3];
    const n = 2 + (k % 3);
    const ax = u.int(0, r - 1);
    const base = shapeOf(u, r, 17, 600);
    const ins = [];
    for (let i = 0; i < n; i++) {
      const s = base.slice();
      s[ax] = (k === 4 || k === 9) && i === 1 ? 0 : u.int(1, r === 1 ? 60 : 7);
      ins.push(ph(dt, s, data(u, dt, prod(s)), `x${i}`));
    }
    const axis = k % 3 === 1 ? ax - r : ax;
    const a = cst('int32', [], [axis], 'axis');
    add({ name: `${op}_${k}`, op, attr: { T: T(dt), N: I(n), Tidx: T('int32') }, inputs: op === 'Concat' ? [a, ...ins] : [...ins, a] });
  }
  // one input only (N = 1)
  {
    const u = util(rngFor());
    add({ name: 'ConcatV2_one', op: 'ConcatV2', attr: { T: T('float32'), N: I(1), Tidx: T('int32') },
      inputs: [ph('float32', [6, 7], data(u, 'float32', 42), 'x0'), cst('int32', [], [1], 'axis')] });
  }

  // tfjs's executor concatenates the first N (attr, 2 when absent) tensors only
  {
    const u = util(rngFor());
    const ins = [0, 1, 2].map((i) => ph('float32', [4, 3 + i], data(u, 'float32', 4 * (3 + i)), `x${i}`));
    add({ name: 'ConcatV2_n2of3', op: 'ConcatV2', attr: { T: T('float32'), N: I(2), Tidx: T('int32') },
      inputs: [...ins, cst('int32', [], [1], 'axis')] });
    add({ name: 'ConcatV2_noN', op: 'ConcatV2', attr: { T: T('float32'), Tidx: T('int32') },
      inputs: [...ins, cst('int32', [], [-1], 'axis')] });
  }

  // ---- GatherV2: axes (negative too), batch_dims (negative too), indices at
  // both edges, scalar and rank-2 indices, every dtype; Gather: axis 0
  const gv2 = [
    { x: [40], ax: 0, bd: 0, ish: [25] },
    { x: [7, 9], ax: 1, bd: 0, ish: [30] },
    { x: [7, 9], ax: -2, bd: 0, ish: [4, 6] },
    { x: [5, 6, 7], ax: 1, bd: 0, ish: [] },
    { x: [4, 6, 5], ax: 2, bd: 1, ish: [4, 7] },
    { x: [3, 4, 5, 6], ax: 2, bd: 2, ish: [3, 4, 3] },
    { x: [3, 4, 5, 6], ax: -1, bd: -1, ish: [3, 4, 2] },
    { x: [6, 8, 3], ax: 1, bd: 1, ish: [6] },
    { x: [2, 3, 4, 5, 3], ax: 3, bd: 0, ish: [2, 9] },
    { x: [50, 3], ax: 0, bd: 0, ish: [60] },
  ];
  gv2.forEach((g, k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    const r = g.x.length;
    const ax = g.ax < 0 ? g.ax + r : g.ax;
    const dim = g.x[ax];
    const ni = prod(g.ish);
    const idx = u.vals(ni, () => u.int(0, dim - 1));
    if (ni > 2) { idx[0] = 0; idx[1] = dim - 1; idx[ni - 1] = dim - 1; }
    add({ name: `GatherV2_${k}`, op: 'GatherV2', attr: { Tparams: T(dt), Tindices: T('int32'), Taxis: T('int32'), batch_dims: I(g.bd) },
      inputs: [ph(dt, g.x, data(u, dt, prod(g.x)), 'x'), ph('int32', g.ish, idx, 'indices'), cst('int32', [], [g.ax], 'axis')] });
  });
  [[[40], [30]], [[9, 6], [5, 4]], [[5, 3, 4], []], [[30, 2, 2], [20]]].forEach(([xs, ish], k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    const ni = prod(ish);
    const idx = u.vals(ni, () => u.int(0, xs[0] - 1));
    if (ni > 2) { idx[0] = 0; idx[ni - 1] = xs[0] - 1; }
    add({ name: `Gather_${k}`, op: 'Gather', attr: { Tparams: T(dt), Tindices: T('int32'), validate_indices: B(true) },
      inputs: [ph(dt, xs, data(u, dt, prod(xs)), 'x'), ph('int32', ish, idx, 'indices')] });
  });

  // ---- Slice: random begin and size, -1 sizes, empty sizes, every dtype
  for (let k = 0; k < 10; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 5);
    const dt = DTS[k % 3];
    const s = shapeOf(u, r, 17, 2000, 1, 8);
    const begin = s.map((d) => u.int(0, d - 1));
    const size = s.map((d, i) => (u.int(0, 3) === 0 ? -1 : u.int(k === 7 && i === 0 ? 0 : 1, d - begin[i])));
    if (k === 7) size[0] = 0;
    add({ name: `Slice_${k}`, op: 'Slice', attr: { T: T(dt), Index: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [r], begin, 'begin'), cst('int32', [r], size, 'size')] });
  }

  // ---- StridedSlice: random begin/end/strides (negative strides, indices past
  // the ends) and every mask, kept where tfjs's sliceInfo accepts them
  {
    const oracle = path.join(__dirname, '..', 'oracle');
    const tf = require(require.resolve('@tensorflow/tfjs-core', { paths: [oracle] }));
    require(require.resolve('@tensorflow/tfjs-backend-cpu', { paths: [oracle] }));
    const sliceInfo = tf.slice_util.sliceInfo;
    const warn = console.warn;
    console.warn = () => {}; // tfjs's tfjs-node advert
    let made = 0;
    const seen = new Set();
    for (let tries = 0; made < 120 && tries < 10000; tries++) {
      const u = util(rngFor());
      const r = u.int(1, 5);
      const s = shapeOf(u, r, 17, 1500, 1, r === 1 ? 200 : 8);
      const ell = u.int(0, 2) === 0;
      const m = u.int(1, r + 2);
      const begin = []; const end = []; const strides = [];
      let bm = 0; let em = 0; let nm = 0; let sm = 0; let elm = 0;
      let ellAt = ell ? u.int(0, m - 1) : -1;
      for (let i = 0; i < m; i++) {
        const d = s[Math.min(i, r - 1)];
        let st = [1, 1, 2, 3, -1, -1, -2, -3][u.int(0, 7)];
        let b = u.int(-d - 2, d + 2); let e = u.int(-d - 2, d + 2);
        if (i === ellAt) elm |= 1 << i;
        if (u.int(0, 3) === 0) bm |= 1 << i;
        if (u.int(0, 3) === 0) em |= 1 << i;
        if (u.int(0, 6) === 0) nm |= 1 << i;
        if (u.int(0, 5) === 0) { sm |= 1 << i; b = u.int(-d, d - 1); e = b + 1; st = 1; }
        begin.push(b); end.push(e); strides.push(st);
      }
      let info;
      try {
        info = sliceInfo(s, begin, end, strides, bm, em, elm, nm, sm);
      } catch (e) {
        continue;
      }
      const n = prod(info.finalShape);
      if (info.finalShape.some((d) => !(d >= 0)) || (n === 0 && made % 10)) continue;
      const key = JSON.stringify([s, begin, end, strides, bm, em, elm, nm, sm]);
      if (seen.has(key)) continue;
      seen.add(key);
      // the kernel itself must take it too (it runs on a zero tensor here)
      try {
        const z = tf.zeros(s, 'int32');
        tf.dispose([tf.stridedSlice(z, begin, end, strides, bm, em, elm, nm, sm), z]);
      } catch (e) {
        continue;
      }
      const dt = DTS[made % 3];
      add({ name: `StridedSlice_${made}`, op: 'StridedSlice',
        attr: { T: T(dt), Index: T('int32'), begin_mask: I(bm), end_mask: I(em), ellipsis_mask: I(elm), new_axis_mask: I(nm), shrink_axis_mask: I(sm) },
        inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [m], begin, 'begin'), cst('int32', [m], end, 'end'), cst('int32', [m], strides, 'strides')] });
      made++;
    }
    console.warn = warn;
  }
  // hand-picked: reverse a whole axis, shrink to a scalar, ellipsis alone,
  // new axes around an ellipsis
  [
    { s: [6, 7], b: [0, 0], e: [0, 0], st: [-1, -1], bm: 3, em: 3, elm: 0, nm: 0, sm: 0 },
    { s: [4, 5, 6], b: [1, -1, 2], e: [2, 0, 3], st: [1, 1, 1], bm: 0, em: 0, elm: 0, nm: 0, sm: 7 },
    { s: [3, 4, 5], b: [0], e: [0], st: [1], bm: 0, em: 0, elm: 1, nm: 0, sm: 0 },
    { s: [3, 4, 5], b: [0, 0, 0, 1], e: [0, 0, 0, 4], st: [1, 1, 1, 2], bm: 0, em: 0, elm: 2, nm: 5, sm: 0 },
    { s: [8, 9], b: [-1, 7], e: [-9, -10], st: [-2, -3], bm: 0, em: 0, elm: 0, nm: 0, sm: 0 },
    { s: [2, 3, 4, 5], b: [0, 1], e: [0, 3], st: [1, 1], bm: 0, em: 0, elm: 1, nm: 0, sm: 0 },
    // a shrunk dim with strides != 1 elsewhere: tfjs's stridedSliceImpl reads
    // x at the sparse (non-shrunk) coordinates, dims shifted
    { s: [4, 5, 6], b: [0, 1, 1], e: [0, 2, 5], st: [2, 1, 2], bm: 1, em: 1, elm: 0, nm: 0, sm: 2 },
    { s: [6, 4, 5, 2], b: [1, 0, 2], e: [2, 0, 0], st: [1, 1, -1], bm: 0, em: 6, elm: 0, nm: 0, sm: 1 },
    { s: [6, 12, 5], b: [5, 0, 3], e: [0, 0, 4], st: [-2, 1, 1], bm: 0, em: 2, elm: 0, nm: 2, sm: 4 },
  ].forEach((c, k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    add({ name: `StridedSlice_h${k}`, op: 'StridedSlice',
      attr: { T: T(dt), Index: T('int32'), begin_mask: I(c.bm), end_mask: I(c.em), ellipsis_mask: I(c.elm), new_axis_mask: I(c.nm), shrink_axis_mask: I(c.sm) },
      inputs: [ph(dt, c.s, data(u, dt, prod(c.s)), 'x'), cst('int32', [c.b.length], c.b, 'begin'), cst('int32', [c.e.length], c.e, 'end'), cst('int32', [c.st.length], c.st, 'strides')] });
  });

  // ---- Pack: 1 to 4 inputs, axes (negative too), every dtype
  for (let k = 0; k < 8; k++) {
    const u = util(rngFor());
    const r = k % 4;
    const dt = DTS[k % 3];
    const n = 1 + (k % 4);
    const s = r === 0 ? [] : shapeOf(u, r, 17, 400);
    const ax = u.int(0, r);
    const axis = k % 2 ? ax - r - 1 : ax;
    const ins = Array.from({ length: n }, (_, i) => ph(dt, s, data(u, dt, prod(s)), `x${i}`));
    add({ name: `Pack_${k}`, op: 'Pack', attr: { T: T(dt), N: I(n), axis: I(axis) }, inputs: ins });
  }
  // tfjs's executor reshapes a tensor whose shape squeezes to the first's
  {
    const u = util(rngFor());
    add({ name: 'Pack_squeezed', op: 'Pack', attr: { T: T('float32'), N: I(3), axis: I(1) },
      inputs: [ph('float32', [4, 1, 6], data(u, 'float32', 24), 'x0'), ph('float32', [4, 6], data(u, 'float32', 24), 'x1'),
        ph('float32', [1, 4, 6, 1], data(u, 'float32', 24), 'x2')] });
  }
  // ---- Unpack: axes (negative too), every dtype
  for (let k = 0; k < 7; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 4);
    const dt = DTS[k % 3];
    const s = shapeOf(u, r, 17, 600, 1, r === 1 ? 6 : 7);
    const ax = u.int(0, r - 1);
    const axis = k % 2 ? ax - r : ax;
    add({ name: `Unpack_${k}`, op: 'Unpack', outputs: s[ax], attr: { T: T(dt), num: I(s[ax]), axis: I(axis) },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x')] });
  }

  // ---- Tile: reps of 1, several, 0, every dtype
  for (let k = 0; k < 8; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 4);
    const dt = DTS[k % 3];
    const s = shapeOf(u, r, 17, 200, 1, 6);
    const reps = s.map(() => u.int(1, 3));
    if (k === 6) reps[0] = 0;
    add({ name: `Tile_${k}`, op: 'Tile', attr: { T: T(dt), Tmultiples: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [r], reps, 'multiples')] });
  }

  // ---- Split (axis first, num_split) and SplitV (sizes with a -1, a 0)
  for (let k = 0; k < 7; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 4);
    const dt = DTS[k % 3];
    const ns = 1 + (k % 4);
    const s = shapeOf(u, r, 17, 300, 1, 6);
    const ax = u.int(0, r - 1);
    s[ax] = ns * u.int(1, 4);
    const axis = k % 2 ? ax - r : ax;
    add({ name: `Split_${k}`, op: 'Split', outputs: ns, attr: { T: T(dt), num_split: I(ns) },
      inputs: [cst('int32', [], [axis], 'axis'), ph(dt, s, data(u, dt, prod(s)), 'x')] });
  }
  for (let k = 0; k < 7; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 4);
    const dt = DTS[k % 3];
    const s = shapeOf(u, r, 17, 300, 1, 6);
    const ax = u.int(0, r - 1);
    s[ax] = u.int(3, 9);
    const sizes = [];
    let left = s[ax];
    while (left > 0 && sizes.length < 4) { const t = u.int(k === 3 ? 0 : 1, left); sizes.push(t); left -= t; }
    if (left > 0) sizes.push(left);
    if (k % 3 === 0) { sizes.push(0); }
    // tfjs's prepareSplitSize sums the others with a reduce seeded by
    // sizes[0], so a -1 first throws there: -1 elsewhere
    if (k % 2 === 0 && sizes.length > 1) sizes[u.int(1, sizes.length - 1)] = -1;
    const axis = k % 2 ? ax - r : ax;
    add({ name: `SplitV_${k}`, op: 'SplitV', outputs: sizes.length, attr: { T: T(dt), num_split: I(sizes.length), Tlen: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [sizes.length], sizes, 'size_splits'), cst('int32', [], [axis], 'axis')] });
  }

  // ---- GatherNd: index depths 1 to rank, batch shapes of rank 1 to 3, edges
  [[[40], [25, 1]], [[7, 9], [30, 2]], [[7, 9], [5, 3, 1]], [[4, 5, 6], [2, 3, 2]], [[4, 5, 6], [20, 3]],
    [[3, 4, 5, 2], [6, 1]], [[3, 4, 5, 2], [2, 2, 2, 4]]].forEach(([xs, ish], k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    const depth = ish[ish.length - 1];
    const nrow = prod(ish) / depth;
    const idx = [];
    for (let i = 0; i < nrow; i++) {
      for (let j = 0; j < depth; j++) idx.push(i === 0 ? 0 : i === 1 ? xs[j] - 1 : u.int(0, xs[j] - 1));
    }
    add({ name: `GatherNd_${k}`, op: 'GatherNd', attr: { Tparams: T(dt), Tindices: T('int32') },
      inputs: [ph(dt, xs, data(u, dt, prod(xs)), 'x'), ph('int32', ish, idx, 'indices')] });
  });

  // ---- SparseToDense: 0-D/1-D/2-D indices, scalar or vector values, a
  // default value, validate_indices true/false, every dtype; a repeated index
  // keeps its last value (tfjs's scatter without summing)
  [[[40], 0, 'float32', 1], [[40], 1, 'int32', 0], [[7, 9], 1, 'float32', 1], [[4, 5, 6], 1, 'bool', 0],
    [[30], 2, 'float32', 0], [[6, 7], 0, 'int32', 1], [[6, 7], 3, 'float32', 0], [[9, 8, 7], 3, 'int32', 1]].forEach(([os, kind, dt, vi], k) => {
    const u = util(rngFor());
    const r = os.length;
    const nnz = kind === 2 ? 1 : kind === 3 ? u.int(30, 40) : u.int(5, 20);
    const rows = new Set();
    const idx = [];
    while (idx.length < nnz * r) {
      const row = os.map((d) => u.int(0, kind === 3 ? Math.min(d - 1, 2) : d - 1));
      // kind 3: repeated rows (the last one's value stays)
      if (rows.has(row.join()) && kind !== 3) continue;
      rows.add(row.join());
      idx.push(...row);
    }
    // kind 3: a row past dim 1 whose flat offset is inside (tfjs checks that only)
    if (kind === 3) { idx[0] = 1; idx[1] = os[1]; }
    const ishape = kind === 2 ? [] : r === 1 ? [nnz] : [nnz, r];
    const vals = kind === 0 ? data(u, dt, 1) : data(u, dt, nnz);
    const vshape = kind === 0 ? [] : [nnz];
    const dflt = dt === 'bool' ? [1] : data(u, dt, 1);
    add({ name: `SparseToDense_${k}`, op: 'SparseToDense', attr: { T: T(dt), Tindices: T('int32'), validate_indices: B(!!vi) },
      inputs: [ph('int32', ishape, idx, 'indices'), cst('int32', [r], os, 'shape'), ph(dt, vshape, vals, 'values'), ph(dt, [], dflt, 'default')] });
  });

  // ---- ExpandDims: every axis, negative too, every dtype, a scalar
  for (let k = 0; k < 8; k++) {
    const u = util(rngFor());
    const r = k % 5;
    const dt = DTS[k % 3];
    const s = r === 0 ? [] : shapeOf(u, r, 17, 600);
    const ax = u.int(0, r);
    const axis = k % 2 ? ax - r - 1 : ax;
    add({ name: `ExpandDims_${k}`, op: 'ExpandDims', attr: { T: T(dt), Tdim: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [], [axis], 'dim')] });
  }

  // ---- MirrorPad REFLECT (pads < dim) and SYMMETRIC (pads <= dim), Pad (and
  // its constant_value attr), PadV2 with a constant value
  for (let k = 0; k < 10; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 4);
    const dt = k % 3 === 2 ? 'int32' : 'float32';
    const s = shapeOf(u, r, 17, 600, 2, 8);
    const mode = k % 2 ? 'SYMMETRIC' : 'REFLECT';
    const pads = [];
    for (const d of s) {
      const lim = mode === 'REFLECT' ? d - 1 : d;
      pads.push(u.int(0, lim), u.int(0, lim));
    }
    add({ name: `MirrorPad_${k}`, op: 'MirrorPad', attr: { T: T(dt), Tpaddings: T('int32'), mode: S(mode) },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [r, 2], pads, 'paddings')] });
  }
  for (let k = 0; k < 7; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 5);
    const dt = DTS[k % 3];
    const s = shapeOf(u, r, 17, 600, 1, 8);
    const pads = s.flatMap(() => [u.int(0, 3), u.int(0, 3)]);
    const attr = { T: T(dt), Tpaddings: T('int32') };
    if (k === 4) attr.constant_value = F32(2.5);
    add({ name: `Pad_${k}`, op: 'Pad', attr, inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [r, 2], pads, 'paddings')] });
  }
  {
    const u = util(rngFor());
    add({ name: 'Pad_empty', op: 'Pad', attr: { T: T('float32'), Tpaddings: T('int32') },
      inputs: [ph('float32', [0, 3], [], 'x'), cst('int32', [2, 2], [1, 2, 0, 1], 'paddings')] });
    void u;
  }
  for (let k = 0; k < 6; k++) {
    const u = util(rngFor());
    const r = 1 + (k % 4);
    const dt = k % 2 ? 'int32' : 'float32';
    const s = shapeOf(u, r, 17, 600, 1, 8);
    const pads = s.flatMap(() => [u.int(0, 3), u.int(0, 3)]);
    const cv = dt === 'int32' ? u.int(-100, 100) : u.int(-100, 100) / 4;
    add({ name: `PadV2_${k}`, op: 'PadV2', attr: { T: T(dt), Tpaddings: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [r, 2], pads, 'paddings'), cst(dt, [], [cv], 'constant_values')] });
  }

  // ---- Reshape: -1 anywhere, to a scalar, an empty tensor, every dtype
  for (let k = 0; k < 8; k++) {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    const s = shapeOf(u, 1 + (k % 4), 17, 720, 1, 8);
    const n = prod(s);
    // a random factorization of n
    const t = [];
    let left = n;
    const rr = u.int(1, 5);
    for (let i = 0; i < rr - 1; i++) {
      const divs = []; for (let d = 1; d <= left; d++) if (left % d === 0) divs.push(d);
      const d = divs[u.int(0, divs.length - 1)];
      t.push(d); left /= d;
    }
    t.push(left);
    if (k % 2 === 0) t[u.int(0, t.length - 1)] = -1;
    add({ name: `Reshape_${k}`, op: 'Reshape', attr: { T: T(dt), Tshape: T('int32') },
      inputs: [ph(dt, s, data(u, dt, n), 'x'), cst('int32', [t.length], t, 'shape')] });
  }
  {
    const u = util(rngFor());
    add({ name: 'Reshape_scalar', op: 'Reshape', attr: { T: T('float32'), Tshape: T('int32') },
      inputs: [ph('float32', [1, 1, 1], data(u, 'float32', 1), 'x'), cst('int32', [0], [], 'shape')] });
    add({ name: 'Reshape_empty', op: 'Reshape', attr: { T: T('int32'), Tshape: T('int32') },
      inputs: [ph('int32', [4, 0, 3], [], 'x'), cst('int32', [3], [0, 5, 6], 'shape')] });
  }

  // ---- Squeeze: squeeze_dims (negative too), none (every 1 goes), the attr
  // under its current name 'axis', every dtype
  [[[1, 20, 1, 3], null], [[1, 20, 1, 3], [0]], [[5, 1, 7, 1], [-1, 1]], [[1, 1, 30], []],
    [[4, 1, 1, 6, 1], [2]], [[1, 40], [-2]], [[3, 1, 8], 'axis']].forEach(([s, dims], k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    const attr = { T: T(dt) };
    if (dims === 'axis') attr.axis = IL([1]);
    else if (dims) attr.squeeze_dims = IL(dims);
    add({ name: `Squeeze_${k}`, op: 'Squeeze', attr, inputs: [ph(dt, s, data(u, dt, prod(s)), 'x')] });
  });

  // ---- SpaceToBatchND (paddings) and BatchToSpaceND (crops): 1 and 2
  // spatial dims, trailing dims, every dtype
  [[[2, 6, 6, 3], [2, 2], [0, 0, 0, 0]], [[1, 5, 7, 2], [2, 3], [1, 0, 0, 2]], [[3, 10, 4], [5], [0, 0]],
    [[2, 4, 3, 2, 2], [2, 3], [1, 1, 0, 3]], [[1, 9, 9, 1], [3, 3], [0, 0, 0, 0]], [[2, 7, 5], [3], [1, 1]]].forEach(([s, bs, pads], k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    add({ name: `SpaceToBatchND_${k}`, op: 'SpaceToBatchND', attr: { T: T(dt), Tblock_shape: T('int32'), Tpaddings: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [bs.length], bs, 'block_shape'), cst('int32', [bs.length, 2], pads, 'paddings')] });
  });
  [[[8, 3, 3, 2], [2, 2], [0, 0, 0, 0]], [[12, 2, 3, 2], [2, 3], [1, 0, 0, 2]], [[10, 4, 3], [5], [2, 3]],
    [[24, 2, 2, 2, 1], [2, 3], [1, 1, 0, 3]], [[9, 3, 3, 1], [3, 3], [1, 2, 0, 1]], [[6, 7, 5], [3], [0, 0]]].forEach(([s, bs, crops], k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    add({ name: `BatchToSpaceND_${k}`, op: 'BatchToSpaceND', attr: { T: T(dt), Tblock_shape: T('int32'), Tcrops: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [bs.length], bs, 'block_shape'), cst('int32', [bs.length, 2], crops, 'crops')] });
  });

  // ---- DepthToSpace NHWC: block 2 and 3; tfjs upper-cases data_format and
  // takes float32 only
  [[[1, 3, 4, 8], 2, 'NHWC'], [[2, 2, 3, 18], 3, 'NHWC'], [[1, 5, 5, 4], 2, 'nhwc'], [[3, 4, 2, 12], 2, 'NHWC']].forEach(([s, bsz, fmt], k) => {
    const u = util(rngFor());
    const dt = 'float32';
    add({ name: `DepthToSpace_${k}`, op: 'DepthToSpace', attr: { T: T(dt), block_size: I(bsz), data_format: S(fmt) },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x')] });
  });

  // ---- BroadcastTo: new leading dims, 1s stretched, the same shape, every dtype
  [[[20], [3, 20]], [[4, 1, 5], [2, 4, 6, 5]], [[1, 1, 30], [3, 2, 30]], [[6, 5], [6, 5]], [[1], [40]],
    [[3, 1, 1, 7], [3, 2, 4, 7]]].forEach(([s, t], k) => {
    const u = util(rngFor());
    const dt = DTS[k % 3];
    add({ name: `BroadcastTo_${k}`, op: 'BroadcastTo', attr: { T: T(dt), Tidx: T('int32') },
      inputs: [ph(dt, s, data(u, dt, prod(s)), 'x'), cst('int32', [t.length], t, 'shape')] });
  });
  return out;
}

const F32 = (v) => ({ f: v });

module.exports = { casesC };
