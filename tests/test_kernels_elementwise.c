/* Unary, binary (broadcast) and AddN kernels against the host reference,
 * on random shapes and values. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"

static void random_shape(int *rank, int64_t *d, int max_elems)
{
    *rank = kt_randint(1, 5);
    int64_t n = 1;
    for (int i = 0; i < *rank; i++) {
        d[i] = kt_randint(1, 9);
        n *= d[i];
    }
    while (n > max_elems) {
        for (int i = 0; i < *rank; i++)
            if (d[i] > 1) { n /= d[i]; d[i] = 1; break; }
    }
}

static void test_unary(void **state)
{
    (void)state;
    static const int ops[] = {CK_U_NEG, CK_U_ABS, CK_U_RELU, CK_U_RELU6, CK_U_LEAKYRELU,
                              CK_U_ELU, CK_U_SELU, CK_U_SIGMOID, CK_U_TANH, CK_U_EXP,
                              CK_U_SQRT, CK_U_RSQRT, CK_U_SQUARE, CK_U_RECIPROCAL,
                              CK_U_FLOOR, CK_U_CEIL, CK_U_ROUND, CK_U_SIN, CK_U_COS,
                              CK_U_SIGN, CK_U_SOFTPLUS, CK_U_LOG, CK_U_ERF, CK_U_ATAN,
                              CK_U_HARDSWISH};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        int rank;
        int64_t d[SI_MAX_RANK];
        random_shape(&rank, d, 5000);
        int positive = ops[k] == CK_U_SQRT || ops[k] == CK_U_RSQRT || ops[k] == CK_U_LOG ||
                       ops[k] == CK_U_RECIPROCAL;
        core_buf x = kt_random(SI_FLOAT32, rank, d, positive ? 0.05f : -8.f, 8.f);
        ck_step s = {.kind = CK_UNARY, .n_in = 1, .in = {0}, .out = 1};
        s.u.unary = (ck_unary_p){.op = ops[k], .count = (int32_t)core_shape_count(&x.shape),
                                 .in_dtype = SI_FLOAT32, .out_dtype = SI_FLOAT32, .alpha = 0.3f};
        const core_buf *ins[] = {&x};
        double e = kt_compare(&s, ins, SI_FLOAT32, &x.shape, NULL);
        if (!(e >= 0 && e <= 2e-5))
            fprintf(stderr, "unary op %d: error %g\n", ops[k], e);
        assert_true(e >= 0 && e <= 2e-5);
        kt_free(&x);
    }
}

/* asinh/acosh/atanh over their domains (and NaN outside, for acosh/atanh),
 * the float tests with non-finite values mixed in, and clip on floats (NaN
 * passes) and on int32 past 2^24 (no float detour). */
static void test_unary_math(void **state)
{
    (void)state;
    static const struct { int op; float lo, hi; si_dtype out; } cs[] = {
        {CK_U_ASINH, -3e4f, 3e4f, SI_FLOAT32}, {CK_U_ASINH, -2.f, 2.f, SI_FLOAT32},
        {CK_U_ACOSH, 0.5f, 3e4f, SI_FLOAT32},  {CK_U_ACOSH, 0.9f, 3.f, SI_FLOAT32},
        {CK_U_ATANH, -1.2f, 1.2f, SI_FLOAT32}, {CK_U_ISFINITE, -9.f, 9.f, SI_BOOL},
        {CK_U_ISINF, -9.f, 9.f, SI_BOOL},      {CK_U_CLIP, -9.f, 9.f, SI_FLOAT32},
    };
    const float special[] = {NAN, INFINITY, -INFINITY, 0.f, -0.f, 3e38f};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        int rank;
        int64_t d[SI_MAX_RANK];
        random_shape(&rank, d, 5000);
        core_buf x = kt_random(SI_FLOAT32, rank, d, cs[k].lo, cs[k].hi);
        int64_t n = core_shape_count(&x.shape);
        int with_special = cs[k].out == SI_BOOL || cs[k].op == CK_U_CLIP;
        for (int64_t i = 0; with_special && i < n; i += kt_randint(1, 5))
            ((float *)x.data)[i] = special[kt_randint(0, cs[k].op == CK_U_CLIP ? 0 : 5)];
        ck_step s = {.kind = CK_UNARY, .n_in = 1, .in = {0}, .out = 1};
        s.u.unary = (ck_unary_p){.op = cs[k].op, .count = (int32_t)n, .in_dtype = SI_FLOAT32,
                                 .out_dtype = cs[k].out, .alpha = -2.5f, .beta = 4.f};
        const core_buf *ins[] = {&x};
        double e = kt_compare(&s, ins, cs[k].out, &x.shape, NULL);
        if (!(e >= 0 && e <= 2e-5))
            fprintf(stderr, "unary op %d: error %g\n", cs[k].op, e);
        assert_true(e >= 0 && e <= 2e-5);
        kt_free(&x);
    }
    int64_t d[] = {9, 31};
    core_buf xi = kt_random(SI_INT32, 2, d, -300, 300);
    for (int64_t i = 0; i < 9 * 31; i++)
        ((int32_t *)xi.data)[i] *= 100003; /* past 2^24 */
    ck_step s = {.kind = CK_UNARY, .n_in = 1, .in = {0}, .out = 1};
    s.u.unary = (ck_unary_p){.op = CK_U_CLIP, .count = 9 * 31, .in_dtype = SI_INT32,
                             .out_dtype = SI_INT32, .ilo = -16777217, .ihi = 20000001};
    const core_buf *ins[] = {&xi};
    assert_true(kt_compare(&s, ins, SI_INT32, &xi.shape, NULL) == 0);
    kt_free(&xi);
}

static void test_cast_and_int(void **state)
{
    (void)state;
    int64_t d[] = {7, 13};
    core_buf xf = kt_random(SI_FLOAT32, 2, d, -300.f, 300.f);
    core_buf xi = kt_random(SI_INT32, 2, d, -300, 300);
    const struct { core_buf *x; int op; si_dtype in, out; } cases[] = {
        {&xf, CK_U_CAST, SI_FLOAT32, SI_INT32}, {&xi, CK_U_CAST, SI_INT32, SI_FLOAT32},
        {&xf, CK_U_CAST, SI_FLOAT32, SI_BOOL},  {&xi, CK_U_CAST, SI_INT32, SI_BOOL},
        {&xi, CK_U_ABS, SI_INT32, SI_INT32},    {&xi, CK_U_NEG, SI_INT32, SI_INT32},
        {&xi, CK_U_RELU, SI_INT32, SI_INT32},   {&xi, CK_U_SQUARE, SI_INT32, SI_INT32},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ck_step s = {.kind = CK_UNARY, .n_in = 1, .in = {0}, .out = 1};
        s.u.unary = (ck_unary_p){.op = cases[k].op, .count = 91, .in_dtype = cases[k].in,
                                 .out_dtype = cases[k].out};
        const core_buf *ins[] = {cases[k].x};
        double e = kt_compare(&s, ins, cases[k].out, &xf.shape, NULL);
        assert_true(e == 0);
    }
    kt_free(&xf);
    kt_free(&xi);
}

static void broadcast_operand(int rank, const int64_t *out, int64_t *d, int *r)
{
    /* drop some leading dims and set some to 1 */
    int drop = kt_randint(0, rank - 1);
    *r = rank - drop;
    for (int i = 0; i < *r; i++)
        d[i] = (kt_rand() % 3 == 0) ? 1 : out[i + drop];
}

static void test_binary(void **state)
{
    (void)state;
    for (int op = 0; op < CK_B__COUNT; op++) {
        for (int rep = 0; rep < 3; rep++) {
            int rank;
            int64_t d[SI_MAX_RANK], da[SI_MAX_RANK], db[SI_MAX_RANK];
            random_shape(&rank, d, 4000);
            int ra, rb;
            broadcast_operand(rank, d, da, &ra);
            broadcast_operand(rank, d, db, &rb);
            if (rep == 0) { ra = rank; memcpy(da, d, sizeof d); }
            int is_int = rep == 2 && op != CK_B_ATAN2 && op != CK_B_POW;
            si_dtype dt = is_int ? SI_INT32 : SI_FLOAT32;
            int nonzero_b = op == CK_B_DIV || op == CK_B_FLOORDIV || op == CK_B_FLOORMOD ||
                            op == CK_B_POW;
            core_buf a = kt_random(dt, ra, da, op == CK_B_POW ? 0.1f : -20.f, 20.f);
            core_buf b = kt_random(dt, rb, db, nonzero_b ? 1.f : -20.f, 20.f);
            if (op == CK_B_POW) {
                for (int64_t i = 0; i < core_shape_count(&b.shape); i++)
                    ((float *)b.data)[i] = kt_randf(-2.f, 2.f);
            }
            core_shape out;
            assert_int_equal(core_broadcast_shape(&a.shape, &b.shape, &out), 0);
            int is_cmp = op >= CK_B_EQUAL && op <= CK_B_OR;
            ck_step s = {.kind = CK_BINARY, .n_in = 2, .in = {0, 1}, .out = 2};
            ck_binary_p *p = &s.u.binary;
            p->op = op;
            p->rank = out.rank;
            int64_t sa[SI_MAX_RANK], sb[SI_MAX_RANK];
            core_strides(&a.shape, sa);
            core_strides(&b.shape, sb);
            for (int i = 0; i < out.rank; i++) {
                p->out_dim[i] = (int32_t)out.d[i];
                int ja = i - (out.rank - a.shape.rank), jb = i - (out.rank - b.shape.rank);
                p->a_stride[i] = (ja >= 0 && a.shape.d[ja] != 1) ? (int32_t)sa[ja] : 0;
                p->b_stride[i] = (jb >= 0 && b.shape.d[jb] != 1) ? (int32_t)sb[jb] : 0;
            }
            p->in_dtype = dt;
            p->out_dtype = is_cmp ? SI_BOOL : dt;
            p->count = (int32_t)core_shape_count(&out);
            const core_buf *ins[] = {&a, &b};
            double e = kt_compare(&s, ins, is_cmp ? SI_BOOL : dt, &out, NULL);
            if (!(e >= 0 && e <= 2e-5))
                fprintf(stderr, "binary op %d rep %d: error %g\n", op, rep, e);
            assert_true(e >= 0 && e <= 2e-5);
            kt_free(&a);
            kt_free(&b);
        }
    }
}

/* int32 comparisons on values past 2^24, where neighbours round to the same
 * float: the GPU once compared them as floats (16777217 == 16777216) */
static void test_binary_int_compare(void **state)
{
    (void)state;
    for (int op = CK_B_EQUAL; op <= CK_B_GREATEREQ; op++) {
        int64_t d[] = {kt_randint(17, 900)};
        core_buf a = kt_random(SI_INT32, 1, d, 0.f, 1.f), b = kt_random(SI_INT32, 1, d, 0.f, 1.f);
        for (int64_t i = 0; i < d[0]; i++) {
            int32_t base = (kt_rand() % 2 ? 1 : -1) * (16777216 + kt_randint(0, 1 << 20) * 64);
            ((int32_t *)a.data)[i] = base + kt_randint(-1, 1);
            ((int32_t *)b.data)[i] = base + kt_randint(-1, 1);
        }
        ck_step s = {.kind = CK_BINARY, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.binary = (ck_binary_p){.op = op, .rank = 1, .out_dim = {(int32_t)d[0]}, .a_stride = {1},
                                   .b_stride = {1}, .in_dtype = SI_INT32, .out_dtype = SI_BOOL,
                                   .count = (int32_t)d[0]};
        const core_buf *ins[] = {&a, &b};
        double e = kt_compare(&s, ins, SI_BOOL, &a.shape, NULL);
        if (e != 0)
            fprintf(stderr, "int32 compare op %d: error %g\n", op, e);
        assert_true(e == 0);
        kt_free(&a);
        kt_free(&b);
    }
}

static void test_addn(void **state)
{
    (void)state;
    for (int n = 2; n <= CK_MAX_IN; n += 3) {
        int64_t d[] = {kt_randint(1, 30), kt_randint(1, 30)};
        core_buf xs[CK_MAX_IN];
        const core_buf *ins[CK_MAX_IN];
        ck_step s = {.kind = CK_ADDN, .n_in = n, .out = n};
        for (int i = 0; i < n; i++) {
            xs[i] = kt_random(SI_FLOAT32, 2, d, -5.f, 5.f);
            ins[i] = &xs[i];
            s.in[i] = i;
        }
        s.u.addn = (ck_addn_p){.n = n, .count = (int32_t)(d[0] * d[1]), .dtype = SI_FLOAT32};
        double e = kt_compare(&s, ins, SI_FLOAT32, &xs[0].shape, NULL);
        assert_true(e >= 0 && e <= 1e-6);
        for (int i = 0; i < n; i++)
            kt_free(&xs[i]);
    }
}

static void test_dequant(void **state)
{
    (void)state;
    for (int q = 1; q <= 3; q++) {
        int count = kt_randint(1, 2000);
        int esz = q == 1 ? 1 : 2;
        int64_t words = (count * esz + 3) / 4;
        core_buf raw = kt_buf(SI_INT32, 1, &words);
        uint8_t *b = raw.data;
        for (int i = 0; i < count * esz; i++)
            b[i] = (uint8_t)kt_rand();
        if (q == 3) /* keep halves finite: clear the top exponent bit pattern 0x7c00 */
            for (int i = 0; i < count; i++)
                b[2 * i + 1] &= 0xbf;
        ck_step s = {.kind = CK_DEQUANT, .n_in = 1, .in = {0}, .out = 1};
        s.u.dequant = (ck_dequant_p){.count = count, .quant = q, .min = -1.25f, .scale = 0.0173f};
        int64_t nd = count;
        core_shape os = {.rank = 1, .d = {nd}};
        const core_buf *ins[] = {&raw};
        double e = kt_compare(&s, ins, SI_FLOAT32, &os, NULL);
        assert_true(e >= 0 && e <= 1e-6);
        kt_free(&raw);
    }
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unary), cmocka_unit_test(test_unary_math),
        cmocka_unit_test(test_cast_and_int),
        cmocka_unit_test(test_binary), cmocka_unit_test(test_binary_int_compare),
        cmocka_unit_test(test_addn),
        cmocka_unit_test(test_dequant),
    };
    return cmocka_run_group_tests_name("kernels_elementwise", tests, setup, teardown);
}
