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

/* A PlaceholderWithDefault may go unfed, as in tfjs (graph_executor.js: the
 * fed tensor, else its default): x[4,6] -> d = PlaceholderWithDefault(x) ->
 * Neg. Fed, d is what is given (of another batch, too); unfed, it is x; runs
 * alternate, so the program is rebuilt both ways. Once in a GPU program, once
 * after a frame (Enter/Exit: the host interpreter runs d). An unfed
 * Placeholder is still an error naming it. */
static void run_with_default(const char *path, si_backend backend)
{
    float x[24], z[12];
    for (int i = 0; i < 24; i++)
        x[i] = (float)(i * 3 % 11) - 4.5f;
    for (int i = 0; i < 12; i++)
        z[i] = (float)i * 0.25f + 1.0f;
    si_model *m = NULL;
    si_error err = {0};
    si_options opt = {.backend = backend};
    if (si_open(path, &opt, &m, &err) != SI_OK)
        fail_msg("open: %s", err.message);
    assert_int_equal(si_input_count(m), 2);
    si_tensor_in in[2] = {
        {.name = "x", .dtype = SI_FLOAT32, .rank = 2, .shape = {4, 6}, .data = x},
        {.name = "d", .dtype = SI_FLOAT32, .rank = 2, .shape = {2, 6}, .data = z},
    };
    for (int run = 0; run < 4; run++) {
        int fed = run % 2;
        if (si_run(m, in, fed ? 2 : 1, &err) != SI_OK)
            fail_msg("run %d: %s", run, err.message);
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        const void *data;
        assert_int_equal(si_output(m, 0, &dt, &rank, shape, &data, &err), SI_OK);
        assert_int_equal(rank, 2);
        assert_int_equal(shape[0], fed ? 2 : 4);
        assert_int_equal(shape[1], 6);
        const float *src = fed ? z : x;
        for (int i = 0; i < (fed ? 12 : 24); i++)
            assert_true(((const float *)data)[i] == -src[i]);
    }
    /* x has no default: d alone is refused, naming x */
    assert_int_equal(si_run(m, &in[1], 1, &err), SI_ERR_ARG);
    if (!strstr(err.message, "'x'"))
        fail_msg("message does not name the input: %s", err.message);
    si_tensor_in twice[2] = {in[0], in[0]};
    assert_int_equal(si_run(m, twice, 2, &err), SI_ERR_ARG);
    si_close(m);
}

static void test_placeholder_with_default(void **state)
{
    (void)state;
    static const char *const x_node =
        "\"dtype\":{\"type\":\"DT_FLOAT\"},\"shape\":{\"shape\":{\"dim\":[{\"size\":\"4\"},"
        "{\"size\":\"6\"}]}}";
    static const char *const d_attr =
        "\"dtype\":{\"type\":\"DT_FLOAT\"},\"shape\":{\"shape\":{\"dim\":[{\"size\":\"-1\"},"
        "{\"size\":\"6\"}]}}";
    for (int framed = 0; framed < 2; framed++) {
        jb j = {0};
        node(&j, "x", "Placeholder", "", x_node);
        if (framed) {
            node(&j, "s", "Enter", "\"x\"", "\"T\":{\"type\":\"DT_FLOAT\"},\"frame_name\":{\"s\":\"Zg==\"}");
            node(&j, "e", "Exit", "\"s\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
        }
        node(&j, "d", "PlaceholderWithDefault", framed ? "\"e\"" : "\"x\"", d_attr);
        node(&j, "y", "Neg", "\"d\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
        const char *path = write_model(&j, framed ? "pwd_framed.json" : "pwd.json");
        run_with_default(path, SI_BACKEND_HOST);
        run_with_default(path, SI_BACKEND_GPU);
    }
}

/* An int32 vector Const. */
static void const_vec(jb *j, const char *name, const int *v, int n)
{
    char a[600], vals[300] = "";
    for (int i = 0; i < n; i++)
        snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%d", i ? "," : "", v[i]);
    snprintf(a, sizeof a,
             "\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
             "\"tensorShape\":{\"dim\":[{\"size\":\"%d\"}]},\"intVal\":[%s]}}", n, vals);
    node(j, name, "Const", "", a);
}

/* Runs a model of one float32 input x[3,4,5,6] on both backends, which must
 * agree; returns the status, the message in msg. */
static si_result run_x3456(const char *path, char *msg, size_t n)
{
    static float x[360];
    si_result st = SI_OK, first = SI_OK;
    for (int backend = 0; backend < 2; backend++) {
        si_model *m = NULL;
        si_error err = {0};
        si_options opt = {.backend = backend ? SI_BACKEND_HOST : SI_BACKEND_GPU};
        st = si_open(path, &opt, &m, &err);
        if (st == SI_OK) {
            si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 4, .shape = {3, 4, 5, 6}, .data = x};
            st = si_run(m, &in, 1, &err);
        }
        si_close(m);
        snprintf(msg, n, "%s", err.message);
        if (backend == 0)
            first = st;
        else if (st != first)
            fail_msg("the GPU gave status %d, the host %d (%s)", first, st, msg);
    }
    return st;
}

/* Where tfjs's kernels throw, a clear error (not a crash, not a guess):
 * GatherV2 indices outside the axis (batch_dims too), a StridedSlice whose
 * sparse-coordinate read (tfjs's stridedSliceImpl) leaves x, and SparseToDense
 * indices past the output. */
static void test_tfjs_refusals(void **state)
{
    (void)state;
    static const char *const x_node =
        "\"dtype\":{\"type\":\"DT_FLOAT\"},\"shape\":{\"shape\":{\"dim\":[{\"size\":\"3\"},"
        "{\"size\":\"4\"},{\"size\":\"5\"},{\"size\":\"6\"}]}}";
    char msg[512];
    for (int bd = 0; bd < 2; bd++) {
        /* indices [3] with batch_dims 0; [3, 2] (a Reshape of the Const) with 1 */
        jb j = {0};
        node(&j, "x", "Placeholder", "", x_node);
        const int bad[6] = {0, 1, 4, 2, 0, 3}, sh[2] = {3, 2}; /* 4: past dim 1 (size 4) */
        const_vec(&j, bd ? "i6" : "i", bad, bd ? 6 : 3);
        if (bd) {
            const_vec(&j, "sh", sh, 2);
            node(&j, "i", "Reshape", "\"i6\",\"sh\"", "");
        }
        const_i(&j, "axis", 1);
        char a[200];
        snprintf(a, sizeof a, "\"batch_dims\":{\"i\":\"%d\"}", bd);
        node(&j, "g", "GatherV2", "\"x\",\"i\",\"axis\"", a);
        const char *path = write_model(&j, "gather_bad.json");
        assert_int_equal(run_x3456(path, msg, sizeof msg), SI_ERR_SHAPE);
        if (!strstr(msg, "index 4 is not in [0, 4)"))
            fail_msg("batch_dims %d: %s", bd, msg);
    }
    {
        jb j = {0};
        node(&j, "x", "Placeholder", "", x_node);
        const int b[3] = {1, 0, 2}, e[3] = {2, 0, 0}, s[3] = {1, 1, -1};
        const_vec(&j, "b", b, 3);
        const_vec(&j, "e", e, 3);
        const_vec(&j, "s", s, 3);
        node(&j, "y", "StridedSlice", "\"x\",\"b\",\"e\",\"s\"",
             "\"end_mask\":{\"i\":\"6\"},\"shrink_axis_mask\":{\"i\":\"1\"}");
        const char *path = write_model(&j, "ss_bad.json");
        assert_int_equal(run_x3456(path, msg, sizeof msg), SI_ERR_UNSUPPORTED);
        if (!strstr(msg, "'y'") || !strstr(msg, "out of range"))
            fail_msg("%s", msg);
    }
    {
        jb j = {0};
        node(&j, "x", "Placeholder", "", x_node);
        const int idx[3] = {2, 9, 10}, shape[1] = {10};
        const_vec(&j, "idx", idx, 3);
        const_vec(&j, "shape", shape, 1);
        const_f(&j, "v", 1.5f);
        const_f(&j, "d", 0.0f);
        node(&j, "y", "SparseToDense", "\"idx\",\"shape\",\"v\",\"d\"", "");
        node(&j, "z", "Identity", "\"x\"", "");
        const char *path = write_model(&j, "std_bad.json");
        assert_int_equal(run_x3456(path, msg, sizeof msg), SI_ERR_SHAPE);
        if (!strstr(msg, "'y'") || !strstr(msg, "outside the output"))
            fail_msg("%s", msg);
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
        cmocka_unit_test(test_placeholder_with_default),
        cmocka_unit_test(test_tfjs_refusals),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tiny_rm_tmp();
    return rc;
}
