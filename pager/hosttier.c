/* The host side of a plan under a host-memory budget (pg_host_tiers): which
 * buffers keep a home in the host pool, which are read again from the model's
 * shards (weights) or their folded value (constants) each time the plan loads
 * them, and which spilled activations go to the spill file. Pure: it depends
 * on the problem, the plan and the budget only.
 *
 * The choice is static over the run, made from the whole action list: every
 * candidate's cost per byte of pool it frees is known (a weight's loads per
 * run, an activation's spills and reloads per run), so the cheapest leave the
 * pool first, and among equals the one first needed farthest into the run. */
#include <stdlib.h>
#include <string.h>
#include "../base/base.h"
#include "pager.h"

typedef struct {
    int buf;
    uint64_t cost;  /* 0 constants; 1 + transfers per run for the rest */
    int first;      /* the first run action that moves it (n_actions: none) */
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->cost != y->cost)
        return x->cost < y->cost ? -1 : 1;
    if (x->first != y->first)
        return x->first > y->first ? -1 : 1; /* farthest first use leaves first */
    return x->buf - y->buf;
}

static uint64_t up16(uint64_t n) { return (n + 15) / 16 * 16; }

typedef struct {
    const pg_problem *pb;
    const pg_plan *pl;
    const cand *c;
    int n_cand;
    uint8_t *mask;     /* scratch: pool tier */
    uint64_t *o;       /* scratch offsets */
    uint64_t *wmax, *smax; /* per prefix k: the largest weight / spill demoted in c[0..k) */
} search;

/* Pool homes with the first k candidates demoted. */
static uint64_t homes_with(search *S, const uint8_t *moved, int k)
{
    memcpy(S->mask, moved, (size_t)S->pb->n_buffers);
    for (int i = 0; i < k; i++)
        S->mask[S->c[i].buf] = 0;
    return pg_home_layout_of(S->pb, S->pl, S->mask, S->o);
}

static uint64_t staging_with(const search *S, int k) { return 2 * S->wmax[k] + S->smax[k]; }

/* How often the run moves each buffer, and the first action that does. */
typedef struct {
    int first;                      /* n_actions: none in the run */
    uint64_t io, loads, spills, reloads;
} usage;

/* moved[b]: any action (the prologue's too) moves b between host and GPU. */
static void count_usage(const pg_problem *pb, const pg_plan *pl, uint8_t *moved, usage *u)
{
    int na = pl->n_prologue + pl->n_actions;
    for (int b = 0; b < pb->n_buffers; b++)
        u[b] = (usage){.first = pl->n_actions};
    for (int a = 0; a < na; a++) {
        int run = a >= pl->n_prologue;
        const pg_action *ac = run ? &pl->actions[a - pl->n_prologue] : &pl->prologue[a];
        if (ac->kind == PA_ALLOC || ac->kind == PA_FREE || ac->kind == PA_RUN)
            continue;
        usage *x = &u[ac->buf];
        moved[ac->buf] = 1;
        if (!run)
            continue;
        if (x->first == pl->n_actions)
            x->first = a - pl->n_prologue;
        x->io++;
        x->loads += ac->kind == PA_UPLOAD;
        x->spills += ac->kind == PA_SPILL;
        x->reloads += ac->kind == PA_RELOAD;
    }
}

si_result pg_host_tiers(const pg_problem *pb, const pg_plan *pl, uint64_t budget, uint64_t *home_off,
                        uint64_t *file_off, uint8_t *tier, pg_host_plan *hp, si_error *err)
{
    int nb = pb->n_buffers;
    memset(hp, 0, sizeof *hp);
    hp->budget = budget;
    uint8_t *moved = calloc((size_t)nb + 1, 1);
    usage *u = malloc(((size_t)nb + 1) * sizeof *u);
    cand *c = malloc(((size_t)nb + 1) * sizeof *c);
    search S = {pb, pl, c, 0, calloc((size_t)nb + 1, 1), malloc(((size_t)nb + 1) * sizeof *S.o),
                calloc((size_t)nb + 2, sizeof *S.wmax), calloc((size_t)nb + 2, sizeof *S.smax)};
    si_result st = SI_OK;
    if (!moved || !u || !c || !S.mask || !S.o || !S.wmax || !S.smax) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning the host pool");
        goto done;
    }
    for (int b = 0; b < nb; b++) {
        home_off[b] = file_off[b] = UINT64_MAX;
        tier[b] = PG_TIER_NONE;
    }
    count_usage(pb, pl, moved, u);
    uint64_t all = pg_home_layout_of(pb, pl, moved, home_off);
    if (all == UINT64_MAX) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning the host pool");
        goto done;
    }
    for (int b = 0; b < nb; b++)
        if (moved[b])
            tier[b] = PG_TIER_POOL;
    hp->homes_bytes = hp->pool_bytes = hp->min_budget = all;
    if (!budget || all <= budget)
        goto done;
    /* everything may leave the pool: constants and inputs are uploaded from
     * where the host holds them anyway (cost 0), weights read again from the
     * shards, activations (outputs too: read back after the run) written to the
     * spill file */
    for (int b = 0; b < nb; b++) {
        const pg_buffer *x = &pb->buffers[b];
        int free_copy = x->kind == PG_CONST || x->kind == PG_INPUT;
        /* an output leaves last: the caller is handed it from its home, so
         * in the file it would still be read back into host memory whole */
        uint64_t cost = free_copy ? 0 : x->is_output ? UINT64_MAX : 1 + u[b].io;
        if (moved[b])
            c[S.n_cand++] = (cand){b, cost, u[b].first};
    }
    qsort(c, (size_t)S.n_cand, sizeof *c, cand_cmp);
    for (int k = 0; k < S.n_cand; k++) {
        const pg_buffer *x = &pb->buffers[c[k].buf];
        uint64_t w = x->kind == PG_WEIGHT ? up16(x->src_bytes > pg_home_bytes(x) ? x->src_bytes : pg_home_bytes(x)) : 0;
        uint64_t s = x->kind == PG_ACT ? up16(x->bytes < PG_SPILL_CHUNK ? x->bytes : PG_SPILL_CHUNK) : 0;
        S.wmax[k + 1] = w > S.wmax[k] ? w : S.wmax[k];
        S.smax[k + 1] = s > S.smax[k] ? s : S.smax[k];
    }
    /* every candidate out: the least this planner needs; the staging slots are
     * then the largest, so the search below holds to them (acceptance stays
     * monotone in the budget) and only gains when fewer are needed */
    uint64_t smax = staging_with(&S, S.n_cand), least = homes_with(&S, moved, S.n_cand);
    if (least == UINT64_MAX) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning the host pool");
        goto done;
    }
    hp->min_budget = least + smax;
    if (budget < hp->min_budget) {
        char b1[BASE_SIZE_CHARS], b2[BASE_SIZE_CHARS];
        st = base_fail(err, SI_ERR_BUDGET,
                       "a host-memory budget of %s is too small for this plan: the staging of what "
                       "is read again from the shards (the largest weight, twice: one is read ahead) "
                       "and of the spill file's parts, with what must keep a home, needs more; the "
                       "smallest host budget that works is %s",
                       base_size(budget, b1), base_size(hp->min_budget, b2));
        goto done;
    }
    int lo = 0, hi = S.n_cand; /* homes_with(hi) + smax <= budget; homes_with(lo) + smax > budget or lo = 0 */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        uint64_t h = homes_with(&S, moved, mid);
        if (h == UINT64_MAX) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning the host pool");
            goto done;
        }
        if (h + smax <= budget)
            hi = mid;
        else
            lo = mid;
    }
    hp->homes_bytes = homes_with(&S, moved, hi);
    memcpy(home_off, S.o, (size_t)nb * sizeof *home_off);
    memset(S.mask, 0, (size_t)nb);
    for (int i = 0; i < hi; i++) {
        int b = c[i].buf;
        const pg_buffer *x = &pb->buffers[b];
        tier[b] = x->kind == PG_ACT ? PG_TIER_FILE : PG_TIER_SOURCE;
        S.mask[b] = x->kind == PG_ACT;
        if (x->kind == PG_WEIGHT)
            hp->shard_bytes_read += u[b].loads * (x->src_bytes ? x->src_bytes : pg_home_bytes(x));
        if (x->kind == PG_ACT) {
            hp->file_bytes_written += u[b].spills * x->bytes;
            hp->file_bytes_read += u[b].reloads * x->bytes;
        }
    }
    hp->weight_slot_bytes = S.wmax[hi];
    hp->spill_slot_bytes = S.smax[hi];
    hp->pool_bytes = hp->homes_bytes + staging_with(&S, hi);
    if ((hp->file_bytes = pg_home_layout_of(pb, pl, S.mask, file_off)) == UINT64_MAX)
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning the host pool");
done:
    free(moved);
    free(u);
    free(c);
    free(S.mask);
    free(S.o);
    free(S.wmax);
    free(S.smax);
    return st;
}
