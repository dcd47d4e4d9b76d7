/* Epilogue fusion (issue 17): a program transform run after lowering, before
 * tiling. A bias add of one value per output channel, and then an activation,
 * that follow a Conv2D, a depthwise conv or a MatMul as separate steps (the
 * converter leaves `Conv2D -> Add(const) -> Relu` unfused where grappler did
 * not fuse it) become that step's epilogue, so one dispatch does what three
 * did and the two tensors between them never exist.
 *
 * The arithmetic is the same operations in the same order, so the outputs are
 * bitwise those of the unfused steps: the epilogue adds the bias as one float32
 * add (binary.comp's and the host's a + b; IEEE addition commutes), and the
 * activations taken are those whose epilogue formula is the unary op's own
 * (ck_apply_act and the shaders' epilogue(): RELU6, LEAKYRELU, ELU, SIGMOID,
 * TANH, and Relu as RELU_OP, which keeps NaN and -0 as the Relu op does). Only
 * a tensor that nothing else reads (no other step, no output, nothing the host
 * interpreter takes) is fused away. A Minimum or Maximum with a scalar after
 * that (up to two: a relu6 written out as Relu, Minimum(6), Maximum(0)) joins
 * the epilogue as its clips, binary.comp's formula with the value first; and
 * MobileNetV3's hard swish, Mul(Mul(c1, x), Relu6(Add(x, c2))), as a step of
 * its own after the bias (each of its four float ops rounded as its step's);
 * and a Mul by a channel vector before the bias (a batch norm left as Mul then
 * Add), where the device rounds the product before the sum (GLSL ES 3.2's
 * `precise`; on 3.1 a compiler may fuse them, and the Mul stays a step), or
 * on such a device a Mul and then an Add of channel vectors after a conv's bias
 * (a batch norm after a conv with a bias: TF's Inception-ResNet, 4,000 of them in
 * frcnn-irv2's 17,636 steps) as its scale and shift after the bias; and
 * after a Conv2D's bias, an Add of a tensor of the output's shape made before
 * it (a residual: ResNet's and MobileNetV2's skip connections), before the
 * activation that may follow it.
 * si_options.no_fuse (SI_NO_FUSE) leaves the
 * program as lowered, to compare. */
#include <stdlib.h>
#include <string.h>
#include "core.h"

/* The epilogue fields of a step that has one. */
typedef struct {
    int32_t *has_bias, *act, *has_alpha;
    float *alpha;
    int32_t *n_clip, *clip_op, *hswish, *has_scale;
} epi_fields;

static int epilogue_of(ck_step *s, epi_fields *e)
{
    if (s->kind == CK_CONV2D || s->kind == CK_DWCONV2D) {
        *e = (epi_fields){&s->u.conv.has_bias, &s->u.conv.act, &s->u.conv.has_alpha_tensor,
                          &s->u.conv.alpha, &s->u.conv.n_clip, s->u.conv.clip_op,
                          &s->u.conv.hswish, &s->u.conv.has_scale};
        return 1;
    }
    if (s->kind == CK_MATMUL) {
        *e = (epi_fields){&s->u.matmul.has_bias, &s->u.matmul.act,
                          &s->u.matmul.has_alpha_tensor, &s->u.matmul.alpha,
                          &s->u.matmul.n_clip, s->u.matmul.clip_op, &s->u.matmul.hswish,
                          &s->u.matmul.has_scale};
        return 1;
    }
    return 0;
}

/* The activation that computes unary op u exactly as the unary step does, or
 * CK_ACT_NONE. */
static int act_of_unary(int u)
{
    switch (u) {
    case CK_U_RELU: return CK_ACT_RELU_OP;
    case CK_U_RELU6: return CK_ACT_RELU6;
    case CK_U_LEAKYRELU: return CK_ACT_LEAKYRELU;
    case CK_U_ELU: return CK_ACT_ELU;
    case CK_U_SIGMOID: return CK_ACT_SIGMOID;
    case CK_U_TANH: return CK_ACT_TANH;
    default: return CK_ACT_NONE;
    }
}

static int same_shape(const core_shape *a, const core_shape *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

typedef struct {
    core_program *p;
    int *producer; /* by storage root: the step writing it, -1 none, -2 several */
    int *readers;  /* by storage root: inputs of steps reading it */
    uint8_t *pinned; /* by storage root: an output or boundary tensor */
    uint8_t *dead;   /* by step */
    int exact_mul_add; /* the device rounds a product and a sum apart when fused */
} fuser;

static void index_steps(fuser *f)
{
    core_program *p = f->p;
    for (int t = 0; t < p->n_tensors; t++)
        f->producer[t] = -1;
    for (int k = 0; k < p->n_steps; k++) {
        if (f->dead[k])
            continue;
        int r = core_storage(p, p->steps[k].out);
        f->producer[r] = f->producer[r] == -1 ? k : -2;
    }
}

/* A float32 binary step of op with two inputs. */
static int float_binary(const ck_step *s, int op)
{
    return s->kind == CK_BINARY && s->u.binary.op == op && s->n_in == 2 &&
           s->u.binary.in_dtype == SI_FLOAT32 && s->u.binary.out_dtype == SI_FLOAT32;
}

/* Step k's tensor a, written by step j alone, read by step k alone (once), a
 * whole storage of its own, pinned by nothing: *j, else 0. */
static int fusable_input(fuser *f, int k, int a, int *j)
{
    core_program *p = f->p;
    if (a < 0 || p->tensors[a].alias_of >= 0 || p->tensors[a].kind != PT_ACT)
        return 0;
    int w = f->producer[a];
    if (w < 0 || w >= k || f->dead[w] || p->steps[w].out != a)
        return 0;
    if (f->readers[a] != 1 || f->pinned[a])
        return 0;
    *j = w;
    return 1;
}

/* Moves step from (a dequantization, which reads a weight alone) to just
 * before step to, the steps between one later. */
static void hoist(fuser *f, int from, int to)
{
    core_program *p = f->p;
    ck_step s = p->steps[from];
    uint8_t d = f->dead[from];
    memmove(&p->steps[to + 1], &p->steps[to], (size_t)(from - to) * sizeof *p->steps);
    memmove(&f->dead[to + 1], &f->dead[to], (size_t)(from - to));
    p->steps[to] = s;
    f->dead[to] = d;
    index_steps(f);
}

/* Step j takes step k's output as its own (k fused into it, dead): a, what
 * k read of j's, is read by nothing now. */
static void absorb(fuser *f, int j, int k, int a)
{
    core_program *p = f->p;
    p->steps[j].out = p->steps[k].out;
    f->dead[k] = 1;
    f->readers[a] = 0;
    f->producer[core_storage(p, p->steps[j].out)] = j;
}

/* Tensor b must exist when step *j runs: made before it, or by a
 * dequantization of a weight made after it, which moves up to just before it
 * (*j one later then). 0 where it cannot. */
static int ready_before(fuser *f, int b, int *j)
{
    core_program *p = f->p;
    int pb = f->producer[core_storage(p, b)];
    if (pb == -2 || pb == *j)
        return 0;
    if (pb > *j) {
        if (p->steps[pb].kind != CK_DEQUANT || p->steps[pb].n_in != 1 ||
            p->tensors[p->steps[pb].in[0]].kind != PT_WEIGHT || f->dead[pb])
            return 0;
        hoist(f, pb, *j); /* steps j..pb-1 one later; the step fused (after pb) stays */
        (*j)++;
    }
    return 1;
}

/* Step k, a Minimum or Maximum of step j's output (as a) and a float scalar
 * b, into j's clips after its epilogue (at most two: Relu -> Minimum(6) ->
 * Maximum(0), as models exported with a relu6 written out have it). */
static int fuse_clip(fuser *f, int k)
{
    core_program *p = f->p;
    ck_step *s = &p->steps[k];
    if (f->dead[k] || (!float_binary(s, CK_B_MIN) && !float_binary(s, CK_B_MAX)))
        return 0;
    int a = s->in[0], b = s->in[1], j;
    if (b < 0 || b == a || !fusable_input(f, k, a, &j))
        return 0;
    epi_fields e;
    ck_step *c = &p->steps[j];
    if (!epilogue_of(c, &e) || *e.n_clip >= 2 || *e.has_alpha || *e.hswish)
        return 0;
    const core_tensor *ta = &p->tensors[a], *tb = &p->tensors[b];
    if (ta->dtype != SI_FLOAT32 || tb->dtype != SI_FLOAT32 || core_shape_count(&tb->shape) != 1 ||
        !same_shape(&p->tensors[s->out].shape, &ta->shape) || !ready_before(f, b, &j))
        return 0;
    c = &p->steps[j];
    epilogue_of(c, &e);
    if (c->n_in < 4) { /* the optional inputs before the clips' stay absent */
        for (int i = c->n_in; i < 4; i++)
            c->in[i] = -1;
        c->n_in = 4;
    }
    c->in[4 + *e.n_clip] = b;
    if (c->n_in < 5 + *e.n_clip) /* a scale (input 6) stays */
        c->n_in = 5 + *e.n_clip;
    e.clip_op[*e.n_clip] = s->u.binary.op;
    (*e.n_clip)++;
    absorb(f, j, k, a);
    return 1;
}

/* The step writing tensor t (a whole storage of its own, read once, pinned by
 * nothing, made before step k) if it is a float binary op of kind op with a
 * float scalar on one side: *x the other input, *c the scalar; else -1. */
static int scalar_binary(fuser *f, int k, int t, int op, int *x, int *c)
{
    core_program *p = f->p;
    int w;
    if (!fusable_input(f, k, t, &w))
        return -1;
    const ck_step *s = &p->steps[w];
    if (!float_binary(s, op))
        return -1;
    for (int side = 0; side < 2; side++) {
        int a = s->in[side], b = s->in[1 - side];
        if (a >= 0 && b >= 0 && a != b && p->tensors[b].dtype == SI_FLOAT32 &&
            core_shape_count(&p->tensors[b].shape) == 1 &&
            same_shape(&p->tensors[a].shape, &p->tensors[s->out].shape)) {
            *x = a;
            *c = b;
            return w;
        }
    }
    return -1;
}

/* Step *j (a conv or matmul, epilogue with no activation, clip or hard
 * swish) takes scalars c1 and c2 (inputs 4 and 5) for a hard swish (hs 1) or
 * sigmoid (hs 2), both made before it (a dequantization after it moves up:
 * *j one later then). 0 where it cannot. */
static int epi_hard(fuser *f, int *j, int c1, int c2, int hs)
{
    core_program *p = f->p;
    epi_fields e;
    ck_step *c = &p->steps[*j];
    if (!epilogue_of(c, &e) || *e.act != CK_ACT_NONE || *e.has_alpha || *e.n_clip || *e.hswish ||
        !ready_before(f, c1, j))
        return 0;
    if (!ready_before(f, c2, j)) /* c1's hoist (if any) stays: harmless */
        return 0;
    c = &p->steps[*j];
    epilogue_of(c, &e);
    for (int i = c->n_in; i < 4; i++)
        c->in[i] = -1;
    c->in[4] = c1;
    c->in[5] = c2;
    if (c->n_in < 6) /* a scale (input 6) stays */
        c->n_in = 6;
    *e.hswish = hs;
    return 1;
}

/* Step k, Mul(Mul(c1, x), Relu6(Add(x, c2))) where x is step j's output (read
 * by those two alone), into j's epilogue as a hard swish: MobileNetV3's
 * x * relu6(x + 3) / 6, as the converter leaves it in four steps. */
static int fuse_hswish(fuser *f, int k)
{
    core_program *p = f->p;
    ck_step *s = &p->steps[k];
    if (f->dead[k] || !float_binary(s, CK_B_MUL))
        return 0;
    for (int side = 0; side < 2; side++) {
        int m1 = s->in[side], r = s->in[1 - side], x, x2, c1, c2, kr;
        if (m1 < 0 || r < 0 || m1 == r || !fusable_input(f, k, r, &kr))
            continue;
        const ck_step *rs = &p->steps[kr];
        if (rs->kind != CK_UNARY || rs->u.unary.op != CK_U_RELU6 ||
            rs->u.unary.in_dtype != SI_FLOAT32 || rs->u.unary.out_dtype != SI_FLOAT32)
            continue;
        int km = scalar_binary(f, k, m1, CK_B_MUL, &x, &c1);
        int ka = scalar_binary(f, kr, rs->in[0], CK_B_ADD, &x2, &c2);
        if (km < 0 || ka < 0 || x != x2)
            continue;
        /* x: step j's output, read by the Mul and the Add alone */
        int j = f->producer[x];
        if (j < 0 || j >= ka || j >= km || f->dead[j] || p->steps[j].out != x ||
            p->tensors[x].alias_of >= 0 || p->tensors[x].kind != PT_ACT || f->readers[x] != 2 ||
            f->pinned[x] || !same_shape(&p->tensors[s->out].shape, &p->tensors[x].shape))
            continue;
        if (!epi_hard(f, &j, c1, c2, 1))
            continue;
        /* a hoist moved the steps after j one later: found again */
        km = f->producer[m1];
        kr = f->producer[r];
        ka = f->producer[p->steps[kr].in[0]];
        f->dead[kr] = f->dead[km] = f->dead[ka] = 1;
        absorb(f, j, k, x);
        return 1;
    }
    return 0;
}

/* Step k, Mul(Relu6(Add(x, c2)), c1) where x is step j's output (read by
 * the Add alone), into j's epilogue as a hard sigmoid (hswish 2): MobileNetV3's
 * relu6(x + 3) / 6 as the converter leaves it after a squeeze-excite conv, in
 * three steps. */
static int fuse_hsigmoid(fuser *f, int k)
{
    core_program *p = f->p;
    ck_step *s = &p->steps[k];
    if (f->dead[k] || !float_binary(s, CK_B_MUL))
        return 0;
    for (int side = 0; side < 2; side++) {
        int r = s->in[side], c1 = s->in[1 - side], x, c2, kr;
        if (r < 0 || c1 < 0 || r == c1 || p->tensors[c1].dtype != SI_FLOAT32 ||
            core_shape_count(&p->tensors[c1].shape) != 1 ||
            !same_shape(&p->tensors[s->out].shape, &p->tensors[r].shape) || !fusable_input(f, k, r, &kr))
            continue;
        const ck_step *rs = &p->steps[kr];
        if (rs->kind != CK_UNARY || rs->u.unary.op != CK_U_RELU6 ||
            rs->u.unary.in_dtype != SI_FLOAT32 || rs->u.unary.out_dtype != SI_FLOAT32)
            continue;
        int ka = scalar_binary(f, kr, rs->in[0], CK_B_ADD, &x, &c2);
        if (ka < 0)
            continue;
        /* x: step j's output, read by the Add alone */
        int j = f->producer[x];
        if (j < 0 || j >= ka || f->dead[j] || p->steps[j].out != x || p->tensors[x].alias_of >= 0 ||
            p->tensors[x].kind != PT_ACT || f->readers[x] != 1 || f->pinned[x] ||
            !same_shape(&p->tensors[s->out].shape, &p->tensors[x].shape))
            continue;
        if (!epi_hard(f, &j, c1, c2, 2))
            continue;
        /* a hoist moved the steps after j one later: found again */
        kr = f->producer[r];
        ka = f->producer[p->steps[kr].in[0]];
        f->dead[kr] = f->dead[ka] = 1;
        f->readers[x] = 0;
        absorb(f, j, k, r);
        return 1;
    }
    return 0;
}

/* Whether step c's inputs past 2 (the bias) are absent but for a scale (input 6). */
static int only_bias_scale(const ck_step *c)
{
    for (int i = 3; i < c->n_in; i++)
        if (i != 6 && c->in[i] >= 0)
            return 0;
    return 1;
}

/* Step k, an Add (or, as scale, a Mul) of step j's output and a channel
 * vector b, into j's bias (scale: into its scale before the bias, where the
 * device keeps a product and a sum apart, exact_mul_add). Where a conv has its
 * bias already (a batch norm's Mul and Add after a conv with a bias, as TF's
 * Inception-ResNet exports have them), a Mul becomes its scale after the bias
 * (has_scale 2) and an Add after that its shift (has_scale 3, input 3), on
 * such a device too; either may be a scalar there. */
static int fuse_channel(fuser *f, int k, int scale)
{
    core_program *p = f->p;
    ck_step *s = &p->steps[k];
    if (f->dead[k] || !float_binary(s, scale ? CK_B_MUL : CK_B_ADD))
        return 0;
    for (int side = 0; side < 2; side++) {
        int a = s->in[side], b = s->in[1 - side], j;
        if (b < 0 || b == a || !fusable_input(f, k, a, &j))
            continue;
        epi_fields e;
        ck_step *c = &p->steps[j];
        /* nothing after it in the epilogue yet, inputs 2.. free but a scale's */
        if (!epilogue_of(c, &e) || *e.act != CK_ACT_NONE || *e.has_alpha || *e.n_clip || *e.hswish ||
            (c->kind == CK_CONV2D && c->u.conv.has_res))
            continue;
        /* after the bias: 1 a scale, 2 a shift after the scale */
        int post = !*e.has_bias ? 0 : scale ? (*e.has_scale == 0 ? 1 : -1) : (*e.has_scale == 2 ? 2 : -1);
        if (post < 0 || (post && ((c->kind != CK_CONV2D && c->kind != CK_DWCONV2D) || !f->exact_mul_add ||
                                  !only_bias_scale(c))))
            continue;
        if (!post && ((scale && (*e.has_scale || !f->exact_mul_add)) || c->n_in > (*e.has_scale ? 7 : 2)))
            continue;
        const core_tensor *ta = &p->tensors[a], *tb = &p->tensors[b];
        int64_t n = ta->shape.rank ? ta->shape.d[ta->shape.rank - 1] : 0;
        /* a channel vector; after the bias a scalar too (Inception-ResNet's residual
         * branches scaled by one value: the kernels read element 0 of one) */
        int one = post && core_shape_count(&tb->shape) == 1;
        if (ta->dtype != SI_FLOAT32 || tb->dtype != SI_FLOAT32 || n <= 0 ||
            (!one && (core_shape_count(&tb->shape) != n ||
                      (tb->shape.rank > 0 && tb->shape.d[tb->shape.rank - 1] != n))) ||
            tb->shape.rank > ta->shape.rank || !same_shape(&p->tensors[s->out].shape, &ta->shape))
            continue;
        if (!ready_before(f, b, &j))
            continue;
        c = &p->steps[j];
        epilogue_of(c, &e);
        for (int i = c->n_in; i < 7; i++)
            c->in[i] = -1;
        if (post) {
            c->in[post == 1 ? 6 : 3] = b;
            c->n_in = 7;
            *e.has_scale = post + 1;
        } else if (scale) {
            c->in[6] = b;
            c->n_in = 7;
            *e.has_scale = 1;
        } else {
            c->in[2] = b;
            c->in[3] = -1;
            if (c->n_in < 3)
                c->n_in = 3;
            *e.has_bias = 1;
        }
        absorb(f, j, k, a);
        return 1;
    }
    return 0;
}

/* Step k, an Add of step j's output (a Conv2D's) and a float32 tensor r of
 * the same shape made before j (a residual), into j's epilogue after its bias
 * and before any activation (ck_conv_p.has_res: input 7, read at the output's
 * index): one float32 add as the Add step's, so the same bits. */
static int fuse_residual(fuser *f, int k)
{
    core_program *p = f->p;
    ck_step *s = &p->steps[k];
    if (f->dead[k] || !float_binary(s, CK_B_ADD))
        return 0;
    for (int side = 0; side < 2; side++) {
        int a = s->in[side], r = s->in[1 - side], j;
        if (r < 0 || r == a || !fusable_input(f, k, a, &j))
            continue;
        ck_step *c = &p->steps[j];
        const ck_conv_p *cp = &c->u.conv;
        if (c->kind != CK_CONV2D || cp->has_res || cp->act != CK_ACT_NONE || cp->has_alpha_tensor ||
            cp->n_clip || cp->hswish || c->n_in > 7)
            continue;
        const core_tensor *ta = &p->tensors[a], *tr = &p->tensors[r];
        if (ta->dtype != SI_FLOAT32 || tr->dtype != SI_FLOAT32 || !same_shape(&tr->shape, &ta->shape) ||
            !same_shape(&p->tensors[s->out].shape, &ta->shape) ||
            core_storage(p, r) == core_storage(p, s->out))
            continue;
        int pr = f->producer[core_storage(p, r)];
        if (pr == -2 || pr >= j) /* made by several steps, or not before j */
            continue;
        for (int i = c->n_in; i < 8; i++)
            c->in[i] = -1;
        c->in[7] = r;
        c->n_in = 8;
        c->u.conv.has_res = 1;
        absorb(f, j, k, a);
        return 1;
    }
    return 0;
}

/* Step k, an activation of step j's output, into j's epilogue. */
static int fuse_act(fuser *f, int k)
{
    core_program *p = f->p;
    ck_step *s = &p->steps[k];
    if (f->dead[k] || s->kind != CK_UNARY || s->u.unary.in_dtype != SI_FLOAT32 ||
        s->u.unary.out_dtype != SI_FLOAT32)
        return 0;
    int act = act_of_unary(s->u.unary.op), a = s->in[0], j;
    if (act == CK_ACT_NONE || !fusable_input(f, k, a, &j))
        return 0;
    epi_fields e;
    ck_step *c = &p->steps[j];
    if (!epilogue_of(c, &e) || *e.act != CK_ACT_NONE || *e.has_alpha || *e.n_clip || *e.hswish ||
        !same_shape(&p->tensors[s->out].shape, &p->tensors[a].shape))
        return 0;
    *e.act = act;
    *e.alpha = s->u.unary.alpha;
    absorb(f, j, k, a);
    return 1;
}

int core_fuse_epilogues(core_program *p, int exact_mul_add)
{
    fuser f = {.p = p, .exact_mul_add = exact_mul_add};
    size_t nt = (size_t)p->n_tensors + 1;
    f.producer = malloc(nt * sizeof *f.producer);
    f.readers = calloc(nt, sizeof *f.readers);
    f.pinned = calloc(nt, 1);
    f.dead = calloc((size_t)p->n_steps + 1, 1);
    int fused = 0;
    if (!f.producer || !f.readers || !f.pinned || !f.dead)
        goto done; /* nothing fused: the program as lowered still runs */
    for (int o = 0; o < p->n_outputs; o++)
        if (p->outputs[o] >= 0)
            f.pinned[core_storage(p, p->outputs[o])] = 1;
    for (int q = 0; q < p->n_boundary; q++)
        f.pinned[core_storage(p, p->boundary[q])] = 1;
    for (int q = 0; q < p->n_out_bands; q++)
        f.pinned[p->out_bands[q].root] = 1;
    for (int k = 0; k < p->n_steps; k++)
        for (int i = 0; i < p->steps[k].n_in; i++)
            if (p->steps[k].in[i] >= 0)
                f.readers[core_storage(p, p->steps[k].in[i])]++;
    index_steps(&f);
    for (int k = 0; k < p->n_steps; k++)
        fused += fuse_channel(&f, k, 1) || fuse_channel(&f, k, 0) || fuse_residual(&f, k) ||
                 fuse_act(&f, k) || fuse_clip(&f, k) || fuse_hswish(&f, k) ||
                 fuse_hsigmoid(&f, k);
    int n = 0;
    for (int k = 0; k < p->n_steps; k++)
        if (!f.dead[k])
            p->steps[n++] = p->steps[k];
    p->n_steps = n;
done:
    free(f.producer);
    free(f.readers);
    free(f.pinned);
    free(f.dead);
    return fused;
}

uint8_t *core_fused_away(const core_program *p, int exact_mul_add)
{
    core_program q = *p; /* the same tensors, its own steps */
    q.steps = malloc(((size_t)p->n_steps + 1) * sizeof *q.steps);
    uint8_t *seen = calloc((size_t)p->n_tensors + 1, 1), *away = calloc((size_t)p->n_tensors + 1, 1);
    if (!q.steps || !seen || !away) {
        free(q.steps);
        free(seen);
        free(away);
        return NULL;
    }
    memcpy(q.steps, p->steps, (size_t)p->n_steps * sizeof *q.steps);
    core_fuse_epilogues(&q, exact_mul_add);
    for (int k = 0; k < q.n_steps; k++) {
        seen[core_storage(p, q.steps[k].out)] = 1;
        for (int i = 0; i < q.steps[k].n_in; i++)
            if (q.steps[k].in[i] >= 0)
                seen[core_storage(p, q.steps[k].in[i])] = 1;
    }
    for (int k = 0; k < p->n_steps; k++)
        if (!seen[core_storage(p, p->steps[k].out)])
            away[core_storage(p, p->steps[k].out)] = 1;
    free(q.steps);
    free(seen);
    return away;
}
