/* Selection ops: TopKV2 as TensorFlow.js runs it (TopK_impl.js): per row,
 * its Floyd-Rivest select() puts the k best first, then, when sorted, V8's
 * Array.prototype.sort orders them; both with its comparePair (larger value
 * first, equal values by lower index). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ops.h"

static double val(const core_buf *b, int64_t i)
{
    return b->dtype == SI_FLOAT32 ? (double)((const float *)b->data)[i]
                                  : (double)((const int32_t *)b->data)[i];
}

typedef struct {
    double v;
    int64_t i;
} vi_pair;

/* tfjs's comparePair: b.value - a.value, the index difference on a tie. It is
 * NaN when either value is NaN or both are the same infinity, and then every
 * test select() makes of it fails: that is where tfjs's answer is not the
 * plain top k, and this replicates it. */
static double cmp_pair(const vi_pair *a, const vi_pair *b)
{
    double d = b->v - a->v;
    return d == 0 ? (double)(a->i - b->i) : d;
}

static void swap_pair(vi_pair *a, int64_t i, int64_t j)
{
    vi_pair t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* TopK_impl.js's select(array, k, left, right), step for step. The scans stay
 * inside [0, n) (where JS would read past the array, tfjs throws). */
static void tfjs_select(vi_pair *a, int64_t n, int64_t k, int64_t left, int64_t right)
{
    while (right > left) {
        if (right - left > 600) {
            double m = (double)(right - left + 1), i = (double)(k - left + 1);
            double z = log(m), s = 0.5 * exp(2 * z / 3);
            double d = i - m / 2, sgn = d > 0 ? 1 : (d < 0 ? -1 : 0);
            double sd = 0.5 * sqrt(z * s * (m - s) / m) * sgn;
            double nl = floor((double)k - i * s / m + sd), nr = floor((double)k + (m - i) * s / m + sd);
            tfjs_select(a, n, k, nl > (double)left ? (int64_t)nl : left,
                        nr < (double)right ? (int64_t)nr : right);
        }
        vi_pair t = a[k];
        int64_t i = left, j = right;
        swap_pair(a, left, k);
        if (cmp_pair(&a[right], &t) > 0)
            swap_pair(a, left, right);
        while (i < j) {
            swap_pair(a, i, j);
            i++;
            j--;
            while (i < n - 1 && cmp_pair(&a[i], &t) < 0)
                i++;
            while (j > 0 && cmp_pair(&a[j], &t) > 0)
                j--;
        }
        if (cmp_pair(&a[left], &t) == 0) {
            swap_pair(a, left, j);
        } else {
            j++;
            swap_pair(a, j, right);
        }
        if (j <= k)
            left = j + 1;
        if (k <= j)
            right = j - 1;
    }
}

/* The comparator as Array.prototype.sort sees it: NaN counts as 0 (ECMA-262
 * SortCompare), so equal infinities are equal there and keep their order. */
static double sort_cmp(const vi_pair *a, const vi_pair *b)
{
    double v = cmp_pair(a, b);
    return isnan(v) ? 0 : v;
}

/* V8's sort (array-sort.tq) of fewer than 64 elements, exactly: one run,
 * CountAndMakeRun then BinaryInsertionSort. Longer arrays are merged from
 * such runs by a stable merge sort, which gives V8's order whenever the
 * comparator is consistent, i.e. unless a NaN is among them. */
static void v8_short_sort(vi_pair *a, int64_t n)
{
    if (n < 2)
        return;
    int64_t run = 2;
    int desc = sort_cmp(&a[1], &a[0]) < 0;
    for (int64_t i = 2; i < n; i++) {
        double o = sort_cmp(&a[i], &a[i - 1]);
        if (desc ? o >= 0 : o < 0)
            break;
        run++;
    }
    if (desc)
        for (int64_t i = 0, j = run - 1; i < j; i++, j--)
            swap_pair(a, i, j);
    for (int64_t start = run; start < n; start++) {
        vi_pair pivot = a[start];
        int64_t left = 0, right = start;
        while (left < right) {
            int64_t mid = left + ((right - left) >> 1);
            if (sort_cmp(&pivot, &a[mid]) < 0)
                right = mid;
            else
                left = mid + 1;
        }
        memmove(a + left + 1, a + left, (size_t)(start - left) * sizeof *a);
        a[left] = pivot;
    }
}

static void stable_sort(vi_pair *a, vi_pair *tmp, int64_t n)
{
    if (n < 64) {
        v8_short_sort(a, n);
        return;
    }
    int64_t h = n / 2, i = 0, j = h, o = 0;
    stable_sort(a, tmp, h);
    stable_sort(a + h, tmp, n - h);
    while (i < h && j < n)
        tmp[o++] = sort_cmp(&a[j], &a[i]) < 0 ? a[j++] : a[i++];
    while (i < h)
        tmp[o++] = a[i++];
    memcpy(a, tmp, (size_t)o * sizeof *a);
}

/* CK_TOPK with cand: is any row of the GPU's answer flagged? */
static int cand_flagged(const ck_topk_p *p, const core_buf *cand)
{
    for (int64_t r = 0; r < p->outer; r++)
        if (((const int32_t *)cand->data)[r * (p->k + 1) + p->k])
            return 1;
    return 0;
}

int ck_host_skips_input(const ck_step *s, int i, const core_buf *const *ins)
{
    return s->kind == CK_TOPK && s->u.topk.cand && i == 0 && s->n_in > 1 && ins[1] &&
           !cand_flagged(&s->u.topk, ins[1]);
}

void ck_host_topk(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_topk_p *p = &s->u.topk;
    int64_t k = p->k, n = p->n;
    const int32_t *cand = p->cand ? (const int32_t *)ins[1]->data : NULL;
    vi_pair *row = malloc((size_t)(n ? n : 1) * sizeof *row);
    vi_pair *tmp = malloc((size_t)(k ? k : 1) * sizeof *tmp);
    if (!row || !tmp) {
        free(row);
        free(tmp);
        return;
    }
    for (int64_t r = 0; r < p->outer; r++) {
        int64_t base = r * n;
        if (cand && !cand[r * (k + 1) + k]) { /* the GPU's answer holds */
            memcpy((int32_t *)out->data + r * k, cand + r * (k + 1), (size_t)k * sizeof(int32_t));
            continue;
        }
        for (int64_t i = 0; i < n; i++)
            row[i] = (vi_pair){val(ins[0], base + i), i};
        if (k < n)
            tfjs_select(row, n, k, 0, n - 1);
        if (!p->unsorted)
            stable_sort(row, tmp, k);
        for (int64_t j = 0; j < k; j++) {
            int64_t o = r * k + j;
            if (p->want_indices)
                ((int32_t *)out->data)[o] = (int32_t)row[j].i;
            else if (out->dtype == SI_FLOAT32)
                ((float *)out->data)[o] = ((const float *)ins[0]->data)[base + row[j].i];
            else
                ((int32_t *)out->data)[o] = ((const int32_t *)ins[0]->data)[base + row[j].i];
        }
    }
    free(row);
    free(tmp);
}

/* CK_TOPK_BLOCK's key of element e of row r: larger values larger keys, -0 as
 * +0 (tfjs's b - a is 0 between them), the index's complement below (a lower
 * index first on a tie); *bad set by a NaN or an infinity. Empty slots are
 * (0, 0), below every element. The GPU computes the same (topk_block.comp). */
typedef struct {
    uint32_t hi, lo;
} tk_key;

static tk_key tk_key_of(const ck_topkb_p *p, const core_buf *x, int64_t r, int32_t e, int *bad)
{
    uint32_t u;
    if (p->x_float) {
        float v = ((const float *)x->data)[r * p->n + e];
        memcpy(&u, &v, 4);
        if ((u & 0x7f800000u) == 0x7f800000u)
            *bad = 1;
        if ((u & 0x7fffffffu) == 0)
            u = 0;
        u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    } else {
        u = (uint32_t)((const int32_t *)x->data)[r * p->n + e] ^ 0x80000000u;
    }
    return (tk_key){u, ~(uint32_t)e};
}

static int tk_cmp_desc(const void *a, const void *b)
{
    const tk_key *x = a, *y = b;
    if (x->hi != y->hi)
        return x->hi > y->hi ? -1 : 1;
    return x->lo > y->lo ? -1 : (x->lo < y->lo);
}

void ck_host_topk_block(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_topkb_p *p = &s->u.topkb;
    tk_key *keys = malloc((size_t)(p->items > 0 ? p->items : 1) * sizeof *keys);
    if (!keys)
        return;
    int32_t *o = out->data;
    for (int64_t r = 0; r < p->outer; r++)
        for (int32_t b = 0; b < p->nb; b++) {
            int bad = 0;
            const int32_t *cand = p->from_cand ? (const int32_t *)ins[1]->data : NULL;
            for (int32_t i = 0; i < p->items; i++) {
                int32_t e = -1;
                if (!cand) {
                    int64_t g = (int64_t)b * p->items + i;
                    e = g < p->n ? (int32_t)g : -1;
                } else {
                    int64_t pb = (int64_t)b * p->group + i / p->pkb;
                    if (pb < p->pnb)
                        e = cand[(r * p->pnb + pb) * (p->pkb + 1) + i % p->pkb];
                }
                keys[i] = e >= 0 ? tk_key_of(p, ins[0], r, e, &bad) : (tk_key){0, 0};
            }
            for (int32_t q = 0; cand && q < p->group; q++) {
                int64_t pb = (int64_t)b * p->group + q;
                if (pb < p->pnb && cand[(r * p->pnb + pb) * (p->pkb + 1) + p->pkb])
                    bad = 1;
            }
            qsort(keys, (size_t)p->items, sizeof *keys, tk_cmp_desc);
            int32_t *row = o + (r * p->nb + b) * (p->kb + 1);
            for (int32_t j = 0; j < p->kb; j++)
                row[j] = j < p->items && (keys[j].hi | keys[j].lo) ? (int32_t)~keys[j].lo : -1;
            row[p->kb] = bad;
        }
    free(keys);
}

void ck_host_take(const ck_step *s, const core_buf *const *ins, core_buf *out)
{
    const ck_take_p *p = &s->u.take;
    const int32_t *idx = ins[1]->data;
    for (int64_t r = 0; r < p->outer; r++)
        for (int64_t j = 0; j < p->k; j++) {
            int64_t o = r * p->k + j;
            int32_t e = idx[o];
            int32_t v = 0;
            if (e >= 0 && e < p->n)
                memcpy(&v, (const int32_t *)ins[0]->data + r * p->n + e, 4);
            ((int32_t *)out->data)[o] = v;
        }
}

/* Sorted TopK of float32 or int32 rows with k <= CK_TOPK_SORT / 4 runs on the
 * GPU: CK_TOPK_BLOCK levels until one block is left a row, then CK_TOPK with
 * cand (on the host, reading back k + 1 ints a row; a row holding a NaN or an
 * infinity is selected there from x, as tfjs's select() does it), then CK_TAKE
 * for the values. Each level keeps a total order's best, so the answer is the
 * host's whatever the blocks: no budget changes it (every step runs whole). */
static int topk_on_gpu(const core_tensor *x, int64_t k, int64_t n, int sorted)
{
    return sorted && k >= 1 && k <= CK_TOPK_SORT / 4 && n >= 1 &&
           (x->dtype == SI_FLOAT32 || x->dtype == SI_INT32);
}

static int32_t pow2_at_least(int64_t v)
{
    int32_t s = 1;
    while (s < v)
        s <<= 1;
    return s;
}

int ck_topk_levels(int64_t outer, int64_t n, int64_t k, int x_float, ck_topkb_p *lv, int max)
{
    int64_t nb = 0, kb = 0;
    int L = 0;
    do {
        if (L == max)
            return -1;
        ck_topkb_p *p = &lv[L];
        if (L == 0) {
            int64_t items = n < CK_TOPK_SORT ? n : CK_TOPK_SORT;
            *p = (ck_topkb_p){.items = (int32_t)items, .nb = (int32_t)((n + items - 1) / items),
                              .sort = pow2_at_least(items)};
        } else { /* the runs of the level below, each in a power of two's slots */
            int64_t run = pow2_at_least(kb), group = CK_TOPK_SORT / run < nb ? CK_TOPK_SORT / run : nb;
            *p = (ck_topkb_p){.from_cand = 1, .pnb = (int32_t)nb, .pkb = (int32_t)kb,
                              .group = (int32_t)group, .items = (int32_t)(group * kb),
                              .nb = (int32_t)((nb + group - 1) / group),
                              .sort = pow2_at_least(group) * (int32_t)run};
        }
        p->outer = (int32_t)outer;
        p->n = (int32_t)n;
        p->x_float = x_float;
        p->kb = (int32_t)(k < p->items ? k : p->items);
        nb = p->nb;
        kb = p->kb;
        L++;
    } while (nb > 1);
    return L;
}

static si_result lower_topk_gpu(lower_ctx *c, const core_tensor *x, int64_t outer, int64_t n,
                                int64_t k, const core_shape *os, si_error *err)
{
    ck_topkb_p lv[CK_TOPK_LEVELS];
    int L = ck_topk_levels(outer, n, k, x->dtype == SI_FLOAT32, lv, CK_TOPK_LEVELS);
    if (L < 0)
        return lc_fail(c, err, SI_ERR_SHAPE, "row of %lld too long for TopK", (long long)n);
    int xt = lc_in(c, 0), cand = -1;
    for (int l = 0; l < L; l++) {
        ck_step s = {.kind = CK_TOPK_BLOCK, .n_in = l ? 2 : 1, .in = {xt, cand}};
        s.u.topkb = lv[l];
        core_shape cs = {.rank = 3, .d = {outer, lv[l].nb, lv[l].kb + 1}};
        s.out = lc_new_tensor(c, SI_INT32, &cs);
        if (s.out < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_emit(c, &s);
        cand = s.out;
    }
    ck_step f = {.kind = CK_TOPK, .n_in = 2, .in = {xt, cand}};
    f.u.topk = (ck_topk_p){.outer = (int32_t)outer, .n = (int32_t)n, .k = (int32_t)k,
                           .want_indices = 1, .cand = 1};
    f.out = lc_new_tensor(c, SI_INT32, os);
    ck_step t = {.kind = CK_TAKE, .n_in = 2, .in = {xt, f.out}};
    t.u.take = (ck_take_p){.outer = (int32_t)outer, .n = (int32_t)n, .k = (int32_t)k};
    t.out = f.out < 0 ? -1 : lc_new_tensor(c, x->dtype, os);
    if (t.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &f);
    lc_emit(c, &t);
    lc_set_output(c, 0, t.out);
    lc_set_output(c, 1, f.out);
    return SI_OK;
}

int core_topk_to_host(core_program *p)
{
    int *readers = calloc((size_t)p->n_tensors + 1, sizeof *readers);
    uint8_t *dead = calloc((size_t)p->n_steps + 1, 1);
    int moved = 0;
    if (!readers || !dead)
        goto done; /* left on the GPU: the same answer */
    for (int k = 0; k < p->n_steps; k++) {
        ck_step *s = &p->steps[k];
        if (s->kind == CK_TOPK && s->u.topk.cand && s->n_in == 2 && s->u.topk.n > CK_TOPK_SORT) {
            s->u.topk.cand = 0; /* the host's select on x, every row */
            s->n_in = 1;
            s->in[1] = -1;
            moved++;
        }
        for (int i = 0; i < s->n_in; i++)
            if (s->in[i] >= 0)
                readers[core_storage(p, s->in[i])]++;
    }
    for (int k = p->n_steps - 1; k >= 0; k--) { /* levels nothing reads any more */
        const ck_step *s = &p->steps[k];
        if (s->kind != CK_TOPK_BLOCK || readers[core_storage(p, s->out)])
            continue;
        dead[k] = 1;
        for (int i = 0; i < s->n_in; i++)
            if (s->in[i] >= 0)
                readers[core_storage(p, s->in[i])]--;
    }
    int n = 0;
    for (int k = 0; k < p->n_steps; k++)
        if (!dead[k])
            p->steps[n++] = p->steps[k];
    p->n_steps = n;
done:
    free(readers);
    free(dead);
    return moved;
}

static si_result lower_topk(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 2)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs x and k");
    const core_tensor *x = lc_tensor(c, lc_in(c, 0));
    int64_t k;
    int nk = lc_value_ints(c, 1, &k, 1, err);
    if (nk == -2)
        return err->status;
    if (nk != 1)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "k argument depends on the input");
    if (x->shape.rank < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "input must have rank >= 1");
    int64_t n = x->shape.d[x->shape.rank - 1];
    if (k < 0 || k > n)
        return lc_fail(c, err, SI_ERR_SHAPE, "k = %lld outside [0, %lld]", (long long)k,
                       (long long)n);
    core_shape os = x->shape;
    os.d[os.rank - 1] = k;
    int64_t outer = n ? core_shape_count(&x->shape) / n : 0;
    int sorted = lc_attr_bool(c, "sorted", 1);
    if (outer > 0 && topk_on_gpu(x, k, n, sorted))
        return lower_topk_gpu(c, x, outer, n, k, &os, err);
    for (int want = 0; want < 2; want++) {
        ck_step s = {.kind = CK_TOPK, .n_in = 1, .in = {lc_in(c, 0)}};
        s.u.topk = (ck_topk_p){.outer = (int32_t)outer, .n = (int32_t)n, .k = (int32_t)k,
                               .want_indices = want, .unsorted = !sorted};
        s.out = lc_new_tensor(c, want ? SI_INT32 : x->dtype, &os);
        if (s.out < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_emit(c, &s);
        lc_set_output(c, want, s.out);
    }
    return SI_OK;
}

/* SparseToDense(indices, output_shape, values, default) as tfjs runs it
 * (tfjs-core's validateInput, then scatterImpl without summing: a repeated
 * index keeps its last value, an index is checked by its flat offset only, a
 * default of another dtype is cast to the values'). The output shape must be
 * constant; all-constant arguments fold here; else the default is broadcast
 * and the values scattered over it (CK_COPY, CK_SCATTER). Known indices out of
 * range fail, as in tfjs; indices from the input that are skip the row. */
static si_result lower_sparse_to_dense(lower_ctx *c, si_error *err)
{
    if (lc_n_inputs(c) < 4)
        return lc_fail(c, err, SI_ERR_FORMAT, "needs indices, shape, values and default");
    int64_t shape[SI_MAX_RANK + 1];
    int rank = lc_value_ints(c, 1, shape, SI_MAX_RANK + 1, err);
    if (rank == -2)
        return err->status;
    if (rank < 0)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "output shape depends on the input");
    if (rank > SI_MAX_RANK)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "rank %d", rank);
    const core_tensor *it = lc_tensor(c, lc_in(c, 0)), *vt = lc_tensor(c, lc_in(c, 2)),
                      *dt_ = lc_tensor(c, lc_in(c, 3));
    if (it->dtype != SI_INT32)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices must be int32");
    if (it->shape.rank > 2)
        return lc_fail(c, err, SI_ERR_SHAPE, "indices of rank %d (a scalar, vector or matrix)",
                       it->shape.rank);
    int64_t n = it->shape.rank > 0 ? it->shape.d[0] : 1;
    int64_t w = it->shape.rank > 1 ? it->shape.d[1] : 1;
    if (rank != w)
        return lc_fail(c, err, SI_ERR_SHAPE, "output shape of %d dims for indices of depth %lld",
                       rank, (long long)w);
    int64_t nv = core_shape_count(&vt->shape);
    if (!(vt->shape.rank == 0 || (vt->shape.rank == 1 && nv == n)))
        return lc_fail(c, err, SI_ERR_SHAPE, "%lld values for %lld indices (a scalar or one each)",
                       (long long)nv, (long long)n);
    if (core_shape_count(&dt_->shape) < 1)
        return lc_fail(c, err, SI_ERR_SHAPE, "the default value is empty");
    core_shape os = {.rank = rank};
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0)
            return lc_fail(c, err, SI_ERR_SHAPE, "negative output dimension");
        os.d[i] = shape[i];
    }
    int64_t total = core_shape_count(&os);
    if (total > (int64_t)CK_MAX_INDEX_ELEMS || n * w > (int64_t)CK_MAX_INDEX_ELEMS)
        return lc_fail(c, err, SI_ERR_UNSUPPORTED, "too many elements");
    si_dtype dt = vt->dtype;
    int64_t st_[SI_MAX_RANK];
    core_strides(&os, st_);
    si_result st;
    const core_buf *idx = lc_value(c, 0, &st, err), *vals = NULL, *dflt = NULL;
    if (st == SI_OK)
        vals = lc_value(c, 2, &st, err);
    if (st == SI_OK)
        dflt = lc_value(c, 3, &st, err);
    if (st != SI_OK)
        return st;
    /* the default, cast to the values' dtype (tfjs's converter casts it) */
    int32_t d0 = 0;
    if (dflt) {
        int32_t raw = ((const int32_t *)dflt->data)[0];
        float f;
        memcpy(&f, &raw, sizeof f);
        if (dflt->dtype == dt)
            d0 = raw;
        else if (dt == SI_FLOAT32) {
            f = (float)raw;
            memcpy(&d0, &f, sizeof d0);
        } else if (dt == SI_BOOL)
            d0 = dflt->dtype == SI_FLOAT32 ? f != 0 : raw != 0;
        else
            d0 = dflt->dtype == SI_FLOAT32 ? (int32_t)f : raw;
    } else if (dt_->dtype != dt) {
        return lc_fail(c, err, SI_ERR_UNSUPPORTED,
                       "a default value of another dtype than the values, from the input");
    }
    /* known indices: tfjs throws for a row whose flat offset is outside */
    for (int64_t k = 0; idx && k < n && total > 0; k++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++)
            off += (int64_t)((const int32_t *)idx->data)[k * w + d] * st_[d];
        if (off < 0 || off >= total)
            return lc_fail(c, err, SI_ERR_SHAPE, "index row %lld (flat %lld) is outside the "
                           "output's %lld elements", (long long)k, (long long)off, (long long)total);
    }
    if (idx && vals && dflt) {
        int32_t *data = malloc((size_t)(total ? total : 1) * CORE_ELEM);
        if (!data)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < total; i++)
            data[i] = d0;
        for (int64_t k = 0; k < n && total > 0; k++) {
            int64_t off = 0;
            for (int d = 0; d < rank; d++)
                off += (int64_t)((const int32_t *)idx->data)[k * w + d] * st_[d];
            data[off] = ((const int32_t *)vals->data)[nv == 1 && vt->shape.rank == 0 ? 0 : k];
        }
        int t = lc_new_const(c, dt, &os, data);
        free(data);
        if (t < 0)
            return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
        lc_set_output(c, 0, t);
        return SI_OK;
    }
    int base = lc_in(c, 3);
    if (dflt && dflt->dtype != dt && (base = lc_new_const(c, dt, &(core_shape){.rank = 0}, &d0)) < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    int filled = lc_new_tensor(c, dt, &os);
    if (filled < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    if (total == 0) {
        lc_set_output(c, 0, filled);
        return SI_OK;
    }
    ck_step cp = {.kind = CK_COPY, .n_in = 1, .in = {base}, .out = filled};
    cp.u.copy.rank = 1;
    cp.u.copy.dim[0] = (int32_t)total;
    cp.u.copy.in_stride[0] = 0;
    cp.u.copy.out_stride[0] = 1;
    lc_emit(c, &cp);
    ck_scatter_p p = {.slice_rank = rank, .slice_size = 1, .num_updates = (int32_t)n,
                      .n_slices = (int32_t)total, .sum = 0, .scalar_update = vt->shape.rank == 0};
    for (int d = 0; d < rank; d++)
        p.strides[d] = (int32_t)st_[d];
    ck_step s = {.kind = CK_SCATTER, .n_in = 3, .in = {lc_in(c, 0), lc_in(c, 2), filled}};
    s.u.scatter = p;
    s.out = lc_new_tensor(c, dt, &os);
    if (s.out < 0)
        return lc_fail(c, err, SI_ERR_NOMEM, "out of memory");
    lc_emit(c, &s);
    lc_set_output(c, 0, s.out);
    return SI_OK;
}

const core_op_def core_ops_select[] = {
    {"TopKV2", lower_topk}, {"SparseToDense", lower_sparse_to_dense}, {NULL, NULL}};
