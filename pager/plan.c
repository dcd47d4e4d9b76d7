/* The plan. For now every weight and constant stays resident and every
 * activation lives from its first to its last use; the budget is checked, not
 * yet met by paging (see the "budgeted plan" issue). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include "pager.h"

static si_status fail(si_error *err, si_status st, const char *msg)
{
    if (err) {
        err->status = st;
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return st;
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

static uint64_t rounded(uint64_t bytes, uint32_t align)
{
    uint64_t b = bytes ? bytes : 4;
    return (b + align - 1) / align * align;
}

si_status pg_plan_build(const pg_problem *pb, uint64_t budget, uint32_t align, pg_plan **out,
                        si_error *err)
{
    if (align == 0 || (align & (align - 1)))
        return fail(err, SI_ERR_ARG, "pager: alignment must be a power of two");
    pg_plan *p = calloc(1, sizeof *p);
    int *last = malloc(((size_t)pb->n_buffers + 1) * sizeof *last);
    int *first = malloc(((size_t)pb->n_buffers + 1) * sizeof *first);
    pg_arena *a = pg_arena_new(0);
    alist pro = {0}, act = {0};
    si_status st = SI_OK;
    if (!p || !last || !first || !a ||
        !(p->offset = calloc((size_t)pb->n_buffers + 1, sizeof *p->offset))) {
        st = fail(err, SI_ERR_NOMEM, "out of memory");
        goto done;
    }
    p->budget = budget;
    p->align = align;
    for (int b = 0; b < pb->n_buffers; b++)
        first[b] = last[b] = -1;
    for (int s = 0; s < pb->n_steps; s++) {
        uint64_t ws = 0;
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            if (first[b] < 0)
                first[b] = s;
            last[b] = s;
            /* a buffer listed twice (x + x) counts once */
            int dup = 0;
            for (int j = pb->step_start[s]; j < k; j++)
                dup |= pb->step_bufs[j] == b;
            if (!dup)
                ws += rounded(pb->buffers[b].bytes, align);
        }
        if (ws > p->lower_bound)
            p->lower_bound = ws;
    }
    int fail_alloc = 0;
    /* Resident: weights and constants, placed first, kept between runs. */
    for (int b = 0; b < pb->n_buffers; b++) {
        pg_kind k = pb->buffers[b].kind;
        if (k != PG_WEIGHT && k != PG_CONST)
            continue;
        uint64_t sz = rounded(pb->buffers[b].bytes, align);
        fail_alloc |= pg_arena_alloc(a, sz, &p->offset[b]);
        fail_alloc |= push(&pro, PA_ALLOC, b, -1, p->offset[b]);
        fail_alloc |= push(&pro, PA_UPLOAD, b, -1, p->offset[b]);
        p->resident_bytes += sz;
    }
    /* Per run: inputs and activations from first use to last use. Outputs stay
     * until they are downloaded at the end. */
    for (int s = 0; s < pb->n_steps && !fail_alloc; s++) {
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            pg_kind kind = pb->buffers[b].kind;
            if (first[b] != s || kind == PG_WEIGHT || kind == PG_CONST)
                continue;
            int dup = 0;
            for (int j = pb->step_start[s]; j < k; j++)
                dup |= pb->step_bufs[j] == b;
            if (dup)
                continue;
            fail_alloc |= pg_arena_alloc(a, rounded(pb->buffers[b].bytes, align), &p->offset[b]);
            fail_alloc |= push(&act, PA_ALLOC, b, s, p->offset[b]);
            if (kind == PG_INPUT)
                fail_alloc |= push(&act, PA_UPLOAD, b, s, p->offset[b]);
        }
        if (pg_arena_in_use(a) > p->peak_bytes)
            p->peak_bytes = pg_arena_in_use(a);
        fail_alloc |= push(&act, PA_RUN, -1, s, 0);
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            pg_kind kind = pb->buffers[b].kind;
            if (last[b] != s || kind == PG_WEIGHT || kind == PG_CONST || pb->buffers[b].is_output)
                continue;
            int dup = 0;
            for (int j = pb->step_start[s]; j < k; j++)
                dup |= pb->step_bufs[j] == b;
            if (dup)
                continue;
            pg_arena_release(a, p->offset[b], rounded(pb->buffers[b].bytes, align));
            fail_alloc |= push(&act, PA_FREE, b, s, p->offset[b]);
        }
    }
    for (int b = 0; b < pb->n_buffers && !fail_alloc; b++) {
        if (!pb->buffers[b].is_output || first[b] < 0 || pb->buffers[b].kind == PG_WEIGHT ||
            pb->buffers[b].kind == PG_CONST)
            continue;
        fail_alloc |= push(&act, PA_DOWNLOAD, b, -1, p->offset[b]);
        pg_arena_release(a, p->offset[b], rounded(pb->buffers[b].bytes, align));
        fail_alloc |= push(&act, PA_FREE, b, -1, p->offset[b]);
    }
    if (fail_alloc) {
        st = fail(err, SI_ERR_NOMEM, "out of memory while planning");
        goto done;
    }
    if (p->peak_bytes < p->resident_bytes)
        p->peak_bytes = p->resident_bytes;
    p->arena_bytes = pg_arena_high(a);
    if (budget && p->arena_bytes > budget) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "the plan needs %llu bytes of GPU memory but the budget is %llu bytes "
                 "(this build keeps every weight resident; smallest budget that works: %llu bytes)",
                 (unsigned long long)p->arena_bytes, (unsigned long long)budget,
                 (unsigned long long)p->arena_bytes);
        st = fail(err, SI_ERR_BUDGET, msg);
        goto done;
    }
    p->prologue = pro.a;
    p->n_prologue = pro.n;
    p->actions = act.a;
    p->n_actions = act.n;
    pro.a = act.a = NULL;
    *out = p;
    p = NULL;
done:
    free(pro.a);
    free(act.a);
    free(first);
    free(last);
    pg_arena_free_all(a);
    pg_plan_free(p);
    return st;
}

void pg_plan_free(pg_plan *p)
{
    if (!p)
        return;
    free(p->prologue);
    free(p->actions);
    free(p->offset);
    free(p);
}
