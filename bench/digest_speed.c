/* The plan cache's key hashes a model's bytes (model.json and every shard) at
 * each start (runtime/plancache.c file_digest): this times base_digest over the
 * files given, mapped as file_digest maps them, the best of 5 passes, and
 * prints GB/s and the digest.
 *   build/bench/digest_speed FILE...   (a model: its .json and .bin files) */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../base/base.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: digest_speed FILE...\n");
        return 2;
    }
    void **maps = calloc((size_t)argc, sizeof *maps);
    size_t *sizes = calloc((size_t)argc, sizeof *sizes), total = 0;
    for (int i = 1; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st)) {
            perror(argv[i]);
            return 1;
        }
        sizes[i] = (size_t)st.st_size;
        maps[i] = sizes[i] ? mmap(NULL, sizes[i], PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
        if (maps[i] == MAP_FAILED) {
            perror(argv[i]);
            return 1;
        }
        close(fd);
        total += sizes[i];
    }
    double best = 1e30;
    base_digest d = {0};
    for (int pass = 0; pass < 5; pass++) {
        d = (base_digest){0};
        double t = now_s();
        for (int i = 1; i < argc; i++) {
            uint64_t size = sizes[i];
            base_digest_add(&d, &size, sizeof size);
            if (size)
                base_digest_add(&d, maps[i], sizes[i]);
        }
        t = now_s() - t;
        best = t < best ? t : best;
    }
    printf("%zu bytes in %d files: %.1f ms, %.2f GB/s (best of 5); digest %016llx%016llx\n", total, argc - 1,
           best * 1e3, total / best / 1e9, (unsigned long long)d.a, (unsigned long long)d.b);
    return 0;
}
