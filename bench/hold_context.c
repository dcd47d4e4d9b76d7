/* Holds an empty streaminfer GPU context (EGL + GLES, no buffers) for N seconds,
 * so the card's memory use can be read without any arena: the baseline that
 * bench/gpu_memory.sh subtracts. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "glk.h"

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 3;
    glk_ctx *g;
    si_error err;
    if (glk_open(&g, &err) != SI_OK) {
        fprintf(stderr, "hold_context: %s\n", err.message);
        return 1;
    }
    printf("%s\n", glk_renderer(g));
    fflush(stdout);
    sleep((unsigned)secs);
    glk_close(g);
    return 0;
}
