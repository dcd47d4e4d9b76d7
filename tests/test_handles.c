/* Handles in one process (issue 12, defects 6 and 7): two GPU handles used
 * in turn in one thread, a handle opened in one thread and run in another,
 * two threads sharing one handle, and an application's own EGL context left
 * current across every call. Each answer is checked against the host. */
#include <epoxy/egl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "streaminfer.h"
#include "tiny_model.h"

#define N 256 /* [1,8,8,4] */
static const int dims[4] = {1, 8, 8, 4};
static char square_path[256], neg_path[256];
static float x[N];

/* x -> op -> Add(., x): two GPU steps, so the second reads the first's buffer */
static void write_unary(const char *op, const char *file, char *path)
{
    jb j = {0};
    placeholder_f32(&j, "x", dims, 4);
    node(&j, "u", op, "\"x\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "y", "AddV2", "\"u\",\"x\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    snprintf(path, 256, "%s", write_model(&j, file));
}

static float expect(int square, int i) { return (square ? x[i] * x[i] : -x[i]) + x[i]; }

static si_model *open_gpu(const char *path)
{
    si_model *m = NULL;
    si_error err = {0};
    si_options opt = {.backend = SI_BACKEND_GPU};
    if (si_open(path, &opt, &m, &err) != SI_OK)
        fail_msg("open %s: %s", path, err.message);
    return m;
}

/* 0 when the run's output is the expected one */
static int run_check(si_model *m, int square)
{
    si_error err = {0};
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 4, .shape = {1, 8, 8, 4}, .data = x};
    if (si_run(m, &in, 1, &err) != SI_OK) {
        fprintf(stderr, "run: %s\n", err.message);
        return 1;
    }
    const void *data;
    int64_t shape[SI_MAX_RANK];
    int rank;
    si_dtype dt;
    if (si_output(m, 0, &dt, &rank, shape, &data, &err) != SI_OK || rank != 4)
        return 1;
    for (int i = 0; i < N; i++)
        if (((const float *)data)[i] != expect(square, i)) {
            fprintf(stderr, "element %d: %g, expected %g\n", i, ((const float *)data)[i],
                    expect(square, i));
            return 1;
        }
    return 0;
}

static void test_two_handles_one_thread(void **state)
{
    (void)state;
    si_model *a = open_gpu(square_path);
    si_model *b = open_gpu(neg_path);
    assert_int_equal(run_check(a, 1), 0);
    assert_int_equal(run_check(b, 0), 0);
    assert_int_equal(run_check(a, 1), 0);
    si_close(b);
    assert_int_equal(run_check(a, 1), 0);
    si_model *c = open_gpu(neg_path);
    assert_int_equal(run_check(c, 0), 0);
    si_close(a);
    assert_int_equal(run_check(c, 0), 0);
    si_close(c);
}

typedef struct {
    si_model *m;
    int square, runs, failures;
} job;

static void *worker(void *arg)
{
    job *jb = arg;
    for (int i = 0; i < jb->runs; i++)
        jb->failures += run_check(jb->m, jb->square);
    return NULL;
}

static void test_open_here_run_there(void **state)
{
    (void)state;
    si_model *m = open_gpu(square_path);
    job jb = {.m = m, .square = 1, .runs = 2};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, worker, &jb), 0);
    pthread_join(t, NULL);
    assert_int_equal(jb.failures, 0);
    assert_int_equal(run_check(m, 1), 0); /* and back in this thread */
    si_close(m);
}

/* Two threads on one handle: calls are serialized. Each checks the output of
 * its own run right after it; both give the same input, so whichever run an
 * output comes from it must be the right answer. Plus a second handle used
 * by a third thread at the same time. */
static void test_threads_share_handle(void **state)
{
    (void)state;
    si_model *m = open_gpu(square_path), *other = open_gpu(neg_path);
    job j1 = {.m = m, .square = 1, .runs = 8}, j2 = j1;
    job j3 = {.m = other, .square = 0, .runs = 8};
    pthread_t t1, t2, t3;
    assert_int_equal(pthread_create(&t1, NULL, worker, &j1), 0);
    assert_int_equal(pthread_create(&t2, NULL, worker, &j2), 0);
    assert_int_equal(pthread_create(&t3, NULL, worker, &j3), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_join(t3, NULL);
    assert_int_equal(j1.failures + j2.failures + j3.failures, 0);
    si_close(m);
    si_close(other);
}

/* A kiosk program renders with a context of its own: every call puts it back. */
static void test_app_context_kept(void **state)
{
    (void)state;
    EGLDisplay d = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    EGLint maj, min;
    if (d == EGL_NO_DISPLAY || !eglInitialize(d, &maj, &min))
        skip();
    eglBindAPI(EGL_OPENGL_ES_API);
    const EGLint attr[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_NONE};
    EGLContext app = eglCreateContext(d, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attr);
    assert_true(app != EGL_NO_CONTEXT);
    assert_true(eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, app));
    si_model *m = open_gpu(square_path);
    assert_true(eglGetCurrentContext() == app);
    assert_int_equal(run_check(m, 1), 0);
    assert_true(eglGetCurrentContext() == app);
    si_close(m);
    assert_true(eglGetCurrentContext() == app);
    /* the display is shared with the handles: closing them left it usable */
    assert_true(eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT));
    assert_true(eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, app));
    eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    eglDestroyContext(d, app);
}

/* An output of a run fed back as the next run's input, as a recurrent model's
 * state is (si_output hands outputs back from the model's host pool): the
 * same size, then a smaller one, which makes a new program and pool while
 * the input still points into the old. Each answer against the host. */
static void test_output_fed_back(void **state)
{
    (void)state;
    jb j = {0};
    const int free_dims[2] = {1, -1};
    placeholder_f32(&j, "x", free_dims, 2);
    node(&j, "u", "Square", "\"x\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "y", "AddV2", "\"u\",\"x\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    const char *path = write_model(&j, "fed_back.json");
    for (int budget = 0; budget < 2; budget++) {
        si_model *m = NULL;
        si_error err = {0};
        si_options opt = {.backend = SI_BACKEND_GPU, .host_mem_budget = budget ? 4096 : 0};
        if (si_open(path, &opt, &m, &err) != SI_OK)
            fail_msg("open: %s", err.message);
        float want[N];
        const void *in = x;
        int n = N;
        for (int run = 0; run < 3; run++) {
            for (int i = 0; i < n; i++) {
                float v = ((const float *)in)[i];
                want[i] = v * v + v;
            }
            if (run == 2)
                n = N / 2; /* new input sizes: a new program */
            si_tensor_in ti = {.dtype = SI_FLOAT32, .rank = 2, .shape = {1, n}, .data = in};
            if (si_run(m, &ti, 1, &err) != SI_OK)
                fail_msg("run %d (host budget %d): %s", run, budget, err.message);
            const void *out;
            assert_int_equal(si_output(m, 0, NULL, NULL, NULL, &out, &err), SI_OK);
            for (int i = 0; i < n; i++)
                if (((const float *)out)[i] != want[i])
                    fail_msg("run %d (host budget %d), element %d: %g, expected %g", run, budget, i,
                             ((const float *)out)[i], want[i]);
            in = out;
        }
        si_close(m);
    }
}

int main(void)
{
    if (!mkdtemp(tmp_root))
        return 1;
    srand(11);
    for (int i = 0; i < N; i++)
        x[i] = (float)rand() / (float)RAND_MAX * 4 - 2;
    write_unary("Square", "square.json", square_path);
    write_unary("Neg", "neg.json", neg_path);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_handles_one_thread),
        cmocka_unit_test(test_open_here_run_there),
        cmocka_unit_test(test_threads_share_handle),
        cmocka_unit_test(test_app_context_kept),
        cmocka_unit_test(test_output_fed_back),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tiny_rm_tmp();
    return rc;
}
