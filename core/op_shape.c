/* Shape ops: reshapes (aliases, no copy), slices, concat/pack/unpack/split,
 * transpose, tile/broadcast, pad, gather, and the ops whose value follows from
 * static shapes alone (Shape, Size, Rank, Fill, ZerosLike, Range ...), which
 * become host constants. Semantics follow TensorFlow.js's CPU kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "ops.h"

/* ---- host references ---- */

void ck_host_copy(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_copy_p *p = &s->u.copy;
    const int32_t *x = ins[0]->data;
    int32_t *y = out->data; /* 4-byte elements copied as bits: float, int and bool alike */
    int64_t n = 1;
    for (int d = 0; d < p->rank; d++)
        n *= p->dim[d];
    int32_t idx[SI_MAX_RANK] = {0};
    int64_t ii = p->in_offset, io = p->out_offset;
    for (int64_t e = 0; e < n; e++) {
        y[io] = x[ii];
        for (int d = p->rank - 1; d >= 0; d--) {
            ii += p->in_stride[d];
            io += p->out_stride[d];
            if (++idx[d] < p->dim[d])
                break;
            ii -= (int64_t)p->in_stride[d] * p->dim[d];
            io -= (int64_t)p->out_stride[d] * p->dim[d];
            idx[d] = 0;
        }
    }
}

void ck_host_pad(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_pad_p *p = &s->u.pad;
    int64_t n = 1;
    for (int d = 0; d < p->rank; d++)
        n *= p->out_dim[d];
    int is_float = out->dtype == SI_FLOAT32;
    int32_t ivalue = (int32_t)p->value;
    for (int64_t o = 0; o < n; o++) {
        int64_t rem = o, ii = 0, istr = 1;
        int inside = 1;
        for (int d = p->rank - 1; d >= 0; d--) {
            int64_t od = p->out_dim[d], nd = p->in_dim[d];
            int64_t c = rem % od - p->before[d];
            rem /= od;
            if (c < 0 || c >= nd) {
                /* one reflection, as tfjs: the lowering keeps paddings within range */
                if (p->mode == 0)
                    inside = 0;
                else if (c < 0)
                    c = p->mode == 1 ? -c : -c - 1;
                else
                    c = p->mode == 1 ? 2 * (nd - 1) - c : 2 * nd - 1 - c;
            }
            ii += c * istr;
            istr *= nd;
        }
        if (inside)
            ((int32_t *)out->data)[o] = ((const int32_t *)ins[0]->data)[ii];
        else if (is_float)
            ((float *)out->data)[o] = p->value;
        else
            ((int32_t *)out->data)[o] = ivalue;
    }
}

/* Indices as tfjs casts them to int32 (float indices truncate). */
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

/* ---- lowering helpers ---- */

#define MAX_SPEC 32 /* entries in a shape argument we accept (StridedSlice specs) */

static si_result nomem(const lower_ctx *c, si_error *err)
{
    return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
}

static const char *shp(const core_shape *s, char *buf, size_t n) { return core_shape_str(s, buf, n); }

/* Shapes whose element counts and offsets fit the kernels' int32 slots. */
static si_result check_shape(const lower_ctx *c, si_error *err, const core_shape *s, const char *what)
{
    char b[128];
    if (s->rank > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "%s would have rank %d (at most %d)", what,
                       s->rank, SI_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (s->d[i] < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "%s has a negative dimension", what);
        n *= s->d[i];
        if (n > INT32_MAX)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "%s %s is too large", what,
                           shp(s, b, sizeof b));
    }
    return SI_OK;
}

/* Integer values of constant input i (a shape argument); fails when it depends
 * on the model's input or holds more than max values. */
static si_result const_ints(lower_ctx *c, si_error *err, int i, const char *what, int64_t *out,
                            int max, int *n)
{
    *n = 0;
    if (lc_in(c, i) < 0)
        return lc_fail(c, err, SI_ERR_FORMAT, "missing input %d (%s)", i, what);
    int k = lc_value_ints(c, i, out, max, err);
    if (k == -2)
        return err ? err->status : SI_ERR_IO;
    if (k == -1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "%s argument depends on the input", what);
    if (k > max)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "%s argument has %d values (at most %d)", what,
                       k, max);
    *n = k;
    return SI_OK;
}

/* One constant scalar (first value) as a double, as tfjs reads a number param. */
static si_result const_scalar(lower_ctx *c, si_error *err, int i, const char *what, double *v)
{
    *v = 0;
    si_result st;
    if (lc_in(c, i) < 0)
        return lc_fail(c, err, SI_ERR_FORMAT, "missing input %d (%s)", i, what);
    const core_buf *b = lc_value(c, i, &st, err);
    if (st != SI_OK)
        return st;
    if (!b)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "%s argument depends on the input", what);
    if (core_shape_count(&b->shape) < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "%s argument is empty", what);
    *v = b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[0]
                                : (double)((const int32_t *)b->data)[0];
    return SI_OK;
}

static si_result input_tensor(const lower_ctx *c, si_error *err, int i, const char *what, int *t)
{
    *t = lc_in(c, i);
    if (*t < 0)
        return lc_fail(c, err, SI_ERR_FORMAT, "missing input %d (%s)", i, what);
    return SI_OK;
}

/* Axis in [-rank, rank) → [0, rank). */
static si_result norm_axis(const lower_ctx *c, si_error *err, int64_t axis, int rank, int *out)
{
    *out = 0;
    if (axis < -rank || axis >= rank || rank == 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld is out of range for rank %d",
                       (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return SI_OK;
}

static si_result set_alias(lower_ctx *c, si_error *err, int k, int t, const core_shape *shape)
{
    int a = lc_new_alias(c, t, shape);
    if (a < 0)
        return nomem(c, err);
    lc_set_output(c, k, a);
    return SI_OK;
}

/* A host constant of shape/dtype; data may be NULL for zeros. */
static si_result set_const(lower_ctx *c, si_error *err, int k, si_dtype dt, const core_shape *shape,
                           const void *data)
{
    int64_t n = core_shape_count(shape);
    void *zeros = NULL;
    if (!data) {
        zeros = calloc((size_t)(n ? n : 1), CORE_ELEM);
        if (!zeros)
            return nomem(c, err);
        data = zeros;
    }
    int t = lc_new_const(c, dt, shape, data);
    free(zeros);
    if (t < 0)
        return nomem(c, err);
    lc_set_output(c, k, t);
    return SI_OK;
}

static si_result new_tensor(lower_ctx *c, si_error *err, si_dtype dt, const core_shape *shape, int *t)
{
    *t = lc_new_tensor(c, dt, shape);
    return *t < 0 ? nomem(c, err) : SI_OK;
}

/* Drops unit dims of a copy region (outer to inner) and merges dims that are
 * contiguous in both tensors, so that views of any rank become few-dimensional
 * copies. Returns the rank left (it may exceed SI_MAX_RANK; the caller checks). */
static int coalesce(int n, const int64_t *dims, const int64_t *istr, const int64_t *ostr,
                    int64_t *d, int64_t *is, int64_t *os)
{
    int r = 0;
    for (int i = 0; i < n; i++) {
        if (dims[i] == 1)
            continue;
        if (r > 0 && is[r - 1] == istr[i] * dims[i] && os[r - 1] == ostr[i] * dims[i]) {
            d[r - 1] *= dims[i];
            is[r - 1] = istr[i];
            os[r - 1] = ostr[i];
            continue;
        }
        d[r] = dims[i];
        is[r] = istr[i];
        os[r] = ostr[i];
        r++;
    }
    return r;
}

#define MAX_VIEW (2 * SI_MAX_RANK) /* dims of a copy view before coalescing */

/* Emits one CK_COPY of the region dims[0..n) of x into out. */
static si_result emit_copy(lower_ctx *c, si_error *err, int in, int out, int n, const int64_t *dims,
                           const int64_t *istr, const int64_t *ostr, int64_t in_off,
                           int64_t out_off, int accumulate)
{
    int64_t d[MAX_VIEW], is[MAX_VIEW], os[MAX_VIEW];
    int r = coalesce(n, dims, istr, ostr, d, is, os);
    if (r > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "copy region needs %d dimensions (at most %d)",
                       r, SI_MAX_RANK);
    ck_step s = {.kind = CK_COPY, .n_in = 1, .in = {in}, .out = out, .accumulate = accumulate};
    s.u.copy.rank = r;
    for (int i = 0; i < r; i++) {
        s.u.copy.dim[i] = (int32_t)d[i];
        s.u.copy.in_stride[i] = (int32_t)is[i];
        s.u.copy.out_stride[i] = (int32_t)os[i];
    }
    s.u.copy.in_offset = (int32_t)in_off;
    s.u.copy.out_offset = (int32_t)out_off;
    lc_emit(c, &s);
    return SI_OK;
}

/* out[i] = x[begin + i*step] over dims (x's rank), stored contiguously with
 * out_shape (same element count). Empty results become constants. */
static si_result emit_slice(lower_ctx *c, si_error *err, int k, int x, const int64_t *begin,
                            const int64_t *step, const int64_t *dims, const core_shape *out_shape)
{
    const core_tensor *xt = lc_tensor(c, x);
    si_dtype dt = xt->dtype;
    int rank = xt->shape.rank;
    si_result st = check_shape(c, err, out_shape, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(out_shape) == 0)
        return set_const(c, err, k, dt, out_shape, NULL);
    int64_t xs[SI_MAX_RANK], istr[SI_MAX_RANK], ostr[SI_MAX_RANK], off = 0, o = 1;
    core_strides(&xt->shape, xs);
    for (int i = rank - 1; i >= 0; i--) {
        off += begin[i] * xs[i];
        istr[i] = step[i] * xs[i];
        ostr[i] = o;
        o *= dims[i];
    }
    int t;
    if ((st = new_tensor(c, err, dt, out_shape, &t)) != SI_OK)
        return st;
    if ((st = emit_copy(c, err, x, t, rank, dims, istr, ostr, off, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, k, t);
    return SI_OK;
}

/* ---- aliases: Identity, Reshape, Squeeze, ExpandDims ---- */

static si_result lower_identity(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    return set_alias(c, err, 0, x, &lc_tensor(c, x)->shape);
}

static si_result lower_identity_n(lower_ctx *c, si_error *err)
{
    for (int i = 0; i < lc_n_inputs(c); i++) {
        int x = lc_in(c, i);
        si_result st = set_alias(c, err, i, x, &lc_tensor(c, x)->shape);
        if (st != SI_OK)
            return st;
    }
    return SI_OK;
}

static si_result lower_reshape(lower_ctx *c, si_error *err)
{
    int x, n;
    int64_t v[MAX_SPEC];
    char b1[128], b2[128];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "shape", v, MAX_SPEC, &n)) != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "target rank %d (at most %d)", n, SI_MAX_RANK);
    core_shape s = {.rank = n};
    int64_t size = core_shape_count(xs), prod = 1;
    int implicit = -1;
    for (int i = 0; i < n; i++) {
        if (v[i] == -1) {
            if (implicit >= 0)
                return lc_fail(c, err, SI_ERR_SHAPE, "shape has more than one -1");
            implicit = i;
        } else if (v[i] < 0) {
            return lc_fail(c, err, SI_ERR_SHAPE, "shape has a negative size %lld", (long long)v[i]);
        } else {
            prod *= v[i];
        }
        s.d[i] = v[i];
    }
    if (implicit >= 0) {
        if (prod == 0 || size % prod != 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "cannot infer the -1 of the shape for %s",
                           shp(xs, b1, sizeof b1));
        s.d[implicit] = size / prod;
    }
    if (core_shape_count(&s) != size)
        return lc_fail(c, err, SI_ERR_SHAPE, "cannot reshape %s to %s", shp(xs, b1, sizeof b1),
                       shp(&s, b2, sizeof b2));
    return set_alias(c, err, 0, x, &s);
}

static si_result lower_squeeze(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int64_t axes[MAX_SPEC];
    int na = lc_attr_ints(c, "squeeze_dims", axes, MAX_SPEC);
    if (na < 0)
        na = lc_attr_ints(c, "axis", axes, MAX_SPEC);
    if (na > MAX_SPEC)
        return lc_fail(c, err, SI_ERR_SHAPE, "too many squeeze axes");
    int sel[SI_MAX_RANK] = {0};
    for (int i = 0; i < na; i++) {
        int a = 0;
        if ((st = norm_axis(c, err, axes[i], xs->rank, &a)) != SI_OK)
            return st;
        if (xs->d[a] != 1)
            return lc_fail(c, err, SI_ERR_SHAPE, "cannot squeeze axis %d of size %lld", a,
                           (long long)xs->d[a]);
        sel[a] = 1;
    }
    core_shape s = {.rank = 0};
    for (int i = 0; i < xs->rank; i++)
        if (xs->d[i] != 1 || (na > 0 && !sel[i]))
            s.d[s.rank++] = xs->d[i];
    return set_alias(c, err, 0, x, &s);
}

static si_result lower_expand_dims(lower_ctx *c, si_error *err)
{
    int x, n;
    int64_t v[MAX_SPEC];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "axis", v, MAX_SPEC, &n)) != SI_OK)
        return st;
    if (n < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis argument is empty");
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int r = xs->rank;
    if (v[0] < -(r + 1) || v[0] > r)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld is out of range for rank %d",
                       (long long)v[0], r);
    if (r + 1 > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "result would have rank %d", r + 1);
    int a = (int)(v[0] < 0 ? v[0] + r + 1 : v[0]);
    core_shape s = {.rank = r + 1};
    for (int i = 0, j = 0; i <= r; i++)
        s.d[i] = i == a ? 1 : xs->d[j++];
    return set_alias(c, err, 0, x, &s);
}

/* ---- constants from static shapes ---- */

static si_result lower_shape(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int32_t v[SI_MAX_RANK];
    for (int i = 0; i < xs->rank; i++)
        v[i] = (int32_t)xs->d[i];
    core_shape s = {.rank = 1, .d = {xs->rank}};
    return set_const(c, err, 0, SI_INT32, &s, v); /* tfjs: int32 whatever out_type says */
}

static si_result lower_shape_n(lower_ctx *c, si_error *err)
{
    for (int k = 0; k < lc_n_inputs(c); k++) {
        const core_shape *xs = &lc_tensor(c, lc_in(c, k))->shape;
        int32_t v[SI_MAX_RANK];
        for (int i = 0; i < xs->rank; i++)
            v[i] = (int32_t)xs->d[i];
        core_shape s = {.rank = 1, .d = {xs->rank}};
        si_result st = set_const(c, err, k, SI_INT32, &s, v);
        if (st != SI_OK)
            return st;
    }
    return SI_OK;
}

static si_result lower_size_rank(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int64_t v = !strcmp(lc_node(c)->op, "Rank") ? xs->rank : core_shape_count(xs);
    int32_t v32 = (int32_t)v;
    core_shape s = {.rank = 0};
    return set_const(c, err, 0, SI_INT32, &s, &v32);
}

/* A dtype attr, or dflt when absent; fails for dtypes streaminfer lacks. */
static si_result dtype_attr(const lower_ctx *c, si_error *err, const char *name, si_dtype dflt,
                            si_dtype *out)
{
    int64_t t = lc_attr_int(c, name, dflt);
    if (t != SI_FLOAT32 && t != SI_INT32 && t != SI_BOOL)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "dtype of attr %s", name);
    *out = (si_dtype)t;
    return SI_OK;
}

/* Value v stored as dtype dt the way a JS typed array of that dtype stores it. */
static int32_t store_as(si_dtype dt, double v)
{
    if (dt == SI_FLOAT32) {
        float f = (float)v;
        int32_t bits;
        memcpy(&bits, &f, 4);
        return bits;
    }
    if (isnan(v) || isinf(v))
        return 0;
    if (dt == SI_BOOL)
        return trunc(v) != 0; /* stored as 0/1 here (Uint8Array would keep v & 255) */
    /* ToInt32: truncate, then wrap modulo 2^32 */
    double m = fmod(trunc(v), 4294967296.0);
    if (m < 0)
        m += 4294967296.0;
    return (int32_t)(uint32_t)m;
}

static si_result lower_zeros_ones_like(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    core_shape s = xt->shape;
    si_dtype dt = xt->dtype;
    if (!strcmp(lc_node(c)->op, "ZerosLike"))
        return set_const(c, err, 0, dt, &s, NULL);
    int64_t n = core_shape_count(&s);
    int32_t *v = malloc((size_t)(n ? n : 1) * CORE_ELEM);
    if (!v)
        return nomem(c, err);
    int32_t one = store_as(dt, 1.0);
    for (int64_t i = 0; i < n; i++)
        v[i] = one;
    st = set_const(c, err, 0, dt, &s, v);
    free(v);
    return st;
}

static si_result lower_fill(lower_ctx *c, si_error *err)
{
    int64_t dims[MAX_SPEC];
    int n;
    si_result st = const_ints(c, err, 0, "dims", dims, MAX_SPEC, &n);
    if (st != SI_OK)
        return st;
    int vt;
    if ((st = input_tensor(c, err, 1, "value", &vt)) != SI_OK)
        return st;
    const core_tensor *val = lc_tensor(c, vt);
    si_dtype dt = SI_FLOAT32;
    if ((st = dtype_attr(c, err, "T", val->dtype, &dt)) != SI_OK)
        return st;
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "rank %d (at most %d)", n, SI_MAX_RANK);
    core_shape s = {.rank = n};
    for (int i = 0; i < n; i++)
        s.d[i] = dims[i];
    if ((st = check_shape(c, err, &s, "the output")) != SI_OK)
        return st;
    if (core_shape_count(&val->shape) != 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "value must be a scalar");
    int64_t count = core_shape_count(&s);
    const core_buf *vb = lc_value(c, 1, &st, err);
    if (st != SI_OK)
        return st;
    if (!vb) {
        /* value computed from the input: broadcast it with stride-0 copies */
        if (dt != val->dtype && (dt == SI_FLOAT32 || val->dtype == SI_FLOAT32))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "value dtype differs from T");
        if (count == 0)
            return set_const(c, err, 0, dt, &s, NULL);
        int t;
        if ((st = new_tensor(c, err, dt, &s, &t)) != SI_OK)
            return st;
        int64_t one = count, zero = 0, unit = 1;
        if ((st = emit_copy(c, err, vt, t, 1, &one, &zero, &unit, 0, 0, 0)) != SI_OK)
            return st;
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    double v = vb->dtype == SI_FLOAT32 ? (double)((const float *)vb->data)[0]
                                       : (double)((const int32_t *)vb->data)[0];
    int32_t *data = malloc((size_t)(count ? count : 1) * CORE_ELEM);
    if (!data)
        return nomem(c, err);
    int32_t bits = store_as(dt, v);
    for (int64_t i = 0; i < count; i++)
        data[i] = bits;
    st = set_const(c, err, 0, dt, &s, data);
    free(data);
    return st;
}

static si_result lower_range(lower_ctx *c, si_error *err)
{
    double start, stop, step;
    si_result st;
    if ((st = const_scalar(c, err, 0, "start", &start)) != SI_OK ||
        (st = const_scalar(c, err, 1, "limit", &stop)) != SI_OK ||
        (st = const_scalar(c, err, 2, "delta", &step)) != SI_OK)
        return st;
    si_dtype dt = SI_FLOAT32;
    if ((st = dtype_attr(c, err, "Tidx", lc_tensor(c, lc_in(c, 0))->dtype, &dt)) != SI_OK)
        return st;
    if (dt == SI_BOOL)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "bool range");
    if (step == 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "delta is zero");
    /* tfjs rangeImpl, quirks included: empty for start == stop, for a rising
     * range with a negative step and for a falling one with step > 1; a falling
     * range with step 1 counts down. */
    int64_t n = 0;
    if (!(start == stop || (start < stop && step < 0) || (stop < start && step > 1))) {
        double cnt = fabs(ceil((stop - start) / step));
        if (!(cnt <= (double)(1 << 28)))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "range of %g elements", cnt);
        n = (int64_t)cnt;
        if (stop < start && step == 1)
            step = -1;
    }
    core_shape s = {.rank = 1, .d = {n}};
    int32_t *v = malloc((size_t)(n ? n : 1) * CORE_ELEM);
    if (!v)
        return nomem(c, err);
    if (n > 0) {
        /* each value from the previous one as stored in the typed array */
        float pf = (float)start;
        int32_t pi = store_as(SI_INT32, start);
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                pf = (float)((double)pf + step);
                pi = store_as(SI_INT32, (double)pi + step);
            }
            if (dt == SI_FLOAT32)
                memcpy(&v[i], &pf, 4);
            else
                v[i] = pi;
        }
    }
    st = set_const(c, err, 0, dt, &s, v);
    free(v);
    return st;
}

/* ---- slices ---- */

static si_result lower_slice(lower_ctx *c, si_error *err)
{
    int x, nb, ns;
    int64_t begin[MAX_SPEC], size[MAX_SPEC];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "begin", begin, MAX_SPEC, &nb)) != SI_OK ||
        (st = const_ints(c, err, 2, "size", size, MAX_SPEC, &ns)) != SI_OK)
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
        return set_alias(c, err, 0, x, &s);
    return emit_slice(c, err, 0, x, begin, step, s.d, &s);
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
 * the final shape. Returns whether the slice takes all of x unchanged. */
static si_result strided_slice_info(const lower_ctx *c, si_error *err, const core_shape *xs, int n,
                                    const int64_t *begin, const int64_t *end,
                                    const int64_t *strides, int64_t bmask, int64_t emask,
                                    int64_t ellipsis, int64_t newaxis, int64_t shrink,
                                    int64_t *dbegin, int64_t *dstride, int64_t *proc,
                                    core_shape *final_shape, int *is_identity)
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
    int identity = 1;
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
        identity = identity && s == 1 && dbegin[i] == 0 && dend[i] == dim;
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
    return SI_OK;
}

static si_result lower_strided_slice(lower_ctx *c, si_error *err)
{
    int x, nb, ne, ns;
    int64_t begin[MAX_SPEC], end[MAX_SPEC], strides[MAX_SPEC];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "begin", begin, MAX_SPEC, &nb)) != SI_OK ||
        (st = const_ints(c, err, 2, "end", end, MAX_SPEC, &ne)) != SI_OK ||
        (st = const_ints(c, err, 3, "strides", strides, MAX_SPEC, &ns)) != SI_OK)
        return st;
    if (nb != ne || nb != ns)
        return lc_fail(c, err, SI_ERR_SHAPE, "begin, end and strides differ in length");
    if (nb >= MAX_SPEC)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "slice spec of %d entries", nb);
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int64_t dbegin[SI_MAX_RANK], dstride[SI_MAX_RANK], proc[SI_MAX_RANK];
    core_shape fs;
    int identity = 0;
    st = strided_slice_info(c, err, xs, nb, begin, end, strides, lc_attr_int(c, "begin_mask", 0),
                            lc_attr_int(c, "end_mask", 0), lc_attr_int(c, "ellipsis_mask", 0),
                            lc_attr_int(c, "new_axis_mask", 0), lc_attr_int(c, "shrink_axis_mask", 0),
                            dbegin, dstride, proc, &fs, &identity);
    if (st != SI_OK)
        return st;
    if (identity)
        return set_alias(c, err, 0, x, &fs);
    return emit_slice(c, err, 0, x, dbegin, dstride, proc, &fs);
}

/* Slices of x along axis at the given sizes, one output each. */
static si_result split_outputs(lower_ctx *c, si_error *err, int x, int axis, int n,
                               const int64_t *sizes)
{
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if (n == 1)
        return set_alias(c, err, 0, x, xs);
    int64_t begin[SI_MAX_RANK] = {0}, step[SI_MAX_RANK];
    for (int i = 0; i < SI_MAX_RANK; i++)
        step[i] = 1;
    for (int k = 0; k < n; k++) {
        core_shape s = *xs;
        s.d[axis] = sizes[k];
        si_result st = emit_slice(c, err, k, x, begin, step, s.d, &s);
        if (st != SI_OK)
            return st;
        begin[axis] += sizes[k];
    }
    return SI_OK;
}

static si_result lower_split(lower_ctx *c, si_error *err)
{
    int x, n, axis = 0;
    int64_t a[MAX_SPEC];
    si_result st = const_ints(c, err, 0, "axis", a, MAX_SPEC, &n);
    if (st != SI_OK || (st = input_tensor(c, err, 1, "x", &x)) != SI_OK)
        return st;
    if (n < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis argument is empty");
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if ((st = norm_axis(c, err, a[0], xs->rank, &axis)) != SI_OK)
        return st;
    int64_t num = lc_attr_int(c, "num_split", 1);
    if (num < 1 || num > 4096 || xs->d[axis] % num != 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "num_split %lld does not divide dimension %lld",
                       (long long)num, (long long)xs->d[axis]);
    int64_t *sizes = malloc((size_t)num * sizeof *sizes);
    if (!sizes)
        return nomem(c, err);
    for (int64_t k = 0; k < num; k++)
        sizes[k] = xs->d[axis] / num;
    st = split_outputs(c, err, x, axis, (int)num, sizes);
    free(sizes);
    return st;
}

static si_result lower_split_v(lower_ctx *c, si_error *err)
{
    int x, n, na, axis = 0;
    int64_t sizes[256], a[MAX_SPEC];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "size_splits", sizes, 256, &n)) != SI_OK ||
        (st = const_ints(c, err, 2, "axis", a, MAX_SPEC, &na)) != SI_OK)
        return st;
    if (na < 1 || n < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "empty axis or size_splits");
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if ((st = norm_axis(c, err, a[0], xs->rank, &axis)) != SI_OK)
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

static si_result lower_unpack(lower_ctx *c, si_error *err)
{
    int x, axis = 0;
    si_result st = input_tensor(c, err, 0, "value", &x);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if ((st = norm_axis(c, err, lc_attr_int(c, "axis", 0), xs->rank, &axis)) != SI_OK)
        return st;
    core_shape os = {.rank = xs->rank - 1};
    for (int i = 0, j = 0; i < xs->rank; i++)
        if (i != axis)
            os.d[j++] = xs->d[i];
    if (xs->d[axis] == 1)
        return set_alias(c, err, 0, x, &os);
    int64_t begin[SI_MAX_RANK] = {0}, step[SI_MAX_RANK], dims[SI_MAX_RANK];
    for (int i = 0; i < xs->rank; i++) {
        step[i] = 1;
        dims[i] = i == axis ? 1 : xs->d[i];
    }
    for (int64_t k = 0; k < xs->d[axis]; k++) {
        begin[axis] = k;
        if ((st = emit_slice(c, err, (int)k, x, begin, step, dims, &os)) != SI_OK)
            return st;
    }
    return SI_OK;
}

/* ---- concat, pack ---- */

/* Copies each input (already viewed with out's rank) into out at its offset
 * along axis; the first copy writes, the others accumulate. */
static si_result concat_into(lower_ctx *c, si_error *err, int n, const int *ins,
                             const core_shape *in_shapes, int axis, const core_shape *out_shape,
                             int k)
{
    si_dtype dt = lc_tensor(c, ins[0])->dtype;
    si_result st = check_shape(c, err, out_shape, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(out_shape) == 0)
        return set_const(c, err, k, dt, out_shape, NULL);
    int nonempty = 0, last = -1;
    for (int i = 0; i < n; i++)
        if (core_shape_count(&in_shapes[i]) > 0) {
            nonempty++;
            last = i;
        }
    if (nonempty == 1) /* the others are empty: out is that input */
        return set_alias(c, err, k, ins[last], out_shape);
    int t;
    if ((st = new_tensor(c, err, dt, out_shape, &t)) != SI_OK)
        return st;
    int64_t ostr[SI_MAX_RANK], off = 0;
    core_strides(out_shape, ostr);
    int first = 1;
    for (int i = 0; i < n; i++) {
        const core_shape *s = &in_shapes[i];
        if (core_shape_count(s) == 0)
            continue;
        int64_t istr[SI_MAX_RANK];
        core_strides(s, istr);
        st = emit_copy(c, err, ins[i], t, s->rank, s->d, istr, ostr, 0, off * ostr[axis], !first);
        if (st != SI_OK)
            return st;
        first = 0;
        off += s->d[axis];
    }
    lc_set_output(c, k, t);
    return SI_OK;
}

static si_result check_concat_dtype(const lower_ctx *c, si_error *err, si_dtype a, si_dtype b)
{
    /* int32 and bool share one layout; float with either would need a cast */
    if ((a == SI_FLOAT32) != (b == SI_FLOAT32))
        return lc_fail(c, err, SI_ERR_SHAPE, "inputs mix float and integer dtypes");
    return SI_OK;
}

static si_result lower_concat(lower_ctx *c, si_error *err)
{
    int v2 = !strcmp(lc_node(c)->op, "ConcatV2");
    int nin = lc_n_inputs(c) - 1;
    if (nin < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs tensors and an axis");
    int first = v2 ? 0 : 1, axis_in = v2 ? nin : 0;
    int64_t nattr = lc_attr_int(c, "N", nin);
    if (nattr >= 1 && nattr < nin)
        nin = (int)nattr;
    int n, axis = 0;
    int64_t a[MAX_SPEC];
    si_result st = const_ints(c, err, axis_in, "axis", a, MAX_SPEC, &n);
    if (st != SI_OK)
        return st;
    if (n < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis argument is empty");
    int *ins = malloc((size_t)nin * sizeof *ins);
    core_shape *shapes = malloc((size_t)nin * sizeof *shapes);
    if (!ins || !shapes) {
        free(ins);
        free(shapes);
        return nomem(c, err);
    }
    for (int i = 0; i < nin; i++) {
        ins[i] = lc_in(c, first + i);
        shapes[i] = lc_tensor(c, ins[i])->shape;
    }
    const core_tensor *t0 = lc_tensor(c, ins[0]);
    core_shape os = t0->shape;
    char b1[128], b2[128];
    st = norm_axis(c, err, a[0], os.rank, &axis);
    for (int i = 1; i < nin && st == SI_OK; i++) {
        const core_shape *s = &shapes[i];
        st = check_concat_dtype(c, err, t0->dtype, lc_tensor(c, ins[i])->dtype);
        if (st == SI_OK && s->rank != os.rank)
            st = lc_fail(c, err, SI_ERR_SHAPE, "inputs differ in rank: %s and %s",
                         shp(&t0->shape, b1, sizeof b1), shp(s, b2, sizeof b2));
        for (int d = 0; d < os.rank && st == SI_OK; d++)
            if (d != axis && s->d[d] != os.d[d])
                st = lc_fail(c, err, SI_ERR_SHAPE, "cannot concatenate %s and %s on axis %d",
                             shp(&t0->shape, b1, sizeof b1), shp(s, b2, sizeof b2), axis);
        if (st == SI_OK)
            os.d[axis] += s->d[axis];
    }
    if (st == SI_OK)
        st = concat_into(c, err, nin, ins, shapes, axis, &os, 0);
    free(ins);
    free(shapes);
    return st;
}

static si_result lower_pack(lower_ctx *c, si_error *err)
{
    int nin = lc_n_inputs(c);
    if (nin < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs inputs");
    const core_tensor *t0 = lc_tensor(c, lc_in(c, 0));
    int r = t0->shape.rank;
    int64_t a = lc_attr_int(c, "axis", 0);
    if (a < -(r + 1) || a > r)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)a,
                       r);
    if (r + 1 > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "result would have rank %d", r + 1);
    int axis = (int)(a < 0 ? a + r + 1 : a);
    /* each input seen as x's shape with a 1 inserted at axis */
    core_shape one = {.rank = r + 1};
    for (int i = 0, j = 0; i <= r; i++)
        one.d[i] = i == axis ? 1 : t0->shape.d[j++];
    int64_t cnt = core_shape_count(&t0->shape);
    int *ins = malloc((size_t)nin * sizeof *ins);
    core_shape *shapes = malloc((size_t)nin * sizeof *shapes);
    if (!ins || !shapes) {
        free(ins);
        free(shapes);
        return nomem(c, err);
    }
    si_result st = SI_OK;
    char b1[128], b2[128];
    for (int i = 0; i < nin && st == SI_OK; i++) {
        ins[i] = lc_in(c, i);
        const core_tensor *ti = lc_tensor(c, ins[i]);
        shapes[i] = one;
        /* tfjs's converter reshapes inputs whose shape differs only in unit dims */
        if (!core_shape_eq(&ti->shape, &t0->shape)) {
            core_shape q0 = {0}, qi = {0};
            for (int d = 0; d < t0->shape.rank; d++)
                if (t0->shape.d[d] != 1)
                    q0.d[q0.rank++] = t0->shape.d[d];
            for (int d = 0; d < ti->shape.rank; d++)
                if (ti->shape.d[d] != 1)
                    qi.d[qi.rank++] = ti->shape.d[d];
            if (!core_shape_eq(&q0, &qi) || core_shape_count(&ti->shape) != cnt)
                st = lc_fail(c, err, SI_ERR_SHAPE, "inputs differ in shape: %s and %s",
                             shp(&t0->shape, b1, sizeof b1), shp(&ti->shape, b2, sizeof b2));
        }
        if (st == SI_OK && ti->dtype != t0->dtype)
            st = lc_fail(c, err, SI_ERR_SHAPE, "inputs differ in dtype");
    }
    if (st == SI_OK) {
        core_shape os = one;
        os.d[axis] = nin;
        if (nin == 1)
            st = set_alias(c, err, 0, ins[0], &os);
        else
            st = concat_into(c, err, nin, ins, shapes, axis, &os, 0);
    }
    free(ins);
    free(shapes);
    return st;
}

/* ---- transpose, tile, broadcast ---- */

static si_result lower_transpose(lower_ctx *c, si_error *err)
{
    int x, n;
    int64_t perm[MAX_SPEC];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "perm", perm, MAX_SPEC, &n)) != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int r = xs->rank;
    if (n != r)
        return lc_fail(c, err, SI_ERR_SHAPE, "perm has %d entries for rank %d", n, r);
    int used[SI_MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        if (perm[i] < 0 || perm[i] >= r || used[perm[i]])
            return lc_fail(c, err, SI_ERR_SHAPE, "perm is not a permutation of 0..%d", r - 1);
        used[perm[i]] = 1;
    }
    core_shape os = {.rank = r};
    int64_t xstr[SI_MAX_RANK], istr[SI_MAX_RANK], ostr[SI_MAX_RANK];
    core_strides(xs, xstr);
    int order_kept = 1, prev = -1;
    for (int i = 0; i < r; i++) {
        os.d[i] = xs->d[perm[i]];
        istr[i] = xstr[perm[i]];
        if (os.d[i] != 1) {
            order_kept = order_kept && perm[i] > prev;
            prev = (int)perm[i];
        }
    }
    /* moving only unit dims keeps the element order: a reshape */
    if (order_kept)
        return set_alias(c, err, 0, x, &os);
    if (core_shape_count(&os) == 0)
        return set_const(c, err, 0, lc_tensor(c, x)->dtype, &os, NULL);
    core_strides(&os, ostr);
    int t;
    if ((st = new_tensor(c, err, lc_tensor(c, x)->dtype, &os, &t)) != SI_OK ||
        (st = emit_copy(c, err, x, t, r, os.d, istr, ostr, 0, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, 0, t);
    return SI_OK;
}

/* out = x repeated reps[i] times along each axis (reps of the same rank).
 * One copy over the view [reps0, d0, reps1, d1, ...] with stride 0 on the
 * reps dims when that coalesces to ≤ SI_MAX_RANK dims; else one axis a step. */
static si_result emit_tile(lower_ctx *c, si_error *err, int x, const int64_t *reps, int k)
{
    const core_tensor *xt = lc_tensor(c, x);
    si_dtype dt = xt->dtype;
    core_shape xs = xt->shape, os = xs;
    int r = xs.rank;
    for (int i = 0; i < r; i++)
        os.d[i] = xs.d[i] * reps[i];
    si_result st = check_shape(c, err, &os, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(&os) == 0)
        return set_const(c, err, k, dt, &os, NULL);
    int64_t xstr[SI_MAX_RANK], ostr[SI_MAX_RANK];
    core_strides(&xs, xstr);
    core_strides(&os, ostr);
    int64_t d[MAX_VIEW] = {0}, is[MAX_VIEW] = {0}, ost[MAX_VIEW] = {0};
    int m = 0;
    for (int i = 0; i < r; i++) {
        d[m] = reps[i], is[m] = 0, ost[m] = xs.d[i] * ostr[i], m++;
        d[m] = xs.d[i], is[m] = xstr[i], ost[m] = ostr[i], m++;
    }
    int64_t cd[MAX_VIEW], cis[MAX_VIEW], cos_[MAX_VIEW];
    int big = coalesce(m, d, is, ost, cd, cis, cos_) > SI_MAX_RANK;
    int t;
    if (!big) {
        if ((st = new_tensor(c, err, dt, &os, &t)) != SI_OK ||
            (st = emit_copy(c, err, x, t, m, d, is, ost, 0, 0, 0)) != SI_OK)
            return st;
        lc_set_output(c, k, t);
        return SI_OK;
    }
    /* one axis at a time: [outer, rep, d, inner] */
    int cur = x;
    core_shape cs = xs;
    for (int i = 0; i < r; i++) {
        if (reps[i] == 1)
            continue;
        int64_t outer = 1, inner = 1;
        for (int j = 0; j < i; j++)
            outer *= cs.d[j];
        for (int j = i + 1; j < r; j++)
            inner *= cs.d[j];
        core_shape ns = cs;
        ns.d[i] *= reps[i];
        int64_t vd[4] = {outer, reps[i], cs.d[i], inner};
        int64_t vi[4] = {cs.d[i] * inner, 0, inner, 1};
        int64_t vo[4] = {reps[i] * cs.d[i] * inner, cs.d[i] * inner, inner, 1};
        if ((st = new_tensor(c, err, dt, &ns, &t)) != SI_OK ||
            (st = emit_copy(c, err, cur, t, 4, vd, vi, vo, 0, 0, 0)) != SI_OK)
            return st;
        cur = t;
        cs = ns;
    }
    lc_set_output(c, k, cur);
    return SI_OK;
}

static si_result lower_tile(lower_ctx *c, si_error *err)
{
    int x, n;
    int64_t reps[MAX_SPEC];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "multiples", reps, MAX_SPEC, &n)) != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    if (n != xs->rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "multiples has %d entries for rank %d", n, xs->rank);
    int all_one = 1;
    for (int i = 0; i < n; i++) {
        if (reps[i] < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative multiple %lld", (long long)reps[i]);
        all_one = all_one && reps[i] == 1;
    }
    if (all_one)
        return set_alias(c, err, 0, x, xs);
    return emit_tile(c, err, x, reps, 0);
}

static si_result lower_broadcast_to(lower_ctx *c, si_error *err)
{
    int x, n;
    int64_t v[MAX_SPEC];
    char b1[128], b2[128];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "shape", v, MAX_SPEC, &n)) != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    const core_shape *xs = &xt->shape;
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "target rank %d (at most %d)", n, SI_MAX_RANK);
    core_shape os = {.rank = n};
    for (int i = 0; i < n; i++)
        os.d[i] = v[i];
    if ((st = check_shape(c, err, &os, "the target shape")) != SI_OK)
        return st;
    if (n < xs->rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "cannot broadcast %s to the lower rank %s",
                       shp(xs, b1, sizeof b1), shp(&os, b2, sizeof b2));
    int64_t xstr[SI_MAX_RANK], istr[SI_MAX_RANK], ostr[SI_MAX_RANK];
    core_strides(xs, xstr);
    int same = 1;
    for (int i = 0; i < n; i++) {
        int j = i - (n - xs->rank);
        int64_t xd = j >= 0 ? xs->d[j] : 1;
        if (xd != os.d[i] && xd != 1)
            return lc_fail(c, err, SI_ERR_SHAPE, "cannot broadcast %s to %s",
                           shp(xs, b1, sizeof b1), shp(&os, b2, sizeof b2));
        same = same && xd == os.d[i];
        istr[i] = (j >= 0 && xd != 1) ? xstr[j] : 0;
    }
    if (same)
        return set_alias(c, err, 0, x, &os);
    if (core_shape_count(&os) == 0)
        return set_const(c, err, 0, xt->dtype, &os, NULL);
    core_strides(&os, ostr);
    int t;
    if ((st = new_tensor(c, err, xt->dtype, &os, &t)) != SI_OK ||
        (st = emit_copy(c, err, x, t, n, os.d, istr, ostr, 0, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, 0, t);
    return SI_OK;
}

/* ---- pad ---- */

static si_result lower_pad(lower_ctx *c, si_error *err)
{
    const char *op = lc_node(c)->op;
    int x, n;
    int64_t pads[2 * SI_MAX_RANK + 2];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = const_ints(c, err, 1, "paddings", pads, 2 * SI_MAX_RANK + 2, &n)) != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    const core_shape *xs = &xt->shape;
    int r = xs->rank;
    if (r == 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "cannot pad a scalar");
    if (n != 2 * r)
        return lc_fail(c, err, SI_ERR_SHAPE, "paddings has %d values for rank %d", n, r);
    int mode = 0;
    double value = 0;
    if (!strcmp(op, "MirrorPad")) {
        const char *m = lc_attr_str(c, "mode", "");
        if (!strcasecmp(m, "REFLECT"))
            mode = 1;
        else if (!strcasecmp(m, "SYMMETRIC"))
            mode = 2;
        else
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "mode '%s'", m);
    } else if (!strcmp(op, "PadV2")) {
        if (lc_in(c, 2) >= 0 && (st = const_scalar(c, err, 2, "constant_values", &value)) != SI_OK)
            return st;
    } else {
        value = lc_attr_float(c, "constant_value", 0.0);
    }
    ck_step s = {.kind = CK_PAD, .n_in = 1, .in = {x}};
    ck_pad_p *p = &s.u.pad;
    core_shape os = {.rank = r};
    int zero = 1;
    for (int i = 0; i < r; i++) {
        int64_t b = pads[2 * i], a = pads[2 * i + 1];
        int64_t lim = mode == 1 ? xs->d[i] - 1 : xs->d[i];
        if (b < 0 || a < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative padding in dimension %d", i);
        if (mode && (b > lim || a > lim))
            return lc_fail(c, err, SI_ERR_SHAPE,
                           "padding in dimension %d exceeds %lld for input size %lld", i,
                           (long long)lim, (long long)xs->d[i]);
        os.d[i] = b + xs->d[i] + a;
        p->in_dim[i] = (int32_t)xs->d[i];
        p->before[i] = (int32_t)b;
        zero = zero && b == 0 && a == 0;
    }
    if (zero)
        return set_alias(c, err, 0, x, &os);
    if ((st = check_shape(c, err, &os, "the output")) != SI_OK)
        return st;
    if (xt->dtype != SI_FLOAT32) {
        int32_t iv = store_as(SI_INT32, value); /* Int32Array.fill truncates */
        if (xt->dtype == SI_BOOL)
            iv = iv != 0;
        value = (double)iv;
    }
    if (core_shape_count(&os) == 0)
        return set_const(c, err, 0, xt->dtype, &os, NULL);
    if (core_shape_count(xs) == 0 && mode == 0) {
        /* nothing to copy: all padding */
        int64_t cnt = core_shape_count(&os);
        int32_t *v = malloc((size_t)cnt * CORE_ELEM);
        if (!v)
            return nomem(c, err);
        int32_t bits = store_as(xt->dtype == SI_FLOAT32 ? SI_FLOAT32 : SI_INT32, value);
        for (int64_t i = 0; i < cnt; i++)
            v[i] = bits;
        st = set_const(c, err, 0, xt->dtype, &os, v);
        free(v);
        return st;
    }
    p->rank = r;
    for (int i = 0; i < r; i++)
        p->out_dim[i] = (int32_t)os.d[i];
    p->mode = mode;
    p->value = (float)value;
    if ((st = new_tensor(c, err, xt->dtype, &os, &s.out)) != SI_OK)
        return st;
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

/* ---- gather ---- */

static si_result lower_gather(lower_ctx *c, si_error *err)
{
    int v2 = !strcmp(lc_node(c)->op, "GatherV2");
    int x, ind, axis = 0;
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK || (st = input_tensor(c, err, 1, "indices", &ind)) != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    const core_shape *is = &lc_tensor(c, ind)->shape;
    si_dtype dt = lc_tensor(c, x)->dtype;
    if (v2) {
        if (lc_attr_int(c, "batch_dims", 0) != 0)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "batch_dims other than 0");
        int64_t a[MAX_SPEC];
        int n;
        if (lc_in(c, 2) >= 0) {
            if ((st = const_ints(c, err, 2, "axis", a, MAX_SPEC, &n)) != SI_OK)
                return st;
            if (n < 1)
                return lc_fail(c, err, SI_ERR_SHAPE, "axis argument is empty");
        } else {
            a[0] = 0;
        }
        if ((st = norm_axis(c, err, a[0], xs->rank, &axis)) != SI_OK)
            return st;
    } else if (xs->rank == 0) {
        return lc_fail(c, err, SI_ERR_SHAPE, "cannot gather from a scalar");
    }
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
    if ((st = check_shape(c, err, &os, "the output")) != SI_OK)
        return st;
    /* tfjs rejects indices outside [0, n): check them when they are known */
    const core_buf *iv = lc_value(c, 1, &st, err);
    if (st != SI_OK)
        return st;
    int64_t k = core_shape_count(is);
    for (int64_t j = 0; iv && j < k; j++) {
        double v = index_at(iv, j);
        if (v < 0 || v >= (double)xs->d[axis])
            return lc_fail(c, err, SI_ERR_SHAPE, "index %g is not in [0, %lld)", v,
                           (long long)xs->d[axis]);
    }
    if (core_shape_count(&os) == 0)
        return set_const(c, err, 0, dt, &os, NULL);
    ck_step s = {.kind = CK_GATHER, .n_in = 2, .in = {x, ind}};
    s.u.gather = (ck_gather_p){.outer = (int32_t)outer, .n = (int32_t)xs->d[axis],
                               .inner = (int32_t)inner, .k = (int32_t)k};
    if ((st = new_tensor(c, err, dt, &os, &s.out)) != SI_OK)
        return st;
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

static si_result lower_gather_nd(lower_ctx *c, si_error *err)
{
    int x, ind;
    si_result st = input_tensor(c, err, 0, "params", &x);
    if (st != SI_OK || (st = input_tensor(c, err, 1, "indices", &ind)) != SI_OK)
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
    if ((st = check_shape(c, err, &os, "the output")) != SI_OK)
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
        return set_const(c, err, 0, xt->dtype, &os, NULL);
    ck_step s = {.kind = CK_GATHERND, .n_in = 2, .in = {x, ind}};
    s.u.gathernd.k = (int32_t)k;
    s.u.gathernd.d = d;
    s.u.gathernd.slice = (int32_t)slice;
    for (int i = 0; i < d; i++)
        s.u.gathernd.pdim[i] = (int32_t)xs->d[i];
    if ((st = new_tensor(c, err, xt->dtype, &os, &s.out)) != SI_OK)
        return st;
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

/* ---- depth/space/batch rearrangements: one strided copy each ---- */

/* Row-major strides of a view's dims (the output side of a copy). */
static void view_strides(int n, const int64_t *dims, int64_t *str)
{
    int64_t s = 1;
    for (int i = n - 1; i >= 0; i--) {
        str[i] = s;
        s *= dims[i];
    }
}

/* Copies x into a new tensor of shape os, walking os in the order of the view
 * dims (whose row-major layout is os's) and reading x with istr; sets output k. */
static si_result emit_view(lower_ctx *c, si_error *err, int k, int x, const core_shape *os, int n,
                           const int64_t *dims, const int64_t *istr)
{
    si_dtype dt = lc_tensor(c, x)->dtype;
    si_result st = check_shape(c, err, os, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(os) == 0)
        return set_const(c, err, k, dt, os, NULL);
    int64_t ostr[MAX_VIEW];
    view_strides(n, dims, ostr);
    int t;
    if ((st = new_tensor(c, err, dt, os, &t)) != SI_OK ||
        (st = emit_copy(c, err, x, t, n, dims, istr, ostr, 0, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, k, t);
    return SI_OK;
}

/* DepthToSpace / SpaceToDepth, NHWC, DCR order (the only one tfjs has):
 * depth index (i * bs + j) * C + c holds the pixel (h * bs + i, w * bs + j). */
static si_result lower_depth_space(lower_ctx *c, si_error *err)
{
    int to_space = !strcmp(lc_node(c)->op, "DepthToSpace");
    int x;
    char b1[128];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    const char *fmt = lc_attr_str(c, "data_format", "NHWC");
    if (strcasecmp(fmt, "NHWC"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "data_format '%s' (only NHWC)", fmt);
    int64_t bs = lc_attr_int(c, "block_size", -1);
    if (bs < 2 || bs > 65536)
        return lc_fail(c, err, SI_ERR_SHAPE, "block_size %lld (must be at least 2)", (long long)bs);
    if (xs->rank != 4)
        return lc_fail(c, err, SI_ERR_SHAPE, "input %s is not rank 4", shp(xs, b1, sizeof b1));
    int64_t n = xs->d[0], h = xs->d[1], w = xs->d[2], ch = xs->d[3];
    core_shape os = {.rank = 4};
    if (to_space) {
        if (ch % (bs * bs))
            return lc_fail(c, err, SI_ERR_SHAPE, "depth of %s is not a multiple of %lld",
                           shp(xs, b1, sizeof b1), (long long)(bs * bs));
        int64_t oc = ch / (bs * bs);
        os = (core_shape){.rank = 4, .d = {n, h * bs, w * bs, oc}};
        /* output as [n, h, i, w, j, oc] */
        int64_t dims[6] = {n, h, bs, w, bs, oc};
        int64_t istr[6] = {h * w * ch, w * ch, bs * oc, ch, oc, 1};
        return emit_view(c, err, 0, x, &os, 6, dims, istr);
    }
    if (h % bs || w % bs)
        return lc_fail(c, err, SI_ERR_SHAPE, "height and width of %s are not multiples of %lld",
                       shp(xs, b1, sizeof b1), (long long)bs);
    os = (core_shape){.rank = 4, .d = {n, h / bs, w / bs, ch * bs * bs}};
    /* output as [n, h/bs, w/bs, i, j, ch] */
    int64_t dims[6] = {n, h / bs, w / bs, bs, bs, ch};
    int64_t istr[6] = {h * w * ch, bs * w * ch, bs * ch, w * ch, ch, 1};
    return emit_view(c, err, 0, x, &os, 6, dims, istr);
}

/* block_shape (M values) and paddings/crops ([M, 2], non-negative) of the
 * *ToBatchND / BatchTo*ND ops, checked against x's rank. */
static si_result block_args(lower_ctx *c, si_error *err, const core_shape *xs, const char *what,
                            int64_t *block, int64_t *pads, int *m)
{
    int np;
    si_result st = const_ints(c, err, 1, "block_shape", block, SI_MAX_RANK, m);
    if (st != SI_OK || (st = const_ints(c, err, 2, what, pads, 2 * SI_MAX_RANK, &np)) != SI_OK)
        return st;
    if (*m < 1 || xs->rank < 1 + *m)
        return lc_fail(c, err, SI_ERR_SHAPE, "block_shape has %d values for rank %d", *m,
                       xs->rank);
    if (np != 2 * *m)
        return lc_fail(c, err, SI_ERR_SHAPE, "%s has %d values for %d block dims", what, np, *m);
    for (int i = 0; i < *m; i++) {
        if (block[i] < 1)
            return lc_fail(c, err, SI_ERR_SHAPE, "block_shape value %lld", (long long)block[i]);
        if (pads[2 * i] < 0 || pads[2 * i + 1] < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative %s", what);
    }
    return SI_OK;
}

/* tfjs: pad the M spatial dims with zeros, then out[(j_0..j_{M-1}) * B + b, y.., rest]
 * = padded[b, y_i * block_i + j_i, rest], block index j row-major. */
static si_result lower_space_to_batch(lower_ctx *c, si_error *err)
{
    int x, m;
    int64_t block[SI_MAX_RANK], pads[2 * SI_MAX_RANK];
    char b1[128];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    core_shape xs = xt->shape, ps = xs;
    if ((st = block_args(c, err, &xs, "paddings", block, pads, &m)) != SI_OK)
        return st;
    int padded = 0;
    int64_t prod = 1;
    for (int i = 0; i < m; i++) {
        ps.d[i + 1] = xs.d[i + 1] + pads[2 * i] + pads[2 * i + 1];
        if (ps.d[i + 1] % block[i])
            return lc_fail(c, err, SI_ERR_SHAPE, "padded dim %d of %s is not a multiple of %lld",
                           i + 1, shp(&xs, b1, sizeof b1), (long long)block[i]);
        padded = padded || pads[2 * i] || pads[2 * i + 1];
        prod *= block[i];
    }
    if ((st = check_shape(c, err, &ps, "the padded input")) != SI_OK)
        return st;
    core_shape os = ps;
    os.d[0] = xs.d[0] * prod;
    for (int i = 0; i < m; i++)
        os.d[i + 1] = ps.d[i + 1] / block[i];
    if ((st = check_shape(c, err, &os, "the output")) != SI_OK)
        return st;
    if (core_shape_count(&os) == 0)
        return set_const(c, err, 0, xt->dtype, &os, NULL);
    if (core_shape_count(&xs) == 0) /* all padding */
        return set_const(c, err, 0, xt->dtype, &os, NULL);
    int src = x;
    if (padded) {
        ck_step s = {.kind = CK_PAD, .n_in = 1, .in = {x}};
        s.u.pad.rank = xs.rank;
        for (int i = 0; i < xs.rank; i++) {
            s.u.pad.in_dim[i] = (int32_t)xs.d[i];
            s.u.pad.out_dim[i] = (int32_t)ps.d[i];
            s.u.pad.before[i] = (int32_t)(i >= 1 && i <= m ? pads[2 * (i - 1)] : 0);
        }
        if ((st = new_tensor(c, err, xt->dtype, &ps, &s.out)) != SI_OK)
            return st;
        lc_emit(c, &s);
        src = s.out;
    }
    int64_t pstr[SI_MAX_RANK], rest = 1;
    core_strides(&ps, pstr);
    for (int i = m + 1; i < ps.rank; i++)
        rest *= ps.d[i];
    /* output walked as [j_0..j_{M-1}, b, y_0..y_{M-1}, rest] */
    int64_t dims[MAX_VIEW], istr[MAX_VIEW];
    int v = 0;
    for (int i = 0; i < m; i++)
        dims[v] = block[i], istr[v++] = pstr[i + 1];
    dims[v] = xs.d[0], istr[v++] = pstr[0];
    for (int i = 0; i < m; i++)
        dims[v] = os.d[i + 1], istr[v++] = block[i] * pstr[i + 1];
    dims[v] = rest, istr[v++] = 1;
    return emit_view(c, err, 0, src, &os, v, dims, istr);
}

/* The inverse: out[b, y_i * block_i + j_i - crop_i, rest] = x[(j..) * B + b, y.., rest]. */
static si_result lower_batch_to_space(lower_ctx *c, si_error *err)
{
    int x, m;
    int64_t block[SI_MAX_RANK], crops[2 * SI_MAX_RANK];
    char b1[128];
    si_result st = input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    core_shape xs = xt->shape;
    if ((st = block_args(c, err, &xs, "crops", block, crops, &m)) != SI_OK)
        return st;
    int64_t prod = 1;
    for (int i = 0; i < m; i++)
        prod *= block[i];
    if (xs.d[0] % prod)
        return lc_fail(c, err, SI_ERR_SHAPE, "batch of %s is not a multiple of %lld",
                       shp(&xs, b1, sizeof b1), (long long)prod);
    core_shape us = xs, os; /* uncropped, cropped */
    us.d[0] = xs.d[0] / prod;
    int cropped = 0;
    for (int i = 0; i < m; i++) {
        us.d[i + 1] = xs.d[i + 1] * block[i];
        if (crops[2 * i] + crops[2 * i + 1] > us.d[i + 1])
            return lc_fail(c, err, SI_ERR_SHAPE, "crops of dim %d exceed its size %lld", i + 1,
                           (long long)us.d[i + 1]);
        cropped = cropped || crops[2 * i] || crops[2 * i + 1];
    }
    os = us;
    for (int i = 0; i < m; i++)
        os.d[i + 1] -= crops[2 * i] + crops[2 * i + 1];
    if ((st = check_shape(c, err, &us, "the uncropped output")) != SI_OK)
        return st;
    if (core_shape_count(&os) == 0)
        return set_const(c, err, 0, xt->dtype, &os, NULL);
    int64_t xstr[SI_MAX_RANK], rest = 1;
    core_strides(&xs, xstr);
    for (int i = m + 1; i < xs.rank; i++)
        rest *= xs.d[i];
    /* uncropped output walked as [b, y_0, j_0, ..., y_{M-1}, j_{M-1}, rest] */
    int64_t dims[MAX_VIEW], istr[MAX_VIEW], jstr = us.d[0] * xstr[0];
    int v = 2 * m + 1;
    dims[v] = rest, istr[v] = 1;
    for (int i = m - 1; i >= 0; i--) {
        dims[2 * i + 1] = xs.d[i + 1], istr[2 * i + 1] = xstr[i + 1];
        dims[2 * i + 2] = block[i], istr[2 * i + 2] = jstr;
        jstr *= block[i];
    }
    dims[0] = us.d[0], istr[0] = xstr[0];
    if (!cropped)
        return emit_view(c, err, 0, x, &os, v + 1, dims, istr);
    int64_t ostr[MAX_VIEW];
    view_strides(v + 1, dims, ostr);
    int t;
    if ((st = new_tensor(c, err, xt->dtype, &us, &t)) != SI_OK ||
        (st = emit_copy(c, err, x, t, v + 1, dims, istr, ostr, 0, 0, 0)) != SI_OK)
        return st;
    int64_t begin[SI_MAX_RANK] = {0}, step[SI_MAX_RANK];
    for (int i = 0; i < us.rank; i++)
        step[i] = 1;
    for (int i = 0; i < m; i++)
        begin[i + 1] = crops[2 * i];
    return emit_slice(c, err, 0, t, begin, step, os.d, &os);
}

const core_op_def core_ops_shape[] = {
    {"Identity", lower_identity}, {"Snapshot", lower_identity},
    {"StopGradient", lower_identity}, {"IdentityN", lower_identity_n},
    {"Reshape", lower_reshape}, {"Squeeze", lower_squeeze},
    {"ExpandDims", lower_expand_dims}, {"Shape", lower_shape}, {"ShapeN", lower_shape_n},
    {"Size", lower_size_rank}, {"Rank", lower_size_rank},
    {"StridedSlice", lower_strided_slice}, {"Slice", lower_slice},
    {"ConcatV2", lower_concat}, {"Concat", lower_concat}, {"Pack", lower_pack},
    {"Unpack", lower_unpack}, {"Split", lower_split}, {"SplitV", lower_split_v},
    {"Pad", lower_pad}, {"PadV2", lower_pad}, {"MirrorPad", lower_pad},
    {"Transpose", lower_transpose}, {"GatherV2", lower_gather}, {"Gather", lower_gather},
    {"GatherNd", lower_gather_nd}, {"Fill", lower_fill}, {"ZerosLike", lower_zeros_ones_like},
    {"OnesLike", lower_zeros_ones_like}, {"Range", lower_range}, {"Tile", lower_tile},
    {"BroadcastTo", lower_broadcast_to}, {"DepthToSpace", lower_depth_space},
    {"SpaceToDepth", lower_depth_space}, {"SpaceToBatchND", lower_space_to_batch},
    {"BatchToSpaceND", lower_batch_to_space},
    {NULL, NULL}};
