#!/usr/bin/env node
// tests/OPS.md and its check (issue 15): TensorFlow.js's converter op list
// (tfjs-converter dist/operations/op_list/*.js, in the oracle's node_modules)
// against streaminfer's op table (`test_ops --list-ops`), the per-op test
// results (`test_ops CASES RESULTS.tsv`) and the written exclusion list
// (tests/ops/EXCLUDED: "Op<TAB>reason" a line). A case counts for its own op
// and for the ops its results row says it covers.
//
//   node tests/ops/table.js --check KNOWN.tsv
//       fails when an op of the converter's list is unknown and not excluded,
//       or excluded although it is known (the list must shrink as ops land)
//   node tests/ops/table.js KNOWN.tsv RESULTS.tsv > tests/OPS.md
'use strict';

const fs = require('fs');
const path = require('path');

const HERE = __dirname;
const OPLIST = path.join(HERE, '..', 'oracle', 'node_modules', '@tensorflow', 'tfjs-converter',
  'dist', 'operations', 'op_list');

function converterOps() {
  const ops = [];
  for (const f of fs.readdirSync(OPLIST).filter((x) => x.endsWith('.js')).sort()) {
    const family = f.replace(/\.js$/, '');
    for (const o of require(path.join(OPLIST, f)).json) ops.push({ op: o.tfOpName, family });
  }
  if (ops.length < 200) throw new Error(`only ${ops.length} ops read from ${OPLIST}`);
  return ops;
}

function readTsv(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.split('\t'));
}

function excluded() {
  const m = new Map();
  for (const [op, reason] of readTsv(path.join(HERE, 'EXCLUDED'))) {
    if (!reason) throw new Error(`tests/ops/EXCLUDED: ${op} has no reason`);
    m.set(op, reason);
  }
  return m;
}

function check(knownFile) {
  const known = new Map(readTsv(knownFile));
  const excl = excluded();
  const bad = [];
  for (const { op } of converterOps()) {
    if (!known.has(op) && !excl.has(op)) bad.push(`${op}: unknown and not in tests/ops/EXCLUDED`);
    if (known.has(op) && excl.has(op)) bad.push(`${op}: known (${known.get(op)}) but still in tests/ops/EXCLUDED`);
  }
  const listed = new Set(converterOps().map((o) => o.op));
  for (const op of excl.keys()) if (!listed.has(op)) bad.push(`${op}: in tests/ops/EXCLUDED but not in the converter's list`);
  for (const b of bad) process.stdout.write(`ops: ${b}\n`);
  const n = listed.size;
  const k = [...listed].filter((o) => known.has(o)).length;
  process.stdout.write(`ops: ${k} of ${n} converter ops known, ${excl.size} excluded${bad.length ? `, ${bad.length} problems` : ''}\n`);
  return bad.length ? 1 : 0;
}

function table(knownFile, resultsFile) {
  const known = new Map(readTsv(knownFile));
  const excl = excluded();
  const res = new Map();
  // a case counts for its op and for the other ops its graph covers (gen.js
  // graphCovers); the GPU and tiled columns come from an op's own cases only
  const credit = (op, row) => {
    if (!res.has(op)) res.set(op, []);
    res.get(op).push(row);
  };
  for (const [op, name, host, gpu, steps, tiled, covers] of readTsv(resultsFile)) {
    credit(op, { name, host, gpu, steps: Number(steps), tiled, own: true });
    for (const o of covers && covers !== '-' ? covers.split(',') : []) credit(o, { name, host, gpu, own: false });
  }
  const rows = [];
  let nKnown = 0; let nTested = 0;
  const ops = converterOps();
  for (const { op, family } of ops) {
    const fam = known.get(op);
    const r = res.get(op) || [];
    let host = '—'; let gpu = '—'; let tiled = '—'; let test = '—';
    if (fam) {
      nKnown++;
      host = fam === 'interpreter' ? 'interpreter' : 'yes';
      if (r.length) {
        nTested++;
        const allOk = r.every((x) => x.host === 'ok' && x.gpu === 'ok');
        const own = r.filter((x) => x.own);
        const nOther = r.length - own.length;
        if (own.length) {
          gpu = own.some((x) => x.steps > 0) ? 'yes' : 'folded/host';
          tiled = own.some((x) => x.tiled === 'yes') ? 'yes' : (own.some((x) => x.tiled === 'no') ? 'no' : '—');
        } else {
          gpu = fam === 'interpreter' || fam === 'graph' ? 'host' : 'untested';
        }
        const parts = [];
        if (own.length) parts.push(`${own.length} case${own.length > 1 ? 's' : ''}`);
        if (nOther) parts.push(`in ${nOther} case${nOther > 1 ? 's' : ''} of other ops`);
        test = `tests/ops: ${parts.join(', ')}${allOk ? '' : ' (FAILING)'}`;
      } else {
        gpu = fam === 'interpreter' || fam === 'graph' ? 'host' : 'untested';
        test = 'no per-op case yet';
      }
    } else {
      host = excl.has(op) ? `excluded: ${excl.get(op)}` : 'UNKNOWN, not excluded';
    }
    rows.push(`| ${op} | ${family} | ${fam || '—'} | ${host} | ${gpu} | ${tiled} | ${test} |`);
  }
  const out = [];
  out.push('# Ops: TensorFlow.js\'s converter list against streaminfer');
  out.push('');
  out.push('Made by `tests/ops/make_table.sh BUILD_DIR` (issue 15): every op of');
  out.push('`@tensorflow/tfjs-converter` 4.22\'s `dist/operations/op_list/*.js` (converter family),');
  out.push('the streaminfer family that runs it (`core/op_*.c`, the program builder: graph, or the host');
  out.push('interpreter), and what its per-op tests (`tests/ops/`, single-op models against TensorFlow.js,');
  out.push('host and GPU backends) show: GPU yes = at least one case ran GPU kernels; tiled yes = a case');
  out.push('split its step under a budget below it, bitwise the unsplit outputs. Unknown ops are refused');
  out.push('when a model is opened; `tests/ops/EXCLUDED` lists them with the reason, and `make test` fails');
  out.push('on an unknown op missing from it.');
  out.push('');
  out.push('| op | converter family | streaminfer | host | GPU | tiled | test |');
  out.push('|---|---|---|---|---|---|---|');
  out.push(...rows);
  out.push('');
  out.push(`${nKnown} of ${ops.length} ops known, ${nTested} with per-op cases, ${ops.length - nKnown} excluded.`);
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}

const a = process.argv.slice(2);
try {
  if (a[0] === '--check' && a.length === 2) process.exit(check(a[1]));
  if (a.length === 2) process.exit(table(a[0], a[1]));
  throw new Error('usage: table.js --check KNOWN.tsv | table.js KNOWN.tsv RESULTS.tsv');
} catch (e) {
  process.stderr.write(`table.js: error: ${e.message}\n`);
  process.exit(2);
}
