/* streaminfer — the commands: run (N times, timed), plan, info. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* min, median, p90 (nearest rank) and max of ms[0..n), n > 0; sorts ms. */
static void summarize(double *ms, int n, cli_timing *t)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    t->timed = n;
    t->min = ms[0];
    t->max = ms[n - 1];
    t->median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    int k = (9 * n + 9) / 10; /* ceil(0.9 n) */
    t->p90 = ms[k - 1];
}

/* Runs a->runs times; with more than one, the first warms up (the weights
 * read, the shaders compiled) and is not timed. */
static int timed_runs(si_model *m, const cli_args *a, const si_tensor_in *tin, int ni, cli_timing *t)
{
    double *ms = malloc((size_t)a->runs * sizeof *ms);
    if (!ms)
        return cli_fail(EXIT_OTHER, "out of memory");
    int n = 0;
    si_error err = {0};
    for (int r = 0; r < a->runs; r++) {
        cli_progress_run(r + 1, a->runs);
        if (si_run(m, tin, ni, &err) != SI_OK) {
            free(ms);
            return cli_fail_status(&err);
        }
        si_stats st;
        si_get_stats(m, &st);
        if (r == 0)
            t->first = st.run_ms;
        if (r > 0 || a->runs == 1)
            ms[n++] = st.run_ms;
    }
    t->runs = a->runs;
    summarize(ms, n, t);
    free(ms);
    return 0;
}

static int run(si_model *m, const cli_args *a, const si_tensor_in *tin, int ni, double t0)
{
    cli_timing t = {0};
    char files[MAX_OUTPUTS][300];
    int rc = timed_runs(m, a, tin, ni, &t);
    t.wall_ms = now_ms() - t0;
    if (!rc)
        rc = cli_write_outputs(m, a->outdir, files);
    if (!rc && !a->quiet)
        cli_print_results(m, a, &t);
    if (!rc && a->stats_path)
        rc = cli_write_stats(m, a, &t, files);
    return rc;
}

/* The budget a refusal names (SI_ERR_BUDGET's "the smallest budget that
 * could work is X (N bytes)") plus the driver's share it names; 0 where none. */
static uint64_t named_budget(si_result st, const si_error *err)
{
    const char *s = st == SI_ERR_BUDGET ? strstr(err->message, "the smallest budget that could work is ") : NULL;
    unsigned long long need = 0, reserve = 0;
    if (!s || !(s = strchr(s, '(')) || sscanf(s, "(%llu bytes)", &need) != 1)
        return 0;
    const char *r = strstr(s, "on this GPU ");
    if (r && (r = strchr(r, '(')))
        sscanf(r, "(%llu bytes)", &reserve);
    return need + reserve;
}

/* What a probe of plan --smallest needs besides the budget. Probes keep
 * nothing: no plan cache (the search makes tens of plans of one model, each a
 * budget nobody asked for), no progress or trace of their own. */
typedef struct {
    const cli_args *a;
    const si_tensor_in *tin;
    int ni;
    int plans, runs; /* probes made so far, each kind */
    int dyn;         /* the last accepted plan's si_stats.dynamic_part */
    int by_runs;     /* probe by runs (every stage), else by plans (stage 1) */
    uint64_t refused; /* the last search's greatest refused budget (0: none) */
} smallest_search;

/* One probe at budget b from a fresh handle: by plans (nothing compiled,
 * nothing run; static shapes are planned by si_open already) or by a run on
 * the inputs (every stage). SI_OK where accepted, SI_ERR_BUDGET where refused,
 * else the failure (err set). *named: the budget a refusal names, 0 if none. */
static si_result probe(smallest_search *q, uint64_t b, uint64_t *named, si_error *err)
{
    si_options o = q->a->opt;
    o.vram_budget = b;
    o.defer_compile = !q->by_runs;
    o.progress = NULL;
    o.progress_stop = NULL;
    o.plan_debug = 0;
    o.trace_path = NULL;
    o.plan_cache_dir = NULL;
    si_model *m = NULL;
    *err = (si_error){0};
    double t0 = now_ms();
    si_result st = si_open(q->a->model, &o, &m, err);
    if (st == SI_OK)
        st = q->by_runs ? si_run(m, q->tin, q->ni, err) : si_plan(m, q->tin, q->ni, err);
    if (st == SI_OK && !q->by_runs) {
        si_stats s;
        si_get_stats(m, &s);
        q->dyn = (int)s.dynamic_part;
    }
    *named = named_budget(st, err);
    si_close(m);
    if (q->a->opt.plan_debug) /* one line a probe, not the planner's own (tens of thousands) */
        fprintf(stderr, "probe %llu bytes (%s): %s in %.0f ms\n", (unsigned long long)b,
                q->by_runs ? "a run" : "a plan",
                st == SI_OK ? "accepted" : st == SI_ERR_BUDGET ? "refused" : "failed", now_ms() - t0);
    if (q->by_runs)
        q->runs++;
    else
        q->plans++;
    return st;
}

/* With --within (0 < PCT < 100, cli/main.c), the least budget whose acceptance
 * ends a search that refused lo. */
static uint64_t ends_if_accepted(const smallest_search *q, uint64_t lo)
{
    return (uint64_t)((double)lo / (1 - q->a->within / 100));
}

/* The least budget at least lo that the probes accept, taking acceptance as
 * monotone between them: lo first; where refused, the budget the refusal
 * names (or double; with --within, at least as far above as an acceptance
 * would end the search), until accepted; then just below the first accepted
 * (often the named budget is the answer: exact, one byte below; with --within,
 * where it was the named one, as far below as a refusal would end the search),
 * then bisection between the last refused and the first accepted that tries
 * first the budget a refusal names (see the loop). The probes near the answer
 * are the slow ones (their placement searches), so one that can end the search
 * beats halving a gap. 0 and *out set, or the exit status. */
static int least_accepted(smallest_search *q, uint64_t lo, uint64_t *out)
{
    si_error err;
    uint64_t named = 0, hi = lo;
    int at_named = 0; /* hi is the budget a refusal named */
    si_result st = probe(q, hi, &named, &err);
    cli_progress_search(q->plans, q->runs, lo - 1, st == SI_OK ? hi : 0);
    lo--; /* below lo: refused, or nothing (0) */
    while (st == SI_ERR_BUDGET) {
        lo = hi;
        if (hi > UINT64_MAX / 4)
            return cli_fail(EXIT_BUDGET, "plan --smallest: no %s up to %llu bytes is accepted: %s",
                            q->by_runs ? "run" : "budget", (unsigned long long)hi, err.message);
        at_named = named > hi;
        hi = at_named ? named : hi * 2;
        /* --within: no nearer than the least budget whose acceptance ends the
         * search (refusals near the floor name budgets a few KiB apart: frcnn-irv2
         * crawled up five of them, each a search) */
        if (at_named && q->a->within > 0 && ends_if_accepted(q, lo) > hi)
            hi = ends_if_accepted(q, lo);
        st = probe(q, hi, &named, &err);
        cli_progress_search(q->plans, q->runs, lo, st == SI_OK ? hi : 0);
    }
    if (st != SI_OK)
        return cli_fail_status(&err);
    int exact = !(q->a->within > 0);
    /* guess: the budget the last refusal named (its floor, often just below the
     * answer); named_lo: lo is such a budget, refused */
    uint64_t guess = 0;
    int named_lo = 0, named_hi = 0; /* named_hi: the last refusal named hi or more */
    int down = 0; /* accepted one share below an accepted budget so far, in a row */
    for (int first = 1; hi - lo > 1; first = 0) {
        if (!exact && (double)(hi - lo) <= (double)hi * q->a->within / 100)
            break; /* --within: the refused budget is within that share below hi */
        /* first just below the first accepted where that may end the search: exact, at hi - 1;
         * --within, where hi is the budget a refusal named (often the answer), at the
         * least budget whose refusal would end it. Then, for a refusal below the
         * middle, the budget it names; where that was refused too, with --within,
         * the least budget whose acceptance would end the search; for one that
         * names hi or more (budgets up to hi are likely refused), the least
         * budget whose refusal would end it; where that was accepted, again (up
         * to 3 in a row: the budget a refusal names is often within a few
         * shares of the answer, where bisection from 1 byte takes 6 probes). */
        uint64_t mid = lo + (hi - lo) / 2, share = (uint64_t)((double)hi * q->a->within / 100);
        uint64_t end = exact ? 0 : ends_if_accepted(q, lo);
        int at_guess = 0, at_down = 0;
        if (first && exact)
            mid = hi - 1;
        else if ((first && at_named) || named_hi || (down && down < 3)) {
            if (share < hi - mid)
                mid = hi - share, at_down = 1;
        } else if (guess > mid && guess < hi)
            mid = guess, at_guess = 1;
        else if (named_lo && end > mid && end < hi)
            mid = end;
        st = probe(q, mid, &named, &err);
        guess = 0;
        named_lo = named_hi = 0;
        down = st == SI_OK && at_down ? down + 1 : 0;
        if (st == SI_OK) {
            hi = mid;
        } else if (st == SI_ERR_BUDGET) {
            lo = mid;
            named_lo = at_guess;
            named_hi = !exact && named >= hi;
            guess = at_guess ? 0 : named; /* one named budget, then bisection: no crawl */
        } else {
            return cli_fail_status(&err);
        }
        cli_progress_search(q->plans, q->runs, lo, hi);
    }
    *out = hi;
    q->refused = lo;
    return 0;
}

/* plan --smallest: the least budget B whose plan is accepted while B-1's is
 * refused (least_accepted from 1 byte, over plans). Only planning; acceptance
 * is checked only at B-1 and B (with --within PCT: at B and at a refused
 * budget within PCT % below it). Where the plan is stage 1's only
 * (si_stats.dynamic_part), the search goes on from stage 1's smallest over
 * runs on the inputs: a budget only stage 1 meets is no answer. */
static int plan_smallest(const cli_args *a, const si_tensor_in *tin, int ni)
{
    smallest_search q = {.a = a, .tin = tin, .ni = ni};
    uint64_t first = 0, hi = 0;
    int rc = least_accepted(&q, 1, &first);
    char b1[64], b2[64], within[64] = "";
    if (!rc && q.dyn) {
        /* stage 1's smallest; the later stages are planned only as the model runs */
        uint64_t refused1 = q.refused;
        q.by_runs = 1;
        rc = least_accepted(&q, first, &hi);
        if (!rc && hi == first) /* the first run accepted: below it, stage 1's refusal */
            q.refused = refused1;
    }
    cli_progress_done();
    if (rc)
        return rc;
    if (!q.dyn)
        hi = first;
    if (a->within > 0)
        snprintf(within, sizeof within, ", within %g%%", a->within);
    if (hi == 1)
        printf("smallest accepted budget 1 byte (every budget is accepted; %d plans made and %d runs)\n",
               q.plans, q.runs);
    else if (!q.dyn)
        printf("smallest accepted budget %s (refused at %llu bytes%s; %d plans made, nothing run)\n",
               cli_size(hi, b1), (unsigned long long)q.refused, within, q.plans);
    else
        printf("smallest accepted budget %s (refused at %llu bytes%s; %d plans made and %d runs on "
               "these inputs: the GPU stages after the model's host part are planned as it runs; "
               "stage 1 alone is accepted from %s)\n",
               cli_size(hi, b1), (unsigned long long)q.refused, within, q.plans, q.runs,
               cli_size(first, b2));
    printf("bytes %llu\n", (unsigned long long)hi);
    return 0;
}

int cli_command_run(const cli_args *a)
{
    double t0 = now_ms();
    if (a->n_models > 1)
        return cli_kiosk_run(a, t0, now_ms);
    si_model *m = NULL;
    si_error err = {0};
    /* info opens the model itself; the handle here only reads --input files */
    if (a->cmd == CMD_INFO && a->n_ins == 0)
        return si_print_info(a->model, &a->opt, NULL, 0, stdout, a->json, &err) == SI_OK
                   ? 0 : cli_fail_status(&err);
    si_options o = a->opt;
    o.defer_compile = a->cmd != CMD_RUN; /* plan and info run nothing */
    if (a->smallest) { /* this handle only makes the inputs; each probe plans its own */
        o.vram_budget = 0;
        o.plan_cache_dir = NULL;
    }
    if (si_open(a->model, &o, &m, &err) != SI_OK)
        return cli_fail_status(&err);
    si_tensor_in tin[MAX_INPUTS];
    void *owned[MAX_INPUTS] = {0};
    int ni = si_input_count(m), rc = cli_make_inputs(m, a, tin, owned);
    if (rc)
        ;
    else if (a->cmd == CMD_PLAN && a->smallest)
        rc = plan_smallest(a, tin, ni);
    else if (a->cmd == CMD_PLAN)
        rc = si_plan(m, tin, ni, &err) != SI_OK || si_print_plan(m, stdout, &err) != SI_OK
                 ? cli_fail_status(&err) : 0;
    else if (a->cmd == CMD_INFO)
        rc = si_print_info(a->model, &a->opt, tin, ni, stdout, a->json, &err) != SI_OK
                 ? cli_fail_status(&err) : 0;
    else
        rc = run(m, a, tin, ni, t0);
    for (int i = 0; i < ni && i < MAX_INPUTS; i++)
        free(owned[i]);
    si_close(m);
    return rc;
}
