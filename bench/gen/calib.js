// Data-dependent initialization: what a trained network's batch norms do.
// One forward pass in plain JavaScript over seeded random inputs; each conv that
// the builder marked is scaled right after it is computed so that its output has
// root mean square gamma (per output channel gamma drawn at random), offset beta:
//   'fold': batch norm folded into the conv (weights scaled, bias set), as the
//           converter folds it;
//   'bn':   the un-fused batch norm's Mul and AddV2 constants are set.
// Later layers then see the normalized activations, so the statistics stay the
// same through any depth. He-style random weights are the starting point.
'use strict';

function size(shape) { return shape.reduce((a, b) => a * b, 1); }

function samePad(n, k, s, d) {
  const ke = (k - 1) * d + 1;
  const out = Math.ceil(n / s);
  const total = Math.max((out - 1) * s + ke - n, 0);
  return [out, Math.floor(total / 2)];
}

function outDims(n, k, s, d, padding) {
  if (padding === 'SAME') return samePad(n, k, s, d);
  return [Math.floor((n - ((k - 1) * d + 1)) / s) + 1, 0];
}

const attrS = (n, k) => Buffer.from(n.attr[k].s, 'base64').toString('latin1');
const attrI = (n, k) => n.attr[k].list.i.map(Number);

function conv2d(x, w, n, depthwise) {
  const [, H, W, C] = x.shape;
  const [kh, kw, , m] = w.shape;
  const cout = depthwise ? C * m : m;
  const st = attrI(n, 'strides'); const dl = attrI(n, 'dilations'); const pad = attrS(n, 'padding');
  const [oh, pt] = outDims(H, kh, st[1], dl[1], pad);
  const [ow, pl] = outDims(W, kw, st[2], dl[2], pad);
  const out = new Float32Array(oh * ow * cout);
  const xd = x.data; const wd = w.data;
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      const o = (oy * ow + ox) * cout;
      for (let ky = 0; ky < kh; ky++) {
        const iy = oy * st[1] - pt + ky * dl[1];
        if (iy < 0 || iy >= H) continue;
        for (let kx = 0; kx < kw; kx++) {
          const ix = ox * st[2] - pl + kx * dl[2];
          if (ix < 0 || ix >= W) continue;
          const xi = (iy * W + ix) * C;
          const wi = (ky * kw + kx) * C * m;
          if (depthwise) {
            for (let c = 0; c < C; c++) out[o + c] += xd[xi + c] * wd[wi + c];
          } else {
            for (let c = 0; c < C; c++) {
              const v = xd[xi + c];
              if (v === 0) continue;
              const wr = wi + c * m;
              for (let j = 0; j < m; j++) out[o + j] += v * wd[wr + j];
            }
          }
        }
      }
    }
  }
  return { shape: [1, oh, ow, cout], data: out };
}

function pool(x, n, max) {
  const [, H, W, C] = x.shape;
  const k = attrI(n, 'ksize'); const st = attrI(n, 'strides'); const pad = attrS(n, 'padding');
  const [oh, pt] = outDims(H, k[1], st[1], 1, pad);
  const [ow, pl] = outDims(W, k[2], st[2], 1, pad);
  const out = new Float32Array(oh * ow * C);
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      for (let c = 0; c < C; c++) {
        let acc = max ? -Infinity : 0; let cnt = 0;
        for (let ky = 0; ky < k[1]; ky++) {
          const iy = oy * st[1] - pt + ky;
          if (iy < 0 || iy >= H) continue;
          for (let kx = 0; kx < k[2]; kx++) {
            const ix = ox * st[2] - pl + kx;
            if (ix < 0 || ix >= W) continue;
            const v = x.data[(iy * W + ix) * C + c];
            if (max) acc = Math.max(acc, v); else acc += v;
            cnt++;
          }
        }
        out[(oy * ow + ox) * C + c] = max ? acc : acc / cnt;
      }
    }
  }
  return { shape: [1, oh, ow, C], data: out };
}

function resize(x, oh, ow, bilinear, halfPixel) {
  const [, H, W, C] = x.shape;
  const out = new Float32Array(oh * ow * C);
  const sy = H / oh; const sx = W / ow;
  for (let oy = 0; oy < oh; oy++) {
    for (let ox = 0; ox < ow; ox++) {
      const o = (oy * ow + ox) * C;
      if (!bilinear) {
        const iy = Math.min(Math.floor(oy * sy), H - 1); const ix = Math.min(Math.floor(ox * sx), W - 1);
        for (let c = 0; c < C; c++) out[o + c] = x.data[(iy * W + ix) * C + c];
        continue;
      }
      const fy = Math.max(0, halfPixel ? (oy + 0.5) * sy - 0.5 : oy * sy);
      const fx = Math.max(0, halfPixel ? (ox + 0.5) * sx - 0.5 : ox * sx);
      const y0 = Math.min(Math.floor(fy), H - 1); const x0 = Math.min(Math.floor(fx), W - 1);
      const y1 = Math.min(y0 + 1, H - 1); const x1 = Math.min(x0 + 1, W - 1);
      const dy = fy - y0; const dx = fx - x0;
      for (let c = 0; c < C; c++) {
        const a = x.data[(y0 * W + x0) * C + c]; const b = x.data[(y0 * W + x1) * C + c];
        const p = x.data[(y1 * W + x0) * C + c]; const q = x.data[(y1 * W + x1) * C + c];
        const top = a + (b - a) * dx; const bot = p + (q - p) * dx;
        out[o + c] = top + (bot - top) * dy;
      }
    }
  }
  return { shape: [1, oh, ow, C], data: out };
}

function binary(a, b, f) {
  let big = a; let small = b; let swap = false;
  if (size(b.shape) > size(a.shape)) { big = b; small = a; swap = true; }
  const n = big.data.length; const m = small.data.length;
  if (n % m !== 0) throw new Error(`calib: cannot broadcast [${a.shape}] and [${b.shape}]`);
  const out = new Float32Array(n);
  const bd = big.data; const sd = small.data;
  for (let i = 0; i < n; i++) out[i] = swap ? f(sd[i % m], bd[i]) : f(bd[i], sd[i % m]);
  return { shape: big.shape, data: out };
}

function map(x, f) {
  const out = new Float32Array(x.data.length);
  for (let i = 0; i < out.length; i++) out[i] = f(x.data[i]);
  return { shape: x.shape, data: out };
}

function concat(xs, axis) {
  const outer = size(xs[0].shape.slice(0, axis));
  const inners = xs.map((x) => size(x.shape.slice(axis)));
  const total = inners.reduce((a, b) => a + b, 0);
  const out = new Float32Array(outer * total);
  for (let o = 0; o < outer; o++) {
    let off = o * total;
    xs.forEach((x, i) => { out.set(x.data.subarray(o * inners[i], (o + 1) * inners[i]), off); off += inners[i]; });
  }
  const shape = xs[0].shape.slice();
  shape[axis] = xs.reduce((a, x) => a + x.shape[axis], 0);
  return { shape, data: out };
}

// The scale for a conv's output: one per tensor, the root mean square over all
// calibration inputs, and no centering. Per-channel mean/variance (a batch norm's
// own statistics) taken from a few random inputs at small maps made the network
// chaotic: a channel nearly flat on those inputs got a huge scale, and the next
// input's differences grew block after block (effdet-d7 outputs ~1e5).
function channelStats(ts) {
  const C = ts[0].shape[ts[0].shape.length - 1];
  const count = ts.reduce((a, t) => a + t.data.length, 0);
  const s2 = new Float64Array(C);
  for (const t of ts) for (let i = 0; i < t.data.length; i++) s2[i % C] += t.data[i] * t.data[i];
  let ms = 0;
  for (let c = 0; c < C; c++) ms += s2[c];
  ms /= count;
  const mean = new Float64Array(C); const std = new Float64Array(C);
  for (let c = 0; c < C; c++) {
    mean[c] = 0;
    std[c] = Math.sqrt(ms) + 1e-3;
  }
  return { mean, std, C };
}

const ACT = { Relu: (v) => Math.max(v, 0), Relu6: (v) => Math.min(Math.max(v, 0), 6) };

function evalNode(n, ins, overrides) {
  switch (n.op) {
    case 'Conv2D': case '_FusedConv2D': case 'DepthwiseConv2dNative': case 'FusedDepthwiseConv2dNative':
      return conv2d(ins[0], ins[1], n, n.op.includes('Depthwise'));
    case 'Mul': return binary(ins[0], ins[1], (a, b) => a * b);
    case 'AddV2': case 'Add': return binary(ins[0], ins[1], (a, b) => a + b);
    case 'Sub': return binary(ins[0], ins[1], (a, b) => a - b);
    case 'Sigmoid': return map(ins[0], (v) => 1 / (1 + Math.exp(-v)));
    case 'Relu': return map(ins[0], ACT.Relu);
    case 'Relu6': return map(ins[0], ACT.Relu6);
    case 'Identity': return ins[0];
    case 'Mean': {
      const [, H, W, C] = ins[0].shape;
      const out = new Float32Array(C);
      for (let i = 0; i < ins[0].data.length; i++) out[i % C] += ins[0].data[i];
      for (let c = 0; c < C; c++) out[c] /= H * W;
      return { shape: [1, 1, 1, C], data: out };
    }
    case 'MaxPool': return pool(ins[0], n, true);
    case 'AvgPool': return pool(ins[0], n, false);
    case 'ResizeNearestNeighbor': case 'ResizeBilinear': {
      const [h, w] = overrides[n.name] || Array.from(ins[1].data);
      return resize(ins[0], h, w, n.op === 'ResizeBilinear', n.attr.half_pixel_centers.b);
    }
    case 'ConcatV2': return concat(ins.slice(0, -1), ins[ins.length - 1].data[0]);
    case 'Reshape': {
      const dims = Array.from(ins[1].data);
      const known = dims.filter((d) => d >= 0).reduce((a, b) => a * b, 1);
      const total = ins[0].data.length;
      if (dims.includes(-1)) dims[dims.indexOf(-1)] = total / known;
      return size(dims) === total ? { shape: dims, data: ins[0].data } : null;
    }
    case 'Softmax': {
      const C = ins[0].shape[ins[0].shape.length - 1];
      const out = new Float32Array(ins[0].data.length);
      for (let r = 0; r < out.length; r += C) {
        let m = -Infinity; for (let c = 0; c < C; c++) m = Math.max(m, ins[0].data[r + c]);
        let s = 0; for (let c = 0; c < C; c++) { out[r + c] = Math.exp(ins[0].data[r + c] - m); s += out[r + c]; }
        for (let c = 0; c < C; c++) out[r + c] /= s;
      }
      return { shape: ins[0].shape, data: out };
    }
    default: throw new Error(`calib: op ${n.op} not implemented`);
  }
}

// Runs the graph on each of `inputs` in lockstep and normalizes every marked conv
// on the statistics over all of them (the variation between inputs counts, as
// it does for a trained batch norm). Stops quietly at the first node whose shapes
// do not fit (the reduced crop grid's final reshapes).
function calibrate(g, inputs, overrides = {}, keep = null) {
  const rng = g.rng;
  const consts = new Map(g.weights.map((w) => [w.name, { shape: w.shape, data: w.data }]));
  const vals = inputs.map(() => new Map());
  const lastUse = new Map();
  for (const n of g.nodes) for (const nm of n.input || []) lastUse.set(nm, n);
  const done = new Set();
  let normalized = 0;
  for (const n of g.nodes) {
    if (n.op === 'Const') continue;
    const ys = [];
    for (let k = 0; k < inputs.length; k++) {
      const ins = (n.input || []).map((nm) => {
        const v = consts.get(nm) || vals[k].get(nm);
        if (!v) throw new Error(`calib: no value for ${nm}`);
        return v;
      });
      ys.push(n.op === 'Placeholder' ? inputs[k] : evalNode(n, ins, overrides));
    }
    if (ys.some((y) => !y)) break;
    if (n.op.includes('Conv')) {
      const cal = g.calib.get(n.name);
      const fused = n.attr.fused_ops ? n.attr.fused_ops.list.s.map((s) => Buffer.from(s, 'base64').toString()) : [];
      const wName = n.input[1];
      if (cal && cal.kind === 'fold' && !done.has(wName)) {
        // batch norm folded: w *= gamma/std, bias = beta - mean*gamma/std
        const { mean, std, C } = channelStats(ys);
        const w = consts.get(wName).data; const b = consts.get(n.input[2]).data;
        const sc = new Float64Array(C);
        for (let c = 0; c < C; c++) {
          sc[c] = rng.uniform(cal.gamma[0], cal.gamma[1]) / std[c];
          b[c] = rng.uniform(cal.beta[0], cal.beta[1]) - mean[c] * sc[c];
        }
        for (let i = 0; i < w.length; i++) w[i] *= sc[i % C];
        for (const y of ys) for (let i = 0; i < y.data.length; i++) y.data[i] *= sc[i % C];
        done.add(wName); normalized++;
      }
      for (let k = 0; k < ys.length; k++) {
        if (fused[0] === 'BiasAdd') {
          const b = consts.get(n.input[2]).data; const C = b.length;
          for (let i = 0; i < ys[k].data.length; i++) ys[k].data[i] += b[i % C];
        }
        if (fused[1]) ys[k] = map(ys[k], ACT[fused[1]]);
      }
      if (cal && cal.kind === 'bn' && !done.has(cal.mul)) {
        // the un-fused batch norm that follows: Mul by gamma/std, AddV2 beta - mean*gamma/std
        const { mean, std, C } = channelStats(ys);
        const mul = consts.get(cal.mul).data; const add = consts.get(cal.add).data;
        for (let c = 0; c < C; c++) {
          mul[c] = rng.uniform(cal.gamma[0], cal.gamma[1]) / std[c];
          add[c] = rng.uniform(cal.beta[0], cal.beta[1]) - mean[c] * mul[c];
        }
        done.add(cal.mul); normalized++;
      }
    }
    ys.forEach((y, k) => vals[k].set(n.name, y));
    if (keep) keep.set(n.name, ys[0]);
    // drop what no later node reads (the graph is in topological order)
    for (const nm of n.input || []) {
      if (lastUse.get(nm) === n && !consts.has(nm)) for (const v of vals) v.delete(nm);
    }
  }
  const marked = new Set(g.nodes.filter((n) => g.calib.has(n.name))
    .map((n) => { const c = g.calib.get(n.name); return c.kind === 'bn' ? c.mul : n.input[1]; }));
  return { normalized, marked: marked.size };
}

module.exports = { calibrate };
