/* The sparse and ragged ops in the host interpreter, as tfjs-backend-cpu runs
 * them (sparse*_impl.js, ragged*_impl.js): SparseFillEmptyRows, SparseReshape,
 * SparseSegmentSum, SparseSegmentMean, RaggedRange, RaggedGather. Their output shapes hang on the values of their inputs,
 * so they run where Where and NMS do. tfjs's errors (a row or index out of
 * range, segment ids that fall) are the node's errors here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

static int is_int(const ival *v) { return v->b.dtype == SI_INT32; }
static const int32_t *ints(const ival *v) { return (const int32_t *)v->b.data; }

/* SparseFillEmptyRows(indices [N, rank], values [N], dense_shape [rank],
 * default_value) → output_indices [M, rank], output_values [M],
 * empty_row_indicator bool [rows], reverse_index_map [N]: every empty row gets
 * one entry (its first column, default_value), rows in order. */
static si_result fill_empty_rows(opctx *o)
{
    si_result st = ip_need_inputs(o, 4);
    if (st != SI_OK)
        return st;
    const ival *ix = o->data[0], *vals = o->data[1], *dsh = o->data[2];
    if (!is_int(ix) || !is_int(dsh) || ix->b.shape.rank != 2 || vals->b.shape.rank != 1 ||
        dsh->b.shape.rank != 1 || vals->b.shape.d[0] != ix->b.shape.d[0] ||
        dsh->b.shape.d[0] != ix->b.shape.d[1] || ix->b.shape.d[1] < 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "needs int32 indices [N, rank], values [N] and dense_shape [rank]");
    double dflt;
    if ((st = ip_in_number(o, 3, &dflt)) != SI_OK)
        return st;
    int64_t n = ix->b.shape.d[0], rank = ix->b.shape.d[1], rows = ints(dsh)[0];
    const int32_t *id = ints(ix);
    if (rows < 0)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "dense_shape[0] is %lld", (long long)rows);
    if (rows == 0 && n != 0)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "%lld indices in a dense shape of 0 rows", (long long)n);
    int64_t *csr = calloc((size_t)rows + 1, sizeof *csr), *filled = calloc((size_t)rows + 1, sizeof *filled);
    if (!csr || !filled) {
        free(csr);
        free(filled);
        return ip_nomem(o->in);
    }
    int ordered = 1;
    int64_t last = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = id[i * rank];
        if (r < 0 || r >= rows) {
            free(csr);
            free(filled);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "indices(%lld, 0) is %lld, outside [0, %lld)", (long long)i,
                                (long long)r, (long long)rows);
        }
        csr[r]++;
        ordered = ordered && r >= last;
        last = r;
    }
    core_shape rs = {.rank = 1, .d = {rows}}, ns = {.rank = 1, .d = {n}};
    ival *empty = ip_val_new(SI_BOOL, &rs), *rev = ip_val_new(SI_INT32, &ns);
    int full = 1;
    for (int64_t r = 0; r < rows && empty; r++) {
        ((int32_t *)empty->b.data)[r] = csr[r] == 0; /* bool: 4 bytes inside */
        full = full && csr[r] != 0;
        csr[r] = csr[r] > 1 ? csr[r] : 1;
        if (r > 0)
            csr[r] += csr[r - 1];
    }
    int64_t m = full && ordered ? n : rows ? csr[rows - 1] : 0;
    core_shape is = {.rank = 2, .d = {m, rank}}, vs = {.rank = 1, .d = {m}};
    ival *oi = ip_val_new(SI_INT32, &is), *ov = ip_val_new(vals->b.dtype, &vs);
    if (!empty || !rev || !oi || !ov) {
        free(csr);
        free(filled);
        ip_val_unref(empty);
        ip_val_unref(rev);
        ip_val_unref(oi);
        ip_val_unref(ov);
        return ip_nomem(o->in);
    }
    int32_t *oid = oi->b.data;
    size_t vsz = CORE_ELEM; /* every dtype, bool too */
    if (full && ordered) {
        memcpy(oid, id, (size_t)(n * rank) * 4);
        memcpy(ov->b.data, vals->b.data, (size_t)n * vsz);
        for (int64_t i = 0; i < n; i++)
            ((int32_t *)rev->b.data)[i] = (int32_t)i;
    } else {
        memset(oid, 0, (size_t)(m * rank) * 4);
        for (int64_t i = 0; i < n; i++) {
            int64_t r = id[i * rank], at = (r ? csr[r - 1] : 0) + filled[r]++;
            memcpy(oid + at * rank, id + i * rank, (size_t)rank * 4);
            memcpy((char *)ov->b.data + at * vsz, (const char *)vals->b.data + i * vsz, vsz);
            ((int32_t *)rev->b.data)[i] = (int32_t)at;
        }
        for (int64_t r = 0; r < rows; r++) {
            if (filled[r])
                continue;
            int64_t at = r ? csr[r - 1] : 0;
            oid[at * rank] = (int32_t)r;
            if (ov->b.dtype == SI_FLOAT32)
                ((float *)ov->b.data)[at] = (float)dflt;
            else
                ((int32_t *)ov->b.data)[at] = ov->b.dtype == SI_INT32 ? (int32_t)dflt : dflt != 0;
        }
    }
    free(csr);
    free(filled);
    ip_set_out(o, 0, oi);
    ip_set_out(o, 1, ov);
    ip_set_out(o, 2, empty);
    return ip_set_out(o, 3, rev);
}

/* SparseReshape(input_indices [nnz, rank_in], input_shape, new_shape) →
 * output_indices [nnz, rank_out], output_shape (one -1 inferred). */
static si_result sparse_reshape(opctx *o)
{
    si_result st = ip_need_inputs(o, 3);
    if (st != SI_OK)
        return st;
    const ival *ix = o->data[0], *ish = o->data[1], *tsh = o->data[2];
    if (!is_int(ix) || !is_int(ish) || !is_int(tsh) || ix->b.shape.rank != 2 ||
        ish->b.shape.rank != 1 || tsh->b.shape.rank != 1 || ish->b.shape.d[0] != ix->b.shape.d[1] ||
        tsh->b.shape.d[0] > 64 || ish->b.shape.d[0] > 64)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "needs int32 input_indices [nnz, rank], input_shape [rank] and new_shape");
    int64_t nnz = ix->b.shape.d[0], rin = ix->b.shape.d[1], rout = tsh->b.shape.d[0];
    int64_t dense = 1, prod = 1, unknown = -1, osh[64], istr[64], ostr[64];
    for (int64_t d = 0; d < rin; d++)
        dense *= ints(ish)[d];
    for (int64_t d = 0; d < rout; d++) {
        int64_t v = ints(tsh)[d];
        if (v == -1) {
            if (unknown != -1)
                return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                    "only one output dimension may be -1, not both %lld and %lld",
                                    (long long)unknown, (long long)d);
            unknown = d;
            osh[d] = 1;
        } else if (v < 0) {
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "size %lld must be non-negative, not %lld",
                                (long long)d, (long long)v);
        } else {
            prod *= v;
            osh[d] = v;
        }
    }
    if (unknown != -1) {
        if (prod <= 0)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "reshape of an empty tensor with a -1 dimension");
        int64_t miss = dense / prod;
        if (prod * miss != dense)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "input of %lld elements is not a multiple of %lld", (long long)dense,
                                (long long)prod);
        osh[unknown] = miss;
    }
    int64_t osize = 1;
    for (int64_t d = 0; d < rout; d++)
        osize *= osh[d];
    if (osize != dense)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "input of %lld elements and an output of %lld", (long long)dense,
                            (long long)osize);
    for (int64_t d = rin - 1; d >= 0; d--)
        istr[d] = d == rin - 1 ? 1 : istr[d + 1] * ints(ish)[d + 1];
    for (int64_t d = rout - 1; d >= 0; d--)
        ostr[d] = d == rout - 1 ? 1 : ostr[d + 1] * osh[d + 1];
    core_shape is = {.rank = 2, .d = {nnz, rout}}, ss = {.rank = 1, .d = {rout}};
    ival *oi = ip_val_new(SI_INT32, &is), *os = ip_val_new(SI_INT32, &ss);
    if (!oi || !os) {
        ip_val_unref(oi);
        ip_val_unref(os);
        return ip_nomem(o->in);
    }
    for (int64_t i = 0; i < nnz; i++) {
        int64_t id = 0;
        for (int64_t j = 0; j < rin; j++)
            id += (int64_t)ints(ix)[i * rin + j] * istr[j];
        for (int64_t j = 0; j < rout; j++) {
            ((int32_t *)oi->b.data)[i * rout + j] = ostr[j] ? (int32_t)(id / ostr[j]) : 0;
            id = ostr[j] ? id % ostr[j] : id;
        }
    }
    for (int64_t d = 0; d < rout; d++)
        ((int32_t *)os->b.data)[d] = (int32_t)osh[d];
    ip_set_out(o, 0, oi);
    return ip_set_out(o, 1, os);
}

/* SparseSegmentSum / SparseSegmentMean(data, indices, segment_ids): rows of
 * data gathered by indices, summed (in the output's float32 or int32, one
 * add at a time, as tfjs's typed array) per sorted segment id; the mean
 * divides each segment once; rows no segment names are 0. */
static si_result segment_reduce(opctx *o)
{
    si_result st = ip_need_inputs(o, 3);
    if (st != SI_OK)
        return st;
    int mean = !strcmp(o->n->op, "SparseSegmentMean");
    const ival *x = o->data[0], *ix = o->data[1], *seg = o->data[2];
    if (x->b.dtype == SI_BOOL || !is_int(ix) || !is_int(seg) || x->b.shape.rank < 1 ||
        ix->b.shape.rank != 1 || seg->b.shape.rank != 1 || ix->b.shape.d[0] != seg->b.shape.d[0])
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "needs data of rank >= 1, int32 indices [N] and segment_ids [N]");
    if (mean && x->b.dtype != SI_FLOAT32)
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "the mean of int32 data");
    int64_t ni = ix->b.shape.d[0], rows_in = x->b.shape.d[0];
    int64_t cols = rows_in ? core_shape_count(&x->b.shape) / rows_in : 0;
    const int32_t *id = ints(ix), *sg = ints(seg);
    int64_t out_rows = ni > 0 ? (int64_t)sg[ni - 1] + 1 : 0;
    if (out_rows < 0)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "segment ids must be >= 0");
    core_shape os = x->b.shape;
    os.d[0] = out_rows;
    ival *ov = ip_val_new(x->b.dtype, &os);
    if (!ov)
        return ip_nomem(o->in);
    int f = x->b.dtype == SI_FLOAT32;
    float *of = ov->b.data;
    int32_t *oi = ov->b.data;
    memset(ov->b.data, 0, (size_t)(out_rows * cols) * 4);
    for (int64_t start = 0, end; start < ni; start = end) {
        int64_t s = sg[start];
        for (end = start + 1; end < ni && sg[end] == s; end++)
            ;
        if (end < ni && sg[end] < s) {
            ip_val_unref(ov);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "segment ids are not increasing");
        }
        if (s < 0 || s >= out_rows) {
            ip_val_unref(ov);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "segment id %lld is outside [0, %lld)",
                                (long long)s, (long long)out_rows);
        }
        for (int64_t i = start; i < end; i++) {
            if (id[i] < 0 || id[i] >= rows_in) {
                ip_val_unref(ov);
                return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                    "indices[%lld] = %d is outside [0, %lld)", (long long)i, id[i],
                                    (long long)rows_in);
            }
            for (int64_t j = 0; j < cols; j++) {
                if (f)
                    of[s * cols + j] += ((const float *)x->b.data)[id[i] * cols + j];
                else
                    oi[s * cols + j] = (int32_t)((uint32_t)oi[s * cols + j] +
                                                 (uint32_t)ints(x)[id[i] * cols + j]);
            }
        }
        if (mean)
            for (int64_t j = 0; j < cols; j++)
                of[s * cols + j] /= (float)(end - start);
    }
    return ip_set_out(o, 0, ov);
}

/* RaggedRange(starts, limits, deltas), each a scalar (broadcast) or a vector
 * of the rows: rt_nested_splits int32 [rows + 1] and rt_dense_values, each
 * row start, start + delta, ... below limit; the running value is float64
 * (a JavaScript number), stored float32 at each element. */
static si_result ragged_range(opctx *o)
{
    si_result st = ip_need_inputs(o, 3);
    if (st != SI_OK)
        return st;
    const ival *v[3] = {o->data[0], o->data[1], o->data[2]};
    int64_t rows = -1;
    for (int i = 0; i < 3; i++) {
        if (v[i]->b.shape.rank > 1 || v[i]->b.dtype == SI_BOOL)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "starts, limits and deltas must be numeric scalars or vectors");
        if (v[i]->b.shape.rank == 1) {
            if (rows >= 0 && rows != v[i]->b.shape.d[0])
                return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                    "starts, limits, and deltas must have the same shape");
            rows = v[i]->b.shape.d[0];
        }
    }
    if (rows < 0)
        rows = 1;
    core_shape ss = {.rank = 1, .d = {rows + 1}};
    ival *splits = ip_val_new(SI_INT32, &ss);
    if (!splits)
        return ip_nomem(o->in);
    int32_t *sp = splits->b.data;
    sp[0] = 0;
    for (int64_t r = 0; r < rows; r++) {
        double x[3];
        for (int i = 0; i < 3; i++)
            x[i] = ip_buf_num(&v[i]->b, v[i]->b.shape.rank ? r : 0);
        double start = x[0], limit = x[1], delta = x[2], size = 0;
        if (delta == 0) {
            ip_val_unref(splits);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "requires delta != 0");
        }
        if (!((delta > 0 && limit < start) || (delta < 0 && limit > start)))
            size = ceil(fabs((limit - start) / delta));
        if (!(size <= 2147483647.0) || (double)sp[r] + size > 268435456.0) {
            ip_val_unref(splits);
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "row %lld: a range of %g values",
                                (long long)r, size);
        }
        sp[r + 1] = sp[r] + (int32_t)size;
    }
    core_shape vs = {.rank = 1, .d = {sp[rows]}};
    ival *vals = ip_val_new(v[0]->b.dtype, &vs);
    if (!vals) {
        ip_val_unref(splits);
        return ip_nomem(o->in);
    }
    int64_t k = 0;
    for (int64_t r = 0; r < rows; r++) {
        double value = ip_buf_num(&v[0]->b, v[0]->b.shape.rank ? r : 0);
        double delta = ip_buf_num(&v[2]->b, v[2]->b.shape.rank ? r : 0);
        for (int32_t i = sp[r]; i < sp[r + 1]; i++, value += delta, k++) {
            if (vals->b.dtype == SI_FLOAT32)
                ((float *)vals->b.data)[k] = (float)value;
            else
                ((int32_t *)vals->b.data)[k] = (int32_t)value;
        }
    }
    ip_set_out(o, 0, splits);
    return ip_set_out(o, 1, vals);
}

/* A growing int32 list (RaggedGather's output splits). */
typedef struct {
    int32_t *v;
    int64_t n, cap;
} ilist;

static int il_push(ilist *l, int64_t x)
{
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 16;
        int32_t *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (int32_t)x;
    return 0;
}

#define RG_MAX_SPLITS 8

/* RaggedGather(params_nested_splits..., params_dense_values, indices), as
 * tfjs's raggedGatherImpl: the outer dims of indices become uniform splits,
 * each index's rows are followed down the params' splits (shifted to where
 * the output is), and the dense rows they end on are copied in order.
 * Outputs: indices.rank - 1 + len(splits) splits, then the dense values. */
static si_result ragged_gather(opctx *o)
{
    si_result st = ip_need_inputs(o, 3);
    if (st != SI_OK)
        return st;
    int ns = o->n_data - 2;
    const ival *dv = o->data[ns], *ix = o->data[ns + 1];
    int nout = ix->b.shape.rank - 1 + ns;
    if (ns > RG_MAX_SPLITS || ix->b.shape.rank < 1 || nout < 1 || nout > RG_MAX_SPLITS ||
        !is_int(ix) || dv->b.shape.rank < 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "needs 1 to %d int32 splits, dense values of rank >= 1 and int32 indices",
                            RG_MAX_SPLITS);
    int64_t n_dense = dv->b.shape.d[0];
    for (int d = 0; d < ns; d++) {
        const ival *sp = o->data[d];
        int64_t len = sp->b.shape.rank == 1 ? sp->b.shape.d[0] : 0;
        int64_t last = d == ns - 1 ? n_dense : o->data[d + 1]->b.shape.d[0];
        if (!is_int(sp) || sp->b.shape.rank != 1 || len == 0)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "ragged splits may not be empty");
        if (ints(sp)[0] < 0)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "ragged splits must be non-negative");
        if (ints(sp)[len - 1] > last)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "ragged splits must not point past values");
        for (int64_t i = 1; i < len; i++)
            if (ints(sp)[i - 1] > ints(sp)[i])
                return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                    "ragged splits must be sorted in ascending order");
    }
    int64_t n_params = o->data[0]->b.shape.d[0] - 1, n_ix = core_shape_count(&ix->b.shape);
    for (int64_t i = 0; i < n_ix; i++)
        if (ints(ix)[i] < 0 || ints(ix)[i] >= n_params)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "indices[%lld] = %d is not in [0, %lld)",
                                (long long)i, ints(ix)[i], (long long)n_params);
    ilist out[RG_MAX_SPLITS] = {{0}}, slices = {0};
    int bad = 0;
    for (int d = 0; d < nout; d++)
        bad |= il_push(&out[d], 0);
    int64_t nrows = 1, n_values = 0;
    for (int d = 0; d < ix->b.shape.rank - 1 && !bad; d++) {
        nrows *= ix->b.shape.d[d];
        for (int64_t i = 1; i < nrows + 1 && !bad; i++)
            bad |= il_push(&out[d], i * ix->b.shape.d[d + 1]);
    }
    for (int64_t i = 0; i < n_ix && !bad; i++) {
        int64_t start = ints(ix)[i], limit = start + 1;
        for (int d = 0; d < ns && !bad; d++) {
            const int32_t *sp = ints(o->data[d]);
            int od = d + ix->b.shape.rank - 1;
            int64_t delta = out[od].v[out[od].n - 1] - sp[start];
            for (int64_t j = start; j < limit && !bad; j++)
                bad |= il_push(&out[od], sp[j + 1] + delta);
            start = sp[start];
            limit = sp[limit];
        }
        if (limit != start && !bad) {
            bad |= il_push(&slices, start) | il_push(&slices, limit);
            n_values += limit - start;
        }
    }
    int64_t row = n_dense ? core_shape_count(&dv->b.shape) / n_dense : 0;
    core_shape vs = dv->b.shape;
    vs.d[0] = n_values;
    ival *vals = bad ? NULL : ip_val_new(dv->b.dtype, &vs);
    if (vals) {
        int64_t at = 0;
        for (int64_t k = 0; k < slices.n; k += 2)
            for (int64_t r = slices.v[k]; r < slices.v[k + 1]; r++, at++)
                memcpy((char *)vals->b.data + at * row * CORE_ELEM,
                       (const char *)dv->b.data + r * row * CORE_ELEM, (size_t)row * CORE_ELEM);
    }
    for (int d = 0; d < nout && vals; d++) {
        core_shape ss = {.rank = 1, .d = {out[d].n}};
        ival *sv = ip_val_new(SI_INT32, &ss);
        if (sv)
            memcpy(sv->b.data, out[d].v, (size_t)out[d].n * 4);
        if ((st = ip_set_out(o, d, sv)) != SI_OK)
            bad = 1;
    }
    for (int d = 0; d < RG_MAX_SPLITS; d++)
        free(out[d].v);
    free(slices.v);
    if (!vals || bad) {
        ip_val_unref(vals);
        return st != SI_OK ? st : ip_nomem(o->in);
    }
    return ip_set_out(o, nout, vals);
}

si_result ip_sparse(opctx *o)
{
    const char *op = o->n->op;
    if (!strcmp(op, "RaggedRange"))
        return ragged_range(o);
    if (!strcmp(op, "RaggedGather"))
        return ragged_gather(o);
    if (!strcmp(op, "SparseFillEmptyRows"))
        return fill_empty_rows(o);
    if (!strcmp(op, "SparseReshape"))
        return sparse_reshape(o);
    return segment_reduce(o);
}
