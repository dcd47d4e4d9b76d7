/* Conv1D, Conv3D, the 3D pools, MaxPoolWithArgmax, Dilation2D, and the ops TensorFlow.js's converter runs as pass-throughs (Print,
 * FakeQuantWithMinMaxVars). Conv1D lowers onto the CONV2D step with a height
 * of 1, which is what tfjs's conv1d does (reshape, conv2d, reshape), so the
 * sums are the same sums; the 3D pools lower onto two POOL steps. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ops.h"

/* ---- host references ---- */

/* tfjs's Dilation2D: each tap's x + filter (a double sum of two floats,
 * which rounds to the float sum), the max kept by `val > cur` from
 * Number.MIN_SAFE_INTEGER (-2^53 once stored as a float32), so NaN never
 * wins and a window with no tap in bounds gives -2^53. */
void ck_host_dilation2d(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_conv_p *p = &s->u.conv;
    const float *x = ins[0]->data, *w = ins[1]->data;
    float *y = out->data;
    int64_t o = 0;
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oy = 0; oy < p->out_h; oy++)
            for (int64_t ox = 0; ox < p->out_w; ox++)
                for (int64_t ch = 0; ch < p->in_c; ch++, o++) {
                    float m = -9007199254740992.f;
                    for (int64_t ky = 0; ky < p->k_h; ky++) {
                        int64_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
                        if (iy < 0 || iy >= p->in_h)
                            continue;
                        for (int64_t kx = 0; kx < p->k_w; kx++) {
                            int64_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
                            if (ix < 0 || ix >= p->in_w)
                                continue;
                            float v = x[((b * p->in_h + iy) * p->in_w + ix) * p->in_c + ch] +
                                      w[(ky * p->k_w + kx) * p->in_c + ch];
                            if (v > m)
                                m = v;
                        }
                    }
                    y[o] = m;
                }
}

/* tfjs's maxPoolPositions (flattened): the position of the first in-bounds
 * max from -Infinity by `v > m` (NaN never wins; -1 if nothing does), as
 * ((b * in_h + y) * in_w + x) * c + ch with include_batch, else without b. */
void ck_host_pool_argmax(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_pool_p *p = &s->u.pool;
    const core_buf *x = ins[0];
    int32_t *y = out->data;
    int64_t o = 0;
    for (int32_t b = 0; b < p->n; b++)
        for (int32_t oy = 0; oy < p->out_h; oy++)
            for (int32_t ox = 0; ox < p->out_w; ox++)
                for (int32_t ch = 0; ch < p->c; ch++, o++) {
                    int32_t y0 = oy * p->stride_h - p->pad_top;
                    int32_t x0 = ox * p->stride_w - p->pad_left;
                    int32_t ylo = y0 > 0 ? y0 : 0, yhi = y0 + p->k_h < p->in_h ? y0 + p->k_h : p->in_h;
                    int32_t xlo = x0 > 0 ? x0 : 0, xhi = x0 + p->k_w < p->in_w ? x0 + p->k_w : p->in_w;
                    float m = -INFINITY;
                    int32_t pos = -1;
                    for (int32_t yy = ylo; yy < yhi; yy++)
                        for (int32_t xx = xlo; xx < xhi; xx++) {
                            int64_t i = (((int64_t)b * p->in_h + yy) * p->in_w + xx) * p->c + ch;
                            float v = x->dtype == SI_FLOAT32 ? ((const float *)x->data)[i]
                                                             : (float)((const int32_t *)x->data)[i];
                            if (v > m) {
                                m = v;
                                pos = (yy * p->in_w + xx) * p->c + ch;
                            }
                        }
                    if (pos >= 0 && p->include_batch)
                        pos += b * p->in_h * p->in_w * p->c;
                    y[o] = pos;
                }
}

/* tfjs's conv3D: taps (kz, ky, kx), then input channels, each product added
 * to the float32 output element as `y += x * w` (exact in double, rounded
 * once to float: the sum is the float sum of the exact product). */
void ck_host_conv3d(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_conv3d_p *p = &s->u.conv3d;
    const float *x = ins[0]->data, *w = ins[1]->data;
    float *y = out->data;
    int64_t o = 0;
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oz = 0; oz < p->out_d; oz++)
            for (int64_t oy = 0; oy < p->out_h; oy++)
                for (int64_t ox = 0; ox < p->out_w; ox++)
                    for (int64_t oc = 0; oc < p->out_c; oc++, o++) {
                        float acc = 0.f;
                        for (int64_t kz = 0; kz < p->k_d; kz++) {
                            int64_t iz = oz * p->stride_d - p->pad_front + kz * p->dil_d;
                            if (iz < 0 || iz >= p->in_d)
                                continue;
                            for (int64_t ky = 0; ky < p->k_h; ky++) {
                                int64_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
                                if (iy < 0 || iy >= p->in_h)
                                    continue;
                                for (int64_t kx = 0; kx < p->k_w; kx++) {
                                    int64_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
                                    if (ix < 0 || ix >= p->in_w)
                                        continue;
                                    const float *xp =
                                        x + (((b * p->in_d + iz) * p->in_h + iy) * p->in_w + ix) *
                                                p->in_c;
                                    const float *wp =
                                        w + ((kz * p->k_h + ky) * p->k_w + kx) * p->in_c * p->out_c +
                                        oc;
                                    for (int64_t ic = 0; ic < p->in_c; ic++)
                                        acc = (float)((double)acc +
                                                      (double)xp[ic] * (double)wp[ic * p->out_c]);
                                }
                            }
                        }
                        y[o] = acc;
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

/* Output 0 is input 0 as it is: tfjs's graph executor returns Print's input
 * (after logging), and clones FakeQuantWithMinMaxVars's x ("currently
 * ignored": min, max, num_bits and narrow_range change nothing in tfjs). */
static si_result lower_pass_through(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input");
    int x = lc_in(c, 0);
    int a = lc_new_alias(c, x, &lc_tensor(c, x)->shape);
    if (a < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, a);
    return SI_OK;
}

/* Conv1D(x [n, w, c] or [w, c], filter [fw, c, out]) with the converter's
 * scalar attrs stride, dilation, padding and data_format (NWC only). */
static si_result lower_conv1d(lower_ctx *c, si_error *err)
{
    char sb[96], sf[96];
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input and a filter");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0)), *f = lc_tensor(c, lc_in(c, 1));
    if (x->dtype != SI_FLOAT32 || f->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input and filter must be float32");
    int64_t n, w, ch;
    if (x->shape.rank == 3) {
        n = x->shape.d[0];
        w = x->shape.d[1];
        ch = x->shape.d[2];
    } else if (x->shape.rank == 2) {
        n = 1;
        w = x->shape.d[0];
        ch = x->shape.d[1];
    } else {
        return lc_fail(c, err, SI_ERR_SHAPE, "input %s must be rank 3",
                       core_shape_str(&x->shape, sb, sizeof sb));
    }
    if (f->shape.rank != 3 || f->shape.d[1] != ch)
        return lc_fail(c, err, SI_ERR_SHAPE, "filter %s does not fit input %s",
                       core_shape_str(&f->shape, sf, sizeof sf),
                       core_shape_str(&x->shape, sb, sizeof sb));
    const char *df = lc_attr_str(c, "data_format", "NWC");
    if (!ieq(df, "NWC"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "data_format %s (only NWC is supported)", df);
    int64_t stride = lc_attr_int(c, "stride", 1), dil = lc_attr_int(c, "dilation", 1);
    if (stride < 1 || dil < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "stride and dilation must be positive");
    if (stride > 1 && dil > 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "either stride or dilation must be 1");
    const char *pad = lc_attr_str(c, "padding", NULL);
    if (!pad)
        return lc_fail(c, err, SI_ERR_FORMAT, "no padding attr");
    const char *tf_pad = ieq(pad, "SAME") ? "SAME" : ieq(pad, "VALID") ? "VALID" : NULL;
    if (!tf_pad)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding '%s'", pad);
    int64_t ow, pl;
    si_result st = core_conv_out(c, err, w, f->shape.d[0], stride, dil, tf_pad, NULL, &ow, &pl);
    if (st != SI_OK)
        return st;
    int64_t out_c = f->shape.d[2];
    core_shape os = x->shape;
    os.d[os.rank - 2] = ow;
    os.d[os.rank - 1] = out_c;
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&f->shape)) ||
        !fits_i32(core_shape_count(&os)) || !fits_i32(stride * ow) ||
        !fits_i32(dil * f->shape.d[0]))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    /* NHWC views of the same storage, H = 1. */
    core_shape xs4 = {.rank = 4, .d = {n, 1, w, ch}};
    core_shape fs4 = {.rank = 4, .d = {1, f->shape.d[0], ch, out_c}};
    core_shape os4 = {.rank = 4, .d = {n, 1, ow, out_c}};
    ck_step s = {.kind = CK_CONV2D, .n_in = 2};
    s.in[0] = lc_new_alias(c, lc_in(c, 0), &xs4);
    s.in[1] = lc_new_alias(c, lc_in(c, 1), &fs4);
    s.in[2] = s.in[3] = -1;
    s.out = lc_new_tensor(c, SI_FLOAT32, &os4);
    if (s.in[0] < 0 || s.in[1] < 0 || s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    ck_conv_p *p = &s.u.conv;
    p->n = (int32_t)n;
    p->in_h = 1;
    p->in_w = (int32_t)w;
    p->in_c = (int32_t)ch;
    p->out_h = 1;
    p->out_w = (int32_t)ow;
    p->out_c = (int32_t)out_c;
    p->k_h = 1;
    p->k_w = (int32_t)f->shape.d[0];
    p->stride_h = 1;
    p->stride_w = (int32_t)stride;
    p->dil_h = 1;
    p->dil_w = (int32_t)dil;
    p->pad_top = 0;
    p->pad_left = (int32_t)pl;
    p->ch_mult = 1;
    p->act = CK_ACT_NONE;
    p->alpha = 0.2f;
    p->whole_out = ck_conv_whole_out(p);
    lc_emit(c, &s);
    int y = lc_new_alias(c, s.out, &os);
    if (y < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, y);
    return SI_OK;
}

/* One POOL step over the middle two dims of x viewed as [n, h, w, c]. */
static int emit_pool(lower_ctx *c, int is_max, int x, si_dtype dt, const int64_t *in,
                     const int64_t *k, const int64_t *st, const int64_t *pad, int64_t oh, int64_t ow)
{
    core_shape xs = {.rank = 4, .d = {in[0], in[1], in[2], in[3]}};
    core_shape os = {.rank = 4, .d = {in[0], oh, ow, in[3]}};
    ck_step s = {.kind = CK_POOL, .n_in = 1};
    s.in[0] = lc_new_alias(c, x, &xs);
    s.out = lc_new_tensor(c, dt, &os);
    if (s.in[0] < 0 || s.out < 0)
        return -1;
    s.u.pool = (ck_pool_p){
        .is_max = is_max, .n = (int32_t)in[0], .in_h = (int32_t)in[1], .in_w = (int32_t)in[2],
        .c = (int32_t)in[3], .out_h = (int32_t)oh, .out_w = (int32_t)ow, .k_h = (int32_t)k[0],
        .k_w = (int32_t)k[1], .stride_h = (int32_t)st[0], .stride_w = (int32_t)st[1],
        .pad_top = (int32_t)pad[0], .pad_left = (int32_t)pad[1]};
    lc_emit(c, &s);
    return s.out;
}

/* MaxPool3D, AvgPool3D (NDHWC, tfjs's pool3d): a 2D pool over (h, w) of every
 * depth slice, then one over depth of those, each window in-bounds only. Max
 * is the same max either way (tfjs keeps `pixel > max` from -Infinity, so NaN
 * never wins in both); avg is the same mean (every depth slice of a window
 * has the same in-bounds h×w count) summed in another order, within float32
 * rounding of tfjs's. */
static si_result lower_pool3d(lower_ctx *c, si_error *err)
{
    char sb[96];
    int is_max = !strcmp(lc_node(c)->op, "MaxPool3D");
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs one input");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    if (x->shape.rank != 5)
        return lc_fail(c, err, SI_ERR_SHAPE, "input must be rank 5 (NDHWC), got %s",
                       core_shape_str(&x->shape, sb, sizeof sb));
    if (x->dtype != SI_FLOAT32 && (!is_max || x->dtype != SI_INT32))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input must be float32");
    const char *fmt = lc_attr_str(c, "data_format", "NDHWC");
    if (!ieq(fmt, "NDHWC"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "data_format %s (only NDHWC)", fmt);
    int64_t ks[5], st[5];
    if (lc_attr_ints(c, "ksize", ks, 5) != 5 || lc_attr_ints(c, "strides", st, 5) != 5)
        return lc_fail(c, err, SI_ERR_FORMAT, "ksize and strides must be lists of 5");
    for (int i = 1; i < 4; i++)
        if (ks[i] < 1 || st[i] < 1 || ks[i] > INT32_MAX || st[i] > INT32_MAX)
            return lc_fail(c, err, SI_ERR_FORMAT, "bad ksize or strides");
    const char *pad = lc_attr_str(c, "padding", "VALID");
    const char *tf_pad = ieq(pad, "SAME") ? "SAME" : ieq(pad, "VALID") ? "VALID" : NULL;
    if (!tf_pad)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding '%s'", pad);
    const int64_t *d = x->shape.d;
    int64_t o[3], p[3];
    for (int i = 0; i < 3; i++) {
        si_result s1 = core_conv_out(c, err, d[i + 1], ks[i + 1], st[i + 1], 1, tf_pad, NULL,
                                     &o[i], &p[i]);
        if (s1 != SI_OK)
            return s1;
    }
    core_shape os = {.rank = 5, .d = {d[0], o[0], o[1], o[2], d[4]}};
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&os)) ||
        !fits_i32(d[0] * d[1] * o[1] * o[2] * d[4]))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    int64_t in_a[4] = {d[0] * d[1], d[2], d[3], d[4]};
    int t = emit_pool(c, is_max, lc_in(c, 0), x->dtype, in_a, ks + 2, st + 2, p + 1, o[1], o[2]);
    int64_t in_b[4] = {d[0], d[1], 1, o[1] * o[2] * d[4]};
    int64_t kb[2] = {ks[1], 1}, sb2[2] = {st[1], 1}, pb[2] = {p[0], 0};
    if (t >= 0)
        t = emit_pool(c, is_max, t, x->dtype, in_b, kb, sb2, pb, o[0], 1);
    int y = t >= 0 ? lc_new_alias(c, t, &os) : -1;
    if (y < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, y);
    return SI_OK;
}

/* MaxPoolWithArgmax: the values as MaxPool's POOL step, the indices as a
 * POOL_ARGMAX step over the same window (tfjs's pool and maxPoolPositions). */
static si_result lower_pool_argmax(lower_ctx *c, si_error *err)
{
    char sb[96];
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs one input");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    if (x->shape.rank != 4)
        return lc_fail(c, err, SI_ERR_SHAPE, "input must be rank 4 (NHWC), got %s",
                       core_shape_str(&x->shape, sb, sizeof sb));
    if (x->dtype != SI_FLOAT32 && x->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input must be float32 or int32");
    int64_t ks[4], st[4];
    if (lc_attr_ints(c, "ksize", ks, 4) != 4 || lc_attr_ints(c, "strides", st, 4) != 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "ksize and strides must be lists of 4");
    for (int i = 1; i < 3; i++)
        if (ks[i] < 1 || st[i] < 1 || ks[i] > INT32_MAX || st[i] > INT32_MAX)
            return lc_fail(c, err, SI_ERR_FORMAT, "bad ksize or strides");
    const char *pad = lc_attr_str(c, "padding", "VALID");
    const char *tf_pad = ieq(pad, "SAME") ? "SAME" : ieq(pad, "VALID") ? "VALID" : NULL;
    if (!tf_pad)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding '%s'", pad);
    const int64_t *d = x->shape.d;
    int64_t oh, ow, pt, pl;
    si_result s1 = core_conv_out(c, err, d[1], ks[1], st[1], 1, tf_pad, NULL, &oh, &pt);
    if (s1 == SI_OK)
        s1 = core_conv_out(c, err, d[2], ks[2], st[2], 1, tf_pad, NULL, &ow, &pl);
    if (s1 != SI_OK)
        return s1;
    core_shape os = {.rank = 4, .d = {d[0], oh, ow, d[3]}};
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&os)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    ck_step s = {.kind = CK_POOL, .n_in = 1};
    s.in[0] = lc_in(c, 0);
    s.u.pool = (ck_pool_p){
        .is_max = 1, .n = (int32_t)d[0], .in_h = (int32_t)d[1], .in_w = (int32_t)d[2],
        .c = (int32_t)d[3], .out_h = (int32_t)oh, .out_w = (int32_t)ow, .k_h = (int32_t)ks[1],
        .k_w = (int32_t)ks[2], .stride_h = (int32_t)st[1], .stride_w = (int32_t)st[2],
        .pad_top = (int32_t)pt, .pad_left = (int32_t)pl,
        .include_batch = lc_attr_bool(c, "include_batch_in_index", 0)};
    if ((s.out = lc_new_tensor(c, x->dtype, &os)) < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    s.kind = CK_POOL_ARGMAX;
    if ((s.out = lc_new_tensor(c, SI_INT32, &os)) < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 1, s.out);
    return SI_OK;
}

/* Dilation2D(x NHWC, filter [fh, fw, c]) with strides and rates [1, h, w, 1]. */
static si_result lower_dilation2d(lower_ctx *c, si_error *err)
{
    char sb[96], sf[96];
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input and a filter");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0)), *f = lc_tensor(c, lc_in(c, 1));
    if (x->dtype != SI_FLOAT32 || f->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input and filter must be float32");
    if (x->shape.rank != 4 || f->shape.rank != 3 || f->shape.d[2] != x->shape.d[3])
        return lc_fail(c, err, SI_ERR_SHAPE, "filter %s does not fit input %s (NHWC)",
                       core_shape_str(&f->shape, sf, sizeof sf),
                       core_shape_str(&x->shape, sb, sizeof sb));
    int64_t st[4], rt[4];
    if (lc_attr_ints(c, "strides", st, 4) != 4 || lc_attr_ints(c, "rates", rt, 4) != 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "strides and rates must be lists of 4");
    for (int i = 1; i < 3; i++)
        if (st[i] < 1 || rt[i] < 1 || st[i] > INT32_MAX || rt[i] > INT32_MAX)
            return lc_fail(c, err, SI_ERR_FORMAT, "bad strides or rates");
    const char *pad = lc_attr_str(c, "padding", NULL);
    const char *tf_pad = !pad ? NULL : ieq(pad, "SAME") ? "SAME" : ieq(pad, "VALID") ? "VALID" : NULL;
    if (!tf_pad)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding '%s'", pad ? pad : "");
    const int64_t *d = x->shape.d;
    int64_t oh, ow, pt, pl;
    si_result s1 = core_conv_out(c, err, d[1], f->shape.d[0], st[1], rt[1], tf_pad, NULL, &oh, &pt);
    if (s1 == SI_OK)
        s1 = core_conv_out(c, err, d[2], f->shape.d[1], st[2], rt[2], tf_pad, NULL, &ow, &pl);
    if (s1 != SI_OK)
        return s1;
    core_shape os = {.rank = 4, .d = {d[0], oh, ow, d[3]}};
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&os)) ||
        !fits_i32(st[1] * oh) || !fits_i32(st[2] * ow) || !fits_i32(rt[1] * f->shape.d[0]) ||
        !fits_i32(rt[2] * f->shape.d[1]))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    ck_step s = {.kind = CK_DILATION2D, .n_in = 2};
    s.in[0] = lc_in(c, 0);
    s.in[1] = lc_in(c, 1);
    ck_conv_p *p = &s.u.conv;
    p->n = (int32_t)d[0];
    p->in_h = (int32_t)d[1];
    p->in_w = (int32_t)d[2];
    p->in_c = p->out_c = (int32_t)d[3];
    p->out_h = (int32_t)oh;
    p->out_w = (int32_t)ow;
    p->k_h = (int32_t)f->shape.d[0];
    p->k_w = (int32_t)f->shape.d[1];
    p->stride_h = (int32_t)st[1];
    p->stride_w = (int32_t)st[2];
    p->dil_h = (int32_t)rt[1];
    p->dil_w = (int32_t)rt[2];
    p->pad_top = (int32_t)pt;
    p->pad_left = (int32_t)pl;
    p->ch_mult = 1;
    if ((s.out = lc_new_tensor(c, SI_FLOAT32, &os)) < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

/* The [1, d, h, w, 1] list attr `name` into v[0..2]; absent: 1s. */
static si_result dhw_attr(lower_ctx *c, si_error *err, const char *name, int64_t *v)
{
    int64_t a[5];
    int n = lc_attr_ints(c, name, a, 5);
    v[0] = v[1] = v[2] = 1;
    if (n < 0)
        return SI_OK;
    if (n != 5)
        return lc_fail(c, err, SI_ERR_FORMAT, "%s must have 5 entries, has %d", name, n);
    for (int i = 0; i < 3; i++) {
        if (a[i + 1] < 1 || a[i + 1] > INT32_MAX)
            return lc_fail(c, err, SI_ERR_FORMAT, "%s must be positive", name);
        v[i] = a[i + 1];
    }
    return SI_OK;
}

/* Conv3D(x NDHWC (or DHWC, batch 1), filter DHWIO): one CONV3D step. */
static si_result lower_conv3d(lower_ctx *c, si_error *err)
{
    char sb[96], sf[96];
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs an input and a filter");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0)), *f = lc_tensor(c, lc_in(c, 1));
    if (x->dtype != SI_FLOAT32 || f->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input and filter must be float32");
    int64_t d[5];
    if (x->shape.rank == 5) {
        memcpy(d, x->shape.d, sizeof d);
    } else if (x->shape.rank == 4) {
        d[0] = 1;
        memcpy(d + 1, x->shape.d, 4 * sizeof d[0]);
    } else {
        return lc_fail(c, err, SI_ERR_SHAPE, "input %s must be rank 5",
                       core_shape_str(&x->shape, sb, sizeof sb));
    }
    if (f->shape.rank != 5 || f->shape.d[3] != d[4])
        return lc_fail(c, err, SI_ERR_SHAPE, "filter %s does not fit input %s",
                       core_shape_str(&f->shape, sf, sizeof sf),
                       core_shape_str(&x->shape, sb, sizeof sb));
    const char *df = lc_attr_str(c, "data_format", "NDHWC");
    if (!ieq(df, "NDHWC"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "data_format %s (only NDHWC is supported)", df);
    int64_t st[3], dl[3];
    si_result s1 = dhw_attr(c, err, "strides", st);
    if (s1 == SI_OK)
        s1 = dhw_attr(c, err, "dilations", dl);
    if (s1 != SI_OK)
        return s1;
    if ((st[0] > 1 || st[1] > 1 || st[2] > 1) && (dl[0] > 1 || dl[1] > 1 || dl[2] > 1))
        return lc_fail(c, err, SI_ERR_FORMAT, "either strides or dilations must be 1");
    const char *pad = lc_attr_str(c, "padding", NULL);
    const char *tf_pad = !pad ? NULL : ieq(pad, "SAME") ? "SAME" : ieq(pad, "VALID") ? "VALID" : NULL;
    if (!tf_pad)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding '%s'", pad ? pad : "");
    int64_t o[3], p[3];
    for (int i = 0; i < 3; i++) {
        if ((s1 = core_conv_out(c, err, d[i + 1], f->shape.d[i], st[i], dl[i], tf_pad, NULL, &o[i],
                                &p[i])) != SI_OK)
            return s1;
        if (!fits_i32(st[i] * o[i]) || !fits_i32(dl[i] * f->shape.d[i]))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    }
    int64_t out_c = f->shape.d[4];
    core_shape os = x->shape;
    int r = os.rank;
    os.d[r - 4] = o[0];
    os.d[r - 3] = o[1];
    os.d[r - 2] = o[2];
    os.d[r - 1] = out_c;
    if (!fits_i32(core_shape_count(&x->shape)) || !fits_i32(core_shape_count(&f->shape)) ||
        !fits_i32(core_shape_count(&os)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for 32-bit indexing");
    ck_step s = {.kind = CK_CONV3D, .n_in = 2};
    s.in[0] = lc_in(c, 0);
    s.in[1] = lc_in(c, 1);
    s.u.conv3d = (ck_conv3d_p){
        .n = (int32_t)d[0], .in_d = (int32_t)d[1], .in_h = (int32_t)d[2], .in_w = (int32_t)d[3],
        .in_c = (int32_t)d[4], .out_d = (int32_t)o[0], .out_h = (int32_t)o[1],
        .out_w = (int32_t)o[2], .out_c = (int32_t)out_c, .k_d = (int32_t)f->shape.d[0],
        .k_h = (int32_t)f->shape.d[1], .k_w = (int32_t)f->shape.d[2],
        .stride_d = (int32_t)st[0], .stride_h = (int32_t)st[1], .stride_w = (int32_t)st[2],
        .dil_d = (int32_t)dl[0], .dil_h = (int32_t)dl[1], .dil_w = (int32_t)dl[2],
        .pad_front = (int32_t)p[0], .pad_top = (int32_t)p[1], .pad_left = (int32_t)p[2]};
    if ((s.out = lc_new_tensor(c, SI_FLOAT32, &os)) < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

const core_op_def core_ops_conv3d[] = {
    {"Conv1D", lower_conv1d},
    {"Conv3D", lower_conv3d},
    {"MaxPool3D", lower_pool3d},
    {"AvgPool3D", lower_pool3d},
    {"MaxPoolWithArgmax", lower_pool_argmax},
    {"Dilation2D", lower_dilation2d},
    {"Print", lower_pass_through},
    {"FakeQuantWithMinMaxVars", lower_pass_through},
    {NULL, NULL}};
