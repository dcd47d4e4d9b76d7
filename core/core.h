/* core — shapes, host buffers, kernel steps (with their host reference
 * implementations), the op table and the program. Knows nothing of GL. */
#ifndef SI_CORE_H
#define SI_CORE_H

#include <stdint.h>
#include <stddef.h>
#include "streaminfer.h"
#include "../base/base.h"
#include "../io/io.h"

typedef struct {
    int rank;
    int64_t d[SI_MAX_RANK];
} core_shape;

/* Elements of s. Saturates at INT64_MAX/INT64_MIN instead of overflowing. */
int64_t core_shape_count(const core_shape *s);
/* Elements of s into *count; -1 (count untouched) if a dimension is negative or
 * the count or its byte size (CORE_ELEM an element) overflows int64. */
int core_shape_count_checked(const core_shape *s, int64_t *count);
int core_shape_eq(const core_shape *a, const core_shape *b);
/* "[1,64,64,3]" into buf; returns buf. */
const char *core_shape_str(const core_shape *s, char *buf, size_t n);

/* A host tensor. Every dtype is 4 bytes an element here and on the GPU
 * (bool as int32 0/1): one layout, so kernels never care. */
typedef struct {
    si_dtype dtype;
    core_shape shape;
    void *data; /* float* or int32_t* */
} core_buf;

#define CORE_ELEM 4

void core_strides(const core_shape *s, int64_t *stride); /* C-order element strides */
/* numpy broadcast of a and b into out; -1 if they do not broadcast. */
int core_broadcast_shape(const core_shape *a, const core_shape *b, core_shape *out);

/* ---- kernel steps ------------------------------------------------------
 * A step is one kernel call on tensors of known shape. Its parameters are
 * a fixed block of 32-bit slots (ints, or floats stored as bits) that the
 * host reference reads as a C struct and the GLSL kernel reads as
 * `uniform int P[CK_MAX_P]`: the same numbers drive both. */

typedef enum {
    CK_COPY,      /* strided region copy (slice, transpose, concat part, pack, unpack) */
    CK_PAD,       /* constant / reflect / symmetric pad */
    CK_UNARY,
    CK_BINARY,    /* broadcast by strides */
    CK_ADDN,
    CK_CONV2D,    /* NHWC, filter HWIO, fused bias/activation */
    CK_DWCONV2D,  /* filter HWCM */
    CK_DECONV2D,  /* Conv2DBackpropInput, filter HW(out)(in) */
    CK_MATMUL,    /* batched, fused bias/activation */
    CK_POOL,
    CK_REDUCE,    /* [outer, n, inner] → [outer, inner] */
    CK_SOFTMAX,   /* over the last axis */
    CK_ARGMAX,    /* [outer, n, inner] → int32 [outer, inner] */
    CK_RESIZE,
    CK_GATHER,    /* GatherV2: [outer, n, inner] with indices → [outer, k, inner] */
    CK_GATHERND,
    CK_DEQUANT,   /* stored (u8/u16/f16 packed in 32-bit words) → float32 */
    CK_TOPK,      /* per row: the k largest (values or indices), ties to the lower index; host */
    CK_SELECT,    /* out = cond ? a : b, all three broadcast by strides */
    CK_CROP_BOXES,  /* CropAndResize: boxes, box_ind → per-box sampling table; host */
    CK_CROP_RESIZE, /* CropAndResize: image, that table → crops */
    CK__COUNT
} ck_kind;

#define CK_MAX_P 64
/* Parameters and kernel indices are 32-bit signed ints: no tensor a step
 * touches may have more elements (a limit of the plan, like the budget). */
#define CK_MAX_INDEX_ELEMS 0x7fffffffull
#define CK_MAX_IN 8
#define CK_MAX_OUT 1

/* Activations fused into conv / matmul / binary epilogues. */
typedef enum {
    CK_ACT_NONE, CK_ACT_RELU, CK_ACT_RELU6, CK_ACT_PRELU, CK_ACT_LEAKYRELU,
    CK_ACT_ELU, CK_ACT_SIGMOID, CK_ACT_TANH
} ck_act;

typedef enum {
    CK_U_NEG, CK_U_ABS, CK_U_RELU, CK_U_RELU6, CK_U_LEAKYRELU, CK_U_ELU, CK_U_SELU,
    CK_U_SIGMOID, CK_U_TANH, CK_U_EXP, CK_U_LOG, CK_U_SQRT, CK_U_RSQRT, CK_U_SQUARE,
    CK_U_RECIPROCAL, CK_U_FLOOR, CK_U_CEIL, CK_U_ROUND, CK_U_SIN, CK_U_COS,
    CK_U_SIGN, CK_U_SOFTPLUS, CK_U_LOGICAL_NOT, CK_U_CAST, CK_U_IDENTITY, CK_U_ERF,
    CK_U_EXPM1, CK_U_LOG1P, CK_U_ATAN, CK_U_TAN, CK_U_ASIN, CK_U_ACOS, CK_U_SINH,
    CK_U_COSH, CK_U_ISNAN, CK_U_HARDSWISH,
    CK_U_ASINH, CK_U_ACOSH, CK_U_ATANH, CK_U_ISFINITE, CK_U_ISINF, CK_U_CLIP,
    CK_U__COUNT
} ck_unary_op;

typedef enum {
    CK_B_ADD, CK_B_SUB, CK_B_MUL, CK_B_DIV, CK_B_MAX, CK_B_MIN, CK_B_POW,
    CK_B_SQDIFF, CK_B_FLOORDIV, CK_B_FLOORMOD, CK_B_PRELU, CK_B_ATAN2,
    CK_B_EQUAL, CK_B_NOTEQUAL, CK_B_LESS, CK_B_LESSEQ, CK_B_GREATER, CK_B_GREATEREQ,
    CK_B_AND, CK_B_OR, CK_B_DIVNONAN,
    CK_B__COUNT
} ck_binary_op;

typedef enum { CK_R_SUM, CK_R_MEAN, CK_R_MAX, CK_R_MIN, CK_R_PROD, CK_R_ANY, CK_R_ALL } ck_reduce_op;

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

/* CK_CONV2D, CK_DWCONV2D, CK_DECONV2D. Inputs: x, filter, [bias], [prelu alpha].
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
} ck_conv_p;

/* out[b] = act(A[b] · B[b] + bias). A is [M,K] (or [K,M] if trans_a), B [K,N] (or [N,K]).
 * Batch strides in elements, 0 broadcasts. Inputs: a, b, [bias], [prelu alpha]. */
typedef struct {
    int32_t batch, m, n, k;
    int32_t trans_a, trans_b;
    int32_t a_batch_stride, b_batch_stride;
    int32_t has_bias, act, has_alpha_tensor;
    float alpha;
} ck_matmul_p;

typedef struct {
    int32_t is_max;               /* 1 max, 0 avg (average over valid elements only) */
    int32_t n, in_h, in_w, c;
    int32_t out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
} ck_pool_p;

/* A tiled reduction runs over parts of n in order, each part starting from the
 * previous part's result (has_init: input 1), so the sum is the same sum. */
typedef struct {
    int32_t op;                   /* ck_reduce_op */
    int32_t outer, n, inner;
    int32_t dtype;
    int32_t divisor;              /* Mean divides by this (the whole n); 0: n */
    int32_t has_init;             /* input 1 [outer, inner]: the running result so far */
} ck_reduce_p;

typedef struct {
    int32_t outer, n;
    int32_t log;                  /* LogSoftmax */
} ck_softmax_p;

typedef struct {
    int32_t outer, n, inner;
    int32_t is_min;
    int32_t in_dtype;
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
} ck_topk_p;

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

enum { CK_CROP_OUTSIDE = -1, CK_CROP_NAN = -2, CK_CROP_SKIP = -3 };

typedef struct {
    ck_kind kind;
    int n_in;
    int in[CK_MAX_IN];            /* program tensor ids; -1 = absent */
    int out;                      /* program tensor id */
    union {
        int32_t p[CK_MAX_P];
        ck_copy_p copy; ck_pad_p pad; ck_unary_p unary; ck_binary_p binary;
        ck_addn_p addn; ck_conv_p conv; ck_matmul_p matmul; ck_pool_p pool;
        ck_reduce_p reduce; ck_softmax_p softmax; ck_argmax_p argmax;
        ck_resize_p resize; ck_gather_p gather; ck_gathernd_p gathernd;
        ck_dequant_p dequant; ck_topk_p topk; ck_select_p select; ck_crop_p crop;
    } u;
    int node;                     /* graph node it came from, for messages and traces */
    /* CK_COPY into a tensor that earlier steps also write (concat, pack):
     * the output keeps what it had. */
    int accumulate;
} ck_step;

const char *ck_kind_name(ck_kind k);
/* Steps the executor runs with the host reference even on the GPU: their inputs
 * are read back, their output written. */
int ck_runs_on_host(ck_kind k);
/* Loop iterations one GPU invocation of the step runs (nested loops multiplied). */
uint64_t ck_loop_iterations(const ck_step *s);

/* Host reference: runs one step. ins[i] may be NULL where step->in[i] == -1.
 * out->data is allocated by the caller with count*4 bytes (and, for an
 * accumulating copy, holds the earlier steps' writes). */
si_result ck_host_run(const ck_step *s, const core_buf *const *ins, core_buf *out, si_error *err);

/* Per-family host references (one file each); called by ck_host_run. */
void ck_host_copy(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_pad(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_unary(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_binary(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_addn(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_conv2d(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_dwconv2d(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_deconv2d(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_matmul(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_pool(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_reduce(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_softmax(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_argmax(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_resize(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_gather(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_gathernd(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_dequant(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_topk(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_select(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_crop_boxes(const ck_step *s, const core_buf *const *ins, core_buf *out);
void ck_host_crop_resize(const ck_step *s, const core_buf *const *ins, core_buf *out);

/* Input rows [*lo, *hi] that output row oy of a whole resize reads. */
void ck_resize_rows(const ck_resize_p *p, int32_t oy, int32_t *lo, int32_t *hi);

/* Scalar semantics shared by host references (and mirrored in GLSL). */
float ck_apply_act(int act, float x, float alpha);

/* ---- the program -------------------------------------------------------- */

typedef enum {
    PT_ACT,     /* produced by a step */
    PT_WEIGHT,  /* stored bytes of a model weight (maybe quantized), read from the shards */
    PT_CONST,   /* folded on the host; data in core_tensor.host */
    PT_INPUT    /* a model input, given at run time */
} pt_kind;

typedef struct {
    char *name;         /* "node" or "node:1" */
    si_dtype dtype;
    core_shape shape;
    uint64_t bytes;     /* GPU bytes (stored weights: their stored bytes rounded up to 4) */
    pt_kind kind;
    int weight;         /* io weight index for PT_WEIGHT, else -1 */
    int input;          /* model input index for PT_INPUT, else -1 */
    void *host;         /* PT_CONST data (4 bytes an element) */
    int alias_of;       /* -1, or the tensor whose storage this one shares (reshape) */
} core_tensor;

typedef struct {
    int n_tensors, cap_tensors;
    core_tensor *tensors;
    int n_steps, cap_steps;
    ck_step *steps;
    int n_outputs;
    int *outputs;       /* tensor ids, model output order; -1: made by the host interpreter */
    /* The static tensors the host interpreter reads (graph node, output index). */
    int n_boundary;
    int *boundary, *boundary_node, *boundary_idx;
    int has_dynamic;    /* some outputs come from the host interpreter */
    int n_inputs;
    int *inputs;        /* tensor ids, model input order (-1 if unused) */
    /* A later stage's program (core_program_build_given): graph tensors an
     * earlier stage computed, read as inputs n_inputs + i (PT_INPUT). */
    int n_seeds;
    int *seed_node, *seed_idx;
    /* Outputs and boundary tensors that tiling (core_program_tile) cut into
     * bands stay as bands: the storage root's elements [e0, e1) are tensor's;
     * the runtime reads them back band by band. */
    int n_out_bands;
    struct core_band {
        int root, tensor;
        int64_t e0, e1;
    } *out_bands;
} core_program;

/* Storage root of a tensor (follows alias_of). */
int core_storage(const core_program *p, int t);

/* ---- the graph ---------------------------------------------------------- */

typedef struct core_graph core_graph;

typedef struct {
    const char *name;   /* as the model names it, e.g. "input_1" */
    si_dtype dtype;
    core_shape shape;   /* -1 for dims given by the input; rank -1: any rank */
} core_io_info;

/* Inputs this small are bound by value when the program is built, like shapes:
 * they are how models pass flags and ratios (rvm's downsample_ratio decides
 * sizes and a Switch), and folding them lets the program stay static. */
#define CORE_VALUE_INPUT_MAX 16

si_result core_graph_build(const io_model *m, core_graph **out, si_error *err);
void core_graph_free(core_graph *g);
/* Refuses (SI_ERR_UNSUPPORTED) a graph whose outputs need a node of an op that
 * nothing here runs, or one excluded by name, naming every such op with its
 * first node and count; core/opcheck.c. Run it before any work. */
si_result core_graph_check_ops(const core_graph *g, si_error *err);
/* The family an op belongs to ("elementwise", ..., "graph", "interpreter"),
 * NULL when unknown; core_op_at(i) lists every known op, NULL past the end;
 * core_op_excluded: why an op is refused by name, else NULL. */
const char *core_op_family(const char *op);
const char *core_op_at(int i);
const char *core_op_excluded(const char *op);
int core_graph_n_inputs(const core_graph *g);
int core_graph_n_nodes(const core_graph *g);
const core_io_info *core_graph_input(const core_graph *g, int i);
int core_graph_n_outputs(const core_graph *g);
const char *core_graph_output_name(const core_graph *g, int i);
void core_graph_output_ref(const core_graph *g, int i, int *node, int *idx);
int core_graph_input_node(const core_graph *g, int i);

/* Loads a weight's host value (dequantized, 4 bytes an element). */
typedef si_result (*core_weight_loader)(void *user, int weight, void *dst4, si_error *err);

/* Binds input shapes, infers every shape, folds what does not depend on the
 * input data, and lowers the rest to steps. */
si_result core_program_build(const core_graph *g, const core_shape *input_shapes,
                             const core_buf *const *input_values,
                             core_weight_loader load, void *load_user,
                             core_program **out, si_error *err);
/* The same, for a later stage of a model with dynamic parts: the graph
 * tensors in `given` (a core_valmap, core/interp.h) are known already; the
 * program computes what can be computed from them on the GPU, up to the next
 * nodes the host interpreter must run, and the nodes marked in host_only (per
 * graph node, may be NULL). On failure *fail_node (may be NULL) is the node
 * whose lowering failed, or -1. */
struct core_valmap;
si_result core_program_build_given(const core_graph *g, const core_shape *input_shapes,
                                   const core_buf *const *input_values,
                                   const struct core_valmap *given, const uint8_t *host_only,
                                   core_weight_loader load, void *load_user, core_program **out,
                                   int *fail_node, si_error *err);
void core_program_free(core_program *p);

/* Bytes of the buffers step s touches, each rounded up to 256 as the planner places them. */
uint64_t core_step_working_set(const core_program *p, int s);

/* Tiling (core/tile.c, core/tile_copy.c): rewrites the program so that steps
 * whose working set is over `limit` bytes (0: no limit), or whose output is over
 * limit/4 or over max_tensor bytes (the device's limit for one buffer a step
 * binds; 0: none), run as parts along output rows (or output channels where the
 * weights dominate), each part's working set within the limit where the step
 * allows it and every buffer a part binds within max_tensor. Big tensors then
 * exist only as bands; a step that needs one whole gets it by copies. Outputs
 * are bitwise those of the untiled program. load gives float32 weights for
 * channel splits. *n_split: how many steps were split. */
si_result core_program_tile(core_program *p, uint64_t limit, uint64_t max_tensor,
                            core_weight_loader load, void *load_user, int *n_split, si_error *err);

/* Evaluates one node on the host from its input values, with the same op
 * lowerings (everything folds, the inputs being constants). Outputs the node
 * defines are filled (data malloc'ed, the caller frees); others keep data NULL. */
si_result core_eval_node(const core_graph *g, int node, const core_buf *const *in, int n_in,
                         core_buf *out, int max_out, core_weight_loader load, void *load_user,
                         si_error *err);

#endif
