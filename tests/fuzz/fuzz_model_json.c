/* libFuzzer target: model.json (topology, attributes, manifest) through
 * si_open and si_plan on the host backend. The manifest's shards are whatever
 * it names in the fuzzer's folder; w.bin there is 16 MiB of a fixed pattern, so
 * the package's models (seeds with their paths rewritten to w.bin) load. */
#include <stdint.h>
#include "streaminfer.h"
#include "fuzz_util.h"
#include "fuzz_model_util.h"

#define SHARD_BYTES (16 << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char path[128];
    uint8_t *w = malloc(SHARD_BYTES);
    if (!w)
        abort();
    for (size_t i = 0; i < SHARD_BYTES; i++)
        w[i] = (uint8_t)(i * 2654435761u >> 24);
    fuzz_write("w.bin", w, SHARD_BYTES, path, sizeof path);
    free(w);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128];
    fuzz_write("model.json", data, size, path, sizeof path);
    si_options opt = {.backend = SI_BACKEND_HOST};
    si_model *m = NULL;
    si_error err = {0};
    if (si_open(fuzz_tmpdir(), &opt, &m, &err) != SI_OK) {
        if (m || !err.message[0])
            abort(); /* a failed open returns no handle and says why */
        return 0;
    }
    fuzz_inputs in;
    if (fuzz_inputs_make(m, &in) == 0)
        si_plan(m, in.in, in.n, &err);
    fuzz_inputs_free(&in);
    si_close(m);
    return 0;
}
