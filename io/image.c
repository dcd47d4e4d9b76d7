#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stb/stb_image.h>

#include "io.h"

/* Debian's stb_image (2022-09) trusts a JPEG's Huffman table counts: a DHT
 * table with more than 256 codes writes past stbi__huffman.size[257] (found by
 * tests/fuzz, reproducer tests/fuzz/crashes/image-jpeg-dht-overflow.jpg; stb
 * fixed it later with the same check). Every DHT segment, before and between
 * scans, is checked here first. Returns 0 when the file is not a JPEG or all
 * its tables are sound. */
static int io_jpeg_bad_huffman(const unsigned char *b, size_t n)
{
    if (n < 2 || b[0] != 0xff || b[1] != 0xd8)
        return 0;
    size_t i = 2;
    while (i + 4 <= n) {
        if (b[i] != 0xff) { /* entropy-coded data: skip to the next marker */
            i++;
            continue;
        }
        unsigned char mk = b[i + 1];
        if (mk == 0xff || mk == 0x00 || mk == 0x01 || (mk >= 0xd0 && mk <= 0xd8)) {
            i += mk == 0xff ? 1 : 2; /* fill byte, stuffed zero, RSTn, SOI: no length */
            continue;
        }
        if (mk == 0xd9)
            return 0;
        size_t len = (size_t)b[i + 2] << 8 | b[i + 3], end = i + 2 + len;
        if (len < 2)
            return 0; /* stb refuses it itself */
        /* a truncated DHT still reaches the table build with the counts it has */
        if (end > n)
            end = n;
        if (mk == 0xc4) {
            /* stb reads a table while the segment has bytes left, its counts
             * past the segment's end if need be (from what follows in the
             * file), and a table cut short by the file's end with the missing
             * count bytes as 0, then builds it */
            for (size_t t = i + 4; t < end;) {
                size_t codes = 0;
                for (size_t k = t + 1; k <= t + 16 && k < n; k++)
                    codes += b[k];
                if (codes > 256)
                    return 1;
                t += 17 + codes;
            }
        }
        i = end;
    }
    return 0;
}

static si_result io_read_file(const char *path, unsigned char **buf, size_t *len, si_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return io_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return io_fail(err, SI_ERR_IO, "%s: not a regular file", path);
    }
    if (st.st_size > INT32_MAX) { /* stbi_load_from_memory takes an int length */
        fclose(f);
        return io_fail(err, SI_ERR_FORMAT, "%s: image file larger than 2 GiB", path);
    }
    size_t n = (size_t)st.st_size;
    unsigned char *b = malloc(n ? n : 1);
    if (!b) {
        fclose(f);
        return io_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(b, 1, n, f);
    fclose(f);
    if (got != n) {
        free(b);
        return io_fail(err, SI_ERR_IO, "%s: read failed", path);
    }
    *buf = b;
    *len = n;
    return SI_OK;
}

si_result io_image_decode(const char *path, int *height, int *width, unsigned char **rgb,
                          si_error *err)
{
    *rgb = NULL;
    unsigned char *file = NULL;
    size_t file_len = 0;
    si_result rs_st = io_read_file(path, &file, &file_len, err);
    if (rs_st)
        return rs_st;
    if (io_jpeg_bad_huffman(file, file_len)) {
        free(file);
        return io_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: corrupt JPEG (a Huffman table has more than 256 codes)",
                       path);
    }
    int w, h, ch;
    unsigned char *img = stbi_load_from_memory(file, (int)file_len, &w, &h, &ch, 3);
    free(file);
    if (!img)
        return io_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: %s", path, stbi_failure_reason());
    if (w <= 0 || h <= 0) { /* stb decodes some headers (Radiance HDR) to no pixels */
        stbi_image_free(img);
        return io_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: it has no pixels (%dx%d)", path,
                       w, h);
    }
    /* stb's buffer goes back to the caller as plain malloc'ed memory */
    size_t n = (size_t)h * (size_t)w * 3;
    unsigned char *out = malloc(n);
    if (!out) {
        stbi_image_free(img);
        return io_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    memcpy(out, img, n);
    stbi_image_free(img);
    *height = h;
    *width = w;
    *rgb = out;
    return SI_OK;
}
