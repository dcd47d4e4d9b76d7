/* Rows longer than a GPU invocation may loop over on llvmpipe (65535): a Sum
 * over 150000 elements and a TopK over them give the host reference's answer
 * through the whole library, on the GPU backend. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "streaminfer.h"

#define N 150000

static void test_long_rows(void **state)
{
    (void)state;
    char dir[128], path[256];
    snprintf(dir, sizeof dir, "/tmp/si-long-%d", (int)getpid());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/model.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":["
            "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
            "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"1\"},{\"size\":\"%d\"}]}}}},"
            "{\"name\":\"axis\",\"op\":\"Const\",\"attr\":{\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
            "\"tensorShape\":{},\"intVal\":[1]}}}},"
            "{\"name\":\"k\",\"op\":\"Const\",\"attr\":{\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
            "\"tensorShape\":{},\"intVal\":[5]}}}},"
            "{\"name\":\"sum\",\"op\":\"Sum\",\"input\":[\"x\",\"axis\"],\"attr\":{\"keep_dims\":{\"b\":false}}},"
            "{\"name\":\"top\",\"op\":\"TopKV2\",\"input\":[\"x\",\"k\"],\"attr\":{\"sorted\":{\"b\":true}}}"
            "]},\"weightsManifest\":[]}",
            N);
    fclose(f);
    float *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++)
        x[i] = (float)((i * 7919) % 1000) / 1000.f;
    x[123456] = 5.f; /* past 65535: a truncated loop would miss it */
    double ref = 0;
    for (int i = 0; i < N; i++)
        ref += x[i];
    si_model *m;
    si_error err;
    si_options opt = {0};
    assert_int_equal(si_open(dir, &opt, &m, &err), SI_OK);
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 2, .shape = {1, N}, .data = x};
    assert_int_equal(si_run(m, &in, 1, &err), SI_OK);
    const void *d;
    assert_int_equal(si_output(m, 0, NULL, NULL, NULL, &d, &err), SI_OK);
    assert_true(fabs(*(const float *)d - ref) <= 1e-4 * fabs(ref));
    assert_int_equal(si_output(m, 1, NULL, NULL, NULL, &d, &err), SI_OK);
    assert_true(((const float *)d)[0] == 5.f);
    si_close(m);
    free(x);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_long_rows)};
    return cmocka_run_group_tests_name("long_rows", tests, NULL, NULL);
}
