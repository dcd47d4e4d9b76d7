/* streaminfer's command line: what its files share. Uses only include/streaminfer.h. */
#ifndef SI_CLI_H
#define SI_CLI_H

#include <stdio.h>
#include "streaminfer.h"

enum { EXIT_OTHER = 1, EXIT_USAGE = 2, EXIT_MODEL = 3, EXIT_BUDGET = 4, EXIT_GPU = 5 };

#define MAX_INPUTS 64
#define MAX_OUTPUTS 64
#define MAX_MODELS 32

typedef struct {
    const char *name; /* NULL: positional */
    const char *file;
} input_arg;

typedef enum { CMD_RUN, CMD_PLAN, CMD_INFO } cli_command;

typedef struct {
    cli_command cmd;
    si_options opt;
    input_arg ins[MAX_INPUTS];
    int n_ins, runs, quiet, json, backend_set, smallest; /* smallest: plan --smallest */
    const char *model, *outdir, *stats_path;
    int no_plan_cache;        /* --no-plan-cache */
    double within;            /* plan --smallest --within PCT: stop within PCT % (0: exact) */
    char plan_cache_default[4096]; /* $XDG_CACHE_HOME/streaminfer/plans, else under $HOME */
    const char *models[MAX_MODELS]; /* every MODEL given; model is the first */
    int n_models;
    uint32_t seed;
    si_fit fit; /* --resize */
} cli_args;

/* What the runs measured, beside si_stats. */
typedef struct {
    int runs, timed;            /* runs made; runs timed (all but the warm-up) */
    double min, median, p90, max; /* run_ms over the timed runs */
    double first;               /* run_ms of the first run (the warm-up, if any) */
    double wall_ms;
} cli_timing;

/* main.c */
int cli_parse(int argc, char **argv, cli_args *a, int *done);
/* commands.c: opens the model, makes its inputs and runs, plans or describes
 * it as a->cmd says; returns the exit status. */
int cli_command_run(const cli_args *a);

/* kiosk.c: several MODELs in one context, --runs frames (each model once a
 * frame) in one --vram budget; returns the exit status. */
int cli_kiosk_run(const cli_args *a, double t0_ms, double (*now)(void));

/* errors.c: each prints one line on stderr and returns the exit code */
int cli_exit_code(si_result st);
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_fail_status(const si_error *err);
/* "1.50 MiB (1572864 bytes)", GiB from 1 GiB on; buf holds 64 */
const char *cli_size(uint64_t bytes, char *buf);

/* inputs.c: the tensors for every model input, read from --input files or
 * seeded random; returns 0 or the exit code (the message printed). */
int cli_make_inputs(si_model *m, const cli_args *a, si_tensor_in *tin, void **owned);

/* report.c */
int cli_write_outputs(si_model *m, const char *outdir, char files[][300]);
void cli_print_results(si_model *m, const cli_args *a, const cli_timing *t);
/* One output's line (name after "MODEL/" when model is set, dtype, shape, first values). */
void cli_print_output(si_model *m, const char *model, int o);
int cli_write_stats(si_model *m, const cli_args *a, const cli_timing *t, char files[][300]);

/* progress.c: si_options.progress drawing on stderr with \r when it is a
 * terminal and the work takes over about a second; nothing otherwise. */
void cli_progress_install(si_options *opt, int quiet);
void cli_progress_done(void);
void cli_progress_run(int run, int runs); /* the run about to start, from 1 */
/* plan --smallest's search so far (hi 0: none accepted yet) */
void cli_progress_search(int plans, int runs, uint64_t lo, uint64_t hi);

#endif
