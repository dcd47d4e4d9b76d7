/* Helpers shared by the test programs: a whole file read into memory, a
 * refused si_open checked. Include after cmocka.h. */
#ifndef SI_TESTS_TEST_UTIL_H
#define SI_TESTS_TEST_UTIL_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "streaminfer.h"

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

/* An si_open that returned st, m and err must have failed with want, its message
 * naming needle, and left no model. */
static inline void expect_refused(const char *what, si_result st, si_model *m, const si_error *err,
                                  si_result want, const char *needle)
{
    if (st == SI_OK)
        si_close(m);
    if (st != want || !strstr(err->message, needle))
        fail_msg("%s: status %d (want %d), message '%s' (want it to name '%s')", what, st, want,
                 err->message, needle);
    assert_null(m);
}

#endif
