/* Half precision (si_options.precision f16): which float32 tensors
 * (activations, weights stored as float32, folded constants) are stored on
 * the GPU and in the host pool as IEEE half, two a 32-bit word. The kernels load halves
 * as float32, compute and accumulate in float32 and round once on store
 * (glkernels/glk_program.c, LDk and ST), so what a tensor holds does not depend on how
 * a budget splits the steps: each element is computed by the same arithmetic
 * from the same stored inputs, whatever part of a step computes it.
 *
 * The rule is decided from the program alone (never from a budget): a tensor
 * is half only where every step touching it is a kernel that reads or writes
 * halves at that binding. Everything that feeds a shape, an index, the host
 * interpreter or a host step (their tensors are read back as float32), the
 * model's outputs, the arguments of ops
 * whose range needs float32, small tensors (CORE_HALF_MIN), and every float
 * that becomes an index, a size or a mask (a Cast to int or bool, a
 * comparison, and back through the elementwise steps before them: a half
 * holds integers exactly only up to 2048) stay float32. */
#include <stdlib.h>
#include <string.h>
#include "core.h"

/* Tensors of fewer elements stay float32: they save next to nothing as halves,
 * and they are where a model keeps its statistics and normalizers (an L2 norm's
 * 1/sqrt(sum of squares), a softmax's sum), whose values fall below the
 * halves' normal range (6.1e-5) or above their largest (65504) first:
 * mobilefacenet's embedding, L2-normalized, was off by 0.24 with its scalar
 * factor a (subnormal) half. */
#define CORE_HALF_MIN 4096

int core_step_half_ok(const ck_step *s, int i)
{
    int out = i == CK_MAX_IN;
    switch (s->kind) {
    case CK_COPY:
    case CK_PAD:
    case CK_POOL:
    case CK_RESIZE:
    case CK_GATHER: /* params; the indices are int32 */
        return out || i == 0;
    case CK_ADDN:
        return 1;
    case CK_BINARY:
        /* Pow's operands: a half's rounding in an exponent moves the result by far more */
        return out || (s->u.binary.op != CK_B_POW && i < 2);
    case CK_UNARY:
        /* the arguments of exponentials and logarithms keep float32's range and
         * precision (as TensorRT's and ONNX Runtime's keep-lists do) */
        switch (s->u.unary.op) {
        case CK_U_EXP:
        case CK_U_EXPM1:
        case CK_U_LOG:
        case CK_U_LOG1P:
        case CK_U_SOFTPLUS:
            return out;
        default:
            return 1;
        }
    case CK_CONV2D:
    case CK_DWCONV2D:
    case CK_DECONV2D:
    case CK_MATMUL:
        /* x and the filter (or b), and a fused residual (input 7 of a Conv2D,
         * read as the Add it replaces read it); bias, alpha, clip scalars and
         * scale are read as float32 arrays (and alpha's length tells one from
         * one a channel) */
        return out || i < 2 || (s->kind == CK_CONV2D && i == 7);
    case CK_SELECT:
        return out || i == 1 || i == 2;
    case CK_DEQUANT: /* its input is the stored words */
        return out;
    case CK_REDUCE: {
        /* a split reduction's part sums (core_reduce_split) read x as the pool or
         * mean they replace read it; their pairs, and every other reduction, float32 */
        const ck_reduce_p *r = &s->u.reduce;
        return i == 0 && r->carry == 2 && !r->has_init && !r->lanes && !r->pairs &&
               (r->op == CK_R_SUM || r->op == CK_R_MEAN) && r->dtype == SI_FLOAT32;
    }
    default:
        return 0;
    }
}

uint64_t core_tensor_bytes(const core_tensor *t, int64_t n)
{
    return t->half ? ((uint64_t)n * 2 + 3) / 4 * 4 : (uint64_t)n * CORE_ELEM;
}

/* Whether step s turns float values into ints or bools whose every bit
 * counts: a Cast to int32 or bool (indices, sizes, counts) or a comparison
 * (masks, an equality). */
static int makes_exact(const core_program *p, const ck_step *s)
{
    if (s->kind == CK_UNARY)
        return s->u.unary.op == CK_U_CAST && p->tensors[s->out].dtype != SI_FLOAT32;
    return s->kind == CK_BINARY && s->u.binary.op >= CK_B_EQUAL && s->u.binary.op <= CK_B_GREATEREQ;
}

/* Steps that pass values along without a reduction (elementwise, moves): what
 * must be exact after one must be exact before it. */
static int passes_values(ck_kind k)
{
    return k == CK_UNARY || k == CK_BINARY || k == CK_ADDN || k == CK_SELECT || k == CK_COPY ||
           k == CK_PAD || k == CK_GATHER || k == CK_RESIZE;
}

/* Marks bad the float tensors whose values end up as indices, sizes, masks:
 * the inputs of makes_exact steps, and back from them through every step
 * that passes values along (one sweep from the last step: the program is in
 * order, so a producer comes before what it feeds). */
static void mark_exact(const core_program *p, uint8_t *bad)
{
    uint8_t *exact = calloc((size_t)(p->n_tensors ? p->n_tensors : 1), 1);
    if (!exact) {
        memset(bad, 1, (size_t)p->n_tensors); /* nothing half rather than a wrong index */
        return;
    }
    for (int s = p->n_steps - 1; s >= 0; s--) {
        const ck_step *st = &p->steps[s];
        int carry = makes_exact(p, st) || (exact[core_storage(p, st->out)] && passes_values(st->kind));
        for (int i = 0; carry && i < st->n_in; i++)
            if (st->in[i] >= 0)
                exact[core_storage(p, st->in[i])] = 1;
    }
    for (int t = 0; t < p->n_tensors; t++)
        bad[t] |= exact[t];
    free(exact);
}

int core_program_set_half(core_program *p, uint64_t max_loop, const uint8_t *keep, const uint8_t *keep_t)
{
    uint8_t *bad = calloc((size_t)(p->n_tensors ? p->n_tensors : 1), 1);
    if (!bad)
        return 0;
    mark_exact(p, bad);
    for (int t = 0; keep_t && t < p->n_tensors; t++)
        bad[t] |= keep_t[t];
    for (int s = 0; s < p->n_steps; s++) {
        const ck_step *st = &p->steps[s];
        int host = ck_runs_on_host(st->kind) || ck_loop_iterations(st) > max_loop || (keep && keep[s]);
        for (int i = 0; i < st->n_in; i++)
            if (st->in[i] >= 0 && (host || !core_step_half_ok(st, i)))
                bad[core_storage(p, st->in[i])] = 1;
        if (host || !core_step_half_ok(st, CK_MAX_IN))
            bad[core_storage(p, st->out)] = 1;
    }
    for (int o = 0; o < p->n_outputs; o++)
        if (p->outputs[o] >= 0)
            bad[core_storage(p, p->outputs[o])] = 1;
    for (int q = 0; q < p->n_boundary; q++)
        bad[core_storage(p, p->boundary[q])] = 1;
    for (int q = 0; q < p->n_out_bands; q++)
        bad[p->out_bands[q].root] = bad[core_storage(p, p->out_bands[q].tensor)] = 1;
    for (int t = 0; t < p->n_tensors; t++) /* a view of other dtype (a bitcast) */
        if (p->tensors[t].dtype != p->tensors[core_storage(p, t)].dtype)
            bad[core_storage(p, t)] = 1;
    int marked = 0;
    for (int t = 0; t < p->n_tensors; t++) {
        int r = core_storage(p, t);
        const core_tensor *rt = &p->tensors[r];
        core_tensor *ct = &p->tensors[t];
        int64_t n = core_shape_count(&rt->shape);
        /* weights stored as plain float32 (4 bytes an element; quantized ones stay
         * as stored, their dequantized values an activation), constants and the
         * model's inputs: the runtime rounds what it uploads */
        int stored = (rt->kind == PT_WEIGHT && rt->bytes == (uint64_t)n * CORE_ELEM) ||
                     (rt->kind == PT_CONST && rt->host) || rt->kind == PT_INPUT;
        if (bad[r] || !((rt->kind == PT_ACT && !rt->host) || stored) || rt->dtype != SI_FLOAT32 ||
            n < CORE_HALF_MIN)
            continue;
        ct->half = 1;
        ct->bytes = core_tensor_bytes(ct, core_shape_count(&ct->shape));
        marked += t == r;
    }
    free(bad);
    return marked;
}

int core_program_mark_half(core_program *p)
{
    int wrong = -1;
    for (int s = 0; s < p->n_steps; s++) {
        ck_step *st = &p->steps[s];
        st->half = p->tensors[core_storage(p, st->out)].half ? 1 << CK_MAX_IN : 0;
        for (int i = 0; i < st->n_in; i++)
            if (st->in[i] >= 0 && p->tensors[core_storage(p, st->in[i])].half)
                st->half |= 1 << i;
        for (int i = 0; i <= CK_MAX_IN && wrong < 0; i++)
            if (st->half >> i & 1 && !core_step_half_ok(st, i))
                wrong = s;
    }
    return wrong;
}

void core_program_count_half(const core_program *p, uint64_t *half, uint64_t *full)
{
    for (int t = 0; t < p->n_tensors; t++) {
        const core_tensor *ct = &p->tensors[t];
        if (core_storage(p, t) == t && ct->kind == PT_ACT && ct->dtype == SI_FLOAT32 && !ct->host)
            ++*(ct->half ? half : full);
    }
}
