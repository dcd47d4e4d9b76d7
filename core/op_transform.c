/* Transform ops (issue 15): Reverse and ReverseV2 lowered onto CK_COPY with
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

const core_op_def core_ops_transform[] = {
    {"Reverse", lower_reverse},
    {"ReverseV2", lower_reverse},
    {NULL, NULL},
};
