/* Unknown ops are refused when the model is opened (core/opcheck.c): by
 * si_open and `streaminfer plan`, before any work, naming every unknown op with
 * its first node and count, also where the op sits after a loop or an NMS that
 * the host interpreter would run first. Ops only the interpreter runs are not
 * refused; TF Decision Forests' SimpleML* ops are refused by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core.h"
#include "ops.h"
#include "tiny_model.h"

static const char *bindir;

/* A TF1 while loop (frame "L": i = 0; while i < n: i += 1) whose exit value
 * feeds `after`, and an NMS over boxes/scores whose selection feeds `after2`.
 * The unknown ops (if any) are the caller's, placed after both. */
static void loop_and_nms(jb *j)
{
    placeholder_f32(j, "boxes", (int[]){8, 4}, 2);
    placeholder_f32(j, "scores", (int[]){8}, 1);
    const_i(j, "zero", 0);
    const_i(j, "one", 1);
    const_i(j, "n", 5);
    const_i(j, "maxo", 4);
    const_f(j, "iou", 0.5f);
    const_f(j, "thr", 0.1f);
    node(j, "enter", "Enter", "\"zero\"", "\"frame_name\":{\"s\":\"TA==\"}");
    node(j, "enter_n", "Enter", "\"n\"", "\"frame_name\":{\"s\":\"TA==\"},\"is_constant\":{\"b\":true}");
    node(j, "enter_one", "Enter", "\"one\"",
         "\"frame_name\":{\"s\":\"TA==\"},\"is_constant\":{\"b\":true}");
    node(j, "merge", "Merge", "\"enter\",\"next\"", NULL);
    node(j, "less", "Less", "\"merge\",\"enter_n\"", NULL);
    node(j, "cond", "LoopCond", "\"less\"", NULL);
    node(j, "switch", "Switch", "\"merge\",\"cond\"", NULL);
    node(j, "body", "Add", "\"switch:1\",\"enter_one\"", NULL);
    node(j, "next", "NextIteration", "\"body\"", NULL);
    node(j, "exit", "Exit", "\"switch\"", NULL);
    node(j, "nms", "NonMaxSuppressionV3", "\"boxes\",\"scores\",\"maxo\",\"iou\",\"thr\"", NULL);
    node(j, "sel", "GatherV2", "\"boxes\",\"nms\",\"zero\"", NULL);
}

static si_result open_model(const char *path, si_error *err)
{
    si_model *m = NULL;
    memset(err, 0, sizeof *err);
    si_result st = si_open(path, &(si_options){.backend = SI_BACKEND_HOST}, &m, err);
    if (st == SI_OK)
        si_close(m);
    return st;
}

/* Invented op names, so that the test keeps its unknown ops as real ones land. */
static void test_unknown_after_loop_and_nms(void **state)
{
    (void)state;
    jb j = {0};
    loop_and_nms(&j);
    node(&j, "a/b", "NotAnOpCrop", "\"sel\",\"boxes\",\"nms\",\"n\"", NULL);
    node(&j, "a/c", "NotAnOpCrop", "\"a/b\",\"boxes\",\"nms\",\"n\"", NULL);
    node(&j, "c", "NotAnOpEinsum", "\"a/c\",\"exit\"", NULL);
    node(&j, "a/d", "NotAnOpCrop", "\"c\",\"boxes\",\"nms\",\"n\"", NULL);
    const char *path = write_model(&j, "unknown.json");
    si_error err;
    assert_int_equal(open_model(path, &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "unknown.json: 2 unknown ops: "));
    assert_non_null(strstr(err.message, "'NotAnOpCrop' (node 'a/b', 3 nodes)"));
    assert_non_null(strstr(err.message, "'NotAnOpEinsum' (node 'c')"));
    /* `plan` refuses it the same way (it opens the model first) */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%.400s/../streaminfer plan --backend host %s 2>&1 | grep -q "
             "\"2 unknown ops: 'NotAnOpCrop' (node 'a/b', 3 nodes), 'NotAnOpEinsum' (node 'c')\"",
             bindir, path);
    assert_int_equal(system(cmd), 0);
}

/* The same loop and NMS with known ops after them opens: what only the
 * interpreter runs is not unknown. */
static void test_interpreter_ops_open(void **state)
{
    (void)state;
    jb j = {0};
    loop_and_nms(&j);
    node(&j, "out", "Identity", "\"sel\"", NULL);
    node(&j, "out2", "Identity", "\"exit\"", NULL);
    si_error err;
    if (open_model(write_model(&j, "known.json"), &err) != SI_OK)
        fail_msg("%s", err.message);
}

/* Only nodes the outputs need count: an unused node is never run by tfjs
 * either; a control input is waited for, so it counts. */
static void test_needed_nodes_only(void **state)
{
    (void)state;
    char path[300];
    snprintf(path, sizeof path, "%s/needed.json", tmp_root);
    write_text(path, "{\"format\":\"graph-model\",\"signature\":{\"outputs\":{\"y\":{\"name\":\"out:0\"}}},"
               "\"modelTopology\":{\"node\":["
               "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
               "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"2\"}]}}}},"
               "{\"name\":\"unused\",\"op\":\"Frobnicate\",\"input\":[\"x\"]},"
               "{\"name\":\"out\",\"op\":\"Relu\",\"input\":[\"x\"]}]},\"weightsManifest\":[]}");
    si_error err;
    if (open_model(path, &err) != SI_OK)
        fail_msg("%s", err.message);
    write_text(path, "{\"format\":\"graph-model\",\"signature\":{\"outputs\":{\"y\":{\"name\":\"out:0\"}}},"
               "\"modelTopology\":{\"node\":["
               "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
               "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"2\"}]}}}},"
               "{\"name\":\"p\",\"op\":\"Frobnicate\",\"input\":[\"x\"]},"
               "{\"name\":\"out\",\"op\":\"Relu\",\"input\":[\"x\",\"^p\"]}]},\"weightsManifest\":[]}");
    assert_int_equal(open_model(path, &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "1 unknown op: 'Frobnicate' (node 'p')"));
}

/* complex64 exists only inside the host interpreter (core.h): a model whose
 * output (or input) would be complex is refused at open, naming the output
 * and its node, also through an Identity; its parts open and run. */
static void test_complex_outputs(void **state)
{
    (void)state;
    const char *cplx = "\"T\":{\"type\":\"DT_COMPLEX64\"}";
    si_error err;
    for (int k = 0; k < 3; k++) {
        jb j = {0};
        placeholder_f32(&j, "re", (int[]){4}, 1);
        placeholder_f32(&j, "im", (int[]){4}, 1);
        node(&j, "c", "Complex", "\"re\",\"im\"", NULL);
        if (k < 2)
            node(&j, "f", "FFT", "\"c\"", NULL);
        else
            node(&j, "r", "Real", "\"c\"", NULL);
        if (k == 1)
            node(&j, "out", "Identity", "\"f\"", NULL);
        if (k == 2) /* its dtype attr says so */
            node(&j, "out", "Snapshot", "\"re\"", cplx);
        assert_int_equal(open_model(write_model(&j, "cplx_out.json"), &err), SI_ERR_UNSUPPORTED);
        assert_non_null(strstr(err.message, k == 0   ? "(node 'f', FFT) would be complex64"
                                            : k == 1 ? "(node 'out', Identity) would be complex64"
                                                     : "(node 'out', Snapshot) would be complex64"));
    }
    /* nor can an input be complex */
    jb jin = {0};
    node(&jin, "x", "Placeholder", "", "\"dtype\":{\"type\":\"DT_COMPLEX64\"}");
    node(&jin, "r", "Real", "\"x\"", NULL);
    assert_int_equal(open_model(write_model(&jin, "cplx_in.json"), &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "input 'x' has dtype DT_COMPLEX64"));
    jb j = {0};
    placeholder_f32(&j, "re", (int[]){4}, 1);
    placeholder_f32(&j, "im", (int[]){4}, 1);
    node(&j, "c", "Complex", "\"re\",\"im\"", NULL);
    node(&j, "f", "FFT", "\"c\"", NULL);
    node(&j, "id", "Identity", "\"f\"", cplx);
    node(&j, "r", "Real", "\"id\"", NULL);
    node(&j, "i", "Imag", "\"f\"", NULL);
    node(&j, "a", "ComplexAbs", "\"f\"", NULL);
    const char *path = write_model(&j, "cplx_parts.json");
    si_model *m = NULL;
    if (si_open(path, &(si_options){.backend = SI_BACKEND_HOST}, &m, &err) != SI_OK)
        fail_msg("%s", err.message);
    float re[4] = {1, 2, 3, 4}, im[4] = {0, 0, 0, 1};
    si_tensor_in in[2] = {{"re", SI_FLOAT32, 1, {4}, re}, {"im", SI_FLOAT32, 1, {4}, im}};
    if (si_run(m, in, 2, &err) != SI_OK)
        fail_msg("%s", err.message);
    /* the DFT of [1, 2, 3, 4+i]: [10+i, -3+2i, -2-i, -1-2i] (tfjs's radix-2 path) */
    const float want[3][4] = {
        {10, -3, -2, -1}, {1, 2, -1, -2}, {10.0498756f, 3.60555128f, 2.23606798f, 2.23606798f}};
    for (int o = 0; o < 3; o++) {
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        const void *d;
        assert_int_equal(si_output(m, o, &dt, &rank, shape, &d, &err), SI_OK);
        assert_int_equal(dt, SI_FLOAT32);
        assert_int_equal(rank, 1);
        for (int i = 0; i < 4; i++)
            assert_float_equal(((const float *)d)[i], want[o][i], 1e-6);
    }
    si_close(m);
}

/* Ops that do not take complex64 values refuse one at run time with the
 * node's name, as do the complex ops given the wrong dtype or shape. */
static void test_complex_refused(void **state)
{
    (void)state;
    static const struct {
        const char *op, *ins, *msg;
    } cases[] = {
        {"Relu", "\"c\"", "node 'bad' (Relu): input 0 is complex64"},
        {"Mul", "\"c\",\"im6\"", "could not be broadcast together with shapes [4] and [6]"},
        {"FFT", "\"re\"", "node 'bad' (FFT): input 0 must be complex64, not float32"},
        {"RFFT", "\"c\"", "node 'bad' (RFFT): input 0 must be float32, not complex64"},
        {"Real", "\"re\"", "node 'bad' (Real): input 0 must be complex64, not float32"},
        {"Complex", "\"re\",\"c\"", "node 'bad' (Complex): input 1 must be float32"},
        {"Complex", "\"re\",\"im6\"", "real and imag shapes, [4] and [6], must match"},
        {"IFFT", "\"e\"", "innermost dimension of at least 1 element"},
        {"ConcatV2", "\"c\",\"re\",\"ax\"", "(ConcatV2): input 1 is float32 among complex64 inputs"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        jb j = {0};
        placeholder_f32(&j, "re", (int[]){4}, 1);
        placeholder_f32(&j, "im", (int[]){4}, 1);
        placeholder_f32(&j, "im6", (int[]){6}, 1);
        placeholder_f32(&j, "z", (int[]){2, 0}, 2);
        const_i(&j, "ax", 0);
        node(&j, "c", "Complex", "\"re\",\"im\"", NULL);
        node(&j, "e", "Complex", "\"z\",\"z\"", NULL);
        node(&j, "rc", "Real", "\"c\"", NULL);
        node(&j, "re_e", "Real", "\"e\"", NULL);
        node(&j, "bad", cases[k].op, cases[k].ins, NULL);
        node(&j, "out", "Real", "\"bad\"", NULL);
        node(&j, "o2", "Identity", "\"im6\"", NULL);
        si_model *m = NULL;
        si_error err;
        if (si_open(write_model(&j, "cplx_bad.json"), &(si_options){.backend = SI_BACKEND_HOST}, &m,
                    &err) != SI_OK)
            fail_msg("%s", err.message);
        float v[6] = {1, 2, 3, 4, 5, 6};
        si_tensor_in in[4] = {{"re", SI_FLOAT32, 1, {4}, v},
                              {"im", SI_FLOAT32, 1, {4}, v},
                              {"im6", SI_FLOAT32, 1, {6}, v},
                              {"z", SI_FLOAT32, 2, {2, 0}, v}};
        assert_int_not_equal(si_run(m, in, 4, &err), SI_OK);
        if (!strstr(err.message, cases[k].msg))
            fail_msg("case %zu: %s", k, err.message);
        si_close(m);
    }
}

static void test_simpleml_excluded(void **state)
{
    (void)state;
    jb j = {0};
    placeholder_f32(&j, "x", (int[]){1, 3}, 2);
    node(&j, "res", "SimpleMLCreateModelResource", "", NULL);
    node(&j, "load", "SimpleMLLoadModelFromPathWithHandle", "\"res\"", NULL);
    node(&j, "infer", "SimpleMLInferenceOpWithHandle", "\"x\",\"res\",\"^load\"", NULL);
    node(&j, "z", "Zeta", "\"infer\"", NULL);
    si_error err;
    assert_int_equal(open_model(write_model(&j, "tfdf.json"), &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "1 unknown op: 'Zeta' (node 'z')"));
    assert_non_null(strstr(err.message, "'SimpleMLCreateModelResource' (node 'res')"));
    assert_non_null(strstr(err.message, "'SimpleMLInferenceOpWithHandle' (node 'infer')"));
    assert_non_null(strstr(err.message, "TF Decision Forests ops are excluded"));
}

/* Many unknown ops: the message stays one line within the error's size and
 * says how many it could not name. */
static void test_many_unknown(void **state)
{
    (void)state;
    jb j = {0};
    placeholder_f32(&j, "x", (int[]){2}, 1);
    char prev[64] = "x";
    for (int i = 0; i < 60; i++) {
        char name[64], op[64], ins[80];
        snprintf(name, sizeof name, "node_with_a_long_name_%d", i);
        snprintf(op, sizeof op, "UnknownOpNumber%d", i);
        snprintf(ins, sizeof ins, "\"%s\"", prev);
        node(&j, name, op, ins, NULL);
        snprintf(prev, sizeof prev, "%s", name);
    }
    si_error err;
    assert_int_equal(open_model(write_model(&j, "many.json"), &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "60 unknown ops: 'UnknownOpNumber0' (node "));
    assert_non_null(strstr(err.message, " more"));
    assert_true(strlen(err.message) < sizeof err.message - 1);
}

/* A model with a library: x → StatelessIf(c, x) calling then_fn/else_fn,
 * whose bodies are given (nodeDef JSON); the open's status and message. */
static si_result open_with_library(const char *then_nodes, const char *then_ret,
                                   const char *else_name, si_error *err)
{
    char path[300];
    snprintf(path, sizeof path, "%s/library.json", tmp_root);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":["
            "{\"name\":\"c\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_BOOL\"},"
            "\"shape\":{\"shape\":{}}}},"
            "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
            "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"3\"}]}}}},"
            "{\"name\":\"if\",\"op\":\"StatelessIf\",\"input\":[\"c\",\"x\"],\"attr\":{"
            "\"then_branch\":{\"func\":{\"name\":\"then_fn\"}},"
            "\"else_branch\":{\"func\":{\"name\":\"%s\"}}}},"
            "{\"name\":\"out\",\"op\":\"Identity\",\"input\":[\"if\"]}],"
            "\"library\":{\"function\":["
            "{\"signature\":{\"name\":\"then_fn\",\"inputArg\":[{\"name\":\"a\",\"type\":\"DT_FLOAT\"}],"
            "\"outputArg\":[{\"name\":\"o\",\"type\":\"DT_FLOAT\"}]},"
            "\"nodeDef\":[%s],\"ret\":{\"o\":\"%s\"}},"
            "{\"signature\":{\"name\":\"else_fn\",\"inputArg\":[{\"name\":\"a\",\"type\":\"DT_FLOAT\"}],"
            "\"outputArg\":[{\"name\":\"o\",\"type\":\"DT_FLOAT\"}]},"
            "\"nodeDef\":[{\"name\":\"n\",\"op\":\"Neg\",\"input\":[\"a\"]}],"
            "\"ret\":{\"o\":\"n:y:0\"}}]}},\"weightsManifest\":[]}",
            else_name, then_nodes, then_ret);
    fclose(f);
    return open_model(path, err);
}

/* Library functions: a good one opens; an unknown op inside one is refused
 * naming the function; a missing function, recursion and a ret naming no
 * node are refused as malformed. */
static void test_library_functions(void **state)
{
    (void)state;
    si_error err;
    const char *neg = "{\"name\":\"m\",\"op\":\"Neg\",\"input\":[\"a\"]}";
    assert_int_equal(open_with_library(neg, "m:y:0", "else_fn", &err), SI_OK);
    const char *bad = "{\"name\":\"m\",\"op\":\"NotAnOpInFunction\",\"input\":[\"a\"]}";
    assert_int_equal(open_with_library(bad, "m:y:0", "else_fn", &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "function 'then_fn': 1 unknown op: 'NotAnOpInFunction'"));
    assert_int_equal(open_with_library(neg, "m:y:0", "no_such_fn", &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "calls function 'no_such_fn', which is not in the library"));
    const char *rec = "{\"name\":\"m\",\"op\":\"StatelessIf\",\"input\":[\"a\",\"a\"],\"attr\":{"
                      "\"then_branch\":{\"func\":{\"name\":\"then_fn\"}},"
                      "\"else_branch\":{\"func\":{\"name\":\"else_fn\"}}}}";
    assert_int_equal(open_with_library(rec, "m:output:0", "else_fn", &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "function 'then_fn' calls itself"));
    assert_int_equal(open_with_library(neg, "nowhere:y:0", "else_fn", &err), SI_ERR_FORMAT);
    const char *arity = "{\"name\":\"m\",\"op\":\"StatelessIf\",\"input\":[\"a\",\"a\",\"a\"],\"attr\":{"
                        "\"then_branch\":{\"func\":{\"name\":\"else_fn\"}},"
                        "\"else_branch\":{\"func\":{\"name\":\"else_fn\"}}}}";
    assert_int_equal(open_with_library(arity, "m:output:0", "else_fn", &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "passes 2 values to function 'else_fn', which takes 1"));
}

/* The list of known ops agrees with the tables the program lowers from. */
/* Strings stay in the host interpreter: a string output, a string input and
 * a StaticRegexReplace pattern outside the syntax JavaScript and RE2 share
 * are refused at open, naming the node. */
static void test_strings_refused(void **state)
{
    (void)state;
    static const struct {
        const char *file, *op, *attrs, *want;
    } bad[] = {
        {"strout.json", "Identity", "\"T\":{\"type\":\"DT_STRING\"}", "output 0 (node 'x') is a string tensor"},
        {"backref.json", "StaticRegexReplace",
         "\"pattern\":{\"s\":\"KGEpXDE=\"},\"rewrite\":{\"s\":\"\"}", /* (a)\1 */
         "node 'x' (StaticRegexReplace): pattern not supported: backreferences"},
        {"lookahead.json", "StaticRegexReplace",
         "\"pattern\":{\"s\":\"YSg/PWIp\"},\"rewrite\":{\"s\":\"\"}", /* a(?=b) */
         "lookaround"},
        {"unicode.json", "StaticRegexReplace",
         "\"pattern\":{\"s\":\"XHUwMDQx\"},\"rewrite\":{\"s\":\"\"}", /* \u0041 */
         "escape is not supported"},
        {"property.json", "StaticRegexReplace",
         "\"pattern\":{\"s\":\"XHB7TH0=\"},\"rewrite\":{\"s\":\"\"}", /* \p{L} */
         "escape is not supported"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jb j = {0};
        node(&j, "s", "Const", "",
             "\"dtype\":{\"type\":\"DT_STRING\"},\"value\":{\"tensor\":{\"dtype\":\"DT_STRING\","
             "\"tensorShape\":{},\"stringVal\":[\"eA==\"]}}");
        node(&j, "x", bad[i].op, "\"s\"", bad[i].attrs);
        if (strcmp(bad[i].op, "Identity"))
            node(&j, "h", "StringToHashBucketFast", "\"x\"", "\"num_buckets\":{\"i\":\"5\"}");
        si_error err;
        assert_int_equal(open_model(write_model(&j, bad[i].file), &err), SI_ERR_UNSUPPORTED);
        if (!strstr(err.message, bad[i].want))
            fail_msg("%s: %s", bad[i].file, err.message);
    }
    jb j = {0};
    jb_add(&j, "{\"name\":\"p\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_STRING\"},"
               "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"2\"}]}}}}");
    node(&j, "h", "StringToHashBucketFast", "\"p\"", "\"num_buckets\":{\"i\":\"5\"}");
    si_error err;
    assert_int_equal(open_model(write_model(&j, "strin.json"), &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "input 'p' is a string tensor"));
}

static void test_op_list(void **state)
{
    (void)state;
    int n = 0;
    for (const char *op; (op = core_op_at(n)); n++) {
        const char *fam = core_op_family(op);
        assert_non_null(fam);
        assert_string_not_equal(fam, "?");
        if (strcmp(fam, "graph") && strcmp(fam, "interpreter"))
            assert_non_null(core_find_op(op));
    }
    assert_true(n > 150);
    assert_null(core_op_family("NotAnOpEinsum"));
    assert_string_equal(core_op_family("CropAndResize"), "image");
    assert_string_equal(core_op_family("StatelessWhile"), "interpreter");
    assert_string_equal(core_op_family("TensorListStack"), "interpreter");
    assert_string_equal(core_op_family("Relu"), "elementwise");
    assert_null(core_op_excluded("Relu"));
}

int main(int argc, char **argv)
{
    (void)argc;
    static char dir[512];
    snprintf(dir, sizeof dir, "%s", argv[0]);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    bindir = dir;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unknown_after_loop_and_nms), cmocka_unit_test(test_interpreter_ops_open),
        cmocka_unit_test(test_needed_nodes_only),          cmocka_unit_test(test_simpleml_excluded),
        cmocka_unit_test(test_many_unknown),               cmocka_unit_test(test_op_list),
        cmocka_unit_test(test_library_functions),          cmocka_unit_test(test_strings_refused),
        cmocka_unit_test(test_complex_outputs),            cmocka_unit_test(test_complex_refused),
    };
    return cmocka_run_group_tests(tests, tiny_setup, tiny_teardown);
}
