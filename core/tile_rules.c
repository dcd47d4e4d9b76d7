/* The tiling rules of the kernel kinds, one per value of CK_KINDS's tiling
 * column (core/step.h): how a step of the kind splits along its output rows
 * (the row plan and the part computing rows [r0, r1)), along its output
 * channels, or by a split of its own (copies, reductions over rows).
 * core/tile.c runs them; a kind whose rule is `none` runs whole. */
#include <stdlib.h>
#include <string.h>
#include "tile_internal.h"

/* ---- helpers of the row rules ---- */

/* First axis of a broadcast output with more than one element. */
int tile_lead_axis(int rank, const int32_t *dim)
{
    for (int j = 0; j < rank; j++)
        if (dim[j] > 1)
            return j;
    return -1;
}

int tile_strides_ok(int rank, const int32_t *st)
{
    for (int j = 0; j < rank; j++)
        if (st[j] < 0)
            return 0;
    return 1;
}

static int64_t prod(const int32_t *dim, int from, int to)
{
    int64_t n = 1;
    for (int j = from; j < to; j++)
        n *= dim[j];
    return n;
}

/* Elements an input reads for output rows [r0, r1) along `ax` with strides st:
 * [*a, *b). Broadcast along ax: the whole input (*a = -1). */
static void strided_window(int rank, const int32_t *dim, const int32_t *st, int ax, int64_t r0,
                           int64_t r1, int64_t *a, int64_t *b)
{
    if (st[ax] == 0) {
        *a = *b = -1;
        return;
    }
    int64_t foot = 1;
    for (int j = ax + 1; j < rank; j++)
        foot += (int64_t)(dim[j] - 1) * st[j];
    *a = r0 * st[ax];
    *b = (r1 - 1) * st[ax] + foot;
}

/* Input rows [*w0, *w1) that output rows [r0, r1) of a windowed kernel read,
 * given the first row each output row starts at (y = r*stride - pad) and the
 * extent (k-1)*dil + 1; at least one row, so a part reading only padding
 * still has an input. */
static void rows_needed(int64_t r0, int64_t r1, int64_t stride, int64_t pad, int64_t extent,
                        int64_t in_h, int64_t *w0, int64_t *w1)
{
    int64_t lo = r0 * stride - pad, hi = (r1 - 1) * stride - pad + extent;
    *w0 = lo < 0 ? 0 : lo > in_h - 1 ? in_h - 1 : lo;
    *w1 = hi > in_h ? in_h : hi;
    if (*w1 <= *w0)
        *w1 = *w0 + 1;
}

/* ---- windowed kernels: convolution, depthwise, pooling, resize ---- */

/* The row plan of a windowed kernel at batch 1: out_h rows of out_row
 * elements; a 1-row, stride-1, unpadded window of the same height reads row r
 * of its input for row r of its output. */
static int window_rows(rowplan *rp, int32_t n, int64_t out_h, int64_t out_row, int32_t k_h,
                       int32_t stride_h, int32_t pad_top, int64_t in_h, int64_t in_row)
{
    if (n != 1)
        return -1;
    rp->rows = out_h;
    rp->row_elems = out_row;
    rp->main_in = 0;
    if (k_h == 1 && stride_h == 1 && pad_top == 0 && in_h == out_h)
        rp->in_row = in_row;
    rp->can_whole = 1;
    return 0;
}

/* Output rows [r0, r1) of a windowed kernel: the input rows they read (all of
 * them when whole0), the part's in_h, out_h and pad_top, and the input's
 * element range [a[0], b[0]). */
static void window_part(int64_t r0, int64_t r1, int whole0, int32_t stride_h, int32_t pad_top,
                        int64_t extent, int64_t in_h, int64_t in_row, int32_t *part_in_h,
                        int32_t *part_out_h, int32_t *part_pad_top, int64_t *a, int64_t *b)
{
    int64_t w0 = 0, w1 = in_h;
    if (!whole0)
        rows_needed(r0, r1, stride_h, pad_top, extent, in_h, &w0, &w1);
    *part_in_h = (int32_t)(w1 - w0);
    *part_out_h = (int32_t)(r1 - r0);
    *part_pad_top = (int32_t)(pad_top - r0 * stride_h + w0);
    if (!whole0) {
        a[0] = w0 * in_row;
        b[0] = w1 * in_row;
    }
}

/* Above batch 1, a windowed kernel splits along the batch: a "row" is one
 * image of the output, and part r reads image r of its input. Each output
 * element sums the same taps in the same order in any part (the conv's split
 * variant hangs on whole_out, set at lowering): bitwise the unsplit step. */
static int batch_rows(rowplan *rp, int32_t n, int64_t out_img, int64_t in_img)
{
    rp->rows = n;
    rp->row_elems = out_img;
    rp->main_in = 0;
    rp->in_row = in_img;
    return 0;
}

static int conv_rows(const ck_step *s, rowplan *rp)
{
    const ck_conv_p *c = &s->u.conv;
    if (c->n > 1)
        return batch_rows(rp, c->n, (int64_t)c->out_h * c->out_w * c->out_c,
                          (int64_t)c->in_h * c->in_w * c->in_c);
    return window_rows(rp, c->n, c->out_h, (int64_t)c->out_w * c->out_c, c->k_h, c->stride_h,
                       c->pad_top, c->in_h, (int64_t)c->in_w * c->in_c);
}

static void conv_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                      int64_t *a, int64_t *b)
{
    const ck_conv_p *c = &s->u.conv;
    if (s->kind == CK_CONV2D && c->has_res) { /* the residual: the part's own output rows */
        int64_t row = c->n > 1 ? (int64_t)c->out_h * c->out_w * c->out_c : (int64_t)c->out_w * c->out_c;
        a[7] = r0 * row;
        b[7] = r1 * row;
    }
    if (c->n > 1) {
        int64_t img = (int64_t)c->in_h * c->in_w * c->in_c;
        ts->u.conv.n = (int32_t)(r1 - r0);
        a[0] = r0 * img;
        b[0] = r1 * img;
        return;
    }
    window_part(r0, r1, whole0, c->stride_h, c->pad_top, (int64_t)(c->k_h - 1) * c->dil_h + 1,
                c->in_h, (int64_t)c->in_w * c->in_c, &ts->u.conv.in_h, &ts->u.conv.out_h,
                &ts->u.conv.pad_top, a, b);
}

/* CropAndResize's crops along the boxes: the image whole, the sampling
 * table's rows (one a box) as the part's boxes; each crop element is
 * computed the same in any part. */
static int crop_rows(const ck_step *s, rowplan *rp)
{
    const ck_crop_p *c = &s->u.crop;
    rp->rows = c->n;
    rp->row_elems = (int64_t)c->crop_h * c->crop_w * c->c;
    rp->can_whole = 1;
    rp->need_whole = 1;
    return 0;
}

static void crop_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                      int64_t *a, int64_t *b)
{
    (void)whole0;
    const ck_crop_p *c = &s->u.crop;
    int64_t trow = 1 + 3 * ((int64_t)c->crop_h + c->crop_w);
    ts->u.crop.n = (int32_t)(r1 - r0);
    a[1] = r0 * trow;
    b[1] = r1 * trow;
}

static int pool_rows(const ck_step *s, rowplan *rp)
{
    const ck_pool_p *c = &s->u.pool;
    if (c->n > 1 && c->include_batch)
        return -1; /* its indices count the images before the part's */
    if (c->n > 1)
        return batch_rows(rp, c->n, (int64_t)c->out_h * c->out_w * c->c, (int64_t)c->in_h * c->in_w * c->c);
    return window_rows(rp, c->n, c->out_h, (int64_t)c->out_w * c->c, c->k_h, c->stride_h,
                       c->pad_top, c->in_h, (int64_t)c->in_w * c->c);
}

static void pool_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                      int64_t *a, int64_t *b)
{
    const ck_pool_p *c = &s->u.pool;
    if (c->n > 1) {
        int64_t img = (int64_t)c->in_h * c->in_w * c->c;
        ts->u.pool.n = (int32_t)(r1 - r0);
        a[0] = r0 * img;
        b[0] = r1 * img;
        return;
    }
    window_part(r0, r1, whole0, c->stride_h, c->pad_top, c->k_h, c->in_h, (int64_t)c->in_w * c->c,
                &ts->u.pool.in_h, &ts->u.pool.out_h, &ts->u.pool.pad_top, a, b);
}

static int resize_rows(const ck_step *s, rowplan *rp)
{
    const ck_resize_p *c = &s->u.resize;
    if (c->n != 1 || c->rows)
        return -1;
    rp->rows = c->out_h;
    rp->row_elems = (int64_t)c->out_w * c->c;
    rp->main_in = 0;
    rp->can_whole = 1;
    return 0;
}

static void resize_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                        int64_t *a, int64_t *b)
{
    const ck_resize_p *c = &s->u.resize;
    int64_t w0 = c->in_h, w1 = 0;
    for (int64_t r = r0; r < r1; r++) {
        int32_t lo, hi;
        ck_resize_rows(c, (int32_t)r, &lo, &hi);
        if (lo < w0)
            w0 = lo;
        if (hi + 1 > w1)
            w1 = hi + 1;
    }
    if (whole0) {
        w0 = 0;
        w1 = c->in_h;
    }
    ts->u.resize.y0 = (int32_t)r0;
    ts->u.resize.rows = (int32_t)(r1 - r0);
    ts->u.resize.in_y0 = (int32_t)w0;
    ts->u.resize.in_rows = (int32_t)(w1 - w0);
    if (!whole0) {
        a[0] = w0 * c->in_w * c->c;
        b[0] = w1 * c->in_w * c->c;
    }
}

/* ---- elementwise: unary, addn, and the broadcasts (binary, select) ---- */

/* Unary and AddN: count elements, every input read at the output's own
 * elements. */
static int32_t *elementwise_count(ck_step *s)
{
    return s->kind == CK_ADDN ? &s->u.addn.count : &s->u.unary.count;
}

static int elementwise_rows(const ck_step *s, rowplan *rp)
{
    rp->rows = *elementwise_count((ck_step *)s);
    rp->row_elems = 1;
    rp->main_in = 0;
    rp->in_row = 1;
    return 0;
}

static void elementwise_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                             int64_t *a, int64_t *b)
{
    (void)whole0;
    *elementwise_count(ts) = (int32_t)(r1 - r0);
    for (int i = 0; i < s->n_in; i++) {
        a[i] = r0;
        b[i] = r1;
    }
}

/* A broadcast output [rank, dim] whose input i reads with strides sts[i]. */
typedef struct {
    int rank;
    const int32_t *dim;
    const int32_t *sts[3];
} bcast_view;

static bcast_view binary_view(const ck_step *s)
{
    return (bcast_view){s->u.binary.rank, s->u.binary.out_dim,
                        {s->u.binary.a_stride, s->u.binary.b_stride, NULL}};
}

static bcast_view select_view(const ck_step *s)
{
    return (bcast_view){s->u.select.rank, s->u.select.out_dim,
                        {s->u.select.c_stride, s->u.select.a_stride, s->u.select.b_stride}};
}

/* Along the output's lead axis; the first input reading along it is the main one. */
static int bcast_rows(const ck_step *s, const bcast_view *v, rowplan *rp)
{
    int ax = tile_lead_axis(v->rank, v->dim);
    if (ax < 0)
        return -1;
    rp->rows = v->dim[ax];
    rp->row_elems = prod(v->dim, ax + 1, v->rank);
    for (int i = 0; i < s->n_in; i++) {
        if (!tile_strides_ok(v->rank, v->sts[i]))
            return -1;
        if (rp->main_in < 0 && v->sts[i][ax] != 0) {
            rp->main_in = i;
            /* follows the bands only where it reads exactly its own rows */
            int contiguous = 1;
            int64_t want = 1;
            for (int j = v->rank - 1; j >= ax; j--) {
                contiguous &= v->sts[i][j] == want;
                want *= v->dim[j];
            }
            if (contiguous)
                rp->in_row = rp->row_elems;
        }
    }
    return 0;
}

/* The part's input windows; returns the lead axis. */
static int bcast_windows(const ck_step *s, const bcast_view *v, int64_t r0, int64_t r1,
                         int64_t *a, int64_t *b, int64_t *inner)
{
    int ax = tile_lead_axis(v->rank, v->dim);
    *inner = prod(v->dim, ax + 1, v->rank);
    for (int i = 0; i < s->n_in; i++)
        strided_window(v->rank, v->dim, v->sts[i], ax, r0, r1, &a[i], &b[i]);
    return ax;
}

/* Binary and select: one rule over their broadcast views. */
static bcast_view view_of(const ck_step *s)
{
    return s->kind == CK_SELECT ? select_view(s) : binary_view(s);
}

static int bcast_kind_rows(const ck_step *s, rowplan *rp)
{
    bcast_view v = view_of(s);
    return bcast_rows(s, &v, rp);
}

static void bcast_kind_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                            int64_t *a, int64_t *b)
{
    (void)whole0;
    bcast_view v = view_of(s);
    int64_t inner;
    int ax = bcast_windows(s, &v, r0, r1, a, b, &inner);
    int32_t *out_dim = s->kind == CK_SELECT ? ts->u.select.out_dim : ts->u.binary.out_dim;
    int32_t *count = s->kind == CK_SELECT ? &ts->u.select.count : &ts->u.binary.count;
    out_dim[ax] = (int32_t)(r1 - r0);
    *count = (int32_t)((r1 - r0) * inner);
}

/* ---- pad ---- */

/* Pad splits along the first axis of its output longer than one (the axes
 * before it are 1 in the input too): a part's rows read the input rows they
 * hold, shifted by the padding. A reflecting pad reads rows mirrored at the
 * input's edges, so one that pads that axis binds its input whole. */
static int pad_rows(const ck_step *s, rowplan *rp)
{
    const ck_pad_p *c = &s->u.pad;
    int ax = tile_lead_axis(c->rank, c->out_dim);
    if (ax < 0)
        return -1;
    rp->rows = c->out_dim[ax];
    rp->row_elems = prod(c->out_dim, ax + 1, c->rank);
    rp->main_in = 0;
    int padded = c->before[ax] != 0 || c->in_dim[ax] != c->out_dim[ax];
    rp->need_whole = c->mode != 0 && padded;
    rp->can_whole = 1;
    return 0;
}

/* Output rows [r0, r1) of a pad along its lead axis: the input rows they
 * hold (at least one), and the padding before them shifted so each output row
 * reads the row it read before; a part past the input's end gets a negative
 * shift, which puts every row of it in the padding. */
static void pad_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                     int64_t *a, int64_t *b)
{
    const ck_pad_p *c = &s->u.pad;
    ck_pad_p *t = &ts->u.pad;
    int ax = tile_lead_axis(c->rank, c->out_dim);
    int64_t inner = prod(c->in_dim, ax + 1, c->rank), w0 = 0, w1 = c->in_dim[ax];
    if (!whole0)
        rows_needed(r0, r1, 1, c->before[ax], 1, c->in_dim[ax], &w0, &w1);
    t->out_dim[ax] = (int32_t)(r1 - r0);
    t->in_dim[ax] = (int32_t)(w1 - w0);
    t->before[ax] = (int32_t)(c->before[ax] - r0 + w0);
    if (!whole0) {
        a[0] = w0 * inner;
        b[0] = w1 * inner;
    }
}

/* ---- rows of [outer, n, inner]: reduce, softmax, argmax, gather; matmul ---- */

/* Rows of [outer, n, inner] → [outer, inner]: a part is rows [r0, r1) of
 * outer, reading n x inner elements a row. */
static void outer_rows(rowplan *rp, int64_t outer, int64_t n, int64_t inner)
{
    rp->rows = outer;
    rp->row_elems = inner;
    rp->main_in = 0;
    rp->in_row = n * inner;
}

static void outer_part(int64_t r0, int64_t r1, int64_t n, int64_t inner, int32_t *part_outer,
                       int64_t *a, int64_t *b)
{
    *part_outer = (int32_t)(r1 - r0);
    a[0] = r0 * n * inner;
    b[0] = r1 * n * inner;
}

/* words an element of a reduction's input (a pair where it sums pairs) and of
 * its output (pairs, one a lane, where the output is its carry) */
static int64_t reduce_in_words(const ck_reduce_p *r) { return r->pairs ? 2 : 1; }
static int64_t reduce_out_words(const ck_reduce_p *r)
{
    return r->carry & 2 ? 2 * (r->lanes ? r->lanes : 1) : 1;
}

static int reduce_rows(const ck_step *s, rowplan *rp)
{
    const ck_reduce_p *r = &s->u.reduce;
    if (r->outer <= 1 || r->has_init)
        return -1;
    outer_rows(rp, r->outer, r->n, r->inner * reduce_in_words(r));
    rp->row_elems = r->inner * reduce_out_words(r);
    return 0;
}

static void reduce_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                        int64_t *a, int64_t *b)
{
    (void)whole0;
    const ck_reduce_p *r = &s->u.reduce;
    outer_part(r0, r1, r->n, r->inner * reduce_in_words(r), &ts->u.reduce.outer, a, b);
}

/* A reduction over rows of a banded input ([1, n, inner]): parts along n, in
 * order, each from the previous result. */
static int reduce_carry(tiler *T, const ck_step *s)
{
    core_program *p = T->p;
    const ck_reduce_p *r = &s->u.reduce;
    if (r->outer != 1 || r->has_init || r->n < 2)
        return -1;
    int in = s->in[0], root = core_storage(p, in);
    int64_t inner = r->inner * reduce_in_words(r), n = r->n; /* inner: words of a row of n */
    int64_t *cut = malloc(((size_t)n + 1) * sizeof *cut);
    if (!cut)
        return -1;
    int k = 0;
    cut[0] = 0;
    if (tile_banded(T, root)) {
        const bandset *bs = &T->bs[root];
        int ok = 1;
        for (int i = 0; i < bs->n && ok; i++) {
            ok = bs->v[i].e1 % inner == 0 && bs->v[i].e0 == cut[k] * inner;
            cut[++k] = bs->v[i].e1 / inner;
        }
        if (!ok || cut[k] != n)
            k = 0;
    }
    if (k == 0) {
        uint64_t per_row = (uint64_t)inner * CORE_ELEM;
        int64_t rows = (int64_t)(T->band_max / per_row);
        if (rows < 1)
            rows = 1;
        for (int64_t e = 0; e < n; e += rows)
            cut[++k] = e + rows < n ? e + rows : n;
    }
    /* float Sum, Mean and Prod carry their wide accumulator between parts
     * (ck_reduce_p), two words an element (a pair a lane where it has lanes) */
    int wide = r->op == CK_R_MEAN ||
               ((r->op == CK_R_SUM || r->op == CK_R_PROD) && r->dtype == SI_FLOAT32);
    int prev = -1, out_root = core_storage(p, s->out);
    for (int q = 0; q < k && !T->oom; q++) {
        ck_step ts = *s;
        ts.u.reduce.n = (int32_t)(cut[q + 1] - cut[q]);
        ts.u.reduce.divisor = r->divisor ? r->divisor : r->n;
        ts.u.reduce.carry = q == k - 1 ? r->carry & 2 : 0; /* the last part's output is the whole's */
        ts.u.reduce.j0 = r->j0 + (int32_t)cut[q];
        ts.in[0] = tile_get_range(T, in, cut[q] * inner, cut[q + 1] * inner);
        if (q > 0) {
            ts.n_in = 2;
            ts.in[1] = prev;
            ts.u.reduce.has_init = 1;
            ts.u.reduce.carry |= wide;
        }
        if (q < k - 1)
            ts.u.reduce.carry |= wide << 1;
        ts.out = q == k - 1 ? s->out
                            : tile_new_tensor(T, out_root,
                                              wide ? 2 * r->inner * (r->lanes ? r->lanes : 1) : r->inner,
                                              "<%lld/%lld>", q + 1, k);
        if (ts.in[0] < 0 || ts.out < 0)
            break;
        tile_emit(T, &ts);
        prev = ts.out;
    }
    free(cut);
    return 0;
}

static int softmax_rows(const ck_step *s, rowplan *rp)
{
    outer_rows(rp, s->u.softmax.outer, s->u.softmax.n, 1);
    rp->row_elems = s->u.softmax.n; /* softmax keeps its rows' length */
    return 0;
}

static void softmax_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                         int64_t *a, int64_t *b)
{
    (void)whole0;
    outer_part(r0, r1, s->u.softmax.n, 1, &ts->u.softmax.outer, a, b);
}

static int argmax_rows(const ck_step *s, rowplan *rp)
{
    outer_rows(rp, s->u.argmax.outer, s->u.argmax.n, s->u.argmax.inner);
    return 0;
}

static void argmax_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                        int64_t *a, int64_t *b)
{
    (void)whole0;
    outer_part(r0, r1, s->u.argmax.n, s->u.argmax.inner, &ts->u.argmax.outer, a, b);
}

/* Along the outer rows, or (one outer row) along the gathered indices, the
 * table then bound whole. */
/* Scan: rows of outer, each its own n x inner lines (outer 1: runs whole). */
static int scan_rows(const ck_step *s, rowplan *rp)
{
    if (s->u.scan.outer <= 1)
        return -1;
    outer_rows(rp, s->u.scan.outer, s->u.scan.n, s->u.scan.inner);
    rp->row_elems = (int64_t)s->u.scan.n * s->u.scan.inner; /* a scan keeps its shape */
    return 0;
}

static void scan_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                      int64_t *a, int64_t *b)
{
    (void)whole0;
    outer_part(r0, r1, s->u.scan.n, s->u.scan.inner, &ts->u.scan.outer, a, b);
}

/* LRN: rows of c channels, each reading only its own row. */
static int lrn_rows(const ck_step *s, rowplan *rp)
{
    outer_rows(rp, s->u.lrn.outer, 1, s->u.lrn.c);
    rp->row_elems = s->u.lrn.c;
    return 0;
}

static void lrn_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                     int64_t *a, int64_t *b)
{
    (void)whole0;
    outer_part(r0, r1, 1, s->u.lrn.c, &ts->u.lrn.outer, a, b);
}

static int gather_rows(const ck_step *s, rowplan *rp)
{
    const ck_gather_p *g = &s->u.gather;
    rp->rows = g->outer > 1 ? g->outer : g->k;
    rp->row_elems = g->outer > 1 ? (int64_t)g->k * g->inner : g->inner;
    rp->main_in = g->outer > 1 ? 0 : 1;
    rp->in_row = g->outer > 1 ? (int64_t)g->n * g->inner : 1;
    return 0;
}

static void gather_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                        int64_t *a, int64_t *b)
{
    (void)whole0;
    if (s->u.gather.outer > 1) {
        ts->u.gather.outer = (int32_t)(r1 - r0);
        a[0] = r0 * s->u.gather.n * s->u.gather.inner;
        b[0] = r1 * s->u.gather.n * s->u.gather.inner;
    } else {
        ts->u.gather.k = (int32_t)(r1 - r0);
        a[1] = r0;
        b[1] = r1;
    }
}

static int matmul_rows(const ck_step *s, rowplan *rp)
{
    const ck_matmul_p *m = &s->u.matmul;
    if (m->batch != 1 || m->trans_a)
        return -1;
    rp->rows = m->m;
    rp->row_elems = m->n;
    rp->main_in = 0;
    rp->in_row = m->k;
    return 0;
}

static void matmul_part(const ck_step *s, int64_t r0, int64_t r1, int whole0, ck_step *ts,
                        int64_t *a, int64_t *b)
{
    (void)whole0;
    ts->u.matmul.m = (int32_t)(r1 - r0);
    a[0] = r0 * s->u.matmul.k;
    b[0] = r1 * s->u.matmul.k;
}

/* ---- output channels (weights input 1): matmul, conv2d ---- */

static int matmul_channels(const ck_step *s, int64_t *rows_w, int64_t *cols, int64_t *out_rows)
{
    const ck_matmul_p *m = &s->u.matmul;
    if (m->batch != 1 || m->trans_b)
        return -1;
    *rows_w = m->k;
    *cols = m->n;
    *out_rows = m->m;
    return 0;
}

static void matmul_set_channels(ck_step *ts, int32_t n) { ts->u.matmul.n = n; }

static int conv_channels(const ck_step *s, int64_t *rows_w, int64_t *cols, int64_t *out_rows)
{
    const ck_conv_p *c = &s->u.conv;
    *rows_w = (int64_t)c->k_h * c->k_w * c->in_c;
    *cols = c->out_c;
    *out_rows = (int64_t)c->n * c->out_h * c->out_w;
    return 0;
}

static void conv_set_channels(ck_step *ts, int32_t n) { ts->u.conv.out_c = n; }

/* ---- copies ---- */

/* A tensor that copies write (concat) may live as bands made ahead: decided
 * at its first writer, before the step is looked at. */
static void copy_prepare(tiler *T, const ck_step *s)
{
    int out_root = core_storage(T->p, s->out);
    if (tile_rnd(T->p->tensors[out_root].bytes) > T->band_max && !T->bs[out_root].decided)
        tile_dest_bands(T, out_root);
}

/* ---- the rules, and the table CK_KINDS names them in ---- */

#define ROWS(name) .rows = name##_rows, .part = name##_part
static const tile_rule tile_rule_none = {0};
static const tile_rule tile_rule_copy = {.split = tile_copy, .prepare = copy_prepare};
static const tile_rule tile_rule_pad = {ROWS(pad)};
static const tile_rule tile_rule_unary = {ROWS(elementwise)};
static const tile_rule tile_rule_binary = {ROWS(bcast_kind)};
static const tile_rule tile_rule_addn = {ROWS(elementwise)};
static const tile_rule tile_rule_conv2d = {ROWS(conv), .channels = conv_channels,
                                           .set_channels = conv_set_channels};
static const tile_rule tile_rule_dwconv2d = {ROWS(conv)};
static const tile_rule tile_rule_matmul = {ROWS(matmul), .channels = matmul_channels,
                                           .set_channels = matmul_set_channels};
static const tile_rule tile_rule_pool = {ROWS(pool)};
static const tile_rule tile_rule_reduce = {ROWS(reduce), .split = reduce_carry};
static const tile_rule tile_rule_softmax = {ROWS(softmax)};
static const tile_rule tile_rule_argmax = {ROWS(argmax)};
static const tile_rule tile_rule_resize = {ROWS(resize)};
static const tile_rule tile_rule_gather = {ROWS(gather)};
static const tile_rule tile_rule_select = {ROWS(bcast_kind)};
static const tile_rule tile_rule_scan = {ROWS(scan)};
static const tile_rule tile_rule_lrn = {ROWS(lrn)};
static const tile_rule tile_rule_crop = {ROWS(crop)};
#undef ROWS

const tile_rule *tile_rule_of(ck_kind k)
{
    static const tile_rule *const rules[CK__COUNT] = {
#define RULE(K, name, params, shader, variant, inv, iters, tiling) [CK_##K] = &tile_rule_##tiling,
        CK_KINDS(RULE)
#undef RULE
    };
    return (unsigned)k < CK__COUNT ? rules[k] : &tile_rule_none;
}
