/* Holds a streaminfer GPU context (EGL + GLES, no arena) for N seconds, so the
 * card's memory use can be read without any arena: the baseline that
 * bench/big_models.sh subtracts. With a second argument, it also holds a host
 * pool (glk_host_pool_create) of that many MiB, pages touched: what the
 * driver keeps in VRAM for mapping host memory (bench/results/big-h200.md).
 *   hold_context SECS [HOST_POOL_MIB] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "glk.h"

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 3;
    uint64_t pool = argc > 2 ? strtoull(argv[2], NULL, 10) << 20 : 0;
    glk_ctx *g;
    si_error err;
    if (glk_open(&g, &err) != SI_OK) {
        fprintf(stderr, "hold_context: %s\n", err.message);
        return 1;
    }
    printf("%s\n", glk_renderer(g));
    uint32_t name = 0;
    void *p = NULL;
    if (pool) {
        if (glk_host_pool_create(g, pool, &name, &p, &err) != SI_OK) {
            fprintf(stderr, "hold_context: %s\n", err.message);
            glk_close(g);
            return 1;
        }
        memset(p, 1, pool);
        printf("host pool of %llu MiB\n", (unsigned long long)(pool >> 20));
    }
    fflush(stdout);
    sleep((unsigned)secs);
    if (name)
        glk_host_pool_destroy(g, name);
    glk_close(g);
    return 0;
}
