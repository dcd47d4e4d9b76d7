/* Placement, phase 2 of the plan: the intervals of phase 1 get offsets
 * greedily (by size, as TFLite's GPU delegate does, and a few other orders);
 * the arena is the highest end, the smallest over the orders tried. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pager_internal.h"

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
