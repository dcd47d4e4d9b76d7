/* Lowering a graph into a program: long chains of ops that add tensors while
 * the lowering holds views of earlier ones (issue 12, defect 1: a pointer into
 * the tensor table was kept across the call that grew it), and Consts that
 * have no value at all (defect 2). Freed memory is filled with a byte pattern
 * (M_PERTURB), so a read of a freed table gives a wrong shape or value here
 * even without a sanitizer. */
#include <malloc.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "streaminfer.h"

#include "tiny_model.h"

#define N_CHAIN 300

/* x[1,5,4,3] through N_CHAIN nodes cycling Identity, IdentityN, Split with one
 * output, Tile by ones, Neg and Snapshot: the answer is x times (-1)^(negations). */
static int build_chain(jb *j)
{
    node(j, "x", "Placeholder", "",
         "\"dtype\":{\"type\":\"DT_FLOAT\"},\"shape\":{\"shape\":{\"dim\":[{\"size\":\"1\"},"
         "{\"size\":\"5\"},{\"size\":\"4\"},{\"size\":\"3\"}]}}");
    node(j, "axis", "Const", "",
         "\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
         "\"tensorShape\":{},\"intVal\":[2]}}");
    node(j, "ones", "Const", "",
         "\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
         "\"tensorShape\":{\"dim\":[{\"size\":\"4\"}]},\"intVal\":[1,1,1,1]}}");
    char prev[32] = "x", name[32], ins[96];
    int negations = 0;
    for (int i = 0; i < N_CHAIN; i++) {
        snprintf(name, sizeof name, "n%d", i);
        /* the six ops of the chain, in turn; ins: the node's inputs, %s the previous node */
        static const struct {
            const char *op, *ins, *attr;
        } link[6] = {
            {"Identity", "\"%s\"", "\"T\":{\"type\":\"DT_FLOAT\"}"},
            {"IdentityN", "\"%s\"", "\"T\":{\"list\":{\"type\":[\"DT_FLOAT\"]}}"},
            {"Split", "\"axis\",\"%s\"", "\"num_split\":{\"i\":\"1\"},\"T\":{\"type\":\"DT_FLOAT\"}"},
            {"Tile", "\"%s\",\"ones\"", "\"T\":{\"type\":\"DT_FLOAT\"}"},
            {"Neg", "\"%s\"", "\"T\":{\"type\":\"DT_FLOAT\"}"},
            {"Snapshot", "\"%s\"", "\"T\":{\"type\":\"DT_FLOAT\"}"},
        };
        snprintf(ins, sizeof ins, link[i % 6].ins, prev);
        node(j, name, link[i % 6].op, ins, link[i % 6].attr);
        negations += i % 6 == 4;
        snprintf(prev, sizeof prev, "%s", name);
    }
    return negations;
}

static void run_chain(si_backend backend)
{
    jb j = {0};
    int negations = build_chain(&j);
    const char *path = write_model(&j, "chain.json");
    si_model *m = NULL;
    si_error err = {0};
    si_options opt = {.backend = backend};
    if (si_open(path, &opt, &m, &err) != SI_OK)
        fail_msg("open: %s", err.message);
    float x[60];
    srand(7);
    for (int i = 0; i < 60; i++)
        x[i] = (float)rand() / (float)RAND_MAX * 4 - 2;
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 4, .shape = {1, 5, 4, 3}, .data = x};
    if (si_run(m, &in, 1, &err) != SI_OK)
        fail_msg("run: %s", err.message);
    assert_int_equal(si_output_count(m), 1);
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    const void *data;
    assert_int_equal(si_output(m, 0, &dt, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(dt, SI_FLOAT32);
    assert_int_equal(rank, 4);
    assert_true(shape[0] == 1 && shape[1] == 5 && shape[2] == 4 && shape[3] == 3);
    float sign = negations % 2 ? -1.0f : 1.0f;
    for (int i = 0; i < 60; i++)
        assert_true(((const float *)data)[i] == sign * x[i]);
    si_close(m);
}

static void test_chain_host(void **state)
{
    (void)state;
    run_chain(SI_BACKEND_HOST);
}

static void test_chain_gpu(void **state)
{
    (void)state;
    run_chain(SI_BACKEND_GPU);
}

/* A Const with an inline tensor that holds no values and no manifest entry is
 * refused, naming the node; it used to run on zeros. */
static void test_const_without_value(void **state)
{
    (void)state;
    jb j = {0};
    node(&j, "x", "Placeholder", "",
         "\"dtype\":{\"type\":\"DT_FLOAT\"},\"shape\":{\"shape\":{\"dim\":[{\"size\":\"4\"}]}}");
    node(&j, "w", "Const", "",
         "\"dtype\":{\"type\":\"DT_FLOAT\"},\"value\":{\"tensor\":{\"dtype\":\"DT_FLOAT\","
         "\"tensorShape\":{\"dim\":[{\"size\":\"4\"}]}}}");
    node(&j, "y", "AddV2", "\"x\",\"w\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    const char *path = write_model(&j, "noval.json");
    si_model *m = NULL;
    si_error err = {0};
    si_options opt = {.backend = SI_BACKEND_HOST};
    si_result st = si_open(path, &opt, &m, &err);
    if (st == SI_OK) {
        float x[4] = {1, 2, 3, 4};
        si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 1, .shape = {4}, .data = x};
        st = si_run(m, &in, 1, &err);
    }
    si_close(m);
    assert_int_equal(st, SI_ERR_FORMAT);
    if (!strstr(err.message, "'w'") || !strstr(err.message, "no value"))
        fail_msg("message does not name the node: %s", err.message);
}

/* A later stage of a staged model binds small inputs by value as the first
 * program does; those copies were not freed with the stage (found by
 * fuzz_model; LeakSanitizer and valgrind see it, make test-asan runs this).
 * x[-1,3] -> Enter, Exit (a frame: the host interpreter) -> Mul by q -> Relu:
 * stage 2 on the
 * backend, its input x of 3 elements bound by value. */
static void test_stage_bound_value(void **state)
{
    (void)state;
    const char *path = staged_model();
    const float x[3] = {1.5f, -2.0f, 4.0f}, want[3] = {3.0f, 2.0f, 2.0f};
    for (int backend = 0; backend < 2; backend++) {
        si_model *m = NULL;
        si_error err = {0};
        si_options opt = {.backend = backend ? SI_BACKEND_HOST : SI_BACKEND_GPU};
        if (si_open(path, &opt, &m, &err) != SI_OK)
            fail_msg("open: %s", err.message);
        si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 2, .shape = {1, 3}, .data = x};
        for (int run = 0; run < 2; run++) {
            if (si_run(m, &in, 1, &err) != SI_OK)
                fail_msg("run: %s", err.message);
            const void *data;
            assert_int_equal(si_output(m, 0, NULL, NULL, NULL, &data, &err), SI_OK);
            assert_memory_equal(data, want, sizeof want);
        }
        si_close(m);
    }
}

int main(void)
{
    mallopt(M_PERTURB, 165);
    if (!mkdtemp(tmp_root))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_host),
        cmocka_unit_test(test_chain_gpu),
        cmocka_unit_test(test_const_without_value),
        cmocka_unit_test(test_stage_bound_value),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tiny_rm_tmp();
    return rc;
}
