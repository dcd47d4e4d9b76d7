/* Scatter ops: ScatterNd and TensorScatterUpdate, as tfjs-backend-cpu's
 * scatterImpl (Scatter_impl.js) with backend_util.calculateShapes; and the
 * sorted searches LowerBound and UpperBound (SearchSorted_impl.js); Bincount
 * and DenseBincount (Bincount_impl.js). */
#include <string.h>
#include "ops.h"

void ck_host_scatter(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_scatter_p *p = &s->u.scatter;
    int64_t total = (int64_t)p->n_slices * p->slice_size;
    if (p->sum)
        memset(out->data, 0, (size_t)total * CORE_ELEM);
    else
        memcpy(out->data, ins[2]->data, (size_t)total * CORE_ELEM);
    const int32_t *idx = ins[0]->data;
    for (int64_t i = 0; i < p->num_updates; i++) {
        int64_t flat = 0;
        for (int j = 0; j < p->slice_rank; j++)
            flat += (int64_t)idx[i * p->slice_rank + j] * p->strides[j];
        if (flat < 0 || flat >= p->n_slices)
            continue; /* tfjs throws "Invalid indices" */
        for (int64_t k = 0; k < p->slice_size; k++) {
            int64_t o = flat * p->slice_size + k, u = p->scalar_update ? 0 : i * p->slice_size + k;
            if (out->dtype == SI_FLOAT32) {
                float *d = out->data;
                const float *v = ins[1]->data;
                d[o] = p->sum ? d[o] + v[u] : v[u];
            } else {
                /* Int32Array: the sum wraps */
                int32_t *d = out->data;
                const int32_t *v = ins[1]->data;
                d[o] = p->sum ? (int32_t)((uint32_t)d[o] + (uint32_t)v[u]) : v[u];
            }
        }
    }
}

/* ScatterNd(indices, updates, shape) with a constant shape, and
 * TensorScatterUpdate(tensor, indices, updates). */
static si_result lower_scatter(lower_ctx *c, si_error *err)
{
    int update = !strcmp(lc_node(c)->op, "TensorScatterUpdate");
    if (lc_n_inputs(c) < 3)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs 3 inputs");
    int ii = update ? 1 : 0, iu = update ? 2 : 1;
    const core_tensor *ind = lc_tensor(c, lc_in(c, ii)), *upd = lc_tensor(c, lc_in(c, iu));
    core_shape os;
    if (update) {
        const core_tensor *t = lc_tensor(c, lc_in(c, 0));
        os = t->shape;
        if (t->dtype != upd->dtype)
            return lc_fail(c, err, SI_ERR_SHAPE, "tensor and updates differ in dtype");
    } else {
        int64_t d[SI_MAX_RANK + 1];
        int r = lc_value_ints(c, 2, d, SI_MAX_RANK + 1, err);
        if (r == -2)
            return err->status;
        if (r < 0)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "shape depends on the input");
        if (r > SI_MAX_RANK)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "rank %d", r);
        os.rank = r;
        for (int i = 0; i < r; i++) {
            if (d[i] < 0)
                return lc_fail(c, err, SI_ERR_SHAPE, "negative output dimension");
            os.d[i] = d[i];
        }
    }
    if (ind->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices must be int32");
    int ir = ind->shape.rank;
    int64_t slice_rank = ir > 1 ? ind->shape.d[ir - 1] : 1;
    if (slice_rank > os.rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "index depth %lld past the output rank %d",
                       (long long)slice_rank, os.rank);
    int64_t slice_size = 1, total = core_shape_count(&os);
    for (int i = (int)slice_rank; i < os.rank; i++)
        slice_size *= os.d[i];
    int64_t num_updates = core_shape_count(&ind->shape) / (slice_rank < 1 ? 1 : slice_rank);
    int64_t nu = core_shape_count(&upd->shape);
    int scalar = update && upd->shape.rank == 0;
    if (!scalar && nu != num_updates * slice_size)
        return lc_fail(c, err, SI_ERR_SHAPE, "%lld updates for %lld slices of %lld",
                       (long long)nu, (long long)num_updates, (long long)slice_size);
    if (total > (int64_t)CK_MAX_INDEX_ELEMS ||
        core_shape_count(&ind->shape) > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "too many elements");
    ck_scatter_p p = {.slice_rank = (int32_t)slice_rank, .slice_size = (int32_t)slice_size,
                      .num_updates = (int32_t)num_updates,
                      .n_slices = (int32_t)(slice_size ? total / slice_size : 0),
                      .sum = !update, .scalar_update = scalar};
    /* strides of shape[:slice_rank], row-major */
    for (int64_t j = slice_rank - 1, st = 1; j >= 0; j--) {
        p.strides[j] = (int32_t)st;
        st *= os.d[j];
    }
    ck_step s = {.kind = CK_SCATTER, .n_in = update ? 3 : 2,
                 .in = {lc_in(c, ii), lc_in(c, iu), update ? lc_in(c, 0) : -1}};
    s.u.scatter = p;
    s.out = lc_new_tensor(c, upd->dtype, &os);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

static double num(const core_buf *b, int64_t i)
{
    return b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[i]
                                  : (double)((const int32_t *)b->data)[i];
}

void ck_host_search(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_search_p *p = &s->u.search;
    int32_t *o = out->data;
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t i = 0; i < p->nv; i++) {
            double v = num(ins[1], b * p->nv + i);
            int64_t lo = 0, hi = p->n;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                double a = num(ins[0], b * p->n + mid);
                if (p->upper ? a <= v : a < v)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            o[b * p->nv + i] = (int32_t)hi;
        }
}

/* tfjs searchSorted reshapes both to 2-D ([-1, last dim]) and gives the
 * values' 2-D shape: [batch, nv], whatever their rank. */
static si_result lower_search(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs sorted_inputs and values");
    const core_tensor *a = lc_tensor(c, lc_in(c, 0)), *v = lc_tensor(c, lc_in(c, 1));
    if (a->shape.rank < 1 || v->shape.rank < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "inputs must have rank >= 1");
    if (a->dtype != v->dtype)
        return lc_fail(c, err, SI_ERR_SHAPE, "sorted_inputs and values differ in dtype");
    int64_t n = a->shape.d[a->shape.rank - 1], nv = v->shape.d[v->shape.rank - 1];
    if (n == 0 || nv == 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "an empty last dimension (tfjs cannot reshape it)");
    int64_t batch = core_shape_count(&a->shape) / n;
    if (core_shape_count(&v->shape) / nv != batch)
        return lc_fail(c, err, SI_ERR_SHAPE,
                       "leading dimensions of sorted_inputs and values differ");
    if (batch * n > (int64_t)CK_MAX_INDEX_ELEMS || batch * nv > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "too many elements");
    core_shape os = {.rank = 2, .d = {batch, nv}};
    ck_step s = {.kind = CK_SEARCH, .n_in = 2, .in = {lc_in(c, 0), lc_in(c, 1)}};
    s.u.search = (ck_search_p){.batch = (int32_t)batch, .n = (int32_t)n, .nv = (int32_t)nv,
                               .upper = !strcmp(lc_node(c)->op, "UpperBound")};
    s.out = lc_new_tensor(c, SI_INT32, &os);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

void ck_host_bincount(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_bincount_p *p = &s->u.bincount;
    memset(out->data, 0, (size_t)p->rows * (size_t)p->size * CORE_ELEM);
    const int32_t *x = ins[0]->data;
    for (int64_t i = 0; i < p->rows; i++)
        for (int64_t j = 0; j < p->cols; j++) {
            int64_t e = i * p->cols + j, v = x[e];
            if (v < 0 || v >= p->size)
                continue; /* tfjs throws on a negative value */
            int64_t o = i * p->size + v;
            if (out->dtype == SI_FLOAT32) {
                float *d = out->data;
                float w = p->weighted ? ((const float *)ins[1]->data)[e] : 1.0f;
                d[o] = p->binary ? 1.0f : d[o] + w;
            } else {
                int32_t *d = out->data;
                uint32_t w = p->weighted ? (uint32_t)((const int32_t *)ins[1]->data)[e] : 1u;
                d[o] = p->binary ? 1 : (int32_t)((uint32_t)d[o] + w);
            }
        }
}

/* Bincount(arr, size, weights) and DenseBincount(input, size, weights,
 * binary_output): size must be constant; the output has weights' dtype. */
static si_result lower_bincount(lower_ctx *c, si_error *err)
{
    int dense = !strcmp(lc_node(c)->op, "DenseBincount");
    if (lc_n_inputs(c) < 3)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x, size and weights");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0)), *w = lc_tensor(c, lc_in(c, 2));
    int64_t size;
    int ns = lc_value_ints(c, 1, &size, 1, err);
    if (ns == -2)
        return err->status;
    if (ns != 1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "size depends on the input");
    if (size < 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "size %lld is negative", (long long)size);
    if (x->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "x must be int32");
    int rank = x->shape.rank;
    if (rank != 1 && !(dense && rank == 2))
        return lc_fail(c, err, SI_ERR_SHAPE, "x of rank %d", rank);
    int64_t nx = core_shape_count(&x->shape), nw = core_shape_count(&w->shape);
    if (nw != 0 && nw != nx)
        return lc_fail(c, err, SI_ERR_SHAPE, "%lld weights for %lld values", (long long)nw,
                       (long long)nx);
    int64_t rows = rank == 2 ? x->shape.d[0] : 1, cols = x->shape.d[rank - 1];
    if (rows * size > (int64_t)CK_MAX_INDEX_ELEMS || nx > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "too many elements");
    core_shape os = rank == 2 ? (core_shape){.rank = 2, .d = {rows, size}}
                              : (core_shape){.rank = 1, .d = {size}};
    ck_step s = {.kind = CK_BINCOUNT, .n_in = nw ? 2 : 1,
                 .in = {lc_in(c, 0), nw ? lc_in(c, 2) : -1}};
    int binary = dense && rank == 2 && lc_attr_bool(c, "binary_output", 0);
    s.u.bincount = (ck_bincount_p){.rows = (int32_t)rows, .cols = (int32_t)cols,
                                   .size = (int32_t)size, .weighted = nw != 0, .binary = binary};
    s.out = lc_new_tensor(c, w->dtype, &os);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

const core_op_def core_ops_scatter[] = {
    {"ScatterNd", lower_scatter}, {"TensorScatterUpdate", lower_scatter},
    {"LowerBound", lower_search}, {"UpperBound", lower_search},
    {"Bincount", lower_bincount}, {"DenseBincount", lower_bincount}, {NULL, NULL}};
