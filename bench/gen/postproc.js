// Detection post-processing as tensorflowjs_converter writes it for a TF2 Object
// Detection API export with its default lowering (TF2 While -> TF1 frames):
// anchor decoding (faster_rcnn_box_coder, scales 1), sigmoid scores, and
// BatchMultiClassNonMaxSuppression as a while loop over the batch (Enter, Merge,
// Switch, LoopCond, NextIteration, Exit) reading its images from TensorLists and
// writing its results to TensorLists; its body runs one NonMaxSuppressionV5 per
// class, Gather, ConcatV2, TopKV2 to keep the best, and Pad to a fixed count.
// The loop nodes carry no static shapes (calib.js stops at the first of them).
'use strict';

const b64 = (s) => Buffer.from(s, 'latin1').toString('base64');
const T = (t) => ({ type: t });
const F32 = T('DT_FLOAT'); const I32 = T('DT_INT32'); const VAR = T('DT_VARIANT'); const BOOL = T('DT_BOOL');

// EfficientDet anchors (levels 3..7, anchor scale 4, 3 octave scales, aspect
// ratios 1, 2, 0.5), in the order the heads' reshapes put them: row, column,
// then the 9 anchors of a cell. Normalized (ycenter, xcenter, height, width).
function effdetAnchors(size) {
  const yc = []; const xc = []; const ha = []; const wa = [];
  for (let l = 3; l <= 7; l++) {
    const stride = 2 ** l;
    const n = Math.ceil(size / stride);
    for (let y = 0; y < n; y++) {
      for (let x = 0; x < n; x++) {
        for (let s = 0; s < 3; s++) {
          for (const r of [1.0, 2.0, 0.5]) {
            const base = 4 * stride * 2 ** (s / 3);
            yc.push(((y + 0.5) * stride) / size); xc.push(((x + 0.5) * stride) / size);
            ha.push(base / Math.sqrt(r) / size); wa.push((base * Math.sqrt(r)) / size);
          }
        }
      }
    }
  }
  return { yc, xc, ha, wa, count: yc.length };
}

// A TF1 while loop: for (i = 0; i < n; i++) vars = body(i, vars). `vars` are the
// loop-carried values besides the counter (TensorList handles here); `consts`
// are values from outside the loop, entered as loop constants. body(ids, i,
// entered) returns the next values of `vars`. Returns the Exit of each var.
function whileLoop(g, P, n, vars, consts, body) {
  const frame = { s: b64(`${P}/while/while_context`) };
  const enter = (x, dt, isConst) => g.node(`${P}/while/Enter`, 'Enter', [x], {
    T: dt, frame_name: frame, is_constant: { b: isConst }, parallel_iterations: { i: '32' },
  });
  const all = [{ init: g.constI(`${P}/while/Const`, [0], []), dt: I32 }, ...vars];
  const merges = all.map((v) => {
    const e = enter(v.init, v.dt, false);
    // Merge reads its NextIteration, made after the body: patched below
    return g.node(`${P}/while/Merge`, 'Merge', [e, null], { T: v.dt, N: { i: '2' } });
  });
  const limit = enter(n, I32, true);
  const less = g.node(`${P}/while/Less`, 'Less', [merges[0], limit], { T: I32 });
  const cond = g.node(`${P}/while/LoopCond`, 'LoopCond', [less], {});
  const ids = merges.map((m, k) => {
    const sw = g.node(`${P}/while/Switch`, 'Switch', [m, cond], { T: all[k].dt });
    return { sw, id: g.node(`${P}/while/Identity`, 'Identity', [`${sw}:1`], { T: all[k].dt }) };
  });
  const entered = consts.map(([x, dt]) => enter(x, dt, true));
  const one = enter(g.constI(`${P}/while/add/y`, [1], []), I32, true);
  const next = [g.node(`${P}/while/add`, 'AddV2', [ids[0].id, one], { T: I32 }),
    ...body(ids.slice(1).map((x) => x.id), ids[0].id, entered)];
  next.forEach((x, k) => {
    const ni = g.node(`${P}/while/NextIteration`, 'NextIteration', [x], { T: all[k].dt });
    g.nodes.find((nd) => nd.name === merges[k]).input[1] = ni;
  });
  return ids.slice(1).map((x, k) => g.node(`${P}/while/Exit`, 'Exit', [`${x.sw}:0`], { T: vars[k].dt }));
}

// EfficientDet's post-processing on the heads' outputs: cls [1, A, classes]
// logits, box [1, A, 4] encodings. Returns the output nodes.
function effdetPost(g, P, cls, box, o) {
  const { size, classes, maxPerClass, maxTotal, iou, scoreThreshold } = o;
  const an = effdetAnchors(size);
  const A = an.count;
  const D = `${P}/Postprocessor`;
  const c1 = (n, v) => g.constF(n, [], () => v);
  // ---------------- decode: yc = ty ha + yca, h = exp(th) ha, ...; boxes [ymin, xmin, ymax, xmax]
  const codes = g.reshape(`${D}/Reshape`, box, [A, 4]);
  const un = g.node(`${D}/Decode/unstack`, 'Unpack', [codes], { T: F32, num: { i: '4' }, axis: { i: '1' } });
  const [ty, tx, th, tw] = [0, 1, 2, 3].map((k) => (k ? `${un}:${k}` : un));
  const anc = (n, v) => g.constF(`${D}/Decode/${n}`, [A], (i) => v[i]);
  const yca = anc('ycenter_a', an.yc); const xca = anc('xcenter_a', an.xc);
  const ha = anc('ha', an.ha); const wa = anc('wa', an.wa);
  const bin = (n, op, a, b) => g.node(`${D}/Decode/${n}`, op, [a, b], { T: F32 });
  const h = bin('mul_2', 'Mul', g.node(`${D}/Decode/Exp`, 'Exp', [th], { T: F32 }), ha);
  const w = bin('mul_3', 'Mul', g.node(`${D}/Decode/Exp_1`, 'Exp', [tw], { T: F32 }), wa);
  const yc = bin('add', 'AddV2', bin('mul', 'Mul', ty, ha), yca);
  const xc = bin('add_1', 'AddV2', bin('mul_1', 'Mul', tx, wa), xca);
  const half = c1(`${D}/Decode/truediv/y`, 0.5);
  const hh = bin('truediv', 'Mul', h, half); const hw = bin('truediv_1', 'Mul', w, half);
  const corners = [bin('sub', 'Sub', yc, hh), bin('sub_1', 'Sub', xc, hw), bin('add_2', 'AddV2', yc, hh), bin('add_3', 'AddV2', xc, hw)];
  const stacked = g.node(`${D}/Decode/stack`, 'Pack', corners, { T: F32, N: { i: '4' }, axis: { i: '1' } });
  const boxes = g.reshape(`${D}/Reshape_1`, stacked, [1, A, 4]);
  const scores = g.node(`${D}/convert_scores`, 'Sigmoid', [cls], { T: F32 });

  // ---------------- BatchMultiClassNonMaxSuppression: a loop over the batch
  const N = `${D}/BatchMultiClassNonMaxSuppression/map`;
  const shapeC = (n, dims) => g.constI(`${N}/${n}/element_shape`, dims, [dims.length]);
  const fromT = (n, x, dims) => g.node(`${N}/${n}/TensorListFromTensor`, 'TensorListFromTensor', [x, shapeC(n, dims)],
    { element_dtype: F32, shape_type: I32 });
  const boxList = fromT('TensorArrayUnstack', boxes, [A, 4]);
  const scoreList = fromT('TensorArrayUnstack_1', scores, [A, classes]);
  const nImages = g.constI(`${N}/strided_slice`, [1], []);
  const outShapes = [[maxTotal, 4], [maxTotal], [maxTotal], []];
  const reserves = outShapes.map((dims, k) => ({
    init: g.node(`${N}/TensorArrayV2_${k}`, 'TensorListReserve', [shapeC(`TensorArrayV2_${k}`, dims), g.constI(`${N}/TensorArrayV2_${k}/num_elements`, [1], [])],
      { element_dtype: F32, shape_type: I32 }),
    dt: VAR,
  }));
  const B = `${N}/while/MultiClassNonMaxSuppression`;
  const exits = whileLoop(g, N, nImages, reserves, [[boxList, VAR], [scoreList, VAR]], (lists, i, [bl, sl]) => {
    const bx = g.node(`${N}/while/TensorArrayV2Read/TensorListGetItem`, 'TensorListGetItem', [bl, i, shapeC('while/TensorArrayV2Read', [A, 4])], { element_dtype: F32 });
    const sc = g.node(`${N}/while/TensorArrayV2Read_1/TensorListGetItem`, 'TensorListGetItem', [sl, i, shapeC('while/TensorArrayV2Read_1', [A, classes])], { element_dtype: F32 });
    const scT = g.node(`${B}/transpose`, 'Transpose', [sc, g.constI(`${B}/transpose/perm`, [1, 0])], { T: F32, Tperm: I32 });
    const perClass = g.node(`${B}/unstack`, 'Unpack', [scT], { T: F32, num: { i: String(classes) }, axis: { i: '0' } });
    const maxOut = g.constI(`${B}/max_output_size`, [maxPerClass], []);
    const iouT = c1(`${B}/iou_threshold`, iou); const scT2 = c1(`${B}/score_threshold`, scoreThreshold);
    const sigma = c1(`${B}/soft_nms_sigma`, 0);
    const axis0 = g.constI(`${B}/GatherV2/axis`, [0], []);
    const gb = []; const gs = []; const gc = [];
    for (let c = 0; c < classes; c++) {
      const n = c ? `${B}/non_max_suppression_with_scores_${c}` : `${B}/non_max_suppression_with_scores`;
      const nms = g.node(`${n}/NonMaxSuppressionV5`, 'NonMaxSuppressionV5', [bx, c ? `${perClass}:${c}` : perClass, maxOut, iouT, scT2, sigma],
        { T: F32, pad_to_max_output_size: { b: false } });
      gb.push(g.node(`${n}/GatherV2`, 'GatherV2', [bx, nms, axis0], { Tparams: F32, Tindices: I32, Taxis: I32, batch_dims: { i: '0' } }));
      gs.push(`${nms}:1`);
      const z = g.node(`${n}/zeros_like`, 'ZerosLike', [`${nms}:1`], { T: F32 });
      gc.push(g.node(`${n}/add`, 'AddV2', [z, c1(`${n}/add/y`, c + 1)], { T: F32 }));
    }
    const cat = (n, xs) => g.node(`${B}/Concatenate/${n}`, 'ConcatV2', [...xs, g.constI(`${B}/Concatenate/${n}/axis`, [0], [])],
      { T: F32, Tidx: I32, N: { i: String(xs.length) } });
    const allB = cat('concat', gb); const allS = cat('concat_1', gs); const allC = cat('concat_2', gc);
    const S = `${B}/SortByField`;
    const shp = g.node(`${S}/Shape`, 'Shape', [allS], { T: F32, out_type: I32 });
    const cnt = g.node(`${S}/strided_slice`, 'StridedSlice', [shp, g.constI(`${S}/strided_slice/stack`, [0]),
      g.constI(`${S}/strided_slice/stack_1`, [1]), g.constI(`${S}/strided_slice/stack_2`, [1])],
    { T: I32, Index: I32, begin_mask: { i: '0' }, end_mask: { i: '0' }, ellipsis_mask: { i: '0' }, new_axis_mask: { i: '0' }, shrink_axis_mask: { i: '1' } });
    const k = g.node(`${S}/Minimum`, 'Minimum', [cnt, g.constI(`${S}/Minimum/y`, [maxTotal], [])], { T: I32 });
    const top = g.node(`${S}/TopKV2`, 'TopKV2', [allS, k], { T: F32, sorted: { b: true } });
    const topB = g.node(`${S}/Gather/GatherV2`, 'GatherV2', [allB, `${top}:1`, axis0], { Tparams: F32, Tindices: I32, Taxis: I32, batch_dims: { i: '0' } });
    const topC = g.node(`${S}/Gather/GatherV2_1`, 'GatherV2', [allC, `${top}:1`, axis0], { Tparams: F32, Tindices: I32, Taxis: I32, batch_dims: { i: '0' } });
    const P2 = `${B}/PadOrClip`;
    const padn = g.node(`${P2}/sub`, 'Sub', [g.constI(`${P2}/sub/x`, [maxTotal], []), k], { T: I32 });
    const zero = g.constI(`${P2}/zero`, [0], []);
    const pack = (n, xs) => g.node(`${P2}/${n}`, 'Pack', xs, { T: I32, N: { i: String(xs.length) }, axis: { i: '0' } });
    const pad2 = g.node(`${P2}/Reshape`, 'Reshape', [pack('stack', [zero, padn, zero, zero]), g.constI(`${P2}/Reshape/shape`, [2, 2])], { T: I32, Tshape: I32 });
    const pad1 = g.node(`${P2}/Reshape_1`, 'Reshape', [pack('stack_1', [zero, padn]), g.constI(`${P2}/Reshape_1/shape`, [1, 2])], { T: I32, Tshape: I32 });
    const pad = (n, x, p) => g.node(`${P2}/${n}`, 'Pad', [x, p], { T: F32, Tpaddings: I32 });
    const vals = [pad('Pad', topB, pad2), pad('Pad_1', top, pad1), pad('Pad_2', topC, pad1),
      g.node(`${B}/Cast`, 'Cast', [k], { SrcT: I32, DstT: F32, Truncate: { b: false } })];
    return vals.map((v, j) => g.node(`${N}/while/TensorArrayV2Write_${j}/TensorListSetItem`, 'TensorListSetItem', [lists[j], i, v], { element_dtype: F32 }));
  });
  const stacks = exits.map((e, k) => g.node(`${N}/TensorArrayV2Stack_${k}/TensorListStack`, 'TensorListStack',
    [e, shapeC(`TensorArrayV2Stack_${k}`, outShapes[k])], { element_dtype: F32, num_elements: { i: '1' } }));
  return {
    detection_boxes: [stacks[0], [1, maxTotal, 4]],
    detection_scores: [stacks[1], [1, maxTotal]],
    detection_classes: [stacks[2], [1, maxTotal]],
    num_detections: [stacks[3], [1]],
    raw_detection_boxes: [boxes, [1, A, 4]],
    raw_detection_scores: [scores, [1, A, classes]],
  };
}

// ---------------------------------------------------------------- Faster R-CNN (TF1 OD API)
// What a TF1 Object Detection API export of faster_rcnn_inception_resnet_v2_atrous
// adds around its two stages, as tensorflowjs_converter writes the frozen graph:
// grid anchors, faster_rcnn_box_coder decoding (scales 10, 10, 5, 5), clipping
// to the image, and map_fn over the batch (a TF1 while loop over TensorArrayV3s)
// whose body runs NonMaxSuppressionV3; the second stage's boxes decoded per class
// from the proposals, and BatchMultiClassNonMaxSuppression in another map_fn.
const RES = T('DT_RESOURCE');

// Grid anchors on a [fh, fw] feature map of an image of `size`: stride 8, base
// 256, scales 0.25-2, aspect ratios 0.5, 1, 2, in the order of the box
// predictor's reshape (row, column, then the 12 anchors of a cell). Normalized
// (ycenter, xcenter, height, width).
function frcnnAnchors(size, fh, fw) {
  const yc = []; const xc = []; const ha = []; const wa = [];
  for (let y = 0; y < fh; y++) {
    for (let x = 0; x < fw; x++) {
      for (const s of [0.25, 0.5, 1.0, 2.0]) {
        for (const r of [0.5, 1.0, 2.0]) {
          yc.push(((y + 0.5) * 8) / size); xc.push(((x + 0.5) * 8) / size);
          ha.push((256 * s) / Math.sqrt(r) / size); wa.push((256 * s * Math.sqrt(r)) / size);
        }
      }
    }
  }
  return { yc, xc, ha, wa, count: yc.length };
}

// faster_rcnn_box_coder.decode then clip_to_window [0, 0, 1, 1]: codes [N, 4]
// (ty, tx, th, tw) against anchors given as four [N] tensors (yca, xca, ha, wa);
// returns [N, 4] boxes (ymin, xmin, ymax, xmax).
function decodeClip(g, D, codes, [yca, xca, ha, wa]) {
  const c1 = (n, v) => g.constF(`${D}/${n}`, [], () => v);
  const un = g.node(`${D}/Decode/unstack`, 'Unpack', [codes], { T: F32, num: { i: '4' }, axis: { i: '1' } });
  const bin = (n, op, a, b) => g.node(`${D}/Decode/${n}`, op, [a, b], { T: F32 });
  const [ty, tx, th, tw] = [[0, 10], [1, 10], [2, 5], [3, 5]].map(([k, sc], j) =>
    bin(j ? `truediv_${j}` : 'truediv', 'RealDiv', k ? `${un}:${k}` : un, c1(`Decode/truediv_${j}/y`, sc)));
  const w = bin('mul_1', 'Mul', g.node(`${D}/Decode/Exp_1`, 'Exp', [tw], { T: F32 }), wa);
  const h = bin('mul', 'Mul', g.node(`${D}/Decode/Exp`, 'Exp', [th], { T: F32 }), ha);
  const yc = bin('add', 'AddV2', bin('mul_2', 'Mul', ty, ha), yca);
  const xc = bin('add_1', 'AddV2', bin('mul_3', 'Mul', tx, wa), xca);
  const half = c1('Decode/truediv_4/y', 2);
  const hh = bin('truediv_4', 'RealDiv', h, half); const hw = bin('truediv_5', 'RealDiv', w, half);
  const corners = [bin('sub', 'Sub', yc, hh), bin('sub_1', 'Sub', xc, hw), bin('add_2', 'AddV2', yc, hh), bin('add_3', 'AddV2', xc, hw)];
  const stacked = g.node(`${D}/Decode/stack`, 'Pack', corners, { T: F32, N: { i: '4' }, axis: { i: '1' } });
  const lo = g.node(`${D}/ClipToWindow/Minimum`, 'Minimum', [stacked, c1('ClipToWindow/Minimum/y', 1)], { T: F32 });
  return g.node(`${D}/ClipToWindow/Maximum`, 'Maximum', [lo, c1('ClipToWindow/Maximum/y', 0)], { T: F32 });
}

// The four corners' centers and sizes of boxes [N, 4] (ymin, xmin, ymax, xmax):
// box_list.get_center_coordinates_and_sizes.
function centersAndSizes(g, D, boxes) {
  const un = g.node(`${D}/get_center_coordinates_and_sizes/unstack`, 'Unpack', [boxes], { T: F32, num: { i: '4' }, axis: { i: '1' } });
  const [y0, x0, y1, x1] = [0, 1, 2, 3].map((k) => (k ? `${un}:${k}` : un));
  const bin = (n, op, a, b) => g.node(`${D}/get_center_coordinates_and_sizes/${n}`, op, [a, b], { T: F32 });
  const h = bin('sub', 'Sub', y1, y0); const w = bin('sub_1', 'Sub', x1, x0);
  const half = g.constF(`${D}/get_center_coordinates_and_sizes/truediv/y`, [], () => 2);
  const yc = bin('add', 'AddV2', y0, bin('truediv', 'RealDiv', h, half));
  const xc = bin('add_1', 'AddV2', x0, bin('truediv_1', 'RealDiv', w, half));
  return [yc, xc, h, w];
}

// Scalar int32 dim `axis` of x's shape (Shape, then StridedSlice).
function dimOf(g, n, x, axis, T = F32) {
  const shp = g.node(`${n}/Shape`, 'Shape', [x], { T, out_type: I32 });
  return g.node(`${n}/strided_slice`, 'StridedSlice', [shp, g.constI(`${n}/strided_slice/stack`, [axis]),
    g.constI(`${n}/strided_slice/stack_1`, [axis + 1]), g.constI(`${n}/strided_slice/stack_2`, [1])],
  { T: I32, Index: I32, begin_mask: { i: '0' }, end_mask: { i: '0' }, ellipsis_mask: { i: '0' }, new_axis_mask: { i: '0' }, shrink_axis_mask: { i: '1' } });
}

// tf.map_fn as TF1 builds it: each of `elems` ([x, dtype, element dims]) is
// scattered into a TensorArrayV3 of the batch's length, a while loop reads
// element i of each, runs body(reads) and writes what it returns into one
// TensorArrayV3 per `outs` ([dtype, element dims]); the arrays are gathered
// after the loop. Returns the gathered outputs [batch, ...dims].
function mapFn(g, M, elems, outs, body) {
  const n = dimOf(g, M, elems[0][0], 0, elems[0][1]);
  const ta = (nm, dt, dims, size) => g.node(`${M}/${nm}`, 'TensorArrayV3', [size], {
    dtype: dt, element_shape: { shape: { dim: dims.map((d) => ({ size: String(d) })) } }, dynamic_size: { b: false },
    clear_after_read: { b: true }, identical_element_shapes: { b: true }, tensor_array_name: { s: '' },
  });
  const range = (nm, lim) => g.node(`${M}/${nm}/range`, 'Range', [g.constI(`${M}/${nm}/range/start`, [0], []), lim,
    g.constI(`${M}/${nm}/range/delta`, [1], [])], { Tidx: I32 });
  const ins = elems.map(([x, dt, dims], k) => {
    const h = ta(k ? `TensorArray_${k}` : 'TensorArray', dt, dims, n);
    const nm = k ? `TensorArrayUnstack_${k}` : 'TensorArrayUnstack';
    const flow = g.node(`${M}/${nm}/TensorArrayScatter/TensorArrayScatterV3`, 'TensorArrayScatterV3',
      [h, range(nm, n), x, `${h}:1`], { T: dt });
    return { h, flow, dt };
  });
  const outTA = outs.map(([dt, dims], k) => ({ h: ta(`TensorArray_${elems.length + k}`, dt, dims, n), dt, dims }));
  const consts = [...ins.flatMap((x) => [[x.h, RES], [x.flow, F32]]), ...outTA.map((o) => [o.h, RES])];
  const exits = whileLoop(g, M, n, outTA.map((o) => ({ init: `${o.h}:1`, dt: F32 })), consts, (flows, i, ent) => {
    const reads = ins.map((x, k) => g.node(`${M}/while/TensorArrayReadV3${k ? `_${k}` : ''}`, 'TensorArrayReadV3',
      [ent[2 * k], i, ent[2 * k + 1]], { dtype: x.dt }));
    const vals = body(reads);
    return vals.map((v, k) => g.node(`${M}/while/TensorArrayWrite${k ? `_${k}` : ''}/TensorArrayWriteV3`, 'TensorArrayWriteV3',
      [ent[2 * ins.length + k], i, v, flows[k]], { T: outTA[k].dt }));
  });
  return outTA.map((o, k) => {
    const nm = `TensorArrayStack${k ? `_${k}` : ''}`;
    const size = g.node(`${M}/${nm}/TensorArraySizeV3`, 'TensorArraySizeV3', [o.h, exits[k]], {});
    return g.node(`${M}/${nm}/TensorArrayGatherV3`, 'TensorArrayGatherV3', [o.h, range(nm, size), exits[k]],
      { dtype: o.dt, element_shape: { shape: { dim: o.dims.map((d) => ({ size: String(d) })) } } });
  });
}

// Pads x [k, ...] with zero rows to `total` rows (k from its shape), as
// PadOrClip does; rank 1 or 2.
function padRows(g, n, x, total, rank) {
  const k = dimOf(g, `${n}/PadOrClip`, x, 0);
  const padn = g.node(`${n}/PadOrClip/sub`, 'Sub', [g.constI(`${n}/PadOrClip/sub/x`, [total], []), k], { T: I32 });
  const zero = g.constI(`${n}/PadOrClip/zero`, [0], []);
  const parts = rank === 2 ? [zero, padn, zero, zero] : [zero, padn];
  const pk = g.node(`${n}/PadOrClip/stack`, 'Pack', parts, { T: I32, N: { i: String(parts.length) }, axis: { i: '0' } });
  const p = g.node(`${n}/PadOrClip/Reshape`, 'Reshape', [pk, g.constI(`${n}/PadOrClip/Reshape/shape`, [rank, 2])], { T: I32, Tshape: I32 });
  return g.node(`${n}/PadOrClip/Pad`, 'Pad', [x, p], { T: F32, Tpaddings: I32 });
}

// The first stage's post-processing: rpn box encodings [1, A, 4] and objectness
// (softmax) [1, A, 2] on a [fh, fw] map of an image of `size` -> proposals
// [1, maxProposals, 4] (zero rows past what the NMS kept), their count, the
// decoded boxes [1, A, 4] and the objectness scores [1, A].
function frcnnProposals(g, P, boxEnc, objectness, o) {
  const { size, fh, fw, maxProposals, iou } = o;
  const D = `${P}/FirstStagePostprocessor`;
  const an = frcnnAnchors(size, fh, fw);
  const A = an.count;
  const anc = ['ycenter_a', 'xcenter_a', 'ha', 'wa'].map((nm, k) =>
    g.constF(`${D}/Decode/${nm}`, [A], (i) => [an.yc, an.xc, an.ha, an.wa][k][i]));
  const codes = g.reshape(`${D}/Reshape`, boxEnc, [A, 4]);
  const boxes = g.reshape(`${D}/Reshape_1`, decodeClip(g, D, codes, anc), [1, A, 4]);
  const scores = g.node(`${D}/strided_slice`, 'StridedSlice', [objectness, g.constI(`${D}/strided_slice/stack`, [0, 0, 1]),
    g.constI(`${D}/strided_slice/stack_1`, [0, 0, 2]), g.constI(`${D}/strided_slice/stack_2`, [1, 1, 1])],
  { T: F32, Index: I32, begin_mask: { i: '3' }, end_mask: { i: '3' }, ellipsis_mask: { i: '0' }, new_axis_mask: { i: '0' }, shrink_axis_mask: { i: '4' } });
  const M = `${D}/BatchMultiClassNonMaxSuppression/map`;
  const B = `${M}/while/MultiClassNonMaxSuppression`;
  const [props, num] = mapFn(g, M, [[boxes, F32, [A, 4]], [scores, F32, [A]]], [[F32, [maxProposals, 4]], [I32, []]], ([bx, sc]) => {
    const nms = g.node(`${B}/non_max_suppression/NonMaxSuppressionV3`, 'NonMaxSuppressionV3', [bx, sc,
      g.constI(`${B}/non_max_suppression/max_output_size`, [maxProposals], []),
      g.constF(`${B}/non_max_suppression/iou_threshold`, [], () => iou),
      g.constF(`${B}/non_max_suppression/score_threshold`, [], () => 0)], { T: F32, T_threshold: F32 });
    const axis0 = g.constI(`${B}/GatherV2/axis`, [0], []);
    const kept = g.node(`${B}/GatherV2`, 'GatherV2', [bx, nms, axis0], { Tparams: F32, Tindices: I32, Taxis: I32, batch_dims: { i: '0' } });
    return [padRows(g, B, kept, maxProposals, 2), dimOf(g, `${B}/num`, nms, 0, I32)];
  });
  return { proposals: props, num, boxes, scores, A };
}

// The second stage's post-processing: box encodings [1, R, classes, 4] against
// the proposals [1, R, 4], class scores [1, R, classes + 1] (softmax, background
// first) -> detection_* (BatchMultiClassNonMaxSuppression: NonMaxSuppressionV3
// per class, ConcatV2, TopKV2, Pad) and the decoded boxes and scores it ran on.
function frcnnDetections(g, P, boxEnc, classScores, proposals, o) {
  const { classes, maxPerClass, maxTotal, iou, maxProposals: R } = o;
  const D = `${P}/SecondStagePostprocessor`;
  const codes = g.reshape(`${D}/Reshape`, boxEnc, [-1, 4]);
  // each proposal once per class: [1, R, 4] -> [R, 1, 4] -> [R, classes, 4] -> [R * classes, 4]
  const p3 = g.reshape(`${D}/Reshape_1`, proposals, [-1, 1, 4]);
  const tiled = g.node(`${D}/Tile`, 'Tile', [p3, g.constI(`${D}/Tile/multiples`, [1, classes, 1])], { T: F32, Tmultiples: I32 });
  const anchors = centersAndSizes(g, D, g.reshape(`${D}/Reshape_2`, tiled, [-1, 4]));
  const boxes = g.reshape(`${D}/Reshape_3`, decodeClip(g, D, codes, anchors), [1, R, classes, 4]);
  const scores = g.node(`${D}/Slice`, 'Slice', [classScores, g.constI(`${D}/Slice/begin`, [0, 0, 1]), g.constI(`${D}/Slice/size`, [-1, -1, -1])],
    { T: F32, Index: I32 });
  const M = `${D}/BatchMultiClassNonMaxSuppression/map`;
  const B = `${M}/while/MultiClassNonMaxSuppression`;
  const det = mapFn(g, M, [[boxes, F32, [R, classes, 4]], [scores, F32, [R, classes]]],
    [[F32, [maxTotal, 4]], [F32, [maxTotal]], [F32, [maxTotal]], [F32, []]], ([bx, sc]) => {
      const bxT = g.node(`${B}/transpose`, 'Transpose', [bx, g.constI(`${B}/transpose/perm`, [1, 0, 2])], { T: F32, Tperm: I32 });
      const scT = g.node(`${B}/transpose_1`, 'Transpose', [sc, g.constI(`${B}/transpose_1/perm`, [1, 0])], { T: F32, Tperm: I32 });
      const ub = g.node(`${B}/unstack`, 'Unpack', [bxT], { T: F32, num: { i: String(classes) }, axis: { i: '0' } });
      const us = g.node(`${B}/unstack_1`, 'Unpack', [scT], { T: F32, num: { i: String(classes) }, axis: { i: '0' } });
      const maxOut = g.constI(`${B}/max_output_size`, [maxPerClass], []);
      const iouT = g.constF(`${B}/iou_threshold`, [], () => iou);
      const thr = g.constF(`${B}/score_threshold`, [], () => 0);
      const axis0 = g.constI(`${B}/GatherV2/axis`, [0], []);
      const gb = []; const gs = []; const gc = [];
      const gather = (n, x, idx) => g.node(n, 'GatherV2', [x, idx, axis0], { Tparams: F32, Tindices: I32, Taxis: I32, batch_dims: { i: '0' } });
      for (let c = 0; c < classes; c++) {
        const n = c ? `${B}/non_max_suppression_${c}` : `${B}/non_max_suppression`;
        const bc = c ? `${ub}:${c}` : ub; const sc1 = c ? `${us}:${c}` : us;
        const nms = g.node(`${n}/NonMaxSuppressionV3`, 'NonMaxSuppressionV3', [bc, sc1, maxOut, iouT, thr], { T: F32, T_threshold: F32 });
        gb.push(gather(`${n}/GatherV2`, bc, nms));
        const s = gather(`${n}/GatherV2_1`, sc1, nms);
        gs.push(s);
        const z = g.node(`${n}/zeros_like`, 'ZerosLike', [s], { T: F32 });
        gc.push(g.node(`${n}/add`, 'AddV2', [z, g.constF(`${n}/add/y`, [], () => c + 1)], { T: F32 }));
      }
      const cat = (n, xs) => g.node(`${B}/Concatenate/${n}`, 'ConcatV2', [...xs, g.constI(`${B}/Concatenate/${n}/axis`, [0], [])],
        { T: F32, Tidx: I32, N: { i: String(xs.length) } });
      const allB = cat('concat', gb); const allS = cat('concat_1', gs); const allC = cat('concat_2', gc);
      const S = `${B}/SortByField`;
      const k = g.node(`${S}/Minimum`, 'Minimum', [dimOf(g, S, allS, 0), g.constI(`${S}/Minimum/y`, [maxTotal], [])], { T: I32 });
      const top = g.node(`${S}/TopKV2`, 'TopKV2', [allS, k], { T: F32, sorted: { b: true } });
      const topB = gather(`${S}/Gather/GatherV2`, allB, `${top}:1`);
      const topC = gather(`${S}/Gather/GatherV2_1`, allC, `${top}:1`);
      return [padRows(g, `${B}/boxes`, topB, maxTotal, 2), padRows(g, `${B}/scores`, top, maxTotal, 1),
        padRows(g, `${B}/classes`, topC, maxTotal, 1), g.node(`${B}/Cast`, 'Cast', [k], { SrcT: I32, DstT: F32, Truncate: { b: false } })];
    });
  return { det, boxes, scores };
}

module.exports = { effdetPost, effdetAnchors, whileLoop, BOOL, frcnnProposals, frcnnDetections, dimOf };
