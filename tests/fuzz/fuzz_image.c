/* libFuzzer target: images through si_image_read and si_image_read_as
 * (stb_image, the channel conversion, then the fit: stretch, fit or crop).
 * stb_image is compiled into the library (io/image.c), so in the fuzz build it
 * is instrumented: the fuzzer sees its branches and ASan its buffers. The
 * fuzz build caps image sides at 1024 (IO_IMAGE_MAX_SIDE, Makefile). */
#include <stdint.h>
#include "streaminfer.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128];
    fuzz_write("in.img", data, size, path, sizeof path);
    si_error err = {0};
    void *out = NULL;
    /* its own size (bounded: a decoded image is not resized to more), then a
     * fixed small size, as the CLI resizes to a model's input */
    int h = 0, w = 0;
    if (si_image_read(path, &h, &w, SI_FLOAT32, &out, &err) == SI_OK) {
        if (h <= 0 || w <= 0)
            abort();
        free(out);
        out = NULL;
    }
    h = 17;
    w = 31;
    if (si_image_read(path, &h, &w, SI_INT32, &out, &err) == SI_OK) {
        for (int i = 0; i < h * w * 3; i++)
            if (((int32_t *)out)[i] < 0 || ((int32_t *)out)[i] > 255)
                abort();
        free(out);
        out = NULL;
    }
    /* the channels and the fit mode from the input's last byte */
    const int ch[3] = {1, 3, 4};
    int c = size ? ch[data[size - 1] % 3] : 3;
    si_fit fit = size ? (si_fit)(data[size - 1] / 3 % 3) : SI_FIT_STRETCH;
    h = 23;
    w = 9;
    si_image_info info;
    if (si_image_read_as(path, &h, &w, c, SI_INT32, fit, &out, &info, &err) == SI_OK) {
        if (h != 23 || w != 9 || info.channels != c)
            abort();
        for (int i = 0; i < h * w * c; i++)
            if (((int32_t *)out)[i] < 0 || ((int32_t *)out)[i] > 255)
                abort();
        char how[256];
        si_image_info_format(&info, how, sizeof how);
        free(out);
    }
    return 0;
}
