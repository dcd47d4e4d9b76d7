/* Shape ops that take part of a tensor: Slice, StridedSlice, Split, SplitV,
 * Unpack (strided copies or aliases), and Gather/GatherNd with their host
 * references. Semantics follow TensorFlow.js's CPU kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "op_shape.h"

int core_emit_binary(lower_ctx *c, int op, int a, int b, si_error *err, int *out_t);

/* ---- host references ---- */

static double index_at(const core_buf *b, int64_t i)
{
    if (b->dtype == SI_FLOAT32)
        return trunc((double)((const float *)b->data)[i]);
    return (double)((const int32_t *)b->data)[i];
}

void ck_host_gather(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_gather_p *p = &s->u.gather;
    const int32_t *x = ins[0]->data;
    int32_t *y = out->data;
    int64_t o = 0;
    for (int64_t a = 0; a < p->outer; a++)
        for (int64_t j = 0; j < p->k; j++) {
            double idx = index_at(ins[1], j);
            int ok = idx >= 0 && idx < p->n;
            const int32_t *src = x + (a * p->n + (ok ? (int64_t)idx : 0)) * p->inner;
            for (int64_t i = 0; i < p->inner; i++)
                y[o++] = ok ? src[i] : 0;
        }
}

void ck_host_gathernd(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_gathernd_p *p = &s->u.gathernd;
    const int32_t *x = ins[0]->data;
    int32_t *y = out->data;
    double total = 1;
    for (int j = 0; j < p->d; j++)
        total *= p->pdim[j];
    for (int64_t r = 0; r < p->k; r++) {
        /* tfjs checks only the flattened index, in double arithmetic */
        double flat = 0;
        for (int j = 0; j < p->d; j++)
            flat = flat * p->pdim[j] + index_at(ins[1], r * p->d + j);
        int ok = flat >= 0 && flat < total;
        for (int64_t i = 0; i < p->slice; i++)
            y[r * p->slice + i] = ok ? x[(int64_t)flat * p->slice + i] : 0;
    }
}

/* ---- slices ---- */

si_result sh_lower_slice(lower_ctx *c, si_error *err)
{
    int x, nb, ns;
    int64_t begin[MAX_SPEC], size[MAX_SPEC];
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = sh_const_ints(c, err, 1, "begin", begin, MAX_SPEC, &nb)) != SI_OK ||
        (st = sh_const_ints(c, err, 2, "size", size, MAX_SPEC, &ns)) != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int r = xs->rank;
    if (nb > r || ns > r)
        return lc_fail(c, err, SI_ERR_SHAPE, "begin/size longer than the rank %d", r);
    int64_t step[SI_MAX_RANK];
    core_shape s = {.rank = r};
    int identity = 1;
    for (int i = 0; i < r; i++) {
        int64_t b = i < nb ? begin[i] : 0, z = i < ns ? size[i] : -1;
        if (b < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative begin %lld", (long long)b);
        if (z == -1)
            z = xs->d[i] - b;
        if (z < 0 || b + z > xs->d[i])
            return lc_fail(c, err, SI_ERR_SHAPE, "slice [%lld, +%lld) overflows dimension %d of %lld",
                           (long long)b, (long long)z, i, (long long)xs->d[i]);
        begin[i] = b;
        s.d[i] = z;
        step[i] = 1;
        identity = identity && b == 0 && z == xs->d[i];
    }
    if (identity)
        return sh_set_alias(c, err, 0, x, &s);
    return sh_emit_slice(c, err, 0, x, begin, step, s.d, &s);
}

/* TF's/tfjs's canonical(): a begin (c = 0) or end (c = 1) made positive and clamped. */
static int64_t canonical(int64_t x, int c, int64_t stride, int64_t dim, int masked)
{
    int64_t lo = stride > 0 ? 0 : -1, hi = stride > 0 ? dim : dim - 1;
    if (masked)
        return stride > 0 ? (c ? hi : lo) : (c ? lo : hi);
    int64_t f = x < 0 ? dim + x : x;
    return f < lo ? lo : (f > hi ? hi : f);
}

#define SS_NEW_AXIS (-2)
#define SS_SHRINK (-1)

/* A port of tfjs's slice_util.sliceInfo: the sparse spec (with ellipsis and
 * new axes) made dense over x's rank, then begin/stride/size per input dim and
 * the final shape. Returns whether the slice takes all of x unchanged, and in
 * *dshrink_out the shrunk dims, but only where tfjs-backend-cpu's kernel reads
 * them the way strided_slice_sparse() does (else 0). */
static si_result strided_slice_info(const lower_ctx *c, si_error *err, const core_shape *xs, int n,
                                    const int64_t *begin, const int64_t *end,
                                    const int64_t *strides, int64_t bmask, int64_t emask,
                                    int64_t ellipsis, int64_t newaxis, int64_t shrink,
                                    int64_t *dbegin, int64_t *dstride, int64_t *proc,
                                    core_shape *final_shape, int *is_identity, int *dshrink_out)
{
    if (ellipsis & (ellipsis - 1))
        return lc_fail(c, err, SI_ERR_SHAPE, "multiple ellipses in slice");
    int dims = n, seen = 0, add_after = 0;
    for (int i = 0; i < n; i++) {
        if (seen && (newaxis >> i & 1))
            add_after++;
        if (ellipsis >> i & 1)
            seen = 1;
    }
    if (!seen) {
        ellipsis |= (int64_t)1 << n;
        dims++;
    }
    int xr = xs->rank;
    int64_t dend[SI_MAX_RANK];
    int dbm = 0, dem = 0, dshrink = 0, full = 0, ng = 0;
    int gather[MAX_SPEC + SI_MAX_RANK + 1];
    for (int i = 0; i < dims; i++) {
        if (ellipsis >> i & 1) {
            int next = xr - (dims - i) + 1 + add_after;
            if (next > xr)
                next = xr;
            for (; full < next; full++) {
                dbegin[full] = 0;
                dend[full] = 0;
                dstride[full] = 1;
                dbm |= 1 << full;
                dem |= 1 << full;
                gather[ng++] = full;
            }
        } else if (newaxis >> i & 1) {
            gather[ng++] = SS_NEW_AXIS;
        } else {
            if (full == xr)
                return lc_fail(c, err, SI_ERR_SHAPE, "slice spec indexes past the rank %d", xr);
            dbegin[full] = begin[i];
            dend[full] = end[i];
            dstride[full] = strides[i];
            if (bmask >> i & 1)
                dbm |= 1 << full;
            if (emask >> i & 1)
                dem |= 1 << full;
            if (shrink >> i & 1) {
                gather[ng++] = SS_SHRINK;
                dshrink |= 1 << full;
            } else {
                gather[ng++] = full;
            }
            full++;
        }
    }
    if (full != xr)
        return lc_fail(c, err, SI_ERR_SHAPE, "slice spec covers %d of %d dimensions", full, xr);
    int identity = 1, simple = 1, dim0 = 1;
    for (int i = 0; i < xr; i++) {
        int64_t s = dstride[i], dim = xs->d[i];
        if (s == 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "strides[%d] is zero", i);
        int shr = dshrink >> i & 1;
        if (shr && s <= 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative stride on a shrunk axis %d", i);
        if (shr) {
            int64_t f = dbegin[i] < 0 ? dim + dbegin[i] : dbegin[i];
            if (f < 0 || f >= dim)
                return lc_fail(c, err, SI_ERR_SHAPE, "slice index %lld of dimension %d out of bounds",
                               (long long)dbegin[i], i);
            dbegin[i] = f;
            dend[i] = f + 1;
        } else {
            dbegin[i] = canonical(dbegin[i], 0, s, dim, dbm >> i & 1);
            dend[i] = canonical(dend[i], 1, s, dim, dem >> i & 1);
        }
        int all = s == 1 && dbegin[i] == 0 && dend[i] == dim;
        identity = identity && all;
        simple = simple && s == 1;
        dim0 = dim0 && ((i == 0 && s == 1) || all);
        int64_t len = dend[i] - dbegin[i];
        if (len == 0 || ((len < 0) != (s < 0)))
            proc[i] = 0;
        else
            proc[i] = len / s + (len % s != 0 ? 1 : 0);
    }
    final_shape->rank = 0;
    for (int g = 0; g < ng; g++) {
        if (gather[g] == SS_SHRINK)
            continue;
        if (final_shape->rank == SI_MAX_RANK)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "result rank above %d", SI_MAX_RANK);
        final_shape->d[final_shape->rank++] = gather[g] >= 0 ? proc[gather[g]] : 1;
    }
    *is_identity = identity;
    /* tfjs's StridedSlice takes slice() when the slice is the identity,
     * contiguous from dim 0 or of unit strides; else stridedSliceImpl, which
     * indexes x with the sparse shape's coordinates (shrunk dims dropped) */
    *dshrink_out = identity || simple || dim0 ? 0 : dshrink;
    return SI_OK;
}

/* tfjs-backend-cpu's stridedSliceImpl where dims are shrunk: the output has
 * the shape of the non-shrunk dims, and its coordinate j reads x at
 * begin[j] + loc[j] * stride[j] of x's dim j (not of the j-th non-shrunk
 * dim), x's flat index being that of the first r' dims with the last one
 * added unscaled (TensorBuffer.get with fewer coordinates than x's rank).
 * A coordinate outside x's dim j throws in tfjs; it is an error here. */
static si_result strided_slice_sparse(lower_ctx *c, si_error *err, int x, const int64_t *dbegin,
                                      const int64_t *dstride, const int64_t *proc, int dshrink,
                                      const core_shape *fs)
{
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int64_t dims[SI_MAX_RANK], istr[SI_MAX_RANK], ostr[SI_MAX_RANK], xstr[SI_MAX_RANK], off = 0;
    int r = 0;
    for (int i = 0; i < xs->rank; i++)
        if (!(dshrink >> i & 1))
            dims[r++] = proc[i];
    si_result st = sh_check_shape(c, err, fs, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(fs) == 0)
        return sh_set_const(c, err, 0, lc_tensor(c, x)->dtype, fs, NULL);
    core_strides(xs, xstr);
    for (int j = 0; j < r; j++) {
        int64_t first = dbegin[j], last = dbegin[j] + (dims[j] - 1) * dstride[j];
        if (first < 0 || first >= xs->d[j] || last < 0 || last >= xs->d[j])
            return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                           "the slice reads element %lld of dimension %d (size %lld) the way "
                           "TensorFlow.js does, out of range (tfjs fails too)",
                           (long long)(first < 0 || first >= xs->d[j] ? first : last), j,
                           (long long)xs->d[j]);
        int64_t w = j < r - 1 ? xstr[j] : 1;
        off += dbegin[j] * w;
        istr[j] = dstride[j] * w;
    }
    for (int j = r - 1, o = 1; j >= 0; j--) {
        ostr[j] = o;
        o *= (int)dims[j];
    }
    if (r == 0) { /* get() of no coordinates reads element 0 */
        dims[0] = istr[0] = ostr[0] = 1;
        r = 1;
        off = 0;
    }
    int t;
    if ((st = sh_new_tensor(c, err, lc_tensor(c, x)->dtype, fs, &t)) != SI_OK ||
        (st = sh_emit_copy(c, err, x, t, r, dims, istr, ostr, off, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, 0, t);
    return SI_OK;
}

si_result sh_lower_strided_slice(lower_ctx *c, si_error *err)
{
    int x, nb, ne, ns;
    int64_t begin[MAX_SPEC], end[MAX_SPEC], strides[MAX_SPEC];
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = sh_const_ints(c, err, 1, "begin", begin, MAX_SPEC, &nb)) != SI_OK ||
        (st = sh_const_ints(c, err, 2, "end", end, MAX_SPEC, &ne)) != SI_OK ||
        (st = sh_const_ints(c, err, 3, "strides", strides, MAX_SPEC, &ns)) != SI_OK)
        return st;
    if (nb != ne || nb != ns)
        return lc_fail(c, err, SI_ERR_SHAPE, "begin, end and strides differ in length");
    if (nb >= MAX_SPEC)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "slice spec of %d entries", nb);
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int64_t dbegin[SI_MAX_RANK], dstride[SI_MAX_RANK], proc[SI_MAX_RANK];
    core_shape fs;
    int identity = 0, sparse = 0;
    st = strided_slice_info(c, err, xs, nb, begin, end, strides, lc_attr_int(c, "begin_mask", 0),
                            lc_attr_int(c, "end_mask", 0), lc_attr_int(c, "ellipsis_mask", 0),
                            lc_attr_int(c, "new_axis_mask", 0), lc_attr_int(c, "shrink_axis_mask", 0),
                            dbegin, dstride, proc, &fs, &identity, &sparse);
    if (st != SI_OK)
        return st;
    if (sparse)
        return strided_slice_sparse(c, err, x, dbegin, dstride, proc, sparse, &fs);
    if (identity)
        return sh_set_alias(c, err, 0, x, &fs);
    return sh_emit_slice(c, err, 0, x, dbegin, dstride, proc, &fs);
}

/* Slices of x along axis at the given sizes, one output each. */
static si_result split_outputs(lower_ctx *c, si_error *err, int x, int axis, int n,
                               const int64_t *sizes)
{
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if (n == 1)
        return sh_set_alias(c, err, 0, x, xs);
    int64_t begin[SI_MAX_RANK] = {0}, step[SI_MAX_RANK];
    for (int i = 0; i < SI_MAX_RANK; i++)
        step[i] = 1;
    for (int k = 0; k < n; k++) {
        core_shape s = *xs;
        s.d[axis] = sizes[k];
        si_result st = sh_emit_slice(c, err, k, x, begin, step, s.d, &s);
        if (st != SI_OK)
            return st;
        begin[axis] += sizes[k];
    }
    return SI_OK;
}

si_result sh_lower_split(lower_ctx *c, si_error *err)
{
    int x, n, axis = 0;
    int64_t a[MAX_SPEC];
    si_result st = sh_const_ints(c, err, 0, "axis", a, MAX_SPEC, &n);
    if (st != SI_OK || (st = sh_input_tensor(c, err, 1, "x", &x)) != SI_OK)
        return st;
    if (n < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis argument is empty");
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if ((st = sh_norm_axis(c, err, a[0], xs->rank, &axis)) != SI_OK)
        return st;
    int64_t num = lc_attr_int(c, "num_split", 1);
    if (num < 1 || num > 4096 || xs->d[axis] % num != 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "num_split %lld does not divide dimension %lld",
                       (long long)num, (long long)xs->d[axis]);
    int64_t *sizes = malloc((size_t)num * sizeof *sizes);
    if (!sizes)
        return sh_nomem(c, err);
    for (int64_t k = 0; k < num; k++)
        sizes[k] = xs->d[axis] / num;
    st = split_outputs(c, err, x, axis, (int)num, sizes);
    free(sizes);
    return st;
}

si_result sh_lower_split_v(lower_ctx *c, si_error *err)
{
    int x, n, na, axis = 0;
    int64_t sizes[256], a[MAX_SPEC];
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = sh_const_ints(c, err, 1, "size_splits", sizes, 256, &n)) != SI_OK ||
        (st = sh_const_ints(c, err, 2, "axis", a, MAX_SPEC, &na)) != SI_OK)
        return st;
    if (na < 1 || n < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "empty axis or size_splits");
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if ((st = sh_norm_axis(c, err, a[0], xs->rank, &axis)) != SI_OK)
        return st;
    int neg = -1;
    int64_t total = 0;
    for (int k = 0; k < n; k++) {
        if (sizes[k] == -1) {
            if (neg >= 0)
                return lc_fail(c, err, SI_ERR_SHAPE, "more than one -1 in size_splits");
            neg = k;
        } else if (sizes[k] < 0) {
            return lc_fail(c, err, SI_ERR_SHAPE, "negative split size %lld", (long long)sizes[k]);
        } else {
            total += sizes[k];
        }
    }
    if (neg >= 0)
        sizes[neg] = xs->d[axis] - total;
    if ((neg >= 0 && sizes[neg] < 0) || (neg < 0 && total != xs->d[axis]))
        return lc_fail(c, err, SI_ERR_SHAPE, "split sizes do not add up to dimension %lld",
                       (long long)xs->d[axis]);
    return split_outputs(c, err, x, axis, n, sizes);
}

si_result sh_lower_unpack(lower_ctx *c, si_error *err)
{
    int x, axis = 0;
    si_result st = sh_input_tensor(c, err, 0, "value", &x);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if ((st = sh_norm_axis(c, err, lc_attr_int(c, "axis", 0), xs->rank, &axis)) != SI_OK)
        return st;
    core_shape os = {.rank = xs->rank - 1};
    for (int i = 0, j = 0; i < xs->rank; i++)
        if (i != axis)
            os.d[j++] = xs->d[i];
    if (xs->d[axis] == 1)
        return sh_set_alias(c, err, 0, x, &os);
    int64_t begin[SI_MAX_RANK] = {0}, step[SI_MAX_RANK], dims[SI_MAX_RANK];
    for (int i = 0; i < xs->rank; i++) {
        step[i] = 1;
        dims[i] = i == axis ? 1 : xs->d[i];
    }
    for (int64_t k = 0; k < xs->d[axis]; k++) {
        begin[axis] = k;
        if ((st = sh_emit_slice(c, err, (int)k, x, begin, step, dims, &os)) != SI_OK)
            return st;
    }
    return SI_OK;
}

/* ---- gather ---- */

/* Known indices must lie in [0, n): tfjs's kernel rejects any other. */
static si_result check_indices(lower_ctx *c, si_error *err, const core_buf *iv, int64_t n)
{
    int64_t k = iv ? core_shape_count(&iv->shape) : 0;
    for (int64_t j = 0; j < k; j++) {
        double v = index_at(iv, j);
        if (v < 0 || v >= (double)n)
            return lc_fail(c, err, SI_ERR_SHAPE, "index %g is not in [0, %lld)", v, (long long)n);
    }
    return SI_OK;
}

/* GatherV2 with batch_dims (tfjs's collectGatherOpShapeInfo: negative counts
 * from the indices' rank; the first batch_dims dims of x and indices agree):
 * out[b, o, j, s] = x[b, o, idx[b, j], s]. One CK_GATHER over x seen as
 * [batch * outer * n, slice], with the indices shifted to their (b, o) row:
 * idx[b, j] + (b * outer + o) * n, computed on the host when the indices are
 * known, else broadcast over o (CK_COPY) and offset (CK_BINARY add). */
static si_result gather_batched(lower_ctx *c, si_error *err, int x, int ind, int axis, int64_t bd)
{
    const core_shape *xs = &lc_tensor(c, x)->shape, *is = &lc_tensor(c, ind)->shape;
    si_dtype dt = lc_tensor(c, x)->dtype;
    if (bd < -is->rank || bd > is->rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "batch_dims %lld outside [-%d, %d]", (long long)bd,
                       is->rank, is->rank);
    if (bd < 0)
        bd += is->rank;
    if (bd > xs->rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "batch_dims %lld past the rank %d of x",
                       (long long)bd, xs->rank);
    if (axis < bd)
        return lc_fail(c, err, SI_ERR_SHAPE, "batch_dims %lld past the axis %d", (long long)bd,
                       axis);
    if (lc_tensor(c, ind)->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices must be int32 with batch_dims");
    core_shape os = {.rank = 0};
    int64_t batch = 1, outer = 1, slice = 1, n = xs->d[axis], jn = 1;
    for (int i = 0; i < bd; i++) {
        if (xs->d[i] != is->d[i])
            return lc_fail(c, err, SI_ERR_SHAPE, "x's dim %d is %lld, the indices' %lld", i,
                           (long long)xs->d[i], (long long)is->d[i]);
        batch *= xs->d[i];
    }
    if (xs->rank - 1 + is->rank - bd > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "result would have rank %lld",
                       (long long)(xs->rank - 1 + is->rank - bd));
    for (int i = 0; i < axis; i++)
        os.d[os.rank++] = xs->d[i];
    for (int i = (int)bd; i < axis; i++)
        outer *= xs->d[i];
    for (int i = (int)bd; i < is->rank; i++) {
        os.d[os.rank++] = is->d[i];
        jn *= is->d[i];
    }
    for (int i = axis + 1; i < xs->rank; i++) {
        os.d[os.rank++] = xs->d[i];
        slice *= xs->d[i];
    }
    si_result st = sh_check_shape(c, err, &os, "the output");
    if (st != SI_OK)
        return st;
    const core_buf *iv = lc_value(c, 1, &st, err);
    if (st != SI_OK || (st = check_indices(c, err, iv, n)) != SI_OK)
        return st;
    if (core_shape_count(&os) == 0)
        return sh_set_const(c, err, 0, dt, &os, NULL);
    int64_t rows = batch * outer * n, k = batch * outer * jn;
    if (rows > INT32_MAX || k > INT32_MAX)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "too many elements");
    core_shape ks = {.rank = 3, .d = {batch, outer, jn}};
    int shifted;
    if (iv) {
        int32_t *v = malloc((size_t)k * sizeof *v);
        if (!v)
            return sh_nomem(c, err);
        for (int64_t b = 0; b < batch; b++)
            for (int64_t o = 0; o < outer; o++)
                for (int64_t j = 0; j < jn; j++)
                    v[(b * outer + o) * jn + j] =
                        (int32_t)(index_at(iv, b * jn + j) + (double)((b * outer + o) * n));
        shifted = lc_new_const(c, SI_INT32, &ks, v);
        free(v);
        if (shifted < 0)
            return sh_nomem(c, err);
    } else {
        int spread;
        if (outer == 1) {
            spread = lc_new_alias(c, ind, &ks);
            if (spread < 0)
                return sh_nomem(c, err);
        } else {
            int64_t dims[3] = {batch, outer, jn}, istr[3] = {jn, 0, 1}, ostr[3] = {outer * jn, jn, 1};
            if ((st = sh_new_tensor(c, err, SI_INT32, &ks, &spread)) != SI_OK ||
                (st = sh_emit_copy(c, err, ind, spread, 3, dims, istr, ostr, 0, 0, 0)) != SI_OK)
                return st;
        }
        core_shape fs = {.rank = 3, .d = {batch, outer, 1}};
        int32_t *v = malloc((size_t)(batch * outer) * sizeof *v);
        if (!v)
            return sh_nomem(c, err);
        for (int64_t r = 0; r < batch * outer; r++)
            v[r] = (int32_t)(r * n);
        int offs = lc_new_const(c, SI_INT32, &fs, v);
        free(v);
        if (offs < 0)
            return sh_nomem(c, err);
        if (core_emit_binary(c, CK_B_ADD, spread, offs, err, &shifted) != SI_OK)
            return err->status;
    }
    core_shape xv = {.rank = 2, .d = {rows, slice}};
    int xa = lc_new_alias(c, x, &xv);
    if (xa < 0)
        return sh_nomem(c, err);
    ck_step s = {.kind = CK_GATHER, .n_in = 2, .in = {xa, shifted}};
    s.u.gather = (ck_gather_p){.outer = 1, .n = (int32_t)rows, .inner = (int32_t)slice,
                               .k = (int32_t)k};
    if ((st = sh_new_tensor(c, err, dt, &os, &s.out)) != SI_OK)
        return st;
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

si_result sh_lower_gather(lower_ctx *c, si_error *err)
{
    int v2 = !strcmp(lc_node(c)->op, "GatherV2");
    int x, ind, axis = 0;
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = sh_input_tensor(c, err, 1, "indices", &ind)) != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    const core_shape *is = &lc_tensor(c, ind)->shape;
    si_dtype dt = lc_tensor(c, x)->dtype;
    int64_t bd = v2 ? lc_attr_int(c, "batch_dims", 0) : 0;
    if (v2) {
        int64_t a[MAX_SPEC];
        int n;
        if (lc_in(c, 2) >= 0) {
            if ((st = sh_const_ints(c, err, 2, "axis", a, MAX_SPEC, &n)) != SI_OK)
                return st;
            if (n < 1)
                return lc_fail(c, err, SI_ERR_SHAPE, "axis argument is empty");
        } else {
            a[0] = 0;
        }
        if ((st = sh_norm_axis(c, err, a[0], xs->rank, &axis)) != SI_OK)
            return st;
    } else if (xs->rank == 0) {
        return lc_fail(c, err, SI_ERR_SHAPE, "cannot gather from a scalar");
    }
    if (bd != 0)
        return gather_batched(c, err, x, ind, axis, bd);
    core_shape os = {.rank = xs->rank - 1 + is->rank};
    if (os.rank > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "result would have rank %d", os.rank);
    int r = 0;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; i++) {
        os.d[r++] = xs->d[i];
        outer *= xs->d[i];
    }
    for (int i = 0; i < is->rank; i++)
        os.d[r++] = is->d[i];
    for (int i = axis + 1; i < xs->rank; i++) {
        os.d[r++] = xs->d[i];
        inner *= xs->d[i];
    }
    if ((st = sh_check_shape(c, err, &os, "the output")) != SI_OK)
        return st;
    /* tfjs rejects indices outside [0, n): check them when they are known */
    const core_buf *iv = lc_value(c, 1, &st, err);
    if (st != SI_OK || (st = check_indices(c, err, iv, xs->d[axis])) != SI_OK)
        return st;
    int64_t k = core_shape_count(is);
    if (core_shape_count(&os) == 0)
        return sh_set_const(c, err, 0, dt, &os, NULL);
    ck_step s = {.kind = CK_GATHER, .n_in = 2, .in = {x, ind}};
    s.u.gather = (ck_gather_p){.outer = (int32_t)outer, .n = (int32_t)xs->d[axis],
                               .inner = (int32_t)inner, .k = (int32_t)k};
    if ((st = sh_new_tensor(c, err, dt, &os, &s.out)) != SI_OK)
        return st;
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

si_result sh_lower_gather_nd(lower_ctx *c, si_error *err)
{
    int x, ind;
    si_result st = sh_input_tensor(c, err, 0, "params", &x);
    if (st != SI_OK || (st = sh_input_tensor(c, err, 1, "indices", &ind)) != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x), *it = lc_tensor(c, ind);
    const core_shape *xs = &xt->shape, *is = &it->shape;
    if (it->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices must be int32");
    if (is->rank < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices must have rank 1 or more");
    int d = (int)is->d[is->rank - 1];
    if (d > xs->rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "index depth %d exceeds the params rank %d", d,
                       xs->rank);
    if (core_shape_count(xs) == 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "params is empty");
    core_shape os = {.rank = is->rank - 1 + xs->rank - d};
    if (os.rank > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "result would have rank %d", os.rank);
    int r = 0;
    int64_t k = 1, slice = 1;
    double total = 1;
    for (int i = 0; i < is->rank - 1; i++) {
        os.d[r++] = is->d[i];
        k *= is->d[i];
    }
    for (int i = d; i < xs->rank; i++) {
        os.d[r++] = xs->d[i];
        slice *= xs->d[i];
    }
    for (int i = 0; i < d; i++)
        total *= (double)xs->d[i];
    if ((st = sh_check_shape(c, err, &os, "the output")) != SI_OK)
        return st;
    const core_buf *iv = lc_value(c, 1, &st, err);
    if (st != SI_OK)
        return st;
    for (int64_t j = 0; iv && j < k; j++) {
        double flat = 0;
        for (int q = 0; q < d; q++)
            flat = flat * (double)xs->d[q] + index_at(iv, j * d + q);
        if (flat < 0 || flat >= total)
            return lc_fail(c, err, SI_ERR_SHAPE, "indices row %lld does not index into the params",
                           (long long)j);
    }
    if (core_shape_count(&os) == 0)
        return sh_set_const(c, err, 0, xt->dtype, &os, NULL);
    ck_step s = {.kind = CK_GATHERND, .n_in = 2, .in = {x, ind}};
    s.u.gathernd.k = (int32_t)k;
    s.u.gathernd.d = d;
    s.u.gathernd.slice = (int32_t)slice;
    for (int i = 0; i < d; i++)
        s.u.gathernd.pdim[i] = (int32_t)xs->d[i];
    if ((st = sh_new_tensor(c, err, xt->dtype, &os, &s.out)) != SI_OK)
        return st;
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

