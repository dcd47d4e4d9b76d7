'use strict';
// A model nobody disposes is closed when it is collected, but not while a run of
// it is still queued: the run completes, then the model goes.
const test = require('node:test');
const assert = require('node:assert/strict');
const { loadGraphModel, liveHandles } = require('..');
const { tinyModel, tmpDir, getGc } = require('../testlib');

const gc = getGc();
const FILE = tinyModel(tmpDir('gc'));
const x = (v) => ({ data: new Float32Array(256).fill(v), shape: [1, 8, 8, 4] });

const tick = () => new Promise((r) => setImmediate(r));

// (deref() keeps its target alive to the end of the job that called it: never
// call it in the job that collects)
async function collect() {
  for (let i = 0; i < 10 && liveHandles() > 0; i++) {
    await tick();
    gc();
    await tick(); // finalizers run after the collection
  }
}

test('an undisposed model is freed by the collector', async () => {
  assert.equal(liveHandles(), 0);
  let model = await loadGraphModel(FILE);
  assert.equal(model.execute(x(1)).data[0], 2);
  assert.equal(liveHandles(), 1);
  const ref = new WeakRef(model);
  model = null;
  await collect();
  assert.equal(ref.deref(), undefined, 'collected');
  assert.equal(liveHandles(), 0, 'its handle closed');
});

test('collected with runs queued: they complete, then the model is freed', async () => {
  let model = await loadGraphModel(FILE);
  const ref = new WeakRef(model);
  const runs = [2, 3, 4].map((v) => model.executeAsync(x(v)));
  model = null;
  gc();
  gc();
  const ys = await Promise.all(runs);
  assert.deepEqual(ys.map((y) => y.data[255]), [6, 12, 20]);
  await collect();
  assert.equal(ref.deref(), undefined);
  assert.equal(liveHandles(), 0);
});
