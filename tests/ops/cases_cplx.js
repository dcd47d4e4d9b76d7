// Per-op cases of Complex, Real, Imag, ComplexAbs, FFT, IFFT, RFFT and IRFFT,
// and of Add, AddV2, Sub, Mul on complex values (tests/ops/gen.js; cases.js
// appends them). complex64 lives only inside the
// host interpreter, so every graph starts from float32 Placeholders
// (Complex(re, im)) and ends in float32 outputs (Real and Imag of a complex
// result). Sizes are powers of two (tfjs's radix-2 path) and not (its DFT
// sum), with batch dimensions, length 1 and 2, empty batches, NaN and Inf.
//
// Tolerances: Complex, Real, Imag copy values, ComplexAbs is V8's
// Math.hypot replicated step by step, and the binary ops are one float32
// add or a double product rounded once: exact (tol 0). The transforms follow
// tfjs's arithmetic order (float32 butterflies with float32-rounded
// twiddles; double sums of the DFT), but their twiddles and DFT terms come
// from cos/sin, which are V8's fdlibm in tfjs and glibc's libm here: the two
// may differ in the last bit of a double, which can move a float32 result by
// one ulp and, through the later stages, a few ulps of the row's magnitude.
// On this machine every case is bitwise tfjs's (they pass at tol 0); tol 1e-6
// (|out - ref| <= 1e-6 * max(1, |ref|), about 8 float32 ulps at 1) leaves
// room for such a last-bit difference only: one ulp more in every twiddle
// already fails FFT cases, and an index or sign slip is off by O(1).
'use strict';

const CT = { type: 'DT_COMPLEX64' };

function cplxCases(rngFor, util, { T }) {
  const out = [];
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const node = (name, op, input, attr = {}) => ({ name, op, input, attr });
  const SPECIAL = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 3.4e38, -3.4e38, 1e-38, 1e-45];
  const values = (u, n, special) => u.vals(n, () => (special && u.int(0, 3) === 0
    ? SPECIAL[u.int(0, SPECIAL.length - 1)] : u.uni(-4, 4)));
  // re, im Placeholders and c = Complex(re, im)
  const complexIn = (u, shape, special) => ({
    inputs: [ph('float32', shape, values(u, u.n(shape), special), 're'),
      ph('float32', shape, values(u, u.n(shape), special), 'im')],
    nodes: [node('c', 'Complex', ['re', 'im'], { T: T('float32'), Tout: CT })],
  });
  // a complex result read back as its parts (outputs 'real', 'imag')
  const parts = [node('real', 'Real', ['out0'], { T: CT, Tout: T('float32') }),
    node('imag', 'Imag', ['out0'], { T: CT, Tout: T('float32') })];

  // ---- Complex, Real, Imag, ComplexAbs
  [[40], [3, 7], [2, 3, 5], [1]].forEach((shape, k) => {
    const u = util(rngFor());
    const ins = complexIn(u, shape, k !== 0);
    out.push({ name: `Complex_${k}`, op: 'Complex', tol: 0, attr: { T: T('float32'), Tout: CT },
      inputs: ins.inputs, after: parts });
    for (const op of ['Real', 'Imag', 'ComplexAbs']) {
      out.push({ name: `${op}_${k}`, op, tol: 0, attr: { T: CT, Tout: T('float32') },
        inputs: ins.inputs, nodes: ins.nodes, opInputs: ['c'] });
    }
  });
  // ComplexAbs's edges: overflow of the square (3.4e38), denormals, NaN with
  // Inf (hypot gives Inf), signed zeros
  {
    const re = [3, 3.4e38, 3.4e38, 1e-45, 3e-45, NaN, NaN, Infinity, -Infinity, 0, -0, -5, 1e-20, 1e20];
    const im = [4, 3.4e38, 1, 1e-45, 4e-45, Infinity, 1, NaN, 0, -0, -0, 12, 1e-20, 1];
    out.push({ name: 'ComplexAbs_edges', op: 'ComplexAbs', tol: 0, attr: { T: CT, Tout: T('float32') },
      inputs: [ph('float32', [re.length], re, 're'), ph('float32', [im.length], im, 'im')],
      nodes: [node('c', 'Complex', ['re', 'im'], { T: T('float32'), Tout: CT })], opInputs: ['c'] });
  }
  // tfjs's converter maps ComplexAbs to tf.abs: on a float32 input, Abs
  {
    const u = util(rngFor());
    out.push({ name: 'ComplexAbs_float', op: 'ComplexAbs', tol: 0, attr: { T: T('float32') },
      inputs: [ph('float32', [5, 6], values(u, 30, true), 'x')] });
  }
  // Complex feeding two consumers, and Real of Identity of Complex
  {
    const u = util(rngFor());
    const ins = complexIn(u, [4, 9], false);
    out.push({ name: 'Real_identity', op: 'Real', tol: 0, attr: { T: CT, Tout: T('float32') },
      inputs: ins.inputs, nodes: [...ins.nodes, node('id', 'Identity', ['c'], { T: CT })], opInputs: ['id'],
      after: [node('abs', 'ComplexAbs', ['c'], { T: CT, Tout: T('float32') })] });
  }

  // ---- FFT, IFFT: powers of two and not, batch dimensions, edge values
  const fftShapes = [[1], [2], [8], [64], [3, 16], [2, 2, 32], [2, 2, 2, 4], [256],
    [3], [5], [6], [2, 7], [3, 12], [17], [100], [2, 1, 3, 9], [0, 4], [5, 1]];
  for (const op of ['FFT', 'IFFT']) {
    fftShapes.forEach((shape, k) => {
      const u = util(rngFor());
      const ins = complexIn(u, shape, false);
      out.push({ name: `${op}_${k}`, op, tol: 1e-6, attr: { Tcomplex: CT },
        inputs: ins.inputs, nodes: ins.nodes, opInputs: ['c'], after: parts });
    });
    // NaN and Inf spread through the butterflies (radix-2) and the sums (DFT)
    [[4, 8], [3, 6]].forEach((shape, k) => {
      const u = util(rngFor());
      const ins = complexIn(u, shape, true);
      out.push({ name: `${op}_special_${k}`, op, tol: 1e-6, attr: { Tcomplex: CT },
        inputs: ins.inputs, nodes: ins.nodes, opInputs: ['c'], after: parts });
    });
  }
  // IFFT(FFT(x)): the round trip, both paths
  [[4, 16], [3, 10]].forEach((shape, k) => {
    const u = util(rngFor());
    const ins = complexIn(u, shape, false);
    out.push({ name: `IFFT_of_FFT_${k}`, op: 'IFFT', tol: 1e-6, attr: { Tcomplex: CT },
      inputs: ins.inputs, nodes: [...ins.nodes, node('f', 'FFT', ['c'], { Tcomplex: CT })],
      opInputs: ['f'], after: parts });
  });

  // ---- RFFT: tfjs's converter passes no fft_length (its input is
  // notSupported), so tf.rfft takes the innermost dimension whatever the
  // input says; the cases give lengths that differ from it
  [[[1], 1], [[2], 2], [[8], 8], [[4, 16], 8], [[3, 5], 5], [[2, 3, 6], 12], [[7], 4], [[2, 2, 2, 9], 9],
    [[0, 3], 3], [[64], 64], [[100], 100]].forEach(([shape, len], k) => {
    const u = util(rngFor());
    const x = values(u, u.n(shape), k === 4);
    out.push({ name: `RFFT_${k}`, op: 'RFFT', tol: 1e-6, attr: { Treal: T('float32'), Tcomplex: CT },
      inputs: [ph('float32', shape, x, 'x'), cst('int32', [1], [len], 'fft_length')], after: parts });
  });

  // ---- IRFFT: rows of n complete to 2(n-1) (n <= 2 taken as they are);
  // tfjs's result is 2-D [batch, width] except for a rank-3 input with a
  // first dimension (rank 1 gives [1, width], rank 4 [batch, width]); its
  // fft_length is not read either (the last two ask for odd widths)
  [[[1], 1], [[2], 2], [[3], 4], [[5], 8], [[4], 6], [[2, 9], 16], [[3, 10], 18], [[2, 3, 5], 8],
    [[2, 2, 4], 6], [[2, 1, 2, 3], 4], [[0, 2, 3], 4], [[4, 2], 2], [[2, 17], 32], [[3], 5],
    [[2, 6], 11]].forEach(([shape, len], k) => {
    const u = util(rngFor());
    const ins = complexIn(u, shape, k === 6);
    out.push({ name: `IRFFT_${k}`, op: 'IRFFT', tol: 1e-6, attr: { Treal: T('float32'), Tcomplex: CT },
      inputs: [...ins.inputs, cst('int32', [1], [len], 'fft_length')], nodes: ins.nodes,
      opInputs: ['c', 'fft_length'] });
  });
  // IRFFT(RFFT(x)) gives x back (even lengths)
  [[3, 8], [2, 6]].forEach((shape, k) => {
    const u = util(rngFor());
    const n = shape[shape.length - 1];
    out.push({ name: `IRFFT_of_RFFT_${k}`, op: 'IRFFT', tol: 1e-6, attr: { Treal: T('float32'), Tcomplex: CT },
      inputs: [ph('float32', shape, values(u, u.n(shape), false), 'x'), cst('int32', [1], [n], 'fft_length')],
      nodes: [node('r', 'RFFT', ['x', 'fft_length'], { Treal: T('float32'), Tcomplex: CT })],
      opInputs: ['r', 'fft_length'] });
  });

  // ---- Add, AddV2, Sub, Mul on complex values (tfjs's complex kernels, numpy
  // broadcasting; a float32 operand is cast to complex64 with +0 imaginary
  // parts): a frequency-domain filter IRFFT(RFFT(x) * H), and mixed operands.
  // tfjs reads past its operand where neither has a dimension of 1 to widen
  // (H [5] against [3,5]): NaN in every other row, here too (interp_cplx.c);
  // H [1,5] takes its other path
  [[1, 5], [5]].forEach((hs, k) => {
    const u = util(rngFor());
    const shape = [3, 8];
    out.push({ name: `Mul_complex_filter_${k}`, op: 'Mul', tol: 1e-6, attr: { T: CT },
      inputs: [ph('float32', shape, values(u, 24, false), 'x'), cst('int32', [1], [8], 'fft_length'),
        ph('float32', hs, values(u, 5, false), 'hr'), ph('float32', hs, values(u, 5, false), 'hi')],
      nodes: [node('r', 'RFFT', ['x', 'fft_length'], { Treal: T('float32'), Tcomplex: CT }),
        node('h', 'Complex', ['hr', 'hi'], { T: T('float32'), Tout: CT })],
      opInputs: ['r', 'h'],
      after: [node('y', 'IRFFT', ['out0', 'fft_length'], { Treal: T('float32'), Tcomplex: CT })] });
  });
  const pair = (u, sa, sb, special) => {
    const a = complexIn(u, sa, special);
    const b = complexIn(u, sb, special);
    return {
      inputs: [...a.inputs, { ...b.inputs[0], name: 're2' }, { ...b.inputs[1], name: 'im2' }],
      nodes: [...a.nodes, node('c2', 'Complex', ['re2', 'im2'], { T: T('float32'), Tout: CT })],
    };
  };
  [['Add', [2, 1, 6], [3, 1], false], ['AddV2', [4, 5], [4, 5], true], ['Sub', [7], [3, 7], false],
    ['Mul', [2, 3, 4], [4], true]].forEach(([op, sa, sb, special]) => {
    const u = util(rngFor());
    const p = pair(u, sa, sb, special);
    out.push({ name: `${op}_complex`, op, tol: 0, attr: { T: CT }, inputs: p.inputs, nodes: p.nodes,
      opInputs: ['c', 'c2'], after: parts });
  });
  // a float32 operand on either side
  [['Mul', 'f', 'c', [1, 6]], ['Sub', 'c', 'f', [6]], ['AddV2', 'f', 'c', [3, 6]]].forEach(([op, x, y, fs]) => {
    const u = util(rngFor());
    const ins = complexIn(u, [3, 6], false);
    out.push({ name: `${op}_complex_float`, op, tol: 0, attr: { T: CT },
      inputs: [...ins.inputs, ph('float32', fs, values(u, u.n(fs), true), 'f')], nodes: ins.nodes,
      opInputs: [x, y], after: parts });
  });

  // ---- GPU steps before and after: Relu on the GPU, RFFT and ComplexAbs in
  // the interpreter, Sqrt in a later GPU stage (a magnitude spectrogram)
  {
    const u = util(rngFor());
    const shape = [6, 64];
    out.push({ name: 'ComplexAbs_spectrogram', op: 'ComplexAbs', tol: 1e-6, attr: { T: CT, Tout: T('float32') },
      inputs: [ph('float32', shape, values(u, u.n(shape), false), 'x'), cst('int32', [1], [64], 'fft_length')],
      nodes: [node('pre', 'Relu', ['x'], { T: T('float32') }),
        node('r', 'RFFT', ['pre', 'fft_length'], { Treal: T('float32'), Tcomplex: CT })],
      opInputs: ['r'],
      after: [node('post', 'Sqrt', ['out0'], { T: T('float32') })] });
  }

  // ---- Cast to complex64 (+0 imaginary parts; int32 through float32) and
  // from it (the real part, cast as a float32 is: int32 as Int32Array.from,
  // bool as != 0). The int32 case leaves out Inf and values past int32's
  // range: the op table's float32 Cast clamps those where tfjs wraps them
  // (op_elementwise.c f2i, a known difference of its own)
  for (const [k, dt] of [[0, 'float32'], [1, 'int32']]) {
    const u = util(rngFor());
    const x = dt === 'int32' ? u.vals(24, () => u.int(-100, 100)) : values(u, 24, true);
    out.push({ name: `Cast_to_complex_${k}`, op: 'Cast', tol: 1e-6, attr: { SrcT: T(dt), DstT: CT },
      inputs: [ph(dt, [3, 8], x, 'x')],
      after: [node('f', 'FFT', ['out0'], { Tcomplex: CT }), node('real', 'Real', ['f'], { T: CT, Tout: T('float32') }),
        node('imag', 'Imag', ['f'], { T: CT, Tout: T('float32') })] });
  }
  for (const dt of ['float32', 'int32', 'bool']) {
    const u = util(rngFor());
    const ins = complexIn(u, [4, 7], true);
    if (dt === 'int32') {
      const inRange = (v) => (Number.isNaN(v) || Math.abs(v) < 2147483520 ? v : 0.5);
      ins.inputs = ins.inputs.map((i) => ({ ...i, values: i.values.map(inRange) }));
    }
    out.push({ name: `Cast_from_complex_${dt}`, op: 'Cast', tol: 0, attr: { SrcT: CT, DstT: T(dt) },
      inputs: ins.inputs, nodes: ins.nodes, opInputs: ['c'] });
  }
  // ---- the value-moving ops tfjs runs on complex tensors
  {
    const u = util(rngFor());
    const ins = complexIn(u, [2, 12], true);
    out.push({ name: 'Reshape_complex', op: 'Reshape', tol: 0, attr: { T: CT, Tshape: T('int32') },
      inputs: [...ins.inputs, cst('int32', [3], [-1, 4, 3], 'shape')], nodes: ins.nodes, opInputs: ['c', 'shape'],
      after: parts });
    out.push({ name: 'ExpandDims_complex', op: 'ExpandDims', tol: 0, attr: { T: CT, Tdim: T('int32') },
      inputs: [...ins.inputs, cst('int32', [], [-2], 'axis')], nodes: ins.nodes, opInputs: ['c', 'axis'],
      after: parts });
  }
  {
    const u = util(rngFor());
    const ins = complexIn(u, [3, 1, 5], false);
    out.push({ name: 'Squeeze_complex', op: 'Squeeze', tol: 0, attr: { T: CT, squeeze_dims: { list: { i: ['1'] } } },
      inputs: ins.inputs, nodes: ins.nodes, opInputs: ['c'], after: parts });
  }
  {
    const u = util(rngFor());
    const p = pair(u, [2, 3, 4], [2, 5, 4], true);
    out.push({ name: 'ConcatV2_complex', op: 'ConcatV2', tol: 0, attr: { T: CT, N: { i: '2' }, Tidx: T('int32') },
      inputs: [...p.inputs, cst('int32', [], [1], 'axis')], nodes: p.nodes, opInputs: ['c', 'c2', 'axis'],
      after: parts });
    const q = pair(u, [3, 4], [3, 4], false);
    out.push({ name: 'Pack_complex', op: 'Pack', tol: 0, attr: { T: CT, N: { i: '2' }, axis: { i: '1' } },
      inputs: q.inputs, nodes: q.nodes, opInputs: ['c', 'c2'], after: parts });
  }

  // ---- complex values through TF2 control flow: a StatelessWhile carrying
  // one (three FFTs in its body), a StatelessIf choosing FFT or IFFT of one
  const DT = { float32: 'DT_FLOAT', int32: 'DT_INT32', bool: 'DT_BOOL', complex64: 'DT_COMPLEX64' };
  const FN = (name) => ({ func: { name } });
  const fn = (name, ins, outs, nodeDef) => {
    const ret = {};
    for (const [o, , r] of outs) ret[o] = r;
    return {
      signature: { name, inputArg: ins.map(([n, t]) => ({ name: n, type: DT[t] })),
        outputArg: outs.map(([n, t]) => ({ name: n, type: DT[t] })) },
      nodeDef, ret,
    };
  };
  const cnode = (name, dtype) => node(name, 'Const', [], {
    value: { tensor: { dtype: DT[dtype], tensorShape: {} } }, dtype: { type: DT[dtype] },
  });
  {
    const u = util(rngFor());
    const ins = complexIn(u, [2, 8], false);
    out.push({ name: 'StatelessWhile_complex', op: 'StatelessWhile', tol: 1e-6, outputs: 2,
      inputs: [ph('int32', [], [0], 'i'), ...ins.inputs], nodes: ins.nodes, opInputs: ['i', 'c'],
      attr: { cond: FN('cw_cond'), body: FN('cw_body'), T: { list: { type: ['DT_INT32', 'DT_COMPLEX64'] } } },
      fnWeights: [{ name: 'cw_three', dtype: 'int32', shape: [], values: [3] },
        { name: 'cw_one', dtype: 'int32', shape: [], values: [1] }],
      library: { function: [
        fn('cw_cond', [['i', 'int32'], ['x', 'complex64']], [['lt', 'bool', 'lt:z:0']],
          [cnode('cw_three', 'int32'), node('lt', 'Less', ['i', 'cw_three:output:0'], { T: T('int32') })]),
        fn('cw_body', [['i', 'int32'], ['x', 'complex64']], [['i1', 'int32', 'ai:z:0'], ['x1', 'complex64', 'f:output:0']],
          [cnode('cw_one', 'int32'), node('ai', 'AddV2', ['i', 'cw_one:output:0'], { T: T('int32') }),
            node('f', 'FFT', ['x'], { Tcomplex: CT })]),
      ] },
      after: [node('real', 'Real', ['out1'], { T: CT, Tout: T('float32') }),
        node('imag', 'Imag', ['out1'], { T: CT, Tout: T('float32') })] });
  }
  for (const [tag, cv] of [['true', 1], ['false', 0]]) {
    const u = util(rngFor());
    const ins = complexIn(u, [3, 6], false);
    out.push({ name: `StatelessIf_complex_${tag}`, op: 'StatelessIf', tol: 1e-6,
      inputs: [ph('bool', [], [cv], 'p'), ...ins.inputs], nodes: ins.nodes, opInputs: ['p', 'c'],
      attr: { then_branch: FN(`ci${tag}_then`), else_branch: FN(`ci${tag}_else`), Tcond: T('bool') },
      library: { function: [
        fn(`ci${tag}_then`, [['x', 'complex64']], [['o', 'complex64', 'f:output:0']], [node('f', 'FFT', ['x'], { Tcomplex: CT })]),
        fn(`ci${tag}_else`, [['x', 'complex64']], [['o', 'complex64', 'f:output:0']], [node('f', 'IFFT', ['x'], { Tcomplex: CT })]),
      ] },
      after: parts });
  }
  return out;
}

module.exports = { cplxCases };
