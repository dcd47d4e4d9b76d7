/* The plan, in two phases.
 * 1. Residency: walk the steps with a byte capacity; before each step bring in
 *    what it touches, evicting what is needed farthest in the future (Belady's
 *    MIN, the whole sequence being known) weighted by what the eviction costs:
 *    a weight, constant or input is dropped and uploaded again, an activation
 *    is spilled to the host once and reloaded. Each stay of a buffer on the GPU
 *    becomes an interval of steps.
 * 2. Placement: intervals get offsets greedily by size, as TFLite's GPU delegate
 *    does; the arena is the highest end. If it exceeds the budget (fragmentation),
 *    phase 1 runs again with less capacity.
 * The plan is steady-state: weights still resident at the end of a run stay for
 * the next, so an unlimited budget uploads every weight once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../base/base.h"
#include "pager.h"

enum { L_PROLOGUE, L_FIRST, L_UPLOAD, L_RELOAD };
enum { E_KEEP, E_FREE, E_DROP, E_SPILL, E_DOWNLOAD };

typedef struct {
    int buf;
    int start, end;    /* steps, inclusive; -1 = before the run, n = its end */
    int start2;        /* >= 0: also [start2, n] (a resident buffer's last stay) */
    int load, how_end;
    uint64_t size, offset;
} interval;

typedef struct {
    interval *v;
    int n, cap;
} ivec;


uint64_t pg_size(const pg_plan *p, uint64_t bytes)
{
    uint64_t b = bytes ? bytes : 4;
    return (b + p->align - 1) / p->align * p->align;
}

static int ivec_push(ivec *iv, interval it)
{
    if (iv->n == iv->cap) {
        int cap = iv->cap ? iv->cap * 2 : 256;
        interval *nv = realloc(iv->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        iv->v = nv;
        iv->cap = cap;
    }
    iv->v[iv->n++] = it;
    return iv->n - 1;
}

/* Uses of every buffer in step order (CSR), for next-use queries. */
typedef struct {
    int *start, *steps;
} uses;

static int make_uses(const pg_problem *pb, uses *u)
{
    int nb = pb->n_buffers, ns = pb->n_steps;
    u->start = calloc((size_t)nb + 1, sizeof *u->start);
    u->steps = malloc(((size_t)pb->step_start[ns] + 1) * sizeof *u->steps);
    int *fill = calloc((size_t)nb + 1, sizeof *fill);
    if (!u->start || !u->steps || !fill) {
        free(fill);
        return -1;
    }
    for (int s = 0; s < ns; s++)
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++)
            u->start[pb->step_bufs[k] + 1]++;
    for (int b = 0; b < nb; b++)
        u->start[b + 1] += u->start[b];
    for (int s = 0; s < ns; s++)
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            u->steps[u->start[b] + fill[b]++] = s;
        }
    free(fill);
    return 0;
}

/* First use of b at or after step s, or -1. */
static int next_use(const uses *u, int b, int s)
{
    int lo = u->start[b], hi = u->start[b + 1];
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (u->steps[mid] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < u->start[b + 1] ? u->steps[lo] : -1;
}

static int persists(const pg_buffer *b) { return b->kind == PG_WEIGHT || b->kind == PG_CONST; }

typedef struct {
    const pg_problem *pb;
    const uses *u;
    const pg_plan *p;
    uint64_t cap;
    /* state */
    int *cur;          /* open interval per buffer, -1 if not resident */
    uint8_t *written;  /* activation has been produced */
    uint8_t *spilled;  /* its host copy is current */
    uint8_t *in_step;
    uint64_t used;
    ivec iv;
    uint64_t evictions;
    int bad_step;
    int prefetch;      /* load the next step's buffers a step early when they fit */
    uint64_t *capv;    /* per step: the byte limit there (lowered where placement overflowed) */
    /* Online mode: offsets are chosen as the buffers arrive, inside [0, arena_cap),
     * evicting by address when no gap is big enough (the fallback when offline
     * placement of the stays cannot fit: it sees fragmentation as it happens). */
    int online;
    uint64_t arena_cap;
    uint64_t *start_off;  /* where the resident set lives between runs */
    int *occ;             /* scratch: resident buffers sorted by offset */
} sim;

/* Distance to the next use, cyclic for what persists between runs; the final
 * download counts as a use of an output at step n. */
static double eviction_score(sim *S, int b, int s)
{
    const pg_buffer *bf = &S->pb->buffers[b];
    int n = S->pb->n_steps;
    int nu = next_use(S->u, b, s);
    double dist;
    if (nu >= 0)
        dist = nu - s;
    else if (persists(bf))
        dist = n - s + next_use(S->u, b, 0);
    else if (bf->is_output)
        dist = n - s;
    else
        dist = 1e18; /* dead: should already be gone */
    double cost = 1.0;
    if (bf->kind == PG_ACT && !S->spilled[b])
        cost = 2.0; /* spill now, reload later */
    return dist / cost;
}

static int close_interval(sim *S, int b, int end, int how)
{
    interval *it = &S->iv.v[S->cur[b]];
    it->end = end;
    it->how_end = how;
    S->used -= it->size;
    S->cur[b] = -1;
    return 0;
}

static int open_interval(sim *S, int b, int start, int load)
{
    interval it = {.buf = b, .start = start, .end = -2, .start2 = -1, .load = load,
                   .size = pg_size(S->p, S->pb->buffers[b].bytes)};
    if (S->online && S->start_off && start == -1)
        it.offset = S->start_off[b];
    int k = ivec_push(&S->iv, it);
    if (k < 0)
        return -1;
    S->cur[b] = k;
    S->used += it.size;
    return 0;
}

/* Evicts until `need` more bytes fit before step s. */
static int make_room(sim *S, int s, uint64_t need)
{
    uint64_t cap = S->capv ? S->capv[s] : S->cap;
    while (S->used + need > cap) {
        int victim = -1;
        double best = -1;
        for (int b = 0; b < S->pb->n_buffers; b++) {
            if (S->cur[b] < 0 || S->in_step[b])
                continue;
            double sc = eviction_score(S, b, s);
            if (sc > best || (sc == best && S->pb->buffers[b].bytes > S->pb->buffers[victim].bytes)) {
                best = sc;
                victim = b;
            }
        }
        if (victim < 0)
            return -1;
        const pg_buffer *bf = &S->pb->buffers[victim];
        int how = E_DROP;
        if (bf->kind == PG_ACT && !S->spilled[victim]) {
            how = E_SPILL;
            S->spilled[victim] = 1;
        }
        close_interval(S, victim, s - 1, how);
        S->evictions++;
    }
    return 0;
}

static uint64_t off_of(sim *S, int b) { return S->iv.v[S->cur[b]].offset; }

/* qsort has no context argument in C11; planning is single-threaded per plan,
 * but plans may be built from several threads, so the context is thread-local. */
static _Thread_local sim *occ_sim;
static int cmp_occ(const void *x, const void *y)
{
    uint64_t a = off_of(occ_sim, *(const int *)x), b = off_of(occ_sim, *(const int *)y);
    return a < b ? -1 : a > b;
}

/* Online mode: a place for b before step s, evicting the cheapest window of
 * unpinned buffers when no gap fits. Returns the offset or UINT64_MAX. */
static uint64_t online_place(sim *S, int b, int s)
{
    const pg_problem *pb = S->pb;
    uint64_t size = pg_size(S->p, pb->buffers[b].bytes), cap = S->arena_cap;
    int r = 0;
    for (int x = 0; x < pb->n_buffers; x++)
        if (S->cur[x] >= 0)
            S->occ[r++] = x;
    occ_sim = S;
    qsort(S->occ, (size_t)r, sizeof *S->occ, cmp_occ);
    /* best-fitting free gap */
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, at = 0;
    for (int i = 0; i <= r; i++) {
        uint64_t next = i < r ? off_of(S, S->occ[i]) : cap;
        if (next >= at && next - at >= size && next - at < best_gap) {
            best = at;
            best_gap = next - at;
        }
        if (i < r) {
            uint64_t e = off_of(S, S->occ[i]) + S->iv.v[S->cur[S->occ[i]]].size;
            if (e > at)
                at = e;
        }
    }
    if (best != UINT64_MAX)
        return best;
    /* windows starting at 0 or at the end of a resident buffer */
    double best_cost = 1e300;
    uint64_t win = UINT64_MAX;
    for (int i = -1; i < r; i++) {
        uint64_t w0 = i < 0 ? 0 : off_of(S, S->occ[i]) + S->iv.v[S->cur[S->occ[i]]].size;
        if (w0 + size > cap)
            continue;
        double cost = 0;
        int ok = 1;
        for (int j = 0; j < r && ok; j++) {
            int x = S->occ[j];
            uint64_t o = off_of(S, x), e = o + S->iv.v[S->cur[x]].size;
            if (e <= w0 || o >= w0 + size)
                continue;
            if (S->in_step[x])
                ok = 0;
            else /* bytes to move again, sooner needed = dearer */
                cost += (double)S->iv.v[S->cur[x]].size / (eviction_score(S, x, s) + 1.0);
        }
        if (ok && cost < best_cost) {
            best_cost = cost;
            win = w0;
        }
    }
    if (win == UINT64_MAX)
        return UINT64_MAX;
    for (int j = 0; j < r; j++) {
        int x = S->occ[j];
        uint64_t o = off_of(S, x), e = o + S->iv.v[S->cur[x]].size;
        if (e <= win || o >= win + size)
            continue;
        int how = E_DROP;
        if (pb->buffers[x].kind == PG_ACT && !S->spilled[x]) {
            how = E_SPILL;
            S->spilled[x] = 1;
        }
        close_interval(S, x, s - 1, how);
        S->evictions++;
    }
    return win;
}

/* One run from the resident set `start_set` (NULL: empty). */
static int simulate(sim *S, const uint8_t *start_set)
{
    const pg_problem *pb = S->pb;
    int n = pb->n_steps, nb = pb->n_buffers;
    S->iv.n = 0;
    S->used = 0;
    S->evictions = 0;
    S->bad_step = -1;
    memset(S->written, 0, (size_t)nb);
    memset(S->spilled, 0, (size_t)nb);
    for (int b = 0; b < nb; b++) {
        S->cur[b] = -1;
        if (start_set && start_set[b] && open_interval(S, b, -1, L_PROLOGUE))
            return -1;
    }
    for (int s = 0; s < n; s++) {
        uint64_t need = 0;
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            if (!S->in_step[b] && S->cur[b] < 0)
                need += pg_size(S->p, pb->buffers[b].bytes);
            S->in_step[b] = 1;
        }
        int room = S->online ? 0 : make_room(S, s, need);
        if (room == 0) {
            for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
                int b = pb->step_bufs[k];
                if (S->cur[b] >= 0)
                    continue;
                int load;
                if (pb->buffers[b].kind == PG_ACT)
                    load = S->written[b] ? L_RELOAD : L_FIRST;
                else
                    load = L_UPLOAD;
                uint64_t off = 0;
                if (S->online && (off = online_place(S, b, s)) == UINT64_MAX) {
                    room = -1;
                    break;
                }
                if (open_interval(S, b, s, load))
                    room = -2;
                else if (S->online)
                    S->iv.v[S->cur[b]].offset = off;
            }
        }
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++)
            S->in_step[pb->step_bufs[k]] = 0;
        if (room == -2)
            return -1;
        if (room < 0) {
            S->bad_step = s;
            return 1;
        }
        /* Prefetch: what the next step must load comes in now if it fits beside
         * this step, so its copy is queued before this step's dispatch. */
        if (s + 1 < n && S->prefetch && !S->online)
            for (int k = pb->step_start[s + 1]; k < pb->step_start[s + 2]; k++) {
                int b = pb->step_bufs[k];
                const pg_buffer *bf = &pb->buffers[b];
                uint64_t sz = pg_size(S->p, bf->bytes);
                if (S->cur[b] >= 0 || (bf->kind == PG_ACT && !S->written[b]) ||
                    S->used + sz > (S->capv ? S->capv[s] : S->cap))
                    continue;
                if (open_interval(S, b, s, bf->kind == PG_ACT ? L_RELOAD : L_UPLOAD))
                    return -1;
            }
        /* the step writes its output: a spilled copy is stale now */
        int out = pb->step_bufs[pb->step_start[s + 1] - 1];
        S->written[out] = 1;
        S->spilled[out] = 0;
        /* what no later step needs goes now (outputs wait for the download) */
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            const pg_buffer *bf = &pb->buffers[b];
            if (S->cur[b] < 0 || persists(bf) || bf->is_output || next_use(S->u, b, s + 1) >= 0)
                continue;
            close_interval(S, b, s, E_FREE);
        }
    }
    for (int b = 0; b < nb; b++)
        if (S->cur[b] >= 0 && pb->buffers[b].is_output && !persists(&pb->buffers[b]))
            close_interval(S, b, n, E_DOWNLOAD);
    return 0;
}

/* Brings the end of the run back to start_set: drops the rest, restores the
 * set's missing members, and joins each member's first and last stay. */
static int close_run(sim *S, const uint8_t *start_set)
{
    const pg_problem *pb = S->pb;
    int n = pb->n_steps;
    for (int b = 0; b < pb->n_buffers; b++) {
        if (S->cur[b] >= 0 &&
            (!start_set[b] || (S->online && off_of(S, b) != S->start_off[b])))
            close_interval(S, b, n - 1, E_DROP);
    }
    for (int b = 0; b < pb->n_buffers; b++) {
        if (!start_set[b])
            continue;
        if (S->cur[b] < 0 && open_interval(S, b, n, L_UPLOAD))
            return -1;
        if (S->online)
            S->iv.v[S->cur[b]].offset = S->start_off[b];
        interval *last = &S->iv.v[S->cur[b]];
        last->end = n;
        last->how_end = E_KEEP;
        S->cur[b] = -1;
        /* find the first stay (from the prologue) and fold the last into it */
        for (int k = 0; k < S->iv.n; k++) {
            interval *it = &S->iv.v[k];
            if (it->buf != b || it->start != -1 || it == last)
                continue;
            it->start2 = last->start;
            it->how_end = E_DROP; /* its first stay ended in an eviction */
            last->buf = -1;       /* merged away */
            break;
        }
    }
    int m = 0;
    for (int k = 0; k < S->iv.n; k++)
        if (S->iv.v[k].buf >= 0)
            S->iv.v[m++] = S->iv.v[k];
    S->iv.n = m;
    return 0;
}

/* An interval is [start, end], plus [start2, end of time] when it is a resident
 * buffer whose last stay runs into the next run. */
static int overlaps_time(const interval *a, const interval *b)
{
    const int inf = 1 << 30;
    int pa[2][2] = {{a->start, a->end}, {a->start2, inf}};
    int pbv[2][2] = {{b->start, b->end}, {b->start2, inf}};
    int na = a->start2 >= 0 ? 2 : 1, nbp = b->start2 >= 0 ? 2 : 1;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nbp; j++)
            if (pa[i][0] <= pbv[j][1] && pbv[j][0] <= pa[i][1])
                return 1;
    return 0;
}

static int cmp_size_desc(const void *x, const void *y)
{
    const interval *a = *(interval *const *)x, *b = *(interval *const *)y;
    if (a->size != b->size)
        return a->size < b->size ? 1 : -1;
    return a->start - b->start;
}

static int span(const interval *a) { return (a->end - a->start) + (a->start2 >= 0 ? 1 << 20 : 0); }

static int cmp_start(const void *x, const void *y)
{
    const interval *a = *(interval *const *)x, *b = *(interval *const *)y;
    if (a->start != b->start)
        return a->start - b->start;
    return cmp_size_desc(x, y);
}

static int cmp_area_desc(const void *x, const void *y)
{
    const interval *a = *(interval *const *)x, *b = *(interval *const *)y;
    double aa = (double)a->size * (span(a) + 1), bb = (double)b->size * (span(b) + 1);
    if (aa != bb)
        return aa < bb ? 1 : -1;
    return cmp_size_desc(x, y);
}

/* Long-lived first (resident between runs, then by lifetime), each group by size:
 * keeps the weights that never move out of the way of the ones that churn. */
static int cmp_long_first(const void *x, const void *y)
{
    const interval *a = *(interval *const *)x, *b = *(interval *const *)y;
    int la = a->start2 >= 0 || (a->start < 0 && a->how_end == E_KEEP);
    int lb = b->start2 >= 0 || (b->start < 0 && b->how_end == E_KEEP);
    if (la != lb)
        return lb - la;
    if (!la) {
        int sa = a->end - a->start, sb = b->end - b->start;
        if ((sa > 64) != (sb > 64))
            return sb > 64 ? 1 : -1;
    }
    return cmp_size_desc(x, y);
}

/* Long-lived first (by size), then the rest in start order, like an online
 * allocator whose long-lived buffers were set aside at the bottom. */
static int cmp_long_then_start(const void *x, const void *y)
{
    const interval *a = *(interval *const *)x, *b = *(interval *const *)y;
    int la = a->start2 >= 0 || a->end - a->start > 64, lb = b->start2 >= 0 || b->end - b->start > 64;
    if (la != lb)
        return lb - la;
    return la ? cmp_size_desc(x, y) : cmp_start(x, y);
}

/* Which placed intervals touch each block of PLACE_BLOCK step buckets (step
 * bucket q holds step q-1; a resident buffer's last stay runs to the last
 * one): an interval finds what it overlaps in time by scanning the blocks it
 * spans, not everything placed. */
enum { PLACE_BLOCK = 64 };
typedef struct {
    int *head;          /* per block: first node, -1 */
    int *node_iv, *node_next;
    int n, cap;
} ivbuckets;

static int bucket_add(ivbuckets *bk, int q, int iv)
{
    if (bk->n == bk->cap) {
        int cap = bk->cap ? bk->cap * 2 : 1024;
        int *a = realloc(bk->node_iv, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        bk->node_iv = a;
        int *b = realloc(bk->node_next, (size_t)cap * sizeof *b);
        if (!b)
            return -1;
        bk->node_next = b;
        bk->cap = cap;
    }
    bk->node_iv[bk->n] = iv;
    bk->node_next[bk->n] = bk->head[q];
    bk->head[q] = bk->n++;
    return 0;
}

/* The step buckets [*q0, *q1] of part k (0, or 1: the last stay) of an interval; 0 if none. */
static int part_buckets(const interval *it, int k, int last, int *q0, int *q1)
{
    if (k == 0) {
        *q0 = it->start + 1;
        *q1 = it->end + 1;
        return 1;
    }
    if (it->start2 < 0)
        return 0;
    *q0 = it->start2 + 1;
    *q1 = last;
    return 1;
}

/* Walking what overlaps in time in offset order: the smallest gap that holds size. */
static void fit_gap(const interval *h, uint64_t size, uint64_t *off, uint64_t *best,
                    uint64_t *best_gap)
{
    if (h->offset >= *off && h->offset - *off >= size && h->offset - *off < *best_gap) {
        *best = *off;
        *best_gap = h->offset - *off;
    }
    uint64_t e = h->offset + h->size;
    if (e > *off)
        *off = e;
}

static int insert_by_offset(interval **a, int n, interval *it)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a[mid]->offset < it->offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(a + lo + 1, a + lo, (size_t)(n - lo) * sizeof *a);
    a[lo] = it;
    return n + 1;
}

/* What a placed interval occupies, with its offset beside it so that sorting
 * reads no interval. */
typedef struct {
    uint64_t off;
    const interval *p;
} hit;

/* By offset, in place: the placement sorts a few dozen intervals per interval
 * placed, hundreds of thousands of times per plan, so no qsort callback. */
static void sort_by_offset(hit *a, int n)
{
    while (n > 16) {
        uint64_t x = a[0].off, y = a[n / 2].off, z = a[n - 1].off;
        uint64_t pv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        int i = 0, j = n - 1;
        while (i <= j) {
            while (a[i].off < pv)
                i++;
            while (a[j].off > pv)
                j--;
            if (i <= j) {
                hit t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        /* recurse into the smaller part, loop on the larger */
        if (j + 1 < n - i) {
            sort_by_offset(a, j + 1);
            a += i;
            n -= i;
        } else {
            sort_by_offset(a + i, n - i);
            n = j + 1;
        }
    }
    for (int i = 1; i < n; i++) {
        hit t = a[i];
        int k = i;
        for (; k > 0 && a[k - 1].off > t.off; k--)
            a[k] = a[k - 1];
        a[k] = t;
    }
}

/* Greedy: in the given order, each interval goes to the best-fitting gap free
 * over its whole lifetime (or on top). The intervals that span a quarter of
 * the run or more (and the resident ones) are few and meet nearly everything:
 * they are kept in one list in offset order; the rest are found through the
 * blocks they touch. What an interval meets is then walked in offset order. */
static int place_order(ivec *iv, int (*cmp)(const void *, const void *), uint64_t *arena)
{
    int n = iv->n;
    int T = 0;
    for (int i = 0; i < n; i++) {
        if (iv->v[i].end > T)
            T = iv->v[i].end;
        if (iv->v[i].start2 > T)
            T = iv->v[i].start2;
    }
    int last = T + 2, nblk = last / PLACE_BLOCK + 1;
    int global_span = T / 4 > PLACE_BLOCK ? T / 4 : PLACE_BLOCK;
    interval **order = malloc(((size_t)n + 1) * sizeof *order);
    interval **sorted = malloc(((size_t)n + 1) * sizeof *sorted); /* placed, by offset */
    interval **longs = malloc(((size_t)n + 1) * sizeof *longs);   /* the global ones, by offset */
    int nl = 0;
    hit *hits = malloc(((size_t)n + 1) * sizeof *hits);
    int *stamp = malloc(((size_t)n + 1) * sizeof *stamp);
    ivbuckets bk = {.head = malloc(((size_t)nblk + 1) * sizeof *bk.head)};
    int rc = -1;
    if (!order || !sorted || !longs || !hits || !stamp || !bk.head)
        goto done;
    for (int q = 0; q <= nblk; q++)
        bk.head[q] = -1;
    for (int i = 0; i < n; i++) {
        order[i] = &iv->v[i];
        stamp[i] = -1;
    }
    qsort(order, (size_t)n, sizeof *order, cmp);
    int np = 0;
    *arena = 0;
    for (int i = 0; i < n; i++) {
        interval *it = order[i];
        int nh = 0, q0, q1;
        uint64_t off = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        int is_global = it->start2 >= 0 || it->end - it->start + 1 > global_span;
        if (is_global) {
            /* everything placed that it meets, in offset order */
            for (int j = 0; j < np; j++)
                if (overlaps_time(it, sorted[j]))
                    fit_gap(sorted[j], it->size, &off, &best, &best_gap);
        } else {
            /* the others from its blocks, sorted, and the global ones merged in */
            for (int k = 0; k < 2; k++) {
                if (!part_buckets(it, k, last, &q0, &q1))
                    continue;
                for (int q = q0 / PLACE_BLOCK; q <= q1 / PLACE_BLOCK; q++)
                    for (int e = bk.head[q]; e >= 0; e = bk.node_next[e]) {
                        int j = bk.node_iv[e];
                        if (stamp[j] != i) {
                            stamp[j] = i;
                            if (overlaps_time(it, &iv->v[j]))
                                hits[nh++] = (hit){iv->v[j].offset, &iv->v[j]};
                        }
                    }
            }
            sort_by_offset(hits, nh);
            int h = 0, l = 0;
            while (h < nh || l < nl) {
                if (l < nl && !overlaps_time(it, longs[l])) {
                    l++;
                    continue;
                }
                const interval *x = h < nh && (l >= nl || hits[h].off <= longs[l]->offset)
                                        ? hits[h++].p : longs[l++];
                fit_gap(x, it->size, &off, &best, &best_gap);
            }
        }
        it->offset = best != UINT64_MAX ? best : off;
        if (it->offset + it->size > *arena)
            *arena = it->offset + it->size;
        np = insert_by_offset(sorted, np, it);
        if (is_global) {
            nl = insert_by_offset(longs, nl, it);
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (!part_buckets(it, k, last, &q0, &q1))
                continue;
            for (int q = q0 / PLACE_BLOCK; q <= q1 / PLACE_BLOCK; q++)
                if (bucket_add(&bk, q, (int)(it - iv->v)))
                    goto done;
        }
    }
    rc = 0;
done:
    free(order);
    free(sorted);
    free(longs);
    free(hits);
    free(stamp);
    free(bk.head);
    free(bk.node_iv);
    free(bk.node_next);
    return rc;
}

/* Tries greedy-by-size (TFLite's), by start time (like an online allocator),
 * by size x lifetime and long-lived first, and keeps the smallest arena. */
static int place(ivec *iv, uint64_t *arena)
{
    int (*const orders[])(const void *, const void *) = {
        cmp_size_desc, cmp_start, cmp_area_desc, cmp_long_first, cmp_long_then_start};
    uint64_t *best_off = malloc(((size_t)iv->n + 1) * sizeof *best_off);
    if (!best_off)
        return -1;
    uint64_t best = UINT64_MAX;
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        uint64_t a;
        if (place_order(iv, orders[o], &a)) {
            free(best_off);
            return -1;
        }
        if (getenv("SI_PLAN_DEBUG"))
            fprintf(stderr, "placement order %zu: arena %llu\n", o, (unsigned long long)a);
        if (a < best) {
            best = a;
            for (int k = 0; k < iv->n; k++)
                best_off[k] = iv->v[k].offset;
        }
    }
    for (int k = 0; k < iv->n; k++)
        iv->v[k].offset = best_off[k];
    free(best_off);
    *arena = best;
    return 0;
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
                p->bytes_uploaded += pb->buffers[it->buf].bytes;
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

si_result pg_plan_build(const pg_problem *pb, uint64_t budget, uint32_t align, pg_plan **out,
                        si_error *err)
{
    if (align == 0 || (align & (align - 1)))
        return base_fail(err, SI_ERR_ARG, "pager: alignment must be a power of two");
    int nb = pb->n_buffers;
    pg_plan *p = calloc(1, sizeof *p);
    uses u = {0};
    sim S = {0};
    uint8_t *start_set = calloc((size_t)nb + 1, 1);
    uint64_t *wsv = NULL, *ovf = NULL;
    si_result st = SI_OK;
    char msg[512];
    if (!p || !start_set || make_uses(pb, &u) ||
        !(S.cur = malloc(((size_t)nb + 1) * sizeof *S.cur)) || !(S.written = calloc((size_t)nb + 1, 1)) ||
        !(S.spilled = calloc((size_t)nb + 1, 1)) || !(S.in_step = calloc((size_t)nb + 1, 1))) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
        goto done;
    }
    p->budget = budget;
    p->align = align;
    p->lower_bound_step = -1;
    wsv = calloc((size_t)pb->n_steps + 1, sizeof *wsv);
    ovf = calloc((size_t)pb->n_steps + 1, sizeof *ovf);
    if (!wsv || !ovf || !(S.capv = calloc((size_t)pb->n_steps + 1, sizeof *S.capv))) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
        goto done;
    }
    for (int s = 0; s < pb->n_steps; s++) {
        uint64_t ws = 0;
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            if (!S.in_step[b])
                ws += pg_size(p, pb->buffers[b].bytes);
            S.in_step[b] = 1;
        }
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++)
            S.in_step[pb->step_bufs[k]] = 0;
        wsv[s] = ws;
        if (ws > p->lower_bound) {
            p->lower_bound = ws;
            p->lower_bound_step = s;
        }
    }
    S.pb = pb;
    S.u = &u;
    S.p = p;
    /* Off by default: measured on the H200 (bench/results/gpu-h200.md), loading
     * a step early gains nothing in one GL context, whose queue runs copies and
     * dispatches in order. SI_PLAN_PREFETCH=1 turns it on, for measuring. */
    S.prefetch = getenv("SI_PLAN_PREFETCH") != NULL;
    if (budget && budget < p->lower_bound) {
        snprintf(msg, sizeof msg,
                 "no plan fits in %llu bytes: step %d alone needs %llu bytes (its inputs, output "
                 "and weights); the smallest budget that could work is %llu bytes",
                 (unsigned long long)budget, p->lower_bound_step,
                 (unsigned long long)p->lower_bound, (unsigned long long)p->lower_bound);
        st = base_fail(err, SI_ERR_BUDGET, "%s", msg);
        goto done;
    }
    /* Capacity for phase 1: the budget, lowered while placement overflows it. */
    uint64_t cap = budget ? budget : UINT64_MAX / 4;
    for (int t = 0; t < pb->n_steps; t++)
        S.capv[t] = cap;
    /* First with weights kept between runs (steady state); if that cannot be
     * packed, with nothing kept: long-lived residents fragment a tight arena.
     * Where placement overflows, the capacity is lowered at the steps the
     * overflowing stays span, then everywhere. */
    int steady = 1, local = 1;
    for (int attempt = 0;; attempt++) {
        S.cap = cap;
        int r = simulate(&S, NULL);
        if (r == 0) {
            /* steady state: what the first run ends with, the next begins with */
            for (int b = 0; b < nb; b++)
                start_set[b] = steady && S.cur[b] >= 0 && persists(&pb->buffers[b]);
            r = simulate(&S, start_set);
            if (r == 0 && close_run(&S, start_set))
                r = -1;
        }
        if (r < 0) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
            goto done;
        }
        uint64_t arena = 0;
        if (r == 0 && place(&S.iv, &arena)) {
            st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
            goto done;
        }
        if (r == 0 && (!budget || arena <= budget)) {
            p->arena_bytes = arena;
            p->capacity = budget ? cap : 0;
            p->evictions = S.evictions;
            break;
        }
        if (r == 0 && local && attempt < 200) {
            /* per step, the largest overflow of a stay that spans it */
            int changed = 0;
            for (int t = 0; t < pb->n_steps; t++)
                ovf[t] = 0;
            for (int k = 0; k < S.iv.n; k++) {
                const interval *it = &S.iv.v[k];
                if (it->offset + it->size <= budget)
                    continue;
                uint64_t o = it->offset + it->size - budget;
                for (int part = 0; part < 2; part++) {
                    int a = part ? it->start2 : it->start, z = part ? pb->n_steps - 1 : it->end;
                    if (part && it->start2 < 0)
                        continue;
                    for (int t = a < 0 ? 0 : a; t <= z && t < pb->n_steps; t++)
                        if (o > ovf[t])
                            ovf[t] = o;
                }
            }
            for (int t = 0; t < pb->n_steps; t++) {
                if (!ovf[t])
                    continue;
                uint64_t o = ovf[t] < align ? align : ovf[t];
                uint64_t nc = S.capv[t] > wsv[t] + o ? S.capv[t] - o : wsv[t];
                if (nc < S.capv[t]) {
                    S.capv[t] = nc;
                    changed = 1;
                }
            }
            if (changed)
                continue;
        }
        local = 0;
        /* Over the budget: less capacity next time, down to the lower bound. */
        uint64_t over = r == 0 ? arena - budget : align;
        uint64_t step = over > cap / 32 ? over : cap / 32;
        if (steady && r == 0 && (cap <= p->lower_bound || attempt > 260)) {
            steady = 0;
            local = 1;
            attempt = 0;
            cap = budget;
            for (int t = 0; t < pb->n_steps; t++)
                S.capv[t] = cap;
            continue;
        }
        if (budget && !S.online && (r != 0 || cap <= p->lower_bound || attempt > 260)) {
            /* Offline placement cannot fit: place online instead, run 1 from
             * empty, run 2 from where run 1 left the weights. */
            S.online = 1;
            S.arena_cap = budget;
            S.prefetch = 0;
            free(S.capv);
            S.capv = NULL;
            S.occ = malloc(((size_t)nb + 1) * sizeof *S.occ);
            S.start_off = calloc((size_t)nb + 1, sizeof *S.start_off);
            if (!S.occ || !S.start_off) {
                st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
                goto done;
            }
            int ro = simulate(&S, NULL);
            if (ro == 0) {
                for (int b = 0; b < nb; b++) {
                    start_set[b] = S.cur[b] >= 0 && persists(&pb->buffers[b]);
                    if (start_set[b])
                        S.start_off[b] = off_of(&S, b);
                }
                ro = simulate(&S, start_set);
                if (ro == 0 && close_run(&S, start_set))
                    ro = -1;
            }
            if (ro < 0) {
                st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
                goto done;
            }
            if (ro == 0) {
                uint64_t top = 0;
                for (int k = 0; k < S.iv.n; k++)
                    if (S.iv.v[k].offset + S.iv.v[k].size > top)
                        top = S.iv.v[k].offset + S.iv.v[k].size;
                p->arena_bytes = top;
                p->capacity = budget;
                p->evictions = S.evictions;
                break;
            }
        }
        if (r != 0 || cap <= p->lower_bound || attempt > 260) {
            /* what would work: plan at the lower bound and see how big the arena gets */
            snprintf(msg, sizeof msg,
                     "no plan fits in %llu bytes (largest step: %d, %llu bytes; arena fragmentation "
                     "needs more); try a budget of %llu bytes or more",
                     (unsigned long long)budget, p->lower_bound_step,
                     (unsigned long long)p->lower_bound,
                     (unsigned long long)(r == 0 ? arena : p->lower_bound + p->lower_bound / 4));
            st = base_fail(err, SI_ERR_BUDGET, "%s", msg);
            goto done;
        }
        cap = cap > p->lower_bound + step ? cap - step : p->lower_bound;
        for (int t = 0; t < pb->n_steps; t++)
            S.capv[t] = S.capv[t] < cap ? S.capv[t] : cap;
    }
    if (getenv("SI_PLAN_DEBUG"))
        for (int k = 0; k < S.iv.n; k++) {
            const interval *it = &S.iv.v[k];
            fprintf(stderr, "iv buf %d [%d,%d] start2 %d load %d end %d size %llu off %llu\n", it->buf,
                    it->start, it->end, it->start2, it->load, it->how_end,
                    (unsigned long long)it->size, (unsigned long long)it->offset);
        }
    if (emit(pb, &S.iv, p)) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while planning");
        goto done;
    }
    *out = p;
    p = NULL;
done:
    free(u.start);
    free(u.steps);
    free(S.cur);
    free(S.written);
    free(S.spilled);
    free(S.in_step);
    free(S.capv);
    free(S.occ);
    free(S.start_off);
    free(wsv);
    free(ovf);
    free(S.iv.v);
    free(start_set);
    pg_plan_free(p);
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

typedef struct {
    uint64_t off, size;
    int buf;
} live;

int pg_plan_check(const pg_problem *pb, const pg_plan *p, char *msg, size_t n)
{
    int nb = pb->n_buffers, rc = -1;
    int8_t *alloc = calloc((size_t)nb + 1, 1), *filled = calloc((size_t)nb + 1, 1);
    int8_t *written = calloc((size_t)nb + 1, 1), *host_copy = calloc((size_t)nb + 1, 1);
    uint64_t *off = calloc((size_t)nb + 1, sizeof *off);
    if (!alloc || !filled || !written || !host_copy || !off) {
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
                for (int o = 0; o < nb; o++)
                    if (alloc[o] && off[o] < a->offset + sz &&
                        a->offset < off[o] + pg_size(p, pb->buffers[o].bytes)) {
                        snprintf(msg, n, "buffer %d at %llu overlaps live buffer %d at %llu (step %d)",
                                 b, (unsigned long long)a->offset, o, (unsigned long long)off[o],
                                 a->step);
                        goto done;
                    }
                alloc[b] = 1;
                filled[b] = 0;
                off[b] = a->offset;
                break;
            case PA_FREE:
                if (!alloc[b]) {
                    snprintf(msg, n, "buffer %d freed while not allocated", b);
                    goto done;
                }
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
    return rc;
}
