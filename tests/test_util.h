/* Helpers shared by the test programs: a whole file read into memory. */
#ifndef SI_TESTS_TEST_UTIL_H
#define SI_TESTS_TEST_UTIL_H
#include <stdio.h>
#include <stdlib.h>

/* The file's bytes with a NUL after them (free it), or NULL where it cannot be read. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

#endif
