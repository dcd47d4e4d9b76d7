/* Data-dependent ops of the host interpreter: NonMaxSuppression (V3/V4/V5)
 * and Where, computed exactly as tfjs-core's shared CPU implementations do
 * (non_max_suppression_impl.js, where_impl.js). The arithmetic is in double
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

static double nms_iou(const float *boxes, int i, int j)
{
    const float *a = boxes + (size_t)i * 4, *b = boxes + (size_t)j * 4;
    double ymin_i = fmin(a[0], a[2]), xmin_i = fmin(a[1], a[3]);
    double ymax_i = fmax(a[0], a[2]), xmax_i = fmax(a[1], a[3]);
    double ymin_j = fmin(b[0], b[2]), xmin_j = fmin(b[1], b[3]);
    double ymax_j = fmax(b[0], b[2]), xmax_j = fmax(b[1], b[3]);
    double area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
    double area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
    if (area_i <= 0 || area_j <= 0)
        return 0.0;
    double iy0 = fmax(ymin_i, ymin_j), ix0 = fmax(xmin_i, xmin_j);
    double iy1 = fmin(ymax_i, ymax_j), ix1 = fmin(xmax_i, xmax_j);
    double inter = fmax(iy1 - iy0, 0.0) * fmax(ix1 - ix0, 0.0);
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
