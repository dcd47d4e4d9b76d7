/* Package models in cmocka tests through the public API: seeded inputs of a
 * model's declared shapes, outputs copied out of a run, and a bitwise check
 * of a handle's last outputs against such a copy. Include after cmocka.h. */
#ifndef SI_TEST_MODEL_UTIL_H
#define SI_TEST_MODEL_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "streaminfer.h"

typedef struct {
    int n;
    si_tensor_in in[4];
    void *data[4];
    char names[4][256]; /* the model's own go with it */
} inputs;

typedef struct {
    int n;
    size_t bytes[16];
    void *data[16];
} outputs;

/* Seeded inputs of m's declared shapes (a free batch of 1). */
static inline void make_inputs(si_model *m, unsigned seed, inputs *in)
{
    in->n = si_input_count(m);
    assert_true(in->n >= 1 && in->n <= 4);
    for (int i = 0; i < in->n; i++) {
        si_tensor_in *t = &in->in[i];
        const char *name;
        assert_int_equal(si_input_info(m, i, &name, &t->dtype, &t->rank, t->shape), SI_OK);
        snprintf(in->names[i], sizeof in->names[i], "%s", name);
        t->name = in->names[i];
        int64_t n = 1;
        for (int d = 0; d < t->rank; d++) {
            if (t->shape[d] < 0)
                t->shape[d] = 1;
            n *= t->shape[d];
        }
        float *v = malloc((size_t)n * 4 + 4);
        assert_non_null(v);
        for (int64_t k = 0; k < n; k++) {
            seed = seed * 1103515245u + 12345u;
            v[k] = t->dtype == SI_FLOAT32 ? (float)((seed >> 8) & 0xffff) / 65536.0f : 0;
        }
        in->data[i] = v;
        t->data = v;
    }
}

static inline void free_inputs(inputs *in)
{
    for (int i = 0; i < in->n; i++)
        free(in->data[i]);
}

static inline void run_copy(si_model *m, const inputs *in, outputs *out)
{
    si_error err = {0};
    if (si_run(m, in->in, in->n, &err) != SI_OK)
        fail_msg("run: %s", err.message);
    out->n = si_output_count(m);
    assert_true(out->n <= 16);
    for (int o = 0; o < out->n; o++) {
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        const void *data;
        assert_int_equal(si_output(m, o, &dt, &rank, shape, &data, &err), SI_OK);
        size_t n = si_dtype_size(dt);
        for (int d = 0; d < rank; d++)
            n *= (size_t)shape[d];
        out->bytes[o] = n;
        out->data[o] = malloc(n + 1);
        assert_non_null(out->data[o]);
        memcpy(out->data[o], data, n);
    }
}

static inline void free_outputs(outputs *o)
{
    for (int i = 0; i < o->n; i++)
        free(o->data[i]);
    o->n = 0;
}

/* 0 when m's last outputs are bitwise ref's */
static inline int same_outputs(si_model *m, const outputs *ref, const char *what)
{
    si_error err = {0};
    if (si_output_count(m) != ref->n)
        return 1;
    for (int o = 0; o < ref->n; o++) {
        si_dtype dt;
        int rank;
        int64_t shape[SI_MAX_RANK];
        const void *data;
        if (si_output(m, o, &dt, &rank, shape, &data, &err) != SI_OK)
            return 1;
        if (memcmp(data, ref->data[o], ref->bytes[o])) {
            fprintf(stderr, "%s: output %d differs from the model alone\n", what, o);
            return 1;
        }
    }
    return 0;
}

#endif
