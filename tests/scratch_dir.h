/* A scratch folder for the files a test program writes (dir), made by
 * scratch_make and removed by scratch_remove. Include once per test program,
 * after cmocka.h. */
#ifndef SI_TESTS_SCRATCH_DIR_H
#define SI_TESTS_SCRATCH_DIR_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

/* dir = /tmp/PREFIX-PID, made. */
static inline void scratch_make(const char *prefix)
{
    snprintf(dir, sizeof dir, "/tmp/%s-%d", prefix, (int)getpid());
    mkdir(dir, 0700);
}

static inline void scratch_remove(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

static inline void write_file(const char *name, const void *data, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static inline void write_text(const char *name, const char *text) { write_file(name, text, strlen(text)); }

#endif
