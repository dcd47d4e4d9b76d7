/* Convolutions (Conv2D, depthwise, Conv2DBackpropInput) and matrix products,
 * each with the bias + activation epilogue that grappler fuses into
 * _FusedConv2D / FusedDepthwiseConv2dNative / _FusedMatMul.
 * Semantics and summation order follow TensorFlow.js's CPU kernels. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ops.h"

/* Defined in op_elementwise.c: a broadcasting binary step. */
int core_emit_binary(lower_ctx *c, int op, int a, int b, si_error *err, int *out_t);

/* ---- host references ---- */

/* tfjs's `y[i] += x * w` on a Float32Array: the product of two floats is
 * exact in double, the sum is rounded once to double and then to float. */
static inline float acc_f32(float acc, float x, float w)
{
    return (float)((double)acc + (double)x * (double)w);
}

/* Bias add (a float32 add, as tfjs's Add kernel), a fused residual's add
 * (res: its element, NULL none; ck_conv_p.has_res), then the activation. The
 * PReLU alpha tensor holds one value per output channel, or one for all. */
static float epilogue(float v, int64_t oc, int has_scale, int has_bias, const float *res, int act,
                      int has_alpha, float alpha, const core_buf *const *ins)
{
    if (has_scale == 1) /* a per-channel Mul before the bias, fused (input 6) */
        v *= ((const float *)ins[6]->data)[oc];
    if (has_bias)
        v += ((const float *)ins[2]->data)[oc];
    /* or after it, then (3) a per-channel Add (input 3); either one value for all */
    if (has_scale >= 2)
        v *= ((const float *)ins[6]->data)[core_shape_count(&ins[6]->shape) == 1 ? 0 : oc];
    if (has_scale == 3)
        v += ((const float *)ins[3]->data)[core_shape_count(&ins[3]->shape) == 1 ? 0 : oc];
    if (res)
        v += *res;
    if (act == CK_ACT_PRELU && has_alpha) {
        int64_t na = core_shape_count(&ins[3]->shape);
        alpha = ((const float *)ins[3]->data)[na == 1 ? 0 : oc];
    }
    return ck_apply_act(act, v, alpha);
}

/* The clips fused after the epilogue (ck_conv_p.n_clip): binary's Minimum and
 * Maximum with the value as a, the scalar inputs 4 and 5 as b; or (hs) the hard
 * swish (c1 * v) * relu6(v + c2), each op a float32 op as its step's. */
static float clips(float v, int n, const int32_t *op, int hs, const core_buf *const *ins)
{
    if (hs == 2) { /* a hard sigmoid */
        float a = v + ((const float *)ins[5]->data)[0];
        return (a < 0.f ? 0.f : (a > 6.f ? 6.f : a)) * ((const float *)ins[4]->data)[0];
    }
    if (hs) {
        float m = ((const float *)ins[4]->data)[0] * v, a = v + ((const float *)ins[5]->data)[0];
        return m * (a < 0.f ? 0.f : (a > 6.f ? 6.f : a));
    }
    for (int i = 0; i < n && i < 2; i++) {
        float c = ((const float *)ins[4 + i]->data)[0];
        v = op[i] == CK_B_MIN ? (v < c || isnan(v) ? v : c) : (v > c || isnan(v) ? v : c);
    }
    return v;
}

/* One loop for both: a depthwise output channel oc reads input channel
 * oc / ch_mult alone, with its weights laid out [kh, kw, out_c]; a full conv
 * sums every input channel, weights [kh, kw, in_c, out_c]. The order of the
 * sums is tfjs's in both. */
static void host_conv_any(const ck_step *s, const core_buf *const *ins, core_buf *out,
                          int depthwise)
{
    const ck_conv_p *p = &s->u.conv;
    const float *x = ins[0]->data, *w = ins[1]->data;
    float *y = out->data;
    int64_t mult = p->ch_mult > 0 ? p->ch_mult : 1;
    int64_t o = 0;
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oy = 0; oy < p->out_h; oy++)
            for (int64_t ox = 0; ox < p->out_w; ox++)
                for (int64_t oc = 0; oc < p->out_c; oc++, o++) {
                    float acc = 0.f;
                    for (int64_t ky = 0; ky < p->k_h; ky++) {
                        int64_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
                        if (iy < 0 || iy >= p->in_h)
                            continue;
                        for (int64_t kx = 0; kx < p->k_w; kx++) {
                            int64_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
                            if (ix < 0 || ix >= p->in_w)
                                continue;
                            const float *xp = x + ((b * p->in_h + iy) * p->in_w + ix) * p->in_c;
                            if (depthwise) {
                                acc = acc_f32(acc, xp[oc / mult],
                                              w[(ky * p->k_w + kx) * p->out_c + oc]);
                                continue;
                            }
                            const float *wp = w + (ky * p->k_w + kx) * p->in_c * p->out_c + oc;
                            for (int64_t ic = 0; ic < p->in_c; ic++)
                                acc = acc_f32(acc, xp[ic], wp[ic * p->out_c]);
                        }
                    }
                    const float *res = p->has_res ? (const float *)ins[7]->data + o : NULL;
                    float v = epilogue(acc, oc, p->has_scale, p->has_bias, res, p->act,
                                       p->has_alpha_tensor, p->alpha, ins);
                    y[o] = clips(v, p->n_clip, p->clip_op, p->hswish, ins);
                }
}

void ck_host_conv2d(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    host_conv_any(s, ins, out, 0);
}

void ck_host_dwconv2d(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    host_conv_any(s, ins, out, 1);
}

/* Gather form of the transposed conv: output pixel (y, x) of the deconv is the
 * forward conv's input pixel; it collects every forward output (iy, ix) whose
 * window tap (fy, fx) lands on it. tfjs walks iy upwards, which is fy downwards,
 * and sums in a JS number (double), rounding to float once at the end. */
void ck_host_deconv2d(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_conv_p *p = &s->u.conv;
    const float *dy = ins[0]->data, *w = ins[1]->data;
    float *y = out->data;
    int64_t o = 0;
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oy = 0; oy < p->out_h; oy++)
            for (int64_t ox = 0; ox < p->out_w; ox++)
                for (int64_t oc = 0; oc < p->out_c; oc++, o++) {
                    double dot = 0.0;
                    for (int64_t fy = p->k_h - 1; fy >= 0; fy--) {
                        int64_t ny = oy + p->pad_top - fy * p->dil_h;
                        if (ny < 0 || ny % p->stride_h)
                            continue;
                        int64_t iy = ny / p->stride_h;
                        if (iy >= p->in_h)
                            continue;
                        for (int64_t fx = p->k_w - 1; fx >= 0; fx--) {
                            int64_t nx = ox + p->pad_left - fx * p->dil_w;
                            if (nx < 0 || nx % p->stride_w)
                                continue;
                            int64_t ix = nx / p->stride_w;
                            if (ix >= p->in_w)
                                continue;
                            const float *dp = dy + ((b * p->in_h + iy) * p->in_w + ix) * p->in_c;
                            const float *wp = w + ((fy * p->k_w + fx) * p->out_c + oc) * p->in_c;
                            for (int64_t d = 0; d < p->in_c; d++)
                                dot += (double)dp[d] * (double)wp[d];
                        }
                    }
                    y[o] = epilogue((float)dot, oc, 0, p->has_bias, NULL, p->act, p->has_alpha_tensor,
                                    p->alpha, ins);
                }
}

/* tfjs's batchMatMul sums k in blocks of 48 into a JS number, then adds each
 * block's sum to the float32 output. */
#define MM_BLOCK 48

/* ToInt32 of an integral double: wraps modulo 2^32, as an Int32Array store. */
static int32_t wrap_i32(double v)
{
    double r = fmod(v, 4294967296.0);
    if (r < 0)
        r += 4294967296.0;
    return (int32_t)(uint32_t)r;
}

/* The sum over k of a[kk * a_step] * b[kk * b_step] as tfjs's batchMatMul
 * forms it: each block's sum exact in double, added to the output element as
 * its typed array stores it. float32: rounded to float per block. int32:
 * tfjs's int32 result buffer takes `res += sum` per block, so each block's
 * (exact, while below 2^53) sum lands wrapped to int32; the GPU shader
 * computes it through floats instead, and the two agree while |a|, |b| and
 * every running total stay below 2^24. */
static double mm_dot(si_dtype dt, const void *a, const void *b, int64_t k, int64_t a_step,
                     int64_t b_step)
{
    const float *af = a, *bf = b;
    const int32_t *ai = a, *bi = b;
    float acc_f = 0.f;
    int32_t acc_i = 0;
    for (int64_t k0 = 0; k0 < k; k0 += MM_BLOCK) {
        int64_t k1 = k0 + MM_BLOCK < k ? k0 + MM_BLOCK : k;
        double sum = 0.0;
        if (dt == SI_INT32) {
            for (int64_t kk = k0; kk < k1; kk++)
                sum += (double)ai[kk * a_step] * (double)bi[kk * b_step];
            acc_i = wrap_i32((double)acc_i + sum);
        } else {
            for (int64_t kk = k0; kk < k1; kk++)
                sum += (double)af[kk * a_step] * (double)bf[kk * b_step];
            acc_f = (float)((double)acc_f + sum);
        }
    }
    return dt == SI_INT32 ? (double)acc_i : (double)acc_f;
}

/* int32 operands take no epilogue: lowering refuses one. */
void ck_host_matmul(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_matmul_p *p = &s->u.matmul;
    si_dtype dt = out->dtype == SI_INT32 ? SI_INT32 : SI_FLOAT32;
    const char *A = ins[0]->data, *B = ins[1]->data;
    int64_t m = p->m, n = p->n, k = p->k;
    int64_t a_step = p->trans_a ? m : 1, b_step = p->trans_b ? 1 : n;
    int64_t o = 0;
    for (int64_t bi = 0; bi < p->batch; bi++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++, o++) {
                /* float32 and int32 elements are both CORE_ELEM bytes */
                const char *ap = A + CORE_ELEM * (bi * p->a_batch_stride + (p->trans_a ? i : i * k));
                const char *bp = B + CORE_ELEM * (bi * p->b_batch_stride + (p->trans_b ? j * k : j));
                double v = mm_dot(dt, ap, bp, k, a_step, b_step);
                if (dt == SI_INT32)
                    ((int32_t *)out->data)[o] = (int32_t)v;
                else
                    ((float *)out->data)[o] =
                        clips(epilogue((float)v, j, p->has_scale, p->has_bias, NULL, p->act,
                                       p->has_alpha_tensor, p->alpha, ins),
                              p->n_clip, p->clip_op, p->hswish, ins);
            }
}

/* ---- lowering ---- */

static int ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

static int fits_i32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

typedef struct {
    int64_t stride_h, stride_w, dil_h, dil_w;
    const char *padding;          /* "SAME", "VALID" or "EXPLICIT" */
    int64_t pad_h[2], pad_w[2];   /* explicit paddings */
    int nchw;                     /* data_format NCHW */
} conv_attrs;

static si_result hw_pair(lower_ctx *c, si_error *err, const char *name, int64_t *h, int64_t *w)
{
    int64_t v[4];
    int n = lc_attr_ints(c, name, v, 4);
    *h = *w = 1;
    if (n < 0)
        return SI_OK; /* absent: 1, as the converter's defaults */
    if (n != 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "%s must have 4 entries, has %d", name, n);
    if (v[1] < 1 || v[2] < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "%s must be positive", name);
    *h = v[1];
    *w = v[2];
    return SI_OK;
}

/* The conv attrs as tfjs's converter reads them: strides and dilations are
 * entries 1 and 2 whatever the data_format (so an NCHW node's [1, 1, sh, sw]
 * strides count as (1, sh) there, and here). read_format 0: data_format is
 * not read (tfjs ignores it for Conv2DBackpropInput). */
static si_result read_conv_attrs(lower_ctx *c, si_error *err, conv_attrs *a, int read_format)
{
    memset(a, 0, sizeof *a);
    const char *df = read_format ? lc_attr_str(c, "data_format", "NHWC") : "NHWC";
    if (ieq(df, "NCHW"))
        a->nchw = 1;
    else if (!ieq(df, "NHWC"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "data_format %s (NHWC or NCHW)", df);
    si_result st = hw_pair(c, err, "strides", &a->stride_h, &a->stride_w);
    if (st == SI_OK)
        st = hw_pair(c, err, "dilations", &a->dil_h, &a->dil_w);
    if (st != SI_OK)
        return st;
    const char *pad = lc_attr_str(c, "padding", NULL);
    if (!pad)
        return lc_fail(c, err, SI_ERR_FORMAT, "no padding attr");
    /* tfjs lowercases the padding string; core_conv_out wants TF's spelling. */
    if (ieq(pad, "SAME"))
        a->padding = "SAME";
    else if (ieq(pad, "VALID"))
        a->padding = "VALID";
    else if (ieq(pad, "EXPLICIT"))
        a->padding = "EXPLICIT";
    else
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding '%s'", pad);
    if (a->padding[0] == 'E') {
        int64_t v[8];
        int n = lc_attr_ints(c, "explicit_paddings", v, 8);
        if (n != 8)
            return lc_fail(c, err, SI_ERR_FORMAT,
                           "EXPLICIT padding needs 8 explicit_paddings, has %d", n < 0 ? 0 : n);
        /* pairs per dim in the data_format's order: H and W are dims 1, 2 of
         * NHWC, 2, 3 of NCHW (tfjs's conv_util reads pad[2], pad[3] there) */
        int h = a->nchw ? 4 : 2;
        for (int i = h; i < h + 4; i++)
            if (v[i] < 0)
                return lc_fail(c, err, SI_ERR_FORMAT, "negative explicit padding");
        a->pad_h[0] = v[h];
        a->pad_h[1] = v[h + 1];
        a->pad_w[0] = v[h + 2];
        a->pad_w[1] = v[h + 3];
    }
    return SI_OK;
}

/* The fused epilogue as the node asks for it. */
typedef struct {
    int bias;      /* tensor id or -1 */
    int alpha_t;   /* PReLU weights, tensor id or -1 */
    int alpha_in;  /* which node input alpha_t is */
    int act;       /* ck_act */
    float alpha;   /* LeakyRelu */
} epi_req;

static si_result parse_act(lower_ctx *c, si_error *err, const char *name, int *act)
{
    static const struct { const char *name; int act; } acts[] = {
        {"Relu", CK_ACT_RELU}, {"Relu6", CK_ACT_RELU6}, {"Prelu", CK_ACT_PRELU},
        {"LeakyRelu", CK_ACT_LEAKYRELU}, {"Elu", CK_ACT_ELU}, {"Sigmoid", CK_ACT_SIGMOID},
        {"Tanh", CK_ACT_TANH}, {"Linear", CK_ACT_NONE}};
    *act = CK_ACT_NONE;
    if (!name)
        return SI_OK;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++)
        if (ieq(name, acts[i].name)) {
            *act = acts[i].act;
            return SI_OK;
        }
    return lc_fail(c, err, SI_ERR_UNSUPPORTED, "fused activation '%s'", name);
}

/* Reads fused_ops / num_args / the extra inputs the way tfjs's converter does:
 * fused_ops[0] is the extra op (BiasAdd), fused_ops[1] the activation. A conv
 * without BiasAdd takes its PReLU alpha from the first extra input; a matmul
 * always reads (bias, alpha) from the extra inputs in that order. */
static si_result read_fused(lower_ctx *c, si_error *err, int is_matmul, epi_req *e)
{
    const char *ops[4] = {NULL, NULL, NULL, NULL};
    int n = lc_attr_strs(c, "fused_ops", ops, 4);
    const char *extra = n >= 1 ? ops[0] : "";
    if (ieq(extra, "FusedBatchNorm"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "fused FusedBatchNorm (tfjs does not support it)");
    int is_bias = ieq(extra, "BiasAdd");
    si_result st = parse_act(c, err, n >= 2 ? ops[1] : NULL, &e->act);
    if (st != SI_OK)
        return st;
    int is_prelu = e->act == CK_ACT_PRELU;
    int nargs = lc_n_inputs(c) - 2;
    int64_t num_args = lc_attr_int(c, "num_args", nargs);
    if (is_bias && num_args != (is_prelu ? 2 : 1))
        return lc_fail(c, err, SI_ERR_FORMAT, "BiasAdd%s needs num_args %d, has %lld",
                       is_prelu ? " with Prelu" : "", is_prelu ? 2 : 1, (long long)num_args);
    int arg0 = nargs > 0 ? lc_in(c, 2) : -1, arg1 = nargs > 1 ? lc_in(c, 3) : -1;
    if (is_matmul || is_bias) {
        e->bias = arg0;
        e->alpha_t = arg1;
        e->alpha_in = 3;
    } else {
        e->bias = -1;
        e->alpha_t = arg0;
        e->alpha_in = 2;
    }
    if (is_bias && e->bias < 0)
        return lc_fail(c, err, SI_ERR_FORMAT, "BiasAdd without a bias input");
    if (is_prelu && e->alpha_t < 0)
        return lc_fail(c, err, SI_ERR_FORMAT, "Prelu without an alpha input");
    if (!is_prelu)
        e->alpha_t = -1;
    /* tfjs's converter maps no leakyrelu_alpha for FusedDepthwiseConv2dNative
     * (op_list/convolution.js): its fused LeakyRelu runs with alpha undefined,
     * so every negative pre-activation becomes NaN there. */
    if (!strcmp(lc_node(c)->op, "FusedDepthwiseConv2dNative"))
        e->alpha = NAN;
    else
        e->alpha = (float)lc_attr_float(c, "leakyrelu_alpha", 0.2);
    return SI_OK;
}

/* A float tensor of n values laid along the output's last axis, which the
 * fused epilogue can index by output channel without changing the output shape. */
static int channel_vector(const core_tensor *t, int64_t n, int max_rank)
{
    if (t->dtype != SI_FLOAT32 || core_shape_count(&t->shape) != n || t->shape.rank > max_rank)
        return 0;
    return t->shape.rank == 0 ? n == 1 : t->shape.d[t->shape.rank - 1] == n;
}

static si_result emit_unary_act(lower_ctx *c, si_error *err, int act, float alpha, int in,
                                int *out)
{
    static const int map[] = {
        [CK_ACT_RELU] = CK_U_RELU, [CK_ACT_RELU6] = CK_U_RELU6,
        [CK_ACT_LEAKYRELU] = CK_U_LEAKYRELU, [CK_ACT_ELU] = CK_U_ELU,
        [CK_ACT_SIGMOID] = CK_U_SIGMOID, [CK_ACT_TANH] = CK_U_TANH};
    const core_tensor *t = lc_tensor(c, in);
    core_shape shape = t->shape;
    ck_step s = {.kind = CK_UNARY, .n_in = 1};
    s.in[0] = in;
    s.u.unary.op = map[act];
    s.u.unary.count = (int32_t)core_shape_count(&shape);
    s.u.unary.in_dtype = SI_FLOAT32;
    s.u.unary.out_dtype = SI_FLOAT32;
    s.u.unary.alpha = alpha;
    s.out = lc_new_tensor(c, SI_FLOAT32, &shape);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    *out = s.out;
    return SI_OK;
}

/* Emits s (a conv or matmul step whose in[0], in[1] and main params are set)
 * producing `shape`, with the epilogue fused where its operands allow; what
 * cannot be fused (a bias or alpha that is not one value per output channel)
 * follows as broadcasting binary / unary steps, as tfjs computes it unfused. */
static si_result emit_with_epilogue(lower_ctx *c, si_error *err, ck_step *s, const core_shape *shape,
                                    int64_t out_c, int max_rank, const epi_req *e, int32_t *has_bias,
                                    int32_t *act, int32_t *has_alpha, float *alpha)
{
    int fuse_bias = e->bias < 0 || channel_vector(lc_tensor(c, e->bias), out_c, max_rank);
    int fuse_act = fuse_bias;
    float scalar_alpha = e->alpha;
    int alpha_vec = -1;
    if (fuse_act && e->act == CK_ACT_PRELU) {
        const core_tensor *at = lc_tensor(c, e->alpha_t);
        if (channel_vector(at, out_c, max_rank)) {
            alpha_vec = e->alpha_t;
        } else if (core_shape_count(&at->shape) == 1 && at->dtype == SI_FLOAT32) {
            /* One alpha for all: fused as a constant when its value is known now. */
            si_result st;
            const core_buf *v = lc_value(c, e->alpha_in, &st, err);
            if (st != SI_OK)
                return st;
            if (v)
                scalar_alpha = ((const float *)v->data)[0];
            else
                fuse_act = 0;
        } else {
            fuse_act = 0;
        }
    }
    s->n_in = 2;
    s->in[2] = s->in[3] = -1;
    if (fuse_bias && e->bias >= 0) {
        s->in[2] = e->bias;
        s->n_in = 3;
        *has_bias = 1;
    }
    if (fuse_act) {
        *act = e->act;
        *alpha = e->act == CK_ACT_PRELU ? scalar_alpha : e->alpha;
        if (alpha_vec >= 0) {
            s->in[3] = alpha_vec;
            s->n_in = 4;
            *has_alpha = 1;
        }
    }
    s->out = lc_new_tensor(c, SI_FLOAT32, shape);
    if (s->out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, s);
    int t = s->out;
    si_result st = SI_OK;
    if (!fuse_bias)
        st = core_emit_binary(c, CK_B_ADD, t, e->bias, err, &t);
    if (st == SI_OK && !fuse_act && e->act != CK_ACT_NONE) {
        if (e->act == CK_ACT_PRELU)
            st = core_emit_binary(c, CK_B_PRELU, t, e->alpha_t, err, &t);
        else
            st = emit_unary_act(c, err, e->act, e->alpha, t, &t);
    }
    if (st == SI_OK)
        lc_set_output(c, 0, t);
    return st;
}

static si_result need_float(lower_ctx *c, si_error *err, int n)
{
    for (int i = 0; i < n; i++)
        if (lc_tensor(c, lc_in(c, i))->dtype != SI_FLOAT32)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input %d is not float32", i);
    return SI_OK;
}

/* NHWC image dims of a rank-4 (or rank-3, batch 1) tensor. */
static int nhwc(const core_shape *s, int64_t *d)
{
    if (s->rank == 4) {
        memcpy(d, s->d, 4 * sizeof *d);
        return 0;
    }
    if (s->rank == 3) {
        d[0] = 1;
        memcpy(d + 1, s->d, 3 * sizeof *d);
        return 0;
    }
    return -1;
}

/* t (rank 3 or 4) transposed by perm into a new tensor, by one copy step. */
static si_result emit_permute(lower_ctx *c, si_error *err, int t, const int *perm, int *out)
{
    const core_tensor *x = lc_tensor(c, t);
    int r = x->shape.rank;
    int64_t st[SI_MAX_RANK];
    core_strides(&x->shape, st);
    core_shape os = {.rank = r};
    for (int i = 0; i < r; i++)
        os.d[i] = x->shape.d[perm[i]];
    int64_t ost[SI_MAX_RANK];
    core_strides(&os, ost);
    ck_step cp = {.kind = CK_COPY, .n_in = 1};
    cp.in[0] = t;
    cp.u.copy.rank = r;
    for (int i = 0; i < r; i++) {
        cp.u.copy.dim[i] = (int32_t)os.d[i];
        cp.u.copy.in_stride[i] = (int32_t)st[perm[i]];
        cp.u.copy.out_stride[i] = (int32_t)ost[i];
    }
    cp.out = lc_new_tensor(c, x->dtype, &os);
    if (cp.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &cp);
    *out = cp.out;
    return SI_OK;
}

/* The epilogue of an NCHW conv, on its NCHW output t, as tfjs's kernel adds
 * it: _FusedConv2D lays a 1-D bias or PReLU alpha of more than one value
 * along the channels (FusedConv2D.js reshapes it to [C, 1, 1]); otherwise it
 * broadcasts against [N, C, H, W]. */
static si_result nchw_epilogue(lower_ctx *c, si_error *err, int t, const epi_req *e)
{
    si_result st = SI_OK;
    int operand[2] = {e->bias, e->act == CK_ACT_PRELU ? e->alpha_t : -1};
    for (int k = 0; k < 2; k++) {
        int v = operand[k];
        if (v < 0)
            continue;
        const core_shape *vs = &lc_tensor(c, v)->shape;
        if (vs->rank == 1 && vs->d[0] != 1) {
            core_shape cs = {.rank = 3, .d = {vs->d[0], 1, 1}};
            if ((v = lc_new_alias(c, v, &cs)) < 0)
                return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        }
        operand[k] = v;
    }
    if (operand[0] >= 0)
        st = core_emit_binary(c, CK_B_ADD, t, operand[0], err, &t);
    if (st == SI_OK && e->act == CK_ACT_PRELU)
        st = core_emit_binary(c, CK_B_PRELU, t, operand[1], err, &t);
    else if (st == SI_OK && e->act != CK_ACT_NONE)
        st = emit_unary_act(c, err, e->act, e->alpha, t, &t);
    if (st == SI_OK)
        lc_set_output(c, 0, t);
    return st;
}

static si_result lower_conv_any(lower_ctx *c, si_error *err, ck_kind kind, int fused)
{
    char sb[96], sf[96];
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input and a filter");
    si_result st = need_float(c, err, 2);
    if (st != SI_OK)
        return st;
    /* tfjs's fused depthwise conv passes no data_format on (NHWC always);
     * its plain depthwise kernel ignores it too, reading an NCHW input as
     * NHWC against a filter it does not fit: refused */
    conv_attrs a;
    int dw_fused = kind == CK_DWCONV2D && fused;
    if ((st = read_conv_attrs(c, err, &a, !dw_fused)) != SI_OK)
        return st;
    if (a.nchw && kind == CK_DWCONV2D)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "data_format NCHW (tfjs's depthwise kernel "
                       "reads the input as NHWC)");
    int xin = lc_in(c, 0);
    const core_tensor *x = lc_tensor(c, xin), *f = lc_tensor(c, lc_in(c, 1));
    int64_t d[4];
    if (nhwc(&x->shape, d) != 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "input %s must be rank 4",
                       core_shape_str(&x->shape, sb, sizeof sb));
    /* NCHW: the conv runs on the input transposed to NHWC, its output is
     * transposed back */
    static const int to_nhwc[2][4] = {{1, 2, 0, 0}, {0, 2, 3, 1}};
    static const int to_nchw[2][4] = {{2, 0, 1, 0}, {0, 3, 1, 2}};
    int r4 = x->shape.rank == 4;
    if (a.nchw) {
        if (!fits_i32(core_shape_count(&x->shape)))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
        if ((st = emit_permute(c, err, xin, to_nhwc[r4], &xin)) != SI_OK)
            return st;
        x = lc_tensor(c, xin);
        f = lc_tensor(c, lc_in(c, 1));
        nhwc(&x->shape, d);
    }
    if (f->shape.rank != 4 || f->shape.d[2] != d[3])
        return lc_fail(c, err, SI_ERR_SHAPE, "filter %s does not fit input %s",
                       core_shape_str(&f->shape, sf, sizeof sf),
                       core_shape_str(&x->shape, sb, sizeof sb));
    int explicit_pad = a.padding[0] == 'E';
    int64_t oh, ow, pt, pl;
    st = core_conv_out(c, err, d[1], f->shape.d[0], a.stride_h, a.dil_h, a.padding,
                       explicit_pad ? a.pad_h : NULL, &oh, &pt);
    if (st == SI_OK)
        st = core_conv_out(c, err, d[2], f->shape.d[1], a.stride_w, a.dil_w, a.padding,
                           explicit_pad ? a.pad_w : NULL, &ow, &pl);
    if (st != SI_OK)
        return st;
    int64_t out_c = kind == CK_DWCONV2D ? d[3] * f->shape.d[3] : f->shape.d[3];
    core_shape os = x->shape;
    int r = os.rank;
    os.d[r - 3] = oh;
    os.d[r - 2] = ow;
    os.d[r - 1] = out_c;
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&f->shape)) ||
        !fits_i32(core_shape_count(&os)) || !fits_i32(a.stride_h * oh) ||
        !fits_i32(a.stride_w * ow) || !fits_i32(a.dil_h * f->shape.d[0]) ||
        !fits_i32(a.dil_w * f->shape.d[1]))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    epi_req e = {.bias = -1, .alpha_t = -1, .alpha_in = -1, .act = CK_ACT_NONE, .alpha = 0.2f};
    if (fused && (st = read_fused(c, err, 0, &e)) != SI_OK)
        return st;
    ck_step s = {.kind = kind};
    s.in[0] = xin;
    s.in[1] = lc_in(c, 1);
    ck_conv_p *p = &s.u.conv;
    p->n = (int32_t)d[0];
    p->in_h = (int32_t)d[1];
    p->in_w = (int32_t)d[2];
    p->in_c = (int32_t)d[3];
    p->out_h = (int32_t)oh;
    p->out_w = (int32_t)ow;
    p->out_c = (int32_t)out_c;
    p->k_h = (int32_t)f->shape.d[0];
    p->k_w = (int32_t)f->shape.d[1];
    p->stride_h = (int32_t)a.stride_h;
    p->stride_w = (int32_t)a.stride_w;
    p->dil_h = (int32_t)a.dil_h;
    p->dil_w = (int32_t)a.dil_w;
    p->pad_top = (int32_t)pt;
    p->pad_left = (int32_t)pl;
    p->ch_mult = kind == CK_DWCONV2D ? (int32_t)f->shape.d[3] : 1;
    p->whole_out = ck_conv_whole_out(p);
    if (!a.nchw)
        return emit_with_epilogue(c, err, &s, &os, out_c, os.rank, &e, &p->has_bias, &p->act,
                                  &p->has_alpha_tensor, &p->alpha);
    epi_req none = {.bias = -1, .alpha_t = -1, .alpha_in = -1, .act = CK_ACT_NONE};
    if ((st = emit_with_epilogue(c, err, &s, &os, out_c, os.rank, &none, &p->has_bias, &p->act,
                                 &p->has_alpha_tensor, &p->alpha)) != SI_OK)
        return st;
    int t;
    if ((st = emit_permute(c, err, s.out, to_nchw[r4], &t)) != SI_OK)
        return st;
    return nchw_epilogue(c, err, t, &e);
}

static si_result lower_conv2d(lower_ctx *c, si_error *err)
{
    return lower_conv_any(c, err, CK_CONV2D, !strcmp(lc_node(c)->op, "_FusedConv2D"));
}

static si_result lower_dwconv2d(lower_ctx *c, si_error *err)
{
    return lower_conv_any(c, err, CK_DWCONV2D,
                          !strcmp(lc_node(c)->op, "FusedDepthwiseConv2dNative"));
}

/* Conv2DBackpropInput(input_sizes, filter, out_backprop): the gradient of a
 * forward conv whose input has input_sizes, i.e. a transposed conv of dy. */
static si_result lower_deconv2d(lower_ctx *c, si_error *err)
{
    char sb[96], sf[96];
    if (lc_n_inputs(c) < 3)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs input_sizes, filter and out_backprop");
    const core_tensor *f = lc_tensor(c, lc_in(c, 1)), *dy = lc_tensor(c, lc_in(c, 2));
    if (f->dtype != SI_FLOAT32 || dy->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "filter and out_backprop must be float32");
    int64_t sz[5];
    int k = lc_value_ints(c, 0, sz, 5, err);
    if (k == -2)
        return err->status;
    if (k < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input_sizes depends on the model input");
    int64_t dd[4];
    if (nhwc(&dy->shape, dd) != 0 || k != dy->shape.rank)
        return lc_fail(c, err, SI_ERR_SHAPE, "out_backprop %s and input_sizes (%d values) must "
                       "both be rank 4", core_shape_str(&dy->shape, sb, sizeof sb), k);
    int64_t od[4];
    core_shape os = {.rank = k};
    for (int i = 0; i < k; i++) {
        if (sz[i] < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative input_sizes");
        os.d[i] = sz[i];
    }
    nhwc(&os, od);
    if (f->shape.rank != 4 || f->shape.d[2] != od[3] || f->shape.d[3] != dd[3] || od[0] != dd[0])
        return lc_fail(c, err, SI_ERR_SHAPE, "filter %s does not fit out_backprop %s and "
                       "input_sizes", core_shape_str(&f->shape, sf, sizeof sf),
                       core_shape_str(&dy->shape, sb, sizeof sb));
    conv_attrs a;
    si_result st = read_conv_attrs(c, err, &a, 0);
    if (st != SI_OK)
        return st;
    /* tfjs ignores dilations here (computes as if 1); TF would use them: refuse
     * rather than give either answer silently. */
    if (a.dil_h != 1 || a.dil_w != 1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "dilations other than 1");
    int explicit_pad = a.padding[0] == 'E';
    int64_t fh, fw, pt, pl;
    st = core_conv_out(c, err, od[1], f->shape.d[0], a.stride_h, 1, a.padding,
                       explicit_pad ? a.pad_h : NULL, &fh, &pt);
    if (st == SI_OK)
        st = core_conv_out(c, err, od[2], f->shape.d[1], a.stride_w, 1, a.padding,
                           explicit_pad ? a.pad_w : NULL, &fw, &pl);
    if (st != SI_OK)
        return st;
    if (fh != dd[1] || fw != dd[2])
        return lc_fail(c, err, SI_ERR_SHAPE, "out_backprop %s does not match the forward conv "
                       "output %lldx%lld", core_shape_str(&dy->shape, sb, sizeof sb),
                       (long long)fh, (long long)fw);
    if (!fits_i32(core_shape_count(&os)) || !fits_i32(core_shape_count(&dy->shape)) ||
        !fits_i32(core_shape_count(&f->shape)) || !fits_i32(od[1] + pt) || !fits_i32(od[2] + pl))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    ck_step s = {.kind = CK_DECONV2D};
    s.in[0] = lc_in(c, 2);
    s.in[1] = lc_in(c, 1);
    ck_conv_p *p = &s.u.conv;
    p->n = (int32_t)dd[0];
    p->in_h = (int32_t)dd[1];
    p->in_w = (int32_t)dd[2];
    p->in_c = (int32_t)dd[3];
    p->out_h = (int32_t)od[1];
    p->out_w = (int32_t)od[2];
    p->out_c = (int32_t)od[3];
    p->k_h = (int32_t)f->shape.d[0];
    p->k_w = (int32_t)f->shape.d[1];
    p->stride_h = (int32_t)a.stride_h;
    p->stride_w = (int32_t)a.stride_w;
    p->dil_h = p->dil_w = 1;
    p->pad_top = (int32_t)pt;
    p->pad_left = (int32_t)pl;
    p->ch_mult = 1;
    epi_req e = {.bias = -1, .alpha_t = -1, .alpha_in = -1, .act = CK_ACT_NONE, .alpha = 0.2f};
    return emit_with_epilogue(c, err, &s, &os, od[3], os.rank, &e, &p->has_bias, &p->act,
                              &p->has_alpha_tensor, &p->alpha);
}

/* Operand t ([nb, rows, cols] flat) repeated to `batch` matrices, matrix bi
 * being t's bi % nb: tfjs's batch index when nb is neither 1 nor batch (nb
 * divides batch: each of its dims is 1 or the broadcast one). One copy step. */
static si_result repeat_batch(lower_ctx *c, si_error *err, int t, int64_t nb, int64_t batch,
                              int *out)
{
    const core_tensor *x = lc_tensor(c, t);
    int64_t mat = nb ? core_shape_count(&x->shape) / nb : 0;
    if (!fits_i32(batch * mat))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    core_shape os = {.rank = 2, .d = {batch, mat}};
    ck_step cp = {.kind = CK_COPY, .n_in = 1};
    cp.in[0] = t;
    cp.u.copy.rank = 3;
    cp.u.copy.dim[0] = (int32_t)(batch / nb);
    cp.u.copy.dim[1] = (int32_t)nb;
    cp.u.copy.dim[2] = (int32_t)mat;
    cp.u.copy.in_stride[0] = 0;
    cp.u.copy.in_stride[1] = (int32_t)mat;
    cp.u.copy.in_stride[2] = 1;
    cp.u.copy.out_stride[0] = (int32_t)(nb * mat);
    cp.u.copy.out_stride[1] = (int32_t)mat;
    cp.u.copy.out_stride[2] = 1;
    cp.out = lc_new_tensor(c, x->dtype, &os);
    if (cp.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &cp);
    *out = cp.out;
    return SI_OK;
}

/* MatMul, BatchMatMul(V2), _FusedMatMul. Batch dims broadcast the way tfjs's
 * kernel does it: output matrix bi takes each side's matrix bi modulo its
 * batch count, which is numpy broadcasting when one side has the whole batch
 * (tfjs's kernel is wrong where neither has it: refused). */
static si_result lower_matmul(lower_ctx *c, si_error *err)
{
    char sa[96], sb[96];
    const char *op = lc_node(c)->op;
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs two inputs");
    /* int32 × int32 gives int32 in tfjs (same kernel, int32 result buffer);
     * the matmul step reads int inputs and writes an int output as they are. */
    si_dtype dt0 = lc_tensor(c, lc_in(c, 0))->dtype, dt1 = lc_tensor(c, lc_in(c, 1))->dtype;
    int is_int = dt0 == SI_INT32 && dt1 == SI_INT32 && strcmp(op, "_FusedMatMul");
    si_result st = is_int ? SI_OK : need_float(c, err, 2);
    if (st != SI_OK)
        return st;
    int batch_op = !strncmp(op, "BatchMatMul", 11);
    int ta = lc_attr_bool(c, batch_op ? "adj_x" : "transpose_a", 0);
    int tb = lc_attr_bool(c, batch_op ? "adj_y" : "transpose_b", 0);
    const core_tensor *A = lc_tensor(c, lc_in(c, 0)), *B = lc_tensor(c, lc_in(c, 1));
    const core_shape *as = &A->shape, *bs = &B->shape;
    if (as->rank < 2 || bs->rank < 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "operands %s and %s must be at least rank 2",
                       core_shape_str(as, sa, sizeof sa), core_shape_str(bs, sb, sizeof sb));
    int64_t m = as->d[as->rank - (ta ? 1 : 2)], ka = as->d[as->rank - (ta ? 2 : 1)];
    int64_t kb = bs->d[bs->rank - (tb ? 1 : 2)], n = bs->d[bs->rank - (tb ? 2 : 1)];
    if (ka != kb)
        return lc_fail(c, err, SI_ERR_SHAPE, "inner dimensions of %s and %s differ",
                       core_shape_str(as, sa, sizeof sa), core_shape_str(bs, sb, sizeof sb));
    core_shape ao = {.rank = as->rank - 2}, bo = {.rank = bs->rank - 2}, os;
    memcpy(ao.d, as->d, (size_t)ao.rank * sizeof ao.d[0]);
    memcpy(bo.d, bs->d, (size_t)bo.rank * sizeof bo.d[0]);
    if (core_broadcast_shape(&ao, &bo, &os) != 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "batch dims of %s and %s do not broadcast",
                       core_shape_str(as, sa, sizeof sa), core_shape_str(bs, sb, sizeof sb));
    int64_t batch = core_shape_count(&os), ba = core_shape_count(&ao), bb = core_shape_count(&bo);
    /* tfjs computes max(ba, bb) matrices; short of the broadcast batch its
     * output tensor lacks values (its kernel's bug): no answer to give */
    if ((ba > bb ? ba : bb) != batch)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "batch dims of %s and %s broadcast on both "
                       "sides (tfjs computes only %lld of the %lld matrices)",
                       core_shape_str(as, sa, sizeof sa), core_shape_str(bs, sb, sizeof sb),
                       (long long)(ba > bb ? ba : bb), (long long)batch);
    if (os.rank + 2 > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_SHAPE, "rank too large");
    os.d[os.rank++] = m;
    os.d[os.rank++] = n;
    if (!fits_i32(core_shape_count(as)) || !fits_i32(core_shape_count(bs)) ||
        !fits_i32(core_shape_count(&os)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    epi_req e = {.bias = -1, .alpha_t = -1, .alpha_in = -1, .act = CK_ACT_NONE, .alpha = 0.2f};
    if (!strcmp(op, "_FusedMatMul") && (st = read_fused(c, err, 1, &e)) != SI_OK)
        return st;
    ck_step s = {.kind = CK_MATMUL};
    s.in[0] = lc_in(c, 0);
    s.in[1] = lc_in(c, 1);
    if (ba != batch && ba != 1 && (st = repeat_batch(c, err, s.in[0], ba, batch, &s.in[0])) != SI_OK)
        return st;
    if (bb != batch && bb != 1 && (st = repeat_batch(c, err, s.in[1], bb, batch, &s.in[1])) != SI_OK)
        return st;
    ck_matmul_p *p = &s.u.matmul;
    p->batch = (int32_t)batch;
    p->m = (int32_t)m;
    p->n = (int32_t)n;
    p->k = (int32_t)ka;
    p->trans_a = ta;
    p->trans_b = tb;
    p->a_batch_stride = ba == 1 ? 0 : (int32_t)(m * ka);
    p->b_batch_stride = bb == 1 ? 0 : (int32_t)(ka * n);
    if (is_int) {
        s.n_in = 2;
        s.in[2] = s.in[3] = -1;
        if ((s.out = lc_new_tensor(c, SI_INT32, &os)) < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_emit(c, &s);
        lc_set_output(c, 0, s.out);
        return SI_OK;
    }
    /* tfjs adds the bias to the [batch, m, n] product before reshaping. */
    int max_rank = os.rank > 3 ? os.rank : 3;
    return emit_with_epilogue(c, err, &s, &os, n, max_rank, &e, &p->has_bias, &p->act,
                              &p->has_alpha_tensor, &p->alpha);
}

const core_op_def core_ops_conv[] = {
    {"Conv2D", lower_conv2d},
    {"_FusedConv2D", lower_conv2d},
    {"DepthwiseConv2dNative", lower_dwconv2d},
    {"DepthwiseConv2d", lower_dwconv2d},
    {"FusedDepthwiseConv2dNative", lower_dwconv2d},
    {"Conv2DBackpropInput", lower_deconv2d},
    {"MatMul", lower_matmul},
    {"_FusedMatMul", lower_matmul},
    {"BatchMatMul", lower_matmul},
    {"BatchMatMulV2", lower_matmul},
    {NULL, NULL}};
