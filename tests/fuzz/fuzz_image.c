/* libFuzzer target: images through si_image_read (stb_image, then the resize).
 * stb_image is compiled here, instrumented, rather than taken from the
 * prebuilt libstb.a: the fuzzer then sees its branches and ASan its buffers. */
#include <stdint.h>
#define STB_IMAGE_IMPLEMENTATION
/* The library takes stb's own limit (2^24 a side); here a side of 1024 keeps a
 * header that claims a huge image from being an OOM or timeout report about
 * the harness (a 4096x4096 TGA took over 10 s to convert under ASan). */
#define STBI_MAX_DIMENSIONS (1 << 10)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wall"
#pragma clang diagnostic ignored "-Wextra"
/* Two UBSan checks are off for stb's own functions: with an empty first IDAT
 * a PNG makes it compute NULL + 0 (stb_image.h:5130) and memcpy 0 bytes from
 * NULL (1663), undefined by the letter of C and harmless; every other check,
 * and ASan, stay on. */
#pragma clang attribute push(__attribute__((no_sanitize("pointer-overflow", "nonnull-attribute"))), \
                             apply_to = function)
#include <stb/stb_image.h>
#pragma clang attribute pop
#pragma clang diagnostic pop
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
    }
    return 0;
}
