/* Kernel steps: the kinds of kernel, their parameter blocks and the one
 * table (CK_KINDS) that core (names, cost, host references), glkernels
 * (shaders, invocations) and the tiling (row and channel rules) generate
 * their per-kind tables from. Includes nothing of core's program, io or GL:
 * glkernels include this and no other core header.
 *
 * A step is one kernel call on tensors of known shape. Its parameters are
 * a fixed block of 32-bit slots (ints, or floats stored as bits) that the
 * host reference reads as a C struct and the GLSL kernel reads as
 * `uniform int P[CK_MAX_P]`: the same numbers drive both.
 *
 * How to add a kernel kind:
 *  1. a row in CK_KINDS below (the enum's values follow the rows' order),
 *     and its parameter block (a ck_*_p struct, a member of CK_PARAMS) unless
 *     it shares one; the row names its cost, invocations and tiling rule
 *     among those that exist (core/step.c, glkernels/glk_program.c, core/tile_rules.c),
 *     or a new one written beside them;
 *  2. its host reference ck_host_<name> (declared from the row in core.h) and
 *     its shader glkernels/shaders/<shader>.comp (none for a host-only kind),
 *     reading input k's element i as LDk(i) and storing through ST(i, v), so
 *     that a binding may hold halves; core_step_half_ok (core/precision.c)
 *     names the bindings it takes as halves (none: it stays float32);
 *  3. the lowering that emits it (core/op_*.c);
 *  4. its kernel test (tests/test_kernels_*.c: GPU against host reference),
 *     and, where it has a tiling rule, a case in tests/test_tiling.c;
 *     tests/test_kernels_kinds.c checks every row reaches its functions and
 *     its shader compiles (and lists the host-only kinds). */
#ifndef SI_STEP_H
#define SI_STEP_H

#include <stddef.h>
#include <stdint.h>
#include "streaminfer.h"
#include "../base/base.h"

/* The parameter slot (of P[]) holding field f of parameter block m. */
#define CK_SLOT(m, f) ((int)((offsetof(ck_step, u.m.f) - offsetof(ck_step, u)) / 4))

/* One row per kind, in enum order:
 *   X(KIND, name, params, shader, variant, invocations, iterations, tiling)
 * KIND     the enum value CK_<KIND>
 * name     ck_kind_name; the host reference is ck_host_<name>
 * params   the member of ck_step.u holding its parameter block
 * shader   glkernels/shaders/<shader>.comp; NULL: the kind runs on the host
 *          (ck_runs_on_host), even in a GPU run
 * variant  the slot (CK_SLOT) whose value selects a compiled variant of the
 *          shader (the OPC macro), -1 none
 * invocations  GPU invocations of one dispatch: glk_inv_<it> (glkernels/glk_program.c)
 * iterations   loop iterations one invocation runs: ck_iters_<it> (core/step.c)
 * tiling   how the tiling splits it: tile_rule_<it> (core/tile_rules.c);
 *          none: it runs whole, its inputs made whole */
#define CK_KINDS(X)                                                                        \
    /* strided region copy (slice, transpose, concat part, pack, unpack) */                \
    X(COPY, copy, copy, "copy", -1, copy, one, copy)                                       \
    /* constant / reflect / symmetric pad */                                               \
    X(PAD, pad, pad, "pad", -1, out, one, pad)                                             \
    X(UNARY, unary, unary, "unary", CK_SLOT(unary, op), out, one, unary)                   \
    /* broadcast by strides */                                                             \
    X(BINARY, binary, binary, "binary", CK_SLOT(binary, op), out, one, binary)             \
    X(ADDN, addn, addn, "addn", -1, out, one, addn)                                        \
    /* NHWC, filter HWIO, fused bias/activation */                                         \
    X(CONV2D, conv2d, conv, "conv2d", -1, out, conv, conv2d)                               \
    /* filter HWCM */                                                                      \
    X(DWCONV2D, dwconv2d, conv, "dwconv2d", -1, out, window, dwconv2d)                     \
    /* Conv2DBackpropInput, filter HW(out)(in) */                                          \
    X(DECONV2D, deconv2d, conv, "deconv2d", -1, out, conv, none)                           \
    /* batched, fused bias/activation */                                                   \
    X(MATMUL, matmul, matmul, "matmul", -1, matmul, matmul, matmul)                           \
    X(POOL, pool, pool, "pool", -1, pool, pool, pool)                                      \
    /* [outer, n, inner] → [outer, inner] */                                               \
    X(REDUCE, reduce, reduce, "reduce", CK_SLOT(reduce, op), reduce, reduce, reduce)       \
    /* over the last axis */                                                               \
    X(SOFTMAX, softmax, softmax, "softmax", -1, softmax, softmax, softmax)                 \
    /* [outer, n, inner] → int32 [outer, inner] */                                         \
    X(ARGMAX, argmax, argmax, "argmax", -1, argmax, argmax, argmax)                        \
    X(RESIZE, resize, resize, "resize", -1, out, one, resize)                              \
    /* GatherV2: [outer, n, inner] with indices → [outer, k, inner] */                     \
    X(GATHER, gather, gather, "gather", -1, out, one, gather)                              \
    X(GATHERND, gathernd, gathernd, "gathernd", -1, out, one, none)                        \
    /* stored (u8/u16/f16 packed in 32-bit words) → float32 */                             \
    X(DEQUANT, dequant, dequant, "dequant", CK_SLOT(dequant, quant), dequant, one, none)   \
    /* per row: the k largest (values or indices), ties to the lower index */              \
    X(TOPK, topk, topk, NULL, -1, out, one, none)                                          \
    /* TopK on the GPU: per block of a row's items, the block's best (indices) */         \
    X(TOPK_BLOCK, topk_block, topkb, "topk_block", -1, topkb, one, none)                   \
    /* out[r, j] = x[r, idx[r, j]]: the values of TopK's indices */                         \
    X(TAKE, take, take, "take", -1, out, one, none)                                        \
    /* out = cond ? a : b, all three broadcast by strides */                               \
    X(SELECT, select, select, "select", -1, out, one, select)                              \
    /* CropAndResize: boxes, box_ind → per-box sampling table */                           \
    X(CROP_BOXES, crop_boxes, crop, NULL, -1, out, one, none)                              \
    /* CropAndResize: image, that table → crops */                                         \
    X(CROP_RESIZE, crop_resize, crop, "crop_resize", -1, out, one, crop)                   \
    /* Multinomial: logits [batch, events] → int32 [batch, samples] (core/op_random.c) */  \
    X(MULTINOMIAL, multinomial, multinomial, NULL, -1, out, one, none)                     \
    /* ImageProjectiveTransformV3 (core/op_image.c) */                                     \
    X(TRANSFORM, transform, transform, NULL, -1, out, one, none)                           \
    /* Dilation2D: max over the window of x + filter (filter HWC) */                       \
    X(DILATION2D, dilation2d, conv, "dilation2d", -1, out, window, none)                   \
    /* MaxPoolWithArgmax's indices: int32 flat position of each window's max */            \
    X(POOL_ARGMAX, pool_argmax, pool, "pool_argmax", -1, out, pool, none)                  \
    /* Conv3D: NDHWC, filter DHWIO, tfjs's summation order */                              \
    X(CONV3D, conv3d, conv3d, "conv3d", -1, out, conv3d, none)                             \
    /* ScatterNd (sum) / TensorScatterUpdate (last wins): indices, updates[, tensor] */    \
    X(SCATTER, scatter, scatter, NULL, -1, out, one, none)                                 \
    /* LowerBound / UpperBound: per value, a binary search of its sorted row */            \
    X(SEARCH, search, search, "search", -1, out, one, none)                                \
    /* Bincount / DenseBincount: x[, weights] → [size] or [rows, size] */                  \
    X(BINCOUNT, bincount, bincount, NULL, -1, out, one, none)                              \
    /* Cumsum / Cumprod: [outer, n, inner], a running sum or product along n */            \
    X(SCAN, scan, scan, "scan", CK_SLOT(scan, op), scan, scan, scan)                       \
    /* LRN: [outer, c], each element over the squares of its channel window */            \
    X(LRN, lrn, lrn, "lrn", -1, out, lrn, lrn)

typedef enum {
#define CK_KIND_ENUM(K, name, params, shader, variant, inv, iters, tiling) CK_##K,
    CK_KINDS(CK_KIND_ENUM)
#undef CK_KIND_ENUM
    CK__COUNT
} ck_kind;

/* Every dtype is 4 bytes an element here and on the GPU (bool as int32 0/1):
 * one layout, so kernels never care. */
#define CK_ELEM 4
#define CK_MAX_P 64
/* Parameters and kernel indices are 32-bit signed ints: no tensor a step
 * touches may have more elements (a limit of the plan, like the budget). */
#define CK_MAX_INDEX_ELEMS 0x7fffffffull
#define CK_MAX_IN 8
#define CK_MAX_OUT 1

/* The op enums below are lists too: glkernels hand each value to the shaders
 * as a macro named without the CK_ (ACT_RELU, U_NEG, B_ADD, R_SUM). */

/* Activations fused into conv / matmul / binary epilogues. */
/* RELU is the fused one's (x > 0 ? x : 0); RELU_OP the Relu op's (x < 0 ? 0 : x, NaN
 * and -0 kept), for a Relu step fused into the producer (core/fuse.c) */
#define CK_ACTS(X) X(NONE) X(RELU) X(RELU6) X(PRELU) X(LEAKYRELU) X(ELU) X(SIGMOID) X(TANH) X(RELU_OP)

#define CK_UNARY_OPS(X)                                                                      \
    X(NEG) X(ABS) X(RELU) X(RELU6) X(LEAKYRELU) X(ELU) X(SELU) X(SIGMOID) X(TANH) X(EXP)     \
    X(LOG) X(SQRT) X(RSQRT) X(SQUARE) X(RECIPROCAL) X(FLOOR) X(CEIL) X(ROUND) X(SIN) X(COS) \
    X(SIGN) X(SOFTPLUS) X(LOGICAL_NOT) X(CAST) X(IDENTITY) X(ERF) X(EXPM1) X(LOG1P) X(ATAN)  \
    X(TAN) X(ASIN) X(ACOS) X(SINH) X(COSH) X(ISNAN) X(HARDSWISH) X(ASINH) X(ACOSH) X(ATANH) \
    X(ISFINITE) X(ISINF) X(CLIP)

#define CK_BINARY_OPS(X)                                                                     \
    X(ADD) X(SUB) X(MUL) X(DIV) X(MAX) X(MIN) X(POW) X(SQDIFF) X(FLOORDIV) X(FLOORMOD)      \
    X(PRELU) X(ATAN2) X(EQUAL) X(NOTEQUAL) X(LESS) X(LESSEQ) X(GREATER) X(GREATEREQ) X(AND) \
    X(OR) X(DIVNONAN) X(BITAND)

#define CK_REDUCE_OPS(X) X(SUM) X(MEAN) X(MAX) X(MIN) X(PROD) X(ANY) X(ALL)

#define CK_ACT_ENUM(n) CK_ACT_##n,
#define CK_U_ENUM(n) CK_U_##n,
#define CK_B_ENUM(n) CK_B_##n,
#define CK_R_ENUM(n) CK_R_##n,
typedef enum { CK_ACTS(CK_ACT_ENUM) } ck_act;
typedef enum { CK_UNARY_OPS(CK_U_ENUM) CK_U__COUNT } ck_unary_op;
typedef enum { CK_BINARY_OPS(CK_B_ENUM) CK_B__COUNT } ck_binary_op;
typedef enum { CK_REDUCE_OPS(CK_R_ENUM) } ck_reduce_op;
#undef CK_ACT_ENUM
#undef CK_U_ENUM
#undef CK_B_ENUM
#undef CK_R_ENUM

/* Parameter blocks. Only int32_t and float members: each is one slot. */
typedef struct {
    int32_t rank;                 /* ≤ SI_MAX_RANK, dims of the copied region */
    int32_t dim[SI_MAX_RANK];
    int32_t in_stride[SI_MAX_RANK];
    int32_t out_stride[SI_MAX_RANK];
    int32_t in_offset, out_offset; /* elements */
} ck_copy_p;

typedef struct {
    int32_t rank;
    int32_t in_dim[SI_MAX_RANK];
    int32_t out_dim[SI_MAX_RANK];
    int32_t before[SI_MAX_RANK];
    int32_t mode;                 /* 0 constant, 1 reflect, 2 symmetric */
    float value;                  /* constant (int tensors: stored as float, exact ≤ 2^24) */
} ck_pad_p;

typedef struct {
    int32_t op;                   /* ck_unary_op */
    int32_t count;
    int32_t in_dtype, out_dtype;  /* si_dtype; differ only for CK_U_CAST */
    float alpha;                  /* leaky relu; CK_U_CLIP: the lower bound */
    float beta;                   /* CK_U_CLIP: the upper bound */
    int32_t ilo, ihi;             /* CK_U_CLIP on int32: the bounds */
} ck_unary_p;

typedef struct {
    int32_t op;                   /* ck_binary_op */
    int32_t rank;
    int32_t out_dim[SI_MAX_RANK];
    int32_t a_stride[SI_MAX_RANK]; /* 0 along broadcast dims */
    int32_t b_stride[SI_MAX_RANK];
    int32_t in_dtype, out_dtype;
    int32_t count;
} ck_binary_p;

typedef struct {
    int32_t n;                    /* inputs, ≤ CK_MAX_IN */
    int32_t count;
    int32_t dtype;
} ck_addn_p;

/* CK_CONV2D, CK_DWCONV2D, CK_DECONV2D. Inputs: x, filter, [bias], [prelu alpha],
 * [clip scalars] (not DECONV2D's).
 * For DECONV2D, in_* is the deconv input (dy) and out_* its output; pad_* are the
 * forward conv's paddings. */
typedef struct {
    int32_t n, in_h, in_w, in_c;
    int32_t out_h, out_w, out_c;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w, dil_h, dil_w;
    int32_t pad_top, pad_left;
    int32_t ch_mult;              /* depthwise */
    int32_t has_bias, act, has_alpha_tensor; /* act: ck_act */
    float alpha;                  /* leaky relu */
    /* after the activation, n_clip (<= 2) Minimum/Maximum (clip_op: CK_B_MIN or
     * CK_B_MAX) of the value and the scalar input 4 (then 5), fused (core/fuse.c);
     * or (hswish 1, no activation, no clips) a hard swish as MobileNetV3 writes it:
     * (c1 * v) * relu6(v + c2), c1 input 4, c2 input 5, each op rounded as the
     * Mul, Add, Relu6, Mul steps it replaces; or (hswish 2) a hard sigmoid,
     * relu6(v + c2) * c1, as the Add, Relu6, Mul steps it replaces */
    int32_t n_clip, clip_op[2], hswish;
    /* 1: before the bias, the value times input 6's element of the output
     * channel, rounded (a batch norm's Mul left unfolded; core/fuse.c); 2 (CK_CONV2D,
     * CK_DWCONV2D): that product after the bias instead, and 3: after it, plus input
     * 3's element of the channel (a batch norm's Mul and Add after a conv with a
     * bias, as TF's Inception-ResNet exports have them; input 3 is then no PReLU
     * alpha), each op rounded as its step's */
    int32_t has_scale;
    /* the whole op's output elements (INT32_MAX at most), as lowered: the same
     * in every tile a budget splits it into (a GPU's conv2d variant hangs on it,
     * glkernels/glk_program.c conv_variant); 0: the step's own */
    int32_t whole_out;
    /* CK_CONV2D: after the bias, before the activation, the value plus input
     * 7's element at the output's index (a residual Add fused, core/fuse.c),
     * one float32 add as the Add step's */
    int32_t has_res;
} ck_conv_p;

/* out[b] = act(A[b] · B[b] + bias). A is [M,K] (or [K,M] if trans_a), B [K,N] (or [N,K]).
 * Batch strides in elements, 0 broadcasts. Inputs: a, b, [bias], [prelu alpha],
 * [clip scalars]. */
typedef struct {
    int32_t batch, m, n, k;
    int32_t trans_a, trans_b;
    int32_t a_batch_stride, b_batch_stride;
    int32_t has_bias, act, has_alpha_tensor;
    float alpha;
    int32_t n_clip, clip_op[2], hswish, has_scale; /* as ck_conv_p's */
} ck_matmul_p;

typedef struct {
    int32_t is_max;               /* 1 max, 0 avg (average over valid elements only) */
    int32_t n, in_h, in_w, c;
    int32_t out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
    int32_t include_batch;        /* CK_POOL_ARGMAX: the index counts the batch too */
} ck_pool_p;

/* A tiled reduction runs over parts of n in order, each part starting from the
 * previous part's result (has_init: input 1), so the sum is the same sum.
 * Float Sum, Mean and Prod accumulate wide, as tfjs's JS number (float64) does,
 * rounding to float32 once; their running result between parts is the wide
 * accumulator itself, two words an element (carry): the host's float64, the
 * GPU's float-float pair. */
typedef struct {
    int32_t op;                   /* ck_reduce_op */
    int32_t outer, n, inner;
    int32_t dtype;
    int32_t divisor;              /* Mean divides by this (the whole n); 0: n */
    int32_t has_init;             /* input 1 [outer, inner]: the running result so far */
    int32_t carry;                /* bit 0: input 1 is a wide carry; bit 1: the output is */
    /* CK_REDUCE_LANES: a float Sum or Mean over n >= CK_REDUCE_WIDE runs one
     * workgroup an output on the GPU, lane l summing the elements j of the
     * whole n with j % 64 == l in its pair, the 64 pairs added in a fixed tree
     * at the end; a carry is then 64 pairs an element (lane l's at 2 * (64 *
     * element + l)). j0: where this part starts in the whole n. The order hangs
     * on n alone, never on the parts: every budget gives the same bits. The
     * host reference sums in order in a double, as tfjs does; its carry sits in
     * lane 0's words. */
    int32_t lanes, j0;
    /* pairs: input 0's elements are wide pairs (another reduction's carry
     * output), each added whole; a float Sum only. post_div: the rounded
     * result is the wide sum divided by this, as an average pool divides
     * (0: none). Both come from a split reduction (core_reduce_split). */
    int32_t pairs, post_div;
} ck_reduce_p;

#define CK_REDUCE_LANES 64
#define CK_REDUCE_WIDE 256

typedef struct {
    int32_t outer, n;
    int32_t log;                  /* LogSoftmax */
} ck_softmax_p;

typedef struct {
    int32_t outer, n, inner;
    int32_t is_min;
    int32_t in_dtype;
    int32_t lanes; /* CK_REDUCE_LANES: one workgroup an output (n >= CK_REDUCE_WIDE) */
} ck_argmax_p;

/* A row tile computes output rows [y0, y0+rows) of the whole resize from input
 * rows [in_y0, in_y0+in_rows); rows 0 means the whole (y0, in_y0 0). */
typedef struct {
    int32_t bilinear;             /* 1 bilinear, 0 nearest */
    int32_t n, in_h, in_w, c, out_h, out_w;
    int32_t align_corners, half_pixel_centers;
    int32_t y0, in_y0, rows, in_rows;
} ck_resize_p;

/* out[o, j, i] = params[o, idx[j], i]; indices out of range give 0 (TF on CPU errors;
 * tfjs gives garbage — lowering validates constant indices). */
typedef struct {
    int32_t outer, n, inner, k;
} ck_gather_p;

/* params viewed as [P0..P(d-1), slice]; indices [k, d]; out [k, slice]. */
typedef struct {
    int32_t k, d, slice;
    int32_t pdim[SI_MAX_RANK];    /* first d dims of params */
} ck_gathernd_p;

typedef struct {
    int32_t count;
    int32_t quant;                /* io_quant: 1 uint8, 2 uint16, 3 float16 */
    float min, scale;
} ck_dequant_p;

typedef struct {
    int32_t rank;
    int32_t out_dim[SI_MAX_RANK];
    int32_t c_stride[SI_MAX_RANK], a_stride[SI_MAX_RANK], b_stride[SI_MAX_RANK];
    int32_t count;
} ck_select_p;

/* Runs on the host (DESIGN: TopK is a host op): a row can be millions long,
 * past what one GPU invocation may loop over on llvmpipe, and selection is
 * cheap on the CPU. */
typedef struct {
    int32_t outer, n, k;
    int32_t want_indices;
    int32_t unsorted; /* sorted=false: the k in tfjs's selection order */
    /* 1: input 1 is the GPU's answer (CK_TOPK_BLOCK's last level, [outer, 1,
     * k + 1], the flag last) and the output the indices: a row whose flag is 0
     * is copied from it; a flagged row (a NaN or an infinity in it, where
     * tfjs's select() is not a plain top k) is selected here from input 0,
     * which is read only when some row is flagged (ck_host_skips_input). */
    int32_t cand;
} ck_topk_p;

/* CK_TOPK_BLOCK (core/op_select.c): sorted TopK of a row as a tree of blocks,
 * on the GPU. Items are indices into x's row [outer, n]: at the first level
 * (from_cand 0) block b holds elements [b*items, (b+1)*items); at the next
 * ones it holds the kept indices of `group` blocks of the level before
 * (input 1, [outer, pnb, pkb + 1]). Each block keeps its kb best by tfjs's
 * order for finite values (larger first, -0 equal to +0, ties to the lower
 * index), best first, -1 past its items; slot kb is a flag: a NaN or an
 * infinity among its elements (or flagged blocks below). The order is a total
 * one, so the last level's k are the row's k whatever the blocks. Output
 * int32 [outer, nb, kb + 1]; one workgroup a block keeps `sort` (<= CK_TOPK_SORT)
 * keys in shared memory: a power of two >= items at the first level; at the
 * next ones, a power of two >= group runs of R slots each (R: the power of two
 * >= pkb, which is why group is CK_TOPK_SORT / R at most). */
#define CK_TOPK_SORT 1024
typedef struct {
    int32_t outer, n, nb, kb, items, sort;
    int32_t from_cand, pnb, pkb, group;
    int32_t x_float;
} ck_topkb_p;

/* CK_TAKE: x [outer, n], idx int32 [outer, k] → [outer, k], x's dtype; an index
 * outside [0, n) gives 0. */
typedef struct {
    int32_t outer, n, k;
} ck_take_p;

/* CropAndResize (core/op_image.c), both steps. CK_CROP_BOXES computes, in
 * float64 as tfjs does, one int32 row of 1 + 3*(crop_h + crop_w) per box: the
 * image it reads (or CK_CROP_SKIP: box_ind >= batch, zeros; CK_CROP_NAN: box_ind
 * < 0), then per output row and per output column the two source indices and
 * the lerp (float bits); a first index CK_CROP_OUTSIDE is extrapolated,
 * CK_CROP_NAN a NaN coordinate. It runs on the host: the GPU has no float64,
 * and which rows are extrapolated hangs on the last bit of the coordinate. */
typedef struct {
    int32_t n, batch, in_h, in_w, c, crop_h, crop_w;
    int32_t bilinear;             /* 1 bilinear, 0 nearest */
    float extrapolation;
} ck_crop_p;

/* Multinomial (core/op_random.c), on the host: tfjs draws from seedrandom's
 * alea in float64 and compares against a float32 cdf. The seed is the attr's
 * 64 bits, or (derived) a hash of the node's name where tfjs would draw one. */
typedef struct {
    int32_t batch, events, samples;
    int32_t seed_lo, seed_hi, derived;
} ck_multinomial_p;

/* ImageProjectiveTransformV3 (core/op_image.c), on the host: its coordinates
 * are float64 in tfjs. */
typedef struct {
    int32_t batch, in_h, in_w, c, out_h, out_w;
    int32_t bilinear, fill_mode;  /* CK_FILL_* */
    float fill;
} ck_transform_p;

enum { CK_FILL_CONSTANT, CK_FILL_REFLECT, CK_FILL_WRAP, CK_FILL_NEAREST };

enum { CK_CROP_OUTSIDE = -1, CK_CROP_NAN = -2, CK_CROP_SKIP = -3 };

/* CK_CONV3D. Inputs: x NDHWC, filter [k_d, k_h, k_w, in_c, out_c]. */
typedef struct {
    int32_t n, in_d, in_h, in_w, in_c;
    int32_t out_d, out_h, out_w, out_c;
    int32_t k_d, k_h, k_w;
    int32_t stride_d, stride_h, stride_w, dil_d, dil_h, dil_w;
    int32_t pad_front, pad_top, pad_left;
} ck_conv3d_p;
/* ScatterNd and TensorScatterUpdate (core/op_scatter.c), as tfjs's scatterImpl:
 * updates in order, summed (ScatterNd) or the last one kept; the output starts
 * as zeros or as input 2. An index row whose flat slice (the dot product with
 * strides, not checked per dimension, as tfjs) is outside [0, n_slices) is
 * skipped where tfjs throws. It runs on the host: an output-driven kernel would
 * scan every update per element, and ScatterNd's float sums must be added in
 * update order to be tfjs's. */
typedef struct {
    int32_t slice_rank, slice_size, num_updates, n_slices;
    int32_t strides[SI_MAX_RANK];
    int32_t sum;                  /* 1: ScatterNd, 0: TensorScatterUpdate */
    int32_t scalar_update;        /* updates is a scalar: every slice element gets it */
} ck_scatter_p;

/* LowerBound / UpperBound (core/op_scatter.c), as tfjs's searchSortedImpl:
 * sorted [batch, n], values [batch, nv] → int32 [batch, nv], the first index
 * whose element is >= (upper: >) the value; a NaN compares false. */
typedef struct {
    int32_t batch, n, nv;
    int32_t upper;
} ck_search_p;

/* Bincount and DenseBincount (core/op_scatter.c), as tfjs's bincountImpl (rank 1:
 * binary_output is not read) and bincountReduceImpl (rank 2): x int32 [rows,
 * cols], weights (input 1, absent when empty) the same shape. A value >= size
 * is skipped, a negative one too (tfjs throws). On the host, like CK_SCATTER:
 * the float sums are tfjs's only when added in x's order. */
typedef struct {
    int32_t rows, cols, size;
    int32_t weighted, binary;
} ck_bincount_p;

/* Cumsum and Cumprod (core/op_misc.c), as tfjs-backend-cpu's cumsum/cumprod:
 * x [outer, n, inner] (bool read as int32) → the same shape, one line along n
 * an invocation, in order (reverse: from the end). Inclusive: out[0] = x[0],
 * out[j] = x[j] op out[j-1]; exclusive: out[0] = 0 (1), out[j] = x[j-1] op
 * out[j-1]. int32 sums wrap; an int32 product is tfjs's float64 product of the
 * two int32s, stored into an Int32Array (exact only below 2^53). */
enum { CK_SCAN_SUM, CK_SCAN_PROD };
typedef struct {
    int32_t op;                   /* CK_SCAN_SUM, CK_SCAN_PROD */
    int32_t outer, n, inner;
    int32_t exclusive, reverse;
} ck_scan_p;

/* LRN (core/op_misc.c), as tfjs-backend-cpu's lRN: x [outer, c] (NHWC's
 * channels last); out = x * (bias + alpha * sum)^-beta, sum over the squares of
 * channels [c - radius, c + radius] clipped to the row. The host reference
 * computes in float64 as tfjs does (from the attrs as float32: a converted
 * model's are float32 already); the GPU in float32. */
typedef struct {
    int32_t outer, c, radius;
    float bias, alpha, beta;
} ck_lrn_p;

/* The parameter blocks, each a member of ck_step.u: X(type, member). */
#define CK_PARAMS(X)                                                                           \
    X(ck_copy_p, copy) X(ck_pad_p, pad) X(ck_unary_p, unary) X(ck_binary_p, binary)            \
    X(ck_addn_p, addn) X(ck_conv_p, conv) X(ck_matmul_p, matmul) X(ck_pool_p, pool)            \
    X(ck_reduce_p, reduce) X(ck_softmax_p, softmax) X(ck_argmax_p, argmax)                     \
    X(ck_resize_p, resize) X(ck_gather_p, gather) X(ck_gathernd_p, gathernd)                   \
    X(ck_dequant_p, dequant) X(ck_topk_p, topk) X(ck_topkb_p, topkb) X(ck_take_p, take)    \
    X(ck_select_p, select) X(ck_crop_p, crop)                                              \
    X(ck_multinomial_p, multinomial) X(ck_transform_p, transform)                          \
    X(ck_conv3d_p, conv3d)                                                                 \
    X(ck_scatter_p, scatter) X(ck_search_p, search) X(ck_bincount_p, bincount)             \
    X(ck_scan_p, scan) X(ck_lrn_p, lrn)

typedef struct {
    ck_kind kind;
    int n_in;
    int in[CK_MAX_IN];            /* program tensor ids; -1 = absent */
    int out;                      /* program tensor id */
    union {
        int32_t p[CK_MAX_P];
#define CK_PARAMS_MEMBER(type, member) type member;
        CK_PARAMS(CK_PARAMS_MEMBER)
#undef CK_PARAMS_MEMBER
    } u;
    int node;                     /* graph node it came from, for messages and traces */
    /* CK_COPY into a tensor that earlier steps also write (concat, pack):
     * the output keeps what it had. */
    int accumulate;
    /* Bindings stored as IEEE half, two a 32-bit word (si_options.precision
     * f16; core/precision.c): bit i input i, bit CK_MAX_IN the output. The
     * kernel loads them as float32 and rounds once on store; host references
     * read and write float32 whatever it says. */
    int half;
} ck_step;

/* core/step.c, from CK_KINDS. */
const char *ck_kind_name(ck_kind k);
/* The shader a kind runs (glkernels/shaders/<name>.comp), NULL if none. */
const char *ck_kind_shader(ck_kind k);
/* Steps the executor runs with the host reference even on the GPU: their inputs
 * are read back, their output written. The kinds without a shader. */
int ck_runs_on_host(ck_kind k);
/* Loop iterations one GPU invocation of the step runs (nested loops multiplied). */
uint64_t ck_loop_iterations(const ck_step *s);
/* a conv's output elements, INT32_MAX at most (ck_conv_p.whole_out) */
int32_t ck_conv_whole_out(const ck_conv_p *p);

/* Input rows [*lo, *hi] that output row oy of a whole resize reads. */
void ck_resize_rows(const ck_resize_p *p, int32_t oy, int32_t *lo, int32_t *hi);

/* Scalar semantics shared by host references (and mirrored in GLSL). */
float ck_apply_act(int act, float x, float alpha);

#endif
