// Per-op cases of Einsum (tests/ops/gen.js; cases.js appends them): the
// equations tfjs-core's einsum accepts and computes right (one or two
// operands, one arrow, no ellipsis, no label twice in an operand; every
// operand holding the first summed label), as attention blocks and dense
// layers converted from JAX or Keras write them, plus transposes, sums,
// outer and dot products, scalars, int32 and mixed operands, whitespace.
// The equations tfjs refuses or gets wrong are refused (tests/test_einsum.c).
'use strict';

function einsumCases(rngFor, util, { T, I, S }) {
  const out = [];
  const mk = (dtype, shape, values, name, isConst) => ({ dtype, shape, values, name, const: !!isConst });
  // eq, label sizes, options: dtypes per operand, which operands are weights
  const add = (name, eq, sizes, o = {}) => {
    const u = util(rngFor());
    const terms = eq.replace(/\s/g, '').split('->')[0].split(',');
    const inputs = terms.map((t, i) => {
      const shape = t.split('').map((l) => sizes[l]);
      const dt = (o.dtypes || [])[i] || 'float32';
      const n = u.n(shape);
      const v = dt === 'int32' ? u.vals(n, () => u.int(-9, 9)) : u.vals(n, () => u.uni(-2, 2));
      return mk(dt, shape, v, `x${i}`, (o.weights || []).includes(i));
    });
    out.push({ name, op: 'Einsum', attr: { equation: S(eq), N: I(terms.length), T: T('float32') }, inputs });
  };
  add('Einsum_matmul', 'ij,jk->ik', { i: 7, j: 9, k: 5 });
  add('Einsum_matmul_weight', 'ij,jk->ik', { i: 6, j: 40, k: 11 }, { weights: [1] });
  add('Einsum_batched', 'bij,bjk->bik', { b: 3, i: 4, j: 6, k: 5 });
  add('Einsum_attention_scores', 'bqhd,bkhd->bhqk', { b: 2, q: 5, h: 3, k: 6, d: 4 });
  add('Einsum_attention_values', 'bhqk,bkhd->bqhd', { b: 2, h: 3, q: 5, k: 6, d: 4 });
  add('Einsum_dense', 'abc,cd->abd', { a: 2, b: 6, c: 8, d: 7 }, { weights: [1] });
  add('Einsum_dense_4d', 'bhwc,cd->bhwd', { b: 1, h: 5, w: 4, c: 6, d: 3 }, { weights: [1] });
  add('Einsum_two_contracted', 'abcd,cdef->abef', { a: 2, b: 3, c: 4, d: 3, e: 2, f: 5 });
  add('Einsum_trans_b', 'ij,kj->ik', { i: 6, j: 7, k: 8 });
  add('Einsum_odd_order', 'ba,ac->cb', { a: 5, b: 6, c: 4 });
  add('Einsum_long_k', 'ij,jk->ik', { i: 3, j: 300, k: 6 });
  add('Einsum_matvec', 'ij,j->i', { i: 20, j: 9 });
  add('Einsum_vecmat', 'i,ij->j', { i: 18, j: 7 });
  add('Einsum_b_only_summed', 'ij,jk->i', { i: 6, j: 5, k: 4 });
  add('Einsum_a_only_summed', 'ijk,jl->il', { i: 4, j: 5, k: 3, l: 6 });
  add('Einsum_dot', 'i,i->', { i: 40 });
  add('Einsum_batch_dot', 'bi,bi->b', { b: 6, i: 9 });
  add('Einsum_outer', 'i,j->ij', { i: 18, j: 20 });
  add('Einsum_outer_batch', 'bi,bj->bij', { b: 3, i: 7, j: 6 });
  add('Einsum_scalar', 'ij,->ij', { i: 5, j: 6 });
  add('Einsum_transpose', 'ij->ji', { i: 5, j: 7 });
  add('Einsum_batch_transpose', 'bij->bji', { b: 3, i: 4, j: 5 });
  add('Einsum_sum_all', 'ijk->', { i: 3, j: 4, k: 5 });
  add('Einsum_sum_some', 'ijk->kj', { i: 3, j: 4, k: 5 });
  add('Einsum_identity', 'ij->ij', { i: 4, j: 6 });
  add('Einsum_whitespace', ' ij , jk -> ki ', { i: 5, j: 6, k: 4 });
  add('Einsum_int', 'ij,jk->ik', { i: 5, j: 6, k: 4 }, { dtypes: ['int32', 'int32'] });
  add('Einsum_int_sum', 'ijk->ik', { i: 3, j: 6, k: 4 }, { dtypes: ['int32'] });
  add('Einsum_mixed', 'ij,jk->ik', { i: 5, j: 6, k: 4 }, { dtypes: ['int32', 'float32'] });
  add('Einsum_empty', 'ij,jk->ik', { i: 5, j: 0, k: 4 });
  return out;
}

// An attention block as JAX/Keras exports write it (issue 15's "model with
// Einsum attention blocks"): q/k/v projections, scores, a scaled softmax, the
// weighted values and the output projection, all Einsum, plus the residual.
// tests/ctl_budget_test.sh runs it at no budget and at 1.25x its smallest.
function einsumBlockCases(rngFor, util, { T, I, S }) {
  const u = util(rngFor());
  const B = 2; const L = 24; const M = 32; const H = 4; const D = 8;
  const w = (shape, name) => ({ dtype: 'float32', shape, name, const: true,
    values: u.vals(u.n(shape), () => u.uni(-0.3, 0.3)) });
  const ein = (name, eq, a, b) => ({ name, op: 'Einsum', input: [a, b],
    attr: { equation: S(eq), N: I(2), T: T('float32') } });
  return [{
    name: 'Einsum_attention_block', op: 'Einsum', tol: 1e-4,
    inputs: [{ dtype: 'float32', shape: [B, L, M], name: 'x', values: u.vals(B * L * M, () => u.uni(-1, 1)) },
      w([M, H, D], 'wq'), w([M, H, D], 'wk'), w([M, H, D], 'wv'), w([H, D, M], 'wo'),
      { dtype: 'float32', shape: [], values: [1 / Math.sqrt(D)], name: 'scale', const: true }],
    nodes: [ein('q', 'bsm,mhd->bshd', 'x', 'wq'), ein('k', 'bsm,mhd->bshd', 'x', 'wk'),
      ein('v', 'bsm,mhd->bshd', 'x', 'wv'), ein('s', 'bqhd,bkhd->bhqk', 'q', 'k'),
      { name: 'sc', op: 'Mul', input: ['s', 'scale'], attr: { T: T('float32') } },
      { name: 'p', op: 'Softmax', input: ['sc'], attr: { T: T('float32') } }],
    opInputs: ['p', 'v'],
    attr: { equation: S('bhqk,bkhd->bqhd'), N: I(2), T: T('float32') },
    after: [ein('o', 'bshd,hdm->bsm', 'out0', 'wo'),
      { name: 'result', op: 'AddV2', input: ['o', 'x'], attr: { T: T('float32') } }],
    covers: ['Mul', 'Softmax', 'AddV2'],
  }];
}

module.exports = { einsumCases, einsumBlockCases };
