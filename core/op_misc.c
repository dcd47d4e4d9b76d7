/* Scans and the band and response normalizations: Cumsum and Cumprod (a scan
 * kind, as tfjs-backend-cpu's Cumsum.js/Cumprod.js), LRN (its own kind, LRN.js)
 * and MatrixBandPart (a select against a band mask, as tfjs-core's bandPart
 * with the inputs tfjs-converter passes it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"

int core_emit_binary(lower_ctx *c, int op, int a, int b, si_error *err, int *out_t);

/* tfjs's int32 product: both int32s as float64, multiplied (rounded to 53
 * bits), stored into an Int32Array (ToInt32: modulo 2^32). |a*b| < 2^62, so
 * the double is an integer that int64 holds. */
static int32_t js_mul_i32(int32_t a, int32_t b)
{
    double p = (double)a * (double)b;
    return (int32_t)(uint32_t)(uint64_t)(int64_t)p;
}

void ck_host_scan(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_scan_p *p = &s->u.scan;
    int sum = p->op == CK_SCAN_SUM, is_f = out->dtype == SI_FLOAT32;
    const float *xf = ins[0]->data;
    const int32_t *xi = ins[0]->data;
    float *yf = out->data;
    int32_t *yi = out->data;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t k = 0; k < p->inner; k++) {
            int64_t at = o * p->n * p->inner + k, step = p->inner;
            if (p->reverse) {
                at += (int64_t)(p->n - 1) * p->inner;
                step = -step;
            }
            int64_t prev = -1;
            for (int64_t j = 0; j < p->n; j++, prev = at, at += step) {
                if (is_f) {
                    float x = p->exclusive ? (j ? xf[prev] : 0.f) : xf[at];
                    yf[at] = j == 0 ? (p->exclusive ? (sum ? 0.f : 1.f) : x)
                             : sum  ? x + yf[prev]
                                    : x * yf[prev];
                } else {
                    int32_t x = p->exclusive ? (j ? xi[prev] : 0) : xi[at];
                    yi[at] = j == 0 ? (p->exclusive ? (sum ? 0 : 1) : x)
                             : sum  ? (int32_t)((uint32_t)x + (uint32_t)yi[prev])
                                    : js_mul_i32(x, yi[prev]);
                }
            }
        }
}

/* Cumsum / Cumprod (x, axis; exclusive, reverse). tfjs passes the axis to its
 * kernel as given: a negative one makes it build a malformed tensor (shape
 * [undefined, ...]), so here it counts from the end as in TF. A scalar x has
 * no axis to scan: tfjs's loop never runs and leaves its zeros (Cumsum) or
 * ones (Cumprod). bool scans as int32, the upcast tfjs does. */
static si_result lower_scan(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x and axis");
    int sum = !strcmp(lc_node(c)->op, "Cumsum");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    core_shape xs = x->shape;
    si_dtype dt = x->dtype == SI_FLOAT32 ? SI_FLOAT32 : SI_INT32;
    int64_t ax[1];
    int n = lc_value_ints(c, 1, ax, 1, err);
    if (n == -2)
        return err ? err->status : SI_ERR_ARG;
    if (n == -1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "axis must be a constant");
    if (n == 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis is empty");
    int64_t count = core_shape_count(&xs);
    if (count > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    if (xs.rank == 0) {
        int32_t one = sum ? 0 : 1;
        float onef = (float)one;
        int t = lc_new_const(c, dt, &xs, dt == SI_FLOAT32 ? (const void *)&onef : &one);
        if (t < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    int64_t a = ax[0] < 0 ? ax[0] + xs.rank : ax[0];
    if (a < 0 || a >= xs.rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld out of range for rank %d",
                       (long long)ax[0], xs.rank);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; i++)
        outer *= xs.d[i];
    for (int i = (int)a + 1; i < xs.rank; i++)
        inner *= xs.d[i];
    ck_step s = {.kind = CK_SCAN, .n_in = 1, .in = {lc_in(c, 0)}};
    s.u.scan = (ck_scan_p){.op = sum ? CK_SCAN_SUM : CK_SCAN_PROD, .outer = (int32_t)outer,
                           .n = (int32_t)xs.d[a], .inner = (int32_t)inner,
                           .exclusive = lc_attr_bool(c, "exclusive", 0),
                           .reverse = lc_attr_bool(c, "reverse", 0)};
    s.out = lc_new_tensor(c, dt, &xs);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

/* tfjs's lRN: the window's squares summed in float64, then
 * x * Math.pow(bias + alpha * sum, -beta), stored float32. */
void ck_host_lrn(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_lrn_p *p = &s->u.lrn;
    const float *x = ins[0]->data;
    float *y = out->data;
    for (int64_t o = 0; o < p->outer; o++)
        for (int64_t ch = 0; ch < p->c; ch++) {
            const float *row = x + o * p->c;
            int64_t lo = ch - p->radius > 0 ? ch - p->radius : 0;
            int64_t hi = ch + p->radius < p->c - 1 ? ch + p->radius : p->c - 1;
            double sum = 0.0;
            for (int64_t k = lo; k <= hi; k++)
                sum += (double)row[k] * (double)row[k];
            y[o * p->c + ch] = (float)((double)row[ch] *
                                       pow((double)p->bias + (double)p->alpha * sum, -(double)p->beta));
        }
}

/* LRN (x; depth_radius, bias, alpha, beta): rank 4 NHWC, or rank 3 (tfjs
 * reshapes it to 4 with a batch of 1), float32. */
static si_result lower_lrn(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs one input");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    char sb[96];
    if (x->shape.rank != 3 && x->shape.rank != 4)
        return lc_fail(c, err, SI_ERR_SHAPE, "x must be rank 3 or 4, got %s",
                       core_shape_str(&x->shape, sb, sizeof sb));
    if (x->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "x must be float32");
    int64_t radius = lc_attr_int(c, "depth_radius", 5);
    if (radius < 0 || radius > INT32_MAX / 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "depth_radius %lld", (long long)radius);
    int64_t count = core_shape_count(&x->shape), ch = x->shape.d[x->shape.rank - 1];
    if (count > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    ck_step s = {.kind = CK_LRN, .n_in = 1, .in = {lc_in(c, 0)}};
    s.u.lrn = (ck_lrn_p){.outer = (int32_t)(ch ? count / ch : 0), .c = (int32_t)ch,
                         .radius = (int32_t)radius,
                         .bias = (float)lc_attr_float(c, "bias", 1.0),
                         .alpha = (float)lc_attr_float(c, "alpha", 1.0),
                         .beta = (float)lc_attr_float(c, "beta", 0.5)};
    s.out = lc_new_tensor(c, SI_FLOAT32, &x->shape);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

/* An int32 scalar constant of this node. */
static int int_const(lower_ctx *c, int32_t v)
{
    core_shape sc = {.rank = 0};
    return lc_new_const(c, SI_INT32, &sc, &v);
}

/* clamp(nl) as tfjs's bandPart: where(nl < 0, dim, minimum(nl, dim)). */
static si_result band_limit(lower_ctx *c, si_error *err, int nl, int64_t dim, int *out)
{
    int dim_t = int_const(c, (int32_t)dim), zero = int_const(c, 0), neg, mn;
    if (dim_t < 0 || zero < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    si_result st;
    if ((st = core_emit_binary(c, CK_B_LESS, nl, zero, err, &neg)) != SI_OK ||
        (st = core_emit_binary(c, CK_B_MIN, nl, dim_t, err, &mn)) != SI_OK)
        return st;
    const core_tensor *tn = lc_tensor(c, neg);
    ck_step s = {.kind = CK_SELECT, .n_in = 3, .in = {neg, dim_t, mn}};
    s.u.select.rank = tn->shape.rank;
    int64_t stride[SI_MAX_RANK];
    core_strides(&tn->shape, stride);
    for (int i = 0; i < tn->shape.rank; i++) {
        s.u.select.out_dim[i] = (int32_t)tn->shape.d[i];
        s.u.select.c_stride[i] = s.u.select.b_stride[i] = tn->shape.d[i] == 1 ? 0 : (int32_t)stride[i];
    }
    s.u.select.count = (int32_t)core_shape_count(&tn->shape);
    s.out = lc_new_tensor(c, SI_INT32, &tn->shape);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    *out = s.out;
    return SI_OK;
}

/* MatrixBandPart(input, num_lower, num_upper). tfjs-converter's op list maps
 * numLower and numUpper both to input 1, so tfjs bands by num_lower on both
 * sides and never reads num_upper: the lower limit is num_lower (M if
 * negative, at most M), the upper one num_lower too (N if negative, at most
 * N). Kept: i - j <= lower and i - j >= -upper. The mask is steps on num_lower
 * (folded on the host when it is a constant) and one select. An empty matrix
 * makes tfjs's reshape throw; here it gives the empty output. */
static si_result lower_band_part(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 3)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs input, num_lower and num_upper");
    int xt = lc_in(c, 0), nl = lc_in(c, 1);
    const core_tensor *x = lc_tensor(c, xt), *tl = lc_tensor(c, nl);
    core_shape xs = x->shape;
    if (xs.rank < 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "input must have rank >= 2");
    if (tl->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "num_lower must be int32 (tfjs asserts it)");
    if (core_shape_count(&tl->shape) != 1 || tl->shape.rank > 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "num_lower must be a scalar");
    int64_t count = core_shape_count(&xs), m = xs.d[xs.rank - 2], nc = xs.d[xs.rank - 1];
    if (count > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    if (count == 0) {
        lc_set_output(c, 0, lc_new_alias(c, xt, &xs));
        return SI_OK;
    }
    core_shape ms = {.rank = 2, .d = {m, nc}};
    int32_t *ij = malloc((size_t)(m * nc) * sizeof *ij);
    if (!ij)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < nc; j++)
            ij[i * nc + j] = (int32_t)(i - j);
    int ij_t = lc_new_const(c, SI_INT32, &ms, ij);
    free(ij);
    if (ij_t < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    int lower, upper, zero = int_const(c, 0), neg_upper, below, above, in_band;
    si_result st;
    if ((st = band_limit(c, err, nl, m, &lower)) != SI_OK ||
        (st = band_limit(c, err, nl, nc, &upper)) != SI_OK)
        return st;
    if (zero < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    if ((st = core_emit_binary(c, CK_B_SUB, zero, upper, err, &neg_upper)) != SI_OK ||
        (st = core_emit_binary(c, CK_B_LESSEQ, ij_t, lower, err, &below)) != SI_OK ||
        (st = core_emit_binary(c, CK_B_GREATEREQ, ij_t, neg_upper, err, &above)) != SI_OK ||
        (st = core_emit_binary(c, CK_B_AND, below, above, err, &in_band)) != SI_OK)
        return st;
    /* the mask [M, N] over every matrix, zeros elsewhere */
    core_shape sc = {.rank = 0};
    int32_t zbits = 0;
    int zt = lc_new_const(c, x->dtype, &sc, &zbits);
    if (zt < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    ck_step s = {.kind = CK_SELECT, .n_in = 3, .in = {in_band, xt, zt}};
    ck_select_p *p = &s.u.select;
    p->rank = xs.rank;
    int64_t stride[SI_MAX_RANK];
    core_strides(&xs, stride);
    for (int i = 0; i < xs.rank; i++) {
        p->out_dim[i] = (int32_t)xs.d[i];
        p->a_stride[i] = xs.d[i] == 1 ? 0 : (int32_t)stride[i];
    }
    p->c_stride[xs.rank - 2] = m == 1 ? 0 : (int32_t)nc;
    p->c_stride[xs.rank - 1] = nc == 1 ? 0 : 1;
    p->count = (int32_t)count;
    s.out = lc_new_tensor(c, x->dtype, &xs);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

const core_op_def core_ops_misc[] = {
    {"Cumsum", lower_scan}, {"Cumprod", lower_scan}, {"LRN", lower_lrn},
    {"MatrixBandPart", lower_band_part}, {NULL, NULL}};
