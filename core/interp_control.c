/* One node of the host interpreter: its data inputs gathered from its
 * context, then TF1 control flow (Merge, Enter, Exit, NextIteration, LoopCond,
 * Switch, NoOp) here, or the handler of a TensorArray/TensorList op, a
 * data-dependent op or an ordinary op. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

static int pred_true(const core_buf *b)
{
    if (core_shape_count(&b->shape) < 1)
        return 0;
    if (b->dtype == SI_FLOAT32) {
        float f = *(const float *)b->data;
        return f != 0.0f && !isnan(f);
    }
    return *(const int32_t *)b->data != 0;
}

/* Each handler sets o's outputs; the loop-frame ones also say the context
 * the outputs belong to (*ctx_after, else the node's own). */
typedef si_result (*node_fn)(opctx *o, int *ctx_after);

/* Merge: the first input present, and its index. It reads its inputs itself
 * (any may be absent). */
static si_result cf_merge(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    interp *in = o->in;
    const core_edge *ed = in->g->edges[o->node];
    si_result st = SI_OK;
    for (int i = 0; i < o->n->n_inputs; i++) {
        ival *v = ip_tensor_get(in, ed[i].node, ed[i].idx, o->ctx, &st);
        if (st != SI_OK)
            return st;
        if (v) {
            if ((st = ip_set_out(o, 0, ip_val_ref(v))) ||
                (st = ip_set_out(o, 1, ip_val_scalar_i(i))))
                return st;
            break;
        }
    }
    return SI_OK;
}

/* Enter: into iteration 0 of its frame. */
static si_result cf_enter(opctx *o, int *ctx_after)
{
    si_result st;
    if ((st = ip_need_inputs(o, 1)))
        return st;
    const io_attr *fa = io_node_attr(o->n, "frame_name");
    const char *frame = fa && fa->kind == IO_ATTR_S && fa->s ? fa->s : "";
    int c = ip_ctx_intern(o->in, o->ctx, frame, 0);
    if (c < 0)
        return ip_nomem(o->in);
    *ctx_after = c;
    return ip_set_out(o, 0, ip_val_ref(o->data[0]));
}

static si_result cf_exit(opctx *o, int *ctx_after)
{
    si_result st;
    if ((st = ip_need_inputs(o, 1)))
        return st;
    if (o->in->ctx[o->ctx].parent < 0)
        return ip_node_fail(o->in, o->node, SI_ERR_FORMAT, "Exit outside of any loop frame");
    *ctx_after = o->in->ctx[o->ctx].parent;
    return ip_set_out(o, 0, ip_val_ref(o->data[0]));
}

/* NextIteration: the same frame, one iteration on. */
static si_result cf_next_iteration(opctx *o, int *ctx_after)
{
    si_result st;
    if ((st = ip_need_inputs(o, 1)))
        return st;
    const ictx *c = &o->in->ctx[o->ctx];
    if (c->parent < 0)
        return ip_node_fail(o->in, o->node, SI_ERR_FORMAT,
                            "NextIteration outside of any loop frame");
    if (c->iter + 1 >= MAX_ITERATIONS)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "loop frame '%s' ran %d iterations",
                            c->frame, MAX_ITERATIONS);
    int nc = ip_ctx_intern(o->in, c->parent, c->frame, c->iter + 1);
    if (nc < 0)
        return ip_nomem(o->in);
    *ctx_after = nc;
    return ip_set_out(o, 0, ip_val_ref(o->data[0]));
}

static si_result cf_loop_cond(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    si_result st = ip_need_inputs(o, 1);
    return st ? st : ip_set_out(o, 0, ip_val_ref(o->data[0]));
}

/* Switch: input 0 on output 1 when the predicate holds, else on output 0;
 * the other output stays absent (dead). */
static si_result cf_switch(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    si_result st = ip_need_inputs(o, 2);
    return st ? st : ip_set_out(o, pred_true(&o->data[1]->b) ? 1 : 0, ip_val_ref(o->data[0]));
}

static si_result cf_no_op(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_set_out(o, 0, ip_val_scalar_f(1.0f));
}

static si_result cf_functional(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED,
                        "function-based control flow is not supported");
}

static si_result cf_placeholder(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_node_fail(o->in, o->node, SI_ERR_ARG, "the input has no value");
}

static si_result run_tensor_array(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_tensor_array(o);
}

static si_result run_tensor_list(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_tensor_list(o);
}

static si_result run_nms(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_nms(o);
}

static si_result run_where(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_where(o);
}

static si_result run_sparse(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_sparse(o);
}

static si_result run_unique(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_unique(o);
}

static si_result run_listdiff(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_listdiff(o);
}

static si_result run_ordinary(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_eval_ordinary(o);
}

static const struct {
    const char *op;
    node_fn run;
} named_ops[] = {
    {"Merge", cf_merge},     {"Enter", cf_enter},   {"Exit", cf_exit},
    {"NextIteration", cf_next_iteration},           {"LoopCond", cf_loop_cond},
    {"Switch", cf_switch},   {"NoOp", cf_no_op},    {"Where", run_where},
    {"EmptyTensorList", run_tensor_list},           {"If", cf_functional},
    {"StatelessIf", cf_functional},                 {"While", cf_functional},
    {"StatelessWhile", cf_functional},
    {"SparseFillEmptyRows", run_sparse},            {"SparseReshape", run_sparse},
    {"SparseSegmentSum", run_sparse},               {"SparseSegmentMean", run_sparse},
    {"RaggedRange", run_sparse},                    {"RaggedGather", run_sparse},
    {"Unique", run_unique},  {"UniqueV2", run_unique},                 {"ListDiff", run_listdiff},
};

/* The handler of op: by name, then by prefix (the list handlers refuse any
 * name of theirs they do not implement); anything else is an ordinary op. */
static node_fn handler_of(const char *op)
{
    for (size_t i = 0; i < sizeof named_ops / sizeof named_ops[0]; i++)
        if (!strcmp(op, named_ops[i].op))
            return named_ops[i].run;
    if (!strncmp(op, "TensorArray", 11))
        return run_tensor_array;
    if (!strncmp(op, "TensorList", 10))
        return run_tensor_list;
    if (!strncmp(op, "NonMaxSuppressionV", 18) && op[18] >= '2' && op[18] <= '5' && !op[19])
        return run_nms;
    if (!strncmp(op, "Placeholder", 11))
        return cf_placeholder;
    return run_ordinary;
}

/* The node's data inputs, in order (control inputs skipped); each must have a
 * value seen from the node's context. */
static si_result gather_inputs(opctx *o)
{
    interp *in = o->in;
    si_result st = SI_OK;
    for (int i = 0; i < o->n->n_inputs; i++) {
        const core_edge *e = &in->g->edges[o->node][i];
        if (e->ctrl)
            continue;
        ival *v = ip_tensor_get(in, e->node, e->idx, o->ctx, &st);
        if (st != SI_OK)
            return st;
        if (!v)
            return ip_node_fail(in, o->node, SI_ERR_FORMAT, "input '%s' has no value",
                                o->n->inputs[i]);
        o->data[o->n_data++] = v;
    }
    return SI_OK;
}

si_result ip_execute(interp *in, int k, int ctx, ival ***outs_p, int *n_outs_p, int *ctx_after)
{
    const core_graph *g = in->g;
    const io_node *n = &g->m->nodes[k];
    opctx o = {.in = in, .node = k, .n = n, .ctx = ctx};
    *ctx_after = ctx;
    o.n_outs = g->n_outs[k] < 2 ? 2 : g->n_outs[k];
    o.outs = calloc((size_t)o.n_outs, sizeof *o.outs);
    o.data = malloc(((size_t)n->n_inputs + 1) * sizeof *o.data);
    if (!o.outs || !o.data) {
        free(o.outs);
        free(o.data);
        return ip_nomem(in);
    }
    si_result st = SI_OK;
    if (strcmp(n->op, "Merge"))
        st = gather_inputs(&o);
    if (st == SI_OK)
        st = handler_of(n->op)(&o, ctx_after);
    free(o.data);
    if (st != SI_OK) {
        ip_free_outs(o.outs, o.n_outs);
        return st;
    }
    *outs_p = o.outs;
    *n_outs_p = o.n_outs;
    return SI_OK;
}
