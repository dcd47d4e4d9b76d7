/* Creation ops: those whose output is known before the run built on the host
 * as constants (no kernels; the GPU sees them as uploaded data), and OneHot
 * lowered onto CK_BINARY / CK_SELECT (op_elementwise.c holds their host
 * references). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"

/* Zeros and Ones (tfjs: tf.zeros / tf.ones(shape, T)): shape is input 0, a
 * constant list of sizes; T the dtype. */
static si_result lower_fill_const(lower_ctx *c, si_error *err)
{
    int ones = !strcmp(lc_node(c)->op, "Ones");
    int64_t dims[SI_MAX_RANK + 1];
    if (lc_n_inputs(c) < 1)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs a shape");
    int n = lc_value_ints(c, 0, dims, SI_MAX_RANK + 1, err);
    if (n == -2)
        return err->status;
    if (n < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "the shape must be known before the run");
    if (n > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "rank %d (at most %d)", n, SI_MAX_RANK);
    int64_t dt = lc_attr_int(c, "T", SI_FLOAT32);
    if (dt < SI_FLOAT32 || dt > SI_BOOL)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "dtype attr T is not float32, int32 or bool");
    core_shape s = {.rank = n};
    int64_t count = 1;
    for (int i = 0; i < n; i++) {
        if (dims[i] < 0 || dims[i] > (1 << 30) || (count *= dims[i]) > (1 << 28))
            return lc_fail(c, err, SI_ERR_SHAPE, "shape dimension %d (%lld) is out of range", i,
                           (long long)dims[i]);
        s.d[i] = dims[i];
    }
    void *data = calloc((size_t)(count ? count : 1), CORE_ELEM);
    if (!data)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    for (int64_t i = 0; ones && i < count; i++) {
        if (dt == SI_FLOAT32)
            ((float *)data)[i] = 1.f;
        else
            ((int32_t *)data)[i] = 1;
    }
    int t = lc_new_const(c, (si_dtype)dt, &s, data);
    free(data);
    lc_set_output(c, 0, t);
    return SI_OK;
}

/* First value of a constant input, as tfjs's converter reads a 'number'
 * parameter (dataSync()[0]). */
static si_result const_number(lower_ctx *c, si_error *err, int i, const char *what, double *v)
{
    si_result st;
    const core_buf *b = lc_value(c, i, &st, err);
    if (st != SI_OK)
        return st;
    if (!b)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "%s must be known before the run", what);
    if (core_shape_count(&b->shape) < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "%s is empty", what);
    *v = b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[0]
                                : (double)((const int32_t *)b->data)[0];
    return SI_OK;
}

/* LinSpace (tfjs-backend-cpu linSpaceImpl): float32 whatever T says; step in
 * float64, each value the float32 sum of the one before and the step, so the
 * last one need not be stop exactly. */
static si_result lower_linspace(lower_ctx *c, si_error *err)
{
    double start, stop, num;
    si_result st;
    if (lc_n_inputs(c) < 3)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs start, stop and num");
    if ((st = const_number(c, err, 0, "start", &start)) != SI_OK ||
        (st = const_number(c, err, 1, "stop", &stop)) != SI_OK ||
        (st = const_number(c, err, 2, "num", &num)) != SI_OK)
        return st;
    if (!(num >= 1) || num > (1 << 28))
        return lc_fail(c, err, SI_ERR_SHAPE, "num is %g (tfjs: at least 1)", num);
    int64_t n = (int64_t)num;
    float *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    double step = (stop - start) / (double)(n - 1);
    v[0] = (float)start;
    for (int64_t i = 1; i < n; i++)
        v[i] = (float)((double)v[i - 1] + step);
    core_shape s = {.rank = 1, .d = {n}};
    int t = lc_new_const(c, SI_FLOAT32, &s, v);
    free(v);
    if (t < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, t);
    return SI_OK;
}

int core_emit_binary(lower_ctx *c, int op, int a, int b, si_error *err, int *out_t);

/* OneHot (tfjs-backend-cpu OneHot.js): [...indices, depth] of off_value, with
 * on_value where the last index equals the index (out of range: none). tfjs's
 * executor drops the axis attr (always the last axis) and defaults T to int32;
 * depth, on_value and off_value are numbers. Lowered as indices == range(depth)
 * selecting on_value or off_value. */
static si_result lower_one_hot(lower_ctx *c, si_error *err)
{
    double depth, on = 1, off = 0;
    si_result st;
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs indices and depth");
    if ((st = const_number(c, err, 1, "depth", &depth)) != SI_OK ||
        (lc_n_inputs(c) > 2 && (st = const_number(c, err, 2, "on_value", &on)) != SI_OK) ||
        (lc_n_inputs(c) > 3 && (st = const_number(c, err, 3, "off_value", &off)) != SI_OK))
        return st;
    const core_tensor *ind = lc_tensor(c, lc_in(c, 0));
    if (ind->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "indices must be int32");
    if (!(depth >= 2) || depth > (1 << 24))
        return lc_fail(c, err, SI_ERR_SHAPE, "depth is %g (tfjs: at least 2)", depth);
    int64_t dt = lc_attr_int(c, "T", SI_INT32);
    if (dt != SI_FLOAT32 && dt != SI_INT32)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "dtype attr T is not float32 or int32");
    if (ind->shape.rank >= SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_SHAPE, "rank too large");
    int32_t d = (int32_t)depth;
    core_shape os = ind->shape, cs = ind->shape, rs = {.rank = 1, .d = {d}}, none = {0};
    os.d[os.rank++] = d;
    cs.d[cs.rank++] = 1;
    int64_t cnt = core_shape_count(&os);
    if (cnt > INT32_MAX)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
    if (cnt == 0) {
        static const int32_t nothing = 0;
        int t = lc_new_const(c, (si_dtype)dt, &os, &nothing);
        if (t < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    int32_t *range = malloc((size_t)d * sizeof *range);
    if (!range)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    for (int32_t i = 0; i < d; i++)
        range[i] = i;
    int r = lc_new_const(c, SI_INT32, &rs, range);
    free(range);
    union { float f; int32_t i; } von, voff;
    if (dt == SI_FLOAT32) {
        von.f = (float)on;
        voff.f = (float)off;
    } else {
        von.i = (int32_t)on;
        voff.i = (int32_t)off;
    }
    int a = lc_new_const(c, (si_dtype)dt, &none, &von), b = lc_new_const(c, (si_dtype)dt, &none, &voff);
    int col = lc_new_alias(c, lc_in(c, 0), &cs), eq;
    if (r < 0 || a < 0 || b < 0 || col < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    if ((st = core_emit_binary(c, CK_B_EQUAL, col, r, err, &eq)) != SI_OK)
        return st;
    ck_step s = {.kind = CK_SELECT, .n_in = 3, .in = {eq, a, b}};
    s.u.select.rank = os.rank;
    s.u.select.count = (int32_t)cnt;
    int64_t str[SI_MAX_RANK];
    core_strides(&os, str);
    for (int i = 0; i < os.rank; i++) {
        s.u.select.out_dim[i] = (int32_t)os.d[i];
        s.u.select.c_stride[i] = (int32_t)str[i];
    }
    s.out = lc_new_tensor(c, (si_dtype)dt, &os);
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

const core_op_def core_ops_creation[] = {
    {"LinSpace", lower_linspace},
    {"OneHot", lower_one_hot},
    {"Zeros", lower_fill_const},
    {"Ones", lower_fill_const},
    {NULL, NULL},
};
