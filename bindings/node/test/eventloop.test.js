'use strict';
// Runs happen on a worker: timers keep firing during executeAsync (and do not
// during execute, which shows the count can tell). One model's runs finish in
// the order they were asked for; execute() refuses to overtake queued runs.
const test = require('node:test');
const assert = require('node:assert/strict');
const { loadGraphModel, liveHandles } = require('..');
const { MODELS, tinyModel, tmpDir } = require('../testlib');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dims = [1, 8, 8, 4];
const tiny = (v) => ({ data: new Float32Array(256).fill(v), shape: dims, dtype: 'float32' });

test('the event loop keeps ticking during executeAsync, not during execute', async () => {
  const model = await loadGraphModel(`${MODELS}/selfie.json`);
  try {
    const x = { data: new Float32Array(256 * 256 * 3).fill(0.5), shape: [1, 256, 256, 3] };
    model.execute(x); // plans and compiles: the runs below only run
    let t0 = process.hrtime.bigint();
    model.execute(x);
    const one = Number(process.hrtime.bigint() - t0) / 1e6;
    const k = Math.min(200, Math.ceil(300 / one)); // at least 300 ms of runs, on any GPU
    let ticks = 0;
    const timer = setInterval(() => { ticks++; }, 2);
    await sleep(10);
    ticks = 0;
    t0 = process.hrtime.bigint();
    const outs = await Promise.all(Array.from({ length: k }, () => model.executeAsync(x)));
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const during = ticks;
    ticks = 0;
    for (let i = 0; i < k; i++) model.execute(x);
    const blocked = ticks; // timers cannot fire inside synchronous calls
    clearInterval(timer);
    console.log(`  ${k} executeAsync runs in ${ms.toFixed(0)} ms: ${during} ticks of a 2 ms timer; ${k} execute: ${blocked}`);
    assert.deepEqual(outs[k - 1].shape, [1, 256, 256, 1]);
    assert.ok(during >= ms / 2 / 4, `only ${during} ticks of a 2 ms timer in ${ms} ms of executeAsync`);
    assert.equal(blocked, 0);
  } finally {
    model.dispose();
  }
});

test('runs on one model complete in order, each with its own input', async () => {
  const model = await loadGraphModel(tinyModel(tmpDir('order')));
  try {
    const done = [];
    const runs = [1, 2, 3, 4, 5, 6].map((v) => model.executeAsync(tiny(v)).then((y) => {
      done.push(v);
      return y;
    }));
    assert.throws(() => model.execute(tiny(1)), { code: 'SI_BUSY' });
    const ys = await Promise.all(runs);
    assert.deepEqual(done, [1, 2, 3, 4, 5, 6]);
    ys.forEach((y, i) => {
      const v = i + 1;
      assert.ok(y.data.every((e) => e === v * v + v), `run ${v}: wrong output ${y.data[0]}`);
    });
    assert.equal(model.execute(tiny(7)).data[0], 56); // nothing queued now
  } finally {
    model.dispose();
  }
});

test('dispose with runs queued: the one running finishes, the rest are refused', async () => {
  const base = liveHandles();
  const model = await loadGraphModel(tinyModel(tmpDir('dispose')));
  assert.equal(liveHandles(), base + 1);
  const runs = [1, 2, 3].map((v) => model.executeAsync(tiny(v)));
  model.dispose();
  const [a, b, c] = await Promise.allSettled(runs);
  assert.equal(a.status, 'fulfilled');
  assert.equal(a.value.data[0], 2);
  for (const r of [b, c]) {
    assert.equal(r.status, 'rejected');
    assert.equal(r.reason.code, 'SI_DISPOSED');
  }
  assert.equal(liveHandles(), base, 'closed once the running one completed');
  await assert.rejects(model.executeAsync(tiny(1)), { code: 'SI_DISPOSED' });
});

test('two models run at once on two workers', async () => {
  // one file, written once: writing it again while the first worker reads it gave that
  // worker an empty file (seen once in CI)
  const file = tinyModel(tmpDir('two'));
  const [m1, m2] = await Promise.all([loadGraphModel(file), loadGraphModel(file)]);
  try {
    const ys = await Promise.all([m1.executeAsync(tiny(2)), m2.executeAsync(tiny(3)), m1.executeAsync(tiny(4))]);
    assert.deepEqual(ys.map((y) => y.data[0]), [6, 12, 20]);
  } finally {
    m1.dispose();
    m2.dispose();
  }
});
