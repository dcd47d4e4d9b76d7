/* Homes in the host pool (pg_home_layout): where each buffer the plan moves
 * between host and GPU lives in host memory, laid out from the plan alone. */
#include <stdlib.h>
#include <string.h>
#include "pager_internal.h"

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

/* Restores a min-heap of n buffers by key[] after its root changed. */
static void heap_down(int *h, int n, const int *key)
{
    for (int j = 0;;) {
        int l = 2 * j + 1, r = l + 1, m = j;
        if (l < n && key[h[l]] < key[h[m]])
            m = l;
        if (r < n && key[h[r]] < key[h[m]])
            m = r;
        if (m == j)
            return;
        int t = h[j];
        h[j] = h[m];
        h[m] = t;
        j = m;
    }
}

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
        total += home_size(pg_home_bytes(pb));
    }
    /* then the spilled activations, in order of first spill: each at the lowest
     * offset clear of every home placed before it whose time overlaps (whose
     * last use is at or after its first). Those homes are kept sorted by offset
     * (act) with a heap by last use to drop them once over: the first spills
     * come in order, so a home once over stays over, and those left never
     * overlap each other (each was placed clear of every one still there), so
     * the lowest clear offset is found walking up from the first that ends
     * above base. A home of 0 bytes holds nothing, so it blocks nothing and is
     * not kept (the loop this replaced let one push a later home up past it:
     * the only case where the offsets differ from that loop's; no byte is
     * shared either way). */
    uint64_t base = total;
    pg_span *act = malloc(((size_t)n_moving + 1) * sizeof *act);
    int *heap = malloc(((size_t)n_moving + 1) * sizeof *heap), n_act = 0, n_heap = 0;
    if (!act || !heap) {
        total = UINT64_MAX;
        n_moving = 0;
    }
    for (int i = 0; i < n_moving; i++) {
        int b = order[i];
        while (n_heap && last[heap[0]] < first[b]) { /* over before b begins */
            int c = heap[0];
            heap[0] = heap[--n_heap];
            heap_down(heap, n_heap, last);
            int k = pg_span_after(act, n_act, o[c]);
            memmove(act + k, act + k + 1, (size_t)(n_act - k - 1) * sizeof *act);
            n_act--;
        }
        uint64_t sz = home_size(pg_home_bytes(&prob->buffers[b])), at = base;
        int k = pg_span_after(act, n_act, at);
        for (; k < n_act && act[k].off < at + sz; k++)
            at = act[k].end;
        o[b] = at;
        if (at + sz > total)
            total = at + sz;
        if (!sz)
            continue;
        memmove(act + k + 1, act + k, (size_t)(n_act - k) * sizeof *act);
        act[k] = (pg_span){at, at + sz};
        n_act++;
        heap[n_heap] = b; /* up the heap by last use */
        for (int j = n_heap++; j > 0 && last[heap[(j - 1) / 2]] > last[heap[j]]; j = (j - 1) / 2) {
            int t = heap[j];
            heap[j] = heap[(j - 1) / 2];
            heap[(j - 1) / 2] = t;
        }
    }
    free(act);
    free(heap);
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
            total += home_size(pg_home_bytes(pb));
        } else if (!seen[pb->band_first] || pb->band_first == b) { /* a group once, as laid out */
            seen[pb->band_first] = 1;
            total += home_size(pb->band_total);
        }
    }
    free(seen);
    return total;
}

/* The most bytes of activations alive at one step: made at it or before and
 * read at it or after, outputs aside (their homes are kept), each counted by
 * the least of its home and its bytes (a place in the arena is at least its
 * bytes). They are on the GPU or in their homes then (nothing is made twice),
 * and those on the GPU fit the arena: so a plan whose arena is at most A has
 * a pool of at least pg_home_floor plus what of this is over A. */
uint64_t pg_live_peak(const pg_problem *prob)
{
    int n = prob->n_steps, nb = prob->n_buffers;
    int *first = malloc(((size_t)nb + 1) * sizeof *first), *last = malloc(((size_t)nb + 1) * sizeof *last);
    int64_t *delta = calloc((size_t)n + 2, sizeof *delta);
    int64_t live = 0, peak = 0;
    for (int b = 0; first && last && delta && b < nb; b++)
        first[b] = last[b] = -1;
    for (int s = 0; first && last && delta && s < n; s++)
        for (int k = prob->step_start[s]; k < prob->step_start[s + 1]; k++) {
            int b = prob->step_bufs[k];
            if (first[b] < 0)
                first[b] = s;
            last[b] = s;
        }
    for (int b = 0; first && last && delta && b < nb; b++) {
        const pg_buffer *pb = &prob->buffers[b];
        if (first[b] < 0 || pb->kind != PG_ACT || pb->is_output)
            continue;
        uint64_t h = home_size(pg_home_bytes(pb)), m = h < pb->bytes ? h : pb->bytes;
        delta[first[b]] += (int64_t)m;
        delta[last[b] + 1] -= (int64_t)m;
    }
    for (int s = 0; delta && s < n; s++) {
        live += delta[s];
        peak = live > peak ? live : peak;
    }
    free(first);
    free(last);
    free(delta);
    return (uint64_t)peak; /* out of memory: 0, still under the pool */
}
