'use strict';
// 1,000 runs of a small model: resident memory stays flat (the 256 KiB input copy
// or output of each run, leaked, would add 225 MiB after the first 100; the heap
// and the allocators settle in steps of a few MiB) and the count of live library
// handles does not grow; models opened and disposed leave none behind.
const test = require('node:test');
const assert = require('node:assert/strict');
const { loadGraphModel, liveHandles } = require('..');
const { tinyModel, tmpDir, getGc } = require('../testlib');

const gc = getGc();
const MiB = 1 << 20;
const dir = tmpDir('leak');
const shape = [1, 128, 128, 4];

async function rss() {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r)); // finalizers run after the collection
  }
  return process.memoryUsage().rss;
}

test('1,000 runs: flat RSS, no growth in live handles', async () => {
  const base = liveHandles();
  const model = await loadGraphModel(tinyModel(dir, shape));
  const x = { data: new Float32Array(128 * 128 * 4).fill(2), shape, dtype: 'float32' };
  let warm = 0;
  let grown = 0;
  try {
    for (let i = 0; i < 1000; i++) {
      const y = i % 2 ? model.execute(x) : await model.executeAsync(x);
      if (y.data[65535] !== 6) throw new Error(`run ${i}: ${y.data[65535]}`);
      if (i === 99) warm = await rss();
      if (i % 100 === 99) assert.equal(liveHandles(), base + 1);
    }
    grown = (await rss()) - warm;
  } finally {
    model.dispose();
  }
  console.log(`  RSS after 100 runs ${(warm / MiB).toFixed(1)} MiB, then ${(grown / MiB).toFixed(2)} MiB more after 900 more`);
  assert.ok(grown < 32 * MiB, `RSS grew by ${(grown / MiB).toFixed(1)} MiB over 900 runs`);
  assert.equal(liveHandles(), base);
});

test('models opened and disposed, or left to the collector, leave no handle', async () => {
  const base = liveHandles();
  const file = tinyModel(dir, [1, 8, 8, 4], 'small.json');
  for (let i = 0; i < 20; i++) {
    const m = await loadGraphModel(file);
    assert.equal(liveHandles(), base + 1);
    m.dispose();
  }
  assert.equal(liveHandles(), base);
  for (let i = 0; i < 10; i++) await loadGraphModel(file);
  await rss();
  assert.equal(liveHandles(), base, 'the collector closed the ten models nobody kept');
});
