/* .npy (NumPy format 1.0/2.0/3.0), little-endian, C order. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io.h"

/* Finds 'key' (or "key") in the header dict and returns the text after its ':'. */
static const char *io_npy_value(const char *h, const char *key)
{
    char pat[32];
    const char *p;
    snprintf(pat, sizeof pat, "'%s'", key);
    if (!(p = strstr(h, pat))) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        if (!(p = strstr(h, pat)))
            return NULL;
    }
    p += strlen(pat);
    while (*p == ' ')
        p++;
    if (*p++ != ':')
        return NULL;
    while (*p == ' ')
        p++;
    return p;
}

typedef enum { IO_NPY_F4, IO_NPY_I4, IO_NPY_B1, IO_NPY_U1, IO_NPY_F8, IO_NPY_I8 } io_npy_kind;

static const struct {
    const char *code;
    io_npy_kind kind;
    size_t size;
} io_npy_types[] = {
    {"f4", IO_NPY_F4, 4}, {"i4", IO_NPY_I4, 4}, {"b1", IO_NPY_B1, 1},
    {"u1", IO_NPY_U1, 1}, {"f8", IO_NPY_F8, 8}, {"i8", IO_NPY_I8, 8},
};

static si_result io_npy_header(const char *path, const char *h, io_npy_kind *kind, size_t *esize,
                               int *rank, int64_t *shape, uint64_t *count, si_error *err)
{
    const char *d = io_npy_value(h, "descr");
    if (!d || (*d != '\'' && *d != '"'))
        return base_fail(err, SI_ERR_FORMAT, "%s: .npy header has no descr", path);
    char q = *d++;
    const char *end = strchr(d, q);
    if (!end || end - d != 3)
        return base_fail(err, SI_ERR_UNSUPPORTED, "%s: .npy dtype is not one of <f4 <i4 |b1 |u1 <f8 <i8", path);
    int found = 0;
    for (size_t i = 0; i < sizeof io_npy_types / sizeof io_npy_types[0]; i++) {
        if (strncmp(d + 1, io_npy_types[i].code, 2))
            continue;
        /* One-byte types carry no byte order; wider ones must be little-endian. */
        int ok = io_npy_types[i].size == 1 ? (d[0] == '|' || d[0] == '<' || d[0] == '=')
                                           : (d[0] == '<' || d[0] == '=');
        if (ok) {
            *kind = io_npy_types[i].kind;
            *esize = io_npy_types[i].size;
            found = 1;
        }
    }
    if (!found)
        return base_fail(err, SI_ERR_UNSUPPORTED, "%s: .npy dtype '%.3s' is not supported (want <f4 <i4 |b1 |u1 <f8 <i8)",
                       path, d);

    const char *f = io_npy_value(h, "fortran_order");
    if (!f)
        return base_fail(err, SI_ERR_FORMAT, "%s: .npy header has no fortran_order", path);
    if (!strncmp(f, "True", 4))
        return base_fail(err, SI_ERR_FORMAT, "%s: .npy is in Fortran order; only C order is supported", path);
    if (strncmp(f, "False", 5))
        return base_fail(err, SI_ERR_FORMAT, "%s: .npy fortran_order is neither True nor False", path);

    const char *s = io_npy_value(h, "shape");
    if (!s || *s != '(')
        return base_fail(err, SI_ERR_FORMAT, "%s: .npy header has no shape tuple", path);
    s++;
    *rank = 0;
    *count = 1;
    for (;;) {
        while (*s == ' ')
            s++;
        if (*s == ')')
            break;
        char *e;
        errno = 0;
        long long v = strtoll(s, &e, 10);
        if (e == s || errno || v < 0)
            return base_fail(err, SI_ERR_FORMAT, "%s: .npy shape is malformed", path);
        if (*rank == SI_MAX_RANK)
            return base_fail(err, SI_ERR_UNSUPPORTED, "%s: .npy rank is above %d", path, SI_MAX_RANK);
        if (__builtin_mul_overflow(*count, (uint64_t)v, count) || *count > (UINT64_C(1) << 48))
            return base_fail(err, SI_ERR_FORMAT, "%s: .npy shape is too large", path);
        shape[(*rank)++] = v;
        s = e;
        if (*s == 'L')
            s++;
        while (*s == ' ')
            s++;
        if (*s == ',')
            s++;
        else if (*s != ')')
            return base_fail(err, SI_ERR_FORMAT, "%s: .npy shape is malformed", path);
    }
    return SI_OK;
}

static si_result io_npy_convert(const char *path, io_npy_kind kind, const uint8_t *src, uint64_t n,
                                si_dtype *dtype, void **data, si_error *err)
{
    size_t osize = kind == IO_NPY_B1 ? 1 : 4;
    uint8_t *out = malloc(n ? (size_t)n * osize : 1);
    if (!out)
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    for (uint64_t i = 0; i < n; i++) {
        float f;
        int32_t x;
        double dv;
        int64_t lv;
        switch (kind) {
        case IO_NPY_F4:
        case IO_NPY_I4: memcpy(out + 4 * i, src + 4 * i, 4); break;
        case IO_NPY_B1: out[i] = src[i] != 0; break;
        case IO_NPY_U1:
            x = src[i];
            memcpy(out + 4 * i, &x, 4);
            break;
        case IO_NPY_F8:
            memcpy(&dv, src + 8 * i, 8);
            f = (float)dv;
            memcpy(out + 4 * i, &f, 4);
            break;
        case IO_NPY_I8:
            memcpy(&lv, src + 8 * i, 8);
            if (lv < INT32_MIN || lv > INT32_MAX) {
                free(out);
                return base_fail(err, SI_ERR_FORMAT, "%s: int64 value %lld at index %llu does not fit int32", path,
                               (long long)lv, (unsigned long long)i);
            }
            x = (int32_t)lv;
            memcpy(out + 4 * i, &x, 4);
            break;
        }
    }
    *dtype = kind == IO_NPY_B1 ? SI_BOOL : kind == IO_NPY_F4 || kind == IO_NPY_F8 ? SI_FLOAT32 : SI_INT32;
    *data = out;
    return SI_OK;
}

si_result io_npy_read(const char *path, si_dtype *dtype, int *rank, int64_t shape[SI_MAX_RANK],
                      void **data, si_error *err)
{
    *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return base_fail(err, SI_ERR_IO, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len + 1);
    if (!buf) {
        fclose(f);
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(buf, 1, len, f);
    fclose(f);
    si_result s = SI_OK;
    if (got != len) {
        s = base_fail(err, SI_ERR_IO, "%s: read failed", path);
        goto done;
    }
    if (len < 10 || memcmp(buf, "\x93NUMPY", 6)) {
        s = base_fail(err, SI_ERR_FORMAT, "%s: not a .npy file", path);
        goto done;
    }
    int major = buf[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8;
        hstart = 10;
    } else if ((major == 2 || major == 3) && len >= 12) {
        hlen = (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
        hstart = 12;
    } else {
        s = base_fail(err, SI_ERR_FORMAT, "%s: .npy version %d is not supported", path, major);
        goto done;
    }
    if (hlen > len - hstart) {
        s = base_fail(err, SI_ERR_FORMAT, "%s: .npy header is truncated", path);
        goto done;
    }
    char *h = malloc(hlen + 1);
    if (!h) {
        s = base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
        goto done;
    }
    memcpy(h, buf + hstart, hlen);
    h[hlen] = 0;
    io_npy_kind kind = IO_NPY_F4;
    size_t esize = 4;
    uint64_t count = 0;
    int r = 0;
    int64_t shp[SI_MAX_RANK] = {0};
    s = io_npy_header(path, h, &kind, &esize, &r, shp, &count, err);
    free(h);
    if (s)
        goto done;
    size_t body = len - hstart - hlen;
    if (count * esize > body) {
        s = base_fail(err, SI_ERR_FORMAT, "%s: .npy data is truncated: %zu bytes, the header needs %llu", path, body,
                    (unsigned long long)(count * esize));
        goto done;
    }
    s = io_npy_convert(path, kind, buf + hstart + hlen, count, dtype, data, err);
    if (!s) {
        *rank = r;
        memcpy(shape, shp, sizeof shp);
    }
done:
    free(buf);
    return s;
}

si_result io_npy_write(const char *path, si_dtype dtype, int rank, const int64_t *shape,
                       const void *data, si_error *err)
{
    const char *descr = dtype == SI_FLOAT32 ? "<f4" : dtype == SI_INT32 ? "<i4" : dtype == SI_BOOL ? "|b1" : NULL;
    if (!descr)
        return base_fail(err, SI_ERR_ARG, "%s: unknown dtype %d", path, (int)dtype);
    if (rank < 0 || rank > SI_MAX_RANK || (rank > 0 && !shape))
        return base_fail(err, SI_ERR_ARG, "%s: bad rank %d", path, rank);
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    uint64_t count = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return base_fail(err, SI_ERR_ARG, "%s: negative dimension %lld", path, (long long)shape[i]);
        count *= (uint64_t)shape[i];
        n += snprintf(hdr + n, sizeof hdr - (size_t)n, rank == 1 ? "%lld," : i ? ", %lld" : "%lld",
                      (long long)shape[i]);
    }
    n += snprintf(hdr + n, sizeof hdr - (size_t)n, "), }");
    /* Pad with spaces and end with '\n' so the data starts 64-byte aligned. */
    size_t total = ((size_t)n + 1 + 10 + 63) / 64 * 64;
    size_t hlen = total - 10;
    memset(hdr + n, ' ', hlen - 1 - (size_t)n);
    hdr[hlen - 1] = '\n';
    uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(hlen & 0xff), (uint8_t)(hlen >> 8)};
    size_t bytes = (size_t)count * (dtype == SI_BOOL ? 1u : 4u);
    if (count && !data)
        return base_fail(err, SI_ERR_ARG, "%s: data is NULL", path);
    FILE *f = fopen(path, "wb");
    if (!f)
        return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, hlen, f) == hlen &&
             (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok)
        return base_fail(err, SI_ERR_IO, "%s: write failed: %s", path, strerror(e));
    return SI_OK;
}
