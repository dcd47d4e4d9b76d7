/* The kernels that store float tensors as IEEE half (si_options.precision
 * f16, core/precision.c): every binding core_step_half_ok allows is stored as
 * halves, on random shapes and values, against the host reference run on the
 * same (half-rounded) inputs. A half output must be the host's float32 result
 * rounded to a half: within one half ulp of it (the GPU's float32 arithmetic
 * may differ from the host's in its last bits, and one rounding of that lands
 * on either neighbour), values past the largest half saturated to it. Odd
 * element counts and copies into odd offsets of a tensor other steps wrote
 * check that a store keeps the other half of its word. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"

#define REPS 24
/* the host's and the GPU's float32 may differ by this much (relative, at least 1) */
#define F32_TOL 2e-5

static float round_half(float v) { return io_half_to_float(io_float_to_half(v)); }

/* one half ulp at |v| (the spacing of halves there; 2^-24 below the normals) */
static double half_ulp(double v)
{
    v = fabs(v);
    if (v < 6.103515625e-05)
        return 5.9604644775390625e-08;
    int e;
    frexp(v, &e);
    return ldexp(1.0, e - 11);
}

/* b's values rounded to halves where the step reads binding i as halves */
static core_buf rounded(const core_buf *b, int half)
{
    int64_t n = core_shape_count(&b->shape);
    core_buf r = kt_buf(b->dtype, b->shape.rank, b->shape.d);
    memcpy(r.data, b->data, (size_t)n * CORE_ELEM);
    for (int64_t i = 0; half && i < n; i++)
        ((float *)r.data)[i] = round_half(((float *)r.data)[i]);
    return r;
}

/* Runs s with every float binding its kernel takes as halves stored so, on
 * the GPU and (on the same rounded values) with the host reference, and
 * checks each output element. init: the output's contents before (may be NULL). */
static void half_check(const char *what, int rep, ck_step *s, const core_buf *const *ins,
                       si_dtype out_dt, const core_shape *os, const core_buf *init)
{
    s->half = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0 && ins[i] && ins[i]->dtype == SI_FLOAT32 && core_step_half_ok(s, i))
            s->half |= 1 << i;
    int ho = out_dt == SI_FLOAT32 && core_step_half_ok(s, CK_MAX_IN);
    if (ho)
        s->half |= 1 << CK_MAX_IN;
    assert_true(s->half != 0); /* the case stores something as halves */
    core_buf r[CK_MAX_IN];
    const core_buf *rp[CK_MAX_IN] = {0};
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0 && ins[i]) {
            r[i] = rounded(ins[i], s->half >> i & 1);
            rp[i] = &r[i];
        }
    core_buf h = kt_buf(out_dt, os->rank, os->d), g = kt_buf(out_dt, os->rank, os->d);
    int64_t n = core_shape_count(os);
    if (init) {
        core_buf ri = rounded(init, ho);
        memcpy(h.data, ri.data, (size_t)n * CORE_ELEM);
        memcpy(g.data, ri.data, (size_t)n * CORE_ELEM);
        kt_free(&ri);
    }
    si_error err = {0};
    assert_int_equal(ck_host_run(s, rp, &h, &err), SI_OK);
    assert_int_equal(kt_run_gpu(s, rp, &g), 0);
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (out_dt != SI_FLOAT32) {
            bad += ((int32_t *)h.data)[i] != ((int32_t *)g.data)[i];
            continue;
        }
        double a = ((float *)h.data)[i], b = ((float *)g.data)[i];
        if (isnan(a) && isnan(b))
            continue;
        int ok;
        if (!ho)
            ok = fabs(a - b) <= F32_TOL * fmax(1.0, fabs(a));
        else if (isinf(a) || fabs(a) > 65504.0 + F32_TOL * fabs(a))
            ok = b == (a > 0 ? 65504.0 : -65504.0) || (isinf(a) && a == b);
        else /* b is a half: the one nearest a, or a neighbour of it */
            ok = b == round_half((float)b) && fabs(a - b) <= half_ulp(a) + F32_TOL * fmax(1.0, fabs(a));
        if (!ok && bad++ < 4)
            fprintf(stderr, "%s case %d: element %lld: gpu %.9g host %.9g\n", what, rep, (long long)i, b, a);
    }
    assert_int_equal(bad, 0);
    for (int i = 0; i < s->n_in; i++)
        if (rp[i])
            kt_free(&r[i]);
    kt_free(&h);
    kt_free(&g);
}

static void test_binary(void **state)
{
    (void)state;
    static const int ops[] = {CK_B_ADD, CK_B_SUB, CK_B_MUL, CK_B_DIV, CK_B_MAX, CK_B_MIN, CK_B_POW};
    for (int rep = 0; rep < REPS * 2; rep++) {
        int rank = kt_randint(1, 4), op = ops[rep % 7], big = rep % 5 == 4;
        int64_t od[4], ad[4], bd[4];
        ck_step s = {.kind = CK_BINARY, .n_in = 2, .in = {0, 1}, .out = 2};
        ck_binary_p *p = &s.u.binary;
        p->op = op;
        p->rank = rank;
        int64_t as = 1, bs = 1;
        for (int d = rank - 1; d >= 0; d--) {
            od[d] = ad[d] = kt_randint(1, 9);
            bd[d] = kt_rand() % 3 == 0 ? 1 : od[d]; /* b broadcast along some dims */
            p->out_dim[d] = (int32_t)od[d];
            p->a_stride[d] = (int32_t)as;
            p->b_stride[d] = bd[d] == 1 ? 0 : (int32_t)bs;
            as *= ad[d];
            bs *= bd[d];
        }
        p->count = (int32_t)as;
        /* big: products past the largest half, which saturate */
        float lo = op == CK_B_POW ? 0.1f : big ? 100.f : -4.f, hi = big ? 900.f : 4.f;
        core_buf a = kt_random(SI_FLOAT32, rank, ad, lo, hi);
        core_buf b = kt_random(SI_FLOAT32, rank, bd, op == CK_B_DIV ? 0.5f : lo, hi);
        const core_buf *ins[2] = {&a, &b};
        core_shape os = {.rank = rank};
        for (int d = 0; d < rank; d++)
            os.d[d] = od[d];
        half_check("binary", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&a);
        kt_free(&b);
    }
}

static void test_unary(void **state)
{
    (void)state;
    static const int ops[] = {CK_U_RELU, CK_U_SIGMOID, CK_U_TANH, CK_U_NEG, CK_U_SQRT, CK_U_EXP,
                              CK_U_LOG, CK_U_ABS, CK_U_CAST};
    for (int rep = 0; rep < REPS; rep++) {
        int op = ops[rep % 9];
        int64_t d[1] = {kt_randint(1, 301)};
        ck_step s = {.kind = CK_UNARY, .n_in = 1, .in = {0}, .out = 1};
        s.u.unary.op = op;
        s.u.unary.count = (int32_t)d[0];
        s.u.unary.out_dtype = op == CK_U_CAST ? SI_INT32 : SI_FLOAT32;
        core_buf x = kt_random(SI_FLOAT32, 1, d, op == CK_U_SQRT || op == CK_U_LOG ? 0.01f : -8.f, 8.f);
        const core_buf *ins[1] = {&x};
        core_shape os = {.rank = 1, .d = {d[0]}};
        half_check("unary", rep, &s, ins, s.u.unary.out_dtype, &os, NULL);
        kt_free(&x);
    }
}

static void test_addn(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        int k = kt_randint(2, 8);
        int64_t d[1] = {kt_randint(1, 257)};
        ck_step s = {.kind = CK_ADDN, .n_in = k, .out = k};
        s.u.addn = (ck_addn_p){.n = k, .count = (int32_t)d[0], .dtype = SI_FLOAT32};
        core_buf x[8];
        const core_buf *ins[8];
        for (int i = 0; i < k; i++) {
            s.in[i] = i;
            x[i] = kt_random(SI_FLOAT32, 1, d, -3.f, 3.f);
            ins[i] = &x[i];
        }
        core_shape os = {.rank = 1, .d = {d[0]}};
        half_check("addn", rep, &s, ins, SI_FLOAT32, &os, NULL);
        for (int i = 0; i < k; i++)
            kt_free(&x[i]);
    }
}

/* conv2d and depthwise with valid padding, a bias (float32: not a half binding) and relu */
static void conv_cases(ck_kind kind)
{
    for (int rep = 0; rep < REPS; rep++) {
        ck_conv_p p = {.n = kt_randint(1, 2), .in_h = kt_randint(3, 11), .in_w = kt_randint(3, 11),
                       .k_h = kt_randint(1, 3), .k_w = kt_randint(1, 3), .stride_h = kt_randint(1, 2),
                       .stride_w = kt_randint(1, 2), .dil_h = 1, .dil_w = 1, .has_bias = rep & 1,
                       .act = rep & 2 ? CK_ACT_RELU : CK_ACT_NONE};
        p.in_c = rep % 3 ? 4 * kt_randint(1, 3) : kt_randint(1, 12); /* most vec4-wide */
        p.ch_mult = kind == CK_DWCONV2D ? kt_randint(1, 2) : 1;
        p.out_c = kind == CK_DWCONV2D ? p.in_c * p.ch_mult : rep % 2 ? 4 * kt_randint(1, 3) : kt_randint(1, 9);
        p.out_h = (p.in_h - p.k_h) / p.stride_h + 1;
        p.out_w = (p.in_w - p.k_w) / p.stride_w + 1;
        int64_t xd[] = {p.n, p.in_h, p.in_w, p.in_c};
        int64_t fd[] = {p.k_h, p.k_w, p.in_c, kind == CK_DWCONV2D ? p.ch_mult : p.out_c};
        int64_t bd[] = {p.out_c};
        core_buf x = kt_random(SI_FLOAT32, 4, xd, -1.f, 1.f), f = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
        core_buf b = kt_random(SI_FLOAT32, 1, bd, -1.f, 1.f);
        ck_step s = {.kind = kind, .n_in = 3, .in = {0, 1, p.has_bias ? 2 : -1}, .out = 3};
        s.u.conv = p;
        const core_buf *ins[8] = {&x, &f, p.has_bias ? &b : NULL};
        int64_t od[] = {p.n, p.out_h, p.out_w, p.out_c};
        core_buf res = {0};
        if (kind == CK_CONV2D && rep % 4 >= 2) { /* a fused residual, stored as halves too */
            res = kt_random(SI_FLOAT32, 4, od, -2.f, 2.f);
            for (int i = 3; i < 7; i++)
                s.in[i] = -1;
            s.in[7] = 4;
            s.n_in = 8;
            ins[7] = &res;
            s.u.conv.has_res = 1;
        }
        core_shape os = {.rank = 4, .d = {p.n, p.out_h, p.out_w, p.out_c}};
        half_check(kind == CK_CONV2D ? "conv2d" : "dwconv2d", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&x);
        kt_free(&f);
        kt_free(&b);
        kt_free(&res);
    }
}

/* the transposed convolution (Conv2DBackpropInput) of a VALID forward conv,
 * dy and the filter as halves */
static void test_deconv2d(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        ck_conv_p p = {.n = kt_randint(1, 2), .k_h = kt_randint(1, 3), .k_w = kt_randint(1, 3),
                       .stride_h = kt_randint(1, 2), .stride_w = kt_randint(1, 2), .dil_h = 1, .dil_w = 1,
                       .ch_mult = 1, .act = rep & 2 ? CK_ACT_RELU : CK_ACT_NONE};
        p.out_h = p.k_h + kt_randint(0, 8);
        p.out_w = p.k_w + kt_randint(0, 8);
        p.in_h = (p.out_h - p.k_h) / p.stride_h + 1;
        p.in_w = (p.out_w - p.k_w) / p.stride_w + 1;
        p.in_c = rep % 2 ? 4 * kt_randint(1, 3) : kt_randint(1, 9); /* in fours: four channels an invocation */
        p.out_c = rep % 2 ? 4 * kt_randint(1, 3) : kt_randint(1, 9);
        int64_t dd[] = {p.n, p.in_h, p.in_w, p.in_c}, fd[] = {p.k_h, p.k_w, p.out_c, p.in_c};
        core_buf dy = kt_random(SI_FLOAT32, 4, dd, -1.f, 1.f), f = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
        ck_step s = {.kind = CK_DECONV2D, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.conv = p;
        const core_buf *ins[2] = {&dy, &f};
        core_shape os = {.rank = 4, .d = {p.n, p.out_h, p.out_w, p.out_c}};
        for (int quad = 0; quad < 2; quad++) { /* one output channel an invocation, and four */
            glk_set_quad(kt_gpu, quad);
            half_check("deconv2d", rep, &s, ins, SI_FLOAT32, &os, NULL);
        }
        glk_set_quad(kt_gpu, -1);
        kt_free(&dy);
        kt_free(&f);
    }
}

/* each variant at half: plain, vec (x's four halves from two words, where in_c
 * is a multiple of 4), oc4 (x and the filter so, four outputs in two words, where
 * out_c is one too), tiled, and the device's own choice */
static void test_conv2d(void **state)
{
    (void)state;
    static const char *modes[] = {"plain", "vec", "oc4", "tiled:16,64,2,8,8", ""};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
        si_error err = {0};
        assert_int_equal(glk_set_conv(kt_gpu, modes[m], &err), SI_OK);
        conv_cases(CK_CONV2D);
    }
}

/* one channel an invocation, and four (x, the filter and the output as two words of
 * halves each; glk_set_quad) with a row's loads ahead of their sums and without */
static void test_dwconv2d(void **state)
{
    (void)state;
    static const int vec[3] = {0, 1, 1}, ahead[3] = {0, 0, 1};
    for (int m = 0; m < 3; m++) {
        glk_set_quad(kt_gpu, vec[m]);
        glk_set_ahead(kt_gpu, ahead[m]);
        conv_cases(CK_DWCONV2D);
    }
    glk_set_quad(kt_gpu, -1);
    glk_set_ahead(kt_gpu, -1);
}

static void test_matmul(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        ck_matmul_p p = {.batch = kt_randint(1, 2), .m = kt_randint(1, 13), .n = kt_randint(1, 13),
                         .k = kt_randint(1, 70), .trans_a = rep & 1, .trans_b = rep >> 1 & 1};
        p.a_batch_stride = p.m * p.k;
        p.b_batch_stride = p.k * p.n;
        int64_t ad[] = {p.batch, p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k};
        int64_t bd[] = {p.batch, p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n};
        core_buf a = kt_random(SI_FLOAT32, 3, ad, -1.f, 1.f), b = kt_random(SI_FLOAT32, 3, bd, -1.f, 1.f);
        ck_step s = {.kind = CK_MATMUL, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.matmul = p;
        const core_buf *ins[2] = {&a, &b};
        core_shape os = {.rank = 3, .d = {p.batch, p.m, p.n}};
        half_check("matmul", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&a);
        kt_free(&b);
    }
}

static void test_pool(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        ck_pool_p p = {.is_max = rep & 1, .n = 1, .in_h = kt_randint(2, 12), .in_w = kt_randint(2, 12),
                       .c = kt_randint(1, 9), .k_h = kt_randint(1, 3), .k_w = kt_randint(1, 3),
                       .stride_h = kt_randint(1, 2), .stride_w = kt_randint(1, 2)};
        if (p.k_h > p.in_h)
            p.k_h = p.in_h;
        if (p.k_w > p.in_w)
            p.k_w = p.in_w;
        p.out_h = (p.in_h - p.k_h) / p.stride_h + 1;
        p.out_w = (p.in_w - p.k_w) / p.stride_w + 1;
        int64_t xd[] = {1, p.in_h, p.in_w, p.c};
        core_buf x = kt_random(SI_FLOAT32, 4, xd, -5.f, 5.f);
        ck_step s = {.kind = CK_POOL, .n_in = 1, .in = {0}, .out = 1};
        s.u.pool = p;
        const core_buf *ins[1] = {&x};
        core_shape os = {.rank = 4, .d = {1, p.out_h, p.out_w, p.c}};
        half_check("pool", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&x);
    }
}

static void test_resize(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        ck_resize_p p = {.bilinear = rep & 1, .n = 1, .in_h = kt_randint(1, 9), .in_w = kt_randint(1, 9),
                         .c = kt_randint(1, 5), .out_h = kt_randint(1, 17), .out_w = kt_randint(1, 17),
                         .half_pixel_centers = rep >> 1 & 1};
        int64_t xd[] = {1, p.in_h, p.in_w, p.c};
        core_buf x = kt_random(SI_FLOAT32, 4, xd, -2.f, 2.f);
        ck_step s = {.kind = CK_RESIZE, .n_in = 1, .in = {0}, .out = 1};
        s.u.resize = p;
        const core_buf *ins[1] = {&x};
        core_shape os = {.rank = 4, .d = {1, p.out_h, p.out_w, p.c}};
        half_check("resize", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&x);
    }
}

static void test_gather(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        ck_gather_p p = {.outer = kt_randint(1, 4), .n = kt_randint(1, 9), .inner = kt_randint(1, 7),
                         .k = kt_randint(1, 9)};
        int64_t xd[] = {p.outer, p.n, p.inner}, id[] = {p.k};
        core_buf x = kt_random(SI_FLOAT32, 3, xd, -3.f, 3.f), idx = kt_random(SI_INT32, 1, id, 0, (float)(p.n - 1));
        ck_step s = {.kind = CK_GATHER, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.gather = p;
        const core_buf *ins[2] = {&x, &idx};
        core_shape os = {.rank = 3, .d = {p.outer, p.k, p.inner}};
        half_check("gather", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&x);
        kt_free(&idx);
    }
}

static void test_pad(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        ck_pad_p p = {.rank = 3, .value = kt_randf(-1.f, 1.f)};
        int64_t xd[3];
        for (int d = 0; d < 3; d++) {
            xd[d] = p.in_dim[d] = kt_randint(1, 6);
            p.before[d] = kt_randint(0, 2);
            p.out_dim[d] = p.in_dim[d] + p.before[d] + kt_randint(0, 2);
        }
        core_buf x = kt_random(SI_FLOAT32, 3, xd, -3.f, 3.f);
        ck_step s = {.kind = CK_PAD, .n_in = 1, .in = {0}, .out = 1};
        s.u.pad = p;
        const core_buf *ins[1] = {&x};
        core_shape os = {.rank = 3, .d = {p.out_dim[0], p.out_dim[1], p.out_dim[2]}};
        half_check("pad", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&x);
    }
}

/* Copies of n elements into a tensor already written (a concat's parts, a band
 * of a tiled step) at odd and even offsets: each store writes its half of a
 * word and keeps the other, which holds an element another copy wrote. */
static void test_copy_into(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        int64_t total = kt_randint(2, 301), n = kt_randint(1, (int)total);
        int64_t od[1] = {total}, xd[1] = {kt_randint((int)n, (int)n + 9)};
        ck_step s = {.kind = CK_COPY, .n_in = 1, .in = {0}, .out = 1, .accumulate = 1};
        s.u.copy.rank = 1;
        s.u.copy.dim[0] = (int32_t)n;
        s.u.copy.in_stride[0] = s.u.copy.out_stride[0] = 1;
        s.u.copy.in_offset = kt_randint(0, (int)(xd[0] - n));
        s.u.copy.out_offset = kt_randint(0, (int)(total - n));
        core_buf x = kt_random(SI_FLOAT32, 1, xd, -100.f, 100.f);
        core_buf init = kt_random(SI_FLOAT32, 1, od, -100.f, 100.f);
        const core_buf *ins[1] = {&x};
        core_shape os = {.rank = 1, .d = {total}};
        half_check("copy", rep, &s, ins, SI_FLOAT32, &os, &init);
        kt_free(&x);
        kt_free(&init);
    }
}

/* uint8 weights dequantized into halves */
static void test_dequant(void **state)
{
    (void)state;
    for (int rep = 0; rep < REPS; rep++) {
        int count = kt_randint(1, 513);
        int64_t wd[1] = {(count + 3) / 4};
        core_buf w = kt_random(SI_INT32, 1, wd, -2000000000.f, 2000000000.f);
        ck_step s = {.kind = CK_DEQUANT, .n_in = 1, .in = {0}, .out = 1};
        s.u.dequant = (ck_dequant_p){.count = count, .quant = IO_Q_UINT8, .min = kt_randf(-2.f, 0.f),
                                     .scale = kt_randf(0.001f, 0.05f)};
        const core_buf *ins[1] = {&w};
        core_shape os = {.rank = 1, .d = {count}};
        half_check("dequant", rep, &s, ins, SI_FLOAT32, &os, NULL);
        kt_free(&w);
    }
}

/* The host's half conversion (the tests' reference and the runtime's): ties to
 * even, subnormals, saturation to inf past the largest half, NaN kept. */
static void test_float_to_half(void **state)
{
    (void)state;
    assert_int_equal(io_float_to_half(1.0f), 0x3c00);
    assert_int_equal(io_float_to_half(-2.0f), 0xc000);
    assert_int_equal(io_float_to_half(65504.0f), 0x7bff);
    assert_int_equal(io_float_to_half(65520.0f), 0x7c00);      /* rounds up past the largest */
    assert_int_equal(io_float_to_half(1.0f + 1.0f / 2048), 0x3c00); /* a tie: to even */
    assert_int_equal(io_float_to_half(1.0f + 3.0f / 2048), 0x3c02);
    assert_int_equal(io_float_to_half(5.9604644775390625e-08f), 0x0001); /* the least subnormal */
    assert_int_equal(io_float_to_half(2.9802322387695312e-08f), 0x0000); /* half of it: to even */
    assert_true((io_float_to_half(NAN) & 0x7c00) == 0x7c00 && (io_float_to_half(NAN) & 0x3ff));
    for (uint32_t h = 0; h < 0x10000u; h++) /* every half comes back as itself */
        if ((h & 0x7c00) != 0x7c00 || !(h & 0x3ff))
            assert_int_equal(io_float_to_half(io_half_to_float((uint16_t)h)), h);
}

int main(void)
{
    if (kt_gpu_open() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_to_half), cmocka_unit_test(test_binary),
        cmocka_unit_test(test_unary),         cmocka_unit_test(test_addn),
        cmocka_unit_test(test_conv2d),        cmocka_unit_test(test_dwconv2d), cmocka_unit_test(test_deconv2d),
        cmocka_unit_test(test_matmul),        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_resize),        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_pad),           cmocka_unit_test(test_copy_into),
        cmocka_unit_test(test_dequant),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    kt_gpu_close();
    return rc;
}
