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

/* Fits an image to height x width as tf.image.resizeBilinear does by default
 * (no aligned corners, no half-pixel centres), with the op table's host
 * kernel, in float on values 0..255; float32 inputs are then scaled to
 * [0,1], int32 ones cut to integers as tf.cast does. (stb_image_resize,
 * used before, aborts on an assertion for some sizes: 7x21 to 31x17.) */
si_result si_image_read(const char *path, int *height, int *width, si_dtype dtype, void **data,
                        si_error *err)
{
    si_error dummy;
    if (!err)
        err = &dummy;
    if (!path || !height || !width || !data)
        return base_fail(err, SI_ERR_ARG, "si_image_read: path, height, width and data are required");
    *data = NULL;
    if (*height < 0 || *width < 0)
        return base_fail(err, SI_ERR_ARG, "%s: bad image size %dx%d", path, *height, *width);
    if (dtype != SI_FLOAT32 && dtype != SI_INT32)
        return base_fail(err, SI_ERR_ARG, "%s: images are read as float32 or int32", path);
    unsigned char *rgb = NULL;
    int h0, w0;
    si_result st = io_image_decode(path, &h0, &w0, &rgb, err);
    if (st != SI_OK)
        return st;
    int h = *height ? *height : h0, w = *width ? *width : w0;
    size_t n0 = (size_t)h0 * (size_t)w0 * 3, n = (size_t)h * (size_t)w * 3;
    int32_t *src = malloc(n0 * sizeof *src);
    float *fit = malloc(n * sizeof *fit);
    void *out = malloc(n * 4);
    if (!src || !fit || !out) {
        free(rgb), free(src), free(fit), free(out);
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < n0; i++)
        src[i] = rgb[i];
    free(rgb);
    ck_step rs = {.kind = CK_RESIZE};
    rs.u.resize = (ck_resize_p){.bilinear = 1, .n = 1, .in_h = h0, .in_w = w0, .c = 3,
                                .out_h = h, .out_w = w};
    core_buf in = {.dtype = SI_INT32, .shape = {.rank = 4, .d = {1, h0, w0, 3}}, .data = src};
    core_buf fb = {.dtype = SI_FLOAT32, .shape = {.rank = 4, .d = {1, h, w, 3}}, .data = fit};
    const core_buf *ins[1] = {&in};
    ck_host_resize(&rs, ins, &fb);
    free(src);
    for (size_t i = 0; i < n; i++) {
        if (dtype == SI_FLOAT32)
            ((float *)out)[i] = fit[i] / 255.0f;
        else
            ((int32_t *)out)[i] = (int32_t)fit[i];
    }
    free(fit);
    *height = h;
    *width = w;
    *data = out;
    return SI_OK;
}
