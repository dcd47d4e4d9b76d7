/* Transform ops (issue 15): EnsureShape and BroadcastArgs on the host;
 * Reverse and ReverseV2 lowered onto CK_COPY with
 * negative input strides (the copy kernel and its host reference take signed
 * strides; the copy tiling leaves such a step whole). */
#include <stdint.h>
#include <string.h>
#include "ops.h"

/* Reverse (dims: one bool per axis) and ReverseV2 (axis: a list of axes, any
 * sign): tfjs-converter reads both as constants; tfjs reverse(x, axis). */
static si_result lower_reverse(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x and the axes");
    int x = lc_in(c, 0);
    const core_tensor *xt = lc_tensor(c, x);
    core_shape s = xt->shape;
    si_dtype dt = xt->dtype;
    int64_t v[SI_MAX_RANK + 1];
    int n = lc_value_ints(c, 1, v, SI_MAX_RANK + 1, err);
    if (n == -2)
        return err->status;
    if (n < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "the axes must be known before the run");
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "%d axes (at most %d)", n, SI_MAX_RANK);
    int flip[SI_MAX_RANK] = {0};
    int v1 = !strcmp(lc_node(c)->op, "Reverse");
    for (int i = 0; i < n; i++) {
        if (v1) {
            if (v[i] && i < s.rank)
                flip[i] = 1;
            continue;
        }
        if (v[i] < -s.rank || v[i] >= s.rank)
            return lc_fail(c, err, SI_ERR_SHAPE, "axis %lld is out of range for rank %d",
                           (long long)v[i], s.rank);
        flip[v[i] < 0 ? v[i] + s.rank : v[i]] = 1;
    }
    int64_t count = core_shape_count(&s);
    if (count > INT32_MAX)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input too large");
    /* Empty: nothing to move; the output is x itself. */
    int out = count > 0 ? lc_new_tensor(c, dt, &s) : lc_new_alias(c, x, &s);
    if (out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    if (count > 0) {
        ck_step st = {.kind = CK_COPY, .n_in = 1, .in = {x}, .out = out};
        ck_copy_p *p = &st.u.copy;
        p->rank = s.rank;
        int64_t stride = 1;
        for (int d = s.rank - 1; d >= 0; d--) {
            p->dim[d] = (int32_t)s.d[d];
            p->out_stride[d] = (int32_t)stride;
            p->in_stride[d] = flip[d] ? -(int32_t)stride : (int32_t)stride;
            if (flip[d])
                p->in_offset += (int32_t)(stride * (s.d[d] - 1));
            stride *= s.d[d];
        }
        if (s.rank == 0) {
            p->rank = 1;
            p->dim[0] = 1;
            p->in_stride[0] = p->out_stride[0] = 1;
        }
        lc_emit(c, &st);
    }
    lc_set_output(c, 0, out);
    return SI_OK;
}

/* EnsureShape (tfjs ensureShape): the shape input, read as a constant list,
 * must equal x's shape exactly (tfjs's wildcard is null, which a graph cannot
 * hold, so -1 fails as in tfjs); the output is x. */
static si_result lower_ensure_shape(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x and the shape");
    int x = lc_in(c, 0);
    core_shape s = lc_tensor(c, x)->shape;
    int64_t v[SI_MAX_RANK + 1];
    int n = lc_value_ints(c, 1, v, SI_MAX_RANK + 1, err);
    if (n == -2)
        return err->status;
    if (n < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "the shape must be known before the run");
    int same = n == s.rank;
    for (int i = 0; same && i < n; i++)
        same = v[i] == s.d[i];
    if (!same)
        return lc_fail(c, err, SI_ERR_SHAPE, "x's shape is not the expected shape");
    int a = lc_new_alias(c, x, &s);
    if (a < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, a);
    return SI_OK;
}

/* BroadcastArgs (tfjs assertAndGetBroadcastShape): both shapes constant,
 * aligned at the right; a 1 takes the other's size, unequal others fail. */
static si_result lower_broadcast_args(lower_ctx *c, si_error *err)
{
    enum { MAXN = 64 };
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs s0 and s1");
    int64_t a[MAXN + 1], b[MAXN + 1];
    int na = lc_value_ints(c, 0, a, MAXN + 1, err);
    if (na == -2)
        return err->status;
    int nb = lc_value_ints(c, 1, b, MAXN + 1, err);
    if (nb == -2)
        return err->status;
    if (na < 0 || nb < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "the shapes must be known before the run");
    if (na > MAXN || nb > MAXN)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "a shape of more than %d values", MAXN);
    int n = na > nb ? na : nb;
    int32_t r[MAXN];
    for (int i = 0; i < n; i++) {
        int64_t x = i < na ? a[na - 1 - i] : 1, y = i < nb ? b[nb - 1 - i] : 1;
        if (x != 1 && y != 1 && x != y)
            return lc_fail(c, err, SI_ERR_SHAPE, "the shapes do not broadcast");
        int64_t d = x == 1 ? y : x;
        if (d < INT32_MIN || d > INT32_MAX)
            return lc_fail(c, err, SI_ERR_SHAPE, "a size out of int32 range");
        r[n - 1 - i] = (int32_t)d;
    }
    core_shape s = {.rank = 1, .d = {n}};
    int t = lc_new_const(c, SI_INT32, &s, r);
    if (t < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, t);
    return SI_OK;
}

const core_op_def core_ops_transform[] = {
    {"EnsureShape", lower_ensure_shape},
    {"BroadcastArgs", lower_broadcast_args},
    {"Reverse", lower_reverse},
    {"ReverseV2", lower_reverse},
    {NULL, NULL},
};
