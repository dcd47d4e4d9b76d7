/* Offset allocator: an address-ordered list of free ranges, best fit, and
 * coalescing on release. The top of the range grows on demand up to capacity. */
#include <stdlib.h>
#include "pager.h"

typedef struct {
    uint64_t off, len;
} range;

struct pg_arena {
    uint64_t capacity, top, high, in_use;
    range *free;
    int n_free, cap_free;
};

pg_arena *pg_arena_new(uint64_t capacity)
{
    pg_arena *a = calloc(1, sizeof *a);
    if (a)
        a->capacity = capacity ? capacity : UINT64_MAX;
    return a;
}

void pg_arena_free_all(pg_arena *a)
{
    if (a)
        free(a->free);
    free(a);
}

int pg_arena_alloc(pg_arena *a, uint64_t bytes, uint64_t *offset)
{
    int best = -1;
    for (int i = 0; i < a->n_free; i++)
        if (a->free[i].len >= bytes && (best < 0 || a->free[i].len < a->free[best].len))
            best = i;
    if (best >= 0) {
        *offset = a->free[best].off;
        a->free[best].off += bytes;
        a->free[best].len -= bytes;
        if (a->free[best].len == 0) {
            for (int i = best; i + 1 < a->n_free; i++)
                a->free[i] = a->free[i + 1];
            a->n_free--;
        }
    } else {
        /* A free range touching the top can be extended instead of wasted. */
        uint64_t start = a->top;
        if (a->n_free > 0 && a->free[a->n_free - 1].off + a->free[a->n_free - 1].len == a->top)
            start = a->free[a->n_free - 1].off;
        if (start + bytes > a->capacity || start + bytes < start)
            return -1;
        if (start != a->top)
            a->n_free--;
        *offset = start;
        a->top = start + bytes;
        if (a->top > a->high)
            a->high = a->top;
    }
    a->in_use += bytes;
    return 0;
}

void pg_arena_release(pg_arena *a, uint64_t off, uint64_t bytes)
{
    a->in_use -= bytes;
    if (off + bytes == a->top) {
        a->top = off;
        /* the new top may now touch a free range: fold it in */
        while (a->n_free > 0 && a->free[a->n_free - 1].off + a->free[a->n_free - 1].len == a->top) {
            a->top = a->free[a->n_free - 1].off;
            a->n_free--;
        }
        return;
    }
    int i = 0;
    while (i < a->n_free && a->free[i].off < off)
        i++;
    int merged = 0;
    if (i > 0 && a->free[i - 1].off + a->free[i - 1].len == off) {
        a->free[i - 1].len += bytes;
        merged = 1;
        if (i < a->n_free && off + bytes == a->free[i].off) {
            a->free[i - 1].len += a->free[i].len;
            for (int k = i; k + 1 < a->n_free; k++)
                a->free[k] = a->free[k + 1];
            a->n_free--;
        }
    } else if (i < a->n_free && off + bytes == a->free[i].off) {
        a->free[i].off = off;
        a->free[i].len += bytes;
        merged = 1;
    }
    if (merged)
        return;
    if (a->n_free == a->cap_free) {
        int cap = a->cap_free ? a->cap_free * 2 : 64;
        range *f = realloc(a->free, (size_t)cap * sizeof *f);
        if (!f)
            return; /* the range is lost to fragmentation, never to corruption */
        a->free = f;
        a->cap_free = cap;
    }
    for (int k = a->n_free; k > i; k--)
        a->free[k] = a->free[k - 1];
    a->free[i] = (range){off, bytes};
    a->n_free++;
}

uint64_t pg_arena_high(const pg_arena *a) { return a->high; }
uint64_t pg_arena_in_use(const pg_arena *a) { return a->in_use; }
