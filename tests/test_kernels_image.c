/* CropAndResize's kernels (core/op_image.c): the GPU sampler against the host
 * reference on random shapes, boxes and values, with every special entry of
 * the sampling table (extrapolated rows and columns, NaN coordinates, boxes
 * past the batch or before it); and the table itself on known tfjs values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "kernel_util.h"

/* boxes [n,4] → table, on the host (CK_CROP_BOXES runs there on every backend) */
static core_buf crop_table(const ck_crop_p *p, const core_buf *boxes, const core_buf *ind)
{
    int64_t d[] = {p->n, 1 + 3 * (p->crop_h + p->crop_w)};
    core_buf t = kt_buf(SI_INT32, 2, d);
    ck_step s = {.kind = CK_CROP_BOXES, .n_in = 2, .in = {0, 1}, .out = 2};
    s.u.crop = *p;
    const core_buf *ins[] = {boxes, ind};
    assert_int_equal(ck_host_run(&s, ins, &t, NULL), SI_OK);
    return t;
}

static void test_crop_resize(void **state)
{
    (void)state;
    for (int k = 0; k < 40; k++) {
        int bilinear = k % 2, is_int = k % 5 == 4;
        ck_crop_p p = {.n = kt_randint(1, 12), .batch = kt_randint(1, 3),
                       .in_h = kt_randint(1, 17), .in_w = kt_randint(1, 17), .c = kt_randint(1, 5),
                       .crop_h = kt_randint(1, 9), .crop_w = kt_randint(1, 9),
                       .bilinear = bilinear, .extrapolation = kt_randf(-3, 3)};
        int64_t bd[] = {p.n, 4}, nd[] = {p.n}, xd[] = {p.batch, p.in_h, p.in_w, p.c};
        /* some boxes inside, some past the image, flipped ones, and NaNs */
        core_buf boxes = kt_random(SI_FLOAT32, 2, bd, k % 3 ? 0.f : -0.5f, k % 3 ? 1.f : 1.5f);
        core_buf ind = kt_random(SI_INT32, 1, nd, -1, (float)p.batch);
        if (k % 7 == 6)
            ((float *)boxes.data)[kt_randint(0, 4 * p.n - 1)] = NAN;
        core_buf x = kt_random(is_int ? SI_INT32 : SI_FLOAT32, 4, xd, -40.f, 40.f);
        core_buf tab = crop_table(&p, &boxes, &ind);
        ck_step s = {.kind = CK_CROP_RESIZE, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.crop = p;
        core_shape os = {.rank = 4, .d = {p.n, p.crop_h, p.crop_w, p.c}};
        const core_buf *ins[] = {&x, &tab};
        /* bitwise: GLSL ES rounds highp + - * correctly, and the shader's
         * precise keeps them apart as the host reference does */
        double e = kt_compare(&s, ins, SI_FLOAT32, &os, NULL);
        if (e != 0)
            fprintf(stderr, "crop_resize case %d (bilinear %d): error %g\n", k, bilinear, e);
        assert_true(e == 0);
        kt_free(&boxes);
        kt_free(&ind);
        kt_free(&x);
        kt_free(&tab);
    }
}

/* tf.image.cropAndResize on tfjs 4.22's CPU backend, 1x3x4x1 ramp 0..11,
 * boxes {0.1,0,0.9,1} flipped {1,1,0,0} and {-0.5,0.2,0.5,1.2}, crop 3x2,
 * extrapolation_value -1: guards the coordinate rules, not just GPU == host. */
static void test_crop_known(void **state)
{
    (void)state;
    static const float boxes[] = {0.1f, 0, 0.9f, 1, 1, 1, 0, 0, -0.5f, 0.2f, 0.5f, 1.2f};
    static const int32_t ind[] = {0, 0, 0};
    static const float want[2][18] = {
        {0.8f, 3.8f, 4, 7, 7.2f, 10.2f, 11, 8, 7, 4, 3, 0, -1, -1, 0.6f, -1, 4.6f, -1},
        {0, 3, 4, 7, 8, 11, 11, 8, 7, 4, 3, 0, -1, -1, 1, -1, 5, -1},
    };
    int64_t d[] = {1, 3, 4, 1};
    core_buf x = kt_buf(SI_FLOAT32, 4, d);
    for (int i = 0; i < 12; i++)
        ((float *)x.data)[i] = (float)i;
    core_buf b = {.dtype = SI_FLOAT32, .shape = {.rank = 2, .d = {3, 4}}, .data = (void *)boxes};
    core_buf n = {.dtype = SI_INT32, .shape = {.rank = 1, .d = {3}}, .data = (void *)ind};
    for (int bilinear = 1; bilinear >= 0; bilinear--) {
        ck_crop_p p = {.n = 3, .batch = 1, .in_h = 3, .in_w = 4, .c = 1, .crop_h = 3,
                       .crop_w = 2, .bilinear = bilinear, .extrapolation = -1};
        core_buf tab = crop_table(&p, &b, &n);
        ck_step s = {.kind = CK_CROP_RESIZE, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.crop = p;
        float got[18];
        core_buf out = {.dtype = SI_FLOAT32, .shape = {.rank = 4, .d = {3, 3, 2, 1}}, .data = got};
        const core_buf *ins[] = {&x, &tab};
        assert_int_equal(ck_host_run(&s, ins, &out, NULL), SI_OK);
        for (int i = 0; i < 18; i++) {
            float w = want[1 - bilinear][i];
            if (fabsf(got[i] - w) > 1e-5f)
                fprintf(stderr, "crop known (bilinear %d) [%d]: %g want %g\n", bilinear, i, got[i], w);
            assert_true(fabsf(got[i] - w) <= 1e-5f);
        }
        kt_free(&tab);
    }
    kt_free(&x);
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crop_resize),
        cmocka_unit_test(test_crop_known),
    };
    return cmocka_run_group_tests_name("kernels_image", tests, setup, teardown);
}
