/* Creation ops whose output is known before the run: built on the host as
 * constants (no kernels; the GPU sees them as uploaded data). */
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

const core_op_def core_ops_creation[] = {
    {"Zeros", lower_fill_const},
    {"Ones", lower_fill_const},
    {NULL, NULL},
};
