'use strict';
// Bad models, options and inputs: Errors with a code and a message naming what is
// wrong; inputs refused before the library runs anything; disposed models refuse.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { loadGraphModel, liveHandles } = require('..');
const { tinyModel, tmpDir } = require('../testlib');

const dir = tmpDir('errors');
const TINY = tinyModel(dir);
const good = () => ({ data: new Float32Array(256).fill(1), shape: [1, 8, 8, 4], dtype: 'float32' });

test('models that cannot be opened', async () => {
  const base = liveHandles();
  await assert.rejects(loadGraphModel(path.join(dir, 'missing.json')),
    (e) => e.code === 'SI_MODEL' && e.status === 'SI_ERR_IO' && e.message.includes('missing.json'));
  const bad = path.join(dir, 'bad.json');
  fs.writeFileSync(bad, '{"format": "graph-model", "modelTopology": {"node": [');
  await assert.rejects(loadGraphModel(bad), (e) => e.code === 'SI_MODEL' && e.message.includes('bad.json'));
  const op = path.join(dir, 'op.json');
  fs.writeFileSync(op, JSON.stringify({ format: 'graph-model', weightsManifest: [], modelTopology: { node: [
    { name: 'x', op: 'Placeholder', attr: { dtype: { type: 'DT_FLOAT' }, shape: { shape: { dim: [{ size: '4' }] } } } },
    { name: 'y', op: 'NoSuchOp', input: ['x'], attr: {} }] } }));
  await assert.rejects(async () => (await loadGraphModel(op)).executeAsync({ data: new Float32Array(4), shape: [4] }),
    (e) => e.code === 'SI_MODEL' && e.message.includes('NoSuchOp'));
  assert.equal(liveHandles() - base <= 1, true); // the NoSuchOp model opened, if anything
});

test('options', async () => {
  await assert.rejects(loadGraphModel(TINY, { vram: 'lots' }), { code: 'SI_ARG', message: /vram/ });
  await assert.rejects(loadGraphModel(TINY, { vram: -1 }), { code: 'SI_ARG' });
  await assert.rejects(loadGraphModel(TINY, { io: 'nfs' }), { code: 'SI_ARG', message: /io: 'nfs'/ });
  await assert.rejects(loadGraphModel(TINY, { backend: 'tpu' }), { code: 'SI_ARG', message: /backend/ });
  await assert.rejects(loadGraphModel(TINY, { fromTFHub: true }), { code: 'SI_ARG', message: /fromTFHub/ });
  await assert.rejects(loadGraphModel(42), { code: 'SI_ARG' });
  const m = await loadGraphModel(`file://${TINY}`, { vram: '1M', io: 'uring', backend: 'host' });
  assert.equal(m.execute(good()).data[0], 2);
  assert.equal(m.stats().budget_bytes, 1 << 20);
  m.dispose();
});

// x (free batch) padded symmetrically by one image on each side of the batch axis: the
// pad reads the images mirrored, so its parts bind the input whole (core/tile_rules.c);
// an elementwise model's windows of the input are inputs of their own, any batch fits
function padModel(d) {
  const f = { type: 'DT_FLOAT' }, i32 = { type: 'DT_INT32' };
  const node = [
    { name: 'x', op: 'Placeholder', attr: { dtype: f, shape: { shape: { dim: [-1, 8, 8, 4].map((s) => ({ size: String(s) })) } } } },
    { name: 'p', op: 'Const', attr: { dtype: i32, value: { tensor: { dtype: 'DT_INT32', tensorShape: { dim: [{ size: '4' }, { size: '2' }] } } } } },
    { name: 'y', op: 'MirrorPad', input: ['x', 'p'], attr: { T: f, Tpaddings: i32, mode: { s: Buffer.from('SYMMETRIC').toString('base64') } } },
  ];
  const file = path.join(d, 'pad.json');
  fs.writeFileSync(path.join(d, 'pad.bin'), Buffer.from(new Int32Array([1, 1, 0, 0, 0, 0, 0, 0]).buffer));
  fs.writeFileSync(file, JSON.stringify({ format: 'graph-model', modelTopology: { node },
    weightsManifest: [{ paths: ['pad.bin'], weights: [{ name: 'p', shape: [4, 2], dtype: 'int32' }] }] }));
  return file;
}

test('a budget no plan fits', async () => {
  const budget = (e) => e.code === 'SI_BUDGET' && e.status === 'SI_ERR_BUDGET' &&
    /smallest budget that could work is [\d.]+ [KMG]iB \(\d+ bytes\)/.test(e.message);
  await assert.rejects(loadGraphModel(TINY, { vram: '1K' }), budget); // fixed shapes: planned at open
  // a free batch: what fits one image does not fit four, found when the run plans
  const free = await loadGraphModel(padModel(dir), { vram: 4096 });
  try {
    const four = { data: new Float32Array(1024), shape: [4, 8, 8, 4] };
    const one = free.execute(good());
    assert.deepEqual(one.shape, [3, 8, 8, 4]);
    assert.equal(one.data[767], 1);
    await assert.rejects(free.executeAsync(four), budget);
    assert.throws(() => free.execute(four), budget);
    assert.equal((await free.executeAsync(good())).data[0], 1, 'usable after the refusal');
  } finally {
    free.dispose();
  }
});

test('bad inputs are refused before any run, naming the input', async () => {
  const m = await loadGraphModel(TINY);
  try {
    m.execute(good());
    const before = m.stats();
    const cases = [
      [{ data: new Int32Array(256), shape: [1, 8, 8, 4], dtype: 'int32' }, /input 'x' must be float32, got int32/],
      [{ data: new Float32Array(256), shape: [1, 8, 8, 4], dtype: 'bool' }, /input 'x' must be float32, got bool/],
      [{ data: new Float32Array(256), shape: [1, 16, 4, 4] }, /input 'x' must have shape \[1,8,8,4\], got \[1,16,4,4\]/],
      [{ data: new Float32Array(256), shape: [256] }, /input 'x' must have shape/],
      [{ data: new Float32Array(255), shape: [1, 8, 8, 4] }, /input 'x' has 255 values, its shape \[1,8,8,4\] needs 256/],
      [{ data: new Float64Array(256), shape: [1, 8, 8, 4], dtype: 'float32' }, /input 'x': float32 data must be a Float32Array, got Float64Array/],
      [{ data: new Float32Array(256), shape: [1, 8, -8, 4] }, /input 'x': bad shape/],
      [{ shape: [1, 8, 8, 4], dtype: 'float32', data: null }, /input 'x'/],
      [[good(), good()], /the model has 1 input \(x\), 2 given/],
      [{ y: good() }, /no input named 'y' \(its inputs: x\)/],
      [{}, /input 'x' missing/],
      [[7], /input 'x' is not a tensor/],
      [42, /inputs must be a tensor/],
    ];
    for (const [input, message] of cases) {
      assert.throws(() => m.execute(input), { code: 'SI_INPUT', message });
      const p = m.executeAsync(input);
      assert.ok(p instanceof Promise, 'executeAsync rejects, it does not throw');
      await assert.rejects(p, { code: 'SI_INPUT', message });
    }
    assert.throws(() => m.execute(good(), 'nope'), { code: 'SI_ARG', message: /no output named 'nope' \(its outputs: y\)/ });
    assert.deepEqual(m.stats(), before, 'nothing ran');
    assert.equal(m.execute({ data: Array(256).fill(2), shape: [1, 8, 8, 4], dtype: 'float32' }).data[0], 6);
  } finally {
    m.dispose();
  }
});

test('a disposed model refuses politely', async () => {
  const base = liveHandles();
  const m = await loadGraphModel(TINY);
  m.dispose();
  assert.equal(liveHandles(), base);
  assert.throws(() => m.execute(good()), { code: 'SI_DISPOSED', message: 'the model was disposed' });
  await assert.rejects(m.executeAsync(good()), { code: 'SI_DISPOSED' });
  assert.throws(() => m.stats(), { code: 'SI_DISPOSED' });
  m.dispose(); // twice: nothing happens
  assert.equal(m.inputs[0].name, 'x'); // what it was stays readable
});
