/* core — shapes, host buffers, kernel steps (core/step.h, with their host
 * reference implementations), the op table and the program. Knows nothing of GL. */
#ifndef SI_CORE_H
#define SI_CORE_H

#include <stdint.h>
#include <stddef.h>
#include "streaminfer.h"
#include "../base/base.h"
#include "../io/io.h"
#include "step.h"

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

/* A host tensor. Every si_dtype is 4 bytes an element here and on the GPU
 * (bool as int32 0/1, CK_ELEM): one layout, so kernels never care. The host
 * interpreter's own dtypes are the exceptions, and never reach a kernel or
 * the API: complex64 (below, 8 bytes) and strings (IP_STRING, interp_internal.h:
 * offsets then bytes, of no fixed size); core_elem_bytes gives the size of
 * an element of the others. */
typedef struct {
    si_dtype dtype;
    core_shape shape;
    void *data; /* float* or int32_t* */
} core_buf;

#define CORE_ELEM CK_ELEM

/* complex64: a dtype of the host interpreter only (Complex, FFT, RFFT ...
 * make it; Real, Imag, ComplexAbs, IRFFT read it). Its buffer holds 8 bytes
 * an element, interleaved float re/im pairs. It is never a program tensor,
 * never crosses to a GPU stage and never reaches si_output: a model whose
 * input or output would be complex is refused when it is opened
 * (core_graph_check_ops), and the interpreter refuses it to ops that do not
 * take it (core/interp_cplx.c). */
#define CORE_COMPLEX64 ((si_dtype)64)
/* Bytes of one element of dt in a host buffer (CORE_ELEM, or 8 for complex64). */
size_t core_elem_bytes(si_dtype dt);

void core_strides(const core_shape *s, int64_t *stride); /* C-order element strides */
/* numpy broadcast of a and b into out; -1 if they do not broadcast. */
int core_broadcast_shape(const core_shape *a, const core_shape *b, core_shape *out);

/* ---- kernel steps: core/step.h (the kinds, their parameters, CK_KINDS) ---- */

/* Host reference: runs one step. ins[i] may be NULL where step->in[i] == -1.
 * out->data is allocated by the caller with count*4 bytes (and, for an
 * accumulating copy, holds the earlier steps' writes). core/step.c. */
si_result ck_host_run(const ck_step *s, const core_buf *const *ins, core_buf *out, si_error *err);
/* Whether a host step may run without input i, given the inputs read so far
 * (ins[j] NULL where not read): an executor that reads inputs back reads them
 * from the last and leaves one unread where this says so (CK_TOPK's x when no
 * row of the GPU's answer is flagged). ck_host_run accepts it missing then. */
int ck_host_skips_input(const ck_step *s, int i, const core_buf *const *ins);
/* The CK_TOPK_BLOCK levels of a sorted TopK of k in rows [outer, n] (core/op_select.c):
 * their parameters in lv[0..L), the last with one block a row; L, or -1 past max. */
#define CK_TOPK_LEVELS 16
int ck_topk_levels(int64_t outer, int64_t n, int64_t k, int x_float, ck_topkb_p *lv, int max);
/* The part length m of a float Sum or Mean over [outer, n, inner] lowered as
 * two steps (part sums as pairs, then the pairs; core/op_pool_reduce.c), or 0
 * where it runs as one. */
int32_t core_reduce_split(int64_t outer, int64_t n, int64_t inner);

/* Per-kind host references ck_host_<name> (one file per family, core/op_*.c),
 * one for each row of CK_KINDS; called by ck_host_run. */
#define CK_HOST_DECL(K, name, params, shader, variant, inv, iters, tiling)                  \
    void ck_host_##name(const ck_step *s, const core_buf *const *ins, core_buf *out);
CK_KINDS(CK_HOST_DECL)
#undef CK_HOST_DECL

/* ---- the program -------------------------------------------------------- */

typedef enum {
    PT_ACT,     /* produced by a step */
    PT_WEIGHT,  /* a model weight, read from the shards (maybe quantized: core_tensor.quant) */
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
    int64_t input_off;  /* PT_INPUT: its first element's index in that input (a
                         * window of it the tiler made), else 0 */
    void *host;         /* PT_CONST data (4 bytes an element) */
    int alias_of;       /* -1, or the tensor whose storage this one shares (reshape) */
    /* 1: a float32 activation, weight or constant stored on the GPU (and in the
     * host pool) as IEEE half, two a word (core_program_set_half); bytes is then
     * its elements x 2 rounded up to 4. host stays float32: the runtime
     * converts what it uploads. */
    int half;
    /* A float32 weight stored quantized (quant: 1 uint8, 2 uint16, 3 float16,
     * as ck_dequant_p's; 0 none): its home in the host pool holds the stored
     * bytes (stored_bytes, rounded up to 4), and its load into the arena
     * dequantizes them (glk_dequant_words: q * q_scale + q_min, the arithmetic
     * of CK_DEQUANT's kernel) into bytes of float32, or of halves. Its host
     * value (the loader's) is dequantized as TensorFlow.js does. */
    int quant;
    float q_scale, q_min;
    uint64_t stored_bytes;
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

/* Epilogue fusion (core/fuse.c): per-channel bias adds and activations that
 * follow a conv or matmul step as steps of their own become its epilogue,
 * bitwise the same; returns how many steps it removed. Run before tiling.
 * exact_mul_add: the kernels round a product and then a sum apart (GLSL ES
 * 3.2's precise, or the host), so a per-channel Mul before the bias fuses too. */
int core_fuse_epilogues(core_program *p, int exact_mul_add);
/* Per tensor (malloc'ed; NULL on no memory): 1 for the tensors that
 * core_fuse_epilogues would leave to no step (an epilogue's intermediates),
 * p itself unchanged. At f16 the program run unfused keeps them float32, so
 * that its results round once where the fused one's do: the same bits. */
uint8_t *core_fused_away(const core_program *p, int exact_mul_add);
/* For a device that is a CPU (llvmpipe) or the host backend: a sorted TopK
 * whose rows need more than one CK_TOPK_BLOCK level (n > CK_TOPK_SORT) selects
 * on the host from x instead, its levels dropped (the same answer: bitonic
 * blocks in a software rasterizer cost more than tfjs's select on the CPU);
 * returns how many (core/op_select.c). */
int core_topk_to_host(core_program *p);

/* Half precision (core/precision.c, si_options.precision f16): marks the
 * float32 activations stored as IEEE half on the GPU and sets their bytes. A
 * tensor is half only where every step that writes or reads it is a GPU
 * kernel that loads and stores halves at that binding (core_step_half_ok),
 * runs within max_loop (a longer one runs on the host) and does not need the
 * input in float32 (the arguments of Exp, Log, Softplus and Pow); never a
 * model output, a tensor the host interpreter reads, a tensor of
 * fewer than CORE_HALF_MIN elements, or a float that becomes an index, a size
 * or a mask. Float32 weights (stored unquantized; quantized ones stay as
 * stored, their dequantized values an activation) and constants the same rule
 * allows are half too, and so are the model's inputs (the runtime rounds
 * them as it uploads them). Run after fusion and before tiling (whose new tensors
 * follow the ones they split), then core_program_mark_half after it. keep
 * (per step, may be NULL): steps whose tensors all stay float32 (the user's
 * si_options.f32_ops); keep_t (per tensor, may be NULL): tensors that stay
 * float32 (core_fused_away's, and inputs, weights or constants the user's
 * f32_ops keeps by naming Placeholder or Const). Returns how many tensors it marked. */
int core_program_set_half(core_program *p, uint64_t max_loop, const uint8_t *keep, const uint8_t *keep_t);
/* Each step's ck_step.half from its tensors' (after tiling); returns the
 * first step with a half binding its kernel does not take (a bug), or -1. */
int core_program_mark_half(core_program *p);
/* Whether a kind's kernel loads (binding i < CK_MAX_IN) or stores (i ==
 * CK_MAX_IN) halves at binding i. */
int core_step_half_ok(const ck_step *s, int i);
/* Adds the program's float32 activations (storage roots) stored as halves to
 * *half, the others to *full. */
void core_program_count_half(const core_program *p, uint64_t *half, uint64_t *full);
/* GPU bytes of n elements of t's storage: 4 each, or 2 each rounded up to 4. */
uint64_t core_tensor_bytes(const core_tensor *t, int64_t n);

/* ---- the graph ---------------------------------------------------------- */

typedef struct core_graph core_graph;

typedef struct {
    const char *name;   /* as the model names it, e.g. "input_1" */
    si_dtype dtype;
    core_shape shape;   /* -1 for dims given by the input; rank -1: any rank */
    int has_default;    /* a PlaceholderWithDefault: it may go unfed (its default runs) */
} core_io_info;

/* The input shape that says "not fed" (only an input with has_default may be). */
#define CORE_UNFED_RANK (-1)

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
/* One node's program (the host interpreter's ordinary node over big tensors,
 * run on the GPU): what it reads is in `given` (or constant), its outputs are
 * the program's boundary (every graph output -1). */
si_result core_program_build_node(const core_graph *g, const core_shape *input_shapes,
                                  const core_buf *const *input_values,
                                  const struct core_valmap *given, int node,
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
 * channel splits. *n_split: how many steps were split. node_limit (NULL:
 * none): per graph node (n_nodes of them), a limit of its own for the steps it
 * lowers to, in place of `limit` (0 there: `limit`). */
si_result core_program_tile(core_program *p, uint64_t limit, const uint64_t *node_limit,
                            int n_nodes, uint64_t max_tensor, core_weight_loader load,
                            void *load_user, int *n_split, si_error *err);

/* Evaluates one node on the host from its input values, with the same op
 * lowerings (everything folds, the inputs being constants). Outputs the node
 * defines are filled (data malloc'ed, the caller frees); others keep data NULL. */
si_result core_eval_node(const core_graph *g, int node, const core_buf *const *in, int n_in,
                         core_buf *out, int max_out, core_weight_loader load, void *load_user,
                         si_error *err);

#endif
