/* libFuzzer target: the .npy reader, on any bytes; what it accepts is written
 * back and read again, which must give the same tensor; and the converting
 * reader into each dtype a model input may have. */
#include <stdint.h>
#include "io.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128], back[128];
    fuzz_write("in.npy", data, size, path, sizeof path);
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    void *t = NULL;
    si_error err = {0};
    const si_dtype want[3] = {SI_FLOAT32, SI_INT32, SI_BOOL};
    for (int k = 0; k < 3; k++) {
        void *c = NULL;
        if (io_npy_read_as(path, want[k], &rank, shape, &c, &err) == SI_OK) {
            size_t n = si_dtype_size(want[k]);
            for (int i = 0; i < rank; i++)
                n *= (size_t)shape[i];
            if (want[k] == SI_BOOL)
                for (size_t i = 0; i < n; i++)
                    if (((uint8_t *)c)[i] > 1)
                        abort();
            free(c);
        }
    }
    if (io_npy_read(path, &dt, &rank, shape, &t, &err) != SI_OK)
        return 0;
    snprintf(back, sizeof back, "%s/back.npy", fuzz_tmpdir());
    if (io_npy_write(back, dt, rank, shape, t, &err) == SI_OK) {
        si_dtype dt2;
        int rank2;
        int64_t shape2[SI_MAX_RANK];
        void *t2 = NULL;
        if (io_npy_read(back, &dt2, &rank2, shape2, &t2, &err) != SI_OK || dt2 != dt || rank2 != rank)
            abort();
        size_t n = si_dtype_size(dt);
        for (int i = 0; i < rank; i++) {
            if (shape2[i] != shape[i])
                abort();
            n *= (size_t)shape[i];
        }
        if (memcmp(t, t2, n))
            abort();
        free(t2);
    }
    free(t);
    return 0;
}
