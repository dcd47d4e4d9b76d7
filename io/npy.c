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

typedef enum {
    IO_NPY_F2, IO_NPY_F4, IO_NPY_F8, IO_NPY_B1, IO_NPY_I1, IO_NPY_U1, IO_NPY_I2, IO_NPY_U2,
    IO_NPY_I4, IO_NPY_U4, IO_NPY_I8, IO_NPY_U8
} io_npy_kind;

static const struct {
    const char *code, *name;
    io_npy_kind kind;
    size_t size;
} io_npy_types[] = {
    {"f2", "float16", IO_NPY_F2, 2}, {"f4", "float32", IO_NPY_F4, 4}, {"f8", "float64", IO_NPY_F8, 8},
    {"b1", "bool", IO_NPY_B1, 1},    {"i1", "int8", IO_NPY_I1, 1},    {"u1", "uint8", IO_NPY_U1, 1},
    {"i2", "int16", IO_NPY_I2, 2},   {"u2", "uint16", IO_NPY_U2, 2},  {"i4", "int32", IO_NPY_I4, 4},
    {"u4", "uint32", IO_NPY_U4, 4},  {"i8", "int64", IO_NPY_I8, 8},   {"u8", "uint64", IO_NPY_U8, 8},
};
#define IO_NPY_CODES "<f2 <f4 <f8 |b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8"

static si_result io_npy_header(const char *path, const char *h, io_npy_kind *kind, size_t *esize,
                               int *rank, int64_t *shape, uint64_t *count, si_error *err)
{
    const char *d = io_npy_value(h, "descr");
    if (!d || (*d != '\'' && *d != '"'))
        return base_fail(err, SI_ERR_FORMAT, "%s: .npy header has no descr", path);
    char q = *d++;
    const char *end = strchr(d, q);
    if (!end || end - d != 3)
        return base_fail(err, SI_ERR_UNSUPPORTED, "%s: .npy dtype is not one of " IO_NPY_CODES, path);
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
        return base_fail(err, SI_ERR_UNSUPPORTED, "%s: .npy dtype '%.3s' is not supported (want " IO_NPY_CODES ")",
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

/* One stored element, widened without loss: a float kind to double, a signed
 * one to int64, an unsigned one to uint64. Returns which. */
typedef enum { IO_NPY_VF, IO_NPY_VI, IO_NPY_VU } io_npy_vkind;

static io_npy_vkind io_npy_elem(io_npy_kind kind, const uint8_t *p, double *f, int64_t *i, uint64_t *u)
{
    union { float f4; double f8; int8_t i1; int16_t i2; uint16_t u2; int32_t i4; uint32_t u4; int64_t i8;
            uint64_t u8; } v;
    switch (kind) {
    case IO_NPY_F2: memcpy(&v.u2, p, 2); *f = io_half_to_float(v.u2); return IO_NPY_VF;
    case IO_NPY_F4: memcpy(&v.f4, p, 4); *f = v.f4; return IO_NPY_VF;
    case IO_NPY_F8: memcpy(&v.f8, p, 8); *f = v.f8; return IO_NPY_VF;
    case IO_NPY_B1: *u = p[0] != 0; return IO_NPY_VU;
    case IO_NPY_U1: *u = p[0]; return IO_NPY_VU;
    case IO_NPY_I1: memcpy(&v.i1, p, 1); *i = v.i1; return IO_NPY_VI;
    case IO_NPY_I2: memcpy(&v.i2, p, 2); *i = v.i2; return IO_NPY_VI;
    case IO_NPY_U2: memcpy(&v.u2, p, 2); *u = v.u2; return IO_NPY_VU;
    case IO_NPY_I4: memcpy(&v.i4, p, 4); *i = v.i4; return IO_NPY_VI;
    case IO_NPY_U4: memcpy(&v.u4, p, 4); *u = v.u4; return IO_NPY_VU;
    case IO_NPY_I8: memcpy(&v.i8, p, 8); *i = v.i8; return IO_NPY_VI;
    case IO_NPY_U8: memcpy(&v.u8, p, 8); *u = v.u8; break;
    }
    return IO_NPY_VU;
}

/* One element to want as TensorFlow.js would take it (tf.tensor of the
 * numbers, then tf.cast): to float32 the nearest float (a 64-bit integer goes
 * through a JS number, a double, first; a float64 past float32's range becomes
 * an infinity, as Float32Array makes it); to int32 floats are cut toward zero;
 * to bool, value != 0 (NaN is true). Returns 0, or -1 where int32 cannot hold
 * the value (NaN, an infinity, out of range: JS would wrap it modulo 2^32,
 * tf.tensor's debug mode refuses NaN and infinities). */
static int io_npy_put(io_npy_kind kind, const uint8_t *p, si_dtype want, uint8_t *out)
{
    double f = 0;
    int64_t i = 0;
    uint64_t u = 0;
    io_npy_vkind vk = io_npy_elem(kind, p, &f, &i, &u);
    if (want == SI_BOOL) {
        *out = vk == IO_NPY_VF ? f != 0 : vk == IO_NPY_VI ? i != 0 : u != 0;
        return 0;
    }
    if (want == SI_FLOAT32) {
        float x = vk == IO_NPY_VF ? (float)f : vk == IO_NPY_VI ? (float)(double)i : (float)(double)u;
        memcpy(out, &x, 4);
        return 0;
    }
    int32_t x;
    if (vk == IO_NPY_VF) {
        if (!(f > -2147483649.0 && f < 2147483648.0)) /* NaN fails both */
            return -1;
        x = (int32_t)f;
    } else if (vk == IO_NPY_VI) {
        if (i < INT32_MIN || i > INT32_MAX)
            return -1;
        x = (int32_t)i;
    } else {
        if (u > INT32_MAX)
            return -1;
        x = (int32_t)u;
    }
    memcpy(out, &x, 4);
    return 0;
}

/* The stored value at p as text, for a refusal. */
static void io_npy_value_text(io_npy_kind kind, const uint8_t *p, char *buf, size_t n)
{
    double f = 0;
    int64_t i = 0;
    uint64_t u = 0;
    io_npy_vkind vk = io_npy_elem(kind, p, &f, &i, &u);
    if (vk == IO_NPY_VF) { /* the shortest of 15 or 17 digits that reads back as the value */
        snprintf(buf, n, "%.15g", f);
        if (strtod(buf, NULL) != f && f == f)
            snprintf(buf, n, "%.17g", f);
    }
    else if (vk == IO_NPY_VI)
        snprintf(buf, n, "%lld", (long long)i);
    else
        snprintf(buf, n, "%llu", (unsigned long long)u);
}

static si_dtype io_npy_natural(io_npy_kind kind)
{
    return kind == IO_NPY_B1 ? SI_BOOL
           : kind == IO_NPY_F2 || kind == IO_NPY_F4 || kind == IO_NPY_F8 ? SI_FLOAT32 : SI_INT32;
}

static si_result io_npy_convert(const char *path, io_npy_kind kind, size_t esize, const uint8_t *src,
                                uint64_t n, si_dtype want, void **data, si_error *err)
{
    size_t osize = want == SI_BOOL ? 1 : 4;
    uint8_t *out = malloc(n ? (size_t)n * osize : 1);
    if (!out)
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    /* the file's own 4-byte types are copied: the same bits (NaN payloads too) */
    if ((kind == IO_NPY_F4 && want == SI_FLOAT32) || (kind == IO_NPY_I4 && want == SI_INT32)) {
        if (n)
            memcpy(out, src, (size_t)n * 4);
        *data = out;
        return SI_OK;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (io_npy_put(kind, src + esize * i, want, out + osize * i) == 0)
            continue;
        char v[40];
        io_npy_value_text(kind, src + esize * i, v, sizeof v);
        free(out);
        const char *name = "?";
        for (size_t k = 0; k < sizeof io_npy_types / sizeof io_npy_types[0]; k++)
            if (io_npy_types[k].kind == kind)
                name = io_npy_types[k].name;
        return base_fail(err, SI_ERR_FORMAT, "%s: %s value %s at index %llu cannot be represented as int32", path,
                         name, v, (unsigned long long)i);
    }
    *data = out;
    return SI_OK;
}

si_result io_read_whole(const char *path, int64_t max, const char *too_large, unsigned char **buf,
                        size_t *len, si_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return base_fail(err, SI_ERR_IO, "%s: not a regular file", path);
    }
    if ((int64_t)st.st_size > max) {
        fclose(f);
        return base_fail(err, SI_ERR_FORMAT, "%s: %s", path, too_large);
    }
    size_t n = (size_t)st.st_size;
    unsigned char *b = malloc(n + 1); /* + 1: never malloc(0) */
    if (!b) {
        fclose(f);
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(b, 1, n, f);
    fclose(f);
    if (got != n) {
        free(b);
        return base_fail(err, SI_ERR_IO, "%s: read failed", path);
    }
    *buf = b;
    *len = n;
    return SI_OK;
}

/* want: SI_FLOAT32, SI_INT32, SI_BOOL, or -1 for the file's own (io_npy_natural). */
static si_result io_npy_load(const char *path, int want, si_dtype *dtype, int *rank,
                             int64_t shape[SI_MAX_RANK], void **data, si_error *err)
{
    *data = NULL;
    size_t len;
    uint8_t *buf;
    si_result s = io_read_whole(path, INT64_MAX, "", &buf, &len, err);
    if (s != SI_OK)
        return s;
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
    si_dtype dt = want < 0 ? io_npy_natural(kind) : (si_dtype)want;
    s = io_npy_convert(path, kind, esize, buf + hstart + hlen, count, dt, data, err);
    if (!s) {
        *dtype = dt;
        *rank = r;
        memcpy(shape, shp, sizeof shp);
    }
done:
    free(buf);
    return s;
}

si_result io_npy_read(const char *path, si_dtype *dtype, int *rank, int64_t shape[SI_MAX_RANK],
                      void **data, si_error *err)
{
    return io_npy_load(path, -1, dtype, rank, shape, data, err);
}

si_result io_npy_read_as(const char *path, si_dtype want, int *rank, int64_t shape[SI_MAX_RANK],
                         void **data, si_error *err)
{
    if (data)
        *data = NULL;
    if (!path || !rank || !shape || !data)
        return base_fail(err, SI_ERR_ARG, "si_npy_read_as: path, rank, shape and data are required");
    if (want != SI_FLOAT32 && want != SI_INT32 && want != SI_BOOL)
        return base_fail(err, SI_ERR_ARG, "%s: cannot read a .npy as dtype %d (float32, int32 or bool)", path,
                         (int)want);
    si_dtype dt;
    return io_npy_load(path, (int)want, &dt, rank, shape, data, err);
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
