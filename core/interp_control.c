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

/* Runs library function attr (a func attr of the node) on args, as tfjs's
 * executeFunctionAsync does: args bind to its inputs in order, its outputs
 * (signature order) come back in *res (n_out of them; caller unrefs). */
static si_result call_function(opctx *o, const char *attr, ival **args, int n_args, ival ***res,
                               int *n_res)
{
    interp *in = o->in;
    const core_graph *g = in->g;
    const io_attr *a = io_node_attr(o->n, attr);
    const io_function *fn = a && a->kind == IO_ATTR_FUNC ? io_model_function(g->m, a->s) : NULL;
    int f = fn ? (int)(fn - g->m->functions) : -1;
    if (f < 0 || f >= g->n_fns)
        return ip_node_fail(in, o->node, SI_ERR_FORMAT, "its '%s' function is not in the library",
                            attr);
    const core_graph *fg = g->fns[f];
    if (fg->n_inputs != n_args)
        return ip_node_fail(in, o->node, SI_ERR_FORMAT, "function '%s' takes %d values, given %d",
                            fn->name, fg->n_inputs, n_args);
    core_valmap *vm = core_valmap_new(fg);
    ival **out = calloc((size_t)fg->n_outputs + 1, sizeof *out);
    si_result st = vm && out ? SI_OK : ip_nomem(in);
    for (int i = 0; st == SI_OK && i < n_args; i++)
        st = core_valmap_put(vm, fg->inputs[i], 0, &args[i]->b, in->err);
    if (st == SI_OK)
        st = core_interp_run(fg, vm, in->load, in->load_user, in->gpu, in->err);
    for (int i = 0; st == SI_OK && i < fg->n_outputs; i++) {
        const core_buf *b = core_valmap_get(vm, fg->outputs[i].node, fg->outputs[i].idx);
        if (!b) {
            st = ip_node_fail(in, o->node, SI_ERR_FORMAT, "function '%s' gave no output %d",
                              fn->name, i);
            break;
        }
        if (!(out[i] = ip_val_new(b->dtype, &b->shape))) {
            st = ip_nomem(in);
            break;
        }
        memcpy(out[i]->b.data, b->data, (size_t)core_shape_count(&b->shape) * core_elem_bytes(b->dtype));
    }
    core_valmap_free(vm);
    if (st != SI_OK) {
        for (int i = 0; out && i < fg->n_outputs; i++)
            if (out[i])
                ip_val_unref(out[i]);
        free(out);
        return st;
    }
    *res = out;
    *n_res = fg->n_outputs;
    return SI_OK;
}

static void unref_all(ival **v, int n)
{
    for (int i = 0; v && i < n; i++)
        if (v[i])
            ip_val_unref(v[i]);
    free(v);
}

/* If, StatelessIf: then_branch when cond's first element is truthy (tfjs
 * reads condValue[0]: NaN, 0 and an empty cond are false), else else_branch,
 * on the remaining inputs. */
static si_result cf_if(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    si_result st = ip_need_inputs(o, 1);
    if (st)
        return st;
    ival **res = NULL;
    int n_res = 0;
    st = call_function(o, pred_true(&o->data[0]->b) ? "then_branch" : "else_branch", o->data + 1,
                       o->n_data - 1, &res, &n_res);
    for (int i = 0; st == SI_OK && i < n_res; i++) {
        st = ip_set_out(o, i, res[i]);
        res[i] = NULL;
    }
    unref_all(res, n_res);
    return st;
}

/* While, StatelessWhile: cond on the loop values, then body while cond's
 * first element is truthy; the outputs are the last loop values. */
static si_result cf_while(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    int n = o->n_data;
    ival **cur = calloc((size_t)n + 1, sizeof *cur);
    if (!cur)
        return ip_nomem(o->in);
    for (int i = 0; i < n; i++)
        cur[i] = ip_val_ref(o->data[i]);
    si_result st = SI_OK;
    for (long iter = 0;; iter++) {
        ival **c = NULL, **next = NULL;
        int n_c = 0, n_next = 0;
        if ((st = call_function(o, "cond", cur, n, &c, &n_c)))
            break;
        int go = n_c > 0 && pred_true(&c[0]->b);
        unref_all(c, n_c);
        if (!go)
            break;
        if (iter >= MAX_ITERATIONS) {
            st = ip_node_fail(o->in, o->node, SI_ERR_ARG, "the loop ran %d iterations",
                              MAX_ITERATIONS);
            break;
        }
        if ((st = call_function(o, "body", cur, n, &next, &n_next)))
            break;
        if (n_next != n) {
            unref_all(next, n_next);
            st = ip_node_fail(o->in, o->node, SI_ERR_FORMAT,
                              "the body returned %d values for %d loop values", n_next, n);
            break;
        }
        unref_all(cur, n);
        cur = next;
    }
    for (int i = 0; st == SI_OK && i < n; i++) {
        st = ip_set_out(o, i, cur[i]);
        cur[i] = NULL;
    }
    unref_all(cur, n);
    return st;
}

static si_result cf_placeholder(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    /* an unfed PlaceholderWithDefault is its default, as in tfjs */
    if (!strcmp(o->n->op, "PlaceholderWithDefault") && o->n_data > 0)
        return ip_set_out(o, 0, ip_val_ref(o->data[0]));
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

static si_result run_ragged_to_tensor(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_ragged_to_tensor(o);
}

static si_result run_complex(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_complex(o);
}

static si_result run_string(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_string_op(o);
}

static si_result run_hash_table(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    return ip_hash_table(o);
}

static si_result run_ordinary(opctx *o, int *ctx_after)
{
    (void)ctx_after;
    /* strings pass through Identity; other op-table ops compute on numbers */
    if (o->n_data > 0 && o->data[0]->b.dtype == IP_STRING &&
        (!strcmp(o->n->op, "Identity") || !strcmp(o->n->op, "StopGradient") ||
         !strcmp(o->n->op, "Snapshot")))
        return ip_set_out(o, 0, ip_val_ref(o->data[0]));
    for (int i = 0; i < o->n_data; i++)
        if (o->data[i]->b.dtype == IP_STRING && ip_moves_elements(o->n->op))
            return ip_string_moved(o);
        else if (o->data[i]->b.dtype == IP_STRING)
            return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED,
                                "input %d is a string tensor: only the string and hash-table ops, "
                                "ops that move elements (Reshape, Gather, Concat, ...) and control "
                                "flow take strings here", i);
    return ip_eval_ordinary(o);
}

static const struct {
    const char *op;
    node_fn run;
} named_ops[] = {
    {"Merge", cf_merge},     {"Enter", cf_enter},   {"Exit", cf_exit},
    {"NextIteration", cf_next_iteration},           {"LoopCond", cf_loop_cond},
    {"Switch", cf_switch},   {"NoOp", cf_no_op},    {"Where", run_where},
    {"EmptyTensorList", run_tensor_list},           {"If", cf_if},
    {"StatelessIf", cf_if},  {"While", cf_while},   {"StatelessWhile", cf_while},
    {"SparseFillEmptyRows", run_sparse},            {"SparseReshape", run_sparse},
    {"SparseSegmentSum", run_sparse},               {"SparseSegmentMean", run_sparse},
    {"RaggedRange", run_sparse},                    {"RaggedGather", run_sparse},
    {"Unique", run_unique},  {"UniqueV2", run_unique},                 {"ListDiff", run_listdiff},
    {"RaggedTensorToTensor", run_ragged_to_tensor},
    {"Complex", run_complex}, {"Real", run_complex}, {"Imag", run_complex},
    {"ComplexAbs", run_complex}, {"FFT", run_complex}, {"IFFT", run_complex},
    {"RFFT", run_complex},   {"IRFFT", run_complex},
    {"StaticRegexReplace", run_string},             {"StringNGrams", run_string},
    {"StringSplit", run_string},                    {"StringToHashBucketFast", run_string},
    {"HashTable", run_hash_table},                  {"HashTableV2", run_hash_table},
    {"InitializeTable", run_hash_table},            {"InitializeTableV2", run_hash_table},
    {"LookupTableFind", run_hash_table},            {"LookupTableFindV2", run_hash_table},
    {"LookupTableImport", run_hash_table},          {"LookupTableImportV2", run_hash_table},
    {"LookupTableSize", run_hash_table},            {"LookupTableSizeV2", run_hash_table},
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
    /* complex64 values reach only the ops that take them; the ordinary ones
     * among those (Identity, Add, Mul ...) are computed on them here, as the
     * op table's kernels know 4-byte elements only */
    if (st == SI_OK)
        st = ip_check_complex_inputs(&o);
    node_fn run = handler_of(n->op);
    /* the handlers that copy values by 4-byte elements never see a string */
    int takes_strings = run == run_string || run == run_hash_table || run == run_ordinary ||
                        run == cf_merge || run == cf_enter || run == cf_exit ||
                        run == cf_next_iteration || run == cf_switch || run == cf_no_op;
    for (int i = 0; st == SI_OK && !takes_strings && i < o.n_data; i++)
        if (o.data[i]->b.dtype == IP_STRING)
            st = ip_node_fail(in, k, SI_ERR_UNSUPPORTED,
                              "input %d is a string tensor, which %s does not take here", i, n->op);
    if (st == SI_OK && ip_complex_runs(&o))
        st = ip_complex(&o);
    else if (st == SI_OK)
        st = run(&o, ctx_after);
    free(o.data);
    if (st != SI_OK) {
        ip_free_outs(o.outs, o.n_outs);
        return st;
    }
    *outs_p = o.outs;
    *n_outs_p = o.n_outs;
    return SI_OK;
}
