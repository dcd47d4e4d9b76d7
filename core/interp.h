/* The host interpreter: runs the parts of a graph that a static program cannot
 * hold — TF1 control flow (Enter, Exit, Merge, Switch, NextIteration, LoopCond),
 * TensorArrayV3 and TensorList ops, and ops whose output shape depends on data
 * (NonMaxSuppressionV3/V4/V5, Where, ...) — the way TensorFlow.js's
 * executeAsync does, on host values. Ordinary ops inside it are evaluated with
 * core_eval_node (the same lowerings and host references as everywhere else). */
#ifndef SI_CORE_INTERP_H
#define SI_CORE_INTERP_H

#include "core.h"

/* Host values keyed by graph tensor (node index, output index). Values are
 * copied in and owned by the map. */
typedef struct core_valmap core_valmap;
core_valmap *core_valmap_new(const core_graph *g);
void core_valmap_free(core_valmap *vm);
si_result core_valmap_put(core_valmap *vm, int node, int idx, const core_buf *v, si_error *err);
/* The same, taking v->data (malloc'd) as the map's own: no copy. On failure
 * the caller keeps it. */
si_result core_valmap_adopt(core_valmap *vm, int node, int idx, core_buf *v, si_error *err);
/* Gives (node, idx)'s data up: the caller's (freed no more by the map). */
void core_valmap_take(core_valmap *vm, int node, int idx);
const core_buf *core_valmap_get(const core_valmap *vm, int node, int idx);
size_t core_valmap_size(const core_valmap *vm);
/* Iterates: slot = core_valmap_next(vm, slot, &node, &idx) from slot -1; -1 at the end. */
int core_valmap_next(const core_valmap *vm, int slot, int *node, int *idx);

/* Is this op one only the interpreter runs (its outputs' shapes or existence
 * depend on data)? Everything downstream of such a node runs there too. */
int core_op_is_dynamic(const char *op);
/* A node that makes a complex64 value from others (Cast to complex64): the
 * interpreter runs it, as it runs the complex ops (core/interp_cplx.c). */
int core_node_makes_complex(const io_node *n);
/* Ops the interpreter itself runs (control flow, TensorArray/TensorList, NMS,
 * Where, NoOp); others it evaluates through the op table. core_interp_op(i)
 * lists them, NULL past the end. */
int core_interp_runs_op(const char *op);
const char *core_interp_op(int i);

/* From the graph alone (Const weights, the string ops, T attrs, through
 * Identity and control flow): is edge (node, idx) a string tensor, or a
 * string tensor or a hash table handle? Those never leave the interpreter. */
int core_edge_is_string(const core_graph *g, int node, int idx);
int core_edge_host_only(const core_graph *g, int node, int idx);
/* Refuses, at open, a StaticRegexReplace whose pattern is outside the
 * syntax JavaScript and RE2 share; core/interp_strings.c. */
si_result core_string_check_node(const core_graph *g, int k, si_error *err);

/* Where the interpreter meets an ordinary node (one the op table lowers) over
 * big tensors, it asks run first: SI_OK, out[0..n_out) filled (malloc'd,
 * the interpreter's; in[i] is edge (in_node[i], in_idx[i])); SI_ERR_UNSUPPORTED, not taken: the host evaluates it;
 * anything else fails the run. The loop bodies of detectors transpose and
 * split [anchors, classes] score tensors of many MiB each iteration. */
/* Inputs of fewer bytes stay on the host; so do nodes whose outputs are under
 * it (the runner declines them: a Gather of a few boxes from many). */
#define CORE_OFFLOAD_MIN ((size_t)1 << 20)
typedef struct {
    si_result (*run)(void *user, const core_graph *g, int node, const int *in_node,
                     const int *in_idx, const core_buf *const *in, int n_in, core_buf *out,
                     int n_out, si_error *err);
    void *user;
} core_offload;

/* Computes the model's outputs into vm. vm holds, on entry, the model inputs
 * (at their Placeholder nodes) and any tensor already computed elsewhere (the
 * GPU program's boundary values); anything else is computed here, weights read
 * through load (gpu: may be NULL). On success every graph output (core_graph output i: node,
 * index) has a value in vm. */
si_result core_interp_run(const core_graph *g, core_valmap *vm, core_weight_loader load,
                          void *load_user, const core_offload *gpu, si_error *err);

/* One stage of a model run in stages: computes what the interpreter must
 * (loops, tensor arrays, data-dependent ops) as far as it can without the
 * ordinary top-level ops that are not known yet, which it leaves for a GPU
 * program (core_program_build_given); the values those ops and the outputs
 * read go into vm. *complete: every graph output is in vm. host_only (per
 * node, may be NULL): ordinary ops to run here anyway (a GPU program could not
 * hold them). */
si_result core_interp_run_stage(const core_graph *g, core_valmap *vm, const uint8_t *host_only,
                                core_weight_loader load, void *load_user,
                                const core_offload *gpu, int *complete, si_error *err);

/* Host references of the data-dependent ops, as TensorFlow.js computes them
 * (tfjs-core non_max_suppression_impl.js, where_impl.js); exposed for tests.
 * boxes [n,4] float, scores [n] float. Returns the number selected (≤ max_out,
 * or max_out when pad); idx/score (may be NULL) receive max(n_sel, padded) values. */
int core_nms_host(const float *boxes, const float *scores, int n, int max_out, double iou_thr,
                  double score_thr, double soft_sigma, int pad, int32_t *idx, float *score);
/* The same with the loop chosen: general 1 always runs tfjs's own loop (every
 * kept box tested in turn), 0 takes the faster hard-NMS loop where it gives the
 * same picks (hard NMS, finite boxes or a score threshold of 0 or more): each
 * candidate tested against the kept boxes through a grid where candidates
 * times max_out is large, against every kept box where it is small (many
 * short lists: frcnn-irv2-od's 601 classes of 300); 2 and 3 force the grid
 * and the plain scan where 0 would take either; for tests. */
int core_nms_host_loop(const float *boxes, const float *scores, int n, int max_out, double iou_thr,
                       double score_thr, double soft_sigma, int pad, int32_t *idx, float *score,
                       int general);
/* Coordinates of the non-zero elements of cond: a new int32 [count, rank] tensor. */
si_result core_where_host(const core_buf *cond, core_buf *out, si_error *err);
/* tfjs unique along axis (0 <= axis < rank): values (x's dtype, the axis cut to
 * the unique slices in first-seen order) and idx (int32 [x.d[axis]]). */
si_result core_unique_host(const core_buf *x, int axis, core_buf *values, core_buf *idx,
                           si_error *err);
/* tfjs setdiff1d: the elements of x (1-D) not in y (1-D), and their positions. */
si_result core_listdiff_host(const core_buf *x, const core_buf *y, core_buf *out, core_buf *idx,
                             si_error *err);

#endif
