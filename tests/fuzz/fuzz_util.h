/* Shared by the fuzz targets: a private temp folder per process, and writing
 * the fuzz input into it (the library reads files, not buffers). */
#ifndef SI_FUZZ_UTIL_H
#define SI_FUZZ_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[64];

/* Created once; the fuzzer's process exits without cleanup, so the folder is
 * removed at exit. */
static void fuzz_rmdir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fuzz_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", fuzz_dir);
}

static const char *fuzz_tmpdir(void)
{
    if (!fuzz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/si-fuzz-XXXXXX", t && strlen(t) < 40 ? t : "/tmp");
        if (!mkdtemp(fuzz_dir))
            abort();
        atexit(fuzz_rmdir);
    }
    return fuzz_dir;
}

/* Writes data to dir/name; returns the path (static storage, one per call site
 * is enough: each target writes at most three files). */
static const char *fuzz_write(const char *name, const void *data, size_t n, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", fuzz_tmpdir(), name);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (n && fwrite(data, 1, n, f) != n)
        abort();
    fclose(f);
    return path;
}

#endif
