/* streaminfer — progress on a terminal. The library calls si_options.progress
 * while planning ("plan" 0 of 1, attempt k of 0 = unknown, 1 of 1), while
 * reading weights ("weights" KiB done of KiB) and after each step of a run
 * ("run" k of n). A phase that lasts over a second gets a line on stderr,
 * redrawn in place with \r (at most ten times a second) and cleared when the
 * phase ends or before anything else is printed; the runs of --runs N count
 * as one phase. Nothing at all when stderr is
 * not a terminal or with -q. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

static struct {
    int on;                 /* installed: stderr is a terminal and not -q */
    char phase[32];
    double start, drawn_at; /* seconds */
    int drawn;              /* a line is on the terminal */
    int run, runs;          /* which run of how many (set by the caller) */
} pr;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

void cli_progress_done(void)
{
    if (pr.drawn)
        fputs("\r\033[K", stderr);
    pr.drawn = 0;
}

void cli_progress_run(int run, int runs)
{
    pr.run = run;
    pr.runs = runs;
}

static void draw(void *user, const char *phase, int done, int total)
{
    (void)user;
    double t = now_s();
    if (strncmp(pr.phase, phase, sizeof pr.phase - 1)) {
        cli_progress_done();
        snprintf(pr.phase, sizeof pr.phase, "%s", phase);
        pr.start = t;
    }
    /* the phase is over (the runs of --runs N make one phase) */
    if (total > 0 && done >= total && (strcmp(phase, "run") || pr.run >= pr.runs)) {
        cli_progress_done();
        pr.phase[0] = 0;
        return;
    }
    if (t - pr.start < 1.0 || (pr.drawn && t - pr.drawn_at < 0.1))
        return;
    if (!strcmp(phase, "run")) {
        char which[48] = "";
        if (pr.runs > 1)
            snprintf(which, sizeof which, " %d of %d", pr.run, pr.runs);
        fprintf(stderr, "\rstreaminfer: run%s: step %d of %d, %.1f s\033[K", which, done, total,
                t - pr.start);
    } else if (!strcmp(phase, "plan")) {
        fprintf(stderr, "\rstreaminfer: planning (attempt %d), %.1f s\033[K", done > 0 ? done : 1,
                t - pr.start);
    } else if (!strcmp(phase, "weights")) {
        double mb = done / 1024.0, s = t - pr.start;
        fprintf(stderr, "\rstreaminfer: reading weights: %.0f of %.0f MB, %.0f MB/s\033[K", mb,
                total / 1024.0, s > 0 ? mb / s : 0);
    } else {
        fprintf(stderr, "\rstreaminfer: %s: %d of %d, %.1f s\033[K", phase, done, total, t - pr.start);
    }
    fflush(stderr);
    pr.drawn = 1;
    pr.drawn_at = t;
}

void cli_progress_install(si_options *opt, int quiet)
{
    if (quiet || !isatty(STDERR_FILENO))
        return;
    pr.on = 1;
    opt->progress = draw;
    opt->progress_user = NULL;
}

/* plan --smallest between probes (each probe plans or runs with no progress
 * of its own): how many so far and the bounds, after a second. */
void cli_progress_search(int plans, int runs, uint64_t lo, uint64_t hi)
{
    if (!pr.on)
        return;
    double t = now_s();
    if (strcmp(pr.phase, "smallest")) {
        cli_progress_done();
        snprintf(pr.phase, sizeof pr.phase, "smallest");
        pr.start = t;
    }
    if (t - pr.start < 1.0)
        return;
    char acc[48] = "none accepted yet";
    if (hi)
        snprintf(acc, sizeof acc, "accepted at %llu", (unsigned long long)hi);
    fprintf(stderr, "\rstreaminfer: plan --smallest: %d plans, %d runs; refused at %llu bytes, %s, "
                    "%.1f s\033[K", plans, runs, (unsigned long long)lo, acc, t - pr.start);
    fflush(stderr);
    pr.drawn = 1;
    pr.drawn_at = t;
}
