/* The host interpreter (core/interp.c): TF1 control flow, TensorArray,
 * NonMaxSuppression and Where on tiny hand-written graphs, with expectations
 * computed by hand or with tfjs 4.22 (noted where so); then, when references
 * from tests/oracle/reference.js exist, whole models run on the host alone. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "graph.h"
#include "interp.h"
#include "tiny_model.h"
#include "test_util.h"

/* ---- building tiny graph models ---- */

static void b64(const char *s, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(uint8_t)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned)(uint8_t)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (uint8_t)s[i + 2];
        out[o++] = t[(v >> 18) & 63];
        out[o++] = t[(v >> 12) & 63];
        out[o++] = i + 1 < n ? t[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? t[v & 63] : '=';
    }
    out[o] = 0;
}

static void const_iv(jb *j, const char *name, const int *v, int n)
{
    char a[600], vals[300] = "";
    for (int i = 0; i < n; i++)
        snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%d", i ? "," : "", v[i]);
    snprintf(a, sizeof a,
             "\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
             "\"tensorShape\":{\"dim\":[{\"size\":\"%d\"}]},\"intVal\":[%s]}}", n, vals);
    node(j, name, "Const", "", a);
}

static void placeholder(jb *j, const char *name, const char *dtype, const char *shape_json)
{
    char a[300];
    snprintf(a, sizeof a, "\"dtype\":{\"type\":\"%s\"},\"shape\":{\"shape\":%s}", dtype, shape_json);
    node(j, name, "Placeholder", "", a);
}

static void enter(jb *j, const char *name, const char *in, const char *frame, int is_const)
{
    char f[64], a[200], ins[200];
    b64(frame, f);
    snprintf(a, sizeof a, "\"frame_name\":{\"s\":\"%s\"},\"is_constant\":{\"b\":%s}", f,
             is_const ? "true" : "false");
    snprintf(ins, sizeof ins, "\"%s\"", in);
    node(j, name, "Enter", ins, a);
}

typedef struct {
    io_model *m;
    core_graph *g;
    io_reader *r;
} model;

static si_result loader(void *user, int w, void *dst4, si_error *err)
{
    model *md = user;
    const io_weight *wt = &md->m->weights[w];
    void *stored = malloc(wt->nbytes ? wt->nbytes : 1);
    if (!stored)
        return base_fail(err, SI_ERR_NOMEM, "out of memory");
    si_result st = io_reader_read(md->r, w, stored, err);
    if (st == SI_OK)
        io_weight_dequantize(wt, stored, dst4);
    free(stored);
    return st;
}

static void model_close(model *md)
{
    io_reader_close(md->r);
    core_graph_free(md->g);
    io_model_free(md->m);
    memset(md, 0, sizeof *md);
}

static si_result model_open(const char *path, model *md, si_error *err)
{
    memset(md, 0, sizeof *md);
    si_result st = io_model_load(path, &md->m, err);
    if (st == SI_OK)
        st = core_graph_build(md->m, &md->g, err);
    if (st == SI_OK)
        st = io_reader_open(md->m, SI_IO_MMAP, &md->r, err);
    if (st != SI_OK)
        model_close(md);
    return st;
}

/* Writes the model j holds to tmp_root/file (j is emptied) and opens it. */
static void load_model(jb *j, const char *file, model *md)
{
    const char *path = write_model(j, file);
    si_error err = {0};
    si_result st = model_open(path, md, &err);
    if (st != SI_OK)
        fail_msg("%s", err.message);
}

static int find(const model *md, const char *name)
{
    return core_graph_find(md->g, name, strlen(name));
}

static void put(core_valmap *vm, const model *md, const char *name, si_dtype dt, int rank,
                const int64_t *dims, const void *data)
{
    core_buf b = {.dtype = dt, .shape = {.rank = rank}, .data = (void *)data};
    for (int i = 0; i < rank; i++)
        b.shape.d[i] = dims[i];
    si_error err = {0};
    int k = find(md, name);
    assert_true(k >= 0);
    assert_int_equal(core_valmap_put(vm, k, 0, &b, &err), SI_OK);
}

static const core_buf *get(const core_valmap *vm, const model *md, const char *name, int idx)
{
    int k = find(md, name);
    assert_true(k >= 0);
    const core_buf *b = core_valmap_get(vm, k, idx);
    if (!b)
        fail_msg("no value for %s:%d", name, idx);
    return b;
}

static si_result run(model *md, core_valmap *vm, si_error *err)
{
    return core_interp_run(md->g, vm, loader, md, NULL, err);
}

/* ---- TF1 while loop: sum of 0..9 ---- */

static void build_while(jb *j)
{
    placeholder(j, "x", "DT_INT32", "{}");
    const_i(j, "i0", 0);
    const_i(j, "s0", 0);
    const_i(j, "lim", 10);
    const_i(j, "one", 1);
    enter(j, "e_i", "i0", "L", 0);
    enter(j, "e_s", "s0", "L", 0);
    enter(j, "e_lim", "lim", "L", 1);
    enter(j, "e_one", "one", "L", 1);
    node(j, "m_i", "Merge", "\"e_i\",\"n_i\"", NULL);
    node(j, "m_s", "Merge", "\"e_s\",\"n_s\"", NULL);
    node(j, "less", "Less", "\"m_i\",\"e_lim\"", NULL);
    node(j, "cond", "LoopCond", "\"less\"", NULL);
    node(j, "sw_i", "Switch", "\"m_i\",\"cond\"", NULL);
    node(j, "sw_s", "Switch", "\"m_s\",\"cond\"", NULL);
    node(j, "id_i", "Identity", "\"sw_i:1\"", NULL);
    node(j, "id_s", "Identity", "\"sw_s:1\"", NULL);
    node(j, "add_i", "AddV2", "\"id_i\",\"e_one\"", NULL);
    node(j, "add_s", "AddV2", "\"id_s\",\"id_i\"", NULL);
    node(j, "n_i", "NextIteration", "\"add_i\"", NULL);
    node(j, "n_s", "NextIteration", "\"add_s\"", NULL);
    node(j, "exit_s", "Exit", "\"sw_s\"", NULL);
    node(j, "exit_i", "Exit", "\"sw_i\"", NULL);
    node(j, "out", "AddV2", "\"exit_s\",\"x\"", NULL);
}

static void test_while_loop(void **state)
{
    (void)state;
    jb j = {0};
    model md;
    build_while(&j);
    load_model(&j, "while.json", &md);
    core_valmap *vm = core_valmap_new(md.g);
    int32_t x = 100;
    put(vm, &md, "x", SI_INT32, 0, NULL, &x);
    si_error err = {0};
    si_result st = run(&md, vm, &err);
    if (st != SI_OK)
        fail_msg("%s", err.message);
    assert_int_equal(core_graph_n_outputs(md.g), 2);
    const core_buf *out = get(vm, &md, "out", 0), *ei = get(vm, &md, "exit_i", 0);
    assert_int_equal(out->shape.rank, 0);
    assert_int_equal(*(int32_t *)out->data, 145);
    assert_int_equal(*(int32_t *)ei->data, 10);
    core_valmap_free(vm);
    model_close(&md);
}

/* ---- Switch / Merge conditional, and a dead output ---- */

static void test_cond(void **state)
{
    (void)state;
    jb j = {0};
    model md;
    placeholder(&j, "x", "DT_FLOAT", "{}");
    const_f(&j, "zero", 0.f);
    const_f(&j, "two", 2.f);
    node(&j, "p", "Greater", "\"x\",\"zero\"", NULL);
    node(&j, "sw", "Switch", "\"x\",\"p\"", NULL);
    node(&j, "t", "Mul", "\"sw:1\",\"two\"", NULL);
    node(&j, "f", "Neg", "\"sw\"", NULL);
    node(&j, "m", "Merge", "\"f\",\"t\"", NULL);
    node(&j, "out", "Identity", "\"m\"", NULL);
    load_model(&j, "cond.json", &md);
    const float xs[2] = {3.f, -2.f}, want[2] = {6.f, 2.f};
    for (int c = 0; c < 2; c++) {
        core_valmap *vm = core_valmap_new(md.g);
        put(vm, &md, "x", SI_FLOAT32, 0, NULL, &xs[c]);
        si_error err = {0};
        if (run(&md, vm, &err) != SI_OK)
            fail_msg("%s", err.message);
        assert_float_equal(*(float *)get(vm, &md, "out", 0)->data, want[c], 0);
        core_valmap_free(vm);
    }
    /* a value already in the map (computed elsewhere) is not recomputed, and
     * what only it needs is not needed: no x here */
    core_valmap *vm0 = core_valmap_new(md.g);
    const float mv = 42.f;
    put(vm0, &md, "m", SI_FLOAT32, 0, NULL, &mv);
    si_error err0 = {0};
    if (run(&md, vm0, &err0) != SI_OK)
        fail_msg("%s", err0.message);
    assert_float_equal(*(float *)get(vm0, &md, "out", 0)->data, 42.f, 0);
    assert_null(core_valmap_get(vm0, find(&md, "p"), 0));
    core_valmap_free(vm0);
    model_close(&md);

    /* an output on the branch not taken cannot be computed: a clear error */
    placeholder(&j, "x", "DT_FLOAT", "{}");
    const_f(&j, "zero", 0.f);
    node(&j, "p", "Greater", "\"x\",\"zero\"", NULL);
    node(&j, "sw", "Switch", "\"x\",\"p\"", NULL);
    node(&j, "dead", "Neg", "\"sw\"", NULL);
    node(&j, "live", "Neg", "\"sw:1\"", NULL);
    load_model(&j, "cond_dead.json", &md);
    core_valmap *vm = core_valmap_new(md.g);
    put(vm, &md, "x", SI_FLOAT32, 0, NULL, &xs[0]);
    si_error err = {0};
    assert_int_not_equal(run(&md, vm, &err), SI_OK);
    assert_non_null(strstr(err.message, "'dead:0'"));
    core_valmap_free(vm);
    model_close(&md);
}

/* ---- TensorArray: scatter, read/write in a loop, gather, size ---- */

static void test_tensor_array(void **state)
{
    (void)state;
    jb j = {0};
    model md;
    const char *ta = "\"dtype\":{\"type\":\"DT_FLOAT\"},\"element_shape\":{\"shape\":{\"dim\":[{\"size\":\"2\"}]}},"
                     "\"dynamic_size\":{\"b\":false},\"clear_after_read\":{\"b\":true}";
    const char *ta2 = "\"dtype\":{\"type\":\"DT_FLOAT\"},\"element_shape\":{\"shape\":{\"unknownRank\":true}}";
    const char *fl = "\"dtype\":{\"type\":\"DT_FLOAT\"}";
    placeholder(&j, "x", "DT_FLOAT", "{\"dim\":[{\"size\":\"3\"},{\"size\":\"2\"}]}");
    const_i(&j, "size", 3);
    const_i(&j, "i0", 0);
    const_i(&j, "one", 1);
    const_f(&j, "two", 2.f);
    static const int idx[3] = {0, 1, 2};
    const_iv(&j, "idx", idx, 3);
    node(&j, "ta_in", "TensorArrayV3", "\"size\"", ta);
    node(&j, "ta_out", "TensorArrayV3", "\"size\"", ta2);
    node(&j, "sc", "TensorArrayScatterV3", "\"ta_in\",\"idx\",\"x\",\"ta_in:1\"", NULL);
    enter(&j, "e_tain", "ta_in", "T", 1);
    enter(&j, "e_flowin", "sc", "T", 1);
    enter(&j, "e_taout", "ta_out", "T", 1);
    enter(&j, "e_size", "size", "T", 1);
    enter(&j, "e_one", "one", "T", 1);
    enter(&j, "e_two", "two", "T", 1);
    enter(&j, "e_flow", "ta_out:1", "T", 0);
    enter(&j, "e_i", "i0", "T", 0);
    node(&j, "m_i", "Merge", "\"e_i\",\"n_i\"", NULL);
    node(&j, "m_f", "Merge", "\"e_flow\",\"n_f\"", NULL);
    node(&j, "less", "Less", "\"m_i\",\"e_size\"", NULL);
    node(&j, "lc", "LoopCond", "\"less\"", NULL);
    node(&j, "s_i", "Switch", "\"m_i\",\"lc\"", NULL);
    node(&j, "s_f", "Switch", "\"m_f\",\"lc\"", NULL);
    node(&j, "id_i", "Identity", "\"s_i:1\"", NULL);
    node(&j, "id_f", "Identity", "\"s_f:1\"", NULL);
    node(&j, "rd", "TensorArrayReadV3", "\"e_tain\",\"id_i\",\"e_flowin\"", fl);
    node(&j, "y", "Mul", "\"rd\",\"e_two\"", NULL);
    node(&j, "wr", "TensorArrayWriteV3", "\"e_taout\",\"id_i\",\"y\",\"id_f\"", NULL);
    node(&j, "ai", "AddV2", "\"id_i\",\"e_one\"", NULL);
    node(&j, "n_i", "NextIteration", "\"ai\"", NULL);
    node(&j, "n_f", "NextIteration", "\"wr\"", NULL);
    node(&j, "x_f", "Exit", "\"s_f\"", NULL);
    node(&j, "x_i", "Exit", "\"s_i\"", NULL);
    node(&j, "g", "TensorArrayGatherV3", "\"ta_out\",\"idx\",\"x_f\"", fl);
    node(&j, "sz", "TensorArraySizeV3", "\"ta_out\",\"x_f\"", NULL);
    load_model(&j, "ta.json", &md);
    core_valmap *vm = core_valmap_new(md.g);
    const float xv[6] = {1, 2, 3, 4, 5, 6.5f};
    put(vm, &md, "x", SI_FLOAT32, 2, (int64_t[]){3, 2}, xv);
    si_error err = {0};
    if (run(&md, vm, &err) != SI_OK)
        fail_msg("%s", err.message);
    const core_buf *g = get(vm, &md, "g", 0);
    assert_int_equal(g->shape.rank, 2);
    assert_int_equal(g->shape.d[0], 3);
    assert_int_equal(g->shape.d[1], 2);
    for (int i = 0; i < 6; i++)
        assert_float_equal(((float *)g->data)[i], 2 * xv[i], 0);
    assert_int_equal(*(int32_t *)get(vm, &md, "sz", 0)->data, 3);
    assert_int_equal(*(int32_t *)get(vm, &md, "x_i", 0)->data, 3);
    core_valmap_free(vm);
    model_close(&md);
}

/* ---- NonMaxSuppression and Where ---- */

static const float nms_boxes[7][4] = {
    {0, 0, 1, 1}, {0, 0.1f, 1, 1.1f}, {0, 10, 1, 11}, {0, 10.1f, 1, 11.1f},
    {0, 20, 1, 21}, {0, 30, 1, 31}, {0.5f, 0.5f, 1.5f, 1.5f}};
static const float nms_scores[7] = {0.9f, 0.75f, 0.6f, 0.5f, 0.3f, 0.05f, 0.8f};

static void test_dynamic_ops(void **state)
{
    (void)state;
    assert_true(core_op_is_dynamic("Switch"));
    assert_true(core_op_is_dynamic("TensorArrayGatherV3"));
    assert_true(core_op_is_dynamic("TensorListStack"));
    assert_true(core_op_is_dynamic("NonMaxSuppressionV5"));
    assert_true(core_op_is_dynamic("Where"));
    assert_false(core_op_is_dynamic("Conv2D"));
    assert_false(core_op_is_dynamic("NoOp"));
}

static void test_nms_host(void **state)
{
    (void)state;
    int32_t idx[16];
    float sc[16];
    /* expectations from tfjs 4.22 (tf.image.nonMaxSuppression*Async, cpu) */
    int n = core_nms_host(&nms_boxes[0][0], nms_scores, 7, 10, 0.5, 0.1, 0, 0, idx, NULL);
    static const int32_t v3[] = {0, 6, 2, 4};
    assert_int_equal(n, 4);
    assert_memory_equal(idx, v3, sizeof v3);
    n = core_nms_host(&nms_boxes[0][0], nms_scores, 7, 2, 0.5, 0.1, 0, 0, idx, NULL);
    assert_int_equal(n, 2);
    assert_memory_equal(idx, v3, 2 * sizeof *v3);
    n = core_nms_host(&nms_boxes[0][0], nms_scores, 7, 10, 0.9, 0.1, 0.5, 0, idx, sc);
    static const int32_t v5[] = {0, 6, 2, 1, 4, 3};
    static const float v5s[] = {0.899999976f, 0.783838928f, 0.600000024f,
                                0.372229218f, 0.300000012f, 0.256002605f};
    assert_int_equal(n, 6);
    assert_memory_equal(idx, v5, sizeof v5);
    for (int i = 0; i < 6; i++)
        assert_float_equal(sc[i], v5s[i], 1e-7);
    n = core_nms_host(&nms_boxes[0][0], nms_scores, 7, 6, 0.5, 0.4, 0, 1, idx, NULL);
    static const int32_t v4[] = {0, 6, 2, 0, 0, 0};
    assert_int_equal(n, 3);
    assert_memory_equal(idx, v4, sizeof v4);
}

/* The hard-NMS loop picks what tfjs's loop picks, through the grid of kept
 * boxes and testing every kept box in turn, and as it chooses between them:
 * random boxes, dense and sparse, with repeated scores, zero-area, reversed
 * corners, infinite and NaN corners and boxes wide enough to span the grid,
 * over thresholds and counts. */
static void test_nms_grid(void **state)
{
    (void)state;
    srand(17);
    enum { N = 3000 };
    float *boxes = malloc(N * 4 * sizeof *boxes), *scores = malloc(N * sizeof *scores);
    int32_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    float *sa = malloc(N * sizeof *sa), *sb = malloc(N * sizeof *sb);
    assert_non_null(boxes && scores && a && b && sa && sb);
    for (int round = 0; round < 60; round++) {
        int n = 1 + rand() % N;
        double spread = round % 3 == 0 ? 1.0 : round % 3 == 1 ? 50.0 : 5000.0;
        for (int i = 0; i < n; i++) {
            float *q = boxes + i * 4;
            double cy = spread * rand() / RAND_MAX, cx = spread * rand() / RAND_MAX;
            double h = (round % 5 == 0 && i % 7 == 0 ? spread : 0.2) * rand() / RAND_MAX;
            double w = (round % 5 == 0 && i % 11 == 0 ? spread : 0.2) * rand() / RAND_MAX;
            if (i % 13 == 0)
                h = 0; /* zero area */
            q[0] = (float)(cy - h), q[1] = (float)(cx - w), q[2] = (float)(cy + h), q[3] = (float)(cx + w);
            if (i % 5 == 0) { /* corners the other way round */
                float t = q[0];
                q[0] = q[2], q[2] = t;
            }
            if (round % 6 == 3 && i % 17 == 0) /* decoded boxes overflow: inf, and inf - inf */
                q[i % 4] = i % 3 == 0 ? INFINITY : i % 3 == 1 ? -INFINITY : NAN;
            scores[i] = (float)(rand() % 200) / 200.0f; /* ties */
        }
        double iou = 0.05 + 0.9 * rand() / RAND_MAX;
        double thr = round % 4 == 0 ? -INFINITY : round % 4 == 1 ? 0.0 : 0.3;
        int max_out = 1 + rand() % (n + 10);
        int nb = core_nms_host_loop(boxes, scores, n, max_out, iou, thr, 0, round & 1, b, sb, 1);
        /* as chosen, the grid, and every kept box in turn: tfjs's loop's picks */
        for (int loop = 0; loop < 3; loop++) {
            int na = core_nms_host_loop(boxes, scores, n, max_out, iou, thr, 0, round & 1, a, sa,
                                        loop ? loop + 1 : 0);
            assert_int_equal(na, nb);
            int total = (round & 1) && na < max_out ? (max_out > n ? n : max_out) : na;
            assert_memory_equal(a, b, (size_t)total * sizeof *a);
            assert_memory_equal(sa, sb, (size_t)total * sizeof *sa);
        }
    }
    free(boxes), free(scores), free(a), free(b), free(sa), free(sb);
}

static void test_nms_where_graph(void **state)
{
    (void)state;
    jb j = {0};
    model md;
    placeholder(&j, "boxes", "DT_FLOAT", "{\"dim\":[{\"size\":\"-1\"},{\"size\":\"4\"}]}");
    placeholder(&j, "scores", "DT_FLOAT", "{\"dim\":[{\"size\":\"-1\"}]}");
    placeholder(&j, "cond", "DT_BOOL", "{\"dim\":[{\"size\":\"2\"},{\"size\":\"3\"}]}");
    const_i(&j, "maxo", 10);
    const_f(&j, "iou", 0.5f);
    const_f(&j, "iou9", 0.9f);
    const_f(&j, "thr", 0.1f);
    const_f(&j, "sigma", 0.5f);
    node(&j, "nms3", "NonMaxSuppressionV3", "\"boxes\",\"scores\",\"maxo\",\"iou\",\"thr\"", NULL);
    node(&j, "nms5", "NonMaxSuppressionV5",
         "\"boxes\",\"scores\",\"maxo\",\"iou9\",\"thr\",\"sigma\"", NULL);
    node(&j, "sel", "GatherV2", "\"boxes\",\"nms3\",\"zero\"", NULL);
    const_i(&j, "zero", 0);
    node(&j, "i5", "Identity", "\"nms5\"", NULL);
    node(&j, "s5", "Identity", "\"nms5:1\"", NULL);
    node(&j, "w", "Where", "\"cond\"", NULL);
    load_model(&j, "nms.json", &md);
    core_valmap *vm = core_valmap_new(md.g);
    put(vm, &md, "boxes", SI_FLOAT32, 2, (int64_t[]){7, 4}, nms_boxes);
    put(vm, &md, "scores", SI_FLOAT32, 1, (int64_t[]){7}, nms_scores);
    const int32_t cond[6] = {1, 0, 1, 0, 0, 1};
    put(vm, &md, "cond", SI_BOOL, 2, (int64_t[]){2, 3}, cond);
    si_error err = {0};
    if (run(&md, vm, &err) != SI_OK)
        fail_msg("%s", err.message);
    const core_buf *sel = get(vm, &md, "sel", 0);
    assert_int_equal(sel->shape.d[0], 4);
    assert_memory_equal((float *)sel->data + 8, nms_boxes[2], 4 * sizeof(float)); /* row 2: box 2 */
    const core_buf *i5 = get(vm, &md, "i5", 0), *s5 = get(vm, &md, "s5", 0);
    assert_int_equal(i5->shape.rank, 1);
    assert_int_equal(i5->shape.d[0], 6);
    assert_int_equal(s5->shape.d[0], 6);
    assert_int_equal(((int32_t *)i5->data)[3], 1);
    assert_float_equal(((float *)s5->data)[1], 0.783838928f, 1e-7);
    const core_buf *w = get(vm, &md, "w", 0);
    assert_int_equal(w->dtype, SI_INT32);
    assert_int_equal(w->shape.d[0], 3);
    assert_int_equal(w->shape.d[1], 2);
    static const int32_t wv[] = {0, 0, 0, 2, 1, 2};
    assert_memory_equal(w->data, wv, sizeof wv);
    core_valmap_free(vm);
    model_close(&md);
}

/* ---- malformed graphs fail with a message, never hang or crash ---- */

static void test_errors(void **state)
{
    (void)state;
    jb j = {0};
    model md;
    si_error err = {0};
    /* a cycle with no NextIteration */
    placeholder(&j, "x", "DT_FLOAT", "{}");
    node(&j, "a", "AddV2", "\"x\",\"b\"", NULL);
    node(&j, "b", "Neg", "\"a\"", NULL);
    node(&j, "out", "Identity", "\"b\"", NULL);
    load_model(&j, "cycle.json", &md);
    core_valmap *vm = core_valmap_new(md.g);
    float x = 1;
    put(vm, &md, "x", SI_FLOAT32, 0, NULL, &x);
    assert_int_not_equal(run(&md, vm, &err), SI_OK);
    assert_non_null(strstr(err.message, "out"));
    core_valmap_free(vm);
    /* a missing input */
    vm = core_valmap_new(md.g);
    memset(&err, 0, sizeof err);
    assert_int_not_equal(run(&md, vm, &err), SI_OK);
    assert_non_null(strstr(err.message, "'x'"));
    core_valmap_free(vm);
    model_close(&md);
    /* Exit outside a frame; a bad TensorArray handle; an out-of-range read */
    placeholder(&j, "x", "DT_FLOAT", "{}");
    node(&j, "ex", "Exit", "\"x\"", NULL);
    const_i(&j, "k", 5);
    node(&j, "rd", "TensorArrayReadV3", "\"k\",\"k\",\"x\"", NULL);
    load_model(&j, "bad.json", &md);
    vm = core_valmap_new(md.g);
    put(vm, &md, "x", SI_FLOAT32, 0, NULL, &x);
    memset(&err, 0, sizeof err);
    assert_int_not_equal(run(&md, vm, &err), SI_OK);
    assert_true(strstr(err.message, "(Exit)") || strstr(err.message, "(TensorArrayReadV3)"));
    core_valmap_free(vm);
    model_close(&md);
    /* a TensorArray of partial element shape [-1,-1] holding [2,3] and [3,2]:
     * its gather (tfjs's stack) refuses them */
    placeholder(&j, "a", "DT_FLOAT", "{\"dim\":[{\"size\":\"2\"},{\"size\":\"3\"}]}");
    placeholder(&j, "b", "DT_FLOAT", "{\"dim\":[{\"size\":\"3\"},{\"size\":\"2\"}]}");
    const_i(&j, "two", 2);
    const_i(&j, "zero", 0);
    const_i(&j, "one", 1);
    static const int both[2] = {0, 1};
    const_iv(&j, "both", both, 2);
    node(&j, "ta", "TensorArrayV3", "\"two\"",
         "\"dtype\":{\"type\":\"DT_FLOAT\"},\"element_shape\":{\"shape\":{\"dim\":[{\"size\":\"-1\"},{\"size\":\"-1\"}]}}");
    node(&j, "w0", "TensorArrayWriteV3", "\"ta\",\"zero\",\"a\",\"ta:1\"", NULL);
    node(&j, "w1", "TensorArrayWriteV3", "\"ta\",\"one\",\"b\",\"w0\"", NULL);
    node(&j, "g", "TensorArrayGatherV3", "\"ta\",\"both\",\"w1\"", "\"dtype\":{\"type\":\"DT_FLOAT\"}");
    load_model(&j, "tastack.json", &md);
    vm = core_valmap_new(md.g);
    static const float six[6] = {1, 2, 3, 4, 5, 6};
    put(vm, &md, "a", SI_FLOAT32, 2, (int64_t[]){2, 3}, six);
    put(vm, &md, "b", SI_FLOAT32, 2, (int64_t[]){3, 2}, six);
    memset(&err, 0, sizeof err);
    assert_int_not_equal(run(&md, vm, &err), SI_OK);
    assert_non_null(strstr(err.message, "does not stack"));
    core_valmap_free(vm);
    model_close(&md);
    /* NMS with an iou threshold over 1 */
    placeholder(&j, "boxes", "DT_FLOAT", "{\"dim\":[{\"size\":\"-1\"},{\"size\":\"4\"}]}");
    placeholder(&j, "scores", "DT_FLOAT", "{\"dim\":[{\"size\":\"-1\"}]}");
    const_i(&j, "maxo", 10);
    const_f(&j, "iou", 1.5f);
    const_f(&j, "thr", 0.1f);
    node(&j, "nms", "NonMaxSuppressionV3", "\"boxes\",\"scores\",\"maxo\",\"iou\",\"thr\"", NULL);
    load_model(&j, "nmsbad.json", &md);
    vm = core_valmap_new(md.g);
    put(vm, &md, "boxes", SI_FLOAT32, 2, (int64_t[]){7, 4}, nms_boxes);
    put(vm, &md, "scores", SI_FLOAT32, 1, (int64_t[]){7}, nms_scores);
    memset(&err, 0, sizeof err);
    assert_int_not_equal(run(&md, vm, &err), SI_OK);
    assert_non_null(strstr(err.message, "iouThreshold"));
    core_valmap_free(vm);
    model_close(&md);
}

/* ---- RaggedTensorToTensor: tfjs's refusals are the node's errors ---- */

/* One RaggedTensorToTensor node on fed shape, values, default_value and one
 * partition, of type `type`; returns the run's status, err its message. */
static si_result ragged_run(const char *type, int shape_rank, const int32_t *shape, int n_shape,
                            const int32_t *part, int n_part, si_error *err)
{
    jb j = {0};
    model md;
    char t64[64], a[256];
    b64(type, t64);
    placeholder(&j, "shape", "DT_INT32", "{}");
    placeholder(&j, "values", "DT_FLOAT", "{}");
    placeholder(&j, "dflt", "DT_FLOAT", "{}");
    placeholder(&j, "part", "DT_INT32", "{}");
    snprintf(a, sizeof a, "\"row_partition_types\":{\"list\":{\"s\":[\"%s\"]}}", t64);
    node(&j, "rt", "RaggedTensorToTensor", "\"shape\",\"values\",\"dflt\",\"part\"", a);
    load_model(&j, "ragged.json", &md);
    core_valmap *vm = core_valmap_new(md.g);
    float values[5] = {1, 2, 3, 4, 5}, dflt = 0.5f;
    put(vm, &md, "shape", SI_INT32, shape_rank, (int64_t[]){n_shape}, shape);
    put(vm, &md, "values", SI_FLOAT32, 1, (int64_t[]){5}, values);
    put(vm, &md, "dflt", SI_FLOAT32, 0, NULL, &dflt);
    put(vm, &md, "part", SI_INT32, 1, (int64_t[]){n_part}, part);
    memset(err, 0, sizeof *err);
    si_result st = run(&md, vm, err);
    if (st == SI_OK) {
        const core_buf *o = get(vm, &md, "rt", 0);
        assert_int_equal(o->shape.rank, 2);
    }
    core_valmap_free(vm);
    model_close(&md);
    return st;
}

static void test_ragged_errors(void **state)
{
    (void)state;
    si_error err;
    const int32_t unknown[2] = {-1, -1}, splits[4] = {0, 2, 2, 5}, past[3] = {0, 4, 7};
    assert_int_equal(ragged_run("ROW_SPLITS", 1, unknown, 2, splits, 4, &err), SI_OK);
    /* TF's "unknown shape" scalar -1: tfjs's rank check fails on it */
    assert_int_not_equal(ragged_run("ROW_SPLITS", 0, unknown, 1, splits, 4, &err), SI_OK);
    assert_non_null(strstr(err.message, "rank"));
    assert_non_null(strstr(err.message, "'rt'"));
    /* tfjs knows ROW_LENGTHS by name but cannot run it */
    assert_int_not_equal(ragged_run("ROW_LENGTHS", 1, unknown, 2, splits, 4, &err), SI_OK);
    assert_non_null(strstr(err.message, "partition type"));
    /* splits past the 5 values: tfjs would read undefined */
    assert_int_not_equal(ragged_run("ROW_SPLITS", 1, unknown, 2, past, 3, &err), SI_OK);
    assert_non_null(strstr(err.message, "past the values"));
}

/* ---- whole models against tfjs references ---- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Returns 1 if run and every output matched, 0 if skipped; fails otherwise. */
static int check_reference(const char *model_json, const char *ref_dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/manifest.json", ref_dir);
    char *text = slurp(path);
    if (!text) {
        print_message("skip: no reference %s\n", path);
        return 0;
    }
    cJSON *man = cJSON_Parse(text);
    free(text);
    assert_non_null(man);
    model md;
    si_error err = {0};
    if (model_open(model_json, &md, &err) != SI_OK) {
        cJSON_Delete(man);
        fail_msg("%s: %s", model_json, err.message);
    }
    core_valmap *vm = core_valmap_new(md.g);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(man, "inputs"))
    {
        const char *name = cJSON_GetObjectItem(it, "name")->valuestring;
        snprintf(path, sizeof path, "%s/%s", ref_dir, cJSON_GetObjectItem(it, "file")->valuestring);
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        void *data;
        if (io_npy_read(path, &dt, &rank, shape, &data, &err) != SI_OK)
            fail_msg("%s", err.message);
        int64_t count = 1;
        for (int i = 0; i < rank; i++)
            count *= shape[i];
        if (dt == SI_BOOL) { /* 1 byte an element in .npy, 4 here */
            int32_t *w = malloc((size_t)(count ? count : 1) * 4);
            for (int64_t i = 0; i < count; i++)
                w[i] = ((uint8_t *)data)[i] != 0;
            free(data);
            data = w;
        }
        size_t nlen = strcspn(name, ":");
        int k = core_graph_find(md.g, name, nlen);
        if (k < 0)
            fail_msg("input %s is not a node", name);
        core_buf b = {.dtype = dt, .shape = {.rank = rank}, .data = data};
        memcpy(b.shape.d, shape, sizeof(int64_t) * (size_t)rank);
        assert_int_equal(core_valmap_put(vm, k, 0, &b, &err), SI_OK);
        free(data);
    }
    double t0 = now_s();
    si_result st = core_interp_run(md.g, vm, loader, &md, NULL, &err);
    double dt_run = now_s() - t0;
    if (st != SI_OK)
        fail_msg("%s: %s", model_json, err.message);
    int i = 0, bad = 0;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(man, "outputs"))
    {
        assert_true(i < core_graph_n_outputs(md.g));
        const core_edge *o = &md.g->outputs[i];
        const core_buf *got = core_valmap_get(vm, o->node, o->idx);
        assert_non_null(got);
        snprintf(path, sizeof path, "%s/%s", ref_dir, cJSON_GetObjectItem(it, "file")->valuestring);
        si_dtype rdt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        void *ref;
        if (io_npy_read(path, &rdt, &rank, shape, &ref, &err) != SI_OK)
            fail_msg("%s", err.message);
        int same_shape = rank == got->shape.rank;
        for (int d = 0; same_shape && d < rank; d++)
            same_shape = shape[d] == got->shape.d[d];
        int64_t count = core_shape_count(&got->shape);
        double max_ref = 0, max_diff = 0;
        for (int64_t e = 0; same_shape && e < count; e++) {
            double r = rdt == SI_FLOAT32 ? ((float *)ref)[e]
                       : rdt == SI_BOOL  ? ((uint8_t *)ref)[e]
                                         : ((int32_t *)ref)[e];
            double g = got->dtype == SI_FLOAT32 ? ((float *)got->data)[e] : ((int32_t *)got->data)[e];
            max_ref = fmax(max_ref, fabs(r));
            double d = fabs(g - r);
            if (isnan(d))
                d = isnan(g) && isnan(r) ? 0 : INFINITY;
            max_diff = fmax(max_diff, d);
        }
        int ok = same_shape && max_diff <= 1e-3 * fmax(1, max_ref);
        char gs[96];
        print_message("  %-12s %s %s max|diff| %.3g (max|ref| %.3g)\n",
                      cJSON_GetObjectItem(it, "name")->valuestring,
                      core_shape_str(&got->shape, gs, sizeof gs), ok ? "ok  " : "BAD ", max_diff,
                      max_ref);
        bad += !ok;
        free(ref);
        i++;
    }
    print_message("%s: %d outputs, host interpreter %.3f s (tfjs-cpu %.3f s)\n", ref_dir, i, dt_run,
                  cJSON_GetObjectItem(man, "ms") ? cJSON_GetObjectItem(man, "ms")->valuedouble / 1000 : 0);
    core_valmap_free(vm);
    model_close(&md);
    cJSON_Delete(man);
    if (bad)
        fail_msg("%s: %d outputs differ from tfjs", ref_dir, bad);
    return 1;
}

static void test_models(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {".cache/human-models/models/faceboxes.json", ".cache/refs/faceboxes@image_tensor=1,240,320,3"},
        {".cache/human-models/models/handtrack.json", ".cache/refs/handtrack@input_tensor=1,320,320,3"},
        {".cache/human-models/models/rvm.json", ".cache/refs/rvm@src=1,256,256,3@r1i=@r2i=@r3i=@r4i=@downsample_ratio="},
    };
    const char *only = getenv("SI_INTERP_MODEL");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        if (!only || strstr(cases[c][0], only))
            check_reference(cases[c][0], cases[c][1]);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmp_root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_while_loop),   cmocka_unit_test(test_cond),
        cmocka_unit_test(test_tensor_array), cmocka_unit_test(test_nms_host), cmocka_unit_test(test_nms_grid),
        cmocka_unit_test(test_dynamic_ops),
        cmocka_unit_test(test_nms_where_graph), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_ragged_errors),
        cmocka_unit_test(test_models),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
