/* The kernel-kind table (CK_KINDS, core/step.h) and what is generated from
 * it: names, host dispatch, loop costs, shaders and the tiling rules. The
 * per-kind kernel tests check each kernel's numbers; this checks that every
 * row reaches the right function in each table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"
#include "tile_internal.h"
#include "glk_internal.h" /* glk_get_named_program: a program that does not compile */

static void test_names(void **state)
{
    (void)state;
    for (int k = 0; k < CK__COUNT; k++) {
        const char *name = ck_kind_name((ck_kind)k);
        assert_non_null(name);
        assert_string_not_equal(name, "?");
        for (int j = 0; j < k; j++)
            assert_string_not_equal(name, ck_kind_name((ck_kind)j));
    }
    assert_string_equal(ck_kind_name(CK_COPY), "copy");
    assert_string_equal(ck_kind_name(CK_CROP_RESIZE), "crop_resize");
    assert_string_equal(ck_kind_name(CK__COUNT), "?");
}

/* TopK, the CropAndResize box table, scatter and bincount run on the host
 * (DESIGN): no shader. */
static void test_host_kinds(void **state)
{
    (void)state;
    for (int k = 0; k < CK__COUNT; k++) {
        int host = k == CK_TOPK || k == CK_CROP_BOXES || k == CK_MULTINOMIAL || k == CK_TRANSFORM ||
                   k == CK_SCATTER || k == CK_BINCOUNT;
        assert_int_equal(ck_runs_on_host((ck_kind)k), host);
        assert_int_equal(ck_kind_shader((ck_kind)k) == NULL, host);
    }
    assert_false(ck_runs_on_host(CK__COUNT));
}

/* ck_host_run reaches each kind's own reference: a transpose by CK_COPY, a
 * negation by CK_UNARY, a sum by CK_ADDN; an unknown kind is refused. */
static void test_host_dispatch(void **state)
{
    (void)state;
    si_error err = {0};
    int64_t d23[] = {2, 3}, d32[] = {3, 2};
    core_buf x = kt_random(SI_FLOAT32, 2, d23, -4.f, 4.f), out = kt_buf(SI_FLOAT32, 2, d32);
    const core_buf *ins[2] = {&x, &x};
    const float *xv = x.data, *ov = out.data;

    ck_step t = {.kind = CK_COPY, .n_in = 1, .in = {0}, .out = 1};
    t.u.copy = (ck_copy_p){.rank = 2, .dim = {3, 2}, .in_stride = {1, 3}, .out_stride = {2, 1}};
    assert_int_equal(ck_host_run(&t, ins, &out, &err), SI_OK);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++)
            assert_true(ov[i * 2 + j] == xv[j * 3 + i]);

    ck_step u = {.kind = CK_UNARY, .n_in = 1, .in = {0}, .out = 1};
    u.u.unary = (ck_unary_p){.op = CK_U_NEG, .count = 6, .in_dtype = SI_FLOAT32,
                             .out_dtype = SI_FLOAT32};
    assert_int_equal(ck_host_run(&u, ins, &out, &err), SI_OK);
    for (int i = 0; i < 6; i++)
        assert_true(ov[i] == -xv[i]);

    ck_step a = {.kind = CK_ADDN, .n_in = 2, .in = {0, 0}, .out = 1};
    a.u.addn = (ck_addn_p){.n = 2, .count = 6, .dtype = SI_FLOAT32};
    assert_int_equal(ck_host_run(&a, ins, &out, &err), SI_OK);
    for (int i = 0; i < 6; i++)
        assert_true(ov[i] == xv[i] + xv[i]);

    ck_step bad = {.kind = CK__COUNT, .n_in = 0, .out = 1};
    assert_int_equal(ck_host_run(&bad, ins, &out, &err), SI_ERR_UNSUPPORTED);
    kt_free(&x);
    kt_free(&out);
}

/* The iterations column: the loops one invocation runs. */
static void test_loop_iterations(void **state)
{
    (void)state;
    ck_step s = {.kind = CK_CONV2D};
    s.u.conv = (ck_conv_p){.k_h = 3, .k_w = 5, .in_c = 7};
    assert_int_equal(ck_loop_iterations(&s), 3 * 5 * 7);
    s.kind = CK_DECONV2D;
    assert_int_equal(ck_loop_iterations(&s), 3 * 5 * 7);
    s.kind = CK_DWCONV2D;
    assert_int_equal(ck_loop_iterations(&s), 3 * 5);
    s = (ck_step){.kind = CK_MATMUL};
    s.u.matmul.k = 11;
    assert_int_equal(ck_loop_iterations(&s), 11);
    s = (ck_step){.kind = CK_POOL};
    s.u.pool.k_h = 2;
    s.u.pool.k_w = 9;
    assert_int_equal(ck_loop_iterations(&s), 18);
    s = (ck_step){.kind = CK_REDUCE};
    s.u.reduce.n = 13;
    assert_int_equal(ck_loop_iterations(&s), 13);
    s = (ck_step){.kind = CK_SOFTMAX};
    s.u.softmax.n = 17;
    assert_int_equal(ck_loop_iterations(&s), 17);
    s = (ck_step){.kind = CK_ARGMAX};
    s.u.argmax.n = 19;
    assert_int_equal(ck_loop_iterations(&s), 19);
    s = (ck_step){.kind = CK_DILATION2D};
    s.u.conv.k_h = 3;
    s.u.conv.k_w = 5;
    assert_int_equal(ck_loop_iterations(&s), 15);
    s = (ck_step){.kind = CK_POOL_ARGMAX};
    s.u.pool.k_h = 2;
    s.u.pool.k_w = 9;
    assert_int_equal(ck_loop_iterations(&s), 18);
    s = (ck_step){.kind = CK_CONV3D};
    s.u.conv3d = (ck_conv3d_p){.k_d = 2, .k_h = 3, .k_w = 5, .in_c = 7};
    assert_int_equal(ck_loop_iterations(&s), 2 * 3 * 5 * 7);
    s = (ck_step){.kind = CK_SCAN};
    s.u.scan.n = 23;
    assert_int_equal(ck_loop_iterations(&s), 23);
    s = (ck_step){.kind = CK_LRN};
    s.u.lrn = (ck_lrn_p){.c = 9, .radius = 2};
    assert_int_equal(ck_loop_iterations(&s), 5);
    s.u.lrn.radius = 7;
    assert_int_equal(ck_loop_iterations(&s), 9);
    s = (ck_step){.kind = CK_COPY};
    s.u.copy.rank = 3;
    s.u.copy.dim[0] = 1000;
    assert_int_equal(ck_loop_iterations(&s), 1);
}

/* Every rule is whole: rows with their parts, channels with their count;
 * only MatMul and Conv2D split along output channels, only copies and
 * reductions have splits of their own. */
static void test_tile_rules(void **state)
{
    (void)state;
    for (int k = 0; k < CK__COUNT; k++) {
        const tile_rule *r = tile_rule_of((ck_kind)k);
        assert_non_null(r);
        assert_int_equal(r->rows == NULL, r->part == NULL);
        assert_int_equal(r->channels == NULL, r->set_channels == NULL);
        assert_int_equal(r->channels != NULL, k == CK_MATMUL || k == CK_CONV2D);
        assert_int_equal(r->split != NULL, k == CK_COPY || k == CK_REDUCE);
        if (ck_runs_on_host((ck_kind)k))
            assert_null(r->rows);
    }
    assert_non_null(tile_rule_of(CK_CONV2D)->rows);
    assert_non_null(tile_rule_of(CK_DWCONV2D)->rows);
    assert_null(tile_rule_of(CK_DECONV2D)->rows);
    assert_null(tile_rule_of(CK_COPY)->rows);
}

/* CK_SCAN, GPU against the host reference on random [outer, n, inner]: every
 * op, exclusive/reverse pair and dtype; float32 bitwise (one order of adds or
 * products both sides), int32 exactly, products of big int32s included
 * (tfjs's float64 product rounds past 2^53 before it wraps). */
static void test_scan(void **state)
{
    (void)state;
    for (int rep = 0; rep < 32; rep++) {
        int64_t d[3] = {kt_randint(1, 6), kt_randint(1, rep % 8 == 7 ? 400 : 30), kt_randint(1, 7)};
        int op = rep % 2, flags = (rep / 2) % 4, is_int = rep >= 16, big = is_int && rep % 3 == 0;
        si_dtype dt = is_int ? SI_INT32 : SI_FLOAT32;
        core_buf x = is_int ? kt_random(dt, 3, d, big ? -2000000000.f : -4.f, big ? 2000000000.f : 4.f)
                            : kt_random(dt, 3, d, op ? 0.5f : -5.f, op ? 1.6f : 5.f);
        if (!is_int && rep % 4 == 1) {
            ((float *)x.data)[0] = NAN;
            ((float *)x.data)[core_shape_count(&x.shape) - 1] = -INFINITY;
        }
        ck_step s = {.kind = CK_SCAN, .n_in = 1, .in = {0}, .out = 1};
        s.u.scan = (ck_scan_p){.op = op ? CK_SCAN_PROD : CK_SCAN_SUM, .outer = (int32_t)d[0],
                               .n = (int32_t)d[1], .inner = (int32_t)d[2],
                               .exclusive = flags & 1, .reverse = flags >> 1};
        const core_buf *ins[] = {&x};
        core_buf h = kt_buf(dt, 3, d), g = kt_buf(dt, 3, d);
        si_error err = {0};
        assert_int_equal(ck_host_run(&s, ins, &h, &err), SI_OK);
        assert_int_equal(kt_run_gpu(&s, ins, &g), 0);
        size_t bytes = (size_t)core_shape_count(&x.shape) * CORE_ELEM;
        if (memcmp(h.data, g.data, bytes))
            fprintf(stderr, "scan rep %d: GPU differs from the host\n", rep);
        assert_memory_equal(h.data, g.data, bytes);
        kt_free(&x);
        kt_free(&h);
        kt_free(&g);
    }
    /* inclusive: the first element is x[0] itself (-0 stays -0), exclusive 0 */
    int64_t d1[] = {3};
    core_buf x = kt_buf(SI_FLOAT32, 1, d1), y = kt_buf(SI_FLOAT32, 1, d1);
    float *xv = x.data, *yv = y.data;
    xv[0] = -0.f, xv[1] = 2.f, xv[2] = 3.f;
    ck_step s = {.kind = CK_SCAN, .n_in = 1, .in = {0}, .out = 1};
    s.u.scan = (ck_scan_p){.op = CK_SCAN_SUM, .outer = 1, .n = 3, .inner = 1};
    const core_buf *ins[] = {&x};
    si_error err = {0};
    assert_int_equal(ck_host_run(&s, ins, &y, &err), SI_OK);
    assert_true(yv[0] == 0.f && signbit(yv[0]) && yv[1] == 2.f && yv[2] == 5.f);
    s.u.scan.exclusive = s.u.scan.reverse = 1;
    assert_int_equal(ck_host_run(&s, ins, &y, &err), SI_OK);
    assert_true(yv[2] == 0.f && !signbit(yv[2]) && yv[1] == 3.f && yv[0] == 5.f);
    kt_free(&x);
    kt_free(&y);
}

/* CK_LRN, GPU (float32) against the host reference (float64, as tfjs) on
 * random [outer, c]: radii 0 to past the row, float32's largest values too. */
static void test_lrn(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++) {
        int64_t d[2] = {kt_randint(1, 40), kt_randint(1, 20)};
        core_buf x = kt_random(SI_FLOAT32, 2, d, -4.f, 4.f);
        if (rep % 4 == 3)
            ((float *)x.data)[kt_randint(0, (int)(d[0] * d[1]) - 1)] = -3e38f;
        ck_step s = {.kind = CK_LRN, .n_in = 1, .in = {0}, .out = 1};
        s.u.lrn = (ck_lrn_p){.outer = (int32_t)d[0], .c = (int32_t)d[1],
                             .radius = rep == 5 ? 100 : kt_randint(0, 4), .bias = kt_randf(0.1f, 2.f),
                             .alpha = kt_randf(0.01f, 2.f), .beta = kt_randf(0.25f, 1.5f)};
        const core_buf *ins[] = {&x};
        double e = kt_compare(&s, ins, SI_FLOAT32, &x.shape, NULL);
        if (!(e >= 0 && e <= 2e-5))
            fprintf(stderr, "lrn rep %d: error %g\n", rep, e);
        assert_true(e >= 0 && e <= 2e-5);
        kt_free(&x);
    }
}

/* Every kind the table puts on the GPU has a shader that compiles (run on
 * nothing: zero invocations); a host kind is refused. */
static void test_shaders_compile(void **state)
{
    (void)state;
    si_error err = {0};
    uint32_t buf = 0;
    assert_int_equal(glk_buffer_create(kt_gpu, 4, &buf, &err), SI_OK);
    glk_range r[CK_MAX_IN], out = {buf, 0, 0};
    si_dtype dts[CK_MAX_IN];
    for (int i = 0; i < CK_MAX_IN; i++) {
        r[i] = out;
        dts[i] = SI_FLOAT32;
    }
    dts[1] = SI_INT32; /* read only by crop_resize's table */
    for (int k = 0; k < CK__COUNT; k++) {
        ck_step s = {.kind = (ck_kind)k, .n_in = 1, .in = {0}, .out = 1};
        s.u.copy.rank = 1; /* a copy of no elements; other kinds: no output elements */
        if (k == CK_CROP_RESIZE) { /* input 1: the int32 sampling table */
            s.n_in = 2;
            s.in[1] = 0;
        }
        si_result st = glk_run_step(kt_gpu, &s, r, dts, &out, SI_FLOAT32, &err);
        if (ck_runs_on_host((ck_kind)k)) {
            assert_int_equal(st, SI_ERR_UNSUPPORTED);
            continue;
        }
        if (st != SI_OK)
            fprintf(stderr, "%s: %s\n", ck_kind_name((ck_kind)k), err.message);
        assert_int_equal(st, SI_OK);
    }
    assert_int_equal(glk_finish(kt_gpu, &err), SI_OK);
    glk_buffer_destroy(kt_gpu, buf);
}

/* Programs handed to the driver together (glk_begin_compiles, as a model's
 * open does): each kind's program, built deferred, then runs; a program that
 * does not compile is reported by glk_finish_compiles, not run, and refused
 * again when asked for; outside the deferral a failure is reported at once. */
static void test_deferred_compiles(void **state)
{
    (void)state;
    si_error err = {0};
    glk_ctx *g = NULL;
    assert_int_equal(glk_open(&g, &err), SI_OK);
    si_dtype dts[CK_MAX_IN];
    for (int i = 0; i < CK_MAX_IN; i++)
        dts[i] = SI_FLOAT32;
    dts[1] = SI_INT32;
    glk_begin_compiles(g);
    for (int k = 0; k < CK__COUNT; k++) {
        ck_step s = {.kind = (ck_kind)k, .n_in = k == CK_CROP_RESIZE ? 2 : 1, .in = {0, 0}, .out = 1};
        s.u.copy.rank = 1;
        if (!ck_runs_on_host((ck_kind)k))
            assert_int_equal(glk_prepare_step(g, &s, dts, SI_FLOAT32, &err), SI_OK);
    }
    glk_program *bad = NULL;
    assert_int_equal(glk_get_named_program(g, "bad", "xfer", "#error not a program\n", &bad, &err), SI_OK);
    uint64_t loaded = 0, compiled = 0;
    glk_program_counts(g, &loaded, &compiled);
    err = (si_error){0};
    assert_int_equal(glk_finish_compiles(g, &err), SI_ERR_GPU);
    assert_non_null(strstr(err.message, "failed to compile"));
    uint64_t compiled2 = 0;
    glk_program_counts(g, &loaded, &compiled2);
    assert_true(compiled2 > compiled); /* the good ones were finished */
    assert_int_equal(glk_get_named_program(g, "bad", "xfer", "#error not a program\n", &bad, &err), SI_ERR_GPU);
    assert_int_equal(glk_get_named_program(g, "bad2", "xfer", "#error not a program\n", &bad, &err), SI_ERR_GPU);
    assert_non_null(strstr(err.message, "failed to compile"));
    /* every program built deferred runs (on nothing, as test_shaders_compile) */
    uint32_t buf = 0;
    assert_int_equal(glk_buffer_create(g, 4, &buf, &err), SI_OK);
    glk_range r[CK_MAX_IN], out = {buf, 0, 0};
    for (int i = 0; i < CK_MAX_IN; i++)
        r[i] = out;
    for (int k = 0; k < CK__COUNT; k++) {
        ck_step s = {.kind = (ck_kind)k, .n_in = k == CK_CROP_RESIZE ? 2 : 1, .in = {0, 0}, .out = 1};
        s.u.copy.rank = 1;
        if (!ck_runs_on_host((ck_kind)k))
            assert_int_equal(glk_run_step(g, &s, r, dts, &out, SI_FLOAT32, &err), SI_OK);
    }
    assert_int_equal(glk_finish(g, &err), SI_OK);
    uint64_t compiled3 = 0;
    glk_program_counts(g, &loaded, &compiled3);
    assert_true(compiled3 == compiled2); /* nothing built again */
    glk_buffer_destroy(g, buf);
    glk_close(g);
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),           cmocka_unit_test(test_host_kinds),
        cmocka_unit_test(test_host_dispatch),   cmocka_unit_test(test_loop_iterations),
        cmocka_unit_test(test_tile_rules),      cmocka_unit_test(test_shaders_compile),
        cmocka_unit_test(test_scan),            cmocka_unit_test(test_lrn),
        cmocka_unit_test(test_deferred_compiles),
    };
    return cmocka_run_group_tests_name("kernels_kinds", tests, setup, teardown);
}
