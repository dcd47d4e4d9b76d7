/* The plan, in two phases, and its checker.
 * 1. Residency (residency.c): walk the steps with a byte capacity, evicting
 *    what is needed farthest ahead, weighted by what the eviction costs; each
 *    stay of a buffer on the GPU becomes an interval of steps.
 * 2. Placement (place.c): intervals get offsets; the arena is the highest end.
 *    If it exceeds the budget (fragmentation), phase 1 runs again with less
 *    capacity (search, here), and last with offsets chosen online.
 * Then the intervals become actions (emit).
 * The plan is steady-state: weights still resident at the end of a run stay for
 * the next, so an unlimited budget uploads every weight once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../base/base.h"
#include "pager_internal.h"


uint64_t pg_size(const pg_plan *p, uint64_t bytes)
{
    uint64_t b = bytes ? bytes : 4;
    return (b + p->align - 1) / p->align * p->align;
}

/* Step s's working set in p's arena, each buffer once (in: all 0, scratch,
 * left all 0). */
static uint64_t step_ws(const pg_problem *pb, const pg_plan *p, int s, uint8_t *in)
{
    uint64_t ws = 0;
    for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
        int b = pb->step_bufs[k];
        if (!in[b])
            ws += pg_size(p, pb->buffers[b].bytes);
        in[b] = 1;
    }
    for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++)
        in[pb->step_bufs[k]] = 0;
    return ws;
}

uint64_t pg_lower_bound(const pg_problem *pb, uint32_t align)
{
    uint8_t *in = calloc((size_t)pb->n_buffers + 1, 1);
    pg_plan p = {.align = align};
    uint64_t most = 0;
    for (int s = 0; in && s < pb->n_steps; s++) {
        uint64_t ws = step_ws(pb, &p, s, in);
        most = ws > most ? ws : most;
    }
    free(in);
    return most;
}


typedef struct {
    pg_action *a;
    int n, cap;
} alist;

static int push(alist *l, pa_kind k, int buf, int step, uint64_t off)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 256;
        pg_action *na = realloc(l->a, (size_t)cap * sizeof *na);
        if (!na)
            return -1;
        l->a = na;
        l->cap = cap;
    }
    l->a[l->n++] = (pg_action){k, buf, step, off};
    return 0;
}

/* Interval indices bucketed by a time in [-1, n] (CSR). */
typedef struct {
    int *start, *items;
} buckets;

static int key_start(const interval *it, int w) { return w == 0 ? it->start : it->start2 >= 0 ? it->start2 : -2; }
static int key_end(const interval *it, int w) { return w == 0 ? it->end : -2; }

static int make_buckets(const ivec *iv, int n, int (*key)(const interval *, int), buckets *bk)
{
    int nt = n + 3;
    bk->start = calloc((size_t)nt + 1, sizeof *bk->start);
    bk->items = malloc(((size_t)iv->n * 2 + 1) * sizeof *bk->items);
    int *fill = calloc((size_t)nt + 1, sizeof *fill);
    if (!bk->start || !bk->items || !fill) {
        free(fill);
        return -1;
    }
    for (int k = 0; k < iv->n; k++)
        for (int w = 0; w < 2; w++) {
            int t = key(&iv->v[k], w);
            if (t >= -1 && t <= n)
                bk->start[t + 2]++;
        }
    for (int t = 0; t < nt; t++)
        bk->start[t + 1] += bk->start[t];
    for (int k = 0; k < iv->n; k++)
        for (int w = 0; w < 2; w++) {
            int t = key(&iv->v[k], w);
            if (t >= -1 && t <= n)
                bk->items[bk->start[t + 1] + fill[t + 1]++] = k;
        }
    free(fill);
    return 0;
}

#define FOR_BUCKET(bk, t, k) \
    for (int _i = (bk).start[(t) + 1], k; _i < (bk).start[(t) + 2] && ((k) = (bk).items[_i], 1); _i++)

/* Intervals → actions, in time order. */
static int emit(const pg_problem *pb, const ivec *iv, pg_plan *p)
{
    int n = pb->n_steps;
    alist pro = {0}, act = {0};
    buckets bs = {0}, be = {0};
    int bad = make_buckets(iv, n, key_start, &bs) || make_buckets(iv, n, key_end, &be);
    FOR_BUCKET(bs, -1, k) {
        const interval *it = &iv->v[k];
        bad |= push(&pro, PA_ALLOC, it->buf, -1, it->offset);
        bad |= push(&pro, PA_UPLOAD, it->buf, -1, it->offset);
        p->resident_bytes += it->size;
    }
    /* time t = 0..n: evictions, then loads, then step t, then what t was last to use */
    for (int t = 0; t <= n && !bad; t++) {
        FOR_BUCKET(be, t - 1, k) {
                const interval *it = &iv->v[k];
                if (it->how_end != E_DROP && it->how_end != E_SPILL)
                    continue;
                if (it->how_end == E_SPILL) {
                    bad |= push(&act, PA_SPILL, it->buf, t, it->offset);
                    p->bytes_spilled += pb->buffers[it->buf].bytes;
                }
                bad |= push(&act, PA_FREE, it->buf, t, it->offset);
            }
        if (t == n)
            FOR_BUCKET(be, n, k) {
                const interval *it = &iv->v[k];
                if (it->how_end != E_DOWNLOAD)
                    continue;
                bad |= push(&act, PA_DOWNLOAD, it->buf, n, it->offset);
                bad |= push(&act, PA_FREE, it->buf, n, it->offset);
                p->bytes_downloaded += pb->buffers[it->buf].bytes;
            }
        int loads = 0;
        FOR_BUCKET(bs, t, k) {
            const interval *it = &iv->v[k];
            int load = it->start == t ? it->load : L_UPLOAD;
            bad |= push(&act, PA_ALLOC, it->buf, t, it->offset);
            if (load == L_UPLOAD) {
                bad |= push(&act, PA_UPLOAD, it->buf, t, it->offset);
                p->bytes_uploaded += pg_home_bytes(&pb->buffers[it->buf]); /* what crosses */
                loads++;
            } else if (load == L_RELOAD) {
                bad |= push(&act, PA_RELOAD, it->buf, t, it->offset);
                p->bytes_reloaded += pb->buffers[it->buf].bytes;
                loads++;
            }
        }
        if (t == n)
            break;
        if (loads || t == 0)
            p->segments++;
        bad |= push(&act, PA_RUN, -1, t, 0);
        FOR_BUCKET(be, t, k) {
            const interval *it = &iv->v[k];
            if (it->how_end == E_FREE)
                bad |= push(&act, PA_FREE, it->buf, t, it->offset);
        }
    }
    free(bs.start);
    free(bs.items);
    free(be.start);
    free(be.items);
    if (bad) {
        free(pro.a);
        free(act.a);
        return -1;
    }
    p->prologue = pro.a;
    p->n_prologue = pro.n;
    p->actions = act.a;
    p->n_actions = act.n;
    return 0;
}

/* The stays that overflowed the budget in a round (start order): their
 * times, sizes and overflows, as the search compares rounds. */
typedef struct {
    int start, end;
    uint64_t size, over;
} ovf_stay;
typedef struct {
    ovf_stay *v;
    int n, cap;
} ovf_list;

/* The planner's state besides the simulation's. */
typedef struct {
    const pg_problem *pb;
    uint64_t budget;
    uint32_t align;
    pg_plan *p;
    uses u;
    sim S;
    uint8_t *start_set;
    uint64_t *wsv;     /* per step: its working set */
    uint64_t *ovf;     /* scratch: a tree over the steps (leaves from ovf_leaves): the
                        * largest overflow of a stay that spans a step */
    int ovf_leaves;
    int debug;         /* pg_options.debug */
    ivec last;         /* the stays last placed, with their offsets */
    uint64_t last_arena;
    int have_last;
    pg_placer *placer; /* placement's memory, kept from round to round */
    int no_shortcuts;  /* pg_options.no_shortcuts */
    int no_repeats;    /* pg_options.no_repeats */
    uint64_t *caps;    /* pg_options.caps */
    uint64_t boost;    /* lower_where_overflowed lowers by the overflow times this */
    uint64_t best_over; /* the least overflow of a round since the boost was reset */
    ovf_list ovf_now, ovf_last; /* the overflowing stays of this round and the last */
    uint64_t *sig;      /* scratch, per step: a digest of the stays that start there */
} planner;

static void planner_free(planner *P)
{
    free(P->u.start);
    free(P->u.steps);
    free(P->S.cur);
    free(P->S.res);
    free(P->S.res_pos);
    free(P->S.pro);
    free(P->S.written);
    free(P->S.spilled);
    free(P->S.score);
    free(P->S.heap);
    free(P->S.post);
    free(P->S.post0);
    free(P->S.resv);
    free(P->S.in_step);
    free(P->S.capv);
    free(P->S.occ);
    free(P->S.start_off);
    free(P->wsv);
    free(P->ovf);
    free(P->ovf_now.v);
    free(P->ovf_last.v);
    free(P->sig);
    free(P->S.iv.v);
    free(P->last.v);
    pg_placer_free(P->placer);
    free(P->start_set);
}

static int pow2_at_least(int n)
{
    int p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* Allocates the state and measures every step's working set (the lower bound
 * is the largest); -1 out of memory. */
static int planner_init(planner *P, const pg_problem *pb, uint64_t budget, uint32_t align,
                        const pg_options *opt)
{
    int nb = pb->n_buffers;
    sim *S = &P->S;
    P->pb = pb;
    P->budget = budget;
    P->align = align;
    P->debug = opt && opt->debug;
    P->no_shortcuts = opt && opt->no_shortcuts;
    P->no_repeats = opt && opt->no_repeats;
    P->caps = opt ? opt->caps : NULL;
    if (!(P->p = calloc(1, sizeof *P->p)) || !(P->start_set = calloc((size_t)nb + 1, 1)) ||
        pg_make_uses(pb, &P->u) || !(S->cur = malloc(((size_t)nb + 1) * sizeof *S->cur)) ||
        !(S->res = malloc(((size_t)nb + 1) * sizeof *S->res)) ||
        !(S->res_pos = malloc(((size_t)nb + 1) * sizeof *S->res_pos)) ||
        !(S->pro = malloc(((size_t)nb + 1) * sizeof *S->pro)) ||
        !(S->written = calloc((size_t)nb + 1, 1)) || !(S->spilled = calloc((size_t)nb + 1, 1)) ||
        !(S->in_step = calloc((size_t)nb + 1, 1)) ||
        !(S->score = malloc(((size_t)nb + 1) * sizeof *S->score)) ||
        !(S->heap = malloc(((size_t)nb + 1) * sizeof *S->heap)) ||
        !(S->post = calloc((size_t)pb->n_steps + 1, sizeof *S->post)))
        return -1;
    pg_plan *p = P->p;
    p->budget = budget;
    p->align = align;
    p->lower_bound_step = -1;
    if (!(P->wsv = calloc((size_t)pb->n_steps + 1, sizeof *P->wsv)) ||
        !(P->ovf = calloc(2 * (size_t)(P->ovf_leaves = pow2_at_least(pb->n_steps)), sizeof *P->ovf)) ||
        !(P->sig = calloc((size_t)pb->n_steps + 1, sizeof *P->sig)) ||
        !(S->capv = calloc((size_t)pb->n_steps + 1, sizeof *S->capv)))
        return -1;
    for (int s = 0; s < pb->n_steps; s++) {
        uint64_t ws = step_ws(pb, p, s, S->in_step);
        P->wsv[s] = ws;
        if (ws > p->lower_bound) {
            p->lower_bound = ws;
            p->lower_bound_step = s;
        }
    }
    S->pb = pb;
    S->u = &P->u;
    S->p = p;
    /* Off by default: measured on the H200 (bench/results/stream-h200.md),
     * loading a step early gained little. pg_options.prefetch turns it on. */
    S->prefetch = opt && opt->prefetch > 0 ? opt->prefetch : 0;
    if (S->prefetch > 1 && (!(S->post0 = calloc((size_t)pb->n_steps + 1, sizeof *S->post0)) ||
                            !(S->resv = calloc((size_t)pb->n_steps + 1, sizeof *S->resv))))
        return -1;
    return 0;
}

/* A first run from empty, then the steady state: the run that begins with
 * what the first ended with (steady: the weights and constants still there;
 * else nothing). Returns as pg_simulate. */
static int steady_run(planner *P, int steady)
{
    sim *S = &P->S;
    size_t np = ((size_t)P->pb->n_steps + 1) * sizeof *S->post;
    if (S->post0 && S->prefetch > 1 && !S->online) {
        /* what each step uses without prefetch, for loads made further ahead */
        int depth = S->prefetch;
        S->prefetch = 0;
        int r0 = steady_run(P, steady);
        S->prefetch = depth;
        if (r0 != 0)
            return r0;
        memcpy(S->post0, S->post, np);
    }
    memset(S->post, 0, np);
    int r = pg_simulate(S, NULL);
    if (r != 0)
        return r;
    for (int b = 0; b < P->pb->n_buffers; b++) {
        P->start_set[b] = steady && S->cur[b] >= 0 && pg_persists(&P->pb->buffers[b]);
        if (S->online && P->start_set[b])
            S->start_off[b] = pg_off_of(S, b);
    }
    r = pg_simulate(S, P->start_set);
    return r == 0 && pg_close_run(S, P->start_set) ? -1 : r;
}

/* Placement of the stays S->iv into *arena. Placement reads nothing but the
 * stays (in their order), so where a round of the search ends with the same
 * stays as the last placed (its capacity lowered where the simulation did not
 * come near it: frcnn-irv2 at 256M on the H200, 9 rounds of 13), the last
 * offsets are taken again, not found again. -1 out of memory. */
static int place(planner *P, uint64_t *arena)
{
    ivec *iv = &P->S.iv, *l = &P->last;
    int same = P->have_last && l->n == iv->n && !P->no_shortcuts;
    for (int k = 0; same && k < iv->n; k++) {
        const interval *a = &iv->v[k], *b = &l->v[k];
        same = a->buf == b->buf && a->start == b->start && a->end == b->end &&
               a->start2 == b->start2 && a->load == b->load && a->how_end == b->how_end &&
               a->size == b->size;
    }
    if (P->debug)
        fprintf(stderr, "place: %s stays\n", same ? "the same" : "new");
    if (same) {
        P->p->placements_reused++;
        for (int k = 0; k < iv->n; k++)
            iv->v[k].offset = l->v[k].offset;
        *arena = P->last_arena;
        return 0;
    }
    if (!P->placer && !(P->placer = pg_placer_new()))
        return -1;
    if (pg_place(P->placer, iv, arena, P->debug))
        return -1;
    if (l->cap < iv->n) {
        interval *v = realloc(l->v, ((size_t)iv->n + 1) * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = iv->n;
    }
    if (iv->n) /* an empty program has no stays (and v may be NULL) */
        memcpy(l->v, iv->v, (size_t)iv->n * sizeof *iv->v);
    l->n = iv->n;
    P->last_arena = *arena;
    P->have_last = 1;
    return 0;
}

/* Whether every step's capacity holds its use after evictions in the last
 * simulation (then a simulation with these capacities makes the same stays). */
static int caps_hold(const planner *P)
{
    for (int t = 0; t < P->pb->n_steps; t++)
        if (P->S.capv[t] < P->S.post[t])
            return 0;
    return 1;
}

static int cmp_ovf(const void *x, const void *y)
{
    const ovf_stay *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end < b->end ? -1 : 1;
    if (a->size != b->size)
        return a->size < b->size ? -1 : 1;
    return a->over < b->over ? -1 : a->over > b->over;
}

/* This round's overflowing stays into P->ovf_now, the last round's kept in
 * P->ovf_last; then the period of a stall that moves: where this round's
 * overflowing stays are the last round's, each as big and over by as much, all
 * moved by the same D > 0 steps, D (else 0). frcnn-irv2 at 5,477,996 bytes: from
 * round 15 on, 12 stays of one Inception-ResNet block overflow, and once that
 * block's capacity is lowered the same 12 of the next block do (726 steps on),
 * one block a round, 105 rounds. -1 out of memory. */
static int overflow_period(planner *P)
{
    if (P->no_repeats)
        return 0;
    ovf_list t = P->ovf_last;
    P->ovf_last = P->ovf_now;
    P->ovf_now = t;
    ovf_list *now = &P->ovf_now, *last = &P->ovf_last;
    now->n = 0;
    int moving = 1;
    for (int k = 0; k < P->S.iv.n; k++) {
        const interval *it = &P->S.iv.v[k];
        if (it->offset + it->size <= P->budget)
            continue;
        if (now->n == now->cap) {
            int cap = now->cap ? now->cap * 2 : 64;
            ovf_stay *v = realloc(now->v, (size_t)cap * sizeof *v);
            if (!v)
                return -1;
            now->v = v;
            now->cap = cap;
        }
        now->v[now->n++] = (ovf_stay){it->start, it->end, it->size, it->offset + it->size - P->budget};
        moving &= it->start >= 0 && it->start2 < 0;
    }
    /* sorted whatever follows: the next round compares with it */
    qsort(now->v, (size_t)now->n, sizeof *now->v, cmp_ovf);
    if (!moving || !now->n || now->n != last->n)
        return 0;
    int d = now->v[0].start - last->v[0].start;
    for (int k = 0; d > 0 && k < now->n; k++) {
        const ovf_stay *a = &now->v[k], *b = &last->v[k];
        if (a->start - b->start != d || a->end - b->end != d || a->size != b->size || a->over != b->over)
            d = 0;
    }
    return d > 0 ? d : 0;
}

/* A stall that moves by `period` steps (overflow_period) would go on one
 * period a round for as long as the program repeats itself: the stays that
 * start at the steps of this round's overflow, each period on, are the same
 * (sizes, lengths, how they load and end; P->sig digests them per step). There
 * the capacity is lowered now as it is where it overflowed (tag: the leaves of
 * P->ovf), so the rounds that would find one repeat each are not run. Returns
 * how many repeats were lowered. */
static int lower_repeats(planner *P, int period, uint64_t *tag)
{
    const pg_problem *pb = P->pb;
    const ovf_list *now = &P->ovf_now;
    int lo = now->v[0].start, hi = 0, n = pb->n_steps;
    for (int k = 0; k < now->n; k++)
        hi = now->v[k].end > hi ? now->v[k].end : hi;
    if (hi >= n)
        return 0;
    memset(P->sig, 0, (size_t)n * sizeof *P->sig);
    for (int k = 0; k < P->S.iv.n; k++) {
        const interval *it = &P->S.iv.v[k];
        if (it->start < 0 || it->start >= n)
            continue;
        uint64_t h = it->size * 0x9e3779b97f4a7c15ull ^ (uint64_t)(it->end - it->start) * 0xbf58476d1ce4e5b9ull ^
                     (uint64_t)(it->load * 8 + it->how_end * 2 + (it->start2 >= 0)) * 0x94d049bb133111ebull;
        P->sig[it->start] += h ^ h >> 29; /* a sum: the stays' order within a step does not matter */
    }
    int reps = 0;
    for (int j = 1; (int64_t)hi + (int64_t)j * period < n; j++) {
        int off = j * period;
        if (memcmp(P->sig + lo, P->sig + lo + off, (size_t)(hi - lo + 1) * sizeof *P->sig))
            break;
        for (int t = lo; t <= hi; t++)
            if (tag[t] > tag[t + off])
                tag[t + off] = tag[t];
        reps++;
    }
    return reps;
}

/* Where placement overflowed the budget: lowers the capacity at the steps the
 * overflowing stays span by the largest overflow there (not below the step's
 * working set), and where the overflow moves by a period (> 0), at its repeats
 * too. Returns whether any step's capacity changed. */
static int lower_where_overflowed(planner *P, int period)
{
    const pg_problem *pb = P->pb;
    sim *S = &P->S;
    int changed = 0, L = P->ovf_leaves;
    uint64_t *tag = P->ovf; /* node q covers the leaves below it; a step's overflow:
                             * the largest tag on its path to the root */
    memset(tag, 0, 2 * (size_t)L * sizeof *tag);
    for (int k = 0; k < S->iv.n; k++) {
        const interval *it = &S->iv.v[k];
        if (it->offset + it->size <= P->budget)
            continue;
        uint64_t o = it->offset + it->size - P->budget;
        for (int part = 0; part < 2; part++) {
            int a = part ? it->start2 : it->start, z = part ? pb->n_steps - 1 : it->end;
            if (part && it->start2 < 0)
                continue;
            if (a < 0)
                a = 0;
            if (z >= pb->n_steps)
                z = pb->n_steps - 1;
            for (int l = a + L, r = z + L + 1; l < r; l >>= 1, r >>= 1) {
                if (l & 1) {
                    tag[l] = o > tag[l] ? o : tag[l];
                    l++;
                }
                if (r & 1) {
                    r--;
                    tag[r] = o > tag[r] ? o : tag[r];
                }
            }
        }
    }
    for (int q = 1; q < L; q++)
        for (int c = 2 * q; c <= 2 * q + 1; c++)
            tag[c] = tag[q] > tag[c] ? tag[q] : tag[c];
    if (period > 0) {
        int reps = lower_repeats(P, period, tag + L);
        if (P->debug && reps)
            fprintf(stderr, "search: the overflow moved %d steps: lowered at its %d repeats too\n", period,
                    reps);
    }
    for (int t = 0; t < pb->n_steps; t++) {
        if (!tag[L + t])
            continue;
        uint64_t o = tag[L + t] < P->align ? P->align : tag[L + t];
        o = o > UINT64_MAX / P->boost ? UINT64_MAX : o * P->boost;
        /* from the step's use where this round did not improve on the best:
         * lowered from its capacity, the slack above the use goes first, and
         * the same overflow came back round after round (frcnn-irv2 at
         * 5,934,495 bytes with the driver's share: 1,225 bytes over for 8
         * rounds) */
        uint64_t base = P->boost > 1 && S->post[t] < S->capv[t] ? S->post[t] : S->capv[t];
        uint64_t nc = base > P->wsv[t] + o ? base - o : P->wsv[t];
        if (nc < S->capv[t]) {
            S->capv[t] = nc;
            changed = 1;
        }
    }
    return changed;
}

/* Offline placement cannot fit: place online instead, run 1 from empty, run 2
 * from where run 1 left the weights. Returns as pg_simulate; on 0 the plan's
 * arena is set. */
static int plan_online(planner *P)
{
    sim *S = &P->S;
    int nb = P->pb->n_buffers;
    S->online = 1;
    S->arena_cap = P->budget;
    S->prefetch = 0;
    free(S->capv);
    S->capv = NULL;
    if (!(S->occ = malloc(((size_t)nb + 1) * sizeof *S->occ)) ||
        !(S->start_off = calloc((size_t)nb + 1, sizeof *S->start_off)))
        return -1;
    int ro = steady_run(P, 1);
    if (ro == 0) {
        uint64_t top = 0;
        for (int k = 0; k < S->iv.n; k++)
            if (S->iv.v[k].offset + S->iv.v[k].size > top)
                top = S->iv.v[k].offset + S->iv.v[k].size;
        P->p->arena_bytes = top;
        P->p->capacity = P->budget;
        P->p->evictions = S->evictions;
    }
    return ro;
}

/* The local search lowers the capacity where stays overflowed by their
 * overflow; near the smallest budget that often leaves the arena a few KiB
 * over for tens of rounds (frcnn-irv2 at f16 and 2.3M: 928 bytes over from
 * round 52 to 145, each a simulation and placement of 353k steps). A round
 * whose overflow is not below the least so far doubles what the next lowers
 * by; one that improves sets it back to the overflow itself. */
static void reset_boost(planner *P)
{
    P->boost = 1;
    P->best_over = UINT64_MAX;
    P->ovf_now.n = P->ovf_last.n = 0;
}

static void update_boost(planner *P, uint64_t over)
{
    if (over < P->best_over) {
        P->best_over = over;
        P->boost = 1;
    } else if (P->boost < (1u << 20)) {
        P->boost *= 2;
    }
}

static void set_capacity(planner *P, uint64_t cap)
{
    for (int t = 0; t < P->pb->n_steps; t++)
        P->S.capv[t] = cap;
}

/* The residency and placement of the plan within the budget: first with
 * weights kept between runs (steady state); if that cannot be packed, with
 * nothing kept: long-lived residents fragment a tight arena. Where placement
 * overflows, the capacity is lowered at the steps the overflowing stays span,
 * then everywhere; last, placement online. */
static si_result search(planner *P, si_error *err)
{
    pg_plan *p = P->p;
    sim *S = &P->S;
    uint64_t budget = P->budget;
    /* Capacity for phase 1: the budget, lowered while placement overflows it. */
    uint64_t cap = budget ? budget : UINT64_MAX / 4;
    set_capacity(P, cap);
    int warm = 0;
    for (int t = 0; P->caps && budget && t < P->pb->n_steps; t++)
        if (P->caps[t] && P->caps[t] < cap) {
            S->capv[t] = P->caps[t] > P->wsv[t] ? P->caps[t] : P->wsv[t];
            warm = 1;
        }
    if (P->debug && warm)
        fprintf(stderr, "search: from the capacities the last plan ended with\n");
    int steady = 1, local = 1;
    reset_boost(P);
    for (int attempt = 0;; attempt++) {
        S->cap = cap;
        p->rounds++;
        double t0 = P->debug ? base_now_ms() : 0;
        int r = steady_run(P, steady);
        double t1 = P->debug ? base_now_ms() : 0;
        uint64_t arena = 0;
        if (r < 0 || (r == 0 && place(P, &arena)))
            return base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
        if (P->debug)
            fprintf(stderr, "search: attempt %d steady %d local %d cap %llu r %d arena %llu budget %llu "
                    "(simulated in %.0f ms, placed in %.0f ms)\n",
                    attempt, steady, local, (unsigned long long)cap, r, (unsigned long long)arena,
                    (unsigned long long)budget, t1 - t0, base_now_ms() - t1);
        if (r == 0 && (!budget || arena <= budget)) {
            if (P->caps)
                memcpy(P->caps, S->capv, (size_t)P->pb->n_steps * sizeof *P->caps);
            p->arena_bytes = arena;
            p->capacity = budget ? cap : 0;
            p->evictions = S->evictions;
            return SI_OK;
        }
        int period = 0;
        if (r == 0 && local) {
            update_boost(P, arena - budget);
            if ((period = overflow_period(P)) < 0)
                return base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
        }
        if (r == 0 && local && attempt < 200 && lower_where_overflowed(P, period)) {
            /* Rounds that would only repeat this one are counted, not run:
             * where the lowered capacity still holds every step's use after
             * its evictions, the simulation, hence the stays, the placement
             * and its overflow come out the same, and lower the capacity the
             * same way again (frcnn-irv2 near its smallest budget: 90 rounds
             * of one arena). The plan is the one the rounds would make. */
            while (!S->prefetch && !P->no_shortcuts && attempt + 1 < 200 && caps_hold(P) &&
                   (update_boost(P, arena - budget), lower_where_overflowed(P, 0))) {
                attempt++;
                p->rounds_skipped++;
            }
            continue;
        }
        local = 0;
        /* Over the budget: less capacity next time, down to the lower bound. */
        uint64_t over = r == 0 ? arena - budget : P->align;
        uint64_t step = over > cap / 32 ? over : cap / 32;
        int spent = cap <= p->lower_bound || attempt > 260;
        if (steady && r == 0 && spent) {
            steady = 0;
            local = 1;
            reset_boost(P);
            attempt = 0;
            cap = budget;
            set_capacity(P, cap);
            continue;
        }
        if (budget && !S->online && (r != 0 || spent)) {
            int ro = plan_online(P);
            if (ro < 0)
                return base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
            if (ro == 0)
                return SI_OK;
        }
        if (r != 0 || spent)
            /* what would work: plan at the lower bound and see how big the arena gets */
            return base_fail(err, SI_ERR_BUDGET,
                             "no plan fits in %llu bytes (largest step: %d, %llu bytes; arena "
                             "fragmentation needs more); try a budget of %llu bytes or more",
                             (unsigned long long)budget, p->lower_bound_step,
                             (unsigned long long)p->lower_bound,
                             (unsigned long long)(r == 0 ? arena
                                                         : p->lower_bound + p->lower_bound / 4));
        cap = cap > p->lower_bound + step ? cap - step : p->lower_bound;
        for (int t = 0; t < P->pb->n_steps; t++)
            S->capv[t] = S->capv[t] < cap ? S->capv[t] : cap;
    }
}

si_result pg_plan_build(const pg_problem *pb, uint64_t budget, uint32_t align, pg_plan **out,
                        si_error *err)
{
    return pg_plan_build_with(pb, budget, align, NULL, out, err);
}

si_result pg_plan_build_with(const pg_problem *pb, uint64_t budget, uint32_t align,
                             const pg_options *opt, pg_plan **out, si_error *err)
{
    if (align == 0 || (align & (align - 1)))
        return base_fail(err, SI_ERR_ARG, "pager: alignment must be a power of two");
    int debug = opt && opt->debug;
    planner P = {0};
    si_result st = SI_OK;
    if (planner_init(&P, pb, budget, align, opt))
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
    else if (budget && budget < P.p->lower_bound) {
        char b[BASE_SIZE_CHARS], need[BASE_SIZE_CHARS];
        st = base_fail(err, SI_ERR_BUDGET,
                       "no plan fits in %s: step %d alone needs its inputs, output and weights; "
                       "the smallest budget that could work is %s",
                       base_size(budget, b), P.p->lower_bound_step, base_size(P.p->lower_bound, need));
    }
    else
        st = search(&P, err);
    if (st == SI_OK && debug)
        for (int k = 0; k < P.S.iv.n; k++) {
            const interval *it = &P.S.iv.v[k];
            fprintf(stderr, "iv buf %d [%d,%d] start2 %d load %d end %d size %llu off %llu\n", it->buf,
                    it->start, it->end, it->start2, it->load, it->how_end,
                    (unsigned long long)it->size, (unsigned long long)it->offset);
        }
    if (st == SI_OK && emit(pb, &P.S.iv, P.p))
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
    if (st == SI_OK) {
        *out = P.p;
        P.p = NULL;
    }
    planner_free(&P);
    pg_plan_free(P.p);
    return st;
}

void pg_plan_free(pg_plan *p)
{
    if (!p)
        return;
    free(p->prologue);
    free(p->actions);
    free(p);
}

/* ---- the checker ---- */

int pg_plan_check(const pg_problem *pb, const pg_plan *p, char *msg, size_t n)
{
    int nb = pb->n_buffers, rc = -1;
    int8_t *alloc = calloc((size_t)nb + 1, 1), *filled = calloc((size_t)nb + 1, 1);
    int8_t *written = calloc((size_t)nb + 1, 1), *host_copy = calloc((size_t)nb + 1, 1);
    uint64_t *off = calloc((size_t)nb + 1, sizeof *off);
    pg_span *lv = malloc(((size_t)nb + 1) * sizeof *lv);
    int n_live = 0;
    if (!alloc || !filled || !written || !host_copy || !off || !lv) {
        snprintf(msg, n, "out of memory");
        goto done;
    }
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: the prologue and a first run; pass 1: a second run from where it left off */
        int na = pass == 0 ? p->n_prologue + p->n_actions : p->n_actions;
        for (int i = 0; i < na; i++) {
            const pg_action *a = pass == 0 && i < p->n_prologue ? &p->prologue[i]
                                 : &p->actions[pass == 0 ? i - p->n_prologue : i];
            int b = a->buf;
            uint64_t sz = b >= 0 ? pg_size(p, pb->buffers[b].bytes) : 0;
            switch (a->kind) {
            case PA_ALLOC:
                if (alloc[b]) {
                    snprintf(msg, n, "buffer %d allocated twice (action %d)", b, i);
                    goto done;
                }
                if (a->offset % p->align || a->offset + sz > p->arena_bytes) {
                    snprintf(msg, n, "buffer %d placed at %llu+%llu outside the %llu-byte arena", b,
                             (unsigned long long)a->offset, (unsigned long long)sz,
                             (unsigned long long)p->arena_bytes);
                    goto done;
                }
                /* lv: the live buffers sorted by offset; none overlap (each was
                 * checked here when allocated), so pg_span_after finds any overlap */
                int at = pg_span_after(lv, n_live, a->offset);
                if (at < n_live && lv[at].off < a->offset + sz) {
                    for (int o = 0; o < nb; o++) /* which one, for the message */
                        if (alloc[o] && off[o] < a->offset + sz &&
                            a->offset < off[o] + pg_size(p, pb->buffers[o].bytes)) {
                            snprintf(msg, n, "buffer %d at %llu overlaps live buffer %d at %llu (step %d)",
                                     b, (unsigned long long)a->offset, o, (unsigned long long)off[o],
                                     a->step);
                            break;
                        }
                    goto done;
                }
                memmove(lv + at + 1, lv + at, (size_t)(n_live - at) * sizeof *lv);
                lv[at] = (pg_span){a->offset, a->offset + sz};
                n_live++;
                alloc[b] = 1;
                filled[b] = 0;
                off[b] = a->offset;
                break;
            case PA_FREE:
                if (!alloc[b]) {
                    snprintf(msg, n, "buffer %d freed while not allocated", b);
                    goto done;
                }
                int held = pg_span_after(lv, n_live, off[b]); /* b's own */
                memmove(lv + held, lv + held + 1, (size_t)(n_live - held - 1) * sizeof *lv);
                n_live--;
                alloc[b] = 0;
                filled[b] = 0;
                break;
            case PA_UPLOAD:
            case PA_RELOAD:
                if (!alloc[b] || filled[b]) {
                    snprintf(msg, n, "buffer %d uploaded while %s (step %d)", b,
                             alloc[b] ? "already resident" : "not allocated", a->step);
                    goto done;
                }
                if (a->kind == PA_UPLOAD && pb->buffers[b].kind == PG_ACT) {
                    snprintf(msg, n, "activation %d uploaded, not reloaded", b);
                    goto done;
                }
                if (a->kind == PA_RELOAD && !host_copy[b]) {
                    snprintf(msg, n, "buffer %d reloaded with no spilled copy", b);
                    goto done;
                }
                filled[b] = 1;
                break;
            case PA_SPILL:
            case PA_DOWNLOAD:
                if (!alloc[b] || !filled[b]) {
                    snprintf(msg, n, "buffer %d spilled while not resident", b);
                    goto done;
                }
                host_copy[b] = 1;
                break;
            case PA_RUN: {
                int s = a->step, out = pb->step_bufs[pb->step_start[s + 1] - 1];
                for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
                    int u = pb->step_bufs[k];
                    if (!alloc[u] || (!filled[u] && !(u == out && !written[u]))) {
                        snprintf(msg, n, "step %d uses buffer %d that is %s", s, u,
                                 alloc[u] ? "not filled" : "not resident");
                        goto done;
                    }
                }
                filled[out] = 1;
                written[out] = 1;
                host_copy[out] = 0;
                break;
            }
            }
        }
        /* a new run: activations and inputs start over */
        for (int b = 0; b < nb; b++)
            if (pb->buffers[b].kind == PG_ACT || pb->buffers[b].kind == PG_INPUT) {
                if (alloc[b]) {
                    snprintf(msg, n, "buffer %d still allocated at the end of a run", b);
                    goto done;
                }
                written[b] = host_copy[b] = 0;
            }
    }
    rc = 0;
done:
    free(alloc);
    free(filled);
    free(written);
    free(host_copy);
    free(off);
    free(lv);
    return rc;
}
