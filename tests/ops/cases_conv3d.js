// Per-op cases of Conv1D, Conv3D, MaxPool3D, AvgPool3D, MaxPoolWithArgmax,
// Dilation2D, Print and FakeQuantWithMinMaxVars (tests/ops/gen.js; cases.js
// appends them): random shapes, strides or dilations past 1 (tfjs wants one of
// the two to be 1), SAME and VALID. Print and FakeQuantWithMinMaxVars pass
// their input through in tfjs's converter (FakeQuant's min/max/num_bits/
// narrow_range are ignored there), exactly (tol 0); so are the max pools,
// MaxPoolWithArgmax's indices (ties included) and Dilation2D.
'use strict';

function conv3dCases(rngFor, util, { T, I, B, S, IL }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const conv1d = [
    { n: 2, w: 17, c: 3, fw: 3, oc: 4, stride: 1, dil: 1, pad: 'SAME' },
    { n: 1, w: 29, c: 2, fw: 5, oc: 3, stride: 2, dil: 1, pad: 'VALID' },
    { n: 3, w: 20, c: 4, fw: 3, oc: 2, stride: 1, dil: 2, pad: 'SAME' },
    { n: 2, w: 23, c: 1, fw: 4, oc: 5, stride: 3, dil: 1, pad: 'SAME' },
    { n: 1, w: 31, c: 3, fw: 2, oc: 3, stride: 1, dil: 3, pad: 'VALID' },
    { n: 0, w: 40, c: 2, fw: 3, oc: 2, stride: 2, dil: 1, pad: 'VALID' }, // rank-2 input
  ];
  conv1d.forEach((k, i) => {
    const u = util(rngFor());
    const xs = k.n ? [k.n, k.w, k.c] : [k.w, k.c];
    const fs = [k.fw, k.c, k.oc];
    out.push({
      name: `Conv1D_${i}`, op: 'Conv1D',
      attr: { T: T('float32'), stride: I(k.stride), dilation: I(k.dil), padding: S(k.pad), data_format: S('NWC') },
      inputs: [ph('float32', xs, u.vals(u.n(xs), () => u.uni(-2, 2)), 'x'),
        (i % 2 ? ph : cst)('float32', fs, u.vals(u.n(fs), () => u.uni(-1, 1)), 'filter')],
    });
  });
  // Conv3D: NDHWC, filter DHWIO, strides or dilations past 1, SAME and VALID
  const conv3d = [
    { s: [1, 4, 5, 6, 2], f: [2, 2, 3, 2, 3], st: [1, 1, 1], dl: [1, 1, 1], pad: 'VALID' },
    { s: [2, 5, 4, 4, 3], f: [3, 2, 2, 3, 2], st: [2, 1, 2], dl: [1, 1, 1], pad: 'SAME' },
    { s: [1, 6, 6, 5, 1], f: [2, 3, 2, 1, 4], st: [1, 1, 1], dl: [2, 1, 2], pad: 'SAME' },
    { s: [2, 3, 7, 5, 2], f: [1, 3, 3, 2, 2], st: [1, 3, 2], dl: [1, 1, 1], pad: 'VALID' },
  ];
  conv3d.forEach((k, i) => {
    const u = util(rngFor());
    out.push({ name: `Conv3D_${i}`, op: 'Conv3D',
      attr: { T: T('float32'), strides: IL([1, ...k.st, 1]), dilations: IL([1, ...k.dl, 1]), padding: S(k.pad), data_format: S('NDHWC') },
      inputs: [ph('float32', k.s, u.vals(u.n(k.s), () => u.uni(-2, 2)), 'x'),
        (i % 2 ? ph : cst)('float32', k.f, u.vals(u.n(k.f), () => u.uni(-1, 1)), 'filter')] });
  });
  // MaxPool3D, AvgPool3D: NDHWC, windows past the edge (SAME), strides of 1..3
  const pool3d = [
    { s: [1, 5, 6, 4, 2], k: [2, 2, 2], st: [1, 1, 1], pad: 'VALID' },
    { s: [2, 4, 5, 6, 3], k: [3, 2, 3], st: [2, 1, 2], pad: 'SAME' },
    { s: [1, 7, 3, 5, 1], k: [2, 3, 1], st: [3, 2, 1], pad: 'SAME' },
    { s: [2, 3, 6, 5, 2], k: [1, 3, 2], st: [1, 3, 2], pad: 'VALID' },
  ];
  for (const op of ['MaxPool3D', 'AvgPool3D']) {
    pool3d.forEach((k, i) => {
      const u = util(rngFor());
      out.push({ name: `${op}_${i}`, op, tol: op === 'MaxPool3D' ? 0 : 1e-5,
        attr: { T: T('float32'), ksize: IL([1, ...k.k, 1]), strides: IL([1, ...k.st, 1]), padding: S(k.pad), data_format: S('NDHWC') },
        inputs: [ph('float32', k.s, u.vals(u.n(k.s), () => u.uni(-5, 5)), 'x')] });
    });
  }
  // MaxPoolWithArgmax: values and int32 positions (first max of a window,
  // ties from small integer values), with and without the batch in the index
  const pwa = [
    { s: [2, 6, 7, 3], k: [2, 2], st: [2, 2], pad: 'VALID', b: false },
    { s: [3, 5, 5, 2], k: [3, 3], st: [1, 2], pad: 'SAME', b: true },
    { s: [2, 7, 4, 2], k: [2, 3], st: [3, 1], pad: 'SAME', b: false, ties: true },
    { s: [2, 4, 6, 3], k: [3, 2], st: [1, 1], pad: 'VALID', b: true, ties: true },
  ];
  pwa.forEach((k, i) => {
    const u = util(rngFor());
    out.push({ name: `MaxPoolWithArgmax_${i}`, op: 'MaxPoolWithArgmax', tol: 0, outputs: 2,
      attr: { T: T('float32'), Targmax: T('int32'), ksize: IL([1, ...k.k, 1]), strides: IL([1, ...k.st, 1]), padding: S(k.pad), include_batch_in_index: B(k.b) },
      inputs: [ph('float32', k.s, u.vals(u.n(k.s), () => (k.ties ? u.int(-2, 2) : u.uni(-5, 5))), 'x')] });
  });
  // Dilation2D: strides or rates past 1, SAME and VALID
  const dil = [
    { s: [2, 6, 7, 3], f: [2, 2], st: [1, 1], r: [1, 1], pad: 'VALID' },
    { s: [1, 8, 6, 2], f: [3, 2], st: [2, 1], r: [1, 2], pad: 'SAME' },
    { s: [2, 5, 9, 2], f: [2, 3], st: [1, 2], r: [2, 1], pad: 'SAME' },
    { s: [1, 9, 9, 1], f: [3, 3], st: [3, 3], r: [2, 2], pad: 'VALID' },
  ];
  dil.forEach((k, i) => {
    const u = util(rngFor());
    const fs = [...k.f, k.s[3]];
    out.push({ name: `Dilation2D_${i}`, op: 'Dilation2D', tol: 0,
      attr: { T: T('float32'), strides: IL([1, ...k.st, 1]), rates: IL([1, ...k.r, 1]), padding: S(k.pad) },
      inputs: [ph('float32', k.s, u.vals(u.n(k.s), () => u.uni(-5, 5)), 'x'),
        (i % 2 ? ph : cst)('float32', fs, u.vals(u.n(fs), () => u.uni(-2, 2)), 'filter')] });
  });
  {
    const u = util(rngFor());
    const s = u.shape();
    out.push({ name: 'Print_0', op: 'Print', tol: 0,
      attr: { T: T('float32'), message: S('x: '), summarize: I(3), first_n: I(-1), U: { list: { type: ['DT_FLOAT'] } } },
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-5, 5)), 'x'), ph('float32', [20], u.vals(20, () => u.uni(-1, 1)), 'data')] });
  }
  for (let k = 0; k < 2; k++) {
    const u = util(rngFor());
    const s = u.shape();
    out.push({ name: `FakeQuantWithMinMaxVars_${k}`, op: 'FakeQuantWithMinMaxVars', tol: 0,
      attr: { num_bits: I(k ? 4 : 8), narrow_range: B(!!k) },
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-8, 8)), 'x'), cst('float32', [], [-3], 'min'), cst('float32', [], [2.5], 'max')] });
  }
  return out;
}

module.exports = { conv3dCases };
