/* The C library alone, for bindings/node/bench.js: opens MODEL, runs it on the
 * input of INPUT.npy WARM times (planning, shader compiles), then N times, and
 * prints JSON: the median ms of one si_run (with the outputs' pointers read, as a
 * program using them would), the median of what of it is outside si_stats' run_ms
 * (the handle's lock, its GL context made current and put back), the process's peak RSS.
 *   c_runs MODEL INPUT.npy WARM N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "streaminfer.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 5)
        return fprintf(stderr, "usage: c_runs MODEL INPUT.npy WARM N\n"), 2;
    int warm = atoi(argv[3]), n = atoi(argv[4]);
    si_model *m;
    si_error err;
    si_tensor_in in = {0};
    void *data;
    if (n < 1 || si_open(argv[1], &(si_options){0}, &m, &err) != SI_OK ||
        si_npy_read(argv[2], &in.dtype, &in.rank, in.shape, &data, &err) != SI_OK)
        return fprintf(stderr, "c_runs: %s\n", n < 1 ? "N < 1" : err.message), 1;
    in.data = data;
    double *ms = calloc((size_t)n, sizeof *ms), *outside = calloc((size_t)n, sizeof *outside);
    for (int i = -warm; i < n; i++) {
        double t0 = now_ms();
        if (si_run(m, &in, 1, &err) != SI_OK)
            return fprintf(stderr, "c_runs: %s\n", err.message), 1;
        for (int o = 0; o < si_output_count(m); o++) {
            const void *out;
            if (si_output(m, o, NULL, NULL, NULL, &out, &err) != SI_OK)
                return fprintf(stderr, "c_runs: %s\n", err.message), 1;
        }
        if (i >= 0) {
            si_stats st;
            ms[i] = now_ms() - t0;
            si_get_stats(m, &st);
            outside[i] = ms[i] - st.run_ms;
        }
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp);
    qsort(outside, (size_t)n, sizeof *outside, cmp);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"ms_per_run\": %.4f, \"outside_ms\": %.4f, \"maxrss_kb\": %ld}\n", ms[n / 2],
           outside[n / 2], ru.ru_maxrss);
    si_close(m);
    free(data);
    free(ms);
    free(outside);
    return 0;
}
