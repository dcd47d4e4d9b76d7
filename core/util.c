/* Shapes, errors, the step dispatcher and helpers shared by op families. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ops.h"


int core_shape_count_checked(const core_shape *s, int64_t *count)
{
    int64_t n = 1, bytes;
    int zero = 0;
    for (int i = 0; i < s->rank; i++) {
        if (s->d[i] < 0)
            return -1;
        /* a zero dimension makes the whole count 0, however large the others */
        zero |= s->d[i] == 0;
        if (!zero && __builtin_mul_overflow(n, s->d[i], &n))
            return -1;
    }
    if (zero)
        n = 0;
    if (__builtin_mul_overflow(n, (int64_t)CORE_ELEM, &bytes))
        return -1;
    *count = n;
    return 0;
}

int64_t core_shape_count(const core_shape *s)
{
    /* Signed overflow is undefined behaviour, and shapes come from files that
     * strangers write: the product saturates instead, so a count too large for
     * memory stays too large for memory (allocation fails, a size check refuses
     * it) rather than wrapping to a small or negative number. */
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        int neg = (n < 0) != (s->d[i] < 0);
        if (__builtin_mul_overflow(n, s->d[i], &n))
            return neg ? INT64_MIN : INT64_MAX;
    }
    return n;
}

int core_shape_eq(const core_shape *a, const core_shape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

const char *core_shape_str(const core_shape *s, char *buf, size_t n)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int i = 0; i < s->rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)s->d[i]);
    if (k < n)
        snprintf(buf + k, n - k, "]");
    return buf;
}

void core_strides(const core_shape *s, int64_t *stride)
{
    int64_t st = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        stride[i] = st;
        if (__builtin_mul_overflow(st, s->d[i], &st))
            st = INT64_MAX; /* as core_shape_count: saturate, never wrap */
    }
}

int core_broadcast_shape(const core_shape *a, const core_shape *b, core_shape *out)
{
    int r = a->rank > b->rank ? a->rank : b->rank;
    out->rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1;
        out->d[i] = da == 1 ? db : da;
    }
    return 0;
}

si_result core_conv_out(const lower_ctx *c, si_error *err, int64_t in, int64_t k, int64_t stride,
                        int64_t dil, const char *padding, const int64_t *explicit_pad,
                        int64_t *out, int64_t *pad_before)
{
    int64_t ek = (k - 1) * dil + 1;
    if (stride < 1 || dil < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "bad strides or dilations");
    if (!strcmp(padding, "VALID")) {
        *out = in >= ek ? (in - ek) / stride + 1 : 0;
        *pad_before = 0;
    } else if (!strcmp(padding, "SAME")) {
        *out = (in + stride - 1) / stride;
        int64_t total = (*out - 1) * stride + ek - in;
        if (total < 0)
            total = 0;
        *pad_before = total / 2;
    } else if (!strcmp(padding, "EXPLICIT")) {
        if (!explicit_pad)
            return lc_fail(c, err, SI_ERR_FORMAT, "EXPLICIT padding without explicit_paddings");
        int64_t padded = in + explicit_pad[0] + explicit_pad[1];
        *out = padded >= ek ? (padded - ek) / stride + 1 : 0;
        *pad_before = explicit_pad[0];
    } else {
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "padding '%s'", padding);
    }
    if (*out <= 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "window larger than the input");
    return SI_OK;
}

int core_storage(const core_program *p, int t)
{
    while (t >= 0 && p->tensors[t].alias_of >= 0)
        t = p->tensors[t].alias_of;
    return t;
}

const char *ck_kind_name(ck_kind k)
{
    static const char *names[CK__COUNT] = {
        "copy", "pad", "unary", "binary", "addn", "conv2d", "dwconv2d", "deconv2d", "matmul",
        "pool", "reduce", "softmax", "argmax", "resize", "gather", "gathernd", "dequant", "topk", "select",
        "crop_boxes", "crop_resize"};
    return (unsigned)k < CK__COUNT ? names[k] : "?";
}

int ck_runs_on_host(ck_kind k) { return k == CK_TOPK || k == CK_CROP_BOXES; }

uint64_t ck_loop_iterations(const ck_step *s)
{
    const ck_conv_p *c = &s->u.conv;
    switch (s->kind) {
    case CK_CONV2D:
    case CK_DECONV2D: return (uint64_t)c->k_h * (uint64_t)c->k_w * (uint64_t)c->in_c;
    case CK_DWCONV2D: return (uint64_t)c->k_h * (uint64_t)c->k_w;
    case CK_MATMUL: return (uint64_t)s->u.matmul.k;
    case CK_POOL: return (uint64_t)s->u.pool.k_h * (uint64_t)s->u.pool.k_w;
    case CK_REDUCE: return (uint64_t)s->u.reduce.n;
    case CK_SOFTMAX: return (uint64_t)s->u.softmax.n;
    case CK_ARGMAX: return (uint64_t)s->u.argmax.n;
    default: return 1;
    }
}

float ck_apply_act(int act, float x, float alpha)
{
    switch (act) {
    case CK_ACT_RELU: return x > 0.f ? x : 0.f;
    case CK_ACT_RELU6: return x < 0.f ? 0.f : (x > 6.f ? 6.f : x);
    case CK_ACT_PRELU:
    case CK_ACT_LEAKYRELU: return x < 0.f ? alpha * x : x;
    case CK_ACT_ELU: return x >= 0.f ? x : expf(x) - 1.f;
    case CK_ACT_SIGMOID: return 1.f / (1.f + expf(-x));
    case CK_ACT_TANH: return tanhf(x);
    default: return x;
    }
}

typedef void (*host_fn)(const ck_step *, const core_buf *const *, core_buf *);

si_result ck_host_run(const ck_step *s, const core_buf *const *ins, core_buf *out, si_error *err)
{
    static const host_fn fns[CK__COUNT] = {
        [CK_COPY] = ck_host_copy,         [CK_PAD] = ck_host_pad,
        [CK_UNARY] = ck_host_unary,       [CK_BINARY] = ck_host_binary,
        [CK_ADDN] = ck_host_addn,         [CK_CONV2D] = ck_host_conv2d,
        [CK_DWCONV2D] = ck_host_dwconv2d, [CK_DECONV2D] = ck_host_deconv2d,
        [CK_MATMUL] = ck_host_matmul,     [CK_POOL] = ck_host_pool,
        [CK_REDUCE] = ck_host_reduce,     [CK_SOFTMAX] = ck_host_softmax,
        [CK_ARGMAX] = ck_host_argmax,     [CK_RESIZE] = ck_host_resize,
        [CK_GATHER] = ck_host_gather,     [CK_GATHERND] = ck_host_gathernd,
        [CK_DEQUANT] = ck_host_dequant,   [CK_TOPK] = ck_host_topk,
        [CK_SELECT] = ck_host_select,
        [CK_CROP_BOXES] = ck_host_crop_boxes, [CK_CROP_RESIZE] = ck_host_crop_resize,
    };
    if ((unsigned)s->kind >= CK__COUNT || !fns[s->kind])
        return base_fail(err, SI_ERR_UNSUPPORTED, "no host kernel for %s", ck_kind_name(s->kind));
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0 && !ins[i])
            return base_fail(err, SI_ERR_ARG, "%s: input %d missing", ck_kind_name(s->kind), i);
    fns[s->kind](s, ins, out);
    return SI_OK;
}
