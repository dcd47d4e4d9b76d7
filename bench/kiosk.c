/* A kiosk-style embed: open a model once with a VRAM budget, run it on many
 * frames, close it. Shows the library in use (only include/streaminfer.h) and
 * checks what a long-running program needs: the same answer for the same frame,
 * and no growth of host memory from frame to frame.
 *   kiosk MODEL_JSON BUDGET FRAMES          (exit 0 when every check holds) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "streaminfer.h"

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: kiosk MODEL_JSON BUDGET FRAMES\n");
        return 2;
    }
    si_options opt = {0};
    if (si_parse_size(argv[2], &opt.vram_budget)) {
        fprintf(stderr, "kiosk: bad budget '%s'\n", argv[2]);
        return 2;
    }
    int frames = atoi(argv[3]);
    if (getenv("KIOSK_HOST"))
        opt.backend = SI_BACKEND_HOST;
    si_model *m;
    si_error err;
    if (si_open(argv[1], &opt, &m, &err) != SI_OK) {
        fprintf(stderr, "kiosk: %s\n", err.message);
        return 1;
    }
    const char *name;
    si_dtype dt;
    int rank;
    int64_t shape[SI_MAX_RANK];
    si_input_info(m, 0, &name, &dt, &rank, shape);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        if (shape[d] < 0)
            shape[d] = 1;
        n *= shape[d];
    }
    float *frame = malloc((size_t)n * sizeof *frame);
    float *first = NULL;
    size_t first_n = 0;
    long rss_after_warmup = 0, rss_last = 0;
    int bad = 0;
    for (int f = 0; f < frames && !bad; f++) {
        /* frame f shows picture f % 3: repeats must give repeated answers */
        for (int64_t i = 0; i < n; i++)
            frame[i] = (float)((i * 2654435761u + (uint64_t)(f % 3) * 97) % 1000) / 1000.f;
        si_tensor_in in = {.name = name, .dtype = dt, .rank = rank, .data = frame};
        memcpy(in.shape, shape, sizeof shape);
        if (si_run(m, &in, 1, &err) != SI_OK) {
            fprintf(stderr, "kiosk: frame %d: %s\n", f, err.message);
            bad = 1;
            break;
        }
        const void *out;
        int orank;
        int64_t oshape[SI_MAX_RANK];
        si_output(m, 0, NULL, &orank, oshape, &out, &err);
        size_t on = 1;
        for (int d = 0; d < orank; d++)
            on *= (size_t)oshape[d];
        if (f == 0) {
            first = malloc(on * 4);
            memcpy(first, out, on * 4);
            first_n = on;
        } else if (f % 3 == 0 && (on != first_n || memcmp(first, out, on * 4))) {
            fprintf(stderr, "kiosk: frame %d differs from frame 0 (same picture)\n", f);
            bad = 1;
        }
        if (f == 2)
            rss_after_warmup = rss_kib();
        rss_last = rss_kib();
    }
    si_stats st;
    si_get_stats(m, &st);
    printf("kiosk: %d frames, budget %s, peak GPU %llu bytes, per frame: uploaded %llu bytes, "
           "%.2f ms; host RSS after 3 frames %ld KiB, after %d: %ld KiB\n",
           frames, argv[2], (unsigned long long)st.peak_vram_bytes,
           (unsigned long long)st.bytes_uploaded, st.run_ms, rss_after_warmup, frames, rss_last);
    /* host memory may settle during the first frames, never grow after */
    if (frames > 3 && rss_last - rss_after_warmup > 512) {
        fprintf(stderr, "kiosk: host memory grew by %ld KiB over %d frames\n",
                rss_last - rss_after_warmup, frames - 3);
        bad = 1;
    }
    free(frame);
    free(first);
    si_close(m);
    return bad;
}
