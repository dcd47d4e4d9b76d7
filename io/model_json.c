/* model.json → io_model. Every error names the file (and node, attr or weight);
 * a half-built io_model is always safe to hand to io_model_free. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io.h"

#include "model_json_internal.h"

char *io_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

si_result io_nomem(const io_ctx *c)
{
    return base_fail(c->err, SI_ERR_NOMEM, "%s: out of memory", c->file);
}

/* The converter writes camelCase; protobuf's own printers may write snake_case. */
const cJSON *io_get(const cJSON *o, const char *camel, const char *snake)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, camel);
    if (!v && snake)
        v = cJSON_GetObjectItemCaseSensitive(o, snake);
    return v;
}

/* int64 comes as a JSON string in protobuf JSON; numbers are accepted too. */
static int io_json_int64(const cJSON *v, int64_t *out)
{
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d))
            return -1;
        *out = (int64_t)d;
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return -1;
    char *end;
    errno = 0;
    long long x = strtoll(v->valuestring, &end, 10);
    if (errno || *end)
        return -1;
    *out = x;
    return 0;
}

/* protobuf JSON writes non-finite floats as strings. */
static int io_json_double(const cJSON *v, double *out)
{
    if (cJSON_IsNumber(v)) {
        *out = v->valuedouble;
        return 0;
    }
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return -1;
    const char *s = v->valuestring;
    if (!strcmp(s, "NaN")) {
        *out = NAN;
        return 0;
    }
    if (!strcmp(s, "Infinity")) {
        *out = INFINITY;
        return 0;
    }
    if (!strcmp(s, "-Infinity")) {
        *out = -INFINITY;
        return 0;
    }
    char *end;
    *out = strtod(s, &end);
    return *end ? -1 : 0;
}

static int io_b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

/* Standard or URL-safe alphabet, padding optional. Result is NUL-terminated.
 * Returns 0, -1 on bad input, -2 on no memory. */
static int io_b64_decode(const char *in, char **out, size_t *out_len)
{
    size_t n = strlen(in);
    while (n > 0 && in[n - 1] == '=')
        n--;
    if (n % 4 == 1)
        return -1;
    char *d = malloc(n / 4 * 3 + 3);
    if (!d)
        return -2;
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = io_b64_value((unsigned char)in[i]);
        if (v < 0) {
            free(d);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            d[k++] = (char)((acc >> bits) & 0xff);
        }
    }
    d[k] = 0;
    *out = d;
    *out_len = k;
    return 0;
}

static const char *io_dt_names[] = {
    [1] = "DT_FLOAT", [2] = "DT_DOUBLE", [3] = "DT_INT32", [4] = "DT_UINT8",
    [5] = "DT_INT16", [6] = "DT_INT8", [7] = "DT_STRING", [8] = "DT_COMPLEX64",
    [9] = "DT_INT64", [10] = "DT_BOOL", [14] = "DT_BFLOAT16", [17] = "DT_UINT16",
    [18] = "DT_COMPLEX128", [19] = "DT_HALF", [20] = "DT_RESOURCE", [21] = "DT_VARIANT",
    [22] = "DT_UINT32", [23] = "DT_UINT64",
};

/* DataType as its enum name or, from other printers, its number. */
static int io_json_dtype(const cJSON *v, io_dtype *dt, const char **name)
{
    const char *s = NULL;
    if (cJSON_IsString(v)) {
        s = v->valuestring;
    } else if (cJSON_IsNumber(v)) {
        /* range first: converting a double outside int's range is undefined */
        double d = v->valuedouble;
        int n = (int)(sizeof io_dt_names / sizeof io_dt_names[0]);
        int k = d >= 0 && d < n ? (int)d : 0;
        s = k == d && io_dt_names[k] ? io_dt_names[k] : "DT_INVALID";
    } else {
        return -1;
    }
    *name = s;
    if (!strcmp(s, "DT_FLOAT")) *dt = IO_DT_FLOAT;
    else if (!strcmp(s, "DT_INT32")) *dt = IO_DT_INT32;
    else if (!strcmp(s, "DT_BOOL")) *dt = IO_DT_BOOL;
    else *dt = IO_DT_OTHER;
    return 0;
}

/* A `type` attr as TensorFlow.js reads it: it computes half and double as
 * float32 and the small and 64-bit integers as int32 (a uint8 image input is an
 * int32 tensor there). Tensor contents keep their real width (io_json_dtype). */
static int io_json_type_attr(const cJSON *v, io_dtype *dt, const char **name)
{
    if (io_json_dtype(v, dt, name))
        return -1;
    if (*dt == IO_DT_OTHER) {
        if (!strcmp(*name, "DT_HALF") || !strcmp(*name, "DT_DOUBLE"))
            *dt = IO_DT_FLOAT;
        else if (!strcmp(*name, "DT_INT64") || !strcmp(*name, "DT_INT8") ||
                 !strcmp(*name, "DT_UINT8") || !strcmp(*name, "DT_INT16") ||
                 !strcmp(*name, "DT_UINT16"))
            *dt = IO_DT_INT32;
    }
    return 0;
}

/* TensorShapeProto. Returns SI_OK, or a status with *why set. */
static si_result io_json_shape(const cJSON *v, io_shape *s, const char **why)
{
    memset(s, 0, sizeof *s);
    if (!cJSON_IsObject(v)) {
        *why = "shape is not an object";
        return SI_ERR_FORMAT;
    }
    if (cJSON_IsTrue(io_get(v, "unknownRank", "unknown_rank"))) {
        s->unknown_rank = 1;
        return SI_OK;
    }
    const cJSON *dims = io_get(v, "dim", NULL);
    if (!dims)
        return SI_OK;
    if (!cJSON_IsArray(dims)) {
        *why = "shape.dim is not an array";
        return SI_ERR_FORMAT;
    }
    if (cJSON_GetArraySize(dims) > SI_MAX_RANK) {
        *why = "shape has more than SI_MAX_RANK dimensions";
        return SI_ERR_UNSUPPORTED;
    }
    const cJSON *d;
    cJSON_ArrayForEach(d, dims) {
        /* proto3 JSON drops zero fields: {} is a dimension of size 0. */
        const cJSON *size = cJSON_IsObject(d) ? io_get(d, "size", NULL) : d;
        int64_t x = 0;
        if (size && io_json_int64(size, &x)) {
            *why = "shape has a bad dimension size";
            return SI_ERR_FORMAT;
        }
        s->dim[s->rank++] = x < 0 ? -1 : x;
    }
    return SI_OK;
}

static size_t io_dtype_bytes(io_dtype dt)
{
    return dt == IO_DT_BOOL ? 1 : 4;
}

static si_result io_attr_bad(const io_ctx *c, const io_attr *a, si_result st, const char *why)
{
    return base_fail(c->err, st, "%s: node '%s': attr '%s': %s", c->file, c->node, a->name, why);
}

static si_result io_json_tensor(const io_ctx *c, const cJSON *v, io_attr *a)
{
    io_tensor_value *t = &a->tensor;
    const char *name, *why = NULL;
    if (!cJSON_IsObject(v))
        return io_attr_bad(c, a, SI_ERR_FORMAT, "tensor is not an object");
    const cJSON *dt = io_get(v, "dtype", NULL);
    if (!dt) {
        t->dtype = IO_DT_OTHER;
    } else if (io_json_dtype(dt, &t->dtype, &name)) {
        return io_attr_bad(c, a, SI_ERR_FORMAT, "tensor has a bad dtype");
    }
    const cJSON *shape = io_get(v, "tensorShape", "tensor_shape");
    if (shape) {
        si_result st = io_json_shape(shape, &t->shape, &why);
        if (st)
            return io_attr_bad(c, a, st, why);
    }
    /* A tensor holds values, so every dimension is known and its size is a
     * number memory could hold (the weights' limit, io_json_weight). */
    if (t->shape.unknown_rank)
        return io_attr_bad(c, a, SI_ERR_FORMAT, "tensor shape has unknown rank");
    uint64_t count = 1;
    for (int i = 0; i < t->shape.rank; i++) {
        if (t->shape.dim[i] < 0)
            return io_attr_bad(c, a, SI_ERR_FORMAT, "tensor shape has a negative dimension");
        if (__builtin_mul_overflow(count, (uint64_t)t->shape.dim[i], &count) || count > (UINT64_C(1) << 48))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "tensor shape is too large");
    }
    if (t->dtype == IO_DT_OTHER)
        return SI_OK; /* values kept only for the dtypes streaminfer computes with */
    size_t esize = io_dtype_bytes(t->dtype);
    const cJSON *content = io_get(v, "tensorContent", "tensor_content");
    if (content) {
        char *raw;
        size_t len;
        if (!cJSON_IsString(content))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "tensorContent is not a string");
        int r = io_b64_decode(content->valuestring, &raw, &len);
        if (r == -2)
            return io_nomem(c);
        if (r)
            return io_attr_bad(c, a, SI_ERR_FORMAT, "tensorContent is not base64");
        if (len % esize) {
            free(raw);
            return io_attr_bad(c, a, SI_ERR_FORMAT, "tensorContent length is not a multiple of the element size");
        }
        t->data = raw;
        t->n = len / esize;
        return SI_OK;
    }
    const cJSON *vals = t->dtype == IO_DT_FLOAT ? io_get(v, "floatVal", "float_val")
                      : t->dtype == IO_DT_INT32 ? io_get(v, "intVal", "int_val")
                                                : io_get(v, "boolVal", "bool_val");
    if (!vals)
        return SI_OK;
    if (!cJSON_IsArray(vals))
        return io_attr_bad(c, a, SI_ERR_FORMAT, "tensor values are not an array");
    size_t n = (size_t)cJSON_GetArraySize(vals);
    t->data = malloc(n ? n * esize : 1);
    if (!t->data)
        return io_nomem(c);
    t->n = n;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, vals) {
        double d;
        int64_t x;
        if (t->dtype == IO_DT_FLOAT) {
            if (io_json_double(e, &d))
                return io_attr_bad(c, a, SI_ERR_FORMAT, "bad floatVal");
            /* out of float's range the cast is undefined; Float32Array gives ±Infinity */
            ((float *)t->data)[i] = d > FLT_MAX ? INFINITY : d < -FLT_MAX ? -INFINITY : (float)d;
        } else if (t->dtype == IO_DT_INT32) {
            if (io_json_int64(e, &x) || x < INT32_MIN || x > INT32_MAX)
                return io_attr_bad(c, a, SI_ERR_FORMAT, "bad intVal");
            ((int32_t *)t->data)[i] = (int32_t)x;
        } else {
            if (!cJSON_IsBool(e))
                return io_attr_bad(c, a, SI_ERR_FORMAT, "bad boolVal");
            ((uint8_t *)t->data)[i] = cJSON_IsTrue(e) ? 1 : 0;
        }
        i++;
    }
    return SI_OK;
}

static const char *io_list_keys[] = {"i", "f", "b", "s", "type", "shape"};
static const io_attr_kind io_list_kinds[] = {IO_ATTR_I, IO_ATTR_F, IO_ATTR_B,
                                             IO_ATTR_S, IO_ATTR_TYPE, IO_ATTR_SHAPE};

static si_result io_json_list(const io_ctx *c, const cJSON *v, io_attr *a)
{
    if (!cJSON_IsObject(v))
        return io_attr_bad(c, a, SI_ERR_FORMAT, "list is not an object");
    a->list_kind = IO_ATTR_EMPTY;
    const cJSON *arr = NULL;
    for (int k = 0; k < 6 && !arr; k++) {
        arr = io_get(v, io_list_keys[k], NULL);
        if (arr)
            a->list_kind = io_list_kinds[k];
    }
    if (!arr) {
        if (io_get(v, "tensor", NULL) || io_get(v, "func", NULL))
            return io_attr_bad(c, a, SI_ERR_UNSUPPORTED, "lists of tensors or functions are not supported");
        return SI_OK;
    }
    if (!cJSON_IsArray(arr))
        return io_attr_bad(c, a, SI_ERR_FORMAT, "list values are not an array");
    int n = cJSON_GetArraySize(arr);
    size_t m = n ? (size_t)n : 1;
    switch (a->list_kind) {
    case IO_ATTR_I: a->li = calloc(m, sizeof *a->li); break;
    case IO_ATTR_F: a->lf = calloc(m, sizeof *a->lf); break;
    case IO_ATTR_B: a->lb = calloc(m, sizeof *a->lb); break;
    case IO_ATTR_S: a->ls = calloc(m, sizeof *a->ls); break;
    case IO_ATTR_TYPE: a->ltype = calloc(m, sizeof *a->ltype); break;
    default: a->lshape = calloc(m, sizeof *a->lshape); break;
    }
    if (!a->li && !a->lf && !a->lb && !a->ls && !a->ltype && !a->lshape)
        return io_nomem(c);
    a->n = n; /* set before filling: io_model_free walks ls[0..n) and skips NULLs */
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        const char *why = "bad list value", *name;
        si_result st = SI_OK;
        size_t len;
        int r;
        switch (a->list_kind) {
        case IO_ATTR_I: st = io_json_int64(e, &a->li[i]) ? SI_ERR_FORMAT : SI_OK; break;
        case IO_ATTR_F: st = io_json_double(e, &a->lf[i]) ? SI_ERR_FORMAT : SI_OK; break;
        case IO_ATTR_B:
            st = cJSON_IsBool(e) ? SI_OK : SI_ERR_FORMAT;
            a->lb[i] = cJSON_IsTrue(e);
            break;
        case IO_ATTR_S:
            if (!cJSON_IsString(e)) {
                st = SI_ERR_FORMAT;
                break;
            }
            r = io_b64_decode(e->valuestring, &a->ls[i], &len);
            if (r == -2)
                return io_nomem(c);
            if (r) {
                why = "list value is not base64";
                st = SI_ERR_FORMAT;
            }
            break;
        case IO_ATTR_TYPE: st = io_json_type_attr(e, &a->ltype[i], &name) ? SI_ERR_FORMAT : SI_OK; break;
        default: st = io_json_shape(e, &a->lshape[i], &why); break;
        }
        if (st)
            return io_attr_bad(c, a, st, why);
        i++;
    }
    return SI_OK;
}

static si_result io_json_attr(const io_ctx *c, const cJSON *v, io_attr *a)
{
    const cJSON *x;
    const char *why = NULL;
    si_result st;
    if (!cJSON_IsObject(v))
        return io_attr_bad(c, a, SI_ERR_FORMAT, "value is not an object");
    if ((x = io_get(v, "i", NULL))) {
        a->kind = IO_ATTR_I;
        if (io_json_int64(x, &a->i))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "bad integer");
    } else if ((x = io_get(v, "f", NULL))) {
        a->kind = IO_ATTR_F;
        if (io_json_double(x, &a->f))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "bad float");
    } else if ((x = io_get(v, "b", NULL))) {
        a->kind = IO_ATTR_B;
        if (!cJSON_IsBool(x))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "bad bool");
        a->b = cJSON_IsTrue(x);
    } else if ((x = io_get(v, "s", NULL))) {
        a->kind = IO_ATTR_S;
        if (!cJSON_IsString(x))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "s is not a string");
        int r = io_b64_decode(x->valuestring, &a->s, &a->s_len);
        if (r == -2)
            return io_nomem(c);
        if (r)
            return io_attr_bad(c, a, SI_ERR_FORMAT, "s is not base64");
    } else if ((x = io_get(v, "type", NULL))) {
        a->kind = IO_ATTR_TYPE;
        const char *name;
        if (io_json_type_attr(x, &a->type, &name))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "bad type");
        /* s owns the name so type_name stays valid as long as the model. */
        if (!(a->s = io_strdup(name)))
            return io_nomem(c);
        a->s_len = strlen(a->s);
        a->type_name = a->s;
    } else if ((x = io_get(v, "shape", NULL))) {
        a->kind = IO_ATTR_SHAPE;
        if ((st = io_json_shape(x, &a->shape, &why)))
            return io_attr_bad(c, a, st, why);
    } else if ((x = io_get(v, "list", NULL))) {
        a->kind = IO_ATTR_LIST;
        return io_json_list(c, x, a);
    } else if ((x = io_get(v, "tensor", NULL))) {
        a->kind = IO_ATTR_TENSOR;
        return io_json_tensor(c, x, a);
    } else if ((x = io_get(v, "func", NULL))) {
        a->kind = IO_ATTR_FUNC;
        const cJSON *name = cJSON_IsObject(x) ? io_get(x, "name", NULL) : NULL;
        if (!cJSON_IsString(name))
            return io_attr_bad(c, a, SI_ERR_FORMAT, "func has no name");
        if (!(a->s = io_strdup(name->valuestring)))
            return io_nomem(c);
        a->s_len = strlen(a->s);
    } else {
        a->kind = IO_ATTR_EMPTY; /* e.g. a placeholder, or a value proto3 left out */
    }
    return SI_OK;
}

si_result io_json_node(io_ctx *c, int idx, const cJSON *v, io_node *n)
{
    const cJSON *name = cJSON_IsObject(v) ? io_get(v, "name", NULL) : NULL;
    if (!cJSON_IsString(name))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: node #%d has no name", c->file, idx);
    if (!(n->name = io_strdup(name->valuestring)))
        return io_nomem(c);
    c->node = n->name;
    const cJSON *op = io_get(v, "op", NULL);
    if (!cJSON_IsString(op))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: node '%s' has no op", c->file, n->name);
    if (!(n->op = io_strdup(op->valuestring)))
        return io_nomem(c);

    const cJSON *in = io_get(v, "input", NULL);
    if (in) {
        if (!cJSON_IsArray(in))
            return base_fail(c->err, SI_ERR_FORMAT, "%s: node '%s': input is not an array", c->file, n->name);
        int k = cJSON_GetArraySize(in);
        if (!(n->inputs = calloc(k ? (size_t)k : 1, sizeof *n->inputs)))
            return io_nomem(c);
        n->n_inputs = k;
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, in) {
            if (!cJSON_IsString(e))
                return base_fail(c->err, SI_ERR_FORMAT, "%s: node '%s': input #%d is not a string", c->file, n->name, i);
            if (!(n->inputs[i++] = io_strdup(e->valuestring)))
                return io_nomem(c);
        }
    }

    const cJSON *attrs = io_get(v, "attr", NULL);
    if (attrs) {
        if (!cJSON_IsObject(attrs))
            return base_fail(c->err, SI_ERR_FORMAT, "%s: node '%s': attr is not an object", c->file, n->name);
        int k = cJSON_GetArraySize(attrs);
        if (!(n->attrs = calloc(k ? (size_t)k : 1, sizeof *n->attrs)))
            return io_nomem(c);
        n->n_attrs = k;
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, attrs) {
            io_attr *a = &n->attrs[i++];
            if (!(a->name = io_strdup(e->string)))
                return io_nomem(c);
            si_result st = io_json_attr(c, e, a);
            if (st)
                return st;
        }
    }
    c->node = NULL;
    return SI_OK;
}

static si_result io_weight_bad(const io_ctx *c, const char *w, si_result st, const char *why)
{
    return base_fail(c->err, st, "%s: weight '%s': %s", c->file, w, why);
}

static si_result io_json_weight(const io_ctx *c, const cJSON *v, io_weight *w, int idx)
{
    const cJSON *name = cJSON_IsObject(v) ? io_get(v, "name", NULL) : NULL;
    if (!cJSON_IsString(name))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: weight #%d has no name", c->file, idx);
    if (!(w->name = io_strdup(name->valuestring)))
        return io_nomem(c);

    const cJSON *shape = io_get(v, "shape", NULL);
    if (!cJSON_IsArray(shape))
        return io_weight_bad(c, w->name, SI_ERR_FORMAT, "shape is missing or not an array");
    if (cJSON_GetArraySize(shape) > SI_MAX_RANK)
        return io_weight_bad(c, w->name, SI_ERR_UNSUPPORTED, "rank is above SI_MAX_RANK");
    uint64_t count = 1;
    const cJSON *d;
    cJSON_ArrayForEach(d, shape) {
        int64_t x;
        if (io_json_int64(d, &x) || x < 0)
            return io_weight_bad(c, w->name, SI_ERR_FORMAT, "bad dimension in shape");
        if (__builtin_mul_overflow(count, (uint64_t)x, &count) || count > (UINT64_C(1) << 48))
            return io_weight_bad(c, w->name, SI_ERR_FORMAT, "shape is too large");
        w->shape[w->rank++] = x;
    }
    w->count = count;

    const cJSON *dt = io_get(v, "dtype", NULL);
    if (!cJSON_IsString(dt))
        return io_weight_bad(c, w->name, SI_ERR_FORMAT, "dtype is missing");
    const char *ds = dt->valuestring;
    if (!strcmp(ds, "float32")) {
        w->dtype = IO_DT_FLOAT;
    } else if (!strcmp(ds, "int32")) {
        w->dtype = IO_DT_INT32;
    } else if (!strcmp(ds, "bool")) {
        w->dtype = IO_DT_BOOL;
    } else if (!strcmp(ds, "string")) {
        w->dtype = IO_DT_STRING;
    } else if (!strcmp(ds, "complex64")) {
        return base_fail(c->err, SI_ERR_UNSUPPORTED, "%s: weight '%s': dtype '%s' is not supported",
                       c->file, w->name, ds);
    } else {
        return base_fail(c->err, SI_ERR_FORMAT, "%s: weight '%s': unknown dtype '%s'", c->file, w->name, ds);
    }

    const cJSON *q = io_get(v, "quantization", NULL);
    if (q && !cJSON_IsNull(q) && w->dtype == IO_DT_STRING)
        return io_weight_bad(c, w->name, SI_ERR_UNSUPPORTED, "a string weight cannot be quantized");
    if (q && !cJSON_IsNull(q)) {
        const cJSON *qd = cJSON_IsObject(q) ? io_get(q, "dtype", NULL) : NULL;
        if (!cJSON_IsString(qd))
            return io_weight_bad(c, w->name, SI_ERR_FORMAT, "quantization has no dtype");
        const char *qs = qd->valuestring;
        if (!strcmp(qs, "uint8")) {
            w->quant = IO_Q_UINT8;
        } else if (!strcmp(qs, "uint16")) {
            w->quant = IO_Q_UINT16;
        } else if (!strcmp(qs, "float16")) {
            w->quant = IO_Q_FLOAT16;
        } else {
            return base_fail(c->err, SI_ERR_UNSUPPORTED, "%s: weight '%s': quantization dtype '%s' is not supported",
                           c->file, w->name, qs);
        }
        /* The same combinations TensorFlow.js accepts. */
        if (w->quant == IO_Q_FLOAT16 ? w->dtype != IO_DT_FLOAT : w->dtype == IO_DT_BOOL)
            return base_fail(c->err, SI_ERR_UNSUPPORTED, "%s: weight '%s': %s quantization of a %s weight is not supported",
                           c->file, w->name, qs, ds);
        if (w->quant != IO_Q_FLOAT16) {
            if (io_json_double(io_get(q, "min", NULL), &w->q_min64) ||
                io_json_double(io_get(q, "scale", NULL), &w->q_scale64))
                return io_weight_bad(c, w->name, SI_ERR_FORMAT, "quantization needs numbers min and scale");
            /* NaN or infinite parameters make every value NaN or infinite (and
             * the host and GPU disagree on which); outside float's range the
             * float copies below would be undefined. */
            if (!(fabs(w->q_min64) <= FLT_MAX) || !(fabs(w->q_scale64) <= FLT_MAX))
                return io_weight_bad(c, w->name, SI_ERR_FORMAT,
                                     "quantization min and scale must be finite float32 numbers");
            w->q_min = (float)w->q_min64;
            w->q_scale = (float)w->q_scale64;
        }
    }
    /* a string weight's size is in its shard (io_string_weight_bytes) */
    w->nbytes = w->dtype == IO_DT_STRING ? 0 : count * io_weight_stored_elem_size(w);
    return SI_OK;
}

static char *io_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

/* A shard path is written by whoever wrote model.json: refuse one that is
 * absolute or that resolves (through "..", or a symbolic link) outside the
 * model's folder, or weights would be read from any file the process can open
 * (and --output would write its bytes out). */
static si_result io_shard_path(const io_ctx *c, const io_model *m, int gi, const char *rel, char **out)
{
    if (rel[0] == '/')
        return base_fail(c->err, SI_ERR_FORMAT, "%s: weightsManifest group %d: shard path '%s' is absolute; "
                       "shards must lie in the model's folder", c->file, gi + 1, rel);
    char *path = io_join(m->dir, rel);
    if (!path)
        return io_nomem(c);
    *out = path;
    char *real = realpath(path, NULL);
    if (!real)
        return base_fail(c->err, SI_ERR_IO, "%s: shard of %s: %s", path, c->file, strerror(errno));
    char *dir = realpath(m->dir, NULL);
    if (!dir) {
        int e = errno;
        free(real);
        return base_fail(c->err, SI_ERR_IO, "%s: %s", m->dir, strerror(e));
    }
    size_t n = strlen(dir);
    int inside = !strcmp(dir, "/") || (!strncmp(real, dir, n) && real[n] == '/');
    si_result st = SI_OK;
    if (!inside)
        st = base_fail(c->err, SI_ERR_FORMAT, "%s: weightsManifest group %d: shard path '%s' resolves to %s, "
                     "outside the model's folder %s", c->file, gi + 1, rel, real, dir);
    free(real);
    free(dir);
    return st;
}

static si_result io_json_group(const io_ctx *c, io_model *m, int gi, const cJSON *v, int *wi)
{
    io_group *g = &m->groups[gi];
    const cJSON *paths = cJSON_IsObject(v) ? io_get(v, "paths", NULL) : NULL;
    const cJSON *weights = cJSON_IsObject(v) ? io_get(v, "weights", NULL) : NULL;
    if (!cJSON_IsArray(paths) || !cJSON_IsArray(weights))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: weightsManifest group %d needs arrays paths and weights",
                       c->file, gi + 1);
    int k = cJSON_GetArraySize(paths);
    g->paths = calloc(k ? (size_t)k : 1, sizeof *g->paths);
    g->sizes = calloc(k ? (size_t)k : 1, sizeof *g->sizes);
    if (!g->paths || !g->sizes)
        return io_nomem(c);
    g->n_paths = k;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, paths) {
        if (!cJSON_IsString(e) || !e->valuestring[0])
            return base_fail(c->err, SI_ERR_FORMAT, "%s: weightsManifest group %d: path #%d is not a file name",
                           c->file, gi + 1, i);
        si_result ps = io_shard_path(c, m, gi, e->valuestring, &g->paths[i]);
        if (ps)
            return ps;
        struct stat st;
        if (stat(g->paths[i], &st))
            return base_fail(c->err, SI_ERR_IO, "%s: shard of %s: %s", g->paths[i], c->file, strerror(errno));
        if (!S_ISREG(st.st_mode))
            return base_fail(c->err, SI_ERR_IO, "%s: shard of %s is not a regular file", g->paths[i], c->file);
        g->sizes[i] = (uint64_t)st.st_size;
        g->total += g->sizes[i];
        i++;
    }

    uint64_t off = 0;
    cJSON_ArrayForEach(e, weights) {
        io_weight *w = &m->weights[*wi];
        si_result st = io_json_weight(c, e, w, *wi);
        (*wi)++;
        if (st)
            return st;
        w->group = gi;
        w->offset = off;
        if (w->dtype == IO_DT_STRING && (st = io_string_weight_bytes(c, g, w, off)))
            return st;
        off += w->nbytes;
        m->weights_bytes += w->nbytes;
    }
    if (off > g->total) {
        const char *shard = k ? g->paths[k - 1] : c->file;
        const char *first = "?";
        for (int j = *wi - cJSON_GetArraySize(weights); j < *wi; j++)
            if (m->weights[j].offset + m->weights[j].nbytes > g->total) {
                first = m->weights[j].name;
                break;
            }
        return base_fail(c->err, SI_ERR_FORMAT,
                       "%s: shards of group %d hold %llu bytes, the manifest in %s needs %llu (weight '%s' does not fit)",
                       shard, gi + 1, (unsigned long long)g->total, c->file, (unsigned long long)off, first);
    }
    return SI_OK;
}

static si_result io_json_manifest(io_ctx *c, io_model *m, const cJSON *man)
{
    if (!man)
        return SI_OK;
    if (!cJSON_IsArray(man))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: weightsManifest is not an array", c->file);
    int ng = cJSON_GetArraySize(man), nw = 0;
    const cJSON *g;
    cJSON_ArrayForEach(g, man) {
        const cJSON *ws = cJSON_IsObject(g) ? io_get(g, "weights", NULL) : NULL;
        nw += cJSON_IsArray(ws) ? cJSON_GetArraySize(ws) : 0;
    }
    m->groups = calloc(ng ? (size_t)ng : 1, sizeof *m->groups);
    m->weights = calloc(nw ? (size_t)nw : 1, sizeof *m->weights);
    if (!m->groups || !m->weights)
        return io_nomem(c);
    m->n_groups = ng;
    m->n_weights = nw;
    int gi = 0, wi = 0;
    cJSON_ArrayForEach(g, man) {
        si_result st = io_json_group(c, m, gi++, g, &wi);
        if (st)
            return st;
    }
    return SI_OK;
}


static si_result io_json_sig_side(const io_ctx *c, const cJSON *v, const char *side, int *n,
                                  char ***keys, char ***names)
{
    if (!v)
        return SI_OK;
    if (!cJSON_IsObject(v))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: signature.%s is not an object", c->file, side);
    int k = cJSON_GetArraySize(v);
    *keys = calloc(k ? (size_t)k : 1, sizeof **keys);
    *names = calloc(k ? (size_t)k : 1, sizeof **names);
    if (!*keys || !*names)
        return io_nomem(c);
    *n = k;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        const cJSON *name = cJSON_IsObject(e) ? io_get(e, "name", NULL) : NULL;
        (*keys)[i] = io_strdup(e->string);
        (*names)[i] = io_strdup(cJSON_IsString(name) ? name->valuestring : e->string);
        if (!(*keys)[i] || !(*names)[i])
            return io_nomem(c);
        i++;
    }
    return SI_OK;
}

static si_result io_json_model(io_ctx *c, io_model *m, const cJSON *root)
{
    si_result st;
    if (!cJSON_IsObject(root))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: top level is not a JSON object", c->file);
    const cJSON *fmt = io_get(root, "format", NULL);
    if (fmt && !cJSON_IsString(fmt))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: format is not a string", c->file);
    if (fmt && strcmp(fmt->valuestring, "graph-model"))
        return base_fail(c->err, SI_ERR_UNSUPPORTED, "%s: format is '%s'; only graph-model is supported",
                       c->file, fmt->valuestring);
    if (!(m->format = io_strdup("graph-model")))
        return io_nomem(c);

    const cJSON *topo = io_get(root, "modelTopology", "model_topology");
    if (!cJSON_IsObject(topo))
        return base_fail(c->err, SI_ERR_FORMAT, "%s: modelTopology is missing", c->file);
    const cJSON *nodes = io_get(topo, "node", NULL);
    if (nodes) {
        if (!cJSON_IsArray(nodes))
            return base_fail(c->err, SI_ERR_FORMAT, "%s: modelTopology.node is not an array", c->file);
        int k = cJSON_GetArraySize(nodes);
        if (!(m->nodes = calloc(k ? (size_t)k : 1, sizeof *m->nodes)))
            return io_nomem(c);
        m->n_nodes = k;
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, nodes) {
            if ((st = io_json_node(c, i, e, &m->nodes[i])))
                return st;
            i++;
        }
    }
    /* tfjs runs this graph once at load (tensorflowjs_converter puts a
     * SavedModel's table initializers there): without it tables would be
     * empty and every lookup its default, so it is refused, not skipped */
    const cJSON *init = io_get(root, "modelInitializer", NULL);
    const cJSON *init_nodes = cJSON_IsObject(init) ? io_get(init, "node", NULL) : NULL;
    if (cJSON_GetArraySize(init_nodes) > 0)
        return base_fail(c->err, SI_ERR_UNSUPPORTED,
                         "%s: the model has a modelInitializer graph (%d nodes, run once at load, "
                         "e.g. to fill hash tables), which is not supported",
                         c->file, cJSON_GetArraySize(init_nodes));
    const cJSON *lib = io_get(topo, "library", NULL);
    const cJSON *fns = cJSON_IsObject(lib) ? io_get(lib, "function", NULL) : NULL;
    m->has_functions = cJSON_GetArraySize(fns) > 0;

    if ((st = io_json_manifest(c, m, io_get(root, "weightsManifest", "weights_manifest"))))
        return st;
    if ((st = io_json_library(c, m, fns)))
        return st;

    /* tfjs prefers the signature kept in userDefinedMetadata (blazeface, iris ...). */
    const cJSON *udm = io_get(root, "userDefinedMetadata", NULL);
    const cJSON *sig = cJSON_IsObject(udm) ? io_get(udm, "signature", NULL) : NULL;
    if (!sig || cJSON_IsNull(sig))
        sig = io_get(root, "signature", NULL);
    if (sig && !cJSON_IsNull(sig)) {
        if (!cJSON_IsObject(sig))
            return base_fail(c->err, SI_ERR_FORMAT, "%s: signature is not an object", c->file);
        if ((st = io_json_sig_side(c, io_get(sig, "inputs", NULL), "inputs", &m->n_sig_inputs,
                                   &m->sig_input_keys, &m->sig_input_names)))
            return st;
        if ((st = io_json_sig_side(c, io_get(sig, "outputs", NULL), "outputs", &m->n_sig_outputs,
                                   &m->sig_output_keys, &m->sig_output_names)))
            return st;
    }
    return SI_OK;
}

static si_result io_resolve(const char *path, io_model *m, si_error *err)
{
    struct stat st;
    if (!path || !path[0])
        return base_fail(err, SI_ERR_ARG, "io_model_load: empty path");
    if (stat(path, &st))
        return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        m->dir = io_strdup(path);
        m->json_path = io_join(path, "model.json");
    } else {
        m->json_path = io_strdup(path);
        const char *slash = strrchr(path, '/');
        if (!slash) {
            m->dir = io_strdup(".");
        } else if (slash == path) {
            m->dir = io_strdup("/");
        } else if ((m->dir = malloc((size_t)(slash - path) + 1))) {
            memcpy(m->dir, path, (size_t)(slash - path));
            m->dir[slash - path] = 0;
        }
    }
    if (!m->dir || !m->json_path)
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path);
    return SI_OK;
}

static si_result io_read_all(const char *file, char **buf, size_t *len, si_error *err)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return base_fail(err, SI_ERR_IO, "%s: %s", file, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
        fclose(f);
        return base_fail(err, SI_ERR_IO, "%s: not a regular file", file);
    }
    size_t n = (size_t)st.st_size;
    char *b = malloc(n + 1);
    if (!b) {
        fclose(f);
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory (%zu bytes)", file, n);
    }
    size_t got = fread(b, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n) {
        free(b);
        return base_fail(err, SI_ERR_IO, "%s: read failed", file);
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return SI_OK;
}

si_result io_model_load(const char *path, io_model **out, si_error *err)
{
    *out = NULL;
    io_model *m = calloc(1, sizeof *m);
    if (!m)
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", path ? path : "(null)");
    char *buf = NULL;
    size_t len = 0;
    si_result st = io_resolve(path, m, err);
    if (!st)
        st = io_read_all(m->json_path, &buf, &len, err);
    if (st) {
        io_model_free(m);
        return st;
    }
    cJSON *root = cJSON_ParseWithLength(buf, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= buf && at <= buf + len ? (size_t)(at - buf) : len;
        int line = 1;
        for (size_t i = 0; i < off; i++)
            line += buf[i] == '\n';
        /* cJSON stops a byte or so short of the end when the text just runs out. */
        size_t rest = 0;
        for (size_t i = off; i < len; i++)
            rest += !strchr(" \t\r\n", buf[i]);
        st = base_fail(err, SI_ERR_FORMAT, "%s: %s at line %d (byte %zu of %zu)", m->json_path,
                     rest <= 1 ? "JSON ends early (truncated?)" : "malformed JSON", line, off, len);
    } else {
        io_ctx c = {m->json_path, NULL, err};
        st = io_json_model(&c, m, root);
        cJSON_Delete(root);
    }
    free(buf);
    if (st) {
        io_model_free(m);
        return st;
    }
    *out = m;
    return SI_OK;
}

static void io_attr_free(io_attr *a)
{
    free(a->name);
    free(a->s);
    free(a->li);
    free(a->lf);
    free(a->lb);
    if (a->ls)
        for (int i = 0; i < a->n; i++)
            free(a->ls[i]);
    free(a->ls);
    free(a->ltype);
    free(a->lshape);
    free(a->tensor.data);
}

static void io_strv_free(char **v, int n)
{
    if (v)
        for (int i = 0; i < n; i++)
            free(v[i]);
    free(v);
}

void io_model_free(io_model *m)
{
    if (!m)
        return;
    for (int i = 0; m->nodes && i < m->n_nodes; i++) {
        io_node *n = &m->nodes[i];
        free(n->name);
        free(n->op);
        io_strv_free(n->inputs, n->n_inputs);
        for (int j = 0; n->attrs && j < n->n_attrs; j++)
            io_attr_free(&n->attrs[j]);
        free(n->attrs);
    }
    free(m->nodes);
    if (!m->borrowed) {
        for (int i = 0; m->functions && i < m->n_functions; i++) {
            free(m->functions[i].name);
            io_model_free(m->functions[i].body);
        }
        free(m->functions);
    }
    for (int i = 0; !m->borrowed && m->weights && i < m->n_weights; i++)
        free(m->weights[i].name);
    if (m->borrowed)
        m->weights = NULL, m->groups = NULL, m->n_groups = 0;
    free(m->weights);
    for (int i = 0; m->groups && i < m->n_groups; i++) {
        io_strv_free(m->groups[i].paths, m->groups[i].n_paths);
        free(m->groups[i].sizes);
    }
    free(m->groups);
    io_strv_free(m->sig_input_keys, m->n_sig_inputs);
    io_strv_free(m->sig_input_names, m->n_sig_inputs);
    io_strv_free(m->sig_output_keys, m->n_sig_outputs);
    io_strv_free(m->sig_output_names, m->n_sig_outputs);
    free(m->json_path);
    free(m->dir);
    free(m->format);
    free(m);
}

const io_attr *io_node_attr(const io_node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && !strcmp(n->attrs[i].name, name))
            return &n->attrs[i];
    return NULL;
}
