'use strict';
// The README's example, as written: npm install of bindings/node into an empty
// folder (offline: nothing may be downloaded), then the program on a real model.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { ROOT, MODELS, tmpDir } = require('../testlib');

test("README: npm install ./bindings/node, then its example runs as written", () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const m = /```js\n(\/\/ app\.js:[^\n]*\n[\s\S]*?)```/.exec(readme);
  assert.ok(m, 'the README has the example');
  const app = tmpDir('app');
  fs.writeFileSync(path.join(app, 'package.json'), '{"name": "app", "private": true}\n');
  fs.writeFileSync(path.join(app, 'app.js'), m[1]);
  const npm = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', path.join(ROOT, 'bindings', 'node')],
    { cwd: app, encoding: 'utf8' });
  assert.equal(npm.status, 0, `npm install: ${npm.stdout}${npm.stderr}`);
  const run = spawnSync(process.execPath, ['app.js', path.join(MODELS, 'emotion.json')], { cwd: app, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  console.log(`  ${run.stdout.trim().replace(/\s+/g, ' ')}`);
  assert.match(run.stdout, /^Identity \[ 1, 7 \] Float32Array\(7\) \[[\s\S]*\] peak GPU [1-9]\d* bytes\n$/);
  fs.rmSync(app, { recursive: true });
});
