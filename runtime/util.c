/* Small public helpers. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "streaminfer.h"
#include "../core/core.h"

#define SI_STR_(x) #x
#define SI_STR(x) SI_STR_(x)
const char *si_version(void)
{
    return SI_STR(SI_VERSION_MAJOR) "." SI_STR(SI_VERSION_MINOR) "." SI_STR(SI_VERSION_PATCH);
}

const char *si_dtype_name(si_dtype t)
{
    switch (t) {
    case SI_FLOAT32: return "float32";
    case SI_INT32: return "int32";
    case SI_BOOL: return "bool";
    }
    return "?";
}

size_t si_dtype_size(si_dtype t) { return t == SI_BOOL ? 1 : 4; }

int si_parse_size(const char *s, uint64_t *bytes)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0) || isinf(v))
        return -1;
    double mul = 1;
    switch (toupper((unsigned char)*end)) {
    case 0: break;
    case 'K': mul = 1024.0; end++; break;
    case 'M': mul = 1024.0 * 1024; end++; break;
    case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
    case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
    default: return -1;
    }
    if (*end == 'i' && mul > 1)
        end++;
    if ((*end == 'B' || *end == 'b'))
        end++;
    if (*end)
        return -1;
    double b = v * mul;
    if (b >= 18446744073709551615.0 || (mul == 1 && v != floor(v)))
        return -1;
    *bytes = (uint64_t)b;
    return 0;
}

#include "../io/io.h"

si_result si_npy_read(const char *path, si_dtype *dtype, int *rank, int64_t shape[SI_MAX_RANK],
                      void **data, si_error *err)
{
    return io_npy_read(path, dtype, rank, shape, data, err);
}

si_result si_npy_write(const char *path, si_dtype dtype, int rank, const int64_t *shape,
                       const void *data, si_error *err)
{
    return io_npy_write(path, dtype, rank, shape, data, err);
}

si_result si_npy_read_as(const char *path, si_dtype want, int *rank, int64_t shape[SI_MAX_RANK],
                         void **data, si_error *err)
{
    return io_npy_read_as(path, want, rank, shape, data, err);
}

/* The file's pixels (sc channels) as dc channels, int32 0..255. Gray is
 * tf.image.rgbToGrayscale on int32 pixels: einsum's products rounded to
 * float32, summed in a double (Sum's accumulator), rounded to float32, then
 * cast back to int32 (cut). */
static void si_image_channels(const unsigned char *px, size_t n_px, int sc, int dc, int32_t *out)
{
    static const float wt[3] = {0.2989f, 0.5870f, 0.1140f};
    for (size_t i = 0; i < n_px; i++) {
        const unsigned char *p = px + i * (size_t)sc;
        int32_t *o = out + i * (size_t)dc;
        int gray = sc <= 2;
        if (dc == 1 && gray) {
            o[0] = p[0];
        } else if (dc == 1) {
            float r = (float)p[0] * wt[0], g = (float)p[1] * wt[1], b = (float)p[2] * wt[2];
            o[0] = (int32_t)(float)((double)r + g + b);
        } else {
            for (int c = 0; c < 3; c++)
                o[c] = gray ? p[0] : p[c];
            if (dc == 4)
                o[3] = sc == 2 ? p[1] : sc == 4 ? p[3] : 255;
        }
    }
}

/* round(a * b / c) for positive sizes */
static int si_scale_round(int a, int b, int c)
{
    return (int)((2 * (int64_t)a * b + c) / (2 * (int64_t)c));
}

/* Where an h0 x w0 image goes in an H x W result (si_image_info's fields). */
static void si_fit_geometry(int h0, int w0, int H, int W, si_fit fit, si_image_info *in)
{
    in->resized_height = H, in->resized_width = W, in->top = in->left = 0;
    if (fit == SI_FIT_STRETCH)
        return;
    /* FIT is bound by the tighter side, CROP by the looser one */
    int by_width = ((int64_t)W * h0 <= (int64_t)H * w0) == (fit == SI_FIT_FIT);
    if (by_width)
        in->resized_height = si_scale_round(h0, W, w0);
    else
        in->resized_width = si_scale_round(w0, H, h0);
    if (in->resized_height < 1)
        in->resized_height = 1;
    if (in->resized_width < 1)
        in->resized_width = 1;
    if (fit == SI_FIT_FIT) {
        in->top = (H - in->resized_height) / 2;
        in->left = (W - in->resized_width) / 2;
    } else {
        in->top = (in->resized_height - H) / 2;
        in->left = (in->resized_width - W) / 2;
    }
}

/* Rows [y0, y0+rows) of src (h0 x w0 x c, int32) resized to rh x rw, into out
 * (rows x rw x c floats): tf.image.resizeBilinear's defaults, the op table's
 * host kernel and its row tiles. */
static void si_image_resize(const int32_t *src, int h0, int w0, int c, int rh, int rw, int y0, int rows,
                            float *out)
{
    ck_step rs = {.kind = CK_RESIZE};
    rs.u.resize = (ck_resize_p){.bilinear = 1, .n = 1, .in_h = h0, .in_w = w0, .c = c, .out_h = rh,
                                .out_w = rw, .y0 = y0, .in_y0 = 0, .rows = rows, .in_rows = h0};
    core_buf in = {.dtype = SI_INT32, .shape = {.rank = 4, .d = {1, h0, w0, c}}, .data = (void *)src};
    core_buf fb = {.dtype = SI_FLOAT32, .shape = {.rank = 4, .d = {1, rows, rw, c}}, .data = out};
    const core_buf *ins[1] = {&in};
    ck_host_resize(&rs, ins, &fb);
}

/* The resized pixels (rows x rw x c) into the result (H x W x c, zeroed):
 * FIT places them at (top, left), CROP takes its window from (top, left). */
static void si_image_place(const float *fit, const si_image_info *in, si_dtype dtype, void *out)
{
    int c = in->channels, rows = in->fit == SI_FIT_CROP ? in->height : in->resized_height;
    int cols = in->fit == SI_FIT_CROP ? in->width : in->resized_width;
    int dy = in->fit == SI_FIT_FIT ? in->top : 0, dx = in->fit == SI_FIT_FIT ? in->left : 0;
    int sx = in->fit == SI_FIT_CROP ? in->left : 0;
    for (int y = 0; y < rows; y++)
        for (int x = 0; x < cols; x++)
            for (int k = 0; k < c; k++) {
                float v = fit[((size_t)y * in->resized_width + (size_t)(sx + x)) * c + k];
                size_t o = (((size_t)(dy + y)) * in->width + (size_t)(dx + x)) * c + k;
                if (dtype == SI_FLOAT32)
                    ((float *)out)[o] = v / 255.0f;
                else
                    ((int32_t *)out)[o] = (int32_t)v;
            }
}

/* Fits an image to height x width as tf.image.resizeBilinear does by default
 * (no aligned corners, no half-pixel centres), with the op table's host
 * kernel, in float on values 0..255; float32 inputs are then scaled to
 * [0,1], int32 ones cut to integers as tf.cast does. (stb_image_resize,
 * used before, aborts on an assertion for some sizes: 7x21 to 31x17.)
 * CROP resizes only the rows it keeps (a row tile), all their columns. */
si_result si_image_read_as(const char *path, int *height, int *width, int channels, si_dtype dtype,
                           si_fit fit, void **data, si_image_info *info, si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    if (data)
        *data = NULL;
    if (!path || !height || !width || !data)
        return base_fail(err, SI_ERR_ARG, "si_image_read_as: path, height, width and data are required");
    if (*height < 0 || *width < 0)
        return base_fail(err, SI_ERR_ARG, "%s: bad image size %dx%d", path, *height, *width);
    if (dtype != SI_FLOAT32 && dtype != SI_INT32)
        return base_fail(err, SI_ERR_ARG, "%s: images are read as float32 or int32", path);
    if (channels != 1 && channels != 3 && channels != 4)
        return base_fail(err, SI_ERR_ARG, "%s: images are read with 1, 3 or 4 channels, not %d", path, channels);
    if (fit != SI_FIT_STRETCH && fit != SI_FIT_FIT && fit != SI_FIT_CROP)
        return base_fail(err, SI_ERR_ARG, "%s: unknown fit mode %d", path, (int)fit);
    unsigned char *px = NULL;
    si_image_info in = {.fit = fit, .channels = channels};
    si_result st = io_image_decode_any(path, &in.src_height, &in.src_width, &in.src_channels, &px, err);
    if (st != SI_OK)
        return st;
    int h0 = in.src_height, w0 = in.src_width, c = channels;
    in.height = *height ? *height : h0;
    in.width = *width ? *width : w0;
    si_fit_geometry(h0, w0, in.height, in.width, fit, &in);
    int rows = fit == SI_FIT_CROP ? in.height : in.resized_height;
    size_t n0 = (size_t)h0 * (size_t)w0, nf = (size_t)rows * (size_t)in.resized_width * (size_t)c;
    size_t n = (size_t)in.height * (size_t)in.width * (size_t)c;
    /* a strip of extreme aspect: cropping it would resize it to many times the result */
    if (fit == SI_FIT_CROP && nf / 8 > n && nf > ((size_t)1 << 24))
        return free(px), base_fail(err, SI_ERR_ARG, "%s: fitting %dx%d to %dx%d by cropping resizes it to %dx%d, "
                                   "too wide to hold", path, w0, h0, in.width, in.height, in.resized_width,
                                   in.resized_height);
    int32_t *src = malloc(n0 * (size_t)c * sizeof *src);
    float *fitted = malloc(nf ? nf * sizeof *fitted : 1);
    void *out = calloc(n ? n : 1, 4);
    if (!src || !fitted || !out) {
        free(px), free(src), free(fitted), free(out);
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    si_image_channels(px, n0, in.src_channels, c, src);
    free(px);
    si_image_resize(src, h0, w0, c, in.resized_height, in.resized_width, fit == SI_FIT_CROP ? in.top : 0, rows,
                    fitted);
    free(src);
    si_image_place(fitted, &in, dtype, out);
    free(fitted);
    *height = in.height;
    *width = in.width;
    *data = out;
    if (info)
        *info = in;
    return SI_OK;
}

si_result si_image_read(const char *path, int *height, int *width, si_dtype dtype, void **data,
                        si_error *err)
{
    return si_image_read_as(path, height, width, 3, dtype, SI_FIT_STRETCH, data, NULL, err);
}

static const char *si_channels_name(int c)
{
    return c == 1 ? "gray" : c == 2 ? "gray+alpha" : c == 3 ? "RGB" : c == 4 ? "RGBA" : "?";
}

int si_image_info_format(const si_image_info *in, char *buf, size_t n)
{
    if (!in)
        return snprintf(buf, n, "?");
    char how[128];
    int rw = in->resized_width, rh = in->resized_height;
    if (in->fit == SI_FIT_STRETCH)
        snprintf(how, sizeof how, "stretch: resized to %dx%d", rw, rh);
    else if (in->fit == SI_FIT_FIT && rh < in->height)
        snprintf(how, sizeof how, "fit: resized to %dx%d, at rows %d..%d, the rest 0", rw, rh, in->top,
                 in->top + rh - 1);
    else if (in->fit == SI_FIT_FIT && rw < in->width)
        snprintf(how, sizeof how, "fit: resized to %dx%d, at columns %d..%d, the rest 0", rw, rh, in->left,
                 in->left + rw - 1);
    else if (in->fit == SI_FIT_CROP && rh > in->height)
        snprintf(how, sizeof how, "crop: resized to %dx%d, rows %d..%d kept", rw, rh, in->top,
                 in->top + in->height - 1);
    else if (in->fit == SI_FIT_CROP && rw > in->width)
        snprintf(how, sizeof how, "crop: resized to %dx%d, columns %d..%d kept", rw, rh, in->left,
                 in->left + in->width - 1);
    else
        snprintf(how, sizeof how, "%s: resized to %dx%d", in->fit == SI_FIT_FIT ? "fit" : "crop", rw, rh);
    return snprintf(buf, n, "%dx%d %s -> %dx%d %s, %s", in->src_width, in->src_height,
                    si_channels_name(in->src_channels), in->width, in->height, si_channels_name(in->channels), how);
}

const char *si_size_str(uint64_t bytes, char *buf) { return base_size(bytes, buf); }
