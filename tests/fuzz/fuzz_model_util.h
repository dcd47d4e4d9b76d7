/* Shared by the model fuzz targets: inputs for whatever the model declares. */
#ifndef SI_FUZZ_MODEL_UTIL_H
#define SI_FUZZ_MODEL_UTIL_H

#include "streaminfer.h"

/* Inputs are bounded so that a declared [1,100000,100000,3] is a plan the
 * fuzzer may try, not a 120 GB buffer: the harness's limit, not the library's. */
#define FUZZ_MAX_INPUT_ELEMS (1 << 20)
#define FUZZ_MAX_INPUTS 16

typedef struct {
    int n;
    si_tensor_in in[FUZZ_MAX_INPUTS];
    void *buf[FUZZ_MAX_INPUTS];
} fuzz_inputs;

static void fuzz_inputs_free(fuzz_inputs *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->buf[i]);
    f->n = 0;
}

/* Each input at its declared shape, free dimensions 1 and unknown rank a
 * scalar, values a fixed pattern. Returns 0, or -1 where the harness skips
 * (too many inputs, too large). */
static int fuzz_inputs_make(const si_model *m, fuzz_inputs *f)
{
    f->n = 0;
    int n = si_input_count(m);
    if (n < 0 || n > FUZZ_MAX_INPUTS)
        return -1;
    for (int i = 0; i < n; i++) {
        si_tensor_in *t = &f->in[i];
        const char *name;
        int rank;
        memset(t, 0, sizeof *t);
        if (si_input_info(m, i, &name, &t->dtype, &rank, t->shape) != SI_OK)
            return -1;
        t->name = name;
        t->rank = rank < 0 ? 0 : rank;
        int64_t count = 1;
        for (int d = 0; d < t->rank; d++) {
            if (t->shape[d] < 0)
                t->shape[d] = 1;
            if (t->shape[d] > FUZZ_MAX_INPUT_ELEMS || (count *= t->shape[d]) > FUZZ_MAX_INPUT_ELEMS)
                return -1;
        }
        size_t bytes = (size_t)count * si_dtype_size(t->dtype);
        uint8_t *b = malloc(bytes ? bytes : 1);
        if (!b)
            return -1;
        for (size_t k = 0; k < bytes; k++)
            b[k] = t->dtype == SI_BOOL ? (uint8_t)(k & 1) : (uint8_t)(k * 37 % 61);
        f->buf[i] = b;
        t->data = b;
        f->n = i + 1;
    }
    return 0;
}

#endif
