/* Shape ops: reshapes (aliases, no copy), transpose, tile/broadcast, and the
 * ops whose value follows from static shapes alone (Shape, Size, Rank, Fill,
 * ZerosLike, Range ...), which become host constants; the helpers the whole
 * family shares (op_shape.h) and its op table, whose slicing and gathering ops
 * are in op_slice.c and whose concat, pack, pad and depth/space/batch ops are
 * in op_concat.c. Semantics follow TensorFlow.js's CPU kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "op_shape.h"

/* ---- host references ---- */

/* One 2-D block of a copy: dims a (in_stride 1: reads run along it) and l (the
 * innermost output dim), 32 x 32 at a time so that the strided side stays in
 * cache; a transpose's strided reads one element a line were most of its time. */
enum { COPY_BLOCK = 32 };

static void copy_2d(const int32_t *x, int32_t *y, int64_t na, int64_t nl, int64_t isa,
                    int64_t osa, int64_t isl, int64_t osl)
{
    for (int64_t a0 = 0; a0 < na; a0 += COPY_BLOCK)
        for (int64_t l0 = 0; l0 < nl; l0 += COPY_BLOCK) {
            int64_t a1 = a0 + COPY_BLOCK < na ? a0 + COPY_BLOCK : na;
            int64_t l1 = l0 + COPY_BLOCK < nl ? l0 + COPY_BLOCK : nl;
            for (int64_t l = l0; l < l1; l++)
                for (int64_t a = a0; a < a1; a++)
                    y[a * osa + l * osl] = x[a * isa + l * isl];
        }
}

void ck_host_copy(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_copy_p *p = &s->u.copy;
    const int32_t *x = ins[0]->data;
    int32_t *y = out->data; /* 4-byte elements copied as bits: float, int and bool alike */
    int r = p->rank;
    for (int d = 0; d < r; d++)
        if (p->dim[d] <= 0)
            return;
    /* The inner part: the last dim (l), and where reads are strided along it,
     * the dim a whose reads are contiguous; the rest is walked one by one. */
    int l = r - 1, a = -1;
    if (r > 0 && p->in_stride[l] != 1)
        for (int d = r - 2; d >= 0 && a < 0; d--)
            if (p->in_stride[d] == 1 && p->dim[d] > 1)
                a = d;
    int outer[SI_MAX_RANK], n_outer = 0;
    for (int d = 0; d < r - 1; d++)
        if (d != a)
            outer[n_outer++] = d;
    int64_t nl = r ? p->dim[l] : 1, isl = r ? p->in_stride[l] : 0, osl = r ? p->out_stride[l] : 0;
    int32_t idx[SI_MAX_RANK] = {0};
    int64_t ii = p->in_offset, io = p->out_offset;
    for (;;) {
        if (a >= 0)
            copy_2d(x + ii, y + io, p->dim[a], nl, p->in_stride[a], p->out_stride[a], isl, osl);
        else if (isl == 1 && osl == 1)
            memcpy(y + io, x + ii, (size_t)nl * sizeof *y);
        else
            for (int64_t e = 0; e < nl; e++)
                y[io + e * osl] = x[ii + e * isl];
        int k = n_outer - 1;
        for (; k >= 0; k--) {
            int d = outer[k];
            ii += p->in_stride[d];
            io += p->out_stride[d];
            if (++idx[d] < p->dim[d])
                break;
            ii -= (int64_t)p->in_stride[d] * p->dim[d];
            io -= (int64_t)p->out_stride[d] * p->dim[d];
            idx[d] = 0;
        }
        if (k < 0)
            return;
    }
}

/* ---- lowering helpers ---- */

si_result sh_nomem(const lower_ctx *c, si_error *err)
{
    return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
}

const char *sh_str(const core_shape *s, char *buf, size_t n) { return core_shape_str(s, buf, n); }

/* Shapes whose element counts and offsets fit the kernels' int32 slots. */
si_result sh_check_shape(const lower_ctx *c, si_error *err, const core_shape *s, const char *what)
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
                           sh_str(s, b, sizeof b));
    }
    return SI_OK;
}

/* Integer values of constant input i (a shape argument); fails when it depends
 * on the model's input or holds more than max values. */
si_result sh_const_ints(lower_ctx *c, si_error *err, int i, const char *what, int64_t *out,
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
si_result sh_const_scalar(lower_ctx *c, si_error *err, int i, const char *what, double *v)
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

si_result sh_input_tensor(const lower_ctx *c, si_error *err, int i, const char *what, int *t)
{
    *t = lc_in(c, i);
    if (*t < 0)
        return lc_fail(c, err, SI_ERR_FORMAT, "missing input %d (%s)", i, what);
    return SI_OK;
}

/* Axis in [-rank, rank) → [0, rank). */
si_result sh_norm_axis(const lower_ctx *c, si_error *err, int64_t axis, int rank, int *out)
{
    *out = 0;
    if (axis < -rank || axis >= rank || rank == 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld is out of range for rank %d",
                       (long long)axis, rank);
    *out = (int)(axis < 0 ? axis + rank : axis);
    return SI_OK;
}

si_result sh_set_alias(lower_ctx *c, si_error *err, int k, int t, const core_shape *shape)
{
    int a = lc_new_alias(c, t, shape);
    if (a < 0)
        return sh_nomem(c, err);
    lc_set_output(c, k, a);
    return SI_OK;
}

/* A host constant of shape/dtype; data may be NULL for zeros. */
si_result sh_set_const(lower_ctx *c, si_error *err, int k, si_dtype dt, const core_shape *shape,
                       const void *data)
{
    int64_t n = core_shape_count(shape);
    void *zeros = NULL;
    if (!data) {
        zeros = calloc((size_t)(n ? n : 1), CORE_ELEM);
        if (!zeros)
            return sh_nomem(c, err);
        data = zeros;
    }
    int t = lc_new_const(c, dt, shape, data);
    free(zeros);
    if (t < 0)
        return sh_nomem(c, err);
    lc_set_output(c, k, t);
    return SI_OK;
}

si_result sh_new_tensor(lower_ctx *c, si_error *err, si_dtype dt, const core_shape *shape, int *t)
{
    *t = lc_new_tensor(c, dt, shape);
    return *t < 0 ? sh_nomem(c, err) : SI_OK;
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

/* Emits one CK_COPY of the region dims[0..n) of x into out. */
si_result sh_emit_copy(lower_ctx *c, si_error *err, int in, int out, int n, const int64_t *dims,
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
si_result sh_emit_slice(lower_ctx *c, si_error *err, int k, int x, const int64_t *begin,
                        const int64_t *step, const int64_t *dims, const core_shape *out_shape)
{
    const core_tensor *xt = lc_tensor(c, x);
    si_dtype dt = xt->dtype;
    int rank = xt->shape.rank;
    si_result st = sh_check_shape(c, err, out_shape, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(out_shape) == 0)
        return sh_set_const(c, err, k, dt, out_shape, NULL);
    int64_t xs[SI_MAX_RANK], istr[SI_MAX_RANK], ostr[SI_MAX_RANK], off = 0, o = 1;
    core_strides(&xt->shape, xs);
    for (int i = rank - 1; i >= 0; i--) {
        off += begin[i] * xs[i];
        istr[i] = step[i] * xs[i];
        ostr[i] = o;
        o *= dims[i];
    }
    int t;
    if ((st = sh_new_tensor(c, err, dt, out_shape, &t)) != SI_OK)
        return st;
    if ((st = sh_emit_copy(c, err, x, t, rank, dims, istr, ostr, off, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, k, t);
    return SI_OK;
}

/* ---- aliases: Identity, Reshape, Squeeze, ExpandDims ---- */

/* Input 0 as x and the integers of constant input 1 (the op's shape, axis,
 * perm or multiples argument, named what). */
static si_result x_and_ints(lower_ctx *c, si_error *err, const char *what, int *x, int64_t *v,
                            int *n)
{
    si_result st = sh_input_tensor(c, err, 0, "x", x);
    if (st != SI_OK)
        return st;
    return sh_const_ints(c, err, 1, what, v, MAX_SPEC, n);
}

/* Input 0 as x and constant input 1 as the shape Reshape or BroadcastTo
 * makes (Reshape's may still hold a -1). */
static si_result x_and_target(lower_ctx *c, si_error *err, int *x, core_shape *s)
{
    int n;
    int64_t v[MAX_SPEC];
    si_result st = x_and_ints(c, err, "shape", x, v, &n);
    if (st != SI_OK)
        return st;
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "target rank %d (at most %d)", n, SI_MAX_RANK);
    *s = (core_shape){.rank = n};
    for (int i = 0; i < n; i++)
        s->d[i] = v[i];
    return SI_OK;
}

/* Output k: a new tensor of shape os that one CK_COPY of x over the view
 * dims[0..n) fills; an empty result is a constant instead, as no kernel runs
 * on zero elements. */
static si_result copy_output(lower_ctx *c, si_error *err, int k, int x, const core_shape *os,
                             int n, const int64_t *dims, const int64_t *istr,
                             const int64_t *ostr)
{
    si_dtype dt = lc_tensor(c, x)->dtype;
    if (core_shape_count(os) == 0)
        return sh_set_const(c, err, k, dt, os, NULL);
    int t;
    si_result st;
    if ((st = sh_new_tensor(c, err, dt, os, &t)) != SI_OK ||
        (st = sh_emit_copy(c, err, x, t, n, dims, istr, ostr, 0, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, k, t);
    return SI_OK;
}

static si_result lower_identity(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    return sh_set_alias(c, err, 0, x, &lc_tensor(c, x)->shape);
}

static si_result lower_identity_n(lower_ctx *c, si_error *err)
{
    for (int i = 0; i < lc_n_inputs(c); i++) {
        int x = lc_in(c, i);
        si_result st = sh_set_alias(c, err, i, x, &lc_tensor(c, x)->shape);
        if (st != SI_OK)
            return st;
    }
    return SI_OK;
}

static si_result lower_reshape(lower_ctx *c, si_error *err)
{
    int x;
    core_shape s;
    char b1[128], b2[128];
    si_result st = x_and_target(c, err, &x, &s);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int64_t size = core_shape_count(xs), prod = 1;
    int implicit = -1;
    for (int i = 0; i < s.rank; i++) {
        if (s.d[i] == -1) {
            if (implicit >= 0)
                return lc_fail(c, err, SI_ERR_SHAPE, "shape has more than one -1");
            implicit = i;
        } else if (s.d[i] < 0) {
            return lc_fail(c, err, SI_ERR_SHAPE, "shape has a negative size %lld", (long long)s.d[i]);
        } else {
            prod *= s.d[i];
        }
    }
    if (implicit >= 0) {
        if (prod == 0 || size % prod != 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "cannot infer the -1 of the shape for %s",
                           sh_str(xs, b1, sizeof b1));
        s.d[implicit] = size / prod;
    }
    if (core_shape_count(&s) != size)
        return lc_fail(c, err, SI_ERR_SHAPE, "cannot reshape %s to %s", sh_str(xs, b1, sizeof b1),
                       sh_str(&s, b2, sizeof b2));
    return sh_set_alias(c, err, 0, x, &s);
}

static si_result lower_squeeze(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
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
        if ((st = sh_norm_axis(c, err, axes[i], xs->rank, &a)) != SI_OK)
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
    return sh_set_alias(c, err, 0, x, &s);
}

static si_result lower_expand_dims(lower_ctx *c, si_error *err)
{
    int x, n;
    int64_t v[MAX_SPEC];
    si_result st = x_and_ints(c, err, "axis", &x, v, &n);
    if (st != SI_OK)
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
    return sh_set_alias(c, err, 0, x, &s);
}

/* ---- constants from static shapes ---- */

/* Output k: the shape of tensor x as a constant vector. */
static si_result shape_const(lower_ctx *c, si_error *err, int k, int x)
{
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int32_t v[SI_MAX_RANK];
    for (int i = 0; i < xs->rank; i++)
        v[i] = (int32_t)xs->d[i];
    core_shape s = {.rank = 1, .d = {xs->rank}};
    return sh_set_const(c, err, k, SI_INT32, &s, v); /* tfjs: int32 whatever out_type says */
}

static si_result lower_shape(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    return shape_const(c, err, 0, x);
}

/* tfjs's graph executor makes ShapeN's outputs with tensor1d(shape) and no
 * dtype: float32, whatever out_type says (Shape's are int32). */
static si_result lower_shape_n(lower_ctx *c, si_error *err)
{
    for (int k = 0; k < lc_n_inputs(c); k++) {
        const core_shape *xs = &lc_tensor(c, lc_in(c, k))->shape;
        float v[SI_MAX_RANK];
        for (int i = 0; i < xs->rank; i++)
            v[i] = (float)xs->d[i];
        core_shape s = {.rank = 1, .d = {xs->rank}};
        si_result st = sh_set_const(c, err, k, SI_FLOAT32, &s, v);
        if (st != SI_OK)
            return st;
    }
    return SI_OK;
}

static si_result lower_size_rank(lower_ctx *c, si_error *err)
{
    int x;
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int64_t v = !strcmp(lc_node(c)->op, "Rank") ? xs->rank : core_shape_count(xs);
    int32_t v32 = (int32_t)v;
    core_shape s = {.rank = 0};
    return sh_set_const(c, err, 0, SI_INT32, &s, &v32);
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
int32_t sh_store_as(si_dtype dt, double v)
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
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    core_shape s = xt->shape;
    si_dtype dt = xt->dtype;
    if (!strcmp(lc_node(c)->op, "ZerosLike"))
        return sh_set_const(c, err, 0, dt, &s, NULL);
    int64_t n = core_shape_count(&s);
    int32_t *v = malloc((size_t)(n ? n : 1) * CORE_ELEM);
    if (!v)
        return sh_nomem(c, err);
    int32_t one = sh_store_as(dt, 1.0);
    for (int64_t i = 0; i < n; i++)
        v[i] = one;
    st = sh_set_const(c, err, 0, dt, &s, v);
    free(v);
    return st;
}

static si_result lower_fill(lower_ctx *c, si_error *err)
{
    int64_t dims[MAX_SPEC];
    int n;
    si_result st = sh_const_ints(c, err, 0, "dims", dims, MAX_SPEC, &n);
    if (st != SI_OK)
        return st;
    int vt;
    if ((st = sh_input_tensor(c, err, 1, "value", &vt)) != SI_OK)
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
    if ((st = sh_check_shape(c, err, &s, "the output")) != SI_OK)
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
            return sh_set_const(c, err, 0, dt, &s, NULL);
        int t;
        if ((st = sh_new_tensor(c, err, dt, &s, &t)) != SI_OK)
            return st;
        int64_t one = count, zero = 0, unit = 1;
        if ((st = sh_emit_copy(c, err, vt, t, 1, &one, &zero, &unit, 0, 0, 0)) != SI_OK)
            return st;
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    double v = vb->dtype == SI_FLOAT32 ? (double)((const float *)vb->data)[0]
                                       : (double)((const int32_t *)vb->data)[0];
    int32_t *data = malloc((size_t)(count ? count : 1) * CORE_ELEM);
    if (!data)
        return sh_nomem(c, err);
    int32_t bits = sh_store_as(dt, v);
    for (int64_t i = 0; i < count; i++)
        data[i] = bits;
    st = sh_set_const(c, err, 0, dt, &s, data);
    free(data);
    return st;
}

static si_result lower_range(lower_ctx *c, si_error *err)
{
    double start, stop, step;
    si_result st;
    if ((st = sh_const_scalar(c, err, 0, "start", &start)) != SI_OK ||
        (st = sh_const_scalar(c, err, 1, "limit", &stop)) != SI_OK ||
        (st = sh_const_scalar(c, err, 2, "delta", &step)) != SI_OK)
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
        return sh_nomem(c, err);
    if (n > 0) {
        /* each value from the previous one as stored in the typed array */
        float pf = (float)start;
        int32_t pi = sh_store_as(SI_INT32, start);
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                pf = (float)((double)pf + step);
                pi = sh_store_as(SI_INT32, (double)pi + step);
            }
            if (dt == SI_FLOAT32)
                memcpy(&v[i], &pf, 4);
            else
                v[i] = pi;
        }
    }
    st = sh_set_const(c, err, 0, dt, &s, v);
    free(v);
    return st;
}

/* ---- transpose, tile, broadcast ---- */

static si_result lower_transpose(lower_ctx *c, si_error *err)
{
    int x, n;
    int64_t perm[MAX_SPEC];
    si_result st = x_and_ints(c, err, "perm", &x, perm, &n);
    if (st != SI_OK)
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
        return sh_set_alias(c, err, 0, x, &os);
    core_strides(&os, ostr);
    return copy_output(c, err, 0, x, &os, r, os.d, istr, ostr);
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
    si_result st = sh_check_shape(c, err, &os, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(&os) == 0)
        return sh_set_const(c, err, k, dt, &os, NULL);
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
    if (!big)
        return copy_output(c, err, k, x, &os, m, d, is, ost);
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
        int t;
        if ((st = sh_new_tensor(c, err, dt, &ns, &t)) != SI_OK ||
            (st = sh_emit_copy(c, err, cur, t, 4, vd, vi, vo, 0, 0, 0)) != SI_OK)
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
    si_result st = x_and_ints(c, err, "multiples", &x, reps, &n);
    if (st != SI_OK)
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
        return sh_set_alias(c, err, 0, x, xs);
    return emit_tile(c, err, x, reps, 0);
}

static si_result lower_broadcast_to(lower_ctx *c, si_error *err)
{
    int x;
    core_shape os;
    char b1[128], b2[128];
    si_result st = x_and_target(c, err, &x, &os);
    if (st != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    const core_shape *xs = &xt->shape;
    int n = os.rank;
    if ((st = sh_check_shape(c, err, &os, "the target shape")) != SI_OK)
        return st;
    if (n < xs->rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "cannot broadcast %s to the lower rank %s",
                       sh_str(xs, b1, sizeof b1), sh_str(&os, b2, sizeof b2));
    int64_t xstr[SI_MAX_RANK], istr[SI_MAX_RANK], ostr[SI_MAX_RANK];
    core_strides(xs, xstr);
    int same = 1;
    for (int i = 0; i < n; i++) {
        int j = i - (n - xs->rank);
        int64_t xd = j >= 0 ? xs->d[j] : 1;
        if (xd != os.d[i] && xd != 1)
            return lc_fail(c, err, SI_ERR_SHAPE, "cannot broadcast %s to %s",
                           sh_str(xs, b1, sizeof b1), sh_str(&os, b2, sizeof b2));
        same = same && xd == os.d[i];
        istr[i] = (j >= 0 && xd != 1) ? xstr[j] : 0;
    }
    if (same)
        return sh_set_alias(c, err, 0, x, &os);
    core_strides(&os, ostr);
    return copy_output(c, err, 0, x, &os, n, os.d, istr, ostr);
}

const core_op_def core_ops_shape[] = {
    {"Identity", lower_identity}, {"Snapshot", lower_identity},
    {"StopGradient", lower_identity}, {"IdentityN", lower_identity_n},
    {"Reshape", lower_reshape}, {"Squeeze", lower_squeeze},
    {"ExpandDims", lower_expand_dims}, {"Shape", lower_shape}, {"ShapeN", lower_shape_n},
    {"Size", lower_size_rank}, {"Rank", lower_size_rank},
    {"StridedSlice", sh_lower_strided_slice}, {"Slice", sh_lower_slice},
    {"ConcatV2", sh_lower_concat}, {"Concat", sh_lower_concat}, {"Pack", sh_lower_pack},
    {"Unpack", sh_lower_unpack}, {"Split", sh_lower_split}, {"SplitV", sh_lower_split_v},
    {"Pad", sh_lower_pad}, {"PadV2", sh_lower_pad}, {"MirrorPad", sh_lower_pad},
    {"Transpose", lower_transpose}, {"GatherV2", sh_lower_gather}, {"Gather", sh_lower_gather},
    {"GatherNd", sh_lower_gather_nd}, {"Fill", lower_fill}, {"ZerosLike", lower_zeros_ones_like},
    {"OnesLike", lower_zeros_ones_like}, {"Range", lower_range}, {"Tile", lower_tile},
    {"BroadcastTo", lower_broadcast_to}, {"DepthToSpace", sh_lower_depth_space},
    {"SpaceToDepth", sh_lower_depth_space}, {"SpaceToBatchND", sh_lower_space_to_batch},
    {"BatchToSpaceND", sh_lower_batch_to_space},
    {NULL, NULL}};

