/* Tiling of copies (core/tile.c has the rest): a copy from a banded tensor
 * runs as one copy per run of rows that lies in one band; a tensor too big for
 * one band that copies write (concat, pack, a big slice or transpose) lives
 * as bands made ahead of its writers, each writer split at the bands'
 * edges. Each element is copied once, from the same source element, so the
 * values are those of the untiled program. */
#include <stdlib.h>
#include "tile_internal.h"

/* Elements one index of the region's axis `ax` spans: 1 + the reach of the
 * axes inside it. */
static int64_t span_of(const ck_copy_p *c, const int32_t *st, int ax)
{
    int64_t span = 1;
    for (int j = ax + 1; j < c->rank; j++)
        span += (int64_t)(c->dim[j] - 1) * st[j];
    return span;
}

/* The band of root's bandset holding [e, e + span), or -1. */
static int band_at(const bandset *b, int64_t e, int64_t span)
{
    for (int i = 0; i < b->n; i++)
        if (b->v[i].e0 <= e && e < b->v[i].e1)
            return e + span <= b->v[i].e1 ? i : -1;
    return -1;
}

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Does some index i in [0, n) of a writer, whose index i covers
 * [off + i*st, off + i*st + span), straddle element boundary e? */
static int straddles(int64_t off, int64_t st, int64_t span, int64_t n, int64_t e)
{
    /* i with off + i*st < e < off + i*st + span */
    int64_t lo = floor_div(e - span - off, st) + 1, hi = floor_div(e - 1 - off, st);
    if (lo < 0)
        lo = 0;
    if (hi > n - 1)
        hi = n - 1;
    return lo <= hi;
}

/* Can copy w (a writer of a root cut at cut[1..k-1]) be split at the cuts? */
static int writer_fits(const ck_step *w, const int64_t *cut, int k, int64_t *covered)
{
    const ck_copy_p *c = &w->u.copy;
    if (w->kind != CK_COPY || c->rank < 1 || !tile_strides_ok(c->rank, c->out_stride) ||
        !tile_strides_ok(c->rank, c->in_stride))
        return 0;
    int ax = tile_lead_axis(c->rank, c->dim);
    if (ax < 0)
        ax = 0;
    int64_t n = c->dim[ax], st = c->out_stride[ax], span = span_of(c, c->out_stride, ax);
    if (n > 1 && st <= 0)
        return 0;
    int64_t elems = 1;
    for (int j = 0; j < c->rank; j++)
        elems *= c->dim[j];
    *covered += elems;
    for (int i = 1; i < k; i++)
        if (straddles(c->out_offset, st > 0 ? st : 1, span, n, cut[i]))
            return 0;
    return 1;
}

int tile_dest_bands(tiler *T, int root)
{
    bandset *b = &T->bs[root];
    if (b->decided)
        return tile_banded(T, root);
    b->decided = 1;
    core_program *p = T->p;
    const core_tensor *t = &p->tensors[root];
    if (t->kind != PT_ACT || b->n > 0 || tile_rnd(t->bytes) <= T->band_max || t->shape.rank < 1)
        return 0;
    /* bands of whole rows of the root's first axis longer than 1 */
    int ax = 0;
    while (ax < t->shape.rank - 1 && t->shape.d[ax] == 1)
        ax++;
    int64_t rows = t->shape.d[ax], unit = 1;
    for (int j = ax + 1; j < t->shape.rank; j++)
        unit *= t->shape.d[j];
    if (rows < 2 || core_tensor_bytes(t, unit) > T->max_tensor)
        return 0;
    int64_t k = (int64_t)(t->bytes / T->band_max) + 1;
    while (k < rows && core_tensor_bytes(t, (rows + k - 1) / k * unit) > T->band_max)
        k++;
    if (k > rows)
        k = rows;
    int64_t *cut = malloc(((size_t)k + 1) * sizeof *cut);
    if (!cut) {
        T->oom = 1;
        return 0;
    }
    for (int64_t i = 0; i <= k; i++)
        cut[i] = rows * i / k * unit;
    /* every writer a copy split cleanly at the cuts, together writing every
     * element once (else a band could hold what no step wrote) */
    int ok = 1;
    int64_t covered = 0;
    for (int s = 0; s < T->n_orig && ok; s++)
        if (core_storage(p, T->orig[s].out) == root)
            ok = writer_fits(&T->orig[s], cut, (int)k, &covered);
    ok = ok && covered == tile_count(p, root);
    for (int64_t i = 0; i < k && ok && !T->oom; i++) {
        int bt = tile_new_tensor(T, root, cut[i + 1] - cut[i], "[%lld:%lld]", cut[i], cut[i + 1]);
        if (bt < 0 || tile_add_band(T, root, cut[i], cut[i + 1], bt))
            T->oom = 1;
    }
    free(cut);
    return ok && !T->oom;
}

/* The end (at most n) of the run of indices i whose [off + i*st, + span) ends by e1. */
static int64_t run_end(int64_t off, int64_t st, int64_t span, int64_t e1, int64_t n)
{
    if (st == 0)
        return n;
    int64_t last = floor_div(e1 - span - off, st);
    return last + 1 < n ? last + 1 : n;
}

/* One part of copy s: region indices [i0, i1) of axis ax, from src (which
 * holds the source's elements from sbase on) into dst (from dbase on). */
static void emit_part(tiler *T, const ck_step *s, int ax, int64_t i0, int64_t i1, int src,
                      int64_t sbase, int dst, int64_t dbase, int acc)
{
    const ck_copy_p *c = &s->u.copy;
    ck_step ts = *s;
    ts.in[0] = src;
    ts.out = dst;
    ts.u.copy.dim[ax] = (int32_t)(i1 - i0);
    ts.u.copy.in_offset = (int32_t)(c->in_offset + i0 * c->in_stride[ax] - sbase);
    ts.u.copy.out_offset = (int32_t)(c->out_offset + i0 * c->out_stride[ax] - dbase);
    ts.accumulate = acc;
    tile_emit(T, &ts);
}

int tile_copy(tiler *T, const ck_step *s)
{
    core_program *p = T->p;
    const ck_copy_p *c = &s->u.copy;
    int in = s->in[0], sroot = core_storage(p, in), droot = core_storage(p, s->out);
    int sb = tile_banded(T, sroot), db = tile_banded(T, droot) && T->bs[droot].decided;
    if ((!sb && !db) || sroot == droot || c->rank < 1)
        return -1;
    if (!tile_strides_ok(c->rank, c->in_stride) || !tile_strides_ok(c->rank, c->out_stride))
        return -1;
    int ax = tile_lead_axis(c->rank, c->dim);
    if (ax < 0)
        ax = 0;
    if (sb && c->in_stride[ax] == 0 && c->dim[ax] > 1)
        return -1;
    int64_t ispan = span_of(c, c->in_stride, ax), ospan = span_of(c, c->out_stride, ax);
    int first = 1;
    for (int64_t i0 = 0; i0 < c->dim[ax] && !T->oom;) {
        int64_t s0 = c->in_offset + i0 * c->in_stride[ax], o0 = c->out_offset + i0 * c->out_stride[ax];
        int bi = sb ? band_at(&T->bs[sroot], s0, ispan) : -1;
        int bo = db ? band_at(&T->bs[droot], o0, ospan) : -1;
        if (db && bo < 0)
            return first ? -1 : 0; /* tile_dest_bands checked every writer: not reached */
        /* indices only grow along the axis: run on while the last one ends in the band */
        int64_t i1 = c->dim[ax];
        if (sb && bi >= 0)
            i1 = run_end(c->in_offset, c->in_stride[ax], ispan, T->bs[sroot].v[bi].e1, i1);
        else if (sb)
            i1 = i0 + 1;
        if (db)
            i1 = run_end(c->out_offset, c->out_stride[ax], ospan, T->bs[droot].v[bo].e1, i1);
        int src = in;
        int64_t sbase = 0;
        if (sb && bi >= 0) {
            src = T->bs[sroot].v[bi].t;
            sbase = T->bs[sroot].v[bi].e0;
        } else if (sb) { /* one index straddling source bands: a window of it */
            src = tile_get_range(T, in, s0, s0 + ispan);
            sbase = s0;
            if (src < 0)
                return 0;
        }
        int dst = s->out, acc = first ? s->accumulate : 1;
        int64_t dbase = 0;
        if (db) {
            band *v = &T->bs[droot].v[bo];
            dst = v->t;
            dbase = v->e0;
            acc = v->written;
            v->written = 1;
        }
        emit_part(T, s, ax, i0, i1, src, sbase, dst, dbase, acc);
        first = 0;
        i0 = i1;
    }
    return 0;
}
