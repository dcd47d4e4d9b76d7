/* si_options' tools for tests and kernel work (no_stages, driver_reserve,
 * plan_debug, plan_prefetch) take effect as fields, the environment variables
 * of the same names still override them, and the pager reads no environment:
 * what it is told comes through pg_options. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "streaminfer.h"
#include "../runtime/runtime.h"
#include "tiny_model.h"

static const char *const debug_vars[] = {"SI_STAGES", "SI_DRIVER_RESERVE", "SI_CHECK_STEPS",
                                         "SI_PLAN_PREFETCH", "SI_PLAN_DEBUG"};

static int clear_env(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof debug_vars / sizeof debug_vars[0]; i++)
        unsetenv(debug_vars[i]);
    return 0;
}

/* Opens the staged model with opt, runs it once, checks the answer, returns
 * the stats. */
static si_stats run_staged(const char *path, si_options opt)
{
    /* 8 rows: more elements than CORE_VALUE_INPUT_MAX, so the stage is a GPU
     * program, not folded on the host */
    float x[24], want[24];
    const float q[3] = {2, -1, 0.5f};
    for (int i = 0; i < 24; i++) {
        x[i] = (float)(i % 7) - 3.5f; /* no zero: relu(-0) keeps its sign */
        want[i] = x[i] * q[i % 3] > 0 ? x[i] * q[i % 3] : 0.0f;
    }
    si_model *m = NULL;
    si_error err = {0};
    if (si_open(path, &opt, &m, &err) != SI_OK)
        fail_msg("open: %s", err.message);
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 2, .shape = {8, 3}, .data = x};
    if (si_run(m, &in, 1, &err) != SI_OK)
        fail_msg("run: %s", err.message);
    const void *data;
    assert_int_equal(si_output(m, 0, NULL, NULL, NULL, &data, &err), SI_OK);
    assert_memory_equal(data, want, sizeof want);
    si_stats st;
    si_get_stats(m, &st);
    si_close(m);
    return st;
}

static void test_no_stages(void **state)
{
    (void)state;
    const char *path = staged_model();
    si_options opt = {.backend = SI_BACKEND_GPU};
    assert_true(run_staged(path, opt).gpu_steps > 0); /* Mul and Relu: stage 2 on the GPU */
    opt.no_stages = 1;
    assert_int_equal(run_staged(path, opt).gpu_steps, 0); /* all after the Exit on the host */
    /* SI_STAGES overrides the field either way */
    setenv("SI_STAGES", "1", 1);
    assert_true(run_staged(path, opt).gpu_steps > 0);
    opt.no_stages = 0;
    setenv("SI_STAGES", "0", 1);
    assert_int_equal(run_staged(path, opt).gpu_steps, 0);
    unsetenv("SI_STAGES");
}

static void test_driver_reserve(void **state)
{
    (void)state;
    const char *path = staged_model();
    si_options opt = {.backend = SI_BACKEND_GPU, .vram_budget = 1 << 20};
    si_stats st = run_staged(path, opt);
    /* the share is the rule's on a real GPU; this test needs llvmpipe's zero */
    if (st.driver_reserve_bytes)
        skip();
    opt.driver_reserve = 1;
    st = run_staged(path, opt);
    assert_true(st.driver_reserve_bytes >= (1 << 20) / 64);
    assert_true(st.peak_vram_bytes + st.driver_reserve_bytes <= opt.vram_budget);
    opt.driver_reserve = 0;
    setenv("SI_DRIVER_RESERVE", "1", 1);
    assert_true(run_staged(path, opt).driver_reserve_bytes >= (1 << 20) / 64);
    unsetenv("SI_DRIVER_RESERVE");
}

/* Runs fn with stderr sent to a file; returns what it wrote (caller frees). */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
    char path[300];
    snprintf(path, sizeof path, "%s/stderr.txt", tmp_root);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *text = calloc(1, 1 << 16);
    assert_non_null(text);
    size_t n = fread(text, 1, (1 << 16) - 1, f);
    text[n] = 0;
    fclose(f);
    return text;
}

static void open_staged_with(void *arg)
{
    run_staged(staged_model(), *(const si_options *)arg);
}

static void test_plan_debug(void **state)
{
    (void)state;
    si_options opt = {.backend = SI_BACKEND_GPU, .vram_budget = 1 << 20};
    char *quiet = capture_stderr(open_staged_with, &opt);
    assert_string_equal(quiet, "");
    free(quiet);
    opt.plan_debug = 1;
    char *loud = capture_stderr(open_staged_with, &opt);
    assert_non_null(strstr(loud, "plan attempt 0")); /* the runtime's */
    assert_non_null(strstr(loud, "placement order 0: arena")); /* the pager's, through pg_options */
    free(loud);
    opt.plan_debug = 0;
    setenv("SI_PLAN_DEBUG", "1", 1);
    char *env = capture_stderr(open_staged_with, &opt);
    assert_non_null(strstr(env, "placement order 0: arena"));
    free(env);
    unsetenv("SI_PLAN_DEBUG");
}

/* A chain of n steps, step s: act[s-1] (the first input for s = 0) and input
 * s + 1 make act[s]; every buffer 1 KiB, the last act an output. Inputs do not
 * stay between uses (weights would fill the budget and leave no room ahead). */
enum { CHAIN = 6 };
static pg_buffer chain_bufs[2 * CHAIN + 1];
static int chain_start[CHAIN + 1], chain_bufs_of[3 * CHAIN];

static pg_problem chain_problem(void)
{
    chain_bufs[0] = (pg_buffer){.bytes = 1024, .kind = PG_INPUT, .tensor = 0};
    for (int s = 0; s < CHAIN; s++) {
        chain_bufs[1 + s] = (pg_buffer){.bytes = 1024, .kind = PG_INPUT, .tensor = 1 + s};
        chain_bufs[1 + CHAIN + s] = (pg_buffer){.bytes = 1024, .kind = PG_ACT,
                                                .is_output = s == CHAIN - 1,
                                                .tensor = 1 + CHAIN + s};
        chain_start[s] = 3 * s;
        chain_bufs_of[3 * s] = s ? CHAIN + s : 0;
        chain_bufs_of[3 * s + 1] = 1 + s;
        chain_bufs_of[3 * s + 2] = 1 + CHAIN + s;
    }
    chain_start[CHAIN] = 3 * CHAIN;
    return (pg_problem){.n_buffers = 2 * CHAIN + 1, .buffers = chain_bufs, .n_steps = CHAIN, .step_start = chain_start, .step_bufs = chain_bufs_of};
}

/* The step before which buffer w is first uploaded in the run (-2: never). */
static int upload_step(const pg_plan *p, int w)
{
    for (int a = 0; a < p->n_actions; a++)
        if (p->actions[a].kind == PA_UPLOAD && p->actions[a].buf == w)
            return p->actions[a].step;
    return -2;
}

static pg_plan *plan_chain_in(const pg_problem *pb, int prefetch, uint64_t budget)
{
    pg_options po = {.prefetch = prefetch};
    pg_plan *p = NULL;
    si_error err = {0};
    if (pg_plan_build_with(pb, budget, 256, &po, &p, &err) != SI_OK)
        fail_msg("plan: %s", err.message);
    char msg[256];
    if (pg_plan_check(pb, p, msg, sizeof msg))
        fail_msg("check: %s", msg);
    return p;
}

static pg_plan *plan_chain(const pg_problem *pb, int prefetch) { return plan_chain_in(pb, prefetch, 5 * 1024); }

static void test_pager_prefetch(void **state)
{
    (void)state;
    pg_problem pb = chain_problem();
    pg_plan *plain = plan_chain(&pb, 0), *early = plan_chain(&pb, 1);
    /* 5 KiB: a step's 3 KiB and the next input fit beside each other */
    int differs = 0;
    for (int s = 1; s < CHAIN; s++) {
        int a = upload_step(plain, 1 + s), b = upload_step(early, 1 + s);
        assert_true(a >= 0 && b >= 0 && b <= a);
        differs |= b < a;
    }
    assert_true(differs); /* with prefetch an input comes in a step ahead */
    /* the variable is the runtime's to read: the pager ignores it */
    setenv("SI_PLAN_PREFETCH", "1", 1);
    pg_plan *env = plan_chain(&pb, 0);
    unsetenv("SI_PLAN_PREFETCH");
    assert_int_equal(env->n_actions, plain->n_actions);
    for (int a = 0; a < plain->n_actions; a++) { /* field by field: the struct has padding */
        const pg_action *x = &env->actions[a], *y = &plain->actions[a];
        assert_true(x->kind == y->kind && x->buf == y->buf && x->step == y->step &&
                    x->offset == y->offset);
    }
    pg_plan_free(plain);
    pg_plan_free(early);
    pg_plan_free(env);
}

/* The most steps ahead of its step that an input is uploaded, and the most
 * inputs uploaded before one step for later ones. */
static int farthest_ahead(const pg_plan *p, int *most_at_once)
{
    int far = 0, at[CHAIN + 1] = {0};
    for (int s = 0; s < CHAIN; s++) {
        int u = upload_step(p, 1 + s); /* input 1 + s is step s's */
        assert_true(u >= 0 && u <= s);
        far = s - u > far ? s - u : far;
        if (u < s)
            at[u]++;
    }
    *most_at_once = 0;
    for (int s = 0; s < CHAIN; s++)
        *most_at_once = at[s] > *most_at_once ? at[s] : *most_at_once;
    return far;
}

/* Loads planned n steps ahead: as far as n where the budget leaves room at
 * every step between (5 KiB: a step's 3 KiB and two inputs), never farther,
 * no eviction added; with each step's time estimated, a step takes the loads
 * ahead only while its time lasts. */
static void test_pager_prefetch_depth(void **state)
{
    (void)state;
    pg_problem pb = chain_problem();
    int once;
    pg_plan *plain = plan_chain(&pb, 0), *two = plan_chain(&pb, 2), *four = plan_chain(&pb, 4);
    assert_int_equal(farthest_ahead(plain, &once), 0);
    assert_int_equal(farthest_ahead(two, &once), 2);
    assert_int_equal(farthest_ahead(four, &once), 2); /* the room of 5 KiB */
    assert_true(two->evictions <= plain->evictions && four->evictions <= plain->evictions);
    /* step 3's input of 3 KiB leaves no room beside it at 5.5 KiB: nothing
     * for a later step is loaded before it and held over it */
    chain_bufs[1 + 3].bytes = 3072;
    pg_plan *bump0 = plan_chain_in(&pb, 0, 5632), *bump4 = plan_chain_in(&pb, 4, 5632);
    assert_int_equal(bump4->evictions, bump0->evictions);
    assert_true(bump4->bytes_uploaded == bump0->bytes_uploaded);
    assert_true(upload_step(bump4, 1 + 4) >= 3);
    chain_bufs[1 + 3].bytes = 1024;
    pg_plan_free(bump0);
    pg_plan_free(bump4);
    pg_plan *roomy = plan_chain_in(&pb, 4, 16 * 1024);
    assert_int_equal(farthest_ahead(roomy, &once), 4);
    assert_true(once >= 3); /* the first step takes the next four's inputs */
    /* each step 10 us, a load 6 us: two loads beside a step, then its time is spent */
    double us[CHAIN];
    for (int s = 0; s < CHAIN; s++)
        us[s] = 10;
    pb.step_us = us;
    pb.load_us = 6;
    pb.load_bytes_us = 1e12;
    pg_plan *timed = plan_chain_in(&pb, 4, 16 * 1024);
    int far = farthest_ahead(timed, &once);
    assert_int_equal(once, 2);
    assert_true(far >= 2 && far <= 4);
    pg_plan_free(plain);
    pg_plan_free(two);
    pg_plan_free(four);
    pg_plan_free(roomy);
    pg_plan_free(timed);
}


/* si_options.progress hears each phase: planning (attempts, then 1 of 1),
 * reading weights (KiB done of KiB, ending at all of them) and each step of
 * the run (ending at n of n). */
typedef struct {
    int plan_attempts, plan_done, weights_calls, weights_end, run_end;
    int weights_total, run_total;
} heard;

static void listen(void *user, const char *phase, int done, int total)
{
    heard *h = user;
    if (!strcmp(phase, "plan")) {
        h->plan_attempts += total == 0 && done > 0;
        h->plan_done |= total == 1 && done == 1;
    } else if (!strcmp(phase, "weights")) {
        h->weights_calls++;
        h->weights_total = total;
        h->weights_end = done == total;
    } else if (!strcmp(phase, "run")) {
        h->run_total = total;
        h->run_end = done == total;
    }
}

static void test_progress(void **state)
{
    (void)state;
    /* y = x * w, w a weight of 3 floats in a shard of its own */
    char dir[300], path[320], bin[320];
    snprintf(dir, sizeof dir, "%s/progress", tmp_root);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/model.json", dir);
    snprintf(bin, sizeof bin, "%s/w.bin", dir);
    write_text(path, "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":["
               "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
               "\"shape\":{\"shape\":{\"dim\":[{\"size\":\"8\"},{\"size\":\"3\"}]}}}},"
               "{\"name\":\"w\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"}}},"
               "{\"name\":\"y\",\"op\":\"Mul\",\"input\":[\"x\",\"w\"],\"attr\":{\"T\":{\"type\":\"DT_FLOAT\"}}}]},"
               "\"weightsManifest\":[{\"paths\":[\"w.bin\"],\"weights\":[{\"name\":\"w\",\"shape\":[3],"
               "\"dtype\":\"float32\"}]}]}");
    /* 8 rows: more than CORE_VALUE_INPUT_MAX elements, so a GPU step runs */
    const float w[3] = {2, -1, 0.5f};
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)i - 11.5f;
    FILE *f = fopen(bin, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(w, sizeof w, 1, f), 1);
    fclose(f);
    heard h = {0};
    si_options opt = {.progress = listen, .progress_user = &h};
    si_model *m = NULL;
    si_error err = {0};
    assert_int_equal(si_open(path, &opt, &m, &err), SI_OK);
    si_tensor_in in = {.dtype = SI_FLOAT32, .rank = 2, .shape = {8, 3}, .data = x};
    assert_int_equal(si_run(m, &in, 1, &err), SI_OK);
    const void *out;
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    assert_int_equal(si_output(m, 0, &dt, &rank, shape, &out, &err), SI_OK);
    for (int i = 0; i < 24; i++)
        assert_true(((const float *)out)[i] == x[i] * w[i % 3]);
    si_close(m);
    assert_true(h.plan_attempts >= 1);
    assert_true(h.plan_done);
    assert_true(h.weights_calls >= 2); /* the start and the end at least */
    assert_int_equal(h.weights_total, 1); /* 12 bytes: 0 KiB, counted from 1 */
    assert_true(h.weights_end);
    assert_true(h.run_total > 0 && h.run_end);
}

int main(void)
{
    if (!mkdtemp(tmp_root))
        return 1;
    clear_env(NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_no_stages, clear_env),
        cmocka_unit_test_setup(test_driver_reserve, clear_env),
        cmocka_unit_test_setup(test_plan_debug, clear_env),
        cmocka_unit_test_setup(test_pager_prefetch, clear_env),
        cmocka_unit_test_setup(test_pager_prefetch_depth, clear_env),
        cmocka_unit_test_setup(test_progress, clear_env),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    tiny_rm_tmp();
    return rc;
}
