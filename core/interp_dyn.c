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

/* The selection into idx and score (padded when asked); frees the work arrays. */
static int nms_finish(int ns, int max_out, int pad, int *sel, double *sel_score, int32_t *idx,
                      float *score, nms_cand *c)
{
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

/* The max-heap of candidates by nms_cmp: the same pops as a sorted array's
 * (the order is total: ties go by box index), without sorting them all. */
static void nms_sift(nms_cand *c, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < n && nms_cmp(&c[l], &c[m]) > 0)
            m = l;
        if (l + 1 < n && nms_cmp(&c[l + 1], &c[m]) > 0)
            m = l + 1;
        if (m == i)
            return;
        nms_cand t = c[i];
        c[i] = c[m];
        c[m] = t;
        i = m;
    }
}

/* Hard NMS (no soft sigma, IoU threshold positive). In tfjs's loop a candidate
 * is tested against the kept boxes one by one and goes no further at the first
 * whose IoU is at or over the threshold (suppressed), or NaN (a NaN or
 * infinite corner: its score becomes 0, which with a score threshold of 0 or
 * more drops it); it is kept when no kept box does either. So whether it is
 * kept does not hang on the order of the tests, and finite boxes that do not
 * meet have IoU 0. Each finite kept box's corners and area are worked out once
 * and it is filed in the cells of a grid that it covers; a finite candidate is
 * tested against those in its own cells (two boxes that meet share a cell: the
 * cell of a coordinate is monotone in it), and against the non-finite kept
 * boxes; a non-finite candidate against every kept box. Pairs with a
 * non-finite box take tfjs's own IoU (nms_iou); finite pairs the same doubles'
 * same expression. The same picks as the general loop, which tested every kept
 * box for every candidate: effdet-d7-od's 90 classes (some 180,000 candidates
 * each, most suppressed) took seconds there. */
enum { NMS_GRID = 64, NMS_WIDE = 256 }; /* cells a side; a box over more cells is tested always */
/* At most this many candidate-kept pairs (candidates x max_out): every kept box
 * is tested in turn, with no grid. A short list (frcnn-irv2-od's 601 classes
 * of 300 proposals, 100 kept a class) spent its time filing big boxes in
 * hundreds of cells and walking them. */
enum { NMS_PLAIN_PAIRS = 1 << 17 };

typedef struct {
    double lo_y, lo_x, inv_y, inv_x;
    int *head, *next, *box, n, cap; /* per cell a list of kept boxes */
    int *wide, n_wide;              /* finite kept boxes over more than NMS_WIDE cells */
    int *odd, n_odd;                /* kept boxes with a non-finite corner */
    int *stamp;                     /* per kept box: the candidate last tested against it */
} nms_grid;

static int nms_cell(double v, double lo, double inv)
{
    double f = (v - lo) * inv;
    return f < 1 ? 0 : f >= NMS_GRID - 1 ? NMS_GRID - 1 : (int)f;
}

static int box_finite(const float *b)
{
    return isfinite(b[0]) && isfinite(b[1]) && isfinite(b[2]) && isfinite(b[3]);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The grid's extent along axis (0 y, 1 x): from the 1st percentile of the
 * finite candidates' low corners to the 99th of their high ones, on a sample
 * of at most 512. Decoded boxes have outliers thousands of times the rest's
 * size (effdet-d0-od's raw boxes reach 9625, 98% lie within [-6.4, 1.3]); a
 * grid from min to max put nearly all boxes in one cell. Corners beyond fall
 * in the edge cells, which keeps the cell monotone in the coordinate. */
static void nms_extent(const float *boxes, const nms_cand *c, int nc, int axis, double *lo,
                       double *inv)
{
    enum { SAMPLE = 512 };
    double a[SAMPLE], b[SAMPLE];
    int m = 0, step = nc < SAMPLE ? 1 : nc / SAMPLE;
    for (int i = 0; i < nc && m < SAMPLE; i += step) {
        const float *q = boxes + (size_t)c[i].box * 4;
        if (!box_finite(q))
            continue;
        q += axis;
        a[m] = q[0] < q[2] ? q[0] : q[2];
        b[m++] = q[0] < q[2] ? q[2] : q[0];
    }
    qsort(a, (size_t)m, sizeof *a, dbl_cmp);
    qsort(b, (size_t)m, sizeof *b, dbl_cmp);
    *lo = m ? a[m / 100] : 0;
    double hi = m ? b[m - 1 - m / 100] : 0;
    *inv = hi > *lo ? NMS_GRID / (hi - *lo) : 0;
    if (!isfinite(*inv))
        *inv = 0; /* one cell: every kept box in it */
}

static int nms_file(nms_grid *gr, int j, const double *k)
{
    int y0 = nms_cell(k[0], gr->lo_y, gr->inv_y), y1 = nms_cell(k[2], gr->lo_y, gr->inv_y);
    int x0 = nms_cell(k[1], gr->lo_x, gr->inv_x), x1 = nms_cell(k[3], gr->lo_x, gr->inv_x);
    int cells = (y1 - y0 + 1) * (x1 - x0 + 1);
    if (cells > NMS_WIDE) {
        gr->wide[gr->n_wide++] = j;
        return 0;
    }
    if (gr->n + cells > gr->cap) {
        int cap = (gr->n + cells) * 2;
        int *nx = realloc(gr->next, (size_t)cap * sizeof *nx);
        if (nx)
            gr->next = nx;
        int *bx = nx ? realloc(gr->box, (size_t)cap * sizeof *bx) : NULL;
        if (bx)
            gr->box = bx;
        if (!nx || !bx)
            return -1;
        gr->cap = cap;
    }
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            int e = gr->n++, c = y * NMS_GRID + x;
            gr->box[e] = j;
            gr->next[e] = gr->head[c];
            gr->head[c] = e;
        }
    return 0;
}

/* Does finite kept box k (corners, area > 0: only those are filed) stop the
 * finite candidate (corners y0 x0 y1 x1, area > 0)? IoU at or over the threshold. */
static int nms_hits(const double *k, double y0, double x0, double y1, double x1, double area,
                    double iou_thr)
{
    double h = (y1 < k[2] ? y1 : k[2]) - (y0 > k[0] ? y0 : k[0]);
    double w = (x1 < k[3] ? x1 : k[3]) - (x0 > k[1] ? x0 : k[1]);
    if (!(h > 0) || !(w > 0))
        return 0;
    double inter = h * w;
    return inter / (area + k[4] - inter) >= iou_thr;
}

/* tfjs's test, for a pair with a non-finite box: at or over, or NaN. */
static int nms_stops(const float *boxes, int cand, int kept, double iou_thr)
{
    double iou = nms_iou(boxes, cand, kept);
    return iou >= iou_thr || isnan(iou);
}

/* Is the finite candidate (area > 0) stopped by a kept box? */
static int nms_grid_hit(nms_grid *gr, const double *kept, const int *sel, const float *boxes,
                        int box, int tried, double y0, double x0, double y1, double x1,
                        double area, double iou_thr)
{
    for (int w = 0; w < gr->n_odd; w++)
        if (nms_stops(boxes, box, sel[gr->odd[w]], iou_thr))
            return 1;
    for (int w = 0; w < gr->n_wide; w++)
        if (nms_hits(kept + (size_t)gr->wide[w] * 5, y0, x0, y1, x1, area, iou_thr))
            return 1;
    int cy0 = nms_cell(y0, gr->lo_y, gr->inv_y), cy1 = nms_cell(y1, gr->lo_y, gr->inv_y);
    int cx0 = nms_cell(x0, gr->lo_x, gr->inv_x), cx1 = nms_cell(x1, gr->lo_x, gr->inv_x);
    for (int y = cy0; y <= cy1; y++)
        for (int x = cx0; x <= cx1; x++)
            for (int e = gr->head[y * NMS_GRID + x]; e >= 0; e = gr->next[e]) {
                int j = gr->box[e];
                if (gr->stamp[j] == tried)
                    continue;
                gr->stamp[j] = tried;
                if (nms_hits(kept + (size_t)j * 5, y0, x0, y1, x1, area, iou_thr))
                    return 1;
            }
    return 0;
}

/* Is the finite candidate (area > 0) stopped by one of the ns kept boxes,
 * each tested in turn? A non-finite kept box has a non-finite area (a finite
 * one's is finite: float corners). The boxes tested beside the grid's are
 * those that do not meet the candidate, IoU 0: the same answer. */
static int nms_plain_hit(const double *kept, int ns, const int *sel, const float *boxes, int box,
                         double y0, double x0, double y1, double x1, double area, double iou_thr)
{
    for (int j = 0; j < ns; j++) {
        const double *k = kept + (size_t)j * 5;
        if (!isfinite(k[4]) ? nms_stops(boxes, box, sel[j], iou_thr)
                            : k[4] > 0 && nms_hits(k, y0, x0, y1, x1, area, iou_thr))
            return 1;
    }
    return 0;
}

/* plain: every kept box tested in turn (no grid) */
static int nms_hard(const float *boxes, nms_cand *c, int nc, int max_out, double iou_thr,
                    int plain, int *sel, double *sel_score, double *kept)
{
    nms_grid gr = {0};
    int ns = 0;
    if (!plain) {
        nms_extent(boxes, c, nc, 0, &gr.lo_y, &gr.inv_y);
        nms_extent(boxes, c, nc, 1, &gr.lo_x, &gr.inv_x);
        gr.head = malloc(NMS_GRID * NMS_GRID * sizeof *gr.head);
        gr.wide = malloc(((size_t)max_out + 1) * sizeof *gr.wide);
        gr.odd = malloc(((size_t)max_out + 1) * sizeof *gr.odd);
        gr.stamp = malloc(((size_t)max_out + 1) * sizeof *gr.stamp);
        ns = gr.head && gr.wide && gr.odd && gr.stamp ? 0 : -1;
    }
    for (int i = 0; !plain && ns >= 0 && i < NMS_GRID * NMS_GRID; i++)
        gr.head[i] = -1;
    for (int i = nc / 2 - 1; ns >= 0 && i >= 0; i--)
        nms_sift(c, nc, i);
    for (int tried = 0; ns >= 0 && ns < max_out && nc > 0; tried++) {
        nms_cand cand = c[0];
        c[0] = c[--nc];
        nms_sift(c, nc, 0);
        const float *b = boxes + (size_t)cand.box * 4;
        int fin = box_finite(b), hit = 0;
        double y0 = b[0] < b[2] ? b[0] : b[2], y1 = b[0] < b[2] ? b[2] : b[0];
        double x0 = b[1] < b[3] ? b[1] : b[3], x1 = b[1] < b[3] ? b[3] : b[1];
        double area = (y1 - y0) * (x1 - x0);
        if (!fin)
            for (int j = 0; j < ns && !hit; j++)
                hit = nms_stops(boxes, cand.box, sel[j], iou_thr);
        else if (area > 0)
            hit = plain ? nms_plain_hit(kept, ns, sel, boxes, cand.box, y0, x0, y1, x1, area, iou_thr)
                        : nms_grid_hit(&gr, kept, sel, boxes, cand.box, tried, y0, x0, y1, x1,
                                       area, iou_thr);
        if (hit)
            continue;
        double *k = kept + (size_t)ns * 5;
        k[0] = y0, k[1] = x0, k[2] = y1, k[3] = x1, k[4] = area;
        if (!plain) { /* filed in the grid */
            gr.stamp[ns] = -1;
            if (!fin)
                gr.odd[gr.n_odd++] = ns;
            else if (area > 0 && nms_file(&gr, ns, k)) {
                ns = -1;
                break;
            }
        }
        sel[ns] = cand.box;
        sel_score[ns++] = cand.score;
    }
    free(gr.head);
    free(gr.next);
    free(gr.box);
    free(gr.wide);
    free(gr.odd);
    free(gr.stamp);
    return ns;
}

int core_nms_host(const float *boxes, const float *scores, int n, int max_out, double iou_thr,
                  double score_thr, double soft_sigma, int pad, int32_t *idx, float *score)
{
    return core_nms_host_loop(boxes, scores, n, max_out, iou_thr, score_thr, soft_sigma, pad, idx,
                              score, 0);
}

int core_nms_host_loop(const float *boxes, const float *scores, int n, int max_out, double iou_thr,
                       double score_thr, double soft_sigma, int pad, int32_t *idx, float *score,
                       int general)
{
    if (max_out > n)
        max_out = n;
    if (max_out < 0)
        max_out = 0;
    int above = 0; /* sized to what is used: a class of effdet-d7-od has 441,936 boxes */
    for (int i = 0; i < n; i++)
        above += (double)scores[i] > score_thr;
    nms_cand *c = malloc(((size_t)above + 1) * sizeof *c);
    int *sel = malloc(((size_t)max_out + 1) * sizeof *sel);
    double *sel_score = malloc(((size_t)max_out + 1) * sizeof *sel_score);
    if (!c || !sel || !sel_score) {
        free(c);
        free(sel);
        free(sel_score);
        return -1;
    }
    int nc = 0, finite = 1;
    for (int i = 0; i < n; i++)
        if ((double)scores[i] > score_thr) {
            c[nc++] = (nms_cand){scores[i], i, 0};
            finite = finite && box_finite(boxes + (size_t)i * 4);
        }
    /* a NaN IoU zeroes a score; under a negative score threshold the candidate
     * goes back into the queue, which only the general loop does */
    double *kept = general != 1 && (finite || score_thr >= 0) && !(soft_sigma > 0) && iou_thr > 0
                       ? malloc(((size_t)max_out + 1) * 5 * sizeof *kept) : NULL;
    if (kept) {
        int plain = general == 3 || (general != 2 && (int64_t)nc * max_out <= NMS_PLAIN_PAIRS);
        int ns = nms_hard(boxes, c, nc, max_out, iou_thr, plain, sel, sel_score, kept);
        free(kept);
        if (ns < 0) {
            free(c);
            free(sel);
            free(sel_score);
            return -1;
        }
        return nms_finish(ns, max_out, pad, sel, sel_score, idx, score, c);
    }
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
    return nms_finish(ns, max_out, pad, sel, sel_score, idx, score, c);
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
