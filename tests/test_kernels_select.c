/* TopK (with deliberate ties), Select (broadcast) and LowerBound/UpperBound
 * (sorted rows with runs, NaN values) against the host reference. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"

/* TopK runs on the host: checked against a full sort by (value desc, index asc). */
static int cmp_pair(const void *x, const void *y)
{
    const float *a = x, *b = y; /* {value, index} */
    if (a[0] != b[0])
        return a[0] > b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : 1;
}

static void test_topk(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++) {
        int64_t outer = kt_randint(1, 6), n = rep == 11 ? 200000 : kt_randint(1, 300);
        int64_t k = rep == 11 ? 100 : kt_randint(0, (int)n);
        int64_t d[] = {outer, n};
        core_buf x = kt_random(SI_FLOAT32, 2, d, -5.f, 5.f);
        if (rep % 2) /* few distinct values: ties go to the lower index */
            for (int64_t i = 0; i < outer * n; i++)
                ((float *)x.data)[i] = rep == 11 && kt_rand() % 20 ? 0.f : (float)kt_randint(-3, 3);
        float *pairs = malloc((size_t)n * 2 * sizeof *pairs);
        for (int want = 0; want < 2; want++) {
            ck_step s = {.kind = CK_TOPK, .n_in = 1, .in = {0}, .out = 1};
            s.u.topk = (ck_topk_p){(int32_t)outer, (int32_t)n, (int32_t)k, want, 0, 0};
            core_buf out = {.dtype = want ? SI_INT32 : SI_FLOAT32,
                            .shape = {.rank = 2, .d = {outer, k}},
                            .data = calloc((size_t)(outer * k + 1), 4)};
            const core_buf *ins[] = {&x};
            si_error err;
            assert_int_equal(ck_host_run(&s, ins, &out, &err), SI_OK);
            for (int64_t r = 0; r < outer; r++) {
                for (int64_t i = 0; i < n; i++) {
                    pairs[2 * i] = ((float *)x.data)[r * n + i];
                    pairs[2 * i + 1] = (float)i;
                }
                qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_pair);
                for (int64_t j = 0; j < k; j++) {
                    if (want)
                        assert_int_equal(((int32_t *)out.data)[r * k + j], (int32_t)pairs[2 * j + 1]);
                    else
                        assert_true(((float *)out.data)[r * k + j] == pairs[2 * j]);
                }
            }
            free(out.data);
        }
        free(pairs);
        kt_free(&x);
    }
}

/* Host TopK of x, values or indices (the one-step reference). */
static core_buf topk_ref(const core_buf *x, int64_t outer, int64_t n, int64_t k, int want)
{
    ck_step s = {.kind = CK_TOPK, .n_in = 1, .in = {0}, .out = 1};
    s.u.topk = (ck_topk_p){(int32_t)outer, (int32_t)n, (int32_t)k, want, 0, 0};
    core_buf out = {.dtype = want ? SI_INT32 : x->dtype, .shape = {.rank = 2, .d = {outer, k}},
                    .data = calloc((size_t)(outer * k + 1), 4)};
    const core_buf *ins[] = {x};
    si_error err;
    assert_int_equal(ck_host_run(&s, ins, &out, &err), SI_OK);
    return out;
}

/* Sorted TopK as the GPU runs it (core/op_select.c lower_topk_gpu): each
 * CK_TOPK_BLOCK level on the GPU against the host, exactly; then CK_TOPK with
 * the last level's answer (x unread unless a row is flagged, and a row is
 * flagged exactly when it holds a NaN or an infinity) and CK_TAKE: the same
 * bits as the one-step host TopK, which the op tests hold to tfjs. Values with
 * many ties, -0 beside +0, int32, rows across blocks and levels. */
static void test_topk_gpu(void **state)
{
    (void)state;
    for (int rep = 0; rep < 16; rep++) {
        int64_t n = rep == 15 ? 300000 : rep % 4 == 3 ? kt_randint(1025, 70000) : rep == 2 ? 1024
                    : kt_randint(1, 3000);
        int64_t outer = n > 50000 ? 1 : kt_randint(1, 3);
        int64_t kmax = n < CK_TOPK_SORT / 4 ? n : CK_TOPK_SORT / 4;
        int64_t k = rep == 15 ? 100 : kt_randint(1, (int)kmax);
        si_dtype dt = rep % 5 == 4 ? SI_INT32 : SI_FLOAT32;
        int64_t d[] = {outer, n};
        core_buf x = kt_random(dt, 2, d, -5.f, 5.f);
        int bad_row = dt == SI_FLOAT32 && rep % 3 == 1 ? (int)kt_randint(0, (int)outer - 1) : -1;
        for (int64_t i = 0; i < outer * n; i++) {
            if (dt == SI_INT32)
                ((int32_t *)x.data)[i] = rep % 2 ? kt_randint(-3, 3) : kt_randint(-2000000000, 2000000000);
            else if (rep % 2) /* a coarse grid with signed zeros: ties everywhere */
                ((float *)x.data)[i] = kt_rand() % 4 ? (float)kt_randint(-2, 2) / 2 : (kt_rand() % 2 ? -0.f : 0.f);
        }
        if (bad_row >= 0)
            ((float *)x.data)[bad_row * n + kt_randint(0, (int)n - 1)] =
                rep % 2 ? NAN : (kt_rand() % 2 ? INFINITY : -INFINITY);
        ck_topkb_p lv[CK_TOPK_LEVELS];
        int L = ck_topk_levels(outer, n, k, dt == SI_FLOAT32, lv, CK_TOPK_LEVELS);
        assert_true(L >= 1);
        assert_int_equal(lv[L - 1].nb, 1);
        core_buf cand = {0};
        for (int l = 0; l < L; l++) {
            ck_step s = {.kind = CK_TOPK_BLOCK, .n_in = l ? 2 : 1, .in = {0, l ? 1 : -1}, .out = 2};
            s.u.topkb = lv[l];
            core_buf next = {.dtype = SI_INT32,
                             .shape = {.rank = 3, .d = {outer, lv[l].nb, lv[l].kb + 1}}};
            const core_buf *ins[] = {&x, l ? &cand : NULL};
            assert_true(kt_compare(&s, ins, SI_INT32, &next.shape, NULL) == 0);
            next.data = calloc((size_t)(outer * lv[l].nb * (lv[l].kb + 1)), 4);
            si_error err;
            assert_int_equal(ck_host_run(&s, ins, &next, &err), SI_OK);
            kt_free(&cand);
            cand = next;
        }
        for (int64_t r = 0; r < outer; r++)
            assert_int_equal(((int32_t *)cand.data)[r * (k + 1) + k] != 0, r == bad_row);
        ck_step f = {.kind = CK_TOPK, .n_in = 2, .in = {0, 1}, .out = 2};
        f.u.topk = (ck_topk_p){(int32_t)outer, (int32_t)n, (int32_t)k, 1, 0, 1};
        const core_buf *fin[] = {NULL, &cand};
        assert_int_equal(ck_host_skips_input(&f, 0, fin), bad_row < 0);
        if (bad_row >= 0)
            fin[0] = &x;
        core_buf idx = {.dtype = SI_INT32, .shape = {.rank = 2, .d = {outer, k}},
                        .data = calloc((size_t)(outer * k), 4)};
        si_error err;
        assert_int_equal(ck_host_run(&f, fin, &idx, &err), SI_OK);
        core_buf want_i = topk_ref(&x, outer, n, k, 1), want_v = topk_ref(&x, outer, n, k, 0);
        assert_memory_equal(idx.data, want_i.data, (size_t)(outer * k) * 4);
        ck_step t = {.kind = CK_TAKE, .n_in = 2, .in = {0, 1}, .out = 2};
        t.u.take = (ck_take_p){(int32_t)outer, (int32_t)n, (int32_t)k};
        const core_buf *tin[] = {&x, &idx};
        assert_true(kt_compare(&t, tin, dt, &idx.shape, NULL) == 0);
        core_buf vals = {.dtype = dt, .shape = idx.shape, .data = calloc((size_t)(outer * k), 4)};
        assert_int_equal(ck_host_run(&t, tin, &vals, &err), SI_OK);
        assert_memory_equal(vals.data, want_v.data, (size_t)(outer * k) * 4);
        kt_free(&vals);
        kt_free(&want_i);
        kt_free(&want_v);
        kt_free(&idx);
        kt_free(&cand);
        kt_free(&x);
    }
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

static int cmp_float(const void *x, const void *y)
{
    float a = *(const float *)x, b = *(const float *)y;
    return a < b ? -1 : a > b;
}

static void test_search(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++) {
        int64_t batch = kt_randint(1, 5), n = kt_randint(1, rep == 11 ? 5000 : 60),
                nv = kt_randint(1, 70);
        si_dtype dt = rep % 3 == 2 ? SI_INT32 : SI_FLOAT32;
        int64_t da[] = {batch, n}, dv[] = {batch, nv};
        core_buf a = kt_random(dt, 2, da, -6, 6), v = kt_random(dt, 2, dv, -8, 8);
        if (dt == SI_FLOAT32) {
            for (int64_t i = 0; i < batch * n; i++) /* runs of equal values */
                ((float *)a.data)[i] = rep % 2 ? (float)kt_randint(-4, 4) : ((float *)a.data)[i];
            for (int64_t r = 0; r < batch; r++)
                qsort((float *)a.data + r * n, (size_t)n, sizeof(float), cmp_float);
            ((float *)v.data)[0] = NAN;
            ((float *)v.data)[batch * nv - 1] = INFINITY;
        } else {
            for (int64_t r = 0; r < batch; r++) /* sorted as floats: small ints sort the same */
                for (int64_t i = 1; i < n; i++)
                    if (((int32_t *)a.data)[r * n + i] < ((int32_t *)a.data)[r * n + i - 1])
                        ((int32_t *)a.data)[r * n + i] = ((int32_t *)a.data)[r * n + i - 1];
        }
        core_shape out = {.rank = 2, .d = {batch, nv}};
        for (int upper = 0; upper < 2; upper++) {
            ck_step s = {.kind = CK_SEARCH, .n_in = 2, .in = {0, 1}, .out = 2};
            s.u.search = (ck_search_p){(int32_t)batch, (int32_t)n, (int32_t)nv, upper};
            const core_buf *ins[] = {&a, &v};
            assert_true(kt_compare(&s, ins, SI_INT32, &out, NULL) == 0);
        }
        kt_free(&a);
        kt_free(&v);
    }
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_topk), cmocka_unit_test(test_topk_gpu),
                                       cmocka_unit_test(test_select),
                                       cmocka_unit_test(test_search)};
    return cmocka_run_group_tests_name("kernels_select", tests, setup, teardown);
}
