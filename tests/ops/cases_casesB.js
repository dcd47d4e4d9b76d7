// Per-op cases of TF1 control flow and the dynamic ops, all run by the host
// interpreter (tests/ops/gen.js; cases.js appends them): while loops in
// tensorflowjs_converter's TF1 form (Enter / Merge / Switch / LoopCond /
// Identity / NextIteration / Exit frames, the loop's Consts with a control
// input from the frame, invariants entered with is_constant), nested too;
// TensorArray handle and flow tensors threaded through loops; TensorList
// graphs; NonMaxSuppressionV2..V5 with score thresholds, ties in IoU and
// score, max_output_size 0, padding and soft-NMS; Where on float, int and
// bool, with NaN, -0, few and no true elements. A case's graph credits the
// other ops in it through `covers` (gen.js checks they are its nodes).
'use strict';

const DT = { float32: 'DT_FLOAT', int32: 'DT_INT32', bool: 'DT_BOOL' };
const b64 = (s) => Buffer.from(s, 'latin1').toString('base64');
const N = (name, op, input, attr = {}) => ({ name, op, input, attr });
const shapeOf = (dims) => (dims == null ? { shape: { unknownRank: true } }
  : { shape: dims.length ? { dim: dims.map((d) => ({ size: String(d) })) } : {} });

function dynamicCases(rngFor, util, { T }) {
  const out = [];
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  // a Const node whose value is in the shard (fnWeights), optionally with a
  // control input (the loop's Consts hang on its Identity)
  const konst = (weights, name, dtype, shape, values, ctrl) => {
    weights.push({ name, dtype, shape, values });
    return N(name, 'Const', ctrl ? [`^${ctrl}`] : [], {
      value: { tensor: { dtype: DT[dtype], tensorShape: shape.length ? shapeOf(shape).shape : {} } },
      dtype: { type: DT[dtype] },
    });
  };

  // A TF1 while loop as tensorflowjs_converter writes it. vars: [{ v, dt, init }]
  // (loop values), invs: [{ v, dt, src }] (entered with is_constant), cond(m)
  // and body(id) get the names of the Merge / Identity of each loop value and
  // entered invariant by its key v, and return { nodes, out } (out: the
  // predicate; for body, the next value of each loop value by v). The Exit of
  // loop value v is `${p}/Exit_${v}`; exitAs renames one (the case's op).
  function tf1Loop(p, vars, invs, cond, body, exitAs = {}) {
    const frame = `${p}/while_context`;
    const enter = (name, src, dt, isConst) => N(name, 'Enter', [src], {
      T: T(dt), frame_name: { s: b64(frame) }, is_constant: { b: isConst }, parallel_iterations: { i: '10' },
    });
    const nodes = [];
    const m = {}; const id = {};
    for (const x of vars) nodes.push(enter(`${p}/Enter_${x.v}`, x.init, x.dt, false));
    for (const x of invs) {
      nodes.push(enter(`${p}/Enter_${x.v}`, x.src, x.dt, true));
      m[x.v] = `${p}/Enter_${x.v}`; id[x.v] = `${p}/Enter_${x.v}`;
    }
    for (const x of vars) {
      nodes.push(N(`${p}/Merge_${x.v}`, 'Merge', [`${p}/Enter_${x.v}`, `${p}/NextIteration_${x.v}`], { T: T(x.dt), N: { i: '2' } }));
      m[x.v] = `${p}/Merge_${x.v}`;
    }
    const c = cond(m);
    nodes.push(...c.nodes, N(`${p}/LoopCond`, 'LoopCond', [c.out]));
    for (const x of vars) {
      nodes.push(N(`${p}/Switch_${x.v}`, 'Switch', [`${p}/Merge_${x.v}`, `${p}/LoopCond`], { T: T(x.dt) }));
      nodes.push(N(`${p}/Identity_${x.v}`, 'Identity', [`${p}/Switch_${x.v}:1`], { T: T(x.dt) }));
      id[x.v] = `${p}/Identity_${x.v}`;
    }
    const b = body(id);
    nodes.push(...b.nodes);
    for (const x of vars) nodes.push(N(`${p}/NextIteration_${x.v}`, 'NextIteration', [b.out[x.v]], { T: T(x.dt) }));
    const exits = {};
    for (const x of vars) {
      exits[x.v] = exitAs[x.v] || `${p}/Exit_${x.v}`;
      if (!exitAs[x.v]) nodes.push(N(exits[x.v], 'Exit', [`${p}/Switch_${x.v}`], { T: T(x.dt) }));
    }
    return { nodes, exits, sw: (v) => `${p}/Switch_${v}` };
  }
  const LOOP_OPS = ['Enter', 'Merge', 'Switch', 'LoopCond', 'NextIteration'];
  // TensorList attrs and 'shape' inputs (an int32 vector; a scalar -1: unknown rank)
  const ED = (dt = 'float32') => ({ element_dtype: T(dt) });
  const shp = (name, dims) => cst('int32', dims == null ? [] : [dims.length], dims == null ? [-1] : dims, name);

  // ---- a counting loop: i += 1 while i < n, x = x*0.5 + 1 alongside; n = 0
  // runs the body never (the Exits take the Enter values)
  for (const n of [6, 0, 1]) {
    const u = util(rngFor());
    const s = u.shape(3, 200);
    const w = [];
    const L = tf1Loop('while', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'x', dt: 'float32', init: 'x' }],
      [{ v: 'n', dt: 'int32', src: 'n' }],
      (m) => ({ nodes: [N('while/Less', 'Less', [m.i, m.n], { T: T('int32') })], out: 'while/Less' }),
      (id) => ({
        nodes: [konst(w, 'while/one', 'int32', [], [1], id.i), konst(w, 'while/half', 'float32', [], [0.5], id.i),
          konst(w, 'while/onef', 'float32', [], [1], id.i),
          N('while/add', 'AddV2', [id.i, 'while/one'], { T: T('int32') }),
          N('while/mul', 'Mul', [id.x, 'while/half'], { T: T('float32') }),
          N('while/add_1', 'AddV2', ['while/mul', 'while/onef'], { T: T('float32') })],
        out: { i: 'while/add', x: 'while/add_1' },
      }), { i: 'op' });
    out.push({
      name: `TF1_while_count_${n}`, op: 'Exit', attr: { T: T('int32') }, tol: 1e-6,
      inputs: [ph('int32', [], [n], 'n'), cst('int32', [], [0], 'i0'), ph('float32', s, u.vals(u.n(s), () => u.uni(-10, 10)), 'x')],
      nodes: L.nodes, opInputs: [L.sw('i')], fnWeights: w, covers: [...LOOP_OPS, 'Identity', 'Less', 'AddV2', 'Mul'],
    });
  }

  // ---- a loop accumulating a tensor: acc += x[i] (rows of an entered x)
  {
    const u = util(rngFor());
    const rows = 5; const cols = u.int(20, 60);
    const w = [];
    const L = tf1Loop('acc', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'a', dt: 'float32', init: 'a0' }],
      [{ v: 'x', dt: 'float32', src: 'x' }, { v: 'n', dt: 'int32', src: 'n' }],
      (m) => ({ nodes: [N('acc/Less', 'Less', [m.i, m.n], { T: T('int32') })], out: 'acc/Less' }),
      (id) => ({
        nodes: [konst(w, 'acc/one', 'int32', [], [1], id.i), konst(w, 'acc/axis', 'int32', [], [0], id.i),
          N('acc/row', 'GatherV2', [id.x, id.i, 'acc/axis'], { Tparams: T('float32'), Tindices: T('int32'), Taxis: T('int32'), batch_dims: { i: '0' } }),
          N('acc/sum', 'AddV2', [id.a, 'acc/row'], { T: T('float32') }),
          N('acc/inc', 'AddV2', [id.i, 'acc/one'], { T: T('int32') })],
        out: { i: 'acc/inc', a: 'acc/sum' },
      }), { a: 'op' });
    out.push({
      name: 'TF1_while_accumulate', op: 'Exit', attr: { T: T('float32') }, tol: 1e-6,
      inputs: [ph('float32', [rows, cols], u.vals(rows * cols, () => u.uni(-4, 4)), 'x'), cst('int32', [], [rows], 'n'),
        cst('int32', [], [0], 'i0'), cst('float32', [cols], new Array(cols).fill(0), 'a0')],
      nodes: L.nodes, opInputs: [L.sw('a')], fnWeights: w, covers: [...LOOP_OPS, 'GatherV2'],
    });
  }

  // ---- a tf.cond inside the loop's frame: x = i odd ? x - 1 : x * 2 (a
  // Switch/Merge on a predicate computed each iteration)
  {
    const u = util(rngFor());
    const s = u.shape(2, 80);
    const w = [];
    const L = tf1Loop('wc', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'x', dt: 'float32', init: 'x' }],
      [{ v: 'n', dt: 'int32', src: 'n' }],
      (m) => ({ nodes: [N('wc/Less', 'Less', [m.i, m.n], { T: T('int32') })], out: 'wc/Less' }),
      (id) => ({
        nodes: [konst(w, 'wc/one', 'int32', [], [1], id.i), konst(w, 'wc/two', 'int32', [], [2], id.i),
          konst(w, 'wc/onef', 'float32', [], [1], id.i), konst(w, 'wc/twof', 'float32', [], [2], id.i),
          N('wc/mod', 'FloorMod', [id.i, 'wc/two'], { T: T('int32') }),
          N('wc/odd', 'Equal', ['wc/mod', 'wc/one'], { T: T('int32') }),
          N('wc/cond/Switch', 'Switch', [id.x, 'wc/odd'], { T: T('float32') }),
          N('wc/cond/sub', 'Sub', ['wc/cond/Switch:1', 'wc/onef'], { T: T('float32') }),
          N('wc/cond/mul', 'Mul', ['wc/cond/Switch', 'wc/twof'], { T: T('float32') }),
          N('wc/cond/Merge', 'Merge', ['wc/cond/mul', 'wc/cond/sub'], { T: T('float32'), N: { i: '2' } }),
          N('wc/inc', 'AddV2', [id.i, 'wc/one'], { T: T('int32') })],
        out: { i: 'wc/inc', x: 'wc/cond/Merge' },
      }), { x: 'op' });
    out.push({
      name: 'TF1_while_cond', op: 'Exit', attr: { T: T('float32') }, tol: 1e-6,
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-3, 3)), 'x'), cst('int32', [], [5], 'n'), cst('int32', [], [0], 'i0')],
      nodes: L.nodes, opInputs: [L.sw('x')], fnWeights: w, covers: [...LOOP_OPS, 'FloorMod', 'Equal'],
    });
  }

  // ---- a loop between GPU work: x*x before it, the loop's bound from a Sum
  // of it (a value the first GPU stage computes), a MatMul after it
  {
    const u = util(rngFor());
    const rows = 6; const cols = 24;
    const w = [];
    const L = tf1Loop('stg', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'a', dt: 'float32', init: 'a0' }],
      [{ v: 'x', dt: 'float32', src: 'xx' }, { v: 'n', dt: 'int32', src: 'n' }],
      (m) => ({ nodes: [N('stg/Less', 'Less', [m.i, m.n], { T: T('int32') })], out: 'stg/Less' }),
      (id) => ({
        nodes: [konst(w, 'stg/one', 'int32', [], [1], id.i), konst(w, 'stg/axis', 'int32', [], [0], id.i),
          N('stg/row', 'GatherV2', [id.x, id.i, 'stg/axis'], { Tparams: T('float32'), Tindices: T('int32'), Taxis: T('int32'), batch_dims: { i: '0' } }),
          N('stg/sum', 'AddV2', [id.a, 'stg/row'], { T: T('float32') }),
          N('stg/inc', 'AddV2', [id.i, 'stg/one'], { T: T('int32') })],
        out: { i: 'stg/inc', a: 'stg/sum' },
      }), { a: 'op' });
    out.push({
      name: 'TF1_while_staged', op: 'Exit', attr: { T: T('float32') }, tol: 1e-5,
      inputs: [ph('float32', [rows, cols], u.vals(rows * cols, () => u.uni(-1, 1)), 'x'), cst('int32', [2], [0, 1], 'axes'),
        cst('int32', [], [0], 'i0'), cst('float32', [cols], new Array(cols).fill(0), 'a0'),
        cst('float32', [], [rows * cols * 0.2], 'scale'), cst('int32', [2], [1, cols], 'row_shape'),
        cst('float32', [cols, 20], u.vals(cols * 20, () => u.uni(-1, 1)), 'wm')],
      nodes: [N('xx', 'Mul', ['x', 'x'], { T: T('float32') }), N('tot', 'Sum', ['xx', 'axes'], { T: T('float32'), keep_dims: { b: false } }),
        N('frac', 'RealDiv', ['tot', 'scale'], { T: T('float32') }),
        N('nf', 'Ceil', ['frac'], { T: T('float32') }), N('n', 'Cast', ['nf'], { SrcT: T('float32'), DstT: T('int32'), Truncate: { b: false } }),
        ...L.nodes],
      opInputs: [L.sw('a')], fnWeights: w,
      after: [N('r2', 'Reshape', ['out0', 'row_shape'], { T: T('float32'), Tshape: T('int32') }),
        N('mm', 'MatMul', ['r2', 'wm'], { T: T('float32'), transpose_a: { b: false }, transpose_b: { b: false } }),
        N('post', 'Relu', ['mm'], { T: T('float32') })],
      covers: [...LOOP_OPS, 'GatherV2', 'MatMul', 'Sum'],
    });
  }

  // ---- nested loops: for i < 3 { j = 0; while j < i + 2 { j += 1 }; s = s*x + j },
  // the inner frame inside the outer's body, its bound entered from the
  // outer frame. (tfjs runs a nested loop right only when the inner one
  // carries a single value: with two, it loses the second one's later
  // outer iterations; and a Const starting it, a weight that tfjs runs in the
  // root context, starts it in the wrong frame: j's start is computed.)
  {
    const u = util(rngFor());
    const s = [u.int(17, 40)];
    const w = [];
    const outer = tf1Loop('outer', [{ v: 'i', dt: 'int32', init: 'zero' }, { v: 's', dt: 'float32', init: 's0' }],
      [{ v: 'x', dt: 'float32', src: 'x' }],
      (m) => ({ nodes: [konst(w, 'outer/three', 'int32', [], [3]), N('outer/Less', 'Less', [m.i, 'outer/three'], { T: T('int32') })], out: 'outer/Less' }),
      (oid) => {
        const inner = tf1Loop('outer/inner', [{ v: 'j', dt: 'int32', init: 'outer/zero_j' }],
          [{ v: 'lim', dt: 'int32', src: 'outer/lim' }],
          (m) => ({ nodes: [N('outer/inner/Less', 'Less', [m.j, m.lim], { T: T('int32') })], out: 'outer/inner/Less' }),
          (id) => ({
            nodes: [konst(w, 'outer/inner/one', 'int32', [], [1], id.j),
              N('outer/inner/j1', 'AddV2', [id.j, 'outer/inner/one'], { T: T('int32') })],
            out: { j: 'outer/inner/j1' },
          }));
        return {
          nodes: [konst(w, 'outer/one', 'int32', [], [1], oid.i), konst(w, 'outer/two', 'int32', [], [2], oid.i),
            N('outer/zero_j', 'Sub', [oid.i, oid.i], { T: T('int32') }),
            N('outer/lim', 'AddV2', [oid.i, 'outer/two'], { T: T('int32') }),
            ...inner.nodes,
            N('outer/jf', 'Cast', [inner.exits.j], { SrcT: T('int32'), DstT: T('float32'), Truncate: { b: false } }),
            N('outer/sx', 'Mul', [oid.s, oid.x], { T: T('float32') }),
            N('outer/s1', 'AddV2', ['outer/sx', 'outer/jf'], { T: T('float32') }),
            N('outer/i1', 'AddV2', [oid.i, 'outer/one'], { T: T('int32') })],
          out: { i: 'outer/i1', s: 'outer/s1' },
        };
      }, { s: 'op' });
    out.push({
      name: 'TF1_while_nested', op: 'Exit', attr: { T: T('float32') }, tol: 1e-6,
      inputs: [ph('float32', s, u.vals(s[0], () => u.uni(-2, 2)), 'x'), cst('int32', [], [0], 'zero'),
        cst('float32', s, new Array(s[0]).fill(0.5), 's0')],
      nodes: outer.nodes, opInputs: [outer.sw('s')], fnWeights: w, covers: [...LOOP_OPS, 'Cast', 'Sub'],
    });
  }

  // ---- a Switch/Merge conditional outside any loop (tf.cond in TF1), both ways
  for (const [tag, v] of [['true', 2.5], ['false', -1.5]]) {
    const u = util(rngFor());
    const s = u.shape(2, 100);
    const w = [];
    out.push({
      name: `TF1_cond_${tag}`, op: 'Merge', attr: { T: T('float32'), N: { i: '2' } }, tol: 1e-6,
      inputs: [ph('float32', [], [v], 'p'), ph('float32', s, u.vals(u.n(s), () => u.uni(-3, 3)), 'x')],
      nodes: [konst(w, 'zero', 'float32', [], [0]), N('gt', 'Greater', ['p', 'zero'], { T: T('float32') }),
        N('cond/Switch', 'Switch', ['x', 'gt'], { T: T('float32') }),
        N('cond/then', 'Mul', ['cond/Switch:1', 'cond/Switch:1'], { T: T('float32') }),
        N('cond/else', 'Neg', ['cond/Switch'], { T: T('float32') })],
      opInputs: ['cond/else', 'cond/then'], fnWeights: w, covers: ['Switch', 'Greater'],
    });
  }

  // ---- a Switch straight on a float or int predicate, known when the model
  // is built (a small input is bound by value): tfjs reads its first element,
  // NaN and -0 are false
  [['float32', NaN], ['float32', -0], ['float32', 0.25], ['int32', 2], ['int32', 0]].forEach(([dt, pv], k) => {
    const u = util(rngFor());
    const s = u.shape(2, 100);
    out.push({
      name: `Switch_pred_${k}`, op: 'Merge', attr: { T: T('float32'), N: { i: '2' } }, tol: 0,
      inputs: [ph(dt, [], [pv], 'p'), ph('float32', s, u.vals(u.n(s), () => u.uni(-3, 3)), 'x')],
      nodes: [N('sw', 'Switch', ['x', 'p'], { T: T('float32') }),
        N('then', 'Neg', ['sw:1'], { T: T('float32') }), N('else', 'Abs', ['sw'], { T: T('float32') })],
      opInputs: ['else', 'then'], covers: ['Switch'],
    });
  });

  // ---- TensorArray in a loop: scatter x's rows into one array, read row i,
  // write row*2 + i into another, then gather (indices past the size are
  // dropped, as tfjs's slice(0, size) does) and size; a bound of 0 writes
  // nothing (gather gives [0, ...element shape])
  [[4, null, ''], [0, true, '_none']].forEach(([bound, knownOut, tag]) => {
    const u = util(rngFor());
    const n = 4; const cols = u.int(17, 40);
    const w = [];
    const ta = (name, size, dims, extra = {}) => N(name, 'TensorArrayV3', [size], {
      dtype: T('float32'), element_shape: shapeOf(dims), dynamic_size: { b: false }, clear_after_read: { b: true },
      identical_element_shapes: { b: true }, tensor_array_name: { s: '' }, ...extra,
    });
    const L = tf1Loop('ta', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'f', dt: 'float32', init: 'ta_out:1' }],
      [{ v: 'b', dt: 'int32', src: 'bound' }, { v: 'tin', dt: 'int32', src: 'ta_in' }, { v: 'fin', dt: 'float32', src: 'ta_scatter' },
        { v: 'tout', dt: 'int32', src: 'ta_out' }],
      (m) => ({ nodes: [N('ta/Less', 'Less', [m.i, m.b], { T: T('int32') })], out: 'ta/Less' }),
      (id) => ({
        nodes: [konst(w, 'ta/one', 'int32', [], [1], id.i), konst(w, 'ta/two', 'float32', [], [2], id.i),
          N('ta/read', 'TensorArrayReadV3', [id.tin, id.i, id.fin], { dtype: T('float32') }),
          N('ta/if', 'Cast', [id.i], { SrcT: T('int32'), DstT: T('float32'), Truncate: { b: false } }),
          N('ta/y0', 'Mul', ['ta/read', 'ta/two'], { T: T('float32') }),
          N('ta/y', 'AddV2', ['ta/y0', 'ta/if'], { T: T('float32') }),
          N('ta/write', 'TensorArrayWriteV3', [id.tout, id.i, 'ta/y', id.f], { T: T('float32') }),
          N('ta/inc', 'AddV2', [id.i, 'ta/one'], { T: T('int32') })],
        out: { i: 'ta/inc', f: 'ta/write' },
      }));
    out.push({
      name: `TensorArray_loop_gather${tag}`, op: 'TensorArrayGatherV3', attr: { dtype: T('float32'), element_shape: shapeOf([cols]) },
      outputs: 1, tol: 1e-6,
      inputs: [ph('float32', [n, cols], u.vals(n * cols, () => u.uni(-3, 3)), 'x'), cst('int32', [], [n], 'n'),
        cst('int32', [], [bound], 'bound'),
        cst('int32', [], [0], 'i0'), cst('int32', [n], [0, 1, 2, 3], 'idx'), cst('int32', [6], [3, 1, 1, 0, 2, 3], 'gidx')],
      nodes: [ta('ta_in', 'n', [cols]), ta('ta_out', 'n', knownOut ? [cols] : null, { clear_after_read: { b: false } }),
        N('ta_scatter', 'TensorArrayScatterV3', ['ta_in', 'idx', 'x', 'ta_in:1'], { T: T('float32') }), ...L.nodes],
      opInputs: ['ta_out', 'gidx', L.exits.f], fnWeights: w,
      after: [N('size', 'TensorArraySizeV3', ['ta_out', L.exits.f]), N('count', 'Identity', [L.exits.i], { T: T('int32') })],
      covers: [...LOOP_OPS, 'Exit', 'TensorArrayV3', 'TensorArrayScatterV3', 'TensorArrayReadV3', 'TensorArrayWriteV3', 'TensorArraySizeV3'],
    });
  });

  const taNode = (name, size, dims, dt = 'float32', extra = {}) => N(name, 'TensorArrayV3', [size], {
    dtype: T(dt), element_shape: shapeOf(dims), dynamic_size: { b: false }, clear_after_read: { b: true },
    identical_element_shapes: { b: true }, tensor_array_name: { s: '' }, ...extra,
  });

  // ---- a TensorArray of [-1, c] elements of growing length (row 0 to i of
  // x, written at i in a loop), concatenated; and a TensorList pushed back
  // in the same loop (EmptyTensorList, unbounded), stacked and popped
  {
    const u = util(rngFor());
    const c = u.int(5, 9); const n = 4;
    const w = [];
    const L = tf1Loop('rg', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'f', dt: 'float32', init: 'ta:1' }, { v: 'l', dt: 'int32', init: 'list' }],
      [{ v: 'n', dt: 'int32', src: 'n' }, { v: 'ta', dt: 'int32', src: 'ta' }, { v: 'x', dt: 'float32', src: 'x' }],
      (m) => ({ nodes: [N('rg/Less', 'Less', [m.i, m.n], { T: T('int32') })], out: 'rg/Less' }),
      (id) => ({
        nodes: [konst(w, 'rg/one', 'int32', [], [1], id.i), konst(w, 'rg/minus1', 'int32', [], [-1], id.i),
          konst(w, 'rg/begin', 'int32', [2], [0, 0], id.i), konst(w, 'rg/axis', 'int32', [], [0], id.i),
          N('rg/inc', 'AddV2', [id.i, 'rg/one'], { T: T('int32') }),
          N('rg/size', 'Pack', ['rg/inc', 'rg/minus1'], { T: T('int32'), N: { i: '2' }, axis: { i: '0' } }),
          N('rg/part', 'Slice', [id.x, 'rg/begin', 'rg/size'], { T: T('float32'), Index: T('int32') }),
          N('rg/write', 'TensorArrayWriteV3', [id.ta, id.i, 'rg/part', id.f], { T: T('float32') }),
          N('rg/row', 'GatherV2', [id.x, id.i, 'rg/axis'], { Tparams: T('float32'), Tindices: T('int32'), Taxis: T('int32'), batch_dims: { i: '0' } }),
          N('rg/push', 'TensorListPushBack', [id.l, 'rg/row'], ED())],
        out: { i: 'rg/inc', f: 'rg/write', l: 'rg/push' },
      }));
    out.push({
      name: 'TensorArrayConcatV3_ragged', op: 'TensorArrayConcatV3', attr: { dtype: T('float32') }, tol: 0,
      inputs: [ph('float32', [n, c], u.vals(n * c, () => u.uni(-3, 3)), 'x'), cst('int32', [], [n], 'n'), cst('int32', [], [0], 'i0'),
        shp('es', [c]), cst('int32', [], [-1], 'unbounded')],
      nodes: [taNode('ta', 'n', [-1, c]), N('list', 'EmptyTensorList', ['es', 'unbounded'], { ...ED(), shape_type: T('int32') }), ...L.nodes],
      opInputs: ['ta', L.exits.f], fnWeights: w,
      after: [N('stack', 'TensorListStack', [L.exits.l, 'es'], { ...ED(), num_elements: { i: '-1' } }),
        N('pop', 'TensorListPopBack', [L.exits.l, 'es', '^stack'], ED()), N('popped', 'Identity', ['pop'], { T: T('float32') }),
        N('stacked', 'Identity', ['stack'], { T: T('float32') })],
      covers: [...LOOP_OPS, 'Exit', 'TensorArrayV3', 'TensorArrayWriteV3', 'EmptyTensorList', 'TensorListPushBack',
        'TensorListStack', 'TensorListPopBack', 'Slice', 'Pack'],
    });
  }

  // ---- TensorArray split (lengths, a zero among them) then concat, float32
  // and int32; the element shape is [-1, c]: tfjs's split reshapes each part
  // to it (and fails on an unknown one: reshape to undefined)
  [[[-1, 7], 'float32', [2, 1, 3]], [[-1, 7], 'float32', [3, 0, 3]], [[-1, 7], 'int32', [1, 4, 1]]].forEach(([dims, dt, lens], k) => {
    const u = util(rngFor());
    const rows = lens.reduce((a, b) => a + b, 0);
    const c = 7;
    const x = dt === 'int32' ? u.vals(rows * c, () => u.int(-50, 50)) : u.vals(rows * c, () => u.uni(-3, 3));
    out.push({
      name: `TensorArrayConcatV3_split_${k}`, op: 'TensorArrayConcatV3', attr: { dtype: T(dt), element_shape_except0: shapeOf(null) },
      tol: 0,
      inputs: [ph(dt, [rows, c], x, 'x'), cst('int32', [], [lens.length], 'size'), cst('int32', [lens.length], lens, 'lengths')],
      nodes: [taNode('ta', 'size', dims, dt), N('split', 'TensorArraySplitV3', ['ta', 'x', 'lengths', 'ta:1'], { T: T(dt) })],
      opInputs: ['ta', 'split'],
      covers: ['TensorArrayV3', 'TensorArraySplitV3'],
    });
  });

  // ---- a dynamic-size TensorArray of size 0 grown by writes in a loop (an
  // int32 one alongside), read twice where clear_after_read is false; size,
  // gather of no indices, concat
  {
    const u = util(rngFor());
    const c = u.int(17, 30);
    const w = [];
    const L = tf1Loop('dyn', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'f', dt: 'float32', init: 'ta:1' }],
      [{ v: 'n', dt: 'int32', src: 'n' }, { v: 'ta', dt: 'int32', src: 'ta' }, { v: 'x', dt: 'float32', src: 'x' }],
      (m) => ({ nodes: [N('dyn/Less', 'Less', [m.i, m.n], { T: T('int32') })], out: 'dyn/Less' }),
      (id) => ({
        nodes: [konst(w, 'dyn/one', 'int32', [], [1], id.i),
          N('dyn/if', 'Cast', [id.i], { SrcT: T('int32'), DstT: T('float32'), Truncate: { b: false } }),
          N('dyn/y', 'Mul', [id.x, 'dyn/if'], { T: T('float32') }),
          N('dyn/write', 'TensorArrayWriteV3', [id.ta, id.i, 'dyn/y', id.f], { T: T('float32') }),
          N('dyn/inc', 'AddV2', [id.i, 'dyn/one'], { T: T('int32') })],
        out: { i: 'dyn/inc', f: 'dyn/write' },
      }));
    out.push({
      name: 'TensorArraySizeV3_dynamic', op: 'TensorArraySizeV3', outputs: 1, tol: 0,
      inputs: [ph('float32', [c], u.vals(c, () => u.uni(-3, 3)), 'x'), cst('int32', [], [5], 'n'), cst('int32', [], [0], 'i0'),
        cst('int32', [], [0], 'zero'), cst('int32', [3], [4, 0, 4], 'idx'), cst('int32', [0], [], 'none')],
      nodes: [taNode('ta', 'zero', [c], 'float32', { dynamic_size: { b: true }, clear_after_read: { b: false } }), ...L.nodes],
      opInputs: ['ta', L.exits.f], fnWeights: w,
      after: [N('gather', 'TensorArrayGatherV3', ['ta', 'idx', L.exits.f], { dtype: T('float32'), element_shape: shapeOf([c]) }),
        N('gather_none', 'TensorArrayGatherV3', ['ta', 'none', L.exits.f], { dtype: T('float32'), element_shape: shapeOf([c]) }),
        N('concat', 'TensorArrayConcatV3', ['ta', 'ta:1', '^gather', '^gather_none'], { dtype: T('float32') }),
        N('gather_out', 'Identity', ['gather'], { T: T('float32') }), N('none_out', 'Identity', ['gather_none'], { T: T('float32') })],
      covers: [...LOOP_OPS, 'Exit', 'TensorArrayV3', 'TensorArrayWriteV3', 'TensorArrayGatherV3', 'TensorArrayConcatV3'],
    });
  }

  // ---- TensorArray read in sequence (ordered by control inputs), then closed:
  // its size after is 0
  {
    const u = util(rngFor());
    const c = u.int(17, 30);
    out.push({
      name: 'TensorArrayCloseV3_size', op: 'TensorArraySizeV3', tol: 0,
      inputs: [ph('float32', [3, c], u.vals(3 * c, () => u.uni(-3, 3)), 'x'), cst('int32', [], [3], 'size'),
        cst('int32', [3], [2, 0, 1], 'idx'), cst('int32', [], [2], 'two')],
      nodes: [taNode('ta', 'size', [c]), N('scatter', 'TensorArrayScatterV3', ['ta', 'idx', 'x', 'ta:1'], { T: T('float32') }),
        N('read', 'TensorArrayReadV3', ['ta', 'two', 'scatter'], { dtype: T('float32') }),
        N('size_before', 'TensorArraySizeV3', ['ta', 'scatter']),
        // the close disposes what the array holds (tfjs): read's value is
        // used before it only
        N('read2', 'Mul', ['read', 'read'], { T: T('float32') }),
        N('close', 'TensorArrayCloseV3', ['ta', '^read2', '^size_before'])],
      opInputs: ['ta', 'ta:1', '^close'], // not scatter's flow: the handle, disposed by the close
      after: [N('read_out', 'Identity', ['read2'], { T: T('float32') }), N('before', 'Identity', ['size_before'], { T: T('int32') })],
      covers: ['TensorArrayV3', 'TensorArrayScatterV3', 'TensorArrayReadV3', 'TensorArrayCloseV3'],
    });
  }

  // ---- scalar elements: the concat of one is a copy of it (a scalar), as
  // tfjs's concat of a single tensor is; a TensorList alike
  out.push({
    name: 'TensorArrayConcatV3_one_scalar', op: 'TensorArrayConcatV3', attr: { dtype: T('float32') }, tol: 0,
    inputs: [ph('float32', [], [2.5], 'x'), cst('int32', [], [1], 'size'), cst('int32', [], [0], 'zero'), shp('es', [])],
    nodes: [taNode('ta', 'size', []), N('write', 'TensorArrayWriteV3', ['ta', 'zero', 'x', 'ta:1'], { T: T('float32') }),
      N('list', 'EmptyTensorList', ['es', 'size'], { ...ED(), shape_type: T('int32') }),
      N('push', 'TensorListPushBack', ['list', 'x'], ED())],
    opInputs: ['ta', 'write'],
    after: [N('tl_concat', 'TensorListConcatV2', ['push'], { ...ED(), element_shape: shapeOf([]) })],
    covers: ['TensorArrayV3', 'TensorArrayWriteV3', 'EmptyTensorList', 'TensorListPushBack', 'TensorListConcatV2'],
  });

  // ---- an empty TensorArray of a known element shape: gather and concat
  // give [0, ...element shape]
  out.push({
    name: 'TensorArrayConcatV3_empty', op: 'TensorArrayConcatV3', attr: { dtype: T('float32') }, tol: 0,
    inputs: [cst('int32', [], [0], 'size'), cst('int32', [0], [], 'none')],
    nodes: [taNode('ta', 'size', [2, 3])],
    opInputs: ['ta', 'ta:1'],
    after: [N('gather', 'TensorArrayGatherV3', ['ta', 'none', 'ta:1'], { dtype: T('float32'), element_shape: shapeOf([2, 3]) })],
    covers: ['TensorArrayV3', 'TensorArrayGatherV3'],
  });

  // ---- TensorList graphs (TF2 exports lowered to TF1 frames carry them): the
  // handle's dtype is DT_VARIANT; its value is no output (tfjs's is a float 0)
  const V = { type: 'DT_VARIANT' };

  // a list reserved, then set in a loop (row i of x, times 2), stacked
  {
    const u = util(rngFor());
    const n = 4; const c = u.int(17, 30);
    const w = [];
    const L = tf1Loop('tl', [{ v: 'i', dt: 'int32', init: 'i0' }, { v: 'l', dt: 'int32', init: 'reserve' }],
      [{ v: 'n', dt: 'int32', src: 'n' }, { v: 'x', dt: 'float32', src: 'x' }],
      (m) => ({ nodes: [N('tl/Less', 'Less', [m.i, m.n], { T: T('int32') })], out: 'tl/Less' }),
      (id) => ({
        nodes: [konst(w, 'tl/one', 'int32', [], [1], id.i), konst(w, 'tl/two', 'float32', [], [2], id.i),
          konst(w, 'tl/axis', 'int32', [], [0], id.i),
          N('tl/row', 'GatherV2', [id.x, id.i, 'tl/axis'], { Tparams: T('float32'), Tindices: T('int32'), Taxis: T('int32'), batch_dims: { i: '0' } }),
          N('tl/y', 'Mul', ['tl/row', 'tl/two'], { T: T('float32') }),
          N('tl/set', 'TensorListSetItem', [id.l, id.i, 'tl/y'], ED()),
          N('tl/inc', 'AddV2', [id.i, 'tl/one'], { T: T('int32') })],
        out: { i: 'tl/inc', l: 'tl/set' },
      }));
    for (const nd of L.nodes) if (nd.op !== 'Const' && nd.name.endsWith('_l')) nd.attr.T = V;
    out.push({
      name: 'TensorListStack_loop', op: 'TensorListStack', attr: { ...ED(), num_elements: { i: '-1' } }, tol: 0,
      inputs: [ph('float32', [n, c], u.vals(n * c, () => u.uni(-3, 3)), 'x'), cst('int32', [], [n], 'n'), cst('int32', [], [0], 'i0'),
        shp('es', [c]), shp('any', null)],
      nodes: [N('reserve', 'TensorListReserve', ['es', 'n'], { element_dtype: T('float32'), shape_type: T('int32') }), ...L.nodes],
      opInputs: [L.exits.l, 'any'], fnWeights: w,
      after: [N('len', 'TensorListLength', [L.exits.l]), N('len0', 'TensorListLength', ['reserve', '^op'])],
      covers: [...LOOP_OPS, 'Exit', 'TensorListReserve', 'TensorListSetItem', 'TensorListLength'],
    });
  }
  // from a tensor: get an item, pop the last (its shape asked unknown), the
  // length before and after (ordered by control inputs); int32 too
  ['float32', 'int32'].forEach((dt, k) => {
    const u = util(rngFor());
    const c = u.int(17, 30);
    const x = dt === 'int32' ? u.vals(4 * c, () => u.int(-99, 99)) : u.vals(4 * c, () => u.uni(-3, 3));
    out.push({
      name: `TensorListGetItem_${k}`, op: 'TensorListGetItem', attr: ED(dt), tol: 0,
      inputs: [ph(dt, [4, c], x, 'x'), shp('es', [c]), shp('any', null), cst('int32', [], [2], 'two')],
      nodes: [N('list', 'TensorListFromTensor', ['x', 'es'], { ...ED(dt), shape_type: T('int32') }),
        N('len_before', 'TensorListLength', ['list'])],
      opInputs: ['list', 'two', 'es'],
      after: [N('pop', 'TensorListPopBack', ['list', 'any', '^op', '^len_before'], ED(dt)),
        N('len_after', 'TensorListLength', ['list', '^pop']), N('popped', 'Identity', ['pop'], { T: T(dt) }),
        N('before', 'Identity', ['len_before'], { T: T('int32') })],
      outputs: 1, covers: ['TensorListFromTensor', 'TensorListPopBack', 'TensorListLength'],
    });
  });
  // pushed back into an empty list (bounded), stacked and concatenated
  {
    const u = util(rngFor());
    const c = u.int(5, 12);
    const rows = [0, 1, 2].map(() => u.vals(2 * c, () => u.uni(-3, 3)));
    out.push({
      name: 'TensorListStack_pushed', op: 'TensorListStack', attr: { ...ED(), num_elements: { i: '3' } }, tol: 0,
      inputs: [ph('float32', [2, c], rows[0], 'a'), ph('float32', [2, c], rows[1], 'b'), ph('float32', [2, c], rows[2], 'd'),
        shp('es', [2, c]), cst('int32', [], [3], 'max')],
      nodes: [N('empty', 'EmptyTensorList', ['es', 'max'], { ...ED(), shape_type: T('int32') }),
        N('p1', 'TensorListPushBack', ['empty', 'a'], ED()), N('p2', 'TensorListPushBack', ['p1', 'b'], ED()),
        N('p3', 'TensorListPushBack', ['p2', 'd'], ED())],
      opInputs: ['p3', 'es'],
      after: [N('concat', 'TensorListConcatV2', ['p3', '^op'], { ...ED(), element_shape: shapeOf([2, c]) }),
        N('len', 'TensorListLength', ['p3', '^op'])],
      covers: ['EmptyTensorList', 'TensorListPushBack', 'TensorListConcatV2', 'TensorListLength'],
    });
  }
  // scattered (indices out of order; V2 with a bound and a gap), gathered
  {
    const u = util(rngFor());
    const c = u.int(17, 30);
    out.push({
      name: 'TensorListGather_scatter', op: 'TensorListGather', attr: ED(), tol: 0,
      inputs: [ph('float32', [3, c], u.vals(3 * c, () => u.uni(-3, 3)), 'x'), shp('es', [c]),
        cst('int32', [3], [2, 0, 1], 'idx'), cst('int32', [4], [1, 2, 0, 1], 'gidx'),
        cst('int32', [3], [4, 0, 2], 'idx2'), cst('int32', [], [6], 'num'), cst('int32', [3], [0, 2, 4], 'gidx2')],
      nodes: [N('list', 'TensorListScatter', ['x', 'idx', 'es'], { ...ED(), shape_type: T('int32') }),
        N('list2', 'TensorListScatterV2', ['x', 'idx2', 'es', 'num'], { ...ED(), shape_type: T('int32') })],
      opInputs: ['list', 'gidx', 'es'],
      after: [N('g2', 'TensorListGather', ['list2', 'gidx2', 'es'], ED()), N('len2', 'TensorListLength', ['list2'])],
      covers: ['TensorListScatter', 'TensorListScatterV2', 'TensorListLength'],
    });
  }
  // split into parts of one row (tfjs reshapes each part to the element
  // shape: a part of several rows fails there), stacked and concatenated
  {
    const u = util(rngFor());
    const c = u.int(17, 30);
    out.push({
      name: 'TensorListSplit_rows', op: 'TensorListStack', attr: { ...ED(), num_elements: { i: '-1' } }, tol: 0,
      inputs: [ph('float32', [4, c], u.vals(4 * c, () => u.uni(-3, 3)), 'x'), shp('any', null),
        cst('int32', [4], [1, 1, 1, 1], 'lengths')],
      nodes: [N('list', 'TensorListSplit', ['x', 'any', 'lengths'], { ...ED(), shape_type: T('int32') })],
      opInputs: ['list', 'any'],
      after: [N('concat', 'TensorListConcat', ['list', '^op'], { ...ED(), element_shape: shapeOf([-1]) })],
      covers: ['TensorListSplit', 'TensorListConcat'],
    });
  }
  // a partial element shape [-1, c]: stacked, an item asked with an unknown
  // shape, set past the end (the length grows) and gathered
  {
    const u = util(rngFor());
    const c = u.int(5, 9);
    out.push({
      name: 'TensorListStack_partial', op: 'TensorListStack', attr: { ...ED(), num_elements: { i: '-1' } }, tol: 0,
      inputs: [ph('float32', [3, 2, c], u.vals(6 * c, () => u.uni(-3, 3)), 'x'), ph('float32', [2, c], u.vals(2 * c, () => u.uni(-3, 3)), 'y'),
        shp('es', [-1, c]), shp('any', null), cst('int32', [], [1], 'one'), cst('int32', [], [4], 'four'),
        cst('int32', [2], [4, 0], 'gidx')],
      nodes: [N('list', 'TensorListFromTensor', ['x', 'es'], { ...ED(), shape_type: T('int32') })],
      opInputs: ['list', 'es'],
      after: [N('item', 'TensorListGetItem', ['list', 'one', 'any', '^op'], ED()),
        N('set', 'TensorListSetItem', ['list', 'four', 'y', '^item'], ED()),
        N('len', 'TensorListLength', ['set']), N('g', 'TensorListGather', ['set', 'gidx', 'es'], ED()),
        N('item_out', 'Identity', ['item'], { T: T('float32') })],
      covers: ['TensorListFromTensor', 'TensorListGetItem', 'TensorListSetItem', 'TensorListLength', 'TensorListGather'],
    });
  }
  // resized down (stacked) and up (its length)
  {
    const u = util(rngFor());
    const c = u.int(17, 30);
    out.push({
      name: 'TensorListResize_0', op: 'TensorListStack', attr: { ...ED(), num_elements: { i: '-1' } }, tol: 0,
      inputs: [ph('float32', [4, c], u.vals(4 * c, () => u.uni(-3, 3)), 'x'), shp('es', [c]),
        cst('int32', [], [2], 'two'), cst('int32', [], [6], 'six')],
      nodes: [N('list', 'TensorListFromTensor', ['x', 'es'], { ...ED(), shape_type: T('int32') }),
        N('small', 'TensorListResize', ['list', 'two']), N('big', 'TensorListResize', ['list', 'six'])],
      opInputs: ['small', 'es'],
      after: [N('len_small', 'TensorListLength', ['small']), N('len_big', 'TensorListLength', ['big']),
        N('len', 'TensorListLength', ['list'])],
      covers: ['TensorListFromTensor', 'TensorListResize', 'TensorListLength'],
    });
  }
  // an empty list of a known element shape: concat and gather give
  // [0, ...element shape]
  out.push({
    name: 'TensorListConcat_empty', op: 'TensorListConcat', attr: { ...ED(), element_shape: shapeOf([2, 3]) }, tol: 0,
    inputs: [shp('es', [2, 3]), cst('int32', [], [3], 'max'), cst('int32', [0], [], 'none')],
    nodes: [N('empty', 'EmptyTensorList', ['es', 'max'], { ...ED(), shape_type: T('int32') })],
    opInputs: ['empty'],
    after: [N('gather', 'TensorListGather', ['empty', 'none', 'es'], ED())],
    covers: ['EmptyTensorList', 'TensorListGather'],
  });

  // ---- NonMaxSuppression V2..V5: [y1, x1, y2, x2] boxes (corners in either
  // order, some of no area), scores from a small pool (ties: the lower box
  // index first, as tfjs sorts), IoU exactly at the threshold (suppressed:
  // >=), score thresholds, max_output_size 0 and past the box count
  const boxes = (u, n) => {
    const b = [];
    for (let i = 0; i < n; i++) {
      const y = u.int(0, 12) / 8; const x = u.int(0, 12) / 8;
      const h = u.int(0, 6) / 8; const wd = u.int(1, 6) / 8;
      b.push(...(u.int(0, 3) === 0 ? [y + h, x + wd, y, x] : [y, x, y + h, x + wd]));
    }
    return b;
  };
  const scorePool = (u, n) => u.vals(n, () => u.int(0, 12) / 16);
  const nms = (name, op, bx, sc, maxOut, iou, extra, attr = {}, outputs = 1) => ({
    name, op, outputs, tol: op === 'NonMaxSuppressionV5' ? 1e-6 : 0, attr: { T: T('float32'), ...attr },
    inputs: [ph('float32', [sc.length, 4], bx, 'boxes'), ph('float32', [sc.length], sc, 'scores'),
      cst('int32', [], [maxOut], 'max_output_size'), cst('float32', [], [iou], 'iou_threshold'),
      ...extra.map(([nm, v]) => cst('float32', [], [v], nm))],
  });
  [[10, 0.5, 0.2], [40, 0.3, 0], [5, 0.7, 0.5], [0, 0.5, 0.1], [12, 0.5, 0.95], [40, 1, -Infinity], [40, 0, 0.1]].forEach(([m, iou, thr], k) => {
    const u = util(rngFor());
    const n = u.int(20, 40);
    out.push(nms(`NonMaxSuppressionV3_${k}`, 'NonMaxSuppressionV3', boxes(u, n), scorePool(u, n), m, iou,
      [['score_threshold', thr]], { T_threshold: T('float32') }));
  });
  // equal scores of boxes apart, and IoU ties: b0 [0,0,1,1] and b1 [0,0,1,2]
  // overlap by exactly 1/2, b2 [0,0,1,4] by 1/4 and 1/2
  {
    const bx = [0, 0, 1, 1, 0, 0, 1, 2, 0, 0, 1, 4, 5, 5, 6, 6, 5, 7, 6, 8, 7, 7, 8, 8, 9, 9, 9, 10, 2, 2, 3, 3];
    const sc = [0.5, 0.5, 0.5, 0.7, 0.7, 0.5, 0.9, 0.5];
    out.push(nms('NonMaxSuppressionV3_ties', 'NonMaxSuppressionV3', bx, sc, 8, 0.5, [['score_threshold', 0.25]], { T_threshold: T('float32') }));
    out.push(nms('NonMaxSuppressionV3_ties_below', 'NonMaxSuppressionV3', bx, sc, 8, 0.50001, [['score_threshold', 0.25]], { T_threshold: T('float32') }));
    out.push(nms('NonMaxSuppressionV5_ties', 'NonMaxSuppressionV5', bx, sc, 8, 0.5, [['score_threshold', 0.25], ['soft_nms_sigma', 0]], {}, 2));
  }
  // no boxes at all (V4 pads to min(max_output_size, 0) = 0)
  out.push(nms('NonMaxSuppressionV3_no_boxes', 'NonMaxSuppressionV3', [], [], 10, 0.5, [['score_threshold', 0.1]], { T_threshold: T('float32') }));
  out.push(nms('NonMaxSuppressionV4_no_boxes', 'NonMaxSuppressionV4', [], [], 10, 0.5, [['score_threshold', 0.1]],
    { T_threshold: T('float32'), pad_to_max_output_size: { b: true } }, 2));
  // a NaN coordinate (its IoU is NaN: never over the threshold, its weight 0)
  [[-Infinity, 0.5], [0.1, 0.5]].forEach(([thr, iou], k) => {
    const u = util(rngFor());
    const n = 20;
    const bx = boxes(u, n);
    bx[4 * 2 + 1] = NaN; bx[4 * 5 + 3] = NaN;
    out.push(nms(`NonMaxSuppressionV3_nan_${k}`, 'NonMaxSuppressionV3', bx, scorePool(u, n), 20, iou,
      [['score_threshold', thr]], { T_threshold: T('float32') }));
  });
  // between GPU work, as in a detector: boxes scaled and scores through a
  // Sigmoid before, the kept boxes gathered after
  {
    const u = util(rngFor());
    const n = 40;
    out.push({
      name: 'NonMaxSuppressionV5_staged', op: 'NonMaxSuppressionV5', outputs: 2, tol: 1e-6, attr: { T: T('float32') },
      inputs: [ph('float32', [n, 4], boxes(u, n), 'raw'), ph('float32', [n], u.vals(n, () => u.uni(-4, 4)), 'logits'),
        cst('float32', [], [2], 'scale'), cst('int32', [], [15], 'max_output_size'), cst('float32', [], [0.5], 'iou_threshold'),
        cst('float32', [], [0.3], 'score_threshold'), cst('float32', [], [0.25], 'soft_nms_sigma'), cst('int32', [], [0], 'axis')],
      nodes: [N('boxes', 'Mul', ['raw', 'scale'], { T: T('float32') }), N('scores', 'Sigmoid', ['logits'], { T: T('float32') })],
      opInputs: ['boxes', 'scores', 'max_output_size', 'iou_threshold', 'score_threshold', 'soft_nms_sigma'],
      after: [N('kept', 'GatherV2', ['boxes', 'out0', 'axis'], { Tparams: T('float32'), Tindices: T('int32'), Taxis: T('int32'), batch_dims: { i: '0' } })],
      covers: ['Sigmoid', 'GatherV2'],
    });
  }
  // V2: no score threshold (negative scores kept, NaN never selected)
  [[30, 0.5], [0, 0.5], [200, 0.4]].forEach(([m, iou], k) => {
    const u = util(rngFor());
    const n = u.int(20, 40);
    const sc = u.vals(n, () => u.int(-8, 8) / 8);
    if (k === 0) { sc[3] = NaN; sc[7] = -Infinity; sc[9] = Infinity; }
    out.push(nms(`NonMaxSuppressionV2_${k}`, 'NonMaxSuppressionV2', boxes(u, n), sc, m, iou, []));
  });
  // V4: padded to max_output_size (zeros) or not, and the valid count
  [[20, 0.5, 0.3, true], [20, 0.5, 0.3, false], [4, 0.4, 0.1, true], [0, 0.5, 0, true], [60, 0.6, 0.2, true]].forEach(([m, iou, thr, pad], k) => {
    const u = util(rngFor());
    const n = u.int(20, 40);
    out.push(nms(`NonMaxSuppressionV4_${k}`, 'NonMaxSuppressionV4', boxes(u, n), scorePool(u, n), m, iou,
      [['score_threshold', thr]], { T_threshold: T('float32'), pad_to_max_output_size: { b: pad } }, 2));
  });
  // V5: soft-NMS (sigma > 0 decays overlapping scores, re-sorted), scores out
  [[20, 0.6, 0.1, 0.5], [20, 1, 0.05, 1], [10, 0.5, 0.2, 0], [30, 1, 0, 0.2], [0, 0.5, 0.1, 0.5]].forEach(([m, iou, thr, sigma], k) => {
    const u = util(rngFor());
    const n = u.int(20, 40);
    out.push(nms(`NonMaxSuppressionV5_${k}`, 'NonMaxSuppressionV5', boxes(u, n), scorePool(u, n), m, iou,
      [['score_threshold', thr], ['soft_nms_sigma', sigma]], {}, 2));
  });

  // ---- Where (coordinates of the true elements): float (NaN is true, -0
  // false), int32, bool; few, none and all true; rank 0 to 4; no elements
  [['float32', [40], 0.1], ['float32', [6, 7], 0.05], ['float32', [3, 4, 5], 0], ['int32', [2, 3, 2, 4], 0.2],
    ['bool', [9, 5], 0.1], ['bool', [30], 0], ['bool', [4, 6], 1], ['float32', [], 1], ['bool', [], 0],
    ['float32', [0, 3], 1], ['int32', [5, 0, 2], 1]].forEach(([dt, shape, p], k) => {
    const u = util(rngFor());
    const n = u.n(shape);
    const v = u.vals(n, () => (u.uni(0, 1) < p ? (dt === 'bool' ? 1 : dt === 'int32' ? u.int(-5, 5) || 1 : u.uni(-3, 3)) : (dt === 'float32' && u.int(0, 1) ? -0 : 0)));
    if (k === 0) { v[5] = NaN; v[6] = -0; v[20] = Infinity; }
    out.push({ name: `Where_${k}`, op: 'Where', tol: 0, attr: { T: T(dt) }, inputs: [ph(dt, shape, v, 'condition')] });
  });

  // Where between GPU work: its condition a Greater computed on the GPU, its
  // coordinates gathered (GatherNd) after; a threshold above every value too
  [0.6, 5].forEach((thr, k) => {
    const u = util(rngFor());
    const s = [u.int(3, 6), u.int(4, 8), u.int(2, 5)];
    out.push({
      name: `Where_staged_${k}`, op: 'Where', tol: 0, attr: { T: T('bool') },
      inputs: [ph('float32', s, u.vals(u.n(s), () => u.uni(-1, 1)), 'x'), cst('float32', [], [thr], 'thr')],
      nodes: [N('cond', 'Greater', ['x', 'thr'], { T: T('float32') })],
      opInputs: ['cond'],
      after: [N('picked', 'GatherNd', ['x', 'out0'], { Tparams: T('float32'), Tindices: T('int32') })],
      covers: ['Greater', 'GatherNd'],
    });
  });

  return out;
}

module.exports = { dynamicCases };
