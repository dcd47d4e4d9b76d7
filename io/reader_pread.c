/* The synchronous reader (SI_IO_MMAP): each shard is opened once and read with
 * pread into the caller's buffer; the page cache does the caching.
 *
 * It used to map every shard and memcpy from the mapping. A mapping cannot
 * report a shard that shrinks after open (another process truncating or
 * rewriting the file): touching a page past the new end raises SIGBUS, and a
 * library must not install signal handlers to catch it. pread on the fd opened
 * at si_open returns a short count instead, which becomes an error naming the
 * shard. Holding the fd also keeps reading the file that was checked at open
 * when the path is later replaced. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader_internal.h"

typedef struct {
    io_reader base;
    int n_fds;
    int *fds;         /* one per shard, groups back to back; -1 for empty shards */
    int *first;       /* index in fds of each group's first shard */
} io_pread_reader;

static si_result io_pread_copy(io_reader *r, int group, int shard, uint64_t off, uint8_t *dst,
                               uint64_t len, si_error *err)
{
    io_pread_reader *pr = (io_pread_reader *)r;
    int fd = pr->fds[pr->first[group] + shard];
    const char *path = r->m->groups[group].paths[shard];
    while (len > 0) {
        /* one call moves at most about 2 GiB on Linux; loop over the rest */
        size_t n = len > (UINT64_C(1) << 30) ? (size_t)1 << 30 : (size_t)len;
        ssize_t got = pread(fd, dst, n, (off_t)off);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return base_fail(err, SI_ERR_IO, "%s: %s", path, strerror(errno));
        if (got == 0)
            return base_fail(err, SI_ERR_FORMAT,
                           "%s: shard ends at byte %llu, before the %llu bytes it held when the model was loaded",
                           path, (unsigned long long)off, (unsigned long long)r->m->groups[group].sizes[shard]);
        dst += got;
        off += (uint64_t)got;
        len -= (uint64_t)got;
    }
    return SI_OK;
}

static si_result io_pread_submit(io_reader *r, const io_weight *w, void *dst, si_error *err)
{
    return io_reader_spans(r, w, dst, io_pread_copy, err);
}

static si_result io_pread_wait(io_reader *r, si_error *err)
{
    (void)r;
    (void)err;
    return SI_OK;
}

static void io_pread_close(io_reader *r)
{
    io_pread_reader *pr = (io_pread_reader *)r;
    for (int i = 0; pr->fds && i < pr->n_fds; i++)
        if (pr->fds[i] >= 0)
            close(pr->fds[i]);
    free(pr->fds);
    free(pr->first);
    free(pr);
}

static const io_reader_ops io_pread_ops = {io_pread_submit, io_pread_wait, io_pread_close};

si_result io_reader_pread_open(const io_model *m, io_reader **out, si_error *err)
{
    io_pread_reader *pr = calloc(1, sizeof *pr);
    if (!pr)
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", m->json_path);
    pr->base.ops = &io_pread_ops;
    pr->base.m = m;
    int n = 0;
    for (int g = 0; g < m->n_groups; g++)
        n += m->groups[g].n_paths;
    pr->fds = malloc(((size_t)n + 1) * sizeof *pr->fds);
    pr->first = calloc((size_t)m->n_groups + 1, sizeof *pr->first);
    if (!pr->fds || !pr->first) {
        io_pread_close(&pr->base);
        return base_fail(err, SI_ERR_NOMEM, "%s: out of memory", m->json_path);
    }
    for (int i = 0; i < n; i++)
        pr->fds[i] = -1;
    pr->n_fds = n;
    int k = 0;
    for (int g = 0; g < m->n_groups; g++) {
        pr->first[g] = k;
        for (int s = 0; s < m->groups[g].n_paths; s++, k++) {
            if (m->groups[g].sizes[s] == 0)
                continue; /* nothing is read from an empty shard */
            si_result st = io_shard_open(m, g, s, &pr->fds[k], err);
            if (st) {
                io_pread_close(&pr->base);
                return st;
            }
        }
    }
    *out = &pr->base;
    return SI_OK;
}
