/* The host interpreter's TensorArray (tfjs tensor_array.js) and TensorList
 * (tensor_list.js) ops: resources held by the run, named by int32 handles,
 * with one small handler per op found through a table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

/* ---- element shapes and resources ---- */

static void shape_text(int known, const core_shape *s, char *buf, size_t n)
{
    if (!known) {
        snprintf(buf, n, "(unknown rank)");
        return;
    }
    core_shape_str(s, buf, n);
}

/* assertShapesMatchAllowUndefinedSize */
static int shapes_match(int ka, const core_shape *a, int kb, const core_shape *b)
{
    if (!ka || !kb)
        return 1;
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] >= 0 && b->d[i] >= 0 && a->d[i] != b->d[i])
            return 0;
    return 1;
}

/* mergeElementShape; -1 when the ranks or dims disagree */
static int merge_shape(int ka, const core_shape *a, int kb, const core_shape *b, int *kout,
                       core_shape *out)
{
    if (!ka) {
        *kout = kb;
        if (kb)
            *out = *b;
        return 0;
    }
    if (!kb) {
        *kout = 1;
        *out = *a;
        return 0;
    }
    if (a->rank != b->rank)
        return -1;
    *kout = 1;
    out->rank = a->rank;
    for (int i = 0; i < a->rank; i++) {
        if (a->d[i] >= 0 && b->d[i] >= 0 && a->d[i] != b->d[i])
            return -1;
        out->d[i] = a->d[i] >= 0 ? a->d[i] : b->d[i];
    }
    return 0;
}

static int fully_defined(int known, const core_shape *s)
{
    if (!known)
        return 0;
    for (int i = 0; i < s->rank; i++)
        if (s->d[i] < 0)
            return 0;
    return 1;
}

/* inferElementShape(list shape, list items, requested shape) */
static si_result infer_elem_shape(opctx *o, const iresource *r, int kreq, const core_shape *req,
                                  core_shape *out)
{
    int k;
    core_shape s;
    char a[96], b[96];
    if (merge_shape(r->shape_known, &r->shape, kreq, req, &k, &s)) {
        shape_text(r->shape_known, &r->shape, a, sizeof a);
        shape_text(kreq, req, b, sizeof b);
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "incompatible element shapes %s and %s", a, b);
    }
    if (!fully_defined(k, &s)) {
        int any = 0;
        for (int i = 0; i < r->n; i++) {
            if (!r->items[i])
                continue;
            any = 1;
            int k2;
            core_shape s2;
            if (merge_shape(1, &r->items[i]->b.shape, k, &s, &k2, &s2))
                return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "list elements disagree in shape");
            k = k2;
            s = s2;
        }
        if (!any)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                             "element shape of an empty list is not fully defined");
    }
    if (!fully_defined(k, &s)) {
        shape_text(k, &s, a, sizeof a);
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape %s is not fully defined", a);
    }
    *out = s;
    return SI_OK;
}

/* A new tensor stacking items[idx[0..n)] (each reshaped to elem) along a new axis 0. */
static si_result stack_items(opctx *o, iresource *r, const int *idx, int n, const core_shape *elem,
                             ival **out)
{
    if (elem->rank + 1 > SI_MAX_RANK)
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "stacked rank over %d", SI_MAX_RANK);
    core_shape s = {.rank = elem->rank + 1};
    s.d[0] = n;
    for (int i = 0; i < elem->rank; i++)
        s.d[i + 1] = elem->d[i];
    int64_t per = core_shape_count(elem);
    ival *v = ip_val_new(r->dtype, &s);
    if (!v)
        return ip_nomem(o->in);
    for (int i = 0; i < n; i++) {
        const ival *it = idx[i] >= 0 && idx[i] < r->n ? r->items[idx[i]] : NULL;
        if (!it) {
            ip_val_unref(v);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element %d of '%s' is not set", idx[i],
                             r->name);
        }
        if (core_shape_count(&it->b.shape) != per) {
            char a[96], b[96];
            core_shape_str(&it->b.shape, a, sizeof a);
            core_shape_str(elem, b, sizeof b);
            ip_val_unref(v);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element %d of shape %s is not %s",
                             idx[i], a, b);
        }
        memcpy((char *)v->b.data + (size_t)(i * per) * CORE_ELEM, it->b.data,
               (size_t)per * CORE_ELEM);
    }
    *out = v;
    return SI_OK;
}

/* The rows of x (along axis 0) from row0 as a value of shape s (its count
 * the rows'): a view, no copy (effdet-d7-od's list of one [441936, 90] row). */
static ival *slice_rows(ival *x, int64_t row0, const core_shape *s)
{
    const core_buf *b = &x->b;
    int64_t per = b->shape.rank ? core_shape_count(&b->shape) / (b->shape.d[0] ? b->shape.d[0] : 1) : 1;
    return ip_val_view(x, s, (size_t)(row0 * per) * CORE_ELEM);
}

static int res_reserve(iresource *r, int n)
{
    if (n <= r->cap)
        return 0;
    int cap = r->cap ? r->cap : 8;
    while (cap < n)
        cap *= 2;
    ival **it = realloc(r->items, (size_t)cap * sizeof *it);
    if (!it)
        return -1;
    r->items = it;
    uint8_t *rd = realloc(r->read, (size_t)cap);
    if (!rd)
        return -1;
    r->read = rd;
    for (int i = r->cap; i < cap; i++) {
        r->items[i] = NULL;
        r->read[i] = 0;
    }
    r->cap = cap;
    return 0;
}

static si_result new_resource(opctx *o, int kind, iresource **out, int32_t *handle)
{
    interp *in = o->in;
    if (in->n_res == in->cap_res) {
        int cap = in->cap_res ? in->cap_res * 2 : 16;
        iresource *r = realloc(in->res, (size_t)cap * sizeof *r);
        if (!r)
            return ip_nomem(in);
        in->res = r;
        in->cap_res = cap;
    }
    iresource *r = &in->res[in->n_res];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->max_elems = -1;
    r->name = o->n->name;
    *handle = RES_HANDLE_BASE + in->n_res++;
    *out = r;
    return SI_OK;
}

static si_result get_resource(opctx *o, int i, int kind, iresource **out, int32_t *handle)
{
    const core_buf *b = &o->data[i]->b;
    int32_t h = b->dtype == SI_INT32 && core_shape_count(&b->shape) == 1 ? *(int32_t *)b->data : -1;
    int idx = h - RES_HANDLE_BASE;
    if (idx < 0 || idx >= o->in->n_res || o->in->res[idx].kind != kind)
        return ip_node_fail(o->in, o->node, SI_ERR_FORMAT, "input %d is not a %s handle", i,
                         kind ? "TensorList" : "TensorArray");
    *out = &o->in->res[idx];
    *handle = h;
    return SI_OK;
}

/* ---- TensorArray (tensor_array.js) ---- */

static si_result ta_write(opctx *o, iresource *r, int64_t index, ival *t)
{
    if (r->closed)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "TensorArray '%s' is closed", r->name);
    if (index < 0 || (!r->dynamic && index >= r->max_size))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                         "write to index %lld of TensorArray '%s' of size %d", (long long)index,
                         r->name, r->max_size);
    if (index > 100000000)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "index %lld too large", (long long)index);
    if (t->b.dtype != r->dtype)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "writes %s to TensorArray '%s' of %s",
                         ip_dt_name(t->b.dtype), r->name, ip_dt_name(r->dtype));
    if (r->n == 0 && (!r->shape_known || r->shape.rank == 0)) {
        r->shape_known = 1;
        r->shape = t->b.shape;
    }
    if (!shapes_match(r->shape_known, &r->shape, 1, &t->b.shape)) {
        char a[96], b[96];
        shape_text(r->shape_known, &r->shape, a, sizeof a);
        core_shape_str(&t->b.shape, b, sizeof b);
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "TensorArray '%s' of %s gets %s", r->name, a, b);
    }
    if (res_reserve(r, (int)index + 1))
        return ip_nomem(o->in);
    if (r->read[index])
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "index %lld of '%s' written after a read",
                         (long long)index, r->name);
    if (r->items[index])
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "index %lld of '%s' written twice",
                         (long long)index, r->name);
    r->items[index] = ip_val_ref(t);
    if (index + 1 > r->n)
        r->n = (int)index + 1;
    return SI_OK;
}

static si_result ta_read(opctx *o, iresource *r, int64_t index, ival **out)
{
    if (r->closed)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "TensorArray '%s' is closed", r->name);
    if (index < 0 || index >= r->n)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "read of index %lld, TensorArray size %d",
                         (long long)index, r->n);
    if (!r->items[index])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "index %lld was never written (or was cleared)",
                         (long long)index);
    *out = r->items[index];
    r->read[index] = 1;
    return SI_OK;
}

/* TensorArrayV3: a new array of attr dtype and size (input 0). */
static si_result ta_create(opctx *o, iresource *unused, int32_t unused_h)
{
    (void)unused;
    (void)unused_h;
    si_result st;
    iresource *r;
    int32_t h;
    int64_t size;
    if ((st = ip_need_inputs(o, 1)) || (st = ip_in_int(o, 0, &size)))
        return st;
    si_dtype dt = SI_FLOAT32;
    int given;
    if ((st = ip_attr_dtype(o, "dtype", &dt, &given)) || (st = new_resource(o, 0, &r, &h)))
        return st;
    r->dtype = dt;
    r->max_size = (int)size;
    r->dynamic = ip_attr_bool(o->n, "dynamic_size", 0);
    r->clear_after_read = ip_attr_bool(o->n, "clear_after_read", 0);
    const io_attr *es = io_node_attr(o->n, "element_shape");
    if (es && es->kind == IO_ATTR_SHAPE && !es->shape.unknown_rank) {
        r->shape_known = 1;
        r->shape.rank = es->shape.rank;
        for (int i = 0; i < es->shape.rank; i++)
            r->shape.d[i] = es->shape.dim[i] < 0 ? -1 : es->shape.dim[i];
    }
    if ((st = ip_set_out(o, 0, ip_val_scalar_i(h))))
        return st;
    return ip_set_out(o, 1, ip_val_scalar_f(1.0f));
}

static si_result ta_write_op(opctx *o, iresource *r, int32_t h)
{
    si_result st;
    int64_t index;
    if ((st = ip_need_inputs(o, 3)) || (st = ip_in_int(o, 1, &index)) ||
        (st = ta_write(o, r, index, o->data[2])))
        return st;
    return ip_set_out(o, 0, ip_val_scalar_i(h));
}

static si_result ta_read_op(opctx *o, iresource *r, int32_t h)
{
    (void)h;
    si_result st;
    int64_t index;
    ival *v;
    if ((st = ip_need_inputs(o, 2)) || (st = ip_in_int(o, 1, &index)) || (st = ta_read(o, r, index, &v)))
        return st;
    ip_val_ref(v);
    if (r->clear_after_read) {
        ip_val_unref(r->items[index]);
        r->items[index] = NULL;
    }
    return ip_set_out(o, 0, v);
}

/* Gather or concat of an array with no elements: [0, ...element shape] for
 * both (tfjs's concat too, tensor([], [0].concat(elementShape))). */
static si_result ta_empty_result(opctx *o, iresource *r)
{
    if (!fully_defined(r->shape_known, &r->shape) || r->shape.rank + 1 > SI_MAX_RANK)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "empty TensorArray with an unknown element shape");
    core_shape s = {.rank = r->shape.rank + 1};
    for (int i = 0; i < r->shape.rank; i++)
        s.d[i + 1] = r->shape.d[i];
    return ip_set_out(o, 0, ip_val_new(r->dtype, &s));
}

/* Elements idx[0..n) concatenated along axis 0: each has the first's trailing dims. */
static si_result ta_concat_items(opctx *o, iresource *r, const int *idx, int n, ival **out)
{
    const core_shape *first = &r->items[idx[0]]->b.shape;
    /* tfjs's concat of one tensor is a copy of it, a scalar too */
    if (first->rank < 1 && n > 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "cannot concat scalars");
    core_shape s = *first;
    if (first->rank < 1) {
        if (!(*out = ip_val_new(r->dtype, &s)))
            return ip_nomem(o->in);
        memcpy((*out)->b.data, r->items[idx[0]]->b.data, CORE_ELEM);
        return SI_OK;
    }
    int64_t rows = 0;
    for (int i = 0; i < n; i++) {
        const core_shape *si = &r->items[idx[i]]->b.shape;
        int ok = si->rank == first->rank;
        for (int d = 1; ok && d < si->rank; d++)
            ok = si->d[d] == first->d[d];
        if (!ok)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "concat of mismatched elements");
        rows += si->d[0];
    }
    s.d[0] = rows;
    ival *v = ip_val_new(r->dtype, &s);
    if (!v)
        return ip_nomem(o->in);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        const core_buf *b = &r->items[idx[i]]->b;
        size_t bytes = (size_t)core_shape_count(&b->shape) * CORE_ELEM;
        memcpy((char *)v->b.data + off, b->data, bytes);
        off += bytes;
    }
    *out = v;
    return SI_OK;
}

/* The elements idx[0..n) (all read, non-empty), stacked or concatenated. */
static si_result ta_collect(opctx *o, iresource *r, const int *idx, int n, int concat)
{
    si_result st;
    for (int i = 0; i < n; i++) {
        ival *v;
        if ((st = ta_read(o, r, idx[i], &v)))
            return st;
    }
    const core_shape *first = &r->items[idx[0]]->b.shape;
    if (!shapes_match(r->shape_known, &r->shape, 1, first))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "TensorArray shape mismatch");
    /* tfjs's stack wants every element of the first's shape (a partial
     * element shape lets [2,3] and [3,2] in) */
    for (int i = 1; !concat && i < n; i++) {
        const core_shape *si = &r->items[idx[i]]->b.shape;
        int same = si->rank == first->rank;
        for (int d = 0; same && d < si->rank; d++)
            same = si->d[d] == first->d[d];
        if (!same) {
            char a[96], b[96];
            core_shape_str(si, a, sizeof a);
            core_shape_str(first, b, sizeof b);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "element %d of shape %s does not stack with %s", idx[i], a, b);
        }
    }
    ival *v = NULL;
    st = concat ? ta_concat_items(o, r, idx, n, &v) : stack_items(o, r, idx, n, first, &v);
    if (st != SI_OK)
        return st;
    if (r->clear_after_read)
        for (int i = 0; i < n; i++) {
            ip_val_unref(r->items[idx[i]]);
            r->items[idx[i]] = NULL;
        }
    return ip_set_out(o, 0, v);
}

/* TensorArrayGatherV3 (indices: input 1) and TensorArrayConcatV3 (every element). */
static si_result ta_gather_concat(opctx *o, iresource *r, int concat)
{
    si_result st;
    si_dtype dt;
    int given;
    if ((st = ip_attr_dtype(o, "dtype", &dt, &given)))
        return st;
    if (given && dt != r->dtype)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "TensorArray is %s, %s asked",
                            ip_dt_name(r->dtype), ip_dt_name(dt));
    int n = r->n;
    if (!concat) {
        if ((st = ip_need_inputs(o, 2)))
            return st;
        int64_t ni = core_shape_count(&o->data[1]->b.shape);
        n = ni < r->n ? (int)ni : r->n; /* indices.slice(0, size()) */
    }
    int *idx = malloc(((size_t)n + 1) * sizeof *idx);
    if (!idx)
        return ip_nomem(o->in);
    for (int i = 0; i < n; i++)
        idx[i] = concat ? i : (int)ip_buf_num(&o->data[1]->b, i);
    st = n == 0 ? ta_empty_result(o, r) : ta_collect(o, r, idx, n, concat);
    free(idx);
    return st;
}

static si_result ta_gather(opctx *o, iresource *r, int32_t h)
{
    (void)h;
    return ta_gather_concat(o, r, 0);
}

static si_result ta_concat(opctx *o, iresource *r, int32_t h)
{
    (void)h;
    return ta_gather_concat(o, r, 1);
}

static si_result ta_scatter(opctx *o, iresource *r, int32_t h)
{
    si_result st;
    if ((st = ip_need_inputs(o, 3)))
        return st;
    const core_buf *ib = &o->data[1]->b, *t = &o->data[2]->b;
    int64_t ni = core_shape_count(&ib->shape);
    if (t->dtype != r->dtype)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "TensorArray is %s, tensor %s",
                            ip_dt_name(r->dtype), ip_dt_name(t->dtype));
    if (t->shape.rank < 1 || ni != t->shape.d[0])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "%lld indices for %lld rows", (long long)ni,
                            (long long)(t->shape.rank ? t->shape.d[0] : 0));
    core_shape es = {.rank = t->shape.rank - 1};
    for (int d = 1; d < t->shape.rank; d++)
        es.d[d - 1] = t->shape.d[d];
    for (int64_t i = 0; i < ni; i++) {
        ival *row = slice_rows(o->data[2], i, &es);
        if (!row)
            return ip_nomem(o->in);
        st = ta_write(o, r, (int64_t)ip_buf_num(ib, i), row);
        ip_val_unref(row);
        if (st != SI_OK)
            return st;
    }
    return ip_set_out(o, 0, ip_val_scalar_i(h));
}

/* The sum of the lengths lb holds (a Split op's input). */
static int64_t lengths_sum(const core_buf *lb)
{
    int64_t total = 0;
    for (int64_t i = 0; i < core_shape_count(&lb->shape); i++)
        total += (int64_t)ip_buf_num(lb, i);
    return total;
}

/* tfjs's reshape of count elements to shape to: one -1 dim is inferred.
 * -1 when it cannot be done. */
static int reshape_to(const core_shape *to, int64_t count, core_shape *out)
{
    int64_t known = 1;
    int implicit = -1;
    for (int i = 0; i < to->rank; i++) {
        if (to->d[i] < 0) {
            if (implicit >= 0)
                return -1;
            implicit = i;
        } else {
            known *= to->d[i];
        }
    }
    *out = *to;
    if (implicit >= 0) {
        if (known == 0 || count % known)
            return -1;
        out->d[implicit] = count / known;
        return 0;
    }
    return known == count ? 0 : -1;
}

/* TensorArraySplit and TensorListSplit: t cut along axis 0 into parts of the
 * lengths lb holds, part i stored as element i of r. As in tfjs, each part is
 * reshaped to the shape to (one -1 dim inferred; the TensorArray's element
 * shape, the TensorList's row shape merged with its element shape); to NULL
 * (a TensorArray of unknown element shape, where tfjs fails) keeps the
 * part's own shape. */
static si_result split_rows(opctx *o, iresource *r, ival *tv, const core_buf *lb,
                            const core_shape *to,
                            si_result (*store)(opctx *, iresource *, int64_t, ival *))
{
    const core_buf *t = &tv->b;
    int64_t row = 0;
    for (int64_t i = 0; i < core_shape_count(&lb->shape); i++) {
        int64_t len = (int64_t)ip_buf_num(lb, i);
        core_shape s = t->shape;
        s.d[0] = len;
        if (to && reshape_to(to, core_shape_count(&s), &s)) {
            char a[96], b[96];
            core_shape_str(&t->shape, a, sizeof a);
            core_shape_str(to, b, sizeof b);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "part %lld (%lld rows of %s) cannot be reshaped to %s", (long long)i,
                                (long long)len, a, b);
        }
        ival *part = slice_rows(tv, row, &s);
        if (!part)
            return ip_nomem(o->in);
        si_result st = store(o, r, i, part);
        ip_val_unref(part);
        if (st != SI_OK)
            return st;
        row += len;
    }
    return SI_OK;
}

static si_result ta_split(opctx *o, iresource *r, int32_t h)
{
    si_result st;
    if ((st = ip_need_inputs(o, 3)))
        return st;
    const core_buf *t = &o->data[1]->b, *lb = &o->data[2]->b;
    int64_t nl = core_shape_count(&lb->shape), total = lengths_sum(lb);
    if (t->dtype != r->dtype || t->shape.rank < 1 || total != t->shape.d[0])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "lengths do not split the tensor");
    if (!r->dynamic && nl != r->max_size)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "%lld lengths for a TensorArray of %d",
                            (long long)nl, r->max_size);
    if ((st = split_rows(o, r, o->data[1], lb, r->shape_known ? &r->shape : NULL, ta_write)) != SI_OK)
        return st;
    return ip_set_out(o, 0, ip_val_scalar_i(h));
}

static si_result ta_size(opctx *o, iresource *r, int32_t h)
{
    (void)h;
    return ip_set_out(o, 0, ip_val_scalar_i(r->n));
}

static si_result ta_close(opctx *o, iresource *r, int32_t h)
{
    for (int i = 0; i < r->n; i++) {
        ip_val_unref(r->items[i]);
        r->items[i] = NULL;
    }
    r->n = 0;
    r->closed = 1;
    return ip_set_out(o, 0, ip_val_scalar_i(h));
}

/* Every op but TensorArrayV3 names its array by the handle in input 0. */
static const struct {
    const char *op;
    si_result (*run)(opctx *o, iresource *r, int32_t h);
    int takes_handle;
} ta_ops[] = {
    {"TensorArrayV3", ta_create, 0},         {"TensorArrayWriteV3", ta_write_op, 1},
    {"TensorArrayReadV3", ta_read_op, 1},    {"TensorArrayGatherV3", ta_gather, 1},
    {"TensorArrayConcatV3", ta_concat, 1},   {"TensorArrayScatterV3", ta_scatter, 1},
    {"TensorArraySplitV3", ta_split, 1},     {"TensorArraySizeV3", ta_size, 1},
    {"TensorArrayCloseV3", ta_close, 1},
};

si_result ip_tensor_array(opctx *o)
{
    int d = -1;
    for (int i = 0; i < (int)(sizeof ta_ops / sizeof ta_ops[0]) && d < 0; i++)
        if (!strcmp(ta_ops[i].op, o->n->op))
            d = i;
    if (d >= 0 && !ta_ops[d].takes_handle)
        return ta_ops[d].run(o, NULL, 0);
    si_result st;
    iresource *r;
    int32_t h;
    if ((st = ip_need_inputs(o, 1)) || (st = get_resource(o, 0, 0, &r, &h)))
        return st;
    if (d < 0)
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "op not implemented");
    return ta_ops[d].run(o, r, h);
}

/* ---- TensorList (tensor_list.js) ---- */

static si_result tl_check_dtype(opctx *o, iresource *r)
{
    si_dtype dt;
    int given;
    si_result st = ip_attr_dtype(o, "element_dtype", &dt, &given);
    if (st == SI_OK && given && dt != r->dtype)
        st = ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "list of %s, op wants %s", ip_dt_name(r->dtype),
                       ip_dt_name(dt));
    return st;
}

static si_result tl_set(opctx *o, iresource *r, int64_t index, ival *t)
{
    if (t->b.dtype != r->dtype)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "list of %s gets %s", ip_dt_name(r->dtype),
                         ip_dt_name(t->b.dtype));
    if (index < 0 || (r->max_elems != -1 && index >= r->max_elems) || index > 100000000)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "set of element %lld, list max %d",
                         (long long)index, r->max_elems);
    if (!shapes_match(r->shape_known, &r->shape, 1, &t->b.shape))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape mismatch");
    if (res_reserve(r, (int)index + 1))
        return ip_nomem(o->in);
    ip_val_unref(r->items[index]);
    r->items[index] = ip_val_ref(t);
    if (index + 1 > r->n)
        r->n = (int)index + 1;
    return SI_OK;
}

static si_result tl_new(opctx *o, si_dtype dt, int known, const core_shape *s, int max_elems,
                        iresource **r, int32_t *h)
{
    si_result st = new_resource(o, 1, r, h);
    if (st != SI_OK)
        return st;
    (*r)->dtype = dt;
    (*r)->shape_known = known;
    if (known)
        (*r)->shape = *s;
    (*r)->max_elems = max_elems;
    return SI_OK;
}

/* What a TensorList handler starts from: the element_dtype attr (every op
 * reads it first) and, but for the ops that make a list, input 0's list. */
typedef struct {
    si_dtype dt;
    int given;
    iresource *r;
    int32_t h;
} tl_args;

/* TensorListReserve and EmptyTensorList: tfjs reserves nothing, the list
 * starts empty; EmptyTensorList's input 1 bounds it. */
static si_result tl_reserve_or_empty(opctx *o, const tl_args *a, int empty)
{
    si_result st;
    iresource *r;
    int32_t h;
    int known;
    core_shape es;
    int64_t num;
    if ((st = ip_need_inputs(o, 2)) || (st = ip_in_shape(o, 0, &known, &es)) || (st = ip_in_int(o, 1, &num)))
        return st;
    if ((st = tl_new(o, a->dt, known, &es, empty ? (int)num : -1, &r, &h)))
        return st;
    return ip_set_out(o, 0, ip_val_scalar_i(h));
}

static si_result tl_reserve(opctx *o, const tl_args *a) { return tl_reserve_or_empty(o, a, 0); }
static si_result tl_empty(opctx *o, const tl_args *a) { return tl_reserve_or_empty(o, a, 1); }

/* The ops that make a list from the rows of tensor input 0: the element
 * shape (input shape_in) and the shape of one row. */
static si_result tl_rows_args(opctx *o, int shape_in, int *known, core_shape *es, core_shape *rs)
{
    si_result st;
    if ((st = ip_need_inputs(o, shape_in + 1)) || (st = ip_in_shape(o, shape_in, known, es)))
        return st;
    const core_buf *t = &o->data[0]->b;
    if (t->shape.rank < 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "tensor must be at least a vector");
    rs->rank = t->shape.rank - 1;
    for (int d = 1; d < t->shape.rank; d++)
        rs->d[d - 1] = t->shape.d[d];
    return SI_OK;
}

/* A new list whose element i is row i of input 0, stored at index ib[i]
 * (ib NULL: at i). */
static si_result tl_from_rows(opctx *o, si_dtype dt, int known, const core_shape *es,
                              const core_shape *rs, int max_elems, const core_buf *ib)
{
    si_result st;
    iresource *r;
    int32_t h;
    const core_buf *t = &o->data[0]->b;
    int64_t rows = t->shape.d[0];
    if ((st = tl_new(o, dt, known, es, max_elems, &r, &h)))
        return st;
    if (ib && core_shape_count(&ib->shape) != rows)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "indices do not match the tensor's rows");
    for (int64_t i = 0; i < rows; i++) {
        ival *row = slice_rows(o->data[0], i, rs);
        if (!row)
            return ip_nomem(o->in);
        st = tl_set(o, r, ib ? (int64_t)ip_buf_num(ib, i) : i, row);
        ip_val_unref(row);
        if (st != SI_OK)
            return st;
    }
    return ip_set_out(o, 0, ip_val_scalar_i(h));
}

static si_result tl_from_tensor(opctx *o, const tl_args *a)
{
    si_result st;
    int known;
    core_shape es, rs;
    if ((st = tl_rows_args(o, 1, &known, &es, &rs)))
        return st;
    const core_buf *t = &o->data[0]->b;
    if (a->given && t->dtype != a->dt)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "tensor is %s, list %s",
                            ip_dt_name(t->dtype), ip_dt_name(a->dt));
    if (!shapes_match(1, &rs, known, &es))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "tensor rows do not match the element shape");
    return tl_from_rows(o, a->dt, known, &es, &rs, -1, NULL);
}

/* TensorListScatter and TensorListScatterV2 (whose input 3 bounds the list). */
static si_result tl_scatter(opctx *o, const tl_args *a)
{
    (void)a;
    si_result st;
    int known;
    core_shape es, rs;
    if ((st = tl_rows_args(o, 2, &known, &es, &rs)))
        return st;
    int64_t num = -1;
    if (!strcmp(o->n->op, "TensorListScatterV2") && o->n_data > 3 && (st = ip_in_int(o, 3, &num)))
        return st;
    return tl_from_rows(o, o->data[0]->b.dtype, known, &es, &rs, (int)num, &o->data[1]->b);
}

static si_result tl_split(opctx *o, const tl_args *a)
{
    (void)a;
    si_result st;
    iresource *r;
    int32_t h;
    int known, km;
    core_shape es, rs, ms;
    /* the lengths are input 2 */
    if ((st = ip_need_inputs(o, 3)) || (st = tl_rows_args(o, 1, &known, &es, &rs)))
        return st;
    const core_buf *t = &o->data[0]->b, *lb = &o->data[2]->b;
    int64_t nl = core_shape_count(&lb->shape), total = lengths_sum(lb);
    if (total != t->shape.d[0])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "lengths sum to %lld, tensor has %lld",
                            (long long)total, (long long)t->shape.d[0]);
    if (merge_shape(1, &rs, known, &es, &km, &ms))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "incompatible element shapes");
    if ((st = tl_new(o, t->dtype, known, &es, (int)nl, &r, &h)))
        return st;
    if ((st = split_rows(o, r, o->data[0], lb, &ms, tl_set)) != SI_OK)
        return st;
    return ip_set_out(o, 0, ip_val_scalar_i(h));
}

static si_result tl_length(opctx *o, const tl_args *a)
{
    return ip_set_out(o, 0, ip_val_scalar_i(a->r->n));
}

static si_result tl_set_item(opctx *o, const tl_args *a)
{
    si_result st;
    int64_t index;
    if ((st = ip_need_inputs(o, 3)) || (st = ip_in_int(o, 1, &index)) ||
        (st = tl_set(o, a->r, index, o->data[2])))
        return st;
    return ip_set_out(o, 0, ip_val_scalar_i(a->h));
}

static si_result tl_push_back(opctx *o, const tl_args *a)
{
    si_result st;
    if ((st = ip_need_inputs(o, 2)))
        return st;
    if (a->r->max_elems == a->r->n)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "push into a full list");
    if ((st = tl_set(o, a->r, a->r->n, o->data[1])))
        return st;
    return ip_set_out(o, 0, ip_val_scalar_i(a->h));
}

/* A new list: the first size elements of input 0's (unset past its end). */
static si_result tl_resize(opctx *o, const tl_args *a)
{
    interp *in = o->in;
    si_result st;
    int64_t size;
    if ((st = ip_need_inputs(o, 2)) || (st = ip_in_int(o, 1, &size)))
        return st;
    iresource *r = a->r;
    if (size < 0 || (r->max_elems != -1 && size > r->max_elems) || size > 100000000)
        return ip_node_fail(in, o->node, SI_ERR_SHAPE, "bad size %lld", (long long)size);
    iresource *d;
    int32_t dh;
    int src = (int)(r - in->res);
    if ((st = tl_new(o, r->dtype, r->shape_known, &r->shape, r->max_elems, &d, &dh)))
        return st;
    r = &in->res[src]; /* the table may have moved */
    if (res_reserve(d, (int)size))
        return ip_nomem(in);
    for (int i = 0; i < size && i < r->n; i++)
        d->items[i] = ip_val_ref(r->items[i]);
    d->n = (int)size;
    return ip_set_out(o, 0, ip_val_scalar_i(dh));
}

/* Element it seen as shape out (same count): a view, no copy. */
static si_result tl_reshaped(opctx *o, ival *it, const core_shape *out)
{
    ival *v = ip_val_view(it, out, 0);
    if (!v)
        return ip_nomem(o->in);
    return ip_set_out(o, 0, v);
}

static si_result tl_get_item(opctx *o, const tl_args *a)
{
    si_result st;
    iresource *r = a->r;
    int64_t index;
    int known;
    core_shape es, out;
    if ((st = ip_need_inputs(o, 3)) || (st = ip_in_int(o, 1, &index)) || (st = ip_in_shape(o, 2, &known, &es)))
        return st;
    if (index < 0 || index >= r->n || !r->items[index])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element %lld of a list of %d is not set",
                            (long long)index, r->n);
    ival *it = r->items[index];
    if (!shapes_match(1, &it->b.shape, known, &es) ||
        (st = infer_elem_shape(o, r, known, &es, &out)) != SI_OK)
        return st ? st : ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape mismatch");
    if (core_shape_count(&out) != core_shape_count(&it->b.shape))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "cannot reshape the element");
    return tl_reshaped(o, it, &out);
}

static si_result tl_pop_back(opctx *o, const tl_args *a)
{
    si_result st;
    iresource *r = a->r;
    int known;
    core_shape es, out;
    if ((st = ip_need_inputs(o, 2)) || (st = ip_in_shape(o, 1, &known, &es)))
        return st;
    if (r->n == 0)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "pop from an empty list");
    if ((st = infer_elem_shape(o, r, known, &es, &out)))
        return st;
    ival *it = r->items[r->n - 1];
    if (!it || core_shape_count(&out) != core_shape_count(&it->b.shape))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "cannot pop the last element");
    if ((st = tl_reshaped(o, it, &out)))
        return st;
    ip_val_unref(it);
    r->items[--r->n] = NULL;
    return SI_OK;
}

/* The element shape a stack, gather or concat asks for: the concats' attr,
 * else the shape input (1 of TensorListStack, 2 of TensorListGather). */
static si_result tl_asked_shape(opctx *o, int gather, int concat, int *known, core_shape *es)
{
    si_result st;
    if (!concat) {
        if ((st = ip_need_inputs(o, gather ? 3 : 2)) || (st = ip_in_shape(o, gather ? 2 : 1, known, es)))
            return st;
        return SI_OK;
    }
    *known = 0;
    const io_attr *a = io_node_attr(o->n, "element_shape");
    if (a && a->kind == IO_ATTR_SHAPE && !a->shape.unknown_rank) {
        *known = 1;
        es->rank = a->shape.rank;
        for (int i = 0; i < es->rank; i++)
            es->d[i] = a->shape.dim[i] < 0 ? -1 : a->shape.dim[i];
    }
    return SI_OK;
}

/* TensorListStack, TensorListGather (indices: input 1), TensorListConcat(V2). */
static si_result tl_stack(opctx *o, const tl_args *a)
{
    si_result st;
    iresource *r = a->r;
    int gather = !strcmp(o->n->op, "TensorListGather");
    int concat = !strncmp(o->n->op, "TensorListConcat", 16);
    int known;
    core_shape es, out;
    if ((st = tl_asked_shape(o, gather, concat, &known, &es)))
        return st;
    if (!shapes_match(r->shape_known, &r->shape, known, &es))
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "element shape mismatch");
    if ((st = infer_elem_shape(o, r, known, &es, &out)))
        return st;
    int n = r->n;
    if (gather) {
        int64_t ni = core_shape_count(&o->data[1]->b.shape);
        n = ni < r->n ? (int)ni : r->n;
    }
    int *idx = calloc((size_t)n + 1, sizeof *idx);
    if (!idx)
        return ip_nomem(o->in);
    for (int i = 0; i < n; i++)
        idx[i] = gather ? (int)ip_buf_num(&o->data[1]->b, i) : i;
    ival *v = NULL;
    st = stack_items(o, r, idx, n, &out, &v);
    free(idx);
    if (st != SI_OK)
        return st;
    if (concat && n > 0 && !(n == 1 && out.rank == 0)) {
        /* concat along axis 0 of the elements = the stack with dims 0 and 1
         * merged; of no elements, [0, ...element shape] as tfjs gives, and of
         * one, a copy of it (a scalar too) */
        if (out.rank < 1) {
            ip_val_unref(v);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "cannot concat scalars");
        }
        core_shape s = out;
        s.d[0] = out.d[0] * n;
        v->b.shape = s;
    } else if (concat && n == 1) {
        v->b.shape = out;
    }
    return ip_set_out(o, 0, v);
}

/* TL_NEW ops make a list; the others read input 0's, and TL_TYPED ones first
 * check its dtype against element_dtype. */
enum { TL_NEW, TL_HANDLE, TL_TYPED };

static const struct {
    const char *op;
    si_result (*run)(opctx *o, const tl_args *a);
    int kind;
} tl_ops[] = {
    {"TensorListReserve", tl_reserve, TL_NEW},      {"EmptyTensorList", tl_empty, TL_NEW},
    {"TensorListFromTensor", tl_from_tensor, TL_NEW}, {"TensorListScatter", tl_scatter, TL_NEW},
    {"TensorListScatterV2", tl_scatter, TL_NEW},    {"TensorListSplit", tl_split, TL_NEW},
    {"TensorListLength", tl_length, TL_HANDLE},     {"TensorListSetItem", tl_set_item, TL_HANDLE},
    {"TensorListPushBack", tl_push_back, TL_HANDLE}, {"TensorListResize", tl_resize, TL_HANDLE},
    {"TensorListGetItem", tl_get_item, TL_TYPED},   {"TensorListPopBack", tl_pop_back, TL_TYPED},
    {"TensorListStack", tl_stack, TL_TYPED},        {"TensorListGather", tl_stack, TL_TYPED},
    {"TensorListConcat", tl_stack, TL_TYPED},       {"TensorListConcatV2", tl_stack, TL_TYPED},
};

si_result ip_tensor_list(opctx *o)
{
    tl_args a = {.dt = SI_FLOAT32};
    si_result st;
    if ((st = ip_attr_dtype(o, "element_dtype", &a.dt, &a.given)))
        return st;
    int d = -1;
    for (int i = 0; i < (int)(sizeof tl_ops / sizeof tl_ops[0]) && d < 0; i++)
        if (!strcmp(tl_ops[i].op, o->n->op))
            d = i;
    if (d >= 0 && tl_ops[d].kind == TL_NEW)
        return tl_ops[d].run(o, &a);
    if ((st = ip_need_inputs(o, 1)) || (st = get_resource(o, 0, 1, &a.r, &a.h)))
        return st;
    if ((d < 0 || tl_ops[d].kind == TL_TYPED) && (st = tl_check_dtype(o, a.r)))
        return st;
    if (d < 0)
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "op not implemented");
    return tl_ops[d].run(o, &a);
}
