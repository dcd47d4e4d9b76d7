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

/* Runs node k in ctx; on success *outs (n entries) and *ctx_after are set. */
si_result ip_execute(interp *in, int k, int ctx, ival ***outs_p, int *n_outs_p, int *ctx_after)
{
    const core_graph *g = in->g;
    const io_node *n = &g->m->nodes[k];
    opctx o = {.in = in, .node = k, .n = n, .ctx = ctx};
    si_result st = SI_OK;
    *ctx_after = ctx;
    o.n_outs = g->n_outs[k] < 2 ? 2 : g->n_outs[k];
    o.outs = calloc((size_t)o.n_outs, sizeof *o.outs);
    o.data = malloc(((size_t)n->n_inputs + 1) * sizeof *o.data);
    if (!o.outs || !o.data) {
        free(o.outs);
        free(o.data);
        return ip_nomem(in);
    }
    int is_merge = !strcmp(n->op, "Merge");
    if (!is_merge) {
        for (int i = 0; i < n->n_inputs; i++) {
            const core_edge *e = &g->edges[k][i];
            if (e->ctrl)
                continue;
            ival *v = ip_tensor_get(in, e->node, e->idx, ctx, &st);
            if (st != SI_OK)
                goto done;
            if (!v) {
                st = ip_node_fail(in, k, SI_ERR_FORMAT, "input '%s' has no value", n->inputs[i]);
                goto done;
            }
            o.data[o.n_data++] = v;
        }
    }
    if (is_merge) {
        for (int i = 0; i < n->n_inputs; i++) {
            ival *v = ip_tensor_get(in, g->edges[k][i].node, g->edges[k][i].idx, ctx, &st);
            if (st != SI_OK)
                goto done;
            if (v) {
                if ((st = ip_set_out(&o, 0, ip_val_ref(v))) || (st = ip_set_out(&o, 1, ip_val_scalar_i(i))))
                    goto done;
                break;
            }
        }
    } else if (!strcmp(n->op, "Enter")) {
        if ((st = ip_need_inputs(&o, 1)))
            goto done;
        const io_attr *fa = io_node_attr(n, "frame_name");
        const char *frame = fa && fa->kind == IO_ATTR_S && fa->s ? fa->s : "";
        int c = ip_ctx_intern(in, ctx, frame, 0);
        if (c < 0) {
            st = ip_nomem(in);
            goto done;
        }
        *ctx_after = c;
        st = ip_set_out(&o, 0, ip_val_ref(o.data[0]));
    } else if (!strcmp(n->op, "Exit")) {
        if ((st = ip_need_inputs(&o, 1)))
            goto done;
        if (in->ctx[ctx].parent < 0) {
            st = ip_node_fail(in, k, SI_ERR_FORMAT, "Exit outside of any loop frame");
            goto done;
        }
        *ctx_after = in->ctx[ctx].parent;
        st = ip_set_out(&o, 0, ip_val_ref(o.data[0]));
    } else if (!strcmp(n->op, "NextIteration")) {
        if ((st = ip_need_inputs(&o, 1)))
            goto done;
        const ictx *c = &in->ctx[ctx];
        if (c->parent < 0) {
            st = ip_node_fail(in, k, SI_ERR_FORMAT, "NextIteration outside of any loop frame");
            goto done;
        }
        if (c->iter + 1 >= MAX_ITERATIONS) {
            st = ip_node_fail(in, k, SI_ERR_ARG, "loop frame '%s' ran %d iterations", c->frame,
                           MAX_ITERATIONS);
            goto done;
        }
        int nc = ip_ctx_intern(in, c->parent, c->frame, c->iter + 1);
        if (nc < 0) {
            st = ip_nomem(in);
            goto done;
        }
        *ctx_after = nc;
        st = ip_set_out(&o, 0, ip_val_ref(o.data[0]));
    } else if (!strcmp(n->op, "LoopCond")) {
        if (!(st = ip_need_inputs(&o, 1)))
            st = ip_set_out(&o, 0, ip_val_ref(o.data[0]));
    } else if (!strcmp(n->op, "Switch")) {
        if (!(st = ip_need_inputs(&o, 2)))
            st = ip_set_out(&o, pred_true(&o.data[1]->b) ? 1 : 0, ip_val_ref(o.data[0]));
    } else if (!strcmp(n->op, "NoOp")) {
        st = ip_set_out(&o, 0, ip_val_scalar_f(1.0f));
    } else if (!strncmp(n->op, "TensorArray", 11)) {
        st = ip_tensor_array(&o);
    } else if (!strncmp(n->op, "TensorList", 10) || !strcmp(n->op, "EmptyTensorList")) {
        st = ip_tensor_list(&o);
    } else if (!strncmp(n->op, "NonMaxSuppressionV", 18) && n->op[18] >= '2' && n->op[18] <= '5' &&
               !n->op[19]) {
        st = ip_nms(&o);
    } else if (!strcmp(n->op, "Where")) {
        st = ip_where(&o);
    } else if (!strcmp(n->op, "If") || !strcmp(n->op, "StatelessIf") || !strcmp(n->op, "While") ||
               !strcmp(n->op, "StatelessWhile")) {
        st = ip_node_fail(in, k, SI_ERR_UNSUPPORTED, "function-based control flow is not supported");
    } else if (!strncmp(n->op, "Placeholder", 11)) {
        st = ip_node_fail(in, k, SI_ERR_ARG, "the input has no value");
    } else {
        st = ip_eval_ordinary(&o);
    }
done:
    free(o.data);
    if (st != SI_OK) {
        ip_free_outs(o.outs, o.n_outs);
        return st;
    }
    *outs_p = o.outs;
    *n_outs_p = o.n_outs;
    return SI_OK;
}

