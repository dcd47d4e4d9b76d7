// Per-op cases of the sparse ops (tests/ops/gen.js; cases.js appends them), as
// tfjs-backend-cpu's sparse*_impl.js computes them, exactly (tol 0 for ints,
// float32 sums one add at a time): SparseFillEmptyRows with empty rows,
// unordered rows, rows all full and ordered (the output is the input), and no
// indices; SparseReshape with and without a -1; SparseSegmentSum/Mean with
// gaps between segment ids, repeated indices, int32 data and no indices;
// RaggedRange against tf.raggedRange itself (tfjs's converter cannot load it).
'use strict';

function sparseCases(rngFor, util, { T }) {
  const out = [];
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  // SparseFillEmptyRows
  const fills = [
    { rows: [0, 0, 2, 5, 5, 7], dense: [9, 4], dt: 'float32' },
    { rows: [3, 1, 1, 0, 4], dense: [6, 3], dt: 'int32' },
    { rows: [0, 1, 2, 3], dense: [4, 5], dt: 'float32' },
    { rows: [2, 0, 1], dense: [3, 2, 2], dt: 'float32' },
    { rows: [], dense: [5, 3], dt: 'float32' },
  ];
  fills.forEach((f, k) => {
    const u = util(rngFor());
    const rank = f.dense.length;
    const idx = [];
    for (const r of f.rows) {
      idx.push(r);
      for (let d = 1; d < rank; d++) idx.push(u.int(0, f.dense[d] - 1));
    }
    const vals = f.rows.map(() => (f.dt === 'int32' ? u.int(-50, 50) : u.uni(-5, 5)));
    out.push({ name: `SparseFillEmptyRows_${k}`, op: 'SparseFillEmptyRows', tol: 0, outputs: 4,
      attr: { T: T(f.dt) },
      inputs: [ph('int32', [f.rows.length, rank], idx, 'indices'), ph(f.dt, [f.rows.length], vals, 'values'),
        ph('int32', [rank], f.dense, 'dense_shape'), cst(f.dt, [], [f.dt === 'int32' ? -7 : 2.5], 'default_value')] });
  });
  // SparseReshape
  const reshapes = [
    { shape: [4, 6], to: [3, 8] }, { shape: [2, 3, 4], to: [-1, 6] }, { shape: [12, 5], to: [5, -1, 2] },
    { shape: [7], to: [7, 1] },
  ];
  reshapes.forEach((r, k) => {
    const u = util(rngFor());
    const nnz = u.int(3, 12);
    const idx = [];
    for (let i = 0; i < nnz; i++) for (const d of r.shape) idx.push(u.int(0, d - 1));
    out.push({ name: `SparseReshape_${k}`, op: 'SparseReshape', tol: 0, outputs: 2, attr: {},
      inputs: [ph('int32', [nnz, r.shape.length], idx, 'input_indices'), ph('int32', [r.shape.length], r.shape, 'input_shape'),
        ph('int32', [r.to.length], r.to, 'new_shape')] });
  });
  // SparseSegmentSum / SparseSegmentMean
  const segs = [
    { rows: 6, cols: [4], ids: [0, 2, 2, 5, 1, 3], seg: [0, 0, 1, 3, 3, 3], dt: 'float32' },
    { rows: 5, cols: [2, 3], ids: [4, 4, 0, 1], seg: [1, 1, 2, 6], dt: 'float32' },
    { rows: 8, cols: [3], ids: [7, 6, 5, 0, 0, 1, 2], seg: [0, 1, 1, 1, 2, 2, 4], dt: 'int32' },
    { rows: 3, cols: [2], ids: [], seg: [], dt: 'float32' },
  ];
  for (const op of ['SparseSegmentSum', 'SparseSegmentMean']) {
    segs.forEach((s, k) => {
      if (op === 'SparseSegmentMean' && s.dt === 'int32') return;
      const u = util(rngFor());
      const shape = [s.rows, ...s.cols];
      const data = u.vals(u.n(shape), () => (s.dt === 'int32' ? u.int(-100, 100) : u.uni(-3, 3)));
      out.push({ name: `${op}_${k}`, op, tol: s.dt === 'int32' ? 0 : 1e-6, attr: { T: T(s.dt), Tidx: T('int32'), Tsegmentids: T('int32') },
        inputs: [ph(s.dt, shape, data, 'data'), ph('int32', [s.ids.length], s.ids, 'indices'), ph('int32', [s.seg.length], s.seg, 'segment_ids')] });
    });
  }
  // RaggedRange: vectors and broadcast scalars, negative deltas, empty rows
  // (limit behind start), float32 values from a float64 running sum
  const ranges = [
    { dt: 'int32', s: [[4], [0, 5, -3, 10]], l: [[4], [7, 5, 4, -2]], d: [[4], [2, 1, 3, -4]] },
    { dt: 'float32', s: [[3], [0.1, -2.5, 7]], l: [[], [6.3]], d: [[3], [0.7, 1.3, -0.45]] },
    { dt: 'float32', s: [[], [1.5]], l: [[5], [9, 2, 1.5, 30, -4]], d: [[], [0.3]] },
    { dt: 'int32', s: [[], [3]], l: [[], [40]], d: [[], [7]] },
  ];
  ranges.forEach((r, k) => {
    out.push({ name: `RaggedRange_${k}`, op: 'RaggedRange', tol: 1e-7, outputs: 2, attr: { T: T(r.dt), Tsplits: T('int32') },
      direct: (tf, f) => { const o = tf.raggedRange(f.starts, f.limits, f.deltas); return [o.rtNestedSplits, o.rtDenseValues]; },
      inputs: [ph(r.dt, r.s[0], r.s[1], 'starts'), ph(r.dt, r.l[0], r.l[1], 'limits'), ph(r.dt, r.d[0], r.d[1], 'deltas')] });
  });
  // RaggedGather: one and two ragged dimensions, 1-D and 2-D indices (outer
  // uniform splits), repeated indices, empty rows, dense values of rank 2
  const gathers = [
    { splits: [[0, 3, 3, 7, 9]], dense: [9], idx: [[5], [3, 0, 0, 2, 1]] },
    { splits: [[0, 2, 3, 6], [0, 1, 4, 4, 6, 8, 10]], dense: [10, 3], idx: [[4], [2, 0, 1, 2]] },
    { splits: [[0, 1, 3, 6, 10]], dense: [10, 2], idx: [[2, 3], [3, 1, 0, 2, 2, 1]] },
  ];
  gathers.forEach((g, k) => {
    const u = util(rngFor());
    const data = u.vals(u.n(g.dense), () => u.uni(-9, 9));
    const inputs = g.splits.map((sp, d) => ph('int32', [sp.length], sp, `splits${d}`));
    inputs.push(ph('float32', g.dense, data, 'dense'), ph('int32', g.idx[0], g.idx[1], 'indices'));
    const nOut = g.idx[0].length - 1 + g.splits.length;
    out.push({ name: `RaggedGather_${k}`, op: 'RaggedGather', tol: 0, outputs: nOut + 1,
      attr: { Tvalues: T('float32'), Tindices: T('int32'), Tsplits: T('int32'), PARAMS_RAGGED_RANK: { i: String(g.splits.length) }, OUTPUT_RAGGED_RANK: { i: String(nOut) } },
      inputs,
      direct: (tf, f) => {
        const o = tf.raggedGather(g.splits.map((_, d) => f[`splits${d}`]), f.dense, f.indices, nOut);
        return [...o.outputNestedSplits, o.outputDenseValues];
      } });
  });
  return out;
}

module.exports = { sparseCases };
