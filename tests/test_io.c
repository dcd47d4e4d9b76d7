/* io/ unit tests: model folders are written from C into a temp dir. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ftw.h>
#include <pthread.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <stb/stb_image_write.h>

#include "io.h"

/* ---- temp folders ---- */

static char tmp_root[64];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(p);
}

static int setup_tmp(void **state)
{
    (void)state;
    strcpy(tmp_root, "/tmp/test_io_XXXXXX");
    return mkdtemp(tmp_root) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    return nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *path_in(const char *sub, const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ & 3];
    snprintf(p, 512, "%s/%s%s%s", tmp_root, sub, name ? "/" : "", name ? name : "");
    return p;
}

static char *make_dir(const char *sub)
{
    char *p = path_in(sub, NULL);
    assert_int_equal(mkdir(p, 0700), 0);
    return p;
}

static void write_bytes(const char *sub, const char *name, const void *data, size_t len)
{
    FILE *f = fopen(path_in(sub, name), "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void write_text(const char *sub, const char *name, const char *text)
{
    write_bytes(sub, name, text, strlen(text));
}

static uint32_t float_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* ---- attrs ---- */

static const char *attrs_json =
    "{\"format\":\"graph-model\",\"generatedBy\":\"2.x\",\"convertedBy\":\"test\","
    "\"modelTopology\":{\"node\":["
    "{\"name\":\"x\",\"op\":\"Placeholder\",\"attr\":{\"dtype\":{\"type\":\"DT_FLOAT\"},"
    "  \"shape\":{\"shape\":{\"dim\":[{\"size\":\"-1\"},{\"size\":3},{}]}}}},"
    "{\"name\":\"c\",\"op\":\"Const\",\"attr\":{\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
    "  \"tensorShape\":{\"dim\":[{\"size\":\"2\"}]},\"intVal\":[7,\"-8\"]}}}},"
    "{\"name\":\"n\",\"op\":\"Conv2D\",\"input\":[\"x\",\"c:1\",\"^ctrl\"],\"attr\":{"
    "  \"i\":{\"i\":\"3\"},\"inum\":{\"i\":-4},\"f\":{\"f\":0.5},\"finf\":{\"f\":\"-Infinity\"},\"b\":{\"b\":true},"
    "  \"s\":{\"s\":\"U0FNRQ==\"},\"t\":{\"type\":\"DT_FLOAT\"},\"tbool\":{\"type\":\"DT_BOOL\"},"
    "  \"tother\":{\"type\":\"DT_INT64\"},\"tnum\":{\"type\":3},"
    "  \"sh_unk\":{\"shape\":{\"unknownRank\":true}},\"sh_unk2\":{\"shape\":{\"unknown_rank\":true}},"
    "  \"sh_scalar\":{\"shape\":{}},"
    "  \"li\":{\"list\":{\"i\":[\"1\",\"2\",-3]}},\"lf\":{\"list\":{\"f\":[1.5,\"NaN\"]}},"
    "  \"ls\":{\"list\":{\"s\":[\"U0FNRQ==\",\"VkFMSUQ=\"]}},\"lb\":{\"list\":{\"b\":[true,false]}},"
    "  \"lt\":{\"list\":{\"type\":[\"DT_FLOAT\",\"DT_INT32\"]}},"
    "  \"lsh\":{\"list\":{\"shape\":[{\"dim\":[{\"size\":\"2\"}]},{\"unknownRank\":true}]}},"
    "  \"lempty\":{\"list\":{}},"
    "  \"tf\":{\"tensor\":{\"dtype\":\"DT_FLOAT\",\"tensorShape\":{},\"floatVal\":[2.5]}},"
    "  \"tb\":{\"tensor\":{\"dtype\":\"DT_BOOL\",\"tensor_shape\":{\"dim\":[{\"size\":\"2\"}]},\"bool_val\":[true,false]}},"
    "  \"tc\":{\"tensor\":{\"dtype\":\"DT_FLOAT\",\"tensorShape\":{\"dim\":[{\"size\":\"2\"}]},"
    "        \"tensorContent\":\"AACAPwAAAEA=\"}},"
    "  \"tstr\":{\"tensor\":{\"dtype\":\"DT_STRING\",\"tensorShape\":{},\"stringVal\":[\"eA==\"]}},"
    "  \"fn\":{\"func\":{\"name\":\"body\"}},"
    "  \"empty\":{}"
    "}},"
    "{\"name\":\"ctrl\",\"op\":\"NoOp\"}"
    "],\"library\":{},\"versions\":{}},"
    "\"weightsManifest\":[],"
    "\"signature\":{\"inputs\":{\"x\":{\"name\":\"x:0\",\"dtype\":\"DT_FLOAT\"}},"
    "  \"outputs\":{\"out\":{\"name\":\"n:0\"},\"aux\":{\"name\":\"c:0\"}}}}";

static void test_attrs(void **state)
{
    (void)state;
    make_dir("attrs");
    write_text("attrs", "model.json", attrs_json);
    io_model *m = NULL;
    si_error err = {0};
    assert_int_equal(io_model_load(path_in("attrs", NULL), &m, &err), SI_OK);
    assert_string_equal(m->format, "graph-model");
    assert_int_equal(m->n_nodes, 4);
    assert_int_equal(m->n_weights, 0);
    assert_int_equal(m->n_groups, 0);
    assert_int_equal(m->has_functions, 0);

    const io_node *x = &m->nodes[0];
    assert_string_equal(x->name, "x");
    assert_string_equal(x->op, "Placeholder");
    assert_int_equal(x->n_inputs, 0);
    const io_attr *a = io_node_attr(x, "dtype");
    assert_int_equal(a->kind, IO_ATTR_TYPE);
    assert_int_equal(a->type, IO_DT_FLOAT);
    assert_string_equal(a->type_name, "DT_FLOAT");
    a = io_node_attr(x, "shape");
    assert_int_equal(a->kind, IO_ATTR_SHAPE);
    assert_int_equal(a->shape.unknown_rank, 0);
    assert_int_equal(a->shape.rank, 3);
    assert_int_equal(a->shape.dim[0], -1);
    assert_int_equal(a->shape.dim[1], 3);
    assert_int_equal(a->shape.dim[2], 0);
    assert_null(io_node_attr(x, "nope"));

    a = io_node_attr(&m->nodes[1], "value");
    assert_int_equal(a->kind, IO_ATTR_TENSOR);
    assert_int_equal(a->tensor.dtype, IO_DT_INT32);
    assert_int_equal(a->tensor.shape.rank, 1);
    assert_int_equal(a->tensor.shape.dim[0], 2);
    assert_int_equal(a->tensor.n, 2);
    assert_int_equal(((int32_t *)a->tensor.data)[0], 7);
    assert_int_equal(((int32_t *)a->tensor.data)[1], -8);

    const io_node *n = &m->nodes[2];
    assert_int_equal(n->n_inputs, 3);
    assert_string_equal(n->inputs[0], "x");
    assert_string_equal(n->inputs[1], "c:1");
    assert_string_equal(n->inputs[2], "^ctrl");
    assert_int_equal(io_node_attr(n, "i")->kind, IO_ATTR_I);
    assert_int_equal(io_node_attr(n, "i")->i, 3);
    assert_int_equal(io_node_attr(n, "inum")->i, -4);
    assert_int_equal(io_node_attr(n, "f")->kind, IO_ATTR_F);
    assert_true(io_node_attr(n, "f")->f == 0.5);
    assert_true(isinf(io_node_attr(n, "finf")->f) && io_node_attr(n, "finf")->f < 0);
    assert_int_equal(io_node_attr(n, "b")->kind, IO_ATTR_B);
    assert_int_equal(io_node_attr(n, "b")->b, 1);
    a = io_node_attr(n, "s");
    assert_int_equal(a->kind, IO_ATTR_S);
    assert_string_equal(a->s, "SAME");
    assert_int_equal(a->s_len, 4);
    assert_int_equal(io_node_attr(n, "tbool")->type, IO_DT_BOOL);
    /* as TensorFlow.js reads type attrs: int64 computes as int32; the name stays */
    a = io_node_attr(n, "tother");
    assert_int_equal(a->type, IO_DT_INT32);
    assert_string_equal(a->type_name, "DT_INT64");
    assert_int_equal(io_node_attr(n, "tnum")->type, IO_DT_INT32);
    assert_int_equal(io_node_attr(n, "sh_unk")->shape.unknown_rank, 1);
    assert_int_equal(io_node_attr(n, "sh_unk2")->shape.unknown_rank, 1);
    a = io_node_attr(n, "sh_scalar");
    assert_int_equal(a->kind, IO_ATTR_SHAPE);
    assert_int_equal(a->shape.unknown_rank, 0);
    assert_int_equal(a->shape.rank, 0);

    a = io_node_attr(n, "li");
    assert_int_equal(a->kind, IO_ATTR_LIST);
    assert_int_equal(a->list_kind, IO_ATTR_I);
    assert_int_equal(a->n, 3);
    assert_int_equal(a->li[0], 1);
    assert_int_equal(a->li[1], 2);
    assert_int_equal(a->li[2], -3);
    a = io_node_attr(n, "lf");
    assert_int_equal(a->list_kind, IO_ATTR_F);
    assert_int_equal(a->n, 2);
    assert_true(a->lf[0] == 1.5);
    assert_true(isnan(a->lf[1]));
    a = io_node_attr(n, "ls");
    assert_int_equal(a->list_kind, IO_ATTR_S);
    assert_int_equal(a->n, 2);
    assert_string_equal(a->ls[0], "SAME");
    assert_string_equal(a->ls[1], "VALID");
    a = io_node_attr(n, "lb");
    assert_int_equal(a->list_kind, IO_ATTR_B);
    assert_int_equal(a->lb[0], 1);
    assert_int_equal(a->lb[1], 0);
    a = io_node_attr(n, "lt");
    assert_int_equal(a->list_kind, IO_ATTR_TYPE);
    assert_int_equal(a->n, 2);
    assert_int_equal(a->ltype[0], IO_DT_FLOAT);
    assert_int_equal(a->ltype[1], IO_DT_INT32);
    a = io_node_attr(n, "lsh");
    assert_int_equal(a->list_kind, IO_ATTR_SHAPE);
    assert_int_equal(a->n, 2);
    assert_int_equal(a->lshape[0].rank, 1);
    assert_int_equal(a->lshape[0].dim[0], 2);
    assert_int_equal(a->lshape[1].unknown_rank, 1);
    a = io_node_attr(n, "lempty");
    assert_int_equal(a->kind, IO_ATTR_LIST);
    assert_int_equal(a->list_kind, IO_ATTR_EMPTY);
    assert_int_equal(a->n, 0);

    a = io_node_attr(n, "tf");
    assert_int_equal(a->tensor.dtype, IO_DT_FLOAT);
    assert_int_equal(a->tensor.shape.rank, 0);
    assert_int_equal(a->tensor.n, 1);
    assert_true(((float *)a->tensor.data)[0] == 2.5f);
    a = io_node_attr(n, "tb");
    assert_int_equal(a->tensor.dtype, IO_DT_BOOL);
    assert_int_equal(a->tensor.shape.dim[0], 2);
    assert_int_equal(a->tensor.n, 2);
    assert_int_equal(((uint8_t *)a->tensor.data)[0], 1);
    assert_int_equal(((uint8_t *)a->tensor.data)[1], 0);
    a = io_node_attr(n, "tc");
    assert_int_equal(a->tensor.n, 2);
    assert_true(((float *)a->tensor.data)[0] == 1.0f);
    assert_true(((float *)a->tensor.data)[1] == 2.0f);
    a = io_node_attr(n, "tstr");
    assert_int_equal(a->tensor.dtype, IO_DT_OTHER);
    assert_null(a->tensor.data);
    a = io_node_attr(n, "fn");
    assert_int_equal(a->kind, IO_ATTR_FUNC);
    assert_string_equal(a->s, "body");
    assert_int_equal(io_node_attr(n, "empty")->kind, IO_ATTR_EMPTY);

    assert_int_equal(m->nodes[3].n_inputs, 0);
    assert_int_equal(m->nodes[3].n_attrs, 0);

    assert_int_equal(m->n_sig_inputs, 1);
    assert_string_equal(m->sig_input_keys[0], "x");
    assert_string_equal(m->sig_input_names[0], "x:0");
    assert_int_equal(m->n_sig_outputs, 2);
    assert_string_equal(m->sig_output_keys[1], "aux");
    assert_string_equal(m->sig_output_names[1], "c:0");

    /* A path to the file itself works the same as the folder. */
    io_model *m2 = NULL;
    assert_int_equal(io_model_load(path_in("attrs", "model.json"), &m2, &err), SI_OK);
    assert_int_equal(m2->n_nodes, 4);
    assert_string_equal(m2->dir, path_in("attrs", NULL));
    io_model_free(m2);
    io_model_free(m);
}

/* ---- weights ---- */

enum { N_Q8 = 256, N_F16 = 12 };
static const uint16_t f16_in[N_F16] = {0x0000, 0x8000, 0x3c00, 0xc000, 0x0001, 0x03ff,
                                       0x0400, 0x7bff, 0x7c00, 0xfc00, 0x3555, 0x8001};
static const double q8_scale = 0.023529411764705882, q8_min = -1.1;

/* group 1: f32[2,3] i32[3] bool[5] q8[256] f16[12] q8i[3] q16[2]; group 2: f32[7] */
static const char *weights_json =
    "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":[]},\"weightsManifest\":["
    "{\"paths\":[\"group1-shard1of3.bin\",\"group1-shard2of3.bin\",\"group1-shard3of3.bin\"],\"weights\":["
    " {\"name\":\"w_f32\",\"shape\":[2,3],\"dtype\":\"float32\"},"
    " {\"name\":\"w_i32\",\"shape\":[\"3\"],\"dtype\":\"int32\"},"
    " {\"name\":\"w_bool\",\"shape\":[5],\"dtype\":\"bool\"},"
    " {\"name\":\"w_q8\",\"shape\":[16,16],\"dtype\":\"float32\","
    "   \"quantization\":{\"dtype\":\"uint8\",\"min\":-1.1,\"scale\":0.023529411764705882,\"original_dtype\":\"float32\"}},"
    " {\"name\":\"w_f16\",\"shape\":[3,4],\"dtype\":\"float32\",\"quantization\":{\"dtype\":\"float16\"}},"
    " {\"name\":\"w_q8i\",\"shape\":[3],\"dtype\":\"int32\",\"quantization\":{\"dtype\":\"uint8\",\"min\":-2,\"scale\":0.5}},"
    " {\"name\":\"w_q16\",\"shape\":[2],\"dtype\":\"float32\",\"quantization\":{\"dtype\":\"uint16\",\"min\":1,\"scale\":0.001}},"
    " {\"name\":\"w_scalar\",\"shape\":[],\"dtype\":\"float32\"}"
    "]},"
    "{\"paths\":[\"group2-shard1of3.bin\",\"group2-shard2of3.bin\",\"group2-shard3of3.bin\"],\"weights\":["
    " {\"name\":\"w2\",\"shape\":[7],\"dtype\":\"float32\"}"
    "]}]}";

/* stored bytes of group 1 and group 2 */
static uint8_t g1[24 + 12 + 5 + N_Q8 + 2 * N_F16 + 3 + 4 + 4], g2[28 + 4];
static const size_t g1_cut[2] = {30, 100}; /* w_i32 straddles 30 */
static const size_t g2_cut[2] = {8, 20};

static void fill_groups(void)
{
    size_t o = 0;
    for (int i = 0; i < 6; i++) {
        float v = (float)i * 1.25f - 2.0f;
        memcpy(g1 + o, &v, 4);
        o += 4;
    }
    int32_t iv[3] = {-7, 0, 2147483647};
    memcpy(g1 + o, iv, 12);
    o += 12;
    const uint8_t bv[5] = {1, 0, 1, 1, 0};
    memcpy(g1 + o, bv, 5);
    o += 5;
    for (int i = 0; i < N_Q8; i++)
        g1[o++] = (uint8_t)i;
    memcpy(g1 + o, f16_in, sizeof f16_in);
    o += sizeof f16_in;
    g1[o++] = 1; /* -1.5 → Math.round → -1 */
    g1[o++] = 3; /* -0.5 → 0 */
    g1[o++] = 5; /* 0.5 → 1 */
    uint16_t q16[2] = {0, 65535};
    memcpy(g1 + o, q16, 4);
    o += 4;
    float sc = 42.0f;
    memcpy(g1 + o, &sc, 4);
    o += 4;
    assert_int_equal(o, sizeof g1);
    for (int i = 0; i < 7; i++) {
        float v = (float)i / 3.0f;
        memcpy(g2 + 4 * i, &v, 4);
    }
    memset(g2 + 28, 0xee, 4); /* the last shard is longer than needed */
}

static void write_shards(const char *sub, const char *prefix, const uint8_t *g, size_t len, const size_t cut[2])
{
    char name[64];
    size_t a[4] = {0, cut[0], cut[1], len};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s-shard%dof3.bin", prefix, i + 1);
        write_bytes(sub, name, g + a[i], a[i + 1] - a[i]);
    }
}

static void make_weights_model(const char *sub)
{
    fill_groups();
    make_dir(sub);
    write_text(sub, "model.json", weights_json);
    write_shards(sub, "group1", g1, sizeof g1, g1_cut);
    write_shards(sub, "group2", g2, sizeof g2, g2_cut);
}

static uint8_t *read_all(io_model *m, si_io_mode mode)
{
    io_reader *r = NULL;
    si_error err = {0};
    assert_int_equal(io_reader_open(m, mode, &r, &err), SI_OK);
    uint8_t *buf = calloc(1, m->weights_bytes + 16);
    uint64_t o = 0;
    for (int w = 0; w < m->n_weights; w++) {
        assert_int_equal(io_reader_submit(r, w, buf + o, &err), SI_OK);
        o += m->weights[w].nbytes;
    }
    assert_int_equal(io_reader_wait(r, &err), SI_OK);
    io_reader_close(r);
    return buf;
}

static void test_weights(void **state)
{
    (void)state;
    make_weights_model("weights");
    io_model *m = NULL;
    si_error err = {0};
    assert_int_equal(io_model_load(path_in("weights", "model.json"), &m, &err), SI_OK);
    assert_int_equal(m->n_groups, 2);
    assert_int_equal(m->n_weights, 9);
    assert_int_equal(m->groups[0].n_paths, 3);
    assert_int_equal(m->groups[0].total, sizeof g1);
    assert_int_equal(m->groups[1].total, sizeof g2);
    assert_int_equal(m->groups[0].sizes[0], 30);
    assert_int_equal(m->weights_bytes, sizeof g1 + 28);
    assert_non_null(strstr(m->groups[1].paths[2], "weights/group2-shard3of3.bin"));

    const io_weight *w = m->weights;
    assert_string_equal(w[0].name, "w_f32");
    assert_int_equal(w[0].rank, 2);
    assert_int_equal(w[0].shape[1], 3);
    assert_int_equal(w[0].count, 6);
    assert_int_equal(w[1].dtype, IO_DT_INT32);
    assert_int_equal(w[1].offset, 24);
    assert_int_equal(w[1].nbytes, 12);
    assert_int_equal(w[2].dtype, IO_DT_BOOL);
    assert_int_equal(w[2].nbytes, 5);
    assert_int_equal(w[3].quant, IO_Q_UINT8);
    assert_int_equal(w[3].nbytes, N_Q8);
    assert_true(w[3].q_scale == (float)q8_scale);
    assert_true(w[3].q_min == (float)q8_min);
    assert_int_equal(io_weight_stored_elem_size(&w[3]), 1);
    assert_int_equal(w[4].quant, IO_Q_FLOAT16);
    assert_int_equal(io_weight_stored_elem_size(&w[4]), 2);
    assert_int_equal(w[4].nbytes, 2 * N_F16);
    assert_int_equal(w[6].quant, IO_Q_UINT16);
    assert_int_equal(w[7].rank, 0);
    assert_int_equal(w[7].count, 1);
    assert_int_equal(w[8].group, 1);
    assert_int_equal(w[8].offset, 0);

    /* Both readers give the same bytes, which are the bytes written. */
    uint8_t *a = read_all(m, SI_IO_MMAP);
    uint8_t *b = read_all(m, SI_IO_URING);
    assert_memory_equal(a, g1, sizeof g1);
    assert_memory_equal(a + sizeof g1, g2, 28);
    assert_memory_equal(a, b, m->weights_bytes);
    free(a);
    free(b);

    io_reader *rm = NULL, *ru = NULL;
    assert_int_equal(io_reader_open(m, SI_IO_MMAP, &rm, &err), SI_OK);
    assert_int_equal(io_reader_open(m, SI_IO_URING, &ru, &err), SI_OK);
    uint8_t stored[512], again[512];
    void *outbuf = malloc(N_Q8 * 4);
    int32_t *out = outbuf;
    float *outf = outbuf;

    assert_int_equal(io_reader_read(rm, 1, stored, &err), SI_OK);
    io_weight_dequantize(&w[1], stored, out);
    assert_int_equal(out[0], -7);
    assert_int_equal(out[2], 2147483647);

    assert_int_equal(io_reader_read(rm, 2, stored, &err), SI_OK);
    io_weight_dequantize(&w[2], stored, out);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[4], 0);

    /* uint8: as TensorFlow.js computes it, q*scale+min in double, then float32. */
    assert_int_equal(io_reader_read(ru, 3, stored, &err), SI_OK);
    io_weight_dequantize(&w[3], stored, out);
    int differs_from_float_math = 0;
    for (int q = 0; q < N_Q8; q++) {
        float want = (float)(q * q8_scale + q8_min);
        assert_int_equal(float_bits(outf[q]), float_bits(want));
        differs_from_float_math += float_bits(want) != float_bits((float)(q * (double)(float)q8_scale + (double)(float)q8_min));
    }
    assert_true(differs_from_float_math > 0); /* the test would catch float math */

    /* A hand-built weight with only the float fields set still dequantizes. */
    io_weight hand = w[3];
    hand.q_min64 = hand.q_scale64 = 0;
    io_weight_dequantize(&hand, stored, out);
    assert_true(outf[255] == (float)(255.0 * (float)q8_scale + (float)q8_min));

    assert_int_equal(io_reader_read(ru, 4, stored, &err), SI_OK);
    io_weight_dequantize(&w[4], stored, out);
    const float want16[N_F16] = {0.0f, -0.0f, 1.0f, -2.0f, ldexpf(1, -24), ldexpf(1023, -24),
                                 ldexpf(1, -14), 65504.0f, INFINITY, -INFINITY, 0.333251953125f, -ldexpf(1, -24)};
    for (int i = 0; i < N_F16; i++)
        assert_int_equal(float_bits(outf[i]), float_bits(want16[i]));
    assert_true(isnan(io_half_to_float(0x7e00)));
    assert_true(isnan(io_half_to_float(0xfc01)));
    assert_int_equal(float_bits(io_half_to_float(0x8000)), 0x80000000u);
    /* every finite half against the definition: (-1)^s * 2^(e-15) * 1.m, or 2^-14 * 0.m */
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint32_t e = (h >> 10) & 31, man = h & 1023;
        if (e == 31)
            continue;
        double v = e ? ldexp(1024 + man, (int)e - 25) : ldexp(man, -24);
        float want = (float)((h & 0x8000) ? -v : v);
        assert_int_equal(float_bits(io_half_to_float((uint16_t)h)), float_bits(want));
    }

    assert_int_equal(io_reader_read(ru, 5, stored, &err), SI_OK);
    io_weight_dequantize(&w[5], stored, out);
    assert_int_equal(out[0], -1);
    assert_int_equal(out[1], 0);
    assert_int_equal(out[2], 1);

    assert_int_equal(io_reader_read(rm, 6, stored, &err), SI_OK);
    io_weight_dequantize(&w[6], stored, out);
    assert_true(outf[0] == 1.0f);
    assert_true(outf[1] == (float)(65535 * 0.001 + 1));

    /* Many queued reads at once: more than the ring holds. */
    enum { REPS = 300 };
    uint8_t *many = malloc(REPS * 28);
    for (int k = 0; k < REPS; k++)
        assert_int_equal(io_reader_submit(ru, 8, many + 28 * k, &err), SI_OK);
    assert_int_equal(io_reader_wait(ru, &err), SI_OK);
    for (int k = 0; k < REPS; k++)
        assert_memory_equal(many + 28 * k, g2, 28);
    free(many);

    assert_int_equal(io_reader_read(rm, 8, again, &err), SI_OK);
    assert_memory_equal(again, g2, 28);
    assert_int_not_equal(io_reader_read(rm, 9, again, &err), SI_OK);
    assert_int_equal(err.status, SI_ERR_ARG);
    assert_int_not_equal(io_reader_read(ru, -1, again, &err), SI_OK);

    free(outbuf);
    io_reader_close(rm);
    io_reader_close(ru);

    /* A reader closed with reads still queued finishes them first. */
    assert_int_equal(io_reader_open(m, SI_IO_URING, &ru, &err), SI_OK);
    assert_int_equal(io_reader_submit(ru, 0, again, &err), SI_OK);
    io_reader_close(ru);
    assert_memory_equal(again, g1, 24);

    /* A shard cut short after loading is caught when a reader opens it. */
    assert_int_equal(truncate(path_in("weights", "group2-shard3of3.bin"), 2), 0);
    for (int mode = 0; mode < 2; mode++) {
        io_reader *r = NULL;
        memset(&err, 0, sizeof err);
        assert_int_not_equal(io_reader_open(m, (si_io_mode)mode, &r, &err), SI_OK);
        assert_null(r);
        assert_non_null(strstr(err.message, "group2-shard3of3.bin"));
    }
    io_model_free(m);
}

/* ---- bad input ---- */

static void expect_fail(const char *path, si_result want, const char *n1, const char *n2, const char *n3)
{
    io_model *m = (io_model *)1;
    si_error err = {0};
    si_result st = io_model_load(path, &m, &err);
    print_message("  %s -> %d: %s\n", path, st, err.message);
    assert_int_equal(st, want);
    assert_int_equal(err.status, want);
    assert_null(m);
    assert_null(strchr(err.message, '\n'));
    assert_non_null(strstr(err.message, n1));
    if (n2)
        assert_non_null(strstr(err.message, n2));
    if (n3)
        assert_non_null(strstr(err.message, n3));
}

static void bad_model(const char *sub, const char *json)
{
    make_dir(sub);
    write_text(sub, "model.json", json);
}

#define ONE_WEIGHT(dtype, extra)                                                                 \
    "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":[]},\"weightsManifest\":[{"           \
    "\"paths\":[\"s.bin\"],\"weights\":[{\"name\":\"wname\",\"shape\":[2],\"dtype\":\"" dtype "\"" \
    extra "}]}]}"

/* ---- string weights ---- */

static size_t put_str(uint8_t *at, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    uint8_t len[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
    memcpy(at, len, 4);
    memcpy(at + 4, s, n);
    return 4 + n;
}

/* A string weight's stored size is walked from its length prefixes, across
 * shard boundaries, and what follows it starts there. */
static void test_string_weights(void **state)
{
    (void)state;
    uint8_t buf[64];
    size_t n = 0;
    n += put_str(buf + n, "ab");
    n += put_str(buf + n, "");
    n += put_str(buf + n, "xyz\xc3\xa9");
    assert_int_equal(n, 19);
    float f[2] = {1.5f, -2.0f};
    memcpy(buf + n, f, sizeof f);
    make_dir("strw");
    write_text("strw", "model.json",
               "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":[]},\"weightsManifest\":[{"
               "\"paths\":[\"a.bin\",\"b.bin\"],\"weights\":["
               "{\"name\":\"s\",\"shape\":[3],\"dtype\":\"string\"},"
               "{\"name\":\"f\",\"shape\":[2],\"dtype\":\"float32\"}]}]}");
    /* the cut falls inside the third string's length prefix */
    write_bytes("strw", "a.bin", buf, 10);
    write_bytes("strw", "b.bin", buf + 10, n + 8 - 10);
    io_model *m = NULL;
    si_error err = {0};
    assert_int_equal(io_model_load(path_in("strw", NULL), &m, &err), SI_OK);
    assert_int_equal(m->weights[0].dtype, IO_DT_STRING);
    assert_int_equal(m->weights[0].nbytes, 19);
    assert_int_equal(m->weights[0].count, 3);
    assert_int_equal(m->weights[1].offset, 19);
    assert_int_equal(m->weights_bytes, 27);
    io_reader *r = NULL;
    assert_int_equal(io_reader_open(m, SI_IO_MMAP, &r, &err), SI_OK);
    uint8_t got[19], vals[8];
    assert_int_equal(io_reader_read(r, 0, got, &err), SI_OK);
    assert_memory_equal(got, buf, 19);
    assert_int_equal(io_reader_read(r, 1, vals, &err), SI_OK);
    assert_memory_equal(vals, f, 8);
    io_reader_close(r);
    io_model_free(m);

    /* hostile shards: a length past the end (also one that would wrap a
     * 32-bit sum), more strings than the bytes could hold, a cut prefix */
    static const struct {
        const char *sub, *shape;
        uint32_t len;
        size_t file;
        const char *why;
    } bad[] = {
        {"strlong", "[2]", 1000, 16, "past the end"},
        {"strwrap", "[2]", 0xffffffffu, 16, "past the end"},
        {"strmany", "[100]", 0, 64, "100 strings"},
        {"strcut", "[2]", 3, 9, "string 1 of 2 runs past the end"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char json[400];
        snprintf(json, sizeof json,
                 "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":[]},\"weightsManifest\":[{"
                 "\"paths\":[\"s.bin\"],\"weights\":[{\"name\":\"wname\",\"shape\":%s,"
                 "\"dtype\":\"string\"}]}]}",
                 bad[i].shape);
        bad_model(bad[i].sub, json);
        uint8_t sh[64] = {0};
        uint32_t l = bad[i].len;
        sh[0] = (uint8_t)l, sh[1] = (uint8_t)(l >> 8), sh[2] = (uint8_t)(l >> 16), sh[3] = (uint8_t)(l >> 24);
        write_bytes(bad[i].sub, "s.bin", sh, bad[i].file);
        char file[64];
        snprintf(file, sizeof file, "%s/model.json", bad[i].sub);
        expect_fail(path_in(bad[i].sub, NULL), SI_ERR_FORMAT, file, "wname", bad[i].why);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    static const uint8_t zeros[64];

    expect_fail(path_in("does-not-exist", NULL), SI_ERR_IO, "does-not-exist", NULL, NULL);
    make_dir("empty_dir");
    expect_fail(path_in("empty_dir", NULL), SI_ERR_IO, "empty_dir/model.json", NULL, NULL);

    bad_model("malformed", "{\"format\": graph-model, \"modelTopology\": {}}");
    expect_fail(path_in("malformed", NULL), SI_ERR_FORMAT, "malformed/model.json", "line 1", NULL);

    size_t half = strlen(attrs_json) / 2;
    char *trunc = strndup(attrs_json, half);
    bad_model("truncated", trunc);
    free(trunc);
    expect_fail(path_in("truncated", NULL), SI_ERR_FORMAT, "truncated/model.json", "truncated?", NULL);

    bad_model("emptyfile", "");
    expect_fail(path_in("emptyfile", NULL), SI_ERR_FORMAT, "emptyfile/model.json", NULL, NULL);

    bad_model("notobj", "[1,2]");
    expect_fail(path_in("notobj", NULL), SI_ERR_FORMAT, "notobj/model.json", NULL, NULL);

    bad_model("layers", "{\"format\":\"layers-model\",\"modelTopology\":{}}");
    expect_fail(path_in("layers", NULL), SI_ERR_UNSUPPORTED, "layers/model.json", "layers-model", NULL);

    /* missing shard: the second one is not there */
    make_weights_model("missing");
    assert_int_equal(unlink(path_in("missing", "group1-shard2of3.bin")), 0);
    expect_fail(path_in("missing", NULL), SI_ERR_IO, "group1-shard2of3.bin", NULL, NULL);

    /* shard shorter than the manifest says */
    make_weights_model("short");
    assert_int_equal(truncate(path_in("short", "group1-shard3of3.bin"), 10), 0);
    char need[32], have[32];
    snprintf(need, sizeof need, "%zu", sizeof g1);
    snprintf(have, sizeof have, "%zu", g1_cut[1] + 10);
    expect_fail(path_in("short", "model.json"), SI_ERR_FORMAT, "group1-shard3of3.bin", need, have);

    /* one weight s.bin whose manifest entry is wrong: the error names the file
     * and the weight (and what is wrong with it where n3) */
    static const struct {
        const char *sub, *json;
        si_result want;
        const char *n3;
    } weight_cases[] = {
        {"dtype", ONE_WEIGHT("float64", ""), SI_ERR_FORMAT, "float64"},
        {"strquant", ONE_WEIGHT("string", ",\"quantization\":{\"dtype\":\"uint8\",\"min\":0,\"scale\":1}"),
         SI_ERR_UNSUPPORTED, "quantized"},
        {"quant", ONE_WEIGHT("float32", ",\"quantization\":{\"dtype\":\"int4\",\"min\":0,\"scale\":1}"),
         SI_ERR_UNSUPPORTED, "int4"},
        {"qnoscale", ONE_WEIGHT("float32", ",\"quantization\":{\"dtype\":\"uint8\",\"min\":0}"),
         SI_ERR_FORMAT, NULL},
        {"f16int", ONE_WEIGHT("int32", ",\"quantization\":{\"dtype\":\"float16\"}"), SI_ERR_UNSUPPORTED,
         NULL},
        {"badshape",
         "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":[]},\"weightsManifest\":[{"
         "\"paths\":[\"s.bin\"],\"weights\":[{\"name\":\"wname\",\"shape\":[2,-1],\"dtype\":\"float32\"}]}]}",
         SI_ERR_FORMAT, NULL},
    };
    for (size_t i = 0; i < sizeof weight_cases / sizeof weight_cases[0]; i++) {
        char file[64];
        snprintf(file, sizeof file, "%s/model.json", weight_cases[i].sub);
        bad_model(weight_cases[i].sub, weight_cases[i].json);
        write_bytes(weight_cases[i].sub, "s.bin", zeros, 64);
        expect_fail(path_in(weight_cases[i].sub, NULL), weight_cases[i].want, file, "wname",
                    weight_cases[i].n3);
    }

    bad_model("badattr", "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":["
                         "{\"name\":\"conv\",\"op\":\"Conv2D\",\"attr\":{\"T\":{\"type\":\"DT_FLOAT\"},"
                         "\"strides\":{\"list\":{\"i\":[\"1\",\"x\"]}}}}]}}");
    expect_fail(path_in("badattr", NULL), SI_ERR_FORMAT, "badattr/model.json", "conv", "strides");

    bad_model("badb64", "{\"modelTopology\":{\"node\":[{\"name\":\"pad\",\"op\":\"Conv2D\","
                        "\"attr\":{\"padding\":{\"s\":\"**\"}}}]}}");
    expect_fail(path_in("badb64", NULL), SI_ERR_FORMAT, "badb64/model.json", "pad", "padding");

    bad_model("init", "{\"modelTopology\":{\"node\":[]},\"modelInitializer\":{\"node\":["
                      "{\"name\":\"t\",\"op\":\"HashTableV2\"}]}}");
    expect_fail(path_in("init", NULL), SI_ERR_UNSUPPORTED, "init/model.json", "modelInitializer", NULL);

    bad_model("noop", "{\"modelTopology\":{\"node\":[{\"name\":\"lonely\"}]}}");
    expect_fail(path_in("noop", NULL), SI_ERR_FORMAT, "noop/model.json", "lonely", NULL);

    bad_model("bigrank", "{\"modelTopology\":{\"node\":[{\"name\":\"p\",\"op\":\"Placeholder\",\"attr\":{"
                         "\"shape\":{\"shape\":{\"dim\":[{},{},{},{},{},{},{}]}}}}]}}");
    expect_fail(path_in("bigrank", NULL), SI_ERR_UNSUPPORTED, "bigrank/model.json", "p", NULL);

    /* io_fail keeps the message to one line */
    si_error err;
    assert_int_equal(base_fail(&err, SI_ERR_SHAPE, "a\nb %d", 3), SI_ERR_SHAPE);
    assert_string_equal(err.message, "a b 3");
    assert_int_equal(base_fail(NULL, SI_ERR_IO, "x"), SI_ERR_IO);
}

/* ---- npy ---- */

static void npy_round_trip(si_dtype dt, int rank, const int64_t *shape, const void *data, size_t bytes)
{
    const char *p = path_in("npy", "rt.npy");
    si_error err = {0};
    assert_int_equal(io_npy_write(p, dt, rank, shape, data, &err), SI_OK);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    assert_int_equal((size_t)size - bytes, ((size_t)size - bytes) / 64 * 64); /* header is 64-aligned */

    si_dtype got_dt;
    int got_rank = -1;
    int64_t got_shape[SI_MAX_RANK];
    void *got = NULL;
    assert_int_equal(io_npy_read(p, &got_dt, &got_rank, got_shape, &got, &err), SI_OK);
    assert_int_equal(got_dt, dt);
    assert_int_equal(got_rank, rank);
    for (int i = 0; i < rank; i++)
        assert_int_equal(got_shape[i], shape[i]);
    if (bytes)
        assert_memory_equal(got, data, bytes);
    free(got);
}

static void write_npy_raw(const char *name, int version, const char *dict, const void *data, size_t len)
{
    uint8_t buf[4096];
    size_t pre = version == 1 ? 10 : 12;
    size_t hl = strlen(dict) + 1;
    hl += (64 - (pre + hl) % 64) % 64;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (uint8_t)version;
    buf[7] = 0;
    buf[8] = (uint8_t)hl;
    buf[9] = (uint8_t)(hl >> 8);
    if (version != 1)
        buf[10] = buf[11] = 0;
    memset(buf + pre, ' ', hl);
    memcpy(buf + pre, dict, strlen(dict));
    buf[pre + hl - 1] = '\n';
    memcpy(buf + pre + hl, data, len);
    write_bytes("npy", name, buf, pre + hl + len);
}

static void test_npy(void **state)
{
    (void)state;
    make_dir("npy");
    const float f[6] = {1.5f, -2.0f, 0.0f, INFINITY, 3.25f, -0.0f};
    const int32_t i[4] = {1, -2, 2147483647, -2147483647 - 1};
    const uint8_t b[5] = {1, 0, 0, 1, 1};
    const int64_t s23[2] = {2, 3}, s4[1] = {4}, s5[3] = {5, 1, 1}, s0[1] = {0};
    npy_round_trip(SI_FLOAT32, 2, s23, f, sizeof f);
    npy_round_trip(SI_INT32, 1, s4, i, sizeof i);
    npy_round_trip(SI_BOOL, 3, s5, b, sizeof b);
    npy_round_trip(SI_FLOAT32, 0, NULL, f, 4);
    npy_round_trip(SI_INT32, 1, s0, NULL, 0);

    /* the header as numpy would read it */
    FILE *fp = fopen(path_in("npy", "rt.npy"), "rb");
    char hdr[129] = {0};
    assert_int_equal(fread(hdr, 1, 128, fp), 128);
    fclose(fp);
    assert_non_null(strstr(hdr + 10, "{'descr': '<i4', 'fortran_order': False, 'shape': (0,), }"));
    npy_round_trip(SI_BOOL, 1, s4, b, 4);
    fp = fopen(path_in("npy", "rt.npy"), "rb");
    assert_int_equal(fread(hdr, 1, 128, fp), 128);
    assert_int_equal(hdr[127], '\n');
    fclose(fp);
    assert_non_null(strstr(hdr + 10, "'descr': '|b1'"));

    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    void *data = NULL;
    si_error err = {0};

    /* version 2.0 with wider types that read as float32 / int32 */
    const double d[3] = {0.5, -1e-3, 1e10};
    write_npy_raw("f8.npy", 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, sizeof d);
    assert_int_equal(io_npy_read(path_in("npy", "f8.npy"), &dt, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(dt, SI_FLOAT32);
    assert_int_equal(rank, 1);
    assert_true(((float *)data)[1] == (float)-1e-3);
    assert_true(((float *)data)[2] == 1e10f);
    free(data);

    const int64_t l[2] = {-5, 2147483647};
    write_npy_raw("i8.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", l, sizeof l);
    assert_int_equal(io_npy_read(path_in("npy", "i8.npy"), &dt, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(dt, SI_INT32);
    assert_int_equal(rank, 2);
    assert_int_equal(((int32_t *)data)[0], -5);
    free(data);

    const uint8_t u[3] = {0, 128, 255};
    write_npy_raw("u1.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", u, sizeof u);
    assert_int_equal(io_npy_read(path_in("npy", "u1.npy"), &dt, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(dt, SI_INT32);
    assert_int_equal(((int32_t *)data)[2], 255);
    free(data);

    struct {
        const char *name, *dict;
        const void *data;
        size_t len;
        si_result want;
    } bad[] = {
        {"fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f, sizeof f, SI_ERR_FORMAT},
        {"i8big.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }",
         (const int64_t[]){INT64_C(1) << 40}, 8, SI_ERR_FORMAT},
        {"short.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", f, sizeof f, SI_ERR_FORMAT},
        {"bigend.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", f, sizeof f, SI_ERR_UNSUPPORTED},
        {"c8.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", f, sizeof f, SI_ERR_UNSUPPORTED},
        {"noshape.npy", "{'descr': '<f4', 'fortran_order': False, }", f, sizeof f, SI_ERR_FORMAT},
        {"rank7.npy", "{'descr': '|b1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1), }", b, 1,
         SI_ERR_UNSUPPORTED},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        write_npy_raw(bad[k].name, 1, bad[k].dict, bad[k].data, bad[k].len);
        data = (void *)1;
        assert_int_equal(io_npy_read(path_in("npy", bad[k].name), &dt, &rank, shape, &data, &err), bad[k].want);
        assert_null(data);
        assert_non_null(strstr(err.message, bad[k].name));
    }
    write_text("npy", "garbage.npy", "hello");
    assert_int_equal(io_npy_read(path_in("npy", "garbage.npy"), &dt, &rank, shape, &data, &err), SI_ERR_FORMAT);
    assert_int_equal(io_npy_read(path_in("npy", "nope.npy"), &dt, &rank, shape, &data, &err), SI_ERR_IO);
    assert_non_null(strstr(err.message, "nope.npy"));
    assert_int_equal(io_npy_write(path_in("no-such-dir", "x.npy"), SI_FLOAT32, 1, s4, f, &err), SI_ERR_IO);
    assert_non_null(strstr(err.message, "x.npy"));
}

/* ---- npy read as a model's dtype ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd64(void)
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return rng_state;
}

/* float16 decoded here from its fields, not with io_half_to_float */
static double half_value(uint16_t h)
{
    int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return sign ? -v : v;
}

enum { NPY_F2, NPY_F4, NPY_F8, NPY_B1, NPY_I1, NPY_U1, NPY_I2, NPY_U2, NPY_I4, NPY_U4, NPY_I8, NPY_U8, NPY_KINDS };
static const struct {
    const char *descr;
    int size, is_float, is_signed;
} npy_kinds[NPY_KINDS] = {
    {"<f2", 2, 1, 1}, {"<f4", 4, 1, 1}, {"<f8", 8, 1, 1}, {"|b1", 1, 0, 0}, {"|i1", 1, 0, 1}, {"|u1", 1, 0, 0},
    {"<i2", 2, 0, 1}, {"<u2", 2, 0, 0}, {"<i4", 4, 0, 1}, {"<u4", 4, 0, 0}, {"<i8", 8, 0, 1}, {"<u8", 8, 0, 0},
};

/* Element i of a file of kind k as what it means: a double for floats (NaN
 * and infinities kept), otherwise an exact integer in a __int128. */
static void npy_elem_value(int k, const uint8_t *p, double *f, __int128 *v)
{
    uint64_t u = 0;
    memcpy(&u, p, (size_t)npy_kinds[k].size);
    int bits = 8 * npy_kinds[k].size;
    if (k == NPY_F2)
        *f = half_value((uint16_t)u);
    else if (k == NPY_F4) {
        float x;
        memcpy(&x, p, 4);
        *f = x;
    } else if (k == NPY_F8)
        memcpy(f, p, 8);
    else if (k == NPY_B1)
        *v = u != 0; /* a bool byte other than 0 is true, 1 as a number */
    else if (npy_kinds[k].is_signed && bits < 64 && (u >> (bits - 1)) & 1)
        *v = (__int128)u - ((__int128)1 << bits);
    else if (npy_kinds[k].is_signed && bits == 64)
        *v = (int64_t)u;
    else
        *v = u;
}

/* Random stored bytes for kind k; wide: any bits (NaN, infinities, values
 * beyond int32), else values every dtype holds. */
static void npy_random(int k, int wide, uint8_t *buf, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t *p = buf + (size_t)i * (size_t)npy_kinds[k].size;
        uint64_t r = rnd64();
        if (k == NPY_B1)
            r = wide ? r & 0xff : r & 1; /* numpy writes 0/1; other bytes are true too */
        else if (!wide && k == NPY_F2)
            r = (r & 0x83ff) | (((r >> 16) % 31) << 10); /* no exponent 31 */
        else if (!wide && k == NPY_F4) {
            float x = (float)((double)(int64_t)r / 4.3e9);
            memcpy(&r, &x, 4);
        } else if (!wide && k == NPY_F8) {
            double x = i % 3 ? (double)(int64_t)r / 4.3e9 : (double)(int64_t)r / 9.3e18;
            memcpy(&r, &x, 8);
        } else if (!wide && npy_kinds[k].size >= 4)
            r = (uint64_t)(int64_t)(int32_t)r & (npy_kinds[k].is_signed ? ~0ull : 0x7fffffffull);
        if (wide && i < 4 && npy_kinds[k].is_float) { /* the non-finite values, for sure */
            double sp[4] = {NAN, INFINITY, -INFINITY, -0.0};
            float spf = (float)sp[i];
            uint16_t sph[4] = {0x7e00, 0x7c00, 0xfc00, 0x8000};
            if (k == NPY_F2) r = sph[i];
            else if (k == NPY_F4) memcpy(&r, &spf, 4);
            else memcpy(&r, &sp[i], 8);
        }
        memcpy(p, &r, (size_t)npy_kinds[k].size);
    }
}

/* What TensorFlow.js makes of one value as dtype want, worked out here from
 * the value itself; returns 0 where int32 cannot hold it. */
static int npy_expect(int k, const uint8_t *p, si_dtype want, uint8_t out[4])
{
    double f = 0;
    __int128 v = 0;
    npy_elem_value(k, p, &f, &v);
    int isf = npy_kinds[k].is_float;
    if (want == SI_BOOL) {
        out[0] = isf ? !(f == 0.0) : v != 0;
        return 1;
    }
    if (want == SI_FLOAT32) {
        /* a JS number first: integers past 2^53 are rounded to a double */
        float x = isf ? (float)f : (float)(double)v;
        memcpy(out, &x, 4);
        if (k == NPY_F4)
            memcpy(out, p, 4); /* the file's bits, NaN payloads too */
        return 1;
    }
    double t = isf ? trunc(f) : 0;
    if (isf && !(isfinite(t) && t >= -2147483648.0 && t <= 2147483647.0))
        return 0;
    if (!isf && (v < INT32_MIN || v > INT32_MAX))
        return 0;
    int32_t x = isf ? (int32_t)(int64_t)t : (int32_t)v;
    memcpy(out, &x, 4);
    return 1;
}

static void check_npy_as(int k, int wide, const uint8_t *raw, int n, const char *name, si_dtype want)
{
    int rank = -1;
    int64_t shape[SI_MAX_RANK];
    void *data = (void *)1;
    si_error err = {0};
    si_result st = si_npy_read_as(path_in("npy", name), want, &rank, shape, &data, &err);
    size_t os = want == SI_BOOL ? 1 : 4;
    uint8_t e[96 * 4];
    assert_true(n <= 96);
    for (int i = 0; i < n; i++)
        if (!npy_expect(k, raw + (size_t)i * (size_t)npy_kinds[k].size, want, e + os * (size_t)i)) {
            char at[48];
            snprintf(at, sizeof at, "at index %d ", i);
            assert_int_equal(st, SI_ERR_FORMAT);
            assert_null(data);
            assert_non_null(strstr(err.message, name));
            assert_non_null(strstr(err.message, at)); /* the first one */
            return;
        }
    if (st != SI_OK)
        fail_msg("%s as %s: %s", name, si_dtype_name(want), err.message);
    for (int i = 0; i < n; i++) {
        float ef = 0, gf = 0;
        if (want == SI_FLOAT32)
            memcpy(&ef, e + 4 * (size_t)i, 4), memcpy(&gf, (uint8_t *)data + 4 * (size_t)i, 4);
        if (want == SI_FLOAT32 && k != NPY_F4 && isnan(ef) && isnan(gf))
            continue; /* a NaN is a NaN: its payload is not a value */
        if (memcmp((uint8_t *)data + os * (size_t)i, e + os * (size_t)i, os))
            fail_msg("%s (%s) as %s, [%d]: bytes differ", name, wide ? "wide" : "narrow", si_dtype_name(want), i);
    }
    assert_int_equal(st, SI_OK);
    assert_int_equal(rank, 2);
    assert_int_equal(shape[0], 4);
    assert_int_equal(shape[1], n / 4);
    free(data);
}

static void test_npy_as(void **state)
{
    (void)state;
    enum { N = 96 };
    uint8_t raw[N * 8];
    const si_dtype wants[3] = {SI_FLOAT32, SI_INT32, SI_BOOL};
    for (int k = 0; k < NPY_KINDS; k++)
        for (int wide = 0; wide < 2; wide++) {
            npy_random(k, wide, raw, N);
            char name[32], dict[96];
            snprintf(name, sizeof name, "as_%s_%d.npy", npy_kinds[k].descr + 1, wide);
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (4, %d), }",
                     npy_kinds[k].descr, N / 4);
            write_npy_raw(name, 1, dict, raw, (size_t)N * (size_t)npy_kinds[k].size);
            for (int w = 0; w < 3; w++)
                check_npy_as(k, wide, raw, N, name, wants[w]);
            /* si_npy_read gives the file's own kind: what read_as gives for it */
            si_dtype dt, nat = k == NPY_B1 ? SI_BOOL : npy_kinds[k].is_float ? SI_FLOAT32 : SI_INT32;
            int rank;
            int64_t shape[SI_MAX_RANK];
            void *a = NULL, *b = NULL;
            si_error err = {0};
            si_result s1 = si_npy_read(path_in("npy", name), &dt, &rank, shape, &a, &err);
            si_result s2 = si_npy_read_as(path_in("npy", name), nat, &rank, shape, &b, &err);
            assert_int_equal(s1, s2);
            if (s1 == SI_OK) {
                assert_int_equal(dt, nat);
                assert_memory_equal(a, b, N * si_dtype_size(nat));
            }
            if (!wide)
                assert_int_equal(s1, SI_OK);
            free(a), free(b);
        }

    /* the edges, values TensorFlow.js gives (node, tfjs-core 4: tf.tensor([-2.7], [1], 'int32')
     * is -2; Math.fround(Number(2n**54n + 2n**30n + 1n)) is 2**54, not 2**54 + 2**31) */
    int rank;
    int64_t shape[SI_MAX_RANK];
    void *data = NULL;
    si_error err = {0};
    const double d[4] = {-2147483648.9, 2147483647.9, -2.7, 1e39};
    write_npy_raw("edge_f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", d, sizeof d);
    assert_int_equal(si_npy_read_as(path_in("npy", "edge_f8.npy"), SI_FLOAT32, &rank, shape, &data, &err), SI_OK);
    assert_true(((float *)data)[3] == INFINITY);
    free(data);
    assert_int_equal(si_npy_read_as(path_in("npy", "edge_f8.npy"), SI_INT32, &rank, shape, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "float64 value 1e+39 at index 3 cannot be represented as int32"));
    write_npy_raw("edge3_f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, 3 * 8);
    assert_int_equal(si_npy_read_as(path_in("npy", "edge3_f8.npy"), SI_INT32, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(((int32_t *)data)[0], INT32_MIN);
    assert_int_equal(((int32_t *)data)[1], INT32_MAX);
    assert_int_equal(((int32_t *)data)[2], -2);
    free(data);
    const int64_t l[2] = {(INT64_C(1) << 54) + (INT64_C(1) << 30) + 1, INT64_C(1) << 31};
    write_npy_raw("edge_i8.npy", 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", l, sizeof l);
    assert_int_equal(si_npy_read_as(path_in("npy", "edge_i8.npy"), SI_FLOAT32, &rank, shape, &data, &err), SI_OK);
    assert_true(((float *)data)[0] == 18014398509481984.0f);
    free(data);
    assert_int_equal(si_npy_read_as(path_in("npy", "edge_i8.npy"), SI_INT32, &rank, shape, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "edge_i8.npy: int64 value 18014399583223809 at index 0"));
    const uint16_t h[2] = {0x3c00, 0x7e00}; /* 1, NaN */
    write_npy_raw("edge_f2.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", h, sizeof h);
    assert_int_equal(si_npy_read_as(path_in("npy", "edge_f2.npy"), SI_BOOL, &rank, shape, &data, &err), SI_OK);
    assert_int_equal(((uint8_t *)data)[1], 1); /* NaN != 0 */
    free(data);
    assert_int_equal(si_npy_read_as(path_in("npy", "edge_f2.npy"), SI_INT32, &rank, shape, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "float16 value nan at index 1"));
    data = (void *)1;
    assert_int_equal(si_npy_read_as(path_in("npy", "edge_f2.npy"), (si_dtype)9, &rank, shape, &data, &err), SI_ERR_ARG);
    assert_null(data);
    assert_non_null(strstr(err.message, "edge_f2.npy"));
    assert_int_equal(si_npy_read_as(path_in("npy", "nope.npy"), SI_FLOAT32, &rank, shape, &data, &err), SI_ERR_IO);
}

/* ---- image ---- */

static si_result read_img(const char *path, int h, int w, si_dtype dt, void **data, si_error *err)
{
    return si_image_read(path, &h, &w, dt, data, err);
}

/* tf.image.resizeBilinear with its defaults, in double: the expectation. */
static double tf_bilinear(const uint8_t *px, int ih, int iw, int oh, int ow, int y, int x, int c)
{
    double sy = y * ((double)ih / oh), sx = x * ((double)iw / ow);
    int y0 = (int)sy, x0 = (int)sx;
    int y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
    double fy = sy - y0, fx = sx - x0;
#define PX(yy, xx) px[((yy) * iw + (xx)) * 3 + c]
    double top = PX(y0, x0) + (PX(y0, x1) - PX(y0, x0)) * fx;
    double bot = PX(y1, x0) + (PX(y1, x1) - PX(y1, x0)) * fx;
#undef PX
    return top + (bot - top) * fy;
}

static void test_image(void **state)
{
    (void)state;
    make_dir("img");
    enum { W = 4, H = 2 };
    uint8_t px[H * W * 3];
    for (int k = 0; k < H * W * 3; k++)
        px[k] = (uint8_t)(k * 10);
    assert_true(stbi_write_png(path_in("img", "a.png"), W, H, 3, px, W * 3));
    si_error err = {0};
    void *data = NULL;

    /* io decodes at the image's own size */
    int h0 = 0, w0 = 0;
    unsigned char *rgb = NULL;
    assert_int_equal(io_image_decode(path_in("img", "a.png"), &h0, &w0, &rgb, &err), SI_OK);
    assert_int_equal(h0, H);
    assert_int_equal(w0, W);
    assert_memory_equal(rgb, px, sizeof px);
    free(rgb);

    assert_int_equal(read_img(path_in("img", "a.png"), H, W, SI_INT32, &data, &err), SI_OK);
    for (int k = 0; k < H * W * 3; k++)
        assert_int_equal(((int32_t *)data)[k], px[k]);
    free(data);

    assert_int_equal(read_img(path_in("img", "a.png"), H, W, SI_FLOAT32, &data, &err), SI_OK);
    for (int k = 0; k < H * W * 3; k++)
        assert_true(((float *)data)[k] == px[k] / 255.0f);
    free(data);

    /* A flat colour stays flat whatever the size. */
    uint8_t flat[H * W * 3];
    for (int k = 0; k < H * W * 3; k++)
        flat[k] = (uint8_t)(k % 3 == 0 ? 200 : k % 3 == 1 ? 100 : 7);
    assert_true(stbi_write_png(path_in("img", "flat.png"), W, H, 3, flat, W * 3));
    assert_int_equal(read_img(path_in("img", "flat.png"), 5, 9, SI_INT32, &data, &err), SI_OK);
    for (int k = 0; k < 5 * 9 * 3; k++)
        assert_int_equal(((int32_t *)data)[k], flat[k % 3]);
    free(data);

    /* Fitting is tf.image.resizeBilinear's, up and down at once; 7 wide, 21
     * high to 31x17 made stb_image_resize abort on an assertion. */
    enum { IW = 7, IH = 21, OW = 31, OH = 17 };
    uint8_t g[IH * IW * 3];
    for (int k = 0; k < IH * IW * 3; k++)
        g[k] = (uint8_t)((k * 37 + (k / 5) * 11) & 255);
    assert_true(stbi_write_png(path_in("img", "g.png"), IW, IH, 3, g, IW * 3));
    assert_int_equal(read_img(path_in("img", "g.png"), OH, OW, SI_FLOAT32, &data, &err), SI_OK);
    for (int y = 0; y < OH; y++)
        for (int x = 0; x < OW; x++)
            for (int c = 0; c < 3; c++) {
                double want = tf_bilinear(g, IH, IW, OH, OW, y, x, c) / 255.0;
                double got = ((float *)data)[(y * OW + x) * 3 + c];
                if (got < want - 1e-5 || got > want + 1e-5)
                    fail_msg("(%d,%d,%d): %g, expected %g", y, x, c, got, want);
            }
    free(data);
    assert_int_equal(read_img(path_in("img", "g.png"), OH, OW, SI_INT32, &data, &err), SI_OK);
    assert_int_equal(((int32_t *)data)[3 * OW * 5 + 3 * 7 + 1],
                     (int32_t)tf_bilinear(g, IH, IW, OH, OW, 5, 7, 1)); /* cut as tf.cast */
    free(data);

    data = (void *)1;
    assert_int_equal(read_img(path_in("img", "none.png"), 2, 2, SI_FLOAT32, &data, &err), SI_ERR_IO);
    assert_null(data);
    assert_non_null(strstr(err.message, "none.png"));
    write_text("img", "text.png", "not an image at all");
    assert_int_equal(read_img(path_in("img", "text.png"), 2, 2, SI_FLOAT32, &data, &err), SI_ERR_FORMAT);
    assert_non_null(strstr(err.message, "text.png"));
    assert_int_equal(read_img(path_in("img", "a.png"), -1, 2, SI_FLOAT32, &data, &err), SI_ERR_ARG);
    /* 0 keeps the image's own size */
    h0 = 0, w0 = 0;
    assert_int_equal(si_image_read(path_in("img", "a.png"), &h0, &w0, SI_INT32, &data, &err), SI_OK);
    assert_int_equal(h0, H);
    assert_int_equal(w0, W);
    free(data);
    assert_int_equal(read_img(path_in("img", "a.png"), 2, 2, SI_BOOL, &data, &err), SI_ERR_ARG);
}

/* ---- images read with channels and a fit ---- */

/* tf.image.resizeBilinear's defaults in double, on c channels */
static double tf_bilinear_c(const int32_t *px, int c, int ih, int iw, int oh, int ow, int y, int x, int k)
{
    double sy = y * ((double)ih / oh), sx = x * ((double)iw / ow);
    int y0 = (int)sy, x0 = (int)sx;
    int y1 = y0 + 1 < ih ? y0 + 1 : ih - 1, x1 = x0 + 1 < iw ? x0 + 1 : iw - 1;
    double fy = sy - y0, fx = sx - x0;
#define PX(yy, xx) px[((yy) * iw + (xx)) * c + k]
    double top = PX(y0, x0) + (PX(y0, x1) - PX(y0, x0)) * fx;
    double bot = PX(y1, x0) + (PX(y1, x1) - PX(y1, x0)) * fx;
#undef PX
    return top + (bot - top) * fy;
}

/* sc-channel pixels as dc channels, the test's own way: gray from RGB as
 * tfjs's rgbToGrayscale computes it (einsum: products in float32, their sum
 * in a JS number, stored as float32; then cast to int32) */
static void ref_channels(const uint8_t *px, int n, int sc, int dc, int32_t *out)
{
    for (int i = 0; i < n; i++) {
        const uint8_t *p = px + i * sc;
        int32_t *o = out + i * dc;
        if (dc == 1) {
            double sum = sc < 3 ? p[0]
                                : (double)(float)(p[0] * (double)0.2989f) + (double)(float)(p[1] * (double)0.5870f) +
                                      (double)(float)(p[2] * (double)0.1140f);
            o[0] = (int32_t)(float)sum;
            continue;
        }
        for (int k = 0; k < 3; k++)
            o[k] = sc < 3 ? p[0] : p[k];
        if (dc == 4)
            o[3] = sc == 2 || sc == 4 ? p[sc - 1] : 255;
    }
}

static void test_image_channels(void **state)
{
    (void)state;
    make_dir("imgc");
    enum { W = 7, H = 5 };
    uint8_t px[4][H * W * 4];
    char name[4][16];
    for (int sc = 1; sc <= 4; sc++) {
        for (int k = 0; k < H * W * sc; k++)
            px[sc - 1][k] = (uint8_t)rnd64();
        snprintf(name[sc - 1], sizeof name[0], "c%d.png", sc);
        assert_true(stbi_write_png(path_in("imgc", name[sc - 1]), W, H, sc, px[sc - 1], W * sc));
    }
    si_error err = {0};
    for (int sc = 1; sc <= 4; sc++)
        for (int dc = 1; dc <= 4; dc += dc == 1 ? 2 : 1) {
            int h = 0, w = 0;
            void *data = NULL;
            si_image_info info;
            assert_int_equal(si_image_read_as(path_in("imgc", name[sc - 1]), &h, &w, dc, SI_INT32, SI_FIT_STRETCH,
                                              &data, &info, &err), SI_OK);
            assert_int_equal(h, H);
            assert_int_equal(w, W);
            assert_int_equal(info.src_channels, sc);
            assert_int_equal(info.channels, dc);
            int32_t want[H * W * 4];
            ref_channels(px[sc - 1], H * W, sc, dc, want);
            assert_memory_equal(data, want, (size_t)H * W * dc * 4);
            if (dc == 3) { /* stb's own conversion to RGB, si_image_read's before */
                unsigned char *rgb = NULL;
                int h0, w0;
                assert_int_equal(io_image_decode(path_in("imgc", name[sc - 1]), &h0, &w0, &rgb, &err), SI_OK);
                for (int k = 0; k < H * W * 3; k++)
                    assert_int_equal(((int32_t *)data)[k], rgb[k]);
                free(rgb);
                void *old = NULL;
                assert_int_equal(si_image_read(path_in("imgc", name[sc - 1]), &h, &w, SI_INT32, &old, &err), SI_OK);
                assert_memory_equal(old, data, (size_t)H * W * 3 * 4);
                free(old);
            }
            free(data);
        }
    /* every gray level rgbToGrayscale can give, on a ramp */
    uint8_t ramp[64 * 3];
    for (int i = 0; i < 64 * 3; i++)
        ramp[i] = (uint8_t)(i * 4 + i / 3);
    assert_true(stbi_write_png(path_in("imgc", "ramp.png"), 64, 1, 3, ramp, 64 * 3));
    int h = 0, w = 0;
    void *data = NULL;
    assert_int_equal(si_image_read_as(path_in("imgc", "ramp.png"), &h, &w, 1, SI_INT32, SI_FIT_STRETCH, &data, NULL,
                                      &err), SI_OK);
    int32_t want[64];
    ref_channels(ramp, 64, 3, 1, want);
    assert_memory_equal(data, want, sizeof want);
    free(data);
    assert_int_equal(si_image_read_as(path_in("imgc", "c3.png"), &h, &w, 2, SI_INT32, SI_FIT_STRETCH, &data, NULL,
                                      &err), SI_ERR_ARG);
    assert_non_null(strstr(err.message, "c3.png"));
    assert_int_equal(si_image_read_as(path_in("imgc", "c3.png"), &h, &w, 3, SI_INT32, (si_fit)7, &data, NULL, &err),
                     SI_ERR_ARG);
    assert_null(data);
}

/* The result of one fit against the test's own geometry and resize. */
static void check_fit(const char *path, const uint8_t *px, int sc, int h0, int w0, int H, int W, int dc, si_fit fit)
{
    int32_t src[16 * 16 * 4];
    ref_channels(px, h0 * w0, sc, dc, src);
    /* the resized size: the scale that fits (FIT) or covers (CROP), to the nearest pixel */
    double s = fit == SI_FIT_FIT ? fmin((double)H / h0, (double)W / w0) : fmax((double)H / h0, (double)W / w0);
    int rh = H, rw = W;
    if (fit != SI_FIT_STRETCH && (double)W / w0 == s)
        rh = (int)lround((double)h0 * W / w0);
    else if (fit != SI_FIT_STRETCH)
        rw = (int)lround((double)w0 * H / h0);
    rh = rh < 1 ? 1 : rh, rw = rw < 1 ? 1 : rw;
    int dy = fit == SI_FIT_FIT ? (H - rh) / 2 : fit == SI_FIT_CROP ? -((rh - H) / 2) : 0;
    int dx = fit == SI_FIT_FIT ? (W - rw) / 2 : fit == SI_FIT_CROP ? -((rw - W) / 2) : 0;
    int h = H, w = W;
    void *data = NULL;
    si_image_info info;
    si_error err = {0};
    assert_int_equal(si_image_read_as(path, &h, &w, dc, SI_FLOAT32, fit, &data, &info, &err), SI_OK);
    assert_int_equal(info.resized_height, rh);
    assert_int_equal(info.resized_width, rw);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int k = 0; k < dc; k++) {
                int iy = y - dy, ix = x - dx; /* in the resized image */
                double want = iy < 0 || iy >= rh || ix < 0 || ix >= rw
                                  ? 0 : tf_bilinear_c(src, dc, h0, w0, rh, rw, iy, ix, k) / 255.0;
                double got = ((float *)data)[(y * W + x) * dc + k];
                if (!(fabs(got - want) <= 1e-5))
                    fail_msg("%dx%d to %dx%d fit %d, (%d,%d,%d): %g, expected %g", w0, h0, W, H, (int)fit, y, x, k, got,
                             want);
            }
    free(data);
}

static void test_image_fit(void **state)
{
    (void)state;
    make_dir("imgf");
    uint8_t px[16 * 16 * 4];
    for (size_t k = 0; k < sizeof px; k++)
        px[k] = (uint8_t)rnd64();
    /* 8 wide, 4 high into 6x6; 3 wide, 9 high into 4x4: the geometry by hand */
    assert_true(stbi_write_png(path_in("imgf", "wide.png"), 8, 4, 4, px, 8 * 4));
    assert_true(stbi_write_png(path_in("imgf", "tall.png"), 3, 9, 3, px, 3 * 3));
    const struct {
        const char *name;
        int H, W, dc;
        si_fit fit;
        const char *how;
    } cases[] = {
        {"wide.png", 6, 6, 3, SI_FIT_FIT, "8x4 RGBA -> 6x6 RGB, fit: resized to 6x3, at rows 1..3, the rest 0"},
        {"wide.png", 6, 6, 4, SI_FIT_CROP, "8x4 RGBA -> 6x6 RGBA, crop: resized to 12x6, columns 3..8 kept"},
        {"wide.png", 6, 6, 1, SI_FIT_STRETCH, "8x4 RGBA -> 6x6 gray, stretch: resized to 6x6"},
        {"tall.png", 4, 4, 3, SI_FIT_FIT, "3x9 RGB -> 4x4 RGB, fit: resized to 1x4, at columns 1..1, the rest 0"},
        {"tall.png", 4, 4, 3, SI_FIT_CROP, "3x9 RGB -> 4x4 RGB, crop: resized to 4x12, rows 4..7 kept"},
        {"tall.png", 18, 6, 3, SI_FIT_FIT, "3x9 RGB -> 6x18 RGB, fit: resized to 6x18"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int h = cases[i].H, w = cases[i].W;
        void *data = NULL;
        si_image_info info;
        si_error err = {0};
        assert_int_equal(si_image_read_as(path_in("imgf", cases[i].name), &h, &w, cases[i].dc, SI_INT32, cases[i].fit,
                                          &data, &info, &err), SI_OK);
        free(data);
        char how[160];
        assert_int_equal(si_image_info_format(&info, how, sizeof how), (int)strlen(cases[i].how));
        assert_string_equal(how, cases[i].how);
        int wide = cases[i].name[0] == 'w';
        check_fit(path_in("imgf", cases[i].name), px, wide ? 4 : 3, wide ? 4 : 9, wide ? 8 : 3, cases[i].H, cases[i].W,
                  cases[i].dc, cases[i].fit);
    }
    /* a strip 64 wide, 1 high cropped to 1024x1024 would be resized to 65536x1024 */
    assert_true(stbi_write_png(path_in("imgf", "strip.png"), 64, 1, 3, px, 64 * 3));
    int h = 1024, w = 1024;
    void *data = (void *)1;
    si_error err = {0};
    assert_int_equal(si_image_read_as(path_in("imgf", "strip.png"), &h, &w, 3, SI_FLOAT32, SI_FIT_CROP, &data, NULL,
                                      &err), SI_ERR_ARG);
    assert_null(data);
    assert_non_null(strstr(err.message, "strip.png: fitting 64x1 to 1024x1024 by cropping resizes it to 65536x1024"));
    assert_int_equal(si_image_read_as(path_in("imgf", "strip.png"), &h, &w, 3, SI_FLOAT32, SI_FIT_FIT, &data, NULL,
                                      &err), SI_OK);
    assert_true(((float *)data)[0] == 0.0f && ((float *)data)[3 * 1024 * 512] == px[0] / 255.0f);
    free(data);
    /* random sizes, channels and modes */
    for (int t = 0; t < 40; t++) {
        int h0 = 1 + (int)(rnd64() % 16), w0 = 1 + (int)(rnd64() % 16), sc = 1 + (int)(rnd64() % 4);
        int H = 1 + (int)(rnd64() % 12), W = 1 + (int)(rnd64() % 12), dc = (int)(rnd64() % 3);
        dc = dc == 0 ? 1 : dc + 2;
        assert_true(stbi_write_png(path_in("imgf", "r.png"), w0, h0, sc, px, w0 * sc));
        check_fit(path_in("imgf", "r.png"), px, sc, h0, w0, H, W, dc, (si_fit)(t % 3));
    }
}

/* base_copy (a run's input into the mapped pool): every byte where memcpy puts
 * it, none outside, for sizes around its split points and odd offsets; and from
 * several threads at once (one gets the workers, the others copy alone). */
typedef struct {
    unsigned seed;
    int fails;
} copy_job;

static int copy_check(unsigned *seed, size_t n, size_t off, int nt)
{
    unsigned char *src = calloc(n + off + 64, 1), *dst = malloc(n + off + 64);
    if (!src || !dst) {
        free(src);
        free(dst);
        return 1;
    }
    for (size_t i = 0; i < n + off + 64; i++) {
        src[i] = (unsigned char)rand_r(seed);
        dst[i] = 0xA5;
    }
    base_copy(dst + off, src + off, n, nt);
    int bad = memcmp(dst + off, src + off, n) != 0;
    for (size_t i = 0; i < off; i++)
        bad |= dst[i] != 0xA5;
    for (size_t i = n + off; i < n + off + 64; i++)
        bad |= dst[i] != 0xA5;
    free(src);
    free(dst);
    return bad;
}

static void *copy_thread(void *arg)
{
    copy_job *j = arg;
    for (int t = 0; t < 12; t++)
        j->fails += copy_check(&j->seed, (size_t)(rand_r(&j->seed) % (3 << 20)), (size_t)(rand_r(&j->seed) % 61), t & 1);
    return NULL;
}

static void *copy_thread_none(void *arg) { return arg; }

static void test_base_copy(void **state)
{
    (void)state;
    unsigned seed = 11;
    const size_t sizes[] = {0, 1, 63, 4096, (512 << 10) - 1, 512 << 10, (512 << 10) + 1, (1 << 20) + 7,
                            (2 << 20) + 4095, (8 << 20) + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (size_t off = 0; off < 3; off++)
            for (int nt = 0; nt < 2; nt++)
                assert_int_equal(copy_check(&seed, sizes[i], off * 29, nt), 0);
    for (int t = 0; t < 40; t++)
        assert_int_equal(copy_check(&seed, (size_t)(rand_r(&seed) % (5 << 20)), (size_t)(rand_r(&seed) % 100), t & 1), 0);
    enum { T = 4 };
    pthread_t th[T];
    copy_job jobs[T];
    for (int i = 0; i < T; i++) {
        jobs[i] = (copy_job){(unsigned)(100 + i), 0};
        assert_int_equal(pthread_create(&th[i], NULL, copy_thread, &jobs[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].fails, 0);
    }
}

/* The threads in this process (/proc/self/task), or -1. */
static int task_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* In a child: 0 when a large copy is right and made `made` threads (-1: any
 * number above none); what went wrong otherwise. */
static int child_copy(int made)
{
    unsigned seed = 5;
    int before = task_count();
    if (copy_check(&seed, (3 << 20) + 11, 7, 1) || copy_check(&seed, (1 << 20) + 1, 0, 0))
        return 2;
    int after = task_count();
    if (before < 0 || after < 0)
        return 3;
    if (made < 0 ? after <= before : after != before + made)
        return 4;
    return 0;
}

static int wait_child(pid_t pid)
{
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* base_copy where no thread can be made copies alone, and right; and a fork's
 * child, which has none of its parent's workers, makes its own (the pid
 * check) instead of handing chunks to threads that are not there, which would
 * hang it. */
static void test_base_copy_threads(void **state)
{
    (void)state;
    /* the parent's workers exist before the forks */
    unsigned seed = 3;
    assert_int_equal(copy_check(&seed, 2 << 20, 0, 1), 0);

    pid_t pid = fork();
    if (pid == 0) {
        /* no thread can be made: root's processes ignore RLIMIT_NPROC, so
         * the child first becomes nobody */
        if (geteuid() == 0 && setuid(65534))
            _exit(10);
        struct rlimit rl = {1, 1};
        if (setrlimit(RLIMIT_NPROC, &rl))
            _exit(11);
        pthread_t t;
        if (pthread_create(&t, NULL, copy_thread_none, NULL) == 0)
            _exit(12); /* the limit did not hold: the test would prove nothing */
        _exit(child_copy(0));
    }
    int rc = wait_child(pid);
    /* 10-12: this machine cannot forbid threads (no user to become, or the
     * limit is not enforced); the fork case below still runs */
    if (rc >= 10 && rc <= 12)
        fprintf(stderr, "test_base_copy_threads: no thread could be forbidden here (%d): the copy alone not tried\n", rc);
    else
        assert_int_equal(rc, 0);

    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    pid = fork();
    if (pid == 0) {
        alarm(60); /* a child waiting on workers it does not have would hang */
        _exit(child_copy(cpus >= 2 ? -1 : 0));
    }
    assert_int_equal(wait_child(pid), 0);
}

/* base_digest (the plan cache's keys: a model's bytes): the same bytes give
 * the same digest; a bit flipped anywhere (the four-lane body or the tail), two
 * lanes' words swapped throughout, or zeros of another length give another. */
static int digest_same(const base_digest *x, const base_digest *y) { return x->a == y->a && x->b == y->b; }

static void test_digest(void **state)
{
    (void)state;
    enum { N = 10007 };
    unsigned char *buf = malloc(N);
    assert_non_null(buf);
    srand(7);
    for (int i = 0; i < N; i++)
        buf[i] = (unsigned char)rand();
    base_digest d0 = {0}, d1 = {0};
    base_digest_add(&d0, buf, N);
    base_digest_add(&d1, buf, N);
    assert_true(digest_same(&d0, &d1));
    for (int t = 0; t < 400; t++) {
        int at = t < 16 ? N - 1 - t : rand() % N, bit = rand() % 8;
        buf[at] ^= (unsigned char)(1 << bit);
        base_digest d = {0};
        base_digest_add(&d, buf, N);
        assert_false(digest_same(&d, &d0));
        buf[at] ^= (unsigned char)(1 << bit);
    }
    for (int w = 0; w < 3; w++) { /* lanes w and w + 1 swapped: words w, w + 1 of every 32 bytes */
        unsigned char *sw = malloc(N);
        assert_non_null(sw);
        memcpy(sw, buf, N);
        for (int at = 0; at + 32 <= N; at += 32) {
            memcpy(sw + at + 8 * w, buf + at + 8 * (w + 1), 8);
            memcpy(sw + at + 8 * (w + 1), buf + at + 8 * w, 8);
        }
        base_digest d = {0};
        base_digest_add(&d, sw, N);
        assert_false(digest_same(&d, &d0));
        free(sw);
    }
    memset(buf, 0, N);
    base_digest z[130];
    for (int n = 0; n < 130; n++) {
        z[n] = (base_digest){0};
        base_digest_add(&z[n], buf, (size_t)n * 7);
        for (int m = 0; m < n; m++)
            assert_false(digest_same(&z[n], &z[m]));
    }
    free(buf);
}

/* io_floats_to_halves (F16C where the CPU has it: a model's inputs at f16, every
 * run) bit for bit io_float_to_half, apart and in place, on random bit patterns
 * (NaNs, infinities, subnormals, ties), lengths that leave a tail; and
 * io_float_to_half against the compiler's _Float16 where there is one. */
static void test_floats_to_halves(void **state)
{
    (void)state;
    enum { N = (1 << 18) + 5 };
    uint32_t *f = malloc(N * 4), *g = malloc(N * 4);
    uint16_t *h = malloc(N * 2);
    assert_non_null(f);
    assert_non_null(g);
    assert_non_null(h);
    const uint32_t special[] = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u,
                                0xffbfffffu, 0x477fe000u, 0x477fefffu, 0x477ff000u, 0x33800000u,
                                0x33000000u, 0x33000001u, 0x387fc000u, 0x38800000u, 0x3f801000u,
                                0x3f803000u, 0x00000001u, 0x807fffffu};
    for (int t = 0; t < 3; t++) {
        int n = t == 0 ? N : t == 1 ? 13 : 7;
        for (int i = 0; i < n; i++) {
            uint32_t r = (uint32_t)rnd64();
            /* near halves' rounding points half the time: the low 13 bits 0x1000 */
            f[i] = i < (int)(sizeof special / sizeof *special) ? special[i] : (i & 1) ? r : (r & ~0x1fffu) | 0x1000u;
        }
        memcpy(g, f, (size_t)n * 4);
        io_floats_to_halves(h, f, n);
        io_floats_to_halves(g, g, n); /* in place */
        for (int i = 0; i < n; i++) {
            float x;
            memcpy(&x, &f[i], 4);
            uint16_t want = io_float_to_half(x), in_place;
            memcpy(&in_place, (uint8_t *)g + 2 * i, 2);
            if (h[i] != want || in_place != want)
                fail_msg("%08x: %04x, in place %04x, want %04x", f[i], h[i], in_place, want);
#ifdef __FLT16_MAX__
            if (x == x) {
                _Float16 c = (_Float16)x;
                uint16_t cb;
                memcpy(&cb, &c, 2);
                if (cb != want)
                    fail_msg("%08x: io_float_to_half %04x, _Float16 %04x", f[i], want, cb);
            }
#endif
        }
    }
    free(f);
    free(g);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_floats_to_halves),
        cmocka_unit_test(test_digest),
        cmocka_unit_test(test_base_copy),
        cmocka_unit_test(test_base_copy_threads),
        cmocka_unit_test(test_attrs),
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_string_weights),
        cmocka_unit_test(test_npy),
        cmocka_unit_test(test_npy_as),
        cmocka_unit_test(test_image),
        cmocka_unit_test(test_image_channels),
        cmocka_unit_test(test_image_fit),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
