// TF2 control flow (If, StatelessIf, While, StatelessWhile) for
// tests/ops/gen.js: the branches and loop bodies are library functions, in
// tensorflowjs_converter's form (signature inputArg/outputArg, nodeDef with
// "node:output:k" inputs, ret), their Consts in the shard (fnWeights).
'use strict';

const DT = { float32: 'DT_FLOAT', int32: 'DT_INT32', bool: 'DT_BOOL' };
const FN = (name) => ({ func: { name } });

// fn('name', [['i','int32'],...], [['o','int32','node:z:0'],...], nodes)
function fn(name, ins, outs, nodeDef) {
  const ret = {};
  for (const [o, , r] of outs) ret[o] = r;
  return {
    signature: {
      name,
      inputArg: ins.map(([n, t]) => ({ name: n, type: DT[t] })),
      outputArg: outs.map(([n, t]) => ({ name: n, type: DT[t] })),
    },
    nodeDef, ret,
  };
}
const node = (name, op, input, attr = {}) => ({ name, op, input, attr });
const cnode = (name, dtype) => node(name, 'Const', [], {
  value: { tensor: { dtype: DT[dtype], tensorShape: {} } }, dtype: { type: DT[dtype] },
});

function controlCases(rngFor, util, { T }) {
  const out = [];
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });

  // x = x*0.5 + 1 while i < n (float tensor carried, int counter)
  {
    const u = util(rngFor());
    const s = u.shape(3, 200);
    for (const op of ['While', 'StatelessWhile']) {
      const p = op === 'While' ? 'w' : 'sw';
      out.push({
        name: `${op}_count`, op, outputs: 3,
        inputs: [ph('int32', [], [0], 'i'), ph('int32', [], [5], 'n'),
          ph('float32', s, u.vals(u.n(s), () => u.uni(-10, 10)), 'x')],
        attr: { cond: FN(`${p}_cond`), body: FN(`${p}_body`), T: { list: { type: ['DT_INT32', 'DT_INT32', 'DT_FLOAT'] } } },
        fnWeights: [{ name: `${p}_one_i`, dtype: 'int32', shape: [], values: [1] },
          { name: `${p}_half`, dtype: 'float32', shape: [], values: [0.5] },
          { name: `${p}_one_f`, dtype: 'float32', shape: [], values: [1] }],
        library: { function: [
          fn(`${p}_cond`, [['i', 'int32'], ['n', 'int32'], ['x', 'float32']], [['lt', 'bool', 'Less:z:0']],
            [node('Less', 'Less', ['i', 'n'], { T: T('int32') })]),
          fn(`${p}_body`, [['i', 'int32'], ['n', 'int32'], ['x', 'float32']],
            [['i1', 'int32', 'add_i:z:0'], ['n1', 'int32', 'id_n:output:0'], ['x1', 'float32', 'add_x:z:0']],
            [cnode(`${p}_one_i`, 'int32'), cnode(`${p}_half`, 'float32'), cnode(`${p}_one_f`, 'float32'),
              node('add_i', 'AddV2', ['i', `${p}_one_i:output:0`], { T: T('int32') }),
              node('id_n', 'Identity', ['n'], { T: T('int32') }),
              node('mul', 'Mul', ['x', `${p}_half:output:0`], { T: T('float32') }),
              node('add_x', 'AddV2', ['mul:z:0', `${p}_one_f:output:0`], { T: T('float32') })]),
        ] },
      });
    }
  }
  // several loop values of mixed dtypes: int counter, float, int, bool
  {
    const u = util(rngFor());
    const s = u.shape(2, 60);
    out.push({
      name: 'While_mixed', op: 'While', outputs: 4,
      inputs: [ph('int32', [], [0], 'i'), ph('float32', s, u.vals(u.n(s), () => u.uni(-2, 2)), 'x'),
        ph('int32', [3], [1, -2, 3], 'y'), ph('bool', [2], [1, 0], 'b')],
      attr: { cond: FN('m_cond'), body: FN('m_body') },
      fnWeights: [{ name: 'm_four', dtype: 'int32', shape: [], values: [4] },
        { name: 'm_two', dtype: 'int32', shape: [], values: [2] },
        { name: 'm_one', dtype: 'int32', shape: [], values: [1] }],
      library: { function: [
        fn('m_cond', [['i', 'int32'], ['x', 'float32'], ['y', 'int32'], ['b', 'bool']], [['c', 'bool', 'lt:z:0']],
          [cnode('m_four', 'int32'), node('lt', 'Less', ['i', 'm_four:output:0'], { T: T('int32') })]),
        fn('m_body', [['i', 'int32'], ['x', 'float32'], ['y', 'int32'], ['b', 'bool']],
          [['i1', 'int32', 'ai:z:0'], ['x1', 'float32', 'sq:y:0'], ['y1', 'int32', 'my:z:0'], ['b1', 'bool', 'nb:y:0']],
          [cnode('m_two', 'int32'), cnode('m_one', 'int32'),
            node('ai', 'AddV2', ['i', 'm_one:output:0'], { T: T('int32') }),
            node('sq', 'Sin', ['x'], { T: T('float32') }),
            node('my', 'Mul', ['y', 'm_two:output:0'], { T: T('int32') }),
            node('nb', 'LogicalNot', ['b'])]),
      ] },
    });
  }
  // If with both branches taken (a bool placeholder cond)
  const branches = (p) => [
    fn(`${p}_then`, [['x', 'float32']], [['o', 'float32', 'sq:z:0']],
      [node('sq', 'Mul', ['x', 'x'], { T: T('float32') })]),
    fn(`${p}_else`, [['x', 'float32']], [['o', 'float32', 'ng:y:0']],
      [node('ng', 'Neg', ['x'], { T: T('float32') })]),
  ];
  for (const [tag, cv] of [['true', 1], ['false', 0]]) {
    const u = util(rngFor());
    const s = u.shape(3, 200);
    out.push({
      name: `If_${tag}`, op: 'If',
      inputs: [ph('bool', [], [cv], 'c'), ph('float32', s, u.vals(u.n(s), () => u.uni(-3, 3)), 'x')],
      attr: { then_branch: FN(`if${tag}_then`), else_branch: FN(`if${tag}_else`), Tcond: T('bool') },
      library: { function: branches(`if${tag}`) },
    });
  }
  // StatelessIf on a computed cond (Sum(x) > 0), a float cond too
  for (const sign of [1, -1]) {
    const u = util(rngFor());
    const s = u.shape(2, 100);
    const tag = sign > 0 ? 'pos' : 'neg';
    out.push({
      name: `StatelessIf_computed_${tag}`, op: 'StatelessIf',
      inputs: [ph('float32', s, u.vals(u.n(s), () => sign * u.uni(0.1, 3)), 'x'), { dtype: 'int32', shape: [s.length], values: s.map((_, k) => k), name: 'ax', const: true }],
      nodes: [node('s0', 'Sum', ['x', 'ax'], { T: T('float32'), keep_dims: { b: false } })],
      opInputs: ['s0', 'x'],
      attr: { then_branch: FN(`si${tag}_then`), else_branch: FN(`si${tag}_else`) },
      library: { function: branches(`si${tag}`) },
    });
  }
  // nested: an If inside a While body (halve x while positive sum, else negate)
  {
    const u = util(rngFor());
    const s = u.shape(2, 60);
    out.push({
      name: 'While_nested_if', op: 'StatelessWhile', outputs: 2,
      inputs: [ph('int32', [], [0], 'i'), ph('float32', s, u.vals(u.n(s), () => u.uni(-3, 3)), 'x')],
      attr: { cond: FN('n_cond'), body: FN('n_body') },
      fnWeights: [{ name: 'n_six', dtype: 'int32', shape: [], values: [6] },
        { name: 'n_one', dtype: 'int32', shape: [], values: [1] },
        { name: 'n_two', dtype: 'int32', shape: [], values: [2] }],
      library: { function: [
        fn('n_cond', [['i', 'int32'], ['x', 'float32']], [['c', 'bool', 'lt:z:0']],
          [cnode('n_six', 'int32'), node('lt', 'Less', ['i', 'n_six:output:0'], { T: T('int32') })]),
        fn('n_body', [['i', 'int32'], ['x', 'float32']], [['i1', 'int32', 'ai:z:0'], ['x1', 'float32', 'br:output:0']],
          [cnode('n_one', 'int32'), cnode('n_two', 'int32'),
            node('ai', 'AddV2', ['i', 'n_one:output:0'], { T: T('int32') }),
            node('md', 'FloorMod', ['i', 'n_two:output:0'], { T: T('int32') }),
            node('ev', 'Equal', ['md:z:0', 'n_one:output:0'], { T: T('int32') }),
            node('br', 'If', ['ev:z:0', 'x'], { then_branch: FN('nb_then'), else_branch: FN('nb_else') })]),
        ...branches('nb'),
      ] },
    });
  }
  // a TF2-style model: a conv before and after a StatelessWhile and a
  // StatelessIf (tests/ctl_budget_test.sh runs it on the GPU within budgets)
  {
    const u = util(rngFor());
    const H = 24, C = 8;
    const w1 = u.vals(3 * 3 * 4 * C, () => u.uni(-0.5, 0.5));
    const w2 = u.vals(3 * 3 * C * 4, () => u.uni(-0.5, 0.5));
    const conv = (name, x, w) => node(name, 'Conv2D', [x, w], {
      T: T('float32'), strides: { list: { i: ['1', '1', '1', '1'] } }, padding: { s: Buffer.from('SAME').toString('base64') },
      data_format: { s: Buffer.from('NHWC').toString('base64') }, dilations: { list: { i: ['1', '1', '1', '1'] } },
    });
    out.push({
      name: 'TF2_gpu_model', op: 'StatelessIf', tol: 1e-3,
      inputs: [ph('float32', [1, H, H, 4], u.vals(H * H * 4, () => u.uni(-1, 1)), 'image'),
        { dtype: 'float32', shape: [3, 3, 4, C], values: w1, name: 'w1', const: true },
        { dtype: 'float32', shape: [3, 3, C, 4], values: w2, name: 'w2', const: true },
        { dtype: 'int32', shape: [], values: [0], name: 'i0', const: true },
        { dtype: 'int32', shape: [], values: [3], name: 'n', const: true },
        { dtype: 'int32', shape: [4], values: [0, 1, 2, 3], name: 'axes', const: true }],
      nodes: [conv('conv1', 'image', 'w1'), node('relu1', 'Relu', ['conv1'], { T: T('float32') }),
        node('loop', 'StatelessWhile', ['i0', 'n', 'relu1'], { cond: FN('g_cond'), body: FN('g_body') }),
        node('s0', 'Sum', ['loop:2', 'axes'], { T: T('float32'), keep_dims: { b: false } }),
        node('thr', 'Const', [], { value: { tensor: { dtype: 'DT_FLOAT', tensorShape: {} } }, dtype: { type: 'DT_FLOAT' } }),
        node('big', 'Greater', ['s0', 'thr'], { T: T('float32') })],
      opInputs: ['big', 'loop:2'],
      attr: { then_branch: FN('g_then'), else_branch: FN('g_else') },
      after: [conv('conv2', 'out0', 'w2'), node('result', 'Relu', ['conv2'], { T: T('float32') })],
      fnWeights: [{ name: 'thr', dtype: 'float32', shape: [], values: [100] },
        { name: 'g_one_i', dtype: 'int32', shape: [], values: [1] },
        { name: 'g_half', dtype: 'float32', shape: [], values: [0.5] },
        { name: 'g_one_f', dtype: 'float32', shape: [], values: [1] }],
      library: { function: [
        fn('g_cond', [['i', 'int32'], ['n', 'int32'], ['x', 'float32']], [['lt', 'bool', 'Less:z:0']],
          [node('Less', 'Less', ['i', 'n'], { T: T('int32') })]),
        fn('g_body', [['i', 'int32'], ['n', 'int32'], ['x', 'float32']],
          [['i1', 'int32', 'add_i:z:0'], ['n1', 'int32', 'id_n:output:0'], ['x1', 'float32', 'add_x:z:0']],
          [cnode('g_one_i', 'int32'), cnode('g_half', 'float32'), cnode('g_one_f', 'float32'),
            node('add_i', 'AddV2', ['i', 'g_one_i:output:0'], { T: T('int32') }),
            node('id_n', 'Identity', ['n'], { T: T('int32') }),
            node('mul', 'Mul', ['x', 'g_half:output:0'], { T: T('float32') }),
            node('add_x', 'AddV2', ['mul:z:0', 'g_one_f:output:0'], { T: T('float32') })]),
        ...branches('g'),
      ] },
    });
  }
  return out;
}

module.exports = { controlCases };
