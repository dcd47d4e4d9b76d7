/* Device limits and the tiling ladder (runtime/limits.h). */
#include <stdio.h>
#include "limits.h"

uint64_t rt_plan_limits(const glk_ctx *gpu, uint64_t opt_max_buffer, glk_limits *lim)
{
    if (gpu)
        glk_get_limits(gpu, lim);
    else
        *lim = (glk_limits){.storage_block_bytes = 0,
                            .dispatch_elements = CK_MAX_INDEX_ELEMS,
                            .index_elements = CK_MAX_INDEX_ELEMS,
                            .loop_iterations = UINT64_MAX};
    uint64_t max = lim->index_elements * CORE_ELEM;
    if (gpu)
        max = glk_max_tensor_bytes(lim);
    if (opt_max_buffer && opt_max_buffer < max)
        max = opt_max_buffer;
    return max;
}

static uint64_t pow2_floor(uint64_t x)
{
    uint64_t p = 1;
    while (p <= x / 2)
        p *= 2;
    return p;
}

static uint64_t tile_floor(uint64_t untiled_bound)
{
    uint64_t f = untiled_bound / 1024;
    return pow2_floor(f > 4096 ? f : 4096);
}

/* The largest limit of the ladder at most budget/2 (no budget: at most the
 * untiled bound), floor aside */
static uint64_t budget_first(uint64_t budget, uint64_t untiled_bound)
{
    uint64_t top = budget && budget / 2 < untiled_bound ? budget / 2 : untiled_bound;
    return pow2_floor(top ? top : 1);
}

uint64_t rt_tile_first(uint64_t budget, uint64_t untiled_bound, uint64_t largest)
{
    uint64_t first = budget_first(budget, untiled_bound), f = tile_floor(untiled_bound);
    /* A budget with no limit above the floor (one byte: the first probe of plan
     * --smallest and info's smallest budget) starts just below the largest
     * step, and goes finer while that makes the largest step smaller: every
     * step split at the floor at once made frcnn-irv2 7 million steps (4 GB of
     * host memory, 5 s) and a largest step 3.4x the coarser limits' (a node
     * whose weights take more slices than a step may have), so the budget the
     * refusal named was far off. */
    if (rt_tile_below_floor(budget, untiled_bound) && largest)
        first = pow2_floor(largest < untiled_bound ? largest : untiled_bound);
    return first > f ? first : f;
}

int rt_tile_below_floor(uint64_t budget, uint64_t untiled_bound)
{
    return budget && budget_first(budget, untiled_bound) <= tile_floor(untiled_bound);
}

uint64_t rt_tile_next(uint64_t limit, uint64_t untiled_bound)
{
    return limit / 2 >= tile_floor(untiled_bound) ? limit / 2 : 0;
}

uint64_t rt_largest_tensor(const core_program *p)
{
    uint64_t big = 0;
    for (int k = 0; k < p->n_steps; k++) {
        const ck_step *s = &p->steps[k];
        for (int i = 0; i <= s->n_in; i++) {
            int t = i < s->n_in ? s->in[i] : s->out;
            if (t >= 0 && p->tensors[core_storage(p, t)].bytes > big)
                big = p->tensors[core_storage(p, t)].bytes;
        }
    }
    return big;
}

int rt_oversized(const pg_problem *pb, uint64_t max)
{
    int worst = -1;
    for (int b = 0; b < pb->n_buffers; b++)
        if (pb->buffers[b].bytes > max && (worst < 0 || pb->buffers[b].bytes > pb->buffers[worst].bytes))
            worst = b;
    return worst;
}

si_result rt_device_refusal(const si_model *m, const core_program *p, int tensor, uint64_t bytes,
                            uint64_t max_tensor, const glk_limits *lim, si_error *err)
{
    int step = -1;
    for (int k = 0; k < p->n_steps && step < 0; k++)
        if (core_storage(p, p->steps[k].out) == tensor)
            step = k;
    for (int k = 0; k < p->n_steps && step < 0; k++)
        for (int i = 0; i < p->steps[k].n_in; i++)
            if (p->steps[k].in[i] >= 0 && core_storage(p, p->steps[k].in[i]) == tensor)
                step = k;
    if (err) {
        err->status = SI_ERR_GPU;
        /* the names last: they can be long, and the message is cut at its size */
        snprintf(err->message, sizeof err->message,
                 "no budget can work on this device: max_buffer_bytes, the %llu-byte limit on one "
                 "buffer a step binds (least of: storage block %llu, 4 x %llu invocations a dispatch, "
                 "4 x %llu elements by 32-bit indices, --max-buffer), is below a tensor no split "
                 "made smaller: %llu bytes, tensor '%s', bound by a %s step, node '%s'",
                 (unsigned long long)max_tensor, (unsigned long long)lim->storage_block_bytes,
                 (unsigned long long)lim->dispatch_elements, (unsigned long long)lim->index_elements,
                 (unsigned long long)bytes, p->tensors[tensor].name,
                 step >= 0 ? ck_kind_name(p->steps[step].kind) : "no",
                 step >= 0 ? si_model_node_name(m, p->steps[step].node) : "?");
    }
    return SI_ERR_GPU;
}
