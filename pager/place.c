/* Placement, phase 2 of the plan: the intervals of phase 1 get offsets
 * greedily (by size, as TFLite's GPU delegate does, and a few other orders);
 * the arena is the highest end, the smallest over the orders tried. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../base/base.h"
#include "pager_internal.h"

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

/* Space taken, as disjoint [a, b) runs in offset order, touching ones joined.
 * Walking the runs instead of the intervals they join finds the same gaps: a
 * gap can only open where a run starts. */
typedef struct {
    uint64_t a, b;
} run;
typedef struct {
    run *r;
    int n, cap;
} runs;

/* The first of u's runs that ends at or after x (u->n if none). */
static int runs_ending_from(const runs *u, uint64_t x)
{
    int lo = 0, hi = u->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (u->r[mid].b < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int runs_add(runs *u, uint64_t a, uint64_t b)
{
    if (u->n == u->cap) {
        int cap = u->cap ? u->cap * 2 : 4;
        run *r = realloc(u->r, (size_t)cap * sizeof *r);
        if (!r)
            return -1;
        u->r = r;
        u->cap = cap;
    }
    int k = runs_ending_from(u, a); /* runs k..j-1 meet or touch [a, b): they join it */
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
    return 0;
}

/* The placed intervals by time, as a segment tree over the time slots (slot
 * q holds step q-1; a resident buffer's last stay runs to the last slot). A
 * stay [q0, q1] is stored at the O(log T) nodes that cover it exactly: each
 * such node's `own` runs take its offsets, and `sub` of that node and of
 * every node above it. What meets [q0, q1] in time is then, without
 * visiting anything twice per level: `sub` of the nodes inside it and `own`
 * of the nodes that only cross it. The runs already join what touches, so
 * an interval placed late reads a few hundred runs, not the tens of
 * thousands of intervals it meets (frcnn-irv2 at 24M: 42 s of planning to
 * about 5). The price: a short stay too walks O(log T) nodes, so a program of
 * millions of tiny steps (nanodet split into 1.9M steps at 6M) places about
 * 3x slower than with the blocks of exact entries this replaced; such a plan
 * took minutes before too, and the cure is in the tiler, not here. */
typedef struct {
    runs *own, *sub;
    int leaves;
    run *got; /* what a query gathered */
    int n_got, cap_got;
    int *touched; /* the nodes with runs: emptied for the next order, memory kept */
    int n_touched, cap_touched;
} ttree;

/* [a, b) into node's sub (not the root's: the root's sub is the longest list
 * and never read, as no stay reaches both slot 0 and the last; a last stay
 * starts at slot 1 or later). */
static int sub_add(ttree *t, int node, uint64_t a, uint64_t b)
{
    if (node == 1)
        return 0;
    if (!t->sub[node].n) { /* the nodes to empty for the next order */
        if (t->n_touched == t->cap_touched) {
            int cap = t->cap_touched ? t->cap_touched * 2 : 1024;
            int *x = realloc(t->touched, (size_t)cap * sizeof *x);
            if (!x)
                return -1;
            t->touched = x;
            t->cap_touched = cap;
        }
        t->touched[t->n_touched++] = node;
    }
    return runs_add(&t->sub[node], a, b);
}

/* Whether one of u's runs holds [a, b) whole. */
static int runs_hold(const runs *u, uint64_t a, uint64_t b)
{
    int k = runs_ending_from(u, b);
    return k < u->n && u->r[k].a <= a;
}

/* The stay [q0, q1] at offsets [a, b): into `own` and `sub` of the nodes that
 * cover it exactly, and into `sub` of every node above them (those that hold
 * q0 or q1 without lying inside [q0, q1]). Walked up from the two end leaves:
 * a sub that already holds [a, b) whole is left, and so are those above it,
 * which hold what it holds (frcnn-irv2 at its floor: most of a short stay's 18
 * levels). The lists come out as adding at every node makes them. */
static int tree_add(ttree *t, int q0, int q1, uint64_t a, uint64_t b)
{
    int L = t->leaves;
    for (int l = q0 + L, r = q1 + L + 1; l < r; l >>= 1, r >>= 1) {
        if (l & 1) {
            if (runs_add(&t->own[l], a, b) || sub_add(t, l, a, b))
                return -1;
            l++;
        }
        if (r & 1) {
            r--;
            if (runs_add(&t->own[r], a, b) || sub_add(t, r, a, b))
                return -1;
        }
    }
    for (int end = 0; end < 2; end++) {
        int node = (end ? q1 : q0) + L, lo = node - L, hi = lo, size = 1;
        while (node > 1) {
            if (node & 1)
                lo -= size;
            else
                hi += size;
            size *= 2;
            node >>= 1;
            if (q0 <= lo && hi <= q1)
                continue; /* inside the stay: a covering node's, or itself one */
            if (node > 1 && runs_hold(&t->sub[node], a, b))
                break;
            if (sub_add(t, node, a, b))
                return -1;
        }
    }
    return 0;
}

static int gather(ttree *t, const runs *u)
{
    if (!u->n)
        return 0;
    if (t->n_got + u->n > t->cap_got) {
        int cap = t->cap_got * 2 > t->n_got + u->n ? t->cap_got * 2 : t->n_got + u->n;
        run *g = realloc(t->got, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        t->got = g;
        t->cap_got = cap;
    }
    memcpy(t->got + t->n_got, u->r, (size_t)u->n * sizeof *u->r);
    t->n_got += u->n;
    return 0;
}

/* By start offset, in place (no qsort callback: once per interval placed). */
static void sort_runs(run *a, int n)
{
    while (n > 16) {
        uint64_t x = a[0].a, y = a[n / 2].a, z = a[n - 1].a;
        uint64_t pv = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        int i = 0, j = n - 1;
        while (i <= j) {
            while (a[i].a < pv)
                i++;
            while (a[j].a > pv)
                j--;
            if (i <= j) {
                run t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        /* recurse into the smaller part, loop on the larger */
        if (j + 1 < n - i) {
            sort_runs(a, j + 1);
            a += i;
            n -= i;
        } else {
            sort_runs(a + i, n - i);
            n = j + 1;
        }
    }
    for (int i = 1; i < n; i++) {
        run t = a[i];
        int k = i;
        for (; k > 0 && a[k - 1].a > t.a; k--)
            a[k] = a[k - 1];
        a[k] = t;
    }
}

static int tree_get(ttree *t, int node, int lo, int hi, int q0, int q1)
{
    if (q1 < lo || hi < q0 || (node > 1 && !t->sub[node].n))
        return 0;
    if (q0 <= lo && hi <= q1)
        return gather(t, &t->sub[node]);
    int mid = lo + (hi - lo) / 2;
    return gather(t, &t->own[node]) || tree_get(t, 2 * node, lo, mid, q0, q1) ||
           tree_get(t, 2 * node + 1, mid + 1, hi, q0, q1);
}

/* The time slots [*q0, *q1] of part k (0, or 1: the last stay) of an interval; 0 if none. */
static int part_slots(const interval *it, int k, int last, int *q0, int *q1)
{
    if (k == 0) {
        *q0 = it->start + 1 > 0 ? it->start + 1 : 0;
        *q1 = it->end + 1;
        return 1;
    }
    if (it->start2 < 0)
        return 0;
    *q0 = it->start2 + 1;
    *q1 = last;
    return 1;
}

/* Greedy: in the given order (all of iv), each interval goes to the
 * best-fitting gap free over its whole lifetime (or on top): what it meets in
 * time, from the tree, walked in offset order. *arena: the highest end. */
/* The tree, empty, for the intervals of iv (its memory kept from the last
 * call where it is big enough: a larger tree places the same); -1 out of
 * memory. */
static void tree_free(ttree *t);
static int tree_ready(ttree *t, const ivec *iv)
{
    int T = 0, leaves = 1;
    for (int i = 0; i < iv->n; i++) {
        if (iv->v[i].end > T)
            T = iv->v[i].end;
        if (iv->v[i].start2 > T)
            T = iv->v[i].start2;
    }
    while (leaves < T + 3)
        leaves *= 2;
    if (t->own && t->leaves >= leaves) { /* emptied: only the nodes touched are visited */
        for (int i = 0; i < t->n_touched; i++)
            t->own[t->touched[i]].n = t->sub[t->touched[i]].n = 0;
        t->n_touched = 0;
        t->own[1].n = 0;
        return 0;
    }
    tree_free(t);
    *t = (ttree){.leaves = leaves};
    t->own = calloc(2 * (size_t)t->leaves, sizeof *t->own);
    t->sub = calloc(2 * (size_t)t->leaves, sizeof *t->sub);
    return t->own && t->sub ? 0 : -1;
}

static void tree_free(ttree *t)
{
    for (int q = 0; t->own && t->sub && q < 2 * t->leaves; q++) {
        free(t->own[q].r);
        free(t->sub[q].r);
    }
    free(t->own);
    free(t->sub);
    free(t->got);
    free(t->touched);
    *t = (ttree){0};
}

/* Greedy with an empty tree t (left filled); the offset of iv->v[k] into
 * off_of[k] (iv itself is only read: the orders are placed side by side). */
static int place_with(ttree *t, const ivec *iv, interval **order, uint64_t *off_of, uint64_t *arena)
{
    int last = t->leaves - 1; /* past every step: a last stay runs to here */
    *arena = 0;
    for (int i = 0; i < iv->n; i++) {
        interval *it = order[i];
        int q0, q1;
        uint64_t off = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        t->n_got = 0;
        for (int k = 0; k < 2; k++)
            if (part_slots(it, k, last, &q0, &q1) && tree_get(t, 1, 0, t->leaves - 1, q0, q1))
                return -1;
        sort_runs(t->got, t->n_got);
        for (int j = 0; j < t->n_got; j++)
            fit_gap(t->got[j].a, t->got[j].b - t->got[j].a, it->size, &off, &best, &best_gap);
        uint64_t at = best != UINT64_MAX ? best : off;
        off_of[it - iv->v] = at;
        if (at + it->size > *arena)
            *arena = at + it->size;
        for (int k = 0; k < 2; k++)
            if (part_slots(it, k, last, &q0, &q1) &&
                tree_add(t, q0, q1, at, at + it->size))
                return -1;
    }
    return 0;
}

/* Greedy: in the given order (all of iv), each interval goes to the
 * best-fitting gap free over its whole lifetime (or on top): what it meets in
 * time, from the tree, walked in offset order. *arena: the highest end. */
int pg_place_in_order(ivec *iv, interval **order, uint64_t *arena)
{
    ttree t = {0};
    uint64_t *off = malloc(((size_t)iv->n + 1) * sizeof *off);
    if (!off)
        return -1;
    int rc = tree_ready(&t, iv) ? -1 : place_with(&t, iv, order, off, arena);
    for (int k = 0; !rc && k < iv->n; k++)
        iv->v[k].offset = off[k];
    tree_free(&t);
    free(off);
    return rc;
}

enum { N_ORDERS = 5 };

/* One order of pg_place, on a thread of its own where one starts; its tree
 * and offsets are kept for the next call. */
typedef struct {
    const ivec *iv;
    int (*cmp)(const void *, const void *);
    ttree t;
    uint64_t *off, arena;
    int cap_off, rc;
    double ms; /* how long it took (--plan-debug) */
} place_job;

struct pg_placer {
    place_job job[N_ORDERS];
};

pg_placer *pg_placer_new(void) { return calloc(1, sizeof(pg_placer)); }

void pg_placer_free(pg_placer *pl)
{
    for (int o = 0; pl && o < N_ORDERS; o++) {
        tree_free(&pl->job[o].t);
        free(pl->job[o].off);
    }
    free(pl);
}

static void *place_job_run(void *x)
{
    place_job *j = x;
    double t0 = base_now_ms();
    const ivec *iv = j->iv;
    interval **order = malloc(((size_t)iv->n + 1) * sizeof *order);
    j->rc = -1;
    if (order && !tree_ready(&j->t, iv)) {
        for (int i = 0; i < iv->n; i++)
            order[i] = &iv->v[i];
        qsort(order, (size_t)iv->n, sizeof *order, j->cmp);
        j->rc = place_with(&j->t, iv, order, j->off, &j->arena);
    }
    free(order);
    j->ms = base_now_ms() - t0;
    return NULL;
}

/* Tries greedy-by-size (TFLite's), by start time (like an online allocator),
 * by size x lifetime and long-lived first, and keeps the smallest arena (the
 * first of equals). Each order is placed on a thread of its own where one
 * starts (else on this one): they only read iv, so the plan is the same
 * whatever runs when. Planning frcnn-irv2 is mostly this. */
int pg_place(pg_placer *pl, ivec *iv, uint64_t *arena, int debug)
{
    int (*const orders[N_ORDERS])(const void *, const void *) = {
        cmp_size_desc, cmp_start, cmp_area_desc, cmp_long_first, cmp_long_then_start};
    place_job *job = pl->job;
    pthread_t th[N_ORDERS];
    int started[N_ORDERS] = {0}, rc = 0;
    for (int o = 0; o < N_ORDERS; o++) {
        job[o].iv = iv;
        job[o].cmp = orders[o];
        job[o].rc = -1;
        if (job[o].cap_off <= iv->n) {
            uint64_t *off = realloc(job[o].off, ((size_t)iv->n + 1) * sizeof *off);
            if (!off) {
                rc = -1;
                continue;
            }
            job[o].off = off;
            job[o].cap_off = iv->n + 1;
        }
    }
    int threads = iv->n >= 1024; /* a small problem is not worth a thread */
    for (int o = 1; !rc && threads && o < N_ORDERS; o++)
        started[o] = !pthread_create(&th[o], NULL, place_job_run, &job[o]);
    for (int o = 0; !rc && o < N_ORDERS; o++)
        if (!started[o])
            place_job_run(&job[o]);
    for (int o = 0; o < N_ORDERS; o++)
        if (started[o])
            pthread_join(th[o], NULL);
    uint64_t best = UINT64_MAX;
    int bo = -1;
    for (int o = 0; !rc && o < N_ORDERS; o++) {
        if (job[o].rc) {
            rc = -1;
            break;
        }
        if (debug)
            fprintf(stderr, "placement order %d: arena %llu (%.0f ms)\n", o, (unsigned long long)job[o].arena,
                    job[o].ms);
        if (job[o].arena < best) {
            best = job[o].arena;
            bo = o;
        }
    }
    if (!rc && bo >= 0) {
        for (int k = 0; k < iv->n; k++)
            iv->v[k].offset = job[bo].off[k];
        *arena = best;
    }
    return rc;
}
