/* Shapes, errors and helpers shared by op families (the step tables: core/step.c). */
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

size_t core_elem_bytes(si_dtype dt) { return dt == CORE_COMPLEX64 ? 2 * CORE_ELEM : CORE_ELEM; }

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
