/* Image ops: CropAndResize, with TensorFlow.js's semantics (tfjs-backend-cpu's
 * CropAndResize.js, after TF's crop_and_resize_op.cc): image [batch,h,w,c],
 * boxes [n,4] as y1,x1,y2,x2 normalized to [0,1] (flipped boxes flip the crop,
 * coordinates outside the image give extrapolation_value), box_ind [n] the
 * image of each box, crop_size [2] a constant; output float32 [n,ch,cw,c].
 *
 * Two steps: CK_CROP_BOXES turns boxes and box_ind into a sampling table on the
 * host (in float64, as tfjs computes coordinates: whether a row at the box's
 * edge is extrapolated, or where Math.round lands, hangs on the last bit), then
 * CK_CROP_RESIZE samples the image on the GPU from that table. Boxes may be
 * computed by the model (proposals after an NMS); the table is small (n rows of
 * 1 + 3*(ch+cw)) while image and crops are the big tensors. With constant
 * boxes the table folds when the program is built. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ops.h"

static int32_t table_width(const ck_crop_p *p) { return 1 + 3 * (p->crop_h + p->crop_w); }

/* Math.round: the nearest integer, halves toward +infinity (v - floor(v) is
 * exact for the coordinates here, |v| < 2^31). */
static double js_round(double v)
{
    double f = floor(v);
    return v - f >= 0.5 ? f + 1 : f;
}

static int32_t float_bits(float f)
{
    int32_t i;
    memcpy(&i, &f, sizeof i);
    return i;
}

/* One axis of one box: tfjs's yInd (or xInd) for every output index, in the
 * order tfjs evaluates it (this file is built with -std=c11, so gcc contracts
 * no a*b+c into an fma: the same float64 roundings as JavaScript's). */
static void crop_axis(double a1, double a2, int32_t in, int32_t crop, int bilinear, int32_t *row)
{
    double scale = crop > 1 ? (a2 - a1) * (double)(in - 1) / (double)(crop - 1) : 0;
    for (int32_t y = 0; y < crop; y++, row += 3) {
        double v = crop > 1 ? a1 * (double)(in - 1) + (double)y * scale
                            : 0.5 * (a1 + a2) * (double)(in - 1);
        if (v < 0 || v > (double)(in - 1)) {
            row[0] = row[1] = CK_CROP_OUTSIDE;
            row[2] = 0;
        } else if (isnan(v)) {
            /* tfjs indexes with NaN and reads undefined: NaN out */
            row[0] = row[1] = CK_CROP_NAN;
            row[2] = 0;
        } else if (bilinear) {
            double lo = floor(v);
            row[0] = (int32_t)lo;
            row[1] = (int32_t)ceil(v);
            row[2] = float_bits((float)(v - lo));
        } else {
            row[0] = row[1] = (int32_t)js_round(v);
            row[2] = 0;
        }
    }
}

void ck_host_crop_boxes(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_crop_p *p = &s->u.crop;
    const float *boxes = ins[0]->data;
    const int32_t *ind = ins[1]->data;
    int32_t w = table_width(p);
    for (int32_t b = 0; b < p->n; b++) {
        int32_t *row = (int32_t *)out->data + (int64_t)b * w;
        const float *bx = boxes + (int64_t)b * 4;
        /* tfjs skips a box past the batch (its crop stays zeros) but reads
         * before the image for a negative one (undefined: NaN) */
        row[0] = ind[b] >= p->batch ? CK_CROP_SKIP : ind[b] < 0 ? CK_CROP_NAN : ind[b];
        crop_axis(bx[0], bx[2], p->in_h, p->crop_h, p->bilinear, row + 1);
        crop_axis(bx[1], bx[3], p->in_w, p->crop_w, p->bilinear, row + 1 + 3 * p->crop_h);
    }
}

static float bits_float(int32_t i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

/* The shader (glkernels/shaders/crop_resize.comp) mirrors this function. */
void ck_host_crop_resize(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_crop_p *p = &s->u.crop;
    const core_buf *x = ins[0];
    const int32_t *tab = ins[1]->data;
    int in_f = x->dtype == SI_FLOAT32;
    float *y = out->data;
    int32_t w = table_width(p);
#define RD(i) (in_f ? ((const float *)x->data)[i] : (float)((const int32_t *)x->data)[i])
    for (int32_t b = 0; b < p->n; b++) {
        const int32_t *row = tab + (int64_t)b * w;
        for (int32_t oy = 0; oy < p->crop_h; oy++) {
            const int32_t *ya = row + 1 + 3 * oy;
            for (int32_t ox = 0; ox < p->crop_w; ox++) {
                const int32_t *xa = row + 1 + 3 * p->crop_h + 3 * ox;
                int64_t base = (int64_t)row[0] * p->in_h;
                int64_t tl = ((base + ya[0]) * p->in_w + xa[0]) * p->c;
                int64_t tr = ((base + ya[0]) * p->in_w + xa[1]) * p->c;
                int64_t bl = ((base + ya[1]) * p->in_w + xa[0]) * p->c;
                int64_t br = ((base + ya[1]) * p->in_w + xa[1]) * p->c;
                float fy = bits_float(ya[2]), fx = bits_float(xa[2]);
                for (int32_t ch = 0; ch < p->c; ch++, y++) {
                    if (row[0] == CK_CROP_SKIP)
                        *y = 0.f;
                    else if (ya[0] == CK_CROP_OUTSIDE || xa[0] == CK_CROP_OUTSIDE)
                        *y = p->extrapolation;
                    else if (row[0] < 0 || ya[0] < 0 || xa[0] < 0)
                        *y = NAN;
                    else if (!p->bilinear)
                        *y = RD(tl + ch);
                    else {
                        float top = RD(tl + ch) + (RD(tr + ch) - RD(tl + ch)) * fx;
                        float bot = RD(bl + ch) + (RD(br + ch) - RD(bl + ch)) * fx;
                        *y = top + (bot - top) * fy;
                    }
                }
            }
        }
    }
#undef RD
}

static int fits_i32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

static si_result lower_crop_and_resize(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs image, boxes, box_ind and crop_size");
    const core_tensor *im = lc_tensor(c, lc_in(c, 0)), *bx = lc_tensor(c, lc_in(c, 1)),
                      *bi = lc_tensor(c, lc_in(c, 2));
    char sb[96], sb2[96];
    if (im->shape.rank != 4)
        return lc_fail(c, err, SI_ERR_SHAPE, "image must be rank 4, got %s",
                       core_shape_str(&im->shape, sb, sizeof sb));
    int64_t n = bx->shape.d[0];
    if (bx->shape.rank != 2 || bx->shape.d[1] != 4 || bi->shape.rank != 1 || bi->shape.d[0] != n)
        return lc_fail(c, err, SI_ERR_SHAPE, "boxes must be [n,4] and box_ind [n], got %s and %s",
                       core_shape_str(&bx->shape, sb, sizeof sb),
                       core_shape_str(&bi->shape, sb2, sizeof sb2));
    if (bx->dtype != SI_FLOAT32 || bi->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "boxes must be float32 and box_ind int32");
    int64_t cs[3];
    int ncs = lc_value_ints(c, 3, cs, 3, err);
    if (ncs == -2)
        return err->status;
    if (ncs == -1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "crop_size must be known before the run");
    if (ncs != 2 || cs[0] < 1 || cs[1] < 1 || cs[0] > (1 << 20) || cs[1] > (1 << 20))
        return lc_fail(c, err, SI_ERR_SHAPE, "crop_size must be 2 sizes of at least 1");
    const char *method = lc_attr_str(c, "method", "bilinear");
    if (strcmp(method, "bilinear") && strcmp(method, "nearest"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "method '%s' (tfjs: bilinear or nearest)", method);
    core_shape os = {.rank = 4, .d = {n, cs[0], cs[1], im->shape.d[3]}};
    core_shape ts = {.rank = 2, .d = {n, 1 + 3 * (cs[0] + cs[1])}};
    if (!fits_i32(core_shape_count(&im->shape)) || !fits_i32(core_shape_count(&os)) ||
        !fits_i32(core_shape_count(&ts)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    if (core_shape_count(&os) == 0) {
        static const float none = 0.f;
        int t = lc_new_const(c, SI_FLOAT32, &os, &none);
        if (t < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    ck_crop_p p = {.n = (int32_t)n, .batch = (int32_t)im->shape.d[0],
                   .in_h = (int32_t)im->shape.d[1], .in_w = (int32_t)im->shape.d[2],
                   .c = (int32_t)im->shape.d[3], .crop_h = (int32_t)cs[0],
                   .crop_w = (int32_t)cs[1], .bilinear = !strcmp(method, "bilinear"),
                   .extrapolation = (float)lc_attr_float(c, "extrapolation_value", 0)};
    ck_step t = {.kind = CK_CROP_BOXES, .n_in = 2, .in = {lc_in(c, 1), lc_in(c, 2)}};
    t.u.crop = p;
    t.out = lc_new_tensor(c, SI_INT32, &ts);
    lc_emit(c, &t);
    ck_step s = {.kind = CK_CROP_RESIZE, .n_in = 2, .in = {lc_in(c, 0), t.out}};
    s.u.crop = p;
    s.out = lc_new_tensor(c, SI_FLOAT32, &os);
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

/* ---- ImageProjectiveTransformV3 (tfjs-backend-cpu's Transform kernel): per
 * output pixel the projective map of its (x, y) in float64, the fill mode's
 * coordinate map, then nearest (Math.round) or bilinear sampling in float64
 * with fillValue outside the image; a zero projection keeps fillValue. As in
 * tfjs, only the first image of the batch is transformed: its kernel returns
 * from inside its batch loop, so every later image is fillValue. On the host:
 * float64 coordinates, like CropAndResize's table. */
static double map_coord(double v, int64_t len, int mode)
{
    if (mode == CK_FILL_REFLECT) {
        if (v < 0) {
            if (len <= 1)
                v = 0;
            else {
                double sz2 = 2.0 * (double)len;
                if (v < sz2)
                    v = sz2 * trunc(-v / sz2) + v;
                v = v < -(double)len ? v + sz2 : -v - 1;
            }
        } else if (v > (double)len - 1) {
            if (len <= 1)
                v = 0;
            else {
                double sz2 = 2.0 * (double)len;
                v -= sz2 * trunc(v / sz2);
                if (v >= (double)len)
                    v = sz2 - v - 1;
            }
        }
    } else if (mode == CK_FILL_WRAP) {
        if (v < 0) {
            if (len <= 1)
                v = 0;
            else
                v += (double)len * (trunc(-v / (double)(len - 1)) + 1);
        } else if (v > (double)len - 1) {
            if (len <= 1)
                v = 0;
            else
                v -= (double)len * trunc(v / (double)(len - 1));
        }
    } else if (mode != CK_FILL_NEAREST) {
        return v; /* constant */
    }
    /* util.clamp(0, v, len - 1) = Math.max(0, Math.min(v, len - 1)); NaN stays */
    double m = isnan(v) || v < (double)len - 1 ? v : (double)len - 1;
    return isnan(m) || m > 0 ? m : 0;
}

static double read_fill(const float *im, const ck_transform_p *p, double y, double x, int ch)
{
    if (0 <= y && y < p->in_h && 0 <= x && x < p->in_w)
        return im[((int64_t)y * p->in_w + (int64_t)x) * p->c + ch];
    return p->fill;
}

void ck_host_transform(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_transform_p *p = &s->u.transform;
    const float *im = ins[0]->data, *t = ins[1]->data; /* batch 0's transform either way */
    float *o = out->data;
    int64_t n = (int64_t)p->batch * p->out_h * p->out_w * p->c;
    for (int64_t i = 0; i < n; i++)
        o[i] = p->fill;
    if (p->batch < 1)
        return;
    for (int64_t oy = 0; oy < p->out_h; oy++)
        for (int64_t ox = 0; ox < p->out_w; ox++) {
            double proj = (double)t[6] * (double)ox + (double)t[7] * (double)oy + 1;
            if (proj == 0)
                continue;
            double in_x = ((double)t[0] * (double)ox + (double)t[1] * (double)oy + (double)t[2]) / proj;
            double in_y = ((double)t[3] * (double)ox + (double)t[4] * (double)oy + (double)t[5]) / proj;
            double x = map_coord(in_x, p->in_w, p->fill_mode);
            double y = map_coord(in_y, p->in_h, p->fill_mode);
            for (int ch = 0; ch < p->c; ch++) {
                double v;
                if (!p->bilinear) {
                    v = read_fill(im, p, floor(y + 0.5), floor(x + 0.5), ch);
                } else {
                    double yf = floor(y), xf = floor(x), yc = yf + 1, xc = xf + 1;
                    double top = (xc - x) * read_fill(im, p, yf, xf, ch) +
                                 (x - xf) * read_fill(im, p, yf, xc, ch);
                    double bot = (xc - x) * read_fill(im, p, yc, xf, ch) +
                                 (x - xf) * read_fill(im, p, yc, xc, ch);
                    v = (yc - y) * top + (y - yf) * bot;
                }
                o[(oy * p->out_w + ox) * p->c + ch] = (float)v;
            }
        }
}

static void lower_str(char *out, size_t n, const char *s)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = 0;
}

static si_result lower_transform(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs images, transforms, output_shape and fill_value");
    const core_tensor *im = lc_tensor(c, lc_in(c, 0)), *tr = lc_tensor(c, lc_in(c, 1));
    if (im->dtype != SI_FLOAT32 || tr->dtype != SI_FLOAT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "images and transforms must be float32");
    if (im->shape.rank != 4)
        return lc_fail(c, err, SI_ERR_SHAPE, "images of rank %d (tfjs: rank 4)", im->shape.rank);
    if (tr->shape.rank != 2 || tr->shape.d[1] != 8 ||
        (tr->shape.d[0] != 1 && tr->shape.d[0] != im->shape.d[0]))
        return lc_fail(c, err, SI_ERR_SHAPE, "transforms must be batch x 8 or 1 x 8");
    int64_t os2[3];
    int nos = lc_value_ints(c, 2, os2, 3, err);
    if (nos == -2)
        return err->status;
    if (nos == -1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "output_shape must be known before the run");
    if (nos != 2 || os2[0] < 0 || os2[1] < 0 || os2[0] > (1 << 20) || os2[1] > (1 << 20))
        return lc_fail(c, err, SI_ERR_SHAPE, "output_shape must be [height, width]");
    si_result st;
    const core_buf *fb = lc_value(c, 3, &st, err);
    if (st != SI_OK)
        return st;
    if (!fb || core_shape_count(&fb->shape) < 1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "fill_value must be known before the run");
    double fill = fb->dtype == SI_FLOAT32 ? (double)((const float *)fb->data)[0]
                                          : (double)((const int32_t *)fb->data)[0];
    char interp[16], mode[16];
    const char *ia = lc_attr_str(c, "interpolation", "NEAREST");
    lower_str(interp, sizeof interp, ia);
    lower_str(mode, sizeof mode, lc_attr_str(c, "fill_mode", "CONSTANT"));
    if (strcmp(interp, "nearest") && strcmp(interp, "bilinear"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "interpolation '%s' (tfjs: nearest or bilinear)", ia);
    core_shape os = {.rank = 4, .d = {im->shape.d[0], os2[0], os2[1], im->shape.d[3]}};
    if (!fits_i32(core_shape_count(&im->shape)) || !fits_i32(core_shape_count(&os)))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    ck_step s = {.kind = CK_TRANSFORM, .n_in = 2, .in = {lc_in(c, 0), lc_in(c, 1)}};
    s.u.transform = (ck_transform_p){
        .batch = (int32_t)im->shape.d[0], .in_h = (int32_t)im->shape.d[1],
        .in_w = (int32_t)im->shape.d[2], .c = (int32_t)im->shape.d[3], .out_h = (int32_t)os2[0],
        .out_w = (int32_t)os2[1], .bilinear = !strcmp(interp, "bilinear"),
        .fill_mode = !strcmp(mode, "reflect")   ? CK_FILL_REFLECT
                     : !strcmp(mode, "wrap")    ? CK_FILL_WRAP
                     : !strcmp(mode, "nearest") ? CK_FILL_NEAREST
                                                : CK_FILL_CONSTANT,
        .fill = (float)fill};
    s.out = lc_new_tensor(c, SI_FLOAT32, &os);
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

const core_op_def core_ops_image[] = {
    {"CropAndResize", lower_crop_and_resize},
    {"ImageProjectiveTransformV3", lower_transform},
    {NULL, NULL},
};
