#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>

#include "io.h"

/* stb_image is compiled here from Debian's header, not taken from libstb.a,
 * so that its assertions and allocations are ours: Debian builds it with
 * asserts, and a malformed JPEG can fail one (stb_image.h:2115, found by
 * tests/fuzz), which would abort the whole process. Here an assertion that
 * fails jumps back to io_image_decode, which frees what stb had allocated
 * and refuses the file. Static: no symbol meets libstb's. */
typedef struct {
    jmp_buf jb;
    void **blocks;
    size_t n, cap;
    int oom, failed;
} io_stb_guard;
static _Thread_local io_stb_guard *io_stb_g;

static _Noreturn void io_stb_fail(void)
{
    io_stb_g->failed = 1;
    longjmp(io_stb_g->jb, 1);
}

static void io_stb_track(void *p)
{
    io_stb_guard *g = io_stb_g;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 16;
        void **nb = realloc(g->blocks, cap * sizeof *nb);
        if (!nb) {
            free(p);
            g->oom = 1;
            io_stb_fail();
        }
        g->blocks = nb;
        g->cap = cap;
    }
    g->blocks[g->n++] = p;
}

static size_t io_stb_find(const void *p)
{
    io_stb_guard *g = io_stb_g;
    for (size_t i = g->n; i-- > 0;)
        if (g->blocks[i] == p)
            return i;
    return SIZE_MAX;
}

static void io_stb_untrack(void *p)
{
    io_stb_guard *g = io_stb_g;
    size_t i = io_stb_find(p);
    if (i != SIZE_MAX)
        g->blocks[i] = g->blocks[--g->n];
}

/* zeroed: on corrupt input stb reads parts of its decoder state it never
 * wrote (valgrind shows it); zeros make that the same every time */
static void *io_stb_malloc(size_t sz)
{
    void *p = calloc(1, sz ? sz : 1);
    if (p)
        io_stb_track(p);
    return p;
}

static void *io_stb_realloc(void *p, size_t sz)
{
    size_t i = p ? io_stb_find(p) : SIZE_MAX;
    void *q = realloc(p, sz ? sz : 1);
    if (q && i != SIZE_MAX)
        io_stb_g->blocks[i] = q;
    else if (q)
        io_stb_track(q);
    return q;
}

static void io_stb_free(void *p)
{
    if (p) {
        io_stb_untrack(p);
        free(p);
    }
}

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_NO_STDIO
#define STBI_ASSERT(x) ((x) ? (void)0 : io_stb_fail())
#define STBI_MALLOC(sz) io_stb_malloc(sz)
#define STBI_REALLOC(p, sz) io_stb_realloc(p, sz)
#define STBI_FREE(p) io_stb_free(p)
/* the fuzz build lowers it (a harness limit, so that a header claiming a huge
 * image is not an OOM or timeout report about the harness) */
#ifdef IO_IMAGE_MAX_SIDE
#define STBI_MAX_DIMENSIONS IO_IMAGE_MAX_SIDE
#endif
/* stb declares static functions it defines only under other options; the
 * warning comes at the end of the file, after the pop below */
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wshift-negative-value"
#ifdef __clang__
/* with an empty first IDAT a PNG makes stb compute NULL + 0 (stb_image.h:5130)
 * and memcpy 0 bytes from NULL (1663): undefined by the letter of C and
 * harmless. A corrupt JPEG's AC code can be longer than the bits left: 2.27's
 * fast-AC path (2200) subtracts it anyway (2.28 refuses it), code_bits goes
 * negative and the next refill (2065) shifts a byte by 32 or more. x86 takes
 * the count mod 32: the file's coefficients come out garbage, as they are in a
 * corrupt file, and every index stays inside stb's padded tables (ASan checks
 * them in the fuzz build; tests/fuzz/crashes/image-jpeg-fast-ac-bits.jpg).
 * Those three UBSan checks are off inside stb's functions only. */
#pragma clang attribute push(__attribute__((no_sanitize("pointer-overflow", "nonnull-attribute", \
                                                        "shift-exponent"))), \
                             apply_to = function)
#endif
#include <stb/stb_image.h>
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC diagnostic pop

/* Debian's stb_image (2022-09) trusts a JPEG's Huffman table counts: a DHT
 * table with more than 256 codes writes past stbi__huffman.size[257] (found by
 * tests/fuzz; reproducers tests/fuzz/crashes/image-jpeg-*; stb fixed it later
 * with the same check). Mirroring stb's walk through segments and scans to
 * find the tables it builds missed some (entropy data, fill bytes and lengths
 * are read in ways a walker drifts from), so every place stb could take for a
 * DHT is checked: stb acts on a DHT only right after the bytes FF C4 (fill
 * bytes FF aside), then reads a 16-bit length and, while the length lasts,
 * tables of one class byte, 16 counts and as many values as the counts add
 * up to, reading zeros past the file's end. A table anywhere of more than 256
 * codes refuses the file; a sound JPEG has none, wherever its FF C4 bytes
 * are (an embedded thumbnail's tables are sound too). Returns 0 for files stb
 * does not take for a JPEG (FF, fill bytes FF, D8) and for sound ones. */
static int io_jpeg_bad_huffman(const unsigned char *b, size_t n)
{
    size_t s = 1;
    if (n < 2 || b[0] != 0xff)
        return 0;
    while (s < n && b[s] == 0xff)
        s++;
    if (s >= n || b[s] != 0xd8)
        return 0;
#define AT(i) ((i) < n ? b[i] : 0)
    for (size_t p = 0; p + 1 < n; p++) {
        if (b[p] != 0xff || b[p + 1] != 0xc4)
            continue;
        long len = ((long)AT(p + 2) << 8 | AT(p + 3)) - 2;
        size_t t = p + 4;
        while (len > 0 && t < n) {
            long codes = 0;
            for (size_t k = t + 1; k <= t + 16; k++)
                codes += AT(k);
            if (codes > 256)
                return 1;
            t += 17 + (size_t)codes;
            len -= 17 + codes;
        }
    }
#undef AT
    return 0;
}

/* stb_image grows its buffer for a PNG's IDAT chunk to the chunk's declared
 * length before it reads the chunk, so a 100-byte file claiming 2 GiB makes it
 * allocate 2 GiB (found by tests/fuzz). Chunks follow each other plainly (a
 * length, a type, the data, a CRC), so the walk here is stb's: a chunk longer
 * than what the file has left refuses it first. Returns 0 for other formats. */
static int io_png_overlong_chunk(const unsigned char *b, size_t n)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 8 || memcmp(b, sig, 8))
        return 0;
    for (size_t p = 8; p + 8 <= n;) {
        uint64_t len = (uint64_t)b[p] << 24 | (uint64_t)b[p + 1] << 16 | (uint64_t)b[p + 2] << 8 | b[p + 3];
        if (len > n - p - 8)
            return 1;
        if (!memcmp(b + p + 4, "IEND", 4))
            return 0;
        p += 12 + (size_t)len;
    }
    return 0;
}

/* stb_image reads a PGM/PPM header's numbers into an int with no bound: a
 * width of ten digits is a signed overflow, undefined behaviour; and a 16-bit
 * one (maximum over 255) converted to RGB reads past its buffer
 * (stbi__convert_16_to_8 after an 8-bit stbi__convert_format; both found by
 * tests/fuzz). The header is read here first as stb reads it (whitespace and
 * # comments, then width, height and maximum, a byte at a time with zeros
 * past the end): 1 for a number past INT_MAX, 2 for a 16-bit file. */
static int io_pnm_unsafe(const unsigned char *b, size_t n)
{
    if (n < 2 || b[0] != 'P' || (b[1] != '5' && b[1] != '6'))
        return 0;
    size_t i = 2;
#define PNM_EOF (i >= n)
#define PNM_GET (i < n ? b[i++] : 0)
#define PNM_SPACE(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\v' || (c) == '\f' || (c) == '\r')
    int c = PNM_GET;
    for (int k = 0; k < 3; k++) {
        for (;;) {
            while (!PNM_EOF && PNM_SPACE(c))
                c = PNM_GET;
            if (PNM_EOF || c != '#')
                break;
            while (!PNM_EOF && c != '\n' && c != '\r')
                c = PNM_GET;
        }
        long long v = 0;
        while (!PNM_EOF && c >= '0' && c <= '9') {
            if ((v = v * 10 + (c - '0')) > INT_MAX)
                return 1;
            c = PNM_GET;
        }
        if (k == 2 && v > 255)
            return 2;
    }
#undef PNM_EOF
#undef PNM_GET
#undef PNM_SPACE
    return 0;
}

/* stb_image_load_from_memory with its assertions caught (io_stb_guard): NULL
 * when it fails either way; g holds what it had allocated. */
static unsigned char *io_stb_decode(const unsigned char *file, int len, int *w, int *h, int *ch,
                                    int req, io_stb_guard *g)
{
    unsigned char *img = NULL;
    io_stb_g = g;
    if (setjmp(g->jb) == 0)
        img = stbi_load_from_memory(file, len, w, h, ch, req);
    io_stb_g = NULL;
    return g->failed ? NULL : img;
}

/* req: stb's req_comp, 0 for the file's own channels (then *channels says them) */
static si_result io_image_load(const char *path, int req, int *height, int *width, int *channels,
                               unsigned char **rgb, si_error *err)
{
    *rgb = NULL;
    unsigned char *file = NULL;
    size_t file_len = 0;
    /* stbi_load_from_memory takes an int length */
    si_result rs_st = io_read_whole(path, INT32_MAX, "image file larger than 2 GiB", &file,
                                    &file_len, err);
    if (rs_st)
        return rs_st;
    if (io_jpeg_bad_huffman(file, file_len)) {
        free(file);
        return base_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: corrupt JPEG (a Huffman table has more than 256 codes)",
                       path);
    }
    int pnm = io_pnm_unsafe(file, file_len);
    if (pnm) {
        free(file);
        return base_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: %s", path,
                       pnm == 1 ? "corrupt PNM (a number in its header is too large)"
                                : "corrupt PNM: 16-bit PGM/PPM are not read (stb_image reads "
                                  "them past their buffer); give an 8-bit one or a .npy");
    }
    if (io_png_overlong_chunk(file, file_len)) {
        free(file);
        return base_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: corrupt PNG (a chunk is longer "
                       "than the file)", path);
    }
    int w = 0, h = 0, ch = 0;
    io_stb_guard guard = {.n = 0};
    unsigned char *img = io_stb_decode(file, (int)file_len, &w, &h, &ch, req, &guard);
    int failed_assert = guard.failed;
    for (size_t i = 0; i < guard.n; i++)
        if (guard.blocks[i] != img)
            free(guard.blocks[i]);
    free(guard.blocks);
    free(file);
    if (failed_assert && guard.oom)
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    if (!img)
        return base_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: %s", path,
                       failed_assert ? "corrupt data (stb_image's own check failed)"
                                     : stbi_failure_reason());
    if (w <= 0 || h <= 0) { /* stb decodes some headers (Radiance HDR) to no pixels */
        free(img);
        return base_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: it has no pixels (%dx%d)", path,
                       w, h);
    }
    /* stb's buffer goes back to the caller as plain malloc'ed memory */
    /* stb's blocks are plain malloc'ed ones (io_stb_malloc) */
    if (!req && (ch < 1 || ch > 4)) {
        free(img);
        return base_fail(err, SI_ERR_FORMAT, "%s: cannot decode image: %d channels", path, ch);
    }
    *height = h;
    *width = w;
    *channels = req ? req : ch;
    *rgb = img;
    return SI_OK;
}

si_result io_image_decode(const char *path, int *height, int *width, unsigned char **rgb,
                          si_error *err)
{
    int ch;
    return io_image_load(path, 3, height, width, &ch, rgb, err);
}

si_result io_image_decode_any(const char *path, int *height, int *width, int *channels,
                              unsigned char **px, si_error *err)
{
    *channels = 0;
    return io_image_load(path, 0, height, width, channels, px, err);
}
