#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>

#include "io.h"

si_result io_image_read(const char *path, int *height_io, int *width_io, si_dtype dtype, void **data,
                        si_error *err)
{
    *data = NULL;
    int height = *height_io, width = *width_io;
    if (height < 0 || width < 0)
        return io_fail(err, SI_ERR_ARG, "%s: bad image size %dx%d", path, height, width);
    if (dtype != SI_FLOAT32 && dtype != SI_INT32)
        return io_fail(err, SI_ERR_ARG, "%s: images are read as float32 or int32", path);
    struct stat st;
    if (stat(path, &st))
        return io_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    int w, h, ch;
    unsigned char *img = stbi_load(path, &w, &h, &ch, 3);
    if (!img)
        return io_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: %s", path, stbi_failure_reason());
    /* 0 keeps the image's own size */
    if (height == 0)
        height = h;
    if (width == 0)
        width = w;
    *height_io = height;
    *width_io = width;
    size_t n = (size_t)height * (size_t)width * 3;
    unsigned char *rs = malloc(n);
    if (!rs) {
        stbi_image_free(img);
        return io_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    /* The triangle filter is bilinear interpolation when enlarging. */
    int ok = stbir_resize_uint8_generic(img, w, h, 0, rs, width, height, 0, 3, STBIR_ALPHA_CHANNEL_NONE, 0,
                                        STBIR_EDGE_CLAMP, STBIR_FILTER_TRIANGLE, STBIR_COLORSPACE_LINEAR, NULL);
    stbi_image_free(img);
    if (!ok) {
        free(rs);
        return io_fail(err, SI_ERR_NOMEM, "%s: resize to %dx%d failed", path, height, width);
    }
    void *out = malloc(n * 4);
    if (!out) {
        free(rs);
        return io_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    for (size_t i = 0; i < n; i++) {
        if (dtype == SI_FLOAT32)
            ((float *)out)[i] = rs[i] / 255.0f;
        else
            ((int32_t *)out)[i] = rs[i];
    }
    free(rs);
    *data = out;
    return SI_OK;
}
