/* Selection ops: TopKV2 (sorted, as TensorFlow.js: larger value first, equal
 * values by lower index). */
#include <math.h>
#include <stdlib.h>
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

/* SparseToDense with constant arguments (nanodet's are), folded to a constant.
 * Indices out of range fail, as validate_indices asks. */
static si_result lower_sparse_to_dense(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs indices, shape, values and default");
    si_result st;
    const core_buf *idx = lc_value(c, 0, &st, err), *vals = NULL, *dflt = NULL;
    int64_t shape[SI_MAX_RANK];
    int rank = idx ? lc_value_ints(c, 1, shape, SI_MAX_RANK, err) : -1;
    if (st == SI_OK && idx && rank >= 0) {
        vals = lc_value(c, 2, &st, err);
        if (st == SI_OK)
            dflt = lc_value(c, 3, &st, err);
    }
    if (st != SI_OK || rank == -2)
        return err->status;
    if (!idx || rank < 0 || !vals || !dflt)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "arguments depend on the input");
    if (rank > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "rank %d", rank);
    core_shape os = {.rank = rank};
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative output dimension");
        os.d[i] = shape[i];
    }
    int64_t total = core_shape_count(&os);
    int64_t n = idx->shape.rank == 0 ? 1 : idx->shape.d[0];
    int64_t w = idx->shape.rank == 2 ? idx->shape.d[1] : 1;
    if (w != (rank ? rank : 1) && !(rank == 0 && n <= 1))
        return lc_fail(c, err, SI_ERR_SHAPE, "indices do not match the output rank");
    int64_t nv = core_shape_count(&vals->shape);
    if (nv != 1 && nv != n)
        return lc_fail(c, err, SI_ERR_SHAPE, "%lld values for %lld indices", (long long)nv,
                       (long long)n);
    si_dtype dt = vals->dtype;
    int32_t *data = malloc((size_t)(total ? total : 1) * CORE_ELEM);
    if (!data)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < total; i++)
        data[i] = ((const int32_t *)dflt->data)[0];
    int64_t st_[SI_MAX_RANK];
    core_strides(&os, st_);
    for (int64_t k = 0; k < n; k++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++) {
            int64_t v = idx->dtype == SI_FLOAT32 ? (int64_t)((const float *)idx->data)[k * w + d]
                                                 : ((const int32_t *)idx->data)[k * w + d];
            if (v < 0 || v >= os.d[d]) {
                free(data);
                return lc_fail(c, err, SI_ERR_SHAPE, "index %lld out of range", (long long)v);
            }
            off += v * st_[d];
        }
        data[off] = ((const int32_t *)vals->data)[nv == 1 ? 0 : k];
    }
    int t = lc_new_const(c, dt, &os, data);
    free(data);
    if (t < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, t);
    return SI_OK;
}

const core_op_def core_ops_select[] = {
    {"TopKV2", lower_topk}, {"SparseToDense", lower_sparse_to_dense}, {NULL, NULL}};
