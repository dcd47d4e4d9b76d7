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

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),           cmocka_unit_test(test_host_kinds),
        cmocka_unit_test(test_host_dispatch),   cmocka_unit_test(test_loop_iterations),
        cmocka_unit_test(test_tile_rules),      cmocka_unit_test(test_shaders_compile),
    };
    return cmocka_run_group_tests_name("kernels_kinds", tests, setup, teardown);
}
