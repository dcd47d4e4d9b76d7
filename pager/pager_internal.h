/* pager internals shared by its files: the stays of buffers on the GPU
 * (intervals) that the residency simulation (residency.c) makes, placement
 * (place.c) gives offsets and plan.c turns into actions. Not part of pager.h. */
#ifndef SI_PAGER_INTERNAL_H
#define SI_PAGER_INTERNAL_H

#include <stdint.h>
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


/* Uses of every buffer in step order (CSR), for next-use queries. */
typedef struct {
    int *start, *steps;
} uses;

typedef struct {
    const pg_problem *pb;
    const uses *u;
    const pg_plan *p;
    uint64_t cap;
    /* state */
    int *cur;          /* open interval per buffer, -1 if not resident */
    /* the buffers resident now (cur >= 0), in no order, and each one's place
     * there: eviction looks at these, not at every buffer of the model */
    int *res, *res_pos, n_res;
    int *pro;          /* per buffer: its prologue stay (interval index), -1 */
    uint8_t *written;  /* activation has been produced */
    uint8_t *spilled;  /* its host copy is current */
    double *score;     /* make_room's eviction scores, per buffer */
    int *heap;         /* make_room's candidates, best on top */
    uint64_t *post;    /* per step: bytes in use with its loads, after make_room's
                        * evictions, the most over the runs since it was zeroed:
                        * a capacity at s of at least this changes nothing there */
    uint8_t *in_step;
    uint64_t used;
    ivec iv;
    uint64_t evictions;
    int bad_step;
    int prefetch;      /* load the buffers of the next `prefetch` steps early where they fit */
    uint64_t *post0;   /* prefetch > 1: post of the same round simulated without prefetch */
    uint64_t *resv;    /* prefetch > 1: per step, bytes held there by loads made for later steps */
    uint64_t *capv;    /* per step: the byte limit there (lowered where placement overflowed) */
    /* Online mode: offsets are chosen as the buffers arrive, inside [0, arena_cap),
     * evicting by address when no gap is big enough (the fallback when offline
     * placement of the stays cannot fit: it sees fragmentation as it happens). */
    int online;
    uint64_t arena_cap;
    uint64_t *start_off;  /* where the resident set lives between runs */
    int *occ;             /* scratch: resident buffers sorted by offset */
} sim;

static inline int pg_persists(const pg_buffer *b) { return b->kind == PG_WEIGHT || b->kind == PG_CONST; }

/* residency.c */
/* A range [off, end) of bytes; kept sorted and none overlapping, a set of
 * them answers what a new range meets with one search. */
typedef struct {
    uint64_t off, end;
} pg_span;

/* The first of the n sorted, disjoint spans that ends above at (n if none):
 * a range [at, e) meets one of them exactly where it meets this one (its
 * off < e), and is inserted before it where it meets none. */
static inline int pg_span_after(const pg_span *s, int n, uint64_t at)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (s[mid].end <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int pg_ivec_push(ivec *iv, interval it);
int pg_make_uses(const pg_problem *pb, uses *u);
int pg_next_use(const uses *u, int b, int s);
/* One run from the resident set start_set (NULL: empty): 0, 1 where a step
 * found no room (S->bad_step), -1 out of memory. */
int pg_simulate(sim *S, const uint8_t *start_set);
/* Brings the end of the run back to start_set; -1 out of memory. */
int pg_close_run(sim *S, const uint8_t *start_set);
uint64_t pg_off_of(sim *S, int b);

/* place.c: offsets for every interval, the smallest arena of a few orders
 * (debug: each order's arena on stderr); -1 out of memory. pl: what the
 * orders keep between calls (their trees' memory), from pg_placer_new. */
typedef struct pg_placer pg_placer;
pg_placer *pg_placer_new(void);
void pg_placer_free(pg_placer *pl);
int pg_place(pg_placer *pl, ivec *iv, uint64_t *arena, int debug);
/* One greedy pass in the given order (pointers to every interval of iv): each
 * at the lowest best-fitting gap free over its lifetime (its stay, and its
 * last stay to the end when start2 >= 0), else on top; -1 out of memory. */
int pg_place_in_order(ivec *iv, interval **order, uint64_t *arena);

#endif
