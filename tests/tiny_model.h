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
    char tmp[1024];
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

/* Scalar inline constants. */
static inline void const_i(jb *j, const char *name, int v)
{
    char a[200];
    snprintf(a, sizeof a,
             "\"dtype\":{\"type\":\"DT_INT32\"},\"value\":{\"tensor\":{\"dtype\":\"DT_INT32\","
             "\"tensorShape\":{},\"intVal\":[%d]}}", v);
    node(j, name, "Const", "", a);
}

static inline void const_f(jb *j, const char *name, float v)
{
    char a[200];
    snprintf(a, sizeof a,
             "\"dtype\":{\"type\":\"DT_FLOAT\"},\"value\":{\"tensor\":{\"dtype\":\"DT_FLOAT\","
             "\"tensorShape\":{},\"floatVal\":[%.9g]}}", v);
    node(j, name, "Const", "", a);
}

static inline void tiny_rm_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
}

#endif
