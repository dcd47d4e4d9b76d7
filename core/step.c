/* The kernel kinds' tables, generated from CK_KINDS (core/step.h): names,
 * shaders, loop costs and the host dispatcher. */
#include <math.h>
#include "core.h"

/* Every parameter block is a member of the union and fits its slots; every
 * row names a member. */
#define CHECK_PARAMS(type, member)                                                               \
    _Static_assert(sizeof(type) <= CK_MAX_P * sizeof(int32_t), #type " over CK_MAX_P slots");   \
    _Static_assert(sizeof(type) % sizeof(int32_t) == 0, #type " not whole slots");
CK_PARAMS(CHECK_PARAMS)
#undef CHECK_PARAMS
#define CHECK_ROW(K, name, params, shader, variant, inv, iters, tiling)                         \
    _Static_assert(sizeof(((ck_step *)0)->u.params) > 0, #K);                                   \
    _Static_assert((variant) >= -1 && (variant) < CK_MAX_P, #K " variant slot");
CK_KINDS(CHECK_ROW)
#undef CHECK_ROW

const char *ck_kind_name(ck_kind k)
{
    static const char *const names[CK__COUNT] = {
#define NAME(K, name, params, shader, variant, inv, iters, tiling) [CK_##K] = #name,
        CK_KINDS(NAME)
#undef NAME
    };
    return (unsigned)k < CK__COUNT ? names[k] : "?";
}

const char *ck_kind_shader(ck_kind k)
{
    static const char *const shaders[CK__COUNT] = {
#define SHADER(K, name, params, shader, variant, inv, iters, tiling) [CK_##K] = shader,
        CK_KINDS(SHADER)
#undef SHADER
    };
    return (unsigned)k < CK__COUNT ? shaders[k] : NULL;
}

int ck_runs_on_host(ck_kind k) { return (unsigned)k < CK__COUNT && !ck_kind_shader(k); }

/* ---- loop iterations of one invocation: the iterations column ---- */

static uint64_t ck_iters_one(const ck_step *s)
{
    (void)s;
    return 1;
}

/* every input channel of the window: conv2d, deconv2d */
static uint64_t ck_iters_conv(const ck_step *s)
{
    const ck_conv_p *c = &s->u.conv;
    return (uint64_t)c->k_h * (uint64_t)c->k_w * (uint64_t)c->in_c;
}

/* the window alone: depthwise */
static uint64_t ck_iters_window(const ck_step *s)
{
    return (uint64_t)s->u.conv.k_h * (uint64_t)s->u.conv.k_w;
}

static uint64_t ck_iters_matmul(const ck_step *s) { return (uint64_t)s->u.matmul.k; }

static uint64_t ck_iters_pool(const ck_step *s)
{
    return (uint64_t)s->u.pool.k_h * (uint64_t)s->u.pool.k_w;
}

static uint64_t ck_iters_reduce(const ck_step *s)
{
    uint64_t n = (uint64_t)s->u.reduce.n, l = (uint64_t)s->u.reduce.lanes;
    return l ? (n + l - 1) / l : n;
}
static uint64_t ck_iters_softmax(const ck_step *s) { return (uint64_t)s->u.softmax.n; }
static uint64_t ck_iters_argmax(const ck_step *s) { return (uint64_t)s->u.argmax.n; }

static uint64_t ck_iters_conv3d(const ck_step *s)
{
    const ck_conv3d_p *c = &s->u.conv3d;
    return (uint64_t)c->k_d * (uint64_t)c->k_h * (uint64_t)c->k_w * (uint64_t)c->in_c;
}

static uint64_t ck_iters_scan(const ck_step *s) { return (uint64_t)s->u.scan.n; }

/* the channel window, clipped to the row */
static uint64_t ck_iters_lrn(const ck_step *s)
{
    uint64_t w = 2 * (uint64_t)(s->u.lrn.radius > 0 ? s->u.lrn.radius : 0) + 1;
    return w < (uint64_t)s->u.lrn.c ? w : (uint64_t)s->u.lrn.c;
}

uint64_t ck_loop_iterations(const ck_step *s)
{
    static uint64_t (*const iters[CK__COUNT])(const ck_step *) = {
#define ITERS(K, name, params, shader, variant, inv, it, tiling) [CK_##K] = ck_iters_##it,
        CK_KINDS(ITERS)
#undef ITERS
    };
    return (unsigned)s->kind < CK__COUNT ? iters[s->kind](s) : 1;
}

float ck_apply_act(int act, float x, float alpha)
{
    switch (act) {
    case CK_ACT_RELU: return x > 0.f ? x : 0.f;
    case CK_ACT_RELU_OP: return x < 0.f ? 0.f : x;
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
#define HOST(K, name, params, shader, variant, inv, iters, tiling) [CK_##K] = ck_host_##name,
        CK_KINDS(HOST)
#undef HOST
    };
    if ((unsigned)s->kind >= CK__COUNT)
        return base_fail(err, SI_ERR_UNSUPPORTED, "no host kernel for %s", ck_kind_name(s->kind));
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0 && !ins[i] && !ck_host_skips_input(s, i, ins))
            return base_fail(err, SI_ERR_ARG, "%s: input %d missing", ck_kind_name(s->kind), i);
    fns[s->kind](s, ins, out);
    return SI_OK;
}

int32_t ck_conv_whole_out(const ck_conv_p *p)
{
    int64_t n = (int64_t)p->n * p->out_h * p->out_w * p->out_c;
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}
