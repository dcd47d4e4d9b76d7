/* The host interpreter's complex64 values and the ops on them, computed as
 * tfjs-backend-cpu computes them: Complex, Real, Imag, ComplexAbs (V8's
 * Math.hypot), FFT and IFFT (fft_utils.js: radix-2 Cooley-Tukey on float32
 * values for powers of two, a DFT summed in double otherwise), and RFFT and
 * IRFFT as tfjs-core builds them of those; Add, AddV2, Sub and Mul with a
 * complex operand, Cast to and from complex64, and the value-moving ops tfjs
 * runs on complex tensors (Reshape, Squeeze, ExpandDims, Concat, Pack). A
 * complex64 buffer holds interleaved float re/im pairs (core.h,
 * CORE_COMPLEX64); only the ops here and the control flow that passes values
 * on read one, so none leaves the interpreter. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

static const char *const cplx_ops[] = {"Complex", "Real", "Imag", "ComplexAbs", "FFT",
                                       "IFFT",    "RFFT", "IRFFT", NULL};
/* ops that pass a value on unchanged (Merge reads its inputs itself), and
 * TF2 control flow, which hands values to library functions as they are */
static const char *const pass_ops[] = {"Identity", "Enter",       "Exit",  "Switch",
                                       "NextIteration", "If", "StatelessIf", "While",
                                       "StatelessWhile", NULL};
/* tfjs-backend-cpu's binary kernels with a complex implementation that the
 * converter's ops reach */
static const char *const binary_ops[] = {"Add", "AddV2", "Sub", "Mul", NULL};
/* Ops that only move values, which tfjs runs on complex tensors (Reshape and
 * what it builds; Concat on the real and the imaginary parts; stack as
 * expandDims and concat): run here on each part through the op table. */
static const char *const part_ops[] = {"Reshape", "Squeeze", "ExpandDims", "ConcatV2",
                                       "Concat",  "Pack",    NULL};

static int in_list(const char *op, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(op, list[i]))
            return 1;
    return 0;
}

int ip_is_complex_op(const char *op) { return op && in_list(op, cplx_ops); }

int core_node_makes_complex(const io_node *n)
{
    const io_attr *a = !strcmp(n->op, "Cast") ? io_node_attr(n, "DstT") : NULL;
    return a && a->kind == IO_ATTR_TYPE && a->type == IO_DT_OTHER && a->type_name &&
           !strncmp(a->type_name, "DT_COMPLEX", 10);
}

int ip_complex_runs(const opctx *o)
{
    const char *op = o->n->op;
    if (core_node_makes_complex(o->n))
        return 1;
    return ip_reads_complex(o) && (!strcmp(op, "Identity") || !strcmp(op, "Cast") ||
                                   in_list(op, binary_ops) || in_list(op, part_ops));
}

si_result ip_check_complex_inputs(opctx *o)
{
    if (in_list(o->n->op, cplx_ops) || in_list(o->n->op, pass_ops) ||
        in_list(o->n->op, binary_ops) || in_list(o->n->op, part_ops) || !strcmp(o->n->op, "Cast"))
        return SI_OK;
    for (int i = 0; i < o->n_data; i++)
        if (o->data[i]->b.dtype == CORE_COMPLEX64)
            return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED,
                                "input %d is complex64; streaminfer takes complex values only "
                                "in Complex, Real, Imag, ComplexAbs, FFT, IFFT, RFFT, IRFFT, "
                                "Add, AddV2, Sub, Mul, Cast, Reshape, Squeeze, ExpandDims, "
                                "Concat, ConcatV2, Pack, Identity and control flow",
                                i);
    return SI_OK;
}

int ip_reads_complex(const opctx *o)
{
    for (int i = 0; i < o->n_data; i++)
        if (o->data[i]->b.dtype == CORE_COMPLEX64)
            return 1;
    return 0;
}

/* ---- the transforms (fft_utils.js) ---- */

/* tfjs backend_util.exponents(s): the twiddles of one radix-2 stage of size
 * s, rounded to float32 as its Float32Arrays hold them. tw holds the stages
 * 2, 4, ..., n one after the other (s/2 each, n-1 in all). */
static void radix2_twiddles(int64_t n, int inverse, float *tw_re, float *tw_im)
{
    int64_t at = 0;
    for (int64_t s = 2; s <= n; s *= 2)
        for (int64_t k = 0; k < s / 2; k++, at++) {
            double x = (inverse ? 2.0 : -2.0) * M_PI * ((double)k / (double)s);
            tw_re[at] = (float)cos(x);
            tw_im[at] = (float)sin(x);
        }
}

/* fftRadix2 on one row, unrolled: its recursion splits even and odd indices
 * down to single values, so the values are taken in bit-reversed order and
 * each stage of size s combines E[k] + w*O[k], E[k] - w*O[k] as it does (its
 * complex multiply in double, rounded to float32 per part; adds in float32). */
static void radix2_row(const float *x, int64_t n, const float *tw_re, const float *tw_im,
                       float *wr, float *wi)
{
    int bits = 0;
    while (((int64_t)1 << bits) < n)
        bits++;
    for (int64_t i = 0; i < n; i++) {
        int64_t r = 0;
        for (int b = 0; b < bits; b++)
            r |= ((i >> b) & 1) << (bits - 1 - b);
        wr[r] = x[2 * i];
        wi[r] = x[2 * i + 1];
    }
    int64_t at = 0;
    for (int64_t s = 2; s <= n; at += s / 2, s *= 2) {
        int64_t half = s / 2;
        for (int64_t j = 0; j < n; j += s)
            for (int64_t k = 0; k < half; k++) {
                double c = tw_re[at + k], sn = tw_im[at + k];
                float er = wr[j + k], ei = wi[j + k];
                float orr = wr[j + k + half], oi = wi[j + k + half];
                float pr = (float)(c * orr - sn * oi);
                float pi = (float)(c * oi + sn * orr);
                wr[j + k] = er + pr;
                wi[j + k] = ei + pi;
                wr[j + k + half] = er - pr;
                wi[j + k + half] = ei - pi;
            }
    }
}

/* fourierTransformByMatmul on one row: every term's exponent in double
 * (backend_util.exponent), the sums in double, rounded to float32 at the end. */
static void dft_row(const float *x, int64_t n, int inverse, float *out)
{
    for (int64_t r = 0; r < n; r++) {
        double re = 0.0, im = 0.0;
        for (int64_t c = 0; c < n; c++) {
            double a = (inverse ? 2.0 : -2.0) * M_PI * ((double)(r * c) / (double)n);
            double er = cos(a), ei = sin(a);
            double tr = x[2 * c], ti = x[2 * c + 1];
            re += tr * er - ti * ei;
            im += tr * ei + ti * er;
        }
        if (inverse) {
            re /= (double)n;
            im /= (double)n;
        }
        out[2 * r] = (float)re;
        out[2 * r + 1] = (float)im;
    }
}

/* fftBatch: rows of n complex values from x (interleaved) into out. */
static si_result fft_rows(opctx *o, const float *x, int64_t batch, int64_t n, int inverse,
                          float *out)
{
    if (batch == 0)
        return SI_OK;
    if (n & (n - 1)) {
        for (int64_t b = 0; b < batch; b++)
            dft_row(x + 2 * b * n, n, inverse, out + 2 * b * n);
        return SI_OK;
    }
    float *tw = malloc((size_t)(2 * n) * sizeof *tw);
    float *w = malloc((size_t)(2 * n) * sizeof *w);
    if (!tw || !w) {
        free(tw);
        free(w);
        return ip_nomem(o->in);
    }
    radix2_twiddles(n, inverse, tw, tw + n);
    for (int64_t b = 0; b < batch; b++) {
        radix2_row(x + 2 * b * n, n, tw, tw + n, w, w + n);
        float *row = out + 2 * b * n;
        for (int64_t i = 0; i < n; i++) {
            /* fftImpl's inverse: a float32 RealDiv by the size */
            row[2 * i] = inverse ? w[i] / (float)n : w[i];
            row[2 * i + 1] = inverse ? w[n + i] / (float)n : w[n + i];
        }
    }
    free(tw);
    free(w);
    return SI_OK;
}

/* ---- the ops ---- */

static si_result need_dtype(opctx *o, int i, si_dtype dt)
{
    si_dtype got = o->data[i]->b.dtype;
    if (got != dt)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "input %d must be %s, not %s", i,
                            ip_dt_name(dt), ip_dt_name(got));
    return SI_OK;
}

/* The innermost dimension and the batch of the rows over it; tfjs fails on a
 * scalar or an empty innermost dimension (its batch is 0/0). */
static si_result rows_of(opctx *o, const core_shape *s, int64_t *batch, int64_t *n)
{
    if (s->rank < 1 || s->d[s->rank - 1] == 0)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "the input needs an innermost dimension of at least 1 element");
    *n = s->d[s->rank - 1];
    *batch = core_shape_count(s) / *n;
    return SI_OK;
}

static si_result op_complex(opctx *o)
{
    si_result st = ip_need_inputs(o, 2);
    if (st || (st = need_dtype(o, 0, SI_FLOAT32)) || (st = need_dtype(o, 1, SI_FLOAT32)))
        return st;
    const core_buf *re = &o->data[0]->b, *im = &o->data[1]->b;
    if (!core_shape_eq(&re->shape, &im->shape)) {
        char a[160], b[160];
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "real and imag shapes, %s and %s, must match",
                            core_shape_str(&re->shape, a, sizeof a),
                            core_shape_str(&im->shape, b, sizeof b));
    }
    ival *v = ip_val_new(CORE_COMPLEX64, &re->shape);
    if (!v)
        return ip_nomem(o->in);
    float *d = v->b.data;
    const float *r = re->data, *i = im->data;
    for (int64_t k = 0; k < core_shape_count(&re->shape); k++) {
        d[2 * k] = r[k];
        d[2 * k + 1] = i[k];
    }
    return ip_set_out(o, 0, v);
}

/* Real, Imag: tfjs reads the parts of a complex tensor only (a float input
 * has none, and fails there). */
static si_result op_part(opctx *o, int part)
{
    si_result st = ip_need_inputs(o, 1);
    if (st || (st = need_dtype(o, 0, CORE_COMPLEX64)))
        return st;
    const core_buf *x = &o->data[0]->b;
    ival *v = ip_val_new(SI_FLOAT32, &x->shape);
    if (!v)
        return ip_nomem(o->in);
    const float *s = x->data;
    float *d = v->b.data;
    for (int64_t k = 0; k < core_shape_count(&x->shape); k++)
        d[k] = s[2 * k + part];
    return ip_set_out(o, 0, v);
}

/* V8's Math.hypot on two values: an infinity wins over NaN; otherwise the
 * values scaled by the larger one, squared and Kahan-summed. */
static double js_hypot(double a, double b)
{
    if (isinf(a) || isinf(b))
        return INFINITY;
    if (isnan(a) || isnan(b))
        return NAN;
    double v[2] = {fabs(a), fabs(b)};
    double max = v[0] > v[1] ? v[0] : v[1];
    if (max == 0)
        return 0;
    double sum = 0, comp = 0;
    for (int i = 0; i < 2; i++) {
        double n = v[i] / max;
        double summand = n * n - comp;
        double pre = sum + summand;
        comp = (pre - sum) - summand;
        sum = pre;
    }
    return sqrt(sum) * max;
}

/* ComplexAbs: the converter maps it to tf.abs, which is ComplexAbs on a
 * complex value and Abs on any other (Math.abs into a Float32Array). */
static si_result op_complex_abs(opctx *o)
{
    si_result st = ip_need_inputs(o, 1);
    if (st != SI_OK)
        return st;
    const core_buf *x = &o->data[0]->b;
    int64_t cnt = core_shape_count(&x->shape);
    if (x->dtype == SI_BOOL)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "input 0 is bool");
    ival *v = ip_val_new(x->dtype == CORE_COMPLEX64 ? SI_FLOAT32 : x->dtype, &x->shape);
    if (!v)
        return ip_nomem(o->in);
    if (x->dtype == CORE_COMPLEX64) {
        const float *s = x->data;
        float *d = v->b.data;
        for (int64_t k = 0; k < cnt; k++)
            d[k] = (float)js_hypot(s[2 * k], s[2 * k + 1]);
    } else if (x->dtype == SI_FLOAT32) {
        const float *s = x->data;
        float *d = v->b.data;
        for (int64_t k = 0; k < cnt; k++)
            d[k] = fabsf(s[k]);
    } else {
        const int32_t *s = x->data;
        int32_t *d = v->b.data;
        for (int64_t k = 0; k < cnt; k++)
            d[k] = (int32_t)(uint32_t)(int64_t)(float)llabs((long long)s[k]);
    }
    return ip_set_out(o, 0, v);
}

static si_result op_fft(opctx *o, int inverse)
{
    si_result st = ip_need_inputs(o, 1);
    if (st || (st = need_dtype(o, 0, CORE_COMPLEX64)))
        return st;
    const core_buf *x = &o->data[0]->b;
    int64_t batch = 0, n = 1;
    if ((st = rows_of(o, &x->shape, &batch, &n)))
        return st;
    ival *v = ip_val_new(CORE_COMPLEX64, &x->shape);
    if (!v)
        return ip_nomem(o->in);
    if ((st = fft_rows(o, x->data, batch, n, inverse, v->b.data))) {
        ip_val_unref(v);
        return st;
    }
    return ip_set_out(o, 0, v);
}

/* tfjs-core rfft with no fftLength (the converter passes none, its
 * fft_length input is notSupported): the FFT of (x, +0) over the innermost
 * dimension, its first n/2+1 values. */
static si_result op_rfft(opctx *o)
{
    si_result st = ip_need_inputs(o, 1);
    if (st || (st = need_dtype(o, 0, SI_FLOAT32)))
        return st;
    const core_buf *x = &o->data[0]->b;
    int64_t batch = 0, n = 1;
    if ((st = rows_of(o, &x->shape, &batch, &n)))
        return st;
    int64_t half = n / 2 + 1;
    core_shape os = x->shape;
    os.d[os.rank - 1] = half;
    float *in = malloc((size_t)(2 * batch * n + 1) * sizeof *in);
    float *full = malloc((size_t)(2 * batch * n + 1) * sizeof *full);
    ival *v = in && full ? ip_val_new(CORE_COMPLEX64, &os) : NULL;
    if (!v) {
        free(in);
        free(full);
        return ip_nomem(o->in);
    }
    const float *xs = x->data;
    for (int64_t k = 0; k < batch * n; k++) {
        in[2 * k] = xs[k];
        in[2 * k + 1] = 0.0f;
    }
    st = fft_rows(o, in, batch, n, 0, full);
    float *d = v->b.data;
    for (int64_t b = 0; st == SI_OK && b < batch; b++)
        memcpy(d + 2 * b * half, full + 2 * b * n, (size_t)(2 * half) * sizeof *d);
    free(in);
    free(full);
    if (st != SI_OK) {
        ip_val_unref(v);
        return st;
    }
    return ip_set_out(o, 0, v);
}

/* tfjs-core irfft: each row of n values is completed to 2(n-1) by its
 * conjugates (rows of 1 or 2 are taken as they are), then the real part of
 * its IFFT. Its result is [batch, width], or [d0, batch/d0, width] for a
 * rank-3 input whose first dimension is not 0. */
static si_result op_irfft(opctx *o)
{
    si_result st = ip_need_inputs(o, 1);
    if (st || (st = need_dtype(o, 0, CORE_COMPLEX64)))
        return st;
    const core_buf *x = &o->data[0]->b;
    int64_t batch = 0, n = 1;
    if ((st = rows_of(o, &x->shape, &batch, &n)))
        return st;
    int64_t m = n <= 2 ? n : 2 * (n - 1);
    core_shape os = {.rank = 2, .d = {batch, m}};
    if (x->shape.rank == 3 && x->shape.d[0] != 0)
        os = (core_shape){.rank = 3, .d = {x->shape.d[0], batch / x->shape.d[0], m}};
    float *in = malloc((size_t)(2 * batch * m + 1) * sizeof *in);
    float *res = malloc((size_t)(2 * batch * m + 1) * sizeof *res);
    ival *v = in && res ? ip_val_new(SI_FLOAT32, &os) : NULL;
    if (!v) {
        free(in);
        free(res);
        return ip_nomem(o->in);
    }
    const float *xs = x->data;
    for (int64_t b = 0; b < batch; b++) {
        const float *row = xs + 2 * b * n;
        float *dst = in + 2 * b * m;
        memcpy(dst, row, (size_t)(2 * n) * sizeof *dst);
        for (int64_t j = n; j < m; j++) {
            /* reverse(slice(x, 1, n-2)): element j is x[m - j]; imag times -1 */
            dst[2 * j] = row[2 * (m - j)];
            dst[2 * j + 1] = row[2 * (m - j) + 1] * -1.0f;
        }
    }
    st = fft_rows(o, in, batch, m, 1, res);
    float *d = v->b.data;
    for (int64_t k = 0; st == SI_OK && k < batch * m; k++)
        d[k] = res[2 * k];
    free(in);
    free(res);
    if (st != SI_OK) {
        ip_val_unref(v);
        return st;
    }
    return ip_set_out(o, 0, v);
}

/* Element i of x as a complex value: tfjs casts a float32 (or int32, bool)
 * operand of a complex op to complex64 with +0 imaginary parts. */
static void complex_at(const core_buf *x, int64_t i, float *re, float *im)
{
    if (x->dtype == CORE_COMPLEX64) {
        *re = ((const float *)x->data)[2 * i];
        *im = ((const float *)x->data)[2 * i + 1];
        return;
    }
    *re = x->dtype == SI_FLOAT32 ? ((const float *)x->data)[i]
                                 : (float)((const int32_t *)x->data)[i];
    *im = 0.0f;
}

/* Element of x that element i of out (x broadcast to out's shape) reads. */
static int64_t broadcast_index(const core_shape *x, const core_shape *out, int64_t i)
{
    int64_t idx = 0, stride = 1;
    for (int d = out->rank - 1; d >= 0; d--) {
        int64_t c = i % out->d[d];
        i /= out->d[d];
        int dx = d - (out->rank - x->rank);
        if (dx < 0)
            break;
        if (x->d[dx] != 1)
            idx += c * stride;
        stride *= x->d[dx];
    }
    return idx;
}

/* backend_util.getBroadcastDims(x, out) is empty: no dimension of x is a 1
 * that out widens. */
static int no_broadcast_dims(const core_shape *x, const core_shape *out)
{
    for (int i = 0; i < x->rank; i++)
        if (x->d[x->rank - 1 - i] == 1 && out->d[out->rank - 1 - i] > 1)
            return 0;
    return 1;
}

/* Operand x's value for element i of out, as createComplexBinaryKernelImpl
 * reads it. Where neither operand has broadcast dims it takes element
 * i % (2 * size) of x, counting the length of x's interleaved re/im array as
 * if it were x's size: past size it reads undefined, and the result is NaN.
 * That is tfjs 4.22's answer for, e.g., [3,5] * [5], and so it is here. */
static void operand_at(const core_buf *x, const core_shape *out, int flat, int64_t i, float *re,
                       float *im)
{
    if (!flat) {
        complex_at(x, broadcast_index(&x->shape, out, i), re, im);
        return;
    }
    int64_t n = core_shape_count(&x->shape), j = i % (2 * n);
    if (j >= n)
        *re = *im = NAN;
    else
        complex_at(x, j, re, im);
}

/* Add, AddV2, Sub, Mul with a complex operand (createComplexBinaryKernelImpl:
 * numpy broadcasting; the product's parts in double, rounded to float32). */
static si_result op_binary(opctx *o)
{
    si_result st = ip_need_inputs(o, 2);
    if (st != SI_OK)
        return st;
    const core_buf *a = &o->data[0]->b, *b = &o->data[1]->b;
    core_shape os;
    if (core_broadcast_shape(&a->shape, &b->shape, &os)) {
        char sa[160], sb[160];
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                            "operands could not be broadcast together with shapes %s and %s",
                            core_shape_str(&a->shape, sa, sizeof sa),
                            core_shape_str(&b->shape, sb, sizeof sb));
    }
    ival *v = ip_val_new(CORE_COMPLEX64, &os);
    if (!v)
        return ip_nomem(o->in);
    const char *op = o->n->op;
    int kind = !strcmp(op, "Mul") ? 2 : !strcmp(op, "Sub") ? 1 : 0;
    int flat = no_broadcast_dims(&a->shape, &os) && no_broadcast_dims(&b->shape, &os);
    float *d = v->b.data;
    for (int64_t i = 0; i < core_shape_count(&os); i++) {
        float ar, ai, br, bi;
        operand_at(a, &os, flat, i, &ar, &ai);
        operand_at(b, &os, flat, i, &br, &bi);
        if (kind == 2) {
            d[2 * i] = (float)((double)ar * br - (double)ai * bi);
            d[2 * i + 1] = (float)((double)ar * bi + (double)ai * br);
        } else {
            d[2 * i] = kind ? ar - br : ar + br;
            d[2 * i + 1] = kind ? ai - bi : ai + bi;
        }
    }
    return ip_set_out(o, 0, v);
}

/* Runs node o through the op table on bufs (its inputs with a complex one
 * replaced by a float32 part) into a new float32 value *v. */
static si_result eval_on(opctx *o, const core_buf **bufs, core_buf *v)
{
    core_buf *out = calloc((size_t)o->n_outs + 1, sizeof *out);
    if (!out)
        return ip_nomem(o->in);
    si_result st = core_eval_node(o->in->g, o->node, bufs, o->n_data, out, o->n_outs, o->in->load,
                                  o->in->load_user, o->in->err);
    if (st == SI_OK && (!out[0].data || out[0].dtype != SI_FLOAT32))
        st = ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "no float32 result on a part");
    for (int i = 1; i < o->n_outs; i++)
        free(out[i].data);
    if (st == SI_OK)
        *v = out[0];
    else
        free(out[0].data);
    free(out);
    return st;
}

/* One part (0 real, 1 imaginary) of every complex input, as float32 buffers
 * in parts[], the other inputs as they are in bufs[]. */
static si_result split_parts(opctx *o, int part, const core_buf **bufs, core_buf *parts)
{
    for (int i = 0; i < o->n_data; i++) {
        const core_buf *x = &o->data[i]->b;
        bufs[i] = x;
        if (x->dtype != CORE_COMPLEX64)
            continue;
        int64_t n = core_shape_count(&x->shape);
        parts[i] = (core_buf){.dtype = SI_FLOAT32, .shape = x->shape,
                              .data = malloc((size_t)(n ? n : 1) * sizeof(float))};
        if (!parts[i].data)
            return ip_nomem(o->in);
        for (int64_t k = 0; k < n; k++)
            ((float *)parts[i].data)[k] = ((const float *)x->data)[2 * k + part];
        bufs[i] = &parts[i];
    }
    return SI_OK;
}

/* A value-moving op on complex inputs: the op on the real parts and on the
 * imaginary parts, interleaved. The other inputs are its shape and axis
 * arguments; tfjs has no complex form of a float32 one mixed in. */
static si_result op_on_parts(opctx *o)
{
    for (int i = 0; i < o->n_data; i++)
        if (o->data[i]->b.dtype == SI_FLOAT32)
            return ip_node_fail(o->in, o->node, SI_ERR_SHAPE,
                                "input %d is float32 among complex64 inputs", i);
    const core_buf **bufs = calloc((size_t)o->n_data + 1, sizeof *bufs);
    core_buf *parts = calloc((size_t)o->n_data + 1, sizeof *parts);
    core_buf res[2] = {{.data = NULL}, {.data = NULL}};
    si_result st = bufs && parts ? SI_OK : ip_nomem(o->in);
    for (int p = 0; p < 2 && st == SI_OK; p++) {
        st = split_parts(o, p, bufs, parts);
        if (st == SI_OK)
            st = eval_on(o, bufs, &res[p]);
        for (int i = 0; parts && i < o->n_data; i++) {
            free(parts[i].data);
            parts[i].data = NULL;
        }
    }
    ival *v = st == SI_OK ? ip_val_new(CORE_COMPLEX64, &res[0].shape) : NULL;
    if (st == SI_OK && !v)
        st = ip_nomem(o->in);
    for (int64_t k = 0; st == SI_OK && k < core_shape_count(&res[0].shape); k++) {
        ((float *)v->b.data)[2 * k] = ((const float *)res[0].data)[k];
        ((float *)v->b.data)[2 * k + 1] = ((const float *)res[1].data)[k];
    }
    free(res[0].data);
    free(res[1].data);
    free(bufs);
    free(parts);
    return st == SI_OK ? ip_set_out(o, 0, v) : st;
}

/* Cast to complex64: float32(x) with +0 imaginary parts (complex64 to
 * itself: the value). From complex64: its real part cast as a float32 is
 * (the op table's Cast). */
static si_result op_cast(opctx *o)
{
    si_result st = ip_need_inputs(o, 1);
    if (st != SI_OK)
        return st;
    const core_buf *x = &o->data[0]->b;
    if (!core_node_makes_complex(o->n)) {
        const core_buf **bufs = calloc((size_t)o->n_data + 1, sizeof *bufs);
        core_buf *parts = calloc((size_t)o->n_data + 1, sizeof *parts);
        core_buf re = {.data = NULL};
        st = bufs && parts ? split_parts(o, 0, bufs, parts) : ip_nomem(o->in);
        core_buf *out = st == SI_OK ? calloc((size_t)o->n_outs + 1, sizeof *out) : NULL;
        if (st == SI_OK && !out)
            st = ip_nomem(o->in);
        if (st == SI_OK)
            st = core_eval_node(o->in->g, o->node, bufs, o->n_data, out, o->n_outs, o->in->load,
                                o->in->load_user, o->in->err);
        if (st == SI_OK)
            re = out[0];
        for (int i = 0; parts && i < o->n_data; i++)
            free(parts[i].data);
        for (int i = 1; out && i < o->n_outs; i++)
            free(out[i].data);
        free(out);
        free(bufs);
        free(parts);
        if (st != SI_OK)
            return st;
        ival *v = ip_val_wrap(re);
        if (!v)
            free(re.data);
        return ip_set_out(o, 0, v);
    }
    if (x->dtype == CORE_COMPLEX64)
        return ip_set_out(o, 0, ip_val_ref(o->data[0]));
    ival *v = ip_val_new(CORE_COMPLEX64, &x->shape);
    if (!v)
        return ip_nomem(o->in);
    for (int64_t k = 0; k < core_shape_count(&x->shape); k++)
        complex_at(x, k, (float *)v->b.data + 2 * k, (float *)v->b.data + 2 * k + 1);
    return ip_set_out(o, 0, v);
}

si_result ip_complex(opctx *o)
{
    const char *op = o->n->op;
    if (!strcmp(op, "Complex"))
        return op_complex(o);
    if (!strcmp(op, "Real") || !strcmp(op, "Imag"))
        return op_part(o, !strcmp(op, "Imag"));
    if (!strcmp(op, "ComplexAbs"))
        return op_complex_abs(o);
    if (!strcmp(op, "FFT") || !strcmp(op, "IFFT"))
        return op_fft(o, !strcmp(op, "IFFT"));
    if (!strcmp(op, "RFFT"))
        return op_rfft(o);
    if (!strcmp(op, "IRFFT"))
        return op_irfft(o);
    if (!strcmp(op, "Identity")) { /* of a complex value */
        si_result st = ip_need_inputs(o, 1);
        return st ? st : ip_set_out(o, 0, ip_val_ref(o->data[0]));
    }
    if (in_list(op, binary_ops))
        return op_binary(o);
    if (in_list(op, part_ops))
        return op_on_parts(o);
    if (!strcmp(op, "Cast"))
        return op_cast(o);
    return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "not a complex op");
}
