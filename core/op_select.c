/* Selection ops: TopKV2 (sorted, as TensorFlow.js: larger value first, equal
 * values by lower index). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"

static double val(const core_buf *b, int64_t i)
{
    return b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[i]
                                  : (double)((const int32_t *)b->data)[i];
}

/* (value, index) pairs in TensorFlow.js's order: larger value first, then
 * lower index. Rows are scanned once, keeping the k best in a sorted array. */
static int before(double va, int64_t ia, double vb, int64_t ib)
{
    return va > vb || (va == vb && ia < ib);
}

void ck_host_topk(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_topk_p *p = &s->u.topk;
    int64_t k = p->k;
    double *bv = malloc((size_t)(k ? k : 1) * sizeof *bv);
    int64_t *bi = malloc((size_t)(k ? k : 1) * sizeof *bi);
    if (!bv || !bi) {
        free(bv);
        free(bi);
        return;
    }
    for (int64_t r = 0; r < p->outer; r++) {
        int64_t base = r * p->n, have = 0;
        for (int64_t i = 0; i < p->n && k > 0; i++) {
            double v = val(ins[0], base + i);
            if (have == k && !before(v, i, bv[k - 1], bi[k - 1]))
                continue;
            int64_t pos = have < k ? have++ : k - 1;
            while (pos > 0 && before(v, i, bv[pos - 1], bi[pos - 1])) {
                bv[pos] = bv[pos - 1];
                bi[pos] = bi[pos - 1];
                pos--;
            }
            bv[pos] = v;
            bi[pos] = i;
        }
        for (int64_t j = 0; j < k; j++) {
            int64_t o = r * k + j;
            if (p->want_indices)
                ((int32_t *)out->data)[o] = (int32_t)bi[j];
            else if (out->dtype == SI_FLOAT32)
                ((float *)out->data)[o] = ((const float *)ins[0]->data)[base + bi[j]];
            else
                ((int32_t *)out->data)[o] = ((const int32_t *)ins[0]->data)[base + bi[j]];
        }
    }
    free(bv);
    free(bi);
}

static si_result lower_topk(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x and k");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    int64_t k;
    int nk = lc_value_ints(c, 1, &k, 1, err);
    if (nk == -2)
        return err->status;
    if (nk != 1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "k argument depends on the input");
    if (x->shape.rank < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "input must have rank >= 1");
    int64_t n = x->shape.d[x->shape.rank - 1];
    if (k < 0 || k > n)
        return lc_fail(c, err, SI_ERR_SHAPE, "k = %lld outside [0, %lld]", (long long)k,
                       (long long)n);
    if (!lc_attr_bool(c, "sorted", 1))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "unsorted TopK (its order is tfjs's select order)");
    core_shape os = x->shape;
    os.d[os.rank - 1] = k;
    int64_t outer = n ? core_shape_count(&x->shape) / n : 0;
    for (int want = 0; want < 2; want++) {
        ck_step s = {.kind = CK_TOPK, .n_in = 1, .in = {lc_in(c, 0)}};
        s.u.topk = (ck_topk_p){.outer = (int32_t)outer, .n = (int32_t)n, .k = (int32_t)k,
                               .want_indices = want};
        s.out = lc_new_tensor(c, want ? SI_INT32 : x->dtype, &os);
        if (s.out < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_emit(c, &s);
        lc_set_output(c, want, s.out);
    }
    return SI_OK;
}

/* SparseToDense(indices, output_shape, values, default) as tfjs runs it
 * (tfjs-core's validateInput, then scatterImpl without summing: a repeated
 * index keeps its last value, an index is checked by its flat offset only, a
 * default of another dtype is cast to the values'). The output shape must be
 * constant; all-constant arguments fold here; else the default is broadcast
 * and the values scattered over it (CK_COPY, CK_SCATTER). Known indices out of
 * range fail, as in tfjs; indices from the input that are skip the row. */
static si_result lower_sparse_to_dense(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs indices, shape, values and default");
    int64_t shape[SI_MAX_RANK + 1];
    int rank = lc_value_ints(c, 1, shape, SI_MAX_RANK + 1, err);
    if (rank == -2)
        return err->status;
    if (rank < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "output shape depends on the input");
    if (rank > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "rank %d", rank);
    const core_tensor *it = lc_tensor(c, lc_in(c, 0)), *vt = lc_tensor(c, lc_in(c, 2)),
                      *dt_ = lc_tensor(c, lc_in(c, 3));
    if (it->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices must be int32");
    if (it->shape.rank > 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices of rank %d (a scalar, vector or matrix)",
                       it->shape.rank);
    int64_t n = it->shape.rank > 0 ? it->shape.d[0] : 1;
    int64_t w = it->shape.rank > 1 ? it->shape.d[1] : 1;
    if (rank != w)
        return lc_fail(c, err, SI_ERR_SHAPE, "output shape of %d dims for indices of depth %lld",
                       rank, (long long)w);
    int64_t nv = core_shape_count(&vt->shape);
    if (!(vt->shape.rank == 0 || (vt->shape.rank == 1 && nv == n)))
        return lc_fail(c, err, SI_ERR_SHAPE, "%lld values for %lld indices (a scalar or one each)",
                       (long long)nv, (long long)n);
    if (core_shape_count(&dt_->shape) < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "the default value is empty");
    core_shape os = {.rank = rank};
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative output dimension");
        os.d[i] = shape[i];
    }
    int64_t total = core_shape_count(&os);
    if (total > (int64_t)CK_MAX_INDEX_ELEMS || n * w > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "too many elements");
    si_dtype dt = vt->dtype;
    int64_t st_[SI_MAX_RANK];
    core_strides(&os, st_);
    si_result st;
    const core_buf *idx = lc_value(c, 0, &st, err), *vals = NULL, *dflt = NULL;
    if (st == SI_OK)
        vals = lc_value(c, 2, &st, err);
    if (st == SI_OK)
        dflt = lc_value(c, 3, &st, err);
    if (st != SI_OK)
        return st;
    /* the default, cast to the values' dtype (tfjs's converter casts it) */
    int32_t d0 = 0;
    if (dflt) {
        int32_t raw = ((const int32_t *)dflt->data)[0];
        float f;
        memcpy(&f, &raw, sizeof f);
        if (dflt->dtype == dt)
            d0 = raw;
        else if (dt == SI_FLOAT32) {
            f = (float)raw;
            memcpy(&d0, &f, sizeof d0);
        } else if (dt == SI_BOOL)
            d0 = dflt->dtype == SI_FLOAT32 ? f != 0 : raw != 0;
        else
            d0 = dflt->dtype == SI_FLOAT32 ? (int32_t)f : raw;
    } else if (dt_->dtype != dt) {
        return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                       "a default value of another dtype than the values, from the input");
    }
    /* known indices: tfjs throws for a row whose flat offset is outside */
    for (int64_t k = 0; idx && k < n && total > 0; k++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++)
            off += (int64_t)((const int32_t *)idx->data)[k * w + d] * st_[d];
        if (off < 0 || off >= total)
            return lc_fail(c, err, SI_ERR_SHAPE, "index row %lld (flat %lld) is outside the "
                           "output's %lld elements", (long long)k, (long long)off, (long long)total);
    }
    if (idx && vals && dflt) {
        int32_t *data = malloc((size_t)(total ? total : 1) * CORE_ELEM);
        if (!data)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < total; i++)
            data[i] = d0;
        for (int64_t k = 0; k < n && total > 0; k++) {
            int64_t off = 0;
            for (int d = 0; d < rank; d++)
                off += (int64_t)((const int32_t *)idx->data)[k * w + d] * st_[d];
            data[off] = ((const int32_t *)vals->data)[nv == 1 && vt->shape.rank == 0 ? 0 : k];
        }
        int t = lc_new_const(c, dt, &os, data);
        free(data);
        if (t < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    int base = lc_in(c, 3);
    if (dflt && dflt->dtype != dt && (base = lc_new_const(c, dt, &(core_shape){.rank = 0}, &d0)) < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    int filled = lc_new_tensor(c, dt, &os);
    if (filled < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    if (total == 0) {
        lc_set_output(c, 0, filled);
        return SI_OK;
    }
    ck_step cp = {.kind = CK_COPY, .n_in = 1, .in = {base}, .out = filled};
    cp.u.copy.rank = 1;
    cp.u.copy.dim[0] = (int32_t)total;
    cp.u.copy.in_stride[0] = 0;
    cp.u.copy.out_stride[0] = 1;
    lc_emit(c, &cp);
    ck_scatter_p p = {.slice_rank = rank, .slice_size = 1, .num_updates = (int32_t)n,
                      .n_slices = (int32_t)total, .sum = 0, .scalar_update = vt->shape.rank == 0};
    for (int d = 0; d < rank; d++)
        p.strides[d] = (int32_t)st_[d];
    ck_step s = {.kind = CK_SCATTER, .n_in = 3, .in = {lc_in(c, 0), lc_in(c, 2), filled}};
    s.u.scatter = p;
    s.out = lc_new_tensor(c, dt, &os);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

const core_op_def core_ops_select[] = {
    {"TopKV2", lower_topk}, {"SparseToDense", lower_sparse_to_dense}, {NULL, NULL}};
