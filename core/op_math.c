/* Normalization ops lowered onto the elementwise kernels (no kernels of
 * their own; the host references are those of CK_UNARY / CK_BINARY in
 * op_elementwise.c). */
#include <string.h>
#include "ops.h"

int core_emit_binary(lower_ctx *c, int op, int a, int b, si_error *err, int *out_t);

static int emit_unary(lower_ctx *c, int op, int x)
{
    const core_tensor *t = lc_tensor(c, x);
    ck_step s = {.kind = CK_UNARY, .n_in = 1};
    s.in[0] = x;
    s.u.unary = (ck_unary_p){.op = op, .count = (int32_t)core_shape_count(&t->shape),
                             .in_dtype = t->dtype, .out_dtype = t->dtype};
    s.out = lc_new_tensor(c, t->dtype, &t->shape);
    lc_emit(c, &s);
    return s.out;
}

/* FusedBatchNorm, V2, V3 in inference form, as tfjs runs them (its converter
 * maps all three to tf.batchNorm(x, mean, variance, offset, scale, epsilon):
 * is_training and data_format are not read, the statistics broadcast along
 * the last axis, and only output 0 exists):
 *   y = (x - mean) * (scale / sqrt(variance + epsilon)) + offset
 * With constant statistics (the usual case) everything but the three steps
 * on x folds on the host. */
static si_result lower_fused_batch_norm(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 5)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x, scale, offset, mean and variance");
    for (int i = 0; i < 5; i++)
        if (lc_tensor(c, lc_in(c, i))->dtype != SI_FLOAT32)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "input %d is not float32", i);
    float eps = (float)lc_attr_float(c, "epsilon", 0.001);
    core_shape scalar = {0};
    int e = lc_new_const(c, SI_FLOAT32, &scalar, &eps);
    int x = lc_in(c, 0), scale = lc_in(c, 1), offset = lc_in(c, 2), mean = lc_in(c, 3),
        var = lc_in(c, 4);
    int ve, k, xc, xk, y;
    si_result st;
    if ((st = core_emit_binary(c, CK_B_ADD, var, e, err, &ve)) != SI_OK)
        return st;
    int inv = emit_unary(c, CK_U_RSQRT, ve);
    if ((st = core_emit_binary(c, CK_B_MUL, scale, inv, err, &k)) != SI_OK ||
        (st = core_emit_binary(c, CK_B_SUB, x, mean, err, &xc)) != SI_OK ||
        (st = core_emit_binary(c, CK_B_MUL, xc, k, err, &xk)) != SI_OK ||
        (st = core_emit_binary(c, CK_B_ADD, xk, offset, err, &y)) != SI_OK)
        return st;
    if (!core_shape_eq(&lc_tensor(c, y)->shape, &lc_tensor(c, x)->shape))
        return lc_fail(c, err, SI_ERR_SHAPE, "the statistics do not broadcast along x's last axis");
    lc_set_output(c, 0, y);
    return SI_OK;
}

const core_op_def core_ops_math[] = {
    {"FusedBatchNorm", lower_fused_batch_norm},
    {"FusedBatchNormV2", lower_fused_batch_norm},
    {"FusedBatchNormV3", lower_fused_batch_norm},
    {NULL, NULL},
};
