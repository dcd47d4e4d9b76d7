/* Conv3D, Dilation2D and MaxPoolWithArgmax's index kernels against the host
 * reference, on random shapes, strides, rates and paddings, with ties and
 * NaNs; and the index formula on a case worked by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"

static void check(const char *what, int k, double e, double tol)
{
    if (!(e >= 0 && e <= tol))
        fprintf(stderr, "%s case %d: error %g\n", what, k, e);
    assert_true(e >= 0 && e <= tol);
}

/* TF's SAME / VALID output size and top padding, with an effective window k. */
static void out_dim(int in, int k, int s, int same, int *out, int *pad)
{
    if (same) {
        *out = (in + s - 1) / s;
        int total = (*out - 1) * s + k - in;
        *pad = total > 0 ? total / 2 : 0;
    } else {
        *out = (in - k) / s + 1;
        *pad = 0;
    }
}

static void test_conv3d(void **state)
{
    (void)state;
    for (int t = 0; t < 32; t++) {
        int same = t & 1, dilate = (t >> 1) & 1;
        int kd = kt_randint(1, 3), kh = kt_randint(1, 3), kw = kt_randint(1, 3);
        int sd = dilate ? 1 : kt_randint(1, 2), sh = dilate ? 1 : kt_randint(1, 3);
        int sw = dilate ? 1 : kt_randint(1, 2);
        int dd = dilate ? kt_randint(1, 2) : 1, dh = dilate ? kt_randint(1, 2) : 1;
        int dw = dilate ? kt_randint(1, 3) : 1;
        int n = kt_randint(1, 2), ic = kt_randint(1, 4), oc = kt_randint(1, 4);
        int ed = (kd - 1) * dd + 1, eh = (kh - 1) * dh + 1, ew = (kw - 1) * dw + 1;
        int id = kt_randint(ed, 6), ih = kt_randint(eh, 7), iw = kt_randint(ew, 7);
        int od, oh, ow, pf, pt, pl;
        out_dim(id, ed, sd, same, &od, &pf);
        out_dim(ih, eh, sh, same, &oh, &pt);
        out_dim(iw, ew, sw, same, &ow, &pl);
        int64_t d[] = {n, id, ih, iw, ic}, fd[] = {kd, kh, kw, ic, oc};
        core_buf x = kt_random(SI_FLOAT32, 5, d, -2.f, 2.f);
        core_buf f = kt_random(SI_FLOAT32, 5, fd, -1.f, 1.f);
        ck_step s = {.kind = CK_CONV3D, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.conv3d = (ck_conv3d_p){.n = n, .in_d = id, .in_h = ih, .in_w = iw, .in_c = ic,
                                   .out_d = od, .out_h = oh, .out_w = ow, .out_c = oc,
                                   .k_d = kd, .k_h = kh, .k_w = kw, .stride_d = sd,
                                   .stride_h = sh, .stride_w = sw, .dil_d = dd, .dil_h = dh,
                                   .dil_w = dw, .pad_front = pf, .pad_top = pt, .pad_left = pl};
        core_shape os = {.rank = 5, .d = {n, od, oh, ow, oc}};
        const core_buf *ins[] = {&x, &f};
        /* each step rounded once on the GPU, via double on the host: equal but
         * for a double rounding, hence not 0 */
        check("conv3d", t, kt_compare(&s, ins, SI_FLOAT32, &os, NULL), 1e-6);
        kt_free(&x);
        kt_free(&f);
    }
}

static void test_dilation2d(void **state)
{
    (void)state;
    for (int t = 0; t < 48; t++) {
        int same = t & 1;
        int kh = kt_randint(1, 3), kw = kt_randint(1, 3);
        int sh = kt_randint(1, 3), sw = kt_randint(1, 3);
        int dh = t % 3 ? 1 : kt_randint(1, 3), dw = t % 4 ? 1 : kt_randint(1, 3);
        int n = kt_randint(1, 2), c = kt_randint(1, 4);
        int eh = (kh - 1) * dh + 1, ew = (kw - 1) * dw + 1;
        int ih = kt_randint(eh, 12), iw = kt_randint(ew, 12);
        int oh, ow, pt, pl;
        out_dim(ih, eh, sh, same, &oh, &pt);
        out_dim(iw, ew, sw, same, &ow, &pl);
        int64_t d[] = {n, ih, iw, c}, fd[] = {kh, kw, c};
        core_buf x = kt_random(SI_FLOAT32, 4, d, -5.f, 5.f);
        core_buf f = kt_random(SI_FLOAT32, 3, fd, -2.f, 2.f);
        if (t % 5 == 0)
            ((float *)x.data)[kt_randint(0, n * ih * iw * c - 1)] = NAN;
        ck_step s = {.kind = CK_DILATION2D, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.conv = (ck_conv_p){.n = n, .in_h = ih, .in_w = iw, .in_c = c, .out_h = oh,
                               .out_w = ow, .out_c = c, .k_h = kh, .k_w = kw, .stride_h = sh,
                               .stride_w = sw, .dil_h = dh, .dil_w = dw, .pad_top = pt,
                               .pad_left = pl, .ch_mult = 1};
        core_shape os = {.rank = 4, .d = {n, oh, ow, c}};
        const core_buf *ins[] = {&x, &f};
        check("dilation2d", t, kt_compare(&s, ins, SI_FLOAT32, &os, NULL), 0);
        kt_free(&x);
        kt_free(&f);
    }
}

static void test_pool_argmax(void **state)
{
    (void)state;
    for (int t = 0; t < 48; t++) {
        int same = t & 1, batch = (t >> 1) & 1, ties = t % 3 == 0, is_int = t % 8 == 7;
        int kh = kt_randint(1, 4), kw = kt_randint(1, 4);
        int sh = kt_randint(1, 3), sw = kt_randint(1, 3);
        int n = kt_randint(1, 3), c = kt_randint(1, 4);
        int ih = kt_randint(kh, 11), iw = kt_randint(kw, 11);
        int oh, ow, pt, pl;
        out_dim(ih, kh, sh, same, &oh, &pt);
        out_dim(iw, kw, sw, same, &ow, &pl);
        int64_t d[] = {n, ih, iw, c};
        si_dtype dt = is_int ? SI_INT32 : SI_FLOAT32;
        core_buf x = kt_random(dt, 4, d, ties ? -2.f : -9.f, ties ? 2.f : 9.f);
        int64_t cnt = (int64_t)n * ih * iw * c;
        if (ties && !is_int)
            for (int64_t i = 0; i < cnt; i++)
                ((float *)x.data)[i] = roundf(((float *)x.data)[i]);
        if (t % 5 == 0 && !is_int)
            ((float *)x.data)[kt_randint(0, (int)cnt - 1)] = NAN;
        ck_step s = {.kind = CK_POOL_ARGMAX, .n_in = 1, .in = {0}, .out = 1};
        s.u.pool = (ck_pool_p){.is_max = 1, .n = n, .in_h = ih, .in_w = iw, .c = c, .out_h = oh,
                               .out_w = ow, .k_h = kh, .k_w = kw, .stride_h = sh,
                               .stride_w = sw, .pad_top = pt, .pad_left = pl,
                               .include_batch = batch};
        core_shape os = {.rank = 4, .d = {n, oh, ow, c}};
        const core_buf *ins[] = {&x};
        check("pool_argmax", t, kt_compare(&s, ins, SI_INT32, &os, NULL), 0);
        kt_free(&x);
    }
}

/* x [2, 2, 3, 1], a 2x2 VALID window with stride 1: batch 0's two windows
 * share their max at (1,1); batch 1's first is all NaN (-1), its second's
 * one number counts the batch only with include_batch. */
static void test_pool_argmax_known(void **state)
{
    (void)state;
    int64_t d[] = {2, 2, 3, 1};
    core_buf x = kt_buf(SI_FLOAT32, 4, d);
    const float v[12] = {1, 2, 7, 3, 9, 7, NAN, NAN, NAN, NAN, NAN, 4};
    memcpy(x.data, v, sizeof v);
    core_shape os = {.rank = 4, .d = {2, 1, 2, 1}};
    core_buf out = kt_buf(SI_INT32, 4, os.d);
    const core_buf *ins[] = {&x};
    si_error err = {0};
    for (int batch = 0; batch < 2; batch++) {
        ck_step s = {.kind = CK_POOL_ARGMAX, .n_in = 1, .in = {0}, .out = 1};
        s.u.pool = (ck_pool_p){.is_max = 1, .n = 2, .in_h = 2, .in_w = 3, .c = 1, .out_h = 1,
                               .out_w = 2, .k_h = 2, .k_w = 2, .stride_h = 1, .stride_w = 1,
                               .include_batch = batch};
        assert_int_equal(ck_host_run(&s, ins, &out, &err), SI_OK);
        const int32_t *o = out.data;
        assert_int_equal(o[0], 4);
        assert_int_equal(o[1], 4);
        assert_int_equal(o[2], -1);
        assert_int_equal(o[3], batch ? 6 + 5 : 5);
        check("pool_argmax_known", batch, kt_compare(&s, ins, SI_INT32, &os, NULL), 0);
    }
    kt_free(&x);
    kt_free(&out);
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv3d),
        cmocka_unit_test(test_dilation2d),
        cmocka_unit_test(test_pool_argmax),
        cmocka_unit_test(test_pool_argmax_known),
    };
    return cmocka_run_group_tests_name("kernels_conv3d", tests, setup, teardown);
}
