/* GPU failures (issue 21): out of memory at an allocation or at a command, and
 * a lost GL context, injected (si_options.fail_gpu_*) on whatever GPU runs the
 * test. Each gives SI_ERR_GPU, never an abort; after an out-of-memory the
 * handle runs again with bitwise the outputs of an undisturbed handle (a run
 * that failed half way gives its arena up, so the next one starts afresh);
 * after a lost context every call fails until the handle is closed, and
 * opening again works. emotion runs at 1.25x its lower bound, so that weights
 * stay in the arena between runs and are evicted within a run: a run stopped
 * half way leaves the arena unlike what the next run expects.
 *   test_gpu_faults CACHE_DIR */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "streaminfer.h"
#include "model_util.h"

static const char *cache;
static char path_a[512], path_b[512]; /* emotion, iris */
static uint64_t budget;               /* 1.25x the larger lower bound of the two */
static inputs in_a, in_b;
static outputs ref_a, ref_b;          /* undisturbed handles' outputs */

static si_result open_with(const char *path, const si_options *opt, si_model **m, si_error *err)
{
    *m = NULL;
    return si_open(path, opt, m, err);
}

static si_options faults(int alloc, int command, int lost)
{
    return (si_options){.vram_budget = budget, .backend = SI_BACKEND_GPU, .fail_gpu_alloc = alloc,
                        .fail_gpu_command = command, .fail_gpu_lost = lost};
}

static int setup(void **state)
{
    (void)state;
    snprintf(path_a, sizeof path_a, "%s/human-models/models/emotion.json", cache);
    snprintf(path_b, sizeof path_b, "%s/human-models/models/iris.json", cache);
    si_error err = {0};
    uint64_t lb = 0;
    const char *paths[2] = {path_a, path_b};
    inputs *ins[2] = {&in_a, &in_b};
    for (int i = 0; i < 2; i++) {
        si_model *m;
        si_options opt = {.backend = SI_BACKEND_GPU};
        if (open_with(paths[i], &opt, &m, &err) != SI_OK)
            return fprintf(stderr, "open %s: %s\n", paths[i], err.message), -1;
        make_inputs(m, 5u + (unsigned)i, ins[i]);
        if (si_plan(m, ins[i]->in, ins[i]->n, &err) != SI_OK)
            return fprintf(stderr, "plan %s: %s\n", paths[i], err.message), -1;
        si_stats st;
        si_get_stats(m, &st);
        lb = st.lower_bound_bytes > lb ? st.lower_bound_bytes : lb;
        si_close(m);
    }
    budget = lb + lb / 4;
    outputs *refs[2] = {&ref_a, &ref_b};
    for (int i = 0; i < 2; i++) {
        si_model *m;
        si_options opt = faults(0, 0, 0);
        if (open_with(paths[i], &opt, &m, &err) != SI_OK)
            return fprintf(stderr, "open %s: %s\n", paths[i], err.message), -1;
        run_copy(m, ins[i], refs[i]);
        si_close(m);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free_inputs(&in_a);
    free_inputs(&in_b);
    free_outputs(&ref_a);
    free_outputs(&ref_b);
    return 0;
}

/* Runs m at least `runs` times, and once more after a failed last one: a run
 * fails with SI_ERR_GPU naming what (the injected fault) or gives bitwise ref;
 * the run after a failure must not fail. The number of failed runs. */
static int runs_around_fault(si_model *m, const inputs *in, const outputs *ref, int runs, const char *what)
{
    int failed = 0, last_failed = 0;
    for (int r = 0; r < runs || last_failed; r++) {
        si_error err = {0};
        if (si_run(m, in->in, in->n, &err) != SI_OK) {
            assert_int_equal(err.status, SI_ERR_GPU);
            if (!strstr(err.message, what))
                fail_msg("run %d: expected '%s' in: %s", r, what, err.message);
            if (last_failed)
                fail_msg("run %d failed after a failed run: %s", r, err.message);
            failed++;
            last_failed = 1;
            continue;
        }
        last_failed = 0;
        if (same_outputs(m, ref, "a run around an injected fault"))
            fail_msg("run %d (after %d failed) differs from the undisturbed handle", r, failed);
    }
    return failed;
}

/* Every allocation in turn fails: at open (the host pool) the open fails and
 * leaves nothing; later (the arena, at a run) the run fails and the next works. */
static void test_alloc_out_of_memory(void **state)
{
    (void)state;
    int at_open = 0, at_run = 0, n;
    for (n = 1; n <= 16; n++) {
        si_options opt = faults(n, 0, 0);
        si_model *m;
        si_error err = {0};
        if (open_with(path_a, &opt, &m, &err) != SI_OK) {
            assert_int_equal(err.status, SI_ERR_GPU);
            assert_non_null(strstr(err.message, "out of memory"));
            assert_null(m);
            at_open++;
            continue;
        }
        int failed = runs_around_fault(m, &in_a, &ref_a, 3, "out of memory");
        si_close(m);
        at_run += failed;
        if (!failed)
            break; /* past the last allocation */
    }
    assert_true(n <= 16);
    assert_true(at_open >= 1);
    assert_true(at_run >= 1);
}

/* A command fails at points spread over the first runs: each time that run
 * fails, and every run after it is bitwise the undisturbed handle's. */
static void test_command_out_of_memory(void **state)
{
    (void)state;
    int hits = 0, n;
    for (n = 1; n < 1 << 20; n = n < 2 ? n + 1 : n * 3) {
        si_options opt = faults(0, n, 0);
        si_model *m;
        si_error err = {0};
        if (open_with(path_a, &opt, &m, &err) != SI_OK)
            fail_msg("open: %s", err.message);
        int failed = runs_around_fault(m, &in_a, &ref_a, 3, "out of memory");
        si_close(m);
        hits += failed;
        if (!failed)
            break; /* past the commands of the first runs */
    }
    assert_true(hits >= 5);
}

/* A context lost at a command of the first runs: that run and every later
 * call fail, closing works, and a model opened again runs bitwise as before. */
static void test_lost(void **state)
{
    (void)state;
    for (int n = 1; n <= 64; n *= 8) {
        si_options opt = faults(0, 0, n);
        si_model *m;
        si_error err = {0};
        if (open_with(path_a, &opt, &m, &err) != SI_OK)
            fail_msg("open: %s", err.message);
        int r = 0;
        while (r < 4 && si_run(m, in_a.in, in_a.n, &err) == SI_OK) /* till the nth command */
            r++;
        if (r == 4)
            fail_msg("the context was not lost at command %d in 4 runs", n);
        for (int k = 0; k < 3; k++) {
            if (k && si_run(m, in_a.in, in_a.n, &err) == SI_OK)
                fail_msg("a run after the loss succeeded");
            assert_int_equal(err.status, SI_ERR_GPU);
            if (!strstr(err.message, "lost"))
                fail_msg("run %d after the loss: %s", k, err.message);
        }
        si_stats st;
        si_get_stats(m, &st); /* still answers */
        si_close(m);
        si_options plain = faults(0, 0, 0);
        if (open_with(path_a, &plain, &m, &err) != SI_OK)
            fail_msg("open again: %s", err.message);
        assert_int_equal(runs_around_fault(m, &in_a, &ref_a, 2, "no fault injected"), 0);
        si_close(m);
    }
}

/* In a context of two models, a loss fails both; the context closes, and a
 * new one runs both bitwise. */
static void test_lost_in_context(void **state)
{
    (void)state;
    si_options opt = faults(0, 0, 40);
    si_context *c = NULL;
    si_error err = {0};
    if (si_context_open(&opt, &c, &err) != SI_OK)
        fail_msg("context: %s", err.message);
    si_model *a = NULL, *b = NULL;
    if (si_context_open_model(c, path_a, NULL, &a, &err) != SI_OK ||
        si_context_open_model(c, path_b, NULL, &b, &err) != SI_OK)
        fail_msg("open into the context: %s", err.message);
    int lost = 0;
    for (int frame = 0; frame < 4 && !lost; frame++)
        lost = si_run(a, in_a.in, in_a.n, &err) != SI_OK || si_run(b, in_b.in, in_b.n, &err) != SI_OK;
    assert_true(lost);
    assert_int_equal(err.status, SI_ERR_GPU);
    assert_int_equal(si_run(a, in_a.in, in_a.n, &err), SI_ERR_GPU);
    assert_non_null(strstr(err.message, "lost"));
    assert_int_equal(si_run(b, in_b.in, in_b.n, &err), SI_ERR_GPU);
    assert_non_null(strstr(err.message, "lost"));
    si_close(a);
    si_close(b);
    si_context_close(c);

    opt = faults(0, 0, 0);
    if (si_context_open(&opt, &c, &err) != SI_OK)
        fail_msg("context again: %s", err.message);
    if (si_context_open_model(c, path_a, NULL, &a, &err) != SI_OK ||
        si_context_open_model(c, path_b, NULL, &b, &err) != SI_OK)
        fail_msg("open into the new context: %s", err.message);
    for (int frame = 0; frame < 2; frame++) {
        if (si_run(a, in_a.in, in_a.n, &err) != SI_OK || si_run(b, in_b.in, in_b.n, &err) != SI_OK)
            fail_msg("new context, frame %d: %s", frame, err.message);
        assert_int_equal(same_outputs(a, &ref_a, "emotion in the new context"), 0);
        assert_int_equal(same_outputs(b, &ref_b, "iris in the new context"), 0);
    }
    si_close(a);
    si_close(b);
    si_context_close(c);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_gpu_faults CACHE_DIR\n");
        return 2;
    }
    cache = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alloc_out_of_memory),
        cmocka_unit_test(test_command_out_of_memory),
        cmocka_unit_test(test_lost),
        cmocka_unit_test(test_lost_in_context),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
