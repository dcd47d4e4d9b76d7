/* Copy, pad, gather and gathernd kernels against the host reference on random
 * shapes and values (float and int32), and the shape family's lowerings
 * (StridedSlice masks, concat, unpack, tile ...) against hand-computed results
 * on small graphs; the transfer kernel, and barriers only where a dispatch
 * depends on an earlier one. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>
#include "kernel_util.h"

static void random_dims(int rank, int64_t *d, int max_elems)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        d[i] = kt_randint(1, 9);
        n *= d[i];
    }
    while (n > max_elems)
        for (int i = 0; i < rank; i++)
            if (d[i] > 1) {
                n /= d[i];
                d[i] = 1;
                break;
            }
}

static core_buf random_data(si_dtype dt, int rank, const int64_t *d)
{
    return dt == SI_FLOAT32 ? kt_random(dt, rank, d, -100.f, 100.f)
                            : kt_random(dt, rank, d, -1000000, 1000000);
}

static void expect_exact(double e, const char *what, int rep)
{
    if (e != 0)
        fprintf(stderr, "%s rep %d: error %g\n", what, rep, e);
    assert_true(e == 0);
}

/* A random input for rep: float32 on even reps, int32 on odd ones; rank in
 * [1, max_rank], at most max_elems elements; its strides in xs. */
static core_buf random_x(int rep, int max_rank, int max_elems, int64_t *xs)
{
    si_dtype dt = rep % 2 ? SI_INT32 : SI_FLOAT32;
    int rank = kt_randint(1, max_rank);
    int64_t d[SI_MAX_RANK];
    random_dims(rank, d, max_elems);
    core_buf x = random_data(dt, rank, d);
    core_strides(&x.shape, xs);
    return x;
}

/* A copy step of rank dims: dim, in_stride and out_stride per dim. */
static ck_step copy_step(int rank, const int64_t *dim, const int64_t *in_stride,
                         const int64_t *out_stride)
{
    ck_step s = {.kind = CK_COPY, .n_in = 1, .in = {0}, .out = 1};
    s.u.copy.rank = rank;
    for (int i = 0; i < rank; i++) {
        s.u.copy.dim[i] = (int32_t)dim[i];
        s.u.copy.in_stride[i] = (int32_t)in_stride[i];
        s.u.copy.out_stride[i] = (int32_t)out_stride[i];
    }
    return s;
}

/* s on x (and idx where s has two inputs) on the host and on the GPU: the same
 * output of shape os and x's dtype, bit for bit (init, which may be NULL, its
 * starting contents). Frees x and idx. */
static void expect_same(const ck_step *s, core_buf *x, core_buf *idx, const core_shape *os,
                        const core_buf *init, const char *what, int rep)
{
    const core_buf *ins[] = {x, idx};
    expect_exact(kt_compare(s, ins, x->dtype, os, init), what, rep);
    kt_free(x);
    if (idx)
        kt_free(idx);
}

/* Transposes: out[i] = x[perm applied], through in_stride permutation. */
static void test_copy_transpose(void **state)
{
    (void)state;
    for (int rep = 0; rep < 40; rep++) {
        int64_t xs[SI_MAX_RANK];
        core_buf x = random_x(rep, 6, 6000, xs);
        int rank = x.shape.rank;
        const int64_t *d = x.shape.d;
        int perm[SI_MAX_RANK];
        for (int i = 0; i < rank; i++)
            perm[i] = i;
        for (int i = rank - 1; i > 0; i--) {
            int j = kt_randint(0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        core_shape os = {.rank = rank};
        for (int i = 0; i < rank; i++)
            os.d[i] = d[perm[i]];
        int64_t ostr[SI_MAX_RANK], istr[SI_MAX_RANK];
        core_strides(&os, ostr);
        for (int i = 0; i < rank; i++)
            istr[i] = xs[perm[i]];
        ck_step s = copy_step(rank, os.d, istr, ostr);
        expect_same(&s, &x, NULL, &os, NULL, "transpose", rep);
    }
}

/* Strided slices, negative steps included, with offsets. */
static void test_copy_strided(void **state)
{
    (void)state;
    for (int rep = 0; rep < 40; rep++) {
        int64_t xs[SI_MAX_RANK], istr[SI_MAX_RANK];
        core_buf x = random_x(rep, 5, 8000, xs);
        int rank = x.shape.rank;
        const int64_t *d = x.shape.d;
        core_shape os = {.rank = rank};
        int64_t off = 0;
        for (int i = 0; i < rank; i++) {
            int step = kt_randint(1, 3) * (kt_rand() % 3 == 0 ? -1 : 1);
            int64_t b = kt_randint(0, (int)d[i] - 1);
            int64_t n = step > 0 ? (d[i] - b + step - 1) / step : (b + 1 + (-step) - 1) / (-step);
            os.d[i] = n;
            off += b * xs[i];
            istr[i] = step * xs[i];
        }
        int64_t ostr[SI_MAX_RANK];
        core_strides(&os, ostr);
        ck_step s = copy_step(rank, os.d, istr, ostr);
        s.u.copy.in_offset = (int32_t)off;
        expect_same(&s, &x, NULL, &os, NULL, "strided", rep);
    }
}

/* Concat parts written into an output that already holds other values: the
 * copy must touch its region only. Also stride-0 (broadcast) reads. */
static void test_copy_accumulate(void **state)
{
    (void)state;
    for (int rep = 0; rep < 30; rep++) {
        si_dtype dt = rep % 2 ? SI_INT32 : SI_FLOAT32;
        int rank = kt_randint(1, 5);
        int64_t od[SI_MAX_RANK];
        random_dims(rank, od, 6000);
        int axis = kt_randint(0, rank - 1);
        if (od[axis] < 2)
            od[axis] = kt_randint(2, 7);
        core_buf prev = random_data(dt, rank, od);
        int64_t ostr[SI_MAX_RANK];
        core_strides(&prev.shape, ostr);
        /* a part [start, start+len) along axis */
        int64_t start = kt_randint(0, (int)od[axis] - 1);
        int64_t len = kt_randint(1, (int)(od[axis] - start));
        int64_t pd[SI_MAX_RANK];
        memcpy(pd, od, sizeof pd);
        pd[axis] = len;
        int bcast = rep % 3 == 2; /* read a part with unit dims broadcast */
        int64_t xd[SI_MAX_RANK];
        for (int i = 0; i < rank; i++)
            xd[i] = bcast && i != axis ? 1 : pd[i];
        core_buf x = random_data(dt, rank, xd);
        int64_t xs[SI_MAX_RANK];
        core_strides(&x.shape, xs);
        int64_t istr[SI_MAX_RANK];
        for (int i = 0; i < rank; i++)
            istr[i] = xd[i] == 1 ? 0 : xs[i];
        ck_step s = copy_step(rank, pd, istr, ostr);
        s.accumulate = 1;
        s.u.copy.out_offset = (int32_t)(start * ostr[axis]);
        expect_same(&s, &x, NULL, &prev.shape, &prev, "accumulate", rep);
        kt_free(&prev);
    }
}

static void test_pad(void **state)
{
    (void)state;
    int rep = 0;
    for (int mode = 0; mode < 3; mode++)
        for (int rank = 1; rank <= 4; rank++)
            for (int k = 0; k < 4; k++, rep++) {
                si_dtype dt = k % 2 ? SI_INT32 : SI_FLOAT32;
                int64_t d[SI_MAX_RANK];
                random_dims(rank, d, 3000);
                core_buf x = random_data(dt, rank, d);
                ck_step s = {.kind = CK_PAD, .n_in = 1, .in = {0}, .out = 1};
                ck_pad_p *p = &s.u.pad;
                p->rank = rank;
                p->mode = mode;
                p->value = dt == SI_FLOAT32 ? kt_randf(-3.f, 3.f) : (float)kt_randint(-50, 50);
                core_shape os = {.rank = rank};
                for (int i = 0; i < rank; i++) {
                    int lim = mode == 1 ? (int)d[i] - 1 : mode == 2 ? (int)d[i] : 4;
                    int b = kt_randint(0, lim), a = kt_randint(0, lim);
                    p->in_dim[i] = (int32_t)d[i];
                    p->before[i] = b;
                    os.d[i] = b + d[i] + a;
                    p->out_dim[i] = (int32_t)os.d[i];
                }
                expect_same(&s, &x, NULL, &os, NULL, "pad", rep);
            }
}

static void test_gather(void **state)
{
    (void)state;
    for (int rep = 0; rep < 24; rep++) {
        si_dtype dt = rep % 2 ? SI_INT32 : SI_FLOAT32;
        int float_idx = rep % 4 == 3;
        int outer = kt_randint(1, 6), n = kt_randint(1, 20), inner = kt_randint(1, 40);
        int k = kt_randint(1, 30);
        int64_t xd[] = {outer, n, inner}, kd[] = {k};
        core_buf x = random_data(dt, 3, xd);
        core_buf idx = kt_buf(float_idx ? SI_FLOAT32 : SI_INT32, 1, kd);
        for (int j = 0; j < k; j++) {
            /* mostly valid, a few outside [0, n) which give 0 */
            int v = kt_rand() % 8 == 0 ? (kt_rand() % 2 ? -1 - kt_randint(0, 3) : n + kt_randint(0, 3))
                                       : kt_randint(0, n - 1);
            if (float_idx)
                ((float *)idx.data)[j] = (float)v + (v >= 0 ? 0.75f : 0.f);
            else
                ((int32_t *)idx.data)[j] = v;
        }
        ck_step s = {.kind = CK_GATHER, .n_in = 2, .in = {0, 1}, .out = 2};
        s.u.gather = (ck_gather_p){.outer = outer, .n = n, .inner = inner, .k = k};
        core_shape os = {.rank = 3, .d = {outer, k, inner}};
        expect_same(&s, &x, &idx, &os, NULL, "gather", rep);
    }
}

static void test_gathernd(void **state)
{
    (void)state;
    int rep = 0;
    for (int d = 1; d <= 3; d++)
        for (int extra = 0; extra <= 2; extra++)
            for (int f = 0; f < 2; f++, rep++) {
                si_dtype dt = f ? SI_INT32 : SI_FLOAT32;
                int prank = d + extra;
                int64_t pd[SI_MAX_RANK];
                random_dims(prank, pd, 4000);
                core_buf x = random_data(dt, prank, pd);
                int k = kt_randint(1, 40);
                int64_t id[] = {k, d};
                core_buf idx = kt_buf(SI_INT32, 2, id);
                for (int r = 0; r < k; r++)
                    for (int j = 0; j < d; j++) {
                        int v = kt_randint(0, (int)pd[j] - 1);
                        if (kt_rand() % 16 == 0) /* the flattened index may leave the range */
                            v = kt_rand() % 2 ? -kt_randint(1, 3) : (int)pd[j] + kt_randint(0, 2);
                        ((int32_t *)idx.data)[r * d + j] = v;
                    }
                ck_step s = {.kind = CK_GATHERND, .n_in = 2, .in = {0, 1}, .out = 2};
                int64_t slice = 1;
                for (int i = d; i < prank; i++)
                    slice *= pd[i];
                s.u.gathernd.k = k;
                s.u.gathernd.d = d;
                s.u.gathernd.slice = (int32_t)slice;
                for (int j = 0; j < d; j++)
                    s.u.gathernd.pdim[j] = (int32_t)pd[j];
                core_shape os = {.rank = 2, .d = {k, slice}};
                expect_same(&s, &x, &idx, &os, NULL, "gathernd", rep);
            }
}

/* ---- lowerings on small graphs, run with the host references ---- */

typedef struct {
    char dir[64];
    io_model *m;
    core_graph *g;
    core_program *p;
    void **root;  /* per tensor: storage root buffers we allocated */
    float *x;
} lt_model;

static si_result lt_no_weights(void *user, int weight, void *dst4, si_error *err)
{
    (void)user, (void)weight, (void)dst4;
    return base_fail(err, SI_ERR_ARG, "no weights here");
}

/* Step s's inputs in t's storage: ins[i], and insp[i] = &ins[i] where s->in[i] >= 0. */
static void lt_step_ins(const lt_model *t, const ck_step *s, core_buf *ins, const core_buf **insp)
{
    const core_program *p = t->p;
    for (int i = 0; i < s->n_in; i++) {
        if (s->in[i] < 0)
            continue;
        int r = core_storage(p, s->in[i]);
        const core_tensor *ct = &p->tensors[r];
        ins[i] = (core_buf){.dtype = p->tensors[s->in[i]].dtype,
                            .shape = p->tensors[s->in[i]].shape,
                            .data = ct->kind == PT_INPUT ? (void *)t->x
                                    : ct->kind == PT_CONST ? ct->host : t->root[r]};
        insp[i] = &ins[i];
    }
}

/* nodes: JSON array body after the placeholder "x" of shape xs (float32). */
static si_result lt_build(lt_model *t, const core_shape *xs, const char *nodes, si_error *err)
{
    memset(t, 0, sizeof *t);
    snprintf(t->dir, sizeof t->dir, "/tmp/si-shape-test-XXXXXX");
    if (!mkdtemp(t->dir))
        return SI_ERR_IO;
    char path[128], dims[256] = "";
    snprintf(path, sizeof path, "%s/model.json", t->dir);
    for (int i = 0, k = 0; i < xs->rank; i++)
        k += snprintf(dims + k, sizeof dims - (size_t)k, "%s{\"size\":\"%lld\"}", i ? "," : "",
                      (long long)xs->d[i]);
    FILE *f = fopen(path, "w");
    if (!f)
        return SI_ERR_IO;
    fprintf(f,
            "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":["
            "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
            "\"shape\":{\"shape\":{\"dim\":[%s]}}}},%s]},\"weightsManifest\":[]}",
            dims, nodes);
    fclose(f);
    si_result st = io_model_load(path, &t->m, err);
    if (st == SI_OK)
        st = core_graph_build(t->m, &t->g, err);
    if (st == SI_OK)
        st = core_program_build(t->g, xs, NULL, lt_no_weights, NULL, &t->p, err);
    if (st != SI_OK)
        return st;
    /* x = 0, 1, 2, ... so every output value names the element it came from */
    int64_t n = core_shape_count(xs);
    t->x = malloc((size_t)(n ? n : 1) * sizeof *t->x);
    for (int64_t i = 0; i < n; i++)
        t->x[i] = (float)i;
    core_program *p = t->p;
    t->root = calloc((size_t)p->n_tensors, sizeof *t->root);
    for (int i = 0; i < p->n_tensors; i++) {
        const core_tensor *ct = &p->tensors[i];
        if (ct->alias_of >= 0)
            continue;
        if (ct->kind == PT_ACT)
            t->root[i] = calloc((size_t)core_shape_count(&ct->shape) + 1, CORE_ELEM);
    }
    for (int k = 0; k < p->n_steps && st == SI_OK; k++) {
        const ck_step *s = &p->steps[k];
        core_buf ins[CK_MAX_IN];
        const core_buf *insp[CK_MAX_IN] = {0};
        lt_step_ins(t, s, ins, insp);
        core_buf out = {.dtype = p->tensors[s->out].dtype, .shape = p->tensors[s->out].shape,
                        .data = t->root[core_storage(p, s->out)]};
        st = ck_host_run(s, insp, &out, err);
    }
    return st;
}

/* Output o's values as floats (int outputs converted) and its shape. */
static const void *lt_output(lt_model *t, int o, core_shape *shape, si_dtype *dt)
{
    core_program *p = t->p;
    int id = p->outputs[o], r = core_storage(p, id);
    *shape = p->tensors[id].shape;
    *dt = p->tensors[id].dtype;
    const core_tensor *ct = &p->tensors[r];
    return ct->kind == PT_INPUT ? (void *)t->x : ct->kind == PT_CONST ? ct->host : t->root[r];
}

static void lt_free(lt_model *t)
{
    if (t->p && t->root)
        for (int i = 0; i < t->p->n_tensors; i++)
            free(t->root[i]);
    free(t->root);
    free(t->x);
    core_program_free(t->p);
    core_graph_free(t->g);
    io_model_free(t->m);
    char path[128];
    snprintf(path, sizeof path, "%s/model.json", t->dir);
    unlink(path);
    rmdir(t->dir);
}

static int count_steps(const lt_model *t, ck_kind kind)
{
    int n = 0;
    for (int k = 0; k < t->p->n_steps; k++)
        n += t->p->steps[k].kind == kind;
    return n;
}

/* "name":Const int32 vector */
static int lt_ints(char *buf, size_t n, const char *name, int cnt, const int *v)
{
    int k = snprintf(buf, n,
                     "{\"name\":\"%s\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_INT32\"},"
                     "\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\",\"tensorShape\":{\"dim\":[{\"size\":\"%d\"}]},"
                     "\"intVal\":[",
                     name, cnt);
    for (int i = 0; i < cnt; i++)
        k += snprintf(buf + k, n - (size_t)k, i ? ",%d" : "%d", v[i]);
    k += snprintf(buf + k, n - (size_t)k, "]}}}}");
    return k;
}

typedef struct {
    const char *name;
    int cnt;
    const int *v;
} lt_const;

/* The int32 vector Consts c[0..nc) into buf, comma-separated; returns the length. */
static int lt_consts(char *buf, size_t size, const lt_const *c, int nc)
{
    int n = 0;
    for (int i = 0; i < nc; i++) {
        if (i)
            buf[n++] = ',';
        n += lt_ints(buf + n, size - (size_t)n, c[i].name, c[i].cnt, c[i].v);
    }
    return n;
}

/* lt_build that must succeed; what (and rep where >= 0) names the failure. */
static void lt_build_ok(lt_model *t, const core_shape *xs, const char *nodes, const char *what,
                        int rep)
{
    si_error err = {0};
    si_result st = lt_build(t, xs, nodes, &err);
    if (st != SI_OK && rep >= 0)
        fprintf(stderr, "%s rep %d: %s\n", what, rep, err.message);
    else if (st != SI_OK)
        fprintf(stderr, "%s: %s\n", what, err.message);
    assert_int_equal(st, SI_OK);
}

static void check_values(lt_model *t, int o, const core_shape *want_shape, const float *want)
{
    core_shape s;
    si_dtype dt;
    const void *v = lt_output(t, o, &s, &dt);
    char a[96], b[96];
    if (!core_shape_eq(&s, want_shape))
        fprintf(stderr, "output %d: shape %s, want %s\n", o, core_shape_str(&s, a, sizeof a),
                core_shape_str(want_shape, b, sizeof b));
    assert_true(core_shape_eq(&s, want_shape));
    for (int64_t i = 0; i < core_shape_count(&s); i++) {
        float got = dt == SI_FLOAT32 ? ((const float *)v)[i] : (float)((const int32_t *)v)[i];
        if (got != want[i])
            fprintf(stderr, "output %d [%lld]: %g, want %g\n", o, (long long)i, got, want[i]);
        assert_true(got == want[i]);
    }
}

typedef struct {
    const char *what;
    int n;
    int begin[6], end[6], strides[6];
    int bm, em, elm, nam, sam;
    core_shape want;
    float v[64];
} ss_case;

static void test_lower_strided_slice(void **state)
{
    (void)state;
    /* x = arange(24) as [2,3,4]: x[i,j,k] = 12i + 4j + k */
    static const ss_case cases[] = {
        {"x[:, 1]", 2, {0, 1}, {0, 2}, {1, 1}, 1, 1, 0, 0, 2, {2, {2, 4}},
         {4, 5, 6, 7, 16, 17, 18, 19}},
        {"x[..., ::-2]", 2, {0, 0}, {0, 0}, {1, -2}, 2, 2, 1, 0, 0, {3, {2, 3, 2}},
         {3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21}},
        {"x[1:, newaxis, -1, 1:3]", 4, {1, 0, -1, 1}, {0, 0, 0, 3}, {1, 1, 1, 1}, 0, 1, 0, 2, 4,
         {3, {1, 1, 2}}, {21, 22}},
        {"x[-1:-3:-1, ::2]", 2, {-1, 0}, {-3, 0}, {-1, 2}, 2, 2, 0, 0, 0, {3, {2, 2, 4}},
         {12, 13, 14, 15, 20, 21, 22, 23, 0, 1, 2, 3, 8, 9, 10, 11}},
        {"x[0, ..., 2]", 3, {0, 0, 2}, {1, 0, 3}, {1, 1, 1}, 0, 0, 2, 0, 5, {1, {3}}, {2, 6, 10}},
        {"x[:, -2:, 10:0:-3]", 3, {0, -2, 10}, {0, 0, 0}, {1, 1, -3}, 1, 3, 0, 0, 0,
         {3, {2, 2, 1}}, {7, 11, 19, 23}},
        {"x[:] (identity)", 1, {0}, {0}, {1}, 1, 1, 0, 0, 0, {3, {2, 3, 4}}, {0}},
        {"x[5:9] (empty)", 1, {5}, {9}, {1}, 0, 0, 0, 0, 0, {3, {0, 3, 4}}, {0}},
    };
    core_shape xs = {.rank = 3, .d = {2, 3, 4}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const ss_case *k = &cases[c];
        char nodes[4096];
        const lt_const cs[] = {{"b", k->n, k->begin}, {"e", k->n, k->end}, {"s", k->n, k->strides}};
        int n = lt_consts(nodes, sizeof nodes, cs, 3);
        snprintf(nodes + n, sizeof nodes - (size_t)n,
                 ",{\"name\":\"ss\",\"op\":\"StridedSlice\",\"input\":[\"x\",\"b\",\"e\",\"s\"],"
                 "\"attr\":{\"begin_mask\":{\"i\":\"%d\"},\"end_mask\":{\"i\":\"%d\"},"
                 "\"ellipsis_mask\":{\"i\":\"%d\"},\"new_axis_mask\":{\"i\":\"%d\"},"
                 "\"shrink_axis_mask\":{\"i\":\"%d\"}}}",
                 k->bm, k->em, k->elm, k->nam, k->sam);
        lt_model t;
        lt_build_ok(&t, &xs, nodes, k->what, -1);
        float ident[24];
        for (int i = 0; i < 24; i++)
            ident[i] = (float)i;
        check_values(&t, 0, &k->want, c == 6 ? ident : k->v);
        if (c == 6) /* a full slice is a reshape: no copy */
            assert_int_equal(count_steps(&t, CK_COPY), 0);
        lt_free(&t);
    }
}

/* Concat, Pack, Unpack (several outputs), Transpose, Tile, Pad, Shape+Reshape. */
static void test_lower_join_split(void **state)
{
    (void)state;
    core_shape xs = {.rank = 2, .d = {2, 3}}; /* x = [[0,1,2],[3,4,5]] */
    char nodes[8192];
    int one = 1, perm[] = {1, 0}, reps[] = {2, 1}, pads[] = {1, 0, 0, 2}, m1 = -1;
    const lt_const cs[] = {{"ax1", 1, &one}, {"perm", 2, perm}, {"reps", 2, reps},
                           {"pads", 4, pads}, {"flat", 1, &m1}};
    int n = lt_consts(nodes, sizeof nodes, cs, 5);
    snprintf(nodes + n, sizeof nodes - (size_t)n,
             ",{\"name\":\"cat\",\"op\":\"ConcatV2\",\"input\":[\"x\",\"x\",\"ax1\"],"
             "\"attr\":{\"N\":{\"i\":\"2\"}}}"
             ",{\"name\":\"pack\",\"op\":\"Pack\",\"input\":[\"x\",\"x\"],\"attr\":{\"axis\":{\"i\":\"1\"}}}"
             ",{\"name\":\"un\",\"op\":\"Unpack\",\"input\":[\"x\"],\"attr\":{\"axis\":{\"i\":\"1\"},\"num\":{\"i\":\"3\"}}}"
             ",{\"name\":\"un1\",\"op\":\"Identity\",\"input\":[\"un:1\"]}"
             ",{\"name\":\"un2\",\"op\":\"Identity\",\"input\":[\"un:2\"]}"
             ",{\"name\":\"tr\",\"op\":\"Transpose\",\"input\":[\"x\",\"perm\"]}"
             ",{\"name\":\"tile\",\"op\":\"Tile\",\"input\":[\"x\",\"reps\"]}"
             ",{\"name\":\"pad\",\"op\":\"Pad\",\"input\":[\"x\",\"pads\"]}"
             ",{\"name\":\"shape\",\"op\":\"Shape\",\"input\":[\"x\"]}"
             ",{\"name\":\"rs\",\"op\":\"Reshape\",\"input\":[\"x\",\"flat\"]}");
    lt_model t;
    lt_build_ok(&t, &xs, nodes, "join/split", -1);
    /* outputs: nodes nobody consumes, in file order */
    const core_shape s_cat = {2, {2, 6}}, s_pack = {3, {2, 2, 3}}, s_un0 = {1, {2}},
                     s_tr = {2, {3, 2}}, s_tile = {2, {4, 3}}, s_pad = {2, {3, 5}},
                     s_shape = {1, {2}}, s_rs = {1, {6}};
    const float v_cat[] = {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5};
    const float v_pack[] = {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5};
    const float v_un1[] = {1, 4}, v_un2[] = {2, 5};
    const float v_tr[] = {0, 3, 1, 4, 2, 5};
    const float v_tile[] = {0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5};
    const float v_pad[] = {0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 5, 0, 0};
    const float v_shape[] = {2, 3}, v_rs[] = {0, 1, 2, 3, 4, 5};
    assert_int_equal(t.p->n_outputs, 9);
    check_values(&t, 0, &s_cat, v_cat);
    check_values(&t, 1, &s_pack, v_pack);
    check_values(&t, 2, &s_un0, v_un1);
    check_values(&t, 3, &s_un0, v_un2);
    check_values(&t, 4, &s_tr, v_tr);
    check_values(&t, 5, &s_tile, v_tile);
    check_values(&t, 6, &s_pad, v_pad);
    check_values(&t, 7, &s_shape, v_shape);
    check_values(&t, 8, &s_rs, v_rs);
    /* one copy each for unpack's two used outputs, two for concat, two for pack */
    assert_true(count_steps(&t, CK_PAD) == 1 && count_steps(&t, CK_COPY) >= 7);
    lt_free(&t);
}

/* Reshape, Squeeze and ExpandDims are aliases; bad attrs fail cleanly. */
static void test_lower_alias_and_errors(void **state)
{
    (void)state;
    core_shape xs = {.rank = 3, .d = {1, 4, 1}};
    char nodes[4096];
    int ax = -1, shape[] = {2, -1};
    const lt_const cs[] = {{"ax", 1, &ax}, {"shp", 2, shape}};
    int n = lt_consts(nodes, sizeof nodes, cs, 2);
    snprintf(nodes + n, sizeof nodes - (size_t)n,
             ",{\"name\":\"sq\",\"op\":\"Squeeze\",\"input\":[\"x\"],"
             "\"attr\":{\"squeeze_dims\":{\"list\":{\"i\":[\"0\"]}}}}"
             ",{\"name\":\"ed\",\"op\":\"ExpandDims\",\"input\":[\"sq\",\"ax\"]}"
             ",{\"name\":\"rs\",\"op\":\"Reshape\",\"input\":[\"ed\",\"shp\"]}");
    lt_model t;
    lt_build_ok(&t, &xs, nodes, "alias", -1);
    assert_int_equal(t.p->n_steps, 0);
    const core_shape want = {2, {2, 2}};
    const float v[] = {0, 1, 2, 3};
    check_values(&t, 0, &want, v);
    lt_free(&t);

    /* squeezing a dim that is not 1, and a perm that is not a permutation */
    static const char *bad[] = {
        "{\"name\":\"sq\",\"op\":\"Squeeze\",\"input\":[\"x\"],"
        "\"attr\":{\"squeeze_dims\":{\"list\":{\"i\":[\"1\"]}}}}",
        "{\"name\":\"p\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{"
        "\"tensor\":{\"dtype\":\"DT_INT32\",\"tensorShape\":{\"dim\":[{\"size\":\"3\"}]},"
        "\"intVal\":[0,0,1]}}}},{\"name\":\"tr\",\"op\":\"Transpose\",\"input\":[\"x\",\"p\"]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        si_error e2 = {0};
        si_result st = lt_build(&t, &xs, bad[i], &e2);
        assert_int_equal(st, SI_ERR_SHAPE);
        assert_non_null(strstr(e2.message, "node '"));
        lt_free(&t);
    }
}

/* BatchMatMulV2 whose batch dims broadcast on both sides ([2,1] with [1,2]):
 * tfjs's kernel computes max(2, 2) of the 4 matrices (its output lacks
 * values), so this is refused with a clear error, not answered. */
static void test_lower_matmul_both_sides(void **state)
{
    (void)state;
    core_shape xs = {.rank = 4, .d = {2, 1, 3, 3}};
    char nodes[2048];
    int shape[] = {1, 2, 3, 3};
    const lt_const cs[] = {{"shp", 4, shape}};
    int n = lt_consts(nodes, sizeof nodes, cs, 1);
    snprintf(nodes + n, sizeof nodes - (size_t)n,
             ",{\"name\":\"rs\",\"op\":\"Reshape\",\"input\":[\"x\",\"shp\"]}"
             ",{\"name\":\"mm\",\"op\":\"BatchMatMulV2\",\"input\":[\"x\",\"rs\"]}");
    lt_model t;
    si_error err = {0};
    assert_int_equal(lt_build(&t, &xs, nodes, &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "node 'mm'"));
    assert_non_null(strstr(err.message, "both sides"));
    lt_free(&t);
}

/* DepthwiseConv2dNative with data_format NCHW: tfjs's kernel reads the input
 * as NHWC against a filter it does not fit (no answer): refused, named. */
static void test_lower_dwconv_nchw(void **state)
{
    (void)state;
    core_shape xs = {.rank = 4, .d = {1, 2, 4, 4}};
    const char *nodes =
        "{\"name\":\"f\",\"op\":\"Const\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
        "\"value\":{\"tensor\":{\"dtype\":\"DT_FLOAT\",\"tensorShape\":{\"dim\":[{\"size\":\"1\"},"
        "{\"size\":\"1\"},{\"size\":\"2\"},{\"size\":\"1\"}]},\"floatVal\":[0.5,2]}}}},"
        "{\"name\":\"dw\",\"op\":\"DepthwiseConv2dNative\",\"input\":[\"x\",\"f\"],\"attr\":{"
        "\"strides\":{\"list\":{\"i\":[\"1\",\"1\",\"1\",\"1\"]}},\"padding\":{\"s\":\"U0FNRQ==\"},"
        "\"data_format\":{\"s\":\"TkNIVw==\"}}}";
    lt_model t;
    si_error err = {0};
    assert_int_equal(lt_build(&t, &xs, nodes, &err), SI_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "node 'dw'"));
    assert_non_null(strstr(err.message, "NCHW"));
    lt_free(&t);
}

/* Shape → StridedSlice → Pack → Fill/Range, as efficientpose builds an
 * output_shape: everything follows from static shapes and folds to constants. */
static void test_lower_fold(void **state)
{
    (void)state;
    core_shape xs = {.rank = 2, .d = {2, 3}};
    char nodes[8192];
    int zero = 0, one = 1, seven = 7, five = 5;
    const lt_const cs[] = {{"b0", 1, &zero}, {"e1", 1, &one}, {"s1", 1, &one},
                           {"seven", 1, &seven}, {"five", 1, &five}};
    int n = lt_consts(nodes, sizeof nodes, cs, 5);
    snprintf(nodes + n, sizeof nodes - (size_t)n,
             ",{\"name\":\"shape\",\"op\":\"Shape\",\"input\":[\"x\"]}"
             ",{\"name\":\"ss\",\"op\":\"StridedSlice\",\"input\":[\"shape\",\"b0\",\"e1\",\"s1\"],"
             "\"attr\":{\"shrink_axis_mask\":{\"i\":\"1\"}}}"
             ",{\"name\":\"pk\",\"op\":\"Pack\",\"input\":[\"ss\",\"seven\"],\"attr\":{\"axis\":{\"i\":\"0\"}}}"
             ",{\"name\":\"fill\",\"op\":\"Fill\",\"input\":[\"pk\",\"five\"]}"
             ",{\"name\":\"range\",\"op\":\"Range\",\"input\":[\"b0\",\"ss\",\"s1\"],"
             "\"attr\":{\"Tidx\":{\"type\":\"DT_INT32\"}}}"
             ",{\"name\":\"zl\",\"op\":\"ZerosLike\",\"input\":[\"x\"]}"
             ",{\"name\":\"pk2\",\"op\":\"Identity\",\"input\":[\"pk\"]}");
    lt_model t;
    lt_build_ok(&t, &xs, nodes, "fold", -1);
    assert_int_equal(t.p->n_steps, 0);
    assert_int_equal(t.p->n_outputs, 4);
    const core_shape s_fill = {2, {2, 7}}, s_range = {1, {2}}, s_zl = {2, {2, 3}}, s_pk = {1, {2}};
    float v_fill[14], v_zl[6] = {0};
    for (int i = 0; i < 14; i++)
        v_fill[i] = 5;
    const float v_range[] = {0, 1}, v_pk[] = {2, 7};
    check_values(&t, 0, &s_fill, v_fill);
    check_values(&t, 1, &s_range, v_range);
    check_values(&t, 2, &s_zl, v_zl);
    check_values(&t, 3, &s_pk, v_pk);
    lt_free(&t);
}

/* Every step of a built lt_model again on the GPU, on the inputs the host run
 * left, compared with the host result: the lowering's views through the shader. */
static void gpu_check_steps(lt_model *t, const char *what)
{
    core_program *p = t->p;
    for (int k = 0; k < p->n_steps; k++) {
        const ck_step *s = &p->steps[k];
        core_buf ins[CK_MAX_IN];
        const core_buf *insp[CK_MAX_IN] = {0};
        lt_step_ins(t, s, ins, insp);
        expect_exact(kt_compare(s, insp, p->tensors[s->out].dtype, &p->tensors[s->out].shape,
                                NULL), what, k);
    }
}

static void check_identity(lt_model *t, int o, const core_shape *xs)
{
    int64_t n = core_shape_count(xs);
    float *v = malloc((size_t)n * sizeof *v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (float)i;
    check_values(t, o, xs, v);
    free(v);
}

/* DepthToSpace on hand-computed examples, SpaceToDepth undoing it, each one copy. */
static void test_lower_depth_space(void **state)
{
    (void)state;
    static const struct {
        core_shape xs, ys;
        float want[16];
    } cases[] = {
        /* one channel out: out[h][w] = x[h/2][w/2][(h%2)*2 + w%2] */
        {{4, {1, 2, 2, 4}}, {4, {1, 4, 4, 1}},
         {0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15}},
        /* two channels out: x index (w/2)*8 + (h%2)*4 + (w%2)*2 + c */
        {{4, {1, 1, 2, 8}}, {4, {1, 2, 4, 2}},
         {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const char *nodes =
            "{\"name\":\"d2s\",\"op\":\"DepthToSpace\",\"input\":[\"x\"],\"attr\":{"
            "\"block_size\":{\"i\":\"2\"},\"data_format\":{\"s\":\"TkhXQw==\"}}}"
            ",{\"name\":\"s2d\",\"op\":\"SpaceToDepth\",\"input\":[\"d2s\"],\"attr\":{"
            "\"block_size\":{\"i\":\"2\"}}}"
            ",{\"name\":\"y\",\"op\":\"Identity\",\"input\":[\"d2s\"]}";
        lt_model t;
        lt_build_ok(&t, &cases[ci].xs, nodes, "depth_space", -1);
        assert_int_equal(t.p->n_steps, 2);
        assert_int_equal(count_steps(&t, CK_COPY), 2);
        check_identity(&t, 0, &cases[ci].xs);
        check_values(&t, 1, &cases[ci].ys, cases[ci].want);
        gpu_check_steps(&t, "depth_space");
        lt_free(&t);
    }
    /* random shapes and block sizes, both directions round-trip */
    for (int rep = 0; rep < 12; rep++) {
        int bs = kt_randint(2, 4);
        int first_d2s = rep % 2;
        core_shape xs = {.rank = 4, .d = {kt_randint(1, 3), kt_randint(1, 5), kt_randint(1, 5),
                                          kt_randint(1, 4)}};
        if (first_d2s)
            xs.d[3] *= bs * bs;
        else
            xs.d[1] *= bs, xs.d[2] *= bs;
        char nodes[1024];
        snprintf(nodes, sizeof nodes,
                 "{\"name\":\"a\",\"op\":\"%s\",\"input\":[\"x\"],\"attr\":{"
                 "\"block_size\":{\"i\":\"%d\"}}}"
                 ",{\"name\":\"b\",\"op\":\"%s\",\"input\":[\"a\"],\"attr\":{"
                 "\"block_size\":{\"i\":\"%d\"}}}",
                 first_d2s ? "DepthToSpace" : "SpaceToDepth", bs,
                 first_d2s ? "SpaceToDepth" : "DepthToSpace", bs);
        lt_model t;
        lt_build_ok(&t, &xs, nodes, "depth_space", rep);
        check_identity(&t, 0, &xs);
        gpu_check_steps(&t, "depth_space random");
        lt_free(&t);
    }
    /* bad attrs fail with the node named */
    static const char *bad[] = {
        "{\"name\":\"d\",\"op\":\"DepthToSpace\",\"input\":[\"x\"],\"attr\":{"
        "\"block_size\":{\"i\":\"3\"}}}", /* depth 4 not a multiple of 9 */
        "{\"name\":\"d\",\"op\":\"DepthToSpace\",\"input\":[\"x\"],\"attr\":{"
        "\"block_size\":{\"i\":\"1\"}}}",
        "{\"name\":\"d\",\"op\":\"DepthToSpace\",\"input\":[\"x\"],\"attr\":{"
        "\"block_size\":{\"i\":\"2\"},\"data_format\":{\"s\":\"TkNIVw==\"}}}", /* NCHW */
        "{\"name\":\"d\",\"op\":\"SpaceToDepth\",\"input\":[\"x\"],\"attr\":{"
        "\"block_size\":{\"i\":\"2\"}}}", /* width 3 */
    };
    core_shape xs = {.rank = 4, .d = {1, 2, 3, 4}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lt_model t;
        si_error err = {0};
        si_result st = lt_build(&t, &xs, bad[i], &err);
        assert_true(st == SI_ERR_SHAPE || (i == 2 && st == SI_ERR_UNSUPPORTED));
        assert_non_null(strstr(err.message, "node '"));
        lt_free(&t);
    }
}

/* SpaceToBatchND / BatchToSpaceND: TF's documented examples (x = 0, 1, ...),
 * and BatchToSpaceND with crops = paddings undoing SpaceToBatchND. */
static void test_lower_space_batch(void **state)
{
    (void)state;
    static const struct {
        core_shape xs, ys;
        int block[2], pads[4];
        float want[24];
    } cases[] = {
        {{4, {1, 2, 2, 1}}, {4, {4, 1, 1, 1}}, {2, 2}, {0, 0, 0, 0}, {0, 1, 2, 3}},
        {{4, {1, 2, 2, 3}}, {4, {4, 1, 1, 3}}, {2, 2}, {0, 0, 0, 0},
         {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
        {{4, {1, 4, 4, 1}}, {4, {4, 2, 2, 1}}, {2, 2}, {0, 0, 0, 0},
         {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15}},
        /* x = [[[[1],[2],[3],[4]],[[5]..[8]]],[[[9]..[12]],[[13]..[16]]]] minus 1,
         * paddings [[0,0],[2,0]]: the pads read 0 */
        {{4, {2, 2, 4, 1}}, {4, {8, 1, 3, 1}}, {2, 2}, {0, 0, 2, 0},
         {0, 0, 2, 0, 8, 10, 0, 1, 3, 0, 9, 11, 0, 4, 6, 0, 12, 14, 0, 5, 7, 0, 13, 15}},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        char nodes[4096];
        const lt_const cs[] = {{"blk", 2, cases[ci].block}, {"pads", 4, cases[ci].pads}};
        int n = lt_consts(nodes, sizeof nodes, cs, 2);
        snprintf(nodes + n, sizeof nodes - (size_t)n,
                 ",{\"name\":\"s2b\",\"op\":\"SpaceToBatchND\",\"input\":[\"x\",\"blk\",\"pads\"]}"
                 ",{\"name\":\"b2s\",\"op\":\"BatchToSpaceND\",\"input\":[\"s2b\",\"blk\",\"pads\"]}"
                 ",{\"name\":\"y\",\"op\":\"Identity\",\"input\":[\"s2b\"]}");
        lt_model t;
        lt_build_ok(&t, &cases[ci].xs, nodes, "space_batch", -1);
        check_identity(&t, 0, &cases[ci].xs);
        check_values(&t, 1, &cases[ci].ys, cases[ci].want);
        gpu_check_steps(&t, "space_batch");
        lt_free(&t);
    }
    /* random shapes, blocks and paddings; 1 or 2 block dims, extra trailing dims */
    for (int rep = 0; rep < 16; rep++) {
        int m = rep % 4 == 3 ? 1 : 2, extra = kt_randint(0, 1);
        core_shape xs = {.rank = 1 + m + 1 + extra};
        int block[2], pads[4];
        xs.d[0] = kt_randint(1, 3);
        for (int i = 0; i < m; i++) {
            block[i] = kt_randint(1, 3);
            pads[2 * i] = kt_randint(0, 3);
            int64_t base = kt_randint(1, 5) * block[i];
            int64_t d = base - pads[2 * i] - kt_randint(0, 2);
            if (d < 1)
                d = 1;
            xs.d[i + 1] = d;
            int64_t rest = (d + pads[2 * i]) % block[i];
            pads[2 * i + 1] = (int)(rest ? block[i] - rest : 0) + (kt_randint(0, 1) ? block[i] : 0);
        }
        for (int i = m + 1; i < xs.rank; i++)
            xs.d[i] = kt_randint(1, 4);
        char nodes[4096];
        const lt_const cs[] = {{"blk", m, block}, {"pads", 2 * m, pads}};
        int n = lt_consts(nodes, sizeof nodes, cs, 2);
        snprintf(nodes + n, sizeof nodes - (size_t)n,
                 ",{\"name\":\"s2b\",\"op\":\"SpaceToBatchND\",\"input\":[\"x\",\"blk\",\"pads\"]}"
                 ",{\"name\":\"b2s\",\"op\":\"BatchToSpaceND\",\"input\":[\"s2b\",\"blk\",\"pads\"]}");
        lt_model t;
        lt_build_ok(&t, &xs, nodes, "space_batch", rep);
        check_identity(&t, 0, &xs);
        gpu_check_steps(&t, "space_batch random");
        lt_free(&t);
    }
    /* paddings that leave a dim indivisible, a batch not divisible by the blocks */
    core_shape xs = {.rank = 4, .d = {3, 3, 4, 1}};
    int blk[2] = {2, 2}, pads[4] = {0, 0, 0, 0};
    static const char *ops[] = {"SpaceToBatchND", "BatchToSpaceND"};
    for (int i = 0; i < 2; i++) {
        char nodes[4096];
        const lt_const cs[] = {{"blk", 2, blk}, {"pads", 4, pads}};
        int n = lt_consts(nodes, sizeof nodes, cs, 2);
        snprintf(nodes + n, sizeof nodes - (size_t)n,
                 ",{\"name\":\"op\",\"op\":\"%s\",\"input\":[\"x\",\"blk\",\"pads\"]}", ops[i]);
        lt_model t;
        si_error err = {0};
        assert_int_equal(lt_build(&t, &xs, nodes, &err), SI_ERR_SHAPE);
        assert_non_null(strstr(err.message, "node '"));
        lt_free(&t);
    }
}

/* glk_copy_words (issue 19's transfer kernel): words from the mapped host pool
 * into a device buffer at random offsets and lengths (16-byte aligned or not,
 * a tail of 1-3 words or none), several queued with no wait between; each
 * lands exactly in its range and nothing outside it changes. */
static void test_copy_words(void **state)
{
    (void)state;
    si_error err = {0};
    enum { POOL = 1 << 20, DEV = 1 << 20 };
    uint32_t pool, dev;
    uint32_t *host;
    if (glk_host_pool_create(kt_gpu, POOL, &pool, (void **)&host, &err) == SI_ERR_UNSUPPORTED)
        skip();
    assert_int_equal(err.status, SI_OK);
    assert_int_equal(glk_buffer_create(kt_gpu, DEV, &dev, &err), SI_OK);
    uint32_t *want = malloc(DEV), *got = malloc(DEV);
    assert_non_null(want);
    assert_non_null(got);
    for (int i = 0; i < POOL / 4; i++)
        host[i] = kt_rand();
    for (int i = 0; i < DEV / 4; i++)
        want[i] = ~(uint32_t)i;
    assert_int_equal(glk_upload(kt_gpu, dev, 0, want, DEV, &err), SI_OK);
    for (int rep = 0; rep < 60; rep++) {
        /* disjoint destinations in one batch: each a slot of DEV / 8 */
        int slot = rep % 8;
        uint64_t words = (uint64_t)kt_randint(1, rep % 3 == 0 ? 40 : 30000);
        uint64_t so = (uint64_t)kt_randint(0, POOL / 4 - (int)words - 1);
        uint64_t dmax = DEV / 8 / 4 - words - 1;
        uint64_t dofs = (uint64_t)slot * (DEV / 8 / 4) + (uint64_t)kt_randint(0, (int)dmax);
        if (rep % 4 == 0) { /* both 16-byte aligned */
            so &= ~3ull;
            dofs &= ~3ull;
        }
        assert_int_equal(glk_copy_words(kt_gpu, pool, so * 4, dev, dofs * 4, words * 4, &err), SI_OK);
        memcpy(want + dofs, host + so, words * 4);
        if (slot == 7) {
            assert_int_equal(glk_download(kt_gpu, dev, 0, got, DEV, &err), SI_OK);
            assert_memory_equal(got, want, DEV);
        }
    }
    assert_int_equal(glk_copy_words(kt_gpu, pool, 2, dev, 0, 8, &err), SI_ERR_ARG);
    free(want);
    free(got);
    glk_buffer_destroy(kt_gpu, dev);
    glk_host_pool_destroy(kt_gpu, pool);
}

/* Transfers queued together go as one dispatch (issue 19: a load a step
 * needs, each weight, bias and constant a transfer of its own, cost a dispatch
 * each): GLK_XFER_BATCH disjoint ones from the pool make one; one more starts
 * the next; one writing bytes a dispatched one wrote waits behind a barrier,
 * which sends the queue first (its bytes win); one in the other direction
 * sends the queue, and a load of what it just wrote reads it; a step reading
 * a queued load's bytes sees them. */
static void test_xfer_batch(void **state)
{
    (void)state;
    si_error err = {0};
    enum { POOL = 1 << 18, DEV = 1 << 18, SLOT = DEV / 32 };
    uint32_t pool, dev, dev2;
    uint32_t *host;
    if (glk_host_pool_create(kt_gpu, POOL, &pool, (void **)&host, &err) == SI_ERR_UNSUPPORTED)
        skip();
    assert_int_equal(glk_buffer_create(kt_gpu, DEV, &dev, &err), SI_OK);
    assert_int_equal(glk_buffer_create(kt_gpu, DEV, &dev2, &err), SI_OK);
    uint32_t *want = malloc(DEV), *got = malloc(DEV);
    assert_non_null(want);
    assert_non_null(got);
    for (int i = 0; i < POOL / 4; i++)
        host[i] = kt_rand();
    memset(want, 0, DEV);
    assert_int_equal(glk_upload(kt_gpu, dev, 0, want, DEV, &err), SI_OK);
    uint64_t d0 = glk_xfer_dispatches(kt_gpu);
    /* GLK_XFER_BATCH + 1 disjoint loads, aligned or not: two dispatches */
    for (int i = 0; i <= 21; i++) {
        if (i == 21)
            assert_int_equal(glk_xfer_dispatches(kt_gpu), d0); /* 21 queued, none sent */
        uint64_t words = (uint64_t)kt_randint(1, SLOT / 4 - 8), so = (uint64_t)kt_randint(0, POOL / 4 - (int)words);
        uint64_t dofs = (uint64_t)i * (SLOT / 4) + (uint64_t)kt_randint(0, (int)(SLOT / 4 - words));
        assert_int_equal(glk_copy_words(kt_gpu, pool, so * 4, dev, dofs * 4, words * 4, &err), SI_OK);
        memcpy(want + dofs, host + so, words * 4);
    }
    assert_int_equal(glk_xfer_dispatches(kt_gpu), d0 + 1); /* the 22nd is still queued */
    /* one writing over the first slot's bytes (the first dispatch wrote them): a
     * barrier, the 22nd sent ahead of it, and its bytes win */
    assert_int_equal(glk_copy_words(kt_gpu, pool, 4096, dev, 0, SLOT, &err), SI_OK);
    memcpy(want, host + 1024, SLOT);
    assert_int_equal(glk_xfer_dispatches(kt_gpu), d0 + 2);
    /* the other way (a spill of slot 1 into the pool's end), then a load of it back into slot 30 */
    uint64_t spill_at = POOL - SLOT;
    assert_int_equal(glk_copy_words(kt_gpu, dev, SLOT, pool, spill_at, SLOT, &err), SI_OK);
    assert_int_equal(glk_xfer_dispatches(kt_gpu), d0 + 3);
    assert_int_equal(glk_copy_words(kt_gpu, pool, spill_at, dev, 30 * SLOT, SLOT, &err), SI_OK);
    assert_int_equal(glk_xfer_dispatches(kt_gpu), d0 + 4);
    memcpy(want + 30 * SLOT / 4, want + SLOT / 4, SLOT);
    /* a step copying slot 30 into dev2 sees the queued load */
    int64_t dim[1] = {SLOT / 4}, one[1] = {1};
    ck_step s = copy_step(1, dim, one, one);
    si_dtype dt[CK_MAX_IN] = {SI_INT32};
    glk_range r_in = {dev, 30 * SLOT, SLOT}, r_out = {dev2, 0, SLOT};
    assert_int_equal(glk_run_step(kt_gpu, &s, &r_in, dt, &r_out, SI_INT32, &err), SI_OK);
    assert_int_equal(glk_xfer_dispatches(kt_gpu), d0 + 5);
    assert_int_equal(glk_download(kt_gpu, dev, 0, got, DEV, &err), SI_OK);
    assert_memory_equal(got, want, DEV);
    assert_int_equal(glk_download(kt_gpu, dev2, 0, got, SLOT, &err), SI_OK);
    assert_memory_equal(got, want + 30 * SLOT / 4, SLOT);
    free(want);
    free(got);
    glk_buffer_destroy(kt_gpu, dev);
    glk_buffer_destroy(kt_gpu, dev2);
    glk_host_pool_destroy(kt_gpu, pool);
}

/* glk_dequant_words (issues 19, 20: a quantized weight crosses the bus as
 * stored and is dequantized as it loads): uint8, uint16 and float16 weights of
 * random counts (odd and even) at random word offsets of the mapped pool,
 * into float32 and into halves, queued together with plain copies: they go as
 * one dispatch; float32 values are bitwise CK_DEQUANT's kernel's on the same
 * words (so a weight has the same bits wherever it is dequantized) and within
 * an ulp of the host's, halves are those values rounded to nearest even
 * (io_float_to_half) and saturated at 65504, the padding half of an odd count
 * is 0, nothing outside the ranges changes, and values past the largest half
 * are counted (glk_half_overflows). */
static void test_dequant_words(void **state)
{
    (void)state;
    si_error err = {0};
    enum { POOL = 1 << 18, DEV = 1 << 20, SLOT = DEV / 8, NQ = 6 };
    uint32_t pool, dev, raw, ref;
    uint32_t *host;
    if (glk_host_pool_create(kt_gpu, POOL, &pool, (void **)&host, &err) == SI_ERR_UNSUPPORTED)
        skip();
    assert_int_equal(glk_buffer_create(kt_gpu, DEV, &dev, &err), SI_OK);
    assert_int_equal(glk_buffer_create(kt_gpu, SLOT, &raw, &err), SI_OK);
    assert_int_equal(glk_buffer_create(kt_gpu, SLOT, &ref, &err), SI_OK);
    uint32_t *want = malloc(DEV), *got = malloc(DEV), *refv = malloc(SLOT);
    assert_non_null(want);
    assert_non_null(got);
    assert_non_null(refv);
    for (int rep = 0; rep < 12; rep++) {
        for (int i = 0; i < POOL / 4; i++)
            host[i] = kt_rand();
        for (int i = 0; i < DEV / 4; i++)
            want[i] = ~(uint32_t)i;
        assert_int_equal(glk_upload(kt_gpu, dev, 0, want, DEV, &err), SI_OK);
        uint64_t d0 = glk_xfer_dispatches(kt_gpu);
        (void)glk_half_overflows(kt_gpu); /* whatever came before */
        struct { int quant, half, count; uint64_t so, dofs; float scale, min; } q[NQ];
        uint64_t expect_ovf = 0;
        for (int k = 0; k < NQ; k++) { /* slot k of dev: one each of quant x half */
            int quant = 1 + k % 3, half = k / 3, count = kt_randint(1, rep % 2 ? 40 : 20000);
            uint64_t stored = ((uint64_t)count * (quant == 1 ? 1 : 2) + 3) / 4;
            uint64_t words = half ? ((uint64_t)count + 1) / 2 : (uint64_t)count;
            q[k].quant = quant, q[k].half = half, q[k].count = count;
            q[k].so = (uint64_t)kt_randint(0, POOL / 4 - (int)stored - 1);
            q[k].dofs = (uint64_t)k * (SLOT / 4) + (uint64_t)kt_randint(0, (int)(SLOT / 4 - words - 1));
            q[k].scale = kt_randf(0.001f, 0.05f), q[k].min = kt_randf(-2.f, 0.f);
            if (half && quant != 3 && rep == 3) /* past the largest half: saturated and counted */
                q[k].scale = kt_randf(300.f, 400.f), q[k].min = 0.f;
            if (quant == 3) /* halves as stored: no NaNs or infinities (an exponent under 31) */
                for (uint64_t w = 0; w < stored; w++)
                    host[q[k].so + w] &= 0xbfffbfffu;
            assert_int_equal(glk_dequant_words(kt_gpu, pool, q[k].so * 4, dev, q[k].dofs * 4, count, quant,
                                               q[k].scale, q[k].min, half, &err), SI_OK);
        }
        /* and a plain copy into slot 7, in the same batch */
        uint64_t cw = (uint64_t)kt_randint(1, 3000), cso = (uint64_t)kt_randint(0, POOL / 4 - 3001);
        assert_int_equal(glk_copy_words(kt_gpu, pool, cso * 4, dev, 7 * SLOT + 4, cw * 4, &err), SI_OK);
        memcpy(want + 7 * SLOT / 4 + 1, host + cso, cw * 4);
        assert_int_equal(glk_xfer_dispatches(kt_gpu), d0); /* all queued */
        for (int k = 0; k < NQ; k++) {
            /* CK_DEQUANT's kernel on the same words, into float32 */
            int count = q[k].count, quant = q[k].quant;
            uint64_t stored = ((uint64_t)count * (quant == 1 ? 1 : 2) + 3) / 4;
            ck_step st = {.kind = CK_DEQUANT, .n_in = 1, .in = {0}, .out = 1};
            st.u.dequant = (ck_dequant_p){.count = count, .quant = quant, .min = q[k].min, .scale = q[k].scale};
            assert_int_equal(glk_upload(kt_gpu, raw, 0, host + q[k].so, stored * 4, &err), SI_OK);
            si_dtype dt[CK_MAX_IN] = {SI_INT32};
            glk_range r_in = {raw, 0, stored * 4}, r_out = {ref, 0, (uint64_t)count * 4};
            assert_int_equal(glk_run_step(kt_gpu, &st, &r_in, dt, &r_out, SI_FLOAT32, &err), SI_OK);
            assert_int_equal(glk_download(kt_gpu, ref, 0, refv, (uint64_t)count * 4, &err), SI_OK);
            const uint8_t *b = (const uint8_t *)(host + q[k].so);
            for (int i = 0; i < count; i++) {
                float v;
                memcpy(&v, &refv[i], 4);
                if (quant != 3) { /* the kernel's against the host's in double, as TensorFlow.js */
                    uint32_t e = quant == 1 ? b[i] : (uint32_t)(b[2 * i] | b[2 * i + 1] << 8);
                    double h = (double)e * q[k].scale + q[k].min;
                    /* (a product and a sum in float32: each rounds once) */
                    assert_true(fabs(v - h) <= (fabs((double)e * q[k].scale) + fabs(q[k].min)) * 1.2e-7);
                }
                if (!q[k].half) {
                    want[q[k].dofs + (uint64_t)i] = refv[i];
                    continue;
                }
                float c = isinf(v) || isnan(v) ? v : v > 65504.f ? 65504.f : v < -65504.f ? -65504.f : v;
                expect_ovf += fabsf(v) >= 65520.f && !isinf(v);
                uint16_t h = io_float_to_half(c);
                uint32_t *w = &want[q[k].dofs + (uint64_t)i / 2];
                *w = i % 2 ? (*w & 0xffffu) | (uint32_t)h << 16 : (i + 1 == count ? h : (*w & 0xffff0000u) | h);
            }
        }
        assert_int_equal(glk_download(kt_gpu, dev, 0, got, DEV, &err), SI_OK);
        assert_int_equal(glk_xfer_dispatches(kt_gpu), d0 + 1);
        for (int i = 0; i < DEV / 4; i++)
            if (got[i] != want[i])
                fail_msg("rep %d: word %d (slot %d) is %08x, not %08x", rep, i, i / (SLOT / 4), got[i], want[i]);
        uint64_t ovf = glk_half_overflows(kt_gpu);
        if (rep == 3)
            assert_true(expect_ovf > 0);
        assert_int_equal(ovf, expect_ovf);
    }
    assert_int_equal(glk_dequant_words(kt_gpu, pool, 2, dev, 0, 8, 1, 1.f, 0.f, 0, &err), SI_ERR_ARG);
    assert_int_equal(glk_dequant_words(kt_gpu, pool, 0, dev, 0, 8, 4, 1.f, 0.f, 0, &err), SI_ERR_ARG);
    free(want);
    free(got);
    free(refv);
    glk_buffer_destroy(kt_gpu, dev);
    glk_buffer_destroy(kt_gpu, raw);
    glk_buffer_destroy(kt_gpu, ref);
    glk_host_pool_destroy(kt_gpu, pool);
}

/* GPU timestamps (glk_timing): with timing on, each command sent is timed
 * once, tagged with the tag set when it was sent (a batch of transfers: when
 * its first was queued), a batch with its ranges, in the order sent, each
 * with its bytes, ending no earlier than it began and than the one before ended
 * (a timestamp waits for the commands before it); the values are unchanged;
 * nothing is timed with timing off, and a second read finds nothing. */
static void test_gpu_stamps(void **state)
{
    (void)state;
    si_error err = {0};
    if (!glk_timing(kt_gpu, 1))
        skip(); /* no GL_EXT_disjoint_timer_query */
    enum { N = 1 << 14 };
    uint32_t pool, dev, dev2;
    uint32_t *host;
    if (glk_host_pool_create(kt_gpu, 4 * N, &pool, (void **)&host, &err) == SI_ERR_UNSUPPORTED) {
        glk_timing(kt_gpu, 0);
        skip();
    }
    assert_int_equal(glk_buffer_create(kt_gpu, 4 * N, &dev, &err), SI_OK);
    assert_int_equal(glk_buffer_create(kt_gpu, 4 * N, &dev2, &err), SI_OK);
    for (int i = 0; i < N; i++)
        host[i] = kt_rand();
    int32_t *got = malloc(4 * N);
    assert_non_null(got);
    glk_stamp *v = NULL;
    int n = 0, disjoint = 0;
    assert_int_equal(glk_stamps(kt_gpu, &v, &n, &disjoint), 0); /* whatever came before */
    free(v);
    glk_set_tag(kt_gpu, 7);
    assert_int_equal(glk_copy_words(kt_gpu, pool, 0, dev, 0, 2 * N, &err), SI_OK);
    glk_set_tag(kt_gpu, 8); /* the batch keeps its first tag */
    assert_int_equal(glk_copy_words(kt_gpu, pool, 2 * N, dev, 2 * N, 2 * N, &err), SI_OK);
    glk_set_tag(kt_gpu, 9);
    int64_t dim[1] = {N}, one[1] = {1};
    ck_step s = copy_step(1, dim, one, one);
    si_dtype dt[CK_MAX_IN] = {SI_INT32};
    glk_range r_in = {dev, 0, 4 * N}, r_out = {dev2, 0, 4 * N};
    assert_int_equal(glk_run_step(kt_gpu, &s, &r_in, dt, &r_out, SI_INT32, &err), SI_OK);
    glk_set_tag(kt_gpu, 10);
    assert_int_equal(glk_download(kt_gpu, dev2, 0, got, 4 * N, &err), SI_OK);
    assert_memory_equal(got, host, 4 * N);
    assert_int_equal(glk_finish(kt_gpu, &err), SI_OK);
    assert_int_equal(glk_stamps(kt_gpu, &v, &n, &disjoint), 0);
    assert_int_equal(n, 3);
    assert_int_equal(v[0].copy, 1);
    assert_int_equal(v[0].tag, 7);
    assert_int_equal(v[0].ranges, 2);
    assert_int_equal(v[0].bytes, 4 * N);
    assert_int_equal(v[1].copy, 0);
    assert_int_equal(v[1].tag, 9);
    assert_int_equal(v[1].bytes, 0);
    assert_int_equal(v[2].copy, 1);
    assert_int_equal(v[2].tag, 10);
    assert_int_equal(v[2].bytes, 4 * N);
    for (int i = 0; i < n && !disjoint; i++) {
        assert_true(v[i].t1 >= v[i].t0);
        if (i)
            assert_true(v[i].t1 >= v[i - 1].t1);
    }
    free(v);
    assert_int_equal(glk_stamps(kt_gpu, &v, &n, &disjoint), 0);
    assert_int_equal(n, 0);
    glk_timing(kt_gpu, 0);
    assert_int_equal(glk_run_step(kt_gpu, &s, &r_in, dt, &r_out, SI_INT32, &err), SI_OK);
    assert_int_equal(glk_finish(kt_gpu, &err), SI_OK);
    assert_int_equal(glk_stamps(kt_gpu, &v, &n, &disjoint), 0);
    assert_int_equal(n, 0);
    assert_int_equal(glk_gpu_now(kt_gpu), -1);
    glk_set_tag(kt_gpu, -1);
    free(got);
    glk_buffer_destroy(kt_gpu, dev);
    glk_buffer_destroy(kt_gpu, dev2);
    glk_host_pool_destroy(kt_gpu, pool);
}

/* A dispatch skips GL calls that would change nothing (the program in use,
 * the storage bindings, the uniforms): a buffer deleted and another made is
 * bound again (where GL gives it the deleted one's name, a binding remembered
 * past the deletion would be skipped: Mesa here does not reuse names, a driver
 * that does would fail this), and the same program with the same ranges but
 * other numbers copies anew (a uniform remembered wrongly fails here). */
static void test_state_skips(void **state)
{
    (void)state;
    si_error err = {0};
    enum { N = 1024 };
    int32_t v[N], got[N];
    for (int i = 0; i < N; i++)
        v[i] = (int32_t)kt_rand();
    int64_t dim[1] = {N}, one[1] = {1};
    ck_step s = copy_step(1, dim, one, one);
    si_dtype dt[CK_MAX_IN] = {SI_INT32};
    for (int rep = 0; rep < 4; rep++) {
        uint32_t a, b;
        assert_int_equal(glk_buffer_create(kt_gpu, N * 4, &a, &err), SI_OK);
        assert_int_equal(glk_buffer_create(kt_gpu, N * 4, &b, &err), SI_OK);
        for (int i = 0; i < N; i++)
            v[i] += rep;
        assert_int_equal(glk_upload(kt_gpu, a, 0, v, N * 4, &err), SI_OK);
        glk_range ra = {a, 0, N * 4}, rb = {b, 0, N * 4};
        s.u.copy.in_offset = 0;
        s.u.copy.dim[0] = N;
        assert_int_equal(glk_run_step(kt_gpu, &s, &ra, dt, &rb, SI_INT32, &err), SI_OK);
        assert_int_equal(glk_download(kt_gpu, b, 0, got, N * 4, &err), SI_OK);
        assert_memory_equal(got, v, N * 4);
        /* the same ranges, other numbers: shifted by rep + 1 */
        s.u.copy.in_offset = rep + 1;
        s.u.copy.dim[0] = N - rep - 1;
        assert_int_equal(glk_run_step(kt_gpu, &s, &ra, dt, &rb, SI_INT32, &err), SI_OK);
        assert_int_equal(glk_download(kt_gpu, b, 0, got, N * 4, &err), SI_OK);
        assert_memory_equal(got, v + rep + 1, (size_t)(N - rep - 1) * 4);
        glk_buffer_destroy(kt_gpu, a);
        glk_buffer_destroy(kt_gpu, b);
    }
}

/* Barriers only where a dispatch depends on an earlier one: two copies into
 * separate buffers need none between them; one reading what a pending one
 * wrote (read after write) or writing what a pending one reads (write after
 * read) gets one; and the values are right in each case. */
static void test_barriers_where_needed(void **state)
{
    (void)state;
    si_error err = {0};
    enum { N = 4096 };
    uint32_t b[4];
    int32_t *v = malloc(N * 4), *got = malloc(N * 4);
    assert_non_null(v);
    assert_non_null(got);
    for (int i = 0; i < N; i++)
        v[i] = (int32_t)kt_rand();
    for (int i = 0; i < 4; i++) {
        assert_int_equal(glk_buffer_create(kt_gpu, N * 4, &b[i], &err), SI_OK);
        assert_int_equal(glk_upload(kt_gpu, b[i], 0, v, N * 4, &err), SI_OK);
    }
    int64_t dim[1] = {N}, one[1] = {1};
    ck_step s = copy_step(1, dim, one, one);
    si_dtype dt[CK_MAX_IN] = {SI_INT32};
    glk_range r0 = {b[0], 0, N * 4}, r1 = {b[1], 0, N * 4}, r2 = {b[2], 0, N * 4}, r3 = {b[3], 0, N * 4};
    /* b0 -> b1, then b2 -> b3: independent */
    assert_int_equal(glk_run_step(kt_gpu, &s, &r0, dt, &r1, SI_INT32, &err), SI_OK);
    uint64_t n0 = glk_barriers(kt_gpu);
    assert_int_equal(glk_run_step(kt_gpu, &s, &r2, dt, &r3, SI_INT32, &err), SI_OK);
    assert_int_equal(glk_barriers(kt_gpu), n0);
    /* reads b1, which the first wrote: a barrier */
    s.u.copy.in_offset = 1; /* shifted by one, so the result tells the order */
    s.u.copy.dim[0] = N - 1;
    assert_int_equal(glk_run_step(kt_gpu, &s, &r1, dt, &r2, SI_INT32, &err), SI_OK);
    assert_int_equal(glk_barriers(kt_gpu), n0 + 1);
    /* writes b1, which the last one reads: a barrier again */
    s.u.copy.in_offset = 0;
    assert_int_equal(glk_run_step(kt_gpu, &s, &r3, dt, &r1, SI_INT32, &err), SI_OK);
    assert_int_equal(glk_barriers(kt_gpu), n0 + 2);
    assert_int_equal(glk_download(kt_gpu, b[2], 0, got, N * 4, &err), SI_OK);
    for (int i = 0; i < N - 1; i++) /* b2[i] = b1[i + 1] = v[i + 1] */
        assert_int_equal(got[i], v[i + 1]);
    assert_int_equal(got[N - 1], v[N - 1]);
    assert_int_equal(glk_download(kt_gpu, b[1], 0, got, N * 4, &err), SI_OK);
    assert_memory_equal(got, v, N * 4); /* b1[i] = b3[i] = v[i] */
    for (int i = 0; i < 4; i++)
        glk_buffer_destroy(kt_gpu, b[i]);
    free(v);
    free(got);
}

static int setup(void **state) { (void)state; return kt_gpu_open(); }
static int teardown(void **state) { (void)state; kt_gpu_close(); return 0; }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_transpose),  cmocka_unit_test(test_copy_strided),
        cmocka_unit_test(test_copy_accumulate), cmocka_unit_test(test_pad),
        cmocka_unit_test(test_gather),          cmocka_unit_test(test_gathernd),
        cmocka_unit_test(test_lower_strided_slice), cmocka_unit_test(test_lower_join_split),
        cmocka_unit_test(test_lower_alias_and_errors), cmocka_unit_test(test_lower_fold),
        cmocka_unit_test(test_lower_matmul_both_sides), cmocka_unit_test(test_lower_dwconv_nchw),
        cmocka_unit_test(test_lower_depth_space), cmocka_unit_test(test_lower_space_batch),
        cmocka_unit_test(test_copy_words),      cmocka_unit_test(test_barriers_where_needed),
        cmocka_unit_test(test_xfer_batch),      cmocka_unit_test(test_dequant_words),      cmocka_unit_test(test_state_skips),
        cmocka_unit_test(test_gpu_stamps),
    };
    return cmocka_run_group_tests_name("kernels_shape", tests, setup, teardown);
}
