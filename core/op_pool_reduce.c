/* Pooling, reductions, softmax, argmax and image resize.
 * Semantics follow TensorFlow.js 4.22's CPU kernels (pool_utils.js, Sum.js, Mean.js,
 * Max_impl.js, Min.js, Prod.js, Any.js, All.js, Softmax.js, ArgMax.js, ArgMin.js,
 * ResizeBilinear.js, ResizeNearestNeighbor.js). tfjs accumulates in float64; the GPU
 * has only float32, so host references and shaders both accumulate in float32 in the
 * same order, which keeps them bitwise close to each other and within float32
 * rounding of tfjs. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"

/* ---- host references ---- */

void ck_host_pool(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_pool_p *p = &s->u.pool;
    const core_buf *x = ins[0];
    int64_t o = 0;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < p->out_h; oy++)
            for (int32_t ox = 0; ox < p->out_w; ox++)
                for (int32_t ch = 0; ch < p->c; ch++, o++) {
                    int32_t y0 = oy * p->stride_h - p->pad_top;
                    int32_t x0 = ox * p->stride_w - p->pad_left;
                    int32_t ylo = y0 > 0 ? y0 : 0, yhi = y0 + p->k_h < p->in_h ? y0 + p->k_h : p->in_h;
                    int32_t xlo = x0 > 0 ? x0 : 0, xhi = x0 + p->k_w < p->in_w ? x0 + p->k_w : p->in_w;
                    /* tfjs starts max at -Infinity and keeps `pixel > max`, so NaN never wins;
                     * avg sums in a JS number (float64) and divides that by the in-bounds
                     * count, padding excluded. Int inputs go through float like the shader
                     * does (exact below 2^24). */
                    float m = -INFINITY;
                    double sum = 0.0;
                    int32_t cnt = 0;
                    for (int32_t y = ylo; y < yhi; y++)
                        for (int32_t xx = xlo; xx < xhi; xx++) {
                            int64_t i = (((int64_t)b * p->in_h + y) * p->in_w + xx) * p->c + ch;
                            float v = x->dtype == SI_FLOAT32 ? ((const float *)x->data)[i]
                                                             : (float)((const int32_t *)x->data)[i];
                            if (p->is_max) {
                                if (v > m)
                                    m = v;
                            } else {
                                sum += v;
                                cnt++;
                            }
                        }
                    float r = p->is_max ? m : (float)(sum / cnt);
                    if (out->dtype == SI_FLOAT32)
                        ((float *)out->data)[o] = r;
                    else
                        ((int32_t *)out->data)[o] = (int32_t)r;
                }
}

/* A wide carry (ck_reduce_p): element i of a buffer of two words an element. */
static double carry_get(const core_buf *b, int64_t i)
{
    double d;
    memcpy(&d, (const char *)b->data + 8 * i, 8);
    return d;
}

static void carry_put(core_buf *b, int64_t i, double d)
{
    memcpy((char *)b->data + 8 * i, &d, 8);
}

void ck_host_reduce(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_reduce_p *p = &s->u.reduce;
    const core_buf *x = ins[0];
    const float *xf = x->data;
    const int32_t *xi = x->data;
    int in_f = x->dtype == SI_FLOAT32, out_f = out->dtype == SI_FLOAT32;
    int init = p->has_init && ins[1];
    int64_t cw = p->lanes ? p->lanes : 1; /* carry pairs an element */
    const float *initf = init ? ins[1]->data : NULL;
    const int32_t *initi = init ? ins[1]->data : NULL;
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t k = 0; k < p->inner; k++) {
            int64_t base = (int64_t)o * p->n * p->inner + k, oi = (int64_t)o * p->inner + k;
#define AT(j) (base + (int64_t)(j) * p->inner)
            switch (p->op) {
            case CK_R_MEAN: {
                /* tfjs Mean: cast to float32, divide every element by n (a
                 * float32 tensor), then sum that in a JS number. */
                float fn = (float)(p->divisor ? p->divisor : p->n);
                double acc = !init ? 0.0 : (p->carry & 1) ? carry_get(ins[1], oi * cw) : initf[oi];
                for (int32_t j = 0; j < p->n; j++)
                    acc += (double)((in_f ? xf[AT(j)] : (float)xi[AT(j)]) / fn);
                if (p->carry & 2)
                    carry_put(out, oi * cw, acc);
                else
                    ((float *)out->data)[oi] = (float)acc;
                break;
            }
            case CK_R_SUM:
            case CK_R_PROD: {
                int is_sum = p->op == CK_R_SUM;
                if (out_f) {
                    /* in a JS number, rounded to float32 once (Sum.js, Prod_impl.js) */
                    double acc = !init ? (is_sum ? 0.0 : 1.0)
                                 : (p->carry & 1) ? carry_get(ins[1], oi * cw) : initf[oi];
                    for (int32_t j = 0; j < p->n; j++) {
                        double v = p->pairs ? carry_get(x, AT(j)) : in_f ? xf[AT(j)] : (float)xi[AT(j)];
                        acc = is_sum ? acc + v : acc * v;
                    }
                    if (p->carry & 2)
                        carry_put(out, oi * cw, acc);
                    else
                        ((float *)out->data)[oi] = (float)(p->post_div ? acc / p->post_div : acc);
                } else {
                    /* int32 results wrap, as storing tfjs's exact sum in an Int32Array does */
                    uint32_t acc = init ? (uint32_t)initi[oi] : is_sum ? 0u : 1u;
                    for (int32_t j = 0; j < p->n; j++) {
                        uint32_t v = (uint32_t)xi[AT(j)];
                        acc = is_sum ? acc + v : acc * v;
                    }
                    ((int32_t *)out->data)[oi] = (int32_t)acc;
                }
                break;
            }
            case CK_R_MAX:
            case CK_R_MIN: {
                int is_max = p->op == CK_R_MAX;
                if (in_f) {
                    /* NaN sticks: `isNaN(v) || v > m` */
                    float m = init ? initf[oi] : xf[AT(0)];
                    for (int32_t j = 0; j < p->n; j++) {
                        float v = xf[AT(j)];
                        if (isnan(v) || (is_max ? v > m : v < m))
                            m = v;
                    }
                    ((float *)out->data)[oi] = m;
                } else {
                    int32_t m = init ? initi[oi] : xi[AT(0)];
                    for (int32_t j = 0; j < p->n; j++) {
                        int32_t v = xi[AT(j)];
                        if (is_max ? v > m : v < m)
                            m = v;
                    }
                    ((int32_t *)out->data)[oi] = m;
                }
                break;
            }
            case CK_R_ANY:
            case CK_R_ALL: {
                int is_any = p->op == CK_R_ANY;
                int acc = init ? initi[oi] != 0 : in_f ? xf[AT(0)] != 0.f : xi[AT(0)] != 0;
                for (int32_t j = init ? 0 : 1; j < p->n; j++) {
                    int v = in_f ? xf[AT(j)] != 0.f : xi[AT(j)] != 0;
                    acc = is_any ? (acc || v) : (acc && v);
                }
                ((int32_t *)out->data)[oi] = acc;
                break;
            }
            default:
                break;
            }
#undef AT
        }
}

void ck_host_softmax(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_softmax_p *p = &s->u.softmax;
    const float *x = ins[0]->data;
    float *y = out->data;
    for (int32_t r = 0; r < p->outer; r++) {
        const float *xr = x + (int64_t)r * p->n;
        float *yr = y + (int64_t)r * p->n;
        float m = xr[0];
        for (int32_t j = 0; j < p->n; j++)
            if (isnan(xr[j]) || xr[j] > m)
                m = xr[j];
        /* tfjs: b = exp(x - max) stored as float32, sum(b) (in a JS number,
         * then float32), then b / sum (LogSoftmax: (x - max) - log(sum)). */
        double acc = 0.0;
        for (int32_t j = 0; j < p->n; j++)
            acc += expf(xr[j] - m);
        float sum = (float)acc;
        if (p->log) {
            float ls = logf(sum);
            for (int32_t j = 0; j < p->n; j++)
                yr[j] = (xr[j] - m) - ls;
        } else {
            for (int32_t j = 0; j < p->n; j++)
                yr[j] = expf(xr[j] - m) / sum;
        }
    }
}

/* Element i of a float32 or int32 buffer. */
static double elem_f64(const core_buf *x, int64_t i)
{
    if (x->dtype == SI_FLOAT32)
        return ((const float *)x->data)[i];
    return ((const int32_t *)x->data)[i];
}

void ck_host_argmax(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_argmax_p *p = &s->u.argmax;
    const core_buf *x = ins[0];
    int32_t *y = out->data;
    for (int32_t o = 0; o < p->outer; o++)
        for (int32_t k = 0; k < p->inner; k++) {
            int64_t base = (int64_t)o * p->n * p->inner + k;
            int32_t best = 0;
            /* Strict comparison: ties keep the first index, a NaN is never chosen
             * (and a leading NaN is never displaced), as in tfjs. Both dtypes
             * compare as doubles, which hold every float32 and int32 exactly. */
            double m = elem_f64(x, base);
            for (int32_t j = 1; j < p->n; j++) {
                double v = elem_f64(x, base + (int64_t)j * p->inner);
                if (p->is_min ? v < m : v > m) {
                    m = v;
                    best = j;
                }
            }
            y[(int64_t)o * p->inner + k] = best;
        }
}

/* Source coordinate of output index r along one axis, as the exact rational num/den.
 * tfjs computes ratio = inEff/outEff and ratio*r (or ratio*(r+0.5)[-0.5]) in float64;
 * exact integers give the same floors except where float64 rounding lands an ulp
 * below an integer, and they are the same on every GPU (GLSL division is not
 * correctly rounded). The shader mirrors this function. */
static void resize_src(int32_t r, int32_t in, int32_t out, int align, int hpc, int bilinear,
                       int64_t *num, int64_t *den)
{
    int64_t in_eff = (align && out > 1) ? in - 1 : in;
    int64_t out_eff = (align && out > 1) ? out - 1 : out;
    if (hpc) {
        *num = in_eff * (2 * (int64_t)r + 1) - (bilinear ? out_eff : 0);
        *den = 2 * out_eff;
    } else {
        *num = in_eff * r;
        *den = out_eff;
    }
}

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Bilinear: floor clamped at 0, ceil clamped at in-1, frac = x - floor (may be negative
 * with half-pixel centers, as in tfjs). */
static void bilinear_axis(int32_t r, int32_t in, int32_t out, int align, int hpc, int32_t *lo,
                          int32_t *hi, float *frac)
{
    int64_t num, den;
    resize_src(r, in, out, align, hpc, 1, &num, &den);
    int64_t fl = floor_div(num, den);
    int64_t ce = fl + (num != fl * den);
    /* tfjs does not clamp the floor above; it only overshoots with both align_corners
     * and half_pixel_centers, which tfjs's op rejects, but the kernel stays in bounds. */
    int64_t l = fl < 0 ? 0 : (fl > in - 1 ? in - 1 : fl);
    *lo = (int32_t)l;
    *hi = (int32_t)(ce < in - 1 ? ce : in - 1);
    *frac = (float)(num - l * den) / (float)den;
}

/* Nearest: floor, or Math.round (half up) with align_corners; min(in-1), and max(0)
 * with half-pixel centers. */
static int32_t nearest_axis(int32_t r, int32_t in, int32_t out, int align, int hpc)
{
    int64_t num, den;
    resize_src(r, in, out, align, hpc, 0, &num, &den);
    int64_t i = align ? (2 * num + den) / (2 * den) : num / den;
    if (i > in - 1)
        i = in - 1;
    if (hpc && i < 0)
        i = 0;
    return (int32_t)i;
}

void ck_resize_rows(const ck_resize_p *p, int32_t oy, int32_t *lo, int32_t *hi)
{
    if (p->bilinear) {
        float f;
        bilinear_axis(oy, p->in_h, p->out_h, p->align_corners, p->half_pixel_centers, lo, hi, &f);
    } else {
        *lo = *hi = nearest_axis(oy, p->in_h, p->out_h, p->align_corners, p->half_pixel_centers);
    }
}

void ck_host_resize(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_resize_p *p = &s->u.resize;
    const core_buf *x = ins[0];
    int in_f = x->dtype == SI_FLOAT32, out_f = out->dtype == SI_FLOAT32;
    int64_t o = 0;
#define RD(i) (in_f ? ((const float *)x->data)[i] : (float)((const int32_t *)x->data)[i])
    int32_t rows = p->rows ? p->rows : p->out_h, in_rows = p->rows ? p->in_rows : p->in_h;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = p->y0; oy < p->y0 + rows; oy++)
            for (int32_t ox = 0; ox < p->out_w; ox++) {
                int64_t bo = (int64_t)b * in_rows - p->in_y0;
                if (p->bilinear) {
                    int32_t y0, y1, x0, x1;
                    float fy, fx;
                    bilinear_axis(oy, p->in_h, p->out_h, p->align_corners, p->half_pixel_centers,
                                  &y0, &y1, &fy);
                    bilinear_axis(ox, p->in_w, p->out_w, p->align_corners, p->half_pixel_centers,
                                  &x0, &x1, &fx);
                    int64_t tl = ((bo + y0) * p->in_w + x0) * p->c, tr = ((bo + y0) * p->in_w + x1) * p->c;
                    int64_t bl = ((bo + y1) * p->in_w + x0) * p->c, br = ((bo + y1) * p->in_w + x1) * p->c;
                    for (int32_t ch = 0; ch < p->c; ch++, o++) {
                        float vtl = RD(tl + ch), vtr = RD(tr + ch), vbl = RD(bl + ch), vbr = RD(br + ch);
                        float top = vtl + (vtr - vtl) * fx;
                        float bot = vbl + (vbr - vbl) * fx;
                        ((float *)out->data)[o] = top + (bot - top) * fy;
                    }
                } else {
                    int32_t sy = nearest_axis(oy, p->in_h, p->out_h, p->align_corners, p->half_pixel_centers);
                    int32_t sx = nearest_axis(ox, p->in_w, p->out_w, p->align_corners, p->half_pixel_centers);
                    int64_t src = ((bo + sy) * p->in_w + sx) * p->c;
                    for (int32_t ch = 0; ch < p->c; ch++, o++) {
                        if (out_f && in_f)
                            ((float *)out->data)[o] = ((const float *)x->data)[src + ch];
                        else if (out_f)
                            ((float *)out->data)[o] = (float)((const int32_t *)x->data)[src + ch];
                        else
                            ((int32_t *)out->data)[o] = ((const int32_t *)x->data)[src + ch];
                    }
                }
            }
#undef RD
}

/* ---- lowering ---- */

static int fits_i32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

/* The tail every lowering here shares: step s, its inputs and parameters set,
 * writes a new tensor of dtype dt and shape os, which is the node's output. */
static si_result emit_as_output(lower_ctx *c, ck_step *s, si_dtype dt, const core_shape *os)
{
    s->out = lc_new_tensor(c, dt, os);
    lc_emit(c, s);
    lc_set_output(c, 0, s->out);
    return SI_OK;
}

/* A float Sum or Mean with few outputs and a long n, or a global average
 * pool, runs as two steps: parts of m consecutive elements each summed by one
 * invocation into a wide pair ([outer * n / m, inner] pairs, the carry
 * output of ck_reduce_p), then each output's n / m pairs summed in order (in
 * lanes where there are many), rounded once or divided by post_div. With one
 * invocation (or workgroup) an output, few outputs left most of a GPU idle
 * while each waited through a long row: selfie's 128x128x16 global pool took
 * 63-71 us on the H100 as 16 workgroups (37 us split, traced). Here the part sums
 * read adjacent elements in adjacent invocations. A second dispatch costs as much
 * as the lanes' form of a row of 4,096 lost (selfie's 64x64 pools: 30 us traced
 * either way; its 32x32 ones 18 us in one step, 28 in two), so only rows of 8,192
 * and more are split. The order hangs on the shape alone (m is chosen from n), so
 * every budget and tiling gives the same bits. */
#define SPLIT_MIN_N 8192     /* shorter rows gain less than the second dispatch costs */
#define SPLIT_MAX_OUT 32768  /* more outputs already keep a GPU busy */
#define SPLIT_PART_MAX 32
#define SPLIT_PART_MIN 8
#define SPLIT_LANES_FROM 32  /* the pairs summed in lanes from this many an output */

int32_t core_reduce_split(int64_t outer, int64_t n, int64_t inner)
{
    if (n < SPLIT_MIN_N || outer * inner >= SPLIT_MAX_OUT)
        return 0;
    for (int64_t m = SPLIT_PART_MAX; m >= SPLIT_PART_MIN; m--)
        if (n % m == 0)
            return (int32_t)m;
    return 0;
}

/* Emits the two steps of a split float reduction of x ([outer, n, inner]) into
 * out (float32 [outer, inner]): op CK_R_SUM or CK_R_MEAN, m from
 * core_reduce_split, post_div as ck_reduce_p's (an average pool's count). */
static si_result emit_split_reduce(lower_ctx *c, si_error *err, int op, int x, int64_t outer,
                                   int64_t n, int64_t inner, int32_t m, int32_t post_div, int out)
{
    int64_t g = n / m;
    ck_step a = {.kind = CK_REDUCE, .n_in = 1, .in = {x}};
    a.u.reduce = (ck_reduce_p){.op = op, .outer = (int32_t)(outer * g), .n = m,
                               .inner = (int32_t)inner, .dtype = SI_FLOAT32,
                               .divisor = (int32_t)n, .carry = 2};
    core_shape ps = {.rank = 3, .d = {outer, g, 2 * inner}};
    if (!fits_i32(core_shape_count(&ps)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    a.out = lc_new_tensor(c, SI_FLOAT32, &ps);
    if (a.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &a);
    ck_step b = {.kind = CK_REDUCE, .n_in = 1, .in = {a.out}, .out = out};
    b.u.reduce = (ck_reduce_p){.op = CK_R_SUM, .outer = (int32_t)outer, .n = (int32_t)g,
                               .inner = (int32_t)inner, .dtype = SI_FLOAT32, .pairs = 1,
                               .post_div = post_div,
                               .lanes = g >= SPLIT_LANES_FROM ? CK_REDUCE_LANES : 0};
    lc_emit(c, &b);
    return SI_OK;
}

static si_result lower_pool(lower_ctx *c, si_error *err)
{
    int is_max = !strcmp(lc_node(c)->op, "MaxPool");
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs one input");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    char sb[96];
    if (x->shape.rank != 4)
        return lc_fail(c, err, SI_ERR_SHAPE, "input must be rank 4 (NHWC), got %s",
                       core_shape_str(&x->shape, sb, sizeof sb));
    if (x->dtype == SI_BOOL)
        return lc_fail(c, err, SI_ERR_SHAPE, "pooling a bool tensor");
    const char *fmt = lc_attr_str(c, "data_format", "NHWC");
    if (strcmp(fmt, "NHWC"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "data_format %s (only NHWC)", fmt);
    int64_t ks[4], st[4], ep[8];
    if (lc_attr_ints(c, "ksize", ks, 4) != 4 || lc_attr_ints(c, "strides", st, 4) != 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "ksize and strides must be lists of 4");
    if (ks[0] != 1 || ks[3] != 1 || st[0] != 1 || st[3] != 1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "pooling across batch or channels");
    if (ks[1] < 1 || ks[2] < 1 || st[1] < 1 || st[2] < 1 || ks[1] > INT32_MAX ||
        ks[2] > INT32_MAX || st[1] > INT32_MAX || st[2] > INT32_MAX)
        return lc_fail(c, err, SI_ERR_FORMAT, "bad ksize or strides");
    const char *padding = lc_attr_str(c, "padding", "VALID");
    const int64_t *eph = NULL, *epw = NULL;
    if (!strcmp(padding, "EXPLICIT")) {
        if (lc_attr_ints(c, "explicit_paddings", ep, 8) != 8)
            return lc_fail(c, err, SI_ERR_FORMAT, "EXPLICIT padding needs 8 explicit_paddings");
        for (int i = 0; i < 8; i++)
            if (ep[i] < 0 || ep[i] > INT32_MAX / 4)
                return lc_fail(c, err, SI_ERR_FORMAT, "bad explicit_paddings");
        if (ep[0] || ep[1] || ep[6] || ep[7])
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding of batch or channels");
        eph = ep + 2;
        epw = ep + 4;
    }
    int64_t oh, ow, pt, pl;
    si_result s1 = core_conv_out(c, err, x->shape.d[1], ks[1], st[1], 1, padding, eph, &oh, &pt);
    if (s1 != SI_OK)
        return s1;
    s1 = core_conv_out(c, err, x->shape.d[2], ks[2], st[2], 1, padding, epw, &ow, &pl);
    if (s1 != SI_OK)
        return s1;
    core_shape os = {.rank = 4, .d = {x->shape.d[0], oh, ow, x->shape.d[3]}};
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&os)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    /* tfjs returns the input itself for a 1x1 window that keeps the shape. */
    if (ks[1] == 1 && ks[2] == 1 && core_shape_eq(&os, &x->shape)) {
        lc_set_output(c, 0, lc_new_alias(c, lc_in(c, 0), &os));
        return SI_OK;
    }
    /* a global average pool of floats: a split reduction over [n, h * w, c] */
    int64_t hw = x->shape.d[1] * x->shape.d[2];
    int32_t m = core_reduce_split(x->shape.d[0], hw, x->shape.d[3]);
    if (!is_max && x->dtype == SI_FLOAT32 && oh == 1 && ow == 1 && pt == 0 && pl == 0 &&
        ks[1] == x->shape.d[1] && ks[2] == x->shape.d[2] && m) {
        int out = lc_new_tensor(c, SI_FLOAT32, &os);
        if (out < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        si_result st = emit_split_reduce(c, err, CK_R_SUM, lc_in(c, 0), x->shape.d[0], hw,
                                         x->shape.d[3], m, (int32_t)hw, out);
        if (st == SI_OK)
            lc_set_output(c, 0, out);
        return st;
    }
    ck_step s = {.kind = CK_POOL, .n_in = 1};
    s.in[0] = lc_in(c, 0);
    s.u.pool = (ck_pool_p){
        .is_max = is_max, .n = (int32_t)x->shape.d[0], .in_h = (int32_t)x->shape.d[1],
        .in_w = (int32_t)x->shape.d[2], .c = (int32_t)x->shape.d[3], .out_h = (int32_t)oh,
        .out_w = (int32_t)ow, .k_h = (int32_t)ks[1], .k_w = (int32_t)ks[2],
        .stride_h = (int32_t)st[1], .stride_w = (int32_t)st[2], .pad_top = (int32_t)pt,
        .pad_left = (int32_t)pl};
    return emit_as_output(c, &s, x->dtype, &os);
}

/* Axes from constant input 1 (scalar or list), negatives resolved, duplicates
 * dropped, order kept (it decides tfjs's summation order). */
static si_result read_axes(lower_ctx *c, si_error *err, int rank, int *axes, int *n_axes)
{
    int64_t v[2 * SI_MAX_RANK];
    int n = lc_value_ints(c, 1, v, 2 * SI_MAX_RANK, err);
    if (n == -2)
        return err ? err->status : SI_ERR_ARG;
    if (n == -1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "axis must be a constant");
    if (n > 2 * SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_SHAPE, "%d axes for a rank %d tensor", n, rank);
    *n_axes = 0;
    for (int i = 0; i < n; i++) {
        int64_t a = v[i] < 0 ? v[i] + rank : v[i];
        if (a < 0 || a >= rank)
            return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)v[i], rank);
        int dup = 0;
        for (int k = 0; k < *n_axes; k++)
            dup |= axes[k] == (int)a;
        if (!dup)
            axes[(*n_axes)++] = (int)a;
    }
    return SI_OK;
}

static const struct { const char *op; int code; } reduce_ops[] = {
    {"Sum", CK_R_SUM}, {"Mean", CK_R_MEAN}, {"Max", CK_R_MAX}, {"Min", CK_R_MIN},
    {"Prod", CK_R_PROD}, {"Any", CK_R_ANY}, {"All", CK_R_ALL}, {NULL, 0}};

/* Emits the copy of x to [kept..., reduced axes as given] (tfjs's own
 * permutation); *outer: the kept dims' product, *src: the copy. */
static si_result transpose_for_reduce(lower_ctx *c, si_error *err, int xt,
                                      const core_shape *x_shape, const int *is_red,
                                      const int *axes, int na, int64_t *outer, int *src)
{
    core_shape xs = *x_shape;
    int rank = xs.rank;
    si_dtype in_dt = lc_tensor(c, xt)->dtype;
    int perm[SI_MAX_RANK], np = 0;
    for (int i = 0; i < rank; i++)
        if (!is_red[i]) {
            perm[np++] = i;
            *outer *= xs.d[i];
        }
    for (int i = 0; i < na; i++)
        perm[np++] = axes[i];
    int64_t stride[SI_MAX_RANK];
    core_strides(&xs, stride);
    core_shape ts = {.rank = rank};
    for (int i = 0; i < rank; i++)
        ts.d[i] = xs.d[perm[i]];
    int64_t tstride[SI_MAX_RANK];
    core_strides(&ts, tstride);
    ck_step cp = {.kind = CK_COPY, .n_in = 1};
    cp.in[0] = xt;
    cp.u.copy.rank = rank;
    for (int i = 0; i < rank; i++) {
        cp.u.copy.dim[i] = (int32_t)ts.d[i];
        cp.u.copy.in_stride[i] = (int32_t)stride[perm[i]];
        cp.u.copy.out_stride[i] = (int32_t)tstride[i];
    }
    cp.out = lc_new_tensor(c, in_dt, &ts);
    if (cp.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &cp);
    *src = cp.out;
    return SI_OK;
}

/* Reduces tensor xt over axes (resolved, distinct, in tfjs's order) with op;
 * *out_t: the result (an alias of xt when nothing is reduced). */
static si_result reduce_tensor(lower_ctx *c, si_error *err, int op, int xt, const int *axes,
                               int na, int keep, int *out_t)
{
    const core_tensor *x = lc_tensor(c, xt);
    int rank = x->shape.rank;
    si_dtype in_dt = x->dtype;
    core_shape xs = x->shape;
    si_result st;

    /* Output dtype as tfjs: Mean float32; Sum/Prod upcast bool to int32; Any/All bool. */
    si_dtype out_dt = in_dt;
    if (op == CK_R_MEAN)
        out_dt = SI_FLOAT32;
    else if ((op == CK_R_SUM || op == CK_R_PROD) && in_dt == SI_BOOL)
        out_dt = SI_INT32;
    else if (op == CK_R_ANY || op == CK_R_ALL)
        out_dt = SI_BOOL;

    int is_red[SI_MAX_RANK] = {0};
    for (int i = 0; i < na; i++)
        is_red[axes[i]] = 1;
    core_shape os = {.rank = 0};
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (is_red[i])
            n *= xs.d[i];
        if (!is_red[i])
            os.d[os.rank++] = xs.d[i];
        else if (keep)
            os.d[os.rank++] = 1;
    }
    int64_t count = core_shape_count(&xs);
    if (!fits_i32(count))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    if (n == 0 && op != CK_R_SUM && op != CK_R_MEAN && op != CK_R_PROD &&
        core_shape_count(&os) > 0) {
        /* tfjs's Max, Min, All and Any start from the row's first element,
         * which an empty row does not have: undefined, stored as NaN in a
         * float32 result, 0 (false) in an int32 or bool one. */
        int64_t cnt = core_shape_count(&os);
        if (!fits_i32(cnt))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
        int32_t *data = malloc((size_t)cnt * CORE_ELEM);
        if (!data)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < cnt; i++)
            if (out_dt == SI_FLOAT32)
                ((float *)data)[i] = NAN;
            else
                data[i] = 0;
        int t = lc_new_const(c, out_dt, &os, data);
        free(data);
        if (t < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        *out_t = t;
        return SI_OK;
    }

    if (na == 0 && out_dt == in_dt) {
        *out_t = lc_new_alias(c, xt, &os);
        return SI_OK;
    }

    /* Reduced axes contiguous and in increasing order: reduce in place as
     * [outer, n, inner]. Otherwise transpose to [kept..., reduced as given] first,
     * which is tfjs's own permutation, so the summation order is the same. */
    int contiguous = 1;
    for (int i = 1; i < na; i++)
        if (axes[i] != axes[i - 1] + 1)
            contiguous = 0;
    int64_t outer = 1, inner = 1;
    int src = xt;
    if (contiguous) {
        int first = na ? axes[0] : rank, last = na ? axes[na - 1] : rank - 1;
        for (int i = 0; i < first; i++)
            outer *= xs.d[i];
        for (int i = last + 1; i < rank; i++)
            inner *= xs.d[i];
    } else {
        st = transpose_for_reduce(c, err, xt, &xs, is_red, axes, na, &outer, &src);
        if (st != SI_OK)
            return st;
    }
    int32_t m = (op == CK_R_MEAN || op == CK_R_SUM) && in_dt == SI_FLOAT32
                    ? core_reduce_split(outer, n, inner) : 0;
    if (m) {
        int out = lc_new_tensor(c, out_dt, &os);
        if (out < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        *out_t = out;
        return emit_split_reduce(c, err, op, src, outer, n, inner, m, 0, out);
    }
    ck_step s = {.kind = CK_REDUCE, .n_in = 1};
    s.in[0] = src;
    s.u.reduce = (ck_reduce_p){.op = op, .outer = (int32_t)outer, .n = (int32_t)n,
                               .inner = (int32_t)inner, .dtype = in_dt};
    if ((op == CK_R_MEAN || (op == CK_R_SUM && in_dt == SI_FLOAT32)) && n >= CK_REDUCE_WIDE)
        s.u.reduce.lanes = CK_REDUCE_LANES;
    s.out = lc_new_tensor(c, out_dt, &os);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    *out_t = s.out;
    return SI_OK;
}

static si_result lower_reduce(lower_ctx *c, si_error *err)
{
    const char *opname = lc_node(c)->op;
    int op = -1;
    for (int i = 0; reduce_ops[i].op; i++)
        if (!strcmp(reduce_ops[i].op, opname))
            op = reduce_ops[i].code;
    if (op < 0 || lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input and axes");
    int xt = lc_in(c, 0);
    int axes[SI_MAX_RANK], na = 0, t;
    si_result st = read_axes(c, err, lc_tensor(c, xt)->shape.rank, axes, &na);
    if (st == SI_OK)
        st = reduce_tensor(c, err, op, xt, axes, na, lc_attr_bool(c, "keep_dims", 0), &t);
    if (st == SI_OK)
        lc_set_output(c, 0, t);
    return st;
}

/* A unary step of op on tensor t (same shape and dtype); -1 out of memory. */
static int unary_of(lower_ctx *c, int op, int t)
{
    const core_tensor *x = lc_tensor(c, t);
    ck_step s = {.kind = CK_UNARY, .n_in = 1, .in = {t}};
    s.u.unary = (ck_unary_p){.op = op, .count = (int32_t)core_shape_count(&x->shape),
                             .in_dtype = x->dtype, .out_dtype = x->dtype};
    s.out = lc_new_tensor(c, x->dtype, &x->shape);
    if (s.out >= 0)
        lc_emit(c, &s);
    return s.out;
}

/* EuclideanNorm(x, axes; keep_dims) as tfjs's norm(x, 'euclidean', axes):
 * sqrt(sum(x*x)) over the axes, summed in sum's order (tfjs's pow(|x|, 2) and
 * square both round x*x to float32). A scalar is abs(x), its own dtype; tfjs's
 * sqrt takes float32 only. Where tfjs throws on a list of axes (none at rank
 * >= 2, or more than two) the norm is TF's, over the axes given; repeated axes
 * make tfjs's sum build a malformed shape, and are refused. */
static si_result lower_euclidean_norm(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input and axes");
    int xt = lc_in(c, 0);
    const core_tensor *x = lc_tensor(c, xt);
    int rank = x->shape.rank, keep = lc_attr_bool(c, "keep_dims", 0);
    si_dtype dt = x->dtype;
    int64_t v[2 * SI_MAX_RANK];
    int n = lc_value_ints(c, 1, v, 2 * SI_MAX_RANK, err);
    if (n == -2)
        return err ? err->status : SI_ERR_ARG;
    if (n == -1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "axis must be a constant");
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_SHAPE, "%d axes for a rank %d tensor", n, rank);
    int axes[SI_MAX_RANK], na = 0, t;
    if (rank == 0) { /* tfjs checks the axes only to keep dims */
        if (keep && n > 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld out of range for rank 0", (long long)v[0]);
        if (dt == SI_BOOL)
            return lc_fail(c, err, SI_ERR_SHAPE, "x must be float32 or int32");
        if ((t = unary_of(c, CK_U_ABS, xt)) < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    for (int i = 0; i < n; i++) {
        int64_t a = v[i] < 0 ? v[i] + rank : v[i];
        if (a < 0 || a >= rank)
            return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld out of range for rank %d",
                           (long long)v[i], rank);
        for (int k = 0; k < na; k++)
            if (axes[k] == (int)a)
                return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld given twice", (long long)v[i]);
        axes[na++] = (int)a;
    }
    if (dt != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "x must be float32 (tfjs's sqrt takes no other)");
    int sq = unary_of(c, CK_U_SQUARE, xt);
    if (sq < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    si_result st = reduce_tensor(c, err, CK_R_SUM, sq, axes, na, keep, &t);
    if (st != SI_OK)
        return st;
    if ((t = unary_of(c, CK_U_SQRT, t)) < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, t);
    return SI_OK;
}

static si_result lower_softmax(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs one input");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    if (x->shape.rank < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "softmax of a scalar");
    if (x->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "softmax needs float32 logits");
    int64_t count = core_shape_count(&x->shape), n = x->shape.d[x->shape.rank - 1];
    if (!fits_i32(count))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    core_shape os = x->shape;
    ck_step s = {.kind = CK_SOFTMAX, .n_in = 1};
    s.in[0] = lc_in(c, 0);
    s.u.softmax = (ck_softmax_p){.outer = n ? (int32_t)(count / n) : 0, .n = (int32_t)n,
                                 .log = !strcmp(lc_node(c)->op, "LogSoftmax")};
    return emit_as_output(c, &s, SI_FLOAT32, &os);
}

static si_result lower_argmax(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input and an axis");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    int rank = x->shape.rank;
    if (rank < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "argmax of a scalar");
    int axes[SI_MAX_RANK], na = 0;
    si_result st = read_axes(c, err, rank, axes, &na);
    if (st != SI_OK)
        return st;
    if (na < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "needs an axis");
    /* tfjs uses the first axis only */
    int axis = axes[0];
    int64_t outer = 1, inner = 1, n = x->shape.d[axis];
    core_shape os = {.rank = 0};
    for (int i = 0; i < rank; i++) {
        if (i < axis)
            outer *= x->shape.d[i];
        if (i > axis)
            inner *= x->shape.d[i];
        if (i != axis)
            os.d[os.rank++] = x->shape.d[i];
    }
    if (!fits_i32(core_shape_count(&x->shape)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    if (n == 0 && core_shape_count(&os) > 0) {
        /* tfjs's ArgMax / ArgMin start at index 0 and find nothing better */
        int32_t *zeros = calloc((size_t)core_shape_count(&os), CORE_ELEM);
        if (!zeros)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        int t = lc_new_const(c, SI_INT32, &os, zeros);
        free(zeros);
        if (t < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    ck_step s = {.kind = CK_ARGMAX, .n_in = 1};
    s.in[0] = lc_in(c, 0);
    s.u.argmax = (ck_argmax_p){.outer = (int32_t)outer, .n = (int32_t)n, .inner = (int32_t)inner,
                               .is_min = !strcmp(lc_node(c)->op, "ArgMin"),
                               .in_dtype = x->dtype, .lanes = n >= CK_REDUCE_WIDE ? CK_REDUCE_LANES : 0};
    return emit_as_output(c, &s, SI_INT32, &os);
}

static si_result lower_resize(lower_ctx *c, si_error *err)
{
    int bilinear = !strcmp(lc_node(c)->op, "ResizeBilinear");
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs images and size");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    char sb[96];
    int rank = x->shape.rank;
    if (rank != 3 && rank != 4)
        return lc_fail(c, err, SI_ERR_SHAPE, "images must be rank 3 or 4, got %s",
                       core_shape_str(&x->shape, sb, sizeof sb));
    if (x->dtype == SI_BOOL)
        return lc_fail(c, err, SI_ERR_SHAPE, "resizing a bool tensor");
    int64_t size[4];
    int ns = lc_value_ints(c, 1, size, 4, err);
    if (ns == -2)
        return err ? err->status : SI_ERR_ARG;
    if (ns == -1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "size must be a constant");
    if (ns != 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "size must have 2 values, got %d", ns);
    if (size[0] < 1 || size[1] < 1 || size[0] > (1 << 30) || size[1] > (1 << 30))
        return lc_fail(c, err, SI_ERR_SHAPE, "bad size [%lld,%lld]",
                       (long long)size[0], (long long)size[1]);
    int align = lc_attr_bool(c, "align_corners", 0), hpc = lc_attr_bool(c, "half_pixel_centers", 0);
    if (align && hpc)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                       "half_pixel_centers and align_corners are both true (tfjs rejects it)");
    int64_t b = rank == 4 ? x->shape.d[0] : 1, ih = x->shape.d[rank - 3], iw = x->shape.d[rank - 2],
            ch = x->shape.d[rank - 1];
    if (ih < 1 || iw < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "empty image");
    /* The kernel's exact coordinate arithmetic needs 4*(in+1)*(out+1) < 2^31. */
    if (!fits_i32(core_shape_count(&x->shape)) || (ih + 1) * (size[0] + 1) > INT32_MAX / 4 ||
        (iw + 1) * (size[1] + 1) > INT32_MAX / 4)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "resize too large");
    core_shape os = x->shape;
    os.d[rank - 3] = size[0];
    os.d[rank - 2] = size[1];
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&os)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    ck_step s = {.kind = CK_RESIZE, .n_in = 1};
    s.in[0] = lc_in(c, 0);
    s.u.resize = (ck_resize_p){.bilinear = bilinear, .n = (int32_t)b, .in_h = (int32_t)ih,
                               .in_w = (int32_t)iw, .c = (int32_t)ch, .out_h = (int32_t)size[0],
                               .out_w = (int32_t)size[1], .align_corners = align,
                               .half_pixel_centers = hpc};
    return emit_as_output(c, &s, bilinear ? SI_FLOAT32 : x->dtype, &os);
}

const core_op_def core_ops_pool_reduce[] = {
    {"MaxPool", lower_pool}, {"AvgPool", lower_pool},
    {"Sum", lower_reduce}, {"Mean", lower_reduce}, {"Max", lower_reduce},
    {"Min", lower_reduce}, {"Prod", lower_reduce}, {"Any", lower_reduce},
    {"All", lower_reduce},           {"EuclideanNorm", lower_euclidean_norm},
    {"Softmax", lower_softmax}, {"LogSoftmax", lower_softmax},
    {"ArgMax", lower_argmax}, {"ArgMin", lower_argmax},
    {"ResizeBilinear", lower_resize}, {"ResizeNearestNeighbor", lower_resize},
    {NULL, NULL}};
