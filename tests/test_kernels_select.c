/* TopK (with deliberate ties) and Select (broadcast) against the host reference. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"

static void test_topk(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++) {
        int64_t outer = kt_randint(1, 6), n = kt_randint(1, 300);
        int64_t k = kt_randint(0, (int)n);
        si_dtype dt = rep % 3 == 2 ? SI_INT32 : SI_FLOAT32;
        int64_t d[] = {outer, n};
        /* few distinct values: many ties, which must go to the lower index */
        core_buf x = kt_random(dt, 2, d, -5.f, 5.f);
        if (dt == SI_FLOAT32 && rep % 2)
            for (int64_t i = 0; i < outer * n; i++)
                ((float *)x.data)[i] = (float)kt_randint(-3, 3);
        for (int want = 0; want < 2; want++) {
            ck_step s = {.kind = CK_TOPK, .n_in = 1, .in = {0}, .out = 1};
            s.u.topk = (ck_topk_p){(int32_t)outer, (int32_t)n, (int32_t)k, want};
            core_shape os = {.rank = 2, .d = {outer, k}};
            const core_buf *ins[] = {&x};
            assert_true(kt_compare(&s, ins, want ? SI_INT32 : dt, &os, NULL) == 0);
        }
        kt_free(&x);
    }
    /* a hand-checked row: values 3,1,3,2 → top 3 = 3(0), 3(2), 2(3) */
    int64_t d[] = {1, 4};
    core_buf x = kt_buf(SI_FLOAT32, 2, d);
    float v[] = {3, 1, 3, 2};
    memcpy(x.data, v, sizeof v);
    ck_step s = {.kind = CK_TOPK, .n_in = 1, .in = {0}, .out = 1};
    s.u.topk = (ck_topk_p){1, 4, 3, 1};
    core_buf out = {.dtype = SI_INT32, .shape = {.rank = 2, .d = {1, 3}}, .data = calloc(3, 4)};
    const core_buf *ins[] = {&x};
    assert_int_equal(kt_run_gpu(&s, ins, &out), 0);
    assert_int_equal(((int32_t *)out.data)[0], 0);
    assert_int_equal(((int32_t *)out.data)[1], 2);
    assert_int_equal(((int32_t *)out.data)[2], 3);
    free(out.data);
    kt_free(&x);
}

static void strides_for(const core_shape *in, const core_shape *out, int32_t *st)
{
    int64_t s[SI_MAX_RANK];
    core_strides(in, s);
    for (int i = 0; i < out->rank; i++) {
        int j = i - (out->rank - in->rank);
        st[i] = (j >= 0 && in->d[j] != 1) ? (int32_t)s[j] : 0;
    }
}

static void test_select(void **state)
{
    (void)state;
    for (int rep = 0; rep < 10; rep++) {
        int64_t d[] = {kt_randint(1, 5), kt_randint(1, 7), kt_randint(1, 9)};
        int64_t dc[] = {d[0], rep % 2 ? 1 : d[1], d[2]};
        int64_t db[] = {1, d[1], rep % 3 ? d[2] : 1};
        si_dtype dt = rep % 4 == 3 ? SI_INT32 : SI_FLOAT32;
        core_buf c = kt_random(SI_BOOL, 3, dc, 0, 1), a = kt_random(dt, 3, d, -9, 9),
                 b = kt_random(dt, 3, db, -9, 9);
        core_shape out = {.rank = 3, .d = {d[0], d[1], d[2]}};
        ck_step s = {.kind = CK_SELECT, .n_in = 3, .in = {0, 1, 2}, .out = 3};
        s.u.select.rank = 3;
        for (int i = 0; i < 3; i++)
            s.u.select.out_dim[i] = (int32_t)d[i];
        strides_for(&c.shape, &out, s.u.select.c_stride);
        strides_for(&a.shape, &out, s.u.select.a_stride);
        strides_for(&b.shape, &out, s.u.select.b_stride);
        s.u.select.count = (int32_t)(d[0] * d[1] * d[2]);
        const core_buf *ins[] = {&c, &a, &b};
        assert_true(kt_compare(&s, ins, dt, &out, NULL) == 0);
        kt_free(&c);
        kt_free(&a);
        kt_free(&b);
    }
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_topk), cmocka_unit_test(test_select)};
    return cmocka_run_group_tests_name("kernels_select", tests, setup, teardown);
}
