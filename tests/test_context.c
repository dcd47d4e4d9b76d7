/* Contexts (issue 21): several package models opened into one si_context
 * share one GL context and one VRAM budget. Each output is checked bitwise
 * against the same model opened alone (si_open) with the same budget; the
 * counted peak of the context stays within its budget; arenas compete (the
 * farthest next use gives its arena up: learned from the runs, or declared).
 *   test_context CACHE_DIR */
#include <pthread.h>
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

#define MAX_MODELS 8
static const char *const names[] = {"emotion", "iris", "facemesh", "liveness", "gender"};
enum { N_NAMES = sizeof names / sizeof names[0] };

static void model_path(const char *name, char *path)
{
    snprintf(path, 512, "%s/human-models/models/%s.json", cache, name);
}

static si_model *open_alone(const char *name, uint64_t budget)
{
    char path[512];
    model_path(name, path);
    si_options opt = {.vram_budget = budget, .backend = SI_BACKEND_GPU};
    si_model *m = NULL;
    si_error err = {0};
    if (si_open(path, &opt, &m, &err) != SI_OK)
        fail_msg("open %s: %s", name, err.message);
    return m;
}

static si_model *open_in(si_context *c, const char *name)
{
    char path[512];
    model_path(name, path);
    si_model *m = NULL;
    si_error err = {0};
    if (si_context_open_model(c, path, NULL, &m, &err) != SI_OK)
        fail_msg("open %s into the context: %s", name, err.message);
    return m;
}

static si_context *open_context(uint64_t budget)
{
    si_options opt = {.vram_budget = budget, .backend = SI_BACKEND_GPU};
    si_context *c = NULL;
    si_error err = {0};
    if (si_context_open(&opt, &c, &err) != SI_OK)
        fail_msg("context: %s", err.message);
    return c;
}

/* What the models alone give: inputs, outputs, arena, lower bound. */
static inputs ins[N_NAMES];
static outputs alone[N_NAMES];
static uint64_t alone_peak[N_NAMES], budget;

static int setup_alone(void **state)
{
    (void)state;
    uint64_t lb = 0;
    for (int i = 0; i < N_NAMES; i++) { /* the lower bounds, from a plan */
        si_model *m = open_alone(names[i], 0);
        make_inputs(m, 17u + (unsigned)i, &ins[i]);
        si_error err = {0};
        if (si_plan(m, ins[i].in, ins[i].n, &err) != SI_OK)
            return fprintf(stderr, "plan %s: %s\n", names[i], err.message), -1;
        si_stats st;
        si_get_stats(m, &st);
        if (st.lower_bound_bytes > lb)
            lb = st.lower_bound_bytes;
        si_close(m);
    }
    budget = lb + lb / 4;
    for (int i = 0; i < N_NAMES; i++) {
        si_model *m = open_alone(names[i], budget);
        run_copy(m, &ins[i], &alone[i]);
        si_stats st;
        si_get_stats(m, &st);
        alone_peak[i] = st.peak_vram_bytes;
        si_close(m);
    }
    return 0;
}

static int teardown_alone(void **state)
{
    (void)state;
    for (int i = 0; i < N_NAMES; i++) {
        free_inputs(&ins[i]);
        free_outputs(&alone[i]);
    }
    return 0;
}

/* Five models in turns within 1.25x the largest of their lower bounds: the
 * sum of their arenas is over it, so they compete; every output bitwise the
 * model's alone, the context's counted peak within the budget. */
static void test_shared_budget(void **state)
{
    (void)state;
    uint64_t sum = 0;
    for (int i = 0; i < N_NAMES; i++)
        sum += alone_peak[i];
    assert_true(sum > budget); /* else nothing would compete */
    si_context *c = open_context(budget);
    si_model *m[N_NAMES];
    for (int i = 0; i < N_NAMES; i++)
        m[i] = open_in(c, names[i]);
    int bad = 0;
    for (int frame = 0; frame < 2; frame++)
        for (int i = 0; i < N_NAMES; i++) {
            si_error err = {0};
            if (si_run(m[i], ins[i].in, ins[i].n, &err) != SI_OK)
                fail_msg("%s frame %d: %s", names[i], frame, err.message);
            bad += same_outputs(m[i], &alone[i], names[i]);
            si_context_stats cs;
            si_context_get_stats(c, &cs);
            assert_true(cs.held_vram_bytes <= budget);
        }
    assert_int_equal(bad, 0);
    si_context_stats cs;
    si_context_get_stats(c, &cs);
    assert_true(cs.peak_vram_bytes <= budget);
    assert_true(cs.peak_vram_bytes > 0);
    assert_true(cs.arenas_released > 0);
    assert_int_equal(cs.runs, 2 * N_NAMES);
    assert_int_equal(cs.models, N_NAMES);
    assert_int_equal(cs.budget_bytes, budget);
    si_close(m[1]); /* a model closed early; the others go with the context */
    si_context_get_stats(c, &cs);
    assert_int_equal(cs.models, N_NAMES - 1);
    si_context_close(c);
}

static si_context *open_context_host(uint64_t host_budget)
{
    si_options opt = {.vram_budget = budget, .host_mem_budget = host_budget, .backend = SI_BACKEND_GPU};
    si_context *c = NULL;
    si_error err = {0};
    if (si_context_open(&opt, &c, &err) != SI_OK)
        fail_msg("context: %s", err.message);
    return c;
}

/* The bytes of a model's inputs, 4 an element: a host budget holds them
 * beside the pools while the model runs (the run reads them in place). */
static uint64_t input_bytes(const inputs *in)
{
    uint64_t n = 0;
    for (int i = 0; i < in->n; i++) {
        uint64_t k = 4;
        for (int d = 0; d < in->in[i].rank; d++)
            k *= (uint64_t)in->in[i].shape[d];
        n += k;
    }
    return n;
}

/* A host-memory budget given to the context bounds its models' host pools
 * together, with the inputs of the model being planned: each model takes the
 * least pool that works for it, out of what the models before it and its
 * inputs left. Three models in a budget of exactly the most any of them
 * needs (the pools before it, its inputs, its least pool): all open, run
 * bitwise as alone, the pools within it; one byte less: the model that
 * needed the most is refused, naming that smallest host budget. */
static void test_shared_host_budget(void **state)
{
    (void)state;
    enum { K = 3 };
    uint64_t least[K], sum = 0, need = 0;
    int binding = 0;
    si_context *c = open_context_host(1ull << 40); /* room for all: each takes its least */
    si_model *m[K];
    si_context_stats cs;
    for (int i = 0; i < K; i++) {
        m[i] = open_in(c, names[i]);
        si_context_get_stats(c, &cs); /* the pools so far */
        least[i] = cs.host_pool_bytes - sum;
        sum += least[i];
        assert_true(least[i] > 0);
        if (sum + input_bytes(&ins[i]) > need) {
            need = sum + input_bytes(&ins[i]);
            binding = i;
        }
    }
    si_context_close(c);

    c = open_context_host(need);
    for (int i = 0; i < K; i++)
        m[i] = open_in(c, names[i]);
    for (int frame = 0; frame < 2; frame++)
        for (int i = 0; i < K; i++) {
            si_error err = {0};
            if (si_run(m[i], ins[i].in, ins[i].n, &err) != SI_OK)
                fail_msg("%s frame %d in a host budget of %llu: %s", names[i], frame,
                         (unsigned long long)need, err.message);
            assert_int_equal(same_outputs(m[i], &alone[i], names[i]), 0);
            si_context_get_stats(c, &cs);
            assert_true(cs.host_pool_bytes + input_bytes(&ins[i]) <= need);
        }
    si_context_close(c);

    c = open_context_host(need - 1);
    for (int i = 0; i < binding; i++)
        m[i] = open_in(c, names[i]);
    char path[512], want[64];
    model_path(names[binding], path);
    si_model *last = NULL;
    si_error err = {0};
    assert_int_equal(si_context_open_model(c, path, NULL, &last, &err), SI_ERR_BUDGET);
    assert_null(last);
    snprintf(want, sizeof want, "%llu", (unsigned long long)need);
    if (!strstr(err.message, "smallest host budget") || !strstr(err.message, want))
        fail_msg("the refusal should name %s: %s", want, err.message);
    si_context_get_stats(c, &cs);
    assert_int_equal(cs.models, binding);
    assert_true(cs.host_pool_bytes <= need - 1);
    si_context_close(c);
}

/* With no limit every arena stays: after the first frame only inputs move up,
 * and the outputs are still the models' alone (at a budget: invariant 2). */
static void test_no_limit_keeps_weights(void **state)
{
    (void)state;
    si_context *c = open_context(0);
    si_model *m[N_NAMES];
    for (int i = 0; i < N_NAMES; i++)
        m[i] = open_in(c, names[i]);
    uint64_t up[2] = {0};
    int bad = 0;
    for (int frame = 0; frame < 2; frame++) {
        si_context_stats before, after;
        si_context_get_stats(c, &before);
        for (int i = 0; i < N_NAMES; i++) {
            si_error err = {0};
            if (si_run(m[i], ins[i].in, ins[i].n, &err) != SI_OK)
                fail_msg("%s: %s", names[i], err.message);
            bad += same_outputs(m[i], &alone[i], names[i]);
        }
        si_context_get_stats(c, &after);
        up[frame] = after.bytes_uploaded - before.bytes_uploaded;
    }
    assert_int_equal(bad, 0);
    uint64_t in_bytes = 0;
    for (int i = 0; i < N_NAMES; i++)
        for (int k = 0; k < ins[i].n; k++) {
            uint64_t n = 4;
            for (int d = 0; d < ins[i].in[k].rank; d++)
                n *= (uint64_t)ins[i].in[k].shape[d];
            in_bytes += n;
        }
    assert_true(up[0] > in_bytes);
    assert_int_equal(up[1], in_bytes);
    si_context_stats cs;
    si_context_get_stats(c, &cs);
    assert_int_equal(cs.arenas_released, 0);
    si_context_close(c);
}

/* Three copies of one model (equal arenas S) in a budget of 2.5 S, run
 * A B C A B C ...: keeping what runs soonest (Belady) gives an arena up every
 * other run from the third on (5 in 12 runs); least recently used would give
 * one up every run from the third on (10). Declared, the order is known from
 * the start (5); learned, the first pass has no pattern yet and gives up the
 * least recently run (A at the third run), one more (6). */
static void belady_case(int declare)
{
    si_model *alone_m = open_alone("gender", 0);
    inputs in;
    make_inputs(alone_m, 5, &in);
    outputs ref = {0};
    run_copy(alone_m, &in, &ref);
    si_stats st;
    si_get_stats(alone_m, &st);
    si_close(alone_m);
    uint64_t s = st.peak_vram_bytes;
    si_context *c = open_context(s * 2 + s / 2);
    si_model *m[3];
    for (int i = 0; i < 3; i++)
        m[i] = open_in(c, "gender");
    if (declare) {
        si_error err = {0};
        assert_int_equal(si_context_set_order(c, m, 3, &err), SI_OK);
        si_model *twice[2] = {m[0], m[0]};
        assert_int_equal(si_context_set_order(c, twice, 2, &err), SI_ERR_ARG);
    }
    int bad = 0;
    for (int r = 0; r < 12; r++) {
        si_error err = {0};
        if (si_run(m[r % 3], in.in, in.n, &err) != SI_OK)
            fail_msg("run %d: %s", r, err.message);
        bad += same_outputs(m[r % 3], &ref, "gender");
        si_stats ms;
        si_get_stats(m[r % 3], &ms);
        assert_int_equal(ms.peak_vram_bytes, s); /* the plan is the model's alone */
    }
    assert_int_equal(bad, 0);
    si_context_stats cs;
    si_context_get_stats(c, &cs);
    assert_int_equal(cs.arenas_released, declare ? 5 : 6);
    /* under a budget the context's arenas are ranges of one buffer: what it
     * owns is that buffer, at most the budget */
    assert_true(cs.peak_vram_bytes <= s * 2 + s / 2);
    assert_true(cs.peak_vram_bytes >= 2 * s);
    si_context_close(c);
    free_inputs(&in);
    free_outputs(&ref);
}

static void test_belady_learned(void **state)
{
    (void)state;
    belady_case(0);
}

static void test_belady_declared(void **state)
{
    (void)state;
    belady_case(1);
}

/* Threads: each job runs its models in turns and checks every output. */
typedef struct {
    si_context *c;
    si_model *m[N_NAMES];
    int which[N_NAMES], n, frames, failures;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int f = 0; f < j->frames; f++)
        for (int k = 0; k < j->n; k++) {
            int i = j->which[k];
            si_error err = {0};
            if (si_run(j->m[k], ins[i].in, ins[i].n, &err) != SI_OK) {
                fprintf(stderr, "%s: %s\n", names[i], err.message);
                j->failures++;
                continue;
            }
            j->failures += same_outputs(j->m[k], &alone[i], names[i]);
        }
    return NULL;
}

/* Two contexts, each in a thread of its own, at the same time; and a third
 * thread sharing the first context with the first (calls serialized inside:
 * each thread reads its own model's outputs, which only its runs replace). */
static void test_threads(void **state)
{
    (void)state;
    si_context *a = open_context(budget), *b = open_context(budget);
    job ja = {.c = a, .n = 2, .which = {4, 3}, .frames = 3};
    job jb = {.c = b, .n = 2, .which = {0, 4}, .frames = 3};
    job jc = {.c = a, .n = 1, .which = {0}, .frames = 4};
    job *jobs[3] = {&ja, &jb, &jc};
    for (int k = 0; k < 3; k++) /* opened here, run there */
        for (int i = 0; i < jobs[k]->n; i++)
            jobs[k]->m[i] = open_in(jobs[k]->c, names[jobs[k]->which[i]]);
    pthread_t t[3];
    for (int k = 0; k < 3; k++)
        assert_int_equal(pthread_create(&t[k], NULL, worker, jobs[k]), 0);
    for (int k = 0; k < 3; k++)
        pthread_join(t[k], NULL);
    assert_int_equal(ja.failures + jb.failures + jc.failures, 0);
    si_context_stats sa, sb;
    si_context_get_stats(a, &sa);
    si_context_get_stats(b, &sb);
    assert_int_equal(sa.runs, 3 * 2 + 4);
    assert_int_equal(sb.runs, 3 * 2);
    assert_true(sa.peak_vram_bytes <= budget && sb.peak_vram_bytes <= budget);
    si_context_close(a);
    si_context_close(b);
}

/* Cancellation: progress_stop returns nonzero at the stop_at-th call of
 * phase stop_phase (0: never; -k: at the k-th call from the end of a run,
 * done == total - k). */
typedef struct {
    const char *stop_phase;
    int stop_at, calls;
} stopper;

static int stop_here(void *user, const char *phase, int done, int total)
{
    (void)done;
    (void)total;
    stopper *s = user;
    if (!s->stop_phase || strcmp(phase, s->stop_phase))
        return 0;
    ++s->calls;
    return s->stop_at < 0 ? done == total + s->stop_at : s->calls == s->stop_at;
}

/* A run stopped in its weights or at its 5th step, an open stopped while it
 * plans: SI_ERR_CANCELLED saying so; the handle (alone, or a model of a
 * context beside another) runs again after it and gives the same outputs.
 * Alone, facemesh runs in 1.125x its own lower bound, where weights stream
 * in during the run and some stay resident for the next: a run stopped
 * before its end left them unloaded (3 steps from the end). */
static void test_cancel(void **state)
{
    (void)state;
    char path[512];
    model_path("facemesh", path);
    si_model *probe = open_alone("facemesh", 0);
    si_error perr = {0};
    assert_int_equal(si_plan(probe, ins[2].in, ins[2].n, &perr), SI_OK);
    si_stats ps;
    si_get_stats(probe, &ps);
    si_close(probe);
    stopper s = {0};
    si_options opt = {.vram_budget = ps.lower_bound_bytes + ps.lower_bound_bytes / 8,
                      .backend = SI_BACKEND_GPU, .progress_stop = stop_here, .progress_user = &s};
    si_model *m = NULL;
    si_error err = {0};
    s = (stopper){"plan", 1, 0};
    assert_int_equal(si_open(path, &opt, &m, &err), SI_ERR_CANCELLED);
    assert_null(m);
    assert_non_null(strstr(err.message, "cancelled"));
    s = (stopper){0};
    assert_int_equal(si_open(path, &opt, &m, &err), SI_OK);
    const char *phases[] = {"weights", "run", "run", "run"};
    const int at[] = {1, 5, 5, -3};
    for (int k = 0; k < 4; k++) {
        s = (stopper){phases[k], at[k], 0};
        err = (si_error){0};
        assert_int_equal(si_run(m, ins[2].in, ins[2].n, &err), SI_ERR_CANCELLED);
        assert_int_equal(err.status, SI_ERR_CANCELLED);
        assert_non_null(strstr(err.message, "cancelled"));
        if (at[k] > 0)
            assert_int_equal(s.calls, s.stop_at); /* it stopped where it was asked */
        s = (stopper){0};
        assert_int_equal(si_run(m, ins[2].in, ins[2].n, &err), SI_OK);
        assert_int_equal(same_outputs(m, &alone[2], "facemesh after a cancelled run"), 0);
    }
    si_close(m);
    /* in a context: the other model is not disturbed */
    si_context *c = open_context(budget);
    si_model *a = NULL, *b = open_in(c, "gender");
    assert_int_equal(si_context_open_model(c, path, &opt, &a, &err), SI_OK);
    for (int k = 0; k < 2; k++) {
        s = (stopper){"run", 7, 0};
        assert_int_equal(si_run(a, ins[2].in, ins[2].n, &err), SI_ERR_CANCELLED);
        s = (stopper){0};
        assert_int_equal(si_run(b, ins[4].in, ins[4].n, &err), SI_OK);
        assert_int_equal(same_outputs(b, &alone[4], "gender"), 0);
        assert_int_equal(si_run(a, ins[2].in, ins[2].n, &err), SI_OK);
        assert_int_equal(same_outputs(a, &alone[2], "facemesh"), 0);
    }
    si_context_stats cs;
    si_context_get_stats(c, &cs);
    assert_true(cs.peak_vram_bytes <= budget);
    si_context_close(c);
}

/* A model of another context in the order, a bad path, no context: errors. */
static void test_bad_arguments(void **state)
{
    (void)state;
    si_context *a = open_context(0), *b = open_context(0);
    si_model *m = open_in(a, "gender");
    si_error err = {0};
    assert_int_equal(si_context_set_order(b, &m, 1, &err), SI_ERR_ARG);
    assert_non_null(strstr(err.message, "not one of this context's"));
    si_model *x = NULL;
    assert_int_not_equal(si_context_open_model(a, "/nonexistent/model.json", NULL, &x, &err), SI_OK);
    assert_null(x);
    assert_int_equal(si_context_open_model(NULL, "x", NULL, &x, &err), SI_ERR_ARG);
    si_context_stats cs;
    si_context_get_stats(a, &cs);
    assert_int_equal(cs.models, 1);
    si_context_close(a);
    si_context_close(b);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_context CACHE_DIR\n");
        return 2;
    }
    cache = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_budget),
        cmocka_unit_test(test_no_limit_keeps_weights),
        cmocka_unit_test(test_shared_host_budget),
        cmocka_unit_test(test_belady_learned),
        cmocka_unit_test(test_belady_declared),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup_alone, teardown_alone);
}
