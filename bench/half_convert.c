/* Rounding floats to halves on the host (a model's inputs at --precision f16,
 * every run): io_float_to_half one float at a time against io_floats_to_halves
 * (F16C where the CPU has it), N random floats in [0, 255) (an image), the best
 * of 20 passes each, ms; with --all, then both over every one of the 2^32 float
 * bit patterns, counting where they differ (exit 1 if any).
 *   build/bench/half_convert [N] [--all]      (N: 444000, posenet's input) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "io.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int64_t n = 444000;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all"))
            all = 1;
        else if ((n = strtoll(argv[i], NULL, 10)) < 1) {
            fprintf(stderr, "usage: half_convert [N] [--all]\n");
            return 2;
        }
    }
    float *f = malloc((size_t)n * 4);
    uint16_t *h = malloc((size_t)n * 2);
    if (!f || !h)
        return 2;
    srand(1);
    for (int64_t i = 0; i < n; i++)
        f[i] = (float)rand() / ((float)RAND_MAX + 1.0f) * 255.0f;
    double one = 1e30, bulk = 1e30;
    for (int r = 0; r < 20; r++) {
        double t0 = now_ms();
        for (int64_t i = 0; i < n; i++)
            h[i] = io_float_to_half(f[i]);
        double t1 = now_ms();
        io_floats_to_halves(h, f, n);
        double t2 = now_ms();
        one = t1 - t0 < one ? t1 - t0 : one;
        bulk = t2 - t1 < bulk ? t2 - t1 : bulk;
    }
    printf("%lld floats to halves: one at a time %.3f ms, io_floats_to_halves %.3f ms\n", (long long)n, one, bulk);
    if (!all)
        return 0;
    enum { B = 1 << 20 };
    uint32_t *u = malloc(B * 4);
    uint16_t *g = malloc(B * 2);
    if (!u || !g)
        return 2;
    uint64_t bad = 0;
    for (uint64_t base = 0; base < (1ull << 32); base += B) {
        for (uint32_t i = 0; i < B; i++)
            u[i] = (uint32_t)(base + i);
        io_floats_to_halves(g, u, B);
        for (uint32_t i = 0; i < B; i++) {
            float x;
            memcpy(&x, &u[i], 4);
            bad += g[i] != io_float_to_half(x);
        }
    }
    printf("all 2^32 floats: %llu differ\n", (unsigned long long)bad);
    return bad != 0;
}
