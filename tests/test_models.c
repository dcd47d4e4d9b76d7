/* Real models against TensorFlow.js: for each model named on the command line,
 * runs it through the library on the inputs the oracle used and compares every
 * output with the oracle's: max |out - ref| <= 1e-3 * max(1, max |ref|).
 *   test_models CACHE_DIR MODEL...   (refs in CACHE_DIR/refs/MODEL/manifest.json)
 * Environment: SI_BACKEND=host runs the host reference instead of the GPU;
 * SI_IO=uring reads shards through io_uring. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "streaminfer.h"
#include "test_util.h"

static const char *cache;

/* Output o of the last run: its data, and its size in bytes in *bytes. */
static const void *output_bytes(si_model *m, int o, size_t *bytes)
{
    si_error err = {0};
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    const void *data;
    assert_int_equal(si_output(m, o, &dt, &rank, shape, &data, &err), SI_OK);
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= shape[d];
    *bytes = (size_t)n * (dt == SI_BOOL ? 1 : 4);
    return data;
}

static double max_abs(si_dtype dt, const void *d, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = dt == SI_FLOAT32 ? fabs((double)((const float *)d)[i])
                   : dt == SI_INT32 ? fabs((double)((const int32_t *)d)[i])
                                    : (double)((const uint8_t *)d)[i];
        if (v > m)
            m = v;
    }
    return m;
}

static double elem(si_dtype dt, const void *d, int64_t i)
{
    return dt == SI_FLOAT32 ? (double)((const float *)d)[i]
           : dt == SI_INT32 ? (double)((const int32_t *)d)[i] : (double)((const uint8_t *)d)[i];
}

static int n_plans;

static void count_plans(void *user, const char *phase, int done, int total)
{
    (void)user;
    (void)total;
    if (!strcmp(phase, "plan") && done == 0)
        n_plans++;
}

static void run_model(void **state)
{
    const char *name = *state;
    char path[4096];
    snprintf(path, sizeof path, "%s/refs/%s/manifest.json", cache, name);
    char *text = slurp(path);
    if (!text)
        fail_msg("%s: no reference manifest %s (run tests/make_refs.sh)", name, path);
    cJSON *man = cJSON_Parse(text);
    free(text);
    assert_non_null(man);
    si_options opt = {.progress = count_plans};
    n_plans = 0;
    const char *be = getenv("SI_BACKEND");
    if (be && !strcmp(be, "host"))
        opt.backend = SI_BACKEND_HOST;
    const char *io = getenv("SI_IO");
    if (io && !strcmp(io, "uring"))
        opt.io_mode = SI_IO_URING;
    si_model *m = NULL;
    si_error err = {0};
    char model_path[4096];
    /* NAME@INPUT=dims names a reference made at other input sizes */
    snprintf(model_path, sizeof model_path, "%s/human-models/models/%.*s.json", cache,
             (int)strcspn(name, "@"), name);
    if (si_open(model_path, &opt, &m, &err) != SI_OK)
        fail_msg("%s: open: %s", name, err.message);
    const cJSON *ins = cJSON_GetObjectItem(man, "inputs");
    int ni = cJSON_GetArraySize(ins);
    assert_int_equal(ni, si_input_count(m));
    si_tensor_in *tin = calloc((size_t)ni + 1, sizeof *tin);
    void **bufs = calloc((size_t)ni + 1, sizeof *bufs);
    for (int i = 0; i < ni; i++) {
        const cJSON *in = cJSON_GetArrayItem(ins, i);
        snprintf(path, sizeof path, "%s/refs/%s/%s", cache, name,
                 cJSON_GetObjectItem(in, "file")->valuestring);
        if (si_npy_read(path, &tin[i].dtype, &tin[i].rank, tin[i].shape, &bufs[i], &err) != SI_OK)
            fail_msg("%s", err.message);
        tin[i].data = bufs[i];
        tin[i].name = cJSON_GetObjectItem(in, "name")->valuestring;
    }
    if (si_run(m, tin, ni, &err) != SI_OK)
        fail_msg("%s: run: %s", name, err.message);
    const cJSON *outs = cJSON_GetObjectItem(man, "outputs");
    int no = cJSON_GetArraySize(outs);
    assert_int_equal(no, si_output_count(m));
    double worst = 0;
    for (int o = 0; o < no; o++) {
        const cJSON *ref = cJSON_GetArrayItem(outs, o);
        const char *rname = cJSON_GetObjectItem(ref, "name")->valuestring;
        if (strcmp(rname, si_output_name(m, o)))
            fail_msg("%s: output %d is '%s', TensorFlow.js says '%s'", name, o,
                     si_output_name(m, o), rname);
        snprintf(path, sizeof path, "%s/refs/%s/%s", cache, name,
                 cJSON_GetObjectItem(ref, "file")->valuestring);
        si_dtype rdt, dt;
        int rrank, rank;
        int64_t rshape[SI_MAX_RANK], shape[SI_MAX_RANK];
        void *rdata;
        const void *data;
        if (si_npy_read(path, &rdt, &rrank, rshape, &rdata, &err) != SI_OK)
            fail_msg("%s", err.message);
        assert_int_equal(si_output(m, o, &dt, &rank, shape, &data, &err), SI_OK);
        if (dt != rdt || rank != rrank)
            fail_msg("%s: output '%s': %s rank %d, TensorFlow.js %s rank %d", name, rname,
                     si_dtype_name(dt), rank, si_dtype_name(rdt), rrank);
        int64_t n = 1;
        for (int d = 0; d < rank; d++) {
            if (shape[d] != rshape[d])
                fail_msg("%s: output '%s': dim %d is %lld, TensorFlow.js %lld", name, rname, d,
                         (long long)shape[d], (long long)rshape[d]);
            n *= shape[d];
        }
        double scale = fmax(1.0, max_abs(rdt, rdata, n));
        double maxdiff = 0;
        int64_t at = 0;
        for (int64_t i = 0; i < n; i++) {
            double dd = fabs(elem(dt, data, i) - elem(rdt, rdata, i));
            if (!(dd <= maxdiff)) {
                maxdiff = isnan(dd) ? INFINITY : dd;
                at = i;
            }
        }
        double rel = maxdiff / scale;
        printf("    %-18s %-40s max|diff| %.3g (rel %.3g) at %lld: %g vs %g\n", name, rname,
               maxdiff, rel, (long long)at, elem(dt, data, at), elem(rdt, rdata, at));
        if (rel > worst)
            worst = rel;
        free(rdata);
    }
    si_stats st;
    si_get_stats(m, &st);
    printf("    %-18s peak %.2f MiB, lower bound %.2f MiB, %llu GPU steps, run %.0f ms\n", name,
           st.peak_vram_bytes / 1048576.0, st.lower_bound_bytes / 1048576.0,
           (unsigned long long)st.gpu_steps, st.run_ms);
    if (st.host_ms > 0) {
        /* a model run in stages: the same input again plans nothing (every
         * stage's plan is kept by shape) and gives the same bits (derived_bytes,
         * which also asked for this, is always 0 now: a quantized weight is
         * dequantized by its load, as any weight is loaded) */
        int plans = n_plans;
        void **first = calloc((size_t)no + 1, sizeof *first);
        size_t *bytes = calloc((size_t)no + 1, sizeof *bytes);
        for (int o = 0; o < no; o++) {
            const void *data = output_bytes(m, o, &bytes[o]);
            first[o] = malloc(bytes[o] + 1);
            memcpy(first[o], data, bytes[o]);
        }
        if (si_run(m, tin, ni, &err) != SI_OK)
            fail_msg("%s: second run: %s", name, err.message);
        if (n_plans != plans)
            fail_msg("%s: the second run with the same shapes planned again (%d plans, then %d)",
                     name, plans, n_plans);
        for (int o = 0; o < no; o++) {
            size_t nb;
            const void *data = output_bytes(m, o, &nb);
            assert_int_equal(nb, bytes[o]);
            if (memcmp(first[o], data, bytes[o]))
                fail_msg("%s: output %d differs on the second run", name, o);
            free(first[o]);
        }
        printf("    %-18s second run: same outputs, no new plan (%d plans)\n", name, plans);
        free(first);
        free(bytes);
    }
    for (int i = 0; i < ni; i++)
        free(bufs[i]);
    free(bufs);
    free(tin);
    si_close(m);
    cJSON_Delete(man);
    if (!(worst <= 1e-3))
        fail_msg("%s: outputs differ from TensorFlow.js: max relative error %g > 1e-3", name, worst);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_models CACHE_DIR MODEL...\n");
        return 2;
    }
    cache = argv[1];
    int n = argc - 2;
    struct CMUnitTest *tests = calloc((size_t)n, sizeof *tests);
    for (int i = 0; i < n; i++) {
        tests[i].name = argv[i + 2];
        tests[i].test_func = run_model;
        tests[i].initial_state = argv[i + 2];
    }
    int rc = _cmocka_run_group_tests("models_vs_tfjs", tests, (size_t)n, NULL, NULL);
    free(tests);
    return rc;
}
