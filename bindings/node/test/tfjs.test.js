'use strict';
// TensorFlow.js tensors in, TensorFlow.js tensors out (plain objects in, plain out),
// the same bits either way; @tensorflow/tfjs-core found from the main program.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');
const { spawnSync } = require('child_process');
const { loadGraphModel } = require('..');
const { ROOT, loadRef, relError, bytesOf, oracleTf } = require('../testlib');

test('tfjs tensors in: tfjs tensors out, same bits as plain objects, match TensorFlow.js', async () => {
  const tf = oracleTf();
  await tf.setBackend('cpu');
  const ref = loadRef('emotion');
  const model = await loadGraphModel(ref.json, { tf });
  try {
    const x = ref.inputs.input_1;
    const plain = await model.executeAsync(x);
    assert.equal(plain instanceof tf.Tensor, false);
    assert.ok(plain.data instanceof Float32Array);
    const t = tf.tensor(x.data, x.shape, x.dtype);
    for (const out of [await model.executeAsync(t), model.execute([t]), model.execute({ 'input_1:0': t })]) {
      assert.ok(out instanceof tf.Tensor, 'a tfjs Tensor');
      assert.deepEqual(out.shape, ref.outputs[0].shape);
      assert.equal(out.dtype, 'float32');
      assert.ok(bytesOf(out.dataSync()).equals(bytesOf(plain.data)), 'same bits as the plain run');
      assert.ok(relError({ data: out.dataSync() }, ref.outputs[0]) <= 1e-3);
      out.dispose();
    }
    // a named output as a string gives one tensor; as a one-name array too (as tfjs)
    assert.ok(model.execute(t, 'Identity') instanceof tf.Tensor);
    assert.ok(model.execute(t, ['Identity:0']) instanceof tf.Tensor);
    t.dispose();
  } finally {
    model.dispose();
  }
});

test('tfjs-core is found where the main program resolves it', () => {
  const script = `
    const tf = require('@tensorflow/tfjs-core'); require('@tensorflow/tfjs-backend-cpu');
    const { loadGraphModel } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const { tinyModel, tmpDir } = require(${JSON.stringify(path.join(__dirname, '..', 'testlib.js'))});
    (async () => {
      const m = await loadGraphModel(tinyModel(tmpDir('tf')));
      const y = await m.executeAsync(tf.fill([1, 8, 8, 4], 3));
      console.log(y instanceof tf.Tensor, y.dataSync()[0]);
      m.dispose();
    })();`;
  const r = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8', env: { ...process.env, NODE_PATH: path.join(ROOT, 'tests', 'oracle', 'node_modules') },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'true 12');
});
