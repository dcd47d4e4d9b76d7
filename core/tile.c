/* Tiling: a program transform that splits steps so that no step's working set
 * (the bytes of the buffers it touches) is over a limit, and no buffer a step
 * binds is over the device's limit for one buffer (max_tensor), whatever the
 * budget: a tensor bigger than that lives only as bands.
 *
 * A big tensor is never made whole: its producer is split along output rows
 * and each part writes its own tensor, a *band* (a contiguous range of the
 * tensor's elements: with batch 1, rows of NHWC are contiguous). A consumer
 * split the same way reads, for each of its parts, the window of input rows
 * that part needs (with the halo of a kernel): the band itself when it is
 * exactly that range, else a window tensor assembled by copies from the bands
 * it overlaps. Each part is the same kernel on a sub-tensor with shifted
 * padding (convolution, depthwise, pooling), shifted source rows (resize), or
 * fewer rows (elementwise, matmul rows, reductions over an outer axis); a
 * reduction over the rows themselves runs its parts in order, each starting
 * from the result of the parts before, so every output element is computed by
 * the same arithmetic in the same order as without tiling: bitwise identical.
 * Where the weights dominate (a MatMul or convolution whose weights alone are
 * over the limit), the output channels are split instead, with host slices of
 * the weights, and the parts copied into the whole output.
 *
 * What cannot be split (or a banded tensor that a step needs whole) is made
 * whole by copies from its bands, and the planner sees the rest; an output too
 * big for one buffer stays as bands, read back band by band. Copies (concat
 * included) are split in core/tile_copy.c, output channels in
 * core/tile_channels.c; how each kernel kind splits is its rule
 * (core/tile_rules.c), named by the tiling column of CK_KINDS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tile_internal.h"

uint64_t tile_rnd(uint64_t b)
{
    if (!b)
        b = 4;
    return (b + TILE_ALIGN - 1) / TILE_ALIGN * TILE_ALIGN;
}

int64_t tile_count(const core_program *p, int t) { return core_shape_count(&p->tensors[t].shape); }

static int grow_bs(tiler *T)
{
    if (T->p->n_tensors <= T->cap_bs)
        return 0;
    int cap = T->p->n_tensors * 2 + 16;
    bandset *nb = realloc(T->bs, (size_t)cap * sizeof *nb);
    if (!nb)
        return -1;
    memset(nb + T->cap_bs, 0, (size_t)(cap - T->cap_bs) * sizeof *nb);
    T->bs = nb;
    T->cap_bs = cap;
    return 0;
}

/* A new activation like tensor `like`, count elements, named after it. */
int tile_new_tensor(tiler *T, int like, int64_t count, const char *fmt, int64_t a, int64_t b)
{
    core_program *p = T->p;
    if (p->n_tensors == p->cap_tensors) {
        int cap = p->cap_tensors ? p->cap_tensors * 2 : 256;
        core_tensor *nt = realloc(p->tensors, (size_t)cap * sizeof *nt);
        if (!nt) {
            T->oom = 1;
            return -1;
        }
        p->tensors = nt;
        p->cap_tensors = cap;
    }
    int id = p->n_tensors++;
    core_tensor *t = &p->tensors[id];
    const core_tensor *l = &p->tensors[like];
    memset(t, 0, sizeof *t);
    char nm[64];
    snprintf(nm, sizeof nm, fmt, (long long)a, (long long)b);
    size_t ln = strlen(l->name ? l->name : "?");
    t->name = malloc(ln + strlen(nm) + 1);
    if (t->name) {
        memcpy(t->name, l->name ? l->name : "?", ln);
        strcpy(t->name + ln, nm);
    }
    t->dtype = l->dtype;
    t->shape.rank = 1;
    t->shape.d[0] = count;
    t->half = l->half;
    t->bytes = core_tensor_bytes(t, count);
    t->kind = PT_ACT;
    t->weight = t->input = t->alias_of = -1;
    if (grow_bs(T)) {
        T->oom = 1;
        return -1;
    }
    return id;
}

void tile_emit(tiler *T, const ck_step *s)
{
    if (T->n_steps == T->cap_steps) {
        int cap = T->cap_steps ? T->cap_steps * 2 : 1024;
        ck_step *ns = realloc(T->steps, (size_t)cap * sizeof *ns);
        if (!ns) {
            T->oom = 1;
            return;
        }
        T->steps = ns;
        T->cap_steps = cap;
    }
    T->steps[T->n_steps] = *s;
    T->steps[T->n_steps].node = T->node;
    T->n_steps++;
}

/* out[out_off..+n) = in[in_off..+n) */
static void emit_copy(tiler *T, int in, int64_t in_off, int out, int64_t out_off, int64_t n, int acc)
{
    ck_step c = {.kind = CK_COPY, .n_in = 1, .out = out, .accumulate = acc};
    c.in[0] = in;
    c.u.copy.rank = 1;
    c.u.copy.dim[0] = (int32_t)n;
    c.u.copy.in_stride[0] = c.u.copy.out_stride[0] = 1;
    c.u.copy.in_offset = (int32_t)in_off;
    c.u.copy.out_offset = (int32_t)out_off;
    tile_emit(T, &c);
}

int tile_banded(const tiler *T, int root) { return T->bs[root].n > 0 && !T->bs[root].whole; }

int tile_add_band(tiler *T, int root, int64_t e0, int64_t e1, int t)
{
    bandset *b = &T->bs[root];
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 8;
        band *nv = realloc(b->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        b->v = nv;
        b->cap = cap;
    }
    b->v[b->n++] = (band){e0, e1, t, 0};
    return 0;
}

/* The root holds its value: copies from its bands. */
void tile_materialize(tiler *T, int root)
{
    if (!tile_banded(T, root))
        return;
    bandset *b = &T->bs[root];
    for (int i = 0; i < b->n; i++)
        emit_copy(T, b->v[i].t, 0, root, b->v[i].e0, b->v[i].e1 - b->v[i].e0, i > 0);
    b->whole = 1;
}

/* A tensor holding elements [a, b) of t's storage: a band, t itself, or a new
 * window filled by copies. */
int tile_get_range(tiler *T, int t, int64_t a, int64_t b)
{
    core_program *p = T->p;
    int root = core_storage(p, t);
    if (!tile_banded(T, root)) {
        if (a == 0 && b == tile_count(p, root))
            return t;
        int w = tile_new_tensor(T, root, b - a, "{%lld:%lld}", a, b);
        if (w < 0)
            return -1;
        if (p->tensors[root].kind == PT_INPUT) {
            /* a window of a model input: an input of its own, read from the
             * caller's data at its offset, so the whole input need not be in
             * the arena beside each part (frcnn-irv2's preprocessing bound
             * its whole 4.3 MB input in each of its 600 parts: that was its
             * smallest budget, and 2.5 GB uploaded a run at it) */
            core_tensor *wt = &p->tensors[w];
            wt->kind = PT_INPUT;
            wt->input = p->tensors[root].input;
            wt->input_off = p->tensors[root].input_off + a;
            return w;
        }
        emit_copy(T, t, a, w, 0, b - a, 0);
        return w;
    }
    const bandset *bs = &T->bs[root];
    for (int i = 0; i < bs->n; i++)
        if (bs->v[i].e0 == a && bs->v[i].e1 == b)
            return bs->v[i].t;
    int w = tile_new_tensor(T, root, b - a, "{%lld:%lld}", a, b);
    if (w < 0)
        return -1;
    int first = 1;
    for (int i = 0; i < T->bs[root].n; i++) {
        band v = T->bs[root].v[i];
        int64_t lo = v.e0 > a ? v.e0 : a, hi = v.e1 < b ? v.e1 : b;
        if (lo >= hi)
            continue;
        emit_copy(T, v.t, lo - v.e0, w, lo - a, hi - lo, !first);
        first = 0;
    }
    return w;
}

uint64_t tile_step_ws(const core_program *p, const ck_step *s)
{
    int roots[CK_MAX_IN + 1], n = 0;
    uint64_t ws = 0;
    for (int i = 0; i <= s->n_in; i++) {
        int t = i < s->n_in ? s->in[i] : s->out;
        if (t < 0)
            continue;
        int r = core_storage(p, t), dup = 0;
        for (int j = 0; j < n; j++)
            dup |= roots[j] == r;
        if (dup)
            continue;
        roots[n++] = r;
        ws += tile_rnd(p->tensors[r].bytes);
    }
    return ws;
}

uint64_t core_step_working_set(const core_program *p, int s) { return tile_step_ws(p, &p->steps[s]); }

/* ---- splitting along output rows (each kind's rule: core/tile_rules.c) ---- */

/* The step computing output rows [r0, r1), and each input's window [a, b) of
 * elements (a = -1: the whole input). whole0: bind input 0 whole. */
static void row_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                     int64_t *a, int64_t *b)
{
    *ts = *s;
    for (int i = 0; i < CK_MAX_IN; i++)
        a[i] = b[i] = -1;
    tile_rule_of(s->kind)->part(s, r0, r1, whole0, ts, a, b);
}

/* Bytes of n elements of tensor t (4 each, or 2 where it is stored as halves). */
static uint64_t elems_bytes(const tiler *T, int t, int64_t n)
{
    return core_tensor_bytes(&T->p->tensors[core_storage(T->p, t)], n);
}

/* Working set of one part. */
static uint64_t part_ws(const tiler *T, const ck_step *s, const rowplan *rp, int64_t r0, int64_t r1,
                        int whole0)
{
    ck_step ts;
    int64_t a[CK_MAX_IN], b[CK_MAX_IN];
    row_part(s, r0, r1, whole0, &ts, a, b);
    uint64_t ws = tile_rnd(elems_bytes(T, s->out, (r1 - r0) * rp->row_elems));
    for (int i = 0; i < s->n_in; i++) {
        if (s->in[i] < 0)
            continue;
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= s->in[j] == s->in[i] && a[j] == a[i] && b[j] == b[i];
        if (dup)
            continue;
        ws += a[i] < 0 ? tile_rnd(T->p->tensors[core_storage(T->p, s->in[i])].bytes)
                       : tile_rnd(elems_bytes(T, s->in[i], b[i] - a[i]));
    }
    return ws;
}

/* Does every tensor part r0..r1 binds (its output, each input's window or the
 * whole input) fit the device's limit for one buffer? */
static int part_binds_fit(const tiler *T, const ck_step *s, const rowplan *rp, int64_t r0, int64_t r1,
                          int whole0)
{
    ck_step ts;
    int64_t a[CK_MAX_IN], b[CK_MAX_IN];
    row_part(s, r0, r1, whole0, &ts, a, b);
    if (elems_bytes(T, s->out, (r1 - r0) * rp->row_elems) > T->max_tensor)
        return 0;
    for (int i = 0; i < s->n_in; i++) {
        if (s->in[i] < 0)
            continue;
        uint64_t bytes = a[i] < 0 ? T->p->tensors[core_storage(T->p, s->in[i])].bytes
                                  : elems_bytes(T, s->in[i], b[i] - a[i]);
        if (bytes > T->max_tensor)
            return 0;
    }
    return 1;
}

static int parts_fit(const tiler *T, const ck_step *s, const rowplan *rp, const int64_t *cut, int k,
                     int whole0)
{
    for (int i = 0; i < k; i++) {
        if (part_ws(T, s, rp, cut[i], cut[i + 1], whole0) > T->limit)
            return 0;
        if (elems_bytes(T, s->out, (cut[i + 1] - cut[i]) * rp->row_elems) > T->band_max &&
            cut[i + 1] - cut[i] > 1)
            return 0;
        if (!part_binds_fit(T, s, rp, cut[i], cut[i + 1], whole0))
            return 0;
    }
    return 1;
}

/* Part boundaries cut[0..k]: the main input's bands where each part reads
 * exactly its own rows, else even parts, as few as fit (one row a part where
 * none do). Returns k, 0 on failure. */
static int choose_cuts(const tiler *T, const ck_step *s, const rowplan *rp, int whole0, int64_t **out)
{
    int64_t rows = rp->rows;
    int64_t *cut = NULL;
    int in = rp->main_in >= 0 ? s->in[rp->main_in] : -1;
    if (in >= 0 && rp->in_row > 0 && tile_banded(T, core_storage(T->p, in))) {
        const bandset *bs = &T->bs[core_storage(T->p, in)];
        cut = malloc(((size_t)bs->n + 1) * sizeof *cut);
        if (!cut)
            return 0;
        int k = 0, ok = 1;
        cut[0] = 0;
        for (int i = 0; i < bs->n && ok; i++) {
            ok = bs->v[i].e1 % rp->in_row == 0 && bs->v[i].e0 == cut[k] * rp->in_row;
            cut[++k] = bs->v[i].e1 / rp->in_row;
        }
        if (ok && cut[k] == rows && parts_fit(T, s, rp, cut, k, whole0)) {
            *out = cut;
            return k;
        }
        free(cut);
    }
    uint64_t whole = tile_step_ws(T->p, s);
    int64_t k = (int64_t)(whole / (T->limit ? T->limit : 1)) + 1;
    uint64_t ob = elems_bytes(T, s->out, rows * rp->row_elems);
    if (k < (int64_t)(ob / T->band_max) + 1)
        k = (int64_t)(ob / T->band_max) + 1;
    if (k < 2)
        k = 2;
    for (;;) {
        if (k > rows)
            k = rows;
        cut = malloc(((size_t)k + 1) * sizeof *cut);
        if (!cut)
            return 0;
        for (int64_t i = 0; i <= k; i++)
            cut[i] = rows * i / k;
        /* one row a part is the best there is, even where it does not fit */
        if (k == rows || parts_fit(T, s, rp, cut, (int)k, whole0)) {
            *out = cut;
            return (int)k;
        }
        free(cut);
        k = k + k / 4 + 1;
    }
}

/* Splits s along output rows; 0 done, -1 not possible here. */
static int tile_rows(tiler *T, const ck_step *s, const tile_rule *r)
{
    core_program *p = T->p;
    rowplan rp = {.main_in = -1};
    if (!r->rows || r->rows(s, &rp) || rp.rows < 2)
        return -1;
    int out_root = core_storage(p, s->out);
    int whole0 = 0;
    if (rp.can_whole) {
        int r0 = core_storage(p, s->in[0]);
        whole0 = !tile_banded(T, r0) && tile_rnd(p->tensors[r0].bytes) <= T->limit / 4 &&
                 p->tensors[r0].bytes <= T->max_tensor;
    }
    if (rp.need_whole && !whole0) {
        int r0 = core_storage(p, s->in[0]);
        if (tile_banded(T, r0) || p->tensors[r0].bytes > T->max_tensor)
            return -1;
        whole0 = 1;
    }
    int64_t *cut = NULL;
    int k = choose_cuts(T, s, &rp, whole0, &cut);
    if (k == 0 && whole0 && !rp.need_whole)
        k = choose_cuts(T, s, &rp, whole0 = 0, &cut);
    if (k == 0)
        return -1;
    ck_step ts;
    int64_t a[CK_MAX_IN], b[CK_MAX_IN];
    row_part(s, cut[0], cut[1], whole0, &ts, a, b);
    /* Weights (bound whole) past what the parts leave them: parts sized for
     * half the limit without the weights, each split along output channels
     * over host slices of them made once (core/tile_channels.c). */
    tile_chslices *cs = NULL;
    uint64_t wb = r->channels && s->n_in > 1 && s->in[1] >= 0 && a[1] < 0
                      ? tile_rnd(p->tensors[core_storage(p, s->in[1])].bytes)
                      : 0;
    if (wb > T->limit / 2 && T->limit / 2 > TILE_ALIGN && !parts_fit(T, s, &rp, cut, k, whole0)) {
        uint64_t limit = T->limit;
        int64_t *cut2 = NULL;
        T->limit = limit / 2 + wb; /* choose_cuts counts the weights whole */
        int k2 = choose_cuts(T, s, &rp, whole0, &cut2);
        T->limit = limit;
        si_error e = {0}; /* weights that do not load: no slices, whole parts */
        int64_t most = k2 > 0 ? TILE_MAX_PARTS / k2 : 0;
        if (k2 > 0 && (cs = tile_channel_slices(T, s, r, limit / 2 - TILE_ALIGN,
                                                most < TILE_MAX_SLICES ? most : TILE_MAX_SLICES, &e))) {
            free(cut);
            cut = cut2;
            k = k2;
            row_part(s, cut[0], cut[1], whole0, &ts, a, b);
        } else {
            free(cut2);
        }
    }
    /* inputs used whole are whole */
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0 && a[i] < 0)
            tile_materialize(T, core_storage(p, s->in[i]));
    for (int q = 0; q < k && !T->oom; q++) {
        row_part(s, cut[q], cut[q + 1], whole0, &ts, a, b);
        for (int i = 0; i < s->n_in; i++)
            if (s->in[i] >= 0 && a[i] >= 0 && (ts.in[i] = tile_get_range(T, s->in[i], a[i], b[i])) < 0)
                break;
        int64_t e0 = cut[q] * rp.row_elems, e1 = cut[q + 1] * rp.row_elems;
        ts.out = tile_new_tensor(T, out_root, e1 - e0, "[%lld:%lld]", e0, e1);
        if (ts.out < 0 || tile_add_band(T, out_root, e0, e1, ts.out)) {
            T->oom = 1;
            break;
        }
        ts.accumulate = 0;
        if (cs)
            tile_emit_channels(T, &ts, r, cs);
        else
            tile_emit(T, &ts);
    }
    tile_chslices_free(cs);
    free(cut);
    return 0;
}

/* ---- the pass ---- */

static int tileable_out(const tiler *T, const ck_step *s)
{
    /* a tensor several steps write (concat) stays whole */
    return T->writers[core_storage(T->p, s->out)] == 1 && !s->accumulate;
}

static void rewrite(tiler *T, const ck_step *s, si_error *err)
{
    core_program *p = T->p;
    int any_banded = 0;
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0 && tile_banded(T, core_storage(p, s->in[i])))
            any_banded = 1;
    uint64_t ws = tile_step_ws(p, s);
    uint64_t ob = tile_rnd(p->tensors[core_storage(p, s->out)].bytes);
    int big = ws > T->limit || ob > T->band_max;
    int out_root = core_storage(p, s->out);
    const tile_rule *r = tile_rule_of(s->kind);
    if (r->prepare)
        r->prepare(T, s);
    if (!ck_runs_on_host(s->kind) && (big || any_banded || tile_banded(T, out_root))) {
        if (big && tileable_out(T, s) && tile_channels(T, s, r, err) == 0)
            return;
        if (r->split && r->split(T, s) == 0)
            return;
        if (tileable_out(T, s) && tile_rows(T, s, r) == 0)
            return;
    }
    for (int i = 0; i < s->n_in; i++)
        if (s->in[i] >= 0)
            tile_materialize(T, core_storage(p, s->in[i]));
    tile_materialize(T, core_storage(p, s->out)); /* an accumulating write keeps what it had */
    tile_emit(T, s);
}

/* A banded output stays as its bands (p->out_bands), read back band by band:
 * made whole it would need a buffer as big as itself beside its last band
 * (over the device's limit, or over the budget that split it). 1 kept, 0 not
 * banded, -1 out of memory. */
static int keep_bands(tiler *T, int root)
{
    core_program *p = T->p;
    if (!tile_banded(T, root))
        return 0;
    for (int i = 0; i < p->n_out_bands; i++)
        if (p->out_bands[i].root == root)
            return 1; /* an output listed twice */
    const bandset *b = &T->bs[root];
    struct core_band *nb = realloc(p->out_bands, ((size_t)p->n_out_bands + (size_t)b->n) * sizeof *nb);
    if (!nb)
        return -1;
    p->out_bands = nb;
    for (int i = 0; i < b->n; i++)
        nb[p->n_out_bands++] = (struct core_band){root, b->v[i].t, b->v[i].e0, b->v[i].e1};
    return 1;
}

/* The limit the steps of one node are split within (0: none), and the band
 * size that follows from it. */
static void set_limit(tiler *T, uint64_t limit)
{
    T->limit = limit ? limit : UINT64_MAX;
    T->band_max = T->limit / 4 < T->max_tensor ? T->limit / 4 : T->max_tensor;
    if (T->band_max < TILE_ALIGN)
        T->band_max = TILE_ALIGN < T->max_tensor ? TILE_ALIGN : T->max_tensor;
}

si_result core_program_tile(core_program *p, uint64_t limit, const uint64_t *node_limit,
                            int n_nodes, uint64_t max_tensor, core_weight_loader load,
                            void *load_user, int *n_split, si_error *err)
{
    tiler T = {.p = p, .max_tensor = max_tensor ? max_tensor : UINT64_MAX, .load = load,
               .load_user = load_user};
    set_limit(&T, limit);
    si_result st = SI_OK;
    int n_orig = p->n_steps;
    ck_step *orig = p->steps;
    T.orig = orig;
    T.n_orig = n_orig;
    int split = 0;
    T.writers = calloc((size_t)p->n_tensors + 1, sizeof *T.writers);
    if (!T.writers || grow_bs(&T)) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int k = 0; k < n_orig; k++)
        T.writers[core_storage(p, orig[k].out)]++;
    for (int k = 0; k < n_orig && !T.oom; k++) {
        T.node = orig[k].node;
        if (node_limit)
            set_limit(&T, T.node >= 0 && T.node < n_nodes && node_limit[T.node] ? node_limit[T.node] : limit);
        int before = T.n_steps;
        rewrite(&T, &orig[k], err);
        split += T.n_steps - before > 1;
    }
    T.node = n_orig ? orig[n_orig - 1].node : -1;
    set_limit(&T, limit);
    for (int o = 0; o < p->n_outputs + p->n_boundary && !T.oom; o++) {
        int t = o < p->n_outputs ? p->outputs[o] : p->boundary[o - p->n_outputs];
        int kept = t >= 0 ? keep_bands(&T, core_storage(p, t)) : 1;
        if (kept < 0)
            T.oom = 1;
        else if (!kept)
            tile_materialize(&T, core_storage(p, t));
    }
    if (T.oom) {
        st = base_fail(err, SI_ERR_NOMEM, "out of memory while tiling");
        goto done;
    }
    p->steps = T.steps;
    p->n_steps = T.n_steps;
    p->cap_steps = T.cap_steps;
    T.steps = orig;
    if (n_split)
        *n_split = split;
done:
    free(T.steps);
    free(T.writers);
    if (T.bs)
        for (int i = 0; i < T.cap_bs; i++)
            free(T.bs[i].v);
    free(T.bs);
    return st;
}
