/* Tiling (core/tile.c, core/tile_copy.c): programs of one or a few steps on
 * random shapes and values, run untiled and split into parts by
 * core_program_tile, on the GPU (llvmpipe in CI) and with the host references.
 * The outputs must be bitwise identical, the program must actually have been
 * split, every part must fit the limit, and where a device limit on one buffer
 * is given, no step may bind a tensor over it (outputs over it come back as
 * bands). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kernel_util.h"

/* ---- building programs by hand ---- */

static core_program *prog_new(void)
{
    core_program *p = calloc(1, sizeof *p);
    p->cap_tensors = 64;
    p->tensors = calloc((size_t)p->cap_tensors, sizeof *p->tensors);
    p->cap_steps = 64;
    p->steps = calloc((size_t)p->cap_steps, sizeof *p->steps);
    p->outputs = calloc(8, sizeof *p->outputs);
    return p;
}

static int prog_tensor(core_program *p, si_dtype dt, int rank, const int64_t *dims, const float *host)
{
    assert_true(p->n_tensors < p->cap_tensors);
    int id = p->n_tensors++;
    core_tensor *t = &p->tensors[id];
    memset(t, 0, sizeof *t);
    char nm[32];
    snprintf(nm, sizeof nm, "t%d", id);
    t->name = strdup(nm);
    t->dtype = dt;
    t->shape.rank = rank;
    for (int i = 0; i < rank; i++)
        t->shape.d[i] = dims[i];
    int64_t n = core_shape_count(&t->shape);
    t->bytes = (uint64_t)n * CORE_ELEM;
    t->weight = t->input = t->alias_of = -1;
    t->kind = host ? PT_CONST : PT_ACT;
    if (host) {
        t->host = malloc((size_t)(n ? n : 1) * CORE_ELEM);
        memcpy(t->host, host, (size_t)n * CORE_ELEM);
    }
    return id;
}

/* A constant of random values. */
static int prog_random(core_program *p, int rank, const int64_t *dims, float lo, float hi)
{
    core_buf b = kt_random(SI_FLOAT32, rank, dims, lo, hi);
    int t = prog_tensor(p, SI_FLOAT32, rank, dims, b.data);
    kt_free(&b);
    return t;
}

static void prog_step(core_program *p, const ck_step *s)
{
    assert_true(p->n_steps < p->cap_steps);
    p->steps[p->n_steps++] = *s;
}

static core_program *prog_copy(const core_program *p)
{
    core_program *q = calloc(1, sizeof *q);
    *q = *p;
    q->tensors = calloc((size_t)p->cap_tensors, sizeof *q->tensors);
    memcpy(q->tensors, p->tensors, (size_t)p->n_tensors * sizeof *q->tensors);
    for (int t = 0; t < p->n_tensors; t++) {
        q->tensors[t].name = strdup(p->tensors[t].name);
        if (p->tensors[t].host) {
            q->tensors[t].host = malloc(p->tensors[t].bytes + 4);
            memcpy(q->tensors[t].host, p->tensors[t].host, p->tensors[t].bytes);
        }
    }
    q->steps = calloc((size_t)p->cap_steps, sizeof *q->steps);
    memcpy(q->steps, p->steps, (size_t)p->n_steps * sizeof *q->steps);
    q->outputs = calloc(8, sizeof *q->outputs);
    memcpy(q->outputs, p->outputs, (size_t)p->n_outputs * sizeof *q->outputs);
    return q;
}

/* The largest working set of a step; compute_only: leaving out the copies
 * that cut windows from whole tensors or assemble them (a one-step program's
 * input and output are whole by necessity). */
static uint64_t max_ws_of(const core_program *p, int compute_only)
{
    uint64_t m = 0;
    for (int k = 0; k < p->n_steps; k++)
        if ((!compute_only || p->steps[k].kind != CK_COPY) && core_step_working_set(p, k) > m)
            m = core_step_working_set(p, k);
    return m;
}

static uint64_t max_ws(const core_program *p) { return max_ws_of(p, 0); }

/* ---- running a program: every storage root its own buffer ---- */

/* Model input i's values: its tensor's host data here (the runtime's caller's
 * data), which the windows the tiler cuts from it read at their offsets. */
static const void *input_values(const core_program *p, int i)
{
    for (int t = 0; t < p->n_tensors; t++)
        if (p->tensors[t].kind == PT_INPUT && p->tensors[t].input == i && p->tensors[t].host)
            return p->tensors[t].host;
    fail_msg("model input %d has no values", i);
    return NULL;
}

/* Output o's values (malloc'ed) on the GPU (gpu=1) or the host. */
static float *prog_run(const core_program *p, int o, int gpu)
{
    int n = p->n_tensors;
    uint32_t *buf = calloc((size_t)n, sizeof *buf);
    core_buf *hb = calloc((size_t)n, sizeof *hb);
    si_error err = {0};
    for (int t = 0; t < n; t++) {
        const core_tensor *ct = &p->tensors[t];
        if (ct->alias_of >= 0)
            continue;
        hb[t] = (core_buf){ct->dtype, ct->shape, calloc(1, ct->bytes + 4)};
        if (ct->host)
            memcpy(hb[t].data, ct->host, ct->bytes);
        else if (ct->kind == PT_INPUT) /* a window of a model input: its values at its offset */
            memcpy(hb[t].data, (const float *)input_values(p, ct->input) + ct->input_off, ct->bytes);
        if (gpu) {
            assert_int_equal(glk_buffer_create(kt_gpu, ct->bytes + 4, &buf[t], &err), SI_OK);
            assert_int_equal(glk_upload(kt_gpu, buf[t], 0, hb[t].data, ct->bytes + 4, &err), SI_OK);
        }
    }
    for (int k = 0; k < p->n_steps; k++) {
        const ck_step *s = &p->steps[k];
        int ro = core_storage(p, s->out);
        if (gpu && !ck_runs_on_host(s->kind)) {
            glk_range r[CK_MAX_IN], out;
            si_dtype dts[CK_MAX_IN] = {0};
            for (int i = 0; i < s->n_in; i++) {
                if (s->in[i] < 0)
                    continue;
                int ri = core_storage(p, s->in[i]);
                r[i] = (glk_range){buf[ri], 0, p->tensors[ri].bytes};
                dts[i] = p->tensors[s->in[i]].dtype;
            }
            out = (glk_range){buf[ro], 0, p->tensors[ro].bytes};
            si_result st = glk_run_step(kt_gpu, s, r, dts, &out, p->tensors[s->out].dtype, &err);
            if (st != SI_OK)
                fprintf(stderr, "step %d (%s): %s\n", k, ck_kind_name(s->kind), err.message);
            assert_int_equal(st, SI_OK);
        } else {
            const core_buf *ins[CK_MAX_IN] = {0};
            core_buf views[CK_MAX_IN];
            for (int i = 0; i < s->n_in; i++) {
                if (s->in[i] < 0)
                    continue;
                views[i] = hb[core_storage(p, s->in[i])];
                views[i].shape = p->tensors[s->in[i]].shape;
                ins[i] = &views[i];
            }
            core_buf ov = hb[ro];
            ov.shape = p->tensors[s->out].shape;
            assert_int_equal(ck_host_run(s, ins, &ov, &err), SI_OK);
        }
    }
    int rt = core_storage(p, p->outputs[o]), banded = 0;
    float *res = malloc(p->tensors[rt].bytes + 4);
    for (int i = 0; i < p->n_out_bands; i++) { /* an output too big for one buffer */
        const struct core_band *b = &p->out_bands[i];
        if (b->root != rt)
            continue;
        size_t n = (size_t)(b->e1 - b->e0) * CORE_ELEM;
        if (gpu)
            assert_int_equal(glk_download(kt_gpu, buf[b->tensor], 0, res + b->e0, n, &err), SI_OK);
        else
            memcpy(res + b->e0, hb[b->tensor].data, n);
        banded = 1;
    }
    if (banded)
        ;
    else if (gpu)
        assert_int_equal(glk_download(kt_gpu, buf[rt], 0, res, p->tensors[rt].bytes, &err), SI_OK);
    else
        memcpy(res, hb[rt].data, p->tensors[rt].bytes);
    for (int t = 0; t < n; t++) {
        if (buf[t])
            glk_buffer_destroy(kt_gpu, buf[t]);
        free(hb[t].data);
    }
    free(buf);
    free(hb);
    return res;
}

/* The largest tensor (storage root) a step of p binds. */
static uint64_t max_bound(const core_program *p)
{
    uint64_t m = 0;
    for (int k = 0; k < p->n_steps; k++)
        for (int i = 0; i <= p->steps[k].n_in; i++) {
            int t = i < p->steps[k].n_in ? p->steps[k].in[i] : p->steps[k].out;
            if (t >= 0 && p->tensors[core_storage(p, t)].bytes > m)
                m = p->tensors[core_storage(p, t)].bytes;
        }
    return m;
}

/* Tiles a copy of p at `limit` bytes for parts' working sets (0: a third of
 * the largest; UINT64_MAX: none) and max_tensor bytes for one buffer a step
 * binds (0: none), and checks: split, smaller largest step (or, with
 * max_tensor, every bound tensor within it), bitwise-identical outputs on the
 * GPU and on the host. */
static void check_tiled_nodes(const core_program *p, uint64_t limit, const uint64_t *node_limit,
                              int n_nodes, uint64_t max_tensor, const char *what)
{
    core_program *q = prog_copy(p);
    si_error err = {0};
    if (!limit)
        limit = max_ws(p) / 3;
    int n_split = 0;
    assert_int_equal(core_program_tile(q, limit == UINT64_MAX ? 0 : limit, node_limit, n_nodes,
                                       max_tensor, NULL, NULL, &n_split, &err), SI_OK);
    /* with limits per node: each step within its node's (copies aside) */
    for (int k = 0; node_limit && k < q->n_steps; k++) {
        int nd = q->steps[k].node;
        uint64_t own = nd >= 0 && nd < n_nodes && node_limit[nd] ? node_limit[nd] : limit;
        if (q->steps[k].kind != CK_COPY && core_step_working_set(q, k) > own)
            fprintf(stderr, "%s: step %d (node %d, %s) works on %llu bytes, its limit %llu\n", what,
                    k, nd, ck_kind_name(q->steps[k].kind),
                    (unsigned long long)core_step_working_set(q, k), (unsigned long long)own);
        assert_true(q->steps[k].kind == CK_COPY || core_step_working_set(q, k) <= own);
    }
    if (node_limit) /* the largest limit: every step within it */
        for (int i = 0; i < n_nodes; i++)
            limit = node_limit[i] > limit ? node_limit[i] : limit;
    uint64_t before = max_ws(p), after = max_ws_of(q, 1);
    if (n_split == 0 || (after >= before && !max_tensor) || after > limit ||
        (max_tensor && max_bound(q) > max_tensor))
        fprintf(stderr, "%s: split %d steps, largest working set %llu -> %llu (limit %llu), "
                "largest bound tensor %llu -> %llu (limit %llu)\n", what, n_split,
                (unsigned long long)before, (unsigned long long)after, (unsigned long long)limit,
                (unsigned long long)max_bound(p), (unsigned long long)max_bound(q),
                (unsigned long long)max_tensor);
    assert_true(n_split > 0);
    assert_true(after <= limit);
    if (max_tensor)
        assert_true(max_bound(q) <= max_tensor);
    for (int o = 0; o < p->n_outputs; o++) {
        int rt = core_storage(p, p->outputs[o]);
        size_t bytes = p->tensors[rt].bytes;
        for (int gpu = 1; gpu >= 0; gpu--) {
            float *a = prog_run(p, o, gpu), *b = prog_run(q, o, gpu);
            if (memcmp(a, b, bytes)) {
                size_t i = 0;
                while (((uint32_t *)a)[i] == ((uint32_t *)b)[i])
                    i++;
                fprintf(stderr, "%s (%s): output %d differs at %zu: %.9g vs %.9g (%d -> %d steps)\n",
                        what, gpu ? "gpu" : "host", o, i, a[i], b[i], p->n_steps, q->n_steps);
            }
            assert_memory_equal(a, b, bytes);
            free(a);
            free(b);
        }
    }
    core_program_free(q);
}

static void check_tiled_max(const core_program *p, uint64_t limit, uint64_t max_tensor,
                            const char *what)
{
    check_tiled_nodes(p, limit, NULL, 0, max_tensor, what);
}

static void check_tiled(const core_program *p, uint64_t limit, const char *what)
{
    check_tiled_max(p, limit, 0, what);
}

static int rnd_pad(int in, int k, int stride, int dil, int same, int *before)
{
    int ke = (k - 1) * dil + 1;
    if (!same) {
        *before = 0;
        return (in - ke) / stride + 1;
    }
    int out = (in + stride - 1) / stride;
    int total = (out - 1) * stride + ke - in;
    *before = total > 0 ? total / 2 : 0;
    return out;
}

/* ---- cases ---- */

/* A Conv2D's fused residual (ck_conv_p.has_res): input 7, a random tensor of
 * the output's shape od. */
static void add_residual(core_program *p, ck_step *s, const int64_t *od)
{
    for (int i = s->n_in; i < 7; i++)
        s->in[i] = -1;
    s->n_in = 8;
    s->in[7] = prog_random(p, 4, od, -2.f, 2.f);
    s->u.conv.has_res = 1;
}

static void conv_case(int depthwise, int rep, int n)
{
    core_program *p = prog_new();
    int h = kt_randint(24, 60), w = kt_randint(8, 24), c = kt_randint(4, 12);
    int kh = kt_randint(1, 5), kw = kt_randint(1, 4), sh = kt_randint(1, 3), sw = kt_randint(1, 2);
    int dh = kt_randint(1, 2), same = rep % 2;
    if ((kh - 1) * dh + 1 > h)
        dh = 1;
    int pt, pl;
    int oh = rnd_pad(h, kh, sh, dh, same, &pt), ow = rnd_pad(w, kw, sw, 1, same, &pl);
    if (ow < 1) {
        kw = 1;
        ow = rnd_pad(w, kw, sw, 1, same, &pl);
    }
    int mult = depthwise ? kt_randint(1, 2) : 1;
    int oc = depthwise ? c * mult : kt_randint(4, 16);
    int64_t xd[4] = {n, h, w, c}, fd[4] = {kh, kw, c, depthwise ? mult : oc}, bd[1] = {oc};
    int x = prog_random(p, 4, xd, -1.f, 1.f);
    int f = prog_random(p, 4, fd, -1.f, 1.f);
    int b = prog_random(p, 1, bd, -1.f, 1.f);
    int64_t od[4] = {n, oh, ow, oc};
    ck_step s = {.kind = depthwise ? CK_DWCONV2D : CK_CONV2D, .n_in = 3};
    s.in[0] = x;
    s.in[1] = f;
    s.in[2] = b;
    s.u.conv = (ck_conv_p){.n = n, .in_h = h, .in_w = w, .in_c = c, .out_h = oh, .out_w = ow,
                           .out_c = oc, .k_h = kh, .k_w = kw, .stride_h = sh, .stride_w = sw,
                           .dil_h = dh, .dil_w = 1, .pad_top = pt, .pad_left = pl,
                           .ch_mult = mult, .has_bias = 1, .act = rep % 3 ? CK_ACT_RELU : CK_ACT_NONE};
    if (!depthwise && rep % 2) /* a fused residual (core/fuse.c): cut with the output's rows */
        add_residual(p, &s, od);
    s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
    prog_step(p, &s);
    p->outputs[p->n_outputs++] = s.out;
    check_tiled(p, 0, n > 1 ? (depthwise ? "dwconv2d batch" : "conv2d batch") : depthwise ? "dwconv2d" : "conv2d");
    core_program_free(p);
}

static void test_conv(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++)
        conv_case(0, rep, 1);
}

static void test_dwconv(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++)
        conv_case(1, rep, 1);
}

static void pool_case(int rep, int n);

static void test_pool(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++)
        pool_case(rep, 1);
}

/* Above batch 1 (frcnn-irv2-od's second stage at batch 300) windowed kernels
 * split along the batch, a part a run of whole images */
static void test_batch_windows(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        conv_case(0, rep, kt_randint(4, 7));
        conv_case(1, rep, kt_randint(4, 7));
        pool_case(rep, kt_randint(4, 7));
    }
}

/* CropAndResize's crops split along the boxes: the image bound whole, the
 * sampling table's rows cut with the crops */
static void test_crop_boxes(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        core_program *p = prog_new();
        ck_crop_p cp = {.n = kt_randint(24, 60), .batch = kt_randint(1, 3), .in_h = kt_randint(4, 20),
                        .in_w = kt_randint(4, 20), .c = kt_randint(1, 6), .crop_h = kt_randint(2, 9),
                        .crop_w = kt_randint(2, 9), .bilinear = rep % 2, .extrapolation = kt_randf(-2, 2)};
        int64_t bd[] = {cp.n, 4}, nd[] = {cp.n}, xd[] = {cp.batch, cp.in_h, cp.in_w, cp.c};
        int64_t td[] = {cp.n, 1 + 3 * (cp.crop_h + cp.crop_w)}, od[] = {cp.n, cp.crop_h, cp.crop_w, cp.c};
        core_buf boxes = kt_random(SI_FLOAT32, 2, bd, -0.3f, 1.3f);
        core_buf ind = kt_random(SI_INT32, 1, nd, 0, (float)cp.batch);
        core_buf tab = kt_buf(SI_INT32, 2, td);
        ck_step tb = {.kind = CK_CROP_BOXES, .n_in = 2, .in = {0, 1}, .out = 2};
        tb.u.crop = cp;
        const core_buf *ins[] = {&boxes, &ind};
        assert_int_equal(ck_host_run(&tb, ins, &tab, NULL), SI_OK);
        ck_step s = {.kind = CK_CROP_RESIZE, .n_in = 2};
        s.in[0] = prog_random(p, 4, xd, -3.f, 3.f);
        s.in[1] = prog_tensor(p, SI_INT32, 2, td, tab.data);
        s.u.crop = cp;
        s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        /* the image is whole in every part: the limit leaves it room */
        uint64_t img = p->tensors[s.in[0]].bytes, rest = p->tensors[s.in[1]].bytes + p->tensors[s.out].bytes;
        check_tiled(p, img + 256 + rest / 2, "crop_resize");
        core_program_free(p);
        kt_free(&boxes);
        kt_free(&ind);
        kt_free(&tab);
    }
}

static void pool_case(int rep, int n)
{
    {
        core_program *p = prog_new();
        int h = kt_randint(24, 60), w = kt_randint(8, 24), c = kt_randint(4, 12);
        int kh = kt_randint(1, 4), kw = kt_randint(1, 3), sh = kt_randint(1, 3), sw = kt_randint(1, 2);
        int pt, pl, same = rep % 2;
        int oh = rnd_pad(h, kh, sh, 1, same, &pt), ow = rnd_pad(w, kw, sw, 1, same, &pl);
        int64_t xd[4] = {n, h, w, c}, od[4] = {n, oh, ow, c};
        ck_step s = {.kind = CK_POOL, .n_in = 1};
        s.in[0] = prog_random(p, 4, xd, -2.f, 2.f);
        s.u.pool = (ck_pool_p){.is_max = rep % 3 != 0, .n = n, .in_h = h, .in_w = w, .c = c,
                               .out_h = oh, .out_w = ow, .k_h = kh, .k_w = kw, .stride_h = sh,
                               .stride_w = sw, .pad_top = pt, .pad_left = pl};
        s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        check_tiled(p, 0, n > 1 ? "pool batch" : "pool");
        core_program_free(p);
    }
}

static void test_resize(void **state)
{
    (void)state;
    for (int rep = 0; rep < 16; rep++) {
        core_program *p = prog_new();
        int h = kt_randint(6, 40), w = kt_randint(4, 16), c = kt_randint(4, 10);
        int oh = kt_randint(24, 80), ow = kt_randint(4, 20);
        int align = (rep / 2) % 2, hpc = !align && (rep / 4) % 2;
        int64_t xd[4] = {1, h, w, c}, od[4] = {1, oh, ow, c};
        ck_step s = {.kind = CK_RESIZE, .n_in = 1};
        s.in[0] = prog_random(p, 4, xd, -2.f, 2.f);
        s.u.resize = (ck_resize_p){.bilinear = rep % 2, .n = 1, .in_h = h, .in_w = w, .c = c,
                                   .out_h = oh, .out_w = ow, .align_corners = align,
                                   .half_pixel_centers = hpc};
        s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        check_tiled(p, 0, "resize");
        core_program_free(p);
    }
}

/* Row parts (A's rows) and column parts (weights over the limit, host slices). */
static void test_matmul(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        core_program *p = prog_new();
        int by_cols = rep % 2;
        int m = by_cols ? kt_randint(1, 6) : kt_randint(40, 120);
        int k = by_cols ? kt_randint(60, 200) : kt_randint(3, 30);
        int n = by_cols ? kt_randint(64, 300) : kt_randint(3, 40);
        int64_t ad[2] = {m, k}, bd[2] = {k, n}, biasd[1] = {n}, od[2] = {m, n};
        ck_step s = {.kind = CK_MATMUL, .n_in = 3};
        s.in[0] = prog_random(p, 2, ad, -1.f, 1.f);
        s.in[1] = prog_random(p, 2, bd, -1.f, 1.f);
        s.in[2] = prog_random(p, 1, biasd, -1.f, 1.f);
        s.u.matmul = (ck_matmul_p){.batch = 1, .m = m, .n = n, .k = k, .has_bias = 1,
                                   .act = rep % 4 < 2 ? CK_ACT_RELU6 : CK_ACT_NONE};
        s.out = prog_tensor(p, SI_FLOAT32, 2, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        uint64_t limit = by_cols ? (uint64_t)k * n * 4 / 2 : (uint64_t)(m * k + m * n) * 4 / 3 + k * n * 4 + 3 * 256;
        check_tiled(p, limit, by_cols ? "matmul (columns)" : "matmul (rows)");
        core_program_free(p);
    }
}

/* Weights past the limit beside an input and output that take more than half
 * of it (a batch of pooled regions through a box head): thinner column parts
 * in what the rest leaves (rows would read the whole weights in every part). */
static void test_matmul_thin_columns(void **state)
{
    (void)state;
    for (int rep = 0; rep < 4; rep++) {
        core_program *p = prog_new();
        int m = kt_randint(30, 60), k = kt_randint(150, 250), n = kt_randint(250, 400);
        int64_t ad[2] = {m, k}, bd[2] = {k, n}, biasd[1] = {n}, od[2] = {m, n};
        ck_step s = {.kind = CK_MATMUL, .n_in = 3};
        s.in[0] = prog_random(p, 2, ad, -1.f, 1.f);
        s.in[1] = prog_random(p, 2, bd, -1.f, 1.f);
        s.in[2] = prog_random(p, 1, biasd, -1.f, 1.f);
        s.u.matmul = (ck_matmul_p){.batch = 1, .m = m, .n = n, .k = k, .has_bias = 1};
        s.out = prog_tensor(p, SI_FLOAT32, 2, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        /* the rest (A and the output) over half the limit, room for 20 columns beside it */
        uint64_t rest = ((uint64_t)m * k * 4 + 255) / 256 * 256 + ((uint64_t)m * n * 4 + 255) / 256 * 256;
        uint64_t limit = rest + 20 * ((uint64_t)k * 4 + 256);
        assert_true(rest >= limit / 2 && (uint64_t)k * n * 4 >= limit);
        check_tiled(p, limit, "matmul (thin columns)");
        core_program_free(p);
    }
}

/* Weights past the limit and an input and output past it too: parts along
 * rows (images above batch 1; A's rows for a MatMul), each split along output
 * channels over slices of the weights shared by all of them. */
static void test_rows_channels(void **state)
{
    (void)state;
    for (int rep = 0; rep < 6; rep++) {
        core_program *p = prog_new();
        ck_step s = {.kind = rep < 4 ? CK_CONV2D : CK_MATMUL, .n_in = 3};
        int64_t wbytes, od[4];
        int rank;
        if (rep < 4) {
            /* batch 1: parts of rows; above (an image a row, as crops through a
             * box head), images small beside the weights */
            int k = rep % 2 ? 3 : 1, n = rep < 2 ? 1 : k == 3 ? kt_randint(16, 24) : kt_randint(8, 12), h, w, c, oc;
            if (n > 1) {
                h = k == 3 ? 3 : kt_randint(2, 3), w = k == 3 ? 3 : kt_randint(2, 3);
                c = k == 3 ? kt_randint(36, 44) : kt_randint(96, 128);
                oc = k == 3 ? kt_randint(36, 44) : kt_randint(96, 128);
            } else {
                h = k == 3 ? kt_randint(12, 20) : kt_randint(8, 16), w = k == 3 ? kt_randint(6, 10) : kt_randint(3, 8);
                c = k == 3 ? kt_randint(24, 40) : kt_randint(64, 128), oc = k == 3 ? kt_randint(32, 48) : kt_randint(64, 128);
            }
            int64_t xd[4] = {n, h, w, c}, fd[4] = {k, k, c, oc}, bd[1] = {oc};
            s.in[0] = prog_random(p, 4, xd, -1.f, 1.f);
            s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
            s.in[2] = prog_random(p, 1, bd, -1.f, 1.f);
            s.u.conv = (ck_conv_p){.n = n, .in_h = h, .in_w = w, .in_c = c, .out_h = h, .out_w = w,
                                   .out_c = oc, .k_h = k, .k_w = k, .stride_h = 1, .stride_w = 1,
                                   .dil_h = 1, .dil_w = 1, .pad_top = k / 2, .pad_left = k / 2,
                                   .has_bias = 1, .act = CK_ACT_RELU};
            wbytes = (int64_t)k * k * c * oc * 4;
            od[0] = n, od[1] = h, od[2] = w, od[3] = oc, rank = 4;
            if (rep % 2) /* a fused residual: its rows with the parts, its columns with the slices */
                add_residual(p, &s, od);
        } else {
            int m = kt_randint(300, 500), k = kt_randint(60, 120), n = kt_randint(150, 250);
            int64_t ad[2] = {m, k}, bd[2] = {k, n}, biasd[1] = {n};
            s.in[0] = prog_random(p, 2, ad, -1.f, 1.f);
            s.in[1] = prog_random(p, 2, bd, -1.f, 1.f);
            s.in[2] = prog_random(p, 1, biasd, -1.f, 1.f);
            s.u.matmul = (ck_matmul_p){.batch = 1, .m = m, .n = n, .k = k, .has_bias = 1};
            wbytes = (int64_t)k * n * 4;
            od[0] = m, od[1] = n, rank = 2;
        }
        s.out = prog_tensor(p, SI_FLOAT32, rank, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        /* the weights alone over the limit, the input and output over half of it */
        uint64_t limit = (uint64_t)wbytes * 9 / 10;
        assert_true(max_ws(p) - (uint64_t)wbytes > limit / 2);
        check_tiled(p, limit, rep < 4 ? "conv2d (rows and channels)" : "matmul (rows and columns)");
        core_program_free(p);
    }
}

/* A 1x1 convolution whose weights are over the limit: output channel parts. */
static void test_conv_channels(void **state)
{
    (void)state;
    for (int rep = 0; rep < 4; rep++) {
        core_program *p = prog_new();
        int h = kt_randint(1, 4), w = kt_randint(1, 4), c = kt_randint(100, 300), oc = kt_randint(64, 200);
        int64_t xd[4] = {1, h, w, c}, fd[4] = {1, 1, c, oc}, bd[1] = {oc}, od[4] = {1, h, w, oc};
        ck_step s = {.kind = CK_CONV2D, .n_in = 3};
        s.in[0] = prog_random(p, 4, xd, -1.f, 1.f);
        s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
        s.in[2] = prog_random(p, 1, bd, -1.f, 1.f);
        s.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = c, .out_h = h, .out_w = w,
                               .out_c = oc, .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1,
                               .dil_h = 1, .dil_w = 1, .has_bias = 1, .act = CK_ACT_SIGMOID};
        if (rep % 2) { /* a fused scale (sliced with the channels) and a clip */
            int64_t one[1] = {1};
            s.n_in = 7;
            s.in[3] = s.in[5] = -1;
            s.in[4] = prog_random(p, 1, one, 0.2f, 0.8f);
            s.in[6] = prog_random(p, 1, bd, -2.f, 2.f);
            s.u.conv.has_scale = 1;
            s.u.conv.n_clip = 1;
            s.u.conv.clip_op[0] = CK_B_MIN;
        }
        if (rep >= 2) /* a fused residual, gathered into each slice's columns */
            add_residual(p, &s, od);
        s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        check_tiled(p, (uint64_t)c * oc * 4 / 2, "conv2d (channels)");
        core_program_free(p);
    }
}

/* test_conv_channels with core/fuse.c's scale after the bias (has_scale 2) and then a
 * shift (3, input 3): channel vectors sliced with the channels, or a scalar scale or
 * shift read whole by every slice; a residual on some. */
static void test_conv_channels_post(void **state)
{
    (void)state;
    for (int rep = 0; rep < 6; rep++) {
        core_program *p = prog_new();
        int h = kt_randint(1, 4), w = kt_randint(1, 4), c = kt_randint(100, 300), oc = kt_randint(64, 200);
        int64_t xd[4] = {1, h, w, c}, fd[4] = {1, 1, c, oc}, bd[1] = {oc}, od[4] = {1, h, w, oc}, one[1] = {1};
        ck_step s = {.kind = CK_CONV2D, .n_in = 7};
        s.in[0] = prog_random(p, 4, xd, -1.f, 1.f);
        s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
        s.in[2] = prog_random(p, 1, bd, -1.f, 1.f);
        s.in[4] = s.in[5] = -1;
        s.in[6] = prog_random(p, 1, rep / 2 == 1 ? one : bd, -2.f, 2.f);
        s.in[3] = rep % 2 ? prog_random(p, 1, rep / 2 == 2 ? one : bd, -1.f, 1.f) : -1;
        s.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = c, .out_h = h, .out_w = w,
                               .out_c = oc, .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1,
                               .dil_h = 1, .dil_w = 1, .has_bias = 1, .act = CK_ACT_RELU_OP,
                               .has_scale = rep % 2 ? 3 : 2};
        if (rep >= 4)
            add_residual(p, &s, od);
        s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        check_tiled(p, (uint64_t)c * oc * 4 / 2, "conv2d (channels), scale and shift after the bias");
        core_program_free(p);
    }
}

/* Reductions over rows, split into parts carried from one to the next: every
 * op, float and int inputs. */
static void test_reduce_carry(void **state)
{
    (void)state;
    const int ops[] = {CK_R_SUM, CK_R_MEAN, CK_R_MAX, CK_R_MIN, CK_R_PROD, CK_R_ANY, CK_R_ALL};
    for (int rep = 0; rep < 14; rep++) {
        int op = ops[rep % 7], is_int = rep >= 7;
        core_program *p = prog_new();
        int n = kt_randint(400, 1500), inner = kt_randint(3, 12);
        int64_t xd[2] = {n, inner}, od[1] = {inner};
        si_dtype in_dt = is_int ? SI_INT32 : SI_FLOAT32;
        si_dtype out_dt = op == CK_R_ANY || op == CK_R_ALL ? SI_BOOL
                          : op == CK_R_MEAN ? SI_FLOAT32 : in_dt;
        /* products stay finite near 1; ints small, with zeros for any/all */
        float lo = op == CK_R_PROD ? 0.9f : -3.f, hi = op == CK_R_PROD ? 1.1f : 3.f;
        if (is_int && op == CK_R_PROD) {
            lo = 1.f;
            hi = 1.f;
        }
        core_buf x = kt_random(in_dt, 2, xd, is_int ? (op >= CK_R_ANY ? 0.f : -50.f) : lo,
                               is_int ? (op >= CK_R_ANY ? 1.f : 50.f) : hi);
        if (op == CK_R_ALL && !is_int)
            for (int64_t i = 0; i < (int64_t)n * inner; i += 97)
                ((float *)x.data)[i] = 0.f;
        int xt = prog_tensor(p, in_dt, 2, xd, x.data);
        kt_free(&x);
        ck_step s = {.kind = CK_REDUCE, .n_in = 1};
        s.in[0] = xt;
        s.u.reduce = (ck_reduce_p){.op = op, .outer = 1, .n = n, .inner = inner, .dtype = in_dt};
        s.out = prog_tensor(p, out_dt, 1, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        check_tiled(p, (uint64_t)n * inner * 4 / 3, "reduce (carried)");
        core_program_free(p);
    }
}

/* A split reduction (core_reduce_split): the part sums cut into rows, and the
 * pairs' sum (in lanes or not, rounded or divided as an average pool divides)
 * into rows or into parts along its n carried from one to the next. */
static void test_reduce_split(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        int op = rep % 2 ? CK_R_MEAN : CK_R_SUM, lanes = rep % 4 >= 2, outer = rep < 4 ? 1 : 2;
        int pool = rep == 4 || rep == 6, inner = kt_randint(2, 9);
        if (pool)
            op = CK_R_SUM;
        /* rows of n carried whole parts: past the 64 lanes' carries (1 KiB an
         * element in and out) where it sums in lanes */
        int g = lanes ? kt_randint(300, 500) : kt_randint(20, 60), m = kt_randint(8, 32), n = m * g;
        core_program *p = prog_new();
        int64_t xd[3] = {outer, n, inner}, pd[3] = {outer, g, 2 * inner}, od[2] = {outer, inner};
        int xt = prog_random(p, 3, xd, -3.f, 3.f);
        ck_step a = {.kind = CK_REDUCE, .n_in = 1, .in = {xt}};
        a.u.reduce = (ck_reduce_p){.op = op, .outer = outer * g, .n = m, .inner = inner,
                                   .dtype = SI_FLOAT32, .divisor = n, .carry = 2};
        a.out = prog_tensor(p, SI_FLOAT32, 3, pd, NULL);
        prog_step(p, &a);
        ck_step b = {.kind = CK_REDUCE, .n_in = 1, .in = {a.out}};
        b.u.reduce = (ck_reduce_p){.op = CK_R_SUM, .outer = outer, .n = g, .inner = inner,
                                   .dtype = SI_FLOAT32, .pairs = 1, .post_div = pool ? n : 0,
                                   .lanes = lanes ? CK_REDUCE_LANES : 0};
        b.out = prog_tensor(p, SI_FLOAT32, 2, od, NULL);
        prog_step(p, &b);
        p->outputs[p->n_outputs++] = b.out;
        uint64_t bws = core_step_working_set(p, 1);
        check_tiled(p, bws * 2 / 3, "split reduce");
        core_program_free(p);
    }
}

/* An MBConv-like chain, so that bands flow from step to step: conv, swish
 * (sigmoid, mul), depthwise, squeeze-excite (mean over rows carried part to
 * part, 1x1 convs, broadcast mul), a residual add, a max pool, and a concat
 * of a banded tensor into a whole one. */
static void test_chain(void **state)
{
    (void)state;
    for (int rep = 0; rep < 6; rep++) {
        core_program *p = prog_new();
        int h = kt_randint(24, 60), w = kt_randint(8, 20), c = kt_randint(4, 8), e = c * kt_randint(2, 4);
        int64_t xd[4] = {1, h, w, c}, fd[4] = {1, 1, c, e}, ed[4] = {1, h, w, e};
        int x = prog_random(p, 4, xd, -1.f, 1.f);
        ck_step s = {.kind = CK_CONV2D, .n_in = 2};
        s.in[0] = x;
        s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
        s.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = c, .out_h = h, .out_w = w,
                               .out_c = e, .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1,
                               .dil_h = 1, .dil_w = 1};
        int y = s.out = prog_tensor(p, SI_FLOAT32, 4, ed, NULL);
        prog_step(p, &s);
        int n = h * w * e;
        ck_step u = {.kind = CK_UNARY, .n_in = 1};
        u.in[0] = y;
        u.u.unary = (ck_unary_p){.op = CK_U_SIGMOID, .count = n};
        int sg = u.out = prog_tensor(p, SI_FLOAT32, 4, ed, NULL);
        prog_step(p, &u);
        ck_step m = {.kind = CK_BINARY, .n_in = 2};
        m.in[0] = y;
        m.in[1] = sg;
        m.u.binary = (ck_binary_p){.op = CK_B_MUL, .rank = 4, .count = n};
        int32_t st[4] = {h * w * e, w * e, e, 1};
        for (int i = 0; i < 4; i++) {
            m.u.binary.out_dim[i] = (int32_t)ed[i];
            m.u.binary.a_stride[i] = m.u.binary.b_stride[i] = st[i];
        }
        int sw = m.out = prog_tensor(p, SI_FLOAT32, 4, ed, NULL);
        prog_step(p, &m);
        /* depthwise 3x3, stride 1 or 2 */
        int sh = 1 + rep % 2, pt, pl;
        int oh = rnd_pad(h, 3, sh, 1, 1, &pt), ow = rnd_pad(w, 3, sh, 1, 1, &pl);
        int64_t dwf[4] = {3, 3, e, 1}, dd[4] = {1, oh, ow, e};
        ck_step d = {.kind = CK_DWCONV2D, .n_in = 2};
        d.in[0] = sw;
        d.in[1] = prog_random(p, 4, dwf, -1.f, 1.f);
        d.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = e, .out_h = oh, .out_w = ow,
                               .out_c = e, .k_h = 3, .k_w = 3, .stride_h = sh, .stride_w = sh,
                               .dil_h = 1, .dil_w = 1, .pad_top = pt, .pad_left = pl, .ch_mult = 1};
        int dv = d.out = prog_tensor(p, SI_FLOAT32, 4, dd, NULL);
        prog_step(p, &d);
        /* squeeze-excite: mean over rows, sigmoid, broadcast multiply */
        int64_t sd[4] = {1, 1, 1, e};
        ck_step r = {.kind = CK_REDUCE, .n_in = 1};
        r.in[0] = dv;
        r.u.reduce = (ck_reduce_p){.op = CK_R_MEAN, .outer = 1, .n = oh * ow, .inner = e,
                                   .dtype = SI_FLOAT32};
        int mean = r.out = prog_tensor(p, SI_FLOAT32, 4, sd, NULL);
        prog_step(p, &r);
        ck_step u2 = {.kind = CK_UNARY, .n_in = 1};
        u2.in[0] = mean;
        u2.u.unary = (ck_unary_p){.op = CK_U_SIGMOID, .count = e};
        int gate = u2.out = prog_tensor(p, SI_FLOAT32, 4, sd, NULL);
        prog_step(p, &u2);
        ck_step g = {.kind = CK_BINARY, .n_in = 2};
        g.in[0] = dv;
        g.in[1] = gate;
        g.u.binary = (ck_binary_p){.op = CK_B_MUL, .rank = 4, .count = oh * ow * e};
        int32_t dst[4] = {oh * ow * e, ow * e, e, 1};
        for (int i = 0; i < 4; i++) {
            g.u.binary.out_dim[i] = (int32_t)dd[i];
            g.u.binary.a_stride[i] = dst[i];
            g.u.binary.b_stride[i] = i == 3 ? 1 : 0;
        }
        int ex = g.out = prog_tensor(p, SI_FLOAT32, 4, dd, NULL);
        prog_step(p, &g);
        /* max pool 3x3 stride 2, SAME */
        int ph = rnd_pad(oh, 3, 2, 1, 1, &pt), pw = rnd_pad(ow, 3, 2, 1, 1, &pl);
        int64_t pd[4] = {1, ph, pw, e};
        ck_step pool = {.kind = CK_POOL, .n_in = 1};
        pool.in[0] = ex;
        pool.u.pool = (ck_pool_p){.is_max = 1, .n = 1, .in_h = oh, .in_w = ow, .c = e, .out_h = ph,
                                  .out_w = pw, .k_h = 3, .k_w = 3, .stride_h = 2, .stride_w = 2,
                                  .pad_top = pt, .pad_left = pl};
        int pv = pool.out = prog_tensor(p, SI_FLOAT32, 4, pd, NULL);
        prog_step(p, &pool);
        /* concat [ex viewed as rows, a constant] along rows, into a whole output */
        int64_t tail_n = kt_randint(10, 100);
        int64_t cd[2] = {(int64_t)oh * ow * e + tail_n, 1}, tdim[1] = {tail_n};
        int tail = prog_random(p, 1, tdim, -1.f, 1.f);
        int cat = prog_tensor(p, SI_FLOAT32, 2, cd, NULL);
        ck_step c1 = {.kind = CK_COPY, .n_in = 1, .out = cat};
        c1.in[0] = ex;
        c1.u.copy = (ck_copy_p){.rank = 2, .dim = {oh * ow, e}, .in_stride = {e, 1}, .out_stride = {e, 1}};
        prog_step(p, &c1);
        ck_step c2 = {.kind = CK_COPY, .n_in = 1, .out = cat, .accumulate = 1};
        c2.in[0] = tail;
        c2.u.copy = (ck_copy_p){.rank = 1, .dim = {(int32_t)tail_n}, .in_stride = {1}, .out_stride = {1},
                                .out_offset = oh * ow * e};
        prog_step(p, &c2);
        p->outputs[p->n_outputs++] = pv;
        p->outputs[p->n_outputs++] = cat;
        p->outputs[p->n_outputs++] = mean;
        check_tiled(p, (uint64_t)n * 4 / 2, "chain");
        /* limits per node (runtime/budget.c refine_tight): each step its own node, a
         * random half of them within a third of the whole, the others within half */
        uint64_t nl[16] = {0};
        assert_true(p->n_steps <= 16);
        for (int k = 0; k < p->n_steps; k++) {
            p->steps[k].node = k;
            nl[k] = kt_randint(0, 1) ? (uint64_t)n * 4 / 3 : 0;
        }
        check_tiled_nodes(p, (uint64_t)n * 4 / 2, nl, p->n_steps, 0, "chain, limits per node");
        core_program_free(p);
    }
}

/* An elementwise binary step of op over two tensors of shape d (rank 4). */
static int same_binary(core_program *p, int op, int a, int b, const int64_t *d)
{
    ck_step m = {.kind = CK_BINARY, .n_in = 2};
    m.in[0] = a;
    m.in[1] = b;
    int32_t n = (int32_t)(d[0] * d[1] * d[2] * d[3]);
    m.u.binary = (ck_binary_p){.op = op, .rank = 4, .count = n};
    int32_t st[4] = {(int32_t)(d[1] * d[2] * d[3]), (int32_t)(d[2] * d[3]), (int32_t)d[3], 1};
    for (int i = 0; i < 4; i++) {
        m.u.binary.out_dim[i] = (int32_t)d[i];
        m.u.binary.a_stride[i] = m.u.binary.b_stride[i] = st[i];
    }
    m.out = prog_tensor(p, SI_FLOAT32, 4, d, NULL);
    prog_step(p, &m);
    return m.out;
}

/* p's epilogues fused into a copy, q (returned), and every output of p
 * bitwise the same from both on the GPU and the host; *conv: q's step of kind
 * (its last). */
static core_program *fused_bitwise_of(const core_program *p, ck_kind kind, int *conv)
{
    core_program *q = prog_copy(p);
    core_fuse_epilogues(q, 1);
    *conv = -1;
    for (int i = 0; i < q->n_steps; i++)
        if (q->steps[i].kind == kind)
            *conv = i;
    assert_true(*conv >= 0);
    for (int o = 0; o < p->n_outputs; o++)
        for (int gpu = 1; gpu >= 0; gpu--) {
            float *a = prog_run(p, o, gpu), *b = prog_run(q, o, gpu);
            assert_memory_equal(a, b, p->tensors[p->outputs[o]].bytes);
            free(a);
            free(b);
        }
    return q;
}

static core_program *fused_bitwise(const core_program *p, int *conv)
{
    return fused_bitwise_of(p, CK_CONV2D, conv);
}

/* core/fuse.c's residual: a Conv2D, its bias's Add, an Add of a tensor made
 * before it (either side) and a Relu become one step (input 7, the Relu as its
 * activation after the residual), bitwise the four steps on the GPU and the
 * host; not fused: a residual made after the conv (case 1), a conv whose
 * output is read twice (case 2), an activation before the Add (case 3). */
static void test_fuse_residual(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        int kind = rep % 4; /* 0 fused, 1..3 the cases above */
        core_program *p = prog_new();
        int h = kt_randint(3, 12), w = kt_randint(3, 12), c = kt_randint(1, 9), oc = kt_randint(1, 9);
        int k = kt_randint(1, 3);
        int64_t xd[4] = {1, h, w, c}, fd[4] = {k, k, c, oc}, bd[1] = {oc}, od[4] = {1, h, w, oc};
        int x = prog_random(p, 4, xd, -1.f, 1.f), r = -1;
        ck_step made = {.kind = CK_UNARY, .n_in = 1}; /* the residual, an activation made by a step */
        made.in[0] = prog_random(p, 4, od, -2.f, 2.f);
        made.u.unary = (ck_unary_p){.op = CK_U_TANH, .count = h * w * oc};
        made.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        if (kind != 1) {
            prog_step(p, &made);
            r = made.out;
        }
        ck_step s = {.kind = CK_CONV2D, .n_in = 2};
        s.in[0] = x;
        s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
        s.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = c, .out_h = h, .out_w = w,
                               .out_c = oc, .k_h = k, .k_w = k, .stride_h = 1, .stride_w = 1,
                               .dil_h = 1, .dil_w = 1, .pad_top = k / 2, .pad_left = k / 2,
                               .act = kind == 3 ? CK_ACT_RELU : CK_ACT_NONE};
        int y = s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        if (kind == 1) {
            prog_step(p, &made);
            r = made.out;
        }
        int bias = prog_random(p, 1, bd, -1.f, 1.f);
        ck_step ba = {.kind = CK_BINARY, .n_in = 2};
        ba.in[0] = y;
        ba.in[1] = bias;
        ba.u.binary = (ck_binary_p){.op = CK_B_ADD, .rank = 4, .count = h * w * oc};
        int32_t st[4] = {h * w * oc, w * oc, oc, 1};
        for (int i = 0; i < 4; i++) {
            ba.u.binary.out_dim[i] = (int32_t)od[i];
            ba.u.binary.a_stride[i] = st[i];
            ba.u.binary.b_stride[i] = i == 3 ? 1 : 0;
        }
        int yb = ba.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &ba);
        int sum = rep < 4 ? same_binary(p, CK_B_ADD, yb, r, od) : same_binary(p, CK_B_ADD, r, yb, od);
        ck_step u = {.kind = CK_UNARY, .n_in = 1};
        u.in[0] = sum;
        u.u.unary = (ck_unary_p){.op = CK_U_RELU, .count = h * w * oc};
        u.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &u);
        p->outputs[p->n_outputs++] = u.out;
        if (kind == 2)
            p->outputs[p->n_outputs++] = yb; /* the conv's output (with its bias) read twice */
        int conv;
        core_program *q = fused_bitwise(p, &conv);
        const ck_conv_p *cp = &q->steps[conv].u.conv;
        if (kind == 0) {
            assert_int_equal(q->n_steps, 2); /* the residual's step and the conv */
            assert_int_equal(cp->has_res, 1);
            assert_int_equal(q->steps[conv].in[7], r);
            assert_int_equal(cp->act, CK_ACT_RELU_OP);
            assert_int_equal(cp->has_bias, 1);
        } else {
            assert_int_equal(cp->has_res, 0);
            assert_true(q->n_steps >= 3);
        }
        core_program_free(q);
        core_program_free(p);
    }
}

/* A binary step of op: t (shape d, rank 4) and v (shape vd, rank 1: one value for
 * all or one a channel, broadcast along the last dim), v on side `side` (0: first). */
static int bcast_binary(core_program *p, int op, int t, int v, const int64_t *vd, int side, const int64_t *d)
{
    ck_step m = {.kind = CK_BINARY, .n_in = 2};
    m.in[side] = v;
    m.in[1 - side] = t;
    int32_t n = (int32_t)(d[0] * d[1] * d[2] * d[3]);
    m.u.binary = (ck_binary_p){.op = op, .rank = 4, .count = n};
    int32_t st[4] = {(int32_t)(d[1] * d[2] * d[3]), (int32_t)(d[2] * d[3]), (int32_t)d[3], 1};
    for (int i = 0; i < 4; i++) {
        m.u.binary.out_dim[i] = (int32_t)d[i];
        int32_t *ts = side ? m.u.binary.a_stride : m.u.binary.b_stride;
        int32_t *vs = side ? m.u.binary.b_stride : m.u.binary.a_stride;
        ts[i] = st[i];
        vs[i] = i == 3 && vd[0] > 1 ? 1 : 0;
    }
    m.out = prog_tensor(p, SI_FLOAT32, 4, d, NULL);
    prog_step(p, &m);
    return m.out;
}

/* core/fuse.c's scale and shift after a conv's bias: a Conv2D or depthwise conv with
 * its bias, then Mul(v1), Add(v2) (each a channel vector or a scalar, either side),
 * for a Conv2D an Add of a residual made before it, and a Relu, become one step
 * (has_scale 3, v1 input 6, v2 input 3), bitwise the steps on the GPU and the host;
 * case 1: the Mul alone after the bias (has_scale 2); case 2: the Mul's input read
 * twice, nothing fused but the bias's own step; case 3: the conv without a bias,
 * the Mul its scale before a bias (has_scale 1) as before, the Add its bias. */
static void test_fuse_post(void **state)
{
    (void)state;
    for (int rep = 0; rep < 16; rep++) {
        int kind = rep % 4, dw = rep / 4 % 2, side = rep / 8, res = !dw && kind == 0;
        core_program *p = prog_new();
        int h = kt_randint(8, 20), w = kt_randint(2, 9), c = kt_randint(1, 12), k = kt_randint(1, 3);
        int oc = dw ? c : kt_randint(1, 12);
        int64_t xd[4] = {1, h, w, c}, fd[4] = {k, k, c, dw ? 1 : oc}, bd[1] = {oc}, od[4] = {1, h, w, oc};
        int64_t v1d[1] = {kt_rand() % 2 ? oc : 1}, v2d[1] = {kt_rand() % 2 ? oc : 1};
        int r = res ? prog_random(p, 4, od, -2.f, 2.f) : -1;
        ck_step s = {.kind = dw ? CK_DWCONV2D : CK_CONV2D, .n_in = kind == 3 ? 2 : 3};
        s.in[0] = prog_random(p, 4, xd, -1.f, 1.f);
        s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
        if (kind != 3)
            s.in[2] = prog_random(p, 1, bd, -1.f, 1.f);
        s.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = c, .out_h = h, .out_w = w,
                               .out_c = oc, .k_h = k, .k_w = k, .stride_h = 1, .stride_w = 1,
                               .dil_h = 1, .dil_w = 1, .pad_top = k / 2, .pad_left = k / 2,
                               .ch_mult = dw, .has_bias = kind != 3};
        int y = s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        if (kind == 3) /* a scale before a bias: channel vectors only */
            v1d[0] = v2d[0] = oc;
        int v1 = prog_random(p, 1, v1d, -2.f, 2.f), v2 = prog_random(p, 1, v2d, -1.f, 1.f);
        int m = bcast_binary(p, CK_B_MUL, y, v1, v1d, side, od), out = m;
        if (kind != 1) {
            out = bcast_binary(p, CK_B_ADD, m, v2, v2d, 1 - side, od);
            if (res)
                out = same_binary(p, CK_B_ADD, out, r, od);
            ck_step u = {.kind = CK_UNARY, .n_in = 1};
            u.in[0] = out;
            u.u.unary = (ck_unary_p){.op = CK_U_RELU, .count = h * w * oc};
            out = u.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
            prog_step(p, &u);
        }
        p->outputs[p->n_outputs++] = out;
        if (kind == 2)
            p->outputs[p->n_outputs++] = y;
        int conv;
        core_program *q = fused_bitwise_of(p, s.kind, &conv);
        const ck_step *f = &q->steps[conv];
        if (kind == 0) {
            assert_int_equal(q->n_steps, 1);
            assert_int_equal(f->u.conv.has_scale, 3);
            assert_int_equal(f->in[6], v1);
            assert_int_equal(f->in[3], v2);
            assert_int_equal(f->u.conv.has_res, res);
            assert_int_equal(f->u.conv.act, CK_ACT_RELU_OP);
        } else if (kind == 1) {
            assert_int_equal(q->n_steps, 1);
            assert_int_equal(f->u.conv.has_scale, 2);
        } else if (kind == 2) {
            assert_int_equal(f->u.conv.has_scale, 0);
            assert_true(q->n_steps >= 3);
        } else {
            assert_int_equal(q->n_steps, 1);
            assert_int_equal(f->u.conv.has_scale, 1);
            assert_int_equal(f->u.conv.has_bias, 1);
        }
        if (kind == 0) /* and split into rows and channel parts: the same bits again */
            check_tiled(q, max_ws(q) / 2, dw ? "dwconv2d, scale and shift" : "conv2d, scale and shift");
        core_program_free(q);
        core_program_free(p);
    }
}

/* A scalar binary step of op: t (shape d, rank 4) and a float scalar c, the
 * scalar on side `side` (0: first). */
static int scalar_binary_step(core_program *p, int op, int t, int c, int side, const int64_t *d)
{
    const int64_t one[1] = {1};
    return bcast_binary(p, op, t, c, one, side, d);
}

/* core/fuse.c's hard sigmoid: a Conv2D (its bias fused), then Add(x, c2),
 * Relu6, Mul(c1) as MobileNetV3's squeeze-excite leaves them, become one step
 * (hswish 2), bitwise the four steps on the GPU and the host, the scalars on
 * either side; not fused where the Add's input is read twice (case 1) or the
 * Relu6's (case 2). */
static void test_fuse_hsigmoid(void **state)
{
    (void)state;
    for (int rep = 0; rep < 9; rep++) {
        int kind = rep % 3;
        core_program *p = prog_new();
        int h = kt_randint(1, 6), w = kt_randint(1, 6), c = kt_randint(1, 40), oc = kt_randint(1, 40);
        int64_t xd[4] = {1, h, w, c}, fd[4] = {1, 1, c, oc}, bd[1] = {oc}, od[4] = {1, h, w, oc}, one[1] = {1};
        ck_step s = {.kind = CK_CONV2D, .n_in = 3};
        s.in[0] = prog_random(p, 4, xd, -1.f, 1.f);
        s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
        s.in[2] = prog_random(p, 1, bd, -1.f, 1.f);
        s.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = c, .out_h = h, .out_w = w,
                               .out_c = oc, .k_h = 1, .k_w = 1, .stride_h = 1, .stride_w = 1,
                               .dil_h = 1, .dil_w = 1, .has_bias = 1};
        int y = s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        float three = 3.f, sixth = 1.f / 6.f;
        int c2 = prog_tensor(p, SI_FLOAT32, 1, one, &three), c1 = prog_tensor(p, SI_FLOAT32, 1, one, &sixth);
        int a = scalar_binary_step(p, CK_B_ADD, y, c2, rep / 3 % 2, od);
        ck_step u = {.kind = CK_UNARY, .n_in = 1};
        u.in[0] = a;
        u.u.unary = (ck_unary_p){.op = CK_U_RELU6, .count = h * w * oc};
        int r = u.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &u);
        int m = scalar_binary_step(p, CK_B_MUL, r, c1, rep / 3 == 1, od);
        p->outputs[p->n_outputs++] = m;
        if (kind == 1)
            p->outputs[p->n_outputs++] = y;
        if (kind == 2)
            p->outputs[p->n_outputs++] = r;
        int conv;
        core_program *q = fused_bitwise(p, &conv);
        if (kind == 0) {
            assert_int_equal(q->n_steps, 1);
            assert_int_equal(q->steps[conv].u.conv.hswish, 2);
            assert_int_equal(q->steps[conv].in[4], c1);
            assert_int_equal(q->steps[conv].in[5], c2);
        } else {
            assert_int_equal(q->steps[conv].u.conv.hswish, 0);
            assert_true(q->n_steps >= 3);
        }
        core_program_free(q);
        core_program_free(p);
    }
}

/* Pad along rows. Constant, as Keras pads explicitly before a strided
 * depthwise convolution ((0,1) or (1,1) rows and columns; here also followed
 * by one), with parts in the padding past the input's end; reflect and
 * symmetric along the columns only (row windows), and along the rows too
 * (the input then bound whole, mirrored rows reaching past any window). */
static void test_pad(void **state)
{
    (void)state;
    for (int rep = 0; rep < 15; rep++) {
        core_program *p = prog_new();
        int mode = rep % 3, rows_padded = mode == 0 || (rep / 3) % 2;
        int h = kt_randint(20, 50), w = kt_randint(6, 20), c = kt_randint(3, 8);
        int lim = mode == 1 ? 3 : 4; /* reflect pads at most dim - 1 */
        int bt = rows_padded ? kt_randint(0, lim) : 0, at = rows_padded ? kt_randint(1, lim) : 0;
        int bl = kt_randint(0, lim), ar = kt_randint(0, lim);
        if (mode == 0 && rep % 2)
            bt = bl = 0, at = ar = 1; /* Keras' (0, 1) */
        int oh = h + bt + at, ow = w + bl + ar;
        int64_t xd[4] = {1, h, w, c}, od[4] = {1, oh, ow, c};
        ck_step s = {.kind = CK_PAD, .n_in = 1};
        s.in[0] = prog_random(p, 4, xd, -2.f, 2.f);
        s.u.pad = (ck_pad_p){.rank = 4, .in_dim = {1, h, w, c}, .out_dim = {1, oh, ow, c},
                             .before = {0, bt, bl, 0}, .mode = mode, .value = kt_randf(-1.f, 1.f)};
        s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        uint64_t limit = 0, in_b = (uint64_t)h * w * c * 4, out_b = (uint64_t)oh * ow * c * 4;
        if (mode != 0 && rows_padded)
            limit = in_b + out_b / 2 + 1024; /* the whole input and half the output */
        if (mode == 0 && rep % 2) {
            /* a valid 3x3 depthwise of stride 2 on the padded rows */
            int dh = (oh - 3) / 2 + 1, dw = (ow - 3) / 2 + 1;
            int64_t fd[4] = {3, 3, c, 1}, dd[4] = {1, dh, dw, c};
            ck_step d = {.kind = CK_DWCONV2D, .n_in = 2};
            d.in[0] = s.out;
            d.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
            d.u.conv = (ck_conv_p){.n = 1, .in_h = oh, .in_w = ow, .in_c = c, .out_h = dh,
                                   .out_w = dw, .out_c = c, .k_h = 3, .k_w = 3, .stride_h = 2,
                                   .stride_w = 2, .dil_h = 1, .dil_w = 1, .ch_mult = 1};
            d.out = prog_tensor(p, SI_FLOAT32, 4, dd, NULL);
            prog_step(p, &d);
            p->outputs[p->n_outputs++] = d.out;
        } else {
            p->outputs[p->n_outputs++] = s.out;
        }
        check_tiled(p, limit, mode == 0 ? "pad (constant)" : mode == 1 ? "pad (reflect)" : "pad (symmetric)");
        core_program_free(p);
    }
}

/* y[1,h,w,c] = a[w,c] + b[h]: a big activation from small constants, split
 * along rows like any elementwise step. */
static int prog_spread(core_program *p, int h, int w, int c)
{
    int64_t ad[2] = {w, c}, bd[1] = {h}, yd[4] = {1, h, w, c};
    ck_step s = {.kind = CK_BINARY, .n_in = 2};
    s.in[0] = prog_random(p, 2, ad, -1.f, 1.f);
    s.in[1] = prog_random(p, 1, bd, -1.f, 1.f);
    s.u.binary = (ck_binary_p){.op = CK_B_ADD, .rank = 4, .out_dim = {1, h, w, c},
                               .a_stride = {0, 0, c, 1}, .b_stride = {0, 1, 0, 0},
                               .count = h * w * c};
    s.out = prog_tensor(p, SI_FLOAT32, 4, yd, NULL);
    prog_step(p, &s);
    return s.out;
}

/* A concat too big for one buffer, with no budget: it lives as bands that
 * each of its copies writes into, along channels (each pixel's channels land
 * in one band) and along rows, from banded sources; a consumer follows its
 * bands, and as an output it comes back band by band. */
static void test_concat_bands(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        core_program *p = prog_new();
        int rows = rep % 2, h = kt_randint(16, 40), w = kt_randint(4, 12);
        int c2 = kt_randint(1, 4), c1 = rows ? c2 : kt_randint(1, 6);
        int y1 = prog_spread(p, h, w, c1), y2 = prog_spread(p, h, w, c2);
        int64_t cd[4] = {1, rows ? 2 * h : h, w, rows ? c1 : c1 + c2};
        int cat = prog_tensor(p, SI_FLOAT32, 4, cd, NULL);
        int64_t n1 = (int64_t)h * w * c1, n2 = (int64_t)h * w * c2;
        ck_step a = {.kind = CK_COPY, .n_in = 1, .out = cat}, b = a;
        a.in[0] = y1;
        b.in[0] = y2;
        b.accumulate = 1;
        if (rows) {
            a.u.copy = (ck_copy_p){.rank = 1, .dim = {(int32_t)n1}, .in_stride = {1}, .out_stride = {1}};
            b.u.copy = (ck_copy_p){.rank = 1, .dim = {(int32_t)n2}, .in_stride = {1}, .out_stride = {1},
                                   .out_offset = (int32_t)n1};
        } else {
            a.u.copy = (ck_copy_p){.rank = 2, .dim = {h * w, c1}, .in_stride = {c1, 1},
                                   .out_stride = {c1 + c2, 1}};
            b.u.copy = (ck_copy_p){.rank = 2, .dim = {h * w, c2}, .in_stride = {c2, 1},
                                   .out_stride = {c1 + c2, 1}, .out_offset = c1};
        }
        prog_step(p, &a);
        prog_step(p, &b);
        ck_step u = {.kind = CK_UNARY, .n_in = 1};
        u.in[0] = cat;
        u.u.unary = (ck_unary_p){.op = CK_U_SIGMOID, .count = (int32_t)(n1 + n2)};
        u.out = prog_tensor(p, SI_FLOAT32, 4, cd, NULL);
        prog_step(p, &u);
        p->outputs[p->n_outputs++] = u.out;
        p->outputs[p->n_outputs++] = cat;
        check_tiled_max(p, UINT64_MAX, (uint64_t)(n1 + n2) * 4 / 5, rows ? "concat (rows)" : "concat (channels)");
        core_program_free(p);
    }
}

/* Softmax and argmax along their outer rows, gather along its outer rows or
 * (one outer row) along its indices, the table bound whole. */
static void test_rows_misc(void **state)
{
    (void)state;
    for (int rep = 0; rep < 12; rep++) {
        core_program *p = prog_new();
        int kind = rep % 4, outer = kt_randint(30, 90), n = kt_randint(5, 40), inner = kt_randint(1, 6);
        ck_step s = {.n_in = 1};
        uint64_t limit = 0;
        if (kind == 0) {
            int64_t xd[2] = {outer, n};
            s.kind = CK_SOFTMAX;
            s.in[0] = prog_random(p, 2, xd, -4.f, 4.f);
            s.u.softmax = (ck_softmax_p){.outer = outer, .n = n, .log = rep % 8 == 4};
            s.out = prog_tensor(p, SI_FLOAT32, 2, xd, NULL);
        } else if (kind == 1) {
            int64_t xd[3] = {outer, n, inner}, od[2] = {outer, inner};
            s.kind = CK_ARGMAX;
            s.in[0] = prog_random(p, 3, xd, -4.f, 4.f);
            s.u.argmax = (ck_argmax_p){.outer = outer, .n = n, .inner = inner, .is_min = rep % 8 == 5,
                                       .in_dtype = SI_FLOAT32};
            s.out = prog_tensor(p, SI_INT32, 2, od, NULL);
        } else {
            int one = kind == 3, o = one ? 1 : outer, k = one ? kt_randint(300, 600) : kt_randint(2, 9);
            int64_t xd[3] = {o, n, inner}, id[1] = {k}, od[3] = {o, k, inner};
            float *idx = malloc((size_t)k * sizeof *idx);
            for (int j = 0; j < k; j++)
                ((int32_t *)idx)[j] = kt_randint(0, n - 1);
            s.kind = CK_GATHER;
            s.n_in = 2;
            s.in[0] = prog_random(p, 3, xd, -4.f, 4.f);
            s.in[1] = prog_tensor(p, SI_INT32, 1, id, idx);
            free(idx);
            s.u.gather = (ck_gather_p){.outer = o, .n = n, .inner = inner, .k = k};
            if (one) /* the whole table and half the rest */
                limit = ((uint64_t)n * inner * 4 + 255) / 256 * 256 + (uint64_t)k * (inner + 1) * 2 + 512;
            s.out = prog_tensor(p, SI_FLOAT32, 3, od, NULL);
        }
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        check_tiled(p, limit, kind == 0 ? "softmax" : kind == 1 ? "argmax" : "gather");
        core_program_free(p);
    }
}

/* Cumsum / Cumprod (CK_SCAN) and LRN along their outer rows: each part scans
 * (normalizes) its own rows, bitwise the whole step on host and GPU. */
static void test_rows_scan_lrn(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        core_program *p = prog_new();
        int outer = kt_randint(30, 90), n = kt_randint(5, 40), inner = kt_randint(1, 6);
        ck_step s = {.n_in = 1};
        if (rep % 2 == 0) {
            int64_t xd[3] = {outer, n, inner};
            s.kind = CK_SCAN;
            s.in[0] = prog_random(p, 3, xd, rep % 4 ? 0.5f : -4.f, rep % 4 ? 1.5f : 4.f);
            s.u.scan = (ck_scan_p){.op = rep % 4 ? CK_SCAN_PROD : CK_SCAN_SUM, .outer = outer,
                                   .n = n, .inner = inner, .exclusive = rep % 3 == 0,
                                   .reverse = rep >= 4};
            s.out = prog_tensor(p, SI_FLOAT32, 3, xd, NULL);
        } else {
            int64_t xd[2] = {outer, n};
            s.kind = CK_LRN;
            s.in[0] = prog_random(p, 2, xd, -4.f, 4.f);
            s.u.lrn = (ck_lrn_p){.outer = outer, .c = n, .radius = kt_randint(0, 6), .bias = 1.f,
                                 .alpha = 0.5f, .beta = 0.75f};
            s.out = prog_tensor(p, SI_FLOAT32, 2, xd, NULL);
        }
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        check_tiled(p, 0, rep % 2 == 0 ? "scan" : "lrn");
        core_program_free(p);
    }
}

/* A model input (PT_INPUT) read by a conv, or by an elementwise step before
 * a conv (frcnn-irv2's preprocessing), split into parts: each part reads its
 * window of the input as an input of its own (core_tensor.input_off) that the
 * run fills from the caller's data. No step binds the whole input and no copy
 * cuts a window from it (before: each part's copy bound it whole, the model's
 * smallest budget); bitwise the untiled program on the GPU and the host. */
static void test_input_windows(void **state)
{
    (void)state;
    for (int rep = 0; rep < 8; rep++) {
        core_program *p = prog_new();
        int h = kt_randint(24, 60), w = kt_randint(8, 24), c = kt_randint(2, 6), oc = kt_randint(4, 12);
        int64_t xd[4] = {1, h, w, c};
        int x = prog_random(p, 4, xd, -1.f, 1.f);
        p->tensors[x].kind = PT_INPUT;
        p->tensors[x].input = 0;
        int src = x;
        if (rep % 2) { /* x * k, k one value */
            int64_t one[1] = {1};
            ck_step m = {.kind = CK_BINARY, .n_in = 2};
            m.in[0] = x;
            m.in[1] = prog_random(p, 1, one, 0.5f, 2.f);
            m.u.binary = (ck_binary_p){.op = CK_B_MUL, .rank = 4, .count = h * w * c};
            int32_t st[4] = {h * w * c, w * c, c, 1};
            for (int i = 0; i < 4; i++) {
                m.u.binary.out_dim[i] = (int32_t)xd[i];
                m.u.binary.a_stride[i] = st[i];
                m.u.binary.b_stride[i] = 0;
            }
            src = m.out = prog_tensor(p, SI_FLOAT32, 4, xd, NULL);
            prog_step(p, &m);
        }
        int sh = 1 + rep % 3 / 2, pt, pl;
        int oh = rnd_pad(h, 3, sh, 1, 1, &pt), ow = rnd_pad(w, 3, sh, 1, 1, &pl);
        int64_t fd[4] = {3, 3, c, oc}, bd[1] = {oc}, od[4] = {1, oh, ow, oc};
        ck_step s = {.kind = CK_CONV2D, .n_in = 3};
        s.in[0] = src;
        s.in[1] = prog_random(p, 4, fd, -1.f, 1.f);
        s.in[2] = prog_random(p, 1, bd, -1.f, 1.f);
        s.u.conv = (ck_conv_p){.n = 1, .in_h = h, .in_w = w, .in_c = c, .out_h = oh, .out_w = ow,
                               .out_c = oc, .k_h = 3, .k_w = 3, .stride_h = sh, .stride_w = sh,
                               .dil_h = 1, .dil_w = 1, .pad_top = pt, .pad_left = pl, .ch_mult = 1,
                               .has_bias = 1, .act = CK_ACT_RELU};
        s.out = prog_tensor(p, SI_FLOAT32, 4, od, NULL);
        prog_step(p, &s);
        p->outputs[p->n_outputs++] = s.out;
        uint64_t in_bytes = p->tensors[x].bytes, limit = max_ws(p) / 3;
        check_tiled(p, limit, rep % 2 ? "input * k, conv" : "conv of an input");
        /* the same tiling again, looked into */
        core_program *q = prog_copy(p);
        si_error err = {0};
        int n_split = 0, windows = 0;
        assert_int_equal(core_program_tile(q, limit, NULL, 0, 0, NULL, NULL, &n_split, &err), SI_OK);
        for (int k = 0; k < q->n_steps; k++)
            for (int i = 0; i < q->steps[k].n_in; i++) {
                int t = q->steps[k].in[i];
                if (t < 0 || q->tensors[core_storage(q, t)].kind != PT_INPUT)
                    continue;
                const core_tensor *wt = &q->tensors[core_storage(q, t)];
                assert_int_equal(wt->input, 0);
                assert_true(wt->bytes < in_bytes);
                assert_true(wt->input_off >= 0 &&
                            wt->input_off + core_shape_count(&wt->shape) <= h * w * c);
                assert_true(q->steps[k].kind != CK_COPY);
                assert_true(core_step_working_set(q, k) <= limit);
                windows++;
            }
        assert_true(windows > 1);
        core_program_free(q);
        core_program_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv),     cmocka_unit_test(test_dwconv),
        cmocka_unit_test(test_pool),     cmocka_unit_test(test_resize),
        cmocka_unit_test(test_matmul),   cmocka_unit_test(test_conv_channels),
        cmocka_unit_test(test_matmul_thin_columns), cmocka_unit_test(test_rows_channels),
        cmocka_unit_test(test_reduce_carry), cmocka_unit_test(test_reduce_split), cmocka_unit_test(test_chain), cmocka_unit_test(test_fuse_residual), cmocka_unit_test(test_fuse_hsigmoid),
        cmocka_unit_test(test_pad),      cmocka_unit_test(test_concat_bands),
        cmocka_unit_test(test_rows_misc), cmocka_unit_test(test_rows_scan_lrn),
        cmocka_unit_test(test_batch_windows), cmocka_unit_test(test_crop_boxes),
        /* last: the random cases of those above stay as they were */
        cmocka_unit_test(test_fuse_post), cmocka_unit_test(test_conv_channels_post),
        cmocka_unit_test(test_input_windows),
    };
    return cmocka_run_group_tests(tests, kt_group_setup, kt_group_teardown);
}
