/* The host interpreter's values (reference counted host buffers) and the
 * helpers every handler uses to read its inputs and attrs and set its outputs;
 * the data-dependent ops NonMaxSuppressionV2-V5 and Where (their host
 * references are in interp_dyn.c); and ordinary ops, evaluated through the op
 * table like everywhere else. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

/* ---- values ---- */

ival *ip_val_new(si_dtype dt, const core_shape *s)
{
    ival *v = malloc(sizeof *v);
    if (!v)
        return NULL;
    size_t bytes = (size_t)core_shape_count(s) * core_elem_bytes(dt);
    v->b = (core_buf){.dtype = dt, .shape = *s, .data = malloc(bytes ? bytes : 1)};
    v->refs = 1;
    v->base = NULL;
    v->lent = 0;
    if (!v->b.data) {
        free(v);
        return NULL;
    }
    return v;
}

ival *ip_val_wrap(core_buf b)
{
    ival *v = malloc(sizeof *v);
    if (!v)
        return NULL;
    v->b = b;
    v->refs = 1;
    v->base = NULL;
    v->lent = 0;
    return v;
}

ival *ip_val_view(ival *base, const core_shape *s, size_t off)
{
    ival *v = malloc(sizeof *v);
    if (!v)
        return NULL;
    while (base->base) /* a view of a view reads the first base */
        off += (size_t)((char *)base->b.data - (char *)base->base->b.data), base = base->base;
    v->b = (core_buf){.dtype = base->b.dtype, .shape = *s, .data = (char *)base->b.data + off};
    v->refs = 1;
    v->lent = 0;
    v->base = ip_val_ref(base);
    return v;
}

ival *ip_val_ref(ival *v)
{
    if (v)
        v->refs++;
    return v;
}

void ip_val_unref(ival *v)
{
    if (v && --v->refs == 0) {
        if (v->base)
            ip_val_unref(v->base);
        else if (!v->lent)
            free(v->b.data);
        free(v);
    }
}

ival *ip_val_scalar_f(float x)
{
    core_shape s = {.rank = 0};
    ival *v = ip_val_new(SI_FLOAT32, &s);
    if (v)
        *(float *)v->b.data = x;
    return v;
}

ival *ip_val_scalar_i(int32_t x)
{
    core_shape s = {.rank = 0};
    ival *v = ip_val_new(SI_INT32, &s);
    if (v)
        *(int32_t *)v->b.data = x;
    return v;
}

double ip_buf_num(const core_buf *b, int64_t i)
{
    return b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[i]
                                  : (double)((const int32_t *)b->data)[i];
}


si_result ip_need_inputs(opctx *o, int count)
{
    if (o->n_data < count)
        return ip_node_fail(o->in, o->node, SI_ERR_FORMAT, "needs %d inputs, has %d", count,
                         o->n_data);
    return SI_OK;
}

si_result ip_in_number(opctx *o, int i, double *v)
{
    const core_buf *b = &o->data[i]->b;
    if (core_shape_count(&b->shape) < 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "input %d is empty, a number is needed", i);
    *v = ip_buf_num(b, 0);
    return SI_OK;
}

si_result ip_in_int(opctx *o, int i, int64_t *v)
{
    double d = 0;
    si_result st = ip_in_number(o, i, &d);
    if (st != SI_OK)
        return st;
    if (!(d >= -2147483648.0 && d <= 2147483647.0))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "input %d: %g is not an index", i, d);
    *v = (int64_t)d;
    return SI_OK;
}

/* tfjs 'shape' param: a scalar means unknown rank, a vector the dims. */
si_result ip_in_shape(opctx *o, int i, int *known, core_shape *s)
{
    const core_buf *b = &o->data[i]->b;
    if (b->shape.rank == 0) {
        *known = 0;
        return SI_OK;
    }
    int64_t n = core_shape_count(&b->shape);
    if (b->shape.rank != 1 || n > SI_MAX_RANK)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape input %d is not a shape", i);
    *known = 1;
    s->rank = (int)n;
    for (int d = 0; d < n; d++) {
        double x = ip_buf_num(b, d);
        s->d[d] = x < 0 ? -1 : (int64_t)x;
    }
    return SI_OK;
}

int ip_attr_bool(const io_node *n, const char *name, int dflt)
{
    const io_attr *a = io_node_attr(n, name);
    return a && a->kind == IO_ATTR_B ? a->b : dflt;
}

si_result ip_attr_dtype(opctx *o, const char *name, si_dtype *dt, int *given)
{
    const io_attr *a = io_node_attr(o->n, name);
    *given = 0;
    if (!a || a->kind != IO_ATTR_TYPE)
        return SI_OK;
    if (a->type == IO_DT_OTHER)
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "dtype %s",
                         a->type_name ? a->type_name : "?");
    *dt = (si_dtype)a->type;
    *given = 1;
    return SI_OK;
}

si_result ip_set_out(opctx *o, int i, ival *v)
{
    if (!v)
        return ip_nomem(o->in);
    if (i >= o->n_outs) {
        ip_val_unref(v);
        return SI_OK;
    }
    ip_val_unref(o->outs[i]);
    o->outs[i] = v;
    return SI_OK;
}

const char *ip_dt_name(si_dtype t)
{
    return t == SI_FLOAT32 ? "float32" : t == SI_INT32 ? "int32" : t == CORE_COMPLEX64 ? "complex64" : "bool";
}

/* ---- NonMaxSuppression, Where ---- */

si_result ip_nms(opctx *o)
{
    const char *op = o->n->op;
    int v5 = !strcmp(op, "NonMaxSuppressionV5"), v4 = !strcmp(op, "NonMaxSuppressionV4");
    int v2 = !strcmp(op, "NonMaxSuppressionV2");
    si_result st;
    if ((st = ip_need_inputs(o, v2 ? 4 : v5 ? 6 : 5)))
        return st;
    const core_buf *boxes = &o->data[0]->b, *scores = &o->data[1]->b;
    double max_out, iou, score_thr = -INFINITY, sigma = 0.0;
    if ((st = ip_in_number(o, 2, &max_out)) || (st = ip_in_number(o, 3, &iou)) ||
        (!v2 && (st = ip_in_number(o, 4, &score_thr))) || (v5 && (st = ip_in_number(o, 5, &sigma))))
        return st;
    if (boxes->shape.rank != 2 || boxes->shape.d[1] != 4)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "boxes must be [n,4]");
    if (scores->shape.rank != 1 || scores->shape.d[0] != boxes->shape.d[0])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "scores must be [n] with n boxes");
    if (boxes->dtype != SI_FLOAT32 || scores->dtype != SI_FLOAT32)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "boxes and scores must be float32");
    if (!(iou >= 0 && iou <= 1))
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "iouThreshold must be in [0, 1], but was %g", iou);
    if (!(sigma >= 0 && sigma <= 1))
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "softNmsSigma must be in [0, 1], but was %g",
                         sigma);
    int n = (int)boxes->shape.d[0];
    int m = max_out < 0 ? 0 : max_out > n ? n : (int)max_out;
    int pad = v4 && ip_attr_bool(o->n, "pad_to_max_output_size", 0);
    int32_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
    float *sc = malloc(((size_t)n + 1) * sizeof *sc);
    if (!idx || !sc) {
        free(idx);
        free(sc);
        return ip_nomem(o->in);
    }
    int ns = core_nms_host(boxes->data, scores->data, n, m, iou, score_thr, sigma, pad, idx, sc);
    if (ns < 0) {
        free(idx);
        free(sc);
        return ip_nomem(o->in);
    }
    int total = pad && ns < m ? m : ns;
    core_shape s = {.rank = 1, .d = {total}};
    ival *vi = ip_val_new(SI_INT32, &s);
    ival *vs = v5 ? ip_val_new(SI_FLOAT32, &s) : NULL;
    if (vi)
        memcpy(vi->b.data, idx, (size_t)total * 4);
    if (vs)
        memcpy(vs->b.data, sc, (size_t)total * 4);
    free(idx);
    free(sc);
    if ((st = ip_set_out(o, 0, vi))) {
        ip_val_unref(vs);
        return st;
    }
    if (v5)
        return ip_set_out(o, 1, vs);
    if (v4)
        return ip_set_out(o, 1, ip_val_scalar_i(ns));
    return SI_OK;
}

si_result ip_where(opctx *o)
{
    si_result st = ip_need_inputs(o, 1);
    if (st != SI_OK)
        return st;
    if (o->n_data > 1)
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "Where with x and y");
    core_buf out;
    if ((st = core_where_host(&o->data[0]->b, &out, o->in->err)))
        return st;
    ival *v = ip_val_wrap(out);
    if (!v)
        free(out.data);
    return ip_set_out(o, 0, v);
}

static si_result ip_set_pair(opctx *o, core_buf a, core_buf b)
{
    ival *va = ip_val_wrap(a);
    if (!va)
        free(a.data);
    ival *vb = ip_val_wrap(b);
    if (!vb)
        free(b.data);
    si_result st = ip_set_out(o, 0, va);
    si_result st2 = ip_set_out(o, 1, vb);
    return st != SI_OK ? st : st2;
}

/* Unique and UniqueV2 (axis input, tfjs parseAxisParam: negative counts from
 * the end); the out_idx attr is not read, idx is int32 as in tfjs. */
si_result ip_unique(opctx *o)
{
    int v2 = !strcmp(o->n->op, "UniqueV2");
    si_result st = ip_need_inputs(o, v2 ? 2 : 1);
    if (st != SI_OK)
        return st;
    const core_buf *x = &o->data[0]->b;
    int64_t axis = 0;
    if (v2 && (st = ip_in_int(o, 1, &axis)))
        return st;
    int rank = x->shape.rank;
    if (axis < 0)
        axis += rank;
    if (rank < 1 || axis < 0 || axis >= rank)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "axis out of range for a rank-%d input",
                            rank);
    core_buf values, idx;
    if ((st = core_unique_host(x, (int)axis, &values, &idx, o->in->err)))
        return st;
    return ip_set_pair(o, values, idx);
}

si_result ip_listdiff(opctx *o)
{
    si_result st = ip_need_inputs(o, 2);
    if (st != SI_OK)
        return st;
    const core_buf *x = &o->data[0]->b, *y = &o->data[1]->b;
    if (x->dtype != y->dtype)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "x and y should have the same dtype");
    if (x->shape.rank != 1 || y->shape.rank != 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "x and y should be 1D");
    core_buf out, idx;
    if ((st = core_listdiff_host(x, y, &out, &idx, o->in->err)))
        return st;
    return ip_set_pair(o, out, idx);
}

/* ---- executing one node ---- */

/* The node on the GPU (core_offload), its data inputs named by their edges. */
static si_result offload(opctx *o, const core_buf **bufs, core_buf *out)
{
    interp *in = o->in;
    int *en = malloc(((size_t)o->n_data + 1) * 2 * sizeof *en), d = 0;
    if (!en)
        return ip_nomem(in);
    const io_node *n = &in->g->m->nodes[o->node];
    for (int j = 0; j < n->n_inputs && d < o->n_data; j++)
        if (!in->g->edges[o->node][j].ctrl) {
            en[d] = in->g->edges[o->node][j].node;
            en[o->n_data + 1 + d++] = in->g->edges[o->node][j].idx;
        }
    si_result st = d < o->n_data ? SI_ERR_UNSUPPORTED
                                 : in->gpu->run(in->gpu->user, in->g, o->node, en,
                                                en + o->n_data + 1, bufs, o->n_data, out,
                                                o->n_outs, in->err);
    free(en);
    return st;
}

si_result ip_eval_ordinary(opctx *o)
{
    interp *in = o->in;
    const core_buf **bufs = malloc(((size_t)o->n_data + 1) * sizeof *bufs);
    core_buf *out = calloc((size_t)o->n_outs + 1, sizeof *out);
    if (!out || !bufs) {
        free(bufs);
        free(out);
        return ip_nomem(in);
    }
    size_t bytes = 0;
    for (int i = 0; i < o->n_data; i++) {
        bufs[i] = &o->data[i]->b;
        bytes += (size_t)core_shape_count(&bufs[i]->shape) * core_elem_bytes(bufs[i]->dtype);
    }
    si_result st = SI_ERR_UNSUPPORTED;
    if (in->gpu && bytes >= CORE_OFFLOAD_MIN)
        st = offload(o, bufs, out);
    if (st == SI_ERR_UNSUPPORTED)
        st = core_eval_node(in->g, o->node, bufs, o->n_data, out, o->n_outs, in->load,
                            in->load_user, in->err);
    for (int i = 0; i < o->n_outs; i++) {
        if (st == SI_OK && out[i].data) {
            ival *v = ip_val_wrap(out[i]);
            if (!v) {
                st = ip_nomem(in);
            } else {
                o->outs[i] = v;
                continue;
            }
        }
        free(out[i].data);
    }
    free(out);
    free(bufs);
    return st;
}

