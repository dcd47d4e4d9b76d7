/* Pool, reduce, softmax, argmax and resize kernels against the host reference,
 * on random shapes and values. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <unistd.h>
#include "kernel_util.h"

#define TOL 1e-4

static void check(const char *what, int k, double e, double tol)
{
    if (!(e >= 0 && e <= tol))
        fprintf(stderr, "%s case %d: error %g\n", what, k, e);
    assert_true(e >= 0 && e <= tol);
}

/* TF's SAME / VALID output size and top padding (core_conv_out's rule). */
static void pool_dim(int in, int k, int s, int same, int *out, int *pad)
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

static void test_pool(void **state)
{
    (void)state;
    for (int t = 0; t < 64; t++) {
        int is_max = t & 1, same = (t >> 1) & 1, is_int = t % 16 == 5;
        int kh = kt_randint(1, 4), kw = kt_randint(1, 4);
        int sh = kt_randint(1, 3), sw = kt_randint(1, 3);
        int n = kt_randint(1, 2), c = kt_randint(1, 5);
        int ih = kt_randint(kh, 13), iw = kt_randint(kw, 13);
        int oh, ow, pt, pl;
        pool_dim(ih, kh, sh, same, &oh, &pt);
        pool_dim(iw, kw, sw, same, &ow, &pl);
        si_dtype dt = is_int ? SI_INT32 : SI_FLOAT32;
        int64_t d[] = {n, ih, iw, c};
        core_buf x = kt_random(dt, 4, d, -10.f, 10.f);
        ck_step s = {.kind = CK_POOL, .n_in = 1, .in = {0}, .out = 1};
        s.u.pool = (ck_pool_p){.is_max = is_max, .n = n, .in_h = ih, .in_w = iw, .c = c,
                               .out_h = oh, .out_w = ow, .k_h = kh, .k_w = kw,
                               .stride_h = sh, .stride_w = sw, .pad_top = pt, .pad_left = pl};
        core_shape os = {.rank = 4, .d = {n, oh, ow, c}};
        const core_buf *ins[] = {&x};
        check("pool", t, kt_compare(&s, ins, dt, &os, NULL), is_int ? 0 : TOL);
        kt_free(&x);
    }
}

/* One reduce case: [outer, n, inner] of dtype in_dt with values in [lo, hi]. */
static void reduce_case(int op, si_dtype in_dt, si_dtype out_dt, float lo, float hi, int k)
{
    int outer = kt_randint(1, 7), n = kt_randint(1, 40), inner = kt_randint(1, 7);
    if (op == CK_R_PROD && in_dt != SI_FLOAT32)
        n = kt_randint(1, 12);
    int64_t d[] = {outer, n, inner};
    core_buf x = kt_random(in_dt, 3, d, lo, hi);
    if (k == 0 && in_dt == SI_FLOAT32 && (op == CK_R_MAX || op == CK_R_MIN))
        ((float *)x.data)[kt_randint(0, outer * n * inner - 1)] = NAN;
    ck_step s = {.kind = CK_REDUCE, .n_in = 1, .in = {0}, .out = 1};
    s.u.reduce = (ck_reduce_p){.op = op, .outer = outer, .n = n, .inner = inner, .dtype = in_dt};
    core_shape os = {.rank = 2, .d = {outer, inner}};
    const core_buf *ins[] = {&x};
    char what[64];
    snprintf(what, sizeof what, "reduce op %d dtype %d", op, (int)in_dt);
    check(what, k, kt_compare(&s, ins, out_dt, &os, NULL), out_dt == SI_FLOAT32 ? TOL : 0);
    assert_int_equal(kt_same_ahead(&s, ins, out_dt, &os), 0); /* loads ahead or not: the same bits */
    if (in_dt == SI_FLOAT32 && (op == CK_R_SUM || op == CK_R_MEAN || op == CK_R_PROD)) {
        /* the running pairs themselves (the output as a carry), of magnitudes 2^-40..2^40:
         * a float32 rounding would hide most changes of order */
        for (int64_t i = 0; i < (int64_t)outer * n * inner; i++)
            ((float *)x.data)[i] = ldexpf(((float *)x.data)[i], kt_randint(-40, 40));
        s.u.reduce.carry = 2;
        core_shape cs = {.rank = 2, .d = {outer, 2 * inner}};
        assert_int_equal(kt_same_ahead(&s, ins, SI_FLOAT32, &cs), 0);
    }
    kt_free(&x);
}

/* Float Sum and Mean over n >= CK_REDUCE_WIDE sum in 64 lanes (reduce.comp's
 * main_lanes): against the host reference (tfjs's ordered double sum), and the
 * reduction cut along n into parts that carry their lanes' pairs (as the
 * tiling's reduce_carry makes it under a budget) gives the very bits of the
 * whole, wherever the cuts fall. */
static void test_reduce_lanes(void **state)
{
    (void)state;
    for (int t = 0; t < 10; t++) {
        int op = t % 2 ? CK_R_MEAN : CK_R_SUM;
        si_dtype dt = t == 9 ? SI_INT32 : SI_FLOAT32; /* Mean of int32 too */
        if (dt == SI_INT32)
            op = CK_R_MEAN;
        int outer = t < 5 ? 1 : kt_randint(1, 3), inner = kt_randint(1, 9);
        int n = kt_randint(CK_REDUCE_WIDE, t == 0 ? 20000 : 3000);
        int64_t d[] = {outer, n, inner};
        core_buf x = kt_random(dt, 3, d, -50.f, 50.f);
        /* magnitudes 2^-40..2^40: the pairs round, so the order shows in the bits */
        for (int64_t i = 0; dt == SI_FLOAT32 && i < (int64_t)outer * n * inner; i++)
            ((float *)x.data)[i] = ldexpf(((float *)x.data)[i], kt_randint(-40, 40));
        ck_step s = {.kind = CK_REDUCE, .n_in = 1, .in = {0}, .out = 1};
        s.u.reduce = (ck_reduce_p){.op = op, .outer = outer, .n = n, .inner = inner, .dtype = dt,
                                   .lanes = CK_REDUCE_LANES};
        core_shape os = {.rank = 2, .d = {outer, inner}};
        const core_buf *ins[] = {&x};
        check("reduce lanes", t, kt_compare(&s, ins, SI_FLOAT32, &os, NULL), TOL);
        if (outer != 1) {
            kt_free(&x);
            continue;
        }
        /* the lanes' pairs themselves (the output as a carry), not only their
         * rounded sum: a float32 rounding would hide most changes of order */
        int64_t cd[] = {1, (int64_t)inner * 2 * CK_REDUCE_LANES};
        core_buf whole = kt_buf(SI_FLOAT32, 2, cd);
        s.u.reduce.carry = 2;
        assert_int_equal(kt_run_gpu(&s, ins, &whole), 0);
        core_shape cs = {.rank = 2, .d = {1, cd[1]}};
        assert_int_equal(kt_same_ahead(&s, ins, SI_FLOAT32, &cs), 0); /* loads ahead or not: the same pairs */
        /* 2..4 parts at random cuts, each from the previous one's lane pairs */
        int parts = kt_randint(2, 4), cut[5] = {0};
        for (int q = 1; q < parts; q++)
            cut[q] = kt_randint(cut[q - 1] + 1, n - (parts - q));
        cut[parts] = n;
        core_buf carry = {0};
        for (int q = 0; q < parts; q++) {
            int pn = cut[q + 1] - cut[q];
            int64_t pd[] = {1, pn, inner};
            core_buf xp = kt_buf(dt, 3, pd);
            memcpy(xp.data, (int32_t *)x.data + (int64_t)cut[q] * inner, (size_t)pn * inner * 4);
            ck_step ps = s;
            ps.u.reduce.n = pn;
            ps.u.reduce.j0 = cut[q];
            ps.u.reduce.divisor = n;
            ps.u.reduce.has_init = q > 0;
            ps.u.reduce.carry = (q > 0) | 2;
            ps.n_in = q > 0 ? 2 : 1;
            ps.in[1] = q > 0 ? 1 : -1;
            ps.out = 2;
            core_buf next = kt_buf(SI_FLOAT32, 2, cd);
            const core_buf *pins[] = {&xp, q > 0 ? &carry : NULL};
            assert_int_equal(kt_run_gpu(&ps, pins, &next), 0);
            kt_free(&xp);
            kt_free(&carry);
            carry = next;
        }
        assert_memory_equal(carry.data, whole.data, (size_t)cd[1] * sizeof(float));
        kt_free(&carry);
        kt_free(&whole);
        kt_free(&x);
    }
}

/* max |a - b| / max(1, |b|) over n floats (NaN where both are) */
static double rel_err(const float *a, const float *b, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i]))
            continue;
        double e = fabs((double)a[i] - (double)b[i]) / fmax(1.0, fabs((double)b[i]));
        worst = e <= worst ? worst : isnan(e) ? 1e30 : e;
    }
    return worst;
}

/* A split reduction (core_reduce_split, core/op_pool_reduce.c): part sums as
 * pairs (ck_reduce_p's carry output), then each output's pairs summed in order,
 * in lanes or not, rounded once or divided as an average pool divides. On the
 * GPU and the host against the host reference of the reduction as one step
 * (tfjs's ordered double sum) and of the global average pool; each step with
 * its loads ahead or not, the same bits. */
static void test_reduce_split(void **state)
{
    (void)state;
    for (int t = 0; t < 16; t++) {
        int pool = t % 3 == 2, op = pool ? CK_R_SUM : t % 3 ? CK_R_MEAN : CK_R_SUM;
        int outer = kt_randint(1, 3), inner = kt_randint(1, 9), lanes = t % 4 < 2;
        /* the steps as core_reduce_split makes them, on any part length and count */
        int m = kt_randint(8, 32), g = lanes ? kt_randint(20, 400) : kt_randint(2, 40), n = m * g;
        int64_t ln = (int64_t)kt_randint(8, 32) * kt_randint(1024, 4000); /* a row it splits */
        int32_t lm = core_reduce_split(outer, ln, inner);
        assert_true(lm >= 8 && lm <= 32 && ln % lm == 0);
        assert_int_equal(core_reduce_split(outer, 4096, inner), 0);  /* shorter rows: one step */
        assert_int_equal(core_reduce_split(32768, ln, 1), 0);        /* many outputs: one step */
        int64_t d[] = {outer, n, inner}, pd[] = {(int64_t)outer * g, 2 * inner}, od[] = {outer, inner};
        core_buf x = kt_random(SI_FLOAT32, 3, d, -50.f, 50.f);
        /* magnitudes 2^-40..2^40: the pairs round, so a wrong order or a lost
         * low word shows */
        for (int64_t i = 0; t % 2 && i < (int64_t)outer * n * inner; i++)
            ((float *)x.data)[i] = ldexpf(((float *)x.data)[i], kt_randint(-40, 40));
        /* or (the even Sums) integers over 2^0..2^12: every partial sum exact in a
         * pair and in a double, so the pairs must match the host's doubles */
        int exact = t % 2 == 0 && op == CK_R_SUM;
        for (int64_t i = 0; exact && i < (int64_t)outer * n * inner; i++)
            ((float *)x.data)[i] = ldexpf((float)kt_randint(-(1 << 20), 1 << 20), -kt_randint(0, 12));
        ck_step a = {.kind = CK_REDUCE, .n_in = 1, .in = {0}, .out = 1};
        a.u.reduce = (ck_reduce_p){.op = op, .outer = outer * g, .n = m, .inner = inner,
                                   .dtype = SI_FLOAT32, .divisor = n, .carry = 2};
        ck_step b = {.kind = CK_REDUCE, .n_in = 1, .in = {0}, .out = 1};
        b.u.reduce = (ck_reduce_p){.op = CK_R_SUM, .outer = outer, .n = g, .inner = inner,
                                   .dtype = SI_FLOAT32, .pairs = 1, .post_div = pool ? n : 0,
                                   .lanes = lanes ? CK_REDUCE_LANES : 0};
        /* the reference: one step (or the pool over a window of n x 1) */
        ck_step u = {.kind = CK_REDUCE, .n_in = 1, .in = {0}, .out = 1};
        u.u.reduce = (ck_reduce_p){.op = op, .outer = outer, .n = n, .inner = inner, .dtype = SI_FLOAT32};
        if (pool) {
            u.kind = CK_POOL;
            u.u.pool = (ck_pool_p){.n = outer, .in_h = n, .in_w = 1, .c = inner, .out_h = 1,
                                   .out_w = 1, .k_h = n, .k_w = 1, .stride_h = 1, .stride_w = 1};
        }
        core_buf ref = kt_buf(SI_FLOAT32, 2, od), yh = kt_buf(SI_FLOAT32, 2, od),
                 yg = kt_buf(SI_FLOAT32, 2, od), ph = kt_buf(SI_FLOAT32, 2, pd),
                 pg = kt_buf(SI_FLOAT32, 2, pd);
        const core_buf *ins[] = {&x};
        assert_int_equal(ck_host_run(&u, ins, &ref, NULL), SI_OK);
        assert_int_equal(ck_host_run(&a, ins, &ph, NULL), SI_OK);
        assert_int_equal(kt_run_gpu(&a, ins, &pg), 0);
        core_shape ps = {.rank = 2, .d = {pd[0], pd[1]}}, os = {.rank = 2, .d = {outer, inner}};
        assert_int_equal(kt_same_ahead(&a, ins, SI_FLOAT32, &ps), 0);
        if (t % 4 == 2) { /* x stored as halves (f16 precision): values a half holds, the same pairs */
            core_buf xh = kt_buf(SI_FLOAT32, 3, d), p16 = kt_buf(SI_FLOAT32, 2, pd), p32 = kt_buf(SI_FLOAT32, 2, pd);
            for (int64_t i = 0; i < (int64_t)outer * n * inner; i++)
                ((float *)xh.data)[i] = io_half_to_float(io_float_to_half(((float *)x.data)[i] / 1e3f));
            const core_buf *hx[] = {&xh};
            ck_step ah = a;
            ah.half = 1; /* binding 0 */
            assert_true(core_step_half_ok(&ah, 0) && !core_step_half_ok(&b, 0));
            assert_int_equal(kt_run_gpu(&a, hx, &p32), 0);
            assert_int_equal(kt_run_gpu(&ah, hx, &p16), 0);
            assert_memory_equal(p16.data, p32.data, (size_t)(pd[0] * pd[1]) * sizeof(float));
            kt_free(&xh);
            kt_free(&p16);
            kt_free(&p32);
        }
        const core_buf *hins[] = {&ph}, *gins[] = {&pg};
        assert_int_equal(ck_host_run(&b, hins, &yh, NULL), SI_OK);
        assert_int_equal(kt_run_gpu(&b, gins, &yg), 0);
        assert_int_equal(kt_same_ahead(&b, gins, SI_FLOAT32, &os), 0);
        check("split reduce (host)", t, rel_err(yh.data, ref.data, (int64_t)outer * inner), 1e-6);
        if (exact) {
            /* the part sums, and the pairs' sums left as pairs (a lane's each) */
            for (int64_t i = 0; i < pd[0] * inner; i++)
                assert_true((double)((float *)pg.data)[2 * i] + ((float *)pg.data)[2 * i + 1] ==
                            ((double *)ph.data)[i]);
            int cw = lanes ? CK_REDUCE_LANES : 1;
            int64_t cd[] = {outer, (int64_t)inner * 2 * cw};
            core_buf ch = kt_buf(SI_FLOAT32, 2, cd), cg = kt_buf(SI_FLOAT32, 2, cd);
            ck_step bc = b;
            bc.u.reduce.carry = 2;
            assert_int_equal(ck_host_run(&bc, hins, &ch, NULL), SI_OK);
            assert_int_equal(kt_run_gpu(&bc, gins, &cg), 0);
            for (int64_t e = 0; e < (int64_t)outer * inner; e++) {
                double sum = 0;
                for (int l = 0; l < cw; l++)
                    sum += (double)((float *)cg.data)[2 * (e * cw + l)] + ((float *)cg.data)[2 * (e * cw + l) + 1];
                assert_true(sum == ((double *)ch.data)[e * cw]);
            }
            kt_free(&ch);
            kt_free(&cg);
        }
        check("split reduce (gpu)", t, rel_err(yg.data, ref.data, (int64_t)outer * inner), TOL);
        kt_free(&x);
        kt_free(&ref);
        kt_free(&yh);
        kt_free(&yg);
        kt_free(&ph);
        kt_free(&pg);
    }
}

/* Averages over windows of 256 elements or more run one workgroup an output
 * (pool.comp's OPC 1, a fixed tree of 64 lanes): against the host reference on
 * global pools, strided windows and windows clipped by SAME padding; and a band
 * of output rows run as its own step (as a budget's split makes it) gives the
 * very bits of those rows of the whole; its loads ahead of its sums (on GPUs)
 * or not, the same bits. */
static void test_pool_wide(void **state)
{
    (void)state;
    int splits = 0;
    for (int t = 0; t < 12; t++) {
        /* 0: global, 1: windows side by side (stride = window), 2: SAME, any stride */
        int same = t % 3 == 2, global = t % 3 == 0, tiled = t % 3 == 1;
        int kh = global ? kt_randint(16, 70) : kt_randint(16, 40);
        int kw = global ? kt_randint(16, 70) : kt_randint(16, 40);
        if (kh * kw < 256)
            kw = 256 / kh + 1;
        int sh = global || tiled ? kh : kt_randint(1, kh), sw = global || tiled ? kw : kt_randint(1, kw);
        int n = kt_randint(1, 2), c = kt_randint(1, 5);
        int ih = global ? kh : tiled ? kh * kt_randint(2, 4) + kt_randint(0, kh - 1) : kt_randint(kh, kh + 20);
        int iw = global ? kw : kt_randint(kw, kw + 20);
        int oh, ow, pt, pl;
        pool_dim(ih, kh, sh, same, &oh, &pt);
        pool_dim(iw, kw, sw, same, &ow, &pl);
        int64_t d[] = {n, ih, iw, c};
        core_buf x = kt_random(SI_FLOAT32, 4, d, -10.f, 10.f);
        ck_step s = {.kind = CK_POOL, .n_in = 1, .in = {0}, .out = 1};
        s.u.pool = (ck_pool_p){.is_max = 0, .n = n, .in_h = ih, .in_w = iw, .c = c,
                               .out_h = oh, .out_w = ow, .k_h = kh, .k_w = kw,
                               .stride_h = sh, .stride_w = sw, .pad_top = pt, .pad_left = pl};
        core_shape os = {.rank = 4, .d = {n, oh, ow, c}};
        const core_buf *ins[] = {&x};
        check("wide avg pool", t, kt_compare(&s, ins, SI_FLOAT32, &os, NULL), TOL);
        assert_int_equal(kt_same_ahead(&s, ins, SI_FLOAT32, &os), 0); /* loads ahead or not: the same bits */
        /* output rows r0.. of batch 0 (VALID, stride = window: input rows r0*kh..) */
        if (tiled) {
            splits++;
            int r0 = kt_randint(1, oh - 1);
            core_buf whole = kt_buf(SI_FLOAT32, 4, os.d), part;
            assert_int_equal(kt_run_gpu(&s, ins, &whole), 0);
            int64_t pd[] = {1, ih - r0 * kh, iw, c};
            core_buf xp = kt_buf(SI_FLOAT32, 4, pd);
            memcpy(xp.data, (float *)x.data + (int64_t)r0 * kh * iw * c,
                   (size_t)(pd[1] * iw * c) * sizeof(float));
            ck_step ps = s;
            ps.u.pool.n = 1;
            ps.u.pool.in_h = (int32_t)pd[1];
            ps.u.pool.out_h = oh - r0;
            int64_t od[] = {1, oh - r0, ow, c};
            part = kt_buf(SI_FLOAT32, 4, od);
            const core_buf *pins[] = {&xp};
            assert_int_equal(kt_run_gpu(&ps, pins, &part), 0);
            assert_memory_equal(part.data, (float *)whole.data + (int64_t)r0 * ow * c,
                                (size_t)((oh - r0) * ow * c) * sizeof(float));
            kt_free(&whole);
            kt_free(&part);
            kt_free(&xp);
        }
        kt_free(&x);
    }
    assert_int_equal(splits, 4);
}

static void test_reduce(void **state)
{
    (void)state;
    for (int k = 0; k < 6; k++) {
        reduce_case(CK_R_SUM, SI_FLOAT32, SI_FLOAT32, -20.f, 20.f, k);
        reduce_case(CK_R_SUM, SI_INT32, SI_INT32, -1000, 1000, k);
        reduce_case(CK_R_SUM, SI_BOOL, SI_INT32, 0, 1, k);
        reduce_case(CK_R_MEAN, SI_FLOAT32, SI_FLOAT32, -20.f, 20.f, k);
        reduce_case(CK_R_MEAN, SI_INT32, SI_FLOAT32, -1000, 1000, k);
        reduce_case(CK_R_MAX, SI_FLOAT32, SI_FLOAT32, -20.f, 20.f, k);
        reduce_case(CK_R_MAX, SI_INT32, SI_INT32, -1000, 1000, k);
        reduce_case(CK_R_MIN, SI_FLOAT32, SI_FLOAT32, -20.f, 20.f, k);
        reduce_case(CK_R_MIN, SI_INT32, SI_INT32, -1000, 1000, k);
        reduce_case(CK_R_PROD, SI_FLOAT32, SI_FLOAT32, 0.6f, 1.5f, k);
        reduce_case(CK_R_PROD, SI_INT32, SI_INT32, -9, 9, k); /* wraps: exact anyway */
        reduce_case(CK_R_ANY, SI_BOOL, SI_BOOL, 0, 1, k);
        reduce_case(CK_R_ALL, SI_BOOL, SI_BOOL, 0, 1, k);
    }
    /* Mostly-false / mostly-true rows so Any and All are not constant. */
    for (int k = 0; k < 4; k++) {
        int64_t d[] = {5, 6, 3};
        core_buf x = kt_buf(SI_BOOL, 3, d);
        for (int i = 0; i < 90; i++)
            ((int32_t *)x.data)[i] = (kt_rand() % 9 == 0) ^ (k & 1);
        ck_step s = {.kind = CK_REDUCE, .n_in = 1, .in = {0}, .out = 1};
        s.u.reduce = (ck_reduce_p){.op = k < 2 ? CK_R_ANY : CK_R_ALL, .outer = 5, .n = 6,
                                   .inner = 3, .dtype = SI_BOOL};
        core_shape os = {.rank = 2, .d = {5, 3}};
        const core_buf *ins[] = {&x};
        check("any/all sparse", k, kt_compare(&s, ins, SI_BOOL, &os, NULL), 0);
        kt_free(&x);
    }
}

static void test_softmax(void **state)
{
    (void)state;
    for (int k = 0; k < 24; k++) {
        int outer = kt_randint(1, 20);
        int n = k == 0 ? 1 : (k == 1 ? 300 : kt_randint(1, 300));
        int64_t d[] = {outer, n};
        core_buf x = kt_random(SI_FLOAT32, 2, d, -20.f, 20.f);
        ck_step s = {.kind = CK_SOFTMAX, .n_in = 1, .in = {0}, .out = 1};
        s.u.softmax = (ck_softmax_p){.outer = outer, .n = n, .log = k & 1};
        const core_buf *ins[] = {&x};
        check(k & 1 ? "logsoftmax" : "softmax", k, kt_compare(&s, ins, SI_FLOAT32, &x.shape, NULL),
              TOL);
        assert_int_equal(kt_same_ahead(&s, ins, SI_FLOAT32, &x.shape), 0); /* loads ahead or not: the same bits */
        if (k % 4 == 2) { /* a NaN: it sticks in the max, ahead of the sums or not */
            ((float *)x.data)[kt_randint(0, outer * n - 1)] = NAN;
            assert_int_equal(kt_same_ahead(&s, ins, SI_FLOAT32, &x.shape), 0);
        }
        kt_free(&x);
    }
}

static void test_argmax(void **state)
{
    (void)state;
    for (int k = 0; k < 32; k++) {
        int outer = kt_randint(1, 6), n = kt_randint(1, 30), inner = kt_randint(1, 6);
        int is_int = k & 2;
        int64_t d[] = {outer, n, inner};
        /* Few distinct values: many ties, which must resolve to the first index. */
        core_buf x = kt_random(is_int ? SI_INT32 : SI_FLOAT32, 3, d, -2, 2);
        if (!is_int)
            for (int i = 0; i < outer * n * inner; i++)
                ((float *)x.data)[i] = (float)kt_randint(-2, 2) * 0.5f;
        ck_step s = {.kind = CK_ARGMAX, .n_in = 1, .in = {0}, .out = 1};
        s.u.argmax = (ck_argmax_p){.outer = outer, .n = n, .inner = inner, .is_min = k & 1,
                                   .in_dtype = x.dtype};
        core_shape os = {.rank = 2, .d = {outer, inner}};
        const core_buf *ins[] = {&x};
        check("argmax", k, kt_compare(&s, ins, SI_INT32, &os, NULL), 0);
        kt_free(&x);
    }
    /* Long rows in lanes (one workgroup an output): few distinct values, so the
     * extreme value recurs in many lanes and the first index must win; NaNs
     * strewn in, skipped, and in some rows at index 0, which then stays. */
    for (int k = 0; k < 24; k++) {
        int outer = kt_randint(1, 3), n = kt_randint(CK_REDUCE_WIDE, 3000), inner = kt_randint(1, 5);
        int is_int = k % 4 == 3;
        int64_t d[] = {outer, n, inner};
        core_buf x = kt_random(is_int ? SI_INT32 : SI_FLOAT32, 3, d, -3, 3);
        if (!is_int) {
            float *v = x.data;
            for (int i = 0; i < outer * n * inner; i++)
                v[i] = kt_randint(0, 40) == 0 ? NAN : (float)kt_randint(-3, 3) * 0.5f;
            for (int o = 0; o < outer; o++)
                for (int c = 0; c < inner; c++)
                    if (kt_randint(0, 3) == 0) /* a leading NaN */
                        v[(int64_t)o * n * inner + c] = NAN;
                    else if (kt_randint(0, 3) == 0) /* the extreme only late, in one lane */
                        v[((int64_t)o * n + n - 1 - kt_randint(0, 100)) * inner + c] = k & 1 ? -9.f : 9.f;
        }
        ck_step s = {.kind = CK_ARGMAX, .n_in = 1, .in = {0}, .out = 1};
        s.u.argmax = (ck_argmax_p){.outer = outer, .n = n, .inner = inner, .is_min = k & 1,
                                   .in_dtype = x.dtype, .lanes = CK_REDUCE_LANES};
        core_shape os = {.rank = 2, .d = {outer, inner}};
        const core_buf *ins[] = {&x};
        check("argmax lanes", k, kt_compare(&s, ins, SI_INT32, &os, NULL), 0);
        kt_free(&x);
    }
    /* A tie between the first two positions of a row: index 0 wins. */
    int64_t d[] = {1, 3, 1};
    core_buf x = kt_buf(SI_FLOAT32, 3, d);
    ((float *)x.data)[0] = 2.f;
    ((float *)x.data)[1] = 2.f;
    ((float *)x.data)[2] = 1.f;
    ck_step s = {.kind = CK_ARGMAX, .n_in = 1, .in = {0}, .out = 1};
    s.u.argmax = (ck_argmax_p){.outer = 1, .n = 3, .inner = 1, .in_dtype = SI_FLOAT32};
    core_buf out = {.dtype = SI_INT32, .shape = {.rank = 1, .d = {1}}};
    int32_t res = -1;
    out.data = &res;
    const core_buf *ins[] = {&x};
    assert_int_equal(kt_run_gpu(&s, ins, &out), 0);
    assert_int_equal(res, 0);
    kt_free(&x);
}

static void test_resize(void **state)
{
    (void)state;
    static const int sizes[][4] = {
        /* in_h, in_w, out_h, out_w: up, down, odd, 1-pixel edges */
        {4, 5, 9, 11}, {9, 11, 4, 5}, {7, 3, 13, 2}, {1, 1, 5, 3}, {6, 6, 1, 1},
        {5, 8, 5, 8}, {3, 7, 10, 21}, {17, 13, 6, 9}, {2, 49, 49, 2}, {10, 6, 34, 47},
    };
    int k = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (int bilinear = 0; bilinear <= 1; bilinear++)
            for (int align = 0; align <= 1; align++)
                for (int hpc = 0; hpc <= 1; hpc++, k++) {
                    int n = kt_randint(1, 2), c = kt_randint(1, 3);
                    int is_int = !bilinear && k % 3 == 0;
                    si_dtype dt = is_int ? SI_INT32 : SI_FLOAT32;
                    int64_t d[] = {n, sizes[z][0], sizes[z][1], c};
                    core_buf x = kt_random(dt, 4, d, -50.f, 50.f);
                    ck_step s = {.kind = CK_RESIZE, .n_in = 1, .in = {0}, .out = 1};
                    s.u.resize = (ck_resize_p){.bilinear = bilinear, .n = n, .in_h = sizes[z][0],
                                               .in_w = sizes[z][1], .c = c,
                                               .out_h = sizes[z][2], .out_w = sizes[z][3],
                                               .align_corners = align, .half_pixel_centers = hpc};
                    core_shape os = {.rank = 4, .d = {n, sizes[z][2], sizes[z][3], c}};
                    const core_buf *ins[] = {&x};
                    si_dtype odt = bilinear ? SI_FLOAT32 : dt;
                    check(bilinear ? "resize bilinear" : "resize nearest", k,
                          kt_compare(&s, ins, odt, &os, NULL), bilinear ? TOL : 0);
                    kt_free(&x);
                }
}

/* Known values from tfjs 4.22 (tf.image.resize* on the CPU backend) for a 1x3x4x1
 * ramp 0..11 resized to 5x3: guards the coordinate rules, not just GPU == host. */
static void test_resize_known(void **state)
{
    (void)state;
    static const struct { int bilinear, align, hpc; float want[15]; } cases[] = {
        {1, 0, 0, {0, 1.3333334f, 2.6666667f, 2.4000001f, 3.7333333f, 5.0666666f, 4.8000002f,
                   6.1333332f, 7.4666667f, 7.1999998f, 8.5333338f, 9.8666668f, 8, 9.333333f,
                   10.666667f}},
        {1, 1, 0, {0, 1.5f, 3, 2, 3.5f, 5, 4, 5.5f, 7, 6, 7.5f, 9, 8, 9.5f, 11}},
        {1, 0, 1, {0.16666667f, 1.5f, 2.8333333f, 1.7666667f, 3.0999999f, 4.4333334f,
                   4.1666665f, 5.5f, 6.8333335f, 6.5666666f, 7.9000001f, 9.2333336f, 8.166667f,
                   9.5f, 10.833333f}},
        {0, 0, 0, {0, 1, 2, 0, 1, 2, 4, 5, 6, 4, 5, 6, 8, 9, 10}},
        {0, 1, 0, {0, 2, 3, 4, 6, 7, 4, 6, 7, 8, 10, 11, 8, 10, 11}},
        {0, 0, 1, {0, 2, 3, 0, 2, 3, 4, 6, 7, 8, 10, 11, 8, 10, 11}},
    };
    int64_t d[] = {1, 3, 4, 1};
    core_buf x = kt_buf(SI_FLOAT32, 4, d);
    for (int i = 0; i < 12; i++)
        ((float *)x.data)[i] = (float)i;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ck_step s = {.kind = CK_RESIZE, .n_in = 1, .in = {0}, .out = 1};
        s.u.resize = (ck_resize_p){.bilinear = cases[k].bilinear, .n = 1, .in_h = 3, .in_w = 4,
                                   .c = 1, .out_h = 5, .out_w = 3,
                                   .align_corners = cases[k].align,
                                   .half_pixel_centers = cases[k].hpc};
        float got[15];
        core_buf out = {.dtype = SI_FLOAT32, .shape = {.rank = 4, .d = {1, 5, 3, 1}}, .data = got};
        const core_buf *ins[] = {&x};
        assert_int_equal(ck_host_run(&s, ins, &out, NULL), SI_OK);
        for (int i = 0; i < 15; i++) {
            if (fabsf(got[i] - cases[k].want[i]) > 1e-5f)
                fprintf(stderr, "resize known case %zu [%d]: %g want %g\n", k, i, got[i],
                        cases[k].want[i]);
            assert_true(fabsf(got[i] - cases[k].want[i]) <= 1e-5f);
        }
    }
    kt_free(&x);
}

/* A one-node model x -> op(x, axes) written to a temp folder and lowered. */
static core_program *lower_reduce_model(const char *op, const char *axes, int keep,
                                        const core_shape *xs)
{
    char dir[] = "/tmp/si_pool_reduce_XXXXXX", path[64], json[2048];
    if (!mkdtemp(dir))
        return NULL;
    snprintf(path, sizeof path, "%s/model.json", dir);
    int n = snprintf(json, sizeof json,
                     "{\"format\":\"graph-model\",\"weightsManifest\":[],\"modelTopology\":{\"node\":["
                     "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
                     "\"shape\":{\"shape\":{\"dim\":[");
    for (int i = 0; i < xs->rank; i++)
        n += snprintf(json + n, sizeof json - (size_t)n, "%s{\"size\":\"%lld\"}", i ? "," : "",
                      (long long)xs->d[i]);
    snprintf(json + n, sizeof json - (size_t)n,
             "]}}}},{\"name\":\"axes\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_INT32\"},"
             "\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\",\"tensorShape\":{\"dim\":[{\"size\":\"%d\"}]},"
             "\"intVal\":[%s]}}}},{\"name\":\"y\",\"op\":\"%s\",\"input\":[\"x\",\"axes\"],"
             "\"attr\":{\"keep_dims\":{\"b\":%s}}}]}}",
             axes[0] ? (int)(strlen(axes) + 1) / 2 : 0, axes, op, keep ? "true" : "false");
    FILE *f = fopen(path, "w");
    core_program *p = NULL;
    if (f) {
        fputs(json, f);
        fclose(f);
        io_model *m = NULL;
        core_graph *g = NULL;
        si_error err = {0};
        if (io_model_load(path, &m, &err) != SI_OK || core_graph_build(m, &g, &err) != SI_OK ||
            core_program_build(g, xs, NULL, NULL, NULL, &p, &err) != SI_OK)
            fprintf(stderr, "lowering %s: %s\n", op, err.message);
        core_graph_free(g);
        io_model_free(m);
    }
    unlink(path);
    rmdir(dir);
    return p;
}

static void test_reduce_lowering(void **state)
{
    (void)state;
    /* Sum over non-adjacent axes [0,2] of [2,3,4,5], keep_dims: transpose to
     * [3,5,2,4] (kept axes, then reduced ones in the given order), reduce 8 at a time. */
    core_shape xs = {.rank = 4, .d = {2, 3, 4, 5}};
    core_program *p = lower_reduce_model("Sum", "0,2", 1, &xs);
    assert_non_null(p);
    assert_int_equal(p->n_steps, 2);
    const ck_step *cp = &p->steps[0], *rd = &p->steps[1];
    assert_int_equal(cp->kind, CK_COPY);
    static const int32_t dim[] = {3, 5, 2, 4}, ist[] = {20, 1, 60, 5}, ost[] = {40, 8, 4, 1};
    assert_int_equal(cp->u.copy.rank, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(cp->u.copy.dim[i], dim[i]);
        assert_int_equal(cp->u.copy.in_stride[i], ist[i]);
        assert_int_equal(cp->u.copy.out_stride[i], ost[i]);
    }
    assert_int_equal(cp->u.copy.in_offset, 0);
    assert_int_equal(cp->u.copy.out_offset, 0);
    assert_int_equal(rd->kind, CK_REDUCE);
    assert_int_equal(rd->in[0], cp->out);
    assert_int_equal(rd->u.reduce.op, CK_R_SUM);
    assert_int_equal(rd->u.reduce.outer, 15);
    assert_int_equal(rd->u.reduce.n, 8);
    assert_int_equal(rd->u.reduce.inner, 1);
    const core_tensor *y = &p->tensors[p->outputs[0]];
    core_shape ys = {.rank = 4, .d = {1, 3, 1, 5}};
    assert_true(core_shape_eq(&y->shape, &ys));

    /* Both steps on the host and on the GPU against a plain loop. */
    int64_t d[] = {2, 3, 4, 5};
    core_buf x = kt_random(SI_FLOAT32, 4, d, -20.f, 20.f);
    core_buf th = kt_buf(SI_FLOAT32, 4, (int64_t[]){3, 5, 2, 4}), tg = th;
    tg.data = calloc(120, 4);
    core_buf yh = kt_buf(SI_FLOAT32, 4, ys.d), yg = kt_buf(SI_FLOAT32, 4, ys.d);
    const core_buf *ins[] = {&x};
    assert_int_equal(ck_host_run(cp, ins, &th, NULL), SI_OK);
    assert_int_equal(kt_run_gpu(cp, ins, &tg), 0);
    ins[0] = &th;
    assert_int_equal(ck_host_run(rd, ins, &yh, NULL), SI_OK);
    ins[0] = &tg;
    assert_int_equal(kt_run_gpu(rd, ins, &yg), 0);
    const float *xv = x.data;
    for (int b = 0; b < 3; b++)
        for (int c = 0; c < 5; c++) {
            float want = 0.f;
            for (int a = 0; a < 2; a++)
                for (int h = 0; h < 4; h++)
                    want += xv[((a * 3 + b) * 4 + h) * 5 + c];
            float got_h = ((float *)yh.data)[b * 5 + c], got_g = ((float *)yg.data)[b * 5 + c];
            assert_true(fabsf(got_h - want) <= 1e-4f * fmaxf(1.f, fabsf(want)));
            assert_true(fabsf(got_g - got_h) <= 1e-4f * fmaxf(1.f, fabsf(got_h)));
        }
    kt_free(&x);
    kt_free(&th);
    kt_free(&tg);
    kt_free(&yh);
    kt_free(&yg);
    core_program_free(p);

    /* Mean over adjacent axes [1,2] of NHWC (global average pool): one step, no copy. */
    core_shape xs2 = {.rank = 4, .d = {2, 7, 6, 9}};
    p = lower_reduce_model("Mean", "1,2", 0, &xs2);
    assert_non_null(p);
    assert_int_equal(p->n_steps, 1);
    assert_int_equal(p->steps[0].kind, CK_REDUCE);
    assert_int_equal(p->steps[0].u.reduce.op, CK_R_MEAN);
    assert_int_equal(p->steps[0].u.reduce.outer, 2);
    assert_int_equal(p->steps[0].u.reduce.n, 42);
    assert_int_equal(p->steps[0].u.reduce.inner, 9);
    core_shape ys2 = {.rank = 2, .d = {2, 9}};
    assert_true(core_shape_eq(&p->tensors[p->outputs[0]].shape, &ys2));
    core_program_free(p);

    /* A long Mean with few outputs (a global pool of 128x128x16): part sums of 32
     * as pairs, then the 512 pairs of each output in lanes. */
    core_shape xs3 = {.rank = 4, .d = {1, 128, 128, 16}};
    p = lower_reduce_model("Mean", "1,2", 1, &xs3);
    assert_non_null(p);
    assert_int_equal(p->n_steps, 2);
    /* {op, outer, n, inner, divisor, carry, lanes, pairs, post_div} of each step */
    const int32_t want[2][9] = {{CK_R_MEAN, 512, 32, 16, 16384, 2, 0, 0, 0},
                                {CK_R_SUM, 1, 512, 16, 0, 0, CK_REDUCE_LANES, 1, 0}};
    for (int k = 0; k < 2; k++) {
        const ck_reduce_p *r = &p->steps[k].u.reduce;
        const int32_t got[9] = {r->op, r->outer, r->n, r->inner, r->divisor, r->carry, r->lanes,
                                r->pairs, r->post_div};
        assert_memory_equal(got, want[k], sizeof got);
    }
    assert_int_equal(p->steps[1].in[0], p->steps[0].out);
    assert_int_equal(p->steps[1].out, p->outputs[0]);
    core_program_free(p);

    /* No axes: the output aliases the input. */
    p = lower_reduce_model("Max", "", 1, &xs2);
    assert_non_null(p);
    assert_int_equal(p->n_steps, 0);
    assert_int_equal(core_storage(p, p->outputs[0]), core_storage(p, p->inputs[0]));
    core_program_free(p);
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool),    cmocka_unit_test(test_pool_wide), cmocka_unit_test(test_reduce), cmocka_unit_test(test_reduce_lanes), cmocka_unit_test(test_reduce_split),
        cmocka_unit_test(test_softmax), cmocka_unit_test(test_argmax),
        cmocka_unit_test(test_resize),  cmocka_unit_test(test_resize_known),
        cmocka_unit_test(test_reduce_lowering),
    };
    return cmocka_run_group_tests_name("kernels_pool_reduce", tests, setup, teardown);
}
