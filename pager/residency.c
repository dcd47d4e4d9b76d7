/* Residency, phase 1 of the plan: walk the steps with a byte capacity; before
 * each step bring in what it touches, evicting what is needed farthest in the
 * future (Belady's MIN, the whole sequence being known) weighted by what the
 * eviction costs: a weight, constant or input is dropped and uploaded again,
 * an activation is spilled to the host once and reloaded. Each stay of a
 * buffer on the GPU becomes an interval of steps. In online mode offsets are
 * chosen as buffers arrive (the fallback when offline placement cannot fit). */
#include <stdlib.h>
#include <string.h>
#include "pager_internal.h"

int pg_ivec_push(ivec *iv, interval it)
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

int pg_make_uses(const pg_problem *pb, uses *u)
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
int pg_next_use(const uses *u, int b, int s)
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


/* Distance to the next use, cyclic for what pg_persists between runs; the final
 * download counts as a use of an output at step n. */
static double eviction_score(sim *S, int b, int s)
{
    const pg_buffer *bf = &S->pb->buffers[b];
    int n = S->pb->n_steps;
    int nu = pg_next_use(S->u, b, s);
    double dist;
    if (nu >= 0)
        dist = nu - s;
    else if (pg_persists(bf))
        dist = n - s + pg_next_use(S->u, b, 0);
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
    int last = S->res[--S->n_res], at = S->res_pos[b];
    S->res[at] = last;
    S->res_pos[last] = at;
    return 0;
}

static int open_interval(sim *S, int b, int start, int load)
{
    interval it = {.buf = b, .start = start, .end = -2, .start2 = -1, .load = load,
                   .size = pg_size(S->p, S->pb->buffers[b].bytes)};
    if (S->online && S->start_off && start == -1)
        it.offset = S->start_off[b];
    int k = pg_ivec_push(&S->iv, it);
    if (k < 0)
        return -1;
    S->res_pos[b] = S->n_res; /* callers open only what is not resident */
    S->res[S->n_res++] = b;
    S->cur[b] = k;
    S->used += it.size;
    return 0;
}

/* Whether a goes out before b: the farthest next use, cost-weighted; ties:
 * the larger, then the lower buffer id. */
static int evict_before(const sim *S, int a, int b)
{
    if (S->score[a] != S->score[b])
        return S->score[a] > S->score[b];
    uint64_t xa = S->pb->buffers[a].bytes, xb = S->pb->buffers[b].bytes;
    return xa != xb ? xa > xb : a < b;
}

static void heap_down(const sim *S, int *h, int n, int i)
{
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && evict_before(S, h[c + 1], h[c]))
            c++;
        if (!evict_before(S, h[c], h[i]))
            return;
        int t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

/* Evicts until `need` more bytes fit before step s. */
static int make_room(sim *S, int s, uint64_t need)
{
    uint64_t cap = S->capv ? S->capv[s] : S->cap;
    if (S->used + need <= cap) {
        if (S->used + need > S->post[s])
            S->post[s] = S->used + need;
        return 0;
    }
    /* A score depends on the step and on the buffer's own state, which an
     * eviction of another leaves alone: each resident's is found once here,
     * and the candidates go into a heap in eviction order (a tight budget
     * evicts ~20 at a step, among thousands resident) */
    int n = 0;
    for (int i = 0; i < S->n_res; i++)
        if (!S->in_step[S->res[i]]) {
            S->score[S->res[i]] = eviction_score(S, S->res[i], s);
            S->heap[n++] = S->res[i];
        }
    for (int i = n / 2 - 1; i >= 0; i--)
        heap_down(S, S->heap, n, i);
    while (S->used + need > cap) {
        if (!n)
            return -1;
        int victim = S->heap[0];
        S->heap[0] = S->heap[--n];
        heap_down(S, S->heap, n, 0);
        const pg_buffer *bf = &S->pb->buffers[victim];
        int how = E_DROP;
        if (bf->kind == PG_ACT && !S->spilled[victim]) {
            how = E_SPILL;
            S->spilled[victim] = 1;
        }
        close_interval(S, victim, s - 1, how);
        S->evictions++;
    }
    if (S->used + need > S->post[s])
        S->post[s] = S->used + need;
    return 0;
}

uint64_t pg_off_of(sim *S, int b) { return S->iv.v[S->cur[b]].offset; }

/* qsort has no context argument in C11; planning is single-threaded per plan,
 * but plans may be built from several threads, so the context is thread-local. */
static _Thread_local sim *occ_sim;
static int cmp_occ(const void *x, const void *y)
{
    uint64_t a = pg_off_of(occ_sim, *(const int *)x), b = pg_off_of(occ_sim, *(const int *)y);
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
        uint64_t next = i < r ? pg_off_of(S, S->occ[i]) : cap;
        if (next >= at && next - at >= size && next - at < best_gap) {
            best = at;
            best_gap = next - at;
        }
        if (i < r) {
            uint64_t e = pg_off_of(S, S->occ[i]) + S->iv.v[S->cur[S->occ[i]]].size;
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
        uint64_t w0 = i < 0 ? 0 : pg_off_of(S, S->occ[i]) + S->iv.v[S->cur[S->occ[i]]].size;
        if (w0 + size > cap)
            continue;
        double cost = 0;
        int ok = 1;
        for (int j = 0; j < r && ok; j++) {
            int x = S->occ[j];
            uint64_t o = pg_off_of(S, x), e = o + S->iv.v[S->cur[x]].size;
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
        uint64_t o = pg_off_of(S, x), e = o + S->iv.v[S->cur[x]].size;
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
int pg_simulate(sim *S, const uint8_t *start_set)
{
    const pg_problem *pb = S->pb;
    int n = pb->n_steps, nb = pb->n_buffers;
    S->iv.n = 0;
    S->used = 0;
    S->evictions = 0;
    S->bad_step = -1;
    memset(S->written, 0, (size_t)nb);
    memset(S->spilled, 0, (size_t)nb);
    S->n_res = 0;
    if (S->resv)
        memset(S->resv, 0, ((size_t)n + 1) * sizeof *S->resv);
    for (int b = 0; b < nb; b++) {
        S->cur[b] = -1;
        S->pro[b] = -1;
        if (start_set && start_set[b]) {
            if (open_interval(S, b, -1, L_PROLOGUE))
                return -1;
            S->pro[b] = S->cur[b];
        }
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
        /* Prefetch: what the next S->prefetch steps must load comes in now
         * if it fits beside this step, so its copy is queued before this
         * step's dispatch and runs beside it. A load for a step t beyond the
         * next holds its bytes over the steps between too: it is made only
         * where each of them, as the same round simulated without prefetch
         * used it, still has room for it beside the loads already held
         * there, so it adds no evictions. */
        /* With more than one step ahead and the steps' times estimated
         * (pg_problem.step_us), the step takes loads only while its time
         * lasts, so a big load goes beside a long step. */
        int timed = pb->step_us && S->prefetch > 1;
        double shadow = timed ? pb->step_us[s] : 0; /* what is left of this step's time for loads */
        if (S->prefetch && !S->online)
            for (int t = s + 1; t < n && t <= s + S->prefetch && (!timed || shadow > 0); t++)
                for (int k = pb->step_start[t]; k < pb->step_start[t + 1]; k++) {
                    int b = pb->step_bufs[k];
                    const pg_buffer *bf = &pb->buffers[b];
                    uint64_t sz = pg_size(S->p, bf->bytes);
                    if (S->cur[b] >= 0 || (bf->kind == PG_ACT && !S->written[b]) ||
                        S->used + sz > (S->capv ? S->capv[s] : S->cap) || (timed && shadow <= 0))
                        continue;
                    int fits = 1; /* t > s + 1: prefetch > 1, so post0 and resv are there */
                    for (int q = s + 1; fits && q < t; q++)
                        fits = S->post0[q] + S->resv[q] + sz <= (S->capv ? S->capv[q] : S->cap);
                    if (!fits)
                        continue;
                    if (open_interval(S, b, s, bf->kind == PG_ACT ? L_RELOAD : L_UPLOAD))
                        return -1;
                    for (int q = s + 1; q < t; q++)
                        S->resv[q] += sz;
                    if (timed)
                        shadow -= pb->load_us + (double)pg_home_bytes(bf) / pb->load_bytes_us;
                }
        /* the step writes its output: a spilled copy is stale now */
        int out = pb->step_bufs[pb->step_start[s + 1] - 1];
        S->written[out] = 1;
        S->spilled[out] = 0;
        /* what no later step needs goes now (outputs wait for the download) */
        for (int k = pb->step_start[s]; k < pb->step_start[s + 1]; k++) {
            int b = pb->step_bufs[k];
            const pg_buffer *bf = &pb->buffers[b];
            if (S->cur[b] < 0 || pg_persists(bf) || bf->is_output || pg_next_use(S->u, b, s + 1) >= 0)
                continue;
            close_interval(S, b, s, E_FREE);
        }
    }
    for (int b = 0; b < nb; b++)
        if (S->cur[b] >= 0 && pb->buffers[b].is_output && !pg_persists(&pb->buffers[b]))
            close_interval(S, b, n, E_DOWNLOAD);
    return 0;
}

/* Brings the end of the run back to start_set: drops the rest, restores the
 * set's missing members, and joins each member's first and last stay. */
int pg_close_run(sim *S, const uint8_t *start_set)
{
    const pg_problem *pb = S->pb;
    int n = pb->n_steps;
    for (int b = 0; b < pb->n_buffers; b++) {
        if (S->cur[b] >= 0 &&
            (!start_set[b] || (S->online && pg_off_of(S, b) != S->start_off[b])))
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
        int at = S->res_pos[b], moved = S->res[--S->n_res];
        S->res[at] = moved;
        S->res_pos[moved] = at;
        /* the first stay (from the prologue), if it is not this one: the last folds into it */
        if (S->pro[b] >= 0 && &S->iv.v[S->pro[b]] != last) {
            interval *it = &S->iv.v[S->pro[b]];
            it->start2 = last->start;
            it->how_end = E_DROP; /* its first stay ended in an eviction */
            last->buf = -1;       /* merged away */
        }
    }
    int m = 0;
    for (int k = 0; k < S->iv.n; k++)
        if (S->iv.v[k].buf >= 0)
            S->iv.v[m++] = S->iv.v[k];
    S->iv.n = m;
    return 0;
}

