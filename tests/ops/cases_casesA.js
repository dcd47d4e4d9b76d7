// Per-op cases of the arithmetic, convolution, matmul, creation, comparison,
// logical, select, softmax, reduction and cast ops that had none (issue 15;
// tests/ops/gen.js, cases.js appends them): random shapes with inputs past 16
// elements (the GPU path), the attributes and dtypes tfjs's converter takes,
// and tfjs's edge cases: int32 Div is a floor division, DivNoNan's zeros,
// Mod's signs, Select's condition broadcast from the right (tfjs's where),
// TopK's ties and its own order where its comparator gives NaN, Cast's
// truncation and NaN, reductions over negative, several and empty axes,
// keep_dims, NCHW convs with tfjs's reading of their attrs, batch matmuls
// broadcast tfjs's way. Most ops also get a case big enough that its step
// splits under test_ops's budget (the "_tiled" cases at the end).
'use strict';

function casesACases(rngFor, util, { T, I, F, B, S, IL }) {
  const out = [];
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const SL = (v) => ({ list: { s: v.map((x) => Buffer.from(x, 'latin1').toString('base64')) } });
  const SPECIAL = [NaN, Infinity, -Infinity, 0, -0, 1, -1];
  const fv = (u, s, lo, hi) => u.vals(u.n(s), () => u.uni(lo, hi));
  const iv = (u, s, lo, hi) => u.vals(u.n(s), () => u.int(lo, hi));
  const bv = (u, s) => u.vals(u.n(s), () => u.int(0, 1));

  // ---- AddN: 2 to 5 inputs, float and int32 (N attr)
  [[2, 'float32'], [3, 'float32'], [5, 'float32'], [3, 'int32'], [1, 'float32']].forEach(([n, dt], k) => {
    const u = util(rngFor());
    const s = u.shape();
    const inputs = Array.from({ length: n }, (_, i) => ph(dt, s, dt === 'int32' ? iv(u, s, -50, 50) : fv(u, s, -5, 5), `x${i}`));
    out.push({ name: `AddN_${k}`, op: 'AddN', attr: { N: I(n), T: T(dt) }, inputs });
  });

  // ---- BiasAdd: bias along the last axis; tfjs ignores data_format (a plain
  // add), so an 'NCHW' node still adds along the last axis
  [['NHWC', [3, 5, 4, 6], 'float32'], ['NHWC', [40, 7], 'float32'], ['NHWC', [2, 9, 5], 'int32'],
    ['NCHW', [2, 3, 4, 5], 'float32'], [null, [4, 6, 3], 'float32']].forEach(([df, s, dt], k) => {
    const u = util(rngFor());
    const c = s[s.length - 1];
    const attr = { T: T(dt) };
    if (df) attr.data_format = S(df);
    const mk = k % 2 ? ph : cst;
    out.push({ name: `BiasAdd_${k}`, op: 'BiasAdd', attr,
      inputs: [ph(dt, s, dt === 'int32' ? iv(u, s, -50, 50) : fv(u, s, -5, 5), 'x'),
        mk(dt, [c], dt === 'int32' ? iv(u, [c], -9, 9) : fv(u, [c], -2, 2), 'bias')] });
  });

  // ---- Div: float with broadcasting and zero divisors (+-Inf, NaN); int32
  // Div is tfjs's floorDiv (negative operands round down)
  {
    let u = util(rngFor());
    let s = u.shape(4, 400);
    let t = s.map((d, i) => (i % 2 ? 1 : d));
    out.push({ name: 'Div_0', op: 'Div', attr: { T: T('float32') },
      inputs: [ph('float32', s, fv(u, s, -9, 9), 'a'), ph('float32', t, fv(u, t, 0.5, 5), 'b')] });
    u = util(rngFor());
    s = [6, 8];
    const a = u.vals(48, (_, i) => (i % 7 === 0 ? SPECIAL[i % SPECIAL.length] : u.uni(-9, 9)));
    const b = u.vals(48, (_, i) => (i % 3 === 0 ? [0, -0, Infinity, -Infinity, NaN][u.int(0, 4)] : u.uni(-5, 5)));
    out.push({ name: 'Div_zeros', op: 'Div', attr: { T: T('float32') }, inputs: [ph('float32', s, a, 'a'), ph('float32', s, b, 'b')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Div_int', op: 'Div', attr: { T: T('int32') },
      inputs: [ph('int32', s, iv(u, s, -100, 100), 'a'), ph('int32', s, u.vals(u.n(s), () => u.int(1, 9) * (u.int(0, 1) ? 1 : -1)), 'b')] });
    // int32 division by 0: Math.floor(+-Inf or NaN) stored in an Int32Array, 0
    u = util(rngFor());
    out.push({ name: 'Div_int_zero', op: 'Div', attr: { T: T('int32') },
      inputs: [ph('int32', [6, 5], iv(u, [6, 5], -20, 20), 'a'), ph('int32', [6, 5], iv(u, [6, 5], -2, 2), 'b')] });
    u = util(rngFor());
    out.push({ name: 'Div_scalar', op: 'Div', attr: { T: T('float32') },
      inputs: [ph('float32', [5, 7], fv(u, [5, 7], -9, 9), 'a'), cst('float32', [], [Math.fround(-2.5)], 'b')] });
  }

  // ---- DivNoNan: 0 where the divisor is 0 (even 0/0, Inf/0, NaN/0), a plain
  // division elsewhere; int32 divides with tfjs's floorDiv
  {
    let u = util(rngFor());
    let s = [7, 9];
    const a = u.vals(63, (_, i) => (i % 5 === 0 ? SPECIAL[u.int(0, SPECIAL.length - 1)] : u.uni(-9, 9)));
    const b = u.vals(63, (_, i) => (i % 2 === 0 ? (i % 4 ? -0 : 0) : u.uni(-5, 5)));
    out.push({ name: 'DivNoNan_0', op: 'DivNoNan', attr: { T: T('float32') }, inputs: [ph('float32', s, a, 'a'), ph('float32', s, b, 'b')] });
    u = util(rngFor());
    s = [4, 6, 5];
    const t = [6, 1];
    out.push({ name: 'DivNoNan_bcast', op: 'DivNoNan', attr: { T: T('float32') },
      inputs: [ph('float32', s, fv(u, s, -9, 9), 'a'), ph('float32', t, [0, 2, -3, 0, 0.5, -0], 'b')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'DivNoNan_int', op: 'DivNoNan', attr: { T: T('int32') },
      inputs: [ph('int32', s, iv(u, s, -60, 60), 'a'), ph('int32', s, iv(u, s, -4, 4), 'b')] });
  }

  // ---- Mod: tfjs's sign rule (the result takes the divisor's sign), both
  // signs of each operand, float and int32; float x mod 0 is NaN
  {
    let u = util(rngFor());
    let s = u.shape();
    out.push({ name: 'Mod_float', op: 'Mod', tol: 0, attr: { T: T('float32') },
      inputs: [ph('float32', s, fv(u, s, -20, 20), 'a'), ph('float32', s, u.vals(u.n(s), () => u.uni(0.5, 6) * (u.int(0, 1) ? 1 : -1)), 'b')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Mod_int', op: 'Mod', tol: 0, attr: { T: T('int32') },
      inputs: [ph('int32', s, iv(u, s, -60, 60), 'a'), ph('int32', s, u.vals(u.n(s), () => u.int(1, 9) * (u.int(0, 1) ? 1 : -1)), 'b')] });
    u = util(rngFor());
    s = [5, 8];
    out.push({ name: 'Mod_bcast', op: 'Mod', tol: 0, attr: { T: T('int32') },
      inputs: [ph('int32', s, iv(u, s, -30, 30), 'a'), ph('int32', [8], [3, -3, 7, -7, 1, -1, 10, -10], 'b')] });
    // int32 modulo 0 (NaN in JS, 0 in an Int32Array), and int32's extremes
    u = util(rngFor());
    out.push({ name: 'Mod_int_zero', op: 'Mod', tol: 0, attr: { T: T('int32') },
      inputs: [ph('int32', [24], [...iv(u, [20], -20, 20), 2147483647, -2147483648, -2147483648, 7], 'a'),
        ph('int32', [24], [...iv(u, [20], -2, 2), -7, 3, 2147483647, -2147483648], 'b')] });
    // exact multiples (a zero remainder of either sign), zero divisors, specials
    const a = [6, -6, 6, -6, 0, -0, 5.5, -5.5, 7, -7, 1, -1, Infinity, -Infinity, NaN, 3, 4, -4, 2.25, -2.25];
    const b = [3, 3, -3, -3, 3, -3, 0, 0, Infinity, Infinity, -Infinity, -Infinity, 2, 2, 2, NaN, 0.5, 0.5, -0.75, 0.75];
    // tfjs's % is exact (fmod): huge quotients; a remainder of the other sign
    // whose rem + b rounds (float32) or rounds in float64 (then 0) to b itself.
    // No subnormal divisors: GLSL may flush them to zero (not a case here)
    const ea = [-1e-10, 1e-10, -3e-8, 7.5, -7.5, 1e20, -1e20, 3.4e38, -3.4e38, 123456.789, -0.3, 0.3, 1e-30, -1e-30, 5e6, -5e6, 16777217, 1, -1, 2.5];
    const eb = [1, -1, 1, 1e-7, 1e-7, 3, 7, -1.5, 1.1, 0.01, 0.1, -0.1, 1e-31, 3, -0.7, 0.7, 3, 3e-37, 4, -1e30];
    out.push({ name: 'Mod_exact', op: 'Mod', tol: 0, attr: { T: T('float32') }, inputs: [ph('float32', [20], ea, 'a'), ph('float32', [20], eb, 'b')] });
    out.push({ name: 'Mod_edges', op: 'Mod', tol: 0, attr: { T: T('float32') }, inputs: [ph('float32', [20], a, 'a'), ph('float32', [20], b, 'b')] });
  }

  // ---- Prelu: alpha per channel (weights or input), the same shape as x, and
  // one value for all
  {
    let u = util(rngFor());
    let s = [2, 5, 4, 6];
    out.push({ name: 'Prelu_0', op: 'Prelu', attr: { T: T('float32') },
      inputs: [ph('float32', s, fv(u, s, -5, 5), 'x'), cst('float32', [6], fv(u, [6], -0.5, 1.5), 'alpha')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Prelu_same', op: 'Prelu', attr: { T: T('float32') },
      inputs: [ph('float32', s, fv(u, s, -5, 5), 'x'), ph('float32', s, fv(u, s, 0, 1), 'alpha')] });
    u = util(rngFor());
    s = [30, 3];
    out.push({ name: 'Prelu_scalar', op: 'Prelu', attr: { T: T('float32') },
      inputs: [ph('float32', s, fv(u, s, -5, 5), 'x'), cst('float32', [], [0.25], 'alpha')] });
    u = util(rngFor());
    s = [3, 4, 7];
    out.push({ name: 'Prelu_bcast', op: 'Prelu', attr: { T: T('float32') },
      inputs: [ph('float32', s, fv(u, s, -5, 5), 'x'), ph('float32', [4, 1], fv(u, [4, 1], -1, 1), 'alpha')] });
  }

  // ---- AvgPool, MaxPool: NHWC; SAME windows past the edge (tfjs's average
  // counts only the pixels inside), strides 1..3, kernels larger than strides
  const pools = [
    { s: [1, 9, 9, 3], k: [2, 2], st: [2, 2], pad: 'VALID' },
    { s: [2, 7, 8, 2], k: [3, 3], st: [1, 1], pad: 'SAME' },
    { s: [1, 11, 6, 4], k: [3, 2], st: [2, 1], pad: 'SAME' },
    { s: [2, 10, 9, 1], k: [4, 3], st: [3, 2], pad: 'VALID' },
    { s: [1, 6, 7, 5], k: [1, 1], st: [1, 1], pad: 'SAME' },
    { s: [1, 5, 13, 2], k: [5, 3], st: [1, 3], pad: 'SAME' },
    { s: [3, 16, 16, 8], k: [3, 3], st: [2, 2], pad: 'SAME' },
    { s: [2, 3, 4, 3], k: [5, 6], st: [1, 2], pad: 'SAME' }, // a window past the whole input
    { s: [1, 4, 5, 6], k: [4, 5], st: [3, 3], pad: 'VALID' }, // one window: the whole input
  ];
  for (const op of ['AvgPool', 'MaxPool']) {
    pools.forEach((p, i) => {
      const u = util(rngFor());
      // max pools get ties (values on a coarse grid)
      const x = op === 'MaxPool' ? iv(u, p.s, -6, 6).map((v) => v / 2) : fv(u, p.s, -5, 5);
      out.push({ name: `${op}_${i}`, op, tol: 0,
        attr: { T: T('float32'), ksize: IL([1, ...p.k, 1]), strides: IL([1, ...p.st, 1]), padding: S(p.pad), data_format: S('NHWC') },
        inputs: [ph('float32', p.s, x, 'x')] });
    });
  }
  // MaxPool: -Inf and NaN inputs
  {
    const u = util(rngFor());
    const s = [1, 6, 6, 2];
    const x = u.vals(72, (_, i) => (i % 9 === 0 ? [-Infinity, Infinity, NaN][u.int(0, 2)] : u.uni(-5, 5)));
    out.push({ name: 'MaxPool_specials', op: 'MaxPool', tol: 0,
      attr: { T: T('float32'), ksize: IL([1, 2, 2, 1]), strides: IL([1, 2, 2, 1]), padding: S('VALID'), data_format: S('NHWC') },
      inputs: [ph('float32', s, x, 'x')] });
  }

  // ---- Conv2D: NHWC, filter HWIO, strides or dilations past 1 (tfjs wants one
  // of the two to be 1), SAME, VALID and EXPLICIT paddings; the filter a
  // weight or a model input
  const convs = [
    { s: [1, 8, 8, 3], f: [3, 3, 3, 4], st: [1, 1], dl: [1, 1], pad: 'SAME' },
    { s: [2, 9, 7, 2], f: [3, 2, 2, 5], st: [2, 2], dl: [1, 1], pad: 'VALID' },
    { s: [1, 10, 11, 3], f: [3, 3, 3, 2], st: [1, 1], dl: [2, 3], pad: 'SAME' },
    { s: [1, 12, 9, 4], f: [5, 3, 4, 3], st: [3, 2], dl: [1, 1], pad: 'SAME' },
    { s: [2, 7, 7, 2], f: [2, 2, 2, 3], st: [1, 1], dl: [1, 1], pad: 'EXPLICIT', ep: [1, 2, 0, 3] },
    { s: [1, 9, 10, 3], f: [3, 3, 3, 4], st: [2, 1], dl: [1, 1], pad: 'EXPLICIT', ep: [2, 0, 1, 1] },
    { s: [1, 6, 6, 1], f: [1, 1, 1, 6], st: [1, 1], dl: [1, 1], pad: 'VALID' },
    { s: [1, 16, 16, 8], f: [3, 3, 8, 16], st: [1, 1], dl: [1, 1], pad: 'SAME' },
    { s: [1, 5, 9, 2], f: [2, 4, 2, 3], st: [1, 1], dl: [2, 2], pad: 'VALID' },
  ];
  const convAttr = (k, extra) => {
    const a = { T: T('float32'), strides: IL([1, ...k.st, 1]), dilations: IL([1, ...k.dl, 1]), padding: S(k.pad), data_format: S('NHWC'), ...extra };
    if (k.ep) a.explicit_paddings = IL([0, 0, k.ep[0], k.ep[1], k.ep[2], k.ep[3], 0, 0]);
    return a;
  };
  convs.forEach((k, i) => {
    const u = util(rngFor());
    out.push({ name: `Conv2D_${i}`, op: 'Conv2D', attr: convAttr(k, { use_cudnn_on_gpu: B(true) }),
      inputs: [ph('float32', k.s, fv(u, k.s, -2, 2), 'x'), (i % 2 ? ph : cst)('float32', k.f, fv(u, k.f, -1, 1), 'filter')] });
  });

  // ---- _FusedConv2D: BiasAdd then each activation tfjs fuses (none, Relu,
  // Relu6, LeakyRelu with its alpha, Prelu with per-channel alpha, Sigmoid, Elu)
  const acts = [[], ['Relu'], ['Relu6'], ['LeakyRelu'], ['Prelu'], ['Sigmoid'], ['Elu']];
  acts.forEach((act, i) => {
    const u = util(rngFor());
    const k = convs[i % convs.length];
    const oc = k.f[3];
    const inputs = [ph('float32', k.s, fv(u, k.s, -2, 2), 'x'), cst('float32', k.f, fv(u, k.f, -1, 1), 'filter'),
      (i % 2 ? ph : cst)('float32', [oc], fv(u, [oc], -1, 1), 'bias')];
    const extra = { fused_ops: SL(['BiasAdd', ...act]), num_args: I(act[0] === 'Prelu' ? 2 : 1), epsilon: F(0) };
    if (act[0] === 'Prelu') inputs.push(cst('float32', [oc], fv(u, [oc], -0.5, 0.5), 'alpha'));
    if (act[0] === 'LeakyRelu') extra.leakyrelu_alpha = F(0.3);
    if (act[0] === 'Relu6') { for (let j = 0; j < inputs[0].values.length; j++) inputs[0].values[j] *= 4; }
    out.push({ name: `_FusedConv2D_${act[0] || 'bias'}`, op: '_FusedConv2D', attr: convAttr(k, extra), inputs });
  });
  // LeakyRelu with tfjs's default alpha (0.2)
  {
    const u = util(rngFor());
    const k = convs[3];
    out.push({ name: '_FusedConv2D_leaky_default', op: '_FusedConv2D',
      attr: convAttr(k, { fused_ops: SL(['BiasAdd', 'LeakyRelu']), num_args: I(1) }),
      inputs: [ph('float32', k.s, fv(u, k.s, -2, 2), 'x'), ph('float32', k.f, fv(u, k.f, -1, 1), 'filter'),
        cst('float32', [k.f[3]], fv(u, [k.f[3]], -1, 1), 'bias')] });
  }

  // ---- NCHW convs: tfjs's converter reads strides and dilations at entries 1
  // and 2 whatever the format (an NCHW node's [1, 1, sh, sw] runs as (1, sh)),
  // explicit paddings at H and W's pairs; _FusedConv2D lays a 1-D bias / PReLU
  // alpha along the channels; a rank-3 [C, H, W] input is batch 1. tfjs's
  // fused depthwise conv ignores data_format (NHWC, so an 'NCHW' node runs as
  // NHWC); its plain depthwise kernel reads NCHW wrong (refused, no case)
  const nchw = [
    { op: 'Conv2D', s: [2, 3, 7, 8], f: [3, 3, 3, 4], st: [1, 1, 1, 1], pad: 'SAME' },
    { op: 'Conv2D', s: [1, 2, 9, 10], f: [3, 2, 2, 3], st: [1, 1, 2, 2], pad: 'VALID' },
    { op: 'Conv2D', s: [1, 3, 6, 7], f: [2, 3, 3, 2], st: [1, 1, 1, 1], pad: 'EXPLICIT', ep: [0, 0, 0, 0, 1, 2, 0, 3] },
    { op: 'Conv2D', s: [3, 6, 8], f: [3, 3, 3, 5], st: [1, 1, 1, 1], pad: 'SAME' },
    { op: '_FusedConv2D', s: [1, 3, 8, 8], f: [3, 3, 3, 4], st: [1, 1, 1, 1], pad: 'SAME', fo: ['BiasAdd', 'Relu'], bias: [4] },
    { op: '_FusedConv2D', s: [2, 2, 6, 7], f: [3, 3, 2, 3], st: [1, 1, 1, 1], pad: 'SAME', fo: ['BiasAdd', 'Prelu'], bias: [3], alpha: [3] },
    { op: '_FusedConv2D', s: [1, 2, 7, 6], f: [2, 2, 2, 3], st: [1, 1, 1, 1], pad: 'VALID', fo: ['BiasAdd', 'LeakyRelu'], bias: [1] },
    { op: 'FusedDepthwiseConv2dNative', s: [1, 4, 5, 3], f: [3, 3, 3, 2], st: [1, 1, 1, 1], pad: 'SAME', fo: ['BiasAdd', 'Relu6'], bias: [6] },
    { op: 'FusedDepthwiseConv2dNative', s: [2, 6, 5, 4], f: [3, 3, 4, 1], st: [1, 1, 1, 1], pad: 'VALID', fo: ['BiasAdd'], bias: [1] },
  ];
  nchw.forEach((k, i) => {
    const u = util(rngFor());
    const attr = { T: T('float32'), strides: IL(k.st), dilations: IL([1, 1, 1, 1]), padding: S(k.pad), data_format: S('NCHW') };
    if (k.ep) attr.explicit_paddings = IL(k.ep);
    const inputs = [ph('float32', k.s, fv(u, k.s, -2, 2), 'x'), (i % 2 ? ph : cst)('float32', k.f, fv(u, k.f, -1, 1), 'filter')];
    if (k.fo) {
      attr.fused_ops = SL(k.fo);
      attr.num_args = I(k.alpha ? 2 : 1);
      inputs.push(cst('float32', k.bias, fv(u, k.bias, -1, 1), 'bias'));
      if (k.alpha) inputs.push(cst('float32', k.alpha, fv(u, k.alpha, -0.5, 0.5), 'alpha'));
    }
    out.push({ name: `${k.op}_nchw_${i}`, op: k.op, attr, inputs });
  });

  // bias and PReLU alpha that are not one per channel: tfjs adds / applies
  // them broadcast (a scalar, one value, the output's shape); fused_ops with
  // no BiasAdd first: tfjs reads no bias and no activation (a plain conv)
  {
    const k = { s: [1, 6, 7, 3], f: [3, 3, 3, 4], st: [1, 1], dl: [1, 1], pad: 'SAME' };
    const oshape = [1, 6, 7, 4];
    const variants = [
      { n: 'scalar_bias', fo: ['BiasAdd', 'Relu'], bias: [] },
      { n: 'one_bias_prelu_one', fo: ['BiasAdd', 'Prelu'], bias: [1], alpha: [1] },
      { n: 'full_bias', fo: ['BiasAdd', 'Sigmoid'], bias: oshape },
      { n: 'full_alpha', fo: ['BiasAdd', 'Prelu'], bias: [4], alpha: oshape.slice(1) }, // tfjs takes rank 0, 1 or 3
      { n: 'relu_only', fo: ['Relu'], na: 0 },
    ];
    variants.forEach((v) => {
      const u = util(rngFor());
      const inputs = [ph('float32', k.s, fv(u, k.s, -2, 2), 'x'), cst('float32', k.f, fv(u, k.f, -1, 1), 'filter')];
      if (v.bias) inputs.push(cst('float32', v.bias, fv(u, v.bias, -1, 1), 'bias'));
      if (v.alpha) inputs.push(ph('float32', v.alpha, fv(u, v.alpha, -0.5, 0.5), 'alpha'));
      out.push({ name: `_FusedConv2D_${v.n}`, op: '_FusedConv2D',
        attr: convAttr(k, { fused_ops: SL(v.fo), num_args: I(v.na != null ? v.na : inputs.length - 2) }), inputs });
    });
    const mv = [
      { n: 'full_bias', fo: ['BiasAdd', 'Relu6'], bias: [9, 5] },
      { n: 'scalar_alpha', fo: ['BiasAdd', 'Prelu'], bias: [5], alpha: [] },
    ];
    mv.forEach((v) => {
      const u = util(rngFor());
      const inputs = [ph('float32', [9, 7], fv(u, [9, 7], -3, 3), 'a'), cst('float32', [7, 5], fv(u, [7, 5], -1, 1), 'b'),
        ph('float32', v.bias, fv(u, v.bias, -1, 1), 'bias')];
      if (v.alpha) inputs.push(cst('float32', v.alpha, [0.3], 'alpha'));
      out.push({ name: `_FusedMatMul_${v.n}`, op: '_FusedMatMul',
        attr: { T: T('float32'), transpose_a: B(false), transpose_b: B(false), fused_ops: SL(v.fo), num_args: I(inputs.length - 2) }, inputs });
    });
  }

  // ---- Conv2DBackpropInput (conv2dTranspose): input_sizes a weight, strides
  // 1..3, SAME and VALID, output sizes that a stride leaves a remainder of
  const deconvs = [
    { o: [1, 8, 8, 3], f: [3, 3, 3, 4], st: [1, 1], pad: 'SAME' },
    { o: [2, 9, 7, 2], f: [3, 3, 2, 3], st: [2, 2], pad: 'SAME' },
    { o: [1, 10, 9, 3], f: [2, 2, 3, 2], st: [2, 2], pad: 'VALID' },
    { o: [1, 11, 12, 2], f: [4, 3, 2, 5], st: [3, 2], pad: 'VALID' },
    { o: [2, 7, 5, 4], f: [3, 2, 4, 2], st: [1, 2], pad: 'SAME' },
  ];
  deconvs.forEach((k, i) => {
    const u = util(rngFor());
    const [n, h, w] = k.o;
    const oh = k.pad === 'SAME' ? Math.ceil(h / k.st[0]) : Math.ceil((h - k.f[0] + 1) / k.st[0]);
    const ow = k.pad === 'SAME' ? Math.ceil(w / k.st[1]) : Math.ceil((w - k.f[1] + 1) / k.st[1]);
    const dy = [n, oh, ow, k.f[3]];
    // tfjs ignores data_format here: an 'NCHW' node runs as NHWC
    out.push({ name: `Conv2DBackpropInput_${i}`, op: 'Conv2DBackpropInput',
      attr: { T: T('float32'), strides: IL([1, ...k.st, 1]), padding: S(k.pad), data_format: S(i === 4 ? 'NCHW' : 'NHWC'), dilations: IL([1, 1, 1, 1]) },
      inputs: [cst('int32', [4], k.o, 'input_sizes'), (i % 2 ? ph : cst)('float32', k.f, fv(u, k.f, -1, 1), 'filter'),
        ph('float32', dy, fv(u, dy, -2, 2), 'out_backprop')] });
  });

  // ---- DepthwiseConv2d, DepthwiseConv2dNative: channel multipliers 1..3,
  // strides, dilations, SAME / VALID / EXPLICIT
  const dws = [
    { s: [1, 8, 8, 3], f: [3, 3, 3, 1], st: [1, 1], dl: [1, 1], pad: 'SAME' },
    { s: [2, 9, 7, 2], f: [3, 3, 2, 2], st: [2, 2], dl: [1, 1], pad: 'VALID' },
    { s: [1, 10, 10, 4], f: [3, 2, 4, 3], st: [1, 1], dl: [2, 2], pad: 'SAME' },
    { s: [1, 7, 9, 3], f: [2, 3, 3, 2], st: [1, 1], dl: [1, 1], pad: 'EXPLICIT', ep: [1, 0, 2, 1] },
    { s: [2, 11, 6, 2], f: [5, 3, 2, 1], st: [3, 1], dl: [1, 1], pad: 'SAME' },
  ];
  for (const op of ['DepthwiseConv2dNative', 'DepthwiseConv2d']) {
    dws.forEach((k, i) => {
      const u = util(rngFor());
      out.push({ name: `${op}_${i}`, op, attr: convAttr(k, {}),
        inputs: [ph('float32', k.s, fv(u, k.s, -2, 2), 'input'), (i % 2 ? ph : cst)('float32', k.f, fv(u, k.f, -1, 1), 'filter')] });
    });
  }
  // ---- FusedDepthwiseConv2dNative: BiasAdd with the activations
  [[], ['Relu'], ['Relu6'], ['Prelu'], ['Sigmoid'], ['LeakyRelu']].forEach((act, i) => {
    const u = util(rngFor());
    const k = dws[i % dws.length];
    const oc = k.f[2] * k.f[3];
    const inputs = [ph('float32', k.s, fv(u, k.s, -3, 3), 'x'), cst('float32', k.f, fv(u, k.f, -1, 1), 'filter'),
      (i % 2 ? ph : cst)('float32', [oc], fv(u, [oc], -1, 1), 'bias')];
    if (act[0] === 'Prelu') inputs.push(cst('float32', [oc], fv(u, [oc], -0.5, 0.5), 'alpha'));
    const extra = { fused_ops: SL(['BiasAdd', ...act]), num_args: I(act[0] === 'Prelu' ? 2 : 1) };
    if (act[0] === 'LeakyRelu') extra.leakyrelu_alpha = F(0.1);
    out.push({ name: `FusedDepthwiseConv2dNative_${act[0] || 'bias'}`, op: 'FusedDepthwiseConv2dNative', attr: convAttr(k, extra), inputs });
  });

  // ---- MatMul: every transpose_a / transpose_b, a weight or input b, int32
  const mm = (m, kk, n, ta, tb) => {
    const as = ta ? [kk, m] : [m, kk];
    const bs = tb ? [n, kk] : [kk, n];
    return [as, bs];
  };
  [[0, 0], [1, 0], [0, 1], [1, 1]].forEach(([ta, tb], i) => {
    const u = util(rngFor());
    const [as, bs] = mm(u.int(3, 20), u.int(2, 30), u.int(3, 20), ta, tb);
    out.push({ name: `MatMul_${i}`, op: 'MatMul', attr: { T: T('float32'), transpose_a: B(!!ta), transpose_b: B(!!tb) },
      inputs: [ph('float32', as, fv(u, as, -2, 2), 'a'), (i % 2 ? ph : cst)('float32', bs, fv(u, bs, -2, 2), 'b')] });
  });
  {
    const u = util(rngFor());
    out.push({ name: 'MatMul_int', op: 'MatMul', tol: 0, attr: { T: T('int32'), transpose_a: B(false), transpose_b: B(true) },
      inputs: [ph('int32', [9, 7], iv(u, [9, 7], -20, 20), 'a'), ph('int32', [5, 7], iv(u, [5, 7], -20, 20), 'b')] });
    // an inner dimension of 0: zeros
    out.push({ name: 'MatMul_k0', op: 'MatMul', tol: 0, attr: { T: T('float32'), transpose_a: B(false), transpose_b: B(false) },
      inputs: [ph('float32', [5, 0], [], 'a'), ph('float32', [0, 6], [], 'b')] });
    const v = util(rngFor());
    out.push({ name: 'MatMul_big', op: 'MatMul', attr: { T: T('float32') },
      inputs: [ph('float32', [64, 96], fv(v, [64, 96], -1, 1), 'a'), cst('float32', [96, 80], fv(v, [96, 80], -1, 1), 'b')] });
  }
  // ---- _FusedMatMul: BiasAdd with the activations, transposes
  [[[], 0, 0], [['Relu'], 1, 0], [['Relu6'], 0, 1], [['LeakyRelu'], 1, 1], [['Prelu'], 0, 0], [['Sigmoid'], 0, 1], [['Elu'], 1, 0]].forEach(([act, ta, tb], i) => {
    const u = util(rngFor());
    const n = u.int(3, 12);
    const [as, bs] = mm(u.int(3, 15), u.int(2, 20), n, ta, tb);
    const inputs = [ph('float32', as, fv(u, as, -2, 2), 'a'), cst('float32', bs, fv(u, bs, -2, 2), 'b'),
      (i % 2 ? ph : cst)('float32', [n], fv(u, [n], -1, 1), 'bias')];
    if (act[0] === 'Prelu') inputs.push(cst('float32', [n], fv(u, [n], -0.5, 0.5), 'alpha'));
    const attr = { T: T('float32'), transpose_a: B(!!ta), transpose_b: B(!!tb), fused_ops: SL(['BiasAdd', ...act]), num_args: I(act[0] === 'Prelu' ? 2 : 1), epsilon: F(0) };
    if (act[0] === 'LeakyRelu') attr.leakyrelu_alpha = F(0.05);
    out.push({ name: `_FusedMatMul_${act[0] || 'bias'}`, op: '_FusedMatMul', attr, inputs });
  });

  // ---- BatchMatMul, BatchMatMulV2: adj_x / adj_y, rank 3 and 4, the batch of
  // one side broadcast (one batch, or a rank-2 operand)
  const bmm = [
    { a: [3, 4, 5], b: [3, 5, 6], ax: 0, ay: 0 },
    { a: [2, 5, 4], b: [2, 5, 6], ax: 1, ay: 0 },
    { a: [2, 3, 4, 5], b: [2, 3, 6, 5], ax: 0, ay: 1 },
    { a: [4, 5, 3], b: [4, 6, 5], ax: 1, ay: 1 },
    { a: [1, 4, 5], b: [3, 5, 6], ax: 0, ay: 0 },
    { a: [3, 2, 4, 5], b: [5, 6], ax: 0, ay: 0 },
    { a: [6, 7], b: [2, 3, 7, 4], ax: 0, ay: 0 },
    { a: [2, 1, 4, 5], b: [1, 1, 6, 5], ax: 0, ay: 1 },
    // one side's batch neither one nor the whole: tfjs takes its matrix bi
    // modulo its batch count: numpy's broadcast in the first two, tfjs's own
    // answer in the third (where neither side has the whole batch, tfjs's
    // output lacks values: that is refused)
    { a: [2, 3, 4, 5], b: [3, 5, 6], ax: 0, ay: 0 },
    { a: [3, 5, 4], b: [2, 3, 6, 5], ax: 1, ay: 1 },
    { a: [2, 3, 2, 4, 5], b: [3, 1, 5, 3], ax: 0, ay: 0 },
  ];
  for (const op of ['BatchMatMul', 'BatchMatMulV2']) {
    bmm.forEach((k, i) => {
      if (op === 'BatchMatMul' && i >= 5) return; // V1 has no broadcasting of ranks
      const u = util(rngFor());
      out.push({ name: `${op}_${i}`, op, attr: { T: T('float32'), adj_x: B(!!k.ax), adj_y: B(!!k.ay) },
        inputs: [ph('float32', k.a, fv(u, k.a, -2, 2), 'x'), (i % 2 ? ph : cst)('float32', k.b, fv(u, k.b, -2, 2), 'y')] });
    });
  }

  // ---- Fill: float, int32, bool; scalar value, rank 0..4, an empty shape
  [[[4, 7], 'float32', 2.5], [[3, 2, 5], 'int32', -7], [[20], 'bool', 1], [[2, 3, 2, 2], 'float32', NaN], [[], 'float32', -1.25], [[0, 4], 'int32', 3]].forEach(([s, dt, v], i) => {
    out.push({ name: `Fill_${i}`, op: 'Fill', attr: { T: T(dt), index_type: T('int32') },
      inputs: [cst('int32', [s.length], s, 'dims'), cst(dt, [], [v], 'value')] });
  });

  // ---- OnesLike, ZerosLike: float, int32, bool inputs (GPU-sized)
  for (const op of ['OnesLike', 'ZerosLike']) {
    ['float32', 'int32', 'bool'].forEach((dt) => {
      const u = util(rngFor());
      const s = u.shape();
      const x = dt === 'bool' ? bv(u, s) : dt === 'int32' ? iv(u, s, -9, 9) : fv(u, s, -5, 5);
      out.push({ name: `${op}_${dt}`, op, attr: { T: T(dt) }, inputs: [ph(dt, s, x, 'x')] });
    });
  }

  // ---- Range: float and int, negative deltas, non-integral counts, an
  // empty range; exactly (tfjs adds delta to the previous float32 value, so
  // rounding accumulates), and tfjs's quirks when limit < start: a delta of 1
  // counts down, one in (0, 1) counts up from start, one past 1 is empty
  [['float32', 0, 10, 1], ['float32', 1.5, -7.25, -0.75], ['float32', -3, 4.1, 0.3], ['int32', 5, 60, 3],
    ['int32', 20, -21, -2], ['int32', 7, 7, 1], ['float32', 0, 1, 0.05], ['int32', 3, 10, 100],
    ['int32', 5, -20, 1], ['float32', 5.5, 2, 0.5], ['int32', 10, 0, 3], ['float32', 0.1, 30.7, 0.1],
    ['float32', 3, 7, -1], ['float32', -2, -9, 1]].forEach(([dt, a, b, d], i) => {
    out.push({ name: `Range_${i}`, op: 'Range', tol: 0, attr: { Tidx: T(dt) },
      inputs: [cst(dt, [], [a], 'start'), cst(dt, [], [b], 'limit'), cst(dt, [], [d], 'delta')] });
  });

  // ---- TopKV2 (sorted): ties (tfjs puts the lower index first), k of 1 and
  // of the whole row, int32, rank 1..3
  [[[40], 5, 'float32'], [[6, 30], 7, 'float32'], [[3, 4, 20], 20, 'float32'], [[50], 1, 'int32'],
    [[8, 25], 10, 'int32'], [[4, 18], 6, 'float32']].forEach(([s, k, dt], i) => {
    const u = util(rngFor());
    const x = dt === 'int32' ? iv(u, s, -5, 5) : i === 5 ? u.vals(u.n(s), (_, j) => (j % 4 === 0 ? [Infinity, -Infinity, 0, -0][u.int(0, 3)] : u.int(-3, 3)))
      : u.vals(u.n(s), () => u.int(-8, 8) / 4); // a coarse grid: many ties
    out.push({ name: `TopKV2_${i}`, op: 'TopKV2', tol: 0, outputs: 2, attr: { T: T(dt), sorted: B(true) },
      inputs: [ph(dt, s, x, 'x'), cst('int32', [], [k], 'k')] });
  });

  // tfjs's own order where its comparator gives NaN (NaN values, equal
  // infinities: masked logits), rows past 600 (select()'s sampling step), k of
  // 64 and more (V8's merge of sorted runs), unsorted (select()'s order), k 0
  [[[3, 40], 9, 'nan', true], [[2, 700], 30, 'inf', true], [[2, 900], 80, 'inf', true], [[5, 33], 12, 'grid', false],
    [[2, 650], 40, 'inf', false], [[3, 20], 20, 'inf', false], [[4, 10], 0, 'grid', true], [[2, 300], 100, 'grid', true],
    [[2, 50], 20, 'nan', false]].forEach(([s, k, kind, sorted], i) => {
    const u = util(rngFor());
    const x = u.vals(u.n(s), () => {
      const r = u.int(0, 9);
      if (kind === 'nan' && r === 0) return NaN;
      if (kind !== 'grid' && r === 1) return -Infinity;
      if (kind !== 'grid' && r === 2) return Infinity;
      return u.int(-6, 6) / 2;
    });
    out.push({ name: `TopKV2_${kind}_${i}`, op: 'TopKV2', tol: 0, outputs: 2, attr: { T: T('float32'), sorted: B(sorted) },
      inputs: [ph('float32', s, x, 'x'), cst('int32', [], [k], 'k')] });
  });

  // ---- ResizeBilinear, ResizeNearestNeighbor: up and down, align_corners,
  // half_pixel_centers, int32 images
  const rs = [
    { s: [1, 5, 6, 2], o: [9, 11], ac: 0, hp: 0 },
    { s: [2, 8, 7, 3], o: [4, 3], ac: 0, hp: 0 },
    { s: [1, 5, 6, 2], o: [9, 11], ac: 1, hp: 0 },
    { s: [2, 9, 8, 1], o: [4, 5], ac: 1, hp: 0 },
    { s: [1, 5, 6, 2], o: [9, 11], ac: 0, hp: 1 },
    { s: [2, 9, 8, 1], o: [4, 5], ac: 0, hp: 1 },
    { s: [1, 4, 4, 3], o: [1, 1], ac: 0, hp: 1 },
    { s: [1, 1, 6, 4], o: [3, 12], ac: 1, hp: 0 },
    { s: [1, 5, 7, 3], o: [1, 1], ac: 1, hp: 0 },
    { s: [2, 4, 6, 2], o: [4, 6], ac: 0, hp: 1 },
    { s: [1, 6, 4, 2], o: [6, 4], ac: 1, hp: 0 },
  ];
  for (const op of ['ResizeBilinear', 'ResizeNearestNeighbor']) {
    rs.forEach((k, i) => {
      const u = util(rngFor());
      out.push({ name: `${op}_${i}`, op, tol: op === 'ResizeNearestNeighbor' ? 0 : 1e-4,
        attr: { T: T('float32'), align_corners: B(!!k.ac), half_pixel_centers: B(!!k.hp) },
        inputs: [ph('float32', k.s, fv(u, k.s, -5, 5), 'images'), cst('int32', [2], k.o, 'size')] });
    });
    const u = util(rngFor());
    const s = [1, 6, 5, 2];
    out.push({ name: `${op}_int`, op, tol: op === 'ResizeNearestNeighbor' ? 0 : 1e-4,
      attr: { T: T('int32'), align_corners: B(false), half_pixel_centers: B(true) },
      inputs: [ph('int32', s, iv(u, s, -100, 100), 'images'), cst('int32', [2], [10, 7], 'size')] });
  }

  // ---- NotEqual, Greater, LessEqual: float with NaN / +-0 / Inf and
  // broadcasting, int32, bool (NotEqual)
  for (const op of ['NotEqual', 'Greater', 'LessEqual']) {
    let u = util(rngFor());
    let s = u.shape(4, 400);
    const t = s.map((d, i) => (i % 2 ? d : 1));
    const sp = () => (u.int(0, 4) === 0 ? SPECIAL[u.int(0, SPECIAL.length - 1)] : u.int(-3, 3) / 2);
    out.push({ name: `${op}_float`, op, attr: { T: T('float32') },
      inputs: [ph('float32', s, u.vals(u.n(s), sp), 'a'), ph('float32', t, u.vals(u.n(t), sp), 'b')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: `${op}_int`, op, attr: { T: T('int32') },
      inputs: [ph('int32', s, iv(u, s, -3, 3), 'a'), ph('int32', s, iv(u, s, -3, 3), 'b')] });
    u = util(rngFor());
    out.push({ name: `${op}_scalar`, op, attr: { T: T('int32') },
      inputs: [ph('int32', [30], iv(u, [30], -5, 5), 'a'), cst('int32', [], [1], 'b')] });
  }
  for (const op of ['NotEqual', 'Greater', 'LessEqual']) {
    const u = util(rngFor());
    out.push({ name: `${op}_bool`, op, attr: { T: T('bool') },
      inputs: [ph('bool', [5, 6], bv(u, [5, 6]), 'a'), ph('bool', [6], bv(u, [6]), 'b')] });
  }

  // ---- LogicalAnd, LogicalOr (broadcasting), LogicalNot
  for (const op of ['LogicalAnd', 'LogicalOr']) {
    let u = util(rngFor());
    let s = u.shape();
    out.push({ name: `${op}_0`, op, attr: {}, inputs: [ph('bool', s, bv(u, s), 'a'), ph('bool', s, bv(u, s), 'b')] });
    u = util(rngFor());
    s = [4, 5, 3];
    out.push({ name: `${op}_bcast`, op, attr: {}, inputs: [ph('bool', s, bv(u, s), 'a'), ph('bool', [5, 1], bv(u, [5, 1]), 'b')] });
  }
  for (let k = 0; k < 2; k++) {
    const u = util(rngFor());
    const s = u.shape();
    out.push({ name: `LogicalNot_${k}`, op: 'LogicalNot', attr: {}, inputs: [ph('bool', s, bv(u, s), 'x')] });
  }

  // ---- Select, SelectV2: tfjs runs both as where(), which broadcasts all
  // three from the right (so Select's rank-1 condition matches the last axis)
  const sel = [
    { c: [4, 6], a: [4, 6], b: [4, 6], dt: 'float32' },
    { c: [3, 5, 2], a: [3, 5, 2], b: [3, 5, 2], dt: 'int32' },
    { c: [7], a: [5, 7], b: [5, 7], dt: 'float32' },
    { c: [], a: [4, 8], b: [4, 8], dt: 'float32' },
    { c: [3, 1, 4], a: [1, 5, 4], b: [5, 1], dt: 'float32', v2: 1 },
    { c: [6, 5], a: [], b: [6, 5], dt: 'int32', v2: 1 },
    { c: [2, 3, 4], a: [4], b: [3, 1], dt: 'bool', v2: 1 },
  ];
  for (const op of ['Select', 'SelectV2']) {
    sel.forEach((k, i) => {
      if (op === 'Select' && k.v2) return;
      const u = util(rngFor());
      const val = (s) => (k.dt === 'bool' ? bv(u, s) : k.dt === 'int32' ? iv(u, s, -50, 50) : fv(u, s, -5, 5));
      out.push({ name: `${op}_${i}`, op, tol: 0, attr: { T: T(k.dt) },
        inputs: [(k.c.length ? ph : cst)('bool', k.c, bv(u, k.c), 'condition'), ph(k.dt, k.a, val(k.a), 'a'), ph(k.dt, k.b, val(k.b), 'b')] });
    });
  }

  // ---- Softmax, LogSoftmax: rank 1..4 along the last axis; large logits
  // (overflow without the max shift), -Inf entries, a row of one
  for (const op of ['Softmax', 'LogSoftmax']) {
    for (let k = 0; k < 3; k++) {
      const u = util(rngFor());
      const s = u.shape();
      out.push({ name: `${op}_${k}`, op, tol: 1e-5, attr: { T: T('float32') }, inputs: [ph('float32', s, fv(u, s, -10, 10), 'logits')] });
    }
    let u = util(rngFor());
    out.push({ name: `${op}_large`, op, tol: 1e-5, attr: { T: T('float32') },
      inputs: [ph('float32', [4, 9], u.vals(36, (_, i) => (i % 5 === 0 ? -Infinity : u.uni(80, 120) * (i % 2 ? 1 : -1))), 'logits')] });
    // a row of -Inf only (NaN), rows with +Inf (NaN), and mixes
    u = util(rngFor());
    out.push({ name: `${op}_inf`, op, tol: 1e-5, attr: { T: T('float32') },
      inputs: [ph('float32', [4, 6], [-Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity,
        1, Infinity, 2, 3, -Infinity, 0, -Infinity, 5, -Infinity, 5, -Infinity, 4, ...fv(u, [6], -3, 3)], 'logits')] });
    u = util(rngFor());
    out.push({ name: `${op}_row1`, op, tol: 1e-5, attr: { T: T('float32') }, inputs: [ph('float32', [20, 1], fv(u, [20, 1], -5, 5), 'logits')] });
    u = util(rngFor());
    out.push({ name: `${op}_wide`, op, tol: 1e-5, attr: { T: T('float32') }, inputs: [ph('float32', [3, 700], fv(u, [3, 700], -8, 8), 'logits')] });
  }

  // ---- Max, Min, Sum, Mean, Prod, All, Any: one and several axes, negative
  // axes, keep_dims, a scalar axis, every axis; int32 (Mean of int32 is
  // float32 in tfjs); NaN in Max / Min
  const red = [
    { s: [4, 5, 6], ax: [1], kd: 0 },
    { s: [4, 5, 6], ax: [-1], kd: 1 },
    { s: [3, 4, 5, 2], ax: [0, 2], kd: 0 },
    { s: [3, 4, 5, 2], ax: [-3, 3], kd: 1 },
    { s: [40], ax: [0], kd: 0 },
    { s: [6, 7], ax: 1, kd: 0 }, // a scalar axis
    { s: [2, 3, 4], ax: [0, 1, 2], kd: 1 },
    { s: [5, 9], ax: [0], kd: 0 },
    { s: [8, 300], ax: [1], kd: 0 },
  ];
  for (const op of ['Max', 'Min', 'Sum', 'Mean', 'Prod', 'All', 'Any']) {
    const isBool = op === 'All' || op === 'Any';
    red.forEach((r, i) => {
      if (op === 'Prod' && i === 8) return; // a product of 300 overflows
      const u = util(rngFor());
      const dt = isBool ? 'bool' : i % 3 === 2 ? 'int32' : 'float32';
      let x;
      if (isBool) x = u.vals(u.n(r.s), () => (u.int(0, 3) ? 1 : 0)); // mostly true: some rows all true
      else if (dt === 'int32') x = iv(u, r.s, op === 'Prod' ? -3 : -50, op === 'Prod' ? 3 : 50);
      else x = op === 'Prod' ? fv(u, r.s, -1.5, 1.5) : fv(u, r.s, -5, 5);
      const axis = Array.isArray(r.ax) ? cst('int32', [r.ax.length], r.ax, 'axis') : cst('int32', [], [r.ax], 'axis');
      const attr = { T: T(dt), Tidx: T('int32'), keep_dims: B(!!r.kd) };
      out.push({ name: `${op}_${i}`, op, tol: 0, attr,
        inputs: [ph(dt, r.s, x, 'x'), axis] });
    });
  }
  // an empty axis list (nothing reduced) and a reduced axis of size 0 (tfjs:
  // Sum and Mean 0, Prod 1; Max, Min, All and Any start from the row's first
  // element, undefined there: NaN, and false for All as for Any)
  for (const op of ['Max', 'Min', 'Sum', 'Mean', 'Prod', 'All', 'Any']) {
    const dt = op === 'All' || op === 'Any' ? 'bool' : 'float32';
    let u = util(rngFor());
    out.push({ name: `${op}_noaxis`, op, tol: 0, attr: { T: T(dt), Tidx: T('int32'), keep_dims: B(false) },
      inputs: [ph(dt, [4, 6], dt === 'bool' ? bv(u, [4, 6]) : fv(u, [4, 6], -5, 5), 'x'), cst('int32', [0], [], 'axis')] });
    u = util(rngFor());
    out.push({ name: `${op}_empty`, op, tol: 0, attr: { T: T(dt), Tidx: T('int32'), keep_dims: B(true) },
      inputs: [ph(dt, [5, 0, 3], [], 'x'), cst('int32', [1], [1], 'axis')] });
  }
  // int32 past 2^31: tfjs sums / multiplies in float64 and stores the result
  // in an Int32Array (wrapping); Mean of large int32s: each cast to float32
  // and divided by n, then summed. tfjs sums that in float64, streaminfer in
  // float32 (not bitwise: 1 ulp here), hence the float tolerance of the Means
  {
    let u = util(rngFor());
    out.push({ name: 'Prod_int_wrap', op: 'Prod', tol: 0, attr: { T: T('int32'), Tidx: T('int32'), keep_dims: B(false) },
      inputs: [ph('int32', [4, 12], iv(u, [4, 12], -9, 9).map((v) => v || 7), 'x'), cst('int32', [1], [1], 'axis')] });
    u = util(rngFor());
    out.push({ name: 'Sum_int_wrap', op: 'Sum', tol: 0, attr: { T: T('int32'), Tidx: T('int32'), keep_dims: B(false) },
      inputs: [ph('int32', [5, 8], iv(u, [5, 8], 1500000000, 2147483647), 'x'), cst('int32', [1], [1], 'axis')] });
    u = util(rngFor());
    out.push({ name: 'Mean_int_large', op: 'Mean', tol: 0, attr: { T: T('int32'), Tidx: T('int32'), keep_dims: B(true) },
      inputs: [ph('int32', [3, 20], iv(u, [3, 20], 10000000, 99999999), 'x'), cst('int32', [1], [-1], 'axis')] });
  }
  // Sum and Prod of bool: int32 in tfjs
  for (const op of ['Sum', 'Prod']) {
    const u = util(rngFor());
    out.push({ name: `${op}_bool`, op, tol: 0, attr: { T: T('bool'), Tidx: T('int32'), keep_dims: B(false) },
      inputs: [ph('bool', [5, 9], u.vals(45, () => (u.int(0, 4) ? 1 : 0)), 'x'), cst('int32', [1], [1], 'axis')] });
  }
  for (const op of ['Max', 'Min', 'Sum']) {
    const u = util(rngFor());
    const s = [6, 8];
    const x = u.vals(48, (_, i) => (i % 11 === 0 ? SPECIAL[u.int(0, 2)] : u.uni(-5, 5)));
    out.push({ name: `${op}_specials`, op, tol: 0, attr: { T: T('float32'), keep_dims: B(false) },
      inputs: [ph('float32', s, x, 'x'), cst('int32', [1], [1], 'axis')] });
  }

  // ---- ArgMax, ArgMin: scalar axis, negative, ties (the first index), int32
  [[[5, 8], 1, 'float32'], [[5, 8], 0, 'float32'], [[3, 4, 6], -1, 'int32'], [[3, 4, 6], 1, 'float32'], [[60], 0, 'int32'],
    [[2, 3, 4, 5], -3, 'float32']].forEach(([s, ax, dt], i) => {
    for (const op of ['ArgMax', 'ArgMin']) {
      const u = util(rngFor());
      const x = dt === 'int32' ? iv(u, s, -4, 4) : u.vals(u.n(s), () => u.int(-6, 6) / 2);
      out.push({ name: `${op}_${i}`, op, tol: 0, attr: { T: T(dt), Tidx: T('int32'), output_type: T('int32') },
        inputs: [ph(dt, s, x, 'x'), cst('int32', [], [ax], 'dimension')] });
    }
  });

  // NaN never wins (value > max fails), unless it comes first; +-Inf
  for (const op of ['ArgMax', 'ArgMin']) {
    const x = [NaN, 1, 2, 0, 3, 1, NaN, 5, -Infinity, 2, Infinity, NaN, NaN, NaN, NaN, NaN, 1, 2, -1, -1, -Infinity, -Infinity, 0, -Infinity];
    out.push({ name: `${op}_nan`, op, tol: 0, attr: { T: T('float32'), Tidx: T('int32'), output_type: T('int32') },
      inputs: [ph('float32', [4, 6], x, 'x'), cst('int32', [], [1], 'dimension')] });
  }
  // an empty axis: tfjs's argmax of no elements is index 0
  for (const op of ['ArgMax', 'ArgMin']) {
    out.push({ name: `${op}_empty`, op, tol: 0, attr: { T: T('float32'), Tidx: T('int32'), output_type: T('int32') },
      inputs: [ph('float32', [4, 0, 6], [], 'x'), cst('int32', [], [1], 'dimension')] });
  }

  // ---- Cast: float -> int32 (toward zero, NaN and Inf to 0, past int32's
  // range wraps as Int32Array does), float -> bool (NaN is true), int32 and
  // bool -> float, int32 <-> bool
  {
    const edge = [1.5, -1.5, 2.9, -2.9, 0.49, -0.49, 0, -0, NaN, Infinity, -Infinity, 2147483520, -2147483648, 3e9, -3e9, 1e-30, 7, -7, 16777216, 123.999];
    out.push({ name: 'Cast_float_int_edges', op: 'Cast', tol: 0, attr: { SrcT: T('float32'), DstT: T('int32'), Truncate: B(false) },
      inputs: [ph('float32', [edge.length], edge, 'x')] });
    out.push({ name: 'Cast_float_bool_edges', op: 'Cast', tol: 0, attr: { SrcT: T('float32'), DstT: T('bool') },
      inputs: [ph('float32', [edge.length], edge, 'x')] });
    let u = util(rngFor());
    let s = u.shape();
    out.push({ name: 'Cast_float_int', op: 'Cast', tol: 0, attr: { SrcT: T('float32'), DstT: T('int32') }, inputs: [ph('float32', s, fv(u, s, -100, 100), 'x')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Cast_int_float', op: 'Cast', tol: 0, attr: { SrcT: T('int32'), DstT: T('float32') },
      inputs: [ph('int32', s, u.vals(u.n(s), () => u.int(-20000000, 20000000)), 'x')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Cast_int_bool', op: 'Cast', tol: 0, attr: { SrcT: T('int32'), DstT: T('bool') }, inputs: [ph('int32', s, iv(u, s, -2, 2), 'x')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Cast_bool_float', op: 'Cast', tol: 0, attr: { SrcT: T('bool'), DstT: T('float32') }, inputs: [ph('bool', s, bv(u, s), 'x')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Cast_bool_int', op: 'Cast', tol: 0, attr: { SrcT: T('bool'), DstT: T('int32') }, inputs: [ph('bool', s, bv(u, s), 'x')] });
    u = util(rngFor());
    s = u.shape();
    out.push({ name: 'Cast_float_float', op: 'Cast', tol: 0, attr: { SrcT: T('float32'), DstT: T('float32') }, inputs: [ph('float32', s, fv(u, s, -9, 9), 'x')] });
  }
  // ---- larger inputs, so that the step splits under test_ops's budget (3/4
  // of the largest step) where its kind tiles: no input alone may be past that
  // budget (a model input is uploaded whole), so reductions run over few
  // rows, pools at stride 1 and resizes upsample; windowed kinds split batch 1
  {
    const big = (name, op, attr, inputs, tol) => out.push({ name: `${op}_tiled${name}`, op, attr, inputs, ...(tol != null ? { tol } : {}) });
    let u = util(rngFor());
    let s = [1, 40, 32, 8];
    for (const op of ['AvgPool', 'MaxPool']) {
      big('', op, { T: T('float32'), ksize: IL([1, 3, 3, 1]), strides: IL([1, 1, 1, 1]), padding: S('SAME'), data_format: S('NHWC') },
        [ph('float32', s, fv(u, s, -5, 5), 'x')], 0);
    }
    for (const op of ['Max', 'Min', 'Sum', 'Mean', 'Prod', 'ArgMax', 'ArgMin']) {
      u = util(rngFor());
      s = [400, 2, 30];
      const x = op === 'Prod' ? fv(u, s, 0.8, 1.25) : fv(u, s, -5, 5);
      const arg = op.startsWith('Arg');
      big('', op, arg ? { T: T('float32'), Tidx: T('int32'), output_type: T('int32') } : { T: T('float32'), Tidx: T('int32'), keep_dims: B(false) },
        [ph('float32', s, x, 'x'), arg ? cst('int32', [], [1], 'axis') : cst('int32', [1], [1], 'axis')], arg ? 0 : 1e-5);
    }
    for (const op of ['All', 'Any']) {
      u = util(rngFor());
      s = [400, 30, 2];
      big('', op, { Tidx: T('int32'), keep_dims: B(true) }, [ph('bool', s, u.vals(u.n(s), () => (u.int(0, 3) ? (op === 'All' ? 1 : 0) : (op === 'All' ? 0 : 1))), 'x'), cst('int32', [1], [-1], 'axis')]);
    }
    for (const op of ['ResizeBilinear', 'ResizeNearestNeighbor']) {
      u = util(rngFor());
      s = [1, 24, 20, 4];
      big('', op, { T: T('float32'), align_corners: B(false), half_pixel_centers: B(true) },
        [ph('float32', s, fv(u, s, -5, 5), 'images'), cst('int32', [2], [48, 37], 'size')], op === 'ResizeBilinear' ? 1e-4 : 0);
    }
    for (const op of ['Select', 'SelectV2']) {
      u = util(rngFor());
      s = [96, 100];
      big('', op, { T: T('float32') }, [ph('bool', [100], bv(u, [100]), 'condition'), ph('float32', s, fv(u, s, -5, 5), 'a'), ph('float32', s, fv(u, s, -5, 5), 'b')], 0);
    }
    for (const op of ['Div', 'DivNoNan', 'NotEqual', 'Greater', 'LessEqual']) {
      u = util(rngFor());
      s = [80, 120];
      big('', op, { T: T('float32') }, [ph('float32', s, u.vals(u.n(s), () => u.int(-8, 8) / 2), 'a'), ph('float32', [120], u.vals(120, () => u.int(-8, 8) / 2), 'b')]);
    }
    u = util(rngFor());
    s = [80, 120];
    big('', 'Mod', { T: T('float32') }, [ph('float32', s, fv(u, s, -20, 20), 'a'), ph('float32', [120], u.vals(120, () => u.uni(0.5, 6) * (u.int(0, 1) ? 1 : -1)), 'b')], 0);
    u = util(rngFor());
    big('', 'Prelu', { T: T('float32') }, [ph('float32', s, fv(u, s, -5, 5), 'x'), cst('float32', [120], fv(u, [120], -0.5, 1.5), 'alpha')]);
    for (const op of ['LogicalAnd', 'LogicalOr']) {
      u = util(rngFor());
      s = [80, 120];
      big('', op, {}, [ph('bool', s, bv(u, s), 'a'), ph('bool', [80, 1], bv(u, [80, 1]), 'b')]);
    }
    u = util(rngFor());
    s = [100, 120];
    big('', 'LogicalNot', {}, [ph('bool', s, bv(u, s), 'x')]);
    big('', 'Cast', { SrcT: T('float32'), DstT: T('int32') }, [ph('float32', s, fv(u, s, -1e4, 1e4), 'x')], 0);
    u = util(rngFor());
    s = [1, 32, 32, 8];
    big('', '_FusedConv2D', convAttr({ st: [1, 1], dl: [1, 1], pad: 'SAME' }, { fused_ops: SL(['BiasAdd', 'Relu']), num_args: I(1) }),
      [ph('float32', s, fv(u, s, -2, 2), 'x'), cst('float32', [3, 3, 8, 16], fv(u, [3, 3, 8, 16], -1, 1), 'filter'), cst('float32', [16], fv(u, [16], -1, 1), 'bias')]);
    u = util(rngFor());
    big('', 'FusedDepthwiseConv2dNative', convAttr({ st: [1, 1], dl: [1, 1], pad: 'SAME' }, { fused_ops: SL(['BiasAdd', 'Relu6']), num_args: I(1) }),
      [ph('float32', s, fv(u, s, -4, 4), 'x'), cst('float32', [3, 3, 8, 2], fv(u, [3, 3, 8, 2], -1, 1), 'filter'), cst('float32', [16], fv(u, [16], -1, 1), 'bias')]);
    u = util(rngFor());
    big('', 'Conv2DBackpropInput', { T: T('float32'), strides: IL([1, 2, 2, 1]), padding: S('SAME'), data_format: S('NHWC') },
      [cst('int32', [4], [1, 32, 32, 8], 'input_sizes'), cst('float32', [3, 3, 8, 16], fv(u, [3, 3, 8, 16], -1, 1), 'filter'), ph('float32', [1, 16, 16, 16], fv(u, [1, 16, 16, 16], -2, 2), 'out_backprop')]);
    u = util(rngFor());
    big('', '_FusedMatMul', { T: T('float32'), transpose_a: B(false), transpose_b: B(true), fused_ops: SL(['BiasAdd', 'Sigmoid']), num_args: I(1) },
      [ph('float32', [96, 64], fv(u, [96, 64], -1, 1), 'a'), cst('float32', [80, 64], fv(u, [80, 64], -1, 1), 'b'), cst('float32', [80], fv(u, [80], -1, 1), 'bias')]);
    for (const op of ['BatchMatMul', 'BatchMatMulV2']) { // the row rule splits a batch of one
      u = util(rngFor());
      big('', op, { T: T('float32'), adj_x: B(false), adj_y: B(false) },
        [ph('float32', [1, 96, 8], fv(u, [1, 96, 8], -1, 1), 'x'), ph('float32', [1, 8, 120], fv(u, [1, 8, 120], -1, 1), 'y')]);
    }
  }
  return out;
}

module.exports = { casesACases };
