/* Homes in the host pool (pg_home_layout): where each buffer the plan moves
 * between host and GPU lives in host memory, laid out from the plan alone. */
#include <stdlib.h>
#include "pager.h"

/* The host pool's layout: a home for every buffer the plan moves between host
 * and GPU, into o; returns the pool's size (UINT64_MAX: out of memory). Pure:
 * it depends on the problem and the plan only. Weights, constants,
 * inputs and what is read after the run (outputs, tensors handed to later
 * stages) keep theirs (an output's bands side by side); an activation spilled and reloaded within the run
 * needs its home only from its first spill to its last reload, so those homes
 * share space, first fit in time. That keeps the pool near the most that is
 * spilled at once, not all that is ever spilled (3.4 GiB for effdet-d7 at
 * 256 MB), and the pool costs VRAM: the driver's page tables for it
 * (runtime/budget.c, driver_reserve). */
/* A home's bytes in the pool: 16-byte aligned */
static uint64_t home_size(uint64_t bytes) { return (bytes + 15) / 16 * 16; }

uint64_t pg_home_layout(const pg_problem *prob, const pg_plan *pl, uint64_t *o)
{
    return pg_home_layout_of(prob, pl, NULL, o);
}

/* pg_home_layout of the buffers where only[b] is set (NULL: all); the others
 * get no home. */
uint64_t pg_home_layout_of(const pg_problem *prob, const pg_plan *pl, const uint8_t *only, uint64_t *o)
{
    int nb = prob->n_buffers, na = pl->n_prologue + pl->n_actions;
    int *first = malloc(((size_t)nb + 1) * sizeof *first);
    int *last = malloc(((size_t)nb + 1) * sizeof *last);
    int *order = malloc(((size_t)nb + 1) * sizeof *order);
    uint64_t *group = malloc(((size_t)nb + 1) * sizeof *group); /* per band_first: where its bands start */
    if (!first || !last || !order || !group) {
        free(first);
        free(last);
        free(order);
        free(group);
        return UINT64_MAX;
    }
    for (int b = 0; b < nb; b++) {
        first[b] = -1;
        last[b] = -1;
        o[b] = UINT64_MAX;
        group[b] = UINT64_MAX;
    }
    for (int a = 0; a < na; a++) {
        const pg_action *ac = a < pl->n_prologue ? &pl->prologue[a] : &pl->actions[a - pl->n_prologue];
        if (ac->kind == PA_ALLOC || ac->kind == PA_FREE || ac->kind == PA_RUN)
            continue;
        if (first[ac->buf] < 0)
            first[ac->buf] = a;
        last[ac->buf] = a;
    }
    /* the kept homes first, in order of first use */
    uint64_t total = 0;
    int n_moving = 0;
    for (int a = 0; a < na; a++) {
        const pg_action *ac = a < pl->n_prologue ? &pl->prologue[a] : &pl->actions[a - pl->n_prologue];
        if (ac->kind == PA_ALLOC || ac->kind == PA_FREE || ac->kind == PA_RUN || first[ac->buf] != a ||
            (only && !only[ac->buf]))
            continue;
        const pg_buffer *pb = &prob->buffers[ac->buf];
        if (pb->kind == PG_ACT && !pb->is_output && ac->kind == PA_SPILL) {
            order[n_moving++] = ac->buf;
            continue;
        }
        if (pb->band_total) { /* the output's bands side by side, in its layout */
            uint64_t *g = &group[pb->band_first];
            if (*g == UINT64_MAX) {
                *g = total;
                total += home_size(pb->band_total);
            }
            o[ac->buf] = *g + pb->band_at;
            continue;
        }
        o[ac->buf] = total;
        total += home_size(pb->bytes);
    }
    /* then the spilled activations, in order of first spill: each at the lowest
     * offset clear of every home placed before it whose time overlaps */
    uint64_t base = total;
    for (int i = 0; i < n_moving; i++) {
        int b = order[i];
        uint64_t sz = home_size(prob->buffers[b].bytes), at = base;
        for (int again = 1; again;) {
            again = 0;
            for (int j = 0; j < i; j++) {
                int c = order[j];
                uint64_t cz = home_size(prob->buffers[c].bytes);
                if (last[c] < first[b] || o[c] + cz <= at || at + sz <= o[c])
                    continue;
                at = o[c] + cz;
                again = 1;
            }
        }
        o[b] = at;
        if (at + sz > total)
            total = at + sz;
    }
    free(first);
    free(last);
    free(order);
    free(group);
    return total;
}

uint64_t pg_home_floor(const pg_problem *prob)
{
    uint8_t *seen = calloc((size_t)prob->n_buffers + 1, 1);
    uint64_t total = 0;
    if (!seen)
        return 0; /* no floor: still a floor */
    for (int k = 0; k < prob->step_start[prob->n_steps]; k++) {
        int b = prob->step_bufs[k];
        const pg_buffer *pb = &prob->buffers[b];
        if (seen[b] || (pb->kind == PG_ACT && !pb->is_output))
            continue;
        seen[b] = 1;
        if (!pb->band_total) {
            total += home_size(pb->bytes);
        } else if (!seen[pb->band_first] || pb->band_first == b) { /* a group once, as laid out */
            seen[pb->band_first] = 1;
            total += home_size(pb->band_total);
        }
    }
    free(seen);
    return total;
}
