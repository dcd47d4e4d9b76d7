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

const core_op_def core_ops_image[] = {
    {"CropAndResize", lower_crop_and_resize},
    {NULL, NULL},
};
