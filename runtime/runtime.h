/* runtime — implements include/streaminfer.h: drives io → core → pager →
 * glkernels. It is the one place that knows all four; core stays free of GL
 * and glkernels free of files. */
#ifndef SI_RUNTIME_H
#define SI_RUNTIME_H

#include "streaminfer.h"
#include "../io/io.h"
#include "../core/core.h"
#include "../pager/pager.h"
#include "../glkernels/glk.h"

/* Plan of the current program, for `streaminfer plan` and tests. */
const pg_plan *si_model_plan(const si_model *m);
const core_program *si_model_program(const si_model *m);
const char *si_model_renderer(const si_model *m);
/* Bytes of the budget the plan left to the GPU driver (0 on llvmpipe and the host). */
uint64_t si_model_driver_reserve(const si_model *m);
const pg_problem *si_model_problem(const si_model *m);
const char *si_model_node_name(const si_model *m, int node);
const si_stats *si_model_stats(const si_model *m);
/* si_print_plan's table; the caller holds the handle's lock. */
si_result si_report_plan(const si_model *m, FILE *f, si_error *err);

#endif
