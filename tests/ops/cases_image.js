// Per-op cases of the image family (tests/ops/gen.js; cases.js appends them):
// CropAndResize as tfjs-backend-cpu runs it. Boxes and box_ind are model
// inputs (Placeholders: data the model computes, e.g. proposals after an NMS)
// or weights; the edge cases are tfjs's: flipped boxes, boxes past the image
// (extrapolation_value), crop size 1 (the box's centre), box_ind past the
// batch (zeros) or negative (NaN), NaN coordinates, Math.round's halves in
// nearest, and a full box whose last row float64 puts just past the image.
'use strict';

function imageCases(rngFor, util, { T, F, S }) {
  const out = [];
  const ph = (dtype, shape, values, name) => ({ dtype, shape, values, name });
  const cst = (dtype, shape, values, name) => ({ dtype, shape, values, name, const: true });
  const f = Math.fround;
  // crop: [image dims, crop size, boxes (list of [y1,x1,y2,x2]), box_ind, attrs...]
  const crop = (name, u, o) => {
    const [b, h, w, c] = o.image;
    const n = o.boxes.length;
    const img = o.intImage ? u.vals(b * h * w * c, () => u.int(-100, 100))
      : u.vals(b * h * w * c, () => u.uni(-10, 10));
    const attr = { T: T(o.intImage ? 'int32' : 'float32') };
    if (o.method) attr.method = S(o.method);
    if (o.ev !== undefined) attr.extrapolation_value = F(o.ev);
    const mk = o.constBoxes ? cst : ph;
    out.push({
      name, op: 'CropAndResize', attr,
      inputs: [ph(o.intImage ? 'int32' : 'float32', o.image, img, 'image'),
        mk('float32', [n, 4], o.boxes.flat().map(f), 'boxes'),
        mk('int32', [n], o.ind || o.boxes.map(() => u.int(0, b - 1)), 'box_ind'),
        cst('int32', [2], o.size, 'crop_size')],
    });
  };
  const randBoxes = (u, n, lo, hi) => Array.from({ length: n }, () => [u.uni(lo, hi), u.uni(lo, hi), u.uni(lo, hi), u.uni(lo, hi)]);
  for (const method of ['bilinear', 'nearest']) {
    // random boxes inside the image, about half of them flipped
    let u = util(rngFor());
    crop(`CropAndResize_${method}`, u, { image: [2, u.int(5, 12), u.int(5, 12), u.int(1, 4)], size: [u.int(2, 9), u.int(2, 9)],
      boxes: randBoxes(u, 7, 0, 1), method });
    // boxes reaching past the image on every side, extrapolation_value given
    u = util(rngFor());
    crop(`CropAndResize_${method}_outside`, u, { image: [1, u.int(4, 9), u.int(4, 9), 3], size: [u.int(3, 8), u.int(3, 8)],
      boxes: randBoxes(u, 6, -0.6, 1.6), method, ev: -2.5 });
    // crop size 1 (and 1 x n): each box's centre
    u = util(rngFor());
    crop(`CropAndResize_${method}_size1`, u, { image: [2, 7, 9, 2], size: [1, 1], boxes: randBoxes(u, 9, -0.2, 1.2), method, ev: 7 });
    u = util(rngFor());
    crop(`CropAndResize_${method}_1xn`, u, { image: [1, 6, 8, 3], size: [1, 5], boxes: randBoxes(u, 5, 0, 1), method });
    // full boxes where float64 puts the last row (26/12, 30/8) just past h-1: extrapolated
    u = util(rngFor());
    crop(`CropAndResize_${method}_fullbox`, u, { image: [1, 30, 26, 1], size: [8, 12],
      boxes: [[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 0.5, 1]], method, ev: 99 });
  }
  // nearest at Math.round's halves: h-1 = 4, centre rows 1.5 and 2.5 (up), -0 edge
  {
    const u = util(rngFor());
    crop('CropAndResize_nearest_halves', u, { image: [1, 5, 5, 1], size: [1, 1], method: 'nearest',
      boxes: [[0.25, 0.25, 0.5, 0.5], [0.5, 0.75, 0.75, 0.5], [0.125, 0.375, 0.25, 0.5], [-0, -0, 0, 0], [1, 1, 1, 1]] });
  }
  // box_ind past the batch (crop stays zeros) and negative (tfjs reads undefined: NaN)
  {
    const u = util(rngFor());
    crop('CropAndResize_box_ind', u, { image: [2, 6, 6, 2], size: [3, 4], boxes: randBoxes(u, 6, -0.3, 1.3),
      ind: [0, 2, 1, 5, -1, 1], ev: 1.5 });
  }
  // NaN and infinite coordinates
  {
    const u = util(rngFor());
    crop('CropAndResize_nan', u, { image: [1, 6, 7, 2], size: [3, 3], ev: 4,
      boxes: [[NaN, 0, 1, 1], [0, NaN, 1, 1], [0.2, 0.2, Infinity, 0.8], [-Infinity, 0, 0, 1], [0.1, 0.1, 0.9, 0.9]] });
  }
  // an int32 image, both methods; boxes and box_ind as weights (the table folds)
  for (const method of ['bilinear', 'nearest']) {
    const u = util(rngFor());
    crop(`CropAndResize_int_${method}`, u, { image: [2, 8, 5, 3], size: [4, 6], boxes: randBoxes(u, 4, -0.1, 1.1),
      method, intImage: true, constBoxes: true });
  }
  // a big crop batch (what a Faster R-CNN's second stage reads)
  {
    const u = util(rngFor());
    crop('CropAndResize_many', u, { image: [1, 24, 20, 8], size: [7, 7], boxes: randBoxes(u, 60, 0, 1) });
  }
  // ImageProjectiveTransformV3: every fill mode and both interpolations,
  // rotations/shears/projections mapping outside the image, a zero projection
  // row, a larger and a smaller output, 1x8 and batch x 8 transforms (tfjs
  // transforms only the first image: the rest is fill), NaN in a transform
  {
    const modes = ['CONSTANT', 'REFLECT', 'WRAP', 'NEAREST'];
    const tfs = [
      [1, 0, 0, 0, 1, 0, 0, 0],
      [0.866, -0.5, 3.2, 0.5, 0.866, -2.1, 0, 0],
      [1.3, 0.2, -4.5, -0.1, 0.9, 6.7, 0.01, -0.02],
      [-1, 0, 7, 0, -1, 5.5, 0, 0],
      [2.5, 0, -1.25, 0, 0.5, 0.75, 0, 0],
      [1, 0, 0, 0, 1, 0, -0.2, 0],
    ];
    let k = 0;
    for (const interp of ['NEAREST', 'BILINEAR']) {
      for (const mode of modes) {
        const u = util(rngFor());
        const [b, h, w, ch] = [1, u.int(3, 7), u.int(3, 8), u.int(1, 3)];
        const img = u.vals(b * h * w * ch, () => u.uni(-4, 4));
        const t = tfs[k % tfs.length].map(Math.fround);
        const [oh, ow] = k % 3 === 0 ? [h, w] : k % 3 === 1 ? [h + 3, w + 2] : [Math.max(1, h - 2), w];
        out.push({ name: `ImageProjectiveTransformV3_${k++}`, op: 'ImageProjectiveTransformV3', tol: 1e-5,
          attr: { dtype: T('float32'), interpolation: S(interp), fill_mode: S(mode) },
          inputs: [ph('float32', [b, h, w, ch], img, 'images'), ph('float32', [1, 8], t, 'transforms'),
            cst('int32', [2], [oh, ow], 'output_shape'), cst('float32', [], [Math.fround(k * 0.7 - 2)], 'fill_value')] });
      }
    }
    const u = util(rngFor());
    const img = u.vals(3 * 5 * 6 * 2, () => u.uni(0, 9));
    const t = [...tfs[1], ...tfs[2], ...tfs[3]].map(Math.fround);
    out.push({ name: 'ImageProjectiveTransformV3_batch', op: 'ImageProjectiveTransformV3', tol: 1e-5,
      attr: { dtype: T('float32'), interpolation: S('BILINEAR'), fill_mode: S('REFLECT') },
      inputs: [ph('float32', [3, 5, 6, 2], img, 'images'), ph('float32', [3, 8], t, 'transforms'),
        cst('int32', [2], [5, 6], 'output_shape'), cst('float32', [], [-1], 'fill_value')] });
    const tn = [1, 0, NaN, 0, 1, 0, 0, 0];
    out.push({ name: 'ImageProjectiveTransformV3_nan', op: 'ImageProjectiveTransformV3', tol: 1e-5,
      attr: { dtype: T('float32'), interpolation: S('NEAREST'), fill_mode: S('WRAP') },
      inputs: [ph('float32', [1, 4, 5, 1], u.vals(20, () => u.uni(0, 9)), 'images'), ph('float32', [1, 8], tn, 'transforms'),
        cst('int32', [2], [4, 5], 'output_shape'), cst('float32', [], [3], 'fill_value')] });
  }
  return out;
}

module.exports = { imageCases };
