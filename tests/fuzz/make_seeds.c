/* Writes the seed corpora of the image and .npy targets into DIR/image and
 * DIR/npy: small images in every format the library reads through stb_image,
 * and .npy files of each dtype and header form io_npy_read accepts.
 *   make_seeds DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stb/stb_image_write.h>
#include "io.h"

static char out[512];

static const char *at(const char *dir, const char *sub, const char *name)
{
    snprintf(out, sizeof out, "%s/%s/%s", dir, sub, name);
    return out;
}

/* a .npy written by hand: the header forms and dtypes io_npy_write never makes */
static int raw_npy(const char *path, const char *descr, const char *shape, const void *data, size_t n)
{
    char dict[128];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    int pad = 64 - (10 + len + 1) % 64;
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    unsigned short hl = (unsigned short)(len + pad + 1);
    fputc(hl & 0xff, f);
    fputc(hl >> 8, f);
    fputs(dict, f);
    for (int i = 0; i < pad; i++)
        fputc(' ', f);
    fputc('\n', f);
    fwrite(data, 1, n, f);
    return fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    char sub[512];
    snprintf(sub, sizeof sub, "%s/image", dir);
    mkdir(dir, 0755);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/npy", dir);
    mkdir(sub, 0755);

    enum { W = 7, H = 5 };
    unsigned char px[W * H * 4];
    for (int i = 0; i < W * H * 4; i++)
        px[i] = (unsigned char)(i * 29);
    int ok = 1;
    for (int ch = 1; ch <= 4; ch++) {
        char name[32];
        snprintf(name, sizeof name, "c%d.png", ch);
        ok &= stbi_write_png(at(dir, "image", name), W, H, ch, px, W * ch) != 0;
        snprintf(name, sizeof name, "c%d.bmp", ch);
        ok &= stbi_write_bmp(at(dir, "image", name), W, H, ch, px) != 0;
        snprintf(name, sizeof name, "c%d.tga", ch);
        ok &= stbi_write_tga(at(dir, "image", name), W, H, ch, px) != 0;
        snprintf(name, sizeof name, "c%d.jpg", ch);
        ok &= stbi_write_jpg(at(dir, "image", name), W, H, ch, px, 90) != 0;
    }
    float hdr[W * H * 3];
    for (int i = 0; i < W * H * 3; i++)
        hdr[i] = (float)i / 7.f;
    ok &= stbi_write_hdr(at(dir, "image", "c3.hdr"), W, H, 3, hdr) != 0;

    si_error err;
    float f[24];
    int32_t k[24];
    uint8_t b[24];
    for (int i = 0; i < 24; i++) {
        f[i] = (float)i * 0.5f - 3.f;
        k[i] = i * 1000 - 7000;
        b[i] = (uint8_t)(i % 3 == 0);
    }
    int64_t s3[3] = {2, 3, 4}, s1[1] = {5};
    ok &= io_npy_write(at(dir, "npy", "f32.npy"), SI_FLOAT32, 3, s3, f, &err) == SI_OK;
    ok &= io_npy_write(at(dir, "npy", "i32.npy"), SI_INT32, 1, s1, k, &err) == SI_OK;
    ok &= io_npy_write(at(dir, "npy", "bool.npy"), SI_BOOL, 3, s3, b, &err) == SI_OK;
    ok &= io_npy_write(at(dir, "npy", "scalar.npy"), SI_FLOAT32, 0, s1, f, &err) == SI_OK;
    double d[4] = {1.5, -2, 1e30, 0};
    int64_t l[4] = {1, -2, 3, 2147483647};
    ok &= raw_npy(at(dir, "npy", "f64.npy"), "<f8", "(2, 2)", d, sizeof d) == 0;
    ok &= raw_npy(at(dir, "npy", "i64.npy"), "<i8", "(4,)", l, sizeof l) == 0;
    ok &= raw_npy(at(dir, "npy", "u8.npy"), "|u1", "(3, 1)", b, 3) == 0;
    ok &= raw_npy(at(dir, "npy", "empty.npy"), "<f4", "(0, 3)", f, 0) == 0;
    if (!ok) {
        fprintf(stderr, "make_seeds: could not write the seeds in %s\n", dir);
        return 1;
    }
    return 0;
}
