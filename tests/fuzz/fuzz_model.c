/* libFuzzer target: a whole small model through si_open, si_plan and a host
 * run. The input is split by a length-prefixed format (make_seeds.sh writes
 * the seeds in it):
 *   u64 LE  VRAM budget (0: none)
 *   u32 LE  n, the length of model.json
 *   n bytes model.json
 *   rest    w.bin, the one shard (the seeds' manifests name it)
 * A short input leaves the later parts empty. */
#include <stdint.h>
#include "streaminfer.h"
#include "fuzz_util.h"
#include "fuzz_model_util.h"

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 12)
        return 0;
    uint64_t budget = le(data, 8);
    size_t n = (size_t)le(data + 8, 4);
    data += 12;
    size -= 12;
    if (n > size)
        n = size;
    char path[128];
    fuzz_write("model.json", data, n, path, sizeof path);
    fuzz_write("w.bin", data + n, size - n, path, sizeof path);

    si_options opt = {.backend = SI_BACKEND_HOST, .vram_budget = budget};
    si_model *m = NULL;
    si_error err = {0};
    if (si_open(fuzz_tmpdir(), &opt, &m, &err) != SI_OK) {
        if (m || !err.message[0])
            abort();
        return 0;
    }
    fuzz_inputs in;
    if (fuzz_inputs_make(m, &in) == 0 && si_plan(m, in.in, in.n, &err) == SI_OK &&
        si_run(m, in.in, in.n, &err) == SI_OK) {
        /* every output is readable, its bytes are touched (ASan checks them) */
        for (int i = 0; i < si_output_count(m); i++) {
            si_dtype dt;
            int rank;
            int64_t shape[SI_MAX_RANK];
            const void *out;
            if (si_output(m, i, &dt, &rank, shape, &out, &err) != SI_OK)
                abort();
            size_t bytes = si_dtype_size(dt);
            for (int d = 0; d < rank; d++)
                bytes *= (size_t)shape[d];
            volatile uint8_t sum = 0;
            for (size_t k = 0; k < bytes; k++)
                sum ^= ((const uint8_t *)out)[k];
            (void)sum;
        }
    }
    fuzz_inputs_free(&in);
    si_close(m);
    return 0;
}
