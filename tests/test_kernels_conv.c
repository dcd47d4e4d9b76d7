/* Conv2D, depthwise, transposed conv and matmul kernels against the host
 * reference, on random shapes, strides, dilations, paddings and epilogues. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"

#define TOL 1e-4

static const int all_acts[] = {CK_ACT_NONE, CK_ACT_RELU, CK_ACT_RELU6, CK_ACT_PRELU,
                               CK_ACT_LEAKYRELU, CK_ACT_ELU, CK_ACT_SIGMOID, CK_ACT_TANH, CK_ACT_RELU_OP};
#define N_ACTS ((int)(sizeof all_acts / sizeof all_acts[0]))

/* The epilogue inputs of one case: bias (maybe), PReLU alpha as a tensor of
 * out_c values, of one value, or as the float param. */
typedef struct {
    core_buf bias, alpha;
    int has_bias, act, has_alpha;
    float alpha_f;
    /* clips after it (core/fuse.c's fuse_clip): Minimum/Maximum with scalars */
    int n_clip, clip_op[2];
    core_buf clip[2];
    int hswish; /* or a hard swish: (clip[0] * v) * relu6(v + clip[1]); 2: a hard sigmoid,
                 * relu6(v + clip[1]) * clip[0] */
    int has_scale; /* 1: a per-channel scale before the bias; 2 (forward convs): after it, 3: then
                    * plus shift (input 3), each of those two one value a channel or one for all */
    core_buf scale, shift;
    int has_res; /* Conv2D: a residual of the output's shape added after the bias (res_wire) */
    core_buf res;
} epi_case;

static void epi_make(epi_case *e, int rep, int out_c)
{
    memset(e, 0, sizeof *e);
    e->act = all_acts[rep % N_ACTS];
    e->has_bias = (rep / N_ACTS) % 2 == 0 || kt_rand() % 2;
    e->alpha_f = kt_randf(0.05f, 0.5f);
    int64_t bc = out_c;
    if (e->has_bias)
        e->bias = kt_random(SI_FLOAT32, 1, &bc, -1.f, 1.f);
    if (e->act == CK_ACT_PRELU && kt_rand() % 4 != 0) {
        int64_t ac = kt_rand() % 3 == 0 ? 1 : out_c;
        e->alpha = kt_random(SI_FLOAT32, 1, &ac, -0.5f, 0.5f);
        e->has_alpha = 1;
    }
    e->n_clip = kt_randint(0, 2);
    for (int i = 0; i < e->n_clip; i++) {
        int64_t one = 1;
        e->clip_op[i] = kt_rand() % 2 ? CK_B_MIN : CK_B_MAX;
        e->clip[i] = kt_random(SI_FLOAT32, 1, &one, -0.5f, 0.5f);
    }
    if (kt_rand() % 2) {
        e->has_scale = 1;
        e->scale = kt_random(SI_FLOAT32, 1, &bc, -2.f, 2.f);
    }
    if (e->n_clip == 0 && kt_rand() % 2) {
        int64_t one = 1;
        e->hswish = kt_rand() % 2 ? 1 : 2; /* a hard swish or a hard sigmoid */
        e->clip[0] = kt_random(SI_FLOAT32, 1, &one, 0.1f, 0.3f);
        e->clip[1] = kt_random(SI_FLOAT32, 1, &one, -1.f, 1.f);
    }
}

static void epi_free(epi_case *e)
{
    kt_free(&e->bias);
    kt_free(&e->alpha);
    kt_free(&e->clip[0]);
    kt_free(&e->clip[1]);
    kt_free(&e->scale);
    kt_free(&e->shift);
    kt_free(&e->res);
}

/* On every other case, a Conv2D's fused residual (core/fuse.c fuse_residual):
 * input 7, a tensor of the output's shape added after the bias, before the
 * activation (ins: 8 entries). */
static void res_wire(epi_case *e, ck_step *s, const core_buf **ins, int rep)
{
    if (s->kind != CK_CONV2D || rep % 2 == 0)
        return;
    const ck_conv_p *p = &s->u.conv;
    int64_t od[] = {p->n, p->out_h, p->out_w, p->out_c};
    if (!e->has_res)
        e->res = kt_random(SI_FLOAT32, 4, od, -2.f, 2.f);
    e->has_res = 1;
    for (int i = s->n_in; i < 7; i++) {
        s->in[i] = -1;
        ins[i] = NULL;
    }
    s->n_in = 8;
    s->in[7] = 8;
    ins[7] = &e->res;
    s->u.conv.has_res = 1;
}

/* The epilogue's own parameters (bias, activation, alpha) into p. */
static void epi_params(const epi_case *e, ck_conv_p *p)
{
    p->has_bias = e->has_bias;
    p->act = e->act;
    p->has_alpha_tensor = e->has_alpha;
    p->alpha = e->alpha_f;
}

/* Wires the epilogue into a step with x and filter as inputs 0 and 1 (ins:
 * 7 entries, 4 for CK_DECONV2D). */
static void epi_wire(const epi_case *e, ck_step *s, const core_buf **ins)
{
    s->n_in = e->has_alpha ? 4 : e->has_bias ? 3 : 2;
    s->in[0] = 0;
    s->in[1] = 1;
    s->in[2] = e->has_bias ? 2 : -1;
    s->in[3] = e->has_alpha ? 3 : -1;
    s->out = 4;
    ins[2] = e->has_bias ? &e->bias : NULL;
    ins[3] = e->has_alpha ? &e->alpha : NULL;
    if (s->kind == CK_DECONV2D) /* no clips there (never fused): a 4-input step */
        return;
    int scalars = e->hswish ? 2 : e->n_clip;
    if (scalars || e->has_scale) {
        s->n_in = e->has_scale ? 7 : 4 + scalars;
        for (int i = 0; i < 2; i++) {
            s->in[4 + i] = i < scalars ? 5 + i : -1;
            ins[4 + i] = i < scalars ? &e->clip[i] : NULL;
        }
        s->in[6] = e->has_scale ? 7 : -1;
        ins[6] = e->has_scale ? &e->scale : NULL;
    }
    if (s->kind == CK_MATMUL) {
        s->u.matmul.hswish = e->hswish;
        s->u.matmul.has_scale = e->has_scale;
    } else {
        s->u.conv.hswish = e->hswish;
        s->u.conv.has_scale = e->has_scale;
    }
    int32_t *n = s->kind == CK_MATMUL ? &s->u.matmul.n_clip : &s->u.conv.n_clip;
    int32_t *op = s->kind == CK_MATMUL ? s->u.matmul.clip_op : s->u.conv.clip_op;
    *n = e->n_clip;
    op[0] = e->clip_op[0];
    op[1] = e->clip_op[1];
}

/* TF's padding for one spatial dim: mode 0 VALID, 1 SAME, 2 explicit (random). */
static int pick_pad(int mode, int in, int k, int stride, int dil, int *pad_before, int *out)
{
    int ek = (k - 1) * dil + 1;
    int before = 0, after = 0;
    if (mode == 1) {
        *out = (in + stride - 1) / stride;
        int total = (*out - 1) * stride + ek - in;
        if (total < 0)
            total = 0;
        before = total / 2;
        *pad_before = before;
        return 0;
    }
    if (mode == 2) {
        before = kt_randint(0, k);
        after = kt_randint(0, k);
    }
    int padded = in + before + after;
    if (padded < ek)
        return -1;
    *out = (padded - ek) / stride + 1;
    *pad_before = before;
    return 0;
}

/* A forward conv's random geometry: batch, spatial sizes up to max_hw, kernels up
 * to max_k (k_h up to 5 on every fourth case where max_k is smaller), strides and
 * dilations up to max_sd, padding mode rep % 3; retried until the output is not empty. */
static void random_geometry(ck_conv_p *p, int rep, int max_hw, int max_k, int max_sd)
{
    for (;;) {
        p->n = kt_randint(1, 2);
        p->in_h = kt_randint(1, max_hw);
        p->in_w = kt_randint(1, max_hw);
        p->k_h = kt_randint(1, rep % 4 == 0 && max_k < 5 ? 5 : max_k);
        p->k_w = kt_randint(1, max_k);
        p->stride_h = kt_randint(1, max_sd);
        p->stride_w = kt_randint(1, max_sd);
        p->dil_h = kt_randint(1, 2);
        p->dil_w = kt_randint(1, 2);
        int pt, pl, oh, ow;
        if (pick_pad(rep % 3, p->in_h, p->k_h, p->stride_h, p->dil_h, &pt, &oh) == 0 &&
            pick_pad(rep % 3, p->in_w, p->k_w, p->stride_w, p->dil_w, &pl, &ow) == 0) {
            p->pad_top = pt;
            p->pad_left = pl;
            p->out_h = oh;
            p->out_w = ow;
            return;
        }
    }
}

static void check(const char *what, int rep, double e)
{
    if (!(e >= 0 && e <= TOL))
        fprintf(stderr, "%s case %d: error %g\n", what, rep, e);
    assert_true(e >= 0 && e <= TOL);
}

/* Forward convs (CK_CONV2D, CK_DWCONV2D). */
static void conv_cases(ck_kind kind, int reps)
{
    for (int rep = 0; rep < reps; rep++) {
        ck_conv_p p = {0};
        int in_c, mult = 1, out_c;
        do /* half the depthwise cases 3x3 (its loads ahead on GPUs) */
            random_geometry(&p, rep, 17, 5, 3);
        while (kind == CK_DWCONV2D && rep % 2 == 0 && (p.k_h != 3 || p.k_w != 3));
        in_c = kt_randint(1, kind == CK_CONV2D ? 9 : 12);
        if (kind == CK_DWCONV2D) {
            mult = kt_randint(1, 3);
            out_c = in_c * mult;
        } else {
            out_c = kt_randint(1, 9);
        }
        p.in_c = in_c;
        p.out_c = out_c;
        p.ch_mult = mult;
        epi_case e;
        epi_make(&e, rep, out_c);
        if (e.has_bias && !e.has_alpha && rep % 3 != 0) { /* core/fuse.c's scale after the bias */
            int64_t c1 = kt_rand() % 3 ? out_c : 1, c2 = kt_rand() % 3 ? out_c : 1;
            kt_free(&e.scale);
            e.scale = kt_random(SI_FLOAT32, 1, &c1, -2.f, 2.f);
            e.has_scale = 2 + kt_rand() % 2;
            if (e.has_scale == 3)
                e.shift = kt_random(SI_FLOAT32, 1, &c2, -1.f, 1.f);
        }
        epi_params(&e, &p);

        int64_t xd[] = {p.n, p.in_h, p.in_w, in_c};
        int64_t fd[] = {p.k_h, p.k_w, in_c, kind == CK_DWCONV2D ? mult : out_c};
        core_buf x = kt_random(SI_FLOAT32, 4, xd, -1.f, 1.f);
        core_buf f = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
        ck_step s = {.kind = kind};
        s.u.conv = p;
        const core_buf *ins[8] = {&x, &f, NULL, NULL, NULL, NULL, NULL, NULL};
        epi_wire(&e, &s, ins);
        if (e.has_scale == 3) { /* the shift in alpha's place */
            s.in[3] = 3;
            ins[3] = &e.shift;
        }
        res_wire(&e, &s, ins, rep);
        core_shape os = {.rank = 4, .d = {p.n, p.out_h, p.out_w, out_c}};
        check(kind == CK_CONV2D ? "conv2d" : "dwconv2d", rep,
              kt_compare(&s, ins, SI_FLOAT32, &os, NULL));
        if (kind == CK_DWCONV2D) /* its taps' loads ahead of its sums or not: the same bits */
            assert_int_equal(kt_same_ahead(&s, ins, SI_FLOAT32, &os), 0);
        /* compiled for its epilogue or reading it from P: the same bits */
        assert_int_equal(kt_same_epi(&s, ins, SI_FLOAT32, &os), 0);
        kt_free(&x);
        kt_free(&f);
        epi_free(&e);
    }
}

/* A context holding as many programs as glk_set_epi_room allows: new epilogues take
 * the program that reads P (one program, not one each), with the same bits as those
 * compiled for them; with room, each epilogue its own program (so that this test
 * fails where the room is not kept). Runs first, before any conv2d program
 * compiled for an epilogue. */
static void test_epi_room(void **state)
{
    (void)state;
    enum { N = 4 };
    ck_conv_p p = {0};
    random_geometry(&p, 1, 9, 3, 2);
    p.in_c = kt_randint(1, 6);
    p.out_c = kt_randint(2, 6);
    p.ch_mult = 1;
    int64_t xd[] = {p.n, p.in_h, p.in_w, p.in_c}, fd[] = {p.k_h, p.k_w, p.in_c, p.out_c};
    core_buf x = kt_random(SI_FLOAT32, 4, xd, -1.f, 1.f), f = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
    core_shape os = {.rank = 4, .d = {p.n, p.out_h, p.out_w, p.out_c}};
    for (int full = 1; full >= 0; full--) {
        uint64_t loaded, compiled;
        glk_program_counts(kt_gpu, &loaded, &compiled);
        uint64_t before = loaded + compiled;
        glk_set_epi_room(kt_gpu, full ? (int)before : -1);
        for (int k = 0; k < N; k++) {
            epi_case e;
            epi_make(&e, k, p.out_c); /* N different activations */
            ck_step s = {.kind = CK_CONV2D};
            s.u.conv = p;
            epi_params(&e, &s.u.conv);
            const core_buf *ins[8] = {&x, &f, NULL, NULL, NULL, NULL, NULL, NULL};
            epi_wire(&e, &s, ins);
            assert_int_equal(kt_same_epi(&s, ins, SI_FLOAT32, &os), 0);
            epi_free(&e);
        }
        glk_program_counts(kt_gpu, &loaded, &compiled);
        if (full)
            assert_true(loaded + compiled <= before + 1);
        else
            assert_true(loaded + compiled >= before + N);
    }
    glk_set_epi_room(kt_gpu, -1);
    kt_free(&x);
    kt_free(&f);
}

static void test_conv2d(void **state)
{
    (void)state;
    conv_cases(CK_CONV2D, 48);
}

static void test_dwconv2d(void **state)
{
    (void)state;
    conv_cases(CK_DWCONV2D, 48);
}

/* Depthwise convs four channels an invocation (glk_set_quad; dwconv2d.comp OPC 1: ch_mult
 * 1, channels in fours), with a row's loads ahead of its sums (3 and 5 wide) and without:
 * bitwise the one-channel kernel on random geometries and epilogues, and within TOL of
 * the host. */
static void test_dwconv2d_vec(void **state)
{
    (void)state;
    for (int rep = 0; rep < 30; rep++) {
        ck_conv_p p = {0};
        do /* a third 3x3, a third 5x5 (the rows loaded ahead), the rest any size */
            random_geometry(&p, rep, 20, rep % 3 == 2 ? 7 : 5, 2);
        while ((rep % 3 == 0 && (p.k_h != 3 || p.k_w != 3)) || (rep % 3 == 1 && (p.k_h != 5 || p.k_w != 5)));
        p.in_c = p.out_c = 4 * kt_randint(1, 16);
        p.ch_mult = 1;
        epi_case e;
        epi_make(&e, rep, p.out_c);
        epi_params(&e, &p);
        int64_t xd[] = {p.n, p.in_h, p.in_w, p.in_c}, fd[] = {p.k_h, p.k_w, p.in_c, 1};
        core_buf x = kt_random(SI_FLOAT32, 4, xd, -1.f, 1.f), f = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
        ck_step s = {.kind = CK_DWCONV2D};
        s.u.conv = p;
        const core_buf *ins[8] = {&x, &f, NULL, NULL, NULL, NULL, NULL, NULL};
        epi_wire(&e, &s, ins);
        core_shape os = {.rank = 4, .d = {p.n, p.out_h, p.out_w, p.out_c}};
        core_buf y[3];
        static const int vec[3] = {0, 1, 1}, ahead[3] = {0, 0, 1};
        for (int m = 0; m < 3; m++) {
            y[m] = kt_buf(SI_FLOAT32, 4, os.d);
            glk_set_quad(kt_gpu, vec[m]);
            glk_set_ahead(kt_gpu, ahead[m]);
            assert_int_equal(kt_run_gpu(&s, ins, &y[m]), 0);
            if (m == 1)
                check("dwconv2d four channels", rep, kt_compare(&s, ins, SI_FLOAT32, &os, NULL));
        }
        glk_set_quad(kt_gpu, -1);
        glk_set_ahead(kt_gpu, -1);
        size_t bytes = (size_t)core_shape_count(&os) * CORE_ELEM;
        for (int m = 1; m < 3; m++) {
            if (memcmp(y[0].data, y[m].data, bytes) != 0)
                fprintf(stderr, "dwconv2d case %d (%dx%d, %d channels): four channels%s not one's bits\n",
                        rep, p.k_h, p.k_w, p.in_c, ahead[m] ? " ahead" : "");
            assert_memory_equal(y[0].data, y[m].data, bytes);
        }
        for (int m = 0; m < 3; m++)
            kt_free(&y[m]);
        kt_free(&x);
        kt_free(&f);
        epi_free(&e);
    }
}

/* conv2d's variants (glkernels/glk_program.c conv_variant, forced with glk_set_conv) on
 * bigger random shapes than conv_cases', so that tiles have ragged edges and k runs
 * across several staged chunks: vec, every tiled variant and the device's own
 * choice bitwise the plain one (each output sums its taps in the same order), the
 * plain and split ones (runs of taps added in a tree) within TOL of the host; and
 * kinds that are none of them refused by name. */
#define VAR_REPS 20
static void test_conv2d_variants(void **state)
{
    (void)state;
    /* "+ahead": the loads of a round before its sums (glk_set_ahead; the rest without) */
    static const char *modes[] = {"plain", "vec", "tiled:64,64,8,8,16", "tiled:32,32,4,4,16",
                                  "tiled:16,64,2,8,8", "", "split:4,8,1000000000",
                                  "split:1,64,1000000000", "plain+ahead", "vec+ahead", "oc4", "oc4+ahead",
                                  "gpu", "gpu+ahead"};
    enum { N_MODES = sizeof modes / sizeof modes[0] };
    ck_step steps[VAR_REPS];
    epi_case epis[VAR_REPS];
    core_buf xs[VAR_REPS], fs[VAR_REPS], outs[N_MODES][VAR_REPS];
    for (int rep = 0; rep < VAR_REPS; rep++) {
        ck_conv_p p = {0};
        random_geometry(&p, rep, 24, 3, 2);
        p.in_c = rep % 2 ? 4 * kt_randint(1, 12) : kt_randint(1, 48); /* half of them vec4-wide */
        p.out_c = rep % 3 ? 4 * kt_randint(1, 20) : kt_randint(1, 80); /* most in fours (oc4) */
        p.ch_mult = 1;
        /* a third of them parts of a conv with GLK_OC4_OUTPUTS outputs or more: the GPU's
         * choice takes oc4 for those */
        p.whole_out = rep % 3 == 1 ? 1 << 20 : 0;
        epi_make(&epis[rep], rep, p.out_c);
        epi_params(&epis[rep], &p);
        int64_t xd[] = {p.n, p.in_h, p.in_w, p.in_c}, fd[] = {p.k_h, p.k_w, p.in_c, p.out_c};
        xs[rep] = kt_random(SI_FLOAT32, 4, xd, -1.f, 1.f);
        fs[rep] = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
        steps[rep] = (ck_step){.kind = CK_CONV2D};
        steps[rep].u.conv = p;
    }
    for (int m = 0; m < N_MODES; m++) {
        si_error err = {0};
        char mode[64];
        snprintf(mode, sizeof mode, "%s", modes[m]);
        char *plus = strchr(mode, '+');
        glk_set_ahead(kt_gpu, plus != NULL);
        if (plus)
            *plus = 0;
        assert_int_equal(glk_set_conv(kt_gpu, mode, &err), SI_OK); /* "": the device's own */
        for (int rep = 0; rep < VAR_REPS; rep++) {
            const ck_conv_p *p = &steps[rep].u.conv;
            const core_buf *ins[8] = {&xs[rep], &fs[rep], NULL, NULL, NULL, NULL, NULL, NULL};
            epi_wire(&epis[rep], &steps[rep], ins);
            res_wire(&epis[rep], &steps[rep], ins, rep);
            int64_t od[] = {p->n, p->out_h, p->out_w, p->out_c};
            outs[m][rep] = kt_buf(SI_FLOAT32, 4, od);
            assert_int_equal(kt_run_gpu(&steps[rep], ins, &outs[m][rep]), 0);
            /* each variant compiled for its epilogue or reading it from P: the same bits */
            assert_int_equal(kt_same_epi(&steps[rep], ins, SI_FLOAT32, &outs[m][rep].shape), 0);
            if (!strncmp(modes[m], "split", 5) || !strcmp(modes[m], "plain")) {
                char what[64];
                snprintf(what, sizeof what, "conv2d %s", modes[m]);
                check(what, rep, kt_compare(&steps[rep], ins, SI_FLOAT32, &outs[m][rep].shape, NULL));
            }
        }
    }
    for (int rep = 0; rep < VAR_REPS; rep++) {
        size_t bytes = (size_t)core_shape_count(&outs[0][rep].shape) * CORE_ELEM;
        for (int m = 1; m < N_MODES; m++) {
            if (!strncmp(modes[m], "split", 5))
                continue;
            if (memcmp(outs[0][rep].data, outs[m][rep].data, bytes) != 0)
                fprintf(stderr, "conv2d %s case %d: not the plain variant's bits\n",
                        modes[m][0] ? modes[m] : "(default)", rep);
            assert_memory_equal(outs[0][rep].data, outs[m][rep].data, bytes);
        }
        for (int m = 0; m < N_MODES; m++)
            kt_free(&outs[m][rep]);
        kt_free(&xs[rep]);
        kt_free(&fs[rep]);
        epi_free(&epis[rep]);
    }
    si_error err = {0};
    glk_set_ahead(kt_gpu, -1);
    assert_int_equal(glk_set_conv(kt_gpu, NULL, &err), SI_OK);
    static const char *bad[] = {"tiles", "tiled:64,64,8,8", "tiled:64,64,4,4,16", "tiled:64,64,8,8,16x",
                                "split:0,8,100", "split:8,128,100", "split:8,8"};
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        assert_int_equal(glk_set_conv(NULL, bad[i], &err), SI_ERR_ARG);
        assert_non_null(strstr(err.message, bad[i]));
    }
}

/* A known small case: 3x3 SAME conv of a ramp with an all-ones filter sums
 * each pixel's neighbourhood; checks the host reference itself. */
static void test_conv2d_known(void **state)
{
    (void)state;
    int64_t xd[] = {1, 3, 3, 1}, fd[] = {3, 3, 1, 1};
    core_buf x = kt_buf(SI_FLOAT32, 4, xd), f = kt_buf(SI_FLOAT32, 4, fd);
    for (int i = 0; i < 9; i++) {
        ((float *)x.data)[i] = (float)(i + 1);
        ((float *)f.data)[i] = 1.f;
    }
    ck_step s = {.kind = CK_CONV2D, .n_in = 2, .in = {0, 1}, .out = 2};
    s.u.conv = (ck_conv_p){.n = 1, .in_h = 3, .in_w = 3, .in_c = 1, .out_h = 3, .out_w = 3,
                           .out_c = 1, .k_h = 3, .k_w = 3, .stride_h = 1, .stride_w = 1,
                           .dil_h = 1, .dil_w = 1, .pad_top = 1, .pad_left = 1, .ch_mult = 1};
    const core_buf *ins[] = {&x, &f};
    core_buf y = kt_buf(SI_FLOAT32, 4, xd);
    si_error err = {0};
    assert_int_equal(ck_host_run(&s, ins, &y, &err), SI_OK);
    static const float want[] = {12, 21, 16, 27, 45, 33, 24, 39, 28};
    for (int i = 0; i < 9; i++)
        assert_true(((float *)y.data)[i] == want[i]);
    assert_true(kt_compare(&s, ins, SI_FLOAT32, &y.shape, NULL) == 0);
    kt_free(&x);
    kt_free(&f);
    kt_free(&y);
}

/* Conv2DBackpropInput: pick the deconv output (the forward conv's input), derive
 * dy's size from the forward conv. */
static void test_deconv2d(void **state)
{
    (void)state;
    for (int rep = 0; rep < 48; rep++) {
        ck_conv_p p = {0};
        for (;;) {
            p.n = kt_randint(1, 2);
            p.out_h = kt_randint(1, 17);
            p.out_w = kt_randint(1, 17);
            p.k_h = kt_randint(1, 5);
            p.k_w = kt_randint(1, 5);
            p.stride_h = kt_randint(1, 3);
            p.stride_w = kt_randint(1, 3);
            p.dil_h = rep % 4 == 3 ? 2 : 1; /* the kernel takes dilations; lowering passes 1 */
            p.dil_w = rep % 4 == 3 ? kt_randint(1, 2) : 1;
            int mode = rep % 3, pt, pl, fh, fw;
            if (pick_pad(mode, p.out_h, p.k_h, p.stride_h, p.dil_h, &pt, &fh) == 0 &&
                pick_pad(mode, p.out_w, p.k_w, p.stride_w, p.dil_w, &pl, &fw) == 0) {
                p.pad_top = pt;
                p.pad_left = pl;
                p.in_h = fh;
                p.in_w = fw;
                break;
            }
        }
        int fours = rep % 2; /* channels in fours: four output channels an invocation */
        p.in_c = fours ? 4 * kt_randint(1, 4) : kt_randint(1, 9);
        p.out_c = fours ? 4 * kt_randint(1, 4) : kt_randint(1, 9);
        p.ch_mult = 1;
        epi_case e;
        epi_make(&e, rep, p.out_c);
        epi_params(&e, &p);
        int64_t dd[] = {p.n, p.in_h, p.in_w, p.in_c};
        int64_t fd[] = {p.k_h, p.k_w, p.out_c, p.in_c};
        core_buf dy = kt_random(SI_FLOAT32, 4, dd, -1.f, 1.f);
        core_buf f = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
        ck_step s = {.kind = CK_DECONV2D};
        s.u.conv = p;
        const core_buf *ins[4] = {&dy, &f, NULL, NULL};
        epi_wire(&e, &s, ins);
        core_shape os = {.rank = 4, .d = {p.n, p.out_h, p.out_w, p.out_c}};
        check("deconv2d", rep, kt_compare(&s, ins, SI_FLOAT32, &os, NULL));
        int same = kt_same_quad(&s, ins, SI_FLOAT32, &os);
        if (same)
            fprintf(stderr, "deconv2d case %d (%d -> %d channels): four output channels an invocation %s\n",
                    rep, p.in_c, p.out_c, same < 0 ? "failed" : "not one's bits");
        assert_int_equal(same, 0);
        kt_free(&dy);
        kt_free(&f);
        epi_free(&e);
    }
}

/* The transposed conv is the adjoint of the forward conv: <conv(x), dy> equals
 * <x, deconv(dy)> for the same geometry. Ties the two host references together. */
static void test_deconv2d_adjoint(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++) {
        ck_conv_p p = {0};
        int fh, fw, pt, pl;
        int h, w;
        do {
            h = kt_randint(1, 12);
            w = kt_randint(1, 12);
            p.k_h = kt_randint(1, 4);
            p.k_w = kt_randint(1, 4);
            p.stride_h = kt_randint(1, 3);
            p.stride_w = kt_randint(1, 3);
            p.dil_h = p.dil_w = 1;
        } while (pick_pad(rep % 3, h, p.k_h, p.stride_h, 1, &pt, &fh) != 0 ||
                 pick_pad(rep % 3, w, p.k_w, p.stride_w, 1, &pl, &fw) != 0);
        int ci = kt_randint(1, 5), co = kt_randint(1, 5);
        ck_conv_p fwd = {.n = 1, .in_h = h, .in_w = w, .in_c = ci, .out_h = fh, .out_w = fw,
                         .out_c = co, .k_h = p.k_h, .k_w = p.k_w, .stride_h = p.stride_h,
                         .stride_w = p.stride_w, .dil_h = 1, .dil_w = 1, .pad_top = pt,
                         .pad_left = pl, .ch_mult = 1};
        ck_conv_p bwd = fwd;
        bwd.in_h = fh;
        bwd.in_w = fw;
        bwd.in_c = co;
        bwd.out_h = h;
        bwd.out_w = w;
        bwd.out_c = ci;
        int64_t xd[] = {1, h, w, ci}, yd[] = {1, fh, fw, co}, fd[] = {p.k_h, p.k_w, ci, co};
        core_buf x = kt_random(SI_FLOAT32, 4, xd, -1.f, 1.f);
        core_buf dy = kt_random(SI_FLOAT32, 4, yd, -1.f, 1.f);
        core_buf f = kt_random(SI_FLOAT32, 4, fd, -1.f, 1.f);
        core_buf y = kt_buf(SI_FLOAT32, 4, yd), dx = kt_buf(SI_FLOAT32, 4, xd);
        ck_step sf = {.kind = CK_CONV2D, .n_in = 2, .in = {0, 1}, .out = 2};
        ck_step sb = {.kind = CK_DECONV2D, .n_in = 2, .in = {0, 1}, .out = 2};
        sf.u.conv = fwd;
        sb.u.conv = bwd;
        const core_buf *inf[] = {&x, &f}, *inb[] = {&dy, &f};
        ck_host_conv2d(&sf, inf, &y);
        ck_host_deconv2d(&sb, inb, &dx);
        double l = 0, r = 0, mag = 0;
        for (int64_t i = 0; i < core_shape_count(&y.shape); i++) {
            l += (double)((float *)y.data)[i] * ((float *)dy.data)[i];
            mag += fabs((double)((float *)y.data)[i] * ((float *)dy.data)[i]);
        }
        for (int64_t i = 0; i < core_shape_count(&x.shape); i++)
            r += (double)((float *)x.data)[i] * ((float *)dx.data)[i];
        assert_true(fabs(l - r) <= 1e-4 * fmax(1.0, mag));
        kt_free(&x);
        kt_free(&dy);
        kt_free(&f);
        kt_free(&y);
        kt_free(&dx);
    }
}

static void test_matmul(void **state)
{
    (void)state;
    for (int rep = 0; rep < 64; rep++) {
        ck_matmul_p p = {0};
        p.batch = kt_randint(1, 3);
        p.m = kt_randint(1, 17);
        p.n = kt_randint(1, 17);
        p.k = rep % 5 == 4 ? kt_randint(49, 130) : kt_randint(1, 17); /* several tfjs blocks */
        if (rep % 5 == 3) /* a dense head: few outputs, a long sum (run wide), past 64 blocks at times */
            p.m = 1, p.k = kt_randint(192, rep % 3 ? 1200 : 3500);
        p.trans_a = rep & 1;
        p.trans_b = (rep >> 1) & 1;
        int bcast = (rep >> 2) % 3; /* 0 none, 1 a broadcast, 2 b broadcast */
        int64_t ba = bcast == 1 ? 1 : p.batch, bb = bcast == 2 ? 1 : p.batch;
        p.a_batch_stride = ba == 1 ? 0 : p.m * p.k;
        p.b_batch_stride = bb == 1 ? 0 : p.k * p.n;
        epi_case e;
        epi_make(&e, rep, p.n);
        p.has_bias = e.has_bias; /* (a matmul's: the same fields as a conv's) */
        p.act = e.act;
        p.has_alpha_tensor = e.has_alpha;
        p.alpha = e.alpha_f;
        int64_t ad[] = {ba, p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k};
        int64_t bd[] = {bb, p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n};
        core_buf a = kt_random(SI_FLOAT32, 3, ad, -1.f, 1.f);
        core_buf b = kt_random(SI_FLOAT32, 3, bd, -1.f, 1.f);
        ck_step s = {.kind = CK_MATMUL};
        s.u.matmul = p;
        const core_buf *ins[7] = {&a, &b, NULL, NULL, NULL, NULL, NULL};
        epi_wire(&e, &s, ins);
        core_shape os = {.rank = 3, .d = {p.batch, p.m, p.n}};
        check("matmul", rep, kt_compare(&s, ins, SI_FLOAT32, &os, NULL));
        assert_int_equal(kt_same_ahead(&s, ins, SI_FLOAT32, &os), 0); /* loads ahead or not: the same bits */
        assert_int_equal(kt_same_epi(&s, ins, SI_FLOAT32, &os), 0);  /* compiled for its epilogue or not */
        kt_free(&a);
        kt_free(&b);
        epi_free(&e);
    }
}

/* A matmul of few outputs and a long sum runs wide (a workgroup an output,
 * an invocation a block of 48: glk_program.c glk_matmul_wide): bitwise the same as
 * the kernel run one invocation an output, here the first row of a product
 * with too many outputs to run wide (129 x 128), for one round of blocks and
 * more than 64 (two), each operand transposed or not, with a bias and ReLU. */
static void test_matmul_wide(void **state)
{
    (void)state;
    const int ks[] = {200, 1152, 3200};
    for (int rep = 0; rep < 4; rep++) {
        int m = 129, n = 128, k = ks[rep % 3], ta = rep & 1, tb = rep >> 1 & 1;
        int64_t ad[] = {1, ta ? k : m, ta ? m : k}, bd[] = {1, tb ? n : k, tb ? k : n}, biasd[] = {n};
        int64_t a1d[] = {1, ta ? k : 1, ta ? 1 : k};
        core_buf a = kt_random(SI_FLOAT32, 3, ad, -1.f, 1.f), b = kt_random(SI_FLOAT32, 3, bd, -1.f, 1.f);
        core_buf bias = kt_random(SI_FLOAT32, 1, biasd, -1.f, 1.f), a1 = kt_buf(SI_FLOAT32, 3, a1d);
        for (int kk = 0; kk < k; kk++) /* a's first row */
            ((float *)a1.data)[kk] = ((float *)a.data)[ta ? (int64_t)kk * m : kk];
        ck_step s = {.kind = CK_MATMUL, .n_in = 3, .in = {0, 1, 2}, .out = 3};
        s.u.matmul = (ck_matmul_p){.batch = 1, .m = m, .n = n, .k = k, .trans_a = ta, .trans_b = tb,
                                   .has_bias = 1, .act = CK_ACT_RELU};
        int64_t od[] = {1, m, n}, o1d[] = {1, 1, n};
        core_buf y = kt_buf(SI_FLOAT32, 3, od), y1 = kt_buf(SI_FLOAT32, 3, o1d);
        const core_buf *ins[] = {&a, &b, &bias}, *ins1[] = {&a1, &b, &bias};
        assert_int_equal(kt_run_gpu(&s, ins, &y), 0);
        ck_step s1 = s;
        s1.u.matmul.m = 1;
        assert_int_equal(kt_run_gpu(&s1, ins1, &y1), 0);
        assert_memory_equal(y1.data, y.data, (size_t)n * CORE_ELEM);
        core_shape os = {.rank = 3, .d = {1, 1, n}};
        check("matmul wide", rep, kt_compare(&s1, ins1, SI_FLOAT32, &os, NULL));
        kt_free(&a), kt_free(&b), kt_free(&bias), kt_free(&a1), kt_free(&y), kt_free(&y1);
    }
}

/* Host matmul against a plain double-precision product: catches index slips
 * that host and GPU could share. */
static void test_matmul_known(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        int m = kt_randint(1, 9), n = kt_randint(1, 9), k = kt_randint(1, 70);
        int ta = rep & 1, tb = (rep >> 1) & 1;
        int64_t ad[] = {ta ? k : m, ta ? m : k}, bd[] = {tb ? n : k, tb ? k : n}, od[] = {m, n};
        core_buf a = kt_random(SI_FLOAT32, 2, ad, -1.f, 1.f);
        core_buf b = kt_random(SI_FLOAT32, 2, bd, -1.f, 1.f);
        core_buf y = kt_buf(SI_FLOAT32, 2, od);
        ck_step s = {.kind = CK_MATMUL, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.matmul = (ck_matmul_p){.batch = 1, .m = m, .n = n, .k = k, .trans_a = ta,
                                   .trans_b = tb};
        const core_buf *ins[] = {&a, &b};
        ck_host_matmul(&s, ins, &y);
        const float *A = a.data, *B = b.data;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double ref = 0;
                for (int kk = 0; kk < k; kk++)
                    ref += (double)(ta ? A[kk * m + i] : A[i * k + kk]) *
                           (tb ? B[j * k + kk] : B[kk * n + j]);
                assert_true(fabs(ref - ((float *)y.data)[i * n + j]) <= 1e-5 * fmax(1, fabs(ref)));
            }
        kt_free(&a);
        kt_free(&b);
        kt_free(&y);
    }
}

/* int32 matmul: GPU against the host, and the host against a plain int64 loop,
 * with values whose products and sums stay below 2^24 (where the float shader
 * is exact); then tfjs's int32 wrap of a sum beyond 2^31, host only. */
static void test_matmul_int(void **state)
{
    (void)state;
    for (int rep = 0; rep < 32; rep++) {
        ck_matmul_p p = {0};
        p.batch = kt_randint(1, 3);
        p.m = kt_randint(1, 13);
        p.n = kt_randint(1, 13);
        p.k = rep % 4 == 3 ? kt_randint(49, 130) : kt_randint(1, 17);
        p.trans_a = rep & 1;
        p.trans_b = (rep >> 1) & 1;
        int bcast = (rep >> 2) % 3;
        int64_t ba = bcast == 1 ? 1 : p.batch, bb = bcast == 2 ? 1 : p.batch;
        p.a_batch_stride = ba == 1 ? 0 : p.m * p.k;
        p.b_batch_stride = bb == 1 ? 0 : p.k * p.n;
        int64_t ad[] = {ba, p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k};
        int64_t bd[] = {bb, p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n};
        core_buf a = kt_random(SI_INT32, 3, ad, -300, 300);
        core_buf b = kt_random(SI_INT32, 3, bd, -300, 300);
        ck_step s = {.kind = CK_MATMUL, .n_in = 2, .in = {0, 1, -1, -1}, .out = 2};
        s.u.matmul = p;
        const core_buf *ins[7] = {&a, &b, NULL, NULL, NULL, NULL, NULL};
        core_shape os = {.rank = 3, .d = {p.batch, p.m, p.n}};
        double e = kt_compare(&s, ins, SI_INT32, &os, NULL);
        if (e != 0)
            fprintf(stderr, "matmul int rep %d: error %g\n", rep, e);
        assert_true(e == 0);
        core_buf y = kt_buf(SI_INT32, 3, os.d);
        ck_host_matmul(&s, ins, &y);
        const int32_t *A = a.data, *B = b.data, *Y = y.data;
        for (int bi = 0; bi < p.batch; bi++)
            for (int i = 0; i < p.m; i++)
                for (int j = 0; j < p.n; j++) {
                    const int32_t *ab = A + bi * p.a_batch_stride, *bbp = B + bi * p.b_batch_stride;
                    int64_t ref = 0;
                    for (int kk = 0; kk < p.k; kk++)
                        ref += (int64_t)(p.trans_a ? ab[kk * p.m + i] : ab[i * p.k + kk]) *
                               (p.trans_b ? bbp[j * p.k + kk] : bbp[kk * p.n + j]);
                    assert_true(ref == Y[(bi * p.m + i) * p.n + j]);
                }
        kt_free(&a);
        kt_free(&b);
        kt_free(&y);
    }
    /* 3 · 2^30 wraps to -2^30 in tfjs's Int32Array */
    int64_t ad[] = {1, 3}, bd[] = {3, 1}, od[] = {1, 1};
    core_buf a = kt_buf(SI_INT32, 2, ad), b = kt_buf(SI_INT32, 2, bd), y = kt_buf(SI_INT32, 2, od);
    for (int i = 0; i < 3; i++) {
        ((int32_t *)a.data)[i] = 1 << 29;
        ((int32_t *)b.data)[i] = 2;
    }
    ck_step s = {.kind = CK_MATMUL, .n_in = 2, .in = {0, 1, -1, -1}, .out = 2};
    s.u.matmul = (ck_matmul_p){.batch = 1, .m = 1, .n = 1, .k = 3};
    const core_buf *ins[] = {&a, &b};
    ck_host_matmul(&s, ins, &y);
    assert_int_equal(((int32_t *)y.data)[0], -(1 << 30));
    kt_free(&a);
    kt_free(&b);
    kt_free(&y);
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* first: no conv2d program compiled for an epilogue yet */
        cmocka_unit_test(test_epi_room),
        cmocka_unit_test(test_conv2d_known),  cmocka_unit_test(test_conv2d),
        cmocka_unit_test(test_conv2d_variants),
        cmocka_unit_test(test_dwconv2d),      cmocka_unit_test(test_dwconv2d_vec),      cmocka_unit_test(test_deconv2d),
        cmocka_unit_test(test_deconv2d_adjoint), cmocka_unit_test(test_matmul), cmocka_unit_test(test_matmul_wide),
        cmocka_unit_test(test_matmul_known),
        cmocka_unit_test(test_matmul_int),
    };
    return cmocka_run_group_tests_name("kernels_conv", tests, setup, teardown);
}
