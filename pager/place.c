/* Placement, phase 2 of the plan: the intervals of phase 1 get offsets
 * greedily (by size, as TFLite's GPU delegate does, and a few other orders);
 * the arena is the highest end, the smallest over the orders tried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pager_internal.h"

/* An interval is [start, end], plus [start2, end of time] when it is a resident
 * buffer whose last stay runs into the next run. */
static inline int times_meet(int as, int ae, int as2, int bs, int be, int bs2)
{
    return (as <= be && bs <= ae) || (bs2 >= 0 && bs2 <= ae) || (as2 >= 0 && as2 <= be) ||
           (as2 >= 0 && bs2 >= 0);
}

static inline int overlaps_time(const interval *a, const interval *b)
{
    return times_meet(a->start, a->end, a->start2, b->start, b->end, b->start2);
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
 * spans, not everything placed. Each block is one array of entries that carry
 * what the scan tests (lifetime, offset), so it reads memory in order and
 * touches an interval only when it overlaps. */
enum { PLACE_BLOCK = 64 };
typedef struct {
    uint64_t off, size;
    int start, end, start2, iv;
} ventry;
typedef struct {
    ventry *e;
    int n, cap;
} vblock;
typedef struct {
    vblock *blk;
} ivbuckets;

static int bucket_add(ivbuckets *bk, int q, const interval *it, int iv)
{
    vblock *b = &bk->blk[q];
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        ventry *a = realloc(b->e, (size_t)cap * sizeof *a);
        if (!a)
            return -1;
        b->e = a;
        b->cap = cap;
    }
    b->e[b->n++] = (ventry){it->offset, it->size, it->start, it->end, it->start2, iv};
    return 0;
}

static inline int entry_overlaps(const interval *a, const ventry *e)
{
    return times_meet(a->start, a->end, a->start2, e->start, e->end, e->start2);
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
static void fit_gap(uint64_t h_off, uint64_t h_size, uint64_t size, uint64_t *off, uint64_t *best,
                    uint64_t *best_gap)
{
    if (h_off >= *off && h_off - *off >= size && h_off - *off < *best_gap) {
        *best = *off;
        *best_gap = h_off - *off;
    }
    uint64_t e = h_off + h_size;
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


/* Space taken, as disjoint [a, b) runs in offset order, touching ones joined.
 * Walking the runs instead of the intervals they join finds the same gaps: a
 * gap can only open where a run starts. */
typedef struct {
    uint64_t a, b;
} run;
typedef struct {
    run *r;
    int n;
} runs;

static void runs_add(runs *u, uint64_t a, uint64_t b)
{
    int lo = 0, hi = u->n; /* the first run that ends at or after a */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (u->r[mid].b < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    int k = lo; /* runs k..j-1 meet or touch [a, b): they join it */
    int j = k;
    while (j < u->n && u->r[j].a <= b) {
        if (u->r[j].a < a)
            a = u->r[j].a;
        if (u->r[j].b > b)
            b = u->r[j].b;
        j++;
    }
    if (j == k) {
        memmove(u->r + k + 1, u->r + k, (size_t)(u->n - k) * sizeof *u->r);
        u->n++;
    } else if (j > k + 1) {
        memmove(u->r + k + 1, u->r + j, (size_t)(u->n - j) * sizeof *u->r);
        u->n -= j - k - 1;
    }
    u->r[k] = (run){a, b};
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
    const interval **sorted = malloc(((size_t)n + 1) * sizeof *sorted); /* what a global one meets, by offset */
    hit *hits = malloc(((size_t)n + 1) * sizeof *hits);
    interval **longs = malloc(((size_t)n + 1) * sizeof *longs);   /* the global ones, by offset */
    int nl = 0;
    int *stamp = malloc(((size_t)n + 1) * sizeof *stamp);
    ivbuckets bk = {.blk = calloc((size_t)nblk + 1, sizeof *bk.blk)};
    /* An interval whose lifetime covers every other's (a weight resident the
     * whole run) meets everything in time: all_runs, the space of everything
     * placed, is what such an interval must avoid, and full_runs, the space of
     * those placed, is what every interval must avoid. Without them, each of
     * n intervals walked all the resident weights (O(n^2) with no budget). */
    int t_lo = 0, t_hi = 0;
    for (int i = 0; i < n; i++) {
        const interval *v = &iv->v[i];
        int e = v->end > v->start2 ? v->end : v->start2;
        if (i == 0 || v->start < t_lo)
            t_lo = v->start;
        if (i == 0 || e > t_hi)
            t_hi = e;
    }
    runs all_runs = {malloc(((size_t)n + 1) * sizeof(run)), 0};
    runs full_runs = {malloc(((size_t)n + 1) * sizeof(run)), 0};
    int rc = -1;
    if (!order || !sorted || !hits || !longs || !stamp || !bk.blk || !all_runs.r || !full_runs.r)
        goto done;
    for (int i = 0; i < n; i++) {
        order[i] = &iv->v[i];
        stamp[i] = -1;
    }
    qsort(order, (size_t)n, sizeof *order, cmp);
    *arena = 0;
    for (int i = 0; i < n; i++) {
        interval *it = order[i];
        int q0, q1;
        uint64_t off = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        int is_global = it->start2 >= 0 || it->end - it->start + 1 > global_span;
        int is_full = it->start <= t_lo && it->end >= t_hi;
        if (is_full) {
            for (int j = 0; j < all_runs.n; j++)
                fit_gap(all_runs.r[j].a, all_runs.r[j].b - all_runs.r[j].a, it->size, &off, &best,
                        &best_gap);
        } else {
            /* everything placed that it meets, in offset order: from the
             * blocks it spans (gathered once each, sorted), the global ones
             * (longs) and the full runs */
            int nh = 0;
            for (int k = 0; k < 2; k++) {
                if (!part_buckets(it, k, last, &q0, &q1))
                    continue;
                for (int q = q0 / PLACE_BLOCK; q <= q1 / PLACE_BLOCK; q++)
                    for (int x = 0; x < bk.blk[q].n; x++) {
                        const ventry *e = &bk.blk[q].e[x];
                        if (entry_overlaps(it, e) && stamp[e->iv] != i) {
                            stamp[e->iv] = i;
                            hits[nh++] = (hit){e->off, &iv->v[e->iv]};
                        }
                    }
            }
            sort_by_offset(hits, nh);
            for (int j = 0; j < nh; j++)
                sorted[j] = hits[j].p;
            int np = nh, f = 0, l = 0;
            for (int j = 0; j < np || f < full_runs.n || l < nl;) {
                if (l < nl && !overlaps_time(it, longs[l])) {
                    l++;
                    continue;
                }
                uint64_t o_blk = j < np ? sorted[j]->offset : UINT64_MAX,
                         o_long = l < nl ? longs[l]->offset : UINT64_MAX,
                         o_full = f < full_runs.n ? full_runs.r[f].a : UINT64_MAX;
                if (o_full <= o_blk && o_full <= o_long) {
                    fit_gap(full_runs.r[f].a, full_runs.r[f].b - full_runs.r[f].a, it->size, &off,
                            &best, &best_gap);
                    f++;
                } else if (o_blk <= o_long) {
                    fit_gap(sorted[j]->offset, sorted[j]->size, it->size, &off, &best, &best_gap);
                    j++;
                } else {
                    fit_gap(longs[l]->offset, longs[l]->size, it->size, &off, &best, &best_gap);
                    l++;
                }
            }
        }
        it->offset = best != UINT64_MAX ? best : off;
        if (it->offset + it->size > *arena)
            *arena = it->offset + it->size;
        runs_add(&all_runs, it->offset, it->offset + it->size);
        if (is_full) {
            runs_add(&full_runs, it->offset, it->offset + it->size);
            continue;
        }
        if (is_global) {
            nl = insert_by_offset(longs, nl, it);
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (!part_buckets(it, k, last, &q0, &q1))
                continue;
            for (int q = q0 / PLACE_BLOCK; q <= q1 / PLACE_BLOCK; q++)
                if (bucket_add(&bk, q, it, (int)(it - iv->v)))
                    goto done;
        }
    }
    rc = 0;
done:
    free(order);
    free((void *)sorted);
    free(hits);
    free(longs);
    free(stamp);
    free(all_runs.r);
    free(full_runs.r);
    for (int q = 0; bk.blk && q <= nblk; q++)
        free(bk.blk[q].e);
    free(bk.blk);
    return rc;
}

/* Tries greedy-by-size (TFLite's), by start time (like an online allocator),
 * by size x lifetime and long-lived first, and keeps the smallest arena. */
int pg_place(ivec *iv, uint64_t *arena, int debug)
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
        if (debug)
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
