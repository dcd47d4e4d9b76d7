// faster_rcnn_inception_resnet_v2_atrous-style detector: Inception-ResNet-v2
// backbone (output stride 8, dilated convs in the Inception-B stage), batch norms
// the converter left un-fused (conv, then Mul and AddV2 by constants), a region
// proposal head, and a box classifier run on a fixed grid of pooled regions (so
// every shape after the crop is static: no CropAndResize, no NMS).
// frcnn-irv2-od (`od` set) is the same network as a TF1 Object Detection API
// export writes it: proposals from the region proposal head through anchor
// decoding and NonMaxSuppressionV3 in a map_fn loop (postproc.js), CropAndResize
// of the feature map to 14x14 for each proposal and a 2x2 max pool, the second
// stage at batch maxProposals, and the per-class NMS of the detections. Its
// weights are the plain model's, in the same order (the crops are used before
// the nodes that make them are built); the post-processing's constants come last.
//
// The real model has 17,653 weight tensors and 255,915,844 weight bytes: many
// small tensors. To reach that count with the same bytes the stages repeat
// more often than in Inception-ResNet-v2 (10/20/10 blocks) at a reduced width.
'use strict';

const postproc = require('./postproc');

const CONFIG = {
  width: 0.27, // branch and trunk widths relative to Inception-ResNet-v2
  blocks: [175, 360, 190], // Inception-A (block35), -B (block17), -C (block8) repeats
  regions: 8, // the box classifier runs on regions x regions pooled regions
  crop: 7, // each region pooled to crop x crop
  classes: 601,
  anchors: 12,
};
// frcnn-irv2-od: faster_rcnn_inception_resnet_v2_atrous_oidv4's post-processing
// settings (first stage: 300 proposals at IoU 0.7; second: IoU 0.6, 100 a class, 100 in all)
const OD = { maxProposals: 300, rpnIou: 0.7, iou: 0.6, maxPerClass: 100, maxTotal: 100 };
// frcnn-mini(-od): the same graph, every part of it, at a size make test runs
// against TensorFlow.js in seconds (tests/frcnn_od_test.sh): thin, 2 blocks a
// stage, 11 classes, 24 proposals, at most 6 a class
const MINI = { width: 0.1, blocks: [2, 2, 2], regions: 2, crop: 7, classes: 11, anchors: 12, rpnWidth: 64, topWidth: 128 };
const OD_MINI = { maxProposals: 24, rpnIou: 0.7, iou: 0.6, maxPerClass: 6, maxTotal: 20 };
const CONFIGS = { 'frcnn-irv2': CONFIG, 'frcnn-mini': MINI };
const ODS = { 'frcnn-irv2': OD, 'frcnn-mini': OD_MINI };

function build(g, name, cfg, size, od) {
  if (od && !size) throw new Error(`${name}-od needs --size (its anchors are constants)`);
  const rng = g.rng;
  const P = 'StatefulPartitionedCall';
  const c = (n) => Math.max(8, Math.round((n * cfg.width) / 8) * 8);

  // Conv (with bias, fused BiasAdd; or a plain Conv2D), then the un-fused batch
  // norm (Mul, AddV2 by per-channel constants), then Relu.
  const cbr = (n, x, cin, cout, kh, kw, o = {}) => {
    const w = g.heWeights(`${n}/weights`, [kh, kw, cin, cout], kh * kw * cin);
    const conv = { stride: o.stride || 1, padding: o.padding || 'SAME', dilation: o.dilation || 1 };
    if (!o.plain) conv.bias = g.constF(`${n}/biases`, [cout], () => rng.uniform(-0.05, 0.05));
    let t = g.conv(o.plain ? `${n}/Conv2D` : `${n}/BiasAdd`, x, w, conv);
    const mul = g.constF(`${n}/BatchNorm/mul`, [cout], () => rng.uniform(0.8, 1.2));
    const add = g.constF(`${n}/BatchNorm/sub`, [cout], () => rng.uniform(-0.1, 0.1));
    g.calib.set(t, { kind: 'bn', mul, add, gamma: [0.8, 1.2], beta: [-0.2, 0.2] });
    t = g.binary(`${n}/BatchNorm/mul_1`, 'Mul', t, mul);
    t = g.binary(`${n}/BatchNorm/add_1`, 'AddV2', t, add);
    return g.unary(`${n}/Relu`, 'Relu', t);
  };
  // Residual: x + scale * up(concat(branches)), then Relu. The up projection has
  // a bias and no batch norm. calib.js sets the batch norms (and normalizes the
  // projection) from the activations of a small seeded input.
  const residual = (n, x, cx, branches, cb, scale) => {
    const cat = g.concat(`${n}/concat`, branches, 3);
    const w = g.heWeights(`${n}/Conv2d_1x1/weights`, [1, 1, cb, cx], cb);
    const b = g.constF(`${n}/Conv2d_1x1/biases`, [cx], () => rng.uniform(-0.05, 0.05));
    let up = g.conv(`${n}/Conv2d_1x1/BiasAdd`, cat, w, { bias: b });
    g.calib.set(up, { kind: 'fold', gamma: [0.8, 1.2], beta: [-0.05, 0.05] });
    up = g.binary(`${n}/mul`, 'Mul', up, g.constF(`${n}/mul/x`, [], () => scale));
    return g.unary(`${n}/Relu`, 'Relu', g.binary(`${n}/add`, 'AddV2', x, up));
  };

  const shape = size ? [1, size, size, 3] : [1, -1, -1, 3];
  const input = g.placeholder('input_tensor', shape);
  // The preprocessing the object detection API exports: (2/255) x - 1 on [0, 255];
  // here the input is [0, 1).
  let x = g.binary(`${P}/Preprocessor/mul`, 'Mul', input, g.constF(`${P}/Preprocessor/mul/x`, [], () => 2));
  x = g.binary(`${P}/Preprocessor/sub`, 'Sub', x, g.constF(`${P}/Preprocessor/sub/y`, [], () => 1));

  // ------------------------------------------------ stem
  const F = `${P}/FirstStageFeatureExtractor/InceptionResnetV2/InceptionResnetV2`;
  x = cbr(`${F}/Conv2d_1a_3x3`, x, 3, 32, 3, 3, { stride: 2, padding: 'VALID', plain: true });
  x = cbr(`${F}/Conv2d_2a_3x3`, x, 32, 32, 3, 3, { padding: 'VALID', plain: true });
  x = cbr(`${F}/Conv2d_2b_3x3`, x, 32, 64, 3, 3, { plain: true });
  x = g.pool(`${F}/MaxPool_3a_3x3/MaxPool`, 'MaxPool', x, 3, 2, 'VALID');
  x = cbr(`${F}/Conv2d_3b_1x1`, x, 64, 80, 1, 1, { padding: 'VALID', plain: true });
  x = cbr(`${F}/Conv2d_4a_3x3`, x, 80, 192, 3, 3, { padding: 'VALID', plain: true });
  x = g.pool(`${F}/MaxPool_5a_3x3/MaxPool`, 'MaxPool', x, 3, 2, 'VALID');

  // ------------------------------------------------ Mixed_5b
  let M = `${F}/Mixed_5b`;
  const b5 = [c(96), c(64), c(96), c(64)];
  {
    const a = cbr(`${M}/Branch_0/Conv2d_1x1`, x, 192, b5[0], 1, 1);
    let b = cbr(`${M}/Branch_1/Conv2d_0a_1x1`, x, 192, c(48), 1, 1);
    b = cbr(`${M}/Branch_1/Conv2d_0b_5x5`, b, c(48), b5[1], 5, 5);
    let d = cbr(`${M}/Branch_2/Conv2d_0a_1x1`, x, 192, c(64), 1, 1);
    d = cbr(`${M}/Branch_2/Conv2d_0b_3x3`, d, c(64), c(96), 3, 3);
    d = cbr(`${M}/Branch_2/Conv2d_0c_3x3`, d, c(96), b5[2], 3, 3);
    let p = g.pool(`${M}/Branch_3/AvgPool_0a_3x3/AvgPool`, 'AvgPool', x, 3, 1, 'SAME');
    p = cbr(`${M}/Branch_3/Conv2d_0b_1x1`, p, 192, b5[3], 1, 1);
    x = g.concat(`${M}/concat`, [a, b, d, p], 3);
  }
  const c35 = b5.reduce((s, v) => s + v, 0);

  // ------------------------------------------------ Inception-A x blocks[0]
  for (let i = 0; i < cfg.blocks[0]; i++) {
    const n = `${F}/Repeat/block35_${i + 1}`;
    const a = cbr(`${n}/Branch_0/Conv2d_1x1`, x, c35, c(32), 1, 1);
    let b = cbr(`${n}/Branch_1/Conv2d_0a_1x1`, x, c35, c(32), 1, 1);
    b = cbr(`${n}/Branch_1/Conv2d_0b_3x3`, b, c(32), c(32), 3, 3);
    let d = cbr(`${n}/Branch_2/Conv2d_0a_1x1`, x, c35, c(32), 1, 1);
    d = cbr(`${n}/Branch_2/Conv2d_0b_3x3`, d, c(32), c(48), 3, 3);
    d = cbr(`${n}/Branch_2/Conv2d_0c_3x3`, d, c(48), c(64), 3, 3);
    x = residual(n, x, c35, [a, b, d], c(32) * 2 + c(64), 0.17);
  }

  // ------------------------------------------------ Mixed_6a, stride 1 (atrous, output stride 8)
  M = `${F}/Mixed_6a`;
  {
    const a = cbr(`${M}/Branch_0/Conv2d_1a_3x3`, x, c35, c(384), 3, 3);
    let b = cbr(`${M}/Branch_1/Conv2d_0a_1x1`, x, c35, c(256), 1, 1);
    b = cbr(`${M}/Branch_1/Conv2d_0b_3x3`, b, c(256), c(256), 3, 3);
    b = cbr(`${M}/Branch_1/Conv2d_1a_3x3`, b, c(256), c(384), 3, 3);
    const p = g.pool(`${M}/Branch_2/MaxPool_1a_3x3/MaxPool`, 'MaxPool', x, 3, 1, 'SAME');
    x = g.concat(`${M}/concat`, [a, b, p], 3);
  }
  const c17 = c(384) * 2 + c35;

  // ------------------------------------------------ Inception-B x blocks[1], dilated
  for (let i = 0; i < cfg.blocks[1]; i++) {
    const n = `${F}/Repeat_1/block17_${i + 1}`;
    const a = cbr(`${n}/Branch_0/Conv2d_1x1`, x, c17, c(192), 1, 1);
    let b = cbr(`${n}/Branch_1/Conv2d_0a_1x1`, x, c17, c(128), 1, 1);
    b = cbr(`${n}/Branch_1/Conv2d_0b_1x7`, b, c(128), c(160), 1, 7, { dilation: 2 });
    b = cbr(`${n}/Branch_1/Conv2d_0c_7x1`, b, c(160), c(192), 7, 1, { dilation: 2 });
    x = residual(n, x, c17, [a, b], c(192) * 2, 0.10);
  }
  const features = x;

  // ------------------------------------------------ region proposal head
  const R = `${P}/FirstStageBoxPredictor`;
  const rpnW = cfg.rpnWidth || 512, topW = cfg.topWidth || 1536;
  const rpn = cbr(`${P}/Conv/Conv2D`, features, c17, rpnW, 3, 3, { dilation: 2 });
  const headConv = (n, t, cin, cout, gamma = 1) => {
    const y = g.conv(`${n}/BiasAdd`, t, g.heWeights(`${n}/weights`, [1, 1, cin, cout], cin),
      { bias: g.constF(`${n}/biases`, [cout], () => rng.uniform(-0.1, 0.1)) });
    g.calib.set(y, { kind: 'fold', gamma: [gamma, gamma], beta: [-0.1, 0.1] });
    return y;
  };
  const obj = headConv(`${R}/ClassPredictor`, rpn, rpnW, cfg.anchors * 2, 2);
  const box = headConv(`${R}/BoxEncodingPredictor`, rpn, rpnW, cfg.anchors * 4);
  const objR = g.reshape(`${R}/ClassPredictor/Reshape`, obj, [1, -1, 2], null);
  const boxR = g.reshape(`${R}/BoxEncodingPredictor/Reshape`, box, [1, -1, 4], null);
  const objS = g.unary(`${R}/Softmax`, 'Softmax', objR);

  // ------------------------------------------------ regions: a fixed grid of crops
  // (-od: the proposals' crops, built after the second stage: see above)
  let cropSize = null;
  if (od) {
    cropSize = g.constI(`${P}/CropAndResize/crop_size`, [cfg.crop * 2, cfg.crop * 2]); // where the plain model has the resize's size
    x = g.reserve(`${P}/MaxPool2D/MaxPool`);
  } else {
    const side = cfg.regions * cfg.crop;
    x = g.resize(`${P}/CropAndResize/ResizeBilinear`, 'ResizeBilinear', features, side, side, true);
    g.calibOverrides = { [x]: [cfg.crop, cfg.crop] }; // calibrate on one region
    g.shapes.set(x, [1, side, side, c17]);
  }
  const crops = x;
  const S = `${P}/SecondStageFeatureExtractor/InceptionResnetV2`;
  M = `${S}/Mixed_7a`;
  {
    let a = cbr(`${M}/Branch_0/Conv2d_0a_1x1`, x, c17, c(256), 1, 1);
    a = cbr(`${M}/Branch_0/Conv2d_1a_3x3`, a, c(256), c(384), 3, 3);
    let b = cbr(`${M}/Branch_1/Conv2d_0a_1x1`, x, c17, c(256), 1, 1);
    b = cbr(`${M}/Branch_1/Conv2d_1a_3x3`, b, c(256), c(288), 3, 3);
    let d = cbr(`${M}/Branch_2/Conv2d_0a_1x1`, x, c17, c(256), 1, 1);
    d = cbr(`${M}/Branch_2/Conv2d_0b_3x3`, d, c(256), c(288), 3, 3);
    d = cbr(`${M}/Branch_2/Conv2d_1a_3x3`, d, c(288), c(320), 3, 3);
    const p = g.pool(`${M}/Branch_3/MaxPool_1a_3x3/MaxPool`, 'MaxPool', x, 3, 1, 'SAME');
    x = g.concat(`${M}/concat`, [a, b, d, p], 3);
  }
  const c8 = c(384) + c(288) + c(320) + c17;

  // ------------------------------------------------ Inception-C x blocks[2]
  for (let i = 0; i < cfg.blocks[2]; i++) {
    const n = `${S}/Repeat_2/block8_${i + 1}`;
    const a = cbr(`${n}/Branch_0/Conv2d_1x1`, x, c8, c(192), 1, 1);
    let b = cbr(`${n}/Branch_1/Conv2d_0a_1x1`, x, c8, c(192), 1, 1);
    b = cbr(`${n}/Branch_1/Conv2d_0b_1x3`, b, c(192), c(224), 1, 3);
    b = cbr(`${n}/Branch_1/Conv2d_0c_3x1`, b, c(224), c(256), 3, 1);
    x = residual(n, x, c8, [a, b], c(192) + c(256), 0.20);
  }
  x = cbr(`${S}/Conv2d_7b_1x1`, x, c8, topW, 1, 1);

  // ------------------------------------------------ box classifier per region
  const nR = od ? -1 : cfg.regions * cfg.regions;
  const C = `${P}/SecondStageBoxPredictor`;
  x = g.pool(`${C}/AvgPool/AvgPool`, 'AvgPool', x, cfg.crop, cfg.crop, 'VALID');
  const cls = headConv(`${C}/ClassPredictor`, x, topW, cfg.classes + 1, 3);
  const bx = headConv(`${C}/BoxEncodingPredictor`, x, topW, cfg.classes * 4);
  const clsS = g.unary(`${C}/Softmax`, 'Softmax', g.reshape(`${C}/ClassPredictor/Reshape`, cls, [1, nR, cfg.classes + 1]));
  const bxR = g.reshape(`${C}/BoxEncodingPredictor/Reshape`, bx, [1, nR, cfg.classes, 4]);

  if (od) return buildPost(g, P, cfg, size, od, { features, crops, cropSize, rpnBox: boxR, rpnObj: objS, cls: clsS, box: bxR, input, shape });
  const outs = [
    ['detection_multiclass_scores', g.identity('Identity', clsS), [1, nR, cfg.classes + 1]],
    ['raw_detection_boxes', g.identity('Identity_1', bxR), [1, nR, cfg.classes, 4]],
    ['rpn_objectness', g.identity('Identity_2', objS), [1, -1, 2]],
    ['rpn_box_encodings', g.identity('Identity_3', boxR), [1, -1, 4]],
  ];
  const sig = (nm, dims) => ({ name: `${nm}:0`, dtype: 'DT_FLOAT', tensorShape: { dim: dims.map((d) => ({ size: String(d) })) } });
  const outputs = {};
  for (const [k, n, d] of outs) outputs[k] = sig(n, d);
  return { signature: { inputs: { input_tensor: sig('input_tensor', shape) }, outputs } };
}

// frcnn-irv2-od: the proposals, their crops (the node reserved as the second
// stage's input), the detections. Returns the signature.
function buildPost(g, P, cfg, size, od, t) {
  // the feature map's side: the stem's valid convs and pools (output stride 8)
  const co = (n, k, s) => Math.floor((n - k) / s) + 1;
  const side = co(co(co(co(co(size, 3, 2), 3, 1), 3, 2), 3, 1), 3, 2);
  const R = od.maxProposals;
  const first = postproc.frcnnProposals(g, P, t.rpnBox, t.rpnObj, { size, fh: side, fw: side, maxProposals: R, iou: od.rpnIou });
  const C = `${P}/CropAndResize`;
  const flat = g.reshape(`${C}/Reshape`, first.proposals, [-1, 4]);
  // box_ind: each proposal's image, range(batch) repeated maxProposals times
  const n = postproc.dimOf(g, `${C}/batch`, first.proposals, 0);
  const rng = g.node(`${C}/range`, 'Range', [g.constI(`${C}/range/start`, [0], []), n, g.constI(`${C}/range/delta`, [1], [])], { Tidx: { type: 'DT_INT32' } });
  const ex = g.node(`${C}/ExpandDims`, 'ExpandDims', [rng, g.constI(`${C}/ExpandDims/dim`, [1], [])], { T: { type: 'DT_INT32' }, Tdim: { type: 'DT_INT32' } });
  const tl = g.node(`${C}/Tile`, 'Tile', [ex, g.constI(`${C}/Tile/multiples`, [1, R])], { T: { type: 'DT_INT32' }, Tmultiples: { type: 'DT_INT32' } });
  const ind = g.node(`${C}/Reshape_1`, 'Reshape', [tl, g.constI(`${C}/Reshape_1/shape`, [-1])], { T: { type: 'DT_INT32' }, Tshape: { type: 'DT_INT32' } });
  const crop = g.node(C, 'CropAndResize', [t.features, flat, ind, t.cropSize], {
    T: { type: 'DT_FLOAT' }, method: { s: Buffer.from('bilinear').toString('base64') }, extrapolation_value: { f: 0 },
  });
  g.nodeAs(t.crops, 'MaxPool', [crop], {
    T: { type: 'DT_FLOAT' }, ksize: { list: { i: ['1', '2', '2', '1'] } }, strides: { list: { i: ['1', '2', '2', '1'] } },
    padding: { s: Buffer.from('VALID').toString('base64') }, data_format: { s: Buffer.from('NHWC').toString('base64') }, explicit_paddings: { list: {} },
  });
  const second = postproc.frcnnDetections(g, P, t.box, t.cls, first.proposals, { classes: cfg.classes, maxPerClass: od.maxPerClass, maxTotal: od.maxTotal, iou: od.iou, maxProposals: R });
  const [db, ds, dc, dn] = second.det;
  const outs = [
    ['detection_boxes', db, [1, od.maxTotal, 4]], ['detection_scores', ds, [1, od.maxTotal]],
    ['detection_classes', dc, [1, od.maxTotal]], ['num_detections', dn, [1]],
    ['raw_detection_boxes', second.boxes, [1, R, cfg.classes, 4]], ['raw_detection_scores', second.scores, [1, R, cfg.classes]],
    ['proposal_boxes', first.proposals, [1, R, 4]], ['num_proposals', first.num, [1]],
    ['raw_proposal_boxes', first.boxes, [1, first.A, 4]], ['raw_proposal_scores', first.scores, [1, first.A]],
  ];
  const outputs = {};
  outs.forEach(([k, node, dims], i) => {
    const dt = k === 'num_proposals' ? 'DT_INT32' : 'DT_FLOAT';
    const o = g.node(i ? `Identity_${i}` : 'Identity', 'Identity', [node], { T: { type: dt } });
    outputs[k] = { name: `${o}:0`, dtype: dt, tensorShape: { dim: dims.map((d) => ({ size: String(d) })) } };
  });
  const sig = { name: 'input_tensor:0', dtype: 'DT_FLOAT', tensorShape: { dim: t.shape.map((d) => ({ size: String(d) })) } };
  return { signature: { inputs: { input_tensor: sig }, outputs } };
}

module.exports = { CONFIG, OD, CONFIGS, ODS, build };
