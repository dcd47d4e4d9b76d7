/* si_options.precision f16 on a graph whose floats become indices and whose
 * sizes pass the largest half: what feeds an index or a shape stays exact (a
 * half holds integers only up to 2048 and nothing past 65504), what may be
 * half is, and a budget gives the same bits as none. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "streaminfer.h"
#include "../io/io.h"
#include "tiny_model.h"

#define N 70000 /* past 65504, the largest half */

/* x, p [N] -> g = GatherV2(x * 2, Cast(p + 1 - 1, int32)) reshaped to [1, -1].
 * p holds indices as floats; the chain p + 1 - 1 is float arithmetic on the GPU
 * whose result is an index. */
static const char *index_model(void)
{
    jb j = {0};
    const int dims[] = {N};
    placeholder_f32(&j, "x", dims, 1);
    placeholder_f32(&j, "p", dims, 1);
    const_f(&j, "one", 1.0f);
    const_f(&j, "two", 2.0f);
    const_i(&j, "axis", 0);
    node(&j, "shape", "Const", "",
         "\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
         "\"tensorShape\":{\"dim\":[{\"size\":\"2\"}]},\"intVal\":[1,-1]}}");
    node(&j, "x2", "Mul", "\"x\",\"two\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "a", "AddV2", "\"p\",\"one\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "f", "Sub", "\"a\",\"one\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "i", "Cast", "\"f\"", "\"SrcT\":{\"type\":\"DT_FLOAT\"},\"DstT\":{\"type\":\"DT_INT32\"}");
    node(&j, "g", "GatherV2", "\"x2\",\"i\",\"axis\"",
         "\"Tparams\":{\"type\":\"DT_FLOAT\"},\"Tindices\":{\"type\":\"DT_INT32\"},"
         "\"Taxis\":{\"type\":\"DT_INT32\"},\"batch_dims\":{\"i\":\"0\"}");
    node(&j, "y", "Reshape", "\"g\",\"shape\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    return write_model(&j, "index.json");
}

/* Runs the model at precision and budget; returns the output (malloc'ed) and stats. */
static float *run(const char *path, si_precision prec, uint64_t budget, const float *x, const float *p,
                  si_stats *st)
{
    si_options opt = {.backend = SI_BACKEND_GPU, .precision = prec, .vram_budget = budget};
    si_model *m = NULL;
    si_error err = {0};
    if (si_open(path, &opt, &m, &err) != SI_OK)
        fail_msg("open: %s", err.message);
    si_tensor_in in[2] = {{.name = "x", .dtype = SI_FLOAT32, .rank = 1, .shape = {N}, .data = x},
                          {.name = "p", .dtype = SI_FLOAT32, .rank = 1, .shape = {N}, .data = p}};
    if (si_run(m, in, 2, &err) != SI_OK)
        fail_msg("run: %s", err.message);
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    const void *data;
    assert_int_equal(si_output(m, 0, &dt, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(dt, SI_FLOAT32);
    assert_int_equal(rank, 2); /* the shape past the largest half, exact */
    assert_int_equal(shape[0], 1);
    assert_int_equal(shape[1], N);
    float *y = malloc(N * sizeof *y);
    assert_non_null(y);
    memcpy(y, data, N * sizeof *y);
    si_get_stats(m, st);
    si_close(m);
    return y;
}

static void test_indices_stay_exact(void **state)
{
    (void)state;
    const char *path = index_model();
    float *x = malloc(N * sizeof *x), *p = malloc(N * sizeof *p);
    assert_true(x && p);
    for (int k = 0; k < N; k++) {
        x[k] = (float)((k * 7919) % 10007) / 10007.0f + 0.25f; /* no two neighbours alike */
        p[k] = (float)(N - 1 - k);
    }
    si_stats s32, s16, sb;
    float *y32 = run(path, SI_PRECISION_F32, 0, x, p, &s32);
    float *y16 = run(path, SI_PRECISION_F16, 0, x, p, &s16);
    assert_int_equal(s32.f16_tensors, 0);
    assert_true(s16.f16_tensors >= 1); /* x * 2, which only a gather reads */
    assert_true(s16.lower_bound_bytes < s32.lower_bound_bytes);
    int wrong = 0;
    for (int k = 0; k < N; k++) {
        float want = 2 * x[N - 1 - k]; /* an index off by one reads another value */
        assert_true(y32[k] == want);
        if (!(y16[k] == io_half_to_float(io_float_to_half(y16[k])) && fabsf(y16[k] - want) <= want / 1024) &&
            wrong++ < 4)
            fprintf(stderr, "element %d: f16 %.9g, want %.9g\n", k, y16[k], want);
    }
    assert_int_equal(wrong, 0);
    /* at f16's lower bound: f16's bits with no budget */
    float *yb = run(path, SI_PRECISION_F16, s16.lower_bound_bytes, x, p, &sb);
    assert_memory_equal(yb, y16, N * sizeof *yb);
    free(yb);
    free(y16);
    free(y32);
    free(x);
    free(p);
}

/* Which tensors the rule keeps float32, counted by --stats (and all of them
 * with f32_ops naming the Relu): x [N] and s [100]
 *   a = Relu(x)      half: read by a Mul
 *   b = Mul(a, 3)    float32: read by Exp (an exponential's argument)
 *   e = Exp(b)       float32: an output
 *   t = Relu(s)      float32: 100 elements (under 4096), however it is read
 *   u = Mul(t, 3)    float32: an output */
static void test_rules(void **state)
{
    (void)state;
    jb j = {0};
    const int dx[] = {N}, ds[] = {100};
    placeholder_f32(&j, "x", dx, 1);
    placeholder_f32(&j, "s", ds, 1);
    const_f(&j, "three", 3.0f);
    node(&j, "a", "Relu", "\"x\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "b", "Mul", "\"a\",\"three\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "e", "Exp", "\"b\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "t", "Relu", "\"s\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "u", "Mul", "\"t\",\"three\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    const char *path = write_model(&j, "rules.json");
    float *x = calloc(N, sizeof *x), sv[100] = {0};
    assert_non_null(x);
    si_options opt = {.backend = SI_BACKEND_GPU, .precision = SI_PRECISION_F16, .no_fuse = 1};
    si_model *m = NULL;
    si_error err = {0};
    if (si_open(path, &opt, &m, &err) != SI_OK)
        fail_msg("open: %s", err.message);
    si_tensor_in in[2] = {{.name = "x", .dtype = SI_FLOAT32, .rank = 1, .shape = {N}, .data = x},
                          {.name = "s", .dtype = SI_FLOAT32, .rank = 1, .shape = {100}, .data = sv}};
    if (si_run(m, in, 2, &err) != SI_OK)
        fail_msg("run: %s", err.message);
    si_stats st;
    si_get_stats(m, &st);
    assert_int_equal(st.f16_tensors, 1); /* a */
    assert_int_equal(st.f32_tensors, 4); /* b, e, t, u */
    si_close(m);
    /* f32_ops: the Relu's steps keep their tensors float32 */
    opt.f32_ops = "Sigmoid,Relu";
    if (si_open(path, &opt, &m, &err) != SI_OK || si_run(m, in, 2, &err) != SI_OK)
        fail_msg("f32_ops: %s", err.message);
    si_get_stats(m, &st);
    assert_int_equal(st.f16_tensors, 0);
    assert_int_equal(st.f32_tensors, 5);
    si_close(m);
    /* a name that is no op is refused, named */
    opt.f32_ops = "Relu,NoSuchOp";
    m = NULL;
    assert_int_equal(si_open(path, &opt, &m, &err), SI_ERR_ARG);
    assert_null(m);
    assert_non_null(strstr(err.message, "NoSuchOp"));
    free(x);
}

/* f32_ops naming Placeholder keeps the model's inputs float32, Const its
 * constants: y = x * Fill([N], c) for x and c all 1 + 2^-13, which a half
 * rounds to 1 (its spacing at 1 is 2^-10). y is float32 (an output), so it
 * shows which of its operands was rounded. */
static void test_f32_inputs_consts(void **state)
{
    (void)state;
    const float v = 1.0f + 1.0f / 8192;
    jb j = {0};
    const int dx[] = {N};
    placeholder_f32(&j, "x", dx, 1);
    node(&j, "dims", "Const", "",
         "\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
         "\"tensorShape\":{\"dim\":[{\"size\":\"1\"}]},\"intVal\":[70000]}}");
    const_f(&j, "v", v);
    node(&j, "c", "Fill", "\"dims\",\"v\"", "\"T\":{\"type\":\"DT_FLOAT\"},\"index_type\":{\"type\":\"DT_INT32\"}");
    node(&j, "y", "Mul", "\"x\",\"c\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    const char *path = write_model(&j, "inputs.json");
    float *x = malloc(N * sizeof *x);
    assert_non_null(x);
    for (int k = 0; k < N; k++)
        x[k] = v;
    const char *lists[] = {"", "Placeholder", "Const", "Mul,Const,Placeholder"};
    const float want[] = {1.0f, v, v, v * v};
    for (int c = 0; c < 4; c++) {
        si_options opt = {.backend = SI_BACKEND_GPU, .precision = SI_PRECISION_F16, .f32_ops = lists[c]};
        si_model *m = NULL;
        si_error err = {0};
        si_tensor_in in = {.name = "x", .dtype = SI_FLOAT32, .rank = 1, .shape = {N}, .data = x};
        if (si_open(path, &opt, &m, &err) != SI_OK || si_run(m, &in, 1, &err) != SI_OK)
            fail_msg("f32_ops '%s': %s", lists[c], err.message);
        const void *data;
        assert_int_equal(si_output(m, 0, NULL, NULL, NULL, &data, &err), SI_OK);
        const float *y = data;
        for (int k = 0; k < N; k += 997)
            if (y[k] != want[c])
                fail_msg("f32_ops '%s': y[%d] = %.9g, want %.9g", lists[c], k, y[k], want[c]);
        si_close(m);
    }
    free(x);
}

/* Values past the largest half saturate to it and are counted: m = x * 1000
 * (half: a Mul reads it) for x of 100 (1e5: past 65504) and of 1 (1000), then
 * y = m * 0.001 (float32: an output). The count is the same with
 * --check-steps, which reads it after each step; none at f32. */
static void test_overflows(void **state)
{
    (void)state;
    enum { M = 8192 };
    jb j = {0};
    const int dx[] = {M};
    placeholder_f32(&j, "x", dx, 1);
    const_f(&j, "k", 1000.0f);
    const_f(&j, "r", 0.001f);
    node(&j, "m", "Mul", "\"x\",\"k\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "y", "Mul", "\"m\",\"r\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    const char *path = write_model(&j, "overflow.json");
    static float x[M];
    for (int k = 0; k < M; k++)
        x[k] = k % 2 ? 100.0f : -1.0f;
    for (int mode = 0; mode < 3; mode++) { /* f16, f16 with check_steps, f32 */
        si_options opt = {.backend = SI_BACKEND_GPU, .precision = mode < 2 ? SI_PRECISION_F16 : SI_PRECISION_F32,
                          .check_steps = mode == 1 ? 1.0 : 0};
        si_model *m = NULL;
        si_error err = {0};
        si_tensor_in in = {.name = "x", .dtype = SI_FLOAT32, .rank = 1, .shape = {M}, .data = x};
        if (si_open(path, &opt, &m, &err) != SI_OK || si_run(m, &in, 1, &err) != SI_OK)
            fail_msg("mode %d: %s", mode, err.message);
        const void *data;
        assert_int_equal(si_output(m, 0, NULL, NULL, NULL, &data, &err), SI_OK);
        const float *y = data;
        assert_true(y[0] == -1000.0f * 0.001f);
        assert_true(y[1] == (mode < 2 ? 65504.0f * 0.001f : 100000.0f * 0.001f)); /* saturated at f16 */
        si_stats st;
        si_get_stats(m, &st);
        assert_int_equal(st.f16_overflows, mode < 2 ? M / 2 : 0);
        si_close(m);
    }
}

/* A precision that is neither is refused, naming the field. */
static void test_bad_precision(void **state)
{
    (void)state;
    si_options opt = {.backend = SI_BACKEND_GPU, .precision = (si_precision)7};
    si_model *m = NULL;
    si_error err = {0};
    assert_int_equal(si_open(index_model(), &opt, &m, &err), SI_ERR_ARG);
    assert_null(m);
    assert_non_null(strstr(err.message, "precision"));
}

int main(void)
{
    unsetenv("SI_PRECISION");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indices_stay_exact),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_f32_inputs_consts),
        cmocka_unit_test(test_overflows),
        cmocka_unit_test(test_bad_precision),
    };
    return cmocka_run_group_tests(tests, tiny_setup, tiny_teardown);
}
