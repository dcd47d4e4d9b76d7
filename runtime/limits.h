/* The limits a plan is made within besides the budget: the device's limits on
 * one buffer and one dispatch (DESIGN, invariant 3), and the ladder of part
 * sizes tiling tries. */
#ifndef SI_RUNTIME_LIMITS_H
#define SI_RUNTIME_LIMITS_H

#include "runtime.h"

/* The device's limits (gpu NULL: the host backend, which has only the
 * kernels' 32-bit indexing) lowered by si_options.max_buffer_bytes; returns
 * the most bytes one tensor a step binds may hold. */
uint64_t rt_plan_limits(const glk_ctx *gpu, uint64_t opt_max_buffer, glk_limits *lim);

/* Part sizes tiling tries, largest first: powers of two from the largest at
 * most budget/2 (no budget: at most the largest step) down to a floor that
 * depends on the model only (its largest step untiled / 1024, at least 4 KiB).
 * Where no limit above the floor is at most budget/2 (a budget under 4x the
 * floor: no model here is accepted so low), from
 * the largest at most `largest` (the largest step of the attempt before, as
 * split for the device's limits) down, so that the ladder can stop where
 * finer parts stop helping (below) before reaching the floor. The ladder of a larger
 * budget holds the ladder of a smaller one, so a larger budget is not
 * refused where a smaller one is accepted (but that runtime/budget.c stops
 * going down where a limit left the largest step past the budget and no
 * smaller than the limit before it: a larger budget's ladder may stop higher
 * than the smaller's first limit). rt_tile_next returns 0 past the end. */
uint64_t rt_tile_first(uint64_t budget, uint64_t untiled_bound, uint64_t largest);
uint64_t rt_tile_next(uint64_t limit, uint64_t untiled_bound);
/* Whether no limit of the ladder above its floor is at most budget/2 (a budget
 * under 4x the floor; rt_tile_first starts from
 * the top then). */
int rt_tile_below_floor(uint64_t budget, uint64_t untiled_bound);

/* Bytes of the largest tensor (storage root) a step of p binds. */
uint64_t rt_largest_tensor(const core_program *p);
/* The largest buffer of pb over max bytes, or -1. */
int rt_oversized(const pg_problem *pb, uint64_t max);

/* The refusal where every split left a tensor over the device's limit:
 * names it, the step that makes it and the limit. */
si_result rt_device_refusal(const si_model *m, const core_program *p, int tensor, uint64_t bytes,
                            uint64_t max_tensor, const glk_limits *lim, si_error *err);

#endif
