/* Elementwise ops: unary (with Cast), binary with broadcasting, AddN.
 * Semantics follow TensorFlow.js's CPU kernels. */
#include <math.h>
#include <string.h>
#include "ops.h"

/* ---- host references ---- */

static float unary_f(int op, float x, float alpha)
{
    switch (op) {
    case CK_U_NEG: return -x;
    case CK_U_ABS: return fabsf(x);
    case CK_U_RELU: return x < 0.f ? 0.f : x;
    case CK_U_RELU6: return x < 0.f ? 0.f : (x > 6.f ? 6.f : x);
    case CK_U_LEAKYRELU: return x < 0.f ? alpha * x : x;
    case CK_U_ELU: return x >= 0.f ? x : expf(x) - 1.f;
    case CK_U_SELU: {
        const float scale = 1.0507009873554804934193349852946f;
        const float a = 1.6732632423543772848170429916717f;
        return x >= 0.f ? scale * x : scale * a * (expf(x) - 1.f);
    }
    case CK_U_SIGMOID: return 1.f / (1.f + expf(-x));
    case CK_U_TANH: return tanhf(x);
    case CK_U_EXP: return expf(x);
    case CK_U_LOG: return logf(x);
    case CK_U_SQRT: return sqrtf(x);
    case CK_U_RSQRT: return 1.f / sqrtf(x);
    case CK_U_SQUARE: return x * x;
    case CK_U_RECIPROCAL: return 1.f / x;
    case CK_U_FLOOR: return floorf(x);
    case CK_U_CEIL: return ceilf(x);
    case CK_U_ROUND: return rintf(x); /* half to even, as tfjs */
    case CK_U_SIN: return sinf(x);
    case CK_U_COS: return cosf(x);
    case CK_U_TAN: return tanf(x);
    case CK_U_ASIN: return asinf(x);
    case CK_U_ACOS: return acosf(x);
    case CK_U_ATAN: return atanf(x);
    case CK_U_SINH: return sinhf(x);
    case CK_U_COSH: return coshf(x);
    case CK_U_SIGN: return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f);
    case CK_U_SOFTPLUS: return x > 0.f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    case CK_U_ERF: return erff(x);
    case CK_U_EXPM1: return expm1f(x);
    case CK_U_LOG1P: return log1pf(x);
    case CK_U_ASINH: return asinhf(x);
    case CK_U_ACOSH: return acoshf(x);
    case CK_U_ATANH: return atanhf(x);
    case CK_U_HARDSWISH: {
        float r = x + 3.f;
        r = r < 0.f ? 0.f : (r > 6.f ? 6.f : r);
        return x * r / 6.f;
    }
    default: return x;
    }
}

static int32_t unary_i(int op, int32_t x)
{
    switch (op) {
    case CK_U_NEG: return (int32_t)(0u - (uint32_t)x);
    case CK_U_ABS: return x < 0 ? (int32_t)(0u - (uint32_t)x) : x;
    case CK_U_RELU: return x < 0 ? 0 : x;
    case CK_U_RELU6: return x < 0 ? 0 : (x > 6 ? 6 : x);
    case CK_U_SQUARE: return (int32_t)((uint32_t)x * (uint32_t)x);
    case CK_U_SIGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    default: return x;
    }
}

/* float -> int32 as Int32Array.from (ECMAScript's ToInt32): NaN and +-Inf
 * give 0, anything else is truncated toward zero and taken modulo 2^32. */
static int32_t f2i(float v)
{
    if (!isfinite(v))
        return 0;
    double t = fmod(trunc((double)v), 4294967296.0);
    if (t < 0)
        t += 4294967296.0;
    return (int32_t)(uint32_t)t;
}

void ck_host_unary(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_unary_p *p = &s->u.unary;
    const float *xf = ins[0]->data;
    const int32_t *xi = ins[0]->data;
    float *yf = out->data;
    int32_t *yi = out->data;
    for (int32_t i = 0; i < p->count; i++) {
        if (p->op == CK_U_CAST) {
            if (p->in_dtype == SI_FLOAT32 && p->out_dtype == SI_FLOAT32) yf[i] = xf[i];
            else if (p->in_dtype == SI_FLOAT32 && p->out_dtype == SI_INT32) yi[i] = f2i(xf[i]);
            else if (p->in_dtype == SI_FLOAT32) yi[i] = xf[i] != 0.f;
            else if (p->out_dtype == SI_FLOAT32) yf[i] = (float)xi[i];
            else if (p->out_dtype == SI_BOOL) yi[i] = xi[i] != 0;
            else yi[i] = xi[i];
        } else if (p->op == CK_U_LOGICAL_NOT) {
            yi[i] = !xi[i];
        } else if (p->op == CK_U_ISNAN) {
            yi[i] = isnan(xf[i]) ? 1 : 0;
        } else if (p->op == CK_U_ISFINITE) {
            yi[i] = isfinite(xf[i]) ? 1 : 0;
        } else if (p->op == CK_U_ISINF) {
            yi[i] = isinf(xf[i]) ? 1 : 0;
        } else if (p->op == CK_U_CLIP && p->in_dtype == SI_FLOAT32) {
            /* tfjs's clip (clip_impl): NaN fails both tests and passes */
            yf[i] = xf[i] > p->beta ? p->beta : (xf[i] < p->alpha ? p->alpha : xf[i]);
        } else if (p->op == CK_U_CLIP) {
            yi[i] = xi[i] > p->ihi ? p->ihi : (xi[i] < p->ilo ? p->ilo : xi[i]);
        } else if (p->in_dtype == SI_FLOAT32) {
            yf[i] = unary_f(p->op, xf[i], p->alpha);
        } else {
            yi[i] = unary_i(p->op, xi[i]);
        }
    }
}

static float binary_f(int op, float a, float b)
{
    switch (op) {
    case CK_B_ADD: return a + b;
    case CK_B_SUB: return a - b;
    case CK_B_MUL: return a * b;
    case CK_B_DIV: return a / b;
    case CK_B_DIVNONAN: return b == 0.f ? 0.f : a / b;
    case CK_B_MAX: return a > b || isnan(a) ? a : b;
    case CK_B_MIN: return a < b || isnan(a) ? a : b;
    case CK_B_POW: return powf(a, b);
    case CK_B_SQDIFF: return (a - b) * (a - b);
    case CK_B_FLOORDIV: return floorf(a / b);
    case CK_B_FLOORMOD: {
        /* JS's % on the float64 values; rem + b is a float64 sum there */
        float r = fmodf(a, b);
        return ((a < 0.f && b < 0.f) || (a >= 0.f && b >= 0.f)) ? r
                                                                 : (float)fmod((double)r + b, b);
    }
    case CK_B_PRELU: return a < 0.f ? b * a : a;
    case CK_B_ATAN2: return atan2f(a, b);
    default: return 0.f;
    }
}

static int32_t binary_i(int op, int32_t a, int32_t b)
{
    uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
    switch (op) {
    case CK_B_ADD: return (int32_t)(ua + ub);
    case CK_B_SUB: return (int32_t)(ua - ub);
    case CK_B_MUL: return (int32_t)(ua * ub);
    case CK_B_DIV:
    case CK_B_FLOORDIV: return b == 0 ? 0 : (int32_t)floor((double)a / (double)b);
    case CK_B_DIVNONAN: return b == 0 ? 0 : (int32_t)floor((double)a / (double)b);
    case CK_B_MAX: return a > b ? a : b;
    case CK_B_MIN: return a < b ? a : b;
    case CK_B_SQDIFF: return (int32_t)((ua - ub) * (ua - ub));
    case CK_B_FLOORMOD: {
        if (b == 0)
            return 0;
        int32_t r = a % b;
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case CK_B_PRELU: return a < 0 ? (int32_t)(ub * ua) : a;
    case CK_B_POW: return (int32_t)pow((double)a, (double)b);
    case CK_B_BITAND: return a & b;
    default: return 0;
    }
}

static int compare(int op, double a, double b)
{
    switch (op) {
    case CK_B_EQUAL: return a == b;
    case CK_B_NOTEQUAL: return a != b;
    case CK_B_LESS: return a < b;
    case CK_B_LESSEQ: return a <= b;
    case CK_B_GREATER: return a > b;
    case CK_B_GREATEREQ: return a >= b;
    case CK_B_AND: return a != 0 && b != 0;
    case CK_B_OR: return a != 0 || b != 0;
    default: return 0;
    }
}

static double rd(const core_buf *b, int64_t i)
{
    return b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[i]
                                  : (double)((const int32_t *)b->data)[i];
}

void ck_host_binary(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_binary_p *p = &s->u.binary;
    int32_t idx[SI_MAX_RANK] = {0};
    int64_t ia = 0, ib = 0;
    for (int32_t o = 0; o < p->count; o++) {
        if (p->op >= CK_B_EQUAL && p->op <= CK_B_OR) {
            ((int32_t *)out->data)[o] = compare(p->op, rd(ins[0], ia), rd(ins[1], ib));
        } else if (p->out_dtype == SI_FLOAT32) {
            ((float *)out->data)[o] = binary_f(p->op, (float)rd(ins[0], ia), (float)rd(ins[1], ib));
        } else {
            ((int32_t *)out->data)[o] = binary_i(p->op, ((const int32_t *)ins[0]->data)[ia],
                                                 ((const int32_t *)ins[1]->data)[ib]);
        }
        /* odometer over the output index */
        for (int d = p->rank - 1; d >= 0; d--) {
            ia += p->a_stride[d];
            ib += p->b_stride[d];
            if (++idx[d] < p->out_dim[d])
                break;
            ia -= (int64_t)p->a_stride[d] * p->out_dim[d];
            ib -= (int64_t)p->b_stride[d] * p->out_dim[d];
            idx[d] = 0;
        }
    }
}

void ck_host_addn(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_addn_p *p = &s->u.addn;
    for (int32_t i = 0; i < p->count; i++) {
        if (p->dtype == SI_FLOAT32) {
            float acc = ((const float *)ins[0]->data)[i];
            for (int k = 1; k < p->n; k++)
                acc += ((const float *)ins[k]->data)[i];
            ((float *)out->data)[i] = acc;
        } else {
            uint32_t acc = (uint32_t)((const int32_t *)ins[0]->data)[i];
            for (int k = 1; k < p->n; k++)
                acc += (uint32_t)((const int32_t *)ins[k]->data)[i];
            ((int32_t *)out->data)[i] = (int32_t)acc;
        }
    }
}

void ck_host_select(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_select_p *p = &s->u.select;
    int32_t idx[SI_MAX_RANK] = {0};
    int64_t ic = 0, ia = 0, ib = 0;
    const int32_t *c = ins[0]->data, *a = ins[1]->data, *b = ins[2]->data;
    int32_t *y = out->data; /* 4-byte elements: copying bits is dtype-blind */
    for (int32_t o = 0; o < p->count; o++) {
        y[o] = c[ic] ? a[ia] : b[ib];
        for (int d = p->rank - 1; d >= 0; d--) {
            ic += p->c_stride[d];
            ia += p->a_stride[d];
            ib += p->b_stride[d];
            if (++idx[d] < p->out_dim[d])
                break;
            ic -= (int64_t)p->c_stride[d] * p->out_dim[d];
            ia -= (int64_t)p->a_stride[d] * p->out_dim[d];
            ib -= (int64_t)p->b_stride[d] * p->out_dim[d];
            idx[d] = 0;
        }
    }
}

/* ---- lowering ---- */

static const struct { const char *op; int code; } unary_ops[] = {
    {"Neg", CK_U_NEG}, {"Abs", CK_U_ABS}, {"Relu", CK_U_RELU}, {"Relu6", CK_U_RELU6},
    {"LeakyRelu", CK_U_LEAKYRELU}, {"Elu", CK_U_ELU}, {"Selu", CK_U_SELU},
    {"Sigmoid", CK_U_SIGMOID}, {"Tanh", CK_U_TANH}, {"Exp", CK_U_EXP}, {"Log", CK_U_LOG},
    {"Sqrt", CK_U_SQRT}, {"Rsqrt", CK_U_RSQRT}, {"Square", CK_U_SQUARE},
    {"Reciprocal", CK_U_RECIPROCAL}, {"Floor", CK_U_FLOOR}, {"Ceil", CK_U_CEIL},
    {"Round", CK_U_ROUND}, {"Sin", CK_U_SIN}, {"Cos", CK_U_COS}, {"Tan", CK_U_TAN},
    {"Asin", CK_U_ASIN}, {"Acos", CK_U_ACOS}, {"Atan", CK_U_ATAN}, {"Sinh", CK_U_SINH},
    {"Cosh", CK_U_COSH}, {"Sign", CK_U_SIGN}, {"Softplus", CK_U_SOFTPLUS},
    {"LogicalNot", CK_U_LOGICAL_NOT}, {"Cast", CK_U_CAST}, {"Erf", CK_U_ERF},
    {"Expm1", CK_U_EXPM1}, {"Log1p", CK_U_LOG1P}, {"IsNan", CK_U_ISNAN},
    {"Asinh", CK_U_ASINH}, {"Acosh", CK_U_ACOSH}, {"Atanh", CK_U_ATANH},
    {"IsFinite", CK_U_ISFINITE}, {"IsInf", CK_U_ISINF}, {"ClipByValue", CK_U_CLIP},
    {NULL, 0}};

static const struct { const char *op; int code; } binary_ops[] = {
    {"Add", CK_B_ADD}, {"AddV2", CK_B_ADD}, {"BiasAdd", CK_B_ADD}, {"Sub", CK_B_SUB},
    {"Mul", CK_B_MUL}, {"RealDiv", CK_B_DIV}, {"Div", CK_B_DIV}, {"DivNoNan", CK_B_DIVNONAN},
    {"Maximum", CK_B_MAX}, {"Minimum", CK_B_MIN}, {"Pow", CK_B_POW},
    {"SquaredDifference", CK_B_SQDIFF}, {"FloorDiv", CK_B_FLOORDIV}, {"FloorMod", CK_B_FLOORMOD},
    {"Mod", CK_B_FLOORMOD}, {"Prelu", CK_B_PRELU}, {"Atan2", CK_B_ATAN2},
    {"Equal", CK_B_EQUAL}, {"NotEqual", CK_B_NOTEQUAL}, {"Less", CK_B_LESS},
    {"LessEqual", CK_B_LESSEQ}, {"Greater", CK_B_GREATER}, {"GreaterEqual", CK_B_GREATEREQ},
    {"LogicalAnd", CK_B_AND}, {"LogicalOr", CK_B_OR}, {"BitwiseAnd", CK_B_BITAND},
    {NULL, 0}};

/* ClipByValue's bounds, as tfjs's converter reads them (type 'number'): the
 * first element of each bound tensor, which must be known before the run. */
static si_result clip_bounds(lower_ctx *c, si_dtype dt, ck_unary_p *u, si_error *err)
{
    if (lc_n_inputs(c) < 3)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x, clip_value_min and clip_value_max");
    double b[2];
    for (int k = 0; k < 2; k++) {
        si_result st = SI_OK;
        const core_buf *v = lc_value(c, 1 + k, &st, err);
        if (st != SI_OK)
            return st;
        if (!v || core_shape_count(&v->shape) < 1)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                           "clip bound %d must be a constant with at least one element", k);
        b[k] = v->dtype == SI_FLOAT32 ? ((const float *)v->data)[0] : ((const int32_t *)v->data)[0];
    }
    if (b[0] > b[1]) /* tfjs: clipByValue asserts min <= max */
        return lc_fail(c, err, SI_ERR_ARG, "clip_value_min %g is greater than clip_value_max %g",
                       b[0], b[1]);
    u->alpha = (float)b[0];
    u->beta = (float)b[1];
    /* int32 x: tfjs writes the bound into an Int32Array (truncates) */
    u->ilo = dt == SI_FLOAT32 ? 0 : (int32_t)b[0];
    u->ihi = dt == SI_FLOAT32 ? 0 : (int32_t)b[1];
    return SI_OK;
}

static si_result lower_unary(lower_ctx *c, si_error *err)
{
    const char *op = lc_node(c)->op;
    int code = -1;
    for (int i = 0; unary_ops[i].op; i++)
        if (!strcmp(unary_ops[i].op, op))
            code = unary_ops[i].code;
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs one input");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    si_dtype out_dt = x->dtype;
    if (code == CK_U_CAST) {
        int64_t dst = lc_attr_int(c, "DstT", -1);
        if (dst < 0 || dst > SI_BOOL)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "cast to this dtype");
        out_dt = (si_dtype)dst;
    } else if (code == CK_U_LOGICAL_NOT || code == CK_U_ISNAN || code == CK_U_ISFINITE ||
               code == CK_U_ISINF) {
        out_dt = SI_BOOL;
    }
    ck_step s = {.kind = CK_UNARY, .n_in = 1};
    s.in[0] = lc_in(c, 0);
    s.u.unary.op = code;
    s.u.unary.count = (int32_t)core_shape_count(&x->shape);
    s.u.unary.in_dtype = x->dtype;
    s.u.unary.out_dtype = out_dt;
    s.u.unary.alpha = (float)lc_attr_float(c, "alpha", 0.2);
    if (code == CK_U_CLIP) {
        si_result st = clip_bounds(c, x->dtype, &s.u.unary, err);
        if (st != SI_OK)
            return st;
    }
    s.out = lc_new_tensor(c, out_dt, &x->shape);
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

/* Fills a binary step's strides for a and b broadcast to out. */
static void broadcast_strides(const core_shape *in, const core_shape *out, int32_t *stride)
{
    int64_t st[SI_MAX_RANK];
    core_strides(in, st);
    for (int i = 0; i < out->rank; i++) {
        int j = i - (out->rank - in->rank);
        stride[i] = (j >= 0 && in->d[j] != 1) ? (int32_t)st[j] : 0;
    }
}

int core_emit_binary(lower_ctx *c, int op, int a, int b, si_error *err, int *out_t);

int core_emit_binary(lower_ctx *c, int op, int a, int b, si_error *err, int *out_t)
{
    const core_tensor *ta = lc_tensor(c, a), *tb = lc_tensor(c, b);
    core_shape out;
    char sa[96], sb[96];
    if (core_broadcast_shape(&ta->shape, &tb->shape, &out) != 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "shapes %s and %s do not broadcast",
                       core_shape_str(&ta->shape, sa, sizeof sa),
                       core_shape_str(&tb->shape, sb, sizeof sb));
    int is_cmp = op >= CK_B_EQUAL && op <= CK_B_OR;
    si_dtype dt = (ta->dtype == SI_FLOAT32 || tb->dtype == SI_FLOAT32) ? SI_FLOAT32 : ta->dtype;
    if (op == CK_B_DIV && dt != SI_FLOAT32)
        op = CK_B_FLOORDIV; /* tfjs's RealDiv on int32 tensors floors */
    ck_step s = {.kind = CK_BINARY, .n_in = 2};
    s.in[0] = a;
    s.in[1] = b;
    s.u.binary.op = op;
    s.u.binary.rank = out.rank;
    for (int i = 0; i < out.rank; i++)
        s.u.binary.out_dim[i] = (int32_t)out.d[i];
    broadcast_strides(&ta->shape, &out, s.u.binary.a_stride);
    broadcast_strides(&tb->shape, &out, s.u.binary.b_stride);
    s.u.binary.in_dtype = dt;
    s.u.binary.out_dtype = is_cmp ? SI_BOOL : dt;
    s.u.binary.count = (int32_t)core_shape_count(&out);
    s.out = lc_new_tensor(c, is_cmp ? SI_BOOL : dt, &out);
    lc_emit(c, &s);
    *out_t = s.out;
    return SI_OK;
}

static si_result lower_binary(lower_ctx *c, si_error *err)
{
    const char *op = lc_node(c)->op;
    int code = -1;
    for (int i = 0; binary_ops[i].op; i++)
        if (!strcmp(binary_ops[i].op, op))
            code = binary_ops[i].code;
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs two inputs");
    /* tfjs's bitwiseAnd takes int32 only (its graph executor reads inputs
     * named a and b where the op list names them x and y, so a tfjs graph
     * cannot run it at all; the kernel is a & b per element, broadcast as TF) */
    if (code == CK_B_BITAND && (lc_tensor(c, lc_in(c, 0))->dtype != SI_INT32 ||
                                lc_tensor(c, lc_in(c, 1))->dtype != SI_INT32))
        return lc_fail(c, err, SI_ERR_SHAPE, "BitwiseAnd takes int32 tensors only");
    int t;
    si_result st = core_emit_binary(c, code, lc_in(c, 0), lc_in(c, 1), err, &t);
    if (st == SI_OK)
        lc_set_output(c, 0, t);
    return st;
}

/* Select and SelectV2 as tfjs's converter runs both: where(), numpy
 * broadcasting of all three from the right. A rank-1 Select condition thus
 * matches the last axis (TF1's Select would pick whole rows by it); where
 * tfjs cannot broadcast, this refuses too. */
static si_result lower_select(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 3)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs cond, a and b");
    const core_tensor *tc = lc_tensor(c, lc_in(c, 0)), *ta = lc_tensor(c, lc_in(c, 1)),
                      *tb = lc_tensor(c, lc_in(c, 2));
    core_shape ab, out;
    const core_shape cs = tc->shape;
    char s1[96], s2[96];
    if (core_broadcast_shape(&ta->shape, &tb->shape, &ab) != 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "shapes %s and %s do not broadcast",
                       core_shape_str(&ta->shape, s1, sizeof s1),
                       core_shape_str(&tb->shape, s2, sizeof s2));
    if (core_broadcast_shape(&cs, &ab, &out) != 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "condition %s does not broadcast to %s",
                       core_shape_str(&tc->shape, s1, sizeof s1), core_shape_str(&ab, s2, sizeof s2));
    if (ta->dtype != tb->dtype)
        return lc_fail(c, err, SI_ERR_SHAPE, "a and b differ in dtype");
    ck_step s = {.kind = CK_SELECT, .n_in = 3, .in = {lc_in(c, 0), lc_in(c, 1), lc_in(c, 2)}};
    s.u.select.rank = out.rank;
    for (int i = 0; i < out.rank; i++)
        s.u.select.out_dim[i] = (int32_t)out.d[i];
    broadcast_strides(&cs, &out, s.u.select.c_stride);
    broadcast_strides(&ta->shape, &out, s.u.select.a_stride);
    broadcast_strides(&tb->shape, &out, s.u.select.b_stride);
    s.u.select.count = (int32_t)core_shape_count(&out);
    s.out = lc_new_tensor(c, ta->dtype, &out);
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

static si_result lower_addn(lower_ctx *c, si_error *err)
{
    int n = lc_n_inputs(c);
    if (n < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs inputs");
    const core_tensor *x0 = lc_tensor(c, lc_in(c, 0));
    for (int i = 1; i < n; i++)
        if (!core_shape_eq(&lc_tensor(c, lc_in(c, i))->shape, &x0->shape))
            return lc_fail(c, err, SI_ERR_SHAPE, "inputs differ in shape");
    core_shape shape = x0->shape;
    si_dtype dt = x0->dtype;
    int acc = lc_in(c, 0), next = 1;
    if (n == 1) {
        lc_set_output(c, 0, lc_new_alias(c, acc, &shape));
        return SI_OK;
    }
    /* Left to right in groups that fit one step, like tfjs's sequential sum. */
    while (next < n) {
        ck_step s = {.kind = CK_ADDN};
        s.in[s.n_in++] = acc;
        while (next < n && s.n_in < CK_MAX_IN)
            s.in[s.n_in++] = lc_in(c, next++);
        s.u.addn.n = s.n_in;
        s.u.addn.count = (int32_t)core_shape_count(&shape);
        s.u.addn.dtype = dt;
        s.out = lc_new_tensor(c, dt, &shape);
        lc_emit(c, &s);
        acc = s.out;
    }
    lc_set_output(c, 0, acc);
    return SI_OK;
}

const core_op_def core_ops_elementwise[] = {
    {"Neg", lower_unary}, {"Abs", lower_unary}, {"Relu", lower_unary},
    {"Relu6", lower_unary}, {"LeakyRelu", lower_unary}, {"Elu", lower_unary},
    {"Selu", lower_unary}, {"Sigmoid", lower_unary}, {"Tanh", lower_unary},
    {"Exp", lower_unary}, {"Log", lower_unary}, {"Sqrt", lower_unary},
    {"Rsqrt", lower_unary}, {"Square", lower_unary}, {"Reciprocal", lower_unary},
    {"Floor", lower_unary}, {"Ceil", lower_unary}, {"Round", lower_unary},
    {"Sin", lower_unary}, {"Cos", lower_unary}, {"Tan", lower_unary},
    {"Asin", lower_unary}, {"Acos", lower_unary}, {"Atan", lower_unary},
    {"Sinh", lower_unary}, {"Cosh", lower_unary}, {"Sign", lower_unary},
    {"Softplus", lower_unary}, {"LogicalNot", lower_unary}, {"Cast", lower_unary},
    {"Erf", lower_unary}, {"Expm1", lower_unary}, {"Log1p", lower_unary},
    {"Asinh", lower_unary}, {"Acosh", lower_unary}, {"Atanh", lower_unary},
    {"IsFinite", lower_unary}, {"IsInf", lower_unary}, {"ClipByValue", lower_unary},
    {"IsNan", lower_unary},
    {"Add", lower_binary}, {"AddV2", lower_binary}, {"BiasAdd", lower_binary},
    {"Sub", lower_binary}, {"Mul", lower_binary}, {"RealDiv", lower_binary},
    {"Div", lower_binary}, {"DivNoNan", lower_binary}, {"Maximum", lower_binary},
    {"Minimum", lower_binary}, {"Pow", lower_binary}, {"SquaredDifference", lower_binary},
    {"FloorDiv", lower_binary}, {"FloorMod", lower_binary}, {"Mod", lower_binary},
    {"Prelu", lower_binary}, {"Atan2", lower_binary}, {"Equal", lower_binary},
    {"NotEqual", lower_binary}, {"Less", lower_binary}, {"LessEqual", lower_binary},
    {"Greater", lower_binary}, {"GreaterEqual", lower_binary}, {"LogicalAnd", lower_binary},
    {"LogicalOr", lower_binary}, {"BitwiseAnd", lower_binary},
    {"AddN", lower_addn}, {"Select", lower_select}, {"SelectV2", lower_select},
    {NULL, NULL}};
