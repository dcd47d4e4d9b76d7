/* The planner alone, no GPU: random programs (random sizes, fan-in, fan-out,
 * long skip connections, weights used once or many times) at random budgets.
 * Every accepted plan must pass pg_plan_check (budget never exceeded, every
 * buffer resident and filled when used, nothing uploaded twice, no overlaps);
 * a budget below the lower bound must be refused naming a budget that works. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pager.h"
#include "pager_internal.h"

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

typedef struct {
    pg_problem pb;
    int cap_bufs;
} prog;

static int add_buf(prog *g, pg_kind k, uint64_t bytes)
{
    int b = g->pb.n_buffers++;
    g->pb.buffers[b] = (pg_buffer){.bytes = bytes, .kind = k, .tensor = b};
    return b;
}

/* A random program of n steps: each step reads 1-3 earlier activations (often
 * recent, sometimes far back), 0-2 weights (some shared), writes one activation. */
static void make_program(prog *g, int n)
{
    memset(g, 0, sizeof *g);
    int maxb = n * 6 + 8;
    g->pb.buffers = calloc((size_t)maxb, sizeof *g->pb.buffers);
    g->pb.step_start = calloc((size_t)n + 1, sizeof(int));
    g->pb.step_bufs = calloc((size_t)n * 7 + 1, sizeof(int));
    int *acts = calloc((size_t)n + 1, sizeof(int));
    int n_acts = 0, nw_shared = 0, shared[8];
    acts[n_acts++] = add_buf(g, PG_INPUT, 1 + rnd() % 50000);
    for (int i = 0; i < 4; i++) { /* one draw a statement: the order of a call's arguments is the compiler's */
        uint64_t size = 1 + rnd() % 20000;
        shared[nw_shared++] = add_buf(g, rnd() % 3 ? PG_WEIGHT : PG_CONST, size);
    }
    int k = 0;
    for (int s = 0; s < n; s++) {
        g->pb.step_start[s] = k;
        int fan_in = 1 + (int)(rnd() % 3);
        for (int j = 0; j < fan_in; j++) {
            int back = rnd() % 4 == 0 ? (int)(rnd() % (unsigned)n_acts) : (int)(rnd() % 3);
            int a = acts[n_acts - 1 - (back < n_acts ? back : 0)];
            g->pb.step_bufs[k++] = a;
        }
        int nw = (int)(rnd() % 3);
        for (int j = 0; j < nw; j++)
            g->pb.step_bufs[k++] = rnd() % 3 == 0 ? shared[rnd() % 4]
                                                  : add_buf(g, PG_WEIGHT, 4 + rnd() % 300000);
        int out = add_buf(g, PG_ACT, 4 + rnd() % 200000);
        g->pb.step_bufs[k++] = out;
        acts[n_acts++] = out;
    }
    g->pb.step_start[n] = k;
    g->pb.n_steps = n;
    /* the last activation and one random earlier one are outputs */
    g->pb.buffers[acts[n_acts - 1]].is_output = 1;
    g->pb.buffers[acts[1 + rnd() % (unsigned)(n_acts - 1)]].is_output = 1;
    free(acts);
}

static void free_program(prog *g)
{
    free(g->pb.buffers);
    free(g->pb.step_start);
    free(g->pb.step_bufs);
}

static void test_random_programs(void **state)
{
    (void)state;
    int plans = 0, refused = 0;
    for (int iter = 0; iter < 120; iter++) {
        prog g;
        make_program(&g, 5 + (int)(rnd() % 120));
        pg_plan *full = NULL;
        si_error err = {0};
        assert_int_equal(pg_plan_build(&g.pb, 0, 256, &full, &err), SI_OK);
        char msg[256];
        if (pg_plan_check(&g.pb, full, msg, sizeof msg))
            fail_msg("unlimited plan: %s", msg);
        /* no limit: nothing evicted, every weight uploaded once, in the prologue */
        assert_int_equal(full->evictions, 0);
        assert_int_equal(full->bytes_spilled, 0);
        for (int a = 0; a < full->n_actions; a++)
            if (full->actions[a].kind == PA_UPLOAD)
                assert_int_equal(g.pb.buffers[full->actions[a].buf].kind, PG_INPUT);
        uint64_t lb = full->lower_bound;
        for (int t = 0; t < 6; t++) {
            double f = t == 0 ? 0.9 : 1.0 + (rnd() % 1000) / 1000.0 * (t == 5 ? 3.0 : 0.6);
            uint64_t budget = (uint64_t)(lb * f);
            pg_plan *p = NULL;
            si_result st = pg_plan_build(&g.pb, budget, 256, &p, &err);
            if (budget < lb) {
                assert_int_equal(st, SI_ERR_BUDGET);
                assert_non_null(strstr(err.message, "budget"));
                refused++;
                continue;
            }
            if (st == SI_ERR_BUDGET) {
                /* allowed only near the bound, where fragmentation bites */
                if (budget >= lb * 5 / 4)
                    fail_msg("budget %.3f x the lower bound refused: %s", (double)budget / lb,
                             err.message);
                refused++;
                continue;
            }
            assert_int_equal(st, SI_OK);
            assert_true(p->arena_bytes <= budget);
            if (pg_plan_check(&g.pb, p, msg, sizeof msg))
                fail_msg("budget %llu (lb %llu): %s", (unsigned long long)budget,
                         (unsigned long long)lb, msg);
            plans++;
            pg_plan_free(p);
        }
        pg_plan_free(full);
        free_program(&g);
    }
    printf("    %d plans checked, %d budgets refused\n", plans, refused);
    assert_true(plans > 300);
}

static int same_actions(const pg_action *a, const pg_action *b, int n)
{
    for (int i = 0; i < n; i++) /* field by field: the struct has padding */
        if (a[i].kind != b[i].kind || a[i].buf != b[i].buf || a[i].step != b[i].step ||
            a[i].offset != b[i].offset)
            return 0;
    return 1;
}

static int same_plan(const pg_plan *a, const pg_plan *b)
{
    return a->arena_bytes == b->arena_bytes && a->budget == b->budget && a->lower_bound == b->lower_bound &&
           a->lower_bound_step == b->lower_bound_step && a->resident_bytes == b->resident_bytes &&
           a->capacity == b->capacity && a->align == b->align && a->evictions == b->evictions &&
           a->segments == b->segments && a->bytes_uploaded == b->bytes_uploaded &&
           a->bytes_spilled == b->bytes_spilled && a->bytes_reloaded == b->bytes_reloaded &&
           a->bytes_downloaded == b->bytes_downloaded && a->n_prologue == b->n_prologue &&
           a->n_actions == b->n_actions && same_actions(a->prologue, b->prologue, a->n_prologue) &&
           same_actions(a->actions, b->actions, a->n_actions);
}

/* The plan cache's bytes (pager/plan_io.c): a plan written and read back is
 * the same plan; bytes cut short, an index, offset or count out of range, an
 * edit that makes two live buffers overlap, and random byte flips are all
 * refused or read as a plan that passes pg_plan_check (never a crash: run
 * under ASan in make test-asan). */
static void test_plan_bytes(void **state)
{
    (void)state;
    uint64_t others = rng; /* its own random numbers: the other tests' programs stay theirs */
    rng = 0x2545f4914f6cdd1dull;
    int flips_refused = 0;
    for (int iter = 0; iter < 30; iter++) {
        prog g;
        make_program(&g, 5 + (int)(rnd() % 60));
        pg_plan *full = NULL, *p = NULL, *q = NULL;
        si_error err = {0};
        assert_int_equal(pg_plan_build(&g.pb, 0, 256, &full, &err), SI_OK);
        if (pg_plan_build(&g.pb, full->lower_bound * 3 / 2, 256, &p, &err) != SI_OK) {
            pg_plan_free(full); /* refused near the bound (test_random_programs' business) */
            free_program(&g);
            continue;
        }
        uint8_t *b;
        size_t len;
        assert_int_equal(pg_plan_write(p, &b, &len, &err), SI_OK);
        assert_int_equal(pg_plan_read(&g.pb, b, len, &q, &err), SI_OK);
        assert_true(same_plan(p, q));
        pg_plan_free(q);
        /* cut short, or one byte more */
        assert_int_equal(pg_plan_read(&g.pb, b, len - 1 - rnd() % 16, &q, &err), SI_ERR_FORMAT);
        uint8_t *longer = malloc(len + 1);
        memcpy(longer, b, len);
        longer[len] = 0;
        assert_int_equal(pg_plan_read(&g.pb, longer, len + 1, &q, &err), SI_ERR_FORMAT);
        free(longer);
        /* an action naming a buffer past the problem's, and an offset that wraps */
        enum { HDR = 14 * 8, ACT = 17 };
        int n = p->n_prologue + p->n_actions, a = (int)(rnd() % (unsigned)n);
        uint8_t *e = malloc(len);
        memcpy(e, b, len);
        int32_t nb = g.pb.n_buffers;
        memcpy(e + HDR + a * ACT + 1, &nb, 4);
        assert_int_equal(pg_plan_read(&g.pb, e, len, &q, &err), SI_ERR_FORMAT);
        for (int i = 0; i < n; i++) /* a run of step -1 (ASan found the checker reading before the steps) */
            if (b[HDR + i * ACT] == PA_RUN) {
                memcpy(e, b, len);
                int32_t before = -1;
                memcpy(e + HDR + i * ACT + 5, &before, 4);
                assert_int_equal(pg_plan_read(&g.pb, e, len, &q, &err), SI_ERR_FORMAT);
                break;
            }
        for (int i = 0; i < n; i++) /* the first allocation placed at 2^64 - 256 */
            if (e[HDR + i * ACT] == PA_ALLOC) {
                memcpy(e, b, len);
                uint64_t far = UINT64_MAX - 255;
                memcpy(e + HDR + i * ACT + 9, &far, 8);
                assert_int_equal(pg_plan_read(&g.pb, e, len, &q, &err), SI_ERR_FORMAT);
                break;
            }
        /* two allocations at one offset while both live: pg_plan_check's refusal */
        int first = -1;
        for (int i = 0; i < n && first < 0; i++)
            if (e[HDR + i * ACT] == PA_ALLOC)
                first = i;
        memcpy(e, b, len);
        for (int i = first + 1; i < n; i++)
            if (b[HDR + i * ACT] == PA_ALLOC) {
                memcpy(e + HDR + i * ACT + 9, b + HDR + first * ACT + 9, 8);
                break;
            }
        si_result st = pg_plan_read(&g.pb, e, len, &q, &err);
        if (st == SI_OK) { /* the first was freed before: still a valid plan */
            char msg[256];
            assert_int_equal(pg_plan_check(&g.pb, q, msg, sizeof msg), 0);
            pg_plan_free(q);
        }
        /* random flips: refused, or a plan that passes the checker */
        for (int f = 0; f < 40; f++) {
            memcpy(e, b, len);
            e[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
            if (pg_plan_read(&g.pb, e, len, &q, &err) != SI_OK) {
                flips_refused++;
                continue;
            }
            char msg[256];
            if (pg_plan_check(&g.pb, q, msg, sizeof msg))
                fail_msg("a flipped plan was read but fails the checker: %s", msg);
            pg_plan_free(q);
        }
        free(e);
        free(b);
        pg_plan_free(p);
        pg_plan_free(full);
        free_program(&g);
    }
    assert_true(flips_refused > 100);
    rng = others;
}

/* A chain whose activations must all live to the end: only spilling works. */
static void test_forced_spill(void **state)
{
    (void)state;
    prog g;
    memset(&g, 0, sizeof g);
    int n = 10;
    g.pb.buffers = calloc(64, sizeof *g.pb.buffers);
    g.pb.step_start = calloc((size_t)n + 2, sizeof(int));
    g.pb.step_bufs = calloc(64, sizeof(int));
    /* acts[0] is small and needed at the end; the ones between are big, so
     * holding acts[0] through the middle steps does not fit */
    int in = add_buf(&g, PG_INPUT, 8192), prev = in, acts[16], k = 0;
    for (int s = 0; s < n - 1; s++) {
        g.pb.step_start[s] = k;
        g.pb.step_bufs[k++] = prev;
        acts[s] = prev = add_buf(&g, PG_ACT, s == 0 ? 4096 : 8192);
        g.pb.step_bufs[k++] = prev;
    }
    g.pb.step_start[n - 1] = k; /* the last step reads the first and last activations */
    g.pb.step_bufs[k++] = acts[0];
    g.pb.step_bufs[k++] = acts[n - 2];
    int out = add_buf(&g, PG_ACT, 4096);
    g.pb.step_bufs[k++] = out;
    g.pb.buffers[out].is_output = 1;
    g.pb.step_start[n] = k;
    g.pb.n_steps = n;
    pg_plan *p = NULL;
    si_error err = {0};
    assert_int_equal(pg_plan_build(&g.pb, 4 * 4096, 256, &p, &err), SI_OK);
    char msg[256];
    if (pg_plan_check(&g.pb, p, msg, sizeof msg))
        fail_msg("%s", msg);
    assert_true(p->bytes_spilled >= 4096);
    assert_int_equal(p->bytes_reloaded, p->bytes_spilled);
    pg_plan_free(p);
    free_program(&g);
}

/* An output cut into bands (three buffers written by three steps, a weight
 * read between them): their homes lie side by side in the output's layout,
 * so the whole is handed back from the pool; the homes do not overlap the
 * weight's or the input's. */
static void test_band_homes(void **state)
{
    (void)state;
    prog g;
    memset(&g, 0, sizeof g);
    g.pb.buffers = calloc(16, sizeof *g.pb.buffers);
    g.pb.step_start = calloc(8, sizeof(int));
    g.pb.step_bufs = calloc(32, sizeof(int));
    int in = add_buf(&g, PG_INPUT, 4096), k = 0, band[3];
    uint64_t sizes[3] = {1000, 2000, 1004}, at = 0;
    for (int s = 0; s < 3; s++) {
        int w = add_buf(&g, PG_WEIGHT, 512 + 16 * (uint64_t)s);
        g.pb.step_start[s] = k;
        g.pb.step_bufs[k++] = in;
        g.pb.step_bufs[k++] = w;
        band[s] = add_buf(&g, PG_ACT, sizes[s]);
        g.pb.step_bufs[k++] = band[s];
        pg_buffer *x = &g.pb.buffers[band[s]];
        x->is_output = 1;
        x->band_total = 4004;
        x->band_at = at;
        x->band_first = band[0];
        at += sizes[s];
    }
    g.pb.step_start[3] = k;
    g.pb.n_steps = 3;
    pg_plan *p = NULL;
    si_error err = {0};
    assert_int_equal(pg_plan_build(&g.pb, 0, 256, &p, &err), SI_OK);
    int nb = g.pb.n_buffers;
    uint64_t o[16];
    uint64_t total = pg_home_layout(&g.pb, p, o);
    for (int s = 0; s < 3; s++)
        assert_int_equal(o[band[s]], o[band[0]] + g.pb.buffers[band[s]].band_at);
    assert_true(pg_home_floor(&g.pb) <= total); /* a floor under the layout */
    for (int b = 0; b < nb; b++) { /* no two homes overlap, all within the pool */
        uint64_t eb = o[b] + g.pb.buffers[b].bytes;
        assert_true(o[b] != UINT64_MAX && eb <= total);
        for (int c = 0; c < b; c++)
            assert_true(eb <= o[c] || o[c] + g.pb.buffers[c].bytes <= o[b]);
    }
    pg_plan_free(p);
    free_program(&g);
}

/* The host tiers (pg_host_tiers) of random plans: no budget is the plain
 * layout; the smallest budget named in the refusal is accepted and one byte
 * less refused; every budget from it up is accepted (monotone) with the pool
 * within it; every moved buffer has a host side in exactly the tier its kind
 * allows. */
static void test_host_tiers(void **state)
{
    (void)state;
    int checked = 0;
    for (int iter = 0; iter < 40; iter++) {
        prog g;
        make_program(&g, 5 + (int)(rnd() % 80));
        si_error err = {0};
        pg_plan *full = NULL, *p = NULL;
        assert_int_equal(pg_plan_build(&g.pb, 0, 256, &full, &err), SI_OK);
        si_result st = pg_plan_build(&g.pb, full->lower_bound * 3 / 2, 256, &p, &err);
        pg_plan_free(full);
        if (st != SI_OK) {
            free_program(&g);
            continue;
        }
        int nb = g.pb.n_buffers;
        uint64_t *ho = malloc((size_t)nb * sizeof *ho), *fo = malloc((size_t)nb * sizeof *fo);
        uint64_t *plain = malloc((size_t)nb * sizeof *plain);
        uint8_t *tier = malloc((size_t)nb);
        pg_host_plan hp;
        uint64_t all = pg_home_layout(&g.pb, p, plain);
        assert_int_equal(pg_host_tiers(&g.pb, p, 0, ho, fo, tier, &hp, &err), SI_OK);
        assert_int_equal(hp.pool_bytes, all);
        assert_int_equal(hp.file_bytes, 0);
        for (int b = 0; b < nb; b++) {
            assert_int_equal(ho[b], plain[b]);
            assert_int_equal(tier[b], plain[b] == UINT64_MAX ? PG_TIER_NONE : PG_TIER_POOL);
        }
        assert_int_equal(pg_host_tiers(&g.pb, p, 1, ho, fo, tier, &hp, &err), SI_ERR_BUDGET);
        uint64_t least = hp.min_budget;
        char want[64];
        snprintf(want, sizeof want, "(%llu bytes)", (unsigned long long)least);
        assert_non_null(strstr(err.message, "smallest host budget that works"));
        assert_non_null(strstr(err.message, want));
        assert_true(least < all);
        assert_int_equal(pg_host_tiers(&g.pb, p, least - 1, ho, fo, tier, &hp, &err), SI_ERR_BUDGET);
        for (int t = 0; t <= 6; t++) {
            uint64_t budget = t == 0 ? least : least + (all - least) * (uint64_t)t / 6;
            if (pg_host_tiers(&g.pb, p, budget, ho, fo, tier, &hp, &err) != SI_OK)
                fail_msg("host budget %llu refused (smallest %llu): %s", (unsigned long long)budget,
                         (unsigned long long)least, err.message);
            assert_true(hp.pool_bytes <= budget);
            uint64_t sw = 0, ss = 0;
            for (int b = 0; b < nb; b++) {
                const pg_buffer *x = &g.pb.buffers[b];
                assert_int_equal(tier[b] == PG_TIER_NONE, plain[b] == UINT64_MAX);
                assert_int_equal(tier[b] == PG_TIER_POOL, ho[b] != UINT64_MAX);
                assert_int_equal(tier[b] == PG_TIER_FILE, fo[b] != UINT64_MAX);
                if (tier[b] == PG_TIER_POOL)
                    assert_true(ho[b] + x->bytes <= hp.homes_bytes);
                if (tier[b] == PG_TIER_FILE) {
                    assert_int_equal(x->kind, PG_ACT);
                    assert_true(fo[b] + x->bytes <= hp.file_bytes);
                }
                if (tier[b] == PG_TIER_SOURCE) {
                    assert_true(x->kind != PG_ACT);
                    if (x->kind == PG_WEIGHT && x->bytes > sw)
                        sw = x->bytes;
                }
                if (tier[b] == PG_TIER_FILE && x->bytes > ss)
                    ss = x->bytes;
            }
            /* outputs leave the pool last: one in the file means nothing
             * else the run moves kept a home */
            int out_in_file = 0, other_in_pool = 0;
            for (int b = 0; b < nb; b++) {
                const pg_buffer *x = &g.pb.buffers[b];
                out_in_file |= x->is_output && tier[b] == PG_TIER_FILE;
                other_in_pool |= !x->is_output && tier[b] == PG_TIER_POOL;
            }
            assert_false(out_in_file && other_in_pool);
            /* the staging slots hold the largest weight and a spill part */
            assert_true(hp.weight_slot_bytes >= sw);
            assert_true(hp.spill_slot_bytes >= (ss < PG_SPILL_CHUNK ? ss : PG_SPILL_CHUNK));
            checked++;
        }
        free(ho);
        free(fo);
        free(plain);
        free(tier);
        pg_plan_free(p);
        free_program(&g);
    }
    printf("    %d host budgets checked\n", checked);
    assert_true(checked > 150);
}

/* Two intervals meet in time: their stays, or a last stay (to the end) and
 * anything that reaches it. */
static int meet(const interval *a, const interval *b)
{
    if (a->start <= b->end && b->start <= a->end)
        return 1;
    if (b->start2 >= 0 && (b->start2 <= a->end || a->start2 >= 0))
        return 1;
    return a->start2 >= 0 && a->start2 <= b->end;
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = ((const uint64_t *)x)[0], b = ((const uint64_t *)y)[0];
    return a < b ? -1 : a > b;
}

/* Placement (pager/place.c's segment tree over time, joined runs) against the
 * greedy written out plainly: each interval, in a random order, against every
 * one placed before it that it meets, walked by offset; the lowest of the
 * smallest gaps that hold it, else on top. Lifetimes short and long, before
 * the run (-1), resident into the next run (start2), sizes often equal and
 * touching: the offsets must be the same, interval by interval. */
static void test_place_greedy(void **state)
{
    (void)state;
    for (int trial = 0; trial < 60; trial++) {
        int n = 1 + (int)(rnd() % 400), T = 1 + (int)(rnd() % (trial % 3 ? 300 : 5000));
        ivec iv = {calloc((size_t)n, sizeof(interval)), n, n};
        interval **order = calloc((size_t)n, sizeof *order);
        uint64_t(*placed)[2] = calloc((size_t)n, sizeof *placed);
        assert_non_null(iv.v);
        for (int i = 0; i < n; i++) {
            interval *v = &iv.v[i];
            int kind = (int)(rnd() % 10);
            v->start = kind == 0 ? -1 : (int)(rnd() % (unsigned)T);
            int len = kind < 3 ? (int)(rnd() % (unsigned)T) : (int)(rnd() % 8);
            v->end = v->start + len > T ? T : v->start + len;
            if (v->end < v->start)
                v->end = v->start;
            v->start2 = kind == 1 && v->end + 1 < T ? v->end + 1 + (int)(rnd() % (unsigned)(T - v->end)) : -1;
            v->size = 256 * (1 + (rnd() % 4 == 0 ? rnd() % 64 : rnd() % 4));
            v->buf = i;
            order[i] = v;
        }
        for (int i = n - 1; i > 0; i--) { /* a random order */
            int j = (int)(rnd() % (unsigned)(i + 1));
            interval *x = order[i];
            order[i] = order[j];
            order[j] = x;
        }
        uint64_t arena = 0, top = 0;
        assert_int_equal(pg_place_in_order(&iv, order, &arena), 0);
        for (int i = 0; i < n; i++) {
            const interval *it = order[i];
            int m = 0;
            for (int j = 0; j < i; j++)
                if (meet(it, order[j]))
                    placed[m][0] = order[j]->offset, placed[m++][1] = order[j]->size;
            qsort(placed, (size_t)m, sizeof *placed, cmp_u64);
            uint64_t off = 0, best = UINT64_MAX, gap = UINT64_MAX;
            for (int j = 0; j < m; j++) {
                if (placed[j][0] >= off && placed[j][0] - off >= it->size && placed[j][0] - off < gap) {
                    best = off;
                    gap = placed[j][0] - off;
                }
                if (placed[j][0] + placed[j][1] > off)
                    off = placed[j][0] + placed[j][1];
            }
            uint64_t want = best != UINT64_MAX ? best : off;
            if (it->offset != want)
                fail_msg("trial %d, interval %d of %d placed at %llu, the greedy puts it at %llu", trial,
                         i, n, (unsigned long long)it->offset, (unsigned long long)want);
            if (it->offset + it->size > top)
                top = it->offset + it->size;
        }
        assert_int_equal(arena, top);
        free(iv.v);
        free(order);
        free(placed);
    }
}

/* The search's shortcuts (a round that would repeat the one before counted,
 * not run; a placement of the same stays taken again) and the placement
 * orders run on threads (1,024 stays and more) make the plan every round run
 * in full on one thread makes, byte for byte; near the lower bound, where the
 * search takes many rounds. The shortcuts must have been taken. */
static void test_search_shortcuts(void **state)
{
    (void)state;
    int plans = 0, skipped = 0, reused = 0, big = 0;
    for (int iter = 0; iter < 40; iter++) {
        prog g;
        make_program(&g, iter % 10 == 0 ? 600 + (int)(rnd() % 300) : 20 + (int)(rnd() % 150));
        pg_plan *full = NULL;
        si_error err = {0};
        assert_int_equal(pg_plan_build(&g.pb, 0, 256, &full, &err), SI_OK);
        uint64_t lb = full->lower_bound;
        for (int t = 0; t < 4; t++) {
            uint64_t budget = lb + lb * (rnd() % 300) / 1000;
            pg_plan *a = NULL, *b = NULL;
            pg_options quick = {0}, slow = {.no_shortcuts = 1};
            si_result sa = pg_plan_build_with(&g.pb, budget, 256, &quick, &a, &err);
            si_result sb = pg_plan_build_with(&g.pb, budget, 256, &slow, &b, &err);
            assert_int_equal(sa, sb);
            if (sa == SI_OK) {
                if (!same_plan(a, b))
                    fail_msg("budget %.3f x the lower bound: the shortcuts changed the plan",
                             (double)budget / lb);
                assert_int_equal(b->rounds_skipped + b->placements_reused, 0);
                assert_true(a->rounds + a->rounds_skipped == b->rounds);
                skipped += a->rounds_skipped;
                reused += a->placements_reused;
                big += g.pb.n_steps >= 600;
                plans++;
            }
            pg_plan_free(a);
            pg_plan_free(b);
        }
        pg_plan_free(full);
        free_program(&g);
    }
    printf("    %d plans the same (%d of programs of 600+ steps); %d rounds skipped, %d placements reused\n",
           plans, big, skipped, reused);
    assert_true(plans > 100 && big > 0 && skipped > 0 && reused > 0);
}

/* Near the lower bound the search once crept: each round lowered the
 * capacity where stays overflowed by just their overflow, and placement then
 * overflowed by the same few KiB elsewhere, round after round (frcnn-irv2 at
 * f16 and 2.3M: 145 rounds of 353k steps, 75 s; here, before the change, 446
 * plans, up to 234 rounds, 61 over 20). A round that does not lower the least
 * overflow so far doubles what the next lowers by: every plan within 20% of
 * its lower bound here takes at most 40 rounds, run or skipped (after the
 * change: 452 plans, at most 23 rounds, 3 over 20; with the capacity lowered
 * from the steps' use where a round does not improve: 448, at most 17, none
 * over 20). */
static void test_search_converges(void **state)
{
    (void)state;
    uint64_t saved = rng;
    rng = 0x5eed0f5ea7c4ull;
    int plans = 0, most = 0, over20 = 0;
    for (int iter = 0; iter < 60; iter++) {
        prog g;
        make_program(&g, iter % 5 == 0 ? 600 + (int)(rnd() % 600) : 50 + (int)(rnd() % 250));
        pg_plan *full = NULL;
        si_error err = {0};
        assert_int_equal(pg_plan_build(&g.pb, 0, 256, &full, &err), SI_OK);
        uint64_t lb = full->lower_bound;
        for (int t = 0; t < 8; t++) {
            uint64_t budget = lb + lb * (rnd() % 200) / 1000;
            pg_plan *a = NULL;
            if (pg_plan_build(&g.pb, budget, 256, &a, &err) == SI_OK) {
                char msg[256];
                if (pg_plan_check(&g.pb, a, msg, sizeof msg))
                    fail_msg("budget %.3f x the lower bound: %s", (double)budget / lb, msg);
                int r = a->rounds + a->rounds_skipped;
                most = r > most ? r : most;
                over20 += r > 20;
                plans++;
            }
            pg_plan_free(a);
        }
        pg_plan_free(full);
        free_program(&g);
    }
    rng = saved;
    printf("    %d plans within 20%% of the lower bound: at most %d rounds, %d over 20\n", plans, most, over20);
    assert_true(plans > 300);
    assert_true(most <= 40);
    /* lowered from the capacity alone in every round: 3 over 20 */
    assert_true(over20 == 0);
}

/* A budget is refused with no search where its largest step cannot fit beside
 * the driver's share of the least pool any plan within it has
 * (runtime/budget.c): pg_home_floor plus what of pg_live_peak is over A is at
 * most the pool of any plan whose arena is at most A (the activations alive at
 * a step that do not fit A are in their homes then), and pg_lower_bound is
 * the plan's own lower bound. Random programs at budgets from their lower
 * bound to 4x (many spill; a pool under that floor would let runtime/budget.c
 * refuse a budget a plan fits). */
static void test_home_floor_within(void **state)
{
    (void)state;
    uint64_t saved = rng;
    rng = 0xf100f5ull;
    int plans = 0, above = 0;
    for (int iter = 0; iter < 80; iter++) {
        prog g;
        make_program(&g, 20 + (int)(rnd() % 300));
        pg_plan *full = NULL;
        si_error err = {0};
        assert_int_equal(pg_plan_build(&g.pb, 0, 256, &full, &err), SI_OK);
        uint64_t lb = full->lower_bound;
        assert_int_equal(pg_lower_bound(&g.pb, 256), lb);
        uint64_t *o = malloc(((size_t)g.pb.n_buffers + 1) * sizeof *o);
        assert_non_null(o);
        for (int t = 0; t < 6; t++) {
            uint64_t budget = lb + lb * (rnd() % 3000) / 1000;
            pg_plan *p = NULL;
            if (pg_plan_build(&g.pb, budget, 256, &p, &err) != SI_OK)
                continue;
            uint64_t pool = pg_home_layout(&g.pb, p, o), live = pg_live_peak(&g.pb);
            uint64_t floor = pg_home_floor(&g.pb) + (live > p->arena_bytes ? live - p->arena_bytes : 0);
            if (floor > pool)
                fail_msg("budget %.3f x the lower bound: a pool of %llu bytes under its floor %llu", (double)budget / lb,
                         (unsigned long long)pool, (unsigned long long)floor);
            above += floor > pg_home_floor(&g.pb);
            plans++;
            pg_plan_free(p);
        }
        free(o);
        pg_plan_free(full);
        free_program(&g);
    }
    rng = saved;
    printf("    %d plans over their pools' floors, %d of them above the floor of the kept homes\n", plans, above);
    assert_true(plans > 300 && above > 50);
}

/* A program of one random block of m steps repeated r times (each repeat
 * with buffers of its own, of the same sizes, reading the last repeat's
 * output): what a network of repeated blocks (Inception-ResNet, a
 * transformer's layers) is to the planner. */
static void make_repeated(prog *g, int m, int r)
{
    memset(g, 0, sizeof *g);
    int n = m * r;
    g->pb.buffers = calloc((size_t)n * 4 + 8, sizeof *g->pb.buffers);
    g->pb.step_start = calloc((size_t)n + 1, sizeof(int));
    g->pb.step_bufs = calloc((size_t)n * 6 + 1, sizeof(int));
    int *back = calloc((size_t)m * 2, sizeof(int)), *wsz = calloc((size_t)m * 2, sizeof(int));
    int *asz = calloc((size_t)m, sizeof(int)), *acts = calloc((size_t)n + 1, sizeof(int));
    for (int j = 0; j < m; j++) {
        back[2 * j] = 1 + (int)(rnd() % 2);
        back[2 * j + 1] = rnd() % 3 ? 0 : 1 + (int)(rnd() % (unsigned)(j + 1)); /* 0: none */
        wsz[2 * j] = rnd() % 4 ? 4 + (int)(rnd() % 200000) : 0;
        wsz[2 * j + 1] = rnd() % 4 == 0 ? 4 + (int)(rnd() % 100000) : 0;
        static const int sizes[4] = {497664, 82944, 69120, 55296};
        asz[j] = sizes[rnd() % 4];
        wsz[2 * j] = wsz[2 * j] ? sizes[1 + rnd() % 3] : 0;
        if (j == m - 1) /* the block's end adds its input (a residual) */
            back[2 * j + 1] = m;
    }
    int k = 0, n_acts = 0;
    acts[n_acts++] = add_buf(g, PG_INPUT, 1 + rnd() % 50000);
    for (int s = 0; s < n; s++) {
        int j = s % m;
        g->pb.step_start[s] = k;
        for (int i = 0; i < 2; i++) {
            int b = back[2 * j + i];
            if (b && (i == 0 || b <= j + 1 || j == m - 1)) /* within the repeat, or to its input */
                g->pb.step_bufs[k++] = acts[n_acts - (b < n_acts ? b : n_acts)];
        }
        for (int i = 0; i < 2; i++)
            if (wsz[2 * j + i])
                g->pb.step_bufs[k++] = add_buf(g, PG_WEIGHT, (uint64_t)wsz[2 * j + i]);
        int out = add_buf(g, PG_ACT, (uint64_t)asz[j]);
        g->pb.step_bufs[k++] = out;
        acts[n_acts++] = out;
    }
    g->pb.step_start[n] = k;
    g->pb.n_steps = n;
    g->pb.buffers[acts[n_acts - 1]].is_output = 1;
    free(back);
    free(wsz);
    free(asz);
    free(acts);
}

/* A stall that moves (frcnn-irv2 at 5,477,996 bytes: 105 rounds, each
 * lowering the capacity at one Inception-ResNet block, whose overflow then
 * came back the same one block on) is lowered at every repeat of the program
 * at once. Programs of repeated blocks (sizes from frcnn-irv2's stall) near
 * their lower bound: every plan is checked, none takes more rounds than
 * without the repeats lowered (pg_options.no_repeats), no budget accepted
 * without is refused, and the stall is met (3 plans of 633; with the capacity
 * lowered from the steps' use in rounds that do not improve, stalls are rarer:
 * the seed is one whose programs still meet them). */
static void test_search_repeats(void **state)
{
    (void)state;
    uint64_t saved = rng;
    rng = 0xabcdef1ull;
    int plans = 0, moved = 0, rounds = 0, rounds_without = 0;
    for (int iter = 0; iter < 80; iter++) {
        prog g;
        int r = 20 + (int)(rnd() % 40); /* drawn apart: clang and gcc order a call's arguments differently */
        make_repeated(&g, 8 + (int)(rnd() % 30), r);
        pg_plan *full = NULL;
        si_error err = {0};
        assert_int_equal(pg_plan_build(&g.pb, 0, 256, &full, &err), SI_OK);
        uint64_t lb = full->lower_bound;
        for (int t = 0; t < 8; t++) {
            uint64_t budget = lb + lb * (rnd() % 400) / 1000;
            pg_plan *a = NULL, *b = NULL;
            pg_options without = {.no_repeats = 1};
            si_result sa = pg_plan_build(&g.pb, budget, 256, &a, &err);
            si_result sb = pg_plan_build_with(&g.pb, budget, 256, &without, &b, &err);
            if (sa == SI_OK) {
                char msg[256];
                if (pg_plan_check(&g.pb, a, msg, sizeof msg))
                    fail_msg("budget %.3f x the lower bound: %s", (double)budget / lb, msg);
                plans++;
            }
            if (sb == SI_OK && sa != SI_OK)
                fail_msg("budget %.3f x the lower bound: refused, accepted without the repeats lowered",
                         (double)budget / lb);
            if (sa == SI_OK && sb == SI_OK) {
                int ra = a->rounds + a->rounds_skipped, rb = b->rounds + b->rounds_skipped;
                if (ra > rb)
                    fail_msg("budget %.3f x the lower bound: %d rounds, %d without the repeats lowered",
                             (double)budget / lb, ra, rb);
                moved += ra != rb;
                rounds += ra;
                rounds_without += rb;
            }
            pg_plan_free(a);
            pg_plan_free(b);
        }
        pg_plan_free(full);
        free_program(&g);
    }
    rng = saved;
    printf("    %d plans of repeated blocks; %d with a stall that moved: %d rounds in all, %d without\n", plans,
           moved, rounds, rounds_without);
    assert_true(plans > 500 && moved > 0 && rounds < rounds_without);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_programs),
                                       cmocka_unit_test(test_plan_bytes),
                                       cmocka_unit_test(test_forced_spill),
                                       cmocka_unit_test(test_host_tiers),
                                       cmocka_unit_test(test_band_homes),
                                       cmocka_unit_test(test_place_greedy),
                                       cmocka_unit_test(test_search_shortcuts),
                                       cmocka_unit_test(test_search_converges),
                                       cmocka_unit_test(test_search_repeats),
                                       cmocka_unit_test(test_home_floor_within)};
    return cmocka_run_group_tests_name("planner", tests, NULL, NULL);
}
