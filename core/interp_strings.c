/* String tensors in the host interpreter, and the string ops as
 * tfjs-backend-cpu computes them: StringToHashBucketFast (tfjs-core
 * hash_util.js's fingerPrint64, farmhash's Fingerprint64, on the bytes),
 * StringSplit, StringNGrams (StringSplit_impl.js, StringNGrams_impl.js, on
 * bytes) and StaticRegexReplace (JavaScript's replace on the decoded string;
 * the matcher is interp_regex.c). The converter hands string attrs to these
 * ops lowercased (operation_mapper.js getStringParam): so do we. Ops that
 * only move elements (Reshape, Concat, ...) take strings too. String
 * tensors come from Consts whose weight has dtype 'string'; they never leave
 * the interpreter, and a model whose output is one is refused when opened. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp_internal.h"

/* ---- string values ---- */

static uint64_t *str_offs(const core_buf *b) { return (uint64_t *)b->data; }

const uint8_t *ip_str(const core_buf *b, int64_t i, size_t *len)
{
    const uint64_t *off = str_offs(b);
    int64_t n = core_shape_count(&b->shape);
    const uint8_t *bytes = (const uint8_t *)(off + n + 1);
    *len = (size_t)(off[i + 1] - off[i]);
    return bytes + off[i];
}

static int sv_room(ip_strvec *sv, uint64_t more)
{
    if (sv->oom)
        return -1;
    if (sv->n + 2 > sv->cap_n) {
        int64_t cap = sv->cap_n * 2 + 16;
        uint64_t *no = realloc(sv->off, (size_t)cap * sizeof *no);
        if (!no)
            return sv->oom = 1, -1;
        if (!sv->off)
            no[0] = 0;
        sv->off = no;
        sv->cap_n = cap;
    }
    if (more > (UINT64_C(1) << 40) || sv->cur + more > (UINT64_C(1) << 40))
        return sv->oom = 1, -1;
    if (sv->cur + more > sv->cap) {
        uint64_t cap = (sv->cur + more) * 2 + 64;
        uint8_t *nb = realloc(sv->bytes, (size_t)cap);
        if (!nb)
            return sv->oom = 1, -1;
        sv->bytes = nb;
        sv->cap = cap;
    }
    return 0;
}

void ip_sv_add(ip_strvec *sv, const uint8_t *p, size_t n)
{
    if (sv_room(sv, n))
        return;
    if (n)
        memcpy(sv->bytes + sv->cur, p, n);
    sv->cur += n;
}

void ip_sv_end(ip_strvec *sv)
{
    if (sv_room(sv, 0))
        return;
    sv->off[++sv->n] = sv->cur;
}

void ip_sv_free(ip_strvec *sv)
{
    free(sv->off);
    free(sv->bytes);
    memset(sv, 0, sizeof *sv);
}

ival *ip_sv_finish(ip_strvec *sv, const core_shape *s)
{
    ival *v = NULL;
    sv_room(sv, 0);
    if (!sv->oom && core_shape_count(s) == sv->n) {
        uint64_t nb = sv->off[sv->n];
        size_t head = ((size_t)sv->n + 1) * sizeof(uint64_t);
        core_buf b = {.dtype = IP_STRING, .shape = *s, .data = malloc(head + (size_t)nb + 1)};
        if (b.data) {
            memcpy(b.data, sv->off, head);
            if (nb)
                memcpy((uint8_t *)b.data + head, sv->bytes, (size_t)nb);
            if (!(v = ip_val_wrap(b)))
                free(b.data);
        }
    }
    ip_sv_free(sv);
    return v;
}

/* A Const of a string weight: its stored bytes, a 4-byte little-endian
 * length before each element, checked again here (the shard may have
 * changed since the model was opened). */
si_result ip_string_const(interp *in, int node, ival **out)
{
    const io_weight *w = &in->g->m->weights[in->g->weight_of[node]];
    core_shape s = {.rank = w->rank};
    for (int i = 0; i < w->rank; i++)
        s.d[i] = w->shape[i];
    uint8_t *raw = malloc(w->nbytes ? (size_t)w->nbytes : 1);
    if (!raw)
        return ip_nomem(in);
    si_result st = in->load(in->load_user, in->g->weight_of[node], raw, in->err);
    ip_strvec sv = {0};
    uint64_t p = 0;
    for (uint64_t i = 0; st == SI_OK && i < w->count; i++) {
        if (w->nbytes - p < 4) {
            st = ip_node_fail(in, node, SI_ERR_FORMAT, "string weight '%s' ends inside element %llu",
                              w->name, (unsigned long long)i);
            break;
        }
        uint64_t len = (uint64_t)raw[p] | (uint64_t)raw[p + 1] << 8 | (uint64_t)raw[p + 2] << 16 |
                       (uint64_t)raw[p + 3] << 24;
        p += 4;
        if (len > w->nbytes - p) {
            st = ip_node_fail(in, node, SI_ERR_FORMAT,
                              "string weight '%s': element %llu runs past its %llu bytes", w->name,
                              (unsigned long long)i, (unsigned long long)w->nbytes);
            break;
        }
        ip_sv_add(&sv, raw + p, (size_t)len);
        ip_sv_end(&sv);
        p += len;
    }
    free(raw);
    if (st != SI_OK) {
        ip_sv_free(&sv);
        return st;
    }
    if (!(*out = ip_sv_finish(&sv, &s)))
        return ip_nomem(in);
    return SI_OK;
}

/* ---- attrs ---- */

/* A string attr as getStringParam gives it: base64-decoded by atob, so each
 * byte is a Latin-1 character, then lowercased (A-Z and the Latin-1 capitals
 * U+00C0-U+00DE but U+00D7). *out holds those characters, a byte each; NULL
 * when the attr is absent. Returns -1 only when out of memory. */
static int attr_lower(const io_node *n, const char *name, char **out, size_t *len, char *why,
                      size_t why_n)
{
    const io_attr *a = io_node_attr(n, name);
    *out = NULL;
    *len = 0;
    if (!a || a->kind != IO_ATTR_S)
        return 0;
    char *d = malloc(a->s_len + 1);
    if (!d) {
        snprintf(why, why_n, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < a->s_len; i++) {
        unsigned char c = (unsigned char)a->s[i];
        d[i] = (char)((c >= 'A' && c <= 'Z') || (c >= 0xc0 && c <= 0xde && c != 0xd7) ? c + 32 : c);
    }
    d[a->s_len] = 0;
    *out = d;
    *len = a->s_len;
    return 0;
}

/* Latin-1 characters (attr_lower's) as util.encodeString gives them: UTF-8. */
static char *latin1_to_utf8(const char *s, size_t n, size_t *len)
{
    char *d = malloc(2 * n + 1);
    size_t k = 0;
    for (size_t i = 0; d && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            d[k++] = (char)c;
        } else {
            d[k++] = (char)(0xc0 | c >> 6);
            d[k++] = (char)(0x80 | (c & 0x3f));
        }
    }
    *len = k;
    return d;
}

static int64_t attr_int(const io_node *n, const char *name, int64_t dflt)
{
    const io_attr *a = io_node_attr(n, name);
    if (a && a->kind == IO_ATTR_I)
        return a->i;
    if (a && a->kind == IO_ATTR_F)
        return (int64_t)a->f;
    return dflt;
}

/* ---- fingerprint64 (tfjs-core hash_util.js) ---- */

static const uint64_t K0 = 0xc3a5c85c97cb3127ull, K1 = 0xb492b66fbe98f273ull,
                      K2 = 0x9ae16a3b2f90404full;

static uint64_t fetch64(const uint8_t *s)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | s[i];
    return v;
}

static uint64_t fetch32(const uint8_t *s)
{
    return (uint64_t)s[0] | (uint64_t)s[1] << 8 | (uint64_t)s[2] << 16 | (uint64_t)s[3] << 24;
}

static uint64_t rot64(uint64_t v, int sh) { return sh == 0 ? v : (v >> sh) | (v << (64 - sh)); }
static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

static uint64_t hash16(uint64_t u, uint64_t v, uint64_t mul)
{
    uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

static void weak32(const uint8_t *s, uint64_t a, uint64_t b, uint64_t *o0, uint64_t *o1)
{
    uint64_t w = fetch64(s), x = fetch64(s + 8), y = fetch64(s + 16), z = fetch64(s + 24);
    a += w;
    b = rot64(b + a + z, 21);
    uint64_t c = a;
    a += x;
    a += y;
    b += rot64(a, 44);
    *o0 = a + z;
    *o1 = b + c;
}

static uint64_t hash0to16(const uint8_t *s, size_t len)
{
    if (len >= 8) {
        uint64_t mul = K2 + len * 2, a = fetch64(s) + K2, b = fetch64(s + len - 8);
        uint64_t c = rot64(b, 37) * mul + a, d = (rot64(a, 25) + b) * mul;
        return hash16(c, d, mul);
    }
    if (len >= 4) {
        uint64_t mul = K2 + len * 2, a = fetch32(s);
        return hash16((a << 3) + len, fetch32(s + len - 4), mul);
    }
    if (len > 0) {
        uint64_t a = s[0], b = s[len >> 1], c = s[len - 1];
        uint64_t y = a + (b << 8), z = len + (c << 2);
        return shift_mix(K2 * y ^ K0 * z) * K2;
    }
    return K2;
}

static uint64_t hash17to32(const uint8_t *s, size_t len)
{
    uint64_t mul = K2 + len * 2, a = fetch64(s) * K1, b = fetch64(s + 8);
    uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
    return hash16(rot64(a + b, 43) + rot64(c, 30) + d, a + rot64(b + K2, 18) + c, mul);
}

static uint64_t hash33to64(const uint8_t *s, size_t len)
{
    uint64_t mul = K2 + len * 2, a = fetch64(s) * K2, b = fetch64(s + 8);
    uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
    uint64_t y = rot64(a + b, 43) + rot64(c, 30) + d;
    uint64_t z = hash16(y, a + rot64(b + K2, 18) + c, mul);
    uint64_t e = fetch64(s + 16) * mul, f = fetch64(s + 24);
    uint64_t g = (y + fetch64(s + len - 32)) * mul, h = (z + fetch64(s + len - 24)) * mul;
    return hash16(rot64(e + f, 43) + rot64(g, 30) + h, e + rot64(f + a, 18) + g, mul);
}

static uint64_t fingerprint64(const uint8_t *s, size_t len)
{
    if (len <= 16)
        return hash0to16(s, len);
    if (len <= 32)
        return hash17to32(s, len);
    if (len <= 64)
        return hash33to64(s, len);
    uint64_t seed = 81, x = seed, y = seed * K1 + 113, z = shift_mix(y * K2 + 113) * K2;
    uint64_t v0 = 0, v1 = 0, w0 = 0, w1 = 0, t;
    x = x * K2 + fetch64(s);
    size_t end = ((len - 1) >> 6) * 64, last64 = end + ((len - 1) & 63) - 63, off = 0;
    do {
        x = rot64(x + y + v0 + fetch64(s + off + 8), 37) * K1;
        y = rot64(y + v1 + fetch64(s + off + 48), 42) * K1;
        x ^= w1;
        y += v0 + fetch64(s + off + 40);
        z = rot64(z + w0, 33) * K1;
        weak32(s + off, v1 * K1, x + w0, &v0, &v1);
        weak32(s + off + 32, z + w1, y + fetch64(s + off + 16), &w0, &w1);
        t = z, z = x, x = t;
        off += 64;
    } while (off != end);
    uint64_t mul = K1 + ((z & 0xff) << 1);
    off = last64;
    w0 += (len - 1) & 63;
    v0 += w0;
    w0 += v0;
    x = rot64(x + y + v0 + fetch64(s + off + 8), 37) * mul;
    y = rot64(y + v1 + fetch64(s + off + 48), 42) * mul;
    x ^= w1 * 9;
    y += v0 * 9 + fetch64(s + off + 40);
    z = rot64(z + w0, 33) * mul;
    weak32(s + off, v1 * mul, x + w0, &v0, &v1);
    weak32(s + off + 32, z + w1, y + fetch64(s + off + 16), &w0, &w1);
    t = z, z = x, x = t;
    return hash16(hash16(v0, w0, mul) + shift_mix(y) * K0 + z, hash16(v1, w1, mul) + x, mul);
}

/* ---- the ops ---- */

static si_result need_string(opctx *o, int i, const char *what)
{
    if (o->data[i]->b.dtype != IP_STRING)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "%s must be of datatype string, got %s",
                            what, ip_dt_name(o->data[i]->b.dtype));
    return SI_OK;
}

static si_result hash_bucket(opctx *o)
{
    si_result st = ip_need_inputs(o, 1);
    if (st || (st = need_string(o, 0, "Input")))
        return st;
    int64_t nb = attr_int(o->n, "num_buckets", 0);
    if (nb <= 0)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "Number of buckets must be at least 1");
    /* tfjs reads the attr as a JavaScript number and takes it as a Long */
    double d = (double)nb;
    uint64_t m = d >= 9223372036854775808.0 ? UINT64_C(0x7fffffffffffffff) : (uint64_t)d;
    const core_buf *x = &o->data[0]->b;
    ival *v = ip_val_new(SI_INT32, &x->shape);
    if (!v)
        return ip_nomem(o->in);
    int64_t n = core_shape_count(&x->shape);
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        const uint8_t *s = ip_str(x, i, &len);
        ((int32_t *)v->b.data)[i] = (int32_t)(uint32_t)(fingerprint64(s, len) % m);
    }
    return ip_set_out(o, 0, v);
}

/* StringSplit_impl.js's split(): on bytes, each delimiter byte splits. */
static void split_one(const uint8_t *s, size_t n, const uint8_t *dl, size_t nd, int skip,
                      ip_strvec *sv, int64_t *count)
{
    if (!n)
        return;
    if (!nd) {
        for (size_t i = 0; i < n; i++, (*count)++) {
            ip_sv_add(sv, s + i, 1);
            ip_sv_end(sv);
        }
        return;
    }
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && !memchr(dl, s[i], nd))
            continue;
        if (!skip || i > start) {
            ip_sv_add(sv, s + start, i - start);
            ip_sv_end(sv);
            (*count)++;
        }
        start = i + 1;
    }
}

static si_result string_split(opctx *o)
{
    si_result st = ip_need_inputs(o, 2);
    if (st || (st = need_string(o, 0, "Input")) || (st = need_string(o, 1, "Delimiter")))
        return st;
    const core_buf *x = &o->data[0]->b, *dl = &o->data[1]->b;
    if (x->shape.rank != 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "Input should be Tensor1D, got rank %d",
                            x->shape.rank);
    if (dl->shape.rank != 0)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "Delimiter should be a scalar, got rank %d",
                            dl->shape.rank);
    int skip = ip_attr_bool(o->n, "skip_empty", 1); /* stringSplit_'s default */
    size_t nd;
    const uint8_t *d = ip_str(dl, 0, &nd);
    int64_t batch = x->shape.d[0], total = 0, widest = 0;
    int64_t *per = calloc((size_t)batch + 1, sizeof *per);
    ip_strvec sv = {0};
    if (!per)
        return ip_nomem(o->in);
    for (int64_t i = 0; i < batch; i++) {
        size_t n;
        const uint8_t *s = ip_str(x, i, &n);
        split_one(s, n, d, nd, skip, &sv, &per[i]);
        total += per[i];
        widest = per[i] > widest ? per[i] : widest;
    }
    if (total > INT32_MAX / 2 || sv.oom) {
        free(per);
        ip_sv_free(&sv);
        return sv.oom ? ip_nomem(o->in)
                      : ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "too many tokens (%lld)", (long long)total);
    }
    core_shape is = {.rank = 2, .d = {total, 2}}, vs = {.rank = 1, .d = {total}}, ss = {.rank = 1, .d = {2}};
    ival *idx = ip_val_new(SI_INT32, &is), *shp = ip_val_new(SI_INT32, &ss);
    ival *vals = ip_sv_finish(&sv, &vs);
    if (idx && shp) {
        int32_t *ip = idx->b.data;
        int64_t c = 0;
        for (int64_t i = 0; i < batch; i++)
            for (int64_t j = 0; j < per[i]; j++, c++) {
                ip[2 * c] = (int32_t)i;
                ip[2 * c + 1] = (int32_t)j;
            }
        ((int32_t *)shp->b.data)[0] = (int32_t)batch;
        ((int32_t *)shp->b.data)[1] = (int32_t)widest;
    }
    free(per);
    if (!idx || !shp || !vals) {
        ip_val_unref(idx);
        ip_val_unref(shp);
        ip_val_unref(vals);
        return ip_nomem(o->in);
    }
    if ((st = ip_set_out(o, 0, idx))) {
        ip_val_unref(vals);
        ip_val_unref(shp);
        return st;
    }
    if ((st = ip_set_out(o, 1, vals))) {
        ip_val_unref(shp);
        return st;
    }
    return ip_set_out(o, 2, shp);
}

typedef struct {
    const char *sep, *lpad, *rpad;
    size_t nsep, nl, nr;
    int64_t pad_width;
    int preserve;
} ngram_op;

static int64_t ng_pad(const ngram_op *g, int64_t w)
{
    int64_t p = g->pad_width < 0 ? w - 1 : g->pad_width;
    return p < w - 1 ? p : w - 1;
}

static int64_t ng_count(const ngram_op *g, int64_t len, int64_t w)
{
    int64_t c = len + 2 * ng_pad(g, w) - w + 1;
    return c > 0 ? c : 0;
}

/* createNGrams: num ngrams of width w from the sequence at data[start..]. */
static int ng_create(const ngram_op *g, const core_buf *data, int64_t start, int64_t num,
                     int64_t w, ip_strvec *sv)
{
    int64_t nd = core_shape_count(&data->shape);
    for (int64_t k = 0; k < num; k++) {
        int64_t pw = ng_pad(g, w);
        int64_t left = pw - k > 0 ? pw - k : 0;
        int64_t right = pw - (num - (k + 1)) > 0 ? pw - (num - (k + 1)) : 0;
        int64_t tokens = w - (left + right);
        int64_t ds = start + (left > 0 ? 0 : k - pw);
        if (tokens > 0 && (ds < 0 || ds + tokens > nd))
            return -1;
        /* the size tfjs reserves; its Uint8Array drops writes past it */
        int64_t size = left * (int64_t)g->nl + right * (int64_t)g->nr +
                       (left + right + tokens - 1) * (int64_t)g->nsep;
        for (int64_t n = 0; n < tokens; n++) {
            size_t len;
            ip_str(data, ds + n, &len);
            size += (int64_t)len;
        }
        if (size < 0)
            return -1;
        uint64_t at = sv->cur;
        const uint8_t *sep = (const uint8_t *)g->sep;
        for (int64_t n = 0; n < left; n++) {
            ip_sv_add(sv, (const uint8_t *)g->lpad, g->nl);
            ip_sv_add(sv, sep, g->nsep);
        }
        for (int64_t n = 0; n < tokens - 1; n++) {
            size_t len;
            const uint8_t *t = ip_str(data, ds + n, &len);
            ip_sv_add(sv, t, len);
            ip_sv_add(sv, sep, g->nsep);
        }
        if (tokens > 0) {
            size_t len;
            const uint8_t *t = ip_str(data, ds + tokens - 1, &len);
            ip_sv_add(sv, t, len);
            for (int64_t n = 0; n < right; n++) {
                ip_sv_add(sv, sep, g->nsep);
                ip_sv_add(sv, (const uint8_t *)g->rpad, g->nr);
            }
        } else {
            for (int64_t n = 0; n < right - 1; n++) {
                ip_sv_add(sv, (const uint8_t *)g->rpad, g->nr);
                ip_sv_add(sv, sep, g->nsep);
            }
            ip_sv_add(sv, (const uint8_t *)g->rpad, g->nr);
        }
        if (sv->oom)
            return -2;
        uint64_t have = sv->cur - at;
        if (have > (uint64_t)size)
            sv->cur = at + (uint64_t)size;
        for (; have < (uint64_t)size; have++)
            ip_sv_add(sv, (const uint8_t *)"", 1);
        ip_sv_end(sv);
    }
    return sv->oom ? -2 : 0;
}

static si_result ngrams_run(opctx *o, const ngram_op *g, const int64_t *widths, int n_widths)
{
    const core_buf *data = &o->data[0]->b, *sp = &o->data[1]->b;
    int64_t nd = core_shape_count(&data->shape), ns = core_shape_count(&sp->shape);
    const int32_t *splits = sp->data;
    if (ns > 0) {
        if (splits[0] != 0)
            return ip_node_fail(o->in, o->node, SI_ERR_ARG, "First split value must be 0, got %d",
                                splits[0]);
        for (int64_t i = 1; i < ns; i++)
            if (splits[i] < splits[i - 1] || splits[i] > nd)
                return ip_node_fail(o->in, o->node, SI_ERR_ARG,
                                    "Invalid split value %d, must be in [%d, %lld]", splits[i],
                                    splits[i - 1], (long long)nd);
        if (splits[ns - 1] != nd)
            return ip_node_fail(o->in, o->node, SI_ERR_ARG,
                                "Last split value must be data size. Expected %lld, got %d",
                                (long long)nd, splits[ns - 1]);
    }
    if (ns == 0 && nd > 0)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG,
                            "data_splits is empty while data has %lld values", (long long)nd);
    ival *osp = ip_val_new(SI_INT32, &sp->shape);
    if (!osp)
        return ip_nomem(o->in);
    int32_t *out_sp = osp->b.data;
    ip_strvec sv = {0};
    int64_t batch = ns - 1;
    si_result st = SI_OK;
    if (nd == 0) {
        for (int64_t i = 0; i < ns; i++)
            out_sp[i] = 0;
    } else {
        out_sp[0] = 0;
        for (int64_t i = 1; i <= batch && st == SI_OK; i++) {
            int64_t len = splits[i] - splits[i - 1], num = 0;
            for (int w = 0; w < n_widths; w++)
                num += ng_count(g, len, widths[w]);
            if (g->preserve && len > 0 && num == 0)
                num = 1;
            if (out_sp[i - 1] + num > INT32_MAX / 2)
                st = ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "too many ngrams");
            else
                out_sp[i] = (int32_t)(out_sp[i - 1] + num);
        }
        for (int64_t i = 0; i < batch && st == SI_OK; i++) {
            int64_t len = splits[i + 1] - splits[i];
            int rc = 0;
            for (int w = 0; w < n_widths && !rc; w++)
                rc = ng_create(g, data, splits[i], ng_count(g, len, widths[w]), widths[w], &sv);
            if (!rc && g->preserve && sv.n == out_sp[i] && len > 0)
                rc = ng_create(g, data, splits[i], 1, len + 2 * g->pad_width, &sv);
            if (rc)
                st = rc == -2 ? ip_nomem(o->in)
                              : ip_node_fail(o->in, o->node, SI_ERR_ARG, "ngram out of its sequence");
        }
    }
    core_shape os = {.rank = 1, .d = {nd == 0 ? 0 : out_sp[batch]}};
    if (st == SI_OK && sv.n != os.d[0])
        st = ip_node_fail(o->in, o->node, SI_ERR_ARG, "internal: %lld ngrams for %lld splits",
                          (long long)sv.n, (long long)os.d[0]);
    ival *ng = NULL;
    if (st == SI_OK && !(ng = ip_sv_finish(&sv, &os)))
        st = ip_nomem(o->in);
    ip_sv_free(&sv);
    if (st != SI_OK) {
        ip_val_unref(osp);
        return st;
    }
    if ((st = ip_set_out(o, 0, ng))) {
        ip_val_unref(osp);
        return st;
    }
    return ip_set_out(o, 1, osp);
}

static si_result string_ngrams(opctx *o)
{
    si_result st = ip_need_inputs(o, 2);
    if (st || (st = need_string(o, 0, "Data")))
        return st;
    if (o->data[0]->b.shape.rank != 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "Data must be a vector, got rank %d",
                            o->data[0]->b.shape.rank);
    if (o->data[1]->b.dtype != SI_INT32)
        return ip_node_fail(o->in, o->node, SI_ERR_ARG, "Data splits must be of datatype int32");
    const io_attr *wa = io_node_attr(o->n, "ngram_widths");
    if (!wa || wa->kind != IO_ATTR_LIST ||
        (wa->list_kind != IO_ATTR_I && wa->list_kind != IO_ATTR_EMPTY && wa->list_kind != IO_ATTR_F))
        return ip_node_fail(o->in, o->node, SI_ERR_FORMAT, "attr 'ngram_widths' is missing");
    int64_t *widths = calloc((size_t)wa->n + 1, sizeof *widths);
    if (!widths)
        return ip_nomem(o->in);
    for (int i = 0; i < wa->n; i++) {
        widths[i] = wa->list_kind == IO_ATTR_F ? (int64_t)wa->lf[i] : wa->li[i];
        if (widths[i] <= 0 || widths[i] > 1000000) {
            long long bad = widths[i];
            free(widths);
            return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED,
                                "ngram width %lld: widths must be in [1, 1000000]", bad);
        }
    }
    char *attr[3] = {NULL, NULL, NULL}, *sep = NULL, *lp = NULL, *rp = NULL, why[200];
    size_t alen[3];
    static const char *const names[3] = {"separator", "left_pad", "right_pad"};
    ngram_op g = {0};
    int bad = 0;
    for (int i = 0; i < 3 && !bad; i++)
        bad = attr_lower(o->n, names[i], &attr[i], &alen[i], why, sizeof why);
    if (!bad) {
        sep = latin1_to_utf8(attr[0] ? attr[0] : "", alen[0], &g.nsep);
        lp = latin1_to_utf8(attr[1] ? attr[1] : "", alen[1], &g.nl);
        rp = latin1_to_utf8(attr[2] ? attr[2] : "", alen[2], &g.nr);
    }
    for (int i = 0; i < 3; i++)
        free(attr[i]);
    if (bad || !sep || !lp || !rp) {
        st = ip_nomem(o->in);
    } else {
        g.sep = sep;
        g.lpad = lp;
        g.rpad = rp;
        g.pad_width = attr_int(o->n, "pad_width", 0);
        g.preserve = ip_attr_bool(o->n, "preserve_short_sequences", 0);
        if (g.pad_width > 1000000)
            st = ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "pad_width %lld is too large",
                              (long long)g.pad_width);
        else
            st = ngrams_run(o, &g, widths, wa->n);
    }
    free(sep);
    free(lp);
    free(rp);
    free(widths);
    return st;
}

static si_result regex_replace(opctx *o)
{
    si_result st = ip_need_inputs(o, 1);
    if (st || (st = need_string(o, 0, "Input")))
        return st;
    char *pat = NULL, *rw = NULL, why[300];
    size_t np = 0, nr = 0;
    rx_prog *r = NULL;
    if (attr_lower(o->n, "pattern", &pat, &np, why, sizeof why) ||
        attr_lower(o->n, "rewrite", &rw, &nr, why, sizeof why) ||
        ip_regex_compile(pat ? pat : "", np, &r, why, sizeof why)) {
        free(pat);
        free(rw);
        return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "%s", why);
    }
    /* an absent rewrite is JavaScript's undefined, which replace() prints */
    const char *rewrite = rw ? rw : "undefined";
    if (!rw)
        nr = strlen(rewrite);
    int global = ip_attr_bool(o->n, "replace_global", 1);
    const core_buf *x = &o->data[0]->b;
    int64_t n = core_shape_count(&x->shape);
    ip_strvec sv = {0};
    for (int64_t i = 0; i < n && st == SI_OK; i++) {
        size_t len;
        const uint8_t *s = ip_str(x, i, &len);
        int rc = ip_regex_replace(r, s, len, rewrite, nr, global, &sv);
        if (rc == -1 || sv.oom)
            st = ip_nomem(o->in);
        else if (rc == -2)
            st = ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED,
                              "the pattern needs too much backtracking on element %lld", (long long)i);
    }
    ip_regex_free(r);
    free(pat);
    free(rw);
    if (st != SI_OK) {
        ip_sv_free(&sv);
        return st;
    }
    ival *v = ip_sv_finish(&sv, &x->shape);
    return v ? ip_set_out(o, 0, v) : ip_nomem(o->in);
}

si_result ip_string_op(opctx *o)
{
    const char *op = o->n->op;
    if (!strcmp(op, "StringToHashBucketFast"))
        return hash_bucket(o);
    if (!strcmp(op, "StringSplit"))
        return string_split(o);
    if (!strcmp(op, "StringNGrams"))
        return string_ngrams(o);
    if (!strcmp(op, "StaticRegexReplace"))
        return regex_replace(o);
    return ip_node_fail(o->in, o->node, SI_ERR_UNSUPPORTED, "not a string op");
}

/* ---- ops that only move elements ---- */

/* Reshape, Concat, Slice ... on strings: the op's own lowering runs on int32
 * stand-ins holding each string's index (the string inputs numbered one
 * after the other), and each output element's index picks its string. Only
 * ops whose outputs are copies of input elements are listed (anything that
 * looks at values would compute on the indices), and of those the ones
 * tfjs-core takes strings for (it refuses them for Transpose, Gather,
 * Reverse, BroadcastTo, Split and Select). */
static const char *const moving_ops[] = {
    "Reshape", "ExpandDims", "Squeeze", "GatherNd", "Slice", "StridedSlice", "ConcatV2", "Concat",
    "Tile", "Pack", "Unpack", "Fill", "IdentityN", NULL};

int ip_moves_elements(const char *op)
{
    for (int i = 0; moving_ops[i]; i++)
        if (!strcmp(op, moving_ops[i]))
            return 1;
    return 0;
}

/* Fill(dims, value): its lowering takes the dtype from attr T, a string here. */
static si_result string_fill(opctx *o)
{
    si_result st = ip_need_inputs(o, 2);
    if (st || (st = need_string(o, 1, "Value")))
        return st;
    const core_buf *d = &o->data[0]->b, *v = &o->data[1]->b;
    int64_t nd = core_shape_count(&d->shape);
    if (d->dtype == IP_STRING || d->shape.rank > 1 || nd > SI_MAX_RANK || core_shape_count(&v->shape) != 1)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "needs a dims vector and a scalar value");
    core_shape s = {.rank = (int)nd};
    int64_t count;
    for (int i = 0; i < s.rank; i++)
        s.d[i] = (int64_t)ip_buf_num(d, i);
    if (core_shape_count_checked(&s, &count) || count > INT32_MAX)
        return ip_node_fail(o->in, o->node, SI_ERR_SHAPE, "bad dims");
    size_t len;
    const uint8_t *p = ip_str(v, 0, &len);
    ip_strvec sv = {0};
    for (int64_t i = 0; i < count; i++) {
        ip_sv_add(&sv, p, len);
        ip_sv_end(&sv);
    }
    ival *r = ip_sv_finish(&sv, &s);
    return r ? ip_set_out(o, 0, r) : ip_nomem(o->in);
}

si_result ip_string_moved(opctx *o)
{
    interp *in = o->in;
    int n = o->n_data;
    if (!strcmp(o->n->op, "Fill"))
        return string_fill(o);
    const core_buf **bufs = calloc((size_t)n + 1, sizeof *bufs);
    core_buf *proxy = calloc((size_t)n + 1, sizeof *proxy);
    int64_t *base = calloc((size_t)n + 1, sizeof *base);
    core_buf *out = calloc((size_t)o->n_outs + 1, sizeof *out);
    si_result st = bufs && proxy && base && out ? SI_OK : ip_nomem(in);
    int64_t total = 0;
    for (int i = 0; st == SI_OK && i < n; i++) {
        const core_buf *b = &o->data[i]->b;
        base[i] = total;
        bufs[i] = b;
        if (b->dtype != IP_STRING)
            continue;
        int64_t c = core_shape_count(&b->shape);
        if (total + c > INT32_MAX) {
            st = ip_node_fail(in, o->node, SI_ERR_SHAPE, "too many strings");
            break;
        }
        proxy[i] = (core_buf){.dtype = SI_INT32, .shape = b->shape,
                              .data = malloc((size_t)(c ? c : 1) * sizeof(int32_t))};
        if (!proxy[i].data) {
            st = ip_nomem(in);
            break;
        }
        for (int64_t j = 0; j < c; j++)
            ((int32_t *)proxy[i].data)[j] = (int32_t)(total + j);
        total += c;
        bufs[i] = &proxy[i];
    }
    if (st == SI_OK)
        st = core_eval_node(in->g, o->node, bufs, n, out, o->n_outs, in->load, in->load_user, in->err);
    for (int k = 0; st == SI_OK && k < o->n_outs; k++) {
        if (!out[k].data)
            continue;
        if (out[k].dtype != SI_INT32) {
            st = ip_node_fail(in, o->node, SI_ERR_UNSUPPORTED, "output %d is not made of its string inputs", k);
            break;
        }
        int64_t c = core_shape_count(&out[k].shape);
        ip_strvec sv = {0};
        for (int64_t j = 0; j < c && st == SI_OK; j++) {
            int32_t v = ((const int32_t *)out[k].data)[j];
            int i = n - 1;
            while (i >= 0 && (o->data[i]->b.dtype != IP_STRING || base[i] > v))
                i--;
            if (v < 0 || v >= total || i < 0) {
                st = ip_node_fail(in, o->node, SI_ERR_UNSUPPORTED, "output %d is not made of its string inputs", k);
                break;
            }
            size_t len;
            const uint8_t *p = ip_str(&o->data[i]->b, v - base[i], &len);
            ip_sv_add(&sv, p, len);
            ip_sv_end(&sv);
        }
        if (st != SI_OK) {
            ip_sv_free(&sv);
            break;
        }
        ival *v = ip_sv_finish(&sv, &out[k].shape);
        st = v ? ip_set_out(o, k, v) : ip_nomem(in);
    }
    for (int i = 0; proxy && i < n; i++)
        free(proxy[i].data);
    for (int k = 0; out && k < o->n_outs; k++)
        free(out[k].data);
    free(out);
    free(base);
    free(proxy);
    free(bufs);
    return st;
}

/* ---- what the graph says before any run ---- */

static int type_is_string(const io_node *n, const char *name)
{
    const io_attr *a = io_node_attr(n, name);
    return a && a->kind == IO_ATTR_TYPE && a->type_name && !strcmp(a->type_name, "DT_STRING");
}

/* Follows pass-through ops back to where the tensor is made (bounded: a loop
 * feeds back through NextIteration). */
static int edge_kind(const core_graph *g, int node, int idx, int want_handle)
{
    for (int hops = 0; hops < 10000; hops++) {
        const io_node *n = &g->m->nodes[node];
        const char *op = n->op;
        if (!strcmp(op, "Const")) {
            int w = g->weight_of[node];
            return !want_handle && ((w >= 0 && g->m->weights[w].dtype == IO_DT_STRING) ||
                                    type_is_string(n, "dtype"));
        }
        if (!strncmp(op, "HashTable", 9) || !strncmp(op, "LookupTableImport", 17) ||
            !strncmp(op, "InitializeTable", 15))
            return want_handle;
        if (want_handle)
            ; /* a handle only passes through the ops below */
        else if (!strcmp(op, "StaticRegexReplace") || !strcmp(op, "StringNGrams"))
            return idx == 0;
        else if (!strcmp(op, "StringSplit"))
            return idx == 1;
        else if (!strncmp(op, "LookupTableFind", 15)) {
            if (io_node_attr(n, "Tout"))
                return type_is_string(n, "Tout");
            int h = n->n_inputs > 0 ? g->edges[node][0].node : -1;
            return h >= 0 && !strncmp(g->m->nodes[h].op, "HashTable", 9) &&
                   type_is_string(&g->m->nodes[h], "value_dtype");
        }
        int pass = !strcmp(op, "Identity") || !strcmp(op, "StopGradient") ||
                   !strcmp(op, "Snapshot") || !strcmp(op, "Enter") || !strcmp(op, "Exit") ||
                   !strcmp(op, "Switch") || !strcmp(op, "NextIteration") || !strcmp(op, "Merge");
        if (!pass || n->n_inputs == 0 || g->edges[node][0].ctrl)
            return !want_handle && strcmp(op, "Merge") &&
                   (type_is_string(n, "T") || type_is_string(n, "Tparams"));
        if (!strcmp(op, "Merge") && idx == 1)
            return 0;
        idx = g->edges[node][0].idx;
        node = g->edges[node][0].node;
    }
    return 0;
}

int core_edge_is_string(const core_graph *g, int node, int idx) { return edge_kind(g, node, idx, 0); }

int core_edge_host_only(const core_graph *g, int node, int idx)
{
    return edge_kind(g, node, idx, 0) || edge_kind(g, node, idx, 1);
}

si_result core_string_check_node(const core_graph *g, int k, si_error *err)
{
    const io_node *n = &g->m->nodes[k];
    if (strcmp(n->op, "StaticRegexReplace"))
        return SI_OK;
    char why[300], *v = NULL;
    size_t len;
    if (attr_lower(n, "pattern", &v, &len, why, sizeof why))
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    rx_prog *r = NULL;
    int bad = ip_regex_compile(v ? v : "", len, &r, why, sizeof why);
    ip_regex_free(r);
    free(v);
    if (bad)
        return base_fail(err, SI_ERR_UNSUPPORTED,
                         "%s: node '%s' (StaticRegexReplace): pattern not supported: %s",
                         g->m->json_path, n->name, why);
    return SI_OK;
}
