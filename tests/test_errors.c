/* Bad input through the public API: each case gives one clear error naming the
 * file, node or op, a non-zero status, no crash; run_all.sh runs this under
 * valgrind, so a leak on any error path fails it. */
/* signal.h first: its siginfo_t macros (si_status ...) must not touch the API */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "streaminfer.h"
#include "scratch_dir.h"
#include "test_util.h"

/* x[1,4] + w[4] → y, with op and weight bytes as given. */
static char *model_json(const char *op, const char *wshape)
{
    static char buf[4096];
    snprintf(buf, sizeof buf,
             "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":["
             "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
             "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"-1\"},{\"size\":\"4\"}]}}}},"
             "{\"name\":\"w\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"}}},"
             "{\"name\":\"y\",\"op\":\"%s\",\"input\":[\"x\",\"w\"],\"attr\":{\"T\":{\"type\":\"DT_FLOAT\"}}}"
             "]},\"weightsManifest\":[{\"paths\":[\"w.bin\"],\"weights\":[{\"name\":\"w\",\"shape\":%s,"
             "\"dtype\":\"float32\"}]}]}",
             op, wshape);
    return buf;
}

static const float wdata[4] = {1.5f, -2.f, 3.25f, 0.5f};

static si_result open_err(si_model **m, si_error *err)
{
    si_options opt = {.backend = SI_BACKEND_HOST};
    return si_open(dir, &opt, m, err);
}

static void expect_open_error(const char *what, si_result want, const char *needle)
{
    si_model *m = NULL;
    si_error err = {0};
    si_result st = open_err(&m, &err);
    expect_refused(what, st, m, &err, want, needle);
    assert_null(strchr(err.message, '\n'));
}

static void test_good_model_runs(void **state)
{
    (void)state;
    write_text("model.json", model_json("AddV2", "[4]"));
    write_file("w.bin", wdata, sizeof wdata);
    si_model *m = NULL;
    si_error err = {0};
    assert_int_equal(open_err(&m, &err), SI_OK);
    float x[4] = {1, 2, 3, 4};
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 2, .shape = {1, 4}, .data = x};
    assert_int_equal(si_run(m, &in, 1, &err), SI_OK);
    const void *data;
    assert_int_equal(si_output(m, 0, NULL, NULL, NULL, &data, &err), SI_OK);
    for (int i = 0; i < 4; i++)
        assert_true(((const float *)data)[i] == x[i] + wdata[i]);

    /* wrong shape, wrong dtype, wrong count, unknown name: errors, then a good run again */
    si_tensor_in bad = in;
    bad.shape[1] = 5;
    assert_int_equal(si_run(m, &bad, 1, &err), SI_ERR_SHAPE);
    assert_non_null(strstr(err.message, "'x'"));
    bad = in;
    bad.dtype = SI_INT32;
    assert_int_equal(si_run(m, &bad, 1, &err), SI_ERR_SHAPE);
    assert_non_null(strstr(err.message, "float32"));
    bad = in;
    bad.rank = 3;
    bad.shape[2] = 1;
    assert_int_equal(si_run(m, &bad, 1, &err), SI_ERR_SHAPE);
    assert_int_equal(si_run(m, &in, 0, &err), SI_ERR_ARG);
    bad = in;
    bad.name = "nope";
    assert_int_equal(si_run(m, &bad, 1, &err), SI_ERR_ARG);
    assert_non_null(strstr(err.message, "nope"));
    /* a batch of 3 binds the -1 dimension */
    float x3[12] = {0};
    si_tensor_in b3 = {.dtype = SI_FLOAT32, .rank = 2, .shape = {3, 4}, .data = x3};
    assert_int_equal(si_run(m, &b3, 1, &err), SI_OK);
    int64_t shape[SI_MAX_RANK];
    int rank;
    assert_int_equal(si_output(m, 0, NULL, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(shape[0], 3);
    assert_true(((const float *)data)[9] == wdata[1]);
    assert_int_equal(si_run(m, &in, 1, &err), SI_OK);
    si_close(m);
}

static void test_malformed_json(void **state)
{
    (void)state;
    write_file("w.bin", wdata, sizeof wdata);
    write_text("model.json", "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":[}");
    expect_open_error("malformed", SI_ERR_FORMAT, "model.json");
    char *full = model_json("AddV2", "[4]");
    char trunc[4096];
    snprintf(trunc, sizeof trunc, "%.*s", (int)(strlen(full) * 2 / 3), full);
    write_text("model.json", trunc);
    expect_open_error("truncated", SI_ERR_FORMAT, "model.json");
    write_text("model.json", "");
    expect_open_error("empty", SI_ERR_FORMAT, "model.json");
}

static void test_shards(void **state)
{
    (void)state;
    char path[512];
    write_text("model.json", model_json("AddV2", "[4]"));
    snprintf(path, sizeof path, "%s/w.bin", dir);
    unlink(path);
    expect_open_error("missing shard", SI_ERR_IO, "w.bin");
    write_file("w.bin", wdata, 10);
    expect_open_error("short shard", SI_ERR_FORMAT, "w.bin");
    /* the manifest's shape wants more bytes than the shard has */
    write_file("w.bin", wdata, sizeof wdata);
    write_text("model.json", model_json("AddV2", "[8]"));
    expect_open_error("weight bytes vs shape", SI_ERR_FORMAT, "w.bin");
    /* and a shape the input can't broadcast with */
    write_text("model.json", model_json("AddV2", "[2,2]"));
    write_file("w.bin", wdata, sizeof wdata);
    expect_open_error("weight shape", SI_ERR_SHAPE, "'y'");
}

static void test_unknown_op(void **state)
{
    (void)state;
    write_file("w.bin", wdata, sizeof wdata);
    write_text("model.json", model_json("FrobnicateV7", "[4]"));
    expect_open_error("unknown op", SI_ERR_UNSUPPORTED, "FrobnicateV7");
    expect_open_error("unknown op names the node", SI_ERR_UNSUPPORTED, "'y'");
}

static void test_missing_path(void **state)
{
    (void)state;
    si_model *m = NULL;
    si_error err = {0};
    si_options opt = {.backend = SI_BACKEND_HOST};
    assert_int_equal(si_open("/nonexistent/model/dir", &opt, &m, &err), SI_ERR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/model/dir"));
    assert_null(m);
}

int main(void)
{
    scratch_make("si-errors");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_model_runs), cmocka_unit_test(test_malformed_json),
        cmocka_unit_test(test_shards), cmocka_unit_test(test_unknown_op),
        cmocka_unit_test(test_missing_path),
    };
    int rc = cmocka_run_group_tests_name("bad_input", tests, NULL, NULL);
    scratch_remove();
    return rc;
}
