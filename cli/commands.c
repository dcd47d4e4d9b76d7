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
    if (si_open(a->model, &o, &m, &err) != SI_OK)
        return cli_fail_status(&err);
    si_tensor_in tin[MAX_INPUTS];
    void *owned[MAX_INPUTS] = {0};
    int ni = si_input_count(m), rc = cli_make_inputs(m, a, tin, owned);
    if (rc)
        ;
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
