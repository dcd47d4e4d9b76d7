/* Data-dependent ops of the host interpreter: NonMaxSuppression (V3/V4/V5),
 * Where, Unique(V2) and ListDiff, computed exactly as tfjs-core's shared CPU
 * implementations do (non_max_suppression_impl.js, where_impl.js,
 * unique_impl.js, setdiff1d_async.js). The arithmetic is in double
 * because JavaScript's is: the float32 inputs widen, scores narrow on output. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"

typedef struct {
    double score;
    int box;
    int suppress_begin;
} nms_cand;

/* tfjs ascendingComparator: by score, ties put the larger box index first, so
 * that popping from the end yields the smaller index. */
static int nms_cmp(const nms_cand *a, const nms_cand *b)
{
    if (a->score < b->score)
        return -1;
    if (a->score > b->score)
        return 1;
    return b->box - a->box;
}

static int nms_qsort_cmp(const void *a, const void *b) { return nms_cmp(a, b); }

/* JavaScript's Math.min and Math.max: NaN if either is (fmin and fmax
 * return the other), -0 below +0. */
static double js_min(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    if (a == b)
        return signbit(a) ? a : b;
    return a < b ? a : b;
}

static double js_max(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    if (a == b)
        return signbit(a) ? b : a;
    return a > b ? a : b;
}

/* intersectionOverUnion: a NaN coordinate makes the IoU NaN (never over the
 * threshold; its suppression weight is 0). */
static double nms_iou(const float *boxes, int i, int j)
{
    const float *a = boxes + (size_t)i * 4, *b = boxes + (size_t)j * 4;
    double ymin_i = js_min(a[0], a[2]), xmin_i = js_min(a[1], a[3]);
    double ymax_i = js_max(a[0], a[2]), xmax_i = js_max(a[1], a[3]);
    double ymin_j = js_min(b[0], b[2]), xmin_j = js_min(b[1], b[3]);
    double ymax_j = js_max(b[0], b[2]), xmax_j = js_max(b[1], b[3]);
    double area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    double area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if (area_i <= 0 || area_j <= 0)
        return 0.0;
    double iy0 = js_max(ymin_i, ymin_j), ix0 = js_max(xmin_i, xmin_j);
    double iy1 = js_min(ymax_i, ymax_j), ix1 = js_min(xmax_i, xmax_j);
    double inter = js_max(iy1 - iy0, 0.0) * js_max(ix1 - ix0, 0.0);
    return inter / (area_i + area_j - inter);
}

int core_nms_host(const float *boxes, const float *scores, int n, int max_out, double iou_thr,
                  double score_thr, double soft_sigma, int pad, int32_t *idx, float *score)
{
    if (max_out > n)
        max_out = n;
    if (max_out < 0)
        max_out = 0;
    nms_cand *c = malloc(((size_t)n + 1) * sizeof *c);
    int *sel = malloc(((size_t)n + 1) * sizeof *sel);
    double *sel_score = malloc(((size_t)n + 1) * sizeof *sel_score);
    if (!c || !sel || !sel_score) {
        free(c);
        free(sel);
        free(sel_score);
        return -1;
    }
    int nc = 0;
    for (int i = 0; i < n; i++)
        if ((double)scores[i] > score_thr)
            c[nc++] = (nms_cand){scores[i], i, 0};
    qsort(c, (size_t)nc, sizeof *c, nms_qsort_cmp);
    double scale = soft_sigma > 0 ? -0.5 / soft_sigma : 0.0;
    int ns = 0;
    while (ns < max_out && nc > 0) {
        nms_cand cand = c[--nc];
        double original = cand.score;
        if (original < score_thr)
            break;
        int ignore = 0;
        for (int j = ns - 1; j >= cand.suppress_begin; --j) {
            double iou = nms_iou(boxes, cand.box, sel[j]);
            if (iou >= iou_thr) {
                ignore = 1;
                break;
            }
            cand.score = cand.score * (iou <= iou_thr ? exp(scale * iou * iou) : 0.0);
            if (cand.score <= score_thr)
                break;
        }
        cand.suppress_begin = ns;
        if (!ignore) {
            if (cand.score == original) {
                sel[ns] = cand.box;
                sel_score[ns++] = cand.score;
            } else if (cand.score > score_thr) {
                /* binaryInsert: before the left-most equal element */
                int lo = 0, hi = nc;
                while (lo < hi) {
                    int mid = lo + (hi - lo) / 2;
                    if (nms_cmp(&cand, &c[mid]) > 0)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                memmove(&c[lo + 1], &c[lo], (size_t)(nc - lo) * sizeof *c);
                c[lo] = cand;
                nc++;
            }
        }
    }
    int total = pad && ns < max_out ? max_out : ns;
    for (int i = 0; i < total; i++) {
        if (idx)
            idx[i] = i < ns ? sel[i] : 0;
        if (score)
            score[i] = i < ns ? (float)sel_score[i] : 0.0f;
    }
    free(c);
    free(sel);
    free(sel_score);
    return ns;
}

si_result core_where_host(const core_buf *cond, core_buf *out, si_error *err)
{
    int64_t count = core_shape_count(&cond->shape);
    int rank = cond->shape.rank;
    int64_t hits = 0;
    /* float NaN counts as true: tfjs casts to bool with x !== 0 */
    const float *f = cond->data;
    const int32_t *iv = cond->data;
    for (int64_t i = 0; i < count; i++)
        hits += cond->dtype == SI_FLOAT32 ? f[i] != 0.0f : iv[i] != 0;
    *out = (core_buf){.dtype = SI_INT32, .shape = {.rank = 2, .d = {hits, rank}}};
    size_t bytes = (size_t)(hits * rank) * CORE_ELEM;
    out->data = malloc(bytes ? bytes : 1);
    if (!out->data)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    int32_t *o = out->data;
    int64_t k = 0;
    for (int64_t i = 0; i < count; i++) {
        int on = cond->dtype == SI_FLOAT32 ? f[i] != 0.0f : iv[i] != 0;
        if (!on)
            continue;
        int64_t rem = i;
        for (int d = rank - 1; d >= 0; d--) {
            o[k * rank + d] = (int32_t)(rem % cond->shape.d[d]);
            rem /= cond->shape.d[d];
        }
        k++;
    }
    return SI_OK;
}

/* Element equality of tfjs's Unique (its key is the value's string: "NaN"
 * equals "NaN", -0 prints as "0") and ListDiff (a Set: SameValueZero, the
 * same). */
static uint32_t dyn_key(const core_buf *b, int64_t i)
{
    uint32_t u;
    memcpy(&u, (const char *)b->data + i * CORE_ELEM, sizeof u);
    if (b->dtype == SI_FLOAT32) {
        float f = ((const float *)b->data)[i];
        if (f != f)
            return 0x7fc00000u;
        if (f == 0.0f)
            return 0;
    }
    return u;
}

static uint64_t dyn_hash(uint64_t h, uint32_t k)
{
    h ^= k;
    h *= 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* An open-addressing set of slice indices, keyed by their elements. */
typedef struct {
    const core_buf *b;
    int64_t outer, len, inner; /* the slices: [outer, len, inner], slice i at [:, i, :] */
    size_t cap;
    int64_t *slot;             /* -1: empty */
    uint64_t *hash;
} dyn_set;

static uint64_t dyn_slice_hash(const dyn_set *s, int64_t i)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t m = 0; m < s->outer; m++)
        for (int64_t n = 0; n < s->inner; n++)
            h = dyn_hash(h, dyn_key(s->b, (m * s->len + i) * s->inner + n));
    return h;
}

static int dyn_slice_eq(const dyn_set *s, int64_t i, int64_t j)
{
    for (int64_t m = 0; m < s->outer; m++)
        for (int64_t n = 0; n < s->inner; n++)
            if (dyn_key(s->b, (m * s->len + i) * s->inner + n) !=
                dyn_key(s->b, (m * s->len + j) * s->inner + n))
                return 0;
    return 1;
}

static int dyn_set_init(dyn_set *s, const core_buf *b, int64_t outer, int64_t len, int64_t inner)
{
    *s = (dyn_set){.b = b, .outer = outer, .len = len, .inner = inner, .cap = 16};
    while (s->cap < (size_t)len * 2)
        s->cap *= 2;
    s->slot = malloc(s->cap * sizeof *s->slot);
    s->hash = malloc(s->cap * sizeof *s->hash);
    if (!s->slot || !s->hash) {
        free(s->slot);
        free(s->hash);
        return -1;
    }
    for (size_t k = 0; k < s->cap; k++)
        s->slot[k] = -1;
    return 0;
}

/* The slot holding a slice equal to slice i (s->slot[k] == -1: none yet). */
static size_t dyn_set_find(const dyn_set *s, int64_t i, uint64_t h)
{
    size_t k = (size_t)h & (s->cap - 1);
    while (s->slot[k] >= 0 && !(s->hash[k] == h && dyn_slice_eq(s, s->slot[k], i)))
        k = (k + 1) & (s->cap - 1);
    return k;
}

static void dyn_set_free(dyn_set *s)
{
    free(s->slot);
    free(s->hash);
}

si_result core_unique_host(const core_buf *x, int axis, core_buf *values, core_buf *idx,
                           si_error *err)
{
    const core_shape *sh = &x->shape;
    int64_t outer = 1, inner = 1, len = sh->d[axis];
    for (int d = 0; d < axis; d++)
        outer *= sh->d[d];
    for (int d = axis + 1; d < sh->rank; d++)
        inner *= sh->d[d];
    dyn_set s;
    int64_t *first = malloc(((size_t)len + 1) * sizeof *first);
    *idx = (core_buf){.dtype = SI_INT32, .shape = {.rank = 1, .d = {len}}};
    idx->data = malloc((size_t)len * CORE_ELEM + 1);
    if (!first || !idx->data || dyn_set_init(&s, x, outer, len, inner)) {
        free(first);
        free(idx->data);
        idx->data = NULL;
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    int32_t *ix = idx->data;
    int64_t nu = 0;
    for (int64_t i = 0; i < len; i++) {
        uint64_t h = dyn_slice_hash(&s, i);
        size_t k = dyn_set_find(&s, i, h);
        if (s.slot[k] < 0) {
            /* the slot holds the first slice; its idx is its unique number */
            s.slot[k] = i;
            s.hash[k] = h;
            ix[i] = (int32_t)nu;
            first[nu++] = i;
        }
        ix[i] = ix[s.slot[k]];
    }
    dyn_set_free(&s);
    *values = (core_buf){.dtype = x->dtype, .shape = *sh};
    values->shape.d[axis] = nu;
    values->data = malloc((size_t)(outer * nu * inner) * CORE_ELEM + 1);
    if (!values->data) {
        free(first);
        free(idx->data);
        idx->data = NULL;
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    for (int64_t m = 0; m < outer; m++)
        for (int64_t u = 0; u < nu; u++)
            memcpy((char *)values->data + ((m * nu + u) * inner) * CORE_ELEM,
                   (const char *)x->data + ((m * len + first[u]) * inner) * CORE_ELEM,
                   (size_t)inner * CORE_ELEM);
    free(first);
    return SI_OK;
}

static int dyn_key_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

si_result core_listdiff_host(const core_buf *x, const core_buf *y, core_buf *out, core_buf *idx,
                             si_error *err)
{
    int64_t nx = core_shape_count(&x->shape), ny = core_shape_count(&y->shape);
    uint32_t *keys = malloc((size_t)ny * sizeof *keys + 1);
    int32_t *pos = malloc((size_t)nx * sizeof *pos + 1);
    if (!keys || !pos) {
        free(keys);
        free(pos);
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < ny; i++)
        keys[i] = dyn_key(y, i);
    qsort(keys, (size_t)ny, sizeof *keys, dyn_key_cmp);
    int64_t n = 0;
    for (int64_t i = 0; i < nx; i++) {
        uint32_t k = dyn_key(x, i);
        if (!bsearch(&k, keys, (size_t)ny, sizeof *keys, dyn_key_cmp))
            pos[n++] = (int32_t)i;
    }
    free(keys);
    *out = (core_buf){.dtype = x->dtype, .shape = {.rank = 1, .d = {n}}};
    *idx = (core_buf){.dtype = SI_INT32, .shape = {.rank = 1, .d = {n}}, .data = pos};
    out->data = malloc((size_t)n * CORE_ELEM + 1);
    if (!out->data) {
        free(pos);
        idx->data = NULL;
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < n; i++)
        memcpy((char *)out->data + i * CORE_ELEM,
               (const char *)x->data + (int64_t)pos[i] * CORE_ELEM, CORE_ELEM);
    return SI_OK;
}
