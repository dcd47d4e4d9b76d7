/* RaggedTensorToTensor in the host interpreter, as tfjs-backend-cpu runs it
 * (RaggedTensorToTensor_impl.js, with tfjs-core's ragged_to_dense_util.js):
 * its output shape hangs on the partitions' values. tfjs's quirks are kept:
 * partition types stop at the first unknown name; only FIRST_DIM_SIZE,
 * VALUE_ROWIDS and ROW_SPLITS run; the shape check of values' inner dims
 * indexes the output shape by a dim's value (so it may fill a ragged dim, or
 * miss the dim it checks, and then an unknown inner dim is an error); and a
 * default_value of more than one element pads with zeros (tfjs copies it into
 * a slice() of the output, a copy). Where tfjs would read past the values or
 * grow the shape array it builds, the node fails instead. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

enum { RT_FIRST_DIM_SIZE, RT_VALUE_ROWIDS, RT_ROW_LENGTHS, RT_ROW_SPLITS, RT_ROW_LIMITS, RT_ROW_STARTS };
#define RT_MAX_PARTS 8
#define RT_MAX_RANK (2 * SI_MAX_RANK)

typedef struct {
    opctx *o;
    int types[RT_MAX_PARTS], n_types, ragged_rank;
    const ival *parts[RT_MAX_PARTS];
    int n_parts;
} rtt;

static si_result rt_fail(const rtt *r, const char *msg)
{
    return ip_node_fail(r->o->in, r->o->node, SI_ERR_SHAPE, "%s", msg);
}

static const int32_t *rt_ints(const ival *v) { return (const int32_t *)v->b.data; }
static int64_t rt_len(const ival *v) { return core_shape_count(&v->b.shape); }

/* The partition between dimension d and d + 1 (tfjs's getRowPartitionTensor
 * and getRowPartitionTypeByDimension); NULL when there is none. */
static const ival *rt_part(const rtt *r, int d, int *type)
{
    int k = r->n_types && r->types[0] == RT_FIRST_DIM_SIZE ? d + 1 : d;
    if (k < 0 || k >= r->n_types || k >= r->n_parts)
        return NULL;
    *type = r->types[k];
    return r->parts[k];
}

static si_result rt_max_width(const rtt *r, int dim, int64_t *w)
{
    int type;
    const ival *p = rt_part(r, dim - 1, &type);
    if (!p)
        return rt_fail(r, "a row partition tensor is missing");
    const int32_t *v = rt_ints(p);
    int64_t n = rt_len(p);
    *w = 0;
    if (type == RT_ROW_SPLITS) {
        for (int64_t i = 0; i + 1 < n; i++)
            if ((int64_t)v[i + 1] - v[i] > *w)
                *w = (int64_t)v[i + 1] - v[i];
    } else if (type == RT_VALUE_ROWIDS) {
        if (n == 0)
            return SI_OK;
        int64_t first = 0;
        for (int64_t i = 1; i < n; i++)
            if (v[i] != v[first]) {
                if (i - first > *w)
                    *w = i - first;
                first = i;
            }
        if (n - first > *w)
            *w = n - first;
    } else {
        return rt_fail(r, "tfjs cannot handle this partition type (only FIRST_DIM_SIZE, "
                          "VALUE_ROWIDS, ROW_SPLITS)");
    }
    return SI_OK;
}

/* tfjs's calculateOutputSize: the shape input (a scalar -1 is an unknown
 * rank), checked against values' shape as combineRaggedTensorToTensorShapes
 * does, then the unknown outer and ragged dims from the partitions. */
static si_result rt_output_size(const rtt *r, const ival *shape, const ival *values,
                                const ival *dflt, int64_t first_dim, int64_t *os, int *rank)
{
    const core_shape *vs = &values->b.shape, *ds = &dflt->b.shape;
    if (ds->rank >= vs->rank)
        return rt_fail(r, "default_value's rank must be less than values' rank");
    for (int i = 0; i < ds->rank && i < vs->rank - 1; i++)
        if (ds->d[i] != 1 && ds->d[i] != vs->d[i + 1])
            return rt_fail(r, "default_value's shape does not match values' shape");
    int64_t n = rt_len(shape);
    const int32_t *sv = rt_ints(shape);
    *rank = 0;
    if (shape->b.shape.rank == 0) {
        if (n < 1 || sv[0] != -1)
            return rt_fail(r, "the only valid scalar shape is -1 (an unknown shape)");
    } else {
        if (n > RT_MAX_RANK)
            return rt_fail(r, "shape has too many dims");
        for (int64_t i = 0; i < n; i++) {
            if (sv[i] < -1)
                return rt_fail(r, "a dimension of shape is below -1");
            os[(*rank)++] = sv[i];
        }
    }
    if (r->ragged_rank + vs->rank != *rank)
        return rt_fail(r, "shape's rank is not the ragged rank plus values' rank");
    for (int i = 1; i < vs->rank; i++) {
        /* tfjs: outputShape[outputShape[len - valueRank + i]], a dim's value used as an index */
        int64_t at = os[*rank - vs->rank + i];
        if (at < 0)
            continue; /* a property of the array in tfjs, no dim */
        if (at >= *rank)
            return rt_fail(r, "tfjs's shape check writes past the output shape here (a tfjs "
                              "defect): give values' inner dims in shape");
        if (os[at] >= 0 && os[at] != vs->d[i])
            return rt_fail(r, "shape and values' shape are incompatible");
        if (os[at] < 0)
            os[at] = vs->d[i];
    }
    if (os[0] < 0)
        os[0] = first_dim;
    for (int i = 1; i <= r->ragged_rank; i++)
        if (os[i] < 0) {
            si_result st = rt_max_width(r, i, &os[i]);
            if (st != SI_OK)
                return st;
        }
    for (int i = 0; i < *rank; i++)
        if (os[i] < 0)
            return rt_fail(r, "an output dimension is unknown (-1): give it in shape");
    return SI_OK;
}

/* A growing int64 list of output indices (-1: dropped). */
typedef struct {
    int64_t *v, n, cap;
} rt_list;

static int rt_push(rt_list *l, int64_t x)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 64;
        int64_t *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = x;
    return 0;
}

/* One level down: tfjs's calculateOutputIndexRowSplit / ...ValueRowID. */
static si_result rt_level(const rtt *r, int dim, const rt_list *parent, int64_t mult,
                          int64_t size, rt_list *out)
{
    int type;
    const ival *p = rt_part(r, dim, &type);
    if (!p)
        return rt_fail(r, "a row partition tensor is missing");
    const int32_t *v = rt_ints(p);
    int64_t n = rt_len(p);
    out->n = 0;
    if (type == RT_ROW_SPLITS) {
        if (n - 1 > parent->n)
            return rt_fail(r, "row partition size is greater than output size");
        for (int64_t i = 0; i + 1 < n; i++) {
            int64_t len = (int64_t)v[i + 1] - v[i], real = len < size ? len : size;
            int64_t at = parent->v[i];
            if (at == -1)
                real = 0;
            for (int64_t j = 0; j < real; j++, at += mult)
                if (rt_push(out, at))
                    return ip_nomem(r->o->in);
            for (int64_t j = 0; j < len - real; j++)
                if (rt_push(out, -1))
                    return ip_nomem(r->o->in);
        }
        if (n > 0 && out->n != v[n - 1])
            return rt_fail(r, "invalid row split size");
        return SI_OK;
    }
    if (type != RT_VALUE_ROWIDS)
        return rt_fail(r, "tfjs cannot handle this partition type (only FIRST_DIM_SIZE, "
                          "VALUE_ROWIDS, ROW_SPLITS)");
    if (n == 0)
        return SI_OK;
    int64_t col = 0, row = v[0];
    if (row < 0 || row >= parent->n)
        return rt_fail(r, "a value_rowids entry is outside the rows");
    int64_t at = parent->v[row];
    if (rt_push(out, at))
        return ip_nomem(r->o->in);
    for (int64_t i = 1; i < n; i++) {
        if (v[i] == row) {
            if (at >= 0)
                at = ++col < size ? at + mult : -1;
        } else {
            col = 0;
            row = v[i];
            if (row < 0 || row >= parent->n)
                return rt_fail(r, "a value_rowids entry is outside the rows");
            at = parent->v[row];
        }
        if (rt_push(out, at))
            return ip_nomem(r->o->in);
    }
    return SI_OK;
}

/* JavaScript's ToInt32: what an Int32Array keeps of a number. */
static int32_t js_to_int32(double d)
{
    if (!isfinite(d))
        return 0;
    return (int32_t)(uint32_t)(int64_t)fmod(trunc(d), 4294967296.0);
}

/* JavaScript's fill of a typed array of the output's dtype with d. */
static void rt_fill(ival *out, int64_t a, int64_t b, double d)
{
    for (int64_t i = a; i < b; i++) {
        if (out->b.dtype == SI_FLOAT32)
            ((float *)out->b.data)[i] = (float)d;
        else
            ((int32_t *)out->b.data)[i] = js_to_int32(d);
    }
}

/* tfjs's setOutput: contiguous runs of values copied, gaps padded. */
static si_result rt_set_output(const rtt *r, const rt_list *idx, const ival *values,
                               const ival *dflt, ival *out, int64_t ves)
{
    int64_t out_n = core_shape_count(&out->b.shape), val_n = rt_len(values);
    int64_t dlen = rt_len(dflt);
    if (out_n == 0)
        return SI_OK;
    if (dlen != ves && dlen != 1) {
        /* tfjs broadcasts default_value to the element shape (and then writes
         * it nowhere); one that does not broadcast throws there */
        const core_shape *ds = &dflt->b.shape, *os = &out->b.shape;
        int el_rank = os->rank - (r->ragged_rank + 1);
        if (ds->rank > el_rank)
            return rt_fail(r, "default_value does not broadcast to the element shape");
        for (int i = 0; i < ds->rank; i++) {
            int64_t want = os->d[os->rank - ds->rank + i];
            if (ds->d[i] != want && ds->d[i] != 1)
                return rt_fail(r, "default_value does not broadcast to the element shape");
        }
    }
    double d0 = dlen ? ip_buf_num(&dflt->b, 0) : 0;
    int64_t src_start = 0, dst_start = 0, dst_end = 0;
    for (int64_t src_i = 0; src_i <= idx->n; src_i++) {
        int64_t dst_i = src_i < idx->n ? idx->v[src_i] : -1;
        if (dst_i == dst_end) {
            dst_end++;
            continue;
        }
        if (dst_start < dst_end) {
            int64_t nv = (dst_end - dst_start) * ves;
            if (src_start * ves + nv > val_n)
                return rt_fail(r, "the partitions point past the values (tfjs reads undefined there)");
            if (dst_start * ves + nv > out_n)
                return rt_fail(r, "the partitions point past the output");
            memcpy((char *)out->b.data + dst_start * ves * CORE_ELEM,
                   (const char *)values->b.data + src_start * ves * CORE_ELEM, (size_t)nv * CORE_ELEM);
        }
        if (src_i >= idx->n)
            dst_i = out_n / ves;
        if (dst_i > dst_end) {
            if (dst_i * ves > out_n)
                return rt_fail(r, "the partitions point past the output");
            if (dlen == 1)
                rt_fill(out, dst_end * ves, dst_i * ves, d0);
            dst_end = dst_i; /* more than one default element: zeros (tfjs fills a copy) */
        }
        if (dst_i < 0) {
            src_start = src_i + 1;
            dst_start = dst_end;
        } else {
            src_start = src_i;
            dst_start = dst_end;
            dst_end = dst_start + 1;
        }
    }
    return SI_OK;
}

static si_result rt_compute(rtt *r, const ival *shape, const ival *values, const ival *dflt)
{
    opctx *o = r->o;
    if (r->n_parts < 1 || rt_len(r->parts[0]) <= 0)
        return rt_fail(r, "invalid first partition input: it needs at least one element");
    if (r->n_types == 0)
        return rt_fail(r, "no row_partition_types given");
    int64_t first_dim;
    if (r->types[0] == RT_FIRST_DIM_SIZE)
        first_dim = rt_ints(r->parts[0])[0];
    else if (r->types[0] == RT_ROW_SPLITS && r->parts[0]->b.shape.rank == 1)
        first_dim = r->parts[0]->b.shape.d[0] - 1;
    else
        return rt_fail(r, "tfjs cannot handle this partition type in the first dimension");
    int64_t os[RT_MAX_RANK];
    int rank = 0;
    si_result st = rt_output_size(r, shape, values, dflt, first_dim, os, &rank);
    if (st != SI_OK)
        return st;
    if (rank > SI_MAX_RANK)
        return rt_fail(r, "the output has too many dims");
    core_shape osh = {.rank = rank};
    int64_t mult[RT_MAX_RANK], full = 1, ves = 1;
    for (int i = 0; i < rank; i++) {
        osh.d[i] = os[i];
        if (i > r->ragged_rank)
            ves *= os[i];
    }
    int64_t count;
    if (core_shape_count_checked(&osh, &count) != 0 || count > (int64_t)CK_MAX_INDEX_ELEMS)
        return rt_fail(r, "the output is too large");
    mult[r->ragged_rank] = 1;
    for (int i = r->ragged_rank - 1; i >= 0; i--)
        mult[i] = mult[i + 1] * os[i + 1];
    full = mult[0] * os[0];
    if (first_dim < 0 || first_dim > ((int64_t)1 << 28))
        return rt_fail(r, "the first dimension's size is out of range");
    ival *out = ip_val_new(values->b.dtype, &osh);
    if (!out)
        return ip_nomem(o->in);
    memset(out->b.data, 0, (size_t)count * CORE_ELEM);
    rt_list a = {0}, b = {0};
    if (full > 0) {
        for (int64_t i = 0; i < first_dim && st == SI_OK; i++)
            if (rt_push(&a, i < os[0] ? i * mult[0] : -1))
                st = ip_nomem(o->in);
        for (int i = 1; i <= r->ragged_rank && st == SI_OK; i++) {
            st = rt_level(r, i - 1, &a, mult[i], os[i], &b);
            rt_list t = a;
            a = b;
            b = t;
        }
        if (st == SI_OK)
            st = rt_set_output(r, &a, values, dflt, out, ves);
    }
    free(a.v);
    free(b.v);
    if (st != SI_OK) {
        ip_val_unref(out);
        return st;
    }
    return ip_set_out(o, 0, out);
}

/* RaggedTensorToTensor(shape, values, default_value, row_partition_tensors...;
 * row_partition_types). */
si_result ip_ragged_to_tensor(opctx *o)
{
    si_result st = ip_need_inputs(o, 4);
    if (st != SI_OK)
        return st;
    rtt r = {.o = o, .n_parts = o->n_data - 3};
    if (r.n_parts > RT_MAX_PARTS)
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "more than %d row partitions",
                            RT_MAX_PARTS);
    const ival *shape = o->data[0], *values = o->data[1], *dflt = o->data[2];
    if (shape->b.dtype != SI_INT32 || values->b.shape.rank < 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "needs an int32 shape and values of rank >= 1");
    for (int i = 0; i < r.n_parts; i++) {
        r.parts[i] = o->data[3 + i];
        if (r.parts[i]->b.dtype != SI_INT32 || r.parts[i]->b.shape.rank > 1)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "row partitions must be int32 scalars or vectors");
    }
    const io_attr *a = io_node_attr(o->n, "row_partition_types");
    static const char *const names[] = {"FIRST_DIM_SIZE", "VALUE_ROWIDS", "ROW_LENGTHS",
                                        "ROW_SPLITS",     "ROW_LIMITS",   "ROW_STARTS"};
    if (a && a->kind == IO_ATTR_LIST && a->list_kind == IO_ATTR_S)
        for (int i = 0; i < a->n && r.n_types < RT_MAX_PARTS; i++) {
            int t = -1;
            for (int k = 0; k < 6; k++)
                if (a->ls[i] && !strcmp(a->ls[i], names[k]))
                    t = k;
            if (t < 0)
                break; /* tfjs stops at the first name it does not know */
            r.types[r.n_types++] = t;
        }
    r.ragged_rank = r.n_types == 0 ? 0 : r.types[0] == RT_FIRST_DIM_SIZE ? r.n_types - 1 : r.n_types;
    return rt_compute(&r, shape, values, dflt);
}
