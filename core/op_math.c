/* Matrix and normalization ops lowered onto kernels other families own (no
 * kernels of their own): FusedBatchNorm* onto CK_UNARY / CK_BINARY
 * (op_elementwise.c), Einsum onto CK_COPY transposes, CK_REDUCE sums and a
 * batched CK_MATMUL (op_shape.c, op_pool_reduce.c, op_conv.c hold their host
 * references). */
#include <stdio.h>
#include <stdlib.h>
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

/* ---- Einsum ----
 * tfjs-core's einsum (backends/einsum_util.js) takes one or two operands, an
 * equation with exactly one arrow, no ellipsis and no label twice in a term;
 * whitespace is ignored; sizes of a label must agree exactly (no broadcast).
 * Its kernels multiply every operand broadcast to all labels and sum the
 * summed labels one at a time; here the same sum is a transpose, a sum over
 * labels one operand holds alone, and one batched matmul over the labels both
 * hold: the same products and sums in another order (float32: well within
 * DESIGN's tolerance; int32 exact while sums stay below 2^24). */

#define EIN_LABELS (2 * SI_MAX_RANK)

typedef struct {
    int n_terms;
    char term[2][SI_MAX_RANK + 1];
    char out[SI_MAX_RANK + 1];
} ein_eq;

static int has_label(const char *s, char l) { return l && strchr(s, l) != NULL; }

static void add_label(char *s, char l)
{
    size_t n = strlen(s);
    s[n] = l;
    s[n + 1] = 0;
}

static int repeats(const char *s)
{
    for (const char *a = s; *a; a++)
        if (strchr(a + 1, *a))
            return 1;
    return 0;
}

/* tfjs's compute path (getEinsumComputePath) brings an operand in at the step
 * of the first summed label it holds, but permutes it as if no label had been
 * summed yet, and never brings in one that holds no summed label: 'ij,i->i'
 * ignores its second operand, 'ij,k->ik' gives shape [2,1]. It is right when
 * nothing is summed or every non-scalar operand holds the first summed label
 * (output labels first, then input labels as they appear, are its order). */
static char tfjs_misplaced(const ein_eq *e, const char *ins)
{
    char first = 0;
    for (const char *p = ins; *p && !first; p++)
        if (*p != ',' && !has_label(e->out, *p))
            first = *p;
    for (int t = 0; first && t < e->n_terms; t++)
        if (e->term[t][0] && !has_label(e->term[t], first))
            return first;
    return 0;
}

static si_result parse_einsum(lower_ctx *c, si_error *err, ein_eq *e)
{
    const char *eq = lc_attr_str(c, "equation", NULL);
    char buf[64], ins[64];
    int n = 0;
    if (!eq)
        return lc_fail(c, err, SI_ERR_FORMAT, "no equation attr");
    for (const char *p = eq; *p; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != '\v' && *p != '\f') {
            if (n == (int)sizeof buf - 1)
                return lc_fail(c, err, SI_ERR_UNSUPPORTED, "equation too long");
            buf[n++] = *p;
        }
    buf[n] = 0;
    const char *arrow = strstr(buf, "->");
    if (!arrow || strstr(arrow + 2, "->"))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "equation '%s' needs exactly one '->' (tfjs)", eq);
    if (strchr(buf, '.'))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "equation '%s': tfjs has no ellipsis ('...')", eq);
    snprintf(ins, sizeof ins, "%.*s", (int)(arrow - buf), buf);
    const char *comma = strchr(ins, ',');
    e->n_terms = comma ? 2 : 1;
    if (comma && strchr(comma + 1, ','))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "equation '%s': tfjs takes at most 2 operands", eq);
    if (e->n_terms != lc_n_inputs(c))
        return lc_fail(c, err, SI_ERR_FORMAT, "equation '%s' has %d operands, the node %d", eq,
                       e->n_terms, lc_n_inputs(c));
    size_t l0 = comma ? (size_t)(comma - ins) : strlen(ins), l1 = comma ? strlen(comma + 1) : 0;
    if (l0 > SI_MAX_RANK || l1 > SI_MAX_RANK || strlen(arrow + 2) > SI_MAX_RANK ||
        strchr(arrow + 2, '-') || strchr(arrow + 2, '>') || strchr(arrow + 2, ','))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "equation '%s': bad or too many labels", eq);
    snprintf(e->term[0], sizeof e->term[0], "%.*s", (int)l0, ins);
    snprintf(e->term[1], sizeof e->term[1], "%s", comma ? comma + 1 : "");
    snprintf(e->out, sizeof e->out, "%s", arrow + 2);
    for (int t = 0; t < e->n_terms; t++) {
        if (repeats(e->term[t]))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                           "equation '%s': a label twice in one operand (tfjs refuses it)", eq);
        if ((int)strlen(e->term[t]) != lc_tensor(c, lc_in(c, t))->shape.rank)
            return lc_fail(c, err, SI_ERR_SHAPE, "equation '%s': operand %d has rank %d", eq, t,
                           lc_tensor(c, lc_in(c, t))->shape.rank);
    }
    for (const char *p = e->out; *p; p++)
        if (!has_label(e->term[0], *p) && !has_label(e->term[1], *p))
            return lc_fail(c, err, SI_ERR_SHAPE, "equation '%s': output label '%c' is in no operand",
                           eq, *p);
    if (repeats(e->out))
        return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                       "equation '%s': an output label twice (tfjs gives garbage for it)", eq);
    char bad = tfjs_misplaced(e, ins);
    if (bad)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                       "equation '%s': TensorFlow.js 4.22 computes it wrongly (an operand without "
                       "'%c', the first summed label, is left out or misplaced); refused rather "
                       "than answer differently", eq, bad);
    return SI_OK;
}

/* x (labels `have`) with its axes in the order of `want` (the same labels). */
static int ein_permute(lower_ctx *c, int x, const char *have, const char *want)
{
    const core_shape *xs = &lc_tensor(c, x)->shape;
    int r = xs->rank, identity = 1;
    int perm[SI_MAX_RANK];
    for (int i = 0; i < r; i++) {
        perm[i] = (int)(strchr(have, want[i]) - have);
        identity &= perm[i] == i;
    }
    if (identity)
        return x;
    int64_t st[SI_MAX_RANK], ost[SI_MAX_RANK];
    core_shape os = {.rank = r};
    for (int i = 0; i < r; i++)
        os.d[i] = xs->d[perm[i]];
    core_strides(xs, st);
    core_strides(&os, ost);
    ck_step s = {.kind = CK_COPY, .n_in = 1, .in = {x}};
    s.u.copy.rank = r;
    for (int i = 0; i < r; i++) {
        s.u.copy.dim[i] = (int32_t)os.d[i];
        s.u.copy.in_stride[i] = (int32_t)st[perm[i]];
        s.u.copy.out_stride[i] = (int32_t)ost[i];
    }
    s.out = lc_new_tensor(c, lc_tensor(c, x)->dtype, &os);
    lc_emit(c, &s);
    return s.out;
}

/* x (labels `have`) summed over the labels not in `keep`; *kept gets the
 * labels left, in x's order. */
static int ein_sum(lower_ctx *c, int x, const char *have, const char *keep, char *kept)
{
    const core_shape *xs = &lc_tensor(c, x)->shape;
    char order[SI_MAX_RANK + 1];
    int nk = 0, no = 0;
    int64_t outer = 1, n = 1;
    core_shape os = {0};
    for (int i = 0; have[i]; i++)
        if (has_label(keep, have[i])) {
            kept[nk++] = have[i];
            os.d[os.rank++] = xs->d[i];
            outer *= xs->d[i];
        }
    kept[nk] = 0;
    if (nk == xs->rank)
        return x;
    memcpy(order, kept, (size_t)nk);
    no = nk;
    for (int i = 0; have[i]; i++)
        if (!has_label(keep, have[i])) {
            order[no++] = have[i];
            n *= xs->d[i];
        }
    order[no] = 0;
    int t = ein_permute(c, x, have, order);
    si_dtype dt = lc_tensor(c, x)->dtype;
    ck_step s = {.kind = CK_REDUCE, .n_in = 1, .in = {t}};
    s.u.reduce = (ck_reduce_p){.op = CK_R_SUM, .outer = (int32_t)outer, .n = (int32_t)n,
                               .inner = 1, .dtype = dt};
    s.out = lc_new_tensor(c, dt, &os);
    lc_emit(c, &s);
    return s.out;
}

static int64_t ein_count(const char *labels, const int64_t *size)
{
    int64_t n = 1;
    for (; *labels; labels++)
        n *= size[(unsigned char)*labels];
    return n;
}

/* Two operands: sums over what each holds alone, then batch labels (in both
 * and the output), free labels of a, contracted labels (in both, not the
 * output), free labels of b, as one [batch, m, k] x [batch, k, n] matmul. */
static int ein_pair(lower_ctx *c, const ein_eq *e, const int *ops, const int64_t *size,
                    char *labels)
{
    char la[SI_MAX_RANK + 1], lb[SI_MAX_RANK + 1], keep[2 * SI_MAX_RANK + 2];
    snprintf(keep, sizeof keep, "%s%s", e->out, e->term[1]);
    int a = ein_sum(c, ops[0], e->term[0], keep, la);
    snprintf(keep, sizeof keep, "%s%s", e->out, la);
    int b = ein_sum(c, ops[1], e->term[1], keep, lb);
    char bt[SI_MAX_RANK + 1] = "", m[SI_MAX_RANK + 1] = "", n[SI_MAX_RANK + 1] = "",
         k[SI_MAX_RANK + 1] = "", wa[SI_MAX_RANK + 1], wb[SI_MAX_RANK + 1];
    for (const char *p = e->out; *p; p++)
        add_label(has_label(la, *p) ? (has_label(lb, *p) ? bt : m) : n, *p);
    for (const char *p = la; *p; p++)
        if (has_label(lb, *p) && !has_label(e->out, *p))
            add_label(k, *p);
    int64_t nb = ein_count(bt, size), nm = ein_count(m, size), nn = ein_count(n, size),
            nk = ein_count(k, size);
    snprintf(wa, sizeof wa, "%s%s%s", bt, m, k);
    a = ein_permute(c, a, la, wa);
    /* b as [batch, n, k] read transposed when that is already its order */
    snprintf(wb, sizeof wb, "%s%s%s", bt, n, k);
    int trans_b = !strcmp(wb, lb);
    if (!trans_b) {
        snprintf(wb, sizeof wb, "%s%s%s", bt, k, n);
        b = ein_permute(c, b, lb, wb);
    }
    core_shape s3 = {.rank = 3, .d = {nb, nm, nk}};
    a = lc_new_alias(c, a, &s3);
    s3.d[1] = trans_b ? nn : nk;
    s3.d[2] = trans_b ? nk : nn;
    b = lc_new_alias(c, b, &s3);
    si_dtype dt = lc_tensor(c, a)->dtype;
    ck_step s = {.kind = CK_MATMUL, .n_in = 2, .in = {a, b, -1, -1}};
    s.u.matmul = (ck_matmul_p){.batch = (int32_t)nb, .m = (int32_t)nm, .n = (int32_t)nn,
                               .k = (int32_t)nk, .trans_b = trans_b,
                               .a_batch_stride = (int32_t)(nm * nk),
                               .b_batch_stride = (int32_t)(nk * nn)};
    core_shape os = {0};
    snprintf(labels, SI_MAX_RANK + 1, "%s%s%s", bt, m, n);
    for (const char *p = labels; *p; p++)
        os.d[os.rank++] = size[(unsigned char)*p];
    core_shape flat = {.rank = 3, .d = {nb, nm, nn}};
    s.out = lc_new_tensor(c, dt, &flat);
    lc_emit(c, &s);
    return lc_new_alias(c, s.out, &os);
}

static si_result lower_einsum(lower_ctx *c, si_error *err)
{
    ein_eq e;
    si_result st = parse_einsum(c, err, &e);
    if (st != SI_OK)
        return st;
    int64_t size[256];
    for (int i = 0; i < 256; i++)
        size[i] = -1;
    char sb[96];
    int n_float = 0;
    for (int t = 0; t < e.n_terms; t++) {
        const core_tensor *x = lc_tensor(c, lc_in(c, t));
        if (x->dtype == SI_BOOL)
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "bool operands");
        n_float += x->dtype == SI_FLOAT32;
        if (!(core_shape_count(&x->shape) <= INT32_MAX))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "tensor too large for one step");
        for (int i = 0; e.term[t][i]; i++) {
            int64_t *sz = &size[(unsigned char)e.term[t][i]];
            if (*sz >= 0 && *sz != x->shape.d[i])
                return lc_fail(c, err, SI_ERR_SHAPE, "label '%c' is %lld and %lld (operand %d is %s)",
                               e.term[t][i], (long long)*sz, (long long)x->shape.d[i], t,
                               core_shape_str(&x->shape, sb, sizeof sb));
            *sz = x->shape.d[i];
        }
    }
    /* int32 and float32 operands multiply as float32 in tfjs */
    si_dtype dt = n_float ? SI_FLOAT32 : SI_INT32;
    core_shape os = {.rank = (int)strlen(e.out)};
    for (int i = 0; i < os.rank; i++)
        os.d[i] = size[(unsigned char)e.out[i]];
    int64_t cnt = core_shape_count(&os), any_empty = cnt == 0;
    for (int t = 0; t < e.n_terms; t++)
        any_empty |= core_shape_count(&lc_tensor(c, lc_in(c, t))->shape) == 0;
    if (any_empty) {
        /* an empty output, or sums over no terms: zeros */
        if (cnt > (1 << 26))
            return lc_fail(c, err, SI_ERR_UNSUPPORTED, "a zero output of %lld elements",
                           (long long)cnt);
        void *zeros = calloc((size_t)(cnt ? cnt : 1), CORE_ELEM);
        int z = zeros ? lc_new_const(c, dt, &os, zeros) : -1;
        free(zeros);
        if (z < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, z);
        return SI_OK;
    }
    int ops[2];
    for (int t = 0; t < e.n_terms; t++) {
        ops[t] = lc_in(c, t);
        const core_tensor *x = lc_tensor(c, ops[t]);
        if (x->dtype == dt)
            continue;
        ck_step cs = {.kind = CK_UNARY, .n_in = 1, .in = {ops[t]}};
        cs.u.unary = (ck_unary_p){.op = CK_U_CAST, .count = (int32_t)core_shape_count(&x->shape),
                                  .in_dtype = x->dtype, .out_dtype = dt};
        cs.out = ops[t] = lc_new_tensor(c, dt, &x->shape);
        lc_emit(c, &cs);
    }
    char labels[SI_MAX_RANK + 1];
    int y = e.n_terms == 1 ? ein_sum(c, ops[0], e.term[0], e.out, labels)
                           : ein_pair(c, &e, ops, size, labels);
    y = ein_permute(c, y, labels, e.out);
    if (y < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_set_output(c, 0, y);
    return SI_OK;
}

const core_op_def core_ops_math[] = {
    {"Einsum", lower_einsum},
    {"FusedBatchNorm", lower_fused_batch_norm},
    {"FusedBatchNormV2", lower_fused_batch_norm},
    {"FusedBatchNormV3", lower_fused_batch_norm},
    {NULL, NULL},
};
