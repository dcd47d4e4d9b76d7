/* Tiny graph models written as model.json files for tests (no weights: every
 * Const is inline). Include once per test program. */
#ifndef SI_TESTS_TINY_MODEL_H
#define SI_TESTS_TINY_MODEL_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmp_root[] = "/tmp/si-tiny-XXXXXX";

typedef struct {
    char *buf;
    size_t len, cap;
    int n;
} jb;

static inline void jb_add(jb *j, const char *fmt, ...)
{
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(k > 0 && k < (int)sizeof tmp);
    if (j->len + (size_t)k + 2 > j->cap) {
        j->cap = (j->len + (size_t)k + 2) * 2;
        j->buf = realloc(j->buf, j->cap);
        assert_non_null(j->buf);
    }
    if (j->n++)
        j->buf[j->len++] = ',';
    memcpy(j->buf + j->len, tmp, (size_t)k + 1);
    j->len += (size_t)k;
}

static inline void node(jb *j, const char *name, const char *op, const char *ins, const char *attrs)
{
    jb_add(j, "{\"name\":\"%s\",\"op\":\"%s\",\"input\":[%s],\"attr\":{%s}}", name, op, ins,
           attrs ? attrs : "");
}

/* Writes a hand-written model (or any text) to path; fails the test where it cannot. */
static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static inline const char *write_model(jb *j, const char *file)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", tmp_root, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"format\":\"graph-model\",\"modelTopology\":{\"node\":[%s]},\"weightsManifest\":[]}",
            j->buf ? j->buf : "");
    fclose(f);
    free(j->buf);
    memset(j, 0, sizeof *j);
    return path;
}

/* A float32 Placeholder of the given dims. */
static inline void placeholder_f32(jb *j, const char *name, const int *dims, int rank)
{
    char a[512] = "\"dtype\":{\"type\":\"DT_FLOAT\"},\"shape\":{\"shape\":{\"dim\":[";
    for (int i = 0; i < rank; i++)
        snprintf(a + strlen(a), sizeof a - strlen(a), "%s{\"size\":\"%d\"}", i ? "," : "", dims[i]);
    snprintf(a + strlen(a), sizeof a - strlen(a), "]}}");
    node(j, name, "Placeholder", "", a);
}

/* Scalar inline constants: a DTYPE Const whose FIELD (intVal, floatVal) holds VAL. */
static inline void const_scalar(jb *j, const char *name, const char *dtype, const char *field,
                                const char *val)
{
    char a[200];
    snprintf(a, sizeof a,
             "\"dtype\":{\"type\":\"%s\"},\"value\":{\"tensor\":{\"dtype\":\"%s\","
             "\"tensorShape\":{},\"%s\":[%s]}}", dtype, dtype, field, val);
    node(j, name, "Const", "", a);
}

static inline void const_i(jb *j, const char *name, int v)
{
    char val[16];
    snprintf(val, sizeof val, "%d", v);
    const_scalar(j, name, "DT_INT32", "intVal", val);
}

static inline void const_f(jb *j, const char *name, float v)
{
    char val[32];
    snprintf(val, sizeof val, "%.9g", v);
    const_scalar(j, name, "DT_FLOAT", "floatVal", val);
}

static inline void tiny_rm_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
}

/* A cmocka group's setup and teardown: tmp_root made, then removed. */
static inline int tiny_setup(void **state)
{
    (void)state;
    return mkdtemp(tmp_root) ? 0 : -1;
}

static inline int tiny_teardown(void **state)
{
    (void)state;
    tiny_rm_tmp();
    return 0;
}

/* x[-1,3] -> Enter -> Exit -> Mul(q) -> Relu, written as tmp_root/staged.json:
 * the part after the Exit (a frame: the host interpreter) is a later GPU stage
 * unless stages are off. */
static inline const char *staged_model(void)
{
    jb j = {0};
    node(&j, "x", "Placeholder", "",
         "\"dtype\":{\"type\":\"DT_FLOAT\"},\"shape\":{\"shape\":{\"dim\":[{\"size\":\"-1\"},"
         "{\"size\":\"3\"}]}}");
    node(&j, "q", "Const", "",
         "\"dtype\":{\"type\":\"DT_FLOAT\"},\"value\":{\"tensor\":{\"dtype\":\"DT_FLOAT\","
         "\"tensorShape\":{\"dim\":[{\"size\":\"3\"}]},\"floatVal\":[2,-1,0.5]}}");
    node(&j, "s", "Enter", "\"x\"", "\"T\":{\"type\":\"DT_FLOAT\"},\"frame_name\":{\"s\":\"Zg==\"}");
    node(&j, "e", "Exit", "\"s\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "m", "Mul", "\"e\",\"q\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    node(&j, "y", "Relu", "\"m\"", "\"T\":{\"type\":\"DT_FLOAT\"}");
    return write_model(&j, "staged.json");
}

#endif
