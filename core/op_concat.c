/* Shape ops that lay their inputs out anew by strided copies: ConcatV2,
 * Pack, Pad/PadV2/MirrorPad (with its host reference), and the depth/space/
 * batch rearrangements. Semantics follow TensorFlow.js's CPU kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "op_shape.h"

/* ---- host reference ---- */

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
/* ---- concat, pack ---- */

/* Copies each input (already viewed with out's rank) into out at its offset
 * along axis; the first copy writes, the others accumulate. */
static si_result concat_into(lower_ctx *c, si_error *err, int n, const int *ins,
                             const core_shape *in_shapes, int axis, const core_shape *out_shape,
                             int k)
{
    si_dtype dt = lc_tensor(c, ins[0])->dtype;
    si_result st = sh_check_shape(c, err, out_shape, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(out_shape) == 0)
        return sh_set_const(c, err, k, dt, out_shape, NULL);
    int nonempty = 0, last = -1;
    for (int i = 0; i < n; i++)
        if (core_shape_count(&in_shapes[i]) > 0) {
            nonempty++;
            last = i;
        }
    if (nonempty == 1) /* the others are empty: out is that input */
        return sh_set_alias(c, err, k, ins[last], out_shape);
    int t;
    if ((st = sh_new_tensor(c, err, dt, out_shape, &t)) != SI_OK)
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
        st = sh_emit_copy(c, err, ins[i], t, s->rank, s->d, istr, ostr, 0, off * ostr[axis],
                          !first);
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


/* The input ids and shapes of an n-input op (Concat, Pack), both or neither. */
static si_result alloc_inputs(lower_ctx *c, si_error *err, int nin, int **ins, core_shape **shapes)
{
    *ins = malloc((size_t)nin * sizeof **ins);
    *shapes = malloc((size_t)nin * sizeof **shapes);
    if (!*ins || !*shapes) {
        free(*ins);
        free(*shapes);
        return sh_nomem(c, err);
    }
    return SI_OK;
}

si_result sh_lower_concat(lower_ctx *c, si_error *err)
{
    int v2 = !strcmp(lc_node(c)->op, "ConcatV2");
    int nin = lc_n_inputs(c) - 1;
    if (nin < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs tensors and an axis");
    int first = v2 ? 0 : 1, axis_in = v2 ? nin : 0;
    /* tfjs's executor takes the first N tensors, N defaulting to 2 */
    int64_t nattr = lc_attr_int(c, "N", 2);
    if (nattr >= 1 && nattr < nin)
        nin = (int)nattr;
    int n, axis = 0;
    int64_t a[MAX_SPEC];
    si_result st = sh_const_ints(c, err, axis_in, "axis", a, MAX_SPEC, &n);
    if (st != SI_OK)
        return st;
    if (n < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis argument is empty");
    int *ins;
    core_shape *shapes;
    if (alloc_inputs(c, err, nin, &ins, &shapes) != SI_OK)
        return SI_ERR_NOMEM;
    for (int i = 0; i < nin; i++) {
        ins[i] = lc_in(c, first + i);
        shapes[i] = lc_tensor(c, ins[i])->shape;
    }
    const core_tensor *t0 = lc_tensor(c, ins[0]);
    core_shape os = t0->shape;
    char b1[128], b2[128];
    st = sh_norm_axis(c, err, a[0], os.rank, &axis);
    for (int i = 1; i < nin && st == SI_OK; i++) {
        const core_shape *s = &shapes[i];
        st = check_concat_dtype(c, err, t0->dtype, lc_tensor(c, ins[i])->dtype);
        if (st == SI_OK && s->rank != os.rank)
            st = lc_fail(c, err, SI_ERR_SHAPE, "inputs differ in rank: %s and %s",
                         sh_str(&t0->shape, b1, sizeof b1), sh_str(s, b2, sizeof b2));
        for (int d = 0; d < os.rank && st == SI_OK; d++)
            if (d != axis && s->d[d] != os.d[d])
                st = lc_fail(c, err, SI_ERR_SHAPE, "cannot concatenate %s and %s on axis %d",
                             sh_str(&t0->shape, b1, sizeof b1), sh_str(s, b2, sizeof b2), axis);
        if (st == SI_OK)
            os.d[axis] += s->d[axis];
    }
    if (st == SI_OK)
        st = concat_into(c, err, nin, ins, shapes, axis, &os, 0);
    free(ins);
    free(shapes);
    return st;
}

si_result sh_lower_pack(lower_ctx *c, si_error *err)
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
    int *ins;
    core_shape *shapes;
    if (alloc_inputs(c, err, nin, &ins, &shapes) != SI_OK)
        return SI_ERR_NOMEM;
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
                             sh_str(&t0->shape, b1, sizeof b1), sh_str(&ti->shape, b2, sizeof b2));
        }
        if (st == SI_OK && ti->dtype != t0->dtype)
            st = lc_fail(c, err, SI_ERR_SHAPE, "inputs differ in dtype");
    }
    if (st == SI_OK) {
        core_shape os = one;
        os.d[axis] = nin;
        if (nin == 1)
            st = sh_set_alias(c, err, 0, ins[0], &os);
        else
            st = concat_into(c, err, nin, ins, shapes, axis, &os, 0);
    }
    free(ins);
    free(shapes);
    return st;
}

/* ---- pad ---- */

si_result sh_lower_pad(lower_ctx *c, si_error *err)
{
    const char *op = lc_node(c)->op;
    int x, n;
    int64_t pads[2 * SI_MAX_RANK + 2];
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
    if (st != SI_OK ||
        (st = sh_const_ints(c, err, 1, "paddings", pads, 2 * SI_MAX_RANK + 2, &n)) != SI_OK)
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
        if (lc_in(c, 2) >= 0 &&
            (st = sh_const_scalar(c, err, 2, "constant_values", &value)) != SI_OK)
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
        return sh_set_alias(c, err, 0, x, &os);
    if ((st = sh_check_shape(c, err, &os, "the output")) != SI_OK)
        return st;
    if (xt->dtype != SI_FLOAT32) {
        int32_t iv = sh_store_as(SI_INT32, value); /* Int32Array.fill truncates */
        if (xt->dtype == SI_BOOL)
            iv = iv != 0;
        value = (double)iv;
    }
    if (core_shape_count(&os) == 0)
        return sh_set_const(c, err, 0, xt->dtype, &os, NULL);
    if (core_shape_count(xs) == 0 && mode == 0) {
        /* nothing to copy: all padding */
        int64_t cnt = core_shape_count(&os);
        int32_t *v = malloc((size_t)cnt * CORE_ELEM);
        if (!v)
            return sh_nomem(c, err);
        int32_t bits = sh_store_as(xt->dtype == SI_FLOAT32 ? SI_FLOAT32 : SI_INT32, value);
        for (int64_t i = 0; i < cnt; i++)
            v[i] = bits;
        st = sh_set_const(c, err, 0, xt->dtype, &os, v);
        free(v);
        return st;
    }
    p->rank = r;
    for (int i = 0; i < r; i++)
        p->out_dim[i] = (int32_t)os.d[i];
    p->mode = mode;
    p->value = (float)value;
    if ((st = sh_new_tensor(c, err, xt->dtype, &os, &s.out)) != SI_OK)
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
    si_result st = sh_check_shape(c, err, os, "the output");
    if (st != SI_OK)
        return st;
    if (core_shape_count(os) == 0)
        return sh_set_const(c, err, k, dt, os, NULL);
    int64_t ostr[MAX_VIEW];
    view_strides(n, dims, ostr);
    int t;
    if ((st = sh_new_tensor(c, err, dt, os, &t)) != SI_OK ||
        (st = sh_emit_copy(c, err, x, t, n, dims, istr, ostr, 0, 0, 0)) != SI_OK)
        return st;
    lc_set_output(c, k, t);
    return SI_OK;
}

/* DepthToSpace / SpaceToDepth, NHWC, DCR order (the only one tfjs has):
 * depth index (i * bs + j) * C + c holds the pixel (h * bs + i, w * bs + j). */
si_result sh_lower_depth_space(lower_ctx *c, si_error *err)
{
    int to_space = !strcmp(lc_node(c)->op, "DepthToSpace");
    int x;
    char b1[128];
    si_result st = sh_input_tensor(c, err, 0, "x", &x);
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
        return lc_fail(c, err, SI_ERR_SHAPE, "input %s is not rank 4", sh_str(xs, b1, sizeof b1));
    int64_t n = xs->d[0], h = xs->d[1], w = xs->d[2], ch = xs->d[3];
    core_shape os = {.rank = 4};
    if (to_space) {
        if (ch % (bs * bs))
            return lc_fail(c, err, SI_ERR_SHAPE, "depth of %s is not a multiple of %lld",
                           sh_str(xs, b1, sizeof b1), (long long)(bs * bs));
        int64_t oc = ch / (bs * bs);
        os = (core_shape){.rank = 4, .d = {n, h * bs, w * bs, oc}};
        /* output as [n, h, i, w, j, oc] */
        int64_t dims[6] = {n, h, bs, w, bs, oc};
        int64_t istr[6] = {h * w * ch, w * ch, bs * oc, ch, oc, 1};
        return emit_view(c, err, 0, x, &os, 6, dims, istr);
    }
    if (h % bs || w % bs)
        return lc_fail(c, err, SI_ERR_SHAPE, "height and width of %s are not multiples of %lld",
                       sh_str(xs, b1, sizeof b1), (long long)bs);
    os = (core_shape){.rank = 4, .d = {n, h / bs, w / bs, ch * bs * bs}};
    /* output as [n, h/bs, w/bs, i, j, ch] */
    int64_t dims[6] = {n, h / bs, w / bs, bs, bs, ch};
    int64_t istr[6] = {h * w * ch, bs * w * ch, bs * ch, w * ch, ch, 1};
    return emit_view(c, err, 0, x, &os, 6, dims, istr);
}

/* The input x (its shape in *xs), block_shape (M values) and paddings/crops
 * ([M, 2], non-negative) of the *ToBatchND / BatchTo*ND ops, checked against
 * x's rank. */
static si_result block_args(lower_ctx *c, si_error *err, const char *what, int *x,
                            core_shape *xs, int64_t *block, int64_t *pads, int *m)
{
    int np;
    si_result st = sh_input_tensor(c, err, 0, "x", x);
    if (st != SI_OK)
        return st;
    *xs = lc_tensor(c, *x)->shape;
    if ((st = sh_const_ints(c, err, 1, "block_shape", block, SI_MAX_RANK, m)) != SI_OK ||
        (st = sh_const_ints(c, err, 2, what, pads, 2 * SI_MAX_RANK, &np)) != SI_OK)
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
si_result sh_lower_space_to_batch(lower_ctx *c, si_error *err)
{
    int x, m;
    int64_t block[SI_MAX_RANK], pads[2 * SI_MAX_RANK];
    char b1[128];
    core_shape xs;
    si_result st = block_args(c, err, "paddings", &x, &xs, block, pads, &m);
    if (st != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    core_shape ps = xs;
    int padded = 0;
    int64_t prod = 1;
    for (int i = 0; i < m; i++) {
        ps.d[i + 1] = xs.d[i + 1] + pads[2 * i] + pads[2 * i + 1];
        if (ps.d[i + 1] % block[i])
            return lc_fail(c, err, SI_ERR_SHAPE, "padded dim %d of %s is not a multiple of %lld",
                           i + 1, sh_str(&xs, b1, sizeof b1), (long long)block[i]);
        padded = padded || pads[2 * i] || pads[2 * i + 1];
        prod *= block[i];
    }
    if ((st = sh_check_shape(c, err, &ps, "the padded input")) != SI_OK)
        return st;
    core_shape os = ps;
    os.d[0] = xs.d[0] * prod;
    for (int i = 0; i < m; i++)
        os.d[i + 1] = ps.d[i + 1] / block[i];
    if ((st = sh_check_shape(c, err, &os, "the output")) != SI_OK)
        return st;
    if (core_shape_count(&os) == 0)
        return sh_set_const(c, err, 0, xt->dtype, &os, NULL);
    if (core_shape_count(&xs) == 0) /* all padding */
        return sh_set_const(c, err, 0, xt->dtype, &os, NULL);
    int src = x;
    if (padded) {
        ck_step s = {.kind = CK_PAD, .n_in = 1, .in = {x}};
        s.u.pad.rank = xs.rank;
        for (int i = 0; i < xs.rank; i++) {
            s.u.pad.in_dim[i] = (int32_t)xs.d[i];
            s.u.pad.out_dim[i] = (int32_t)ps.d[i];
            s.u.pad.before[i] = (int32_t)(i >= 1 && i <= m ? pads[2 * (i - 1)] : 0);
        }
        if ((st = sh_new_tensor(c, err, xt->dtype, &ps, &s.out)) != SI_OK)
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
si_result sh_lower_batch_to_space(lower_ctx *c, si_error *err)
{
    int x, m;
    int64_t block[SI_MAX_RANK], crops[2 * SI_MAX_RANK];
    core_shape xs;
    si_result st = block_args(c, err, "crops", &x, &xs, block, crops, &m);
    if (st != SI_OK)
        return st;
    const core_tensor *xt = lc_tensor(c, x);
    int64_t prod = 1;
    for (int i = 0; i < m; i++)
        prod *= block[i];
    char b1[128];
    if (xs.d[0] % prod)
        return lc_fail(c, err, SI_ERR_SHAPE, "batch of %s is not a multiple of %lld",
                       sh_str(&xs, b1, sizeof b1), (long long)prod);
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
    if ((st = sh_check_shape(c, err, &us, "the uncropped output")) != SI_OK)
        return st;
    if (core_shape_count(&os) == 0)
        return sh_set_const(c, err, 0, xt->dtype, &os, NULL);
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
    if ((st = sh_new_tensor(c, err, xt->dtype, &us, &t)) != SI_OK ||
        (st = sh_emit_copy(c, err, x, t, v + 1, dims, istr, ostr, 0, 0, 0)) != SI_OK)
        return st;
    int64_t begin[SI_MAX_RANK] = {0}, step[SI_MAX_RANK];
    for (int i = 0; i < us.rank; i++)
        step[i] = 1;
    for (int i = 0; i < m; i++)
        begin[i + 1] = crops[2 * i];
    return sh_emit_slice(c, err, 0, t, begin, step, os.d, &os);
}

